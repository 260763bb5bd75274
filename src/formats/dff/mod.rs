//! RenderWare DFF models (clumps) of GTA III, Vice City and San Andreas on PC (RW 3.1–3.6).
//!
//! [`DffFile::read`] walks the chunk tree (§1) and decodes what a viewer needs: frames with their
//! names and HAnim bone data (§2), geometries with positions, normals, UV sets, prelit
//! colours, triangles, Bin Mesh strips or lists (§3.2, §3.6), materials (§3.4, §3.5), the Skin
//! PLG in its old and new layouts (§3.6) and atomics (§4.1). Everything stays in RenderWare's
//! own conventions: right-handed, Z up, matrices as `right/up/at` columns (§6.1).
//!
//! Plugin chunks this reader has no use for (material effects, reflection and specular
//! materials, 2dfx, night colours, breakables, collision) are skipped by size; unknown chunks
//! are skipped with a warning. Console geometry (the NATIVE flag, Native Data PLG) is refused
//! with [`RwErrorKind::UnsupportedPlatform`].
//!
//! [`Clump::skin_bind_pose`] skins a geometry's vertices with its inverse bind matrices and
//! the frames' world matrices (§6.2): in the bind pose it gives the stored positions back.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

mod read;

pub use crate::formats::rw::{RwError, RwErrorKind, RwWarning, RwWarningKind};
pub use read::DffRead;

use glam::{Mat3, Mat4, Vec3, Vec4};

/// A DFF file: its clumps, in file order (most files hold one; some III peds hold several).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DffFile {
    /// The clumps (top-level chunks 0x10), in file order.
    pub clumps: Vec<Clump>,
}

/// One model: frames, geometries and the atomics that place geometries on frames (§1.4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clump {
    /// The RenderWare version of the clump chunk's stamp, `0xVJNBB` (§1.2).
    pub version: u32,
    /// The frames, in file order. Parents are validated: in range and acyclic.
    pub frames: Vec<Frame>,
    /// The geometries, in Geometry List order (then any nested in pre-3.4 atomics).
    pub geometries: Vec<Geometry>,
    /// The atomics, in file order.
    pub atomics: Vec<Atomic>,
    /// How many Light chunks the clump holds (their data is not decoded, §4.3).
    pub num_lights: usize,
}

/// One frame of the Frame List (§2.1) with its extension data (§2.2).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Rotation (and possibly scale) with columns `right`, `up`, `at` (§6.1), as stored: not
    /// normalised.
    pub rotation: Mat3,
    /// Translation in the parent's space.
    pub position: Vec3,
    /// The parent frame; `None` for a root.
    pub parent: Option<usize>,
    /// The matrix flags word (runtime state; meaningless in files).
    pub flags: u32,
    /// The name from the Frame extension chunk 0x253F2FE, verbatim (leading spaces kept).
    pub name: Option<String>,
    /// The HAnim PLG of this frame, if any.
    pub hanim: Option<HAnim>,
}

impl Frame {
    /// The local matrix `L(f)` in column-vector form: columns (right,0), (up,0), (at,0),
    /// (pos,1) (§6.1).
    pub fn local_matrix(&self) -> Mat4 {
        Mat4::from_cols(
            self.rotation.x_axis.extend(0.0),
            self.rotation.y_axis.extend(0.0),
            self.rotation.z_axis.extend(0.0),
            self.position.extend(1.0),
        )
    }
}

/// The HAnim PLG of a frame (§2.2).
#[derive(Debug, Clone, PartialEq)]
pub struct HAnim {
    /// The plugin version (0x100).
    pub version: u32,
    /// The node (bone) ID of this frame; −1 when the frame is not a bone.
    pub node_id: i32,
    /// The hierarchy, on the one frame that owns it (numNodes > 0).
    pub hierarchy: Option<HAnimHierarchy>,
}

/// An HAnim hierarchy: the bones in depth-first order (§2.2, §2.3).
#[derive(Debug, Clone, PartialEq)]
pub struct HAnimHierarchy {
    /// Hierarchy flags (0x1 sub-hierarchy, 0x2 no matrices, 0x1000, 0x2000, 0x4000).
    pub flags: u32,
    /// Key frame size (36 in GTA files).
    pub key_frame_size: i32,
    /// The nodes, in depth-first order: the bone order of the skin.
    pub nodes: Vec<HAnimNode>,
}

/// One node of an HAnim hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HAnimNode {
    /// The node's bone ID (matches a frame's [`HAnim::node_id`]).
    pub id: i32,
    /// The node index as stored (equals the position in all known files; unused).
    pub index: i32,
    /// Node flags: [`HAnimNode::POP`], [`HAnimNode::PUSH`].
    pub flags: u32,
}

