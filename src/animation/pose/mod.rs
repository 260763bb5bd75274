//! A data-oriented pose pipeline: many characters sampled, blended and put in model space per
//! frame with little work per joint and no allocation.
//!
//! The pieces are plain data and three stateless jobs over borrowed buffers, so that a caller
//! can spread characters over threads as it likes:
//! * [`PoseSkeleton`]: a flat hierarchy (parents before children) and its rest pose;
//! * [`PoseClip`]: a [`Clip`] laid out for sampling one skeleton's joints;
//! * [`PoseCursor`]: one playing instance's sampling cache (its segment on a timeline);
//! * [`LocalPose`]: the local transforms of a skeleton's joints;
//! * [`sample`], [`blend`] and [`local_to_model`], the jobs.
//!
//! # Layout
//!
//! Joints are processed in SoA lanes of four: a [`LocalPose`] stores, for each group of four
//! joints, the four x components of their rotations in one `Vec4`, then the four y, and so on
//! (the last group is padded with identity joints). The interpolation and blending math runs on
//! whole lanes with glam's SIMD `Vec4`.
//!
//! A [`PoseClip`] has, for every joint of the skeleton, a rotation, a translation and a scale
//! channel: the clip's keys where its track has that channel, else a single key holding the
//! rest value (joints the clip does not drive hold their rest pose). Lane groups where no joint
//! has two keys of a kind of channel are constant; the others are animated, and laid out in
//! one of two ways ([`KeyLayout`]).
//!
//! **A shared timeline**, for clips whose channels (nearly) share their key times, as clips
//! exported at a fixed frame rate do, and key-reduced ones (each channel a subset of the
//! frames). The timeline is the union of the animated channels' key times (a time repeated as
//! often as one channel repeats it, for steps); every animated lane group has its four lanes'
//! values at every time of it, key-major, and per segment its four lanes' slerp constants (θ,
//! θ / sin θ). A lane with no key at a time of the timeline holds there the value its channel
//! is sampled to: slerp and lerp move at a constant rate, so a segment cut in two at a time in
//! between traces the same curve (the tests find the same samples within 6e-7 rad). Sampling
//! finds the segment once per character (the one sampled last or the next, else a binary
//! search), one `u` serves every lane, and a playing instance needs no cache beyond that
//! segment's index: the keys come from the clip, which all the instances share. [`KeyLayout::Auto`]
//! takes the timeline while it holds at most eight lane keys per key of the clip.
//!
//! **Streams**, for clips whose channels' keys fall at unrelated times. Besides the
//! per-channel arrays (used only to seek), each kind of channel has a **stream**: every key of every joint,
//! sorted by the time forward playback first needs it (ozz-animation's layout). Key `k > 0` of
//! a channel is needed once the play time reaches key `k − 1` (the segment from `k − 1` to `k`
//! begins); a last entry per channel, needed at its last key, turns the channel into a hold.
//! Each stream entry carries what the cache needs already decoded: the value, the segment's
//! start time and `1 / duration`, and for rotations the segment's angle and `θ / sin θ`.
//!
//! # The cache
//!
//! On a clip laid out as streams, a [`PoseCursor`] holds, per joint and channel, the two keys bracketing the last sampled time
//! (values, start time, `1 / duration`, slerp constants), in the same SoA lanes, and its
//! position in each stream. Sampling at a later time first consumes the stream entries needed by
//! then — usually none, and otherwise only the few keys whose time has just been passed, read in
//! order from one array — then interpolates every lane from the cache alone. A time earlier than
//! the last one (a loop wrap, a seek back) or far ahead re-seeks: a binary search in each channel
//! and one in each stream. Both paths give the same cache, so a loop wrap is exact.
//!
//! The keys a channel holds between follow [`Clip::sample`]: at or before the first key, the
//! first key; from the last key on, the last key; between, the segment `k` with
//! `times[k] <= t < times[k + 1]` (so keys sharing a time form a step).
//!
//! # Interpolation and its error
//!
//! Translations and scales are lerped as `a + (b − a)·u` with `u = (t − t₀)·(1 / duration)`.
//! Rotations are slerped exactly, not nlerped: with θ the angle between the two (sign-aligned,
//! so θ ≤ π/2) quaternions of a segment, known when the clip is built,
//!
//! ```text
//! slerp(a, b, u) = a·sin((1−u)θ)/sin θ + b·sin(uθ)/sin θ
//!                = a·(1−u)·S((1−u)θ)·(θ/sin θ) + b·u·S(uθ)·(θ/sin θ),   S(x) = sin(x)/x,
//! ```
//!
//! and `S` is evaluated as its Taylor polynomial to x¹⁰, whose error on [0, π/2] is below
//! (π/2)¹²/13! < 4e-8 (fewer terms for a timeline whose largest angle needs fewer). The second form has no division and no special case for θ = 0
//! (`S(0) = 1`, `θ / sin θ → 1`), so every lane runs the same instructions. The weights are
//! then within about 1e-7 of exact slerp's; the result is a unit quaternion to the same
//! precision and is not normalised again: measured against f64 slerp, at most 2.5e-7 rad over
//! angles up to π/2, and within 6e-7 rad of [`Clip::sample`] on the bundled SA clips and on
//! random clips with half turns between keys (`tests/pose.rs`).
//!
//! Why not nlerp: normalising `(1−u)·a + u·b` moves along the same arc but at the wrong speed.
//! Its angle from `a` is `atan2(u·sin θ, 1 − u + u·cos θ)` instead of `uθ`; expanding in θ, the
//! difference is `θ³·u(1−u)(1−2u)/6 + O(θ⁵)`, largest at `u = (3 − √3)/6`, so the error in the
//! *rotation* (twice the quaternion angle) is at most `(√3/54)·θ³ ≈ 0.032·θ³` — 1e-4 rad for
//! θ = 0.146 (keys 16.7° of rotation apart), 0.14 rad at θ = π/2 (numerically). Choosing nlerp
//! per segment would need a per-lane choice or correction; the polynomial slerp above costs
//! about what nlerp's normalisation costs and is exact for every segment.
//!
//! # What a pose buffer remembers
//!
//! A [`LocalPose`] remembers which clip's constant lane groups it holds (lane groups where no
//! joint has two keys of that channel kind are not cached, only written when a buffer last held
//! another clip), and whether all its scales are exactly 1 (then [`blend`] and
//! [`local_to_model`] skip the scales). [`LocalPose::set`] and every job keep both up to date.

use super::{BonePose, Clip};
use crate::animation::hierarchy::HierarchyFault;
use glam::{Affine3A, Mat4, Quat, Vec3, Vec3A, Vec4};
use std::sync::atomic::{AtomicU64, Ordering};

mod mix;
#[cfg(test)]
mod tests;

pub use mix::{MixLayer, TranslationRule, mix, mix_onto};

/// Joints per SoA lane group.
const LANES: usize = 4;

/// Four quaternions, component-wise: one cache line.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct Quat4 {
    x: Vec4,
    y: Vec4,
    z: Vec4,
    w: Vec4,
}

impl Quat4 {
    const ZERO: Self = Quat4 {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        w: Vec4::ZERO,
    };

    const IDENTITY: Self = Quat4 {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        w: Vec4::ONE,
    };

    #[inline(always)]
    fn get(&self, l: usize) -> Quat {
        // Read as arrays: an index into memory, where `Vec4`'s `Index` is a branch per lane.
        let lane = |v: &Vec4| AsRef::<[f32; 4]>::as_ref(v)[l];
        Quat::from_xyzw(lane(&self.x), lane(&self.y), lane(&self.z), lane(&self.w))
    }

    fn set(&mut self, l: usize, q: Quat) {
        self.x[l] = q.x;
        self.y[l] = q.y;
        self.z[l] = q.z;
        self.w[l] = q.w;
    }

    #[inline(always)]
    fn dot(&self, o: &Self) -> Vec4 {
        self.x * o.x + self.y * o.y + self.z * o.z + self.w * o.w
    }

    #[inline(always)]
    fn scaled(&self, s: Vec4) -> Self {
        Quat4 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
            w: self.w * s,
        }
    }

    #[inline(always)]
    fn add_scaled(&mut self, o: &Self, s: Vec4) {
        self.x += o.x * s;
        self.y += o.y * s;
        self.z += o.z * s;
        self.w += o.w * s;
    }

    /// Slerp from `a` to `b` at `u` per lane (`v = 1 − u`), with each lane's segment angle θ
    /// and θ / sin θ (see the module documentation), `S` to x^(2·TERMS).
    #[inline(always)]
    fn slerp<const TERMS: usize>(
        a: &Self,
        b: &Self,
        u: Vec4,
        v: Vec4,
        theta: Vec4,
        inv_sinc: Vec4,
    ) -> Self {
        let wa = v * sinc_to::<TERMS>(v * theta) * inv_sinc;
        let wb = u * sinc_to::<TERMS>(u * theta) * inv_sinc;
        let mut q = a.scaled(wa);
        q.add_scaled(b, wb);
        q
    }
}

