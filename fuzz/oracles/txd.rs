// The TXD fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/txd_read.rs) and the
// regression tests (tests/txd_read.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a dictionary and never panics; every level of
// every texture decodes to an RGBA8 image of its level size, or gives a typed error of its own.

pub fn check_txd(data: &[u8]) {
    use rigplay::formats::txd::TxdFile;

    let Ok(read) = TxdFile::read(data) else { return };
    for w in &read.warnings {
        let _ = w.to_string();
    }
    for t in &read.file.textures {
        let _ = t.pixel_format();
        for (level, image) in t.decode_all().into_iter().enumerate() {
            match image {
                Ok(img) => {
                    assert_eq!((img.width, img.height), t.level_size(level));
                    assert_eq!(img.pixels.len(), img.width as usize * img.height as usize * 4);
                }
                Err(e) => {
                    let _ = e.to_string();
                }
            }
        }
    }
}
