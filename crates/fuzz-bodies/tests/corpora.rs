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

#[test]
fn every_committed_fuzz_input_runs_through_its_target_without_a_fault() {
    let mut ran = 0;
    for (target, body) in bg_fuzz_bodies::TARGETS {
        for kind in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(folder(kind, target)) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                let run = std::panic::catch_unwind(|| body(&bytes));
                assert!(run.is_ok(), "{target}: {} faulted", path.display());
                ran += 1;
            }
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
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(folder(kind, "plays_differential")) else {
            continue;
        };
        for entry in entries {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            both.check(&bytes);
            ran += 1;
        }
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
