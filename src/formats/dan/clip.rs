//! From a [`DanFile`] to the engine-neutral [`Clip`] in Bevy's axes, and back.
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

use super::error::{DanTrack, DanWriteError};
use super::{DanBone, DanFile, RotationKey, VectorKey};
use crate::animation::{BoneRef, BoneTrack, Clip, ClipBuilder};
use crate::coords::{
    bevy_quat_to_dan, bevy_scale_to_dan, bevy_vec_to_dan, dan_quat_to_bevy, dan_scale_to_bevy,
    dan_vec_to_bevy,
};
use glam::{Quat, Vec3};

/// How a DAN file becomes a clip.
#[derive(Debug, Clone, PartialEq)]
pub struct DanClipOptions {
    /// Multiplies positions: the file is in the Max scene's units (often centimetres or
    /// inches); 0.01 turns centimetres into metres. 1 keeps the file's units; a value that is
    /// not finite, or 0, reads as 1 (see [`DanClipOptions::position_scale`]).
    pub scale: f32,
    /// Bone names by index; bones beyond the list are named `bone_<index>`.
    pub names: Vec<String>,
}

impl Default for DanClipOptions {
    fn default() -> Self {
        Self {
            scale: 1.0,
            names: Vec::new(),
        }
    }
}

impl DanClipOptions {
    /// The scale positions are multiplied by: [`Self::scale`] when it is finite and not 0,
    /// else 1 (a scale of 0 would flatten the rig and lose the positions for good).
    pub fn position_scale(&self) -> f32 {
        if self.scale.is_finite() && self.scale != 0.0 {
            self.scale
        } else {
            1.0
        }
    }

    /// The name of bone `index`: from [`Self::names`], else `bone_<index>`.
    pub fn bone_name(&self, index: usize) -> String {
        self.names
            .get(index)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("bone_{index}"))
    }
}

impl DanFile {
    /// Start of the animation range in milliseconds: the header's, or the earliest key when the
    /// header's range is not finite.
    fn origin_ms(&self) -> f64 {
        if self.start_ms.is_finite() && self.end_ms.is_finite() {
            self.start_ms as f64
        } else {
            self.key_times().min().map_or(0.0, |t| t as f64)
        }
    }

