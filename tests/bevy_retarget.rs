//! `Retarget` in a headless Bevy app: glTF characters (written here as glTF JSON, loaded by
//! Bevy's own glTF loader) playing the sample GTA clips beside the built-in SA skeleton playing
//! the same clips; their bones must point the same ways (in world space, after the half turn
//! that takes a GTA ped's facing onto a glTF character's), their hips move by the scaled amount,
//! and a broken or non-humanoid glTF gives a report, not a panic.

use crate::bevy_ifp::{app_with, load};
use crate::humanoid::{Arms, Character, Naming, Spec, build, gltf_json};
use crate::retarget_characters::{CHAINS, both_directed, size_of};
use bevy::gltf::GltfPlugin;
use bevy::math::Affine3A;
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot, WorldSerializationPlugin};
use rigplay::animation::retarget::{BonePreset, HumanoidBone};
use rigplay::plugin::*;
use std::f32::consts::{FRAC_PI_2, PI};

/// SA's hip height: Pelvis above R Toe0 in the bind pose (z = −1.0363, worked out in
/// `retarget_characters::the_sa_hip_height_and_scale_worked_out_by_hand`), the lowest bone both
/// skeletons have; above L Toe0 (z = −1.0326) on a character without a right toe.
const SA_HIP_HEIGHT: f32 = 1.0363;
const SA_HIP_HEIGHT_LEFT_TOE: f32 = 1.0326;

fn gltf_app(files: &[(&str, Vec<u8>)]) -> App {
    app_with(files, &[], 1.0 / 30.0, gltf_plugins())
}

/// The entity of each humanoid bone under `root`, found by `bone_of` from its name.
fn humanoid_entities(
    app: &mut App,
    root: Entity,
    bone_of: &dyn Fn(&str) -> Option<HumanoidBone>,
) -> Vec<(HumanoidBone, Entity)> {
    let world = app.world_mut();
    let mut found = Vec::new();
    let mut stack = vec![root];
    let mut descendants = Vec::new();
    while let Some(e) = stack.pop() {
        if let Some(children) = world.get::<Children>(e) {
            descendants.extend(children.iter());
            stack.extend(children.iter());
        }
    }
    for e in descendants {
        if let Some(name) = world.get::<Name>(e)
            && let Some(b) = bone_of(name.as_str())
        {
            found.push((b, e));
        }
    }
    found
}

fn position(app: &App, e: Entity) -> Vec3 {
    app.world().get::<GlobalTransform>(e).unwrap().translation()
}

/// The largest angle (degrees, and at which bone) between a character's bone directions and the
/// reference skeleton's, turned from GTA's facing (−Z in Bevy) to glTF's (+Z), along the
/// humanoid chains both have.
fn worst_direction(
    app: &App,
    reference_bones: &[(HumanoidBone, Entity)],
    character: &Spawned,
) -> (f32, String, usize) {
    let turn = Quat::from_rotation_y(PI);
    let mut worst = (0.0f32, String::new(), 0);
    let size = |bones: &mut dyn Iterator<Item = Entity>| {
        let at: Vec<Vec3> = bones.map(|e| position(app, e)).collect();
        size_of(&at)
    };
    let ref_size = size(&mut reference_bones.iter().map(|b| b.1));
    let char_size = size(&mut character.bones.iter().map(|b| b.1));
    for chain in CHAINS {
        let both: Vec<(Entity, Entity, HumanoidBone)> = chain
            .iter()
            .filter_map(|&b| {
                let r = reference_bones.iter().find(|x| x.0 == b)?.1;
                let e = character.bones.iter().find(|x| x.0 == b)?.1;
                Some((r, e, b))
            })
            .collect();
        for w in both.windows(2) {
            let d_ref = turn * (position(app, w[1].0) - position(app, w[0].0));
            let d_char = position(app, w[1].1) - position(app, w[0].1);
            if !both_directed(d_ref, ref_size, d_char, char_size) {
                continue;
            }
            let angle = d_ref.angle_between(d_char).to_degrees();
            worst.2 += 1;
            if angle > worst.0 {
                worst = (angle, format!("{:?}", w[0].2), worst.2);
            }
        }
    }
    worst
}

/// The built-in SA skeleton playing `clip`, and its humanoid bones.
fn spawn_reference(
    app: &mut App,
    clip: &Handle<RigClip>,
    extra: impl Bundle,
) -> (Entity, Vec<(HumanoidBone, Entity)>) {
    let reference = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(clip.clone()),
            Playback::looping(),
            extra,
        ))
        .id();
    app.update();
    let bones = humanoid_entities(app, reference, &|n| BonePreset::Gta.humanoid_bone(n));
    (reference, bones)
}

fn gltf_plugins() -> (WorldSerializationPlugin, MeshPlugin, GltfPlugin) {
    (WorldSerializationPlugin, MeshPlugin, GltfPlugin::default())
}

struct Spawned {
    label: String,
    root: Entity,
    character: Character,
    bones: Vec<(HumanoidBone, Entity)>,
}

fn set_time(app: &mut App, entities: &[Entity], t: f32) {
    for &e in entities {
        let mut p = app.world_mut().get_mut::<Playback>(e).unwrap();
        p.paused = true;
        p.seek(t);
    }
    app.update();
}

/// Plays `clip_path` on the characters and the reference skeleton at 21 times and returns the
/// largest direction error (degrees, where) and hips error per character.
fn compare(
    app: &mut App,
    reference: Entity,
    reference_bones: &[(HumanoidBone, Entity)],
    characters: &[Spawned],
    clip_path: &str,
) -> Vec<(f32, String, f32)> {
    let clip: Handle<RigClip> = load(app, clip_path);
    let mut all: Vec<Entity> = characters.iter().map(|c| c.root).collect();
    all.push(reference);
    for &e in &all {
        app.world_mut().get_mut::<SkeletalClip>(e).unwrap().clip = clip.clone();
    }
    set_time(app, &all, 0.0);
    set_time(app, &all, 0.0);
    let duration = app
        .world()
        .get::<Playback>(reference)
        .unwrap()
        .duration
        .expect("the clip is bound");
    let mut results = vec![(0.0f32, String::new(), 0.0f32); characters.len()];
    for k in 0..21 {
        let t = duration * k as f32 / 20.0;
        set_time(app, &all, t);
        for (c, result) in characters.iter().zip(results.iter_mut()) {
            let (angle, bone, _) = worst_direction(app, reference_bones, c);
            if angle > result.0 {
                *result = (angle, format!("{bone} at {t:.3} s"), result.2);
            }
        }
    }
    results
}

