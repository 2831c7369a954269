#![no_main]
//! See bg_fuzz_bodies::log_entry.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::log_entry(data));
