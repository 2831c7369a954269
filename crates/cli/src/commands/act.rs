//! A seat's action: `roll`, `move`, `double`, `resign`, `decide`,
//! `abandon`, each with its arguments. The game is read first (its
//! version, and whether the dice are already thrown for the seat), then
//! the action sent with the seat's token from the tokens file; the answer
//! is drawn with the action said in players' words. A seat told it is
//! not its turn is told which seat the game waits for.

use anyhow::Result;
use bg_api::v1 as pb;
use clap::ValueEnum;

use super::{Context, Online};
use crate::connection::{authorized, explain, not_your_turn, waited_for};
use crate::render::{render, render_after, seat_name};
use crate::tokens::Tokens;

/// A seat, as `--as` names it.
#[derive(Clone, Copy, ValueEnum)]
pub enum SeatArg {
    White,
    Black,
}

impl SeatArg {
    fn name(self) -> &'static str {
        match self {
            SeatArg::White => "white",
            SeatArg::Black => "black",
        }
    }

    fn pb(self) -> pb::Seat {
        match self {
            SeatArg::White => pb::Seat::White,
            SeatArg::Black => pb::Seat::Black,
        }
    }
}

/// What a seat does with the cube.
#[derive(Clone, Copy, ValueEnum)]
pub enum CubeAction {
    Offer,
    Take,
    Drop,
    Beaver,
}

/// What `bgctl roll` takes.
#[derive(clap::Args)]
pub struct Roll {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
    /// Your seat's seed for the verifiable dice (once a match, any
    /// text up to 256 bytes): the dice from this roll on depend on it
    /// (docs/fair-dice.md).
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub dice_seed: String,
}

/// What `bgctl move` takes.
#[derive(clap::Args)]
pub struct Move {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
    /// The moves, in the usual notation.
    #[arg(required = true)]
    pub play: Vec<String>,
    /// Your seat's seed for the verifiable dice, as with `roll` (for a
    /// seat whose dice auto-roll throws): it applies from the next die.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub dice_seed: String,
}

/// What `bgctl double` takes.
#[derive(clap::Args)]
pub struct Double {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
    #[arg(value_enum, default_value_t = CubeAction::Offer)]
    pub action: CubeAction,
}

/// What `bgctl resign` takes.
#[derive(clap::Args)]
pub struct Resign {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
    /// Offer mode: 1 single, 2 gammon, 3 backgammon.
    #[arg(long, default_value_t = 0)]
    pub level: u32,
    #[arg(long, conflicts_with = "decline")]
    pub accept: bool,
    #[arg(long)]
    pub decline: bool,
}

/// What `bgctl decide` takes.
#[derive(clap::Args)]
pub struct Decide {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
    /// One of the choices the game shows.
    pub choice: String,
}

/// What `bgctl abandon` takes.
#[derive(clap::Args)]
pub struct Abandon {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long = "as", value_enum)]
    pub seat: SeatArg,
}

/// One of the six actions, with its arguments.
pub enum Action {
    Roll(Roll),
    Move(Move),
    Double(Double),
    Resign(Resign),
    Decide(Decide),
    Abandon(Abandon),
}

impl Action {
    /// The game named and the seat acting.
    fn game_and_seat(&self) -> (&str, SeatArg) {
        match self {
            Action::Roll(Roll { game, seat, .. })
            | Action::Move(Move { game, seat, .. })
            | Action::Double(Double { game, seat, .. })
            | Action::Resign(Resign { game, seat, .. })
            | Action::Decide(Decide { game, seat, .. })
            | Action::Abandon(Abandon { game, seat }) => (game, *seat),
        }
    }
}

pub fn run(cx: &Context, action: Action) -> Result<()> {
    cx.online(async |o| act(o, action).await)
}

