//! `bgctl new`: creates a game; its seat tokens (and the commitment of
//! its verifiable dice, and seeds given) go to the tokens file.

use anyhow::Result;
use bg_api::v1 as pb;

use clap::ValueEnum;

use super::{Context, Online};
use crate::connection::explain;
use crate::parse;
use crate::render::{id_end, in_effect, render};

/// What running out of time costs (`bgctl new --on-timeout`).
#[derive(Clone, Copy, ValueEnum)]
pub enum OnTimeoutArg {
    Match,
    Game,
}

/// Who starts each game after the first (`bgctl new --first-move`), the
/// API's `FirstMove`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FirstMoveArg {
    /// The loser of the previous game.
    Loser,
    /// The seats take turns.
    Alternate,
    /// The winner of the previous game.
    Winner,
    /// An opening roll every game.
    OpeningRoll,
}

impl FirstMoveArg {
    fn pb(self) -> pb::FirstMove {
        match self {
            FirstMoveArg::Loser => pb::FirstMove::Loser,
            FirstMoveArg::Alternate => pb::FirstMove::Alternate,
            FirstMoveArg::Winner => pb::FirstMove::Winner,
            FirstMoveArg::OpeningRoll => pb::FirstMove::OpeningRoll,
        }
    }
}

/// What `bgctl new` takes.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "standard")]
    pub variant: String,
    /// Points to win; 0 for a money session.
    #[arg(long = "match", default_value_t = 0)]
    pub match_length: u32,
    /// A variant option, `name=value` (repeatable).
    #[arg(long = "option")]
    pub options: Vec<String>,
    /// Resign by offering a level instead of by position.
    #[arg(long)]
    pub resign_offers: bool,
    /// Highest cube value; 0 for no cube.
    #[arg(long)]
    pub cube_max: Option<u32>,
    /// Let the server roll for a player who cannot double (`true` or
    /// `false`; default: on where the game has no cube).
    #[arg(long)]
    pub auto_roll: Option<bool>,
    /// Start every game of the match from this gnubg Position ID (read
    /// with white on roll, each side in its own numbering), instead of
    /// the variant's setup; for the variants that can be set up at a
    /// position.
    #[arg(long, conflicts_with_all = ["xgid", "gnubg_id"])]
    pub position_id: Option<String>,
    /// Take up a match where this XGID says (position, score, cube,
    /// player to roll, match length; dice 00), e.g.
    /// `XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:1:0:5:10`.
    #[arg(long, conflicts_with = "gnubg_id", allow_hyphen_values = true)]
    pub xgid: Option<String>,
    /// The same from gnubg's `POSITION_ID:MATCH_ID`.
    #[arg(long)]
    pub gnubg_id: Option<String>,
    /// Verifiable dice (`true` or `false`; default: on): the server
    /// commits to its seed now and reveals it at the end (`bgctl verify`).
    #[arg(long)]
    pub verifiable_dice: Option<bool>,
    /// White's seed for the verifiable dice (any text).
    #[arg(long, default_value = "")]
    pub white_seed: String,
    /// Black's seed for the verifiable dice (any text).
    #[arg(long, default_value = "")]
    pub black_seed: String,
    /// A match clock, as a tournament director writes it: a reserve
    /// (`10m`), per match point (`2m/point`), a delay (`+12s`), an
    /// increment (`+2s/move`), a cap on a turn (`1d/turn`), joined:
    /// `2m/point+12s` is USBGF's clock. Durations in s, m, h or d.
    #[arg(long, value_parser = parse::parse_clock)]
    pub clock: Option<pb::ClockSettings>,
    /// With --clock: what running out costs, `match` (the default) or
    /// `game`.
    #[arg(long, value_enum, requires = "clock")]
    pub on_timeout: Option<OnTimeoutArg>,
    /// Have the service play a seat with its computer player: `black`, or
    /// `black:LEVEL` (`bgctl variants` lists the levels; none: the
    /// strongest). The seat gets no token.
    #[arg(long, value_parser = parse_bot)]
    pub bot: Option<pb::BotSeat>,
    /// Let the players ask for hints while the match is played
    /// (`bgctl hint GAME`).
    #[arg(long)]
    pub hints: bool,
    /// Who starts each game after the first: the `loser` of the previous
    /// game, the seats in turn (`alternate`), its `winner`, or an opening
    /// roll every game (`opening-roll`). Default: the variant's rule (the
    /// loser; the winner in Plakoto).
    #[arg(long, value_enum)]
    pub first_move: Option<FirstMoveArg>,
    /// A label of the site's on the match, `key=value` (repeatable): kept
    /// with it, shown with it, listed and followed by it (`bgctl
    /// matches --selector`).
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// The site's id of a seat's player, `white=ID` or `black=ID`
    /// (repeatable).
    #[arg(long = "player", value_parser = parse_player)]
    pub players: Vec<(pb::Seat, String)>,
}

