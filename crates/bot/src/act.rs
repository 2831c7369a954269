//! The computer player on a seat of a match: what it does when the match
//! waits for it (roll or double, move, answer a double or a resignation
//! offer), from what a player sees: the match as it stands and the board.
//! It is given no dice source, so it cannot know a die before it is
//! thrown.

use bg_engine::game::{
    Command, Decision, Match, Phase, Rules, RulesError, RulesErrorKind, Transition,
};
use bg_engine::{Board, Dice, LegalPlay, Seat};
use rand::Rng;

use crate::cube::{CubeAction, CubeEquities, match_score, match_value};
use crate::level::Level;
use crate::search::{Evaluation, Evaluator, Ranked, before_roll, choices, rank};

/// The computer player of one seat: the net and its level.
#[derive(Clone, Copy)]
pub struct Bot<'a> {
    pub eval: Evaluator<'a>,
    pub level: Level,
}

impl Bot<'_> {
    /// The command `seat` gives now, the match (`m`, whose board is
    /// `board`) waiting for it. `rng` draws the weaker levels' noise.
    pub fn act<R: Rules + ?Sized>(
        &self,
        m: &Match,
        board: &Board,
        seat: Seat,
        rules: &R,
        rng: &mut impl Rng,
    ) -> Result<Command, RulesError> {
        match m.phase {
            Phase::Roll => Ok(match m.double_value(seat) {
                Ok(_) => {
                    let value = before_roll(
                        rules,
                        self.eval,
                        &m.variant_state,
                        board,
                        seat,
                        self.level.plies,
                    )?;
                    match cube_equities(m, board, seat, &value).double() {
                        CubeAction::Double => Command::Double,
                        _ => Command::Roll,
                    }
                }
                Err(_) => Command::Roll,
            }),
            Phase::Move => self.play(m, seat, rules, rng),
            // The doubler is to roll, the cube still where it was.
            Phase::CubeOffered => {
                let doubler = seat.other();
                let value = before_roll(
                    rules,
                    self.eval,
                    &m.variant_state,
                    board,
                    doubler,
                    self.level.plies,
                )?;
                Ok(match cube_equities(m, board, doubler, &value).answer() {
                    CubeAction::Take => Command::Take,
                    _ => Command::Drop,
                })
            }
            Phase::ResignationOffered => {
                let offered = m.resignation.map_or(0, |r| r.level);
                let mine = self.standing(m, board, seat, rules)?;
                // Accepted when it gives at least what playing on is
                // expected to win.
                Ok(if offered as f32 >= mine.equity {
                    Command::AcceptResignation
                } else {
                    Command::DeclineResignation
                })
            }
            Phase::Decision => self.decide(m, seat, rules, rng),
            Phase::MatchOver => Err(RulesError {
                kind: RulesErrorKind::Unsupported,
                message: format!("the computer player cannot act in phase {:?}", m.phase),
            }),
        }
    }

    /// What the match as it stands is worth to `seat` (the side to roll
    /// is `m.turn`): by the board, or with the scoreboard for a net that
    /// reads one.
    fn standing<R: Rules + ?Sized>(
        &self,
        m: &Match,
        board: &Board,
        seat: Seat,
        rules: &R,
    ) -> Result<Evaluation, RulesError> {
        let mover = m.turn.other();
        let value = if self.eval.net.reads_scores() {
            let now = Transition::to(m.variant_state.clone());
            self.eval.after(rules, &now, mover)?
        } else {
            self.eval.after_move(board, mover)
        };
        Ok(if mover == seat {
            value
        } else {
            value.flipped()
        })
    }

    /// The answer to the pending decision ([`choose_choice`]).
    fn decide<R: Rules + ?Sized>(
        &self,
        m: &Match,
        seat: Seat,
        rules: &R,
        rng: &mut impl Rng,
    ) -> Result<Command, RulesError> {
        let decision = m.pending_decision.as_ref().ok_or_else(|| RulesError {
            kind: RulesErrorKind::InvalidInput,
            message: "no decision is pending".into(),
        })?;
        let index = choose_choice(
            rules,
            self.eval,
            self.level,
            (&m.variant_state, seat, m.dice),
            decision,
            m.decision_after_play,
            rng,
        )?;
        Ok(Command::Decide {
            choice: decision.choices[index].clone(),
        })
    }

    /// The play ([`choose_play`]).
    fn play<R: Rules + ?Sized>(
        &self,
        m: &Match,
        seat: Seat,
        rules: &R,
        rng: &mut impl Rng,
    ) -> Result<Command, RulesError> {
        let dice = m.dice.ok_or_else(|| RulesError {
            kind: RulesErrorKind::InvalidInput,
            message: "no dice to move with".into(),
        })?;
        let plays = rules.legal_plays(&m.variant_state, seat, dice)?;
        let value = play_value(Some(m), seat);
        let index = choose_play(
            rules,
            self.eval,
            self.level,
            (&m.variant_state, seat, dice),
            &plays,
            (value, rng),
        )?;
        Ok(Command::Move {
            play: plays[index].play,
        })
    }
}

