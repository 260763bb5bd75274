//! Hot reload for files opened anywhere on disk: the preview's asset root is `/`, which Bevy's
//! file watcher would watch whole, so the preview looks at the files it has open (and the
//! `.meta` and `.txd` files beside them) instead: their size and modification time, a few
//! times a second. A change reloads the asset, as `F5` does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a file looked like when last seen: `None` while it does not exist.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The files a watched asset depends on: itself, its `.meta`, and for a `.dff` the `.txd` of
/// the same name beside it.
pub fn watched_paths(asset: &Path) -> Vec<PathBuf> {
    let mut meta = asset.as_os_str().to_owned();
    meta.push(".meta");
    let mut paths = vec![asset.to_path_buf(), PathBuf::from(meta)];
    if asset
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dff"))
    {
        paths.push(asset.with_extension("txd"));
    }
    paths
}

/// The stamps of the files behind the open assets.
#[derive(Default, Debug)]
pub struct Stamps {
    seen: HashMap<PathBuf, Stamp>,
}

impl Stamps {
    /// The assets (of `assets`) one of whose files changed, appeared or vanished since the
    /// last call; an asset seen for the first time is only recorded. Assets no longer listed
    /// are forgotten.
    pub fn changed<'a>(&mut self, assets: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
        let mut changed = Vec::new();
        let mut seen = HashMap::new();
        for asset in assets {
            let mut asset_changed = false;
            for path in watched_paths(asset) {
                let now = stamp(&path);
                if let Some(before) = self.seen.get(&path) {
                    asset_changed |= *before != now;
                }
                seen.insert(path, now);
            }
            if asset_changed && !changed.iter().any(|c: &PathBuf| c == asset) {
                changed.push(asset.to_path_buf());
            }
        }
        self.seen = seen;
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_a_file_its_meta_or_a_models_dictionary_is_seen_once() {
        let dir = std::env::temp_dir().join(format!("rigplay-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ifp = dir.join("ped.ifp");
        let dff = dir.join("ped.dff");
        std::fs::write(&ifp, b"one").unwrap();
        std::fs::write(&dff, b"model").unwrap();
        let open = [ifp.as_path(), dff.as_path()];
        let mut stamps = Stamps::default();
        // First sight: recorded, nothing changed.
        assert!(stamps.changed(open).is_empty());
        assert!(stamps.changed(open).is_empty());
        // Rewritten with other bytes (the size differs even where the clock is coarse).
        std::fs::write(&ifp, b"two, longer").unwrap();
        assert_eq!(stamps.changed(open), std::slice::from_ref(&ifp));
        assert!(stamps.changed(open).is_empty());
        // A `.meta` appears beside the package.
        std::fs::write(dir.join("ped.ifp.meta"), b"(meta)").unwrap();
        assert_eq!(stamps.changed(open), std::slice::from_ref(&ifp));
        // The model's dictionary appears, then the model is deleted.
        std::fs::write(dir.join("ped.txd"), b"textures").unwrap();
        assert_eq!(stamps.changed(open), std::slice::from_ref(&dff));
        std::fs::remove_file(&dff).unwrap();
        assert_eq!(stamps.changed(open), std::slice::from_ref(&dff));
        // A file no longer open is forgotten: opened again, it is first seen again.
        assert!(stamps.changed([ifp.as_path()]).is_empty());
        std::fs::write(&dff, b"model again").unwrap();
        assert!(stamps.changed(open).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