/// Four 3-vectors, component-wise.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vec3x4 {
    x: Vec4,
    y: Vec4,
    z: Vec4,
}

impl Vec3x4 {
    const ZERO: Self = Vec3x4 {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
    };
    const ONE: Self = Vec3x4 {
        x: Vec4::ONE,
        y: Vec4::ONE,
        z: Vec4::ONE,
    };

    #[inline(always)]
    fn get(&self, l: usize) -> Vec3 {
        let lane = |v: &Vec4| AsRef::<[f32; 4]>::as_ref(v)[l];
        Vec3::new(lane(&self.x), lane(&self.y), lane(&self.z))
    }

    fn set(&mut self, l: usize, v: Vec3) {
        self.x[l] = v.x;
        self.y[l] = v.y;
        self.z[l] = v.z;
    }

    #[inline(always)]
    fn add_scaled(&mut self, o: &Self, s: Vec4) {
        self.x += o.x * s;
        self.y += o.y * s;
        self.z += o.z * s;
    }

    #[inline(always)]
    fn scaled(&self, s: Vec4) -> Self {
        Vec3x4 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    /// `a + (b − a)·u` per lane.
    #[inline(always)]
    fn lerp(a: &Self, b: &Self, u: Vec4) -> Self {
        Vec3x4 {
            x: a.x + (b.x - a.x) * u,
            y: a.y + (b.y - a.y) * u,
            z: a.z + (b.z - a.z) * u,
        }
    }
}

fn groups(joints: usize) -> usize {
    joints.div_ceil(LANES)
}

/// The local transforms (relative to the parent) of a skeleton's joints, stored in SoA lanes of
/// four joints (see the [module documentation](self)). What [`sample`] and [`blend`] write and
/// [`local_to_model`] reads; make one per buffer and reuse it every frame.
#[derive(Debug, Clone)]
pub struct LocalPose {
    joints: usize,
    /// The id of the [`PoseClip`] whose constant lane groups this pose holds (0: none), so
    /// that sampling the same clip into it again need not rewrite them.
    constants_of: u64,
    /// Whether every joint's scale is exactly 1 (so that blending and local→model can skip
    /// the scales).
    unit_scales: bool,
    rotations: Vec<Quat4>,
    translations: Vec<Vec3x4>,
    scales: Vec<Vec3x4>,
}

/// Reads joints of a [`LocalPose`] ([`LocalPose::reader`]): its lane groups held as slices,
/// so that a loop reading joints keeps them at hand instead of looking through the pose for
/// each.
#[derive(Debug, Clone, Copy)]
pub struct PoseReader<'a> {
    joints: usize,
    rotations: &'a [Quat4],
    translations: &'a [Vec3x4],
    scales: &'a [Vec3x4],
}

impl PoseReader<'_> {
    /// Joint `j`'s transform, `None` past the last joint.
    #[inline(always)]
    pub fn get(&self, j: usize) -> Option<BonePose> {
        if j >= self.joints {
            return None;
        }
        let (g, l) = (j / LANES, j % LANES);
        Some(BonePose {
            rotation: self.rotations.get(g)?.get(l),
            translation: self.translations.get(g)?.get(l),
            scale: self.scales.get(g)?.get(l),
        })
    }
}

impl PartialEq for LocalPose {
    fn eq(&self, other: &Self) -> bool {
        self.joints == other.joints
            && self.rotations == other.rotations
            && self.translations == other.translations
            && self.scales == other.scales
    }
}

impl Default for LocalPose {
    fn default() -> Self {
        LocalPose::new(0)
    }
}

impl LocalPose {
    /// A pose of `joints` joints, each the identity transform.
    pub fn new(joints: usize) -> Self {
        let g = groups(joints);
        LocalPose {
            joints,
            constants_of: 0,
            unit_scales: true,
            rotations: vec![Quat4::IDENTITY; g],
            translations: vec![Vec3x4::ZERO; g],
            scales: vec![Vec3x4::ONE; g],
        }
    }

    /// A pose holding `poses`, one per joint.
    pub fn from_bone_poses(poses: &[BonePose]) -> Self {
        let mut pose = LocalPose::new(poses.len());
        for (j, p) in poses.iter().enumerate() {
            pose.set(j, *p);
        }
        pose
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.joints
    }

    /// Whether the pose has no joints.
    pub fn is_empty(&self) -> bool {
        self.joints == 0
    }

    /// Joint `j`'s transform. Panics if `j >= self.len()`.
    #[inline(always)]
    pub fn get(&self, j: usize) -> BonePose {
        assert!(j < self.joints, "joint {j} of {}", self.joints);
        let (g, l) = (j / LANES, j % LANES);
        BonePose {
            rotation: self.rotations[g].get(l),
            translation: self.translations[g].get(l),
            scale: self.scales[g].get(l),
        }
    }

    /// A reader of the joints, for reading many of them in a loop.
    #[inline]
    pub fn reader(&self) -> PoseReader<'_> {
        let g = groups(self.joints);
        PoseReader {
            joints: self.joints,
            rotations: &self.rotations[..g],
            translations: &self.translations[..g],
            scales: &self.scales[..g],
        }
    }

    /// Sets joint `j`'s transform. Panics if `j >= self.len()`.
    pub fn set(&mut self, j: usize, pose: BonePose) {
        assert!(j < self.joints, "joint {j} of {}", self.joints);
        let (g, l) = (j / LANES, j % LANES);
        self.constants_of = 0;
        self.unit_scales &= pose.scale == Vec3::ONE;
        self.rotations[g].set(l, pose.rotation);
        self.translations[g].set(l, pose.translation);
        self.scales[g].set(l, pose.scale);
    }

    /// Writes the joints' transforms into `out`, one per joint (as many as both have): four
    /// joints at a time, each lane group transposed whole.
    pub fn write_bone_poses(&self, out: &mut [BonePose]) {
        let n = self.joints.min(out.len());
        for (g, chunk) in out[..n].chunks_mut(LANES).enumerate() {
            let (q, t, s) = (&self.rotations[g], &self.translations[g], &self.scales[g]);
            let q = Mat4::from_cols(q.x, q.y, q.z, q.w).transpose();
            let t = Mat4::from_cols(t.x, t.y, t.z, Vec4::ZERO).transpose();
            let s = Mat4::from_cols(s.x, s.y, s.z, Vec4::ZERO).transpose();
            for (l, o) in chunk.iter_mut().enumerate() {
                *o = BonePose {
                    rotation: Quat::from_vec4(q.col(l)),
                    translation: t.col(l).truncate(),
                    scale: s.col(l).truncate(),
                };
            }
        }
    }

    /// Makes the pose `joints` long, allocating only when it grows past what it held before.
    /// Joints added are identity transforms.
    fn resize(&mut self, joints: usize) {
        if self.joints != joints {
            self.constants_of = 0;
            // The lanes past the joints in the last group kept (left by a longer pose) are
            // joints added too.
            if let Some(last) = (joints > self.joints)
                .then_some(self.joints / LANES)
                .filter(|&g| g < self.rotations.len().min(groups(joints)))
            {
                for l in self.joints % LANES..LANES {
                    self.rotations[last].set(l, Quat::IDENTITY);
                    self.translations[last].set(l, Vec3::ZERO);
                    self.scales[last].set(l, Vec3::ONE);
                }
            }
            let g = groups(joints);
            self.rotations.resize(g, Quat4::IDENTITY);
            self.translations.resize(g, Vec3x4::ZERO);
            self.scales.resize(g, Vec3x4::ONE);
            self.joints = joints;
        }
    }
}

/// Why a [`PoseSkeleton`] cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoseSkeletonError {
    /// The parents and the rest pose have different lengths.
    #[error("{parents} parents for {rest} rest transforms")]
    LengthMismatch {
        /// Parents given.
        parents: usize,
        /// Rest transforms given.
        rest: usize,
    },
    /// A joint's parent does not come before it.
    #[error("joint {joint}'s parent {parent} does not come before it")]
    ParentNotBefore {
        /// The joint.
        joint: usize,
        /// Its parent index.
        parent: usize,
    },
    /// More joints than `i16` parent indices can address.
    #[error("{0} joints: at most 32767")]
    TooManyJoints(usize),
    /// The offsets ([`PoseSkeleton::with_offsets`]) are not one per joint.
    #[error("{offsets} offsets for {parents} joints")]
    OffsetsLength {
        /// Parents given.
        parents: usize,
        /// Offsets given.
        offsets: usize,
    },
    /// A joint's parent is itself or past the last joint.
    #[error("joint {joint}'s parent {parent} is not another joint of the {joints}")]
    ParentOutOfRange {
        /// The joint.
        joint: usize,
        /// Its parent index.
        parent: usize,
        /// Joints in all.
        joints: usize,
    },
    /// A joint is its own ancestor.
    #[error("joint {joint} hangs below itself")]
    Cycle {
        /// A joint of the cycle.
        joint: usize,
    },
}

