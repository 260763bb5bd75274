//! Evaluating an AnimeEffects project at a frame (§4.1–§4.8 and the Addendum): which keys
//! apply, their blended values, every node's transform, opacity and depth, each layer's
//! deformed mesh in canvas pixels, and the sequence in which AnimeEffects draws.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rigplay::anie::eval::Evaluator;
//! use rigplay::formats::anie::AnieFile;
//!
//! let project = AnieFile::read(&std::fs::read("walk.anie")?)?.file;
//! let evaluator = Evaluator::new(project); // bone influences are computed once, here
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
//! * **Draw order** (§4.7, §4.8): see [`DrawOp`] and [`EvaluatedFrame::draws`]. Folders are
//!   collected before their children (pre-order), so on equal depth a folder's own step (its
//!   clippees, its HSV re-draw) comes before its children's draws.
//!
//! Not covered by a reference render, so chosen from the format doc's wording and marked as such:
//! the neighbours in the loop-wrap segments, a folder clipper's mask (its visible child layers
//! only), the `IS_CLIPPEE` mask writer of a clipper inside a clipped run ([`DrawOp::WriteMask`]),
//! how often a folder's HSV re-draws each descendant ([`DrawOp::HsvRedraw`]), the HSV `absolute`
//! flag between keys ([`hsv_value`]), and the Bone key owner (the node holding the key, not the
//! stored `cache_owner`).
//!
//! Trees are walked in index order (the model's arenas are pre-order, parents first) or with
//! explicit stacks; nothing recurses. A parent index that is not smaller than its child's, or a
//! child list entry whose parent is another node, is ignored, so a hand-made malformed project
//! cannot loop.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Affine2, Mat4, Vec2, Vec3};

use super::blend::{HsvAdjust, opacity_alpha8};
use super::easing::ease;
use super::skinning::{
    BoneJoint, BoneWorld, MAX_PALETTE_BONES, PaletteEntry, VertexInfluences, blend_ffd,
    bone_world_transforms, bound_outer, build_palette, palette_entry, place_plain, place_skinned,
    skin_matrix, vertex_influences,
};
use super::spline::MovePath;
use super::transform::{local_matrix, world_depth, world_opacity};
use super::{lerp, lerp_vec2};
use crate::formats::anie::{
    AnieFile, BlendMode, Bone, DepthKey, Easing, FfdKey, GridMesh, HsvKey, ImageKey, KeyKind,
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
    /// Where skinning takes its bone influences from.
    pub influences: InfluenceSource,
}

/// A project at one frame.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EvaluatedFrame {
    /// The frame evaluated, rounded to AnimeEffects' millisecond precision.
    pub frame: f32,
    /// The canvas width in pixels (the exported image's width at scale 1).
    pub canvas_width: u32,
    /// The canvas height in pixels.
    pub canvas_height: u32,
    /// One entry per object node, indexed like [`AnieFile::objects`].
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
    Skinned {
        /// The Bone key whose skeleton skins the layer.
        bone_key: KeyRef,
    },
    /// Rigidly attached to bone `bone` (DFS index) of the Bone key; `world` is the bound matrix.
    Bound {
        /// The Bone key that binds the node.
        bone_key: KeyRef,
        /// The bone's index in the Bone key's bones (DFS pre-order).
        bone: usize,
    },
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
    /// The Bone key this skeleton belongs to.
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
    Layer {
        /// The layer's object node index.
        node: usize,
        /// The clipper id whose mask scales it, if it is a clippee.
        mask: Option<u8>,
    },
    /// Write layer `node`'s coverage `uint(texel alpha · alpha8/255 · 255)` into the clipping
    /// mask under `id` (§4.8); the same id adds, capped at 255. `within`: the clipper itself is
    /// a clippee of that id; it writes only where the mask holds `within`, its coverage scaled by
    /// that mask (the `IS_CLIPPEE` variant of the mask writer).
    WriteMask {
        /// The clipper layer's object node index.
        node: usize,
        /// The mask id it writes (1..=255).
        id: u8,
        /// The mask id it is itself clipped by, if any.
        within: Option<u8>,
    },
    /// Clear the clipping mask: the 8-bit ids wrapped past 255 (§4.8).
    ClearMask,
    /// Draw layer `layer` again with folder `folder`'s HSV adjustment, Normal compositing,
    /// unmasked (§4.10: a folder with active HSV keys re-draws its visible descendant layers,
    /// sorted by depth, right after its own place in the order). Each descendant is re-drawn
    /// **once** here. AnimeEffects' traversal visits siblings repeatedly and re-draws some of
    /// them several times; the format doc does not say how many, and no reference render covers it,
    /// so with translucent layers under an HSV folder this can differ from AnimeEffects.
    HsvRedraw {
        /// The descendant layer's object node index.
        layer: usize,
        /// The HSV folder's object node index.
        folder: usize,
    },
}

impl EvaluatedFrame {
    /// The layers in the order of [`DrawOp::Layer`] steps, with the clipper whose mask they use.
    #[cfg(test)]
    pub(crate) fn layer_draws(&self) -> impl Iterator<Item = (usize, Option<u8>)> + '_ {
        self.draws.iter().filter_map(|op| match *op {
            DrawOp::Layer { node, mask } => Some((node, mask)),
            _ => None,
        })
    }
}

