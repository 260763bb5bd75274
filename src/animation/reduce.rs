//! Keyframe reduction: fewer keys for the same motion, within a stated error.
//!
//! Two reducers, both returning a rebuilt [`Clip`] plus, per track, the indices of the original
//! keys they kept ([`KeptKeys`]), so that a format writer can keep the matching file keys:
//!
//! * [`reduce_constant_runs`] is the rule the DelDX 3ds Max exporter meant to apply: inside every
//!   run of consecutive keys with exactly equal values it keeps only the first and the last key.
//!   Lossless: the sampler interpolates as `a + (b − a)·u`, which gives `a` back exactly between
//!   two equal keys.
//! * [`reduce`] removes every key it can while the reduced clip stays within
//!   [`ReduceOptions::tolerance`] of the original, measured with ACL's metric (below).
//!
//! # The error metric
//!
//! The metric is the one the Animation Compression Library (ACL) uses: a bone's error at a time
//! is the largest distance, over six points at ±`shell_radius` along each of the bone's local
//! axes (its "virtual vertices", 3 cm by default: roughly where skinned vertices sit), between
//! the point moved by the bone's original object-space transform and by the reduced one. Object
//! space composes the local transforms down the hierarchy (parent × local, non-uniform scale
//! included), so a parent's error shows in its children, amplified by their distance from it: a
//! rotation error that is invisible at the root can move a hand by millimetres. A bone's error
//! is therefore measured with the whole rig, [`ReduceRig`], and not with its track alone.
//!
//! The error is evaluated at every original key time (the union of the key times of all
//! channels), where the original clip is exactly what its author keyed; between those times both
//! clips interpolate.
//!
//! # The algorithm
//!
//! Bones are reduced parents first. For each channel, keys are scanned left to right: the
//! current segment starts at the last kept key and is extended over the next key (dropping it)
//! as long as, at every original key time the extension affects, this bone and every one of its
//! descendants stays within tolerance, computed with the current lossy state of every bone. An
//! ancestor is final by the time a bone is reduced, and each accepted drop re-checks every
//! descendant, so the bound holds for every bone at every original key time once all bones are
//! done. Lossy local and object transforms are cached per bone and key time, so a check costs
//! only the interval it changes.
//!
//! The reducer predicts the rebuilt clip bit for bit: a removed key's neighbours are
//! interpolated with the sampler's own slerp (with the sign flip and precomputed angle that
//! [`ClipBuilder`] will give the kept keys) and lerp, and kept rotations are copied without being
//! normalised again. The bound it checks is the bound the rebuilt clip has; [`Reduced::stats`]
//! measures the rebuilt clip through the sampler to report it.
//!
//! The first and last key of every channel are always kept, so the clip's duration and its holds
//! before the first and after the last key do not change; a constant channel keeps two keys.
//!
//! # Shared key times
//!
//! Channels of a track that share their key times (one [`Times`](super::Times) from
//! [`ClipBuilder::times`]) keep sharing them: they are reduced together, and a key time is
//! dropped only when dropping it from every channel that uses it stays within tolerance. Formats
//! need this: an IFP key holds a rotation and a translation at one time, and writing the reduced
//! clip back must not invent keys for either. DAN stores rotation, position and scale keys
//! separately, and they are reduced separately.
//!
//! # Cost
//!
//! With `B` rig bones and `S` distinct key times, memory is about 230 bytes × `B` × `S`. A check
//! costs the samples of the tried segment times the size of the bone's subtree, so a channel
//! reduced to segments of `L` samples costs O(`L`² × subtree) (samples whose pose the drop does
//! not change are skipped after comparing the pose). Reducing a root touches the whole rig;
//! leaves are cheap.

use super::sampler::{lerp_vec, slerp_arc};
use super::{Arc, BonePose, BoneTrack, Channel, Clip, ClipBuilder, ClipCursor, ClipError};
use glam::{Affine3A, Quat, Vec3, Vec3A};

/// ACL's default virtual-vertex distance: 3 cm, in metres.
pub const DEFAULT_SHELL_RADIUS: f32 = 0.03;

/// ACL's default error threshold: 0.01 cm, in metres.
pub const DEFAULT_TOLERANCE: f32 = 1e-4;

/// The bone hierarchy errors are measured on.
///
/// Bones are indexed `0..parents.len()`; parents may come in any order. A parent index out of
/// range or equal to the bone itself is read as no parent, and a parent link that closes a
/// cycle is cut (the bone where a walk up the parents first meets itself becomes a root). A
/// track whose bone is missing, out of range or already driven by an earlier track is measured
/// as an extra root bone with the identity rest pose.
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceRig {
    /// Per bone: its parent, `None` for a root.
    pub parents: Vec<Option<usize>>,
    /// Per bone: its local rest pose, which the channels the clip does not animate keep.
    /// Missing entries are the identity.
    pub rest: Vec<BonePose>,
    /// Per clip track: the bone it drives.
    pub track_bone: Vec<Option<usize>>,
}

