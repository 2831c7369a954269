//! A loaded plugin and its guarded calls.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bg_engine::game::{Outcome, RulesError, RulesErrorKind, Scoreboard};
use bg_engine::{Board, Dice, LegalPlay, Play, Seat};
use bg_variant_api::abi::{
    self, AfterRollFn, ApplyPlayFn, BoardFn, Buffer, ConcedeFn, DecideFn, FreeBufferFn, InfoFn,
    LegalPlaysFn, NewGameFn, ScoreboardFn, SetupPositionFn, Status, VariantDescriptor,
};
use bg_variant_api::{Capabilities, Options, proto};
use prost::Message;

use bg_variant_api::wire;

/// A new game as a plugin set it up (state bytes are the plugin's).
pub type Setup = bg_engine::game::Setup<Vec<u8>>;
/// The result of an action (state bytes are the plugin's).
pub type Transition = bg_engine::game::Transition<Vec<u8>>;

/// The plugin's functions, all present (checked at load).
#[derive(Clone, Copy)]
pub(crate) struct Calls {
    info: InfoFn,
    new_game: NewGameFn,
    setup_position: SetupPositionFn,
    board: BoardFn,
    legal_plays: LegalPlaysFn,
    apply_play: ApplyPlayFn,
    after_roll: AfterRollFn,
    decide: DecideFn,
    concede: ConcedeFn,
    free_buffer: FreeBufferFn,
    /// ABI 1.2 on.
    scoreboard: Option<ScoreboardFn>,
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
            scoreboard: if bg_variant_api::abi::has_scoreboard(d.struct_size) {
                d.scoreboard
            } else {
                None
            },
        })
    }
}

/// The most legal plays one call may report. Far above any real position
/// (standard backgammon's richest have a few thousand); a plugin claiming
/// more is faulty, and must not make the host allocate without bound.
const MAX_PLAYS: usize = 1 << 16;

thread_local! {
    /// The array plugins write legal plays into. Kept initialised (zeroed
    /// when it grows) so that a plugin reporting more plays than it wrote
    /// makes the host read zeroes, which fail the board check, never
    /// uninitialised memory.
    static SCRATCH: std::cell::RefCell<Vec<LegalPlay>> = const { std::cell::RefCell::new(Vec::new()) };

    /// The last legal plays this thread was given, checked, and what they
    /// answer. An action asks for the same plays twice: the engine, to
    /// pass a turn with no legal move, then the answer, to list them.
    static LAST_PLAYS: std::cell::RefCell<LastPlays> = const {
        std::cell::RefCell::new(LastPlays {
            descriptor: 0,
            state: Vec::new(),
            seat: 0,
            dice: None,
            plays: Vec::new(),
        })
    };
}

/// A plugin's legal plays of one position. The plugin is named by the
/// address of its descriptor: a loaded library is never unloaded, so no
/// other plugin ever has that address. Plugins are pure (the same state,
/// seat and dice give the same plays), so the plays can be given again.
struct LastPlays {
    descriptor: usize,
    state: Vec<u8>,
    seat: u8,
    dice: Option<Dice>,
    plays: Vec<LegalPlay>,
}

impl LastPlays {
    fn answers(&self, descriptor: usize, state: &[u8], seat: u8, dice: Dice) -> bool {
        self.descriptor == descriptor
            && self.dice == Some(dice)
            && self.seat == seat
            && self.state == state
    }
}

const ZERO_PLAY: LegalPlay = LegalPlay {
    play: Play::EMPTY,
    result: Board::EMPTY,
};

/// A variant plugin, loaded and checked. Cheap to share (`Arc<Plugin>`);
/// all calls are thread-safe because plugins are pure.
pub struct Plugin {
    path: PathBuf,
    descriptor: &'static VariantDescriptor,
    calls: Calls,
    name: String,
    version: String,
    api_version: String,
    info: proto::VariantInfo,
    faults: AtomicU64,
    /// Calls that ran past their caller's deadline and have not returned
    /// (an in-process call cannot be stopped): while any has not, the
    /// plugin is unhealthy and its callers refuse to call it.
    overran: AtomicU64,
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("path", &self.path)
            .finish()
    }
}

