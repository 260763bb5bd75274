//! What the crowd examples share: their command line, the deterministic random numbers that
//! place their crowds, the counter line with the frame time, and the GPU's time of a frame
//! (`crowd_gpu`).

use bevy::diagnostic::{
    Diagnostic, DiagnosticPath, Diagnostics, DiagnosticsStore, FrameTimeDiagnosticsPlugin,
    RegisterDiagnostic,
};
use bevy::prelude::*;
use bevy::render::RenderApp;
use bevy::render::diagnostic::RenderDiagnosticsPlugin;
use bevy::render::renderer::{
    RenderContext, RenderDevice, RenderGraph, RenderGraphSystems, RenderQueue,
};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use wgpu::{
    Buffer, BufferDescriptor, BufferUsages, Features as WgpuFeatures, MapMode, QuerySet,
    QuerySetDescriptor, QueryType,
};

/// A crowd example's command line: `[N] [--screenshot OUT.png]` (`N` defaults to `count`), to
/// which an example adds its own options. clap refuses an option it does not know, with a
/// usage line and status 2.
pub fn crowd_command(
    name: &'static str,
    about: &'static str,
    count: &'static str,
) -> clap::Command {
    use clap::{Arg, Command, value_parser};
    Command::new(name)
        .about(about)
        .arg(
            Arg::new("count")
                .value_name("N")
                .value_parser(value_parser!(usize))
                .default_value(count),
        )
        .arg(
            Arg::new("screenshot")
                .long("screenshot")
                .value_name("OUT.png")
                .value_parser(value_parser!(std::path::PathBuf)),
        )
}

/// The crowd's size and the screenshot path from [`crowd_command`]'s matches.
pub fn crowd_args(m: &clap::ArgMatches) -> (usize, Option<std::path::PathBuf>) {
    (
        *m.get_one::<usize>("count").expect("defaulted"),
        m.get_one::<std::path::PathBuf>("screenshot").cloned(),
    )
}

/// A small deterministic generator (xorshift) in [0, 1): the same crowd every run.
pub fn random(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 40) as f32 / (1u64 << 24) as f32
}

/// The crowd examples' counter line, top left of the window: spawn [`counter_text`], then set the
/// text of the entity with [`Counter`].
#[derive(Component)]
pub struct Counter;

/// An empty line of text at the window's top left, marked [`Counter`].
pub fn counter_text() -> impl Bundle {
    (
        Counter,
        Text::new(""),
        TextFont::from_font_size(16.0),
        Node {
            position_type: PositionType::Absolute,
            left: Val::Px(8.0),
            top: Val::Px(6.0),
            ..default()
        },
    )
}

/// The smoothed frame time in milliseconds (0 until measured); needs
/// `FrameTimeDiagnosticsPlugin`.
pub fn frame_ms(diagnostics: &DiagnosticsStore) -> f64 {
    diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(|d| d.smoothed())
        .unwrap_or(0.0)
}

/// The GPU's time of every frame, from timestamp queries of its own: one written before every
/// render system's commands and one after them (a `RenderContext`'s command buffers are
/// submitted in the systems' order), read back a few frames later, and kept as the diagnostic
/// [`GPU_FRAME_TIME`]. Bevy 0.19.1 times its main passes but not its shadow passes; this time
/// holds them all. It adds Bevy's [`RenderDiagnosticsPlugin`] too, for the passes it times
/// (`render/<pass>/elapsed_gpu`).
///
/// The queries are rigplay's own rather than a span of Bevy's recorder: the recorder pairs a
/// span's end with the last span opened *on the same thread*, and the render systems that
/// would open and close it run on whichever threads the executor picks. Needs timestamps
/// between passes (`TIMESTAMP_QUERY` and `TIMESTAMP_QUERY_INSIDE_ENCODERS`: Vulkan and DX12
/// have them); without them there is no GPU time ([`gpu_frame_ms`] gives `None`).
pub struct GpuFrameTime;

/// The GPU's time of a frame, milliseconds ([`GpuFrameTime`]).
pub const GPU_FRAME_TIME: DiagnosticPath = DiagnosticPath::const_new("gpu_frame_time");

/// Readbacks in flight at most: a frame's times come back a frame or two later.
const READBACKS: usize = 4;

/// A readback buffer's states: free, written by a frame and waiting for its mapping, mapped
/// (its map callback ran), or its mapping failed.
const FREE: u8 = 0;
const PENDING: u8 = 1;
const MAPPED: u8 = 2;
const FAILED: u8 = 3;

/// A mappable copy of a frame's two resolved timestamps, and its state (set by the render
/// systems, and by its map callback on whichever thread wgpu runs it).
struct Readback {
    buffer: Buffer,
    state: Arc<AtomicU8>,
}

/// The latest frame time read back, shared by the render world and the main world.
#[derive(Resource, Clone, Default)]
struct LatestGpuFrame(Arc<Mutex<Option<f64>>>);

/// The render world's timestamp queries and readback buffers.
#[derive(Resource)]
struct FrameTimer {
    queries: QuerySet,
    resolved: Buffer,
    readbacks: Vec<Readback>,
    /// Nanoseconds per timestamp tick.
    period: f64,
    /// The readback this frame writes into, if one was free at its start.
    this_frame: Option<usize>,
    latest: LatestGpuFrame,
}