/// The reference pelvis world position per time and the characters' hips, for the hips check.
fn hips_track(
    app: &mut App,
    reference: Entity,
    reference_hips: Entity,
    characters: &[Spawned],
) -> f32 {
    let all: Vec<Entity> = characters
        .iter()
        .map(|c| c.root)
        .chain([reference])
        .collect();
    let duration = app
        .world()
        .get::<Playback>(reference)
        .unwrap()
        .duration
        .unwrap();
    // Displacements from the clip's first frame on both sides (which cancels the rests).
    set_time(app, &all, 0.0);
    let ref0 = position(app, reference_hips);
    let char0: Vec<Vec3> = characters
        .iter()
        .map(|c| {
            position(
                app,
                c.bones
                    .iter()
                    .find(|b| b.0 == HumanoidBone::Hips)
                    .unwrap()
                    .1,
            )
        })
        .collect();
    let turn = Quat::from_rotation_y(PI);
    let mut worst = 0.0f32;
    for k in 1..21 {
        let t = duration * k as f32 / 20.0;
        set_time(app, &all, t);
        let moved = turn * (position(app, reference_hips) - ref0);
        for (c, start) in characters.iter().zip(&char0) {
            let hips = c
                .bones
                .iter()
                .find(|b| b.0 == HumanoidBone::Hips)
                .unwrap()
                .1;
            let gta = if c.character.node(HumanoidBone::RightToes).is_some() {
                SA_HIP_HEIGHT
            } else {
                SA_HIP_HEIGHT_LEFT_TOE
            };
            let scale = c.character.hip_height / gta;
            let expected = *start + moved * scale;
            let error = (position(app, hips) - expected).length() / c.character.hip_height;
            worst = worst.max(error);
        }
    }
    worst
}

fn spawn_characters(
    app: &mut App,
    list: Vec<(String, Character, Retarget)>,
    clip: &Handle<RigClip>,
) -> Vec<Spawned> {
    let mut out = Vec::new();
    for (i, (label, character, retarget)) in list.into_iter().enumerate() {
        let path = format!("character{i}.gltf");
        let scene: Handle<WorldAsset> = load(app, &format!("{path}#Scene0"));
        let root = app
            .world_mut()
            .spawn((
                WorldAssetRoot(scene),
                retarget,
                SkeletalClip::new(clip.clone()),
                Playback::looping(),
                // Beside each other; turned and placed characters point the same ways.
                Transform::from_xyz(2.0 * i as f32, 0.0, 0.0),
            ))
            .id();
        out.push(Spawned {
            label,
            root,
            character,
            bones: Vec::new(),
        });
    }
    for _ in 0..5 {
        app.update();
    }
    for s in &mut out {
        let humanoid = s.character.humanoid.clone();
        let names = s.character.names.clone();
        s.bones = humanoid_entities(app, s.root, &|n| {
            humanoid
                .iter()
                .find(|(_, i)| names[*i] == n)
                .map(|(b, _)| *b)
        });
        assert_eq!(
            s.bones.len(),
            s.character.humanoid.len(),
            "{}: scene spawned",
            s.label
        );
    }
    out
}

fn specs() -> Vec<(Spec, Retarget)> {
    let blender = Quat::from_rotation_x(FRAC_PI_2);
    vec![
        (
            Spec {
                size: 1.1,
                arm: 1.2,
                leg: 0.9,
                armature: Some((blender, 0.01)),
                seed: 41,
                ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::T)
            },
            Retarget::new(),
        ),
        (
            Spec {
                size: 180.0,
                arm: 1.1,
                leg: 1.05,
                seed: 42,
                ..Spec::new(Naming::Unreal, Arms::A(45.0))
            },
            Retarget::new(),
        ),
        (
            Spec {
                size: 0.3,
                leg: 0.7,
                seed: 43,
                missing: vec![HumanoidBone::LeftUpperArm, HumanoidBone::RightToes],
                ..Spec::new(Naming::VRoid, Arms::A(30.0))
            },
            Retarget::new(),
        ),
    ]
}

fn built(specs: Vec<(Spec, Retarget)>) -> Vec<(String, Character, Retarget)> {
    specs
        .into_iter()
        .map(|(spec, r)| {
            (
                format!("{:?} {:?}", spec.naming, spec.arms),
                build(&spec),
                r,
            )
        })
        .collect()
}

fn files(list: &[(String, Character, Retarget)]) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = list
        .iter()
        .enumerate()
        .map(|(i, (_, c, _))| (format!("character{i}.gltf"), gltf_json(c).into_bytes()))
        .collect();
    files.push(("sa_ped.ifp".into(), crate::assets::read("anims/sa_ped.ifp")));
    files
}

#[test]
fn gta_clips_on_gltf_characters_point_every_bone_where_the_sa_skeleton_does() {
    let list = built(specs());
    let files = files(&list);
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let mut app = gltf_app(&refs);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (reference, reference_bones) =
        spawn_reference(&mut app, &walk, Transform::from_xyz(-2.0, 0.0, 0.0));
    let characters = spawn_characters(&mut app, list, &walk);
    assert_eq!(reference_bones.len(), 21);
    // The reports: the convention found, the missing limbs listed.
    let report = app
        .world()
        .get::<RetargetReport>(characters[0].root)
        .unwrap();
    assert_eq!(report.preset, BonePreset::Mixamo);
    assert_eq!(report.map.len(), 21, "{:?}", report.map);
    assert!(
        report
            .map
            .contains(&("L Thigh".into(), "mixamorig:LeftUpLeg".into()))
    );
    let report = app
        .world()
        .get::<RetargetReport>(characters[2].root)
        .unwrap();
    assert_eq!(report.preset, BonePreset::Vrm);
    use HumanoidBone::*;
    assert_eq!(
        report.report.unmatched,
        [LeftUpperArm, LeftLowerArm, LeftHand, RightToes]
    );
    for clip in ["walk", "idle", "wave"] {
        let path = format!("sa_ped.ifp#{clip}");
        let results = compare(&mut app, reference, &reference_bones, &characters, &path);
        for (c, (angle, worst, _)) in characters.iter().zip(&results) {
            eprintln!("{clip} on {}: {angle:.3}° ({worst})", c.label);
            assert!(
                *angle < 2.0,
                "{clip} on {}: {angle:.3}° at {worst}",
                c.label
            );
        }
        let reference_hips = reference_bones.iter().find(|b| b.0 == Hips).unwrap().1;
        let hips = hips_track(&mut app, reference, reference_hips, &characters);
        assert!(hips < 1e-3, "{clip}: hips off by {hips} hip heights");
    }
}

