//! One attempt: a signed POST, and what came of it. A 2xx answer is a
//! delivery; any other status, a timeout or a network error is a failed
//! attempt, retried later. Redirects are not followed (a receiver that
//! moved is a configuration to fix, and a redirect must not carry the
//! body elsewhere).

use std::time::{Duration, Instant};

use super::{Endpoint, sign};

/// The HTTP client of an endpoint.
#[derive(Clone, Debug)]
pub struct Poster {
    client: reqwest::Client,
}

/// What came of an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    Delivered,
    /// Why it failed, as the operator reads it.
    Failed(String),
}

impl Poster {
    /// A client for `endpoint`: its timeout, rustls (ring) with the
    /// system's roots, no redirects, no proxy from the environment.
    pub fn new(endpoint: &Endpoint) -> anyhow::Result<Poster> {
        // The process's rustls provider, as tonic's (a second install is
        // refused harmlessly).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("backgammond/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Poster { client })
    }

    /// POSTs `body` as event `id`, signed now.
    pub async fn post(&self, endpoint: &Endpoint, id: &str, body: &[u8]) -> Attempt {
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let signature = sign::signature(&endpoint.secrets, id, timestamp, body);
        let started = Instant::now();
        let sent = self
            .client
            .post(endpoint.url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_vec())
            .send()
            .await;
        metrics::histogram!(crate::metrics::WEBHOOK_SECONDS, "endpoint" => endpoint.name.clone())
            .record(started.elapsed().as_secs_f64());
        match sent {
            Ok(answer) if answer.status().is_success() => Attempt::Delivered,
            Ok(answer) => Attempt::Failed(format!("HTTP {}", answer.status())),
            Err(e) if e.is_timeout() => Attempt::Failed(format!(
                "no answer within {:?} (timeout_seconds)",
                endpoint.timeout
            )),
            // Without the URL: a receiver's token may sit in its query.
            Err(e) => Attempt::Failed(describe(&e.without_url())),
        }
    }
}

/// An error with its causes ("error sending request" alone says little).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(500).collect()
}
