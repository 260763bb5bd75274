//! glTF 2.0 in (`.gltf`, `.glb`, `.vrm`, `.vrma`): the node hierarchy, its skins and its
//! animations, as an importer of animation needs them. Meshes, materials and images are not
//! read.
//!
//! * **Nodes** with their names, parents and rest transforms (`translation`, `rotation`,
//!   `scale`, or a `matrix`, decomposed).
//! * **Animations**, one [`Clip`] each, one track per animated node: `LINEAR` keys as they are
//!   (glTF's slerp is the games'), `STEP` keys as pairs of keys at equal times (rigplay's sampler
//!   steps to the later of equal times), `CUBICSPLINE` keys by their values (the tangents are
//!   dropped, said in a warning). Output accessors of floats or normalised integers, sparse
//!   accessors included.
//! * **Skins**: their joints and inverse bind matrices, which give the pose the mesh was bound
//!   in ([`GltfScene::bind_pose`]) where the nodes stand in another.
//! * **Humanoid bones** named by VRM 1.0 (`VRMC_vrm`), VRM 0.x (`VRM`) and VRM animation
//!   (`VRMC_vrm_animation`) extensions: which node is the hips, the left upper leg, … by the
//!   file's own word.
//! * **Buffers** from a `.glb`'s binary chunk, from `data:` URIs (base64), or from files beside
//!   it, which the caller reads (`external`).
//!
//! Reading never panics: every index, offset and count is checked against what is there, and
//! an error says where (the JSON path) and what was expected.

use crate::animation::{BoneRef, BoneTrack, Clip, ClipBuilder};
use glam::{Mat4, Quat, Vec3};
use serde_json::Value;

/// A node of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfNode {
    /// Its name (`node N` when it has none).
    pub name: String,
    /// Its parent's index.
    pub parent: Option<usize>,
    /// Its rest transform: translation, rotation, scale.
    pub rest: (Vec3, Quat, Vec3),
}

/// An animation of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfAnimation {
    /// The clip: one track per animated node.
    pub clip: Clip,
    /// Per track, the node it drives.
    pub nodes: Vec<usize>,
}

/// What an importer of animation reads of a glTF file.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfScene {
    /// Every node, in the file's order.
    pub nodes: Vec<GltfNode>,
    /// Every animation, in the file's order.
    pub animations: Vec<GltfAnimation>,
    /// Humanoid bones a VRM or VRM-animation extension names: (VRM bone name, node), e.g.
    /// `("hips", 3)`.
    pub humanoid: Vec<(String, usize)>,
    /// The skins, in the file's order.
    pub skins: Vec<GltfSkin>,
}

/// A skin of the file: the nodes it binds and the pose it bound them in.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfSkin {
    /// The node whose mesh it deforms (the first that names it), if any.
    pub node: Option<usize>,
    /// Its joints' nodes.
    pub joints: Vec<usize>,
    /// Per joint, its inverse bind matrix (the identity where the file gives none).
    pub inverse_bind: Vec<Mat4>,
}

