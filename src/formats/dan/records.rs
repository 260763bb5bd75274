//! The fixed-size records of `.dan` files (§1), declared once with binrw for reading and
//! writing: the header here, the key records ([`RotationKey`], [`VectorKey`]) in the model,
//! with their sizes.
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

use super::{COMMENT_LEN, RotationKey, VectorKey};
use crate::formats::bytes::Record;
use binrw::binrw;

/// The 80-byte header (§1).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Header {
    pub version: i32,
    pub comment: [u8; COMMENT_LEN],
    pub bone_count: i32,
    pub start_ms: f32,
    pub end_ms: f32,
}

impl Record for Header {
    const SIZE: usize = 80;
}
impl Record for RotationKey {
    const SIZE: usize = 20;
}
impl Record for VectorKey {
    const SIZE: usize = 16;
}

/// A key count (`i32`) before each of a bone's three channels.
pub(super) const COUNT_SIZE: usize = 4;