impl ReduceRig {
    /// One root bone per track, resting at the identity: for clips whose keys are already in
    /// model space (DAN), and for measuring each track on its own.
    pub fn flat(clip: &Clip) -> Self {
        let n = clip.tracks().len();
        Self {
            parents: vec![None; n],
            rest: vec![BonePose::default(); n],
            track_bone: (0..n).map(Some).collect(),
        }
    }
}

/// Settings of [`reduce`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReduceOptions {
    /// Largest error allowed, in the clip's units (metres for IFP; a DAN file's scene units).
    /// Negative or NaN reads as 0: only drops that change nothing at any key time, not even by
    /// rounding.
    pub tolerance: f32,
    /// Distance of the measured points from the bone's origin; a value that is not finite reads
    /// as [`DEFAULT_SHELL_RADIUS`], a negative one as its absolute value.
    pub shell_radius: f32,
}

impl Default for ReduceOptions {
    fn default() -> Self {
        Self {
            tolerance: DEFAULT_TOLERANCE,
            shell_radius: DEFAULT_SHELL_RADIUS,
        }
    }
}

/// A reduced clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    /// The rebuilt clip: same name, tracks in the same order with the same bones, the same
    /// channels present, a subset of their keys.
    pub clip: Clip,
    /// Per track, the original keys kept.
    pub kept: Vec<KeptKeys>,
    /// Key counts and the error of the result.
    pub stats: ReduceStats,
}

/// Indices, in increasing order, of the keys of the original channels that a reduced track kept;
/// empty for a channel the track does not have. Channels that share key times have equal lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeptKeys {
    /// Rotation keys kept.
    pub rotation: Vec<u32>,
    /// Translation keys kept.
    pub translation: Vec<u32>,
    /// Scale keys kept.
    pub scale: Vec<u32>,
}

/// Key counts before and after, and the error of the reduced clip ([`measure_error`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ReduceStats {
    /// Keys of the original clip (all channels).
    pub keys_before: usize,
    /// Keys of the reduced clip.
    pub keys_after: usize,
    /// How far the reduced clip is from the original.
    pub error: ErrorStats,
}

/// The error of one clip against another over (bone, key time) samples.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorStats {
    /// Largest error.
    pub max: f32,
    /// 99th percentile (nearest rank).
    pub p99: f32,
    /// Number of samples: animated bones × distinct key times.
    pub samples: usize,
}

/// Which keys a file converter drops: none, only the inside of constant runs
/// ([`reduce_constant_runs`], lossless), or every key its neighbours reproduce within a bound
/// ([`reduce`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum KeyReduction {
    /// Every key is kept.
    #[default]
    None,
    /// Only the inside of constant runs is dropped ([`reduce_constant_runs`]).
    Runs,
    /// Keys are dropped within a tolerance ([`reduce`]).
    Bounded(ReduceOptions),
}

impl KeyReduction {
    /// The clip reduced this way on `rig` (which [`KeyReduction::Runs`] does not need: it
    /// measures on [`ReduceRig::flat`]); `None` for [`KeyReduction::None`].
    pub fn apply(&self, clip: &Clip, rig: &ReduceRig) -> Option<Reduced> {
        match self {
            KeyReduction::None => None,
            KeyReduction::Runs => Some(reduce_constant_runs(clip)),
            KeyReduction::Bounded(options) => Some(reduce(clip, rig, options)),
        }
    }
}

impl ReduceStats {
    /// The statistics of several reduced clips together: key counts and samples summed, and
    /// the largest `max` and the largest `p99` of any clip (a NaN counts as 0); all zero for
    /// none.
    pub fn combined<'a>(stats: impl IntoIterator<Item = &'a ReduceStats>) -> ReduceStats {
        let mut out = ReduceStats::default();
        let errors: Vec<ErrorStats> = stats
            .into_iter()
            .map(|s| {
                out.keys_before += s.keys_before;
                out.keys_after += s.keys_after;
                s.error
            })
            .collect();
        out.error = ErrorStats::worst(&errors);
        out
    }
}

impl ErrorStats {
    /// Several clips' errors together: samples summed, and the largest `max` and the largest
    /// `p99` of any clip (a NaN counts as 0); all zero for none.
    pub fn worst(errors: &[ErrorStats]) -> ErrorStats {
        ErrorStats {
            max: errors.iter().map(|e| e.max).fold(0.0, f32::max),
            p99: errors.iter().map(|e| e.p99).fold(0.0, f32::max),
            samples: errors.iter().map(|e| e.samples).sum(),
        }
    }
}

