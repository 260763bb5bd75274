//! RenderWare binary streams, shared by the DFF ([`super::dff`]) and TXD ([`super::txd`])
//! readers: chunk headers, library ID stamps, chunk type IDs, and the errors and warnings both
//! readers report.
//!
//! A file is a tree of chunks, each a 12-byte header (type, payload size, library ID stamp)
//! and a payload. The readers walk the tree by sizes, with an explicit end for every container:
//! a chunk that claims more bytes than its parent holds is an error, an unknown chunk is
//! skipped by its size with a warning, and every count is checked against the bytes left
//! before anything is allocated from it.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

use crate::formats::Bounds;
use crate::formats::bytes::{ByteReader, CountTooLarge, Short};
use std::fmt;

/// Chunk type IDs (§1.3).
pub mod id {
    /// Fixed data of the parent.
    pub const STRUCT: u32 = 0x01;
    /// A NUL-terminated string, size rounded to 4.
    pub const STRING: u32 = 0x02;
    /// Container of plugin chunks.
    pub const EXTENSION: u32 = 0x03;
    /// Camera (never in GTA files).
    pub const CAMERA: u32 = 0x05;
    /// Texture reference of a material.
    pub const TEXTURE: u32 = 0x06;
    /// Material.
    pub const MATERIAL: u32 = 0x07;
    /// Material list of a geometry.
    pub const MATERIAL_LIST: u32 = 0x08;
    /// Frame list of a clump.
    pub const FRAME_LIST: u32 = 0x0E;
    /// Geometry.
    pub const GEOMETRY: u32 = 0x0F;
    /// Clump (the model).
    pub const CLUMP: u32 = 0x10;
    /// Light.
    pub const LIGHT: u32 = 0x12;
    /// Atomic (a geometry placed on a frame).
    pub const ATOMIC: u32 = 0x14;
    /// Texture native (one texture of a dictionary).
    pub const TEXTURE_NATIVE: u32 = 0x15;
    /// Texture dictionary.
    pub const TEXTURE_DICTIONARY: u32 = 0x16;
    /// Geometry list.
    pub const GEOMETRY_LIST: u32 = 0x1A;
    /// Right To Render (pipeline of an atomic or material).
    pub const RIGHT_TO_RENDER: u32 = 0x1F;
    /// UV animation dictionary (top level).
    pub const UV_ANIM_DICTIONARY: u32 = 0x2B;
    /// Sky Mipmap Val: the PS2 pipeline's mip-map K and L values (a texture's extension).
    pub const SKY_MIPMAP_VAL: u32 = 0x110;
    /// Morph PLG (unused by GTA).
    pub const MORPH: u32 = 0x105;
    /// Skin PLG.
    pub const SKIN: u32 = 0x116;
    /// HAnim PLG (bone ID and hierarchy of a frame).
    pub const HANIM: u32 = 0x11E;
    /// Material Effects PLG.
    pub const MATFX: u32 = 0x120;
    /// UV Animation PLG.
    pub const UV_ANIM: u32 = 0x135;
    /// Bin Mesh PLG.
    pub const BIN_MESH: u32 = 0x50E;
    /// Native Data PLG (console geometry).
    pub const NATIVE_DATA: u32 = 0x510;
    /// Rockstar pipeline set.
    pub const PIPELINE_SET: u32 = 0x253F2F3;
    /// Rockstar specular material.
    pub const SPECULAR_MATERIAL: u32 = 0x253F2F6;
    /// Rockstar 2d effect (2dfx).
    pub const EFFECT_2D: u32 = 0x253F2F8;
    /// Rockstar extra vertex colours (night colours).
    pub const EXTRA_VERT_COLOUR: u32 = 0x253F2F9;
    /// Rockstar collision model.
    pub const COLLISION_MODEL: u32 = 0x253F2FA;
    /// Rockstar reflection material.
    pub const REFLECTION_MATERIAL: u32 = 0x253F2FC;
    /// Rockstar breakable.
    pub const BREAKABLE: u32 = 0x253F2FD;
    /// Rockstar frame (node) name.
    pub const FRAME_NAME: u32 = 0x253F2FE;
    /// SA-MP collision (non-standard).
    pub const SAMP_COLLISION: u32 = 0x253F2FF;
}

