//! The CPU reference renderer: an [`EvaluatedFrame`]'s draw sequence replayed into an RGBA8
//! framebuffer the way AnimeEffects 1.7's exporter fills its own (spec §4.7–§4.10, Addendum 1).
//!
//! * The framebuffer starts transparent black (the exporter's clear colour).
//! * Each layer fragment is [`layer_fragment`] (straight alpha, `dst.a`-weighted blend mode,
//!   8-bit opacity, clip mask) composited by [`composite`]: colour `SRC_ALPHA,
//!   ONE_MINUS_SRC_ALPHA`, alpha **added**. The result is what `NAME_fF.raw.png` in the reference
//!   folder holds; the PNG AnimeEffects saves is [`exported_png`] of it.
//! * Non-Normal blend modes read the destination from a copy of the framebuffer made just before
//!   the layer is drawn (§4.9), 8 bits per channel.
//! * The clipping mask is an 8-bit id and an 8-bit coverage per pixel ([`ClipTexel`]), cleared
//!   at the start of the frame and when the ids wrap (§4.8). A clipper's coverage is
//!   `uint(texel alpha · alpha8/255 · 255)`: the opacity as the 8-bit alpha the layer is drawn
//!   with, which fits AnimeEffects' `clip_v8` framebuffers slightly better than the unrounded
//!   world opacity.
//! * HSV-active layers and folder HSV re-draws use [`hsv_fragment`] with Normal compositing,
//!   unmasked (§4.10).
//! * Triangles are rasterised by [`crate::anie::raster`] (pixel centres, 1/256 px snapping,
//!   top-left rule, bilinear sampling with a transparent border).
//!
//! `scale` multiplies the canvas and every vertex position; textures are sampled as they are.

use std::collections::HashMap;

use super::blend::{
    BlendMode, ClipTexel, HsvAdjust, clip_coverage, composite, from_unorm8, hsv_fragment,
    layer_fragment,
};
use super::eval::{DrawOp, EvaluatedFrame, LayerFrame};
use super::raster::{MeshVertex, RgbaImage, draw_mesh, rasterize_triangle, sample_bilinear};
use crate::formats::anie::{AnimeProject, MAX_IMAGE_SIDE, ResourceRef};

/// The largest side of a rendered image, in pixels; larger requests are cut to it.
pub const MAX_RENDER_SIDE: u32 = MAX_IMAGE_SIDE;

/// [`Renderer::render`] with a one-off [`Renderer`].
pub fn render(project: &AnimeProject, frame: &EvaluatedFrame, scale: f32) -> RgbaImage {
    Renderer::new(project).render(frame, scale)
}

/// Renders frames of one project; holds its images as textures.
#[derive(Clone, Debug)]
pub struct Renderer {
    textures: HashMap<ResourceRef, RgbaImage>,
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
    pub fn new(project: &AnimeProject) -> Self {
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
        Self { textures }
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
    ) -> Option<(&'f super::eval::NodeFrame, &'f LayerFrame, &RgbaImage)> {
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
pub fn unpremultiply(p: [u8; 4]) -> [u8; 4] {
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
