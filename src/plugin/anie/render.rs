//! The render world's part: the cells to draw, packed into shared buffers and drawn by one
//! layer pipeline (every blend mode, HSV, the clipping mask) in rounds across the rigs of a
//! page: a pass for every rig's draws up to its next barrier, then the barriers (destination
//! copies, mask passes). The number of passes is set by the rig with the most barriers, not by
//! the number of rigs.

use super::draw::{AnieDrawList, CellDraw};
use crate::anie::atlas::PixelRect;
use crate::anie::program::{Barrier, LayerShader, MaskStep, Program, Segment};
use bevy::asset::{AssetId, load_embedded_asset};
use bevy::core_pipeline::schedule::camera_driver;
use bevy::mesh::VertexBufferLayout;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::binding_types::{storage_buffer_read_only_sized, texture_2d};
use bevy::render::render_resource::*;
use bevy::render::renderer::{RenderContext, RenderDevice, RenderGraph, RenderQueue};
use bevy::render::texture::GpuImage;
use bevy::render::{Extract, ExtractSchedule, RenderApp, RenderStartup};
use std::ops::Range;
use std::sync::Arc;
use wgpu::RenderPass;

/// Adds the render-world systems.
pub(crate) fn build(app: &mut App) {
    let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
        return;
    };
    render_app
        .init_resource::<PendingCells>()
        .init_resource::<AnieGpu>()
        .init_resource::<AnieRenderStats>()
        .add_systems(RenderStartup, init_pipelines)
        .add_systems(ExtractSchedule, extract_draws)
        .add_systems(RenderGraph, render_cells.before(camera_driver));
}

/// Cells waiting to be drawn: a cell whose page, atlas or pipelines are not on the GPU yet
/// waits (its latest frame replaces an older one).
#[derive(Resource, Default)]
struct PendingCells {
    cells: HashMap<(AssetId<Image>, u32, u32), CellDraw>,
    /// The cell size of each page's waiting draws (a page holds one size at a time).
    sizes: HashMap<AssetId<Image>, (u32, u32)>,
}

fn extract_draws(mut pending: ResMut<PendingCells>, list: Extract<Res<AnieDrawList>>) {
    let pending = &mut *pending;
    for draw in &list.draws {
        // A newer draw wins over anything still waiting under its pixels: the cell's older
        // frame (same key), or, after a page emptied and took another cell size, the old
        // cells it overlaps.
        let size = (draw.rect.width, draw.rect.height);
        if pending
            .sizes
            .insert(draw.page, size)
            .is_some_and(|s| s != size)
        {
            pending
                .cells
                .retain(|(page, _, _), d| *page != draw.page || !d.rect.intersects(&draw.rect));
        }
        pending
            .cells
            .insert((draw.page, draw.rect.x, draw.rect.y), draw.clone());
    }
}

/// What the rig renderer did, in the render world (`app.sub_app(RenderApp)`): for tests,
/// benchmarks and on-screen counters.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnieRenderStats {
    /// Cells waiting for their page, atlas or pipelines to reach the GPU.
    pub pending: usize,
    /// Cells drawn since the app started.
    pub drawn: u64,
    /// Cells drawn in the last frame that drew any.
    pub cells: usize,
    /// Distinct programs packed in that frame (rigs at the same key share one).
    pub programs: usize,
    /// Render passes encoded in that frame.
    pub passes: usize,
    /// Indexed draws encoded in that frame.
    pub draws: usize,
    /// Texture copies encoded in that frame (destination and mask copies).
    pub copies: usize,
    /// CPU time of this frame's packing, upload and encoding (not the GPU's execution); zero in
    /// a frame that drew nothing.
    pub time: std::time::Duration,
}

#[derive(Resource)]
struct AniePipelines {
    layers: BindGroupLayoutDescriptor,
    atlas: BindGroupLayoutDescriptor,
    layer: CachedRenderPipelineId,
    clear_color: CachedRenderPipelineId,
    clear_mask: CachedRenderPipelineId,
    mask_zero: CachedRenderPipelineId,
    mask_add: CachedRenderPipelineId,
    mask_nested: CachedRenderPipelineId,
}

/// Bytes of one vertex: position (2 × f32), uv (2 × f32), layer (u32).
const VERTEX_SIZE: u64 = 20;
/// Bytes of one layer entry (the WGSL `Layer`).
const LAYER_SIZE: u64 = 64;

