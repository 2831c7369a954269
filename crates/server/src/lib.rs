//! The backgammon game service: tonic services over the match engine,
//! the plugin host and the game store.
//!
//! This crate owns the API's behaviour: authentication by seat token,
//! optimistic concurrency, idempotent retries, durability before answers,
//! health, reflection and graceful shutdown. It never knows a variant's
//! rules (those come from plugins) and never computes legality itself.

pub mod connections;
pub mod convert;
pub mod data_dir;
pub mod error;
pub mod fields;
pub mod games;
pub mod metrics;
pub mod rate_limit;
pub mod service;
pub mod snapshot;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bg_api::v1::game_service_server::GameServiceServer;
use bg_plugin_host::PluginHost;
use bg_store::{Durability, GameStore, PgStore, SqliteStore};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::codec::CompressionEncoding;
use tonic::transport::{Server, ServerTlsConfig};
use tonic_health::ServingStatus;

use crate::data_dir::DataDir;
pub use crate::tls::TlsFiles;

/// Requests larger than this are refused: game messages are small.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Where the games are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file, owned by this server alone (`None`: `games.db` in
    /// the data folder). The default.
    Sqlite(Option<PathBuf>),
    /// A PostgreSQL database (`postgres://...`), which several servers
    /// (replicas) may share.
    Postgres(String),
}

impl std::str::FromStr for Database {
    type Err = String;

    /// `sqlite:PATH` (or `sqlite://PATH`), or `postgres://...` (also
    /// `postgresql://...`).
    fn from_str(url: &str) -> Result<Database, String> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Database::Postgres(url.to_string()));
        }
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(
                    "sqlite: needs a file path, as in sqlite:/var/lib/backgammon/games.db".into(),
                );
            }
            return Ok(Database::Sqlite(Some(PathBuf::from(path))));
        }
        Err(format!(
            "{:?} is not a database URL: give sqlite:PATH or postgres://USER@HOST/DATABASE",
            redacted(url)
        ))
    }
}

/// A database URL with its password, if any, hidden (for messages).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// How the server is set up.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    /// Plugin folders, searched in order (the first wins a name clash).
    pub plugin_dirs: Vec<PathBuf>,
    pub data_dir: PathBuf,
    pub database: Database,
    /// The seat-token key (None: `server.key` in the data folder).
    pub token_key_file: Option<PathBuf>,
    pub durability: Durability,
    /// How often the plugin folder is scanned for new plugins.
    pub plugin_scan_interval: Duration,
    /// After a shutdown signal, how long calls in flight may take before
    /// the server stops anyway.
    pub shutdown_grace: Duration,
    /// Games unused this long leave memory (they stay stored).
    pub idle_eviction: Duration,
    /// How long request ids are remembered for retries (None: for ever).
    pub request_retention: Option<Duration>,
    /// On a shared database, how often watched games are read again, in
    /// case a notice of another replica's commit was lost.
    pub watch_resync: Duration,
    /// TLS on the gRPC port (None: plain TCP, for local use).
    pub tls: Option<TlsFiles>,
    /// What clients may hold and ask for.
    pub limits: Limits,
    /// How long matches are kept once they ended (None: for good).
    pub finished_retention: Option<Duration>,
    /// Where each finished match's JSON record is written before it is
    /// removed (None: removed without a record).
    pub archive_dir: Option<PathBuf>,
    /// How often the store is asked for clocks that ran out (the flag
    /// falls at most this late).
    pub clock_sweep: Duration,
    /// What a clock that ran out while the server was down gives its seat
    /// from the server's start.
    pub clock_restart_grace: Duration,
    /// How long work calling a plugin may take before it is answered
    /// VARIANT_FAULT and the plugin marked unhealthy.
    pub plugin_call_timeout: Duration,
    /// Set: plugins run in worker processes started so (`--plugin-isolation
    /// process`); unset: in this process.
    pub plugin_workers: Option<bg_plugin_host::WorkerSettings>,
}

