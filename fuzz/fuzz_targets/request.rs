#![no_main]
//! `ferry::fuzzing::request` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::request(data));
