//! The embedded default: one SQLite file, in WAL mode.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, QueryBuilder, Sqlite};
use tokio::sync::{mpsc, oneshot, watch};

use crate::rows::{
    AnswerColumns, column, game_record, log_entries, request_record, stored_version,
};
use crate::{Applied, GameRecord, GameStore, LogEntry, NEW_GAME_SCOPE, RequestRecord, StoreError};

/// How hard a commit waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// fsync on every commit: survives a power cut (the default).
    Full,
    /// fsync at checkpoints: survives a killed process, not a power cut.
    Normal,
}

/// The most writes grouped into one transaction.
const MAX_GROUP: usize = 64;

/// Log pages after which the writer checkpoints itself, should the
/// checkpointer fall behind (64 MiB with 4 KiB pages).
const WRITER_CHECKPOINT_PAGES: u32 = 16_384;

/// Compiled statements the writer keeps (one per shape of group).
const WRITER_STATEMENTS: usize = 1024;

/// The least time between two checkpoints.
const CHECKPOINT_PAUSE: Duration = Duration::from_millis(100);

/// While writes fail, how often the writer tries a small write of its own
/// to learn whether the storage is back.
const PROBE_INTERVAL: Duration = Duration::from_millis(500);

/// The free space the database's file system must have again before the
/// store calls itself writable (a full disk can still take a small write
/// into log pages it had already, so a write alone proves too little).
const MIN_FREE_BYTES: u64 = 1 << 20;

/// Games in a SQLite file.
///
/// SQLite has one writer at a time, so one task, on a thread of its own,
/// owns the writing connection. It takes every write waiting in its queue and applies them
/// in one transaction: one fsync for the group instead of one each (group
/// commit). If a write of a group is refused (a version conflict), the
/// group is rolled back and its writes are applied one by one, so each
/// caller gets exactly its own result. Reads use other connections.
///
/// If the storage itself fails (a full disk, an I/O error), every write
/// of the group is answered with [`StoreError::WriteFailed`] and the
/// writer drops its connection, so no transaction can stay open on it:
/// the next write opens a new one.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    jobs: mpsc::Sender<Job>,
    readers: SqlitePool,
    /// For maintenance writes (forgetting old request ids), on connections
    /// of their own.
    options: SqliteConnectOptions,
    writable: watch::Receiver<bool>,
    #[cfg(test)]
    faults: std::sync::Arc<faults::Faults>,
}

/// What the writer is asked to do.
#[derive(Debug)]
enum Job {
    Write(Box<Write>),
    /// Finish, checkpoint and close; answer when done.
    Close(oneshot::Sender<()>),
}

/// One write and where its result goes.
#[derive(Debug)]
struct Write {
    kind: WriteKind,
    done: oneshot::Sender<Result<(), StoreError>>,
}

#[derive(Debug)]
enum WriteKind {
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

/// A request id to record, as its row of `requests`: made when the write
/// is queued, so that an answer that cannot be stored is refused to its
/// caller alone and the writer only binds values.
#[derive(Debug)]
struct RequestRow {
    scope: String,
    request_id: String,
    fingerprint: Vec<u8>,
    version: Option<i64>,
    game_id: Option<String>,
    response: Option<Vec<u8>>,
}

impl RequestRow {
    fn new(request: &RequestRecord) -> Result<RequestRow, StoreError> {
        let answer = AnswerColumns::of(&request.answer)?;
        Ok(RequestRow {
            scope: request.scope.clone(),
            request_id: request.request_id.clone(),
            fingerprint: request.fingerprint.clone(),
            version: answer.version,
            game_id: answer.game_id.map(str::to_string),
            response: answer.response.map(<[u8]>::to_vec),
        })
    }

    /// The row of a request id, if there is one.
    fn of(request: Option<&RequestRecord>) -> Result<Option<RequestRow>, StoreError> {
        request.map(RequestRow::new).transpose()
    }
}

impl WriteKind {
    fn game_id(&self) -> &str {
        match self {
            WriteKind::Create { game, .. } | WriteKind::Commit { game, .. } => &game.game_id,
        }
    }
}

impl SqliteStore {
    /// Opens (creating it if needed) the database file and brings its
    /// schema up to date.
    pub async fn open(path: &Path, durability: Durability) -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match durability {
                Durability::Full => SqliteSynchronous::Full,
                Durability::Normal => SqliteSynchronous::Normal,
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            // A group's statement journal stays in memory, not in a file.
            .pragma("temp_store", "memory");
        // The writer leaves checkpoints to the checkpointer below, unless
        // the log grows past this many pages (a safety net).
        //
        // It does not check the log's foreign key to its game: every write
        // that adds a log row first inserts the game or updates it by
        // compare-and-set in the same transaction, and rolls back if that
        // touched no row, so the game is always there. Checking it cost a
        // lookup of the game and a statement journal for each group
        // (SQLite undoes a failed foreign-key statement on its own): an
        // eighth of the writer's SQLite instructions. Migrations run with
        // the check on.
        //
        // A group's statements have a shape of their own for each count
        // of rows (see `apply_batched`): the writer keeps more of them
        // compiled than sqlx's default 100.
        let writer_options = options
            .clone()
            .pragma("wal_autocheckpoint", WRITER_CHECKPOINT_PAGES.to_string())
            .foreign_keys(false)
            .statement_cache_capacity(WRITER_STATEMENTS);
        let mut migrating = SqliteConnection::connect_with(&options).await?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&mut migrating)
            .await?;
        migrating.close().await?;
        let connection = SqliteConnection::connect_with(&writer_options).await?;
        let checkpointer = SqliteConnection::connect_with(&options).await?;
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone().read_only(true))
            .await?;
        let (jobs, queue) = mpsc::channel(1024);
        let (committed, commits) = mpsc::channel(1);
        let (writable_tx, writable) = watch::channel(true);
        #[cfg(test)]
        let faults = std::sync::Arc::new(faults::Faults::default());
        let writer = Writer {
            options: writer_options,
            folder: path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            connection: Some(connection),
            writable: writable_tx,
            #[cfg(test)]
            faults: faults.clone(),
        };
        // The writer and the checkpointer run on a thread of their own, not
        // among the tasks answering calls: every caller waits for the
        // writer, and each of its steps (BEGIN with the group's
        // statements, COMMIT) needs the writer to be polled again as soon
        // as SQLite answers, not once a busy worker gets round to it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let checkpoints = Checkpoints {
                        commits: committed,
                        task: tokio::spawn(checkpoint_loop(checkpointer, commits)),
                    };
                    write_loop(writer, queue, checkpoints).await;
                })
            })
            .map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        Ok(SqliteStore {
            jobs,
            readers,
            options,
            writable,
            #[cfg(test)]
            faults,
        })
    }

    /// Writes a consistent copy of the database at `path` into `target`
    /// (which must not exist), compacted, while servers may go on using
    /// it: SQLite's `VACUUM INTO` reads one snapshot of the database,
    /// committed log included.
    pub async fn backup(path: &Path, target: &Path) -> Result<(), StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .busy_timeout(Duration::from_secs(10));
        let mut connection = SqliteConnection::connect_with(&options).await?;
        let target = target.to_str().ok_or_else(|| {
            StoreError::Corrupt(format!("{} is not a UTF-8 path", target.display()))
        })?;
        sqlx::query("VACUUM INTO ?")
            .bind(target)
            .execute(&mut connection)
            .await?;
        connection.close().await?;
        Ok(())
    }

    async fn write(&self, kind: WriteKind) -> Result<(), StoreError> {
        let (done, result) = oneshot::channel();
        self.jobs
            .send(Job::Write(Box::new(Write { kind, done })))
            .await
            .map_err(|_| StoreError::WriteFailed {
                message: "the store is closed".into(),
                applied: Applied::No,
            })?;
        // Only a writer that died in the middle drops the answer: it may
        // have committed.
        result.await.map_err(|_| StoreError::WriteFailed {
            message: "the writer stopped before answering".into(),
            applied: Applied::Unknown,
        })?
    }
}

