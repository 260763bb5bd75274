//! [`replay`]: a [`Program`] executed on the CPU with the GPU's semantics, and nothing else (no
//! [`crate::anie::eval::EvaluatedFrame`]), so that a program's schedule can be checked against
//! [`super::Renderer::render`] pixel for pixel.
//!
//! State the GPU does not clear for us starts as garbage here, so that a missing
//! [`Step::CopyDestination`] or [`Step::ClearMask`] shows in the picture: the destination copy
//! is [`GARBAGE_COLOUR`] and the mask and its scratch copy are [`GARBAGE_TEXEL`].
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::ops::Range;

use super::RgbaImage;
use super::raster::{MeshVertex, rasterize_triangle, sample_bilinear_rect};
use crate::anie::atlas::ImageAtlas;
use crate::anie::blend::{
    BlendMode, ClipTexel, clip_coverage, composite, from_unorm8, hsv_fragment, layer_fragment,
};
use crate::anie::program::{LayerShader, Program, ProgramLayer, ProgramVertex, Step};
use glam::Vec2;

/// What the destination copy holds before the program's first copy.
pub(crate) const GARBAGE_COLOUR: [u8; 4] = [0xAB, 0x12, 0xCD, 0x77];

/// What the mask (and its scratch copy) holds before the program's first clear.
pub(crate) const GARBAGE_TEXEL: ClipTexel = ClipTexel {
    id: 0xEE,
    coverage: 0x5A,
};

/// Executes `program` (built with `atlas`) into a fresh colour target, transparent black, with
/// the GPU's semantics:
///
/// * [`Step::Draw`]: each triangle's entry (its first vertex's [`ProgramVertex::layer`](crate::anie::program::ProgramVertex::layer))
///   gives the shader; fragments come from [`rasterize_triangle`], texels from
///   [`sample_bilinear_rect`] of the entry's atlas rectangle, then
///   [`layer_fragment`] (the destination read from the copy for non-Normal modes) or
///   [`hsv_fragment`], and [`composite`] into the live target;
/// * [`Step::CopyDestination`]: the whole target into the copy;
/// * [`Step::WriteMask`]: a zero pass (`(id, 0)` under every covered pixel), then an add pass
///   (`coverage += clip_coverage(alpha · alpha8/255)`, saturating);
/// * [`Step::WriteNestedMask`]: the mask into the scratch copy, then `(id,
///   clip_coverage(alpha · alpha8/255 · outer))` where the scratch holds `within`
///   (`outer` = its coverage / 255);
/// * [`Step::ClearMask`]: the mask to `(0, 0)`.
///
/// Triangles with an index out of range, or whose entry does not fit the step, are skipped.
pub fn replay(program: &Program, atlas: &ImageAtlas) -> RgbaImage {
    let (width, height) = (program.width, program.height);
    let size = width as usize * height as usize;
    let mut state = State {
        program,
        atlas,
        fb: RgbaImage::new(width, height),
        dst: vec![GARBAGE_COLOUR; size],
        mask: vec![GARBAGE_TEXEL; size],
        scratch: vec![GARBAGE_TEXEL; size],
    };
    for step in &program.steps {
        match step {
            Step::Draw(range) => state.draw(range.clone()),
            Step::CopyDestination => state.dst.copy_from_slice(&state.fb.pixels),
            Step::WriteMask(range) => state.write_mask(range.clone()),
            Step::WriteNestedMask(range) => {
                state.scratch.copy_from_slice(&state.mask);
                state.write_nested(range.clone());
            }
            Step::ClearMask => state.mask.fill(ClipTexel::CLEAR),
        }
    }
    state.fb
}

struct State<'a> {
    program: &'a Program,
    atlas: &'a ImageAtlas,
    fb: RgbaImage,
    dst: Vec<[u8; 4]>,
    mask: Vec<ClipTexel>,
    scratch: Vec<ClipTexel>,
}

