//! The embedded default: one SQLite file, in WAL mode.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, QueryBuilder, Sqlite};
use tokio::sync::{oneshot, watch};

use crate::rows::{column, game_record, log_entries, request_record, stored_version};
use crate::{Applied, GameRecord, GameStore, LogEntry, NEW_GAME_SCOPE, RequestRecord, StoreError};

mod writer;

use writer::{Job, RequestRow, Write, WriteKind};

/// How hard a commit waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// fsync on every commit: survives a power cut (the default).
    Full,
    /// fsync at checkpoints: survives a killed process, not a power cut.
    Normal,
}

/// Makes the database file readable and writable by its owner alone
/// (0600), creating it empty if missing, whatever the process's umask: the
/// state of every match in progress holds its secret dice seed, so another
/// local user who could read the file could predict every die.
fn owner_only(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| io_error(e, format!("creating {}", path.display())))?;
    owner_only_if_present(path)
}

/// Takes the group's and others' rights away from `path`, if it exists.
fn owner_only_if_present(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(metadata) = std::fs::metadata(path) else {
        return Ok(());
    };
    let mode = metadata.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700))
            .map_err(|e| io_error(e, format!("making {} private (0600)", path.display())))?;
    }
    Ok(())
}

/// An I/O error, saying what was being done.
fn io_error(e: std::io::Error, doing: String) -> StoreError {
    StoreError::Database(sqlx::Error::Io(std::io::Error::new(
        e.kind(),
        format!("{doing}: {e}"),
    )))
}

/// `path` with `suffix` added to its file name (SQLite's `-wal`, `-shm`).
fn suffixed(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// How long a connection waits for a lock another one holds (the writer
/// and a sweep of old request ids take turns) before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Games in a SQLite file.
///
/// SQLite has one writer at a time, so one thread of its own owns the
/// writing connection (see [`writer`]). It takes every write waiting in
/// its queue and applies them in one transaction: one fsync for the group
/// instead of one each (group commit). If a write of a group is refused (a version conflict), the
/// group is rolled back and its writes are applied one by one, so each
/// caller gets exactly its own result. Reads use other connections.
///
/// An action's request id is kept in the action's own row of the log
/// (migration 0007), so a commit writes two b-trees, the game's snapshot
/// and its log, not three: the writer knows which ids each game used (see
/// `writer::UsedIds`), and refuses one used before as `requests`' key
/// would. `requests` keeps NewGame's ids and those older servers wrote.
///
/// If the storage itself fails (a full disk, an I/O error), every write
/// of the group is answered with [`StoreError::WriteFailed`] and the
/// writer drops its connection, so no transaction can stay open on it:
/// the next write opens a new one.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    jobs: tokio::sync::mpsc::Sender<Job>,
    readers: SqlitePool,
    /// For maintenance writes (forgetting old request ids), on connections
    /// of their own.
    options: SqliteConnectOptions,
    writable: watch::Receiver<bool>,
    #[cfg(test)]
    faults: std::sync::Arc<writer::faults::Faults>,
}

impl SqliteStore {
    /// Opens (creating it if needed) the database file and brings its
    /// schema up to date.
    pub async fn open(path: &Path, durability: Durability) -> Result<SqliteStore, StoreError> {
        owner_only(path)?;
        let options = SqliteConnectOptions::from_str("sqlite://")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match durability {
                Durability::Full => SqliteSynchronous::Full,
                Durability::Normal => SqliteSynchronous::Normal,
            })
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            // A statement journal stays in memory, not in a file.
            .pragma("temp_store", "memory");
        let mut migrating = SqliteConnection::connect_with(&options).await?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&mut migrating)
            .await?;
        migrating.close().await?;
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone().read_only(true))
            .await?;
        let writer::Started {
            jobs,
            writable,
            #[cfg(test)]
            faults,
        } = writer::start(path, durability)?;
        // SQLite made the log and its index in WAL mode, with the mode of
        // the database file; made sure of here, whatever it did.
        for file in [suffixed(path, "-wal"), suffixed(path, "-shm")] {
            owner_only_if_present(&file)?;
        }
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
            .busy_timeout(BUSY_TIMEOUT);
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

/// Whole seconds since the Unix epoch (0 before it).
pub(super) fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(i64::MAX as u64) as i64)
}

