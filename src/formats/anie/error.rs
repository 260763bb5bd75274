//! Errors and warnings of the `.anie` reader and writer.

use super::{AnieVersion, KeyKind};
use std::fmt;

/// Where in the project a problem was found, as far as it is known: the object node (index,
/// name) or resource node (tree, node, identifier), the key map, the key's frame (−1 for a
/// default key) and the bone index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    pub node: Option<(usize, String)>,
    pub resource: Option<(usize, usize, String)>,
    pub map: Option<KeyKind>,
    pub key: Option<i32>,
    pub bone: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((t, n, name)) = &self.resource {
            write!(f, ", resource tree #{t} node #{n} {name:?}")?;
        }
        if let Some((i, name)) = &self.node {
            write!(f, ", node #{i} {name:?}")?;
        }
        match (self.map, self.key) {
            (Some(map), Some(-1)) => write!(f, ", default {map} key")?,
            (Some(map), Some(frame)) => write!(f, ", {map} key at frame {frame}")?,
            (Some(map), None) => write!(f, ", {map} keys")?,
            (None, _) => {}
        }
        if let Some(b) = self.bone {
            write!(f, ", bone #{b}")?;
        }
        Ok(())
    }
}

/// A file that cannot be read: what was expected, at which byte, where in the project.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} at byte {offset}{location}")]
pub struct AnieError {
    /// Byte offset in the file where the problem starts.
    pub offset: u64,
    /// Boxed to keep `Result<_, AnieError>` small on the happy path.
    pub location: Box<Location>,
    pub kind: AnieErrorKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieErrorKind {
    #[error("{expected} needs {needed} bytes but only {available} remain in the {}", within.unwrap_or("file"))]
    Truncated {
        expected: &'static str,
        needed: u64,
        available: u64,
        /// The block whose declared length ended first; `None` when the file did.
        within: Option<&'static str>,
    },
    #[error("not an AnimeEffects project: expected \"ANIMFX\", found {found:?}")]
    NotAnie { found: String },
    #[error("byte-order marker {found:02x?}: expected [ff, 00] (little-endian)")]
    BadEndianMarker { found: [u8; 2] },
    #[error("format {major}.{minor} is not supported: expected 0.4 to 0.8")]
    UnsupportedVersion { major: u32, minor: u32 },
    #[error("{what} must be zero")]
    NonZeroReserved { what: &'static str },
    #[error("GLBL length {length}: expected 64")]
    BadGlobalLength { length: u32 },
    #[error("expected a {expected:?} block, found {found:?}")]
    BadSignature {
        expected: &'static str,
        found: String,
    },
    #[error("{block} block declares {length} bytes but only {available} remain")]
    BlockTooLong {
        block: &'static str,
        length: u64,
        available: u64,
    },
    #[error(
        "{block} block declares its end at byte {declared_end} but its content ends at {content_end}"
    )]
    BlockLengthMismatch {
        block: &'static str,
        declared_end: u64,
        content_end: u64,
    },
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
    #[error("{field} is {value}: expected {expected}")]
    InvalidValue {
        field: &'static str,
        value: i64,
        expected: &'static str,
    },
    #[error("{field} is {value}, not a finite number")]
    NotFinite { field: &'static str, value: f32 },
    #[error("{what} has no NUL terminator before the end of its block")]
    UnterminatedString { what: &'static str },
    #[error("unknown blend mode {found:?}: expected one of norm, mul , scrn, …")]
    UnknownBlendMode { found: String },
    #[error(
        "invalid easing (type {kind}, range {range}, weight {weight}): expected type 0..=11 (12 from format 0.8), range 0..=2, weight in [0, 1]"
    )]
    InvalidEasing { kind: i32, range: i32, weight: f32 },
    #[error("image of {width}×{height} pixels: each side must be at most {max}")]
    ImageTooLarge { width: u32, height: u32, max: u32 },
    #[error("null image with size {width}×{height}: expected 0×0")]
    NullImageWithSize { width: u32, height: u32 },
    #[error("image data declares {declared} bytes but its scanlines take {actual}")]
    ImageDataLength { declared: u64, actual: u64 },
    #[error("PackBits scanline of row {row}, channel {channel}: {problem}")]
    PackBits {
        row: u32,
        channel: u8,
        problem: PackBitsProblem,
    },
    #[error("a layer has {count} children: layers hold none")]
    LayerWithChildren { count: i32 },
    #[error("a second {kind} map in one timeline")]
    DuplicateMap { kind: KeyKind },
    #[error("two keys at frame {frame} in one map")]
    DuplicateKeyFrame { frame: i32 },
    #[error("key at negative frame {frame}: keys are at frames ≥ 0")]
    NegativeKeyFrame { frame: i32 },
    #[error("GridMesh connections of {size} bytes: expected 24 × vertex count = {expected}")]
    ConnectionsSize { size: u64, expected: u64 },
    #[error("{what} {index} is out of range: there are {count}")]
    IndexOutOfRange {
        what: &'static str,
        index: i64,
        count: usize,
    },
    #[error("tree nested deeper than {max} levels")]
    TreeTooDeep { max: usize },
    #[error("bind ID {id}: IDs are positive (0 stands for none)")]
    BadBindId { id: i32 },
    #[error("ID {id} is bound twice (first at byte {first_offset})")]
    DuplicateId { id: i32, first_offset: u64 },
    #[error("{referrer} refers to ID {id}, which nothing in the file binds")]
    UnresolvedId { id: i32, referrer: &'static str },
    #[error("{referrer} is ID 0 (none)")]
    NullReference { referrer: &'static str },
    #[error("{referrer} refers to ID {id}, a {found}: expected a {expected}")]
    WrongIdKind {
        id: i32,
        referrer: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{referrer} refers to its own ID {id}")]
    SelfReference { id: i32, referrer: &'static str },
    #[error("{referrer} ID {id} leads round in a cycle")]
    IdCycle { id: i32, referrer: &'static str },
    #[error("key ID {id} is listed as the child of two keys")]
    TwoParents { id: i32 },
}

/// What is wrong with a PackBits scanline (§2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PackBitsProblem {
    #[error("header byte -128 at byte {at} (AnimeEffects' decoder hangs on it)")]
    NoOpHeader { at: usize },
    #[error("a literal run at byte {at} needs {needed} bytes, {available} remain")]
    LiteralOverrun {
        at: usize,
        needed: usize,
        available: usize,
    },
    #[error("a repeat run at byte {at} has no byte to repeat")]
    RepeatMissingByte { at: usize },
    #[error("decodes to more than the {width} bytes of a row (packet at byte {at})")]
    TooLong { width: usize, at: usize },
    #[error("decodes to {decoded} bytes: expected {width}")]
    TooShort { width: usize, decoded: usize },
}

/// Something odd that the reader tolerated, as AnimeEffects does. The data was read.
#[derive(Debug, Clone, PartialEq)]
pub struct AnieWarning {
    pub offset: u64,
    pub location: Location,
    pub kind: AnieWarningKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieWarningKind {
    #[error("unknown key type {name:?} ({length} bytes) skipped")]
    UnknownKeyType { name: String, length: u64 },
    #[error("keys not in ascending frame order; sorted")]
    KeysSorted,
    #[error("{field} {value} clamped to {clamped}, as AnimeEffects does on load")]
    ValueClamped {
        field: &'static str,
        value: f32,
        clamped: f32,
    },
    #[error(
        "image key refers to resource ID {id}, which is {}; the layer draws nothing",
        if *id == 0 { "none" } else { "bound nowhere" }
    )]
    MissingImage { id: i32 },
    #[error("image key refers to resource ID {id}, which has no image; the layer draws nothing")]
    ResourceWithoutImage { id: i32 },
    #[error(
        "resource rect is {}×{} but its image is {}×{} (AnimeEffects sizes the buffer from the rect)",
        rect[0], rect[1], image[0], image[1]
    )]
    ImageSizeMismatch { rect: [i32; 2], image: [u32; 2] },
    #[error("{count} bytes after the object tree, ignored")]
    TrailingBytes { count: u64 },
    #[error(
        "HSV values {values:?} of a format ≤ 0.6 file reset to (0, 100, 100), as AnimeEffects does"
    )]
    HsvReset { values: [i32; 3] },
    #[error("HSV keys in a format {version} file, which predates them (read with 3 ints)")]
    HsvInOldFormat { version: AnieVersion },
    #[error("{what} is not valid UTF-8; invalid bytes replaced by U+FFFD")]
    InvalidUtf8 { what: &'static str },
}

