//! The skeletal playback system: [`SkeletalClip`] says which clip a character plays, its
//! [`Playback`] says where; rigplay's core sampler poses the character's bones at that time and
//! writes their transforms itself (no AnimationGraph evaluation), blending a clip that fades
//! out.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::layers::LayerBinding;
use super::{
    ClipInfo, ClipLayers, ClipRegistry, Retarget, RetargetMode, RigBone, RootMotion,
    UnmatchedTracks, step_displacement,
};
use crate::anim::pose::{self, LocalPose, PoseClip, PoseCursor, PoseSkeleton};
use crate::anim::retarget::{
    HumanoidBone, RestAlignment, RestPose, RetargetScratch, RetargetSource, Retargeter, bone_pairs,
};
use crate::anim::{BonePose, ClipCursor, PlayMode, blend, held_time, step_time};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::Playback;
use bevy::animation::AnimationTargetId;
use bevy::ecs::change_detection::{ContiguousMut, Tick};
use bevy::math::Affine3A;
use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy::utils::Parallel;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The clip a character plays with rigplay's sampler (on a [`crate::plugin::GtaSkeleton`], a
/// [`crate::plugin::FlatSkeleton`], a [`super::Retarget`] hierarchy, …); its [`Playback`] (added
/// with it) is the playhead. Setting `clip` switches at once, keeping the playhead's time;
/// [`SkeletalClip::cross_fade`] blends.
#[derive(Component, Debug, Clone, Reflect)]
#[reflect(Component)]
#[require(Playback)]
pub struct SkeletalClip {
    /// The clip, as loaded by a rigplay loader (or registered in the [`ClipRegistry`]).
    pub clip: Handle<AnimationClip>,
    #[reflect(ignore)]
    fade: Option<Fade>,
}

/// A clip being blended out over `duration` seconds.
#[derive(Debug, Clone)]
struct Fade {
    clip: Handle<AnimationClip>,
    /// The outgoing clip's own playhead: taken from the character's [`Playback`] when the fade
    /// starts (`started` false until then).
    time: f32,
    speed: f32,
    mode: PlayMode,
    started: bool,
    elapsed: f32,
    duration: f32,
    /// Not bound yet by the playback system.
    fresh: bool,
    /// Started while another fade ran: the pose on screen fades out, not `clip`.
    from_pose: bool,
    /// A held blend ([`SkeletalClip::hold_blend`]): `clip`'s weight, kept until cleared.
    held: Option<f32>,
}

impl Fade {
    /// Weight of the outgoing clip: 1 when the fade starts, 0 once `duration` has passed.
    fn old_weight(&self) -> f32 {
        if let Some(w) = self.held {
            return w.clamp(0.0, 1.0);
        }
        if self.duration > 0.0 {
            1.0 - (self.elapsed / self.duration).min(1.0)
        } else {
            0.0
        }
    }
}

impl SkeletalClip {
    /// Plays `clip`; the playhead is the entity's [`Playback`] (looped from the start unless
    /// one is given).
    pub fn new(clip: Handle<AnimationClip>) -> Self {
        Self { clip, fade: None }
    }

    /// Switches to `clip`, blending from the current pose over `duration` seconds (the games
    /// blend by a weighted sum of the clips' poses, normalised: §3.3 of
    /// `docs/formats/ifp.md`). The playhead starts the new clip from 0 in the next playback
    /// update; the old clip keeps playing at its own time, speed and mode while it fades.
    pub fn cross_fade(&mut self, clip: Handle<AnimationClip>, duration: f32) {
        let from_pose = self.fade.is_some();
        self.fade = Some(Fade {
            clip: std::mem::replace(&mut self.clip, clip),
            time: 0.0,
            speed: 0.0,
            mode: PlayMode::Loop,
            started: false,
            elapsed: 0.0,
            duration: duration.max(0.0),
            fresh: true,
            from_pose,
            held: None,
        });
    }

    /// Blends `other` into the clip at `weight` (0: only the clip, 1: only `other`) and holds it
    /// there until [`SkeletalClip::clear_blend`] or a cross-fade: `other` is shown at the
    /// character's playhead time (wrapped or held by its play mode into `other`'s length), so
    /// playing, seeking and scrubbing move both. Called again with the same `other`, only the
    /// weight changes.
    pub fn hold_blend(&mut self, other: Handle<AnimationClip>, weight: f32) {
        if let Some(f) = self
            .fade
            .as_mut()
            .filter(|f| f.held.is_some() && f.clip == other)
        {
            f.held = Some(weight);
            return;
        }
        self.fade = Some(Fade {
            clip: other,
            time: 0.0,
            speed: 0.0,
            mode: PlayMode::Loop,
            started: false,
            elapsed: 0.0,
            duration: 0.0,
            fresh: true,
            from_pose: false,
            held: Some(weight),
        });
    }

    /// Ends a held blend at once.
    pub fn clear_blend(&mut self) {
        if self.fade.as_ref().is_some_and(|f| f.held.is_some()) {
            self.fade = None;
        }
    }

    /// The clip held blended in and its weight, if any.
    pub fn held_blend(&self) -> Option<(&Handle<AnimationClip>, f32)> {
        let f = self.fade.as_ref()?;
        Some((&f.clip, f.held?))
    }

    /// Weight of the clip being faded out, if any.
    pub fn fade_weight(&self) -> Option<f32> {
        self.fade.as_ref().map(Fade::old_weight)
    }
}

/// Clips laid out for the pose pipeline, by clip and by the bones and rests of the characters
/// that play them (every character of one skeleton shares one layout). An entry goes when
/// nothing but the cache holds its clip's registry entry.
#[derive(Resource, Default)]
pub(crate) struct PoseLayouts(
    HashMap<(AssetId<AnimationClip>, u64), (Arc<ClipInfo>, Arc<PoseClip>)>,
);

