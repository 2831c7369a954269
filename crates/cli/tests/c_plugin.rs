//! A plugin written in C against the C ABI only (examples/c-plugin:
//! standard backgammon), compiled here with the header cbindgen generates
//! from the Rust definitions: the ABI is language-neutral. It passes
//! `bgctl plugin check`, and its legal plays are GNU Backgammon's on the
//! standard corpus.

use std::process::Command;

use bg_tests::{assert_plays_reproduce, compile_c_plugin, corpus_path};

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
    let bgctl = env!("CARGO_BIN_EXE_bgctl").as_ref();
    assert_plays_reproduce(bgctl, dir.path(), "c_backgammon", &corpus_path());
}
