//! The bundled SA package's clips for the core benches (no Bevy).

use rigplay::animation::Clip;
use rigplay::formats::ifp::IfpFile;

/// The clip `name` of the bundled `assets/anims/sa_ped.ifp`, in the engine-neutral model.
pub fn sa_clip(name: &str) -> Clip {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/anims/sa_ped.ifp"
    ))
    .expect("the committed SA sample");
    IfpFile::read(&bytes)
        .expect("it reads")
        .file
        .clip(name)
        .expect("the samples have it")
        .to_clip()
}
