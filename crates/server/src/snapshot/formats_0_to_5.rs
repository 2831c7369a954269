//! The types of stored formats 0 to 5, as they are written: field names
//! and shapes fixed here. Each later format only added optional fields
//! (with defaults), so one set of types reads them all: format 1 lacks
//! `auto_roll`, 1 and 2 lack `dice`, 1 to 3 `clock`, 1 to 4 `bots` and
//! `hints`; format 0 is the match without an envelope. Never change these
//! types: a format that needs another shape gets a file of its own.

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