/// A flat joint hierarchy: each joint's parent index (−1 for a root), parents before their
/// children, and the rest pose. [`Skeleton::pose_skeleton`](crate::skeleton::Skeleton::pose_skeleton)
/// makes one from a GTA skeleton.
///
/// A skeleton made by [`PoseSkeleton::with_offsets`] may also hang joints under later ones, and
/// put a fixed transform between a joint and its parent (a model's frames that are not joints).
#[derive(Debug, Clone, PartialEq)]
pub struct PoseSkeleton {
    parents: Vec<i16>,
    rest: LocalPose,
    /// The joints [`local_to_model`] composes again after its pass in joint order, parents
    /// first: those with an offset or a later parent, and every joint below them. Empty for a
    /// skeleton made by [`PoseSkeleton::new`].
    late: Vec<LateJoint>,
}

/// A joint composed after [`local_to_model`]'s pass in joint order: its model transform is its
/// parent's (the identity for a root) · `offset` · its local transform.
#[derive(Debug, Clone, PartialEq)]
struct LateJoint {
    joint: usize,
    parent: Option<usize>,
    offset: Affine3A,
}

impl PoseSkeleton {
    /// A skeleton from parent indices (`None` for roots) and a rest transform per joint.
    pub fn new(parents: &[Option<usize>], rest: &[BonePose]) -> Result<Self, PoseSkeletonError> {
        if parents.len() != rest.len() {
            return Err(PoseSkeletonError::LengthMismatch {
                parents: parents.len(),
                rest: rest.len(),
            });
        }
        if parents.len() > i16::MAX as usize {
            return Err(PoseSkeletonError::TooManyJoints(parents.len()));
        }
        let parents = parents
            .iter()
            .enumerate()
            .map(|(joint, p)| match *p {
                None => Ok(-1),
                Some(parent) if parent < joint => Ok(parent as i16),
                Some(parent) => Err(PoseSkeletonError::ParentNotBefore { joint, parent }),
            })
            .collect::<Result<Vec<i16>, _>>()?;
        Ok(PoseSkeleton {
            parents,
            rest: LocalPose::from_bone_poses(rest),
            late: Vec::new(),
        })
    }

    /// A skeleton whose joints may hang under any other joint (no cycle), each with an
    /// optional fixed transform between it and its parent (above it, for a root): a joint's
    /// model transform is its parent's · its offset · its local transform. This is how a
    /// model's own hierarchy is posed when it differs from the skeleton's order: a frame that is
    /// not a joint between two joints (its transform the offset, which a clip's keys for the
    /// joint below do not replace), or a joint hung under one listed after it.
    ///
    /// The joints in joint order with parents before them and no offset are posed as fast as
    /// [`PoseSkeleton::new`]'s; the others, and every joint below them, are composed once more
    /// after them.
    pub fn with_offsets(
        parents: &[Option<usize>],
        rest: &[BonePose],
        offsets: &[Option<Affine3A>],
    ) -> Result<Self, PoseSkeletonError> {
        let n = parents.len();
        if n != rest.len() {
            return Err(PoseSkeletonError::LengthMismatch {
                parents: n,
                rest: rest.len(),
            });
        }
        if offsets.len() != n {
            return Err(PoseSkeletonError::OffsetsLength {
                parents: n,
                offsets: offsets.len(),
            });
        }
        if n > i16::MAX as usize {
            return Err(PoseSkeletonError::TooManyJoints(n));
        }
        for (joint, p) in parents.iter().enumerate() {
            if let Some(parent) = *p
                && (parent >= n || parent == joint)
            {
                return Err(PoseSkeletonError::ParentOutOfRange {
                    joint,
                    parent,
                    joints: n,
                });
            }
        }
        // Parents first (every parent is in range and another joint, checked above).
        let order =
            crate::animation::hierarchy::parents_first(parents).map_err(|fault| match fault {
                HierarchyFault::Cycle { node } => PoseSkeletonError::Cycle { joint: node },
                HierarchyFault::ParentOutOfRange { node, parent } => {
                    PoseSkeletonError::ParentOutOfRange {
                        joint: node,
                        parent,
                        joints: n,
                    }
                }
            })?;
        let mut is_late = vec![false; n];
        let mut late = Vec::new();
        for &j in &order {
            let own = offsets[j].is_some() || parents[j].is_some_and(|p| p > j);
            is_late[j] = own || parents[j].is_some_and(|p| is_late[p]);
            if is_late[j] {
                late.push(LateJoint {
                    joint: j,
                    parent: parents[j],
                    offset: offsets[j].unwrap_or(Affine3A::IDENTITY),
                });
            }
        }
        Ok(PoseSkeleton {
            // (In the pass in joint order, a joint under a later one reads that joint's last
            // transform; it is composed again after.)
            parents: parents.iter().map(|p| p.map_or(-1, |p| p as i16)).collect(),
            rest: LocalPose::from_bone_poses(rest),
            late,
        })
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether the skeleton has no joints.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Each joint's parent index, −1 for roots; parents come before their children, unless the
    /// skeleton was made by [`PoseSkeleton::with_offsets`].
    pub fn parents(&self) -> &[i16] {
        &self.parents
    }

    /// The rest pose.
    pub fn rest(&self) -> &LocalPose {
        &self.rest
    }

    /// Whether every joint comes after its parent with no offset between them, so that the
    /// skeleton poses in one pass in joint order ([`PoseSkeleton::with_offsets`]).
    pub fn in_joint_order(&self) -> bool {
        self.late.is_empty()
    }
}

/// One channel's keys in a [`PoseClip`]'s per-channel arrays (for seeks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Keys {
    start: u32,
    len: u32,
}

/// What a stream entry or a seek puts in a rotation lane of the cache: the new second key and
/// the constants of the segment that ends at it (or of a hold).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RotEntry {
    slot: u32,
    value: [f32; 4],
    t0: f32,
    inv_dt: f32,
    theta: f32,
    inv_sinc: f32,
}

/// The same for a translation or scale lane.
#[derive(Debug, Clone, Copy, PartialEq)]
struct VecEntry {
    slot: u32,
    value: [f32; 3],
    t0: f32,
    inv_dt: f32,
}

/// Keys of one kind of channel (rotation, translation or scale) for every joint: per channel
/// for seeks, and as one stream in the order forward playback needs them.
#[derive(Debug, Clone, PartialEq)]
struct Track<V: Key> {
    channels: Vec<Keys>,
    times: Vec<f32>,
    values: Vec<V>,
    /// Per key: the slerp constants (θ, θ / sin θ) of the segment that starts at it.
    arcs: Vec<(f32, f32)>,
    /// When each stream entry is needed, non-decreasing, ending with +∞.
    need: Vec<f32>,
    /// Entries' slots are `4 · cache group + lane`: only lane groups with a channel of two
    /// keys or more are animated and cached, the others are constant.
    entries: Vec<V::Entry>,
    /// The lane groups that are animated, in cache order.
    animated: Vec<u32>,
    /// Per lane group: its cache group if animated.
    cache_of_group: Vec<Option<u32>>,
}

/// A value a channel interpolates, and its stream entry.
trait Key: Copy + PartialEq + std::fmt::Debug {
    type Entry: Copy + PartialEq + std::fmt::Debug;
    fn entry(slot: u32, value: Self, t0: f32, inv_dt: f32, arc: (f32, f32)) -> Self::Entry;
    /// The value a fraction `s` of the way from `a` to `b`, as sampling interpolates (slerp,
    /// lerp), worked out in f64.
    fn between(a: Self, b: Self, s: f64) -> Self;
}

impl Key for Quat {
    type Entry = RotEntry;
    fn entry(slot: u32, q: Quat, t0: f32, inv_dt: f32, arc: (f32, f32)) -> RotEntry {
        RotEntry {
            slot,
            value: q.to_array(),
            t0,
            inv_dt,
            theta: arc.0,
            inv_sinc: arc.1,
        }
    }

    fn between(a: Quat, b: Quat, s: f64) -> Quat {
        let (a, b) = (a.as_dquat(), b.as_dquat());
        let theta = quat_angle(a, b);
        let q = if theta < 1e-9 {
            a * (1.0 - s) + b * s
        } else {
            let sin = theta.sin();
            a * (((1.0 - s) * theta).sin() / sin) + b * ((s * theta).sin() / sin)
        };
        q.as_quat()
    }
}

