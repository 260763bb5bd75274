//! A GTA model made ready to draw: a DFF file's clumps with the textures of its TXD
//! dictionaries, as meshes (one per geometry and material, with skin joints and weights),
//! skins, materials and RGBA textures. Everything stays in RenderWare's axes (Z up, metres).
//!
//! Bevy's `.dff` loader makes its meshes, materials, images and scenes from a [`Model`], and the
//! glTF export ([`crate::convert::gltf`]) writes one: the file is read, and every choice about
//! it (which frames are bones, where the ped stands, which vertices a material draws, how a
//! vertex's weights are cleaned, which alpha mode a material takes) is made once, here.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

use crate::animation::{BonePose, BoneRef, hierarchy};
use crate::formats::dff::{Bone, Clump, DffFile, Geometry, Skin};
use crate::formats::txd::{TextureDecodeError, TextureNative};
use crate::skeleton::{BoneIdentity, GtaGame, Skeleton};
use glam::{Mat4, Vec3};

/// A DFF file's clumps made ready to draw, with their textures.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// One per clump, in file order.
    pub clumps: Vec<ModelClump>,
    /// Per geometry of the file, numbered over all clumps in order (the first clump's, then
    /// the next's): its meshes and skin, made for the first atomic that draws it and shared by
    /// the others. `None` for a geometry no atomic draws.
    pub geometries: Vec<Option<ModelGeometry>>,
    /// The textures that decoded, in the order given.
    pub textures: Vec<ModelTexture>,
    /// Texture names materials ask for that no dictionary held (they draw untextured), sorted.
    pub missing_textures: Vec<String>,
    /// What could not be used (a texture that does not decode, a skin drawn rigidly), one line
    /// each.
    pub warnings: Vec<String>,
}

/// One clump: its frames and the atomics that draw on them.
#[derive(Debug, Clone, Default)]
pub struct ModelClump {
    /// The frames, in the file's order.
    pub frames: Vec<ModelFrame>,
    /// Frame indices, parents before children (the file's order need not be).
    pub order: Vec<usize>,
    /// The frames that are bones, in HAnim node order when the clump has a hierarchy (else the
    /// named frames in file order).
    pub bones: Vec<usize>,
    /// Height (GTA Z, metres) to lift the model by, so that a skinned ped's lowest joint, or a
    /// GTA III ped of parts' lowest vertex (its soles), rests on the origin (0 for props and
    /// vehicles).
    pub lift: f32,
    /// The atomics, in file order.
    pub atomics: Vec<ModelAtomic>,
}

/// A frame of a [`ModelClump`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFrame {
    /// The frame's name (`Frame{index}` when the file gives none).
    pub name: String,
    /// The parent frame.
    pub parent: Option<usize>,
    /// The local transform the frame rests at (GTA axes, metres). RenderWare matrices are not
    /// always orthonormal (§7.3): the rotation is the nearest one, any scale is kept. The root
    /// bone of a ped rests at the rotation the game's clips are relative to, not at the file's
    /// bind rotation (§6.3): the inverse bind matrices make the skin follow whatever the bones
    /// do, and a clip that leaves the root alone then shows the ped upright, like the built-in
    /// skeleton.
    pub rest: BonePose,
    /// The frame's HAnim bone id, when it has one.
    pub bone_id: Option<i32>,
    /// What bone the frame is, as the game's skeleton knows it ([`Skeleton::identity`]), when
    /// it is a bone (in a clump without an HAnim hierarchy, such as a GTA III ped of parts:
    /// every named frame). A clip's track drives the frame of its own identity.
    pub bone: Option<BoneIdentity>,
}

/// An atomic of a [`ModelClump`]: a geometry drawn on a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelAtomic {
    /// The frame it hangs on.
    pub frame: usize,
    /// The geometry, as an index of [`Model::geometries`].
    pub geometry: usize,
    /// A damaged (`_dam`) or lowest-detail (`_vlo`) variant, which viewers and the games hide
    /// (§4.2).
    pub variant: bool,
}

