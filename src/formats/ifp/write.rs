//! The IFP writer, and conversion between versions.

use super::error::{IfpWriteError, IfpWriteErrorKind, Location};
use super::records::{
    ANIM, ANLF, ANP2, ANP3, ANPK, AnimHead, Anp2AnimHead, Anp3AnimTail, Anp3PackageHead,
    Anp3RotFrame, Anp3RotFrameCompressed, Anp3RotTransFrame, Anp3RotTransFrameCompressed,
    Anp3SequenceHead, CPAN, DGAN, FrameLayout, INFO, Kr00Frame, Krt0Frame, KrtsFrame, NAME,
    Q_SCALE, SectionHeader, T_SCALE, TIME_SCALE,
};
use super::{AnimBlock, AnimLayout, IfpClip, IfpFile, IfpKey, IfpSequence, IfpVersion};
use crate::formats::bytes::encode_name;
use binrw::BinWrite;
use binrw::meta::WriteEndian;
use std::io::Cursor;

type Result<T> = std::result::Result<T, IfpWriteError>;

impl IfpFile {
    /// Encodes the package in its `version`. Nothing is dropped or clamped silently: a value the
    /// version cannot hold (scale in ANP3, an out-of-range compressed key, a name too long for
    /// its field) is an error; [`IfpFile::converted`] makes a package fit a version.
    pub fn write(&self) -> Result<Vec<u8>> {
        let mut w = Writer {
            out: Cursor::new(Vec::new()),
            loc: Location::default(),
        };
        match self.version {
            IfpVersion::Anpk if self.anlf => {
                w.put(&SectionHeader {
                    magic: ANLF,
                    size: 4,
                });
                w.bytes(&count_u32(self.blocks.len(), "ANPK block")?.to_le_bytes());
                for block in &self.blocks {
                    w.anpk_block(block)?;
                }
            }
            IfpVersion::Anpk => match self.blocks.as_slice() {
                [block] => w.anpk_block(block)?,
                blocks => {
                    return Err(w.error(IfpWriteErrorKind::TooManyBlocks {
                        blocks: blocks.len(),
                    }));
                }
            },
            IfpVersion::Anp3 | IfpVersion::Anp2 => match self.blocks.as_slice() {
                [block] => w.anp3(block, self.version == IfpVersion::Anp3)?,
                blocks => {
                    return Err(w.error(IfpWriteErrorKind::TooManyBlocks {
                        blocks: blocks.len(),
                    }));
                }
            },
        }
        Ok(w.out.into_inner())
    }

    /// A copy of this package made to fit `version`, with a note for each change that loses
    /// something:
    /// * ANPK: sequences keep their ANIM records; ANP3 compression is dropped (floats are exact);
    /// * ANP3/ANP2: blocks are merged into one (ANLF), scale keys are dropped (the games ignore
    ///   them), and each clip is stored compressed (types 3/4, flags bit 0 set) when every value
    ///   fits its int16, otherwise as floats (types 1/2, bit 0 clear) — never a silent overflow;
    ///   names longer than the 24-byte fields are cut.
    pub fn converted(&self, version: IfpVersion) -> (IfpFile, Vec<String>) {
        let mut notes = Vec::new();
        let mut out = self.clone();
        out.version = version;
        match version {
            IfpVersion::Anpk => {
                for seq in out
                    .blocks
                    .iter_mut()
                    .flat_map(|b| b.clips.iter_mut())
                    .flat_map(|c| c.sequences.iter_mut())
                {
                    seq.compressed = false;
                    if seq.bone_id != -1 && seq.anim.layout != AnimLayout::BoneTag {
                        seq.anim.layout = AnimLayout::BoneTag;
                    }
                }
            }
            IfpVersion::Anp3 | IfpVersion::Anp2 => {
                out.anlf = false;
                if out.blocks.len() > 1 {
                    notes.push(format!(
                        "{} ANLF blocks merged into one block named {:?}",
                        out.blocks.len(),
                        out.blocks[0].name
                    ));
                    let name = out.blocks[0].name.clone();
                    let clips = out.blocks.drain(..).flat_map(|b| b.clips).collect();
                    out.blocks = vec![AnimBlock { name, clips }];
                }
                if out.blocks.is_empty() {
                    notes.push("an ANLF file without blocks becomes one empty block".to_owned());
                    out.blocks.push(AnimBlock {
                        name: String::new(),
                        clips: Vec::new(),
                    });
                }
                let block = &mut out.blocks[0];
                cut_name(&mut block.name, "package", &mut notes);
                for clip in block.clips.iter_mut() {
                    cut_name(&mut clip.name, "clip", &mut notes);
                    for seq in &mut clip.sequences {
                        cut_name(&mut seq.name, "bone", &mut notes);
                    }
                    let scaled = clip.sequences.iter().filter(|s| s.has_scale).count();
                    if scaled > 0 {
                        notes.push(format!(
                            "clip {:?}: scale keys of {scaled} bones dropped ({version} cannot store scale; the games ignore it)",
                            clip.name
                        ));
                    }
                    let fits = clip.sequences.iter().all(|s| {
                        s.keys
                            .iter()
                            .all(|k| compress_key(k, s.has_translation).is_ok())
                    });
                    for seq in &mut clip.sequences {
                        seq.has_scale = false;
                        seq.compressed = fits;
                        for key in &mut seq.keys {
                            key.scale = [1.0; 3];
                        }
                    }
                    if fits {
                        clip.flags |= 1;
                    } else {
                        clip.flags &= !1;
                        notes.push(format!(
                            "clip {:?}: values exceed the int16 range of compressed keys; stored as floats (frame types 1/2)",
                            clip.name
                        ));
                    }
                }
            }
        }
        (out, notes)
    }
}

