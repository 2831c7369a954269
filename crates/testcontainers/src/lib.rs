//! A [testcontainers] module for the backgammon game service: start a real
//! `backgammond` in a container from your integration tests and talk to it
//! over gRPC.
//!
//! ```no_run
//! use bg_testcontainers::BackgammonServer;
//! use bg_testcontainers::api::{MatchSettings, NewGameRequest};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let server = BackgammonServer::default().start().await?;
//! let mut client = server.client().await?;
//! let game = client
//!     .new_game(NewGameRequest {
//!         variant: "standard".into(),
//!         settings: Some(MatchSettings {
//!             match_length: 3,
//!             ..Default::default()
//!         }),
//!         ..Default::default()
//!     })
//!     .await?
//!     .into_inner();
//! // Each seat acts with its own token, sent as `authorization: Bearer <token>`.
//! let (white, black) = (game.white_token, game.black_token);
//! # let _ = (white, black);
//! # Ok(())
//! # }
//! ```
//!
//! The container is removed when the [`RunningServer`] is dropped.
//!
//! # The image
//!
//! By default the image is `backgammond:latest`, the name docs/operating.md's
//! `docker build -t backgammond .` gives it. Set `BACKGAMMON_IMAGE` (for
//! instance `registry.example/backgammond:1.2.0`) to test another one, or
//! call [`BackgammonServer::with_image`].
//!
//! # TLS
//!
//! [`BackgammonServer::with_tls`] serves gRPC over TLS with a certificate
//! and key of yours, [`with_client_ca`](BackgammonServer::with_client_ca)
//! makes the server ask callers for client certificates, and
//! [`with_client_tls`](BackgammonServer::with_client_tls) says how this
//! module's clients (and its wait for SERVING) reach it:
//!
//! ```no_run
//! use bg_testcontainers::{BackgammonServer, Certificate, ClientTlsConfig, Identity};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let server = BackgammonServer::default()
//!     .with_tls("certs/server.crt", "certs/server.key")
//!     .with_client_ca("certs/ca.crt")
//!     .with_client_tls(
//!         ClientTlsConfig::new()
//!             .ca_certificate(Certificate::from_pem(std::fs::read("certs/ca.crt")?))
//!             .identity(Identity::from_pem(
//!                 std::fs::read("certs/client.crt")?,
//!                 std::fs::read("certs/client.key")?,
//!             )),
//!     )
//!     .start()
//!     .await?;
//! let mut client = server.client().await?; // https://127.0.0.1:<port>
//! # let _ = &mut client;
//! # Ok(())
//! # }
//! ```
//!
//! The server's certificate must name `localhost` (the clients reach it
//! on 127.0.0.1 and check that name, unless your [`ClientTlsConfig`] sets
//! another with `domain_name`).
//!
//! # Docker and podman
//!
//! testcontainers talks the Docker API: with podman, run `podman system
//! service` and set `DOCKER_HOST` to its socket. The server's port is
//! published on 127.0.0.1 at a port chosen here, not by the engine,
//! because podman 4 reports published ports in a form testcontainers
//! cannot read ([`RunningServer::endpoint`] gives the address).
//!
//! This crate owns only the container's description and the way to reach
//! it; it never starts a server outside a container. The container engine
//! must run on the machine of the test (ports are published on loopback).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use testcontainers::CopyTargetOptions;
use testcontainers::bollard::models::{HostConfig, PortBinding};
use testcontainers::core::{ContainerPort, CopyToContainer, IntoContainerPort, Mount, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, Image, ImageExt};
use tonic::transport::{Channel, Endpoint};

/// The generated gRPC client and messages (`backgammon.v1`).
pub use bg_api::v1 as api;
pub use testcontainers;
/// tonic's TLS settings, for [`BackgammonServer::with_client_tls`].
pub use tonic::transport::{Certificate, ClientTlsConfig, Identity};
/// The health service's client and messages (`grpc.health.v1`).
pub use tonic_health::pb as health;

/// The port the server listens on inside the container.
pub const GRPC_PORT: u16 = 50051;
/// Where the image keeps the shipped plugins.
pub const PLUGIN_DIR: &str = "/opt/backgammon/plugins";
/// Where the image looks for extra plugins (mount a folder here).
pub const EXTRA_PLUGIN_DIR: &str = "/opt/backgammon/extra-plugins";
/// The data volume (games database and server key).
pub const DATA_DIR: &str = "/var/lib/backgammon";
/// The user the server runs as; a bind-mounted data folder must be
/// writable by it.
pub const USER_ID: u32 = 65532;
/// Where [`BackgammonServer::with_token_key_file`] puts the key.
pub const TOKEN_KEY_FILE: &str = "/etc/backgammon/token.key";
/// Where [`BackgammonServer::with_tls`] and
/// [`with_client_ca`](BackgammonServer::with_client_ca) put their files.
pub const TLS_DIR: &str = "/etc/backgammon/tls";
/// Environment variable naming the image to test, as `name:tag`.
pub const IMAGE_ENV: &str = "BACKGAMMON_IMAGE";