#[test]
fn by_name_copies_fail_and_a_user_map_fixes_unknown_names() {
    // One Mixamo character played twice: by name (local rotations copied) it is far off; and
    // a character whose arms have names no convention knows, with the user's map for them.
    let mut renamed = build(&Spec {
        seed: 51,
        ..Spec::new(Naming::Vrm, Arms::T)
    });
    for (bone, name) in [
        (HumanoidBone::LeftUpperArm, "arm_upper_jnt_L"),
        (HumanoidBone::LeftLowerArm, "arm_lower_jnt_L"),
    ] {
        let i = renamed.node(bone).unwrap();
        renamed.names[i] = name.into();
    }
    let mixamo = build(&Spec {
        seed: 52,
        ..Spec::new(Naming::Mixamo(""), Arms::A(40.0))
    });
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("character0.gltf", gltf_json(&mixamo).into_bytes()),
        ("character1.gltf", gltf_json(&renamed).into_bytes()),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ];
    let mut app = gltf_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (reference, reference_bones) = spawn_reference(&mut app, &walk, ());
    let list = vec![
        (
            "Mixamo by name".to_owned(),
            mixamo,
            Retarget {
                mode: RetargetMode::ByName,
                ..Retarget::new()
            },
        ),
        (
            "VRM renamed arm".to_owned(),
            renamed,
            Retarget::new()
                .with_bone("L UpperArm", "arm_upper_jnt_L")
                .with_bone("L ForeArm", "arm_lower_jnt_L"),
        ),
    ];
    let characters = spawn_characters(&mut app, list, &walk);
    let report = app
        .world()
        .get::<RetargetReport>(characters[1].root)
        .unwrap();
    assert!(
        report
            .report
            .unmatched
            .contains(&HumanoidBone::LeftUpperArm)
    );
    assert!(
        report
            .map
            .contains(&("L UpperArm".into(), "arm_upper_jnt_L".into())),
        "{:?}",
        report.map
    );
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let results = compare(
        &mut app,
        reference,
        &reference_bones,
        &characters,
        "sa_ped.ifp#walk",
    );
    assert!(results[0].0 > 20.0, "by name only {:.2}° off", results[0].0);
    assert!(
        results[1].0 < 2.0,
        "{:.3}° at {}",
        results[1].0,
        results[1].1
    );
    // An entry naming no bone is reported.
    app.world_mut()
        .get_mut::<Retarget>(characters[1].root)
        .unwrap()
        .bone_map
        .push(("L Hand".into(), "no_such_bone".into()));
    app.update();
    let report = app
        .world()
        .get::<RetargetReport>(characters[1].root)
        .unwrap();
    assert_eq!(
        report.problems,
        ["no character bone is named \"no_such_bone\""]
    );
}

/// A vehicle (three nodes, no humanoid bone) as `vehicle.gltf`, a glTF cut short as
/// `broken.gltf`, and the SA sample as `sa_ped.ifp`.
fn vehicle_and_broken_gltf() -> Vec<(&'static str, Vec<u8>)> {
    let vehicle = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
        "nodes":[{"name":"chassis","children":[1,2]},{"name":"wheel_fl","translation":[1,0,1]},
        {"name":"wheel_fr","translation":[-1,0,1],"rotation":[0,0,0,1]}]}"#;
    vec![
        ("vehicle.gltf", vehicle.as_bytes().to_vec()),
        (
            "broken.gltf",
            b"{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [".to_vec(),
        ),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ]
}

#[test]
fn broken_and_non_humanoid_gltf_give_a_report_not_a_panic() {
    let files = vehicle_and_broken_gltf();
    let mut app = gltf_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let scene: Handle<WorldAsset> = load(&mut app, "vehicle.gltf#Scene0");
    let vehicle = spawn_retargeted(&mut app, scene, &walk);
    let broken: Handle<WorldAsset> = app
        .world()
        .resource::<AssetServer>()
        .load("broken.gltf#Scene0");
    let nothing = app
        .world_mut()
        .spawn((
            WorldAssetRoot(broken.clone()),
            Retarget::new(),
            SkeletalClip::new(walk),
            Playback::looping(),
        ))
        .id();
    // Loads run on the task pool's threads, which a busy machine (tests running beside this
    // one) may take seconds to reach: wait on the load's outcome, not on a count of updates,
    // with a deadline so that a load that never ends fails the test instead of hanging it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut failed = false;
    let mut updates = 0;
    while !(failed && updates >= 60 && app.world().get::<RetargetReport>(vehicle).is_some()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the loads have no outcome after 60 s ({updates} updates)"
        );
        app.update();
        updates += 1;
        failed |= matches!(
            app.world()
                .resource::<AssetServer>()
                .load_state(broken.id()),
            bevy::asset::LoadState::Failed(_)
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let report = app
        .world()
        .get::<RetargetReport>(vehicle)
        .expect("a report");
    assert!(report.report.matched.is_empty());
    // The scene's own root node is named too.
    assert_eq!(
        report.report.unused,
        ["Scene0", "chassis", "wheel_fl", "wheel_fr"]
    );
    assert!(report.map.is_empty());
    // Nothing of the vehicle moved; the playheads run.
    let (_, _, wheel) = crate::bevy_ifp::bone(&mut app, "wheel_fl");
    assert_eq!(wheel.translation, Vec3::new(1.0, 0.0, 1.0));
    assert_eq!(wheel.rotation, Quat::IDENTITY);
    assert!(app.world().get::<Playback>(vehicle).unwrap().time > 0.0);
    assert!(app.world().get_entity(nothing).is_ok());
}

#[test]
fn a_dan_clip_of_a_biped_plays_on_a_gltf_character_resting_on_its_first_frame() {
    // The SA walk exported as a DAN file would be by a 3ds Max Biped: flat model-space keys
    // every 33 ms (whole milliseconds, as the exporter writes), bones named in the .meta. Its
    // rest is its first frame; played on a T-pose Unreal-named character it must point every
    // bone where the SA skeleton playing the walk does at the same times.
    use rigplay::formats::dan::{DanClipOptions, DanFile};
    let biped = crate::retarget_characters::biped_walk(0.033);
    let bytes = DanFile::from_clip(&biped.clip, &DanClipOptions::default())
        .unwrap()
        .write()
        .unwrap();
    let names: Vec<String> = biped
        .source
        .names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect();
    let meta = format!(
        r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::DanLoader",
        settings: (scale: 1.0, bone_names: [{}], looping: true),
    ),
)"#,
        names.join(", ")
    );
    let character = build(&Spec {
        size: 170.0,
        seed: 61,
        ..Spec::new(Naming::Unreal, Arms::T)
    });
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("character0.gltf", gltf_json(&character).into_bytes()),
        ("walk.dan", bytes),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ];
    let mut app = app_with(
        &files,
        &[("walk.dan", meta.as_str())],
        1.0 / 30.0,
        gltf_plugins(),
    );
    let dan_clip: Handle<RigClip> = load(&mut app, "walk.dan#Clip0");
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (reference, reference_bones) = spawn_reference(&mut app, &walk, ());
    let characters = spawn_characters(
        &mut app,
        vec![("Unreal T, DAN walk".into(), character, Retarget::new())],
        &dan_clip,
    );
    let all = [characters[0].root, reference];
    let mut worst = (0.0f32, String::new());
    let mut compared = 0;
    for k in 0..30 {
        let t = k as f32 * 0.033;
        set_time(&mut app, &all, t);
        let (angle, bone, n) = worst_direction(&app, &reference_bones, &characters[0]);
        compared += n;
        if angle > worst.0 {
            worst = (angle, format!("{bone} at {t:.3} s"));
        }
    }
    assert!(compared >= 30 * 14, "{compared}");
    eprintln!(
        "DAN walk on the Unreal character: {:.3}° ({})",
        worst.0, worst.1
    );
    assert!(worst.0 < 2.0, "{:.3}° at {}", worst.0, worst.1);
}