/// Rows looked at per transaction of forgetting, so the writer never
/// waits long.
const FORGET_BATCH: i64 = 1000;

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
            request: RequestRow::of(request, &game.game_id, entry.version)?,
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
            "SELECT game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board, \
             CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END AS finished, deadline_at FROM games WHERE game_id = ?",
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
            request: RequestRow::of(request, &game.game_id, entry.version)?,
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
        // An action's id is in its log row (see `writer::RequestRow`), or
        // a row of `requests` (written by an older server).
        if let Some((game_id, rest)) = writer::split_scope(scope) {
            let row = sqlx::query(
                "SELECT request_fingerprint AS fingerprint, version, \
                 NULL AS game_id, NULL AS response FROM game_events \
                 WHERE game_id = ? AND request_scope = ? AND request_id = ?",
            )
            .bind(game_id)
            .bind(rest)
            .bind(request_id)
            .fetch_optional(&self.readers)
            .await?;
            if let Some(row) = row {
                return request_record(&row, scope, request_id).map(Some);
            }
        }
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

    /// Walks `requests` in key order to its end, then the log, each
    /// `FORGET_BATCH` keys at a time: deletes the old action ids of
    /// `requests`, and clears those kept in log rows. Each batch is a small
    /// transaction on a connection of its own: the writer waits (busy
    /// timeout) for one batch at most.
    ///
    /// Neither has an index by time (it would cost every action about 70
    /// bytes, migration 0005), so a sweep reads both whole once, by design:
    /// a sweep is rare (an hour apart by default), and its reading cheap
    /// next to the bytes the index would keep for every action.
    async fn forget_requests(&self, before: SystemTime) -> Result<u64, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let before = unix_seconds(before);
        let mut forgotten = 0;
        let mut after: Option<(String, String)> = None;
        loop {
            let (changed, last) = forget_batch(&mut connection, &REQUESTS, after, before).await?;
            forgotten += changed;
            after = match last {
                // NewGame's ids are kept for good, and sit together in key
                // order: the walk jumps past them all (no request id sorts
                // after U+10FFFF, the last character; one that begins with
                // it would be a NewGame id, kept anyway).
                Some((scope, _)) if scope == NEW_GAME_SCOPE => {
                    Some((NEW_GAME_SCOPE.to_string(), char::MAX.to_string()))
                }
                Some(last) => Some(last),
                None => break,
            };
        }
        let mut after: Option<(String, i64)> = None;
        loop {
            let (changed, last) = forget_batch(&mut connection, &LOG, after, before).await?;
            forgotten += changed;
            after = match last {
                Some(last) => Some(last),
                None => break,
            };
        }
        connection.close().await?;
        Ok(forgotten)
    }

    async fn finished_before(
        &self,
        before: SystemTime,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT game_id FROM games WHERE finished_at IS NOT NULL AND finished_at < ? \
             ORDER BY finished_at LIMIT ?",
        )
        .bind(unix_seconds(before))
        .bind(i64::from(limit))
        .fetch_all(&self.readers)
        .await?)
    }

    async fn due_before(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT game_id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= ? \
             ORDER BY deadline_at LIMIT ?",
        )
        .bind(now_ms.min(i64::MAX as u64) as i64)
        .bind(i64::from(limit))
        .fetch_all(&self.readers)
        .await?)
    }

    /// On a connection of its own, as the forgetting of request ids: the
    /// writer's thread keeps to the actions. Its first statement writes,
    /// so the transaction takes the write lock at once (waiting for the
    /// writer's commit, if one is under way).
    async fn remove_finished(&self, game_id: &str) -> Result<bool, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let mut transaction = connection.begin().await?;
        const ENDED: &str =
            "EXISTS (SELECT 1 FROM games WHERE game_id = ?1 AND finished_at IS NOT NULL)";
        for statement in [
            format!("DELETE FROM game_events WHERE game_id = ?1 AND {ENDED}"),
            format!("DELETE FROM requests WHERE scope IN (?2, ?3) AND {ENDED}"),
            format!("DELETE FROM requests WHERE scope = ?4 AND game_id = ?1 AND {ENDED}"),
        ] {
            sqlx::query(sqlx::AssertSqlSafe(statement))
                .bind(game_id)
                .bind(crate::action_scope(game_id, "white"))
                .bind(crate::action_scope(game_id, "black"))
                .bind(NEW_GAME_SCOPE)
                .execute(&mut *transaction)
                .await?;
        }
        let removed =
            sqlx::query("DELETE FROM games WHERE game_id = ? AND finished_at IS NOT NULL")
                .bind(game_id)
                .execute(&mut *transaction)
                .await?
                .rows_affected();
        transaction.commit().await?;
        connection.close().await?;
        Ok(removed == 1)
    }
}

