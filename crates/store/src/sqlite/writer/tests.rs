//! The writer's own tests: the used-id cache, grouping.
use super::*;
use crate::sqlite::tests::{entry, game};

/// A request id's row, as queued.
fn request(scope: &str, id: &str) -> Option<RequestRow> {
    RequestRow::of(Some(&crate::sqlite::tests::request(scope, id)), "", 0).unwrap()
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

/// The writer waits for another connection's write lock in short steps
/// (50 µs for 5 ms, then 1 ms) and gives up after BUSY_TIMEOUT, as
/// SQLite's own handler would, not sooner.
#[test]
fn the_writer_waits_for_the_lock_in_short_steps_up_to_the_busy_timeout() {
    assert_eq!(lock_wait_step(0), Some(Duration::from_micros(50)));
    assert_eq!(lock_wait_step(99), Some(Duration::from_micros(50)));
    assert_eq!(lock_wait_step(100), Some(Duration::from_millis(1)));
    let mut tries = 0;
    let mut waited = Duration::ZERO;
    while let Some(step) = lock_wait_step(tries) {
        waited += step;
        tries += 1;
    }
    assert!(waited >= BUSY_TIMEOUT && waited <= BUSY_TIMEOUT + Duration::from_millis(1));
}
