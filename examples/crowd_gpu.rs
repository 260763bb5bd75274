//! The GPU time of drawn crowds, on this machine's own adapter: the crowd bench's scene (N
//! walking SA peds on a grid, all in view; `benches/crowd_scene.rs`) drawn into an image with no
//! window, and each render pass's GPU time read from timestamp queries (Bevy's
//! `RenderDiagnosticsPlugin`).
//!
//!     cargo run --release --example crowd_gpu -- [N] [--frames F] [--size WxH]
//!
//! (N: 10000; F: 120 measured frames, after 30 unmeasured; size: 1920x1080.) Cases: the flat
//! path (posed, nothing drawn), the crowd renderer without and with a shadow-casting sun, and
//! Bevy's own `SkinnedMesh` per ped (bone entities) without and with shadows. For each it prints
//! the median GPU milliseconds of every pass over the measured frames, their sum, and the median
//! wall time of a whole frame (`App::update`, pipelined rendering off, every core). The adapter
//! has to support timestamp queries (Vulkan and DX12 do); without them only CPU times exist and
//! the example says so.
//!
//! Bevy 0.19.1 times some passes and not others (its shadow passes have no span), so the example
//! adds a span of its own, `frame`: a timestamp written before every render system's commands and
//! one after them, by render systems of its own (a `RenderContext`'s command buffers are submitted
//! in the systems' order). It needs timestamps between passes (`TIMESTAMP_QUERY_INSIDE_ENCODERS`).

use bevy::diagnostic::DiagnosticsStore;
use bevy::prelude::*;
use bevy::render::diagnostic::{
    RecordDiagnostics, RenderDiagnosticsPlugin, begin_diagnostics_frame, resolve_encoder,
};
use bevy::render::renderer::{RenderAdapterInfo, RenderContext, RenderGraph, RenderGraphSystems};
use bevy::render::{RenderApp, RenderPlugin};
use std::collections::BTreeMap;
use std::time::Instant;

// The example measures every case but the half-rate one.
#[allow(dead_code)]
#[path = "benches/crowd_scene.rs"]
mod crowd_scene;
use crowd_scene::{Peds, Stage, scene};

