//! Webhooks: each event of the feed POSTed to the endpoints the operator
//! configures, signed as the Standard Webhooks spec says, at least once,
//! and never lost by a crash.
//!
//! The endpoints come from one TOML file (`backgammond --webhooks-file`,
//! docs/fleet.md shows one). This module reads and checks it (a mistyped
//! URL, an unknown key or a bad secret is a startup error, never a silent
//! drop), signs ([`sign`]) and sends ([`post`]). The delivering itself,
//! from the feed through the store's delivery rows, is `games::webhooks`.
//! Nothing here changes a match.

pub mod post;
pub mod sign;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use bg_api::v1 as pb;
use serde::Deserialize;

use super::feed::{DEFAULT_KINDS, bit};
use super::labels::Selector;

/// How long a delivery is retried by default: three days.
pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(3 * 24 * 3600);
/// The wait before the first retry by default; each later one waits four
/// times the one before, at most [`MAX_RETRY_WAIT`].
pub const DEFAULT_FIRST_RETRY: Duration = Duration::from_secs(5);
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(3600);
/// How long an attempt may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// An endpoint, as the file gives it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointFile {
    name: String,
    url: String,
    secret_file: PathBuf,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    label_selector: String,
    #[serde(default)]
    variants: Vec<String>,
    timeout_seconds: Option<f64>,
    retry_for_seconds: Option<f64>,
    first_retry_seconds: Option<f64>,
    lease_seconds: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhooksFile {
    #[serde(default)]
    endpoint: Vec<EndpointFile>,
}

/// An endpoint events are POSTed to.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Its name in deliveries and metrics: `[a-z0-9_-]`, 1 to 64.
    pub name: String,
    pub url: reqwest::Url,
    /// Its secrets, the newest first: each signs every delivery (so a
    /// receiver moving to a new secret accepts either meanwhile).
    pub secrets: Vec<sign::Secret>,
    /// The kinds of event it takes (a bit each).
    pub kinds: u32,
    pub selector: Selector,
    /// Any of these (empty: all).
    pub variants: Vec<String>,
    pub timeout: Duration,
    pub retry_for: Duration,
    pub first_retry: Duration,
    /// How long a claimed delivery is held by the server sending it:
    /// longer than an attempt and the database calls around it, so that
    /// only a server that died leaves it to another.
    pub lease: Duration,
}

impl Endpoint {
    /// The URL as shown to the operator: no user, password or query (a
    /// receiver's token may sit there).
    pub fn shown_url(&self) -> String {
        let mut url = self.url.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_query(None);
        url.to_string()
    }

    /// The wait before attempt `attempts + 1`, after `attempts` failed.
    pub fn retry_wait(&self, attempts: u32) -> Duration {
        let factor = 4u32.saturating_pow(attempts.saturating_sub(1).min(16));
        self.first_retry.saturating_mul(factor).min(MAX_RETRY_WAIT)
    }
}

/// Reads the endpoints from their file; a secret file's path is taken
/// from the file's folder.
pub fn read(path: &Path) -> anyhow::Result<Vec<Endpoint>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the webhooks file {}", path.display()))?;
    parse(&text, path)
}

/// The endpoints of a webhooks file's text (`path` names it in errors,
/// and its folder is where secret files are found).
pub fn parse(text: &str, path: &Path) -> anyhow::Result<Vec<Endpoint>> {
    let file: WebhooksFile =
        toml::from_str(text).with_context(|| format!("the webhooks file {}", path.display()))?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut endpoints: Vec<Endpoint> = Vec::new();
    for (i, e) in file.endpoint.into_iter().enumerate() {
        let name = e.name.clone();
        let endpoint = checked(e, folder).with_context(|| {
            format!(
                "the webhooks file {}, endpoint {} ({name:?})",
                path.display(),
                i + 1
            )
        })?;
        ensure!(
            endpoints.iter().all(|other| other.name != endpoint.name),
            "the webhooks file {}: two endpoints are named {:?}",
            path.display(),
            endpoint.name
        );
        endpoints.push(endpoint);
    }
    Ok(endpoints)
}

