//! The site's words on a match: labels (Kubernetes' rules for keys and
//! values) and player ids, checked at NewGame and never changed after;
//! and label selectors, which lists and the feed filter by.
//!
//! The rules are Kubernetes' (kubernetes.io, "Labels and Selectors"): a
//! key is an optional prefix (a DNS subdomain, at most 253 characters)
//! and `/`, then a name of at most 63 characters, alphanumeric at both
//! ends, with `-`, `_` and `.` between; a value is empty or such a name.

use std::collections::BTreeMap;

use bg_api::v1 as pb;

use crate::error::ApiError;

/// The most labels a match may carry.
pub const MAX_LABELS: usize = 32;
/// The longest player id, in bytes.
pub const MAX_PLAYER_BYTES: usize = 128;

/// A name: 1 to 63 characters, `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS subdomain (RFC 1123): lowercase labels joined by dots, at most
/// 253 characters.
fn is_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Why a key is not a label key (None: it is).
pub fn key_error(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_subdomain(prefix)
    {
        return Some(format!(
            "the key {} has a prefix that is not a DNS subdomain",
            crate::error::quote(key)
        ));
    }
    (!is_name(name)).then(|| {
        format!(
            "the key {} is not a name of 1 to 63 characters [A-Za-z0-9], with - _ . inside",
            crate::error::quote(key)
        )
    })
}

/// Why a value is not a label value (None: it is).
pub fn value_error(key: &str, value: &str) -> Option<String> {
    (!value.is_empty() && !is_name(value)).then(|| {
        format!(
            "the value of {} is not empty nor a name of 1 to 63 characters [A-Za-z0-9], with - _ . inside",
            crate::error::quote(key)
        )
    })
}

/// A NewGame's labels, checked (field `labels`).
pub fn checked_labels(
    labels: &std::collections::HashMap<String, String>,
) -> Result<BTreeMap<String, String>, ApiError> {
    if labels.len() > MAX_LABELS {
        return Err(ApiError::invalid(
            "labels",
            format!("at most {MAX_LABELS} labels ({} given)", labels.len()),
        ));
    }
    for (key, value) in labels {
        if let Some(why) = key_error(key).or_else(|| value_error(key, value)) {
            return Err(ApiError::invalid("labels", why));
        }
    }
    Ok(labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// A NewGame's player ids, checked (field `players`): white's, black's.
pub fn checked_players(players: Option<&pb::Players>) -> Result<[String; 2], ApiError> {
    let Some(p) = players else {
        return Ok([String::new(), String::new()]);
    };
    for (seat, id) in [("white", &p.white), ("black", &p.black)] {
        if id.len() > MAX_PLAYER_BYTES {
            return Err(ApiError::invalid(
                "players",
                format!("{seat}'s id is {} bytes, over {MAX_PLAYER_BYTES}", id.len()),
            ));
        }
        if id.chars().any(char::is_control) {
            return Err(ApiError::invalid(
                "players",
                format!("{seat}'s id has a control character"),
            ));
        }
    }
    Ok([p.white.clone(), p.black.clone()])
}

/// A player id a filter names, checked as NewGame's are (field given).
pub fn checked_player_filter(field: &'static str, id: &str) -> Result<Option<String>, ApiError> {
    if id.is_empty() {
        return Ok(None);
    }
    if id.len() > MAX_PLAYER_BYTES || id.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            field,
            format!("a player id is at most {MAX_PLAYER_BYTES} bytes, without control characters"),
        ));
    }
    Ok(Some(id.to_string()))
}

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

/// A label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

/// The longest selector read.
const MAX_SELECTOR_BYTES: usize = 4096;

impl Selector {
    /// Reads Kubernetes' selector syntax (field `label_selector`).
    pub fn parse(text: &str) -> Result<Selector, ApiError> {
        let bad = |why: String| ApiError::invalid("label_selector", why);
        if text.len() > MAX_SELECTOR_BYTES {
            return Err(bad(format!("at most {MAX_SELECTOR_BYTES} bytes")));
        }
        let mut requirements = Vec::new();
        for part in split_top_level(text).map_err(bad)? {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(bad(
                    "an empty requirement (two commas, or one at an end)".into()
                ));
            }
            requirements.push(requirement(part).map_err(bad)?);
        }
        Ok(Selector(requirements))
    }

    /// Whether labels (a match's) satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::Absent(k) => !labels.contains_key(k),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Splits at the commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err("unbalanced parentheses".into());
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn checked_key(key: &str) -> Result<String, String> {
    match key_error(key) {
        Some(why) => Err(why),
        None => Ok(key.to_string()),
    }
}