/// The angle between two unit quaternions taken as 4-vectors (half the rotation between them),
/// accurate at every angle: `2·atan2(|a − b|, |a + b|)`.
fn quat_angle(a: glam::DQuat, b: glam::DQuat) -> f64 {
    let (a, b) = (glam::DVec4::from(a), glam::DVec4::from(b));
    2.0 * (a - b).length().atan2((a + b).length())
}

/// The slerp constants (θ, θ / sin θ) from `a` to `b`.
fn arc_between(a: Quat, b: Quat) -> (f32, f32) {
    let theta = quat_angle(a.as_dquat(), b.as_dquat());
    let inv_sinc = if theta > 1e-9 {
        theta / theta.sin()
    } else {
        1.0
    };
    (theta as f32, inv_sinc as f32)
}

impl Key for Vec3 {
    type Entry = VecEntry;
    fn entry(slot: u32, v: Vec3, t0: f32, inv_dt: f32, _: (f32, f32)) -> VecEntry {
        VecEntry {
            slot,
            value: v.to_array(),
            t0,
            inv_dt,
        }
    }

    fn between(a: Vec3, b: Vec3, s: f64) -> Vec3 {
        (a.as_dvec3() * (1.0 - s) + b.as_dvec3() * s).as_vec3()
    }
}

/// (θ, θ / sin θ) of a hold (no motion).
const HOLD_ARC: (f32, f32) = (0.0, 1.0);

fn inv_duration(t0: f32, t1: f32) -> f32 {
    let dt = t1 - t0;
    if dt > 0.0 { 1.0 / dt } else { 0.0 }
}

impl<V: Key> Track<V> {
    fn new() -> Self {
        Track {
            channels: Vec::new(),
            times: Vec::new(),
            values: Vec::new(),
            arcs: Vec::new(),
            need: Vec::new(),
            entries: Vec::new(),
            animated: Vec::new(),
            cache_of_group: Vec::new(),
        }
    }

    /// Adds the next joint's channel (`times` non-empty, non-decreasing).
    fn push(&mut self, times: &[f32], values: &[V], arcs: impl Iterator<Item = (f32, f32)>) {
        self.channels.push(Keys {
            start: self.times.len() as u32,
            len: times.len() as u32,
        });
        self.times.extend_from_slice(times);
        self.values.extend_from_slice(values);
        let n = times.len();
        self.arcs.extend(arcs.take(n));
        // Pad so that every key has an arc entry (the last one is never read).
        while self.arcs.len() < self.times.len() {
            self.arcs.push(HOLD_ARC);
        }
    }

    /// Finds the animated lane groups: those with a channel of two keys or more.
    fn find_animated(&mut self) {
        let joints = self.channels.len();
        self.cache_of_group = vec![None; groups(joints)];
        for (g, cache) in self.cache_of_group.iter_mut().enumerate() {
            let lanes = g * LANES..((g + 1) * LANES).min(joints);
            if self.channels[lanes].iter().any(|c| c.len >= 2) {
                *cache = Some(self.animated.len() as u32);
                self.animated.push(g as u32);
            }
        }
    }

    /// The keys of joint `j`'s channel: times and values.
    fn keys(&self, j: usize) -> (&[f32], &[V]) {
        let c = self.channels[j];
        let (s, n) = (c.start as usize, c.len as usize);
        (&self.times[s..s + n], &self.values[s..s + n])
    }

    /// The channels of the animated lane groups (`None` for a padding lane past the last
    /// joint).
    fn animated_channels(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        let joints = self.channels.len();
        self.animated.iter().flat_map(move |&g| {
            (0..LANES).map(move |l| Some(g as usize * LANES + l).filter(|&j| j < joints))
        })
    }

    /// Builds the stream from the channels ([`Track::find_animated`] first).
    fn build_stream(&mut self) {
        let mut entries: Vec<(f32, V::Entry)> = Vec::with_capacity(self.times.len());
        for (slot, c) in self.channels.iter().enumerate() {
            let (s, n) = (c.start as usize, c.len as usize);
            if n < 2 {
                continue;
            }
            let times = &self.times[s..s + n];
            let values = &self.values[s..s + n];
            let Some(cache) = self.cache_of_group[slot / LANES] else {
                continue;
            };
            let slot = cache as usize * LANES + slot % LANES;
            // Key 1 is needed once t > times[0], key k ≥ 2 once t ≥ times[k − 1]; the running
            // maximum keeps a channel's entries in key order when its first keys share a time.
            let mut need = times[0].next_up();
            for k in 1..n {
                need = need.max(times[k - 1]);
                let e = V::entry(
                    slot as u32,
                    values[k],
                    times[k - 1],
                    inv_duration(times[k - 1], times[k]),
                    self.arcs[s + k - 1],
                );
                entries.push((need, e));
            }
            need = need.max(times[n - 1]);
            entries.push((
                need,
                V::entry(slot as u32, values[n - 1], 0.0, 0.0, HOLD_ARC),
            ));
        }
        // Stable: a channel's entries keep their order among equal need times.
        entries.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.need = entries.iter().map(|e| e.0).collect();
        self.need.push(f32::INFINITY);
        self.entries = entries.into_iter().map(|e| e.1).collect();
    }

    /// The cache contents of joint `joint`'s channel at time `t`: the first key and the entry
    /// for the second (see the module documentation), with the cache slot.
    fn seek(&self, joint: usize, slot: usize, t: f32) -> (V, V::Entry) {
        let (times, values) = self.keys(joint);
        let (s, n) = (self.channels[joint].start as usize, times.len());
        // How many of the channel's stream entries are needed by `t`.
        let consumed = if t > times[0] {
            times.partition_point(|&x| x <= t)
        } else {
            0
        };
        let slot = slot as u32;
        if consumed == 0 || consumed >= n {
            let v = values[consumed.min(n - 1)];
            (v, V::entry(slot, v, 0.0, 0.0, HOLD_ARC))
        } else {
            let k = consumed - 1;
            (
                values[k],
                V::entry(
                    slot,
                    values[k + 1],
                    times[k],
                    inv_duration(times[k], times[k + 1]),
                    self.arcs[s + k],
                ),
            )
        }
    }
}

/// Where a [`PoseClip`] keeps its keys for sampling (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyLayout {
    /// A shared timeline when the channels' key times (nearly) coincide, as in clips exported
    /// at a fixed rate or key-reduced from one: at most eight lane keys on the timeline per key
    /// of the clip (then it takes no more memory than about three times the streams, and no
    /// cache per instance). Streams otherwise.
    #[default]
    Auto,
    /// A shared timeline whenever the clip can have one, however many keys it takes.
    Timeline,
    /// Per-channel key streams, read into a per-instance cache of decoded keys.
    Streams,
}

/// The slerp constants of four lanes' segments: θ and θ / sin θ.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(32))]
struct Arc4 {
    theta: Vec4,
    inv_sinc: Vec4,
}

/// Every animated lane group of a [`PoseClip`] on one shared timeline: the union of its
/// channels' key times (a time repeated as often as some channel repeats it, for steps), and
/// each lane's value at every one of them (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
struct Timeline {
    times: Vec<f32>,
    /// Per segment (key `k` to `k + 1`): 1 / its duration (0 for a step, and for the last key).
    inv_dt: Vec<f32>,
    /// Key-major: key `k` of the `i`-th animated rotation group at `k · groups + i`.
    rotations: Vec<Quat4>,
    /// Per segment, as `rotations`.
    arcs: Vec<Arc4>,
    translations: Vec<Vec3x4>,
    scales: Vec<Vec3x4>,
    /// How many terms of `S`'s polynomial the clip's largest segment angle needs.
    terms: SincTerms,
}

/// The terms of `S(x) = sin(x)/x`'s Taylor polynomial that keep its error below 4e-8 for every
/// argument up to a segment's angle θ (the arguments are `uθ` and `(1 − u)θ`). An alternating
/// series with falling terms errs by less than its first omitted term:
/// `x⁶/7!`, `x⁸/9!`, `x¹⁰/11!`, `x¹²/13!` after the terms to x⁴, x⁶, x⁸, x¹⁰, which stay below
/// 4e-8 up to x = 0.242, 0.589, 1.048 and 1.584 > π/2 respectively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SincTerms {
    ToX4,
    ToX6,
    ToX8,
    ToX10,
}

impl SincTerms {
    fn for_angle(theta: f32) -> Self {
        if theta <= 0.24 {
            SincTerms::ToX4
        } else if theta <= 0.58 {
            SincTerms::ToX6
        } else if theta <= 1.04 {
            SincTerms::ToX8
        } else {
            SincTerms::ToX10
        }
    }
}

