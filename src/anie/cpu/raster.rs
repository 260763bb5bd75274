//! A small exact CPU rasteriser for textured triangle meshes (§2 texture rules, §4.5 step 5,
//! §4.9), for a reference renderer that compares with AnimeEffects' RGBA8 framebuffer.
//!
//! Rules, and why:
//! * **Pixel centres.** Pixel `(x, y)` covers `[x, x+1) × [y, y+1)` in canvas pixels (+y down)
//!   and is drawn iff its centre `(x + ½, y + ½)` is inside the triangle: OpenGL's rule. So a
//!   4×4 quad from (8, 8) to (12, 12) covers pixels 8..=11 (Addendum 2).
//! * **Exact coverage.** Vertex positions are snapped to 1/256 px (8 sub-pixel bits, as Mesa's
//!   llvmpipe, which made the reference renders, does), and the edge functions are evaluated in
//!   integers, so coverage has no rounding error.
//! * **Top-left fill rule.** A centre exactly on an edge belongs to the triangle only if that
//!   edge is a *top* edge (horizontal, the triangle below it) or a *left* edge (the triangle to
//!   its right), in canvas coordinates. Two triangles sharing an edge therefore never both draw a
//!   pixel, and never both skip one; this matters because every fragment is blended. It is the
//!   GL/D3D convention: AnimeEffects' view `ortho(0, W, H, 0)` puts canvas y = 0 at the top of
//!   GL's window, so GL's top-left and the canvas' top-left are the same edges. Only which of
//!   two triangles gets a seam pixel depends on this choice; texture coordinates are continuous
//!   across the seam, so the picture does not.
//! * **Either winding.** AnimeEffects does not cull, so clockwise and counter-clockwise
//!   triangles both draw. Degenerate (zero-area after snapping) triangles draw nothing.
//! * **Attributes.** UVs are interpolated with barycentric weights at the pixel centre from the
//!   unsnapped positions, in `f64` (orthographic: no perspective division).
//! * **Texture sampling** ([`sample_bilinear`]): `GL_LINEAR`, no mipmaps, clamp-to-border with
//!   a transparent border (§2): texels outside the image are `(0, 0, 0, 0)`. Straight-alpha
//!   texels are filtered as they are.
//! * Triangles are drawn in index order, each completely before the next (GL's ordering for
//!   blending). The fragment callback decides the pixel (blend, clip, discard).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use glam::{DVec2, Vec2, Vec4};

use super::RgbaImage;
use crate::anie::atlas::{ImageAtlas, PixelRect};
use crate::anie::blend::rgba_from_unorm8;

/// Bilinear `GL_LINEAR` sampling at normalised `uv` with a transparent border (§2):
/// the texel-space point is `(u·W − ½, v·H − ½)`; the four texels around it are mixed by its
/// fractional part, and texels outside the image count as `(0, 0, 0, 0)`. Channels are `[0, 1]`,
/// straight alpha. A NaN `uv` gives transparent black.
pub fn sample_bilinear(texture: &RgbaImage, uv: Vec2) -> Vec4 {
    bilinear(texture.width, texture.height, uv, |x, y| texture.get(x, y))
}

/// [`sample_bilinear`] of the image that lies at `rect` in `atlas`, bit for bit: the same
/// texel-space point (from the rectangle's size), and texels outside the rectangle count as the
/// transparent border, whatever the atlas holds beside it.
pub fn sample_bilinear_rect(atlas: &ImageAtlas, rect: PixelRect, uv: Vec2) -> Vec4 {
    bilinear(rect.width, rect.height, uv, |x, y| {
        match (u32::try_from(x), u32::try_from(y)) {
            (Ok(x), Ok(y)) if x < rect.width && y < rect.height => {
                atlas.texel(rect.x.saturating_add(x), rect.y.saturating_add(y))
            }
            _ => [0; 4],
        }
    })
}

