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
