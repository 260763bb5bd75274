//! GTA IFP animation packages: ANPK (GTA III / Vice City), ANP3 and ANP2 (San Andreas).
//!
//! [`IfpFile::read`] decodes a whole file into plain data; [`IfpFile::write`] encodes it
//! again. The data model keeps everything the file says, in the games' own conventions:
//!
//! * rotations are in the standard (Hamilton, column-vector) convention the engines use at run
//!   time: ANPK quaternions are conjugated on read and back on write (§1.4), ANP3 ones are
//!   stored that way already (§2.7). They are **not** normalised here, so that a compressed key
//!   writes back to the same int16s; [`IfpClip::to_clip`] normalises;
//! * times are absolute seconds (ANP3 ticks ÷ 60), translations metres in the bone's parent
//!   space, GTA's Z-up axes (§2.8);
//! * names are cut at the first NUL and kept with their leading spaces; [`crate::skeleton::bone_key`] gives the
//!   normalised form used for matching.
//!
//! A package written by [`IfpFile::write`] reads back to an equal package, and writing that
//! gives the same bytes. Spec: `docs/formats/ifp.md` (short version: its §7).
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

mod clip;
mod error;
mod read;
pub(crate) mod records;
mod write;

pub use error::{
    IfpError, IfpErrorKind, IfpWarning, IfpWarningKind, IfpWriteError, IfpWriteErrorKind, Location,
};
pub use read::IfpRead;

use std::fmt;

/// Which of the three file layouts a package uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IfpVersion {
    /// Version 1: GTA III and Vice City (also loaded by San Andreas).
    Anpk,
    /// Version 2: San Andreas.
    Anp3,
    /// Version 2 without `frameDataSize` and `flags` in the animation header.
    Anp2,
}

impl IfpVersion {
    /// The four-character magic that starts a file of this version.
    pub fn magic(self) -> &'static str {
        match self {
            IfpVersion::Anpk => "ANPK",
            IfpVersion::Anp3 => "ANP3",
            IfpVersion::Anp2 => "ANP2",
        }
    }
}

impl fmt::Display for IfpVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.magic())
    }
}

/// One `.ifp` file.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpFile {
    /// The file layout, kept so that writing gives the same layout back.
    pub version: IfpVersion,
    /// True when the file is a GTA III `ANLF` container of several ANPK blocks.
    pub anlf: bool,
    /// The animation blocks; exactly one unless `anlf`.
    pub blocks: Vec<AnimBlock>,
}

/// A named set of clips: one ANPK or ANP3 package body (the games' "anim block").
#[derive(Debug, Clone, PartialEq)]
pub struct AnimBlock {
    /// The block's name (the package name in ANP3, the INFO section's name in ANPK).
    pub name: String,
    /// Its animations, in file order.
    pub clips: Vec<IfpClip>,
}

/// One animation: a set of per-bone sequences.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IfpClip {
    /// The animation's name, as stored.
    pub name: String,
    /// One sequence per animated bone, in file order.
    pub sequences: Vec<IfpSequence>,
    /// ANP3: the animation's flags word (bit 0 = compressed). Ignored by the other versions.
    pub flags: u32,
    /// ANPK: the second word of the DGAN INFO section (0 in every known file).
    pub info_unknown: u32,
}

/// The keys of one bone in one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpSequence {
    /// Bone name as stored, leading spaces included.
    pub name: String,
    /// Bone tag; −1 means "match by name". Always −1 for 48-byte ANPK records.
    pub bone_id: i32,
    /// Whether the keys carry translation (KRT0/KRTS, ANP3 types 2/4).
    pub has_translation: bool,
    /// Whether the keys carry scale (KRTS only; the games ignore it, rigplay keeps it).
    pub has_scale: bool,
    /// ANP3: keys stored as int16 (types 3/4) rather than f32 (types 1/2).
    pub compressed: bool,
    /// ANPK: the ANIM record's layout and its fields that no game reads.
    pub anim: AnimRecord,
    /// The keys, in file order (times ascending in every known file).
    pub keys: Vec<IfpKey>,
}

