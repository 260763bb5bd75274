//! The IFP reader: walks ANPK sections (rounded to 4, CPAN/DGAN sizes used to resynchronise)
//! and ANP3/ANP2 headers, honouring every declared count and checking each against the bytes
//! left before anything is allocated from it.

use super::error::{IfpError, IfpErrorKind, IfpWarning, IfpWarningKind, Location};
use super::records::{
    ANIM, ANLF, ANP2, ANP3, ANPK, AnimHead, Anp2AnimHead, Anp3AnimTail, Anp3PackageHead,
    Anp3SequenceHead, CPAN, DGAN, FrameLayout, INFO, NAME, Q_SCALE, SectionHeader, T_SCALE,
    TIME_SCALE,
};
use super::{AnimBlock, AnimLayout, AnimRecord, IfpClip, IfpFile, IfpKey, IfpSequence, IfpVersion};
use crate::formats::Bounds;
use crate::formats::bytes::{ByteReader, CountTooLarge, Record, Short, decode_name, round4};

/// A package and what the reader tolerated on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpRead {
    /// The package.
    pub file: IfpFile,
    /// What the reader accepted but reports, in file order.
    pub warnings: Vec<IfpWarning>,
}

impl IfpFile {
    /// Reads a whole `.ifp` file.
    pub fn read(bytes: &[u8]) -> std::result::Result<IfpRead, IfpError> {
        let mut p = Parser {
            r: ByteReader::new(bytes),
            warnings: Vec::new(),
            loc: Here::default(),
        };
        let package = p.file()?;
        Ok(IfpRead {
            file: package,
            warnings: p.warnings,
        })
    }
}

/// Smallest possible sizes, used to bound counts before allocating.
const MIN_ANPK_CLIP: u64 = 8 + 8 + 8 + 8; // NAME hdr, DGAN hdr, INFO hdr + 2 words
const MIN_ANPK_SEQUENCE: u64 = 8 + 8 + 40; // CPAN hdr, ANIM hdr, 40-byte ANIM head
const MIN_ANLF_PACKAGE: u64 = 8 + 8 + 4; // ANPK hdr, INFO hdr, numAnims
const ANP3_SEQUENCE_HEAD: u64 = Anp3SequenceHead::SIZE as u64;

struct Parser<'a> {
    r: ByteReader<'a>,
    warnings: Vec<IfpWarning>,
    loc: Here,
}

/// Where the parser is; turned into a [`Location`] only for an error or a warning, so that the
/// names are copied into reused buffers rather than allocated per sequence.
#[derive(Default)]
struct Here {
    clip: Option<usize>,
    clip_name: String,
    sequence: Option<usize>,
    sequence_name: String,
    key: Option<usize>,
}

impl Here {
    fn clear(&mut self) {
        self.clip = None;
        self.sequence = None;
        self.key = None;
    }

    fn set_clip(&mut self, index: usize, name: &str) {
        self.clip = Some(index);
        self.clip_name.clear();
        self.clip_name.push_str(name);
    }

    fn set_sequence(&mut self, index: usize, name: &str) {
        self.sequence = Some(index);
        self.sequence_name.clear();
        self.sequence_name.push_str(name);
    }

    fn location(&self) -> Location {
        Location {
            clip: self.clip.map(|i| (i, self.clip_name.clone())),
            sequence: self.sequence.map(|i| (i, self.sequence_name.clone())),
            key: self.key,
        }
    }
}

type Result<T> = std::result::Result<T, IfpError>;

impl<'a> Parser<'a> {
    fn error(&self, offset: usize, kind: IfpErrorKind) -> IfpError {
        IfpError {
            offset: offset as u64,
            location: Box::new(self.loc.location()),
            kind,
        }
    }

    fn warn(&mut self, offset: usize, kind: IfpWarningKind) {
        self.warnings.push(IfpWarning {
            offset: offset as u64,
            location: self.loc.location(),
            kind,
        });
    }

    fn truncated(&self, s: Short, expected: &'static str) -> IfpError {
        IfpError {
            offset: s.offset,
            location: Box::new(self.loc.location()),
            kind: IfpErrorKind::Bounds(Bounds::truncated(expected, &s, None)),
        }
    }

