//! A glTF's own animation, as Bevy's glTF loader loads it, on the SA, VC and III peds through
//! `Retarget` (`GltfClips`): the mocap walk of `bvh_fixtures.rs` as a Mixamo-named `.glb` whose
//! nodes stand turned from the walk's rest, a skinned mesh's skin keeping that rest
//! (`gltf_import::gltf_posed_of`), must pose each ped as the same file read by rigplay's own glTF
//! reader does, and as the file loaded as a `Motion` for that game (imported into the game's
//! axes and written as its IFP) does.

use crate::bevy_ifp::{app_with, load};
use crate::gltf_import::{Naming, gltf_posed_of};
use bevy::ecs::system::RunSystemOnce;
use bevy::gltf::{Gltf, GltfPlugin};
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy::world_serialization::WorldSerializationPlugin;
use rigplay::animation::retarget::BonePreset;
use rigplay::convert::import::gltf_source;
use rigplay::formats::bvh::BvhFile;
use rigplay::formats::gltf::GltfScene;
use rigplay::plugin::*;
use rigplay::skeleton::GtaGame;
use std::sync::Arc;

/// Each bone's position relative to its character's root, for every character, at `t`.
fn poses_at(app: &mut App, characters: &[Entity], t: f32) -> Vec<Vec<Vec3>> {
    for &c in characters {
        app.world_mut().get_mut::<Playback>(c).unwrap().seek(t);
    }
    app.update();
    let world = app.world();
    characters
        .iter()
        .map(|&c| {
            let root = world.get::<GlobalTransform>(c).unwrap().translation();
            world
                .get::<SkeletonBones>(c)
                .unwrap()
                .0
                .iter()
                .map(|b| world.get::<GlobalTransform>(*b).unwrap().translation() - root)
                .collect()
        })
        .collect()
}

fn farthest(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| x.distance(*y))
        .fold(0.0, f32::max)
}

/// A `.meta` loading a glTF as a [`Motion`] onto `game`'s ped.
fn motion_meta(game: &str) -> String {
    format!(
        "(meta_format_version: \"1.0\", asset: Load(loader: \"rigplay::plugin::MotionLoader\", settings: (skeleton: Some({game}))))"
    )
}

