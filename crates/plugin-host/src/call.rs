//! One call of a plugin, as both backends make it: the [`Request`] (one
//! per ABI function, its inputs borrowed), the [`Answer`] (the status and
//! the bytes the function wrote), and the plugin's [`Identity`] (what its
//! descriptor says). The in-process backend ([`crate::in_process`]) and
//! the isolated one ([`crate::isolated`]) both speak these; neither
//! imports the other's types.

use bg_engine::{Board, Dice, Play};
use bg_variant_api::abi::{Status, VariantDescriptor};

/// One call of an ABI function, with its inputs borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Request<'a> {
    Info,
    NewGame {
        options: &'a [u8],
    },
    SetupPosition {
        board: &'a Board,
        options: &'a [u8],
    },
    Board {
        state: &'a [u8],
    },
    LegalPlays {
        state: &'a [u8],
        seat: u8,
        dice: Dice,
    },
    ApplyPlay {
        state: &'a [u8],
        seat: u8,
        dice: Dice,
        play: &'a Play,
    },
    AfterRoll {
        state: &'a [u8],
        seat: u8,
        dice: Dice,
    },
    Decide {
        state: &'a [u8],
        seat: u8,
        choice: &'a [u8],
    },
    Concede {
        state: &'a [u8],
        loser: u8,
    },
    Scoreboard {
        state: &'a [u8],
    },
}

/// What a function answered: its status and the bytes it wrote (the
/// payload on success, a UTF-8 message on an error). A `Board` request
/// also answers its board, a `LegalPlays` request its plays (written into
/// the caller's vector).
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: Status,
    pub bytes: Vec<u8>,
    pub board: Board,
    /// The board of the state a `GameSetup` or `Transition` answer
    /// carries, when a worker sends it along (saving the host a round
    /// trip to ask for it).
    pub next_board: Option<Board>,
}

impl Answer {
    pub(crate) fn new(status: Status, bytes: Vec<u8>) -> Answer {
        Answer {
            status,
            bytes,
            board: Board::EMPTY,
            next_board: None,
        }
    }
}

/// What the host knows of a plugin from its descriptor, owned (a worker
/// process sends it over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub name: String,
    pub version: String,
    pub api_version: String,
    pub capabilities: u64,
    pub flags: u32,
    /// Whether the plugin has a `scoreboard` function (ABI 1.2 on).
    pub has_scoreboard: bool,
}

impl Identity {
    /// The identity a loaded library's descriptor gives (`has_scoreboard`:
    /// whether its functions include `scoreboard`).
    pub(crate) fn of(descriptor: &VariantDescriptor, has_scoreboard: bool) -> Identity {
        // SAFETY: the descriptor's strings point into the never-unloaded library.
        let (name, version, api_version) = unsafe {
            (
                descriptor.name.to_string_lossy(),
                descriptor.version.to_string_lossy(),
                descriptor.api_version.to_string_lossy(),
            )
        };
        Identity {
            name,
            version,
            api_version,
            capabilities: descriptor.capabilities,
            flags: descriptor.flags,
            has_scoreboard,
        }
    }
}

/// The most legal plays one call may report. Far above any real position
/// (standard backgammon's richest have a few thousand); a plugin claiming
/// more is faulty, and must not make the host allocate without bound.
pub(crate) const MAX_PLAYS: usize = 1 << 16;
