//! A loaded plugin as the engine's [`Rules`]: the bridge between the
//! match state machine and the plugin boundary.

use std::sync::Arc;

use bg_engine::game::{Outcome, Rules, RulesError, Scoreboard, Setup, Transition};
use bg_engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::Options;

use crate::Plugin;

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

impl VariantRules {
    /// The variant's state of a game starting from `board` (the first game
    /// of a match taken up at a position).
    pub fn setup_at(&self, board: &Board) -> Result<Setup<Vec<u8>>, RulesError> {
        self.plugin.setup_position(board, &self.options)
    }
}

impl Rules for VariantRules {
    fn max_win_level(&self) -> u32 {
        self.plugin.max_win_level()
    }

    fn win_kind(&self, level: u32) -> String {
        self.plugin.win_kind(level)
    }

    fn new_game(&self) -> Result<Setup<Vec<u8>>, RulesError> {
        match &self.start {
            Some(board) => self.plugin.setup_position(board, &self.options),
            None => self.plugin.new_game(&self.options),
        }
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
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        self.plugin.apply_play(state, seat, dice, play)
    }

    fn after_roll(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        self.plugin.after_roll(state, seat, dice)
    }

    fn decide(
        &self,
        state: &[u8],
        seat: Seat,
        choice: &str,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        self.plugin.decide(state, seat, choice)
    }

    fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        self.plugin.concede(state, loser)
    }

    fn board(&self, state: &[u8]) -> Result<Board, RulesError> {
        self.plugin.board(state)
    }

    fn scoreboard(&self, state: &[u8]) -> Result<Option<Scoreboard>, RulesError> {
        self.plugin.scoreboard(state)
    }
}
