#![no_main]
//! `ferry::fuzzing::header_value` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::header_value(data));
