//! One PostgreSQL database shared by several server processes (replicas).
//!
//! Every write is one SQL statement (a compare-and-set `UPDATE` with the
//! event log's and the request log's `INSERT`s as data-modifying CTEs),
//! so it commits whole or not at all, in one round trip, and PostgreSQL
//! serialises the writers of one game on its row: of two replicas
//! writing the same version, the second finds the version moved on and
//! is refused with [`StoreError::Conflict`]. PostgreSQL groups the
//! commits of concurrent connections into shared WAL flushes itself.
//!
//! After each commit the store sends a notice (`NOTIFY`) that every
//! replica hears (see [`GameStore::changes`]). The notices go out in
//! batches, in transactions of their own: a `NOTIFY` inside the commit
//! would take PostgreSQL's global notify lock across the commit's WAL
//! flush and serialise every commit of the database (measured: a third
//! of the throughput). A notice can therefore be lost: while the
//! listening connection is down (the store then says [`Change::Resync`]
//! once it listens again), or when a replica dies between a commit and its
//! notice; those who follow games also read their versions again now and
//! then.
//!
//! Whether the database takes writes is checked by a small write of the
//! store's own every [`PROBE_INTERVAL`], so a database that goes down is
//! noticed with no traffic, and one that comes back is noticed by itself.

use std::time::{Duration, SystemTime};

use sqlx::Connection;
use sqlx::Postgres;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions};
use tokio::sync::{broadcast, mpsc, watch};

use crate::rows::{
    AnswerColumns, column, game_record, log_entries, request_record, stored_version,
};
use crate::{Applied, Change, GameRecord, GameStore, LogEntry, RequestRecord, StoreError};

mod webhooks;

/// The channel commits are announced on; the payload is
/// `"<game id> <version>"`.
const CHANNEL: &str = "backgammon_game_versions";

/// Connections per server process.
const MAX_CONNECTIONS: u32 = 16;

/// How long a call waits for a connection before the database counts as
/// unreachable (a call must not hang while PostgreSQL restarts).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How often the store checks that the database takes writes.
const PROBE_INTERVAL: Duration = Duration::from_millis(500);

/// How long one probe may take before it counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long the database may run one statement (`statement_timeout`), or
/// wait for a lock (`lock_timeout`): past it, the statement fails and
/// nothing of it is stored.
const STATEMENT_TIMEOUT: &str = "10s";
const LOCK_TIMEOUT: &str = "5s";

/// How long a call waits for the database's answer, whatever happens to
/// the connection (a half-open one never answers): past it, a read fails
/// and a write's outcome is unknown.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the listener waits before connecting again.
const RELISTEN_PAUSE: Duration = Duration::from_millis(200);

/// Notices a slow follower may fall behind by before it must resync.
const CHANGES_BUFFER: usize = 4096;

/// Notices waiting to be sent; beyond, a notice is dropped (and the
/// followers' periodic reading catches up).
const NOTICES_WAITING: usize = 65_536;

/// The most notices sent in one statement.
const NOTICES_BATCH: usize = 1024;

/// Request ids forgotten per statement, so no statement runs long.
const FORGET_BATCH: i64 = 1000;

/// The statement forgetting [`FORGET_BATCH`] old action ids (`$1`: the
/// time before which, `$2`: the batch), NewGame's scope written out for
/// the partial index (checked against `NEW_GAME_SCOPE` by a test).
const FORGET_OLD_ACTION_IDS: &str = "DELETE FROM requests WHERE ctid IN \
     (SELECT ctid FROM requests WHERE created_at < $1 AND scope <> 'new-game' \
      ORDER BY created_at LIMIT $2)";