fn main() {
    let m = clap::Command::new("crowd_gpu")
        .about("The GPU time of drawn crowds on this machine's adapter, pass by pass")
        .arg(
            clap::Arg::new("count")
                .value_name("N")
                .default_value("10000")
                .value_parser(clap::value_parser!(usize)),
        )
        .arg(
            clap::Arg::new("frames")
                .long("frames")
                .value_name("F")
                .default_value("120")
                .value_parser(clap::value_parser!(usize)),
        )
        .arg(
            clap::Arg::new("size")
                .long("size")
                .value_name("WxH")
                .default_value("1920x1080"),
        )
        .get_matches();
    let count = *m.get_one::<usize>("count").expect("defaulted");
    let frames = (*m.get_one::<usize>("frames").expect("defaulted")).clamp(1, 1000);
    let size = m.get_one::<String>("size").expect("defaulted");
    let Some(size) = size
        .split_once('x')
        .and_then(|(w, h)| Some(UVec2::new(w.parse().ok()?, h.parse().ok()?)))
        .filter(|s| (1..=8192).contains(&s.x) && (1..=8192).contains(&s.y))
    else {
        eprintln!("crowd_gpu: --size takes WxH, each 1 to 8192, not {size}");
        std::process::exit(2);
    };
    println!(
        "{count} peds, {}x{} image, {frames} measured frames",
        size.x, size.y
    );
    for (name, peds, shadows) in [
        ("flat (nothing drawn)", Peds::Flat, false),
        ("crowd renderer", Peds::Drawn, false),
        ("crowd renderer, shadows", Peds::Drawn, true),
        ("Bevy SkinnedMesh", Peds::SkinnedMesh, false),
        ("Bevy SkinnedMesh, shadows", Peds::SkinnedMesh, true),
    ] {
        let built = Instant::now();
        let stage = Stage {
            render: RenderPlugin::default(),
            threads: None,
            size,
            shadows,
        };
        let mut app = match scene(peds, count, stage, (RenderDiagnosticsPlugin, FrameSpan)) {
            Ok(app) => app,
            Err(e) => {
                eprintln!("crowd_gpu: {name}: {e}");
                std::process::exit(1);
            }
        };
        if name.starts_with("flat") {
            let info = &app
                .sub_app(RenderApp)
                .world()
                .resource::<RenderAdapterInfo>()
                .0;
            println!(
                "adapter: {} ({:?}, driver {} {})",
                info.name, info.backend, info.driver, info.driver_info
            );
        }
        let set_up = built.elapsed().as_secs_f64();
        // Unmeasured frames, then the history starts afresh.
        for _ in 0..30 {
            app.update();
        }
        app.world_mut()
            .resource_mut::<DiagnosticsStore>()
            .iter_mut()
            .for_each(|d| d.clear_history());
        let mut walls = Vec::with_capacity(frames);
        for _ in 0..frames {
            let start = Instant::now();
            app.update();
            walls.push(start.elapsed().as_secs_f64() * 1e3);
        }
        // Each pass's GPU times, frame by frame (the history keeps the latest 120; every pass
        // is timed in every frame, so the histories line up).
        let store = app.world().resource::<DiagnosticsStore>();
        let histories: BTreeMap<String, Vec<f64>> = store
            .iter()
            .filter_map(|d| {
                let path = d.path().as_str();
                let pass = path.strip_prefix("render/")?.strip_suffix("/elapsed_gpu")?;
                Some((pass.to_string(), d.values().copied().collect()))
            })
            .collect();
        let wall = median(&mut walls).unwrap_or(f64::NAN);
        println!("\n{name}: set up in {set_up:.1} s; whole frame (CPU wall) median {wall:.2} ms");
        if histories.is_empty() {
            println!("  no GPU times: the adapter lacks timestamp queries");
            continue;
        }
        for (pass, values) in &histories {
            let n = values.len();
            let ms = median(&mut values.clone()).unwrap_or(f64::NAN);
            println!("  {pass:<40} {ms:>8.3} ms GPU  (median of {n})");
        }
        // Bevy's timed passes are spans inside `frame` (`frame/<pass>`); what `frame` holds
        // besides them is mostly the shadow passes, which Bevy 0.19.1 does not time.
        if let Some(frame) = histories.get("frame") {
            let inside: Vec<&Vec<f64>> = histories
                .iter()
                .filter(|(p, _)| p.strip_prefix("frame/").is_some_and(|p| !p.contains('/')))
                .map(|(_, v)| v)
                .collect();
            if inside.iter().all(|v| v.len() == frame.len()) {
                let mut outside: Vec<f64> = (0..frame.len())
                    .map(|i| frame[i] - inside.iter().map(|v| v[i]).sum::<f64>())
                    .collect();
                let ms = median(&mut outside).unwrap_or(f64::NAN);
                println!("  {:<40} {ms:>8.3} ms GPU", "frame, less the timed passes");
            } else {
                println!("  (the passes were not timed in every frame: no difference taken)");
            }
        }
    }
}

/// The `frame` span: from before the first render system's commands to after the last one's.
struct FrameSpan;

impl Plugin for FrameSpan {
    fn build(&self, app: &mut App) {
        app.sub_app_mut(RenderApp).add_systems(
            RenderGraph,
            (
                frame_begins
                    .in_set(RenderGraphSystems::Begin)
                    .after(begin_diagnostics_frame),
                frame_ends
                    .after(RenderGraphSystems::Render)
                    .before(resolve_encoder),
            ),
        );
    }
}

/// Writes the `frame` span's first timestamp, in a command buffer submitted before the render
/// systems' own (a `RenderContext`'s buffers are queued in the systems' order).
fn frame_begins(mut context: RenderContext) {
    if let Some(recorder) = context.diagnostic_recorder() {
        recorder.begin_time_span(context.command_encoder(), "frame".into());
    }
}

/// Writes the `frame` span's last timestamp, after every render system's commands.
fn frame_ends(mut context: RenderContext) {
    if let Some(recorder) = context.diagnostic_recorder() {
        recorder.end_time_span(context.command_encoder());
    }
}

/// The median of `values`, or `None` if there are none.
fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}