impl Plugin for GpuFrameTime {
    fn build(&self, app: &mut App) {
        let latest = LatestGpuFrame::default();
        app.add_plugins(RenderDiagnosticsPlugin)
            .register_diagnostic(Diagnostic::new(GPU_FRAME_TIME).with_suffix("ms"))
            .insert_resource(latest.clone())
            .add_systems(PreUpdate, measure_gpu_frame);
        if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app.insert_resource(latest).add_systems(
                RenderGraph,
                (
                    frame_begins.in_set(RenderGraphSystems::Begin),
                    frame_ends
                        .after(RenderGraphSystems::Render)
                        .before(RenderGraphSystems::Submit),
                ),
            );
        }
    }

    fn finish(&self, app: &mut App) {
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        let world = render_app.world();
        let (Some(device), Some(queue), Some(latest)) = (
            world.get_resource::<RenderDevice>(),
            world.get_resource::<RenderQueue>(),
            world.get_resource::<LatestGpuFrame>(),
        ) else {
            return;
        };
        let needed = WgpuFeatures::TIMESTAMP_QUERY | WgpuFeatures::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        if !device.features().contains(needed) {
            return;
        }
        let device = device.wgpu_device();
        let queries = device.create_query_set(&QuerySetDescriptor {
            label: Some("gpu_frame_time"),
            ty: QueryType::Timestamp,
            count: 2,
        });
        let buffer = |usage| {
            device.create_buffer(&BufferDescriptor {
                label: Some("gpu_frame_time"),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        let timer = FrameTimer {
            queries,
            resolved: buffer(BufferUsages::QUERY_RESOLVE | BufferUsages::COPY_SRC),
            readbacks: (0..READBACKS)
                .map(|_| Readback {
                    buffer: buffer(BufferUsages::MAP_READ | BufferUsages::COPY_DST),
                    state: Arc::new(AtomicU8::new(FREE)),
                })
                .collect(),
            period: f64::from(queue.get_timestamp_period()),
            this_frame: None,
            latest: latest.clone(),
        };
        render_app.insert_resource(timer);
    }
}

/// Reads back the frames whose times have come, and writes the first timestamp of this one.
fn frame_begins(mut context: RenderContext, timer: Option<ResMut<FrameTimer>>) {
    let Some(mut timer) = timer else { return };
    let timer = &mut *timer;
    for readback in &timer.readbacks {
        match readback.state.load(Ordering::Acquire) {
            MAPPED => {
                let (begin, end) = {
                    let bytes = readback.buffer.slice(..).get_mapped_range();
                    let tick = |i: usize| {
                        u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]))
                    };
                    (tick(0), tick(1))
                };
                readback.buffer.unmap();
                if end >= begin {
                    let ms = (end - begin) as f64 * timer.period / 1e6;
                    *timer.latest.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(ms);
                }
                readback.state.store(FREE, Ordering::Release);
            }
            // Nothing mapped: that frame has no time.
            FAILED => readback.state.store(FREE, Ordering::Release),
            _ => {}
        }
    }
    timer.this_frame =
        (timer.readbacks.iter()).position(|r| r.state.load(Ordering::Acquire) == FREE);
    if timer.this_frame.is_some() {
        context.command_encoder().write_timestamp(&timer.queries, 0);
    }
}

/// Writes this frame's last timestamp, after every render system's commands, and sends both
/// to a readback buffer mapped once the frame is done.
fn frame_ends(mut context: RenderContext, timer: Option<ResMut<FrameTimer>>) {
    let Some(mut timer) = timer else { return };
    let timer = &mut *timer;
    let Some(slot) = timer.this_frame.take() else {
        return;
    };
    let encoder = context.command_encoder();
    encoder.write_timestamp(&timer.queries, 1);
    encoder.resolve_query_set(&timer.queries, 0..2, &timer.resolved, 0);
    let readback = &timer.readbacks[slot];
    encoder.copy_buffer_to_buffer(&timer.resolved, 0, &readback.buffer, 0, Some(16));
    readback.state.store(PENDING, Ordering::Release);
    let state = readback.state.clone();
    encoder.map_buffer_on_submit(&readback.buffer, MapMode::Read, .., move |result| {
        let now = if result.is_ok() { MAPPED } else { FAILED };
        state.store(now, Ordering::Release);
    });
}

/// Moves the latest GPU frame time into the diagnostics.
fn measure_gpu_frame(latest: Res<LatestGpuFrame>, mut diagnostics: Diagnostics) {
    let ms = latest.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(ms) = ms {
        diagnostics.add_measurement(&GPU_FRAME_TIME, || ms);
    }
}

/// The smoothed GPU time of a frame in milliseconds ([`GpuFrameTime`]); `None` where the
/// adapter gives no timestamps, or before the first frame's have come back.
pub fn gpu_frame_ms(diagnostics: &DiagnosticsStore) -> Option<f64> {
    diagnostics.get(&GPU_FRAME_TIME).and_then(|d| d.smoothed())
}
