//! SQLite's writer: one thread that owns the writing connection, groups
//! the writes waiting in its queue into one transaction (group commit),
//! and answers each caller; and the checkpointer, a thread of its own that
//! copies committed pages from the log into the database file.
//!
//! Both call SQLite directly (rusqlite), on their own threads: a group's
//! BEGIN, statements and COMMIT run one after another with no hand-over
//! between threads, so nothing in a commit waits for another thread to be
//! scheduled (every caller waits for the writer). Reads, migrations and
//! maintenance stay on sqlx's connections in `super`.
//!
//! This module must never interpret what it stores, nor answer a caller
//! before its write's outcome is known: `Ok` only after COMMIT returned.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{Connection, ffi, params};
use tokio::sync::{mpsc, oneshot, watch};

use crate::rows::AnswerColumns;
use crate::{Answer, Applied, GameRecord, LogEntry, RequestRecord, StoreError};

use super::{BUSY_TIMEOUT, Durability, unix_seconds};

/// The most writes grouped into one transaction.
const MAX_GROUP: usize = 64;

/// Writes waiting for the writer before callers wait to queue theirs.
const QUEUE: usize = 1024;

/// Log pages after which the writer checkpoints itself, should the
/// checkpointer fall behind (64 MiB with 4 KiB pages).
const WRITER_CHECKPOINT_PAGES: u32 = 16_384;

/// The least time between two checkpoints.
const CHECKPOINT_PAUSE: Duration = Duration::from_millis(100);

/// While writes fail, how often the writer tries a small write of its own
/// to learn whether the storage is back.
pub(super) const PROBE_INTERVAL: Duration = Duration::from_millis(500);

/// The free space the database's file system must have again before the
/// store calls itself writable (a full disk can still take a small write
/// into log pages it had already, so a write alone proves too little).
const MIN_FREE_BYTES: u64 = 1 << 20;

/// What the writer is asked to do.
#[derive(Debug)]
pub(super) enum Job {
    Write(Box<Write>),
    /// Finish, checkpoint and close; answer when done.
    Close(oneshot::Sender<()>),
}

/// One write and where its result goes.
#[derive(Debug)]
pub(super) struct Write {
    pub kind: WriteKind,
    pub done: oneshot::Sender<Result<(), StoreError>>,
}

#[derive(Debug)]
pub(super) enum WriteKind {
    Create {
        game: GameRecord,
        entry: LogEntry,
        request: Option<RequestRow>,
    },
    Commit {
        game: GameRecord,
        expected_version: u64,
        entry: LogEntry,
        request: Option<RequestRow>,
    },
}

/// A request id to record, as its columns: made when the write is queued,
/// so that an answer that cannot be stored is refused to its caller alone
/// and the writer only binds values.
#[derive(Debug)]
pub(super) struct RequestRow {
    scope: String,
    request_id: String,
    fingerprint: Vec<u8>,
    /// The rest of the scope after "<game id>/" (the seat) when the id is
    /// kept in its action's log row: an action's id in a scope of the game
    /// it is committed with, answered by the version of that log entry.
    /// Otherwise (NewGame's ids, any other) it is a row of `requests`.
    logged: Option<String>,
    version: Option<i64>,
    game_id: Option<String>,
    response: Option<Vec<u8>>,
}

impl RequestRow {
    fn new(request: &RequestRecord, game_id: &str, version: u64) -> Result<RequestRow, StoreError> {
        let answer = AnswerColumns::of(&request.answer)?;
        let logged = split_scope(&request.scope)
            .filter(|(game, _)| *game == game_id)
            .filter(|_| request.answer == Answer::Version(version))
            .map(|(_, rest)| rest.to_string());
        Ok(RequestRow {
            scope: request.scope.clone(),
            request_id: request.request_id.clone(),
            fingerprint: request.fingerprint.clone(),
            logged,
            version: answer.version,
            game_id: answer.game_id.map(str::to_string),
            response: answer.response.map(<[u8]>::to_vec),
        })
    }

    /// The columns of a request id, if there is one, recorded with the log
    /// entry of `version` of `game_id`.
    pub fn of(
        request: Option<&RequestRecord>,
        game_id: &str,
        version: u64,
    ) -> Result<Option<RequestRow>, StoreError> {
        request
            .map(|request| RequestRow::new(request, game_id, version))
            .transpose()
    }
}

/// An action scope's game id and the rest (see [`crate::action_scope`]).
/// A game id holding a '/' never matches: its scopes cannot say where it
/// ends, so their ids are kept in `requests`.
pub(super) fn split_scope(scope: &str) -> Option<(&str, &str)> {
    scope.split_once('/')
}

