//! Fuzzes the BVH reader and the import onto a GTA ped; the checks are in ../oracles/bvh.rs.
#![no_main]

include!("../oracles/bvh.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_bvh(data));
