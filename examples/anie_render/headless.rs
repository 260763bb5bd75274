//! Frames of `.anie` projects drawn by `AniePlugin` with no window (lavapipe works): each
//! requested frame is a rig drawn offscreen, and its cell is read back from the GPU.
//!
//! Shared by the `anie_render` example and the GPU tests (`tests/anie_gpu.rs`).

use bevy::app::PluginsState;
use bevy::prelude::*;
use bevy::render::error_handler::RenderErrorHandler;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::pipelined_rendering::PipelinedRenderingPlugin;
use bevy::render::renderer::{
    RenderAdapter, RenderAdapterInfo, RenderDevice, RenderInstance, RenderQueue, WgpuWrapper,
};
use bevy::render::settings::RenderResources;
use bevy::render::{RenderApp, RenderPlugin};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use rigplay::anie::cpu::RgbaImage;
use rigplay::plugin::{
    Anie, AnieCell, AnieDisplay, AnieFrames, AniePlugin, AnieRenderSettings, AnieRenderStats,
    AnieRig, PlayMode, Playback,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One frame to draw: a project (an asset path under the asset root), a frame (fractional
/// frames are drawn as they are, whole ones as AnimeEffects steps them) and a scale.
#[derive(Clone, Debug)]
pub struct Shot {
    pub asset: String,
    pub frame: f32,
    pub scale: f32,
    /// Object nodes drawn as if hidden (`AnieRig::hidden`).
    pub hidden: Vec<usize>,
}

/// Frames the app may run before giving up (pipelines compile and assets load meanwhile).
const MAX_UPDATES: usize = 3000;

/// An app with rendering and no window, the rig renderer on pages of 1024² (rows need no
/// padding for readback), ready to update. Panics where Bevy finds no GPU adapter.
pub fn headless_app(asset_root: &Path) -> App {
    headless_app_with(asset_root, ())
}

/// [`headless_app`] with more plugins (added before the app is finished).
pub fn headless_app_with<M>(asset_root: &Path, more: impl bevy::app::Plugins<M>) -> App {
    headless_app_on(asset_root, RenderPlugin::default(), true, more)
}

/// [`headless_app_with`] with Bevy's renderer set up by `render` (a device's limits
/// constrained, say), and the `.anie` renderer only where `anie`.
#[allow(
    dead_code,
    reason = "the tests use it, the anie_render example does not"
)]
pub fn headless_app_on<M>(
    asset_root: &Path,
    render: RenderPlugin,
    anie: bool,
    more: impl bevy::app::Plugins<M>,
) -> App {
    let mut app = App::new();
    // Several apps in one process (tests) share the first one's logger.
    let plugins = DefaultPlugins.build();
    let plugins = if bevy::log::tracing::dispatcher::has_been_set() {
        plugins.disable::<bevy::log::LogPlugin>()
    } else {
        plugins.set(bevy::log::LogPlugin {
            level: bevy::log::Level::WARN,
            ..default()
        })
    };
    app.add_plugins(
        plugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .set(AssetPlugin {
                file_path: asset_root.to_string_lossy().into_owned(),
                // The tests give the repository as the root: no watcher over all of it.
                watch_for_changes_override: Some(false),
                ..default()
            })
            .set(render)
            .disable::<WinitPlugin>()
            .disable::<PipelinedRenderingPlugin>(),
    );
    if anie {
        app.insert_resource(AnieRenderSettings {
            page_side: 1024,
            max_side: 8192,
        })
        .add_plugins(AniePlugin);
    }
    app.add_plugins(more);
    // Bevy's own handler of a render error stops the renderer for good and asks the app to
    // exit, which an app driven by `update()` never reads: it would go on drawing nothing.
    app.insert_resource(RenderErrorHandler(|error, _, _| {
        panic!(
            "the renderer failed ({:?}): {}",
            error.ty, error.description
        )
    }));
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
    app
}