/// Bilinear filtering of a `width × height` image whose texel `(x, y)` is `texel(x, y)` (which
/// must give the border outside the image).
fn bilinear(width: u32, height: u32, uv: Vec2, texel: impl Fn(i64, i64) -> [u8; 4]) -> Vec4 {
    let x = f64::from(uv.x) * f64::from(width) - 0.5;
    let y = f64::from(uv.y) * f64::from(height) - 0.5;
    if !(x.is_finite() && y.is_finite()) {
        return Vec4::ZERO;
    }
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = ((x - x0) as f32, (y - y0) as f32);
    // Saturating casts: points far outside stay outside.
    let (ix, iy) = (x0 as i64, y0 as i64);
    let texel =
        |dx: i64, dy: i64| rgba_from_unorm8(texel(ix.saturating_add(dx), iy.saturating_add(dy)));
    let top = texel(0, 0).lerp(texel(1, 0), fx);
    let bottom = texel(0, 1).lerp(texel(1, 1), fx);
    top.lerp(bottom, fy)
}

/// A mesh vertex on the canvas: its position (canvas pixels, +y down) and its normalised texture
/// coordinate (§2: `uv = (texcoord_px + originOffset − imageOffset)/imageSize`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct MeshVertex {
    /// Position in canvas pixels (+y down).
    pub pos: Vec2,
    /// Normalised texture coordinate; outside `[0, 1]` the transparent border is sampled.
    pub uv: Vec2,
}

/// One covered pixel of a textured mesh, as handed to the shading callback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fragment {
    /// Pixel column, from the left.
    pub x: u32,
    /// Pixel row, from the top.
    pub y: u32,
    /// The interpolated texture coordinate at the pixel centre.
    pub uv: Vec2,
    /// The texture sampled there ([`sample_bilinear`]).
    pub texel: Vec4,
}

/// Sub-pixel bits of the snapped vertex positions (1/256 px).
pub(crate) const SUBPIXEL_BITS: u32 = 8;

/// Triangles with a vertex farther than this from the origin (in pixels) are skipped: this keeps
/// the integer edge functions exact in `i128`. (A GPU would clip them; no real layer gets near.)
pub(crate) const MAX_COORD: f32 = (1u64 << 40) as f32;

/// A snapped vertex in 1/256 px.
#[derive(Clone, Copy)]
struct Fixed {
    x: i64,
    y: i64,
}

fn snap(p: Vec2) -> Option<Fixed> {
    let scale = f64::from(1u32 << SUBPIXEL_BITS);
    if !(p.x.abs() <= MAX_COORD && p.y.abs() <= MAX_COORD) {
        return None;
    }
    Some(Fixed {
        x: (f64::from(p.x) * scale).round_ties_even() as i64,
        y: (f64::from(p.y) * scale).round_ties_even() as i64,
    })
}

/// The edge function of `a → b` at `p`: `(b − a) × (p − a)`; with the triangle wound so its area
/// is positive, inside points are positive.
fn edge(a: Fixed, b: Fixed, p: Fixed) -> i128 {
    let (dx, dy) = (i128::from(b.x - a.x), i128::from(b.y - a.y));
    dx * i128::from(p.y - a.y) - dy * i128::from(p.x - a.x)
}

/// Whether `a → b` is a top or left edge of a positively wound triangle (canvas y down):
/// top = horizontal and running toward +x (the triangle is below it), left = running toward −y
/// (the triangle is to its right).
fn is_top_left(a: Fixed, b: Fixed) -> bool {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    (dy == 0 && dx > 0) || dy < 0
}

