//! The store conformance suite: every promise of the `GameStore` trait,
//! checked the same way against both stores, `SqliteStore` (a file of one
//! process) and `PgStore` (a PostgreSQL database shared by replicas).
//!
//! Each conformance test is written once, generic over a [`Backend`] (a
//! fresh place for games and a way to open a store on it, again and
//! again), and run twice by the `conformance!` list at the end: as
//! `sqlite::<name>` and as `postgres::<name>`. The PostgreSQL runs share
//! one private cluster per test binary (`bg_tests::postgres::PgCluster`),
//! one fresh database per test; without PostgreSQL installed they skip,
//! saying so (and fail if BACKGAMMON_REQUIRE_POSTGRES is set).
//!
//! `postgres_shared::<name>` are the promises only a shared store makes:
//! replicas racing on one game, commits announced to the other replicas,
//! a database that goes down and comes back, and both outcomes of a write
//! whose connection fails (not stored, or stored with its answer lost).
//! The SQLite store makes none of them and says so (`shared()` is false,
//! `changes()` is none): checked by `only_a_shared_store_announces_commits`.
//!
//! `schema::<name>` check the shape each store gives its request ids in
//! its own catalogue (SQLite: WITHOUT ROWID, no index by time; PostgreSQL:
//! an index by time of the action ids only); SQLite's also in a database
//! upgraded from the old migrations.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use bg_store::{
    Answer, Applied, Change, Durability, Feed, FeedPosition, GameRecord, GameStore, LogEntry,
    MatchIndex, MatchOrder, MatchQuery, MatchState, NEW_GAME_SCOPE, PgStore, RequestRecord,
    SqliteStore, StoreError, action_scope,
};
use bg_tests::postgres::PgCluster;
use sqlx::Connection;
use tokio::sync::broadcast;

// ---- The harness ---------------------------------------------------------

/// A fresh place for games, and how to open a store on it.
trait Backend: Sized {
    type Store: GameStore;

    /// A new, empty place for the test named `test`, or None when this
    /// backend cannot run here (the test then skips, having said why).
    async fn fresh(test: &str) -> Option<Self>;

    /// A store on this place; opened again, it finds what was committed
    /// (a server restarting).
    async fn open(&self) -> Self::Store;

    /// Runs `sql` on the database itself, behind the store's back.
    async fn execute(&self, sql: &str);

    /// Gives the empty database the schema of a server from before lean
    /// request ids: the migrations it had ([`OLD_MIGRATIONS`] of the
    /// store's own files, copied as they are), applied by sqlx's migrator
    /// as that server did, so that a store opened later applies only the
    /// newer ones.
    ///
    /// [`OLD_MIGRATIONS`]: Backend::OLD_MIGRATIONS
    async fn migrate_old(&self);

    /// The folder of the store's migrations, and how many of them a server
    /// from before lean request ids had.
    const MIGRATIONS: &'static str;
    const OLD_MIGRATIONS: usize;

    /// `bytes` as a literal of this database's SQL.
    fn bytes_literal(bytes: &[u8]) -> String;

    /// Damage only this database's column types can hold, done to game
    /// `g0` (SQL).
    const OWN_DAMAGE: &'static [&'static str];

    /// The same, done to game `g0`'s log row (version 1).
    const OWN_LOG_DAMAGE: &'static [&'static str];

    /// The same, done to the request row with the id `bad`.
    const OWN_REQUEST_DAMAGE: &'static [&'static str];
}

/// A SQLite file in a temporary folder.
struct Sqlite {
    dir: tempfile::TempDir,
}

impl Sqlite {
    fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("games.db")
    }
}

impl Backend for Sqlite {
    type Store = SqliteStore;

    async fn fresh(_test: &str) -> Option<Self> {
        Some(Sqlite {
            dir: tempfile::tempdir().unwrap(),
        })
    }

    async fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.path(), Durability::Full)
            .await
            .unwrap()
    }

    async fn execute(&self, sql: &str) {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(self.path())
            .busy_timeout(Duration::from_secs(10));
        let mut connection = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
            .execute(&mut connection)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        connection.close().await.unwrap();
    }

    async fn migrate_old(&self) {
        let old = old_migrations::<Self>();
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(self.path())
            .create_if_missing(true);
        let mut connection = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        let migrator = sqlx::migrate::Migrator::new(old.path()).await.unwrap();
        migrator.run(&mut connection).await.unwrap();
        connection.close().await.unwrap();
    }

    const MIGRATIONS: &'static str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite");
    // 0001-0004: games, start boards, request times, settings.
    const OLD_MIGRATIONS: usize = 4;

    fn bytes_literal(bytes: &[u8]) -> String {
        format!("x'{}'", hex(bytes))
    }

    const OWN_DAMAGE: &'static [&'static str] = &[
        // Bytes that are not UTF-8 in a text column.
        "UPDATE games SET state = CAST(x'7b22ff' AS TEXT) WHERE game_id = 'g0'",
        // An integer where bytes belong.
        "UPDATE games SET white_token_hash = 12 WHERE game_id = 'g0'",
    ];

    const OWN_LOG_DAMAGE: &'static [&'static str] = &[
        // Bytes that are not UTF-8 in the text.
        "UPDATE game_events SET events = CAST(x'5b22ff' AS TEXT) WHERE game_id = 'g0'",
        // Text where the version belongs (and sorts after every number).
        "UPDATE game_events SET version = 'one' WHERE game_id = 'g0'",
    ];

    const OWN_REQUEST_DAMAGE: &'static [&'static str] = &[
        // Text where the version belongs.
        "UPDATE requests SET version = 'two' WHERE request_id = 'bad'",
        // Bytes that are not UTF-8 where the created game's id belongs.
        "UPDATE requests SET version = NULL, game_id = CAST(x'ff' AS TEXT) WHERE request_id = 'bad'",
    ];
}

/// A fresh database of the cluster shared by this test binary.
struct Postgres {
    cluster: Arc<PgCluster>,
    database: String,
    url: String,
}

impl Backend for Postgres {
    type Store = PgStore;

    async fn fresh(test: &str) -> Option<Self> {
        let cluster = tokio::task::block_in_place(shared_cluster)?;
        static DATABASES: AtomicUsize = AtomicUsize::new(0);
        let n = DATABASES.fetch_add(1, Ordering::SeqCst);
        let database: String = format!("{n}_{test}").chars().take(63).collect();
        let url = {
            let cluster = cluster.clone();
            let database = database.clone();
            tokio::task::spawn_blocking(move || cluster.create_database(&database))
                .await
                .unwrap()
        };
        Some(Postgres {
            cluster,
            database,
            url,
        })
    }

    async fn open(&self) -> PgStore {
        PgStore::connect(&self.url).await.unwrap()
    }

    async fn execute(&self, sql: &str) {
        let cluster = self.cluster.clone();
        let database = self.database.clone();
        let sql = sql.to_string();
        tokio::task::spawn_blocking(move || cluster.psql(&database, &sql))
            .await
            .unwrap();
    }

    async fn migrate_old(&self) {
        let old = old_migrations::<Self>();
        let mut connection = sqlx::PgConnection::connect(&self.url).await.unwrap();
        let migrator = sqlx::migrate::Migrator::new(old.path()).await.unwrap();
        migrator.run(&mut connection).await.unwrap();
        connection.close().await.unwrap();
    }

    const MIGRATIONS: &'static str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres");
    // 0001: the schema replicas started with.
    const OLD_MIGRATIONS: usize = 1;

    fn bytes_literal(bytes: &[u8]) -> String {
        format!("'\\x{}'::bytea", hex(bytes))
    }

    // PostgreSQL checks text and types on the way in: a row can only be
    // damaged in ways both databases share.
    const OWN_DAMAGE: &'static [&'static str] = &[];
    const OWN_LOG_DAMAGE: &'static [&'static str] = &[];
    const OWN_REQUEST_DAMAGE: &'static [&'static str] = &[];
}

/// A folder holding copies of the first `B::OLD_MIGRATIONS` migration
/// files of the store (in name order, as sqlx orders them).
fn old_migrations<B: Backend>() -> tempfile::TempDir {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(B::MIGRATIONS)
        .unwrap()
        .map(|file| file.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert!(
        files.len() > B::OLD_MIGRATIONS,
        "the store has migrations newer than the old ones: {files:?}"
    );
    let old = tempfile::tempdir().unwrap();
    for file in &files[..B::OLD_MIGRATIONS] {
        std::fs::copy(file, old.path().join(file.file_name().unwrap())).unwrap();
    }
    old
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cluster of this test binary: started by the first test that needs
/// it, stopped and removed when the binary exits.
enum SharedCluster {
    NotStarted,
    Missing,
    Running(Arc<PgCluster>),
}

static CLUSTER: Mutex<SharedCluster> = Mutex::new(SharedCluster::NotStarted);

/// The shared cluster, or None (and a line on stderr) without PostgreSQL.
fn shared_cluster() -> Option<Arc<PgCluster>> {
    let mut shared = CLUSTER.lock().unwrap_or_else(PoisonError::into_inner);
    match &*shared {
        SharedCluster::Running(cluster) => Some(cluster.clone()),
        SharedCluster::Missing => {
            let thread = std::thread::current();
            eprintln!(
                "{} skipped: PostgreSQL is not available (see the first skipped test)",
                thread.name().unwrap_or("this test")
            );
            None
        }
        SharedCluster::NotStarted => match PgCluster::start() {
            Some(cluster) => {
                let cluster = Arc::new(cluster);
                *shared = SharedCluster::Running(cluster.clone());
                stop_the_shared_cluster_at_exit();
                Some(cluster)
            }
            None => {
                *shared = SharedCluster::Missing;
                None
            }
        },
    }
}

/// A static is never dropped: without this, the cluster's server would
/// outlive the test binary.
fn stop_the_shared_cluster_at_exit() {
    unsafe extern "C" {
        fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
    }
    extern "C" fn stop() {
        // Every test has ended by now (and dropped its handle): dropping
        // the last one stops the server and removes its folder.
        let mut shared = match CLUSTER.try_lock() {
            Ok(shared) => shared,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        *shared = SharedCluster::Missing;
    }
    // SAFETY: atexit is the C library's; `stop` neither panics out nor
    // unwinds (try_lock cannot block; PgCluster's drop ignores errors).
    let registered = unsafe { atexit(stop) };
    assert_eq!(registered, 0, "atexit refused the cluster's cleanup");
}

/// Runs one conformance test on each backend: `sqlite::<test>` and
/// `postgres::<test>`.
macro_rules! conformance {
    ($($test:ident),* $(,)?) => {
        /// The suite on a SQLite file.
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    let place = <super::Sqlite as super::Backend>::fresh(stringify!($test)).await;
                    super::$test(&place.expect("a temporary folder")).await;
                }
            )*
        }

        /// The suite on a PostgreSQL database.
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $test() {
                    let place = <super::Postgres as super::Backend>::fresh(stringify!($test)).await;
                    if let Some(place) = place {
                        super::$test(&place).await;
                    }
                }
            )*
        }
    };
}

// ---- Records ---------------------------------------------------------------

fn game(id: &str, version: u64, state: &str) -> GameRecord {
    GameRecord {
        game_id: id.into(),
        variant: "standard".into(),
        variant_version: "0.1.0".into(),
        options: r#"{"cube":true}"#.into(),
        version,
        state: state.into(),
        token_hashes: [vec![1; 32], vec![2; 32]],
        start_board: None,
        finished: false,
        deadline_ms: None,
        index: Default::default(),
    }
}

/// The log entry of the action that produced `version`: its text differs
/// with the version, so that a mixed-up entry shows.
fn entry(version: u64) -> LogEntry {
    LogEntry {
        version,
        text: format!(r#"[{{"version":{version},"kind":"moved"}}]"#),
        feed: Default::default(),
    }
}

/// A request id with the answer a server records: the game created, for
/// NewGame's; for an action's, a version that differs with the id, so that
/// a mixed-up answer shows.
fn request(scope: &str, id: &str) -> RequestRecord {
    let answer = if scope == NEW_GAME_SCOPE {
        Answer::Created(format!("game of {id}"))
    } else {
        let digest = id
            .bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        Answer::Version(digest % 1_000_000 + 1)
    };
    RequestRecord {
        scope: scope.into(),
        request_id: id.into(),
        fingerprint: vec![7; 32],
        answer,
    }
}

/// `what` done within `limit`, or a panic naming it.
async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {limit:?}"))
}

// ---- Conformance: both stores ----------------------------------------------