/// The most games whose logged request ids the writer keeps digests of
/// (8 bytes an id: about 1 MiB for a thousand games of 100 actions). A
/// game left out is read again, its log's ids once, when next written.
const KNOWN_GAMES: usize = 16_384;

/// Which request ids are used, for the writer to refuse one used before
/// without a lookup for every commit: the ids of each game's log as 64-bit
/// digests, for the games written lately. A digest found is only a hint
/// (two ids may share one, and an id forgotten since leaves its digest):
/// the game's log is then read for the id itself. Never misses an id: a
/// game's digests are read from its whole log the first time it is
/// written, and every id logged since is added.
#[derive(Debug, Default)]
struct UsedIds {
    games: std::collections::HashMap<String, std::collections::HashSet<u64>>,
    /// Whether `requests` may hold action ids (of older servers, or in
    /// scopes that name no game): each action id is looked for there too.
    in_table: bool,
}

impl UsedIds {
    /// Reads whether `requests` holds action ids (anything but NewGame's).
    fn open(connection: &Connection) -> rusqlite::Result<UsedIds> {
        // Two range reads of the key, where `scope <> ?` would read all.
        let any = |sql: &str| -> rusqlite::Result<bool> {
            connection.prepare(sql)?.exists([crate::NEW_GAME_SCOPE])
        };
        let in_table = any("SELECT 1 FROM requests WHERE scope < ? LIMIT 1")?
            || any("SELECT 1 FROM requests WHERE scope > ? LIMIT 1")?;
        Ok(UsedIds {
            games: Default::default(),
            in_table,
        })
    }

    /// Takes the id of `request` for its log row in `game_id`: refused
    /// (Duplicate) if it is used already, otherwise counted as used from
    /// now (should the write not land after all, its digest is only a
    /// hint too much).
    fn claim(
        &mut self,
        connection: &Connection,
        game_id: &str,
        rest: &str,
        request: &RequestRow,
    ) -> Result<(), Stop> {
        let duplicate = || Err(Stop::Refused(StoreError::Duplicate));
        if self.in_table && in_requests(connection, request)? {
            return duplicate();
        }
        let digest = digest(rest, &request.request_id);
        let known = match self.games.get_mut(game_id) {
            Some(known) => known,
            None => {
                let known = logged_digests(connection, game_id)?;
                self.know(game_id, known)
            }
        };
        if !known.insert(digest) && in_log(connection, game_id, rest, &request.request_id)? {
            return duplicate();
        }
        Ok(())
    }

    /// A game just created: no id is logged in it yet.
    fn created(&mut self, game_id: &str) {
        if !self.games.contains_key(game_id) {
            self.know(game_id, Default::default());
        }
    }

    /// Keeps a game's digests (another game's go, past [`KNOWN_GAMES`]).
    fn know(
        &mut self,
        game_id: &str,
        known: std::collections::HashSet<u64>,
    ) -> &mut std::collections::HashSet<u64> {
        if self.games.len() >= KNOWN_GAMES {
            // Any game will do: it is read again when next written.
            if let Some(other) = self.games.keys().next().cloned() {
                self.games.remove(&other);
            }
        }
        self.games.entry(game_id.to_string()).or_insert(known)
    }
}

/// The digest of a logged request id (SipHash with fixed keys: the same
/// in every process, though only this one's memory holds them).
fn digest(rest: &str, request_id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    (rest, request_id).hash(&mut hasher);
    hasher.finish()
}

/// The digests of the ids in a game's log.
fn logged_digests(
    connection: &Connection,
    game_id: &str,
) -> rusqlite::Result<std::collections::HashSet<u64>> {
    let mut statement = connection.prepare_cached(
        "SELECT request_scope, request_id FROM game_events \
         WHERE game_id = ? AND request_id IS NOT NULL",
    )?;
    let mut rows = statement.query([game_id])?;
    let mut known = std::collections::HashSet::new();
    while let Some(row) = rows.next()? {
        // A value of another type (a damaged row) reads as no id: the
        // exact lookup in `in_log` would not find it either.
        let rest: Option<String> = row.get(0).ok();
        let request_id: Option<String> = row.get(1).ok();
        if let (Some(rest), Some(request_id)) = (rest, request_id) {
            known.insert(digest(&rest, &request_id));
        }
    }
    Ok(known)
}

/// Whether a game's log holds a request id.
fn in_log(
    connection: &Connection,
    game_id: &str,
    rest: &str,
    request_id: &str,
) -> rusqlite::Result<bool> {
    connection
        .prepare_cached(
            "SELECT 1 FROM game_events \
             WHERE game_id = ? AND request_scope = ? AND request_id = ?",
        )?
        .exists([game_id, rest, request_id])
}

/// Whether `requests` holds a request id.
fn in_requests(connection: &Connection, request: &RequestRow) -> rusqlite::Result<bool> {
    connection
        .prepare_cached("SELECT 1 FROM requests WHERE scope = ? AND request_id = ?")?
        .exists([&request.scope, &request.request_id])
}