/// The checkpointer's task, and how the writer tells it of commits.
struct Checkpoints {
    commits: mpsc::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// The writer: groups what is queued, commits, answers each caller, and
/// tells the checkpointer there is work. While writes fail it tries a
/// small write of its own every [`PROBE_INTERVAL`], so the store reports
/// itself writable again once the storage is back, even if no caller
/// writes meanwhile.
async fn write_loop(mut writer: Writer, mut queue: mpsc::Receiver<Job>, checkpoints: Checkpoints) {
    let mut jobs = Vec::with_capacity(MAX_GROUP);
    // While unwritable, probes come on a fixed beat, busy queue or not.
    let mut next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
    loop {
        let received = if *writer.writable.borrow() {
            let received = queue.recv_many(&mut jobs, MAX_GROUP).await;
            next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
            received
        } else {
            tokio::select! {
                received = queue.recv_many(&mut jobs, MAX_GROUP) => received,
                _ = tokio::time::sleep_until(next_probe) => {
                    writer.probe().await;
                    next_probe = tokio::time::Instant::now() + PROBE_INTERVAL;
                    continue;
                }
            }
        };
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
            writer.apply(group).await;
            let _ = checkpoints.commits.try_send(());
        }
        if !closing.is_empty() {
            queue.close();
            while let Some(job) = queue.recv().await {
                match job {
                    Job::Write(write) => {
                        let _ = write.done.send(Err(closed()));
                    }
                    Job::Close(done) => closing.push(done),
                }
            }
            writer.close(checkpoints).await;
            for done in closing {
                let _ = done.send(());
            }
            return;
        }
    }
}

