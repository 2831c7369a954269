//! A test plugin: standard backgammon that misbehaves on request, so the
//! host's guards can be tested against a real library. Option `fault`:
//! - `none`: behaves;
//! - `panic`: `legal_plays` and `apply_play` panic;
//! - `extra_checker`: every legal play's result has a 16th checker;
//! - `accept_anything`: `apply_play` accepts any play and returns a board
//!   that is not among the legal results;
//! - `undeclared_name`: its scoreboard shows a tally its info does not
//!   declare (it declares "moves", and shows "not_declared");
//! - `spin`: a move (`apply_play`) never returns: it spins for ever;
//! - `slow_once`: the first move in the process takes 1.5 s, then it
//!   behaves;
//! - `slow`: every move takes 400 ms.
//!
//! The fault is stored in the game state, so it follows the game.

use bg_standard_rules::{Standard, StandardState};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::{
    Capabilities, Label, OptionSpec, Options, Outcome, Scoreboard, Setup, StateCodec, Tally,
    Transition, Variant, VariantError, VariantInfo, check_option_names, option_value,
};

#[derive(Default)]
pub struct Faulty;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None = 0,
    Panic = 1,
    ExtraChecker = 2,
    AcceptAnything = 3,
    UndeclaredName = 4,
    Spin = 5,
    SlowOnce = 6,
    Slow = 7,
}

/// Whether a `slow_once` move was slow already in this process.
static SLOWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[derive(Clone, Copy, Debug)]
pub struct FaultyState {
    inner: StandardState,
    fault: Fault,
}

const FAULTS: [&str; 8] = [
    "none",
    "panic",
    "extra_checker",
    "accept_anything",
    "undeclared_name",
    "spin",
    "slow_once",
    "slow",
];

impl Variant for Faulty {
    type State = FaultyState;

    fn info(&self) -> VariantInfo {
        VariantInfo {
            name: "faulty".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Test plugin: standard rules that fail on request.".into(),
            options: vec![OptionSpec {
                name: "fault".into(),
                description: "How to misbehave.".into(),
                allowed_values: FAULTS.iter().map(|s| s.to_string()).collect(),
                default_value: "none".into(),
            }],
            max_win_level: 3,
            win_kinds: Vec::new(),
            tallies: vec![Label {
                name: "moves".into(),
                description: "Always 0: a tally for the host to check names against.".into(),
            }],
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        Standard.capabilities()
    }

    fn new_game(&self, options: &Options) -> Result<Setup<FaultyState>, VariantError> {
        check_option_names(options, &["fault"])?;
        let fault = match option_value(options, "fault", &FAULTS, "none")? {
            "panic" => Fault::Panic,
            "extra_checker" => Fault::ExtraChecker,
            "accept_anything" => Fault::AcceptAnything,
            "undeclared_name" => Fault::UndeclaredName,
            "spin" => Fault::Spin,
            "slow_once" => Fault::SlowOnce,
            "slow" => Fault::Slow,
            _ => Fault::None,
        };
        let setup = Standard.new_game(&Options::new())?;
        Ok(Setup {
            state: FaultyState {
                inner: setup.state,
                fault,
            },
            opening: setup.opening,
            cube: setup.cube,
            first_move: setup.first_move,
        })
    }

    fn board(&self, state: &FaultyState) -> Board {
        state.inner.board
    }

    fn legal_plays(&self, state: &FaultyState, seat: Seat, dice: Dice, out: &mut Vec<LegalPlay>) {
        if state.fault == Fault::Panic {
            panic!("faulty plugin: legal_plays panics on purpose");
        }
        Standard.legal_plays(&state.inner, seat, dice, out);
        if state.fault == Fault::ExtraChecker {
            for lp in out.iter_mut() {
                lp.result.checkers[seat.index()][1] += 1;
            }
        }
    }

    fn play_result(
        &self,
        state: &FaultyState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        match state.fault {
            Fault::Panic => panic!("faulty plugin: apply_play panics on purpose"),
            Fault::Spin => loop {
                std::hint::spin_loop();
            },
            Fault::SlowOnce if !SLOWED.swap(true, std::sync::atomic::Ordering::SeqCst) => {
                std::thread::sleep(std::time::Duration::from_millis(1500));
            }
            Fault::Slow => std::thread::sleep(std::time::Duration::from_millis(400)),
            _ => {}
        }
        Standard.play_result(&state.inner, seat, play)
    }

    fn after_play(
        &self,
        state: &FaultyState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<FaultyState> {
        if state.fault == Fault::AcceptAnything {
            // Swap two checkers' places: 15 a side still, but not the
            // chosen play's result.
            let mut inner = state.inner;
            let me = &mut inner.board.checkers[seat.index()];
            let from = (1..=24).find(|&p| me[p] > 0).unwrap_or(1);
            me[from] -= 1;
            me[0] += 1;
            return Transition::to(FaultyState {
                inner,
                fault: state.fault,
            });
        }
        let t = Standard.after_play(&state.inner, seat, chosen);
        Transition {
            state: FaultyState {
                inner: t.state,
                fault: state.fault,
            },
            events: t.events,
            outcome: t.outcome,
            decision: t.decision,
            next_roller: t.next_roller,
        }
    }

    fn concede(&self, state: &FaultyState, loser: Seat) -> Outcome {
        Standard.concede(&state.inner, loser)
    }

    fn scoreboard(&self, state: &FaultyState) -> Option<Scoreboard> {
        let name = match state.fault {
            Fault::UndeclaredName => "not_declared",
            _ => "moves",
        };
        Some(Scoreboard {
            tallies: vec![Tally {
                name: name.into(),
                seats: [0, 0],
            }],
            ..Scoreboard::default()
        })
    }
}

impl StateCodec for FaultyState {
    fn encode(&self) -> Vec<u8> {
        let state = self;
        let mut bytes = Standard.encode_state(&state.inner);
        bytes.push(state.fault as u8);
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<FaultyState, VariantError> {
        let (&fault, inner) = bytes
            .split_last()
            .ok_or_else(|| VariantError::InvalidInput("empty state".into()))?;
        let fault = match fault {
            1 => Fault::Panic,
            2 => Fault::ExtraChecker,
            3 => Fault::AcceptAnything,
            4 => Fault::UndeclaredName,
            5 => Fault::Spin,
            6 => Fault::SlowOnce,
            7 => Fault::Slow,
            _ => Fault::None,
        };
        Ok(FaultyState {
            inner: Standard.decode_state(inner)?,
            fault,
        })
    }
}

// Built without FLAG_CHECKS_PLAYS (its apply_play checks nothing), so that
// `accept_anything` tests the host's own check of such plugins.
bg_variant_api::export_variant!(Faulty, unchecked_plays_for_tests);
