//! How the server is set up: the database, the limits and every setting
//! `backgammond`'s command line gives (`main.rs` reads the flags into a
//! [`Config`]). Nothing here starts anything.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bg_store::Durability;

use crate::tls::TlsFiles;
use crate::{connections, rate_limit};

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
    /// The operator's token, which lists and follows every match (None:
    /// only callers with a client certificate list, their own matches).
    pub operator_token: Option<String>,
    /// How long the fleet feed keeps events (None: for good).
    pub feed_window: Option<Duration>,
    /// The origins whose pages may call the API from a browser (CORS;
    /// none: no cross-origin call). gRPC-Web is always on.
    pub cors_origins: Vec<String>,
    /// The endpoints the feed's events are POSTed to (none: no webhooks).
    pub webhooks: Vec<crate::fleet::webhooks::Endpoint>,
    /// Whether the web client is served at `/` (`--no-web`: not).
    pub web_client: bool,
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
