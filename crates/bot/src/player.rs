//! Players: each picks one of the legal plays of a position, and answers
//! a variant's decisions (tric-trac's stay or go).

use bg_engine::{BAR, Board, Dice, Geometry, LegalPlay, OFF, Seat};
use bg_variant_api::{Decision, Variant};
use rand::Rng;
use rand::rngs::StdRng;

use crate::encode::{INPUTS, encode};
use crate::net::{Net, equity};
use crate::scored;

/// Picks a play, and answers decisions.
pub trait Player<V: Variant> {
    /// The index in `plays` (never empty) of the play `seat` makes with
    /// `dice` in `state`.
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        plays: &[LegalPlay],
    ) -> usize;

    /// The index of `seat`'s answer among `decision`'s choices, its roll
    /// being `dice`. The first choice unless the player knows better.
    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> usize {
        let _ = (variant, state, seat, dice, decision);
        0
    }
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

impl<V: Variant> Player<V> for NetPlayer<'_> {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> usize {
        if scored::scores(variant) {
            let values = scored::Values::new(self.net, self.checkers, variant);
            return values.best_play(state, seat, plays).0;
        }
        self.best(seat, plays).0
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> usize {
        let values = scored::Values::new(self.net, self.checkers, variant);
        values.best_choice(state, seat, dice, decision).0
    }
}

/// A play at random: the floor every player must beat.
pub struct RandomPlayer(pub StdRng);

impl<V: Variant> Player<V> for RandomPlayer {
    fn choose(&mut self, _: &V, _: &V::State, _: Seat, _: Dice, plays: &[LegalPlay]) -> usize {
        self.0.random_range(0..plays.len())
    }

    fn decide(&mut self, _: &V, _: &V::State, _: Seat, _: Dice, decision: &Decision) -> usize {
        self.0.random_range(0..decision.choices.len().max(1))
    }
}

/// A one-ply player that knows the basic strategy: the play whose result
/// scores best on the race (pips), points made (home points counting
/// more), the other side's checkers hit or pinned (a pinned mother checker
/// counting most), checkers borne off, and blots left where the other
/// side's checkers can reach them. In a variant scored during play
/// (tric-trac), the points per roll instead ([`scored::points_per_roll`]).
pub struct HeuristicPlayer;

impl HeuristicPlayer {
    /// The score of `board` for `me`, on a board of `geometry`: where
    /// both sides move the same way round (long nardy, Fevga) nothing is
    /// hit and one checker holds a point, so a point is made by one
    /// checker and a lone checker is no blot.
    pub fn score_in(board: &Board, me: Seat, geometry: Geometry) -> f32 {
        if geometry == Geometry::Opposed {
            return HeuristicPlayer::score(board, me);
        }
        let (mine, theirs) = (
            &board.checkers[me.index()],
            &board.checkers[me.other().index()],
        );
        let pips =
            |side: &[u8; 26]| -> f32 { (1..=24).map(|p| p as f32 * f32::from(side[p])).sum() };
        let mut score = (pips(theirs) - pips(mine)) / 10.0;
        for (p, &n) in mine.iter().enumerate().take(25).skip(1) {
            if n >= 1 {
                score += if p <= 6 { 1.5 } else { 1.0 };
            }
        }
        score + 0.5 * f32::from(mine[usize::from(OFF)])
    }

    /// The score of `board` for `me` (backgammon's geometry).
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

impl<V: Variant> Player<V> for HeuristicPlayer {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> usize {
        if scored::scores(variant) {
            return scored::best_by_points(variant, state, seat, plays);
        }
        let geometry = geometry(variant);
        let mut best = (0, f32::NEG_INFINITY);
        for (i, lp) in plays.iter().enumerate() {
            let s = HeuristicPlayer::score_in(&lp.result, seat, geometry);
            if s > best.1 {
                best = (i, s);
            }
        }
        best.0
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> usize {
        scored::choice_by_points(variant, state, seat, dice, decision)
    }
}

/// The geometry `variant` declares.
pub fn geometry<V: Variant>(variant: &V) -> Geometry {
    match bg_variant_api::proto::Geometry::try_from(variant.info().geometry) {
        Ok(bg_variant_api::proto::Geometry::SameWay) => Geometry::SameWay,
        _ => Geometry::Opposed,
    }
}

/// The net's player at 1-ply: the `keep` plays the net values most are
/// valued again as the average, over the other side's 21 rolls, of the
/// position after its best reply at 0-ply (seen from this side); the
/// best of those is played. About 21 times the work of 0-ply per play
/// kept.
pub struct OnePlyPlayer<'a, V: Variant> {
    pub net: &'a Net,
    pub checkers: u8,
    pub variant: &'a V,
    pub keep: usize,
}

impl<V: Variant> OnePlyPlayer<'_, V> {
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

impl<V: Variant> OnePlyPlayer<'_, V> {
    /// In a variant scored during play: the `keep` best plays at 0-ply
    /// valued one roll ahead by what each leads to ([`scored::Values`]).
    fn choose_scored(&self, state: &V::State, seat: Seat, plays: &[LegalPlay]) -> usize {
        let values = scored::Values::new(self.net, self.checkers, self.variant);
        let mut ranked: Vec<(usize, f32)> = values
            .plays(state, seat, plays)
            .into_iter()
            .enumerate()
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
            .iter()
            .take(self.keep.max(1))
            .map(|&(i, _)| (i, values.one_ply(state, seat, &plays[i])))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |(i, _)| i)
    }
}

impl<V: Variant> Player<V> for OnePlyPlayer<'_, V> {
    fn choose(
        &mut self,
        _: &V,
        state: &V::State,
        seat: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> usize {
        if scored::scores(self.variant) {
            return self.choose_scored(state, seat, plays);
        }
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

    /// At 0-ply, as the net's player decides.
    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> usize {
        let mut zero = NetPlayer {
            net: self.net,
            checkers: self.checkers,
        };
        zero.decide(variant, state, seat, dice, decision)
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

    /// The index of the highest of `values`, each with its noise.
    fn noisy_best(&mut self, values: Vec<f32>) -> usize {
        let mut best = (0, f32::NEG_INFINITY);
        for (i, value) in values.into_iter().enumerate() {
            let value = value + self.noise * self.normal();
            if value > best.1 {
                best = (i, value);
            }
        }
        best.0
    }
}

impl<V: Variant> Player<V> for NoisyPlayer<'_> {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> usize {
        let values = if scored::scores(variant) {
            scored::Values::new(self.net, self.checkers, variant).plays(state, seat, plays)
        } else {
            let mut inputs = [0.0; INPUTS];
            plays
                .iter()
                .map(|lp| {
                    encode(&lp.result, seat, self.checkers, &mut inputs);
                    equity(&self.net.outputs(&inputs))
                })
                .collect()
        };
        self.noisy_best(values)
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> usize {
        let values = scored::Values::new(self.net, self.checkers, variant);
        let choices = values.choices(state, seat, dice, decision);
        self.noisy_best(choices)
    }
}
