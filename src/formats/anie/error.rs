//! Errors and warnings of the `.anie` reader and writer.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use super::{AnieVersion, KeyKind};
use crate::formats::Bounds;
use std::fmt;

/// Where in the project a problem was found, as far as it is known: the object node (index,
/// name) or resource node (tree, node, identifier), the key map, the key's frame (−1 for a
/// default key) and the bone index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The object node's index and name.
    pub node: Option<(usize, String)>,
    /// The resource node's tree index, node index and identifier.
    pub resource: Option<(usize, usize, String)>,
    /// The key map's type.
    pub map: Option<KeyKind>,
    /// The key's frame; −1 for the default key.
    pub key: Option<i32>,
    /// The bone's index in its key's bones.
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
    /// What is wrong.
    pub kind: AnieErrorKind,
}

/// What is wrong with a file that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieErrorKind {
    /// What every binary reader refuses alike: the file ends inside a value, a count
    /// cannot fit in the bytes left, a negative count.
    #[error(transparent)]
    Bounds(#[from] Bounds),
    /// The file does not start with `ANIMFX`.
    #[error("not an AnimeEffects project: expected \"ANIMFX\", found {found:?}")]
    NotAnie {
        /// The first six bytes (lossy UTF-8).
        found: String,
    },
    /// The header's byte-order marker is not `FF 00`.
    #[error("byte-order marker {found:02x?}: expected [ff, 00] (little-endian)")]
    BadEndianMarker {
        /// The marker.
        found: [u8; 2],
    },
    /// A format version other than 0.4 to 0.8.
    #[error("format {major}.{minor} is not supported: expected 0.4 to 0.8")]
    UnsupportedVersion {
        /// The header's major version.
        major: u32,
        /// The header's minor version.
        minor: u32,
    },
    /// Reserved bytes of the header or the GLBL block that are not zero.
    #[error("{what} must be zero")]
    NonZeroReserved {
        /// Which bytes.
        what: &'static str,
    },
    /// The GLBL block's length field is not 64.
    #[error("GLBL length {length}: expected 64")]
    BadGlobalLength {
        /// The length field.
        length: u32,
    },
    /// A block signature other than the one the layout has there.
    #[error("expected a {expected:?} block, found {found:?}")]
    BadSignature {
        /// The signature expected.
        expected: &'static str,
        /// The signature found (lossy UTF-8).
        found: String,
    },
    /// A block's length runs past the end of the file or of its enclosing block.
    #[error("{block} block declares {length} bytes but only {available} remain")]
    BlockTooLong {
        /// The block's signature.
        block: &'static str,
        /// Its length field.
        length: u64,
        /// The bytes left.
        available: u64,
    },
    /// A block's content does not fill its declared length exactly.
    #[error(
        "{block} block declares its end at byte {declared_end} but its content ends at {content_end}"
    )]
    BlockLengthMismatch {
        /// The block's signature.
        block: &'static str,
        /// Where its length says it ends.
        declared_end: u64,
        /// Where its content ends.
        content_end: u64,
    },
    /// An integer field outside the values the format allows.
    #[error("{field} is {value}: expected {expected}")]
    InvalidValue {
        /// The field's name.
        field: &'static str,
        /// The value as stored.
        value: i64,
        /// The values allowed.
        expected: &'static str,
    },
    /// A float field is NaN or infinite.
    #[error("{field} is {value}, not a finite number")]
    NotFinite {
        /// The field's name.
        field: &'static str,
        /// The value as stored.
        value: f32,
    },
    /// A string without its NUL before the end of the block.
    #[error("{what} has no NUL terminator before the end of its block")]
    UnterminatedString {
        /// Which string.
        what: &'static str,
    },
    /// A blend mode id that is not one of [`super::BlendMode`]'s.
    #[error("unknown blend mode {found:?}: expected one of norm, mul , scrn, …")]
    UnknownBlendMode {
        /// The id (lossy UTF-8).
        found: String,
    },
    /// An easing whose type, range or weight is out of range (AnimeEffects'
    /// `isValidParam`).
    #[error(
        "invalid easing (type {kind}, range {range}, weight {weight}): expected type 0..=11 (12 from format 0.8), range 0..=2, weight in [0, 1]"
    )]
    InvalidEasing {
        /// The type code.
        kind: i32,
        /// The range code.
        range: i32,
        /// The weight.
        weight: f32,
    },
    /// An image side above [`super::MAX_IMAGE_SIDE`].
    #[error("image of {width}×{height} pixels: each side must be at most {max}")]
    ImageTooLarge {
        /// The image width.
        width: u32,
        /// The image height.
        height: u32,
        /// The largest side accepted.
        max: u32,
    },
    /// A null image (no pixels) that declares a size.
    #[error("null image with size {width}×{height}: expected 0×0")]
    NullImageWithSize {
        /// The declared width.
        width: u32,
        /// The declared height.
        height: u32,
    },
    /// An image's data length that differs from the bytes its scanlines take.
    #[error("image data declares {declared} bytes but its scanlines take {actual}")]
    ImageDataLength {
        /// The declared length.
        declared: u64,
        /// The bytes the scanlines take.
        actual: u64,
    },
    /// A PackBits scanline that does not decode to one row (§2).
    #[error("PackBits scanline of row {row}, channel {channel}: {problem}")]
    PackBits {
        /// The image row.
        row: u32,
        /// The channel (0 R, 1 G, 2 B, 3 A).
        channel: u8,
        /// What is wrong with it.
        problem: PackBitsProblem,
    },
    /// A layer object node that declares children.
    #[error("a layer has {count} children: layers hold none")]
    LayerWithChildren {
        /// Its child count.
        count: i32,
    },
    /// Two maps of one key type in one timeline.
    #[error("a second {kind} map in one timeline")]
    DuplicateMap {
        /// The key type.
        kind: KeyKind,
    },
    /// Two keys at one frame in one map.
    #[error("two keys at frame {frame} in one map")]
    DuplicateKeyFrame {
        /// The frame.
        frame: i32,
    },
    /// A key (not the default key) at a negative frame.
    #[error("key at negative frame {frame}: keys are at frames ≥ 0")]
    NegativeKeyFrame {
        /// The frame.
        frame: i32,
    },
    /// A GridMesh's connections that are not 24 bytes per vertex.
    #[error("GridMesh connections of {size} bytes: expected 24 × vertex count = {expected}")]
    ConnectionsSize {
        /// Their size in bytes.
        size: u64,
        /// 24 × the vertex count.
        expected: u64,
    },
    /// An index (of a vertex, an edge, a bone, …) past the end of what it indexes.
    #[error("{what} {index} is out of range: there are {count}")]
    IndexOutOfRange {
        /// What is indexed.
        what: &'static str,
        /// The index.
        index: i64,
        /// How many there are.
        count: usize,
    },
    /// A tree nested deeper than [`super::MAX_TREE_DEPTH`].
    #[error("tree nested deeper than {max} levels")]
    TreeTooDeep {
        /// The deepest nesting accepted.
        max: usize,
    },
    /// A bind ID that is not positive (§1.6).
    #[error("bind ID {id}: IDs are positive (0 stands for none)")]
    BadBindId {
        /// The ID.
        id: i32,
    },
    /// One ID bound by two objects.
    #[error("ID {id} is bound twice (first at byte {first_offset})")]
    DuplicateId {
        /// The ID.
        id: i32,
        /// Where it was bound first.
        first_offset: u64,
    },
    /// A reference to an ID that nothing binds.
    #[error("{referrer} refers to ID {id}, which nothing in the file binds")]
    UnresolvedId {
        /// The ID.
        id: i32,
        /// What refers to it.
        referrer: &'static str,
    },
    /// A reference that must name something is ID 0.
    #[error("{referrer} is ID 0 (none)")]
    NullReference {
        /// What refers.
        referrer: &'static str,
    },
    /// A reference to an ID bound by an object of another kind.
    #[error("{referrer} refers to ID {id}, a {found}: expected a {expected}")]
    WrongIdKind {
        /// The ID.
        id: i32,
        /// What refers to it.
        referrer: &'static str,
        /// The kind it must be.
        expected: &'static str,
        /// The kind it is.
        found: &'static str,
    },
    /// An object that refers to its own ID (a key as its own child, …).
    #[error("{referrer} refers to its own ID {id}")]
    SelfReference {
        /// The ID.
        id: i32,
        /// What refers to it.
        referrer: &'static str,
    },
    /// References that lead round in a cycle (key children, pose bone origins).
    #[error("{referrer} ID {id} leads round in a cycle")]
    IdCycle {
        /// An ID on the cycle.
        id: i32,
        /// The kind of reference.
        referrer: &'static str,
    },
    /// A key listed as the child of two keys.
    #[error("key ID {id} is listed as the child of two keys")]
    TwoParents {
        /// The key's ID.
        id: i32,
    },
}

