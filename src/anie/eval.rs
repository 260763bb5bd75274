//! Evaluating an AnimeEffects project at a frame (spec §4.1–§4.8 and the Addendum): which keys
//! apply, their blended values, every node's transform, opacity and depth, each layer's
//! deformed mesh in canvas pixels, and the sequence in which AnimeEffects draws.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rigplay::anie::eval::Evaluator;
//! use rigplay::formats::anie::AnimeProject;
//!
//! let project = AnimeProject::read(&std::fs::read("walk.anie")?)?.project;
//! let evaluator = Evaluator::new(&project); // bone influences are computed once, here
//! let frame = evaluator.evaluate(3.5);
//! for op in &frame.draws {
//!     println!("{op:?}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The rules, and where they come from:
//! * **Key gathering** (§4.1). Interpolated types (Move, Rotate, Scale, Depth, Opa, HSV, FFD,
//!   Pose): no keys → the default key (frame −1) or the built-in default; a key exactly at F →
//!   that key; keys on one side only → hold the nearest; between k0 and k1 → `lerp(k0, k1, s)`
//!   with `s` from **k0's** easing. With the project's loop on and ≥ 2 keys, the segment before
//!   the first key runs from the last key placed at `f_last − (maxFrame + 1)`, and the segment
//!   after the last key runs to the first key at `f_first + (maxFrame + 1)`.
//! * **Move neighbours** (§4.3). The Catmull-Rom neighbours kn (before k0) and k2 (after k1) are
//!   the keys next to k0 and k1 in the key list, **without** the loop wrap: AnimeEffects 1.7's
//!   render of `t8` (keys 0, 12, 23, loop on) puts the layer at (12.14, 8.82) at frame 3, which
//!   needs no kn before key 0; with the wrapped key 23 as kn it would be at (11.74, 8.22). In the
//!   loop-wrap segments themselves (last key → first key) kn is the key before the last key and
//!   k2 the key after the first key (not observed; no reference covers it).
//! * **Forced parents** (§4.1 rule 6). FFD keys count only if their parent is the active area
//!   key, Pose keys only if their parent is the active Bone key; a key with another parent
//!   stops the search, as if there were no key on that side (also for the loop wrap).
//! * **Step keys** (§4.1). Image, Mesh and Bone keys: the last key at or before `floor(F)`, no
//!   loop wrap; Image falls back to its default key.
//! * **Fractional frames** are rounded to AnimeEffects' millisecond precision first
//!   (`Frame::fromDecimal`, §4.1).
//! * **Deformation** (§4.5): area mesh (the Image key's GridMesh, or the Mesh key's mesh when
//!   that key is not older), FFD (absolute positions), origin offset, then skinning, bone binding
//!   (§4.6) or the plain world matrix.
//! * **Bones** (§4.5): a node's own last Bone key, else its parent's; dropped for a layer (and
//!   its subtree) whose Image or Mesh key is newer than the Bone key. The Bone key's owner is the
//!   node that holds it. Influence maps are recomputed from the stored bone shapes at the Bone
//!   key's frame, as AnimeEffects ≥ 1.6 does on load (Addendum 8; [`InfluenceSource`]), once, in
//!   [`Evaluator::new`]. `cacheInner` and the binding matrices are the products of the local
//!   matrices between the layer and the owner **at the Bone key's frame**.
//! * **Opacity** is the product down the tree, as an 8-bit alpha truncated as AnimeEffects does
//!   (§4.4); depth is the sum (§4.4); `visible == false` hides the subtree.
//! * **Draw order** (§4.7, §4.8): see [`DrawOp`] and [`EvaluatedFrame::draws`].
//!
//! Trees are walked in index order (the model's arenas are pre-order, parents first) or with
//! explicit stacks; nothing recurses. A parent index that is not smaller than its child's, or a
//! child list entry whose parent is another node, is ignored, so a hand-made malformed project
//! cannot loop.

use std::collections::HashMap;

use glam::{Affine2, Mat4, Vec2, Vec3};

use super::blend::{HsvAdjust, opacity_alpha8};
use super::easing::ease;
use super::skinning::{
    BoneJoint, BoneWorld, MAX_PALETTE_BONES, PaletteEntry, VertexInfluences, blend_ffd,
    bone_world_transforms, build_palette, palette_entry, place_plain, place_skinned, skin_matrix,
    vertex_influences,
};
use super::spline::MovePath;
use super::transform::{local_matrix, world_depth, world_opacity};
use super::{lerp, lerp_vec2};
use crate::formats::anie::{
    AnimeProject, BlendMode, Bone, DepthKey, Easing, FfdKey, GridMesh, HsvKey, ImageKey, KeyKind,
    KeyMap, KeyRef, KeySlot, MeshKey, MoveKey, NodeKind, ObjectNode, OpaKey, PoseKey, ResourceRef,
    RotateKey, ScaleKey, TimeKey,
};

/// Where skinning takes its per-vertex bone influences from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum InfluenceSource {
    /// Recomputed from the stored bone shapes at the Bone key's frame (§4.5 "Influence
    /// weights" steps 1–5), as AnimeEffects ≥ 1.6 does when it opens a project: it ignores the
    /// stored caches (Addendum 8).
    #[default]
    Recompute,
    /// The influence maps and `cacheInner` matrices stored in the Bone key's caches, as
    /// AnimeEffects ≤ 1.5 uses them. A layer without a stored cache, or whose cache does not
    /// have one entry per vertex, falls back to [`InfluenceSource::Recompute`].
    Stored,
}

/// Choices of [`Evaluator::with_options`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct EvalOptions {
    pub influences: InfluenceSource,
}