/// A table `forget_requests` walks in key order, and how it forgets the
/// ids of its rows recorded before a time (the statement's first value).
struct Walk {
    table: &'static str,
    /// The table's key, two columns.
    key: &'static str,
    forget: &'static str,
    /// Whether the table holds NewGame's ids, kept for good.
    keeps_new_game_ids: bool,
}

const REQUESTS: Walk = Walk {
    table: "requests",
    key: "scope, request_id",
    forget: "DELETE FROM requests WHERE created_at < ",
    keeps_new_game_ids: true,
};

const LOG: Walk = Walk {
    table: "game_events",
    key: "game_id, version",
    forget: "UPDATE game_events SET request_scope = NULL, request_id = NULL, \
             request_fingerprint = NULL, requested_at = NULL WHERE requested_at < ",
    keeps_new_game_ids: false,
};

/// One batch of `forget_requests`, in a transaction: the next
/// [`FORGET_BATCH`] keys of the walk's table after `after` (from the first
/// key when none), whose ids recorded before `before` it forgets. Returns
/// how many, and the last key it covered (none: it reached the end).
async fn forget_batch<B>(
    connection: &mut SqliteConnection,
    walk: &Walk,
    after: Option<(String, B)>,
    before: i64,
) -> Result<(u64, Option<(String, B)>), StoreError>
where
    B: for<'q> sqlx::Encode<'q, Sqlite> + for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
    B: Clone + Send + Unpin + 'static,
{
    // Immediate: the batch takes the write lock before it reads (waiting
    // its turn by the busy timeout); a transaction that read first would
    // fail at once on its first write if the writer had committed since.
    let mut tx = connection.begin_with("BEGIN IMMEDIATE").await?;
    let mut last =
        QueryBuilder::<Sqlite>::new(format!("SELECT {} FROM {} WHERE 1", walk.key, walk.table));
    push_key_bound(&mut last, walk, ">", after.clone());
    last.push(format!(" ORDER BY {} LIMIT 1 OFFSET ", walk.key))
        .push_bind(FORGET_BATCH - 1);
    let last: Option<(String, B)> = last.build_query_as().fetch_optional(&mut *tx).await?;

    let mut forget = QueryBuilder::<Sqlite>::new(walk.forget);
    forget.push_bind(before);
    if walk.keeps_new_game_ids {
        forget.push(" AND scope <> ").push_bind(NEW_GAME_SCOPE);
    }
    push_key_bound(&mut forget, walk, ">", after);
    push_key_bound(&mut forget, walk, "<=", last.clone());
    let forgotten = forget.build().execute(&mut *tx).await?.rows_affected();
    tx.commit().await?;
    Ok((forgotten, last))
}

