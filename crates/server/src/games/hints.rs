//! Hint: the computer player's ranking of the plays (and its cube
//! decision) for the seat to act in a game in progress, or for any
//! position and dice of a variant (docs/bot.md).

use std::collections::BTreeMap;

use bg_api::v1 as pb;
use bg_bot::Net;
use bg_bot::act::{cube_equities, losses, play_value};
use bg_bot::search::{Evaluation, Evaluator, before_roll, choices, rank};
use bg_engine::game::{CommandError, Decision, Match, Phase, Rules};
use bg_engine::{Board, Dice, Seat};
use bg_plugin_host::VariantRules;
use bg_store::GameStore;
use bg_variant_api::Capabilities;

use super::{Games, bots, game_id_of};
use crate::convert;
use crate::error::{ApiError, Reason};

/// What a hint is about: a position, the seat to act, its dice if thrown.
struct Asked {
    rules: VariantRules,
    at: At,
    seat: Seat,
    dice: Option<Dice>,
    /// The cube decision there is to make, if any.
    cube: Option<CubeQuestion>,
    /// The variant's decision the seat must make, if any, and whether it
    /// came after the play.
    decision: Option<(Decision, bool)>,
    /// The match, for a hint in a game: its plays are ranked by what they
    /// are worth at its score (`play_value`), as the computer plays.
    game: Option<Box<Match>>,
}

/// Where the hint is asked.
enum At {
    /// A game in progress: the variant's state (after the roll, when the
    /// dice are thrown).
    Game(Vec<u8>),
    /// A position and dice: set up, then the dice rolled.
    Position(Board),
}

/// A cube decision of a match (its state: the cube, the score).
enum CubeQuestion {
    /// The seat to roll may double.
    Double(Box<Match>),
    /// The seat doubled answers.
    Take(Box<Match>),
}

impl<S: GameStore> Games<S> {
    pub async fn hint(
        &self,
        request: &pb::HintRequest,
        token: Option<&str>,
    ) -> Result<pb::HintResponse, ApiError> {
        let plies = bots::plies(request.plies)?;
        let (asked, version) = if request.game_id.is_empty() {
            (self.position(request)?, 0)
        } else {
            self.in_game(&request.game_id, token).await?
        };
        let net = self.nets.needed(&asked.rules.plugin)?;
        let plugin = asked.rules.plugin.clone();
        self.off_runtime(&plugin, move || hint(&asked, &net, plies, version))
            .await
    }

    /// The seat to act in a game in progress, for a holder of one of its
    /// seats' tokens, when its settings give hints.
    async fn in_game(&self, game_id: &str, token: Option<&str>) -> Result<(Asked, u64), ApiError> {
        let game_id = &game_id_of(game_id)?;
        let slot = self.slot(game_id);
        let mut guard = slot.live.lock().await;
        let live = self.fresh(&slot, &mut guard, game_id).await?;
        live.seat(token)?;
        let m = &live.match_state;
        if m.phase == Phase::MatchOver {
            return Err(ApiError::new(
                Reason::MatchOver,
                "the match is over: there is no seat to act",
            ));
        }
        if !m.settings.hints {
            return Err(ApiError::new(
                Reason::HintsOff,
                "this match gives no hints while it is played (its settings' hints are off)",
            ));
        }
        let seat = m.to_act().unwrap_or(m.turn);
        let asked = Asked {
            rules: live.rules.clone(),
            at: At::Game(m.variant_state.clone()),
            seat,
            dice: matches!(m.phase, Phase::Move | Phase::Decision)
                .then_some(m.dice)
                .flatten(),
            cube: cube_question(m, seat),
            decision: (m.phase == Phase::Decision)
                .then(|| m.pending_decision.clone())
                .flatten()
                .map(|d| (d, m.decision_after_play)),
            game: Some(Box::new(m.clone())),
        };
        Ok((asked, live.record.version))
    }

