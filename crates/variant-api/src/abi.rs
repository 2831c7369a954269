//! The C ABI between the host and a variant plugin.
//!
//! A plugin exports one symbol, [`ENTRY_SYMBOL`], of type [`EntryFn`]. It
//! returns a pointer to a static [`VariantDescriptor`] that lives as long as
//! the library (which the host never unloads). The descriptor starts with
//! the ABI version and its own size, so fields can be appended in minor
//! versions; a different major version is refused by the host.
//!
//! Rules of the boundary:
//! - No Rust trait objects, `Vec`, `String` or `Box` cross it. Inputs are
//!   borrowed pointers valid for the call. Outputs are either written into
//!   memory the caller provides (the hot path: [`LegalPlay`] arrays), or
//!   returned in a [`Buffer`] the plugin allocated and the host hands back
//!   to the plugin's `free_buffer`: each side frees what it allocated.
//! - Every function returns a [`Status`]. On an error, the `out` buffer
//!   holds a UTF-8 message instead of the payload.
//! - Payloads are protobuf messages from [`crate::proto`]; the hot-path
//!   types ([`Board`], [`Dice`], [`Play`], [`LegalPlay`]) are `#[repr(C)]`.

use bg_engine::game::RulesErrorKind;
use bg_engine::{Board, Dice, LegalPlay, Play};

/// Major version: a plugin built against another major is refused.
pub const ABI_MAJOR: u32 = 1;
/// Minor version: fields appended to the descriptor; older hosts ignore them.
pub const ABI_MINOR: u32 = 3;

/// The one symbol a plugin exports (NUL-terminated for `dlsym`).
pub const ENTRY_SYMBOL: &[u8] = b"bg_variant_entry\0";

/// The entry point's type.
pub type EntryFn = unsafe extern "C" fn() -> *const VariantDescriptor;

/// The result code of every call across the boundary.
pub type Status = i32;

// The error codes are the engine's one list of error kinds
// (`RulesErrorKind`, with its status codes); the ABI adds success and the
// short buffer.
pub const STATUS_OK: Status = 0;
/// Bad options, state bytes or board.
pub const STATUS_INVALID_INPUT: Status = RulesErrorKind::InvalidInput.status();
/// A bad option.
pub const STATUS_INVALID_OPTION: Status = RulesErrorKind::InvalidOption.status();
/// An illegal play.
pub const STATUS_ILLEGAL_PLAY: Status = RulesErrorKind::IllegalPlay.status();
/// An illegal decision.
pub const STATUS_ILLEGAL_DECISION: Status = RulesErrorKind::IllegalDecision.status();
/// The variant does not support the call.
pub const STATUS_UNSUPPORTED: Status = RulesErrorKind::Unsupported.status();
/// The plugin panicked or broke its contract; the call did nothing.
pub const STATUS_PANIC: Status = RulesErrorKind::VariantFault.status();
/// The caller's array was too small; `count` holds the length needed.
pub const STATUS_BUFFER_TOO_SMALL: Status = 7;

// Success and the short buffer are no error kind's code.
const _: () = assert!(RulesErrorKind::from_status(STATUS_OK).is_none());
const _: () = assert!(RulesErrorKind::from_status(STATUS_BUFFER_TOO_SMALL).is_none());

/// Bytes allocated by the plugin, returned to its `free_buffer`.
#[repr(C)]
#[derive(Debug)]
pub struct Buffer {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

impl Buffer {
    pub const EMPTY: Buffer = Buffer {
        ptr: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };

    /// Hands `bytes` over; the receiver must give the buffer back to the
    /// `free_buffer` of the same library.
    pub fn from_vec(bytes: Vec<u8>) -> Buffer {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        Buffer {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
            cap: bytes.capacity(),
        }
    }

