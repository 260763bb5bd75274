//! The TXD reader and pixel decoders on hand-assembled dictionaries (`docs/formats/dff.md` §5).
//! Every texture native is written field by field; expected RGBA8 values are worked out by
//! hand in the comments.

include!("../fuzz/oracles/txd.rs");

use crate::bytes::Bytes;
use rigplay::formats::Bounds;
use rigplay::formats::txd::{PixelFormat, RwErrorKind, TextureDecodeError, TxdFile};

const SA: u32 = 0x1803_FFFF;
const STRUCT: u32 = 0x01;
const EXTENSION: u32 = 0x03;
const NATIVE: u32 = 0x15;
const DICT: u32 = 0x16;

/// One texture native (§5.2): 88-byte header, palette, levels as (u32 size, bytes).
#[derive(Clone)]
struct Tex {
    platform: u32,
    name: &'static str,
    raster: u32,
    format: u32,
    w: u16,
    h: u16,
    depth: u8,
    flags: u8,
    palette: Vec<u8>,
    levels: Vec<Vec<u8>>,
}

fn tex(name: &'static str, raster: u32, format: u32, w: u16, h: u16, depth: u8) -> Tex {
    Tex {
        platform: 9,
        name,
        raster,
        format,
        w,
        h,
        depth,
        flags: 0,
        palette: Vec::new(),
        levels: Vec::new(),
    }
}

fn native(b: &mut Bytes, t: &Tex) {
    b.chunk(NATIVE, SA, |b| {
        b.chunk(STRUCT, SA, |b| {
            b.u32(t.platform).u32(0x1102);
            b.fixed(t.name, 32, &[]).fixed("", 32, b"junk");
            b.u32(t.raster).u32(t.format).u16(t.w).u16(t.h);
            b.u8(t.depth).u8(t.levels.len() as u8).u8(4).u8(t.flags);
            b.raw(&t.palette);
            for l in &t.levels {
                b.u32(l.len() as u32).raw(l);
            }
        });
        b.chunk(EXTENSION, SA, |_| {});
    });
}

