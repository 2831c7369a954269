//! Self-play training by temporal differences (TD(0)).
//!
//! Both sides are the net's 0-ply player (the service's, through
//! [`SearchPlayer`]). After each move the position is
//! valued from the mover's point of view; the value of the mover's previous
//! position is moved toward the other side's value of the position after
//! its reply, seen from the mover's side ([`flip`]); the last positions of
//! a game are moved toward its outcome.

use anyhow::Result;
use bg_engine::Seat;
use bg_variant_api::{Outcome, Variant};
use rand::rngs::StdRng;

use crate::duel::play_game;
use bg_bot::encode::INPUTS;
use bg_bot::net::{Activations, Net, OUTPUTS, flip, target};
use bg_bot::player::SearchPlayer;
use bg_bot::scored;

/// Trains `net` by self-play of `variant`, a game at a time.
pub struct Trainer<'v, V: Variant> {
    pub variant: &'v V,
    pub checkers: u8,
    pub net: Net,
    pub alpha: f32,
    pub rng: StdRng,
}

impl<V: Variant> Trainer<'_, V> {
    /// Plays one game against itself, learning from each action.
    pub fn train_game(&mut self) -> Result<Outcome> {
        let (variant, checkers) = (self.variant, self.checkers);
        let chooser = self.net.clone();
        let player = |net| SearchPlayer::<V>::new(net, checkers, 0);
        let (mut white, mut black) = (player(&chooser), player(&chooser));
        // Each position a side's action led to, as the net reads it.
        let mut positions: Vec<(Seat, Box<[f32; INPUTS]>)> = Vec::new();
        let outcome = play_game(
            variant,
            &mut self.rng,
            [&mut white, &mut black],
            &mut |seat, t| {
                let mut inputs = Box::new([0.0; INPUTS]);
                scored::encode_after(variant, t, seat, checkers, &mut inputs);
                positions.push((seat, inputs));
            },
        )?;
        // Updates from the last position back: each toward the value of
        // the one that follows it (seen from its own side), the last
        // toward the outcome.
        let mut following: Option<(Seat, [f32; OUTPUTS])> = None;
        for (seat, inputs) in positions.iter().rev() {
            let a: Activations = self.net.forward(inputs);
            let goal = match following {
                Some((s, value)) if s == *seat => value,
                Some((_, value)) => flip(&value),
                None => target(&outcome, *seat),
            };
            self.net.learn(inputs, &a, &goal, self.alpha);
            // The final position's value is the outcome itself.
            let value = if following.is_none() { goal } else { a.outputs };
            following = Some((*seat, value));
        }
        Ok(outcome)
    }
}