/// The answer to a write that came after the store closed: not stored.
fn closed() -> StoreError {
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

/// The writing connection (none after a storage failure, until the next
/// write opens one) and the store's writable flag: false from a storage
/// failure until a probe finds room again (a caller's write that happens
/// to fit meanwhile does not end it).
struct Writer {
    options: SqliteConnectOptions,
    /// The database's folder, whose file system must have room again.
    folder: std::path::PathBuf,
    connection: Option<SqliteConnection>,
    writable: watch::Sender<bool>,
    #[cfg(test)]
    faults: std::sync::Arc<faults::Faults>,
}

impl Writer {
    /// Applies a group and answers each of its writes.
    async fn apply(&mut self, group: Vec<Write>) {
        let start = std::time::Instant::now();
        match self.transaction(&group).await {
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
                    let result = match self.transaction(std::slice::from_ref(&write)).await {
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
    async fn transaction(&mut self, group: &[Write]) -> Result<(), Failure> {
        #[cfg(test)]
        let fault = self.faults.next();
        #[cfg(not(test))]
        let fault: Option<faults::Fault> = None;
        #[cfg(test)]
        let faults = self.faults.clone();
        let connection = match self.connection().await {
            Ok(connection) => connection,
            Err(message) => return Err(self.broken(&message, Applied::No).await),
        };
        #[cfg(test)]
        faults::Faults::limit_pages(&faults, connection).await;
        if fault == Some(faults::Fault::BeforeBegin) {
            return Err(self.broken("injected: before BEGIN", Applied::No).await);
        }
        match statements(connection, group).await {
            Ok(()) => {}
            Err(e) if is_refusal(&e) => {
                return match sqlx::query("ROLLBACK").execute(&mut *connection).await {
                    Ok(_) => Err(Failure::Refused(e)),
                    Err(r) => {
                        let message = format!("{e}; then ROLLBACK failed: {r}");
                        Err(self.broken(&message, Applied::No).await)
                    }
                };
            }
            Err(e) => return Err(self.broken(&e.to_string(), Applied::No).await),
        }
        if fault == Some(faults::Fault::InStatements) {
            return Err(self
                .broken("injected: a statement failed", Applied::No)
                .await);
        }
        if fault == Some(faults::Fault::AtCommit) {
            // COMMIT failed and left the transaction open (SQLite may do
            // either on SQLITE_FULL or an I/O error).
            return Err(self
                .broken("injected: COMMIT failed", Applied::Unknown)
                .await);
        }
        let committing = std::time::Instant::now();
        let committed = sqlx::query("COMMIT").execute(&mut *connection).await;
        metrics::histogram!(crate::WAL_COMMIT_SECONDS).record(committing.elapsed().as_secs_f64());
        if let Err(e) = committed {
            // COMMIT may have failed after the log held the transaction
            // (an fsync error): whether it is stored is not known.
            return Err(self.broken(&e.to_string(), Applied::Unknown).await);
        }
        if fault == Some(faults::Fault::AfterCommit) {
            // The outcome an fsync failure leaves: stored, yet reported
            // as failed.
            return Err(self
                .broken("injected: error after COMMIT", Applied::Unknown)
                .await);
        }
        // Writable again only when the probe finds room: a write that
        // happens to fit on a full disk does not end the outage.
        Ok(())
    }

    /// The writing connection, opened again if a failure dropped it (the
    /// error says why it could not be).
    async fn connection(&mut self) -> Result<&mut SqliteConnection, String> {
        if self.connection.is_none() {
            let connection = SqliteConnection::connect_with(&self.options)
                .await
                .map_err(|e| format!("opening the database again: {e}"))?;
            self.connection = Some(connection);
        }
        self.connection
            .as_mut()
            .ok_or_else(|| "no connection".to_string())
    }

    /// After a storage failure: drops the connection and reports the store
    /// unwritable until a write succeeds again.
    async fn broken(&mut self, message: &str, applied: Applied) -> Failure {
        self.drop_connection().await;
        tracing::error!(error = message, %applied, "storage write failed");
        self.set_writable(false);
        Failure::Storage(StorageFailure {
            message: message.to_string(),
            applied,
        })
    }

    /// Closes the writing connection: closing rolls back an open
    /// transaction. If even that fails, the connection is gone all the same
    /// (its handle is freed).
    async fn drop_connection(&mut self) {
        if let Some(connection) = self.connection.take()
            && let Err(e) = connection.close().await
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
    async fn probe(&mut self) {
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
        let Ok(connection) = self.connection().await else {
            return;
        };
        #[cfg(test)]
        faults::Faults::limit_pages(&faults, connection).await;
        let written = async {
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut *connection)
                .await?;
            sqlx::query(
                "INSERT INTO store_probe (id, writes) VALUES (1, 1) \
                 ON CONFLICT (id) DO UPDATE SET writes = writes + 1",
            )
            .execute(&mut *connection)
            .await?;
            sqlx::query("COMMIT").execute(&mut *connection).await
        }
        .await;
        match written {
            Ok(_) => {
                tracing::info!("storage takes writes again");
                self.set_writable(true);
            }
            Err(e) => {
                tracing::debug!(error = %e, "probe: storage still refuses writes");
                self.drop_connection().await;
            }
        }
    }

    /// Stops the checkpointer, copies the whole log into the database file
    /// and empties it, and closes the connection: the database file alone
    /// then holds every game.
    async fn close(mut self, checkpoints: Checkpoints) {
        drop(checkpoints.commits);
        let _ = checkpoints.task.await;
        if let Ok(connection) = self.connection().await
            && let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&mut *connection)
                .await
        {
            tracing::warn!(error = %e, "final checkpoint failed; the log stays beside the database");
        }
        if let Some(connection) = self.connection.take()
            && let Err(e) = connection.close().await
        {
            tracing::warn!(error = %e, "closing the database");
        }
    }
}

/// Bytes free for unprivileged writers on the file system holding `folder`.
fn free_bytes(folder: &Path) -> std::io::Result<u64> {
    let stats = rustix::fs::statvfs(folder)?;
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// A refusal of the write itself, not a failure of the storage.
fn is_refusal(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Conflict { .. }
            | StoreError::NotFound
            | StoreError::Duplicate
            | StoreError::Batch(_)
    )
}

/// Faults injected in the writer by the tests: each step of a commit.
mod faults {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Fault {
        /// The transaction cannot begin.
        BeforeBegin,
        /// A statement fails.
        InStatements,
        /// COMMIT fails and leaves the transaction open.
        AtCommit,
        /// COMMIT succeeds, yet an error is reported (as an fsync error).
        AfterCommit,
    }

    #[cfg(test)]
    #[derive(Debug, Default)]
    pub(super) struct Faults {
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

        pub async fn limit_pages(faults: &Faults, connection: &mut sqlx::SqliteConnection) {
            let limit = *faults.max_pages.lock().unwrap_or_else(|e| e.into_inner());
            // 4294967294: SQLite's own largest limit, i.e. none.
            let pages = limit.unwrap_or(4_294_967_294);
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "PRAGMA max_page_count = {pages}"
            )))
            .execute(connection)
            .await;
        }
    }
}

/// Copies committed pages from the write-ahead log into the database file
/// (a checkpoint) on a connection of its own, so that the writer, whose
/// commits every caller waits for, never does that copying itself. A
/// passive checkpoint runs beside the writer and readers without blocking
/// them; once it has copied the whole log, the next commit starts the log
/// over from its beginning. Ends (closing its connection) when the writer
/// does.
async fn checkpoint_loop(mut connection: SqliteConnection, mut commits: mpsc::Receiver<()>) {
    while commits.recv().await.is_some() {
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut connection)
            .await
        {
            tracing::warn!(error = %e, "checkpoint failed; the next one retries");
        }
        // Let commits pile up: one checkpoint copies many of them.
        tokio::time::sleep(CHECKPOINT_PAUSE).await;
    }
    let _ = connection.close().await;
}

/// BEGIN and the group's statements (COMMIT is the caller's).
async fn statements(connection: &mut SqliteConnection, group: &[Write]) -> Result<(), StoreError> {
    if group.len() > 1 && distinct_games(group) {
        return apply_batched(connection, group).await;
    }
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut *connection)
        .await?;
    for write in group {
        apply_one(connection, write).await?;
    }
    Ok(())
}

/// One write, statement by statement (its errors are precise).
async fn apply_one(tx: &mut SqliteConnection, write: &Write) -> Result<(), StoreError> {
    match &write.kind {
        WriteKind::Create {
            game,
            entry,
            request,
        } => {
            insert_game(tx, game).await?;
            insert_log_entry(tx, &game.game_id, entry).await?;
            insert_request(tx, request.as_ref()).await?;
        }
        WriteKind::Commit {
            game,
            expected_version,
            entry,
            request,
        } => {
            update_game(tx, game, *expected_version).await?;
            insert_log_entry(tx, &game.game_id, entry).await?;
            insert_request(tx, request.as_ref()).await?;
        }
    }
    Ok(())
}

/// Whether no game is written twice in the group (the server serialises
/// each game's actions, so this is the normal case).
fn distinct_games(group: &[Write]) -> bool {
    let mut ids: Vec<&str> = group.iter().map(|w| w.kind.game_id()).collect();
    ids.sort_unstable();
    ids.windows(2).all(|pair| pair[0] != pair[1])
}

