//! The IFP plugin in a headless Bevy app: loading through the AssetServer, skeletons, Bevy's
//! AnimationPlayer against the core sampler, retargeting, root motion, broken files.

use crate::bytes::Bytes;
use bevy::animation::AnimationPlugin;
use bevy::asset::io::memory::{Dir, MemoryAssetReader};
use bevy::asset::io::{AssetSourceBuilder, AssetSourceId};
use bevy::asset::{AssetPlugin, LoadState};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use rigplay::animation::WrapMode;
use rigplay::plugin::*;
use std::path::Path;
use std::time::Duration;

/// ANP3 "test" with clip "lift" (1 s): "Root" (id 0) goes from (0,0,0) to (0,1,0) m; " Pelvis"
/// (id 1) turns from identity to 90° about Z; "Tail" (id 99) matches no GTA bone.
pub fn lift_ifp() -> Vec<u8> {
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("test", 24, &[]).u32(1);
        b.fixed("lift", 24, &[])
            .u32(3)
            .u32(2 * 16 + 2 * 10 + 10)
            .u32(1);
        b.fixed("Root", 24, &[]).u32(4).u32(2).i32(0);
        b.i16s(&[0, 0, 0, 4096, 0, 0, 0, 0]);
        b.i16s(&[0, 0, 0, 4096, 60, 0, 1024, 0]);
        b.fixed(" Pelvis", 24, &[]).u32(3).u32(2).i32(1);
        b.i16s(&[0, 0, 0, 4096, 0]);
        b.i16s(&[0, 0, 2896, 2896, 60]);
        b.fixed("Tail", 24, &[]).u32(3).u32(1).i32(99);
        b.i16s(&[0, 0, 0, 4096, 0]);
    });
    b.done()
}

/// ANP3 "names" with four one-key clips named like the file's own labels would be: "Clip1"
/// (index 0), "Animation0" (index 1), then "walk" twice (indices 2 and 3). Clip `i`'s root sits
/// at x = i m, so that each can be told apart.
fn names_ifp() -> Vec<u8> {
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("names", 24, &[]).u32(4);
        for (i, name) in ["Clip1", "Animation0", "walk", "walk"].iter().enumerate() {
            // One sequence of one type-4 key (16 bytes): rotation ×4096, time ×60, position ×1024.
            b.fixed(name, 24, &[]).u32(1).u32(16).u32(1);
            b.fixed("Root", 24, &[]).u32(4).u32(1).i32(0);
            b.i16s(&[0, 0, 0, 4096, 0, 1024 * i as i16, 0, 0]);
        }
    });
    b.done()
}

#[test]
fn clip_names_that_look_like_labels_never_shadow_the_index_labels() {
    let mut app = app(&[("names.ifp", names_ifp())], &[], 1.0 / 30.0);
    let ifp: Handle<Ifp> = load(&mut app, "names.ifp");
    let by_index: Vec<Handle<RigClip>> = (0..4)
        .map(|i| load(&mut app, &format!("names.ifp#Clip{i}")))
        .collect();
    let walk: Handle<RigClip> = load(&mut app, "names.ifp#walk");
    let animations: Vec<Handle<AnimationClip>> = (0..4)
        .map(|i| load(&mut app, &format!("names.ifp#Animation{i}")))
        .collect();
    let world = app.world();
    let (files, clips) = (
        world.resource::<Assets<Ifp>>(),
        world.resource::<Assets<RigClip>>(),
    );
    let file = files.get(&ifp).unwrap();
    // `#Clip1` is the clip at index 1 (named "Animation0"), not the clip named "Clip1".
    let x = |h: &Handle<RigClip>| {
        let clip = clips.get(h).unwrap();
        let root = clip.clip.sample_track(0, 0.0).translation.unwrap();
        (clip.clip.name.clone(), root.x)
    };
    assert_eq!(x(&by_index[0]), ("Clip1".to_string(), 0.0));
    assert_eq!(x(&by_index[1]), ("Animation0".to_string(), 1.0));
    assert_eq!(x(&by_index[2]), ("walk".to_string(), 2.0));
    assert_eq!(x(&by_index[3]), ("walk".to_string(), 3.0));
    // The name label is the first clip of the name; names that are index labels ("Clip1",
    // "Animation0") get none, nor does the second "walk".
    assert_eq!(x(&walk), ("walk".to_string(), 2.0));
    let named: Vec<bool> = file
        .clips
        .iter()
        .map(|c| c.named_handle.is_some())
        .collect();
    assert_eq!(named, [false, false, true, false]);
    // `#Animation{i}` is Bevy's clip of index i, the one each RigClip points to.
    for (i, handle) in by_index.iter().enumerate() {
        assert_eq!(clips.get(handle).unwrap().animation, animations[i]);
        assert_eq!(file.clips[i].animation, animations[i]);
    }
}

