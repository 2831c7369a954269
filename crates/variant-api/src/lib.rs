//! What a variant plugin author depends on.
//!
//! A variant is a crate of type `cdylib` that implements [`Variant`] and
//! calls [`export_variant!`]. The macro generates the one C-ABI entry point
//! the host looks up ([`abi::ENTRY_SYMBOL`]) and a shim for every trait
//! method that catches panics and turns them into error codes, so a bug in
//! a plugin fails its own games and never the server.
//!
//! This crate owns the boundary: the trait, the `#[repr(C)]` descriptor
//! ([`abi`]), the payload messages ([`proto`]), and helpers every variant
//! on the standard board needs ([`search`]: the legal-play search that
//! keeps the plays using the most dice and the larger die, merged by
//! resulting position). It must never load libraries (that is
//! `bg-plugin-host`), do I/O, or hold rules of its own.
//!
//! Rules are pure: given a state and dice a variant always answers the same.
//! The host owns dice, storage, clocks and identities.
//!
//! A variant answers in the engine's own vocabulary ([`Setup`],
//! [`Transition`], [`Outcome`], [`ScoreEvent`], [`Decision`], the same
//! types the match state machine uses). They become protobuf bytes only at
//! the C ABI (the export shims) and are read back into the same types by
//! the host (`bg-plugin-host`); a play's legality is checked in one place,
//! [`apply_play`].

pub mod abi;
mod export;
pub mod in_process;
pub mod search;
pub mod wire;

pub use bg_engine as engine;
use bg_engine::{Board, Dice, LegalPlay, Play, Seat};
use std::collections::BTreeMap;

/// The payload messages of `proto/variant/v1/variant.proto`.
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/variant.v1.rs"));
}

pub use proto::{Label, OptionSpec, VariantInfo};

impl VariantInfo {
    /// The most one game can be worth before the cube: what the variant
    /// says, from 1 to 3 (0, unset, means 3; more than 3 is read as 3).
    pub fn max_win_level_or_default(&self) -> u32 {
        match self.max_win_level {
            0 => 3,
            level => level.min(3),
        }
    }

    /// The variant's name of a win at `level` (from 1): what it says, else
    /// the names a plugin that names none was written for (the standard
    /// board's, as before `win_kinds` existed).
    pub fn win_kind_name(&self, level: u32) -> String {
        const UNNAMED: [&str; 3] = ["single", "gammon", "backgammon"];
        let index = level.max(1) as usize - 1;
        match self.win_kinds.get(index) {
            Some(kind) if !kind.is_empty() => kind.clone(),
            _ => UNNAMED[index.min(2)].to_string(),
        }
    }
}

// One vocabulary with the engine: a plugin answers in the engine's own
// types; they become protobuf bytes only at the C ABI (`export`), and the
// host turns them back into the same types (`bg-plugin-host`).
pub use bg_engine::game::{
    Counter, Decision, FirstMove, Marker, Opening, Outcome, ScoreEvent, Scoreboard, Setup, Tally,
    Transition,
};

/// Option values for one game, by name.
pub type Options = BTreeMap<String, String>;

/// What a variant can do, beyond moving checkers. Declared once in the
/// descriptor so the host can refuse what a variant does not support
/// without asking it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// The doubling cube may be used (possibly only with an option).
    pub const CUBE: Capabilities = Capabilities(abi::CAPABILITY_CUBE);
    /// A game can end in a draw.
    pub const DRAWS: Capabilities = Capabilities(abi::CAPABILITY_DRAWS);
    /// Points are scored during play ([`Transition::events`]).
    pub const SCORES_DURING_PLAY: Capabilities = Capabilities(abi::CAPABILITY_SCORES_DURING_PLAY);
    /// Players may have to make decisions ([`Variant::decide`]).
    pub const DECISIONS: Capabilities = Capabilities(abi::CAPABILITY_DECISIONS);
    /// Boards are standard backgammon positions, so the gnubg Position ID
    /// describes them.
    pub const STANDARD_BOARD: Capabilities = Capabilities(abi::CAPABILITY_STANDARD_BOARD);
    /// A game can start from any board ([`Variant::setup_position`]).
    pub const SETUP_POSITION: Capabilities = Capabilities(abi::CAPABILITY_SETUP_POSITION);

    pub const fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    pub const fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What a variant can refuse. Each kind has a stable code at the boundary