impl PoseLayouts {
    /// `info`'s clip laid out for `bones`, with `tracks` saying which bone each track drives.
    pub(super) fn get(
        &mut self,
        id: AssetId<AnimationClip>,
        info: &Arc<ClipInfo>,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        tracks: &[Option<usize>],
    ) -> Option<Arc<PoseClip>> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (_, rest, target) in bones {
            target.hash(&mut h);
            for v in rest
                .rotation
                .to_array()
                .into_iter()
                .chain(rest.translation.to_array())
                .chain(rest.scale.to_array())
            {
                v.to_bits().hash(&mut h);
            }
        }
        tracks.hash(&mut h);
        let key = (id, h.finish());
        if let Some((i, c)) = self.0.get(&key)
            && Arc::ptr_eq(i, info)
        {
            return Some(c.clone());
        }
        if self.0.len() > 64 {
            self.0.retain(|_, (i, _)| Arc::strong_count(i) > 1);
        }
        let rests: Vec<BonePose> = bones.iter().map(|b| b.1).collect();
        let skeleton = PoseSkeleton::new(&vec![None; bones.len()], &rests).ok()?;
        let clip = Arc::new(PoseClip::new(&info.clip, &skeleton, tracks));
        self.0.insert(key, (info.clone(), clip.clone()));
        Some(clip)
    }
}

/// Counts the bones that appeared anywhere, so that characters bind again when it moves (cheaper
/// than scanning every bone for `Added<RigBone>` each frame). Each binding system remembers the
/// count it saw last.
#[derive(Resource, Default)]
pub(crate) struct BonesChanged(pub(crate) u64);

pub(crate) fn note_new_bone(_: On<Add, RigBone>, mut changed: ResMut<BonesChanged>) {
    changed.0 = changed.0.wrapping_add(1);
}

/// On a bone that a character's clip drives through the pose pipeline: the character and the
/// bone's index among its bones, so that [`write_posed_bones`] can walk the bones in the order
/// the world stores them (one look-up per character, not one per bone).
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PosedBy {
    pub(super) character: Entity,
    pub(super) bone: u32,
}

/// A set of bone indices: the first 64 in the binding itself (what [`write_posed_bones`] reads
/// for every bone of most skeletons), the rest beside it.
#[derive(Debug, Clone, Default)]
pub(super) struct BoneSet {
    low: u64,
    high: Vec<u64>,
}

impl BoneSet {
    /// Adds `b`; whether it was in already.
    pub(super) fn insert(&mut self, b: usize) -> bool {
        let (word, bit) = if b < 64 {
            (&mut self.low, b)
        } else {
            let w = (b - 64) / 64;
            if self.high.len() <= w {
                self.high.resize(w + 1, 0);
            }
            (&mut self.high[w], b % 64)
        };
        let had = *word >> bit & 1 == 1;
        *word |= 1 << bit;
        had
    }

    /// The set as a loop reads it: its first word copied (kept in a register, where a loop
    /// that writes transforms would read it from the set again for every bone).
    #[inline]
    pub(super) fn view(&self) -> BoneSetView<'_> {
        BoneSetView {
            low: self.low,
            high: &self.high,
        }
    }
}

/// A [`BoneSet`] read in a loop ([`BoneSet::view`]).
#[derive(Clone, Copy)]
pub(super) struct BoneSetView<'a> {
    low: u64,
    high: &'a [u64],
}

impl BoneSetView<'_> {
    #[inline]
    pub(super) fn contains(self, b: usize) -> bool {
        let word = if b < 64 {
            self.low
        } else {
            self.high.get((b - 64) / 64).copied().unwrap_or(0)
        };
        word >> (b % 64) & 1 == 1
    }
}

/// What the playback systems read of a character on its common frame (bound before, playing
/// on, no fade): kept apart from its [`PlaybackBinding`] and small, so that the passes over a
/// thousand characters read a cache line or two of each and, on a timeline clip, never the
/// binding.
#[derive(Component, Default)]
pub(crate) struct PoseSource {
    /// What the character was last bound to, while its clip's entry is found.
    bound: Option<Bound>,
    /// The clip is laid out on a shared timeline and not retargeted: [`write_posed_bones`]
    /// samples it.
    timeline: bool,
    /// How the driven bones are posed this frame.
    pub(super) pass: BonePass,
    /// The clip laid out for the character's bones ([`PlaybackBinding::layout`]).
    layout: Option<Arc<PoseClip>>,
    /// The root bone and its held axes, when the clip's root motion is extracted.
    hold: Option<(usize, RootHold)>,
    /// The bones the clip drives (tagged [`PosedBy`]).
    pub(super) driven: BoneSet,
    /// On a shared-timeline clip, the segment sampled last
    /// ([`PoseCursor::timeline_segment`]).
    segment: AtomicU32,
}

/// What a character is bound to: its clip, the registry's generation then, whether it is
/// retargeted, and the clip's duration.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    clip: AssetId<AnimationClip>,
    generation: u64,
    retargeted: bool,
    duration: f32,
}

/// How [`write_posed_bones`] poses a character's bones this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum BonePass {
    /// Not at all: [`apply_skeletal`] writes them, or nothing does.
    #[default]
    Off,
    /// From the pose [`sample_skeletal`] sampled into the binding (a clip laid out as streams,
    /// whose per-instance cache must move forward with the character), or that
    /// [`super::layers`] mixed from a character's layers.
    Sampled,
    /// It samples the clip itself as it reaches the character's bones (a clip on a shared
    /// timeline: sampling needs no state of the character's, and the pose is written while it
    /// is still in the cache).
    Sample,
}

/// What a character's playback is bound to: its bones and the clip's tracks on them.
#[derive(Component, Default)]
pub(crate) struct PlaybackBinding {
    clip: Option<AssetId<AnimationClip>>,
    /// The clip's registry entry, kept while the registry's generation stays the same.
    info: Option<Arc<ClipInfo>>,
    generation: u64,
    /// Bone entities of the character with their rest poses and target ids.
    bones: Vec<(Entity, BonePose, AnimationTargetId)>,
    /// Per track of the current clip, the bone index it drives.
    tracks: Vec<Option<usize>>,
    cursor: ClipCursor,
    /// Per track, the pose sampled last; channels the clip lacks keep the bone's rest values.
    track_poses: Vec<BonePose>,
    /// Per bone, the pose being written on frames that write every bone.
    pose: Vec<BonePose>,
    animated: Vec<bool>,
    /// The clip fading out, bound to the same bones, while a cross-fade lasts.
    fading: Option<Box<FadingBinding>>,
    /// On a rest-compensated [`Retarget`] character: its hierarchy, and the current clip
    /// retargeted onto it (when the clip knows its source skeleton). Boxed, as the fade above:
    /// the binding stays small, so that the systems walking every character each frame read
    /// few cache lines of each.
    target: Option<Arc<TargetRig>>,
    retarget: Option<Box<Retargeted>>,
    /// Bound (again) this frame: every bone is written.
    rebound: bool,
    /// Sampled at this frame's playhead by [`sample_skeletal`] (the common frame: no binding,
    /// no fade), so [`apply_skeletal`] only writes the bones.
    presampled: bool,
    /// Not retargeted: the clip laid out for the character's bones (shared by every character
    /// with the same bones and rests), its sampling cache, the sampled pose, and the bones the
    /// clip drives (written each frame, tagged [`PosedBy`]).
    layout: Option<Arc<PoseClip>>,
    pose_cursor: PoseCursor,
    local: LocalPose,
    /// The clip's entry was found this frame, so the character is posed.
    ready: bool,
    /// The clip it was bound to is gone (removed from its file, or unloaded): its bones go back
    /// to rest in the next apply.
    to_rest: bool,
}

