//! AnalyzeMatch: every decision of a match judged by the computer player
//! (docs/bot.md). The match is replayed from its log (as `history` does);
//! before each command, the decision it made is valued: a checker play
//! against the best of the legal plays, a cube decision against the best
//! action, and each player's totals become error rates.

use bg_api::v1 as pb;
use bg_bot::act::{best_by, cube_equities, losses, play_value};
use bg_bot::cube::CubeAction;
use bg_bot::search::{Evaluator, before_roll, choices, rank};
use bg_engine::game::{Command, CommandError, Match, Phase, Rules};
use bg_engine::{LegalPlay, Seat};
use bg_store::GameStore;

use super::cache::Live;
use super::history::replay;
use super::{Games, bots, game_id_of};
use crate::convert;
use crate::error::{ApiError, Reason};

/// The longest a match's analysis may take (a 1-ply analysis takes a few
/// milliseconds an action in a release build).
const ANALYSIS_BUDGET: std::time::Duration = std::time::Duration::from_secs(300);

/// The error rate's scale: mean equity lost x 500, as GNU Backgammon
/// reports it.
const ERROR_RATE_SCALE: f64 = 500.0;

impl<S: GameStore> Games<S> {
    pub async fn analyze_match(
        &self,
        request: &pb::AnalyzeMatchRequest,
        token: Option<&str>,
    ) -> Result<pb::AnalyzeMatchResponse, ApiError> {
        let plies = bots::plies(request.plies)?;
        let game_id = &game_id_of(&request.game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, game_id).await?;
        if live.match_state.phase != Phase::MatchOver {
            live.seat(token)?;
            if !live.match_state.settings.hints {
                return Err(ApiError::new(
                    Reason::HintsOff,
                    "this match is analysed once it is over (its settings give no hints while it is played)",
                ));
            }
        }
        let net = self.nets.needed(&live.rules.plugin)?;
        if live.rules.plugin.version() != live.record.variant_version {
            return Err(ApiError::new(
                Reason::AnalysisUnavailable,
                format!(
                    "the match began with version {} of its variant, and {} is loaded: it cannot be replayed",
                    live.record.variant_version,
                    live.rules.plugin.version()
                ),
            ));
        }
        let log = self
            .store
            .log_after(game_id, 0)
            .await
            .map_err(crate::error::ApiError::store)?;
        let base = live.clone();
        let key = self.seed_key.clone();
        // The whole match is judged in one piece of work, hundreds of
        // plugin calls an action at 1-ply: it may take as long as one
        // call for each action logged (up to a bound), so that a long
        // match is not taken for a plugin that spins.
        let actions = u32::try_from(log.len()).unwrap_or(u32::MAX).max(1);
        let budget = self
            .plugin_deadline
            .saturating_mul(actions)
            .min(ANALYSIS_BUDGET.max(self.plugin_deadline));
        self.off_runtime_within(&live.rules.plugin, budget, move || {
            let mut judge = Judge {
                live: &base,
                eval: Evaluator {
                    net: &net,
                    checkers: base.rules.plugin.checkers(),
                },
                plies,
                decisions: Vec::new(),
            };
            let version = base.record.version;
            replay(
                &base,
                &log,
                version,
                &mut |made, m, seat, command| judge.decision(made, m, seat, command),
                &key,
            )?;
            Ok(pb::AnalyzeMatchResponse {
                version,
                plies: u32::from(plies),
                players: Seat::BOTH
                    .iter()
                    .map(|&seat| totals(&judge.decisions, seat))
                    .collect(),
                decisions: judge.decisions,
            })
        })
        .await
    }
}

/// The decisions judged so far.
struct Judge<'a> {
    live: &'a Live,
    eval: Evaluator<'a>,
    plies: u8,
    decisions: Vec<pb::AnalyzedDecision>,
}

