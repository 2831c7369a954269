//! The embedded default: one SQLite file, in WAL mode.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection, QueryBuilder, Row, Sqlite};
use tokio::sync::{mpsc, oneshot};

use crate::{EventRecord, GameRecord, GameStore, NEW_GAME_SCOPE, RequestRecord, StoreError};

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

/// The least time between two checkpoints.
const CHECKPOINT_PAUSE: Duration = Duration::from_millis(100);

/// Games in a SQLite file.
///
/// SQLite has one writer at a time, so one task owns the writing
/// connection. It takes every write waiting in its queue and applies them
/// in one transaction: one fsync for the group instead of one each (group
/// commit). If any write of a group fails (a version conflict), the group
/// is rolled back and its writes are applied one by one, so each caller
/// gets exactly its own result. Reads use other connections.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    writes: mpsc::Sender<Write>,
    readers: SqlitePool,
    /// For maintenance writes (forgetting old request ids), on connections
    /// of their own.
    options: SqliteConnectOptions,
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
        events: Vec<EventRecord>,
        request: Option<RequestRecord>,
    },
    Commit {
        game: GameRecord,
        expected_version: u64,
        events: Vec<EventRecord>,
        request: Option<RequestRecord>,
    },
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
        let mut writer = SqliteConnection::connect_with(
            &options
                .clone()
                .pragma("wal_autocheckpoint", WRITER_CHECKPOINT_PAGES.to_string()),
        )
        .await?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&mut writer)
            .await?;
        let checkpointer = SqliteConnection::connect_with(&options).await?;
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone().read_only(true))
            .await?;
        let (writes, queue) = mpsc::channel(1024);
        let (committed, commits) = mpsc::channel(1);
        tokio::spawn(write_loop(writer, queue, committed));
        tokio::spawn(checkpoint_loop(checkpointer, commits));
        Ok(SqliteStore {
            writes,
            readers,
            options,
        })
    }

    async fn write(&self, kind: WriteKind) -> Result<(), StoreError> {
        let (done, result) = oneshot::channel();
        self.writes
            .send(Write { kind, done })
            .await
            .map_err(|_| StoreError::Closed)?;
        result.await.map_err(|_| StoreError::Closed)?
    }
}

/// The writer: groups what is queued, commits, answers each caller, and
/// tells the checkpointer there is work.
async fn write_loop(
    mut connection: SqliteConnection,
    mut queue: mpsc::Receiver<Write>,
    committed: mpsc::Sender<()>,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        match apply_group(&mut connection, &group).await {
            Ok(()) => {
                for write in group.drain(..) {
                    let _ = write.done.send(Ok(()));
                }
            }
            Err(_) => {
                // Someone's write failed: apply each alone for its own answer.
                for write in group.drain(..) {
                    let result = apply_group(&mut connection, std::slice::from_ref(&write)).await;
                    let _ = write.done.send(result);
                }
            }
        }
        let _ = committed.try_send(());
    }
}

/// Copies committed pages from the write-ahead log into the database file
/// (a checkpoint) on a connection of its own, so that the writer, whose
/// commits every caller waits for, never does that copying itself. A
/// passive checkpoint runs beside the writer and readers without blocking
/// them; once it has copied the whole log, the next commit starts the log
/// over from its beginning. Ends when the writer does.
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
}

