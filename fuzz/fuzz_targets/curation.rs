#![no_main]
//! `ferry::fuzzing::curation` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::curation(data));