/// Calls `f(x, y, uv)` for every pixel of a `width × height` target whose centre the triangle
/// covers (see the module's rules), in row-major order, with the UV interpolated at the centre.
pub fn rasterize_triangle(
    width: u32,
    height: u32,
    triangle: [MeshVertex; 3],
    mut f: impl FnMut(u32, u32, Vec2),
) {
    let [v0, mut v1, mut v2] = triangle;
    let (Some(a), Some(mut b), Some(mut c)) = (snap(v0.pos), snap(v1.pos), snap(v2.pos)) else {
        return;
    };
    let area = edge(a, b, c);
    if area == 0 {
        return;
    }
    if area < 0 {
        std::mem::swap(&mut b, &mut c);
        std::mem::swap(&mut v1, &mut v2);
    }
    // Pixel range: centres x + ½ within the snapped bounds.
    let one = 1i64 << SUBPIXEL_BITS;
    let half = one / 2;
    let lo = |m: i64| (m - half).div_euclid(one);
    let hi = |m: i64| (m - half).div_euclid(one) + 1;
    let x_lo = lo(a.x.min(b.x).min(c.x)).max(0);
    let x_hi = hi(a.x.max(b.x).max(c.x)).min(i64::from(width) - 1);
    let y_lo = lo(a.y.min(b.y).min(c.y)).max(0);
    let y_hi = hi(a.y.max(b.y).max(c.y)).min(i64::from(height) - 1);
    let edges = [(b, c), (c, a), (a, b)];
    let top_left = edges.map(|(p, q)| is_top_left(p, q));
    // Barycentric weights from the unsnapped positions, in f64.
    let (p0, p1, p2) = (v0.pos.as_dvec2(), v1.pos.as_dvec2(), v2.pos.as_dvec2());
    let cross = |u: DVec2, v: DVec2| u.x * v.y - u.y * v.x;
    let area_f = cross(p1 - p0, p2 - p0);
    for y in y_lo..=y_hi {
        for x in x_lo..=x_hi {
            let centre = Fixed {
                x: x * one + half,
                y: y * one + half,
            };
            let inside = edges.iter().zip(top_left).all(|(&(p, q), tl)| {
                let e = edge(p, q, centre);
                e > 0 || (e == 0 && tl)
            });
            if !inside {
                continue;
            }
            let pc = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
            let uv = if area_f != 0.0 && area_f.is_finite() {
                let w1 = cross(pc - p0, p2 - p0) / area_f;
                let w2 = cross(p1 - p0, pc - p0) / area_f;
                let w0 = 1.0 - w1 - w2;
                (v0.uv.as_dvec2() * w0 + v1.uv.as_dvec2() * w1 + v2.uv.as_dvec2() * w2).as_vec2()
            } else {
                v0.uv
            };
            // x, y are within 0..width/height here.
            f(x as u32, y as u32, uv);
        }
    }
}