/// The name of a chunk type as it appears in chunk paths (`Clump/FrameList/...`); `None` for
/// a type this crate does not know.
pub(crate) fn chunk_name(chunk_type: u32) -> Option<&'static str> {
    use id::*;
    Some(match chunk_type {
        STRUCT => "Struct",
        STRING => "String",
        EXTENSION => "Extension",
        CAMERA => "Camera",
        TEXTURE => "Texture",
        MATERIAL => "Material",
        MATERIAL_LIST => "MaterialList",
        FRAME_LIST => "FrameList",
        GEOMETRY => "Geometry",
        CLUMP => "Clump",
        LIGHT => "Light",
        ATOMIC => "Atomic",
        TEXTURE_NATIVE => "TextureNative",
        TEXTURE_DICTIONARY => "TextureDictionary",
        GEOMETRY_LIST => "GeometryList",
        RIGHT_TO_RENDER => "RightToRender",
        UV_ANIM_DICTIONARY => "UvAnimDictionary",
        MORPH => "Morph",
        SKIN => "Skin",
        HANIM => "HAnim",
        MATFX => "MaterialEffects",
        UV_ANIM => "UvAnim",
        BIN_MESH => "BinMesh",
        NATIVE_DATA => "NativeData",
        PIPELINE_SET => "PipelineSet",
        SPECULAR_MATERIAL => "SpecularMaterial",
        EFFECT_2D => "2dEffect",
        EXTRA_VERT_COLOUR => "ExtraVertColour",
        COLLISION_MODEL => "CollisionModel",
        REFLECTION_MATERIAL => "ReflectionMaterial",
        BREAKABLE => "Breakable",
        FRAME_NAME => "FrameName",
        SAMP_COLLISION => "SampCollision",
        _ => return None,
    })
}

/// The RenderWare version a library ID stamp gives, as `0xVJNBB` (3.6.0.3 = `0x36003`), §1.2.
pub(crate) fn version_from_stamp(stamp: u32) -> u32 {
    if stamp >> 16 != 0 {
        (((stamp >> 14) & 0x3FF00) + 0x30000) | ((stamp >> 16) & 0x3F)
    } else {
        stamp << 8
    }
}

/// One chunk header and where its payload lies in the file (§1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// The chunk type ID (§1.3).
    pub chunk_type: u32,
    /// The payload size, header excluded.
    pub size: u32,
    /// The library ID stamp.
    pub stamp: u32,
    /// Byte offset of the header in the file.
    pub offset: usize,
}

impl ChunkHeader {
    /// The RenderWare version of the stamp (§1.2).
    pub fn version(&self) -> u32 {
        version_from_stamp(self.stamp)
    }

    /// Where the payload starts.
    pub fn data(&self) -> usize {
        self.offset + 12
    }

    /// Where the chunk ends (payload end).
    pub fn end(&self) -> usize {
        self.offset + 12 + self.size as usize
    }
}

/// A file that cannot be read: what is wrong, at which byte, in which chunk.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} at byte {offset} in {path}")]
pub struct RwError {
    /// Byte offset in the file where the problem starts.
    pub offset: u64,
    /// The chunk path, e.g. `Clump/GeometryList/Geometry[0]/Extension/Skin`; `(file)` at the
    /// top level.
    pub path: String,
    /// What is wrong.
    pub kind: RwErrorKind,
}