const DEFAULT_NAME: &str = "backgammond";
const DEFAULT_TAG: &str = "latest";
/// The server prints this line once its health is SERVING.
const READY_LINE: &str = "backgammond listening on";

/// Errors from starting or reaching the server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The container engine refused or failed (image missing, no engine, ...).
    #[error("container: {0}")]
    Container(#[from] testcontainers::TestcontainersError),
    /// The server could not be reached over gRPC.
    #[error("connecting to the server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The server started but did not report SERVING in time.
    #[error("backgammond at {endpoint} not SERVING after {waited:?}")]
    NotServing { endpoint: String, waited: Duration },
    /// No free local port for the server.
    #[error("choosing a local port: {0}")]
    Port(#[from] std::io::Error),
    /// A TLS file given to the module could not be read.
    #[error("reading {path}: {source}")]
    TlsFile {
        path: String,
        source: std::io::Error,
    },
}

/// The backgammon server image, with its settings.
#[derive(Debug, Clone)]
pub struct BackgammonServer {
    name: String,
    tag: String,
    env: HashMap<String, String>,
    mounts: Vec<Mount>,
    copies: Vec<CopyToContainer>,
    startup_timeout: Duration,
    host_network: bool,
    /// The server's certificate on the host, when it serves TLS.
    tls_cert: Option<std::path::PathBuf>,
    client_tls: Option<ClientTlsConfig>,
}

impl Default for BackgammonServer {
    /// `backgammond:latest`, or the image named by `BACKGAMMON_IMAGE`.
    fn default() -> Self {
        let (name, tag) = match std::env::var(IMAGE_ENV) {
            Ok(image) if !image.trim().is_empty() => split_image(image.trim()),
            _ => (DEFAULT_NAME.to_string(), DEFAULT_TAG.to_string()),
        };
        BackgammonServer {
            name,
            tag,
            env: HashMap::new(),
            mounts: Vec::new(),
            copies: Vec::new(),
            startup_timeout: Duration::from_secs(60),
            host_network: false,
            tls_cert: None,
            client_tls: None,
        }
    }
}

/// `name:tag` → (name, tag); a colon inside a registry's `host:port`
/// is not a tag separator.
fn split_image(image: &str) -> (String, String) {
    match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name.to_string(), tag.to_string()),
        _ => (image.to_string(), DEFAULT_TAG.to_string()),
    }
}

impl BackgammonServer {
    /// Uses another image.
    pub fn with_image(mut self, name: impl Into<String>, tag: impl Into<String>) -> Self {
        self.name = name.into();
        self.tag = tag.into();
        self
    }

    /// Mounts a host folder of plugin files (read-only) as the extra plugin
    /// folder. Files moved into it while the server runs are picked up
    /// within the scan interval (see [`with_plugin_scan_interval`](Self::with_plugin_scan_interval)).
    pub fn with_extra_plugins(mut self, host_dir: impl AsRef<Path>) -> Self {
        self.mounts.push(
            Mount::bind_mount(host_dir.as_ref().display().to_string(), EXTRA_PLUGIN_DIR)
                .with_access_mode(testcontainers::core::AccessMode::ReadOnly),
        );
        self
    }

