//! glTF exports played by Bevy's own glTF loader and `AnimationPlayer`, against rigplay's
//! playback of the source on the built-in skeleton: every joint within 1e-4 m, for every game;
//! and the sample ped exported with its model, every frame and skinned vertex against rigplay's
//! `.dff` loader drawing it.

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

/// The glTF scene's `AnimationPlayer` under `exported`, given a graph of `animation` alone;
/// the player and the animation's node.
fn played_by(
    app: &mut App,
    exported: Entity,
    animation: Handle<AnimationClip>,
) -> (Entity, AnimationNodeIndex) {
    let player = player_under(app, exported);
    let (graph, node) = AnimationGraph::from_clip(animation);
    let graph = app
        .world_mut()
        .resource_mut::<Assets<AnimationGraph>>()
        .add(graph);
    app.world_mut()
        .entity_mut(player)
        .insert(AnimationGraphHandle(graph));
    (player, node)
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
        let (player, node) = played_by(&mut app, exported, animations[index].clone());
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

/// Every mesh under `root` (in order of vertex and index counts): where Bevy draws each of its
/// vertices now (skinned by its joints, or placed by its entity's transform).
fn drawn_vertices(app: &mut App, root: Entity) -> Vec<Vec<Vec3>> {
    use bevy::mesh::VertexAttributeValues as V;
    use bevy::mesh::skinning::SkinnedMesh;
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        let world = app.world();
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(children.iter());
        }
        if let (Some(mesh), Some(at)) = (world.get::<Mesh3d>(e), world.get::<GlobalTransform>(e)) {
            found.push((mesh.0.clone(), world.get::<SkinnedMesh>(e).cloned(), *at));
        }
    }
    let mut out = Vec::new();
    for (handle, skin, at) in found {
        let mesh = app
            .world()
            .resource::<Assets<Mesh>>()
            .get(&handle)
            .unwrap()
            .clone();
        let Some(V::Float32x3(positions)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION) else {
            panic!("positions");
        };
        let vertices: Vec<Vec3> = match &skin {
            Some(skin) => {
                let Some(V::Uint16x4(joints)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_INDEX) else {
                    panic!("joints");
                };
                let Some(V::Float32x4(weights)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT)
                else {
                    panic!("weights");
                };
                (0..positions.len())
                    .map(|v| {
                        crate::bevy_dff::skinned(
                            app,
                            skin,
                            joints[v],
                            weights[v],
                            Vec3::from(positions[v]),
                        )
                    })
                    .collect()
            }
            None => positions
                .iter()
                .map(|p| at.transform_point(Vec3::from(*p)))
                .collect(),
        };
        out.push((
            positions.len(),
            mesh.indices().map_or(0, |i| i.len()),
            vertices,
        ));
    }
    out.sort_by_key(|m| (m.0, m.1));
    out.into_iter().map(|m| m.2).collect()
}

/// Plays animation `clip` of the model export `file` in Bevy's glTF loader, and the same clip of
/// the package `ifp` on the model `dff` with rigplay's `.dff` loader and playback, at 7 times
/// over `duration`: the worst distance between their frames' positions and between the
/// vertices they draw, and how many of each were compared.
fn compare_model(
    file: rigplay::convert::gltf::GltfFile,
    dff: Vec<u8>,
    txd: Option<Vec<u8>>,
    ifp: Vec<u8>,
    clip: usize,
) -> ((f32, usize), (f32, usize)) {
    compare_clump(file, dff, txd, ifp, clip, 0)
}

