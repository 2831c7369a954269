//! A loaded plugin and its guarded calls.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bg_engine::game::{Outcome, RulesError, RulesErrorKind, Scoreboard};
use bg_engine::{Board, Dice, Geometry, LegalPlay, Play, Seat};
use bg_variant_api::abi::{self, Status};
use bg_variant_api::{Capabilities, Options, proto, wire};
use prost::Message;

use crate::backend::Backend;
use crate::call::{Answer, Identity, Request};

/// A new game as a plugin set it up (state bytes are the plugin's).
pub type Setup = bg_engine::game::Setup<Vec<u8>>;
/// The result of an action (state bytes are the plugin's).
pub type Transition = bg_engine::game::Transition<Vec<u8>>;

thread_local! {
    /// The last legal plays this thread was given, checked, and what they
    /// answer. An action asks for the same plays twice: the engine, to
    /// pass a turn with no legal move, then the answer, to list them.
    static LAST_PLAYS: std::cell::RefCell<LastPlays> = const {
        std::cell::RefCell::new(LastPlays {
            plugin: 0,
            state: Vec::new(),
            seat: 0,
            dice: None,
            plays: Vec::new(),
        })
    };
}

/// How many boards of states each thread remembers for isolated plugins.
const REMEMBERED_BOARDS: usize = 4;

thread_local! {
    /// The last boards this thread was given by isolated plugins: (plugin
    /// id, state, board). Plugins are pure, so a state's board is given
    /// again.
    static LAST_BOARDS: std::cell::RefCell<std::collections::VecDeque<(u64, Vec<u8>, Board)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// A plugin's legal plays of one position. The plugin is named by its
/// [`Plugin::id`], never reused in a process. Plugins are pure (the same state,
/// seat and dice give the same plays), so the plays can be given again.
struct LastPlays {
    plugin: u64,
    state: Vec<u8>,
    seat: u8,
    dice: Option<Dice>,
    plays: Vec<LegalPlay>,
}

impl LastPlays {
    fn answers(&self, plugin: u64, state: &[u8], seat: u8, dice: Dice) -> bool {
        self.plugin == plugin && self.dice == Some(dice) && self.seat == seat && self.state == state
    }
}

/// Why a plugin must not be called now, and when it may be again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhealthy {
    /// What happened, for people (no plugin's internals in it).
    pub why: String,
    /// When a call may be tried again, if that is known.
    pub retry_after: Option<std::time::Duration>,
}

/// A variant plugin, loaded and checked. Cheap to share (`Arc<Plugin>`);
/// all calls are thread-safe because plugins are pure.
pub struct Plugin {
    /// Unique in the process: names the plugin in `LAST_PLAYS`.
    id: u64,
    path: PathBuf,
    backend: Backend,
    name: String,
    version: String,
    api_version: String,
    capabilities: u64,
    flags: u32,
    has_scoreboard: bool,
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
    /// A plugin described by `identity`, whose code `backend` runs: asks
    /// it for its info.
    pub(crate) fn new(
        path: PathBuf,
        identity: Identity,
        backend: Backend,
    ) -> Result<Plugin, RulesError> {
        static IDS: AtomicU64 = AtomicU64::new(1);
        let mut plugin = Plugin {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            path,
            backend,
            name: identity.name,
            version: identity.version,
            api_version: identity.api_version,
            capabilities: identity.capabilities,
            flags: identity.flags,
            has_scoreboard: identity.has_scoreboard,
            info: proto::VariantInfo::default(),
            faults: AtomicU64::new(0),
            overran: AtomicU64::new(0),
        };
        let bytes = plugin.call(Request::Info)?;
        plugin.info = plugin.decode(&bytes)?;
        if plugin.info.checkers > u32::from(bg_engine::CHECKERS) {
            return Err(RulesError {
                kind: RulesErrorKind::InvalidInput,
                message: format!(
                    "it plays with {} checkers a side; the board holds at most {}",
                    plugin.info.checkers,
                    bg_engine::CHECKERS
                ),
            });
        }
        if plugin.info.name != plugin.name || plugin.name.is_empty() {
            return Err(RulesError {
                kind: RulesErrorKind::InvalidInput,
                message: format!(
                    "descriptor name {:?} differs from info name {:?}",
                    plugin.name, plugin.info.name
                ),
            });
        }
        plugin.check_geometry()?;
        Ok(plugin)
    }

