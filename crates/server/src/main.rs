//! `backgammond`: the game service.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use bg_server::rate_limit::Rate;
use bg_server::{Config, Database, Limits, TlsFiles, connections, run};
use bg_store::Durability;
use clap::{Parser, Subcommand, ValueEnum};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

#[derive(Parser)]
#[command(
    name = "backgammond",
    version,
    about = "The backgammon game service (gRPC)"
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, env = "BACKGAMMON_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Folder of variant plugins; new files are picked up while running.
    /// Repeat it (or separate folders with `:` as in PATH) for several
    /// folders; at startup the first one wins when two hold the same
    /// variant (later, the plugin loaded first keeps the name).
    #[arg(
        long,
        env = "BACKGAMMON_PLUGIN_DIR",
        default_value = "target/plugins",
        value_delimiter = ':'
    )]
    plugin_dir: Vec<PathBuf>,
    /// Folder for the games database (created if missing).
    #[arg(long, env = "BACKGAMMON_DATA_DIR", default_value = "data")]
    data_dir: PathBuf,
    /// Where games are stored: `sqlite:PATH`, or `postgres://...` for a
    /// database several servers (replicas) share. Default: games.db in
    /// the data folder.
    #[arg(long, env = "BACKGAMMON_DATABASE_URL", hide_env_values = true)]
    database: Option<String>,
    /// The key seat tokens derive from (32 bytes). Default: server.key in
    /// the data folder, created on first use with SQLite. With PostgreSQL
    /// it must exist, and be the same file on every replica.
    #[arg(long, env = "BACKGAMMON_TOKEN_KEY_FILE")]
    token_key_file: Option<PathBuf>,
    /// SQLite: `full`: every answered action survives a power cut; `normal`: it
    /// survives a killed process.
    #[arg(long, env = "BACKGAMMON_DURABILITY", value_enum, default_value_t = DurabilityArg::Full)]
    durability: DurabilityArg,
    /// Seconds between scans of the plugin folder.
    #[arg(long, env = "BACKGAMMON_PLUGIN_SCAN_SECONDS", default_value_t = 2.0)]
    plugin_scan_seconds: f64,
    /// Seconds calls in flight may take to finish after SIGTERM.
    #[arg(
        long,
        env = "BACKGAMMON_SHUTDOWN_GRACE_SECONDS",
        default_value_t = 10.0
    )]
    shutdown_grace_seconds: f64,
    /// Seconds after which an unused game leaves memory (it stays stored).
    #[arg(long, env = "BACKGAMMON_IDLE_SECONDS", default_value_t = 300.0)]
    idle_seconds: f64,
    /// Seconds an action's request id is remembered for retries (0: for
    /// ever; NewGame's are always kept).
    #[arg(
        long,
        env = "BACKGAMMON_REQUEST_RETENTION_SECONDS",
        default_value_t = 86_400.0,
        value_parser = seconds
    )]
    request_retention_seconds: f64,
    /// With a shared database, seconds between two readings of the
    /// watched games' versions, in case a notice of another replica's
    /// commit was lost (its replica died before sending it).
    #[arg(
        long,
        env = "BACKGAMMON_WATCH_RESYNC_SECONDS",
        default_value_t = 5.0,
        value_parser = seconds
    )]
    watch_resync_seconds: f64,
    /// Log format.
    #[arg(long, env = "BACKGAMMON_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Serve Prometheus metrics on http://ADDR/metrics (off by default);
    /// docs/operating.md lists them.
    #[arg(long, env = "BACKGAMMON_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Serve gRPC over TLS with this certificate chain (PEM, leaf first);
    /// needs --tls-key. Without it the port speaks plain TCP (local use).
    #[arg(long, env = "BACKGAMMON_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, env = "BACKGAMMON_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Ask every caller for a client certificate signed by a CA in this
    /// file (PEM): a caller without one is refused at the handshake.
    /// Needs --tls-cert.
    #[arg(long, env = "BACKGAMMON_CLIENT_CA", requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    /// Client connections open at once; more are closed as they come, so
    /// the server keeps file descriptors for its own files. Keep it below
    /// the process's descriptor limit (`ulimit -n`).
    #[arg(long, env = "BACKGAMMON_MAX_CONNECTIONS", default_value_t = Limits::MAX_CONNECTIONS)]
    max_connections: usize,
    /// Seconds a connection may send nothing before it is closed (the
    /// server pings every client each minute, and a live one answers).
    #[arg(long, env = "BACKGAMMON_IDLE_CONNECTION_SECONDS", default_value_t = Limits::IDLE_CONNECTION_SECONDS, value_parser = seconds)]
    idle_connection_seconds: f64,
    /// Seconds a new connection has to send its first bytes (the TLS or
    /// HTTP/2 handshake).
    #[arg(long, env = "BACKGAMMON_HANDSHAKE_SECONDS", default_value_t = Limits::HANDSHAKE_SECONDS, value_parser = seconds)]
    handshake_seconds: f64,
    /// Calls in flight on one connection (HTTP/2 MAX_CONCURRENT_STREAMS,
    /// advertised to clients; a WatchGame stream is one).
    #[arg(long, env = "BACKGAMMON_MAX_STREAMS_PER_CONNECTION", default_value_t = Limits::STREAMS_PER_CONNECTION)]
    max_streams_per_connection: u32,
    /// WatchGame streams one game may have open on this server; more are
    /// refused with RESOURCE_EXHAUSTED, TOO_MANY_WATCHERS.
    #[arg(long, env = "BACKGAMMON_MAX_WATCHERS_PER_GAME", default_value_t = Limits::WATCHERS_PER_GAME)]
    max_watchers_per_game: usize,
    /// Games one caller (its client certificate, or else its IP address)
    /// may create per second, on average; more are refused with
    /// RESOURCE_EXHAUSTED, RATE_LIMITED. 0: no limit.
    #[arg(long, env = "BACKGAMMON_NEW_GAMES_PER_SECOND", default_value_t = Limits::NEW_GAMES_PER_SECOND, value_parser = rate)]
    new_games_per_second: f64,
    /// Games one caller may create at once before the rate above applies.
    #[arg(long, env = "BACKGAMMON_NEW_GAMES_BURST", default_value_t = Limits::NEW_GAMES_BURST)]
    new_games_burst: u32,
    /// Seconds a match is kept once it has ended, then removed with its
    /// log (0: kept for good). With --archive-dir, its JSON record is
    /// written there first.
    #[arg(
        long,
        env = "BACKGAMMON_FINISHED_RETENTION_SECONDS",
        default_value_t = 0.0,
        value_parser = seconds
    )]
    finished_retention_seconds: f64,
    /// Folder where each finished match's JSON record (ExportMatch's) is
    /// written, as GAME_ID.json, before the retention removes it.
    #[arg(long, env = "BACKGAMMON_ARCHIVE_DIR")]
    archive_dir: Option<PathBuf>,
    /// Seconds between two looks for match clocks that ran out: the flag
    /// falls at most this late (an action after the deadline is refused
    /// whatever the sweep).
    #[arg(
        long,
        env = "BACKGAMMON_CLOCK_SWEEP_SECONDS",
        default_value_t = 0.25,
        value_parser = seconds
    )]
    clock_sweep_seconds: f64,
    /// Seconds a seat whose clock ran out while the server was down (or
    /// not yet started) gets to act once it is up, instead of losing at
    /// once to the outage (0: it loses at the first sweep).
    #[arg(
        long,
        env = "BACKGAMMON_CLOCK_RESTART_GRACE_SECONDS",
        default_value_t = 30.0,
        value_parser = seconds
    )]
    clock_restart_grace_seconds: f64,
    /// How long a call to a variant's plugin may take (milliseconds):
    /// past it the action is answered VARIANT_FAULT, nothing changed, and
    /// the variant is unavailable until the call returns.
    #[arg(
        long,
        env = "BACKGAMMON_PLUGIN_CALL_TIMEOUT_MS",
        default_value_t = 2000
    )]
    plugin_call_timeout_ms: u64,
    /// Where plugins' code runs: `in-process` (fastest; a plugin that
    /// aborts or crashes ends the server) or `process` (each plugin in
    /// worker processes: a crash, a call past its deadline or memory past
    /// its limit ends only the worker, and the call faults).
    #[arg(
        long,
        env = "BACKGAMMON_PLUGIN_ISOLATION",
        value_enum,
        default_value_t = IsolationArg::InProcess
    )]
    plugin_isolation: IsolationArg,
    /// With --plugin-isolation process: the memory (address space) each
    /// worker process may use, in MiB; 0 for no limit.
    #[arg(
        long,
        env = "BACKGAMMON_PLUGIN_MEMORY_LIMIT_MB",
        default_value_t = 1024
    )]
    plugin_memory_limit_mb: u64,
    /// A file holding the operator's token (one line; at least 32
    /// characters): sent as `authorization: Bearer TOKEN`, it lists and
    /// follows every match (ListMatches, WatchMatches). Without it, only
    /// callers with a client certificate list and follow, each its own
    /// matches.
    #[arg(long, env = "BACKGAMMON_OPERATOR_TOKEN_FILE")]
    operator_token_file: Option<PathBuf>,
    /// Seconds the fleet feed keeps events (0: for good); a cursor older
    /// than that is refused with CURSOR_EXPIRED.
    #[arg(
        long,
        env = "BACKGAMMON_FEED_WINDOW_SECONDS",
        default_value_t = 86_400.0,
        value_parser = seconds
    )]
    feed_window_seconds: f64,
    /// An origin whose pages may call the API from a browser over
    /// gRPC-Web, e.g. `https://play.example.com` (repeatable; the
    /// environment variable takes them comma-separated). None by default:
    /// browsers refuse cross-origin calls.
    #[arg(long = "cors-origin", env = "BACKGAMMON_CORS_ORIGINS", value_delimiter = ',', value_parser = origin)]
    cors_origins: Vec<String>,
    /// A TOML file of webhook endpoints: every event of the fleet feed
    /// they ask for is POSTed to each, signed (Standard Webhooks), at
    /// least once (docs/fleet.md shows the file). A mistake in it stops
    /// the server at startup.
    #[arg(long, env = "BACKGAMMON_WEBHOOKS_FILE")]
    webhooks_file: Option<PathBuf>,
    /// Does not serve the web client at `/` (it is served by default:
    /// a page to play, watch and review matches, calling the API over
    /// gRPC-Web on this port). Boards as SVG are served either way.
    #[arg(long, env = "BACKGAMMON_NO_WEB")]
    no_web: bool,
    #[command(subcommand)]
    command: Option<Sub>,
}

