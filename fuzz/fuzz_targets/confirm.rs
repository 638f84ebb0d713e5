#![no_main]
//! `ferry::fuzzing::confirm` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::confirm(data));