impl Plugin {
    pub(crate) fn new(
        path: PathBuf,
        descriptor: &'static VariantDescriptor,
        calls: Calls,
    ) -> Result<Plugin, RulesError> {
        // SAFETY: the descriptor's strings point into the never-unloaded library.
        let (name, version, api_version) = unsafe {
            (
                descriptor.name.to_string_lossy(),
                descriptor.version.to_string_lossy(),
                descriptor.api_version.to_string_lossy(),
            )
        };
        let mut plugin = Plugin {
            path,
            descriptor,
            calls,
            name,
            version,
            api_version,
            info: proto::VariantInfo::default(),
            faults: AtomicU64::new(0),
            overran: AtomicU64::new(0),
        };
        // SAFETY: calling the descriptor's own function.
        let bytes = plugin.call(|out| unsafe { (calls.info)(out) })?;
        plugin.info = plugin.decode(&bytes)?;
        if plugin.info.name != plugin.name || plugin.name.is_empty() {
            return Err(RulesError {
                kind: RulesErrorKind::InvalidInput,
                message: format!(
                    "descriptor name {:?} differs from info name {:?}",
                    plugin.name, plugin.info.name
                ),
            });
        }
        Ok(plugin)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The `bg-variant-api` version the plugin was built with.
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The most one game can be worth before the cube: what the variant
    /// says, from 1 to 3 (0, unset, means 3; more than 3 is read as 3).
    pub fn max_win_level(&self) -> u32 {
        match self.info().max_win_level {
            0 => 3,
            level => level.min(3),
        }
    }

    /// The variant's name of a win at `level` (from 1): what it says, else
    /// the names a plugin that names none was written for (the standard
    /// board's, as before `VariantInfo.win_kinds` existed).
    pub fn win_kind(&self, level: u32) -> String {
        const UNNAMED: [&str; 3] = ["single", "gammon", "backgammon"];
        let index = level.max(1) as usize - 1;
        match self.info().win_kinds.get(index) {
            Some(kind) if !kind.is_empty() => kind.clone(),
            _ => UNNAMED[index.min(2)].to_string(),
        }
    }

    pub fn info(&self) -> &proto::VariantInfo {
        &self.info
    }

    pub fn capabilities(&self) -> Capabilities {
        Capabilities(self.descriptor.capabilities)
    }

    /// Whether the variant shows something beside the board (its
    /// `scoreboard`): it scores during play, or it declares tallies,
    /// counters or markers.
    pub fn shows_scoreboard(&self) -> bool {
        self.capabilities()
            .contains(Capabilities::SCORES_DURING_PLAY)
            || !self.info.tallies.is_empty()
            || !self.info.counters.is_empty()
            || !self.info.markers.is_empty()
    }

    /// Why the plugin must not be called now (None: it may): a call ran
    /// past its deadline and has not returned.
    pub fn unhealthy(&self) -> Option<String> {
        match self.overran.load(Ordering::Acquire) {
            0 => None,
            n => Some(format!(
                "{n} call{} of variant {} ran past the deadline and {} not returned",
                if n == 1 { "" } else { "s" },
                self.name,
                if n == 1 { "has" } else { "have" }
            )),
        }
    }

    /// A caller gave up on a call past its deadline (the call goes on, in
    /// a thread of its own): the plugin is unhealthy until it returns.
    pub fn call_overran(&self, deadline: std::time::Duration) {
        self.faults.fetch_add(1, Ordering::Relaxed);
        self.overran.fetch_add(1, Ordering::AcqRel);
        metrics::counter!(crate::PLUGIN_FAULTS, "variant" => self.name.clone()).increment(1);
        metrics::gauge!(crate::PLUGIN_UNHEALTHY, "variant" => self.name.clone()).set(1.0);
        tracing::error!(
            variant = %self.name,
            path = %self.path.display(),
            ?deadline,
            "variant plugin call ran past its deadline: the variant is unhealthy until it returns"
        );
    }

    /// A call that had run past its deadline returned at last.
    pub fn overran_call_returned(&self) {
        if self.overran.fetch_sub(1, Ordering::AcqRel) == 1 {
            metrics::gauge!(crate::PLUGIN_UNHEALTHY, "variant" => self.name.clone()).set(0.0);
            tracing::warn!(variant = %self.name, "a variant plugin call that ran past its deadline returned: healthy again");
        }
    }

    /// How many calls of this plugin have faulted since it was loaded.
    pub fn faults(&self) -> u64 {
        self.faults.load(Ordering::Relaxed)
    }

    /// Starts a game with `options`.
    pub fn new_game(&self, options: &Options) -> Result<Setup, RulesError> {
        let options = encode_options(options);
        // SAFETY: pointers valid for the call.
        let bytes = self
            .call(|out| unsafe { (self.calls.new_game)(options.as_ptr(), options.len(), out) })?;
        let setup = wire::setup(self.decode(&bytes)?);
        self.check_board(&self.board(&setup.state)?)?;
        Ok(setup)
    }

    /// Starts a game from `board`, if the variant supports it.
    pub fn setup_position(&self, board: &Board, options: &Options) -> Result<Setup, RulesError> {
        let options = encode_options(options);
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe {
            (self.calls.setup_position)(board, options.as_ptr(), options.len(), out)
        })?;
        let setup = wire::setup(self.decode(&bytes)?);
        self.check_board(&self.board(&setup.state)?)?;
        Ok(setup)
    }