/// `S(x) = sin(x)/x` by its Taylor polynomial to x^(2·TERMS) (see [`SincTerms`]).
#[inline(always)]
fn sinc_to<const TERMS: usize>(x: Vec4) -> Vec4 {
    const C: [f32; 5] = [
        -1.0 / 6.0,
        1.0 / 120.0,
        -1.0 / 5040.0,
        1.0 / 362_880.0,
        -1.0 / 39_916_800.0,
    ];
    let x2 = x * x;
    let mut p = Vec4::splat(C[TERMS - 1]);
    for c in C[..TERMS - 1].iter().rev() {
        p = Vec4::splat(*c) + x2 * p;
    }
    Vec4::ONE + x2 * p
}

/// One channel's value at every time of `grid` (non-decreasing): its key at a time it has a key
/// (the `o`-th of its keys there at the `o`-th repeat of the time, its last there past them);
/// before its first key its first, after its last its last; between two keys, the value
/// sampling interpolates there. Sampling the grid's segments then traces the channel exactly:
/// slerp and lerp move at a constant rate, so a segment cut at a time in between is the same
/// curve.
fn on_grid<V: Key>(times: &[f32], values: &[V], grid: &[f32]) -> Vec<V> {
    let n = times.len();
    let mut out = Vec::with_capacity(grid.len());
    let mut repeat = 0;
    for (m, &g) in grid.iter().enumerate() {
        repeat = if m > 0 && grid[m - 1] == g {
            repeat + 1
        } else {
            0
        };
        let lo = times.partition_point(|&x| x < g);
        let hi = times.partition_point(|&x| x <= g);
        out.push(if hi > lo {
            values[(lo + repeat).min(hi - 1)]
        } else if lo == 0 {
            values[0]
        } else if lo == n {
            values[n - 1]
        } else {
            let (t0, t1) = (times[lo - 1] as f64, times[lo] as f64);
            V::between(values[lo - 1], values[lo], (g as f64 - t0) / (t1 - t0))
        });
    }
    out
}

impl Timeline {
    /// The timeline of the animated lane groups of the three tracks ([`Track::find_animated`]
    /// done), or `None` when nothing is animated, a channel steps at its first key after the
    /// timeline begins (sampling at that very time gives the key before the step, which a
    /// timeline cannot show), or, `bounded`, it would hold more than eight lane keys per key.
    fn new(
        rotations: &Track<Quat>,
        translations: &Track<Vec3>,
        scales: &Track<Vec3>,
        bounded: bool,
    ) -> Option<Self> {
        let mut keys = 0usize;
        let mut runs: Vec<(f32, usize)> = Vec::new();
        let mut firsts: Vec<f32> = Vec::new();
        let mut add = |times: &[f32]| {
            if times.len() < 2 {
                return;
            }
            keys += times.len();
            if times[0] == times[1] {
                firsts.push(times[0]);
            }
            for run in times.chunk_by(|a, b| a == b) {
                runs.push((run[0], run.len()));
            }
        };
        for j in rotations.animated_channels().flatten() {
            add(rotations.keys(j).0);
        }
        for track in [translations, scales] {
            for j in track.animated_channels().flatten() {
                add(track.keys(j).0);
            }
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut times: Vec<f32> = Vec::new();
        for run in runs.chunk_by(|a, b| a.0 == b.0) {
            let repeats = run.iter().map(|r| r.1).max().unwrap_or(0);
            times.extend(std::iter::repeat_n(run[0].0, repeats));
        }
        if times.len() < 2 || firsts.iter().any(|&f| f > times[0]) {
            return None;
        }
        let lane_groups = rotations.animated.len() + translations.animated.len();
        let lane_groups = lane_groups + scales.animated.len();
        if bounded && times.len() * LANES * lane_groups > 8 * keys {
            return None;
        }
        let n = times.len();
        let inv_dt = (0..n)
            .map(|k| {
                if k + 1 < n {
                    inv_duration(times[k], times[k + 1])
                } else {
                    0.0
                }
            })
            .collect();
        let groups = rotations.animated.len();
        let mut quats = vec![Quat4::IDENTITY; n * groups];
        let hold = Arc4 {
            theta: Vec4::ZERO,
            inv_sinc: Vec4::ONE,
        };
        let mut arcs = vec![hold; n * groups];
        for (lane, j) in rotations.animated_channels().enumerate() {
            let Some(j) = j else { continue };
            let (i, l) = (lane / LANES, lane % LANES);
            let (t, v) = rotations.keys(j);
            let q = on_grid(t, v, &times);
            for k in 0..n {
                quats[k * groups + i].set(l, q[k]);
                if k + 1 < n {
                    let (theta, inv_sinc) = arc_between(q[k], q[k + 1]);
                    arcs[k * groups + i].theta[l] = theta;
                    arcs[k * groups + i].inv_sinc[l] = inv_sinc;
                }
            }
        }
        let vectors = |track: &Track<Vec3>, pad: Vec3x4| {
            let groups = track.animated.len();
            let mut out = vec![pad; n * groups];
            for (lane, j) in track.animated_channels().enumerate() {
                let Some(j) = j else { continue };
                let (t, v) = track.keys(j);
                for (k, v) in on_grid(t, v, &times).into_iter().enumerate() {
                    out[k * groups + lane / LANES].set(lane % LANES, v);
                }
            }
            out
        };
        let largest = arcs
            .iter()
            .map(|a| a.theta.max_element())
            .fold(0.0f32, f32::max);
        Some(Timeline {
            terms: SincTerms::for_angle(largest),
            translations: vectors(translations, Vec3x4::ZERO),
            scales: vectors(scales, Vec3x4::ONE),
            rotations: quats,
            arcs,
            inv_dt,
            times,
        })
    }

    /// The segment to sample at `t` (not NaN) and how far along it: `k` with
    /// `times[k] <= t < times[k + 1]`, from `hint` when `t` is in its segment or the next;
    /// at or before the first time the first key, from the last time on the last.
    #[inline]
    fn locate(&self, t: f32, hint: &mut usize) -> (usize, f32) {
        let times = &self.times;
        let n = times.len();
        if t <= times[0] {
            *hint = 0;
            return (0, 0.0);
        }
        if t >= times[n - 1] {
            *hint = n - 2;
            return (n - 2, 1.0);
        }
        let mut k = (*hint).min(n - 2);
        let inside = |k: usize| times[k] <= t && t < times[k + 1];
        if !inside(k) {
            k = if k + 2 < n && inside(k + 1) {
                k + 1
            } else {
                times.partition_point(|&x| x <= t) - 1
            };
        }
        *hint = k;
        (k, ((t - times[k]) * self.inv_dt[k]).clamp(0.0, 1.0))
    }

    /// Interpolates every animated lane group at `t` into `out` (sized for the clip).
    #[inline]
    fn sample(&self, clip: &PoseClip, t: f32, hint: &mut usize, out: &mut LocalPose) {
        let (k, u) = self.locate(t, hint);
        match self.terms {
            SincTerms::ToX4 => self.slerp_groups::<2>(clip, k, u, out),
            SincTerms::ToX6 => self.slerp_groups::<3>(clip, k, u, out),
            SincTerms::ToX8 => self.slerp_groups::<4>(clip, k, u, out),
            SincTerms::ToX10 => self.slerp_groups::<5>(clip, k, u, out),
        }
        let u = Vec4::splat(u);
        for (keys, track, out) in [
            (
                &self.translations,
                &clip.translations,
                &mut out.translations,
            ),
            (&self.scales, &clip.scales, &mut out.scales),
        ] {
            let groups = track.animated.len();
            let (a, b) = (k * groups, (k + 1) * groups);
            for ((a, b), &g) in keys[a..b]
                .iter()
                .zip(&keys[b..b + groups])
                .zip(&track.animated)
            {
                out[g as usize] = Vec3x4::lerp(a, b, u);
            }
        }
    }
}

impl Timeline {
    /// The rotation lane groups at fraction `u` of segment `k`, `S` to x^(2·TERMS).
    #[inline(always)]
    fn slerp_groups<const TERMS: usize>(
        &self,
        clip: &PoseClip,
        k: usize,
        u: f32,
        out: &mut LocalPose,
    ) {
        let (u, v) = (Vec4::splat(u), Vec4::splat(1.0 - u));
        let groups = clip.rotations.animated.len();
        let (a, b) = (k * groups, (k + 1) * groups);
        let rows = self.rotations[a..b]
            .iter()
            .zip(&self.rotations[b..b + groups]);
        for (((a, b), arc), &g) in rows.zip(&self.arcs[a..b]).zip(&clip.rotations.animated) {
            out.rotations[g as usize] = Quat4::slerp::<TERMS>(a, b, u, v, arc.theta, arc.inv_sinc);
        }
    }
}

static NEXT_CLIP_ID: AtomicU64 = AtomicU64::new(1);

/// A [`Clip`] laid out for sampling the joints of one [`PoseSkeleton`] (see the
/// [module documentation](self)): every joint has a rotation, a translation and a scale channel,
/// the clip's or its rest value's.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseClip {
    id: u64,
    joints: usize,
    duration: f32,
    rotations: Track<Quat>,
    translations: Track<Vec3>,
    scales: Track<Vec3>,
    /// The whole pose's lane groups with every channel's first key: what the constant groups
    /// hold at all times.
    constants: LocalPose,
    /// Every animated lane group's keys on one shared timeline, when the clip's key times allow
    /// it (see [`KeyLayout`]); otherwise sampling reads the streams.
    timeline: Option<Timeline>,
    /// Which joints' channels the clip itself keys (the others hold their rest values): what a
    /// layer contributes to a [`mix`].
    drives: KeyedChannels,
}