impl GltfScene {
    /// Every node's rest transform, those of a skin's joints as the skin was bound. In the
    /// bind pose a joint's world matrix is `W(mesh node) · IBM⁻¹` (glTF skins a vertex by
    /// `W(mesh node)⁻¹ · W(joint) · IBM`), so a joint whose parent is a joint of the same skin
    /// rests at `IBM(parent) · IBM(joint)⁻¹` (the mesh node cancels out), and a root joint at
    /// `W(parent)⁻¹ · W(mesh node) · IBM(joint)⁻¹`, the nodes above it at their rest (a skin no
    /// node uses is taken as on a mesh at the origin). Files whose nodes stand in another pose
    /// than the one the mesh was bound in (a frame of an animation, say) then give the bind
    /// pose. The other nodes, and a joint whose matrices do not give a finite transform, keep
    /// the node's own.
    pub fn bind_pose(&self) -> Vec<(Vec3, Quat, Vec3)> {
        let mut out: Vec<(Vec3, Quat, Vec3)> = self.nodes.iter().map(|n| n.rest).collect();
        // World matrices at the nodes' own rest (parents are acyclic: checked on read).
        let world = |node: usize| {
            let mut m = Mat4::IDENTITY;
            let mut at = Some(node);
            while let Some(n) = at.filter(|&n| n < self.nodes.len()) {
                let (t, r, s) = self.nodes[n].rest;
                m = Mat4::from_scale_rotation_translation(s, r, t) * m;
                at = self.nodes[n].parent;
            }
            m
        };
        for skin in &self.skins {
            let ibm = |node: usize| {
                skin.joints
                    .iter()
                    .position(|&j| j == node)
                    .and_then(|k| skin.inverse_bind.get(k))
            };
            let mesh = skin.node.map_or(Mat4::IDENTITY, world);
            for (k, &joint) in skin.joints.iter().enumerate() {
                let (Some(node), Some(own)) = (self.nodes.get(joint), skin.inverse_bind.get(k))
                else {
                    continue;
                };
                let local = match node.parent.and_then(|p| ibm(p).map(|m| (p, m))) {
                    Some((_, parent)) => *parent * own.inverse(),
                    None => {
                        let above = node.parent.map_or(Mat4::IDENTITY, world);
                        above.inverse() * mesh * own.inverse()
                    }
                };
                let (scale, rotation, translation) = local.to_scale_rotation_translation();
                if scale.is_finite() && rotation.is_finite() && translation.is_finite() {
                    out[joint] = (translation, rotation.normalize(), scale);
                }
            }
        }
        out
    }
}

/// A read file and what was odd about it.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfRead {
    /// The file's nodes and animations.
    pub scene: GltfScene,
    /// What was read with a loss (cubic-spline tangents, channels on what is not a node's
    /// transform).
    pub warnings: Vec<String>,
}

/// Why a glTF file could not be read: where (a JSON path, or a byte offset in a `.glb`) and
/// what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}: {expected}")]
pub struct GltfReadError {
    /// Where: `byte N` of a `.glb`, or the JSON path (`/animations/0/samplers/1/input`).
    pub at: String,
    /// What was expected there.
    pub expected: String,
}

fn err(at: impl Into<String>, expected: impl Into<String>) -> GltfReadError {
    GltfReadError {
        at: at.into(),
        expected: expected.into(),
    }
}

/// At most this many nodes, and keys in one channel.
pub const MAX_NODES: usize = 100_000;