/// A render device on wgpu's no-op backend, with the features and limits it reports (but the
/// few that would stop Bevy's renderer, below), or the worse of those and `limits`: a renderer
/// that does the CPU's work of every frame. Not none of the GPU's: the no-op backend runs buffer
/// copies and clears on the CPU, and makes each staging buffer as a zeroed vector (see the
/// `no-op backend` group of `benches/crowd_draw.rs`).
#[allow(
    dead_code,
    reason = "the tests and benches use it, the anie_render example does not"
)]
pub fn noop_renderer(limits: Option<wgpu::Limits>) -> RenderResources {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::NOOP,
        flags: wgpu::InstanceFlags::default(),
        memory_budget_thresholds: Default::default(),
        display: None,
        backend_options: wgpu::BackendOptions {
            noop: wgpu::NoopBackendOptions { enable: true },
            ..Default::default()
        },
    });
    let adapter =
        bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("the no-op backend gives an adapter");
    // Every feature the adapter reports, but:
    // - the experimental ones, which need an unsafe opt-in;
    // - `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`: with it, wgpu takes each texture format's
    //   usages from the adapter, and the no-op adapter reports none, so that Bevy's first
    //   texture fails validation and its renderer stops for good after the first frame
    //   (extraction runs on, nothing is prepared, queued or encoded). Without it, the formats
    //   have the usages WebGPU guarantees;
    // - under limits that leave no room for binding arrays (WebGPU's defaults, WebGL2's), the
    //   binding arrays, as on a device of such limits: Bevy takes the features alone for leave
    //   to bind its materials' resources as arrays, and its layouts would then fail validation.
    let no_arrays =
        (limits.as_ref()).is_some_and(|l| l.max_binding_array_elements_per_shader_stage == 0);
    let mut features = adapter.features();
    for (name, flag) in adapter.features().features_wgpu.iter_names() {
        let array = name.contains("BINDING_ARRAY") || name.contains("ARRAY_NON_UNIFORM_INDEXING");
        if name.starts_with("EXPERIMENTAL")
            || flag == wgpu::FeaturesWGPU::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES
            || (no_arrays && array)
        {
            features.features_wgpu.remove(flag);
        }
    }
    let (device, queue) = bevy::tasks::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: features,
        required_limits: match limits {
            Some(limits) => adapter.limits().or_worse_values_from(&limits),
            // The no-op adapter's limits are the largest numbers a limit holds, and Bevy
            // allocates by some of them (a render pass tracks `max_bind_groups` bind groups and
            // `max_vertex_buffers` vertex buffers): those two at a desktop GPU's values, the
            // others as the adapter says.
            None => wgpu::Limits {
                max_bind_groups: 8,
                max_vertex_buffers: 16,
                ..adapter.limits()
            },
        },
        ..Default::default()
    }))
    .expect("the no-op backend gives a device");
    RenderResources(
        RenderDevice::from(device),
        RenderQueue(Arc::new(WgpuWrapper::new(queue))),
        RenderAdapterInfo(WgpuWrapper::new(adapter.get_info())),
        RenderAdapter(Arc::new(WgpuWrapper::new(adapter))),
        RenderInstance(Arc::new(WgpuWrapper::new(instance))),
    )
}

/// The rig renderer's counters in the render world.
pub fn render_stats(app: &App) -> AnieRenderStats {
    app.sub_app(RenderApp)
        .world()
        .get_resource::<AnieRenderStats>()
        .copied()
        .unwrap_or_default()
}

/// Reads textures back from the GPU (each once): their bytes, rows padded to 256 bytes.
pub fn read_back(app: &mut App, textures: &[Handle<Image>]) -> Result<Vec<Vec<u8>>, String> {
    let data: Arc<Mutex<HashMap<AssetId<Image>, Vec<u8>>>> = Arc::default();
    let readers: Vec<Entity> = textures
        .iter()
        .map(|texture| {
            let (id, data) = (texture.id(), data.clone());
            app.world_mut()
                .spawn(Readback::texture(texture.clone()))
                .observe(move |event: On<ReadbackComplete>| {
                    data.lock().unwrap().insert(id, event.data.clone());
                })
                .id()
        })
        .collect();
    for _ in 0..MAX_UPDATES {
        if data.lock().unwrap().len() == textures.len() {
            break;
        }
        app.update();
    }
    for reader in readers {
        app.world_mut().despawn(reader);
    }
    app.update();
    let data = data.lock().unwrap();
    textures
        .iter()
        .map(|t| {
            data.get(&t.id())
                .cloned()
                .ok_or_else(|| "no readback".to_string())
        })
        .collect()
}