    /// The board of a state.
    pub fn board(&self, state: &[u8]) -> Result<Board, RulesError> {
        let mut board = Board::EMPTY;
        let mut error = Buffer::EMPTY;
        // SAFETY: pointers valid for the call.
        let status =
            unsafe { (self.calls.board)(state.as_ptr(), state.len(), &mut board, &mut error) };
        self.finish(status, error)?;
        Ok(board)
    }

    /// The legal plays of `seat` with `dice` (each result once), into
    /// `plays`, which is reused: keep it between calls on hot paths. Every
    /// result board is checked (15 checkers a side, no shared point). The
    /// thread's last answer is given again when asked for the same
    /// position of the same plugin (see `LAST_PLAYS`).
    pub fn legal_plays(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<(), RulesError> {
        plays.clear();
        let descriptor = std::ptr::from_ref(self.descriptor) as usize;
        let seat = seat as u8;
        let given = LAST_PLAYS.with_borrow(|last| {
            let hit = last.answers(descriptor, state, seat, dice);
            if hit {
                plays.extend_from_slice(&last.plays);
            }
            hit
        });
        if given {
            return Ok(());
        }
        self.search_plays(state, seat, dice, plays)?;
        LAST_PLAYS.with_borrow_mut(|last| {
            last.descriptor = descriptor;
            last.state.clear();
            last.state.extend_from_slice(state);
            last.seat = seat;
            last.dice = Some(dice);
            last.plays.clear();
            last.plays.extend_from_slice(plays);
        });
        Ok(())
    }

    /// The plugin's legal plays, checked: none remembered.
    fn search_plays(
        &self,
        state: &[u8],
        seat: u8,
        dice: Dice,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<(), RulesError> {
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.len() < 256 {
                scratch.resize(256, ZERO_PLAY);
            }
            let mut count = 0usize;
            for attempt in 0..2 {
                let mut error = Buffer::EMPTY;
                // SAFETY: `scratch` holds `len` initialised plays the plugin
                // may overwrite; the other pointers are valid for the call.
                let status = unsafe {
                    (self.calls.legal_plays)(
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
                if status == abi::STATUS_BUFFER_TOO_SMALL
                    && attempt == 0
                    && count > scratch.len()
                    && count <= MAX_PLAYS
                {
                    self.free(error);
                    scratch.resize(count, ZERO_PLAY);
                    continue;
                }
                self.finish(status, error)?;
                break;
            }
            if count > scratch.len() {
                return Err(self.fault(format!(
                    "reported {count} legal plays for room for {}",
                    scratch.len()
                )));
            }
            plays.extend_from_slice(&scratch[..count]);
            Ok(())
        })?;
        if plays.is_empty() {
            return Err(self.fault("no legal plays (a pass is the empty play)".into()));
        }
        for lp in plays.iter() {
            self.check_board(&lp.result)?;
        }
        Ok(())
    }

    /// Plays `play` for `seat`: accepted only if it reaches the result of
    /// one of the legal plays (checked in the plugin, by its glue).
    pub fn apply_play(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
        play: &Play,
    ) -> Result<Transition, RulesError> {
        // A plugin with FLAG_CHECKS_PLAYS checks legality itself, once,
        // in the glue it is built with (`bg_variant_api::apply_play`): no
        // second search here. One without it does not: the host searches
        // and checks its answer.
        let checks_itself = self.descriptor.flags & abi::FLAG_CHECKS_PLAYS != 0;
        let mut legal = Vec::new();
        if !checks_itself {
            self.legal_plays(state, seat, dice, &mut legal)?;
        }
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe {
            (self.calls.apply_play)(state.as_ptr(), state.len(), seat as u8, dice, play, out)
        })?;
        let transition = self.checked_transition(&bytes)?;
        if !checks_itself {
            let board = self.board(&transition.state)?;
            if !legal.iter().any(|lp| lp.result == board) {
                return Err(self.fault(format!(
                    "accepted {play}, whose result is not one of its legal plays"
                )));
            }
        }
        Ok(transition)
    }

    /// What happens once `seat` has rolled `dice`, before moving.
    pub fn after_roll(
        &self,
        state: &[u8],
        seat: Seat,
        dice: Dice,
    ) -> Result<Transition, RulesError> {
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe {
            (self.calls.after_roll)(state.as_ptr(), state.len(), seat as u8, dice, out)
        })?;
        self.checked_transition(&bytes)
    }

