#![no_main]
//! `ferry::fuzzing::retry_after` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::retry_after(data));