/// The pixels of `rect` in a texture `width` pixels wide read back by [`read_back`].
pub fn crop(bytes: &[u8], width: u32, rect: URect) -> Result<RgbaImage, String> {
    // Rows of a texture copy are padded to 256 bytes.
    let row = (width as usize * 4).div_ceil(256) * 256;
    let mut pixels = Vec::with_capacity((rect.width() * rect.height()) as usize);
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            let i = y as usize * row + x as usize * 4;
            let p = bytes.get(i..i + 4).ok_or("a texture read back short")?;
            pixels.push([p[0], p[1], p[2], p[3]]);
        }
    }
    Ok(RgbaImage {
        width: rect.width(),
        height: rect.height(),
        pixels,
    })
}

/// Draws every shot through the GPU plugin in one app and returns the cells (AnimeEffects' raw
/// framebuffers), in order. Errors: a project that did not load, or no result in time. Panics
/// where Bevy finds no GPU adapter.
pub fn render_shots(asset_root: &Path, shots: &[Shot]) -> Result<Vec<RgbaImage>, String> {
    let mut app = headless_app(asset_root);
    let server = app.world().resource::<AssetServer>().clone();
    let rigs: Vec<(Entity, Handle<Anie>)> = shots
        .iter()
        .map(|shot| {
            let handle: Handle<Anie> = server.load(shot.asset.clone());
            let frames = if shot.frame.fract() == 0.0 {
                AnieFrames::Stepped
            } else {
                AnieFrames::Smooth
            };
            let mut rig = AnieRig::new(handle.clone())
                .with_scale(shot.scale)
                .with_frames(frames)
                .with_display(AnieDisplay::Offscreen);
            rig.hidden = shot.hidden.clone();
            let mut playback = Playback::once();
            playback.paused = true;
            (app.world_mut().spawn((rig, playback)).id(), handle)
        })
        .collect();

    // Until every rig was sent at its frame and the render world drew everything sent.
    let mut ready = false;
    for _ in 0..MAX_UPDATES {
        app.update();
        let world = app.world_mut();
        let mut all_sent = true;
        for ((entity, handle), shot) in rigs.iter().zip(shots) {
            if server.load_state(handle).is_failed() {
                return Err(format!("{} did not load (see the log)", shot.asset));
            }
            let Some(fps) = world
                .resource::<Assets<Anie>>()
                .get(handle)
                .map(Anie::frame_rate)
            else {
                all_sent = false;
                continue;
            };
            let time = shot.frame / fps;
            let mut playback = world.get_mut::<Playback>(*entity).expect("spawned");
            if playback.time != time {
                playback.seek(time);
                playback.mode = PlayMode::Once;
            }
            let sent = world
                .get::<AnieCell>(*entity)
                .and_then(|c| c.frame)
                .is_some_and(|f| (f - shot.frame).abs() < 1e-3);
            all_sent &= sent;
        }
        let stats = render_stats(&app);
        if all_sent && stats.pending == 0 && stats.drawn >= shots.len() as u64 {
            ready = true;
            break;
        }
    }
    if !ready {
        return Err(format!("no frame drawn after {MAX_UPDATES} updates"));
    }

    // Read every page back once.
    let cells: Vec<AnieCell> = rigs
        .iter()
        .map(|(e, _)| app.world().get::<AnieCell>(*e).cloned().expect("drawn"))
        .collect();
    let mut pages: Vec<Handle<Image>> = Vec::new();
    for c in &cells {
        if !pages.contains(&c.page) {
            pages.push(c.page.clone());
        }
    }
    let data = read_back(&mut app, &pages)?;
    let images = app.world().resource::<Assets<Image>>();
    cells
        .iter()
        .map(|cell| {
            let page = pages.iter().position(|p| *p == cell.page).expect("listed");
            let side = images
                .get(&cell.page)
                .map(|i| i.width())
                .ok_or("a page vanished")?;
            crop(&data[page], side, cell.rect)
        })
        .collect()
}
