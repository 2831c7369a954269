//! Every committed fuzz input, run through its target's body on stable:
//! the seed corpora (`fuzz/corpus/TARGET/`) and the inputs of every crash
//! or hang found and fixed (`fuzz/regressions/TARGET/`), so that a fixed
//! bug stays fixed where no nightly toolchain runs the fuzzers.

use std::path::PathBuf;

fn folder(kind: &str, target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target)
}

/// Every committed input of `target`: its seeds, then its regressions.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut inputs = Vec::new();
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(folder(kind, target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            inputs.push((path, bytes));
        }
    }
    inputs
}

#[test]
fn every_committed_fuzz_input_runs_through_its_target_without_a_fault() {
    let mut ran = 0;
    for (target, body) in bg_fuzz_bodies::TARGETS {
        for (path, bytes) in inputs(target) {
            let run = std::panic::catch_unwind(|| body(&bytes));
            assert!(run.is_ok(), "{target}: {} faulted", path.display());
            ran += 1;
        }
    }
    for (target, _) in bg_fuzz_bodies::TARGETS {
        assert!(
            folder("corpus", target).exists(),
            "fuzz/corpus/{target} holds the target's seeds"
        );
    }
    assert!(ran > 0);
}

/// The differential target's inputs, against the C plugin compiled here
/// (the fuzz target reads its file from BG_FUZZ_C_PLUGIN), and a sweep
/// of seeded random positions beside them, so that the two rule books are
/// compared on stable too.
#[test]
fn the_rust_and_the_c_standard_rules_agree_on_every_differential_input() {
    let dir = tempfile::tempdir().unwrap();
    let both =
        bg_fuzz_bodies::differential::Differential::load(&bg_tests::compile_c_plugin(dir.path()));
    let mut ran = 0;
    for (_, bytes) in inputs("plays_differential") {
        both.check(&bytes);
        ran += 1;
    }
    assert!(ran > 0, "fuzz/corpus/plays_differential holds the seeds");
    // A seeded sweep: 32 bytes a position from a small generator.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..5_000 {
        let bytes: Vec<u8> = (0..32)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        both.check(&bytes);
    }
}

/// The `http` target's inputs against a port holding a standard game (the
/// fuzz target's plugins come from BG_FUZZ_PLUGIN_DIR): the seeds reach
/// what they name, the board, the game over gRPC-Web, the operator's list.
#[test]
fn the_http_inputs_reach_a_game_through_every_door_of_the_port() {
    use bg_server::fuzzing::{Body, OPERATOR_TOKEN, Port, http::Request};
    let plugins = bg_tests::plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let dir = tempfile::tempdir().unwrap();
    let port = Port::open(dir.path(), vec![plugins.path().to_path_buf()]).unwrap();
    let game = port.games[0].clone();
    let mut ran = 0;
    for (_, bytes) in inputs("http") {
        bg_fuzz_bodies::http_on(&port, &bytes);
        ran += 1;
    }
    assert!(ran > 10);
    let get = |uri: String| Request::get(uri).body(Body::empty()).unwrap();
    let board = port.send(get(format!("/games/{game}/board.svg?version=1")));
    assert_eq!(board.status, 200, "{board:?}");
    assert!(board.body.contains("<svg"), "{board:?}");
    let seed = std::fs::read(folder("corpus", "http").join("get-game")).unwrap();
    let grpc_web = |seed: &[u8], token: Option<&str>| {
        let at = seed.windows(2).position(|w| w == b"\n\n").unwrap();
        let message = String::from_utf8_lossy(&seed[at + 2..]).replace("{game}", &game);
        let mut body = vec![0];
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(message.as_bytes());
        let head = String::from_utf8_lossy(&seed[..at]).into_owned();
        let path = head.lines().next().unwrap().split_once(' ').unwrap().1;
        let mut request = Request::post(path)
            .header("content-type", "application/grpc-web+proto")
            .header("x-grpc-web", "1");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        port.send(request.body(Body::from(body)).unwrap())
    };
    let read = grpc_web(&seed, None);
    assert_eq!(read.grpc_status, Some(0), "{read:?}");
    assert!(read.body.contains(&game), "{read:?}");
    let list = std::fs::read(folder("corpus", "http").join("list-matches")).unwrap();
    let listed = grpc_web(&list, Some(OPERATOR_TOKEN));
    assert_eq!(listed.grpc_status, Some(0), "{listed:?}");
    assert!(listed.body.contains(&game), "{listed:?}");
    let refused = grpc_web(&list, Some("a seat token"));
    assert_eq!(
        refused.grpc_status,
        Some(7),
        "PERMISSION_DENIED: {refused:?}"
    );
}

/// The `plugin_answers` target's inputs against the shipped plugins as
/// this build made them (the fuzz target loads them from
/// BG_FUZZ_PLUGIN_DIR), in the order its first byte picks from; the
/// seeds' states are each variant's own, so they read.
#[test]
fn the_plugin_answer_inputs_run_against_every_shipped_plugin() {
    let plugins: Vec<_> = [
        "bg_caucasian",
        "bg_fevga",
        "bg_hypergammon",
        "bg_long_nardy",
        "bg_plakoto",
        "bg_standard",
        "bg_trictrac",
    ]
    .iter()
    .map(|lib| bg_plugin_host::load(&bg_tests::plugin_file(lib)).unwrap())
    .collect();
    let mut ran = 0;
    for (_, bytes) in inputs("plugin_answers") {
        bg_fuzz_bodies::plugin_answers_on(&plugins, &bytes);
        ran += 1;
    }
    assert!(ran >= 7 * 5, "{ran} inputs");
    // A seed's state is its variant's: the plugin reads it.
    let seed = std::fs::read(folder("corpus", "plugin_answers").join("trictrac-state")).unwrap();
    assert_eq!(plugins[usize::from(seed[0])].name(), "trictrac");
    assert!(plugins[6].board(&seed[2..]).is_ok());
}
