//! The committed sample files under `assets/anims/` (written by the `rigplay-samples` package's
//! `make-samples`; its tests check that they match the generator).

/// The sample files in the generator's order: the SA package (ANP3), the VC package (ANPK), the
/// `.dan` and the AnimeEffects projects.
const SAMPLES: [&str; 6] = [
    "anims/sa_ped.ifp",
    "anims/vc_ped.ifp",
    "anims/lamp.dan",
    "anims/anie/character.anie",
    "anims/anie/mesh_ffd.anie",
    "anims/anie/blend_sheet.anie",
];

/// A file under `assets/`.
pub fn read(path: &str) -> Vec<u8> {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(path);
    std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Every sample file: (path under `assets/`, bytes).
#[cfg_attr(
    not(all(feature = "gizmos", feature = "dff", feature = "anie")),
    allow(dead_code)
)]
pub fn sample_files() -> Vec<(&'static str, Vec<u8>)> {
    SAMPLES.iter().map(|&path| (path, read(path))).collect()
}