fn dictionary(textures: &[Tex]) -> Vec<u8> {
    let mut b = Bytes::new();
    b.chunk(DICT, SA, |b| {
        b.chunk(STRUCT, SA, |b| {
            b.u16(textures.len() as u16).u16(2);
        });
        for t in textures {
            native(b, t);
        }
        b.chunk(EXTENSION, SA, |_| {});
    });
    b.done()
}

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The uncompressed and palettised textures, with their expected pixels.
fn plain() -> Vec<(Tex, Vec<[u8; 4]>)> {
    let mut out = Vec::new();
    // 8888: memory B, G, R, A → RGBA (byte2, byte1, byte0, byte3).
    let mut t = tex("c8888", 0x500, 21, 2, 1, 32);
    t.levels = vec![vec![0x10, 0x20, 0x30, 0x40, 0xFF, 0, 0, 0x80]];
    out.push((t, vec![[0x30, 0x20, 0x10, 0x40], [0, 0, 255, 128]]));
    // 888 (X8R8G8B8): B, G, R, X → alpha 255.
    let mut t = tex("c888", 0x600, 22, 1, 1, 32);
    t.levels = vec![vec![1, 2, 3, 0x77]];
    out.push((t, vec![[3, 2, 1, 255]]));
    // 565: 0xF800 red; 0x07E0 green; 0x001F blue; 0x8410: R 16 → (16<<3)|(16>>2) = 132,
    // G 32 → (32<<2)|(32>>4) = 130, B 16 → 132.
    let mut t = tex("c565", 0x200, 23, 2, 2, 16);
    t.levels = vec![u16s(&[0xF800, 0x07E0, 0x001F, 0x8410])];
    out.push((
        t,
        vec![
            [255, 0, 0, 255],
            [0, 255, 0, 255],
            [0, 0, 255, 255],
            [132, 130, 132, 255],
        ],
    ));
    // 1555: 0xFC00 = A1 R31 → (255,0,0,255); 0x03E0 = A0 G31 → (0,255,0,0); 0x0001 = B1 →
    // (1<<3)|(1>>2) = 8 → (0,0,8,0).
    let mut t = tex("c1555", 0x100, 25, 3, 1, 16);
    t.levels = vec![u16s(&[0xFC00, 0x03E0, 0x0001])];
    out.push((t, vec![[255, 0, 0, 255], [0, 255, 0, 0], [0, 0, 8, 0]]));
    // 555 (X1R5G5B5): as 1555 with alpha 255: 0x0001 → (0,0,8,255).
    let mut t = tex("c555", 0xA00, 24, 1, 1, 16);
    t.levels = vec![u16s(&[0x0001])];
    out.push((t, vec![[0, 0, 8, 255]]));
    // 4444: 0xF842: A 15 → 255, R 8 → 0x88, G 4 → 0x44, B 2 → 0x22; 0x0F00 → (255,0,0,0).
    let mut t = tex("c4444", 0x300, 26, 2, 1, 16);
    t.levels = vec![u16s(&[0xF842, 0x0F00])];
    out.push((t, vec![[0x88, 0x44, 0x22, 255], [255, 0, 0, 0]]));
    // LUM8: grey, alpha 255.
    let mut t = tex("lum8", 0x400, 50, 3, 1, 8);
    t.levels = vec![vec![0, 0x80, 0xFF]];
    out.push((
        t,
        vec![[0, 0, 0, 255], [128, 128, 128, 255], [255, 255, 255, 255]],
    ));
    // PAL8 over 8888: palette entries are R, G, B, A; entry 0 (10,20,30,40), 1 (50,60,70,80).
    let mut palette = vec![0u8; 1024];
    palette[..8].copy_from_slice(&[10, 20, 30, 40, 50, 60, 70, 80]);
    let mut t = tex("pal8", 0x2500, 41, 2, 2, 8);
    t.palette = palette.clone();
    t.levels = vec![vec![1, 0, 1, 1]];
    let (p0, p1) = ([10, 20, 30, 40], [50, 60, 70, 80]);
    out.push((t, vec![p1, p0, p1, p1]));
    // PAL8 over 565 (no alpha): palette alpha forced to 255.
    let mut t = tex("pal8_565", 0x2200, 41, 1, 1, 8);
    t.palette = palette;
    t.levels = vec![vec![1]];
    out.push((t, vec![[50, 60, 70, 255]]));
    // PAL4, 32-entry palette (librw), two indices per byte, high nibble first: 0x12, 0x30 →
    // 1, 2, 3, 0. Entry i = (7i, 7i+1, 7i+2, 255−i).
    let entry = |i: u8| [7 * i, 7 * i + 1, 7 * i + 2, 255 - i];
    let mut t = tex("pal4_32", 0x4500, 41, 4, 1, 4);
    t.palette = (0..32).flat_map(entry).collect();
    t.levels = vec![vec![0x12, 0x30]];
    out.push((t, vec![entry(1), entry(2), entry(3), entry(0)]));
    // PAL4 with a 16-entry palette (inferred from the sizes), one index per byte.
    let mut t = tex("pal4_16", 0x4500, 41, 2, 1, 4);
    t.palette = (0..16).flat_map(entry).collect();
    t.levels = vec![vec![15, 4]];
    out.push((t, vec![entry(15), entry(4)]));
    out
}

fn check_pixels(txd: &TxdFile, name: &str, expected: &[[u8; 4]]) {
    let t = txd.find(name).unwrap_or_else(|| panic!("{name}"));
    let img = t.decode(0).unwrap_or_else(|e| panic!("{name}: {e}"));
    let got: Vec<[u8; 4]> = img
        .pixels
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    assert_eq!(got, expected, "{name}");
}

#[test]
fn uncompressed_and_palette_formats_decode_to_rgba8() {
    let cases = plain();
    let textures: Vec<Tex> = cases.iter().map(|(t, _)| t.clone()).collect();
    let r = TxdFile::read(&dictionary(&textures)).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.file.device_id, 2);
    assert_eq!(r.file.textures.len(), cases.len());
    let t = r.file.find("PAL4_16").unwrap();
    assert_eq!(
        t.palette.len(),
        16,
        "palette size inferred from the level sizes"
    );
    assert_eq!(r.file.find("pal4_32").unwrap().palette.len(), 32);
    assert_eq!(
        r.file.find("c8888").unwrap().mask,
        "",
        "mask cut at its NUL"
    );
    for (t, expected) in &cases {
        check_pixels(&r.file, t.name, expected);
    }
}