/// How the writing connection is opened (again, after a failure).
#[derive(Clone, Debug)]
struct Settings {
    path: PathBuf,
    durability: Durability,
}

impl Settings {
    /// A connection of the writer's (or the checkpointer's): the store's
    /// durability, and no check of the log's foreign key to its game. Every write that adds a log row
    /// first inserts the game or updates it by compare-and-set in the same
    /// transaction, and rolls back if that touched no row, so the game is
    /// always there; checking it cost a lookup of the game for each row.
    /// Migrations run with the check on.
    fn connect(&self) -> rusqlite::Result<Connection> {
        let connection = Connection::open(&self.path)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.pragma_update(None, "journal_mode", "wal")?;
        let synchronous = match self.durability {
            Durability::Full => "full",
            Durability::Normal => "normal",
        };
        connection.pragma_update(None, "synchronous", synchronous)?;
        connection.pragma_update(None, "foreign_keys", false)?;
        // A statement journal stays in memory, not in a file.
        connection.pragma_update(None, "temp_store", "memory")?;
        // The writer leaves checkpoints to the checkpointer, unless the
        // log grows past this many pages (a safety net).
        connection.pragma_update(None, "wal_autocheckpoint", WRITER_CHECKPOINT_PAGES)?;
        Ok(connection)
    }
}

/// The writer's queue, and the writable flag it keeps.
pub(super) struct Started {
    pub jobs: mpsc::Sender<Job>,
    pub writable: watch::Receiver<bool>,
    #[cfg(test)]
    pub faults: std::sync::Arc<faults::Faults>,
}

/// Opens the writing and checkpointing connections on the database at
/// `path` (its schema already made) and starts their threads.
pub(super) fn start(path: &Path, durability: Durability) -> Result<Started, StoreError> {
    let settings = Settings {
        path: path.to_path_buf(),
        durability,
    };
    let failed = |e: rusqlite::Error| StoreError::WriteFailed {
        message: format!("opening the database for writing: {e}"),
        applied: Applied::No,
    };
    let connection = settings.connect().map_err(failed)?;
    let ids = UsedIds::open(&connection).map_err(failed)?;
    let checkpointer = settings.connect().map_err(failed)?;
    let (jobs, queue) = mpsc::channel(QUEUE);
    let (writable_tx, writable) = watch::channel(true);
    #[cfg(test)]
    let faults = std::sync::Arc::new(faults::Faults::default());
    let writer = Writer {
        folder: path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        settings,
        connection: Some(connection),
        ids,
        writable: writable_tx,
        #[cfg(test)]
        faults: faults.clone(),
    };
    let thread_failed = |e: std::io::Error| StoreError::WriteFailed {
        message: format!("starting the writer: {e}"),
        applied: Applied::No,
    };
    let (commits, committed) = std::sync::mpsc::sync_channel(1);
    let checkpoints = std::thread::Builder::new()
        .name("sqlite-checkpointer".into())
        .spawn(move || checkpoint_loop(checkpointer, committed))
        .map_err(thread_failed)?;
    let checkpoints = Checkpoints {
        commits,
        thread: checkpoints,
    };
    // The writer's thread waits for its queue on a runtime of its own
    // (tokio's channel: should the writer be gone, the writes still queued
    // are dropped, so their callers hear of it); it calls SQLite outside it.
    let waiting = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(thread_failed)?;
    std::thread::Builder::new()
        .name("sqlite-writer".into())
        .spawn(move || write_loop(writer, &waiting, queue, checkpoints))
        .map_err(thread_failed)?;
    Ok(Started {
        jobs,
        writable,
        #[cfg(test)]
        faults,
    })
}