#[test]
fn root_motion_and_cross_fades_carry_over_scaled_and_facing_the_characters_way() {
    // The walk with its root motion extracted (as the sample's .meta sets it) moves the
    // character's entity forward (+Z, the way a glTF character faces) by the ped's distance
    // scaled by the hip-height ratio; the ped's own skeleton walks −Z (Bevy's forward).
    let meta = include_str!("../assets/anims/sa_ped.ifp.meta");
    let character = build(&Spec {
        size: 0.5,
        seed: 71,
        ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::A(30.0))
    });
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("character0.gltf", gltf_json(&character).into_bytes()),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ];
    let mut app = app_with(&files, &[("sa_ped.ifp", meta)], 1.0 / 30.0, gltf_plugins());
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa_ped.ifp#idle");
    let (reference, reference_bones) = spawn_reference(&mut app, &walk, RootMotion::applied());
    let hip_height = character.hip_height;
    let characters = spawn_characters(
        &mut app,
        vec![("Mixamo A".into(), character, Retarget::new())],
        &walk,
    );
    let root = characters[0].root;
    app.world_mut()
        .entity_mut(root)
        .insert(RootMotion::applied());
    // Both from the clip's start, on the same clock from here on.
    for e in [root, reference] {
        app.world_mut().get_mut::<Playback>(e).unwrap().seek(0.0);
    }
    app.update();
    let start = |app: &App, e| app.world().get::<Transform>(e).unwrap().translation;
    let (c0, r0) = (start(&app, root), start(&app, reference));
    for _ in 0..60 {
        app.update();
    }
    let (c1, r1) = (start(&app, root), start(&app, reference));
    let (dc, dr) = (c1 - c0, r1 - r0);
    assert!(dr.z < -0.5, "the ped walks −Z: {dr}");
    assert!(dc.z > 0.0, "the character walks +Z: {dc}");
    let scale = hip_height / SA_HIP_HEIGHT;
    assert!(
        (dc.length() / dr.length() - scale).abs() < 1e-3 * scale,
        "{} vs {scale}",
        dc.length() / dr.length()
    );
    // A cross-fade to the idle on both: halfway through, and once it is over, the bones point
    // the same ways.
    for e in [root, reference] {
        app.world_mut()
            .get_mut::<SkeletalClip>(e)
            .unwrap()
            .cross_fade(idle.clone(), 0.5);
    }
    for frames in [8, 30] {
        for _ in 0..frames {
            app.update();
        }
        let (worst, _, _) = worst_direction(&app, &reference_bones, &characters[0]);
        // Mid-fade too: the blend of the two retargeted poses points the bones where the
        // skeleton's blend of the two clips does.
        assert!(worst < 2.0, "{frames} frames into the fade: {worst:.3}°");
        eprintln!("{frames} frames into the fade: {worst:.3}°");
    }
    assert!(
        app.world()
            .get::<SkeletalClip>(root)
            .unwrap()
            .fade_weight()
            .is_none(),
        "the fade ended"
    );
}

#[test]
fn a_retargeted_character_reports_the_tracks_that_reach_none_of_its_bones() {
    // The SA walk on a character without a left arm: the arm's three tracks reach no bone (the
    // clavicle still drives the shoulder); the root's (Normal) moves the hips, so it counts.
    let character = build(&Spec {
        missing: vec![HumanoidBone::LeftUpperArm],
        seed: 81,
        ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::T)
    });
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("character0.gltf", gltf_json(&character).into_bytes()),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ];
    let mut app = gltf_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let characters = spawn_characters(
        &mut app,
        vec![("no left arm".into(), character, Retarget::new())],
        &walk,
    );
    let unmatched = app
        .world()
        .get::<UnmatchedTracks>(characters[0].root)
        .expect("reported");
    assert_eq!(
        unmatched.0,
        [
            "\" L UpperArm\" (id 32)",
            "\" L ForeArm\" (id 33)",
            "\" L Hand\" (id 34)"
        ],
        "{:?}",
        unmatched.0
    );
}

#[test]
fn a_gltf_character_changed_on_disk_is_spawned_again_and_retargeted_anew() {
    // A Mixamo-named T-pose character in centimetres replaced, while it walks, by an
    // Unreal-named A-pose one a third smaller: the scene is spawned again from the new file and
    // the clip binds to the new bones, rests compensated, as if it had been the first.
    let first = build(&Spec {
        size: 170.0,
        seed: 71,
        ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::T)
    });
    let second = build(&Spec {
        size: 1.2,
        arm: 1.1,
        seed: 72,
        ..Spec::new(Naming::Unreal, Arms::A(40.0))
    });
    let dir = bevy::asset::io::memory::Dir::default();
    let path = std::path::Path::new("character0.gltf");
    dir.insert_asset(path, gltf_json(&first).into_bytes());
    dir.insert_asset(
        std::path::Path::new("sa_ped.ifp"),
        crate::assets::read("anims/sa_ped.ifp"),
    );
    let mut app = crate::bevy_ifp::app_in(&dir, 1.0 / 30.0, gltf_plugins());
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (reference, reference_bones) = spawn_reference(&mut app, &walk, ());
    let mut spawned = spawn_characters(
        &mut app,
        vec![("Mixamo T".into(), first, Retarget::new())],
        &walk,
    );
    let all = [spawned[0].root, reference];
    set_time(&mut app, &all, 0.4);
    let (before, bone, _) = worst_direction(&app, &reference_bones, &spawned[0]);
    assert!(before < 2.0, "{before:.3}° at {bone}");

    dir.insert_asset(path, gltf_json(&second).into_bytes());
    app.world()
        .resource::<AssetServer>()
        .reload("character0.gltf");
    let names = second.names.clone();
    let humanoid = second.humanoid.clone();
    let mut bones = Vec::new();
    // Bounded by time, not frames: the reload runs on the task pool, late on a busy machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        app.update();
        bones = humanoid_entities(&mut app, spawned[0].root, &|n| {
            humanoid
                .iter()
                .find(|(_, i)| names[*i] == n)
                .map(|(b, _)| *b)
        });
        if bones.len() == humanoid.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(bones.len(), humanoid.len(), "the new character is spawned");
    let old = humanoid_entities(&mut app, spawned[0].root, &|n| {
        n.starts_with("mixamorig:").then_some(HumanoidBone::Hips)
    });
    assert!(old.is_empty(), "the old character's bones are gone");
    spawned[0].character = second;
    spawned[0].bones = bones;
    for t in [0.4, 0.75] {
        set_time(&mut app, &all, t);
        let (after, bone, compared) = worst_direction(&app, &reference_bones, &spawned[0]);
        assert!(compared >= 14, "{compared}");
        assert!(
            after < 2.0,
            "after the reload, {after:.3}° at {bone} ({t} s)"
        );
    }
}

