//! The DAN plugin in a headless Bevy app: the asset and its labelled clip, flat skeletons,
//! Playback and Bevy's AnimationPlayer against the core sampler, settings from `.meta`, bad files.

use crate::bevy_ifp::{app, bone, load, load_error};
use bevy::prelude::*;
use rigplay::animation::WrapMode;
use rigplay::plugin::*;

pub(crate) fn lamp() -> Vec<u8> {
    crate::assets::sample_files()
        .into_iter()
        .find(|(p, _)| p.ends_with(".dan"))
        .expect("a sample .dan")
        .1
}

const LAMP_META: &str = include_str!("../assets/anims/lamp.dan.meta");

fn same_rotation(a: Quat, b: Quat, eps: f32) -> bool {
    (Vec4::from(a) - Vec4::from(b)).abs().max_element() < eps
        || (Vec4::from(a) + Vec4::from(b)).abs().max_element() < eps
}

#[test]
fn a_dan_loads_with_its_meta_settings_and_playback_poses_a_flat_skeleton() {
    let mut app = app(
        &[("lamp.dan", lamp())],
        &[("lamp.dan", LAMP_META)],
        1.0 / 60.0,
    );
    let dan: Handle<Dan> = load(&mut app, "lamp.dan");
    let clip_handle: Handle<RigClip> = load(
        &mut app,
        &DanAssetLabel::Clip.from_asset("lamp.dan").to_string(),
    );
    let (skeleton, clip) = {
        let d = app.world().resource::<Assets<Dan>>().get(&dan).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(d.bone_names, ["Base", "Arm1", "Arm2", "Head", "Bulb"]);
        assert_eq!(d.settings.scale, 0.01);
        assert_eq!(d.handle, clip_handle);
        (d.skeleton(), d.clip.clone())
    };
    // 60 frames at 33 ms: the range ends at 59 × 33 = 1947 ms.
    assert!((clip.duration() - 1.947).abs() < 1e-6);
    // The same clip as Bevy's `AnimationClip`, labelled `Animation0`, is the one the
    // `RigClip` and the `Dan` asset point to.
    let animation: Handle<AnimationClip> = load(
        &mut app,
        &DanAssetLabel::Animation.from_asset("lamp.dan").to_string(),
    );
    let rig_clip = app.world().resource::<Assets<RigClip>>().get(&clip_handle);
    assert_eq!(rig_clip.unwrap().animation, animation);
    assert_eq!(
        app.world()
            .resource::<Assets<Dan>>()
            .get(&dan)
            .unwrap()
            .animation,
        animation
    );
    let bevy_clip = app
        .world()
        .resource::<Assets<AnimationClip>>()
        .get(&animation)
        .unwrap()
        .duration();
    assert!((bevy_clip - 1.947).abs() < 1e-6);

    let character = app
        .world_mut()
        .spawn((
            skeleton,
            SkeletalClip::new(clip_handle.clone()),
            Playback::looping(),
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let bones = app.world().get::<SkeletonBones>(character).unwrap().0.len();
    assert_eq!(bones, 5);
    for t in [0.0, 0.4, 1.0, 1.9] {
        let mut p = app.world_mut().get_mut::<Playback>(character).unwrap();
        p.paused = true;
        p.seek(t);
        app.update();
        for (track, name) in ["Base", "Arm1", "Arm2", "Head", "Bulb"].iter().enumerate() {
            let want = clip.sample_track(track, clip.wrap_time(t, WrapMode::Loop));
            let got = *bone(&mut app, name).2;
            assert!(
                same_rotation(got.rotation, want.rotation.unwrap(), 1e-6),
                "{name} at {t}"
            );
            assert!(got.translation.abs_diff_eq(want.translation.unwrap(), 1e-6));
            assert!(got.scale.abs_diff_eq(want.scale.unwrap(), 1e-6));
        }
    }
    // Model-space keys, scaled to metres: the bulb sits about half a metre up (segments of
    // 30 cm, the first starting 5 cm up, bent), never below the base.
    let bulb = bone(&mut app, "Bulb").1.translation();
    assert!(bulb.y > 0.2 && bulb.y < 0.75, "{bulb}");
}

#[test]
fn the_animation_player_path_gives_the_same_poses() {
    let mut app = app(
        &[("lamp.dan", lamp())],
        &[("lamp.dan", LAMP_META)],
        1.0 / 60.0,
    );
    let dan: Handle<Dan> = load(&mut app, "lamp.dan");
    let (skeleton, clip, handle) = {
        let d = app.world().resource::<Assets<Dan>>().get(&dan).unwrap();
        (d.skeleton(), d.clip.clone(), d.handle.clone())
    };
    let character = app
        .world_mut()
        .spawn((skeleton, PlayAnimation::looping(handle)))
        .id();
    for _ in 0..3 {
        app.update();
    }
    for t in [0.25, 1.3] {
        let node = app.world().get::<PlayingNode>(character).unwrap().0;
        let mut player = app
            .world_mut()
            .get_mut::<AnimationPlayer>(character)
            .unwrap();
        player.animation_mut(node).unwrap().pause().set_seek_time(t);
        app.update();
        for (track, name) in ["Arm2", "Bulb"]
            .iter()
            .enumerate()
            .map(|(i, n)| (i * 2 + 2, n))
        {
            let want = clip.sample_track(track, t);
            let got = *bone(&mut app, name).2;
            assert!(
                same_rotation(got.rotation, want.rotation.unwrap(), 1e-5),
                "{name} at {t}: {} vs {}",
                got.rotation,
                want.rotation.unwrap()
            );
            assert!(got.translation.abs_diff_eq(want.translation.unwrap(), 1e-5));
        }
    }
}

#[test]
fn without_meta_bones_are_numbered_and_a_broken_file_fails_without_stopping_the_app() {
    let mut broken = lamp();
    broken.truncate(100);
    let mut app = app(
        &[("lamp.dan", lamp()), ("broken.dan", broken)],
        &[],
        1.0 / 60.0,
    );
    let dan: Handle<Dan> = load(&mut app, "lamp.dan");
    {
        let d = app.world().resource::<Assets<Dan>>().get(&dan).unwrap();
        assert_eq!(d.bone_names[0], "bone_0");
        assert_eq!(d.skeleton(), FlatSkeleton::numbered(5));
        // Centimetres kept (scale 1): the base is 5 cm up in the file, the bulb far above.
        assert!(d.clip.duration() > 1.9);
    }
    let message = load_error::<Dan>(&mut app, "broken.dan");
    assert!(message.contains("byte"), "{message}");
    // The app goes on.
    for _ in 0..3 {
        app.update();
    }
}

/// `PlaybackPlugin` may be added by hand before or after the format plugins (which add it too):
/// its systems run once a frame (a playback advances by one frame's time, not two).
#[test]
fn the_playback_plugin_can_be_added_in_any_order_and_runs_once() {
    use bevy::animation::AnimationPlugin;
    use bevy::asset::AssetPlugin;
    use bevy::asset::io::memory::{Dir, MemoryAssetReader};
    use bevy::asset::io::{AssetSourceBuilder, AssetSourceId};
    use bevy::time::TimeUpdateStrategy;
    for order in 0..2 {
        let dir = Dir::default();
        dir.insert_asset(std::path::Path::new("lamp.dan"), lamp());
        let reader = MemoryAssetReader { root: dir };
        crate::task_pools();
        let mut app = App::new();
        app.register_asset_source(
            AssetSourceId::Default,
            AssetSourceBuilder::new(move || Box::new(reader.clone())),
        );
        app.add_plugins((MinimalPlugins, AssetPlugin::default(), AnimationPlugin));
        if order == 0 {
            app.add_plugins((PlaybackPlugin, IfpPlugin, DanPlugin));
        } else {
            app.add_plugins((DanPlugin, IfpPlugin, PlaybackPlugin));
        }
        app.insert_resource(TimeUpdateStrategy::ManualDuration(
            std::time::Duration::from_secs_f32(0.1),
        ));
        app.finish();
        app.cleanup();
        let dan: Handle<Dan> = load(&mut app, "lamp.dan");
        let (skeleton, handle) = {
            let d = app.world().resource::<Assets<Dan>>().get(&dan).unwrap();
            (d.skeleton(), d.handle.clone())
        };
        let character = app
            .world_mut()
            .spawn((skeleton, SkeletalClip::new(handle), Playback::looping()))
            .id();
        for _ in 0..3 {
            app.update();
        }
        let before = app.world().get::<Playback>(character).unwrap().time;
        app.update();
        let after = app.world().get::<Playback>(character).unwrap().time;
        assert!(
            (after - before - 0.1).abs() < 1e-5,
            "order {order}: {before} → {after}"
        );
    }
}
