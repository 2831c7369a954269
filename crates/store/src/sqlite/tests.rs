//! The SQLite store's own tests: faults injected at each step of a
//! commit, a full disk, recovery, the writer's probing. (What every store
//! must do is tested for both in `tests/conformance.rs`.)

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
        index: Default::default(),
    }
}

/// The log entry of the action that produced `version`.
pub(super) fn entry(version: u64) -> LogEntry {
    LogEntry {
        version,
        text: format!("action {version}"),
        feed: Default::default(),
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

/// A write that meets another connection's write lock (a webhook's
/// write, a trim) waits for it and lands once it is let go.
#[tokio::test]
async fn a_commit_waits_for_another_connection_s_write_lock_and_lands() {
    let (dir, store) = store_with(Durability::Full, "g", 1).await;
    let path = dir.path().join("games.db");
    let mut outside = connect(&path).await;
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut outside)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let commit = tokio::spawn({
        let store = store.clone();
        async move { advance(&store, "g0", 2).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!commit.is_finished(), "the commit waits for the lock");
    sqlx::query("COMMIT").execute(&mut outside).await.unwrap();
    let answered = within_seconds(5, commit).await.unwrap();
    assert!(answered.result.is_ok(), "{:?}", answered.result);
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(store.version("g0").await.unwrap(), Some(2));
}