/// The checkpointer's thread, and how the writer tells it of commits.
struct Checkpoints {
    commits: std::sync::mpsc::SyncSender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// The writer: groups what is queued, commits, answers each caller, and
/// tells the checkpointer there is work. While writes fail it tries a
/// small write of its own every [`PROBE_INTERVAL`], so the store reports
/// itself writable again once the storage is back, even if no caller
/// writes meanwhile.
fn write_loop(
    mut writer: Writer,
    waiting: &tokio::runtime::Runtime,
    mut queue: mpsc::Receiver<Job>,
    checkpoints: Checkpoints,
) {
    let mut jobs = Vec::with_capacity(MAX_GROUP);
    // While unwritable, probes come on a fixed beat, busy queue or not.
    let mut next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
    loop {
        let writable = *writer.writable.borrow();
        let received = waiting.block_on(async {
            if writable {
                return Some(queue.recv_many(&mut jobs, MAX_GROUP).await);
            }
            tokio::select! {
                received = queue.recv_many(&mut jobs, MAX_GROUP) => Some(received),
                _ = tokio::time::sleep_until(next_probe) => None,
            }
        });
        let Some(received) = received else {
            writer.probe();
            next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
            continue;
        };
        if writable {
            next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
        }
        if received == 0 {
            // Every handle is gone: nothing more to write.
            return;
        }
        let mut group = Vec::with_capacity(jobs.len());
        let mut closing = Vec::new();
        for job in jobs.drain(..) {
            match job {
                Job::Write(write) if closing.is_empty() => group.push(*write),
                Job::Write(write) => {
                    let _ = write.done.send(Err(closed()));
                }
                Job::Close(done) => closing.push(done),
            }
        }
        if !group.is_empty() {
            writer.apply(group);
            let _ = checkpoints.commits.try_send(());
        }
        if !closing.is_empty() {
            // No write is taken after a close: those queued are refused.
            queue.close();
            while let Some(job) = waiting.block_on(queue.recv()) {
                match job {
                    Job::Write(write) => {
                        let _ = write.done.send(Err(closed()));
                    }
                    Job::Close(done) => closing.push(done),
                }
            }
            writer.close(checkpoints);
            for done in closing {
                let _ = done.send(());
            }
            return;
        }
    }
}

/// The answer to a write that came after the store closed: not stored.
pub(super) fn closed() -> StoreError {
    StoreError::WriteFailed {
        message: "the store is closed".into(),
        applied: Applied::No,
    }
}

/// Why a transaction did not commit.
enum Failure {
    /// A write was refused (a version conflict, a duplicate id) and the
    /// transaction rolled back: the connection is clean.
    Refused(StoreError),
    /// The storage failed; the connection was dropped.
    Storage(StorageFailure),
}

/// A failure of the storage itself, and whether the write may be stored.
struct StorageFailure {
    message: String,
    applied: Applied,
}

impl StorageFailure {
    /// The answer to each write it failed.
    fn error(&self) -> StoreError {
        StoreError::WriteFailed {
            message: self.message.clone(),
            applied: self.applied,
        }
    }
}

/// Why a group's statements stopped.
#[derive(Debug)]
enum Stop {
    /// A write was refused: the transaction is to be rolled back.
    Refused(StoreError),
    /// SQLite failed (a full disk, an I/O error).
    Storage(rusqlite::Error),
}

impl From<rusqlite::Error> for Stop {
    /// A primary-key violation is a refusal (the game id or the request id
    /// is stored already); any other error is the storage's.
    fn from(e: rusqlite::Error) -> Stop {
        match &e {
            rusqlite::Error::SqliteFailure(failure, _)
                if failure.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || failure.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                Stop::Refused(StoreError::Duplicate)
            }
            _ => Stop::Storage(e),
        }
    }
}

/// The writing connection (none after a storage failure, until the next
/// write opens one) and the store's writable flag: false from a storage
/// failure until a probe finds room again (a caller's write that happens
/// to fit meanwhile does not end it).
struct Writer {
    settings: Settings,
    /// The database's folder, whose file system must have room again.
    folder: PathBuf,
    connection: Option<Connection>,
    ids: UsedIds,
    writable: watch::Sender<bool>,
    #[cfg(test)]
    faults: std::sync::Arc<faults::Faults>,
}

impl Writer {
    /// Applies a group and answers each of its writes.
    fn apply(&mut self, group: Vec<Write>) {
        let start = Instant::now();
        match self.transaction(&group) {
            Ok(()) => {
                crate::commit_observed(group.len(), start.elapsed());
                for write in group {
                    let _ = write.done.send(Ok(()));
                }
            }
            Err(Failure::Refused(_)) if group.len() > 1 => {
                // Someone's write was refused: apply each alone for its
                // own answer.
                for write in group {
                    let result = match self.transaction(std::slice::from_ref(&write)) {
                        Ok(()) => Ok(()),
                        Err(Failure::Refused(e)) => Err(e),
                        Err(Failure::Storage(failure)) => Err(failure.error()),
                    };
                    let _ = write.done.send(result);
                }
            }
            Err(Failure::Refused(e)) => {
                if let Some(write) = group.into_iter().next() {
                    let _ = write.done.send(Err(e));
                }
            }
            Err(Failure::Storage(failure)) => {
                for write in group {
                    let _ = write.done.send(Err(failure.error()));
                }
            }
        }
    }

    /// One transaction: BEGIN, the group's statements, COMMIT. Any storage
    /// error drops the connection (closing it rolls back whatever it had
    /// open), so a failed COMMIT or ROLLBACK can never leave a transaction
    /// open under the next group.
    fn transaction(&mut self, group: &[Write]) -> Result<(), Failure> {
        let mut ids = std::mem::take(&mut self.ids);
        let result = self.transaction_with(&mut ids, group);
        if result.is_ok() {
            for write in group {
                if let WriteKind::Create { game, .. } = &write.kind {
                    ids.created(&game.game_id);
                }
            }
        }
        self.ids = ids;
        result
    }