/// A geometry's meshes and skin.
#[derive(Debug, Clone, Default)]
pub struct ModelGeometry {
    /// One per material that has triangles, in material order.
    pub meshes: Vec<ModelMesh>,
    /// The skin, when the geometry is skinned and its bones resolve.
    pub skin: Option<ModelSkin>,
}

/// How a skinned geometry binds to its clump's bones.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSkin {
    /// The frame of each skin bone (HAnim node order): a mesh's joint index `k` is frame
    /// `joints[k]`.
    pub joints: Vec<usize>,
    /// The file's inverse bind matrix of each skin bone (§6.2).
    pub inverse_bind: Vec<Mat4>,
}

/// The triangles of one material of a geometry, with the vertices they use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelMesh {
    /// The material's index in the geometry's material list.
    pub material: usize,
    /// Positions, in the atomic frame's space (for a skinned geometry, the bind pose's).
    pub positions: Vec<Vec3>,
    /// Normals, when the file stores them ([`ModelMesh::smooth_normals`] otherwise).
    pub normals: Option<Vec<Vec3>>,
    /// The first two UV sets, where the file has them.
    pub uvs: [Option<Vec<[f32; 2]>>; 2],
    /// Prelit colours (sRGB bytes, R, G, B, A), when the geometry has them.
    pub colours: Option<Vec<[u8; 4]>>,
    /// Four joints and weights per vertex, when skinned: weights normalised to sum 1,
    /// zero-weight slots pointed at joint 0 (their stored index is junk, §8), a joint named in
    /// two slots given both weights in the first, a vertex with no weight at all given to the
    /// atomic's own bone, indices past the skin's bones dropped.
    pub joints: Option<Vec<[u16; 4]>>,
    /// The weights of `joints`.
    pub weights: Option<Vec<[f32; 4]>>,
    /// Three vertex indices per triangle, counter-clockwise.
    pub indices: Vec<u32>,
    /// The material.
    pub look: ModelMaterial,
}

/// How a mesh is drawn (§3.4, §3.5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelMaterial {
    /// The material colour (sRGB bytes, R, G, B, A).
    pub colour: [u8; 4],
    /// Its texture, as an index of [`Model::textures`].
    pub texture: Option<usize>,
    /// How its alpha is drawn.
    pub alpha: ModelAlpha,
}

/// How a material's alpha is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ModelAlpha {
    /// Opaque: the colour is opaque and the texture has no texel that is not.
    #[default]
    Opaque,
    /// Cut out at alpha 0.5: an opaque colour over a texture with transparent texels (GTA's
    /// hair, fences, foliage).
    Mask,
    /// Blended: the material colour itself is translucent (glass).
    Blend,
}

/// How a texture's texels are fetched beyond its edges (§3.5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Addressing {
    /// Tiled.
    #[default]
    Repeat,
    /// Tiled, every other tile mirrored.
    Mirror,
    /// The edge texel.
    Clamp,
}

/// A texture of a dictionary, decoded to RGBA8 (sRGB), with how it is sampled (§3.5).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTexture {
    /// The name, as the dictionary spells it (materials look it up case-insensitively).
    pub name: String,
    /// Width of level 0.
    pub width: u32,
    /// Height of level 0.
    pub height: u32,
    /// The mip levels that decode and have their chain's size, level 0 first, RGBA8 rows.
    pub levels: Vec<Vec<u8>>,
    /// Whether a texel of level 0 is not opaque.
    pub alpha: bool,
    /// Addressing along U and V.
    pub addressing: [Addressing; 2],
    /// Magnified and minified by the nearest texel (filter modes 1, 3 and 4), not bilinearly.
    pub nearest: bool,
    /// Between mip levels linearly (filter modes 4 and 6), not from the nearest level.
    pub mip_linear: bool,
}

/// The largest texture side every GPU takes (wgpu's default limit); GTA's textures are at most
/// 2048.
pub const MAX_TEXTURE_SIDE: u32 = 8192;

