//! Variants scored during play (tric-trac): a position is worth what its
//! board and its scoreboard together say. The net's values of such
//! states are the search's ([`crate::search`], which values a play by the
//! state it leads to); here are the trainer's inputs of what an action led
//! to, and the heuristic player of such variants: the points per roll.
//! Generic over the variant API's [`Variant`], as the rest of the crate:
//! it never knows the rules.

use bg_engine::{Dice, LegalPlay, Seat};
use bg_variant_api::{Capabilities, Decision, Transition, Variant};

use crate::encode::{INPUTS, encode, encode_scores};
use crate::search::rolls;

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