/// ([`abi::Status`]) so the host can map it to an API status.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    /// An option is unknown or has a value the variant does not accept.
    #[error("option {name}: {message}")]
    InvalidOption { name: String, message: String },
    /// Input the variant cannot read (state bytes, a board, a seat).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The play is not one of the legal plays.
    #[error("illegal play: {0}")]
    IllegalPlay(String),
    /// The decision is not one of the choices on offer, or none is pending.
    #[error("illegal decision: {0}")]
    IllegalDecision(String),
    /// The variant does not do this at all.
    #[error("not supported by this variant: {0}")]
    Unsupported(String),
    /// The variant broke its own contract (a bug in it, never the
    /// player's mistake): the host treats it as a fault of the plugin.
    #[error("the variant broke its contract: {0}")]
    Broken(String),
}

impl VariantError {
    /// Its kind in the engine's one list (what crosses the boundary).
    pub fn kind(&self) -> bg_engine::game::RulesErrorKind {
        use bg_engine::game::RulesErrorKind as Kind;
        match self {
            VariantError::InvalidOption { .. } => Kind::InvalidOption,
            VariantError::InvalidInput(_) => Kind::InvalidInput,
            VariantError::IllegalPlay(_) => Kind::IllegalPlay,
            VariantError::IllegalDecision(_) => Kind::IllegalDecision,
            VariantError::Unsupported(_) => Kind::Unsupported,
            // A contract broken is reported as a fault, like a panic.
            VariantError::Broken(_) => Kind::VariantFault,
        }
    }
}

/// How a variant's state is stored: the bytes the host keeps with each
/// version of a game and hands back on every call. `decode` must refuse
/// bytes it did not write (a damaged row) with
/// [`VariantError::InvalidInput`], and read what every earlier version of
/// the plugin wrote (games outlive plugin upgrades): start the bytes
/// with a format version of your own if the state may change.
///
/// A state that derives serde's `Serialize` and `Deserialize` gets a
/// codec from [`serde_state!`]; a hot variant may write its own bytes.
pub trait StateCodec: Sized {
    fn encode(&self) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> Result<Self, VariantError>;
}

/// A [`StateCodec`] for a serde type, so that a simple variant writes only
/// its rules: `bg_variant_api::serde_state!(MyState);`. The bytes are a
/// format byte then the state in JSON (readable in a stored row; a field
/// added later with `#[serde(default)]` still reads old games).
#[macro_export]
macro_rules! serde_state {
    ($state:ty) => {
        impl $crate::StateCodec for $state {
            fn encode(&self) -> ::std::vec::Vec<u8> {
                $crate::__private::encode_json(self)
            }

            fn decode(bytes: &[u8]) -> ::std::result::Result<Self, $crate::VariantError> {
                $crate::__private::decode_json(bytes, stringify!($state))
            }
        }
    };
}

