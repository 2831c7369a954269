#![no_main]
//! See bg_fuzz_bodies::fleet_tokens.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::fleet_tokens(data));