/// Applies writes in one transaction: all or nothing.
async fn apply_group(connection: &mut SqliteConnection, group: &[Write]) -> Result<(), StoreError> {
    if group.len() > 1 && distinct_games(group) {
        return apply_batched(connection, group).await;
    }
    let mut tx = connection.begin().await?;
    for write in group {
        apply_one(&mut tx, write).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// One write, statement by statement (its errors are precise).
async fn apply_one(tx: &mut SqliteConnection, write: &Write) -> Result<(), StoreError> {
    match &write.kind {
        WriteKind::Create {
            game,
            events,
            request,
        } => {
            insert_game(tx, game).await?;
            insert_events(tx, &game.game_id, events).await?;
            insert_request(tx, request.as_ref()).await?;
        }
        WriteKind::Commit {
            game,
            expected_version,
            events,
            request,
        } => {
            update_game(tx, game, *expected_version).await?;
            insert_events(tx, &game.game_id, events).await?;
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

/// The whole group in two round trips to sqlx's connection thread (each
/// statement would be one): the transaction and one statement per table
/// in a single call, then COMMIT once the compare-and-set is seen to have
/// matched every game. Any failure (a version conflict, a duplicate row)
/// rolls the group back; the caller then applies the writes one by one to
/// give each its own answer.
async fn apply_batched(
    connection: &mut SqliteConnection,
    group: &[Write],
) -> Result<(), StoreError> {
    let mut created = Vec::new();
    let mut updated = Vec::new();
    let mut events = Vec::new();
    let mut requests = Vec::new();
    for write in group {
        let (game, game_events, request) = match &write.kind {
            WriteKind::Create {
                game,
                events,
                request,
            } => {
                created.push(game);
                (game, events, request)
            }
            WriteKind::Commit {
                game,
                expected_version,
                events,
                request,
            } => {
                updated.push((game, *expected_version));
                (game, events, request)
            }
        };
        events.extend(action_events(&game.game_id, game_events)?);
        requests.extend(request.as_ref());
    }

    let mut batch = QueryBuilder::<Sqlite>::new("BEGIN IMMEDIATE; ");
    push_insert_games(&mut batch, &created);
    if !updated.is_empty() {
        // The compare-and-set for every game at once: a game whose stored
        // version is not the expected one is not updated, and is missing
        // from the rows returned.
        batch.push(
            "UPDATE games SET version = new.column3, state = new.column4, updated_at = CURRENT_TIMESTAMP FROM (",
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
    push_insert_events(&mut batch, &events);
    push_insert_requests(&mut batch, &requests);
    let outcome = match batch.build().fetch_all(&mut *connection).await {
        Ok(rows) if rows.len() == updated.len() => Ok(()),
        Ok(_) => Err(StoreError::Batch(
            "a game's version changed under the group (retried one by one)".into(),
        )),
        Err(e) => Err(duplicate(e)),
    };
    let end = if outcome.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = sqlx::query(end).execute(&mut *connection).await;
    match (outcome, ended) {
        (Ok(()), Ok(_)) => Ok(()),
        (Ok(()), Err(e)) => {
            // A failed COMMIT may leave the transaction open.
            let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
            Err(e.into())
        }
        // The BEGIN itself may have failed: nothing to roll back then.
        (Err(e), _) => Err(e),
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
        "INSERT INTO games (game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board) ",
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

/// One row per action: its events as a JSON array.
async fn insert_events(
    tx: &mut SqliteConnection,
    game_id: &str,
    events: &[EventRecord],
) -> Result<(), StoreError> {
    let Some(row) = action_events(game_id, events)? else {
        return Ok(());
    };
    let mut insert = QueryBuilder::new("");
    push_insert_events(&mut insert, &[row]);
    insert.build().execute(&mut *tx).await.map_err(duplicate)?;
    Ok(())
}

/// An action's row of the event log: (game, the version it made, its
/// events as a JSON array); none for an action without events.
type ActionEvents<'a> = (&'a str, u64, String);

fn action_events<'a>(
    game_id: &'a str,
    events: &[EventRecord],
) -> Result<Option<ActionEvents<'a>>, StoreError> {
    let Some(first) = events.first() else {
        return Ok(None);
    };
    let json = serde_json::to_string(events).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(Some((game_id, first.version, json)))
}

fn push_insert_events(query: &mut QueryBuilder<Sqlite>, rows: &[ActionEvents<'_>]) {
    if rows.is_empty() {
        return;
    }
    query.push("INSERT INTO game_events (game_id, version, events) ");
    query.push_values(rows, |mut row, (game_id, version, json)| {
        row.push_bind(*game_id)
            .push_bind(*version as i64)
            .push_bind(json);
    });
    query.push("; ");
}

async fn insert_request(
    tx: &mut SqliteConnection,
    request: Option<&RequestRecord>,
) -> Result<(), StoreError> {
    let Some(request) = request else {
        return Ok(());
    };
    let mut insert = QueryBuilder::new("");
    push_insert_requests(&mut insert, &[request]);
    insert.build().execute(&mut *tx).await.map_err(duplicate)?;
    Ok(())
}

fn push_insert_requests(query: &mut QueryBuilder<Sqlite>, requests: &[&RequestRecord]) {
    if requests.is_empty() {
        return;
    }
    let now = unix_seconds(SystemTime::now());
    query.push("INSERT INTO requests (scope, request_id, fingerprint, response, created_at) ");
    query.push_values(requests, |mut row, r| {
        row.push_bind(&r.scope)
            .push_bind(&r.request_id)
            .push_bind(&r.fingerprint)
            .push_bind(&r.response)
            .push_bind(now);
    });
    query.push("; ");
}

fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().min(i64::MAX as u64) as i64)
}

/// Request ids forgotten per transaction, so the writer never waits long.
const FORGET_BATCH: i64 = 1000;

/// A primary-key violation means the row is already there.
fn duplicate(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Duplicate,
        _ => StoreError::Database(e),
    }
}

impl GameStore for SqliteStore {
    async fn create(
        &self,
        game: &GameRecord,
        events: &[EventRecord],
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        self.write(WriteKind::Create {
            game: game.clone(),
            events: events.to_vec(),
            request: request.cloned(),
        })
        .await
    }

    async fn load(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash, start_board \
             FROM games WHERE game_id = ?",
        )
        .bind(game_id)
        .fetch_optional(&self.readers)
        .await?;
        Ok(row.map(|row| GameRecord {
            game_id: row.get(0),
            variant: row.get(1),
            variant_version: row.get(2),
            options: row.get(3),
            version: row.get::<i64, _>(4) as u64,
            state: row.get(5),
            token_hashes: [row.get(6), row.get(7)],
            start_board: row.get(8),
        }))
    }

    async fn commit(
        &self,
        game: &GameRecord,
        expected_version: u64,
        events: &[EventRecord],
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        self.write(WriteKind::Commit {
            game: game.clone(),
            expected_version,
            events: events.to_vec(),
            request: request.cloned(),
        })
        .await
    }

    async fn events_after(
        &self,
        game_id: &str,
        version: u64,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT events FROM game_events WHERE game_id = ? AND version > ? ORDER BY version",
        )
        .bind(game_id)
        .bind(version.min(i64::MAX as u64) as i64)
        .fetch_all(&self.readers)
        .await?;
        let mut events = Vec::new();
        for row in rows {
            let json: String = row.get(0);
            let action: Vec<EventRecord> =
                serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            events.extend(action);
        }
        Ok(events)
    }

    async fn request(
        &self,
        scope: &str,
        request_id: &str,
    ) -> Result<Option<RequestRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT fingerprint, response FROM requests WHERE scope = ? AND request_id = ?",
        )
        .bind(scope)
        .bind(request_id)
        .fetch_optional(&self.readers)
        .await?;
        Ok(row.map(|row| RequestRecord {
            scope: scope.to_string(),
            request_id: request_id.to_string(),
            fingerprint: row.get(0),
            response: row.get(1),
        }))
    }

    async fn forget_requests(&self, before: SystemTime) -> Result<u64, StoreError> {
        // A connection of its own, in small transactions: the writer waits
        // (busy timeout) for one batch at most.
        let mut connection = SqliteConnection::connect_with(&self.options).await?;
        let before = unix_seconds(before);
        let mut forgotten = 0;
        loop {
            let deleted = sqlx::query(
                "DELETE FROM requests WHERE rowid IN \
                 (SELECT rowid FROM requests WHERE created_at < ? AND scope <> ? \
                  ORDER BY created_at LIMIT ?)",
            )
            .bind(before)
            .bind(NEW_GAME_SCOPE)
            .bind(FORGET_BATCH)
            .execute(&mut connection)
            .await?
            .rows_affected();
            forgotten += deleted;
            if deleted < FORGET_BATCH as u64 {
                return Ok(forgotten);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                .create(&game(&id, 1, "a"), &[event(1, 0)], None)
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

    fn event(version: u64, index: u32) -> EventRecord {
        EventRecord {
            version,
            index,
            kind: "rolled".into(),
            seat: Some(0),
            detail: "{}".into(),
        }
    }

    #[tokio::test]
    async fn a_commit_applies_only_on_the_expected_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), Durability::Full)
            .await
            .unwrap();
        store
            .create(&game("g1", 1, "a"), &[event(1, 0)], None)
            .await
            .unwrap();
        store
            .commit(&game("g1", 2, "b"), 1, &[event(2, 0), event(2, 1)], None)
            .await
            .unwrap();
        // A second writer that read version 1 loses, and changes nothing.
        let lost = store
            .commit(&game("g1", 2, "c"), 1, &[event(2, 0)], None)
            .await
            .unwrap_err();
        assert!(matches!(lost, StoreError::Conflict { current: 2 }));
        assert_eq!(store.load("g1").await.unwrap().unwrap().state, "b");
        assert_eq!(store.events_after("g1", 0).await.unwrap().len(), 3);
        assert_eq!(
            store.events_after("g1", 1).await.unwrap(),
            vec![event(2, 0), event(2, 1)]
        );
        let missing = store.commit(&game("nope", 2, "x"), 1, &[], None).await;
        assert!(matches!(missing, Err(StoreError::NotFound)));
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
                .create(&game(&format!("g{g}"), 1, &state), &[event(1, 0)], None)
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

    #[tokio::test]
    async fn a_request_id_is_recorded_once_with_its_answer() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), Durability::Normal)
            .await
            .unwrap();
        store.create(&game("g1", 1, "a"), &[], None).await.unwrap();
        let request = RequestRecord {
            scope: "g1".into(),
            request_id: "r1".into(),
            fingerprint: vec![9],
            response: vec![7, 7],
        };
        store
            .commit(&game("g1", 2, "b"), 1, &[], Some(&request))
            .await
            .unwrap();
        assert_eq!(
            store.request("g1", "r1").await.unwrap(),
            Some(request.clone())
        );
        // Recording it again fails as a whole: the game stays at version 2.
        let again = store
            .commit(&game("g1", 3, "c"), 2, &[], Some(&request))
            .await
            .unwrap_err();
        assert!(matches!(again, StoreError::Duplicate));
        assert_eq!(store.load("g1").await.unwrap().unwrap().version, 2);
    }

    /// Request ids older than the given time are forgotten, in batches;
    /// newer ones and the games and events stay.
    #[tokio::test]
    async fn old_request_ids_are_forgotten_and_recent_ones_kept() {
        let (_dir, store) = store_with(Durability::Normal, "g", 1).await;
        let new_game = request(NEW_GAME_SCOPE, "n1");
        store
            .create(&game("g1", 1, "a"), &[event(1, 0)], Some(&new_game))
            .await
            .unwrap();
        let ids = (0..FORGET_BATCH + 5).map(|i| format!("r{i}"));
        for (n, id) in ids.enumerate() {
            let version = n as u64 + 1;
            store
                .commit(
                    &game("g0", version + 1, "b"),
                    version,
                    &[event(version + 1, 0)],
                    Some(&request("g0", &id)),
                )
                .await
                .unwrap();
        }
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 0);
        assert!(store.request("g0", "r0").await.unwrap().is_some());

        let soon = SystemTime::now() + Duration::from_secs(2);
        let forgotten = store.forget_requests(soon).await.unwrap();
        assert_eq!(forgotten, FORGET_BATCH as u64 + 5);
        assert!(store.request("g0", "r0").await.unwrap().is_none());
        assert_eq!(
            store.request(NEW_GAME_SCOPE, "n1").await.unwrap(),
            Some(new_game),
            "NewGame's ids are kept"
        );
        let stored = store.load("g0").await.unwrap().unwrap();
        assert_eq!(stored.version, FORGET_BATCH as u64 + 6);
        assert_eq!(
            store.events_after("g0", 0).await.unwrap().len(),
            FORGET_BATCH as usize + 6
        );
    }

    /// Many writers at once are grouped; a conflicting one fails alone and
    /// every other is applied.
    #[tokio::test]
    async fn grouped_commits_each_get_their_own_result() {
        let (_dir, store) = store_with(Durability::Full, "g", 20).await;
        let mut tasks = Vec::new();
        for g in 0..20 {
            let store = store.clone();
            // Game 7 is given a stale version: only it must fail.
            let expected = if g == 7 { 5 } else { 1 };
            tasks.push(tokio::spawn(async move {
                store
                    .commit(
                        &game(&format!("g{g}"), 2, "b"),
                        expected,
                        &[event(2, 0)],
                        None,
                    )
                    .await
            }));
        }
        for (g, task) in tasks.into_iter().enumerate() {
            let result = task.await.unwrap();
            if g == 7 {
                assert!(
                    matches!(result, Err(StoreError::Conflict { current: 1 })),
                    "{result:?}"
                );
            } else {
                result.unwrap();
            }
        }
        for g in 0..20 {
            let version = store.load(&format!("g{g}")).await.unwrap().unwrap().version;
            assert_eq!(version, if g == 7 { 1 } else { 2 });
        }
    }

    fn request(scope: &str, id: &str) -> RequestRecord {
        RequestRecord {
            scope: scope.into(),
            request_id: id.into(),
            fingerprint: vec![7; 32],
            response: id.as_bytes().to_vec(),
        }
    }

    /// Creates and commits arriving together are written by the grouped
    /// statements; a duplicate request id in a group fails only its own
    /// write.
    #[tokio::test]
    async fn grouped_creates_commits_events_and_requests_all_land() {
        let (_dir, store) = store_with(Durability::Full, "old", 10).await;
        // Round 1: ten creates and ten commits, all valid.
        let mut tasks = Vec::new();
        for g in 0..10 {
            let creator = store.clone();
            tasks.push(tokio::spawn(async move {
                let new = format!("new{g}");
                let request = request("new-game", &new);
                creator
                    .create(&game(&new, 1, "a"), &[event(1, 0)], Some(&request))
                    .await
            }));
            let committer = store.clone();
            tasks.push(tokio::spawn(async move {
                let old = format!("old{g}");
                let events = [event(2, 0), event(2, 1)];
                let request = request(&old, "first");
                committer
                    .commit(&game(&old, 2, "b"), 1, &events, Some(&request))
                    .await
            }));
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        for g in 0..10 {
            let old = format!("old{g}");
            assert_eq!(store.load(&old).await.unwrap().unwrap().version, 2);
            assert_eq!(store.events_after(&old, 1).await.unwrap().len(), 2);
            assert!(store.request(&old, "first").await.unwrap().is_some());
            let new = format!("new{g}");
            assert_eq!(store.load(&new).await.unwrap().unwrap().version, 1);
            assert!(store.request("new-game", &new).await.unwrap().is_some());
        }

        // Round 2: game 0 reuses its request id; the others go through.
        let mut tasks = Vec::new();
        for g in 0..10 {
            let committer = store.clone();
            tasks.push(tokio::spawn(async move {
                let old = format!("old{g}");
                let id = if g == 0 { "first" } else { "second" };
                let request = request(&old, id);
                committer
                    .commit(&game(&old, 3, "c"), 2, &[event(3, 0)], Some(&request))
                    .await
            }));
        }
        for (g, task) in tasks.into_iter().enumerate() {
            let result = task.await.unwrap();
            if g == 0 {
                assert!(matches!(result, Err(StoreError::Duplicate)), "{result:?}");
            } else {
                result.unwrap();
            }
            let expected = if g == 0 { 2 } else { 3 };
            let old = format!("old{g}");
            assert_eq!(store.load(&old).await.unwrap().unwrap().version, expected);
        }
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
            events: vec![event(version, 0)],
            request: Some(request(id, request_id)),
        })
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
                    events: vec![event(1, 0)],
                    request: Some(request("new-game", &format!("new{g}"))),
                })
            })
            .collect();
        apply_batched(&mut connection, &created).await.unwrap();
        let group = [
            commit("g0", 2, "a"),
            commit("g1", 2, "a"),
            commit("g2", 2, "a"),
        ];
        apply_batched(&mut connection, &group).await.unwrap();
        for g in 0..3 {
            let id = format!("g{g}");
            let stored = store.load(&id).await.unwrap().unwrap();
            assert_eq!((stored.version, stored.state.as_str()), (2, "next"));
            assert_eq!(store.events_after(&id, 0).await.unwrap().len(), 2);
            assert!(store.request(&id, "a").await.unwrap().is_some());
        }

        // g2's write expects version 4; it is at 2.
        let stale = [
            commit("g0", 3, "b"),
            commit("g1", 3, "b"),
            commit("g2", 5, "b"),
        ];
        let refused = apply_batched(&mut connection, &stale).await.unwrap_err();
        assert!(matches!(refused, StoreError::Batch(_)), "{refused:?}");
        let reused = [commit("g0", 3, "c"), commit("g1", 3, "a")];
        let refused = apply_batched(&mut connection, &reused).await.unwrap_err();
        assert!(matches!(refused, StoreError::Duplicate), "{refused:?}");
        for g in 0..3 {
            let id = format!("g{g}");
            assert_eq!(store.load(&id).await.unwrap().unwrap().version, 2);
            assert_eq!(store.events_after(&id, 0).await.unwrap().len(), 2);
            assert!(store.request(&id, "b").await.unwrap().is_none());
        }
        assert!(store.request("g0", "c").await.unwrap().is_none());
        // The connection is usable again: no transaction left open.
        apply_batched(
            &mut connection,
            &[commit("g0", 3, "d"), commit("g1", 3, "d")],
        )
        .await
        .unwrap();
        assert_eq!(store.load("g1").await.unwrap().unwrap().version, 3);
    }

    #[tokio::test]
    async fn reopening_the_file_finds_every_committed_game() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        {
            let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
            store
                .create(&game("g1", 1, "a"), &[event(1, 0)], None)
                .await
                .unwrap();
            store
                .commit(&game("g1", 2, "b"), 1, &[event(2, 0)], None)
                .await
                .unwrap();
        }
        let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
        let loaded = store.load("g1").await.unwrap().unwrap();
        assert_eq!((loaded.version, loaded.state.as_str()), (2, "b"));
        assert!(store.load("g2").await.unwrap().is_none());
    }
}