    fn key_times(&self) -> impl Iterator<Item = i32> + '_ {
        self.bones.iter().flat_map(|b| {
            b.rotations
                .iter()
                .map(|k| k.time_ms)
                .chain(b.positions.iter().map(|k| k.time_ms))
                .chain(b.scales.iter().map(|k| k.time_ms))
        })
    }

    /// Length of the animation range in seconds (`end − start`), at least the latest key's
    /// time from the start, never negative.
    pub fn duration(&self) -> f32 {
        let origin = self.origin_ms();
        let range = if self.start_ms.is_finite() && self.end_ms.is_finite() {
            (self.end_ms as f64 - origin).max(0.0)
        } else {
            0.0
        };
        let keys = self
            .key_times()
            .map(|t| t as f64 - origin)
            .fold(0.0, f64::max);
        (range.max(keys) / 1000.0) as f32
    }

    /// The clip in the engine-neutral model, in Bevy's axes (right-handed, Y up; the conversion
    /// is [`crate::coords::dan_quat_to_bevy`] and its siblings), one track per bone in file
    /// order (a bone without keys gives a track without channels), times in seconds from the
    /// animation range's start, each channel stably sorted by time (the exporter's defect, §3),
    /// rotations normalised. The clip lasts the whole animation range.
    pub fn to_clip(&self, name: &str, options: &DanClipOptions) -> Clip {
        let origin = self.origin_ms();
        let seconds = |t: i32| ((t as f64 - origin) / 1000.0) as f32;
        let scale = options.position_scale();
        let mut b = ClipBuilder::new(name).with_capacity(self.bones.len(), self.key_count());
        let sorted = self.sorted();
        for (i, bone) in sorted.bones.iter().enumerate() {
            let mut track = BoneTrack {
                bone: BoneRef {
                    name: options.bone_name(i),
                    id: None,
                },
                rotation: None,
                translation: None,
                scale: None,
            };
            // The reader rejects non-finite values and the keys are sorted, so the builder
            // accepts them; were it not to, the channel would be left out rather than panic.
            let times: Vec<f32> = bone.rotations.iter().map(|k| seconds(k.time_ms)).collect();
            let values: Vec<Quat> = bone
                .rotations
                .iter()
                .map(|k| dan_quat_to_bevy(k.value))
                .collect();
            if let Ok(t) = b.times(&times) {
                track.rotation = b.rotations(t, &values).ok();
            }
            let times: Vec<f32> = bone.positions.iter().map(|k| seconds(k.time_ms)).collect();
            let values: Vec<Vec3> = bone
                .positions
                .iter()
                // Saturated, so that a huge scale cannot turn a key infinite (and drop it).
                .map(|k| {
                    (dan_vec_to_bevy(k.value) * scale)
                        .clamp(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX))
                })
                .collect();
            if let Ok(t) = b.times(&times) {
                track.translation = b.translations(t, &values).ok();
            }
            let times: Vec<f32> = bone.scales.iter().map(|k| seconds(k.time_ms)).collect();
            let values: Vec<Vec3> = bone
                .scales
                .iter()
                .map(|k| dan_scale_to_bevy(k.value))
                .collect();
            if let Ok(t) = b.times(&times) {
                track.scale = b.scales(t, &values).ok();
            }
            b.track(track);
        }
        b.extend_duration(self.duration());
        b.build()
    }

    /// A file holding `clip` (in Bevy's axes, model-space tracks, one bone per track in track
    /// order; positions divided by `options.scale`), its range `0..duration`, key times rounded
    /// to whole milliseconds as the exporter writes them.
    pub fn from_clip(clip: &Clip, options: &DanClipOptions) -> Result<DanFile, DanWriteError> {
        let ms = |bone: usize, track: DanTrack, key: usize, t: f32| {
            let v = (t as f64 * 1000.0).round();
            if v.is_finite() && v >= i32::MIN as f64 && v <= i32::MAX as f64 {
                Ok(v as i32)
            } else {
                Err(DanWriteError::TimeOutOfRange {
                    bone,
                    track,
                    key,
                    seconds: t,
                })
            }
        };
        let scale = options.position_scale();
        let mut file = DanFile::new();
        file.end_ms = ms(0, DanTrack::Rotation, 0, clip.duration()).map_err(|_| {
            DanWriteError::DurationOutOfRange {
                seconds: clip.duration(),
            }
        })? as f32;
        for (i, track) in clip.tracks().iter().enumerate() {
            let mut bone = DanBone::default();
            if let Some(c) = track.rotation {
                for (k, (&t, &q)) in clip
                    .times(c)
                    .iter()
                    .zip(clip.rotation_values(c))
                    .enumerate()
                {
                    bone.rotations.push(RotationKey {
                        time_ms: ms(i, DanTrack::Rotation, k, t)?,
                        value: bevy_quat_to_dan(q),
                    });
                }
            }
            if let Some(c) = track.translation {
                for (k, (&t, &v)) in clip.times(c).iter().zip(clip.vector_values(c)).enumerate() {
                    bone.positions.push(VectorKey {
                        time_ms: ms(i, DanTrack::Position, k, t)?,
                        value: bevy_vec_to_dan(v / scale),
                    });
                }
            }
            if let Some(c) = track.scale {
                for (k, (&t, &v)) in clip.times(c).iter().zip(clip.vector_values(c)).enumerate() {
                    bone.scales.push(VectorKey {
                        time_ms: ms(i, DanTrack::Scale, k, t)?,
                        value: bevy_scale_to_dan(v),
                    });
                }
            }
            file.bones.push(bone);
        }
        Ok(file)
    }

    /// The file with only the keys `kept` lists, per bone and channel indices into the keys of
    /// [`DanFile::sorted`] (what [`crate::animation::reduce`] returns for [`DanFile::to_clip`]'s
    /// clip, whose tracks are this file's bones in order).
    pub fn with_keys(&self, kept: &[crate::animation::reduce::KeptKeys]) -> DanFile {
        fn pick<K: Copy>(keys: &[K], kept: &[u32]) -> Vec<K> {
            kept.iter()
                .filter_map(|&i| keys.get(i as usize).copied())
                .collect()
        }
        let mut out = self.sorted();
        for (bone, kept) in out.bones.iter_mut().zip(kept) {
            bone.rotations = pick(&bone.rotations, &kept.rotation);
            bone.positions = pick(&bone.positions, &kept.translation);
            bone.scales = pick(&bone.scales, &kept.scale);
        }
        out
    }
}
