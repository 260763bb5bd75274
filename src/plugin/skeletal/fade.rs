//! Cross-fades and held blends ([`SkeletalClip::cross_fade`], [`SkeletalClip::hold_blend`]) on
//! the pose pipeline: the clip fading out is laid out for the character's bones like the
//! current one (retargeted onto them first on a retargeted character), sampled at its own playhead, and blended with the
//! current pose as the games blend clips (a normalised weighted sum, §3.3 of
//! `docs/formats/ifp.md`; [`pose::blend`]).

use super::bind::{PlaybackBinding, PoseLayouts, bind_tracks};
use super::retargeted::TargetRig;
use super::{ClipInfo, LoadedClips, RigClip, SkeletalClip};
use crate::animation::pose::{self, BlendLayer, LocalPose, PoseClip, PoseCursor};
use crate::animation::{BonePose, PlayMode, held_time, step_time};
use crate::plugin::Playback;
use bevy::prelude::*;
use std::sync::Arc;

/// The outgoing clip of a cross-fade (or the other clip of a held blend) on the character's
/// bones: its layout or retargeting, its sampling cache and its pose, kept from frame to frame
/// like the current clip's.
pub(super) struct FadingBinding {
    info: Arc<ClipInfo>,
    layout: Option<Arc<PoseClip>>,
    cursor: PoseCursor,
    /// The clip's pose (every bone: the ones it does not drive at rest).
    pose: LocalPose,
    /// Per bone, whether the clip drives it.
    drives: Vec<bool>,
    /// The pose is a snapshot of the pose shown when the fade started (a fade started during
    /// another one), which fades out as it is.
    snapshot: bool,
}

impl FadingBinding {
    fn new(
        id: AssetId<RigClip>,
        info: Arc<ClipInfo>,
        binding: &PlaybackBinding,
        snapshot: Option<LocalPose>,
        layouts: &mut PoseLayouts,
    ) -> Self {
        let bones = &binding.bones;
        let mut layout = None;
        let mut drives = vec![true; bones.len()];
        // A snapshot fades out as it is: nothing to bind, and it covers every bone.
        let is_snapshot = snapshot.is_some();
        if !is_snapshot {
            drives.fill(false);
            let retarget = binding
                .target
                .as_deref()
                .and_then(|t: &TargetRig| layouts.retargeting(id, &info, t));
            if let Some(plan) = retarget {
                for &b in plan.mapped() {
                    drives[b] = true;
                }
                layout = Some(plan.layout.clone());
            } else {
                let tracks = bind_tracks(&info, bones);
                for &b in tracks.iter().flatten() {
                    drives[b] = true;
                }
                layout = layouts.get(id, &info, bones, &tracks);
            }
        }
        Self {
            cursor: layout.as_deref().map(PoseCursor::new).unwrap_or_default(),
            layout,
            pose: snapshot.unwrap_or_else(|| binding.rest.clone()),
            drives,
            snapshot: is_snapshot,
            info,
        }
    }

    /// The outgoing pose at `time` of the clip (or the snapshot), into `self.pose`.
    fn pose_at(&mut self, time: f32) {
        if self.snapshot {
            return;
        }
        if let Some(layout) = &self.layout {
            pose::sample(layout, time, &mut self.cursor, &mut self.pose);
        }
    }
}

/// The playhead of a clip fading out, `dt` seconds on from `time` at `speed` (its sign turned
/// where a ping-pong turns), or held where it is while the character's playback is not running.
/// Shared by [`SkeletalClip`]'s fades and the crowd's.
pub(super) fn outgoing_time(
    time: f32,
    speed: &mut f32,
    dt: f32,
    duration: f32,
    mode: PlayMode,
    running: bool,
) -> f32 {
    if !running || *speed == 0.0 {
        return held_time(time, duration, mode);
    }
    let mut direction = 1.0;
    let t = step_time(time, dt * *speed, duration, mode, &mut direction).time;
    // Ping-pong turned: keep going the other way on the next frames.
    *speed *= direction;
    t
}