    /// Answers a pending decision.
    pub fn decide(&self, state: &[u8], seat: Seat, choice: &str) -> Result<Transition, RulesError> {
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe {
            (self.calls.decide)(
                state.as_ptr(),
                state.len(),
                seat as u8,
                choice.as_ptr(),
                choice.len(),
                out,
            )
        })?;
        self.checked_transition(&bytes)
    }

    /// What `loser` concedes by resigning now.
    pub fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe {
            (self.calls.concede)(state.as_ptr(), state.len(), loser as u8, out)
        })?;
        wire::outcome(self.decode(&bytes)?).map_err(|e| self.fault(e))
    }

    /// Where a game scored during play stands; `None` for variants that
    /// score only at the end (and plugins older than ABI 1.2).
    pub fn scoreboard(&self, state: &[u8]) -> Result<Option<Scoreboard>, RulesError> {
        let Some(scoreboard) = self.calls.scoreboard else {
            return Ok(None);
        };
        // SAFETY: pointers valid for the call.
        let bytes = self.call(|out| unsafe { scoreboard(state.as_ptr(), state.len(), out) })?;
        if bytes.is_empty() {
            return Ok(None);
        }
        let message = self.decode(&bytes)?;
        let scoreboard = wire::scoreboard(message).map_err(|e| self.fault(e))?;
        self.check_names(&scoreboard)?;
        Ok(Some(scoreboard))
    }

    /// A variant that declares its names (ABI 1.3 on) uses only those: a
    /// name it did not declare is a fault, as clients could not say what
    /// it means.
    fn check_names(&self, scoreboard: &Scoreboard) -> Result<(), RulesError> {
        let info = &self.info;
        if info.tallies.is_empty() && info.counters.is_empty() && info.markers.is_empty() {
            return Ok(());
        }
        let declared = |labels: &[proto::Label], name: &str| labels.iter().any(|l| l.name == name);
        let undeclared = scoreboard
            .tallies
            .iter()
            .map(|t| ("tally", &t.name, declared(&info.tallies, &t.name)))
            .chain(
                scoreboard
                    .counters
                    .iter()
                    .map(|c| ("counter", &c.name, declared(&info.counters, &c.name))),
            )
            .chain(
                scoreboard
                    .markers
                    .iter()
                    .map(|m| ("marker", &m.name, declared(&info.markers, &m.name))),
            )
            .find(|(_, _, declared)| !declared);
        match undeclared {
            Some((what, name, _)) => Err(self.fault(format!(
                "answered a {what} {name:?} its VariantInfo does not declare"
            ))),
            None => Ok(()),
        }
    }

    fn checked_transition(&self, bytes: &[u8]) -> Result<Transition, RulesError> {
        let transition = wire::transition(self.decode(bytes)?).map_err(|e| self.fault(e))?;
        self.check_board(&self.board(&transition.state)?)?;
        Ok(transition)
    }

    fn check_board(&self, board: &Board) -> Result<(), RulesError> {
        board
            .validate()
            .map_err(|e| self.fault(format!("produced an impossible board: {e}")))
    }

    /// Calls a function that answers in a buffer; returns the bytes.
    fn call(&self, f: impl FnOnce(*mut Buffer) -> Status) -> Result<Vec<u8>, RulesError> {
        let mut out = Buffer::EMPTY;
        let status = f(&mut out);
        // SAFETY: the plugin filled `out` (or left it empty).
        let bytes = unsafe { out.as_slice() }.to_vec();
        self.free(out);
        self.status(status, bytes)
    }

    fn finish(&self, status: Status, error: Buffer) -> Result<(), RulesError> {
        // SAFETY: the plugin filled `error` (or left it empty).
        let bytes = unsafe { error.as_slice() }.to_vec();
        self.free(error);
        self.status(status, bytes).map(drop)
    }

    fn status(&self, status: Status, bytes: Vec<u8>) -> Result<Vec<u8>, RulesError> {
        let message = || String::from_utf8_lossy(&bytes).into_owned();
        match (status, RulesErrorKind::from_status(status)) {
            (abi::STATUS_OK, _) => Ok(bytes),
            (_, Some(RulesErrorKind::VariantFault)) => Err(self.fault(message())),
            (_, Some(kind)) => Err(RulesError {
                kind,
                message: message(),
            }),
            (other, None) => Err(self.fault(format!("unknown status {other}: {}", message()))),
        }
    }

    fn free(&self, buffer: Buffer) {
        if !buffer.ptr.is_null() {
            // SAFETY: the buffer came from this plugin and is freed once.
            unsafe { (self.calls.free_buffer)(buffer) };
        }
    }

    fn decode<M: Message + Default>(&self, bytes: &[u8]) -> Result<M, RulesError> {
        M::decode(bytes).map_err(|e| self.fault(format!("sent an unreadable message: {e}")))
    }

    fn fault(&self, message: String) -> RulesError {
        self.faults.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(crate::PLUGIN_FAULTS, "variant" => self.name.clone()).increment(1);
        tracing::error!(variant = %self.name, path = %self.path.display(), %message, "variant plugin fault");
        RulesError {
            kind: RulesErrorKind::VariantFault,
            message: format!("variant {} failed: {message}", self.name),
        }
    }
}

fn encode_options(options: &Options) -> Vec<u8> {
    proto::Options {
        values: options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
    .encode_to_vec()
}
