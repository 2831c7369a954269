//! Self-play training by temporal differences (TD(0)).
//!
//! Both sides are the net's 0-ply player. After each move the position is
//! valued from the mover's point of view; the value of the mover's previous
//! position is moved toward the other side's value of the position after
//! its reply, seen from the mover's side ([`flip`]); the last positions of
//! a game are moved toward its outcome.

use anyhow::Result;
use bg_engine::{Board, Seat};
use bg_variant_api::{Outcome, Variant};
use rand::rngs::StdRng;

use crate::duel::play_game;
use crate::encode::{INPUTS, encode};
use crate::net::{Activations, Net, OUTPUTS, flip};
use crate::player::NetPlayer;

/// What an outcome is worth in the net's outputs, for `me`.
pub fn target(outcome: &Outcome, me: Seat) -> [f32; OUTPUTS] {
    let level = outcome.level;
    let won = [
        1.0,
        f32::from(u8::from(level >= 2)),
        f32::from(u8::from(level >= 3)),
        0.0,
        0.0,
    ];
    match outcome.winner {
        Some(winner) if winner == me => won,
        Some(_) => flip(&won),
        // A draw: half a win, no gammons.
        None => [0.5, 0.0, 0.0, 0.0, 0.0],
    }
}

/// Trains `net` by self-play of `variant`, a game at a time.
pub struct Trainer<'v, V: Variant> {
    pub variant: &'v V,
    pub checkers: u8,
    pub net: Net,
    pub alpha: f32,
    pub rng: StdRng,
}

impl<V: Variant> Trainer<'_, V> {
    /// Plays one game against itself, learning from each move.
    pub fn train_game(&mut self) -> Result<Outcome> {
        let checkers = self.checkers;
        let chooser = self.net.clone();
        let mut positions: Vec<(Seat, Board)> = Vec::new();
        let outcome = play_game(
            self.variant,
            &mut self.rng,
            |_, seat, plays| {
                NetPlayer {
                    net: &chooser,
                    checkers,
                }
                .best(seat, plays)
                .0
            },
            |seat, board| positions.push((seat, *board)),
        )?;
        // Updates from the last position back: each toward the value of
        // the next (from its mover's side), the last toward the outcome.
        let mut inputs = [0.0; INPUTS];
        let mut next: [Option<[f32; OUTPUTS]>; 2] = [None, None];
        for (n, &(seat, board)) in positions.iter().rev().enumerate() {
            encode(&board, seat, checkers, &mut inputs);
            let a: Activations = self.net.forward(&inputs);
            let goal = match next[seat.other().index()] {
                Some(reply) => flip(&reply),
                None => target(&outcome, seat),
            };
            self.net.learn(&inputs, &a, &goal, self.alpha);
            // The final position's value is the outcome itself.
            next[seat.index()] = Some(if n == 0 { goal } else { a.outputs });
        }
        Ok(outcome)
    }
}
