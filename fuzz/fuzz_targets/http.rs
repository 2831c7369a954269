#![no_main]
//! See bg_fuzz_bodies::http. A standard game on the port when
//! BG_FUZZ_PLUGIN_DIR names a folder with its plugin (scripts/fuzz-plugin-dir).
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::http(data));
