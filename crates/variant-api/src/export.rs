//! The shims behind [`crate::export_variant!`]: each converts the C
//! arguments, calls the trait inside `catch_unwind`, and encodes the answer.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bg_engine::{Board, Dice, LegalPlay, Play, Seat};
use prost::Message;

use crate::abi::{self, Buffer, Status};
use crate::{Setup, Transition, Variant, VariantError, proto, wire};

/// Runs `f`, turning a panic into [`abi::STATUS_PANIC`] with its message in
/// `out`, and an error into its status with the message in `out`.
fn guarded(out: *mut Buffer, f: impl FnOnce() -> Result<Vec<u8>, VariantError>) -> Status {
    let (status, bytes) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(bytes)) => (abi::STATUS_OK, bytes),
        Ok(Err(error)) => (status_of(&error), error.to_string().into_bytes()),
        Err(panic) => {
            let message = panic_message(panic.as_ref());
            // Dropping the payload could run a Drop that panics again,
            // outside any catch_unwind: leak it instead.
            std::mem::forget(panic);
            (abi::STATUS_PANIC, message.into_bytes())
        }
    };
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable Buffer slot.
        unsafe { out.write(Buffer::from_vec(bytes)) };
    }
    status
}

fn status_of(error: &VariantError) -> Status {
    error.kind().status()
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_string());
    format!("variant panicked: {text}")
}

/// # Safety
/// `ptr` must be valid for `len` bytes (or `len` zero).
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn seat(index: u8) -> Result<Seat, VariantError> {
    Seat::from_index(index).ok_or_else(|| VariantError::InvalidInput(format!("seat {index}")))
}

fn options(bytes: &[u8]) -> Result<crate::Options, VariantError> {
    let options = proto::Options::decode(bytes)
        .map_err(|e| VariantError::InvalidInput(format!("options: {e}")))?;
    Ok(options.values.into_iter().collect())
}

fn encode_setup<V: Variant>(variant: &V, setup: Setup<V::State>) -> Vec<u8> {
    wire::setup_message(Setup {
        state: variant.encode_state(&setup.state),
        opening: setup.opening,
        cube: setup.cube,
        first_move: setup.first_move,
    })
    .encode_to_vec()
}

fn encode_transition<V: Variant>(variant: &V, t: Transition<V::State>) -> Vec<u8> {
    wire::transition_message(Transition {
        state: variant.encode_state(&t.state),
        events: t.events,
        outcome: t.outcome,
        decision: t.decision,
        next_roller: t.next_roller,
    })
    .encode_to_vec()
}

/// The generic shims, instantiated for one variant by the export macro.
/// `CHECKED` false is only for the project's tests: it builds a plugin
/// without `FLAG_CHECKS_PLAYS` (its `apply_play` checks nothing), so that
/// the host's own check of such plugins is tested.
pub struct Shims<V, const CHECKED: bool = true>(std::marker::PhantomData<V>);

thread_local! {
    /// Reused between `legal_plays` calls so the hot path does not allocate.
    static PLAYS: RefCell<Vec<LegalPlay>> = RefCell::new(Vec::with_capacity(256));
}

// Each shim's safety contract is that of the function-pointer type it
// fills in the descriptor (see `abi`): the host passes pointers valid for
// the call. They are `pub` only so the export macro can name them.
#[allow(clippy::missing_safety_doc)]
impl<V: Variant, const CHECKED: bool> Shims<V, CHECKED> {
    fn variant() -> V {
        V::default()
    }

    pub unsafe extern "C" fn info(out: *mut Buffer) -> Status {
        guarded(out, || Ok(Self::variant().info().encode_to_vec()))
    }