    fn transaction_with(&mut self, ids: &mut UsedIds, group: &[Write]) -> Result<(), Failure> {
        #[cfg(test)]
        let fault = self.faults.next();
        #[cfg(not(test))]
        let fault: Option<faults::Fault> = None;
        #[cfg(test)]
        let faults = self.faults.clone();
        let connection = match self.connection() {
            Ok(connection) => connection,
            Err(message) => return Err(self.broken(&message, Applied::No)),
        };
        #[cfg(test)]
        faults.limit_pages(connection);
        if fault == Some(faults::Fault::BeforeBegin) {
            return Err(self.broken("injected: before BEGIN", Applied::No));
        }
        if fault == Some(faults::Fault::Panic) {
            panic!("injected: the writer panics");
        }
        match statements(connection, ids, group) {
            Ok(()) => {}
            Err(Stop::Refused(e)) => {
                return match connection.execute_batch("ROLLBACK") {
                    Ok(()) => Err(Failure::Refused(e)),
                    Err(r) => {
                        let message = format!("{e}; then ROLLBACK failed: {r}");
                        Err(self.broken(&message, Applied::No))
                    }
                };
            }
            Err(Stop::Storage(e)) => return Err(self.broken(&e.to_string(), Applied::No)),
        }
        if fault == Some(faults::Fault::InStatements) {
            return Err(self.broken("injected: a statement failed", Applied::No));
        }
        if fault == Some(faults::Fault::AtCommit) {
            // COMMIT failed and left the transaction open (SQLite may do
            // either on SQLITE_FULL or an I/O error).
            return Err(self.broken("injected: COMMIT failed", Applied::Unknown));
        }
        let committing = Instant::now();
        let committed = connection.execute_batch("COMMIT");
        metrics::histogram!(crate::WAL_COMMIT_SECONDS).record(committing.elapsed().as_secs_f64());
        if let Err(e) = committed {
            // COMMIT may have failed after the log held the transaction
            // (an fsync error): whether it is stored is not known.
            return Err(self.broken(&e.to_string(), Applied::Unknown));
        }
        if fault == Some(faults::Fault::AfterCommit) {
            // The outcome an fsync failure leaves: stored, yet reported
            // as failed.
            return Err(self.broken("injected: error after COMMIT", Applied::Unknown));
        }
        // Writable again only when the probe finds room: a write that
        // happens to fit on a full disk does not end the outage.
        Ok(())
    }

    /// The writing connection, opened again if a failure dropped it (the
    /// error says why it could not be).
    fn connection(&mut self) -> Result<&mut Connection, String> {
        if self.connection.is_none() {
            let connection = self
                .settings
                .connect()
                .map_err(|e| format!("opening the database again: {e}"))?;
            self.connection = Some(connection);
        }
        self.connection
            .as_mut()
            .ok_or_else(|| "no connection".to_string())
    }

    /// After a storage failure: drops the connection and reports the store
    /// unwritable until a write succeeds again.
    fn broken(&mut self, message: &str, applied: Applied) -> Failure {
        self.drop_connection();
        tracing::error!(error = message, %applied, "storage write failed");
        self.set_writable(false);
        Failure::Storage(StorageFailure {
            message: message.to_string(),
            applied,
        })
    }

    /// Closes the writing connection: closing rolls back an open
    /// transaction. If even that fails, the connection is gone all the same
    /// (dropped, SQLite frees it once its statements are done).
    fn drop_connection(&mut self) {
        if let Some(connection) = self.connection.take()
            && let Err((_, e)) = connection.close()
        {
            tracing::warn!(error = %e, "closing the failed writing connection");
        }
    }

    fn set_writable(&self, writable: bool) {
        self.writable.send_if_modified(|now| {
            let changed = *now != writable;
            *now = writable;
            changed
        });
    }

