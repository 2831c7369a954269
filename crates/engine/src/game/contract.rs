//! The contract between the match state machine and a variant: what a
//! variant answers ([`Setup`], [`Transition`] with its [`ScoreEvent`]s,
//! [`Outcome`] and [`Decision`], [`Scoreboard`], [`RulesError`]) and the
//! [`Rules`] trait the state machine asks through. The server implements
//! [`Rules`] over a loaded plugin; plugin authors meet these types through
//! `bg-variant-api`. Read this file whole to know what a variant must do.

use serde::{Deserialize, Serialize};

use super::FirstMove;
use crate::{Board, Dice, LegalPlay, Play, Seat};

/// How a variant's first turn starts (from the variant's setup).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Opening {
    /// One die each (ties again); the higher plays both as thrown.
    PlayOpeningDice,
    /// One die each (ties again); the higher throws both dice afresh.
    ThrowAgain,
}

impl Opening {
    /// Its serde name: "play_opening_dice" or "throw_again" (as match
    /// records say it).
    pub fn name(self) -> &'static str {
        match self {
            Opening::PlayOpeningDice => "play_opening_dice",
            Opening::ThrowAgain => "throw_again",
        }
    }
}

/// A new game as the variant sets it up: its state (a plugin's own type
/// inside the plugin; bytes once it has crossed the plugin boundary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup<S> {
    pub state: S,
    pub opening: Opening,
    /// Whether the variant lets this game use the cube.
    pub cube: bool,
    /// Who starts later games when the match settings do not say (None:
    /// the host's default, the loser).
    pub first_move: Option<FirstMove>,
}

/// How a variant says a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Seat>,
    /// 1 single, 2 gammon (or a double win), 3 backgammon; 0 for a draw.
    pub level: u32,
    /// A stable name: "single", "gammon", "backgammon", "mother", "draw".
    pub kind: String,
    /// The winner bore off its last checker (docs/rules.md §4.2 applies only then).
    pub by_bearing_off: bool,
}

/// Points a variant scores during play (tric-trac's jans): who gains
/// them, how many, by which rule and in how many ways.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoreEvent {
    pub seat: Seat,
    pub points: u32,
    /// A stable machine-readable name of the scoring rule (the variant
    /// documents its names).
    pub reason: String,
    /// How many ways the rule was met (points are per way); 0 when the
    /// rule has no ways.
    #[serde(default)]
    pub ways: u32,
}

/// What a variant shows beside the board: its tallies, counters and
/// marks, each by a name the variant declares (with what it means) in its
/// `VariantInfo`, and what the last roll scored. The engine and the host
/// carry them without knowing any name: a new variant's show in the API
/// with no change here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scoreboard {
    /// Per-seat values (tric-trac: points, holes, bredouille, ...).
    pub tallies: Vec<Tally>,
    /// Values of the whole game (tric-trac: the round).
    pub counters: Vec<Counter>,
    /// Marks on checkers (Plakoto: pinned).
    pub markers: Vec<Marker>,
    /// What the last roll scored, for both seats, in marking order.
    pub last_roll: Vec<ScoreEvent>,
}

impl Scoreboard {
    /// The tally named `name`, white's value first.
    pub fn tally(&self, name: &str) -> Option<[i64; 2]> {
        self.tallies
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.seats)
    }

    /// The counter named `name`.
    pub fn counter(&self, name: &str) -> Option<i64> {
        self.counters
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value)
    }
}

/// A per-seat value of a variant's, by name: a count, or 0 and 1 for no
/// and yes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub name: String,
    /// White's value, then black's.
    pub seats: [i64; 2],
}

/// A value of the whole game, by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub value: i64,
}

/// A mark a variant puts on `seat`'s checkers on `point` (the seat's own
/// numbering).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub name: String,
    pub seat: Seat,
    pub point: u8,
}

/// A decision the variant asks a player for before play goes on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub seat: Seat,
    pub choices: Vec<String>,
    pub prompt: String,
}

/// What a variant answers to an action: the next state, the points scored
/// on the way, and, when it comes to that, how the game ended or the
/// decision a player must make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition<S> {
    pub state: S,
    pub events: Vec<ScoreEvent>,
    pub outcome: Option<Outcome>,
    pub decision: Option<Decision>,
    /// The seat that rolls next, when it is not the usual one: the dice of
    /// the turn are spent and this seat throws afresh (tric-trac: the
    /// player who goes, or who bore off first, rolls again). `None`: the
    /// turn goes on as usual. Not set together with a decision: the
    /// answer to the decision says it.
    pub next_roller: Option<Seat>,
}

impl<S> Transition<S> {
    /// A transition to `state` with nothing else happening.
    pub fn to(state: S) -> Transition<S> {
        Transition {
            state,
            events: Vec::new(),
            outcome: None,
            decision: None,
            next_roller: None,
        }
    }
}