/// [`compare_model`] for the model's clump `clump`, exported as the file's scene `clump` (a
/// file of several clumps written whole).
fn compare_clump(
    file: rigplay::convert::gltf::GltfFile,
    dff: Vec<u8>,
    txd: Option<Vec<u8>>,
    ifp: Vec<u8>,
    clip: usize,
    clump: usize,
) -> ((f32, usize), (f32, usize)) {
    use bevy::image::ImagePlugin;
    let mut json = file.json;
    json["buffers"][0]["uri"] = serde_json::json!("ped.bin");
    let mut files = vec![
        ("ped.gltf", serde_json::to_vec(&json).unwrap()),
        ("ped.bin", file.bin),
        ("model/ped.dff", dff),
        ("anims/ped.ifp", ifp),
    ];
    if let Some(txd) = txd {
        files.push(("model/ped.txd", txd));
    }
    let mut app = app_with(
        &files,
        &[],
        1.0 / 30.0,
        (
            ImagePlugin::default(),
            MeshPlugin,
            WorldSerializationPlugin,
            DffPlugin,
            GltfPlugin::default(),
        ),
    );
    app.init_asset::<StandardMaterial>();
    let animation: Handle<AnimationClip> = load(&mut app, &format!("ped.gltf#Animation{clip}"));
    let scene: Handle<WorldAsset> = load(&mut app, &format!("ped.gltf#Scene{clump}"));
    let ped: Handle<Dff> = load(&mut app, "model/ped.dff");
    let ours: Handle<RigClip> = load(&mut app, &format!("anims/ped.ifp#Clip{clip}"));
    let duration = app
        .world()
        .resource::<Assets<AnimationClip>>()
        .get(&animation)
        .unwrap()
        .duration();
    let exported = app.world_mut().spawn(WorldAssetRoot(scene)).id();
    let mut paused = Playback::looping();
    paused.paused = true;
    let reference = app
        .world_mut()
        .spawn((
            GtaModel { model: ped, clump },
            SkeletalClip::new(ours),
            paused,
        ))
        .id();
    for _ in 0..5 {
        app.update();
    }
    let (player, node) = played_by(&mut app, exported, animation);
    // The export faces glTF's +Z, rigplay's model Bevy's −Z: half a turn about Y.
    let turn = Quat::from_rotation_y(PI);
    let (mut joints, mut vertices) = ((0.0f32, 0usize), (0.0f32, 0usize));
    for k in 0..=6 {
        let t = duration * k as f32 / 6.0;
        {
            let mut p = app.world_mut().get_mut::<AnimationPlayer>(player).unwrap();
            p.stop_all();
            p.play(node).pause().set_seek_time(t);
        }
        app.world_mut()
            .get_mut::<Playback>(reference)
            .unwrap()
            .seek(t);
        app.update();
        app.update();
        let got = positions(&mut app, exported);
        for (name, w) in crate::bevy_dff::joint_positions(&mut app, reference) {
            let g = got
                .get(&name)
                .unwrap_or_else(|| panic!("{name} in the export"));
            joints.0 = joints.0.max(g.distance(turn * w));
            joints.1 += 1;
        }
        let got = drawn_vertices(&mut app, exported);
        let want = drawn_vertices(&mut app, reference);
        assert_eq!(
            got.iter().map(Vec::len).collect::<Vec<_>>(),
            want.iter().map(Vec::len).collect::<Vec<_>>(),
            "the same meshes"
        );
        for (g, w) in got.iter().zip(&want) {
            for (a, b) in g.iter().zip(w) {
                vertices.0 = vertices.0.max(a.distance(turn * *b));
                vertices.1 += 1;
            }
        }
    }
    (joints, vertices)
}

/// The sample ped exported with the SA clips, as `rigplay export --model` does it: Bevy's glTF
/// loader, playing the walk, puts every frame and every skinned vertex where rigplay's `.dff`
/// loader and playback put them, within 1e-4 m, at rest and through the cycle.
#[test]
fn bevys_gltf_loader_skins_the_exported_sample_ped_where_rigplay_draws_the_model() {
    let read = crate::assets::read;
    let walk = IfpFile::read(&read("anims/sa_ped.ifp"))
        .unwrap()
        .file
        .clips()
        .position(|c| c.name.eq_ignore_ascii_case("walk"))
        .unwrap();
    let (joints, vertices) = compare_model(
        crate::gltf_export::sample_ped_export(RootMotionExport::Baked),
        read("characters/ped.dff"),
        Some(read("characters/ped.txd")),
        read("anims/sa_ped.ifp"),
        walk,
    );
    sample_ped_alike("sample ped", joints, vertices);
}