/// A layer paused at `time`.
fn paused_layer(
    clip: &Handle<RigClip>,
    time: f32,
) -> rigplay::animation::layers::Layer<Handle<RigClip>> {
    let mut layer = rigplay::animation::layers::Layer::new(clip.clone());
    layer.playhead.paused = true;
    layer.playhead.seek(time);
    layer
}

#[test]
fn layers_on_retargeted_characters_point_every_bone_where_the_sa_skeletons_layers_do() {
    use rigplay::animation::layers::{BoneMask, LayerFlags};
    // The same layers on the built-in SA skeleton and on three glTF characters (Mixamo in a
    // Blender armature, Unreal in centimetres, VRoid without a left arm): each layer is
    // retargeted onto the character (rest-compensated, as a `SkeletalClip` alone is), then
    // mixed on the character's bones by the games' rule. Mixing the retargeted poses is not
    // the same sum as retargeting the mixed pose where a target bone takes a chain of source
    // bones, so the bound is the cross-fades' (2°); a single layer at weight 1 is the clip
    // alone (held to the single-clip bound of the test above).
    let list = built(specs());
    let files = files(&list);
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let meta = include_str!("../assets/anims/sa_ped.ifp.meta");
    let mut app = app_with(&refs, &[("sa_ped.ifp", meta)], 1.0 / 30.0, gltf_plugins());
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa_ped.ifp#idle");
    let wave: Handle<RigClip> = load(&mut app, "sa_ped.ifp#wave");
    let (reference, reference_bones) =
        spawn_reference(&mut app, &walk, Transform::from_xyz(-2.0, 0.0, 0.0));
    let characters = spawn_characters(&mut app, list, &walk);
    let all: Vec<Entity> = characters
        .iter()
        .map(|c| c.root)
        .chain([reference])
        .collect();
    // The layers replace the characters' own clip.
    for &e in &all {
        app.world_mut().entity_mut(e).remove::<SkeletalClip>();
    }
    type Stack = Vec<(rigplay::animation::layers::Layer<Handle<RigClip>>, f32)>;
    type Case<'a> = (&'a str, Box<dyn Fn(f32) -> Stack + 'a>);
    let cases: Vec<Case> = vec![
        (
            "the walk alone",
            Box::new(|t| vec![(paused_layer(&walk, t), 1.0)]),
        ),
        (
            "the walk under the wave (partial, weight 1)",
            Box::new(|t| {
                vec![
                    (paused_layer(&walk, t), 1.0),
                    (
                        paused_layer(&wave, t * 0.8).with_flags(LayerFlags::PARTIAL),
                        1.0,
                    ),
                ]
            }),
        ),
        (
            "walk 0.7 + idle 0.3, the wave at 0.5, the idle's left arm added",
            Box::new(|t| {
                let additive = paused_layer(&idle, t * 1.6)
                    .with_mask(BoneMask::LeftArm)
                    .additive(0.0);
                vec![
                    (paused_layer(&walk, t), 0.7),
                    (paused_layer(&idle, t * 1.6), 0.3),
                    (
                        paused_layer(&wave, t * 0.8).with_flags(LayerFlags::PARTIAL),
                        0.5,
                    ),
                    (additive, 0.5),
                ]
            }),
        ),
    ];
    for (what, stack) in &cases {
        let mut worst = vec![(0.0f32, String::new()); characters.len()];
        for k in 0..=10 {
            let t = 1.2 * k as f32 / 10.0;
            for &e in &all {
                let mut layers = ClipLayers::default();
                for (layer, weight) in stack(t) {
                    let layer = layer.with_weight(weight).expect("a weight");
                    layers.push(layer);
                }
                app.world_mut().entity_mut(e).insert(layers);
            }
            app.update();
            app.update();
            for (c, w) in characters.iter().zip(worst.iter_mut()) {
                let (angle, bone, _) = worst_direction(&app, &reference_bones, c);
                if angle > w.0 {
                    *w = (angle, format!("{bone} at {t:.2} s"));
                }
            }
        }
        for (c, (angle, at)) in characters.iter().zip(&worst) {
            eprintln!("{what} on {}: {angle:.3}° ({at})", c.label);
            assert!(*angle < 2.0, "{what} on {}: {angle:.3}° at {at}", c.label);
        }
        // The layers were bound retargeted: nothing reported unmatched but the missing arm.
        let report = app
            .world()
            .get::<LayerReport>(characters[0].root)
            .cloned()
            .unwrap_or_default();
        assert!(report.unmatched_tracks.is_empty(), "{what}: {report:?}");
    }
    // Root motion through a layer flagged for it: the walk, extracted (the sample's .meta),
    // moves the Mixamo character forward (+Z, its facing) by the ped's distance scaled by the
    // hip-height ratio, as a `SkeletalClip` alone does.
    let character = characters[0].root;
    for &e in &[character, reference] {
        let flags = LayerFlags {
            root_translation: true,
            ..LayerFlags::MOVEMENT
        };
        let layers = ClipLayers::default();
        let mut layers = layers;
        layers.push(rigplay::animation::layers::Layer::new(walk.clone()).with_flags(flags));
        app.world_mut()
            .entity_mut(e)
            .insert((layers, RootMotion::applied()));
    }
    app.update();
    let at = |app: &App, e| app.world().get::<Transform>(e).unwrap().translation;
    let (c0, r0) = (at(&app, character), at(&app, reference));
    for _ in 0..45 {
        app.update();
    }
    let (dc, dr) = (at(&app, character) - c0, at(&app, reference) - r0);
    assert!(dr.z < -0.3, "the ped walks −Z: {dr}");
    assert!(dc.z > 0.0, "the character walks +Z: {dc}");
    let scale = characters[0].character.hip_height / SA_HIP_HEIGHT;
    assert!(
        (dc.length() / dr.length() - scale).abs() < 1e-3 * scale,
        "{} vs {scale}",
        dc.length() / dr.length()
    );
}

/// Every node's transform under `root` in `root`'s space, by name.
fn nodes_under(app: &mut App, root: Entity) -> std::collections::HashMap<String, Affine3A> {
    let world = app.world_mut();
    let base = world
        .get::<GlobalTransform>(root)
        .unwrap()
        .affine()
        .inverse();
    let mut out = std::collections::HashMap::new();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(children.iter());
        }
        if let (Some(name), Some(at)) = (world.get::<Name>(e), world.get::<GlobalTransform>(e)) {
            out.insert(name.as_str().to_owned(), base * at.affine());
        }
    }
    out
}

