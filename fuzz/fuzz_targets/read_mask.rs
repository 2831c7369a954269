#![no_main]
//! See bg_fuzz_bodies::read_mask.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::read_mask(data));
