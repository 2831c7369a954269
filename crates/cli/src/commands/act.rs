//! A seat's action: `roll`, `move`, `double`, `resign`, `decide`,
//! `abandon`. The game is read first (its version, and whether the dice
//! are already thrown for the seat), then the action sent with the
//! seat's token from the tokens file; the answer is drawn with the
//! action said in players' words.

use anyhow::Result;
use bg_api::v1 as pb;

use super::Online;
use crate::client::{Tokens, authorized, explain, render, render_after};
use crate::{Command, CubeAction};

pub async fn run(o: &mut Online, action: Command) -> Result<()> {
    let (game_id, seat) = match &action {
        Command::Roll { game, seat, .. }
        | Command::Move { game, seat, .. }
        | Command::Double { game, seat, .. }
        | Command::Resign { game, seat, .. }
        | Command::Decide { game, seat, .. }
        | Command::Abandon { game, seat } => (game.clone(), *seat),
        _ => unreachable!("offline commands are handled before"),
    };
    let Some(game_id) = o.tokens.resolve(&game_id)? else {
        anyhow::bail!(
            "no game {game_id} in the tokens file {}: give the whole game id, or its start \
             or end if `bgctl new` made it here (see --tokens)",
            o.tokens_path.display()
        );
    };
    let token = o.tokens.get(&game_id, seat.name())?;
    let current = o
        .client
        .get_game(super::get(&game_id))
        .await
        .map_err(explain)?
        .into_inner();
    if let (Command::Roll { dice_seed, .. }, Some(dice)) = (&action, current.dice)
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
        Command::Roll { dice_seed, .. } | Command::Move { dice_seed, .. } => dice_seed.clone(),
        _ => String::new(),
    };
    let game = match action {
        Command::Roll { dice_seed, .. } => {
            o.client
                .roll(authorized(
                    pb::RollRequest {
                        read_mask: None,
                        game_id,
                        expected_version: version,
                        request_id,
                        dice_seed,
                    },
                    &token,
                )?)
                .await
        }
        Command::Move {
            play, dice_seed, ..
        } => {
            o.client
                .r#move(authorized(
                    pb::MoveRequest {
                        read_mask: None,
                        game_id,
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
        Command::Double { action, .. } => {
            o.client
                .double(authorized(
                    pb::DoubleRequest {
                        read_mask: None,
                        game_id,
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
        Command::Resign {
            level,
            accept,
            decline,
            ..
        } => {
            o.client
                .resign(authorized(
                    pb::ResignRequest {
                        read_mask: None,
                        game_id,
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
        Command::Decide { choice, .. } => {
            o.client
                .decide(authorized(
                    pb::DecideRequest {
                        read_mask: None,
                        game_id,
                        expected_version: version,
                        request_id,
                        choice,
                    },
                    &token,
                )?)
                .await
        }
        Command::Abandon { .. } => {
            o.client
                .abandon(authorized(
                    pb::AbandonRequest {
                        read_mask: None,
                        game_id,
                        expected_version: version,
                        request_id,
                    },
                    &token,
                )?)
                .await
        }
        _ => unreachable!(),
    }
    .map_err(explain)?
    .into_inner();
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