    /// Refuses a geometry this host does not know (a plugin of a later
    /// ABI minor: its boards would be checked and shown wrongly), and the
    /// same-way geometry with the standard board's capability (gnubg's IDs
    /// read boards as opposed).
    fn check_geometry(&self) -> Result<(), RulesError> {
        let refused = |message: String| RulesError {
            kind: RulesErrorKind::InvalidInput,
            message,
        };
        match proto::Geometry::try_from(self.info.geometry) {
            Err(_) => Err(refused(format!(
                "it declares geometry {}, which this host (ABI {}.{}) does not know",
                self.info.geometry,
                abi::ABI_MAJOR,
                abi::ABI_MINOR
            ))),
            Ok(proto::Geometry::SameWay)
                if self.capabilities().contains(Capabilities::STANDARD_BOARD) =>
            {
                Err(refused(
                    "it declares the same-way geometry and the standard board, whose Position IDs are read as opposed"
                        .into(),
                ))
            }
            Ok(_) => Ok(()),
        }
    }

    /// Whether the plugin runs in worker processes (`--plugin-isolation
    /// process`): its calls are cut at their deadline, never left running.
    pub fn isolated(&self) -> bool {
        matches!(self.backend, Backend::Isolated(_))
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
        self.info().max_win_level_or_default()
    }

    /// The variant's name of a win at `level` (from 1): what it says, else
    /// the names a plugin that names none was written for (the standard
    /// board's, as before `VariantInfo.win_kinds` existed).
    pub fn win_kind(&self, level: u32) -> String {
        self.info().win_kind_name(level)
    }

    /// Checkers each side plays with: what the variant says, from 1 to 15
    /// (0, unset, means 15; a plugin saying more is refused at load).
    pub fn checkers(&self) -> u8 {
        match self.info().checkers {
            0 => bg_engine::CHECKERS,
            n => u8::try_from(n)
                .unwrap_or(bg_engine::CHECKERS)
                .min(bg_engine::CHECKERS),
        }
    }

    /// How the seats' numberings meet on the variant's board (a plugin
    /// of ABI 1.3 or before, or a value this host does not know: opposed).
    pub fn geometry(&self) -> Geometry {
        match proto::Geometry::try_from(self.info().geometry) {
            Ok(proto::Geometry::SameWay) => Geometry::SameWay,
            _ => Geometry::Opposed,
        }
    }

    pub fn info(&self) -> &proto::VariantInfo {
        &self.info
    }