/// 4×4 DXT1 blocks: c0, c1 (565), 32 bits of 2-bit indices, texel 0 lowest.
fn dxt1_block(c0: u16, c1: u16, bits: u32) -> Vec<u8> {
    let mut b = Bytes::new();
    b.u16(c0).u16(c1).u32(bits);
    b.done()
}

/// DXT5 alpha indices t % 8 for the 16 texels, 3 bits each, texel 0 lowest (48 bits).
fn dxt5_alpha(a0: u8, a1: u8) -> Vec<u8> {
    let mut bits = 0u64;
    for t in 0..16u64 {
        bits |= (t % 8) << (3 * t);
    }
    let mut v = vec![a0, a1];
    v.extend_from_slice(&bits.to_le_bytes()[..6]);
    v
}

#[test]
fn dxt_blocks_decode_to_rgba8() {
    // DXT1, 4-colour mode (c0 = red 0xF800 > c1 = blue 0x001F): p2 = (2·p0 + p1)/3 =
    // (170, 0, 85), p3 = (p0 + 2·p1)/3 = (85, 0, 170). Each row's indices 0,1,2,3 = 0xE4.
    let mut opaque = tex("dxt1", 0x200, 0x3154_5844, 4, 4, 16);
    opaque.flags = 0x8;
    // Three mip levels: 4×4, 2×2, 1×1, one block each.
    let block = dxt1_block(0xF800, 0x001F, 0xE4E4_E4E4);
    opaque.levels = vec![block.clone(), block.clone(), block];
    let row = [
        [255, 0, 0, 255],
        [0, 0, 255, 255],
        [170, 0, 85, 255],
        [85, 0, 170, 255],
    ];
    // DXT1 with 1-bit alpha: c0 = blue ≤ c1 = red → 3 colours: p2 = (p0 + p1)/2 =
    // (127, 0, 127), p3 transparent black. First row 0,1,2,3, the rest index 3.
    let mut alpha = tex("dxt1a", 0x100, 0x3154_5844, 4, 4, 16);
    alpha.flags = 0x9;
    alpha.levels = vec![dxt1_block(0x001F, 0xF800, 0xFFFF_FFE4)];
    // DXT3: alpha nibble t for texel t (×17); colour block black/white always in 4-colour
    // mode even though c0 < c1: index 3 = (0 + 2·255)/3 = 170.
    let mut dxt3 = tex("dxt3", 0x300, 0x3354_5844, 4, 4, 16);
    dxt3.flags = 0x9;
    let mut d3 = 0xFEDC_BA98_7654_3210u64.to_le_bytes().to_vec();
    d3.extend(dxt1_block(0x0000, 0xFFFF, 0xFFFF_FFFF));
    dxt3.levels = vec![d3];
    // DXT5, 8×4 = two blocks left to right. Block 0: a0 = 255 > a1 = 0: alphas 255, 0,
    // then (7−i)·255/7 for i = 1..6 = 218, 182, 145, 109, 72, 36. Block 1: a0 = 0 ≤ a1 = 255:
    // 0, 255, then i·255/5 = 51, 102, 153, 204, then 0, 255. Colour: white, index 0.
    let mut dxt5 = tex("dxt5", 0x300, 0x3554_5844, 8, 4, 16);
    dxt5.flags = 0x9;
    let mut d5 = dxt5_alpha(255, 0);
    d5.extend(dxt1_block(0xFFFF, 0, 0));
    d5.extend(dxt5_alpha(0, 255));
    d5.extend(dxt1_block(0xFFFF, 0, 0));
    dxt5.levels = vec![d5];
    // D3D8 (platform 8): compression byte 1 = DXT1, 2×2 crop of one block.
    let mut d3d8 = tex("d3d8_dxt1", 0x200, 0, 2, 2, 16);
    d3d8.platform = 8;
    d3d8.flags = 1;
    d3d8.levels = vec![dxt1_block(0xF800, 0x001F, 0xE4E4_E4E4)];

    let r = TxdFile::read(&dictionary(&[opaque, alpha, dxt3, dxt5, d3d8])).unwrap();
    let t = r.file.find("dxt1").unwrap();
    assert_eq!(t.pixel_format(), Ok(PixelFormat::Dxt1));
    let all: Vec<_> = t.decode_all().into_iter().map(|l| l.unwrap()).collect();
    assert_eq!(
        all.iter().map(|l| (l.width, l.height)).collect::<Vec<_>>(),
        [(4, 4), (2, 2), (1, 1)]
    );
    check_pixels(&r.file, "dxt1", &row.repeat(4));
    assert_eq!(
        &all[1].pixels[..8],
        &[255, 0, 0, 255, 0, 0, 255, 255],
        "cropped level"
    );
    let mut expected = vec![[255, 0, 0, 255]; 0];
    expected.extend([
        [0, 0, 255, 255],
        [255, 0, 0, 255],
        [127, 0, 127, 255],
        [0, 0, 0, 0],
    ]);
    expected.extend([[0, 0, 0, 0]; 12]);
    check_pixels(&r.file, "dxt1a", &expected);
    let expected: Vec<[u8; 4]> = (0..16).map(|t| [170, 170, 170, t * 17]).collect();
    check_pixels(&r.file, "dxt3", &expected);
    let a = [
        [255, 0, 218, 182, 145, 109, 72, 36],
        [0, 255, 51, 102, 153, 204, 0, 255],
    ];
    let mut expected = Vec::new();
    for y in 0..4 {
        for x in 0..8 {
            let (block, t) = (x / 4, y * 4 + x % 4);
            expected.push([255, 255, 255, a[block][t % 8]]);
        }
    }
    check_pixels(&r.file, "dxt5", &expected);
    check_pixels(&r.file, "d3d8_dxt1", &[row[0], row[1], row[0], row[1]]);
}

