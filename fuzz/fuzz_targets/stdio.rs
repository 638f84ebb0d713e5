#![no_main]
//! `ferry::fuzzing::stdio` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::stdio(data));