pub fn app(files: &[(&str, Vec<u8>)], metas: &[(&str, &str)], step: f32) -> App {
    app_with(files, metas, step, ())
}

/// [`app`] with more plugins (added before the app is finished).
pub fn app_with<M>(
    files: &[(&str, Vec<u8>)],
    metas: &[(&str, &str)],
    step: f32,
    plugins: impl bevy::app::Plugins<M>,
) -> App {
    let dir = Dir::default();
    for (path, bytes) in files {
        dir.insert_asset(Path::new(path), bytes.clone());
    }
    for (path, text) in metas {
        dir.insert_meta_text(Path::new(path), text);
    }
    app_in(&dir, step, plugins)
}

/// A headless app whose asset source is `dir` (which a test may change while the app runs),
/// with the IFP and DAN plugins and `plugins`, stepping `step` seconds a frame.
pub fn app_in<M>(dir: &Dir, step: f32, plugins: impl bevy::app::Plugins<M>) -> App {
    crate::task_pools();
    let reader = MemoryAssetReader { root: dir.clone() };
    let mut app = App::new();
    app.register_asset_source(
        AssetSourceId::Default,
        AssetSourceBuilder::new(move || Box::new(reader.clone())),
    );
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        TransformPlugin,
        AnimationPlugin,
        IfpPlugin,
        DanPlugin,
    ));
    app.add_plugins(plugins);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        step,
    )));
    app.finish();
    app.cleanup();
    app
}

