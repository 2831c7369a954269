//! Durable game storage.
//!
//! A game is stored as a snapshot row (its current state and `version`)
//! plus an append-only event log, plus the client request ids already
//! answered. [`GameStore::commit`] writes all three in one transaction and
//! updates the snapshot only if its version is still the one the caller
//! read (compare-and-set), so two writers, in one process or in several
//! replicas, can never both apply an action to the same version. A commit
//! that returned is durable.
//!
//! Concurrent commits share their fsync: SQLite's store groups the
//! commits of many games into one transaction by a single writer (each
//! caller still gets its own result, only after the group is durable);
//! PostgreSQL groups the WAL flushes of concurrent connections itself.
//!
//! A write that fails in the storage itself (a full disk, an I/O error,
//! a lost connection) is answered with [`StoreError::WriteFailed`],
//! saying whether it is certainly not stored or whether its outcome is
//! unknown (the failure came at or after COMMIT, as an fsync error or a
//! connection lost while waiting for the answer does). Such a failure
//! leaves no transaction open. While the storage fails,
//! [`GameStore::writable`] reports `false`; each store checks now and then
//! with a small write of its own (and, for SQLite, free space) and reports
//! `true` again once it works.
//!
//! Two stores implement it: [`SqliteStore`], one file owned by one
//! process (the embedded default), and [`PgStore`], one PostgreSQL
//! database shared by several server processes (replicas), which also
//! tells each of them of the others' commits ([`GameStore::changes`]).
//!
//! This crate owns the schema and the SQL. It never interprets what it
//! stores: states and events are opaque text and bytes from the server.

mod list;
mod postgres;
mod rows;
mod sqlite;
mod webhooks;

use std::future::Future;
use std::time::SystemTime;

pub use postgres::PgStore;
pub use sqlite::{Durability, SqliteStore};
pub use webhooks::{
    Delivery, DeliveryCounts, DeliveryQuery, DeliveryState, NewDelivery, Settled, Settlement,
};

/// The writes committed together, as a histogram (SQLite's group commit;
/// 1 for each PostgreSQL commit).
pub const COMMIT_GROUP_SIZE: &str = "backgammon_commit_group_size";
/// The time a commit takes, from BEGIN to COMMIT's answer.
pub const COMMIT_SECONDS: &str = "backgammon_commit_duration_seconds";
/// SQLite: the time of a group's COMMIT statement alone, which writes the
/// group's pages into the WAL and (durability `full`) waits for the
/// fsync: the part of [`COMMIT_SECONDS`] the disk decides.
pub const WAL_COMMIT_SECONDS: &str = "backgammon_sqlite_wal_commit_seconds";

/// Describes the metrics this crate records (see the server's `metrics`).
pub fn describe_metrics() {
    metrics::describe_histogram!(COMMIT_GROUP_SIZE, "Writes committed in one transaction");
    metrics::describe_histogram!(
        COMMIT_SECONDS,
        "Time to commit a transaction (a group of writes on SQLite, one on PostgreSQL)"
    );
    metrics::describe_histogram!(
        WAL_COMMIT_SECONDS,
        "SQLite: time of a group's COMMIT statement alone (its pages written into the WAL, and their fsync)"
    );
}

fn commit_observed(group: usize, took: std::time::Duration) {
    metrics::histogram!(COMMIT_GROUP_SIZE).record(group as f64);
    metrics::histogram!(COMMIT_SECONDS).record(took.as_secs_f64());
}

/// A game's snapshot row.
#[derive(Clone, PartialEq, Eq)]
pub struct GameRecord {
    pub game_id: String,
    pub variant: String,
    pub variant_version: String,
    /// The variant options, as JSON.
    pub options: String,
    /// Actions applied so far.
    pub version: u64,
    /// The serialised game state.
    pub state: String,
    /// SHA-256 of each seat's token, white first.
    pub token_hashes: [Vec<u8>; 2],
    /// The position every game starts from, as JSON, when the game was set
    /// up from one (None: the variant's own setup).
    pub start_board: Option<String>,
    /// The match is over: no action changes it any more. The store notes
    /// when it was first stored so, for [`GameStore::finished_before`].
    pub finished: bool,
    /// When the running seat's time runs out, in milliseconds since the
    /// Unix epoch (None: no clock runs), for [`GameStore::due_before`].
    pub deadline_ms: Option<u64>,
    /// What lists and the feed read (written at creation, never changed
    /// after, but `to_act`, `abandoned` and `updated_us`).
    pub index: MatchIndex,
}