/// Cuts a name to the 24 bytes of an ANP3 name field, with a note.
fn cut_name(name: &mut String, what: &str, notes: &mut Vec<String>) {
    const FIELD: usize = 24;
    let len = encode_name(name).map_or(name.chars().count(), |b| b.len());
    if len > FIELD {
        let cut: String = name.chars().take(FIELD).collect();
        notes.push(format!(
            "{what} name {name:?} cut to {cut:?} (ANP3 names hold {FIELD} bytes)"
        ));
        *name = cut;
    }
}

fn count_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| IfpWriteError {
        location: Location::default(),
        kind: IfpWriteErrorKind::TooMany { what, count: n },
    })
}

/// Rounds `value × scale` to the int16 of a compressed key; `Err` when it does not fit.
fn quantise(
    value: f32,
    scale: f32,
    field: &'static str,
) -> std::result::Result<i16, IfpWriteErrorKind> {
    let q = (value * scale).round();
    if (f32::from(i16::MIN)..=f32::from(i16::MAX)).contains(&q) {
        Ok(q as i16)
    } else {
        Err(IfpWriteErrorKind::CompressedOverflow { field, value })
    }
}

fn compress_key(
    k: &IfpKey,
    translation: bool,
) -> std::result::Result<Anp3RotTransFrameCompressed, IfpWriteErrorKind> {
    let r = k.rotation;
    Ok(Anp3RotTransFrameCompressed {
        q: [
            quantise(r[0], Q_SCALE, "rotation")?,
            quantise(r[1], Q_SCALE, "rotation")?,
            quantise(r[2], Q_SCALE, "rotation")?,
            quantise(r[3], Q_SCALE, "rotation")?,
        ],
        time: quantise(k.time, TIME_SCALE, "time")?,
        t: if translation {
            [
                quantise(k.translation[0], T_SCALE, "translation")?,
                quantise(k.translation[1], T_SCALE, "translation")?,
                quantise(k.translation[2], T_SCALE, "translation")?,
            ]
        } else {
            [0; 3]
        },
    })
}

struct Writer {
    out: Cursor<Vec<u8>>,
    loc: Location,
}

impl Writer {
    fn error(&self, kind: IfpWriteErrorKind) -> IfpWriteError {
        IfpWriteError {
            location: self.loc.clone(),
            kind,
        }
    }

    fn put<T: BinWrite + WriteEndian>(&mut self, value: &T)
    where
        for<'a> T::Args<'a>: Default,
    {
        // Writing into a Vec cannot fail.
        value
            .write(&mut self.out)
            .unwrap_or_else(|e| unreachable!("in-memory write: {e}"));
    }

    fn bytes(&mut self, b: &[u8]) {
        self.out.get_mut().extend_from_slice(b);
        self.out.set_position(self.out.get_ref().len() as u64);
    }

    fn pos(&self) -> usize {
        self.out.get_ref().len()
    }

    fn pad4(&mut self) {
        while !self.pos().is_multiple_of(4) {
            self.bytes(&[0]);
        }
    }