/// Which joints' rotation, translation and scale a pose source keys (the others hold the
/// joints' rest values): what a layer contributes to a [`mix`]. A [`PoseClip`] has its own
/// ([`PoseClip::keyed`]); a pose made another way (a clip retargeted onto the skeleton) says
/// which channels it sets with [`KeyedChannels::new`]. Stored as lane masks (1.0 or 0.0 per
/// lane), as the mix reads them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyedChannels {
    joints: usize,
    pub(super) rotation: Vec<Vec4>,
    pub(super) translation: Vec<Vec4>,
    pub(super) scale: Vec<Vec4>,
}

impl KeyedChannels {
    /// The channels of `joints` joints that `keyed(joint)` says are keyed, as (rotation,
    /// translation, scale).
    pub fn new(joints: usize, keyed: impl Fn(usize) -> (bool, bool, bool)) -> Self {
        let mut k = Self {
            joints,
            rotation: vec![Vec4::ZERO; groups(joints)],
            translation: vec![Vec4::ZERO; groups(joints)],
            scale: vec![Vec4::ZERO; groups(joints)],
        };
        for j in 0..joints {
            let (r, t, s) = keyed(j);
            k.set(j, r, t, s);
        }
        k
    }

    fn set(&mut self, joint: usize, rotation: bool, translation: bool, scale: bool) {
        let (g, l) = (joint / LANES, joint % LANES);
        let lane = |b: bool| if b { 1.0 } else { 0.0 };
        self.rotation[g][l] = lane(rotation);
        self.translation[g][l] = lane(translation);
        self.scale[g][l] = lane(scale);
    }

    /// How many joints.
    pub fn len(&self) -> usize {
        self.joints
    }

    /// Whether there are no joints.
    pub fn is_empty(&self) -> bool {
        self.joints == 0
    }

    /// Whether joint `joint`'s rotation, translation and scale are keyed (all false past the
    /// end).
    pub fn keys_joint(&self, joint: usize) -> (bool, bool, bool) {
        if joint >= self.joints {
            return (false, false, false);
        }
        let (g, l) = (joint / LANES, joint % LANES);
        (
            self.rotation[g][l] != 0.0,
            self.translation[g][l] != 0.0,
            self.scale[g][l] != 0.0,
        )
    }
}

impl PoseClip {
    /// Whether every joint's scale is 1 at all times.
    fn unit_scales(&self) -> bool {
        self.scales.animated.is_empty() && self.constants.unit_scales
    }
}

impl PoseClip {
    /// Lays `clip` out for `skeleton`: `targets[i]` is the joint track `i` drives (as
    /// [`Skeleton::bind`](crate::skeleton::Skeleton::bind) gives them in [`crate::skeleton::Binding::targets`]). Tracks without a
    /// joint, or with a joint out of range or already driven by an earlier track, are ignored;
    /// the channels no track gives a joint hold its rest values.
    pub fn new(clip: &Clip, skeleton: &PoseSkeleton, targets: &[Option<usize>]) -> Self {
        Self::with_layout(clip, skeleton, targets, KeyLayout::Auto)
    }

    /// [`PoseClip::new`] with the key layout chosen by the caller (for tests and benchmarks
    /// comparing the two; [`KeyLayout::Timeline`] falls back to streams where a clip cannot be
    /// put on one timeline).
    pub fn with_layout(
        clip: &Clip,
        skeleton: &PoseSkeleton,
        targets: &[Option<usize>],
        layout: KeyLayout,
    ) -> Self {
        let joints = skeleton.len();
        let mut driver: Vec<Option<usize>> = vec![None; joints];
        for (track, target) in targets.iter().enumerate().take(clip.tracks().len()) {
            if let Some(j) = *target
                && j < joints
                && driver[j].is_none()
            {
                driver[j] = Some(track);
            }
        }
        let mut rotations = Track::new();
        let mut translations = Track::new();
        let mut scales = Track::new();
        let mut drives = KeyedChannels::new(joints, |_| (false, false, false));
        for (j, driver) in driver.iter().enumerate() {
            let rest = skeleton.rest.get(j);
            let track = driver.map(|i| &clip.tracks()[i]);
            drives.set(
                j,
                track.is_some_and(|t| t.rotation.is_some()),
                track.is_some_and(|t| t.translation.is_some()),
                track.is_some_and(|t| t.scale.is_some()),
            );
            match track.and_then(|t| t.rotation) {
                Some(c) => {
                    let v0 = c.values as usize;
                    let arcs = clip.arcs[v0..v0 + c.len()].iter().map(|a| {
                        let sin = a.theta.sin();
                        (a.theta, if sin > 0.0 { a.theta / sin } else { 1.0 })
                    });
                    rotations.push(clip.times(c), clip.rotation_values(c), arcs);
                }
                None => rotations.push(&[0.0], &[rest.rotation], std::iter::empty()),
            }
            for (tr, channel, value) in [
                (
                    &mut translations,
                    track.and_then(|t| t.translation),
                    rest.translation,
                ),
                (&mut scales, track.and_then(|t| t.scale), rest.scale),
            ] {
                match channel {
                    Some(c) => tr.push(
                        clip.times(c),
                        clip.vector_values(c),
                        std::iter::repeat(HOLD_ARC),
                    ),
                    None => tr.push(&[0.0], &[value], std::iter::empty()),
                }
            }
        }
        rotations.find_animated();
        translations.find_animated();
        scales.find_animated();
        let timeline = match layout {
            KeyLayout::Streams => None,
            KeyLayout::Auto | KeyLayout::Timeline => Timeline::new(
                &rotations,
                &translations,
                &scales,
                layout == KeyLayout::Auto,
            ),
        };
        if timeline.is_none() {
            rotations.build_stream();
            translations.build_stream();
            scales.build_stream();
        }
        let mut constants = LocalPose::new(joints);
        for j in 0..joints {
            let first = |c: Keys| c.start as usize;
            constants.set(
                j,
                BonePose {
                    rotation: rotations.values[first(rotations.channels[j])],
                    translation: translations.values[first(translations.channels[j])],
                    scale: scales.values[first(scales.channels[j])],
                },
            );
        }
        PoseClip {
            constants,
            id: NEXT_CLIP_ID.fetch_add(1, Ordering::Relaxed),
            joints,
            duration: clip.duration(),
            rotations,
            translations,
            scales,
            timeline,
            drives,
        }
    }

    /// Whether the clip keys joint `joint`'s rotation, translation and scale (a channel it does
    /// not key holds the joint's rest value).
    pub fn keys_joint(&self, joint: usize) -> (bool, bool, bool) {
        self.drives.keys_joint(joint)
    }

    /// Which joints' channels the clip keys: what it contributes to a [`mix`].
    pub fn keyed(&self) -> &KeyedChannels {
        &self.drives
    }

    /// How many key times the clip's shared timeline has, when it samples on one (`None`: it
    /// samples from per-channel key streams; see [`KeyLayout`]).
    pub fn timeline_keys(&self) -> Option<usize> {
        self.timeline.as_ref().map(|t| t.times.len())
    }

    /// Changes joint `joint` in `pose`, a pose just sampled from this clip, to `f` of it (a
    /// root's extracted axes held, a basis composed into it). Cheaper than [`LocalPose::set`]
    /// on the next frame: where this clip animates every channel that `f` changes, the pose
    /// keeps its record of the clip's constant groups, which `set` clears. Does nothing past
    /// the pose's joints.
    pub fn map_joint(
        &self,
        joint: usize,
        pose: &mut LocalPose,
        f: impl FnOnce(BonePose) -> BonePose,
    ) {
        if joint >= pose.joints {
            return;
        }
        let g = joint / LANES;
        let before = pose.get(joint);
        let after = f(before);
        let constant =
            |cache_of_group: &[Option<u32>]| cache_of_group.get(g).is_none_or(Option::is_none);
        if (after.rotation != before.rotation && constant(&self.rotations.cache_of_group))
            || (after.translation != before.translation
                && constant(&self.translations.cache_of_group))
            || (after.scale != before.scale && constant(&self.scales.cache_of_group))
        {
            pose.constants_of = 0;
        }
        let keep = pose.constants_of;
        pose.set(joint, after);
        pose.constants_of = keep;
    }