fn init_pipelines(
    mut commands: Commands,
    asset_server: Res<AssetServer>,
    cache: Res<PipelineCache>,
) {
    let shader: Handle<Shader> = load_embedded_asset!(&*asset_server, "layer.wgsl");
    let layers = BindGroupLayoutDescriptor::new(
        "anie_layers",
        &BindGroupLayoutEntries::sequential(
            ShaderStages::VERTEX_FRAGMENT,
            (
                storage_buffer_read_only_sized(false, None),
                texture_2d(TextureSampleType::Float { filterable: false }),
                texture_2d(TextureSampleType::Uint),
                texture_2d(TextureSampleType::Float { filterable: false }),
            ),
        ),
    );
    let atlas = BindGroupLayoutDescriptor::new(
        "anie_atlas",
        &BindGroupLayoutEntries::single(
            ShaderStages::FRAGMENT,
            texture_2d(TextureSampleType::Float { filterable: false }),
        ),
    );
    let vertex_layout = VertexBufferLayout::from_vertex_formats(
        VertexStepMode::Vertex,
        [
            VertexFormat::Float32x2,
            VertexFormat::Float32x2,
            VertexFormat::Uint32,
        ],
    );
    // Per rig: its cell (x, y, width, height), its program's layer base, the page side, at
    // shader locations 3, 4, 5.
    let mut instance_layout = VertexBufferLayout::from_vertex_formats(
        VertexStepMode::Instance,
        [
            VertexFormat::Float32x4,
            VertexFormat::Uint32,
            VertexFormat::Float32,
        ],
    );
    for a in &mut instance_layout.attributes {
        a.shader_location += 3;
    }
    let target = |format, blend, write_mask| {
        Some(ColorTargetState {
            format,
            blend,
            write_mask,
        })
    };
    let add = BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    };
    // `blend::composite`: colour over, alpha added.
    let composite = BlendState {
        color: BlendComponent {
            src_factor: BlendFactor::SrcAlpha,
            dst_factor: BlendFactor::OneMinusSrcAlpha,
            operation: BlendOperation::Add,
        },
        alpha: add,
    };
    let mask = |id_writes, coverage_blend| {
        vec![
            target(TextureFormat::R8Uint, None, id_writes),
            target(TextureFormat::R8Unorm, coverage_blend, ColorWrites::ALL),
        ]
    };
    let mesh_pipeline = |label: &'static str, entry: &'static str, targets| {
        cache.queue_render_pipeline(RenderPipelineDescriptor {
            label: Some(label.into()),
            layout: vec![layers.clone(), atlas.clone()],
            vertex: VertexState {
                shader: shader.clone(),
                entry_point: Some("vertex".into()),
                buffers: vec![vertex_layout.clone(), instance_layout.clone()],
                ..default()
            },
            fragment: Some(FragmentState {
                shader: shader.clone(),
                entry_point: Some(entry.into()),
                targets,
                ..default()
            }),
            primitive: PrimitiveState {
                topology: PrimitiveTopology::TriangleList,
                cull_mode: None,
                ..default()
            },
            ..default()
        })
    };
    let cell_pipeline = |label: &'static str, entry: &'static str, targets| {
        // The page's cells at once (colour clears), or the viewport's cell (mask clears).
        let (vertex, buffers) = match entry {
            "clear_color" => (
                "cells_vertex",
                vec![VertexBufferLayout::from_vertex_formats(
                    VertexStepMode::Instance,
                    [VertexFormat::Float32x4, VertexFormat::Float32],
                )],
            ),
            _ => ("cell_vertex", Vec::new()),
        };
        cache.queue_render_pipeline(RenderPipelineDescriptor {
            label: Some(label.into()),
            vertex: VertexState {
                shader: shader.clone(),
                entry_point: Some(vertex.into()),
                buffers,
                ..default()
            },
            fragment: Some(FragmentState {
                shader: shader.clone(),
                entry_point: Some(entry.into()),
                targets,
                ..default()
            }),
            primitive: PrimitiveState {
                topology: PrimitiveTopology::TriangleStrip,
                ..default()
            },
            ..default()
        })
    };
    let color = TextureFormat::Rgba8Unorm;
    let pipelines = AniePipelines {
        layer: mesh_pipeline(
            "anie_layer",
            "layer",
            vec![target(color, Some(composite), ColorWrites::ALL)],
        ),
        clear_color: cell_pipeline(
            "anie_clear_color",
            "clear_color",
            vec![target(color, None, ColorWrites::ALL)],
        ),
        clear_mask: cell_pipeline(
            "anie_clear_mask",
            "clear_mask",
            mask(ColorWrites::ALL, None),
        ),
        mask_zero: mesh_pipeline("anie_mask_zero", "mask_zero", mask(ColorWrites::ALL, None)),
        mask_add: mesh_pipeline(
            "anie_mask_add",
            "mask_add",
            mask(
                ColorWrites::empty(),
                Some(BlendState {
                    color: add,
                    alpha: add,
                }),
            ),
        ),
        mask_nested: mesh_pipeline(
            "anie_mask_nested",
            "mask_nested",
            mask(ColorWrites::ALL, None),
        ),
        layers,
        atlas,
    };
    commands.insert_resource(pipelines);
}