/// The largest distance between a crowd character's nodes and its twin's (bone entities,
/// `Retarget`), over the nodes the crowd poses, and the node where it is.
fn crowd_against_twin(app: &mut App, crowd: Entity, twin: Entity) -> (f32, String) {
    let nodes = nodes_under(app, twin);
    let pose = app.world().get::<CrowdPose>(crowd).unwrap().clone();
    assert!(!pose.bones.is_empty(), "the crowd character is posed");
    let mut worst = (0.0f32, String::new());
    let mut compared = 0;
    for (b, m) in pose.bones.iter().enumerate() {
        let name = pose.names[b].clone();
        let Some(twin) = nodes.get(&name) else {
            continue;
        };
        compared += 1;
        let d = Vec3::from(m.translation).distance(twin.translation.into());
        if d > worst.0 {
            worst = (d, name);
        }
    }
    assert!(
        compared + 1 >= pose.bones.len(),
        "{compared} of {} nodes found",
        pose.bones.len()
    );
    worst
}

#[test]
fn a_gltf_crowd_character_puts_every_node_where_its_retargeted_twin_with_bone_entities_does() {
    // The three characters of `specs` (a Mixamo T-pose under a turned and scaled Blender
    // armature, an Unreal A-pose in centimetres, a small VRoid without a left arm or a right
    // toe), each as a crowd character wearing its glTF and as a `Retarget` character with bone
    // entities, playing the SA walk: every node at the same place, at 21 times of the walk,
    // at 11 times of the VC walk, through a cross-fade to the idle and after it,
    // and with layers over the idle (a partial wave, an additive left arm).
    //
    // Both retarget with the same maths, each for its own rig: the twin's hierarchy has nodes
    // the file has not (the scene's root, the mesh's primitives), so its plan is made apart and
    // refined on its own, and a bone taking a product of source bones is within 1e-4 rad of
    // the exact turn either way (`RETARGET_TOLERANCE`). Over a chain of at most 10 bones, each
    // with a lever of at most twice the hip height h, two such plans can put a node
    // 2 · 10 · 1e-4 · 2h = 4e-3 h apart: the bound. (Measured: 2.9e-6 h; 4.7e-4 h before the
    // alignment stopped reading the twin's scene root above the hips as a chain.)
    let list = built(specs());
    let sizes: Vec<f32> = list.iter().map(|(_, c, _)| c.hip_height).collect();
    let mut files = files(&list);
    files.push(("vc_ped.ifp".into(), crate::assets::read("anims/vc_ped.ifp")));
    files.push(("iii.ifp".into(), crate::gltf_validator::iii_walk()));
    let mut app = gltf_app(
        &files
            .iter()
            .map(|(p, b)| (p.as_str(), b.clone()))
            .collect::<Vec<_>>(),
    );
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa_ped.ifp#idle");
    let retargets: Vec<Retarget> = list.iter().map(|(_, _, r)| r.clone()).collect();
    let twins = spawn_characters(&mut app, list, &walk);
    let crowd: Vec<Entity> = (0..twins.len())
        .map(|i| {
            let model: Handle<bevy::gltf::Gltf> = load(&mut app, &format!("character{i}.gltf"));
            app.world_mut()
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdGltfModel {
                        model,
                        retarget: retargets[i].clone(),
                    },
                    Playback::looping(),
                    Transform::from_xyz(2.0 * i as f32, 0.0, 5.0),
                ))
                .id()
        })
        .collect();
    let mut all: Vec<Entity> = twins.iter().map(|t| t.root).collect();
    all.extend(&crowd);
    // Every twin's nodes were made bones at their rest as the file gives it, whichever frame
    // its scene spawned in (its clip was playing from the start, so a bone made after the first
    // posed frame took a posed transform for its rest).
    for (i, twin) in twins.iter().enumerate() {
        let model: Handle<bevy::gltf::Gltf> = load(&mut app, &format!("character{i}.gltf"));
        let world = app.world_mut();
        let file = world
            .resource::<Assets<bevy::gltf::Gltf>>()
            .get(&model)
            .unwrap();
        let nodes = world.resource::<Assets<bevy::gltf::GltfNode>>();
        let rests: std::collections::HashMap<String, Transform> = (file.nodes.iter())
            .map(|h| nodes.get(h).unwrap())
            .map(|n| (n.name.clone(), n.transform))
            .collect();
        let mut stack = vec![twin.root];
        let mut bones = 0;
        while let Some(e) = stack.pop() {
            if let Some(children) = world.get::<Children>(e) {
                stack.extend(children.iter());
            }
            let (Some(name), Some(bone)) = (world.get::<Name>(e), world.get::<RigBone>(e)) else {
                continue;
            };
            let Some(rest) = rests.get(name.as_str()) else {
                continue;
            };
            bones += 1;
            assert_eq!(bone.rest, *rest, "{}: {name}'s rest", twin.label);
        }
        assert_eq!(bones, rests.len(), "{}: every node a bone", twin.label);
    }
    set_time(&mut app, &all, 0.0);
    set_time(&mut app, &all, 0.0);
    // Each crowd character's report is its twin's: the convention, the bones found and missing,
    // the same GTA bone to the same node (the twin's names also hold its scene's root and
    // primitives, no humanoid bones).
    for (twin, &c) in twins.iter().zip(&crowd) {
        let world = app.world();
        let theirs = world.get::<RetargetReport>(twin.root).unwrap();
        let ours = world.get::<CrowdRigReport>(c).unwrap().get();
        let ours = ours.unwrap_or_else(|| panic!("{}: a crowd report", twin.label));
        assert_eq!(ours.preset, theirs.preset, "{}", twin.label);
        assert_eq!(
            ours.report.unmatched, theirs.report.unmatched,
            "{}",
            twin.label
        );
        assert_eq!(ours.map, theirs.map, "{}", twin.label);
        assert!(ours.map.len() >= 17, "{}: {:?}", twin.label, ours.map);
        // Named as the crowd poses them: the file's nodes.
        let posed = &world.get::<CrowdPose>(c).unwrap().names;
        assert_eq!(ours.names[..], posed[..], "{}", twin.label);
    }
    let duration = app.world().get::<Playback>(crowd[0]).unwrap().duration;
    let duration = duration.expect("the crowd character is bound");
    let mut worst = 0.0f32;
    let mut check = |app: &mut App, when: &str| {
        for (i, twin) in twins.iter().enumerate() {
            let (d, node) = crowd_against_twin(app, crowd[i], twin.root);
            worst = worst.max(d / sizes[i]);
            assert!(
                d <= 4e-3 * sizes[i],
                "{}: {node} {d} apart {when} (size {})",
                twin.label,
                sizes[i]
            );
        }
    };
    for k in 0..21 {
        let t = duration * k as f32 / 20.0;
        set_time(&mut app, &all, t);
        check(&mut app, &format!("at {t:.3} s"));
    }
    // A GTA III walk (two bones keyed, the waist turned a quarter from its rest), VC's walk,
    // then the SA walk again. (The III walk found a bone's chain taken through the twin's
    // scene root, unmapped, above the hips: its hips were aligned as a bone carrying on a chain
    // from the origin, the crowd's as the root they are, 16° apart.)
    for path in ["iii.ifp#walk_civi", "vc_ped.ifp#walk", "sa_ped.ifp#walk"] {
        let clip: Handle<RigClip> = load(&mut app, path);
        for (twin, &c) in twins.iter().zip(&crowd) {
            let world = app.world_mut();
            world.get_mut::<SkeletalClip>(twin.root).unwrap().clip = clip.clone();
            world.get_mut::<CrowdCharacter>(c).unwrap().clip = clip.clone();
        }
        set_time(&mut app, &all, 0.0);
        let duration = app.world().get::<Playback>(crowd[0]).unwrap().duration;
        let duration = duration.unwrap_or_else(|| panic!("{path}: bound"));
        // (And the clip moves the character: some node goes 1 % of its hip height or more.)
        let pose = |app: &App| {
            app.world()
                .get::<CrowdPose>(crowd[0])
                .unwrap()
                .bones
                .clone()
        };
        let first = pose(&app);
        let mut moved = 0.0f32;
        for k in 0..11 {
            let t = duration * k as f32 / 10.0;
            set_time(&mut app, &all, t);
            check(&mut app, &format!("{path} at {t:.3} s"));
            for (a, b) in first.iter().zip(pose(&app)) {
                moved = moved.max(Vec3::from(a.translation).distance(b.translation.into()));
            }
        }
        assert!(moved >= 0.01 * sizes[0], "{path} moved a node {moved}");
    }
    // A cross-fade to the idle, on both, playing.
    for (twin, &c) in twins.iter().zip(&crowd) {
        let world = app.world_mut();
        world.get_mut::<Playback>(twin.root).unwrap().paused = false;
        world.get_mut::<Playback>(c).unwrap().paused = false;
        (world.get_mut::<SkeletalClip>(twin.root).unwrap()).cross_fade(idle.clone(), 0.5);
        (world.get_mut::<CrowdCharacter>(c).unwrap()).cross_fade(idle.clone(), 0.5);
    }
    for (frames, when) in [(8, "8 frames into the fade"), (30, "after the fade")] {
        for _ in 0..frames {
            app.update();
        }
        check(&mut app, when);
    }
    // Layers over the idle: the wave (partial, weight 1) and the walk's left arm added at 0.5,
    // on both, through a run of frames.
    let wave: Handle<RigClip> = load(&mut app, "sa_ped.ifp#wave");
    for &e in &all {
        use rigplay::animation::layers::{BoneMask, LayerFlags};
        let mut layers = ClipLayers::default();
        layers.push(paused_layer(&wave, 0.4).with_flags(LayerFlags::PARTIAL));
        let arm = paused_layer(&walk, 0.3).with_mask(BoneMask::LeftArm);
        layers.push(arm.additive(0.0).with_weight(0.5).expect("a weight"));
        app.world_mut().entity_mut(e).insert(layers);
    }
    for k in 0..3 {
        app.update();
        app.update();
        check(&mut app, &format!("with layers, {k}"));
    }
    eprintln!("the farthest a node was from its twin's: {worst:.2e} of the hip height");
}

