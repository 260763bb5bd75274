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
//! * **A model** ([`GltfExport::model`]): the clips on a DFF ped's frames instead of a bare
//!   skeleton, with its meshes (one per geometry, a primitive per material: positions, normals,
//!   UVs, prelit colours, joints and weights), a skin per skinned geometry (its joints and the
//!   file's inverse bind matrices), its materials (colour, alpha mode as Bevy's `.dff` loader
//!   decides it, texture) and its textures as PNG images. Everything as [`crate::model`] makes
//!   it ready to draw, so the file shows what rigplay's own loader shows.

use crate::animation::{BonePose, Channel, Clip, aligned_to, distinct_times};
use crate::model::{Addressing, Model, ModelAlpha, ModelClump, ModelGeometry, ModelMesh};
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
    /// The bone whose track carries root motion; `None`: the track of a bone without parent
    /// ([`Skeleton::root_track`]).
    pub root_bone: Option<usize>,
    /// The model drawn, when the clips play on a DFF model ([`GltfExport::model`]).
    pub model: Option<GltfModel<'a>>,
}

/// A DFF model to draw in the file: the skeleton's bones are then its clump's frames
/// ([`ModelClump::skeleton`]), and its drawn atomics (not the `_dam` and `_vlo` variants the
/// games hide) become meshes.
///
/// With `other_clumps`, a file of several clumps (GTA III's peds, SA's player) is written whole,
/// as Bevy's `.dff` loader loads it: each clump a scene of its own (scene `k` is clump `k`), its
/// frames as nodes at rest and its atomics drawn; the clips drive `clump`'s, whose scene is the
/// file's default.
#[derive(Debug, Clone)]
pub struct GltfModel<'a> {
    /// The model.
    pub model: &'a Model,
    /// Which of its clumps the clips drive.
    pub clump: usize,
    /// Whether the model's other clumps are written too, each a scene at rest.
    pub other_clumps: bool,
    /// Per texture of the model ([`Model::textures`]), its level 0 as a PNG file; `None` (or
    /// missing) leaves it out, and its materials draw untextured. The pure core has no PNG
    /// encoder: the caller brings one (the CLI uses the `image` crate).
    pub png: Vec<Option<Vec<u8>>>,
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
            root_bone: None,
            model: None,
        }
    }

    /// Clips on a GTA model's clump (`skeleton`: [`ModelClump::skeleton`] of it; the clips'
    /// targets: [`ModelClump::bind`]): in glTF's axes, lifted by the clump's
    /// [`ModelClump::lift`] as Bevy's `.dff` loader lifts it, root motion on GTA's ground plane
    /// carried by `root_bone` ([`ModelClump::root_frame`]).
    pub fn model(
        skeleton: &'a Skeleton,
        model: GltfModel<'a>,
        clips: Vec<GltfClip<'a>>,
        root_motion: RootMotionExport,
        root_bone: Option<usize>,
    ) -> Self {
        let b = crate::coords::GTA_TO_GLTF;
        let lift = model.model.clumps.get(model.clump).map_or(0.0, |c| c.lift);
        Self {
            skeleton,
            to_gltf: b,
            clips,
            root_motion,
            extracted_axes: Vec3::new(1.0, 1.0, 0.0),
            offset: b * Vec3::new(0.0, 0.0, lift),
            root_bone,
            model: Some(model),
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
            root_bone: None,
            model: None,
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
    /// Scenes written: one, or one per clump of a model written whole
    /// ([`GltfModel::other_clumps`]).
    pub scenes: usize,
    /// Meshes (one per geometry drawn), their primitives (one per material), skins and images
    /// written, when a model is drawn.
    pub meshes: usize,
    /// Primitives written over all meshes.
    pub primitives: usize,
    /// Skins written.
    pub skins: usize,
    /// Images written.
    pub images: usize,
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
    /// The model has no such clump, or its frames are not the skeleton's bones.
    #[error("the model has no clump {clump} whose frames are the skeleton's {bones} bones")]
    NoClump {
        /// The clump asked for.
        clump: usize,
        /// The skeleton's bones.
        bones: usize,
    },
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

    /// Appends `bytes` as a buffer view (4-byte aligned), for `target` (34962 vertex
    /// attributes, 34963 indices) when given; its index.
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut view = json!({
            "buffer": 0,
            "byteOffset": self.bin.len(),
            "byteLength": bytes.len(),
        });
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.bin.extend_from_slice(bytes);
        self.buffer_views.push(view);
        self.buffer_views.len() - 1
    }

    /// Appends `floats` as a buffer view and an accessor of `kind` ("SCALAR", "VEC3", …);
    /// `min_max` adds the bounds (required for animation inputs and positions).
    fn accessor(&mut self, floats: &[f32], kind: &str, width: usize, min_max: bool) -> usize {
        self.float_accessor(floats, kind, width, min_max, None)
    }

    /// [`Writer::accessor`] on a buffer view for `target`.
    fn float_accessor(
        &mut self,
        floats: &[f32],
        kind: &str,
        width: usize,
        min_max: bool,
        target: Option<u32>,
    ) -> usize {
        let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        let mut accessor = json!({
            "bufferView": view,
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

    /// An accessor of integers (`component`: 5123 u16, 5125 u32) on a buffer view for
    /// `target`.
    fn int_accessor(
        &mut self,
        bytes: &[u8],
        component: u32,
        count: usize,
        kind: &str,
        target: u32,
    ) -> usize {
        let view = self.view(bytes, Some(target));
        self.accessors.push(json!({
            "bufferView": view,
            "componentType": component,
            "count": count,
            "type": kind,
        }));
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
        let mut nodes = Vec::new();
        let roots = bone_nodes(skeleton, b, &mut nodes);
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
        let mut skins = Vec::new();
        let mut drawn = Drawn::default();
        // Per clump of a model written whole, its scene's root nodes (the clips' clump's is
        // `scene_roots`).
        let mut clump_scenes: Vec<Option<Vec<usize>>> = Vec::new();
        match &export.model {
            // The model's skins and meshes.
            Some(model) => {
                let clump = model
                    .model
                    .clumps
                    .get(model.clump)
                    .filter(|c| c.frames.len() == n)
                    .ok_or(GltfError::NoClump {
                        clump: model.clump,
                        bones: n,
                    })?;
                let drawn_roots =
                    self.model(model, clump, b, 0, &mut nodes, &mut skins, &mut drawn);
                scene_roots.extend(drawn_roots);
                if model.other_clumps && model.model.clumps.len() > 1 {
                    for (k, other) in model.model.clumps.iter().enumerate() {
                        if k == model.clump {
                            clump_scenes.push(None);
                            continue;
                        }
                        // Its frames at rest, lifted as the loader lifts it, and its atomics.
                        let base = nodes.len();
                        let mut roots = bone_nodes(&other.skeleton(""), b, &mut nodes);
                        let lift = b * Vec3::new(0.0, 0.0, other.lift);
                        if lift != Vec3::ZERO && !roots.is_empty() {
                            nodes.push(json!({
                                "name": format!("{} clump {k}", skeleton.name),
                                "translation": nums(&lift.to_array()),
                                "children": roots,
                            }));
                            roots = vec![nodes.len() - 1];
                        }
                        let drawn_roots =
                            self.model(model, other, b, base, &mut nodes, &mut skins, &mut drawn);
                        roots.extend(drawn_roots);
                        clump_scenes.push(Some(roots));
                    }
                }
                self.report.meshes = drawn.meshes.len();
                self.report.images = drawn.images.len();
            }
            // The skin: every bone a joint, bound at its rest pose (in glTF axes).
            None => {
                let rest: Vec<BonePose> = skeleton.rest_pose();
                let world = world_matrices(skeleton, &rest, b);
                let inverse_binds: Vec<f32> = world
                    .iter()
                    // Inverted as affine maps: the last row stays exactly (0, 0, 0, 1), as glTF
                    // asks.
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
                skins.push(skin);
            }
        }
        self.report.skins = skins.len();
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
            "nodes": nodes,
            "buffers": [buffer],
            "bufferViews": self.buffer_views,
            "accessors": self.accessors,
        });
        // One scene; or a scene per clump (an empty clump's without nodes, which glTF asks
        // for rather than an empty list), the clips' clump's the default.
        let scene = |name: String, roots: Vec<usize>| match roots.is_empty() {
            true => json!({ "name": name }),
            false => json!({ "name": name, "nodes": roots }),
        };
        let default = clump_scenes.iter().position(Option::is_none).unwrap_or(0);
        let scenes: Vec<Value> = if clump_scenes.is_empty() {
            vec![scene(skeleton.name.clone(), scene_roots)]
        } else {
            (clump_scenes.into_iter().enumerate())
                .map(|(k, roots)| match roots {
                    Some(roots) => scene(format!("{} clump {k}", skeleton.name), roots),
                    None => scene(skeleton.name.clone(), std::mem::take(&mut scene_roots)),
                })
                .collect()
        };
        self.report.scenes = scenes.len();
        doc["scene"] = json!(default);
        doc["scenes"] = json!(scenes);
        // glTF's arrays hold at least one item when present.
        for (key, items) in [
            ("skins", skins),
            ("meshes", drawn.meshes),
            ("materials", drawn.materials),
            ("textures", drawn.textures),
            ("images", drawn.images),
            ("samplers", drawn.samplers),
            ("animations", animations),
        ] {
            if !items.is_empty() {
                doc[key] = json!(items);
            }
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
        let root = match export.root_bone {
            Some(bone) => c.targets.iter().position(|&t| t == Some(bone)),
            None => skeleton.root_track(c.clip),
        };
        let root = root.filter(|&t| {
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

/// What drawing a model adds to the document.
#[derive(Default)]
struct Drawn {
    meshes: Vec<Value>,
    materials: Vec<Value>,
    textures: Vec<Value>,
    images: Vec<Value>,
    samplers: Vec<Value>,
}

/// The skeleton's bones as nodes appended to `nodes` (bone `i` at `nodes.len() + i` before the
/// call), at rest in glTF's axes, each listed among its parent's children; the roots' indices.
fn bone_nodes(skeleton: &Skeleton, b: Quat, nodes: &mut Vec<Value>) -> Vec<usize> {
    let base = nodes.len();
    let n = skeleton.bones.len();
    nodes.extend(skeleton.bones.iter().map(|bone| {
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
    }));
    let mut roots = Vec::new();
    for (i, bone) in skeleton.bones.iter().enumerate() {
        match bone.parent.filter(|&p| p < n && p != i) {
            Some(p) => {
                let children = nodes[base + p]
                    .as_object_mut()
                    .map(|o| o.entry("children").or_insert_with(|| json!([])));
                if let Some(Value::Array(c)) = children {
                    c.push(json!(base + i));
                }
            }
            None => roots.push(base + i),
        }
    }
    roots
}

const U16: u32 = 5123;
const U32: u32 = 5125;
const VERTICES: u32 = 34962;
const INDICES: u32 = 34963;

impl Writer<'_> {
    /// A clump's drawn atomics: a mesh per geometry, a skin per skinned geometry (its joints
    /// the frames' nodes, its inverse bind matrices turned into glTF's axes as the nodes are:
    /// `B·M·B⁻¹`), a node per atomic (a skinned one at the scene's root, as glTF wants; a rigid
    /// one under its frame's node). The clump's frame `f` is node `base + f`. Returns the nodes
    /// for the scene's root.
    #[allow(clippy::too_many_arguments)]
    fn model(
        &mut self,
        model: &GltfModel,
        clump: &ModelClump,
        b: Quat,
        base: usize,
        nodes: &mut Vec<Value>,
        skins: &mut Vec<Value>,
        drawn: &mut Drawn,
    ) -> Vec<usize> {
        let mut roots = Vec::new();
        let turn = Mat4::from_quat(b);
        let unturn = Mat4::from_quat(b.conjugate());
        // By geometry: its mesh and skin; by texture: its glTF texture.
        let mut meshes: HashMap<usize, (usize, Option<usize>)> = HashMap::new();
        let mut textures: HashMap<usize, Option<usize>> = HashMap::new();
        for atomic in clump.atomics.iter().filter(|a| !a.variant) {
            let Some(Some(geometry)) = model.model.geometries.get(atomic.geometry) else {
                continue;
            };
            if atomic.frame >= clump.frames.len() || geometry.meshes.is_empty() {
                continue;
            }
            let (mesh, skin) = match meshes.get(&atomic.geometry) {
                Some(&done) => done,
                None => {
                    let mesh = self.mesh(model, atomic.geometry, geometry, b, &mut textures, drawn);
                    let skin = geometry.skin.as_ref().map(|skin| {
                        let matrices: Vec<f32> = skin
                            .inverse_bind
                            .iter()
                            .flat_map(|m| (turn * *m * unturn).to_cols_array())
                            .collect();
                        let ibm = self.accessor(&matrices, "MAT4", 16, false);
                        let joints: Vec<usize> = skin.joints.iter().map(|&j| base + j).collect();
                        skins.push(json!({
                            "name": format!("Skin{}", atomic.geometry),
                            "joints": joints,
                            "inverseBindMatrices": ibm,
                        }));
                        skins.len() - 1
                    });
                    meshes.insert(atomic.geometry, (mesh, skin));
                    (mesh, skin)
                }
            };
            let name = format!(
                "{} geometry {}",
                clump.frames[atomic.frame].name, atomic.geometry
            );
            nodes.push(json!({ "name": name, "mesh": mesh }));
            let node = nodes.len() - 1;
            match skin {
                Some(skin) => {
                    nodes[node]["skin"] = json!(skin);
                    roots.push(node);
                }
                None => {
                    let children = nodes[base + atomic.frame]
                        .as_object_mut()
                        .map(|o| o.entry("children").or_insert_with(|| json!([])));
                    if let Some(Value::Array(c)) = children {
                        c.push(json!(node));
                    }
                }
            }
        }
        roots
    }

    /// A geometry's mesh: a primitive per material, in glTF's axes; its index.
    fn mesh(
        &mut self,
        model: &GltfModel,
        g: usize,
        geometry: &ModelGeometry,
        b: Quat,
        textures: &mut HashMap<usize, Option<usize>>,
        drawn: &mut Drawn,
    ) -> usize {
        let mut primitives = Vec::new();
        for m in &geometry.meshes {
            let attributes = self.attributes(m, b);
            let indices: Vec<u8> = m.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
            let indices = self.int_accessor(&indices, U32, m.indices.len(), "SCALAR", INDICES);
            let texture = m.look.texture.and_then(|t| {
                *textures
                    .entry(t)
                    .or_insert_with(|| self.texture(model, t, drawn))
            });
            let material = material(g, m, texture, model.model);
            drawn.materials.push(material);
            primitives.push(json!({
                "attributes": attributes,
                "indices": indices,
                "material": drawn.materials.len() - 1,
            }));
        }
        self.report.primitives += primitives.len();
        drawn.meshes.push(json!({
            "name": format!("Geometry{g}"),
            "primitives": primitives,
        }));
        drawn.meshes.len() - 1
    }

    /// A primitive's vertex attributes: positions and normals turned into glTF's axes (the
    /// normals unit length: smooth ones where the file has none), UVs, prelit colours as
    /// linear RGBA, joints and weights.
    fn attributes(&mut self, m: &ModelMesh, b: Quat) -> Value {
        let positions: Vec<f32> = m
            .positions
            .iter()
            .flat_map(|&p| (b * p).to_array())
            .collect();
        let mut attributes = json!({
            "POSITION": self.float_accessor(&positions, "VEC3", 3, true, Some(VERTICES)),
        });
        let smooth;
        let normals = match &m.normals {
            Some(n) => n,
            None => {
                smooth = m.smooth_normals();
                &smooth
            }
        };
        let normals: Vec<f32> = normals
            .iter()
            .flat_map(|&n| (b * n).try_normalize().unwrap_or(Vec3::Y).to_array())
            .collect();
        attributes["NORMAL"] =
            json!(self.float_accessor(&normals, "VEC3", 3, false, Some(VERTICES)));
        for (set, uvs) in m.uvs.iter().enumerate() {
            if let Some(uvs) = uvs {
                let floats: Vec<f32> = uvs.iter().flatten().copied().collect();
                attributes[format!("TEXCOORD_{set}")] =
                    json!(self.float_accessor(&floats, "VEC2", 2, false, Some(VERTICES)));
            }
        }
        if let Some(colours) = &m.colours {
            let floats: Vec<f32> = colours.iter().flat_map(|&c| linear_rgba(c)).collect();
            attributes["COLOR_0"] =
                json!(self.float_accessor(&floats, "VEC4", 4, false, Some(VERTICES)));
        }
        if let (Some(joints), Some(weights)) = (&m.joints, &m.weights) {
            let bytes: Vec<u8> = joints
                .iter()
                .flatten()
                .flat_map(|j| j.to_le_bytes())
                .collect();
            attributes["JOINTS_0"] =
                json!(self.int_accessor(&bytes, U16, joints.len(), "VEC4", VERTICES));
            let floats: Vec<f32> = weights.iter().flatten().copied().collect();
            attributes["WEIGHTS_0"] =
                json!(self.float_accessor(&floats, "VEC4", 4, false, Some(VERTICES)));
        }
        attributes
    }

    /// A model texture as an image (its PNG in the buffer) with its sampler; its glTF texture,
    /// `None` when no PNG was given for it.
    fn texture(&mut self, model: &GltfModel, t: usize, drawn: &mut Drawn) -> Option<usize> {
        let png = model.png.get(t)?.as_ref()?;
        let texture = model.model.textures.get(t)?;
        let view = self.view(png, None);
        drawn.images.push(json!({
            "name": texture.name,
            "bufferView": view,
            "mimeType": "image/png",
        }));
        let wrap = |a: Addressing| match a {
            Addressing::Repeat => 10497,
            Addressing::Mirror => 33648,
            Addressing::Clamp => 33071,
        };
        // NEAREST / LINEAR, and their mipmap forms by how levels are chosen.
        let (mag, min) = match (texture.nearest, texture.mip_linear) {
            (true, false) => (9728, 9984),
            (false, false) => (9729, 9985),
            (true, true) => (9728, 9986),
            (false, true) => (9729, 9987),
        };
        drawn.samplers.push(json!({
            "magFilter": mag,
            "minFilter": min,
            "wrapS": wrap(texture.addressing[0]),
            "wrapT": wrap(texture.addressing[1]),
        }));
        drawn.textures.push(json!({
            "name": texture.name,
            "source": drawn.images.len() - 1,
            "sampler": drawn.samplers.len() - 1,
        }));
        Some(drawn.textures.len() - 1)
    }
}

/// sRGB bytes as glTF's linear RGBA (alpha as is).
fn linear_rgba(c: [u8; 4]) -> [f32; 4] {
    let linear = |u: u8| {
        let x = f32::from(u) / 255.0;
        if x <= 0.04045 {
            x / 12.92
        } else {
            ((x + 0.055) / 1.055).powf(2.4)
        }
    };
    [
        linear(c[0]),
        linear(c[1]),
        linear(c[2]),
        f32::from(c[3]) / 255.0,
    ]
}

/// A mesh's material as Bevy's `.dff` loader makes it: the colour (glTF's factors are linear),
/// the texture, not metallic, roughness 0.85, the alpha mode.
fn material(g: usize, m: &ModelMesh, texture: Option<usize>, model: &Model) -> Value {
    let look = m.look;
    let name = look
        .texture
        .and_then(|t| model.textures.get(t))
        .map_or_else(|| format!("Material{g}/{}", m.material), |t| t.name.clone());
    let mut pbr = json!({
        "baseColorFactor": nums(&linear_rgba(look.colour)),
        "metallicFactor": 0.0,
        "roughnessFactor": 0.85,
    });
    if let Some(t) = texture {
        pbr["baseColorTexture"] = json!({ "index": t });
    }
    let mut material = json!({ "name": name, "pbrMetallicRoughness": pbr });
    match look.alpha {
        ModelAlpha::Opaque => {}
        ModelAlpha::Mask => {
            material["alphaMode"] = json!("MASK");
            material["alphaCutoff"] = json!(0.5);
        }
        ModelAlpha::Blend => material["alphaMode"] = json!("BLEND"),
    }
    material
}

/// Every bone's rest world matrix in glTF axes (a bone whose chain up is broken, in a
/// hand-built skeleton, as a root).
fn world_matrices(skeleton: &Skeleton, rest: &[BonePose], b: Quat) -> Vec<Affine3A> {
    let parents: Vec<Option<usize>> = skeleton.bones.iter().map(|bone| bone.parent).collect();
    let (order, parents) = crate::animation::hierarchy::parents_first_or_cut(&parents);
    crate::animation::hierarchy::compose(
        &order,
        &parents,
        |i| {
            let r = rest.get(i).copied().unwrap_or_default();
            Affine3A::from_scale_rotation_translation(
                turn_scale(b, r.scale),
                turn_rotation(b, r.rotation),
                b * r.translation,
            )
        },
        Affine3A::IDENTITY,
    )
}