/// Games in a PostgreSQL database, shared with other server processes.
#[derive(Clone, Debug)]
pub struct PgStore {
    pool: PgPool,
    writable: watch::Receiver<bool>,
    writable_tx: std::sync::Arc<watch::Sender<bool>>,
    changes: broadcast::Sender<Change>,
    /// Commits to announce: (game id, version).
    notices: mpsc::Sender<(String, u64)>,
    /// Ends the probe and the listener when the store closes.
    stop: std::sync::Arc<watch::Sender<bool>>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://...`), brings its
    /// schema up to date (several servers starting at once take turns:
    /// the migrator holds an advisory lock), and starts listening for
    /// commits.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        let options: PgConnectOptions = url.parse()?;
        let options = options.application_name("backgammond").options([
            ("statement_timeout", STATEMENT_TIMEOUT),
            ("lock_timeout", LOCK_TIMEOUT),
        ]);
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(read_failure)?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        let (writable_tx, writable) = watch::channel(true);
        let writable_tx = std::sync::Arc::new(writable_tx);
        let (changes, _) = broadcast::channel(CHANGES_BUFFER);
        let (stop, stopped) = watch::channel(false);
        // Listening before the store is handed out: no commit made after
        // `connect` returns can go unannounced.
        let listener = listen(&pool).await.map_err(read_failure)?;
        tokio::spawn(probe_loop(options, writable_tx.clone(), stopped.clone()));
        tokio::spawn(listen_loop(
            listener,
            pool.clone(),
            changes.clone(),
            stopped,
        ));
        let (notices, waiting) = mpsc::channel(NOTICES_WAITING);
        tokio::spawn(notify_loop(pool.clone(), waiting));
        Ok(PgStore {
            pool,
            writable,
            writable_tx,
            changes,
            notices,
            stop: std::sync::Arc::new(stop),
        })
    }

    /// A connection for a write. Failing to get one (none free in time,
    /// or a new one refused) means nothing was sent: [`Applied::No`].
    async fn connection(&self) -> Result<PoolConnection<Postgres>, StoreError> {
        self.pool.acquire().await.map_err(|e| {
            tracing::error!(error = %e, "no database connection for a write");
            self.note(&e);
            StoreError::WriteFailed {
                message: e.to_string(),
                applied: Applied::No,
            }
        })
    }

    /// A lost connection says the database is away: unwritable until the
    /// probe writes again. Anything else (a statement refused, all
    /// connections busy) is left to the probe to judge, so that one bad
    /// call cannot take a healthy replica out of service.
    fn note(&self, e: &sqlx::Error) {
        if is_connection_lost(e) {
            set(&self.writable_tx, false);
        }
    }

    /// A write that failed, as the store reports it.
    fn write_failed(&self, e: CallError) -> StoreError {
        let e = match e {
            CallError::Sqlx(e) => {
                self.note(&e);
                write_failure(e)
            }
            CallError::TimedOut => StoreError::WriteFailed {
                message: format!("no answer from the database within {CALL_TIMEOUT:?}"),
                applied: Applied::Unknown,
            },
        };
        if let StoreError::WriteFailed { message, applied } = &e {
            tracing::error!(error = %message, %applied, "database write failed");
        }
        e
    }

    /// A read that failed, as the store reports it.
    fn read_failed(&self, e: CallError) -> StoreError {
        match e {
            CallError::Sqlx(e) => {
                self.note(&e);
                read_failure(e)
            }
            CallError::TimedOut => StoreError::Unreachable(format!(
                "no answer from the database within {CALL_TIMEOUT:?}"
            )),
        }
    }
}

/// Why a call to the database failed.
enum CallError {
    Sqlx(sqlx::Error),
    /// No answer within [`CALL_TIMEOUT`].
    TimedOut,
}

/// A call to the database, given at most [`CALL_TIMEOUT`].
trait Deadline<T>: Future<Output = Result<T, sqlx::Error>> + Sized {
    async fn by_deadline(self) -> Result<T, CallError> {
        match tokio::time::timeout(CALL_TIMEOUT, self).await {
            Ok(answer) => answer.map_err(CallError::Sqlx),
            Err(_) => Err(CallError::TimedOut),
        }
    }
}

impl<T, F: Future<Output = Result<T, sqlx::Error>>> Deadline<T> for F {}

fn set(writable: &watch::Sender<bool>, value: bool) {
    writable.send_if_modified(|now| {
        let changed = *now != value;
        *now = value;
        changed
    });
}

/// Whether an error means the connection to the database was lost or
/// refused (the server down, restarting, or out of reach).
fn is_connection_lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

/// Whether an error means the database could not be reached or the
/// connection to it was lost (as opposed to a statement it refused).
fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // Class 08: connection exception; 57: operator intervention (the
        // server shutting down or restarting); 53: insufficient resources
        // (too many connections, a full disk).
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57") || c.starts_with("53")),
        _ => false,
    }
}

/// A failed read as the store reports it.
fn read_failure(e: sqlx::Error) -> StoreError {
    if is_unreachable(&e) {
        return StoreError::Unreachable(e.to_string());
    }
    StoreError::Database(e)
}

