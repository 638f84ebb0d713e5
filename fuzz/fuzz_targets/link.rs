#![no_main]
//! `ferry::fuzzing::link` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::link(data));