    /// Takes back a buffer made by [`Buffer::from_vec`] in this library.
    ///
    /// # Safety
    /// `self` must come from `from_vec` in the same library, not yet freed.
    pub unsafe fn into_vec(self) -> Vec<u8> {
        if self.ptr.is_null() {
            return Vec::new();
        }
        // SAFETY: guaranteed by the caller: the parts come from a Vec<u8>
        // allocated by this library's allocator.
        unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) }
    }

    /// The bytes, borrowed.
    ///
    /// # Safety
    /// `self` must be a live buffer (not freed).
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: a live buffer holds `len` initialised bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A borrowed UTF-8 string with static lifetime inside the plugin.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StrRef {
    pub ptr: *const u8,
    pub len: usize,
}

impl StrRef {
    pub const fn from_static(s: &'static str) -> StrRef {
        StrRef {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// # Safety
    /// The pointer and length must describe live bytes.
    pub unsafe fn to_string_lossy(self) -> String {
        if self.ptr.is_null() {
            return String::new();
        }
        // SAFETY: guaranteed by the caller.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// `info(out)`: a `proto::VariantInfo`.
pub type InfoFn = unsafe extern "C" fn(out: *mut Buffer) -> Status;
/// `new_game(options, options_len, out)`: `proto::Options` in, `proto::GameSetup` out.
pub type NewGameFn =
    unsafe extern "C" fn(options: *const u8, len: usize, out: *mut Buffer) -> Status;
/// `setup_position(board, options, options_len, out)`: like `new_game`, from a board.
pub type SetupPositionFn = unsafe extern "C" fn(
    board: *const Board,
    options: *const u8,
    len: usize,
    out: *mut Buffer,
) -> Status;
/// `board(state, state_len, board_out, error_out)`.
pub type BoardFn = unsafe extern "C" fn(
    state: *const u8,
    len: usize,
    board: *mut Board,
    error: *mut Buffer,
) -> Status;
/// `legal_plays(state, state_len, seat, dice, plays, capacity, count, error)`:
/// writes up to `capacity` plays and sets `count` to the number of legal
/// plays; [`STATUS_BUFFER_TOO_SMALL`] if `count > capacity`.
pub type LegalPlaysFn = unsafe extern "C" fn(
    state: *const u8,
    len: usize,
    seat: u8,
    dice: Dice,
    plays: *mut LegalPlay,
    capacity: usize,
    count: *mut usize,
    error: *mut Buffer,
) -> Status;
/// `apply_play(state, state_len, seat, dice, play, out)`: a `proto::Transition`.
pub type ApplyPlayFn = unsafe extern "C" fn(
    state: *const u8,
    len: usize,
    seat: u8,
    dice: Dice,
    play: *const Play,
    out: *mut Buffer,
) -> Status;
/// `after_roll(state, state_len, seat, dice, out)`: a `proto::Transition`.
pub type AfterRollFn = unsafe extern "C" fn(
    state: *const u8,
    len: usize,
    seat: u8,
    dice: Dice,
    out: *mut Buffer,
) -> Status;
/// `decide(state, state_len, seat, choice, choice_len, out)`: a `proto::Transition`.
pub type DecideFn = unsafe extern "C" fn(
    state: *const u8,
    len: usize,
    seat: u8,
    choice: *const u8,
    choice_len: usize,
    out: *mut Buffer,
) -> Status;
/// `concede(state, state_len, loser, out)`: a `proto::Outcome`.
pub type ConcedeFn =
    unsafe extern "C" fn(state: *const u8, len: usize, loser: u8, out: *mut Buffer) -> Status;
/// `scoreboard(state, state_len, out)`: a `proto::Scoreboard`, or an empty
/// buffer for a variant that scores only at the end (ABI 1.2).
pub type ScoreboardFn =
    unsafe extern "C" fn(state: *const u8, len: usize, out: *mut Buffer) -> Status;
/// `free_buffer(buffer)`: frees a buffer this plugin returned.
pub type FreeBufferFn = unsafe extern "C" fn(buffer: Buffer);

/// What the entry point returns. Append new fields at the end only (and
/// raise [`ABI_MINOR`]); anything else is a new [`ABI_MAJOR`]. Function
/// pointers are `Option`s so that a null one (a plugin not built with
/// [`crate::export_variant!`]) is a value the host can refuse, not
/// undefined behaviour.
#[repr(C)]
pub struct VariantDescriptor {
    pub abi_major: u32,
    pub abi_minor: u32,
    /// `size_of::<VariantDescriptor>()` as the plugin was built.
    pub struct_size: u32,
    /// [`FLAG_PANIC_UNWIND`] and future flags.
    pub flags: u32,
    /// [`layout_fingerprint`] as the plugin was built: the sizes and
    /// alignments of the `#[repr(C)]` types that cross the boundary.
    pub layout: u64,
    pub name: StrRef,
    pub version: StrRef,
    /// The `bg-variant-api` version the plugin was built with (logged).
    pub api_version: StrRef,
    /// [`crate::Capabilities`] bits.
    pub capabilities: u64,
    pub info: Option<InfoFn>,
    pub new_game: Option<NewGameFn>,
    pub setup_position: Option<SetupPositionFn>,
    pub board: Option<BoardFn>,
    pub legal_plays: Option<LegalPlaysFn>,
    pub apply_play: Option<ApplyPlayFn>,
    pub after_roll: Option<AfterRollFn>,
    pub decide: Option<DecideFn>,
    pub concede: Option<ConcedeFn>,
    pub free_buffer: Option<FreeBufferFn>,
    /// ABI 1.2 on; read only when `struct_size` covers it.
    pub scoreboard: Option<ScoreboardFn>,
}

/// The plugin was built with `panic = "unwind"`, so its exports can catch
/// panics. A plugin built to abort on panic would take the server down on
/// its first bug; the host refuses it.
pub const FLAG_PANIC_UNWIND: u32 = 1;

/// The plugin's `apply_play` checks the play's legality itself, in
/// `bg_variant_api::apply_play` (ABI 1.1 on; set by [`crate::export_variant!`]):
/// the host does not search again. Without it (a plugin built before),
/// the host runs the legal-play search and checks the answer itself.
pub const FLAG_CHECKS_PLAYS: u32 = 1 << 1;

/// The size of a descriptor of ABI 1.0 (and 1.1): the least a host of this
/// major version reads. Later minors append fields, read only when
/// `struct_size` covers them.
pub const MIN_DESCRIPTOR_SIZE: usize = std::mem::offset_of!(VariantDescriptor, scoreboard);

/// Whether a descriptor of `struct_size` bytes has the 1.2 `scoreboard`
/// field.
pub const fn has_scoreboard(struct_size: u32) -> bool {
    struct_size as usize >= std::mem::size_of::<VariantDescriptor>()
}

/// The sizes and alignments of the types that cross the boundary by value,
/// packed into one number: a plugin whose types differ is refused.
pub const fn layout_fingerprint() -> u64 {
    use std::mem::{align_of, size_of};
    let sizes = [
        size_of::<Board>(),
        size_of::<Dice>(),
        size_of::<Play>(),
        size_of::<LegalPlay>(),
        size_of::<Buffer>(),
        align_of::<Board>(),
        align_of::<Play>(),
        align_of::<LegalPlay>(),
    ];
    let mut fingerprint = 0u64;
    let mut i = 0;
    while i < sizes.len() {
        fingerprint = fingerprint.wrapping_mul(131).wrapping_add(sizes[i] as u64);
        i += 1;
    }
    fingerprint
}

// The layouts this ABI version was defined with. Changing one of these
// types is an ABI change: these stop compiling until the version is raised.
const _: () = assert!(std::mem::size_of::<Board>() == 60);
const _: () = assert!(std::mem::size_of::<Dice>() == 2);
const _: () = assert!(std::mem::size_of::<Play>() == 9);
const _: () = assert!(std::mem::size_of::<LegalPlay>() == 72);

// SAFETY: the descriptor is immutable after construction and only holds
// pointers to static data and functions.
unsafe impl Sync for VariantDescriptor {}
unsafe impl Send for VariantDescriptor {}

/// The header every descriptor version shares. The host reads this first,
/// before trusting anything else.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DescriptorHeader {
    pub abi_major: u32,
    pub abi_minor: u32,
    pub struct_size: u32,
}
