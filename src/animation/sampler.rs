//! Sampling: key lookup with a per-channel cursor, slerp with precomputed angles.

use super::{Arc, BonePose, Channel, Clip};
use glam::{Quat, Vec3, Vec4};

/// Where each channel of a clip was last sampled, for fast forward playback. One per playing
/// instance; made by [`Clip::cursor`]. Any cursor works with any time (a jump backwards or far
/// ahead falls back to a binary search); it only makes small forward steps cheap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClipCursor {
    keys: Vec<u32>,
}

/// How many keys a cursor steps forward before it gives up and searches.
const MAX_STEPS: usize = 4;

/// Finds the keys around `t`: `(lo, hi, u)` with the value `lerp(key[lo], key[hi], u)`.
/// Before the first key and after the last, `lo == hi`.
#[inline(always)]
fn locate(times: &[f32], t: f32, cursor: &mut u32) -> (usize, usize, f32) {
    let n = times.len();
    let last = n - 1;
    // "Not after the first key", so that a NaN time lands here too.
    if t.partial_cmp(&times[0]) != Some(std::cmp::Ordering::Greater) {
        *cursor = 0;
        return (0, 0, 0.0);
    }
    if t >= times[last] {
        return (last, last, 0.0);
    }
    // Here n >= 2 and times[0] < t < times[last]: the segment k with times[k] <= t < times[k+1]
    // exists and k < last.
    let mut k = (*cursor as usize).min(last - 1);
    if times[k] <= t {
        let mut steps = 0;
        while times[k + 1] <= t {
            k += 1;
            steps += 1;
            if steps == MAX_STEPS {
                k = times.partition_point(|&x| x <= t) - 1;
                break;
            }
        }
    } else {
        k = times.partition_point(|&x| x <= t) - 1;
    }
    *cursor = k as u32;
    let t0 = times[k];
    let dt = times[k + 1] - t0;
    let u = if dt > 0.0 { (t - t0) / dt } else { 1.0 };
    (k, k + 1, u)
}

/// sin(x) for x in [0, π/2], Taylor series to x¹¹: error below 6e-8 on that range.
#[inline(always)]
fn sin_0_to_half_pi(x: f32) -> f32 {
    let x2 = x * x;
    x * (1.0
        + x2 * (-1.0 / 6.0
            + x2 * (1.0 / 120.0
                + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362_880.0 + x2 * (-1.0 / 39_916_800.0))))))
}

/// Slerp from `a` to `b` (same hemisphere) by `u`, with the segment's precomputed angle.
#[inline(always)]
pub(super) fn slerp_arc(a: Quat, b: Quat, arc: Arc, u: f32) -> Quat {
    let (va, vb) = (Vec4::from(a), Vec4::from(b));
    if arc.inv_sin == 0.0 {
        return Quat::from_vec4((va + (vb - va) * u).normalize());
    }
    let wa = sin_0_to_half_pi((1.0 - u) * arc.theta) * arc.inv_sin;
    let wb = sin_0_to_half_pi(u * arc.theta) * arc.inv_sin;
    Quat::from_vec4(va * wa + vb * wb)
}

/// Linear interpolation as `a + (b − a)·u`: between two equal keys it gives the key exactly
/// (glam's `a·(1 − u) + b·u` may not), so that a constant run holds its value bit for bit. Keys
/// so far apart that `b − a` overflows f32 take the other form, which stays finite.
#[inline(always)]
pub(super) fn lerp_vec(a: Vec3, b: Vec3, u: f32) -> Vec3 {
    let d = b - a;
    if d.is_finite() {
        a + d * u
    } else {
        a * (1.0 - u) + b * u
    }
}

impl Clip {
    /// A fresh cursor for this clip.
    pub fn cursor(&self) -> ClipCursor {
        ClipCursor {
            keys: vec![0; self.tracks.len() * 3],
        }
    }

    #[inline(always)]
    pub(super) fn sample_rotation(&self, c: Channel, t: f32, cursor: &mut u32) -> Quat {
        let (t0, v0, n) = (c.times as usize, c.values as usize, c.len as usize);
        let (lo, hi, u) = locate(&self.times[t0..t0 + n], t, cursor);
        let keys = &self.rotations[v0..v0 + n];
        if lo == hi {
            keys[lo]
        } else {
            slerp_arc(keys[lo], keys[hi], self.arcs[v0 + lo], u)
        }
    }

    #[inline(always)]
    pub(super) fn sample_vector(&self, c: Channel, t: f32, cursor: &mut u32) -> Vec3 {
        let (t0, v0, n) = (c.times as usize, c.values as usize, c.len as usize);
        let (lo, hi, u) = locate(&self.times[t0..t0 + n], t, cursor);
        let keys = &self.vectors[v0..v0 + n];
        if lo == hi {
            keys[lo]
        } else {
            lerp_vec(keys[lo], keys[hi], u)
        }
    }

    /// Samples every track at `time` (seconds, already wrapped) into `poses`, one per track in
    /// track order, overwriting only the channels each track has (the others keep what the
    /// caller put there, usually the rest pose). `cursor` must come from this clip.
    pub fn sample(&self, time: f32, cursor: &mut ClipCursor, poses: &mut [BonePose]) {
        if cursor.keys.len() != self.tracks.len() * 3 {
            *cursor = self.cursor();
        }
        for ((track, pose), keys) in self
            .tracks
            .iter()
            .zip(poses.iter_mut())
            .zip(cursor.keys.chunks_exact_mut(3))
        {
            if let Some(c) = track.rotation {
                pose.rotation = self.sample_rotation(c, time, &mut keys[0]);
            }
            if let Some(c) = track.translation {
                pose.translation = self.sample_vector(c, time, &mut keys[1]);
            }
            if let Some(c) = track.scale {
                pose.scale = self.sample_vector(c, time, &mut keys[2]);
            }
        }
    }
}
