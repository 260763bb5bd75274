//! The engine-neutral animation model shared by every format and by the Bevy integration.
//!
//! A [`Clip`] is a set of [`BoneTrack`]s; each track has up to three channels (rotation,
//! translation, scale) of keys with their own times. All keys of a clip live in a few
//! contiguous arrays, and each channel is a range into them, so sampling touches little memory
//! and building a clip makes a handful of allocations whatever its size.
//!
//! Sampling rules (`docs/formats/ifp.md` §3.1–3.2, the same for every format):
//! * rotations are normalised and their sign flips removed when the clip is built, so
//!   consecutive keys are on the same hemisphere; between keys they are slerped (shortest path);
//! * translations and scales are interpolated linearly;
//! * before a channel's first key it holds the first key, after its last key the last one;
//! * a clip lasts as long as its latest key ([`Clip::duration`]); [`Clip::wrap_time`] maps a
//!   play time into it by looping or clamping.
//!
//! For forward playback, [`ClipCursor`] remembers the key each channel was last at, so that
//! advancing by a frame costs a comparison rather than a search.

pub(crate) mod hierarchy;
pub mod layers;
pub mod names;
mod playhead;
pub mod pose;
pub mod reduce;
pub mod retarget;
mod sampler;

pub use playhead::{PlayMode, PlayStep, Playhead, blend, wrap_time};
#[cfg(feature = "bevy")]
pub(crate) use playhead::{held_time, step_time};
pub use sampler::ClipCursor;

use glam::{Quat, Vec3, Vec4};
use std::fmt;

/// Which bone a track drives: its name as stored, and its numeric id when the format has one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoneRef {
    /// The name as the file stores it.
    pub name: String,
    /// The bone's numeric id (a GTA bone tag), when the format stores one.
    pub id: Option<i32>,
}

/// A channel: `len` keys whose times start at `times` and values at `values` in the clip's
/// arrays. Channels of one track may share their times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel {
    times: u32,
    values: u32,
    len: u32,
}

impl Channel {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the channel has no keys.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The channels that animate one bone.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneTrack {
    /// The bone it drives.
    pub bone: BoneRef,
    /// Rotation keys (normalised quaternions), if any.
    pub rotation: Option<Channel>,
    /// Translation keys (relative to the parent), if any.
    pub translation: Option<Channel>,
    /// Scale keys, if any.
    pub scale: Option<Channel>,
}

/// A local transform: what a track gives a bone at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BonePose {
    /// Rotation relative to the parent.
    pub rotation: Quat,
    /// Position in the parent's space.
    pub translation: Vec3,
    /// Scale along the bone's own axes.
    pub scale: Vec3,
}

impl Default for BonePose {
    fn default() -> Self {
        Self {
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
            scale: Vec3::ONE,
        }
    }
}

/// What one track gives at one time: `None` for the channels it does not have.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrackSample {
    /// The rotation, if the track has rotation keys.
    pub rotation: Option<Quat>,
    /// The translation, if the track has translation keys.
    pub translation: Option<Vec3>,
    /// The scale, if the track has scale keys.
    pub scale: Option<Vec3>,
}

/// How a play time beyond the clip's end maps into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WrapMode {
    /// Time wraps modulo the duration.
    #[default]
    Loop,
    /// Time is clamped to [0, duration].
    Clamp,
}

/// Precomputed slerp data for the segment from a rotation key to the next: the angle between the
/// two quaternions (≤ π/2 after flip removal) and 1 / sin of it; `inv_sin == 0` marks segments
/// short enough to normalised-lerp.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Arc {
    pub theta: f32,
    pub inv_sin: f32,
}

/// Below this angle between two keys, normalised lerp replaces slerp (error < 1e-7).
const NLERP_BELOW: f32 = 1e-2;

impl Arc {
    fn between(a: Quat, b: Quat) -> Self {
        let dot = a.dot(b).clamp(-1.0, 1.0);
        let theta = dot.acos();
        if theta < NLERP_BELOW {
            Arc {
                theta,
                inv_sin: 0.0,
            }
        } else {
            Arc {
                theta,
                inv_sin: 1.0 / theta.sin(),
            }
        }
    }
}

/// An animation clip in the engine-neutral model.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// The clip's name (as the file gives it).
    pub name: String,
    duration: f32,
    tracks: Vec<BoneTrack>,
    times: Vec<f32>,
    rotations: Vec<Quat>,
    arcs: Vec<Arc>,
    vectors: Vec<Vec3>,
}

