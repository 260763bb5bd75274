//! Errors and warnings of the IFP reader and writer.

use std::fmt;

/// Where in the package a problem was found: the clip (animation) and sequence (bone track),
/// by index and name, and the key index, as far as they are known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    pub clip: Option<(usize, String)>,
    pub sequence: Option<(usize, String)>,
    pub key: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((i, name)) = &self.clip {
            write!(f, ", clip #{i} {name:?}")?;
        }
        if let Some((i, name)) = &self.sequence {
            write!(f, ", bone #{i} {name:?}")?;
        }
        if let Some(k) = self.key {
            write!(f, ", key #{k}")?;
        }
        Ok(())
    }
}

/// A file that cannot be read: what was expected, at which byte, in which clip and bone.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} at byte {offset}{location}")]
pub struct IfpError {
    /// Byte offset in the file where the problem starts.
    pub offset: u64,
    /// Boxed to keep `Result<_, IfpError>` small on the happy path.
    pub location: Box<Location>,
    pub kind: IfpErrorKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IfpErrorKind {
    #[error(
        "file ends early: expected {expected} ({needed} bytes) but only {available} bytes remain"
    )]
    Truncated {
        expected: &'static str,
        needed: u64,
        available: u64,
    },
    #[error("not an IFP file: expected \"ANPK\", \"ANP3\", \"ANP2\" or \"ANLF\", found {found:?}")]
    UnknownFormat { found: String },
    #[error(
        "{what} count {count} cannot fit: each needs at least {min_each} bytes and only {bytes_left} remain"
    )]
    CountTooLarge {
        what: &'static str,
        count: u64,
        min_each: u64,
        bytes_left: u64,
    },
    #[error("negative {what} count {value}")]
    NegativeCount { what: &'static str, value: i32 },
    #[error("ANIM record of {size} bytes is too short: expected at least 40")]
    AnimTooShort { size: u32 },
    #[error("{section} payload of {size} bytes is too short: expected at least {min}")]
    SectionTooShort {
        section: &'static str,
        size: u32,
        min: u32,
    },
    #[error(
        "unknown key block {magic:?} of {size} bytes for {frames} frames: expected KR00, KRT0 or KRTS"
    )]
    UnknownKeyBlock {
        magic: String,
        size: u32,
        frames: u32,
    },
    #[error("unknown ANP3 frame type {frame_type}: expected 1, 2, 3 or 4")]
    UnknownFrameType { frame_type: u32 },
    #[error("{field} is {value}, not a finite number")]
    NotFinite { field: &'static str, value: f32 },
}

/// Something odd that the reader tolerated, as the games do. The data was read.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpWarning {
    pub offset: u64,
    pub location: Location,
    pub kind: IfpWarningKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum IfpWarningKind {
    /// Bytes after the end of the declared content (stale data, IMG padding).
    TrailingBytes { count: u64, all_zero: bool },
    /// The package's size field does not match the content read by counts.
    PackageSizeMismatch { declared_end: u64, content_end: u64 },
    /// A section marker other than the expected one (the games do not check these).
    UnexpectedMarker {
        expected: &'static str,
        found: String,
    },
    /// A CPAN or DGAN size that disagrees with its content; `resynchronised` when reading went on
    /// at the end the size declares (as OpenRW does), otherwise at the end of the content.
    SectionSizeMismatch {
        section: &'static str,
        declared_end: u64,
        content_end: u64,
        resynchronised: bool,
    },
    /// The key block's size differs from numFrames × frame size (the games ignore it).
    KeyBlockSizeMismatch {
        magic: String,
        declared: u32,
        expected: u64,
    },
    /// Unknown key block magic; the frame layout was inferred from size / numFrames.
    KeyBlockInferred { magic: String, layout: &'static str },
    /// ANIM payload longer than 48 bytes; the extra bytes are kept.
    LongAnimRecord { size: u32 },
    /// ANP3 frameDataSize does not match the key data actually present.
    FrameDataSizeMismatch { declared: u32, actual: u64 },
    /// Key times that go backwards (the games assume non-decreasing times).
    TimesNotSorted { key: usize },
}

impl fmt::Display for IfpWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use IfpWarningKind::*;
        match &self.kind {
            TrailingBytes { count, all_zero } => write!(
                f,
                "{count} bytes after the declared end of the package{}",
                if *all_zero {
                    " (zero padding)"
                } else {
                    " (stale data, ignored)"
                }
            )?,
            PackageSizeMismatch {
                declared_end,
                content_end,
            } => write!(
                f,
                "package size field says it ends at byte {declared_end}, its content ends at {content_end}"
            )?,
            UnexpectedMarker { expected, found } => write!(
                f,
                "section marker {found:?} where {expected:?} was expected (ignored, as the games do)"
            )?,
            SectionSizeMismatch {
                section,
                declared_end,
                content_end,
                resynchronised,
            } => write!(
                f,
                "{section} size says it ends at byte {declared_end}, its content ends at {content_end}; {}",
                if *resynchronised {
                    "skipped to the declared end"
                } else {
                    "went on after the content"
                }
            )?,
            KeyBlockSizeMismatch {
                magic,
                declared,
                expected,
            } => write!(
                f,
                "{magic} block size {declared}, expected {expected} (numFrames × frame size)"
            )?,
            KeyBlockInferred { magic, layout } => write!(
                f,
                "unknown key block {magic:?}; its size fits {layout} frames, read as such"
            )?,
            LongAnimRecord { size } => write!(
                f,
                "ANIM record of {size} bytes (usual: 44 or 48); extra bytes kept"
            )?,
            FrameDataSizeMismatch { declared, actual } => write!(
                f,
                "frameDataSize {declared} but the sequences hold {actual} bytes of keys{}",
                if u64::from(*declared) < *actual {
                    " (the game would overflow its buffer)"
                } else {
                    ""
                }
            )?,
            TimesNotSorted { key } => {
                write!(f, "key #{key} has a time earlier than the key before it")?
            }
        }
        write!(f, " at byte {}{}", self.offset, self.location)
    }
}

/// A package that cannot be written in the requested version.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}{location}")]
pub struct IfpWriteError {
    pub location: Location,
    pub kind: IfpWriteErrorKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IfpWriteErrorKind {
    #[error("name {name:?} is longer than the {max} bytes the field holds")]
    NameTooLong { name: String, max: usize },
    #[error("name {name:?} has a character that is not Latin-1 or is NUL")]
    NameNotLatin1 { name: String },
    #[error("{field} value {value} does not fit the int16 of a compressed ANP3 key")]
    CompressedOverflow { field: &'static str, value: f32 },
    #[error(
        "ANP3 and ANP2 cannot store scale keys; drop them first (rigplay convert does, with a warning)"
    )]
    ScaleNotRepresentable,
    #[error("ANP3 and ANP2 hold one block; this package has {blocks}")]
    TooManyBlocks { blocks: usize },
    #[error("bone id {bone_id} cannot be stored in a 48-byte ANIM record (it has no bone tag)")]
    BoneIdNotRepresentable { bone_id: i32 },
    #[error("{what} count {count} does not fit in the file's 32-bit field")]
    TooMany { what: &'static str, count: usize },
    #[error("an ANIM record of {size} bytes must use the BoneTag (44) or Links (48) layout")]
    BadAnimLayout { size: u32 },
}
