//! Pixel decoding to RGBA8 (§5.5). The level's size is checked against what its format needs
//! before the output is allocated.

use super::{PixelFormat, RgbaImage, TextureDecodeError, TextureNative, raster};

/// Expands an `n`-bit value to 8 bits by bit replication: `(x << (8 − n)) | (x >> (2n − 8))`
/// (§5.5).
fn expand(x: u32, n: u32) -> u8 {
    match n {
        1 => (x & 1) as u8 * 255,
        4 => ((x << 4) | x) as u8,
        5 => ((x << 3) | (x >> 2)) as u8,
        6 => ((x << 2) | (x >> 4)) as u8,
        _ => x as u8,
    }
}

fn rgb565(c: u16) -> [u8; 3] {
    let c = u32::from(c);
    [
        expand(c >> 11, 5),
        expand((c >> 5) & 0x3F, 6),
        expand(c & 0x1F, 5),
    ]
}

/// The bytes a level needs.
fn needed(format: PixelFormat, depth: u8, w: u32, h: u32) -> u64 {
    let (w, h) = (u64::from(w), u64::from(h));
    let blocks = w.div_ceil(4).max(1) * h.div_ceil(4).max(1);
    match format {
        PixelFormat::Dxt1 => blocks * 8,
        PixelFormat::Dxt3 | PixelFormat::Dxt5 => blocks * 16,
        PixelFormat::Bgra8888 => w * h * 4,
        PixelFormat::Bgrx8888 if depth == 24 => w * h * 3,
        PixelFormat::Bgrx8888 => w * h * 4,
        PixelFormat::Rgb565
        | PixelFormat::Argb1555
        | PixelFormat::Xrgb1555
        | PixelFormat::Argb4444
        | PixelFormat::Lum8Alpha8 => w * h * 2,
        PixelFormat::Lum8 | PixelFormat::Pal8 => w * h,
        PixelFormat::Pal4 => (w * h).div_ceil(2),
    }
}

pub(super) fn decode(
    t: &TextureNative,
    format: PixelFormat,
    level: usize,
    w: u32,
    h: u32,
    data: &[u8],
) -> Result<RgbaImage, TextureDecodeError> {
    let need = needed(format, t.depth, w, h);
    if (data.len() as u64) < need {
        return Err(TextureDecodeError::LevelTooShort {
            level,
            width: w,
            height: h,
            needed: need,
            available: data.len() as u64,
        });
    }
    let n = w as usize * h as usize;
    let mut px = vec![0u8; n * 4];
    let u16_at = |i: usize| u16::from_le_bytes([data[2 * i], data[2 * i + 1]]);
    match format {
        PixelFormat::Bgra8888 => {
            for (o, s) in px.chunks_exact_mut(4).zip(data.chunks_exact(4)) {
                o.copy_from_slice(&[s[2], s[1], s[0], s[3]]);
            }
        }
        PixelFormat::Bgrx8888 => {
            let step = if t.depth == 24 { 3 } else { 4 };
            for (o, s) in px.chunks_exact_mut(4).zip(data.chunks(step)) {
                o.copy_from_slice(&[s[2], s[1], s[0], 255]);
            }
        }
        PixelFormat::Rgb565 => {
            for (i, o) in px.chunks_exact_mut(4).enumerate() {
                let [r, g, b] = rgb565(u16_at(i));
                o.copy_from_slice(&[r, g, b, 255]);
            }
        }
        PixelFormat::Argb1555 | PixelFormat::Xrgb1555 => {
            for (i, o) in px.chunks_exact_mut(4).enumerate() {
                let c = u32::from(u16_at(i));
                let a = if format == PixelFormat::Argb1555 {
                    expand(c >> 15, 1)
                } else {
                    255
                };
                o.copy_from_slice(&[
                    expand((c >> 10) & 0x1F, 5),
                    expand((c >> 5) & 0x1F, 5),
                    expand(c & 0x1F, 5),
                    a,
                ]);
            }
        }
        PixelFormat::Argb4444 => {
            for (i, o) in px.chunks_exact_mut(4).enumerate() {
                let c = u32::from(u16_at(i));
                o.copy_from_slice(&[
                    expand((c >> 8) & 0xF, 4),
                    expand((c >> 4) & 0xF, 4),
                    expand(c & 0xF, 4),
                    expand(c >> 12, 4),
                ]);
            }
        }
        PixelFormat::Lum8 => {
            for (o, &l) in px.chunks_exact_mut(4).zip(data) {
                o.copy_from_slice(&[l, l, l, 255]);
            }
        }
        PixelFormat::Lum8Alpha8 => {
            for (o, s) in px.chunks_exact_mut(4).zip(data.chunks_exact(2)) {
                o.copy_from_slice(&[s[0], s[0], s[0], s[1]]);
            }
        }
        PixelFormat::Pal8 | PixelFormat::Pal4 => {
            let entries = if format == PixelFormat::Pal8 { 256 } else { 16 };
            if t.palette.len() < entries {
                return Err(TextureDecodeError::PaletteTooShort {
                    entries: t.palette.len(),
                    needed: entries,
                });
            }
            // Formats without alpha force the palette's alpha to 255 (§5.5).
            let opaque = matches!(
                t.raster_format & raster::PIXEL_MASK,
                raster::C565 | raster::C888 | raster::C555 | raster::LUM8
            );
            let packed = format == PixelFormat::Pal4 && data.len() < n;
            for (i, o) in px.chunks_exact_mut(4).enumerate() {
                let index = match format {
                    PixelFormat::Pal8 => data[i],
                    _ if packed => {
                        let b = data[i / 2];
                        if i % 2 == 0 { b >> 4 } else { b & 0xF }
                    }
                    _ => data[i] & 0xF,
                };
                let mut c = t.palette[usize::from(index)];
                if opaque {
                    c[3] = 255;
                }
                o.copy_from_slice(&c);
            }
        }
        PixelFormat::Dxt1 | PixelFormat::Dxt3 | PixelFormat::Dxt5 => {
            let block_bytes = if format == PixelFormat::Dxt1 { 8 } else { 16 };
            let bw = (w as usize).div_ceil(4).max(1);
            let bh = (h as usize).div_ceil(4).max(1);
            for by in 0..bh {
                for bx in 0..bw {
                    let at = (by * bw + bx) * block_bytes;
                    let block = &data[at..at + block_bytes];
                    let texels = dxt_block(format, block);
                    for (t, texel) in texels.iter().enumerate() {
                        let (x, y) = (bx * 4 + t % 4, by * 4 + t / 4);
                        if x < w as usize && y < h as usize {
                            let o = (y * w as usize + x) * 4;
                            px[o..o + 4].copy_from_slice(texel);
                        }
                    }
                }
            }
        }
    }
    Ok(RgbaImage {
        width: w,
        height: h,
        pixels: px,
    })
}

