//! One playback system for every rig: [`Playback`] samples clips with rigplay's core sampler and
//! writes bone transforms itself (no AnimationGraph evaluation), driven by Bevy's virtual time.

use super::asset::extracted_axes;
use super::retarget::{ClipInfo, ClipRegistry};
use super::root_motion::{RootMotion, root_displacement};
use super::skeleton::RigBone;
use crate::anim::{BonePose, Clip, ClipCursor, WrapMode};
use crate::coords::gta_vec_to_bevy;
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::sync::Arc;

/// How time runs past the ends of a clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
pub enum PlayMode {
    /// Wraps to the other end ([`PlaybackLooped`] each time).
    #[default]
    Loop,
    /// Stops at the end and holds the pose ([`PlaybackFinished`]).
    Once,
    /// Turns around at each end ([`PlaybackLooped`] each time).
    PingPong,
}

/// Plays a clip on a character (a [`super::GtaSkeleton`], a [`super::Retarget`] hierarchy, …).
/// Time advances with Bevy's virtual time (pausing `Time<Virtual>` pauses every rig), times
/// `speed` (negative plays backwards). Changing `time` with [`Playback::seek`] shows that pose in
/// the same frame.
#[derive(Component, Debug, Clone, Reflect)]
pub struct Playback {
    pub clip: Handle<AnimationClip>,
    /// Seconds into the clip.
    pub time: f32,
    pub speed: f32,
    pub mode: PlayMode,
    pub paused: bool,
    /// Ping-pong direction: +1 forwards, −1 backwards.
    direction: f32,
    finished: bool,
    #[reflect(ignore)]
    fade: Option<Fade>,
}

/// A clip being blended out over `duration` seconds.
#[derive(Debug, Clone)]
struct Fade {
    clip: Handle<AnimationClip>,
    time: f32,
    speed: f32,
    mode: PlayMode,
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

impl Playback {
    /// Plays `clip` looped from the start at normal speed.
    pub fn new(clip: Handle<AnimationClip>) -> Self {
        Self {
            clip,
            time: 0.0,
            speed: 1.0,
            mode: PlayMode::Loop,
            paused: false,
            direction: 1.0,
            finished: false,
            fade: None,
        }
    }

    pub fn with_mode(mut self, mode: PlayMode) -> Self {
        self.mode = mode;
        self
    }

    pub fn with_speed(mut self, speed: f32) -> Self {
        self.speed = speed;
        self
    }

    /// Jumps to `time` seconds; the pose shows in this frame.
    pub fn seek(&mut self, time: f32) {
        self.time = time;
        self.finished = false;
    }

