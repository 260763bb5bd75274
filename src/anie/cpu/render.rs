//! [`Renderer`]: an evaluated frame's draw sequence replayed into an RGBA8 framebuffer the
//! way AnimeEffects 1.7's exporter fills its own.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::collections::HashMap;
use std::sync::Arc;

use super::RgbaImage;
use super::raster::{MeshVertex, draw_mesh, rasterize_triangle, sample_bilinear};
use crate::anie::blend::{
    BlendMode, ClipTexel, HsvAdjust, clip_coverage, composite, from_unorm8, hsv_fragment,
    layer_fragment,
};
use crate::anie::eval::{DrawOp, EvaluatedFrame, LayerFrame, NodeFrame};
use crate::formats::anie::{AnieFile, MAX_IMAGE_SIDE, ResourceRef};

/// The largest side of a rendered image, in pixels; larger requests are cut to it.
pub const MAX_RENDER_SIDE: u32 = MAX_IMAGE_SIDE;

/// [`Renderer::render`] with a one-off [`Renderer`]: it decodes every image of `project` for this
/// one frame. To render many frames, keep a `Renderer`.
pub fn render(project: &AnieFile, frame: &EvaluatedFrame, scale: f32) -> RgbaImage {
    Renderer::new(project).render(frame, scale)
}

/// Renders frames of one project: an [`EvaluatedFrame`]'s draw sequence replayed into an RGBA8
/// framebuffer the way AnimeEffects 1.7's exporter fills its own (§4.7–§4.10, Addendum 1).
///
/// It decodes the project's images into textures once, in [`Renderer::new`], and keeps them. It
/// borrows nothing, so it is `Send + Sync + 'static` and a Bevy asset or component can keep one;
/// a clone shares the textures (one reference count).
///
/// * The framebuffer starts transparent black (the exporter's clear colour).
/// * Each layer fragment is [`layer_fragment`] (straight alpha, `dst.a`-weighted blend mode,
///   8-bit opacity, clip mask) composited by [`composite`]: colour `SRC_ALPHA,
///   ONE_MINUS_SRC_ALPHA`, alpha **added**. The result is what `NAME_fF.raw.png` in the reference
///   folder holds; the PNG AnimeEffects saves is [`exported_png`] of it.
/// * Non-Normal blend modes read the destination from a copy of the framebuffer made just before
///   the layer is drawn (§4.9), 8 bits per channel.
/// * The clipping mask is an 8-bit id and an 8-bit coverage per pixel ([`ClipTexel`]), cleared
///   at the start of the frame and when the ids wrap (§4.8). A clipper's coverage is
///   `uint(texel alpha · alpha8/255 · 255)`: the opacity as the 8-bit alpha the layer is drawn
///   with, which fits AnimeEffects' `clip_v8` framebuffers slightly better than the unrounded
///   world opacity.
/// * HSV-active layers and folder HSV re-draws use [`hsv_fragment`] with Normal compositing,
///   unmasked (§4.10).
/// * Triangles are rasterised by [`super::raster`] (pixel centres, 1/256 px snapping,
///   top-left rule, bilinear sampling with a transparent border).
///
/// `scale` multiplies the canvas and every vertex position; textures are sampled as they are.
#[derive(Clone, Debug)]
pub struct Renderer {
    textures: Arc<HashMap<ResourceRef, RgbaImage>>,
}

/// The size of a canvas rendered at `scale`: each side `round(side · scale)`, at least 1 and at
/// most [`MAX_RENDER_SIDE`]. A scale that is not a positive finite number counts as 1.
pub fn scaled_size(width: u32, height: u32, scale: f32) -> (u32, u32) {
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let side = |s: u32| ((s as f32 * scale).round() as u32).clamp(1, MAX_RENDER_SIDE);
    (side(width), side(height))
}

impl Renderer {
    /// A renderer with every image of `project` ready as a texture.
    ///
    /// `project` is read once, here, and not kept: an `&AnieFile`, or an
    /// `Arc<AnieFile>` (or `&Arc`) shared with an [`Evaluator`](crate::anie::eval::Evaluator).
    pub fn new(project: impl AsRef<AnieFile>) -> Self {
        let project = project.as_ref();
        let mut textures = HashMap::new();
        for (t, tree) in project.resources.iter().enumerate() {
            for (n, node) in tree.nodes.iter().enumerate() {
                let Some(image) = &node.image else { continue };
                if let Some(texture) = RgbaImage::from_rgba8(image.width, image.height, &image.rgba)
                {
                    textures.insert(ResourceRef { tree: t, node: n }, texture);
                }
            }
        }
        Self {
            textures: Arc::new(textures),
        }
    }