/// A project at one frame.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EvaluatedFrame {
    /// The frame evaluated, rounded to AnimeEffects' millisecond precision.
    pub frame: f32,
    /// The canvas size in pixels (the exported image's size at scale 1).
    pub canvas_width: u32,
    pub canvas_height: u32,
    /// One entry per object node, indexed like [`AnimeProject::objects`].
    pub nodes: Vec<NodeFrame>,
    /// Every Bone key that applies to some node at this frame, with its pose and palette.
    pub skeletons: Vec<SkeletonFrame>,
    /// What AnimeEffects draws, in order (§4.7, §4.8): the visible nodes (layers and folders,
    /// children in reverse list order, clipped nodes left out) stable-sorted by world depth,
    /// each followed, if it is a clipper, by its mask and its clippees (sorted the same way).
    /// Nodes whose own opacity is 0 draw nothing and neither do their clippees.
    pub draws: Vec<DrawOp>,
}

/// One object node at a frame.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFrame {
    /// The node and all its ancestors are visible (§4.4).
    pub visible: bool,
    /// The node's own matrix at this frame: `T(pos) · R(rotate) · S(scale) · T(centroid)`.
    pub local: Affine2,
    /// The matrix that places the node's content on the canvas: `parentWorld · local`, or, for a
    /// node bound to a bone, `ownerWorld · M_palette[bone] · bindingInner` (§4.6). A skinned
    /// layer's vertices do not use it (see [`Placement::Skinned`]).
    pub world: Affine2,
    /// Own opacity (the Opa keys' value, not clamped).
    pub opacity: f32,
    /// Product of the opacities from the root down (§4.4).
    pub world_opacity: f32,
    /// The layer colour's alpha: `255 · world_opacity` truncated and clamped to 0..=255 (§4.4).
    pub alpha8: u8,
    /// Own depth.
    pub depth: f32,
    /// Sum of the depths from the root down (§4.4); higher is in front.
    pub world_depth: f32,
    /// The HSV adjustment while it is active (the node has HSV keys and the frame is at or after
    /// the first; §4.10). The `absolute` flag is k0's between two keys (see [`hsv_value`]).
    pub hsv: Option<HsvAdjust>,
    /// The Bone key that applies to this node (its own or an ancestor's, §4.5), if any.
    pub bone_key: Option<KeyRef>,
    /// How the content is placed (§4.5 step 4).
    pub placement: Placement,
    /// Layer specifics; `None` for folders and for layers without any Image key.
    pub layer: Option<LayerFrame>,
}

/// How a node's content is placed on the canvas (§4.5 step 4, §4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Placement {
    /// `world · T(originOffset) · ffdPos`.
    #[default]
    Plain,
    /// `ownerWorld · Skin(weights, palette) · cacheInner · T(originOffset) · ffdPos`, with the
    /// Bone key's owner node and palette.
    Skinned { bone_key: KeyRef },
    /// Rigidly attached to bone `bone` (DFS index) of the Bone key; `world` is the bound matrix.
    Bound { bone_key: KeyRef, bone: usize },
}

/// A layer at a frame.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerFrame {
    /// The active Image key (the last at or before `floor(F)`, else the default key).
    pub image_key: KeySlot,
    /// Its image; `None` when the file's reference was unresolved (nothing is drawn).
    pub resource: Option<ResourceRef>,
    /// Its blend mode (§4.9).
    pub blend_mode: BlendMode,
    /// Its image offset: where the image's top-left sits relative to the node origin.
    pub image_offset: Vec2,
    /// The key whose mesh is drawn: the Image key, or a Mesh key that is not older (§4.5).
    pub area_key: KeyRef,
    /// Whether FFD keys of the area key moved the vertices.
    pub ffd: bool,
    /// The deformed mesh; empty while the layer is hidden.
    pub mesh: LayerMesh,
}

/// A layer's triangle mesh on the canvas.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LayerMesh {
    /// Vertex positions in canvas pixels (origin top-left, +y down), after FFD, skinning or
    /// binding, and the world matrix.
    pub positions: Vec<Vec2>,
    /// Normalised texture coordinates: `(texcoord + originOffset − imageOffset) / imageSize`
    /// (§2); outside `[0, 1]` the transparent border is sampled.
    pub uvs: Vec<Vec2>,
    /// Triangles, three indices each, in draw order.
    pub indices: Vec<u32>,
}

/// A Bone key's skeleton at a frame (§4.5 "Pose palette").
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonFrame {
    pub bone_key: KeyRef,
    /// The stored rest pose (the Bone key's bone world transforms), DFS order.
    pub rest: Vec<BoneWorld>,
    /// The posed bones, same order; `None` when no Pose key of this Bone key applies (the
    /// palette is then the identity).
    pub pose: Option<Vec<BoneWorld>>,
    /// The palette (at most 32 entries; missing bones are the identity).
    pub palette: Vec<PaletteEntry>,
}

/// One step of AnimeEffects' drawing (§4.7–§4.10), for a renderer to replay in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawOp {
    /// Draw layer `node` with its blend mode, its alpha scaled by the clipping mask of clipper
    /// `mask` (fragments where the mask holds another id are discarded). While the layer's HSV is
    /// active it is drawn with the HSV shader instead: Normal compositing, and unmasked (§4.10).
    Layer { node: usize, mask: Option<u8> },
    /// Write layer `node`'s coverage `uint(texel alpha · alpha8/255 · 255)` into the clipping
    /// mask under `id` (§4.8); the same id adds, capped at 255. `within`: the clipper itself is
    /// a clippee of that id; it writes only where the mask holds `within`, its coverage scaled by
    /// that mask (the `IS_CLIPPEE` variant of the mask writer).
    WriteMask {
        node: usize,
        id: u8,
        within: Option<u8>,
    },
    /// Clear the clipping mask: the 8-bit ids wrapped past 255 (§4.8).
    ClearMask,
    /// Draw layer `layer` again with folder `folder`'s HSV adjustment, Normal compositing,
    /// unmasked (§4.10: a folder with active HSV keys re-draws its visible descendants).
    HsvRedraw { layer: usize, folder: usize },
}