#[test]
fn a_gltf_animation_loaded_by_bevy_plays_on_each_games_ped_as_the_file_imported_does() {
    let bvh = BvhFile::read(crate::bvh_fixtures::mocap_walk(31).as_bytes())
        .unwrap()
        .file;
    let glb = gltf_posed_of(&bvh, Naming::Mixamo, true);
    let mut app = app_with(
        // A name per loader: one path loaded by two loaders would share its labels
        // (`#Animation0` is Bevy's clip in a `Gltf` and the imported clip in a `Motion`). The
        // `.meta` files load the others as Motions onto each game's ped.
        &[
            ("walk.glb", glb.clone()),
            ("walk-Sa.glb", glb.clone()),
            ("walk-Vc.glb", glb.clone()),
            ("walk-Iii.glb", glb.clone()),
        ],
        &[
            ("walk-Sa.glb", motion_meta("Sa").as_str()),
            ("walk-Vc.glb", motion_meta("Vc").as_str()),
            ("walk-Iii.glb", motion_meta("Iii").as_str()),
        ],
        1.0 / 30.0,
        (WorldSerializationPlugin, MeshPlugin, GltfPlugin::default()),
    );
    // Asked for before the file is in: not loaded (yet).
    let early: Handle<Gltf> = app.world().resource::<AssetServer>().load("walk.glb");
    let ask = |app: &mut App, gltf: &Handle<Gltf>, name: &'static str, settings: ClipSettings| {
        let gltf = gltf.clone();
        app.world_mut()
            .run_system_once(move |clips: GltfClips| clips.rig_clip(&gltf, name, settings))
            .unwrap()
    };
    assert_eq!(
        ask(&mut app, &early, "walk", ClipSettings::default()).unwrap_err(),
        GltfClipError::NotLoaded
    );
    let gltf: Handle<Gltf> = load(&mut app, "walk.glb");

    // Refused: a name the file lacks (the names it has are listed), and root motion taken out.
    let looping = ClipSettings {
        looping: true,
        root_motion: RootMotionMode::Baked,
    };
    match ask(&mut app, &gltf, "run", looping) {
        Err(GltfClipError::NoAnimation { name, available }) => {
            assert_eq!((name.as_str(), available), ("run", vec!["walk".to_owned()]));
        }
        other => panic!("{other:?}"),
    }
    let in_place = ClipSettings {
        root_motion: RootMotionMode::InPlace,
        ..looping
    };
    assert!(matches!(
        ask(&mut app, &gltf, "walk", in_place),
        Err(GltfClipError::RootMotion(RootMotionMode::InPlace))
    ));
    // By name, and by index: the same clip.
    let made = ask(&mut app, &gltf, "walk", looping).unwrap();
    let by_index = ask(&mut app, &gltf, "0", looping).unwrap();
    assert!(made.warnings.is_empty(), "{:?}", made.warnings);
    assert_eq!(made.clip.clip.tracks().len(), 22, "every joint of the walk");
    assert_eq!(
        by_index.clip.clip.tracks().len(),
        made.clip.clip.tracks().len()
    );
    // Its source skeleton: the 24 nodes (the Armature, the 22 joints, the skinned mesh's node),
    // at the skin's rest (the nodes stand turned 25° from it).
    let source = made.clip.source.clone().expect("a source skeleton");
    assert_eq!(source.names.len(), 24);
    assert_eq!(source.names[1], "mixamorig:Hips");
    let hips_rest = source.rest.local[1];
    assert!(
        hips_rest.1.angle_between(Quat::IDENTITY) < 1e-4,
        "the skin's rest, not the node's turn: {:?}",
        hips_rest.1
    );

    // The same file read by rigplay's own reader, made a clip the same way.
    let scene = GltfScene::read(&glb, |_| None).unwrap().scene;
    let (own_source, own_clip) = gltf_source(&scene, &scene.animations[0]).unwrap();
    let own = RigClip::new(
        ClipInfo::new(
            Arc::new(own_clip),
            looping,
            made.clip.tracks.clone(),
            None,
            Some(Arc::new(own_source)),
        ),
        Handle::default(),
    );
    let (bevy_clip, own_clip) = {
        let mut clips = app.world_mut().resource_mut::<Assets<RigClip>>();
        (clips.add(made.clip), clips.add(own))
    };
    let mut paused = Playback::looping();
    paused.paused = true;
    // On each game's ped: the two glTF clips retargeted (the roots face −Z, as an imported
    // ped does), and the file imported for that game on a plain ped.
    let retargeted = || Retarget::default().with_axes(CharacterAxes::Bevy);
    for (ped, game) in [
        (GtaSkeleton::SA, GtaGame::Sa),
        (GtaSkeleton::VC, GtaGame::Vc),
        (GtaSkeleton::III, GtaGame::Iii),
    ] {
        let path = format!("walk-{game:?}.glb");
        let motion: Handle<Motion> = load(&mut app, &path);
        let imported = {
            let motions = app.world().resource::<Assets<Motion>>();
            let motion = motions.get(&motion).unwrap();
            assert_eq!(motion.ifp.game, game);
            motion.ifp.clips[0].handle.clone()
        };
        let characters = [
            app.world_mut()
                .spawn((
                    ped,
                    retargeted(),
                    SkeletalClip::new(bevy_clip.clone()),
                    paused.clone(),
                ))
                .id(),
            app.world_mut()
                .spawn((
                    ped,
                    retargeted(),
                    SkeletalClip::new(own_clip.clone()),
                    paused.clone(),
                ))
                .id(),
            app.world_mut()
                .spawn((ped, SkeletalClip::new(imported), paused.clone()))
                .id(),
        ];
        for _ in 0..3 {
            app.update();
        }
        let report = app
            .world()
            .get::<RetargetReport>(characters[0])
            .expect("a retarget report");
        assert_eq!(
            report.preset,
            BonePreset::Gta,
            "{game:?}: the ped's own names"
        );
        assert!(
            report.problems.is_empty(),
            "{game:?}: {:?}",
            report.problems
        );
        let (mut to_own, mut to_imported, mut moved) = (0.0f32, 0.0f32, 0.0f32);
        let start = poses_at(&mut app, &characters, 0.0);
        for t in [0.0, 0.2, 0.45, 0.7, 0.95] {
            let poses = poses_at(&mut app, &characters, t);
            to_own = to_own.max(farthest(&poses[0], &poses[1]));
            // The bones that place the mesh. The `Root` (bone 0) is left out: the import writes
            // the hips' movement on it, as the games' clips have it (the Pelvis then rests on
            // it), where a retargeted ped moves its Pelvis and keeps the Root at rest.
            to_imported = to_imported.max(farthest(&poses[0][1..], &poses[2][1..]));
            moved = moved.max(farthest(&poses[0], &start[0]));
        }
        println!(
            "{game:?}: Bevy's clip against rigplay's reader {to_own} m, against the import {to_imported} m; moved {moved} m"
        );
        // The walk moves the ped by a metre; the curves sampled at 60 a second give back the
        // keys at 30 a second and the slerps between them (measured on SA: 8.5e-7 m). The
        // import is written as the game's IFP: ANP3's translations step by 1/1024 m and its
        // rotations by 1/4096 (measured on SA: 0.7 mm).
        assert!(moved > 1.0, "{game:?}: {moved} m");
        assert!(to_own < 1e-5, "{game:?}: {to_own} m");
        assert!(to_imported < 2e-3, "{game:?}: {to_imported} m");
    }
}