    /// Is there room again? The database's file system must have
    /// [`MIN_FREE_BYTES`] free, and a small write of the writer's own (a
    /// counter in `store_probe`) must commit. Failures are expected here
    /// and logged quietly.
    fn probe(&mut self) {
        #[cfg(test)]
        let faults = self.faults.clone();
        #[cfg(test)]
        if faults.probes_paused() {
            return;
        }
        #[cfg(test)]
        if faults.next().is_some() {
            tracing::debug!("injected: probe failed");
            return;
        }
        match free_bytes(&self.folder) {
            Ok(free) if free < MIN_FREE_BYTES => {
                tracing::debug!(free, "probe: the disk is still full");
                return;
            }
            Ok(_) => {}
            // Not every file system says: the write below decides.
            Err(e) => tracing::debug!(error = %e, "probe: free space unknown"),
        }
        let Ok(connection) = self.connection() else {
            return;
        };
        #[cfg(test)]
        faults.limit_pages(connection);
        let written = connection.execute_batch(
            "BEGIN IMMEDIATE; \
             INSERT INTO store_probe (id, writes) VALUES (1, 1) \
             ON CONFLICT (id) DO UPDATE SET writes = writes + 1; \
             COMMIT",
        );
        match written {
            Ok(()) => {
                tracing::info!("storage takes writes again");
                self.set_writable(true);
            }
            Err(e) => {
                tracing::debug!(error = %e, "probe: storage still refuses writes");
                self.drop_connection();
            }
        }
    }

    /// Stops the checkpointer, copies the whole log into the database file
    /// and empties it, and closes the connection: the database file alone
    /// then holds every game.
    fn close(mut self, checkpoints: Checkpoints) {
        drop(checkpoints.commits);
        if checkpoints.thread.join().is_err() {
            tracing::warn!("the checkpointer panicked");
        }
        if let Ok(connection) = self.connection()
            && let Err(e) = connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            tracing::warn!(error = %e, "final checkpoint failed; the log stays beside the database");
        }
        if let Some(connection) = self.connection.take()
            && let Err((_, e)) = connection.close()
        {
            tracing::warn!(error = %e, "closing the database");
        }
    }
}

impl Drop for Writer {
    /// A writer whose thread panicked takes no more writes (its queue is
    /// gone: writes queued are answered "outcome unknown", later ones "not
    /// stored"), so the store reports itself unwritable for good rather
    /// than well: the server's health says NOT_SERVING until a restart.
    fn drop(&mut self) {
        if std::thread::panicking() {
            tracing::error!("the SQLite writer panicked: no more writes until a restart");
            self.set_writable(false);
        }
    }
}

/// Bytes free for unprivileged writers on the file system holding `folder`.
fn free_bytes(folder: &Path) -> std::io::Result<u64> {
    let stats = rustix::fs::statvfs(folder)?;
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// Copies committed pages from the write-ahead log into the database file
/// (a checkpoint) on a connection of its own, so that the writer, whose
/// commits every caller waits for, never does that copying itself. A
/// passive checkpoint runs beside the writer and readers without blocking
/// them; once it has copied the whole log, the next commit starts the log
/// over from its beginning. Ends (closing its connection) when the writer
/// does.
fn checkpoint_loop(connection: Connection, commits: std::sync::mpsc::Receiver<()>) {
    while commits.recv().is_ok() {
        if let Err(e) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "checkpoint failed; the next one retries");
        }
        // Let commits pile up: one checkpoint copies many of them.
        std::thread::sleep(CHECKPOINT_PAUSE);
    }
    if let Err((_, e)) = connection.close() {
        tracing::warn!(error = %e, "closing the checkpointer's connection");
    }
}

/// BEGIN and the group's statements, write after write (COMMIT is the
/// caller's). A refusal (a version conflict, a duplicate id) stops them:
/// the caller rolls the group back and, for a group of several, applies
/// each write alone to give it its own answer.
///
/// Every statement is compiled once and kept (the connection's cache), and
/// says `OR FAIL`: a refusal rolls the whole transaction back anyway, so
/// SQLite need not keep a statement journal to undo one statement alone.
fn statements(connection: &Connection, ids: &mut UsedIds, group: &[Write]) -> Result<(), Stop> {
    connection.execute_batch("BEGIN IMMEDIATE")?;
    let now = SystemTime::now();
    for write in group {
        let (game, entry, request) = match &write.kind {
            WriteKind::Create {
                game,
                entry,
                request,
            } => {
                insert_game(connection, game, now)?;
                (game, entry, request)
            }
            WriteKind::Commit {
                game,
                expected_version,
                entry,
                request,
            } => {
                update_game(connection, game, *expected_version, now)?;
                (game, entry, request)
            }
        };
        let game_id = game.game_id.as_str();
        let logged = request
            .as_ref()
            .and_then(|request| Some((request, request.logged.as_deref()?)));
        match logged {
            Some((request, rest)) => {
                ids.claim(connection, game_id, rest, request)?;
                insert_log_entry(connection, game_id, entry, Some((rest, request, now)))?;
            }
            None => {
                insert_log_entry(connection, game_id, entry, None)?;
                if let Some(request) = request {
                    insert_request(connection, ids, request, now)?;
                }
            }
        }
    }
    Ok(())
}

