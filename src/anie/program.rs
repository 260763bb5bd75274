//! [`Program`]: an evaluated frame's draw sequence ([`EvaluatedFrame::draws`]) turned into GPU
//! work for one cell (one render target the size of the scaled canvas): a vertex and an index
//! buffer, one [`ProgramLayer`] per drawing entry, and the [`Step`]s that replay them.
//!
//! It is built here, without a GPU, so that the schedule can be tested: [`crate::anie::cpu::replay`]
//! executes a program with the GPU's semantics (a destination copy and a mask that start as
//! garbage, mask writes as a zero pass then an add pass) and must give exactly what
//! [`crate::anie::cpu::Renderer::render`] gives for the same frame.
//!
//! What a step does, and the state it relies on:
//!
//! * the **colour target** is cleared to transparent black before the first step;
//! * the **destination copy** (what non-Normal blend modes read, §4.9) holds whatever it held
//!   (the previous frame) until a [`Step::CopyDestination`]; the builder copies before the first
//!   non-Normal layer, and again only when something drawn since the last copy overlaps the
//!   layer ([`ProgramLayer::bounds`]);
//! * the **clipping mask** (§4.8, [`ClipTexel`](crate::anie::blend::ClipTexel) per pixel) also
//!   holds the previous frame: a program that uses it starts with [`Step::ClearMask`].
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::ops::Range;

use glam::Vec2;

use super::atlas::{ImageAtlas, PixelRect};
use super::blend::{BlendMode, HsvAdjust};
use super::cpu::raster::{MeshVertex, rasterize_triangle};
use super::cpu::scaled_size;
use super::eval::{DrawOp, EvaluatedFrame, LayerFrame, NodeFrame};

/// One vertex of a program.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ProgramVertex {
    /// Cell pixels: canvas pixels × scale, origin top-left, +y down.
    pub position: Vec2,
    /// As [`crate::anie::eval::LayerMesh::uvs`]: normalised within the layer's image (not the
    /// atlas); outside `[0, 1]` the transparent border is sampled.
    pub uv: Vec2,
    /// Index into [`Program::layers`]: the entry whose triangle this vertex belongs to.
    pub layer: u32,
}

/// What a layer entry is drawn as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LayerShader {
    /// [`layer_fragment`](crate::anie::blend::layer_fragment) with the blend mode, scaled by
    /// clipper `mask`'s coverage (fragments where the mask holds another id are discarded),
    /// then [`composite`](crate::anie::blend::composite). Non-Normal modes read the destination
    /// copy.
    Blend {
        /// The layer's blend mode (§4.9).
        mode: BlendMode,
        /// The clipper id whose mask scales it, if it is a clippee.
        mask: Option<u8>,
    },
    /// [`hsv_fragment`](crate::anie::blend::hsv_fragment): Normal compositing, unmasked
    /// ([`DrawOp::Layer`] of an HSV-active node, and [`DrawOp::HsvRedraw`] with the folder's
    /// adjustment, §4.10).
    Hsv(HsvAdjust),
    /// A clipper's coverage `clip_coverage(texel alpha · alpha8/255)` written into the mask under
    /// `id`; `within` as [`DrawOp::WriteMask`].
    Mask {
        /// The mask id written (1..=255).
        id: u8,
        /// The mask id the clipper is itself clipped by, if any.
        within: Option<u8>,
    },
}

/// One drawn entry (a layer draw, an HSV redraw, or a mask write): one per [`DrawOp`] that
/// draws something.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProgramLayer {
    /// The object node drawn (for [`DrawOp::HsvRedraw`], the layer, not the folder).
    pub node: usize,
    /// Its image in the [`ImageAtlas`].
    pub image: PixelRect,
    /// The node's 8-bit alpha ([`NodeFrame::alpha8`]).
    pub alpha8: u8,
    /// How it is drawn.
    pub shader: LayerShader,
    /// The pixels its triangles can touch in the cell: the bounding box of their positions,
    /// floor/ceil, clamped to the cell ([`PixelRect::covering`]). Never empty.
    pub bounds: PixelRect,
}