/// A failed write as the store reports it, with whether it may be stored.
///
/// Every write is a single statement in its own transaction, so:
/// - an error the server reported (it refused the statement, or it shut
///   down while running it) means the transaction did not commit:
///   [`Applied::No`] (a duplicate id is [`StoreError::Duplicate`]);
/// - no connection to be had means the statement was never sent:
///   [`Applied::No`] (writes take their connection first, see
///   `PgStore::connection`, so a failure to connect is told apart);
/// - a connection lost while waiting for the answer (an I/O error) may
///   have lost the answer to a commit that happened: [`Applied::Unknown`].
fn write_failure(e: sqlx::Error) -> StoreError {
    let applied = match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => return StoreError::Duplicate,
        sqlx::Error::Database(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => {
            Applied::No
        }
        _ => Applied::Unknown,
    };
    StoreError::WriteFailed {
        message: e.to_string(),
        applied,
    }
}

/// Every [`PROBE_INTERVAL`], a small write on a connection of its own (not
/// the pool's, so busy calls cannot delay it): the store is writable while
/// it commits, unwritable while it does not.
async fn probe_loop(
    options: PgConnectOptions,
    writable: std::sync::Arc<watch::Sender<bool>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connection: Option<PgConnection> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(PROBE_INTERVAL) => {}
            _ = stop.changed() => return,
        }
        let probe = async {
            if connection.is_none() {
                connection = Some(PgConnection::connect_with(&options).await?);
            }
            let Some(probing) = connection.as_mut() else {
                return Err(sqlx::Error::PoolClosed);
            };
            sqlx::query(
                "INSERT INTO store_probe (id, writes) VALUES (1, 1) \
                 ON CONFLICT (id) DO UPDATE SET writes = store_probe.writes + 1",
            )
            .execute(probing)
            .await
        };
        let ok = match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
            Ok(Ok(_)) => true,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "probe: the database refuses writes");
                false
            }
            Err(_) => {
                tracing::debug!("probe: the database did not answer in time");
                false
            }
        };
        if !ok {
            // A new connection next time: this one may be broken.
            connection = None;
        }
        if ok != *writable.borrow() {
            if ok {
                tracing::info!("the database takes writes again");
            } else {
                tracing::error!("the database does not take writes");
            }
        }
        set(&writable, ok);
    }
}

/// Sends the notices of commits, as many as are waiting in one
/// statement, until the store is dropped. A batch that fails is lost (the
/// database is down: every listener resyncs when it is back).
async fn notify_loop(pool: PgPool, mut waiting: mpsc::Receiver<(String, u64)>) {
    let mut batch = Vec::with_capacity(NOTICES_BATCH);
    while waiting.recv_many(&mut batch, NOTICES_BATCH).await > 0 {
        let payloads: Vec<String> = batch
            .drain(..)
            .map(|(game_id, version)| format!("{game_id} {version}"))
            .collect();
        let sent = sqlx::query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload")
            .bind(CHANNEL)
            .bind(&payloads)
            .execute(&pool)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, notices = payloads.len(), "commit notices lost");
        }
    }
}

/// Passes on the commit notices `listener` hears; after a lost
/// connection, listens again and says [`Change::Resync`].
async fn listen_loop(
    listener: PgListener,
    pool: PgPool,
    changes: broadcast::Sender<Change>,
    mut stop: watch::Receiver<bool>,
) {
    let mut listening = Some(listener);
    loop {
        let mut listener = match listening.take() {
            Some(listener) => listener,
            None => match listen(&pool).await {
                Ok(listener) => {
                    tracing::info!("listening for commits again");
                    let _ = changes.send(Change::Resync);
                    listener
                }
                Err(e) => {
                    tracing::debug!(error = %e, "listening for commits failed; trying again");
                    tokio::select! {
                        _ = tokio::time::sleep(RELISTEN_PAUSE) => continue,
                        _ = stop.changed() => return,
                    }
                }
            },
        };
        loop {
            let notice = tokio::select! {
                notice = listener.try_recv() => notice,
                _ = stop.changed() => return,
            };
            match notice {
                Ok(Some(notice)) => {
                    if let Some(change) = parse_notice(notice.payload()) {
                        let _ = changes.send(change);
                    }
                }
                Ok(None) | Err(_) => {
                    tracing::warn!("the connection listening for commits was lost");
                    break;
                }
            }
        }
    }
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

fn parse_notice(payload: &str) -> Option<Change> {
    let (game_id, version) = payload.split_once(' ')?;
    Some(Change::Game {
        game_id: game_id.to_string(),
        version: version.parse().ok()?,
    })
}

fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(i64::MAX as u64) as i64)
}

