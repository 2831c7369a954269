//! Players: each picks one of the legal plays of a position.

use bg_engine::{BAR, Board, LegalPlay, OFF, Seat};
use rand::Rng;
use rand::rngs::StdRng;

use crate::encode::{INPUTS, encode};
use crate::net::{Net, equity};

/// Picks a play.
pub trait Player {
    /// The index in `plays` (never empty) of the play `seat` makes.
    fn choose(&mut self, board: &Board, seat: Seat, plays: &[LegalPlay]) -> usize;
}

/// The net's player at 0-ply: the play whose result the net values most
/// for the side that makes it.
pub struct NetPlayer<'a> {
    pub net: &'a Net,
    /// The variant's checkers a side.
    pub checkers: u8,
}

impl NetPlayer<'_> {
    /// The play with the highest equity, and that equity.
    pub fn best(&self, seat: Seat, plays: &[LegalPlay]) -> (usize, f32) {
        let mut inputs = [0.0; INPUTS];
        let mut best = (0, f32::NEG_INFINITY);
        for (i, lp) in plays.iter().enumerate() {
            encode(&lp.result, seat, self.checkers, &mut inputs);
            let e = equity(&self.net.outputs(&inputs));
            if e > best.1 {
                best = (i, e);
            }
        }
        best
    }
}

impl Player for NetPlayer<'_> {
    fn choose(&mut self, _: &Board, seat: Seat, plays: &[LegalPlay]) -> usize {
        self.best(seat, plays).0
    }
}

/// A play at random: the floor every player must beat.
pub struct RandomPlayer(pub StdRng);

impl Player for RandomPlayer {
    fn choose(&mut self, _: &Board, _: Seat, plays: &[LegalPlay]) -> usize {
        self.0.random_range(0..plays.len())
    }
}

/// A one-ply player that knows the basic strategy: the play whose result
/// scores best on the race (pips), points made (home points counting
/// more), the other side's checkers hit or pinned (a pinned mother checker
/// counting most), checkers borne off, and blots left where the other
/// side's checkers can reach them.
pub struct HeuristicPlayer;

impl HeuristicPlayer {
    /// The score of `board` for `me`.
    pub fn score(board: &Board, me: Seat) -> f32 {
        let (mine, theirs) = (
            &board.checkers[me.index()],
            &board.checkers[me.other().index()],
        );
        let pips = |side: &[u8; 26]| -> f32 {
            (1..=usize::from(BAR))
                .map(|p| p as f32 * f32::from(side[p]))
                .sum()
        };
        let mut score = (pips(theirs) - pips(mine)) / 10.0;
        // The furthest of their checkers, in my numbering: my blots below
        // it can be hit.
        let reach = (1..=usize::from(BAR))
            .filter(|&q| theirs[q] > 0)
            .map(|q| if q == usize::from(BAR) { 25 } else { 25 - q })
            .max()
            .unwrap_or(0);
        for (p, &n) in mine.iter().enumerate().take(25).skip(1) {
            if n >= 2 {
                score += if p <= 6 { 1.5 } else { 1.0 };
            } else if n == 1 && p < reach {
                score -= 1.0;
            }
        }
        score += 1.5 * f32::from(theirs[usize::from(BAR)]);
        // Pins (Plakoto): a pinned checker is as good as hit, and a pinned
        // mother checker (the last on its side's 24-point) loses the game.
        let pins = |seat: Seat| {
            let pinned = board.pinned[seat.index()];
            pinned.count_ones() as f32 + if pinned & (1 << 24) != 0 { 3.0 } else { 0.0 }
        };
        score += 1.5 * (pins(me.other()) - pins(me));
        score += 0.5 * f32::from(mine[usize::from(OFF)]);
        score
    }
}

impl Player for HeuristicPlayer {
    fn choose(&mut self, _: &Board, seat: Seat, plays: &[LegalPlay]) -> usize {
        let mut best = (0, f32::NEG_INFINITY);
        for (i, lp) in plays.iter().enumerate() {
            let s = HeuristicPlayer::score(&lp.result, seat);
            if s > best.1 {
                best = (i, s);
            }
        }
        best.0
    }
}