/// The same Bevy clip on the bundled DFF ped (`GtaModel`, whose frames are SA's offsets) through
/// `Retarget`: every joint is where it is on the built-in SA skeleton retargeted the same way, at
/// rest and through the walk (measured: 6.5e-7 m over 128 joint positions).
///
/// The DFF stores the same bones in another order (its Pelvis lists R Thigh, L Thigh, Spine; its
/// Neck the clavicles before the Head). Until the retargeter's rest alignment stopped depending on
/// the order (`animation::retarget`, step 2), the legs and head were 0.22 m off here.
#[test]
fn a_gltf_animation_loaded_by_bevy_plays_on_a_dff_ped_as_on_the_sa_skeleton() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let ped = std::fs::read(assets.join("characters/ped.dff")).unwrap();
    let (compared, moved, farthest) = dff_ped_against_the_skeleton(ped, GtaSkeleton::SA, 1.0, None);
    println!(
        "DFF ped against the SA skeleton: {compared} joint positions, farthest {farthest} m; moved {moved} m"
    );
    assert!(compared >= 4 * 20, "{compared}");
    assert!(moved > 0.5, "{moved} m");
    assert!(farthest < 1e-3, "{farthest} m");
}

/// The same on a ped whose bones are 1.25 times as long as SA's (every frame's offset scaled, as
/// models in the wild differ from the built-in table): the retargeter scales the hips' movement
/// to the ped's hip height and keeps the ped's own offsets, so relative to its pelvis every joint
/// is 1.25 times as far as the SA skeleton's, at rest and through the walk.
#[test]
fn a_gltf_animation_on_a_dff_ped_of_other_proportions_keeps_them() {
    let k = 1.25;
    let (compared, moved, farthest) = dff_ped_against_the_skeleton(
        crate::bevy_dff::scaled_ped(k),
        GtaSkeleton::SA,
        k,
        Some("pelvis"),
    );
    println!(
        "DFF ped scaled by {k} against the SA skeleton: {compared} joint positions, farthest {farthest} m from {k} × its pose; moved {moved} m"
    );
    assert!(compared >= 4 * 20, "{compared}");
    assert!(farthest < 1e-3, "{farthest} m");
    // The hips' movement is scaled to the ped's hip height: the ped travels k times as far as
    // the bundled ped of SA's proportions (1.2589 m in 0.9 s, measured).
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let ped = std::fs::read(assets.join("characters/ped.dff")).unwrap();
    let (_, plain, _) = dff_ped_against_the_skeleton(ped, GtaSkeleton::SA, 1.0, None);
    assert!(
        (moved - k * plain).abs() < 1e-3,
        "{moved} m against {plain} m"
    );
}

/// The same on a skinned Vice City ped (`bevy_dff::skinned_ped`, written field by field on VC's
/// bones, the old skin layout): the glTF's clip through `Retarget` puts every joint where it
/// puts the built-in VC skeleton's.
#[test]
fn a_gltf_animation_loaded_by_bevy_plays_on_a_vc_dff_ped_as_on_vcs_skeleton() {
    use crate::bevy_dff::{VC, skinned_ped};
    let ped = skinned_ped(VC, &rigplay::skeleton::Skeleton::gta_vc());
    let (compared, moved, farthest) = dff_ped_against_the_skeleton(ped, GtaSkeleton::VC, 1.0, None);
    println!(
        "VC DFF ped against the VC skeleton: {compared} joint positions, farthest {farthest} m; moved {moved} m"
    );
    assert!(compared >= 4 * 20, "{compared}");
    assert!(moved > 0.5, "{moved} m");
    assert!(farthest < 1e-3, "{farthest} m");
}

