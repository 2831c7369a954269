//! Where a plugin's code runs: in this process, or in a worker process.
//!
//! [`Plugin`](crate::Plugin) speaks to a plugin through one [`Request`] per
//! ABI function and reads back an [`Answer`]: the status and the bytes the
//! function wrote (its payload, or its error message), plus the board or
//! the legal plays of the two calls that write those. [`Backend::InProcess`]
//! calls the library's functions directly; [`Backend::Isolated`] sends the
//! same request to a worker process that calls them (see
//! [`crate::isolated`]). Everything the host checks in an answer is
//! checked above this, the same way for both.

use bg_engine::{Board, Dice, LegalPlay, Play};
use bg_variant_api::abi::{
    self, AfterRollFn, ApplyPlayFn, BoardFn, Buffer, ConcedeFn, DecideFn, FreeBufferFn, InfoFn,
    LegalPlaysFn, NewGameFn, NonNullFn, ScoreboardFn, SetupPositionFn, Status, VariantDescriptor,
};

use crate::isolated::Workers;

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
    /// The identity a loaded library's descriptor gives.
    pub(crate) fn of(descriptor: &VariantDescriptor, calls: &Calls) -> Identity {
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
            has_scoreboard: calls.scoreboard.is_some(),
        }
    }
}

/// Where the plugin's code runs.
pub(crate) enum Backend {
    /// In this process: a call that crashes ends the process.
    InProcess(Calls),
    /// In worker processes: a call that crashes or runs past its deadline
    /// ends the worker, and the call faults.
    Isolated(Box<Workers>),
}

impl Backend {
    /// Makes the call. `plays` receives a `LegalPlays` request's plays.
    /// `Err` is a fault the transport saw (a worker that died or sent
    /// garbage), with what happened.
    pub(crate) fn call(
        &self,
        request: Request<'_>,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, String> {
        match self {
            Backend::InProcess(calls) => calls.call(request, plays),
            Backend::Isolated(workers) => workers.call(request, plays),
        }
    }
}

/// The most legal plays one call may report. Far above any real position
/// (standard backgammon's richest have a few thousand); a plugin claiming
/// more is faulty, and must not make the host allocate without bound.
pub(crate) const MAX_PLAYS: usize = 1 << 16;

thread_local! {
    /// The array plugins write legal plays into. Kept initialised (zeroed
    /// when it grows) so that a plugin reporting more plays than it wrote
    /// makes the host read zeroes, which fail the board check, never
    /// uninitialised memory.
    static SCRATCH: std::cell::RefCell<Vec<LegalPlay>> = const { std::cell::RefCell::new(Vec::new()) };
}

const ZERO_PLAY: LegalPlay = LegalPlay {
    play: Play::EMPTY,
    result: Board::EMPTY,
};

/// The plugin's functions, all present (checked at load).
#[derive(Clone, Copy)]
pub(crate) struct Calls {
    info: NonNullFn<InfoFn>,
    new_game: NonNullFn<NewGameFn>,
    setup_position: NonNullFn<SetupPositionFn>,
    board: NonNullFn<BoardFn>,
    legal_plays: NonNullFn<LegalPlaysFn>,
    apply_play: NonNullFn<ApplyPlayFn>,
    after_roll: NonNullFn<AfterRollFn>,
    decide: NonNullFn<DecideFn>,
    concede: NonNullFn<ConcedeFn>,
    free_buffer: NonNullFn<FreeBufferFn>,
    /// ABI 1.2 on.
    scoreboard: ScoreboardFn,
}

