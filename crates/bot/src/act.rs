//! The computer player on a seat of a match: what it does when the match
//! waits for it (roll or double, move, answer a double or a resignation
//! offer), from what a player sees: the match as it stands and the board.
//! It is given no dice source, so it cannot know a die before it is
//! thrown.

use bg_engine::game::{Command, Match, Phase, Rules, RulesError, RulesErrorKind, Transition};
use bg_engine::{Board, Seat};
use rand::Rng;

use crate::cube::{CubeAction, CubeEquities};
use crate::level::Level;
use crate::search::{Evaluation, Evaluator, before_roll, choices, rank};

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

    /// The answer to the pending decision: the choice worth most at 0-ply
    /// ([`choices`]), with the level's noise.
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
        let values = choices(
            rules,
            self.eval,
            &m.variant_state,
            seat,
            m.dice,
            decision,
            m.decision_after_play,
        )?;
        let chosen = values
            .iter()
            .map(|v| v.equity + self.level.noise * normal(rng))
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .and_then(|(i, _)| decision.choices.get(i))
            .ok_or_else(|| RulesError {
                kind: RulesErrorKind::VariantFault,
                message: "a decision without choices".into(),
            })?;
        Ok(Command::Decide {
            choice: chosen.clone(),
        })
    }

    /// The play: the best at the level's search, with its noise.
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
        let ranked = rank(
            rules,
            self.eval,
            &m.variant_state,
            seat,
            dice,
            &plays,
            self.level.plies,
        )?;
        let chosen = if self.level.noise > 0.0 {
            ranked
                .iter()
                .map(|r| (r.index, r.value.equity + self.level.noise * normal(rng)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(index, _)| index)
        } else {
            ranked.first().map(|r| r.index)
        };
        let index = chosen.ok_or_else(|| RulesError {
            kind: RulesErrorKind::VariantFault,
            message: "no legal play, not even the empty one".into(),
        })?;
        Ok(Command::Move {
            play: plays[index].play,
        })
    }
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
