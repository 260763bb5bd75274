//! Fuzzes the DFF reader and bind-pose skinning; the checks are in ../oracles/dff.rs.
#![no_main]

include!("../oracles/dff.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_dff(data));