/// A game reads back exactly as written, every field; a commit changes
/// its version and state.
async fn a_game_reads_back_as_written<B: Backend>(place: &B) {
    let store = place.open().await;
    let written = GameRecord {
        game_id: "g-ü".into(),
        variant: "nackgammon".into(),
        variant_version: "2.3.4".into(),
        options: r#"{"jacoby":false,"match_length":7}"#.into(),
        version: 1,
        state: "état ♟ \" '\n".into(),
        token_hashes: [(0..32).collect(), (32..64).rev().collect()],
        start_board: Some(r#"{"points":[2,0,0,0,0,-5]}"#.into()),
        finished: false,
        deadline_ms: None,
        index: MatchIndex::default(),
    };
    store.create(&written, &entry(1), None).await.unwrap();
    assert_eq!(store.load("g-ü").await.unwrap(), Some(written.clone()));
    let moved = GameRecord {
        version: 2,
        state: "next".into(),
        ..written.clone()
    };
    store.commit(&moved, 1, &entry(2), None).await.unwrap();
    assert_eq!(store.load("g-ü").await.unwrap(), Some(moved.clone()));
    assert_eq!(
        store.log_after("g-ü", 0).await.unwrap(),
        vec![entry(1), entry(2)]
    );
    let ended = GameRecord {
        version: 3,
        state: "over".into(),
        finished: true,
        ..moved
    };
    store.commit(&ended, 2, &entry(3), None).await.unwrap();
    assert_eq!(store.load("g-ü").await.unwrap(), Some(ended));
}

/// A running clock's deadline reads back as written, and the games whose
/// deadline has come are listed, earliest first; a commit that stops the
/// clock takes the game off the list.
async fn games_whose_clock_ran_out_are_listed_by_their_deadline<B: Backend>(place: &B) {
    let store = place.open().await;
    for (id, deadline) in [
        ("late", Some(2_000)),
        ("early", Some(1_000)),
        ("none", None),
        ("later", Some(9_000)),
    ] {
        let record = GameRecord {
            deadline_ms: deadline,
            ..game(id, 1, "start")
        };
        store.create(&record, &entry(1), None).await.unwrap();
        assert_eq!(store.load(id).await.unwrap(), Some(record));
    }
    assert_eq!(
        store.due_before(999, 10).await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        store.due_before(2_000, 10).await.unwrap(),
        ["early", "late"]
    );
    assert_eq!(store.due_before(2_000, 1).await.unwrap(), ["early"]);
    // The early game's turn ended in time: its clock now runs to 5,000.
    let moved = GameRecord {
        deadline_ms: Some(5_000),
        ..game("early", 2, "next")
    };
    store.commit(&moved, 1, &entry(2), None).await.unwrap();
    assert_eq!(store.due_before(2_000, 10).await.unwrap(), ["late"]);
    // The late one ended: no clock runs.
    let ended = GameRecord {
        finished: true,
        ..game("late", 2, "over")
    };
    store.commit(&ended, 1, &entry(2), None).await.unwrap();
    assert_eq!(
        store.due_before(u64::MAX, 10).await.unwrap(),
        ["early", "later"]
    );
}

/// Matches that ended are listed by when they ended, and removed with
/// their log and request ids (actions' and NewGame's); a match that runs
/// is never removed, whatever its age, nor another match's rows.
async fn a_match_that_ended_is_listed_and_removed_whole<B: Backend>(place: &B) {
    let store = place.open().await;
    let before_any = SystemTime::now() - Duration::from_secs(5);
    for id in ["ended-1", "ended-2", "running"] {
        let mut created = request(NEW_GAME_SCOPE, &format!("new {id}"));
        created.answer = Answer::Created(id.into());
        store
            .create(&game(id, 1, "start"), &entry(1), Some(&created))
            .await
            .unwrap();
        let scope = action_scope(id, "white");
        let mut action = request(&scope, &format!("{id} move"));
        action.answer = Answer::Version(2);
        let next = GameRecord {
            finished: id.starts_with("ended"),
            deadline_ms: None,
            ..game(id, 2, "next")
        };
        store
            .commit(&next, 1, &entry(2), Some(&action))
            .await
            .unwrap();
    }
    // Nothing ended before the games were made.
    assert_eq!(
        store.finished_before(before_any, 10).await.unwrap(),
        Vec::<String>::new()
    );
    // Whole seconds: a second later, both ended matches are listed.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let later = SystemTime::now() + Duration::from_secs(1);
    let mut ended = store.finished_before(later, 10).await.unwrap();
    ended.sort();
    assert_eq!(ended, ["ended-1", "ended-2"]);
    assert_eq!(store.finished_before(later, 1).await.unwrap().len(), 1);

    assert!(
        !store.remove_finished("running", &removal()).await.unwrap(),
        "a running match stays"
    );
    assert!(store.remove_finished("ended-1", &removal()).await.unwrap());
    assert!(
        !store.remove_finished("ended-1", &removal()).await.unwrap(),
        "gone already"
    );
    assert_eq!(store.load("ended-1").await.unwrap(), None);
    assert_eq!(
        store.log_after("ended-1", 0).await.unwrap(),
        Vec::<LogEntry>::new()
    );
    let scope = action_scope("ended-1", "white");
    assert_eq!(store.request(&scope, "ended-1 move").await.unwrap(), None);
    assert_eq!(
        store.request(NEW_GAME_SCOPE, "new ended-1").await.unwrap(),
        None
    );
    // The others are whole.
    for id in ["ended-2", "running"] {
        assert_eq!(store.load(id).await.unwrap().unwrap().version, 2, "{id}");
        assert_eq!(
            store.log_after(id, 0).await.unwrap(),
            vec![entry(1), entry(2)]
        );
        let scope = action_scope(id, "white");
        assert!(
            store
                .request(&scope, &format!("{id} move"))
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            store
                .request(NEW_GAME_SCOPE, &format!("new {id}"))
                .await
                .unwrap()
                .is_some()
        );
    }
    assert_eq!(store.finished_before(later, 10).await.unwrap(), ["ended-2"]);
    // Opened again (a restart), the same.
    drop(store);
    let store = place.open().await;
    assert_eq!(store.load("ended-1").await.unwrap(), None);
    assert!(store.load("ended-2").await.unwrap().unwrap().finished);
}

/// Compare-and-set: a commit lands only on the version it expects; a lost
/// one says where the game is and changes nothing; an unknown game is
/// NotFound.
async fn a_commit_applies_only_on_the_expected_version<B: Backend>(place: &B) {
    let store = place.open().await;
    store
        .create(&game("g1", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    store
        .commit(&game("g1", 2, "b"), 1, &entry(2), None)
        .await
        .unwrap();
    // A second writer that read version 1 loses, and changes nothing.
    let lost = store
        .commit(
            &game("g1", 2, "c"),
            1,
            &entry(2),
            Some(&request("g1", "lost")),
        )
        .await;
    assert!(
        matches!(lost, Err(StoreError::Conflict { current: 2 })),
        "{lost:?}"
    );
    // A writer ahead of the game loses too.
    let ahead = store.commit(&game("g1", 4, "d"), 3, &entry(4), None).await;
    assert!(
        matches!(ahead, Err(StoreError::Conflict { current: 2 })),
        "{ahead:?}"
    );
    assert_eq!(store.load("g1").await.unwrap(), Some(game("g1", 2, "b")));
    assert_eq!(
        store.log_after("g1", 0).await.unwrap(),
        vec![entry(1), entry(2)]
    );
    assert!(store.request("g1", "lost").await.unwrap().is_none());

    let missing = store
        .commit(&game("nope", 2, "x"), 1, &entry(2), None)
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
    assert!(store.load("nope").await.unwrap().is_none());
}

/// The log gives the entries of the actions after a version, in order,
/// one per action with the version it produced, and only the game's own
/// (another game's actions, interleaved, do not show).
async fn log_entries_come_back_in_order_after_any_version<B: Backend>(place: &B) {
    let store = place.open().await;
    for id in ["g", "h"] {
        store
            .create(&game(id, 1, "s1"), &entry(1), None)
            .await
            .unwrap();
    }
    for version in 2..=5 {
        for id in ["g", "h"] {
            let logged = LogEntry {
                version,
                text: format!("{id} {version}"),
                feed: Default::default(),
            };
            store
                .commit(
                    &game(id, version, &format!("s{version}")),
                    version - 1,
                    &logged,
                    None,
                )
                .await
                .unwrap();
        }
    }
    for after in 0..=6 {
        let expected: Vec<LogEntry> = (1..=5)
            .filter(|&v| v > after)
            .map(|version| match version {
                1 => entry(1),
                _ => LogEntry {
                    version,
                    text: format!("g {version}"),
                    feed: Default::default(),
                },
            })
            .collect();
        assert_eq!(
            store.log_after("g", after).await.unwrap(),
            expected,
            "after version {after}"
        );
    }
    assert!(store.log_after("unknown", 0).await.unwrap().is_empty());
}

/// A request id is stored with its answer; recording it again fails the
/// whole write with Duplicate and changes nothing. The id belongs to its
/// scope: another game may use it.
async fn a_request_id_is_recorded_once_with_its_answer<B: Backend>(place: &B) {
    let store = place.open().await;
    store
        .create(&game("g1", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    store
        .create(&game("g2", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    let first = RequestRecord {
        scope: "g1".into(),
        request_id: "r1".into(),
        fingerprint: vec![9],
        answer: Answer::Version(2),
    };
    store
        .commit(&game("g1", 2, "b"), 1, &entry(2), Some(&first))
        .await
        .unwrap();
    assert_eq!(
        store.request("g1", "r1").await.unwrap(),
        Some(first.clone())
    );

    let again = RequestRecord {
        answer: Answer::Version(3),
        ..first.clone()
    };
    let refused = store
        .commit(&game("g1", 3, "c"), 2, &entry(3), Some(&again))
        .await;
    assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
    assert_eq!(store.load("g1").await.unwrap(), Some(game("g1", 2, "b")));
    assert!(store.log_after("g1", 2).await.unwrap().is_empty());
    assert_eq!(store.request("g1", "r1").await.unwrap(), Some(first));

    let elsewhere = request("g2", "r1");
    store
        .commit(&game("g2", 2, "b"), 1, &entry(2), Some(&elsewhere))
        .await
        .unwrap();
    assert_eq!(store.request("g2", "r1").await.unwrap(), Some(elsewhere));
    assert!(store.request("g3", "r1").await.unwrap().is_none());
}

/// An action's request id as the server records it: in the scope of its
/// game and seat, answered by the version its action produced (SQLite
/// keeps such ids in the action's log row, PostgreSQL in `requests`).
fn action_request(game_id: &str, seat: &str, id: &str, version: u64) -> RequestRecord {
    RequestRecord {
        scope: action_scope(game_id, seat),
        request_id: id.into(),
        fingerprint: vec![3; 16],
        answer: Answer::Version(version),
    }
}

/// Commits `game_id`'s next version (from `version - 1`) with the action
/// id `id` of `seat`.
async fn act<S: GameStore>(
    store: &S,
    game_id: &str,
    seat: &str,
    id: &str,
    version: u64,
) -> Result<(), StoreError> {
    store
        .commit(
            &game(game_id, version, &format!("s{version}")),
            version - 1,
            &entry(version),
            Some(&action_request(game_id, seat, id, version)),
        )
        .await
}

/// An action's request id in its game's scope is used once in that scope:
/// read back with its answer, refused again (the whole commit: nothing
/// stored) in the same game and seat, also by a store opened again later
/// (a restarted server) and among concurrent commits of other games, and
/// free in the other seat's scope and in other games.
async fn an_action_id_in_its_game_s_scope_is_used_once_even_after_a_restart<B: Backend>(place: &B) {
    let store = place.open().await;
    for g in ["g1", "g2"] {
        store
            .create(&game(g, 1, "s1"), &entry(1), None)
            .await
            .unwrap();
    }
    act(&store, "g1", "white", "r1", 2).await.unwrap();
    assert_eq!(
        store
            .request(&action_scope("g1", "white"), "r1")
            .await
            .unwrap(),
        Some(action_request("g1", "white", "r1", 2))
    );
    let refused = act(&store, "g1", "white", "r1", 3).await;
    assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
    assert_eq!(store.version("g1").await.unwrap(), Some(2));
    assert!(store.log_after("g1", 2).await.unwrap().is_empty());
    act(&store, "g1", "black", "r1", 3).await.unwrap();
    act(&store, "g2", "white", "r1", 2).await.unwrap();
    assert!(
        store
            .request(&action_scope("g3", "white"), "r1")
            .await
            .unwrap()
            .is_none()
    );
    store.close().await;

    let store = place.open().await;
    for (g, seat, version) in [("g1", "white", 2), ("g1", "black", 3), ("g2", "white", 2)] {
        assert_eq!(
            store.request(&action_scope(g, seat), "r1").await.unwrap(),
            Some(action_request(g, seat, "r1", version)),
            "{g} {seat}"
        );
    }
    // After the restart, concurrent commits of many games (grouped by
    // SQLite's writer), one of them reusing g1's id: only it is refused.
    let others: Vec<String> = (0..16).map(|n| format!("h{n}")).collect();
    for g in &others {
        store
            .create(&game(g, 1, "s1"), &entry(1), None)
            .await
            .unwrap();
    }
    let mut commits = tokio::task::JoinSet::new();
    for g in others.iter().cloned().chain(["g1".to_string()]) {
        let store = store.clone();
        commits.spawn(async move {
            let version = if g == "g1" { 4 } else { 2 };
            (g.clone(), act(&store, &g, "white", "r1", version).await)
        });
    }
    while let Some(done) = commits.join_next().await {
        match done.unwrap() {
            (g, reused) if g == "g1" => {
                assert!(matches!(reused, Err(StoreError::Duplicate)), "{reused:?}")
            }
            (g, result) => assert!(result.is_ok(), "{g}: {result:?}"),
        }
    }
    assert_eq!(store.version("g1").await.unwrap(), Some(3));
    assert!(store.log_after("g1", 3).await.unwrap().is_empty());
    act(&store, "g1", "white", "r2", 4).await.unwrap();
    assert_eq!(
        store.log_after("g1", 0).await.unwrap(),
        (1..=4).map(entry).collect::<Vec<_>>()
    );
}

/// Action ids in their games' scopes are forgotten once older than the
/// time given, across batches (more than one game's log, more than 1000
/// rows), and are then free for another action; the log itself, NewGame's
/// ids and ids recorded after the sweep stay.
async fn action_ids_in_their_games_scopes_are_forgotten_in_time_and_then_free<B: Backend>(
    place: &B,
) {
    const MOVES: u64 = 600;
    let store = place.open().await;
    for g in ["g0", "g1"] {
        store
            .create(
                &game(g, 1, "s1"),
                &entry(1),
                Some(&request(NEW_GAME_SCOPE, g)),
            )
            .await
            .unwrap();
        for version in 2..MOVES + 2 {
            act(&store, g, "white", &format!("r{version}"), version)
                .await
                .unwrap();
        }
    }
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 0);
    let scope = action_scope("g0", "white");
    assert!(store.request(&scope, "r2").await.unwrap().is_some());
    let refused = act(&store, "g0", "white", "r2", MOVES + 2).await;
    assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");

    let soon = SystemTime::now() + Duration::from_secs(2);
    assert_eq!(store.forget_requests(soon).await.unwrap(), 2 * MOVES);
    for id in ["r2", "r3", &format!("r{}", MOVES + 1)] {
        assert!(store.request(&scope, id).await.unwrap().is_none(), "{id}");
    }
    assert_eq!(
        store.request(NEW_GAME_SCOPE, "g1").await.unwrap(),
        Some(request(NEW_GAME_SCOPE, "g1")),
        "NewGame's ids are kept"
    );
    // A forgotten id is free again, and then answered by its new action.
    act(&store, "g0", "white", "r2", MOVES + 2).await.unwrap();
    assert_eq!(
        store.request(&scope, "r2").await.unwrap(),
        Some(action_request("g0", "white", "r2", MOVES + 2))
    );
    assert_eq!(
        store.log_after("g0", 0).await.unwrap(),
        (1..=MOVES + 2).map(entry).collect::<Vec<_>>()
    );
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 0);
    let refused = act(&store, "g0", "white", "r2", MOVES + 3).await;
    assert!(matches!(refused, Err(StoreError::Duplicate)), "{refused:?}");
}

/// NewGame's request id is stored with the game it created, in its own
/// scope; a second game under the same id is refused and not stored.
async fn a_new_game_s_request_id_is_recorded_with_the_game<B: Backend>(place: &B) {
    let store = place.open().await;
    let new_game = request(NEW_GAME_SCOPE, "n1");
    store
        .create(&game("g1", 1, "a"), &entry(1), Some(&new_game))
        .await
        .unwrap();
    assert_eq!(
        store.request(NEW_GAME_SCOPE, "n1").await.unwrap(),
        Some(new_game.clone())
    );
    assert!(store.request("g1", "n1").await.unwrap().is_none());

    let retry = store
        .create(&game("g2", 1, "a"), &entry(1), Some(&new_game))
        .await;
    assert!(matches!(retry, Err(StoreError::Duplicate)), "{retry:?}");
    assert!(store.load("g2").await.unwrap().is_none());
    assert!(store.log_after("g2", 0).await.unwrap().is_empty());
}

/// A game id is stored once: creating it again is Duplicate and leaves the
/// game, its log and the request ids as they were.
async fn a_game_id_is_stored_only_once<B: Backend>(place: &B) {
    let store = place.open().await;
    store
        .create(&game("g1", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    let again = store
        .create(
            &game("g1", 1, "other"),
            &LogEntry {
                version: 1,
                text: "other".into(),
                feed: Default::default(),
            },
            Some(&request(NEW_GAME_SCOPE, "n2")),
        )
        .await;
    assert!(matches!(again, Err(StoreError::Duplicate)), "{again:?}");
    assert_eq!(store.load("g1").await.unwrap(), Some(game("g1", 1, "a")));
    assert_eq!(store.log_after("g1", 0).await.unwrap(), vec![entry(1)]);
    assert!(store.request(NEW_GAME_SCOPE, "n2").await.unwrap().is_none());
}

/// Request ids older than the given time are forgotten, in batches (more
/// than one here); newer ones, NewGame's, the games and events stay.
async fn old_request_ids_are_forgotten_and_recent_ones_kept<B: Backend>(place: &B) {
    // More than one batch (the stores forget 1000 at a time).
    const IDS: u64 = 1005;
    let store = place.open().await;
    let new_game = request(NEW_GAME_SCOPE, "n1");
    store
        .create(&game("g0", 1, "a"), &entry(1), Some(&new_game))
        .await
        .unwrap();
    for n in 0..IDS {
        let version = n + 1;
        store
            .commit(
                &game("g0", version + 1, "b"),
                version,
                &entry(version + 1),
                Some(&request("g0", &format!("r{n}"))),
            )
            .await
            .unwrap();
    }
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 0);
    assert!(store.request("g0", "r0").await.unwrap().is_some());

    let soon = SystemTime::now() + Duration::from_secs(2);
    assert_eq!(store.forget_requests(soon).await.unwrap(), IDS);
    for n in [0, 999, 1000, IDS - 1] {
        assert!(
            store
                .request("g0", &format!("r{n}"))
                .await
                .unwrap()
                .is_none()
        );
    }
    assert_eq!(
        store.request(NEW_GAME_SCOPE, "n1").await.unwrap(),
        Some(new_game),
        "NewGame's ids are kept"
    );
    assert_eq!(store.version("g0").await.unwrap(), Some(IDS + 1));
    assert_eq!(
        store.log_after("g0", 0).await.unwrap().len() as u64,
        IDS + 1
    );
    assert_eq!(store.forget_requests(soon).await.unwrap(), 0);
}

/// A commit to a game that was never created is NotFound and stores
/// nothing, neither its log entry nor its request id, also when it lands
/// in one group with commits to games that exist (which all apply).
async fn a_commit_to_an_unknown_game_stores_nothing_even_among_others<B: Backend>(place: &B) {
    let store = place.open().await;
    for g in 0..12 {
        store
            .create(&game(&format!("k{g}"), 1, "a"), &entry(1), None)
            .await
            .unwrap();
    }
    let tasks: Vec<_> = (0..13)
        .map(|g| {
            let store = store.clone();
            // k12 does not exist.
            tokio::spawn(async move {
                let id = format!("k{g}");
                store
                    .commit(&game(&id, 2, "b"), 1, &entry(2), Some(&request(&id, "r")))
                    .await
            })
        })
        .collect();
    for (g, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        let id = format!("k{g}");
        if g == 12 {
            assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
            assert!(store.load(&id).await.unwrap().is_none());
            assert!(store.version(&id).await.unwrap().is_none());
            assert!(store.log_after(&id, 0).await.unwrap().is_empty());
            assert!(store.request(&id, "r").await.unwrap().is_none());
        } else {
            result.unwrap();
            assert_eq!(store.load(&id).await.unwrap(), Some(game(&id, 2, "b")));
            assert_eq!(
                store.log_after(&id, 0).await.unwrap(),
                vec![entry(1), entry(2)]
            );
        }
    }
}

/// Twenty writers at once each get their own result: the one with a stale
/// version fails alone, every other is applied.
async fn concurrent_commits_each_get_their_own_result<B: Backend>(place: &B) {
    let store = place.open().await;
    for g in 0..20 {
        store
            .create(&game(&format!("g{g}"), 1, "a"), &entry(1), None)
            .await
            .unwrap();
    }
    let tasks: Vec<_> = (0..20)
        .map(|g| {
            let store = store.clone();
            // Game 7 is given a stale version: only it must fail.
            let expected = if g == 7 { 5 } else { 1 };
            tokio::spawn(async move {
                store
                    .commit(
                        &game(&format!("g{g}"), 2, "b"),
                        expected,
                        &entry(2),
                        Some(&request(&format!("g{g}"), "r")),
                    )
                    .await
            })
        })
        .collect();
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
        let id = format!("g{g}");
        let applied = g != 7;
        let expected = if applied {
            game(&id, 2, "b")
        } else {
            game(&id, 1, "a")
        };
        assert_eq!(store.load(&id).await.unwrap(), Some(expected));
        assert_eq!(
            store.log_after(&id, 1).await.unwrap().len(),
            applied as usize
        );
        assert_eq!(store.request(&id, "r").await.unwrap().is_some(), applied);
    }
}

/// Creates and commits arriving together all land with their events and
/// request ids; a reused request id among them fails only its own write.
async fn concurrent_creates_and_commits_land_and_a_reused_request_id_fails_alone<B: Backend>(
    place: &B,
) {
    let store = place.open().await;
    for g in 0..10 {
        store
            .create(&game(&format!("old{g}"), 1, "a"), &entry(1), None)
            .await
            .unwrap();
    }
    // Round 1: ten creates and ten commits, all valid.
    let mut tasks = Vec::new();
    for g in 0..10 {
        let creator = store.clone();
        tasks.push(tokio::spawn(async move {
            let new = format!("new{g}");
            creator
                .create(
                    &game(&new, 1, "a"),
                    &entry(1),
                    Some(&request(NEW_GAME_SCOPE, &new)),
                )
                .await
        }));
        let committer = store.clone();
        tasks.push(tokio::spawn(async move {
            let old = format!("old{g}");
            committer
                .commit(
                    &game(&old, 2, "b"),
                    1,
                    &entry(2),
                    Some(&request(&old, "first")),
                )
                .await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    for g in 0..10 {
        let old = format!("old{g}");
        assert_eq!(store.version(&old).await.unwrap(), Some(2));
        assert_eq!(store.log_after(&old, 1).await.unwrap(), vec![entry(2)]);
        assert!(store.request(&old, "first").await.unwrap().is_some());
        let new = format!("new{g}");
        assert_eq!(store.load(&new).await.unwrap(), Some(game(&new, 1, "a")));
        assert!(store.request(NEW_GAME_SCOPE, &new).await.unwrap().is_some());
    }

    // Round 2: game 0 reuses its request id; the others go through.
    let tasks: Vec<_> = (0..10)
        .map(|g| {
            let committer = store.clone();
            tokio::spawn(async move {
                let old = format!("old{g}");
                let id = if g == 0 { "first" } else { "second" };
                committer
                    .commit(&game(&old, 3, "c"), 2, &entry(3), Some(&request(&old, id)))
                    .await
            })
        })
        .collect();
    for (g, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        let old = format!("old{g}");
        if g == 0 {
            assert!(matches!(result, Err(StoreError::Duplicate)), "{result:?}");
            assert_eq!(store.version(&old).await.unwrap(), Some(2));
            assert!(store.log_after(&old, 2).await.unwrap().is_empty());
        } else {
            result.unwrap();
            assert_eq!(store.version(&old).await.unwrap(), Some(3));
            assert!(store.request(&old, "second").await.unwrap().is_some());
        }
    }
}

/// A store opened again (a restart) finds every game committed, with its
/// events, request ids and settings.
async fn reopening_finds_every_committed_game<B: Backend>(place: &B) {
    {
        let store = place.open().await;
        for g in 0..5 {
            let id = format!("g{g}");
            store
                .create(
                    &game(&id, 1, "a"),
                    &entry(1),
                    Some(&request(NEW_GAME_SCOPE, &id)),
                )
                .await
                .unwrap();
            for version in 2..=g + 2 {
                store
                    .commit(
                        &game(&id, version, &format!("s{version}")),
                        version - 1,
                        &entry(version),
                        Some(&request(&id, &format!("r{version}"))),
                    )
                    .await
                    .unwrap();
            }
        }
        store.set_setting("key", b"value").await.unwrap();
        store.close().await;
    }
    let store = place.open().await;
    for g in 0..5u64 {
        let id = format!("g{g}");
        let last = g + 2;
        assert_eq!(
            store.load(&id).await.unwrap(),
            Some(game(&id, last, &format!("s{last}")))
        );
        let log: Vec<LogEntry> = (1..=last).map(entry).collect();
        assert_eq!(store.log_after(&id, 0).await.unwrap(), log);
        assert!(store.request(NEW_GAME_SCOPE, &id).await.unwrap().is_some());
        assert!(
            store
                .request(&id, &format!("r{last}"))
                .await
                .unwrap()
                .is_some()
        );
    }
    assert!(store.load("g5").await.unwrap().is_none());
    assert_eq!(store.setting("key").await.unwrap(), Some(b"value".to_vec()));
    // And it takes writes.
    store
        .commit(&game("g0", 3, "s3"), 2, &entry(3), None)
        .await
        .unwrap();
}

/// A damaged row fails its own reads with Corrupt (no panic); other games
/// read as before.
async fn a_corrupt_row_is_reported_for_that_game_only<B: Backend>(place: &B) {
    let store = place.open().await;
    for g in 0..2 {
        store
            .create(&game(&format!("g{g}"), 1, "a"), &entry(1), None)
            .await
            .unwrap();
    }
    let restore = "UPDATE games SET version = 1, state = 'a', white_token_hash = \
                   (SELECT white_token_hash FROM games WHERE game_id = 'g1') \
                   WHERE game_id = 'g0'";
    let shared_damage = [
        "UPDATE games SET version = -3 WHERE game_id = 'g0'",
        "UPDATE games SET version = 0 WHERE game_id = 'g0'",
    ];
    for damage in shared_damage.iter().chain(B::OWN_DAMAGE) {
        place.execute(damage).await;
        let read = store.load("g0").await;
        assert!(
            matches!(read, Err(StoreError::Corrupt(_))),
            "{damage}: {read:?}"
        );
        assert_eq!(store.load("g1").await.unwrap(), Some(game("g1", 1, "a")));
        place.execute(restore).await;
        assert_eq!(store.load("g0").await.unwrap(), Some(game("g0", 1, "a")));
    }
    place
        .execute("UPDATE games SET version = -3 WHERE game_id = 'g0'")
        .await;
    let read = store.version("g0").await;
    assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
    assert_eq!(store.version("g1").await.unwrap(), Some(1));

    // The log's text is the server's, not the store's to judge: text that
    // is no JSON reads back as it is.
    place
        .execute("UPDATE game_events SET events = '[1,' WHERE game_id = 'g0'")
        .await;
    let unjudged = LogEntry {
        version: 1,
        text: "[1,".into(),
        feed: Default::default(),
    };
    assert_eq!(store.log_after("g0", 0).await.unwrap(), vec![unjudged]);
    for damage in B::OWN_LOG_DAMAGE {
        place.execute(damage).await;
        let read = store.log_after("g0", 0).await;
        assert!(
            matches!(read, Err(StoreError::Corrupt(_))),
            "{damage}: {read:?}"
        );
        assert_eq!(store.log_after("g1", 0).await.unwrap(), vec![entry(1)]);
        place
            .execute("UPDATE game_events SET version = 1, events = 'restored' WHERE game_id = 'g0'")
            .await;
        assert_eq!(store.log_after("g0", 0).await.unwrap().len(), 1);
    }
}

/// A request row must hold exactly one answer (a version, a game created,
/// or an older server's response): one with none, several, or a version
/// that is none, fails its own reads with Corrupt naming the row (no
/// panic); other request ids read as before.
async fn a_request_row_without_exactly_one_answer_is_corrupt<B: Backend>(place: &B) {
    let store = place.open().await;
    store
        .create(&game("g", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    store
        .commit(&game("g", 2, "b"), 1, &entry(2), Some(&request("g", "bad")))
        .await
        .unwrap();
    store
        .commit(
            &game("g", 3, "c"),
            2,
            &entry(3),
            Some(&request("g", "good")),
        )
        .await
        .unwrap();
    let shared_damage = [
        "UPDATE requests SET version = NULL WHERE request_id = 'bad'",
        "UPDATE requests SET game_id = 'g' WHERE request_id = 'bad'",
        "UPDATE requests SET version = NULL, game_id = 'g', response = 'x' WHERE request_id = 'bad'",
        "UPDATE requests SET version = 0 WHERE request_id = 'bad'",
        "UPDATE requests SET version = -5 WHERE request_id = 'bad'",
    ];
    let restore = "UPDATE requests SET version = 2, game_id = NULL, response = NULL \
                   WHERE request_id = 'bad'";
    for damage in shared_damage.iter().chain(B::OWN_REQUEST_DAMAGE) {
        place.execute(damage).await;
        match store.request("g", "bad").await {
            Err(StoreError::Corrupt(message)) => {
                assert!(message.contains("\"bad\""), "{damage}: {message}")
            }
            read => panic!("{damage}: {read:?}"),
        }
        assert_eq!(
            store.request("g", "good").await.unwrap(),
            Some(request("g", "good"))
        );
        place.execute(restore).await;
        let read = store.request("g", "bad").await.unwrap().unwrap();
        assert_eq!(read.answer, Answer::Version(2));
    }
}

/// `version` gives the stored version, and none for an unknown game.
async fn version_gives_the_stored_version_and_none_for_an_unknown_game<B: Backend>(place: &B) {
    let store = place.open().await;
    assert_eq!(store.version("g").await.unwrap(), None);
    store
        .create(&game("g", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    assert_eq!(store.version("g").await.unwrap(), Some(1));
    store
        .commit(&game("g", 2, "b"), 1, &entry(2), None)
        .await
        .unwrap();
    assert_eq!(store.version("g").await.unwrap(), Some(2));
    let _ = store.commit(&game("g", 2, "c"), 1, &entry(2), None).await;
    assert_eq!(store.version("g").await.unwrap(), Some(2));
    assert_eq!(store.version("h").await.unwrap(), None);
}

/// A setting is read back as set, replaced by `set_setting`, and claimed
/// once: the first claim wins and every later one learns its value.
async fn a_setting_is_kept_and_claimed_by_the_first_only<B: Backend>(place: &B) {
    let store = place.open().await;
    assert_eq!(store.setting("a").await.unwrap(), None);
    store.set_setting("a", b"one").await.unwrap();
    assert_eq!(store.setting("a").await.unwrap(), Some(b"one".to_vec()));
    store.set_setting("a", b"two").await.unwrap();
    assert_eq!(store.setting("a").await.unwrap(), Some(b"two".to_vec()));
    assert_eq!(store.claim_setting("a", b"three").await.unwrap(), b"two");
    assert_eq!(store.setting("a").await.unwrap(), Some(b"two".to_vec()));

    assert_eq!(store.claim_setting("b", b"first").await.unwrap(), b"first");
    assert_eq!(store.claim_setting("b", b"second").await.unwrap(), b"first");
    assert_eq!(store.setting("b").await.unwrap(), Some(b"first".to_vec()));
    // Claimed by a store opened later (another server starting).
    let other = place.open().await;
    assert_eq!(other.claim_setting("b", b"third").await.unwrap(), b"first");
    assert_eq!(store.setting("c").await.unwrap(), None);
}

/// `holds_games` is false in a new store and true once a game is stored.
async fn holds_games_says_whether_any_game_is_stored<B: Backend>(place: &B) {
    let store = place.open().await;
    assert!(!store.holds_games().await.unwrap());
    store.set_setting("a", b"x").await.unwrap();
    assert!(!store.holds_games().await.unwrap(), "a setting is no game");
    store
        .create(&game("g", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    assert!(store.holds_games().await.unwrap());
    assert!(place.open().await.holds_games().await.unwrap());
}

/// A store only this process writes says so and announces nothing; a
/// shared one announces every commit, its own included, in order, never
/// before the commit can be read.
async fn only_a_shared_store_announces_commits<B: Backend>(place: &B) {
    let store = place.open().await;
    assert!(*store.writable().borrow());
    let Some(mut changes) = store.changes() else {
        assert!(!store.shared(), "a shared store must announce commits");
        return;
    };
    assert!(store.shared(), "a store that announces commits is shared");
    store
        .create(&game("g", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    for version in 2..=6 {
        store
            .commit(&game("g", version, "b"), version - 1, &entry(version), None)
            .await
            .unwrap();
    }
    for version in 2..=6 {
        assert_eq!(next_change_of(&mut changes, "g").await, version);
        assert!(store.version("g").await.unwrap() >= Some(version));
    }
}

/// Every kind of answer is recorded and read back as given, by `create`
/// and by `commit`, alone and in a group of concurrent writes: an action's
/// version, a created game's id, an older server's whole response. Empty
/// ones too: an empty answer is still an answer, not a missing one.
async fn every_answer_kind_round_trips_through_commit_create_and_request<B: Backend>(place: &B) {
    let answers = [
        Answer::Version(2),
        Answer::Version(i64::MAX as u64),
        Answer::Created("g-ü 1".into()),
        Answer::Created(String::new()),
        Answer::Response(vec![0, 255, 10, 0]),
        Answer::Response(Vec::new()),
        Answer::Response((0..=255).cycle().take(70_000).collect()),
    ];
    /// The request ids of game `id`: its NewGame's, and its first move's.
    fn requests(id: &str, answer: &Answer) -> [RequestRecord; 2] {
        [
            RequestRecord {
                scope: NEW_GAME_SCOPE.into(),
                request_id: format!("new {id}"),
                fingerprint: id.as_bytes().to_vec(),
                answer: answer.clone(),
            },
            RequestRecord {
                scope: format!("{id}:white"),
                request_id: format!("move {id}"),
                fingerprint: Vec::new(),
                answer: answer.clone(),
            },
        ]
    }
    async fn write<S: GameStore>(store: S, id: String, answer: Answer) {
        let [created, moved] = requests(&id, &answer);
        store
            .create(&game(&id, 1, "a"), &entry(1), Some(&created))
            .await
            .unwrap();
        store
            .commit(&game(&id, 2, "b"), 1, &entry(2), Some(&moved))
            .await
            .unwrap();
    }

    let store = place.open().await;
    // One write at a time, then all at once (a store may group those).
    for (n, answer) in answers.iter().enumerate() {
        write(store.clone(), format!("alone{n}"), answer.clone()).await;
    }
    let together: Vec<_> = answers
        .iter()
        .enumerate()
        .map(|(n, answer)| {
            tokio::spawn(write(store.clone(), format!("together{n}"), answer.clone()))
        })
        .collect();
    for task in together {
        task.await.unwrap();
    }
    for store in [store, place.open().await] {
        for (n, answer) in answers.iter().enumerate() {
            for id in [format!("alone{n}"), format!("together{n}")] {
                for written in requests(&id, answer) {
                    let read = store
                        .request(&written.scope, &written.request_id)
                        .await
                        .unwrap();
                    assert_eq!(read.as_ref(), Some(&written), "{id}");
                }
            }
        }
    }
}

/// An answer that could not be read back as written (version 0, or a
/// version past the columns' range) is refused before anything is
/// written: the game, its log and its request ids stay as they were, and
/// the store still takes writes.
async fn an_answer_that_cannot_be_read_back_is_refused_and_nothing_is_stored<B: Backend>(
    place: &B,
) {
    let store = place.open().await;
    store
        .create(&game("g", 1, "a"), &entry(1), None)
        .await
        .unwrap();
    for version in [0, i64::MAX as u64 + 1, u64::MAX] {
        let unreadable = RequestRecord {
            answer: Answer::Version(version),
            ..request("g", "r")
        };
        let refused = store
            .commit(&game("g", 2, "b"), 1, &entry(2), Some(&unreadable))
            .await;
        assert!(
            matches!(refused, Err(StoreError::Corrupt(_))),
            "version {version}: {refused:?}"
        );
        let new_game = RequestRecord {
            scope: NEW_GAME_SCOPE.into(),
            ..unreadable
        };
        let refused = store
            .create(&game("h", 1, "a"), &entry(1), Some(&new_game))
            .await;
        assert!(
            matches!(refused, Err(StoreError::Corrupt(_))),
            "version {version}: {refused:?}"
        );
    }
    assert_eq!(store.load("g").await.unwrap(), Some(game("g", 1, "a")));
    assert_eq!(store.log_after("g", 0).await.unwrap(), vec![entry(1)]);
    assert!(store.request("g", "r").await.unwrap().is_none());
    assert!(store.load("h").await.unwrap().is_none());
    assert!(store.request(NEW_GAME_SCOPE, "r").await.unwrap().is_none());
    assert!(*store.writable().borrow());
    store
        .commit(&game("g", 2, "b"), 1, &entry(2), Some(&request("g", "r")))
        .await
        .unwrap();
    assert_eq!(
        store.request("g", "r").await.unwrap(),
        Some(request("g", "r"))
    );
}

/// A log entry's text is the server's, stored and given back byte for
/// byte, whatever it holds: nothing, any Unicode, quotes and escapes,
/// text that is no JSON, megabytes.
async fn a_log_entry_s_text_comes_back_byte_for_byte<B: Backend>(place: &B) {
    let large: String = (0..200_000).map(|i| format!("{i}:ü♟🎲;")).collect();
    assert!(large.len() > 3_000_000);
    let texts = [
        String::new(),
        "é ♟ 漢字 🎲 e\u{301} \u{200d}\u{feff}".into(),
        "quotes ' '' \" `; backslashes \\ \\x00 \\\\; ?1 $1 %s\n\r\n\ttab".into(),
        "[1,".into(),
        "  spaces at both ends  ".into(),
        large,
    ];
    let store = place.open().await;
    let entries: Vec<LogEntry> = texts
        .iter()
        .enumerate()
        .map(|(n, text)| LogEntry {
            version: n as u64 + 1,
            text: text.clone(),
            feed: Default::default(),
        })
        .collect();
    store
        .create(&game("g", 1, "a"), &entries[0], None)
        .await
        .unwrap();
    for logged in &entries[1..] {
        store
            .commit(
                &game("g", logged.version, "b"),
                logged.version - 1,
                logged,
                None,
            )
            .await
            .unwrap();
    }
    for store in [store, place.open().await] {
        let read = store.log_after("g", 0).await.unwrap();
        assert_eq!(read.len(), entries.len());
        for (read, written) in read.iter().zip(&entries) {
            assert_eq!(read.version, written.version);
            // Compared as bytes, without printing megabytes on failure.
            assert!(
                read.text.as_bytes() == written.text.as_bytes(),
                "version {}: {} bytes read, {} written",
                written.version,
                read.text.len(),
                written.text.len()
            );
        }
    }
}

/// Forgetting deletes exactly the action ids recorded before the time
/// given, across more than one batch of either store (1000 keys walked
/// or 1000 ids deleted at a time), with the ids kept (recent ones, and
/// NewGame's however old: a late retry must not create a second game)
/// among and between them in key order; the games and their logs stay.
async fn forgetting_deletes_only_old_action_ids_across_batches<B: Backend>(place: &B) {
    // Scopes on both sides of NewGame's in key order.
    let games: Vec<String> = (0..10)
        .flat_map(|n| [format!("a{n}"), format!("z{n}")])
        .collect();
    const MOVES: u64 = 80;
    /// The request id of the move to `version`: three in four are old.
    fn move_id(version: u64) -> String {
        let age = if version.is_multiple_of(4) {
            "recent"
        } else {
            "old"
        };
        format!("{age}-{version}")
    }
    let store = place.open().await;
    let tasks: Vec<_> = games
        .iter()
        .map(|id| {
            let (store, id) = (store.clone(), id.clone());
            tokio::spawn(async move {
                let new_game = request(NEW_GAME_SCOPE, &id);
                store
                    .create(&game(&id, 1, "a"), &entry(1), Some(&new_game))
                    .await
                    .unwrap();
                for version in 2..MOVES + 2 {
                    store
                        .commit(
                            &game(&id, version, "b"),
                            version - 1,
                            &entry(version),
                            Some(&request(&id, &move_id(version))),
                        )
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    // Recorded long ago: the old moves' ids and every NewGame id.
    place
        .execute(&format!(
            "UPDATE requests SET created_at = 0 WHERE request_id LIKE 'old-%' OR scope = '{NEW_GAME_SCOPE}'"
        ))
        .await;
    assert_eq!(
        store.forget_requests(SystemTime::UNIX_EPOCH).await.unwrap(),
        0,
        "nothing was recorded before 1970"
    );
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let old = games.len() as u64 * (MOVES - MOVES / 4);
    assert!(old > 1000, "more than one batch");
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), old);
    for id in &games {
        assert_eq!(
            store.request(NEW_GAME_SCOPE, id).await.unwrap(),
            Some(request(NEW_GAME_SCOPE, id)),
            "NewGame's ids are kept"
        );
        for version in 2..MOVES + 2 {
            let kept = store.request(id, &move_id(version)).await.unwrap();
            assert_eq!(
                kept.is_some(),
                version.is_multiple_of(4),
                "{id} {}",
                move_id(version)
            );
        }
        assert_eq!(store.version(id).await.unwrap(), Some(MOVES + 1));
        assert_eq!(
            store.log_after(id, 0).await.unwrap().len() as u64,
            MOVES + 1
        );
    }
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 0);
}

/// A database written by a server from before lean request ids (its
/// migrations, its rows: request ids with their whole response, logs of
/// JSON arrays) reads back whole once the store opens it and applies the
/// newer migrations: old answers as [`Answer::Response`], old log text as
/// stored. The old ids still count as used, are forgotten like new ones
/// (NewGame's kept), and new writes land beside them.
async fn a_database_made_by_the_old_migrations_reads_back_after_the_upgrade<B: Backend>(place: &B) {
    place.migrate_old().await;
    let old_log = [
        r#"[{"version":1,"index":0,"kind":"created","seat":null,"detail":"{}"}]"#,
        r#"[{"version":2,"index":0,"kind":"rolled","seat":0,"detail":"{\"dice\":[3,1]}"},{"version":2,"index":1,"kind":"moved","seat":0,"detail":"{}"}]"#,
    ];
    let (new_game_answer, move_answer, stale_answer) =
        (vec![8, 0, 1, 2], vec![8, 2, 255, 0, 7], vec![1]);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let fingerprint = B::bytes_literal(&[7; 32]);
    place
        .execute(&format!(
            "INSERT INTO games (game_id, variant, variant_version, options, version, state, \
                                white_token_hash, black_token_hash) \
             VALUES ('old', 'standard', '0.1.0', '{{\"cube\":true}}', 2, 'b', {white}, {black}); \
             INSERT INTO game_events (game_id, version, events) \
             VALUES ('old', 1, '{log1}'), ('old', 2, '{log2}'); \
             INSERT INTO requests (scope, request_id, fingerprint, response, created_at) \
             VALUES ('{NEW_GAME_SCOPE}', 'n-old', {fingerprint}, {new_game}, 0), \
                    ('old:white', 'r-old', {fingerprint}, {moved}, {now}), \
                    ('old:white', 'r-stale', {fingerprint}, {stale}, 0);",
            white = B::bytes_literal(&[1; 32]),
            black = B::bytes_literal(&[2; 32]),
            log1 = old_log[0],
            log2 = old_log[1],
            new_game = B::bytes_literal(&new_game_answer),
            moved = B::bytes_literal(&move_answer),
            stale = B::bytes_literal(&stale_answer),
        ))
        .await;

    let store = place.open().await;
    let loaded = store.load("old").await.unwrap().unwrap();
    // The fleet's index came with the upgrade: no labels, no players,
    // its times from the row's own (after 2001).
    assert_eq!(loaded.index.labels, "{}");
    assert!(
        loaded.index.created_us > 1_000_000_000_000_000,
        "{:?}",
        loaded.index
    );
    assert_eq!(
        GameRecord {
            index: MatchIndex::default(),
            ..loaded
        },
        game("old", 2, "b")
    );
    let logged: Vec<LogEntry> = old_log
        .iter()
        .zip(1..)
        .map(|(text, version)| LogEntry {
            version,
            text: text.to_string(),
            feed: Default::default(),
        })
        .collect();
    assert_eq!(store.log_after("old", 0).await.unwrap(), logged);
    let old_request = |scope: &str, id: &str, response: &[u8]| RequestRecord {
        scope: scope.into(),
        request_id: id.into(),
        fingerprint: vec![7; 32],
        answer: Answer::Response(response.to_vec()),
    };
    assert_eq!(
        store.request(NEW_GAME_SCOPE, "n-old").await.unwrap(),
        Some(old_request(NEW_GAME_SCOPE, "n-old", &new_game_answer))
    );
    assert_eq!(
        store.request("old:white", "r-old").await.unwrap(),
        Some(old_request("old:white", "r-old", &move_answer))
    );

    // An old id is still used: the whole commit is refused.
    let reused = store
        .commit(
            &game("old", 3, "c"),
            2,
            &entry(3),
            Some(&request("old:white", "r-old")),
        )
        .await;
    assert!(matches!(reused, Err(StoreError::Duplicate)), "{reused:?}");
    assert_eq!(store.version("old").await.unwrap(), Some(2));
    // New writes land beside the old rows.
    store
        .commit(
            &game("old", 3, "c"),
            2,
            &entry(3),
            Some(&request("old:white", "r-new")),
        )
        .await
        .unwrap();
    assert_eq!(
        store.request("old:white", "r-new").await.unwrap(),
        Some(request("old:white", "r-new"))
    );
    assert_eq!(store.log_after("old", 2).await.unwrap(), vec![entry(3)]);
    // The old action id recorded long ago is forgotten; NewGame's is kept.
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(store.forget_requests(an_hour_ago).await.unwrap(), 1);
    assert!(
        store
            .request("old:white", "r-stale")
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.request("old:white", "r-old").await.unwrap().is_some());
    assert!(
        store
            .request(NEW_GAME_SCOPE, "n-old")
            .await
            .unwrap()
            .is_some()
    );
}

conformance! {
    a_game_reads_back_as_written,
    a_match_that_ended_is_listed_and_removed_whole,
    games_whose_clock_ran_out_are_listed_by_their_deadline,
    a_commit_applies_only_on_the_expected_version,
    log_entries_come_back_in_order_after_any_version,
    a_request_id_is_recorded_once_with_its_answer,
    an_action_id_in_its_game_s_scope_is_used_once_even_after_a_restart,
    action_ids_in_their_games_scopes_are_forgotten_in_time_and_then_free,
    a_new_game_s_request_id_is_recorded_with_the_game,
    a_game_id_is_stored_only_once,
    old_request_ids_are_forgotten_and_recent_ones_kept,
    concurrent_commits_each_get_their_own_result,
    a_commit_to_an_unknown_game_stores_nothing_even_among_others,
    concurrent_creates_and_commits_land_and_a_reused_request_id_fails_alone,
    reopening_finds_every_committed_game,
    a_corrupt_row_is_reported_for_that_game_only,
    a_request_row_without_exactly_one_answer_is_corrupt,
    version_gives_the_stored_version_and_none_for_an_unknown_game,
    a_setting_is_kept_and_claimed_by_the_first_only,
    holds_games_says_whether_any_game_is_stored,
    only_a_shared_store_announces_commits,
    every_answer_kind_round_trips_through_commit_create_and_request,
    an_answer_that_cannot_be_read_back_is_refused_and_nothing_is_stored,
    a_log_entry_s_text_comes_back_byte_for_byte,
    forgetting_deletes_only_old_action_ids_across_batches,
    a_database_made_by_the_old_migrations_reads_back_after_the_upgrade,
    a_match_s_index_reads_back_and_changes_with_its_commits,
    matches_are_listed_by_page_in_either_order_and_filtered,
    the_feed_gives_every_commit_once_in_commit_order_with_its_match_s_words,
    the_feed_is_trimmed_by_age_and_says_how_far,
    webhook_deliveries_are_staged_once_claimed_for_a_lease_and_settled,
    the_feed_keeps_what_an_active_webhook_endpoint_has_not_staged,
}

// ---- The fleet: the index, lists and the feed ---------------------------------

/// The feed row of a removal (any bits: the store keeps them as given).
fn removal() -> Feed {
    Feed {
        kinds: 1 << 4,
        detail: Vec::new(),
    }
}

/// A match with its index: labels, players, owner and creation time.
fn indexed(id: &str, created_us: i64, players: [&str; 2], owner: &str) -> GameRecord {
    GameRecord {
        index: MatchIndex {
            labels: format!(r#"{{"table":"{id}"}}"#),
            players: players.map(String::from),
            owner: owner.into(),
            to_act: 1,
            abandoned: false,
            created_us,
            updated_us: created_us,
        },
        ..game(id, 1, "start")
    }
}

/// An entry whose feed row holds these kinds and detail.
fn fed(version: u64, kinds: u32, detail: &[u8]) -> LogEntry {
    LogEntry {
        feed: Feed {
            kinds,
            detail: detail.to_vec(),
        },
        ..entry(version)
    }
}

async fn a_match_s_index_reads_back_and_changes_with_its_commits<B: Backend>(place: &B) {
    let store = place.open().await;
    let written = indexed("g", 1_700_000_000_123_456, ["ann", "bob"], "cert:1");
    store.create(&written, &entry(1), None).await.unwrap();
    assert_eq!(store.load("g").await.unwrap(), Some(written.clone()));
    let mut next = GameRecord {
        version: 2,
        finished: true,
        ..written.clone()
    };
    next.index.to_act = 0;
    next.index.abandoned = true;
    next.index.updated_us += 5;
    // Labels, players, owner and creation are written once: a commit
    // that says otherwise changes none of them.
    next.index.labels = "{}".into();
    store.commit(&next, 1, &entry(2), None).await.unwrap();
    let read = store.load("g").await.unwrap().unwrap();
    assert_eq!(read.index.to_act, 0);
    assert!(read.index.abandoned);
    assert_eq!(read.index.updated_us, written.index.updated_us + 5);
    assert_eq!(read.index.labels, written.index.labels);
    assert_eq!(read.index.created_us, written.index.created_us);
}

async fn matches_are_listed_by_page_in_either_order_and_filtered<B: Backend>(place: &B) {
    let store = place.open().await;
    // Two matches share a creation time: the game id orders them.
    let made = [
        indexed("a", 10, ["p1", "p2"], "o1"),
        indexed("b", 20, ["p2", "p3"], "o1"),
        indexed("c", 20, ["p3", "p1"], "o2"),
        indexed("d", 30, ["", ""], "o1"),
    ];
    for g in &made {
        store.create(g, &entry(1), None).await.unwrap();
    }
    let ids =
        |rows: &[bg_store::MatchRow]| rows.iter().map(|r| r.game_id.clone()).collect::<Vec<_>>();
    // Pages of two, ascending then descending, each after the last key.
    for (descending, expected) in [(false, ["a", "b", "c", "d"]), (true, ["d", "c", "b", "a"])] {
        let mut query = MatchQuery {
            descending,
            limit: 2,
            ..Default::default()
        };
        let mut seen = Vec::new();
        loop {
            let page = store.list_matches(&query).await.unwrap();
            let Some(last) = page.last() else { break };
            query.after = Some((last.index.created_us, last.game_id.clone()));
            seen.extend(ids(&page));
        }
        assert_eq!(seen, expected, "descending {descending}");
    }
    let all = |q: MatchQuery| {
        let store = store.clone();
        async move {
            ids(&store
                .list_matches(&MatchQuery { limit: 100, ..q })
                .await
                .unwrap())
        }
    };
    assert_eq!(
        all(MatchQuery {
            player: Some("p1".into()),
            ..Default::default()
        })
        .await,
        ["a", "c"]
    );
    // White is to act in every match here: p3 is white only in c.
    assert_eq!(
        all(MatchQuery {
            to_act_player: Some("p3".into()),
            ..Default::default()
        })
        .await,
        ["c"]
    );
    assert_eq!(
        all(MatchQuery {
            owner: Some("o2".into()),
            ..Default::default()
        })
        .await,
        ["c"]
    );
    assert_eq!(
        all(MatchQuery {
            created: (Some(20), Some(30)),
            ..Default::default()
        })
        .await,
        ["b", "c"]
    );
    assert_eq!(
        all(MatchQuery {
            variants: vec!["plakoto".into()],
            ..Default::default()
        })
        .await,
        Vec::<String>::new()
    );
    // States: one ends, one is abandoned.
    let mut ended = GameRecord {
        version: 2,
        finished: true,
        ..made[0].clone()
    };
    ended.index.to_act = 0;
    store.commit(&ended, 1, &entry(2), None).await.unwrap();
    let mut left = GameRecord {
        version: 2,
        finished: true,
        ..made[1].clone()
    };
    left.index.abandoned = true;
    store.commit(&left, 1, &entry(2), None).await.unwrap();
    assert_eq!(
        all(MatchQuery {
            states: vec![MatchState::InProgress],
            ..Default::default()
        })
        .await,
        ["c", "d"]
    );
    assert_eq!(
        all(MatchQuery {
            states: vec![MatchState::Finished],
            ..Default::default()
        })
        .await,
        ["a"]
    );
    assert_eq!(
        all(MatchQuery {
            states: vec![MatchState::Abandoned],
            ..Default::default()
        })
        .await,
        ["b"]
    );
    // By update: the matches changed last come last.
    assert_eq!(
        all(MatchQuery {
            order: MatchOrder::Updated,
            ..Default::default()
        })
        .await,
        ["a", "b", "c", "d"]
    );
    let listed = store
        .list_matches(&MatchQuery {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed[0].index, ended.index);
    assert!(listed[0].finished);
}

async fn the_feed_gives_every_commit_once_in_commit_order_with_its_match_s_words<B: Backend>(
    place: &B,
) {
    let store = place.open().await;
    let start = store.feed_bounds().await.unwrap();
    assert_eq!(start.head, FeedPosition::default(), "an empty feed");
    store
        .create(&indexed("x", 1, ["ann", ""], "o"), &fed(1, 0b10, b""), None)
        .await
        .unwrap();
    store
        .create(&indexed("y", 2, ["", "bob"], ""), &fed(1, 0b10, b""), None)
        .await
        .unwrap();
    let moved = GameRecord {
        version: 2,
        ..indexed("x", 1, ["ann", ""], "o")
    };
    store
        .commit(&moved, 1, &fed(2, 0b100010, b"{\"results\":[]}"), None)
        .await
        .unwrap();
    let rows = settled(&store, 3, true).await;
    let seen: Vec<(String, u64)> = rows
        .iter()
        .map(|r| (r.game_id.clone(), r.version))
        .collect();
    assert_eq!(seen, [("x".into(), 1), ("y".into(), 1), ("x".into(), 2)]);
    assert!(rows.windows(2).all(|w| w[0].position < w[1].position));
    assert_eq!(rows[2].kinds, 0b100010);
    assert_eq!(rows[2].detail, b"{\"results\":[]}");
    assert_eq!(rows[2].log.as_deref(), Some(entry(2).text.as_str()));
    assert_eq!(rows[0].variant.as_deref(), Some("standard"));
    assert_eq!(rows[0].players, ["ann".to_string(), String::new()]);
    assert_eq!(rows[0].owner, "o");
    assert_eq!(rows[1].labels, r#"{"table":"y"}"#);
    // After a place, only what follows; by kind, only those.
    let after = store
        .feed_after(rows[0].position, u32::MAX, false, 100)
        .await
        .unwrap();
    assert_eq!(after.len(), 2);
    assert_eq!(after[1].log, None, "no log unless asked");
    let actions = store
        .feed_after(FeedPosition::default(), 0b100000, false, 100)
        .await
        .unwrap();
    assert_eq!(actions.len(), 1);
    assert_eq!(store.feed_bounds().await.unwrap().head, rows[2].position);
    // A match removed keeps its words in the feed, with its removal.
    let ended = GameRecord {
        version: 3,
        finished: true,
        ..moved
    };
    store
        .commit(&ended, 2, &fed(3, 0b100000, b""), None)
        .await
        .unwrap();
    assert!(store.remove_finished("x", &removal()).await.unwrap());
    let rows = settled(&store, 5, true).await;
    let removed = rows.last().unwrap();
    assert_eq!(
        (removed.game_id.as_str(), removed.version, removed.kinds),
        ("x", 3, 1 << 4)
    );
    for row in rows.iter().filter(|r| r.game_id == "x") {
        assert_eq!(row.variant.as_deref(), Some("standard"), "{row:?}");
        assert_eq!(row.players[0], "ann");
        assert_eq!(row.owner, "o");
        assert_eq!(row.log, None, "the log went with the match");
    }
}

/// The feed's rows once every commit made is readable: on PostgreSQL a
/// row waits for every older transaction of the cluster to end (those
/// of the other tests' databases too), which under load takes a moment.
async fn settled<S: GameStore>(store: &S, count: usize, with_log: bool) -> Vec<bg_store::FeedRow> {
    within(Duration::from_secs(10), "the feed's rows", async {
        loop {
            let rows = store
                .feed_after(FeedPosition::default(), u32::MAX, with_log, 100)
                .await
                .unwrap();
            assert!(rows.len() <= count, "{rows:?}");
            if rows.len() == count {
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

async fn the_feed_is_trimmed_by_age_and_says_how_far<B: Backend>(place: &B) {
    let store = place.open().await;
    store
        .create(&indexed("old", 1, ["", ""], ""), &fed(1, 0b10, b""), None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let cut = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    tokio::time::sleep(Duration::from_millis(30)).await;
    store
        .create(&indexed("new", 2, ["", ""], ""), &fed(1, 0b10, b""), None)
        .await
        .unwrap();
    let rows = settled(&store, 2, false).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(store.trim_feed(cut).await.unwrap(), 1);
    let bounds = store.feed_bounds().await.unwrap();
    assert_eq!(bounds.trimmed, rows[0].position);
    assert_eq!(bounds.head, rows[1].position);
    let left = store
        .feed_after(FeedPosition::default(), u32::MAX, false, 100)
        .await
        .unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].game_id, "new");
    // Each row read says how far the feed was trimmed, as of its read.
    assert_eq!(left[0].trimmed, rows[0].position);
    assert_eq!(rows[0].trimmed, FeedPosition::default());
    assert_eq!(
        store.trim_feed(cut).await.unwrap(),
        0,
        "nothing more that old"
    );
    // Kept across a reopening.
    drop(store);
    let store = place.open().await;
    assert_eq!(store.feed_bounds().await.unwrap().trimmed, rows[0].position);
    // Trimmed empty, the head is where the trim stopped, not before it
    // (a cursor taken there is not expired).
    let later = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 1;
    assert_eq!(store.trim_feed(later).await.unwrap(), 1);
    let bounds = store.feed_bounds().await.unwrap();
    assert_eq!(bounds.trimmed, rows[1].position);
    assert_eq!(bounds.head, bounds.trimmed);
}

// ---- Webhooks --------------------------------------------------------------

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn delivery(id: &str) -> bg_store::NewDelivery {
    bg_store::NewDelivery {
        event_id: id.into(),
        kind: 3,
        game_id: "g".into(),
        payload: format!("{{\"id\":\"{id}\"}}").into_bytes(),
    }
}

async fn webhook_deliveries_are_staged_once_claimed_for_a_lease_and_settled<B: Backend>(place: &B) {
    use bg_store::{DeliveryQuery, DeliveryState, Settled, Settlement};
    let store = place.open().await;
    let p = |seq| FeedPosition { tx: 0, seq };
    let start = store.webhook_place("site", p(0), 1).await.unwrap();
    // A second server starting learns the first one's place.
    assert_eq!(store.webhook_place("site", p(9), 1).await.unwrap(), start);
    let to = FeedPosition { seq: 5, ..start };
    let now = now_ms();
    assert!(
        store
            .stage_deliveries("site", start, to, &[delivery("a"), delivery("b")], now)
            .await
            .unwrap()
    );
    // Staging from a place another server moved from: nothing written.
    assert!(
        !store
            .stage_deliveries("site", start, to, &[delivery("c")], now)
            .await
            .unwrap()
    );
    // The same event staged again (a retried staging) is kept once.
    let further = FeedPosition { seq: 6, ..start };
    assert!(
        store
            .stage_deliveries("site", to, further, &[delivery("a")], now)
            .await
            .unwrap()
    );
    assert_eq!(store.webhook_place("site", p(0), 1).await.unwrap(), further);
    let counts = store.delivery_counts("site", true).await.unwrap();
    assert_eq!((counts.pending, counts.delivered), (2, 0));
    assert_eq!(counts.oldest_pending_ms, Some(now));
    // Claimed for a lease: counted an attempt, and no other claim takes
    // them until it runs out.
    let claimed = store
        .claim_deliveries("site", now, now + 1000, 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    assert!(
        claimed
            .iter()
            .all(|d| d.attempts == 1 && d.next_ms == now + 1000)
    );
    assert_eq!(claimed[0].payload, br#"{"id":"a"}"#);
    assert!(
        store
            .claim_deliveries("site", now + 999, now + 2000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .claim_deliveries("other", now + 5000, now + 6000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // A server that died mid-delivery: due again when the lease ran out.
    let again = store
        .claim_deliveries("site", now + 1000, now + 2000, 1)
        .await
        .unwrap();
    assert_eq!(again.len(), 1, "at most the limit");
    assert_eq!(again[0].attempts, 2);
    let settle = |event_id: &str, attempts: u32, outcome: Settled| Settlement {
        event_id: event_id.into(),
        attempts,
        outcome,
    };
    let (a_attempts, b_attempts) = if again[0].event_id == "a" {
        (2, 1)
    } else {
        (1, 2)
    };
    // The first claim's late answer for the one claimed again since
    // changes nothing: only the latest claim settles it.
    store
        .settle_deliveries(
            "site",
            &[settle(
                &again[0].event_id,
                1,
                Settled::Failed {
                    at_ms: now,
                    error: "late".into(),
                },
            )],
        )
        .await
        .unwrap();
    store
        .settle_deliveries(
            "site",
            &[
                settle("a", a_attempts, Settled::Delivered { at_ms: now + 1 }),
                settle(
                    "b",
                    b_attempts,
                    Settled::Retry {
                        next_ms: now + 50,
                        error: "HTTP 503".into(),
                    },
                ),
            ],
        )
        .await
        .unwrap();
    // Settled once: a late answer for one delivered changes nothing.
    store
        .settle_deliveries(
            "site",
            &[settle(
                "a",
                a_attempts,
                Settled::Failed {
                    at_ms: now + 2,
                    error: "late".into(),
                },
            )],
        )
        .await
        .unwrap();
    let listed = store
        .list_deliveries(&DeliveryQuery {
            endpoint: Some("site".into()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    let a = listed.iter().find(|d| d.event_id == "a").unwrap();
    let b = listed.iter().find(|d| d.event_id == "b").unwrap();
    assert_eq!(
        (a.state, a.done_ms),
        (DeliveryState::Delivered, Some(now + 1))
    );
    assert_eq!(a.last_error, "");
    assert_eq!((b.state, b.next_ms), (DeliveryState::Pending, now + 50));
    assert_eq!(b.last_error, "HTTP 503");
    let only_b = store
        .list_deliveries(&DeliveryQuery {
            state: Some(DeliveryState::Pending),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(only_b.len(), 1);
    assert_eq!(only_b[0].event_id, "b");
    let counts = store.delivery_counts("site", true).await.unwrap();
    assert_eq!((counts.pending, counts.delivered, counts.failed), (1, 1, 0));
    let pending_only = store.delivery_counts("site", false).await.unwrap();
    assert_eq!((pending_only.pending, pending_only.delivered), (1, 0));
    assert_eq!(pending_only.oldest_pending_ms, Some(now));
    // Forgotten once settled long enough: the pending one stays.
    assert_eq!(store.forget_deliveries(now + 2).await.unwrap(), 1);
    assert_eq!(store.forget_deliveries(now + 100_000).await.unwrap(), 0);
    assert_eq!(
        store.delivery_counts("site", false).await.unwrap().pending,
        1
    );
    // An endpoint no longer configured: its pending deliveries given up,
    // its place forgotten (a new one starts where it is told).
    store.webhook_place("kept", p(0), now).await.unwrap();
    assert_eq!(
        store
            .retire_webhook_endpoints(&["kept".to_string()], now + 3)
            .await
            .unwrap(),
        1
    );
    let counts = store.delivery_counts("site", true).await.unwrap();
    assert_eq!((counts.pending, counts.failed), (0, 1));
    assert_eq!(store.webhook_place("site", p(7), now).await.unwrap(), p(7));
    assert_eq!(store.webhook_place("kept", p(9), now).await.unwrap(), p(0));
    assert_eq!(store.retire_webhook_endpoints(&[], now).await.unwrap(), 0);
}

async fn the_feed_keeps_what_an_active_webhook_endpoint_has_not_staged<B: Backend>(place: &B) {
    let store = place.open().await;
    for id in ["one", "two", "three"] {
        store
            .create(&indexed(id, 1, ["", ""], ""), &fed(1, 0b10, b""), None)
            .await
            .unwrap();
    }
    let rows = settled(&store, 3, false).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let cut = now_ms();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // An endpoint active since the cut, which has staged the first row
    // only.
    let start = store
        .webhook_place("site", rows[0].position, now_ms())
        .await
        .unwrap();
    assert_eq!(start, rows[0].position);
    assert_eq!(
        store.trim_feed(cut).await.unwrap(),
        1,
        "the staged row only"
    );
    assert_eq!(store.feed_bounds().await.unwrap().trimmed, rows[0].position);
    assert_eq!(
        store.trim_feed(cut).await.unwrap(),
        0,
        "nothing it has yet to stage"
    );
    assert!(
        store
            .stage_deliveries("site", start, rows[1].position, &[], now_ms())
            .await
            .unwrap()
    );
    assert_eq!(store.trim_feed(cut).await.unwrap(), 1);
    // An endpoint idle longer than the window holds nothing back.
    assert_eq!(store.trim_feed(now_ms() + 60_000).await.unwrap(), 1);
    assert_eq!(store.feed_bounds().await.unwrap().trimmed, rows[2].position);
}

// ---- Notices ---------------------------------------------------------------

/// The version of the next notice about `game_id` (other games' notices
/// and resyncs skipped).
async fn next_change_of(changes: &mut broadcast::Receiver<Change>, game_id: &str) -> u64 {
    within(Duration::from_secs(5), "a notice", async {
        loop {
            match changes.recv().await {
                Ok(Change::Game {
                    game_id: g,
                    version,
                }) if g == game_id => return version,
                Ok(_) => {}
                Err(e) => panic!("notices: {e}"),
            }
        }
    })
    .await
}

// ---- Shared stores only: PostgreSQL ------------------------------------------

/// The promises only a shared store makes, on PostgreSQL.
mod postgres_shared {
    use super::*;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A fresh database of the shared cluster, or None (skipped).
    async fn database(test: &str) -> Option<Postgres> {
        Postgres::fresh(test).await
    }

    /// Sixteen commits of one game at one version, from two replicas at
    /// once: exactly one lands; each other is told the game's version.
    #[tokio::test(flavor = "multi_thread")]
    async fn of_two_replicas_writing_one_version_exactly_one_wins() {
        let Some(place) = database("one_version").await else {
            return;
        };
        let replicas = [place.open().await, place.open().await];
        replicas[0]
            .create(&game("g", 1, "start"), &entry(1), None)
            .await
            .unwrap();
        let start = Arc::new(tokio::sync::Barrier::new(16));
        let tasks: Vec<_> = (0..16)
            .map(|n| {
                let store = replicas[n % 2].clone();
                let start = start.clone();
                tokio::spawn(async move {
                    start.wait().await;
                    let result = store
                        .commit(
                            &game("g", 2, &format!("by {n}")),
                            1,
                            &entry(2),
                            Some(&request("g", &format!("r{n}"))),
                        )
                        .await;
                    (n, result)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for task in tasks {
            match task.await.unwrap() {
                (n, Ok(())) => winners.push(n),
                (_, Err(StoreError::Conflict { current: 2 })) => {}
                (n, Err(e)) => panic!("commit {n}: {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "winners: {winners:?}");
        let winner = winners[0];
        for store in &replicas {
            assert_eq!(
                store.load("g").await.unwrap(),
                Some(game("g", 2, &format!("by {winner}")))
            );
            assert_eq!(store.log_after("g", 1).await.unwrap(), vec![entry(2)]);
            for n in 0..16 {
                let stored = store.request("g", &format!("r{n}")).await.unwrap();
                assert_eq!(stored.is_some(), n == winner, "request r{n}");
            }
        }
    }

    /// One request id sent to two replicas at once (a client retrying on
    /// another server): stored once, with one answer; the other replica
    /// is refused.
    #[tokio::test(flavor = "multi_thread")]
    async fn one_request_sent_to_two_replicas_at_once_is_stored_once() {
        let Some(place) = database("one_request").await else {
            return;
        };
        let replicas = [place.open().await, place.open().await];
        for round in 0..10u64 {
            let id = format!("g{round}");
            replicas[0]
                .create(&game(&id, 1, "a"), &entry(1), None)
                .await
                .unwrap();
            let start = Arc::new(tokio::sync::Barrier::new(2));
            let tasks: Vec<_> = (0..2)
                .map(|n| {
                    let store = replicas[n].clone();
                    let start = start.clone();
                    let id = id.clone();
                    tokio::spawn(async move {
                        let answer = RequestRecord {
                            answer: Answer::Version(10 + n as u64),
                            ..request(&id, "same")
                        };
                        start.wait().await;
                        store
                            .commit(
                                &game(&id, 2, &format!("by {n}")),
                                1,
                                &entry(2),
                                Some(&answer),
                            )
                            .await
                    })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.unwrap());
            }
            let winner = match &results[..] {
                [
                    Ok(()),
                    Err(StoreError::Conflict { current: 2 } | StoreError::Duplicate),
                ] => 0,
                [
                    Err(StoreError::Conflict { current: 2 } | StoreError::Duplicate),
                    Ok(()),
                ] => 1,
                other => panic!("round {round}: {other:?}"),
            };
            let stored = replicas[1 - winner]
                .request(&id, "same")
                .await
                .unwrap()
                .expect("the request is stored");
            assert_eq!(stored.answer, Answer::Version(10 + winner as u64));
            assert_eq!(
                replicas[1 - winner].load(&id).await.unwrap(),
                Some(game(&id, 2, &format!("by {winner}")))
            );
            assert_eq!(
                replicas[0].log_after(&id, 0).await.unwrap(),
                vec![entry(1), entry(2)]
            );
        }
    }

    /// A replica hears every commit made once it is connected, even the
    /// very first one (it listens before `connect` returns).
    #[tokio::test(flavor = "multi_thread")]
    async fn a_commit_made_as_soon_as_a_replica_connects_is_announced_to_it() {
        let Some(place) = database("at_once").await else {
            return;
        };
        let a = place.open().await;
        a.create(&game("g", 1, "a"), &entry(1), None).await.unwrap();
        for version in 2..=21 {
            let b = place.open().await;
            let mut heard = b.changes().expect("a shared store announces commits");
            a.commit(&game("g", version, "b"), version - 1, &entry(version), None)
                .await
                .unwrap();
            assert_eq!(next_change_of(&mut heard, "g").await, version);
        }
    }

    /// A commit on one replica is announced to the other, in order, and
    /// never before the other can read it.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_commit_on_one_replica_is_announced_to_the_other_in_order() {
        let Some(place) = database("announced").await else {
            return;
        };
        let a = place.open().await;
        let b = place.open().await;
        let mut heard = b.changes().expect("a shared store announces commits");
        a.create(&game("g", 1, "a"), &entry(1), None).await.unwrap();
        let started = Instant::now();
        for version in 2..=11 {
            a.commit(&game("g", version, "b"), version - 1, &entry(version), None)
                .await
                .unwrap();
        }
        for version in 2..=11 {
            assert_eq!(next_change_of(&mut heard, "g").await, version);
            assert!(b.version("g").await.unwrap() >= Some(version));
        }
        eprintln!("ten commits announced in {:?}", started.elapsed());
        // And the other way round.
        let mut heard = a.changes().unwrap();
        b.commit(&game("g", 12, "c"), 11, &entry(12), None)
            .await
            .unwrap();
        assert_eq!(next_change_of(&mut heard, "g").await, 12);
    }

    /// The database goes down (a crash) and comes back: meanwhile every
    /// call fails fast and says so (writes: not stored, or unreachable;
    /// reads: unreachable) and the stores call themselves unwritable; once
    /// it is back they take writes again by themselves, the other replica
    /// is told to resync, and nothing committed before is lost.
    #[tokio::test(flavor = "multi_thread")]
    async fn through_a_database_outage_calls_fail_and_the_stores_recover_by_themselves() {
        // A cluster of its own: the shared one must stay up.
        let Some(mut cluster) = tokio::task::block_in_place(PgCluster::start) else {
            return;
        };
        let url = tokio::task::block_in_place(|| cluster.create_database("outage"));
        let a = PgStore::connect(&url).await.unwrap();
        let b = PgStore::connect(&url).await.unwrap();
        for g in 0..5 {
            let id = format!("g{g}");
            a.create(&game(&id, 1, "a"), &entry(1), None).await.unwrap();
            a.commit(&game(&id, 2, "b"), 1, &entry(2), None)
                .await
                .unwrap();
        }
        a.set_setting("kept", b"1").await.unwrap();
        let mut heard = b.changes().unwrap();
        let mut a_writable = a.writable();
        let mut b_writable = b.writable();
        assert!(*a_writable.borrow() && *b_writable.borrow());

        tokio::task::block_in_place(|| cluster.stop_immediate());
        let stopped = Instant::now();
        // Nobody writes: the stores notice by themselves.
        within(
            Duration::from_secs(4),
            "A unwritable",
            a_writable.wait_for(|w| !w),
        )
        .await
        .unwrap();
        within(
            Duration::from_secs(4),
            "B unwritable",
            b_writable.wait_for(|w| !w),
        )
        .await
        .unwrap();
        eprintln!("unwritable {:?} after the crash", stopped.elapsed());

        let calls = Instant::now();
        let (new_game, moved) = (game("during", 1, "a"), game("g0", 3, "c"));
        let (new_request, move_request) =
            (request(NEW_GAME_SCOPE, "during"), request("g0", "during"));
        let (first, logged) = (entry(1), entry(3));
        let (create, commit, set, claim) = tokio::join!(
            a.create(&new_game, &first, Some(&new_request)),
            a.commit(&moved, 2, &logged, Some(&move_request)),
            b.set_setting("kept", b"2"),
            b.claim_setting("during", b"x"),
        );
        for (what, result) in [
            ("create", create),
            ("commit", commit),
            ("set_setting", set),
            ("claim_setting", claim.map(drop)),
        ] {
            assert!(
                matches!(
                    result,
                    Err(StoreError::WriteFailed {
                        applied: Applied::No,
                        ..
                    } | StoreError::Unreachable(_))
                ),
                "{what}: {result:?}"
            );
        }
        let (load, version, log, request, holds, setting, forget) = tokio::join!(
            b.load("g0"),
            b.version("g0"),
            b.log_after("g0", 0),
            b.request("g0", "r"),
            b.holds_games(),
            b.setting("kept"),
            b.forget_requests(SystemTime::now()),
        );
        for (what, unreachable) in [
            ("load", matches!(load, Err(StoreError::Unreachable(_)))),
            (
                "version",
                matches!(version, Err(StoreError::Unreachable(_))),
            ),
            ("log_after", matches!(log, Err(StoreError::Unreachable(_)))),
            (
                "request",
                matches!(request, Err(StoreError::Unreachable(_))),
            ),
            (
                "holds_games",
                matches!(holds, Err(StoreError::Unreachable(_))),
            ),
            (
                "setting",
                matches!(setting, Err(StoreError::Unreachable(_))),
            ),
            (
                "forget_requests",
                matches!(forget, Err(StoreError::Unreachable(_))),
            ),
        ] {
            assert!(unreachable, "{what} during the outage is unreachable");
        }
        eprintln!("calls during the outage answered in {:?}", calls.elapsed());
        assert!(!*a.writable().borrow() && !*b.writable().borrow());

        tokio::task::block_in_place(|| cluster.start_again());
        let restarted = Instant::now();
        within(
            Duration::from_secs(10),
            "A writable again",
            a_writable.wait_for(|w| *w),
        )
        .await
        .unwrap();
        within(
            Duration::from_secs(10),
            "B writable again",
            b_writable.wait_for(|w| *w),
        )
        .await
        .unwrap();
        eprintln!("writable {:?} after the restart", restarted.elapsed());
        within(Duration::from_secs(10), "B resyncs", async {
            loop {
                match heard.recv().await {
                    Ok(Change::Resync) => return,
                    Ok(Change::Game { .. }) => {}
                    Err(e) => panic!("notices: {e}"),
                }
            }
        })
        .await;
        eprintln!("B resynced {:?} after the restart", restarted.elapsed());

        // Nothing committed before is lost; nothing refused was stored.
        for g in 0..5 {
            let id = format!("g{g}");
            assert_eq!(b.load(&id).await.unwrap(), Some(game(&id, 2, "b")));
            assert_eq!(b.log_after(&id, 0).await.unwrap(), vec![entry(1), entry(2)]);
        }
        assert!(b.load("during").await.unwrap().is_none());
        assert!(b.request(NEW_GAME_SCOPE, "during").await.unwrap().is_none());
        assert!(b.request("g0", "during").await.unwrap().is_none());
        assert_eq!(b.setting("kept").await.unwrap(), Some(b"1".to_vec()));
        assert_eq!(b.setting("during").await.unwrap(), None);

        // Writes work again on both, and B hears A's commits again (with
        // no second resync in between).
        a.commit(&game("g0", 3, "c"), 2, &entry(3), None)
            .await
            .unwrap();
        b.commit(&game("g1", 3, "c"), 2, &entry(3), None)
            .await
            .unwrap();
        // Each store announces its own commits: the two notices may come
        // in either order.
        let mut next = Vec::new();
        for _ in 0..2 {
            next.push(
                within(
                    Duration::from_secs(5),
                    "the commits heard by B",
                    heard.recv(),
                )
                .await
                .unwrap(),
            );
        }
        for game_id in ["g0", "g1"] {
            let change = Change::Game {
                game_id: game_id.into(),
                version: 3,
            };
            assert!(next.contains(&change), "{next:?}");
        }
    }

    /// A write the database ends before it commits (its connection is
    /// terminated while the statement waits for a row lock) is answered
    /// "not stored", and it is not: the game has not moved.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_the_database_ends_midway_is_not_stored_and_says_so() {
        let Some(place) = database("ended_midway").await else {
            return;
        };
        let store = place.open().await;
        store
            .create(&game("held", 1, "a"), &entry(1), None)
            .await
            .unwrap();
        // Another session holds the game's row.
        let mut holder = sqlx::PgConnection::connect(&place.url).await.unwrap();
        sqlx::raw_sql("BEGIN; SELECT version FROM games WHERE game_id = 'held' FOR UPDATE")
            .execute(&mut holder)
            .await
            .unwrap();
        let commit = tokio::spawn({
            let store = store.clone();
            async move {
                store
                    .commit(
                        &game("held", 2, "b"),
                        1,
                        &entry(2),
                        Some(&request("held", "r")),
                    )
                    .await
            }
        });
        // The commit's statement is in the database, waiting for the row.
        let mut admin = sqlx::PgConnection::connect(&place.url).await.unwrap();
        let pid: i32 = within(
            Duration::from_secs(10),
            "the commit waits for the row",
            async {
                loop {
                    let waiting: Option<i32> = sqlx::query_scalar(
                        "SELECT pid FROM pg_stat_activity \
                     WHERE datname = current_database() AND application_name = 'backgammond' \
                     AND state = 'active' AND wait_event_type = 'Lock' \
                     AND query LIKE 'WITH updated%'",
                    )
                    .fetch_optional(&mut admin)
                    .await
                    .unwrap();
                    match waiting {
                        Some(pid) => return pid,
                        None => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                }
            },
        )
        .await;
        let terminated: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .fetch_one(&mut admin)
            .await
            .unwrap();
        assert!(terminated);
        let result = within(Duration::from_secs(10), "the commit's answer", commit)
            .await
            .unwrap();
        eprintln!("answered: {result:?}");
        assert!(
            matches!(
                result,
                Err(StoreError::WriteFailed {
                    applied: Applied::No,
                    ..
                })
            ),
            "{result:?}"
        );
        sqlx::raw_sql("ROLLBACK")
            .execute(&mut holder)
            .await
            .unwrap();

        // Not stored, in any part.
        assert_eq!(
            store.load("held").await.unwrap(),
            Some(game("held", 1, "a"))
        );
        assert!(store.log_after("held", 1).await.unwrap().is_empty());
        assert!(store.request("held", "r").await.unwrap().is_none());
        // The same write, tried again, lands.
        store
            .commit(
                &game("held", 2, "b"),
                1,
                &entry(2),
                Some(&request("held", "r")),
            )
            .await
            .unwrap();
        within(
            Duration::from_secs(5),
            "writable again",
            store.writable().wait_for(|w| *w),
        )
        .await
        .unwrap();
    }

    /// A write whose statement reached the database, which committed it,
    /// but whose answer was lost with the connection, is answered "outcome
    /// unknown"; it is in fact stored, and a retry with its request id
    /// finds it.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_whose_answer_is_lost_says_its_outcome_is_unknown() {
        // A game id nothing else sends (the database's name included).
        const GAME: &str = "g-2c7e91";
        let Some(place) = database("answer_lost").await else {
            return;
        };
        let direct = place.open().await;
        direct
            .create(&game(GAME, 1, "a"), &entry(1), None)
            .await
            .unwrap();
        let proxy = Proxy::start(place.cluster.port()).await;
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/{}",
            proxy.port, place.database
        );
        let proxied = PgStore::connect(&url).await.unwrap();
        // The store works through the proxy.
        assert_eq!(proxied.version(GAME).await.unwrap(), Some(1));

        // Only the commit sends the game id from now on (among its
        // parameters), on whichever connection the pool gives it (an idle
        // one, checked first, or a new one): that connection forwards the
        // statement, then loses the answer.
        proxy.lose_answers_after(GAME.as_bytes());
        let result = within(
            Duration::from_secs(20),
            "the commit's answer",
            proxied.commit(&game(GAME, 2, "b"), 1, &entry(2), Some(&request(GAME, "r"))),
        )
        .await;
        eprintln!("answered: {result:?}");
        assert!(
            matches!(
                result,
                Err(StoreError::WriteFailed {
                    applied: Applied::Unknown,
                    ..
                })
            ),
            "{result:?}"
        );
        assert_eq!(
            proxy.cut_connections(),
            1,
            "the commit's connection was cut"
        );

        // The database committed it.
        assert_eq!(direct.load(GAME).await.unwrap(), Some(game(GAME, 2, "b")));
        assert_eq!(direct.log_after(GAME, 1).await.unwrap(), vec![entry(2)]);
        assert_eq!(
            direct.request(GAME, "r").await.unwrap(),
            Some(request(GAME, "r"))
        );
        // A retry through the same store tells: the version moved on, and
        // the request id is there with its answer.
        proxy.keep_answers();
        let retry = proxied
            .commit(&game(GAME, 2, "b"), 1, &entry(2), Some(&request(GAME, "r")))
            .await;
        assert!(
            matches!(retry, Err(StoreError::Conflict { current: 2 })),
            "{retry:?}"
        );
        assert_eq!(
            proxied.request(GAME, "r").await.unwrap(),
            Some(request(GAME, "r"))
        );
    }

    /// A write whose connection dies before the statement goes out (the
    /// network fails both ways: the pool's check of its idle connection,
    /// then a new connection, are cut) is not stored and is answered as a
    /// failed write; once the network is back the store takes writes again
    /// by itself.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_that_never_reaches_the_database_is_not_stored() {
        let Some(place) = database("never_reached").await else {
            return;
        };
        let direct = place.open().await;
        direct
            .create(&game("unsent", 1, "a"), &entry(1), None)
            .await
            .unwrap();
        let proxy = Proxy::start(place.cluster.port()).await;
        let url = format!(
            "postgres://postgres@127.0.0.1:{}/{}",
            proxy.port, place.database
        );
        let proxied = PgStore::connect(&url).await.unwrap();
        assert_eq!(proxied.version("unsent").await.unwrap(), Some(1));

        // Every connection loses its answers from its next bytes on.
        proxy.lose_answers_after(b"");
        let result = within(
            Duration::from_secs(20),
            "the commit's answer",
            proxied.commit(
                &game("unsent", 2, "b"),
                1,
                &entry(2),
                Some(&request("unsent", "r")),
            ),
        )
        .await;
        eprintln!("answered: {result:?}");
        // The write never had a connection that answered: not sent, and
        // the answer says so.
        assert!(
            matches!(
                result,
                Err(StoreError::WriteFailed {
                    applied: Applied::No,
                    ..
                })
            ),
            "{result:?}"
        );
        assert_eq!(
            direct.load("unsent").await.unwrap(),
            Some(game("unsent", 1, "a"))
        );
        assert!(direct.request("unsent", "r").await.unwrap().is_none());
        assert!(!*proxied.writable().borrow());

        proxy.keep_answers();
        within(
            Duration::from_secs(10),
            "writable again",
            proxied.writable().wait_for(|w| *w),
        )
        .await
        .unwrap();
        proxied
            .commit(
                &game("unsent", 2, "b"),
                1,
                &entry(2),
                Some(&request("unsent", "r")),
            )
            .await
            .unwrap();
        assert_eq!(direct.version("unsent").await.unwrap(), Some(2));
    }

    /// A TCP proxy in front of the cluster that can lose the answers of a
    /// connection: once armed with a pattern, a connection whose client
    /// sends it forwards that and everything after to the server, drops
    /// everything the server sends back, and closes both sides 300 ms
    /// later (a network that died just after the request went out).
    struct Proxy {
        port: u16,
        pattern: Arc<Mutex<Option<Vec<u8>>>>,
        cut: Arc<AtomicUsize>,
        /// Accepts connections; its relays end with it.
        task: tokio::task::JoinHandle<()>,
    }

    impl Proxy {
        async fn start(upstream: u16) -> Proxy {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let pattern = Arc::new(Mutex::new(None));
            let cut = Arc::new(AtomicUsize::new(0));
            let task = tokio::spawn({
                let pattern = pattern.clone();
                let cut = cut.clone();
                async move {
                    let mut relays = tokio::task::JoinSet::new();
                    while let Ok((client, _)) = listener.accept().await {
                        relays.spawn(relay(client, upstream, pattern.clone(), cut.clone()));
                        while relays.try_join_next().is_some() {}
                    }
                }
            });
            Proxy {
                port,
                pattern,
                cut,
                task,
            }
        }

        fn lose_answers_after(&self, pattern: &[u8]) {
            *self.pattern.lock().unwrap() = Some(pattern.to_vec());
        }

        fn keep_answers(&self) {
            *self.pattern.lock().unwrap() = None;
        }

        /// How many connections have lost their answers.
        fn cut_connections(&self) -> usize {
            self.cut.load(Ordering::SeqCst)
        }
    }

    impl Drop for Proxy {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    async fn relay(
        client: TcpStream,
        upstream: u16,
        pattern: Arc<Mutex<Option<Vec<u8>>>>,
        cut_count: Arc<AtomicUsize>,
    ) {
        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
            return;
        };
        let (mut client_read, mut client_write) = client.into_split();
        let (mut server_read, mut server_write) = server.into_split();
        let cut = AtomicBool::new(false);
        let cut_now = tokio::sync::Notify::new();
        let up = async {
            // What the client sent since the proxy was armed (the tail that
            // could still begin the pattern).
            let mut seen = Vec::new();
            let mut buffer = vec![0; 64 * 1024];
            loop {
                let n = match client_read.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                let armed = pattern.lock().unwrap().clone();
                match armed {
                    Some(pattern) if !cut.load(Ordering::SeqCst) => {
                        seen.extend_from_slice(&buffer[..n]);
                        if seen
                            .windows(pattern.len().max(1))
                            .any(|w| w.starts_with(&pattern))
                        {
                            cut.store(true, Ordering::SeqCst);
                            cut_count.fetch_add(1, Ordering::SeqCst);
                            cut_now.notify_one();
                        } else {
                            let keep = pattern.len().min(seen.len());
                            seen.drain(..seen.len() - keep);
                        }
                    }
                    Some(_) => {}
                    None => seen.clear(),
                }
                // Set before the bytes go: no answer to them gets through.
                if server_write.write_all(&buffer[..n]).await.is_err() {
                    return;
                }
            }
        };
        let down = async {
            let mut buffer = vec![0; 64 * 1024];
            loop {
                let n = match server_read.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                if !cut.load(Ordering::SeqCst)
                    && client_write.write_all(&buffer[..n]).await.is_err()
                {
                    return;
                }
            }
        };
        let close = async {
            cut_now.notified().await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        };
        // Whichever ends first ends the connection: both sockets close.
        tokio::select! {
            _ = up => {}
            _ = down => {}
            _ = close => {}
        }
    }
}

// ---- Each store's schema -----------------------------------------------------

/// The shape each store gives `requests` so that an action costs few
/// bytes, checked in its catalogue.
mod schema {
    use super::*;

    /// The SQL SQLite keeps for the table and indexes of `table`.
    async fn sqlite_schema(place: &Sqlite, table: &str) -> Vec<(String, String)> {
        let mut connection = sqlx::SqliteConnection::connect_with(
            &sqlx::sqlite::SqliteConnectOptions::new().filename(place.path()),
        )
        .await
        .unwrap();
        let schema =
            sqlx::query_as("SELECT type, coalesce(sql, '') FROM sqlite_master WHERE tbl_name = ?")
                .bind(table)
                .fetch_all(&mut connection)
                .await
                .unwrap();
        connection.close().await.unwrap();
        schema
    }

    /// SQLite keeps request ids (in `requests`, and in the log rows of
    /// their actions) in their key's b-tree alone (WITHOUT ROWID) and no
    /// index beside it, in a new database and in one made by the old
    /// migrations alike.
    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite_keeps_request_ids_without_rowid_and_without_a_time_index() {
        for upgraded in [false, true] {
            let place = Sqlite::fresh("schema").await.unwrap();
            if upgraded {
                place.migrate_old().await;
                let old = sqlite_schema(&place, "requests").await;
                assert!(
                    old.iter().any(|(_, sql)| sql.contains("requests_by_time")),
                    "the old schema has the time index: {old:?}"
                );
            }
            place.open().await.close().await;
            for table in ["requests", "game_events"] {
                let schema = sqlite_schema(&place, table).await;
                assert_eq!(schema.len(), 1, "upgraded: {upgraded}: {schema:?}");
                let (kind, sql) = &schema[0];
                assert_eq!(kind, "table");
                assert!(
                    sql.to_uppercase().ends_with("WITHOUT ROWID"),
                    "upgraded: {upgraded}: {sql}"
                );
            }
            let log = sqlite_schema(&place, "game_events").await;
            assert!(log[0].1.contains("request_id TEXT"), "{log:?}");
        }
    }

    /// PostgreSQL finds old action ids by an index on their time that
    /// leaves NewGame's ids (kept for good) out.
    #[tokio::test(flavor = "multi_thread")]
    async fn postgres_finds_old_action_ids_by_a_partial_index_on_their_time() {
        let Some(place) = Postgres::fresh("schema").await else {
            return;
        };
        place.open().await.close().await;
        let mut connection = sqlx::PgConnection::connect(&place.url).await.unwrap();
        let indexes: Vec<String> = sqlx::query_scalar(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'requests' ORDER BY indexname",
        )
        .fetch_all(&mut connection)
        .await
        .unwrap();
        connection.close().await.unwrap();
        assert_eq!(indexes.len(), 2, "{indexes:?}");
        assert!(
            indexes
                .iter()
                .any(|i| i.contains("(created_at) WHERE (scope <> 'new-game'::text)")),
            "{indexes:?}"
        );
        assert!(
            indexes.iter().any(|i| i.contains("requests_pkey")),
            "{indexes:?}"
        );
    }
}