    /// Number of joints (the skeleton's).
    pub fn len(&self) -> usize {
        self.joints
    }

    /// Whether the skeleton had no joints.
    pub fn is_empty(&self) -> bool {
        self.joints == 0
    }

    /// The clip's duration ([`Clip::duration`]), seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }
}

/// The cache of a rotation lane group: keys `a` and `b`, the segment's start time, 1 / its
/// duration, its angle θ and θ / sin θ: three cache lines.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct RotCache {
    a: Quat4,
    b: Quat4,
    t0: Vec4,
    inv_dt: Vec4,
    theta: Vec4,
    inv_sinc: Vec4,
}

/// The cache of a translation or scale lane group: two cache lines.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct VecCache {
    a: Vec3x4,
    b: Vec3x4,
    t0: Vec4,
    inv_dt: Vec4,
}

const ROT_HOLD: RotCache = RotCache {
    a: Quat4::IDENTITY,
    b: Quat4::IDENTITY,
    t0: Vec4::ZERO,
    inv_dt: Vec4::ZERO,
    theta: Vec4::ZERO,
    inv_sinc: Vec4::ONE,
};

const VEC_HOLD: VecCache = VecCache {
    a: Vec3x4::ZERO,
    b: Vec3x4::ZERO,
    t0: Vec4::ZERO,
    inv_dt: Vec4::ZERO,
};

impl RotCache {
    /// Moves key `b` of lane `l` to `a` and puts the entry's key in `b`.
    #[inline]
    fn roll(&mut self, l: usize, e: &RotEntry) {
        self.a.x[l] = self.b.x[l];
        self.a.y[l] = self.b.y[l];
        self.a.z[l] = self.b.z[l];
        self.a.w[l] = self.b.w[l];
        self.b.x[l] = e.value[0];
        self.b.y[l] = e.value[1];
        self.b.z[l] = e.value[2];
        self.b.w[l] = e.value[3];
        self.t0[l] = e.t0;
        self.inv_dt[l] = e.inv_dt;
        self.theta[l] = e.theta;
        self.inv_sinc[l] = e.inv_sinc;
    }

    #[inline(always)]
    fn eval(&self, t: Vec4) -> Quat4 {
        let u = ((t - self.t0) * self.inv_dt).clamp(Vec4::ZERO, Vec4::ONE);
        let v = Vec4::ONE - u;
        Quat4::slerp::<5>(&self.a, &self.b, u, v, self.theta, self.inv_sinc)
    }
}

impl VecCache {
    #[inline]
    fn roll(&mut self, l: usize, e: &VecEntry) {
        self.a.x[l] = self.b.x[l];
        self.a.y[l] = self.b.y[l];
        self.a.z[l] = self.b.z[l];
        self.b.x[l] = e.value[0];
        self.b.y[l] = e.value[1];
        self.b.z[l] = e.value[2];
        self.t0[l] = e.t0;
        self.inv_dt[l] = e.inv_dt;
    }

    #[inline(always)]
    fn eval(&self, t: Vec4) -> Vec3x4 {
        let u = ((t - self.t0) * self.inv_dt).clamp(Vec4::ZERO, Vec4::ONE);
        Vec3x4::lerp(&self.a, &self.b, u)
    }
}

/// One playing instance's sampling cache for a [`PoseClip`]: per joint and channel the two keys
/// around the last sampled time, and the position in the clip's key streams (see the
/// [module documentation](self)). Works with any clip and any time: a cursor made for another
/// clip, or a time earlier than the last, re-seeks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PoseCursor {
    clip: u64,
    time: f32,
    rotations: Vec<RotCache>,
    translations: Vec<VecCache>,
    scales: Vec<VecCache>,
    /// Positions in the rotation, translation and scale streams.
    next: [usize; 3],
    /// On a clip with a timeline: the segment sampled last.
    key: usize,
}

impl PoseCursor {
    /// A cursor for `clip`, at its start (its buffers sized, so that sampling never allocates).
    pub fn new(clip: &PoseClip) -> Self {
        let mut cursor = PoseCursor::default();
        cursor.seek(clip, 0.0);
        cursor
    }

    /// On a clip with a shared timeline ([`KeyLayout`]), the segment of it sampled last: all a
    /// playing instance's state there. A caller whose one cursor samples many instances keeps
    /// this per instance and hands it back with [`PoseCursor::resume_at`], which spares the
    /// search for the segment. (0 on clips laid out as streams.)
    pub fn timeline_segment(&self) -> u32 {
        self.key as u32
    }

    /// Makes the cursor continue an instance of `clip` that sampled `segment` of its shared
    /// timeline last ([`PoseCursor::timeline_segment`]). Sampling gives the same pose from any
    /// segment (it is where the search starts); does nothing on a clip laid out as streams.
    pub fn resume_at(&mut self, clip: &PoseClip, segment: u32) {
        if let Some(timeline) = &clip.timeline {
            self.clip = clip.id;
            self.key = (segment as usize).min(timeline.times.len() - 2);
        }
    }

    /// Sets the cache for time `t` by binary searches.
    fn seek(&mut self, clip: &PoseClip, t: f32) {
        if clip.timeline.is_some() {
            // Nothing is cached but the segment, which sampling finds from any hint.
            self.rotations.clear();
            self.translations.clear();
            self.scales.clear();
            self.key = 0;
            self.clip = clip.id;
            self.time = t;
            return;
        }
        self.rotations.clear();
        self.rotations
            .resize(clip.rotations.animated.len(), ROT_HOLD);
        self.translations.clear();
        self.translations
            .resize(clip.translations.animated.len(), VEC_HOLD);
        self.scales.clear();
        self.scales.resize(clip.scales.animated.len(), VEC_HOLD);
        for j in 0..clip.joints {
            let (g, l) = (j / LANES, j % LANES);
            if let Some(c) = clip.rotations.cache_of_group[g] {
                let (a, e) = clip.rotations.seek(j, c as usize * LANES + l, t);
                let cache = &mut self.rotations[c as usize];
                cache.b.set(l, a);
                cache.roll(l, &e);
            }
            for (track, caches) in [
                (&clip.translations, &mut self.translations),
                (&clip.scales, &mut self.scales),
            ] {
                if let Some(c) = track.cache_of_group[g] {
                    let (a, e) = track.seek(j, c as usize * LANES + l, t);
                    let cache = &mut caches[c as usize];
                    cache.b.set(l, a);
                    cache.roll(l, &e);
                }
            }
        }
        self.next = [
            clip.rotations.need.partition_point(|&x| x <= t),
            clip.translations.need.partition_point(|&x| x <= t),
            clip.scales.need.partition_point(|&x| x <= t),
        ];
        self.clip = clip.id;
        self.time = t;
    }

    /// Brings the cache to time `t` ≥ the last time by consuming stream entries, or re-seeks
    /// when that would take long.
    #[inline]
    fn advance(&mut self, clip: &PoseClip, t: f32) {
        // More entries than a few per joint: a binary search is cheaper.
        let limit = 2 * clip.joints + 8;
        for (k, track) in [
            (0, &clip.rotations.need),
            (1, &clip.translations.need),
            (2, &clip.scales.need),
        ] {
            let p = self.next[k];
            if track[p] <= t && track.get(p + limit).is_some_and(|&n| n <= t) {
                self.seek(clip, t);
                return;
            }
        }
        let p = &mut self.next[0];
        while clip.rotations.need[*p] <= t {
            let e = &clip.rotations.entries[*p];
            let s = e.slot as usize;
            self.rotations[s / LANES].roll(s % LANES, e);
            *p += 1;
        }
        for (k, track, cache) in [
            (1, &clip.translations, &mut self.translations),
            (2, &clip.scales, &mut self.scales),
        ] {
            let p = &mut self.next[k];
            while track.need[*p] <= t {
                let e = &track.entries[*p];
                let s = e.slot as usize;
                cache[s / LANES].roll(s % LANES, e);
                *p += 1;
            }
        }
        self.time = t;
    }
}