/// A texture with its default view.
struct PageTexture {
    texture: Texture,
    view: TextureView,
}

impl PageTexture {
    fn new(device: &RenderDevice, side: u32, format: TextureFormat, usage: TextureUsages) -> Self {
        let texture = device.create_texture(&TextureDescriptor {
            label: Some("anie_page"),
            size: Extent3d {
                width: side,
                height: side,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        });
        let view = texture.create_view(&TextureViewDescriptor::default());
        Self { texture, view }
    }
}

/// What a page needs beside its colour texture: the destination copy that non-Normal layers
/// read, the clipping mask (id and coverage) and the mask's copy for nested clippers.
struct PageTextures {
    side: u32,
    /// The page's two layer bind groups (main pass, mask pass), and the layer buffer they bind.
    groups: Option<(BufferId, BindGroup, BindGroup)>,
    copy: PageTexture,
    mask_id: PageTexture,
    mask_coverage: PageTexture,
    scratch_id: PageTexture,
    scratch_coverage: PageTexture,
}

impl PageTextures {
    fn new(device: &RenderDevice, side: u32) -> Self {
        let sampled = TextureUsages::TEXTURE_BINDING | TextureUsages::COPY_DST;
        let target = TextureUsages::TEXTURE_BINDING
            | TextureUsages::RENDER_ATTACHMENT
            | TextureUsages::COPY_SRC;
        Self {
            side,
            groups: None,
            copy: PageTexture::new(device, side, TextureFormat::Rgba8Unorm, sampled),
            mask_id: PageTexture::new(device, side, TextureFormat::R8Uint, target),
            mask_coverage: PageTexture::new(device, side, TextureFormat::R8Unorm, target),
            scratch_id: PageTexture::new(device, side, TextureFormat::R8Uint, sampled),
            scratch_coverage: PageTexture::new(device, side, TextureFormat::R8Unorm, sampled),
        }
    }
}

/// A buffer that grows to what is written into it.
struct GrowingBuffer {
    buffer: Option<Buffer>,
    usage: BufferUsages,
    label: &'static str,
}

impl GrowingBuffer {
    fn new(label: &'static str, usage: BufferUsages) -> Self {
        Self {
            buffer: None,
            usage: usage | BufferUsages::COPY_DST,
            label,
        }
    }

    fn write(&mut self, device: &RenderDevice, queue: &RenderQueue, bytes: &[u8]) -> &Buffer {
        let needed = (bytes.len() as u64).max(256);
        if self.buffer.as_ref().is_none_or(|b| b.size() < needed) {
            self.buffer = Some(device.create_buffer(&BufferDescriptor {
                label: Some(self.label),
                size: needed.next_power_of_two(),
                usage: self.usage,
                mapped_at_creation: false,
            }));
        }
        let buffer = self.buffer.as_ref().expect("just made");
        queue.write_buffer(buffer, 0, bytes);
        buffer
    }
}

/// The render world's state: the pages' extra textures and the shared buffers.
#[derive(Resource)]
struct AnieGpu {
    pages: HashMap<AssetId<Image>, PageTextures>,
    vertices: GrowingBuffer,
    indices: GrowingBuffer,
    layers: GrowingBuffer,
    /// Cell rectangles to clear, one instance each.
    clears: GrowingBuffer,
    /// Each drawn cell's instance: its rectangle, its program's layer base, the page side.
    instances: GrowingBuffer,
    /// Each project atlas's bind group, with the texture view it was made for.
    atlas_groups: HashMap<AssetId<Image>, (TextureViewId, BindGroup)>,
}

impl Default for AnieGpu {
    fn default() -> Self {
        Self {
            pages: HashMap::default(),
            clears: GrowingBuffer::new("anie_clears", BufferUsages::VERTEX),
            instances: GrowingBuffer::new("anie_instances", BufferUsages::VERTEX),
            atlas_groups: HashMap::default(),
            vertices: GrowingBuffer::new("anie_vertices", BufferUsages::VERTEX),
            indices: GrowingBuffer::new("anie_indices", BufferUsages::INDEX),
            layers: GrowingBuffer::new("anie_layers", BufferUsages::STORAGE),
        }
    }
}

/// A vertex as the layer shader reads it (`VERTEX_SIZE` bytes).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuVertex {
    position: [f32; 2],
    uv: [f32; 2],
    layer: u32,
}

