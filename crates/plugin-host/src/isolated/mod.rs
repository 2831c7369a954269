//! Plugins in worker processes (`--plugin-isolation process`).
//!
//! Each call of an isolated plugin is sent to a worker: a child process
//! (the server's own binary, run as `plugin-worker`) that loaded the same
//! library bytes through the same ABI and answers one call at a time over
//! its pipes (see [`frame`]). A worker that crashes (an abort, a segfault,
//! memory past its limit), answers garbage or runs past the call's
//! deadline is killed, the call faults with what happened, and the next
//! call starts a fresh worker. Workers that answered are kept for the next
//! calls, as many as have been busy at once. A worker that fails to start
//! (a plugin crashing at load) is tried again only after a back-off that
//! doubles with each failure in a row, up to [`MAX_BACKOFF`]; meanwhile
//! the plugin is unhealthy and its calls fault at once.
//!
//! The deadline of a call is the one its thread runs under (see
//! [`with_deadline`]), or [`WorkerSettings::call_timeout`] from now.

pub(crate) mod frame;
pub mod worker;

use std::cell::Cell;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bg_engine::LegalPlay;

use crate::call::{Answer, Identity, Request};

/// How isolated plugins' workers are started and limited.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    /// The program that runs a worker, and the arguments before the ones
    /// the host adds (`--name PATH`): the server passes its own binary and
    /// `plugin-worker`.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Environment variables set for the worker (beside the host's own).
    pub env: Vec<(OsString, OsString)>,
    /// The address space a worker may use, in bytes (`RLIMIT_AS`).
    pub memory_limit: Option<u64>,
    /// A call's deadline when its thread runs under none.
    pub call_timeout: Duration,
}

/// The longest wait before a worker that failed to start is tried again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The first wait after a worker failed to start.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `work` with `deadline` for every isolated plugin call it makes:
/// a call still running then is cut (its worker killed) and faults.
pub fn with_deadline<T>(deadline: Instant, work: impl FnOnce() -> T) -> T {
    let before = DEADLINE.replace(Some(deadline));
    let result = work();
    DEADLINE.set(before);
    result
}

/// The worker processes of one plugin.
pub(crate) struct Workers {
    path: PathBuf,
    library: Arc<[u8]>,
    settings: WorkerSettings,
    identity: Identity,
    idle: Mutex<Vec<Worker>>,
    starts: Mutex<Starts>,
}

/// Failed starts in a row, and when the next may be tried.
#[derive(Default)]
struct Starts {
    failures: u32,
    not_before: Option<Instant>,
    last_error: String,
}

/// One worker process and its pipes.
struct Worker {
    child: Child,
    requests: ChildStdin,
    answers: ChildStdout,
}

/// How an exchange with a worker failed.
enum Failure {
    /// Past the deadline: the worker was killed.
    Late,
    /// The worker died, or its pipes failed, or it sent garbage.
    Broken(String),
}

impl Workers {
    /// Starts the first worker of the plugin in `library` (its file is
    /// `path`): the plugin's identity, or why it could not be loaded.
    pub(crate) fn start(
        path: &Path,
        library: Arc<[u8]>,
        settings: WorkerSettings,
    ) -> Result<(Workers, Identity), String> {
        let deadline = Instant::now() + settings.call_timeout;
        let (worker, identity) = spawn(path, &library, &settings, deadline)?;
        let workers = Workers {
            path: path.to_path_buf(),
            library,
            settings,
            identity: identity.clone(),
            idle: Mutex::new(vec![worker]),
            starts: Mutex::new(Starts::default()),
        };
        Ok((workers, identity))
    }