    /// Copies one plugin file into the extra plugin folder before the
    /// server starts, so its variant is there from the first call. (With
    /// [`with_extra_plugins`](Self::with_extra_plugins) too, the file lands
    /// in that host folder.)
    pub fn with_plugin(mut self, file: impl AsRef<Path>) -> Self {
        let file = file.as_ref();
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "plugin.so".into());
        self.copies.push(CopyToContainer::new(
            file.to_path_buf(),
            CopyTargetOptions::new(format!("{EXTRA_PLUGIN_DIR}/{name}")).with_mode(0o644),
        ));
        self
    }

    /// Keeps the games in a host folder, so a later container can go on
    /// with them. The folder must be writable by uid 65532 ([`USER_ID`]).
    pub fn with_data_dir(mut self, host_dir: impl AsRef<Path>) -> Self {
        self.mounts.push(Mount::bind_mount(
            host_dir.as_ref().display().to_string(),
            DATA_DIR,
        ));
        self
    }

    /// Keeps the games in a named volume of the container engine.
    pub fn with_data_volume(mut self, volume: impl Into<String>) -> Self {
        self.mounts.push(Mount::volume_mount(volume, DATA_DIR));
        self
    }

    /// Stores the games in this database (`BACKGAMMON_DATABASE_URL`):
    /// `postgres://...` for a database several servers (replicas) share,
    /// or `sqlite:PATH` inside the container. Give replicas the same key
    /// with [`with_token_key_file`](Self::with_token_key_file).
    pub fn with_database_url(self, url: impl Into<String>) -> Self {
        self.with_env("BACKGAMMON_DATABASE_URL", url)
    }

    /// The key seat tokens derive from (a 32-byte file, see `backgammond
    /// token-key`), copied into the container ([`TOKEN_KEY_FILE`]).
    /// Required with a PostgreSQL database: every replica must use the
    /// same key.
    pub fn with_token_key_file(mut self, file: impl AsRef<Path>) -> Self {
        self.copies.push(CopyToContainer::new(
            file.as_ref().to_path_buf(),
            CopyTargetOptions::new(TOKEN_KEY_FILE).with_mode(0o444),
        ));
        self.with_env("BACKGAMMON_TOKEN_KEY_FILE", TOKEN_KEY_FILE)
    }

    /// Serves gRPC over TLS with this certificate chain and private key
    /// (PEM files on the host, copied into [`TLS_DIR`]). The certificate
    /// must name `localhost`. Unless [`with_client_tls`](Self::with_client_tls)
    /// says otherwise, the module's clients trust this certificate itself
    /// (enough for a self-signed one).
    pub fn with_tls(mut self, cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Self {
        let (cert_in, key_in) = (
            format!("{TLS_DIR}/server.crt"),
            format!("{TLS_DIR}/server.key"),
        );
        self.copies.push(CopyToContainer::new(
            cert.as_ref().to_path_buf(),
            CopyTargetOptions::new(cert_in.clone()).with_mode(0o444),
        ));
        // Readable by the server's user; the container is a test's own.
        self.copies.push(CopyToContainer::new(
            key.as_ref().to_path_buf(),
            CopyTargetOptions::new(key_in.clone()).with_mode(0o444),
        ));
        self.tls_cert = Some(cert.as_ref().to_path_buf());
        self.with_env("BACKGAMMON_TLS_CERT", cert_in)
            .with_env("BACKGAMMON_TLS_KEY", key_in)
    }

    /// Asks every caller for a client certificate signed by a CA in this
    /// file (PEM on the host): others are refused at the handshake. Needs
    /// [`with_tls`](Self::with_tls).
    pub fn with_client_ca(mut self, ca: impl AsRef<Path>) -> Self {
        let ca_in = format!("{TLS_DIR}/client-ca.crt");
        self.copies.push(CopyToContainer::new(
            ca.as_ref().to_path_buf(),
            CopyTargetOptions::new(ca_in.clone()).with_mode(0o444),
        ));
        self.with_env("BACKGAMMON_CLIENT_CA", ca_in)
    }

    /// How the module's clients reach a server started [`with_tls`](Self::with_tls):
    /// the CA to trust, and a client certificate for a server started
    /// [`with_client_ca`](Self::with_client_ca).
    pub fn with_client_tls(mut self, tls: ClientTlsConfig) -> Self {
        self.client_tls = Some(tls);
        self
    }

    /// Runs the container in the host's network, the server listening on
    /// a free port of the host's loopback instead of a published port: for
    /// reaching services on the host's loopback, such as a test database.
    pub fn with_host_network(mut self) -> Self {
        self.host_network = true;
        self
    }

    /// How often the plugin folders are scanned for new files.
    pub fn with_plugin_scan_interval(self, every: Duration) -> Self {
        self.with_env(
            "BACKGAMMON_PLUGIN_SCAN_SECONDS",
            every.as_secs_f64().to_string(),
        )
    }

    /// Sets any of the server's environment settings (`BACKGAMMON_*`, `RUST_LOG`).
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// How long [`start`](Self::start) waits for the server to be SERVING.
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Starts the container, publishing its port on 127.0.0.1 at a free
    /// port, and returns once the server reports SERVING.
    pub async fn start(mut self) -> Result<RunningServer, Error> {
        let host_port = free_local_port()?;
        let timeout = self.startup_timeout;
        let tls = match (self.client_tls.take(), &self.tls_cert) {
            (Some(tls), _) => Some(tls),
            (None, Some(cert)) => {
                let pem = std::fs::read(cert).map_err(|source| Error::TlsFile {
                    path: cert.display().to_string(),
                    source,
                })?;
                Some(
                    ClientTlsConfig::new()
                        .ca_certificate(Certificate::from_pem(pem))
                        .domain_name("localhost"),
                )
            }
            (None, None) => None,
        };
        let container = if self.host_network {
            self.with_env("BACKGAMMON_LISTEN", format!("127.0.0.1:{host_port}"))
                .with_startup_timeout(timeout)
                // Set on the container itself: asked as a network, the
                // engine would be asked to create one named "host".
                .with_host_config_modifier(|config: &mut HostConfig| {
                    config.network_mode = Some("host".into());
                })
                .start()
                .await?
        } else {
            self.with_mapped_port(host_port, GRPC_PORT.tcp())
                .with_startup_timeout(timeout)
                .with_host_config_modifier(move |config: &mut HostConfig| {
                    // Loopback only: tests must not open the server to the network.
                    config.port_bindings = Some(HashMap::from([(
                        format!("{GRPC_PORT}/tcp"),
                        Some(vec![PortBinding {
                            host_ip: Some("127.0.0.1".into()),
                            host_port: Some(host_port.to_string()),
                        }]),
                    )]));
                })
                .start()
                .await?
        };
        let server = RunningServer {
            container,
            host_port,
            tls,
        };
        server.wait_serving(timeout).await?;
        Ok(server)
    }
}

