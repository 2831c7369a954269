//! The fuzz targets' bodies: each takes the bytes libFuzzer gives (or a
//! corpus file) to one door where bytes from outside come in, and checks
//! what must hold whatever they are: no panic, no hang, and a value read
//! is the value written back (where a writer exists).
//!
//! `fuzz/` (cargo-fuzz, a nightly toolchain; outside the workspace so the
//! README's commands never build it) runs them under libFuzzer;
//! `tests/corpora.rs` runs every committed input (`fuzz/corpus/TARGET/`,
//! `fuzz/regressions/TARGET/`) through them on stable, in `cargo test`.
//!
//! Never used by the service itself.

use std::path::Path;

pub mod differential;

use bg_api::v1 as pb;
use bg_engine::{Play, Seat};
use bg_server::fleet::labels::{Selector, checked_labels};
use bg_server::fleet::{Cursor, PageToken, TokenKey};
use bg_server::snapshot::{Seal, SeedKey};

/// A target's body.
pub type Body = fn(&[u8]);

/// The targets, by name: what `fuzz/fuzz_targets/NAME.rs` runs and the
/// corpus folders are named after.
pub const TARGETS: &[(&str, Body)] = &[
    ("ids", ids),
    ("notation", notation),
    ("snapshot", snapshot),
    ("fleet_tokens", fleet_tokens),
    ("labels", labels),
    ("webhooks_file", webhooks_file),
    ("worker_frames", worker_frames),
    ("read_mask", read_mask),
    ("log_entry", log_entry),
];

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// Position IDs (either seat on roll, 15 or 3 checkers), Match IDs and
/// XGIDs; a Position ID read is written back the same.
pub fn ids(data: &[u8]) {
    let text = text(data);
    for seat in [Seat::White, Seat::Black] {
        for checkers in [15, 3] {
            if let Ok(board) = bg_engine::position_id::decode_for(&text, seat, checkers) {
                let again = bg_engine::position_id::encode(&board, seat);
                let back = bg_engine::position_id::decode_for(&again, seat, checkers);
                assert_eq!(back.ok(), Some(board), "{text:?} -> {again:?}");
            }
        }
    }
    let _ = bg_engine::match_id::decode(&text);
    let _ = bg_engine::xgid::decode(&text);
}

/// Play notation: a play read is written and read back the same.
pub fn notation(data: &[u8]) {
    let text = text(data);
    if let Ok(play) = text.parse::<Play>() {
        let written = play.notation();
        assert_eq!(
            written.parse::<Play>().ok(),
            Some(play),
            "{text:?} -> {written:?}"
        );
    }
}

/// A stored snapshot, as read back from a database (every format), with
/// a sealed seed or not.
pub fn snapshot(data: &[u8]) {
    static KEY: std::sync::LazyLock<SeedKey> =
        std::sync::LazyLock::new(|| SeedKey::derive(&[9; 32]));
    let seal = Seal {
        key: &KEY,
        game_id: "fuzz",
    };
    let text = text(data);
    let _ = bg_server::snapshot::decode(&text, seal);
    let _ = bg_server::snapshot::decode_start(&text);
    let _ = bg_server::snapshot::decode_board(&text);
}

/// Feed cursors and page tokens as clients send them back: forged or
/// altered ones refused; one that reads is the one written.
pub fn fleet_tokens(data: &[u8]) {
    let key = TokenKey::derive(&[5; 32]);
    let text = text(data);
    if let Ok(cursor) = Cursor::decode(&text, &key, "cursor") {
        assert_eq!(
            cursor.encode(&key),
            text,
            "a cursor read is the one written"
        );
    }
    let _ = PageToken::decode(&text, &key, [0; 16]);
}

/// Label selectors, and labels given at NewGame (`key=value` lines).
pub fn labels(data: &[u8]) {
    let text = text(data);
    if let Ok(selector) = Selector::parse(&text) {
        let _ = selector.matches(&Default::default());
    }
    let labels: std::collections::HashMap<String, String> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let _ = checked_labels(&labels);
}

/// The operator's webhooks file (its TOML; secret files looked for in a
/// folder that does not exist), and a secret file's line.
pub fn webhooks_file(data: &[u8]) {
    let _ = bg_server::fleet::webhooks::sign::Secret::parse(&text(data));
    let _ = bg_server::fleet::webhooks::parse(
        &text(data),
        Path::new("/nonexistent/bg-fuzz/webhooks.toml"),
    );
}

/// The isolated plugin worker's frames, both ways: a hostile server's
/// request, a hostile worker's hello and answers, a frame's length.
pub fn worker_frames(data: &[u8]) {
    use bg_plugin_host::isolated::fuzzing;
    fuzzing::request(data);
    fuzzing::hello(data);
    fuzzing::answer(data);
    fuzzing::frame(data);
}

/// The differential target ([`differential`]): the Rust and the C
/// standard rules on the same position, the C plugin's file named by
/// [`differential::C_PLUGIN_VAR`]. Not in [`TARGETS`]: its corpus runs
/// in `tests/corpora.rs` with a C plugin compiled there.
pub fn plays_differential(data: &[u8]) {
    static BOTH: std::sync::LazyLock<differential::Differential> =
        std::sync::LazyLock::new(differential::Differential::from_env);
    BOTH.check(data);
}

/// An event-log entry's text as read back from the database (every
/// format: today's object and the old array), under a version taken
/// from the first bytes.
pub fn log_entry(data: &[u8]) {
    let (version, text) = match data.split_first() {
        Some((v, rest)) => (u64::from(*v), rest),
        None => (0, data),
    };
    bg_server::games::fuzzing::log_entry(version, &String::from_utf8_lossy(text));
}

/// Read masks (paths, comma-separated here).
pub fn read_mask(data: &[u8]) {
    let mask = prost_types::FieldMask {
        paths: text(data).split(',').map(str::to_string).collect(),
    };
    let _ = bg_server::fields::Fields::from_mask(Some(&mask));
    // And as bytes off the wire, a whole request.
    let _ = <pb::GetGameRequest as prost::Message>::decode(data);
}
