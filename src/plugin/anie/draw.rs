//! The main world's part of drawing rigs: cells on pages, the display quad, which rigs need a
//! new frame, their evaluation (in parallel, shared across rigs at the same frame), and the list
//! of cells to draw that the render world picks up.

use super::card::{AnieCardMaterial, AnieCardMaterial3d, CardCell, CardGrid, card_mesh};
use super::{Anie, AnieCell, AnieDisplay, AnieRig};
use crate::anie::atlas::PixelRect;
use crate::anie::cells::{Cell, CellAtlas};
use crate::anie::cpu::scaled_size;
use crate::anie::program::Program;
use crate::plugin::Playback;
use bevy::asset::RenderAssetUsages;
use bevy::image::ImageSampler;
use bevy::mesh::MeshTag;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::tasks::ComputeTaskPool;
use std::sync::Arc;

/// Settings of the rig renderer.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnieRenderSettings {
    /// The side of a page of cells, in pixels (a page larger than this is made for a cell that
    /// does not fit). Each page costs `side² × 12` bytes of GPU memory (colour, destination copy,
    /// clipping mask and its copy).
    pub page_side: u32,
    /// The largest page side: the device's texture limit (8192 is safe on desktop GPUs).
    pub max_side: u32,
}

impl Default for AnieRenderSettings {
    fn default() -> Self {
        Self {
            page_side: 2048,
            max_side: 8192,
        }
    }
}

/// Pages and the cells on them, with what shows them.
#[derive(Resource)]
pub(crate) struct AnieCells {
    atlas: CellAtlas,
    pages: Vec<PageDisplay>,
    meshes: HashMap<UVec2, Handle<Mesh>>,
    /// Each rig's cell, so that a despawned rig's cell is freed.
    owners: HashMap<Entity, Cell>,
}

struct PageDisplay {
    image: Handle<Image>,
    /// The page's 2D material and the grid it was made for.
    material: Option<(Handle<AnieCardMaterial>, CardGrid)>,
}

impl FromWorld for AnieCells {
    fn from_world(world: &mut World) -> Self {
        let settings = *world.get_resource_or_init::<AnieRenderSettings>();
        Self {
            atlas: CellAtlas::new(settings.page_side, settings.max_side),
            pages: Vec::new(),
            meshes: HashMap::default(),
            owners: HashMap::default(),
        }
    }
}

/// A rig's cell, its size class and what was last drawn there.
#[derive(Component)]
pub(crate) struct AnieRigState {
    cell: Cell,
    size: UVec2,
    display: AnieDisplay,
    project: AssetId<Anie>,
    drawn: Option<ProgramKey>,
}

/// What a cell shows: a project at a frame and scale, with some nodes hidden.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ProgramKey {
    project: AssetId<Anie>,
    frame: u32,
    scale: u32,
    hidden: u64,
}

/// The cells to draw this frame; the render world reads it during extraction.
#[derive(Resource, Clone, Default)]
pub struct AnieDrawList {
    /// One entry per cell to redraw.
    pub draws: Vec<CellDraw>,
}

/// A cell to redraw.
#[derive(Clone, Debug)]
pub struct CellDraw {
    /// Its page texture.
    pub page: AssetId<Image>,
    /// The page's side.
    pub page_side: u32,
    /// The cell on the page.
    pub rect: PixelRect,
    /// The project's image atlas texture.
    pub atlas: AssetId<Image>,
    /// What to draw.
    pub program: Arc<Program>,
}

/// What the last frame's [`AnieSystems::Draw`](super::AnieSystems) did, in the main world: for
/// on-screen counters and benchmarks.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct AnieDrawStats {
    /// Rigs with a loaded project.
    pub rigs: usize,
    /// Rigs that were visible and showed a new frame (sent to be drawn).
    pub redrawn: usize,
    /// Programs evaluated and built (rigs at the same key share one).
    pub built: usize,
    /// Programs kept for reuse.
    pub cached: usize,
    /// CPU time of the system: finding the rigs, evaluating and building (in parallel), listing.
    pub time: std::time::Duration,
}

/// Programs built recently, shared by every rig at the same key.
#[derive(Resource, Default)]
pub(crate) struct ProgramCache {
    programs: HashMap<ProgramKey, (Arc<Program>, u64)>,
    tick: u64,
}

/// How many frames a program nobody drew is kept.
const CACHE_FRAMES: u64 = 2;

