//! Plakoto (docs/rules.md §3): the Greek game where a lone checker is pinned
//! instead of hit, and a pinned "mother" decides the game.
//!
//! - Setup: each side's 15 checkers on its 24-point, inside the other
//!   side's home board. No bar, no hitting.
//! - A checker may land on an empty point, on a point its side owns (even
//!   with an enemy checker pinned there), or on a lone enemy checker with
//!   nothing beneath it, which it pins. Pinned checkers cannot move; the
//!   last pinner leaving frees them.
//! - The most-dice and larger-die rules of §1.3; bearing off as in §1.3,
//!   but not while one of the mover's checkers is pinned (option
//!   `bearoff_with_pinned`).
//! - The mother (the last checker on a side's starting point) pinned:
//!   after every move (option `mother_check`), both mothers pinned is a
//!   draw; the other side's mother pinned while none of the mover's
//!   checkers is left free on its own start wins 2 (option
//!   `mother_exception=off`: a pinned mother loses at once).
//! - A win by bearing off is 1, or 2 if the loser has borne off none; no
//!   triple. No cube unless `cube=on`. The starter of the first game
//!   throws both dice afresh (option `opening`); the previous winner
//!   starts later games (the host's `first_move` setting may override).
//!
//! Moves are in the mover's numbering, as everywhere; the board keeps
//! pinned checkers in [`Board::pinned`]. This crate must never do I/O or
//! keep state between calls.

use bg_variant_api::engine::{Board, CHECKERS, Dice, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::search::{self, Steps};
use bg_variant_api::{
    Capabilities, Opening, OptionSpec, Options, Outcome, Setup, StateCodec, Transition, Variant,
    VariantError, VariantInfo, check_option_names, option_value,
};

/// The variant.
#[derive(Default)]
pub struct Plakoto;

/// The rules' options for one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Judge the mother after every move (true) or after the whole play.
    pub mother_immediate: bool,
    /// A side with checkers still on its own start does not lose to a
    /// pinned mother... (docs/rules.md §3.4's exception; off: a pinned mother loses).
    pub mother_exception: bool,
    /// Bearing off while one of the mover's checkers is pinned.
    pub bearoff_with_pinned: bool,
    pub cube: bool,
    /// The starter throws both dice afresh (true) or plays the opening dice.
    pub throw_again: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            mother_immediate: true,
            mother_exception: true,
            bearoff_with_pinned: false,
            cube: false,
            throw_again: true,
        }
    }
}

/// A game: the board (with pins) and the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlakotoState {
    pub board: Board,
    pub rules: Rules,
}

const START: u8 = 24;
const STATE_VERSION: u8 = 1;
const OPTIONS: [&str; 5] = [
    "mother_check",
    "mother_exception",
    "bearoff_with_pinned",
    "cube",
    "opening",
];

fn read_options(options: &Options) -> Result<Rules, VariantError> {
    check_option_names(options, &OPTIONS)?;
    Ok(Rules {
        mother_immediate: option_value(
            options,
            "mother_check",
            &["immediate", "end_of_turn"],
            "immediate",
        )? == "immediate",
        mother_exception: option_value(options, "mother_exception", &["on", "off"], "on")? == "on",
        bearoff_with_pinned: option_value(
            options,
            "bearoff_with_pinned",
            &["forbid", "allow"],
            "forbid",
        )? == "allow",
        cube: option_value(options, "cube", &["off", "on"], "off")? == "on",
        throw_again: option_value(
            options,
            "opening",
            &["throw_again", "use_die_off"],
            "throw_again",
        )? == "throw_again",
    })
}

/// The starting position: 15 on each side's 24-point.
pub fn start_board() -> Board {
    Board::from_points(&[(START, 15)], &[(START, 15)])
}

/// Free (movable) checkers of `seat` on its point `p`.
fn free(board: &Board, seat: Seat, p: u8) -> u8 {
    board.count(seat, p) - u8::from(board.is_pinned(seat, p))
}

fn set_pin(board: &mut Board, seat: Seat, p: u8, pinned: bool) {
    let bit = 1u32 << p;
    if pinned {
        board.pinned[seat.index()] |= bit;
    } else {
        board.pinned[seat.index()] &= !bit;
    }
}

/// Whether `seat`'s mother is pinned: one checker on its start, pinned.
fn pinned_mother(board: &Board, seat: Seat) -> bool {
    board.count(seat, START) == 1 && board.is_pinned(seat, START)
}

/// Whether `seat` has no free checker left on its own start.
fn left_start(board: &Board, seat: Seat) -> bool {
    free(board, seat, START) == 0
}

