//! The embedded default: one SQLite file, in WAL mode.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};

use crate::{EventRecord, GameRecord, GameStore, RequestRecord, StoreError};

/// How hard a commit waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// fsync on every commit: survives a power cut (the default).
    Full,
    /// fsync at checkpoints: survives a killed process, not a power cut.
    Normal,
}

/// Games in a SQLite file.
///
/// SQLite has one writer at a time. Writers on several connections would
/// wait for each other in SQLite's busy handler, which sleeps; so all
/// writes go through one connection, queued in the pool without sleeping,
/// and reads use others.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
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
            .busy_timeout(Duration::from_secs(10));
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&writer).await?;
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.read_only(true))
            .await?;
        Ok(SqliteStore { writer, readers })
    }

    async fn insert_events(
        tx: &mut Transaction<'_, Sqlite>,
        game_id: &str,
        events: &[EventRecord],
    ) -> Result<(), StoreError> {
        for e in events {
            sqlx::query("INSERT INTO game_events (game_id, version, idx, kind, seat, detail) VALUES (?, ?, ?, ?, ?, ?)")
                .bind(game_id)
                .bind(e.version as i64)
                .bind(i64::from(e.index))
                .bind(&e.kind)
                .bind(e.seat.map(i64::from))
                .bind(&e.detail)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    async fn insert_request(
        tx: &mut Transaction<'_, Sqlite>,
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        let Some(r) = request else { return Ok(()) };
        sqlx::query(
            "INSERT INTO requests (scope, request_id, fingerprint, response) VALUES (?, ?, ?, ?)",
        )
        .bind(&r.scope)
        .bind(&r.request_id)
        .bind(&r.fingerprint)
        .bind(&r.response)
        .execute(&mut **tx)
        .await
        .map_err(duplicate)?;
        Ok(())
    }
}

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
        let mut tx = self.writer.begin().await?;
        sqlx::query(
            "INSERT INTO games (game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&game.game_id)
        .bind(&game.variant)
        .bind(&game.variant_version)
        .bind(&game.options)
        .bind(game.version as i64)
        .bind(&game.state)
        .bind(&game.token_hashes[0])
        .bind(&game.token_hashes[1])
        .execute(&mut *tx)
        .await
        .map_err(duplicate)?;
        Self::insert_events(&mut tx, &game.game_id, events).await?;
        Self::insert_request(&mut tx, request).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn load(&self, game_id: &str) -> Result<Option<GameRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT game_id, variant, variant_version, options, version, state, white_token_hash, black_token_hash \
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
        }))
    }

    async fn commit(
        &self,
        game: &GameRecord,
        expected_version: u64,
        events: &[EventRecord],
        request: Option<&RequestRecord>,
    ) -> Result<(), StoreError> {
        let mut tx = self.writer.begin().await?;
        let updated = sqlx::query(
            "UPDATE games SET version = ?, state = ?, updated_at = CURRENT_TIMESTAMP WHERE game_id = ? AND version = ?",
        )
        .bind(game.version as i64)
        .bind(&game.state)
        .bind(&game.game_id)
        .bind(expected_version as i64)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            let current: Option<i64> =
                sqlx::query_scalar("SELECT version FROM games WHERE game_id = ?")
                    .bind(&game.game_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            return Err(match current {
                Some(v) => StoreError::Conflict { current: v as u64 },
                None => StoreError::NotFound,
            });
        }
        Self::insert_events(&mut tx, &game.game_id, events).await?;
        Self::insert_request(&mut tx, request).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn events_after(
        &self,
        game_id: &str,
        version: u64,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT version, idx, kind, seat, detail FROM game_events WHERE game_id = ? AND version > ? ORDER BY version, idx",
        )
        .bind(game_id)
        .bind(version as i64)
        .fetch_all(&self.readers)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| EventRecord {
                version: row.get::<i64, _>(0) as u64,
                index: row.get::<i64, _>(1) as u32,
                kind: row.get(2),
                seat: row.get::<Option<i64>, _>(3).map(|s| s as u8),
                detail: row.get(4),
            })
            .collect())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(version: u64, state: &str) -> GameRecord {
        GameRecord {
            game_id: "g1".into(),
            variant: "standard".into(),
            variant_version: "0.1.0".into(),
            options: "{}".into(),
            version,
            state: state.into(),
            token_hashes: [vec![1; 32], vec![2; 32]],
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
            .create(&game(1, "a"), &[event(1, 0)], None)
            .await
            .unwrap();
        store
            .commit(&game(2, "b"), 1, &[event(2, 0), event(2, 1)], None)
            .await
            .unwrap();
        // A second writer that read version 1 loses, and changes nothing.
        let lost = store
            .commit(&game(2, "c"), 1, &[event(2, 0)], None)
            .await
            .unwrap_err();
        assert!(matches!(lost, StoreError::Conflict { current: 2 }));
        assert_eq!(store.load("g1").await.unwrap().unwrap().state, "b");
        assert_eq!(store.events_after("g1", 0).await.unwrap().len(), 3);
        assert_eq!(store.events_after("g1", 1).await.unwrap().len(), 2);
        let missing = store
            .commit(
                &GameRecord {
                    game_id: "nope".into(),
                    ..game(2, "x")
                },
                1,
                &[],
                None,
            )
            .await;
        assert!(matches!(missing, Err(StoreError::NotFound)));
    }

    #[tokio::test]
    async fn a_request_id_is_recorded_once_with_its_answer() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), Durability::Normal)
            .await
            .unwrap();
        store.create(&game(1, "a"), &[], None).await.unwrap();
        let request = RequestRecord {
            scope: "g1".into(),
            request_id: "r1".into(),
            fingerprint: vec![9],
            response: vec![7, 7],
        };
        store
            .commit(&game(2, "b"), 1, &[], Some(&request))
            .await
            .unwrap();
        assert_eq!(
            store.request("g1", "r1").await.unwrap(),
            Some(request.clone())
        );
        // Recording it again fails as a whole: the game stays at version 2.
        let again = store
            .commit(&game(3, "c"), 2, &[], Some(&request))
            .await
            .unwrap_err();
        assert!(matches!(again, StoreError::Duplicate));
        assert_eq!(store.load("g1").await.unwrap().unwrap().version, 2);
    }

    #[tokio::test]
    async fn reopening_the_file_finds_every_committed_game() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.db");
        {
            let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
            store
                .create(&game(1, "a"), &[event(1, 0)], None)
                .await
                .unwrap();
            store
                .commit(&game(2, "b"), 1, &[event(2, 0)], None)
                .await
                .unwrap();
        }
        let store = SqliteStore::open(&path, Durability::Full).await.unwrap();
        let loaded = store.load("g1").await.unwrap().unwrap();
        assert_eq!((loaded.version, loaded.state.as_str()), (2, "b"));
        assert!(store.load("g2").await.unwrap().is_none());
    }
}
