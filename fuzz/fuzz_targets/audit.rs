#![no_main]
//! `ferry::fuzzing::audit` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::audit(data));