    fn record<T: Record>(&mut self, expected: &'static str) -> Result<T> {
        self.r
            .record::<T>()
            .map_err(|s| self.truncated(s, expected))
    }

    fn take(&mut self, n: u64, expected: &'static str) -> Result<&'a [u8]> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        self.r.take(n).map_err(|s| self.truncated(s, expected))
    }

    fn count(&self, count: u64, min_each: u64, what: &'static str) -> Result<usize> {
        self.r
            .check_count(count, min_each)
            .map_err(|c: CountTooLarge| IfpError {
                offset: c.offset,
                location: Box::new(self.loc.location()),
                kind: IfpErrorKind::Bounds(Bounds::count_too_large(what, &c)),
            })
    }

    /// Reads a section header; a marker other than `expected` is a warning (the games never
    /// compare these markers).
    fn section(&mut self, expected: &'static [u8; 4], what: &'static str) -> Result<SectionHeader> {
        let at = self.r.pos();
        let h: SectionHeader = self.record(what)?;
        if h.magic != *expected {
            self.warn(
                at,
                IfpWarningKind::UnexpectedMarker {
                    expected: magic_name(expected),
                    found: magic_text(h.magic),
                },
            );
        }
        Ok(h)
    }

    /// Takes a section payload of `size` bytes plus its padding to 4.
    fn payload(&mut self, size: u32, what: &'static str) -> Result<&'a [u8]> {
        let bytes = self.take(round4(u64::from(size)), what)?;
        Ok(&bytes[..size as usize])
    }

    /// After reading a section's content by counts, reconciles it with the size its header
    /// declares: skips forward to a declared end that lies further on and inside the file,
    /// otherwise goes on from the content's end; either way a mismatch is a warning.
    fn reconcile(&mut self, section: &'static str, declared_end: u64) {
        let content_end = self.r.pos() as u64;
        if declared_end == content_end {
            return;
        }
        let resync = declared_end > content_end && declared_end <= self.r.len() as u64;
        if resync {
            // In range, checked just above.
            let _ = self.r.seek(declared_end as usize);
        }
        self.warn(
            content_end as usize,
            IfpWarningKind::SectionSizeMismatch {
                section,
                declared_end,
                content_end,
                resynchronised: resync,
            },
        );
    }

    fn file(&mut self) -> Result<IfpFile> {
        let magic = self
            .r
            .peek_array::<4>()
            .map_err(|s| self.truncated(s, "file magic"))?;
        let (package, declared_end) = match magic {
            ANPK => {
                let (block, declared_end) = self.anpk_block()?;
                (
                    IfpFile {
                        version: IfpVersion::Anpk,
                        anlf: false,
                        blocks: vec![block],
                    },
                    declared_end,
                )
            }
            ANLF => (self.anlf()?, 0),
            ANP3 => self.anp3(IfpVersion::Anp3)?,
            ANP2 => self.anp3(IfpVersion::Anp2)?,
            _ => {
                return Err(self.error(
                    0,
                    IfpErrorKind::UnknownFormat {
                        found: magic_text(magic),
                    },
                ));
            }
        };
        self.loc.clear();
        let content_end = self.r.pos() as u64;
        let len = self.r.len() as u64;
        if declared_end != 0 && declared_end != content_end {
            self.warn(
                content_end as usize,
                IfpWarningKind::PackageSizeMismatch {
                    declared_end,
                    content_end,
                },
            );
        }
        let end = content_end.max(declared_end.min(len));
        if end < len {
            let rest = &self.r_data()[end as usize..];
            let all_zero = rest.iter().all(|&b| b == 0);
            self.warn(
                end as usize,
                IfpWarningKind::TrailingBytes {
                    count: len - end,
                    all_zero,
                },
            );
        }
        Ok(package)
    }

    fn r_data(&self) -> &'a [u8] {
        let mut whole = self.r.clone();
        // Rewinding to 0 is always in range.
        let _ = whole.seek(0);
        whole.take(whole.len()).unwrap_or_default()
    }

