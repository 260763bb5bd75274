//! On-disk records of IFP files, declared once with binrw for reading and writing.
//!
//! Field order and sizes mirror the tables of `docs/formats/ifp.md` (§1.1–1.3 for ANPK, §2.1–2.4 for
//! ANP3/ANP2). Key arrays are decoded in bulk by `read.rs` (see `decode_frames`), whose output
//! is checked against these declarations in the tests.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use crate::formats::bytes::Record;
use binrw::binrw;

/// File and section magics (§1, §2), for the reader and the writer alike. The key-frame magics
/// (`KR00`, `KRT0`, `KRTS`) belong to [`FrameLayout`].
pub(crate) const ANPK: [u8; 4] = *b"ANPK";
pub(crate) const ANLF: [u8; 4] = *b"ANLF";
pub(crate) const ANP3: [u8; 4] = *b"ANP3";
pub(crate) const ANP2: [u8; 4] = *b"ANP2";
pub(crate) const INFO: [u8; 4] = *b"INFO";
pub(crate) const NAME: [u8; 4] = *b"NAME";
pub(crate) const DGAN: [u8; 4] = *b"DGAN";
pub(crate) const CPAN: [u8; 4] = *b"CPAN";
pub(crate) const ANIM: [u8; 4] = *b"ANIM";

/// Compressed ANP3 keys (frame types 3 and 4, §2.5) store each rotation component as an
/// `i16` times this.
pub(crate) const Q_SCALE: f32 = 4096.0;
/// Compressed ANP3 keys store the time in seconds as an `i16` times this (1/60 s steps).
pub(crate) const TIME_SCALE: f32 = 60.0;
/// Compressed ANP3 keys store each translation component as an `i16` times this.
pub(crate) const T_SCALE: f32 = 1024.0;

/// `char fourcc[4]; u32 size;` — the header of every ANPK section, and of ANP3/ANP2 files.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionHeader {
    /// The section's four characters (`ANPK`, `INFO`, `CPAN`, …, or `ANP3`/`ANP2` for a whole file).
    pub magic: [u8; 4],
    /// Payload length, not counting the padding to a multiple of 4 that follows it.
    pub size: u32,
}
impl Record for SectionHeader {
    const SIZE: usize = 8;
}

/// The first 40 bytes of an ANPK ANIM payload (§1.2); what follows depends on its size.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnimHead {
    /// The bone name, zero-padded to 28 bytes (cut at the first NUL when read).
    pub name: [u8; 28],
    /// Key count.
    pub num_frames: i32,
    /// "start frame"; 0 in every known file.
    pub start_frame: i32,
    /// "end frame"; numFrames − 1 in every known file.
    pub end_frame: i32,
}
impl Record for AnimHead {
    const SIZE: usize = 40;
}

/// ANP3/ANP2 package header after the 8-byte section header (§2.1).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp3PackageHead {
    /// The package name, zero-padded to 24 bytes (cut at the first NUL when read).
    pub name: [u8; 24],
    /// Animation count.
    pub num_anims: u32,
}
impl Record for Anp3PackageHead {
    const SIZE: usize = 28;
}

/// ANP3/ANP2 animation header (§2.2): 28 bytes in ANP2, 36 in ANP3.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp2AnimHead {
    /// The animation name, zero-padded to 24 bytes (cut at the first NUL when read).
    pub name: [u8; 24],
    /// Sequence (animated bone) count.
    pub num_sequences: u32,
}
impl Record for Anp2AnimHead {
    const SIZE: usize = 28;
}

/// The two words that ANP3 adds after [`Anp2AnimHead`].
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp3AnimTail {
    /// Bytes of keyframe data of all sequences; checked, never trusted.
    pub frame_data_size: u32,
    /// Bit 0: compressed.
    pub flags: u32,
}
impl Record for Anp3AnimTail {
    const SIZE: usize = 8;
}

