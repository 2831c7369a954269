//! The games: loading, acting, storing, and telling watchers.
//!
//! Commands on one game are serialised by that game's lock, held from
//! reading the state to storing the result; the store's compare-and-set
//! on the version keeps several server processes (replicas) correct too.
//! A command is answered only after its result is durable.
//!
//! The data flows one way: the service hands a request to [`Games`]
//! (`new_game`, `actions` or `watchers`); these take the game from
//! the `cache` (which reads it from the store when it is not in memory),
//! ask the variant's rules, store the result, and only then update the
//! cache and tell the watchers. `seats` says whose a token is and
//! `retries` recognises a request already answered, giving its first
//! answer again, rebuilt by `history` from the log once the game has
//! moved on; `events` is the log's format, and the engine's events as the
//! API shows them.

mod actions;
mod analysis;
mod bots;
mod cache;
mod events;
mod export;
mod fleet;
mod guard;
mod hints;
mod history;
mod new_game;
mod retention;
mod retries;
mod seats;
mod watchers;
mod webhooks;

/// Doors for the fuzz targets (crates/fuzz-bodies) into what this module
/// does with bytes read back from the store. Never used by the service.
pub mod fuzzing {
    /// A stored log entry's text, as replays, exports and the feed read
    /// it: every part of an entry read, or a clear error.
    pub fn log_entry(version: u64, text: &str) {
        let entry = bg_store::LogEntry {
            version,
            text: text.to_string(),
            feed: bg_store::Feed::default(),
        };
        if let Ok(read) = super::events::Entry::read(&entry) {
            let _ = (read.by(), read.dice(), read.took_ms(), read.dice_seed());
            let _ = read.events();
            let _ = read.api_events();
        }
    }

    pub use super::new_game::Read;

    /// A NewGame request as NewGame reads it for standard backgammon (15
    /// checkers a side, opposed) with a computer player of every level:
    /// every field checked, or a clear error.
    pub fn new_game_request(
        request: &bg_api::v1::NewGameRequest,
    ) -> Result<Read, crate::error::ApiError> {
        let levels: Vec<String> = bg_bot::level::LEVELS
            .iter()
            .map(|l| l.name.to_string())
            .collect();
        super::new_game::read(
            request,
            bg_engine::CHECKERS,
            bg_engine::Geometry::Opposed,
            &levels,
        )
    }
}

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bg_engine::game::DiceSource;
use bg_fair_dice::FairDice;
use bg_plugin_host::PluginHost;
use bg_store::GameStore;
use rand::Rng;
use tokio::sync::watch;

use crate::error::{ApiError, Reason};

pub use actions::Action;
pub use retries::{
    MAX_REQUEST_ID, MIN_NEW_GAME_ID_CHARACTERS, MIN_NEW_GAME_REQUEST_ID, check_new_game_request_id,
    check_request_id, fingerprint,
};

use cache::Slot;

/// The games this server serves: the store, the key seat tokens derive
/// from, the variants, and the games held in memory.
pub struct Games<S> {
    store: S,
    /// The key seat tokens are derived with (see `seats`).
    secret: [u8; 32],
    plugins: Arc<PluginHost>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    shutdown: watch::Receiver<bool>,
    /// WatchGame streams one game may have open here.
    watchers_per_game: usize,
    /// What a clock that ran out while this server was not running
    /// gives its seat: when this server started, and the grace from then.
    restart: RestartGrace,
    /// How long work calling a plugin may take (see `guard`).
    plugin_deadline: std::time::Duration,
    /// The threads work calling a plugin runs on (see `guard`).
    plugin_threads: guard::PluginThreads,
    /// The computer players' nets, read beside their plugins (see `bots`).
    nets: bots::Nets,
    /// The key feed cursors and page tokens are signed with.
    fleet_key: crate::fleet::TokenKey,
    /// How long the feed keeps events (None: for good).
    feed_window: Option<std::time::Duration>,
    /// Woken at each commit seen (this server's, or another's notice):
    /// fleet feeds read again.
    feed_wake: Arc<tokio::sync::Notify>,
    /// The webhook endpoints the operator configured.
    webhooks: Arc<[Arc<crate::fleet::webhooks::Endpoint>]>,
    /// The key the server seeds of matches in progress are sealed with.
    seed_key: crate::snapshot::SeedKey,
}

/// How long work calling a plugin may take by default.
pub const DEFAULT_PLUGIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// A clock that ran out before this server started (it was down) runs
/// out `grace_ms` after the start instead: the seat gets that long to act
/// once the service is back, rather than losing to the outage at once.
#[derive(Clone, Copy, Debug)]
pub struct RestartGrace {
    pub started_ms: u64,
    pub grace_ms: u64,
}

impl RestartGrace {
    /// Whether a clock is up at `now`, its deadline moved as the grace
    /// says.
    pub(super) fn expired(&self, clock: &bg_engine::clock::Clock, now: u64) -> bool {
        let Some(deadline) = clock.deadline_ms() else {
            return false;
        };
        let deadline = if deadline < self.started_ms {
            self.started_ms.saturating_add(self.grace_ms)
        } else {
            deadline
        };
        now >= deadline
    }
}

