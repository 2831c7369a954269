//! A test plugin standing for a variant someone adds by dropping a file
//! into a running server's plugin folder: Nackgammon, standard backgammon
//! from the starting position 24x2 23x2 13x4 8x3 6x4 (docs/rules.md §1.1,
//! after DailyGammon's help). It is not shipped (the standard plugin
//! offers the same setup as an option); its own name lets the tests tell
//! it apart from every shipped variant.

use bg_standard_rules::{Standard, StandardState};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::{
    Capabilities, Options, Outcome, Setup, Transition, Variant, VariantError, VariantInfo,
    check_option_names,
};

#[derive(Default)]
pub struct Nackgammon;

impl Variant for Nackgammon {
    type State = StandardState;

    fn info(&self) -> VariantInfo {
        VariantInfo {
            name: "nackgammon".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Test plugin: standard rules from the Nackgammon setup.".into(),
            options: Vec::new(),
            max_win_level: 3,
            // Unnamed: the host names its wins as on the standard board.
            win_kinds: Vec::new(),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Standard.capabilities()
    }

    fn new_game(&self, options: &Options) -> Result<Setup<StandardState>, VariantError> {
        check_option_names(options, &[])?;
        let nack = Options::from([("setup".to_string(), "nackgammon".to_string())]);
        Standard.new_game(&nack)
    }

    fn board(&self, state: &StandardState) -> Board {
        Standard.board(state)
    }

    fn legal_plays(&self, state: &StandardState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        Standard.legal_plays(state, seat, dice, out)
    }

    fn play_result(
        &self,
        state: &StandardState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        Standard.play_result(state, seat, play)
    }

    fn after_play(
        &self,
        state: &StandardState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<StandardState> {
        Standard.after_play(state, seat, chosen)
    }

    fn concede(&self, state: &StandardState, loser: Seat) -> Outcome {
        Standard.concede(state, loser)
    }
}

bg_variant_api::export_variant!(Nackgammon);
