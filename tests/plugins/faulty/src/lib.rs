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
//! - `slow`: every move takes 400 ms;
//! - `abort`: a move aborts the process (`std::process::abort`);
//! - `segfault`: a move writes through an invalid pointer (SIGSEGV);
//! - `allocate`: a move allocates memory, and touches it, without end;
//! - `garbage`: a move answers bytes that are no message at all (its ABI
//!   function is wrapped: see `bg_variant_entry` below);
//! - `escape`: a move tries to open a TCP socket and to run a program
//!   (`/bin/true`), and panics if either works; refused both, it behaves.
//!
//! The fault is stored in the game state, so it follows the game.
//!
//! And one at load: when the file named by the environment variable
//! `BG_TEST_FAULTY_CRASH_AT_LOAD_IF` exists, `info` aborts (a plugin
//! whose worker process crashes as it starts).

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
    Abort = 8,
    Segfault = 9,
    Allocate = 10,
    Garbage = 11,
    Escape = 12,
}

/// Whether a `slow_once` move was slow already in this process.
static SLOWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[derive(Clone, Copy, Debug)]
pub struct FaultyState {
    inner: StandardState,
    fault: Fault,
}

const FAULTS: [&str; 13] = [
    "none",
    "panic",
    "extra_checker",
    "accept_anything",
    "undeclared_name",
    "spin",
    "slow_once",
    "slow",
    "abort",
    "segfault",
    "allocate",
    "garbage",
    "escape",
];

/// Every fault, by its number in the state's last byte.
const BY_NUMBER: [Fault; 13] = [
    Fault::None,
    Fault::Panic,
    Fault::ExtraChecker,
    Fault::AcceptAnything,
    Fault::UndeclaredName,
    Fault::Spin,
    Fault::SlowOnce,
    Fault::Slow,
    Fault::Abort,
    Fault::Segfault,
    Fault::Allocate,
    Fault::Garbage,
    Fault::Escape,
];

impl Variant for Faulty {
    type State = FaultyState;

    fn info(&self) -> VariantInfo {
        if let Some(marker) = std::env::var_os("BG_TEST_FAULTY_CRASH_AT_LOAD_IF")
            && std::path::Path::new(&marker).exists()
        {
            std::process::abort();
        }
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
        let name = option_value(options, "fault", &FAULTS, "none")?;
        let number = FAULTS.iter().position(|f| *f == name).unwrap_or(0);
        let fault = BY_NUMBER[number];
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
            Fault::Abort => std::process::abort(),
            // SAFETY: none; a segmentation fault on purpose (address 16
            // is never mapped).
            Fault::Segfault => unsafe { std::ptr::write_volatile(16 as *mut u64, 1) },
            Fault::Escape => {
                if let Ok(socket) = std::net::TcpListener::bind("127.0.0.1:0") {
                    panic!(
                        "faulty plugin: opened a socket on {:?}",
                        socket.local_addr()
                    );
                }
                if let Ok(status) = std::process::Command::new("/bin/true").status() {
                    panic!("faulty plugin: ran /bin/true ({status})");
                }
            }
            Fault::Allocate => {
                let mut held: Vec<Vec<u8>> = Vec::new();
                loop {
                    held.push(vec![1u8; 16 << 20]);
                    std::hint::black_box(&held);
                }
            }
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
        let fault = BY_NUMBER
            .get(usize::from(fault))
            .copied()
            .unwrap_or(Fault::None);
        Ok(FaultyState {
            inner: Standard.decode_state(inner)?,
            fault,
        })
    }
}

// Built without FLAG_CHECKS_PLAYS (its apply_play checks nothing), so that
// `accept_anything` tests the host's own check of such plugins; and with
// its entry point written out, to wrap `apply_play` for `garbage`.
mod entry {
    use std::sync::OnceLock;

    use bg_variant_api::abi::{Buffer, STATUS_OK, Status, VariantDescriptor};
    use bg_variant_api::engine::{Dice, Play};

    use super::{Fault, Faulty};

    type Shims = bg_variant_api::__private::Shims<Faulty, false>;

    static GENERATED: OnceLock<VariantDescriptor> = OnceLock::new();
    static WRAPPED: OnceLock<VariantDescriptor> = OnceLock::new();

    /// `apply_play`, answering garbage when the state's fault says so.
    unsafe extern "C" fn apply_play(
        state: *const u8,
        len: usize,
        seat: u8,
        dice: Dice,
        play: *const Play,
        out: *mut Buffer,
    ) -> Status {
        // SAFETY: the host passes `len` readable bytes.
        let garbage = len > 0 && unsafe { *state.add(len - 1) } == Fault::Garbage as u8;
        if !garbage {
            // SAFETY: the same arguments, to the generated function.
            return unsafe { Shims::apply_play(state, len, seat, dice, play, out) };
        }
        // SAFETY: `out` is the host's, valid for the call.
        unsafe { *out = Buffer::from_vec(vec![0xff, 0xfe, 0x07, 0x00, 0x13, 0x37]) };
        STATUS_OK
    }

    /// The plugin entry point (see `bg_variant_api::abi`).
    ///
    /// # Safety
    /// Called by the plugin host through `dlsym`; takes no arguments.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn bg_variant_entry() -> *const VariantDescriptor {
        std::panic::catch_unwind(|| {
            // SAFETY: the generated descriptor lives in a static.
            let d = unsafe { &*Shims::descriptor(&GENERATED) };
            let wrapped = WRAPPED.get_or_init(|| VariantDescriptor {
                apply_play: Some(apply_play),
                ..*d
            });
            std::ptr::from_ref(wrapped)
        })
        .unwrap_or(std::ptr::null())
    }
}