/// The outgoing clip of a cross-fade: its registry entry, tracks on the character's bones, a
/// cursor and per-track poses kept from frame to frame like the current clip's.
struct FadingBinding {
    info: Arc<ClipInfo>,
    tracks: Vec<Option<usize>>,
    cursor: ClipCursor,
    track_poses: Vec<BonePose>,
    pose: Vec<BonePose>,
    animated: Vec<bool>,
    /// When a fade started during another one: the pose shown then, per bone, which fades out
    /// instead of a clip.
    snapshot: Option<Vec<BonePose>>,
    retarget: Option<Retargeted>,
}

impl FadingBinding {
    fn new(
        info: Arc<ClipInfo>,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        snapshot: Option<Vec<BonePose>>,
        target: Option<&TargetRig>,
    ) -> Self {
        let tracks = bind_tracks(&info, bones);
        Self {
            track_poses: rest_track_poses(&tracks, bones),
            cursor: info.clip.cursor(),
            pose: Vec::with_capacity(bones.len()),
            animated: vec![false; bones.len()],
            retarget: target.and_then(|t| Retargeted::new(&info, t, bones)),
            tracks,
            info,
            snapshot,
        }
    }

    /// The outgoing pose per bone at `time` of the clip (or the snapshot), into `self.pose`.
    fn pose_at(&mut self, time: f32, bones: &[(Entity, BonePose, AnimationTargetId)]) {
        self.pose.clear();
        if let Some(snapshot) = &self.snapshot {
            self.pose.extend_from_slice(snapshot);
            self.animated.iter_mut().for_each(|a| *a = true);
            return;
        }
        self.pose.extend(bones.iter().map(|(_, rest, _)| *rest));
        self.animated.iter_mut().for_each(|a| *a = false);
        if let Some(r) = &mut self.retarget {
            r.sample(&self.info, time, &mut self.cursor);
            r.scatter(bones, &mut self.pose, &mut self.animated);
            return;
        }
        sample_tracks(&self.info, time, &mut self.cursor, &mut self.track_poses);
        scatter(
            &self.tracks,
            &self.track_poses,
            &mut self.pose,
            &mut self.animated,
        );
    }
}

/// A rest-compensated [`Retarget`] character's hierarchy as the retargeting maths takes it:
/// every descendant (named or not) with its rest, its parent among them, its name, and the
/// character's settings. Built when the character is bound.
pub(crate) struct TargetRig {
    rest: RestPose,
    /// Per node, its own and its ancestors' scales (what its children's offsets are scaled by).
    child_scales: Vec<Vec3>,
    names: Vec<String>,
    user: Vec<(String, String)>,
    from_gltf: Quat,
    up: Vec3,
    alignment: RestAlignment,
}

impl TargetRig {
    /// `None` when the hierarchy cannot be a skeleton (it always can, coming from Bevy's
    /// parent links; kept for safety).
    fn new(
        retarget: &Retarget,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        parents: Vec<Option<usize>>,
        names: Vec<String>,
    ) -> Option<Self> {
        let trs: Vec<(Vec3, Quat, Vec3)> = bones
            .iter()
            .map(|(_, p, _)| (p.translation, p.rotation, p.scale))
            .collect();
        let (rest, child_scales) = RestPose::from_trs(parents, &trs).ok()?;
        Some(Self {
            rest,
            child_scales,
            names,
            user: retarget.bone_map.clone(),
            from_gltf: retarget.axes.from_gltf(),
            up: retarget.axes.up(),
            alignment: retarget.alignment(),
        })
    }
}

/// One clip retargeted onto a [`TargetRig`]: the source pose it samples into, the
/// [`Retargeter`], and which of the character's bones it writes.
pub(super) struct Retargeted {
    source: Arc<RetargetSource>,
    retargeter: Retargeter,
    /// The character's bones the clip drives.
    mapped: Vec<usize>,
    /// The hips' bone and the inverse of their parent's rest world transform (model space to
    /// the hips' local translation).
    hips: Option<(usize, Affine3A)>,
    /// Per track, the source bone's pose sampled last (channels the clip lacks at rest).
    track_poses: Vec<BonePose>,
    source_pose: Vec<(Vec3, Quat)>,
    out: Vec<Quat>,
    hips_position: Option<Vec3>,
    scratch: RetargetScratch,
    /// Source axes to the character's (for root motion).
    basis: Quat,
}