impl Judge<'_> {
    /// The decision `seat` made with `command` in `m` (in the action that
    /// made version `made`), if it was one (a forced play, a roll with no
    /// cube to turn, a resignation are not judged).
    fn decision(
        &mut self,
        made: u64,
        m: &Match,
        seat: Seat,
        command: &Command,
    ) -> Result<(), ApiError> {
        let judged = match (m.phase, command) {
            (Phase::Move, Command::Move { play }) => self.checker_play(m, seat, play)?,
            (Phase::Roll, Command::Roll | Command::Double) if m.double_value(seat).is_ok() => {
                let action = match command {
                    Command::Double => CubeAction::Double,
                    _ => CubeAction::NoDouble,
                };
                Some(self.cube(m, seat, seat, action, "cube")?)
            }
            (Phase::Decision, Command::Decide { choice }) => {
                self.variant_decision(m, seat, choice)?
            }
            (Phase::CubeOffered, Command::Take | Command::Drop) => {
                let action = match command {
                    Command::Take => CubeAction::Take,
                    _ => CubeAction::Pass,
                };
                Some(self.cube(m, seat, m.turn, action, "take")?)
            }
            _ => None,
        };
        if let Some(mut d) = judged {
            d.version = made;
            d.game_number = m.game_number;
            d.seat = convert::to_api::seat(seat);
            self.decisions.push(d);
        }
        Ok(())
    }

    /// A checker play with more than one legal play: the best, and the
    /// equity the one made lost to it.
    fn checker_play(
        &self,
        m: &Match,
        seat: Seat,
        play: &bg_engine::Play,
    ) -> Result<Option<pb::AnalyzedDecision>, ApiError> {
        let rules = &self.live.rules;
        let variant = |e| ApiError::from(CommandError::Rules(e));
        let Some(dice) = m.dice else { return Ok(None) };
        let legal = rules
            .legal_plays(&m.variant_state, seat, dice)
            .map_err(variant)?;
        if legal.len() < 2 {
            return Ok(None);
        }
        // The play made, as one of the legal plays: the one reaching the
        // same position.
        let after = rules
            .apply_play(&m.variant_state, seat, dice, play)
            .map_err(variant)?;
        let reached = rules.plugin.board(&after.state).map_err(variant)?;
        let Some(made) = legal
            .iter()
            .position(|lp| lp.play == *play || lp.result == reached)
        else {
            return Ok(None);
        };
        let ranked = rank(
            rules,
            self.eval,
            &m.variant_state,
            seat,
            dice,
            &legal,
            self.plies,
        )
        .map_err(variant)?;
        // Judged as the computer chooses: in a match, by what the
        // chances are worth at the score.
        let value = play_value(Some(m), seat);
        let Some(best) = best_by(&ranked, &value) else {
            return Ok(None);
        };
        let lost = ranked
            .iter()
            .zip(losses(&ranked, &value))
            .find(|(r, _)| r.index == made)
            .map_or(0.0, |(_, loss)| loss);
        let show = |lp: &LegalPlay| bots::shown(rules, lp, seat);
        Ok(Some(pb::AnalyzedDecision {
            kind: "move".into(),
            dice: Some(pb::Dice {
                die1: u32::from(dice.d1),
                die2: u32::from(dice.d2),
            }),
            played: Some(show(&legal[made])),
            best: Some(show(&legal[best.index])),
            equity_lost: f64::from(lost),
            ..Default::default()
        }))
    }

    /// A variant's decision of `seat` with more than one choice: the best
    /// choice at 0-ply, and the equity the one made lost to it.
    fn variant_decision(
        &self,
        m: &Match,
        seat: Seat,
        choice: &str,
    ) -> Result<Option<pb::AnalyzedDecision>, ApiError> {
        let Some(decision) = &m.pending_decision else {
            return Ok(None);
        };
        if decision.choices.len() < 2 {
            return Ok(None);
        }
        let values = choices(
            &self.live.rules,
            self.eval,
            &m.variant_state,
            seat,
            m.dice,
            decision,
            m.decision_after_play,
        )
        .map_err(|e| ApiError::from(CommandError::Rules(e)))?;
        let value = |i: usize| values.get(i).map_or(f32::NEG_INFINITY, |v| v.equity);
        let Some(made) = decision.choices.iter().position(|c| c == choice) else {
            return Ok(None);
        };
        let best = (0..values.len())
            .max_by(|&a, &b| value(a).total_cmp(&value(b)))
            .unwrap_or(made);
        Ok(Some(pb::AnalyzedDecision {
            kind: "decision".into(),
            action: choice.to_string(),
            best_action: decision.choices[best].clone(),
            equity_lost: f64::from((value(best) - value(made)).max(0.0)),
            ..Default::default()
        }))
    }

    /// A cube decision of `seat` (to double or not, or to take or pass),
    /// the doubler being `roller`.
    fn cube(
        &self,
        m: &Match,
        seat: Seat,
        roller: Seat,
        action: CubeAction,
        kind: &str,
    ) -> Result<pb::AnalyzedDecision, ApiError> {
        let board = self
            .live
            .rules
            .plugin
            .board(&m.variant_state)
            .map_err(|e| ApiError::from(CommandError::Rules(e)))?;
        // Valued at the analysis's plies, as the computer values it.
        let value = before_roll(
            &self.live.rules,
            self.eval,
            &m.variant_state,
            &board,
            roller,
            self.plies,
        )
        .map_err(|e| ApiError::from(CommandError::Rules(e)))?;
        let equities = cube_equities(m, &board, roller, &value);
        let (best, lost) = if seat == roller {
            let best = equities.double();
            (best, equities.after(best) - equities.after(action))
        } else {
            // The taker's equity is the roller's, negated.
            let best = equities.answer();
            (best, equities.after(action) - equities.after(best))
        };
        Ok(pb::AnalyzedDecision {
            kind: kind.into(),
            action: action.name().into(),
            best_action: best.name().into(),
            equity_lost: f64::from(lost.max(0.0) * equities.emg),
            ..Default::default()
        })
    }
}

/// A player's totals.
fn totals(decisions: &[pb::AnalyzedDecision], seat: Seat) -> pb::PlayerAnalysis {
    let mine = decisions
        .iter()
        .filter(|d| d.seat == convert::to_api::seat(seat));
    let (mut checker, mut cube, mut variant) = ((0u32, 0.0f64), (0u32, 0.0f64), (0u32, 0.0f64));
    for d in mine {
        let tally = match d.kind.as_str() {
            "move" => &mut checker,
            "decision" => &mut variant,
            _ => &mut cube,
        };
        tally.0 += 1;
        tally.1 += d.equity_lost;
    }
    let rate = |(n, lost): (u32, f64)| {
        if n == 0 {
            0.0
        } else {
            lost / f64::from(n) * ERROR_RATE_SCALE
        }
    };
    pb::PlayerAnalysis {
        seat: convert::to_api::seat(seat),
        checker_decisions: checker.0,
        checker_equity_lost: checker.1,
        checker_error_rate: rate(checker),
        cube_decisions: cube.0,
        cube_equity_lost: cube.1,
        cube_error_rate: rate(cube),
        variant_decisions: variant.0,
        variant_equity_lost: variant.1,
        variant_error_rate: rate(variant),
        error_rate: rate((
            checker.0 + cube.0 + variant.0,
            checker.1 + cube.1 + variant.1,
        )),
    }
}
