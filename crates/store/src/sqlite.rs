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

use crate::list::{Dialect, Value};
use crate::rows::{
    column, feed_row, game_record, log_entries, match_row, request_record, stored_version,
};
use crate::{
    Applied, Feed, FeedBounds, FeedPosition, FeedRow, GameRecord, GameStore, LogEntry, MatchQuery,
    MatchRow, NEW_GAME_SCOPE, RequestRecord, StoreError,
};

mod webhooks;
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
/// would. `requests` keeps NewGame's ids, ids in scopes that name no game, and
/// action ids in the format before they moved into log rows (CHANGELOG).
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
    /// The one connection webhook deliveries are written on (opened when
    /// first used; `synchronous = NORMAL`, see `open`).
    side: SqlitePool,
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
        // Webhook rows may be lost at a power cut without losing an event:
        // a lost staging is staged again from the place it did not move,
        // a lost settlement sent again (at least once). So their commits
        // skip the fsync (the action writer's next one covers them), and
        // hold the write lock only for as long as they write.
        let side = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options.clone().synchronous(SqliteSynchronous::Normal));
        Ok(SqliteStore {
            jobs,
            readers,
            options,
            side,
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
             CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END AS finished, deadline_at, \
             labels, white_player, black_player, owner, to_act, abandoned, created_us, updated_us \
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
        // a row of `requests` (the format before ids moved into log rows).
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
    async fn remove_finished(&self, game_id: &str, feed: &Feed) -> Result<bool, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let mut transaction = connection.begin().await?;
        // The removal's feed row and the match's words for the rows before
        // it, written first (the write lock is taken at once), kept only
        // if the match is removed below.
        let now_ms = writer::unix_millis(SystemTime::now());
        let fed = sqlx::query(
            "INSERT INTO feed (game_id, version, at_ms, kinds, detail) \
             SELECT game_id, version, ?2, ?3, ?4 FROM games WHERE game_id = ?1 AND finished_at IS NOT NULL",
        )
        .bind(game_id)
        .bind(now_ms)
        .bind(i64::from(feed.kinds))
        .bind((!feed.detail.is_empty()).then_some(feed.detail.as_slice()))
        .execute(&mut *transaction)
        .await?;
        if fed.rows_affected() == 1 {
            sqlx::query(
                "INSERT INTO removed_matches (game_id, variant, labels, white_player, black_player, owner, removal_seq) \
                 SELECT game_id, variant, labels, white_player, black_player, owner, ?2 FROM games \
                 WHERE game_id = ?1 ON CONFLICT (game_id) DO NOTHING",
            )
            .bind(game_id)
            .bind(fed.last_insert_rowid())
            .execute(&mut *transaction)
            .await?;
        }
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

    async fn list_matches(&self, query: &MatchQuery) -> Result<Vec<MatchRow>, StoreError> {
        let statement = crate::list::statement(query, Dialect::Sqlite);
        let mut q = sqlx::query(sqlx::AssertSqlSafe(statement.sql));
        for value in statement.values {
            q = match value {
                Value::Int(n) => q.bind(n),
                Value::Text(t) => q.bind(t),
            };
        }
        let rows = q.fetch_all(&self.readers).await?;
        rows.iter().map(match_row).collect()
    }

    /// One writer commits, in `seq` order, and a reader sees only
    /// committed rows: every row after a place is read in order.
    async fn feed_after(
        &self,
        after: FeedPosition,
        kinds: u32,
        with_log: bool,
        limit: u32,
    ) -> Result<Vec<FeedRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT f.seq, f.game_id, f.version, f.at_ms, f.kinds, f.detail, \
             COALESCE(g.variant, r.variant) AS variant, COALESCE(g.labels, r.labels) AS labels, \
             COALESCE(g.white_player, r.white_player) AS white_player, \
             COALESCE(g.black_player, r.black_player) AS black_player, \
             COALESCE(g.owner, r.owner) AS owner, \
             CASE WHEN ?4 THEN (SELECT e.events FROM game_events e \
                                WHERE e.game_id = f.game_id AND e.version = f.version) END AS log, \
             (SELECT value FROM settings WHERE name = ?5) AS trimmed \
             FROM feed f LEFT JOIN games g ON g.game_id = f.game_id \
             LEFT JOIN removed_matches r ON r.game_id = f.game_id \
             WHERE f.seq > ?1 AND (f.kinds & ?2) <> 0 ORDER BY f.seq LIMIT ?3",
        )
        .bind(after.seq.min(i64::MAX as u64) as i64)
        .bind(i64::from(kinds))
        .bind(i64::from(limit))
        .bind(with_log)
        .bind(crate::FEED_TRIMMED)
        .fetch_all(&self.readers)
        .await?;
        rows.iter()
            .map(|row| {
                let seq: i64 = column(row, "seq", "a feed row")?;
                feed_row(
                    row,
                    FeedPosition {
                        tx: 0,
                        seq: seq.max(0) as u64,
                    },
                )
            })
            .collect()
    }

    async fn feed_bounds(&self) -> Result<FeedBounds, StoreError> {
        let head: Option<i64> = sqlx::query_scalar("SELECT max(seq) FROM feed")
            .fetch_one(&self.readers)
            .await?;
        let trimmed = self.setting(crate::FEED_TRIMMED).await?;
        let trimmed = trimmed
            .as_deref()
            .map(crate::decode_position)
            .transpose()?
            .unwrap_or_default();
        let head = FeedPosition {
            tx: 0,
            seq: head.unwrap_or(0).max(0) as u64,
        };
        Ok(FeedBounds {
            trimmed,
            head: head.max(trimmed),
        })
    }

    /// On a connection of its own, as the removal of matches; the newest
    /// place trimmed is recorded with the rows' removal.
    async fn trim_feed(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = before_ms.min(i64::MAX as u64) as i64;
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        // The write lock at once: a read first, then a write, in a
        // deferred transaction fails (SQLITE_BUSY_SNAPSHOT) whenever the
        // writer commits in between, which under load is always.
        let mut transaction = connection.begin_with("BEGIN IMMEDIATE").await?;
        // Rows in commit order up to the first young enough (found by
        // walking from the oldest: only what is removed is read).
        let kept: Option<i64> =
            sqlx::query_scalar("SELECT seq FROM feed WHERE at_ms >= ? ORDER BY seq LIMIT 1")
                .bind(before)
                .fetch_optional(&mut *transaction)
                .await?;
        let last: Option<i64> = match kept {
            Some(kept) => {
                sqlx::query_scalar("SELECT max(seq) FROM feed WHERE seq < ?")
                    .bind(kept)
                    .fetch_one(&mut *transaction)
                    .await?
            }
            None => {
                sqlx::query_scalar("SELECT max(seq) FROM feed")
                    .fetch_one(&mut *transaction)
                    .await?
            }
        };
        // Not past what a webhook endpoint active within the window has
        // yet to stage.
        let held: Option<i64> =
            sqlx::query_scalar("SELECT min(after_seq) FROM webhook_endpoints WHERE active_ms >= ?")
                .bind(before)
                .fetch_one(&mut *transaction)
                .await?;
        let last = match (last, held) {
            (Some(last), Some(held)) => Some(last.min(held)).filter(|&l| l > 0),
            (last, _) => last,
        };
        let Some(last) = last else {
            transaction.rollback().await?;
            return Ok(0);
        };
        let removed = sqlx::query("DELETE FROM feed WHERE seq <= ?")
            .bind(last)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
        if removed == 0 {
            // Held back to rows trimmed already: the place stays.
            transaction.rollback().await?;
            return Ok(0);
        }
        // A removed match's words go with its removal's row (its last).
        sqlx::query("DELETE FROM removed_matches WHERE removal_seq <= ?")
            .bind(last)
            .execute(&mut *transaction)
            .await?;
        let trimmed = crate::encode_position(FeedPosition {
            tx: 0,
            seq: last.max(0) as u64,
        });
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES (?, ?) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(crate::FEED_TRIMMED)
        .bind(trimmed)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        connection.close().await?;
        Ok(removed)
    }

    async fn webhook_place(
        &self,
        endpoint: &str,
        start: FeedPosition,
        now_ms: u64,
    ) -> Result<FeedPosition, StoreError> {
        self.webhook_place_sqlite(endpoint, start, now_ms).await
    }

    async fn stage_deliveries(
        &self,
        endpoint: &str,
        from: FeedPosition,
        to: FeedPosition,
        deliveries: &[crate::NewDelivery],
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.stage_deliveries_sqlite(endpoint, from, to, deliveries, now_ms)
            .await
    }

    async fn claim_deliveries(
        &self,
        endpoint: &str,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<crate::Delivery>, StoreError> {
        self.claim_deliveries_sqlite(endpoint, now_ms, lease_until_ms, limit)
            .await
    }

    async fn settle_deliveries(
        &self,
        endpoint: &str,
        settled: &[crate::Settlement],
    ) -> Result<(), StoreError> {
        self.settle_deliveries_sqlite(endpoint, settled).await
    }

    async fn delivery_counts(
        &self,
        endpoint: &str,
        settled: bool,
    ) -> Result<crate::DeliveryCounts, StoreError> {
        self.delivery_counts_sqlite(endpoint, settled).await
    }

    async fn rewrite_state(
        &self,
        game_id: &str,
        version: u64,
        state: &str,
    ) -> Result<bool, StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let replaced = sqlx::query("UPDATE games SET state = ? WHERE game_id = ? AND version = ?")
            .bind(state)
            .bind(game_id)
            .bind(version.min(i64::MAX as u64) as i64)
            .execute(&mut connection)
            .await?
            .rows_affected();
        connection.close().await?;
        Ok(replaced == 1)
    }

    /// `VACUUM` writes the database anew without free pages (where rows
    /// replaced may linger), then the log is emptied and truncated.
    async fn compact(&self) -> Result<(), StoreError> {
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut connection)
            .await?;
        sqlx::query("VACUUM").execute(&mut connection).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut connection)
            .await?;
        connection.close().await?;
        Ok(())
    }

    async fn retire_webhook_endpoints(
        &self,
        keep: &[String],
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        self.retire_webhook_endpoints_sqlite(keep, now_ms).await
    }

    async fn list_deliveries(
        &self,
        query: &crate::DeliveryQuery,
    ) -> Result<Vec<crate::Delivery>, StoreError> {
        self.list_deliveries_sqlite(query).await
    }

    async fn forget_deliveries(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.forget_deliveries_sqlite(before_ms).await
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
mod tests;
