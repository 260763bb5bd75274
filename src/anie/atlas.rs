//! [`ImageAtlas`]: every image of a project packed into one RGBA8 texture, so that a GPU can
//! draw all the layers of a frame (of many rigs) from one texture binding; and [`PixelRect`],
//! the rectangle type the atlas and [`crate::anie::program`] share.
//!
//! The images are packed on shelves (rows), tallest first, without gaps: the sampler honours
//! each image's own rectangle (texels outside it read as the transparent border, §2), so
//! neighbours never bleed into one another.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::collections::HashMap;
use std::fmt;

use glam::Vec2;

use crate::formats::anie::{AnieFile, ResourceRef};

/// A rectangle in pixels: columns `x..x + width`, rows `y..y + height`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PixelRect {
    /// The left column.
    pub x: u32,
    /// The top row.
    pub y: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl PixelRect {
    /// The empty rectangle at the origin.
    pub const EMPTY: Self = Self {
        x: 0,
        y: 0,
        width: 0,
        height: 0,
    };

    /// A rectangle of `width × height` pixels with its top-left at `(x, y)`.
    pub const fn new(x: u32, y: u32, width: u32, height: u32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// The rectangle of columns `x0..x1` and rows `y0..y1` (empty when `x1 ≤ x0` or `y1 ≤ y0`).
    pub(crate) fn from_bounds(x0: u32, y0: u32, x1: u32, y1: u32) -> Self {
        Self {
            x: x0,
            y: y0,
            width: x1.saturating_sub(x0),
            height: y1.saturating_sub(y0),
        }
    }

    /// One past the right column.
    pub fn right(&self) -> u32 {
        self.x.saturating_add(self.width)
    }

    /// One past the bottom row.
    pub fn bottom(&self) -> u32 {
        self.y.saturating_add(self.height)
    }

    /// Whether it holds no pixel.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The number of pixels it holds.
    pub fn area(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Whether the two share at least one pixel (never, if either is empty).
    pub fn intersects(&self, other: &PixelRect) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && self.x < other.right()
            && other.x < self.right()
            && self.y < other.bottom()
            && other.y < self.bottom()
    }

    /// Whether pixel `(x, y)` is inside.
    pub fn contains(&self, x: u32, y: u32) -> bool {
        x >= self.x && x < self.right() && y >= self.y && y < self.bottom()
    }

    /// Whether every pixel of `other` is inside (an empty `other` always is).
    pub fn contains_rect(&self, other: &PixelRect) -> bool {
        other.is_empty()
            || (other.x >= self.x
                && other.right() <= self.right()
                && other.y >= self.y
                && other.bottom() <= self.bottom())
    }

    /// The smallest rectangle holding both; an empty side is ignored.
    pub fn union(&self, other: &PixelRect) -> PixelRect {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        Self::from_bounds(
            self.x.min(other.x),
            self.y.min(other.y),
            self.right().max(other.right()),
            self.bottom().max(other.bottom()),
        )
    }

    /// The pixels a triangle with these vertex positions can cover in a `width × height` target:
    /// the bounding box of the finite coordinates, `floor` of the minimum to `ceil` of the
    /// maximum, clamped to the target. The rasteriser ([`crate::anie::cpu::raster`]) draws a
    /// pixel only when its centre is inside the (1/256 px snapped) triangle, so every drawn
    /// pixel is inside this box. Empty for no (finite) point.
    pub fn covering(points: impl IntoIterator<Item = Vec2>, width: u32, height: u32) -> PixelRect {
        let (mut lo, mut hi) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
        for p in points {
            // `f32::min`/`max` skip NaN (glam's `Vec2::min` need not); a NaN vertex's
            // triangles are not drawn.
            lo = Vec2::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Vec2::new(hi.x.max(p.x), hi.y.max(p.y));
        }
        if !(lo.x <= hi.x && lo.y <= hi.y) {
            return Self::EMPTY;
        }
        // Saturating float → int casts: −∞ → 0, +∞ → the side.
        let clamp = |v: f32, side: u32| (v.max(0.0) as u64).min(u64::from(side)) as u32;
        Self::from_bounds(
            clamp(lo.x.floor(), width),
            clamp(lo.y.floor(), height),
            clamp(hi.x.ceil(), width),
            clamp(hi.y.ceil(), height),
        )
    }
}

/// Why an [`ImageAtlas`] could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtlasError {
    /// The packed images need a texture larger than [`ImageAtlas::MAX_SIDE`] on a side.
    TooLarge {
        /// The width the packing needed.
        needed_width: u32,
        /// The height the packing needed.
        needed_height: u32,
    },
}