/// Where a program lies in the shared buffers.
struct Packed {
    vertex_base: i32,
    index_base: u32,
    layer_base: u32,
    segments: Vec<Segment>,
}

/// Appends a program's vertices, indices and layer entries.
fn pack(
    program: &Program,
    vertices: &mut Vec<u8>,
    indices: &mut Vec<u8>,
    layers: &mut Vec<u8>,
) -> Packed {
    let packed = Packed {
        vertex_base: (vertices.len() as u64 / VERTEX_SIZE) as i32,
        index_base: (indices.len() / 4) as u32,
        layer_base: (layers.len() as u64 / LAYER_SIZE) as u32,
        segments: program.segments(),
    };
    let gpu: Vec<GpuVertex> = program
        .vertices
        .iter()
        .map(|v| GpuVertex {
            position: v.position.to_array(),
            uv: v.uv.to_array(),
            layer: v.layer,
        })
        .collect();
    vertices.extend_from_slice(bytemuck::cast_slice(&gpu));
    indices.extend_from_slice(bytemuck::cast_slice(&program.indices));
    for l in &program.layers {
        let (kind, mode, mask, within, hsv) = match l.shader {
            LayerShader::Blend { mode, mask } => (0u32, mode as u32, mask.unwrap_or(0), 0, None),
            LayerShader::Hsv(hsv) => (1, 0, 0, 0, Some(hsv)),
            LayerShader::Mask { id, within } => (2, 0, id, within.unwrap_or(0), None),
        };
        let mut words = [0u32; 16];
        words[..4].copy_from_slice(&[l.image.x, l.image.y, l.image.width, l.image.height]);
        words[4] = crate::anie::blend::from_unorm8(l.alpha8).to_bits();
        words[5] = kind;
        words[6] = mode;
        words[7] = u32::from(mask);
        words[8] = u32::from(within);
        // Words 10 and 11 pad the vec4 that follows to its 16-byte alignment.
        if let Some(hsv) = hsv {
            words[9] = u32::from(hsv.absolute);
            words[12] = hsv.hue as u32;
            words[13] = hsv.sat as u32;
            words[14] = hsv.val as u32;
        }
        layers.extend_from_slice(bytemuck::cast_slice(&words));
    }
    packed
}

/// A cell ready to draw this frame.
struct ReadyCell<'a> {
    rect: PixelRect,
    atlas: AssetId<Image>,
    packed: &'a Packed,
    /// Its entry in the instance buffer (its cell, its program's layer base, the page side).
    instance: u32,
}

impl<'a> ReadyCell<'a> {
    /// Its `round`-th segment: the draws up to its next barrier, and the barrier.
    fn segment(&self, round: usize) -> Option<&'a Segment> {
        self.packed.segments.get(round)
    }

    fn indices(&self, range: &Range<u32>) -> Range<u32> {
        self.packed.index_base + range.start..self.packed.index_base + range.end
    }

    /// Whether two cells draw the same program (and so the same steps).
    fn same_program(&self, other: &ReadyCell) -> bool {
        std::ptr::eq(self.packed, other.packed)
    }

    /// Limits drawing to the cell (for the mask clears, drawn as one quad per cell).
    fn bound(&self, pass: &mut RenderPass<'_>) {
        let r = self.rect;
        pass.set_viewport(
            r.x as f32,
            r.y as f32,
            r.width as f32,
            r.height as f32,
            0.0,
            1.0,
        );
        pass.set_scissor_rect(r.x, r.y, r.width, r.height);
    }
}