impl EvaluatedFrame {
    /// The layers in the order of [`DrawOp::Layer`] steps, with the clipper whose mask they use.
    pub fn layer_draws(&self) -> impl Iterator<Item = (usize, Option<u8>)> + '_ {
        self.draws.iter().filter_map(|op| match *op {
            DrawOp::Layer { node, mask } => Some((node, mask)),
            _ => None,
        })
    }
}

/// [`Evaluator::evaluate`] with a one-off [`Evaluator`]. To evaluate many frames, keep an
/// `Evaluator`: it computes the bone influences once.
pub fn evaluate(project: &AnimeProject, frame: f32) -> EvaluatedFrame {
    Evaluator::new(project).evaluate(frame)
}

/// Evaluates one project at any frame; holds what does not depend on the frame (key parents,
/// bone influences and `cacheInner`, binding matrices).
#[derive(Clone, Debug)]
pub struct Evaluator<'a> {
    project: &'a AnimeProject,
    options: EvalOptions,
    /// Each key's parent key (FFD → Image/Mesh, Pose → Bone).
    key_parents: HashMap<KeyRef, KeyRef>,
    /// Per (Bone key, layer node): the skin cache.
    skins: HashMap<(KeyRef, usize), SkinCache>,
    /// Per (Bone key, bound node): the binding.
    bindings: HashMap<(KeyRef, usize), Binding>,
    /// Each Bone key's bone index → the pose bones' arena index, per Pose key (origin links).
    /// Built lazily would need interior mutability; it is small, so it is built up front.
    pose_maps: HashMap<KeyRef, Vec<Option<usize>>>,
}

/// The skin of one layer under one Bone key.
#[derive(Clone, Debug, PartialEq)]
struct SkinCache {
    /// The area key the influences were computed for; skinning applies only while it is active.
    area_key: KeyRef,
    /// Product of the local matrices from the layer up to the owner, at the Bone key's frame.
    inner: Affine2,
    influences: Vec<VertexInfluences>,
}

/// One node bound rigidly to a bone (§4.6).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Binding {
    bone: usize,
    inner: Affine2,
}

/// The payloads whose keys interpolate, with the easing of the segment they start.
trait Eased {
    fn easing(&self) -> &Easing;
}

macro_rules! eased {
    ($($t:ty),*) => {$(
        impl Eased for $t {
            fn easing(&self) -> &Easing {
                &self.easing
            }
        }
    )*};
}
eased!(
    MoveKey, RotateKey, ScaleKey, DepthKey, OpaKey, HsvKey, FfdKey, PoseKey
);

/// Between two keys (indices into the key list): the keys, the eased progress, and the
/// neighbours.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    k0: usize,
    k1: usize,
    /// `Easing(k0.easing, t = F − f0, d = f1 − f0)`.
    s: f32,
    /// The key before k0 in the list (no loop wrap), if it counts.
    before: Option<usize>,
    /// The key after k1 in the list (no loop wrap), if it counts.
    after: Option<usize>,
}

/// What the gatherer found for one key type at a frame (§4.1), as indices into the key list.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Gathered {
    /// No key counts.
    Empty,
    /// One key's value (a key exactly at F, or the nearest when keys are on one side only).
    Hold(usize),
    Between(Segment),
}

/// The gatherer (§4.1 rules 2–6) over keys sorted by frame. `cycle` is `maxFrame + 1` when the
/// project loops; `counts(i)` says whether key `i` takes part (forced-parent gathering: a key
/// that does not count stops the search on its side).
fn gather<T: Eased>(
    keys: &[TimeKey<T>],
    frame: f32,
    cycle: Option<f32>,
    counts: impl Fn(usize) -> bool,
) -> Gathered {
    let len = keys.len();
    let at = |i: usize| keys[i].frame as f32;
    let p = keys.partition_point(|k| k.frame as f32 <= frame);
    let left = p.checked_sub(1).filter(|&i| counts(i));
    let right = Some(p).filter(|&i| i < len && counts(i));
    if let Some(l) = left
        && at(l) == frame
    {
        return Gathered::Hold(l);
    }
    let neighbour = |i: Option<usize>| i.filter(|&i| i < len && counts(i));
    let segment = |k0: usize, f0: f32, k1: usize, f1: f32| {
        Gathered::Between(Segment {
            k0,
            k1,
            s: ease(keys[k0].value.easing(), frame - f0, f1 - f0),
            before: neighbour(k0.checked_sub(1)),
            after: neighbour(k1.checked_add(1)),
        })
    };
    let wraps = cycle.filter(|_| len >= 2);
    match (left, right) {
        (Some(l), Some(r)) => segment(l, at(l), r, at(r)),
        // After the last key: to the first key, one cycle later.
        (Some(l), None) if p == len && counts(0) => match wraps {
            Some(c) => segment(l, at(l), 0, at(0) + c),
            None => Gathered::Hold(l),
        },
        // Before the first key: from the last key, one cycle earlier.
        (None, Some(r)) if p == 0 && counts(len - 1) => match wraps {
            Some(c) => segment(len - 1, at(len - 1) - c, r, at(r)),
            None => Gathered::Hold(r),
        },
        (Some(l), _) => Gathered::Hold(l),
        (None, Some(r)) => Gathered::Hold(r),
        (None, None) => Gathered::Empty,
    }
}

/// A segment with the key payloads looked up.
#[derive(Clone, Copy, Debug)]
struct Blend<'a, T> {
    k0: &'a T,
    k1: &'a T,
    s: f32,
    before: Option<&'a T>,
    after: Option<&'a T>,
}

