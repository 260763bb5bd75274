//! The skeletal playback system: [`SkeletalClip`] says which clip a character plays, its
//! [`Playback`] says where; rigplay's core sampler poses the character's bones at that time and
//! writes their transforms itself (no AnimationGraph evaluation), blending a clip that fades
//! out.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::{ClipInfo, ClipRegistry, RigBone, RootMotion, RootMotionMode, root_displacement};
use crate::anim::{BonePose, ClipCursor, PlayMode, blend, held_time, step_time};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::Playback;
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::sync::Arc;

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
}

impl Fade {
    /// Weight of the outgoing clip: 1 when the fade starts, 0 once `duration` has passed.
    fn old_weight(&self) -> f32 {
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
        });
    }

    /// Weight of the clip being faded out, if any.
    pub fn fade_weight(&self) -> Option<f32> {
        self.fade.as_ref().map(Fade::old_weight)
    }
}

/// Set when a bone appears anywhere, so that characters bind again (cheaper than scanning every
/// bone for `Added<RigBone>` each frame).
#[derive(Resource, Default)]
pub(crate) struct BonesChanged(pub(crate) bool);

pub(crate) fn note_new_bone(_: On<Add, RigBone>, mut changed: ResMut<BonesChanged>) {
    changed.0 = true;
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
    fading: Option<FadingBinding>,
    /// Bound (again) this frame: every bone is written.
    rebound: bool,
    /// The clip's entry was found this frame, so the character is posed.
    ready: bool,
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
}

impl FadingBinding {
    fn new(
        info: Arc<ClipInfo>,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        snapshot: Option<Vec<BonePose>>,
    ) -> Self {
        let tracks = bind_tracks(&info, bones);
        Self {
            track_poses: rest_track_poses(&tracks, bones),
            cursor: info.clip.cursor(),
            pose: Vec::with_capacity(bones.len()),
            animated: vec![false; bones.len()],
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
        sample_tracks(&self.info, time, &mut self.cursor, &mut self.track_poses);
        scatter(
            &self.tracks,
            &self.track_poses,
            &mut self.pose,
            &mut self.animated,
        );
    }
}

fn bind_tracks(
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
fn sample_tracks(
    info: &ClipInfo,
    time: f32,
    cursor: &mut ClipCursor,
    track_poses: &mut [BonePose],
) {
    let clip = &info.clip;
    clip.sample(time, cursor, track_poses);
    let axes = info.settings.root_motion.extracted_axes();
    if axes != Vec3::ZERO
        && let Some(root) = info.root_track
        && let Some(c) = clip.tracks()[root].translation
    {
        let first = clip.vector_values(c)[0];
        let p = &mut track_poses[root];
        p.translation = p.translation * (Vec3::ONE - axes) + first * axes;
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

/// Binds each character to its clip (again when the clip, its registry entry or the bones
/// change), starts requested cross-fades from the playhead, and tells the playhead the clip's
/// duration.
pub(crate) fn prepare_skeletal(
    mut commands: Commands,
    registry: Res<ClipRegistry>,
    mut characters: Query<(
        Entity,
        &mut Playback,
        &mut SkeletalClip,
        Option<&mut PlaybackBinding>,
    )>,
    rig_bones: Query<&RigBone>,
    mut bones_changed: ResMut<BonesChanged>,
    children: Query<&Children>,
) {
    let generation = registry.generation();
    // Characters are bound again when their clip changes or bones appeared anywhere.
    let bones_added = std::mem::take(&mut bones_changed.0);
    for (entity, mut playback, mut skeletal, binding) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(PlaybackBinding::default());
            playback.duration = None;
            continue;
        };
        // A fade asked for since the last frame: the outgoing clip takes the playhead as it
        // was, and the playhead starts the new clip.
        if let Some(fade) = skeletal.fade.as_mut().filter(|f| !f.started) {
            fade.time = playback.time;
            fade.speed = playback.rate();
            fade.mode = playback.mode;
            fade.started = true;
            playback.time = 0.0;
            playback.restart();
        }
        let id = skeletal.clip.id();
        // The registry is looked up only when it changed or the clip did.
        let cached = binding
            .info
            .clone()
            .filter(|_| binding.generation == generation && binding.clip == Some(id));
        let Some(info) = cached.or_else(|| registry.get(id)) else {
            // Not loaded (yet): the playhead waits.
            binding.ready = false;
            playback.duration = None;
            continue;
        };
        binding.generation = generation;
        // Bind (again) when the clip changed (a cross-fade does, on its first frame), was
        // reloaded, or the character got new bones.
        let rebound = bones_added
            || binding.clip != Some(id)
            || !binding.info.as_ref().is_some_and(|i| Arc::ptr_eq(i, &info));
        if binding.clip != Some(id) && binding.clip.is_some() {
            // A new clip set directly (not through `cross_fade`) starts playing afresh.
            playback.restart();
        }
        if rebound {
            let bones: Vec<_> = children
                .iter_descendants(entity)
                .filter_map(|e| {
                    rig_bones
                        .get(e)
                        .ok()
                        .map(|r| (e, BonePose::from(r.rest), r.target))
                })
                .collect();
            binding.tracks = bind_tracks(&info, &bones);
            binding.track_poses = rest_track_poses(&binding.tracks, &bones);
            binding.cursor = info.clip.cursor();
            binding.animated = vec![false; bones.len()];
            binding.bones = bones;
            binding.clip = Some(id);
            binding.info = Some(info.clone());
        }
        // A later frame's rebinding adds to one not yet shown.
        binding.rebound |= rebound;
        binding.ready = true;
        playback.duration = Some(info.clip.duration());
    }
}

/// Poses every bound character at its playhead's time: root motion, the clip, and a clip
/// fading out blended in; then writes the bones' transforms.
pub(crate) fn apply_skeletal(
    time: Res<Time>,
    registry: Res<ClipRegistry>,
    mut characters: Query<(
        Entity,
        &Playback,
        &mut SkeletalClip,
        &mut PlaybackBinding,
        Option<&mut RootMotion>,
    )>,
    mut transforms: Query<&mut Transform>,
) {
    let dt = time.delta_secs();
    for (entity, playback, mut skeletal, mut binding, root_motion) in &mut characters {
        let Some(info) = binding.info.clone().filter(|_| binding.ready) else {
            continue;
        };
        let rebound = std::mem::take(&mut binding.rebound);
        let now = playback.time;
        let step = playback.last_step();
        if let Some(mut motion) = root_motion {
            let moving = matches!(info.settings.root_motion, RootMotionMode::Extract { .. })
                && step.step != 0.0;
            let delta = if moving && playback.mode == PlayMode::Loop {
                gta_vec_to_bevy(root_displacement(&info, step.from, now, step.laps))
            } else {
                Vec3::ZERO
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
            ..
        } = &mut *binding;
        sample_tracks(&info, now, cursor, track_poses);
        if !rebound && skeletal.fade.is_none() {
            // The common frame: only the bones the clip animates change.
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
        scatter(tracks, track_poses, pose, animated);
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
                *fading = entry.map(|info| FadingBinding::new(info, bones, snapshot));
                fade.fresh = false;
            }
            if running {
                fade.elapsed += dt;
            }
            let mut fade_direction = 1.0;
            let t = match fading.as_ref().map(|f| &*f.info.clip) {
                None => 0.0,
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
            fade_done = w_old <= 0.0;
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
