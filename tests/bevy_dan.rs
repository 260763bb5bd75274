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

/// A mocap walk imported as a `.dan` (`rigplay import walk.bvh -o walk.dan`, with the
/// `.dan.meta` it writes) plays in Bevy as a flat skeleton whose every bone is where the same
/// walk imported as an IFP clip puts the built-in ped's bone, for each game: the DAN's
/// model-space keys are the ped's bones' world transforms, their axes turned into Bevy's (within
/// 1e-4 m and 1e-3 rad; DAN times are whole milliseconds).
#[test]
fn a_walk_imported_as_dan_plays_where_the_same_walk_imported_as_ifp_does() {
    use rigplay::convert::import::{bvh_source, clip_to_gta, gta_dan, ifp_version};
    use rigplay::coords::GTA_TO_BEVY;
    use rigplay::formats::bvh::BvhFile;
    use rigplay::formats::ifp::IfpFile;
    use rigplay::skeleton::GtaGame;
    let bvh = BvhFile::read(crate::bvh_fixtures::mocap_walk(37).as_bytes())
        .unwrap()
        .file;
    let source = bvh_source(&bvh);
    let clip = bvh.to_clip("mocap_walk");
    for game in [GtaGame::Sa, GtaGame::Vc, GtaGame::Iii] {
        let (ifp_clip, _) = clip_to_gta(&source, &clip, "walk", game, &[]).unwrap();
        let dan = gta_dan(&ifp_clip, game).unwrap();
        // The clip's float keys as they are (no int16 packing), so that the two files hold the
        // same numbers.
        let package = IfpFile::new(ifp_version(game), "walk", vec![ifp_clip]);
        let meta = dan.meta();
        let mut app = app(
            &[
                ("walk.dan", dan.file.write().unwrap()),
                ("walk.ifp", package.write().unwrap()),
            ],
            &[("walk.dan", meta.as_str())],
            1.0 / 60.0,
        );
        let asset: Handle<Dan> = load(&mut app, "walk.dan");
        let dan_clip: Handle<RigClip> = load(&mut app, "walk.dan#Clip0");
        let ifp_clip: Handle<RigClip> = load(&mut app, "walk.ifp#walk");
        let skeleton = {
            let d = app.world().resource::<Assets<Dan>>().get(&asset).unwrap();
            assert!(d.warnings.is_empty(), "{:?}", d.warnings);
            assert_eq!(d.bone_names, dan.names, "{game:?}: named by the .meta");
            assert_eq!(d.settings.scale, 1.0);
            d.skeleton()
        };
        let mut paused = Playback::looping();
        paused.paused = true;
        let flat = app
            .world_mut()
            .spawn((skeleton, SkeletalClip::new(dan_clip), paused.clone()))
            .id();
        let ped = app
            .world_mut()
            .spawn((GtaSkeleton(game), SkeletalClip::new(ifp_clip), paused))
            .id();
        for _ in 0..3 {
            app.update();
        }
        let (mut far, mut turned, mut compared) = (0.0f32, 0.0f32, 0);
        for t in [0.0, 0.25, 0.5, 0.8, 1.1] {
            for e in [flat, ped] {
                app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
            }
            app.update();
            let world = app.world();
            let bones = |e: Entity| world.get::<SkeletonBones>(e).unwrap().0.clone();
            let (a, b) = (bones(flat), bones(ped));
            assert_eq!(a.len(), b.len(), "{game:?}");
            for (x, y) in a.iter().zip(&b) {
                let (x, y) = (
                    world
                        .get::<GlobalTransform>(*x)
                        .unwrap()
                        .compute_transform(),
                    world
                        .get::<GlobalTransform>(*y)
                        .unwrap()
                        .compute_transform(),
                );
                far = far.max(x.translation.distance(y.translation));
                // The ped's bones keep GTA's own axes under its basis (world rotation B·q); the
                // DAN's turn their axes too (B·q·B⁻¹), as every GTA transform turned into Bevy's
                // axes does.
                let want = y.rotation * GTA_TO_BEVY.conjugate();
                // The angle from the difference's vector part (acos of a dot product loses
                // f32's precision near 0).
                let d = x.rotation.conjugate() * want;
                turned = turned.max(2.0 * d.xyz().length().atan2(d.w.abs()));
                compared += 1;
            }
        }
        eprintln!("{game:?}: {compared} bones, worst {far:e} m, {turned:e} rad");
        assert!(compared >= 5 * 16, "{game:?}: {compared}");
        assert!(far < 1e-4, "{game:?}: {far} m");
        assert!(turned < 1e-3, "{game:?}: {turned} rad");
    }
}