fn insert_game(connection: &Connection, game: &GameRecord, now: SystemTime) -> Result<(), Stop> {
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO games (game_id, variant, variant_version, options, version, state, \
             white_token_hash, black_token_hash, start_board, finished_at, deadline_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            game.game_id,
            game.variant,
            game.variant_version,
            game.options,
            game.version as i64,
            game.state,
            game.token_hashes[0],
            game.token_hashes[1],
            game.start_board,
            finished_at(game, now),
            deadline_at(game),
        ])?;
    Ok(())
}

/// When the running seat's time runs out (ms since the epoch; NULL: no
/// clock runs).
fn deadline_at(game: &GameRecord) -> Option<i64> {
    game.deadline_ms.map(|ms| ms.min(i64::MAX as u64) as i64)
}

/// When a match that is over ended: `now`, when this write ends it
/// (unix seconds); NULL while it runs.
fn finished_at(game: &GameRecord, now: SystemTime) -> Option<i64> {
    game.finished.then(|| unix_seconds(now))
}

/// The compare-and-set: the snapshot changes only if still at `expected`.
fn update_game(
    connection: &Connection,
    game: &GameRecord,
    expected: u64,
    now: SystemTime,
) -> Result<(), Stop> {
    let updated = connection
        .prepare_cached(
            "UPDATE OR FAIL games SET version = ?, state = ?, updated_at = CURRENT_TIMESTAMP, \
             finished_at = ?, deadline_at = ? WHERE game_id = ? AND version = ?",
        )?
        .execute(params![
            game.version as i64,
            game.state,
            finished_at(game, now),
            deadline_at(game),
            game.game_id,
            expected as i64
        ])?;
    if updated == 1 {
        return Ok(());
    }
    let current: Option<i64> = connection
        .prepare_cached("SELECT version FROM games WHERE game_id = ?")?
        .query([&game.game_id])?
        .next()?
        .map(|row| row.get(0))
        .transpose()?;
    Err(Stop::Refused(match current {
        Some(v) => StoreError::Conflict { current: v as u64 },
        None => StoreError::NotFound,
    }))
}

/// The action's row of the event log: the version it made and the
/// server's text for it, kept as it is, and its request id when the log
/// keeps it (the rest of its scope, recorded `now`).
fn insert_log_entry(
    connection: &Connection,
    game_id: &str,
    entry: &LogEntry,
    request: Option<(&str, &RequestRow, SystemTime)>,
) -> Result<(), Stop> {
    let (rest, request_id, fingerprint, at) = match request {
        Some((rest, request, now)) => (
            Some(rest),
            Some(request.request_id.as_str()),
            Some(request.fingerprint.as_slice()),
            Some(unix_seconds(now)),
        ),
        None => (None, None, None, None),
    };
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO game_events (game_id, version, events, \
             request_scope, request_id, request_fingerprint, requested_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            game_id,
            entry.version as i64,
            entry.text,
            rest,
            request_id,
            fingerprint,
            at
        ])?;
    Ok(())
}

/// A request id as a row of `requests`, stamped `now` (for forgetting it
/// later). An action id there must not be in its game's log either.
fn insert_request(
    connection: &Connection,
    ids: &mut UsedIds,
    request: &RequestRow,
    now: SystemTime,
) -> Result<(), Stop> {
    if request.scope != crate::NEW_GAME_SCOPE {
        if let Some((game_id, rest)) = split_scope(&request.scope)
            && in_log(connection, game_id, rest, &request.request_id)?
        {
            return Err(Stop::Refused(StoreError::Duplicate));
        }
        ids.in_table = true;
    }
    connection
        .prepare_cached(
            "INSERT OR FAIL INTO requests (scope, request_id, fingerprint, version, game_id, \
             response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            request.scope,
            request.request_id,
            request.fingerprint,
            request.version,
            request.game_id,
            request.response,
            unix_seconds(now),
        ])?;
    Ok(())
}

/// Faults injected in the writer by the tests: each step of a commit.
pub(super) mod faults {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(in crate::sqlite) enum Fault {
        /// The transaction cannot begin.
        BeforeBegin,
        /// A statement fails.
        InStatements,
        /// COMMIT fails and leaves the transaction open.
        AtCommit,
        /// COMMIT succeeds, yet an error is reported (as an fsync error).
        AfterCommit,
        /// The writer's thread panics (a bug) before the transaction.
        Panic,
    }

    #[cfg(test)]
    #[derive(Debug, Default)]
    pub(in crate::sqlite) struct Faults {
        /// The faults of the next transactions, in order.
        pub planned: std::sync::Mutex<std::collections::VecDeque<Option<Fault>>>,
        /// SQLite's `max_page_count` for the writer: a database that may
        /// not grow past this many pages fails its writes with "database
        /// or disk is full", as a full disk does.
        pub max_pages: std::sync::Mutex<Option<u64>>,
        /// While set, the writer does not probe (so a test can look at the
        /// writable flag without a race with the probe).
        pub probes_paused: std::sync::atomic::AtomicBool,
    }

