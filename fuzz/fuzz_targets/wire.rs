#![no_main]
//! `ferry::fuzzing::wire` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::wire(data));