/// One step of a [`Program`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Draw triangles `indices[range]` ([`LayerShader::Blend`] and [`LayerShader::Hsv`]
    /// entries) into the colour target, in order.
    Draw(Range<u32>),
    /// Copy the colour target (the whole cell) into the destination copy that non-Normal layers
    /// read.
    CopyDestination,
    /// Non-nested mask writes of one id: `indices[range]`. The GPU does it as a "zero" pass
    /// (write `(id, 0)` under every covered pixel) then an "add" pass (coverage +=
    /// `clip_coverage`, saturating). That equals [`ClipTexel::write`](crate::anie::blend::ClipTexel::write)
    /// fragment by fragment (the sum is the same in any order) as long as each id's writes
    /// between clears are consecutive, as [`EvaluatedFrame::draws`] orders them (the builder
    /// merges them into one step). A hand-made frame that wrote an id again after other steps
    /// would have its earlier coverage of that id reset by the zero pass.
    WriteMask(Range<u32>),
    /// A nested mask write (`within: Some`): copy the mask into a scratch copy, then, where the
    /// scratch holds `within`, write `(id, clip_coverage(alpha · outer))` with `outer` the
    /// scratch's coverage / 255; elsewhere the mask keeps what it holds. No two triangles of
    /// one step cover the same pixel (the builder splits a clipper whose mesh folds over
    /// itself into several steps), so the order of writes within a step does not matter.
    WriteNestedMask(Range<u32>),
    /// Set the whole cell's mask to `(0, 0)`.
    ClearMask,
}

/// A frame as GPU work for one cell.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    /// The cell's width in pixels ([`scaled_size`]).
    pub width: u32,
    /// The cell's height in pixels.
    pub height: u32,
    /// Every entry's vertices, entry after entry.
    pub vertices: Vec<ProgramVertex>,
    /// Triangles, three indices each, into [`Self::vertices`] (absolute), in draw order.
    pub indices: Vec<u32>,
    /// The drawn entries; [`ProgramVertex::layer`] indexes them.
    pub layers: Vec<ProgramLayer>,
    /// What to do, in order.
    pub steps: Vec<Step>,
}

/// A run of draws and the barrier that ends it ([`Program::segments`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Triangles `indices[draws]` to draw (may be empty).
    pub draws: Range<u32>,
    /// What must happen after them before anything else draws; `None` for the program's last
    /// draws.
    pub barrier: Option<Barrier>,
}

/// What ends a [`Segment`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Barrier {
    /// [`Step::CopyDestination`].
    CopyDestination,
    /// Consecutive [`Step::ClearMask`] / [`Step::WriteMask`] steps, in order.
    Mask(Vec<MaskStep>),
    /// [`Step::WriteNestedMask`].
    NestedMask(Range<u32>),
}

/// One mask step of a [`Barrier::Mask`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MaskStep {
    /// [`Step::ClearMask`].
    Clear,
    /// [`Step::WriteMask`].
    Write(Range<u32>),
}

