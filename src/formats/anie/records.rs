//! The fixed-size records at the start of every `.anie` file, declared once with binrw for
//! reading and writing. Field order and sizes mirror §1.2 and §1.3.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use crate::formats::bytes::Record;
use binrw::binrw;

/// The 32-byte file header (§1.2).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// "ANIMFX".
    pub magic: [u8; 6],
    /// 0xFF 0x00: little-endian.
    pub endian: [u8; 2],
    pub major: u32,
    pub minor: u32,
    /// Must be zero.
    pub reserved: [u8; 16],
}
impl Record for FileHeader {
    const SIZE: usize = 32;
}

/// The 72-byte global block that follows the header (§1.3). Its length field is a u32 and
/// always 64: it is not a generic block.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalBlock {
    /// "GLBL".
    pub signature: [u8; 4],
    /// 64.
    pub length: u32,
    pub canvas_width: u32,
    pub canvas_height: u32,
    pub max_frame: u32,
    pub fps: u32,
    /// 0 or 1 (any non-zero value reads as looping).
    pub looping: u8,
    /// Must be zero.
    pub reserved: [u8; 47],
}
impl Record for GlobalBlock {
    const SIZE: usize = 72;
}

/// [`FileHeader::magic`].
pub const MAGIC: [u8; 6] = *b"ANIMFX";
/// [`FileHeader::endian`]: little-endian.
pub const ENDIAN: [u8; 2] = [0xFF, 0x00];
/// [`GlobalBlock::signature`].
pub const GLBL: [u8; 4] = *b"GLBL";
/// [`FileHeader::major`]: every format version is 0.x ([`super::AnieVersion`] is the minor).
pub const MAJOR: u32 = 0;
/// [`GlobalBlock::length`].
pub const GLBL_LENGTH: u32 = 64;

/// The 8-byte signatures of the generic blocks (§1.4: signature, u64 length, content).
pub mod block {
    /// The resource trees.
    pub const RESOURCE: &str = "Resource";
    /// A resource node.
    pub const RES_NODE: &str = "ResNode_";
    /// The object tree.
    pub const OBJ_TREE: &str = "ObjTree_";
    /// An object node.
    pub const OBJ_NODE: &str = "ObjNode_";
    /// The body of a layer object node.
    pub const LAYER: &str = "LayerNd_";
    /// The body of a folder object node.
    pub const FOLDER: &str = "FolderNd";
    /// A node's timeline.
    pub const TIME_LINE: &str = "TimeLine";
    /// One key type's map of a timeline.
    pub const TIME_MAP: &str = "TimeMap_";
    /// An Image key's grid mesh.
    pub const GRID_MESH: &str = "GridMesh";
}