#[test]
fn a_non_humanoid_or_broken_gltf_in_the_crowd_rests_and_plays_on() {
    // The vehicle of `broken_and_non_humanoid_gltf_give_a_report_not_a_panic` as a crowd
    // character: its nodes rest where the file puts them (a warning says the walk drives none of
    // them), and its playhead runs. A file that fails to load leaves its character unposed.
    let files = vehicle_and_broken_gltf();
    let mut app = gltf_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let model: Handle<bevy::gltf::Gltf> = load(&mut app, "vehicle.gltf");
    let broken: Handle<bevy::gltf::Gltf> =
        app.world().resource::<AssetServer>().load("broken.gltf");
    let spawn = |app: &mut App, model: &Handle<bevy::gltf::Gltf>| {
        app.world_mut()
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdGltfModel::new(model.clone()),
                Playback::looping(),
            ))
            .id()
    };
    let car = spawn(&mut app, &model);
    let nothing = spawn(&mut app, &broken);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        app.update();
        let failed = app
            .world()
            .resource::<AssetServer>()
            .load_state(&broken)
            .is_failed();
        let posed = !app.world().get::<CrowdPose>(car).unwrap().bones.is_empty();
        if failed && posed {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no outcome after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    for _ in 0..5 {
        app.update();
    }
    let pose = app.world().get::<CrowdPose>(car).unwrap();
    assert_eq!(&pose.names[..], ["chassis", "wheel_fl", "wheel_fr"]);
    // Its report says so: no humanoid bone, every node unused; none for the broken file.
    let report = app.world().get::<CrowdRigReport>(car).unwrap().get();
    let report = report.expect("a report");
    assert!(report.report.matched.is_empty());
    assert_eq!(report.report.unused, ["chassis", "wheel_fl", "wheel_fr"]);
    assert!(report.map.is_empty());
    assert!(
        app.world()
            .get::<CrowdRigReport>(nothing)
            .unwrap()
            .get()
            .is_none()
    );
    assert_eq!(
        Vec3::from(pose.bones[1].translation),
        Vec3::new(1.0, 0.0, 1.0)
    );
    assert_eq!(
        Vec3::from(pose.bones[2].translation),
        Vec3::new(-1.0, 0.0, 1.0)
    );
    assert!(
        app.world().get::<Playback>(car).unwrap().time > 0.0,
        "plays on"
    );
    assert!(
        app.world()
            .get::<CrowdPose>(nothing)
            .unwrap()
            .bones
            .is_empty()
    );
}

