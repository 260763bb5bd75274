//! Fuzzes the DAN reader, writer and clip conversion; the checks are in ../oracles/dan.rs.
#![no_main]

include!("../oracles/dan.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_dan(data));
