//! Errors and warnings of the DAN reader and writer.
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

use crate::formats::Bounds;
use std::fmt;

/// A channel of a bone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DanTrack {
    /// The rotation keys.
    Rotation,
    /// The position keys.
    Position,
    /// The scale keys.
    Scale,
}

impl fmt::Display for DanTrack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DanTrack::Rotation => "rotation",
            DanTrack::Position => "position",
            DanTrack::Scale => "scale",
        })
    }
}

/// Where in the file a problem is: bone index, channel and key index, as far as known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DanLocation {
    /// The bone's index in the file's bone list.
    pub bone: Option<usize>,
    /// The bone's channel.
    pub track: Option<DanTrack>,
    /// The key's index in that channel.
    pub key: Option<usize>,
}

impl fmt::Display for DanLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(b) = self.bone {
            write!(f, ", bone #{b}")?;
        }
        if let Some(t) = self.track {
            write!(f, " {t}")?;
        }
        if let Some(k) = self.key {
            write!(f, " key #{k}")?;
        }
        Ok(())
    }
}

/// A file that cannot be read: what was expected, at which byte, for which bone, track and key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} at byte {offset}{location}")]
pub struct DanError {
    /// Byte offset in the file where the problem is.
    pub offset: u64,
    /// The bone, channel and key being read, as far as known.
    pub location: DanLocation,
    /// What is wrong.
    pub kind: DanErrorKind,
}

/// What is wrong with a file that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DanErrorKind {
    /// What every binary reader refuses alike: the file ends inside a value, a count
    /// cannot fit in the bytes left, a negative count.
    #[error(transparent)]
    Bounds(#[from] Bounds),
    /// The header's version is not [`super::DAN_VERSION`].
    #[error("not a DAN file of a known version: version is {found}, expected 10")]
    UnsupportedVersion {
        /// The version in the header.
        found: i32,
    },
    /// A key value is NaN or infinite.
    #[error("{field} is {value}, not a finite number")]
    NotFinite {
        /// The value's name.
        field: &'static str,
        /// The value as stored.
        value: f32,
    },
}

/// Something the reader tolerated; the data was read.
#[derive(Debug, Clone, PartialEq)]
pub enum DanWarning {
    /// Key times that go backwards in a channel (the exporter's reduction defect, §3): `key` is
    /// the first key earlier than the one before it, `count` how many such steps the channel
    /// has. The keys are sorted (stably) when the file becomes a clip.
    TimesNotSorted {
        /// The bone's index.
        bone: usize,
        /// The channel.
        track: DanTrack,
        /// The first key whose time is earlier than its predecessor's.
        key: usize,
        /// How many keys of the channel are earlier than the key before them.
        count: usize,
    },
    /// Bytes after the last bone; kept in [`super::DanFile::trailing`].
    TrailingBytes {
        /// Where they start.
        offset: u64,
        /// How many there are.
        count: u64,
    },
    /// The header's start or end time is not a finite number; the keys' own range is used.
    RangeNotFinite {
        /// The header's start, as stored.
        start_ms: f32,
        /// The header's end, as stored.
        end_ms: f32,
    },
}

impl fmt::Display for DanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DanWarning::TimesNotSorted {
                bone,
                track,
                key,
                count,
            } => write!(
                f,
                "bone #{bone} {track} key #{key}: time goes backwards ({count} time(s) in this \
                 track, the exporter's reduction defect); keys sorted by time"
            ),
            DanWarning::TrailingBytes { offset, count } => {
                write!(
                    f,
                    "{count} bytes after the last bone, at byte {offset} (kept)"
                )
            }
            DanWarning::RangeNotFinite { start_ms, end_ms } => write!(
                f,
                "animation range {start_ms}..{end_ms} ms is not finite; the keys' range is used"
            ),
        }
    }
}

/// A file that cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DanWriteError {
    /// More bones or keys than an `i32` count holds.
    #[error("{what} {count} does not fit the file's 32-bit signed count")]
    TooMany {
        /// What is counted.
        what: &'static str,
        /// How many there are.
        count: usize,
    },
    /// A clip's duration, in whole milliseconds, is not finite or outside the `i32` range that
    /// key times have.
    #[error("the clip's duration {seconds} s is outside the file's millisecond range")]
    DurationOutOfRange {
        /// The duration in seconds.
        seconds: f32,
    },
    /// A key time, in whole milliseconds, is not finite or does not fit the file's `i32`.
    #[error(
        "bone #{bone} {track} key #{key} at {seconds} s is outside the file's millisecond range"
    )]
    TimeOutOfRange {
        /// The bone's index.
        bone: usize,
        /// The channel.
        track: DanTrack,
        /// The key's index in the channel.
        key: usize,
        /// The key's time in seconds.
        seconds: f32,
    },
}