impl fmt::Display for AtlasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AtlasError::TooLarge {
                needed_width,
                needed_height,
            } => write!(
                f,
                "the project's images need a {needed_width}×{needed_height} atlas, more than \
                 {max}×{max}",
                max = ImageAtlas::MAX_SIDE
            ),
        }
    }
}

impl std::error::Error for AtlasError {}

/// Every image of a project packed into one RGBA8 texture (straight alpha, bytes as stored).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ImageAtlas {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes, rows top to bottom; pixels outside every image are
    /// transparent black.
    pub rgba: Vec<u8>,
    rects: HashMap<ResourceRef, PixelRect>,
}

impl ImageAtlas {
    /// The largest side of an atlas: a texture side every desktop GPU takes.
    pub const MAX_SIDE: u32 = 8192;

    /// Packs every image of `project` (each [`crate::formats::anie::ResourceNode::image`]).
    ///
    /// Shelf packing: images sorted by height (tallest first; ties in resource order), placed
    /// left to right on shelves as tall as their first image. The shelves are as wide as the
    /// widest image or `ceil(√(total area))`, whichever is larger, so the atlas stays near
    /// square (it is as wide as its widest shelf); if the shelves then come out taller than
    /// [`Self::MAX_SIDE`], the packing is tried again with shelves [`Self::MAX_SIDE`] wide. A project without images gives a 1×1 transparent atlas.
    /// Images whose byte length is not `width × height × 4` are skipped (as
    /// [`crate::anie::cpu::Renderer::new`] skips them). An image with no pixel (a side of 0)
    /// gets an empty rectangle at the origin: it samples as transparent everywhere, as it does
    /// on the CPU.
    pub fn new(project: &AnieFile) -> Result<ImageAtlas, AtlasError> {
        let mut images = Vec::new();
        let mut empty = Vec::new();
        for (t, tree) in project.resources.iter().enumerate() {
            for (n, node) in tree.nodes.iter().enumerate() {
                let Some(image) = &node.image else { continue };
                let len = (image.width as usize)
                    .checked_mul(image.height as usize)
                    .and_then(|n| n.checked_mul(4));
                if len != Some(image.rgba.len()) {
                    continue;
                }
                let resource = ResourceRef { tree: t, node: n };
                if image.width == 0 || image.height == 0 {
                    // Nothing to pack, but it still draws (transparent texels): a clipper with
                    // an empty image writes coverage 0 under its mesh.
                    empty.push((resource, PixelRect::new(0, 0, image.width, image.height)));
                    continue;
                }
                images.push((resource, image));
            }
        }
        // Stable: equal heights keep resource order.
        images.sort_by_key(|(_, image)| std::cmp::Reverse(image.height));
        let sizes: Vec<(u32, u32)> = images.iter().map(|(_, i)| (i.width, i.height)).collect();
        let widest = sizes.iter().map(|s| s.0).max().unwrap_or(1);
        let area: u64 = sizes
            .iter()
            .map(|&(w, h)| u64::from(w) * u64::from(h))
            .sum();
        let square = (area as f64).sqrt().ceil() as u64;
        let width = u64::from(widest).max(square).max(1);
        let (mut width, mut height, mut places) = shelf_pack(&sizes, width);
        if height > u64::from(Self::MAX_SIDE) && width < u64::from(Self::MAX_SIDE) {
            (width, height, places) = shelf_pack(&sizes, u64::from(Self::MAX_SIDE));
        }
        let max = u64::from(Self::MAX_SIDE);
        if width > max || height > max {
            let side = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
            return Err(AtlasError::TooLarge {
                needed_width: side(width),
                needed_height: side(height),
            });
        }
        // Both ≤ 8192 here.
        let (width, height) = (width as u32, (height as u32).max(1));
        let mut rgba = vec![0; width as usize * height as usize * 4];
        let mut rects = HashMap::with_capacity(images.len());
        for ((resource, image), &(x, y)) in images.iter().zip(&places) {
            let rect = PixelRect::new(x, y, image.width, image.height);
            let row = image.width as usize * 4;
            for (r, src) in image.rgba.chunks_exact(row).enumerate() {
                let start = ((y as usize + r) * width as usize + x as usize) * 4;
                rgba[start..start + row].copy_from_slice(src);
            }
            rects.insert(*resource, rect);
        }
        rects.extend(empty);
        Ok(ImageAtlas {
            width,
            height,
            rgba,
            rects,
        })
    }

