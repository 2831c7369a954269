//! The backgammon game service: tonic services over the match engine,
//! the plugin host and the game store.
//!
//! This crate owns the API's behaviour: authentication by seat token,
//! optimistic concurrency, idempotent retries, durability before answers,
//! health, reflection and graceful shutdown. It never knows a variant's
//! rules (those come from plugins) and never computes legality itself.

mod browsers;
mod chores;
pub mod config;
pub mod connections;
pub mod convert;
pub mod data_dir;
pub mod error;
pub mod fields;
pub mod fleet;
pub mod fuzzing;
pub mod games;
pub mod metrics;
pub mod rate_limit;
pub mod service;
pub mod snapshot;
pub mod tls;
mod web;

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

pub use crate::config::{Config, Database, Limits, redacted};
use crate::data_dir::DataDir;
pub use crate::tls::TlsFiles;

use crate::chores::{Health, follow_storage};

/// Requests larger than this are refused: game messages are small.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

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

/// What `backgammond rotate-key` did.
#[derive(Debug)]
pub struct Rotated {
    /// The key file now holding the new key.
    pub key_file: std::path::PathBuf,
    /// Seeds of matches in progress sealed again under the new key.
    pub resealed: u64,
}

/// Rotates the token key, every server stopped: the seeds of matches in
/// progress sealed under the key in use are sealed again under the key
/// in `new_key_file`, the database records the new key, and the key
/// file in use (`--token-key-file`, or the data folder's `server.key`)
/// is replaced by the new key. Seat tokens already given keep working
/// (a token is checked against the hash stored when its game began);
/// new games' tokens, feed cursors, page tokens and sealed seeds derive
/// from the new key. Run again after an interruption, it finishes.
pub async fn rotate_key(
    data_dir: &std::path::Path,
    database: Database,
    token_key_file: Option<std::path::PathBuf>,
    new_key_file: &std::path::Path,
) -> anyhow::Result<Rotated> {
    match database {
        Database::Sqlite(path) => {
            // Refused while a server holds the folder.
            let data = DataDir::lock(data_dir)?;
            let file_lock = path.as_deref().map(DataDir::lock_file_of).transpose()?;
            let database = path.unwrap_or_else(|| data.database());
            let key_file = token_key_file.unwrap_or_else(|| data.key_file());
            data_dir::check_database_present(&database, &key_file)?;
            let store = SqliteStore::open(&database, Durability::Full)
                .await
                .with_context(|| format!("opening {}", database.display()))?;
            let rotated = rotate_in(store, key_file, new_key_file).await;
            drop((data, file_lock));
            rotated
        }
        Database::Postgres(url) => {
            let key_file = token_key_file.unwrap_or_else(|| data_dir.join("server.key"));
            let store = PgStore::connect(&url)
                .await
                .with_context(|| format!("connecting to {}", redacted(&url)))?;
            rotate_in(store, key_file, new_key_file).await
        }
    }
}

async fn rotate_in<S: GameStore>(
    store: S,
    key_file: std::path::PathBuf,
    new_key_file: &std::path::Path,
) -> anyhow::Result<Rotated> {
    let (old, new) = data_dir::rotation_keys(&key_file, new_key_file, &store).await?;
    let (_stop, stop_rx) = watch::channel(false);
    let games = games::Games::new(
        store.clone(),
        new,
        Arc::new(PluginHost::with_dirs(Vec::new())),
        stop_rx,
    );
    let resealed = games
        .reseal_seeds(&snapshot::SeedKey::derive(&old))
        .await
        .map_err(|e| anyhow::anyhow!("sealing the stored server seeds again: {}", e.message))?;
    // In this order, so that an interruption anywhere is taken up again
    // by running the command again: the seeds, the database's record of
    // the key, then the key file.
    data_dir::record_key(&new, &store).await?;
    data_dir::write_key(&key_file, &new)?;
    store.close().await;
    Ok(Rotated { key_file, resealed })
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
    let writable = store.writable();
    let closing = store.clone();
    let store_for_chores = store.clone();
    let changes = store.changes();
    let games = Arc::new(
        games::Games::new(store, secret, plugins.clone(), stop_rx.clone())
            .with_watchers_per_game(config.limits.watchers_per_game)
            .with_restart_grace(config.clock_restart_grace)
            .with_plugin_deadline(config.plugin_call_timeout)
            .with_feed_window(config.feed_window)
            .with_webhooks(config.webhooks.clone()),
    );
    // Server seeds stored in the clear before they were sealed: sealed
    // now, before any call is served.
    match games.seal_plain_seeds().await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            sealed = n,
            "server seeds of matches in progress sealed at rest, and the database compacted"
        ),
        Err(e) => anyhow::bail!("sealing the stored server seeds: {}", e.message),
    }
    if let Some(changes) = changes {
        // Another server's commits reach this server's watchers.
        tokio::spawn(
            games
                .clone()
                .follow_changes(changes, config.watch_resync, stop_rx.clone()),
        );
    }
    chores::start(&config, &store_for_chores, &games, &plugins, &stop_rx)?;
    games.start_webhooks().await?;
    // Requests may come compressed as gRPC clients send them (gzip,
    // deflate, zstd);
    // answers go uncompressed: they are small, and compressing costs more
    // time than it saves on the wire.
    let routes = tonic::service::Routes::from(routes(
        tonic::service::Routes::new(health_service),
        games,
        config.limits.new_games,
        config.operator_token.clone(),
        config.web_client,
    )?);

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
        // Browsers: gRPC-Web over HTTP/1.1 (or HTTP/2) on this same port
        // (tonic-web's layer, on the API's routes above), and CORS for the
        // origins the operator lists (none: no CORS answer at all, so
        // browsers refuse every cross-origin call).
        .accept_http1(true)
        .layer(tower::util::option_layer(browsers::cors(
            &config.cors_origins,
        )?))
        .layer(error::ErrorInfoLayer)
        .layer(metrics::RpcMetricsLayer)
        .add_routes(routes)
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

/// What the port answers, beside `health`: reflection, the API (gRPC and
/// gRPC-Web) and what browsers GET (web.rs, the web client's files when
/// `web_client`).
fn routes<S: GameStore>(
    health: tonic::service::Routes,
    games: Arc<games::Games<S>>,
    new_games: Option<rate_limit::Rate>,
    operator_token: Option<String>,
    web_client: bool,
) -> anyhow::Result<axum::Router> {
    let web_games = games.clone();
    let game_service = GameServiceServer::new(
        service::Service::new(games, new_games).with_operator_token(operator_token),
    )
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

    // The API's services, and beside them what browsers GET (web.rs).
    let routes = health
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(game_service)
        .into_axum_router()
        // gRPC-Web for the API alone: the layer refuses any other
        // HTTP/1.1 request, which the pages' GETs are.
        .layer(tonic_web::GrpcWebLayer::new())
        .merge(web::routes(web_games, web_client));
    Ok(routes)
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
