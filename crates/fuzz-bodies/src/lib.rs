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
use bg_server::fuzzing::Body as HttpBody;
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
    ("requests", requests),
    ("record", record),
    ("http", http),
    ("plugin_answers", plugin_answers),
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

/// Request ids, game ids, and a NewGame request off the wire: every
/// field NewGame reads checked as NewGame checks it (labels, players,
/// settings, the start board, the computer's seats, an XGID or a gnubg
/// ID taken up, seat seeds, the clock), then the match set up as
/// standard backgammon in process with the request's options map (the
/// variant checks the options), its dice from the bytes.
pub fn requests(data: &[u8]) {
    use bg_engine::game::{CommandError, Match};
    use bg_server::games::{check_new_game_request_id, check_request_id, game_id_of};
    use bg_variant_api::in_process::InProcess;

    let text = text(data);
    let _ = check_request_id(&text);
    let _ = check_new_game_request_id(&text);
    if let Ok(id) = game_id_of(&text) {
        assert_eq!(
            game_id_of(&id).ok().as_ref(),
            Some(&id),
            "{text:?}: a game id's one spelling reads as itself"
        );
    }
    let Ok(request) = <pb::NewGameRequest as prost::Message>::decode(data) else {
        return;
    };
    let Ok(read) = bg_server::games::fuzzing::new_game_request(&request) else {
        return;
    };
    let rules = InProcess {
        variant: bg_standard_rules::Standard,
        options: read.options,
    };
    let mut dice = BytesDice::new(data);
    let _ = match read.taken_up {
        Some((board, from)) => rules
            .setup_at(&board)
            .map_err(CommandError::Rules)
            .and_then(|setup| Match::resume(read.settings, setup, from, &rules, &mut dice)),
        None => {
            if let Some(board) = read.start {
                let _ = rules.setup_at(&board);
            }
            Match::new(read.settings, &rules, &mut dice)
        }
    };
}

/// Dice from the bytes, through a small generator (never a run of ties:
/// an opening throws again on a tie).
struct BytesDice(u64);

impl BytesDice {
    fn new(data: &[u8]) -> BytesDice {
        BytesDice(data.iter().fold(0x9e37_79b9_7f4a_7c15, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        }))
    }
}

impl bg_engine::game::DiceSource for BytesDice {
    fn die(&mut self) -> u8 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % 6) as u8 + 1
    }
}

/// A match record as `bgctl verify` reads it (from a file or the
/// server): its variant and options, and its dice checked, with and
/// without a commitment and seeds the user knows.
pub fn record(data: &[u8]) {
    use bg_fair_dice::record::{Known, record, variant_of};
    let text = text(data);
    let _ = variant_of(&text);
    let _ = record(&text, &Known::default());
    let known = Known {
        commitment: Some("0".repeat(64)),
        white_seed: Some(String::new()),
        black_seed: Some("b".into()),
        opening: Some("throw_again"),
    };
    let _ = record(&text, &known);
}

/// The server's port (every route, gRPC, gRPC-Web and the pages) given
/// a request as text: `METHOD PATH` on the first line, `name: value`
/// headers, a blank line, the body; `{game}` in the path or body stands
/// for a game the port holds. Whatever comes, no answer is a 5xx, and
/// no gRPC answer is INTERNAL or UNKNOWN. The plugins are those in
/// [`PLUGIN_DIR_VAR`]'s folder, if it names one.
pub fn http(data: &[u8]) {
    static PORT: std::sync::LazyLock<(bg_server::fuzzing::Port, tempfile::TempDir)> =
        std::sync::LazyLock::new(|| {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let plugins = std::env::var_os(PLUGIN_DIR_VAR)
                .filter(|dir| !dir.is_empty())
                .map(std::path::PathBuf::from);
            let port = bg_server::fuzzing::Port::open(dir.path(), plugins.into_iter().collect())
                .expect("the port opens");
            (port, dir)
        });
    http_on(&PORT.0, data);
}

/// The [`http`] target's body on `port`.
pub fn http_on(port: &bg_server::fuzzing::Port, data: &[u8]) {
    let Some(request) = http_request(data, port.games.first().map_or("", String::as_str)) else {
        return;
    };
    let what = format!("{} {}", request.method(), request.uri());
    let answer = port.send(request);
    assert!(answer.status < 500, "{what}: {answer:?}");
    // 13 INTERNAL, 2 UNKNOWN: a fault of ours, never the caller's.
    assert!(
        !matches!(answer.grpc_status, Some(13 | 2)),
        "{what}: {answer:?}"
    );
}

/// The variable naming the plugin folder the [`http`] target loads.
pub const PLUGIN_DIR_VAR: &str = "BG_FUZZ_PLUGIN_DIR";