fn checked_value(key: &str, value: &str) -> Result<String, String> {
    match value_error(key, value) {
        Some(why) => Err(why),
        None => Ok(value.to_string()),
    }
}

fn requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::Absent(checked_key(key.trim())?));
    }
    if let Some((key, value)) = part.split_once("!=") {
        let key = checked_key(key.trim())?;
        let value = checked_value(&key, value.trim())?;
        return Ok(Requirement::NotEquals(key, value));
    }
    if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
        let key = checked_key(key.trim())?;
        let value = checked_value(&key, value.trim())?;
        return Ok(Requirement::Equals(key, value));
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words.as_slice() {
        let rest = rest.trim();
        let (notin, set) = if let Some(set) = rest.strip_prefix("notin") {
            (true, set)
        } else if let Some(set) = rest.strip_prefix("in") {
            (false, set)
        } else {
            return Err(format!(
                "{} is not a requirement",
                crate::error::quote(part)
            ));
        };
        let key = checked_key(key.trim())?;
        let set = set
            .trim()
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(|| {
                format!(
                    "the set of {} needs parentheses: (a,b)",
                    crate::error::quote(&key)
                )
            })?;
        let values = set
            .split(',')
            .map(|v| checked_value(&key, v.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(if notin {
            Requirement::NotIn(key, values)
        } else {
            Requirement::In(key, values)
        });
    }
    Ok(Requirement::Exists(checked_key(part)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn keys_and_values_follow_kubernetes_rules() {
        for good in ["tier", "a", "site.example/table", "x-1_2.y", "A9"] {
            assert_eq!(key_error(good), None, "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a b",
            "Site.Example/t",
            "/t",
            "a/",
            &"k".repeat(64),
        ] {
            assert!(key_error(bad).is_some(), "{bad:?}");
        }
        assert_eq!(value_error("k", ""), None);
        assert!(value_error("k", "no spaces").is_some());
        assert!(value_error("k", &"v".repeat(64)).is_some());
    }

    #[test]
    fn a_selector_holds_when_every_requirement_does() {
        let m = labels(&[("tournament", "spring"), ("table", "7")]);
        for (selector, holds) in [
            ("", true),
            ("tournament=spring", true),
            ("tournament==spring,table=7", true),
            ("tournament!=autumn", true),
            ("absent!=x", true),
            ("table in (6,7)", true),
            ("table notin (6,7)", false),
            ("missing notin (a)", true),
            ("table", true),
            ("!table", false),
            ("!missing", true),
            ("tournament=spring,table=8", false),
        ] {
            let s = Selector::parse(selector).unwrap();
            assert_eq!(s.matches(&m), holds, "{selector}");
        }
    }

    /// Random selectors and labels from the characters that matter
    /// (separators, parentheses, operators, spaces, non-ASCII): each
    /// parses or is refused naming its field, never a panic.
    #[test]
    fn random_selectors_and_labels_are_parsed_or_refused_by_field() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(46);
        let alphabet: Vec<char> = "ab9=!,() in notin/-_.é\u{0}".chars().collect();
        let m = labels(&[("a", "b"), ("in", "9")]);
        for _ in 0..50_000 {
            let len = rng.random_range(0..24);
            let text: String = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            match Selector::parse(&text) {
                Ok(selector) => {
                    let _ = selector.matches(&m);
                }
                Err(e) => assert_eq!(
                    e.metadata.get("field").map(String::as_str),
                    Some("label_selector"),
                    "{text:?}"
                ),
            }
            let given: std::collections::HashMap<String, String> =
                [(text.clone(), text.clone())].into();
            if let Err(e) = checked_labels(&given) {
                assert_eq!(e.metadata.get("field").map(String::as_str), Some("labels"));
            }
        }
    }

    #[test]
    fn a_selector_that_does_not_parse_names_the_field() {
        for bad in [
            "a=b,,c",
            "a in b",
            "a in (b",
            "a=b c",
            "(",
            "k=v)",
            "a in (x y)",
        ] {
            let e = Selector::parse(bad).unwrap_err();
            assert_eq!(
                e.metadata.get("field").map(String::as_str),
                Some("label_selector"),
                "{bad}"
            );
        }
    }
}
