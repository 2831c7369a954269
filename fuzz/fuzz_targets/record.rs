#![no_main]
//! See bg_fuzz_bodies::record.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::record(data));