    /// A position of a variant, as the request gives it.
    fn position(&self, request: &pb::HintRequest) -> Result<Asked, ApiError> {
        let plugin = self.plugins.get(&request.variant).ok_or_else(|| {
            ApiError::invalid(
                "variant",
                format!(
                    "give a game_id, or a variant loaded here (not {})",
                    crate::error::quote(&request.variant)
                ),
            )
        })?;
        if !plugin.capabilities().contains(Capabilities::SETUP_POSITION) {
            return Err(ApiError::invalid(
                "board",
                "this variant cannot be set up at a position",
            ));
        }
        let board = request
            .board
            .as_ref()
            .ok_or_else(|| ApiError::invalid("board", "give the position"))?;
        let board = convert::from_api::start_board(board, plugin.checkers(), plugin.geometry())?;
        let seat = match pb::Seat::try_from(request.seat) {
            Ok(pb::Seat::White) => Seat::White,
            Ok(pb::Seat::Black) => Seat::Black,
            _ => {
                return Err(ApiError::invalid(
                    "seat",
                    "the seat to play: white or black",
                ));
            }
        };
        let dice = request
            .dice
            .as_ref()
            .ok_or_else(|| ApiError::invalid("dice", "give the dice to play"))?;
        let dice = u8::try_from(dice.die1)
            .ok()
            .zip(u8::try_from(dice.die2).ok())
            .and_then(|(a, b)| Dice::new(a, b).ok())
            .ok_or_else(|| ApiError::invalid("dice", "two dice, 1 to 6"))?;
        let options: BTreeMap<String, String> = request
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Asked {
            rules: VariantRules::new(plugin, options),
            at: At::Position(board),
            seat,
            dice: Some(dice),
            cube: None,
            decision: None,
            game: None,
        })
    }
}

/// The cube decision `seat` faces in `m`, if any.
fn cube_question(m: &Match, seat: Seat) -> Option<CubeQuestion> {
    match m.phase {
        Phase::Roll if m.double_value(seat).is_ok() => {
            Some(CubeQuestion::Double(Box::new(m.clone())))
        }
        Phase::CubeOffered => Some(CubeQuestion::Take(Box::new(m.clone()))),
        _ => None,
    }
}

