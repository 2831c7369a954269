//! The single-move rule of standard backgammon (docs/rules.md §1.3 rules 1-4), in
//! the form the shared play search wants.
//!
//! Legal-play generation is the hot path of the whole service, so a
//! search node is packed into one `u128` ([`Node`]): only the mover's
//! checkers move during a turn, and the opponent's board changes only by
//! the blots the mover hits. Copying, comparing and hashing a node are
//! then single integer operations.

use bg_variant_api::VariantError;
use bg_variant_api::engine::{BAR, Board, CHECKERS, Move, OFF, Play, Seat};
use bg_variant_api::search::{ALL_POINTS, Steps};

/// A position during a turn, as seen by the mover: bits `4p..4p+4` count
/// the mover's checkers on its slot `p` (0 = off, 1..=24 points, 25 =
/// bar); bit `104 + q - 1` says the opponent's blot on its point `q` has
/// been hit. The opponent's starting checkers are in [`StandardSteps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Node(pub u128);

const NIBBLE: u128 = 0xF;
/// `ONE[p]`: one checker on slot `p`. Tables, because variable 128-bit
/// shifts cost several instructions and this is the innermost loop.
const ONE: [u128; 26] = {
    let mut table = [0u128; 26];
    let mut p = 0;
    while p < 26 {
        table[p] = 1 << (4 * p);
        p += 1;
    }
    table
};
/// `HIT[q]`: the opponent's blot on its point `q` (1..=24) was hit.
const HIT: [u128; 25] = {
    let mut table = [0u128; 25];
    let mut q = 1;
    while q < 25 {
        table[q] = 1 << (104 + q - 1);
        q += 1;
    }
    table
};
const HIT_BASE: u32 = 104;
/// Bit `4p` for each point `p` in 1..=24 (a mask over [`Node::occupied`]).
const POINT_BITS: u128 = 0x0001_1111_1111_1111_1111_1111_1110;
/// `SPREAD[b]`: bit `i` of the byte `b` moved to bit `4i`.
const SPREAD: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b & (1 << i) != 0 {
                table[b] |= 1 << (4 * i);
            }
            i += 1;
        }
        b += 1;
    }
    table
};

/// A `froms` mask (bit `p` for point `p`) in [`Node::occupied`]'s form
/// (bit `4p`).
#[inline(always)]
fn spread(froms: u32) -> u128 {
    let [b0, b1, b2, b3] = froms.to_le_bytes();
    u128::from(SPREAD[usize::from(b0)])
        | u128::from(SPREAD[usize::from(b1)]) << 32
        | u128::from(SPREAD[usize::from(b2)]) << 64
        | u128::from(SPREAD[usize::from(b3)]) << 96
}
/// Bits of the slots 7..=25: zero when every checker is home.
const OUTSIDE_HOME: u128 = ((1u128 << (4 * 26)) - 1) & !((1u128 << (4 * 7)) - 1);
/// Bits of the slots 1..=25: checkers not yet borne off.
const IN_PLAY: u128 = ((1u128 << (4 * 26)) - 1) & !NIBBLE;

impl Node {
    pub fn new(me: &[u8; 26]) -> Node {
        // Eight counts (each 0..=15) at a time, from bytes to nibbles.
        #[inline(always)]
        fn nibbles(bytes: [u8; 8]) -> u128 {
            let mut x = u64::from_le_bytes(bytes) & 0x0F0F_0F0F_0F0F_0F0F;
            x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
            x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
            x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
            u128::from(x)
        }
        let word = |at: usize| -> [u8; 8] {
            let mut bytes = [0u8; 8];
            let end = (at + 8).min(26);
            bytes[..end - at].copy_from_slice(&me[at..end]);
            bytes
        };
        Node(
            nibbles(word(0))
                | nibbles(word(8)) << 32
                | nibbles(word(16)) << 64
                | nibbles(word(24)) << 96,
        )
    }