/// An origin as browsers send it: `http` or `https`, a host, an
/// optional port, nothing after.
fn origin(text: &str) -> Result<String, String> {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or_else(|| format!("{text:?}: an origin is http:// or https:// and a host"))?;
    let (host, port) = rest.rsplit_once(':').unwrap_or((rest, ""));
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'[' | b']' | b':'));
    let port_ok = port.is_empty() || port.parse::<u16>().is_ok();
    if !host_ok || !port_ok {
        return Err(format!(
            "{text:?}: an origin is a scheme, a host and an optional port, with no path"
        ));
    }
    Ok(text.to_string())
}

/// The operator's token, read from its file: one line, at least 32
/// characters, printable ASCII.
fn operator_token(path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the operator token file {}", path.display()))?;
    let token = text.trim();
    anyhow::ensure!(
        token.len() >= 32 && token.bytes().all(|b| b.is_ascii_graphic()),
        "the operator token in {} must be one line of at least 32 printable characters, no spaces (e.g. `openssl rand -hex 32`)",
        path.display()
    );
    Ok(token.to_string())
}

#[derive(Subcommand)]
enum Sub {
    /// Exits 0 if the server at --listen reports SERVING, 1 otherwise (for
    /// container health checks). Speaks TLS when the server does
    /// (--tls-cert or BACKGAMMON_TLS_CERT set).
    Healthcheck(HealthcheckTls),
    /// Creates a new seat-token key file (for replicas on PostgreSQL,
    /// which must all use the same one); refuses to overwrite a file.
    TokenKey {
        /// The file to create.
        file: PathBuf,
    },
    /// Replaces the token key with the one in NEW_KEY_FILE, every server
    /// of the database stopped (made with `backgammond token-key`): the
    /// dice seeds of matches in progress are sealed again under it, the
    /// database records it, and the key file in use (--token-key-file,
    /// or server.key in --data-dir) is overwritten with it. Seat tokens
    /// already given keep working; feed cursors and page tokens made
    /// with the old key do not. Run again after an interruption.
    RotateKey {
        /// The new key (32 bytes, from `backgammond token-key`).
        new_key_file: PathBuf,
    },
    /// Copies the data folder (--data-dir) into a new folder, consistently,
    /// while a server may go on using it: the database, compacted, and
    /// its server.key. To restore, start a server on the copy.
    Backup {
        /// The folder to create and fill.
        target: PathBuf,
    },
}