fn page_image(side: u32) -> Image {
    let mut image = Image::new_target_texture(side, side, TextureFormat::Rgba8Unorm, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    // The GPU fills it; no CPU copy is kept.
    image.data = None;
    image.asset_usage = RenderAssetUsages::RENDER_WORLD;
    image.sampler = ImageSampler::linear();
    // Nothing to keep when a page is made again.
    image.copy_on_resize = false;
    image
}

/// Cells for new, rescaled or reloaded rigs, the display components, and the playhead's length.
pub(crate) fn prepare_rigs(
    mut commands: Commands,
    mut cells: ResMut<AnieCells>,
    projects: Res<Assets<Anie>>,
    mut images: ResMut<Assets<Image>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<AnieCardMaterial>>,
    mut materials_3d: ResMut<Assets<AnieCardMaterial3d>>,
    mut rigs: Query<(Entity, &AnieRig, &mut Playback, Option<&AnieRigState>)>,
    states: Query<&AnieRigState, Without<AnieRig>>,
    mut removed: RemovedComponents<AnieRig>,
    settings: Res<AnieRenderSettings>,
) {
    for entity in removed.read() {
        if let Some(cell) = cells.owners.remove(&entity) {
            cells.atlas.free(cell);
            if let Ok(mut e) = commands.get_entity(entity) {
                e.try_remove::<(AnieRigState, AnieCell)>();
                // Only what the plugin put there: a user's own mesh stays.
                if let Ok(state) = states.get(entity) {
                    remove_display(&mut e, state.display);
                }
            }
        }
    }
    let cells = &mut *cells;
    for (entity, rig, mut playback, state) in &mut rigs {
        let Some(project) = projects.get(&rig.project) else {
            continue;
        };
        let duration = Some(project.duration());
        if playback.duration != duration {
            playback.duration = duration;
        }
        let canvas = project.canvas_size();
        let scale = cell_scale(rig.scale, canvas, settings.max_side);
        let (w, h) = scaled_size(canvas.x, canvas.y, scale);
        let size = UVec2::new(w, h);
        if let Some(state) = &state
            && state.size == size
            && state.display == rig.display
            && state.project == rig.project.id()
        {
            continue;
        }
        // The cell this rig holds, if any (freed once, whatever else happened this frame).
        if let Some(old) = cells.owners.remove(&entity) {
            cells.atlas.free(old);
        }
        let (cell, rect) = cells.atlas.allocate(w, h);
        cells.owners.insert(entity, cell);
        while cells.pages.len() < cells.atlas.pages().len() {
            let side = cells.atlas.pages()[cells.pages.len()].side;
            cells.pages.push(PageDisplay {
                image: images.add(page_image(side)),
                material: None,
            });
        }
        let page = &cells.atlas.pages()[cell.page];
        let grid = CardGrid {
            cell: UVec2::new(page.cell_width, page.cell_height).as_vec2(),
            page_side: page.side as f32,
            columns: page.columns,
        };
        let display = &mut cells.pages[cell.page];
        let image = display.image.clone();
        let mesh = cells
            .meshes
            .entry(canvas)
            .or_insert_with(|| meshes.add(card_mesh(canvas.x, canvas.y)))
            .clone();
        let mut e = commands.entity(entity);
        if let Some(state) = state {
            remove_display(&mut e, state.display);
        }
        match rig.display {
            AnieDisplay::Quad2d => {
                // A page that was emptied and took a new cell size gets a new grid.
                let material = match &display.material {
                    Some((m, g)) if *g == grid => m.clone(),
                    _ => {
                        let m = materials.add(AnieCardMaterial {
                            page: image.clone(),
                            grid,
                        });
                        display.material = Some((m.clone(), grid));
                        m
                    }
                };
                e.insert((Mesh2d(mesh), MeshMaterial2d(material), MeshTag(cell.index)));
            }
            AnieDisplay::Plane3d => {
                let material = materials_3d.add(AnieCardMaterial3d {
                    page: image.clone(),
                    cell: CardCell::new(
                        UVec2::new(rect.x, rect.y),
                        UVec2::new(rect.width, rect.height),
                        page.side,
                    ),
                });
                e.insert((Mesh3d(mesh), MeshMaterial3d(material)));
            }
            AnieDisplay::Offscreen => {}
        }
        e.insert((
            AnieRigState {
                cell,
                size,
                display: rig.display,
                project: rig.project.id(),
                drawn: None,
            },
            AnieCell {
                page: image,
                rect: URect::new(rect.x, rect.y, rect.x + rect.width, rect.y + rect.height),
                frame: None,
            },
        ));
    }
}

/// Takes off the display components the plugin inserted for `display`.
fn remove_display(e: &mut EntityCommands, display: AnieDisplay) {
    match display {
        AnieDisplay::Quad2d => {
            e.try_remove::<(Mesh2d, MeshMaterial2d<AnieCardMaterial>, MeshTag)>();
        }
        AnieDisplay::Plane3d => {
            e.try_remove::<(Mesh3d, MeshMaterial3d<AnieCardMaterial3d>)>();
        }
        AnieDisplay::Offscreen => {}
    }
}

/// The scale a rig is drawn at: its own, counted as 1 when it is not a positive finite number,
/// and cut so that the cell's larger side fits a page (`max_side`).
fn cell_scale(scale: f32, canvas: UVec2, max_side: u32) -> f32 {
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let largest = canvas.x.max(canvas.y).max(1) as f32;
    scale.min(max_side.max(1) as f32 / largest)
}

fn hidden_hash(hidden: &[usize]) -> u64 {
    use std::hash::{Hash, Hasher};
    if hidden.is_empty() {
        return 0;
    }
    let mut sorted = hidden.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sorted.hash(&mut h);
    h.finish()
}

/// The program of `project` at `key`'s frame with `hidden` nodes left out.
fn build_program(project: &Anie, frame: f32, scale: f32, hidden: &[usize]) -> Program {
    let mut evaluated = project.evaluator.evaluate(frame);
    // A hidden node hides its subtree, as its visibility flag would (§4.4).
    let objects = &project.file().objects;
    let mut stack: Vec<usize> = hidden.to_vec();
    while let Some(node) = stack.pop() {
        if let Some(n) = evaluated.nodes.get_mut(node)
            && n.visible
        {
            n.visible = false;
            stack.extend(
                objects
                    .get(node)
                    .map(|o| o.children.as_slice())
                    .unwrap_or(&[]),
            );
        }
    }
    Program::build(&evaluated, &project.images, scale)
}

/// Which visible rigs show a new frame; their programs (built in parallel, once per key); the
/// list of cells to draw.
pub(crate) fn draw_rigs(
    settings: Res<AnieRenderSettings>,
    mut stats: ResMut<AnieDrawStats>,
    mut cache: ResMut<ProgramCache>,
    mut list: ResMut<AnieDrawList>,
    cells: Res<AnieCells>,
    projects: Res<Assets<Anie>>,
    mut events: MessageReader<AssetEvent<Anie>>,
    mut rigs: Query<(
        &AnieRig,
        &Playback,
        &mut AnieRigState,
        &mut AnieCell,
        &InheritedVisibility,
        Option<&ViewVisibility>,
    )>,
) {
    let start = std::time::Instant::now();
    let mut counted = AnieDrawStats::default();
    list.draws.clear();
    cache.tick += 1;
    let tick = cache.tick;
    // A reloaded project: every frame of it is stale.
    let mut changed = Vec::new();
    for event in events.read() {
        if let AssetEvent::Modified { id } | AssetEvent::Removed { id } = event {
            changed.push(*id);
        }
    }
    if !changed.is_empty() {
        cache.programs.retain(|k, _| !changed.contains(&k.project));
    }
    // Who needs what.
    let mut wanted: Vec<(ProgramKey, f32, f32, Vec<usize>)> = Vec::new();
    let mut wanted_keys: bevy::platform::collections::HashSet<ProgramKey> = default();
    let mut redraw = Vec::new();
    for (rig, playback, mut state, cell, inherited, view) in &mut rigs {
        let Some(project) = projects.get(&rig.project) else {
            continue;
        };
        counted.rigs += 1;
        if changed.contains(&state.project) {
            state.drawn = None;
        }
        let visible = match rig.display {
            AnieDisplay::Offscreen => inherited.get(),
            _ => view.is_some_and(|v| v.get()),
        };
        if !visible {
            continue;
        }
        let frame = rig.frame_at(
            playback.time,
            project.frame_rate(),
            project.file().max_frame,
        );
        let scale = cell_scale(rig.scale, project.canvas_size(), settings.max_side);
        let key = ProgramKey {
            project: rig.project.id(),
            frame: frame.to_bits(),
            scale: scale.to_bits(),
            hidden: hidden_hash(&rig.hidden),
        };
        if state.drawn == Some(key) {
            continue;
        }
        state.drawn = Some(key);
        if !cache.programs.contains_key(&key) && wanted_keys.insert(key) {
            wanted.push((key, frame, scale, rig.hidden.clone()));
        }
        redraw.push((key, state.cell, project.atlas.id(), cell));
    }
    // Evaluate and pack the new keys, spread over the compute threads.
    if !wanted.is_empty() {
        let pool = ComputeTaskPool::get();
        let chunk = wanted.len().div_ceil(pool.thread_num().max(1)).max(1);
        let projects = &*projects;
        let built: Vec<Vec<(ProgramKey, Program)>> = pool.scope(|scope| {
            for jobs in wanted.chunks(chunk) {
                scope.spawn(async move {
                    jobs.iter()
                        .filter_map(|(key, frame, scale, hidden)| {
                            let project = projects.get(key.project)?;
                            Some((*key, build_program(project, *frame, *scale, hidden)))
                        })
                        .collect()
                });
            }
        });
        for (key, program) in built.into_iter().flatten() {
            counted.built += 1;
            cache.programs.insert(key, (Arc::new(program), tick));
        }
    }
    for (key, cell, atlas, mut shown) in redraw {
        let Some((program, used)) = cache.programs.get_mut(&key) else {
            continue;
        };
        *used = tick;
        let (Some(page), Some(rect)) = (cells.atlas.pages().get(cell.page), cells.atlas.rect(cell))
        else {
            continue;
        };
        shown.frame = Some(f32::from_bits(key.frame));
        list.draws.push(CellDraw {
            page: cells.pages[cell.page].image.id(),
            page_side: page.side,
            rect,
            atlas,
            program: program.clone(),
        });
    }
    cache
        .programs
        .retain(|_, (_, used)| tick.saturating_sub(*used) <= CACHE_FRAMES);
    counted.redrawn = list.draws.len();
    counted.cached = cache.programs.len();
    counted.time = start.elapsed();
    *stats = counted;
}