impl Retargeted {
    fn new(
        info: &ClipInfo,
        target: &TargetRig,
        bones: &[(Entity, BonePose, AnimationTargetId)],
    ) -> Option<Self> {
        let source = info.source.clone()?;
        let source_names: Vec<&str> = source.names.iter().map(String::as_str).collect();
        let target_names: Vec<&str> = target.names.iter().map(String::as_str).collect();
        let (pairs, _) = bone_pairs(&source_names, &target_names, &target.user);
        let basis = (target.from_gltf * source.to_gltf).normalize();
        let mut retargeter =
            Retargeter::with_alignment(&source.rest, &target.rest, &pairs, basis, target.alignment)
                .ok()?;
        let source_hips = source.bone_map().1.get(HumanoidBone::Hips);
        let target_hips = source_hips.and_then(|s| retargeter.pairs().find(|p| p.0 == s));
        let mut hips = None;
        if let (Some(s), Some((_, t))) = (source_hips, target_hips) {
            retargeter = retargeter.with_hips(s, t, target.up);
            let world = target.rest.world().ok()?;
            let parent = target.rest.parents[t].map_or(Affine3A::IDENTITY, |p| {
                Affine3A::from_scale_rotation_translation(
                    target.child_scales[p],
                    world[p].1,
                    world[p].0,
                )
            });
            hips = Some((t, parent.inverse()));
        }
        let track_poses = (0..info.clip.tracks().len())
            .map(|i| {
                let (translation, rotation) = source.track_rest(i);
                BonePose {
                    translation,
                    rotation,
                    scale: Vec3::ONE,
                }
            })
            .collect();
        Some(Self {
            mapped: retargeter.pairs().map(|p| p.1).collect(),
            hips,
            track_poses,
            source_pose: source.rest.local.clone(),
            out: bones.iter().map(|(_, p, _)| p.rotation).collect(),
            hips_position: None,
            scratch: RetargetScratch::default(),
            basis,
            retargeter,
            source,
        })
    }

    /// Samples the clip at `time` and retargets the pose.
    fn sample(&mut self, info: &ClipInfo, time: f32, cursor: &mut ClipCursor) {
        sample_tracks(info, time, cursor, &mut self.track_poses);
        for (track, p) in self.track_poses.iter().enumerate() {
            if let Some(Some(b)) = self.source.tracks.get(track)
                && let Some(s) = self.source_pose.get_mut(*b)
            {
                *s = (p.translation, p.rotation);
            }
        }
        self.hips_position =
            self.retargeter
                .apply_pose(&self.source_pose, &mut self.scratch, &mut self.out);
    }

    /// The local pose of mapped bone `b` (rest translation and scale, the retargeted rotation;
    /// the hips at their retargeted position).
    fn bone_pose(&self, b: usize, rest: &BonePose) -> BonePose {
        let mut pose = BonePose {
            rotation: self.out[b],
            ..*rest
        };
        if let (Some((hips, parent_inverse)), Some(at)) = (self.hips, self.hips_position)
            && hips == b
        {
            pose.translation = parent_inverse.transform_point3(at);
        }
        pose
    }

    /// Writes the retargeted bones into `pose` and marks them animated.
    fn scatter(
        &self,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        pose: &mut [BonePose],
        animated: &mut [bool],
    ) {
        for &b in &self.mapped {
            pose[b] = self.bone_pose(b, &bones[b].1);
            animated[b] = true;
        }
    }

    /// The root's movement from `from` to `to` in the character's axes, scaled like the hips.
    fn root_motion(&self, gta_displacement: Vec3) -> Vec3 {
        self.basis * (gta_displacement * self.retargeter.hips_scale())
    }
}

pub(super) fn bind_tracks(
    info: &ClipInfo,
    bones: &[(Entity, BonePose, AnimationTargetId)],
) -> Vec<Option<usize>> {
    info.tracks
        .iter()
        .map(|(target, _)| bones.iter().position(|(_, _, t)| t == target))
        .collect()
}

/// Per track, the rest pose of the bone it drives (identity when it drives none): the values
/// that the channels a clip lacks keep.
fn rest_track_poses(
    tracks: &[Option<usize>],
    bones: &[(Entity, BonePose, AnimationTargetId)],
) -> Vec<BonePose> {
    tracks
        .iter()
        .map(|b| b.map_or_else(BonePose::default, |b| bones[b].1))
        .collect()
}

/// Samples `info`'s clip at `time` into `track_poses` (one per track), with the root's
/// extracted axes held at the first key.
pub(super) fn sample_tracks(
    info: &ClipInfo,
    time: f32,
    cursor: &mut ClipCursor,
    track_poses: &mut [BonePose],
) {
    info.clip.sample(time, cursor, track_poses);
    if let (Some(hold), Some(root)) = (RootHold::of(info), info.root_track) {
        let p = &mut track_poses[root];
        p.translation = hold.apply(p.translation);
    }
}

/// Where root motion takes axes out of a clip's root translation: those axes, held at the
/// clip's first root key.
#[derive(Debug, Clone, Copy)]
pub(super) struct RootHold {
    axes: Vec3,
    first: Vec3,
}

impl RootHold {
    /// `None` when nothing is extracted or the clip's root has no translation.
    pub(super) fn of(info: &ClipInfo) -> Option<Self> {
        let axes = info.settings.root_motion.extracted_axes();
        let channel = info
            .root_track
            .and_then(|r| info.clip.tracks()[r].translation)?;
        (axes != Vec3::ZERO).then(|| RootHold {
            axes,
            first: info.clip.vector_values(channel)[0],
        })
    }

    fn apply(&self, translation: Vec3) -> Vec3 {
        translation * (Vec3::ONE - self.axes) + self.first * self.axes
    }

    /// Holds the axes of root bone `bone` in `pose`, just sampled from `layout` (as
    /// [`sample_tracks`] does for tracks).
    pub(super) fn hold_in(&self, layout: &PoseClip, bone: usize, pose: &mut LocalPose) {
        layout.map_joint(bone, pose, |mut p| {
            p.translation = self.apply(p.translation);
            p
        });
    }
}

/// Copies the sampled tracks onto the bones they drive and marks those bones animated.
fn scatter(
    tracks: &[Option<usize>],
    track_poses: &[BonePose],
    pose: &mut [BonePose],
    animated: &mut [bool],
) {
    for (b, p) in tracks.iter().zip(track_poses) {
        if let Some(b) = *b {
            pose[b] = *p;
            animated[b] = true;
        }
    }
}

/// The descriptions of the clip's tracks that drive no bone: by name, those whose target no
/// bone has; retargeted, those whose source bone reaches no bone of the character (neither
/// paired nor above a paired bone).
pub(super) fn unmatched_tracks(
    info: &ClipInfo,
    tracks: &[Option<usize>],
    retarget: Option<&Retargeted>,
) -> Vec<String> {
    (0..info.tracks.len())
        .filter(|&i| match retarget {
            Some(r) => !r
                .source
                .tracks
                .get(i)
                .copied()
                .flatten()
                .is_some_and(|s| r.retargeter.uses_source(s)),
            None => tracks.get(i).copied().flatten().is_none(),
        })
        .map(|i| info.tracks[i].1.clone())
        .collect()
}