impl Program {
    /// The program of `frame` for a cell at `scale` times the canvas ([`scaled_size`]; a scale
    /// that is not a positive finite number counts as 1), drawing from `atlas` (which must be
    /// the [`ImageAtlas`] of the frame's project).
    ///
    /// * A node draws only if it is visible, its `alpha8` is above 0 and its image has a
    ///   rectangle in the atlas (as [`crate::anie::cpu::Renderer`] decides). Triangles with an
    ///   index out of range are dropped; an entry left without triangles, or whose triangles
    ///   all lie off the cell, is dropped too (it would draw nothing).
    /// * A clippee whose mask id has not been written since the last clear is dropped: the mask
    ///   cannot hold that id, so every fragment would be discarded.
    /// * Positions are the mesh's × scale, the same `f32` product the CPU renderer rasterises.
    /// * See [`Step`] for the copies and the mask steps. A nested clipper's triangles are
    ///   rasterised here (on the CPU) to find where its mesh folds over itself
    ///   ([`Step::WriteNestedMask`]); nothing else is.
    pub fn build(frame: &EvaluatedFrame, atlas: &ImageAtlas, scale: f32) -> Program {
        let (width, height) = scaled_size(frame.canvas_width, frame.canvas_height, scale);
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        let mut b = Builder {
            program: Program {
                width,
                height,
                ..Program::default()
            },
            atlas,
            frame,
            scale,
            copied: false,
            since_copy: PixelRect::EMPTY,
            written: [false; 256],
            uses_mask: false,
        };
        for op in &frame.draws {
            match *op {
                DrawOp::Layer { node, mask } => {
                    let Some((n, layer, image)) = b.layer(node) else {
                        continue;
                    };
                    match n.hsv {
                        Some(hsv) => b.draw(node, n, layer, image, LayerShader::Hsv(hsv)),
                        None => {
                            if let Some(id) = mask {
                                if id != 0 && !b.written[usize::from(id)] {
                                    continue;
                                }
                                b.uses_mask = true;
                            }
                            let shader = LayerShader::Blend {
                                mode: layer.blend_mode,
                                mask,
                            };
                            b.draw(node, n, layer, image, shader);
                        }
                    }
                }
                DrawOp::HsvRedraw { layer, folder } => {
                    let Some(hsv) = frame.nodes.get(folder).and_then(|f| f.hsv) else {
                        continue;
                    };
                    if let Some((n, l, image)) = b.layer(layer) {
                        b.draw(layer, n, l, image, LayerShader::Hsv(hsv));
                    }
                }
                DrawOp::WriteMask { node, id, within } => {
                    if let Some((n, layer, image)) = b.layer(node) {
                        b.write_mask(node, n, layer, image, id, within);
                    }
                }
                DrawOp::ClearMask => {
                    b.program.steps.push(Step::ClearMask);
                    b.written = [false; 256];
                }
            }
        }
        let mut program = b.program;
        if b.uses_mask {
            program.steps.insert(0, Step::ClearMask);
        }
        program
    }

    /// The steps grouped for batching across rigs: runs of [`Step::Draw`] merged into one range
    /// (they are contiguous), each followed by the barrier that ends it; consecutive
    /// [`Step::ClearMask`] / [`Step::WriteMask`] steps form one [`Barrier::Mask`]. A segment
    /// whose barrier follows another barrier directly has an empty `draws` range. Only the last
    /// segment may have no barrier; a program without steps has no segment.
    pub fn segments(&self) -> Vec<Segment> {
        let mut segments: Vec<Segment> = Vec::new();
        let mut draws: Option<Range<u32>> = None;
        let mut end = 0;
        for step in &self.steps {
            let barrier = match step {
                Step::Draw(r) => {
                    draws = Some(match draws.take() {
                        None => r.clone(),
                        Some(d) => d.start..r.end,
                    });
                    end = r.end;
                    continue;
                }
                Step::CopyDestination => Barrier::CopyDestination,
                Step::WriteNestedMask(r) => Barrier::NestedMask(r.clone()),
                Step::ClearMask | Step::WriteMask(_) => {
                    let mask = match step {
                        Step::WriteMask(r) => MaskStep::Write(r.clone()),
                        _ => MaskStep::Clear,
                    };
                    if draws.is_none()
                        && let Some(Segment {
                            barrier: Some(Barrier::Mask(steps)),
                            ..
                        }) = segments.last_mut()
                    {
                        steps.push(mask);
                        continue;
                    }
                    Barrier::Mask(vec![mask])
                }
            };
            segments.push(Segment {
                draws: draws.take().unwrap_or(end..end),
                barrier: Some(barrier),
            });
        }
        if let Some(draws) = draws {
            segments.push(Segment {
                draws,
                barrier: None,
            });
        }
        segments
    }

    /// The number of [`Step::CopyDestination`] steps.
    pub fn copy_count(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::CopyDestination))
            .count()
    }

    /// The number of mask steps: [`Step::ClearMask`], [`Step::WriteMask`] and
    /// [`Step::WriteNestedMask`].
    pub fn mask_pass_count(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| {
                matches!(
                    s,
                    Step::ClearMask | Step::WriteMask(_) | Step::WriteNestedMask(_)
                )
            })
            .count()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// [`Program::build`]'s state.
