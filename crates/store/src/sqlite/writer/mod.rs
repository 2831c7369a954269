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
//!
//! Here: the queue, group commit, failures and probing (`Writer`); in
//! `statements` the SQL of a group, in `request_ids` the used-id cache,
//! in `checkpoint` the checkpointer, in `faults` the faults tests inject.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{Connection, ffi, params};
use tokio::sync::{mpsc, oneshot, watch};

use crate::rows::AnswerColumns;
use crate::{Answer, Applied, GameRecord, LogEntry, RequestRecord, StoreError};

use super::{BUSY_TIMEOUT, Durability, unix_seconds};

mod checkpoint;
pub(super) mod faults;
mod request_ids;
mod statements;
#[cfg(test)]
mod tests;

use checkpoint::*;
use request_ids::*;
pub(super) use request_ids::{RequestRow, split_scope};
pub(super) use statements::unix_millis;
use statements::*;

/// The most writes grouped into one transaction.
const MAX_GROUP: usize = 64;

/// Writes waiting for the writer before callers wait to queue theirs.
const QUEUE: usize = 1024;

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
        connection.busy_handler(Some(wait_for_the_lock))?;
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

/// How the writer waits for the write lock while another connection
/// holds it (a webhook's short write, a trim, a maintenance batch): in
/// steps of 50 µs for the first 5 ms, then of a millisecond, until
/// [`BUSY_TIMEOUT`]. SQLite's own handler sleeps 1 ms, then 2, 5, 10 ms
/// and more, so each wait behind a write of a few dozen µs held every
/// action of the group a millisecond or more: with webhooks settling
/// about 60 times a second, the game made 6% fewer moves.
fn wait_for_the_lock(tries: i32) -> bool {
    match lock_wait_step(u32::try_from(tries).unwrap_or(0)) {
        Some(step) => {
            std::thread::sleep(step);
            true
        }
        None => false,
    }
}

/// How long to sleep after `tries` waits for the lock (None: give up).
fn lock_wait_step(tries: u32) -> Option<Duration> {
    const FINE: Duration = Duration::from_micros(50);
    const FINE_TRIES: u32 = 100;
    const COARSE: Duration = Duration::from_millis(1);
    let (waited, step) = if tries < FINE_TRIES {
        (FINE * tries, FINE)
    } else {
        (FINE * FINE_TRIES + COARSE * (tries - FINE_TRIES), COARSE)
    };
    (waited < BUSY_TIMEOUT).then_some(step)
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
