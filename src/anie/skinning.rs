//! Bones, pose palettes, dual-quaternion skinning, influence weights and FFD (§4.5, §4.6).
//!
//! The order of deformation AnimeEffects applies to a layer's mesh (§4.5, verified):
//! **mesh → FFD → origin offset → bone skinning → SRT/world**, i.e.
//! * plain: `P = world(F) · T(originOffset) · ffdPos` ([`place_plain`]);
//! * skinned: `P = ownerWorld(F) · Skin(weights, palette) · cacheInner · T(originOffset) · ffdPos`
//!   ([`place_skinned`], [`skin_matrix`]);
//! * bone-bound (§4.6): `outer = ownerOuter(F) · M_palette[bone] · bindingInner`
//!   ([`bound_outer`]), then placed like a plain node with `outer` as its world.
//!
//! FFD positions are absolute ([`blend_ffd`]). Bones are 2D joints; the dual quaternions are the
//! 3D ones AnimeEffects builds for rotations about +z, stored by their non-zero components only
//! ([`DualQuat2`]). A vertex's z is left unchanged by all of this (the skin matrix has
//! `m22 = |real|²/|real|² = 1` and no z translation), so positions here are [`Vec2`].
//!
//! Checked against AnimeEffects 1.7's framebuffers `bones` (3-bone chain, pose keys with Sine
//! InOut and Linear easing, influence maps recomputed from the stored bone shapes with
//! [`vertex_influences`]) and `ffd` (Quad Out FFD keys): every pixel within one 8-bit step, using
//! a throwaway scene loader.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::f32::consts::PI;

use glam::{Affine2, Mat2, Vec2, Vec3};

/// The bone shapes are the file model's, as the editor stored them (§3; reuse, never rebuild).
pub use crate::formats::anie::BoneShape;
use crate::formats::anie::FRect;

use super::lerp_vec3;

/// At most this many bones take part in a palette; later ones are not skinned (§4.5).
pub const MAX_PALETTE_BONES: usize = 32;

/// Influences per vertex: two `ivec4` index sets and two `vec4` weight sets (§4.5).
pub(crate) const MAX_INFLUENCES: usize = 8;

/// One joint of a BoneKey's or PoseKey's bone tree (§3 bone record), in DFS pre-order.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct BoneJoint {
    /// Index of the parent joint in the same pre-order list; `None` for a root. A parent index
    /// that is not smaller than the joint's own counts as `None` (pre-order puts parents first).
    pub parent: Option<usize>,
    /// `(length, 0)` for a non-root joint; the joint position for a root.
    pub local_pos: Vec2,
    /// Radians, relative to the parent's world angle.
    pub local_angle: f32,
    /// The pose rotation (radians). Not applied to roots.
    pub rotate: f32,
}

/// A joint's world placement (`worldPos`, `worldAngle`), in the BoneKey owner's space.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct BoneWorld {
    /// The joint's position (canvas pixels in the owner's space, +y down).
    pub pos: Vec2,
    /// The bone's world angle in radians (+x toward +y).
    pub angle: f32,
}

/// Rotates `v` by `angle` radians (+x toward +y).
fn rotate(v: Vec2, angle: f32) -> Vec2 {
    let (sin, cos) = angle.sin_cos();
    Vec2::new(v.x * cos - v.y * sin, v.x * sin + v.y * cos)
}

/// World transforms of a pre-order joint list (§4.5 "Bone world transforms",
/// `Bone2::updateWorldTransform`; Addendum 13):
/// * root: `worldPos = localPos`, `worldAngle = localAngle` (its `rotate` is ignored);
/// * child: `worldAngle = parent.worldAngle + localAngle + rotate`,
///   `worldPos = parent.worldPos + rot(localPos, worldAngle)` (rotated by its own world angle).
///
/// Use it for poses between two pose keys, after lerping each joint's `rotate` with the earlier
/// key's easing (`blendPoseKey`). At a single pose key AnimeEffects uses the stored world values.
pub fn bone_world_transforms(joints: &[BoneJoint]) -> Vec<BoneWorld> {
    let mut world: Vec<BoneWorld> = Vec::with_capacity(joints.len());
    for (i, joint) in joints.iter().enumerate() {
        let parent = joint.parent.filter(|&p| p < i).map(|p| world[p]);
        world.push(match parent {
            None => BoneWorld {
                pos: joint.local_pos,
                angle: joint.local_angle,
            },
            Some(parent) => {
                let angle = parent.angle + joint.local_angle + joint.rotate;
                BoneWorld {
                    pos: parent.pos + rotate(joint.local_pos, angle),
                    angle,
                }
            }
        });
    }
    world
}

/// A dual quaternion for a rotation about +z plus an xy translation: real `(w, 0, 0, z)`, dual
/// `(0, x, y, 0)` in `(w, x, y, z)` order. The omitted components are exactly zero in everything
/// AnimeEffects does with these (products, sign alignment, weighted sums, the matrix formula).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQuat2 {
    /// Real part `w`: `cos(Δ/2)`.
    pub real_w: f32,
    /// Real part `z`: `sin(Δ/2)`.
    pub real_z: f32,
    /// Dual part `x`.
    pub dual_x: f32,
    /// Dual part `y`.
    pub dual_y: f32,
}

impl DualQuat2 {
    /// No rotation, no translation: real (1,0,0,0), dual 0.
    pub const IDENTITY: Self = Self {
        real_w: 1.0,
        real_z: 0.0,
        dual_x: 0.0,
        dual_y: 0.0,
    };

    /// Bone `i`'s palette entry (§4.5 `makeDualQuaternion`): with `Δ = pose.angle − rest.angle`,
    /// real = `(cos Δ/2, 0, 0, sin Δ/2)` and dual = `½·t·real`, where
    /// `t = pose.pos − R(Δ)·rest.pos` is the pure quaternion `(0, tx, ty, 0)`.
    ///
    /// Worked out, `½ (0, tx, ty, 0) ⊗ (c, 0, 0, s)` = `½ (0, c·tx + s·ty, c·ty − s·tx, 0)`.
    pub fn from_rest_and_pose(rest: BoneWorld, pose: BoneWorld) -> Self {
        let delta = pose.angle - rest.angle;
        let t = pose.pos - rotate(rest.pos, delta);
        let (s, c) = (delta * 0.5).sin_cos();
        Self {
            real_w: c,
            real_z: s,
            dual_x: 0.5 * (c * t.x + s * t.y),
            dual_y: 0.5 * (c * t.y - s * t.x),
        }
    }