/// A fade's outgoing weight `elapsed` seconds into `duration`: 1 at its start, 0 at its end
/// (0 at once for a fade of no length).
pub(super) fn fade_weight(elapsed: f32, duration: f32) -> f32 {
    if duration > 0.0 {
        1.0 - (elapsed / duration).min(1.0)
    } else {
        0.0
    }
}

/// What a frame of a character's fade came to.
pub(super) enum FadeStep {
    /// No fade: the current clip's pose is the character's.
    None,
    /// The two poses blended into the binding's `mixed` pose; write the bones either clip
    /// drives.
    Blended,
    /// The fade ended this frame: every bone goes to the current clip's pose (the bones only the
    /// old clip drove, back to rest).
    Done,
}

/// Moves the character's fade on by `dt` (unless its playback is paused or finished, which
/// holds the fade too) and blends the clip fading out with the current clip's pose, already in
/// `binding.local`. Binds the outgoing clip once per fade: again when a new fade starts, the
/// character was bound again (`rebound`) or the clip's asset changed; an asset gone
/// keeps the binding it had.
#[allow(clippy::too_many_arguments)]
pub(super) fn step_fade(
    skeletal: &mut SkeletalClip,
    binding: &mut PlaybackBinding,
    playback: &Playback,
    clips: &LoadedClips,
    layouts: &mut PoseLayouts,
    transforms: &Query<&mut Transform>,
    dt: f32,
    rebound: bool,
) -> FadeStep {
    let Some(fade) = skeletal.fade.as_mut() else {
        return FadeStep::None;
    };
    let running = playback.is_running();
    let now = playback.time;
    let id = fade.clip.id();
    let entry = clips.get(id);
    let current = binding.fading.as_ref().is_some_and(|f| {
        !fade.fresh && !rebound && entry.as_ref().is_none_or(|i| Arc::ptr_eq(i, &f.info))
    });
    if !current {
        // Fading from a fade: the pose on screen now is what fades out, held still.
        let snapshot = fade.from_pose.then(|| {
            let shown: Vec<BonePose> = binding
                .bones
                .iter()
                .map(|(e, rest, _)| transforms.get(*e).map_or(*rest, |t| BonePose::from(*t)))
                .collect();
            LocalPose::from_bone_poses(&shown)
        });
        binding.fading =
            entry.map(|info| Box::new(FadingBinding::new(id, info, binding, snapshot, layouts)));
        fade.fresh = false;
    }
    if running {
        fade.elapsed += dt;
    }
    let t = match binding.fading.as_ref().map(|f| &*f.info.clip) {
        None => 0.0,
        // A held blend shows the other clip at the playhead's own time (so scrubbing and
        // seeking move both).
        Some(clip) if fade.held.is_some() => held_time(now, clip.duration(), playback.mode),
        Some(clip) => outgoing_time(
            fade.time,
            &mut fade.speed,
            dt,
            clip.duration(),
            fade.mode,
            running,
        ),
    };
    fade.time = t;
    let w_old = fade.old_weight();
    if fade.held.is_none() && w_old <= 0.0 {
        skeletal.fade = None;
        binding.fading = None;
        return FadeStep::Done;
    }
    let PlaybackBinding {
        rest,
        local,
        mixed,
        fading,
        ..
    } = binding;
    let Some(old) = fading.as_mut() else {
        // The outgoing clip is not loaded (or gone): the current clip alone.
        mixed.clone_from(local);
        return FadeStep::Blended;
    };
    old.pose_at(t);
    pose::blend(
        &[
            BlendLayer {
                pose: &old.pose,
                weight: w_old,
                mask: None,
            },
            BlendLayer {
                pose: local,
                weight: 1.0 - w_old,
                mask: None,
            },
        ],
        rest,
        mixed,
    );
    FadeStep::Blended
}

impl PlaybackBinding {
    /// Whether bone `b` is driven by the current clip or by the clip fading out.
    pub(super) fn fade_drives(&self, b: usize) -> bool {
        self.drives.get(b).copied().unwrap_or(false)
            || self
                .fading
                .as_ref()
                .is_some_and(|f| f.drives.get(b).copied().unwrap_or(false))
    }
}