/// What clients may hold and ask for: connections, streams, watchers and
/// games created, each with a default an operator may change.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub connections: connections::Limits,
    /// Calls in flight on one connection (HTTP/2 MAX_CONCURRENT_STREAMS,
    /// advertised to clients).
    pub streams_per_connection: u32,
    /// WatchGame streams open on one game, on this server.
    pub watchers_per_game: usize,
    /// Games one caller may create: a burst, refilled at a rate per
    /// second (None: no limit).
    pub new_games: Option<rate_limit::Rate>,
}

impl Limits {
    pub const MAX_CONNECTIONS: usize = 4096;
    pub const IDLE_CONNECTION_SECONDS: f64 = 300.0;
    pub const HANDSHAKE_SECONDS: f64 = 10.0;
    pub const STREAMS_PER_CONNECTION: u32 = 256;
    pub const WATCHERS_PER_GAME: usize = 256;
    /// A site's backend is one caller for all its players: room for a
    /// busy one (a server plays a few hundred games a second at most),
    /// while a flood is held to this.
    pub const NEW_GAMES_PER_SECOND: f64 = 100.0;
    pub const NEW_GAMES_BURST: u32 = 1000;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: connections::Limits {
                max_connections: Limits::MAX_CONNECTIONS,
                idle: Duration::from_secs_f64(Limits::IDLE_CONNECTION_SECONDS),
                handshake: Duration::from_secs_f64(Limits::HANDSHAKE_SECONDS),
            },
            streams_per_connection: Limits::STREAMS_PER_CONNECTION,
            watchers_per_game: Limits::WATCHERS_PER_GAME,
            new_games: Some(rate_limit::Rate {
                per_second: Limits::NEW_GAMES_PER_SECOND,
                burst: f64::from(Limits::NEW_GAMES_BURST),
            }),
        }
    }
}

/// Runs the server until `shutdown` resolves: reports NOT_SERVING, lets
/// calls in flight finish, then returns.
///
/// On SQLite the server takes the data folder's lock (one server per
/// file); on PostgreSQL it takes none (replicas share the database, each
/// with a data folder of its own, or none).
pub async fn run(
    config: Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    // Checked before anything is opened: a bad certificate touches nothing.
    let tls = config.tls.as_ref().map(TlsFiles::load).transpose()?;
    match config.database.clone() {
        Database::Sqlite(path) => {
            let data = DataDir::lock(&config.data_dir)?;
            // A file outside the data folder has a lock of its own.
            let file_lock = path.as_deref().map(DataDir::lock_file_of).transpose()?;
            let database = path.unwrap_or_else(|| data.database());
            let key_file = config
                .token_key_file
                .clone()
                .unwrap_or_else(|| data.key_file());
            data_dir::check_database_present(&database, &key_file)?;
            let store = SqliteStore::open(&database, config.durability)
                .await
                .with_context(|| format!("opening {}", database.display()))?;
            let secret = data_dir::token_key(&key_file, &store).await?;
            tracing::info!(database = %database.display(), "games stored in SQLite");
            let served = serve(config, tls.clone(), store, secret, shutdown).await;
            drop((data, file_lock));
            served
        }
        Database::Postgres(url) => {
            let key_file = config
                .token_key_file
                .clone()
                .unwrap_or_else(|| config.data_dir.join("server.key"));
            if config.durability != Durability::Full {
                tracing::warn!(
                    "--durability applies to SQLite; on PostgreSQL its synchronous_commit setting decides"
                );
            }
            let store = PgStore::connect(&url)
                .await
                .with_context(|| format!("connecting to {}", redacted(&url)))?;
            let secret = data_dir::token_key(&key_file, &store).await?;
            tracing::info!(database = %redacted(&url), "games stored in PostgreSQL (replicas may share it)");
            serve(config, tls.clone(), store, secret, shutdown).await
        }
    }
}