/// Why a texture of a dictionary is not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelTextureError {
    /// Its level 0 does not decode.
    #[error("{0}")]
    Decode(#[from] TextureDecodeError),
    /// Its size is not one a GPU texture takes.
    #[error("{0}×{1} pixels: not a size a GPU texture takes (1 to {MAX_TEXTURE_SIDE} a side)")]
    Size(u32, u32),
}

impl ModelTexture {
    /// Decodes a dictionary's texture: level 0, then every further level that decodes and has
    /// its chain's size.
    pub fn decode(t: &TextureNative) -> Result<Self, ModelTextureError> {
        let first = t.decode(0)?;
        let (width, height) = (first.width, first.height);
        if width == 0 || height == 0 || width.max(height) > MAX_TEXTURE_SIDE {
            return Err(ModelTextureError::Size(width, height));
        }
        let alpha = first.pixels.chunks_exact(4).any(|p| p[3] < 255);
        let mut levels = vec![first.pixels];
        for level in 1..t.levels.len() {
            let (w, h) = ((width >> level).max(1), (height >> level).max(1));
            match t.decode(level) {
                Ok(img) if img.width == w && img.height == h => levels.push(img.pixels),
                _ => break,
            }
            if w == 1 && h == 1 {
                break;
            }
        }
        let addressing = |bits: u32| match bits & 0xF {
            2 => Addressing::Mirror,
            3 | 4 => Addressing::Clamp,
            _ => Addressing::Repeat,
        };
        let filter = t.filter_addressing & 0xFF;
        Ok(Self {
            name: t.name.clone(),
            width,
            height,
            levels,
            alpha,
            addressing: [
                addressing(t.filter_addressing >> 8),
                addressing(t.filter_addressing >> 12),
            ],
            nearest: matches!(filter, 1 | 3 | 4),
            mip_linear: matches!(filter, 4 | 6),
        })
    }
}

/// Adds a dictionary's textures to `textures`, leaving out names already there (compared
/// case-insensitively, as RenderWare looks textures up): earlier dictionaries win a name.
pub fn merge_textures(textures: &mut Vec<TextureNative>, dictionary: Vec<TextureNative>) {
    for t in dictionary {
        if !textures
            .iter()
            .any(|k| k.name.eq_ignore_ascii_case(&t.name))
        {
            textures.push(t);
        }
    }
}

