#![no_main]
//! See bg_fuzz_bodies::plugin_answers. Needs BG_FUZZ_PLUGIN_DIR: the
//! shipped plugins (scripts/fuzz-plugin-dir).
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::plugin_answers(data));