/// Serves the games in `store` until `shutdown` resolves.
async fn serve<S: GameStore>(
    config: Config,
    tls: Option<ServerTlsConfig>,
    store: S,
    secret: [u8; 32],
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let (reporter, health_service) = tonic_health::server::health_reporter();
    let health = Arc::new(Health::new(reporter));
    health.set(ServingStatus::NotServing).await;
    let mut plugins = PluginHost::with_dirs(config.plugin_dirs.clone());
    if let Some(workers) = &config.plugin_workers {
        plugins = plugins.isolated(workers.clone());
    }
    let plugins = Arc::new(plugins);
    let report = plugins.scan().context("loading plugins")?;
    if let Some(folder) = report.unreadable.first() {
        anyhow::bail!("loading plugins: {}", folder.reason);
    }
    for plugin in plugins.plugins() {
        metrics::variant_loaded(plugin.name(), plugin.version());
    }
    tracing::info!(
        loaded = report.loaded.len(),
        skipped = report.skipped.len(),
        folders = ?config.plugin_dirs,
        "plugins scanned"
    );
    let (stop_tx, stop_rx) = watch::channel(false);
    let scanned = plugins.clone();
    tokio::spawn(repeat(
        config.plugin_scan_interval,
        stop_rx.clone(),
        move || rescan_plugins(scanned.clone()),
    ));

    if let Some(retention) = config.request_retention {
        let every = (retention / 4).clamp(Duration::from_millis(250), Duration::from_secs(3600));
        let store = store.clone();
        tokio::spawn(repeat(every, stop_rx.clone(), move || {
            forget_old_requests(store.clone(), retention)
        }));
    }
    let writable = store.writable();
    let closing = store.clone();
    let changes = store.changes();
    let games = Arc::new(
        games::Games::new(store, secret, plugins, stop_rx.clone())
            .with_watchers_per_game(config.limits.watchers_per_game)
            .with_restart_grace(config.clock_restart_grace)
            .with_plugin_deadline(config.plugin_call_timeout),
    );
    if let Some(changes) = changes {
        // Another server's commits reach this server's watchers.
        tokio::spawn(
            games
                .clone()
                .follow_changes(changes, config.watch_resync, stop_rx.clone()),
        );
    }
    if let Some(retention) = config.finished_retention {
        if let Some(folder) = &config.archive_dir {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating the archive folder {}", folder.display()))?;
        }
        let every = (retention / 4).clamp(Duration::from_millis(250), Duration::from_secs(3600));
        let (games, archive) = (games.clone(), config.archive_dir.clone());
        tokio::spawn(repeat(every, stop_rx.clone(), move || {
            retire_finished_matches(games.clone(), retention, archive.clone())
        }));
    }
    // Clocks: the store's index of deadlines says which ran out, whichever
    // server holds the game (or none); the compare-and-set of each
    // timeout makes it apply once, however many servers sweep.
    let timed = games.clone();
    tokio::spawn(repeat(config.clock_sweep, stop_rx.clone(), move || {
        time_out_due(timed.clone())
    }));
    let idle = config.idle_eviction;
    let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    let held = games.clone();
    tokio::spawn(repeat(every, stop_rx.clone(), move || {
        evict_idle_games(held.clone(), idle)
    }));
    // Requests may come compressed as gRPC clients send them (gzip,
    // deflate, zstd);
    // answers go uncompressed: they are small, and compressing costs more
    // time than it saves on the wire.
    let game_service =
        GameServiceServer::new(service::Service::new(games, config.limits.new_games))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Deflate)
            .accept_compressed(CompressionEncoding::Zstd);
    // Reflection in both versions: grpcurl before 1.8.8, evans and older
    // Postman only ask v1alpha.
    let reflection_v1 = reflection()
        .build_v1()
        .context("building the reflection service")?;
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .context("building the reflection service")?;

    let mut builder = Server::builder();
    match (tls, &config.tls) {
        (Some(tls), Some(files)) => {
            builder = builder.tls_config(tls).context("setting up TLS")?;
            tracing::info!("gRPC over {}", files.describe());
        }
        _ => tracing::info!("gRPC over plain TCP, no TLS (--tls-cert and --tls-key turn it on)"),
    }
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let address = listener.local_addr()?;
    health.set(ServingStatus::Serving).await;
    tokio::spawn(follow_storage(health.clone(), writable, stop_rx));
    // A stable line that scripts and test containers wait for.
    tracing::info!(%address, "listening");
    {
        use std::io::Write;
        // Never a panic if stdout is gone (println! would panic).
        let _ = writeln!(std::io::stdout(), "backgammond listening on {address}");
    }

    let (begun_tx, mut begun) = watch::channel(false);
    let stopping = async move {
        shutdown.await;
        tracing::info!("shutting down: NOT_SERVING, finishing calls in flight");
        health.stop().await;
        let _ = stop_tx.send(true);
        let _ = begun_tx.send(true);
    };
    let keepalive = (config.limits.connections.idle / 3).min(KEEPALIVE_INTERVAL);
    let serving = builder
        .timeout(Duration::from_secs(30))
        .concurrency_limit_per_connection(config.limits.streams_per_connection as usize)
        .max_concurrent_streams(config.limits.streams_per_connection)
        // Every live client answers these pings: its connection is never
        // silent for --idle-connection-seconds (see `connections`), and a
        // peer that no longer answers is dropped.
        .http2_keepalive_interval(Some(keepalive))
        .http2_keepalive_timeout(Some(keepalive.min(KEEPALIVE_TIMEOUT)))
        .layer(error::ErrorInfoLayer)
        .layer(metrics::RpcMetricsLayer)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(game_service)
        .serve_with_incoming_shutdown(
            connections::Incoming::new(listener, config.limits.connections),
            stopping,
        );
    // Clients that never close their connections must not hold the
    // process past the grace period.
    let grace = config.shutdown_grace;
    let deadline = async move {
        let _ = begun.wait_for(|&b| b).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        served = serving => served.context("serving")?,
        _ = deadline => tracing::warn!(?grace, "calls still open after the grace period; stopping anyway"),
    }
    // SQLite: the log copied into the database file, so games.db alone
    // then holds every game (a copy of it is a backup).
    if tokio::time::timeout(STORE_CLOSE_TIMEOUT, closing.close())
        .await
        .is_err()
    {
        tracing::warn!("the store did not close in time; the log stays beside the database");
    }
    tracing::info!("stopped");
    Ok(())
}