/// Binds each character to its clip (again when the clip, its registry entry or the bones
/// change), starts requested cross-fades from the playhead, and tells the playhead the clip's
/// duration.
pub(crate) fn prepare_skeletal(
    mut commands: Commands,
    registry: Res<ClipRegistry>,
    mut characters: Query<
        (
            Entity,
            &mut Playback,
            &mut SkeletalClip,
            Option<&mut PlaybackBinding>,
            Option<&mut PoseSource>,
            Option<Ref<Retarget>>,
        ),
        Without<ClipLayers>,
    >,
    rig_bones: Query<&RigBone>,
    bones_changed: Res<BonesChanged>,
    mut bones_seen: Local<u64>,
    children: Query<&Children>,
    nodes: Query<(&Transform, Option<&Name>, &ChildOf)>,
    mut reported: Local<std::collections::HashSet<(Entity, AssetId<AnimationClip>)>>,
    mut layouts: ResMut<PoseLayouts>,
    posed_by: Query<&PosedBy>,
) {
    let generation = registry.generation();
    // Characters are bound again when their clip changes or bones appeared anywhere.
    let bones_added = bones_changed.0 != *bones_seen;
    *bones_seen = bones_changed.0;
    for (entity, mut playback, mut skeletal, binding, source, retarget) in &mut characters {
        let (Some(mut binding), Some(mut source)) = (binding, source) else {
            commands
                .entity(entity)
                .insert((PlaybackBinding::default(), PoseSource::default()));
            playback.duration = None;
            continue;
        };
        let retarget = retarget.filter(|r| r.mode == RetargetMode::RestCompensated);
        let id = skeletal.clip.id();
        let fade_asked = skeletal.fade.as_ref().is_some_and(|f| !f.started);
        // The common frame: the clip, its registry entry and the bones as last frame. Read
        // from the pose source alone: the binding stays out of the cache.
        if !bones_added
            && !fade_asked
            && !retarget.as_ref().is_some_and(|r| r.is_changed())
            && let Some(bound) = source.bound.filter(|b| {
                b.generation == generation && b.clip == id && b.retargeted == retarget.is_some()
            })
        {
            if playback.duration != Some(bound.duration) {
                playback.duration = Some(bound.duration);
            }
            // On a timeline clip with no fade, the bone pass samples it.
            let pass = if source.timeline && skeletal.fade.is_none() {
                BonePass::Sample
            } else {
                BonePass::Off
            };
            if source.pass != pass {
                source.pass = pass;
            }
            continue;
        }
        source.pass = BonePass::Off;
        // A fade asked for since the last frame: the outgoing clip takes the playhead as it
        // was, and the playhead starts the new clip.
        if let Some(fade) = skeletal.fade.as_mut().filter(|f| !f.started) {
            fade.time = playback.time;
            fade.speed = playback.rate();
            fade.mode = playback.mode;
            fade.started = true;
            // A held blend starts the other clip beside the playhead, which goes on.
            if fade.held.is_none() {
                playback.time = 0.0;
                playback.restart();
            }
        }
        // The registry is looked up only when it changed or the clip did.
        let cached = binding
            .info
            .clone()
            .filter(|_| binding.generation == generation && binding.clip == Some(id));
        let Some(info) = cached.or_else(|| registry.get(id)) else {
            // A clip it played is gone (a reload dropped it from the file): rest pose, said
            // once. Not loaded yet: the playhead waits.
            if binding.info.take().is_some() && binding.clip == Some(id) {
                warn!(
                    "{entity}: its clip is no longer loaded (gone from its file?): the character holds its rest pose"
                );
                binding.to_rest = true;
            }
            binding.ready = false;
            source.bound = None;
            playback.duration = None;
            continue;
        };
        binding.generation = generation;
        // Bind (again) when the clip changed (a cross-fade does, on its first frame), was
        // reloaded, or the character got new bones.
        let rebound = bones_added
            || binding.clip != Some(id)
            || !binding.info.as_ref().is_some_and(|i| Arc::ptr_eq(i, &info))
            || retarget.as_ref().is_some_and(|r| r.is_changed())
            || retarget.is_some() != binding.target.is_some();
        if binding.clip != Some(id) && binding.clip.is_some() {
            // A new clip set directly (not through `cross_fade`) starts playing afresh.
            playback.restart();
        }
        if rebound {
            let bones: Vec<_>;
            if let Some(retarget) = &retarget {
                // The whole hierarchy (unnamed nodes too: their rests place the bones under
                // them); a node rigplay does not drive rests where it is.
                let unbound = AnimationTargetId::from_name(&Name::new("rigplay:unbound-node"));
                bones = children
                    .iter_descendants(entity)
                    .filter_map(|e| {
                        let (transform, _, _) = nodes.get(e).ok()?;
                        Some(match rig_bones.get(e) {
                            Ok(r) => (e, BonePose::from(r.rest), r.target),
                            Err(_) => (e, BonePose::from(*transform), unbound),
                        })
                    })
                    .collect();
                let index: HashMap<Entity, usize> =
                    bones.iter().enumerate().map(|(i, b)| (b.0, i)).collect();
                let (parents, names): (Vec<_>, Vec<_>) = bones
                    .iter()
                    .map(|(e, _, _)| match nodes.get(*e) {
                        Ok((_, name, child_of)) => (
                            index.get(&child_of.parent()).copied(),
                            name.map_or_else(String::new, |n| n.as_str().to_owned()),
                        ),
                        Err(_) => (None, String::new()),
                    })
                    .unzip();
                binding.target = TargetRig::new(retarget, &bones, parents, names).map(Arc::new);
            } else {
                bones = children
                    .iter_descendants(entity)
                    .filter_map(|e| {
                        rig_bones
                            .get(e)
                            .ok()
                            .map(|r| (e, BonePose::from(r.rest), r.target))
                    })
                    .collect();
                binding.target = None;
            }
            binding.retarget = binding
                .target
                .as_deref()
                .and_then(|t| Retargeted::new(&info, t, &bones))
                .map(Box::new);
            binding.tracks = if binding.retarget.is_some() {
                vec![None; info.tracks.len()]
            } else {
                bind_tracks(&info, &bones)
            };
            binding.track_poses = rest_track_poses(&binding.tracks, &bones);
            binding.cursor = info.clip.cursor();
            binding.layout = if binding.retarget.is_none() {
                layouts.get(id, &info, &bones, &binding.tracks)
            } else {
                None
            };
            if let Some(layout) = &binding.layout {
                binding.pose_cursor = PoseCursor::new(layout);
                binding.local = LocalPose::new(bones.len());
            }
            let mut driven = BoneSet::default();
            if binding.layout.is_some() {
                for &b in binding.tracks.iter().flatten() {
                    if driven.insert(b) {
                        continue;
                    }
                    let by = PosedBy {
                        character: entity,
                        bone: b as u32,
                    };
                    if posed_by.get(bones[b].0).ok() != Some(&by) {
                        commands.entity(bones[b].0).try_insert(by);
                    }
                }
            }
            source.driven = driven;
            // The root's extracted axes held at the clip's first key, on the bone of the root
            // track.
            let root_bone = info
                .root_track
                .and_then(|r| binding.tracks.get(r).copied().flatten());
            source.layout = binding.layout.clone();
            source.timeline = binding
                .layout
                .as_ref()
                .is_some_and(|l| l.timeline_keys().is_some());
            source.hold = root_bone.zip(RootHold::of(&info));
            source.segment = AtomicU32::new(0);
            binding.animated = vec![false; bones.len()];
            // The tracks that drive no bone, reported once per character and clip (not while the
            // hierarchy has no bones yet: a scene still spawning).
            if !bones.is_empty() {
                let missing = unmatched_tracks(&info, &binding.tracks, binding.retarget.as_deref());
                if !missing.is_empty() && reported.insert((entity, id)) {
                    warn!(
                        "{entity}: {} tracks of the clip match no bone and are ignored: {}",
                        missing.len(),
                        missing.join(", ")
                    );
                }
                commands.entity(entity).insert(UnmatchedTracks(missing));
            }
            binding.bones = bones;
            binding.clip = Some(id);
            binding.info = Some(info.clone());
        }
        // A later frame's rebinding adds to one not yet shown.
        binding.rebound |= rebound;
        binding.ready = true;
        source.bound = Some(Bound {
            clip: id,
            generation,
            retargeted: binding.target.is_some(),
            duration: info.clip.duration(),
        });
        playback.duration = Some(info.clip.duration());
    }
}