/// The computer's play: the index in `plays` (the legal plays of `seat`
/// with `dice` in `state`) of the best at the `level`'s search
/// ([`rank`]) by `value` ([`play_value`]), each value with the level's
/// noise. What the bot seat plays, and the duels' and the trainer's
/// players (`player::SearchPlayer`, by cubeless equity).
pub fn choose_play<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    level: Level,
    (state, seat, dice): (&[u8], Seat, Dice),
    plays: &[LegalPlay],
    (value, rng): (impl Fn(&Evaluation) -> f32, &mut impl Rng),
) -> Result<usize, RulesError> {
    let ranked = rank(rules, eval, state, seat, dice, plays, level.plies)?;
    let noisy = |v: &Evaluation| {
        if level.noise > 0.0 {
            value(v) + level.noise * normal(rng)
        } else {
            value(v)
        }
    };
    best_by(&ranked, noisy)
        .map(|r| r.index)
        .ok_or_else(|| RulesError {
            kind: RulesErrorKind::VariantFault,
            message: "no legal play, not even the empty one".into(),
        })
}

/// What a play's value (its [`Evaluation`], for `seat`, who made it) is
/// worth in `m`, in EMG (equity normalised to a money game at a cube of
/// 1): in a match, its chances at the score, the cube dead
/// ([`match_value`], a gammon priced as the score prices it), times the
/// cube; in money play (or without a match), its cubeless equity. How
/// the bot seat chooses its play, and `Hint` and `AnalyzeMatch` rank and
/// judge plays.
pub fn play_value(m: Option<&Match>, seat: Seat) -> impl Fn(&Evaluation) -> f32 + use<> {
    let at_score =
        m.and_then(|m| match_score(m, seat).map(|(score, met)| (score, met, m.cube.value)));
    move |v: &Evaluation| match at_score {
        Some((score, met, cube)) => match_value(v, score, cube, met) * cube as f32,
        None => v.equity,
    }
}

/// Each of `ranked`'s loss to the best by `value` (in `ranked`'s order,
/// never below 0). A play valued at the deepest search loses its
/// distance to the best there. One not looked at again (a 1-ply rank's
/// plays after the best [`ONE_PLY_KEEP`](crate::search::ONE_PLY_KEEP))
/// was left out for being worse at 0-ply than every play that was: it
/// loses more than the worst of those, by its 0-ply distance below the
/// last of them. So losses grow down a ranking, and a play's loss never
/// compares values of two searches (a 1-ply value and a 0-ply one differ
/// by more than the plays do).
pub fn losses(ranked: &[Ranked], value: impl Fn(&Evaluation) -> f32) -> Vec<f32> {
    let Some(deepest) = ranked.iter().map(|r| r.plies).max() else {
        return Vec::new();
    };
    let searched = || ranked.iter().filter(|r| r.plies == deepest);
    let best = searched()
        .map(|r| value(&r.value))
        .fold(f32::NEG_INFINITY, f32::max);
    let worst_loss = searched()
        .map(|r| best - value(&r.value))
        .fold(0.0, f32::max);
    let last_searched = searched()
        .map(|r| value(&r.zero_ply))
        .fold(f32::INFINITY, f32::min);
    ranked
        .iter()
        .map(|r| {
            let loss = if r.plies == deepest {
                best - value(&r.value)
            } else {
                worst_loss + (last_searched - value(&r.zero_ply)).max(0.0)
            };
            loss.max(0.0)
        })
        .collect()
}

