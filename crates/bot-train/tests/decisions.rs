//! `bg-bot decisions`, as the grading script reads it: one line a
//! decision of the net, its chosen result among the position's legal
//! results, each listed once, sorted.

use std::process::Command;

#[test]
fn each_decision_lists_the_chosen_result_among_the_legal_ones() {
    let output = Command::new(env!("CARGO_BIN_EXE_bg-bot"))
        .args([
            "decisions",
            "--variant",
            "standard",
            "--games",
            "3",
            "--seed",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.lines().count() > 30, "three games' decisions");
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        assert!(fields.len() >= 5, "{line}");
        let dice: Vec<u8> = fields[1..3].iter().map(|d| d.parse().unwrap()).collect();
        assert!(dice.iter().all(|d| (1..=6).contains(d)), "{line}");
        let results = &fields[4..];
        assert!(results.contains(&fields[3]), "{line}");
        assert!(
            results.windows(2).all(|w| w[0] < w[1]),
            "sorted, once each: {line}"
        );
        for id in std::iter::once(fields[0]).chain(results.iter().copied()) {
            bg_engine::position_id::decode(id, bg_engine::Seat::White).unwrap();
        }
    }
}