/// A GTA III ped of parts (rigid meshes on named frames, no skin, bound by name) exported with a
/// III walk: each part's mesh hangs under its frame's node, no skin is written, the file passes
/// the Khronos validator, and Bevy's glTF loader draws every part's vertices where rigplay's
/// `.dff` loader and playback draw them.
#[test]
fn a_gta_iii_ped_of_parts_exports_its_parts_under_their_frames() {
    let frames = [
        ("", -1, [0., 0., 0.]),
        ("Swaist", 0, [0., 0., 1.0]),
        ("Storso", 1, [0., 0., 0.2]),
        ("Smid", 2, [0., 0., 0.45]),
    ];
    let dff = crate::bevy_dff::rigid_model(crate::bevy_dff::III, &frames, &[1, 2, 3]);
    let ifp = crate::gltf_validator::iii_walk();
    let file =
        crate::gltf_export::model_export(&dff, None, &ifp, GtaGame::Iii, RootMotionExport::Baked);
    let doc = &file.json;
    assert!(doc.get("skins").is_none(), "no skin");
    assert_eq!((file.report.meshes, file.report.skins), (3, 0));
    for (frame, name) in [(1, "Swaist"), (2, "Storso"), (3, "Smid")] {
        assert_eq!(doc["nodes"][frame]["name"], name);
        let child = doc["nodes"][frame]["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &doc["nodes"][c.as_u64().unwrap() as usize])
            .find(|n| n.get("mesh").is_some())
            .unwrap_or_else(|| panic!("{name} holds its part"));
        assert!(child.get("translation").is_none() && child.get("rotation").is_none());
    }
    crate::gltf_validator::assert_clean(&file, "parts");
    let (joints, vertices) = compare_model(file, dff, None, ifp, 0);
    eprintln!(
        "III parts: {} frame positions, worst {:e} m; {} vertices, worst {:e} m",
        joints.1, joints.0, vertices.1, vertices.0
    );
    assert!(joints.1 >= 7 * 3 && vertices.1 >= 7 * 3 * 3);
    assert!(joints.0 < 1e-4, "frames: {} m", joints.0);
    assert!(vertices.0 < 1e-4, "vertices: {} m", vertices.0);
}

/// A file of three clumps, as GTA III's peds and SA's player may be (`docs/formats/dff.md` §8): a
/// prop (one unnamed frame drawing a triangle, no bones), the sample ped, and the sample ped again. It
/// is written whole, as Bevy's `.dff` loader loads it: a scene per clump, in the file's order.
/// The clips drive the first clump that has bones, whose scene is the default; Bevy's glTF
/// loader playing it puts every frame and skinned vertex where rigplay's `.dff` loader and
/// playback put that clump's. The third clump's skin joins its own nodes, and no animation
/// channel reaches them or the prop's. The file passes the Khronos validator.
#[test]
fn a_model_of_several_clumps_exports_a_scene_per_clump() {
    let read = crate::assets::read;
    // (Its frame unnamed: a named frame of a clump without HAnim is a bone, as a III ped's parts
    // are, and the clips would drive it.)
    let prop = crate::bevy_dff::rigid_model(0x1803_FFFF, &[("", -1, [0., 0., 1.])], &[0]);
    let ped = read("characters/ped.dff");
    let dff = [prop, ped.clone(), ped].concat();
    let ifp = read("anims/sa_ped.ifp");
    let file = crate::gltf_export::model_export(
        &dff,
        Some(&read("characters/ped.txd")),
        &ifp,
        GtaGame::Sa,
        RootMotionExport::Baked,
    );
    let doc = &file.json;
    assert_eq!(file.report.scenes, 3);
    assert_eq!(doc["scene"], 1, "the clips' clump is the default scene");
    assert_eq!(doc["scenes"].as_array().unwrap().len(), 3);
    assert_eq!(file.report.skins, 2, "a skin per ped");
    let scenes = scene_nodes(doc);
    assert_eq!(scenes.len(), 3);
    // The prop: its frame, and its triangle under it.
    let prop: Vec<&serde_json::Value> = scenes[0]
        .iter()
        .map(|&n| &doc["nodes"][n as usize])
        .collect();
    assert_eq!(prop.len(), 2, "{prop:?}");
    assert_eq!(prop.iter().filter(|n| n.get("mesh").is_some()).count(), 1);
    // Every skin's joints lie in one ped's scene, one skin in each.
    let skins = doc["skins"].as_array().unwrap();
    let scene_of = |node: u64| scene_of(&scenes, node);
    let mut skinned = Vec::new();
    for skin in skins {
        let joints: Vec<u64> = (skin["joints"].as_array().unwrap().iter())
            .map(|j| j.as_u64().unwrap())
            .collect();
        let s = scene_of(joints[0]);
        assert!(
            joints.iter().all(|&j| scene_of(j) == s),
            "a skin across scenes"
        );
        skinned.push(s);
    }
    skinned.sort();
    assert_eq!(skinned, [1, 2]);
    // The animations drive the default scene's nodes only.
    let channels = channels_in(doc, &scenes, 1);
    // As many as the sample ped exported alone: none lost, none added for the other clumps.
    let alone = crate::gltf_export::sample_ped_export(RootMotionExport::Baked);
    assert_eq!(channels, alone.report.channels);
    assert_eq!(file.report.channels, alone.report.channels);
    crate::gltf_validator::assert_clean(&file, "clumps");
    let walk = IfpFile::read(&ifp)
        .unwrap()
        .file
        .clips()
        .position(|c| c.name.eq_ignore_ascii_case("walk"))
        .unwrap();
    let (joints, vertices) =
        compare_clump(file, dff, Some(read("characters/ped.txd")), ifp, walk, 1);
    sample_ped_alike("clump 1 of 3", joints, vertices);
}

/// The sample ped's 32 frames and its skinned vertices, compared at 7 times by [`compare_model`],
/// each within 1e-4 m of rigplay's.
fn sample_ped_alike(label: &str, joints: (f32, usize), vertices: (f32, usize)) {
    eprintln!(
        "{label}: {} frame positions, worst {:e} m; {} vertices, worst {:e} m",
        joints.1, joints.0, vertices.1, vertices.0
    );
    assert!(joints.1 >= 7 * 32, "{} frame positions", joints.1);
    assert!(vertices.1 > 7 * 100, "{} vertices", vertices.1);
    assert!(joints.0 < 1e-4, "frames: {} m", joints.0);
    assert!(vertices.0 < 1e-4, "vertices: {} m", vertices.0);
}

/// Each scene's nodes of an export, walked from its roots: no node reached twice, no two
/// scenes sharing one.
fn scene_nodes(doc: &serde_json::Value) -> Vec<std::collections::HashSet<u64>> {
    let count = doc["scenes"].as_array().unwrap().len();
    let scenes: Vec<_> = (0..count)
        .map(|scene| {
            let mut out = std::collections::HashSet::new();
            let roots = doc["scenes"][scene]["nodes"].as_array();
            let mut stack: Vec<u64> = (roots.into_iter().flatten())
                .map(|n| n.as_u64().unwrap())
                .collect();
            while let Some(n) = stack.pop() {
                assert!(out.insert(n), "node {n} reached twice");
                if let Some(children) = doc["nodes"][n as usize]["children"].as_array() {
                    stack.extend(children.iter().map(|c| c.as_u64().unwrap()));
                }
            }
            out
        })
        .collect();
    for a in 0..count {
        for b in a + 1..count {
            assert!(
                scenes[a].is_disjoint(&scenes[b]),
                "scenes {a} and {b} share nodes"
            );
        }
    }
    scenes
}

/// The scene node `node` is in.
fn scene_of(scenes: &[std::collections::HashSet<u64>], node: u64) -> usize {
    (0..scenes.len())
        .find(|&s| scenes[s].contains(&node))
        .unwrap_or_else(|| panic!("node {node} is in no scene"))
}

/// How many animation channels the export has, each checked to drive a node of scene
/// `default`.
fn channels_in(
    doc: &serde_json::Value,
    scenes: &[std::collections::HashSet<u64>],
    default: usize,
) -> usize {
    let mut channels = 0;
    for a in doc["animations"].as_array().unwrap() {
        for c in a["channels"].as_array().unwrap() {
            let node = c["target"]["node"].as_u64().unwrap();
            assert_eq!(scene_of(scenes, node), default, "a channel on node {node}");
            channels += 1;
        }
    }
    channels
}

/// The same for the other games' peds, each after a prop clump (one unnamed frame drawing a
/// triangle): a GTA III ped of parts playing a III walk (its three parts rigid under their
/// frames, no skin), and a skinned Vice City ped (VC's bones, the old skin layout) playing VC's
/// walk. Two scenes each, the ped's the default; every channel on its nodes; the VC ped's skin
/// within its scene; both pass the Khronos validator.
#[test]
fn iii_and_vc_peds_after_another_clump_export_a_scene_per_clump() {
    use crate::bevy_dff::{III, VC, rigid_model, skinned_ped};
    let prop = |stamp| rigid_model(stamp, &[("", -1, [0., 0., 1.])], &[0]);
    let parts = rigid_model(
        III,
        &[
            ("", -1, [0., 0., 0.]),
            ("Swaist", 0, [0., 0., 1.0]),
            ("Storso", 1, [0., 0., 0.2]),
            ("Smid", 2, [0., 0., 0.45]),
        ],
        &[1, 2, 3],
    );
    let vc_ped = skinned_ped(VC, &rigplay::skeleton::Skeleton::gta_vc());
    let cases = [
        (
            "iii-clumps",
            [prop(III), parts].concat(),
            crate::gltf_validator::iii_walk(),
            GtaGame::Iii,
            (4, 0),
        ),
        (
            "vc-clumps",
            [prop(VC), vc_ped].concat(),
            crate::assets::read("anims/vc_ped.ifp"),
            GtaGame::Vc,
            (2, 1),
        ),
    ];
    for (label, dff, ifp, game, (meshes, skins)) in cases {
        let file =
            crate::gltf_export::model_export(&dff, None, &ifp, game, RootMotionExport::Baked);
        let doc = &file.json;
        assert_eq!(
            (file.report.scenes, &doc["scene"]),
            (2, &1.into()),
            "{label}"
        );
        // The prop's triangle, and the ped's meshes (III: a part each; VC: its body).
        assert_eq!(
            (file.report.meshes, file.report.skins),
            (meshes, skins),
            "{label}"
        );
        let scenes = scene_nodes(doc);
        for skin in doc["skins"].as_array().into_iter().flatten() {
            for j in skin["joints"].as_array().unwrap() {
                assert_eq!(
                    scene_of(&scenes, j.as_u64().unwrap()),
                    1,
                    "{label}: a joint"
                );
            }
        }
        let channels = channels_in(doc, &scenes, 1);
        assert!(channels >= 2, "{label}: {channels} channels");
        crate::gltf_validator::assert_clean(&file, label);
    }
}