    /// The 4D dot product of the real parts.
    pub fn real_dot(self, other: Self) -> f32 {
        self.real_w * other.real_w + self.real_z * other.real_z
    }

    /// `|real|²`.
    pub fn real_length_squared(self) -> f32 {
        self.real_dot(self)
    }

    /// The standard unit dual quaternion → matrix formula, with the whole matrix divided by
    /// `|real|²` (§4.5). With `(w, z)` the real part and `(t1, t2)` the dual x, y:
    /// rotation columns `(w² − z², 2wz)`, `(−2wz, w² − z²)`; translation
    /// `(2w·t1 − 2t2·z, 2t1·z + 2w·t2)`; all over `w² + z²`.
    ///
    /// A degenerate blend (`|real|² = 0`, NaN or infinite, or a non-finite result) gives the
    /// identity.
    pub fn to_affine(self) -> Affine2 {
        let (w, z, t1, t2) = (self.real_w, self.real_z, self.dual_x, self.dual_y);
        let len2 = self.real_length_squared();
        if !(len2 > 0.0 && len2.is_finite()) {
            return Affine2::IDENTITY;
        }
        let diag = w * w - z * z;
        let cross = 2.0 * w * z;
        let m = Affine2::from_mat2_translation(
            Mat2::from_cols(Vec2::new(diag, cross), Vec2::new(-cross, diag)),
            Vec2::new(2.0 * w * t1 - 2.0 * t2 * z, 2.0 * t1 * z + 2.0 * w * t2),
        );
        let m = Affine2::from_mat2_translation(m.matrix2 / len2, m.translation / len2);
        if m.is_finite() { m } else { Affine2::IDENTITY }
    }
}

impl std::ops::Mul<f32> for DualQuat2 {
    type Output = Self;

    /// Every component multiplied by `k`.
    fn mul(self, k: f32) -> Self {
        Self {
            real_w: self.real_w * k,
            real_z: self.real_z * k,
            dual_x: self.dual_x * k,
            dual_y: self.dual_y * k,
        }
    }
}

impl std::ops::Add for DualQuat2 {
    type Output = Self;

    /// Component-wise sum.
    fn add(self, other: Self) -> Self {
        Self {
            real_w: self.real_w + other.real_w,
            real_z: self.real_z + other.real_z,
            dual_x: self.dual_x + other.dual_x,
            dual_y: self.dual_y + other.dual_y,
        }
    }
}

impl std::ops::Neg for DualQuat2 {
    type Output = Self;

    /// Every component negated: the same rigid transform (a dual quaternion's double cover).
    fn neg(self) -> Self {
        self * -1.0
    }
}

impl Default for DualQuat2 {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// The palette matrix of a bone (§4.5): `M_i = T(pose.pos) · R(Δ) · T(−rest.pos)`,
/// `Δ = pose.angle − rest.angle`. Used for bone binding (§4.6); skinning uses [`DualQuat2`].
pub(crate) fn bone_matrix(rest: BoneWorld, pose: BoneWorld) -> Affine2 {
    Affine2::from_translation(pose.pos)
        * Affine2::from_angle(pose.angle - rest.angle)
        * Affine2::from_translation(-rest.pos)
}

/// One bone's pose-palette entry: the matrix (§4.6) and the dual quaternion (§4.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaletteEntry {
    /// `T(pose.pos) · R(Δ) · T(−rest.pos)`, for bone binding (§4.6).
    pub matrix: Affine2,
    /// The same motion as a dual quaternion, for skinning (§4.5).
    pub dual_quat: DualQuat2,
}

impl PaletteEntry {
    /// The entry of an unused slot or an unposed bone.
    pub const IDENTITY: Self = Self {
        matrix: Affine2::IDENTITY,
        dual_quat: DualQuat2::IDENTITY,
    };

    /// The entry of a bone at `rest` posed to `pose`.
    pub fn new(rest: BoneWorld, pose: BoneWorld) -> Self {
        Self {
            matrix: bone_matrix(rest, pose),
            dual_quat: DualQuat2::from_rest_and_pose(rest, pose),
        }
    }
}

/// The pose palette of a BoneKey (§4.5 `PosePalette::build`), indexed by DFS pre-order bone
/// number (roots included), at most [`MAX_PALETTE_BONES`] entries.
///
/// `rest` is the BoneKey's bones (their stored world values); `pose` the current pose's, in the
/// same order, or `None` when no PoseKey applies: then every entry is the identity and the
/// BoneKey deforms nothing. Bones missing from `pose` get the identity.
pub fn build_palette(rest: &[BoneWorld], pose: Option<&[BoneWorld]>) -> Vec<PaletteEntry> {
    let count = rest.len().min(MAX_PALETTE_BONES);
    (0..count)
        .map(|i| match pose.and_then(|pose| pose.get(i)) {
            Some(&posed) => PaletteEntry::new(rest[i], posed),
            None => PaletteEntry::IDENTITY,
        })
        .collect()
}

/// A palette entry by influence-map bone index; out of range or negative → identity
/// ("unused slots are identity", §4.5).
pub(crate) fn palette_entry(palette: &[PaletteEntry], bone: i32) -> PaletteEntry {
    usize::try_from(bone)
        .ok()
        .and_then(|i| palette.get(i))
        .copied()
        .unwrap_or(PaletteEntry::IDENTITY)
}

/// A vertex's 8 influences as the shader reads them (§3 BoneInfluenceMap, §4.5): slot `k`
/// pairs bone index `bones[k]` with `weights[k]`. Unused slots have weight 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexInfluences {
    /// Bone index (DFS pre-order) per slot; negative or out-of-range indices read as the identity.
    pub bones: [i32; MAX_INFLUENCES],
    /// Weight per slot; unused slots are 0.
    pub weights: [f32; MAX_INFLUENCES],
}

impl VertexInfluences {
    /// Rigid on bone 0 (the first root, whose palette entry is the identity): the result of
    /// normalising a vertex with no influences (§4.5 step 4).
    pub const RIGID: Self = Self {
        bones: [0; MAX_INFLUENCES],
        weights: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    };

