//! A position as the net's inputs, from one side's point of view.
//!
//! TD-Gammon's encoding (Tesauro 1995): for each side and each of its 24
//! points, four units for its checkers there (at least one, at least two,
//! at least three, and half of any beyond three); its checkers on the bar
//! (halved) and borne off (as a share of its checkers). The side the
//! position is seen from comes first; whose roll it is need not be said,
//! since positions are always valued just after a side moved, from that
//! side's point of view, the other side to roll. Then, for Plakoto, which
//! checkers are pinned; and for a variant scored during play (tric-trac),
//! what its scoreboard says ([`encode_scores`]).

use bg_engine::game::Scoreboard;
use bg_engine::{BAR, Board, OFF, Seat};

/// Inputs per side: 4 per point, the bar, the borne-off.
const PER_SIDE: usize = 24 * 4 + 2;
/// TD-Gammon's inputs, both sides.
pub const BOARD_INPUTS: usize = 2 * PER_SIDE;
/// Then, for variants where a checker can be pinned (Plakoto), one unit
/// per side and point: its checker there is pinned. Always 0 elsewhere,
/// so that a net of those variants never learns a weight for them.
pub const PIN_INPUTS: usize = 2 * 24;
/// The tallies of a scoreboard the net reads, per side (the first ones
/// the variant declares: tric-trac's points, holes, bredouille, rolls of
/// the relevé, raised stake and flag).
pub const TALLIES: usize = 6;
/// A tally's value is read as a share of this (capped at 1): tric-trac's
/// twelve points a hole and twelve holes a partie.
pub const TALLY_SCALE: f32 = 12.0;
/// Then, for variants scored during play, the scoreboard: each side's
/// [`TALLIES`] tallies, and whether the side that just moved rolls next
/// (tric-trac's relevé: who goes, or bears off first, throws again).
/// Always 0 elsewhere.
pub const SCORE_INPUTS: usize = 2 * TALLIES + 1;
/// Where the pin inputs end and the score inputs start.
pub const PINNED_INPUTS: usize = BOARD_INPUTS + PIN_INPUTS;
/// The net's inputs.
pub const INPUTS: usize = PINNED_INPUTS + SCORE_INPUTS;

/// Writes the inputs of `board` seen from `me` into `out` (length
/// [`INPUTS`]); `checkers` is the variant's checkers a side.
pub fn encode(board: &Board, me: Seat, checkers: u8, out: &mut [f32; INPUTS]) {
    for (k, seat) in [me, me.other()].into_iter().enumerate() {
        let side = &board.checkers[seat.index()];
        let base = k * PER_SIDE;
        for (point, &count) in side.iter().enumerate().take(25).skip(1) {
            let n = f32::from(count);
            let at = base + (point - 1) * 4;
            out[at] = f32::from(u8::from(n >= 1.0));
            out[at + 1] = f32::from(u8::from(n >= 2.0));
            out[at + 2] = f32::from(u8::from(n >= 3.0));
            out[at + 3] = if n > 3.0 { (n - 3.0) / 2.0 } else { 0.0 };
        }
        out[base + 96] = f32::from(side[usize::from(BAR)]) / 2.0;
        out[base + 97] = f32::from(side[usize::from(OFF)]) / f32::from(checkers.max(1));
        let pinned = board.pinned[seat.index()];
        for point in 1..=24 {
            out[BOARD_INPUTS + k * 24 + point - 1] =
                f32::from(u8::from(pinned & (1 << point) != 0));
        }
    }
    out[PINNED_INPUTS..].fill(0.0);
}

/// Writes what `scoreboard` says, seen from `me` (who just moved; `rolls
/// next` if `me` throws again), into the score inputs of `out` (after
/// [`encode`], which clears them).
pub fn encode_scores(scoreboard: &Scoreboard, me: Seat, rolls_next: bool, out: &mut [f32; INPUTS]) {
    for (k, seat) in [me, me.other()].into_iter().enumerate() {
        for (t, tally) in scoreboard.tallies.iter().take(TALLIES).enumerate() {
            let value = tally.seats[seat.index()].max(0) as f32;
            out[PINNED_INPUTS + k * TALLIES + t] = (value / TALLY_SCALE).min(1.0);
        }
    }
    out[PINNED_INPUTS + 2 * TALLIES] = f32::from(u8::from(rolls_next));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start is symmetric: seen from either side, the same inputs.
    #[test]
    fn the_start_looks_the_same_from_both_sides() {
        let board = Board::standard_start();
        let (mut white, mut black) = ([0.0; INPUTS], [0.0; INPUTS]);
        encode(&board, Seat::White, 15, &mut white);
        encode(&board, Seat::Black, 15, &mut black);
        assert_eq!(white, black);
        // Five checkers on the 6-point: three units, then (5 - 3) / 2.
        assert_eq!(&white[20..24], &[1.0, 1.0, 1.0, 1.0]);
    }
}
