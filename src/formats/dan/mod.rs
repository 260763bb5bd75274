//! DAN: the animation files of the DelDX 3ds Max exporter (`DelDX_Anim_Export.ms`, version
//! `0010`), described in `docs/formats/dan.md`.
//!
//! A `.dan` file holds one clip: for each bone of the exporter's bone list (no names, no
//! hierarchy), rotation, position and scale keys sampled from 3ds Max. The keys are
//! **model-space** transforms (each gives the bone's whole transform in the model), in Direct3D's
//! left-handed Y-up axes, with integer millisecond times.
//!
//! * [`DanFile`] is the file as stored, values untouched (rotation `(x, y, z, w)` as written,
//!   key order as written, the comment's 64 raw bytes, trailing bytes), so that
//!   `write(read(bytes)) == bytes`.
//! * [`DanFile::read`] checks every count against the bytes left before allocating, rejects
//!   non-finite values with the bone, track and key, and *warns* — never fails — on the
//!   exporter's backwards key times (§3) and on trailing bytes.
//! * [`DanFile::to_clip`] gives the engine-neutral [`crate::animation::Clip`] in Bevy's axes (the one
//!   conversion is in [`crate::coords`], `dan_*` functions), times in seconds from the header's
//!   start, keys stably sorted by time.
//! * [`DanFile::write`] writes the same layout; [`DanFile::from_clip`] makes a file from a clip.
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

mod clip;
mod error;
mod read;
mod records;
mod write;

pub use clip::DanClipOptions;
pub use error::{DanError, DanErrorKind, DanLocation, DanTrack, DanWarning, DanWriteError};
pub use read::DanRead;

use binrw::binrw;

/// The only version the exporter writes (its literal `0010`).
pub const DAN_VERSION: i32 = 10;

/// Length of the header's comment field.
pub const COMMENT_LEN: usize = 64;

/// A `.dan` file as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct DanFile {
    /// Always [`DAN_VERSION`] in files the reader accepts.
    pub version: i32,
    /// The designer's note: the string's bytes then zero fill (any encoding; the original tool
    /// wrote the Windows code page of the author's machine). See [`DanFile::comment_text`].
    pub comment: [u8; COMMENT_LEN],
    /// `AnimationRange.Start` in milliseconds.
    pub start_ms: f32,
    /// `AnimationRange.End` in milliseconds.
    pub end_ms: f32,
    /// One per bone of the exporter's bone list, in its order.
    pub bones: Vec<DanBone>,
    /// Bytes after the last bone (nothing follows it in files the exporter wrote); kept so that
    /// writing gives the file back.
    pub trailing: Vec<u8>,
}

/// The keys of one bone, each channel in file order (which the exporter's defect can leave
/// unsorted; see [`DanFile::sorted`]). A channel without keys leaves the bone's rest value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DanBone {
    /// Rotation keys.
    pub rotations: Vec<RotationKey>,
    /// Position keys (model space).
    pub positions: Vec<VectorKey>,
    /// Scale keys.
    pub scales: Vec<VectorKey>,
}

/// `i32 timeMs; f32 x, y, z, w` (20 bytes): the rotation as written, Max's quaternion stored as
/// `(x, z, y, −w)`. [`crate::coords::dan_quat_to_bevy`] gives the Bevy rotation.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotationKey {
    /// Time in milliseconds, as the exporter wrote it.
    pub time_ms: i32,
    /// The stored `(x, y, z, w)`: Max's quaternion as `(x, z, y, −w)`.
    pub value: [f32; 4],
}

/// `i32 timeMs; f32 x, y, z` (16 bytes): a position or scale as written, Max's `(x, z, y)`.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorKey {
    /// Time in milliseconds, as the exporter wrote it.
    pub time_ms: i32,
    /// The stored `(x, y, z)`: Max's `(x, z, y)`.
    pub value: [f32; 3],
}

impl DanFile {
    /// An empty file (no bones, range 0..0, no comment).
    pub fn new() -> Self {
        Self {
            version: DAN_VERSION,
            comment: [0; COMMENT_LEN],
            start_ms: 0.0,
            end_ms: 0.0,
            bones: Vec::new(),
            trailing: Vec::new(),
        }
    }

    /// The comment up to its first NUL, decoded as UTF-8 where it is, else byte for byte as
    /// Latin-1 (legacy code pages such as CP949 cannot be told apart without a hint; the raw
    /// bytes stay in [`DanFile::comment`]).
    pub fn comment_text(&self) -> String {
        let end = self
            .comment
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(COMMENT_LEN);
        let bytes = &self.comment[..end];
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => bytes.iter().map(|&b| b as char).collect(),
        }
    }

    /// Sets the comment from UTF-8 text: its bytes, cut to 63 so that a NUL ends it, then zeros.
    pub fn set_comment(&mut self, text: &str) {
        self.comment = [0; COMMENT_LEN];
        let mut end = text.len().min(COMMENT_LEN - 1);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.comment[..end].copy_from_slice(&text.as_bytes()[..end]);
    }

    /// Total keys over all bones and channels.
    pub fn key_count(&self) -> usize {
        self.bones
            .iter()
            .map(|b| b.rotations.len() + b.positions.len() + b.scales.len())
            .sum()
    }

    /// The same file with each channel's keys stably sorted by time: what the exporter meant
    /// to write when its reduction let times go backwards (§3). Values in those runs are equal,
    /// so the pose is unchanged.
    pub fn sorted(&self) -> DanFile {
        let mut out = self.clone();
        for b in &mut out.bones {
            b.rotations.sort_by_key(|k| k.time_ms);
            b.positions.sort_by_key(|k| k.time_ms);
            b.scales.sort_by_key(|k| k.time_ms);
        }
        out
    }
}

impl Default for DanFile {
    fn default() -> Self {
        Self::new()
    }
}
