//! The legal-play search every variant on the standard board shares.
//!
//! docs/rules.md §1.3 (after gnubg's `GenerateMovesSub`/`SaveMoves`):
//! enumerate every sequence of single moves the dice allow, keep those
//! using the most dice, among them those using the largest total of die
//! values (the "larger die" rule), and list each resulting position once.
//! A sequence that ends the game is complete whatever dice remain: it is
//! kept even if other sequences use more dice, and does not displace them.
//!
//! A variant supplies its single-move rule through [`Steps`]; the search
//! does the rest. Variant-specific rules that depend on the whole sequence
//! (Caucasian's "no hit and hide") live in the variant's [`Steps::Node`],
//! and results are merged by the board they reach, not by node.

use std::hash::{Hash, Hasher};

use bg_engine::{Board, Dice, LegalPlay, Move, Play};

/// A variant's single-move rule, as the search sees it.
pub trait Steps {
    /// A position during the search: the board plus anything the variant
    /// tracks within a turn. Copied at every step: keep it small.
    type Node: Copy;
    /// What identifies the board a node stands for: two plays whose final
    /// keys are equal are one play.
    type Key: Copy + Eq + Hash;

    /// Calls `step(move, next)` for every legal single move of one die of
    /// value `die` from `node` whose starting point is in `froms` (bit `p`
    /// for point `p`, bit 25 for the bar; [`ALL_POINTS`] means no limit).
    /// Visit higher starting points first.
    fn for_each_step(
        &self,
        node: &Self::Node,
        die: u8,
        froms: u32,
        step: impl FnMut(Move, Self::Node),
    );

    /// Whether the game is over at `node` (the rest of the dice are void).
    fn is_finished(&self, node: &Self::Node) -> bool;

    /// Whether a play that ends the game is legal even when another play
    /// uses more dice. Standard rules: no. As in gnubg (`SaveMoves` keeps
    /// only the plays with the most dice), a last checker on the 3-point
    /// with 3-1 and a blot on the 2-point must hit first (3/2*/off), not
    /// bear off with the 3 alone. Plakoto says yes (docs/rules.md §3.4, T20:
    /// pinning the mother with one die wins at once).
    fn ending_play_is_complete(&self) -> bool {
        false
    }

    fn key(&self, node: &Self::Node) -> Self::Key;

    /// Writes the board of a final position into `out`, given its key and
    /// the play that reached it from the start (asked once per distinct
    /// result; use whichever is cheaper). `out` is the result slot of the
    /// legal play itself, so a board built in place is never copied.
    fn write_board(&self, key: &Self::Key, play: &Play, out: &mut Board);

    /// Whether the moves of a double may be searched in non-increasing
    /// order of their starting points, as gnubg does. True when the order
    /// of a double's moves never changes which final positions are
    /// reachable; a variant whose rules depend on the order returns false.
    fn ordered_doubles(&self) -> bool {
        true
    }

    /// Whether `node`, reached by the sequence so far, may end the turn.
    /// A variant whose rules judge whole sequences (Caucasian: a hitter
    /// must not end hidden) refuses some; such a variant also returns true
    /// from [`judges_sequences`](Self::judges_sequences).
    fn accepts(&self, node: &Self::Node) -> bool {
        let _ = node;
        true
    }

    /// Whether [`accepts`](Self::accepts) can refuse. The search then
    /// offers every accepted prefix of a sequence as a play too (the most
    /// dice rule keeps only the longest), so a die whose every use would
    /// break the rule is simply not played.
    fn judges_sequences(&self) -> bool {
        false
    }

    /// Whether two moves by different checkers can always be swapped
    /// without changing legality once both are legal from the start
    /// (standard rules: yes). The search then skips the second order of a
    /// non-double where it can only repeat the first.
    fn commuting_moves(&self) -> bool {
        true
    }
}

const EMPTY_PLAY: LegalPlay = LegalPlay {
    play: Play::EMPTY,
    result: Board::EMPTY,
};

/// A `froms` mask allowing every starting point and the bar.
pub const ALL_POINTS: u32 = (1 << 26) - 2;

