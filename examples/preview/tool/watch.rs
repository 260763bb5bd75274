//! Hot reload for files opened anywhere on disk: the preview's asset root is `/`, which Bevy's
//! file watcher would watch whole, so the preview looks at the files it has open (and the
//! `.meta` and `.txd` files beside them) instead: their size and modification time, a few
//! times a second ([`HotReload`], [`reload_changed_files`]). A change reloads the asset, as
//! `F5` does.

use bevy::prelude::*;
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

/// The asset settings of a tool that opens files anywhere on disk: the asset root at `/` (an
/// asset path is the absolute path without its leading `/`), any path allowed, and no Bevy file
/// watcher, which would watch all of `/` (the tool watches its open files: [`HotReload`]).
pub fn files_anywhere() -> bevy::asset::AssetPlugin {
    bevy::asset::AssetPlugin {
        file_path: "/".into(),
        unapproved_path_mode: bevy::asset::UnapprovedPathMode::Allow,
        watch_for_changes_override: Some(false),
        ..default()
    }
}

/// A headless app reading files anywhere ([`files_anywhere`]) with rigplay's IFP plugin (its
/// `.ifp` and motion loaders), `before` run on it first (to register asset sources, which go
/// before the asset plugin).
#[cfg(test)]
pub(crate) fn headless_app(before: impl FnOnce(&mut App)) -> App {
    let mut app = App::new();
    before(&mut app);
    app.add_plugins((
        MinimalPlugins,
        files_anywhere(),
        bevy::animation::AnimationPlugin,
        rigplay::plugin::IfpPlugin,
    ));
    app
}

/// An open file, and the asset path it was loaded from.
#[derive(Debug, Clone)]
pub struct OpenAsset {
    /// The file on disk.
    pub file: PathBuf,
    /// The asset path that reads it: through an asset root of `/`, the absolute path without
    /// its leading `/`, with the asset source, if any, in front (`motion-vc://home/…`).
    pub asset_path: String,
}

impl OpenAsset {
    /// A file loaded from the default source, rooted at `/`.
    pub fn at(file: &Path) -> Self {
        Self {
            file: file.to_path_buf(),
            asset_path: rooted_asset_path(file),
        }
    }
}

/// The asset path of the absolute path `file` through an asset root of `/` ([`files_anywhere`]):
/// the path without its leading `/`.
pub fn rooted_asset_path(file: &Path) -> String {
    file.to_string_lossy().trim_start_matches('/').to_owned()
}

/// The files to keep up to date, for [`reload_changed_files`].
#[derive(Resource, Debug)]
pub struct HotReload {
    /// The open files.
    pub files: Vec<OpenAsset>,
    /// Seconds of real time between two looks.
    pub interval: f32,
    next: f32,
    stamps: Stamps,
}

impl Default for HotReload {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            interval: 0.25,
            next: 0.0,
            stamps: Stamps::default(),
        }
    }
}

/// Every [`HotReload::interval`] of real time, reloads each file of [`HotReload::files`] that
/// changed on disk (or whose `.meta`, or for a model `.txd`, did).
pub fn reload_changed_files(
    time: Res<Time<Real>>,
    mut hot: ResMut<HotReload>,
    assets: Res<AssetServer>,
) {
    let now = time.elapsed_secs();
    if now < hot.next {
        return;
    }
    hot.next = now + hot.interval;
    let HotReload { files, stamps, .. } = &mut *hot;
    for path in stamps.changed(files.iter().map(|f| f.file.as_path())) {
        info!("{} changed on disk: reading it again", path.display());
        // Every asset read from the file (a motion file may be open on two peds' sources).
        for open in files.iter().filter(|f| f.file == path) {
            assets.reload(open.asset_path.clone());
        }
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

    /// The preview's hot reload in a headless app with its asset root at `/`: a package
    /// rewritten with another game's clips, broken (the last good version stays), and given a
    /// `.meta`, each picked up without a reload asked for in code.
    #[test]
    fn changed_files_reload_through_the_asset_server() {
        use bevy::asset::LoadState;
        use rigplay::plugin::Ifp;
        use rigplay::skeleton::GtaGame;
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/anims");
        let sa = std::fs::read(assets.join("sa_ped.ifp")).unwrap();
        let vc = std::fs::read(assets.join("vc_ped.ifp")).unwrap();
        let dir = std::env::temp_dir().join(format!("rigplay-hot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ped.ifp");
        std::fs::write(&file, &sa).unwrap();

        let mut app = headless_app(|_| {});
        app.insert_resource(HotReload {
            files: vec![OpenAsset::at(&file)],
            interval: 0.05,
            ..default()
        })
        .add_systems(Update, reload_changed_files);
        app.finish();
        app.cleanup();
        let asset_path = rooted_asset_path(&file);
        let handle: Handle<Ifp> = app.world().resource::<AssetServer>().load(asset_path);
        let game = |app: &App| {
            app.world()
                .resource::<Assets<Ifp>>()
                .get(&handle)
                .map(|ifp| ifp.game)
        };
        let until = |app: &mut App, what: &str, done: &dyn Fn(&App) -> bool| {
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(10) {
                app.update();
                if done(app) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            panic!("{what}: not within 10 s");
        };
        until(&mut app, "first load", &|app| {
            game(app) == Some(GtaGame::Sa)
        });

        // Rewritten with Vice City's clips (an ANPK package: bound to VC).
        std::fs::write(&file, &vc).unwrap();
        until(&mut app, "rewritten", &|app| game(app) == Some(GtaGame::Vc));

        // Broken: the load fails and the VC package stays.
        std::fs::write(&file, &vc[..vc.len() / 3]).unwrap();
        until(&mut app, "broken", &|app| {
            matches!(
                app.world()
                    .resource::<AssetServer>()
                    .load_state(handle.id()),
                LoadState::Failed(_)
            )
        });
        assert_eq!(game(&app), Some(GtaGame::Vc));

        // Whole again, with a `.meta` binding the clips to GTA III's skeleton.
        std::fs::write(
            dir.join("ped.ifp.meta"),
            r#"(meta_format_version: "1.0", asset: Load(loader: "rigplay::plugin::IfpLoader", settings: (skeleton: Some(Iii))))"#,
        )
        .unwrap();
        std::fs::write(&file, &vc).unwrap();
        until(&mut app, "meta", &|app| game(app) == Some(GtaGame::Iii));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