    /// Checkers of the mover on slot `p`.
    #[inline(always)]
    pub fn count(self, p: u8) -> u8 {
        ((self.0 >> (4 * u32::from(p))) & NIBBLE) as u8
    }

    #[inline(always)]
    pub fn was_hit(self, opp_point: u8) -> bool {
        self.0 & (1u128 << (HIT_BASE + u32::from(opp_point) - 1)) != 0
    }

    /// Whether every checker of the mover still in play is home (1..=6).
    #[inline(always)]
    pub fn all_home(self) -> bool {
        self.0 & OUTSIDE_HOME == 0
    }

    /// Bit `4p` set for each point `p` in 1..=24 holding a mover's checker.
    #[inline(always)]
    pub fn occupied(self) -> u128 {
        let x = self.0;
        (x | (x >> 1) | (x >> 2) | (x >> 3)) & POINT_BITS
    }

    /// The mover's highest occupied slot, 0 if none.
    #[inline(always)]
    pub fn highest(self) -> u8 {
        let bits = self.0 & IN_PLAY;
        if bits == 0 {
            return 0;
        }
        ((127 - bits.leading_zeros()) / 4) as u8
    }
}

/// Standard rules for one mover, for [`bg_variant_api::search::legal_plays`].
pub struct StandardSteps {
    pub seat: Seat,
    /// The board when the turn began.
    pub start: Board,
    /// The opponent's checkers when the turn began, in its own numbering
    /// (private: `movable` is worked out from it).
    opp: [u8; 26],
    /// `movable[d]`: bit `4p` for each point `p` from which a die `d`
    /// lands on a point the opponent does not hold (rule 2), in the
    /// form of [`Node::occupied`]. Fixed for the turn: the opponent only
    /// loses checkers while the mover moves.
    movable: [u128; 7],
}

impl StandardSteps {
    /// The rules for `seat` moving on `board`, and the starting node.
    pub fn new(board: &Board, seat: Seat) -> (StandardSteps, Node) {
        let opp = board.checkers[seat.other().index()];
        // Bit 4q for each of the mover's points q it may land on.
        let mut open = 0u128;
        for q in 1..=24usize {
            if opp[25 - q] < 2 {
                open |= 1 << (4 * q);
            }
        }
        let mut movable = [0u128; 7];
        for (die, mask) in movable.iter_mut().enumerate().skip(1) {
            *mask = (open << (4 * die)) & POINT_BITS;
        }
        let steps = StandardSteps {
            seat,
            start: *board,
            opp,
            movable,
        };
        (steps, Node::new(&board.checkers[seat.index()]))
    }

    /// Whether the mover may land on its point `to` (1..=24): it is not
    /// held by two or more enemy checkers (rule 2).
    #[inline(always)]
    pub fn is_open(&self, to: u8) -> bool {
        self.opp[usize::from(25 - to)] < 2
    }

    /// The node after moving one checker `from` → `to`, hitting a blot.
    #[inline(always)]
    pub fn moved(&self, node: Node, from: u8, to: u8) -> Node {
        let mut bits = node.0 - ONE[usize::from(from)] + ONE[usize::from(to)];
        if to != OFF {
            let q = usize::from(25 - to);
            if self.opp[q] == 1 {
                bits |= HIT[q];
            }
        }
        Node(bits)
    }

    /// Whether moving to `to` hits a blot.
    #[inline(always)]
    pub fn hits(&self, node: Node, to: u8) -> bool {
        to != OFF && self.opp[usize::from(25 - to)] == 1 && !node.was_hit(25 - to)
    }

