//! The bundled sample character (`assets/characters/humanoid.glb`): a low-poly skinned humanoid
//! in a T-pose with Mixamo-style bone names (`mixamorig:Hips`, `mixamorig:LeftUpLeg`, …), so that
//! a new user sees a body move when a clip is retargeted onto it, and so that retargeting is
//! tested on a character that does not share GTA's bone axes.
//!
//! Like a Mixamo export it is glTF's Y up, facing +Z (its left is +X), in metres, under an
//! `Armature` node; each bone's rest rotation turns its local +Y towards its child, so the
//! bones' rest axes differ from GTA's and from the identity. The body is one box per bone,
//! each skinned rigidly to its bone, coloured per part (`COLOR_0`).
//!
//! The file is written by the small glTF 2.0 binary writer below (JSON chunk, BIN chunk); it
//! uses only what glTF requires for a skinned mesh.

use glam::{Mat4, Quat, Vec3};

/// A bone: its name (without the `mixamorig:` prefix), its parent's index, its rest position
/// in the character's space (metres), the half-thickness of its box, and its box's colour
/// (sRGB).
struct Joint {
    name: &'static str,
    parent: Option<usize>,
    at: Vec3,
    half: f32,
    colour: [f32; 4],
}

const SKIN: [f32; 4] = [0.93, 0.74, 0.6, 1.0];
const SHIRT: [f32; 4] = [0.2, 0.45, 0.75, 1.0];
const TROUSERS: [f32; 4] = [0.25, 0.25, 0.3, 1.0];
const SHOES: [f32; 4] = [0.35, 0.2, 0.12, 1.0];

/// The skeleton, parents before children; positions in the character's space.
fn joints() -> Vec<Joint> {
    let j = |name, parent, at: [f32; 3], half, colour| Joint {
        name,
        parent,
        at: Vec3::from(at),
        half,
        colour,
    };
    let mut out = vec![
        j("Hips", None, [0.0, 0.95, 0.0], 0.13, TROUSERS),
        j("Spine", Some(0), [0.0, 1.05, 0.0], 0.13, SHIRT),
        j("Spine1", Some(1), [0.0, 1.17, 0.0], 0.14, SHIRT),
        j("Spine2", Some(2), [0.0, 1.29, 0.0], 0.15, SHIRT),
        j("Neck", Some(3), [0.0, 1.45, 0.0], 0.05, SKIN),
        j("Head", Some(4), [0.0, 1.55, 0.0], 0.1, SKIN),
        j("HeadTop_End", Some(5), [0.0, 1.75, 0.0], 0.0, SKIN),
    ];
    // Arms (T-pose: along ±X) and legs, left (+X) then right (−X).
    for (side, x) in [("Left", 1.0f32), ("Right", -1.0)] {
        let name =
            |part: &str| -> &'static str { Box::leak(format!("{side}{part}").into_boxed_str()) };
        let base = out.len();
        out.extend([
            j(
                name("Shoulder"),
                Some(3),
                [0.06 * x, 1.39, 0.0],
                0.05,
                SHIRT,
            ),
            j(name("Arm"), Some(base), [0.18 * x, 1.39, 0.0], 0.05, SHIRT),
            j(
                name("ForeArm"),
                Some(base + 1),
                [0.44 * x, 1.39, 0.0],
                0.04,
                SKIN,
            ),
            j(
                name("Hand"),
                Some(base + 2),
                [0.68 * x, 1.39, 0.0],
                0.035,
                SKIN,
            ),
            j(
                name("HandIndex1"),
                Some(base + 3),
                [0.78 * x, 1.39, 0.0],
                0.0,
                SKIN,
            ),
        ]);
        let leg = out.len();
        out.extend([
            j(name("UpLeg"), Some(0), [0.09 * x, 0.9, 0.0], 0.07, TROUSERS),
            j(
                name("Leg"),
                Some(leg),
                [0.09 * x, 0.48, 0.0],
                0.055,
                TROUSERS,
            ),
            j(
                name("Foot"),
                Some(leg + 1),
                [0.09 * x, 0.08, 0.0],
                0.05,
                SHOES,
            ),
            j(
                name("ToeBase"),
                Some(leg + 2),
                [0.09 * x, 0.03, 0.12],
                0.04,
                SHOES,
            ),
            j(
                name("Toe_End"),
                Some(leg + 3),
                [0.09 * x, 0.03, 0.2],
                0.0,
                SHOES,
            ),
        ]);
    }
    out
}