/// BEGIN and the whole group in one round trip to sqlx's connection
/// thread (each statement would be one): one statement per table, then
/// the caller's COMMIT once the compare-and-set is seen to have matched
/// every game. A version conflict or a duplicate row is a refusal: the
/// caller rolls the group back and applies the writes one by one to give
/// each its own answer.
///
/// Since a refusal rolls back the whole transaction anyway, no statement
/// needs undoing on its own: the statements say `OR FAIL` (a constraint
/// error stops the statement and keeps what it did, for the ROLLBACK to
/// undo), so SQLite does not first copy every page a multi-row statement
/// changes into a statement journal in case that statement alone must be
/// undone. (The log's foreign key to its game would need one, since
/// foreign-key errors always undo their statement: the writer does not
/// check it, see [`SqliteStore::open`].)
async fn apply_batched(
    connection: &mut SqliteConnection,
    group: &[Write],
) -> Result<(), StoreError> {
    let mut created = Vec::new();
    let mut updated = Vec::new();
    let mut log = Vec::new();
    let mut requests = Vec::new();
    for write in group {
        let (game, entry, request) = match &write.kind {
            WriteKind::Create {
                game,
                entry,
                request,
            } => {
                created.push(game);
                (game, entry, request)
            }
            WriteKind::Commit {
                game,
                expected_version,
                entry,
                request,
            } => {
                updated.push((game, *expected_version));
                (game, entry, request)
            }
        };
        log.push(log_row(&game.game_id, entry));
        requests.extend(request.as_ref());
    }

    let mut batch = QueryBuilder::<Sqlite>::new("BEGIN IMMEDIATE; ");
    push_insert_games(&mut batch, &created);
    if !updated.is_empty() {
        // The compare-and-set for every game at once: a game whose stored
        // version is not the expected one is not updated, and is missing
        // from the rows returned.
        batch.push(
            "UPDATE OR FAIL games SET version = new.column3, state = new.column4, updated_at = CURRENT_TIMESTAMP FROM (",
        );
        batch.push_values(&updated, |mut row, (game, expected)| {
            row.push_bind(&game.game_id)
                .push_bind(*expected as i64)
                .push_bind(game.version as i64)
                .push_bind(&game.state);
        });
        batch.push(
            ") AS new WHERE games.game_id = new.column1 AND games.version = new.column2 RETURNING games.game_id; ",
        );
    }
    push_insert_log(&mut batch, &log);
    push_insert_requests(&mut batch, &requests);
    match batch.build().fetch_all(&mut *connection).await {
        Ok(rows) if rows.len() == updated.len() => Ok(()),
        Ok(_) => Err(StoreError::Batch(
            "a game's version changed under the group (retried one by one)".into(),
        )),
        Err(e) => Err(duplicate(e)),
    }
}

async fn insert_game(tx: &mut SqliteConnection, game: &GameRecord) -> Result<(), StoreError> {
    let mut insert = QueryBuilder::new("");
    push_insert_games(&mut insert, &[game]);
    insert.build().execute(&mut *tx).await.map_err(duplicate)?;
    Ok(())
}

/// `INSERT` of new games (nothing when there are none), one row each.
fn push_insert_games(query: &mut QueryBuilder<Sqlite>, games: &[&GameRecord]) {
    if games.is_empty() {
        return;
    }
    query.push(
        "INSERT OR FAIL INTO games (game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board) ",
    );
    query.push_values(games, |mut row, game| {
        row.push_bind(&game.game_id)
            .push_bind(&game.variant)
            .push_bind(&game.variant_version)
            .push_bind(&game.options)
            .push_bind(game.version as i64)
            .push_bind(&game.state)
            .push_bind(&game.token_hashes[0])
            .push_bind(&game.token_hashes[1])
            .push_bind(&game.start_board);
    });
    query.push("; ");
}

/// The compare-and-set: the snapshot changes only if still at `expected`.
async fn update_game(
    tx: &mut SqliteConnection,
    game: &GameRecord,
    expected: u64,
) -> Result<(), StoreError> {
    let updated = sqlx::query(
        "UPDATE games SET version = ?, state = ?, updated_at = CURRENT_TIMESTAMP WHERE game_id = ? AND version = ?",
    )
    .bind(game.version as i64)
    .bind(&game.state)
    .bind(&game.game_id)
    .bind(expected as i64)
    .execute(&mut *tx)
    .await?;
    if updated.rows_affected() == 1 {
        return Ok(());
    }
    let current: Option<i64> = sqlx::query_scalar("SELECT version FROM games WHERE game_id = ?")
        .bind(&game.game_id)
        .fetch_optional(&mut *tx)
        .await?;
    Err(match current {
        Some(v) => StoreError::Conflict { current: v as u64 },
        None => StoreError::NotFound,
    })
}

/// The action's row of the event log.
async fn insert_log_entry(
    tx: &mut SqliteConnection,
    game_id: &str,
    entry: &LogEntry,
) -> Result<(), StoreError> {
    let mut insert = QueryBuilder::new("");
    push_insert_log(&mut insert, &[log_row(game_id, entry)]);
    insert.build().execute(&mut *tx).await.map_err(duplicate)?;
    Ok(())
}

/// An action's row of the event log: (game, the version it made, the
/// server's text for it, kept as it is).
type LogRow<'a> = (&'a str, i64, &'a str);

fn log_row<'a>(game_id: &'a str, entry: &'a LogEntry) -> LogRow<'a> {
    (game_id, entry.version as i64, &entry.text)
}

/// `INSERT` of log rows (nothing when there are none), one row each.
fn push_insert_log(query: &mut QueryBuilder<Sqlite>, rows: &[LogRow<'_>]) {
    if rows.is_empty() {
        return;
    }
    query.push("INSERT OR FAIL INTO game_events (game_id, version, events) ");
    query.push_values(rows, |mut row, (game_id, version, text)| {
        row.push_bind(*game_id).push_bind(*version).push_bind(*text);
    });
    query.push("; ");
}

async fn insert_request(
    tx: &mut SqliteConnection,
    request: Option<&RequestRow>,
) -> Result<(), StoreError> {
    let Some(request) = request else {
        return Ok(());
    };
    let mut insert = QueryBuilder::new("");
    push_insert_requests(&mut insert, &[request]);
    insert.build().execute(&mut *tx).await.map_err(duplicate)?;
    Ok(())
}

/// `INSERT` of request ids (nothing when there are none), stamped now.
fn push_insert_requests(query: &mut QueryBuilder<Sqlite>, requests: &[&RequestRow]) {
    if requests.is_empty() {
        return;
    }
    let now = unix_seconds(SystemTime::now());
    query.push(
        "INSERT OR FAIL INTO requests (scope, request_id, fingerprint, version, game_id, response, created_at) ",
    );
    query.push_values(requests, |mut row, r| {
        row.push_bind(&r.scope)
            .push_bind(&r.request_id)
            .push_bind(&r.fingerprint)
            .push_bind(r.version)
            .push_bind(&r.game_id)
            .push_bind(&r.response)
            .push_bind(now);
    });
    query.push("; ");
}

fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(i64::MAX as u64) as i64)
}

