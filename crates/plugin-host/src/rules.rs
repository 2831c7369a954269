//! A loaded plugin as the engine's [`Rules`]: the bridge between the
//! match state machine and the plugin boundary.

use std::sync::Arc;

use bg_engine::game::{
    FirstMove, Opening, PendingDecision, Rules, RulesError, ScoreEvent, VariantOutcome,
    VariantSetup, VariantStep,
};
use bg_engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::{Options, proto};

use crate::{Plugin, PluginError};

/// A variant with the options of one game.
#[derive(Clone, Debug)]
pub struct VariantRules {
    pub plugin: Arc<Plugin>,
    pub options: Options,
    /// Start every game from this board instead of the variant's setup
    /// (analysis and tests; needs the variant's setup-position capability).
    pub start: Option<Board>,
}

impl VariantRules {
    pub fn new(plugin: Arc<Plugin>, options: Options) -> VariantRules {
        VariantRules {
            plugin,
            options,
            start: None,
        }
    }
}

impl From<PluginError> for RulesError {
    fn from(e: PluginError) -> RulesError {
        RulesError {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// `GameSetup.first_move` as the plugin protocol spells it (variant.proto);
/// empty, or a word this host does not know, leaves it to the settings.
fn first_move(name: &str) -> Option<FirstMove> {
    match name {
        "loser" => Some(FirstMove::Loser),
        "winner" => Some(FirstMove::Winner),
        "alternate" => Some(FirstMove::Alternate),
        "opening_roll" => Some(FirstMove::OpeningRoll),
        _ => None,
    }
}

fn seat(index: Option<u32>) -> Option<Seat> {
    index
        .and_then(|i| u8::try_from(i).ok())
        .and_then(Seat::from_index)
}

fn outcome(o: proto::Outcome) -> VariantOutcome {
    VariantOutcome {
        winner: seat(o.winner),
        level: o.level,
        kind: o.kind,
        by_bearing_off: o.by_bearing_off,
    }
}

fn step(t: proto::Transition) -> VariantStep {
    VariantStep {
        state: t.state,
        outcome: t.outcome.map(outcome),
        events: t
            .events
            .into_iter()
            .filter_map(|e| {
                Some(ScoreEvent {
                    seat: seat(Some(e.seat))?,
                    points: e.points,
                    reason: e.reason,
                })
            })
            .collect(),
        decision: t.decision.and_then(|d| {
            Some(PendingDecision {
                seat: seat(Some(d.seat))?,
                choices: d.choices,
                prompt: d.prompt,
            })
        }),
    }
}

impl Rules for VariantRules {
    fn max_win_level(&self) -> u32 {
        self.plugin.max_win_level()
    }

    fn win_kind(&self, level: u32) -> String {
        self.plugin.win_kind(level)
    }

    fn new_game(&self) -> Result<VariantSetup, RulesError> {
        let setup = match &self.start {
            Some(board) => self.plugin.setup_position(board, &self.options)?,
            None => self.plugin.new_game(&self.options)?,
        };
        Ok(VariantSetup {
            opening: match proto::Opening::try_from(setup.opening) {
                Ok(proto::Opening::ThrowAgain) => Opening::ThrowAgain,
                _ => Opening::PlayOpeningDice,
            },
            cube: setup.cube,
            first_move: first_move(&setup.first_move),
            state: setup.state,
        })
    }

    fn legal_plays(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Vec<LegalPlay>, RulesError> {
        let mut plays = Vec::new();
        self.plugin.legal_plays(state, seat, dice, &mut plays)?;
        Ok(plays)
    }

    fn apply_play(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        play: &Play,
    ) -> Result<VariantStep, RulesError> {
        Ok(step(self.plugin.apply_play(state, seat, dice, play)?))
    }

    fn after_roll(&self, state: &[u8], seat: Seat, dice: Dice) -> Result<VariantStep, RulesError> {
        Ok(step(self.plugin.after_roll(state, seat, dice)?))
    }

    fn decide(&self, state: &[u8], seat: Seat, choice: &str) -> Result<VariantStep, RulesError> {
        Ok(step(self.plugin.decide(state, seat, choice)?))
    }

    fn concede(&self, state: &[u8], loser: Seat) -> Result<VariantOutcome, RulesError> {
        Ok(outcome(self.plugin.concede(state, loser)?))
    }
}