/// What is wrong with a PackBits scanline (§2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PackBitsProblem {
    /// A header byte −128, on which AnimeEffects' decoder hangs.
    #[error("header byte -128 at byte {at} (AnimeEffects' decoder hangs on it)")]
    NoOpHeader {
        /// Its offset in the scanline.
        at: usize,
    },
    /// A literal run longer than the bytes left in the scanline.
    #[error("a literal run at byte {at} needs {needed} bytes, {available} remain")]
    LiteralOverrun {
        /// The run's offset in the scanline.
        at: usize,
        /// The bytes it needs.
        needed: usize,
        /// The bytes left.
        available: usize,
    },
    /// A repeat run at the end of the scanline, without its byte.
    #[error("a repeat run at byte {at} has no byte to repeat")]
    RepeatMissingByte {
        /// The run's offset in the scanline.
        at: usize,
    },
    /// The scanline decodes to more than a row.
    #[error("decodes to more than the {width} bytes of a row (packet at byte {at})")]
    TooLong {
        /// The row's length in bytes.
        width: usize,
        /// The offset of the packet that overflows.
        at: usize,
    },
    /// The scanline decodes to less than a row.
    #[error("decodes to {decoded} bytes: expected {width}")]
    TooShort {
        /// The row's length in bytes.
        width: usize,
        /// The bytes it decodes to.
        decoded: usize,
    },
}

