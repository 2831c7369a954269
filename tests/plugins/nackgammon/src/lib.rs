//! A test plugin standing for a variant someone adds by dropping a file
//! into a running server's plugin folder: Nackgammon, standard backgammon
//! from the starting position 24x2 23x2 13x4 8x3 6x4 (docs/rules.md §1.1,
//! after DailyGammon's help). It is not shipped (the standard plugin
//! offers the same setup as an option); its own name lets the tests tell
//! it apart from every shipped variant. It shows a tally and a marker of
//! its own ("pips", "blot"), declared in its info: a new variant's names
//! reach the API with no change in the engine, the host or the proto.

use bg_standard_rules::{Standard, StandardState};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::{
    Capabilities, Label, Marker, Options, Outcome, Scoreboard, Setup, Tally, Transition, Variant,
    VariantError, VariantInfo, check_option_names,
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
            tallies: vec![Label {
                name: "pips".into(),
                description: "The seat's pip count: what it must still move to bear off.".into(),
            }],
            markers: vec![Label {
                name: "blot".into(),
                description: "A lone checker, which can be hit.".into(),
            }],
            ..Default::default()
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

    fn scoreboard(&self, state: &StandardState) -> Option<Scoreboard> {
        let board = Standard.board(state);
        let pips = |seat: Seat| i64::from(board.pip_count(seat));
        let markers = Seat::BOTH
            .into_iter()
            .flat_map(|seat| {
                (1..=24u8)
                    .filter(move |&point| board.count(seat, point) == 1)
                    .map(move |point| Marker {
                        name: "blot".into(),
                        seat,
                        point,
                    })
            })
            .collect();
        Some(Scoreboard {
            tallies: vec![Tally {
                name: "pips".into(),
                seats: [pips(Seat::White), pips(Seat::Black)],
            }],
            markers,
            ..Scoreboard::default()
        })
    }
}

bg_variant_api::export_variant!(Nackgammon);