/// A game's deadline as PostgreSQL keeps it.
fn deadline_param(game: &GameRecord) -> Option<i64> {
    game.deadline_ms.map(|ms| ms.min(i64::MAX as u64) as i64)
}

fn version_param(version: u64) -> Result<i64, StoreError> {
    i64::try_from(version)
        .map_err(|_| StoreError::Corrupt(format!("version {version} is too large")))
}

type PgQuery<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

/// Binds an action's log entry (its version and text) and its request
/// id's seven columns (NULL when there is none): the last nine parameters
/// of [`CREATE`] and [`COMMIT`]. An answer that cannot be stored is
/// refused here, before anything is sent.
fn bind_log<'q>(
    query: PgQuery<'q>,
    entry: &'q LogEntry,
    request: Option<&'q RequestRecord>,
) -> Result<PgQuery<'q>, StoreError> {
    let answer = request.map(|r| AnswerColumns::of(&r.answer)).transpose()?;
    Ok(query
        .bind(version_param(entry.version)?)
        .bind(entry.text.as_str())
        .bind(request.map(|r| r.scope.as_str()))
        .bind(request.map(|r| r.request_id.as_str()))
        .bind(request.map(|r| r.fingerprint.as_slice()))
        .bind(answer.and_then(|a| a.version))
        .bind(answer.and_then(|a| a.game_id))
        .bind(answer.and_then(|a| a.response))
        .bind(unix_seconds(SystemTime::now())))
}

/// The feed row's time, kinds and detail.
fn bind_feed<'q>(query: PgQuery<'q>, feed: &'q crate::Feed) -> PgQuery<'q> {
    query
        .bind(unix_millis(SystemTime::now()))
        .bind(i32::try_from(feed.kinds).unwrap_or(i32::MAX))
        .bind((!feed.detail.is_empty()).then_some(feed.detail.as_slice()))
}

/// Milliseconds since the Unix epoch.
fn unix_millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(i64::MAX as u128) as i64)
}

/// The new game, its first log entry and its request id, and its feed
/// row, in one statement.
const CREATE: &str = "\
WITH created AS (
    INSERT INTO games (game_id, variant, variant_version, options, version, state,
                       white_token_hash, black_token_hash, start_board, finished_at, deadline_at,
                       labels, white_player, black_player, owner, to_act, abandoned,
                       created_us, updated_us)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $19 THEN now() END, $20,
            $21, $22, $23, $24, $25, $26, $27, $28)
    RETURNING game_id
), logged AS (
    INSERT INTO game_events (game_id, version, events)
    SELECT game_id, $10, $11 FROM created
), answered AS (
    INSERT INTO requests (scope, request_id, fingerprint, version, game_id, response, created_at)
    SELECT $12, $13, $14, $15, $16, $17, $18 FROM created WHERE $12::text IS NOT NULL
), fed AS (
    INSERT INTO feed (game_id, version, at_ms, kinds, detail)
    SELECT game_id, $10, $29, $30, $31 FROM created
)
SELECT 1 AS stored FROM created";

/// The compare-and-set of the snapshot, the action's log entry and its
/// request id, in one statement: nothing is written unless the game is
/// still at `$4`.
const COMMIT: &str = "\
WITH updated AS (
    UPDATE games SET version = $1, state = $2, updated_at = now(),
                     finished_at = CASE WHEN $14 THEN now() END, deadline_at = $15,
                     to_act = $16, abandoned = $17, updated_us = $18
    WHERE game_id = $3 AND version = $4
    RETURNING game_id
), logged AS (
    INSERT INTO game_events (game_id, version, events)
    SELECT game_id, $5, $6 FROM updated
), answered AS (
    INSERT INTO requests (scope, request_id, fingerprint, version, game_id, response, created_at)
    SELECT $7, $8, $9, $10, $11, $12, $13 FROM updated WHERE $7::text IS NOT NULL
), fed AS (
    INSERT INTO feed (game_id, version, at_ms, kinds, detail)
    SELECT game_id, $5, $19, $20, $21 FROM updated
)
SELECT 1 AS stored FROM updated";

impl GameStore for PgStore {
    fn shared(&self) -> bool {
        true
    }

    fn changes(&self) -> Option<broadcast::Receiver<Change>> {
        Some(self.changes.subscribe())
    }

    fn writable(&self) -> watch::Receiver<bool> {
        self.writable.clone()
    }