    /// Jumps to a frame at `fps` frames per second.
    pub fn seek_frame(&mut self, frame: u32, fps: f32) {
        self.seek(frame as f32 / fps);
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Switches to `clip`, blending from the current pose over `duration` seconds (the games
    /// blend by a weighted sum of the clips' poses, normalised: spec §3.3).
    pub fn cross_fade(&mut self, clip: Handle<AnimationClip>, duration: f32) {
        let from_pose = self.fade.is_some();
        self.fade = Some(Fade {
            clip: std::mem::replace(&mut self.clip, clip),
            time: self.time,
            speed: self.speed * self.direction,
            mode: self.mode,
            elapsed: 0.0,
            duration: duration.max(0.0),
            fresh: true,
            from_pose,
        });
        self.time = 0.0;
        self.direction = 1.0;
        self.finished = false;
    }

    /// Weight of the clip being faded out, if any.
    pub fn fade_weight(&self) -> Option<f32> {
        self.fade.as_ref().map(Fade::old_weight)
    }
}

/// Triggered on a character each time its clip wraps (loop) or turns (ping-pong).
#[derive(EntityEvent, Debug, Clone)]
pub struct PlaybackLooped {
    pub entity: Entity,
}

/// Triggered on a character when a `Once` clip reaches its end.
#[derive(EntityEvent, Debug, Clone)]
pub struct PlaybackFinished {
    pub entity: Entity,
}

/// Moves `time` by `step` within `[0, duration]` by `mode`; returns (new time, laps wrapped, ended).
fn step_time(
    time: f32,
    step: f32,
    duration: f32,
    mode: PlayMode,
    direction: &mut f32,
) -> (f32, i32, bool) {
    if duration <= 0.0 {
        return (0.0, 0, mode == PlayMode::Once);
    }
    match mode {
        PlayMode::Loop => {
            let t = time + step;
            let laps = (t / duration).floor();
            let mut wrapped = t - laps * duration;
            if wrapped >= duration {
                wrapped = 0.0;
            }
            (wrapped, laps as i32, false)
        }
        PlayMode::Once => {
            let t = time + step;
            let clamped = t.clamp(0.0, duration);
            (
                clamped,
                0,
                (step > 0.0 && t >= duration) || (step < 0.0 && t <= 0.0),
            )
        }
        PlayMode::PingPong => {
            let mut t = time + step * *direction;
            let mut turns = 0;
            while !(0.0..=duration).contains(&t) && turns < 1000 {
                t = if t > duration { 2.0 * duration - t } else { -t };
                *direction = -*direction;
                turns += 1;
            }
            (t.clamp(0.0, duration), turns, false)
        }
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
    let axes = extracted_axes(info.settings.root_motion);
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

pub(crate) fn advance_and_sample(
    mut commands: Commands,
    time: Res<Time>,
    registry: Res<ClipRegistry>,
    mut characters: Query<(
        Entity,
        &mut Playback,
        Option<&mut PlaybackBinding>,
        Option<&mut RootMotion>,
    )>,
    mut transforms: Query<&mut Transform>,
    rig_bones: Query<&RigBone>,
    mut bones_changed: ResMut<BonesChanged>,
    children: Query<&Children>,
) {
    let dt = time.delta_secs();
    let generation = registry.generation();
    // Characters are bound again when their clip changes or bones appeared anywhere.
    let bones_added = std::mem::take(&mut bones_changed.0);
    for (entity, mut playback, binding, root_motion) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(PlaybackBinding::default());
            continue;
        };
        let id = playback.clip.id();
        // The registry is looked up only when it changed or the clip did.
        let cached = binding
            .info
            .clone()
            .filter(|_| binding.generation == generation && binding.clip == Some(id));
        let Some(info) = cached.or_else(|| registry.get(id)) else {
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
            playback.finished = false;
            playback.direction = 1.0;
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

        // Advance time.
        let duration = info.clip.duration();
        let (before, mode) = (playback.time, playback.mode);
        let mut direction = playback.direction;
        let step = if playback.paused || playback.finished {
            0.0
        } else {
            dt * playback.speed
        };
        let (now, laps, ended) = step_time(before, step, duration, mode, &mut direction);
        let (now, laps) = if step == 0.0 {
            (held_time(playback.time, &info.clip, mode), 0)
        } else {
            (now, laps)
        };
        playback.time = now;
        playback.direction = direction;
        if laps != 0 {
            commands.trigger(PlaybackLooped { entity });
        }
        if ended && !playback.finished {
            playback.finished = true;
            commands.trigger(PlaybackFinished { entity });
        }
        if let Some(mut motion) = root_motion {
            let moving = matches!(
                info.settings.root_motion,
                super::RootMotionMode::Extract { .. }
            ) && step != 0.0;
            let delta = if moving && mode == PlayMode::Loop {
                gta_vec_to_bevy(root_displacement(&info, before, now, laps))
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
        if !rebound && playback.fade.is_none() {
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
        let running = !(playback.paused || playback.finished);
        if let Some(fade) = playback.fade.as_mut() {
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
                    .0;
                    // Ping-pong turned: keep going the other way on the next frames.
                    fade.speed *= fade_direction;
                    t
                }
                Some(clip) => held_time(fade.time, clip, fade.mode),
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
            playback.fade = None;
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

/// Where a clip that is not advancing shows: a time within the clip as it is (its end included,
/// so that scrubbing to the end shows the last pose); outside it, a looping clip's time wraps (a
/// seek past the end lands where playing would get), the other modes' times are clamped.
fn held_time(time: f32, clip: &Clip, mode: PlayMode) -> f32 {
    if !time.is_finite() {
        return 0.0;
    }
    if (0.0..=clip.duration()).contains(&time) {
        return time;
    }
    clip.wrap_time(
        time,
        match mode {
            PlayMode::Loop => WrapMode::Loop,
            PlayMode::Once | PlayMode::PingPong => WrapMode::Clamp,
        },
    )
}

/// Weighted sum of two poses, the rotation sign-aligned and normalised (spec §3.3).
pub fn blend(a: BonePose, b: BonePose, w: f32) -> BonePose {
    let b_rot = if a.rotation.dot(b.rotation) < 0.0 {
        -b.rotation
    } else {
        b.rotation
    };
    let r = Vec4::from(a.rotation) * (1.0 - w) + Vec4::from(b_rot) * w;
    BonePose {
        rotation: Quat::from_vec4(r.try_normalize().unwrap_or(Vec4::W)),
        translation: a.translation.lerp(b.translation, w),
        scale: a.scale.lerp(b.scale, w),
    }
}

/// The clip behind a playback, for UIs (duration, tracks, key times).
pub fn playback_clip(registry: &ClipRegistry, playback: &Playback) -> Option<Arc<ClipInfo>> {
    registry.get(playback.clip.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_steps_by_mode() {
        let mut d = 1.0;
        assert_eq!(
            step_time(0.9, 0.2, 1.0, PlayMode::Loop, &mut d),
            (0.100000024, 1, false)
        );
        assert_eq!(step_time(0.1, -0.2, 1.0, PlayMode::Loop, &mut d).1, -1);
        assert_eq!(
            step_time(0.9, 0.2, 1.0, PlayMode::Once, &mut d),
            (1.0, 0, true)
        );
        assert_eq!(
            step_time(0.1, -0.2, 1.0, PlayMode::Once, &mut d),
            (0.0, 0, true)
        );
        let (t, turns, _) = step_time(0.9, 0.2, 1.0, PlayMode::PingPong, &mut d);
        assert!((t - 0.9).abs() < 1e-6 && turns == 1 && d == -1.0);
        let (t, _, _) = step_time(t, 0.5, 1.0, PlayMode::PingPong, &mut d);
        assert!((t - 0.4).abs() < 1e-6 && d == -1.0);
    }

    #[test]
    fn blend_is_a_normalised_weighted_sum_across_the_sign_flip() {
        let a = BonePose {
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
            scale: Vec3::ONE,
        };
        // -q of 90° about Z is the same rotation; halfway is 45° about Z.
        let b = BonePose {
            rotation: -Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            translation: Vec3::X * 2.0,
            scale: Vec3::ONE,
        };
        let m = blend(a, b, 0.5);
        assert!(
            m.rotation
                .abs_diff_eq(Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), 1e-6),
            "{}",
            m.rotation
        );
        assert_eq!(m.translation, Vec3::X);
    }
}