/// Runs of consecutive cells with the same program whose `round`-th segment passes `keep`:
/// each run is one instanced draw (the first cell, the instances).
fn runs<'c, 'a>(
    cells: &'c [ReadyCell<'a>],
    round: usize,
    keep: impl Fn(&Segment) -> bool,
) -> Vec<(&'c ReadyCell<'a>, &'a Segment, Range<u32>)> {
    let mut out: Vec<(&ReadyCell, &Segment, Range<u32>)> = Vec::new();
    for c in cells {
        let Some(s) = c.segment(round).filter(|s| keep(s)) else {
            continue;
        };
        match out.last_mut() {
            Some((first, _, instances)) if first.same_program(c) && instances.end == c.instance => {
                instances.end += 1;
            }
            _ => out.push((c, s, c.instance..c.instance + 1)),
        }
    }
    out
}

/// The whole page as the viewport and scissor again.
fn whole_page(pass: &mut RenderPass<'_>, side: u32) {
    pass.set_viewport(0.0, 0.0, side as f32, side as f32, 0.0, 1.0);
    pass.set_scissor_rect(0, 0, side, side);
}

fn copy_cell(encoder: &mut CommandEncoder, from: &Texture, to: &Texture, r: PixelRect) {
    let at = |texture| TexelCopyTextureInfo {
        texture,
        mip_level: 0,
        origin: Origin3d {
            x: r.x,
            y: r.y,
            z: 0,
        },
        aspect: TextureAspect::All,
    };
    encoder.copy_texture_to_texture(
        at(from),
        at(to),
        Extent3d {
            width: r.width,
            height: r.height,
            depth_or_array_layers: 1,
        },
    );
}

fn pass<'a>(
    encoder: &'a mut CommandEncoder,
    label: &'static str,
    targets: &[&TextureView],
) -> RenderPass<'a> {
    let attachments: Vec<_> = targets
        .iter()
        .map(|&view| {
            Some(RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: Operations {
                    load: LoadOp::Load,
                    store: StoreOp::Store,
                },
            })
        })
        .collect();
    encoder.begin_render_pass(&RenderPassDescriptor {
        label: Some(label),
        color_attachments: &attachments,
        ..default()
    })
}

