//! The rules of standard (short) backgammon, as a [`Variant`].
//!
//! docs/rules.md §1.1-1.4: the
//! setup (nackgammon as an option), bar entry, blocked points, hitting,
//! the most-dice and larger-die rules, bearing off with the higher-die rule
//! and the "all home" check after every move, and the end of the game with
//! its win type. The cube, match play and the opening roll are the host's
//! (`bg-engine`'s state machine), the same for every variant.
//!
//! The plugin file is built by `bg-standard`, which only exports
//! [`Standard`]; this library is separate so that variants built on these
//! rules (Caucasian) and tests reuse them without a second entry point.
//! This crate must never do I/O or keep state between calls.

pub mod rules;
mod win_type;

pub use win_type::WinType;

use bg_variant_api::engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::{
    Capabilities, Opening, OptionSpec, Options, Outcome, Setup, StateCodec, Transition, Variant,
    VariantError, VariantInfo, check_option_names, option_value, search,
};

use rules::StandardSteps;

/// The variant.
#[derive(Default)]
pub struct Standard;

/// A game of standard backgammon is its board: everything else (turn,
/// dice, cube, score) is the host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandardState {
    pub board: Board,
}

const STATE_VERSION: u8 = 1;

thread_local! {
    /// The play search's memory, reused by every call on this thread.
    static BUFFERS: std::cell::RefCell<search::Buffers<StandardSteps>> = Default::default();
}
const SETUP: &str = "setup";

impl Variant for Standard {
    type State = StandardState;

    fn info(&self) -> VariantInfo {
        VariantInfo {
            name: "standard".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Standard (short) backgammon: 15 checkers, hitting, the doubling cube, gammons and backgammons.".into(),
            options: vec![OptionSpec {
                name: SETUP.into(),
                description: "Starting position: standard (24x2 13x5 8x3 6x5) or nackgammon (24x2 23x2 13x4 8x3 6x4).".into(),
                allowed_values: vec!["standard".into(), "nackgammon".into()],
                default_value: "standard".into(),
            }],
            max_win_level: 3,
            win_kinds: vec!["single".into(), "gammon".into(), "backgammon".into()],
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::CUBE
            .union(Capabilities::STANDARD_BOARD)
            .union(Capabilities::SETUP_POSITION)
    }

    fn new_game(&self, options: &Options) -> Result<Setup<StandardState>, VariantError> {
        check_option_names(options, &[SETUP])?;
        let board = match option_value(options, SETUP, &["standard", "nackgammon"], "standard")? {
            "nackgammon" => Board::nackgammon_start(),
            _ => Board::standard_start(),
        };
        Ok(setup(board))
    }

    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<StandardState>, VariantError> {
        check_option_names(options, &[SETUP])?;
        check_board(board)?;
        Ok(setup(*board))
    }

    fn board(&self, state: &StandardState) -> Board {
        state.board
    }

    fn legal_plays(&self, state: &StandardState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        let (steps, start) = StandardSteps::new(&state.board, seat);
        BUFFERS.with_borrow_mut(|buffers| {
            search::legal_plays_in(buffers, &steps, start, dice, 4, out)
        });
    }

    fn play_result(
        &self,
        state: &StandardState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        rules::apply_moves(&state.board, seat, play)
    }

    fn after_play(
        &self,
        _: &StandardState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<StandardState> {
        let board = chosen.result;
        let mut transition = Transition::to(StandardState { board });
        if board.off(seat) == bg_variant_api::engine::CHECKERS {
            let outcome = win(seat, WinType::of_loser(&board, seat.other()));
            transition.outcome = Some(Outcome {
                by_bearing_off: true,
                ..outcome
            });
        }
        transition
    }

    fn concede(&self, state: &StandardState, loser: Seat) -> Outcome {
        win(loser.other(), WinType::of_loser(&state.board, loser))
    }
}

impl StateCodec for StandardState {
    fn encode(&self) -> Vec<u8> {
        let state = self;
        let mut bytes = Vec::with_capacity(53);
        bytes.push(STATE_VERSION);
        bytes.extend_from_slice(&state.board.checkers[0]);
        bytes.extend_from_slice(&state.board.checkers[1]);
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<StandardState, VariantError> {
        let [STATE_VERSION, rest @ ..] = bytes else {
            return Err(VariantError::InvalidInput(
                "not a standard game state (version byte)".into(),
            ));
        };
        if rest.len() != 52 {
            return Err(VariantError::InvalidInput(format!(
                "a standard game state is 53 bytes, not {}",
                bytes.len()
            )));
        }
        let mut board = Board::EMPTY;
        board.checkers[0].copy_from_slice(&rest[..26]);
        board.checkers[1].copy_from_slice(&rest[26..]);
        check_board(&board)?;
        Ok(StandardState { board })
    }
}

fn setup(board: Board) -> Setup<StandardState> {
    Setup {
        state: StandardState { board },
        opening: Opening::PlayOpeningDice,
        cube: true,
        first_move: None,
    }
}

fn check_board(board: &Board) -> Result<(), VariantError> {
    board
        .validate()
        .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
    if board.pinned != [0, 0] {
        return Err(VariantError::InvalidInput(
            "standard backgammon has no pinned checkers".into(),
        ));
    }
    Ok(())
}

/// The outcome of a win of `winner` with `win_type`.
pub fn win(winner: Seat, win_type: WinType) -> Outcome {
    Outcome {
        winner: Some(winner),
        level: win_type.points(),
        kind: match win_type {
            WinType::Single => "single",
            WinType::Gammon => "gammon",
            WinType::Backgammon => "backgammon",
        }
        .into(),
        by_bearing_off: false,
    }
}

/// The variant called directly: no plugin file, no host.
#[cfg(test)]
mod variant_tests {
    use super::*;

    fn state(white: &[(u8, u8)], black: &[(u8, u8)]) -> StandardState {
        StandardState {
            board: Board::from_points(white, black),
        }
    }

    /// The last checker borne off ends the game, named by the table of
    /// T25: a gammon when the loser has none off.
    #[test]
    fn bearing_off_the_last_checker_wins_by_the_losers_position() {
        // Black, all 15 on its own 12-point: none off, none in white's home.
        let s = state(&[(1, 1)], &[(12, 15)]);
        let dice = Dice::new(2, 1).unwrap();
        let t =
            bg_variant_api::apply_play(&Standard, &s, Seat::White, dice, &"1/off".parse().unwrap())
                .unwrap();
        let outcome = t.outcome.unwrap();
        assert_eq!((outcome.level, outcome.kind.as_str()), (2, "gammon"));
        assert!(outcome.by_bearing_off);
        assert_eq!(
            Standard.info().win_kinds,
            ["single", "gammon", "backgammon"]
        );
    }

    /// Moves in any order reaching a legal result are the same play.
    #[test]
    fn any_order_of_the_moves_of_a_legal_play_is_that_play() {
        let s = Standard.new_game(&Options::new()).unwrap().state;
        let dice = Dice::new(6, 1).unwrap();
        for notation in ["13/7 8/7", "8/7 13/7"] {
            let t = bg_variant_api::apply_play(
                &Standard,
                &s,
                Seat::White,
                dice,
                &notation.parse().unwrap(),
            )
            .unwrap();
            assert_eq!(t.state.board.count(Seat::White, 7), 2, "{notation}");
        }
        let illegal =
            bg_variant_api::apply_play(&Standard, &s, Seat::White, dice, &"13/7".parse().unwrap());
        assert!(matches!(illegal, Err(VariantError::IllegalPlay(_))));
    }
}
