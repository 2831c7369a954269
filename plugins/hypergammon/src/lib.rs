//! Hypergammon: backgammon with three checkers a side, each starting on
//! its 24, 23 and 22 points; every other rule is standard backgammon's
//! (docs/rules.md part 1), cube and gammons included. The position and
//! the rules are GNU Backgammon's "3-chequer hypergammon" (`set variation
//! 3-chequer-hypergammon`), against whose move generator the plugin is
//! checked (tests/data/hypergammon-legal-plays.txt).
//!
//! The worked example of docs/tutorial-hypergammon.md: written from an
//! empty crate with the public variant API only (`bg-variant-api`), each
//! part below one step of the tutorial.

use bg_variant_api::engine::{BAR, Board, Dice, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::search::{self, Steps};
use bg_variant_api::{
    Capabilities, Opening, Options, Outcome, Setup, Transition, Variant, VariantError, VariantInfo,
    check_option_names,
};

/// Checkers each side plays with.
pub const CHECKERS: u8 = 3;

// Step 1: the state. The board is all a game of hypergammon needs beyond
// what the host keeps (turn, dice, cube, score); serde gives it a codec.

/// A game in progress: the board.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HyperState {
    pub board: Board,
}

bg_variant_api::serde_state!(HyperState);

/// The variant.
#[derive(Default)]
pub struct Hypergammon;

// Step 2: the single move, in the mover's own numbering (24 down to 1,
// the bar 25, off 0).

/// Where a checker of `seat` on `from` lands with `die`, if it may move:
/// checkers on the bar enter first; a point held by two or more of the
/// other side's checkers is closed; bearing off needs every checker home,
/// and a die higher than needed bears off only from the highest point.
pub fn target(board: &Board, seat: Seat, from: u8, die: u8) -> Option<u8> {
    let (me, opp) = (
        &board.checkers[seat.index()],
        &board.checkers[seat.other().index()],
    );
    if me[usize::from(from)] == 0 || (me[usize::from(BAR)] > 0 && from != BAR) {
        return None;
    }
    match from.checked_sub(die) {
        Some(to) if to >= 1 => (opp[usize::from(25 - to)] < 2).then_some(to),
        exact_or_over => {
            // All home means `from` is a home point (1 to 6).
            let all_home = me[7..=usize::from(BAR)].iter().all(|&n| n == 0);
            let highest = || me[usize::from(from) + 1..7].iter().all(|&n| n == 0);
            (all_home && (exact_or_over == Some(0) || highest())).then_some(OFF)
        }
    }
}

/// Moves one checker of `seat`, hitting a lone checker where it lands.
pub fn move_checker(board: &mut Board, seat: Seat, mv: Move) {
    let (me, opp) = (seat.index(), seat.other().index());
    board.checkers[me][usize::from(mv.from)] -= 1;
    board.checkers[me][usize::from(mv.to)] += 1;
    if mv.to != OFF && board.checkers[opp][usize::from(25 - mv.to)] == 1 {
        board.checkers[opp][usize::from(25 - mv.to)] = 0;
        board.checkers[opp][usize::from(BAR)] += 1;
    }
}

// Step 3: the search. The shared search (docs/rules.md §1.3) enumerates
// every sequence of single moves and keeps the legal ones; it needs the
// single move and when the game is over.

/// The single moves of one side, for the shared search.
struct HyperSteps {
    seat: Seat,
}

impl Steps for HyperSteps {
    type Node = Board;
    type Key = Board;

    fn for_each_step(&self, board: &Board, die: u8, froms: u32, mut step: impl FnMut(Move, Board)) {
        for from in (1..=BAR).rev() {
            if froms & (1 << from) == 0 {
                continue;
            }
            if let Some(to) = target(board, self.seat, from, die) {
                let mut next = *board;
                move_checker(&mut next, self.seat, Move::new(from, to));
                step(Move::new(from, to), next);
            }
        }
    }

    fn is_finished(&self, board: &Board) -> bool {
        board.off(self.seat) == CHECKERS
    }

    fn key(&self, board: &Board) -> Board {
        *board
    }

    fn write_board(&self, key: &Board, _: &Play, out: &mut Board) {
        *out = *key;
    }
}

// Step 4: the rules as the host asks for them.

impl Variant for Hypergammon {
    type State = HyperState;

