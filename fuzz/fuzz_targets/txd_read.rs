//! Fuzzes the TXD reader and every texture's decoding; the checks are in ../oracles/txd.rs.
#![no_main]

include!("../oracles/txd.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_txd(data));