    pub fn capabilities(&self) -> Capabilities {
        Capabilities(self.capabilities)
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
    /// past its deadline and has not returned, or (isolated) its worker
    /// processes fail to start and the next try is not due.
    pub fn unhealthy(&self) -> Option<Unhealthy> {
        if let Backend::Isolated(workers) = &self.backend
            && let Some((why, wait)) = workers.unhealthy()
        {
            return Some(Unhealthy {
                why: format!("variant {}: {why}", self.name),
                retry_after: Some(wait),
            });
        }
        match self.overran.load(Ordering::Acquire) {
            0 => None,
            n => Some(Unhealthy {
                why: format!(
                    "{n} call{} of variant {} ran past the deadline and {} not returned",
                    if n == 1 { "" } else { "s" },
                    self.name,
                    if n == 1 { "has" } else { "have" }
                ),
                // Nobody knows when an in-process call returns.
                retry_after: None,
            }),
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
        let answer = self.answer(Request::NewGame { options: &options }, &mut Vec::new())?;
        self.checked_setup(answer)
    }

    /// Starts a game from `board`, if the variant supports it.
    pub fn setup_position(&self, board: &Board, options: &Options) -> Result<Setup, RulesError> {
        let options = encode_options(options);
        let request = Request::SetupPosition {
            board,
            options: &options,
        };
        let answer = self.answer(request, &mut Vec::new())?;
        self.checked_setup(answer)
    }

    /// The board of a state. An isolated plugin's boards are remembered
    /// (see `LAST_BOARDS`): each costs a round trip to a worker, and an
    /// action asks for the same board several times.
    pub fn board(&self, state: &[u8]) -> Result<Board, RulesError> {
        let isolated = self.isolated();
        if isolated
            && let Some(board) = LAST_BOARDS.with_borrow(|last| {
                last.iter()
                    .find(|(plugin, s, _)| *plugin == self.id && s[..] == *state)
                    .map(|(_, _, board)| *board)
            })
        {
            return Ok(board);
        }
        let answer = self.answer(Request::Board { state }, &mut Vec::new())?;
        let board = answer.board;
        self.status(answer.status, answer.bytes)?;
        self.remember_board(state, Some(board));
        Ok(board)
    }

    /// Gives `board` again as the board of `state`, for an isolated plugin
    /// (a worker's answer to a call that returned the state may carry it).
    fn remember_board(&self, state: &[u8], board: Option<Board>) {
        let Some(board) = board.filter(|_| self.isolated()) else {
            return;
        };
        LAST_BOARDS.with_borrow_mut(|last| {
            if last.len() == REMEMBERED_BOARDS {
                last.pop_front();
            }
            last.push_back((self.id, state.to_vec(), board));
        });
    }

    /// The legal plays of `seat` with `dice` (each result once), into
    /// `plays`, which is reused: keep it between calls on hot paths. Every
    /// result board is checked (the variant's checkers a side, no shared
    /// point). The
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
        let seat = seat as u8;
        let given = LAST_PLAYS.with_borrow(|last| {
            let hit = last.answers(self.id, state, seat, dice);
            if hit {
                plays.extend_from_slice(&last.plays);
            }
            hit
        });
        if given {
            return Ok(());
        }
        self.search_plays(state, seat, dice, plays)?;
        self.remember_plays(state, seat, dice, plays);
        Ok(())
    }

    /// Gives `plays` again when this thread asks for this position next.
    fn remember_plays(&self, state: &[u8], seat: u8, dice: Dice, plays: &[LegalPlay]) {
        LAST_PLAYS.with_borrow_mut(|last| {
            last.plugin = self.id;
            last.state.clear();
            last.state.extend_from_slice(state);
            last.seat = seat;
            last.dice = Some(dice);
            last.plays.clear();
            last.plays.extend_from_slice(plays);
        });
    }

    /// The plugin's legal plays, checked: none remembered.
    fn search_plays(
        &self,
        state: &[u8],
        seat: u8,
        dice: Dice,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<(), RulesError> {
        let answer = self.answer(Request::LegalPlays { state, seat, dice }, plays)?;
        if let Err(e) = self.status(answer.status, answer.bytes) {
            plays.clear();
            return Err(e);
        }
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
        let checks_itself = self.flags & abi::FLAG_CHECKS_PLAYS != 0;
        let mut legal = Vec::new();
        if !checks_itself {
            self.legal_plays(state, seat, dice, &mut legal)?;
        }
        let request = Request::ApplyPlay {
            state,
            seat: seat as u8,
            dice,
            play,
        };
        let transition = self.checked_transition(self.answer(request, &mut Vec::new())?)?;
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
        let (seat, request) = (
            seat as u8,
            Request::AfterRoll {
                state,
                seat: seat as u8,
                dice,
            },
        );
        let Backend::Isolated(workers) = &self.backend else {
            return self.checked_transition(self.answer(request, &mut Vec::new())?);
        };
        // A roll is followed by the question of the legal plays, most
        // often of the same state: asked of the worker in the same
        // exchange, and kept if the roll left the state as it was.
        let mut plays = Vec::new();
        let next = Request::LegalPlays { state, seat, dice };
        let mut answers = workers
            .call_many(&[request, next], &mut plays)
            .map_err(|e| self.fault(e))?
            .into_iter();
        let (Some(rolled), Some(listed)) = (answers.next(), answers.next()) else {
            return Err(self.fault("a worker gave fewer answers than asked".into()));
        };
        let transition = self.checked_transition(rolled)?;
        if transition.state == state
            && listed.status == abi::STATUS_OK
            && !plays.is_empty()
            && plays.iter().all(|lp| {
                lp.result
                    .validate_in(self.geometry(), self.checkers())
                    .is_ok()
            })
        {
            self.remember_plays(state, seat, dice, &plays);
        }
        Ok(transition)
    }

    /// Answers a pending decision.
    pub fn decide(&self, state: &[u8], seat: Seat, choice: &str) -> Result<Transition, RulesError> {
        let request = Request::Decide {
            state,
            seat: seat as u8,
            choice: choice.as_bytes(),
        };
        self.checked_transition(self.answer(request, &mut Vec::new())?)
    }

    /// What `loser` concedes by resigning now.
    pub fn concede(&self, state: &[u8], loser: Seat) -> Result<Outcome, RulesError> {
        let bytes = self.call(Request::Concede {
            state,
            loser: loser as u8,
        })?;
        wire::outcome(self.decode(&bytes)?).map_err(|e| self.fault(e))
    }

    /// Where a game scored during play stands; `None` for variants that
    /// score only at the end (and plugins older than ABI 1.2).
    pub fn scoreboard(&self, state: &[u8]) -> Result<Option<Scoreboard>, RulesError> {
        if !self.has_scoreboard {
            return Ok(None);
        }
        let bytes = self.call(Request::Scoreboard { state })?;
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

    /// For the fuzz targets (`crates/fuzz-bodies`): `bytes`, with
    /// `status`, as this plugin's answer to each kind of call, through the
    /// checks the host makes of a real answer (the message read, a setup's
    /// and a transition's board asked of the plugin and checked, an
    /// outcome, a scoreboard and its names). Each must refuse what it
    /// cannot take, never panic. Not for other use.
    #[doc(hidden)]
    pub fn check_answer_bytes(&self, status: Status, bytes: &[u8]) {
        let answer = || Answer::new(status, bytes.to_vec());
        let _ = self.checked_transition(answer());
        let _ = self.checked_setup(answer());
        if let Ok(message) = self.decode(bytes) {
            let _ = wire::outcome(message);
        }
        if let Ok(message) = self.decode(bytes)
            && let Ok(scoreboard) = wire::scoreboard(message)
        {
            let _ = self.check_names(&scoreboard);
        }
    }

    /// A transition answered, its board checked.
    fn checked_transition(&self, answer: Answer) -> Result<Transition, RulesError> {
        let next_board = answer.next_board;
        let bytes = self.status(answer.status, answer.bytes)?;
        let transition = wire::transition(self.decode(&bytes)?).map_err(|e| self.fault(e))?;
        self.remember_board(&transition.state, next_board);
        self.check_board(&self.board(&transition.state)?)?;
        Ok(transition)
    }

    /// A new game answered, its board checked.
    fn checked_setup(&self, answer: Answer) -> Result<Setup, RulesError> {
        let next_board = answer.next_board;
        let bytes = self.status(answer.status, answer.bytes)?;
        let setup = wire::setup(self.decode(&bytes)?);
        self.remember_board(&setup.state, next_board);
        self.check_board(&self.board(&setup.state)?)?;
        Ok(setup)
    }

    fn check_board(&self, board: &Board) -> Result<(), RulesError> {
        board
            .validate_in(self.geometry(), self.checkers())
            .map_err(|e| self.fault(format!("produced an impossible board: {e}")))
    }

    /// Makes a call that answers in bytes; returns them.
    fn call(&self, request: Request<'_>) -> Result<Vec<u8>, RulesError> {
        let answer = self.answer(request, &mut Vec::new())?;
        self.status(answer.status, answer.bytes)
    }

    /// Makes a call; a transport's failure (a worker that died) is a fault.
    fn answer(
        &self,
        request: Request<'_>,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, RulesError> {
        self.backend.call(request, plays).map_err(|e| self.fault(e))
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