/// Keeps the first and last key of every run of exactly equal consecutive keys, and every key
/// that is in no such run. Channels sharing key times keep a key that any of them needs.
///
/// [`Reduced::stats`] measures the error on [`ReduceRig::flat`] with the default shell radius
/// (a rounding-level error, see the module documentation).
pub fn reduce_constant_runs(clip: &Clip) -> Reduced {
    let kept = clip
        .tracks()
        .iter()
        .map(|track| {
            let channels = channels(track);
            let mut kept: [Vec<u32>; 3] = Default::default();
            for kinds in groups(&channels) {
                let group = Group::new(clip, &channels, &kinds);
                let n = group.len();
                let keys: Vec<u32> = (0..n)
                    .filter(|&i| i == 0 || i + 1 == n || !group.inside_constant_run(i))
                    .map(|i| i as u32)
                    .collect();
                for kind in kinds {
                    kept[kind].clone_from(&keys);
                }
            }
            kept
        })
        .collect();
    finish(clip, kept, &ReduceRig::flat(clip), DEFAULT_SHELL_RADIUS)
}

/// Removes keys while the clip, sampled at every original key time, stays within
/// `options.tolerance` of the original for every bone of `rig` (see the module documentation).
pub fn reduce(clip: &Clip, rig: &ReduceRig, options: &ReduceOptions) -> Reduced {
    let tolerance = if options.tolerance >= 0.0 {
        options.tolerance
    } else {
        0.0
    };
    let radius = shell_radius(options.shell_radius);
    let hierarchy = Hierarchy::new(rig, clip.tracks().len());
    let mut lossy = Lossy::new(clip, &hierarchy, tolerance, radius);
    let kept = lossy.reduce_all(clip);
    finish(clip, kept, rig, radius)
}

/// The error of `reduced` against `original`, sampled at every key time of `original`, over the
/// bones of `rig` that a track drives or that hang below one. Tracks are matched by index; a
/// track `reduced` lacks leaves its bone at rest.
pub fn measure_error(
    original: &Clip,
    reduced: &Clip,
    rig: &ReduceRig,
    shell_radius: f32,
) -> ErrorStats {
    let radius = self::shell_radius(shell_radius);
    let h = Hierarchy::new(rig, original.tracks().len());
    let times = sample_times(original);
    let animated: Vec<usize> = (0..h.len()).filter(|&b| h.animated[b]).collect();
    let (mut a, mut b) = (
        PoseSampler::new(original, &h),
        PoseSampler::new(reduced, &h),
    );
    let mut locals = vec![BonePose::default(); h.len()];
    let (mut objects_a, mut objects_b) = (
        vec![Affine3A::IDENTITY; h.len()],
        vec![Affine3A::IDENTITY; h.len()],
    );
    let mut errors = Vec::with_capacity(animated.len() * times.len());
    for &t in &times {
        a.locals(&h, t, &mut locals);
        h.objects(&locals, &mut objects_a);
        b.locals(&h, t, &mut locals);
        h.objects(&locals, &mut objects_b);
        errors.extend(
            animated
                .iter()
                .map(|&bone| shell_error(&objects_a[bone], &objects_b[bone], radius)),
        );
    }
    ErrorStats::of(errors)
}

impl ErrorStats {
    fn of(mut errors: Vec<f32>) -> Self {
        let max = errors.iter().copied().fold(0.0, nan_max);
        errors.sort_unstable_by(f32::total_cmp);
        // Nearest rank: the smallest error that at least 99 % of the samples do not exceed.
        let rank = (errors.len() * 99).div_ceil(100);
        Self {
            max,
            p99: rank.checked_sub(1).map_or(0.0, |i| errors[i]),
            samples: errors.len(),
        }
    }
}

/// `max` that keeps a NaN, so that a NaN error never passes for a small one.
fn nan_max(acc: f32, x: f32) -> f32 {
    if x > acc || x.is_nan() { x } else { acc }
}

fn shell_radius(r: f32) -> f32 {
    if r.is_finite() {
        r.abs()
    } else {
        DEFAULT_SHELL_RADIUS
    }
}

/// ACL's error between two object transforms: the largest distance between the images of the
/// six points ±`r` along the local axes. The image of `p` differs by `(A − B)·p + (a − b)`, so
/// the differences are taken before the points are moved (more precise far from the origin).
fn shell_error(a: &Affine3A, b: &Affine3A, r: f32) -> f32 {
    let d: Vec3A = a.translation - b.translation;
    let m = a.matrix3 - b.matrix3;
    [m.x_axis, m.y_axis, m.z_axis]
        .into_iter()
        .flat_map(|axis| [(d + axis * r).length(), (d - axis * r).length()])
        .fold(0.0, nan_max)
}

fn affine(pose: &BonePose) -> Affine3A {
    Affine3A::from_scale_rotation_translation(pose.scale, pose.rotation, pose.translation)
}

