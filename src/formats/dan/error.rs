//! Errors and warnings of the DAN reader and writer.

use std::fmt;

/// A channel of a bone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DanTrack {
    Rotation,
    Position,
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
    pub bone: Option<usize>,
    pub track: Option<DanTrack>,
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
    pub offset: u64,
    pub location: DanLocation,
    pub kind: DanErrorKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DanErrorKind {
    #[error(
        "file ends early: expected {expected} ({needed} bytes) but only {available} bytes remain"
    )]
    Truncated {
        expected: &'static str,
        needed: u64,
        available: u64,
    },
    #[error("not a DAN file of a known version: version is {found}, expected 10")]
    UnsupportedVersion { found: i32 },
    #[error("negative {what} {value}")]
    NegativeCount { what: &'static str, value: i32 },
    #[error(
        "{what} {count} cannot fit: each needs at least {min_each} bytes and only {bytes_left} remain"
    )]
    CountTooLarge {
        what: &'static str,
        count: u64,
        min_each: u64,
        bytes_left: u64,
    },
    #[error("{field} is {value}, not a finite number")]
    NotFinite { field: &'static str, value: f32 },
}

/// Something the reader tolerated; the data was read.
#[derive(Debug, Clone, PartialEq)]
pub enum DanWarning {
    /// Key times that go backwards in a channel (the exporter's reduction defect, §3): `key` is
    /// the first key earlier than the one before it, `count` how many such steps the channel
    /// has. The keys are sorted (stably) when the file becomes a clip.
    TimesNotSorted {
        bone: usize,
        track: DanTrack,
        key: usize,
        count: usize,
    },
    /// Bytes after the last bone; kept in [`super::DanFile::trailing`].
    TrailingBytes { offset: u64, count: u64 },
    /// The header's start or end time is not a finite number; the keys' own range is used.
    RangeNotFinite { start_ms: f32, end_ms: f32 },
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
    #[error("{what} {count} does not fit the file's 32-bit signed count")]
    TooMany { what: &'static str, count: usize },
    #[error("the clip's duration {seconds} s is outside the file's millisecond range")]
    DurationOutOfRange { seconds: f32 },
    #[error(
        "bone #{bone} {track} key #{key} at {seconds} s is outside the file's millisecond range"
    )]
    TimeOutOfRange {
        bone: usize,
        track: DanTrack,
        key: usize,
        seconds: f32,
    },
}
