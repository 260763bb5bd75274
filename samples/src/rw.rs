//! A small RenderWare writer for the sample files: chunks (`docs/formats/dff.md` §1.1), D3D9
//! texture dictionaries (§5) and DXT1/DXT5 block encoders (§5.5).
//!
//! It lives here, not in the library, on purpose: rigplay only reads DFF and TXD. It writes
//! what the samples need and nothing more (no old-version layouts, no palettes).

/// The library ID stamp of RW 3.6.0.3 with build 0xFFFF, as on every SA file (§1.2).
pub const STAMP_SA: u32 = 0x1803_FFFF;

/// Chunk type IDs (§1.3).
pub mod id {
    /// Struct.
    pub const STRUCT: u32 = 0x01;
    /// String.
    pub const STRING: u32 = 0x02;
    /// Extension.
    pub const EXTENSION: u32 = 0x03;
    /// Texture.
    pub const TEXTURE: u32 = 0x06;
    /// Material.
    pub const MATERIAL: u32 = 0x07;
    /// Material List.
    pub const MATERIAL_LIST: u32 = 0x08;
    /// Frame List.
    pub const FRAME_LIST: u32 = 0x0E;
    /// Geometry.
    pub const GEOMETRY: u32 = 0x0F;
    /// Clump.
    pub const CLUMP: u32 = 0x10;
    /// Atomic.
    pub const ATOMIC: u32 = 0x14;
    /// Texture Native.
    pub const TEXTURE_NATIVE: u32 = 0x15;
    /// Texture Dictionary.
    pub const TEXTURE_DICTIONARY: u32 = 0x16;
    /// Geometry List.
    pub const GEOMETRY_LIST: u32 = 0x1A;
    /// Right To Render.
    pub const RIGHT_TO_RENDER: u32 = 0x1F;
    /// Skin PLG.
    pub const SKIN: u32 = 0x116;
    /// HAnim PLG.
    pub const HANIM: u32 = 0x11E;
    /// Bin Mesh PLG.
    pub const BIN_MESH: u32 = 0x50E;
    /// Breakable (Rockstar).
    pub const BREAKABLE: u32 = 0x253F2FD;
    /// Frame (node name, Rockstar).
    pub const FRAME_NAME: u32 = 0x253F2FE;
}

/// Little-endian bytes of a chunk payload being assembled.
#[derive(Debug, Default, Clone)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    /// Appends a u16.
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends a u32.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an i32.
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends an f32.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Appends f32s.
    pub fn f32s(&mut self, v: &[f32]) -> &mut Self {
        for &x in v {
            self.f32(x);
        }
        self
    }
    /// Appends raw bytes.
    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
    /// Appends `text` in a fixed field of `n` bytes, NUL padded (truncated to `n − 1`).
    pub fn fixed_str(&mut self, text: &str, n: usize) -> &mut Self {
        let b = text.as_bytes();
        let len = b.len().min(n - 1);
        self.0.extend_from_slice(&b[..len]);
        self.0.resize(self.0.len() + n - len, 0);
        self
    }
    /// Appends a chunk: header (type, payload size, [`STAMP_SA`]) and the payload `body` writes.
    pub fn chunk(&mut self, chunk_type: u32, body: impl FnOnce(&mut Bytes)) -> &mut Self {
        self.chunk_stamped(chunk_type, STAMP_SA, body)
    }
    /// [`Bytes::chunk`] with another library ID stamp (another RenderWare version, §1.2).
    pub fn chunk_stamped(
        &mut self,
        chunk_type: u32,
        stamp: u32,
        body: impl FnOnce(&mut Bytes),
    ) -> &mut Self {
        let mut inner = Bytes::new();
        body(&mut inner);
        self.u32(chunk_type)
            .u32(inner.0.len() as u32)
            .u32(stamp)
            .raw(&inner.0)
    }
    /// Appends a String chunk (§3.5): the text, a NUL, padded with NULs to a multiple of 4.
    pub fn string_chunk(&mut self, text: &str) -> &mut Self {
        self.chunk(id::STRING, |b| {
            b.raw(text.as_bytes());
            let n = (text.len() + 1).next_multiple_of(4);
            b.0.resize(b.0.len() + n - text.len(), 0);
        })
    }
}

/// An RGBA8 image, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// R, G, B, A bytes, row-major.
    pub pixels: Vec<[u8; 4]>,
}

impl Image {
    /// An image from a function of (x, y).
    pub fn from_fn(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Self {
        let pixels = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| f(x, y))
            .collect();
        Self {
            width,
            height,
            pixels,
        }
    }