/// Every key time of the clip, sorted, each once.
fn sample_times(clip: &Clip) -> Vec<f32> {
    let mut times: Vec<f32> = clip
        .tracks()
        .iter()
        .flat_map(|t| channels(t).into_iter().flatten())
        .flat_map(|c| clip.times(c).iter().copied())
        .collect();
    times.sort_unstable_by(f32::total_cmp);
    times.dedup();
    times
}

const ROTATION: usize = 0;
const TRANSLATION: usize = 1;
const SCALE: usize = 2;

/// A track's channels as `[rotation, translation, scale]`.
fn channels(track: &BoneTrack) -> [Option<Channel>; 3] {
    [track.rotation, track.translation, track.scale]
}

/// The channel kinds of a track grouped by shared key times, in kind order.
fn groups(channels: &[Option<Channel>; 3]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (kind, c) in channels.iter().enumerate() {
        let Some(c) = c else { continue };
        let shares = |g: &&mut Vec<usize>| {
            channels[g[0]].is_some_and(|o| o.times == c.times && o.len == c.len)
        };
        match groups.iter_mut().find(shares) {
            Some(g) => g.push(kind),
            None => groups.push(vec![kind]),
        }
    }
    groups
}

/// The keys of the channels of a track that share one set of key times.
struct Group<'a> {
    times: &'a [f32],
    rotation: Option<&'a [Quat]>,
    translation: Option<&'a [Vec3]>,
    scale: Option<&'a [Vec3]>,
}

impl<'a> Group<'a> {
    fn new(clip: &'a Clip, channels: &[Option<Channel>; 3], kinds: &[usize]) -> Self {
        let has = |kind: usize| channels[kind].filter(|_| kinds.contains(&kind));
        let first = kinds.first().and_then(|&k| channels[k]);
        Self {
            times: first.map_or(&[], |c| clip.times(c)),
            rotation: has(ROTATION).map(|c| clip.rotation_values(c)),
            translation: has(TRANSLATION).map(|c| clip.vector_values(c)),
            scale: has(SCALE).map(|c| clip.vector_values(c)),
        }
    }

    fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether key `i` equals both its neighbours in every channel.
    fn inside_constant_run(&self, i: usize) -> bool {
        fn run<T: PartialEq>(v: Option<&[T]>, i: usize) -> bool {
            v.is_none_or(|v| v[i - 1] == v[i] && v[i] == v[i + 1])
        }
        i > 0
            && i + 1 < self.len()
            && run(self.rotation, i)
            && run(self.translation, i)
            && run(self.scale, i)
    }
}

/// A group's interpolation, in the rebuilt clip, from kept key `a` to key `j` once the keys
/// between them are gone: what the sampler computes there, bit for bit.
struct Segment {
    a: usize,
    j: usize,
    /// The rotations as the builder stores them: `q1` flipped onto `q0`'s hemisphere.
    q0: Quat,
    q1: Quat,
    arc: Arc,
}

impl Segment {
    /// `qa`: key `a`'s rotation as stored in the rebuilt clip.
    fn new(group: &Group, a: usize, qa: Quat, j: usize) -> Self {
        let q1 = group.rotation.map_or(Quat::IDENTITY, |r| flipped(r[j], qa));
        Self {
            a,
            j,
            q0: qa,
            q1,
            arc: Arc::between(qa, q1),
        }
    }

    /// `base` with the group's channels sampled at `t`, for `times[a] <= t < times[j]`.
    fn pose(&self, group: &Group, base: BonePose, t: f32) -> BonePose {
        // The sampler's `locate`: holds the first key up to its time, else interpolates.
        let (t0, t1) = (group.times[self.a], group.times[self.j]);
        let u = if t <= group.times[0] {
            None
        } else {
            let dt = t1 - t0;
            Some(if dt > 0.0 { (t - t0) / dt } else { 1.0 })
        };
        let vector = |v: &[Vec3]| match u {
            None => v[0],
            Some(u) => lerp_vec(v[self.a], v[self.j], u),
        };
        let mut pose = base;
        if let Some(r) = group.rotation {
            pose.rotation = match u {
                None => r[0],
                Some(u) => slerp_arc(self.q0, self.q1, self.arc, u),
            };
        }
        if let Some(v) = group.translation {
            pose.translation = vector(v);
        }
        if let Some(v) = group.scale {
            pose.scale = vector(v);
        }
        pose
    }
}

/// `q` on `previous`'s hemisphere, as [`ClipBuilder::rotations`] stores it.
fn flipped(q: Quat, previous: Quat) -> Quat {
    super::aligned_to(q, previous)
}

/// A [`ReduceRig`] made consistent: every track drives its own bone, cycles cut, parents
/// before children in `order`.
struct Hierarchy {
    parent: Vec<Option<usize>>,
    rest: Vec<BonePose>,
    track_bone: Vec<usize>,
    bone_track: Vec<Option<usize>>,
    /// Depth-first preorder: a bone's subtree is `order[pos[b]..pos[b] + size[b]]`.
    order: Vec<usize>,
    pos: Vec<usize>,
    size: Vec<usize>,
    /// Driven by a track, or below a bone that is.
    animated: Vec<bool>,
}

