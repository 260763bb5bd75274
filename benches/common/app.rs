//! What the headless Bevy benches share: an app reading from memory, and the SA walk loaded
//! before the clock starts.

use bevy::app::{TaskPoolOptions, TaskPoolPlugin};
use bevy::asset::io::memory::{Dir, MemoryAssetReader};
use bevy::asset::io::{AssetSourceBuilder, AssetSourceId};
use bevy::asset::{AssetPlugin, LoadState};
use bevy::prelude::*;
use rigplay::plugin::RigClip;
use std::path::Path;

/// An app with `MinimalPlugins` on `threads` threads and an `AssetPlugin` whose files are
/// `files` (asset path, bytes), held in memory.
pub fn memory_app<'a>(files: impl IntoIterator<Item = (&'a str, Vec<u8>)>, threads: usize) -> App {
    let dir = Dir::default();
    for (path, bytes) in files {
        dir.insert_asset(Path::new(path), bytes);
    }
    let reader = MemoryAssetReader { root: dir };
    let mut app = App::new();
    app.register_asset_source(
        AssetSourceId::Default,
        AssetSourceBuilder::new(move || Box::new(reader.clone())),
    );
    app.add_plugins((
        MinimalPlugins.set(TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(threads),
        }),
        AssetPlugin::default(),
    ));
    app
}

/// Loads the bundled SA walk (`anims/sa_ped.ifp#walk`) and runs frames until it is loaded.
pub fn load_walk(app: &mut App) -> Handle<RigClip> {
    let walk: Handle<RigClip> = app
        .world()
        .resource::<AssetServer>()
        .load("anims/sa_ped.ifp#walk");
    while !matches!(
        app.world().resource::<AssetServer>().load_state(walk.id()),
        LoadState::Loaded
    ) {
        app.update();
    }
    walk
}

/// Loads a clip of the bundled SA package (`anims/sa_ped.ifp#NAME`) and runs frames until it
/// is loaded.
#[allow(dead_code)]
pub fn load_sa_clip(app: &mut App, name: &str) -> Handle<RigClip> {
    let clip: Handle<RigClip> = app
        .world()
        .resource::<AssetServer>()
        .load(format!("anims/sa_ped.ifp#{name}"));
    while !matches!(
        app.world().resource::<AssetServer>().load_state(clip.id()),
        LoadState::Loaded
    ) {
        app.update();
    }
    clip
}