    /// Makes one call in a worker, within the thread's deadline.
    pub(crate) fn call(
        &self,
        request: Request<'_>,
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Answer, String> {
        let mut answers = self.call_many(&[request], plays)?;
        answers.pop().ok_or_else(|| "no answer".to_string())
    }

    /// Makes several calls in one exchange with a worker (sent together,
    /// answered in order), within the thread's deadline; a `LegalPlays`
    /// request's plays go into `plays` (at most one such request).
    pub(crate) fn call_many(
        &self,
        requests: &[Request<'_>],
        plays: &mut Vec<LegalPlay>,
    ) -> Result<Vec<Answer>, String> {
        let deadline = DEADLINE
            .get()
            .unwrap_or_else(|| Instant::now() + self.settings.call_timeout);
        let mut message = Vec::new();
        for request in requests {
            frame::write_frame(&mut message, &frame::request(request))
                .map_err(|e| e.to_string())?;
        }
        let (mut worker, fresh) = self.take(deadline)?;
        let mut outcome = worker.exchange(&message, requests.len(), deadline);
        if !fresh && matches!(outcome, Err(Failure::Broken(_))) && worker.died_idle() {
            // It died while it waited (killed from outside): the call never
            // reached it, so it goes to a fresh one.
            worker = self.start_one(deadline)?;
            outcome = worker.exchange(&message, requests.len(), deadline);
        }
        let kinds = requests.iter().map(kind).collect::<Vec<_>>().join(", ");
        let failed = |worker: Worker, why: Failure| match why {
            Failure::Late => {
                worker.kill_now();
                format!(
                    "a call ran past its deadline; its worker process was killed (the next call starts another) [{kinds}]"
                )
            }
            Failure::Broken(why) => {
                let end = worker.kill();
                format!("its worker process failed during {kinds}: {why}{end}")
            }
        };
        let frames = match outcome {
            Ok(frames) => frames,
            Err(why) => return Err(failed(worker, why)),
        };
        let answers: Result<Vec<Answer>, String> = requests
            .iter()
            .zip(&frames)
            .map(|(request, bytes)| frame::read_answer(request, bytes, plays))
            .collect();
        match answers {
            Ok(answers) => {
                self.lock_idle().push(worker);
                Ok(answers)
            }
            Err(garbage) => Err(failed(
                worker,
                Failure::Broken(format!("it answered garbage: {garbage}")),
            )),
        }
    }

    /// Why the plugin cannot be called now: its workers fail to start and
    /// the next try is not due.
    pub(crate) fn unhealthy(&self) -> Option<(String, Duration)> {
        let starts = self.lock_starts();
        let wait = starts.not_before?.checked_duration_since(Instant::now())?;
        let why = format!(
            "its worker process failed to start {} time{} in a row (last: {}); next try in {} ms",
            starts.failures,
            if starts.failures == 1 { "" } else { "s" },
            starts.last_error,
            wait.as_millis()
        );
        Some((why, wait))
    }

    /// An idle worker (false), else a new one (true).
    fn take(&self, deadline: Instant) -> Result<(Worker, bool), String> {
        if let Some(worker) = self.lock_idle().pop() {
            return Ok((worker, false));
        }
        Ok((self.start_one(deadline)?, true))
    }

    /// Starts a worker, unless the last starts failed and the back-off
    /// has not passed.
    fn start_one(&self, deadline: Instant) -> Result<Worker, String> {
        if let Some((why, _)) = self.unhealthy() {
            return Err(why);
        }
        match spawn(&self.path, &self.library, &self.settings, deadline) {
            Ok((worker, identity)) if identity == self.identity => {
                self.lock_starts().failures = 0;
                Ok(worker)
            }
            Ok((worker, identity)) => {
                worker.kill();
                Err(self.start_failed(format!(
                    "a worker loaded another plugin ({} {})",
                    identity.name, identity.version
                )))
            }
            Err(why) => Err(self.start_failed(why)),
        }
    }

    fn start_failed(&self, why: String) -> String {
        let mut starts = self.lock_starts();
        starts.failures += 1;
        let backoff = FIRST_BACKOFF
            .saturating_mul(1 << (starts.failures - 1).min(16))
            .min(MAX_BACKOFF);
        starts.not_before = Some(Instant::now() + backoff);
        starts.last_error = why.clone();
        tracing::error!(
            path = %self.path.display(),
            failures = starts.failures,
            ?backoff,
            error = %why,
            "a plugin worker process failed to start"
        );
        format!("its worker process failed to start: {why}")
    }

    fn lock_idle(&self) -> std::sync::MutexGuard<'_, Vec<Worker>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_starts(&self) -> std::sync::MutexGuard<'_, Starts> {
        self.starts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Starts a worker and gives it the library: the worker and the identity
/// it loaded, or why not.
fn spawn(
    path: &Path,
    library: &[u8],
    settings: &WorkerSettings,
    deadline: Instant,
) -> Result<(Worker, Identity), String> {
    let mut command = Command::new(&settings.program);
    command
        .args(&settings.args)
        .envs(settings.env.iter().map(|(k, v)| (k, v)))
        .arg("--name")
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(limit) = settings.memory_limit {
        command.arg("--memory-limit-bytes").arg(limit.to_string());
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", settings.program.display()))?;
    let (Some(requests), Some(answers)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("the worker process has no pipes".into());
    };
    let mut worker = Worker {
        child,
        requests,
        answers,
    };
    let mut framed = Vec::with_capacity(library.len() + 4);
    if let Err(e) = frame::write_frame(&mut framed, library) {
        worker.kill_now();
        return Err(format!("the plugin cannot be sent to a worker: {e}"));
    }
    let hello = match worker.exchange(&framed, 1, deadline) {
        Ok(mut frames) => frames.pop().unwrap_or_default(),
        Err(Failure::Late) => {
            worker.kill_now();
            return Err("loading the plugin ran past the deadline".into());
        }
        Err(Failure::Broken(why)) => {
            let end = worker.kill();
            return Err(format!(
                "its worker process failed as it loaded the plugin: {why}{end}"
            ));
        }
    };
    match frame::read_hello(&hello) {
        Ok(Ok(identity)) => Ok((worker, identity)),
        Ok(Err(refused)) => {
            worker.kill();
            Err(refused)
        }
        Err(garbage) => {
            worker.kill();
            Err(format!("the worker answered garbage: {garbage}"))
        }
    }
}

impl Worker {
    /// Sends `message` (whole frames) and reads `count` answer frames, by
    /// `deadline`.
    fn exchange(
        &mut self,
        message: &[u8],
        count: usize,
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, Failure> {
        use std::io::Write;
        self.requests
            .write_all(message)
            .and_then(|()| self.requests.flush())
            .map_err(|e| Failure::Broken(format!("sending the call: {e}")))?;
        let mut frames = Vec::with_capacity(count);
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 16 << 10];
        while frames.len() < count {
            if let Some(len) = frame::frame_len(&bytes) {
                if len > frame::MAX_FRAME {
                    return Err(Failure::Broken(format!("it sent a frame of {len} bytes")));
                }
                if bytes.len() >= 4 + len {
                    let rest = bytes.split_off(4 + len);
                    bytes.drain(..4);
                    frames.push(std::mem::replace(&mut bytes, rest));
                    continue;
                }
            }
            self.wait_readable(deadline)?;
            match self.answers.read(&mut chunk) {
                Ok(0) => return Err(Failure::Broken("it closed its answers".into())),
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::Broken(format!("reading its answer: {e}"))),
            }
        }
        if !bytes.is_empty() {
            return Err(Failure::Broken("it sent more than it was asked".into()));
        }
        Ok(frames)
    }

    /// Waits until the answers pipe has bytes (or is closed), or fails
    /// with `Late` at the deadline.
    fn wait_readable(&self, deadline: Instant) -> Result<(), Failure> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::Late);
            }
            let timeout = Timespec::try_from(left).unwrap_or(Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            });
            let mut fds = [PollFd::new(&self.answers, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => continue,
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(Failure::Broken(format!("waiting for its answer: {e}"))),
            }
        }
    }