impl Hierarchy {
    fn new(rig: &ReduceRig, tracks: usize) -> Self {
        let n = rig.parents.len();
        let mut parent: Vec<Option<usize>> = rig
            .parents
            .iter()
            .enumerate()
            .map(|(i, p)| p.filter(|&p| p < n && p != i))
            .collect();
        let mut rest: Vec<BonePose> = (0..n)
            .map(|i| rig.rest.get(i).copied().unwrap_or_default())
            .collect();
        let mut bone_track: Vec<Option<usize>> = vec![None; n];
        let mut track_bone = Vec::with_capacity(tracks);
        for track in 0..tracks {
            let bone = match rig.track_bone.get(track).copied().flatten() {
                Some(b) if b < n && bone_track[b].is_none() => b,
                _ => {
                    parent.push(None);
                    rest.push(BonePose::default());
                    bone_track.push(None);
                    parent.len() - 1
                }
            };
            bone_track[bone] = Some(track);
            track_bone.push(bone);
        }
        cut_cycles(&mut parent);

        let n = parent.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(b);
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = (0..n).rev().filter(|&b| parent[b].is_none()).collect();
        while let Some(b) = stack.pop() {
            order.push(b);
            stack.extend(children[b].iter().rev());
        }
        let mut pos = vec![0; n];
        for (i, &b) in order.iter().enumerate() {
            pos[b] = i;
        }
        let mut size = vec![1; n];
        for &b in order.iter().rev() {
            if let Some(p) = parent[b] {
                size[p] += size[b];
            }
        }
        let mut animated = vec![false; n];
        for &b in &order {
            animated[b] = bone_track[b].is_some() || parent[b].is_some_and(|p| animated[p]);
        }
        Self {
            parent,
            rest,
            track_bone,
            bone_track,
            order,
            pos,
            size,
            animated,
        }
    }

    fn len(&self) -> usize {
        self.parent.len()
    }

    /// Object transforms from local poses, parents first.
    fn objects(&self, locals: &[BonePose], out: &mut [Affine3A]) {
        for &b in &self.order {
            let local = affine(&locals[b]);
            out[b] = match self.parent[b] {
                Some(p) => out[p] * local,
                None => local,
            };
        }
    }
}

/// Makes every parent chain end at a root: walking up from each bone, the first bone met twice
/// loses its parent.
fn cut_cycles(parent: &mut [Option<usize>]) {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; parent.len()];
    let mut path = Vec::new();
    for start in 0..parent.len() {
        let mut b = Some(start);
        while let Some(i) = b {
            match state[i] {
                NEW => {
                    state[i] = ON_PATH;
                    path.push(i);
                    b = parent[i];
                }
                ON_PATH => {
                    parent[i] = None;
                    break;
                }
                _ => break,
            }
        }
        for i in path.drain(..) {
            state[i] = DONE;
        }
    }
}

/// Samples a clip into local poses per rig bone.
struct PoseSampler<'c> {
    clip: &'c Clip,
    cursor: ClipCursor,
    track_poses: Vec<BonePose>,
}

impl<'c> PoseSampler<'c> {
    fn new(clip: &'c Clip, h: &Hierarchy) -> Self {
        Self {
            clip,
            cursor: clip.cursor(),
            track_poses: vec![BonePose::default(); h.track_bone.len()],
        }
    }

    fn locals(&mut self, h: &Hierarchy, t: f32, out: &mut [BonePose]) {
        out.copy_from_slice(&h.rest);
        for (pose, &b) in self.track_poses.iter_mut().zip(&h.track_bone) {
            *pose = h.rest[b];
        }
        self.clip.sample(t, &mut self.cursor, &mut self.track_poses);
        for (pose, &b) in self.track_poses.iter().zip(&h.track_bone) {
            out[b] = *pose;
        }
    }
}

/// The reducer's state: per bone and key time (bone-major, `bone * times.len() + sample`), the
/// original object transform and the current lossy local pose, local and object transforms.
struct Lossy<'h> {
    h: &'h Hierarchy,
    times: Vec<f32>,
    tolerance: f32,
    radius: f32,
    original: Vec<Affine3A>,
    pose: Vec<BonePose>,
    local: Vec<Affine3A>,
    object: Vec<Affine3A>,
    /// Scratch of a check: (sample, new pose, new local) of each changed sample, and the new
    /// object transforms of the subtree at each, in preorder.
    changed: Vec<(usize, BonePose, Affine3A)>,
    objects: Vec<Affine3A>,
}

