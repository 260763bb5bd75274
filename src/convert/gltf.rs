//! glTF 2.0 out: a skeleton and its clips as a glTF file that Blender, Godot, Unity, three.js
//! and Bevy read (`.gltf` with its `.bin` beside it, or one `.glb`).
//!
//! * **Skeleton.** One node per bone, named as the skeleton names it, with its rest pose as the
//!   node's transform, and a skin whose joints are every bone (inverse bind matrices from the
//!   rest pose), so that importers make an armature of it.
//! * **Clips.** Each clip is one animation, named as in the file. Every channel keeps the
//!   file's own key times (equal times are made strictly increasing by one ulp each, as glTF
//!   requires: [`crate::animation::distinct_times`]; no key is dropped), with `LINEAR`
//!   interpolation, which glTF defines as slerp for rotations: what the games and rigplay's
//!   sampler do.
//! * **Axes.** Every rest and key is turned into glTF's axes (+Y up, a character facing +Z) by
//!   the change of basis given ([`crate::coords::GTA_TO_GLTF`] for GTA): each local transform
//!   `T` becomes `B·T·B⁻¹` (see [`crate::coords`]), which is the same as turning the whole
//!   skeleton once.
//! * **Root motion** ([`RootMotionExport`]): as the file has it, held in place, or extracted
//!   onto a `RootMotion` node above the skeleton, as playback does it.
//! * **Placement.** A GTA ped stands on the ground, lifted by a top node as rigplay's skeletons
//!   are ([`GltfExport::offset`]).

use crate::animation::{BonePose, Channel, Clip, aligned_to, distinct_times};
use crate::skeleton::Skeleton;
use glam::{Affine3A, Mat4, Quat, Vec3};
use serde_json::{Value, json};
use std::collections::HashMap;

/// What becomes of a clip's root motion (the translation of the track on the skeleton's root
/// bone) in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RootMotionExport {
    /// As the file has it: the root bone moves.
    #[default]
    Baked,
    /// The root bone held at its first key on the extracted axes: the clip plays in place.
    InPlace,
    /// In place, and the movement taken out put on a `RootMotion` node above the skeleton
    /// (what a game's character controller reads).
    Extract,
}

/// One clip to write: the clip and the skeleton bone each of its tracks drives
/// ([`Skeleton::bind`]'s `targets`).
#[derive(Debug, Clone, Copy)]
pub struct GltfClip<'a> {
    /// The clip, as characters play it.
    pub clip: &'a Clip,
    /// Per track, the bone it drives (tracks without a bone are left out).
    pub targets: &'a [Option<usize>],
}

/// A skeleton and clips to write as glTF.
#[derive(Debug, Clone)]
pub struct GltfExport<'a> {
    /// The skeleton: its bones become the nodes and joints.
    pub skeleton: &'a Skeleton,
    /// The change of basis from the skeleton's axes to glTF's ([`crate::coords::GTA_TO_GLTF`]
    /// for GTA skeletons).
    pub to_gltf: Quat,
    /// The clips, one animation each.
    pub clips: Vec<GltfClip<'a>>,
    /// What becomes of root motion.
    pub root_motion: RootMotionExport,
    /// The axes root motion is taken out on, in the skeleton's axes (1 on an extracted axis);
    /// GTA's ground plane is `(1, 1, 0)`.
    pub extracted_axes: Vec3,
    /// Where the skeleton's origin sits in the file (glTF axes): a GTA ped's root is at its hips,
    /// so it is lifted by the height of its lowest joint at rest
    /// ([`Skeleton::lowest_rest_height`]), as rigplay's skeletons are, to stand on the ground.
    /// Non-zero, the file gets a top node named after the skeleton, placed there.
    pub offset: Vec3,
}

