//! The sample generator's tests: one binary, one module per area.

mod anie_samples;
mod ped_samples;
mod samples;

use rigplay::formats::anie::{AnieFile, AnieRead};

/// A reference project of `tests/fixtures/anie/` (the `rigplay` package's fixtures).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/anie")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn read_ok(bytes: &[u8]) -> AnieRead {
    AnieFile::read(bytes).unwrap_or_else(|e| panic!("fixture must read: {e}"))
}
