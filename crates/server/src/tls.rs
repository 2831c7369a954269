//! Transport security on the gRPC port: TLS with rustls (through tonic's
//! own support), and optionally client certificates.
//!
//! The files are read and checked once, at startup, before the server
//! opens its store: a missing file, a file that holds no certificate or
//! no private key, or a key that does not go with its certificate stops
//! the server with a message naming the file.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tonic::transport::{Certificate, Identity, ServerTlsConfig};

/// Where the server's certificate, key and client CA are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// With it, every caller must present a certificate signed by one of
    /// these CAs (PEM); without a valid one the handshake fails.
    pub client_ca: Option<PathBuf>,
}

impl TlsFiles {
    /// Reads the files into tonic's TLS settings.
    pub fn load(&self) -> anyhow::Result<ServerTlsConfig> {
        let cert = read_pem(&self.cert, "CERTIFICATE", "--tls-cert")?;
        let key = read_pem(&self.key, "PRIVATE KEY", "--tls-key")?;
        let mut config = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
        if let Some(ca) = &self.client_ca {
            let ca = read_pem(ca, "CERTIFICATE", "--client-ca")?;
            config = config.client_ca_root(Certificate::from_pem(ca));
        }
        // Built once here to check it: certificates that do not parse, or
        // a key that does not go with the certificate, are refused now.
        tonic::transport::Server::builder()
            .tls_config(config.clone())
            .map_err(|e| anyhow::anyhow!("{}", bg_api::error_chain(&e)))
            .with_context(|| {
                format!(
                    "TLS: the certificate {} and key {} cannot be used",
                    self.cert.display(),
                    self.key.display()
                )
            })?;
        Ok(config)
    }

    /// What the log says of the mode.
    pub fn describe(&self) -> String {
        match &self.client_ca {
            Some(ca) => format!(
                "TLS (certificate {}); callers must present a client certificate signed by a CA in {}",
                self.cert.display(),
                ca.display()
            ),
            None => format!(
                "TLS (certificate {}); no client certificates asked",
                self.cert.display()
            ),
        }
    }
}

/// A PEM file's bytes, refused unless it holds a block whose label ends
/// with `label` (`PRIVATE KEY` matches `EC PRIVATE KEY`, `RSA PRIVATE KEY`).
fn read_pem(path: &Path, label: &str, option: &str) -> anyhow::Result<Vec<u8>> {
    let bytes =
        std::fs::read(path).with_context(|| format!("{option}: reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let has_block = text.lines().any(|line| {
        line.trim()
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .is_some_and(|found| found.ends_with(label))
    });
    if !has_block {
        bail!(
            "{option}: {} holds no PEM {label} block (-----BEGIN {label}-----)",
            path.display()
        );
    }
    Ok(bytes)
}