impl<'a> GltfExport<'a> {
    /// A GTA ped's clips: in glTF's axes ([`crate::coords::GTA_TO_GLTF`]), feet on the ground,
    /// root motion on GTA's ground plane.
    pub fn gta(
        skeleton: &'a Skeleton,
        clips: Vec<GltfClip<'a>>,
        root_motion: RootMotionExport,
    ) -> Self {
        Self {
            skeleton,
            to_gltf: crate::coords::GTA_TO_GLTF,
            clips,
            root_motion,
            extracted_axes: Vec3::new(1.0, 1.0, 0.0),
            offset: Vec3::new(0.0, -skeleton.lowest_rest_height(), 0.0),
        }
    }

    /// A DAN clip on its own bones ([`Skeleton::first_frame`]): in Bevy's axes already, which
    /// are glTF's; root motion on the ground plane (X, Z); placed where the file puts it.
    pub fn dan(
        skeleton: &'a Skeleton,
        clips: Vec<GltfClip<'a>>,
        root_motion: RootMotionExport,
    ) -> Self {
        Self {
            skeleton,
            to_gltf: Quat::IDENTITY,
            clips,
            root_motion,
            extracted_axes: Vec3::new(1.0, 0.0, 1.0),
            offset: Vec3::ZERO,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GltfReport {
    /// Animations written (a clip none of whose tracks drives a bone is left out, and named in
    /// `empty_clips`).
    pub animations: usize,
    /// Channels and keys written over all animations.
    pub channels: usize,
    /// Keys written over all channels.
    pub keys: usize,
    /// Key times moved back by one ulp to make a channel's times strictly increasing.
    pub nudged_times: usize,
    /// Clips with nothing to animate.
    pub empty_clips: Vec<String>,
}

/// Why a glTF file could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GltfError {
    /// The binary data would pass glTF's 4 GiB limit on a buffer.
    #[error("the binary data would be {bytes} bytes, more than glTF's 4 GiB limit")]
    TooLarge {
        /// The size it would have had.
        bytes: usize,
    },
    /// The skeleton has no bones.
    #[error("the skeleton has no bones")]
    NoBones,
}

/// A written glTF: the JSON document and its binary buffer.
#[derive(Debug, Clone)]
pub struct GltfFile {
    /// The JSON document.
    pub json: Value,
    /// The binary buffer its accessors read.
    pub bin: Vec<u8>,
    /// What was written.
    pub report: GltfReport,
}

impl GltfExport<'_> {
    /// The document and its buffer; `bin_uri` is the buffer's file name for a `.gltf`
    /// (`None` for a `.glb`, whose buffer is the file's own binary chunk).
    pub fn write(&self, bin_uri: Option<&str>) -> Result<GltfFile, GltfError> {
        Writer::new(self).write(bin_uri)
    }

    /// A `.gltf` document (pretty JSON) and the bytes of its `.bin` file, named `bin_uri`.
    pub fn to_gltf(&self, bin_uri: &str) -> Result<(String, Vec<u8>, GltfReport), GltfError> {
        let file = self.write(Some(bin_uri))?;
        let json = serde_json::to_string_pretty(&file.json).unwrap_or_default();
        Ok((json, file.bin, file.report))
    }

    /// A `.glb` file: the JSON chunk and the binary chunk in one.
    pub fn to_glb(&self) -> Result<(Vec<u8>, GltfReport), GltfError> {
        let file = self.write(None)?;
        let mut json = serde_json::to_vec(&file.json).unwrap_or_default();
        while json.len() % 4 != 0 {
            json.push(b' ');
        }
        let mut bin = file.bin;
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
        let length = u32::try_from(total).map_err(|_| GltfError::TooLarge { bytes: total })?;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        if !bin.is_empty() {
            out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
            out.extend_from_slice(b"BIN\0");
            out.extend_from_slice(&bin);
        }
        Ok((out, file.report))
    }
}

/// A rotation `q` of the skeleton's axes in glTF's: `B·q·B⁻¹`.
fn turn_rotation(b: Quat, q: Quat) -> Quat {
    (b * q * b.conjugate()).normalize()
}

/// A scale in glTF's axes: the axes turned, lengths kept. Exact for the changes of basis that
/// permute axes (GTA's and DAN's do): each glTF axis takes the scale of the axis it came from.
fn turn_scale(b: Quat, s: Vec3) -> Vec3 {
    let from = |axis: Vec3| {
        let a = (b.conjugate() * axis).abs();
        if a.max_element() > 1.0 - 1e-5 {
            Some(s.to_array()[a.max_position()])
        } else {
            None
        }
    };
    match (from(Vec3::X), from(Vec3::Y), from(Vec3::Z)) {
        (Some(x), Some(y), Some(z)) => Vec3::new(x, y, z),
        _ => (b * s).abs(),
    }
}

/// An f32 in JSON as the shortest decimal that reads back to it (0.70710677, not
/// 0.7071067690849304).
fn num(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map_or(Value::Null, Value::from)
}

fn nums(xs: &[f32]) -> Value {
    Value::Array(xs.iter().copied().map(num).collect())
}

/// Builds the document: the binary data and the JSON arrays that index it.
struct Writer<'a> {
    export: &'a GltfExport<'a>,
    bin: Vec<u8>,
    buffer_views: Vec<Value>,
    accessors: Vec<Value>,
    report: GltfReport,
}

