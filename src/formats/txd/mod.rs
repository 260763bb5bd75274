//! RenderWare TXD texture dictionaries of GTA III, Vice City (D3D8) and San Andreas (D3D9) on
//! PC (§5).
//!
//! [`TxdFile::read`] walks the chunk tree and keeps every texture native's header, palette and
//! mip levels as stored; [`TextureNative::decode`] turns one level into RGBA8, for the raster
//! formats 8888, 888, 1555, 555, 565, 4444, LUM8, A8L8, 8- and 4-bit palettes, DXT1 (with its
//! 1-bit alpha), DXT3 and DXT5 (§5.3–§5.5). A texture whose format is not supported gives a
//! [`TextureDecodeError`] of its own; the dictionary still reads.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

mod decode;
mod read;

pub use crate::formats::rw::{RwError, RwErrorKind, RwWarning, RwWarningKind};
pub use read::TxdRead;

/// A texture dictionary (§5.1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TxdFile {
    /// The device ID of the dictionary Struct (1 D3D8, 2 D3D9, 6 PS2, 8 Xbox).
    pub device_id: u16,
    /// The textures, in file order.
    pub textures: Vec<TextureNative>,
}

/// One texture native: its 88-byte header (§5.2), palette and levels, as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextureNative {
    /// 8 = D3D8 (III/VC), 9 = D3D9 (SA).
    pub platform: u32,
    /// Filter mode and addressing (as a material texture's, §3.5).
    pub filter_addressing: u32,
    /// The texture name, cut at the first NUL.
    pub name: String,
    /// The mask (alpha) name, usually empty.
    pub mask: String,
    /// The raster format word (§5.3).
    pub raster_format: u32,
    /// Offset 76: D3D8 hasAlpha (bool32); D3D9 the D3DFORMAT (a FourCC or a number, §5.4).
    pub format_word: u32,
    /// Width of level 0 in pixels.
    pub width: u16,
    /// Height of level 0 in pixels.
    pub height: u16,
    /// Bits per pixel.
    pub depth: u8,
    /// Mip levels as stored in the header.
    pub num_levels: u8,
    /// Raster type (4 = texture).
    pub raster_type: u8,
    /// D3D8: compression (0 none, 1 DXT1, 3 DXT3, 5 DXT5). D3D9: flags (0x1 alpha, 0x2 cube
    /// map, 0x4 auto-mipmap, 0x8 compressed).
    pub compression_or_flags: u8,
    /// Palette entries R, G, B, A (256 for PAL8; 16 or 32 for PAL4), empty otherwise.
    pub palette: Vec<[u8; 4]>,
    /// The level data, level 0 first.
    pub levels: Vec<Vec<u8>>,
}

/// Raster format bits (§5.3).
pub mod raster {
    /// Mask of the pixel format bits.
    pub const PIXEL_MASK: u32 = 0xF00;
    /// A1 R5 G5 B5.
    pub const C1555: u32 = 0x100;
    /// R5 G6 B5.
    pub const C565: u32 = 0x200;
    /// A4 R4 G4 B4.
    pub const C4444: u32 = 0x300;
    /// 8-bit luminance.
    pub const LUM8: u32 = 0x400;
    /// A8 R8 G8 B8.
    pub const C8888: u32 = 0x500;
    /// X8 R8 G8 B8.
    pub const C888: u32 = 0x600;
    /// X1 R5 G5 B5.
    pub const C555: u32 = 0xA00;
    /// The game may generate mip levels.
    pub const AUTO_MIPMAP: u32 = 0x1000;
    /// 8-bit palette.
    pub const PAL8: u32 = 0x2000;
    /// 4-bit palette.
    pub const PAL4: u32 = 0x4000;
    /// Mip levels are stored.
    pub const MIPMAP: u32 = 0x8000;
}

/// The D3D9 FourCC of DXT1.
pub const FOURCC_DXT1: u32 = 0x3154_5844;
/// The D3D9 FourCC of DXT3.
pub const FOURCC_DXT3: u32 = 0x3354_5844;
/// The D3D9 FourCC of DXT5.
pub const FOURCC_DXT5: u32 = 0x3554_5844;

/// How a texture's pixels are stored (§5.3–§5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// 32-bit B, G, R, A bytes.
    Bgra8888,
    /// 32-bit B, G, R, X bytes (alpha 255); 24-bit B, G, R when the depth is 24.
    Bgrx8888,
    /// 16-bit R5 G6 B5.
    Rgb565,
    /// 16-bit A1 R5 G5 B5.
    Argb1555,
    /// 16-bit X1 R5 G5 B5.
    Xrgb1555,
    /// 16-bit A4 R4 G4 B4.
    Argb4444,
    /// 8-bit luminance.
    Lum8,
    /// 16-bit luminance (low byte) and alpha (high byte).
    Lum8Alpha8,
    /// 8-bit palette indices.
    Pal8,
    /// 4-bit palette indices (one per byte, or two per byte high nibble first).
    Pal4,
    /// DXT1 (BC1), with 1-bit alpha in its 3-colour mode.
    Dxt1,
    /// DXT3 (BC2), explicit 4-bit alpha.
    Dxt3,
    /// DXT5 (BC3), interpolated alpha.
    Dxt5,
}