impl HAnimNode {
    /// This node has no children: after it, go back to the pushed parent.
    pub const POP: u32 = 0x1;
    /// A later sibling follows: remember the current parent.
    pub const PUSH: u32 = 0x2;
}

/// A bone of the clump's HAnim hierarchy (§2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bone {
    /// The node's bone ID.
    pub node_id: i32,
    /// The frame whose HAnim node ID equals the node's ID; `None` if no frame carries it.
    pub frame: Option<usize>,
    /// The parent bone (index into the node array) from the PUSH/POP flags.
    pub parent: Option<usize>,
}

/// One geometry (§3.2) with its materials (§3.3) and extension data (§3.6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Geometry {
    /// The format word: flags ([`Geometry::TRISTRIP`] …) and numTexSets in bits 16–23.
    pub flags: u32,
    /// Ambient, specular, diffuse (stored only before RW 3.4).
    pub surface: Option<[f32; 3]>,
    /// The number of vertices.
    pub num_vertices: usize,
    /// Prelit colours R, G, B, A per vertex (when [`Geometry::PRELIT`]).
    pub prelit: Option<Vec<[u8; 4]>>,
    /// UV sets (0 to 8), each with one (u, v) per vertex.
    pub uv_sets: Vec<Vec<[f32; 2]>>,
    /// The triangle list of the Struct.
    pub triangles: Vec<Triangle>,
    /// The morph targets (one in GTA files).
    pub morph_targets: Vec<MorphTarget>,
    /// The materials, reused entries resolved (one per Material List index).
    pub materials: Vec<Material>,
    /// The Bin Mesh PLG, when present.
    pub bin_mesh: Option<BinMesh>,
    /// The Skin PLG, when present.
    pub skin: Option<Skin>,
}

impl Geometry {
    /// The Bin Mesh holds strips.
    pub const TRISTRIP: u32 = 0x01;
    /// Has positions.
    pub const POSITIONS: u32 = 0x02;
    /// One UV set.
    pub const TEXTURED: u32 = 0x04;
    /// Per-vertex colours.
    pub const PRELIT: u32 = 0x08;
    /// Has normals.
    pub const NORMALS: u32 = 0x10;
    /// Lit by dynamic lights.
    pub const LIGHT: u32 = 0x20;
    /// Multiply by the material colour.
    pub const MODULATE: u32 = 0x40;
    /// Two UV sets.
    pub const TEXTURED2: u32 = 0x80;
    /// Platform data in a Native Data PLG (not supported).
    pub const NATIVE: u32 = 0x0100_0000;

    /// The positions of the first morph target (empty when it has none).
    pub fn positions(&self) -> &[Vec3] {
        self.morph_targets
            .first()
            .and_then(|m| m.positions.as_deref())
            .unwrap_or(&[])
    }

    /// The normals of the first morph target, when stored.
    pub fn normals(&self) -> Option<&[Vec3]> {
        self.morph_targets
            .first()
            .and_then(|m| m.normals.as_deref())
    }

    /// The faces to draw: from the Bin Mesh when present (strips decoded, §3.6), else the
    /// triangle list. Indices are valid (checked on read).
    pub fn faces(&self) -> Vec<Face> {
        match &self.bin_mesh {
            Some(bm) => bm
                .meshes
                .iter()
                .flat_map(|m| {
                    m.triangles(bm.strips).into_iter().map(|v| Face {
                        vertices: v,
                        material: m.material,
                    })
                })
                .collect(),
            None => self
                .triangles
                .iter()
                .map(|t| Face {
                    vertices: t.vertices.map(u32::from),
                    material: u32::from(t.material),
                })
                .collect(),
        }
    }
}

/// One triangle of the geometry Struct, vertices in counter-clockwise order (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triangle {
    /// (a, b, c) = the 2nd, 1st and 4th u16 of the record.
    pub vertices: [u16; 3],
    /// The material index (the 3rd u16).
    pub material: u16,
}

/// A face to draw, from [`Geometry::faces`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Face {
    /// The vertex indices, counter-clockwise.
    pub vertices: [u32; 3],
    /// The material index.
    pub material: u32,
}

/// One morph target: bounding sphere, positions, normals (§3.2).
#[derive(Debug, Clone, PartialEq)]
pub struct MorphTarget {
    /// Bounding sphere centre x, y, z and radius.
    pub sphere: [f32; 4],
    /// Positions, one per vertex, in the atomic frame's space.
    pub positions: Option<Vec<Vec3>>,
    /// Normals, one per vertex.
    pub normals: Option<Vec<Vec3>>,
}