impl<S: GameStore> Games<S> {
    pub fn new(
        store: S,
        secret: [u8; 32],
        plugins: Arc<PluginHost>,
        shutdown: watch::Receiver<bool>,
    ) -> Games<S> {
        Games {
            store,
            secret,
            plugins,
            slots: Mutex::new(HashMap::new()),
            shutdown,
            watchers_per_game: usize::MAX,
            restart: RestartGrace {
                started_ms: now_ms(),
                grace_ms: 0,
            },
            plugin_deadline: DEFAULT_PLUGIN_DEADLINE,
            plugin_threads: guard::PluginThreads::new(),
            nets: bots::Nets::default(),
            fleet_key: crate::fleet::TokenKey::derive(&secret),
            feed_window: Some(crate::fleet::DEFAULT_FEED_WINDOW),
            feed_wake: Arc::new(tokio::sync::Notify::new()),
            webhooks: Arc::new([]),
            seed_key: crate::snapshot::SeedKey::derive(&secret),
        }
    }

    /// How a game's server seed is sealed at rest.
    pub(crate) fn seal<'a>(&'a self, game_id: &'a str) -> crate::snapshot::Seal<'a> {
        crate::snapshot::Seal {
            key: &self.seed_key,
            game_id,
        }
    }

    /// Delivers the feed's events to these endpoints
    /// ([`start_webhooks`](Self::start_webhooks) starts them).
    pub fn with_webhooks(mut self, endpoints: Vec<crate::fleet::webhooks::Endpoint>) -> Games<S> {
        self.webhooks = endpoints.into_iter().map(Arc::new).collect();
        self
    }

    /// The feed keeps events for `window` (None: for good).
    pub fn with_feed_window(mut self, window: Option<std::time::Duration>) -> Games<S> {
        self.feed_window = window;
        self
    }

    /// The net of `live`'s variant when the service plays one of its
    /// seats (read from disk the first time, off the plugin's work).
    fn bot_net(&self, live: &cache::Live) -> Option<Arc<bg_bot::Net>> {
        if live.match_state.settings.bots.is_empty() {
            return None;
        }
        self.nets.of(&live.rules.plugin)
    }

    /// Work calling a plugin answers `VARIANT_FAULT` past `deadline`.
    pub fn with_plugin_deadline(mut self, deadline: std::time::Duration) -> Games<S> {
        self.plugin_deadline = deadline;
        self
    }

    /// A clock that ran out before this server started runs out `grace`
    /// after the start instead.
    pub fn with_restart_grace(mut self, grace: std::time::Duration) -> Games<S> {
        self.restart.grace_ms = grace.as_millis().min(u128::from(u64::MAX)) as u64;
        self
    }

    /// At most `limit` watchers of one game on this server.
    pub fn with_watchers_per_game(mut self, limit: usize) -> Games<S> {
        self.watchers_per_game = limit;
        self
    }

    pub fn plugins(&self) -> &PluginHost {
        &self.plugins
    }
}

/// Now, in milliseconds since the Unix epoch: the time the clocks of
/// matches are read in (the server's wall clock; replicas keep theirs in
/// step with NTP).
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// Now, in microseconds since the Unix epoch: the times lists order
/// matches by.
pub(super) fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros().min(i64::MAX as u128) as i64)
}

/// A seat as the index keeps it: 0 none, 1 white, 2 black.
pub(super) fn seat_index(seat: Option<bg_engine::Seat>) -> u8 {
    match seat {
        None => 0,
        Some(bg_engine::Seat::White) => 1,
        Some(bg_engine::Seat::Black) => 2,
    }
}

/// Where a match's dice come from: its verifiable sequence, or the
/// thread's CSPRNG (ChaCha, seeded by the OS) for a match without one.
struct ServerDice {
    fair: Option<FairDice>,
    rng: rand::rngs::ThreadRng,
}

impl ServerDice {
    fn new(fair: Option<FairDice>) -> ServerDice {
        ServerDice {
            fair,
            rng: rand::rng(),
        }
    }
}

impl DiceSource for ServerDice {
    fn die(&mut self) -> u8 {
        match &mut self.fair {
            Some(fair) => fair.next_die(),
            None => self.rng.random_range(1..=6),
        }
    }
}

/// A game id in its one stored spelling: a UUID, lower case, with hyphens.
/// Every spelling of a UUID is taken (upper case, without hyphens, in
/// braces, as `urn:uuid:`) and means the same game.
pub fn game_id_of(game_id: &str) -> Result<String, ApiError> {
    uuid::Uuid::try_parse(game_id)
        .map(|id| id.hyphenated().to_string())
        .map_err(|_| {
            ApiError::invalid(
                "game_id",
                format!("{} is not a game id (a UUID)", crate::error::quote(game_id)),
            )
        })
}

/// A game in memory that vanished under its lock: never expected.
pub(super) fn lost() -> ApiError {
    ApiError::new(Reason::Internal, "the game was lost from memory")
}

/// Stored data that does not read back as written.
pub(super) fn corrupt(e: impl std::fmt::Display) -> ApiError {
    ApiError::data_loss(e)
}

/// Data of the server's own making that cannot be serialised (never
/// expected: a bug, not the caller's fault).
pub(super) fn unserialisable(e: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %e, "serialising a game failed");
    ApiError::new(Reason::Internal, "the game could not be saved")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bg_store::{Durability, SqliteStore};

    #[tokio::test]
    async fn asking_for_games_that_do_not_exist_keeps_nothing_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("games.db"), Durability::Normal)
            .await
            .unwrap();
        let plugins = Arc::new(PluginHost::new(dir.path()));
        let games = Games::new(store, [7; 32], plugins, watch::channel(false).1);
        for _ in 0..100 {
            let unknown = uuid::Uuid::now_v7().to_string();
            let refused = games
                .get(&unknown, &crate::fields::Fields::ALL)
                .await
                .unwrap_err();
            assert_eq!(refused.reason, crate::error::Reason::GameNotFound);
        }
        assert_eq!(games.live_games(), 0);
    }
}