    /// Sends the commit notices still waiting (for up to a second: the
    /// other replicas' watchers hear of this one's last commits at once),
    /// then closes the connections once their calls are done.
    async fn close(&self) {
        let _ = self.stop.send(true);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while self.notices.capacity() < NOTICES_WAITING && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.pool.close().await;
    }

    async fn version(&self, game_id: &str) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT version FROM games WHERE game_id = $1")
            .bind(game_id)
            .fetch_optional(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        row.map(|row| stored_version(&row, &format!("game {game_id}")))
            .transpose()
    }

    async fn create(
        &self,
        game: &GameRecord,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        let query = sqlx::query(CREATE)
            .bind(&game.game_id)
            .bind(&game.variant)
            .bind(&game.variant_version)
            .bind(&game.options)
            .bind(version_param(game.version)?)
            .bind(&game.state)
            .bind(&game.token_hashes[0])
            .bind(&game.token_hashes[1])
            .bind(&game.start_board);
        let query = bind_log(query, entry, request)?
            .bind(game.finished)
            .bind(deadline_param(game))
            .bind(game.index.labels.as_str())
            .bind(game.index.players[0].as_str())
            .bind(game.index.players[1].as_str())
            .bind(game.index.owner.as_str())
            .bind(i32::from(game.index.to_act))
            .bind(game.index.abandoned)
            .bind(game.index.created_us)
            .bind(game.index.updated_us);
        let query = bind_feed(query, &entry.feed);
        let mut connection = self.connection().await?;
        query
            .fetch_optional(&mut *connection)
            .by_deadline()
            .await
            .map_err(|e| self.write_failed(e))?;
        Ok(())
    }

    async fn load(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board, \
             (CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END)::int8 AS finished, deadline_at, \
             labels, white_player, black_player, owner, to_act::int8 AS to_act, \
             (CASE WHEN abandoned THEN 1 ELSE 0 END)::int8 AS abandoned, created_us, updated_us \
             FROM games WHERE game_id = $1",
        )
        .bind(game_id)
        .fetch_optional(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        row.map(|row| game_record(&row, game_id)).transpose()
    }

    async fn commit(
        &self,
        game: &GameRecord,
        expected_version: u64,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        let query = sqlx::query(COMMIT)
            .bind(version_param(game.version)?)
            .bind(&game.state)
            .bind(&game.game_id)
            .bind(version_param(expected_version)?);
        let query = bind_log(query, entry, request)?
            .bind(game.finished)
            .bind(deadline_param(game))
            .bind(i32::from(game.index.to_act))
            .bind(game.index.abandoned)
            .bind(game.index.updated_us);
        let query = bind_feed(query, &entry.feed);
        let mut connection = self.connection().await?;
        let start = std::time::Instant::now();
        let stored = query
            .fetch_optional(&mut *connection)
            .by_deadline()
            .await
            .map_err(|e| self.write_failed(e))?;
        drop(connection);
        if stored.is_some() {
            crate::commit_observed(1, start.elapsed());
            if self
                .notices
                .try_send((game.game_id.clone(), game.version))
                .is_err()
            {
                tracing::debug!("a commit notice was dropped (too many waiting)");
            }
            return Ok(());
        }
        // Nothing written: the game is at another version, or gone.
        match self.version(&game.game_id).await? {
            Some(current) => Err(StoreError::Conflict { current }),
            None => Err(StoreError::NotFound),
        }
    }

