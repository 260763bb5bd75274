//! Binding a [`SkeletalClip`] character: its bones, its clip laid out for them (shared by every
//! character of the same skeleton), the bones it drives tagged for the bone pass, and what the
//! passes after it read of each character ([`PoseSource`], [`PlaybackBinding`]). Each decision
//! is made here, once per change: the frames between only check that nothing moved.

use super::fade::FadingBinding;
use super::retargeted::{RetargetPlan, TargetRig, gather_hierarchy};
use super::{
    ClipInfo, ClipLayers, LoadedClips, Retarget, RetargetMode, RigBone, RigClip, SkeletalClip,
    UnmatchedTracks,
};
use crate::animation::BonePose;
use crate::animation::layers::{BoneMask, ResolvedMask};
use crate::animation::pose::{LocalPose, PoseClip, PoseCursor, PoseSkeleton};
use crate::plugin::Playback;
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// Clips laid out for the pose pipeline, by clip and by the bones and rests of the characters
/// that play them (every character of one skeleton shares one layout), and clips retargeted,
/// by clip and rig (every character of one rig shares one [`RetargetPlan`]). An entry goes
/// when nothing but the cache holds its clip's asset.
#[derive(Resource, Default)]
pub(crate) struct PoseLayouts {
    laid_out: HashMap<(AssetId<RigClip>, u64), (Arc<ClipInfo>, Arc<PoseClip>)>,
    /// Rest poses and resolved masks, by the bones (and the mask): characters of one skeleton
    /// share them, so that a frame of many characters reads one copy, kept in the caches.
    rests: HashMap<u64, Arc<LocalPose>>,
    masks: HashMap<(u64, BoneMask), Arc<ResolvedMask>>,
    retargeted: HashMap<(AssetId<RigClip>, u64), (Arc<ClipInfo>, Option<Arc<RetargetPlan>>)>,
    /// Additive layers' reference poses, by layout (its address, the layout held) and time.
    references: HashMap<(usize, u32), (Arc<PoseClip>, Arc<LocalPose>)>,
}

impl PoseLayouts {
    /// `info`'s clip laid out for `bones`, with `tracks` saying which bone each track drives.
    pub(super) fn get(
        &mut self,
        id: AssetId<RigClip>,
        info: &Arc<ClipInfo>,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        tracks: &[Option<usize>],
    ) -> Option<Arc<PoseClip>> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bones_key(bones).hash(&mut h);
        tracks.hash(&mut h);
        let key = (id, h.finish());
        if let Some((i, c)) = self.laid_out.get(&key)
            && Arc::ptr_eq(i, info)
        {
            return Some(c.clone());
        }
        if self.laid_out.len() > 64 {
            self.laid_out.retain(|_, (i, _)| Arc::strong_count(i) > 1);
        }
        let rests: Vec<BonePose> = bones.iter().map(|b| b.1).collect();
        let skeleton = PoseSkeleton::new(&vec![None; bones.len()], &rests).ok()?;
        let clip = Arc::new(PoseClip::new(&info.played, &skeleton, tracks));
        self.laid_out.insert(key, (info.clone(), clip.clone()));
        Some(clip)
    }

    /// The rest pose of `bones`, shared by every character with the same bones and rests.
    pub(super) fn rest(
        &mut self,
        bones: &[(Entity, BonePose, AnimationTargetId)],
    ) -> Arc<LocalPose> {
        if self.rests.len() > 64 {
            self.rests.retain(|_, r| Arc::strong_count(r) > 1);
        }
        self.rests
            .entry(bones_key(bones))
            .or_insert_with(|| {
                let rests: Vec<BonePose> = bones.iter().map(|b| b.1).collect();
                Arc::new(LocalPose::from_bone_poses(&rests))
            })
            .clone()
    }

    /// `layout`'s pose at `time`: an additive layer's reference, shared with every character
    /// whose layer has the same layout and reference time (so that a frame of many reads one
    /// copy, kept in the caches, rather than one per character).
    pub(super) fn reference(&mut self, layout: &Arc<PoseClip>, time: f32) -> Arc<LocalPose> {
        if self.references.len() > 64 {
            self.references.retain(|_, (_, p)| Arc::strong_count(p) > 1);
        }
        let key = (Arc::as_ptr(layout) as usize, time.to_bits());
        (self.references.entry(key))
            .or_insert_with(|| {
                let mut pose = LocalPose::default();
                crate::animation::pose::sample(
                    layout,
                    time,
                    &mut crate::animation::pose::PoseCursor::new(layout),
                    &mut pose,
                );
                (layout.clone(), Arc::new(pose))
            })
            .1
            .clone()
    }

    /// `mask` resolved on a skeleton of these bone names and parents, shared by every
    /// character of that skeleton.
    pub(super) fn mask(
        &mut self,
        mask: &BoneMask,
        names: &[String],
        parents: &[Option<usize>],
    ) -> Arc<ResolvedMask> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (names, parents).hash(&mut h);
        if self.masks.len() > 64 {
            self.masks.retain(|_, m| Arc::strong_count(m) > 1);
        }
        self.masks
            .entry((h.finish(), mask.clone()))
            .or_insert_with(|| {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                Arc::new(mask.resolve(&names, parents))
            })
            .clone()
    }

    /// `info`'s clip retargeted onto a character of rig `target`, the [`RetargetPlan`] shared
    /// with every character of an equal rig; `None` when the clip cannot be retargeted (see
    /// [`RetargetPlan::new`]).
    pub(super) fn retargeting(
        &mut self,
        id: AssetId<RigClip>,
        info: &Arc<ClipInfo>,
        target: &TargetRig,
    ) -> Option<Arc<RetargetPlan>> {
        let key = (id, target.fingerprint);
        match self.retargeted.get(&key) {
            Some((i, plan)) if Arc::ptr_eq(i, info) => plan.clone(),
            _ => {
                if self.retargeted.len() > 64 {
                    self.retargeted.retain(|_, (i, _)| Arc::strong_count(i) > 1);
                }
                let plan = RetargetPlan::new(info, target).map(Arc::new);
                self.retargeted.insert(key, (info.clone(), plan.clone()));
                plan
            }
        }
    }
}