fn render_cells(
    mut ctx: RenderContext,
    mut pending: ResMut<PendingCells>,
    mut gpu: ResMut<AnieGpu>,
    mut stats: ResMut<AnieRenderStats>,
    pipelines: Option<Res<AniePipelines>>,
    cache: Res<PipelineCache>,
    images: Res<RenderAssets<GpuImage>>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
) {
    stats.pending = pending.cells.len();
    // This frame's time: nothing, unless it draws.
    stats.time = std::time::Duration::ZERO;
    if pending.cells.is_empty() {
        return;
    }
    let Some(pipelines) = pipelines else { return };
    let get = |id| cache.get_render_pipeline(id);
    let (
        Some(layer),
        Some(clear_color),
        Some(clear_mask),
        Some(mask_zero),
        Some(mask_add),
        Some(mask_nested),
    ) = (
        get(pipelines.layer),
        get(pipelines.clear_color),
        get(pipelines.clear_mask),
        get(pipelines.mask_zero),
        get(pipelines.mask_add),
        get(pipelines.mask_nested),
    )
    else {
        return;
    };
    // The cells whose page and atlas are on the GPU, by page.
    let ready: Vec<(AssetId<Image>, u32, u32)> = pending
        .cells
        .iter()
        .filter(|(_, d)| images.get(d.page).is_some() && images.get(d.atlas).is_some())
        .map(|(k, _)| *k)
        .collect();
    if ready.is_empty() {
        return;
    }
    let draws: Vec<CellDraw> = ready
        .iter()
        .filter_map(|k| pending.cells.remove(k))
        .collect();
    let pending = &mut *pending;
    pending
        .sizes
        .retain(|page, _| pending.cells.keys().any(|(p, _, _)| p == page));
    stats.pending = pending.cells.len();
    let start = std::time::Instant::now();
    let mut frame = AnieRenderStats {
        pending: stats.pending,
        drawn: stats.drawn + draws.len() as u64,
        cells: draws.len(),
        ..default()
    };
    let (mut vertices, mut indices, mut layers) = (Vec::new(), Vec::new(), Vec::new());
    let mut packed: HashMap<*const Program, Packed> = HashMap::default();
    for d in &draws {
        packed
            .entry(Arc::as_ptr(&d.program))
            .or_insert_with(|| pack(&d.program, &mut vertices, &mut indices, &mut layers));
    }
    frame.programs = packed.len();
    let gpu = &mut *gpu;
    let vertex_buffer = gpu.vertices.write(&device, &queue, &vertices).clone();
    let index_buffer = gpu.indices.write(&device, &queue, &indices).clone();
    let layer_buffer = gpu.layers.write(&device, &queue, &layers).clone();
    // One clear instance per cell, page after page.
    let mut clears: Vec<[f32; 5]> = Vec::with_capacity(draws.len());
    let mut clear_ranges: HashMap<AssetId<Image>, Range<u32>> = HashMap::default();
    {
        let mut by_page: HashMap<AssetId<Image>, Vec<&CellDraw>> = HashMap::default();
        for d in &draws {
            by_page.entry(d.page).or_default().push(d);
        }
        for (page, cells) in by_page {
            let start = clears.len() as u32;
            for d in cells {
                let r = d.rect;
                clears.push([
                    r.x as f32,
                    r.y as f32,
                    r.width as f32,
                    r.height as f32,
                    d.page_side as f32,
                ]);
            }
            clear_ranges.insert(page, start..clears.len() as u32);
        }
    }
    let clear_buffer = gpu
        .clears
        .write(&device, &queue, bytemuck::cast_slice(&clears))
        .clone();
    let layers_layout = cache.get_bind_group_layout(&pipelines.layers);
    let atlas_layout = cache.get_bind_group_layout(&pipelines.atlas);
    // Bind groups are made again only when what they bind changed (a reloaded atlas, a grown
    // layer buffer).
    for d in &draws {
        let atlas = images.get(d.atlas).expect("checked above");
        let view = atlas.texture_view.id();
        if gpu
            .atlas_groups
            .get(&d.atlas)
            .is_none_or(|(v, _)| *v != view)
        {
            let group = device.create_bind_group(
                "anie_atlas",
                &atlas_layout,
                &BindGroupEntries::single(&atlas.texture_view),
            );
            gpu.atlas_groups.insert(d.atlas, (view, group));
        }
    }
    let atlas_groups: HashMap<AssetId<Image>, BindGroup> = draws
        .iter()
        .map(|d| (d.atlas, gpu.atlas_groups[&d.atlas].1.clone()))
        .collect();
    let mut pages: HashMap<AssetId<Image>, (u32, Vec<ReadyCell>)> = HashMap::default();
    for d in &draws {
        let cell = ReadyCell {
            rect: d.rect,
            atlas: d.atlas,
            packed: &packed[&Arc::as_ptr(&d.program)],
            instance: 0,
        };
        pages
            .entry(d.page)
            .or_insert((d.page_side, Vec::new()))
            .1
            .push(cell);
    }
    // One instance per cell; a page's cells sorted by program, so that the rigs at one
    // program are consecutive instances: one draw for all of them.
    let mut instances: Vec<[u32; 6]> = Vec::with_capacity(draws.len());
    for (side, cells) in pages.values_mut() {
        cells.sort_by_key(|c| (c.packed as *const Packed) as usize);
        for c in cells.iter_mut() {
            c.instance = instances.len() as u32;
            let r = c.rect;
            instances.push([
                (r.x as f32).to_bits(),
                (r.y as f32).to_bits(),
                (r.width as f32).to_bits(),
                (r.height as f32).to_bits(),
                c.packed.layer_base,
                (*side as f32).to_bits(),
            ]);
        }
    }
    let instance_buffer = gpu
        .instances
        .write(&device, &queue, bytemuck::cast_slice(&instances))
        .clone();
    for (page, (side, cells)) in &pages {
        let Some(color) = images.get(*page) else {
            continue;
        };
        if gpu.pages.get(page).is_none_or(|t| t.side != *side) {
            gpu.pages.insert(*page, PageTextures::new(&device, *side));
        }
        let textures = gpu.pages.get_mut(page).expect("just made");
        if textures
            .groups
            .as_ref()
            .is_none_or(|(b, _, _)| *b != layer_buffer.id())
        {
            let main = device.create_bind_group(
                "anie_layers_main",
                &layers_layout,
                &BindGroupEntries::sequential((
                    layer_buffer.as_entire_binding(),
                    &textures.copy.view,
                    &textures.mask_id.view,
                    &textures.mask_coverage.view,
                )),
            );
            let mask = device.create_bind_group(
                "anie_layers_mask",
                &layers_layout,
                &BindGroupEntries::sequential((
                    layer_buffer.as_entire_binding(),
                    &textures.copy.view,
                    &textures.scratch_id.view,
                    &textures.scratch_coverage.view,
                )),
            );
            textures.groups = Some((layer_buffer.id(), main, mask));
        }
        let textures = &gpu.pages[page];
        let (_, main_group, mask_group) = textures.groups.as_ref().expect("just made");
        let rounds = cells
            .iter()
            .map(|c| c.packed.segments.len())
            .max()
            .unwrap_or(0);
        let side = *side;
        let encoder = ctx.command_encoder();
        let buffers = |p: &mut RenderPass<'_>| {
            p.set_vertex_buffer(0, (*vertex_buffer).slice(..));
            p.set_vertex_buffer(1, (*instance_buffer).slice(..));
            p.set_index_buffer((*index_buffer).slice(..), IndexFormat::Uint32);
        };
        for round in 0..rounds.max(1) {
            {
                let mut p = pass(encoder, "anie_layers", &[&color.texture_view]);
                frame.passes += 1;
                if round == 0
                    && let Some(range) = clear_ranges.get(page)
                {
                    // Every cell drawn this frame starts transparent: one draw for the page.
                    p.set_pipeline(clear_color);
                    p.set_vertex_buffer(0, (*clear_buffer).slice(..));
                    p.draw(0..4, range.clone());
                    frame.draws += 1;
                }
                p.set_pipeline(layer);
                p.set_bind_group(0, main_group, &[]);
                buffers(&mut p);
                let mut atlas = None;
                for (c, s, instances) in runs(cells, round, |s| !s.draws.is_empty()) {
                    if atlas != Some(c.atlas) {
                        p.set_bind_group(1, &atlas_groups[&c.atlas], &[]);
                        atlas = Some(c.atlas);
                    }
                    p.draw_indexed(c.indices(&s.draws), c.packed.vertex_base, instances);
                    frame.draws += 1;
                }
            }
            for c in cells {
                if let Some(Barrier::CopyDestination) =
                    c.segment(round).and_then(|s| s.barrier.as_ref())
                {
                    copy_cell(encoder, &color.texture, &textures.copy.texture, c.rect);
                    frame.copies += 1;
                }
            }
            let masks = runs(cells, round, |s| {
                matches!(s.barrier, Some(Barrier::Mask(_)))
            });
            if !masks.is_empty() {
                let targets = [&textures.mask_id.view, &textures.mask_coverage.view];
                let mut p = pass(encoder, "anie_mask", &targets);
                frame.passes += 1;
                p.set_bind_group(0, mask_group, &[]);
                buffers(&mut p);
                for (c, s, instances) in &masks {
                    let Some(Barrier::Mask(steps)) = &s.barrier else {
                        continue;
                    };
                    p.set_bind_group(1, &atlas_groups[&c.atlas], &[]);
                    for step in steps {
                        match step {
                            MaskStep::Clear => {
                                // One quad per cell of the run, then the whole page again.
                                p.set_pipeline(clear_mask);
                                let run = &cells[..];
                                for cell in
                                    run.iter().filter(|cell| instances.contains(&cell.instance))
                                {
                                    cell.bound(&mut p);
                                    p.draw(0..4, 0..1);
                                    frame.draws += 1;
                                }
                                whole_page(&mut p, side);
                            }
                            MaskStep::Write(range) => {
                                p.set_pipeline(mask_zero);
                                let indices = c.indices(range);
                                let base = c.packed.vertex_base;
                                p.draw_indexed(indices.clone(), base, instances.clone());
                                p.set_pipeline(mask_add);
                                p.draw_indexed(indices, base, instances.clone());
                                frame.draws += 2;
                            }
                        }
                    }
                }
            }
            let nested = runs(cells, round, |s| {
                matches!(s.barrier, Some(Barrier::NestedMask(_)))
            });
            if !nested.is_empty() {
                for c in cells {
                    if let Some(Barrier::NestedMask(_)) =
                        c.segment(round).and_then(|s| s.barrier.as_ref())
                    {
                        for (from, to) in [
                            (&textures.mask_id.texture, &textures.scratch_id.texture),
                            (
                                &textures.mask_coverage.texture,
                                &textures.scratch_coverage.texture,
                            ),
                        ] {
                            copy_cell(encoder, from, to, c.rect);
                            frame.copies += 1;
                        }
                    }
                }
                let targets = [&textures.mask_id.view, &textures.mask_coverage.view];
                let mut p = pass(encoder, "anie_mask_nested", &targets);
                frame.passes += 1;
                p.set_pipeline(mask_nested);
                p.set_bind_group(0, mask_group, &[]);
                buffers(&mut p);
                for (c, s, instances) in nested {
                    let Some(Barrier::NestedMask(range)) = &s.barrier else {
                        continue;
                    };
                    p.set_bind_group(1, &atlas_groups[&c.atlas], &[]);
                    p.draw_indexed(c.indices(range), c.packed.vertex_base, instances);
                    frame.draws += 1;
                }
            }
        }
    }
    frame.time = start.elapsed();
    *stats = frame;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anie::atlas::PixelRect;
    use crate::anie::blend::{BlendMode, HsvAdjust};
    use crate::anie::program::{ProgramLayer, ProgramVertex};
    use bevy::math::Vec2;

    fn words(bytes: &[u8]) -> Vec<u32> {
        bytemuck::pod_collect_to_vec(bytes)
    }

    #[test]
    fn a_program_packs_as_the_layer_shader_reads_it() {
        let layer = |shader| ProgramLayer {
            node: 0,
            image: PixelRect {
                x: 3,
                y: 4,
                width: 5,
                height: 6,
            },
            alpha8: 51,
            shader,
            bounds: PixelRect::default(),
        };
        let program = Program {
            width: 64,
            height: 48,
            vertices: vec![ProgramVertex {
                position: Vec2::new(1.5, 2.0),
                uv: Vec2::new(0.25, -1.0),
                layer: 1,
            }],
            indices: vec![0, 0, 0],
            layers: vec![
                layer(LayerShader::Blend {
                    mode: BlendMode::Screen,
                    mask: Some(7),
                }),
                layer(LayerShader::Hsv(HsvAdjust {
                    hue: -30,
                    sat: 40,
                    val: 120,
                    absolute: true,
                })),
                layer(LayerShader::Mask {
                    id: 9,
                    within: Some(2),
                }),
            ],
            steps: Vec::new(),
        };
        let (mut v, mut i, mut l) = (vec![0; 20], Vec::new(), Vec::new());
        let packed = pack(&program, &mut v, &mut i, &mut l);
        // Bases count what was there before: one vertex already (20 bytes).
        assert_eq!(
            (packed.vertex_base, packed.index_base, packed.layer_base),
            (1, 0, 0)
        );
        // The vertex: position, uv (f32 each), layer (u32) at offsets 0, 8, 16 of 20 bytes.
        let vertex = words(&v[20..]);
        let f = |x: f32| x.to_bits();
        assert_eq!(vertex, [f(1.5), f(2.0), f(0.25), f(-1.0), 1]);
        assert_eq!(words(&i), [0, 0, 0]);
        // Each layer: the WGSL `Layer` in 16 words (64 bytes): image (4) at byte 0, alpha,
        // kind, mode, mask, within, hsv_absolute at 16..40, two words of padding, hsv (4) at 48
        // (a vec4's 16-byte alignment).
        let l = words(&l);
        assert_eq!(l.len(), 3 * 16);
        let a = f(51.0 / 255.0);
        // Blend, Screen is mode 6 (enum order), clipped by id 7.
        #[rustfmt::skip]
        assert_eq!(l[..16], [3, 4, 5, 6, a, 0, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
        // HSV: kind 1, absolute, hue −30 as an i32's bits.
        #[rustfmt::skip]
        assert_eq!(l[16..32], [3, 4, 5, 6, a, 1, 0, 0, 0, 1, 0, 0, (-30i32) as u32, 40, 120, 0]);
        // Mask write: kind 2, id 9 within 2.
        #[rustfmt::skip]
        assert_eq!(l[32..], [3, 4, 5, 6, a, 2, 0, 9, 2, 0, 0, 0, 0, 0, 0, 0]);
    }
}