    /// Where `image` lies in the atlas; `None` for a resource without a (valid) image.
    pub fn rect(&self, image: ResourceRef) -> Option<PixelRect> {
        self.rects.get(&image).copied()
    }

    /// Every packed image and its rectangle, in no particular order.
    pub fn rects(&self) -> impl Iterator<Item = (ResourceRef, PixelRect)> + '_ {
        self.rects.iter().map(|(&r, &p)| (r, p))
    }

    /// The texel at `(x, y)` of the atlas; transparent black outside it.
    pub fn texel(&self, x: u32, y: u32) -> [u8; 4] {
        if x >= self.width || y >= self.height {
            return [0; 4];
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        match self.rgba.get(i..i + 4) {
            Some(p) => [p[0], p[1], p[2], p[3]],
            None => [0; 4],
        }
    }
}

/// Shelf packing of `sizes` (sorted tallest first) into rows `width` wide: the used width, the
/// total height and each image's top-left. An image wider than `width` gets a shelf of its own
/// (and widens the result).
fn shelf_pack(sizes: &[(u32, u32)], width: u64) -> (u64, u64, Vec<(u32, u32)>) {
    let mut places = Vec::with_capacity(sizes.len());
    let (mut x, mut y, mut shelf) = (0u64, 0u64, 0u64);
    let mut used = 0u64;
    for &(w, h) in sizes {
        let (w, h) = (u64::from(w), u64::from(h));
        if x > 0 && x + w > width {
            y += shelf;
            x = 0;
            shelf = 0;
        }
        places.push((
            u32::try_from(x).unwrap_or(u32::MAX),
            u32::try_from(y).unwrap_or(u32::MAX),
        ));
        x += w;
        used = used.max(x);
        shelf = shelf.max(h);
    }
    (used.max(1), y + shelf, places)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_helpers() {
        let a = PixelRect::new(0, 0, 4, 4);
        let b = PixelRect::new(4, 0, 2, 2);
        assert!(!a.intersects(&b));
        assert!(a.intersects(&PixelRect::new(3, 3, 1, 1)));
        assert!(!a.intersects(&PixelRect::new(1, 1, 0, 5)));
        assert_eq!(a.union(&b), PixelRect::new(0, 0, 6, 4));
        assert_eq!(PixelRect::EMPTY.union(&b), b);
        assert_eq!(b.union(&PixelRect::new(9, 9, 0, 0)), b);
        assert!(a.contains_rect(&PixelRect::new(1, 1, 3, 3)));
        assert!(!a.contains_rect(&PixelRect::new(1, 1, 4, 3)));
        assert!(a.contains(3, 3) && !a.contains(4, 3));
        assert_eq!(
            PixelRect::from_bounds(5, 5, 3, 9),
            PixelRect::new(5, 5, 0, 4)
        );
        // (0.5, 1.2) – (3.0, 2.9) → columns 0..3, rows 1..3; clamped to a 2×8 target.
        let pts = [Vec2::new(0.5, 1.2), Vec2::new(3.0, 2.9), Vec2::NAN];
        assert_eq!(PixelRect::covering(pts, 10, 10), PixelRect::new(0, 1, 3, 2));
        assert_eq!(PixelRect::covering(pts, 2, 8), PixelRect::new(0, 1, 2, 2));
        assert_eq!(PixelRect::covering([], 2, 8), PixelRect::EMPTY);
        let far = [Vec2::splat(-1e30), Vec2::splat(f32::INFINITY)];
        assert_eq!(PixelRect::covering(far, 2, 8), PixelRect::new(0, 0, 2, 8));
        assert!(PixelRect::covering([Vec2::splat(-5.0), Vec2::splat(-1.0)], 2, 8).is_empty());
    }

    #[test]
    fn shelves() {
        // Width 5: 3×3 at (0,0), 2×2 at (3,0); 4×1 does not fit beside → (0,3).
        let (w, h, places) = shelf_pack(&[(3, 3), (2, 2), (4, 1)], 5);
        assert_eq!((w, h), (5, 4));
        assert_eq!(places, vec![(0, 0), (3, 0), (0, 3)]);
    }
}
