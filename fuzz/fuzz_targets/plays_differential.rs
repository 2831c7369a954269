//! The Rust and the C standard rules on the same random positions give
//! the same legal plays (crates/fuzz-bodies/src/differential.rs). Needs
//! BG_FUZZ_C_PLUGIN: the compiled examples/c-plugin (docs/testing.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::plays_differential(data));