    /// The pixel at (x, y).
    pub fn get(&self, x: u32, y: u32) -> [u8; 4] {
        self.pixels[(y * self.width + x) as usize]
    }

    /// The next mip level: half the size (at least 1), each pixel the mean of a 2×2 box.
    pub fn half(&self) -> Image {
        let (w, h) = ((self.width / 2).max(1), (self.height / 2).max(1));
        Image::from_fn(w, h, |x, y| {
            let mut sum = [0u32; 4];
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let p = self.get(
                    (2 * x + dx).min(self.width - 1),
                    (2 * y + dy).min(self.height - 1),
                );
                for c in 0..4 {
                    sum[c] += u32::from(p[c]);
                }
            }
            sum.map(|s| ((s + 2) / 4) as u8)
        })
    }

    /// This image and its mip levels down to 1×1, at most `levels` of them.
    pub fn mip_chain(&self, levels: usize) -> Vec<Image> {
        let mut out = vec![self.clone()];
        while out.len() < levels {
            let last = out.last().expect("one level");
            if last.width == 1 && last.height == 1 {
                break;
            }
            out.push(last.half());
        }
        out
    }

    /// The 16 texels of the 4×4 block at block (bx, by), edge texels repeated past the border.
    fn block(&self, bx: u32, by: u32) -> [[u8; 4]; 16] {
        std::array::from_fn(|t| {
            let (x, y) = (bx * 4 + t as u32 % 4, by * 4 + t as u32 / 4);
            self.get(x.min(self.width - 1), y.min(self.height - 1))
        })
    }
}

fn to_565(c: [u8; 4]) -> u16 {
    let q = |v: u8, max: u16| (u16::from(v) * max + 127) / 255;
    (q(c[0], 31) << 11) | (q(c[1], 63) << 5) | q(c[2], 31)
}

fn from_565(v: u16) -> [i32; 3] {
    let (r, g, b) = (
        i32::from(v >> 11),
        i32::from((v >> 5) & 63),
        i32::from(v & 31),
    );
    [
        (r << 3) | (r >> 2),
        (g << 2) | (g >> 4),
        (b << 3) | (b >> 2),
    ]
}

fn dist2(a: [i32; 3], b: [u8; 4]) -> i32 {
    (0..3).map(|c| (a[c] - i32::from(b[c])).pow(2)).sum()
}

/// One DXT colour block (8 bytes) in 4-colour mode (c0 > c1), or a flat block (c0 == c1,
/// index 0 only) (§5.5): the endpoints are the two texels farthest apart, each texel takes the
/// nearest of the four palette colours.
fn colour_block(texels: &[[u8; 4]; 16], out: &mut Vec<u8>) {
    let (mut a, mut b, mut best) = (0, 0, -1);
    for i in 0..16 {
        for j in i + 1..16 {
            let d: i32 = (0..3)
                .map(|c| (i32::from(texels[i][c]) - i32::from(texels[j][c])).pow(2))
                .sum();
            if d > best {
                (a, b, best) = (i, j, d);
            }
        }
    }
    let (mut c0, mut c1) = (to_565(texels[a]), to_565(texels[b]));
    if c0 < c1 {
        std::mem::swap(&mut c0, &mut c1);
    }
    let mut indices = 0u32;
    if c0 != c1 {
        let (p0, p1) = (from_565(c0), from_565(c1));
        let palette = [
            p0,
            p1,
            std::array::from_fn(|c| (2 * p0[c] + p1[c]) / 3),
            std::array::from_fn(|c| (p0[c] + 2 * p1[c]) / 3),
        ];
        for (t, texel) in texels.iter().enumerate() {
            let k = (0..4)
                .min_by_key(|&k| dist2(palette[k], *texel))
                .unwrap_or(0);
            indices |= (k as u32) << (2 * t);
        }
    }
    out.extend_from_slice(&c0.to_le_bytes());
    out.extend_from_slice(&c1.to_le_bytes());
    out.extend_from_slice(&indices.to_le_bytes());
}

