//! glTF exports played by Bevy's own glTF loader and `AnimationPlayer`, against rigplay's
//! playback of the source on the built-in skeleton: every joint within 1e-4 m, for every game.

use crate::bevy_ifp::{app_with, load};
use bevy::gltf::GltfPlugin;
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot, WorldSerializationPlugin};
use rigplay::convert::gltf::{GltfClip, GltfExport, RootMotionExport};
use rigplay::formats::ifp::IfpFile;
use rigplay::plugin::*;
use rigplay::skeleton::GtaGame;
use std::collections::HashMap;
use std::f32::consts::PI;

/// Every named descendant of `root` and its world position.
fn positions(app: &mut App, root: Entity) -> HashMap<String, Vec3> {
    let world = app.world_mut();
    let mut out = HashMap::new();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(children.iter());
        }
        if e != root
            && let (Some(name), Some(g)) = (world.get::<Name>(e), world.get::<GlobalTransform>(e))
        {
            out.insert(name.as_str().to_owned(), g.translation());
        }
    }
    out
}

/// The entity under `root` with an `AnimationPlayer` (the glTF loader puts it on the node above
/// the animated ones).
fn player_under(app: &mut App, root: Entity) -> Entity {
    let world = app.world_mut();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if world.get::<AnimationPlayer>(e).is_some() {
            return e;
        }
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(children.iter());
        }
    }
    panic!("the glTF scene has an AnimationPlayer");
}

/// Exports every clip of `ifp` for `game` and plays each, in Bevy's glTF loader and on
/// rigplay's skeleton, at 11 times; the largest joint distance and where.
fn compare(game: GtaGame, ifp: Vec<u8>) -> (f32, String, usize) {
    let package = IfpFile::read(&ifp).unwrap().file;
    let skeleton = game.skeleton();
    let clips = crate::gltf_export::played_clips(&package, game, &skeleton);
    // On the ground, as rigplay's skeleton stands.
    let (glb, report) = GltfExport::gta(
        &skeleton,
        clips
            .iter()
            .map(|(clip, targets)| GltfClip { clip, targets })
            .collect(),
        RootMotionExport::Baked,
    )
    .to_glb()
    .unwrap();
    assert_eq!(report.animations, clips.len());
    let meta = format!(
        "(meta_format_version: \"1.0\", asset: Load(loader: \"rigplay::plugin::IfpLoader\", settings: (skeleton: Some({game:?}))))"
    );
    let mut app = app_with(
        &[("ped.glb", glb), ("ped.ifp", ifp)],
        &[("ped.ifp", &meta)],
        1.0 / 30.0,
        (WorldSerializationPlugin, MeshPlugin, GltfPlugin::default()),
    );
    // Every handle first: the scene is spawned once everything it and the reference play is
    // loaded.
    let animations: Vec<Handle<AnimationClip>> = (0..clips.len())
        .map(|i| load(&mut app, &format!("ped.glb#Animation{i}")))
        .collect();
    let ours: Vec<Handle<RigClip>> = (0..clips.len())
        .map(|i| load(&mut app, &format!("ped.ifp#Clip{i}")))
        .collect();
    let scene: Handle<WorldAsset> = load(&mut app, "ped.glb#Scene0");
    let mut worst = (0.0f32, String::new(), 0);
    for (index, (clip, _)) in clips.iter().enumerate() {
        // A fresh scene and skeleton per clip: Bevy's player leaves the joints a clip does not
        // animate where the last clip put them; rigplay's puts them at rest.
        let exported = app.world_mut().spawn(WorldAssetRoot(scene.clone())).id();
        let reference = app
            .world_mut()
            .spawn((
                GtaSkeleton(game),
                SkeletalClip::new(ours[index].clone()),
                Playback::looping(),
            ))
            .id();
        for _ in 0..5 {
            app.update();
        }
        let player = player_under(&mut app, exported);
        let (graph, node) = AnimationGraph::from_clip(animations[index].clone());
        let graph = app
            .world_mut()
            .resource_mut::<Assets<AnimationGraph>>()
            .add(graph);
        app.world_mut()
            .entity_mut(player)
            .insert(AnimationGraphHandle(graph));
        for k in 0..=10 {
            let t = clip.duration() * k as f32 / 10.0;
            {
                let mut p = app.world_mut().get_mut::<AnimationPlayer>(player).unwrap();
                p.stop_all();
                p.play(node).pause().set_seek_time(t);
            }
            {
                let mut p = app.world_mut().get_mut::<Playback>(reference).unwrap();
                p.paused = true;
                p.seek(t);
            }
            app.update();
            app.update();
            let got = positions(&mut app, exported);
            let want = positions(&mut app, reference);
            // The export faces glTF's +Z, rigplay's skeleton Bevy's −Z: half a turn about Y.
            let turn = Quat::from_rotation_y(PI);
            for bone in &skeleton.bones {
                let (Some(g), Some(w)) = (got.get(&bone.name), want.get(&bone.name)) else {
                    panic!("{} in both", bone.name);
                };
                worst.2 += 1;
                let d = g.distance(turn * *w);
                if d > worst.0 {
                    worst = (
                        d,
                        format!("{} of {:?} at {t:.3} s", bone.name, clip.name),
                        worst.2,
                    );
                }
            }
        }
        app.world_mut().entity_mut(exported).despawn();
        app.world_mut().entity_mut(reference).despawn();
    }
    worst
}

#[test]
fn bevys_gltf_loader_plays_exports_of_every_game_where_rigplay_plays_the_source() {
    for (game, ifp) in [
        (GtaGame::Sa, crate::assets::read("anims/sa_ped.ifp")),
        (GtaGame::Vc, crate::assets::read("anims/vc_ped.ifp")),
        (GtaGame::Vc, crate::gltf_export::vc_walk()),
        (GtaGame::Iii, crate::gltf_validator::iii_walk()),
    ] {
        let (distance, at, compared) = compare(game, ifp);
        eprintln!("{game:?}: {compared} joint positions, worst {distance:e} m ({at})");
        assert!(compared > 100, "{game:?}: {compared}");
        assert!(distance < 1e-4, "{game:?}: {distance} m at {at}");
    }
}