/// The starting points at or below `point`.
#[inline(always)]
pub fn points_up_to(point: u8) -> u32 {
    ALL_POINTS & ((2u32 << point) - 1)
}

/// The die values of a throw, and how many moves it gives: a double gives
/// `moves_per_double` (four on the standard board, two in tric-trac).
pub fn dice_values(dice: Dice, moves_per_double: usize) -> ([u8; 4], usize) {
    if dice.is_double() {
        ([dice.d1; 4], moves_per_double.min(4))
    } else {
        ([dice.d1, dice.d2, 0, 0], 2)
    }
}

/// Fills `out` with the legal plays from `start` (docs/rules.md §1.3): most dice,
/// then largest total, merged by result. With no move possible, the only
/// play is the empty play. Plays come in the order the search finds them.
pub fn legal_plays<S: Steps>(
    steps: &S,
    start: S::Node,
    dice: Dice,
    moves_per_double: usize,
    out: &mut Vec<LegalPlay>,
) {
    legal_plays_in(
        &mut Buffers::default(),
        steps,
        start,
        dice,
        moves_per_double,
        out,
    );
}

/// Memory the search reuses between calls. A variant on the hot path keeps
/// one per thread (a `thread_local!` of its own concrete type) and calls
/// [`legal_plays_in`].
pub struct Buffers<S: Steps> {
    leaves: Vec<(S::Key, Play)>,
    /// Plays that end the game: complete whatever dice remain.
    finished: Vec<(S::Key, Play)>,
    /// Open-addressing index over `leaves` by key: 0 is empty, else index + 1.
    table: Vec<u32>,
}

impl<S: Steps> Default for Buffers<S> {
    fn default() -> Self {
        Buffers {
            leaves: Vec::with_capacity(64),
            finished: Vec::new(),
            table: vec![0; 256],
        }
    }
}

/// [`legal_plays`] with reused buffers.
pub fn legal_plays_in<S: Steps>(
    buffers: &mut Buffers<S>,
    steps: &S,
    start: S::Node,
    dice: Dice,
    moves_per_double: usize,
    out: &mut Vec<LegalPlay>,
) {
    buffers.reset();
    buffers.finished.clear();
    let mut search = Search {
        steps,
        best: (0, 0),
        buffers,
        play: Play::EMPTY,
        skip_from: 0,
    };
    if dice.is_double() {
        let (values, count) = dice_values(dice, moves_per_double);
        search.run(
            &start,
            &values[..count],
            0,
            steps.ordered_doubles(),
            ALL_POINTS,
        );
    } else {
        search.run(&start, &[dice.d1, dice.d2], 0, false, ALL_POINTS);
        if steps.commuting_moves() {
            // Points from which the first die could move at the start: in
            // the other order, a second move from one of them by another
            // checker only repeats a play already found.
            let mut first: u32 = 0;
            steps.for_each_step(&start, dice.d1, ALL_POINTS, |mv, _| first |= 1 << mv.from);
            search.skip_from = first;
        }
        search.run(&start, &[dice.d2, dice.d1], 0, false, ALL_POINTS);
    }
    // Where a play that ends the game is complete whatever dice remain
    // (docs/rules.md §3.4), it joins the plays kept, unless one reached the same
    // position.
    for (key, play) in std::mem::take(&mut buffers.finished) {
        buffers.insert(key, play);
    }
    out.clear();
    out.reserve(buffers.leaves.len());
    for (key, play) in &buffers.leaves {
        // Each field is written in its slot: a legal play built aside and
        // then copied in stalls on its own just-written bytes (store
        // forwarding), which once cost a quarter of the whole search.
        out.push(EMPTY_PLAY);
        let slot = out.last_mut().expect("just pushed");
        slot.play = *play;
        steps.write_board(key, play, &mut slot.result);
    }
}

struct Search<'a, S: Steps> {
    steps: &'a S,
    /// (dice used, total of their values) of the plays kept so far.
    best: (usize, u32),
    buffers: &'a mut Buffers<S>,
    /// The sequence being explored.
    play: Play,
    /// In the second order of a non-double: second moves from these
    /// points (by another checker) repeat the first order.
    skip_from: u32,
}