#[test]
fn an_unsupported_or_short_texture_fails_alone() {
    let mut dxt2 = tex("dxt2", 0x300, 0x3254_5844, 4, 4, 16);
    dxt2.flags = 0x8;
    dxt2.levels = vec![vec![0; 16]];
    let mut short = tex("short", 0x500, 21, 2, 2, 32);
    short.levels = vec![vec![0; 8]];
    let mut ok = tex("ok", 0x400, 50, 1, 1, 8);
    ok.levels = vec![vec![9]];
    let r = TxdFile::read(&dictionary(&[dxt2, short, ok])).unwrap();
    assert!(matches!(
        r.file.find("dxt2").unwrap().decode(0),
        Err(TextureDecodeError::UnsupportedFormat { .. })
    ));
    assert!(matches!(
        r.file.find("short").unwrap().decode(0),
        Err(TextureDecodeError::LevelTooShort {
            needed: 16,
            available: 8,
            ..
        })
    ));
    assert!(matches!(
        r.file.find("short").unwrap().decode(1),
        Err(TextureDecodeError::NoLevel {
            level: 1,
            stored: 1
        })
    ));
    check_pixels(&r.file, "ok", &[[9, 9, 9, 255]]);
}

#[test]
fn every_truncation_is_a_typed_error() {
    let textures: Vec<Tex> = plain().into_iter().map(|(t, _)| t).take(4).collect();
    let bytes = dictionary(&textures);
    for n in 0..bytes.len() {
        assert!(TxdFile::read(&bytes[..n]).is_err(), "cut at {n}");
    }
    // A Struct cut inside (every enclosing size adjusted): a level's data cut short.
    let mut t = tex("c", 0x500, 21, 1, 1, 32);
    t.levels = vec![vec![1, 2, 3, 4]];
    let full = dictionary(std::slice::from_ref(&t));
    // The level's size field claims 4 bytes; rebuild with the Struct one byte short.
    for cut in 1..=92 {
        let mut b = full.clone();
        let struct_size_at = 12 + 16 + 12 + 4;
        let size = u32::from_le_bytes(b[struct_size_at..struct_size_at + 4].try_into().unwrap());
        let new = size - cut;
        b[struct_size_at..struct_size_at + 4].copy_from_slice(&new.to_le_bytes());
        let native_size_at = 12 + 16 + 4;
        let ns = u32::from_le_bytes(b[native_size_at..native_size_at + 4].try_into().unwrap());
        b[native_size_at..native_size_at + 4].copy_from_slice(&(ns - cut).to_le_bytes());
        let ds = u32::from_le_bytes(b[4..8].try_into().unwrap());
        b[4..8].copy_from_slice(&(ds - cut).to_le_bytes());
        let start = struct_size_at + 8 + new as usize;
        b.drain(start..start + cut as usize);
        assert!(TxdFile::read(&b).is_err(), "Struct cut by {cut}");
    }
}