/// A clip that cannot be built from the keys given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipError {
    /// A channel's values do not pair with its key times.
    #[error("{values} values for {times} key times")]
    LengthMismatch {
        /// Key times given.
        times: usize,
        /// Values given.
        values: usize,
    },
    /// Key times go backwards.
    #[error("key #{key} has time {time}, earlier than the key before it")]
    TimesNotSorted {
        /// Index of the first key whose time is earlier than its predecessor's.
        key: usize,
        /// Its time.
        time: f32,
    },
    /// A time or value is NaN or infinite.
    #[error("key #{key} has a value that is not a finite number")]
    NotFinite {
        /// Index of the key.
        key: usize,
    },
    /// More keys than 32-bit offsets can address.
    #[error("a clip holds at most 2^32 keys")]
    TooManyKeys,
}

/// Key times shared by the channels of a track, from [`ClipBuilder::times`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    start: u32,
    len: u32,
}

/// Builds a [`Clip`]: add key times, then channels on them, then tracks.
#[derive(Debug, Clone)]
pub struct ClipBuilder {
    clip: Clip,
}

fn index(n: usize) -> Result<u32, ClipError> {
    u32::try_from(n).map_err(|_| ClipError::TooManyKeys)
}

impl ClipBuilder {
    /// A builder for a clip called `name`, with no tracks yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            clip: Clip {
                name: name.into(),
                duration: 0.0,
                tracks: Vec::new(),
                times: Vec::new(),
                rotations: Vec::new(),
                arcs: Vec::new(),
                vectors: Vec::new(),
            },
        }
    }

    /// Reserves room for about `keys` keys in total.
    pub fn with_capacity(mut self, tracks: usize, keys: usize) -> Self {
        self.clip.tracks.reserve(tracks);
        self.clip.times.reserve(keys);
        self.clip.rotations.reserve(keys);
        self.clip.arcs.reserve(keys);
        self
    }

    /// Adds key times (seconds, finite, non-decreasing) for channels to use.
    pub fn times(&mut self, times: &[f32]) -> Result<Times, ClipError> {
        for (k, w) in times.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(ClipError::TimesNotSorted {
                    key: k + 1,
                    time: w[1],
                });
            }
        }
        if let Some(k) = times.iter().position(|t| !t.is_finite()) {
            return Err(ClipError::NotFinite { key: k });
        }
        let start = index(self.clip.times.len())?;
        self.clip.times.extend_from_slice(times);
        index(self.clip.times.len())?;
        if let Some(&last) = times.last() {
            self.clip.duration = self.clip.duration.max(last);
        }
        Ok(Times {
            start,
            len: index(times.len())?,
        })
    }

    /// Adds a rotation channel. Each key is normalised (a zero quaternion becomes identity) and
    /// negated where its dot product with the previous key is negative, so that interpolation
    /// takes the shortest path; the slerp angles are precomputed.
    pub fn rotations(&mut self, times: Times, values: &[Quat]) -> Result<Channel, ClipError> {
        self.push_rotations(times, values, true)
    }

    /// [`Self::rotations`] for keys that are unit quaternions already, such as the keys of
    /// another clip: they are stored as given (up to the sign flip), because normalising a unit
    /// quaternion again can change its last bits.
    pub(crate) fn unit_rotations(
        &mut self,
        times: Times,
        values: &[Quat],
    ) -> Result<Channel, ClipError> {
        self.push_rotations(times, values, false)
    }

    fn push_rotations(
        &mut self,
        times: Times,
        values: &[Quat],
        normalize: bool,
    ) -> Result<Channel, ClipError> {
        if values.len() != times.len as usize {
            return Err(ClipError::LengthMismatch {
                times: times.len as usize,
                values: values.len(),
            });
        }
        if let Some(k) = values.iter().position(|q| !Vec4::from(*q).is_finite()) {
            return Err(ClipError::NotFinite { key: k });
        }
        let start = index(self.clip.rotations.len())?;
        let mut previous: Option<Quat> = None;
        for &q in values {
            let mut q = if normalize { q.try_normalize_quat() } else { q };
            if let Some(p) = previous {
                q = aligned_to(q, p);
                let last = self.clip.arcs.len() - 1;
                self.clip.arcs[last] = Arc::between(p, q);
            }
            self.clip.rotations.push(q);
            self.clip.arcs.push(Arc::default());
            previous = Some(q);
        }
        Ok(Channel {
            times: times.start,
            values: start,
            len: times.len,
        })
    }

    fn vectors(&mut self, times: Times, values: &[Vec3]) -> Result<Channel, ClipError> {
        if values.len() != times.len as usize {
            return Err(ClipError::LengthMismatch {
                times: times.len as usize,
                values: values.len(),
            });
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(ClipError::NotFinite { key: k });
        }
        let start = index(self.clip.vectors.len())?;
        self.clip.vectors.extend_from_slice(values);
        index(self.clip.vectors.len())?;
        Ok(Channel {
            times: times.start,
            values: start,
            len: times.len,
        })
    }

    /// Adds a translation channel (linear interpolation).
    pub fn translations(&mut self, times: Times, values: &[Vec3]) -> Result<Channel, ClipError> {
        self.vectors(times, values)
    }

    /// Adds a scale channel (linear interpolation).
    pub fn scales(&mut self, times: Times, values: &[Vec3]) -> Result<Channel, ClipError> {
        self.vectors(times, values)
    }

    /// Adds a track made of channels returned by this builder. Channels without keys are
    /// dropped (the bone keeps its rest value for them).
    pub fn track(&mut self, mut track: BoneTrack) {
        for c in [
            &mut track.rotation,
            &mut track.translation,
            &mut track.scale,
        ] {
            if c.is_some_and(|c| c.is_empty()) {
                *c = None;
            }
        }
        self.clip.tracks.push(track);
    }

    /// Makes the clip last at least `seconds` (a format's declared range may end after its
    /// last key: the pose holds until then).
    pub fn extend_duration(&mut self, seconds: f32) {
        if seconds.is_finite() {
            self.clip.duration = self.clip.duration.max(seconds);
        }
    }

    /// The clip, lasting until its latest key (or the duration it was extended to).
    pub fn build(self) -> Clip {
        self.clip
    }
}

