//! The search the service uses: plays ranked at 0-ply or 1-ply over a
//! variant's rules as the engine calls them (state bytes in, legal plays
//! and transitions out), so that it works on any loaded plugin; and the
//! cube decisions, from the net's value of the position.
//!
//! Values are cubeless, for the side that plays, in points a game (1 a
//! single win, 2 a gammon...), from the net's five outputs.

use bg_engine::game::{Decision, Outcome, Rules, RulesError, RulesErrorKind, Transition};
use bg_engine::{Board, Dice, LegalPlay, Seat};

use crate::encode::{INPUTS, encode, encode_scores};
use crate::net::{Net, OUTPUTS, equity, flip, target};

/// The plays that 1-ply looks at again (the rest keep their 0-ply value,
/// ranked after them).
pub const ONE_PLY_KEEP: usize = 8;

/// A position's value for one side: the net's five outputs (the chances
/// of winning, of winning a gammon, a backgammon, of losing a gammon, a
/// backgammon) and the cubeless equity they make.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    pub outputs: [f32; OUTPUTS],
    pub equity: f32,
}

impl Evaluation {
    fn of(outputs: [f32; OUTPUTS]) -> Evaluation {
        Evaluation {
            outputs,
            equity: equity(&outputs),
        }
    }

    /// The same position valued by the other side.
    pub fn flipped(&self) -> Evaluation {
        Evaluation::of(flip(&self.outputs))
    }

    /// A game over, for `me`: what it came to.
    pub fn of_outcome(outcome: &Outcome, me: Seat) -> Evaluation {
        Evaluation::of(target(outcome, me))
    }
}

/// The net and the variant it plays.
#[derive(Clone, Copy)]
pub struct Evaluator<'a> {
    pub net: &'a Net,
    /// The variant's checkers a side.
    pub checkers: u8,
}

impl Evaluator<'_> {
    /// `board` valued by `seat`, who has just moved there (the other side
    /// to roll).
    pub fn after_move(&self, board: &Board, seat: Seat) -> Evaluation {
        let mut inputs = [0.0; INPUTS];
        encode(board, seat, self.checkers, &mut inputs);
        Evaluation::of(self.net.outputs(&inputs))
    }

    /// `board` valued by `seat`, who is to roll in it.
    pub fn before_roll(&self, board: &Board, seat: Seat) -> Evaluation {
        self.after_move(board, seat.other()).flipped()
    }

    /// What `t`, an action of `mover` under `rules`, led to, valued by
    /// `mover`: the game's outcome if it ended, else the net's value of
    /// the board and (for a net that reads them, of a variant scored
    /// during play) the scoreboard, with whether `mover` throws again.
    pub fn after<R: Rules + ?Sized>(
        &self,
        rules: &R,
        t: &Transition<Vec<u8>>,
        mover: Seat,
    ) -> Result<Evaluation, RulesError> {
        if let Some(outcome) = &t.outcome {
            return Ok(Evaluation::of_outcome(outcome, mover));
        }
        let mut inputs = [0.0; INPUTS];
        encode(&rules.board(&t.state)?, mover, self.checkers, &mut inputs);
        if self.net.reads_scores()
            && let Some(scoreboard) = rules.scoreboard(&t.state)?
        {
            let rolls_next = t.next_roller == Some(mover);
            encode_scores(&scoreboard, mover, rolls_next, &mut inputs);
        }
        Ok(Evaluation::of(self.net.outputs(&inputs)))
    }

    /// The best of `plays` for `seat` at 0-ply: its index and value.
    fn best(&self, seat: Seat, plays: &[LegalPlay]) -> Option<(usize, Evaluation)> {
        plays
            .iter()
            .map(|lp| self.after_move(&lp.result, seat))
            .enumerate()
            .max_by(|a, b| a.1.equity.total_cmp(&b.1.equity))
    }
}

/// A legal play and its value.
#[derive(Clone, Copy, Debug)]
pub struct Ranked {
    /// Its index in the legal plays.
    pub index: usize,
    pub value: Evaluation,
    /// The search that valued it: 0 or 1.
    pub plies: u8,
    /// Its value at 0-ply (`value` itself when `plies` is 0): how the
    /// plays not looked at again compare with those that were.
    pub zero_ply: Evaluation,
}

/// The legal `plays` of `seat` with `dice` in `state`, best first: each
/// valued at 0-ply, then (with `plies` 1) the best [`ONE_PLY_KEEP`] again
/// as the average over the other side's 21 rolls of the position after
/// its best 0-ply reply. A play that ends the game is worth its outcome.
pub fn rank<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    seat: Seat,
    dice: Dice,
    plays: &[LegalPlay],
    plies: u8,
) -> Result<Vec<Ranked>, RulesError> {
    let mut ranked: Vec<Ranked> = zero_ply(rules, eval, state, seat, dice, plays)?
        .into_iter()
        .enumerate()
        .map(|(index, value)| Ranked {
            index,
            value,
            plies: 0,
            zero_ply: value,
        })
        .collect();
    by_equity(&mut ranked);
    if plies == 0 || ranked.len() < 2 {
        return Ok(ranked);
    }
    for r in ranked.iter_mut().take(ONE_PLY_KEEP) {
        let play = &plays[r.index].play;
        r.value = one_ply(rules, eval, state, seat, dice, play)?;
        r.plies = 1;
    }
    // The plays looked at again first, then the others as they were.
    let kept = ranked.len().min(ONE_PLY_KEEP);
    by_equity(&mut ranked[..kept]);
    Ok(ranked)
}