/// `SEAT=ID`.
fn parse_player(text: &str) -> Result<(pb::Seat, String), String> {
    match text.split_once('=') {
        Some(("white", id)) => Ok((pb::Seat::White, id.to_string())),
        Some(("black", id)) => Ok((pb::Seat::Black, id.to_string())),
        _ => Err(format!("`{text}`: give `white=ID` or `black=ID`")),
    }
}

/// `SEAT[:LEVEL]`.
fn parse_bot(text: &str) -> Result<pb::BotSeat, String> {
    let (seat, level) = text.split_once(':').unwrap_or((text, ""));
    let seat = match seat {
        "white" => pb::Seat::White,
        "black" => pb::Seat::Black,
        _ => return Err(format!("`{seat}`: the seat is white or black")),
    };
    Ok(pb::BotSeat {
        seat: seat as i32,
        level: level.to_string(),
    })
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| new(o, args).await)
}

async fn new(o: &mut Online, args: Args) -> Result<()> {
    let Args {
        variant,
        match_length,
        options,
        resign_offers,
        cube_max,
        auto_roll,
        position_id,
        xgid,
        gnubg_id,
        verifiable_dice,
        white_seed,
        black_seed,
        clock,
        on_timeout,
        bot,
        hints,
        first_move,
        labels,
        players,
    } = args;
    let mut named = pb::Players::default();
    for (seat, id) in players {
        match seat {
            pb::Seat::White => named.white = id,
            _ => named.black = id,
        }
    }
    let clock = clock.map(|clock| pb::ClockSettings {
        on_timeout: match on_timeout {
            Some(OnTimeoutArg::Game) => pb::OnTimeout::Game,
            _ => pb::OnTimeout::Match,
        } as i32,
        ..clock
    });
    // Asked once: for the checkers of a start position, and for the
    // settings in effect shown after the game is made.
    let variants = o
        .client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .map_err(explain)?
        .into_inner()
        .variants;
    let start_board = match position_id.as_deref() {
        // Read with the variant's checkers (hypergammon's 3 are fewer).
        Some(id) => {
            let listed = variants.iter().find(|v| v.name == variant);
            let checkers = listed.map_or(bg_engine::CHECKERS, |v| {
                u8::try_from(v.checkers).unwrap_or(bg_engine::CHECKERS)
            });
            let geometry = match listed.map(|v| v.geometry()) {
                Some(pb::Geometry::SameWay) => bg_engine::Geometry::SameWay,
                _ => bg_engine::Geometry::Opposed,
            };
            Some(parse::board_of_position_id(id, checkers, geometry)?)
        }
        None => None,
    };
    let request = pb::NewGameRequest {
        variant,
        options: parse::parse_options(&options)?.into_iter().collect(),
        settings: Some(pb::MatchSettings {
            match_length,
            cube_max,
            auto_roll,
            verifiable_dice,
            clock,
            hints: hints.then_some(true),
            first_move: first_move.map_or(pb::FirstMove::Unspecified, FirstMoveArg::pb) as i32,
            resignation: if resign_offers {
                pb::ResignationMode::Offer as i32
            } else {
                pb::ResignationMode::ByPosition as i32
            },
            ..Default::default()
        }),
        request_id: String::new(),
        start_board,
        xgid: xgid.unwrap_or_default(),
        gnubg_id: gnubg_id.unwrap_or_default(),
        white_seed,
        black_seed,
        bots: bot.into_iter().collect(),
        labels: parse::parse_pairs("--label", &labels)?
            .into_iter()
            .collect(),
        players: (!named.white.is_empty() || !named.black.is_empty()).then_some(named),
    };
    let response = o
        .client
        .new_game(request)
        .await
        .map_err(explain)?
        .into_inner();
    let game = response.game.unwrap_or_default();
    o.tokens
        .insert(&game.game_id, &response.white_token, &response.black_token);
    if let Some(dice) = &game.verifiable_dice {
        o.tokens.set_commitment(&game.game_id, &dice.commitment);
        for (seat, seed) in [("white", &dice.white_seed), ("black", &dice.black_seed)] {
            if !seed.is_empty() {
                o.tokens.set_seed(&game.game_id, seat, seed);
            }
        }
    }
    o.tokens.save(&o.tokens_path)?;
    print!("{}", render(&game));
    print!("{}", in_effect(&game, &variants));
    println!("seat tokens saved in {}", o.tokens_path.display());
    println!("game id: {}", game.game_id);
    println!(
        "(bgctl takes any start or end of it that is one game's, e.g. {})",
        id_end(&game.game_id)
    );
    Ok(())
}