/// The game's result on `board` after a move of `mover`, if it is over.
fn outcome(board: &Board, mover: Seat, rules: &Rules) -> Option<Outcome> {
    let other = mover.other();
    if board.off(mover) == CHECKERS {
        let level = if board.off(other) == 0 { 2 } else { 1 };
        return Some(Outcome {
            by_bearing_off: true,
            ..win(mover, level, if level == 2 { "double" } else { "single" })
        });
    }
    let (mine, theirs) = (pinned_mother(board, mover), pinned_mother(board, other));
    if mine && theirs {
        return Some(Outcome {
            winner: None,
            level: 0,
            kind: "draw".into(),
            by_bearing_off: false,
        });
    }
    for (winner, loser_mother_pinned) in [(mover, theirs), (other, mine)] {
        if loser_mother_pinned && (!rules.mother_exception || left_start(board, winner)) {
            return Some(win(winner, 2, "mother"));
        }
    }
    None
}

fn win(winner: Seat, level: u32, kind: &str) -> Outcome {
    Outcome {
        winner: Some(winner),
        level,
        kind: kind.into(),
        by_bearing_off: false,
    }
}

/// The single-move rule (docs/rules.md §3.2-3.3) for one mover.
struct PlakotoSteps {
    seat: Seat,
    rules: Rules,
}

/// A search node: the board, and whether the game ended on the way.
#[derive(Clone, Copy, Debug)]
struct PNode {
    board: Board,
    over: bool,
}

impl PlakotoSteps {
    /// Where the mover may land on its point `to` (1..=24), and whether it
    /// pins a lone enemy checker there.
    fn landing(&self, board: &Board, to: u8) -> Option<bool> {
        let (me, them) = (self.seat, self.seat.other());
        let q = 25 - to;
        let mine = free(board, me, to);
        let theirs = board.count(them, q);
        if board.is_pinned(me, to) {
            return None; // one of theirs pins one of mine here: a block
        }
        if mine > 0 || theirs == 0 {
            return Some(false);
        }
        if theirs == 1 && !board.is_pinned(them, q) {
            return Some(true);
        }
        None
    }

    fn may_bear_off(&self, board: &Board) -> bool {
        let me = self.seat;
        board.all_home(me) && (self.rules.bearoff_with_pinned || board.pinned[me.index()] == 0)
    }

    /// The board after moving one free checker `from` → `to`.
    fn moved(&self, board: &Board, mv: Move, pins: bool) -> Board {
        let (me, them) = (self.seat, self.seat.other());
        let mut next = *board;
        next.checkers[me.index()][usize::from(mv.from)] -= 1;
        next.checkers[me.index()][usize::from(mv.to)] += 1;
        // The last pinner leaving frees the checker beneath.
        if free(&next, me, mv.from) == 0 && next.is_pinned(them, 25 - mv.from) {
            set_pin(&mut next, them, 25 - mv.from, false);
        }
        if pins {
            set_pin(&mut next, them, 25 - mv.to, true);
        }
        next
    }
}

impl Steps for PlakotoSteps {
    type Node = PNode;
    type Key = Board;

    fn for_each_step(&self, node: &PNode, die: u8, froms: u32, mut step: impl FnMut(Move, PNode)) {
        let board = &node.board;
        let me = self.seat;
        let bear_off = self.may_bear_off(board);
        let highest = (1..=24u8)
            .rev()
            .find(|&p| board.count(me, p) > 0)
            .unwrap_or(0);
        for from in (1..=24u8).rev() {
            if froms & (1 << from) == 0 || free(board, me, from) == 0 {
                continue;
            }
            let (to, pins) = if from > die {
                match self.landing(board, from - die) {
                    Some(pins) => (from - die, pins),
                    None => continue,
                }
            } else if bear_off && (from == die || from == highest) {
                (OFF, false)
            } else {
                continue;
            };
            let mv = Move::new(from, to);
            let next = self.moved(board, mv, pins);
            let over = if self.rules.mother_immediate {
                outcome(&next, me, &self.rules).is_some()
            } else {
                next.off(me) == CHECKERS
            };
            step(mv, PNode { board: next, over });
        }
    }

    fn is_finished(&self, node: &PNode) -> bool {
        node.over
    }

    // A move that ends the game completes the play (docs/rules.md §3.4, T20).
    fn ending_play_is_complete(&self) -> bool {
        true
    }

    fn key(&self, node: &PNode) -> Board {
        node.board
    }