    /// A stored map's vertex `i` (§3): `indices0[4i..4i+3]`, `indices1[4i..4i+3]` and the
    /// matching weights. `None` if any array is too short.
    #[cfg(test)]
    pub(crate) fn from_stored(
        i: usize,
        indices0: &[i32],
        indices1: &[i32],
        weights0: &[f32],
        weights1: &[f32],
    ) -> Option<Self> {
        let start = i.checked_mul(4)?;
        let range = start..start.checked_add(4)?;
        let mut out = Self {
            bones: [0; MAX_INFLUENCES],
            weights: [0.0; MAX_INFLUENCES],
        };
        out.bones[..4].copy_from_slice(indices0.get(range.clone())?);
        out.bones[4..].copy_from_slice(indices1.get(range.clone())?);
        out.weights[..4].copy_from_slice(weights0.get(range.clone())?);
        out.weights[4..].copy_from_slice(weights1.get(range)?);
        Some(out)
    }
}

impl Default for VertexInfluences {
    fn default() -> Self {
        Self::RIGID
    }
}

/// The skin matrix of a vertex (§4.5, `MeshTransformVert.glsl` with `USE_DUAL_QUATERNION`):
/// the 8 dual quaternions are sign-aligned to slot 0's (negated if `dot(real_k, real_0) < 0`),
/// summed with the weights (no renormalisation), and converted by [`DualQuat2::to_affine`]
/// (division by `|real|²`; a degenerate sum gives the identity).
pub fn skin_matrix(palette: &[PaletteEntry], influences: &VertexInfluences) -> Affine2 {
    let first = palette_entry(palette, influences.bones[0]).dual_quat;
    let mut sum = DualQuat2 {
        real_w: 0.0,
        real_z: 0.0,
        dual_x: 0.0,
        dual_y: 0.0,
    };
    for (&bone, &weight) in influences.bones.iter().zip(&influences.weights) {
        let mut dq = palette_entry(palette, bone).dual_quat;
        if dq.real_dot(first) < 0.0 {
            dq = -dq;
        }
        sum = sum + dq * weight;
    }
    sum.to_affine()
}

/// A vertex placed by a skinned layer (§4.5 step 4):
/// `ownerWorld · skin · cacheInner · T(originOffset) · ffdPos`.
///
/// `cache_inner` is the product of the local matrices from the layer up to (excluding) the
/// BoneKey's owner, **evaluated at the BoneKey's frame**; the layer's own animation between
/// them has no effect while skinned.
pub fn place_skinned(
    owner_world: Affine2,
    skin: Affine2,
    cache_inner: Affine2,
    origin_offset: Vec2,
    ffd_pos: Vec2,
) -> Vec2 {
    let p = cache_inner.transform_point2(ffd_pos + origin_offset);
    owner_world.transform_point2(skin.transform_point2(p))
}

/// A vertex placed by a plain (or bone-bound, with its `outer` as `world`) layer (§4.5 step 4,
/// §4.6): `world · T(originOffset) · ffdPos`.
pub fn place_plain(world: Affine2, origin_offset: Vec2, ffd_pos: Vec2) -> Vec2 {
    world.transform_point2(ffd_pos + origin_offset)
}

/// The outer matrix of a node bound rigidly to a bone (§4.6):
/// `ownerOuter(F) · M_palette[boneIndex] · bindingInner`. Its descendants continue with
/// `parentOuter · ownLocal(F)`.
pub fn bound_outer(owner_outer: Affine2, bone: &PaletteEntry, binding_inner: Affine2) -> Affine2 {
    owner_outer * bone.matrix * binding_inner
}

/// FFD blend (§4.5 step 2): per vertex `lerp(k0[i], k1[i], s)`, absolute positions in mesh
/// space. Writes `k0.len()` positions into `out` (cleared first); a vertex missing from `k1`
/// keeps its `k0` position.
pub fn blend_ffd(k0: &[Vec3], k1: &[Vec3], s: f32, out: &mut Vec<Vec3>) {
    out.clear();
    out.extend(
        k0.iter()
            .enumerate()
            .map(|(i, &a)| k1.get(i).map_or(a, |&b| lerp_vec3(a, b, s))),
    );
}

/// Qt's `QRectF::contains(QPointF)` for a stored `QRectF` (§1.1: top-left corner and size):
/// edges included, a negative size spans to the left/up, and a rectangle of zero width or height
/// contains nothing.
pub fn rect_contains(rect: &FRect, p: Vec2) -> bool {
    let span = |start: f32, size: f32| {
        if size < 0.0 {
            (start + size, start)
        } else {
            (start, start + size)
        }
    };
    let (l, r) = span(rect.x, rect.width);
    let (t, b) = span(rect.y, rect.height);
    l != r && t != b && p.x >= l && p.x <= r && p.y >= t && p.y <= b
}

/// Odd-even containment of `p` in a closed polygon, by Qt's `QPolygonF::containsPoint` rule
/// (computed in `f64`, Qt's `qreal`): an edge counts if `p.y` is in its half-open span
/// `[y_low, y_high)` and it crosses that row at or left of `p.x`; horizontal edges (fuzzy-equal
/// ends) are skipped; the polygon is closed implicitly.
pub fn polygon_contains(polygon: &[Vec2], p: Vec2) -> bool {
    let Some(&first) = polygon.first() else {
        return false;
    };
    let (px, py) = (f64::from(p.x), f64::from(p.y));
    let mut crossings = 0u32;
    let mut edge = |a: Vec2, b: Vec2| {
        let (mut x1, mut y1) = (f64::from(a.x), f64::from(a.y));
        let (mut x2, mut y2) = (f64::from(b.x), f64::from(b.y));
        // qFuzzyCompare(y1, y2).
        if (y1 - y2).abs() * 1e12 <= y1.abs().min(y2.abs()) {
            return;
        }
        if y2 < y1 {
            std::mem::swap(&mut x1, &mut x2);
            std::mem::swap(&mut y1, &mut y2);
        }
        if py >= y1 && py < y2 {
            let x = x1 + (x2 - x1) / (y2 - y1) * (py - y1);
            if x <= px {
                crossings += 1;
            }
        }
    };
    for pair in polygon.windows(2) {
        edge(pair[0], pair[1]);
    }
    let last = polygon[polygon.len() - 1];
    if last != first {
        edge(last, first);
    }
    crossings % 2 == 1
}