    /// Starts a section; returns where its size goes, to be patched by [`Writer::end_section`].
    fn begin_section(&mut self, magic: [u8; 4]) -> usize {
        let at = self.pos();
        self.put(&SectionHeader { magic, size: 0 });
        at
    }

    /// Writes the section's size: the bytes after its header, up to here.
    fn end_section(&mut self, at: usize) -> Result<()> {
        let size = count_u32(self.pos() - at - 8, "section byte")?;
        self.out.get_mut()[at + 4..at + 8].copy_from_slice(&size.to_le_bytes());
        Ok(())
    }

    fn latin1(&self, name: &str) -> Result<Vec<u8>> {
        encode_name(name).ok_or_else(|| {
            self.error(IfpWriteErrorKind::NameNotLatin1 {
                name: name.to_owned(),
            })
        })
    }

    /// A name in a fixed field of `N` bytes, NUL-filled.
    fn fixed_name<const N: usize>(&self, name: &str) -> Result<[u8; N]> {
        let bytes = self.latin1(name)?;
        if bytes.len() > N {
            return Err(self.error(IfpWriteErrorKind::NameTooLong {
                name: name.to_owned(),
                max: N,
            }));
        }
        let mut out = [0u8; N];
        out[..bytes.len()].copy_from_slice(&bytes);
        Ok(out)
    }

    /// A NUL-terminated name section payload (INFO, NAME): bytes, NUL, padding to 4.
    fn section_name(&mut self, magic: [u8; 4], prefix: Option<u32>, name: &str) -> Result<()> {
        let bytes = self.latin1(name)?;
        let size = count_u32(
            bytes.len() + 1 + if prefix.is_some() { 4 } else { 0 },
            "name byte",
        )?;
        self.put(&SectionHeader { magic, size });
        if let Some(p) = prefix {
            self.bytes(&p.to_le_bytes());
        }
        self.bytes(&bytes);
        self.bytes(&[0]);
        self.pad4();
        Ok(())
    }

    fn anpk_block(&mut self, block: &AnimBlock) -> Result<()> {
        self.loc = Location::default();
        let anpk = self.begin_section(ANPK);
        self.section_name(
            INFO,
            Some(count_u32(block.clips.len(), "animation")?),
            &block.name,
        )?;
        for (i, clip) in block.clips.iter().enumerate() {
            self.loc = Location {
                clip: Some((i, clip.name.clone())),
                ..Location::default()
            };
            self.section_name(NAME, None, &clip.name)?;
            let dgan = self.begin_section(DGAN);
            self.put(&SectionHeader {
                magic: INFO,
                size: 8,
            });
            self.bytes(&count_u32(clip.sequences.len(), "sequence")?.to_le_bytes());
            self.bytes(&clip.info_unknown.to_le_bytes());
            for (j, seq) in clip.sequences.iter().enumerate() {
                self.loc.sequence = Some((j, seq.name.clone()));
                self.anpk_sequence(seq)?;
            }
            self.loc.sequence = None;
            self.end_section(dgan)?;
        }
        self.loc = Location::default();
        self.end_section(anpk)
    }