impl<S: Steps> Search<'_, S> {
    /// Explores every continuation of the current sequence from `node`
    /// with the dice left; `froms` limits the next move's starting point.
    fn run(&mut self, node: &S::Node, dice: &[u8], pips: u32, ordered: bool, froms: u32) {
        let mut moved = false;
        if let Some((&die, rest)) = dice.split_first()
            && !self.steps.is_finished(node)
        {
            let steps = self.steps;
            let mut froms = froms;
            if self.play.len() == 1 && self.skip_from != 0 {
                // Second order of a non-double: only the checker that just
                // moved, or a move that was not possible at the start, can
                // give a play the first order did not. (If a move is left
                // out here, the first order found a play with both dice, so
                // the one-die leaf below is outranked anyway.)
                let landed = self.play.moves()[0].to;
                froms &= !self.skip_from | (1 << landed);
            }
            steps.for_each_step(node, die, froms, |mv, next| {
                moved = true;
                self.play.try_push(mv);
                if rest.is_empty() {
                    // The last die: a leaf without another level of search.
                    if !steps.judges_sequences() || steps.accepts(&next) {
                        self.leaf(&next, pips + u32::from(die));
                    }
                } else {
                    let next_froms = if ordered {
                        points_up_to(mv.from)
                    } else {
                        ALL_POINTS
                    };
                    self.run(&next, rest, pips + u32::from(die), ordered, next_froms);
                }
                self.play.pop();
            });
        }
        let judged = self.steps.judges_sequences();
        if (!moved || judged) && (!judged || self.steps.accepts(node)) {
            self.leaf(node, pips);
        }
    }

    #[inline(always)]
    fn leaf(&mut self, node: &S::Node, pips: u32) {
        let rank = (self.play.len(), pips);
        if self.steps.ending_play_is_complete() && self.steps.is_finished(node) {
            // Complete whatever dice remain: kept in any case, and it
            // outranks shorter plays like any other.
            self.buffers
                .finished
                .push((self.steps.key(node), self.play));
            if rank > self.best {
                self.best = rank;
                self.buffers.reset();
            }
            return;
        }
        if rank < self.best {
            return;
        }
        let buffers = &mut *self.buffers;
        if rank > self.best {
            self.best = rank;
            buffers.reset();
        }
        buffers.insert(self.steps.key(node), self.play);
    }
}

impl<S: Steps> Buffers<S> {
    /// Keeps a play unless one with the same result is kept already.
    #[inline(always)]
    fn insert(&mut self, key: S::Key, play: Play) {
        let mask = self.table.len() - 1;
        let mut slot = slot_of(&key, mask);
        loop {
            match self.table[slot] {
                0 => break,
                i if self.leaves[i as usize - 1].0 == key => return,
                _ => slot = (slot + 1) & mask,
            }
        }
        self.leaves.push((key, play));
        self.table[slot] = self.leaves.len() as u32;
        if self.leaves.len() * 2 > self.table.len() {
            self.grow();
        }
    }

    /// Empties the leaves and their index, touching only the slots used
    /// (the index may have grown large for one rich position).
    fn reset(&mut self) {
        let mask = self.table.len() - 1;
        for (key, _) in &self.leaves {
            let mut slot = slot_of(key, mask);
            while self.table[slot] != 0 {
                self.table[slot] = 0;
                slot = (slot + 1) & mask;
            }
        }
        self.leaves.clear();
    }

    /// Doubles the index (rare: only positions with hundreds of plays).
    fn grow(&mut self) {
        self.table = vec![0; self.table.len() * 2];
        let mask = self.table.len() - 1;
        for (i, (key, _)) in self.leaves.iter().enumerate() {
            let mut slot = slot_of(key, mask);
            while self.table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.table[slot] = i as u32 + 1;
        }
    }
}

fn slot_of<K: Hash>(key: &K, mask: usize) -> usize {
    let mut hasher = MixHasher(0);
    key.hash(&mut hasher);
    (hasher.finish() >> 32) as usize & mask
}

/// A fast, non-cryptographic hasher for search keys (small integers or
/// arrays of them). Keys come from the variant, not from users.
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    #[inline]
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
}