/// Starts loading `path` and runs frames until the load ends: the handle, or the error's
/// message. Loads run on the task pool's threads, which a busy machine (the other tests) may
/// reach late, so the wait is bounded by time (60 s), not by a count of frames.
pub fn try_load<A: Asset>(app: &mut App, path: &str) -> Result<Handle<A>, String> {
    let handle: Handle<A> = app.world().resource::<AssetServer>().load(path.to_owned());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        app.update();
        match app
            .world()
            .resource::<AssetServer>()
            .load_state(handle.id())
        {
            LoadState::Loaded => return Ok(handle),
            LoadState::Failed(e) => return Err(e.to_string()),
            _ => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    panic!("{path} neither loaded nor failed in 60 s");
}

pub fn load<A: Asset>(app: &mut App, path: &str) -> Handle<A> {
    try_load(app, path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The error of a load of `path` that must fail.
pub fn load_error<A: Asset>(app: &mut App, path: &str) -> String {
    match try_load::<A>(app, path) {
        Ok(_) => panic!("{path} loaded"),
        Err(e) => e,
    }
}

pub fn bone<'a>(app: &'a mut App, name: &str) -> (Entity, &'a GlobalTransform, &'a Transform) {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &Name, &GlobalTransform, &Transform)>();
    let (e, _, g, t) = q
        .iter(world)
        .find(|(_, n, _, _)| n.as_str() == name)
        .unwrap_or_else(|| panic!("no bone {name}"));
    (e, g, t)
}

/// Pauses the character's clip at `t` and runs a frame.
fn seek(app: &mut App, character: Entity, t: f32) {
    let node = app
        .world()
        .get::<PlayingNode>(character)
        .expect("playing")
        .0;
    let mut player = app
        .world_mut()
        .get_mut::<AnimationPlayer>(character)
        .unwrap();
    player.animation_mut(node).unwrap().pause().set_seek_time(t);
    app.update();
}

pub fn same_rotation(a: Quat, b: Quat, tol: f32) -> bool {
    a.dot(b).abs() >= 1.0 - tol
}

#[test]
fn clips_load_as_labelled_assets_and_pose_a_spawned_skeleton() {
    let mut app = app(&[("test.ifp", lift_ifp())], &[], 1.0 / 30.0);
    let ifp: Handle<Ifp> = load(&mut app, "test.ifp");
    let by_name: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let by_index: Handle<RigClip> = load(
        &mut app,
        &IfpAssetLabel::Clip(0).from_asset("test.ifp").to_string(),
    );
    assert_eq!(
        IfpAssetLabel::Named("lift".into())
            .from_asset("test.ifp")
            .to_string(),
        "test.ifp#lift"
    );
    {
        let assets = app.world().resource::<Assets<Ifp>>();
        let ifp = assets.get(&ifp).unwrap();
        assert_eq!(ifp.game, GtaGame::Sa, "ANP3 files bind to the SA skeleton");
        assert_eq!(ifp.clip("LIFT").unwrap().clip.duration(), 1.0);
        // The clip by name and by index share one description, and point to the one Bevy
        // `AnimationClip` of the clip (`Animation0`).
        let rig_clips = app.world().resource::<Assets<RigClip>>();
        let (named, indexed) = (
            rig_clips.get(&by_name).unwrap(),
            rig_clips.get(&by_index).unwrap(),
        );
        assert!(std::sync::Arc::ptr_eq(named.info(), indexed.info()));
        assert_eq!(named.animation, indexed.animation);
        assert_eq!(named.animation, ifp.clips[0].animation);
        assert_eq!(
            named.animation.path().map(|p| p.to_string()),
            Some(
                IfpAssetLabel::Animation(0)
                    .from_asset("test.ifp")
                    .to_string()
            )
        );
        let clips = app.world().resource::<Assets<AnimationClip>>();
        assert_eq!(clips.get(&named.animation).unwrap().duration(), 1.0);
    }

    let character = app
        .world_mut()
        .spawn((GtaSkeleton::SA, PlayAnimation::looping(by_name)))
        .id();
    app.update();
    app.update();
    seek(&mut app, character, 0.5);
    let basis = bone(&mut app, "gta basis").1.translation();
    let (_, pelvis, _) = bone(&mut app, " Pelvis");
    let (p, r) = (pelvis.translation(), pelvis.rotation());
    // Root at (0, 0.5, 0) in GTA axes is (0, 0, -0.5) in Bevy's: (x, y, z) -> (x, z, -y); the
    // pelvis sits on the root (rest offset 0).
    assert!(
        (p - basis - Vec3::new(0.0, 0.0, -0.5)).length() < 1e-5,
        "{}",
        p - basis
    );
    // The pelvis has turned 45° about GTA Z (its rest rotation is replaced): its X axis, GTA
    // (cos 45°, sin 45°, 0), is (cos 45°, 0, -sin 45°) in Bevy axes.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(
        (r * Vec3::X - Vec3::new(h, 0.0, -h)).length() < 1e-5,
        "{}",
        r * Vec3::X
    );
    // Bones the clip does not animate keep their rest pose.
    let (_, _, head) = bone(&mut app, " Head");
    let rest = rigplay::skeleton::Skeleton::gta_sa().bones[5].rest;
    assert!(same_rotation(head.rotation, rest.rotation, 1e-6));
    // The unmatched track is reported.
    app.update();
    let unmatched = app
        .world()
        .get::<UnmatchedTracks>(character)
        .expect("reported");
    assert_eq!(unmatched.0, vec!["\"Tail\" (id 99)".to_string()]);
}

