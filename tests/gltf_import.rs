//! glTF, GLB and VRM animation into the games: the mocap walk of `bvh_fixtures.rs` written as
//! glTF here, field by field (nodes under a Blender-style `Armature` scaled 0.01, keys in a
//! base64 buffer or a GLB's binary chunk, nodes named as Mixamo names them or not at all with
//! a VRM humanoid extension naming them), imported onto the SA ped, must give the keys the
//! same walk imported from the `.bvh` gives. Broken files are refused with where and why.

use crate::bvh_fixtures::mocap_walk;
use glam::{Quat, Vec3};
use rigplay::convert::import::{bvh_source, clip_to_gta, gltf_source, gta_package};
use rigplay::formats::bvh::BvhFile;
use rigplay::formats::gltf::GltfScene;
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::GtaGame;
use serde_json::json;

fn base64(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// VRM 1.0's name for each mocap joint.
fn vrm_name(joint: &str) -> &'static str {
    match joint {
        "Hips" => "hips",
        "Spine" => "spine",
        "Spine1" => "chest",
        "Spine2" => "upperChest",
        "Neck" => "neck",
        "Head" => "head",
        "LeftShoulder" => "leftShoulder",
        "LeftArm" => "leftUpperArm",
        "LeftForeArm" => "leftLowerArm",
        "LeftHand" => "leftHand",
        "RightShoulder" => "rightShoulder",
        "RightArm" => "rightUpperArm",
        "RightForeArm" => "rightLowerArm",
        "RightHand" => "rightHand",
        "LeftUpLeg" => "leftUpperLeg",
        "LeftLeg" => "leftLowerLeg",
        "LeftFoot" => "leftFoot",
        "LeftToeBase" => "leftToes",
        "RightUpLeg" => "rightUpperLeg",
        "RightLeg" => "rightLowerLeg",
        "RightFoot" => "rightFoot",
        _ => "rightToes",
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Naming {
    Mixamo,
    /// Nodes named `n0`, `n1`, …; a `VRMC_vrm` extension names the humanoid bones.
    Vrm,
    /// The same with VRM animation's `VRMC_vrm_animation` extension.
    Vrma,
    /// The same with VRM 0.x's `VRM` extension (a list of `{bone, node}`).
    Vrm0,
}

/// A glTF's binary buffer as it is written, with its views and accessors.
#[derive(Default)]
struct Buf {
    bin: Vec<u8>,
    views: Vec<serde_json::Value>,
    accessors: Vec<serde_json::Value>,
}

impl Buf {
    /// `floats` as a view and an accessor of `kind`; `bounds`: with min and max. The accessor.
    fn push(&mut self, floats: &[f32], kind: &str, bounds: bool) -> usize {
        let offset = self.bin.len();
        for f in floats {
            self.bin.extend_from_slice(&f.to_le_bytes());
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": floats.len() * 4}));
        let width = match kind {
            "SCALAR" => 1,
            "VEC3" => 3,
            "MAT4" => 16,
            _ => 4,
        };
        let mut a = json!({"bufferView": self.views.len() - 1, "componentType": 5126,
            "count": floats.len() / width, "type": kind});
        if bounds {
            let min = floats.iter().copied().fold(f32::INFINITY, f32::min);
            let max = floats.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            a["min"] = json!([min]);
            a["max"] = json!([max]);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    /// A sparse accessor's `sparse` object: `values` (`width` floats each) are the last keys
    /// of `frames`, placed by `u8` indices; indices and values each in a view of their own.
    fn patch(&mut self, values: &[f32], width: usize, frames: usize) -> serde_json::Value {
        let n = values.len() / width;
        let offset = self.bin.len();
        self.bin.extend((0..n).map(|k| (frames - n + k) as u8));
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": n}));
        let indices = self.views.len() - 1;
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        for f in values {
            self.bin.extend_from_slice(&f.to_le_bytes());
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": values.len() * 4}));
        json!({"count": n, "indices": {"bufferView": indices, "componentType": 5121},
            "values": {"bufferView": self.views.len() - 1}})
    }
}

/// The BVH's joints and frames as glTF: node 0 an `Armature` scaled 0.01 (the BVH is in
/// centimetres), node j + 1 the BVH's joint j at its offset; one animation, "walk", with a
/// rotation channel per joint and the hips' translation, keys at the frames' times.
pub(crate) fn gltf_of(bvh: &BvhFile, naming: Naming, glb: bool) -> Vec<u8> {
    gltf_in(bvh, naming, glb, false)
}

/// [`gltf_of`] with the nodes turned from the walk's rest and a skin keeping that rest
/// ([`gltf_in`], `posed`).
#[cfg(all(
    feature = "gltf",
    feature = "gizmos",
    feature = "dff",
    feature = "anie"
))]
pub(crate) fn gltf_posed_of(bvh: &BvhFile, naming: Naming, glb: bool) -> Vec<u8> {
    gltf_in(bvh, naming, glb, true)
}

/// [`gltf_of`], `posed`: the nodes stand turned from the BVH's rest (each 25° about an axis of
/// its own), a skin's inverse bind matrices keep the rest the walk was made on (the inverse of
/// `Armature(0.01) · T(offset)…` down each chain), and the keys are written as sparse accessors
/// (the hips' translation over a base without a buffer view, each rotation over a base view
/// repeating its first key, the other keys patched in by `u8` indices).
fn gltf_in(bvh: &BvhFile, naming: Naming, glb: bool, posed: bool) -> Vec<u8> {
    let mut buf = Buf::default();
    let frames = bvh.frames();
    let times: Vec<f32> = (0..frames).map(|f| f as f32 * bvh.frame_time).collect();
    let input = buf.push(&times, "SCALAR", true);
    let mut sparse_accessors: Vec<(usize, serde_json::Value)> = Vec::new();
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    for (j, joint) in bvh.joints.iter().enumerate() {
        let rotations: Vec<f32> = (0..frames)
            .flat_map(|f| bvh.local(j, f).1.to_array())
            .collect();
        let out = if posed {
            // The base view repeats the first key; frames 1.. come as a patch.
            let first: Vec<f32> = (0..frames).flat_map(|_| rotations[..4].to_vec()).collect();
            let base = buf.push(&first, "VEC4", false);
            sparse_accessors.push((base, buf.patch(&rotations[4..], 4, frames)));
            base
        } else {
            buf.push(&rotations, "VEC4", false)
        };
        samplers.push(json!({"input": input, "output": out, "interpolation": "LINEAR"}));
        channels.push(
            json!({"sampler": samplers.len() - 1, "target": {"node": j + 1, "path": "rotation"}}),
        );
        if joint.parent.is_none() {
            let moves: Vec<f32> = (0..frames)
                .flat_map(|f| bvh.local(j, f).0.to_array())
                .collect();
            let out = if posed {
                // No base view: zeros, every key a patch.
                let sparse = buf.patch(&moves, 3, frames);
                buf.accessors.push(
                    json!({"componentType": 5126, "count": frames, "type": "VEC3",
                    "sparse": sparse}),
                );
                buf.accessors.len() - 1
            } else {
                buf.push(&moves, "VEC3", false)
            };
            samplers.push(json!({"input": input, "output": out, "interpolation": "LINEAR"}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": j + 1, "path": "translation"}}));
        }
    }
    for (accessor, sparse) in sparse_accessors {
        buf.accessors[accessor]["sparse"] = sparse;
    }
    // The skin: the inverse of each joint's world matrix at the BVH's rest.
    let mut world: Vec<glam::Mat4> = Vec::new();
    for joint in &bvh.joints {
        let parent = joint
            .parent
            .map_or(glam::Mat4::from_scale(Vec3::splat(0.01)), |p| world[p]);
        world.push(parent * glam::Mat4::from_translation(joint.offset));
    }
    let ibms: Vec<f32> = world
        .iter()
        .flat_map(|m| m.inverse().to_cols_array())
        .collect();
    let ibm_accessor = posed.then(|| buf.push(&ibms, "MAT4", false));
    let mut nodes = vec![json!({
        "name": "Armature",
        "scale": [0.01, 0.01, 0.01],
        "children": bvh.joints.iter().enumerate().filter(|(_, j)| j.parent.is_none()).map(|(i, _)| i + 1).collect::<Vec<_>>(),
    })];
    for (j, joint) in bvh.joints.iter().enumerate() {
        let children: Vec<usize> = (0..bvh.joints.len())
            .filter(|&c| bvh.joints[c].parent == Some(j))
            .map(|c| c + 1)
            .collect();
        let name = match naming {
            Naming::Mixamo => format!("mixamorig:{}", joint.name),
            Naming::Vrm | Naming::Vrma | Naming::Vrm0 => format!("n{j}"),
        };
        let mut node = json!({"name": name, "translation": joint.offset.to_array()});
        if posed {
            let axis = Vec3::new(1.0, j as f32, 2.0).normalize();
            node["rotation"] = json!(Quat::from_axis_angle(axis, 25f32.to_radians()).to_array());
        }
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        nodes.push(node);
    }
    // The skin on a mesh, as glTF requires (a node with a skin has a mesh): one triangle bound
    // whole to the first joint, on a node `Body` at the scene's root.
    let mut roots = vec![0];
    let mut meshes = Vec::new();
    if posed {
        let corners = [0.0f32, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0];
        let position = buf.push(&corners, "VEC3", false);
        buf.accessors[position]["min"] = json!([0.0, 0.0, 0.0]);
        buf.accessors[position]["max"] = json!([0.1, 0.1, 0.0]);
        let offset = buf.bin.len();
        buf.bin.extend([0u8; 12]);
        buf.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": 12}));
        buf.accessors.push(
            json!({"bufferView": buf.views.len() - 1, "componentType": 5121,
            "count": 3, "type": "VEC4"}),
        );
        let joints = buf.accessors.len() - 1;
        let weights = buf.push(&[1.0f32, 0.0, 0.0, 0.0].repeat(3), "VEC4", false);
        meshes.push(json!({"primitives": [{"attributes":
            {"POSITION": position, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}));
        roots.push(bvh.joints.len() + 1);
    }
    let mut doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
        "animations": [{"name": "walk", "samplers": samplers, "channels": channels}],
        "bufferViews": buf.views,
        "accessors": buf.accessors,
        "buffers": [{"byteLength": buf.bin.len()}],
    });
    if let Some(ibm) = ibm_accessor {
        doc["skins"] = json!([{"joints": (1..=bvh.joints.len()).collect::<Vec<_>>(),
            "inverseBindMatrices": ibm}]);
        doc["meshes"] = json!(meshes);
        doc["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Body", "mesh": 0, "skin": 0}));
    }
    let bones: serde_json::Map<String, serde_json::Value> = bvh
        .joints
        .iter()
        .enumerate()
        .map(|(j, joint)| (vrm_name(&joint.name).to_owned(), json!({"node": j + 1})))
        .collect();
    match naming {
        Naming::Mixamo => {}
        Naming::Vrm | Naming::Vrma => {
            let key = if naming == Naming::Vrm {
                "VRMC_vrm"
            } else {
                "VRMC_vrm_animation"
            };
            doc["extensionsUsed"] = json!([key]);
            doc["extensions"] =
                json!({key: {"specVersion": "1.0", "humanoid": {"humanBones": bones}}});
        }
        Naming::Vrm0 => {
            let list: Vec<serde_json::Value> = bones
                .iter()
                .map(|(bone, v)| json!({"bone": bone, "node": v["node"]}))
                .collect();
            doc["extensionsUsed"] = json!(["VRM"]);
            doc["extensions"] = json!({"VRM": {"humanoid": {"humanBones": list}}});
        }
    }
    let bin = buf.bin;
    if !glb {
        doc["buffers"][0]["uri"] = json!(format!(
            "data:application/octet-stream;base64,{}",
            base64(&bin)
        ));
        return serde_json::to_vec(&doc).unwrap();
    }
    glb_of(&doc, bin)
}

/// A binary glTF of `doc` and `bin`, each chunk padded to 4 bytes (JSON with spaces, the binary
/// with zeros), laid out as the glTF 2.0 spec's GLB section says.
pub(crate) fn glb_of(doc: &serde_json::Value, mut bin: Vec<u8>) -> Vec<u8> {
    let mut text = serde_json::to_vec(doc).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + text.len() + 8 + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Every bone's (rotation, translation) at every key of an imported clip, read back from the
/// written package.
fn keys_of(package: &IfpFile) -> Vec<(String, Vec<(Quat, Vec3)>)> {
    package
        .clips()
        .next()
        .unwrap()
        .sequences
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.keys
                    .iter()
                    .map(|k| {
                        (
                            Quat::from_array(k.rotation),
                            Vec3::from_array(k.translation),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_walk_as_gltf_glb_or_vrm_imports_to_the_keys_the_same_walk_as_bvh_gives() {
    let bvh = BvhFile::read(mocap_walk(31).as_bytes()).unwrap().file;
    let from_bvh = {
        let (clip, _) = clip_to_gta(
            &bvh_source(&bvh),
            &bvh.to_clip("walk"),
            "walk",
            GtaGame::Sa,
            &[],
        )
        .unwrap();
        let bytes = gta_package(GtaGame::Sa, "walk", vec![clip])
            .0
            .write()
            .unwrap();
        keys_of(&IfpFile::read(&bytes).unwrap().file)
    };
    for (naming, glb) in [
        (Naming::Mixamo, false),
        (Naming::Mixamo, true),
        (Naming::Vrm, true),
        (Naming::Vrma, true),
        (Naming::Vrm0, false),
    ] {
        let bytes = gltf_of(&bvh, naming, glb);
        let read = GltfScene::read(&bytes, |_| None).unwrap();
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let scene = read.scene;
        assert_eq!(scene.nodes.len(), 23);
        assert_eq!(scene.animations.len(), 1);
        assert_eq!(scene.animations[0].clip.name, "walk");
        if naming != Naming::Mixamo {
            assert_eq!(scene.humanoid.len(), 22);
        }
        let (source, clip) = gltf_source(&scene, &scene.animations[0]).unwrap();
        let (ifp, report) = clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &[]).unwrap();
        assert_eq!(report.pairs.len(), 21, "{:?}", report.pairs);
        let bytes = gta_package(GtaGame::Sa, "walk", vec![ifp])
            .0
            .write()
            .unwrap();
        let from_gltf = keys_of(&IfpFile::read(&bytes).unwrap().file);
        assert_eq!(from_gltf.len(), from_bvh.len());
        let (mut angle, mut distance) = (0.0f32, 0.0f32);
        for ((name, a), (other, b)) in from_gltf.iter().zip(&from_bvh) {
            assert_eq!(name, other);
            assert_eq!(a.len(), b.len());
            for ((qa, ta), (qb, tb)) in a.iter().zip(b) {
                angle = angle.max(2.0 * (qa.conjugate() * *qb).xyz().length().min(1.0).asin());
                distance = distance.max(ta.distance(*tb));
            }
        }
        eprintln!(
            "glb {glb}, VRM extension {}: {} bones, worst {angle:e} rad, {distance:e} m",
            naming != Naming::Mixamo,
            from_gltf.len()
        );
        // The same keys: up to ANP3's int16 steps (1/4096 of a rotation's component, 1/1024 m).
        assert!(angle < 2e-3, "{angle} rad");
        assert!(distance < 2e-3, "{distance} m");
    }
}

/// The walk from a glTF whose nodes stand in another pose than the one its skin was bound in,
/// its keys in sparse accessors: the skin's inverse bind matrices give the rest the walk was
/// made on, so it imports to the keys the BVH gives; without the skin, the nodes' own pose is
/// the rest and the keys differ (which shows the matrices are what is used).
#[test]
fn a_skins_bind_pose_and_sparse_keys_import_as_the_walk_made_on_them() {
    let bvh = BvhFile::read(mocap_walk(31).as_bytes()).unwrap().file;
    let import = |scene: &GltfScene| {
        let (source, clip) = gltf_source(scene, &scene.animations[0]).unwrap();
        let (ifp, _) = clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &[]).unwrap();
        let bytes = gta_package(GtaGame::Sa, "walk", vec![ifp])
            .0
            .write()
            .unwrap();
        keys_of(&IfpFile::read(&bytes).unwrap().file)
    };
    let worst = |a: &[(String, Vec<(Quat, Vec3)>)], b: &[(String, Vec<(Quat, Vec3)>)]| {
        let mut angle = 0.0f32;
        for ((_, a), (_, b)) in a.iter().zip(b) {
            for ((qa, _), (qb, _)) in a.iter().zip(b) {
                angle = angle.max(2.0 * (qa.conjugate() * *qb).xyz().length().min(1.0).asin());
            }
        }
        angle
    };
    let plain = GltfScene::read(&gltf_of(&bvh, Naming::Mixamo, false), |_| None)
        .unwrap()
        .scene;
    let posed = GltfScene::read(&gltf_in(&bvh, Naming::Mixamo, true, true), |_| None)
        .unwrap()
        .scene;
    assert_eq!(posed.skins.len(), 1);
    assert_eq!(posed.skins[0].joints.len(), 22);
    // The sparse keys read as the plain file's, key for key.
    for (a, b) in posed.animations[0]
        .clip
        .tracks()
        .iter()
        .zip(plain.animations[0].clip.tracks())
    {
        let (ca, cb) = (&posed.animations[0].clip, &plain.animations[0].clip);
        assert_eq!(
            ca.rotation_values(a.rotation.unwrap()),
            cb.rotation_values(b.rotation.unwrap())
        );
        if let (Some(x), Some(y)) = (a.translation, b.translation) {
            assert_eq!(ca.vector_values(x), cb.vector_values(y));
        }
    }
    // The bind pose is the BVH's rest: identity rotations, the offsets (nodes 1 to 22; the
    // skinned mesh's node last).
    let joints = bvh.joints.len();
    for (node, (t, r, _)) in posed
        .bind_pose()
        .iter()
        .enumerate()
        .take(joints + 1)
        .skip(1)
    {
        let offset = bvh.joints[node - 1].offset;
        assert!(r.abs_diff_eq(Quat::IDENTITY, 1e-5), "node {node}: {r}");
        assert!(t.abs_diff_eq(offset, 1e-3), "node {node}: {t} vs {offset}");
    }
    let want = import(&plain);
    let got = import(&posed);
    let with_skin = worst(&got, &want);
    let mut unskinned = posed.clone();
    unskinned.skins.clear();
    let without = worst(&import(&unskinned), &want);
    eprintln!("posed nodes: {with_skin:e} rad with the skin's bind pose, {without:e} rad without");
    assert!(with_skin < 2e-3, "{with_skin} rad");
    assert!(
        without > 0.05,
        "the nodes' own pose turns the keys: {without} rad"
    );
}

include!("../fuzz/oracles/gltf.rs");

#[test]
fn broken_gltf_files_are_refused_with_where_and_why() {
    let bvh = BvhFile::read(mocap_walk(5).as_bytes()).unwrap().file;
    let good = gltf_of(&bvh, Naming::Mixamo, true);
    // Cut at every place, a byte flipped at every place: an error or a scene, never a panic,
    // and what reads imports or is refused (the fuzz oracle).
    for cut in (0..good.len()).step_by(3) {
        check_gltf(&good[..cut]);
        let mut flipped = good.clone();
        flipped[cut] ^= 0x44;
        check_gltf(&flipped);
    }
    let text = String::from_utf8(gltf_of(&bvh, Naming::Mixamo, false)).unwrap();
    // An accessor reaching past its view.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["accessors"][1]["count"] = json!(1_000_000);
    let e = GltfScene::read(&serde_json::to_vec(&doc).unwrap(), |_| None).unwrap_err();
    assert_eq!(e.at, "/accessors/1", "{e}");
    // A node that is its own grandparent.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["nodes"][2]["children"] = json!([0]);
    assert!(GltfScene::read(&serde_json::to_vec(&doc).unwrap(), |_| None).is_err());
    // A buffer in a file that is not there.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["buffers"][0]["uri"] = json!("walk.bin");
    let e = GltfScene::read(&serde_json::to_vec(&doc).unwrap(), |_| None).unwrap_err();
    assert!(e.expected.contains("buffer 0"), "{e}");
    // Not JSON.
    assert!(GltfScene::read(b"{ nope", |_| None).is_err());
    // The posed file with its skin and sparse keys, cut and flipped as well; then broken where
    // only it has something to break.
    let posed = gltf_in(&bvh, Naming::Mixamo, false, true);
    for cut in (0..posed.len()).step_by(7) {
        check_gltf(&posed[..cut]);
        let mut flipped = posed.clone();
        flipped[cut] ^= 0x44;
        check_gltf(&flipped);
    }
    let posed: serde_json::Value = serde_json::from_slice(&posed).unwrap();
    let sparse = posed["accessors"]
        .as_array()
        .unwrap()
        .iter()
        .position(|a| a.get("sparse").is_some() && a.get("bufferView").is_none())
        .unwrap();
    let refused = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut doc = posed.clone();
        change(&mut doc);
        GltfScene::read(&serde_json::to_vec(&doc).unwrap(), |_| None).unwrap_err()
    };
    // More patched keys than the accessor has (its count made 2).
    let e = refused(&|d| d["accessors"][sparse]["count"] = json!(2));
    assert!(e.at.ends_with("/sparse"), "{e}");
    // An index past the accessor's count: the indices 0, 1, 2, 3, 9 from a buffer of their own
    // (base64 of the bytes 00 01 02 03 09 00 00 00).
    let e = refused(&|d| {
        d["buffers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"byteLength": 8,
            "uri": "data:application/octet-stream;base64,AAECAwkAAAA="}));
        d["bufferViews"]
            .as_array_mut()
            .unwrap()
            .push(json!({"buffer": 1, "byteLength": 8}));
        let view = d["bufferViews"].as_array().unwrap().len() - 1;
        d["accessors"][sparse]["sparse"]["indices"]["bufferView"] = json!(view);
    });
    assert!(
        e.at.ends_with("/sparse/indices") && e.expected.contains("not 9"),
        "{e}"
    );
    // Indices wider than their view holds (u32 over five bytes).
    let e =
        refused(&|d| d["accessors"][sparse]["sparse"]["indices"]["componentType"] = json!(5125));
    assert!(e.at.ends_with("/sparse/indices"), "{e}");
    // More patched keys than the accessor has; indices of a type indices cannot have.
    let e = refused(&|d| d["accessors"][sparse]["sparse"]["count"] = json!(99));
    assert!(e.at.ends_with("/sparse"), "{e}");
    let e =
        refused(&|d| d["accessors"][sparse]["sparse"]["indices"]["componentType"] = json!(5126));
    assert!(e.at.ends_with("/sparse/indices"), "{e}");
    // No view and more zeros than anyone keys.
    let e = refused(&|d| d["accessors"][sparse]["count"] = json!(1u64 << 40));
    assert!(e.expected.contains("without a buffer view"), "{e}");
    // A skin naming a node that is not there; fewer matrices than joints.
    let e = refused(&|d| d["skins"][0]["joints"][3] = json!(999));
    assert_eq!(e.at, "/skins/0/joints", "{e}");
    let e = refused(&|d| {
        let joints = d["skins"][0]["joints"].as_array().unwrap().clone();
        d["skins"][0]["joints"] = json!(joints[..5]);
    });
    assert_eq!(e.at, "/skins/0/inverseBindMatrices", "{e}");
}

#[test]
fn sa_clips_out_to_gltf_and_back_onto_the_vc_ped_keep_their_rotations() {
    // The round trip through rigplay's own writer and reader: the SA sample's walk exported
    // (on the SA ped, in glTF's axes) and imported onto VC's ped, whose tree and rest pose are
    // SA's (`Skeleton::gta_vc`): retargeting between equal rests is the identity, so every
    // shared bone turns as in the SA clip, up to ANPK's float keys (exact) and the 30 Hz
    // resampling (compared at the keys).
    use rigplay::convert::gltf::{GltfClip, GltfExport, RootMotionExport};
    let sa = IfpFile::read(&crate::assets::read("anims/sa_ped.ifp"))
        .unwrap()
        .file;
    let skeleton = GtaGame::Sa.skeleton();
    let (walk, _) = skeleton.clip_as_played(GtaGame::Sa, &sa.clips().next().unwrap().to_clip());
    let targets = skeleton.bind(&walk).targets;
    let (glb, _) = GltfExport::gta(
        &skeleton,
        vec![GltfClip {
            clip: &walk,
            targets: &targets,
        }],
        RootMotionExport::Baked,
    )
    .to_glb()
    .unwrap();
    let scene = GltfScene::read(&glb, |_| None).unwrap().scene;
    let (source, clip) = gltf_source(&scene, &scene.animations[0]).unwrap();
    let (ifp, report) = clip_to_gta(&source, &clip, "walk", GtaGame::Vc, &[]).unwrap();
    assert!(report.pairs.len() >= 20, "{:?}", report.pairs);
    let vc = GtaGame::Vc.skeleton();
    let (vc_walk, _) = vc.clip_as_played(GtaGame::Vc, &ifp.to_clip());
    let mut worst = 0.0f32;
    let mut compared = 0;
    for (track, target) in vc.bind(&vc_walk).targets.iter().enumerate() {
        let Some(b) = target else { continue };
        let name = vc.bones[*b].name.trim();
        let Some(sa_track) = walk
            .tracks()
            .iter()
            .position(|t| t.bone.name.trim().eq_ignore_ascii_case(name))
        else {
            continue;
        };
        for k in 0..=36 {
            let t = k as f32 / 30.0;
            let (Some(a), Some(b)) = (
                vc_walk.sample_track(track, t).rotation,
                walk.sample_track(sa_track, t).rotation,
            ) else {
                continue;
            };
            compared += 1;
            worst = worst.max(2.0 * (a.conjugate() * b).xyz().length().min(1.0).asin());
        }
    }
    eprintln!("{compared} rotations, worst {worst:e} rad");
    assert!(compared > 500, "{compared}");
    assert!(worst < 1e-3, "{worst} rad");
}
