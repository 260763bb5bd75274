//! `rigplay txd FILE.txd -o DIR/`: every texture of a dictionary as a PNG (its first level,
//! decoded to RGBA8), named after the texture.

use crate::load::bytes;
use crate::{Args, Failure, usage};
use rigplay::formats::txd::TxdFile;
use std::path::Path;

/// A texture name as a file name: path separators and other unsafe characters replaced.
fn file_name(name: &str, index: usize) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.trim_matches('.').is_empty() {
        format!("texture_{index}")
    } else {
        clean
    }
}

pub(crate) fn txd(a: Args) -> Result<(), Failure> {
    let [path] = a.positional.as_slice() else {
        return Err(usage("txd takes one FILE.txd"));
    };
    let dir = a.value("-o").ok_or_else(|| usage("txd needs -o DIR"))?;
    let read = TxdFile::read(&bytes(path)?).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
    std::fs::create_dir_all(dir).map_err(|e| Failure(format!("{dir}: {e}"), 1))?;
    let mut failed = 0;
    let mut used = std::collections::HashSet::new();
    for (i, t) in read.file.textures.iter().enumerate() {
        let mut name = file_name(&t.name, i);
        if !used.insert(name.to_lowercase()) {
            name = format!("{name}_{i}");
            used.insert(name.to_lowercase());
        }
        let out = Path::new(dir).join(format!("{name}.png"));
        let written = t
            .decode(0)
            .map_err(|e| e.to_string())
            .and_then(|img| {
                image::RgbaImage::from_raw(img.width, img.height, img.pixels)
                    .ok_or_else(|| "decoded size does not match".to_string())
            })
            .and_then(|img| img.save(&out).map_err(|e| e.to_string()));
        match written {
            Ok(()) => out!("{} ({}×{})", out.display(), t.width, t.height),
            Err(e) => {
                failed += 1;
                out!("error {:?}: {e}", t.name);
            }
        }
    }
    if failed > 0 {
        return Err(Failure(
            format!("{failed} of {} textures failed", read.file.textures.len()),
            1,
        ));
    }
    Ok(())
}
