//! Motion files (`.bvh`, `.vrma`, a glTF's animations) retargeted onto the ped of the model
//! open, whichever was opened first, and kept on that ped through `F5` and hot reload.
//!
//! rigplay's [`MotionLoader`](rigplay::plugin::MotionLoader) retargets as it loads, onto the ped
//! its settings name. Bevy keeps one asset per asset path: a second load of the same path with
//! other settings returns the first asset, and a reload reads the settings again from the
//! `.meta` file alone (settings given in code are lost). So the preview reads motion through one
//! asset source per game ([`source_of`]: `motion-sa://`, `motion-vc://`, `motion-iii://`), each
//! the file system under the preview's root, whose `.meta` for a file names that game's ped
//! ([`GameMetaReader`]): the file's own `.meta` with its `skeleton` filled in where it names
//! none, or one made for it. A model of another game opened later loads the motion again from
//! that game's source, and a reload reads the same `.meta` as the first load did.

use bevy::asset::AssetPath;
use bevy::asset::io::{
    AssetReader, AssetReaderError, AssetSource, AssetSourceBuilder, ErasedAssetReader, PathStream,
    Reader, VecReader,
};
use bevy::asset::meta::{AssetAction, AssetMeta};
use bevy::prelude::*;
use rigplay::plugin::{ClipLayers, MotionLoader, MotionLoaderSettings, RigClip};
use rigplay::skeleton::GtaGame;
use std::path::Path;

/// The games, each with the asset source its motion loads from.
const SOURCES: [(GtaGame, &str); 3] = [
    (GtaGame::Sa, "motion-sa"),
    (GtaGame::Vc, "motion-vc"),
    (GtaGame::Iii, "motion-iii"),
];

/// The asset source whose motion is retargeted onto `game`'s ped.
pub fn source_of(game: GtaGame) -> &'static str {
    SOURCES
        .iter()
        .find(|(g, _)| *g == game)
        .map_or(SOURCES[0].1, |(_, s)| s)
}

/// The asset path of the motion file at `path` (relative to the preview's asset root),
/// retargeted onto `game`'s ped.
pub fn motion_path(game: GtaGame, path: &str) -> String {
    format!("{}://{path}", source_of(game))
}

/// A clip of a motion file, moved onto the ped its file is now imported onto: the asset path of
/// the clip of the same label from the file's current source, where `clip` comes from a motion
/// source (`motion-*://`) and `open` (the asset paths of the open motion files) holds its file
/// under another source. `None`: not a motion clip, its file not open, or already there.
///
/// A model of another game, opened after a motion file, imports the file again from that game's
/// source. That makes another asset, and whatever held a clip of the old import (a layer, a held
/// blend) still holds it.
pub fn followed_motion_clip(
    clip: &Handle<RigClip>,
    assets: &AssetServer,
    open: &[AssetPath<'static>],
) -> Option<AssetPath<'static>> {
    let path = assets.get_path(clip.id())?;
    let from = path.source().as_str()?;
    if !SOURCES.iter().any(|(_, s)| *s == from) {
        return None;
    }
    let file = open.iter().find(|f| f.path() == path.path())?;
    let to = file.source().as_str()?;
    (to != from).then(|| path.clone_owned().with_source(to.to_owned()))
}