impl GltfScene {
    /// Reads a `.gltf` (JSON) or `.glb` (binary) file. `external(uri)` gives the bytes of a
    /// buffer stored in a file beside it (`None`: not there).
    pub fn read(
        bytes: &[u8],
        external: impl Fn(&str) -> Option<Vec<u8>>,
    ) -> Result<GltfRead, GltfReadError> {
        let (json, blob) = if bytes.starts_with(b"glTF") {
            glb_chunks(bytes)?
        } else {
            (bytes, None)
        };
        let doc: Value = serde_json::from_slice(json)
            .map_err(|e| err(format!("line {}", e.line()), format!("JSON ({e})")))?;
        let mut warnings = Vec::new();
        // Buffers.
        let mut buffers: Vec<Option<Vec<u8>>> = Vec::new();
        for (i, b) in array(&doc, "buffers").iter().enumerate() {
            let data = match b.get("uri").and_then(Value::as_str) {
                None => blob.map(<[u8]>::to_vec),
                Some(uri) => match uri.strip_prefix("data:") {
                    Some(data) => data
                        .split_once(";base64,")
                        .and_then(|(_, b64)| base64(b64))
                        .or_else(|| {
                            warnings.push(format!("buffer {i}: a data URI that is not base64"));
                            None
                        }),
                    None => external(uri),
                },
            };
            buffers.push(data);
        }
        let nodes = read_nodes(&doc)?;
        let accessor =
            |index: &Value, at: &str, width: usize| read_accessor(&doc, &buffers, index, at, width);
        let mut animations = Vec::new();
        for (a, anim) in array(&doc, "animations").iter().enumerate() {
            let name = anim
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("animation {a}"), str::to_owned);
            let samplers = array(anim, "samplers");
            let mut builder = ClipBuilder::new(name.clone());
            // Per node, its channels.
            let mut per_node: Vec<(usize, [Option<crate::animation::Channel>; 3])> = Vec::new();
            for (c, channel) in array(anim, "channels").iter().enumerate() {
                let at = format!("/animations/{a}/channels/{c}");
                let target = channel.get("target");
                let node = target
                    .and_then(|t| t.get("node"))
                    .and_then(Value::as_u64)
                    .map(|n| n as usize);
                let path = target
                    .and_then(|t| t.get("path"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let slot = match path {
                    "rotation" => 0,
                    "translation" => 1,
                    "scale" => 2,
                    other => {
                        warnings.push(format!(
                            "{at}: a {other:?} channel is not a transform: left out"
                        ));
                        continue;
                    }
                };
                let Some(node) = node.filter(|&n| n < nodes.len()) else {
                    // Channels without a node belong to extensions (KHR_animation_pointer).
                    continue;
                };
                let sampler = channel
                    .get("sampler")
                    .and_then(Value::as_u64)
                    .and_then(|s| samplers.get(s as usize))
                    .ok_or_else(|| err(&at, "a sampler of this animation"))?;
                let width = if slot == 0 { 4 } else { 3 };
                let times = accessor(&sampler["input"], &format!("{at}/input"), 1)?;
                let values = accessor(&sampler["output"], &format!("{at}/output"), width)?;
                let interpolation = sampler
                    .get("interpolation")
                    .and_then(Value::as_str)
                    .unwrap_or("LINEAR");
                let (times, values) =
                    keys(&times, &values, width, interpolation, &at, &mut warnings)?;
                if times.is_empty() {
                    continue;
                }
                let t = builder
                    .times(&times)
                    .map_err(|e| err(format!("{at}/input"), e.to_string()))?;
                let ch = match slot {
                    0 => {
                        let q: Vec<Quat> = values
                            .chunks(4)
                            .map(|v| unit(Quat::from_xyzw(v[0], v[1], v[2], v[3])))
                            .collect();
                        builder.rotations(t, &q)
                    }
                    1 => builder.translations(t, &vec3s(&values)),
                    _ => builder.scales(t, &vec3s(&values)),
                }
                .map_err(|e| err(format!("{at}/output"), e.to_string()))?;
                match per_node.iter_mut().find(|(n, _)| *n == node) {
                    Some((_, chs)) => chs[slot] = Some(ch),
                    None => {
                        let mut chs = [None; 3];
                        chs[slot] = Some(ch);
                        per_node.push((node, chs));
                    }
                }
            }
            let mut track_nodes = Vec::new();
            for (node, [rotation, translation, scale]) in per_node {
                builder.track(BoneTrack {
                    bone: BoneRef {
                        name: nodes[node].name.clone(),
                        id: None,
                    },
                    rotation,
                    translation,
                    scale,
                });
                track_nodes.push(node);
            }
            animations.push(GltfAnimation {
                clip: builder.build(),
                nodes: track_nodes,
            });
        }
        let humanoid = humanoid_bones(&doc, nodes.len());
        let mut skins = Vec::new();
        for (k, skin) in array(&doc, "skins").iter().enumerate() {
            let at = format!("/skins/{k}");
            let joints = array(skin, "joints")
                .iter()
                .map(|j| j.as_u64().map(|j| j as usize).filter(|&j| j < nodes.len()))
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| err(format!("{at}/joints"), "indices of nodes"))?;
            let inverse_bind = match skin.get("inverseBindMatrices") {
                None => vec![Mat4::IDENTITY; joints.len()],
                Some(index) => {
                    let m = accessor(index, &format!("{at}/inverseBindMatrices"), 16)?;
                    if m.len() != joints.len() * 16 {
                        return Err(err(
                            format!("{at}/inverseBindMatrices"),
                            format!("one matrix per joint ({})", joints.len()),
                        ));
                    }
                    m.chunks(16).map(Mat4::from_cols_slice).collect()
                }
            };
            let node = array(&doc, "nodes")
                .iter()
                .position(|n| n.get("skin").and_then(Value::as_u64) == Some(k as u64));
            skins.push(GltfSkin {
                node,
                joints,
                inverse_bind,
            });
        }
        Ok(GltfRead {
            scene: GltfScene {
                nodes,
                animations,
                humanoid,
                skins,
            },
            warnings,
        })
    }
}