    #[cfg(test)]
    impl Faults {
        pub fn next(&self) -> Option<Fault> {
            let mut planned = self.planned.lock().unwrap_or_else(|e| e.into_inner());
            planned.pop_front().flatten()
        }

        pub fn probes_paused(&self) -> bool {
            self.probes_paused.load(std::sync::atomic::Ordering::SeqCst)
        }

        pub fn limit_pages(&self, connection: &rusqlite::Connection) {
            let limit = *self.max_pages.lock().unwrap_or_else(|e| e.into_inner());
            // 4294967294: SQLite's own largest limit, i.e. none.
            let pages = limit.unwrap_or(4_294_967_294);
            let _ = connection.execute_batch(&format!("PRAGMA max_page_count = {pages}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{entry, game};
    use super::*;

    /// A request id's row, as queued.
    fn request(scope: &str, id: &str) -> Option<RequestRow> {
        RequestRow::of(Some(&super::super::tests::request(scope, id)), "", 0).unwrap()
    }

    fn write(kind: WriteKind) -> Write {
        Write {
            kind,
            done: oneshot::channel().0,
        }
    }

    fn commit(id: &str, version: u64, request_id: &str) -> Write {
        write(WriteKind::Commit {
            game: game(id, version, "next"),
            expected_version: version - 1,
            entry: entry(version),
            request: request(id, request_id),
        })
    }

    /// The group's statements, committed when they succeed and rolled
    /// back when one is refused.
    fn group(connection: &Connection, group: &[Write]) -> Result<(), StoreError> {
        match statements(connection, &mut UsedIds::default(), group) {
            Ok(()) => {
                connection.execute_batch("COMMIT").unwrap();
                Ok(())
            }
            Err(Stop::Refused(e)) => {
                connection.execute_batch("ROLLBACK").unwrap();
                Err(e)
            }
            Err(Stop::Storage(e)) => panic!("storage failed: {e}"),
        }
    }

    fn count(connection: &Connection, sql: &str) -> i64 {
        connection.query_row(sql, [], |row| row.get(0)).unwrap()
    }

    /// The grouped statements themselves (no fallback behind them): a
    /// valid group lands whole; a group with one stale version, one used
    /// request id or one game id taken is refused whole, says why, and
    /// leaves nothing behind.
    #[tokio::test]
    async fn a_group_lands_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        let _store = super::super::SqliteStore::open(&path, Durability::Full)
            .await
            .unwrap();
        let settings = Settings {
            path,
            durability: Durability::Full,
        };
        let connection = settings.connect().unwrap();
        let created: Vec<Write> = (0..3)
            .map(|g| {
                write(WriteKind::Create {
                    game: game(&format!("g{g}"), 1, "start"),
                    entry: entry(1),
                    request: request("new-game", &format!("new{g}")),
                })
            })
            .collect();
        group(&connection, &created).unwrap();
        let moved = [
            commit("g0", 2, "a"),
            commit("g1", 2, "a"),
            commit("g2", 2, "a"),
        ];
        group(&connection, &moved).unwrap();
        let rows = |connection: &Connection| {
            (
                count(connection, "SELECT sum(version) FROM games"),
                count(connection, "SELECT count(*) FROM game_events"),
                count(connection, "SELECT count(*) FROM requests"),
            )
        };
        assert_eq!(rows(&connection), (6, 6, 6));

        // g2's write expects version 4; it is at 2.
        let stale = [
            commit("g0", 3, "b"),
            commit("g1", 3, "b"),
            commit("g2", 5, "b"),
        ];
        let refused = group(&connection, &stale).unwrap_err();
        assert!(
            matches!(refused, StoreError::Conflict { current: 2 }),
            "{refused:?}"
        );
        let reused = [commit("g0", 3, "c"), commit("g1", 3, "a")];
        let refused = group(&connection, &reused).unwrap_err();
        assert!(matches!(refused, StoreError::Duplicate), "{refused:?}");
        let taken = [write(WriteKind::Create {
            game: game("g1", 1, "start"),
            entry: entry(1),
            request: None,
        })];
        let refused = group(&connection, &taken).unwrap_err();
        assert!(matches!(refused, StoreError::Duplicate), "{refused:?}");
        let missing = [commit("nowhere", 2, "x")];
        let refused = group(&connection, &missing).unwrap_err();
        assert!(matches!(refused, StoreError::NotFound), "{refused:?}");
        assert_eq!(rows(&connection), (6, 6, 6));

        // The connection is usable again: no transaction left open.
        group(&connection, &[commit("g0", 3, "d"), commit("g1", 3, "d")]).unwrap();
        assert_eq!(rows(&connection), (8, 8, 8));
    }
}
