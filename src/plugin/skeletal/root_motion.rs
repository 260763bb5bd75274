//! Root motion extracted from a playing clip (§3.5 of `docs/formats/ifp.md`), for the game to
//! move the character.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::{ClipInfo, LoadedClips, PlayAnimation, PlayingNode, RigClip, RootMotionMode};
use crate::animation::{PlayMode, PlayStep, WrapMode};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::Playback;
use bevy::prelude::*;

/// Put on a character that plays clips whose root motion mode is `Extract`: each frame, `delta`
/// is how far the clip moved the root (Bevy axes, in the character's own frame), which the
/// skeleton itself no longer shows. With `apply`, rigplay moves the character's `Transform` by it
/// (turned by the character's rotation); otherwise the game reads `delta` and moves it.
#[derive(Component, Debug, Clone, Default, Reflect)]
#[reflect(Component, Default)]
pub struct RootMotion {
    /// Whether rigplay moves the character's `Transform` by the movement.
    pub apply: bool,
    /// Movement this frame.
    pub delta: Vec3,
    /// Movement since the clip started.
    pub total: Vec3,
    #[reflect(ignore)]
    last: Option<(AssetId<RigClip>, f32, u32)>,
}

impl RootMotion {
    /// Records this frame's movement, and applies it to the character when `apply` is set (the
    /// transform is marked changed only then, so a character whose game moves it is not
    /// propagated again for nothing).
    pub(crate) fn move_by(&mut self, delta: Vec3, transform: &mut Mut<Transform>) {
        self.delta = delta;
        self.total += delta;
        if self.apply {
            let step = transform.rotation * delta;
            transform.translation += step;
        }
    }

    /// Root motion applied to the character's transform.
    pub fn applied() -> Self {
        Self {
            apply: true,
            ..Self::default()
        }
    }
}

/// Root motion of characters playing through Bevy's `AnimationPlayer` ([`PlayAnimation`]).
pub(crate) fn extract_root_motion(
    mut characters: Query<(
        &mut RootMotion,
        &PlayAnimation,
        &AnimationPlayer,
        Option<&PlayingNode>,
        &mut Transform,
    )>,
    clips: LoadedClips,
) {
    for (mut motion, play, player, node, mut transform) in &mut characters {
        motion.delta = Vec3::ZERO;
        let Some(node) = node else { continue };
        let Some(active) = player.animation(node.0) else {
            continue;
        };
        let Some(info) = clips.get(play.clip.id()) else {
            continue;
        };
        let RootMotionMode::Extract { .. } = info.settings.root_motion else {
            continue;
        };
        let now = (play.clip.id(), active.seek_time(), active.completions());
        // A clip seen for the first time started at 0 this frame (PlayAnimation restarts it).
        let (t0, c0) = match motion.last.filter(|l| l.0 == now.0) {
            Some((_, t0, c0)) => (t0, c0),
            None => {
                motion.total = Vec3::ZERO;
                (0.0, 0)
            }
        };
        let laps = now.2.saturating_sub(c0) as i32;
        let delta = gta_vec_to_bevy(root_displacement(
            &info,
            t0,
            now.1,
            laps,
            info.settings.wrap_mode(),
        ));
        motion.move_by(delta, &mut transform);
        motion.last = Some(now);
    }
}

/// The root's movement (GTA axes, on the clip's extracted axes) from time `from` to time `to`
/// of a clip, `laps` wraps apart: each lap adds the distance from the first key to the last.
/// Times are brought into the clip by `wrap`.
pub(crate) fn root_displacement(
    info: &ClipInfo,
    from: f32,
    to: f32,
    laps: i32,
    wrap: WrapMode,
) -> Vec3 {
    let at = |t: f32| root_at(info, t);
    let wrapped = |t: f32| at(info.clip.wrap_time(t, wrap));
    wrapped(to) - wrapped(from) + (at(info.clip.duration()) - at(0.0)) * laps as f32
}

/// The root's translation at time `t` on the clip's extracted axes (zero without a root track).
fn root_at(info: &ClipInfo, t: f32) -> Vec3 {
    let axes = info.settings.root_motion.extracted_axes();
    let Some(root) = info.root_track else {
        return Vec3::ZERO;
    };
    info.clip
        .sample_track(root, t)
        .translation
        .unwrap_or_default()
        * axes
}

/// How far a playhead's step moved a clip's root (GTA axes, on the extracted axes): zero unless
/// the clip's root motion is extracted and the playhead moved. A looping play adds a lap's
/// distance per wrap; a play that does not loop follows the root from where it was to where it
/// is (the path of a ping-pong turn folds back on itself, so its ends are all that count).
pub(crate) fn playhead_displacement(
    info: &ClipInfo,
    step: &PlayStep,
    to: f32,
    mode: PlayMode,
) -> Vec3 {
    if !matches!(info.settings.root_motion, RootMotionMode::Extract { .. }) || step.step == 0.0 {
        return Vec3::ZERO;
    }
    match mode {
        PlayMode::Loop => root_displacement(info, step.from, to, step.laps, WrapMode::Loop),
        PlayMode::Once | PlayMode::PingPong => {
            let d = info.clip.duration();
            root_at(info, to.clamp(0.0, d)) - root_at(info, step.from.clamp(0.0, d))
        }
    }
}

/// How far a character's clip moved its root in the playhead's last step (see
/// [`playhead_displacement`]).
pub(crate) fn step_displacement(info: &ClipInfo, playback: &Playback) -> Vec3 {
    let step = PlayStep::from(playback.last_step());
    playhead_displacement(info, &step, playback.time, playback.mode)
}
