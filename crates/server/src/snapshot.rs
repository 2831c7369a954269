//! The stored game format: the text the server writes into a game's
//! snapshot row (its `state`) and start position (`start_board`), which
//! every store, SQLite now and PostgreSQL next, keeps as it is.
//!
//! The format has types of its own, with field names fixed here, and a
//! version in every snapshot. The engine's types are converted to and
//! from them in this module only, so renaming or reshaping a field of the
//! engine's `Match` changes the conversions below, never a stored game;
//! changing these types means a new format version, with a migration
//! from the older ones in [`decode`].
//!
//! **Format 5** (the current one): format 4 and, in the settings, the
//! seats the service plays (`"bots": [{"seat", "level"}]`) and `hints`.
//! Only a match with a seat played by the service is written in format
//! 5; the others are written in format 4, which older servers read.
//!
//! **Format 4**: format 3 and, for a match with a
//! clock, `"clock":` [`v1::Clock`] (its settings, each seat's reserve,
//! the seat whose time runs and since when); a game result's reason may
//! be `time`.
//!
//! **Format 3**: `{"format": 3, "match": MATCH, "dice":
//! DICE}`, where MATCH is the object described by [`v1::Match`], with the
//! settings' `auto_roll`, and DICE, left out for a match whose dice come
//! from the server's CSPRNG alone, is [`v1::FairDice`]: the secret server
//! seed of a match with verifiable dice, the seats' seeds and the dice
//! thrown so far. The server seed is in the stored game only: snapshots
//! sent to clients show it once the match is over.
//!
//! **Format 2**: the same without `dice` (every game before verifiable
//! dice).
//!
//! **Format 1**: the same without `auto_roll` (games made before it: read
//! with auto-roll off, as they were played).
//!
//! **Format 0** (games stored before formats had versions): MATCH alone,
//! with the same fields as format 1. It is read as format 1.
//!
//! A start position is [`v1::Board`], without an envelope (its shape has
//! not changed since positions were first stored): every game of the
//! match starts from it. A match taken up at a position, score and cube
//! (from a Match ID or an XGID) is stored as `{"taken_up":`
//! [`v1::TakenUp`]`}`: its first game only starts there.

use bg_engine::clock::Clock;
use bg_engine::game::Match;
use bg_engine::{Board, Seat};
use bg_fair_dice::{FairDice, SeatSeeds, ServerSeed};

/// The format written.
pub const FORMAT: u32 = 5;

/// Why a stored snapshot cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("not a stored game: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error(
        "stored in format {0}, newer than this server reads (up to {FORMAT}): upgrade the server"
    )]
    Newer(u64),
    #[error("not a stored game: {0}")]
    Invalid(String),
}

/// A match as stored (format 4), with its verifiable dice and its clock
/// if it has them.
pub fn encode(
    game: &Match,
    dice: Option<&FairDice>,
    clock: Option<&Clock>,
) -> Result<String, serde_json::Error> {
    serde_json::to_string(&Envelope {
        // A match the service plays a seat of needs a server that knows
        // it; the others stay readable by servers of format 4.
        format: if game.settings.bots.is_empty() {
            4
        } else {
            FORMAT
        },
        game: v1::Match::from(game),
        dice: dice.map(v1::FairDice::from),
        clock: clock.map(v1::Clock::from),
    })
}

/// A stored match: the match, its verifiable dice, its clock.
pub type Stored = (Match, Option<FairDice>, Option<Clock>);

/// A stored match, in any format this server knows, and its verifiable
/// dice if it has them.
pub fn decode(text: &str) -> Result<Stored, SnapshotError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let (stored, dice, clock) = match value.get("format") {
        // Format 0: the match alone.
        None => (serde_json::from_value::<v1::Match>(value)?, None, None),
        Some(format) => match format.as_u64() {
            // Format 1 lacks `auto_roll`, read as off; 1 and 2 lack `dice`;
            // 1 to 3 lack `clock`; 1 to 4 lack `bots`.
            Some(1..=5) => {
                let envelope = serde_json::from_value::<Envelope>(value)?;
                (envelope.game, envelope.dice, envelope.clock)
            }
            Some(newer) if newer > u64::from(FORMAT) => return Err(SnapshotError::Newer(newer)),
            _ => return Err(SnapshotError::Invalid(format!("format {format}"))),
        },
    };
    let dice = dice
        .map(FairDice::try_from)
        .transpose()
        .map_err(SnapshotError::Invalid)?;
    Ok((
        Match::try_from(stored).map_err(SnapshotError::Invalid)?,
        dice,
        clock.map(Clock::from),
    ))
}