/// Layers that play motion clips, moved onto the ped their files are now imported onto
/// ([`followed_motion_clip`]). A layer keeps its id, playhead, weight, fades, flags and mask; a
/// clip of a file that is no longer open keeps its version. Returns how many layers changed.
pub fn follow_motion_files(
    layers: &mut ClipLayers,
    assets: &AssetServer,
    open: &[AssetPath<'static>],
) -> usize {
    let moved: Vec<(u32, AssetPath<'static>)> = (layers.layers().iter())
        .filter_map(|l| Some((l.id(), followed_motion_clip(&l.clip, assets, open)?)))
        .collect();
    for (id, path) in &moved {
        if let Some(layer) = layers.get_mut(*id) {
            layer.clip = assets.load(path.clone());
        }
    }
    moved.len()
}

/// Registers the three motion sources, each reading the file system under `root` (the
/// preview's asset root). Call it before `AssetPlugin` (Bevy's `DefaultPlugins`).
pub fn register_motion_sources(app: &mut App, root: &str) {
    for (game, id) in SOURCES {
        let mut files = AssetSource::get_default_reader(root.to_owned());
        app.register_asset_source(
            id,
            AssetSourceBuilder::new(move || {
                Box::new(GameMetaReader {
                    files: files(),
                    game,
                })
            }),
        );
    }
}

/// The `.meta` the motion at some path is loaded with on `game`'s source, from the file's own
/// `.meta` (`None`: it has none).
///
/// * No `.meta`: one naming the motion loader with `skeleton: Some(game)`.
/// * A `.meta` for the motion loader that names no skeleton (and reads without problems): the
///   same settings with `skeleton: Some(game)`.
/// * Any other `.meta` (one naming a skeleton, another loader, or one with problems the loader
///   should report): as it is.
pub fn game_meta(own: Option<&[u8]>, game: GtaGame) -> Vec<u8> {
    let settings = match own {
        None => Some(MotionLoaderSettings::default()),
        Some(bytes) => ron::de::from_bytes::<AssetMeta<MotionLoader, ()>>(bytes)
            .ok()
            .and_then(|meta| match meta.asset {
                AssetAction::Load { settings, .. }
                    if settings.skeleton.is_none() && settings.meta_problems.is_empty() =>
                {
                    Some(settings)
                }
                _ => None,
            }),
    };
    let Some(mut settings) = settings else {
        return own.unwrap_or_default().to_vec();
    };
    settings.skeleton = Some(game);
    let meta = AssetMeta::<MotionLoader, ()>::new(AssetAction::Load {
        loader: <MotionLoader as bevy::reflect::TypePath>::type_path().to_owned(),
        settings,
    });
    // Settings that serialised from a `.meta` serialise again.
    ron::ser::to_string(&meta)
        .map(String::into_bytes)
        .unwrap_or_else(|_| own.unwrap_or_default().to_vec())
}

/// A motion source's reader: the files as they are, and each file's `.meta` as [`game_meta`]
/// makes it for the source's game.
pub struct GameMetaReader {
    files: Box<dyn ErasedAssetReader>,
    game: GtaGame,
}

impl AssetReader for GameMetaReader {
    async fn read<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        self.files.read(path).await
    }

    async fn read_meta<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        let own = match self.files.read_meta_bytes(path).await {
            Ok(bytes) => Some(bytes),
            Err(AssetReaderError::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        Ok(VecReader::new(game_meta(own.as_deref(), self.game)))
    }

    async fn read_directory<'a>(
        &'a self,
        path: &'a Path,
    ) -> Result<Box<PathStream>, AssetReaderError> {
        self.files.read_directory(path).await
    }

    async fn is_directory<'a>(&'a self, path: &'a Path) -> Result<bool, AssetReaderError> {
        self.files.is_directory(path).await
    }
}