/// The best of `ranked` by `value`: of the plays valued at the deepest
/// search ([`rank`] puts them first), the highest, the first of equals.
/// `value` is asked once a play, in the ranking's order.
pub fn best_by(ranked: &[Ranked], mut value: impl FnMut(&Evaluation) -> f32) -> Option<&Ranked> {
    let deepest = ranked.first()?.plies;
    ranked
        .iter()
        .filter(|r| r.plies == deepest)
        .fold(None, |best: Option<(&Ranked, f32)>, r| {
            let v = value(&r.value);
            match best {
                Some((_, b)) if b >= v => best,
                _ => Some((r, v)),
            }
        })
        .map(|(r, _)| r)
}

/// The computer's answer to `decision`, asked of `seat` in `state` (its
/// roll `dice`, if thrown; `after_play` when the decision follows its
/// play): the index of the choice worth most at 0-ply ([`choices`]), with
/// the `level`'s noise.
pub fn choose_choice<R: Rules + ?Sized>(
    rules: &R,
    eval: Evaluator,
    level: Level,
    (state, seat, dice): (&[u8], Seat, Option<Dice>),
    decision: &Decision,
    after_play: bool,
    rng: &mut impl Rng,
) -> Result<usize, RulesError> {
    let values = choices(rules, eval, state, seat, dice, decision, after_play)?;
    values
        .iter()
        .map(|v| v.equity + level.noise * normal(rng))
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
        .filter(|&i| i < decision.choices.len())
        .ok_or_else(|| RulesError {
            kind: RulesErrorKind::VariantFault,
            message: "a decision without choices".into(),
        })
}

/// A normal draw of standard deviation 1 (Box-Muller).
pub fn normal(rng: &mut impl Rng) -> f32 {
    let u1: f32 = rng.random_range(f32::EPSILON..1.0);
    let u2: f32 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
}

/// The cube equities of `roller` (the side to roll, valued `value`) in
/// `m`: the match model in a match, Janowski's in money play
/// ([`CubeEquities::of_match`]).
pub fn cube_equities(m: &Match, board: &Board, roller: Seat, value: &Evaluation) -> CubeEquities {
    CubeEquities::of_match(m, board, roller, value)
}

#[cfg(test)]
mod losses_tests {
    use super::losses;
    use crate::search::{Evaluation, Ranked};

    fn worth(equity: f32) -> Evaluation {
        Evaluation {
            outputs: [0.0; crate::net::OUTPUTS],
            equity,
        }
    }

    fn ranked(index: usize, plies: u8, value: f32, zero_ply: f32) -> Ranked {
        Ranked {
            index,
            value: worth(value),
            plies,
            zero_ply: worth(zero_ply),
        }
    }

    /// A 1-ply ranking: the two plays looked at again are judged against
    /// each other at 1-ply; the ones left out at 0-ply lose more than
    /// the worst of them, by their 0-ply distance below the last one,
    /// even where their 0-ply value is above every 1-ply value.
    #[test]
    fn a_play_not_looked_at_again_loses_more_than_every_play_that_was() {
        let ranking = [
            ranked(3, 1, 0.10, 0.30),
            ranked(0, 1, 0.04, 0.35),
            ranked(1, 0, 0.28, 0.28),
            ranked(2, 0, 0.20, 0.20),
        ];
        let lost = losses(&ranking, |e| e.equity);
        let expected = [0.0, 0.06, 0.06 + 0.02, 0.06 + 0.10];
        for (l, e) in lost.iter().zip(expected) {
            assert!((l - e).abs() < 1e-6, "{lost:?}");
        }
        // At 0-ply alone: each play's distance to the best.
        let flat = [ranked(0, 0, 0.5, 0.5), ranked(1, 0, 0.2, 0.2)];
        assert_eq!(losses(&flat, |e| e.equity), vec![0.0, 0.3]);
        assert!(losses(&[], |e: &Evaluation| e.equity).is_empty());
    }
}