impl Model {
    /// Makes `dff` ready to draw with `textures` (the dictionaries' textures, merged by
    /// [`merge_textures`]), its bones named and tagged as `game`'s skeleton names them.
    pub fn new(dff: &DffFile, game: GtaGame, textures: &[TextureNative]) -> Model {
        let mut model = Model::default();
        let mut by_name: Vec<(String, bool)> = Vec::new();
        for t in textures {
            match ModelTexture::decode(t) {
                Ok(texture) => {
                    by_name.push((t.name.to_ascii_lowercase(), texture.alpha));
                    model.textures.push(texture);
                }
                Err(e) => model.warnings.push(format!("texture {:?}: {e}", t.name)),
            }
        }
        let skeleton = game.skeleton();
        let mut geometry_base = 0;
        for clump in &dff.clumps {
            let hierarchy = clump.bones();
            let frames = clump_frames(clump, &skeleton, hierarchy.as_deref());
            let (order, parents) = parents_first(&frames);
            let bones: Vec<usize> = match &hierarchy {
                Some(b) => b.iter().filter_map(|b| b.frame).collect(),
                None => (0..frames.len())
                    .filter(|&f| frames[f].bone.is_some())
                    .collect(),
            };
            let world = rest_worlds(&frames, &order, &parents);
            let lowest_bone = bones
                .iter()
                .map(|&b| world[b].w_axis.z)
                .filter(|z| z.is_finite())
                .reduce(f32::min);
            // A skinned ped stands on its lowest joint (its toes); a GTA III ped of parts, as
            // its game places it, on its soles: the lowest point of its parts' meshes at rest
            // (its lowest frames, the ankles, are centimetres above them). Props and vehicles
            // keep their own origin.
            let iii_ped = crate::skeleton::names_iii_ped(frames.iter().map(|f| f.name.as_str()));
            let lift = if hierarchy.is_some() {
                lowest_bone.map_or(0.0, |z| -z)
            } else if iii_ped {
                lowest_vertex(clump, &world)
                    .or(lowest_bone)
                    .map_or(0.0, |z| -z)
            } else {
                0.0
            };
            model
                .geometries
                .resize(geometry_base + clump.geometries.len(), None);
            let mut atomics = Vec::new();
            for atomic in &clump.atomics {
                // The reader checks both indices; a clump built by hand may not have.
                let (Some(geometry), true) = (
                    clump.geometries.get(atomic.geometry),
                    atomic.frame < frames.len(),
                ) else {
                    model.warnings.push(format!(
                        "an atomic names geometry {} and frame {}, which the clump lacks",
                        atomic.geometry, atomic.frame
                    ));
                    continue;
                };
                let g = geometry_base + atomic.geometry;
                if model.geometries[g].is_none() {
                    let skin = skin_of(clump, atomic.frame, geometry, hierarchy.as_deref())
                        .map_err(|why| {
                            model.warnings.push(format!(
                                "geometry {g} on frame {:?} is drawn unskinned: {why}",
                                frames[atomic.frame].name
                            ))
                        })
                        .ok()
                        .flatten();
                    let meshes = meshes(
                        geometry,
                        skin.as_ref(),
                        &by_name,
                        &mut model.missing_textures,
                    );
                    model.geometries[g] = Some(ModelGeometry {
                        meshes,
                        skin: skin.map(|s| s.skin),
                    });
                }
                let name = frames[atomic.frame].name.to_ascii_lowercase();
                atomics.push(ModelAtomic {
                    frame: atomic.frame,
                    geometry: g,
                    variant: name.contains("_dam") || name.contains("_vlo"),
                });
            }
            geometry_base += clump.geometries.len();
            model.clumps.push(ModelClump {
                frames,
                order,
                bones,
                lift,
                atomics,
            });
        }
        model.missing_textures.sort();
        model.missing_textures.dedup();
        model
    }
}

impl ModelClump {
    /// The frames' world (clump-space) transforms at rest.
    pub fn rest_worlds(&self) -> Vec<Mat4> {
        let (order, parents) = parents_first(&self.frames);
        rest_worlds(&self.frames, &order, &parents)
    }

    /// The frames as a skeleton: one bone per frame, in the file's order, named as the file
    /// names it, parents as the file's, at rest. A parent that comes after its child is left
    /// out (the frame becomes a root), so that the skeleton's parents always come first.
    pub fn skeleton(&self, name: &str) -> Skeleton {
        Skeleton {
            name: name.to_owned(),
            bones: self
                .frames
                .iter()
                .enumerate()
                .map(|(i, f)| crate::skeleton::SkeletonBone {
                    name: f.name.clone(),
                    id: f.bone_id,
                    canonical: None,
                    parent: f.parent.filter(|&p| p < i),
                    rest: f.rest,
                })
                .collect(),
        }
    }

    /// The clump's bones ([`ModelClump::bones`]) as a skeleton, in their order (HAnim node
    /// order in a ped with a hierarchy): named as the file names them, with their bone ids and
    /// the canonical ids of their identity, each under its nearest ancestor that is a bone, at
    /// rest as its frame rests (the root bone at the rotation clips are relative to). What an
    /// import retargets onto when it targets this model rather than the game's built-in ped.
    pub fn bone_skeleton(&self, name: &str) -> Skeleton {
        let index_of = |frame: usize| self.bones.iter().position(|&b| b == frame);
        let bones = self
            .bones
            .iter()
            .filter_map(|&f| self.frames.get(f))
            .map(|frame| {
                let mut parent = None;
                let mut at = frame.parent;
                for _ in 0..self.frames.len() {
                    let Some(p) = at.filter(|&p| p < self.frames.len()) else {
                        break;
                    };
                    if let Some(i) = index_of(p) {
                        parent = Some(i);
                        break;
                    }
                    at = self.frames[p].parent;
                }
                crate::skeleton::SkeletonBone {
                    name: frame.name.clone(),
                    id: frame.bone_id,
                    canonical: match &frame.bone {
                        Some(BoneIdentity::Canonical(c)) => Some(*c),
                        _ => None,
                    },
                    parent,
                    rest: frame.rest,
                }
            })
            .collect();
        Skeleton {
            name: name.to_owned(),
            bones,
        }
    }

