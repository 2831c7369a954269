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
pub const ABI_MINOR: u32 = 4;

/// The one symbol a plugin exports (NUL-terminated for `dlsym`).
pub const ENTRY_SYMBOL: &[u8] = b"bg_variant_entry\0";

/// The entry point's type.
pub type EntryFn = unsafe extern "C" fn() -> *const VariantDescriptor;

/// The result code of every call across the boundary.
pub type Status = i32;

// The error codes are the engine's one list of error kinds
// (`RulesErrorKind`, with its status codes); the ABI adds success and the
// short buffer. Written as numbers so that the C header (generated from
// this file) carries them; each is checked against the list below.
pub const STATUS_OK: Status = 0;
/// Bad options, state bytes or board.
pub const STATUS_INVALID_INPUT: Status = 1;
/// A bad option.
pub const STATUS_INVALID_OPTION: Status = 2;
/// An illegal play.
pub const STATUS_ILLEGAL_PLAY: Status = 3;
/// An illegal decision.
pub const STATUS_ILLEGAL_DECISION: Status = 4;
/// The variant does not support the call.
pub const STATUS_UNSUPPORTED: Status = 5;
/// The plugin panicked or broke its contract; the call did nothing.
pub const STATUS_PANIC: Status = 6;
/// The caller's array was too small; `count` holds the length needed.
pub const STATUS_BUFFER_TOO_SMALL: Status = 7;

// Each error status is its kind's code in the one list; success and the
// short buffer are no kind's code.
const _: () = {
    assert!(STATUS_INVALID_INPUT == RulesErrorKind::InvalidInput.status());
    assert!(STATUS_INVALID_OPTION == RulesErrorKind::InvalidOption.status());
    assert!(STATUS_ILLEGAL_PLAY == RulesErrorKind::IllegalPlay.status());
    assert!(STATUS_ILLEGAL_DECISION == RulesErrorKind::IllegalDecision.status());
    assert!(STATUS_UNSUPPORTED == RulesErrorKind::Unsupported.status());
    assert!(STATUS_PANIC == RulesErrorKind::VariantFault.status());
    assert!(RulesErrorKind::from_status(STATUS_OK).is_none());
    assert!(RulesErrorKind::from_status(STATUS_BUFFER_TOO_SMALL).is_none());
};

// The bits of `VariantDescriptor::capabilities` (`crate::Capabilities`).
/// The doubling cube may be used (possibly only with an option).
pub const CAPABILITY_CUBE: u64 = 1;
/// A game can end in a draw.
pub const CAPABILITY_DRAWS: u64 = 1 << 1;
/// Points are scored during play (`Transition.events`).
pub const CAPABILITY_SCORES_DURING_PLAY: u64 = 1 << 2;
/// Players may have to make decisions (`decide`).
pub const CAPABILITY_DECISIONS: u64 = 1 << 3;
/// Boards are standard backgammon positions, so the gnubg Position ID
/// describes them.
pub const CAPABILITY_STANDARD_BOARD: u64 = 1 << 4;
/// A game can start from any board (`setup_position`).
pub const CAPABILITY_SETUP_POSITION: u64 = 1 << 5;

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

// Every function pointer is nullable (an `Option` of the function): a
// null one (a plugin not built with [`crate::export_variant!`]) is a
// value the host can refuse, not undefined behaviour. [`NonNullFn`] names
// the function inside, which the host calls once it has checked.

/// The function type inside a nullable one (`NonNullFn<InfoFn>`).
pub type NonNullFn<T> = <T as NullableFn>::Function;

/// A nullable function pointer: an `Option` of the function.
pub trait NullableFn {
    type Function: Copy;
}

impl<F: Copy> NullableFn for Option<F> {
    type Function = F;
}

/// `info(out)`: a `proto::VariantInfo`.
pub type InfoFn = Option<unsafe extern "C" fn(out: *mut Buffer) -> Status>;
/// `new_game(options, options_len, out)`: `proto::Options` in, `proto::GameSetup` out.
pub type NewGameFn =
    Option<unsafe extern "C" fn(options: *const u8, len: usize, out: *mut Buffer) -> Status>;
