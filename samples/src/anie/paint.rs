//! Drawing layer images by code: anti-aliased shapes from signed distances, gradients and
//! checkers, composited in premultiplied float and stored as the `.anie` pixel format (RGBA8,
//! straight alpha, rows top to bottom; spec §2).

use glam::{Vec2, Vec4};

use rigplay::formats::anie::{IRect, Image};

/// An sRGB colour with straight alpha, channels in `[0, 1]`.
pub type Rgba = Vec4;

/// An opaque colour from 8-bit channels.
pub fn rgb(r: u8, g: u8, b: u8) -> Rgba {
    rgba(r, g, b, 255)
}

/// A colour from 8-bit channels, straight alpha.
pub fn rgba(r: u8, g: u8, b: u8, a: u8) -> Rgba {
    Vec4::new(r as f32, g as f32, b as f32, a as f32) / 255.0
}

/// `a` mixed toward `b` by `t` (per channel).
pub fn mix(a: Rgba, b: Rgba, t: f32) -> Rgba {
    a + (b - a) * t
}

/// A fully saturated colour of hue `h` (turns, any real), value `v`, saturation `s`.
pub fn hsv(h: f32, s: f32, v: f32) -> Rgba {
    let h = h.rem_euclid(1.0) * 6.0;
    let c = v * s;
    let x = c * (1.0 - ((h % 2.0) - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    Vec4::new(r + m, g + m, b + m, 1.0)
}

/// Signed distances (negative inside), in pixels.
pub mod sdf {
    use glam::Vec2;

    /// A disc of radius `r` about `c`.
    pub fn circle(p: Vec2, c: Vec2, r: f32) -> f32 {
        (p - c).length() - r
    }

    /// A segment from `a` to `b` thickened by `r` (a capsule).
    pub fn capsule(p: Vec2, a: Vec2, b: Vec2, r: f32) -> f32 {
        let ab = b - a;
        let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
        (p - (a + ab * t)).length() - r
    }

    /// An axis-aligned box of half size `half` about `c` with corners rounded by `r`.
    pub fn rounded_box(p: Vec2, c: Vec2, half: Vec2, r: f32) -> f32 {
        let q = (p - c).abs() - half + Vec2::splat(r);
        q.max(Vec2::ZERO).length() + q.x.max(q.y).min(0.0) - r
    }

    /// An axis-aligned ellipse with semi-axes `r` about `c` (a close approximation: the
    /// distance of the scaled point, times the smaller semi-axis; exact on the axes).
    pub fn ellipse(p: Vec2, c: Vec2, r: Vec2) -> f32 {
        let q = (p - c) / r;
        let k = q.length();
        if k == 0.0 {
            return -r.min_element();
        }
        // First-order correction: value / |gradient|.
        let grad = (q / (r * k)).length();
        (k - 1.0) / grad
    }

    /// A simple polygon (either winding): distance to the nearest edge, negative inside
    /// (even-odd rule).
    pub fn polygon(p: Vec2, points: &[Vec2]) -> f32 {
        let n = points.len();
        let mut d = f32::MAX;
        let mut inside = false;
        for i in 0..n {
            let a = points[i];
            let b = points[(i + 1) % n];
            let ab = b - a;
            let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            d = d.min((p - (a + ab * t)).length());
            if (a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) / (b.y - a.y) * ab.x {
                inside = !inside;
            }
        }
        if inside { -d } else { d }
    }
}

/// A layer image being painted, addressed in canvas pixels: pixel `(i, j)` of the image
/// covers canvas `[x + i, x + i + 1) × [y + j, y + j + 1)` and is sampled at its centre.
#[derive(Clone, Debug)]
pub struct Painter {
    rect: IRect,
    /// Premultiplied colour per pixel.
    px: Vec<Vec4>,
}

impl Painter {
    /// A transparent image covering `rect` of the canvas.
    pub fn new(rect: IRect) -> Self {
        let n = (rect.width.max(0) * rect.height.max(0)) as usize;
        Self {
            rect,
            px: vec![Vec4::ZERO; n],
        }
    }

    /// A transparent image of the given size whose top-left sits at canvas `(x, y)`.
    pub fn at(x: i32, y: i32, width: i32, height: i32) -> Self {
        Self::new(IRect {
            x,
            y,
            width,
            height,
        })
    }

    /// The canvas rectangle this image covers.
    pub fn rect(&self) -> IRect {
        self.rect
    }

    /// Paints `colour(p)` over the image where `dist(p) < 0`, with one pixel of anti-aliasing
    /// across the edge (coverage `clamp(½ − dist, 0, 1)` at each pixel centre `p`).
    pub fn fill(&mut self, dist: impl Fn(Vec2) -> f32, colour: impl Fn(Vec2) -> Rgba) {
        let IRect { x, y, width, .. } = self.rect;
        for (i, px) in self.px.iter_mut().enumerate() {
            let p = Vec2::new(
                (x + i as i32 % width) as f32 + 0.5,
                (y + i as i32 / width) as f32 + 0.5,
            );
            let coverage = (0.5 - dist(p)).clamp(0.0, 1.0);
            if coverage <= 0.0 {
                continue;
            }
            let c = colour(p);
            let a = c.w * coverage;
            let src = (c.truncate() * a).extend(a);
            *px = src + *px * (1.0 - a);
        }
    }

    /// [`Painter::fill`] with one colour.
    pub fn fill_solid(&mut self, dist: impl Fn(Vec2) -> f32, colour: Rgba) {
        self.fill(dist, |_| colour);
    }

    /// Paints an outline of width `width` centred on the edge of `dist`.
    pub fn stroke(&mut self, dist: impl Fn(Vec2) -> f32, width: f32, colour: Rgba) {
        self.fill(|p| dist(p).abs() - width * 0.5, |_| colour);
    }

    /// The image in the `.anie` format: RGBA8, straight alpha. Fully transparent pixels take
    /// the colour of their painted neighbours (two rings), as AnimeEffects' PSD import does
    /// (spec Addendum 3), so that bilinear filtering does not darken edges.
    pub fn into_image(self) -> Image {
        let (w, h) = (self.rect.width as usize, self.rect.height as usize);
        let mut straight: Vec<Vec4> = self
            .px
            .iter()
            .map(|p| {
                if p.w > 0.0 {
                    (p.truncate() / p.w).extend(p.w)
                } else {
                    Vec4::ZERO
                }
            })
            .collect();
        let mut known: Vec<bool> = self.px.iter().map(|p| to_u8(p.w) > 0).collect();
        for _ in 0..2 {
            let mut next = straight.clone();
            let mut next_known = known.clone();
            for j in 0..h {
                for i in 0..w {
                    if known[j * w + i] {
                        continue;
                    }
                    let (mut sum, mut n) = (Vec4::ZERO, 0.0);
                    for (di, dj) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                        let (ni, nj) = (i as i64 + di, j as i64 + dj);
                        if ni < 0 || nj < 0 || ni >= w as i64 || nj >= h as i64 {
                            continue;
                        }
                        let k = nj as usize * w + ni as usize;
                        if known[k] {
                            sum += straight[k].truncate().extend(0.0);
                            n += 1.0;
                        }
                    }
                    if n > 0.0 {
                        next[j * w + i] = (sum / n).truncate().extend(0.0);
                        next_known[j * w + i] = true;
                    }
                }
            }
            straight = next;
            known = next_known;
        }
        let rgba = straight
            .iter()
            .flat_map(|p| [to_u8(p.x), to_u8(p.y), to_u8(p.z), to_u8(p.w)])
            .collect();
        Image {
            width: w as u32,
            height: h as u32,
            rgba,
        }
    }
}

/// A channel in `[0, 1]` as 8 bits, rounded.
pub fn to_u8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}