    fn write_board(&self, key: &Board, _play: &Play, out: &mut Board) {
        *out = *key;
    }

    // Pins made and freed on the way make the order of moves matter.
    fn ordered_doubles(&self) -> bool {
        false
    }

    fn commuting_moves(&self) -> bool {
        false
    }
}

fn check_board(board: &Board) -> Result<(), VariantError> {
    board
        .validate()
        .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
    if board.on_bar(Seat::White) + board.on_bar(Seat::Black) > 0 {
        return Err(VariantError::InvalidInput("Plakoto has no bar".into()));
    }
    Ok(())
}

fn setup(board: Board, rules: Rules) -> Setup<PlakotoState> {
    Setup {
        state: PlakotoState { board, rules },
        opening: if rules.throw_again {
            Opening::ThrowAgain
        } else {
            Opening::PlayOpeningDice
        },
        cube: rules.cube,
        // Tavli: the previous winner starts the next game (docs/rules.md §3.1).
        first_move: Some(bg_variant_api::engine::game::FirstMove::Winner),
    }
}

impl Variant for Plakoto {
    type State = PlakotoState;

    fn info(&self) -> VariantInfo {
        let option = |name: &str, description: &str, allowed: &[&str]| OptionSpec {
            name: name.into(),
            description: description.into(),
            allowed_values: allowed.iter().map(|s| s.to_string()).collect(),
            default_value: allowed[0].into(),
        };
        VariantInfo {
            name: "plakoto".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Plakoto (Greek tavli): a lone checker is pinned instead of hit; pinning the mother checker wins."
                .into(),
            options: vec![
                option(
                    "mother_check",
                    "When a pinned mother is judged: after every move, or after the whole play.",
                    &["immediate", "end_of_turn"],
                ),
                option(
                    "mother_exception",
                    "on: a side with checkers still on its own start does not win by pinning the other's mother until they leave; off: a pinned mother loses at once.",
                    &["on", "off"],
                ),
                option(
                    "bearoff_with_pinned",
                    "forbid: no bearing off while one of your checkers is pinned; allow: pinned checkers in the home board count as home.",
                    &["forbid", "allow"],
                ),
                option("cube", "The doubling cube (not used in traditional Plakoto).", &["off", "on"]),
                option(
                    "opening",
                    "throw_again: the winner of the opening throw throws both dice afresh; use_die_off: plays the opening dice.",
                    &["throw_again", "use_die_off"],
                ),
            ],
            // No triple in Plakoto (docs/rules.md §3.5): a game is worth 1 or 2.
            max_win_level: 2,
            win_kinds: vec!["single".into(), "double".into()],
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::CUBE
            .union(Capabilities::DRAWS)
            .union(Capabilities::SETUP_POSITION)
    }

    fn new_game(&self, options: &Options) -> Result<Setup<PlakotoState>, VariantError> {
        Ok(setup(start_board(), read_options(options)?))
    }

    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<PlakotoState>, VariantError> {
        check_board(board)?;
        Ok(setup(*board, read_options(options)?))
    }

    fn board(&self, state: &PlakotoState) -> Board {
        state.board
    }

    fn legal_plays(&self, state: &PlakotoState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        let steps = PlakotoSteps {
            seat,
            rules: state.rules,
        };
        let start = PNode {
            board: state.board,
            over: false,
        };
        search::legal_plays(&steps, start, dice, 4, out);
    }

    fn play_result(
        &self,
        state: &PlakotoState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        replay(state, seat, play)
    }

    fn after_play(
        &self,
        state: &PlakotoState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<PlakotoState> {
        let next = PlakotoState {
            board: chosen.result,
            rules: state.rules,
        };
        let mut transition = Transition::to(next);
        transition.outcome = outcome(&next.board, seat, &state.rules);
        transition
    }

    fn concede(&self, state: &PlakotoState, loser: Seat) -> Outcome {
        let level = if state.board.off(loser) == 0 { 2 } else { 1 };
        win(
            loser.other(),
            level,
            if level == 2 { "double" } else { "single" },
        )
    }
}

impl StateCodec for PlakotoState {
    fn encode(&self) -> Vec<u8> {
        let state = self;
        let mut bytes = vec![STATE_VERSION];
        bytes.extend_from_slice(&state.board.checkers[0]);
        bytes.extend_from_slice(&state.board.checkers[1]);
        bytes.extend_from_slice(&state.board.pinned[0].to_le_bytes());
        bytes.extend_from_slice(&state.board.pinned[1].to_le_bytes());
        let r = state.rules;
        bytes.push(
            u8::from(r.mother_immediate)
                | u8::from(r.mother_exception) << 1
                | u8::from(r.bearoff_with_pinned) << 2
                | u8::from(r.cube) << 3
                | u8::from(r.throw_again) << 4,
        );
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<PlakotoState, VariantError> {
        if bytes.len() != 62 || bytes[0] != STATE_VERSION {
            return Err(VariantError::InvalidInput(
                "not a Plakoto game state".into(),
            ));
        }
        let mut board = Board::EMPTY;
        board.checkers[0].copy_from_slice(&bytes[1..27]);
        board.checkers[1].copy_from_slice(&bytes[27..53]);
        board.pinned[0] = u32::from_le_bytes(bytes[53..57].try_into().expect("4 bytes"));
        board.pinned[1] = u32::from_le_bytes(bytes[57..61].try_into().expect("4 bytes"));
        check_board(&board)?;
        let flags = bytes[61];
        let rules = Rules {
            mother_immediate: flags & 1 != 0,
            mother_exception: flags & 2 != 0,
            bearoff_with_pinned: flags & 4 != 0,
            cube: flags & 8 != 0,
            throw_again: flags & 16 != 0,
        };
        Ok(PlakotoState { board, rules })
    }
}

/// A play as written by a player, move by move: each move takes a free
/// checker and lands where Plakoto allows, pinning a lone enemy checker.
fn replay(state: &PlakotoState, seat: Seat, play: &Play) -> Result<Board, VariantError> {
    let steps = PlakotoSteps {
        seat,
        rules: state.rules,
    };
    let mut board = state.board;
    for &mv in play.moves() {
        if mv.from > 24 || mv.from == 0 || mv.from <= mv.to {
            return Err(VariantError::IllegalPlay(format!(
                "{mv} does not move forward"
            )));
        }
        if free(&board, seat, mv.from) == 0 {
            return Err(VariantError::IllegalPlay(format!(
                "{mv}: no free checker to move"
            )));
        }
        let pins = if mv.to == OFF {
            false
        } else {
            steps.landing(&board, mv.to).ok_or_else(|| {
                VariantError::IllegalPlay(format!("{mv}: point {} is blocked", mv.to))
            })?
        };
        board = steps.moved(&board, mv, pins);
    }
    Ok(board)
}

/// The variant called directly: no plugin file, no host.
#[cfg(test)]
mod tests {
    use super::*;

    /// X (white) and O (black), both in X's numbering.
    fn position(x: &[(u8, u8)], o: &[(u8, u8)]) -> PlakotoState {
        let o_own: Vec<(u8, u8)> = o.iter().map(|&(p, n)| (25 - p, n)).collect();
        PlakotoState {
            board: Board::from_points(x, &o_own),
            rules: Rules::default(),
        }
    }

    fn play(
        state: &PlakotoState,
        d1: u8,
        d2: u8,
        play: &str,
    ) -> Result<Transition<PlakotoState>, VariantError> {
        let dice = Dice::new(d1, d2).unwrap();
        bg_variant_api::apply_play(&Plakoto, state, Seat::White, dice, &play.parse().unwrap())
    }

    /// T33, and the name of each level: a level-2 win is a "double",
    /// played out or conceded alike.
    #[test]
    fn a_level_two_win_is_a_double_played_out_or_conceded() {
        assert_eq!(Plakoto.info().win_kinds, ["single", "double"]);
        let gammoned = position(&[(1, 1)], &[(13, 15)]);
        let won = play(&gammoned, 2, 1, "1/off").unwrap().outcome.unwrap();
        assert_eq!((won.level, won.kind.as_str()), (2, "double"));
        let conceded = Plakoto.concede(&gammoned, Seat::Black);
        assert_eq!((conceded.level, conceded.kind.as_str()), (2, "double"));
    }

    /// A play is legal only if it reaches a legal result; one that does
    /// not is refused as the player's mistake and changes nothing.
    #[test]
    fn a_play_that_reaches_no_legal_result_is_illegal() {
        let start = Plakoto.new_game(&Options::new()).unwrap().state;
        // 24/13 is 6-5 combined; 24/12 is no play of 6-5.
        let refused = play(&start, 6, 5, "24/12").unwrap_err();
        assert!(matches!(refused, VariantError::IllegalPlay(_)), "{refused}");
        let moved = play(&start, 6, 5, "24/18 24/19").unwrap();
        assert_eq!(moved.state.board.count(Seat::White, 24), 13);
        assert!(moved.outcome.is_none());
    }
}