    async fn log_after(&self, game_id: &str, version: u64) -> Result<Vec<LogEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT version, events FROM game_events WHERE game_id = $1 AND version > $2 ORDER BY version",
        )
        .bind(game_id)
        .bind(version.min(i64::MAX as u64) as i64)
        .fetch_all(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        log_entries(&rows, game_id)
    }

    async fn request(
        &self,
        scope: &str,
        request_id: &str,
    ) -> Result<Option<RequestRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT fingerprint, version, game_id, response FROM requests \
             WHERE scope = $1 AND request_id = $2",
        )
        .bind(scope)
        .bind(request_id)
        .fetch_optional(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        row.map(|row| request_record(&row, scope, request_id))
            .transpose()
    }

    async fn holds_games(&self) -> Result<bool, StoreError> {
        let any: Option<i32> = sqlx::query_scalar("SELECT 1 FROM games LIMIT 1")
            .fetch_optional(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        Ok(any.is_some())
    }

    async fn setting(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = sqlx::query("SELECT value FROM settings WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        row.map(|row| column(&row, "value", &format!("setting {name}")))
            .transpose()
    }

    async fn set_setting(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(name)
        .bind(value)
        .execute(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.write_failed(e))?;
        Ok(())
    }

    async fn claim_setting(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, StoreError> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(value)
        .execute(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.write_failed(e))?;
        self.setting(name)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("setting {name} vanished")))
    }

    /// Deletes [`FORGET_BATCH`] old action ids a statement, found by the
    /// index on the action ids' `created_at` (migration 0002), oldest
    /// first. The scope is written into the statement, not bound: only a
    /// condition the planner sees can use a partial index.
    async fn forget_requests(&self, before: SystemTime) -> Result<u64, StoreError> {
        let before = unix_seconds(before);
        let mut forgotten = 0;
        loop {
            let deleted = sqlx::query(FORGET_OLD_ACTION_IDS)
                .bind(before)
                .bind(FORGET_BATCH)
                .execute(&self.pool)
                .by_deadline()
                .await
                .map_err(|e| self.read_failed(e))?
                .rows_affected();
            forgotten += deleted;
            if deleted < FORGET_BATCH as u64 {
                return Ok(forgotten);
            }
        }
    }

    async fn finished_before(
        &self,
        before: SystemTime,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        let before = unix_seconds(before) as f64;
        sqlx::query_scalar(
            "SELECT game_id FROM games WHERE finished_at IS NOT NULL \
             AND finished_at < to_timestamp($1) ORDER BY finished_at LIMIT $2",
        )
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))
    }

    async fn due_before(&self, now_ms: u64, limit: u32) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT game_id FROM games WHERE deadline_at IS NOT NULL AND deadline_at <= $1 \
             ORDER BY deadline_at LIMIT $2",
        )
        .bind(now_ms.min(i64::MAX as u64) as i64)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))
    }

    async fn remove_finished(&self, game_id: &str, feed: &crate::Feed) -> Result<bool, StoreError> {
        let removed = sqlx::query(REMOVE_FINISHED)
            .bind(game_id)
            .bind(crate::action_scope(game_id, "white"))
            .bind(crate::action_scope(game_id, "black"))
            .bind(unix_millis(SystemTime::now()))
            .bind(i32::try_from(feed.kinds).unwrap_or(i32::MAX))
            .bind((!feed.detail.is_empty()).then_some(feed.detail.as_slice()))
            .fetch_optional(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.write_failed(e))?;
        Ok(removed.is_some())
    }

    async fn list_matches(
        &self,
        query: &crate::MatchQuery,
    ) -> Result<Vec<crate::MatchRow>, StoreError> {
        let statement = crate::list::statement(query, crate::list::Dialect::Postgres);
        let mut q = sqlx::query(sqlx::AssertSqlSafe(statement.sql));
        for value in statement.values {
            q = match value {
                crate::list::Value::Int(n) => q.bind(n),
                crate::list::Value::Text(t) => q.bind(t),
            };
        }
        let rows = q
            .fetch_all(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        rows.iter().map(crate::rows::match_row).collect()
    }

    async fn feed_after(
        &self,
        after: crate::FeedPosition,
        kinds: u32,
        with_log: bool,
        limit: u32,
    ) -> Result<Vec<crate::FeedRow>, StoreError> {
        let rows = sqlx::query(FEED_AFTER)
            .bind(after.tx.to_string())
            .bind(after.seq.min(i64::MAX as u64) as i64)
            .bind(i32::try_from(kinds).unwrap_or(i32::MAX))
            .bind(i64::from(limit))
            .bind(with_log)
            .bind(crate::FEED_TRIMMED)
            .fetch_all(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.read_failed(e))?;
        rows.iter()
            .map(|row| {
                let position = feed_position(row)?;
                crate::rows::feed_row(row, position)
            })
            .collect()
    }

    /// The head: the newest row of a transaction older than every one in
    /// flight (a reader at it misses nothing committed later).
    async fn feed_bounds(&self) -> Result<crate::FeedBounds, StoreError> {
        let head = sqlx::query(
            "SELECT f.tx::text AS tx, f.seq FROM feed f \
             WHERE f.tx < pg_snapshot_xmin(pg_current_snapshot()) \
             ORDER BY f.tx DESC, f.seq DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .by_deadline()
        .await
        .map_err(|e| self.read_failed(e))?;
        let head = head.as_ref().map(feed_position).transpose()?;
        let trimmed = self.setting(crate::FEED_TRIMMED).await?;
        let trimmed = trimmed
            .as_deref()
            .map(crate::decode_position)
            .transpose()?
            .unwrap_or_default();
        Ok(crate::FeedBounds {
            trimmed,
            head: head.unwrap_or_default().max(trimmed),
        })
    }

    /// The rows before a time, up to the newest whose place every reader
    /// has passed the same way; the newest place trimmed is recorded in
    /// the same transaction (the highest wins, whichever replica trims).
    async fn trim_feed(&self, before_ms: u64) -> Result<u64, StoreError> {
        let trimmed = sqlx::query(TRIM_FEED)
            .bind(before_ms.min(i64::MAX as u64) as i64)
            .bind(crate::FEED_TRIMMED)
            .fetch_optional(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.write_failed(e))?;
        match trimmed {
            Some(row) => {
                let n: i64 = crate::rows::column(&row, "removed", "the feed's trim")?;
                Ok(n.max(0) as u64)
            }
            None => Ok(0),
        }
    }

    async fn webhook_place(
        &self,
        endpoint: &str,
        start: crate::FeedPosition,
        now_ms: u64,
    ) -> Result<crate::FeedPosition, StoreError> {
        self.webhook_place_pg(endpoint, start, now_ms).await
    }

    async fn stage_deliveries(
        &self,
        endpoint: &str,
        from: crate::FeedPosition,
        to: crate::FeedPosition,
        deliveries: &[crate::NewDelivery],
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.stage_deliveries_pg(endpoint, from, to, deliveries, now_ms)
            .await
    }

    async fn claim_deliveries(
        &self,
        endpoint: &str,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<crate::Delivery>, StoreError> {
        self.claim_deliveries_pg(endpoint, now_ms, lease_until_ms, limit)
            .await
    }

    async fn settle_deliveries(
        &self,
        endpoint: &str,
        settled: &[crate::Settlement],
    ) -> Result<(), StoreError> {
        self.settle_deliveries_pg(endpoint, settled).await
    }

    async fn delivery_counts(
        &self,
        endpoint: &str,
        settled: bool,
    ) -> Result<crate::DeliveryCounts, StoreError> {
        self.delivery_counts_pg(endpoint, settled).await
    }

    async fn rewrite_state(
        &self,
        game_id: &str,
        version: u64,
        state: &str,
    ) -> Result<bool, StoreError> {
        let replaced =
            sqlx::query("UPDATE games SET state = $1 WHERE game_id = $2 AND version = $3")
                .bind(state)
                .bind(game_id)
                .bind(version_param(version)?)
                .execute(&self.pool)
                .by_deadline()
                .await
                .map_err(|e| self.write_failed(e))?
                .rows_affected();
        Ok(replaced == 1)
    }

    /// Old row versions stay in PostgreSQL's pages until vacuumed (a dump
    /// never holds them; the data files may).
    async fn compact(&self) -> Result<(), StoreError> {
        sqlx::query("VACUUM games")
            .execute(&self.pool)
            .by_deadline()
            .await
            .map_err(|e| self.write_failed(e))?;
        Ok(())
    }

    async fn retire_webhook_endpoints(
        &self,
        keep: &[String],
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        self.retire_webhook_endpoints_pg(keep, now_ms).await
    }

    async fn list_deliveries(
        &self,
        query: &crate::DeliveryQuery,
    ) -> Result<Vec<crate::Delivery>, StoreError> {
        self.list_deliveries_pg(query).await
    }

    async fn forget_deliveries(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.forget_deliveries_pg(before_ms).await
    }
}

/// The place of a feed row: its transaction id (as text: xid8) and seq.
fn feed_position(row: &sqlx::postgres::PgRow) -> Result<crate::FeedPosition, StoreError> {
    let tx: String = crate::rows::column(row, "tx", "a feed row")?;
    let seq: i64 = crate::rows::column(row, "seq", "a feed row")?;
    Ok(crate::FeedPosition {
        tx: tx
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("a feed row's tx {tx:?}")))?,
        seq: seq.max(0) as u64,
    })
}