/// What is wrong with a file that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RwErrorKind {
    /// What every binary reader refuses alike: the file ends inside a value, a count
    /// cannot fit in the bytes left, a negative count.
    #[error(transparent)]
    Bounds(#[from] Bounds),
    /// A chunk whose size runs past the end of its parent chunk (or of the file).
    #[error(
        "chunk {name} (type {chunk_type:#x}) declares {size} bytes but only {available} remain in its parent"
    )]
    ChunkTooLong {
        /// The chunk's name, or its type in hex.
        name: String,
        /// Its type ID.
        chunk_type: u32,
        /// Its size field.
        size: u32,
        /// The bytes its parent has left after the header.
        available: u64,
    },
    /// A chunk the layout requires is absent.
    #[error("no {expected} chunk where one is required")]
    MissingChunk {
        /// The chunk expected.
        expected: &'static str,
    },
    /// An index that points past the items it refers to.
    #[error("{what} {index} is out of range: there are {limit}")]
    IndexOutOfRange {
        /// What the index refers to.
        what: &'static str,
        /// The index as stored.
        index: i64,
        /// How many items there are.
        limit: u64,
    },
    /// Frame parents that loop back to the frame.
    #[error("frame {frame}'s parents form a cycle")]
    FrameCycle {
        /// A frame on the cycle.
        frame: usize,
    },
    /// More than 8 UV sets (RenderWare's limit).
    #[error("{count} UV sets: at most 8")]
    TooManyUvSets {
        /// The count as stored.
        count: u32,
    },
    /// Platform-specific (console) data this reader does not decode.
    #[error("unsupported platform data: {what} ({value:#x})")]
    UnsupportedPlatform {
        /// What was found.
        what: &'static str,
        /// The flag, chunk type or platform ID.
        value: u32,
    },
}

/// Something odd that the reader tolerated. The data was read.
#[derive(Debug, Clone, PartialEq)]
pub struct RwWarning {
    /// Byte offset in the file where it is.
    pub offset: u64,
    /// The chunk path.
    pub path: String,
    /// What the reader tolerated.
    pub kind: RwWarningKind,
}

/// What the reader tolerated.
#[derive(Debug, Clone, PartialEq)]
pub enum RwWarningKind {
    /// A chunk of a type this reader does not know, or does not expect there; skipped by its
    /// size.
    UnknownChunk {
        /// Its type ID.
        chunk_type: u32,
        /// Its size field.
        size: u32,
    },
    /// A Struct with bytes left after its content (ignored).
    StructNotConsumed {
        /// How many bytes were left.
        left: u64,
    },
    /// Bytes after the last top-level chunk that are not a chunk.
    TrailingBytes {
        /// How many.
        count: u64,
        /// Whether they are all zero (IMG sector padding).
        all_zero: bool,
    },
    /// A stored count that disagrees with what follows it.
    CountMismatch {
        /// What is counted.
        what: &'static str,
        /// The count as stored.
        declared: u64,
        /// What was found.
        found: u64,
    },
    /// A known chunk that this reader does not use in that place (e.g. a legacy skin on an
    /// atomic); skipped.
    Ignored {
        /// What it is.
        what: &'static str,
    },
}

impl fmt::Display for RwWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RwWarningKind::UnknownChunk { chunk_type, size } => write!(
                f,
                "unknown chunk type {chunk_type:#x} of {size} bytes skipped"
            )?,
            RwWarningKind::StructNotConsumed { left } => {
                write!(f, "{left} bytes left at the end of the Struct (ignored)")?
            }
            RwWarningKind::TrailingBytes { count, all_zero } => write!(
                f,
                "{count} bytes after the last chunk{}",
                if *all_zero { " (zero padding)" } else { "" }
            )?,
            RwWarningKind::CountMismatch {
                what,
                declared,
                found,
            } => write!(f, "{what}: {declared} declared, {found} found")?,
            RwWarningKind::Ignored { what } => write!(f, "{what} ignored")?,
        }
        write!(f, " at byte {} in {}", self.offset, self.path)
    }
}

/// The walker shared by the DFF and TXD readers: the file, the current chunk path and the
/// warnings.
pub(crate) struct Walker<'a> {
    pub data: &'a [u8],
    path: Vec<String>,
    pub warnings: Vec<RwWarning>,
}