/// The `external` reader [`GltfScene::read`] takes for a file at `path` on disk: a buffer's URI
/// read as a file beside it, by relative names only (an absolute path or one that climbs out
/// with `..` reads as missing, so a file cannot pull in others from elsewhere on the disk).
pub fn files_beside(path: &std::path::Path) -> impl Fn(&str) -> Option<Vec<u8>> + '_ {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    move |uri: &str| {
        let relative = std::path::Path::new(uri);
        if relative.is_absolute() || relative.components().any(|c| c.as_os_str() == "..") {
            return None;
        }
        std::fs::read(dir.join(relative)).ok()
    }
}

/// The JSON chunk and the binary chunk of a `.glb`.
fn glb_chunks(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), GltfReadError> {
    let u32_at = |o: usize| -> Result<usize, GltfReadError> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| err(format!("byte {o}"), "4 more bytes of the GLB header"))
    };
    let length = u32_at(8)?.min(bytes.len());
    let json_len = u32_at(12)?;
    if bytes.get(16..20) != Some(b"JSON") {
        return Err(err("byte 16", "the JSON chunk"));
    }
    let json = bytes
        .get(20..20usize.saturating_add(json_len))
        .filter(|_| 20 + json_len <= length)
        .ok_or_else(|| {
            err(
                "byte 12",
                format!("a JSON chunk of {json_len} bytes within the file"),
            )
        })?;
    let at = 20 + json_len;
    let blob = match (u32_at(at), bytes.get(at + 4..at + 8)) {
        (Ok(n), Some(b"BIN\0")) => Some(
            bytes
                .get(at + 8..(at + 8).saturating_add(n))
                .ok_or_else(|| err(format!("byte {at}"), format!("a binary chunk of {n} bytes")))?,
        ),
        _ => None,
    };
    Ok((json, blob))
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

fn floats(v: Option<&Value>, n: usize) -> Option<Vec<f32>> {
    let a = v?.as_array()?;
    (a.len() == n).then(|| {
        a.iter()
            .map(|x| x.as_f64().unwrap_or(f64::NAN) as f32)
            .collect()
    })
}