#[test]
fn bevy_animation_player_matches_the_core_sampler_across_loop_wraps() {
    let files = crate::assets::sample_files();
    // An odd step so that frames land between keys and on both sides of the wrap.
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], 0.047);
    let ifp: Handle<Ifp> = load(&mut app, "sa.ifp");
    let walk: Handle<RigClip> = load(&mut app, "sa.ifp#walk");
    let character = app
        .world_mut()
        .spawn((GtaSkeleton::SA, PlayAnimation::looping(walk)))
        .id();
    let (clip, skeleton) = {
        let assets = app.world().resource::<Assets<Ifp>>();
        let ifp = assets.get(&ifp).unwrap();
        (
            ifp.clip("walk").unwrap().clip.clone(),
            rigplay::skeleton::Skeleton::gta_sa(),
        )
    };
    let binding = skeleton.bind(&clip);
    let mut worst = (0.0f32, 0.0f32);
    let mut wraps = 0;
    let mut last_t = 0.0;
    for frame in 0..120 {
        app.update();
        let node = app.world().get::<PlayingNode>(character).unwrap().0;
        let t = app
            .world()
            .get::<AnimationPlayer>(character)
            .unwrap()
            .animation(node)
            .unwrap()
            .seek_time();
        if t < last_t {
            wraps += 1;
        }
        last_t = t;
        if frame < 3 {
            continue; // the graph takes effect a frame after it is added
        }
        let t = clip.wrap_time(t, WrapMode::Loop);
        for (track, target) in binding.targets.iter().enumerate() {
            let bone_name = skeleton.bones[target.unwrap()].name.clone();
            let (_, _, local) = bone(&mut app, &bone_name);
            let s = clip.sample_track(track, t);
            // Compared component by component, up to the sign of the quaternion.
            let q = s.rotation.unwrap() * local.rotation.dot(s.rotation.unwrap()).signum();
            worst.0 = worst.0.max(
                (Vec4::from(local.rotation) - Vec4::from(q))
                    .abs()
                    .max_element(),
            );
            if let Some(tr) = s.translation {
                worst.1 = worst.1.max((local.translation - tr).abs().max_element());
            }
        }
    }
    assert!(wraps >= 3, "the clip looped {wraps} times");
    assert!(
        worst.0 < 1e-5 && worst.1 < 1e-5,
        "worst rotation {} translation {}",
        worst.0,
        worst.1
    );
    eprintln!(
        "AnimationPlayer vs core sampler: worst rotation component {:e}, translation {:e}",
        worst.0, worst.1
    );
}

#[test]
fn clips_retarget_onto_a_hierarchy_with_renamed_and_aliased_bones() {
    let mut app = app(&[("test.ifp", lift_ifp())], &[], 1.0 / 30.0);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    // A character whose bones are named otherwise: "hips" tagged with bone id 0 (Root), and
    // III's "Swaist" for the pelvis; "prop" is not a bone.
    let world = app.world_mut();
    let character = world
        .spawn((Name::new("hero"), Retarget::default(), Transform::default()))
        .id();
    let hips = world
        .spawn((
            Name::new("hips"),
            GtaBoneId(0),
            Transform::default(),
            ChildOf(character),
        ))
        .id();
    let waist = world
        .spawn((
            Name::new("Swaist"),
            Transform::from_xyz(0.0, 0.1, 0.0),
            ChildOf(hips),
        ))
        .id();
    let prop = world
        .spawn((
            Name::new("prop"),
            Transform::from_xyz(1.0, 2.0, 3.0),
            ChildOf(waist),
        ))
        .id();
    app.update();
    app.world_mut()
        .entity_mut(character)
        .insert(PlayAnimation::looping(lift));
    app.update();
    app.update();
    seek(&mut app, character, 0.25);
    let t = |app: &App, e| *app.world().get::<Transform>(e).unwrap();
    // Root translation a quarter of the way from (0,0,0) to (0,1,0); the waist turns 22.5° about
    // Z: q = (0, 0, sin 11.25°, cos 11.25°).
    assert!((t(&app, hips).translation - Vec3::new(0.0, 0.25, 0.0)).length() < 1e-5);
    assert!(same_rotation(
        t(&app, waist).rotation,
        Quat::from_xyzw(0.0, 0.0, 0.195_090_32, 0.980_785_3),
        1e-6
    ));
    assert_eq!(
        t(&app, waist).translation,
        Vec3::new(0.0, 0.1, 0.0),
        "no translation keys: rest kept"
    );
    assert_eq!(t(&app, prop).translation, Vec3::new(1.0, 2.0, 3.0));
    app.update();
    assert_eq!(
        app.world().get::<UnmatchedTracks>(character).unwrap().0,
        vec!["\"Tail\" (id 99)".to_string()]
    );
}

