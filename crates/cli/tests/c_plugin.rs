//! A plugin written in C against the C ABI only (examples/c-plugin:
//! standard backgammon), compiled here with the header cbindgen generates
//! from the Rust definitions: the ABI is language-neutral. It passes
//! `bgctl plugin check`, and its legal plays are GNU Backgammon's on the
//! standard corpus.

use std::process::Command;

use bg_tests::{compile_c_plugin, corpus_path};

fn bgctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bgctl"))
}

#[test]
fn a_plugin_written_in_c_passes_bgctl_plugin_check() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = compile_c_plugin(dir.path());
    let output = bgctl()
        .args(["plugin", "check"])
        .arg(&plugin)
        .args(["--games", "200", "--seed", "7"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("variant c_backgammon"), "{stdout}");
    assert!(stdout.ends_with("plugin check passed\n"), "{stdout}");
}

#[test]
fn the_c_plugin_s_legal_plays_are_gnubg_s_on_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    compile_c_plugin(dir.path());
    let output = bgctl()
        .arg("--plugin-dir")
        .arg(dir.path())
        .args(["plays", "--variant", "c_backgammon", "--corpus"])
        .arg(corpus_path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = std::fs::read_to_string(corpus_path()).unwrap();
    let actual = String::from_utf8(output.stdout).unwrap();
    assert_eq!(actual.lines().count(), expected.lines().count());
    for (n, (want, got)) in expected.lines().zip(actual.lines()).enumerate() {
        assert_eq!(got, want, "corpus line {}", n + 1);
    }
}