/// Samples the clip of every character on its common frame (bound before, no fade) at its
/// playhead's time, spread over the task pool's threads: each character touches only its own
/// components. [`apply_skeletal`] then writes the bones' transforms.
pub(crate) fn sample_skeletal(
    mut characters: Query<
        (
            &Playback,
            &SkeletalClip,
            &mut PlaybackBinding,
            &mut PoseSource,
        ),
        Without<ClipLayers>,
    >,
) {
    characters
        .par_iter_mut()
        .for_each(|(playback, skeletal, mut binding, mut source)| {
            // Left to the bone pass by `prepare_skeletal` (the binding is not read).
            if source.pass == BonePass::Sample {
                return;
            }
            let binding = &mut *binding;
            binding.presampled = false;
            if source.pass != BonePass::Off {
                source.pass = BonePass::Off;
            }
            if !binding.ready || binding.rebound || skeletal.fade.is_some() {
                return;
            }
            let Some(info) = binding.info.as_deref() else {
                return;
            };
            match (binding.retarget.as_mut(), &binding.layout) {
                (Some(r), _) => r.sample(info, playback.time, &mut binding.cursor),
                (None, Some(_)) if source.timeline => {
                    source.pass = BonePass::Sample;
                }
                (None, Some(layout)) => {
                    pose::sample(
                        layout,
                        playback.time,
                        &mut binding.pose_cursor,
                        &mut binding.local,
                    );
                    if let Some((bone, hold)) = source.hold {
                        hold.hold_in(layout, bone, &mut binding.local);
                    }
                    source.pass = BonePass::Sampled;
                }
                (None, None) => sample_tracks(
                    info,
                    playback.time,
                    &mut binding.cursor,
                    &mut binding.track_poses,
                ),
            }
            binding.presampled = true;
        });
}

