//! Games between two players, through a variant's own rules, and what
//! they come to.

use anyhow::{Context, Result, bail};
use bg_engine::{Dice, Seat};
use bg_variant_api::{Opening, Options, Outcome, Transition, Variant};
use rand::Rng;
use rand::rngs::StdRng;

use bg_bot::player::Player;

/// Plays one game of `variant` from its start between `players` (white's,
/// then black's): the opening roll (one die each, again on a tie; the
/// higher moves with both, or throws both afresh where the variant's
/// setup says so), then each side rolls, answers any decision
/// its roll asks for, and plays, in turn (or rolls again when the variant
/// says so). `acted` sees what each side's action led to: its play, or a
/// decision that hands it the dice again. The game's outcome.
pub fn play_game<V: Variant>(
    variant: &V,
    rng: &mut StdRng,
    players: [&mut dyn Player<V>; 2],
    acted: &mut dyn FnMut(Seat, &Transition<V::State>),
) -> Result<Outcome> {
    let setup = variant.new_game(&Options::new())?;
    let opening = setup.opening;
    let mut state = setup.state;
    let [white, black] = players;
    let mut players = [white, black];
    let (mut seat, mut dice) = loop {
        let (white, black) = (rng.random_range(1..=6u8), rng.random_range(1..=6u8));
        if white != black {
            let first = if white > black {
                Seat::White
            } else {
                Seat::Black
            };
            break (first, Dice::new(white, black)?);
        }
    };
    if opening == Opening::ThrowAgain {
        dice = Dice::new(rng.random_range(1..=6), rng.random_range(1..=6))?;
    }
    let mut plays = Vec::new();
    for _ in 0..20_000 {
        let player = &mut players[seat.index()];
        let rolled = variant.after_roll(&state, seat, dice);
        state = rolled.state;
        if let Some(outcome) = rolled.outcome {
            return Ok(outcome);
        }
        let mut next_roller = None;
        if let Some(decision) = rolled.decision {
            let index = player.decide(variant, &state, seat, dice, &decision)?;
            let choice = decision
                .choices
                .get(index)
                .context("a decision without choices")?;
            let t = variant.decide(&state, seat, choice)?;
            if t.outcome.is_some() || t.next_roller.is_some() {
                acted(seat, &t);
            }
            state = t.state;
            if let Some(outcome) = t.outcome {
                return Ok(outcome);
            }
            next_roller = t.next_roller;
        }
        if next_roller.is_none() {
            variant.legal_plays(&state, seat, dice, &mut plays);
            if plays.is_empty() {
                bail!("no legal play, not even the empty one");
            }
            let index = player
                .choose(variant, &state, seat, dice, &plays)?
                .min(plays.len() - 1);
            let t = variant.after_play(&state, seat, &plays[index]);
            acted(seat, &t);
            state = t.state;
            if let Some(outcome) = t.outcome {
                return Ok(outcome);
            }
            next_roller = t.next_roller;
        }
        seat = next_roller.unwrap_or(seat.other());
        dice = Dice::new(rng.random_range(1..=6), rng.random_range(1..=6))?;
    }
    bail!("a game of 20,000 turns")
}

/// What a duel came to, for the first player.
#[derive(Debug, Clone, Copy)]
pub struct DuelResult {
    pub games: u32,
    pub wins: u32,
    /// Points won less points lost (1, 2 or 3 a game, cubeless).
    pub points: i64,
}

impl DuelResult {
    /// The share of games won.
    pub fn win_rate(&self) -> f64 {
        f64::from(self.wins) / f64::from(self.games.max(1))
    }

    /// The half-width of the 95% confidence interval of the win rate.
    pub fn margin(&self) -> f64 {
        let p = self.win_rate();
        1.96 * (p * (1.0 - p) / f64::from(self.games.max(1))).sqrt()
    }

    /// Points per game.
    pub fn ppg(&self) -> f64 {
        self.points as f64 / f64::from(self.games.max(1))
    }
}

impl std::fmt::Display for DuelResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.3}±{:.3} ({} of {} games, {:+.3} points a game)",
            self.win_rate(),
            self.margin(),
            self.wins,
            self.games,
            self.ppg()
        )
    }
}

/// `games` games of `a` against `b`, `a` taking white in even games and
/// black in odd ones.
pub fn duel<V: Variant>(
    variant: &V,
    a: &mut dyn Player<V>,
    b: &mut dyn Player<V>,
    games: u32,
    rng: &mut StdRng,
) -> Result<DuelResult> {
    let mut result = DuelResult {
        games,
        wins: 0,
        points: 0,
    };
    for game in 0..games {
        let a_seat = if game % 2 == 0 {
            Seat::White
        } else {
            Seat::Black
        };
        let players: [&mut dyn Player<V>; 2] = if a_seat == Seat::White {
            [&mut *a, &mut *b]
        } else {
            [&mut *b, &mut *a]
        };
        let outcome = play_game(variant, rng, players, &mut |_, _| {})?;
        let points = i64::from(outcome.level);
        if outcome.winner == Some(a_seat) {
            result.wins += 1;
            result.points += points;
        } else {
            result.points -= points;
        }
    }
    Ok(result)
}