/// A glTF model changed under a playing crowd character is posed from its new nodes in the
/// frame its change is announced (`AssetEvent::Modified`, sent in `AssetEventSystems`), not a
/// frame later on the rig of the file as it was: the rig is made again after those events.
#[test]
fn a_changed_gltf_model_poses_its_crowd_characters_in_the_frame_it_changes() {
    let files = vehicle_and_broken_gltf();
    let mut app = gltf_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let model: Handle<bevy::gltf::Gltf> = load(&mut app, "vehicle.gltf");
    let car = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            CrowdGltfModel::new(model.clone()),
            Playback::looping(),
        ))
        .id();
    let wheel = |app: &App| {
        let pose = app.world().get::<CrowdPose>(car).unwrap();
        (pose.bones.len() == 3).then(|| Vec3::from(pose.bones[1].translation))
    };
    for _ in 0..600 {
        app.update();
        if wheel(&app).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(wheel(&app), Some(Vec3::new(1.0, 0.0, 1.0)), "posed at rest");
    // Ten changes, each one frame: the front left wheel moved out by 0.1 m each time, and the
    // file taken mutably so that its change is announced in that frame's `AssetEventSystems`.
    for step in 1..=10 {
        let x = 1.0 + 0.1 * step as f32;
        let world = app.world_mut();
        let node = {
            let gltfs = world.resource::<Assets<bevy::gltf::Gltf>>();
            gltfs.get(&model).unwrap().named_nodes["wheel_fl"].clone()
        };
        let mut nodes = world.resource_mut::<Assets<bevy::gltf::GltfNode>>();
        nodes.get_mut(&node).unwrap().transform.translation.x = x;
        let mut gltfs = world.resource_mut::<Assets<bevy::gltf::Gltf>>();
        // (Taken mutably, as the guard gives it: only then is it marked changed.)
        gltfs.get_mut(&model).unwrap().into_inner();
        app.update();
        let at = wheel(&app).expect("posed");
        assert!(
            (at - Vec3::new(x, 0.0, 1.0)).length() < 1e-5,
            "change {step}: the wheel at {at}, not at x = {x} in the frame of the change"
        );
    }
}

/// A crowd character wearing a glTF model with `CrowdSkinPose` gets, per skinned mesh node, the
/// skin matrices Bevy skins its twin's `SkinnedMesh` with (a `Retarget` character with the
/// file's scene, playing the same clip at the same time): each joint's transform relative to the
/// character times its inverse bind matrix. The sample character with a second body on a second
/// skin whose joints are the first's in reverse order (`crowd_gpu::with_second_skin`), so that
/// each palette must follow its own skin's joint order; at three times of the SA walk.
///
/// The two retarget the same clip each for its own rig, which puts a node at most 4e-3 of the
/// hip height apart (the test above; measured there 2.9e-6). A palette's translation carries
/// that; its rotation part, a turn of at most 4e-3 rad over the same levers. So each matrix
/// entry and translation is held to 4e-3 of the hip height (`hip`, about 1 m here).
#[test]
fn a_gltf_crowd_character_gets_the_skin_matrices_bevy_skins_its_twin_with() {
    use bevy::mesh::skinning::SkinnedMesh;
    use rigplay::skeleton::GtaGame;
    let glb = crate::crowd_gpu::with_second_skin(&crate::assets::read("characters/humanoid.glb"));
    let mut app = gltf_app(&[
        ("skins.glb", glb),
        ("sa_ped.ifp", crate::assets::read("anims/sa_ped.ifp")),
    ]);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let scene: Handle<WorldAsset> = load(&mut app, "skins.glb#Scene0");
    let file: Handle<bevy::gltf::Gltf> = load(&mut app, "skins.glb");
    let twin = spawn_retargeted(&mut app, scene, &walk);
    // Elsewhere and turned: the palettes are in the character's space.
    let at = Transform::from_xyz(4.0, 0.0, -2.0).with_rotation(Quat::from_rotation_y(0.7));
    let crowd = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk.clone()),
            CrowdGltfModel::new(file.clone()),
            CrowdSkinPose::default(),
            Playback::looping(),
            at,
        ))
        .id();
    for _ in 0..5 {
        app.update();
    }
    // The skinned mesh nodes' indices in the file.
    let (body, body2) = (
        index_of_in(app.world(), &file, "Body"),
        index_of_in(app.world(), &file, "Body2"),
    );
    let hip = 1.0;
    let (mut farthest, mut compared) = (0.0f32, 0);
    // How far the palettes moved a joint's bind point from where it was bound (the identity
    // would leave it), and from one time to the next.
    let (mut from_bind, mut between) = (0.0f32, 0.0f32);
    let mut last: Option<Vec<SkinPalette>> = None;
    for t in [0.1, 0.45, 0.9] {
        set_time(&mut app, &[twin, crowd], t);
        let world = app.world_mut();
        let root = world.get::<GlobalTransform>(twin).unwrap().affine();
        let palettes = world.get::<CrowdSkinPose>(crowd).unwrap().palettes.clone();
        let moved = |a: &Affine3A, b: &Affine3A| Vec3::from(a.translation - b.translation).length();
        for p in &palettes {
            for m in &p.joints {
                from_bind = from_bind.max(moved(m, &Affine3A::IDENTITY));
            }
        }
        if let Some(last) = &last {
            for (a, b) in last.iter().zip(&palettes) {
                for (m, n) in a.joints.iter().zip(&b.joints) {
                    between = between.max(moved(m, n));
                }
            }
        }
        last = Some(palettes.clone());
        let meshes: Vec<usize> = palettes.iter().map(|p| p.mesh).collect();
        assert_eq!(
            meshes,
            [body, body2],
            "a palette per skinned node, in the file's order"
        );
        let skins: Vec<(Entity, SkinnedMesh)> = (world.query::<(Entity, &SkinnedMesh)>())
            .iter(world)
            .map(|(e, s)| (e, s.clone()))
            .collect();
        assert_eq!(skins.len(), 2, "the twin's two skinned meshes");
        for (entity, skin) in &skins {
            // The primitive's entity is a child of its node's, which bears the node's name.
            let node = world.get::<ChildOf>(*entity).unwrap().parent();
            let name = world.get::<Name>(node).unwrap().as_str().to_owned();
            let index = index_of_in(world, &file, &name);
            let ours = &palettes.iter().find(|p| p.mesh == index).unwrap().joints;
            farthest = farthest.max(crate::bevy_dff::palette_gap(world, root, skin, ours));
            compared += ours.len();
        }
    }
    println!(
        "glTF crowd skin palettes against Bevy's skinning: {compared} matrices, largest difference {farthest:e}; a palette moves a bind point up to {from_bind} m, {between} m between two times"
    );
    assert_eq!(compared, 3 * 2 * 27);
    assert!(from_bind > 0.05 && between > 0.02, "the walk plays");
    assert!(farthest <= 4e-3 * hip, "{farthest}");
}

/// `scene` spawned as a `Retarget` character with default settings, looping `clip`.
fn spawn_retargeted(app: &mut App, scene: Handle<WorldAsset>, clip: &Handle<RigClip>) -> Entity {
    let character = (
        WorldAssetRoot(scene),
        Retarget::new(),
        SkeletalClip::new(clip.clone()),
        Playback::looping(),
    );
    app.world_mut().spawn(character).id()
}

/// The index in `file` of its node named `name`.
fn index_of_in(world: &World, file: &Handle<bevy::gltf::Gltf>, name: &str) -> usize {
    let gltf = world.resource::<Assets<bevy::gltf::Gltf>>().get(file);
    let node = gltf.unwrap().named_nodes[name].clone();
    let nodes = world.resource::<Assets<bevy::gltf::GltfNode>>();
    nodes.get(&node).unwrap().index
}