impl Calls {
    /// The functions of a descriptor, or the name of the first missing one.
    pub(crate) fn from_descriptor(d: &VariantDescriptor) -> Result<Calls, &'static str> {
        Ok(Calls {
            info: d.info.ok_or("info")?,
            new_game: d.new_game.ok_or("new_game")?,
            setup_position: d.setup_position.ok_or("setup_position")?,
            board: d.board.ok_or("board")?,
            legal_plays: d.legal_plays.ok_or("legal_plays")?,
            apply_play: d.apply_play.ok_or("apply_play")?,
            after_roll: d.after_roll.ok_or("after_roll")?,
            decide: d.decide.ok_or("decide")?,
            concede: d.concede.ok_or("concede")?,
            free_buffer: d.free_buffer.ok_or("free_buffer")?,
            // A plugin of ABI 1.0 or 1.1 has no such field: not read then.
            scoreboard: if abi::has_scoreboard(d.struct_size) {
                d.scoreboard
            } else {
                None
            },
        })
    }

    /// Calls the function `request` names, in this thread.
    pub(crate) fn call(
        &self,
        request: Request<'_>,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, String> {
        // SAFETY (every call below): the pointers passed are valid for the
        // call, and the functions are the descriptor's own.
        let answer = match request {
            Request::Info => self.buffer(|out| unsafe { (self.info)(out) }),
            Request::NewGame { options } => {
                self.buffer(|out| unsafe { (self.new_game)(options.as_ptr(), options.len(), out) })
            }
            Request::SetupPosition { board, options } => self.buffer(|out| unsafe {
                (self.setup_position)(board, options.as_ptr(), options.len(), out)
            }),
            Request::Board { state } => {
                let mut board = Board::EMPTY;
                let mut error = Buffer::EMPTY;
                let status =
                    unsafe { (self.board)(state.as_ptr(), state.len(), &mut board, &mut error) };
                let mut answer = Answer::new(status, self.take(error));
                answer.board = board;
                answer
            }
            Request::LegalPlays { state, seat, dice } => {
                return self.legal_plays(state, seat, dice, plays);
            }
            Request::ApplyPlay {
                state,
                seat,
                dice,
                play,
            } => self.buffer(|out| unsafe {
                (self.apply_play)(state.as_ptr(), state.len(), seat, dice, play, out)
            }),
            Request::AfterRoll { state, seat, dice } => self.buffer(|out| unsafe {
                (self.after_roll)(state.as_ptr(), state.len(), seat, dice, out)
            }),
            Request::Decide {
                state,
                seat,
                choice,
            } => self.buffer(|out| unsafe {
                (self.decide)(
                    state.as_ptr(),
                    state.len(),
                    seat,
                    choice.as_ptr(),
                    choice.len(),
                    out,
                )
            }),
            Request::Concede { state, loser } => self
                .buffer(|out| unsafe { (self.concede)(state.as_ptr(), state.len(), loser, out) }),
            Request::Scoreboard { state } => match self.scoreboard {
                Some(scoreboard) => {
                    self.buffer(|out| unsafe { scoreboard(state.as_ptr(), state.len(), out) })
                }
                // Asked only of plugins that have it; an empty answer is
                // "scores only at the end" all the same.
                None => Answer::new(abi::STATUS_OK, Vec::new()),
            },
        };
        Ok(answer)
    }

    /// The legal plays, into `plays`: the plugin writes them into this
    /// thread's scratch array, grown once if it asks for more room.
    fn legal_plays(
        &self,
        state: &[u8],
        seat: u8,
        dice: Dice,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, String> {
        plays.clear();
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.len() < 256 {
                scratch.resize(256, ZERO_PLAY);
            }
            let mut count = 0usize;
            let mut attempt = 0;
            let answer = loop {
                let mut error = Buffer::EMPTY;
                // SAFETY: `scratch` holds `len` initialised plays the plugin
                // may overwrite; the other pointers are valid for the call.
                let status = unsafe {
                    (self.legal_plays)(
                        state.as_ptr(),
                        state.len(),
                        seat,
                        dice,
                        scratch.as_mut_ptr(),
                        scratch.len(),
                        &mut count,
                        &mut error,
                    )
                };
                let message = self.take(error);
                if status == abi::STATUS_BUFFER_TOO_SMALL
                    && attempt == 0
                    && count > scratch.len()
                    && count <= MAX_PLAYS
                {
                    scratch.resize(count, ZERO_PLAY);
                    attempt += 1;
                    continue;
                }
                break Answer::new(status, message);
            };
            if answer.status == abi::STATUS_OK {
                if count > scratch.len() {
                    return Err(format!(
                        "reported {count} legal plays for room for {}",
                        scratch.len()
                    ));
                }
                plays.extend_from_slice(&scratch[..count]);
            }
            Ok(answer)
        })
    }

    /// Calls a function that answers in a buffer.
    fn buffer(&self, f: impl FnOnce(*mut Buffer) -> Status) -> Answer {
        let mut out = Buffer::EMPTY;
        let status = f(&mut out);
        Answer::new(status, self.take(out))
    }

    /// The bytes of a buffer the plugin filled (or left empty), which is
    /// given back to the plugin.
    fn take(&self, buffer: Buffer) -> Vec<u8> {
        if buffer.ptr.is_null() {
            return Vec::new();
        }
        // SAFETY: the plugin filled the buffer; it is live until freed below.
        let bytes = unsafe { buffer.as_slice() }.to_vec();
        // SAFETY: the buffer came from this plugin and is freed once.
        unsafe { (self.free_buffer)(buffer) };
        bytes
    }
}