    pub unsafe extern "C" fn new_game(
        options_ptr: *const u8,
        len: usize,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let options = options(unsafe { bytes(options_ptr, len) })?;
            Ok(encode_setup(&v, v.new_game(&options)?))
        })
    }

    pub unsafe extern "C" fn setup_position(
        board: *const Board,
        options_ptr: *const u8,
        len: usize,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes a valid board and `len` readable bytes.
            let board = unsafe { board.as_ref() }
                .ok_or_else(|| VariantError::InvalidInput("no board".into()))?;
            let options = options(unsafe { bytes(options_ptr, len) })?;
            Ok(encode_setup(&v, v.setup_position(board, &options)?))
        })
    }

    pub unsafe extern "C" fn board(
        state: *const u8,
        len: usize,
        board: *mut Board,
        error: *mut Buffer,
    ) -> Status {
        let mut result = Board::EMPTY;
        let status = guarded(error, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            result = v.board(&state);
            Ok(Vec::new())
        });
        if status == abi::STATUS_OK && !board.is_null() {
            // SAFETY: the host passes a writable board.
            unsafe { board.write(result) };
        }
        status
    }

    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "C" fn legal_plays(
        state: *const u8,
        len: usize,
        seat_index: u8,
        dice: Dice,
        plays: *mut LegalPlay,
        capacity: usize,
        count: *mut usize,
        error: *mut Buffer,
    ) -> Status {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            let seat = seat(seat_index)?;
            Dice::new(dice.d1, dice.d2).map_err(|e| VariantError::InvalidInput(e.to_string()))?;
            PLAYS.with_borrow_mut(|found| {
                found.clear();
                v.legal_plays(&state, seat, dice, found);
                if !count.is_null() {
                    // SAFETY: the host passes a writable count.
                    unsafe { count.write(found.len()) };
                }
                if found.len() > capacity {
                    return Ok(abi::STATUS_BUFFER_TOO_SMALL);
                }
                // SAFETY: the host's array holds `capacity >= found.len()` plays.
                unsafe { copy_plays(found, plays) };
                Ok(abi::STATUS_OK)
            })
        }));
        match outcome {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => guarded(error, || Err(e)),
            Err(panic) => {
                let message = panic_message(panic.as_ref());
                std::mem::forget(panic);
                guarded(error, || Ok(message.into_bytes()));
                abi::STATUS_PANIC
            }
        }
    }

    pub unsafe extern "C" fn apply_play(
        state: *const u8,
        len: usize,
        seat_index: u8,
        dice: Dice,
        play: *const Play,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes and a valid play.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            let play = unsafe { play.as_ref() }
                .ok_or_else(|| VariantError::InvalidInput("no play".into()))?;
            let dice = Dice::new(dice.d1, dice.d2)
                .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
            let seat = seat(seat_index)?;
            let transition = if CHECKED {
                crate::apply_play(&v, &state, seat, dice, play)?
            } else {
                // Tests only: a plugin that checks nothing.
                let result = v.play_result(&state, seat, play)?;
                v.after_play(
                    &state,
                    seat,
                    &LegalPlay {
                        play: *play,
                        result,
                    },
                )
            };
            Ok(encode_transition(&v, transition))
        })
    }

    pub unsafe extern "C" fn after_roll(
        state: *const u8,
        len: usize,
        seat_index: u8,
        dice: Dice,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            let dice = Dice::new(dice.d1, dice.d2)
                .map_err(|e| VariantError::InvalidInput(e.to_string()))?;
            Ok(encode_transition(
                &v,
                v.after_roll(&state, seat(seat_index)?, dice),
            ))
        })
    }

    pub unsafe extern "C" fn decide(
        state: *const u8,
        len: usize,
        seat_index: u8,
        choice: *const u8,
        choice_len: usize,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes readable bytes for both.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            let choice = std::str::from_utf8(unsafe { bytes(choice, choice_len) })
                .map_err(|_| VariantError::InvalidInput("choice is not UTF-8".into()))?;
            Ok(encode_transition(
                &v,
                v.decide(&state, seat(seat_index)?, choice)?,
            ))
        })
    }

    pub unsafe extern "C" fn concede(
        state: *const u8,
        len: usize,
        loser: u8,
        out: *mut Buffer,
    ) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            Ok(wire::outcome_message(v.concede(&state, seat(loser)?)).encode_to_vec())
        })
    }

    pub unsafe extern "C" fn scoreboard(state: *const u8, len: usize, out: *mut Buffer) -> Status {
        guarded(out, || {
            let v = Self::variant();
            // SAFETY: the host passes `len` readable bytes.
            let state = v.decode_state(unsafe { bytes(state, len) })?;
            Ok(v.scoreboard(&state)
                .map(|b| wire::scoreboard_message(b).encode_to_vec())
                .unwrap_or_default())
        })
    }

    pub unsafe extern "C" fn free_buffer(buffer: Buffer) {
        // SAFETY: the host only returns buffers this library allocated.
        drop(unsafe { buffer.into_vec() });
    }

    /// The descriptor for `V`, built once.
    pub fn descriptor(
        cell: &'static std::sync::OnceLock<abi::VariantDescriptor>,
    ) -> *const abi::VariantDescriptor {
        cell.get_or_init(|| {
            let v = Self::variant();
            let info = v.info();
            // Leaked once per process: the descriptor must outlive every call.
            let name: &'static str = Box::leak(info.name.into_boxed_str());
            let version: &'static str = Box::leak(info.version.into_boxed_str());
            abi::VariantDescriptor {
                abi_major: abi::ABI_MAJOR,
                abi_minor: abi::ABI_MINOR,
                struct_size: std::mem::size_of::<abi::VariantDescriptor>() as u32,
                flags: if cfg!(panic = "unwind") {
                    abi::FLAG_PANIC_UNWIND
                } else {
                    0
                } | if CHECKED { abi::FLAG_CHECKS_PLAYS } else { 0 },
                layout: abi::layout_fingerprint(),
                name: abi::StrRef::from_static(name),
                version: abi::StrRef::from_static(version),
                api_version: abi::StrRef::from_static(env!("CARGO_PKG_VERSION")),
                capabilities: v.capabilities().0,
                info: Some(Self::info),
                new_game: Some(Self::new_game),
                setup_position: Some(Self::setup_position),
                board: Some(Self::board),
                legal_plays: Some(Self::legal_plays),
                apply_play: Some(Self::apply_play),
                after_roll: Some(Self::after_roll),
                decide: Some(Self::decide),
                concede: Some(Self::concede),
                free_buffer: Some(Self::free_buffer),
                scoreboard: Some(Self::scoreboard),
            }
        })
    }
}