    /// The framebuffer AnimeEffects' exporter would hold for `frame` (see the module notes),
    /// at `scale` times the canvas size ([`scaled_size`]).
    pub fn render(&self, frame: &EvaluatedFrame, scale: f32) -> RgbaImage {
        let (width, height) = scaled_size(frame.canvas_width, frame.canvas_height, scale);
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        let mut target = Target {
            fb: RgbaImage::new(width, height),
            mask: vec![ClipTexel::CLEAR; width as usize * height as usize],
            dst: Vec::new(),
            vertices: Vec::new(),
            scale,
        };
        for op in &frame.draws {
            match *op {
                DrawOp::Layer { node, mask } => {
                    let Some((n, layer, texture)) = self.layer(frame, node) else {
                        continue;
                    };
                    match n.hsv {
                        Some(hsv) => target.draw_hsv(layer, texture, n.alpha8, &hsv),
                        None => target.draw_layer(layer, texture, n.alpha8, mask),
                    }
                }
                DrawOp::WriteMask { node, id, within } => {
                    if let Some((n, layer, texture)) = self.layer(frame, node) {
                        target.write_mask(layer, texture, n.alpha8, id, within);
                    }
                }
                DrawOp::ClearMask => target.mask.fill(ClipTexel::CLEAR),
                DrawOp::HsvRedraw { layer, folder } => {
                    let Some(hsv) = frame.nodes.get(folder).and_then(|f| f.hsv) else {
                        continue;
                    };
                    if let Some((n, l, texture)) = self.layer(frame, layer) {
                        target.draw_hsv(l, texture, n.alpha8, &hsv);
                    }
                }
            }
        }
        target.fb
    }

    /// A layer node that draws something: visible, alpha above 0, with a texture.
    fn layer<'f>(
        &self,
        frame: &'f EvaluatedFrame,
        node: usize,
    ) -> Option<(&'f NodeFrame, &'f LayerFrame, &RgbaImage)> {
        let n = frame.nodes.get(node)?;
        let layer = n.layer.as_ref()?;
        let texture = self.textures.get(&layer.resource?)?;
        (n.visible && n.alpha8 > 0).then_some((n, layer, texture))
    }
}

/// The framebuffer, the clipping mask and scratch space.
struct Target {
    fb: RgbaImage,
    mask: Vec<ClipTexel>,
    /// The destination copy for non-Normal blend modes.
    dst: Vec<[u8; 4]>,
    vertices: Vec<MeshVertex>,
    scale: f32,
}

impl Target {
    fn vertices(&mut self, layer: &LayerFrame) {
        let scale = self.scale;
        self.vertices.clear();
        self.vertices.extend(
            layer
                .mesh
                .positions
                .iter()
                .zip(&layer.mesh.uvs)
                .map(|(&p, &uv)| MeshVertex { pos: p * scale, uv }),
        );
    }

    /// A layer with its blend mode, masked by clipper `mask` if given (§4.8, §4.9).
    fn draw_layer(
        &mut self,
        layer: &LayerFrame,
        texture: &RgbaImage,
        alpha8: u8,
        mask: Option<u8>,
    ) {
        self.vertices(layer);
        let mode = layer.blend_mode;
        if mode != BlendMode::Normal {
            self.dst.clone_from(&self.fb.pixels);
        }
        let width = self.fb.width as usize;
        let (clip, dst) = (&self.mask, &self.dst);
        draw_mesh(
            &mut self.fb,
            texture,
            &self.vertices,
            &layer.mesh.indices,
            |f, pixel| {
                let i = f.y as usize * width + f.x as usize;
                let factor = match mask {
                    None => 1.0,
                    Some(id) => match clip.get(i).and_then(|t| t.clippee_factor(id)) {
                        Some(factor) => factor,
                        None => return,
                    },
                };
                let dst = if mode == BlendMode::Normal {
                    *pixel
                } else {
                    dst.get(i).copied().unwrap_or_default()
                };
                *pixel = composite(*pixel, layer_fragment(mode, f.texel, alpha8, factor, dst));
            },
        );
    }