/// The rules of one variant.
///
/// Every method is a pure function of its arguments. `seat` is the player
/// acting; boards are always absolute ([`Board`] counts each seat in its
/// own numbering), so a variant never has to know which seat is "on roll"
/// beyond the argument.
pub trait Variant: Default + Send + Sync + 'static {
    /// Everything the variant needs to know about a game in progress,
    /// beyond the turn, dice, cube and score the host keeps; stored with
    /// the game as the bytes its [`StateCodec`] writes (a serde type gets
    /// one from [`serde_state!`]).
    type State: Clone + StateCodec;

    /// Name (unique among loaded plugins), version, description, options.
    fn info(&self) -> VariantInfo;

    fn capabilities(&self) -> Capabilities;

    /// Starts a game with `options` (unknown names and bad values refused).
    fn new_game(&self, options: &Options) -> Result<Setup<Self::State>, VariantError>;

    /// Starts a game from an arbitrary board (analysis, tests, corpora).
    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<Self::State>, VariantError> {
        let _ = (board, options);
        Err(VariantError::Unsupported("setting up a position".into()))
    }

    /// The state as stored (its [`StateCodec`]).
    fn encode_state(&self, state: &Self::State) -> Vec<u8> {
        state.encode()
    }

    /// A stored state read back (its [`StateCodec`]).
    fn decode_state(&self, bytes: &[u8]) -> Result<Self::State, VariantError> {
        Self::State::decode(bytes)
    }

    /// The board everybody sees.
    fn board(&self, state: &Self::State) -> Board;

    /// Every legal play of `seat` with `dice`, each result once. When no
    /// checker can move, the only play is the empty play, whose result is
    /// the board as it is. This is the hot path: `out` is reused between
    /// calls; clear it and push.
    fn legal_plays(&self, state: &Self::State, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>);

    /// The board `play`'s moves reach from `state`, made in order. A move
    /// that cannot be made at all is [`VariantError::IllegalPlay`]; whether
    /// the whole play is legal is not asked here: [`apply_play`] checks
    /// that, once, for every variant.
    fn play_result(
        &self,
        state: &Self::State,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError>;

    /// What playing `chosen`, one of the legal plays, does: the next state
    /// (whose board must be `chosen.result`, unless the transition hands
    /// the dice to a seat that starts afresh, [`Transition::next_roller`]:
    /// tric-trac's relevé puts the checkers back) and, when the game ends,
    /// its outcome.
    fn after_play(
        &self,
        state: &Self::State,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<Self::State>;

    /// What happens as soon as `seat` has rolled, before moving (tric-trac
    /// scores here). Most variants change nothing.
    fn after_roll(&self, state: &Self::State, seat: Seat, dice: Dice) -> Transition<Self::State> {
        let _ = (seat, dice);
        Transition::to(state.clone())
    }

    /// Answers a pending [`Decision`] with one of its choices.
    fn decide(
        &self,
        state: &Self::State,
        seat: Seat,
        choice: &str,
    ) -> Result<Transition<Self::State>, VariantError> {
        let _ = (state, seat, choice);
        Err(VariantError::IllegalDecision(
            "this variant has no decisions".into(),
        ))
    }

    /// What `loser` concedes by resigning now, judged on the position.
    fn concede(&self, state: &Self::State, loser: Seat) -> Outcome;

    /// Where a game scored during play stands (points, holes, what the
    /// last roll scored); `None` for variants that score only at the end.
    fn scoreboard(&self, state: &Self::State) -> Option<Scoreboard> {
        let _ = state;
        None
    }
}

/// Reads an option with its default, refusing values not in `allowed`.
pub fn option_value<'a>(
    options: &'a Options,
    name: &str,
    allowed: &[&'a str],
    default: &'a str,
) -> Result<&'a str, VariantError> {
    match options.get(name) {
        None => Ok(default),
        Some(value) if allowed.contains(&value.as_str()) => Ok(value.as_str()),
        Some(value) => Err(VariantError::InvalidOption {
            name: name.to_string(),
            message: format!("`{value}` is not one of {}", allowed.join(", ")),
        }),
    }
}

/// Refuses option names a variant does not know.
pub fn check_option_names(options: &Options, known: &[&str]) -> Result<(), VariantError> {
    match options.keys().find(|name| !known.contains(&name.as_str())) {
        Some(name) => Err(VariantError::InvalidOption {
            name: name.clone(),
            message: format!("unknown option (known: {})", known.join(", ")),
        }),
        None => Ok(()),
    }
}

/// Plays `play` for `seat`: **the one place where a play's legality is
/// checked**, for every variant (the plugin glue calls it; the host does
/// not search again). The play's moves, in whatever order, must reach the
/// result of one of the legal plays; the variant then says what that legal
/// play does, and its new board must be exactly that play's result (or,
/// when the dice go to a seat that starts afresh, any board: a new round).
pub fn apply_play<V: Variant>(
    variant: &V,
    state: &V::State,
    seat: Seat,
    dice: Dice,
    play: &Play,
) -> Result<Transition<V::State>, VariantError> {
    let result = variant.play_result(state, seat, play)?;
    let mut legal = Vec::new();
    variant.legal_plays(state, seat, dice, &mut legal);
    let chosen = play_reaching(&legal, &result).ok_or_else(|| {
        VariantError::IllegalPlay(format!("{play} is not a legal play of {dice}"))
    })?;
    let transition = variant.after_play(state, seat, chosen);
    if transition.next_roller.is_none() && variant.board(&transition.state) != chosen.result {
        return Err(VariantError::Broken(format!(
            "accepted {play}, whose result is not one of its legal plays"
        )));
    }
    Ok(transition)
}