/// An image decoded to RGBA8, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height` pixels of R, G, B, A bytes, row-major.
    pub pixels: Vec<u8>,
}

/// Why one texture (or one of its levels) cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextureDecodeError {
    /// A raster format, D3D format or compression this decoder does not handle.
    #[error(
        "unsupported texture format: raster {raster_format:#x}, format word {format_word:#x}, compression/flags {compression_or_flags:#x}"
    )]
    UnsupportedFormat {
        /// The raster format word.
        raster_format: u32,
        /// The word at offset 76.
        format_word: u32,
        /// The byte at offset 87.
        compression_or_flags: u8,
    },
    /// The level is not stored.
    #[error("level {level} is not stored ({stored} levels)")]
    NoLevel {
        /// The level asked for.
        level: usize,
        /// How many are stored.
        stored: usize,
    },
    /// The level's data is shorter than its size and format need.
    #[error("level {level} has {available} bytes; {width}×{height} needs {needed}")]
    LevelTooShort {
        /// The level.
        level: usize,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The bytes it needs.
        needed: u64,
        /// The bytes stored.
        available: u64,
    },
    /// A palette too short for the format.
    #[error("palette of {entries} entries; {needed} needed")]
    PaletteTooShort {
        /// Entries stored.
        entries: usize,
        /// Entries needed.
        needed: usize,
    },
}

impl TextureNative {
    /// How the pixels are stored: D3D9 FourCC or D3D8 compression first, then the palette
    /// bits, then the raster pixel bits, then (D3D9) the D3DFORMAT number (§5.3, §5.4).
    pub fn pixel_format(&self) -> Result<PixelFormat, TextureDecodeError> {
        let unsupported = || TextureDecodeError::UnsupportedFormat {
            raster_format: self.raster_format,
            format_word: self.format_word,
            compression_or_flags: self.compression_or_flags,
        };
        if self.platform == 9 {
            match self.format_word {
                FOURCC_DXT1 => return Ok(PixelFormat::Dxt1),
                FOURCC_DXT3 => return Ok(PixelFormat::Dxt3),
                FOURCC_DXT5 => return Ok(PixelFormat::Dxt5),
                _ if self.compression_or_flags & 0x8 != 0 => return Err(unsupported()),
                _ => {}
            }
        } else {
            match self.compression_or_flags {
                0 => {}
                1 => return Ok(PixelFormat::Dxt1),
                3 => return Ok(PixelFormat::Dxt3),
                5 => return Ok(PixelFormat::Dxt5),
                _ => return Err(unsupported()),
            }
        }
        if self.raster_format & raster::PAL8 != 0 {
            return Ok(PixelFormat::Pal8);
        }
        if self.raster_format & raster::PAL4 != 0 {
            return Ok(PixelFormat::Pal4);
        }
        Ok(match self.raster_format & raster::PIXEL_MASK {
            raster::C8888 => PixelFormat::Bgra8888,
            raster::C888 => PixelFormat::Bgrx8888,
            raster::C565 => PixelFormat::Rgb565,
            raster::C1555 => PixelFormat::Argb1555,
            raster::C555 => PixelFormat::Xrgb1555,
            raster::C4444 => PixelFormat::Argb4444,
            raster::LUM8 => PixelFormat::Lum8,
            _ if self.platform == 9 => match self.format_word {
                21 => PixelFormat::Bgra8888,
                22 => PixelFormat::Bgrx8888,
                23 => PixelFormat::Rgb565,
                24 => PixelFormat::Xrgb1555,
                25 => PixelFormat::Argb1555,
                26 => PixelFormat::Argb4444,
                50 => PixelFormat::Lum8,
                51 => PixelFormat::Lum8Alpha8,
                _ => return Err(unsupported()),
            },
            _ => return Err(unsupported()),
        })
    }

    /// The size of a mip level: `max(1, w >> i)` × `max(1, h >> i)` (§5.2).
    pub fn level_size(&self, level: usize) -> (u32, u32) {
        let shift = level.min(31) as u32;
        (
            (u32::from(self.width) >> shift).max(1),
            (u32::from(self.height) >> shift).max(1),
        )
    }

    /// Decodes one level to RGBA8 (§5.5).
    pub fn decode(&self, level: usize) -> Result<RgbaImage, TextureDecodeError> {
        let format = self.pixel_format()?;
        let data = self.levels.get(level).ok_or(TextureDecodeError::NoLevel {
            level,
            stored: self.levels.len(),
        })?;
        let (width, height) = self.level_size(level);
        decode::decode(self, format, level, width, height, data)
    }

    /// Decodes every stored level.
    pub fn decode_all(&self) -> Vec<Result<RgbaImage, TextureDecodeError>> {
        (0..self.levels.len()).map(|l| self.decode(l)).collect()
    }
}

impl TxdFile {
    /// The texture with this name, compared case-insensitively (§3.5).
    pub fn find(&self, name: &str) -> Option<&TextureNative> {
        self.textures
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }
}