/// Key times made strictly increasing, for engines and formats that need them so (Bevy's
/// keyframe curves keep the first of equal times and drop the rest; glTF refuses them), while
/// rigplay's sampler steps to the last of equal times: each earlier one moves back by one ulp,
/// so both give the same values everywhere but inside those ulps, and no key is lost.
pub fn distinct_times(times: &[f32]) -> Vec<f32> {
    let mut out = times.to_vec();
    for k in (0..out.len().saturating_sub(1)).rev() {
        if out[k] >= out[k + 1] {
            out[k] = out[k + 1].next_down();
        }
    }
    out
}

/// `q` or `−q`, whichever lies on `previous`'s hemisphere, so that the slerp from `previous` to it
/// takes the shorter way.
///
/// When the two are exactly 180° apart as rotations (dot product ±0) both ways are as short, and
/// the choice must not depend on the sign earlier keys happened to give `previous` (a reduced
/// clip, whose kept keys can get other signs, would turn the other way round). So `q` then gets
/// the same canonical sign as `previous` ([`canonical_sign`]): the motion is the same for
/// `previous` and `−previous`, and aligning keys that are aligned already changes nothing.
pub(crate) fn aligned_to(q: Quat, previous: Quat) -> Quat {
    let dot = previous.dot(q);
    let flip = if dot == 0.0 {
        canonical_sign(q) != canonical_sign(previous)
    } else {
        dot < 0.0
    };
    if flip { -q } else { q }
}

/// Whether the first non-zero component of `q` in the order w, x, y, z is positive (q and −q
/// differ in this, so it picks one of the two).
fn canonical_sign(q: Quat) -> bool {
    [q.w, q.x, q.y, q.z]
        .into_iter()
        .find(|c| *c != 0.0)
        .is_none_or(|c| c > 0.0)
}

trait TryNormalizeQuat {
    fn try_normalize_quat(self) -> Quat;
}

impl TryNormalizeQuat for Quat {
    fn try_normalize_quat(self) -> Quat {
        Vec4::from(self)
            .try_normalize()
            .map(Quat::from_vec4)
            .unwrap_or(Quat::IDENTITY)
    }
}

impl Clip {
    /// Latest key time of any channel (or the longer duration the format declared, see
    /// [`ClipBuilder::extend_duration`]), in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The same clip with `offset(track)` added to every translation key of each track it gives
    /// an offset for (GTA III's additive translations: a key is added to the bone's rest
    /// position, `docs/formats/ifp.md` §3.4). Non-finite offsets are ignored.
    pub fn with_translation_offsets(&self, offset: impl Fn(usize) -> Option<Vec3>) -> Clip {
        let mut clip = self.clone();
        for (i, track) in self.tracks.iter().enumerate() {
            let (Some(c), Some(o)) = (track.translation, offset(i).filter(|o| o.is_finite()))
            else {
                continue;
            };
            let (v0, n) = (c.values as usize, c.len as usize);
            if let Some(values) = clip.vectors.get_mut(v0..v0 + n) {
                values.iter_mut().for_each(|v| *v += o);
            }
        }
        clip
    }