    /// Binds a clip's tracks to the clump's bone frames as the Bevy plugin does: a track
    /// drives the frame of its own identity in `skeleton`, the skeleton the clip is for (the
    /// same bone found by id, name in any case or spelling, or alias; else the same normalised
    /// name). Per track, its frame; a frame is taken by its first track.
    pub fn bind(&self, skeleton: &Skeleton, clip: &crate::animation::Clip) -> Vec<Option<usize>> {
        let mut taken = vec![false; self.frames.len()];
        clip.tracks()
            .iter()
            .map(|track| {
                let want = Some(skeleton.identity(&track.bone));
                let f = self.frames.iter().position(|f| f.bone == want)?;
                (!std::mem::replace(&mut taken[f], true)).then_some(f)
            })
            .collect()
    }

    /// The frame that carries root motion: the one that is the root bone of `skeleton` (the
    /// skeleton clips are for).
    pub fn root_frame(&self, skeleton: &Skeleton) -> Option<usize> {
        let root = skeleton.bones.iter().find(|b| b.parent.is_none())?;
        let want = Some(skeleton.identity(&BoneRef {
            name: root.name.clone(),
            id: root.id,
        }));
        self.frames.iter().position(|f| f.bone == want)
    }
}

impl ModelMesh {
    /// Smooth normals, for a mesh whose file stores none: per vertex, the sum of its
    /// triangles' normals weighted by their areas, normalised (+Z where that sum is zero).
    pub fn smooth_normals(&self) -> Vec<Vec3> {
        let mut sums = vec![Vec3::ZERO; self.positions.len()];
        for t in self.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize);
            let (Some(pa), Some(pb), Some(pc)) = (
                self.positions.get(a),
                self.positions.get(b),
                self.positions.get(c),
            ) else {
                continue;
            };
            let n = (*pb - *pa).cross(*pc - *pa);
            for i in [a, b, c] {
                sums[i] += n;
            }
        }
        sums.into_iter()
            .map(|n| n.try_normalize().unwrap_or(Vec3::Z))
            .collect()
    }
}

/// A frame's local matrix as a transform: the nearest rotation, any scale kept; a matrix that
/// does not decompose into finite parts keeps only a finite translation.
fn frame_pose(m: Mat4) -> BonePose {
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    if !(scale.is_finite() && rotation.is_finite() && translation.is_finite()) {
        return BonePose {
            translation: if translation.is_finite() {
                translation
            } else {
                Vec3::ZERO
            },
            ..BonePose::default()
        };
    }
    BonePose {
        translation,
        rotation: rotation.normalize(),
        scale,
    }
}

/// The frames of a clump (`bones`: its HAnim hierarchy's, [`Clump::bones`]): names, bone ids,
/// and which are bones. Bones of an HAnim hierarchy are bound by id and name like the game's
/// skeleton's; in a clump without one (GTA III peds, props, vehicles) every named frame is, by
/// name.
fn clump_frames(clump: &Clump, skeleton: &Skeleton, bones: Option<&[Bone]>) -> Vec<ModelFrame> {
    let hierarchy = bones.is_some();
    let root_bone = bones.and_then(|b| b.first().and_then(|b| b.frame));
    clump
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.name.clone().unwrap_or_else(|| format!("Frame{i}"));
            let bone_id = f
                .hanim
                .as_ref()
                .map(|h| h.node_id)
                .filter(|&id| id >= 0 && hierarchy);
            let bone = BoneRef {
                name: name.clone(),
                id: bone_id,
            };
            let is_bone = if hierarchy {
                bone_id.is_some()
            } else {
                f.name.is_some()
            };
            let mut rest = frame_pose(f.local_matrix());
            if Some(i) == root_bone
                && let Some(b) = skeleton.find(&bone)
                && skeleton.bones[b].parent.is_none()
            {
                rest.rotation = skeleton.bones[b].rest.rotation;
            }
            ModelFrame {
                name,
                parent: f.parent,
                rest,
                bone_id,
                bone: is_bone.then(|| skeleton.identity(&bone)),
            }
        })
        .collect()
}