    /// Calls `step` for every legal single move of `die` (docs/rules.md §1.3 rules
    /// 1-3) from a starting point in `froms` (see [`Steps::for_each_step`]),
    /// highest first.
    #[inline(always)]
    pub fn for_each_move(&self, node: Node, die: u8, froms: u32, mut step: impl FnMut(Move)) {
        // Rule 1: bar first.
        if node.count(BAR) > 0 {
            if froms & (1 << BAR) != 0 && self.is_open(BAR - die) {
                step(Move::new(BAR, BAR - die));
            }
            return;
        }
        let mut occupied = node.occupied();
        if froms != ALL_POINTS {
            occupied &= spread(froms);
        }
        // Rule 2: moves within the board land where the opponent does not
        // hold two or more. Points 16..=24 from the high word, then 1..=15
        // from the low one (64-bit scans are cheaper than 128-bit ones),
        // highest first.
        let moves = occupied & self.movable[usize::from(die)];
        for (word, base) in [((moves >> 64) as u64, 16u8), (moves as u64, 0)] {
            let mut bits = word;
            while bits != 0 {
                let bit = 63 - bits.leading_zeros();
                bits ^= 1 << bit;
                let from = base + (bit / 4) as u8;
                step(Move::new(from, from - die));
            }
        }
        // Rule 3: bearing off, all home, with the exact die or a larger
        // one from the rearmost checker: at most one point, below the die.
        if node.all_home() {
            let from = node.highest().min(die);
            if from > 0 && occupied & (1 << (4 * u32::from(from))) != 0 {
                step(Move::new(from, OFF));
            }
        }
    }

    /// Writes the board after `play`, from the board the turn began with,
    /// into `out`.
    #[inline(always)]
    pub fn write_board_after(&self, play: &Play, out: &mut Board) {
        *out = self.start;
        for &mv in play.moves() {
            move_checker(out, self.seat, mv);
        }
    }
}

/// Moves one checker of `seat`, sending a blot where it lands to the bar.
#[inline(always)]
fn move_checker(board: &mut Board, seat: Seat, mv: Move) {
    let (me, opp) = (seat.index(), seat.other().index());
    board.checkers[me][usize::from(mv.from)] -= 1;
    board.checkers[me][usize::from(mv.to)] += 1;
    if mv.to != OFF {
        let target = usize::from(25 - mv.to);
        if board.checkers[opp][target] == 1 {
            board.checkers[opp][target] = 0;
            board.checkers[opp][usize::from(BAR)] += 1;
        }
    }
}

impl Steps for StandardSteps {
    type Node = Node;
    type Key = Node;

    #[inline(always)]
    fn for_each_step(&self, node: &Node, die: u8, froms: u32, mut step: impl FnMut(Move, Node)) {
        let node = *node;
        self.for_each_move(node, die, froms, |mv| {
            step(mv, self.moved(node, mv.from, mv.to))
        });
    }

    #[inline(always)]
    fn is_finished(&self, node: &Node) -> bool {
        node.count(OFF) == CHECKERS
    }

    #[inline(always)]
    fn key(&self, node: &Node) -> Node {
        *node
    }

    fn write_board(&self, _key: &Node, play: &Play, out: &mut Board) {
        self.write_board_after(play, out);
    }
}

/// Applies a play as written by a player, move by move, each from→to
/// moving one checker and hitting a blot where it lands (a move spanning
/// both dice hits nothing on the way: write each hit, `24/18*/13`). Only
/// checks that each move is physically possible; whether the result is
/// legal is decided by comparing it with the legal plays.
pub fn apply_moves(board: &Board, seat: Seat, play: &Play) -> Result<Board, VariantError> {
    let (me, opp) = (seat.index(), seat.other().index());
    let mut board = *board;
    for &mv in play.moves() {
        if mv.from > BAR || mv.from <= mv.to || mv.to > 24 {
            return Err(VariantError::IllegalPlay(format!(
                "{mv} does not move forward"
            )));
        }
        if board.checkers[me][usize::from(mv.from)] == 0 {
            return Err(VariantError::IllegalPlay(format!(
                "{mv}: no checker to move"
            )));
        }
        if mv.to != OFF && board.checkers[opp][usize::from(25 - mv.to)] >= 2 {
            return Err(VariantError::IllegalPlay(format!(
                "{mv}: point {} is blocked",
                mv.to
            )));
        }
        move_checker(&mut board, seat, mv);
    }
    Ok(board)
}