/// The request the bytes write, if they write one HTTP can carry.
fn http_request(data: &[u8], game: &str) -> Option<bg_server::fuzzing::http::Request<HttpBody>> {
    let split = data
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or((data, &[][..]), |at| (&data[..at], &data[at + 2..]));
    let (head, body) = split;
    let head = String::from_utf8_lossy(head).replace("{game}", game);
    let mut lines = head.lines();
    let (method, path) = lines.next()?.split_once(' ')?;
    let mut request = bg_server::fuzzing::http::Request::builder()
        .method(method)
        .uri(path);
    let mut frame = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        if name.trim() == FRAME_HEADER {
            frame = true;
            continue;
        }
        request = request.header(name.trim(), value.trim());
    }
    let mut body = if body.windows(6).any(|w| w == b"{game}") {
        String::from_utf8_lossy(body)
            .replace("{game}", game)
            .into_bytes()
    } else {
        body.to_vec()
    };
    if frame {
        // A gRPC message's frame: not compressed, its length, the message.
        let length = u32::try_from(body.len()).ok()?.to_be_bytes();
        body = [&[0][..], &length, &body].concat();
    }
    request.body(HttpBody::from(body)).ok()
}

/// A header line the [`http`] target takes out: the body is one gRPC
/// message, to be framed (its length written once `{game}` is replaced).
pub const FRAME_HEADER: &str = "x-fuzz-frame";

/// What a variant plugin is given and answers, as the host handles it,
/// on the shipped plugins in [`PLUGIN_DIR_VAR`]'s folder (none there:
/// nothing to do). The first byte picks the plugin, the second what the
/// rest is:
/// - state bytes the host hands the plugin (a stored row, corrupt or
///   forged: each variant's state decoding, `serde_state!`'s too): its
///   board, legal plays, a roll, a resignation, its scoreboard;
/// - the plugin's answer to each kind of call, with a status from the
///   second byte, through the host's checks of a real answer.
pub fn plugin_answers(data: &[u8]) {
    static PLUGINS: std::sync::LazyLock<Vec<bg_plugin_host::Plugin>> =
        std::sync::LazyLock::new(|| {
            let Some(dir) = std::env::var_os(PLUGIN_DIR_VAR).filter(|d| !d.is_empty()) else {
                return Vec::new();
            };
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .expect("the plugin folder")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "so"))
                .collect();
            files.sort();
            files
                .iter()
                .map(|f| bg_plugin_host::load(f).expect("a shipped plugin loads"))
                .collect()
        });
    plugin_answers_on(&PLUGINS, data);
}

/// The [`plugin_answers`] target's body on `plugins` (in the order the
/// first byte picks from: sorted by file name).
pub fn plugin_answers_on(plugins: &[bg_plugin_host::Plugin], data: &[u8]) {
    let [pick, mode, rest @ ..] = data else {
        return;
    };
    let Some(plugin) = plugins.get(usize::from(*pick) % plugins.len().max(1)) else {
        return;
    };
    if mode % 2 == 0 {
        let seat = if mode & 2 == 0 {
            Seat::White
        } else {
            Seat::Black
        };
        let Ok(dice) = bg_engine::Dice::new(mode / 4 % 6 + 1, mode / 24 % 6 + 1) else {
            return;
        };
        in_process_states(*pick, rest, seat, dice);
        let _ = plugin.board(rest);
        let _ = plugin.legal_plays(rest, seat, dice, &mut Vec::new());
        let _ = plugin.after_roll(rest, seat, dice);
        let _ = plugin.concede(rest, seat);
        let _ = plugin.scoreboard(rest);
    } else {
        // OK, each error kind, and a status no variant sends.
        let status = i32::from(mode / 2 % 8) - 1;
        plugin.check_answer_bytes(status, rest);
    }
}

/// State bytes as the variant's own crate, linked in, reads them (what a
/// plugin's glue does with the bytes it is handed; instrumented here,
/// where the loaded plugins are not): the variant `pick` names, in the
/// plugins' file-name order.
fn in_process_states(pick: u8, state: &[u8], seat: Seat, dice: bg_engine::Dice) {
    fn read<V: bg_variant_api::Variant>(
        variant: V,
        state: &[u8],
        seat: Seat,
        dice: bg_engine::Dice,
    ) {
        use bg_engine::game::Rules;
        let rules = bg_variant_api::in_process::InProcess::new(variant);
        if rules.board(state).is_ok() {
            let _ = rules.legal_plays(state, seat, dice);
            let _ = rules.after_roll(state, seat, dice);
            let _ = rules.scoreboard(state);
        }
    }
    match pick % 7 {
        0 => read(bg_caucasian_rules::Caucasian, state, seat, dice),
        1 => read(bg_same_way_rules::Fevga, state, seat, dice),
        2 => read(bg_hypergammon::Hypergammon, state, seat, dice),
        3 => read(bg_same_way_rules::LongNardy, state, seat, dice),
        4 => read(bg_plakoto_rules::Plakoto, state, seat, dice),
        5 => read(bg_standard_rules::Standard, state, seat, dice),
        _ => read(bg_trictrac_rules::TricTrac, state, seat, dice),
    }
}
