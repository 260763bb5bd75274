//! The GPU time of drawn crowds, on this machine's own adapter: the crowd bench's scene (N
//! walking SA peds on a grid, all in view; `benches/crowd_scene.rs`) drawn into an image with no
//! window, and each render pass's GPU time read from timestamp queries (Bevy's
//! `RenderDiagnosticsPlugin`).
//!
//!     cargo run --release --example crowd_gpu -- [N] [--frames F] [--size WxH]
//!
//! (N: 10000; F: 120 measured frames, after 30 unmeasured; size: 1920x1080.) Cases: the flat
//! path (posed, nothing drawn), the crowd renderer without and with a shadow-casting sun, the
//! sample glTF humanoid's characters posed on its rig with nothing drawn (an app without
//! `CrowdDrawPlugin`) and drawn by the crowd renderer (`CrowdGltfModel`), the bundled GTA III
//! ped of parts drawn by the crowd renderer (III's skeleton, four parts a ped), and Bevy's own
//! `SkinnedMesh` per ped (bone entities) without and with shadows. For each it prints
//! the median GPU milliseconds of every pass over the measured frames, their sum, and the median
//! wall time of a whole frame (`App::update`, pipelined rendering off, every core). The adapter
//! has to support timestamp queries (Vulkan and DX12 do); without them only CPU times exist and
//! the example says so.
//!
//! Bevy 0.19.1 times some passes and not others (its shadow passes have no span), so the example
//! also times the whole frame with timestamp queries of its own, before every render system's
//! commands and after them (`rigplay_preview::crowd::GpuFrameTime`, which the `crowd` example
//! shows too). That needs timestamps between passes (`TIMESTAMP_QUERY_INSIDE_ENCODERS`).
//! "frame, less the timed passes" is the frame's median less the sum of the passes' medians.

use bevy::diagnostic::DiagnosticsStore;
use bevy::prelude::*;
use bevy::render::renderer::RenderAdapterInfo;
use bevy::render::{RenderApp, RenderPlugin};
use rigplay_preview::crowd::{GPU_FRAME_TIME, GpuFrameTime};
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
                .value_parser(clap::value_parser!(u16).range(1..=1000)),
        )
        .arg(
            clap::Arg::new("size")
                .long("size")
                .value_name("WxH")
                .default_value("1920x1080"),
        )
        .get_matches();
    let count = *m.get_one::<usize>("count").expect("defaulted");
    let frames = usize::from(*m.get_one::<u16>("frames").expect("defaulted"));
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
        ("flat glTF humanoid (nothing drawn)", Peds::FlatGltf, false),
        ("crowd renderer, glTF humanoid", Peds::DrawnGltf, false),
        (
            "crowd renderer, GTA III ped of parts",
            Peds::DrawnIii,
            false,
        ),
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
        let mut app = match scene(peds, count, stage, GpuFrameTime) {
            Ok(app) => app,
            Err(e) => {
                eprintln!("crowd_gpu: {name}: {e}");
                std::process::exit(1);
            }
        };
        if peds == Peds::Flat {
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
        // Each pass's GPU times as Bevy times them (the history keeps the latest 120), and the
        // whole frame's (`GpuFrameTime`).
        let store = app.world().resource::<DiagnosticsStore>();
        let history =
            |d: &bevy::diagnostic::Diagnostic| -> Vec<f64> { d.values().copied().collect() };
        let passes: BTreeMap<String, Vec<f64>> = store
            .iter()
            .filter_map(|d| {
                let path = d.path().as_str();
                let pass = path.strip_prefix("render/")?.strip_suffix("/elapsed_gpu")?;
                Some((pass.to_string(), history(d)))
            })
            .collect();
        let frame = store.get(&GPU_FRAME_TIME).map(history).unwrap_or_default();
        let wall = median(&mut walls).unwrap_or(f64::NAN);
        println!("\n{name}: set up in {set_up:.1} s; whole frame (CPU wall) median {wall:.2} ms");
        if passes.is_empty() && frame.is_empty() {
            println!("  no GPU times: the adapter lacks timestamp queries");
            continue;
        }
        let mut timed = 0.0;
        for (pass, values) in &passes {
            let ms = median(&mut values.clone()).unwrap_or(f64::NAN);
            // (A span inside another is in its parent's time.)
            if !pass.contains('/') {
                timed += ms;
            }
            println!(
                "  {pass:<40} {ms:>8.3} ms GPU  (median of {})",
                values.len()
            );
        }
        if let Some(ms) = median(&mut frame.clone()) {
            println!(
                "  {:<40} {ms:>8.3} ms GPU  (median of {})",
                "frame",
                frame.len()
            );
            // What the frame holds besides the passes Bevy times: mostly the shadow passes.
            println!(
                "  {:<40} {:>8.3} ms GPU",
                "frame, less the timed passes",
                ms - timed
            );
        }
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
