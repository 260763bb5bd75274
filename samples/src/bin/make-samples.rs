//! Writes rigplay's bundled sample animations into `assets/` (re-run after changing
//! `rigplay_samples`; a test checks the committed files match).
//!
//!     cargo run -p rigplay-samples --bin make-samples

fn main() -> std::io::Result<()> {
    // The repository's `assets/`, beside this package's folder.
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the package sits in the repository")
        .join("assets");
    for (path, bytes) in rigplay_samples::sample_files() {
        let path = assets.join(path);
        std::fs::create_dir_all(path.parent().expect("a file under assets/"))?;
        std::fs::write(&path, &bytes)?;
        println!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    Ok(())
}