/// Request ids looked at per transaction of forgetting, so the writer
/// never waits long.
const FORGET_BATCH: i64 = 1000;

/// A primary-key violation means the row is already there.
fn duplicate(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Duplicate,
        _ => StoreError::Database(e),
    }
}

impl GameStore for SqliteStore {
    fn writable(&self) -> watch::Receiver<bool> {
        self.writable.clone()
    }

    async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.jobs.send(Job::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
        self.readers.close().await;
    }

    async fn create(
        &self,
        game: &GameRecord,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        self.write(WriteKind::Create {
            game: game.clone(),
            entry: entry.clone(),
            request: RequestRow::of(request)?,
        })
        .await
    }

    async fn version(&self, game_id: &str) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT version FROM games WHERE game_id = ?")
            .bind(game_id)
            .fetch_optional(&self.readers)
            .await?;
        row.map(|row| stored_version(&row, &format!("game {game_id}")))
            .transpose()
    }

    async fn load(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board \
             FROM games WHERE game_id = ?",
        )
        .bind(game_id)
        .fetch_optional(&self.readers)
        .await?;
        row.map(|row| game_record(&row, game_id)).transpose()
    }

    async fn commit(
        &self,
        game: &GameRecord,
        expected_version: u64,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        self.write(WriteKind::Commit {
            game: game.clone(),
            expected_version,
            entry: entry.clone(),
            request: RequestRow::of(request)?,
        })
        .await
    }

    async fn log_after(&self, game_id: &str, version: u64) -> Result<Vec<LogEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT version, events FROM game_events WHERE game_id = ? AND version > ? ORDER BY version",
        )
        .bind(game_id)
        .bind(version.min(i64::MAX as u64) as i64)
        .fetch_all(&self.readers)
        .await?;
        log_entries(&rows, game_id)
    }

    async fn request(
        &self,
        scope: &str,
        request_id: &str,
    ) -> Result<Option<RequestRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT fingerprint, version, game_id, response FROM requests \
             WHERE scope = ? AND request_id = ?",
        )
        .bind(scope)
        .bind(request_id)
        .fetch_optional(&self.readers)
        .await?;
        row.map(|row| request_record(&row, scope, request_id))
            .transpose()
    }

    async fn holds_games(&self) -> Result<bool, StoreError> {
        let any: Option<i64> = sqlx::query_scalar("SELECT 1 FROM games LIMIT 1")
            .fetch_optional(&self.readers)
            .await?;
        Ok(any.is_some())
    }

    async fn setting(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query("SELECT value FROM settings WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.readers)
            .await?;
        row.map(|row| column(&row, "value", &format!("setting {name}")))
            .transpose()
    }

    async fn set_setting(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        // Set at startup, before any game is written: a connection of its
        // own is simplest.
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(name)
        .bind(value)
        .execute(&mut connection)
        .await?;
        connection.close().await?;
        Ok(())
    }

    async fn claim_setting(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(value)
        .execute(&mut connection)
        .await?;
        connection.close().await?;
        self.setting(name)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("setting {name} vanished")))
    }

    /// Walks `requests` in key order to its end, `FORGET_BATCH` keys at
    /// a time, deleting the old action ids among them. Each batch is a
    /// small transaction on a connection of its own: the writer waits (busy
    /// timeout) for one batch at most.
    ///
    /// The table has no index by time any more (migration 0005: it would
    /// cost every action about 70 bytes), so a sweep reads the whole table
    /// as kept (NewGame's ids, and the action ids still recent) once, by
    /// design: a sweep is rare, and its reading cheap next to the bytes
    /// the index would keep for every action.
    async fn forget_requests(&self, before: SystemTime) -> Result<u64, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let before = unix_seconds(before);
        let mut forgotten = 0;
        let mut after = None;
        loop {
            let batch = forget_batch(&mut connection, after.as_ref(), before).await?;
            forgotten += batch.deleted;
            match batch.last {
                // NewGame's ids are kept for good, and sit together in key
                // order: the walk jumps past them all (no request id sorts
                // after U+10FFFF, the last character; one that begins with
                // it would be a NewGame id, kept anyway).
                Some((scope, _)) if scope == NEW_GAME_SCOPE => {
                    after = Some((NEW_GAME_SCOPE.to_string(), char::MAX.to_string()));
                }
                Some(last) => after = Some(last),
                None => break,
            }
        }
        connection.close().await?;
        Ok(forgotten)
    }
}

/// A key of `requests`: (scope, request id).
type RequestKey = (String, String);

/// What a batch of forgetting did.
struct ForgetBatch {
    /// Request ids deleted.
    deleted: u64,
    /// The last key the batch covered (none: it reached the table's end).
    last: Option<RequestKey>,
}

/// One batch of `forget_requests`, in a transaction: the next
/// [`FORGET_BATCH`] keys after `after` (from the first key when none),
/// of which it deletes the action ids recorded before `before`.
async fn forget_batch(
    connection: &mut SqliteConnection,
    after: Option<&RequestKey>,
    before: i64,
) -> Result<ForgetBatch, StoreError> {
    // Immediate: the batch takes the write lock before it reads (waiting
    // its turn by the busy timeout); a transaction that read first would
    // fail at once on its first write if the writer had committed since.
    let mut tx = connection.begin_with("BEGIN IMMEDIATE").await?;
    let mut last = QueryBuilder::<Sqlite>::new("SELECT scope, request_id FROM requests WHERE 1");
    push_keys_after(&mut last, after);
    last.push(" ORDER BY scope, request_id LIMIT 1 OFFSET ")
        .push_bind(FORGET_BATCH - 1);
    let last: Option<RequestKey> = last.build_query_as().fetch_optional(&mut *tx).await?;

    let mut delete = QueryBuilder::<Sqlite>::new("DELETE FROM requests WHERE created_at < ");
    delete
        .push_bind(before)
        .push(" AND scope <> ")
        .push_bind(NEW_GAME_SCOPE);
    push_keys_after(&mut delete, after);
    if let Some((scope, request_id)) = &last {
        delete
            .push(" AND (scope, request_id) <= (")
            .push_bind(scope)
            .push(", ")
            .push_bind(request_id)
            .push(")");
    }
    let deleted = delete.build().execute(&mut *tx).await?.rows_affected();
    tx.commit().await?;
    Ok(ForgetBatch { deleted, last })
}