    // ---------------------------------------------------------------- ANLF / ANPK (version 1)

    fn anlf(&mut self) -> Result<IfpFile> {
        let h: SectionHeader = self.record("ANLF section header")?;
        if h.size < 4 {
            return Err(self.error(
                self.r.pos() - 8,
                IfpErrorKind::SectionTooShort {
                    section: "ANLF",
                    size: h.size,
                    min: 4,
                },
            ));
        }
        let payload = self.payload(h.size, "ANLF payload")?;
        let n = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
        let n = self.count(u64::from(n), MIN_ANLF_PACKAGE, "ANLF package")?;
        let mut blocks = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.r.pos();
            let magic = self
                .r
                .peek_array::<4>()
                .map_err(|s| self.truncated(s, "ANPK section header"))?;
            if magic != ANPK {
                self.warn(
                    at,
                    IfpWarningKind::UnexpectedMarker {
                        expected: magic_name(&ANPK),
                        found: magic_text(magic),
                    },
                );
            }
            let (block, declared_end) = self.anpk_block()?;
            let content_end = self.r.pos() as u64;
            if declared_end != content_end {
                self.warn(
                    content_end as usize,
                    IfpWarningKind::PackageSizeMismatch {
                        declared_end,
                        content_end,
                    },
                );
            }
            blocks.push(block);
        }
        Ok(IfpFile {
            version: IfpVersion::Anpk,
            anlf: true,
            blocks,
        })
    }

    /// Reads one ANPK section; returns the block and the end its size declares.
    fn anpk_block(&mut self) -> Result<(AnimBlock, u64)> {
        let h: SectionHeader = self.record("ANPK section header")?;
        let declared_end = self.r.pos() as u64 + u64::from(h.size);
        let info_at = self.r.pos();
        let info = self.section(&INFO, "INFO section header")?;
        if info.size < 4 {
            return Err(self.error(
                info_at,
                IfpErrorKind::SectionTooShort {
                    section: "INFO",
                    size: info.size,
                    min: 4,
                },
            ));
        }
        let payload = self.payload(info.size, "INFO payload")?;
        let num_anims = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
        let name = decode_name(&payload[4..]);
        let n = self.count(u64::from(num_anims), MIN_ANPK_CLIP, "animation")?;
        let mut clips = Vec::with_capacity(n);
        for i in 0..n {
            clips.push(self.anpk_clip(i)?);
        }
        self.loc.clear();
        Ok((AnimBlock { name, clips }, declared_end))
    }

    fn anpk_clip(&mut self, index: usize) -> Result<IfpClip> {
        self.loc.clear();
        let name_h = self.section(&NAME, "NAME section header")?;
        let name = decode_name(self.payload(name_h.size, "animation name")?);
        self.loc.set_clip(index, &name);

        let dgan = self.section(&DGAN, "DGAN section header")?;
        let dgan_end = self.r.pos() as u64 + u64::from(dgan.size);
        let info_at = self.r.pos();
        let info = self.section(&INFO, "DGAN INFO section header")?;
        if info.size < 4 {
            return Err(self.error(
                info_at,
                IfpErrorKind::SectionTooShort {
                    section: "DGAN INFO",
                    size: info.size,
                    min: 4,
                },
            ));
        }
        let payload = self.payload(info.size, "DGAN INFO payload")?;
        let word = |i: usize| {
            u32::from_le_bytes([payload[i], payload[i + 1], payload[i + 2], payload[i + 3]])
        };
        let num_sequences = word(0);
        let info_unknown = if payload.len() >= 8 { word(4) } else { 0 };
        let n = self.count(u64::from(num_sequences), MIN_ANPK_SEQUENCE, "sequence")?;
        let mut sequences = Vec::with_capacity(n);
        for j in 0..n {
            sequences.push(self.anpk_sequence(j)?);
        }
        self.loc.sequence = None;
        self.loc.key = None;
        self.reconcile("DGAN", dgan_end);
        Ok(IfpClip {
            name,
            sequences,
            flags: 0,
            info_unknown,
        })
    }

    fn anpk_sequence(&mut self, index: usize) -> Result<IfpSequence> {
        self.loc.sequence = None;
        self.loc.key = None;
        let cpan = self.section(&CPAN, "CPAN section header")?;
        let cpan_end = self.r.pos() as u64 + u64::from(cpan.size);
        let anim_at = self.r.pos();
        let anim_h = self.section(&ANIM, "ANIM section header")?;
        if anim_h.size < AnimHead::SIZE as u32 {
            return Err(self.error(anim_at, IfpErrorKind::AnimTooShort { size: anim_h.size }));
        }
        let payload = self.payload(anim_h.size, "ANIM payload")?;
        let mut pr = ByteReader::new(payload);
        let head: AnimHead = pr.record().map_err(|s| self.truncated(s, "ANIM payload"))?;
        let tail = &payload[AnimHead::SIZE..];
        let int = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let (layout, bone_id) = match tail.len() {
            4 => (AnimLayout::BoneTag, int(tail)),
            8 => (AnimLayout::Links([int(tail), int(&tail[4..])]), -1),
            _ => {
                self.warn(
                    anim_at,
                    IfpWarningKind::LongAnimRecord { size: anim_h.size },
                );
                (
                    AnimLayout::Other {
                        tail: tail.to_vec(),
                    },
                    -1,
                )
            }
        };
        let name = decode_name(&head.name);
        self.loc.set_sequence(index, &name);
        if head.num_frames < 0 {
            return Err(self.error(
                anim_at + 8 + 28,
                IfpErrorKind::Bounds(Bounds::NegativeCount {
                    what: "frame",
                    value: head.num_frames,
                }),
            ));
        }
        let num_frames = head.num_frames as u32;
        let anim = AnimRecord {
            layout,
            start_frame: (head.start_frame != 0).then_some(head.start_frame),
            end_frame: (i64::from(head.end_frame) != i64::from(num_frames) - 1)
                .then_some(head.end_frame),
        };
        let mut seq = IfpSequence {
            name,
            bone_id,
            has_translation: false,
            has_scale: false,
            compressed: false,
            anim,
            keys: Vec::new(),
        };
        if num_frames > 0 {
            let kr_at = self.r.pos();
            let kr: SectionHeader = self.record("key block header")?;
            let layout = match FrameLayout::from_magic(kr.magic) {
                Some(l) => l,
                None => {
                    let inferred = [FrameLayout::Kr00, FrameLayout::Krt0, FrameLayout::Krts]
                        .into_iter()
                        .find(|l| u64::from(kr.size) == u64::from(num_frames) * l.size() as u64);
                    match inferred {
                        Some(l) => {
                            let name = match l {
                                FrameLayout::Kr00 => "KR00",
                                FrameLayout::Krt0 => "KRT0",
                                _ => "KRTS",
                            };
                            self.warn(
                                kr_at,
                                IfpWarningKind::KeyBlockInferred {
                                    magic: magic_text(kr.magic),
                                    layout: name,
                                },
                            );
                            l
                        }
                        None => {
                            return Err(self.error(
                                kr_at,
                                IfpErrorKind::UnknownKeyBlock {
                                    magic: magic_text(kr.magic),
                                    size: kr.size,
                                    frames: num_frames,
                                },
                            ));
                        }
                    }
                }
            };
            let expected = u64::from(num_frames) * layout.size() as u64;
            if u64::from(kr.size) != expected && FrameLayout::from_magic(kr.magic).is_some() {
                self.warn(
                    kr_at,
                    IfpWarningKind::KeyBlockSizeMismatch {
                        magic: magic_text(kr.magic),
                        declared: kr.size,
                        expected,
                    },
                );
            }
            let n = self.count(u64::from(num_frames), layout.size() as u64, "key")?;
            let at = self.r.pos();
            let bytes = self.take(expected, "keys")?;
            seq.has_translation = layout != FrameLayout::Kr00;
            seq.has_scale = layout == FrameLayout::Krts;
            seq.keys = decode_frames(layout, bytes, n);
            self.check_keys(&seq.keys, at, layout)?;
        }
        self.loc.key = None;
        self.reconcile("CPAN", cpan_end);
        Ok(seq)
    }

    // ---------------------------------------------------------------- ANP3 / ANP2 (version 2)

    fn anp3(&mut self, version: IfpVersion) -> Result<(IfpFile, u64)> {
        let h: SectionHeader = self.record("package header")?;
        let declared_end = 8 + u64::from(h.size);
        let head: Anp3PackageHead = self.record("package header")?;
        let is_anp3 = version == IfpVersion::Anp3;
        let anim_head = if is_anp3 { 36 } else { 28 };
        let n = self.count(u64::from(head.num_anims), anim_head, "animation")?;
        let mut clips = Vec::with_capacity(n);
        for i in 0..n {
            self.loc.clear();
            let anim_at = self.r.pos();
            let a: Anp2AnimHead = self.record("animation header")?;
            let name = decode_name(&a.name);
            self.loc.set_clip(i, &name);
            let tail = if is_anp3 {
                Some(self.record::<Anp3AnimTail>("animation header")?)
            } else {
                None
            };
            let n_seq = self.count(u64::from(a.num_sequences), ANP3_SEQUENCE_HEAD, "sequence")?;
            let mut sequences = Vec::with_capacity(n_seq);
            let mut key_bytes = 0u64;
            for j in 0..n_seq {
                self.loc.sequence = None;
                self.loc.key = None;
                let seq_at = self.r.pos();
                let s: Anp3SequenceHead = self.record("sequence header")?;
                let name = decode_name(&s.name);
                self.loc.set_sequence(j, &name);
                let layout = FrameLayout::Anp3(s.frame_type);
                if layout.size() == 0 {
                    return Err(self.error(
                        seq_at + 24,
                        IfpErrorKind::UnknownFrameType {
                            frame_type: s.frame_type,
                        },
                    ));
                }
                let n_keys = self.count(u64::from(s.num_frames), layout.size() as u64, "key")?;
                let at = self.r.pos();
                let bytes = self.take(n_keys as u64 * layout.size() as u64, "keys")?;
                key_bytes += bytes.len() as u64;
                let keys = decode_frames(layout, bytes, n_keys);
                self.check_keys(&keys, at, layout)?;
                sequences.push(IfpSequence {
                    name,
                    bone_id: s.bone_id,
                    has_translation: matches!(s.frame_type, 2 | 4),
                    has_scale: false,
                    compressed: matches!(s.frame_type, 3 | 4),
                    anim: AnimRecord::default(),
                    keys,
                });
            }
            self.loc.sequence = None;
            self.loc.key = None;
            if let Some(t) = tail
                && u64::from(t.frame_data_size) != key_bytes
            {
                self.warn(
                    anim_at + 28,
                    IfpWarningKind::FrameDataSizeMismatch {
                        declared: t.frame_data_size,
                        actual: key_bytes,
                    },
                );
            }
            clips.push(IfpClip {
                name,
                sequences,
                flags: tail.map_or(0, |t| t.flags),
                info_unknown: 0,
            });
        }
        let block = AnimBlock {
            name: decode_name(&head.name),
            clips,
        };
        Ok((
            IfpFile {
                version,
                anlf: false,
                blocks: vec![block],
            },
            declared_end,
        ))
    }

    /// Rejects non-finite values (naming the key) and warns about times that go backwards.
    fn check_keys(&mut self, keys: &[IfpKey], at: usize, layout: FrameLayout) -> Result<()> {
        let frame_size = layout.size();
        // Keys decoded from int16 are always finite. For floats, a fast path: if the sum of a
        // key's values is finite, so is every value.
        let from_ints = matches!(layout, FrameLayout::Anp3(3 | 4));
        let all_finite = from_ints
            || keys.iter().all(|k| {
                let [a, b, c, d] = k.rotation;
                let [e, f, g] = k.translation;
                let [h, i, j] = k.scale;
                (k.time + a + b + c + d + e + f + g + h + i + j).is_finite()
            });
        let sorted = keys.windows(2).all(|w| w[0].time <= w[1].time);
        if all_finite && sorted {
            return Ok(());
        }
        let mut previous = f32::NEG_INFINITY;
        let mut warned = false;
        for (k, key) in keys.iter().enumerate() {
            let fields = [
                ("time", key.time),
                ("rotation", key.rotation[0]),
                ("rotation", key.rotation[1]),
                ("rotation", key.rotation[2]),
                ("rotation", key.rotation[3]),
                ("translation", key.translation[0]),
                ("translation", key.translation[1]),
                ("translation", key.translation[2]),
                ("scale", key.scale[0]),
                ("scale", key.scale[1]),
                ("scale", key.scale[2]),
            ];
            if let Some(&(field, value)) = fields.iter().find(|(_, v)| !v.is_finite()) {
                self.loc.key = Some(k);
                return Err(self.error(
                    at + k * frame_size,
                    IfpErrorKind::NotFinite { field, value },
                ));
            }
            if key.time < previous && !warned {
                warned = true;
                self.loc.key = Some(k);
                self.warn(
                    at + k * frame_size,
                    IfpWarningKind::TimesNotSorted { key: k },
                );
                self.loc.key = None;
            }
            previous = key.time;
        }
        Ok(())
    }
}