/// A hash of bones' rests and animation targets (what a layout or a rest pose depends on).
fn bones_key(bones: &[(Entity, BonePose, AnimationTargetId)]) -> u64 {
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
    h.finish()
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
    pub(super) bound: Option<Bound>,
    /// The clip is laid out on a shared timeline and not retargeted: [`write_posed_bones`]
    /// samples it.
    pub(super) timeline: bool,
    /// How the driven bones are posed this frame.
    pub(super) pass: BonePass,
    /// The clip laid out for the character's bones ([`PlaybackBinding::layout`]).
    pub(super) layout: Option<Arc<PoseClip>>,
    /// The bones the clip drives (tagged [`PosedBy`]).
    pub(super) driven: BoneSet,
    /// On a shared-timeline clip, the segment sampled last
    /// ([`PoseCursor::timeline_segment`]).
    pub(super) segment: AtomicU32,
}

/// What a character is bound to: its clip, the clips' generation then, whether it is
/// retargeted, and the clip's duration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bound {
    clip: AssetId<RigClip>,
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

/// What a character's playback is bound to: its bones, its clip's layout on them (or the clip
/// retargeted onto them), the pose sampled last and a clip fading out.
#[derive(Component, Default)]
pub(crate) struct PlaybackBinding {
    clip: Option<AssetId<RigClip>>,
    /// The clip's description, kept while the clips' generation stays the same.
    pub(super) info: Option<Arc<ClipInfo>>,
    generation: u64,
    /// Bone entities of the character with their rest poses and target ids.
    pub(super) bones: Vec<(Entity, BonePose, AnimationTargetId)>,
    /// The bones' rest pose.
    pub(super) rest: LocalPose,
    /// Per bone, whether the current clip drives it.
    pub(super) drives: Vec<bool>,
    /// The clip fading out, bound to the same bones, while a cross-fade lasts.
    pub(super) fading: Option<Box<FadingBinding>>,
    /// On a rest-compensated [`Retarget`] character: its hierarchy, and the current clip
    /// retargeted onto it (when the clip knows its source skeleton), whose layout is `layout`.
    pub(super) target: Option<Arc<TargetRig>>,
    pub(super) retarget: Option<Arc<RetargetPlan>>,
    /// Bound (again) this frame: every bone is written.
    pub(super) rebound: bool,
    /// Sampled at this frame's playhead by [`super::sample::sample_skeletal`] (the common
    /// frame: no binding, no fade), so that only the bones are written.
    pub(super) presampled: bool,
    /// The clip laid out for the character's bones (shared by every character with the same
    /// bones and rests; retargeted onto them first on a [`Retarget`] character), its sampling
    /// cache and the sampled pose (every bone: the ones the clip does not drive at rest).
    pub(super) layout: Option<Arc<PoseClip>>,
    pub(super) pose_cursor: PoseCursor,
    pub(super) local: LocalPose,
    /// While a clip fades out: the two clips' poses blended.
    pub(super) mixed: LocalPose,
    /// The clip's entry was found this frame, so the character is posed.
    pub(super) ready: bool,
    /// The clip it was bound to is gone (removed from its file, or unloaded): its bones go back
    /// to rest in the next apply.
    pub(super) to_rest: bool,
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

/// The descriptions of the clip's tracks that drive no bone: by name, those whose target no
/// bone has; retargeted, those whose source bone reaches no bone of the character (neither
/// paired nor above a paired bone).
pub(super) fn unmatched_tracks(
    info: &ClipInfo,
    tracks: &[Option<usize>],
    retarget: Option<&RetargetPlan>,
) -> Vec<String> {
    (0..info.tracks.len())
        .filter(|&i| match retarget {
            Some(r) => !r.uses_source_track(i),
            None => tracks.get(i).copied().flatten().is_none(),
        })
        .map(|i| info.tracks[i].1.clone())
        .collect()
}

/// Binds each character to its clip (again when the clip, its asset or the bones
/// change), starts requested cross-fades from the playhead, and tells the playhead the clip's
/// duration.
pub(crate) fn prepare_skeletal(
    mut commands: Commands,
    clips: LoadedClips,
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
    mut reported: Local<std::collections::HashSet<(Entity, AssetId<RigClip>)>>,
    mut layouts: ResMut<PoseLayouts>,
    posed_by: Query<&PosedBy>,
) {
    let generation = clips.generation();
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
        // The common frame: the clip, its asset and the bones as last frame. Read
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
        // The clip assets are looked up only when they changed or the clip did.
        let cached = binding
            .info
            .clone()
            .filter(|_| binding.generation == generation && binding.clip == Some(id));
        let Some(info) = cached.or_else(|| clips.get(id)) else {
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
                let (all, rig) = gather_hierarchy(entity, retarget, &children, &nodes, &rig_bones);
                bones = all;
                binding.target = rig.map(Arc::new);
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
                .and_then(|t| layouts.retargeting(id, &info, t));
            let tracks = if binding.retarget.is_some() {
                vec![None; info.tracks.len()]
            } else {
                bind_tracks(&info, &bones)
            };
            binding.layout = match &binding.retarget {
                Some(plan) => Some(plan.layout.clone()),
                None => layouts.get(id, &info, &bones, &tracks),
            };
            let rests: Vec<BonePose> = bones.iter().map(|b| b.1).collect();
            binding.rest = LocalPose::from_bone_poses(&rests);
            binding.local = binding.rest.clone();
            if let Some(layout) = &binding.layout {
                binding.pose_cursor = PoseCursor::new(layout);
            }
            binding.drives = vec![false; bones.len()];
            let mut driven = BoneSet::default();
            let posed: Option<Vec<usize>> = match (&binding.retarget, &binding.layout) {
                (Some(r), _) => Some(r.mapped().to_vec()),
                (None, Some(_)) => Some(tracks.iter().flatten().copied().collect()),
                (None, None) => None,
            };
            if let Some(posed) = posed {
                for b in posed {
                    binding.drives[b] = true;
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
            } else {
                // Never for a skeleton built from a hierarchy (its bones fit the layout's
                // joint count); said rather than played wrong.
                warn!(
                    "{entity}: {} bones are more than the pose pipeline lays a clip out for: the character holds its rest pose",
                    bones.len()
                );
            }
            source.driven = driven;
            source.layout = binding.layout.clone();
            source.timeline = binding
                .layout
                .as_ref()
                .is_some_and(|l| l.timeline_keys().is_some());
            source.segment = AtomicU32::new(0);
            // The tracks that drive no bone, reported once per character and clip (not while the
            // hierarchy has no bones yet: a scene still spawning).
            if !bones.is_empty() {
                let missing = unmatched_tracks(&info, &tracks, binding.retarget.as_deref());
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
        binding.ready = binding.layout.is_some();
        source.bound = Some(Bound {
            clip: id,
            generation,
            retargeted: binding.target.is_some(),
            duration: info.clip.duration(),
        });
        playback.duration = Some(info.clip.duration());
    }
}