/// [`Evaluator::evaluate`] once, on a borrowed project (nothing is copied). It prepares what an
/// [`Evaluator`] prepares (the bone influences) for this one frame: to evaluate many frames,
/// keep an `Evaluator`.
pub fn evaluate(project: &AnieFile, frame: f32) -> EvaluatedFrame {
    let prepared = Prepared::new(project, EvalOptions::default());
    View {
        project,
        prep: &prepared,
    }
    .evaluate(frame)
}

/// Evaluates one project at any frame.
///
/// It owns the project (shared through an [`Arc`], never copied) and what does not depend on
/// the frame (key parents, bone influences and `cacheInner`, binding matrices), computed once
/// in [`Evaluator::new`]. It borrows nothing, so it is `Send + Sync + 'static` and a Bevy asset
/// or component can keep one; a clone shares both (two reference counts).
#[derive(Clone, Debug)]
pub struct Evaluator {
    project: Arc<AnieFile>,
    prepared: Arc<Prepared>,
}

/// What an [`Evaluator`] computes once per project: everything that does not depend on the
/// frame.
#[derive(Clone, Debug)]
struct Prepared {
    options: EvalOptions,
    /// Per node, per FFD key: its parent key (an Image or Mesh key).
    ffd_parents: Vec<Vec<Option<KeyRef>>>,
    /// Per node, per Pose key: its parent key (a Bone key).
    pose_parents: Vec<Vec<Option<KeyRef>>>,
    /// Per node, per Pose key: for each bone of its Bone key, the pose bone that poses it (by
    /// the origin links); empty for Pose keys without a Bone key parent.
    pose_maps: Vec<Vec<Vec<Option<usize>>>>,
    /// Per layer node: its skin cache under each Bone key that skins it.
    skins: Vec<Vec<(KeyRef, SkinCache)>>,
    /// Per node: its binding to a bone of each Bone key that binds it.
    bindings: Vec<Vec<(KeyRef, Binding)>>,
    /// Each node's children in list order: those whose parent link points back, each once.
    children: Vec<Vec<usize>>,
    /// Each node's sibling just before it in that list.
    prev_sibling: Vec<Option<usize>>,
}

/// A project and its prepared state, borrowed for evaluating: the evaluation itself.
#[derive(Clone, Copy)]
struct View<'a> {
    project: &'a AnieFile,
    prep: &'a Prepared,
}

/// What [`View::prepare_bone_key`] found for one Bone key.
#[derive(Default)]
struct BoneKeyPrep {
    /// Node → its binding to a bone of the key.
    bindings: Vec<(usize, Binding)>,
    /// Layer node → its skin under the key.
    skins: Vec<(usize, SkinCache)>,
    /// Pose key index of the owner → its bone map.
    pose_maps: Vec<(usize, Vec<Option<usize>>)>,
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

impl Evaluator {
    /// An evaluator with the default options (influences recomputed, as AnimeEffects 1.7).
    ///
    /// `project` is an [`AnieFile`] (moved, not copied) or an `Arc<AnieFile>` shared
    /// with others.
    pub fn new(project: impl Into<Arc<AnieFile>>) -> Self {
        Self::with_options(project, EvalOptions::default())
    }

    /// An evaluator; computes every Bone key's skin caches and bindings (§4.5 step 5, §4.6).
    pub fn with_options(project: impl Into<Arc<AnieFile>>, options: EvalOptions) -> Self {
        let project = project.into();
        let prepared = Arc::new(Prepared::new(&project, options));
        Self { project, prepared }
    }

    /// The project this evaluator reads.
    pub fn project(&self) -> &Arc<AnieFile> {
        &self.project
    }

    /// The options it was made with.
    pub fn options(&self) -> EvalOptions {
        self.prepared.options
    }

    /// The project at `frame` (any real number; rounded to 1/1000).
    pub fn evaluate(&self, frame: f32) -> EvaluatedFrame {
        self.view().evaluate(frame)
    }

    fn view(&self) -> View<'_> {
        View {
            project: &self.project,
            prep: &self.prepared,
        }
    }
}