fn checked(e: EndpointFile, folder: &Path) -> anyhow::Result<Endpoint> {
    ensure!(
        !e.name.is_empty()
            && e.name.len() <= 64
            && e.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'),
        "name: 1 to 64 of a-z, 0-9, '-' and '_'"
    );
    // Errors name the URL without what may be secret in it.
    let without_query = e.url.split('?').next().unwrap_or_default();
    let shown = match without_query.split_once("://") {
        Some((scheme, rest)) => format!(
            "{scheme}://{}",
            rest.rsplit_once('@').map_or(rest, |(_, host)| host)
        ),
        None => without_query
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    let url = reqwest::Url::parse(&e.url).with_context(|| format!("url {shown:?}"))?;
    ensure!(
        matches!(url.scheme(), "http" | "https") && url.host().is_some(),
        "url {shown:?}: an http:// or https:// URL with a host"
    );
    ensure!(url.fragment().is_none(), "url {shown:?}: no #fragment");
    let secret_path = folder.join(&e.secret_file);
    let secrets = sign::Secret::read_file(&secret_path)?;
    let mut kinds = 0;
    for k in &e.kinds {
        kinds |= bit(kind_named(k)?);
    }
    if kinds == 0 {
        kinds = DEFAULT_KINDS;
    }
    let selector = Selector::parse(&e.label_selector)
        .map_err(|err| anyhow::anyhow!("label_selector: {}", err.message))?;
    let seconds = |what: &str, value: Option<f64>, default: Duration| -> anyhow::Result<Duration> {
        match value {
            None => Ok(default),
            Some(s) if s > 0.0 && s.is_finite() => {
                Duration::try_from_secs_f64(s).with_context(|| format!("{what}: {s} seconds"))
            }
            Some(s) => bail!("{what}: {s} is not a positive number of seconds"),
        }
    };
    let timeout = seconds("timeout_seconds", e.timeout_seconds, DEFAULT_TIMEOUT)?;
    let lease = seconds(
        "lease_seconds",
        e.lease_seconds,
        timeout * 2 + Duration::from_secs(30),
    )?;
    ensure!(
        lease > timeout,
        "lease_seconds: longer than timeout_seconds, or deliveries in flight would be sent twice"
    );
    Ok(Endpoint {
        lease,
        name: e.name,
        url,
        secrets,
        kinds,
        selector,
        variants: e.variants,
        timeout,
        retry_for: seconds("retry_for_seconds", e.retry_for_seconds, DEFAULT_RETRY_FOR)?,
        first_retry: seconds(
            "first_retry_seconds",
            e.first_retry_seconds,
            DEFAULT_FIRST_RETRY,
        )?,
    })
}

/// An event kind by name: `match_ended` or `MATCH_EVENT_KIND_MATCH_ENDED`.
fn kind_named(name: &str) -> anyhow::Result<pb::MatchEventKind> {
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("MATCH_EVENT_KIND_") {
        upper
    } else {
        format!("MATCH_EVENT_KIND_{upper}")
    };
    match pb::MatchEventKind::from_str_name(&full) {
        Some(pb::MatchEventKind::Unspecified) | None => bail!(
            "kinds: {name:?} is no event kind (created, game_ended, match_ended, removed, action)"
        ),
        Some(kind) => Ok(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(folder: &Path, name: &str, text: &str) -> PathBuf {
        let path = folder.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    #[test]
    fn an_endpoint_file_reads_with_its_defaults() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "s", SECRET);
        let file = write(
            dir.path(),
            "w.toml",
            "[[endpoint]]\nname = \"results\"\nurl = \"https://u:p@site.example/hook?token=x\"\nsecret_file = \"s\"\nkinds = [\"match_ended\", \"GAME_ENDED\"]\nlabel_selector = \"tour=spring\"\n",
        );
        let endpoints = read(&file).unwrap();
        let e = &endpoints[0];
        assert_eq!(e.name, "results");
        assert_eq!(
            e.kinds,
            bit(pb::MatchEventKind::MatchEnded) | bit(pb::MatchEventKind::GameEnded)
        );
        assert_eq!(e.retry_for, DEFAULT_RETRY_FOR);
        assert_eq!(e.shown_url(), "https://site.example/hook");
        assert_eq!(e.retry_wait(1), Duration::from_secs(5));
        assert_eq!(e.retry_wait(2), Duration::from_secs(20));
        assert_eq!(e.retry_wait(30), MAX_RETRY_WAIT);
    }

    #[test]
    fn a_mistyped_endpoint_is_a_startup_error_naming_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "s", SECRET);
        let cases = [
            ("url = \"htp://site.example/\"", "url"),
            ("url = \"http//user:hunter2@site.example/\"", "url"),
            ("url = \"site.example/hook\"", "url"),
            (
                "url = \"https://site.example/\"\nkinds = [\"ended\"]",
                "kinds",
            ),
            (
                "url = \"https://site.example/\"\nlabel_selector = \"a in (\"",
                "label_selector",
            ),
            (
                "url = \"https://site.example/\"\ntimeout_seconds = 0",
                "timeout_seconds",
            ),
            (
                "url = \"https://site.example/\"\nretries = 3",
                "unknown field",
            ),
        ];
        for (body, says) in cases {
            let file = write(
                dir.path(),
                "w.toml",
                &format!("[[endpoint]]\nname = \"a\"\nsecret_file = \"s\"\n{body}\n"),
            );
            let e = format!("{:#}", read(&file).unwrap_err());
            assert!(e.contains(says), "{body}: {e}");
            assert!(!e.contains("hunter2"), "a password shown: {e}");
        }
        let file = write(
            dir.path(),
            "w.toml",
            "[[endpoint]]\nname = \"a\"\nurl = \"https://x.example/\"\nsecret_file = \"missing\"\n",
        );
        assert!(format!("{:#}", read(&file).unwrap_err()).contains("missing"));
        let file = write(
            dir.path(),
            "w.toml",
            "[[endpoint]]\nname = \"a\"\nurl = \"https://x.example/\"\nsecret_file = \"s\"\n[[endpoint]]\nname = \"a\"\nurl = \"https://y.example/\"\nsecret_file = \"s\"\n",
        );
        assert!(format!("{:#}", read(&file).unwrap_err()).contains("two endpoints"));
    }
}