fn read_nodes(doc: &Value) -> Result<Vec<GltfNode>, GltfReadError> {
    let list = array(doc, "nodes");
    if list.len() > MAX_NODES {
        return Err(err("/nodes", format!("at most {MAX_NODES} nodes")));
    }
    let mut nodes: Vec<GltfNode> = list
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let name = n
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("node {i}"), str::to_owned);
            let rest = match floats(n.get("matrix"), 16) {
                Some(m) => {
                    let (s, r, t) = Mat4::from_cols_slice(&m).to_scale_rotation_translation();
                    (t, r.normalize(), s)
                }
                None => (
                    floats(n.get("translation"), 3).map_or(Vec3::ZERO, |v| Vec3::from_slice(&v)),
                    floats(n.get("rotation"), 4)
                        .map_or(Quat::IDENTITY, |v| unit(Quat::from_slice(&v))),
                    floats(n.get("scale"), 3).map_or(Vec3::ONE, |v| Vec3::from_slice(&v)),
                ),
            };
            let finite = |v: Vec3, d: Vec3| if v.is_finite() { v } else { d };
            GltfNode {
                name,
                parent: None,
                rest: (
                    finite(rest.0, Vec3::ZERO),
                    rest.1,
                    finite(rest.2, Vec3::ONE),
                ),
            }
        })
        .collect();
    for (i, n) in list.iter().enumerate() {
        for c in array(n, "children") {
            let c = c
                .as_u64()
                .map(|c| c as usize)
                .filter(|&c| c < nodes.len() && c != i)
                .ok_or_else(|| err(format!("/nodes/{i}/children"), "indices of other nodes"))?;
            if nodes[c].parent.is_some() {
                return Err(err(
                    format!("/nodes/{i}/children"),
                    format!("node {c} under one parent only"),
                ));
            }
            nodes[c].parent = Some(i);
        }
    }
    // No cycles: every chain of parents ends.
    for start in 0..nodes.len() {
        let (mut at, mut steps) = (Some(start), 0);
        while let Some(n) = at {
            steps += 1;
            if steps > nodes.len() {
                return Err(err(
                    format!("/nodes/{start}"),
                    "a tree of nodes (this one is in a cycle)",
                ));
            }
            at = nodes[n].parent;
        }
    }
    Ok(nodes)
}

/// An accessor's values as f32 (`width` per element), normalised integers scaled as glTF
/// says.
fn read_accessor(
    doc: &Value,
    buffers: &[Option<Vec<u8>>],
    index: &Value,
    at: &str,
    width: usize,
) -> Result<Vec<f32>, GltfReadError> {
    let i = index.as_u64().ok_or_else(|| err(at, "an accessor index"))? as usize;
    let a = array(doc, "accessors")
        .get(i)
        .ok_or_else(|| err(at, format!("accessor {i} of the file")))?;
    let at = format!("/accessors/{i}");
    let count = a.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
    let kind = a.get("type").and_then(Value::as_str).unwrap_or("");
    let components = match kind {
        "SCALAR" => 1,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        _ => {
            return Err(err(
                &at,
                format!("a SCALAR, VEC3, VEC4 or MAT4 accessor, not {kind:?}"),
            ));
        }
    };
    // Cubic-spline outputs hold three elements per key; the width is checked by the caller.
    if components != width {
        return Err(err(
            &at,
            format!("{width} components an element, not {components}"),
        ));
    }
    let component = a.get("componentType").and_then(Value::as_u64).unwrap_or(0);
    let (size, read): (usize, fn(&[u8]) -> f32) = match component {
        5126 => (4, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        5120 => (1, |b| (b[0] as i8 as f32 / 127.0).max(-1.0)),
        5121 => (1, |b| b[0] as f32 / 255.0),
        5122 => (2, |b| {
            (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0)
        }),
        5123 => (2, |b| u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0),
        c => {
            return Err(err(
                &at,
                format!("floats or normalised integers, not component type {c}"),
            ));
        }
    };
    let element = size * components;
    let decode = |bytes: &[u8], stride: usize, count: usize, out: &mut Vec<f32>| {
        for e in 0..count {
            let start = e * stride;
            for c in 0..components {
                out.push(read(&bytes[start + c * size..start + (c + 1) * size]));
            }
        }
    };
    let mut out = match a.get("bufferView").and_then(Value::as_u64) {
        Some(view) => {
            let offset = a.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
            let (bytes, stride) =
                view_elements(doc, buffers, view, offset, count, element, true, &at)?;
            let mut out = Vec::with_capacity(count * components);
            decode(bytes, stride, count, &mut out);
            out
        }
        // No view: zeros, which a sparse accessor then changes.
        None if count <= MAX_VIEWLESS => vec![0.0; count * components],
        None => {
            return Err(err(
                &at,
                format!("at most {MAX_VIEWLESS} elements in an accessor without a buffer view"),
            ));
        }
    };
    if let Some(sparse) = a.get("sparse") {
        let at = format!("{at}/sparse");
        let n = sparse.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
        if n == 0 || n > count {
            return Err(err(
                &at,
                format!("a count from 1 to the accessor's {count}"),
            ));
        }
        let (indices, values) = (&sparse["indices"], &sparse["values"]);
        let index_size = match indices.get("componentType").and_then(Value::as_u64) {
            Some(5121) => 1,
            Some(5123) => 2,
            Some(5125) => 4,
            _ => {
                return Err(err(
                    format!("{at}/indices"),
                    "component type 5121, 5123 or 5125",
                ));
            }
        };
        let place = |v: &Value, what: &str| -> Result<(u64, usize), GltfReadError> {
            let view = v
                .get("bufferView")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(format!("{at}/{what}"), "a buffer view"))?;
            Ok((
                view,
                v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize,
            ))
        };
        let (view, offset) = place(indices, "indices")?;
        let (index_bytes, _) = view_elements(
            doc,
            buffers,
            view,
            offset,
            n,
            index_size,
            false,
            &format!("{at}/indices"),
        )?;
        let (view, offset) = place(values, "values")?;
        let (value_bytes, _) = view_elements(
            doc,
            buffers,
            view,
            offset,
            n,
            element,
            false,
            &format!("{at}/values"),
        )?;
        let mut patch = Vec::with_capacity(n * components);
        decode(value_bytes, element, n, &mut patch);
        for (k, value) in patch.chunks(components).enumerate() {
            let b = &index_bytes[k * index_size..(k + 1) * index_size];
            let index = match index_size {
                1 => b[0] as usize,
                2 => u16::from_le_bytes([b[0], b[1]]) as usize,
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            };
            let to = out
                .get_mut(index * components..(index + 1) * components)
                .ok_or_else(|| {
                    err(
                        format!("{at}/indices"),
                        format!("indices below the accessor's count {count}, not {index}"),
                    )
                })?;
            to.copy_from_slice(value);
        }
    }
    Ok(out)
}