/// An angle wrapped into `[−π, π)` (the format doc's `signedAngle`; its exact boundary is not stated,
/// and a weight at exactly ±π is the same on both sides for the bend ranges AnimeEffects builds).
pub fn signed_angle(a: f32) -> f32 {
    let tau = 2.0 * PI;
    a - tau * ((a + PI) / tau).floor()
}

/// A bend range at a bone end (§4.5 `BendRange.weight`): `angle[0] ≥ 0` and `angle[1] ≤ 0`
/// make it valid; the default `(−1, 1)` is not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BendRange {
    /// The range's extents in radians: `angle[0]` (≥ 0) toward positive angles, `angle[1]`
    /// (≤ 0) toward negative ones.
    pub angle: [f32; 2],
}

impl BendRange {
    /// The editor's default, which is invalid (weight 1 everywhere).
    pub const DEFAULT: Self = Self { angle: [-1.0, 1.0] };

    /// Whether the range takes part: `angle[0] ≥ 0 && angle[1] ≤ 0`.
    pub fn is_valid(&self) -> bool {
        self.angle[0] >= 0.0 && self.angle[1] <= 0.0
    }

    /// The weight at the signed angle `a` (§4.5): 1 if invalid, else
    /// `max(0.001, max(posi, nega))` with
    /// `posi = 1 − (a ≥ 0 ? a : a + 2π)/angle[0]` if `angle[0] > 0` (else 0) and
    /// `nega = 1 − (a ≤ 0 ? a : a − 2π)/angle[1]` if `angle[1] < 0` (else 0).
    pub fn weight(&self, a: f32) -> f32 {
        if !self.is_valid() {
            return 1.0;
        }
        let tau = 2.0 * PI;
        let posi = if self.angle[0] > 0.0 {
            1.0 - (if a >= 0.0 { a } else { a + tau }) / self.angle[0]
        } else {
            0.0
        };
        let nega = if self.angle[1] < 0.0 {
            1.0 - (if a <= 0.0 { a } else { a - tau }) / self.angle[1]
        } else {
            0.0
        };
        posi.max(nega).max(0.001)
    }
}

impl Default for BendRange {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A radius component below this disables the falloff it belongs to (§4.5).
pub(crate) const MIN_RADIUS: f32 = 0.1;

/// The end-cap ellipse weight (§4.5): 0 unless `r.x, r.y ≥ 0.1`; else, with `d = p − c` split
/// into `v = u(u·d)` along `u` and `h = d − v` across, `k = h + v·(r.x/r.y)` and the weight is
/// `1 − |k|/r.x` if `|k| < r.x`, else 0.
pub fn ellipse_weight(c: Vec2, u: Vec2, r: Vec2, p: Vec2) -> f32 {
    if !(r.x >= MIN_RADIUS && r.y >= MIN_RADIUS) {
        return 0.0;
    }
    let d = p - c;
    let v = u * u.dot(d);
    let h = d - v;
    let k = h + v * (r.x / r.y);
    let len = k.length();
    if len < r.x { 1.0 - len / r.x } else { 0.0 }
}

/// The end of a bone shape's segment, `seg_start + seg_dir`.
pub(crate) fn seg_end(shape: &BoneShape) -> Vec2 {
    shape.seg_start + shape.seg_dir
}

/// The raw influence of a bone's stored shape on the point `p` (owner space), §4.5 step 3:
/// 0 unless valid, inside `bounding` ([`rect_contains`]) and inside `polygon`
/// ([`polygon_contains`]); otherwise `twist'·nearness` where
/// * `twist = rootBend.weight(signedAngle(angle(p − segStart) − vDirAngle))²` (if
///   `p ≠ segStart`) times `tailBend.weight(signedAngle(angle(p − segEnd) − (vDirAngle + π)))²`
///   (if `p ≠ segEnd`), with [`BendRange::weight`];
/// * `r = segDir·(p − segStart)/|segDir|²`; `nearness` is 1 unless: `r < 0` and
///   `radius0.x ≥ 0.1` → [`ellipse_weight`] about segStart with radius0; `0 ≤ r ≤ 1` and
///   `R = lerp(radius0, radius1, r)` has `R.x ≥ 0.1` →
///   `max(1 − |p − (segStart + r·segDir)|/R.x, 0)`; `r > 1` and `radius1.x ≥ 0.1` →
///   the ellipse about segEnd with radius1;
/// * `ratio = 0.3·nearness²`, `twist' = ratio + (1 − ratio)·twist`.
pub fn influence(shape: &BoneShape, p: Vec2) -> f32 {
    if !shape.valid || !rect_contains(&shape.bounding, p) || !polygon_contains(&shape.polygon, p) {
        return 0.0;
    }
    let start = shape.seg_start;
    let end = seg_end(shape);
    let [radius0, radius1] = shape.radius;
    let angle = |v: Vec2| v.y.atan2(v.x);
    let mut twist = 1.0;
    if p != start {
        let w = BendRange {
            angle: shape.root_bend,
        }
        .weight(signed_angle(angle(p - start) - shape.v_dir_angle));
        twist *= w * w;
    }
    if p != end {
        let w = BendRange {
            angle: shape.tail_bend,
        }
        .weight(signed_angle(angle(p - end) - (shape.v_dir_angle + PI)));
        twist *= w * w;
    }
    let r = shape.seg_dir.dot(p - start) / shape.seg_dir.length_squared();
    let mut nearness = 1.0;
    if r < 0.0 {
        if radius0.x >= MIN_RADIUS {
            nearness = ellipse_weight(start, shape.v_unit, radius0, p);
        }
    } else if r <= 1.0 {
        let radius = super::lerp_vec2(radius0, radius1, r);
        if radius.x >= MIN_RADIUS {
            let across = (p - (start + r * shape.seg_dir)).length();
            nearness = (1.0 - across / radius.x).max(0.0);
        }
    } else if r > 1.0 && radius1.x >= MIN_RADIUS {
        nearness = ellipse_weight(end, shape.v_unit, radius1, p);
    }
    let ratio = 0.3 * nearness * nearness;
    let twist = ratio + (1.0 - ratio) * twist;
    twist * nearness
}

/// Collects a vertex's raw influences (§4.5 step 2) and normalises them (step 4).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub(crate) struct InfluenceAccumulator {
    bones: [i32; MAX_INFLUENCES],
    weights: [f32; MAX_INFLUENCES],
    len: usize,
}

