//! Games between two players, through a variant's own rules, and what
//! they come to.

use anyhow::{Result, bail};
use bg_engine::{Board, Dice, LegalPlay, Seat};
use bg_variant_api::{Options, Outcome, Variant};
use rand::Rng;
use rand::rngs::StdRng;

use crate::player::Player;

/// Plays one game of `variant` from its start: the opening roll (one die
/// each, again on a tie; the higher moves with both), then each side rolls
/// and plays in turn. `choose` picks each play; `moved` sees each side's
/// board after its move. The game's outcome.
pub fn play_game<V: Variant>(
    variant: &V,
    rng: &mut StdRng,
    mut choose: impl FnMut(&Board, Seat, &[LegalPlay]) -> usize,
    mut moved: impl FnMut(Seat, &Board),
) -> Result<Outcome> {
    play(
        variant,
        rng,
        |board, seat, _, plays| choose(board, seat, plays),
        &mut moved,
    )
}

/// [`play_game`], where the chooser also sees the dice.
pub fn play_game_with_dice<V: Variant>(
    variant: &V,
    rng: &mut StdRng,
    choose: impl FnMut(&Board, Seat, Dice, &[LegalPlay]) -> usize,
) -> Result<Outcome> {
    play(variant, rng, choose, &mut |_, _| {})
}

fn play<V: Variant>(
    variant: &V,
    rng: &mut StdRng,
    mut choose: impl FnMut(&Board, Seat, Dice, &[LegalPlay]) -> usize,
    moved: &mut dyn FnMut(Seat, &Board),
) -> Result<Outcome> {
    let setup = variant.new_game(&Options::new())?;
    let mut state = setup.state;
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
    let mut plays = Vec::new();
    for _ in 0..10_000 {
        state = variant.after_roll(&state, seat, dice).state;
        variant.legal_plays(&state, seat, dice, &mut plays);
        if plays.is_empty() {
            bail!("no legal play, not even the empty one");
        }
        let index = choose(&variant.board(&state), seat, dice, &plays).min(plays.len() - 1);
        let t = variant.after_play(&state, seat, &plays[index]);
        state = t.state;
        moved(seat, &variant.board(&state));
        if let Some(outcome) = t.outcome {
            return Ok(outcome);
        }
        seat = t.next_roller.unwrap_or(seat.other());
        dice = Dice::new(rng.random_range(1..=6), rng.random_range(1..=6))?;
    }
    bail!("a game of 10,000 turns")
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
    a: &mut dyn Player,
    b: &mut dyn Player,
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
        let outcome = play_game(
            variant,
            rng,
            |board, seat, plays| {
                if seat == a_seat {
                    a.choose(board, seat, plays)
                } else {
                    b.choose(board, seat, plays)
                }
            },
            |_, _| {},
        )?;
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