/// Each of `plays` valued at 0-ply: by its result's board, or, for a net
/// that reads a scoreboard, by what the play leads to (the points it
/// gives away, a relevé, the game's end).
fn zero_ply<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    seat: Seat,
    dice: Dice,
    plays: &[LegalPlay],
) -> Result<Vec<Evaluation>, RulesError> {
    if !eval.net.reads_scores() {
        return Ok(plays
            .iter()
            .map(|lp| eval.after_move(&lp.result, seat))
            .collect());
    }
    plays
        .iter()
        .map(|lp| eval.after(rules, &rules.apply_play(state, seat, dice, &lp.play)?, seat))
        .collect()
}

/// The best of `plays` at 0-ply (`None` if there is none).
fn best_play<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    seat: Seat,
    dice: Dice,
    plays: &[LegalPlay],
) -> Result<Option<Evaluation>, RulesError> {
    Ok(zero_ply(rules, eval, state, seat, dice, plays)?
        .into_iter()
        .max_by(|a, b| a.equity.total_cmp(&b.equity)))
}

/// Each choice of `decision`, asked of `seat` in `state`, valued by `seat`
/// at 0-ply by what follows it: the game's end, the dice handed to a seat,
/// or the turn's end when the decision came after the play; else `seat`'s
/// best play with its `dice`.
pub fn choices<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    seat: Seat,
    dice: Option<Dice>,
    decision: &Decision,
    after_play: bool,
) -> Result<Vec<Evaluation>, RulesError> {
    decision
        .choices
        .iter()
        .map(|choice| {
            let t = rules.decide(state, seat, choice)?;
            let settled = t.outcome.is_some() || t.next_roller.is_some() || t.decision.is_some();
            match dice {
                Some(dice) if !settled && !after_play => {
                    let plays = rules.legal_plays(&t.state, seat, dice)?;
                    best_play(rules, eval, &t.state, seat, dice, &plays)?
                        .ok_or_else(|| fault("no legal play, not even the empty one".into()))
                }
                _ => eval.after(rules, &t, seat),
            }
        })
        .collect()
}

fn by_equity(ranked: &mut [Ranked]) {
    ranked.sort_by(|a, b| b.value.equity.total_cmp(&a.value.equity));
}

/// The value of `play` for `seat`, one roll of the other side ahead.
fn one_ply<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    seat: Seat,
    dice: Dice,
    play: &bg_engine::Play,
) -> Result<Evaluation, RulesError> {
    let after = rules.apply_play(state, seat, dice, play)?;
    // The game is over, or a seat throws again: valued as it stands.
    if after.outcome.is_some() || after.next_roller.is_some() {
        return eval.after(rules, &after, seat);
    }
    Ok(rolls_ahead(rules, eval, &after.state, seat.other())?.flipped())
}

/// What `state` (whose board is `board`) is worth to `roller`, who is to
/// roll in it, at `plies`: the net alone at 0, [`rolls_ahead`] above.
/// The cube's decisions are taken on it, by the computer, `Hint` and
/// `AnalyzeMatch` alike.
pub fn before_roll<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    board: &Board,
    roller: Seat,
    plies: u8,
) -> Result<Evaluation, RulesError> {
    match plies {
        0 => Ok(eval.before_roll(board, roller)),
        _ => rolls_ahead(rules, eval, state, roller),
    }
}

/// What `state` is worth to `roller`, who is to roll in it, at 1-ply: the
/// average over its 21 rolls of its best play's 0-ply value (a roll that
/// asks it to decide: its best choice).
pub fn rolls_ahead<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    state: &[u8],
    roller: Seat,
) -> Result<Evaluation, RulesError> {
    let mut sum = [0.0f32; OUTPUTS];
    for (roll, weight) in rolls() {
        let rolled = rules.after_roll(state, roller, roll)?;
        let value = match (&rolled.outcome, &rolled.decision) {
            (Some(outcome), _) => Evaluation::of_outcome(outcome, roller),
            (None, Some(decision)) => choices(
                rules,
                eval,
                &rolled.state,
                roller,
                Some(roll),
                decision,
                false,
            )?
            .into_iter()
            .max_by(|a, b| a.equity.total_cmp(&b.equity))
            .ok_or_else(|| fault("a decision without choices".into()))?,
            (None, None) => {
                let plays = rules.legal_plays(&rolled.state, roller, roll)?;
                let best = if eval.net.reads_scores() {
                    best_play(rules, eval, &rolled.state, roller, roll, &plays)?
                } else {
                    eval.best(roller, &plays).map(|(_, value)| value)
                };
                best.ok_or_else(|| fault("no legal play, not even the empty one".into()))?
            }
        };
        for (s, v) in sum.iter_mut().zip(value.outputs) {
            *s += weight * v;
        }
    }
    Ok(Evaluation::of(sum.map(|s| s / 36.0)))
}

/// The 21 distinct rolls, each with how many of the 36 it stands for
/// (2 a non-double, 1 a double).
pub fn rolls() -> impl Iterator<Item = (Dice, f32)> {
    (1..=6u8).flat_map(|d1| {
        (d1..=6u8).filter_map(move |d2| {
            let weight = if d1 == d2 { 1.0 } else { 2.0 };
            Dice::new(d1, d2).ok().map(|dice| (dice, weight))
        })
    })
}

/// The variant broke its contract.
fn fault(message: String) -> RulesError {
    RulesError {
        kind: RulesErrorKind::VariantFault,
        message,
    }
}
