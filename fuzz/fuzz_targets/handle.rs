#![no_main]
//! `ferry::fuzzing::handle` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::handle(data));