/// Frame indices with every parent before its children, and the parents as taken (a frame whose
/// chain up is broken, in a hand-built clump, as a root).
fn parents_first(frames: &[ModelFrame]) -> (Vec<usize>, Vec<Option<usize>>) {
    let parents: Vec<Option<usize>> = frames.iter().map(|f| f.parent).collect();
    hierarchy::parents_first_or_cut(&parents)
}

/// World (clump-space) matrices of the frames at rest, from [`parents_first`]'s order and
/// parents.
fn rest_worlds(frames: &[ModelFrame], order: &[usize], parents: &[Option<usize>]) -> Vec<Mat4> {
    hierarchy::compose(
        order,
        parents,
        |i| {
            let r = frames[i].rest;
            Mat4::from_scale_rotation_translation(r.scale, r.rotation, r.translation)
        },
        Mat4::IDENTITY,
    )
}

/// The lowest height (GTA Z) of any atomic's vertices, each placed by its frame at rest.
fn lowest_vertex(clump: &Clump, world: &[Mat4]) -> Option<f32> {
    clump
        .atomics
        .iter()
        .filter_map(|a| {
            let at = world.get(a.frame)?;
            let positions = clump.geometries.get(a.geometry)?.positions();
            positions
                .iter()
                .map(|p| at.transform_point3(*p).z)
                .filter(|z| z.is_finite())
                .reduce(f32::min)
        })
        .reduce(f32::min)
}

/// A skin and how its vertices fall back.
struct SkinBinding {
    skin: ModelSkin,
    /// The skin bone a vertex whose weights are all zero follows: the atomic's own frame's.
    fallback: u16,
}

/// The most joints one skinned mesh may have (Bevy's limit; GTA peds have 32 to 64).
pub const MAX_JOINTS: usize = 256;

