//! The RGBA8 image the CPU renderer draws into and samples its textures from.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

/// An RGBA8 image, rows top to bottom, straight alpha (the `.anie` pixel format, §2).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height` pixels, row-major.
    pub pixels: Vec<[u8; 4]>,
}

impl RgbaImage {
    /// A transparent black image (the exporter's clear colour). Allocates `width × height`
    /// pixels.
    pub fn new(width: u32, height: u32) -> Self {
        Self::filled(width, height, [0; 4])
    }

    /// An image of one colour.
    pub fn filled(width: u32, height: u32, pixel: [u8; 4]) -> Self {
        Self {
            width,
            height,
            pixels: vec![pixel; width as usize * height as usize],
        }
    }

    /// An image from packed RGBA bytes, or `None` if the length is not `4·width·height`.
    pub fn from_rgba8(width: u32, height: u32, bytes: &[u8]) -> Option<Self> {
        let len = (width as usize)
            .checked_mul(height as usize)
            .and_then(|n| n.checked_mul(4))?;
        if bytes.len() != len {
            return None;
        }
        let pixels = bytes
            .chunks_exact(4)
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect();
        Some(Self {
            width,
            height,
            pixels,
        })
    }

    /// Packed RGBA bytes.
    pub fn to_rgba8(&self) -> Vec<u8> {
        self.pixels.iter().flatten().copied().collect()
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        let x = u64::try_from(x)
            .ok()
            .filter(|&x| x < u64::from(self.width))?;
        let y = u64::try_from(y)
            .ok()
            .filter(|&y| y < u64::from(self.height))?;
        // < 2³² · 2³², so no overflow; out of `pixels` (inconsistent fields) → None later.
        usize::try_from(y * u64::from(self.width) + x).ok()
    }

    /// The pixel at `(x, y)`; transparent black outside the image (the texture border).
    pub fn get(&self, x: i64, y: i64) -> [u8; 4] {
        self.index(x, y)
            .and_then(|i| self.pixels.get(i))
            .copied()
            .unwrap_or([0; 4])
    }

    /// The pixel at `(x, y)` for writing, if inside.
    pub fn get_mut(&mut self, x: i64, y: i64) -> Option<&mut [u8; 4]> {
        let i = self.index(x, y)?;
        self.pixels.get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anie::cpu::raster::sample_bilinear;
    use glam::{Vec2, Vec4};

    #[test]
    fn image_helpers() {
        assert!(RgbaImage::from_rgba8(2, 2, &[0; 15]).is_none());
        let img = RgbaImage::from_rgba8(1, 2, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(img.get(0, 1), [5, 6, 7, 8]);
        assert_eq!(img.get(1, 0), [0; 4]);
        assert_eq!(img.get(-1, 0), [0; 4]);
        assert_eq!(img.to_rgba8(), vec![1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(RgbaImage::from_rgba8(u32::MAX, u32::MAX, &[]).is_none());
        // Fields that disagree with the pixel buffer read as transparent, never panic.
        let mut odd = RgbaImage::new(1, 1);
        odd.width = u32::MAX;
        odd.height = u32::MAX;
        assert_eq!(
            odd.get(i64::from(u32::MAX) - 1, i64::from(u32::MAX) - 1),
            [0; 4]
        );
        assert!(odd.get_mut(5, 5).is_none());
        assert_eq!(sample_bilinear(&odd, Vec2::splat(0.5)), Vec4::ZERO);
    }
}