#[test]
fn a_huge_level_size_and_a_chunk_larger_than_its_parent_are_refused() {
    let mut t = tex("big", 0x500, 21, 1, 1, 32);
    t.levels = vec![vec![1, 2, 3, 4]];
    let mut bytes = dictionary(std::slice::from_ref(&t));
    // The level size field sits after the 88-byte header: dict (12) + dict Struct (16) +
    // native header (12) + Struct header (12) + 88.
    let at = 12 + 16 + 12 + 12 + 88;
    assert_eq!(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()), 4);
    bytes[at..at + 4].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let e = TxdFile::read(&bytes).unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::Bounds(Bounds::Truncated { needed, .. }) if needed == 1 << 31),
        "{e}"
    );
    assert_eq!(e.path, "TextureDictionary/TextureNative[0]/Struct");

    let mut bytes = dictionary(std::slice::from_ref(&t));
    bytes[12 + 16 + 4..12 + 16 + 8].copy_from_slice(&5000u32.to_le_bytes());
    let e = TxdFile::read(&bytes).unwrap_err();
    assert!(
        matches!(
            e.kind,
            RwErrorKind::ChunkTooLong {
                chunk_type: NATIVE,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.path, "TextureDictionary");

    let mut ps2 = t.clone();
    ps2.platform = 6;
    let e = TxdFile::read(&dictionary(&[ps2])).unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::UnsupportedPlatform { value: 6, .. }),
        "{e}"
    );
}

/// The fuzz oracle holds on the fixtures, every truncation of them and single-byte changes.
#[test]
fn the_fuzz_oracle_holds_on_the_fixtures() {
    let bytes = dictionary(&plain().into_iter().map(|(t, _)| t).collect::<Vec<_>>());
    check_txd(&bytes);
    for n in 0..bytes.len() {
        check_txd(&bytes[..n]);
        let mut changed = bytes.clone();
        changed[n] ^= 0xFF;
        check_txd(&changed);
    }
}

#[test]
fn the_ps2_mipmap_k_value_is_skipped_quietly_and_an_unknown_extension_is_named() {
    // A texture native whose extension holds a Sky Mipmap Val chunk (0x110: the PS2
    // pipeline's mip-map K and L values, 4 bytes, as RenderWare writes it for PS2 textures
    // converted to PC) and a chunk of an unknown type 0x0999: the first is a known
    // RenderWare extension with nothing for rigplay, so it is skipped without a word; the
    // second is reported once, with its type and size.
    let (t, expected) = plain().into_iter().next().unwrap();
    let mut b = Bytes::new();
    b.chunk(DICT, SA, |b| {
        b.chunk(STRUCT, SA, |b| {
            b.u16(1).u16(2);
        });
        b.chunk(NATIVE, SA, |b| {
            b.chunk(STRUCT, SA, |b| {
                b.u32(t.platform).u32(0x1102);
                b.fixed(t.name, 32, &[]).fixed("", 32, &[]);
                b.u32(t.raster).u32(t.format).u16(t.w).u16(t.h);
                b.u8(t.depth).u8(t.levels.len() as u8).u8(4).u8(t.flags);
                b.raw(&t.palette);
                for l in &t.levels {
                    b.u32(l.len() as u32).raw(l);
                }
            });
            b.chunk(EXTENSION, SA, |b| {
                b.chunk(0x110, SA, |b| {
                    b.u32(0x0000_0fc0);
                });
                b.chunk(0x0999, SA, |b| {
                    b.u32(7).u32(8);
                });
            });
        });
        b.chunk(EXTENSION, SA, |_| {});
    });
    let r = TxdFile::read(&b.done()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = r.warnings[0].to_string();
    assert!(w.contains("0x999") && w.contains("8 bytes"), "{w}");
    check_pixels(&r.file, t.name, &expected);
}