/// A variant's error: its kind, matched (never its text), and a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RulesError {
    pub kind: RulesErrorKind,
    pub message: String,
}

impl RulesError {
    /// The kind's stable machine-readable reason.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }
}

/// The kinds of a variant's errors, in one list: each with its status
/// code at the plugin boundary (the ABI's `STATUS_*`) and its stable
/// reason (API errors, logs). Every other error type that carries a kind
/// (the plugin author's `VariantError`, the server's API errors) maps to
/// and from this list with an exhaustive match, so adding a kind here is
/// the one edit, and a mapping left out does not compile.
macro_rules! rules_error_kinds {
    ($($(#[$doc:meta])* $kind:ident = $status:literal, $reason:literal;)*) => {
        /// What went wrong in a variant's answer.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RulesErrorKind {
            $($(#[$doc])* $kind,)*
        }

        impl RulesErrorKind {
            /// Every kind.
            pub const ALL: &[RulesErrorKind] = &[$(RulesErrorKind::$kind),*];

            /// The kind's status code at the plugin boundary (never 0,
            /// which is success).
            pub const fn status(self) -> i32 {
                match self {
                    $(RulesErrorKind::$kind => $status,)*
                }
            }

            /// The kind of a status code a plugin returned (None: success,
            /// or a code this list does not have).
            pub const fn from_status(status: i32) -> Option<RulesErrorKind> {
                match status {
                    $($status => Some(RulesErrorKind::$kind),)*
                    _ => None,
                }
            }

            /// A stable machine-readable reason, for API errors and logs.
            pub const fn reason(self) -> &'static str {
                match self {
                    $(RulesErrorKind::$kind => $reason,)*
                }
            }
        }
    };
}

rules_error_kinds! {
    /// A state, seat or dice the variant cannot work with: bad input from
    /// the host (a damaged stored state), not the player's mistake.
    InvalidInput = 1, "INVALID_INPUT";
    /// An option the variant does not take, or a value it does not accept.
    InvalidOption = 2, "INVALID_OPTION";
    /// A play that is not one of the legal plays.
    IllegalPlay = 3, "ILLEGAL_PLAY";
    /// A decision that is not one of the choices offered.
    IllegalDecision = 4, "ILLEGAL_DECISION";
    /// Something the variant does not do (a start position it cannot take).
    Unsupported = 5, "UNSUPPORTED";
    /// The plugin panicked or broke an invariant.
    VariantFault = 6, "VARIANT_FAULT";
}

/// The variant's rules, as the state machine needs them. The server
/// implements this over a loaded plugin; tests may too.
pub trait Rules {
    fn new_game(&self) -> Result<Setup<Vec<u8>>, RulesError>;
    fn legal_plays(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Vec<LegalPlay>, RulesError>;
    fn apply_play(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        play: &Play,
    ) -> Result<Transition<Vec<u8>>, RulesError>;
    fn after_roll(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Transition<Vec<u8>>, RulesError>;
    fn decide(
        &self,
        state: &[u8],
        seat: Seat,
        choice: &str,
    ) -> Result<Transition<Vec<u8>>, RulesError>;
    fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError>;
    /// The board of `state` (what a player sees: the computer player
    /// values it). Rules that cannot show one say so.
    fn board(&self, state: &[u8]) -> Result<Board, RulesError> {
        let _ = state;
        Err(RulesError {
            kind: RulesErrorKind::Unsupported,
            message: "these rules do not show their board".into(),
        })
    }
    /// Where a game scored during play stands (`None` for variants that
    /// score only at the end).
    fn scoreboard(&self, state: &[u8]) -> Result<Option<Scoreboard>, RulesError> {
        let _ = state;
        Ok(None)
    }
    /// The most one game can be worth before the cube (1 single, 2
    /// gammon, 3 backgammon): the highest resignation level to offer.
    fn max_win_level(&self) -> u32 {
        3
    }
    /// The variant's name of a win at `level` (from 1), as its own games
    /// end: an accepted resignation at that level carries the same name.
    fn win_kind(&self, level: u32) -> String;
}

#[cfg(test)]
mod tests {
    use super::RulesErrorKind;

    #[test]
    fn every_error_kind_has_its_own_status_and_reason_and_comes_back_from_its_status() {
        let kinds = RulesErrorKind::ALL;
        for kind in kinds {
            assert_ne!(kind.status(), 0, "0 is success");
            assert_eq!(RulesErrorKind::from_status(kind.status()), Some(*kind));
        }
        let mut reasons: Vec<_> = kinds.iter().map(|k| k.reason()).collect();
        reasons.sort_unstable();
        reasons.dedup();
        assert_eq!(reasons.len(), kinds.len());
    }
}