/// The columns a match is listed by: the site's words (labels, players),
/// who created it, where it stands and when. The server's values, kept as
/// given: the store compares them, never reads into them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchIndex {
    /// The site's labels, as a JSON object (`{}`: none).
    pub labels: String,
    /// The site's player ids, white first (empty: none).
    pub players: [String; 2],
    /// Who created the match (its client certificate's id; empty: none).
    pub owner: String,
    /// The seat the match waits for: 0 none, 1 white, 2 black.
    pub to_act: u8,
    /// The match ended because a seat left.
    pub abandoned: bool,
    /// When it was created and last changed, in microseconds since the
    /// Unix epoch.
    pub created_us: i64,
    pub updated_us: i64,
}

impl Default for GameRecord {
    fn default() -> GameRecord {
        GameRecord {
            game_id: String::new(),
            variant: String::new(),
            variant_version: String::new(),
            options: "{}".to_string(),
            version: 1,
            state: String::new(),
            token_hashes: [Vec::new(), Vec::new()],
            start_board: None,
            finished: false,
            deadline_ms: None,
            index: MatchIndex::default(),
        }
    }
}

impl std::fmt::Debug for GameRecord {
    /// Leaves out the state and the token hashes: the state may hold
    /// secrets (the server seed of a match's verifiable dice), and neither
    /// belongs in a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameRecord")
            .field("game_id", &self.game_id)
            .field("variant", &self.variant)
            .field("variant_version", &self.variant_version)
            .field("options", &self.options)
            .field("version", &self.version)
            .field("state", &format_args!("({} bytes)", self.state.len()))
            .field("start_board", &self.start_board)
            .finish_non_exhaustive()
    }
}

/// One applied action in the event log: the version it produced and the
/// server's record of it (its events, and what it takes to apply it again),
/// as text the store keeps as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// The version the action produced (1: the game's creation).
    pub version: u64,
    pub text: String,
    /// The action's row of the fleet feed (written with it; empty when
    /// read back from the log).
    pub feed: Feed,
}

/// What the feed records of a commit: a bit a kind of event it holds, and
/// the server's bytes for them. Opaque to the store, which filters by
/// `kinds` only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Feed {
    pub kinds: u32,
    pub detail: Vec<u8>,
}

/// A place in the feed, in commit order: the writing transaction (0 on
/// SQLite, whose one writer commits in `seq` order) then `seq`. Every
/// replica reads the same rows at the same places.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedPosition {
    pub tx: u64,
    pub seq: u64,
}

/// A row of the feed, with the words of its match (from the match, or,
/// once it is removed, from what the removal kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedRow {
    pub position: FeedPosition,
    pub game_id: String,
    pub version: u64,
    /// When it was committed, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    pub kinds: u32,
    pub detail: Vec<u8>,
    /// None when neither the match nor its removal's record is held.
    pub variant: Option<String>,
    pub labels: String,
    pub players: [String; 2],
    pub owner: String,
    /// The action's log text, when asked for and still held.
    pub log: Option<String>,
    /// How far the feed was trimmed, read in the same statement as the
    /// row: a reader whose place is before it missed rows.
    pub trimmed: FeedPosition,
}

/// What the feed holds: rows after `trimmed` (none of them removed yet)
/// up to `head`, the newest place every reader may read (never before
/// `trimmed`: a feed trimmed empty is read from where the trim stopped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedBounds {
    /// The place of the newest row trimmed (default: none ever).
    pub trimmed: FeedPosition,
    pub head: FeedPosition,
}

/// The order of a list of matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MatchOrder {
    #[default]
    Created,
    Updated,
}

/// Where a match stands, for lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchState {
    InProgress,
    Finished,
    Abandoned,
}