/// Finds the legal play that reaches `result`.
pub fn play_reaching<'a>(legal: &'a [LegalPlay], result: &Board) -> Option<&'a LegalPlay> {
    legal.iter().find(|lp| lp.result == *result)
}

#[doc(hidden)]
pub use export::private as __private;

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant with one legal play, `24/23`, whose `after_play` is honest
    /// or not.
    #[derive(Default)]
    struct OnePlay {
        lies: bool,
    }

    fn moved(board: &Board) -> Board {
        let mut next = *board;
        next.checkers[0][24] -= 1;
        next.checkers[0][23] += 1;
        next
    }

    // The ready codec: the state only derives serde's traits.
    crate::serde_state!(Board);

    impl Variant for OnePlay {
        type State = Board;
        fn info(&self) -> VariantInfo {
            VariantInfo::default()
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::default()
        }
        fn new_game(&self, _: &Options) -> Result<Setup<Board>, VariantError> {
            Err(VariantError::Unsupported("tests only".into()))
        }
        fn board(&self, state: &Board) -> Board {
            *state
        }
        fn legal_plays(&self, state: &Board, _: Seat, _: Dice, out: &mut Vec<LegalPlay>) {
            out.clear();
            out.push(LegalPlay {
                play: "24/23".parse().unwrap(),
                result: moved(state),
            });
        }
        fn play_result(&self, state: &Board, _: Seat, play: &Play) -> Result<Board, VariantError> {
            Ok(if play.to_string() == "24/23" {
                moved(state)
            } else {
                *state
            })
        }
        fn after_play(&self, state: &Board, _: Seat, chosen: &LegalPlay) -> Transition<Board> {
            Transition::to(if self.lies { *state } else { chosen.result })
        }
        fn concede(&self, _: &Board, _: Seat) -> Outcome {
            Outcome {
                winner: None,
                level: 0,
                kind: "draw".into(),
                by_bearing_off: false,
            }
        }
    }

    fn play(variant: &OnePlay, notation: &str) -> Result<Transition<Board>, VariantError> {
        let start = Board::standard_start();
        let dice = Dice::new(2, 1).unwrap();
        apply_play(
            variant,
            &start,
            Seat::White,
            dice,
            &notation.parse().unwrap(),
        )
    }

    /// The one check of a play's legality: reaching a legal result is
    /// legal; anything else is the player's mistake; a variant whose next
    /// board is not the chosen play's broke its contract.
    #[test]
    fn apply_play_takes_legal_plays_refuses_others_and_catches_a_lying_variant() {
        let honest = OnePlay { lies: false };
        let t = play(&honest, "24/23").unwrap();
        assert_eq!(t.state, moved(&Board::standard_start()));
        assert!(matches!(
            play(&honest, "13/11"),
            Err(VariantError::IllegalPlay(_))
        ));
        let lying = OnePlay { lies: true };
        assert!(matches!(
            play(&lying, "24/23"),
            Err(VariantError::Broken(_))
        ));
    }

    /// A serde state's codec reads back what it wrote, and refuses bytes
    /// it did not write (a damaged row, another variant's state).
    #[test]
    fn the_ready_serde_codec_reads_back_its_bytes_and_refuses_others() {
        let board = Board::standard_start();
        let bytes = OnePlay::default().encode_state(&board);
        assert_eq!(OnePlay::default().decode_state(&bytes).unwrap(), board);
        // A tuple state (JSON that is no object) reads back too.
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Pair(u8, u8);
        crate::serde_state!(Pair);
        assert_eq!(Pair::decode(&Pair(1, 2).encode()).unwrap(), Pair(1, 2));
        let unmarked = &bytes[1..];
        for damaged in [
            &bytes[..bytes.len() / 2],
            &[][..],
            &[1, 2, 3][..],
            b"J{}",
            unmarked,
        ] {
            assert!(matches!(
                Board::decode(damaged),
                Err(VariantError::InvalidInput(_))
            ));
        }
    }
}
