#![no_main]
//! `ferry::fuzzing::arazzo_runtime` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::arazzo_runtime(data));
