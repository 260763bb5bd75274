//! Fuzzes the glTF reader and the import onto a GTA ped; the checks are in ../oracles/gltf.rs.
#![no_main]

include!("../oracles/gltf.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_gltf(data));