impl<'h> Lossy<'h> {
    fn new(clip: &Clip, h: &'h Hierarchy, tolerance: f32, radius: f32) -> Self {
        let times = sample_times(clip);
        let (nb, ns) = (h.len(), times.len());
        let mut pose = vec![BonePose::default(); nb * ns];
        let mut local = vec![Affine3A::IDENTITY; nb * ns];
        let mut object = vec![Affine3A::IDENTITY; nb * ns];
        let mut sampler = PoseSampler::new(clip, h);
        let mut locals = vec![BonePose::default(); nb];
        let mut objects = vec![Affine3A::IDENTITY; nb];
        for (s, &t) in times.iter().enumerate() {
            sampler.locals(h, t, &mut locals);
            h.objects(&locals, &mut objects);
            for b in 0..nb {
                pose[b * ns + s] = locals[b];
                local[b * ns + s] = affine(&locals[b]);
                object[b * ns + s] = objects[b];
            }
        }
        Self {
            h,
            times,
            tolerance,
            radius,
            original: object.clone(),
            pose,
            local,
            object,
            changed: Vec::new(),
            objects: Vec::new(),
        }
    }

    /// Reduces every track, parents first; the kept keys per track as `[rotation, translation,
    /// scale]`.
    fn reduce_all(&mut self, clip: &Clip) -> Vec<[Vec<u32>; 3]> {
        let h = self.h;
        let mut kept: Vec<[Vec<u32>; 3]> = vec![Default::default(); clip.tracks().len()];
        for &bone in &h.order {
            let Some(track) = h.bone_track[bone] else {
                continue;
            };
            let channels = channels(&clip.tracks()[track]);
            for kinds in groups(&channels) {
                let keys = self.reduce_group(bone, &Group::new(clip, &channels, &kinds));
                for kind in kinds {
                    kept[track][kind].clone_from(&keys);
                }
            }
        }
        kept
    }

    /// Greedy scan of one group of a bone: extend the segment from the last kept key over the
    /// next key while the check passes, else keep that key.
    fn reduce_group(&mut self, bone: usize, group: &Group) -> Vec<u32> {
        let n = group.len();
        if n <= 2 {
            return (0..n as u32).collect();
        }
        let mut kept = vec![0];
        let (mut a, mut end) = (0, 1);
        // Key `a`'s rotation as the rebuilt clip stores it.
        let mut qa = group.rotation.map_or(Quat::IDENTITY, |r| r[0]);
        while end + 1 < n {
            if self.try_segment(bone, group, &Segment::new(group, a, qa, end + 1)) {
                end += 1;
            } else {
                kept.push(end as u32);
                if let Some(r) = group.rotation {
                    qa = flipped(r[end], qa);
                }
                a = end;
                end += 1;
            }
        }
        kept.push((n - 1) as u32);
        kept
    }

    /// Applies `segment` to `bone` if every sample it changes keeps the bone and its subtree
    /// within tolerance. Only samples in `[times[a], times[j])` can change: before, the sampler
    /// does not reach key `a`'s segment, and from key `j`'s time on it interpolates from `j` or
    /// a later key.
    fn try_segment(&mut self, bone: usize, group: &Group, segment: &Segment) -> bool {
        let h = self.h;
        let ns = self.times.len();
        let (t0, t1) = (group.times[segment.a], group.times[segment.j]);
        let s0 = self.times.partition_point(|&x| x < t0);
        let s1 = self.times.partition_point(|&x| x < t1);
        let first = h.pos[bone];
        let subtree = &h.order[first..first + h.size[bone]];
        self.changed.clear();
        self.objects.clear();
        for s in s0..s1 {
            let base = self.pose[bone * ns + s];
            let pose = segment.pose(group, base, self.times[s]);
            if pose == base {
                continue;
            }
            let local = affine(&pose);
            let start = self.objects.len();
            for (k, &b) in subtree.iter().enumerate() {
                let parent_object = match h.parent[b] {
                    // Inside the subtree: its new transform is in the scratch.
                    Some(p) if k > 0 => self.objects[start + h.pos[p] - first],
                    Some(p) => self.object[p * ns + s],
                    None => Affine3A::IDENTITY,
                };
                let own = if k == 0 {
                    local
                } else {
                    self.local[b * ns + s]
                };
                let object = parent_object * own;
                let error = shell_error(&self.original[b * ns + s], &object, self.radius);
                if error.is_nan() || error > self.tolerance {
                    return false;
                }
                self.objects.push(object);
            }
            self.changed.push((s, pose, local));
        }
        for (i, &(s, pose, local)) in self.changed.iter().enumerate() {
            self.pose[bone * ns + s] = pose;
            self.local[bone * ns + s] = local;
            for (k, &b) in subtree.iter().enumerate() {
                self.object[b * ns + s] = self.objects[i * subtree.len() + k];
            }
        }
        true
    }
}