/// Exports a [`Variant`] as a plugin: generates the C entry point the host
/// looks up. Use once, in the plugin crate's root.
///
/// ```text
/// #[derive(Default)]
/// pub struct MyVariant;
/// impl bg_variant_api::Variant for MyVariant { /* ... */ }
/// bg_variant_api::export_variant!(MyVariant);
/// ```
#[macro_export]
macro_rules! export_variant {
    ($variant:ty) => {
        $crate::export_variant!(@with $crate::__private::Shims::<$variant>);
    };
    // The project's tests only: a plugin without FLAG_CHECKS_PLAYS.
    ($variant:ty, unchecked_plays_for_tests) => {
        $crate::export_variant!(@with $crate::__private::Shims::<$variant, false>);
    };
    (@with $shims:ty) => {
        /// The plugin entry point (see `bg_variant_api::abi`).
        ///
        /// # Safety
        /// Called by the plugin host through `dlsym`; takes no arguments.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn bg_variant_entry() -> *const $crate::abi::VariantDescriptor {
            static DESCRIPTOR: ::std::sync::OnceLock<$crate::abi::VariantDescriptor> =
                ::std::sync::OnceLock::new();
            // A panic while building the descriptor must not unwind into C.
            ::std::panic::catch_unwind(|| {
                <$shims>::descriptor(&DESCRIPTOR)
            })
            .unwrap_or(::std::ptr::null())
        }
    };
}

#[doc(hidden)]
pub mod private {
    pub use super::Shims;

    use crate::VariantError;

    /// The format byte [`serde_state!`](crate::serde_state)'s bytes
    /// begin with, before the JSON.
    const JSON_STATE: u8 = b'J';

    /// A serde state as [`serde_state!`](crate::serde_state) stores it.
    pub fn encode_json<T: serde::Serialize>(state: &T) -> Vec<u8> {
        let mut bytes = vec![JSON_STATE];
        // A state serde cannot write (a map with keys that are not
        // strings) is the variant's bug: the panic is caught at the
        // boundary and reported as a fault of the plugin.
        serde_json::to_writer(&mut bytes, state)
            .unwrap_or_else(|e| panic!("the state cannot be written as JSON: {e}"));
        bytes
    }

    /// Bytes [`encode_json`] wrote, read back; anything else refused.
    pub fn decode_json<T: serde::de::DeserializeOwned>(
        bytes: &[u8],
        name: &str,
    ) -> Result<T, VariantError> {
        match bytes.split_first() {
            Some((&JSON_STATE, json)) => serde_json::from_slice(json)
                .map_err(|e| VariantError::InvalidInput(format!("not a {name}: {e}"))),
            _ => Err(VariantError::InvalidInput(format!(
                "not a {name}: no JSON state format byte"
            ))),
        }
    }
}

/// Copies plays to the host's array in blocks of at most 1 KiB. One large
/// copy goes through `rep movsb`, which is much slower on some virtual
/// machines (on the project's machines it took a sixth of the whole call);
/// small blocks use vector moves.
///
/// # Safety
/// `to` must be valid for writing `plays.len()` plays.
unsafe fn copy_plays(plays: &[LegalPlay], to: *mut LegalPlay) {
    const BLOCK: usize = 1024 / std::mem::size_of::<LegalPlay>();
    for (i, block) in plays.chunks(BLOCK).enumerate() {
        // SAFETY: within the `plays.len()` the caller vouches for.
        unsafe { std::ptr::copy_nonoverlapping(block.as_ptr(), to.add(i * BLOCK), block.len()) };
    }
}
