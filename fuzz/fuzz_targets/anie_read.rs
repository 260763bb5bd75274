//! Fuzzes the `.anie` reader and writer; the checks are in ../oracles/anie.rs.
#![no_main]

include!("../oracles/anie.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_anie(data));
