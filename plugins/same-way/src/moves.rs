//! The legal plays (docs/nardy-fevga.md §1.3-§1.4, §2.3-§2.6, §3.3-§3.6):
//! single moves one die at a time, each judged on the position it leaves
//! (closed points, the head rule, the block rules, the first checker's
//! journey, bearing off), then the shared search's dice obligations (most
//! dice, then the largest total, merged by result), then Fevga's
//! unblocking duty on whole plays.
//!
//! Every point is in the mover's numbering: his start is 24, his home
//! 1-6; the opponent's own point `q` is the mover's `Geometry::SameWay
//! .facing(q)`.

use bg_variant_api::engine::{Board, CHECKERS, Dice, Geometry, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::search::{self, Steps};

use crate::{Game, Rules};

/// The start point of each side (the head, the mother), in its own
/// numbering.
pub const START: u8 = 24;

/// The other side's checkers on the mover's point `p`.
#[inline]
pub fn theirs(board: &Board, me: Seat, p: u8) -> u8 {
    board.count(me.other(), Geometry::SameWay.facing(p))
}

/// Whether the mover's point `p` holds an opposing checker (it may not
/// land or touch down there).
#[inline]
fn closed(board: &Board, me: Seat, p: u8) -> bool {
    theirs(board, me, p) > 0
}

/// The mover's points in the order the opponent travels them: from the
/// opponent's start (the mover's 12) down to 1, then 24 down to 13.
const THEIR_TRACK: [u8; 24] = [
    12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,
];

/// Where the mover's point `p` lies on the opponent's track (0 its start).
#[inline]
fn along_their_track(p: u8) -> usize {
    usize::from(24 - Geometry::SameWay.facing(p))
}

/// Whether the mover holds a block the rules forbid (§2.5): six or more
/// points in a row along the opponent's track, with no opposing checker
/// ahead of the run's front (nor borne off).
pub fn illegal_block(board: &Board, me: Seat) -> bool {
    if board.off(me.other()) > 0 {
        return false;
    }
    // The furthest any opposing checker has got along its track.
    let furthest = (1..=24u8)
        .filter(|&p| theirs(board, me, p) > 0)
        .map(along_their_track)
        .max();
    let mut run = 0;
    for (i, &p) in THEIR_TRACK.iter().enumerate() {
        if board.count(me, p) > 0 {
            run += 1;
            let run_ends = THEIR_TRACK
                .get(i + 1)
                .is_none_or(|&next| board.count(me, next) == 0);
            if run_ends && run >= 6 && furthest.is_none_or(|f| f <= i) {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Whether the mover holds all six points of his start quarter, 19-24
/// (Fevga, §3.5 a).
pub fn start_quarter_full(board: &Board, me: Seat) -> bool {
    (19..=24).all(|p| board.count(me, p) > 0)
}

/// Whether the mover is released in Fevga (§3.4): a checker of his has
/// got to the opponent's start (his 12; strictly past it, his 11, with
/// `release=pass`), or has been borne off.
pub fn released(board: &Board, me: Seat, rules: &Rules) -> bool {
    let reach = if rules.release_pass { 11 } else { 12 };
    board.off(me) > 0 || (1..=reach).any(|p| board.count(me, p) > 0)
}

/// Whether every checker of `me` is home (1-6) or off.
fn all_home(board: &Board, me: Seat) -> bool {
    (7..=24).all(|p| board.count(me, p) == 0)
}

/// A position during the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub board: Board,
    /// Moves started on the head this turn (long nardy).
    pub head_moves: u8,
}

/// One side's single moves for one turn.
pub struct SameWaySteps {
    pub seat: Seat,
    pub rules: Rules,
    /// How many moves may start on the head this turn (long nardy).
    pub head_limit: u8,
}

impl SameWaySteps {
    /// The rules of `seat`'s turn from `board` with `dice`.
    pub fn new(board: &Board, seat: Seat, dice: Dice, rules: Rules) -> SameWaySteps {
        SameWaySteps {
            seat,
            rules,
            head_limit: head_limit(board, seat, dice, &rules),
        }
    }

    /// Whether `board`, just reached by a single move, breaks a rule
    /// judged after every move.
    fn breaks(&self, board: &Board) -> bool {
        !self.rules.block_at_end && self.breaks_at_end(board)
    }

    /// Whether `board` breaks a rule judged on a position (§2.5, §3.5 a).
    fn breaks_at_end(&self, board: &Board) -> bool {
        let me = self.seat;
        let block = match self.rules.game {
            Game::LongNardy => true,
            Game::Fevga => self.rules.nardy_block,
        };
        (block && illegal_block(board, me))
            || (self.rules.game == Game::Fevga
                && self.rules.start_quarter
                && board.count(me, START) > 0
                && start_quarter_full(board, me))
    }

    /// The points a single move may start from (Fevga's first checker,
    /// §3.4): all of them once released; else the runner's (the one
    /// checker off the start: on the opponent's start itself with
    /// `release=pass`), or the start while no checker has left it.
    fn sources(&self, board: &Board) -> u32 {
        let me = self.seat;
        if self.rules.game != Game::Fevga || released(board, me, &self.rules) {
            return search::ALL_POINTS;
        }
        match (1..START).find(|&p| board.count(me, p) > 0) {
            Some(runner) => 1 << runner,
            None => 1 << START,
        }
    }
}

/// How many checkers may leave the head this turn (§2.4): one, or two on
/// the side's first turn with one of the doubles the rules name (and,
/// with `head_exception=strict`, only when a lone checker is stopped by
/// the opponent's head).
fn head_limit(board: &Board, me: Seat, dice: Dice, rules: &Rules) -> u8 {
    if rules.game != Game::LongNardy {
        return CHECKERS;
    }
    let first_turn = board.count(me, START) == CHECKERS;
    if !(first_turn && dice.is_double() && rules.head_doubles.contains(&dice.d1)) {
        return 1;
    }
    if rules.head_strict && !stopped_by_their_head(board, me, dice.d1) {
        return 1;
    }
    2
}

/// Whether a lone checker leaving the head with four moves of `d` would
/// be stopped by the opponent's head (the mover's 12) before any other
/// closed point (`head_exception=strict`): with 5s it jumps over the head,
/// with 1s and 2s it never reaches it.
fn stopped_by_their_head(board: &Board, me: Seat, d: u8) -> bool {
    for k in 1..=4u8 {
        let p = i32::from(START) - i32::from(k * d);
        if p == 12 {
            return true;
        }
        if p < 12 || closed(board, me, p as u8) {
            return false;
        }
    }
    false
}

impl Steps for SameWaySteps {
    type Node = Node;
    type Key = Board;

    fn for_each_step(&self, node: &Node, die: u8, froms: u32, mut step: impl FnMut(Move, Node)) {
        let board = &node.board;
        let me = self.seat;
        let froms = froms & self.sources(board);
        let home = all_home(board, me);
        let highest = (1..=24u8).rev().find(|&p| board.count(me, p) > 0);
        for from in (1..=24u8).rev() {
            if froms & (1 << from) == 0 || board.count(me, from) == 0 {
                continue;
            }
            if from == START && node.head_moves >= self.head_limit {
                continue;
            }
            let to = if from > die {
                if closed(board, me, from - die) {
                    continue;
                }
                from - die
            } else if home && (from == die || Some(from) == highest) {
                OFF
            } else {
                continue;
            };
            let mut next = *board;
            next.checkers[me.index()][usize::from(from)] -= 1;
            next.checkers[me.index()][usize::from(to)] += 1;
            if to != OFF && self.breaks(&next) {
                continue;
            }
            let head_moves = node.head_moves + u8::from(from == START);
            step(
                Move::new(from, to),
                Node {
                    board: next,
                    head_moves,
                },
            );
        }
    }

    fn is_finished(&self, node: &Node) -> bool {
        node.board.off(self.seat) == CHECKERS
    }

    fn key(&self, node: &Node) -> Board {
        node.board
    }

    fn write_board(&self, key: &Board, _play: &Play, out: &mut Board) {
        *out = *key;
    }

    // The head count, the first checker's journey and the block rules
    // depend on the order of the moves.
    fn ordered_doubles(&self) -> bool {
        false
    }

    fn commuting_moves(&self) -> bool {
        false
    }

    fn accepts(&self, node: &Node) -> bool {
        !(self.rules.block_at_end && self.breaks_at_end(&node.board))
    }

    fn judges_sequences(&self) -> bool {
        self.rules.block_at_end
    }
}

/// Every legal play of `seat` with `dice` from `board` under `rules`.
pub fn legal_plays(board: &Board, seat: Seat, dice: Dice, rules: &Rules, out: &mut Vec<LegalPlay>) {
    let steps = SameWaySteps::new(board, seat, dice, *rules);
    let start = Node {
        board: *board,
        head_moves: 0,
    };
    search::legal_plays(&steps, start, dice, 4, out);
    if rules.game == Game::Fevga && rules.trap_duty {
        unblocking_duty(board, seat, out);
    }
}

/// Fevga's unblocking duty (§3.5 b): when every opposing checker on the
/// board stands on one point and the mover holds the six points in front
/// of it (along the opponent's track), only the plays that open one of
/// them stay, if there is one; else the duty lapses for the turn.
fn unblocking_duty(board: &Board, me: Seat, plays: &mut Vec<LegalPlay>) {
    let occupied: Vec<u8> = (1..=24u8).filter(|&p| theirs(board, me, p) > 0).collect();
    let [trapped] = occupied[..] else {
        return;
    };
    let at = along_their_track(trapped);
    let Some(wall) = THEIR_TRACK.get(at + 1..at + 7) else {
        return;
    };
    if !wall.iter().all(|&p| board.count(me, p) > 0) {
        return;
    }
    let opens = |lp: &LegalPlay| wall.iter().any(|&p| lp.result.count(me, p) == 0);
    if plays.iter().any(opens) {
        plays.retain(opens);
    }
}
