//! `bgctl plugin check` (issue 37): every shipped plugin passes it, and a
//! plugin that breaks what the server relies on fails it, naming what and
//! where.

use std::process::Command;

use bg_tests::plugin_file;

fn check(lib: &str, extra: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .args(["plugin", "check"])
        .arg(plugin_file(lib))
        .args(["--games", "60"])
        .args(extra)
        .output()
        .expect("bgctl runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn every_shipped_plugin_passes_the_plugin_check() {
    for lib in bg_tests::SHIPPED_PLUGINS {
        let (passed, text) = check(lib, &[]);
        assert!(passed, "{lib}:\n{text}");
        assert!(text.contains("plugin check passed"), "{lib}:\n{text}");
        assert!(text.contains("60 matches"), "{lib}:\n{text}");
    }
}

#[test]
fn a_plugin_breaking_the_server_s_invariants_fails_the_check_naming_the_position() {
    for (fault, says) in [
        ("extra_checker", "16 checkers"),
        ("accept_anything", "not one of its legal plays"),
        ("undeclared_name", "does not declare"),
    ] {
        let option = format!("fault={fault}");
        let (passed, text) = check("bg_test_faulty", &["--option", &option]);
        assert!(!passed, "{fault}:\n{text}");
        assert!(text.contains(says), "{fault}:\n{text}");
        assert!(
            text.contains("--seed 1"),
            "{fault}: how to replay it\n{text}"
        );
    }
}

#[test]
fn a_file_the_server_would_not_load_fails_the_check_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("libnot_a_plugin.so");
    std::fs::write(&file, b"not a shared library").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .args(["plugin", "check"])
        .arg(&file)
        .output()
        .expect("bgctl runs");
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("would not load it"), "{text}");
}