/// At most this many elements in an accessor without a buffer view (all zeros, or a sparse
/// accessor's base).
pub const MAX_VIEWLESS: usize = 1 << 20;

/// The bytes of buffer view `view` from `offset` that hold `count` elements of `element` bytes,
/// each `stride` bytes after the last (the view's `byteStride` where `strided` and given, else
/// packed), checked to lie inside the view and its buffer before anything is read; and the
/// stride.
#[allow(clippy::too_many_arguments)]
fn view_elements<'a>(
    doc: &Value,
    buffers: &'a [Option<Vec<u8>>],
    view: u64,
    offset: usize,
    count: usize,
    element: usize,
    strided: bool,
    at: &str,
) -> Result<(&'a [u8], usize), GltfReadError> {
    let v = array(doc, "bufferViews")
        .get(view as usize)
        .ok_or_else(|| err(at, format!("buffer view {view} of the file")))?;
    let buffer = v.get("buffer").and_then(Value::as_u64).unwrap_or(u64::MAX) as usize;
    let data = buffers
        .get(buffer)
        .and_then(Option::as_deref)
        .ok_or_else(|| {
            err(
                format!("/bufferViews/{view}"),
                format!("buffer {buffer}'s data"),
            )
        })?;
    let view_offset = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let view_length = v.get("byteLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let stride = match v.get("byteStride").and_then(Value::as_u64) {
        Some(s) if strided => (s as usize).max(element),
        _ => element,
    };
    let view_bytes = data
        .get(view_offset..view_offset.saturating_add(view_length))
        .ok_or_else(|| err(format!("/bufferViews/{view}"), "a view within its buffer"))?;
    // Every element inside the view, checked before anything is allocated.
    let needed = match count {
        0 => 0,
        n => offset
            .saturating_add((n - 1).saturating_mul(stride))
            .saturating_add(element),
    };
    if needed > view_bytes.len() {
        return Err(err(
            at,
            format!(
                "{count} elements within buffer view {view} ({} bytes)",
                view_bytes.len()
            ),
        ));
    }
    Ok((&view_bytes[offset.min(view_bytes.len())..], stride))
}