    /// The same clip without the translation keys of `tracks` (their bones then keep their
    /// rest positions); other tracks and indices out of range are left as they are.
    pub fn without_translations(&self, tracks: &[usize]) -> Clip {
        let mut clip = self.clone();
        for &t in tracks {
            if let Some(track) = clip.tracks.get_mut(t) {
                track.translation = None;
            }
        }
        clip
    }

    /// The same clip with root motion taken out of track `track`'s translation, once, as the
    /// clip is built for playing: on `axes` (1 where extracted, 0 where kept; other values
    /// blend), every key holds the first key's value, so the root stays where the clip starts
    /// and its movement is left to whoever reads it from the original clip. A track without
    /// translation, a track index out of range or zero axes give the clip unchanged.
    pub fn with_root_held(&self, track: usize, axes: Vec3) -> Clip {
        let mut clip = self.clone();
        let Some(c) = self.tracks.get(track).and_then(|t| t.translation) else {
            return clip;
        };
        if axes == Vec3::ZERO || !axes.is_finite() {
            return clip;
        }
        let (v0, n) = (c.values as usize, c.len as usize);
        if let Some(values) = clip.vectors.get_mut(v0..v0 + n)
            && let Some(&first) = values.first()
        {
            values
                .iter_mut()
                .for_each(|v| *v = *v * (Vec3::ONE - axes) + first * axes);
        }
        clip
    }

    /// The clip's tracks, in the order they were added.
    pub fn tracks(&self) -> &[BoneTrack] {
        &self.tracks
    }

    /// Total number of keys over all channels.
    pub fn key_count(&self) -> usize {
        self.tracks
            .iter()
            .flat_map(|t| [t.rotation, t.translation, t.scale])
            .flatten()
            .map(|c| c.len())
            .sum()
    }

    /// Maps a play time into the clip.
    /// A NaN time maps to 0.
    pub fn wrap_time(&self, time: f32, mode: WrapMode) -> f32 {
        wrap_time(time, self.duration, mode)
    }

    /// The rate the clip's keys were sampled at, frames per second: 1 over the smallest
    /// positive step between consecutive keys of a channel (a 30 fps clip keyed on every other
    /// frame reads as 15). `None` for a clip whose channels have one key each.
    pub fn frame_rate(&self) -> Option<f32> {
        let step = self
            .tracks
            .iter()
            .flat_map(|t| [t.rotation, t.translation, t.scale])
            .flatten()
            .flat_map(|c| self.times(c).windows(2).map(|w| w[1] - w[0]))
            .filter(|d| *d > 0.0)
            .fold(f32::INFINITY, f32::min);
        step.is_finite().then(|| 1.0 / step)
    }

    /// Key times of a channel.
    pub fn times(&self, channel: Channel) -> &[f32] {
        &self.times[channel.times as usize..(channel.times + channel.len) as usize]
    }

    /// Rotation keys of a rotation channel (normalised, flips removed).
    pub fn rotation_values(&self, channel: Channel) -> &[Quat] {
        &self.rotations[channel.values as usize..(channel.values + channel.len) as usize]
    }

    /// Keys of a translation or scale channel.
    pub fn vector_values(&self, channel: Channel) -> &[Vec3] {
        &self.vectors[channel.values as usize..(channel.values + channel.len) as usize]
    }

    /// Samples one track at `time` (seconds, already wrapped), searching its keys.
    pub fn sample_track(&self, track: usize, time: f32) -> TrackSample {
        let t = &self.tracks[track];
        let mut k = 0;
        TrackSample {
            rotation: t.rotation.map(|c| self.sample_rotation(c, time, &mut k)),
            translation: t.translation.map(|c| self.sample_vector(c, time, &mut k)),
            scale: t.scale.map(|c| self.sample_vector(c, time, &mut k)),
        }
    }
}

impl fmt::Display for BoneRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.id {
            Some(id) => write!(f, "{:?} (id {id})", self.name),
            None => write!(f, "{:?}", self.name),
        }
    }
}