impl<'a> Walker<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            path: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn path(&self) -> String {
        if self.path.is_empty() {
            "(file)".to_string()
        } else {
            self.path.join("/")
        }
    }

    pub fn enter(&mut self, name: impl Into<String>) {
        self.path.push(name.into());
    }

    pub fn leave(&mut self) {
        self.path.pop();
    }

    pub fn error(&self, offset: usize, kind: RwErrorKind) -> RwError {
        RwError {
            offset: offset as u64,
            path: self.path(),
            kind,
        }
    }

    pub fn warn(&mut self, offset: usize, kind: RwWarningKind) {
        let path = self.path();
        self.warnings.push(RwWarning {
            offset: offset as u64,
            path,
            kind,
        });
    }

    /// Skips a chunk by its size: quietly when it is a known chunk with nothing for rigplay in
    /// it (the PS2 mip-map K value, [`id::SKY_MIPMAP_VAL`]), else with a warning.
    pub fn skip_unknown(&mut self, c: &ChunkHeader) {
        if c.chunk_type == id::SKY_MIPMAP_VAL {
            return;
        }
        self.warn(
            c.offset,
            RwWarningKind::UnknownChunk {
                chunk_type: c.chunk_type,
                size: c.size,
            },
        );
    }

    /// The header at `at`, whose chunk must end by `end`.
    pub fn header(&self, at: usize, end: usize) -> Result<ChunkHeader, RwError> {
        let left = end.saturating_sub(at);
        if left < 12 {
            return Err(self.error(
                at,
                RwErrorKind::Bounds(Bounds::Truncated {
                    expected: "chunk header",
                    needed: 12,
                    available: left as u64,
                    within: None,
                }),
            ));
        }
        let word = |i: usize| {
            let b = &self.data[at + 4 * i..at + 4 * i + 4];
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        };
        let c = ChunkHeader {
            chunk_type: word(0),
            size: word(1),
            stamp: word(2),
            offset: at,
        };
        let available = (left - 12) as u64;
        if u64::from(c.size) > available {
            return Err(self.error(
                at,
                RwErrorKind::ChunkTooLong {
                    name: chunk_name(c.chunk_type)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("{:#x}", c.chunk_type)),
                    chunk_type: c.chunk_type,
                    size: c.size,
                    available,
                },
            ));
        }
        Ok(c)
    }

    /// The next child of a container whose payload ends at `end`, moving `pos` past it;
    /// `None` at the end.
    pub fn next_child(&self, pos: &mut usize, end: usize) -> Result<Option<ChunkHeader>, RwError> {
        if *pos >= end {
            return Ok(None);
        }
        let c = self.header(*pos, end)?;
        *pos = c.end();
        Ok(Some(c))
    }

    /// The children of a container, read up front (headers only).
    pub fn children(&self, parent: &ChunkHeader) -> Result<Vec<ChunkHeader>, RwError> {
        let mut pos = parent.data();
        let mut out = Vec::new();
        while let Some(c) = self.next_child(&mut pos, parent.end())? {
            out.push(c);
        }
        Ok(out)
    }

    /// The first child of type `want` among `children`, or a [`RwErrorKind::MissingChunk`]
    /// error at `at`.
    pub fn require(
        &self,
        children: &[ChunkHeader],
        want: u32,
        at: usize,
        expected: &'static str,
    ) -> Result<ChunkHeader, RwError> {
        children
            .iter()
            .find(|c| c.chunk_type == want)
            .copied()
            .ok_or_else(|| self.error(at, RwErrorKind::MissingChunk { expected }))
    }

    /// A bounded reader over a chunk's payload, with file offsets.
    pub fn payload(&self, c: &ChunkHeader) -> Payload<'a> {
        let mut r = ByteReader::new(&self.data[..c.end()]);
        // The payload start lies within the data sliced to its end.
        let _ = r.seek(c.data());
        Payload {
            r,
            path: self.path(),
        }
    }

    /// Warns when a Struct payload has bytes left after its content.
    pub fn check_consumed(&mut self, p: &Payload<'_>) {
        if p.remaining() > 0 {
            self.warn(
                p.pos(),
                RwWarningKind::StructNotConsumed {
                    left: p.remaining() as u64,
                },
            );
        }
    }
}

