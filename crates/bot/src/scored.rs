//! Variants scored during play (tric-trac): a position is worth what its
//! board and its scoreboard together say, so a play is valued by the
//! state it leads to (the points it gives away, a relevé, the partie won),
//! not by its board alone; and the variant's decisions (stay or go) are
//! valued by what follows each choice. Generic over the variant API's
//! [`Variant`], as the rest of the crate: it never knows the rules.
//!
//! Also the heuristic player of such variants: the points per roll.

use bg_engine::{Dice, LegalPlay, Seat};
use bg_variant_api::{Capabilities, Decision, Transition, Variant};

use crate::encode::{INPUTS, encode, encode_scores};
use crate::net::{Net, equity, target};

/// Whether `variant` scores during play (its positions are valued with
/// their scoreboard).
pub fn scores<V: Variant>(variant: &V) -> bool {
    variant
        .capabilities()
        .contains(Capabilities::SCORES_DURING_PLAY)
}

/// The inputs of what `t`, an action of `mover`, led to, seen from
/// `mover`: the board, and the scoreboard of a variant scored during play
/// (with whether `mover` throws again).
pub fn encode_after<V: Variant>(
    variant: &V,
    t: &Transition<V::State>,
    mover: Seat,
    checkers: u8,
    out: &mut [f32; INPUTS],
) {
    encode(&variant.board(&t.state), mover, checkers, out);
    if scores(variant)
        && let Some(scoreboard) = variant.scoreboard(&t.state)
    {
        encode_scores(&scoreboard, mover, t.next_roller == Some(mover), out);
    }
}

/// 1-ply rolls: each distinct roll and how many of the 36 it stands for.
pub fn rolls() -> impl Iterator<Item = (Dice, f32)> {
    (1..=6u8).flat_map(|d1| {
        (d1..=6u8).filter_map(move |d2| {
            let weight = if d1 == d2 { 1.0 } else { 2.0 };
            Dice::new(d1, d2).ok().map(|dice| (dice, weight))
        })
    })
}

/// The net's values of states of a variant scored during play, in
/// cubeless equity for the side named.
pub struct Values<'a, V: Variant> {
    pub net: &'a Net,
    pub checkers: u8,
    pub variant: &'a V,
}

impl<'a, V: Variant> Values<'a, V> {
    pub fn new(net: &'a Net, checkers: u8, variant: &'a V) -> Values<'a, V> {
        Values {
            net,
            checkers,
            variant,
        }
    }

    /// What `t`, an action of `mover`, led to, valued by `mover`: the
    /// game's outcome if it ended, else the net's value.
    pub fn after(&self, t: &Transition<V::State>, mover: Seat) -> f32 {
        if let Some(outcome) = &t.outcome {
            return equity(&target(outcome, mover));
        }
        let mut inputs = [0.0; INPUTS];
        encode_after(self.variant, t, mover, self.checkers, &mut inputs);
        equity(&self.net.outputs(&inputs))
    }

    /// Each of `plays` of `seat` in `state`, valued by what it leads to.
    pub fn plays(&self, state: &V::State, seat: Seat, plays: &[LegalPlay]) -> Vec<f32> {
        plays
            .iter()
            .map(|lp| self.after(&self.variant.after_play(state, seat, lp), seat))
            .collect()
    }

    /// The best of `plays` (never empty) at 0-ply: its index and value.
    pub fn best_play(&self, state: &V::State, seat: Seat, plays: &[LegalPlay]) -> (usize, f32) {
        best(&self.plays(state, seat, plays))
    }

    /// Each of `decision`'s choices for `seat` (whose roll is `dice`),
    /// valued by what follows it: the game's end or the dice handed to a
    /// seat ([`after`](Self::after)), or else `seat`'s best play with
    /// `dice`. A choice the variant refuses is worth nothing to it.
    pub fn choices(
        &self,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> Vec<f32> {
        let mut plays = Vec::new();
        decision
            .choices
            .iter()
            .map(|choice| match self.variant.decide(state, seat, choice) {
                Err(_) => f32::NEG_INFINITY,
                Ok(t) if t.outcome.is_some() || t.next_roller.is_some() => self.after(&t, seat),
                Ok(t) => {
                    self.variant.legal_plays(&t.state, seat, dice, &mut plays);
                    if plays.is_empty() {
                        return f32::NEG_INFINITY;
                    }
                    self.best_play(&t.state, seat, &plays).1
                }
            })
            .collect()
    }

    /// The best of `decision`'s choices: its index and value.
    pub fn best_choice(
        &self,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> (usize, f32) {
        best(&self.choices(state, seat, dice, decision))
    }

    /// What throwing `dice` in `state` is worth to `roller` at 0-ply: the
    /// marks of the roll, its decision if it asks one, its best play.
    pub fn roll(&self, state: &V::State, roller: Seat, dice: Dice) -> f32 {
        let rolled = self.variant.after_roll(state, roller, dice);
        if let Some(outcome) = &rolled.outcome {
            return equity(&target(outcome, roller));
        }
        if let Some(decision) = &rolled.decision {
            return self.best_choice(&rolled.state, roller, dice, decision).1;
        }
        let mut plays = Vec::new();
        self.variant
            .legal_plays(&rolled.state, roller, dice, &mut plays);
        if plays.is_empty() {
            return 0.0;
        }
        self.best_play(&rolled.state, roller, &plays).1
    }

    /// `play` of `seat` looked at one roll ahead: the average over the
    /// other side's 21 rolls of what its roll is worth to it at 0-ply,
    /// seen from `seat`. A play after which the game is over, or `seat`
    /// throws again, is valued as it stands.
    pub fn one_ply(&self, state: &V::State, seat: Seat, play: &LegalPlay) -> f32 {
        let t = self.variant.after_play(state, seat, play);
        if t.outcome.is_some() || t.next_roller.is_some() {
            return self.after(&t, seat);
        }
        let other = seat.other();
        rolls()
            .map(|(dice, weight)| -weight * self.roll(&t.state, other, dice))
            .sum::<f32>()
            / 36.0
    }
}

/// The index and value of the highest of `values` (0 if empty).
fn best(values: &[f32]) -> (usize, f32) {
    values
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f32::NEG_INFINITY))
}