impl IfpSequence {
    /// A sequence with default record fields (44-byte ANIM with bone tag, no compression).
    pub fn new(name: impl Into<String>, bone_id: i32, keys: Vec<IfpKey>) -> Self {
        Self {
            name: name.into(),
            bone_id,
            has_translation: false,
            has_scale: false,
            compressed: false,
            anim: AnimRecord::default(),
            keys,
        }
    }
}

/// ANPK ANIM record details (§1.2) beyond name, frame count and bone tag.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnimRecord {
    /// The record's size and what follows its first 40 bytes.
    pub layout: AnimLayout,
    /// The int at +32 when it is not the usual 0.
    pub start_frame: Option<i32>,
    /// The int at +36 when it is not the usual numFrames − 1.
    pub end_frame: Option<i32>,
}

/// The size and tail of an ANPK ANIM record: what follows its first 40 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AnimLayout {
    /// 44 bytes; the int at +40 is the bone tag (VC/SA skinned).
    #[default]
    BoneTag,
    /// 48 bytes; two hierarchy-link ints that no game reads; matching is by name.
    Links([i32; 2]),
    /// Any other size (40 or more): the bytes after +40, kept as they were; matching by name.
    Other {
        /// The bytes after +40.
        tail: Vec<u8>,
    },
}

impl AnimLayout {
    /// The ANIM payload size this layout writes.
    pub fn size(&self) -> usize {
        match self {
            AnimLayout::BoneTag => 44,
            AnimLayout::Links(_) => 48,
            AnimLayout::Other { tail } => 40 + tail.len(),
        }
    }
}

/// One key, in the engines' convention (see the module docs). Channels that the sequence
/// does not have hold identity values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IfpKey {
    /// Absolute time in seconds.
    pub time: f32,
    /// Local rotation (x, y, z, w), standard convention, as stored (not normalised).
    pub rotation: [f32; 4],
    /// Local translation in the parent's space, metres.
    pub translation: [f32; 3],
    /// Local scale (KRTS only; 1 elsewhere). The games ignore it.
    pub scale: [f32; 3],
}

impl Default for IfpKey {
    fn default() -> Self {
        Self {
            time: 0.0,
            rotation: [0.0, 0.0, 0.0, 1.0],
            translation: [0.0; 3],
            scale: [1.0; 3],
        }
    }
}

impl IfpFile {
    /// A single-block package.
    pub fn new(version: IfpVersion, name: impl Into<String>, clips: Vec<IfpClip>) -> Self {
        Self {
            version,
            anlf: false,
            blocks: vec![AnimBlock {
                name: name.into(),
                clips,
            }],
        }
    }

    /// Name of the first block (the package name for every non-ANLF file).
    pub fn name(&self) -> &str {
        self.blocks.first().map(|b| b.name.as_str()).unwrap_or("")
    }

    /// Every clip of every block, in file order.
    pub fn clips(&self) -> impl Iterator<Item = &IfpClip> {
        self.blocks.iter().flat_map(|b| b.clips.iter())
    }

    /// Every clip of every block, in file order, to change.
    pub fn clips_mut(&mut self) -> impl Iterator<Item = &mut IfpClip> {
        self.blocks.iter_mut().flat_map(|b| b.clips.iter_mut())
    }

    /// The first clip with this name (compared case-insensitively, as the games do).
    pub fn clip(&self, name: &str) -> Option<&IfpClip> {
        self.clips().find(|c| c.name.eq_ignore_ascii_case(name))
    }
}

impl IfpClip {
    /// Latest key time over all sequences (the games' `totalLength`), in seconds.
    pub fn duration(&self) -> f32 {
        self.sequences
            .iter()
            .flat_map(|s| s.keys.iter())
            .map(|k| k.time)
            .fold(0.0, f32::max)
    }
}