/// How the health check reaches a server that speaks TLS.
#[derive(clap::Args)]
struct HealthcheckTls {
    /// The CA that signed the server's certificate (PEM). Default: the
    /// server's own --tls-cert, which does for a self-signed certificate.
    #[arg(long = "ca", env = "BACKGAMMON_HEALTHCHECK_CA")]
    ca: Option<PathBuf>,
    /// A client certificate (PEM), for a server started with --client-ca.
    #[arg(long = "cert", env = "BACKGAMMON_HEALTHCHECK_CERT", requires = "key")]
    cert: Option<PathBuf>,
    /// The private key of --cert (PEM).
    #[arg(long = "key", env = "BACKGAMMON_HEALTHCHECK_KEY", requires = "cert")]
    key: Option<PathBuf>,
    /// The name the server's certificate is checked against.
    #[arg(
        long = "domain",
        env = "BACKGAMMON_HEALTHCHECK_DOMAIN",
        default_value = "localhost"
    )]
    domain: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum IsolationArg {
    InProcess,
    Process,
}

/// `backgammond plugin-worker`: run by the server itself, one per
/// isolated plugin call in flight; not for operators.
#[derive(Parser)]
#[command(name = "backgammond plugin-worker")]
struct WorkerCli {
    /// The plugin file (named in messages; the library's bytes come on stdin).
    #[arg(long)]
    name: PathBuf,
    #[arg(long)]
    memory_limit_bytes: Option<u64>,
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Full,
    Normal,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// mimalloc instead of the C library's allocator: an action allocates
/// and frees many small buffers (requests, answers, snapshots) across
/// threads, where glibc's malloc took a fifth of the CPU under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<()> {
    // A plugin worker is started by the server, and is none of the rest.
    if std::env::args_os().nth(1).as_deref() == Some("plugin-worker".as_ref()) {
        let worker = WorkerCli::parse_from(std::env::args_os().skip(1));
        let code = bg_plugin_host::isolated::worker::serve(&worker.name, worker.memory_limit_bytes);
        std::process::exit(if code == std::process::ExitCode::SUCCESS {
            0
        } else {
            1
        });
    }
    let mut cli = Cli::parse();
    // `a::b` or a trailing `:` in BACKGAMMON_PLUGIN_DIR: no empty folder.
    cli.plugin_dir.retain(|dir| !dir.as_os_str().is_empty());
    if cli.plugin_dir.is_empty() && cli.command.is_none() {
        anyhow::bail!("no plugin folder given (--plugin-dir or BACKGAMMON_PLUGIN_DIR)");
    }
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    // A log line that cannot be written (stderr on a full disk) is lost,
    // never a panic: tracing-subscriber would report it with eprintln!,
    // which panics when stderr fails, and the call logging it would die.
    match cli.log_format {
        LogFormat::Text => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(std::io::stderr)
            .log_internal_errors(false)
            .init(),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .log_internal_errors(false)
            .init(),
    }
    // Parsed here, not by clap, whose error would print the URL whole,
    // password included.
    let database: Option<Database> = match cli.database.as_deref() {
        Some(url) => Some(
            url.parse()
                .map_err(|e: String| anyhow::anyhow!("--database: {e}"))?,
        ),
        None => None,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    // A file-size limit (RLIMIT_FSIZE) reached is a storage fault to answer
    // with errors, not a reason to die: SIGXFSZ would end the process, so
    // it is caught (and ignored), and the write fails with EFBIG instead.
    let _file_size_limit = runtime.block_on(async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(libc::SIGXFSZ))
    })?;
    match cli.command {
        Some(Sub::Healthcheck(check)) => {
            let tls = match &cli.tls_cert {
                Some(server_cert) => Some(check.client_config(server_cert)?),
                None => None,
            };
            let serving = runtime.block_on(healthcheck(cli.listen, tls));
            std::process::exit(if serving { 0 } else { 1 });
        }
        Some(Sub::TokenKey { file }) => {
            if file.exists() {
                anyhow::bail!(
                    "{} exists already: a key in use must not be replaced",
                    file.display()
                );
            }
            bg_server::data_dir::create_key(&file)?;
            println!(
                "created {} (give the same file to every replica)",
                file.display()
            );
            Ok(())
        }
        Some(Sub::RotateKey { new_key_file }) => {
            let rotated = runtime.block_on(bg_server::rotate_key(
                &cli.data_dir,
                database.unwrap_or(Database::Sqlite(None)),
                cli.token_key_file,
                &new_key_file,
            ))?;
            println!(
                "rotated: {} now holds the new key; {} seeds of matches in progress sealed again under it (with replicas, copy it to each before starting them)",
                rotated.key_file.display(),
                rotated.resealed
            );
            Ok(())
        }
        Some(Sub::Backup { target }) => {
            if let Some(Database::Postgres(_)) = database {
                anyhow::bail!(
                    "backup copies a SQLite data folder; back a PostgreSQL database up with pg_dump (and keep the token key file with it)"
                );
            }
            let database = match &database {
                Some(Database::Sqlite(Some(path))) => path.clone(),
                _ => cli.data_dir.join("games.db"),
            };
            let key_file = cli
                .token_key_file
                .clone()
                .unwrap_or_else(|| cli.data_dir.join("server.key"));
            runtime.block_on(bg_server::data_dir::backup(&database, &key_file, &target))?;
            println!(
                "backed up {} and {} into {} (games.db and server.key)",
                database.display(),
                key_file.display(),
                target.display()
            );
            Ok(())
        }
        None => {
            if let Some(addr) = cli.metrics_listen {
                let _runtime = runtime.enter();
                metrics_exporter_prometheus::PrometheusBuilder::new()
                    .with_http_listener(addr)
                    .set_buckets(bg_server::metrics::BUCKETS)?
                    .install()
                    .with_context(|| format!("serving metrics on {addr}"))?;
                bg_server::metrics::describe();
                tracing::info!(%addr, "metrics on http://{addr}/metrics");
            }
            let config = Config {
                listen: cli.listen,
                plugin_dirs: cli.plugin_dir,
                data_dir: cli.data_dir,
                database: database.unwrap_or(Database::Sqlite(None)),
                token_key_file: cli.token_key_file,
                durability: match cli.durability {
                    DurabilityArg::Full => Durability::Full,
                    DurabilityArg::Normal => Durability::Normal,
                },
                plugin_scan_interval: Duration::from_secs_f64(cli.plugin_scan_seconds.max(0.1)),
                shutdown_grace: Duration::from_secs_f64(cli.shutdown_grace_seconds.max(0.0)),
                idle_eviction: Duration::from_secs_f64(cli.idle_seconds.max(0.1)),
                // 0, or more than a Duration holds: for ever.
                watch_resync: Duration::from_secs_f64(cli.watch_resync_seconds.clamp(0.1, 1e9)),
                request_retention: Duration::try_from_secs_f64(cli.request_retention_seconds)
                    .ok()
                    .filter(|d| !d.is_zero()),
                tls: match (cli.tls_cert, cli.tls_key) {
                    (Some(cert), Some(key)) => Some(TlsFiles {
                        cert,
                        key,
                        client_ca: cli.client_ca,
                    }),
                    _ => None,
                },
                finished_retention: Duration::try_from_secs_f64(cli.finished_retention_seconds)
                    .ok()
                    .filter(|d| !d.is_zero()),
                archive_dir: cli.archive_dir,
                clock_sweep: Duration::from_secs_f64(cli.clock_sweep_seconds.clamp(0.01, 1e9)),
                clock_restart_grace: Duration::from_secs_f64(
                    cli.clock_restart_grace_seconds.min(30.0 * 24.0 * 3600.0),
                ),
                plugin_call_timeout: Duration::from_millis(cli.plugin_call_timeout_ms.max(1)),
                plugin_workers: match cli.plugin_isolation {
                    IsolationArg::InProcess => None,
                    IsolationArg::Process => Some(bg_plugin_host::WorkerSettings {
                        program: std::env::current_exe()
                            .context("finding this program, to run plugin workers")?,
                        args: vec!["plugin-worker".into()],
                        // mimalloc reserves 1 GiB of address space up
                        // front, which a worker's memory limit (RLIMIT_AS)
                        // would count: the worker asks it not to.
                        env: vec![("MIMALLOC_ARENA_RESERVE".into(), "0".into())],
                        memory_limit: (cli.plugin_memory_limit_mb > 0)
                            .then(|| cli.plugin_memory_limit_mb.saturating_mul(1 << 20)),
                        call_timeout: Duration::from_millis(cli.plugin_call_timeout_ms.max(1)),
                    }),
                },
                operator_token: cli
                    .operator_token_file
                    .as_deref()
                    .map(operator_token)
                    .transpose()?,
                feed_window: Duration::try_from_secs_f64(cli.feed_window_seconds)
                    .ok()
                    .filter(|d| !d.is_zero()),
                cors_origins: cli.cors_origins,
                web_client: !cli.no_web,
                webhooks: match &cli.webhooks_file {
                    Some(path) => bg_server::fleet::webhooks::read(path)?,
                    None => Vec::new(),
                },
                limits: Limits {
                    connections: connections::Limits {
                        max_connections: cli.max_connections.max(1),
                        idle: Duration::from_secs_f64(cli.idle_connection_seconds.clamp(0.1, 1e9)),
                        handshake: Duration::from_secs_f64(cli.handshake_seconds.clamp(0.1, 1e9)),
                    },
                    streams_per_connection: cli.max_streams_per_connection.max(1),
                    watchers_per_game: cli.max_watchers_per_game.max(1),
                    new_games: (cli.new_games_per_second > 0.0).then(|| Rate {
                        per_second: cli.new_games_per_second,
                        burst: f64::from(cli.new_games_burst.max(1)),
                    }),
                },
            };
            let served = runtime.block_on(run(config, termination()));
            // A plugin call that ran past its deadline may still hold a
            // thread of the blocking pool: not waited for (the games are
            // stored and the store closed by now).
            runtime.shutdown_timeout(Duration::from_secs(1));
            served
        }
    }
}