impl InfluenceAccumulator {
    /// No influences yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many influences are kept (at most 8).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Offers bone `bone`'s raw weight `w`: kept if `w ≥ FLT_EPSILON` (NaN is not); when 8 are
    /// kept already, it replaces the smallest (the first smallest in slot order) if larger.
    pub fn push(&mut self, bone: i32, w: f32) {
        if w.is_nan() || w < f32::EPSILON {
            return;
        }
        if self.len < MAX_INFLUENCES {
            self.bones[self.len] = bone;
            self.weights[self.len] = w;
            self.len += 1;
            return;
        }
        let mut smallest = 0;
        for k in 1..MAX_INFLUENCES {
            if self.weights[k] < self.weights[smallest] {
                smallest = k;
            }
        }
        if w > self.weights[smallest] {
            self.bones[smallest] = bone;
            self.weights[smallest] = w;
        }
    }

    /// The normalised influences (§4.5 step 4, `writeVertexAttribute`):
    /// * none → bone 0 with weight 1 ([`VertexInfluences::RIGID`]);
    /// * exactly one → that bone with weight **1**, whatever its raw strength;
    /// * two or more → each divided by the sum if the sum is `≥ 0.01`, else each increased by
    ///   `(1 − sum)/count`.
    ///
    /// Unused slots get bone 0 and weight 0.
    pub fn finish(&self) -> VertexInfluences {
        let mut out = VertexInfluences {
            bones: [0; MAX_INFLUENCES],
            weights: [0.0; MAX_INFLUENCES],
        };
        match self.len {
            0 => return VertexInfluences::RIGID,
            1 => {
                out.bones[0] = self.bones[0];
                out.weights[0] = 1.0;
            }
            n => {
                let sum: f32 = self.weights[..n].iter().sum();
                for k in 0..n {
                    out.bones[k] = self.bones[k];
                    out.weights[k] = if sum >= 0.01 {
                        self.weights[k] / sum
                    } else {
                        self.weights[k] + (1.0 - sum) / n as f32
                    };
                }
            }
        }
        out
    }
}

