#![no_main]
//! See bg_fuzz_bodies::requests.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::requests(data));
