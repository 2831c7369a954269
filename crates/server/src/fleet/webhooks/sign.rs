//! Signing as the Standard Webhooks spec says
//! (<https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md>):
//! a secret is `whsec_` and the base64 of 24 to 64 random bytes; a
//! delivery carries `webhook-id` (the event's id), `webhook-timestamp`
//! (Unix seconds, of the attempt) and `webhook-signature`, `v1,` and the
//! base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}` with the secret's
//! bytes, one per secret, separated by spaces. A receiver verifies it
//! with any of the spec's libraries (the tests use its Rust one).

use std::path::Path;

use anyhow::{Context, ensure};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{KeyInit, Mac};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The prefix of a secret's text.
pub const PREFIX: &str = "whsec_";

/// A signing secret (its bytes; never shown).
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A secret from its text, `whsec_` and base64.
    pub fn parse(text: &str) -> anyhow::Result<Secret> {
        let encoded = text.strip_prefix(PREFIX).with_context(|| {
            format!("a webhook secret begins with {PREFIX:?} (the Standard Webhooks form)")
        })?;
        let bytes = STANDARD
            .decode(encoded)
            .context("a webhook secret is whsec_ then base64")?;
        ensure!(
            (24..=64).contains(&bytes.len()),
            "a webhook secret holds 24 to 64 bytes, this one {} (make one with `echo whsec_$(openssl rand -base64 32)`)",
            bytes.len()
        );
        Ok(Secret(bytes))
    }

    /// The secrets of a file: one a line, the newest first (blank lines
    /// and lines starting with `#` skipped), at least one.
    pub fn read_file(path: &Path) -> anyhow::Result<Vec<Secret>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the webhook secret file {}", path.display()))?;
        let secrets = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(Secret::parse)
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("the webhook secret file {}", path.display()))?;
        ensure!(
            !secrets.is_empty(),
            "the webhook secret file {} holds no secret",
            path.display()
        );
        Ok(secrets)
    }

    fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        // Any key length is accepted by HMAC.
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-signature` header's value: a signature a secret.
pub fn signature(secrets: &[Secret], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|s| s.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's worked example (its README's "Signature scheme"): this
    /// secret, id, timestamp and body sign to this value.
    #[test]
    fn the_specs_worked_example_signs_as_the_spec_says() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_not_in_the_specs_form_is_refused() {
        for text in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_not base64!",
            "whsec_c2hvcnQ=",
        ] {
            assert!(Secret::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn every_secret_of_a_rotation_signs() {
        let a = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let b = Secret(vec![7; 32]);
        let both = signature(&[b, a], "id", 1, b"{}");
        assert_eq!(both.split(' ').count(), 2);
        assert!(both.split(' ').all(|s| s.starts_with("v1,")));
    }
}
