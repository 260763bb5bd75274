//! Writes rigplay's bundled sample animations into `assets/` (re-run after changing
//! `rigplay::samples`; a test checks the committed files match).
//!
//!     cargo run --example make_samples

fn main() -> std::io::Result<()> {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    for (path, bytes) in rigplay::samples::sample_files() {
        let path = assets.join(path);
        std::fs::create_dir_all(path.parent().expect("a file under assets/"))?;
        std::fs::write(&path, &bytes)?;
        println!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    Ok(())
}