impl Image for BackgammonServer {
    fn name(&self) -> &str {
        &self.name
    }

    fn tag(&self) -> &str {
        &self.tag
    }

    /// The server prints its "listening" line right after its health turns
    /// SERVING (plugins loaded, storage open).
    fn ready_conditions(&self) -> Vec<WaitFor> {
        vec![WaitFor::message_on_stdout(READY_LINE)]
    }

    fn env_vars(
        &self,
    ) -> impl IntoIterator<Item = (impl Into<Cow<'_, str>>, impl Into<Cow<'_, str>>)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn mounts(&self) -> impl IntoIterator<Item = &Mount> {
        &self.mounts
    }

    fn copy_to_sources(&self) -> impl IntoIterator<Item = &CopyToContainer> {
        &self.copies
    }

    fn expose_ports(&self) -> &[ContainerPort] {
        if self.host_network {
            // The server listens on the host's own network.
            return &[];
        }
        &[ContainerPort::Tcp(GRPC_PORT)]
    }
}

/// A started server; the container is removed when this is dropped.
pub struct RunningServer {
    container: ContainerAsync<BackgammonServer>,
    host_port: u16,
    tls: Option<ClientTlsConfig>,
}

impl RunningServer {
    /// The server's address, e.g. `http://127.0.0.1:40123`
    /// (`https://` when it serves TLS).
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.host_port)
    }

    /// A connected channel to the server (over TLS when it serves TLS).
    pub async fn channel(&self) -> Result<Channel, Error> {
        let mut endpoint = Endpoint::from_shared(self.endpoint())?;
        if let Some(tls) = &self.tls {
            endpoint = endpoint.tls_config(tls.clone())?;
        }
        Ok(endpoint
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await?)
    }

    /// A connected client of the game service.
    pub async fn client(
        &self,
    ) -> Result<api::game_service_client::GameServiceClient<Channel>, Error> {
        Ok(api::game_service_client::GameServiceClient::new(
            self.channel().await?,
        ))
    }

    /// A connected client of the health service.
    pub async fn health(&self) -> Result<health::health_client::HealthClient<Channel>, Error> {
        Ok(health::health_client::HealthClient::new(
            self.channel().await?,
        ))
    }

    /// The container, for what this module does not wrap (logs, exec, ...).
    pub fn container(&self) -> &ContainerAsync<BackgammonServer> {
        &self.container
    }

    /// Stops the server the way the engine stops it (SIGTERM, then SIGKILL
    /// after `grace`), and returns its exit code.
    pub async fn stop(&self, grace: Duration) -> Result<Option<i64>, Error> {
        let seconds = i32::try_from(grace.as_secs().max(1)).unwrap_or(i32::MAX);
        self.container.stop_with_timeout(Some(seconds)).await?;
        Ok(self.container.exit_code().await?)
    }

    async fn wait_serving(&self, timeout: Duration) -> Result<(), Error> {
        use health::{HealthCheckRequest, health_check_response::ServingStatus};
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let status = async {
                let mut health = self.health().await.ok()?;
                let reply = health
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                    .ok()?;
                Some(reply.into_inner().status)
            }
            .await;
            if status == Some(ServingStatus::Serving as i32) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::NotServing {
                    endpoint: self.endpoint(),
                    waited: timeout,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A port on 127.0.0.1 that is free now (the engine binds it next).
fn free_local_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}

#[cfg(test)]
mod tests {
    use super::split_image;

    #[test]
    fn image_names_split_at_the_tag_colon_not_a_registry_port() {
        assert_eq!(
            split_image("backgammond:1.2"),
            ("backgammond".into(), "1.2".into())
        );
        assert_eq!(
            split_image("registry.local:5000/backgammond"),
            ("registry.local:5000/backgammond".into(), "latest".into())
        );
        assert_eq!(
            split_image("registry.local:5000/bg/backgammond:test"),
            ("registry.local:5000/bg/backgammond".into(), "test".into())
        );
    }
}