/// The reflection service's builder, with every service the server runs.
fn reflection() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(bg_api::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
}

/// How often the server pings each client's connection (at most: three
/// times within the idle limit), and how long it waits for the answer
/// before dropping it.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the store may take to finish its writes and checkpoint at
/// shutdown.
const STORE_CLOSE_TIMEOUT: Duration = Duration::from_secs(30);

/// The health the server reports: SERVING once ready, NOT_SERVING while
/// storage refuses writes and from the moment it starts shutting down.
struct Health {
    reporter: tonic_health::server::HealthReporter,
    /// Set at shutdown; from then on nothing reports SERVING again.
    stopping: tokio::sync::Mutex<bool>,
}

impl Health {
    fn new(reporter: tonic_health::server::HealthReporter) -> Health {
        Health {
            reporter,
            stopping: tokio::sync::Mutex::new(false),
        }
    }

    /// Sets the health of the server as a whole and of the game service,
    /// unless it is shutting down.
    async fn set(&self, status: ServingStatus) {
        let stopping = self.stopping.lock().await;
        if !*stopping {
            self.report(status).await;
        }
    }

    /// NOT_SERVING for good.
    async fn stop(&self) {
        let mut stopping = self.stopping.lock().await;
        *stopping = true;
        self.report(ServingStatus::NotServing).await;
    }

    async fn report(&self, status: ServingStatus) {
        self.reporter.set_service_status("", status).await;
        self.reporter
            .set_service_status(bg_api::v1::game_service_server::SERVICE_NAME, status)
            .await;
    }
}

/// NOT_SERVING while the store refuses writes (a full disk), SERVING again
/// once it takes them, until the server stops.
async fn follow_storage(
    health: Arc<Health>,
    mut writable: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            changed = writable.changed() => if changed.is_err() {
                // The store's writer is gone: no write can succeed.
                tracing::error!("the store stopped: NOT_SERVING");
                health.set(ServingStatus::NotServing).await;
                return;
            },
            _ = stop.changed() => return,
        }
        let status = if *writable.borrow_and_update() {
            tracing::info!("storage takes writes again: SERVING");
            ServingStatus::Serving
        } else {
            tracing::error!("storage refuses writes: NOT_SERVING until it takes them again");
            ServingStatus::NotServing
        };
        health.set(status).await;
    }
}