/// Something odd that the reader tolerated, as AnimeEffects does. The data was read.
#[derive(Debug, Clone, PartialEq)]
pub struct AnieWarning {
    /// Byte offset in the file where it is.
    pub offset: u64,
    /// Where in the project, as far as known.
    pub location: Location,
    /// What the reader tolerated.
    pub kind: AnieWarningKind,
}

/// What the reader tolerated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieWarningKind {
    /// A key map of a type this reader does not know, skipped by its length.
    #[error("unknown key type {name:?} ({length} bytes) skipped")]
    UnknownKeyType {
        /// Its type name.
        name: String,
        /// Its length in bytes.
        length: u64,
    },
    /// Keys not in ascending frame order; the reader sorted them.
    #[error("keys not in ascending frame order; sorted")]
    KeysSorted,
    /// A value beyond AnimeEffects' load-time limits, clamped as AnimeEffects does.
    #[error("{field} {value} clamped to {clamped}, as AnimeEffects does on load")]
    ValueClamped {
        /// The value's name.
        field: &'static str,
        /// The value as stored.
        value: f32,
        /// The value read.
        clamped: f32,
    },
    /// An Image key whose resource ID is 0 or bound nowhere; the layer draws nothing.
    #[error(
        "image key refers to resource ID {id}, which is {}; the layer draws nothing",
        if *id == 0 { "none" } else { "bound nowhere" }
    )]
    MissingImage {
        /// The ID.
        id: i32,
    },
    /// An Image key whose resource node has no image; the layer draws nothing.
    #[error("image key refers to resource ID {id}, which has no image; the layer draws nothing")]
    ResourceWithoutImage {
        /// The resource node's ID.
        id: i32,
    },
    /// A resource node whose rect's size differs from its image's.
    #[error(
        "resource rect is {}×{} but its image is {}×{} (AnimeEffects sizes the buffer from the rect)",
        rect[0], rect[1], image[0], image[1]
    )]
    ImageSizeMismatch {
        /// The rect's width and height.
        rect: [i32; 2],
        /// The image's width and height.
        image: [u32; 2],
    },
    /// Bytes after the object tree, ignored.
    #[error("{count} bytes after the object tree, ignored")]
    TrailingBytes {
        /// How many.
        count: u64,
    },
    /// HSV values of a format ≤ 0.6 file at or above 100000, reset to (0, 100, 100) as
    /// AnimeEffects does.
    #[error(
        "HSV values {values:?} of a format ≤ 0.6 file reset to (0, 100, 100), as AnimeEffects does"
    )]
    HsvReset {
        /// Hue, saturation and value as stored.
        values: [i32; 3],
    },
    /// HSV keys in a file older than format 0.6, which has none (read with 3 ints).
    #[error("HSV keys in a format {version} file, which predates them (read with 3 ints)")]
    HsvInOldFormat {
        /// The file's format version.
        version: AnieVersion,
    },
    /// A string that is not valid UTF-8; invalid bytes are replaced by U+FFFD.
    #[error("{what} is not valid UTF-8; invalid bytes replaced by U+FFFD")]
    InvalidUtf8 {
        /// Which string.
        what: &'static str,
    },
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
    /// Where in the project, as far as known (boxed, as in [`AnieError`]).
    pub location: Box<Location>,
    /// What cannot be written.
    pub kind: AnieWriteErrorKind,
}