/// A vertex's normalised influences from bone shapes (§4.5 steps 2–4): each `(bone index,
/// shape)` in order offers [`influence`]`(shape, p)`. Pass only the bones that take part (those with
/// a parent joint and a non-zero range), with their DFS pre-order index, and `p` already mapped
/// into the owner's space by `cacheInner · T(originOffset)` from the rest (not FFD) position.
pub fn vertex_influences<'a>(
    bones: impl IntoIterator<Item = (i32, &'a BoneShape)>,
    p: Vec2,
) -> VertexInfluences {
    let mut acc = InfluenceAccumulator::new();
    for (bone, shape) in bones {
        acc.push(bone, influence(shape, p));
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, FRAC_PI_4};

    fn close(a: Vec2, b: Vec2) -> bool {
        (a - b).abs().max_element() < 1e-4
    }

    fn joint(parent: Option<usize>, local_pos: Vec2, local_angle: f32, rotate: f32) -> BoneJoint {
        BoneJoint {
            parent,
            local_pos,
            local_angle,
            rotate,
        }
    }

    #[test]
    fn bone_chain_world_transforms() {
        // Root at (10, 20), angle 0; child length 30, local angle 90°, rotate 0;
        // grandchild length 10, local angle 0, rotate −90°.
        let joints = [
            joint(None, Vec2::new(10.0, 20.0), 0.0, 5.0), // root: rotate ignored
            joint(Some(0), Vec2::new(30.0, 0.0), FRAC_PI_2, 0.0),
            joint(Some(1), Vec2::new(10.0, 0.0), 0.0, -FRAC_PI_2),
        ];
        let w = bone_world_transforms(&joints);
        // Root: pos (10, 20), angle 0 (its rotate 5 is not applied).
        assert_eq!(
            w[0],
            BoneWorld {
                pos: Vec2::new(10.0, 20.0),
                angle: 0.0
            }
        );
        // Child: angle 0 + 90° + 0 = 90°; pos (10,20) + rot((30,0), 90°) = (10,20) + (0,30) = (10, 50).
        assert!((w[1].angle - FRAC_PI_2).abs() < 1e-6);
        assert!(close(w[1].pos, Vec2::new(10.0, 50.0)));
        // Grandchild: angle 90° + 0 − 90° = 0; pos (10,50) + (10,0) = (20, 50).
        assert!(w[2].angle.abs() < 1e-6);
        assert!(close(w[2].pos, Vec2::new(20.0, 50.0)));
        // A parent index that does not precede the joint counts as a root.
        let odd = bone_world_transforms(&[joint(Some(3), Vec2::ONE, 0.5, 1.0)]);
        assert_eq!(
            odd[0],
            BoneWorld {
                pos: Vec2::ONE,
                angle: 0.5
            }
        );
    }

    #[test]
    fn dual_quaternion_of_a_90_degree_bone_rotation() {
        // Rest joint at (10, 0) angle 0, posed to angle 90° at the same place: Δ = 90°,
        // real = (cos 45°, 0, 0, sin 45°) = (0.7071068, 0, 0, 0.7071068);
        // t = pose.pos − R(90°)·rest.pos = (10,0) − (0,10) = (10, −10);
        // dual = ½(c·tx + s·ty, c·ty − s·tx) = ½(0.7071·10 − 0.7071·10, −0.7071·10 − 0.7071·10)
        //      = (0, −7.0710678).
        let rest = BoneWorld {
            pos: Vec2::new(10.0, 0.0),
            angle: 0.0,
        };
        let pose = BoneWorld {
            pos: Vec2::new(10.0, 0.0),
            angle: FRAC_PI_2,
        };
        let dq = DualQuat2::from_rest_and_pose(rest, pose);
        assert!((dq.real_w - FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((dq.real_z - FRAC_1_SQRT_2).abs() < 1e-6);
        assert!(dq.dual_x.abs() < 1e-5);
        assert!((dq.dual_y + 7.071_068).abs() < 1e-5);
        // Matrix: w² − z² = 0, 2wz = 1 → rotation (x,y) ↦ (−y, x); translation
        // (2w·t1 − 2t2·z, 2t1·z + 2w·t2) = (−2·(−7.0710678)·0.7071068, 2·0.7071068·(−7.0710678))
        // = (10, −10); over w² + z² = 1.
        let m = dq.to_affine();
        assert!(close(m.translation, Vec2::new(10.0, -10.0)));
        // The vertex (20, 0), 10 px along the bone, goes to R·(20,0) + (10,−10) = (0,20) + (10,−10)
        // = (10, 10): 10 px below the joint, i.e. rotated 90° clockwise on screen about (10, 0).
        let v = m.transform_point2(Vec2::new(20.0, 0.0));
        assert!(close(v, Vec2::new(10.0, 10.0)), "{v}");
        // The palette matrix T(pose)·R(Δ)·T(−rest) agrees.
        let v2 = bone_matrix(rest, pose).transform_point2(Vec2::new(20.0, 0.0));
        assert!(close(v2, Vec2::new(10.0, 10.0)), "{v2}");
    }

    #[test]
    fn skinning_blends_two_bones_and_divides_by_the_real_norm() {
        // Bone 0: identity. Bone 1: 90° about the origin (rest and pose at (0,0)): real
        // (0.7071068, 0.7071068), dual 0. Weights ½, ½: sum real = (0.8535534, 0.3535534),
        // |real|² = 0.7285534 + 0.125 = 0.8535534.
        // Matrix: (w² − z²)/|r|² = (0.7285534 − 0.125)/0.8535534 = 0.7071068,
        //         2wz/|r|² = 2·0.8535534·0.3535534/0.8535534 = 0.7071068 → a 45° rotation.
        // Vertex (10, 0) → (7.0710678, 7.0710678).
        let rest = BoneWorld::default();
        let pose = BoneWorld {
            pos: Vec2::ZERO,
            angle: FRAC_PI_2,
        };
        let palette = [PaletteEntry::IDENTITY, PaletteEntry::new(rest, pose)];
        let mut inf = VertexInfluences {
            bones: [0; 8],
            weights: [0.0; 8],
        };
        inf.bones[1] = 1;
        inf.weights[0] = 0.5;
        inf.weights[1] = 0.5;
        let v = skin_matrix(&palette, &inf).transform_point2(Vec2::new(10.0, 0.0));
        assert!(close(v, Vec2::new(7.071_068, 7.071_068)), "{v}");
    }

    #[test]
    fn skinning_sign_aligns_to_the_first_influence() {
        // Bone 1 turns by 350°: real = (cos 175°, sin 175°) = (−0.9961947, 0.0871557), whose dot
        // with bone 0's identity (1, 0) is < 0, so it is negated to (0.9961947, −0.0871557),
        // the same rotation (−10°). Half and half: real = (0.9980974, −0.0435779): a −5° turn.
        // Without alignment the sum would be (0.0019027, 0.0435779): a 175° turn.
        let rest = BoneWorld::default();
        let pose = BoneWorld {
            pos: Vec2::ZERO,
            angle: 350f32.to_radians(),
        };
        let palette = [PaletteEntry::IDENTITY, PaletteEntry::new(rest, pose)];
        let mut inf = VertexInfluences::RIGID;
        inf.bones[1] = 1;
        inf.weights = [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let v = skin_matrix(&palette, &inf).transform_point2(Vec2::new(10.0, 0.0));
        let (s, c) = (-5f32).to_radians().sin_cos();
        assert!(close(v, Vec2::new(10.0 * c, 10.0 * s)), "{v}");
    }

    #[test]
    fn out_of_range_slots_and_degenerate_blends_are_identity() {
        let inf = VertexInfluences {
            bones: [-1, 40, 0, 0, 0, 0, 0, 0],
            weights: [1.0; 8],
        };
        // All 8 slots are identity quaternions (index −1, 40 and 0 in an empty palette): sum
        // real (8, 0) → |r|² = 64; matrix 64/64 = identity.
        assert_eq!(skin_matrix(&[], &inf), Affine2::IDENTITY);
        let zero = VertexInfluences {
            bones: [0; 8],
            weights: [0.0; 8],
        };
        assert_eq!(skin_matrix(&[], &zero), Affine2::IDENTITY);
        let nan = VertexInfluences {
            bones: [0; 8],
            weights: [f32::NAN; 8],
        };
        assert_eq!(skin_matrix(&[], &nan), Affine2::IDENTITY);
        // A finite real part with an infinite dual part (translation) is degenerate too.
        let inf = DualQuat2 {
            dual_x: f32::INFINITY,
            ..DualQuat2::IDENTITY
        };
        assert_eq!(inf.to_affine(), Affine2::IDENTITY);
    }

    #[test]
    fn palette_without_a_pose_is_identity_and_capped_at_32() {
        let rest = vec![
            BoneWorld {
                pos: Vec2::ONE,
                angle: 1.0
            };
            40
        ];
        let p = build_palette(&rest, None);
        assert_eq!(p.len(), 32);
        assert!(p.iter().all(|e| *e == PaletteEntry::IDENTITY));
        let pose = vec![
            BoneWorld {
                pos: Vec2::ONE,
                angle: 1.5
            };
            2
        ];
        let p = build_palette(&rest[..3], Some(&pose));
        assert_ne!(p[0], PaletteEntry::IDENTITY);
        assert_eq!(p[2], PaletteEntry::IDENTITY);
        // A bone posed exactly at rest has Δ = 0, t = 0: the identity quaternion.
        let same = PaletteEntry::new(rest[0], rest[0]);
        assert_eq!(same.dual_quat.real_w, 1.0);
        assert_eq!(same.dual_quat.real_z, 0.0);
        assert!(same.dual_quat.dual_x.abs() < 1e-6 && same.dual_quat.dual_y.abs() < 1e-6);
    }

    #[test]
    fn order_of_deformation() {
        // FFD pos (1, 2), originOffset (−2, −2) → (−1, 0); cacheInner: translate (5, 0) → (4, 0);
        // skin: 90° about the origin → (0, 4); ownerWorld: translate (100, 100) → (100, 104).
        let skin = Affine2::from_angle(FRAC_PI_2);
        let p = place_skinned(
            Affine2::from_translation(Vec2::splat(100.0)),
            skin,
            Affine2::from_translation(Vec2::new(5.0, 0.0)),
            Vec2::splat(-2.0),
            Vec2::new(1.0, 2.0),
        );
        assert!(close(p, Vec2::new(100.0, 104.0)), "{p}");
        // Plain: world scale 2 · ((1,2) + (−2,−2)) = (−2, 0).
        let p = place_plain(
            Affine2::from_scale(Vec2::splat(2.0)),
            Vec2::splat(-2.0),
            Vec2::new(1.0, 2.0),
        );
        assert_eq!(p, Vec2::new(-2.0, 0.0));
    }

    #[test]
    fn bound_node_follows_its_bone() {
        // Owner outer: translate (0, 100). Bone 90° about (10, 0). Binding inner: translate (20, 0).
        // Node point (0,0) → (20, 0) → bone: (10,0) + R90·(10,0) = (10, 10) → (10, 110).
        let bone = PaletteEntry::new(
            BoneWorld {
                pos: Vec2::new(10.0, 0.0),
                angle: 0.0,
            },
            BoneWorld {
                pos: Vec2::new(10.0, 0.0),
                angle: FRAC_PI_2,
            },
        );
        let outer = bound_outer(
            Affine2::from_translation(Vec2::new(0.0, 100.0)),
            &bone,
            Affine2::from_translation(Vec2::new(20.0, 0.0)),
        );
        assert!(close(
            outer.transform_point2(Vec2::ZERO),
            Vec2::new(10.0, 110.0)
        ));
    }

    #[test]
    fn ffd_blend_is_an_absolute_lerp() {
        // lerp((0,0,0), (10,−4,0), 0.25) = (2.5, −1, 0); the vertex missing in k1 holds.
        let k0 = [Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)];
        let k1 = [Vec3::new(10.0, -4.0, 0.0)];
        let mut out = vec![Vec3::ONE; 5];
        blend_ffd(&k0, &k1, 0.25, &mut out);
        assert_eq!(
            out,
            vec![Vec3::new(2.5, -1.0, 0.0), Vec3::new(1.0, 1.0, 0.0)]
        );
    }

    #[test]
    fn influences_normalise_by_count() {
        // None → rigid on bone 0.
        assert_eq!(
            InfluenceAccumulator::new().finish(),
            VertexInfluences::RIGID
        );
        // One raw 0.3 → weight 1.
        let mut a = InfluenceAccumulator::new();
        a.push(4, 0.3);
        a.push(5, f32::EPSILON / 2.0); // below FLT_EPSILON: dropped
        a.push(6, f32::NAN); // dropped
        let v = a.finish();
        assert_eq!((v.bones[0], v.weights[0], a.len()), (4, 1.0, 1));
        // Two: 0.3, 0.1 → sum 0.4 ≥ 0.01 → 0.75, 0.25.
        a.push(7, 0.1);
        let v = a.finish();
        assert_eq!(&v.weights[..3], &[0.75, 0.25, 0.0]);
        assert_eq!(&v.bones[..2], &[4, 7]);
        // Two tiny: 0.002, 0.004 → sum 0.006 < 0.01 → each + (1 − 0.006)/2 = 0.497 →
        // 0.499, 0.501.
        let mut b = InfluenceAccumulator::new();
        b.push(1, 0.002);
        b.push(2, 0.004);
        let v = b.finish();
        assert!((v.weights[0] - 0.499).abs() < 1e-6 && (v.weights[1] - 0.501).abs() < 1e-6);
    }

    #[test]
    fn a_ninth_influence_replaces_the_smallest_if_larger() {
        let mut a = InfluenceAccumulator::new();
        for k in 0..8 {
            a.push(k, 0.1 + k as f32 * 0.1); // 0.1 … 0.8
        }
        a.push(20, 0.05); // smaller than the smallest (0.1): ignored
        a.push(21, 0.5); // replaces bone 0 (0.1) in slot 0
        let v = a.finish();
        assert_eq!(v.bones, [21, 1, 2, 3, 4, 5, 6, 7]);
        // Sum 0.5 + 0.2 + … + 0.8 = 0.5 + 3.5 = 4.0 → slot 0 weight 0.125.
        assert!((v.weights[0] - 0.125).abs() < 1e-6);
    }

    #[test]
    fn stored_influence_maps_are_read_by_vertex() {
        let i0 = [0, 1, 2, 3, 10, 11, 12, 13];
        let i1 = [4, 5, 6, 7, 14, 15, 16, 17];
        let w0 = [0.5; 8];
        let w1 = [0.0; 8];
        let v = VertexInfluences::from_stored(1, &i0, &i1, &w0, &w1).unwrap();
        assert_eq!(v.bones, [10, 11, 12, 13, 14, 15, 16, 17]);
        assert!(VertexInfluences::from_stored(2, &i0, &i1, &w0, &w1).is_none());
        assert!(VertexInfluences::from_stored(usize::MAX, &i0, &i1, &w0, &w1).is_none());
    }

    #[test]
    fn rect_and_polygon_containment() {
        let r = FRect {
            x: 0.0,
            y: 0.0,
            width: 10.0,
            height: 5.0,
        };
        assert!(rect_contains(&r, Vec2::new(10.0, 5.0))); // edges included
        assert!(!rect_contains(&r, Vec2::new(10.1, 1.0)));
        let flipped = FRect {
            x: 10.0,
            y: 5.0,
            width: -10.0,
            height: -5.0,
        };
        assert!(rect_contains(&flipped, Vec2::new(3.0, 3.0)));
        let empty = FRect {
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: 5.0,
        };
        assert!(!rect_contains(&empty, Vec2::ZERO));
        // Square (0,0)-(4,4): inside, outside; a point on the bottom edge y = 4 is outside
        // (half-open [0, 4) in y), on the top edge y = 0 inside.
        let sq = [
            Vec2::ZERO,
            Vec2::new(4.0, 0.0),
            Vec2::new(4.0, 4.0),
            Vec2::new(0.0, 4.0),
        ];
        assert!(polygon_contains(&sq, Vec2::new(2.0, 2.0)));
        assert!(!polygon_contains(&sq, Vec2::new(5.0, 2.0)));
        assert!(polygon_contains(&sq, Vec2::new(2.0, 0.0)));
        assert!(!polygon_contains(&sq, Vec2::new(2.0, 4.0)));
        assert!(!polygon_contains(&[], Vec2::ZERO));
        assert!(!polygon_contains(&sq, Vec2::NAN));
    }

    #[test]
    fn signed_angle_wraps() {
        assert!((signed_angle(3.0 * PI / 2.0) + FRAC_PI_2).abs() < 1e-6);
        assert!((signed_angle(-3.0 * PI / 2.0) - FRAC_PI_2).abs() < 1e-6);
        assert_eq!(signed_angle(0.25), 0.25);
    }

    #[test]
    fn bend_range_weights() {
        // Invalid default → 1.
        assert_eq!(BendRange::DEFAULT.weight(0.3), 1.0);
        // angle = [π/2, −π/4]: a = π/4 → posi = 1 − (π/4)/(π/2) = 0.5,
        // nega = 1 − (π/4 − 2π)/(−π/4) = 1 − 7 = −6 → 0.5.
        let b = BendRange {
            angle: [FRAC_PI_2, -FRAC_PI_4],
        };
        assert!((b.weight(FRAC_PI_4) - 0.5).abs() < 1e-6);
        // a = −π/8 → posi = 1 − (−π/8 + 2π)/(π/2) = 1 − 3.75 = −2.75,
        // nega = 1 − (−π/8)/(−π/4) = 0.5 → 0.5.
        assert!((b.weight(-PI / 8.0) - 0.5).abs() < 1e-6);
        // a = π (outside both): posi = 1 − 2 = −1, nega = 1 − (π − 2π)/(−π/4) = 1 − 4 = −3 → 0.001.
        assert_eq!(b.weight(PI), 0.001);
    }

    #[test]
    fn ellipse_weight_stretches_along_the_bone() {
        // Centre (0,0), u = (1,0), R = (4, 8): a point 4 along the bone: v = (4,0), h = 0,
        // k = (4·4/8, 0) = (2, 0), |k| = 2 < 4 → 1 − 2/4 = 0.5.
        assert_eq!(
            ellipse_weight(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(4.0, 8.0),
                Vec2::new(4.0, 0.0)
            ),
            0.5
        );
        // 3 across: k = (0, 3) → 1 − 3/4 = 0.25.
        assert_eq!(
            ellipse_weight(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(4.0, 8.0),
                Vec2::new(0.0, 3.0)
            ),
            0.25
        );
        // R.y below 0.1 → 0.
        assert_eq!(
            ellipse_weight(Vec2::ZERO, Vec2::X, Vec2::new(4.0, 0.05), Vec2::ZERO),
            0.0
        );
    }

    fn horizontal_bone() -> BoneShape {
        // A bone from (0,0) to (10,0), radius 4 across at both ends, no bend ranges, a generous
        // bounding box and polygon.
        let poly = vec![
            Vec2::new(-10.0, -10.0),
            Vec2::new(20.0, -10.0),
            Vec2::new(20.0, 10.0),
            Vec2::new(-10.0, 10.0),
        ];
        BoneShape {
            valid: true,
            seg_start: Vec2::ZERO,
            seg_dir: Vec2::new(10.0, 0.0),
            v_unit: Vec2::X,
            v_dir_angle: 0.0,
            length: 10.0,
            radius: [Vec2::new(4.0, 4.0); 2],
            root_bend: BendRange::DEFAULT.angle,
            tail_bend: BendRange::DEFAULT.angle,
            bounding: FRect {
                x: -10.0,
                y: -10.0,
                width: 30.0,
                height: 20.0,
            },
            polygon: poly,
        }
    }

    #[test]
    fn bone_shape_influence_by_hand() {
        let bone = horizontal_bone();
        // p = (5, 1): r = 50/100 = 0.5, R.x = 4, distance to (5,0) = 1 → nearness = 1 − 1/4 = 0.75.
        // Bend ranges invalid → twist = 1. ratio = 0.3·0.5625 = 0.16875,
        // twist' = 0.16875 + 0.83125·1 = 1 → influence = 0.75.
        assert!((influence(&bone, Vec2::new(5.0, 1.0)) - 0.75).abs() < 1e-6);
        // p = (−2, 0): r = −0.2 < 0 → ellipse about (0,0), R = (4,4): k = (−2, 0), 1 − 2/4 = 0.5.
        assert!((influence(&bone, Vec2::new(-2.0, 0.0)) - 0.5).abs() < 1e-6);
        // p = (5, 5): nearness = max(1 − 5/4, 0) = 0 → 0.
        assert_eq!(influence(&bone, Vec2::new(5.0, 5.0)), 0.0);
        // Outside the polygon/bounding box, or invalid → 0.
        assert_eq!(influence(&bone, Vec2::new(30.0, 0.0)), 0.0);
        let invalid = BoneShape {
            valid: false,
            ..bone.clone()
        };
        assert_eq!(influence(&invalid, Vec2::new(5.0, 1.0)), 0.0);
    }

    #[test]
    fn bone_shape_twist_from_bend_ranges() {
        // Root bend [π/2, −π/2]: p = (5, 5) relative to segStart (0,0) is at 45°; minus vDirAngle 0
        // → a = π/4, posi = 1 − (π/4)/(π/2) = 0.5, nega = 1 − (π/4 − 2π)/(−π/2) = 1 − 3.5 < 0
        // → weight 0.5, twist = 0.25. Radius 10: r = 0.5, across = 5 → nearness = 1 − 5/10 = 0.5.
        // ratio = 0.3·0.25 = 0.075, twist' = 0.075 + 0.925·0.25 = 0.30625 → 0.30625·0.5 = 0.153125.
        let bone = BoneShape {
            radius: [Vec2::splat(10.0); 2],
            root_bend: [FRAC_PI_2, -FRAC_PI_2],
            ..horizontal_bone()
        };
        assert!((influence(&bone, Vec2::new(5.0, 5.0)) - 0.153_125).abs() < 1e-6);
    }

    #[test]
    fn vertex_influences_from_shapes() {
        // Bone 1 at 0.75 (see above), bone 2 a copy moved away (0): kept alone → weight 1.
        let near = horizontal_bone();
        let far = BoneShape {
            seg_start: Vec2::new(0.0, 9.0),
            ..horizontal_bone()
        };
        let v = vertex_influences([(1, &near), (2, &far)], Vec2::new(5.0, 1.0));
        // far: r = 0.5, across = 8 → max(1 − 8/4, 0) = 0 → dropped.
        assert_eq!((v.bones[0], v.weights[0], v.weights[1]), (1, 1.0, 0.0));
    }
}