/// A channel's keys as rigplay plays them: `LINEAR` as they are; `STEP` with each key doubled
/// at the next key's time; `CUBICSPLINE` by its values.
fn keys(
    times: &[f32],
    values: &[f32],
    width: usize,
    interpolation: &str,
    at: &str,
    warnings: &mut Vec<String>,
) -> Result<(Vec<f32>, Vec<f32>), GltfReadError> {
    let n = times.len();
    let per_key = if interpolation == "CUBICSPLINE" { 3 } else { 1 };
    if values.len() != n * width * per_key {
        return Err(err(
            format!("{at}/output"),
            format!("{} values for {n} keys", n * width * per_key),
        ));
    }
    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) {
        return Err(err(
            format!("{at}/input"),
            "finite key times that do not go back",
        ));
    }
    match interpolation {
        "STEP" => {
            let mut t = Vec::with_capacity(2 * n);
            let mut v = Vec::with_capacity(2 * n * width);
            for k in 0..n {
                if k > 0 {
                    t.push(times[k]);
                    v.extend_from_slice(&values[(k - 1) * width..k * width]);
                }
                t.push(times[k]);
                v.extend_from_slice(&values[k * width..(k + 1) * width]);
            }
            Ok((t, v))
        }
        "CUBICSPLINE" => {
            warnings.push(format!(
                "{at}: cubic-spline keys read by their values (the tangents are dropped)"
            ));
            let v = (0..n)
                .flat_map(|k| {
                    values[(3 * k + 1) * width..(3 * k + 2) * width]
                        .iter()
                        .copied()
                })
                .collect();
            Ok((times.to_vec(), v))
        }
        _ => Ok((times.to_vec(), values.to_vec())),
    }
}

/// `q` normalised, or the identity for a zero or non-finite one.
fn unit(q: Quat) -> Quat {
    glam::Vec4::from(q)
        .try_normalize()
        .map_or(Quat::IDENTITY, Quat::from_vec4)
}

fn vec3s(values: &[f32]) -> Vec<Vec3> {
    values.chunks(3).map(Vec3::from_slice).collect()
}

/// The humanoid bones a VRM 1.0, VRM 0.x or VRM animation extension names.
fn humanoid_bones(doc: &Value, nodes: usize) -> Vec<(String, usize)> {
    let ext = doc.get("extensions");
    let mut out = Vec::new();
    let node_of = |v: &Value| {
        v.get("node")
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .filter(|&n| n < nodes)
    };
    for key in ["VRMC_vrm", "VRMC_vrm_animation"] {
        if let Some(bones) = ext
            .and_then(|e| e.get(key))
            .and_then(|v| v.get("humanoid"))
            .and_then(|h| h.get("humanBones"))
            .and_then(Value::as_object)
        {
            for (name, v) in bones {
                if let Some(n) = node_of(v) {
                    out.push((name.clone(), n));
                }
            }
        }
    }
    // VRM 0.x: a list of { bone, node }.
    if let Some(list) = ext
        .and_then(|e| e.get("VRM"))
        .and_then(|v| v.get("humanoid"))
        .and_then(|h| h.get("humanBones"))
        .and_then(Value::as_array)
    {
        for b in list {
            if let (Some(name), Some(n)) = (b.get("bone").and_then(Value::as_str), node_of(b)) {
                out.push((name.to_owned(), n));
            }
        }
    }
    out
}

/// Standard base64 (with or without padding); `None` at the first character that is not.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let produced = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        for i in 0..produced {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}