/// One 4×4 block, texel t = 4·row + col (§5.5).
fn dxt_block(format: PixelFormat, block: &[u8]) -> [[u8; 4]; 16] {
    let (alpha, colour) = match format {
        PixelFormat::Dxt1 => (None, block),
        _ => (Some(&block[..8]), &block[8..]),
    };
    let c0 = u16::from_le_bytes([colour[0], colour[1]]);
    let c1 = u16::from_le_bytes([colour[2], colour[3]]);
    let bits = u32::from_le_bytes([colour[4], colour[5], colour[6], colour[7]]);
    let (p0, p1) = (rgb565(c0), rgb565(c1));
    let mix = |a: u8, b: u8, wa: u32, wb: u32, d: u32| {
        ((u32::from(a) * wa + u32::from(b) * wb) / d) as u8
    };
    let four = format != PixelFormat::Dxt1 || c0 > c1;
    let mut palette = [[0u8; 4]; 4];
    palette[0] = [p0[0], p0[1], p0[2], 255];
    palette[1] = [p1[0], p1[1], p1[2], 255];
    for ch in 0..3 {
        if four {
            palette[2][ch] = mix(p0[ch], p1[ch], 2, 1, 3);
            palette[3][ch] = mix(p0[ch], p1[ch], 1, 2, 3);
        } else {
            palette[2][ch] = mix(p0[ch], p1[ch], 1, 1, 2);
        }
    }
    palette[2][3] = 255;
    palette[3][3] = if four { 255 } else { 0 };
    let mut out = [[0u8; 4]; 16];
    for (t, o) in out.iter_mut().enumerate() {
        *o = palette[((bits >> (2 * t)) & 3) as usize];
    }
    if let Some(a) = alpha {
        let word = u64::from_le_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]);
        if format == PixelFormat::Dxt3 {
            for (t, o) in out.iter_mut().enumerate() {
                o[3] = ((word >> (4 * t)) & 0xF) as u8 * 17;
            }
        } else {
            let (a0, a1) = (a[0], a[1]);
            let mut alphas = [0u8; 8];
            alphas[0] = a0;
            alphas[1] = a1;
            if a0 > a1 {
                for i in 1..=6u32 {
                    alphas[i as usize + 1] = mix(a0, a1, 7 - i, i, 7);
                }
            } else {
                for i in 1..=4u32 {
                    alphas[i as usize + 1] = mix(a0, a1, 5 - i, i, 5);
                }
                alphas[6] = 0;
                alphas[7] = 255;
            }
            let indices = word >> 16;
            for (t, o) in out.iter_mut().enumerate() {
                o[3] = alphas[((indices >> (3 * t)) & 7) as usize];
            }
        }
    }
    out
}