impl Prepared {
    /// Key parents, child lists, and every Bone key's skin caches, bindings and pose maps.
    fn new(project: &AnieFile, options: EvalOptions) -> Self {
        let objects = &project.objects;
        let mut children = vec![Vec::new(); objects.len()];
        let mut prev_sibling = vec![None; objects.len()];
        let mut listed = vec![false; objects.len()];
        for (p, node) in objects.iter().enumerate() {
            for &c in &node.children {
                if c > p && c < objects.len() && objects[c].parent == Some(p) && !listed[c] {
                    listed[c] = true;
                    prev_sibling[c] = children[p].last().copied();
                    children[p].push(c);
                }
            }
        }
        let key_parents = project.key_parents();
        let parents = |node: usize, kind: KeyKind, count: usize| -> Vec<Option<KeyRef>> {
            (0..count)
                .map(|i| {
                    let slot = KeySlot::At(i);
                    key_parents.get(&KeyRef { node, kind, slot }).copied()
                })
                .collect()
        };
        let ffd_parents = (objects.iter().enumerate())
            .map(|(n, o)| parents(n, KeyKind::Ffd, o.timeline.ffds.keys.len()))
            .collect();
        let pose_parents = (objects.iter().enumerate())
            .map(|(n, o)| parents(n, KeyKind::Pose, o.timeline.poses.keys.len()))
            .collect();
        let mut prep = Self {
            options,
            ffd_parents,
            pose_parents,
            pose_maps: (objects.iter())
                .map(|o| vec![Vec::new(); o.timeline.poses.keys.len()])
                .collect(),
            skins: vec![Vec::new(); objects.len()],
            bindings: vec![Vec::new(); objects.len()],
            children,
            prev_sibling,
        };
        // Each Bone key is prepared from the project and the key parents alone (not from
        // another key's results), so all are found first and stored in key order after.
        let keys = (objects.iter().enumerate()).flat_map(|(owner, node)| {
            (0..node.timeline.bones.keys.len()).map(move |i| KeyRef {
                node: owner,
                kind: KeyKind::Bone,
                slot: KeySlot::At(i),
            })
        });
        let view = View {
            project,
            prep: &prep,
        };
        let found: Vec<(KeyRef, BoneKeyPrep)> =
            keys.map(|key| (key, view.prepare_bone_key(key))).collect();
        for (key, found) in found {
            for (n, binding) in found.bindings {
                prep.bindings[n].push((key, binding));
            }
            for (n, skin) in found.skins {
                prep.skins[n].push((key, skin));
            }
            for (i, map) in found.pose_maps {
                prep.pose_maps[key.node][i] = map;
            }
        }
        prep
    }
}

