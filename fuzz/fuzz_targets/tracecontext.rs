#![no_main]
//! `ferry::fuzzing::tracecontext` under libFuzzer.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ferry::fuzzing::tracecontext(data));
