//! A headless app: `MinimalPlugins` + `AssetPlugin` + Bevy's `AnimationPlugin` + rigplay's
//! `IfpPlugin`, no window, renderer or UI. `.ci/run` runs it built alone, with rigplay's `bevy`
//! feature and nothing more (`cargo test -p rigplay-headless`), and checks with `cargo tree`
//! that this build compiles no window, rendering or UI crate; the README's `cargo test` runs it
//! too (with the workspace's features unified).
//!
//! The bundled SA walk (`assets/anims/sa_ped.ifp`) is loaded from disk and played on the
//! built-in SA ped at a fixed playhead; every bone the clip keys takes the rotation the pure
//! core samples from the same file at that time.

#![cfg(test)]

use bevy::animation::AnimationPlugin;
use bevy::asset::LoadState;
use bevy::prelude::*;
use rigplay::formats::ifp::IfpFile;
use rigplay::plugin::{GtaSkeleton, IfpPlugin, Playback, RigClip, SkeletalClip, SkeletonBones};

const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets");

#[test]
fn a_headless_app_plays_an_ifp_clip_on_a_gta_ped() {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: ASSETS.into(),
            ..default()
        },
        AnimationPlugin,
        IfpPlugin,
    ));
    app.finish();
    app.cleanup();
    let walk: Handle<RigClip> = app
        .world()
        .resource::<AssetServer>()
        .load("anims/sa_ped.ifp#walk");
    // The load runs on Bevy's IO threads: frames until it ends, a bounded wait.
    for _ in 0..2000 {
        let state = app.world().resource::<AssetServer>().load_state(walk.id());
        match state {
            LoadState::Loaded => break,
            LoadState::Failed(e) => panic!("the SA walk failed to load: {e}"),
            _ => {
                app.update();
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
    assert!(
        app.world().resource::<Assets<RigClip>>().contains(&walk),
        "the SA walk did not load in 2000 frames"
    );
    // Paused at 0.4 s, so that the frames' real durations do not move it.
    let at = 0.4;
    let mut playback = Playback::looping();
    playback.seek(at);
    playback.paused = true;
    let ped = app
        .world_mut()
        .spawn((GtaSkeleton::SA, SkeletalClip::new(walk), playback))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let bytes = std::fs::read(format!("{ASSETS}/anims/sa_ped.ifp")).unwrap();
    let clip = IfpFile::read(&bytes)
        .unwrap()
        .file
        .clip("walk")
        .unwrap()
        .to_clip();
    let bones = app.world().get::<SkeletonBones>(ped).unwrap().0.clone();
    let mut checked = 0;
    for bone in bones {
        let name = app.world().get::<Name>(bone).unwrap().as_str().trim();
        let Some(track) =
            (clip.tracks().iter()).position(|t| t.bone.name.trim().eq_ignore_ascii_case(name))
        else {
            continue;
        };
        let Some(want) = clip.sample_track(track, at).rotation else {
            continue;
        };
        let got = app.world().get::<Transform>(bone).unwrap().rotation;
        // The same rotation whatever the sign: |q1 · q2| = cos(half the angle between them).
        assert!(
            got.dot(want).abs() > 1.0 - 1e-6,
            "{name}: {got} vs the core's {want}"
        );
        checked += 1;
    }
    // The walk keys 22 bones, all of the SA ped's.
    assert_eq!(checked, 22);
}