/// ANP3/ANP2 sequence header (§2.3).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp3SequenceHead {
    /// The bone name, zero-padded to 24 bytes (cut at the first NUL when read).
    pub name: [u8; 24],
    /// Key layout: 1–4 (see [`FrameLayout::Anp3`]).
    pub frame_type: u32,
    /// Key count.
    pub num_frames: u32,
    /// Bone tag; −1 means "match by name".
    pub bone_id: i32,
}
impl Record for Anp3SequenceHead {
    const SIZE: usize = 36;
}

/// ANPK `KR00` frame: rotation, time (20 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kr00Frame {
    /// Rotation `(x, y, z, w)`, conjugated (§1.4).
    pub q: [f32; 4],
    /// Time in seconds.
    pub time: f32,
}

/// ANPK `KRT0` frame: rotation, translation, time (32 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Krt0Frame {
    /// Rotation `(x, y, z, w)`, conjugated (§1.4).
    pub q: [f32; 4],
    /// Translation.
    pub t: [f32; 3],
    /// Time in seconds.
    pub time: f32,
}

/// ANPK `KRTS` frame: rotation, translation, scale, time (44 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KrtsFrame {
    /// Rotation `(x, y, z, w)`, conjugated (§1.4).
    pub q: [f32; 4],
    /// Translation.
    pub t: [f32; 3],
    /// Scale.
    pub s: [f32; 3],
    /// Time in seconds.
    pub time: f32,
}

/// ANP3 frame type 1: rotation, time (20 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anp3RotFrame {
    /// Rotation `(x, y, z, w)`, standard convention.
    pub q: [f32; 4],
    /// Time in seconds.
    pub time: f32,
}

/// ANP3 frame type 2: rotation, time, translation (32 bytes) — time before translation.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anp3RotTransFrame {
    /// Rotation `(x, y, z, w)`, standard convention.
    pub q: [f32; 4],
    /// Time in seconds.
    pub time: f32,
    /// Translation.
    pub t: [f32; 3],
}

/// ANP3 frame type 3: i16 rotation ×4096, i16 time ×60 (10 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp3RotFrameCompressed {
    /// Rotation `(x, y, z, w)` × 4096.
    pub q: [i16; 4],
    /// Time in seconds × 60.
    pub time: i16,
}

/// ANP3 frame type 4: i16 rotation ×4096, i16 time ×60, i16 translation ×1024 (16 bytes).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anp3RotTransFrameCompressed {
    /// Rotation `(x, y, z, w)` × 4096.
    pub q: [i16; 4],
    /// Time in seconds × 60.
    pub time: i16,
    /// Translation × 1024.
    pub t: [i16; 3],
}

/// The on-disk layout of one key, named as in the format doc's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameLayout {
    /// ANPK `KR00`: rotation, time.
    Kr00,
    /// ANPK `KRT0`: rotation, translation, time.
    Krt0,
    /// ANPK `KRTS`: rotation, translation, scale, time.
    Krts,
    /// ANP3 types 1–4.
    Anp3(u32),
}

impl FrameLayout {
    /// Bytes per key on disk.
    pub const fn size(self) -> usize {
        match self {
            FrameLayout::Kr00 => 20,
            FrameLayout::Krt0 => 32,
            FrameLayout::Krts => 44,
            FrameLayout::Anp3(1) => 20,
            FrameLayout::Anp3(2) => 32,
            FrameLayout::Anp3(3) => 10,
            FrameLayout::Anp3(4) => 16,
            FrameLayout::Anp3(_) => 0,
        }
    }

    /// The ANPK key section magic (`KR00`, `KRT0`, `KRTS`); `None` for ANP3 layouts.
    pub const fn magic(self) -> Option<[u8; 4]> {
        match self {
            FrameLayout::Kr00 => Some(*b"KR00"),
            FrameLayout::Krt0 => Some(*b"KRT0"),
            FrameLayout::Krts => Some(*b"KRTS"),
            FrameLayout::Anp3(_) => None,
        }
    }

    /// The ANPK layout of a key section magic; `None` for any other.
    pub fn from_magic(magic: [u8; 4]) -> Option<Self> {
        match &magic {
            b"KR00" => Some(FrameLayout::Kr00),
            b"KRT0" => Some(FrameLayout::Krt0),
            b"KRTS" => Some(FrameLayout::Krts),
            _ => None,
        }
    }
}