/// A list of matches: a page in an order, after a key, with filters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchQuery {
    pub order: MatchOrder,
    pub descending: bool,
    /// The (time, game id) of the last match of the previous page.
    pub after: Option<(i64, String)>,
    pub limit: u32,
    /// Any of these (empty: all).
    pub variants: Vec<String>,
    pub states: Vec<MatchState>,
    /// In either seat.
    pub player: Option<String>,
    /// In the seat the match waits for.
    pub to_act_player: Option<String>,
    /// At or after, before: microseconds since the Unix epoch.
    pub created: (Option<i64>, Option<i64>),
    pub updated: (Option<i64>, Option<i64>),
    /// Created by this owner only (None: by anyone).
    pub owner: Option<String>,
}

/// A match as lists show it: its index and what the snapshot row says
/// without its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchRow {
    pub game_id: String,
    pub variant: String,
    pub variant_version: String,
    pub options: String,
    pub version: u64,
    pub finished: bool,
    pub index: MatchIndex,
}

/// A client request id and how to give its answer again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    /// An action's [`action_scope`] (its game and seat), or
    /// [`NEW_GAME_SCOPE`].
    pub scope: String,
    pub request_id: String,
    /// A digest of the request, to refuse the same id for another request.
    pub fingerprint: Vec<u8>,
    pub answer: Answer,
}

/// What a request id's answer is rebuilt from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The version the request's action produced, in the scope's game.
    Version(u64),
    /// The game a NewGame request created (at version 1).
    Created(String),
    /// The whole encoded answer, as recorded by servers before answers
    /// were rebuilt (kept so that their retries are still answered).
    Response(Vec<u8>),
}

/// The scope of NewGame's request ids.
pub const NEW_GAME_SCOPE: &str = "new-game";

/// The scope of an action's request ids: `"{game_id}/{seat}"`, the game
/// and the seat asking. An id in such a scope, committed with its game's
/// log entry and answered by that entry's version, may be kept in the log
/// row itself (SQLite's store does: one row fewer an action); any other
/// is kept as a row of its own. Either way it is unique in its scope.
pub fn action_scope(game_id: &str, seat: impl std::fmt::Display) -> String {
    format!("{game_id}/{seat}")
}

/// The setting that holds the newest place the feed trimmed (see
/// [`FeedBounds::trimmed`]).
pub const FEED_TRIMMED: &str = "feed_trimmed";

/// A feed place as a setting's bytes: `tx` then `seq`, big-endian.
pub(crate) fn encode_position(p: FeedPosition) -> Vec<u8> {
    let mut bytes = p.tx.to_be_bytes().to_vec();
    bytes.extend_from_slice(&p.seq.to_be_bytes());
    bytes
}

pub(crate) fn decode_position(bytes: &[u8]) -> Result<FeedPosition, StoreError> {
    let (tx, seq) = bytes
        .split_at_checked(8)
        .filter(|(_, seq)| seq.len() == 8)
        .ok_or_else(|| {
            StoreError::Corrupt(format!("setting {FEED_TRIMMED}: {} bytes", bytes.len()))
        })?;
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
    Ok(FeedPosition {
        tx: word(tx),
        seq: word(seq),
    })
}

/// The setting that names the key the games' seat tokens derive from.
pub const TOKEN_KEY_FINGERPRINT: &str = "token_key_fingerprint";

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The game's version is no longer the one expected.
    #[error("version conflict: the game is at version {current}")]
    Conflict { current: u64 },
    #[error("no such game")]
    NotFound,
    /// The game id or the request id is already stored.
    #[error("already stored")]
    Duplicate,
    /// A read failed.
    #[error("storage failed: {0}")]
    Database(#[from] sqlx::Error),
    /// The database cannot be reached (a database server that is down or
    /// restarting): nothing was read or written; retry later.
    #[error("the database is unreachable: {0}")]
    Unreachable(String),
    /// A write failed in the storage itself.
    #[error("storage write failed ({applied}): {message}")]
    WriteFailed { message: String, applied: Applied },
    #[error("storage failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// A stored row cannot be read back as written (damaged bytes, a
    /// value out of range): only what touches that row fails.
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
}

/// Whether a failed write is in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// It failed before COMMIT: nothing of it is stored.
    No,
    /// It failed at or after COMMIT: it may be stored or not. A retry with
    /// the same request id tells (the id is stored with the write).
    Unknown,
}