/// One DXT5 alpha block (8 bytes) in 8-alpha mode (a0 > a1), or flat (a0 == a1) (§5.5).
fn alpha_block(texels: &[[u8; 4]; 16], out: &mut Vec<u8>) {
    let a0 = texels.iter().map(|t| t[3]).max().unwrap_or(255);
    let a1 = texels.iter().map(|t| t[3]).min().unwrap_or(255);
    let mut bits = 0u64;
    if a0 > a1 {
        let (h, l) = (u32::from(a0), u32::from(a1));
        let palette: [u32; 8] = std::array::from_fn(|i| match i {
            0 => h,
            1 => l,
            i => ((8 - i as u32) * h + (i as u32 - 1) * l) / 7,
        });
        for (t, texel) in texels.iter().enumerate() {
            let k = (0..8)
                .min_by_key(|&k| palette[k].abs_diff(u32::from(texel[3])))
                .unwrap_or(0);
            bits |= (k as u64) << (3 * t);
        }
    }
    out.push(a0);
    out.push(a1);
    out.extend_from_slice(&bits.to_le_bytes()[..6]);
}

/// DXT1 blocks of an image (opaque: 4-colour mode only), blocks left to right, top to bottom.
pub fn encode_dxt1(image: &Image) -> Vec<u8> {
    let (bw, bh) = (image.width.div_ceil(4), image.height.div_ceil(4));
    let mut out = Vec::with_capacity((bw * bh * 8) as usize);
    for by in 0..bh {
        for bx in 0..bw {
            colour_block(&image.block(bx, by), &mut out);
        }
    }
    out
}

/// DXT5 blocks of an image: an alpha block then a colour block per 4×4 texels.
pub fn encode_dxt5(image: &Image) -> Vec<u8> {
    let (bw, bh) = (image.width.div_ceil(4), image.height.div_ceil(4));
    let mut out = Vec::with_capacity((bw * bh * 16) as usize);
    for by in 0..bh {
        for bx in 0..bw {
            let texels = image.block(bx, by);
            alpha_block(&texels, &mut out);
            colour_block(&texels, &mut out);
        }
    }
    out
}

/// How a texture of a sample TXD is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexFormat {
    /// DXT1, no alpha (raster 565, FourCC `DXT1`).
    Dxt1,
    /// DXT5 (raster 4444, FourCC `DXT5`, alpha).
    Dxt5,
    /// B8 G8 R8 A8 (raster 8888, D3DFORMAT 21, alpha).
    Bgra8888,
}

/// A texture to write: name, format, and its levels (level 0 first).
#[derive(Debug, Clone)]
pub struct TexSpec<'a> {
    /// The texture name (≤ 31 bytes).
    pub name: &'a str,
    /// The storage format.
    pub format: TexFormat,
    /// The levels, each half the size of the one before.
    pub levels: &'a [Image],
}

/// A D3D9 (platform 9) texture dictionary of SA's layout (§5.1, §5.2): device 2, one Texture
/// Native per texture with an empty Extension, filter 0x1106 (linear mip-linear, wrap).
pub fn txd_bytes(textures: &[TexSpec<'_>]) -> Vec<u8> {
    let mut b = Bytes::new();
    b.chunk(id::TEXTURE_DICTIONARY, |b| {
        b.chunk(id::STRUCT, |b| {
            b.u16(textures.len() as u16).u16(2);
        });
        for t in textures {
            b.chunk(id::TEXTURE_NATIVE, |b| {
                b.chunk(id::STRUCT, |b| texture_native(b, t));
                b.chunk(id::EXTENSION, |_| {});
            });
        }
        b.chunk(id::EXTENSION, |_| {});
    });
    b.0
}

fn texture_native(b: &mut Bytes, t: &TexSpec<'_>) {
    let mips = if t.levels.len() > 1 { 0x8000 } else { 0 };
    let (raster, format_word, depth, flags) = match t.format {
        TexFormat::Dxt1 => (0x200, rigplay::formats::txd::FOURCC_DXT1, 16, 0x8),
        TexFormat::Dxt5 => (0x300, rigplay::formats::txd::FOURCC_DXT5, 16, 0x9),
        TexFormat::Bgra8888 => (0x500, 21, 32, 0x1),
    };
    let top = &t.levels[0];
    b.u32(9).u32(0x1106).fixed_str(t.name, 32).fixed_str("", 32);
    b.u32(raster | mips).u32(format_word);
    b.u16(top.width as u16).u16(top.height as u16);
    b.u8(depth).u8(t.levels.len() as u8).u8(4).u8(flags);
    for level in t.levels {
        let data = match t.format {
            TexFormat::Dxt1 => encode_dxt1(level),
            TexFormat::Dxt5 => encode_dxt5(level),
            TexFormat::Bgra8888 => level
                .pixels
                .iter()
                .flat_map(|p| [p[2], p[1], p[0], p[3]])
                .collect(),
        };
        b.u32(data.len() as u32).raw(&data);
    }
}