/// The feed rows before the first committed at `$1` (ms) or later, in
/// commit order, among those every reader may read and every webhook
/// endpoint active since `$1` has staged, removed (walked from
/// the oldest: no index by time, which every action would pay for); the
/// newest place removed recorded in `settings` as 16 bytes (tx, seq
/// big-endian), unless a higher one is there.
const TRIM_FEED: &str = "\
WITH kept AS (
    SELECT tx, seq FROM feed WHERE at_ms >= $1 ORDER BY tx, seq LIMIT 1
), held AS (
    SELECT after_tx AS tx, after_seq AS seq FROM webhook_endpoints
    WHERE active_ms >= $1 ORDER BY after_tx, after_seq LIMIT 1
), last AS (
    SELECT f.tx, f.seq FROM feed f
    WHERE f.tx < pg_snapshot_xmin(pg_current_snapshot())
      AND (NOT EXISTS (SELECT 1 FROM kept) OR (f.tx, f.seq) < (SELECT tx, seq FROM kept))
      AND (NOT EXISTS (SELECT 1 FROM held) OR (f.tx, f.seq) <= (SELECT tx, seq FROM held))
    ORDER BY f.tx DESC, f.seq DESC LIMIT 1
), removed AS (
    DELETE FROM feed f USING last WHERE (f.tx, f.seq) <= (last.tx, last.seq)
    RETURNING 1
), words AS (
    DELETE FROM removed_matches r USING last
    WHERE (r.removal_tx, r.removal_seq) <= (last.tx, last.seq)
), recorded AS (
    INSERT INTO settings (name, value)
    SELECT $2, int8send(((last.tx::text)::numeric)::int8) || int8send(last.seq) FROM last
    ON CONFLICT (name) DO UPDATE SET value = excluded.value
    WHERE settings.value < excluded.value
)
SELECT (SELECT count(*) FROM removed) AS removed FROM last";

