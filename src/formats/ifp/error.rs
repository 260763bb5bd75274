//! Errors and warnings of the IFP reader and writer.

use crate::formats::Bounds;
use std::fmt;

/// Where in the package a problem was found: the clip (animation) and sequence (bone track),
/// by index and name, and the key index, as far as they are known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The clip's index in its block and its name.
    pub clip: Option<(usize, String)>,
    /// The sequence's index in its clip and its bone name.
    pub sequence: Option<(usize, String)>,
    /// The key's index in its sequence.
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
    /// What is wrong.
    pub kind: IfpErrorKind,
}

/// What is wrong with a file that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IfpErrorKind {
    /// What every binary reader refuses alike: the file ends inside a value, a count
    /// cannot fit in the bytes left, a negative count.
    #[error(transparent)]
    Bounds(#[from] Bounds),
    /// The file does not start with a known magic.
    #[error("not an IFP file: expected \"ANPK\", \"ANP3\", \"ANP2\" or \"ANLF\", found {found:?}")]
    UnknownFormat {
        /// The first four bytes, as text (non-printable bytes as `.`).
        found: String,
    },
    /// An ANPK ANIM section shorter than its fixed 40-byte head.
    #[error("ANIM record of {size} bytes is too short: expected at least 40")]
    AnimTooShort {
        /// The section's size field.
        size: u32,
    },
    /// A section too short for its fixed content.
    #[error("{section} payload of {size} bytes is too short: expected at least {min}")]
    SectionTooShort {
        /// Which section.
        section: &'static str,
        /// Its size field.
        size: u32,
        /// The smallest size its content needs.
        min: u32,
    },
    /// An ANPK key block whose magic is unknown and whose size fits no known layout.
    #[error(
        "unknown key block {magic:?} of {size} bytes for {frames} frames: expected KR00, KRT0 or KRTS"
    )]
    UnknownKeyBlock {
        /// Its magic, as text.
        magic: String,
        /// Its size field.
        size: u32,
        /// The ANIM record's key count.
        frames: u32,
    },
    /// An ANP3 or ANP2 sequence with a frame type other than 1–4.
    #[error("unknown ANP3 frame type {frame_type}: expected 1, 2, 3 or 4")]
    UnknownFrameType {
        /// The frame type as stored.
        frame_type: u32,
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

/// Something odd that the reader tolerated, as the games do. The data was read.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpWarning {
    /// Byte offset in the file where it is.
    pub offset: u64,
    /// The clip, sequence and key, as far as known.
    pub location: Location,
    /// What the reader tolerated.
    pub kind: IfpWarningKind,
}

/// What the reader tolerated.
#[derive(Debug, Clone, PartialEq)]
pub enum IfpWarningKind {
    /// Bytes after the end of the declared content (stale data, IMG padding).
    TrailingBytes {
        /// How many.
        count: u64,
        /// Whether they are all zero (padding).
        all_zero: bool,
    },
    /// The package's size field does not match the content read by counts.
    PackageSizeMismatch {
        /// Where the size field says the package ends.
        declared_end: u64,
        /// Where its content ends.
        content_end: u64,
    },
    /// A section marker other than the expected one (the games do not check these).
    UnexpectedMarker {
        /// The marker expected there.
        expected: &'static str,
        /// The marker found, as text.
        found: String,
    },
    /// A CPAN or DGAN size that disagrees with its content; `resynchronised` when reading went on
    /// at the end the size declares (as OpenRW does), otherwise at the end of the content.
    SectionSizeMismatch {
        /// Which section.
        section: &'static str,
        /// Where its size field says it ends.
        declared_end: u64,
        /// Where its content ends.
        content_end: u64,
        /// Whether reading went on at `declared_end`.
        resynchronised: bool,
    },
    /// The key block's size differs from numFrames × frame size (the games ignore it).
    KeyBlockSizeMismatch {
        /// The block's magic.
        magic: String,
        /// Its size field.
        declared: u32,
        /// numFrames × frame size.
        expected: u64,
    },
    /// Unknown key block magic; the frame layout was inferred from size / numFrames.
    KeyBlockInferred {
        /// The block's magic, as text.
        magic: String,
        /// The layout it was read as (`KR00`, `KRT0` or `KRTS`).
        layout: &'static str,
    },
    /// ANIM payload longer than 48 bytes; the extra bytes are kept.
    LongAnimRecord {
        /// The section's size field.
        size: u32,
    },
    /// ANP3 frameDataSize does not match the key data actually present.
    FrameDataSizeMismatch {
        /// The animation header's frameDataSize.
        declared: u32,
        /// The bytes of keys its sequences hold.
        actual: u64,
    },
    /// Key times that go backwards (the games assume non-decreasing times).
    TimesNotSorted {
        /// The first key whose time is earlier than its predecessor's.
        key: usize,
    },
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
    /// The clip, sequence and key being written, as far as known.
    pub location: Location,
    /// What cannot be written.
    pub kind: IfpWriteErrorKind,
}

/// What cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IfpWriteErrorKind {
    /// A name longer than its fixed field.
    #[error("name {name:?} is longer than the {max} bytes the field holds")]
    NameTooLong {
        /// The name.
        name: String,
        /// The field's length in bytes.
        max: usize,
    },
    /// A name with a character outside Latin-1, or a NUL.
    #[error("name {name:?} has a character that is not Latin-1 or is NUL")]
    NameNotLatin1 {
        /// The name.
        name: String,
    },
    /// A value of a compressed ANP3 key outside the range of its scaled `i16`.
    #[error("{field} value {value} does not fit the int16 of a compressed ANP3 key")]
    CompressedOverflow {
        /// The value's name.
        field: &'static str,
        /// The value.
        value: f32,
    },
    /// A sequence with scale keys in an ANP3 or ANP2 package.
    #[error(
        "ANP3 and ANP2 cannot store scale keys; drop them first (rigplay convert does, with a warning)"
    )]
    ScaleNotRepresentable,
    /// An ANP3 or ANP2 package with more than one block.
    #[error("ANP3 and ANP2 hold one block; this package has {blocks}")]
    TooManyBlocks {
        /// How many blocks the package has.
        blocks: usize,
    },
    /// A bone tag other than −1 in an ANIM layout that has no bone tag field.
    #[error("bone id {bone_id} cannot be stored in a 48-byte ANIM record (it has no bone tag)")]
    BoneIdNotRepresentable {
        /// The sequence's bone tag.
        bone_id: i32,
    },
    /// More items than the file's 32-bit count holds.
    #[error("{what} count {count} does not fit in the file's 32-bit field")]
    TooMany {
        /// What is counted.
        what: &'static str,
        /// How many there are.
        count: usize,
    },
    /// An [`super::AnimLayout::Other`] whose size is that of a known layout (44 or 48).
    #[error("an ANIM record of {size} bytes must use the BoneTag (44) or Links (48) layout")]
    BadAnimLayout {
        /// The record's size.
        size: u32,
    },
}