#[test]
fn extracted_root_motion_moves_the_character_not_the_root_bone() {
    let meta = r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::IfpLoader",
        settings: (
            clips: { "lift": (looping: true, root_motion: Extract(z: false)) },
        ),
    ),
)"#;
    let mut app = app(&[("test.ifp", lift_ifp())], &[("test.ifp", meta)], 0.1);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            PlayAnimation::looping(lift),
            RootMotion::applied(),
        ))
        .id();
    let start = app.world().get::<PlayingNode>(character).is_some();
    assert!(!start);
    // 16 frames of 0.1 s after the first (which has no time step): 1.5 s of a 1 m/s clip that
    // loops every second, so 1.5 m along GTA +Y = Bevy -Z.
    for _ in 0..16 {
        app.update();
    }
    let node = app.world().get::<PlayingNode>(character).unwrap().0;
    let player = app.world().get::<AnimationPlayer>(character).unwrap();
    let active = player.animation(node).unwrap();
    let played = active.completions() as f32 + active.seek_time();
    let moved = app.world().get::<Transform>(character).unwrap().translation;
    assert!(
        (moved - Vec3::new(0.0, 0.0, -played)).length() < 1e-4,
        "moved {moved} after {played} s"
    );
    assert!(played > 1.2, "crossed a loop: {played}");
    // The root bone itself stays where the clip started.
    let (_, _, root) = bone(&mut app, "Normal");
    assert!(root.translation.length() < 1e-6, "{}", root.translation);
}

#[test]
fn a_broken_file_fails_to_load_with_its_offset_and_the_app_keeps_running() {
    let mut broken = lift_ifp();
    broken.truncate(90);
    let mut app = app(
        &[("broken.ifp", broken), ("good.ifp", lift_ifp())],
        &[],
        1.0 / 30.0,
    );
    let error = load_error::<Ifp>(&mut app, "broken.ifp");
    assert!(
        error.contains("broken.ifp") && error.contains("at byte 72"),
        "{error}"
    );
    for _ in 0..5 {
        app.update();
    }
    let _: Handle<Ifp> = load(&mut app, "good.ifp");
}

#[test]
fn a_retarget_root_reports_its_humanoid_bones_by_naming_convention() {
    use rigplay::animation::retarget::{BonePreset, HumanoidBone};
    let mut app = app(&[], &[], 1.0 / 30.0);
    // A Mixamo-named chain under a root, as a glTF scene spawns it: the hips, a leg, an arm,
    // and a prop that is no bone.
    let world = app.world_mut();
    let root = world
        .spawn((
            Name::new("character"),
            Retarget::default(),
            Transform::default(),
        ))
        .id();
    let mut parent = root;
    for name in [
        "mixamorig:Hips",
        "mixamorig:LeftUpLeg",
        "mixamorig:LeftLeg",
        "mixamorig:LeftFoot",
    ] {
        parent = world
            .spawn((Name::new(name), Transform::default(), ChildOf(parent)))
            .id();
    }
    world.spawn((Name::new("sword"), Transform::default(), ChildOf(parent)));
    app.update();
    let report = app.world().get::<RetargetReport>(root).expect("a report");
    assert_eq!(report.preset, BonePreset::Mixamo);
    let matched: Vec<HumanoidBone> = report.report.matched.iter().map(|m| m.0).collect();
    assert_eq!(
        matched,
        [
            HumanoidBone::Hips,
            HumanoidBone::LeftUpperLeg,
            HumanoidBone::LeftLowerLeg,
            HumanoidBone::LeftFoot
        ]
    );
    assert!(report.report.unmatched.contains(&HumanoidBone::Head));
    assert_eq!(report.report.unused, ["sword"]);
    // A bone that appears later (a scene still spawning) renews the report.
    let head = app
        .world_mut()
        .spawn((
            Name::new("mixamorig:Head"),
            Transform::default(),
            ChildOf(root),
        ))
        .id();
    app.update();
    let report = app.world().get::<RetargetReport>(root).unwrap();
    assert!(
        report
            .report
            .matched
            .iter()
            .any(|m| m.0 == HumanoidBone::Head)
    );
    let _ = head;
}

#[test]
fn playback_reports_the_tracks_no_bone_matches() {
    // The lift's "Tail" (id 99) is no SA bone: rigplay's own playback lists it, as
    // PlayAnimation does.
    let mut app = app(&[("test.ifp", lift_ifp())], &[], 1.0 / 30.0);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift),
            Playback::looping(),
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(
        app.world().get::<UnmatchedTracks>(character).unwrap().0,
        vec!["\"Tail\" (id 99)".to_string()]
    );
}