/// Builds the reduced clip and its stats from the kept keys.
fn finish(clip: &Clip, kept: Vec<[Vec<u32>; 3]>, rig: &ReduceRig, radius: f32) -> Reduced {
    let (rebuilt, kept) = match rebuild(clip, &kept) {
        Ok(rebuilt) => (rebuilt, kept),
        // Unreachable: the kept keys are a subset of a valid clip's. Keep everything.
        Err(_) => (clip.clone(), all_keys(clip)),
    };
    let stats = ReduceStats {
        keys_before: clip.key_count(),
        keys_after: rebuilt.key_count(),
        error: measure_error(clip, &rebuilt, rig, radius),
    };
    Reduced {
        clip: rebuilt,
        kept: kept
            .into_iter()
            .map(|[rotation, translation, scale]| KeptKeys {
                rotation,
                translation,
                scale,
            })
            .collect(),
        stats,
    }
}

fn all_keys(clip: &Clip) -> Vec<[Vec<u32>; 3]> {
    clip.tracks()
        .iter()
        .map(|t| channels(t).map(|c| (0..c.map_or(0, |c| c.len)).collect()))
        .collect()
}

fn pick<T: Copy>(values: &[T], kept: &[u32]) -> Vec<T> {
    kept.iter().map(|&i| values[i as usize]).collect()
}