    /// A layer through the HSV shader: Normal compositing, no mask (§4.10).
    fn draw_hsv(&mut self, layer: &LayerFrame, texture: &RgbaImage, alpha8: u8, hsv: &HsvAdjust) {
        self.vertices(layer);
        draw_mesh(
            &mut self.fb,
            texture,
            &self.vertices,
            &layer.mesh.indices,
            |f, pixel| *pixel = composite(*pixel, hsv_fragment(f.texel, alpha8, hsv)),
        );
    }

    /// A clipper's coverage into the mask (§4.8).
    fn write_mask(
        &mut self,
        layer: &LayerFrame,
        texture: &RgbaImage,
        alpha8: u8,
        id: u8,
        within: Option<u8>,
    ) {
        self.vertices(layer);
        let (width, height) = (self.fb.width, self.fb.height);
        let opacity = from_unorm8(alpha8);
        for tri in layer.mesh.indices.chunks_exact(3) {
            let vertex = |i: u32| self.vertices.get(i as usize).copied();
            let (Some(a), Some(b), Some(c)) = (vertex(tri[0]), vertex(tri[1]), vertex(tri[2]))
            else {
                continue;
            };
            let mask = &mut self.mask;
            rasterize_triangle(width, height, [a, b, c], |x, y, uv| {
                let i = y as usize * width as usize + x as usize;
                let Some(texel) = mask.get_mut(i) else { return };
                let outer = match within {
                    None => 1.0,
                    Some(outer) => match texel.clippee_factor(outer) {
                        Some(factor) => factor,
                        None => return,
                    },
                };
                let alpha = sample_bilinear(texture, uv).w * opacity * outer;
                *texel = texel.write(id, clip_coverage(alpha));
            });
        }
    }
}

/// The PNG AnimeEffects saves from a framebuffer (Addendum 1): the exporter reads the
/// framebuffer back as premultiplied ARGB32 and Qt un-premultiplies it on save, so each colour
/// channel becomes `round(raw · 255 / alpha)` (capped at 255); alpha 0 gives transparent black
/// and alpha 255 leaves the pixel as it is. Precision is lost at low alpha (raw 11 at alpha 90
/// gives 31 for a layer colour of 30).
pub fn exported_png(framebuffer: &RgbaImage) -> RgbaImage {
    let mut out = framebuffer.clone();
    for p in &mut out.pixels {
        *p = unpremultiply(*p);
    }
    out
}

/// One pixel of [`exported_png`].
pub(crate) fn unpremultiply(p: [u8; 4]) -> [u8; 4] {
    let a = u32::from(p[3]);
    match a {
        0 => [0; 4],
        255 => p,
        _ => {
            let c = |v: u8| ((u32::from(v) * 255 + a / 2) / a).min(255) as u8;
            [c(p[0]), c(p[1]), c(p[2]), p[3]]
        }
    }
}