impl Segment {
    fn of<T>(self, keys: &[TimeKey<T>]) -> Blend<'_, T> {
        Blend {
            k0: &keys[self.k0].value,
            k1: &keys[self.k1].value,
            s: self.s,
            before: self.before.map(|i| &keys[i].value),
            after: self.after.map(|i| &keys[i].value),
        }
    }
}

/// An interpolated type's value (§4.1 rules 1–5): the gathered keys blended by `blend`, the
/// default key while there are no keys, else `builtin`.
fn value<T: Eased + Copy>(
    map: &KeyMap<T>,
    frame: f32,
    cycle: Option<f32>,
    builtin: T,
    blend: impl Fn(&Blend<'_, T>) -> T,
) -> T {
    match gather(&map.keys, frame, cycle, |_| true) {
        Gathered::Empty => map.default.as_ref().map_or(builtin, |k| k.value),
        Gathered::Hold(i) => map.keys[i].value,
        Gathered::Between(seg) => blend(&seg.of(&map.keys)),
    }
}

/// The Move value at a frame: position on the segment's path (§4.3) and the centroid lerped
/// with the same `s`.
fn move_value(map: &KeyMap<MoveKey>, frame: f32, cycle: Option<f32>) -> MoveKey {
    value(map, frame, cycle, MoveKey::default(), |seg| {
        let path = MovePath::new(
            seg.before.map(|k| k.pos),
            (seg.k0.pos, seg.k0.spline),
            (seg.k1.pos, seg.k1.spline),
            seg.after.map(|k| k.pos),
        );
        MoveKey {
            pos: path.point(seg.s),
            centroid: lerp_vec2(seg.k0.centroid, seg.k1.centroid, seg.s),
            ..*seg.k0
        }
    })
}

/// The HSV value while HSV is active (§4.10): `None` without HSV keys or before the first one.
/// Hue, saturation and value are lerped and truncated; the `absolute` flag is not interpolated
/// (AnimeEffects keeps the previous evaluation's): between two keys it is k0's, which is what
/// playback from frame 0 in whole frames leaves there.
pub fn hsv_value(map: &KeyMap<HsvKey>, frame: f32, cycle: Option<f32>) -> Option<HsvAdjust> {
    let first = map.keys.first()?;
    if frame < first.frame as f32 {
        return None;
    }
    let adjust = |k: &HsvKey| HsvAdjust {
        hue: k.hue,
        sat: k.sat,
        val: k.val,
        absolute: k.absolute,
    };
    Some(match gather(&map.keys, frame, cycle, |_| true) {
        Gathered::Empty => HsvAdjust::DEFAULT,
        Gathered::Hold(i) => adjust(&map.keys[i].value),
        Gathered::Between(seg) => {
            let seg = seg.of(&map.keys);
            HsvAdjust::lerp(&adjust(seg.k0), &adjust(seg.k1), seg.s, seg.k0.absolute)
        }
    })
}

/// A node's own values at a frame (§4.3, §4.4).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Local {
    matrix: Affine2,
    opacity: f32,
    depth: f32,
}

/// The mesh a layer draws (§4.5 step 1).
#[derive(Clone, Copy, Debug)]
enum AreaMesh<'a> {
    Grid(&'a GridMesh),
    Mesh(&'a MeshKey),
}

impl AreaMesh<'_> {
    fn origin_offset(&self) -> Vec2 {
        match self {
            AreaMesh::Grid(g) => g.origin_offset,
            AreaMesh::Mesh(m) => m.origin_offset,
        }
    }

    fn vertex_count(&self) -> usize {
        match self {
            AreaMesh::Grid(g) => g.positions.len(),
            AreaMesh::Mesh(m) => m.vertices.len(),
        }
    }

    /// Rest position of vertex `i` in mesh space.
    fn rest(&self, i: usize) -> Vec2 {
        match self {
            AreaMesh::Grid(g) => g.positions[i].truncate(),
            AreaMesh::Mesh(m) => m.vertices[i],
        }
    }

    /// Texture coordinate of vertex `i` in image pixels (a Mesh key's equal its positions).
    fn texcoord(&self, i: usize) -> Vec2 {
        match self {
            AreaMesh::Grid(g) => g
                .texcoords
                .get(i)
                .copied()
                .unwrap_or_else(|| g.positions[i].truncate()),
            AreaMesh::Mesh(m) => m.vertices[i],
        }
    }

    /// Triangle indices; triangles naming a missing vertex are left out.
    fn indices(&self, out: &mut Vec<u32>) {
        let n = self.vertex_count();
        out.clear();
        match self {
            AreaMesh::Grid(g) => {
                for tri in g.indices.chunks_exact(3) {
                    if tri.iter().all(|&v| (v as usize) < n) {
                        out.extend_from_slice(tri);
                    }
                }
            }
            AreaMesh::Mesh(m) => {
                for f in 0..m.faces.len() {
                    if let Some(tri) = m.face_vertices(f)
                        && tri.iter().all(|&v| (v as usize) < n)
                    {
                        out.extend_from_slice(&tri);
                    }
                }
            }
        }
    }
}

/// A layer's step keys at a frame.
#[derive(Clone, Copy, Debug)]
struct Area<'a> {
    image_slot: KeySlot,
    image: &'a TimeKey<ImageKey>,
    area_key: KeyRef,
    mesh: AreaMesh<'a>,
}

fn affine_from_mat4(m: &Mat4) -> Affine2 {
    Affine2::from_cols(
        m.x_axis.truncate().truncate(),
        m.y_axis.truncate().truncate(),
        {
            let w = m.w_axis;
            Vec2::new(w.x, w.y)
        },
    )
}

impl<'a> Evaluator<'a> {
    /// An evaluator with the default options (influences recomputed, as AnimeEffects 1.7).
    pub fn new(project: &'a AnimeProject) -> Self {
        Self::with_options(project, EvalOptions::default())
    }