impl From<&Clock> for v1::Clock {
    fn from(c: &Clock) -> v1::Clock {
        let s = c.settings;
        v1::Clock {
            reserve_ms: s.reserve_ms,
            reserve_per_point_ms: s.reserve_per_point_ms,
            delay_ms: s.delay_ms,
            increment_ms: s.increment_ms,
            turn_limit_ms: s.turn_limit_ms,
            on_timeout: match s.on_timeout {
                bg_engine::clock::OnTimeout::Match => v1::OnTimeout::Match,
                bg_engine::clock::OnTimeout::Game => v1::OnTimeout::Game,
            },
            reserves: c.reserve_ms,
            running: c.running.map(|(seat, since)| (seat.into(), since)),
        }
    }
}

impl From<v1::Clock> for Clock {
    fn from(c: v1::Clock) -> Clock {
        Clock {
            settings: bg_engine::clock::ClockSettings {
                reserve_ms: c.reserve_ms,
                reserve_per_point_ms: c.reserve_per_point_ms,
                delay_ms: c.delay_ms,
                increment_ms: c.increment_ms,
                turn_limit_ms: c.turn_limit_ms,
                on_timeout: match c.on_timeout {
                    v1::OnTimeout::Match => bg_engine::clock::OnTimeout::Match,
                    v1::OnTimeout::Game => bg_engine::clock::OnTimeout::Game,
                },
            },
            reserve_ms: c.reserves,
            running: c.running.map(|(seat, since)| (seat.into(), since)),
        }
    }
}

/// Where a match starts: a position every game starts from, or a match
/// taken up at a position, score and cube (its first game only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    EveryGame(Board),
    TakenUp(Board, bg_engine::game::Resume),
}

pub fn encode_start(start: &Start) -> Result<String, serde_json::Error> {
    match start {
        Start::EveryGame(board) => encode_board(board),
        Start::TakenUp(board, from) => serde_json::to_string(&v1::TakenUpEnvelope {
            taken_up: v1::TakenUp {
                board: v1::Board::from(board),
                score: from.score,
                cube: from.cube.value,
                cube_owner: from.cube.owner.map(v1::Seat::from),
                on_roll: from.on_roll.into(),
                crawford: from.crawford,
            },
        }),
    }
}

pub fn decode_start(text: &str) -> Result<Start, SnapshotError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    if value.get("taken_up").is_none() {
        return decode_board(text).map(Start::EveryGame);
    }
    let t = serde_json::from_value::<v1::TakenUpEnvelope>(value)?.taken_up;
    Ok(Start::TakenUp(
        Board::from(t.board),
        bg_engine::game::Resume {
            score: t.score,
            cube: bg_engine::game::Cube {
                value: t.cube,
                owner: t.cube_owner.map(bg_engine::Seat::from),
            },
            on_roll: t.on_roll.into(),
            crawford: t.crawford,
        },
    ))
}

impl From<&FairDice> for v1::FairDice {
    fn from(dice: &FairDice) -> v1::FairDice {
        v1::FairDice {
            scheme: bg_fair_dice::SCHEME.to_string(),
            server_seed: dice.server.to_hex(),
            white_seed: dice.seeds.white.seed.clone(),
            white_seed_from: dice.seeds.white.from,
            black_seed: dice.seeds.black.seed.clone(),
            black_seed_from: dice.seeds.black.from,
            thrown: dice.thrown,
        }
    }
}

impl TryFrom<v1::FairDice> for FairDice {
    type Error = String;

    fn try_from(stored: v1::FairDice) -> Result<FairDice, String> {
        if stored.scheme != bg_fair_dice::SCHEME {
            return Err(format!("unknown dice scheme {:?}", stored.scheme));
        }
        let mut seeds = SeatSeeds::default();
        seeds
            .give(Seat::White, &stored.white_seed, stored.white_seed_from)
            .and_then(|()| seeds.give(Seat::Black, &stored.black_seed, stored.black_seed_from))
            .map_err(|e| e.to_string())?;
        Ok(FairDice {
            server: ServerSeed::from_hex(&stored.server_seed).map_err(|e| e.to_string())?,
            seeds,
            thrown: stored.thrown,
        })
    }
}

