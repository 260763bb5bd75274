//! Building Bevy `AnimationClip`s from engine-neutral clips, for Bevy's `AnimationPlayer`
//! ([`super::PlayAnimation`]) and any tool that wants Bevy's own clip type.

use super::RootMotionMode;
use crate::animation::{Clip, distinct_times};
use bevy::animation::animation_curves::{AnimatableCurve, AnimatedField};
use bevy::animation::{AnimationTargetId, animated_field};
use bevy::math::curve::{ConstantCurve, Interval, UnevenSampleAutoCurve};
use bevy::prelude::*;

/// Adds a keyframe curve on `field` of `Transform`: constant for one key, else Bevy's
/// interpolating curve (slerp for rotations, lerp for vectors).
macro_rules! add_keys {
    ($out:expr, $target:expr, $field:ident, $times:expr, $values:expr) => {{
        let values = $values;
        match values {
            [only] => $out.add_curve_to_target(
                $target,
                AnimatableCurve::new(
                    animated_field!(Transform::$field),
                    ConstantCurve::new(Interval::EVERYWHERE, *only),
                ),
            ),
            _ => {
                if let Ok(curve) =
                    UnevenSampleAutoCurve::new($times.iter().copied().zip(values.iter().copied()))
                {
                    $out.add_curve_to_target(
                        $target,
                        AnimatableCurve::new(animated_field!(Transform::$field), curve),
                    );
                }
            }
        }
    }};
}

/// Builds the Bevy `AnimationClip`: one rotation / translation / scale curve per channel on the
/// track's target id (`targets`, one per track), with the clip's duration; root motion removed
/// from the `root` track as the mode says ([`Clip::with_root_held`], as the loaders do for
/// rigplay's own players).
pub fn animation_clip(
    clip: &Clip,
    targets: &[AnimationTargetId],
    root: Option<usize>,
    root_motion: RootMotionMode,
) -> AnimationClip {
    let mut out = AnimationClip::default();
    let held;
    let clip = match root {
        Some(r) if root_motion.extracted_axes() != Vec3::ZERO => {
            held = clip.with_root_held(r, root_motion.extracted_axes());
            &held
        }
        _ => clip,
    };
    for (track, &target) in clip.tracks().iter().zip(targets) {
        if let Some(c) = track.rotation {
            add_keys!(
                out,
                target,
                rotation,
                distinct_times(clip.times(c)),
                clip.rotation_values(c)
            );
        }
        if let Some(c) = track.translation {
            add_keys!(
                out,
                target,
                translation,
                distinct_times(clip.times(c)),
                clip.vector_values(c)
            );
        }
        if let Some(c) = track.scale {
            add_keys!(
                out,
                target,
                scale,
                distinct_times(clip.times(c)),
                clip.vector_values(c)
            );
        }
    }
    // A repeating clip of duration 0 would make Bevy's player time NaN.
    out.set_duration(clip.duration().max(f32::EPSILON));
    out
}