#[cfg(test)]
#[path = "../../../tests/bvh_fixtures.rs"]
#[allow(dead_code)]
mod bvh_fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    use super::bvh_fixtures;

    fn settings(meta: &[u8]) -> MotionLoaderSettings {
        match ron::de::from_bytes::<AssetMeta<MotionLoader, ()>>(meta)
            .unwrap()
            .asset
        {
            AssetAction::Load { settings, loader } => {
                assert_eq!(loader, "rigplay::plugin::MotionLoader");
                settings
            }
            _ => panic!("not a load"),
        }
    }

    /// A headless app reading motion through the three sources, rooted at `/`.
    fn motion_app() -> App {
        let mut app = crate::watch::headless_app(|app| register_motion_sources(app, "/"));
        app.finish();
        app.cleanup();
        app
    }

    /// Updates `app` until `done`, failing the test after 20 s.
    fn until(app: &mut App, what: &str, done: &dyn Fn(&App) -> bool) {
        use std::time::{Duration, Instant};
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            app.update();
            if done(app) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("{what}: not within 20 s");
    }

    #[test]
    fn a_motion_meta_names_the_sources_game_unless_the_file_names_one() {
        // No `.meta`: one is made for the game.
        assert_eq!(
            settings(&game_meta(None, GtaGame::Vc)).skeleton,
            Some(GtaGame::Vc)
        );
        // The file's own settings are kept, with the game filled in.
        let own =
            br#"(meta_format_version: "1.0", asset: Load(loader: "rigplay::plugin::MotionLoader",
            settings: (default_clip: (looping: false), bone_map: { "root_jnt": "Pelvis" })))"#;
        let made = settings(&game_meta(Some(own), GtaGame::Iii));
        assert_eq!(made.skeleton, Some(GtaGame::Iii));
        assert!(!made.default_clip.looping);
        assert_eq!(made.bone_map["root_jnt"], "Pelvis");
        // A `.meta` that names a ped keeps it.
        let named =
            br#"(meta_format_version: "1.0", asset: Load(loader: "rigplay::plugin::MotionLoader",
            settings: (skeleton: Some(Vc))))"#;
        assert_eq!(game_meta(Some(named), GtaGame::Sa), named.to_vec());
        // One with a problem the loader reports, or for another loader, is left as it is.
        let bad =
            br#"(meta_format_version: "1.0", asset: Load(loader: "rigplay::plugin::MotionLoader",
            settings: (skeleton: Some(Gta4))))"#;
        assert_eq!(game_meta(Some(bad), GtaGame::Sa), bad.to_vec());
        let other = b"(meta_format_version: \"1.0\", asset: Ignore)";
        assert_eq!(game_meta(Some(other), GtaGame::Sa), other.to_vec());
    }

    /// A motion file loaded through two games' sources is two assets, each retargeted onto its
    /// game's ped, and a reload (as `F5` and hot reload ask it) keeps each on its ped.
    #[test]
    fn motion_loads_onto_each_sources_game_and_a_reload_keeps_it() {
        use rigplay::plugin::Motion;
        let dir = std::env::temp_dir().join(format!("rigplay-motion-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("walk.bvh");
        std::fs::write(&file, bvh_fixtures::mocap_walk(31)).unwrap();
        let mut app = motion_app();
        let path = crate::watch::rooted_asset_path(&file);
        let load = |app: &App, game| {
            let server = app.world().resource::<AssetServer>();
            server.load::<Motion>(motion_path(game, &path))
        };
        let game_of = |app: &App, h: &Handle<Motion>| {
            let motions = app.world().resource::<Assets<Motion>>();
            motions.get(h).map(|m| m.ifp.game)
        };
        let sa = load(&app, GtaGame::Sa);
        until(&mut app, "onto SA", &|app| game_of(app, &sa).is_some());
        assert_eq!(game_of(&app, &sa), Some(GtaGame::Sa));
        // Opened again for a III model: another asset, onto III's ped.
        let iii = load(&app, GtaGame::Iii);
        assert_ne!(iii.id(), sa.id());
        until(&mut app, "onto III", &|app| game_of(app, &iii).is_some());
        assert_eq!(game_of(&app, &iii), Some(GtaGame::Iii));
        assert_eq!(game_of(&app, &sa), Some(GtaGame::Sa));
        // The file rewritten shorter, and reloaded (as `F5` and hot reload do): the reload
        // reads the source's `.meta` again, so the new version is on III's ped too.
        let keys = |app: &App| {
            let motions = app.world().resource::<Assets<Motion>>();
            let ifp = &motions.get(&iii).unwrap().ifp;
            ifp.file.blocks[0].clips[0].sequences[0].keys.len()
        };
        let before = keys(&app);
        std::fs::write(&file, bvh_fixtures::mocap_walk(16)).unwrap();
        app.world()
            .resource::<AssetServer>()
            .reload(motion_path(GtaGame::Iii, &path));
        until(&mut app, "reloaded", &|app| keys(app) != before);
        assert_eq!(game_of(&app, &iii), Some(GtaGame::Iii));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn layers_of_a_motion_clip_follow_their_file_onto_another_games_ped() {
        use rigplay::animation::layers::Layer;
        use rigplay::plugin::Motion;
        let dir =
            std::env::temp_dir().join(format!("rigplay-motion-layers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("walk.bvh");
        std::fs::write(&file, bvh_fixtures::mocap_walk(31)).unwrap();
        let mut app = motion_app();
        let path = crate::watch::rooted_asset_path(&file);
        let server = app.world().resource::<AssetServer>().clone();
        // The motion open on SA's ped, its clip in a layer (half weight, partial), beside a
        // layer of a plain package's clip.
        let sa: Handle<Motion> = server.load(motion_path(GtaGame::Sa, &path));
        let sa_clip: Handle<RigClip> =
            server.load(format!("{}#Clip0", motion_path(GtaGame::Sa, &path)));
        let ifp =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/anims/sa_ped.ifp");
        let plain: Handle<RigClip> = server.load(format!(
            "{}#walk",
            crate::watch::rooted_asset_path(&ifp.canonicalize().unwrap())
        ));
        until(&mut app, "the SA import", &|app| {
            app.world().resource::<Assets<Motion>>().get(&sa).is_some()
        });
        let mut layers = ClipLayers::default();
        let mut layer = Layer::new(sa_clip.clone());
        layer.set_weight(0.5).unwrap();
        layer.flags.partial = true;
        let moving = layers.push(layer);
        let kept = layers.push(Layer::new(plain.clone()));
        // Nothing to follow while the file is open on SA's ped.
        let open_sa = [server.get_path(sa.id()).unwrap().clone_owned()];
        assert_eq!(follow_motion_files(&mut layers, &server, &open_sa), 0);
        // A III model opened: the file is imported again from III's source.
        let iii: Handle<Motion> = server.load(motion_path(GtaGame::Iii, &path));
        let open_iii = [server.get_path(iii.id()).unwrap().clone_owned()];
        assert_eq!(follow_motion_files(&mut layers, &server, &open_iii), 1);
        let moved = &layers.layers()[0];
        assert_eq!(moved.id(), moving);
        assert_eq!(moved.weight(), 0.5);
        assert!(moved.flags.partial);
        let to = server.get_path(moved.clip.id()).unwrap();
        assert_eq!(
            to.to_string(),
            format!("{}#Clip0", motion_path(GtaGame::Iii, &path))
        );
        // The plain package's layer keeps its clip.
        assert_eq!(layers.layers()[1].id(), kept);
        assert_eq!(layers.layers()[1].clip, plain);
        // The new clip is the III import's: it loads, and following again changes nothing.
        let new_clip = moved.clip.clone();
        until(&mut app, "the III import", &|app| {
            app.world().resource::<Assets<Motion>>().get(&iii).is_some()
        });
        let motions = app.world().resource::<Assets<Motion>>();
        let iii_ifp = &motions.get(&iii).unwrap().ifp;
        assert_eq!(iii_ifp.game, GtaGame::Iii);
        assert_eq!(iii_ifp.clips[0].handle, new_clip);
        assert_eq!(follow_motion_files(&mut layers, &server, &open_iii), 0);
        // Back onto SA's ped (an SA model opened), then the file closed: a clip of a file no
        // longer open stays where it is.
        assert_eq!(follow_motion_files(&mut layers, &server, &open_sa), 1);
        assert_eq!(layers.layers()[0].clip, sa_clip);
        assert_eq!(follow_motion_files(&mut layers, &server, &[]), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