struct Builder<'a> {
    program: Program,
    atlas: &'a ImageAtlas,
    frame: &'a EvaluatedFrame,
    scale: f32,
    /// Whether the program has copied the destination yet.
    copied: bool,
    /// What has been drawn since the last copy.
    since_copy: PixelRect,
    /// The mask ids written since the last clear.
    written: [bool; 256],
    /// Whether any step reads or writes the mask.
    uses_mask: bool,
}

impl<'a> Builder<'a> {
    /// A layer node that draws something: visible, alpha above 0, with an image in the atlas.
    fn layer(&self, node: usize) -> Option<(&'a NodeFrame, &'a LayerFrame, PixelRect)> {
        let n = self.frame.nodes.get(node)?;
        let layer = n.layer.as_ref()?;
        let image = self.atlas.rect(layer.resource?)?;
        (n.visible && n.alpha8 > 0).then_some((n, layer, image))
    }

    /// Appends the entry's vertices and valid triangles; `None` (and nothing appended) when it
    /// would draw nothing.
    fn append(
        &mut self,
        node: usize,
        n: &NodeFrame,
        layer: &LayerFrame,
        image: PixelRect,
        shader: LayerShader,
    ) -> Option<(Range<u32>, PixelRect)> {
        let mesh = &layer.mesh;
        let count = mesh.positions.len().min(mesh.uvs.len());
        let scale = self.scale;
        let position = |i: u32| mesh.positions[i as usize] * scale;
        let valid: Vec<&[u32]> = mesh
            .indices
            .chunks_exact(3)
            .filter(|t| t.iter().all(|&i| (i as usize) < count))
            .collect();
        let bounds = PixelRect::covering(
            valid.iter().flat_map(|t| t.iter().map(|&i| position(i))),
            self.program.width,
            self.program.height,
        );
        if bounds.is_empty() {
            return None;
        }
        let p = &mut self.program;
        let entry = u32::try_from(p.layers.len()).ok()?;
        let base = u32::try_from(p.vertices.len()).ok()?;
        let start = u32::try_from(p.indices.len()).ok()?;
        p.vertices.extend(
            mesh.positions
                .iter()
                .zip(&mesh.uvs)
                .map(|(&pos, &uv)| ProgramVertex {
                    position: pos * scale,
                    uv,
                    layer: entry,
                }),
        );
        p.indices
            .extend(valid.iter().flat_map(|t| t.iter().map(|&i| base + i)));
        p.layers.push(ProgramLayer {
            node,
            image,
            alpha8: n.alpha8,
            shader,
            bounds,
        });
        Some((start..p.indices.len() as u32, bounds))
    }

    /// A Blend or Hsv entry, with the destination copy it needs.
    fn draw(
        &mut self,
        node: usize,
        n: &NodeFrame,
        layer: &LayerFrame,
        image: PixelRect,
        shader: LayerShader,
    ) {
        let copy_at = self.program.steps.len();
        let Some((range, bounds)) = self.append(node, n, layer, image, shader) else {
            return;
        };
        let non_normal =
            matches!(shader, LayerShader::Blend { mode, .. } if mode != BlendMode::Normal);
        if non_normal && (!self.copied || bounds.intersects(&self.since_copy)) {
            self.program.steps.insert(copy_at, Step::CopyDestination);
            self.copied = true;
            self.since_copy = PixelRect::EMPTY;
        }
        self.since_copy = self.since_copy.union(&bounds);
        match self.program.steps.last_mut() {
            Some(Step::Draw(last)) if last.end == range.start => last.end = range.end,
            _ => self.program.steps.push(Step::Draw(range)),
        }
    }