impl std::fmt::Display for Applied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Applied::No => "not stored",
            Applied::Unknown => "outcome unknown",
        })
    }
}

/// A commit seen by the store, made by this process or another one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A game reached `version`.
    Game { game_id: String, version: u64 },
    /// Notices may have been lost (the listening connection was lost and
    /// is back): whoever follows games must read their versions again.
    Resync,
}

/// Where games are kept.
pub trait GameStore: Clone + Send + Sync + 'static {
    /// Whether other processes (replicas) may write the same games: a
    /// copy of a game in memory may then be out of date at any time.
    fn shared(&self) -> bool {
        false
    }

    /// Commits of every process using the store, as they become durable,
    /// for a shared store (none for a store only this process writes).
    /// A notice may come late, or be lost and then followed by
    /// [`Change::Resync`]; it never comes before its commit is visible.
    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<Change>> {
        None
    }

    /// The version a game is stored at, if it exists (cheaper than
    /// [`load`](Self::load)).
    fn version(
        &self,
        game_id: &str,
    ) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;

    /// `true` while writes succeed, `false` from a failed write until the
    /// store has written again (it tries by itself).
    fn writable(&self) -> tokio::sync::watch::Receiver<bool>;

    /// Finishes the writes queued, copies the log into the database file
    /// and closes; later writes fail (not stored).
    fn close(&self) -> impl Future<Output = ()> + Send;

    /// Stores a new game with its first log entry (version 1) and
    /// NewGame's request id.
    fn create(
        &self,
        game: &GameRecord,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn load(
        &self,
        game_id: &str,
    ) -> impl Future<Output = Result<Option<GameRecord>, StoreError>> + Send;

    /// Replaces the snapshot if it is still at `expected_version`, appends
    /// the log entry (of `game.version`) and records the request, all or
    /// nothing.
    fn commit(
        &self,
        game: &GameRecord,
        expected_version: u64,
        entry: &LogEntry,
        request: Option<&RequestRecord>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The log entries after `version` (from 0: all), in order.
    fn log_after(
        &self,
        game_id: &str,
        version: u64,
    ) -> impl Future<Output = Result<Vec<LogEntry>, StoreError>> + Send;

    fn request(
        &self,
        scope: &str,
        request_id: &str,
    ) -> impl Future<Output = Result<Option<RequestRecord>, StoreError>> + Send;

    /// Whether any game is stored.
    fn holds_games(&self) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// A setting of the database as a whole (see [`TOKEN_KEY_FINGERPRINT`]).
    fn setting(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, StoreError>> + Send;

    fn set_setting(
        &self,
        name: &str,
        value: &[u8],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Records a setting unless one is recorded already, and returns the
    /// one recorded: of several servers starting at once, the first wins
    /// and the others learn its value.
    fn claim_setting(
        &self,
        name: &str,
        value: &[u8],
    ) -> impl Future<Output = Result<Vec<u8>, StoreError>> + Send;

    /// Forgets the request ids of actions recorded before `before`;
    /// returns how many. A retry that comes later is judged afresh, and its
    /// stale version keeps it from being applied twice. NewGame's ids are
    /// kept (one per game): a late retry must not create a second game.
    fn forget_requests(
        &self,
        before: SystemTime,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// The ids of at most `limit` matches that ended before `before`,
    /// those that ended first first.
    fn finished_before(
        &self,
        before: SystemTime,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// The ids of at most `limit` matches whose clock ran out by `now_ms`
    /// (milliseconds since the Unix epoch), the earliest first.
    fn due_before(
        &self,
        now_ms: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Removes a match that has ended, with its log and its request ids
    /// (its actions' and the NewGame's), all or nothing. False, and
    /// nothing removed, when no match that ended has this id (it runs, or
    /// is gone already).
    fn remove_finished(
        &self,
        game_id: &str,
        feed: &Feed,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// A page of matches (see [`MatchQuery`]), in its order.
    fn list_matches(
        &self,
        query: &MatchQuery,
    ) -> impl Future<Output = Result<Vec<MatchRow>, StoreError>> + Send;

    /// At most `limit` feed rows after `after`, in commit order, of the
    /// kinds in `kinds` (a bitmask), with each action's log text when
    /// `with_log`, and how far the feed was trimmed as of the same read.
    /// Only rows every reader will ever see in this order: on
    /// PostgreSQL, none of a transaction older than one still in flight.
    fn feed_after(
        &self,
        after: FeedPosition,
        kinds: u32,
        with_log: bool,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<FeedRow>, StoreError>> + Send;

    /// What the feed holds now.
    fn feed_bounds(&self) -> impl Future<Output = Result<FeedBounds, StoreError>> + Send;

    /// Removes the feed rows committed before `before_ms` (milliseconds
    /// since the Unix epoch), and the removed matches' words kept as long;
    /// returns how many rows. Rows a webhook endpoint active since
    /// `before_ms` has not staged yet are kept.
    fn trim_feed(&self, before_ms: u64) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// An endpoint's place in the feed: the one stored, or, for an
    /// endpoint never seen, `start` (recorded). Of several servers
    /// starting at once, the first wins and the others learn its place.
    /// Either way the endpoint is noted active at `now_ms` (see
    /// [`trim_feed`](Self::trim_feed)); staging from a place to itself
    /// notes it active too.
    fn webhook_place(
        &self,
        endpoint: &str,
        start: FeedPosition,
        now_ms: u64,
    ) -> impl Future<Output = Result<FeedPosition, StoreError>> + Send;

    /// Stages `deliveries` for an endpoint and moves its place from
    /// `from` to `to`, all or nothing, if its place is still `from`
    /// (false, and nothing written, when another server moved it first).
    /// A delivery already staged (same endpoint and event id) is kept as
    /// it is.
    fn stage_deliveries(
        &self,
        endpoint: &str,
        from: FeedPosition,
        to: FeedPosition,
        deliveries: &[NewDelivery],
        now_ms: u64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Claims at most `limit` of an endpoint's pending deliveries due by
    /// `now_ms`, the earliest due first, until `lease_until_ms`: each
    /// counts an attempt, and no other claim takes it before the lease
    /// runs out. Rows another server is claiming are passed over.
    fn claim_deliveries(
        &self,
        endpoint: &str,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Delivery>, StoreError>> + Send;

    /// Records what came of attempts, each by its delivery's event id and
    /// the attempts it was claimed at: only a delivery still pending and
    /// not claimed again since (its lease ran out and another claim took
    /// it) is changed.
    fn settle_deliveries(
        &self,
        endpoint: &str,
        settled: &[Settlement],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// An endpoint's deliveries counted: the pending ones (and the oldest
    /// of them), and, when `settled`, those delivered and given up too
    /// (a longer count: they are kept for days).
    fn delivery_counts(
        &self,
        endpoint: &str,
        settled: bool,
    ) -> impl Future<Output = Result<DeliveryCounts, StoreError>> + Send;

    /// Replaces a game's stored state if it is still at `version`,
    /// nothing else changed (no new version, no log entry): for storing
    /// the same game otherwise (its server seed sealed at rest), never
    /// for an action. False when the game moved on or is gone.
    fn rewrite_state(
        &self,
        game_id: &str,
        version: u64,
        state: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Rewrites the database's files so that no copy of rows replaced or
    /// removed is left in them (SQLite: `VACUUM` and a truncated log;
    /// PostgreSQL: `VACUUM` of the games). For after
    /// [`rewrite_state`](Self::rewrite_state) took a secret out.
    fn compact(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Forgets the endpoints not in `keep` (no longer configured): their
    /// places go, and their pending deliveries are given up at `now_ms`.
    /// Returns how many deliveries were given up.
    fn retire_webhook_endpoints(
        &self,
        keep: &[String],
        now_ms: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deliveries, newest staged first (see [`DeliveryQuery`]).
    fn list_deliveries(
        &self,
        query: &DeliveryQuery,
    ) -> impl Future<Output = Result<Vec<Delivery>, StoreError>> + Send;

    /// Removes the deliveries delivered or given up before `before_ms`;
    /// returns how many.
    fn forget_deliveries(
        &self,
        before_ms: u64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
