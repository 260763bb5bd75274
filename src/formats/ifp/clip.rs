//! From IFP sequences to the engine-neutral [`Clip`].

use super::{IfpClip, IfpKey};
use crate::animation::{BoneRef, BoneTrack, Clip, ClipBuilder};
use glam::{Quat, Vec3};

impl IfpClip {
    /// The clip in the engine-neutral model. Sequences without keys are left out (the games
    /// ignore them); keys whose times go backwards are sorted (stably); quaternions are
    /// normalised and their sign flips removed. Times stay absolute (a track whose first key is
    /// after 0 holds that key until then), and the duration is the latest key time.
    pub fn to_clip(&self) -> Clip {
        let keys: usize = self.sequences.iter().map(|s| s.keys.len()).sum();
        let mut b = ClipBuilder::new(self.name.clone()).with_capacity(self.sequences.len(), keys);
        let mut sorted: Vec<IfpKey> = Vec::new();
        let mut times: Vec<f32> = Vec::new();
        let mut rotations: Vec<Quat> = Vec::new();
        let mut vectors: Vec<Vec3> = Vec::new();
        for seq in self.sequences.iter().filter(|s| becomes_track(s)) {
            let keys: &[IfpKey] = if seq.keys.windows(2).all(|w| w[0].time <= w[1].time) {
                &seq.keys
            } else {
                sorted.clear();
                sorted.extend_from_slice(&seq.keys);
                sort_by_time(&mut sorted);
                &sorted
            };
            times.clear();
            times.extend(keys.iter().map(|k| k.time));
            // The reader rejects non-finite values and the times are sorted just above, so the
            // builder accepts these keys; a failure here would be a bug, reported as an empty track.
            let Ok(t) = b.times(&times) else { continue };
            rotations.clear();
            rotations.extend(keys.iter().map(|k| Quat::from_array(k.rotation)));
            let rotation = b.rotations(t, &rotations).ok();
            let translation = if seq.has_translation {
                vectors.clear();
                vectors.extend(keys.iter().map(|k| Vec3::from_array(k.translation)));
                b.translations(t, &vectors).ok()
            } else {
                None
            };
            let scale = if seq.has_scale {
                vectors.clear();
                vectors.extend(keys.iter().map(|k| Vec3::from_array(k.scale)));
                b.scales(t, &vectors).ok()
            } else {
                None
            };
            b.track(BoneTrack {
                bone: BoneRef {
                    name: seq.name.clone(),
                    id: (seq.bone_id != -1).then_some(seq.bone_id),
                },
                rotation,
                translation,
                scale,
            });
        }
        b.build()
    }

    /// Keeps only the keys `kept` lists: per track of [`IfpClip::to_clip`]'s clip (the
    /// sequences that have keys, in order), indices into its keys sorted by time, as
    /// [`crate::animation::reduce`] returns them. Channels of a sequence share their keys in IFP, so
    /// the rotation channel's list decides. Sequences left with unsorted times are sorted.
    pub fn keep_keys(&mut self, kept: &[crate::animation::reduce::KeptKeys]) {
        for (seq, kept) in self
            .sequences
            .iter_mut()
            .filter(|s| becomes_track(s))
            .zip(kept)
        {
            sort_by_time(&mut seq.keys);
            let keys = std::mem::take(&mut seq.keys);
            seq.keys = kept
                .rotation
                .iter()
                .filter_map(|&i| keys.get(i as usize).copied())
                .collect();
        }
    }
}

/// Whether [`IfpClip::to_clip`] makes a track of the sequence: it has keys, at finite times (the
/// reader guarantees finite times; a package built in code might not).
fn becomes_track(seq: &super::IfpSequence) -> bool {
    !seq.keys.is_empty() && seq.keys.iter().all(|k| k.time.is_finite())
}

/// Stable sort by time in which equal times (0.0 and −0.0 too) keep their order: the order of
/// the clip's keys, which [`IfpClip::keep_keys`] indices refer to.
fn sort_by_time(keys: &mut [IfpKey]) {
    keys.sort_by(|a, b| {
        a.time
            .partial_cmp(&b.time)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}
