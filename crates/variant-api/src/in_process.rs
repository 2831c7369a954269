//! A variant as the engine's [`Rules`], in this process: the state kept
//! as the bytes the variant's [`StateCodec`](crate::StateCodec) writes,
//! as the plugin host keeps it, and every play checked by [`apply_play`]
//! as at the C ABI. The server plays variants loaded from plugins
//! (`bg-plugin-host`); this is for the code that runs a variant's crate
//! directly (the computer player's duels and tests, offline tools), so
//! that it plays through the same [`Rules`] and the same search as the
//! service.

use bg_engine::game::{Outcome, Rules, RulesError, Scoreboard, Setup, Transition};
use bg_engine::{Board, Dice, LegalPlay, Play, Seat};

use crate::{Options, Variant, VariantError, apply_play};

/// `variant` with the options of its games.
#[derive(Clone, Debug)]
pub struct InProcess<V> {
    pub variant: V,
    pub options: Options,
}

impl<V: Variant> InProcess<V> {
    /// `variant` with its default options.
    pub fn new(variant: V) -> InProcess<V> {
        InProcess {
            variant,
            options: Options::new(),
        }
    }

    fn state(&self, bytes: &[u8]) -> Result<V::State, RulesError> {
        self.variant.decode_state(bytes).map_err(rules_error)
    }

    fn bytes(&self, t: Transition<V::State>) -> Transition<Vec<u8>> {
        Transition {
            state: self.variant.encode_state(&t.state),
            events: t.events,
            outcome: t.outcome,
            decision: t.decision,
            next_roller: t.next_roller,
        }
    }

    fn setup(&self, s: Setup<V::State>) -> Setup<Vec<u8>> {
        Setup {
            state: self.variant.encode_state(&s.state),
            opening: s.opening,
            cube: s.cube,
            first_move: s.first_move,
        }
    }

    /// A game of this variant starting from `board`.
    pub fn setup_at(&self, board: &Board) -> Result<Setup<Vec<u8>>, RulesError> {
        let s = self
            .variant
            .setup_position(board, &self.options)
            .map_err(rules_error)?;
        Ok(self.setup(s))
    }
}

fn rules_error(e: VariantError) -> RulesError {
    RulesError {
        kind: e.kind(),
        message: e.to_string(),
    }
}

impl<V: Variant> Rules for InProcess<V> {
    fn new_game(&self) -> Result<Setup<Vec<u8>>, RulesError> {
        let s = self.variant.new_game(&self.options).map_err(rules_error)?;
        Ok(self.setup(s))
    }

    fn legal_plays(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Vec<LegalPlay>, RulesError> {
        let mut plays = Vec::new();
        self.variant
            .legal_plays(&self.state(state)?, seat, dice, &mut plays);
        Ok(plays)
    }

    fn apply_play(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        play: &Play,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        let t = apply_play(&self.variant, &self.state(state)?, seat, dice, play)
            .map_err(rules_error)?;
        Ok(self.bytes(t))
    }

    fn after_roll(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        let t = self.variant.after_roll(&self.state(state)?, seat, dice);
        Ok(self.bytes(t))
    }

    fn decide(
        &self,
        state: &[u8],
        seat: Seat,
        choice: &str,
    ) -> Result<Transition<Vec<u8>>, RulesError> {
        let t = self
            .variant
            .decide(&self.state(state)?, seat, choice)
            .map_err(rules_error)?;
        Ok(self.bytes(t))
    }

    fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        Ok(self.variant.concede(&self.state(state)?, loser))
    }

    fn board(&self, state: &[u8]) -> Result<Board, RulesError> {
        Ok(self.variant.board(&self.state(state)?))
    }

    fn scoreboard(&self, state: &[u8]) -> Result<Option<Scoreboard>, RulesError> {
        Ok(self.variant.scoreboard(&self.state(state)?))
    }

    fn max_win_level(&self) -> u32 {
        self.variant.info().max_win_level_or_default()
    }

    fn win_kind(&self, level: u32) -> String {
        self.variant.info().win_kind_name(level)
    }
}