/// A start position as stored.
pub fn encode_board(board: &Board) -> Result<String, serde_json::Error> {
    serde_json::to_string(&v1::Board::from(board))
}

pub fn decode_board(text: &str) -> Result<Board, SnapshotError> {
    let stored: v1::Board = serde_json::from_str(text)?;
    Ok(Board::from(stored))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Envelope {
    format: u32,
    #[serde(rename = "match")]
    game: v1::Match,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dice: Option<v1::FairDice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clock: Option<v1::Clock>,
}

/// The types of format 2 (and 1, 0: without `auto_roll`). Never change
/// them: add a format.
pub mod v1 {
    use serde::{Deserialize, Serialize};

    fn is_zero(n: &u64) -> bool {
        *n == 0
    }

    /// A match clock (format 4). Times in milliseconds, instants in
    /// milliseconds since the Unix epoch.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Clock {
        pub reserve_ms: u64,
        pub reserve_per_point_ms: u64,
        pub delay_ms: u64,
        pub increment_ms: u64,
        pub turn_limit_ms: u64,
        /// "match" or "game".
        pub on_timeout: OnTimeout,
        /// Each seat's reserve, white first (u64::MAX: no reserve).
        pub reserves: [u64; 2],
        /// The seat whose time runs, and since when.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub running: Option<(Seat, u64)>,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum OnTimeout {
        Match,
        Game,
    }

    /// A match's verifiable dice (format 3): the scheme, the secret
    /// server seed (hex), the seats' seeds and the dice thrown so far.
    #[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
    pub struct FairDice {
        pub scheme: String,
        pub server_seed: String,
        pub white_seed: String,
        /// The first die the white seed applies to (0 when given at
        /// NewGame).
        #[serde(default, skip_serializing_if = "is_zero")]
        pub white_seed_from: u64,
        pub black_seed: String,
        #[serde(default, skip_serializing_if = "is_zero")]
        pub black_seed_from: u64,
        pub thrown: u64,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Seat {
        White,
        Black,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Match {
        pub settings: Settings,
        /// Points, white first.
        pub score: [u32; 2],
        pub game_number: u32,
        pub crawford: Crawford,
        pub turn: Seat,
        pub phase: Phase,
        pub dice: Option<Dice>,
        pub cube: Cube,
        pub cube_in_play: bool,
        pub pending_double: Option<PendingDouble>,
        pub resignation: Option<ResignationOffer>,
        /// A declined resignation: who offered, and the level.
        pub declined: Option<(Seat, u32)>,
        pub pending_decision: Option<PendingDecision>,
        #[serde(default)]
        pub decision_after_play: bool,
        pub first_mover: Seat,
        pub pending_win: Option<GameResult>,
        pub starter: Seat,
        /// The variant's own state, as its plugin wrote it.
        pub variant_state: Vec<u8>,
        pub results: Vec<GameResult>,
        pub winner: Option<Seat>,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Settings {
        pub match_length: u32,
        pub money_games: u32,
        pub cube: CubeLimit,
        pub dead_cube_check: bool,
        pub crawford: bool,
        pub jacoby: bool,
        pub beavers: bool,
        #[serde(default)]
        pub auto_doubles: u32,
        pub scoring_limit: ScoringLimit,
        pub resignation: ResignMode,
        pub draw_on_last_roll: bool,
        pub first_move: Option<FirstMove>,
        /// Format 2 on (formats 0 and 1: off, as their games were made).
        #[serde(default)]
        pub auto_roll: bool,
        /// Format 5 (formats 0 to 4: none, as their games were made).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub bots: Vec<BotSeat>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub hints: bool,
    }

    /// A seat the service plays, and its level.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct BotSeat {
        pub seat: Seat,
        pub level: String,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CubeLimit {
        Off,
        Max(u32),
        Unlimited,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ScoringLimit {
        Oin,
        Mars,
        Cox,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ResignMode {
        ByPosition,
        Offer,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum FirstMove {
        Loser,
        Alternate,
        Winner,
        OpeningRoll,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Crawford {
        Before,
        ThisGame,
        Post,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Phase {
        Roll,
        Move,
        CubeOffered,
        ResignationOffered,
        Decision,
        MatchOver,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Dice {
        pub d1: u8,
        pub d2: u8,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Cube {
        pub value: u32,
        pub owner: Option<Seat>,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct PendingDouble {
        pub by: Seat,
        pub value: u32,
        pub beaver: bool,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct ResignationOffer {
        pub by: Seat,
        pub level: u32,
        pub resume: Phase,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct PendingDecision {
        pub seat: Seat,
        pub choices: Vec<String>,
        pub prompt: String,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum EndReason {
        Played,
        Dropped,
        Resigned,
        /// The loser's time ran out (matches with a clock). No server
        /// writes it yet: the format that brings clocks must be a new one
        /// (4), so that an older server says the game is newer instead of
        /// reading it as damaged.
        Time,
    }

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct GameResult {
        pub game_number: u32,
        pub winner: Option<Seat>,
        pub reason: EndReason,
        pub kind: String,
        pub level: u32,
        pub cube: u32,
        pub points: u32,
    }

    /// A match taken up at a position (its first game), score and cube.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct TakenUp {
        pub board: Board,
        pub score: [u32; 2],
        pub cube: u32,
        pub cube_owner: Option<Seat>,
        pub on_roll: Seat,
        pub crawford: bool,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct TakenUpEnvelope {
        pub taken_up: TakenUp,
    }

    /// A position: checkers per point (0 off, 1..=24 the seat's own
    /// numbering, 25 the bar), white's row first; pinned points as bits.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Board {
        pub checkers: [[u8; 26]; 2],
        pub pinned: [u32; 2],
    }
}

// ---- Conversions: the only place the engine's types meet the format. ----

mod convert {
    use bg_engine::game as e;
    use bg_engine::game as s;
    use bg_engine::{Board, Dice, Seat};

    use super::v1;

    impl From<Seat> for v1::Seat {
        fn from(seat: Seat) -> v1::Seat {
            match seat {
                Seat::White => v1::Seat::White,
                Seat::Black => v1::Seat::Black,
            }
        }
    }

    impl From<v1::Seat> for Seat {
        fn from(seat: v1::Seat) -> Seat {
            match seat {
                v1::Seat::White => Seat::White,
                v1::Seat::Black => Seat::Black,
            }
        }
    }

    impl From<&Board> for v1::Board {
        fn from(b: &Board) -> v1::Board {
            v1::Board {
                checkers: b.checkers,
                pinned: b.pinned,
            }
        }
    }

    impl From<v1::Board> for Board {
        fn from(b: v1::Board) -> Board {
            Board {
                checkers: b.checkers,
                pinned: b.pinned,
            }
        }
    }

    fn phase_out(p: e::Phase) -> v1::Phase {
        match p {
            e::Phase::Roll => v1::Phase::Roll,
            e::Phase::Move => v1::Phase::Move,
            e::Phase::CubeOffered => v1::Phase::CubeOffered,
            e::Phase::ResignationOffered => v1::Phase::ResignationOffered,
            e::Phase::Decision => v1::Phase::Decision,
            e::Phase::MatchOver => v1::Phase::MatchOver,
        }
    }

    fn phase_in(p: v1::Phase) -> e::Phase {
        match p {
            v1::Phase::Roll => e::Phase::Roll,
            v1::Phase::Move => e::Phase::Move,
            v1::Phase::CubeOffered => e::Phase::CubeOffered,
            v1::Phase::ResignationOffered => e::Phase::ResignationOffered,
            v1::Phase::Decision => e::Phase::Decision,
            v1::Phase::MatchOver => e::Phase::MatchOver,
        }
    }

    fn result_out(r: &e::GameResult) -> v1::GameResult {
        v1::GameResult {
            game_number: r.game_number,
            winner: r.winner.map(Into::into),
            reason: match r.reason {
                e::EndReason::Played => v1::EndReason::Played,
                e::EndReason::Dropped => v1::EndReason::Dropped,
                e::EndReason::Resigned => v1::EndReason::Resigned,
                e::EndReason::Time => v1::EndReason::Time,
            },
            kind: r.kind.clone(),
            level: r.level,
            cube: r.cube,
            points: r.points,
        }
    }

    fn result_in(r: v1::GameResult) -> e::GameResult {
        e::GameResult {
            game_number: r.game_number,
            winner: r.winner.map(Into::into),
            reason: match r.reason {
                v1::EndReason::Played => e::EndReason::Played,
                v1::EndReason::Dropped => e::EndReason::Dropped,
                v1::EndReason::Resigned => e::EndReason::Resigned,
                v1::EndReason::Time => e::EndReason::Time,
            },
            kind: r.kind,
            level: r.level,
            cube: r.cube,
            points: r.points,
        }
    }

    fn settings_out(s: &s::MatchSettings) -> v1::Settings {
        v1::Settings {
            match_length: s.match_length,
            money_games: s.money_games,
            cube: match s.cube {
                s::CubeLimit::Off => v1::CubeLimit::Off,
                s::CubeLimit::Max(max) => v1::CubeLimit::Max(max),
                s::CubeLimit::Unlimited => v1::CubeLimit::Unlimited,
            },
            dead_cube_check: s.dead_cube_check,
            crawford: s.crawford,
            jacoby: s.jacoby,
            beavers: s.beavers,
            auto_doubles: s.auto_doubles,
            scoring_limit: match s.scoring_limit {
                s::ScoringLimit::Oin => v1::ScoringLimit::Oin,
                s::ScoringLimit::Mars => v1::ScoringLimit::Mars,
                s::ScoringLimit::Cox => v1::ScoringLimit::Cox,
            },
            resignation: match s.resignation {
                s::ResignMode::ByPosition => v1::ResignMode::ByPosition,
                s::ResignMode::Offer => v1::ResignMode::Offer,
            },
            draw_on_last_roll: s.draw_on_last_roll,
            first_move: s.first_move.map(|f| match f {
                s::FirstMove::Loser => v1::FirstMove::Loser,
                s::FirstMove::Alternate => v1::FirstMove::Alternate,
                s::FirstMove::Winner => v1::FirstMove::Winner,
                s::FirstMove::OpeningRoll => v1::FirstMove::OpeningRoll,
            }),
            // Settled when the match starts: every stored match has it.
            auto_roll: s.auto_roll == Some(true),
            bots: s
                .bots
                .iter()
                .map(|b| v1::BotSeat {
                    seat: b.seat.into(),
                    level: b.level.clone(),
                })
                .collect(),
            hints: s.hints,
        }
    }

    fn settings_in(s: v1::Settings) -> s::MatchSettings {
        s::MatchSettings {
            match_length: s.match_length,
            money_games: s.money_games,
            cube: match s.cube {
                v1::CubeLimit::Off => s::CubeLimit::Off,
                v1::CubeLimit::Max(max) => s::CubeLimit::Max(max),
                v1::CubeLimit::Unlimited => s::CubeLimit::Unlimited,
            },
            dead_cube_check: s.dead_cube_check,
            crawford: s.crawford,
            jacoby: s.jacoby,
            beavers: s.beavers,
            auto_doubles: s.auto_doubles,
            scoring_limit: match s.scoring_limit {
                v1::ScoringLimit::Oin => s::ScoringLimit::Oin,
                v1::ScoringLimit::Mars => s::ScoringLimit::Mars,
                v1::ScoringLimit::Cox => s::ScoringLimit::Cox,
            },
            resignation: match s.resignation {
                v1::ResignMode::ByPosition => s::ResignMode::ByPosition,
                v1::ResignMode::Offer => s::ResignMode::Offer,
            },
            draw_on_last_roll: s.draw_on_last_roll,
            first_move: s.first_move.map(|f| match f {
                v1::FirstMove::Loser => s::FirstMove::Loser,
                v1::FirstMove::Alternate => s::FirstMove::Alternate,
                v1::FirstMove::Winner => s::FirstMove::Winner,
                v1::FirstMove::OpeningRoll => s::FirstMove::OpeningRoll,
            }),
            auto_roll: Some(s.auto_roll),
            bots: s
                .bots
                .into_iter()
                .map(|b| s::BotSeat {
                    seat: b.seat.into(),
                    level: b.level,
                })
                .collect(),
            hints: s.hints,
        }
    }

    impl From<&e::Match> for v1::Match {
        fn from(m: &e::Match) -> v1::Match {
            v1::Match {
                settings: settings_out(&m.settings),
                score: m.score,
                game_number: m.game_number,
                crawford: match m.crawford {
                    e::Crawford::Before => v1::Crawford::Before,
                    e::Crawford::ThisGame => v1::Crawford::ThisGame,
                    e::Crawford::Post => v1::Crawford::Post,
                },
                turn: m.turn.into(),
                phase: phase_out(m.phase),
                dice: m.dice.map(|d| v1::Dice { d1: d.d1, d2: d.d2 }),
                cube: v1::Cube {
                    value: m.cube.value,
                    owner: m.cube.owner.map(Into::into),
                },
                cube_in_play: m.cube_in_play,
                pending_double: m.pending_double.map(|d| v1::PendingDouble {
                    by: d.by.into(),
                    value: d.value,
                    beaver: d.beaver,
                }),
                resignation: m.resignation.map(|r| v1::ResignationOffer {
                    by: r.by.into(),
                    level: r.level,
                    resume: phase_out(r.resume),
                }),
                declined: m.declined.map(|(seat, level)| (seat.into(), level)),
                pending_decision: m.pending_decision.as_ref().map(|d| v1::PendingDecision {
                    seat: d.seat.into(),
                    choices: d.choices.clone(),
                    prompt: d.prompt.clone(),
                }),
                decision_after_play: m.decision_after_play,
                first_mover: m.first_mover.into(),
                pending_win: m.pending_win.as_ref().map(result_out),
                starter: m.starter.into(),
                variant_state: m.variant_state.clone(),
                results: m.results.iter().map(result_out).collect(),
                winner: m.winner.map(Into::into),
            }
        }
    }

    impl TryFrom<v1::Match> for e::Match {
        type Error = String;

        /// Dice must be dice; everything else the format can hold, the
        /// engine can too (its own checks come after: `Match::check`).
        fn try_from(m: v1::Match) -> Result<e::Match, String> {
            let dice = m
                .dice
                .map(|d| {
                    Dice::new(d.d1, d.d2)
                        .map_err(|_| format!("dice {}-{} are not dice", d.d1, d.d2))
                })
                .transpose()?;
            Ok(e::Match {
                settings: settings_in(m.settings),
                score: m.score,
                game_number: m.game_number,
                crawford: match m.crawford {
                    v1::Crawford::Before => e::Crawford::Before,
                    v1::Crawford::ThisGame => e::Crawford::ThisGame,
                    v1::Crawford::Post => e::Crawford::Post,
                },
                turn: m.turn.into(),
                phase: phase_in(m.phase),
                dice,
                cube: e::Cube {
                    value: m.cube.value,
                    owner: m.cube.owner.map(Into::into),
                },
                cube_in_play: m.cube_in_play,
                pending_double: m.pending_double.map(|d| e::PendingDouble {
                    by: d.by.into(),
                    value: d.value,
                    beaver: d.beaver,
                }),
                resignation: m.resignation.map(|r| e::ResignationOffer {
                    by: r.by.into(),
                    level: r.level,
                    resume: phase_in(r.resume),
                }),
                declined: m.declined.map(|(seat, level)| (seat.into(), level)),
                pending_decision: m.pending_decision.map(|d| e::Decision {
                    seat: d.seat.into(),
                    choices: d.choices,
                    prompt: d.prompt,
                }),
                decision_after_play: m.decision_after_play,
                first_mover: m.first_mover.into(),
                pending_win: m.pending_win.map(result_in),
                starter: m.starter.into(),
                variant_state: m.variant_state,
                results: m.results.into_iter().map(result_in).collect(),
                winner: m.winner.map(Into::into),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot written before formats had versions (format 0), as the
    /// server stored it: a money game, white to move with 5-4.
    const FORMAT_0: &str = r#"{"settings":{"match_length":0,"money_games":1,"cube":{"max":64},"dead_cube_check":true,"crawford":true,"jacoby":false,"beavers":false,"auto_doubles":0,"scoring_limit":"cox","resignation":"by_position","draw_on_last_roll":false,"first_move":"loser"},"score":[0,0],"game_number":1,"crawford":"before","turn":"white","phase":"move","dice":{"d1":5,"d2":4},"cube":{"value":1,"owner":null},"cube_in_play":true,"pending_double":null,"resignation":null,"declined":null,"pending_decision":null,"decision_after_play":false,"first_mover":"white","pending_win":null,"starter":"white","variant_state":[1,0,0,0,0,0,0,5,0,3,0,0,0,0,5,0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,5,0,3,0,0,0,0,5,0,0,0,0,0,0,0,0,0,0,2,0],"results":[],"winner":null}"#;

    /// A format-0 snapshot from before `auto_doubles` and
    /// `decision_after_play` existed: they take their defaults.
    const FORMAT_0_OLDEST: &str = r#"{"settings":{"match_length":3,"money_games":1,"cube":"unlimited","dead_cube_check":true,"crawford":true,"jacoby":false,"beavers":false,"scoring_limit":"mars","resignation":"offer","draw_on_last_roll":false,"first_move":null},"score":[1,0],"game_number":2,"crawford":"this_game","turn":"black","phase":"resignation_offered","dice":null,"cube":{"value":2,"owner":"black"},"cube_in_play":false,"pending_double":null,"resignation":{"by":"black","level":2,"resume":"roll"},"declined":["white",1],"pending_decision":null,"first_mover":"black","pending_win":null,"starter":"black","variant_state":[1,2,3],"results":[{"game_number":1,"winner":"white","reason":"resigned","kind":"single","level":1,"cube":1,"points":1}],"winner":null}"#;

    #[test]
    fn a_snapshot_of_the_previous_format_is_read() {
        let (game, dice, clock) = decode(FORMAT_0).unwrap();
        // Before verifiable dice: the CSPRNG's; before clocks, none.
        assert_eq!((dice, clock), (None, None));
        assert_eq!(game.phase, bg_engine::game::Phase::Move);
        assert_eq!(game.dice, Some(bg_engine::Dice::new(5, 4).unwrap()));
        assert_eq!(game.settings.cube, bg_engine::game::CubeLimit::Max(64));
        assert_eq!(game.variant_state.len(), 53);
        // Auto-roll did not exist: the game is played without it.
        assert_eq!(game.settings.auto_roll, Some(false));
        // Written again, it is the current format, and reads back the same.
        let again = encode(&game, None, None).unwrap();
        assert!(again.starts_with(r#"{"format":4,"match":{"#), "{again}");
        assert_eq!(decode(&again).unwrap(), (game.clone(), None, None));
        let format_1 = format!(r#"{{"format":1,"match":{FORMAT_0}}}"#);
        assert_eq!(decode(&format_1).unwrap().0, game);
        let format_2 = format!(r#"{{"format":2,"match":{FORMAT_0}}}"#);
        assert_eq!(decode(&format_2).unwrap().0, game);
        let format_3 = format!(r#"{{"format":3,"match":{FORMAT_0}}}"#);
        assert_eq!(decode(&format_3).unwrap(), (game.clone(), None, None));

        let (oldest, _, _) = decode(FORMAT_0_OLDEST).unwrap();
        assert_eq!(oldest.settings.auto_doubles, 0);
        assert!(!oldest.decision_after_play);
        assert_eq!(oldest.declined, Some((bg_engine::Seat::White, 1)));
        assert_eq!(oldest.results[0].kind, "single");
        assert_eq!(oldest.resignation.map(|r| r.level), Some(2));
    }

    /// Format 4 is pinned: the same match always writes the same text. A
    /// change here means a new format (and a migration in `decode`).
    /// A match the service plays a seat of is written in format 5, with
    /// its computer seats and hints; one without stays format 4.
    #[test]
    fn format_5_is_format_4_with_the_seats_the_service_plays() {
        let (mut game, _, _) = decode(FORMAT_0).unwrap();
        game.settings.auto_roll = Some(false);
        game.settings.hints = true;
        let without = encode(&game, None, None).unwrap();
        assert!(without.starts_with(r#"{"format":4,"#), "{without}");
        assert!(without.contains(r#""hints":true"#), "{without}");
        game.settings.bots = vec![bg_engine::game::BotSeat {
            seat: Seat::Black,
            level: "expert".into(),
        }];
        let text = encode(&game, None, None).unwrap();
        assert!(text.starts_with(r#"{"format":5,"#), "{text}");
        assert!(
            text.contains(r#""bots":[{"seat":"black","level":"expert"}],"hints":true"#),
            "{text}"
        );
        assert_eq!(decode(&text).unwrap(), (game, None, None));
    }

    #[test]
    fn format_4_is_the_format_0_match_with_auto_roll_its_dice_and_its_clock_in_an_envelope() {
        let (mut game, _, _) = decode(FORMAT_0).unwrap();
        game.settings.auto_roll = Some(true);
        let with_auto_roll = FORMAT_0.replace(
            r#""first_move":"loser"}"#,
            r#""first_move":"loser","auto_roll":true}"#,
        );
        assert_eq!(
            encode(&game, None, None).unwrap(),
            format!(r#"{{"format":4,"match":{with_auto_roll}}}"#)
        );
        let mut dice = FairDice {
            server: ServerSeed([0xab; 32]),
            seeds: SeatSeeds::new("w", "").unwrap(),
            thrown: 12,
        };
        let text = encode(&game, Some(&dice), None).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"format":4,"match":{with_auto_roll},"dice":{{"scheme":"hmac-sha256/v1","server_seed":"{}","white_seed":"w","black_seed":"","thrown":12}}}}"#,
                "ab".repeat(32)
            )
        );
        assert_eq!(
            decode(&text).unwrap(),
            (game.clone(), Some(dice.clone()), None)
        );
        // A clock: its settings, the reserves, who runs since when.
        let mut clock = bg_engine::clock::Clock::new(
            bg_engine::clock::ClockSettings {
                reserve_ms: 0,
                reserve_per_point_ms: 120_000,
                delay_ms: 12_000,
                increment_ms: 0,
                turn_limit_ms: 0,
                on_timeout: bg_engine::clock::OnTimeout::Match,
            },
            7,
        );
        clock.hand_over(Some(bg_engine::Seat::Black), 1_700_000_000_000);
        let text = encode(&game, None, Some(&clock)).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"format":4,"match":{with_auto_roll},"clock":{{"reserve_ms":0,"reserve_per_point_ms":120000,"delay_ms":12000,"increment_ms":0,"turn_limit_ms":0,"on_timeout":"match","reserves":[840000,840000],"running":["black",1700000000000]}}}}"#
            )
        );
        assert_eq!(decode(&text).unwrap(), (game.clone(), None, Some(clock)));
        // A seed given with a roll keeps the die it applies from.
        dice.give_seed(bg_engine::Seat::Black, "b").unwrap();
        let text = encode(&game, Some(&dice), None).unwrap();
        assert!(
            text.ends_with(r#""black_seed":"b","black_seed_from":12,"thrown":12}}"#),
            "{text}"
        );
        assert_eq!(decode(&text).unwrap(), (game, Some(dice), None));
    }

    #[test]
    fn a_newer_or_damaged_snapshot_is_refused_with_a_reason() {
        let newer = decode(r#"{"format":7,"match":{}}"#).unwrap_err();
        assert!(matches!(newer, SnapshotError::Newer(7)), "{newer}");
        assert!(newer.to_string().contains("upgrade the server"));
        for damaged in [
            r#"{"format":"one"}"#,
            r#"{"format":1}"#,
            "[1,2]",
            "",
            &FORMAT_0.replace(r#""d1":5"#, r#""d1":9"#),
            &FORMAT_0.replace(r#""turn":"white""#, r#""turn":"green""#),
            &format!(
                r#"{{"format":3,"match":{FORMAT_0},"dice":{{"scheme":"md5","server_seed":"00","white_seed":"","black_seed":"","thrown":0}}}}"#
            ),
            &format!(
                r#"{{"format":3,"match":{FORMAT_0},"dice":{{"scheme":"hmac-sha256/v1","server_seed":"00","white_seed":"","black_seed":"","thrown":0}}}}"#
            ),
        ] {
            assert!(decode(damaged).is_err(), "{damaged}");
        }
    }

    #[test]
    fn a_start_position_reads_back_as_written() {
        let board = bg_engine::Board::from_points(&[(6, 5), (8, 3)], &[(6, 5), (24, 2)]);
        let text = encode_board(&board).unwrap();
        assert_eq!(decode_board(&text).unwrap(), board);
        // The shape stored since positions were first stored.
        assert!(text.starts_with(r#"{"checkers":[["#), "{text}");
    }
}
