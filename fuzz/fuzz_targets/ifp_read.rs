//! Fuzzes the IFP reader, writer, converter and sampler; the checks are in ../oracles/ifp.rs.
#![no_main]

include!("../oracles/ifp.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_ifp(data));