/// A bounded reader over one chunk's payload; errors carry the file offset and the chunk path.
pub(crate) struct Payload<'a> {
    r: ByteReader<'a>,
    path: String,
}

impl<'a> Payload<'a> {
    pub fn pos(&self) -> usize {
        self.r.pos()
    }

    pub fn remaining(&self) -> usize {
        self.r.remaining()
    }

    pub fn error(&self, offset: usize, kind: RwErrorKind) -> RwError {
        RwError {
            offset: offset as u64,
            path: self.path.clone(),
            kind,
        }
    }

    fn short(&self, expected: &'static str, s: Short) -> RwError {
        RwError {
            offset: s.offset,
            path: self.path.clone(),
            kind: RwErrorKind::Bounds(Bounds::truncated(expected, &s, None)),
        }
    }

    pub fn take(&mut self, n: usize, expected: &'static str) -> Result<&'a [u8], RwError> {
        self.r.take(n).map_err(|s| self.short(expected, s))
    }

    pub fn array<const N: usize>(&mut self, expected: &'static str) -> Result<[u8; N], RwError> {
        self.r.array::<N>().map_err(|s| self.short(expected, s))
    }

    pub fn u8(&mut self, expected: &'static str) -> Result<u8, RwError> {
        Ok(self.array::<1>(expected)?[0])
    }

    pub fn u16(&mut self, expected: &'static str) -> Result<u16, RwError> {
        Ok(u16::from_le_bytes(self.array(expected)?))
    }

    pub fn u32(&mut self, expected: &'static str) -> Result<u32, RwError> {
        Ok(u32::from_le_bytes(self.array(expected)?))
    }

    pub fn i32(&mut self, expected: &'static str) -> Result<i32, RwError> {
        Ok(i32::from_le_bytes(self.array(expected)?))
    }

    pub fn f32(&mut self, expected: &'static str) -> Result<f32, RwError> {
        Ok(f32::from_le_bytes(self.array(expected)?))
    }

    pub fn f32s<const N: usize>(&mut self, expected: &'static str) -> Result<[f32; N], RwError> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f32(expected)?;
        }
        Ok(out)
    }

    /// Checks that `count` items of `each` bytes fit in the payload left.
    pub fn check(&self, what: &'static str, count: u64, each: u64) -> Result<usize, RwError> {
        self.r.check_count(count, each).map_err(|e: CountTooLarge| {
            self.error(
                e.offset as usize,
                RwErrorKind::Bounds(Bounds::count_too_large(what, &e)),
            )
        })
    }

    /// A signed count: not negative, and fitting in the payload left at `each` bytes an item.
    pub fn signed_count(
        &self,
        what: &'static str,
        value: i32,
        at: usize,
        each: u64,
    ) -> Result<usize, RwError> {
        if value < 0 {
            return Err(self.error(
                at,
                RwErrorKind::Bounds(Bounds::NegativeCount { what, value }),
            ));
        }
        self.check(what, value as u64, each)
    }

    /// Reads an `i32` count at the current position and checks it (see [`Self::signed_count`]).
    pub fn count_i32(&mut self, what: &'static str, each: u64) -> Result<usize, RwError> {
        let at = self.pos();
        let v = self.i32(what)?;
        self.signed_count(what, v, at, each)
    }
}

#[cfg(test)]
mod tests {
    use super::version_from_stamp;

    #[test]
    fn a_library_id_stamp_gives_its_version() {
        assert_eq!(version_from_stamp(0x1803FFFF), 0x36003);
        assert_eq!(version_from_stamp(0x0C02FFFF), 0x33002);
        // An old-style stamp is the version shifted.
        assert_eq!(version_from_stamp(0x310), 0x31000);
    }
}