/// Runs `chore` every `period` until the server stops.
async fn repeat<F, Chore>(period: Duration, mut stop: watch::Receiver<bool>, mut chore: F)
where
    F: FnMut() -> Chore,
    Chore: std::future::Future<Output = ()>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stop.changed() => return,
        }
        chore().await;
    }
}

/// Forgets idle games (they stay in the store).
async fn evict_idle_games<S: bg_store::GameStore>(games: Arc<games::Games<S>>, idle: Duration) {
    let evicted = games.evict_idle(idle);
    if evicted > 0 {
        tracing::debug!(evicted, live = games.live_games(), "idle games left memory");
    }
}

/// Forgets request ids older than `retention`: a retry that late is
/// judged afresh (its stale version still keeps it from being applied
/// twice), and the id may name another action.
async fn forget_old_requests<S: bg_store::GameStore>(store: S, retention: Duration) {
    let Some(before) = std::time::SystemTime::now().checked_sub(retention) else {
        return;
    };
    match store.forget_requests(before).await {
        Ok(0) => {}
        Ok(forgotten) => tracing::debug!(forgotten, "old request ids forgotten"),
        Err(e) => {
            tracing::warn!(error = %e, "forgetting old request ids failed; retried later")
        }
    }
}

/// Ends by time the matches whose running seat's time is up.
async fn time_out_due<S: bg_store::GameStore>(games: Arc<games::Games<S>>) {
    match games.time_out_due().await {
        Ok(0) => {}
        Ok(timed_out) => tracing::debug!(timed_out, "clocks ran out"),
        Err(e) => {
            tracing::warn!(error = %e.message, "looking for clocks that ran out failed; tried again")
        }
    }
}

/// Removes the matches that ended longer than `retention` ago, each
/// written first into `archive` if there is one.
async fn retire_finished_matches<S: bg_store::GameStore>(
    games: Arc<games::Games<S>>,
    retention: Duration,
    archive: Option<PathBuf>,
) {
    let Some(before) = std::time::SystemTime::now().checked_sub(retention) else {
        return;
    };
    match games.retire_finished(before, archive.as_deref()).await {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "finished matches past their retention removed"),
        Err(e) => {
            tracing::warn!(error = %e.message, "removing finished matches failed; retried later")
        }
    }
}

/// Picks up plugin files dropped into the folder while the server runs.
async fn rescan_plugins(plugins: Arc<PluginHost>) {
    // Loading runs plugin code and touches the disk: off the async threads.
    match tokio::task::spawn_blocking(move || plugins.scan()).await {
        Ok(Ok(report)) => {
            for plugin in report.loaded {
                metrics::variant_loaded(plugin.name(), plugin.version());
                tracing::info!(variant = plugin.name(), "new variant available");
            }
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "plugin scan skipped"),
        Err(e) => tracing::error!(error = %e, "plugin scan failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_url_names_sqlite_or_postgresql() {
        assert_eq!(
            "sqlite:/var/lib/games.db".parse(),
            Ok(Database::Sqlite(Some("/var/lib/games.db".into())))
        );
        assert_eq!(
            "sqlite://games.db".parse(),
            Ok(Database::Sqlite(Some("games.db".into())))
        );
        for url in ["postgres://u@db/bg", "postgresql://u:p@db:5433/bg"] {
            assert_eq!(url.parse(), Ok(Database::Postgres(url.into())));
        }
        for refused in ["sqlite:", "mysql://db/bg", "games.db", ""] {
            assert!(refused.parse::<Database>().is_err(), "{refused:?}");
        }
    }

    #[test]
    fn a_password_never_shows_in_messages() {
        assert_eq!(
            redacted("postgres://bg:s3cret@db:5432/games"),
            "postgres://bg:***@db:5432/games"
        );
        assert_eq!(redacted("postgres://bg@db/games"), "postgres://bg@db/games");
        let refused = "mysql://bg:s3cret@db/x".parse::<Database>().unwrap_err();
        assert!(!refused.contains("s3cret"), "{refused}");
    }
}
