#![no_main]
//! See bg_fuzz_bodies::worker_frames.
libfuzzer_sys::fuzz_target!(|data: &[u8]| bg_fuzz_bodies::worker_frames(data));