/// A rate per second: finite and not negative.
fn rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{text:?} is not a rate per second (0 or more)")),
    }
}

/// A number of seconds: finite and not negative.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("{text:?} is not a number of seconds (0 or more)")),
    }
}

/// SIGTERM or SIGINT (a process running as PID 1 gets no default handling).
async fn termination() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing the SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

impl HealthcheckTls {
    /// tonic's client TLS settings for the check.
    fn client_config(&self, server_cert: &std::path::Path) -> Result<ClientTlsConfig> {
        let read = |path: &std::path::Path| {
            std::fs::read(path).with_context(|| format!("healthcheck: reading {}", path.display()))
        };
        let ca = read(self.ca.as_deref().unwrap_or(server_cert))?;
        let mut config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(ca))
            .domain_name(self.domain.clone());
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            config = config.identity(Identity::from_pem(read(cert)?, read(key)?));
        }
        Ok(config)
    }
}

/// Whether the server at `listen` reports SERVING; says why not on stderr.
async fn healthcheck(listen: SocketAddr, tls: Option<ClientTlsConfig>) -> bool {
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};
    // A server listening on all interfaces is reached on loopback.
    let host = if listen.ip().is_unspecified() {
        SocketAddr::new([127, 0, 0, 1].into(), listen.port())
    } else {
        listen
    };
    let check = async {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut endpoint = tonic::transport::Endpoint::from_shared(format!("{scheme}://{host}"))
            .map_err(|e| e.to_string())?;
        if let Some(tls) = tls {
            endpoint = endpoint.tls_config(tls).map_err(|e| e.to_string())?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| bg_api::error_chain(&e))?;
        let response = HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map_err(|status| format!("{:?}: {}", status.code(), bg_api::error_chain(&status)))?;
        match ServingStatus::try_from(response.into_inner().status) {
            Ok(ServingStatus::Serving) => Ok(()),
            other => Err(format!("the server reports {other:?}")),
        }
    };
    let outcome = match tokio::time::timeout(Duration::from_secs(5), check).await {
        Ok(outcome) => outcome,
        Err(_) => Err("no answer within 5 s".to_string()),
    };
    if let Err(why) = &outcome {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "healthcheck: {host}: {why}");
    }
    outcome.is_ok()
}