/// The points per roll of `state` for `me`, the heuristic player's value
/// of a variant scored during play: the points `me`'s next roll is
/// expected to mark for it less those it gives away, less the same for
/// the other side's next roll, plus `me`'s lead on the scoreboard's
/// `points` tally (what a relevé would wipe out).
pub fn points_per_roll<V: Variant>(variant: &V, state: &V::State, me: Seat) -> f32 {
    let net_points = |roller: Seat| -> f32 {
        rolls()
            .map(|(dice, weight)| {
                let rolled = variant.after_roll(state, roller, dice);
                let marked = variant
                    .scoreboard(&rolled.state)
                    .map(|s| s.last_roll)
                    .unwrap_or_default();
                let net: i64 = marked
                    .iter()
                    .map(|e| {
                        let points = i64::from(e.points);
                        if e.seat == roller { points } else { -points }
                    })
                    .sum();
                weight * net as f32
            })
            .sum::<f32>()
            / 36.0
    };
    let lead = variant
        .scoreboard(state)
        .and_then(|s| s.tally("points"))
        .map_or(0, |p| p[me.index()] - p[me.other().index()]);
    net_points(me) - net_points(me.other()) + lead as f32
}

/// What `t`, an action of `me`, led to, by the points per roll (a won
/// game counting more than any points).
fn points_after<V: Variant>(variant: &V, t: &Transition<V::State>, me: Seat) -> f32 {
    match &t.outcome {
        Some(outcome) if outcome.winner == Some(me) => 1e6,
        Some(_) => -1e6,
        None => points_per_roll(variant, &t.state, me),
    }
}

/// The heuristic player's play: the one after which the points per roll
/// are best for `seat`.
pub fn best_by_points<V: Variant>(
    variant: &V,
    state: &V::State,
    seat: Seat,
    plays: &[LegalPlay],
) -> usize {
    let values: Vec<f32> = plays
        .iter()
        .map(|lp| points_after(variant, &variant.after_play(state, seat, lp), seat))
        .collect();
    best(&values).0
}

/// The heuristic player's answer to a decision: the choice after which
/// (and after its best play, when it still plays its roll) the points
/// per roll are best.
pub fn choice_by_points<V: Variant>(
    variant: &V,
    state: &V::State,
    seat: Seat,
    dice: Dice,
    decision: &Decision,
) -> usize {
    let mut plays = Vec::new();
    let values: Vec<f32> = decision
        .choices
        .iter()
        .map(|choice| match variant.decide(state, seat, choice) {
            Err(_) => f32::NEG_INFINITY,
            Ok(t) if t.outcome.is_some() || t.next_roller.is_some() => {
                points_after(variant, &t, seat)
            }
            Ok(t) => {
                variant.legal_plays(&t.state, seat, dice, &mut plays);
                if plays.is_empty() {
                    return f32::NEG_INFINITY;
                }
                let i = best_by_points(variant, &t.state, seat, &plays);
                points_after(
                    variant,
                    &variant.after_play(&t.state, seat, &plays[i]),
                    seat,
                )
            }
        })
        .collect();
    best(&values).0
}