const FLOAT: u32 = 5126;

impl<'a> Writer<'a> {
    fn new(export: &'a GltfExport<'a>) -> Self {
        Self {
            export,
            bin: Vec::new(),
            buffer_views: Vec::new(),
            accessors: Vec::new(),
            report: GltfReport::default(),
        }
    }

    /// Appends `floats` as a buffer view and an accessor of `kind` ("SCALAR", "VEC3", …);
    /// `min_max` adds the bounds (required for animation inputs).
    fn accessor(&mut self, floats: &[f32], kind: &str, width: usize, min_max: bool) -> usize {
        let offset = self.bin.len();
        for f in floats {
            self.bin.extend_from_slice(&f.to_le_bytes());
        }
        self.buffer_views.push(json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": floats.len() * 4,
        }));
        let mut accessor = json!({
            "bufferView": self.buffer_views.len() - 1,
            "componentType": FLOAT,
            "count": floats.len() / width,
            "type": kind,
        });
        if min_max && !floats.is_empty() {
            let mut min = vec![f32::INFINITY; width];
            let mut max = vec![f32::NEG_INFINITY; width];
            for row in floats.chunks(width) {
                for (i, v) in row.iter().enumerate() {
                    min[i] = min[i].min(*v);
                    max[i] = max[i].max(*v);
                }
            }
            accessor["min"] = nums(&min);
            accessor["max"] = nums(&max);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    fn write(mut self, bin_uri: Option<&str>) -> Result<GltfFile, GltfError> {
        let export = self.export;
        let skeleton = export.skeleton;
        let b = export.to_gltf.normalize();
        if skeleton.bones.is_empty() {
            return Err(GltfError::NoBones);
        }
        let n = skeleton.bones.len();
        // Nodes 0..n: the bones; node n: the `RootMotion` node when root motion is extracted.
        let extract = export.root_motion == RootMotionExport::Extract;
        let mut nodes: Vec<Value> = skeleton
            .bones
            .iter()
            .map(|bone| {
                let rest = bone.rest;
                let mut node = json!({
                    "name": bone.name,
                    "translation": nums(&(b * rest.translation).to_array()),
                    "rotation": nums(&turn_rotation(b, rest.rotation).to_array()),
                });
                let scale = turn_scale(b, rest.scale);
                if scale != Vec3::ONE {
                    node["scale"] = nums(&scale.to_array());
                }
                node
            })
            .collect();
        let mut roots = Vec::new();
        for (i, bone) in skeleton.bones.iter().enumerate() {
            match bone.parent.filter(|&p| p < n && p != i) {
                Some(p) => {
                    let children = nodes[p]
                        .as_object_mut()
                        .map(|o| o.entry("children").or_insert_with(|| json!([])));
                    if let Some(Value::Array(c)) = children {
                        c.push(json!(i));
                    }
                }
                None => roots.push(i),
            }
        }
        let mut scene_roots = if extract {
            nodes.push(json!({ "name": "RootMotion", "children": roots }));
            vec![n]
        } else {
            roots.clone()
        };
        if export.offset != Vec3::ZERO {
            nodes.push(json!({
                "name": skeleton.name,
                "translation": nums(&export.offset.to_array()),
                "children": scene_roots,
            }));
            scene_roots = vec![nodes.len() - 1];
        }
        // The skin: every bone a joint, bound at its rest pose (in glTF axes).
        let rest: Vec<BonePose> = skeleton.rest_pose();
        let world = world_matrices(skeleton, &rest, b);
        let inverse_binds: Vec<f32> = world
            .iter()
            // Inverted as affine maps: the last row stays exactly (0, 0, 0, 1), as glTF asks.
            .flat_map(|m| Mat4::from(m.inverse()).to_cols_array())
            .collect();
        let ibm = self.accessor(&inverse_binds, "MAT4", 16, false);
        let mut skin = json!({
            "name": skeleton.name,
            "joints": (0..n).collect::<Vec<_>>(),
            "inverseBindMatrices": ibm,
        });
        if let [root] = roots.as_slice() {
            skin["skeleton"] = json!(root);
        }
        let mut animations = Vec::new();
        for clip in &export.clips {
            if let Some(a) = self.animation(clip, b, extract.then_some(n)) {
                animations.push(a);
            } else {
                self.report.empty_clips.push(clip.clip.name.clone());
            }
        }
        self.report.animations = animations.len();
        if self.bin.len() > u32::MAX as usize {
            return Err(GltfError::TooLarge {
                bytes: self.bin.len(),
            });
        }
        let mut buffer = json!({ "byteLength": self.bin.len() });
        if let Some(uri) = bin_uri {
            buffer["uri"] = json!(uri);
        }
        let mut doc = json!({
            "asset": {
                "version": "2.0",
                "generator": concat!("rigplay ", env!("CARGO_PKG_VERSION")),
            },
            "scene": 0,
            "scenes": [{ "name": skeleton.name, "nodes": scene_roots }],
            "nodes": nodes,
            "skins": [skin],
            "buffers": [buffer],
            "bufferViews": self.buffer_views,
            "accessors": self.accessors,
        });
        if !animations.is_empty() {
            doc["animations"] = json!(animations);
        }
        Ok(GltfFile {
            json: doc,
            bin: self.bin,
            report: self.report,
        })
    }

    /// One clip as an animation (`None` when no track drives a bone). `root_node`: the
    /// `RootMotion` node, when root motion is extracted.
    fn animation(&mut self, c: &GltfClip, b: Quat, root_node: Option<usize>) -> Option<Value> {
        let export = self.export;
        let skeleton = export.skeleton;
        let root = skeleton.root_track(c.clip).filter(|&t| {
            c.targets.get(t).copied().flatten().is_some()
                && c.clip.tracks()[t].translation.is_some()
        });
        let axes = export.extracted_axes;
        let held;
        let clip = match (export.root_motion, root) {
            (RootMotionExport::Baked, _) | (_, None) => c.clip,
            (_, Some(t)) => {
                held = c.clip.with_root_held(t, axes);
                &held
            }
        };
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        // Input accessors by their times (channels of one track often share them).
        let mut inputs: HashMap<(usize, usize), usize> = HashMap::new();
        let mut driven = vec![false; skeleton.bones.len()];
        for (t, track) in clip.tracks().iter().enumerate() {
            let Some(node) = c.targets.get(t).copied().flatten() else {
                continue;
            };
            if node >= skeleton.bones.len() || std::mem::replace(&mut driven[node], true) {
                // A second track on a bone: the first one plays (as binding does).
                continue;
            }
            let paths = [
                ("rotation", track.rotation),
                ("translation", track.translation),
                ("scale", track.scale),
            ];
            for (path, channel) in paths {
                let Some(channel) = channel else { continue };
                let input = self.input(clip, channel, &mut inputs);
                let output = match path {
                    "rotation" => {
                        let mut previous: Option<Quat> = None;
                        let values: Vec<f32> = clip
                            .rotation_values(channel)
                            .iter()
                            .flat_map(|&q| {
                                let mut q = turn_rotation(b, q);
                                if let Some(p) = previous {
                                    q = aligned_to(q, p);
                                }
                                previous = Some(q);
                                q.to_array()
                            })
                            .collect();
                        self.accessor(&values, "VEC4", 4, false)
                    }
                    "translation" => {
                        let values: Vec<f32> = clip
                            .vector_values(channel)
                            .iter()
                            .flat_map(|&v| (b * v).to_array())
                            .collect();
                        self.accessor(&values, "VEC3", 3, false)
                    }
                    _ => {
                        let values: Vec<f32> = clip
                            .vector_values(channel)
                            .iter()
                            .flat_map(|&v| turn_scale(b, v).to_array())
                            .collect();
                        self.accessor(&values, "VEC3", 3, false)
                    }
                };
                samplers
                    .push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
                channels.push(json!({
                    "sampler": samplers.len() - 1,
                    "target": { "node": node, "path": path },
                }));
                self.report.keys += channel.len();
            }
        }
        // The movement taken out of the root, on the `RootMotion` node: the root's keys less
        // its first, on the extracted axes.
        if let (Some(node), Some(t)) = (root_node, root)
            && let Some(channel) = c.clip.tracks()[t].translation
        {
            let values = c.clip.vector_values(channel);
            let first = values.first().copied().unwrap_or_default();
            let moved: Vec<f32> = values
                .iter()
                .flat_map(|&v| (b * ((v - first) * axes)).to_array())
                .collect();
            let input = self.input(c.clip, channel, &mut inputs);
            let output = self.accessor(&moved, "VEC3", 3, false);
            samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
            channels.push(json!({
                "sampler": samplers.len() - 1,
                "target": { "node": node, "path": "translation" },
            }));
            self.report.keys += channel.len();
        }
        if channels.is_empty() {
            return None;
        }
        self.report.channels += channels.len();
        Some(json!({ "name": c.clip.name, "samplers": samplers, "channels": channels }))
    }

    /// The input accessor of a channel's key times (strictly increasing), shared by channels
    /// of the same times.
    fn input(
        &mut self,
        clip: &Clip,
        channel: Channel,
        inputs: &mut HashMap<(usize, usize), usize>,
    ) -> usize {
        let times = clip.times(channel);
        let key = (times.as_ptr() as usize, times.len());
        if let Some(&a) = inputs.get(&key) {
            return a;
        }
        let distinct = distinct_times(times);
        self.report.nudged_times += distinct.iter().zip(times).filter(|(a, b)| a != b).count();
        let a = self.accessor(&distinct, "SCALAR", 1, true);
        inputs.insert(key, a);
        a
    }
}

/// Every bone's rest world matrix in glTF axes.
fn world_matrices(skeleton: &Skeleton, rest: &[BonePose], b: Quat) -> Vec<Affine3A> {
    let n = skeleton.bones.len();
    let mut world: Vec<Option<Affine3A>> = vec![None; n];
    fn resolve(
        i: usize,
        skeleton: &Skeleton,
        rest: &[BonePose],
        b: Quat,
        world: &mut Vec<Option<Affine3A>>,
        depth: usize,
    ) -> Affine3A {
        if let Some(m) = world[i] {
            return m;
        }
        let r = rest[i];
        let local = Affine3A::from_scale_rotation_translation(
            turn_scale(b, r.scale),
            turn_rotation(b, r.rotation),
            b * r.translation,
        );
        let parent = skeleton.bones[i]
            .parent
            .filter(|&p| p < skeleton.bones.len() && p != i && depth < skeleton.bones.len());
        let m = match parent {
            Some(p) => resolve(p, skeleton, rest, b, world, depth + 1) * local,
            None => local,
        };
        world[i] = Some(m);
        m
    }
    (0..n)
        .map(|i| resolve(i, skeleton, rest, b, &mut world, 0))
        .collect()
}