/// The hint itself, calling the variant (off the runtime).
fn hint(asked: &Asked, net: &Net, plies: u8, version: u64) -> Result<pb::HintResponse, ApiError> {
    let eval = Evaluator {
        net,
        checkers: asked.rules.plugin.checkers(),
    };
    let (state, board, rolled_decision) = position(asked)?;
    let decision = asked
        .decision
        .clone()
        .or(rolled_decision.map(|d| (d, false)));
    let mut ranked_choices = Vec::new();
    if let Some((decision, after_play)) = &decision {
        let values = choices(
            &asked.rules,
            eval,
            &state,
            asked.seat,
            asked.dice,
            decision,
            *after_play,
        )
        .map_err(CommandError::Rules)?;
        let best = values
            .iter()
            .map(|v| v.equity)
            .fold(f32::NEG_INFINITY, f32::max);
        ranked_choices = decision
            .choices
            .iter()
            .zip(&values)
            .map(|(choice, value)| pb::RankedChoice {
                choice: choice.clone(),
                equity: f64::from(value.equity),
                equity_loss: f64::from(best - value.equity),
                probabilities: Some(probabilities(value)),
            })
            .collect();
        ranked_choices.sort_by(|a, b| a.equity_loss.total_cmp(&b.equity_loss));
    }
    let mut plays = Vec::new();
    // Plays once the decision is made (a decision pending in a game is
    // hinted alone; a position's roll that asks one, with its plays as
    // if the seat stayed).
    if let Some(dice) = asked.dice.filter(|_| asked.decision.is_none()) {
        let legal = asked
            .rules
            .legal_plays(&state, asked.seat, dice)
            .map_err(CommandError::Rules)?;
        let mut ranked = rank(&asked.rules, eval, &state, asked.seat, dice, &legal, plies)
            .map_err(CommandError::Rules)?;
        // Best first as the computer chooses (in a match, by what the
        // chances are worth at the score), the deepest searched first.
        let value = play_value(asked.game.as_deref(), asked.seat);
        ranked.sort_by(|a, b| {
            b.plies
                .cmp(&a.plies)
                .then(value(&b.value).total_cmp(&value(&a.value)))
        });
        let losses = losses(&ranked, &value);
        plays = ranked
            .iter()
            .zip(losses)
            .map(|(r, loss)| {
                let lp = &legal[r.index];
                pb::RankedPlay {
                    play: Some(bots::shown(&asked.rules, lp, asked.seat)),
                    equity: f64::from(r.value.equity),
                    equity_loss: f64::from(loss),
                    probabilities: Some(probabilities(&r.value)),
                    plies: u32::from(r.plies),
                }
            })
            .collect();
    }
    let cube = asked.cube.as_ref().map(|question| {
        // The position for the seat to roll (the doubler, when answering),
        // valued at the plies asked as the computer values it.
        let (roller, m) = match question {
            CubeQuestion::Double(m) => (asked.seat, m),
            CubeQuestion::Take(m) => (asked.seat.other(), m),
        };
        let value = before_roll(&asked.rules, eval, &m.variant_state, &board, roller, plies)
            .map_err(CommandError::Rules)?;
        let equities = cube_equities(m, &board, roller, &value);
        let action = match question {
            CubeQuestion::Double(_) => equities.double(),
            CubeQuestion::Take(_) => equities.answer(),
        };
        Ok::<_, ApiError>(pb::CubeHint {
            action: action.name().to_string(),
            equity: f64::from(value.equity),
            probabilities: Some(probabilities(&value)),
            no_double: f64::from(equities.no_double),
            double_take: f64::from(equities.double_take),
            double_pass: f64::from(equities.double_pass),
        })
    });
    let cube = cube.transpose()?;
    Ok(pb::HintResponse {
        version,
        seat: convert::to_api::seat(asked.seat),
        dice: asked.dice.map(|d| pb::Dice {
            die1: u32::from(d.d1),
            die2: u32::from(d.d2),
        }),
        plays,
        cube,
        choices: ranked_choices,
    })
}

/// The variant's state to play from, its board, and the decision the
/// roll asks for: a game's as it is, a position's set up and rolled (the
/// variant sees the roll).
fn position(asked: &Asked) -> Result<(Vec<u8>, Board, Option<Decision>), ApiError> {
    let rules = &asked.rules;
    let variant = |e| ApiError::from(CommandError::Rules(e));
    match (&asked.at, asked.dice) {
        (At::Game(state), _) => Ok((
            state.clone(),
            rules.plugin.board(state).map_err(variant)?,
            None,
        )),
        (At::Position(board), Some(dice)) => {
            let setup = rules
                .setup_at(board)
                .map_err(|e| ApiError::invalid("board", format!("the variant refuses it: {e}")))?;
            let rolled = rules
                .after_roll(&setup.state, asked.seat, dice)
                .map_err(variant)?;
            Ok((rolled.state, *board, rolled.decision))
        }
        (At::Position(board), None) => {
            Ok((rules.setup_at(board).map_err(variant)?.state, *board, None))
        }
    }
}

fn probabilities(e: &Evaluation) -> pb::Probabilities {
    use bg_bot::net::{LOSE_BACKGAMMON, LOSE_GAMMON, WIN, WIN_BACKGAMMON, WIN_GAMMON};
    let o = |i: usize| f64::from(e.outputs[i]);
    pb::Probabilities {
        win: o(WIN),
        win_gammon: o(WIN_GAMMON),
        win_backgammon: o(WIN_BACKGAMMON),
        lose_gammon: o(LOSE_GAMMON),
        lose_backgammon: o(LOSE_BACKGAMMON),
    }
}
