//! The TXD reader (§5.1, §5.2): dictionary Struct, texture natives with their 88-byte header,
//! palette and levels.

use super::{TextureNative, TxdFile, raster};
use crate::formats::bytes::decode_name;
use crate::formats::rw::{ChunkHeader, RwError, RwErrorKind, RwWarning, RwWarningKind, Walker, id};

/// A texture dictionary and what the reader tolerated on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct TxdRead {
    /// The dictionary.
    pub file: TxdFile,
    /// What the reader accepted but reports, in file order.
    pub warnings: Vec<RwWarning>,
}

impl TxdFile {
    /// Reads a whole `.txd` file: its first Texture Dictionary chunk; other top-level chunks
    /// are skipped with a warning, trailing zero padding is accepted (§1.5).
    pub fn read(bytes: &[u8]) -> Result<TxdRead, RwError> {
        let mut w = Walker::new(bytes);
        let mut txd = None;
        let mut pos = 0;
        while bytes.len() - pos >= 12 {
            if bytes[pos..pos + 8].iter().all(|&b| b == 0) {
                break;
            }
            let c = w.header(pos, bytes.len())?;
            pos = c.end();
            match c.chunk_type {
                id::TEXTURE_DICTIONARY if txd.is_none() => {
                    w.enter("TextureDictionary");
                    txd = Some(read_dictionary(&mut w, &c)?);
                    w.leave();
                }
                _ => w.skip_unknown(&c),
            }
        }
        if pos < bytes.len() {
            let rest = &bytes[pos..];
            w.warn(
                pos,
                RwWarningKind::TrailingBytes {
                    count: rest.len() as u64,
                    all_zero: rest.iter().all(|&b| b == 0),
                },
            );
        }
        let Some(txd) = txd else {
            return Err(w.error(
                pos,
                RwErrorKind::MissingChunk {
                    expected: "Texture Dictionary",
                },
            ));
        };
        Ok(TxdRead {
            file: txd,
            warnings: w.warnings,
        })
    }
}

fn read_dictionary(w: &mut Walker<'_>, dict: &ChunkHeader) -> Result<TxdFile, RwError> {
    let children = w.children(dict)?;
    let s = w.require(
        &children,
        id::STRUCT,
        dict.data(),
        "Texture Dictionary Struct",
    )?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    // ≥ 3.6: u16 count + u16 device; older: u32 count (two u16 read the same, §1.2).
    let count = p.u16("texture count")?;
    let device_id = p.u16("device ID")?;
    w.check_consumed(&p);
    w.leave();
    let mut txd = TxdFile {
        device_id,
        textures: Vec::new(),
    };
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::TEXTURE_NATIVE => {
                w.enter(format!("TextureNative[{}]", txd.textures.len()));
                let t = read_native(w, c)?;
                w.leave();
                txd.textures.push(t);
            }
            id::EXTENSION => {
                w.enter("Extension");
                for e in w.children(c)? {
                    w.skip_unknown(&e);
                }
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    if txd.textures.len() != usize::from(count) {
        w.warn(
            s.data(),
            RwWarningKind::CountMismatch {
                what: "textures",
                declared: u64::from(count),
                found: txd.textures.len() as u64,
            },
        );
    }
    Ok(txd)
}

/// Whether `n` levels of `(u32 size, bytes)` starting at `at` end exactly at `end`.
fn levels_end_at(data: &[u8], mut at: usize, end: usize, n: usize) -> bool {
    for _ in 0..n {
        if end.saturating_sub(at) < 4 {
            return false;
        }
        let size = u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        at = match (at + 4).checked_add(size as usize) {
            Some(e) if e <= end => e,
            _ => return false,
        };
    }
    at == end
}

fn read_native(w: &mut Walker<'_>, native: &ChunkHeader) -> Result<TextureNative, RwError> {
    let children = w.children(native)?;
    let s = w.require(
        &children,
        id::STRUCT,
        native.data(),
        "Texture Native Struct",
    )?;
    w.enter("Struct");
    let mut p = w.payload(&s);
    let platform = p.u32("texture platform")?;
    if platform != 8 && platform != 9 {
        return Err(p.error(
            s.data(),
            RwErrorKind::UnsupportedPlatform {
                what: "texture native platform (8 D3D8 and 9 D3D9 are read)",
                value: platform,
            },
        ));
    }
    let mut t = TextureNative {
        platform,
        filter_addressing: p.u32("filter/addressing")?,
        name: decode_name(p.take(32, "texture name")?),
        mask: decode_name(p.take(32, "mask name")?),
        raster_format: p.u32("raster format")?,
        format_word: p.u32("D3D format / hasAlpha")?,
        width: p.u16("width")?,
        height: p.u16("height")?,
        depth: p.u8("depth")?,
        num_levels: p.u8("numLevels")?,
        raster_type: p.u8("raster type")?,
        compression_or_flags: p.u8("compression / flags")?,
        ..TextureNative::default()
    };
    let n = usize::from(t.num_levels);
    let entries: u64 = if t.raster_format & raster::PAL8 != 0 {
        256
    } else if t.raster_format & raster::PAL4 != 0 {
        // librw stores 32 entries, other tools 16: take the one after which the levels end
        // exactly at the Struct's end (§5.2).
        if !levels_end_at(w.data, p.pos() + 128, s.end(), n)
            && levels_end_at(w.data, p.pos() + 64, s.end(), n)
        {
            16
        } else {
            32
        }
    } else {
        0
    };
    p.check("palette entry", entries, 4)?;
    for _ in 0..entries {
        t.palette.push(p.array::<4>("palette entry")?);
    }
    p.check("mip level", n as u64, 4)?;
    for _ in 0..n {
        let size = p.u32("level size")?;
        t.levels.push(p.take(size as usize, "level data")?.to_vec());
    }
    w.check_consumed(&p);
    w.leave();
    for c in children.iter().filter(|c| c.offset != s.offset) {
        match c.chunk_type {
            id::EXTENSION => {
                w.enter("Extension");
                for e in w.children(c)? {
                    w.skip_unknown(&e);
                }
                w.leave();
            }
            _ => w.skip_unknown(c),
        }
    }
    Ok(t)
}