    /// An evaluator; computes every Bone key's skin caches and bindings (§4.5 step 5, §4.6).
    pub fn with_options(project: &'a AnimeProject, options: EvalOptions) -> Self {
        let mut ev = Self {
            project,
            options,
            key_parents: project.key_parents(),
            skins: HashMap::new(),
            bindings: HashMap::new(),
            pose_maps: HashMap::new(),
        };
        for (owner, node) in project.objects.iter().enumerate() {
            for i in 0..node.timeline.bones.keys.len() {
                ev.prepare_bone_key(KeyRef {
                    node: owner,
                    kind: KeyKind::Bone,
                    slot: KeySlot::At(i),
                });
            }
        }
        ev
    }

    /// The project this evaluator reads.
    pub fn project(&self) -> &'a AnimeProject {
        self.project
    }

    fn objects(&self) -> &'a [ObjectNode] {
        &self.project.objects
    }

    /// The parent of node `i`, if it is a valid one (smaller index: pre-order).
    fn parent(&self, i: usize) -> Option<usize> {
        self.objects().get(i)?.parent.filter(|&p| p < i)
    }

    /// The children of node `p` in list order, those whose parent is `p`.
    fn children(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        let objects = self.objects();
        objects
            .get(p)
            .map(|n| n.children.as_slice())
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(move |&c| c > p && c < objects.len() && objects[c].parent == Some(p))
    }

    /// `maxFrame + 1` when the project loops (§4.1 rule 5).
    fn cycle(&self) -> Option<f32> {
        self.project
            .looping
            .then_some(self.project.max_frame as f32 + 1.0)
    }

    /// A node's own matrix, opacity and depth at a frame (§4.3, §4.4).
    fn local(&self, node: &ObjectNode, frame: f32) -> Local {
        let tl = &node.timeline;
        let cycle = self.cycle();
        let mv = move_value(&tl.moves, frame, cycle);
        let rotate = value(&tl.rotates, frame, cycle, RotateKey::default(), |s| {
            RotateKey {
                rotate: lerp(s.k0.rotate, s.k1.rotate, s.s),
                ..*s.k0
            }
        })
        .rotate;
        let scale = value(&tl.scales, frame, cycle, ScaleKey::default(), |s| {
            ScaleKey {
                scale: lerp_vec2(s.k0.scale, s.k1.scale, s.s),
                ..*s.k0
            }
        })
        .scale;
        let depth = value(&tl.depths, frame, cycle, DepthKey::default(), |s| {
            DepthKey {
                depth: lerp(s.k0.depth, s.k1.depth, s.s),
                ..*s.k0
            }
        })
        .depth;
        let opacity = value(&tl.opacities, frame, cycle, OpaKey::default(), |s| OpaKey {
            opacity: lerp(s.k0.opacity, s.k1.opacity, s.s),
            ..*s.k0
        })
        .opacity;
        Local {
            matrix: local_matrix(mv.pos, rotate, scale, mv.centroid),
            opacity,
            depth,
        }
    }

    /// A layer's active Image key and area mesh at step frame `step` (§4.1 step keys, §4.5 step
    /// 1); `None` without any Image key.
    fn area(&self, node: usize, step: i32) -> Option<Area<'a>> {
        let tl = &self.objects().get(node)?.timeline;
        let (image_slot, image) = match tl.images.last_at_or_before(step) {
            Some(i) => (KeySlot::At(i), &tl.images.keys[i]),
            None => (KeySlot::Default, tl.images.default.as_ref()?),
        };
        let mesh = tl
            .meshes
            .last_at_or_before(step)
            .filter(|&m| tl.meshes.keys[m].frame >= image.frame);
        let (area_key, mesh) = match mesh {
            Some(m) => (
                KeyRef {
                    node,
                    kind: KeyKind::Mesh,
                    slot: KeySlot::At(m),
                },
                AreaMesh::Mesh(&tl.meshes.keys[m].value),
            ),
            None => (
                KeyRef {
                    node,
                    kind: KeyKind::Image,
                    slot: image_slot,
                },
                AreaMesh::Grid(&image.value.mesh),
            ),
        };
        Some(Area {
            image_slot,
            image,
            area_key,
            mesh,
        })
    }

    /// The product of the local matrices from `node` up to, not including, `owner`, at `frame`;
    /// `None` if `owner` is not an ancestor of `node`.
    fn inner_matrix(&self, node: usize, owner: usize, frame: f32) -> Option<Affine2> {
        let mut inner = Affine2::IDENTITY;
        let mut cur = node;
        while cur != owner {
            inner = self.local(&self.objects()[cur], frame).matrix * inner;
            cur = self.parent(cur)?;
        }
        Some(inner)
    }

    /// Skin caches, bindings and pose-bone maps of one Bone key (§4.5 step 5, §4.6).
    fn prepare_bone_key(&mut self, key: KeyRef) {
        let objects = self.objects();
        let owner = key.node;
        let Some(bone_key) = objects[owner].timeline.bones.get(key.slot) else {
            return;
        };
        let frame = bone_key.frame as f32;
        let bones = &bone_key.value.bones;

        // Rigid bindings: node → bone index, matrix node → owner at the key's frame.
        let mut bound = Vec::new();
        for (b, bone) in bones.iter().enumerate() {
            for &n in &bone.binding_nodes {
                if n == owner || bound.contains(&n) {
                    continue;
                }
                if let Some(inner) = self.inner_matrix(n, owner, frame) {
                    bound.push(n);
                    self.bindings.insert((key, n), Binding { bone: b, inner });
                }
            }
        }

        // The bones that weigh vertices: a parent joint and a non-zero range (§4.5 step 2).
        let weighing: Vec<(i32, &crate::formats::anie::BoneShape)> = bones
            .iter()
            .enumerate()
            .take(MAX_PALETTE_BONES)
            .filter(|(_, b)| b.parent.is_some() && b.range != [Vec2::ZERO; 2])
            .map(|(i, b)| (i as i32, &b.shape))
            .collect();

        // Every layer under the owner, except bound subtrees and subtrees of a descendant with
        // its own Bone key active at this key's frame.
        let mut stack: Vec<usize> = self.children(owner).collect();
        while let Some(d) = stack.pop() {
            let node = &objects[d];
            if bound.contains(&d)
                || node
                    .timeline
                    .bones
                    .last_at_or_before(bone_key.frame)
                    .is_some()
            {
                continue;
            }
            stack.extend(self.children(d));
            if node.kind != NodeKind::Layer {
                continue;
            }
            let Some(area) = self.area(d, bone_key.frame) else {
                continue;
            };
            let stored = (self.options.influences == InfluenceSource::Stored)
                .then(|| bone_key.value.caches.iter().find(|c| c.node == d))
                .flatten()
                .filter(|c| {
                    c.indices.len() == area.mesh.vertex_count()
                        && c.weights.len() == area.mesh.vertex_count()
                });
            let cache = match stored {
                Some(c) => SkinCache {
                    area_key: area.area_key,
                    inner: affine_from_mat4(&c.inner_matrix),
                    influences: c
                        .indices
                        .iter()
                        .zip(&c.weights)
                        .map(|(&bones, &weights)| VertexInfluences { bones, weights })
                        .collect(),
                },
                None => {
                    let Some(inner) = self.inner_matrix(d, owner, frame) else {
                        continue;
                    };
                    let origin = area.mesh.origin_offset();
                    let influences = (0..area.mesh.vertex_count())
                        .map(|v| {
                            let p = inner.transform_point2(area.mesh.rest(v) + origin);
                            vertex_influences(weighing.iter().copied(), p)
                        })
                        .collect();
                    SkinCache {
                        area_key: area.area_key,
                        inner,
                        influences,
                    }
                }
            };
            self.skins.insert((key, d), cache);
        }

        // Pose keys of this Bone key: pose bone → Bone key bone by origin.
        let poses = &objects[owner].timeline.poses;
        for (i, pose) in poses.keys.iter().enumerate() {
            let pose_key = KeyRef {
                node: owner,
                kind: KeyKind::Pose,
                slot: KeySlot::At(i),
            };
            if self.key_parents.get(&pose_key) != Some(&key) {
                continue;
            }
            let mut map = vec![None; bones.len()];
            for (pi, pb) in pose.value.bones.iter().enumerate() {
                let origin = match pb.origin {
                    Some(o) if o.key == key => o.bone,
                    _ => pi,
                };
                if let Some(slot) = map.get_mut(origin)
                    && slot.is_none()
                {
                    *slot = Some(pi);
                }
            }
            self.pose_maps.insert(pose_key, map);
        }
    }

    /// A Bone key's skeleton at a frame (§4.5 "Pose palette").
    fn skeleton(&self, key: KeyRef, frame: f32) -> SkeletonFrame {
        let owner = &self.objects()[key.node];
        let bones: &[Bone] = owner
            .timeline
            .bones
            .get(key.slot)
            .map_or(&[], |k| k.value.bones.as_slice());
        let rest: Vec<BoneWorld> = bones
            .iter()
            .map(|b| BoneWorld {
                pos: b.world_pos,
                angle: b.world_angle,
            })
            .collect();
        let pose_key = |i: usize| KeyRef {
            node: key.node,
            kind: KeyKind::Pose,
            slot: KeySlot::At(i),
        };
        let poses = &owner.timeline.poses.keys;
        let counts = |i: usize| self.key_parents.get(&pose_key(i)) == Some(&key);
        // The bone of pose key `p` that poses Bone key bone `b` (by its origin link).
        let pose_bone = |p: usize, b: usize| -> Option<&Bone> {
            let pi = (*self.pose_maps.get(&pose_key(p))?.get(b)?)?;
            poses[p].value.bones.get(pi)
        };
        let pose = match gather(poses, frame, self.cycle(), counts) {
            Gathered::Empty => None,
            // At or beside a single key: the stored world transforms of its bones.
            Gathered::Hold(p) => Some(
                (0..bones.len())
                    .map(|b| {
                        pose_bone(p, b).map_or(rest[b], |pb| BoneWorld {
                            pos: pb.world_pos,
                            angle: pb.world_angle,
                        })
                    })
                    .collect(),
            ),
            // Between two keys: each bone's rotate lerped, world transforms recomputed from the
            // Bone key's local positions and angles (`blendPoseKey`).
            Gathered::Between(seg) => {
                let rotate = |p: usize, b: usize| pose_bone(p, b).map_or(0.0, |pb| pb.rotate);
                let joints: Vec<BoneJoint> = bones
                    .iter()
                    .enumerate()
                    .map(|(b, bone)| BoneJoint {
                        parent: bone.parent,
                        local_pos: bone.local_pos,
                        local_angle: bone.local_angle,
                        rotate: lerp(rotate(seg.k0, b), rotate(seg.k1, b), seg.s),
                    })
                    .collect();
                Some(bone_world_transforms(&joints))
            }
        };
        let palette = build_palette(&rest, pose.as_deref());
        SkeletonFrame {
            bone_key: key,
            rest,
            pose,
            palette,
        }
    }

    /// The index in `skeletons` of Bone key `key`'s skeleton at `frame`, computed on first use.
    fn skeleton_slot(
        &self,
        key: KeyRef,
        frame: f32,
        skeletons: &mut Vec<SkeletonFrame>,
        index: &mut HashMap<KeyRef, usize>,
    ) -> usize {
        *index.entry(key).or_insert_with(|| {
            skeletons.push(self.skeleton(key, frame));
            skeletons.len() - 1
        })
    }

    /// The project at `frame` (any real number; rounded to 1/1000).
    pub fn evaluate(&self, frame: f32) -> EvaluatedFrame {
        let frame = quantize_frame(frame);
        let step = frame.floor() as i32;
        let cycle = self.cycle();
        let objects = self.objects();
        let mut nodes: Vec<NodeFrame> = Vec::with_capacity(objects.len());
        let mut skeletons: Vec<SkeletonFrame> = Vec::new();
        let mut skeleton_index: HashMap<KeyRef, usize> = HashMap::new();
        let mut ffd = Vec::new();

        for (i, obj) in objects.iter().enumerate() {
            let parent = self.parent(i).map(|p| &nodes[p]);
            let local = self.local(obj, frame);
            let visible = obj.visible && parent.is_none_or(|p| p.visible);
            let w_opacity = world_opacity(parent.map_or(1.0, |p| p.world_opacity), local.opacity);
            let w_depth = world_depth(parent.map_or(0.0, |p| p.world_depth), local.depth);
            let parent_world = parent.map_or(Affine2::IDENTITY, |p| p.world);
            let parent_bone = parent.and_then(|p| p.bone_key);
            let area = match obj.kind {
                NodeKind::Layer => self.area(i, step),
                NodeKind::Folder => None,
            };

            // The Bone key: own, else inherited; dropped when the image or mesh is newer.
            let own = obj.timeline.bones.last_at_or_before(step).map(|b| KeyRef {
                node: i,
                kind: KeyKind::Bone,
                slot: KeySlot::At(b),
            });
            let mut bone_key = own.or(parent_bone);
            if let (Some(k), Some(area)) = (bone_key, &area) {
                let key_frame = self.project.key_frame(k).unwrap_or(i32::MIN);
                let mesh_frame = obj
                    .timeline
                    .meshes
                    .last_at_or_before(step)
                    .map_or(i32::MIN, |m| obj.timeline.meshes.keys[m].frame);
                if key_frame < area.image.frame || key_frame < mesh_frame {
                    bone_key = None;
                }
            }

            // The node's own placement: bound to a bone (§4.6) or parent · local.
            let binding = bone_key
                .and_then(|k| Some((k, *self.bindings.get(&(k, i))?)))
                .filter(|(k, _)| k.node < i);
            let (world, mut placement) = match binding {
                Some((k, b)) => {
                    let s = self.skeleton_slot(k, frame, &mut skeletons, &mut skeleton_index);
                    let bone = palette_entry(&skeletons[s].palette, b.bone as i32);
                    let placement = Placement::Bound {
                        bone_key: k,
                        bone: b.bone,
                    };
                    (nodes[k.node].world * bone.matrix * b.inner, placement)
                }
                None => (parent_world * local.matrix, Placement::Plain),
            };

            let mut layer = None;
            if let Some(area) = area {
                let n = area.mesh.vertex_count();
                // FFD keys of the area key (forced parent): absolute positions in mesh space.
                let ffd_key = |f: usize| KeyRef {
                    node: i,
                    kind: KeyKind::Ffd,
                    slot: KeySlot::At(f),
                };
                let counts = |f: usize| self.key_parents.get(&ffd_key(f)) == Some(&area.area_key);
                let ffds = &obj.timeline.ffds.keys;
                let ffd_positions: Option<&[Vec3]> = match gather(ffds, frame, cycle, counts) {
                    Gathered::Empty => None,
                    Gathered::Hold(f) => Some(ffds[f].value.positions.as_slice()),
                    Gathered::Between(seg) => {
                        let seg = seg.of(ffds);
                        blend_ffd(&seg.k0.positions, &seg.k1.positions, seg.s, &mut ffd);
                        Some(ffd.as_slice())
                    }
                }
                .filter(|p| p.len() == n);
                let mut mesh = LayerMesh::default();
                if visible {
                    let origin = area.mesh.origin_offset();
                    let ffd_pos = |v: usize| {
                        ffd_positions.map_or_else(|| area.mesh.rest(v), |p| p[v].truncate())
                    };
                    let skin = bone_key
                        .and_then(|k| Some((k, self.skins.get(&(k, i))?)))
                        .filter(|(k, c)| {
                            k.node < i && c.area_key == area.area_key && c.influences.len() == n
                        });
                    match skin {
                        Some((k, cache)) => {
                            placement = Placement::Skinned { bone_key: k };
                            let s =
                                self.skeleton_slot(k, frame, &mut skeletons, &mut skeleton_index);
                            let palette = &skeletons[s].palette;
                            let owner_world = nodes[k.node].world;
                            mesh.positions.extend((0..n).map(|v| {
                                let skin = skin_matrix(palette, &cache.influences[v]);
                                place_skinned(owner_world, skin, cache.inner, origin, ffd_pos(v))
                            }));
                        }
                        None => mesh
                            .positions
                            .extend((0..n).map(|v| place_plain(world, origin, ffd_pos(v)))),
                    }
                    let image = area
                        .image
                        .value
                        .resource
                        .and_then(|r| self.project.image(r));
                    let size = image.map_or(Vec2::ONE, |img| {
                        Vec2::new(img.width as f32, img.height as f32).max(Vec2::ONE)
                    });
                    let shift = origin - area.image.value.image_offset;
                    mesh.uvs
                        .extend((0..n).map(|v| (area.mesh.texcoord(v) + shift) / size));
                    area.mesh.indices(&mut mesh.indices);
                }
                layer = Some(LayerFrame {
                    image_key: area.image_slot,
                    resource: area.image.value.resource,
                    blend_mode: area.image.value.blend_mode,
                    image_offset: area.image.value.image_offset,
                    area_key: area.area_key,
                    ffd: ffd_positions.is_some(),
                    mesh,
                });
            }

            nodes.push(NodeFrame {
                visible,
                local: local.matrix,
                world,
                opacity: local.opacity,
                world_opacity: w_opacity,
                alpha8: opacity_alpha8(w_opacity),
                depth: local.depth,
                world_depth: w_depth,
                hsv: hsv_value(&obj.timeline.hsvs, frame, cycle),
                bone_key,
                placement,
                layer,
            });
        }

        let draws = self.draw_ops(&nodes);
        EvaluatedFrame {
            frame,
            canvas_width: self.project.canvas_width,
            canvas_height: self.project.canvas_height,
            nodes,
            skeletons,
            draws,
        }
    }

    /// `start` and its visible, unclipped descendants, children in reverse list order, in
    /// pre-order (`pushNodeRecursive`, §4.7).
    fn collect(&self, start: usize, nodes: &[NodeFrame], out: &mut Vec<usize>) {
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            out.push(n);
            // Pushed in list order, popped last child first.
            stack.extend(
                self.children(n)
                    .filter(|&c| nodes[c].visible && !self.objects()[c].clipped),
            );
        }
    }

    /// The sibling just before `n` in its parent's list.
    fn prev_sibling(&self, n: usize) -> Option<usize> {
        let parent = self.parent(n)?;
        let siblings: Vec<usize> = self.children(parent).collect();
        let at = siblings.iter().position(|&s| s == n)?;
        at.checked_sub(1).map(|i| siblings[i])
    }

    /// A clipper: not clipped, and the sibling just before it is (§4.8).
    fn is_clipper(&self, n: usize) -> bool {
        !self.objects()[n].clipped
            && self
                .prev_sibling(n)
                .is_some_and(|p| self.objects()[p].clipped)
    }

    /// The clippees of clipper `n`: the run of clipped previous siblings (the visible ones,
    /// nearest first), each with its visible, unclipped descendants, stable-sorted by world
    /// depth (§4.8).
    fn clippees(&self, n: usize, nodes: &[NodeFrame]) -> Vec<usize> {
        let mut out = Vec::new();
        let Some(parent) = self.parent(n) else {
            return out;
        };
        let siblings: Vec<usize> = self.children(parent).collect();
        let Some(at) = siblings.iter().position(|&s| s == n) else {
            return out;
        };
        for &s in siblings[..at].iter().rev() {
            if !self.objects()[s].clipped {
                break;
            }
            if nodes[s].visible {
                self.collect(s, nodes, &mut out);
            }
        }
        sort_by_depth(&mut out, nodes);
        out
    }

    /// The draw sequence (§4.7, §4.8, §4.10).
    fn draw_ops(&self, nodes: &[NodeFrame]) -> Vec<DrawOp> {
        let mut ops = Vec::new();
        if nodes.first().is_none_or(|root| !root.visible) {
            return ops;
        }
        let mut main = Vec::new();
        self.collect(0, nodes, &mut main);
        sort_by_depth(&mut main, nodes);

        let mut next_id: u8 = 0;
        // (node, the clipper whose clippee it is), processed last-in first-out.
        let mut work: Vec<(usize, Option<u8>)> =
            main.into_iter().rev().map(|n| (n, None)).collect();
        while let Some((n, mask)) = work.pop() {
            let node = &nodes[n];
            // A node whose own opacity is 0 skips its draw and its clippees (§4.4).
            if node.opacity == 0.0 {
                continue;
            }
            let obj = &self.objects()[n];
            match obj.kind {
                NodeKind::Layer => ops.push(DrawOp::Layer { node: n, mask }),
                NodeKind::Folder => {
                    if node.hsv.is_some() {
                        let mut layers = Vec::new();
                        self.visible_descendants(n, nodes, &mut layers);
                        layers.retain(|&l| self.objects()[l].kind == NodeKind::Layer);
                        sort_by_depth(&mut layers, nodes);
                        ops.extend(
                            layers
                                .into_iter()
                                .map(|layer| DrawOp::HsvRedraw { layer, folder: n }),
                        );
                    }
                }
            }
            if !self.is_clipper(n) {
                continue;
            }
            if next_id == u8::MAX {
                ops.push(DrawOp::ClearMask);
                next_id = 0;
            }
            next_id += 1;
            let id = next_id;
            match obj.kind {
                NodeKind::Layer => ops.push(DrawOp::WriteMask {
                    node: n,
                    id,
                    within: mask,
                }),
                // A folder clipper writes the masks of its visible child layers.
                NodeKind::Folder => ops.extend(
                    self.children(n)
                        .filter(|&c| nodes[c].visible && self.objects()[c].kind == NodeKind::Layer)
                        .map(|c| DrawOp::WriteMask {
                            node: c,
                            id,
                            within: mask,
                        }),
                ),
            }
            let clippees = self.clippees(n, nodes);
            work.extend(clippees.into_iter().rev().map(|c| (c, Some(id))));
        }
        ops
    }

    /// Every visible descendant of `n` (not `n`), children in reverse list order, pre-order.
    fn visible_descendants(&self, n: usize, nodes: &[NodeFrame], out: &mut Vec<usize>) {
        let mut stack: Vec<usize> = self.children(n).filter(|&c| nodes[c].visible).collect();
        while let Some(d) = stack.pop() {
            out.push(d);
            stack.extend(self.children(d).filter(|&c| nodes[c].visible));
        }
    }
}

/// Stable sort by world depth, ascending (lower depth is drawn first, §4.7).
fn sort_by_depth(list: &mut [usize], nodes: &[NodeFrame]) {
    list.sort_by(|&a, &b| nodes[a].world_depth.total_cmp(&nodes[b].world_depth));
}

/// A frame at AnimeEffects' precision, 1/1000 (`Frame`: value + milli/1000); a non-finite frame
/// counts as 0, and frames are kept within ±1e9.
pub fn quantize_frame(frame: f32) -> f32 {
    if !frame.is_finite() {
        return 0.0;
    }
    let f = f64::from(frame.clamp(-1e9, 1e9));
    ((f * 1000.0).round() / 1000.0) as f32
}
