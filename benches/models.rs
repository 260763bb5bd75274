//! A GTA model from its file to its first posed frame, headless and single-threaded: the bundled
//! ped's `.dff` and `.txd` read through the AssetServer (from memory), its meshes, materials,
//! textures (decoded from DXT1) and scene built, its hierarchy spawned by `GtaModel` and posed
//! by the SA walk; against the same app spawning the built-in skeleton with the same clip (the
//! frames' fixed cost, no file to read). The clip is loaded before the clock starts in both.

#[path = "common/app.rs"]
mod common;

use bevy::animation::AnimationPlugin;
use bevy::image::ImagePlugin;
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy::world_serialization::WorldSerializationPlugin;
use criterion::{Criterion, criterion_group, criterion_main};
use rigplay::plugin::{
    Dff, DffPlugin, GtaModel, GtaSkeleton, IfpPlugin, RigClip, SkeletalClip, SkeletonBones,
};
use std::path::Path;
use std::time::{Duration, Instant};

fn app() -> (App, Handle<RigClip>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let files = [
        "characters/ped.dff",
        "characters/ped.txd",
        "anims/sa_ped.ifp",
    ]
    .map(|path| (path, std::fs::read(root.join(path)).unwrap()));
    let mut app = common::memory_app(files, 1);
    app.add_plugins((
        TransformPlugin,
        AnimationPlugin,
        ImagePlugin::default(),
        MeshPlugin,
        WorldSerializationPlugin,
        IfpPlugin,
        DffPlugin,
    ));
    app.init_asset::<StandardMaterial>();
    app.finish();
    app.cleanup();
    let walk = common::load_walk(&mut app);
    (app, walk)
}

/// Frames from spawning to the first frame that shows the character posed.
fn first_frame(model: bool) -> Duration {
    let (mut app, walk) = app();
    let start = Instant::now();
    let character = if model {
        let ped: Handle<Dff> = app
            .world()
            .resource::<AssetServer>()
            .load("characters/ped.dff");
        app.world_mut()
            .spawn((GtaModel::new(ped), SkeletalClip::new(walk)))
            .id()
    } else {
        app.world_mut()
            .spawn((GtaSkeleton::SA, SkeletalClip::new(walk)))
            .id()
    };
    // Spawned once its bones are there; posed in the frame after.
    while app.world().get::<SkeletonBones>(character).is_none() {
        app.update();
    }
    app.update();
    start.elapsed()
}

fn load(c: &mut Criterion) {
    let mut g = c.benchmark_group("first posed frame");
    g.sample_size(20);
    for (name, model) in [
        ("built-in SA skeleton (no file)", false),
        ("sample ped .dff + .txd", true),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| first_frame(model)).sum())
        });
    }
}

criterion_group!(benches, load);
criterion_main!(benches);