/// The skin of an atomic's geometry; `Ok(None)` when it has no skin, `Err` with the reason when
/// its skin cannot be used (it is then drawn rigidly on its frame).
fn skin_of(
    clump: &Clump,
    atomic_frame: usize,
    geometry: &Geometry,
    hierarchy: Option<&[Bone]>,
) -> Result<Option<SkinBinding>, String> {
    let Some(skin) = &geometry.skin else {
        return Ok(None);
    };
    let Some(bones) = hierarchy else {
        return Err("the clump has no HAnim hierarchy".into());
    };
    if skin.num_bones != bones.len() {
        return Err(format!(
            "the skin has {} bones, the hierarchy {} nodes",
            skin.num_bones,
            bones.len()
        ));
    }
    if skin.num_bones > MAX_JOINTS {
        return Err(format!("{} bones, more than {MAX_JOINTS}", skin.num_bones));
    }
    let joints = bones
        .iter()
        .map(|b| {
            b.frame
                .ok_or_else(|| format!("no frame carries bone id {}", b.node_id))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if skin.inverse_bind.len() != joints.len() || clump.frames.len() <= atomic_frame {
        return Err("the skin's matrices do not match its bones".into());
    }
    let fallback = joints.iter().position(|&f| f == atomic_frame).unwrap_or(0) as u16;
    Ok(Some(SkinBinding {
        skin: ModelSkin {
            joints,
            inverse_bind: skin.inverse_bind.clone(),
        },
        fallback,
    }))
}

/// One mesh per material of a geometry that has triangles: the vertices those triangles use.
/// `textures`: the decoded textures' lower-case names and whether they have alpha.
fn meshes(
    geometry: &Geometry,
    skin: Option<&SkinBinding>,
    textures: &[(String, bool)],
    missing: &mut Vec<String>,
) -> Vec<ModelMesh> {
    let positions = geometry.positions();
    let normals = geometry.normals().filter(|ns| ns.len() == positions.len());
    let faces = geometry.faces();
    let n = positions.len();
    let mut out = Vec::new();
    for (m, material) in geometry.materials.iter().enumerate() {
        let mut remap = vec![u32::MAX; n];
        let mut used: Vec<usize> = Vec::new();
        let mut indices: Vec<u32> = Vec::new();
        for face in faces.iter().filter(|f| f.material as usize == m) {
            if face.vertices.iter().any(|&v| v as usize >= n) {
                continue;
            }
            for &v in &face.vertices {
                let v = v as usize;
                if remap[v] == u32::MAX {
                    remap[v] = used.len() as u32;
                    used.push(v);
                }
                indices.push(remap[v]);
            }
        }
        if indices.is_empty() {
            continue;
        }
        let pick = |values: &[Vec3]| -> Vec<Vec3> { used.iter().map(|&v| values[v]).collect() };
        let uv = |set: usize| {
            geometry
                .uv_sets
                .get(set)
                .filter(|u| u.len() == n)
                .map(|uvs| used.iter().map(|&v| uvs[v]).collect::<Vec<_>>())
        };
        let colours = geometry
            .prelit
            .as_ref()
            .filter(|p| p.len() == n)
            .map(|p| used.iter().map(|&v| p[v]).collect());
        let (joints, weights) = match (skin, &geometry.skin) {
            (Some(binding), Some(s)) => {
                let (j, w) = used.iter().map(|&v| influences(s, v, binding)).unzip();
                (Some(j), Some(w))
            }
            _ => (None, None),
        };
        let texture_name = material.texture.as_ref().filter(|t| !t.name.is_empty());
        let texture = texture_name.and_then(|t| {
            let key = t.name.to_ascii_lowercase();
            textures.iter().position(|(name, _)| *name == key)
        });
        if let (Some(t), None) = (texture_name, texture) {
            missing.push(t.name.clone());
        }
        let alpha = if material.colour[3] < 255 {
            ModelAlpha::Blend
        } else if texture.is_some_and(|t| textures[t].1) {
            ModelAlpha::Mask
        } else {
            ModelAlpha::Opaque
        };
        out.push(ModelMesh {
            material: m,
            positions: pick(positions),
            normals: normals.map(pick),
            uvs: [uv(0), uv(1)],
            colours,
            joints,
            weights,
            indices,
            look: ModelMaterial {
                colour: material.colour,
                texture,
                alpha,
            },
        });
    }
    out
}

/// A vertex's four joints and weights: weights normalised to sum 1, zero-weight slots pointed
/// at joint 0 (their stored index is junk, §8), a joint named in two slots given both weights
/// in the first, a vertex with no weight at all given to the atomic's own bone, indices past
/// the skin's bones dropped.
fn influences(skin: &Skin, v: usize, b: &SkinBinding) -> ([u16; 4], [f32; 4]) {
    let fallback = ([b.fallback, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
    let (Some(idx), Some(w)) = (skin.bone_indices.get(v), skin.weights.get(v)) else {
        return fallback;
    };
    let mut joints = [0u16; 4];
    let mut weights = [0f32; 4];
    for k in 0..4 {
        if w[k].is_finite() && w[k] > 0.0 && usize::from(idx[k]) < b.skin.joints.len() {
            joints[k] = u16::from(idx[k]);
            weights[k] = w[k];
        }
    }
    if !weights.iter().sum::<f32>().is_finite() {
        // Weights so large their sum overflows: scaled down first.
        let largest = weights.iter().copied().fold(0.0f32, f32::max);
        weights = weights.map(|x| x / largest);
    }
    // A joint named twice takes the sum of its weights in its first slot.
    for k in 1..4 {
        if weights[k] > 0.0
            && let Some(first) = (0..k).find(|&j| weights[j] > 0.0 && joints[j] == joints[k])
        {
            weights[first] += weights[k];
            (joints[k], weights[k]) = (0, 0.0);
        }
    }
    let sum: f32 = weights.iter().sum();
    if sum <= 0.0 {
        return fallback;
    }
    (joints, weights.map(|x| x / sum))
}
