//! `bgctl` as a user runs it: a real process, the plugin loaded from a
//! plugin folder given by flag or environment.

use std::process::Command;

use bg_tests::{assert_plays_reproduce, corpus_path, hypergammon_corpus_path, plugin_dir};

fn bgctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bgctl"))
}

#[test]
fn bgctl_plays_reproduces_the_gnubg_corpus_line_for_line() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let bgctl = env!("CARGO_BIN_EXE_bgctl").as_ref();
    assert_plays_reproduce(bgctl, dir.path(), "standard", &corpus_path());
}

/// The hypergammon plugin's legal plays are GNU Backgammon's, on 5,000
/// positions of hypergammon self-play (its corpus: tests/data/README.md).
#[test]
fn bgctl_plays_reproduces_gnubg_s_hypergammon_legal_plays() {
    let dir = plugin_dir(&[("bg_hypergammon", "libbg_hypergammon.so")]);
    let bgctl = env!("CARGO_BIN_EXE_bgctl").as_ref();
    assert_plays_reproduce(bgctl, dir.path(), "hypergammon", &hypergammon_corpus_path());
}

#[test]
fn bgctl_bench_movegen_ends_with_the_figures_line() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let output = bgctl()
        .env("BACKGAMMON_PLUGIN_DIR", dir.path())
        .args([
            "bench",
            "movegen",
            "--variant",
            "standard",
            "--repeat",
            "1",
            "--corpus",
        ])
        .arg(corpus_path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let last = stdout.lines().last().unwrap();
    let fields: Vec<(&str, &str)> = last.split(' ').filter_map(|f| f.split_once('=')).collect();
    let keys: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, ["ns_per_position", "positions", "plays"], "{last}");
    assert!(fields[0].1.parse::<f64>().unwrap() > 0.0);
    assert_eq!(fields[1].1, "5000");
    // The corpus lists 92,228 plays in all.
    assert_eq!(fields[2].1, "92228");
}

#[test]
fn bgctl_names_the_variants_it_found_when_one_is_missing() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let output = bgctl()
        .arg("--plugin-dir")
        .arg(dir.path())
        .args(["plays", "--variant", "plakoto", "--corpus"])
        .arg(corpus_path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no variant `plakoto`") && stderr.contains("loaded: standard"),
        "{stderr}"
    );
}

#[test]
fn bgctl_refuses_a_malformed_corpus_line_with_its_location() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let corpus = dir.path().join("bad.txt");
    std::fs::write(&corpus, "4HPwATDgc/ABMA 3 1\n4HPwATDgc/ABMA 7 1\n").unwrap();
    let output = bgctl()
        .arg("--plugin-dir")
        .arg(dir.path())
        .args(["plays", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.txt:2") && stderr.contains("7"),
        "{stderr}"
    );
}