async fn act(o: &mut Online, action: Action) -> Result<()> {
    let (game, seat) = action.game_and_seat();
    let game_id = o.game_of_tokens_file(game)?;
    let token = o.tokens.get(&game_id, seat.name())?;
    let current = o
        .client
        .get_game(super::get(&game_id))
        .await
        .map_err(explain)?
        .into_inner();
    if let (Action::Roll(Roll { dice_seed, .. }), Some(dice)) = (&action, current.dice)
        && current.to_act == seat.pb() as i32
        && current.phase == pb::Phase::Move as i32
    {
        if !dice_seed.is_empty() {
            anyhow::bail!(
                "{}'s dice are already thrown ({}-{}), so this roll cannot carry your seed: give it with your move (`bgctl move ... --dice-seed`) or your next roll",
                seat.name(),
                dice.die1,
                dice.die2
            );
        }
        // Auto-roll (or the opening throw) has thrown for this seat.
        print!("{}", render(&current));
        println!(
            "{}'s dice are already thrown: {}-{}; play them with `bgctl move {} --as {} ...`",
            seat.name(),
            dice.die1,
            dice.die2,
            game_id,
            seat.name()
        );
        return Ok(());
    }
    let version = current.version;
    let request_id = uuid_like();
    // A seed given for the verifiable dice, kept for `verify`.
    let seed_given = match &action {
        Action::Roll(Roll { dice_seed, .. }) | Action::Move(Move { dice_seed, .. }) => {
            dice_seed.clone()
        }
        _ => String::new(),
    };
    let answer = match action {
        Action::Roll(Roll { dice_seed, .. }) => {
            o.client
                .roll(authorized(
                    pb::RollRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                        dice_seed,
                    },
                    &token,
                )?)
                .await
        }
        Action::Move(Move {
            play, dice_seed, ..
        }) => {
            o.client
                .r#move(authorized(
                    pb::MoveRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                        notation: play.join(" "),
                        moves: Vec::new(),
                        dice_seed,
                    },
                    &token,
                )?)
                .await
        }
        Action::Double(Double { action, .. }) => {
            o.client
                .double(authorized(
                    pb::DoubleRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                        action: match action {
                            CubeAction::Offer => pb::DoubleAction::Offer,
                            CubeAction::Take => pb::DoubleAction::Take,
                            CubeAction::Drop => pb::DoubleAction::Drop,
                            CubeAction::Beaver => pb::DoubleAction::Beaver,
                        } as i32,
                    },
                    &token,
                )?)
                .await
        }
        Action::Resign(Resign {
            level,
            accept,
            decline,
            ..
        }) => {
            o.client
                .resign(authorized(
                    pb::ResignRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                        action: if accept {
                            pb::ResignAction::Accept
                        } else if decline {
                            pb::ResignAction::Decline
                        } else {
                            pb::ResignAction::Resign
                        } as i32,
                        level,
                    },
                    &token,
                )?)
                .await
        }
        Action::Decide(Decide { choice, .. }) => {
            o.client
                .decide(authorized(
                    pb::DecideRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                        choice,
                    },
                    &token,
                )?)
                .await
        }
        Action::Abandon(_) => {
            o.client
                .abandon(authorized(
                    pb::AbandonRequest {
                        read_mask: None,
                        game_id: game_id.clone(),
                        expected_version: version,
                        request_id,
                    },
                    &token,
                )?)
                .await
        }
    };
    let game = match answer {
        Ok(answer) => answer.into_inner(),
        Err(status) => {
            // Not this seat's turn: which seat's it is (as the server
            // says it, else as the game read before said it), when the
            // tokens file can act for it.
            let other = not_your_turn(&status)
                .then(|| waited_for(status.message()).unwrap_or(seat_name(current.to_act)))
                .filter(|&other| other != seat.name() && o.tokens.get(&game_id, other).is_ok());
            let error = explain(status);
            return Err(match other {
                Some(other) => anyhow::anyhow!("{error} (try --as {other})"),
                None => error,
            });
        }
    };
    if !seed_given.is_empty() {
        let mut tokens = Tokens::load(&o.tokens_path)?;
        tokens.set_seed(&game.game_id, seat.name(), &seed_given);
        tokens.save(&o.tokens_path)?;
    }
    print!("{}", render_after(current.board.as_ref(), &game));
    Ok(())
}

/// A unique request id for one invocation (retries of it are the caller's).
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("bgctl-{}-{nanos}", std::process::id())
}
