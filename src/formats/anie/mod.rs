//! AnimeEffects `.anie` projects, formats 0.4 to 0.8 (`docs/formats/anie.md`, short version §7).
//!
//! [`AnieFile::read`] decodes a whole file into plain data; [`AnieFile::write`] encodes
//! it again in format 0.8, 0.7 or 0.5. The model is made for the player that evaluates it
//! (§4):
//!
//! * trees (resource nodes, object nodes, bones) are flat arenas in **pre-order**, the file
//!   order: index 0 is the root, a parent comes before its children, and each node lists its
//!   children in the file's order. The writer requires the same order, so
//!   `read(write(p)) == p`;
//! * the file's integer IDs (§1.6) are resolved into indices ([`KeyRef`], [`BoneRef`],
//!   [`ResourceRef`], object node indices); the writer assigns new IDs the way AnimeEffects
//!   does (the next integer at each object's first appearance in the stream, binding or
//!   reference), so a file AnimeEffects wrote comes back byte for byte;
//! * every key type has its own typed [`KeyMap`], keys sorted by frame (strictly ascending,
//!   frames ≥ 0) with the optional default key (frame −1) apart;
//! * values that depend on the format version are always present, with the value older
//!   readers assume: the cubic-bezier of an [`Easing`] (0.8) defaults to (1, 0, 0, 1), the HSV
//!   `absolute` flag (0.7) to false, and the GridMesh `vertex_rect` (0.5) is rebuilt from the
//!   positions for 0.4 files, as AnimeEffects does. The writer refuses to drop a value the
//!   target version cannot hold;
//! * images are decoded to RGBA8, straight (non-premultiplied) alpha, rows top to bottom (§2);
//! * coordinates are AnimeEffects' own: canvas pixels, origin top-left, +y down, angles in
//!   radians (clockwise on screen). Conversion to Bevy's +y up belongs to `coords`.
//!
//! A project that reads writes again, reads back equal and writes the same bytes (checked by
//! the fuzz oracle `fuzz/oracles/anie.rs`).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

mod error;
mod model;
mod packbits;
mod read;
// Crate-visible: file-format detection reads the magic from here.
pub(crate) mod records;
mod write;

pub use error::{
    AnieError, AnieErrorKind, AnieWarning, AnieWarningKind, AnieWriteError, AnieWriteErrorKind,
    Location, PackBitsProblem,
};
pub use model::{
    AnieFile, AnieVersion, BindingCache, BlendMode, Bone, BoneCache, BoneKey, BoneRef, BoneShape,
    DepthKey, Easing, EasingKind, EasingRange, FRect, FfdKey, Frame, GridMesh, HsvKey, IRect,
    Image, ImageKey, KeyKind, KeyMap, KeyRef, KeySlot, MeshKey, MoveKey, NodeKind, ObjectNode,
    OpaKey, PoseKey, ResourceNode, ResourceRef, ResourceTree, RotateKey, ScaleKey, Spline, TimeKey,
    Timeline,
};

/// Deepest tree (resource nodes, object nodes, bones) the reader and writer accept; deeper is
/// [`AnieErrorKind::TreeTooDeep`]. AnimeEffects projects nest a few levels.
pub const MAX_TREE_DEPTH: usize = 256;

/// Largest image side the reader accepts (AnimeEffects refuses images larger than
/// `GL_MAX_TEXTURE_SIZE`, 16384 on common drivers; §2).
pub const MAX_IMAGE_SIDE: u32 = 16384;

/// Load-time clamp limit of Move positions and centroids (±) and of depths (±): AnimeEffects'
/// `core/Constant.h` (§3). The reader clamps with a warning; the writer refuses values beyond.
const TRANSLATE_LIMIT: f32 = 1e7;
/// Load-time clamp limit of scale components (±), as [`TRANSLATE_LIMIT`].
const SCALE_LIMIT: f32 = 1e4;
/// Load-time clamp limit of rotations in radians (±), as [`TRANSLATE_LIMIT`].
const ROTATE_LIMIT: f32 = 1e4;

/// A project that was read: the project, the format version it was written in, and what the
/// reader tolerated.
#[derive(Debug, Clone, PartialEq)]
pub struct AnieRead {
    /// The project.
    pub file: AnieFile,
    /// The format version of the file (header minor 4..=8).
    pub version: AnieVersion,
    /// What the reader accepted but reports (unknown key types skipped, values clamped, images
    /// missing, …), in file order.
    pub warnings: Vec<AnieWarning>,
}

impl AnieFile {
    /// Reads a whole `.anie` file (formats 0.4 to 0.8).
    ///
    /// Every count is checked against the bytes left before anything is allocated from it, and
    /// every block must be filled exactly by its content; what the reader tolerates is in
    /// [`AnieRead::warnings`].
    pub fn read(bytes: &[u8]) -> Result<AnieRead, AnieError> {
        read::read(bytes)
    }

    /// Encodes the project in `version` (0.8, 0.7 or 0.5; [`AnieVersion::default`] is 0.8).
    ///
    /// Nothing is dropped or changed silently: a value the version cannot hold (a Custom easing
    /// or edited bezier before 0.8, HSV keys before 0.6), a value the reader would clamp or
    /// refuse, a tree not in pre-order, or a reference to nothing is an error.
    pub fn write(&self, version: AnieVersion) -> Result<Vec<u8>, AnieWriteError> {
        write::write(self, version)
    }
}
