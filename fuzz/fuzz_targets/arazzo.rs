#![no_main]
//! `ferry::fuzzing::arazzo` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::arazzo(data));