impl<'a> View<'a> {
    fn objects(&self) -> &'a [ObjectNode] {
        &self.project.objects
    }

    /// The parent of node `i`, if it is a valid one (smaller index: pre-order).
    fn parent(&self, i: usize) -> Option<usize> {
        self.objects().get(i)?.parent.filter(|&p| p < i)
    }

    /// The children of node `p` in list order (those whose parent link is `p`, each once).
    fn children(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        self.prep
            .children
            .get(p)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
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
    fn prepare_bone_key(&self, key: KeyRef) -> BoneKeyPrep {
        let mut out = BoneKeyPrep::default();
        let objects = self.objects();
        let owner = key.node;
        let Some(bone_key) = objects[owner].timeline.bones.get(key.slot) else {
            return out;
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
                    out.bindings.push((n, Binding { bone: b, inner }));
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
            let stored = (self.prep.options.influences == InfluenceSource::Stored)
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
            out.skins.push((d, cache));
        }

        // Pose keys of this Bone key: pose bone → Bone key bone by origin.
        let poses = &objects[owner].timeline.poses;
        for (i, pose) in poses.keys.iter().enumerate() {
            if self.prep.pose_parents[owner][i] != Some(key) {
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
            out.pose_maps.push((i, map));
        }
        out
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
        let poses = &owner.timeline.poses.keys;
        let pose_parents = &self.prep.pose_parents[key.node];
        let counts = |i: usize| pose_parents[i] == Some(key);
        // Pose key `p`'s bones in Bone key order (by their origin links).
        let pose_bones = |p: usize| {
            let map = self.prep.pose_maps[key.node][p].as_slice();
            let stored = &poses[p].value.bones;
            move |b: usize| -> Option<&Bone> { stored.get((*map.get(b)?)?) }
        };
        let pose = match gather(poses, frame, self.cycle(), counts) {
            Gathered::Empty => None,
            // At or beside a single key: the stored world transforms of its bones.
            Gathered::Hold(p) => {
                let pose = pose_bones(p);
                Some(
                    (0..bones.len())
                        .map(|b| {
                            pose(b).map_or(rest[b], |pb| BoneWorld {
                                pos: pb.world_pos,
                                angle: pb.world_angle,
                            })
                        })
                        .collect(),
                )
            }
            // Between two keys: each bone's rotate lerped, world transforms recomputed from the
            // Bone key's local positions and angles (`blendPoseKey`).
            Gathered::Between(seg) => {
                let (k0, k1) = (pose_bones(seg.k0), pose_bones(seg.k1));
                let rotate = |pose: &dyn Fn(usize) -> Option<&'a Bone>, b: usize| {
                    pose(b).map_or(0.0, |pb| pb.rotate)
                };
                let joints: Vec<BoneJoint> = bones
                    .iter()
                    .enumerate()
                    .map(|(b, bone)| BoneJoint {
                        parent: bone.parent,
                        local_pos: bone.local_pos,
                        local_angle: bone.local_angle,
                        rotate: lerp(rotate(&k0, b), rotate(&k1, b), seg.s),
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
    fn evaluate(&self, frame: f32) -> EvaluatedFrame {
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
                .and_then(|k| Some((k, self.prep.bindings[i].iter().find(|(b, _)| *b == k)?.1)))
                .filter(|(k, _)| k.node < i);
            let (world, mut placement) = match binding {
                Some((k, b)) => {
                    let s = self.skeleton_slot(k, frame, &mut skeletons, &mut skeleton_index);
                    let bone = palette_entry(&skeletons[s].palette, b.bone as i32);
                    let placement = Placement::Bound {
                        bone_key: k,
                        bone: b.bone,
                    };
                    (bound_outer(nodes[k.node].world, &bone, b.inner), placement)
                }
                None => (parent_world * local.matrix, Placement::Plain),
            };

            let mut layer = None;
            if let Some(area) = area {
                let n = area.mesh.vertex_count();
                // FFD keys of the area key (forced parent): absolute positions in mesh space.
                let ffd_parents = &self.prep.ffd_parents[i];
                let counts = |f: usize| ffd_parents[f] == Some(area.area_key);
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
                        .and_then(|k| {
                            Some((k, &self.prep.skins[i].iter().find(|(s, _)| *s == k)?.1))
                        })
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

    /// A clipper: not clipped, and the sibling just before it is (§4.8).
    fn is_clipper(&self, n: usize) -> bool {
        !self.objects()[n].clipped
            && self.prep.prev_sibling[n].is_some_and(|p| self.objects()[p].clipped)
    }

    /// The clippees of clipper `n`: the run of clipped previous siblings (the visible ones,
    /// nearest first), each with its visible, unclipped descendants, stable-sorted by world
    /// depth (§4.8).
    fn clippees(&self, n: usize, nodes: &[NodeFrame]) -> Vec<usize> {
        let mut out = Vec::new();
        // Each step goes to an earlier place in the list, so this ends.
        let mut prev = self.prep.prev_sibling[n];
        while let Some(s) = prev.filter(|&s| self.objects()[s].clipped) {
            if nodes[s].visible {
                self.collect(s, nodes, &mut out);
            }
            prev = self.prep.prev_sibling[s];
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
pub(crate) fn quantize_frame(frame: f32) -> f32 {
    if !frame.is_finite() {
        return 0.0;
    }
    let f = f64::from(frame.clamp(-1e9, 1e9));
    ((f * 1000.0).round() / 1000.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::anie::{
        EasingKind, EasingRange, IRect, Image, ResourceNode, ResourceTree, Spline,
    };
    use std::f32::consts::FRAC_PI_2;

    fn close(a: Vec2, b: Vec2, eps: f32) -> bool {
        (a - b).abs().max_element() <= eps
    }

    /// One resource tree: a folder and a 4×4 white image at node 1.
    fn white_4x4() -> ResourceTree {
        ResourceTree {
            file_path: "t.psd".into(),
            nodes: vec![
                ResourceNode {
                    identifier: "top".into(),
                    children: vec![1],
                    ..Default::default()
                },
                ResourceNode {
                    identifier: "img".into(),
                    is_layer: true,
                    rect: IRect {
                        x: 0,
                        y: 0,
                        width: 4,
                        height: 4,
                    },
                    image: Some(Image {
                        width: 4,
                        height: 4,
                        rgba: vec![255; 64],
                    }),
                    parent: Some(0),
                    ..Default::default()
                },
            ],
        }
    }

    /// The default Image key of a 4×4 layer centred on its origin: AnimeEffects' quad mesh
    /// (0,0),(4,0),(0,4),(4,4), triangles 0,1,2 and 1,3,2, offsets (−2, −2).
    fn quad_image() -> ImageKey {
        let corners = [(0.0, 0.0), (4.0, 0.0), (0.0, 4.0), (4.0, 4.0)];
        ImageKey {
            resource: Some(ResourceRef { tree: 0, node: 1 }),
            image_offset: Vec2::splat(-2.0),
            mesh: GridMesh {
                size: [4, 4],
                origin_offset: Vec2::splat(-2.0),
                indices: vec![0, 1, 2, 1, 3, 2],
                positions: corners.map(|(x, y)| glam::Vec3::new(x, y, 0.0)).to_vec(),
                texcoords: corners.map(|(x, y)| Vec2::new(x, y)).to_vec(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn folder(parent: Option<usize>, children: &[usize]) -> ObjectNode {
        ObjectNode {
            kind: NodeKind::Folder,
            visible: true,
            parent,
            children: children.to_vec(),
            ..Default::default()
        }
    }

    fn layer(parent: usize) -> ObjectNode {
        let mut n = ObjectNode {
            kind: NodeKind::Layer,
            visible: true,
            parent: Some(parent),
            ..Default::default()
        };
        n.timeline.images.default = Some(TimeKey::new(-1, quad_image()));
        n
    }

    /// A root folder with `layers` layers under it, canvas 64×48, frames 0..=19, no loop.
    fn project(layers: usize) -> AnieFile {
        let mut objects = vec![folder(None, &(1..=layers).collect::<Vec<_>>())];
        objects.extend((0..layers).map(|_| layer(0)));
        AnieFile {
            canvas_width: 64,
            canvas_height: 48,
            max_frame: 19,
            fps: 24,
            looping: false,
            resources: vec![white_4x4()],
            objects,
        }
    }

    fn easing(kind: EasingKind, range: EasingRange) -> Easing {
        Easing {
            kind,
            range,
            ..Easing::default()
        }
    }

    fn rotate_key(frame: i32, rotate: f32, easing: Easing) -> TimeKey<RotateKey> {
        TimeKey::new(frame, RotateKey { easing, rotate })
    }

    fn rotation(frame: &EvaluatedFrame, node: usize) -> f32 {
        let m = frame.nodes[node].local.matrix2;
        m.x_axis.y.atan2(m.x_axis.x)
    }

    #[test]
    fn no_keys_use_the_default_key_then_the_builtin() {
        let mut p = project(1);
        // Default Rotate key 0.5 rad; no Scale/Opa/Depth keys at all → (1,1), 1, 0.
        p.objects[1].timeline.rotates.default = Some(rotate_key(-1, 0.5, Easing::default()));
        let f = evaluate(&p, 7.0);
        assert!((rotation(&f, 1) - 0.5).abs() < 1e-6);
        assert_eq!((f.nodes[1].opacity, f.nodes[1].depth), (1.0, 0.0));
        // Once keys exist, the default key is ignored: one key 0.25 at frame 3, held everywhere.
        p.objects[1].timeline.rotates.keys = vec![rotate_key(3, 0.25, Easing::default())];
        assert!((rotation(&evaluate(&p, 0.0), 1) - 0.25).abs() < 1e-6);
        assert!((rotation(&evaluate(&p, 19.0), 1) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn the_earlier_keys_easing_shapes_the_segment() {
        let mut p = project(1);
        let quad_in = easing(EasingKind::Quad, EasingRange::In);
        let quad_out = easing(EasingKind::Quad, EasingRange::Out);
        p.objects[1].timeline.rotates.keys =
            vec![rotate_key(0, 0.0, quad_in), rotate_key(10, 2.0, quad_out)];
        // Frame 5: s = QuadIn(5/10) = 0.25 → 0 + 2·0.25 = 0.5 (k1's Quad Out plays no part).
        assert!((rotation(&evaluate(&p, 5.0), 1) - 0.5).abs() < 1e-6);
        // Before the first and after the last key (no loop): held.
        assert!((rotation(&evaluate(&p, -3.0), 1) - 0.0).abs() < 1e-6);
        assert!((rotation(&evaluate(&p, 15.0), 1) - 2.0).abs() < 1e-6);
        // A frame rounds to 1/1000 first: 9.9996 → 10.0, exactly key 1.
        assert_eq!(quantize_frame(9.9996), 10.0);
        assert!((rotation(&evaluate(&p, 9.9996), 1) - 2.0).abs() < 1e-6);
    }

    #[test]
    fn the_loop_wraps_around_the_first_and_last_key() {
        let mut p = project(1);
        p.looping = true; // frames 0..=19: cycle 20
        p.objects[1].timeline.rotates.keys = vec![
            rotate_key(5, 0.0, Easing::default()),
            rotate_key(15, 1.0, Easing::default()),
        ];
        // Frame 17, after the last key: 15 → first key at 5 + 20 = 25, s = 2/10 → 1 − 0.2 = 0.8.
        assert!((rotation(&evaluate(&p, 17.0), 1) - 0.8).abs() < 1e-6);
        // Frame 2, before the first key: last key at 15 − 20 = −5 → 5, s = 7/10 → 1 − 0.7 = 0.3.
        assert!((rotation(&evaluate(&p, 2.0), 1) - 0.3).abs() < 1e-6);
        // With only one key the loop holds it.
        p.objects[1].timeline.rotates.keys.truncate(1);
        assert_eq!(rotation(&evaluate(&p, 17.0), 1), 0.0);
    }

    #[test]
    fn move_neighbours_do_not_wrap_round_the_loop() {
        let mut p = project(1);
        p.looping = true;
        let key = |frame: i32, x: f32, y: f32| {
            TimeKey::new(
                frame,
                MoveKey {
                    spline: Spline::CatmullRom,
                    pos: Vec2::new(x, y),
                    ..Default::default()
                },
            )
        };
        p.objects[1].timeline.moves.keys =
            vec![key(0, 0.0, 0.0), key(10, 10.0, 0.0), key(19, 10.0, 10.0)];
        // Frame 5, between keys 0 and 10: no kn (the wrapped key 19 is not used), k2 = (10, 10):
        // v1 = ½((10,10) − (0,0)) = (5, 5); v0 = mirror of v1 about (1, 0) = (5, −5).
        // a = 2p0 − 2p1 + v0 + v1 = (−10, 0); b = −3p0 + 3p1 − 2v0 − v1 = (15, 5);
        // P(u) = (−10u³ + 15u² + 5u, 5u² − 5u), symmetric about u = ½, so half the arc length is
        // at u = ½: linear s = 0.5 → P(0.5) = (−1.25 + 3.75 + 2.5, 1.25 − 2.5) = (5, −1.25).
        // (With the wrapped kn = (10, 10), v0 = ½(p1 − kn) = (0, −5) and the path bends the other
        // way at the start.)
        let pos = evaluate(&p, 5.0).nodes[1].local.translation;
        assert!(close(pos, Vec2::new(5.0, -1.25), 1e-4), "{pos}");
    }

    /// Layer 1 with Mesh key at frame 10 and FFD keys: one at 0 under the default Image key,
    /// one at 12 under the Mesh key.
    fn ffd_project() -> AnieFile {
        let mut p = project(1);
        let tl = &mut p.objects[1].timeline;
        tl.meshes.keys = vec![TimeKey::new(
            10,
            MeshKey {
                vertices: vec![Vec2::new(-2.0, -2.0), Vec2::new(2.0, 0.0), Vec2::ZERO],
                edges: vec![[0, 1], [1, 2], [2, 0]],
                faces: vec![[0, 1, 2]],
                ..Default::default()
            },
        )];
        let ffd = |frame, x: f32, n| {
            TimeKey::new(
                frame,
                FfdKey {
                    easing: Easing::default(),
                    positions: vec![glam::Vec3::new(x, 0.0, 0.0); n],
                },
            )
        };
        tl.ffds.keys = vec![ffd(0, 1.0, 4), ffd(12, 7.0, 3)];
        let ffd_ref = |i| KeyRef {
            node: 1,
            kind: KeyKind::Ffd,
            slot: KeySlot::At(i),
        };
        tl.images.default.as_mut().unwrap().children = vec![ffd_ref(0)];
        tl.meshes.keys[0].children = vec![ffd_ref(1)];
        p
    }

    #[test]
    fn ffd_keys_count_only_under_the_active_area_key() {
        let p = ffd_project();
        // Frame 5: the area key is the default Image key; FFD@0 is its child and FFD@12 is not,
        // so FFD@0 holds: every vertex at (1, 0), + origin (−2, −2) + Move (0, 0) → (−1, −2).
        let f = evaluate(&p, 5.0);
        let layer = f.nodes[1].layer.as_ref().unwrap();
        assert_eq!(layer.area_key.kind, KeyKind::Image);
        assert!(layer.ffd);
        assert!(
            layer
                .mesh
                .positions
                .iter()
                .all(|&v| v == Vec2::new(-1.0, -2.0))
        );
        // Frame 15: the Mesh key (10) is newer than the Image key (−1): FFD@12 holds, (7, 0) +
        // the mesh origin (0, 0). FFD@0 (other parent) stops the search before it.
        let f = evaluate(&p, 15.0);
        let layer = f.nodes[1].layer.as_ref().unwrap();
        assert_eq!(layer.area_key.kind, KeyKind::Mesh);
        assert_eq!(layer.mesh.positions, vec![Vec2::new(7.0, 0.0); 3]);
        // Frame 11: the Mesh key is active, FFD@12 is its only FFD key (held before it).
        assert_eq!(
            evaluate(&p, 11.0).nodes[1]
                .layer
                .as_ref()
                .unwrap()
                .mesh
                .positions[0],
            Vec2::new(7.0, 0.0)
        );
        // The Mesh key's triangle and texcoords: uv = (texcoord + meshOrigin − imageOffset)/4:
        // vertex (−2, −2) → (0, 0); (2, 0) → (4, 2)/4 = (1, 0.5); (0, 0) → (0.5, 0.5).
        assert_eq!(layer.mesh.indices, vec![0, 1, 2]);
        assert_eq!(
            layer.mesh.uvs,
            vec![Vec2::ZERO, Vec2::new(1.0, 0.5), Vec2::splat(0.5)]
        );
    }

    #[test]
    fn step_keys_use_the_floor_and_never_wrap() {
        let mut p = project(1);
        p.looping = true;
        let tl = &mut p.objects[1].timeline;
        tl.images.default.as_mut().unwrap().value.blend_mode = BlendMode::Screen;
        let mut k0 = quad_image();
        k0.blend_mode = BlendMode::Multiply;
        let mut k1 = quad_image();
        k1.blend_mode = BlendMode::Difference;
        tl.images.keys = vec![TimeKey::new(2, k0), TimeKey::new(10, k1)];
        let mode = |frame: f32| {
            evaluate(&p, frame).nodes[1]
                .layer
                .as_ref()
                .map(|l| l.blend_mode)
        };
        // floor(9.999) = 9 → key 2; 10 → key 10; frame 1 → the default key (no loop wrap to the
        // key at 10, although the loop is on).
        assert_eq!(mode(9.999), Some(BlendMode::Multiply));
        assert_eq!(mode(10.0), Some(BlendMode::Difference));
        assert_eq!(mode(1.0), Some(BlendMode::Screen));
    }

    #[test]
    fn a_mesh_key_wins_over_an_image_key_of_the_same_frame() {
        let mut p = ffd_project();
        p.objects[1].timeline.images.keys = vec![TimeKey::new(10, quad_image())];
        let area = |p: &AnieFile| evaluate(p, 12.0).nodes[1].layer.as_ref().unwrap().area_key;
        assert_eq!(area(&p).kind, KeyKind::Mesh);
        // The Image key wins only when it is newer: at 11 > 10.
        p.objects[1].timeline.images.keys[0].frame = 11;
        assert_eq!(area(&p).kind, KeyKind::Image);
    }

    #[test]
    fn opacity_multiplies_and_truncates_depth_adds_visibility_hides_subtrees() {
        let mut p = project(1);
        let opa = |o| {
            TimeKey::new(
                -1,
                OpaKey {
                    easing: Easing::default(),
                    opacity: o,
                },
            )
        };
        let depth = |d| {
            TimeKey::new(
                -1,
                DepthKey {
                    easing: Easing::default(),
                    depth: d,
                },
            )
        };
        p.objects[0].timeline.opacities.default = Some(opa(0.5));
        p.objects[1].timeline.opacities.default = Some(opa(0.5));
        p.objects[0].timeline.depths.default = Some(depth(2.0));
        p.objects[1].timeline.depths.default = Some(depth(-1.0));
        let f = evaluate(&p, 0.0);
        // 0.5 · 0.5 = 0.25 → 255 · 0.25 = 63.75 → 63; depth 2 + (−1) = 1.
        assert_eq!(f.nodes[1].world_opacity, 0.25);
        assert_eq!(f.nodes[1].alpha8, 63);
        assert_eq!(f.nodes[1].world_depth, 1.0);
        // A hidden folder hides its layer, which then draws nothing and has no mesh.
        p.objects[0].visible = false;
        let f = evaluate(&p, 0.0);
        assert!(!f.nodes[1].visible && f.draws.is_empty());
        assert!(f.nodes[1].layer.as_ref().unwrap().mesh.positions.is_empty());
    }

    #[test]
    fn depth_sort_is_stable_with_later_children_first() {
        // Children a, b, c (1, 2, 3), c at depth 1: collected root, c, b, a (reverse list order),
        // stable-sorted by depth: b (0), a (0), c (1).
        let mut p = project(3);
        p.objects[3].timeline.depths.default = Some(TimeKey::new(
            -1,
            DepthKey {
                easing: Easing::default(),
                depth: 1.0,
            },
        ));
        let f = evaluate(&p, 0.0);
        assert_eq!(
            f.layer_draws().collect::<Vec<_>>(),
            [(2, None), (1, None), (3, None)]
        );
    }

    #[test]
    fn clippers_draw_their_clippees_right_after_them() {
        // Children c1, c2 (clipped), k, x, y (clipped), z: k clips c2 and c1, z clips y.
        let mut p = project(6);
        for i in [1, 2, 5] {
            p.objects[i].clipped = true;
        }
        let f = evaluate(&p, 0.0);
        use DrawOp::*;
        assert_eq!(
            f.draws,
            [
                Layer {
                    node: 6,
                    mask: None
                },
                WriteMask {
                    node: 6,
                    id: 1,
                    within: None
                },
                Layer {
                    node: 5,
                    mask: Some(1)
                },
                Layer {
                    node: 4,
                    mask: None
                },
                Layer {
                    node: 3,
                    mask: None
                },
                WriteMask {
                    node: 3,
                    id: 2,
                    within: None
                },
                Layer {
                    node: 2,
                    mask: Some(2)
                },
                Layer {
                    node: 1,
                    mask: Some(2)
                },
            ]
        );
        // A clipper whose own opacity is 0 draws neither itself nor its clippees.
        p.objects[3].timeline.opacities.default = Some(TimeKey::new(
            -1,
            OpaKey {
                easing: Easing::default(),
                opacity: 0.0,
            },
        ));
        let f = evaluate(&p, 0.0);
        assert_eq!(
            f.layer_draws().collect::<Vec<_>>(),
            [(6, None), (5, Some(1)), (4, None)]
        );
    }

    #[test]
    fn mask_ids_wrap_after_255_with_a_clear() {
        // 256 pairs (clipped, clipper): ids 1..=255, then a clear and id 1 again.
        let mut p = project(512);
        for i in (1..=512).step_by(2) {
            p.objects[i].clipped = true;
        }
        let f = evaluate(&p, 0.0);
        let ids: Vec<Option<u8>> = f
            .draws
            .iter()
            .filter_map(|op| match *op {
                DrawOp::WriteMask { id, .. } => Some(Some(id)),
                DrawOp::ClearMask => Some(None),
                _ => None,
            })
            .collect();
        assert_eq!(ids.len(), 257);
        assert_eq!(ids[..3], [Some(1), Some(2), Some(3)]);
        assert_eq!(ids[254..], [Some(255), None, Some(1)]);
    }

    /// Root folder with a Bone key at frame 0: joint at (0, 0), bone 1 to (10, 0) that binds
    /// `bound` (if any). Layer 1 moves from (20, 0) at frame 0 to (70, 0) at frame 10.
    fn bone_project(bound: &[usize]) -> AnieFile {
        let mut p = project(1);
        let bones = vec![
            Bone {
                children: vec![1],
                ..Default::default()
            },
            Bone {
                parent: Some(0),
                local_pos: Vec2::new(10.0, 0.0),
                world_pos: Vec2::new(10.0, 0.0),
                binding_nodes: bound.to_vec(),
                ..Default::default()
            },
        ];
        p.objects[0].timeline.bones.keys = vec![TimeKey::new(
            0,
            crate::formats::anie::BoneKey {
                bones,
                cache_owner: Some(0),
                ..Default::default()
            },
        )];
        p.objects[1].timeline.moves.keys = vec![
            TimeKey::new(
                0,
                MoveKey {
                    pos: Vec2::new(20.0, 0.0),
                    ..Default::default()
                },
            ),
            TimeKey::new(
                10,
                MoveKey {
                    pos: Vec2::new(70.0, 0.0),
                    ..Default::default()
                },
            ),
        ];
        p
    }

    #[test]
    fn a_skinned_layer_keeps_its_srt_from_the_bone_key_frame() {
        let mut p = bone_project(&[]);
        // No Pose key: the palette is the identity. Vertex 0 (0, 0) → cacheInner (the layer's
        // local at frame 0: T(20, 0)) · (0 + origin (−2, −2)) = (18, −2), whatever the layer's
        // own Move says at frame 10 (70, 0).
        let f = evaluate(&p, 10.0);
        assert_eq!(
            f.nodes[1].placement,
            Placement::Skinned {
                bone_key: KeyRef {
                    node: 0,
                    kind: KeyKind::Bone,
                    slot: KeySlot::At(0)
                }
            }
        );
        let v0 = f.nodes[1].layer.as_ref().unwrap().mesh.positions[0];
        assert!(close(v0, Vec2::new(18.0, -2.0), 1e-5), "{v0}");
        // An Image key newer than the Bone key drops it: plain again, (70 − 2, −2).
        p.objects[1].timeline.images.keys = vec![TimeKey::new(5, quad_image())];
        let f = evaluate(&p, 10.0);
        assert_eq!(
            (f.nodes[1].placement, f.nodes[1].bone_key),
            (Placement::Plain, None)
        );
        let v0 = f.nodes[1].layer.as_ref().unwrap().mesh.positions[0];
        assert!(close(v0, Vec2::new(68.0, -2.0), 1e-5), "{v0}");
    }

    #[test]
    fn a_bound_node_follows_its_bone() {
        let mut p = bone_project(&[1]);
        // One Pose key at frame 0, child of the Bone key, with bone 1 stored at (10, 0) turned
        // π/2. Palette: Δ = π/2, M = T(10, 0) · R(π/2) · T(−10, 0).
        let mut pose_bones = p.objects[0].timeline.bones.keys[0].value.bones.clone();
        pose_bones[1].world_angle = FRAC_PI_2;
        pose_bones[1].rotate = FRAC_PI_2;
        p.objects[0].timeline.poses.keys = vec![TimeKey::new(
            0,
            PoseKey {
                easing: Easing::default(),
                bones: pose_bones,
            },
        )];
        p.objects[0].timeline.bones.keys[0].children = vec![KeyRef {
            node: 0,
            kind: KeyKind::Pose,
            slot: KeySlot::At(0),
        }];
        // bindingInner = the layer's local at the Bone key's frame 0 = T(20, 0); the layer's
        // origin (0, 0) → (20, 0) → T(−10, 0) → (10, 0) → R(π/2) → (0, 10) → + (10, 0) → (10, 10),
        // at frame 10 too (its own Move there is ignored).
        let f = evaluate(&p, 10.0);
        assert!(matches!(
            f.nodes[1].placement,
            Placement::Bound { bone: 1, .. }
        ));
        let origin = f.nodes[1].world.transform_point2(Vec2::ZERO);
        assert!(close(origin, Vec2::new(10.0, 10.0), 1e-5), "{origin}");
        assert_eq!(f.skeletons.len(), 1);
        assert_eq!(f.skeletons[0].pose.as_ref().unwrap()[1].angle, FRAC_PI_2);
    }

    #[test]
    fn hsv_starts_at_its_first_key_truncates_and_keeps_k0s_absolute_flag() {
        let mut p = project(1);
        let hsv = |frame, hue, absolute| {
            TimeKey::new(
                frame,
                HsvKey {
                    hue,
                    absolute,
                    ..Default::default()
                },
            )
        };
        p.objects[1].timeline.hsvs.keys = vec![hsv(5, 0, true), hsv(15, 100, false)];
        let at = |frame: f32| evaluate(&p, frame).nodes[1].hsv;
        assert_eq!(at(4.0), None);
        // Frame 10.3: s = 5.3/10 = 0.53 → hue 53 (truncated), absolute from k0.
        let h = at(10.3).unwrap();
        assert_eq!((h.hue, h.sat, h.val, h.absolute), (53, 100, 100, true));
        assert_eq!(at(15.0).map(|h| (h.hue, h.absolute)), Some((100, false)));
        // A folder with active HSV re-draws its visible layers after its own (empty) draw.
        p.objects[0].timeline.hsvs.keys = vec![hsv(0, 30, false)];
        let f = evaluate(&p, 0.0);
        assert_eq!(
            f.draws,
            [
                DrawOp::HsvRedraw {
                    layer: 1,
                    folder: 0
                },
                DrawOp::Layer {
                    node: 1,
                    mask: None
                }
            ]
        );
    }

    #[test]
    fn malformed_trees_do_not_loop_or_panic() {
        let mut p = project(2);
        // A child list naming its own parent and a node out of range; a forward parent link.
        p.objects[1].children = vec![0, 1, 99];
        p.objects[2].parent = Some(5);
        p.objects[0].children.extend([0, 1]);
        let f = evaluate(&p, 3.0);
        assert_eq!(f.nodes.len(), 3);
        // Node 2's parent link is invalid, so the root does not count it as a child; node 1,
        // listed twice, is drawn once.
        assert_eq!(f.layer_draws().collect::<Vec<_>>(), [(1, None)]);
    }
}