/// Every fragment of the triangles `indices[range]` of `p`: `f(entry, pixel index, uv)`, the
/// pixel's index row-major in the cell.
fn fragments(p: &Program, range: Range<u32>, mut f: impl FnMut(&ProgramLayer, usize, Vec2)) {
    let Some(indices) = p.indices.get(range.start as usize..range.end as usize) else {
        return;
    };
    for tri in indices.chunks_exact(3) {
        let vertex = |i: u32| p.vertices.get(i as usize).copied();
        let (Some(a), Some(b), Some(c)) = (vertex(tri[0]), vertex(tri[1]), vertex(tri[2])) else {
            continue;
        };
        let Some(layer) = p.layers.get(a.layer as usize) else {
            continue;
        };
        let mv = |v: ProgramVertex| MeshVertex {
            pos: v.position,
            uv: v.uv,
        };
        let width = p.width as usize;
        rasterize_triangle(p.width, p.height, [mv(a), mv(b), mv(c)], |x, y, uv| {
            f(layer, y as usize * width + x as usize, uv)
        });
    }
}

impl State<'_> {
    fn draw(&mut self, range: Range<u32>) {
        let (atlas, dst, mask) = (self.atlas, &self.dst, &self.mask);
        let fb = &mut self.fb.pixels;
        fragments(self.program, range, |layer, i, uv| {
            let Some(pixel) = fb.get_mut(i) else { return };
            let texel = sample_bilinear_rect(atlas, layer.image, uv);
            match layer.shader {
                LayerShader::Blend { mode, mask: clip } => {
                    let factor = match clip {
                        None => 1.0,
                        Some(id) => match mask.get(i).and_then(|t| t.clippee_factor(id)) {
                            Some(factor) => factor,
                            None => return,
                        },
                    };
                    let dst = if mode == BlendMode::Normal {
                        *pixel
                    } else {
                        dst.get(i).copied().unwrap_or_default()
                    };
                    *pixel = composite(
                        *pixel,
                        layer_fragment(mode, texel, layer.alpha8, factor, dst),
                    );
                }
                LayerShader::Hsv(hsv) => {
                    *pixel = composite(*pixel, hsv_fragment(texel, layer.alpha8, &hsv));
                }
                LayerShader::Mask { .. } => {}
            }
        });
    }

    fn write_mask(&mut self, range: Range<u32>) {
        let mask = &mut self.mask;
        // Zero pass.
        fragments(self.program, range.clone(), |layer, i, _| {
            if let (LayerShader::Mask { id, within: None }, Some(t)) =
                (layer.shader, mask.get_mut(i))
            {
                *t = ClipTexel { id, coverage: 0 };
            }
        });
        // Add pass.
        let atlas = self.atlas;
        let mask = &mut self.mask;
        fragments(self.program, range, |layer, i, uv| {
            if let (LayerShader::Mask { within: None, .. }, Some(t)) =
                (layer.shader, mask.get_mut(i))
            {
                let alpha = sample_bilinear_rect(atlas, layer.image, uv).w
                    * from_unorm8(layer.alpha8)
                    * 1.0;
                t.coverage = t.coverage.saturating_add(clip_coverage(alpha));
            }
        });
    }

    fn write_nested(&mut self, range: Range<u32>) {
        let (atlas, scratch, mask) = (self.atlas, &self.scratch, &mut self.mask);
        fragments(self.program, range, |layer, i, uv| {
            let LayerShader::Mask {
                id,
                within: Some(outer),
            } = layer.shader
            else {
                return;
            };
            let (Some(s), Some(t)) = (scratch.get(i), mask.get_mut(i)) else {
                return;
            };
            let Some(outer) = s.clippee_factor(outer) else {
                return;
            };
            let alpha =
                sample_bilinear_rect(atlas, layer.image, uv).w * from_unorm8(layer.alpha8) * outer;
            *t = ClipTexel {
                id,
                coverage: clip_coverage(alpha),
            };
        });
    }
}