/// Each bone's rest rotation in the character's space: +Y turned towards its first child
/// (a leaf keeps its parent's).
fn world_rotations(joints: &[Joint]) -> Vec<Quat> {
    let mut out = vec![Quat::IDENTITY; joints.len()];
    for (i, joint) in joints.iter().enumerate() {
        let child = joints.iter().position(|c| c.parent == Some(i));
        out[i] = match child {
            Some(c) => Quat::from_rotation_arc(Vec3::Y, (joints[c].at - joint.at).normalize()),
            None => joint.parent.map_or(Quat::IDENTITY, |p| out[p]),
        };
    }
    out
}

/// An sRGB colour as glTF's `COLOR_0` holds it: linear.
fn linear(c: [f32; 4]) -> [f32; 4] {
    let l = |v: f32| {
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    [l(c[0]), l(c[1]), l(c[2]), c[3]]
}

/// The name of bone `i` in the file.
fn bone_name(joints: &[Joint], i: usize) -> String {
    format!("mixamorig:{}", joints[i].name)
}

/// Little-endian bytes, 4-aligned, with the glTF accessors that view them.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<serde_json::Value>,
    accessors: Vec<serde_json::Value>,
}

impl Bin {
    /// Appends data as a buffer view and an accessor of `count` elements; the accessor's index.
    fn push(
        &mut self,
        data: &[u8],
        count: usize,
        component: u32,
        kind: &str,
        target: Option<u32>,
        bounds: Option<(Vec3, Vec3)>,
    ) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut view = serde_json::json!({
            "buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()
        });
        if let Some(t) = target {
            view["target"] = t.into();
        }
        self.bytes.extend_from_slice(data);
        self.views.push(view);
        let mut accessor = serde_json::json!({
            "bufferView": self.views.len() - 1, "componentType": component,
            "count": count, "type": kind
        });
        if let Some((lo, hi)) = bounds {
            accessor["min"] = serde_json::json!(lo.to_array());
            accessor["max"] = serde_json::json!(hi.to_array());
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

fn floats(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// The sample character as a `.glb` file.
pub fn humanoid_glb() -> Vec<u8> {
    let joints = joints();
    let world = world_rotations(&joints);
    // Mesh: a box per bone that has a child, from the bone to its first child, in bind pose
    // (the character's space), skinned to that bone alone; the head's box is the Head bone's.
    let (mut positions, mut normals, mut colours, mut bones, mut indices) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::<u32>::new(),
    );
    for (i, joint) in joints.iter().enumerate() {
        let Some(child) = joints.iter().position(|c| c.parent == Some(i)) else {
            continue;
        };
        if joint.half == 0.0 {
            continue;
        }
        let (a, b) = (joint.at, joints[child].at);
        // The box's frame: its long axis along the bone, the others from the bone's rotation.
        let r = world[i];
        let (u, v) = (r * Vec3::X * joint.half, r * Vec3::Z * joint.half);
        let axis = b - a;
        let faces: [(Vec3, [Vec3; 4]); 6] = {
            let c = |s: f32, t: f32, along: f32| a + axis * along + u * s + v * t;
            [
                (
                    r * Vec3::X,
                    [c(1., -1., 0.), c(1., 1., 0.), c(1., 1., 1.), c(1., -1., 1.)],
                ),
                (
                    -(r * Vec3::X),
                    [
                        c(-1., 1., 0.),
                        c(-1., -1., 0.),
                        c(-1., -1., 1.),
                        c(-1., 1., 1.),
                    ],
                ),
                (
                    r * Vec3::Z,
                    [c(1., 1., 0.), c(-1., 1., 0.), c(-1., 1., 1.), c(1., 1., 1.)],
                ),
                (
                    -(r * Vec3::Z),
                    [
                        c(-1., -1., 0.),
                        c(1., -1., 0.),
                        c(1., -1., 1.),
                        c(-1., -1., 1.),
                    ],
                ),
                (
                    r * Vec3::Y,
                    [
                        c(-1., -1., 1.),
                        c(1., -1., 1.),
                        c(1., 1., 1.),
                        c(-1., 1., 1.),
                    ],
                ),
                (
                    -(r * Vec3::Y),
                    [
                        c(-1., 1., 0.),
                        c(1., 1., 0.),
                        c(1., -1., 0.),
                        c(-1., -1., 0.),
                    ],
                ),
            ]
        };
        for (normal, quad) in faces {
            let base = positions.len() as u32;
            // Counter-clockwise seen from outside (from the normal's side).
            let (p0, p1, p2) = (quad[0], quad[1], quad[2]);
            let flip = (p1 - p0).cross(p2 - p0).dot(normal) < 0.0;
            positions.extend(quad);
            normals.extend([normal.normalize(); 4]);
            colours.extend([linear(joint.colour); 4]);
            bones.extend([i as u16; 4]);
            let tris = if flip {
                [0, 2, 1, 0, 3, 2]
            } else {
                [0, 1, 2, 0, 2, 3]
            };
            indices.extend(tris.map(|k| base + k));
        }
    }
    let (lo, hi) = positions.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let mut bin = Bin::default();
    const FLOAT: u32 = 5126;
    const ARRAY: Option<u32> = Some(34962);
    let position = bin.push(
        &floats(positions.iter().flat_map(|p| p.to_array())),
        positions.len(),
        FLOAT,
        "VEC3",
        ARRAY,
        Some((lo, hi)),
    );
    let normal = bin.push(
        &floats(normals.iter().flat_map(|n| n.to_array())),
        normals.len(),
        FLOAT,
        "VEC3",
        ARRAY,
        None,
    );
    let colour = bin.push(
        &floats(colours.iter().flatten().copied()),
        colours.len(),
        FLOAT,
        "VEC4",
        ARRAY,
        None,
    );
    let joint_bytes: Vec<u8> = bones
        .iter()
        .flat_map(|&b| [b, 0, 0, 0])
        .flat_map(u16::to_le_bytes)
        .collect();
    let joint_ids = bin.push(&joint_bytes, bones.len(), 5123, "VEC4", ARRAY, None);
    let weights = bin.push(
        &floats(bones.iter().flat_map(|_| [1.0, 0.0, 0.0, 0.0])),
        bones.len(),
        FLOAT,
        "VEC4",
        ARRAY,
        None,
    );
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index = bin.push(
        &index_bytes,
        indices.len(),
        5125,
        "SCALAR",
        Some(34963),
        None,
    );
    // Inverse bind matrices: the inverse of each bone's rest transform in the character's
    // space (the mesh is in that space and the Armature node is the identity).
    let inverse_binds = floats(joints.iter().zip(&world).flat_map(|(j, r)| {
        Mat4::from_rotation_translation(*r, j.at)
            .inverse()
            .to_cols_array()
    }));
    let ibm = bin.push(&inverse_binds, joints.len(), FLOAT, "MAT4", None, None);

    // Nodes: the joints (0..n, local rest transforms), the body mesh (n), the Armature (n + 1).
    let n = joints.len();
    let mut nodes: Vec<serde_json::Value> = joints
        .iter()
        .enumerate()
        .map(|(i, joint)| {
            let (parent_at, parent_rotation) = joint
                .parent
                .map_or((Vec3::ZERO, Quat::IDENTITY), |p| (joints[p].at, world[p]));
            let inverse = parent_rotation.inverse();
            let translation = inverse * (joint.at - parent_at);
            let rotation = (inverse * world[i]).normalize();
            let children: Vec<usize> = (0..n).filter(|&c| joints[c].parent == Some(i)).collect();
            let mut node = serde_json::json!({
                "name": bone_name(&joints, i),
                "translation": translation.to_array(),
                "rotation": rotation.to_array(),
            });
            if !children.is_empty() {
                node["children"] = serde_json::json!(children);
            }
            node
        })
        .collect();
    nodes.push(serde_json::json!({ "name": "Body", "mesh": 0, "skin": 0 }));
    nodes.push(serde_json::json!({ "name": "Armature", "children": [0, n] }));
    let json = serde_json::json!({
        "asset": { "version": "2.0", "generator": "rigplay-samples" },
        "scene": 0,
        "scenes": [{ "name": "Humanoid", "nodes": [n + 1] }],
        "nodes": nodes,
        "meshes": [{
            "name": "Body",
            "primitives": [{
                "attributes": {
                    "POSITION": position, "NORMAL": normal, "COLOR_0": colour,
                    "JOINTS_0": joint_ids, "WEIGHTS_0": weights
                },
                "indices": index,
                "material": 0
            }]
        }],
        "materials": [{
            "name": "Body",
            "pbrMetallicRoughness": { "metallicFactor": 0.0, "roughnessFactor": 0.8 }
        }],
        "skins": [{ "name": "Armature", "joints": (0..n).collect::<Vec<_>>(),
                    "inverseBindMatrices": ibm, "skeleton": 0 }],
        "accessors": bin.accessors,
        "bufferViews": bin.views,
        "buffers": [{ "byteLength": bin.bytes.len() }],
    });
    glb(&serde_json::to_vec(&json).expect("plain JSON"), bin.bytes)
}

/// A glTF binary: the header, the JSON chunk (padded with spaces) and the BIN chunk (padded with
/// zeros).
fn glb(json: &[u8], mut bin: Vec<u8>) -> Vec<u8> {
    let mut json = json.to_vec();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let length = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(length);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(length as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}
