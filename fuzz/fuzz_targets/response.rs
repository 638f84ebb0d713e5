#![no_main]
//! `ferry::fuzzing::response` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::response(data));