    fn info(&self) -> VariantInfo {
        VariantInfo {
            name: "hypergammon".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Hypergammon: backgammon with three checkers a side, starting on the 24, 23 and 22 points.".into(),
            max_win_level: 3,
            win_kinds: vec!["single".into(), "gammon".into(), "backgammon".into()],
            checkers: u32::from(CHECKERS),
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        // Position IDs describe its boards as gnubg writes them.
        Capabilities::CUBE
            .union(Capabilities::STANDARD_BOARD)
            .union(Capabilities::SETUP_POSITION)
    }

    fn new_game(&self, options: &Options) -> Result<Setup<HyperState>, VariantError> {
        check_option_names(options, &[])?;
        let start = [(24, 1), (23, 1), (22, 1)];
        Ok(setup(Board::from_points_for(CHECKERS, &start, &start)))
    }

    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<HyperState>, VariantError> {
        check_option_names(options, &[])?;
        check(board)?;
        if Seat::BOTH.iter().any(|&seat| board.off(seat) == CHECKERS) {
            return Err(VariantError::InvalidInput(
                "a side has borne off every checker: the game would be over".into(),
            ));
        }
        Ok(setup(*board))
    }

    /// Bytes the codec reads are checked to be a hypergammon position:
    /// stored bytes that are damaged are refused, never played.
    fn decode_state(&self, bytes: &[u8]) -> Result<HyperState, VariantError> {
        let state = <HyperState as bg_variant_api::StateCodec>::decode(bytes)?;
        check(&state.board)?;
        Ok(state)
    }

    fn board(&self, state: &HyperState) -> Board {
        state.board
    }

    fn legal_plays(&self, state: &HyperState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        search::legal_plays(&HyperSteps { seat }, state.board, dice, 4, out);
    }

    fn play_result(
        &self,
        state: &HyperState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        let mut board = state.board;
        for &mv in play.moves() {
            let possible = mv.from <= BAR
                && mv.to < mv.from
                && board.checkers[seat.index()][usize::from(mv.from)] > 0;
            if !possible {
                return Err(VariantError::IllegalPlay(format!("{mv}: no such move")));
            }
            move_checker(&mut board, seat, mv);
        }
        Ok(board)
    }

    fn after_play(&self, _: &HyperState, seat: Seat, chosen: &LegalPlay) -> Transition<HyperState> {
        let board = chosen.result;
        let mut transition = Transition::to(HyperState { board });
        if board.off(seat) == CHECKERS {
            transition.outcome = Some(Outcome {
                by_bearing_off: true,
                ..win(&board, seat.other())
            });
        }
        transition
    }

    fn concede(&self, state: &HyperState, loser: Seat) -> Outcome {
        win(&state.board, loser)
    }
}

// Step 5: how a game is won. As in standard backgammon (docs/rules.md
// §1.4): a gammon if the loser has borne off no checker, a backgammon if
// it also has one on the bar or in the winner's home board.

/// The win over `loser` on `board`.
pub fn win(board: &Board, loser: Seat) -> Outcome {
    let side = &board.checkers[loser.index()];
    let (level, kind) = if side[usize::from(OFF)] > 0 {
        (1, "single")
    } else if side[19..=usize::from(BAR)].iter().any(|&n| n > 0) {
        (3, "backgammon")
    } else {
        (2, "gammon")
    };
    Outcome {
        winner: Some(loser.other()),
        level,
        kind: kind.into(),
        by_bearing_off: false,
    }
}

fn setup(board: Board) -> Setup<HyperState> {
    Setup {
        state: HyperState { board },
        opening: Opening::PlayOpeningDice,
        cube: true,
        first_move: None,
    }
}

/// A hypergammon position: three checkers a side, no point held by both,
/// no pins. (A stored game may be over: all of one side's checkers off.)
fn check(board: &Board) -> Result<(), VariantError> {
    board
        .validate_for(CHECKERS)
        .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
    if board.pinned != [0, 0] {
        return Err(VariantError::InvalidInput(
            "hypergammon has no pinned checkers".into(),
        ));
    }
    Ok(())
}

// Step 6: the plugin's one entry point.
bg_variant_api::export_variant!(Hypergammon);

#[cfg(test)]
mod tests {
    use super::*;

    fn plays(board: Board, seat: Seat, d1: u8, d2: u8) -> Vec<LegalPlay> {
        let mut out = Vec::new();
        Hypergammon.legal_plays(
            &HyperState { board },
            seat,
            Dice::new(d1, d2).unwrap(),
            &mut out,
        );
        out
    }

    /// The start: one checker each on the 24, 23 and 22 points; gnubg
    /// writes it as Position ID AACgAgAAKgAAAA.
    #[test]
    fn the_start_is_gnubg_s_hypergammon_start() {
        let setup = Hypergammon.new_game(&Options::new()).unwrap();
        assert_eq!(
            bg_variant_api::engine::position_id::encode(&setup.state.board, Seat::White),
            "AACgAgAAKgAAAA"
        );
    }

    /// From the start, 3-1 has seven plays (gnubg lists the same seven).
    #[test]
    fn three_one_from_the_start_has_seven_plays() {
        let start = Hypergammon.new_game(&Options::new()).unwrap().state.board;
        assert_eq!(plays(start, Seat::White, 3, 1).len(), 7);
    }

    /// Bearing off with a higher die from the highest point only.
    #[test]
    fn a_higher_die_bears_off_from_the_highest_point_only() {
        let board = Board::from_points_for(CHECKERS, &[(4, 1), (2, 1)], &[(24, 3)]);
        assert_eq!(target(&board, Seat::White, 4, 6), Some(OFF));
        assert_eq!(target(&board, Seat::White, 2, 6), None);
        assert_eq!(target(&board, Seat::White, 2, 2), Some(OFF));
    }

    /// A backgammon: the loser has borne off nothing and has a checker in
    /// the winner's home board.
    #[test]
    fn a_checker_left_in_the_winner_s_home_is_a_backgammon() {
        let board = Board::from_points_for(CHECKERS, &[], &[(20, 1), (10, 2)]);
        assert_eq!(win(&board, Seat::Black).level, 3);
        let board = Board::from_points_for(CHECKERS, &[], &[(10, 3)]);
        assert_eq!(win(&board, Seat::Black).level, 2);
    }
}