/// Poses every bound character at its playhead's time: root motion, the clip, and a clip
/// fading out blended in; then writes the bones' transforms.
pub(crate) fn apply_skeletal(
    time: Res<Time>,
    registry: Res<ClipRegistry>,
    mut characters: Query<
        (
            Entity,
            &Playback,
            &mut SkeletalClip,
            &mut PlaybackBinding,
            &PoseSource,
            Option<&mut RootMotion>,
        ),
        Without<ClipLayers>,
    >,
    mut transforms: Query<&mut Transform>,
) {
    let dt = time.delta_secs();
    for (entity, playback, mut skeletal, mut binding, source, root_motion) in &mut characters {
        // The common frame on the pose pipeline: the bones are [`write_posed_bones`]'s, and on
        // a timeline clip the binding is not read. (A character going to rest is never on it.)
        if source.pass != BonePass::Off && root_motion.is_none() {
            if source.pass == BonePass::Sampled && binding.presampled {
                binding.presampled = false;
            }
            continue;
        }
        if binding.to_rest {
            binding.to_rest = false;
            for (e, rest, _) in &binding.bones {
                if let Ok(mut t) = transforms.get_mut(*e) {
                    *t = Transform::from(*rest);
                }
            }
        }
        let Some(info) = binding.info.clone().filter(|_| binding.ready) else {
            continue;
        };
        let rebound = std::mem::take(&mut binding.rebound);
        // (On a timeline clip the bone pass samples the pose.)
        let presampled = std::mem::take(&mut binding.presampled) || source.pass == BonePass::Sample;
        let now = playback.time;
        if let Some(mut motion) = root_motion {
            let displacement = step_displacement(&info, playback);
            let delta = match &binding.retarget {
                Some(r) => r.root_motion(displacement),
                None => gta_vec_to_bevy(displacement),
            };
            if let Ok(mut t) = transforms.get_mut(entity) {
                motion.move_by(delta, &mut t);
            }
        }

        let PlaybackBinding {
            bones,
            tracks,
            cursor,
            track_poses,
            pose,
            animated,
            fading,
            target,
            retarget,
            layout,
            ..
        } = &mut *binding;
        if let Some(r) = retarget.as_mut() {
            if !presampled {
                r.sample(&info, now, cursor);
            }
            if !rebound && skeletal.fade.is_none() {
                // The common frame: only the retargeted bones change.
                for &b in &r.mapped {
                    if let Ok(mut t) = transforms.get_mut(bones[b].0) {
                        *t = Transform::from(r.bone_pose(b, &bones[b].1));
                    }
                }
                continue;
            }
        } else if !presampled {
            sample_tracks(&info, now, cursor, track_poses);
        }
        if retarget.is_none() && !rebound && skeletal.fade.is_none() {
            // The common frame: only the bones the clip animates change ([`write_posed_bones`]
            // writes them from the pose pipeline's pose).
            if presampled && layout.is_some() {
                continue;
            }
            for (b, p) in tracks.iter().zip(track_poses.iter()) {
                if let Some(b) = *b
                    && let Ok(mut t) = transforms.get_mut(bones[b].0)
                {
                    *t = Transform::from(*p);
                }
            }
            continue;
        }

        // Binding or blending: rest pose, the current clip, then the clip fading out blended in.
        pose.clear();
        pose.extend(bones.iter().map(|(_, rest, _)| *rest));
        animated.iter_mut().for_each(|a| *a = false);
        match retarget.as_ref() {
            Some(r) => r.scatter(bones, pose, animated),
            None => scatter(tracks, track_poses, pose, animated),
        }
        let mut fade_done = false;
        // A paused (or finished) playback holds a fade where it is too.
        let running = playback.is_running();
        if let Some(fade) = skeletal.fade.as_mut() {
            // Bound once per fade: again when a new fade starts or the character's bones or the
            // clip's entry change. An entry gone from the registry keeps the binding it had (the
            // binding holds the clip).
            let entry = registry.get(fade.clip.id());
            let current = fading.as_ref().is_some_and(|f| {
                !fade.fresh && !rebound && entry.as_ref().is_none_or(|i| Arc::ptr_eq(i, &f.info))
            });
            if !current {
                // Fading from a fade: the pose on screen now is what fades out, held still.
                let snapshot = fade.from_pose.then(|| {
                    bones
                        .iter()
                        .map(|(e, rest, _)| {
                            transforms.get(*e).map_or(*rest, |t| BonePose::from(*t))
                        })
                        .collect()
                });
                *fading = entry.map(|info| {
                    Box::new(FadingBinding::new(info, bones, snapshot, target.as_deref()))
                });
                fade.fresh = false;
            }
            if running {
                fade.elapsed += dt;
            }
            let mut fade_direction = 1.0;
            let t = match fading.as_ref().map(|f| &*f.info.clip) {
                None => 0.0,
                // A held blend shows the other clip at the playhead's own time (so scrubbing
                // and seeking move both).
                Some(clip) if fade.held.is_some() => held_time(now, clip.duration(), playback.mode),
                Some(clip) if running && fade.speed != 0.0 => {
                    let t = step_time(
                        fade.time,
                        dt * fade.speed,
                        clip.duration(),
                        fade.mode,
                        &mut fade_direction,
                    )
                    .time;
                    // Ping-pong turned: keep going the other way on the next frames.
                    fade.speed *= fade_direction;
                    t
                }
                Some(clip) => held_time(fade.time, clip.duration(), fade.mode),
            };
            fade.time = t;
            let w_old = fade.old_weight();
            fade_done = fade.held.is_none() && w_old <= 0.0;
            if let Some(old) = fading.as_mut().filter(|_| !fade_done) {
                old.pose_at(t, bones);
                for (b, p) in pose.iter_mut().enumerate() {
                    *p = blend(old.pose[b], *p, 1.0 - w_old);
                    animated[b] |= old.animated[b];
                }
            }
        }
        if fade_done {
            skeletal.fade = None;
            *fading = None;
        }
        // Bones no clip animates stay at the rest pose written when the character was bound.
        for (((entity, _, _), p), &a) in bones.iter().zip(pose.iter()).zip(animated.iter()) {
            // When a fade ends, bones only the old clip animated go back to rest.
            if !a && !rebound && !fade_done {
                continue;
            }
            if let Ok(mut t) = transforms.get_mut(*entity) {
                *t = Transform::from(*p);
            }
        }
    }
}

/// Writes the bones of every character on its common frame on the pose pipeline (see
/// [`BonePass`]), walking the bones in the order the world stores them: a character's bones
/// were tagged together, so they lie together, and its binding is looked up (and, on a timeline
/// clip, its pose sampled into a scratch pose) once per run of its bones, so the pose is written
/// while it is in the cache.
///
/// The bones are read as whole table columns ([`Query::contiguous_iter_mut`]): a tight loop
/// over slices of tags, transforms and change ticks, with no per-bone call into the query's
/// iteration. A bone's change tick is set only when its transform is written. On more than one
/// thread, the columns are cut into runs spread over the compute task pool.
pub(crate) fn write_posed_bones(
    characters: Query<(Option<&'static Playback>, &'static PoseSource)>,
    bindings: Query<&'static PlaybackBinding>,
    layered: Query<&'static LayerBinding>,
    mut bones: Query<(&PosedBy, &mut Transform)>,
    scratch: Local<Parallel<BoneScratch>>,
) {
    let Ok(tables) = bones.contiguous_iter_mut() else {
        // Never: both components are stored in tables.
        return;
    };
    let mut tables: Vec<_> = tables
        .map(|(tags, transforms)| {
            let (values, ticks) = ContiguousMut::bypass_change_detection_split(transforms);
            (tags, values, ticks)
        })
        .collect();
    let reader = CharacterReader {
        characters: &characters,
        bindings: &bindings,
        layered: &layered,
    };
    let Some(this_run) = tables.first_mut().map(|t| t.2.this_run()) else {
        return;
    };
    let slices: Vec<BoneSlice> = tables
        .iter_mut()
        .map(|(tags, values, ticks)| BoneSlice {
            tags,
            values,
            changed: ticks.changed_mut(),
        })
        .collect();
    let bones: usize = slices.iter().map(|s| s.tags.len()).sum();
    let threads = ComputeTaskPool::try_get().map_or(1, |p| p.thread_num());
    // Runs of at least this many bones, a few per thread (so that one finishing early takes
    // another).
    const MIN_RUN: usize = 2048;
    let runs = if threads <= 1 {
        1
    } else {
        (bones / MIN_RUN).clamp(1, threads * 4)
    };
    if runs == 1 {
        reader.write(slices, this_run, &mut scratch.borrow_local_mut());
    } else {
        // Every table cut at the same fractions: run `i` takes the `i`-th piece of each, which
        // holds the same characters where the tables list them in the same order (as the
        // bones were tagged, character by character).
        let mut pieces: Vec<Vec<BoneSlice>> = (0..runs).map(|_| Vec::new()).collect();
        for slice in slices {
            for (run, piece) in pieces.iter_mut().zip(slice.cut(runs)) {
                run.push(piece);
            }
        }
        ComputeTaskPool::get().scope(|scope| {
            for run in pieces {
                let (reader, scratch) = (&reader, &scratch);
                scope.spawn(async move {
                    reader.write(run, this_run, &mut scratch.borrow_local_mut());
                });
            }
        });
    }
    // With Bevy's `track_location`: where the transforms written (marked with this run's tick)
    // were changed.
    let caller = std::panic::Location::caller();
    for (_, _, ticks) in &mut tables {
        if ticks.changed_by().into_option().is_none() {
            continue;
        }
        let written: Vec<bool> = ticks
            .changed()
            .iter()
            .map(|t| t.get() == this_run.get())
            .collect();
        if let Some(by) = ticks.changed_by_mut().into_option() {
            for (by, written) in by.iter_mut().zip(written) {
                if written {
                    *by = caller;
                }
            }
        }
    }
}