/// A material (§3.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// The flags word (unused, 0).
    pub flags: u32,
    /// Colour R, G, B, A.
    pub colour: [u8; 4],
    /// Ambient, specular, diffuse (RW 3.4 and later).
    pub surface: Option<[f32; 3]>,
    /// The texture, when the material is textured.
    pub texture: Option<Texture>,
}

/// A material's texture reference (§3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Texture {
    /// Filter mode (bits 0–7), U and V addressing (bits 8–11, 12–15), bit 16 mipmaps.
    pub filter_addressing: u32,
    /// The texture name (cut at the first NUL); matches a TXD entry case-insensitively.
    pub name: String,
    /// The mask (alpha) texture name, usually empty.
    pub mask: String,
}

/// The Bin Mesh PLG: the geometry's faces split by material, as strips or lists (§3.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinMesh {
    /// Whether the meshes are triangle strips (flags 1) rather than lists (0).
    pub strips: bool,
    /// The meshes, in file order (not sorted by material).
    pub meshes: Vec<Mesh>,
}

/// One mesh of a Bin Mesh: the indices of one material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mesh {
    /// The material index.
    pub material: u32,
    /// The vertex indices (valid: checked on read).
    pub indices: Vec<u32>,
}

impl Mesh {
    /// The triangles: lists in threes; strips with every odd triangle's first two indices
    /// swapped and degenerate triangles (a repeated index) dropped (§3.6).
    pub fn triangles(&self, strip: bool) -> Vec<[u32; 3]> {
        let ix = &self.indices;
        if !strip {
            return ix.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        }
        let mut out = Vec::with_capacity(ix.len().saturating_sub(2));
        for k in 0..ix.len().saturating_sub(2) {
            let (a, b, c) = (ix[k], ix[k + 1], ix[k + 2]);
            if a == b || b == c || a == c {
                continue;
            }
            out.push(if k % 2 == 1 { [b, a, c] } else { [a, b, c] });
        }
        out
    }
}

/// Which of the two Skin PLG layouts a skin was read from (§3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkinLayout {
    /// III/VC era: no used-bones list, `0xDEADDEAD` before each matrix, no split data.
    Old,
    /// SA: used-bones list, plain matrices, split data.
    New,
}

/// The Skin PLG of a geometry (§3.6).
#[derive(Debug, Clone, PartialEq)]
pub struct Skin {
    /// The layout it was read from.
    pub layout: SkinLayout,
    /// The number of bones (= HAnim nodes).
    pub num_bones: usize,
    /// The bones that influence any vertex (new layout; empty in the old one).
    pub used_bones: Vec<u8>,
    /// maxWeightsPerVertex as stored (0 in old files; see [`Skin::max_influences`]).
    pub max_weights: u8,
    /// Four bone indices per vertex (into the HAnim node array).
    pub bone_indices: Vec<[u8; 4]>,
    /// Four weights per vertex; a zero weight's index is meaningless.
    pub weights: Vec<[f32; 4]>,
    /// The inverse bind matrix of each bone, column-major with the 4th row forced to
    /// (0, 0, 0, 1) (§6.2).
    pub inverse_bind: Vec<Mat4>,
    /// The split data words (boneLimit, numMeshes, numRLE) of the new layout.
    pub split: Option<[u32; 3]>,
}

impl Skin {
    /// The largest number of non-zero weights of any vertex (recomputed: old files store 0).
    pub fn max_influences(&self) -> usize {
        self.weights
            .iter()
            .map(|w| w.iter().filter(|&&x| x != 0.0).count())
            .max()
            .unwrap_or(0)
    }
}

/// An atomic: a geometry drawn with a frame's world matrix (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atomic {
    /// The frame index (valid).
    pub frame: usize,
    /// The geometry index (valid).
    pub geometry: usize,
    /// Flags: 0x01 collision test, 0x04 render.
    pub flags: u32,
    /// Right To Render: (plugin ID, extra data), e.g. (0x116, 1) for skinned peds.
    pub right_to_render: Option<(u32, u32)>,
}

/// Why a bind pose cannot be skinned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkinPoseError {
    /// No atomic with this index.
    #[error("no atomic {0}")]
    NoAtomic(usize),
    /// The atomic's geometry has no Skin PLG.
    #[error("the atomic's geometry has no skin")]
    NoSkin,
    /// The geometry has no positions.
    #[error("the geometry has no positions")]
    NoPositions,
    /// No frame owns an HAnim hierarchy.
    #[error("no HAnim hierarchy in the clump")]
    NoHierarchy,
    /// The skin's bone count differs from the hierarchy's node count.
    #[error("the skin has {skin} bones, the hierarchy {nodes} nodes")]
    BoneCountMismatch {
        /// numBones of the skin.
        skin: usize,
        /// numNodes of the hierarchy.
        nodes: usize,
    },
    /// A node whose ID no frame carries.
    #[error("HAnim node {0} has no frame")]
    NodeWithoutFrame(usize),
}