/// `setup_position(board, options, options_len, out)`: like `new_game`, from a board.
pub type SetupPositionFn = Option<
    unsafe extern "C" fn(
        board: *const Board,
        options: *const u8,
        len: usize,
        out: *mut Buffer,
    ) -> Status,
>;
/// `board(state, state_len, board_out, error_out)`.
pub type BoardFn = Option<
    unsafe extern "C" fn(
        state: *const u8,
        len: usize,
        board: *mut Board,
        error: *mut Buffer,
    ) -> Status,
>;
/// `legal_plays(state, state_len, seat, dice, plays, capacity, count, error)`:
/// writes up to `capacity` plays and sets `count` to the number of legal
/// plays; [`STATUS_BUFFER_TOO_SMALL`] if `count > capacity`.
pub type LegalPlaysFn = Option<
    unsafe extern "C" fn(
        state: *const u8,
        len: usize,
        seat: u8,
        dice: Dice,
        plays: *mut LegalPlay,
        capacity: usize,
        count: *mut usize,
        error: *mut Buffer,
    ) -> Status,
>;
/// `apply_play(state, state_len, seat, dice, play, out)`: a `proto::Transition`.
pub type ApplyPlayFn = Option<
    unsafe extern "C" fn(
        state: *const u8,
        len: usize,
        seat: u8,
        dice: Dice,
        play: *const Play,
        out: *mut Buffer,
    ) -> Status,
>;
/// `after_roll(state, state_len, seat, dice, out)`: a `proto::Transition`.
pub type AfterRollFn = Option<
    unsafe extern "C" fn(
        state: *const u8,
        len: usize,
        seat: u8,
        dice: Dice,
        out: *mut Buffer,
    ) -> Status,
>;
/// `decide(state, state_len, seat, choice, choice_len, out)`: a `proto::Transition`.
pub type DecideFn = Option<
    unsafe extern "C" fn(
        state: *const u8,
        len: usize,
        seat: u8,
        choice: *const u8,
        choice_len: usize,
        out: *mut Buffer,
    ) -> Status,
>;
/// `concede(state, state_len, loser, out)`: a `proto::Outcome`.
pub type ConcedeFn = Option<
    unsafe extern "C" fn(state: *const u8, len: usize, loser: u8, out: *mut Buffer) -> Status,
>;
/// `scoreboard(state, state_len, out)`: a `proto::Scoreboard`, or an empty
/// buffer for a variant that scores only at the end (ABI 1.2).
pub type ScoreboardFn =
    Option<unsafe extern "C" fn(state: *const u8, len: usize, out: *mut Buffer) -> Status>;
/// `free_buffer(buffer)`: frees a buffer this plugin returned.
pub type FreeBufferFn = Option<unsafe extern "C" fn(buffer: Buffer)>;

/// What the entry point returns. Append new fields at the end only (and
/// raise [`ABI_MINOR`]); anything else is a new [`ABI_MAJOR`]. Every
/// function may be null, which the host refuses.
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
    pub info: InfoFn,
    pub new_game: NewGameFn,
    pub setup_position: SetupPositionFn,
    pub board: BoardFn,
    pub legal_plays: LegalPlaysFn,
    pub apply_play: ApplyPlayFn,
    pub after_roll: AfterRollFn,
    pub decide: DecideFn,
    pub concede: ConcedeFn,
    pub free_buffer: FreeBufferFn,
    /// ABI 1.2 on; read only when `struct_size` covers it.
    pub scoreboard: ScoreboardFn,
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

/// [`layout_fingerprint`] of this ABI's types, as a number (for the C
/// header: a C plugin puts it in its descriptor's `layout`).
pub const LAYOUT_FINGERPRINT: u64 = 0x008D_2A13_2FF8_7B4C;
const _: () = assert!(LAYOUT_FINGERPRINT == layout_fingerprint());

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