fn rebuild(clip: &Clip, kept: &[[Vec<u32>; 3]]) -> Result<Clip, ClipError> {
    let keys = kept.iter().flatten().map(Vec::len).sum();
    let mut b = ClipBuilder::new(clip.name.clone()).with_capacity(clip.tracks().len(), keys);
    for (track, kept) in clip.tracks().iter().zip(kept) {
        let channels = channels(track);
        let mut out: [Option<Channel>; 3] = [None; 3];
        for kinds in groups(&channels) {
            let Some(c) = kinds.first().and_then(|&k| channels[k]) else {
                continue;
            };
            let keep = &kept[kinds[0]];
            let times = b.times(&pick(clip.times(c), keep))?;
            for kind in kinds {
                let Some(c) = channels[kind] else { continue };
                out[kind] = Some(match kind {
                    ROTATION => b.unit_rotations(times, &pick(clip.rotation_values(c), keep))?,
                    TRANSLATION => b.translations(times, &pick(clip.vector_values(c), keep))?,
                    _ => b.scales(times, &pick(clip.vector_values(c), keep))?,
                });
            }
        }
        b.track(BoneTrack {
            bone: track.bone.clone(),
            rotation: out[ROTATION],
            translation: out[TRANSLATION],
            scale: out[SCALE],
        });
    }
    let mut rebuilt = b.build();
    // The same as the original's unless it had key times no channel used.
    rebuilt.duration = clip.duration;
    Ok(rebuilt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::animation::BoneRef;

    fn track(name: &str) -> BoneTrack {
        BoneTrack {
            bone: BoneRef {
                name: name.into(),
                id: None,
            },
            rotation: None,
            translation: None,
            scale: None,
        }
    }

    /// A 3-bone chain whose tracks wiggle at different rates, rotation and translation sharing
    /// times on bone 0, separate times elsewhere.
    fn wiggly_clip() -> Clip {
        let mut b = ClipBuilder::new("wiggle");
        let keys = |n: usize, hz: f32| (0..n).map(|k| k as f32 / hz).collect::<Vec<_>>();
        for bone in 0..3 {
            let mut t = track(&format!("b{bone}"));
            let rt = keys(40, 30.0);
            let tt = if bone == 0 {
                rt.clone()
            } else {
                keys(20, 15.0)
            };
            let r_times = b.times(&rt).unwrap();
            let t_times = if bone == 0 {
                r_times
            } else {
                b.times(&tt).unwrap()
            };
            let rotations: Vec<Quat> = rt
                .iter()
                .map(|&t| Quat::from_rotation_z((3.0 * t + bone as f32).sin() * 0.8))
                .collect();
            let translations: Vec<Vec3> = tt
                .iter()
                .map(|&t| Vec3::new(0.4, 0.05 * (5.0 * t).sin(), 0.0))
                .collect();
            t.rotation = Some(b.rotations(r_times, &rotations).unwrap());
            t.translation = Some(b.translations(t_times, &translations).unwrap());
            if bone == 2 {
                let st = b.times(&keys(8, 4.0)).unwrap();
                let scales: Vec<Vec3> = (0..8)
                    .map(|k| Vec3::new(1.0 + 0.1 * k as f32, 1.0, 0.9))
                    .collect();
                t.scale = Some(b.scales(st, &scales).unwrap());
            }
            b.track(t);
        }
        b.build()
    }

    fn chain_rig(clip: &Clip) -> ReduceRig {
        let n = clip.tracks().len();
        ReduceRig {
            parents: (0..n).map(|b| b.checked_sub(1)).collect(),
            rest: vec![BonePose::default(); n],
            track_bone: (0..n).map(Some).collect(),
        }
    }

    #[test]
    fn the_lossy_state_is_what_the_rebuilt_clip_samples_bit_for_bit() {
        let clip = wiggly_clip();
        let rig = chain_rig(&clip);
        for tolerance in [0.0, 1e-4, 1e-3, 1e-2] {
            let h = Hierarchy::new(&rig, clip.tracks().len());
            let mut lossy = Lossy::new(&clip, &h, tolerance, DEFAULT_SHELL_RADIUS);
            let kept = lossy.reduce_all(&clip);
            let rebuilt = rebuild(&clip, &kept).unwrap();
            assert!(rebuilt.key_count() < clip.key_count() || tolerance == 0.0);
            let ns = lossy.times.len();
            let mut sampler = PoseSampler::new(&rebuilt, &h);
            let mut locals = vec![BonePose::default(); h.len()];
            let mut objects = vec![Affine3A::IDENTITY; h.len()];
            for (s, &t) in lossy.times.iter().enumerate() {
                sampler.locals(&h, t, &mut locals);
                h.objects(&locals, &mut objects);
                for (b, object) in objects.iter().enumerate() {
                    assert_eq!(*object, lossy.object[b * ns + s], "bone {b} at {t}");
                    let error = shell_error(&lossy.original[b * ns + s], object, 0.03);
                    assert!(error <= tolerance, "bone {b} at {t}: {error}");
                }
            }
        }
    }

    #[test]
    fn keeping_every_key_rebuilds_the_same_clip() {
        let clip = wiggly_clip();
        assert_eq!(rebuild(&clip, &all_keys(&clip)).unwrap(), clip);
    }

    #[test]
    fn cycles_and_bad_parents_become_roots() {
        // 0 → 1 → 2 → 0 is a cycle, 3 hangs off it, 4 is its own parent, 5's parent is out of
        // range; track 1 duplicates track 0's bone, track 2 names no bone.
        let rig = ReduceRig {
            parents: vec![Some(1), Some(2), Some(0), Some(2), Some(4), Some(9)],
            rest: vec![],
            track_bone: vec![Some(3), Some(3), None],
        };
        let h = Hierarchy::new(&rig, 3);
        assert_eq!(h.len(), 8, "two extra roots for tracks 1 and 2");
        assert_eq!(h.track_bone, vec![3, 6, 7]);
        // Walking up from 0: 0, 1, 2, then 0 again: 0 loses its parent.
        assert_eq!(
            h.parent,
            vec![None, Some(2), Some(0), Some(2), None, None, None, None]
        );
        let mut sorted = h.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
        for &b in &h.order {
            if let Some(p) = h.parent[b] {
                assert!(h.pos[p] < h.pos[b]);
                assert!(
                    h.pos[b] < h.pos[p] + h.size[p],
                    "{b} inside its parent's subtree"
                );
            }
        }
        assert_eq!(h.size[0], 4);
        assert_eq!(
            h.animated,
            vec![false, false, false, true, false, false, true, true]
        );
    }

    #[test]
    fn channels_sharing_times_are_one_group() {
        let mut b = ClipBuilder::new("g");
        let shared = b.times(&[0.0, 1.0]).unwrap();
        let own = b.times(&[0.0, 1.0]).unwrap();
        let mut t = track("a");
        t.rotation = Some(b.rotations(shared, &[Quat::IDENTITY; 2]).unwrap());
        t.translation = Some(b.translations(own, &[Vec3::ZERO; 2]).unwrap());
        t.scale = Some(b.scales(shared, &[Vec3::ONE; 2]).unwrap());
        assert_eq!(groups(&channels(&t)), vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn shell_error_of_simple_offsets() {
        let a = Affine3A::IDENTITY;
        // A translation moves every point by its length.
        let moved = Affine3A::from_translation(Vec3::new(0.0, 3e-3, 4e-3));
        assert!((shell_error(&a, &moved, 0.03) - 5e-3).abs() < 1e-9);
        // Scaling X by 2 moves the points at ±r on X by r.
        let scaled = Affine3A::from_scale(Vec3::new(2.0, 1.0, 1.0));
        assert!((shell_error(&a, &scaled, 0.03) - 0.03).abs() < 1e-9);
        assert_eq!(shell_error(&a, &a, 0.03), 0.0);
    }

    #[test]
    fn p99_is_the_nearest_rank() {
        let s = ErrorStats::of((1..=200).map(|i| i as f32).collect());
        // ceil(0.99 × 200) = 198: the 198th smallest.
        assert_eq!((s.max, s.p99, s.samples), (200.0, 198.0, 200));
        assert_eq!(ErrorStats::of(vec![]), ErrorStats::default());
        assert!(ErrorStats::of(vec![1.0, f32::NAN]).max.is_nan());
    }
}