/// The condition `(key) <op> (bound)`, if there is a bound.
fn push_key_bound<B>(
    query: &mut QueryBuilder<Sqlite>,
    walk: &Walk,
    op: &str,
    bound: Option<(String, B)>,
) where
    B: for<'q> sqlx::Encode<'q, Sqlite> + sqlx::Type<Sqlite> + Send + 'static,
{
    if let Some((first, second)) = bound {
        query
            .push(format!(" AND ({}) {op} (", walk.key))
            .push_bind(first)
            .push(", ")
            .push_bind(second)
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

    pub(super) fn game(id: &str, version: u64, state: &str) -> GameRecord {
        GameRecord {
            game_id: id.into(),
            variant: "standard".into(),
            variant_version: "0.1.0".into(),
            options: "{}".into(),
            version,
            state: state.into(),
            token_hashes: [vec![1; 32], vec![2; 32]],
            start_board: None,
            finished: false,
            deadline_ms: None,
        }
    }

    /// The log entry of the action that produced `version`.
    pub(super) fn entry(version: u64) -> LogEntry {
        LogEntry {
            version,
            text: format!("action {version}"),
        }
    }

    /// A connection of the test's own to the database at `path`.
    async fn connect(path: &Path) -> SqliteConnection {
        SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(path))
            .await
            .unwrap()
    }

    /// An action id in its game's scope, answered by its own entry's
    /// version, lands in that log row and nowhere else; any other id (a
    /// scope naming another game, an answer of another version, NewGame's)
    /// is a row of `requests`. Both read back, and both count as used.
    #[tokio::test]
    async fn an_action_s_id_is_kept_in_its_log_row_and_others_in_requests() {
        let (dir, store) = store_with(Durability::Full, "g", 2).await;
        let logged = RequestRecord {
            scope: crate::action_scope("g0", "white"),
            request_id: "r1".into(),
            fingerprint: vec![5; 16],
            answer: Answer::Version(2),
        };
        let elsewhere = RequestRecord {
            scope: crate::action_scope("g9", "white"),
            ..logged.clone()
        };
        let other_answer = RequestRecord {
            request_id: "r2".into(),
            answer: Answer::Version(7),
            ..logged.clone()
        };
        store
            .commit(&game("g0", 2, "b"), 1, &entry(2), Some(&logged))
            .await
            .unwrap();
        store
            .commit(&game("g1", 2, "b"), 1, &entry(2), Some(&elsewhere))
            .await
            .unwrap();
        store
            .commit(&game("g0", 3, "c"), 2, &entry(3), Some(&other_answer))
            .await
            .unwrap();
        let mut connection = connect(&dir.path().join("games.db")).await;
        let in_requests: Vec<(String, String)> =
            sqlx::query_as("SELECT scope, request_id FROM requests ORDER BY scope, request_id")
                .fetch_all(&mut connection)
                .await
                .unwrap();
        assert_eq!(
            in_requests,
            [
                ("g0/white".to_string(), "r2".to_string()),
                ("g9/white".to_string(), "r1".to_string())
            ]
        );
        let in_log: Vec<(String, i64, String, String, Vec<u8>)> = sqlx::query_as(
            "SELECT game_id, version, request_scope, request_id, request_fingerprint \
             FROM game_events WHERE request_id IS NOT NULL",
        )
        .fetch_all(&mut connection)
        .await
        .unwrap();
        assert_eq!(
            in_log,
            [("g0".into(), 2, "white".into(), "r1".into(), vec![5; 16])]
        );
        for request in [&logged, &elsewhere, &other_answer] {
            assert_eq!(
                store
                    .request(&request.scope, &request.request_id)
                    .await
                    .unwrap()
                    .as_ref(),
                Some(request)
            );
        }
        // Used, wherever each is kept. g0/white's r2 is in the table: a
        // commit that would log it in g0 finds it there. g0/white's r1 is
        // in g0's log: a commit of g1 that would put it in the table (its
        // scope names another game) finds it there.
        let in_the_table = RequestRecord {
            answer: Answer::Version(4),
            ..other_answer.clone()
        };
        let refused = store
            .commit(&game("g0", 4, "d"), 3, &entry(4), Some(&in_the_table))
            .await;
        assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
        let in_the_log = RequestRecord {
            answer: Answer::Version(3),
            ..logged.clone()
        };
        let refused = store
            .commit(&game("g1", 3, "d"), 2, &entry(3), Some(&in_the_log))
            .await;
        assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
        assert_eq!(store.version("g0").await.unwrap(), Some(3));
        assert_eq!(store.version("g1").await.unwrap(), Some(2));
        connection.close().await.unwrap();
    }

    /// A log row whose request id does not read back (its fingerprint
    /// gone, or not bytes) fails that id's lookup with Corrupt,
    /// naming it; the game's other ids read as before.
    #[tokio::test]
    async fn a_damaged_request_id_in_a_log_row_is_corrupt_for_that_id_only() {
        let (dir, store) = store_with(Durability::Full, "g", 1).await;
        for (version, id) in [(2, "bad"), (3, "good")] {
            let request = RequestRecord {
                scope: "g0/white".into(),
                request_id: id.into(),
                fingerprint: vec![5; 16],
                answer: Answer::Version(version),
            };
            store
                .commit(
                    &game("g0", version, "b"),
                    version - 1,
                    &entry(version),
                    Some(&request),
                )
                .await
                .unwrap();
        }
        let mut connection = connect(&dir.path().join("games.db")).await;
        for damage in [
            "UPDATE game_events SET request_fingerprint = NULL WHERE request_id = 'bad'",
            "UPDATE game_events SET request_fingerprint = 12 WHERE request_id = 'bad'",
        ] {
            sqlx::query(damage).execute(&mut connection).await.unwrap();
            match store.request("g0/white", "bad").await {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains("\"bad\""), "{damage}: {message}")
                }
                read => panic!("{damage}: {read:?}"),
            }
            let good = store.request("g0/white", "good").await.unwrap().unwrap();
            assert_eq!(good.answer, Answer::Version(3));
        }
        connection.close().await.unwrap();
    }

    /// A database where an older server kept action ids as rows of
    /// `requests` (in the scope shape the server uses today): once opened
    /// by this store, those ids still answer their retries and still count
    /// as used, and new ids of the same scope land in the log.
    #[tokio::test]
    async fn action_ids_an_older_server_kept_in_requests_still_count_as_used() {
        let (dir, store) = store_with(Durability::Full, "g", 1).await;
        store.close().await;
        let path = dir.path().join("games.db");
        let mut connection = connect(&path).await;
        sqlx::query(
            "INSERT INTO requests (scope, request_id, fingerprint, version, created_at) \
             VALUES ('g0/white', 'old', x'05', 1, 0)",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
        let old = store.request("g0/white", "old").await.unwrap().unwrap();
        assert_eq!(old.answer, Answer::Version(1));
        let action = |id: &str| RequestRecord {
            scope: "g0/white".into(),
            request_id: id.into(),
            fingerprint: vec![5],
            answer: Answer::Version(2),
        };
        let refused = store
            .commit(&game("g0", 2, "b"), 1, &entry(2), Some(&action("old")))
            .await;
        assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
        store
            .commit(&game("g0", 2, "b"), 1, &entry(2), Some(&action("new")))
            .await
            .unwrap();
        let logged: i64 =
            sqlx::query_scalar("SELECT count(*) FROM game_events WHERE request_id = 'new'")
                .fetch_one(&mut connection)
                .await
                .unwrap();
        assert_eq!(logged, 1);
        connection.close().await.unwrap();
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

    pub(super) fn request(scope: &str, id: &str) -> RequestRecord {
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

    // ---- Storage faults -------------------------------------------------

    use writer::faults::Fault;

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
        // As the server records it: kept in the action's log row.
        let request = RequestRecord {
            scope: crate::action_scope(id, "white"),
            request_id: request_id.clone(),
            fingerprint: vec![7; 16],
            answer: Answer::Version(version),
        };
        let result = store
            .commit(
                &game(id, version, "next"),
                version - 1,
                &entry(version),
                Some(&request),
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
                crate::action_scope(&answer.game_id, "white")
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

    /// A writer whose thread panics (a bug) answers the write it held as
    /// of unknown outcome and every later one as not stored, and the store
    /// says it is unwritable: nothing waits for ever, nothing looks well.
    /// What was committed before stays on the file.
    #[tokio::test]
    async fn a_writer_that_panics_answers_every_write_and_reports_unwritable() {
        let (dir, store) = store_with(Durability::Full, "g", 2).await;
        store.plan(&[Some(Fault::Panic)]);
        let held = within_seconds(10, advance(&store, "g0", 2)).await;
        match &held.result {
            Err(StoreError::WriteFailed { applied, .. }) => assert_eq!(*applied, Applied::Unknown),
            other => panic!("{other:?}"),
        }
        writable_within(&store, false).await;
        let later = within_seconds(10, advance(&store, "g1", 2)).await;
        match &later.result {
            Err(StoreError::WriteFailed { applied, .. }) => assert_eq!(*applied, Applied::No),
            other => panic!("{other:?}"),
        }
        assert!(!*store.writable().borrow());
        drop(store);
        let reopened = SqliteStore::open(&dir.path().join("games.db"), Durability::Full)
            .await
            .unwrap();
        assert_eq!(reopened.version("g0").await.unwrap(), Some(1));
        assert_eq!(reopened.version("g1").await.unwrap(), Some(1));
        reopened.close().await;
    }

    async fn within_seconds<T>(seconds: u64, future: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(seconds), future)
            .await
            .expect("answered in time")
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
                    let request = store
                        .request(&crate::action_scope(&id, "white"), &format!("{id}-v2"))
                        .await
                        .unwrap();
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
            started.elapsed() >= writer::PROBE_INTERVAL * 2,
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

    /// Writes sent while the store closes are each answered: stored (and
    /// then in the file the close leaves), or refused as not stored; none
    /// waits for ever, none is left unknown.
    #[tokio::test]
    async fn writes_racing_a_close_are_stored_or_refused_as_not_stored() {
        let (dir, store) = store_with(Durability::Full, "g", 200).await;
        let writes: Vec<_> = (0..200)
            .map(|g| {
                let store = store.clone();
                tokio::spawn(async move { advance(&store, &format!("g{g}"), 2).await })
            })
            .collect();
        tokio::task::yield_now().await;
        store.close().await;
        let mut answers = Vec::new();
        for write in writes {
            let answered = tokio::time::timeout(Duration::from_secs(10), write)
                .await
                .expect("every write is answered")
                .unwrap();
            match &answered.result {
                Ok(()) => {}
                Err(StoreError::WriteFailed {
                    applied: Applied::No,
                    ..
                }) => {}
                other => panic!("{}: {other:?}", answered.game_id),
            }
            answers.push(answered);
        }
        check_promise(&dir.path().join("games.db"), &answers).await;
    }
}
