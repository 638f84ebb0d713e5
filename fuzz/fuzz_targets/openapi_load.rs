#![no_main]
//! `ferry::fuzzing::openapi_load` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::openapi_load(data));