impl Clump {
    /// The world (clump-space) matrix of every frame: `W(f) = W(parent) · L(f)` (§6.1). Parents
    /// are acyclic in a clump that was read (checked on read); in a hand-built one, a frame whose
    /// chain up is broken is composed as a root.
    pub fn world_matrices(&self) -> Vec<Mat4> {
        let parents: Vec<Option<usize>> = self.frames.iter().map(|f| f.parent).collect();
        let (order, parents) = crate::animation::hierarchy::parents_first_or_cut(&parents);
        crate::animation::hierarchy::compose(
            &order,
            &parents,
            |i| self.frames[i].local_matrix(),
            Mat4::IDENTITY,
        )
    }

    /// The frame that owns the HAnim hierarchy (the first with numNodes > 0) (§2.3).
    pub fn hierarchy_frame(&self) -> Option<usize> {
        self.frames
            .iter()
            .position(|f| f.hanim.as_ref().is_some_and(|h| h.hierarchy.is_some()))
    }

    /// The bones of the HAnim hierarchy in node order: parents from PUSH/POP, frames by
    /// node ID (§2.3). `None` without a hierarchy.
    pub fn bones(&self) -> Option<Vec<Bone>> {
        let frame = self.hierarchy_frame()?;
        let nodes = &self.frames[frame].hanim.as_ref()?.hierarchy.as_ref()?.nodes;
        let mut stack = Vec::new();
        let mut current: Option<usize> = None;
        let mut bones = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            let frame = (node.id >= 0)
                .then(|| {
                    self.frames
                        .iter()
                        .position(|f| f.hanim.as_ref().is_some_and(|h| h.node_id == node.id))
                })
                .flatten();
            bones.push(Bone {
                node_id: node.id,
                frame,
                parent: current,
            });
            if node.flags & HAnimNode::PUSH != 0 {
                stack.push(current);
            }
            current = Some(i);
            if node.flags & HAnimNode::POP != 0 {
                current = stack.pop().flatten();
            }
        }
        Some(bones)
    }

    /// The vertex positions of an atomic's skinned geometry, skinned in the bind pose given by
    /// the Frame List: `v' = Σ w_k · (B_k · IBM_k · v)` with `B_k = W(atomic frame)⁻¹ ·
    /// W(frame of node k)` (§6.2). In a consistent file this gives the stored positions back.
    /// A vertex whose weights are all zero keeps its position.
    pub fn skin_bind_pose(&self, atomic: usize) -> Result<Vec<Vec3>, SkinPoseError> {
        let a = self
            .atomics
            .get(atomic)
            .ok_or(SkinPoseError::NoAtomic(atomic))?;
        let g = self
            .geometries
            .get(a.geometry)
            .ok_or(SkinPoseError::NoAtomic(atomic))?;
        let skin = g.skin.as_ref().ok_or(SkinPoseError::NoSkin)?;
        let positions = g
            .morph_targets
            .first()
            .and_then(|m| m.positions.as_deref())
            .ok_or(SkinPoseError::NoPositions)?;
        let bones = self.bones().ok_or(SkinPoseError::NoHierarchy)?;
        if bones.len() != skin.num_bones {
            return Err(SkinPoseError::BoneCountMismatch {
                skin: skin.num_bones,
                nodes: bones.len(),
            });
        }
        let world = self.world_matrices();
        let to_skin = world
            .get(a.frame)
            .copied()
            .unwrap_or(Mat4::IDENTITY)
            .inverse();
        let mut skinning = Vec::with_capacity(bones.len());
        for (k, bone) in bones.iter().enumerate() {
            let f = bone.frame.ok_or(SkinPoseError::NodeWithoutFrame(k))?;
            let ibm = skin.inverse_bind.get(k).copied().unwrap_or(Mat4::IDENTITY);
            skinning.push(to_skin * world[f] * ibm);
        }
        Ok(positions
            .iter()
            .enumerate()
            .map(|(v, &p)| {
                let (Some(ix), Some(w)) = (skin.bone_indices.get(v), skin.weights.get(v)) else {
                    return p;
                };
                let mut sum = Vec4::ZERO;
                let mut total = 0.0;
                for j in 0..4 {
                    if w[j] == 0.0 {
                        continue;
                    }
                    if let Some(m) = skinning.get(usize::from(ix[j])) {
                        sum += w[j] * (*m * p.extend(1.0));
                        total += w[j];
                    }
                }
                if total == 0.0 { p } else { sum.truncate() }
            })
            .collect())
    }
}