    /// Kills and reaps a worker that is still running (its call is late).
    fn kill_now(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the worker had already exited (reaping it if so).
    fn died_idle(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kills and reaps the worker; says how it ended ("; it was killed
    /// by signal 11 (SIGSEGV)") if it ended by itself first. A worker
    /// whose pipe just closed may still be exiting: it gets a moment.
    fn kill(mut self) -> String {
        let mut ended = self.child.try_wait().ok().flatten();
        let waited = Instant::now();
        while ended.is_none() && waited.elapsed() < Duration::from_millis(200) {
            std::thread::sleep(Duration::from_millis(2));
            ended = self.child.try_wait().ok().flatten();
        }
        if ended.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        ended.map(describe_exit).unwrap_or_default()
    }
}

/// ", it exited with status 1", ", it was killed by signal 6 (SIGABRT)".
fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("; it exited with status {code}"),
        (None, Some(signal)) => {
            format!("; it was killed by signal {signal}{}", signal_name(signal))
        }
        _ => String::new(),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

/// The ABI function a request calls, for messages.
fn kind(request: &Request<'_>) -> &'static str {
    match request {
        Request::Info => "info",
        Request::NewGame { .. } => "new_game",
        Request::SetupPosition { .. } => "setup_position",
        Request::Board { .. } => "board",
        Request::LegalPlays { .. } => "legal_plays",
        Request::ApplyPlay { .. } => "apply_play",
        Request::AfterRoll { .. } => "after_roll",
        Request::Decide { .. } => "decide",
        Request::Concede { .. } => "concede",
        Request::Scoreboard { .. } => "scoreboard",
    }
}

/// The frames' readers, on bytes from outside, for the fuzz targets
/// (`crates/fuzz-bodies`): a worker reading a hostile server's request,
/// the server reading a hostile worker's hello and answers. Each must
/// refuse what it cannot read, never panic. Not for other use.
#[doc(hidden)]
pub mod fuzzing {
    use bg_engine::{Board, Dice, Play};

    use super::frame;
    use crate::call::Request;

    /// A worker reading a request.
    pub fn request(bytes: &[u8]) {
        let _ = frame::OwnedRequest::read(bytes);
    }

    /// The server reading a worker's hello.
    pub fn hello(bytes: &[u8]) {
        let _ = frame::read_hello(bytes);
    }

    /// The server reading a worker's answer to a request of each kind.
    pub fn answer(bytes: &[u8]) {
        let board = Board::default();
        let Ok(dice) = Dice::new(3, 5) else {
            return;
        };
        let play = Play::EMPTY;
        let state: &[u8] = b"state";
        let requests = [
            Request::Info,
            Request::NewGame { options: b"{}" },
            Request::SetupPosition {
                board: &board,
                options: b"{}",
            },
            Request::Board { state },
            Request::LegalPlays {
                state,
                seat: 0,
                dice,
            },
            Request::ApplyPlay {
                state,
                seat: 1,
                dice,
                play: &play,
            },
            Request::AfterRoll {
                state,
                seat: 0,
                dice,
            },
        ];
        let mut plays = Vec::new();
        for request in &requests {
            let _ = frame::read_answer(request, bytes, &mut plays);
        }
    }

    /// A frame read off a pipe (its length, then its bytes).
    pub fn frame(bytes: &[u8]) {
        let _ = frame::read_frame(&mut &bytes[..]);
    }
}