/// The same on a GTA III ped of parts (`bevy_dff::parts_ped`, written field by field: III's 16
/// named frames at the built-in III skeleton's rest, a rigid part on each, no skin): the glTF's
/// clip through `Retarget` puts every frame where it puts the built-in III skeleton's bones.
#[test]
fn a_gltf_animation_loaded_by_bevy_plays_on_a_iii_ped_of_parts_as_on_iiis_skeleton() {
    let ped = crate::bevy_dff::parts_ped(&rigplay::skeleton::Skeleton::gta_iii());
    // Relative to the waist: the model stands on its lowest vertex (a part's triangle reaches
    // 5 cm past the foot frames), the skeleton on its lowest joint.
    let (compared, moved, farthest) =
        dff_ped_against_the_skeleton(ped, GtaSkeleton::III, 1.0, Some("Swaist"));
    println!(
        "III DFF ped of parts against the III skeleton: {compared} joint positions, farthest {farthest} m; moved {moved} m"
    );
    assert!(compared >= 4 * 15, "{compared}");
    assert!(moved > 0.5, "{moved} m");
    assert!(farthest < 1e-3, "{farthest} m");
}

/// Plays the mocap walk, as a glTF loaded by Bevy, through `Retarget` on the built-in skeleton
/// `built_in` and on the DFF ped `ped`, paused at 0, 0.3, 0.6 and 0.9 s. Returns how many joint positions
/// were compared, how far the ped's joints moved from their first pose, and the farthest a ped
/// joint is from `k` times the skeleton's joint of the same name, both taken relative to the
/// joint `relative_to` of each (the characters' roots with `None`).
fn dff_ped_against_the_skeleton(
    ped: Vec<u8>,
    built_in: GtaSkeleton,
    k: f32,
    relative_to: Option<&str>,
) -> (usize, f32, f32) {
    use crate::bevy_dff::joint_positions;
    let bvh = BvhFile::read(crate::bvh_fixtures::mocap_walk(31).as_bytes())
        .unwrap()
        .file;
    let glb = gltf_posed_of(&bvh, Naming::Mixamo, true);
    let mut app = app_with(
        &[("walk.glb", glb), ("characters/ped.dff", ped)],
        &[],
        1.0 / 30.0,
        (
            ImagePlugin::default(),
            MeshPlugin,
            WorldSerializationPlugin,
            GltfPlugin::default(),
            rigplay::plugin::DffPlugin,
        ),
    );
    app.init_asset::<StandardMaterial>();
    let gltf: Handle<Gltf> = load(&mut app, "walk.glb");
    let ped: Handle<rigplay::plugin::Dff> = load(&mut app, "characters/ped.dff");
    let made = app
        .world_mut()
        .run_system_once(move |clips: GltfClips| {
            clips.rig_clip(&gltf, "walk", ClipSettings::default())
        })
        .unwrap()
        .unwrap();
    let clip = app
        .world_mut()
        .resource_mut::<Assets<RigClip>>()
        .add(made.clip);
    let mut paused = Playback::looping();
    paused.paused = true;
    let retargeted = || Retarget::default().with_axes(CharacterAxes::Bevy);
    let skeleton = app
        .world_mut()
        .spawn((
            built_in,
            retargeted(),
            SkeletalClip::new(clip.clone()),
            paused.clone(),
        ))
        .id();
    let model = app
        .world_mut()
        .spawn((
            rigplay::plugin::GtaModel::new(ped),
            retargeted(),
            SkeletalClip::new(clip),
            paused,
            Transform::from_xyz(3.0, 0.0, 0.0),
        ))
        .id();
    for _ in 0..4 {
        app.update();
    }
    let (mut farthest, mut moved, mut compared) = (0.0f32, 0.0f32, 0);
    let start = joint_positions(&mut app, model);
    for t in [0.0, 0.3, 0.6, 0.9] {
        for e in [skeleton, model] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        let a = joint_positions(&mut app, skeleton);
        let b = joint_positions(&mut app, model);
        let at = |e: Entity| app.world().get::<GlobalTransform>(e).unwrap().translation();
        let joint = |v: &[(String, Vec3)], name: &str| {
            v.iter()
                .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
                .unwrap()
                .1
        };
        let (ra, rb) = match relative_to {
            None => (at(skeleton), at(model)),
            Some(name) => (joint(&a, name), joint(&b, name)),
        };
        for (name, p) in &b {
            // The `Root` is left out: its rest differs between the two (the DFF's `Normal`).
            if name.eq_ignore_ascii_case("root") {
                continue;
            }
            let Some((_, q)) = a.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
                continue;
            };
            farthest = farthest.max((*p - rb).distance((*q - ra) * k));
            compared += 1;
        }
        for ((_, p), (_, q)) in b.iter().zip(&start) {
            moved = moved.max(p.distance(*q));
        }
    }
    (compared, moved, farthest)
}