/// The net's player at 1-ply: the `keep` plays the net values most are
/// valued again as the average, over the other side's 21 rolls, of the
/// position after its best reply at 0-ply (seen from this side); the
/// best of those is played. About 21 times the work of 0-ply per play
/// kept.
pub struct OnePlyPlayer<'a, V: bg_variant_api::Variant> {
    pub net: &'a Net,
    pub checkers: u8,
    pub variant: &'a V,
    pub keep: usize,
}

impl<V: bg_variant_api::Variant> OnePlyPlayer<'_, V> {
    /// The value of `result` for `seat`, who just moved there, looking one
    /// roll ahead (`None` if the variant cannot set the position up).
    fn look_ahead(&self, result: &Board, seat: Seat, replies: &mut Vec<LegalPlay>) -> Option<f32> {
        let state = self
            .variant
            .setup_position(result, &bg_variant_api::Options::new())
            .ok()?
            .state;
        let reply_player = NetPlayer {
            net: self.net,
            checkers: self.checkers,
        };
        let mut total = 0.0;
        for d1 in 1..=6u8 {
            for d2 in d1..=6u8 {
                let weight = if d1 == d2 { 1.0 } else { 2.0 };
                let dice = bg_engine::Dice::new(d1, d2).ok()?;
                self.variant
                    .legal_plays(&state, seat.other(), dice, replies);
                if replies.is_empty() {
                    return None;
                }
                // The other side's best reply, valued from its side.
                let (_, theirs) = reply_player.best(seat.other(), replies);
                total += weight * -theirs;
            }
        }
        Some(total / 36.0)
    }
}

impl<V: bg_variant_api::Variant> Player for OnePlyPlayer<'_, V> {
    fn choose(&mut self, _: &Board, seat: Seat, plays: &[LegalPlay]) -> usize {
        let zero = NetPlayer {
            net: self.net,
            checkers: self.checkers,
        };
        // A play that bears off the last checker ends the game: no reply.
        if let Some(i) = plays
            .iter()
            .position(|lp| lp.result.off(seat) == self.checkers)
        {
            return i;
        }
        let mut inputs = [0.0; INPUTS];
        let mut ranked: Vec<(usize, f32)> = plays
            .iter()
            .enumerate()
            .map(|(i, lp)| {
                encode(&lp.result, seat, self.checkers, &mut inputs);
                (i, equity(&self.net.outputs(&inputs)))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut replies = Vec::new();
        let mut best = (ranked[0].0, f32::NEG_INFINITY);
        for &(i, _) in ranked.iter().take(self.keep.max(1)) {
            let value = self
                .look_ahead(&plays[i].result, seat, &mut replies)
                .unwrap_or_else(|| zero.best(seat, &plays[i..=i]).1);
            if value > best.1 {
                best = (i, value);
            }
        }
        best.0
    }
}

/// A weaker player for people: the net at 0-ply with noise added to the
/// value of each play (normal, of standard deviation `noise`, in equity),
/// as GNU Backgammon makes its weaker levels (its evaluation "noise").
pub struct NoisyPlayer<'a> {
    pub net: &'a Net,
    pub checkers: u8,
    pub noise: f32,
    pub rng: StdRng,
}

impl NoisyPlayer<'_> {
    /// A normal draw (Box-Muller), of standard deviation 1.
    fn normal(&mut self) -> f32 {
        crate::act::normal(&mut self.rng)
    }
}

impl Player for NoisyPlayer<'_> {
    fn choose(&mut self, _: &Board, seat: Seat, plays: &[LegalPlay]) -> usize {
        let mut inputs = [0.0; INPUTS];
        let mut best = (0, f32::NEG_INFINITY);
        for (i, lp) in plays.iter().enumerate() {
            encode(&lp.result, seat, self.checkers, &mut inputs);
            let value = equity(&self.net.outputs(&inputs)) + self.noise * self.normal();
            if value > best.1 {
                best = (i, value);
            }
        }
        best.0
    }
}
