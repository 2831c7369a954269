//! The connection to a server: how bgctl reaches it (plain TCP or TLS,
//! [`Transport`]), the client it talks through, a request carrying a seat
//! token, and a refusal or a failed connection said in a readable line
//! ([`explain`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bg_api::v1::game_service_client::GameServiceClient;
use tonic::Request;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic_types::StatusExt;

pub type Client = GameServiceClient<Channel>;

/// How bgctl reaches servers: plain TCP (the default, for local use), or
/// TLS, checking the server's certificate against a CA file (or, for an
/// `https://` address without one, the system's roots) and presenting a
/// client certificate to a server that asks for one.
#[derive(Clone, Debug, Default)]
pub struct Transport {
    tls: Option<ClientTlsConfig>,
}

/// The TLS options as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub domain: Option<String>,
}

impl Transport {
    /// TLS when any option asks for it or the address says `https://`.
    pub fn new(options: &TlsOptions, addr: &str) -> Result<Transport> {
        let https = addr.contains("https://");
        let asked = options.ca.is_some()
            || options.cert.is_some()
            || options.key.is_some()
            || options.domain.is_some();
        if !https && !asked {
            return Ok(Transport::default());
        }
        if addr.contains("http://") {
            bail!("{addr} says http:// but TLS options are given: write https:// or host:port");
        }
        let read = |path: &Path| {
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))
        };
        let mut tls = ClientTlsConfig::new();
        tls = match &options.ca {
            Some(ca) => tls.ca_certificate(Certificate::from_pem(read(ca)?)),
            None => tls.with_native_roots(),
        };
        if let Some(domain) = &options.domain {
            tls = tls.domain_name(domain.clone());
        }
        match (&options.cert, &options.key) {
            (Some(cert), Some(key)) => {
                tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?));
            }
            (None, None) => {}
            _ => bail!("--tls-cert and --tls-key go together"),
        }
        Ok(Transport { tls: Some(tls) })
    }

    /// The URL of an address as the server prints it (`127.0.0.1:50051`)
    /// or written as one (`http://...`, `https://...`): without a scheme,
    /// `https://` with TLS and `http://` without.
    pub fn url(&self, addr: &str) -> String {
        if addr.contains("://") {
            addr.to_string()
        } else if self.tls.is_some() {
            format!("https://{addr}")
        } else {
            format!("http://{addr}")
        }
    }

    /// An endpoint for `addr`, with TLS if this transport has it.
    pub fn endpoint(&self, addr: &str) -> Result<Endpoint> {
        let endpoint = Endpoint::from_shared(self.url(addr))
            .with_context(|| format!("{addr:?} is not a server address (host:port)"))?;
        match &self.tls {
            Some(tls) => endpoint
                .tls_config(tls.clone())
                .with_context(|| format!("TLS settings for {addr}")),
            None => Ok(endpoint),
        }
    }
}

pub async fn connect(transport: &Transport, addr: &str) -> Result<Client> {
    let channel = transport
        .endpoint(addr)?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!("connecting to {addr}: {}", bg_api::error_chain(&e)))?;
    // A long match's export can pass gRPC's 4 MiB default.
    Ok(GameServiceClient::new(channel).max_decoding_message_size(256 << 20))
}

/// A request carrying a seat token.
pub fn authorized<T>(message: T, token: &str) -> Result<Request<T>> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse()?);
    Ok(request)
}

/// A readable error: the status message and its stable reason.
pub fn explain(status: tonic::Status) -> anyhow::Error {
    match status.get_details_error_info() {
        Some(info) => anyhow::anyhow!(
            "{} ({}: {:?})",
            status.message(),
            info.reason,
            status.code()
        ),
        None => match std::error::Error::source(&status) {
            // The connection failed under the call (a refused TLS
            // handshake, a plain client on a TLS port): say what failed.
            Some(source) => anyhow::anyhow!(
                "{} ({:?}): {}{}",
                status.message(),
                status.code(),
                bg_api::error_chain(source),
                transport_hint(source)
            ),
            None => anyhow::anyhow!("{} ({:?})", status.message(), status.code()),
        },
    }
}

/// A hint for a connection that failed under a call: a refused handshake
/// or a transport mismatch, which the client sees only as a closed
/// connection (which one depends on timing, so the hint names both).
fn transport_hint(source: &dyn std::error::Error) -> &'static str {
    let text = bg_api::error_chain(source);
    if text.contains("CertificateRequired") {
        " (the server asks for a client certificate: --tls-cert and --tls-key)"
    } else if [
        "broken pipe",
        "reset by peer",
        "connection closed",
        "canceled",
        "frame with invalid size",
    ]
    .iter()
    .any(|sign| text.contains(sign))
    {
        " (the server closed the connection: does it speak TLS (--tls-ca, or an https:// address), or ask for a client certificate (--tls-cert and --tls-key)?)"
    } else {
        ""
    }
}

/// Whether the server refused a seat's action because another seat must
/// act first (reason NOT_YOUR_TURN).
pub fn not_your_turn(status: &tonic::Status) -> bool {
    status
        .get_details_error_info()
        .is_some_and(|info| info.reason == "NOT_YOUR_TURN")
}

/// The seat a NOT_YOUR_TURN refusal's message says the game waits for
/// ("it is not your turn: the game waits for black to move").
pub fn waited_for(message: &str) -> Option<&'static str> {
    let (_, rest) = message.split_once("waits for ")?;
    match rest.split_whitespace().next()? {
        "white" => Some("white"),
        "black" => Some("black"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_seat_the_game_waits_for() {
        assert_eq!(
            waited_for("it is not your turn: the game waits for black to move"),
            Some("black")
        );
        assert_eq!(
            waited_for("it is not your turn: the game waits for white to answer the double"),
            Some("white")
        );
        assert_eq!(waited_for("the match is over"), None);
    }
}