/// What cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnieWriteErrorKind {
    /// A version the writer does not write (it writes 0.5, 0.7 and 0.8).
    #[error("format {version} cannot be written: rigplay writes 0.5, 0.7 and 0.8")]
    UnsupportedVersion {
        /// The version asked for.
        version: AnieVersion,
    },
    /// A value the version asked for cannot hold.
    #[error("{what} needs format {needed} or later")]
    NeedsVersion {
        /// The value.
        what: &'static str,
        /// The oldest version that holds it.
        needed: AnieVersion,
    },
    /// A tree that is not a pre-order arena with consistent parent and child links.
    #[error("{tree} #{index}: {problem}")]
    BadTree {
        /// Which tree.
        tree: &'static str,
        /// The node's index.
        index: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A tree nested deeper than [`super::MAX_TREE_DEPTH`].
    #[error("{tree} nested deeper than {max} levels")]
    TreeTooDeep {
        /// Which tree.
        tree: &'static str,
        /// The deepest nesting allowed.
        max: usize,
    },
    /// A reference to a node, key, bone or resource that does not exist.
    #[error("{what} points at nothing")]
    DanglingReference {
        /// The reference.
        what: &'static str,
    },
    /// A reference to the object that holds it.
    #[error("{what} points at itself")]
    SelfReference {
        /// The reference.
        what: &'static str,
    },
    /// References that lead round in a cycle.
    #[error("{what} leads round in a cycle")]
    Cycle {
        /// The kind of reference.
        what: &'static str,
    },
    /// A key listed as the child of two keys.
    #[error("key is listed as the child of two keys")]
    TwoParents,
    /// More items than the file's 32-bit count holds.
    #[error("{what} count {count} does not fit the file's 32-bit field")]
    TooMany {
        /// What is counted.
        what: &'static str,
        /// How many there are.
        count: usize,
    },
    /// A string with a NUL, which ends strings in the file.
    #[error("{what} {text:?} contains NUL, which a file string cannot hold")]
    NulInString {
        /// Which string.
        what: &'static str,
        /// The string.
        text: String,
    },
    /// A key frame the file cannot hold (negative, not ascending, a default key not at
    /// −1).
    #[error("key at frame {frame}: {problem}")]
    BadKeyFrame {
        /// The frame.
        frame: i32,
        /// What is wrong.
        problem: &'static str,
    },
    /// An image whose buffer is not width × height × 4 bytes.
    #[error("image buffer of {len} bytes for {width}×{height}: expected width × height × 4")]
    ImageBufferSize {
        /// The image width.
        width: u32,
        /// The image height.
        height: u32,
        /// The buffer's length.
        len: usize,
    },
    /// An image side above [`super::MAX_IMAGE_SIDE`].
    #[error("image of {width}×{height} pixels: each side must be at most {max}")]
    ImageTooLarge {
        /// The image width.
        width: u32,
        /// The image height.
        height: u32,
        /// The largest side allowed.
        max: u32,
    },
    /// An array that must have one entry per vertex (a grid mesh's, a bone cache's) of
    /// another length.
    #[error("{what} has {len} entries: expected {expected}, one per vertex")]
    MeshArrays {
        /// Which array.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The vertex count.
        expected: usize,
    },
    /// An index past the end of what it indexes.
    #[error("{what} {index} is out of range: there are {count}")]
    IndexOutOfRange {
        /// What is indexed.
        what: &'static str,
        /// The index.
        index: u64,
        /// How many there are.
        count: usize,
    },
    /// A value the reader would clamp or refuse.
    #[error("{field} is {value}: expected {expected}")]
    ValueOutOfRange {
        /// The value's name.
        field: &'static str,
        /// The value.
        value: f32,
        /// The range allowed.
        expected: &'static str,
    },
}
