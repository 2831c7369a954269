//! `bgctl hint` (offline): the computer player's choice for each corpus
//! line is one of the line's legal plays, and the one the trained net
//! values most, with that value.

use std::process::Command;

use bg_bot::encode::{INPUTS, encode};
use bg_bot::net::equity;
use bg_engine::{Seat, position_id};
use bg_tests::{corpus_path, plugin_dir};

#[test]
fn bgctl_hint_chooses_the_legal_play_the_net_values_most() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let corpus = std::fs::read_to_string(corpus_path()).unwrap();
    let lines: Vec<&str> = corpus.lines().take(400).collect();
    let input = tempfile::NamedTempFile::new().unwrap();
    let positions: Vec<String> = lines
        .iter()
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .collect();
    std::fs::write(input.path(), positions.join("\n")).unwrap();
    let answers = hint_corpus(dir.path(), input.path(), &[]);
    let net = bg_bot::trained("standard").unwrap();
    let value = |id: &str| {
        let board = position_id::decode(id, Seat::White).unwrap();
        let mut inputs = [0.0; INPUTS];
        encode(&board, Seat::White, 15, &mut inputs);
        equity(&net.forward(&inputs).outputs)
    };
    assert_eq!(answers.lines().count(), lines.len());
    for (line, answer) in lines.iter().zip(answers.lines()) {
        let fields: Vec<&str> = line.split(' ').collect();
        let got: Vec<&str> = answer.split(' ').collect();
        assert_eq!(got[..3], fields[..3], "the input echoed");
        let results = &fields[4..];
        assert!(
            results.contains(&got[3]),
            "{answer}: not a legal play of {line}"
        );
        let best = results
            .iter()
            .map(|r| value(r))
            .fold(f32::NEG_INFINITY, f32::max);
        let said: f32 = got[4].parse().unwrap();
        assert!(
            (said - best).abs() < 1e-3,
            "{answer}: the best is worth {best}"
        );
        assert!((value(got[3]) - best).abs() < 1e-6, "{answer}");
    }
}

/// Issue 48: `--plies` is honoured with `--corpus`. At 1-ply each answer
/// is still one of the line's legal plays, valued by the same search the
/// server's `Hint` runs; its values are not the 0-ply ones, and on some
/// positions the choice itself changes.
#[test]
fn bgctl_hint_on_a_corpus_searches_at_the_plies_asked() {
    let dir = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let corpus = std::fs::read_to_string(corpus_path()).unwrap();
    let lines: Vec<&str> = corpus.lines().take(60).collect();
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), lines.join("\n")).unwrap();
    let answers = |plies: &str| hint_corpus(dir.path(), input.path(), &["--plies", plies]);
    let (zero, one) = (answers("0"), answers("1"));
    assert_eq!(one.lines().count(), lines.len());
    let mut other_choice = 0;
    let mut other_value = 0;
    for ((line, a0), a1) in lines.iter().zip(zero.lines()).zip(one.lines()) {
        let legal: Vec<&str> = line.split(' ').skip(4).collect();
        let (f0, f1): (Vec<&str>, Vec<&str>) = (a0.split(' ').collect(), a1.split(' ').collect());
        assert!(legal.contains(&f1[3]), "{a1}: not a legal play of {line}");
        if legal.len() > 1 {
            other_choice += usize::from(f0[3] != f1[3]);
            other_value += usize::from(f0[4] != f1[4]);
        }
    }
    assert!(other_value > lines.len() / 2, "1-ply values: {other_value}");
    assert!(other_choice > 0, "1-ply never chose otherwise");
}

/// `bgctl hint --corpus INPUT` (with `extra` arguments) on the plugins in
/// `dir`: its answers, a line each.
fn hint_corpus(dir: &std::path::Path, input: &std::path::Path, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .arg("--plugin-dir")
        .arg(dir)
        .args(["hint", "--variant", "standard"])
        .args(extra)
        .arg("--corpus")
        .arg(input)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}