    fn anpk_sequence(&mut self, seq: &IfpSequence) -> Result<()> {
        let cpan = self.begin_section(CPAN);
        let n = i32::try_from(seq.keys.len()).map_err(|_| {
            self.error(IfpWriteErrorKind::TooMany {
                what: "key",
                count: seq.keys.len(),
            })
        })?;
        let layout = &seq.anim.layout;
        self.put(&SectionHeader {
            magic: ANIM,
            size: count_u32(layout.size(), "ANIM byte")?,
        });
        self.put(&AnimHead {
            name: self.fixed_name::<28>(&seq.name)?,
            num_frames: n,
            start_frame: seq.anim.start_frame.unwrap_or(0),
            end_frame: seq.anim.end_frame.unwrap_or(n - 1),
        });
        match layout {
            AnimLayout::BoneTag => self.bytes(&seq.bone_id.to_le_bytes()),
            AnimLayout::Links(links) => {
                if seq.bone_id != -1 {
                    return Err(self.error(IfpWriteErrorKind::BoneIdNotRepresentable {
                        bone_id: seq.bone_id,
                    }));
                }
                self.bytes(&links[0].to_le_bytes());
                self.bytes(&links[1].to_le_bytes());
            }
            AnimLayout::Other { tail } => {
                if matches!(tail.len(), 4 | 8) {
                    return Err(self.error(IfpWriteErrorKind::BadAnimLayout {
                        size: layout.size() as u32,
                    }));
                }
                if seq.bone_id != -1 {
                    return Err(self.error(IfpWriteErrorKind::BoneIdNotRepresentable {
                        bone_id: seq.bone_id,
                    }));
                }
                self.bytes(tail);
                self.pad4();
            }
        }
        if !seq.keys.is_empty() {
            let frame = if seq.has_scale {
                FrameLayout::Krts
            } else if seq.has_translation {
                FrameLayout::Krt0
            } else {
                FrameLayout::Kr00
            };
            let size = count_u32(seq.keys.len() * frame.size(), "key byte")?;
            self.put(&SectionHeader {
                magic: frame.magic().unwrap_or(*b"KR00"),
                size,
            });
            for k in &seq.keys {
                // Back to the file's (conjugated) quaternion convention.
                let q = [
                    -k.rotation[0],
                    -k.rotation[1],
                    -k.rotation[2],
                    k.rotation[3],
                ];
                match frame {
                    FrameLayout::Kr00 => self.put(&Kr00Frame { q, time: k.time }),
                    FrameLayout::Krt0 => self.put(&Krt0Frame {
                        q,
                        t: k.translation,
                        time: k.time,
                    }),
                    _ => self.put(&KrtsFrame {
                        q,
                        t: k.translation,
                        s: k.scale,
                        time: k.time,
                    }),
                }
            }
        }
        self.end_section(cpan)
    }

    fn anp3(&mut self, block: &AnimBlock, anp3: bool) -> Result<()> {
        let top = self.begin_section(if anp3 { ANP3 } else { ANP2 });
        self.put(&Anp3PackageHead {
            name: self.fixed_name::<24>(&block.name)?,
            num_anims: count_u32(block.clips.len(), "animation")?,
        });
        for (i, clip) in block.clips.iter().enumerate() {
            self.loc = Location {
                clip: Some((i, clip.name.clone())),
                ..Location::default()
            };
            self.put(&Anp2AnimHead {
                name: self.fixed_name::<24>(&clip.name)?,
                num_sequences: count_u32(clip.sequences.len(), "sequence")?,
            });
            let tail_at = self.pos();
            if anp3 {
                self.put(&Anp3AnimTail {
                    frame_data_size: 0,
                    flags: clip.flags,
                });
            }
            let keys_start_total = self.write_anp3_sequences(clip)?;
            if anp3 {
                let size = count_u32(keys_start_total, "key byte")?;
                self.out.get_mut()[tail_at..tail_at + 4].copy_from_slice(&size.to_le_bytes());
            }
        }
        self.loc = Location::default();
        self.end_section(top)
    }

    /// Writes the sequences of one clip; returns the number of key bytes written.
    fn write_anp3_sequences(&mut self, clip: &IfpClip) -> Result<usize> {
        let mut key_bytes = 0;
        for (j, seq) in clip.sequences.iter().enumerate() {
            self.loc.sequence = Some((j, seq.name.clone()));
            if seq.has_scale {
                return Err(self.error(IfpWriteErrorKind::ScaleNotRepresentable));
            }
            let frame_type = match (seq.compressed, seq.has_translation) {
                (false, false) => 1,
                (false, true) => 2,
                (true, false) => 3,
                (true, true) => 4,
            };
            self.put(&Anp3SequenceHead {
                name: self.fixed_name::<24>(&seq.name)?,
                frame_type,
                num_frames: count_u32(seq.keys.len(), "key")?,
                bone_id: seq.bone_id,
            });
            let start = self.pos();
            for (k, key) in seq.keys.iter().enumerate() {
                let q = key.rotation;
                match frame_type {
                    1 => self.put(&Anp3RotFrame { q, time: key.time }),
                    2 => self.put(&Anp3RotTransFrame {
                        q,
                        time: key.time,
                        t: key.translation,
                    }),
                    _ => {
                        let c = compress_key(key, seq.has_translation).map_err(|kind| {
                            let mut e = self.error(kind);
                            e.location.key = Some(k);
                            e
                        })?;
                        if frame_type == 3 {
                            self.put(&Anp3RotFrameCompressed {
                                q: c.q,
                                time: c.time,
                            });
                        } else {
                            self.put(&c);
                        }
                    }
                }
            }
            key_bytes += self.pos() - start;
        }
        self.loc.sequence = None;
        Ok(key_bytes)
    }
}