/// Samples `clip` at `time` (seconds, already wrapped into the clip as for [`Clip::sample`])
/// into `out`, every joint (the ones the clip does not drive get their rest values). `cursor`
/// caches the keys around the last time: forward steps only read the keys passed since, a step
/// back or a cursor of another clip re-seeks. NaN reads as a time before the first key.
/// Allocates only when `cursor` or `out` were sized for another clip.
pub fn sample(clip: &PoseClip, time: f32, cursor: &mut PoseCursor, out: &mut LocalPose) {
    let t = if time.is_nan() {
        f32::MIN
    } else {
        time.clamp(f32::MIN, f32::MAX)
    };
    if cursor.clip != clip.id || (t < cursor.time && clip.timeline.is_none()) {
        cursor.seek(clip, t);
    } else if clip.timeline.is_none() {
        cursor.advance(clip, t);
    }
    out.resize(clip.joints);
    if out.constants_of != clip.id {
        out.rotations.copy_from_slice(&clip.constants.rotations);
        out.translations
            .copy_from_slice(&clip.constants.translations);
        out.scales.copy_from_slice(&clip.constants.scales);
        out.constants_of = clip.id;
    }
    out.unit_scales = clip.unit_scales();
    if let Some(timeline) = &clip.timeline {
        timeline.sample(clip, t, &mut cursor.key, out);
        cursor.time = t;
        return;
    }
    let tv = Vec4::splat(t);
    for (c, &g) in cursor.rotations.iter().zip(&clip.rotations.animated) {
        out.rotations[g as usize] = c.eval(tv);
    }
    for (c, &g) in cursor.translations.iter().zip(&clip.translations.animated) {
        out.translations[g as usize] = c.eval(tv);
    }
    for (c, &g) in cursor.scales.iter().zip(&clip.scales.animated) {
        out.scales[g as usize] = c.eval(tv);
    }
}

/// A layer of a [`blend`]: a pose, its weight, and optionally a weight per joint (multiplying
/// `weight`; joints past the mask's end get 0).
#[derive(Debug, Clone, Copy)]
pub struct BlendLayer<'a> {
    /// The layer's local pose.
    pub pose: &'a LocalPose,
    /// The layer's weight.
    pub weight: f32,
    /// Per-joint weights, if the layer affects joints unequally.
    pub mask: Option<&'a [f32]>,
}

/// Four lanes of a mask from joint `4·g` on, 0 past its end.
#[inline(always)]
fn mask_lanes(mask: &[f32], g: usize) -> Vec4 {
    let s = g * LANES;
    if s + LANES <= mask.len() {
        Vec4::from_slice(&mask[s..s + LANES])
    } else {
        let mut m = [0.0; LANES];
        for (i, v) in mask.iter().skip(s).enumerate() {
            m[i] = *v;
        }
        Vec4::from_array(m)
    }
}

/// Blends layers into `out` as the games blend clips: per joint, with `w` each layer's weight
/// (times its mask's), the weighted sum of the rotations, each first negated if it lies on the
/// other hemisphere from the first layer's, normalised; the weighted mean of the translations
/// and of the scales. Joints whose weights sum to 0 or less (no layer, all weights 0) get
/// `rest`'s transform, and so does a rotation whose sum is zero. Layers of another length than
/// `rest` are ignored. `out` takes `rest`'s length (allocating only if it grows).
pub fn blend(layers: &[BlendLayer<'_>], rest: &LocalPose, out: &mut LocalPose) {
    let n = rest.len();
    out.resize(n);
    out.constants_of = 0;
    let unit = rest.unit_scales
        && layers
            .iter()
            .all(|l| l.pose.len() != n || l.pose.unit_scales);
    if unit {
        // Every weighted mean of scales 1 is 1: no need to read them.
        if !out.unit_scales {
            out.scales.fill(Vec3x4::ONE);
            out.unit_scales = true;
        }
        blend_groups::<false>(layers, rest, out);
    } else {
        out.unit_scales = false;
        blend_groups::<true>(layers, rest, out);
    }
}

/// [`blend`] without or with the scales.
fn blend_groups<const SCALES: bool>(
    layers: &[BlendLayer<'_>],
    rest: &LocalPose,
    out: &mut LocalPose,
) {
    let n = rest.len();
    let first = layers.iter().find(|l| l.pose.len() == n);
    for g in 0..groups(n) {
        let mut q = Quat4 {
            x: Vec4::ZERO,
            y: Vec4::ZERO,
            z: Vec4::ZERO,
            w: Vec4::ZERO,
        };
        let mut t = Vec3x4::ZERO;
        let mut s = Vec3x4::ZERO;
        let mut sum = Vec4::ZERO;
        if let Some(first) = first {
            let reference = &first.pose.rotations[g];
            for layer in layers.iter().filter(|l| l.pose.len() == n) {
                let mut w = Vec4::splat(layer.weight);
                if let Some(mask) = layer.mask {
                    w *= mask_lanes(mask, g);
                }
                let r = &layer.pose.rotations[g];
                let wq = Vec4::select(reference.dot(r).cmplt(Vec4::ZERO), -w, w);
                q.add_scaled(r, wq);
                t.add_scaled(&layer.pose.translations[g], w);
                if SCALES {
                    s.add_scaled(&layer.pose.scales[g], w);
                }
                sum += w;
            }
        }
        let len2 = q.dot(&q);
        let some = sum.cmpgt(Vec4::ZERO);
        let inv_sum = sum.recip();
        let (rr, rt) = (&rest.rotations[g], &rest.translations[g]);
        let rot_ok = some & len2.cmpgt(Vec4::ZERO);
        let q = q.scaled(len2.sqrt().recip());
        let t = t.scaled(inv_sum);
        out.rotations[g] = Quat4 {
            x: Vec4::select(rot_ok, q.x, rr.x),
            y: Vec4::select(rot_ok, q.y, rr.y),
            z: Vec4::select(rot_ok, q.z, rr.z),
            w: Vec4::select(rot_ok, q.w, rr.w),
        };
        out.translations[g] = Vec3x4 {
            x: Vec4::select(some, t.x, rt.x),
            y: Vec4::select(some, t.y, rt.y),
            z: Vec4::select(some, t.z, rt.z),
        };
        if SCALES {
            let (s, rs) = (s.scaled(inv_sum), &rest.scales[g]);
            out.scales[g] = Vec3x4 {
                x: Vec4::select(some, s.x, rs.x),
                y: Vec4::select(some, s.y, rs.y),
                z: Vec4::select(some, s.z, rs.z),
            };
        }
    }
}

/// Puts `local` in model space: `out[j]` = `out[parent(j)] · local(j)` (scale, then rotation,
/// then translation), roots as their local transform (and, in a skeleton made by
/// [`PoseSkeleton::with_offsets`], the joint's offset between the two). Handles as many joints as
/// `skeleton`, `local` and `out` all have; a joint hung under one past those is placed as a
/// root.
pub fn local_to_model(skeleton: &PoseSkeleton, local: &LocalPose, out: &mut [Affine3A]) {
    if local.unit_scales {
        local_to_model_groups::<false>(skeleton, local, out);
    } else {
        local_to_model_groups::<true>(skeleton, local, out);
    }
}

/// [`local_to_model`] without or with the scales.
fn local_to_model_groups<const SCALES: bool>(
    skeleton: &PoseSkeleton,
    local: &LocalPose,
    out: &mut [Affine3A],
) {
    let n = skeleton.len().min(local.len()).min(out.len());
    let parents = &skeleton.parents[..n];
    for g in 0..groups(n) {
        let (q, t) = (&local.rotations[g], &local.translations[g]);
        let s = if SCALES { local.scales[g] } else { Vec3x4::ONE };
        // The rotation matrices of four joints at once, columns scaled.
        let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
        let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
        let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
        let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
        let one = Vec4::ONE;
        let c0 = Mat4::from_cols(
            (one - (yy + zz)) * s.x,
            (xy + wz) * s.x,
            (xz - wy) * s.x,
            Vec4::ZERO,
        )
        .transpose();
        let c1 = Mat4::from_cols(
            (xy - wz) * s.y,
            (one - (xx + zz)) * s.y,
            (yz + wx) * s.y,
            Vec4::ZERO,
        )
        .transpose();
        let c2 = Mat4::from_cols(
            (xz + wy) * s.z,
            (yz - wx) * s.z,
            (one - (xx + yy)) * s.z,
            Vec4::ZERO,
        )
        .transpose();
        let c3 = Mat4::from_cols(t.x, t.y, t.z, Vec4::ZERO).transpose();
        let base = g * LANES;
        for l in 0..LANES.min(n - base) {
            let j = base + l;
            let m = Affine3A::from_cols(
                Vec3A::from_vec4(c0.col(l)),
                Vec3A::from_vec4(c1.col(l)),
                Vec3A::from_vec4(c2.col(l)),
                Vec3A::from_vec4(c3.col(l)),
            );
            // (A root's −1 is past every joint; so is a later parent, whose joint is composed
            // again after this pass.)
            let p = parents[j] as usize;
            out[j] = if p < j { out[p] * m } else { m };
        }
    }
    // The joints below a later parent or an offset, parents first.
    for late in &skeleton.late {
        let j = late.joint;
        if j >= n {
            continue;
        }
        let p = local.get(j);
        let scale = if SCALES { p.scale } else { Vec3::ONE };
        let m = late.offset
            * Affine3A::from_scale_rotation_translation(scale, p.rotation, p.translation);
        out[j] = match late.parent.filter(|p| *p < n) {
            Some(parent) => out[parent] * m,
            None => m,
        };
    }
}