#[test]
fn a_cutscene_package_plays_without_its_scene_frame_clavicle_keys_said_once() {
    // The cutscene-shaped package (see the fixture): its clavicles' translation keys are
    // scene positions. The loader leaves them out of the clip it plays and says so once, in
    // the asset's warnings, naming both bones; the root keeps its translation.
    let bytes = crate::ifp_fixtures::anpk_sa_cutscene_scene_space(172);
    let mut app = app(&[("cuts.ifp", bytes)], &[], 1.0 / 30.0);
    let handle: Handle<Ifp> = load(&mut app, "cuts.ifp");
    let ifps = app.world().resource::<Assets<Ifp>>();
    let ifp = ifps.get(&handle).unwrap();
    let lines: Vec<&String> = ifp
        .warnings
        .iter()
        .filter(|w| w.contains("not local offsets"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", ifp.warnings);
    assert!(
        lines[0].contains("\"cs_talk\"") && lines[0].contains("R Clavicle, L Clavicle"),
        "{}",
        lines[0]
    );
    let clip = &ifp.clip("cs_talk").unwrap().clip;
    for t in clip.tracks() {
        let clavicle = t.bone.name.contains("Clavicle");
        assert_eq!(
            t.translation.is_some(),
            t.bone.name == "Root",
            "{}: clavicle {clavicle}",
            t.bone.name
        );
    }
}

/// Motion files load as [`Motion`] assets: a mocap `.bvh` (by its extension), the same walk as
/// a `.gltf` with Mixamo names (loaded as `Handle<Motion>`, beside Bevy's glTF loader) and as a
/// `.vrma`. Each holds the package `rigplay import` writes for the same input, byte for byte,
/// and its clip plays on the SA skeleton where the written package's clip does. A file the
/// readers refuse fails with why, and the app runs on.
#[test]
fn motion_files_load_retargeted_onto_a_gta_ped_as_rigplay_import_writes_them() {
    use crate::gltf_import::{Naming, gltf_of};
    use rigplay::convert::import::{bvh_source, clip_to_gta, gltf_source, gta_package};
    use rigplay::formats::bvh::BvhFile;
    use rigplay::formats::gltf::GltfScene;
    use rigplay::skeleton::GtaGame;
    let text = crate::bvh_fixtures::mocap_walk(31);
    let bvh = BvhFile::read(text.as_bytes()).unwrap().file;
    let gltf = gltf_of(&bvh, Naming::Mixamo, false);
    let vrma = gltf_of(&bvh, Naming::Vrma, true);
    // What `rigplay import` writes for each (the clip named after the file, or the animation).
    let written = |clip: rigplay::formats::ifp::IfpClip, name: &str| {
        gta_package(GtaGame::Sa, name, vec![clip])
            .0
            .write()
            .unwrap()
    };
    let from_bvh = written(
        clip_to_gta(
            &bvh_source(&bvh),
            &bvh.to_clip("walk"),
            "walk",
            GtaGame::Sa,
            &[],
        )
        .unwrap()
        .0,
        "walk",
    );
    let from_gltf = |bytes: &[u8], package: &str| {
        let scene = GltfScene::read(bytes, |_| None).unwrap().scene;
        let (source, clip) = gltf_source(&scene, &scene.animations[0]).unwrap();
        written(
            clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &[])
                .unwrap()
                .0,
            package,
        )
    };
    let mut app = app(
        &[
            ("walk.bvh", text.clone().into_bytes()),
            ("mixamo.gltf", gltf.clone()),
            ("dance.vrma", vrma.clone()),
            ("walk.ifp", from_bvh.clone()),
            ("broken.bvh", b"HIERARCHY\nROOT".to_vec()),
        ],
        &[],
        1.0 / 30.0,
    );
    let motion: Handle<Motion> = load(&mut app, "walk.bvh");
    let mixamo: Handle<Motion> = load(&mut app, "mixamo.gltf");
    let dance: Handle<Motion> = load(&mut app, "dance.vrma");
    {
        let motions = app.world().resource::<Assets<Motion>>();
        let m = motions.get(&motion).unwrap();
        assert_eq!(m.ifp.game, GtaGame::Sa);
        assert_eq!(m.ifp.clips.len(), 1);
        assert!(m.notes[0].contains("21 bones paired"), "{:?}", m.notes);
        assert!(
            m.ifp.file.write().unwrap() == from_bvh,
            "the .bvh as imported"
        );
        let m = motions.get(&mixamo).unwrap();
        assert!(m.ifp.file.write().unwrap() == from_gltf(&gltf, "mixamo"));
        let m = motions.get(&dance).unwrap();
        assert!(m.ifp.file.write().unwrap() == from_gltf(&vrma, "dance"));
    }
    let err = load_error::<Motion>(&mut app, "broken.bvh");
    assert!(err.contains("byte"), "{err}");
    // The motion's clip and the written package's, each on an SA skeleton.
    let ours: Handle<RigClip> = load(&mut app, "walk.bvh#Clip0");
    let written: Handle<RigClip> = load(&mut app, "walk.ifp#Clip0");
    let mut paused = Playback::looping();
    paused.paused = true;
    let a = app
        .world_mut()
        .spawn((GtaSkeleton::SA, SkeletalClip::new(ours), paused.clone()))
        .id();
    let b = app
        .world_mut()
        .spawn((GtaSkeleton::SA, SkeletalClip::new(written), paused))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let mut far = 0.0f32;
    for t in [0.0, 0.3, 0.7] {
        for e in [a, b] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        let world = app.world();
        let bones = |e: Entity| world.get::<SkeletonBones>(e).unwrap().0.clone();
        for (x, y) in bones(a).iter().zip(&bones(b)) {
            let (x, y) = (
                world.get::<GlobalTransform>(*x).unwrap().translation(),
                world.get::<GlobalTransform>(*y).unwrap().translation(),
            );
            far = far.max(x.distance(y));
        }
    }
    assert!(far < 1e-6, "{far} m");
}

/// A motion file whose bones the names do not pair (a rig's own names for the hips and
/// forearms) loads with the bone map of its `.meta`, as `rigplay import --map` takes it: its
/// package is byte for byte the one imported from the same walk with the usual names, which the
/// names pair alone. Without the map the file does not load (no bone is the hips) and the error
/// says so; an entry naming no bone is reported, and the others still apply.
#[test]
fn a_motion_files_bone_map_pairs_what_its_names_do_not() {
    let text = crate::bvh_fixtures::mocap_walk(31);
    // Names no preset knows (one of each: the root, a left and a right bone).
    let renamed = text
        .replace("ROOT Hips", "ROOT bn_root")
        .replace("JOINT LeftForeArm", "JOINT arm_lo_l2")
        .replace("JOINT RightForeArm", "JOINT arm_lo_r2");
    assert_eq!(renamed.matches("bn_root").count(), 1);
    assert_eq!(renamed.matches("arm_lo_").count(), 2);
    // GTA's names written other ways (case, no leading space): GTA matches them so.
    let meta = r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::MotionLoader",
        settings: (
            bone_map: {
                "bn_root": "pelvis",
                "arm_lo_l2": "L FOREARM",
                "arm_lo_r2": "r forearm",
                "no_such_bone": "Head",
                "Head": 3,
            },
        ),
    ),
)"#;
    let mut app = app(
        &[
            ("usual/walk.bvh", text.into_bytes()),
            ("mapped/walk.bvh", renamed.clone().into_bytes()),
            ("unmapped/walk.bvh", renamed.into_bytes()),
        ],
        &[("mapped/walk.bvh", meta)],
        1.0 / 30.0,
    );
    let usual: Handle<Motion> = load(&mut app, "usual/walk.bvh");
    let mapped: Handle<Motion> = load(&mut app, "mapped/walk.bvh");
    let err = load_error::<Motion>(&mut app, "unmapped/walk.bvh");
    assert!(err.contains("recognised as the hips"), "{err}");
    let motions = app.world().resource::<Assets<Motion>>();
    let (usual, mapped) = (motions.get(&usual).unwrap(), motions.get(&mapped).unwrap());
    assert!(
        usual.notes[0].contains("21 bones paired"),
        "{:?}",
        usual.notes
    );
    assert!(
        mapped.ifp.file.write().unwrap() == usual.ifp.file.write().unwrap(),
        "the mapped file imports as the usual names do: {:?}",
        mapped.notes
    );
    assert!(
        mapped.notes[0].contains("21 bones paired"),
        "{:?}",
        mapped.notes
    );
    // The entry naming no bone is in the notes and the warnings; the entry whose GTA side is
    // not a string is a `.meta` problem, logged, and left out.
    assert!(
        mapped.notes[0].contains("bone map:") && mapped.notes[0].contains("no_such_bone"),
        "{:?}",
        mapped.notes
    );
    let warnings = &mapped.ifp.warnings;
    assert!(
        warnings.iter().any(|w| w.contains("no_such_bone"))
            && warnings.iter().any(|w| w.contains("bone_map.\"Head\"")),
        "{warnings:?}"
    );
}