/// Consecutive bones of one table: their tags, transforms and change ticks.
struct BoneSlice<'a> {
    tags: &'a [PosedBy],
    values: &'a mut [Transform],
    changed: &'a mut [Tick],
}

impl<'a> BoneSlice<'a> {
    /// Cut into `n` consecutive pieces of about equal length (some empty when shorter than
    /// `n`).
    fn cut(self, n: usize) -> Vec<BoneSlice<'a>> {
        let len = self.tags.len();
        let (mut tags, mut values, mut changed) = (self.tags, self.values, self.changed);
        let mut pieces = Vec::with_capacity(n);
        let mut at = 0;
        for i in 1..=n {
            let end = len * i / n;
            let (t, rest_t) = tags.split_at(end - at);
            let (v, rest_v) = values.split_at_mut(end - at);
            let (c, rest_c) = changed.split_at_mut(end - at);
            pieces.push(BoneSlice {
                tags: t,
                values: v,
                changed: c,
            });
            (tags, values, changed, at) = (rest_t, rest_v, rest_c, end);
        }
        pieces
    }
}

/// What [`write_posed_bones`] reads of the characters.
struct CharacterReader<'a, 'w, 's> {
    characters: &'a Query<'w, 's, (Option<&'static Playback>, &'static PoseSource)>,
    bindings: &'a Query<'w, 's, &'static PlaybackBinding>,
    layered: &'a Query<'w, 's, &'static LayerBinding>,
}

impl CharacterReader<'_, '_, '_> {
    /// Writes the bones of `parts` (pieces of tables) that their characters' clips drive,
    /// marking each written transform changed. The parts are walked side by side, a character
    /// at a time: its bones at the head of every part are written together, so a character
    /// whose bones lie in several tables (a skeleton's leaves have no `Children`) is looked up
    /// and sampled once, where the parts list the characters in the same order.
    fn write(&self, mut parts: Vec<BoneSlice>, this_run: Tick, scratch: &mut BoneScratch) {
        let mut heads = vec![0usize; parts.len()];
        let mut first = 0;
        loop {
            while first < parts.len() && heads[first] == parts[first].tags.len() {
                first += 1;
            }
            let Some(part) = parts.get(first) else {
                return;
            };
            let character = part.tags[heads[first]].character;
            let found = self.find(character, scratch);
            for (part, head) in parts[first..].iter_mut().zip(&mut heads[first..]) {
                let bones = part.tags[*head..]
                    .iter()
                    .zip(&mut part.values[*head..])
                    .zip(&mut part.changed[*head..]);
                let Some((source, pose)) = found else {
                    *head += bones
                        .take_while(|((by, _), _)| by.character == character)
                        .count();
                    continue;
                };
                let pose = pose.unwrap_or(&scratch.pose).reader();
                let driven = source.driven.view();
                let mut n = 0;
                for ((by, transform), tick) in bones {
                    if by.character != character {
                        break;
                    }
                    n += 1;
                    let b = by.bone as usize;
                    // A bone the clip no longer drives stays. (A bone two characters drive
                    // carries the tag of the one bound last, and is written once, by that one.)
                    if driven.contains(b)
                        && let Some(pose) = pose.get(b)
                    {
                        *transform = Transform::from(pose);
                        *tick = this_run;
                    }
                }
                *head += n;
            }
        }
    }

    /// The character's pose source when its bones are posed this frame, and the pose: its
    /// binding's, or `None` on a timeline clip, sampled into `scratch.pose`.
    fn find(
        &self,
        character: Entity,
        scratch: &mut BoneScratch,
    ) -> Option<(&PoseSource, Option<&LocalPose>)> {
        let (playback, source) = self
            .characters
            .get(character)
            .ok()
            .filter(|(_, source)| source.pass != BonePass::Off)?;
        if source.pass == BonePass::Sample
            && let Some(layout) = &source.layout
            && let Some(playback) = playback
        {
            let BoneScratch { cursor, pose } = scratch;
            cursor.resume_at(layout, source.segment.load(Ordering::Relaxed));
            pose::sample(layout, playback.time, cursor, pose);
            source
                .segment
                .store(cursor.timeline_segment(), Ordering::Relaxed);
            if let Some((bone, hold)) = source.hold {
                hold.hold_in(layout, bone, pose);
            }
            Some((source, None))
        } else {
            let pose = match self.layered.get(character) {
                Ok(layered) => layered.pose(),
                Err(_) => &self.bindings.get(character).ok()?.local,
            };
            Some((source, Some(pose)))
        }
    }
}

/// A thread's scratch for [`write_posed_bones`]: a cursor and pose to sample a timeline clip
/// into.
#[derive(Default)]
pub(crate) struct BoneScratch {
    cursor: PoseCursor,
    pose: LocalPose,
}