    /// A clipper's mask write.
    fn write_mask(
        &mut self,
        node: usize,
        n: &NodeFrame,
        layer: &LayerFrame,
        image: PixelRect,
        id: u8,
        within: Option<u8>,
    ) {
        if let Some(outer) = within
            && outer != 0
            && !self.written[usize::from(outer)]
        {
            // The mask holds no `outer` texel: nothing is written.
            return;
        }
        // Whether the last step is a non-nested write of this id, to extend.
        let extend = match self.program.steps.last() {
            Some(Step::WriteMask(r)) if within.is_none() => {
                let last = self.program.indices[r.start as usize];
                let entry = self.program.vertices[last as usize].layer as usize;
                matches!(self.program.layers[entry].shader, LayerShader::Mask { id: i, .. } if i == id)
            }
            _ => false,
        };
        let shader = LayerShader::Mask { id, within };
        let Some((range, bounds)) = self.append(node, n, layer, image, shader) else {
            return;
        };
        self.uses_mask = true;
        self.written[usize::from(id)] = true;
        match (within, self.program.steps.last_mut()) {
            (None, Some(Step::WriteMask(last))) if extend => last.end = range.end,
            (None, _) => self.program.steps.push(Step::WriteMask(range)),
            (Some(_), _) => {
                for part in self.unfolded(range, bounds) {
                    self.program.steps.push(Step::WriteNestedMask(part));
                }
            }
        }
    }

    /// `range` (one nested mask entry's triangles, inside `bounds`) cut into runs in which no
    /// two triangles cover the same pixel. On the CPU the first fragment at a pixel replaces
    /// the outer id, so later fragments of the same clipper there write nothing; a GPU pass
    /// reading a scratch copy would let the last one win instead. Each run gets its own
    /// scratch copy, which then holds the new id where an earlier run wrote: first wins, as on
    /// the CPU. A mesh that does not fold over itself is one run.
    fn unfolded(&self, range: Range<u32>, bounds: PixelRect) -> Vec<Range<u32>> {
        let p = &self.program;
        let mut covered = vec![false; bounds.area() as usize];
        let mut parts = Vec::new();
        let mut start = range.start;
        let mut t = range.start;
        while t < range.end {
            let tri = &p.indices[t as usize..t as usize + 3];
            let vertex = |i: u32| {
                let v = p.vertices[i as usize];
                MeshVertex {
                    pos: v.position,
                    uv: v.uv,
                }
            };
            let triangle = [vertex(tri[0]), vertex(tri[1]), vertex(tri[2])];
            let mut pixels = Vec::new();
            rasterize_triangle(p.width, p.height, triangle, |x, y, _| {
                // Always inside: `bounds` covers every fragment of the entry.
                if bounds.contains(x, y) {
                    pixels.push(((y - bounds.y) * bounds.width + (x - bounds.x)) as usize);
                }
            });
            if t > start && pixels.iter().any(|&i| covered[i]) {
                parts.push(start..t);
                start = t;
                covered.fill(false);
            }
            for i in pixels {
                covered[i] = true;
            }
            t += 3;
        }
        parts.push(start..range.end);
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_group_draws_and_mask_steps() {
        let program = Program {
            steps: vec![
                Step::Draw(0..3),
                Step::Draw(3..9),
                Step::ClearMask,
                Step::WriteMask(9..12),
                Step::WriteNestedMask(12..15),
                Step::ClearMask,
                Step::Draw(15..18),
                Step::CopyDestination,
                Step::Draw(18..21),
            ],
            ..Program::default()
        };
        let mask = |steps| Some(Barrier::Mask(steps));
        assert_eq!(
            program.segments(),
            vec![
                Segment {
                    draws: 0..9,
                    barrier: mask(vec![MaskStep::Clear, MaskStep::Write(9..12)]),
                },
                Segment {
                    draws: 9..9,
                    barrier: Some(Barrier::NestedMask(12..15)),
                },
                // Not merged into the first mask barrier: the nested write is between.
                Segment {
                    draws: 9..9,
                    barrier: mask(vec![MaskStep::Clear]),
                },
                Segment {
                    draws: 15..18,
                    barrier: Some(Barrier::CopyDestination),
                },
                Segment {
                    draws: 18..21,
                    barrier: None,
                },
            ]
        );
        assert_eq!(program.copy_count(), 1);
        assert_eq!(program.mask_pass_count(), 4);
        assert_eq!(Program::default().segments(), Vec::new());
    }
}
