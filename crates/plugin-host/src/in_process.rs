//! A plugin's functions called in this process: a call that crashes ends
//! the process (see [`crate::isolated`] for the other way).

use bg_engine::{Board, Dice, LegalPlay, Play};
use bg_variant_api::abi::{
    self, AfterRollFn, ApplyPlayFn, BoardFn, Buffer, ConcedeFn, DecideFn, FreeBufferFn, InfoFn,
    LegalPlaysFn, NewGameFn, NonNullFn, ScoreboardFn, SetupPositionFn, Status, VariantDescriptor,
};

use crate::call::{Answer, MAX_PLAYS, Request};

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

    /// Whether the plugin has a `scoreboard` function (ABI 1.2 on).
    pub(crate) fn has_scoreboard(&self) -> bool {
        self.scoreboard.is_some()
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
