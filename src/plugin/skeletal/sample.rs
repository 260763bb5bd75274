//! Sampling a [`SkeletalClip`] character each frame: [`sample_skeletal`] samples the clip of
//! every character on its common frame (bound before, no fade) on the task pool's threads;
//! [`apply_skeletal`] does what the other frames need (a fresh binding, a fade, root motion)
//! and writes those bones itself. The bones of a character on its
//! common frame are written by the bone pass ([`super::write`]).
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::bind::{BonePass, PlaybackBinding, PoseLayouts, PoseSource};
use super::fade::{FadeStep, step_fade};
use super::{ClipLayers, LoadedClips, RootMotion, SkeletalClip, step_displacement};
use crate::animation::pose::{self, LocalPose};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::Playback;
use bevy::prelude::*;

/// Samples the clip of every character on its common frame (bound before, no fade) at its
/// playhead's time, spread over the task pool's threads: each character touches only its own
/// components. A clip on a shared timeline is left to the bone pass, which samples it as it
/// writes the bones.
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
            match &binding.layout {
                Some(_) if source.timeline => {
                    source.pass = BonePass::Sample;
                }
                Some(layout) => {
                    pose::sample(
                        layout,
                        playback.time,
                        &mut binding.pose_cursor,
                        &mut binding.local,
                    );
                    source.pass = BonePass::Sampled;
                }
                // Not ready without it.
                None => return,
            }
            binding.presampled = true;
        });
}

/// Finishes every bound character's frame: moves it by its root motion, and poses the bones the
/// bone pass does not (on a frame that binds or fades: the current clip, and a clip fading out
/// blended in).
pub(crate) fn apply_skeletal(
    time: Res<Time>,
    clips: LoadedClips,
    mut layouts: ResMut<PoseLayouts>,
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
        // The common frame on the pose pipeline: the bones are the bone pass's, and on a
        // timeline clip the binding is not read. (A character going to rest is never on it.)
        if source.pass != BonePass::Off && root_motion.is_none() {
            if source.pass == BonePass::Sampled && binding.presampled {
                binding.presampled = false;
            }
            continue;
        }
        let binding = &mut *binding;
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
        let common = !rebound && skeletal.fade.is_none();
        if let Some(layout) = &binding.layout {
            if !presampled {
                pose::sample(layout, now, &mut binding.pose_cursor, &mut binding.local);
            }
            if common {
                // The common frame: the bone pass writes the bones from this pose.
                continue;
            }
        }
        // Binding or blending: the current clip's pose, and the clip fading out blended in.
        let step = step_fade(
            &mut skeletal,
            binding,
            playback,
            &clips,
            &mut layouts,
            &transforms,
            dt,
            rebound,
        );
        let (pose, all): (&LocalPose, bool) = match step {
            FadeStep::None | FadeStep::Done => (&binding.local, true),
            FadeStep::Blended => (&binding.mixed, rebound),
        };
        // Bones no clip drives stay at the rest pose written when the character was bound;
        // a new binding, and the end of a fade, write them all (the bones only the old clip
        // drove go back to rest).
        let reader = pose.reader();
        for (b, (e, _, _)) in binding.bones.iter().enumerate() {
            if !all && !binding.fade_drives(b) {
                continue;
            }
            if let Some(p) = reader.get(b)
                && let Ok(mut t) = transforms.get_mut(*e)
            {
                *t = Transform::from(p);
            }
        }
    }
}