/// The feed rows after a place, of transactions older than every one
/// still in flight (none can commit before them any more), with their
/// match's words.
const FEED_AFTER: &str = "\
SELECT f.tx::text AS tx, f.seq, f.game_id, f.version, f.at_ms, f.kinds::int8 AS kinds, f.detail,
       COALESCE(g.variant, r.variant) AS variant, COALESCE(g.labels, r.labels) AS labels,
       COALESCE(g.white_player, r.white_player) AS white_player,
       COALESCE(g.black_player, r.black_player) AS black_player,
       COALESCE(g.owner, r.owner) AS owner,
       CASE WHEN $5 THEN (SELECT e.events FROM game_events e
                          WHERE e.game_id = f.game_id AND e.version = f.version) END AS log,
       (SELECT value FROM settings WHERE name = $6) AS trimmed
FROM feed f LEFT JOIN games g ON g.game_id = f.game_id
LEFT JOIN removed_matches r ON r.game_id = f.game_id
WHERE (f.tx, f.seq) > ($1::text::xid8, $2)
  AND f.tx < pg_snapshot_xmin(pg_current_snapshot())
  AND (f.kinds & $3) <> 0
ORDER BY f.tx, f.seq LIMIT $4";

/// A match that has ended, removed with its log and request ids in one
/// statement (nothing when it runs or is gone). NewGame's row is found by
/// the game it created: a scan of NewGame's ids, once per match removed.
const REMOVE_FINISHED: &str = "\
WITH removed AS (
    DELETE FROM games WHERE game_id = $1 AND finished_at IS NOT NULL
    RETURNING game_id, version, variant, labels, white_player, black_player, owner
), fed AS (
    INSERT INTO feed (game_id, version, at_ms, kinds, detail)
    SELECT game_id, version, $4, $5, $6 FROM removed
    RETURNING game_id, tx, seq
), kept AS (
    INSERT INTO removed_matches (game_id, variant, labels, white_player, black_player, owner,
                                 removal_tx, removal_seq)
    SELECT r.game_id, r.variant, r.labels, r.white_player, r.black_player, r.owner, fed.tx, fed.seq
    FROM removed r JOIN fed ON fed.game_id = r.game_id
    ON CONFLICT (game_id) DO NOTHING
), log AS (
    DELETE FROM game_events WHERE game_id IN (SELECT game_id FROM removed)
), actions AS (
    DELETE FROM requests WHERE scope IN ($2, $3) AND EXISTS (SELECT 1 FROM removed)
), created AS (
    DELETE FROM requests WHERE scope = 'new-game' AND game_id IN (SELECT game_id FROM removed)
)
SELECT 1 AS removed FROM removed";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NEW_GAME_SCOPE;

    /// The forgetting keeps NewGame's ids: its statement names their scope.
    #[test]
    fn the_forgetting_statement_spares_new_games_scope() {
        assert!(FORGET_OLD_ACTION_IDS.contains(&format!("scope <> '{NEW_GAME_SCOPE}'")));
    }
}
