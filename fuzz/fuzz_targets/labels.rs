#![no_main]
//! See bg_fuzz_bodies::labels.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::labels(data));