/// The condition on keys after `after` (none: every key).
fn push_keys_after(query: &mut QueryBuilder<Sqlite>, after: Option<&RequestKey>) {
    if let Some((scope, request_id)) = after {
        query
            .push(" AND (scope, request_id) > (")
            .push_bind(scope)
            .push(", ")
            .push_bind(request_id)
            .push(")");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Answer;

    /// A store in a fresh folder (kept alive by the returned guard), with
    /// `games` games `{prefix}0`, `{prefix}1`, ... at version 1.
    async fn store_with(
        durability: Durability,
        prefix: &str,
        games: usize,
    ) -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), durability)
            .await
            .unwrap();
        for g in 0..games {
            let id = format!("{prefix}{g}");
            store
                .create(&game(&id, 1, "a"), &entry(1), None)
                .await
                .unwrap();
        }
        (dir, store)
    }

    fn game(id: &str, version: u64, state: &str) -> GameRecord {
        GameRecord {
            game_id: id.into(),
            variant: "standard".into(),
            variant_version: "0.1.0".into(),
            options: "{}".into(),
            version,
            state: state.into(),
            token_hashes: [vec![1; 32], vec![2; 32]],
            start_board: None,
        }
    }

    /// The log entry of the action that produced `version`.
    fn entry(version: u64) -> LogEntry {
        LogEntry {
            version,
            text: format!("action {version}"),
        }
    }

    /// The writer never checkpoints below its safety net: a database file
    /// that grows while the log holds far fewer pages than that was copied
    /// into by the checkpointer.
    #[tokio::test]
    async fn the_checkpointer_copies_commits_into_the_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        let state = "x".repeat(4000);
        // About 200 pages, well under the writer's own threshold.
        for g in 0..200 {
            store
                .create(&game(&format!("g{g}"), 1, &state), &entry(1), None)
                .await
                .unwrap();
        }
        let grown = async {
            while std::fs::metadata(&path).unwrap().len() < before + 200 * 4000 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), grown)
            .await
            .expect("the database file holds the commits within 10 s");
        assert_eq!(store.load("g199").await.unwrap().unwrap().state, state);
    }

    /// NewGame's ids, kept for good, are jumped over by the forgetting,
    /// which must still reach the action ids whose scopes sort after them:
    /// here a batch ends among 2,500 NewGame ids, between 700 old action
    /// ids before them and 700 after.
    #[tokio::test]
    async fn forgetting_jumps_over_new_game_ids_and_reaches_the_scopes_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        let store = SqliteStore::open(&path, Durability::Normal).await.unwrap();
        let mut connection = SqliteConnection::connect_with(&store.options)
            .await
            .unwrap();
        let rows = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) \
             INSERT INTO requests (scope, request_id, fingerprint, version, game_id, created_at) \
             SELECT 'new-game', printf('id-%05d', i), x'00', NULL, printf('g%d', i), 0 FROM n; \
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 700) \
             INSERT INTO requests (scope, request_id, fingerprint, version, game_id, created_at) \
             SELECT s.scope, printf('old-%05d', i), x'00', i + 1, NULL, 0 \
             FROM n, (SELECT '0a/white' AS scope UNION ALL SELECT 'z0/white') AS s;";
        sqlx::raw_sql(rows).execute(&mut connection).await.unwrap();
        let forgotten = store
            .forget_requests(SystemTime::now() - Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(forgotten, 1400);
        let left: Vec<(String, i64)> =
            sqlx::query_as("SELECT scope, count(*) FROM requests GROUP BY scope")
                .fetch_all(&mut connection)
                .await
                .unwrap();
        assert_eq!(left, [("new-game".to_string(), 2500)]);
    }

    fn request(scope: &str, id: &str) -> RequestRecord {
        RequestRecord {
            scope: scope.into(),
            request_id: id.into(),
            fingerprint: vec![7; 32],
            answer: if scope == NEW_GAME_SCOPE {
                Answer::Created(id.into())
            } else {
                Answer::Version(7)
            },
        }
    }

    /// A request id's row, as queued.
    fn request_row(scope: &str, id: &str) -> Option<RequestRow> {
        Some(RequestRow::new(&request(scope, id)).unwrap())
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
            request: request_row(id, request_id),
        })
    }

    /// The grouped statements, committed when they succeed and rolled back
    /// when they fail.
    async fn batch(connection: &mut SqliteConnection, group: &[Write]) -> Result<(), StoreError> {
        match apply_batched(connection, group).await {
            Ok(()) => {
                sqlx::query("COMMIT").execute(&mut *connection).await?;
                Ok(())
            }
            Err(e) => {
                sqlx::query("ROLLBACK").execute(&mut *connection).await?;
                Err(e)
            }
        }
    }

    /// The grouped statements themselves (no fallback behind them): a
    /// valid group lands whole; a group with one stale version or one used
    /// request id is refused whole and leaves nothing behind.
    #[tokio::test]
    async fn a_batched_group_lands_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
        let mut connection =
            SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&path))
                .await
                .unwrap();
        let created: Vec<Write> = (0..3)
            .map(|g| {
                write(WriteKind::Create {
                    game: game(&format!("g{g}"), 1, "start"),
                    entry: entry(1),
                    request: request_row("new-game", &format!("new{g}")),
                })
            })
            .collect();
        batch(&mut connection, &created).await.unwrap();
        let group = [
            commit("g0", 2, "a"),
            commit("g1", 2, "a"),
            commit("g2", 2, "a"),
        ];
        batch(&mut connection, &group).await.unwrap();
        for g in 0..3 {
            let id = format!("g{g}");
            let stored = store.load(&id).await.unwrap().unwrap();
            assert_eq!((stored.version, stored.state.as_str()), (2, "next"));
            assert_eq!(store.log_after(&id, 0).await.unwrap().len(), 2);
            assert!(store.request(&id, "a").await.unwrap().is_some());
        }

        // g2's write expects version 4; it is at 2.
        let stale = [
            commit("g0", 3, "b"),
            commit("g1", 3, "b"),
            commit("g2", 5, "b"),
        ];
        let refused = batch(&mut connection, &stale).await.unwrap_err();
        assert!(matches!(refused, StoreError::Batch(_)), "{refused:?}");
        let reused = [commit("g0", 3, "c"), commit("g1", 3, "a")];
        let refused = batch(&mut connection, &reused).await.unwrap_err();
        assert!(matches!(refused, StoreError::Duplicate), "{refused:?}");
        for g in 0..3 {
            let id = format!("g{g}");
            assert_eq!(store.load(&id).await.unwrap().unwrap().version, 2);
            assert_eq!(store.log_after(&id, 0).await.unwrap().len(), 2);
            assert!(store.request(&id, "b").await.unwrap().is_none());
        }
        assert!(store.request("g0", "c").await.unwrap().is_none());
        // The connection is usable again: no transaction left open.
        batch(
            &mut connection,
            &[commit("g0", 3, "d"), commit("g1", 3, "d")],
        )
        .await
        .unwrap();
        assert_eq!(store.load("g1").await.unwrap().unwrap().version, 3);
    }

    // ---- Storage faults -------------------------------------------------

    use faults::Fault;

    impl SqliteStore {
        /// Plans the faults of the next transactions (None: no fault).
        fn plan(&self, faults: &[Option<Fault>]) {
            let mut planned = self.faults.planned.lock().unwrap();
            planned.extend(faults.iter().copied());
        }

        fn pause_probes(&self, paused: bool) {
            self.faults
                .probes_paused
                .store(paused, std::sync::atomic::Ordering::SeqCst);
        }

        /// Lets the database grow to `pages` pages at most (None: no limit).
        fn limit_pages(&self, pages: Option<u64>) {
            *self.faults.max_pages.lock().unwrap() = pages;
        }

        async fn page_count(&self) -> u64 {
            let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
                .fetch_one(&self.readers)
                .await
                .unwrap();
            pages as u64
        }
    }

    /// What a write was answered.
    #[derive(Debug)]
    struct Answered {
        game_id: String,
        version: u64,
        request_id: String,
        result: Result<(), StoreError>,
    }

    /// A new game `id` at version 1 with its NewGame request id, and a
    /// state of `size` bytes.
    async fn create_game(store: &SqliteStore, id: &str, size: usize) -> Answered {
        let request_id = format!("new-{id}");
        let result = store
            .create(
                &game(id, 1, &"s".repeat(size)),
                &entry(1),
                Some(&request(NEW_GAME_SCOPE, &request_id)),
            )
            .await;
        Answered {
            game_id: id.into(),
            version: 1,
            request_id,
            result,
        }
    }

    /// Moves game `id` from `version - 1` to `version`, with a request id.
    async fn advance(store: &SqliteStore, id: &str, version: u64) -> Answered {
        let request_id = format!("{id}-v{version}");
        let result = store
            .commit(
                &game(id, version, "next"),
                version - 1,
                &entry(version),
                Some(&request(id, &request_id)),
            )
            .await;
        Answered {
            game_id: id.into(),
            version,
            request_id,
            result,
        }
    }

    /// The promise, checked on the database opened again from its file:
    /// every acknowledged write is stored; a write refused with "not
    /// stored" is not; a write whose outcome was unknown is stored whole
    /// (with its request id, so a retry is answered) or not at all.
    async fn check_promise(path: &Path, answers: &[Answered]) {
        let store = SqliteStore::open(path, Durability::Full).await.unwrap();
        for answer in answers {
            let scope = if answer.version == 1 {
                NEW_GAME_SCOPE.to_string()
            } else {
                answer.game_id.clone()
            };
            let request = store.request(&scope, &answer.request_id).await.unwrap();
            let stored = store.load(&answer.game_id).await.unwrap();
            let entry_stored = store
                .log_after(&answer.game_id, answer.version - 1)
                .await
                .unwrap()
                .iter()
                .any(|e| e.version == answer.version);
            let reached = stored.is_some_and(|g| g.version >= answer.version);
            match &answer.result {
                Ok(()) => assert!(
                    request.is_some() && entry_stored && reached,
                    "acknowledged but not stored: {answer:?}"
                ),
                // A later retry with the same request id may have stored it.
                Err(StoreError::WriteFailed {
                    applied: Applied::No,
                    ..
                }) if !answers
                    .iter()
                    .any(|a| a.request_id == answer.request_id && a.result.is_ok()) =>
                {
                    assert!(
                        request.is_none() && !entry_stored,
                        "answered `not stored` but stored: {answer:?}"
                    )
                }
                Err(StoreError::WriteFailed {
                    applied: Applied::No,
                    ..
                }) => {}
                Err(StoreError::WriteFailed {
                    applied: Applied::Unknown,
                    ..
                }) => assert_eq!(
                    request.is_some(),
                    entry_stored,
                    "stored in part: {answer:?}"
                ),
                Err(other) => panic!("unexpected answer {other:?} for {answer:?}"),
            }
        }
    }

    /// No transaction is left open: another connection can take the write
    /// lock at once.
    async fn nothing_left_open(path: &Path) {
        let mut outside = SqliteConnection::connect_with(
            &SqliteConnectOptions::new()
                .filename(path)
                .busy_timeout(Duration::from_millis(500)),
        )
        .await
        .unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut outside)
            .await
            .expect("the writer holds no transaction");
        sqlx::query("ROLLBACK").execute(&mut outside).await.unwrap();
    }

    async fn writable_within(store: &SqliteStore, writable: bool) {
        let mut watch = store.writable();
        tokio::time::timeout(Duration::from_secs(10), watch.wait_for(|&w| w == writable))
            .await
            .unwrap_or_else(|_| panic!("writable = {writable} within 10 s"))
            .unwrap();
    }

    /// Issue 11, item 1, with SQLite's page limit standing in for a full
    /// disk: once writes fail, each is answered with an error (none is
    /// acknowledged unstored), no transaction stays open, the store reports
    /// itself unwritable, and it takes writes again by itself once there
    /// is room, having lost nothing it acknowledged.
    #[tokio::test]
    async fn a_full_database_fails_each_write_and_recovers_when_room_returns() {
        let (dir, store) = store_with(Durability::Full, "g", 4).await;
        let path = dir.path().join("games.db");
        let mut answers = Vec::new();
        store.pause_probes(true);
        store.limit_pages(Some(store.page_count().await + 8));
        let mut failed = 0;
        for n in 0..200 {
            // New games of 2 KiB grow the file; moves of the first four
            // games do not need new pages.
            answers.push(create_game(&store, &format!("new{n}"), 2048).await);
            answers.push(advance(&store, &format!("g{}", n % 4), n / 4 + 2).await);
            if answers.iter().any(|a| a.result.is_err()) {
                failed += 1;
            }
            if failed > 20 {
                break;
            }
        }
        assert!(failed > 0, "the page limit made writes fail");
        for answer in answers.iter().filter(|a| a.result.is_err()) {
            assert!(
                matches!(
                    answer.result,
                    Err(StoreError::WriteFailed {
                        applied: Applied::No,
                        ..
                    })
                ),
                "{answer:?}"
            );
        }
        nothing_left_open(&path).await;
        // Still full: a new game is refused again, and the store says so
        // (moves of existing games may still fit; that does not make the
        // store writable again: only its probe does).
        let refused = create_game(&store, "still-full", 8192).await;
        assert!(refused.result.is_err());
        assert!(
            !*store.writable().borrow(),
            "unwritable since a write failed"
        );
        answers.push(refused);

        store.limit_pages(None);
        store.pause_probes(false);
        writable_within(&store, true).await;
        answers.push(create_game(&store, "after", 8192).await);
        assert!(answers.last().unwrap().result.is_ok());
        drop(store);
        check_promise(&path, &answers).await;
    }

    /// The fault-injection suite: a storage error at each step of a
    /// commit, alone and in a group. The answer says what happened; the
    /// next write works; the promise holds on the file.
    #[tokio::test]
    async fn a_storage_error_at_each_step_of_a_commit_keeps_the_promise() {
        let steps = [
            (Fault::BeforeBegin, Applied::No),
            (Fault::InStatements, Applied::No),
            (Fault::AtCommit, Applied::Unknown),
            (Fault::AfterCommit, Applied::Unknown),
        ];
        for (fault, applied) in steps {
            let (dir, store) = store_with(Durability::Full, "g", 8).await;
            let path = dir.path().join("games.db");
            let mut answers = Vec::new();

            // Alone.
            store.plan(&[Some(fault)]);
            let failed = advance(&store, "g0", 2).await;
            match &failed.result {
                Err(StoreError::WriteFailed { applied: a, .. }) => assert_eq!(*a, applied),
                other => panic!("{fault:?}: {other:?}"),
            }
            answers.push(failed);
            assert!(!*store.writable().borrow(), "{fault:?}");
            nothing_left_open(&path).await;
            // The next write opens a new connection and lands.
            let next = create_game(&store, "after-alone", 10).await;
            assert!(next.result.is_ok(), "{fault:?}: {next:?}");
            answers.push(next);
            // Writable again once the writer's probe finds room.
            writable_within(&store, true).await;

            // In a group: every write of it gets the failure.
            store.plan(&[Some(fault)]);
            let writes = (1..8).map(|g| {
                let store = store.clone();
                tokio::spawn(async move { advance(&store, &format!("g{g}"), 2).await })
            });
            for task in writes.collect::<Vec<_>>() {
                answers.push(task.await.unwrap());
            }
            nothing_left_open(&path).await;
            // A retry of an unknown outcome finds it by its request id, or
            // applies it now.
            for g in 0..8 {
                let id = format!("g{g}");
                let stored = store.load(&id).await.unwrap().unwrap().version;
                if stored == 1 {
                    let retry = advance(&store, &id, 2).await;
                    assert!(retry.result.is_ok(), "{fault:?}: {retry:?}");
                    answers.push(retry);
                } else {
                    let request = store.request(&id, &format!("{id}-v2")).await.unwrap();
                    assert!(
                        request.is_some(),
                        "{fault:?}: stored without its request id"
                    );
                }
            }
            drop(store);
            check_promise(&path, &answers).await;
        }
    }

    /// A write that happens to succeed during an outage (a full disk can
    /// still take one into log pages it had) does not end it: only the
    /// writer's probe, which asks for room, does.
    #[tokio::test]
    async fn a_write_that_fits_during_an_outage_does_not_end_it() {
        let (_dir, store) = store_with(Durability::Full, "g", 1).await;
        store.pause_probes(true);
        store.plan(&[Some(Fault::BeforeBegin)]);
        assert!(advance(&store, "g0", 2).await.result.is_err());
        assert!(advance(&store, "g0", 2).await.result.is_ok());
        assert!(!*store.writable().borrow(), "still unwritable");
        store.pause_probes(false);
        writable_within(&store, true).await;
    }

    /// While writes fail, the writer tries one of its own now and then: the
    /// store says it is writable again without any caller writing.
    #[tokio::test]
    async fn the_store_finds_by_itself_that_writes_work_again() {
        let (_dir, store) = store_with(Durability::Full, "g", 1).await;
        // The write and the next two probes fail; the third probe works.
        store.plan(&[Some(Fault::BeforeBegin); 3]);
        assert!(advance(&store, "g0", 2).await.result.is_err());
        assert!(!*store.writable().borrow());
        let started = std::time::Instant::now();
        writable_within(&store, true).await;
        assert!(
            started.elapsed() >= PROBE_INTERVAL * 2,
            "two probes failed first"
        );
        assert!(advance(&store, "g0", 2).await.result.is_ok());
    }

    /// A clean close copies the whole log into the database file: the file
    /// alone, copied elsewhere, holds every game.
    #[tokio::test]
    async fn closing_leaves_every_game_in_the_database_file_alone() {
        let (dir, store) = store_with(Durability::Full, "g", 50).await;
        let path = dir.path().join("games.db");
        for g in 0..50 {
            advance(&store, &format!("g{g}"), 2).await.result.unwrap();
        }
        store.close().await;
        let wal = dir.path().join("games.db-wal");
        let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        assert_eq!(left, 0, "the log is empty after a clean close");
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(&path, copy.path().join("games.db")).unwrap();
        let reopened = SqliteStore::open(&copy.path().join("games.db"), Durability::Full)
            .await
            .unwrap();
        for g in 0..50 {
            let game = reopened.load(&format!("g{g}")).await.unwrap().unwrap();
            assert_eq!(game.version, 2);
        }
        let closed = advance(&store, "g0", 3).await;
        assert!(matches!(
            closed.result,
            Err(StoreError::WriteFailed {
                applied: Applied::No,
                ..
            })
        ));
    }
}