/// Draws a textured triangle mesh into `target`: for every covered pixel of every triangle
/// (`indices` in threes, in order; a triangle with an index out of range is skipped, as is a
/// trailing incomplete one), calls `shade(fragment, pixel)` with the live target pixel, which the
/// callback updates (e.g. [`crate::anie::blend::layer_fragment`] then
/// [`crate::anie::blend::composite`]) or leaves alone (discard).
///
/// Non-Normal blend modes read the destination from a copy of the target made *before* the
/// mesh is drawn (§4.9); the callback can look that copy up by `fragment.x, fragment.y`.
pub fn draw_mesh(
    target: &mut RgbaImage,
    texture: &RgbaImage,
    vertices: &[MeshVertex],
    indices: &[u32],
    mut shade: impl FnMut(&Fragment, &mut [u8; 4]),
) {
    let (width, height) = (target.width, target.height);
    for tri in indices.chunks_exact(3) {
        let vertex = |i: u32| vertices.get(i as usize).copied();
        let (Some(a), Some(b), Some(c)) = (vertex(tri[0]), vertex(tri[1]), vertex(tri[2])) else {
            continue;
        };
        rasterize_triangle(width, height, [a, b, c], |x, y, uv| {
            let fragment = Fragment {
                x,
                y,
                uv,
                texel: sample_bilinear(texture, uv),
            };
            if let Some(pixel) = target.get_mut(i64::from(x), i64::from(y)) {
                shade(&fragment, pixel);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anie::blend::{BlendMode, composite, layer_fragment};

    fn v(x: f32, y: f32, u: f32, w: f32) -> MeshVertex {
        MeshVertex {
            pos: Vec2::new(x, y),
            uv: Vec2::new(u, w),
        }
    }

    /// The pixels a triangle list covers, with how many times each was drawn.
    fn coverage(width: u32, height: u32, tris: &[[MeshVertex; 3]]) -> Vec<u32> {
        let mut counts = vec![0; (width * height) as usize];
        for &t in tris {
            rasterize_triangle(width, height, t, |x, y, _| {
                counts[(y * width + x) as usize] += 1
            });
        }
        counts
    }

    /// AnimeEffects' quad mesh (§3 `createQuadMesh`): (0,0),(w,0),(0,h),(w,h), triangles 0,1,2
    /// and 1,3,2, placed at `origin`.
    fn quad(origin: Vec2, w: f32, h: f32) -> [[MeshVertex; 3]; 2] {
        let p = |x: f32, y: f32| v(origin.x + x, origin.y + y, x / w, y / h);
        let vs = [p(0.0, 0.0), p(w, 0.0), p(0.0, h), p(w, h)];
        [[vs[0], vs[1], vs[2]], [vs[1], vs[3], vs[2]]]
    }

    #[test]
    fn quad_covers_exactly_its_pixels_once() {
        // Addendum 2: a 4×4 image centred on (10, 10) spans (8,8)–(12,12): pixel centres
        // 8.5 … 11.5 are inside, so pixels 8..=11 in x and y, each drawn exactly once, although the
        // diagonal (12,8)–(8,12) passes through the centres with x + y = 20 (e.g. (10.5, 9.5))
        // — the top-left rule gives each of those to one triangle only.
        let counts = coverage(20, 20, &quad(Vec2::new(8.0, 8.0), 4.0, 4.0));
        for y in 0..20 {
            for x in 0..20 {
                let inside = (8..=11).contains(&x) && (8..=11).contains(&y);
                assert_eq!(
                    counts[(y * 20 + x) as usize],
                    u32::from(inside),
                    "pixel ({x}, {y})"
                );
            }
        }
    }

    #[test]
    fn top_left_rule_on_shared_edges() {
        // A triangle (0,0),(4,0),(0,4): its hypotenuse x + y = 4 holds the centres (0.5, 3.5),
        // (1.5, 2.5), (2.5, 1.5), (3.5, 0.5). That edge runs (4,0) → (0,4) — toward +y, so it is
        // a right edge: those centres are not drawn. Inside: x + y < 3 (x + ½ + y + ½ < 4):
        // 1 + 2 + 3 = 6 pixels.
        let t = [
            v(0.0, 0.0, 0.0, 0.0),
            v(4.0, 0.0, 0.0, 0.0),
            v(0.0, 4.0, 0.0, 0.0),
        ];
        let counts = coverage(4, 4, &[t]);
        assert_eq!(counts.iter().sum::<u32>(), 6);
        assert_eq!(counts[3], 0); // (3, 0): centre (3.5, 0.5) on the hypotenuse
        // The other half (4,0),(4,4),(0,4) takes them: 10 pixels, and the union is the square.
        let u = [
            v(4.0, 0.0, 0.0, 0.0),
            v(4.0, 4.0, 0.0, 0.0),
            v(0.0, 4.0, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[u]).iter().sum::<u32>(), 10);
        assert!(coverage(4, 4, &[t, u]).iter().all(|&c| c == 1));
        // Centres on a top edge are in. Triangle (0,0.5),(4,0.5),(0,2.5): its top edge y = 0.5
        // holds row 0's centres (x + ½, 0.5); the hypotenuse is x + 2y = 5, so a centre is inside
        // while x + ½ + 1 < 5, i.e. x = 0..=3: all 4 pixels of row 0.
        let top = [
            v(0.0, 0.5, 0.0, 0.0),
            v(4.0, 0.5, 0.0, 0.0),
            v(0.0, 2.5, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[top])[..4].iter().sum::<u32>(), 4);
        // Mirrored, (0,2.5),(4,2.5),(0,0.5), the same line y = 2.5 is a bottom edge: row 2's
        // centres lie on it and are not drawn.
        let bottom = [
            v(0.0, 2.5, 0.0, 0.0),
            v(4.0, 2.5, 0.0, 0.0),
            v(0.0, 0.5, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[bottom])[8..12].iter().sum::<u32>(), 0);
        // Centres on a left edge are in, on a right edge out. The line x = 0.5 holds pixel
        // (0, 0)'s centre (0.5, 0.5). With the third vertex at (4.5, 4) the triangle lies to its
        // right (a left edge; the centre is strictly inside the other edges, y = x − 0.5 gives
        // 0.5 > 0): drawn. With the third vertex at (−3.5, 4) it lies to its left: not drawn.
        let left = [
            v(0.5, 0.0, 0.0, 0.0),
            v(0.5, 4.0, 0.0, 0.0),
            v(4.5, 4.0, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[left])[0], 1);
        let right = [
            v(0.5, 0.0, 0.0, 0.0),
            v(0.5, 4.0, 0.0, 0.0),
            v(-3.5, 4.0, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[right])[0], 0);
    }

    #[test]
    fn winding_does_not_matter_and_degenerates_draw_nothing() {
        let cw = [
            v(0.0, 0.0, 0.0, 0.0),
            v(4.0, 0.0, 0.0, 0.0),
            v(0.0, 4.0, 0.0, 0.0),
        ];
        let ccw = [cw[0], cw[2], cw[1]];
        assert_eq!(coverage(4, 4, &[cw]), coverage(4, 4, &[ccw]));
        let line = [
            v(0.0, 0.0, 0.0, 0.0),
            v(2.0, 2.0, 0.0, 0.0),
            v(4.0, 4.0, 0.0, 0.0),
        ];
        assert_eq!(coverage(4, 4, &[line]).iter().sum::<u32>(), 0);
        let nan = [v(f32::NAN, 0.0, 0.0, 0.0), cw[1], cw[2]];
        assert_eq!(coverage(4, 4, &[nan]).iter().sum::<u32>(), 0);
        let huge = [v(1e20, 0.0, 0.0, 0.0), cw[1], cw[2]];
        assert_eq!(coverage(4, 4, &[huge]).iter().sum::<u32>(), 0);
        // Off-target triangles and an empty target are fine.
        assert_eq!(
            coverage(
                4,
                4,
                &[[
                    v(-9.0, -9.0, 0.0, 0.0),
                    v(-5.0, -9.0, 0.0, 0.0),
                    v(-9.0, -5.0, 0.0, 0.0)
                ]]
            )
            .iter()
            .sum::<u32>(),
            0
        );
        rasterize_triangle(0, 0, cw, |_, _, _| panic!("nothing to cover"));
    }

    #[test]
    fn uv_is_interpolated_at_pixel_centres() {
        // The quad at (8,8) with uv = local/4: pixel (8, 8) centre (8.5, 8.5) → uv (0.125, 0.125);
        // pixel (11, 10) centre (11.5, 10.5) → uv (3.5/4, 2.5/4) = (0.875, 0.625).
        let mut seen = Vec::new();
        for t in quad(Vec2::new(8.0, 8.0), 4.0, 4.0) {
            rasterize_triangle(20, 20, t, |x, y, uv| seen.push((x, y, uv)));
        }
        let at = |x, y| seen.iter().find(|s| s.0 == x && s.1 == y).unwrap().2;
        assert!((at(8, 8) - Vec2::splat(0.125)).length() < 1e-6);
        assert!((at(11, 10) - Vec2::new(0.875, 0.625)).length() < 1e-6);
    }

    #[test]
    fn bilinear_at_texel_centres_corners_and_the_border() {
        // 2×2 texture: red, green / blue, white, all opaque.
        let tex = RgbaImage::from_rgba8(
            2,
            2,
            &[
                255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255,
            ],
        )
        .unwrap();
        // Texel (0,0)'s centre: uv (0.25, 0.25) → x = 0.25·2 − 0.5 = 0 → exactly red.
        assert_eq!(
            sample_bilinear(&tex, Vec2::splat(0.25)),
            Vec4::new(1.0, 0.0, 0.0, 1.0)
        );
        // The shared corner of the four texels: uv (0.5, 0.5) → x = y = 0.5: the average
        // ((1,0,0,1) + (0,1,0,1) + (0,0,1,1) + (1,1,1,1))/4 = (0.5, 0.5, 0.5, 1).
        assert_eq!(
            sample_bilinear(&tex, Vec2::splat(0.5)),
            Vec4::new(0.5, 0.5, 0.5, 1.0)
        );
        // The image's top-left corner uv (0, 0) → x = y = −0.5: ¼ of red, ¾ transparent border:
        // (0.25, 0, 0, 0.25).
        assert_eq!(
            sample_bilinear(&tex, Vec2::ZERO),
            Vec4::new(0.25, 0.0, 0.0, 0.25)
        );
        // Middle of the left edge uv (0, 0.5): x = −0.5, y = 0.5: ½·border + ½·(½ red + ½ blue)
        // = (0.25, 0, 0.25, 0.5).
        assert_eq!(
            sample_bilinear(&tex, Vec2::new(0.0, 0.5)),
            Vec4::new(0.25, 0.0, 0.25, 0.5)
        );
        // Far outside or NaN → transparent.
        assert_eq!(sample_bilinear(&tex, Vec2::splat(5.0)), Vec4::ZERO);
        assert_eq!(sample_bilinear(&tex, Vec2::splat(f32::NAN)), Vec4::ZERO);
        assert_eq!(sample_bilinear(&tex, Vec2::splat(1e30)), Vec4::ZERO);
        assert_eq!(
            sample_bilinear(&RgbaImage::new(0, 0), Vec2::ZERO),
            Vec4::ZERO
        );
    }

    #[test]
    fn atlas_sampling_equals_sampling_the_image() {
        // Two 2×2 images side by side in one 4×2 atlas: sampling the right one through its
        // rectangle gives exactly what sampling it alone gives, border included (its left
        // neighbour's texels never bleed in).
        let left = [[255, 0, 0, 255]; 4];
        let right = [
            [0, 10, 20, 30],
            [40, 50, 60, 70],
            [80, 90, 100, 110],
            [1, 2, 3, 4],
        ];
        let image = RgbaImage::from_rgba8(2, 2, &right.concat()).unwrap();
        let mut rgba = Vec::new();
        for row in 0..2 {
            rgba.extend(left[row * 2..row * 2 + 2].concat());
            rgba.extend(right[row * 2..row * 2 + 2].concat());
        }
        let project = crate::formats::anie::AnieFile {
            resources: vec![crate::formats::anie::ResourceTree {
                file_path: String::new(),
                nodes: Vec::new(),
            }],
            ..Default::default()
        };
        let mut atlas = ImageAtlas::new(&project).unwrap();
        (atlas.width, atlas.height, atlas.rgba) = (4, 2, rgba);
        let rect = PixelRect::new(2, 0, 2, 2);
        for u in -4..=12 {
            for w in -4..=12 {
                let uv = Vec2::new(u as f32 / 8.0 + 0.013, w as f32 / 8.0 - 0.007);
                assert_eq!(
                    sample_bilinear_rect(&atlas, rect, uv)
                        .to_array()
                        .map(f32::to_bits),
                    sample_bilinear(&image, uv).to_array().map(f32::to_bits),
                    "uv {uv}"
                );
            }
        }
        assert_eq!(
            sample_bilinear_rect(&atlas, PixelRect::EMPTY, Vec2::ZERO),
            Vec4::ZERO
        );
    }

    #[test]
    fn draw_mesh_with_normal_blending() {
        // A 2×2 opaque grey (100) texture on the quad (1,1)–(3,3) of a 4×4 target, Normal,
        // opacity 127: each covered pixel gets rgb round(100·127/255) = round(49.8) = 50, a = 127.
        // UVs at the centres (1.5 → 0.25, 2.5 → 0.75) hit texel centres exactly, so no border
        // bleeds in.
        let tex = RgbaImage::filled(2, 2, [100, 100, 100, 255]);
        let [t0, t1] = quad(Vec2::ONE, 2.0, 2.0);
        let vertices = [t0[0], t0[1], t0[2], t1[1]];
        let mut target = RgbaImage::new(4, 4);
        draw_mesh(
            &mut target,
            &tex,
            &vertices,
            &[0, 1, 2, 1, 3, 2, 7, 0, 1],
            |f, px| {
                let out = layer_fragment(BlendMode::Normal, f.texel, 127, 1.0, *px);
                *px = composite(*px, out);
            },
        );
        for y in 0..4 {
            for x in 0..4 {
                let inside = (1..=2).contains(&x) && (1..=2).contains(&y);
                let expected = if inside { [50, 50, 50, 127] } else { [0; 4] };
                assert_eq!(target.get(x, y), expected, "pixel ({x}, {y})");
            }
        }
    }
}