/// The mean absolute error per channel (0..=255 scale) and the share of pixels (0..=1) with any
/// channel off by more than `tolerance`, between two images of the same size; `None` when the
/// sizes differ. The reference renders' match criterion is a mean ≤ 1 and a share ≤ 0.005 at
/// tolerance 8.
pub fn compare(a: &RgbaImage, b: &RgbaImage, tolerance: u8) -> Option<(f64, f64)> {
    if (a.width, a.height) != (b.width, b.height) || a.pixels.len() != b.pixels.len() {
        return None;
    }
    if a.pixels.is_empty() {
        return Some((0.0, 0.0));
    }
    let mut sum = 0u64;
    let mut off = 0usize;
    for (p, q) in a.pixels.iter().zip(&b.pixels) {
        let mut worst = 0;
        for (x, y) in p.iter().zip(q) {
            let d = x.abs_diff(*y);
            sum += u64::from(d);
            worst = worst.max(d);
        }
        off += usize::from(worst > tolerance);
    }
    let n = a.pixels.len() as f64;
    Some((sum as f64 / (4.0 * n), off as f64 / n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anie::eval::{LayerMesh, Placement};
    use crate::formats::anie::{KeyKind, KeyRef, KeySlot};
    use glam::{Affine2, Vec2};

    #[test]
    fn unpremultiply_as_qt_saves_png() {
        // Addendum 1: raw 11 at alpha 90 → round(11·255/90) = round(31.17) = 31.
        assert_eq!(unpremultiply([11, 0, 90, 90]), [31, 0, 255, 90]);
        // Alpha 0 → transparent black; alpha 255 unchanged; a colour above alpha caps at 255.
        assert_eq!(unpremultiply([5, 6, 7, 0]), [0; 4]);
        assert_eq!(unpremultiply([5, 6, 7, 255]), [5, 6, 7, 255]);
        assert_eq!(unpremultiply([200, 0, 0, 100]), [255, 0, 0, 100]);
        // 127 at alpha 127 → 255; 1 at 2 → round(127.5) = 128 (ties up).
        assert_eq!(unpremultiply([127, 1, 0, 127])[0], 255);
        assert_eq!(unpremultiply([1, 0, 0, 2])[0], 128);
    }

    #[test]
    fn compare_counts_mean_and_pixels_off() {
        let a = RgbaImage::new(2, 1);
        let mut b = a.clone();
        b.pixels[1] = [9, 0, 0, 3];
        // Channel differences 9 + 3 over 8 channels = 1.5; one pixel of two off by > 8.
        assert_eq!(compare(&a, &b, 8), Some((1.5, 0.5)));
        assert_eq!(compare(&a, &b, 9), Some((1.5, 0.0)));
        assert_eq!(compare(&a, &RgbaImage::new(1, 1), 8), None);
    }

    #[test]
    fn scaled_sizes() {
        assert_eq!(scaled_size(64, 48, 1.0), (64, 48));
        // 64·0.3 = 19.2 → 19, 48·0.3 = 14.4 → 14.
        assert_eq!(scaled_size(64, 48, 0.3), (19, 14));
        assert_eq!(scaled_size(64, 48, f32::NAN), (64, 48));
        assert_eq!(scaled_size(0, 48, 0.01), (1, 1));
        assert_eq!(scaled_size(64, 48, 1e9), (MAX_RENDER_SIDE, MAX_RENDER_SIDE));
    }

    /// A frame of `layers` 2×2-pixel squares on a 4×2 canvas: layer `i` covers pixels
    /// (x0..x0+2, 0..2) and samples texture `i`'s single colour.
    fn squares(squares: &[(f32, u8)]) -> (Renderer, EvaluatedFrame) {
        let mut textures = HashMap::new();
        let mut nodes = Vec::new();
        for (i, &(x0, alpha8)) in squares.iter().enumerate() {
            textures.insert(ResourceRef { tree: 0, node: i }, RgbaImage::new(1, 1));
            let corners = [(0.0, 0.0), (2.0, 0.0), (0.0, 2.0), (2.0, 2.0)];
            nodes.push(NodeFrame {
                visible: true,
                local: Affine2::IDENTITY,
                world: Affine2::IDENTITY,
                opacity: 1.0,
                world_opacity: 1.0,
                alpha8,
                depth: 0.0,
                world_depth: 0.0,
                hsv: None,
                bone_key: None,
                placement: Placement::Plain,
                layer: Some(LayerFrame {
                    image_key: KeySlot::Default,
                    resource: Some(ResourceRef { tree: 0, node: i }),
                    blend_mode: BlendMode::Normal,
                    image_offset: Vec2::ZERO,
                    area_key: KeyRef {
                        node: i,
                        kind: KeyKind::Image,
                        slot: KeySlot::Default,
                    },
                    ffd: false,
                    mesh: LayerMesh {
                        positions: corners.map(|(x, y)| Vec2::new(x0 + x, y)).to_vec(),
                        // The centre of the 1×1 texture: no filtering.
                        uvs: vec![Vec2::splat(0.5); 4],
                        indices: vec![0, 1, 2, 1, 3, 2],
                    },
                }),
            });
        }
        let frame = EvaluatedFrame {
            frame: 0.0,
            canvas_width: 4,
            canvas_height: 2,
            nodes,
            skeletons: Vec::new(),
            draws: Vec::new(),
        };
        let textures = Arc::new(textures);
        (Renderer { textures }, frame)
    }

    fn paint(r: &mut Renderer, node: usize, rgba: [u8; 4]) {
        Arc::make_mut(&mut r.textures)
            .get_mut(&ResourceRef { tree: 0, node })
            .unwrap()
            .pixels[0] = rgba;
    }

    #[test]
    fn clipping_and_blend_modes_with_the_destination_copy() {
        // Layer 0: grey (128) opaque over pixels x 0..2. Layer 1: the clipper, white at texture
        // alpha 128 and opacity 255, over x 1..3. Layer 2: a red Multiply clippee over x 0..2.
        let (mut r, mut f) = squares(&[(0.0, 255), (1.0, 255), (0.0, 255)]);
        paint(&mut r, 0, [128, 128, 128, 255]);
        paint(&mut r, 1, [255, 255, 255, 128]);
        paint(&mut r, 2, [255, 0, 0, 255]);
        f.nodes[2].layer.as_mut().unwrap().blend_mode = BlendMode::Multiply;
        f.draws = vec![
            DrawOp::Layer {
                node: 0,
                mask: None,
            },
            DrawOp::Layer {
                node: 1,
                mask: None,
            },
            DrawOp::WriteMask {
                node: 1,
                id: 1,
                within: None,
            },
            DrawOp::Layer {
                node: 2,
                mask: Some(1),
            },
        ];
        let fb = r.render(&f, 1.0);
        // x = 0: grey only; the clippee is discarded (mask id 0 there): (128, 128, 128, 255).
        assert_eq!(fb.get(0, 0), [128, 128, 128, 255]);
        // x = 1: grey, then white at a = 128/255: 255·0.50196 + 128·0.49804 = 128 + 63.75
        // = 191.75 → 192, alpha min(1, 1 + 0.5) → 255. Mask coverage uint(0.50196·255) = 128.
        // Clippee: a = 128/255; Multiply with dst (192,192,192,255): (0.75294, 0, 0), dst.a = 1 →
        // out = BLEND; fb.r = 0.75294·0.50196 + 0.75294·0.49804 = 0.75294 → 192,
        // fb.g = 0 + 0.75294·0.49804 = 0.375 → 96.
        assert_eq!(fb.get(1, 0), [192, 96, 96, 255]);
        // x = 2: white at 128 over nothing: (128, 128, 128, 128); the clippee does not reach.
        assert_eq!(fb.get(2, 0), [128, 128, 128, 128]);
        // A clear wipes the mask: the clippee is discarded everywhere.
        f.draws.insert(3, DrawOp::ClearMask);
        assert_eq!(r.render(&f, 1.0).get(1, 0), [192, 192, 192, 255]);
    }

    #[test]
    fn hsv_layers_ignore_the_mask() {
        let (mut r, mut f) = squares(&[(0.0, 255)]);
        paint(&mut r, 0, [255, 0, 0, 255]);
        f.nodes[0].hsv = Some(HsvAdjust {
            hue: 120,
            ..HsvAdjust::DEFAULT
        });
        // Masked by clipper 7, which never wrote: still drawn, red turned green.
        f.draws = vec![DrawOp::Layer {
            node: 0,
            mask: Some(7),
        }];
        assert_eq!(r.render(&f, 1.0).get(0, 0), [0, 255, 0, 255]);
        // At scale 2 the square covers 4×4 pixels of an 8×4 image.
        let fb = r.render(&f, 2.0);
        assert_eq!((fb.width, fb.height), (8, 4));
        assert_eq!(fb.get(3, 3), [0, 255, 0, 255]);
        assert_eq!(fb.get(4, 0), [0; 4]);
    }

    #[test]
    fn a_nested_clipper_writes_only_inside_the_outer_mask() {
        // Layer 0 (outer clipper, opaque, x 0..2) → mask id 1 coverage 255 at x 0, 1.
        // Layer 1 (nested clipper, opaque at alpha8 102, x 1..3) within 1: coverage at x 1 =
        // uint(1 · 102/255 · 1 · 255) = 102; at x 2 the outer id is missing → nothing written.
        // Layer 2 (clippee of 2, white, x 1..3): alpha 102/255 at x 1, discarded at x 2.
        let (mut r, mut f) = squares(&[(0.0, 255), (1.0, 102), (1.0, 255)]);
        for n in 0..3 {
            paint(&mut r, n, [255, 255, 255, 255]);
        }
        f.draws = vec![
            DrawOp::WriteMask {
                node: 0,
                id: 1,
                within: None,
            },
            DrawOp::WriteMask {
                node: 1,
                id: 2,
                within: Some(1),
            },
            DrawOp::Layer {
                node: 2,
                mask: Some(2),
            },
        ];
        let fb = r.render(&f, 1.0);
        assert_eq!(fb.get(1, 0), [102, 102, 102, 102]);
        assert_eq!(fb.get(2, 0), [0; 4]);
    }
}