/// One of the magics of `records.rs` as text (they are ASCII).
fn magic_name(magic: &'static [u8; 4]) -> &'static str {
    std::str::from_utf8(magic).unwrap_or("????")
}

fn magic_text(magic: [u8; 4]) -> String {
    magic
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect()
}

#[inline(always)]
fn f32_at(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

#[inline(always)]
fn i16_at(b: &[u8], i: usize) -> f32 {
    f32::from(i16::from_le_bytes([b[i], b[i + 1]]))
}

/// Decodes `n` frames of `layout` from `bytes` (exactly `n × layout.size()` long) into keys in
/// the engines' convention: ANPK quaternions conjugated; ANP3 int16 values ÷4096 (rotation),
/// ÷60 (time), ÷1024 (translation). This is the bulk fast path of the binrw frame records in
/// `records.rs`; the tests check the two against each other.
pub(crate) fn decode_frames(layout: FrameLayout, bytes: &[u8], n: usize) -> Vec<IfpKey> {
    let size = layout.size();
    debug_assert_eq!(bytes.len(), n * size);
    let mut keys = Vec::with_capacity(n);
    let d = IfpKey::default();
    match layout {
        FrameLayout::Kr00 => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [-f32_at(b, 0), -f32_at(b, 4), -f32_at(b, 8), f32_at(b, 12)],
            time: f32_at(b, 16),
            ..d
        })),
        FrameLayout::Krt0 => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [-f32_at(b, 0), -f32_at(b, 4), -f32_at(b, 8), f32_at(b, 12)],
            translation: [f32_at(b, 16), f32_at(b, 20), f32_at(b, 24)],
            time: f32_at(b, 28),
            ..d
        })),
        FrameLayout::Krts => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [-f32_at(b, 0), -f32_at(b, 4), -f32_at(b, 8), f32_at(b, 12)],
            translation: [f32_at(b, 16), f32_at(b, 20), f32_at(b, 24)],
            scale: [f32_at(b, 28), f32_at(b, 32), f32_at(b, 36)],
            time: f32_at(b, 40),
        })),
        FrameLayout::Anp3(1) => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [f32_at(b, 0), f32_at(b, 4), f32_at(b, 8), f32_at(b, 12)],
            time: f32_at(b, 16),
            ..d
        })),
        FrameLayout::Anp3(2) => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [f32_at(b, 0), f32_at(b, 4), f32_at(b, 8), f32_at(b, 12)],
            time: f32_at(b, 16),
            translation: [f32_at(b, 20), f32_at(b, 24), f32_at(b, 28)],
            ..d
        })),
        FrameLayout::Anp3(3) => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [
                i16_at(b, 0) / Q_SCALE,
                i16_at(b, 2) / Q_SCALE,
                i16_at(b, 4) / Q_SCALE,
                i16_at(b, 6) / Q_SCALE,
            ],
            time: i16_at(b, 8) / TIME_SCALE,
            ..d
        })),
        FrameLayout::Anp3(4) => keys.extend(bytes.chunks_exact(size).map(|b| IfpKey {
            rotation: [
                i16_at(b, 0) / Q_SCALE,
                i16_at(b, 2) / Q_SCALE,
                i16_at(b, 4) / Q_SCALE,
                i16_at(b, 6) / Q_SCALE,
            ],
            time: i16_at(b, 8) / TIME_SCALE,
            translation: [
                i16_at(b, 10) / T_SCALE,
                i16_at(b, 12) / T_SCALE,
                i16_at(b, 14) / T_SCALE,
            ],
            ..d
        })),
        FrameLayout::Anp3(_) => {}
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::ifp::records::*;
    use binrw::BinRead;
    use std::io::Cursor;

    /// Distinct little-endian bytes for `n` frames: every 2-byte word different, floats finite.
    fn frame_bytes(layout: FrameLayout, n: usize) -> Vec<u8> {
        let words = n * layout.size() / 2;
        match layout {
            FrameLayout::Anp3(3 | 4) => (0..words as i16)
                .flat_map(|i| (i * 37 - 500).to_le_bytes())
                .collect(),
            _ => (0..words / 2)
                .flat_map(|i| (i as f32 * 0.25 - 3.0).to_le_bytes())
                .collect(),
        }
    }

    /// The fast path gives what the binrw declarations give, with the format doc's conversions.
    #[test]
    fn bulk_decoder_agrees_with_the_binrw_records() {
        let conj = |q: [f32; 4]| [-q[0], -q[1], -q[2], q[3]];
        let d = IfpKey::default();
        for layout in [
            FrameLayout::Kr00,
            FrameLayout::Krt0,
            FrameLayout::Krts,
            FrameLayout::Anp3(1),
            FrameLayout::Anp3(2),
            FrameLayout::Anp3(3),
            FrameLayout::Anp3(4),
        ] {
            let bytes = frame_bytes(layout, 3);
            let fast = decode_frames(layout, &bytes, 3);
            let mut c = Cursor::new(&bytes[..]);
            let slow: Vec<IfpKey> = (0..3)
                .map(|_| match layout {
                    FrameLayout::Kr00 => {
                        let f = Kr00Frame::read(&mut c).unwrap();
                        IfpKey {
                            rotation: conj(f.q),
                            time: f.time,
                            ..d
                        }
                    }
                    FrameLayout::Krt0 => {
                        let f = Krt0Frame::read(&mut c).unwrap();
                        IfpKey {
                            rotation: conj(f.q),
                            translation: f.t,
                            time: f.time,
                            ..d
                        }
                    }
                    FrameLayout::Krts => {
                        let f = KrtsFrame::read(&mut c).unwrap();
                        IfpKey {
                            rotation: conj(f.q),
                            translation: f.t,
                            scale: f.s,
                            time: f.time,
                        }
                    }
                    FrameLayout::Anp3(1) => {
                        let f = Anp3RotFrame::read(&mut c).unwrap();
                        IfpKey {
                            rotation: f.q,
                            time: f.time,
                            ..d
                        }
                    }
                    FrameLayout::Anp3(2) => {
                        let f = Anp3RotTransFrame::read(&mut c).unwrap();
                        IfpKey {
                            rotation: f.q,
                            translation: f.t,
                            time: f.time,
                            ..d
                        }
                    }
                    FrameLayout::Anp3(3) => {
                        let f = Anp3RotFrameCompressed::read(&mut c).unwrap();
                        IfpKey {
                            rotation: f.q.map(|v| f32::from(v) / 4096.0),
                            time: f32::from(f.time) / 60.0,
                            ..d
                        }
                    }
                    _ => {
                        let f = Anp3RotTransFrameCompressed::read(&mut c).unwrap();
                        IfpKey {
                            rotation: f.q.map(|v| f32::from(v) / 4096.0),
                            time: f32::from(f.time) / 60.0,
                            translation: f.t.map(|v| f32::from(v) / 1024.0),
                            ..d
                        }
                    }
                })
                .collect();
            assert_eq!(c.position() as usize, bytes.len(), "{layout:?} record size");
            assert_eq!(fast, slow, "{layout:?}");
        }
    }
}