impl fmt::Display for AnieWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}{}", self.kind, self.offset, self.location)
    }
}

/// A project that cannot be written in the requested version.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}{location}")]
pub struct AnieWriteError {
    pub location: Box<Location>,
    pub kind: AnieWriteErrorKind,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieWriteErrorKind {
    #[error("format {version} cannot be written: rigplay writes 0.5, 0.7 and 0.8")]
    UnsupportedVersion { version: AnieVersion },
    #[error("{what} needs format {needed} or later")]
    NeedsVersion {
        what: &'static str,
        needed: AnieVersion,
    },
    #[error("{tree} #{index}: {problem}")]
    BadTree {
        tree: &'static str,
        index: usize,
        problem: &'static str,
    },
    #[error("{tree} nested deeper than {max} levels")]
    TreeTooDeep { tree: &'static str, max: usize },
    #[error("{what} points at nothing")]
    DanglingReference { what: &'static str },
    #[error("{what} points at itself")]
    SelfReference { what: &'static str },
    #[error("{what} leads round in a cycle")]
    Cycle { what: &'static str },
    #[error("key is listed as the child of two keys")]
    TwoParents,
    #[error("{what} count {count} does not fit the file's 32-bit field")]
    TooMany { what: &'static str, count: usize },
    #[error("{what} {text:?} contains NUL, which a file string cannot hold")]
    NulInString { what: &'static str, text: String },
    #[error("key at frame {frame}: {problem}")]
    BadKeyFrame { frame: i32, problem: &'static str },
    #[error("image buffer of {len} bytes for {width}×{height}: expected width × height × 4")]
    ImageBufferSize { width: u32, height: u32, len: usize },
    #[error("image of {width}×{height} pixels: each side must be at most {max}")]
    ImageTooLarge { width: u32, height: u32, max: u32 },
    #[error("{what} has {len} entries: expected {expected}, one per vertex")]
    MeshArrays {
        what: &'static str,
        len: usize,
        expected: usize,
    },
    #[error("{what} {index} is out of range: there are {count}")]
    IndexOutOfRange {
        what: &'static str,
        index: u64,
        count: usize,
    },
    #[error("{field} is {value}: expected {expected}")]
    ValueOutOfRange {
        field: &'static str,
        value: f32,
        expected: &'static str,
    },
}
