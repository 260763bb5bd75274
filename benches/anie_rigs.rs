//! CPU cost per frame of drawing many AnimeEffects rigs with `AniePlugin`, in a headless app on
//! whatever Vulkan adapter there is (lavapipe in CI): the main world's part (which rigs show a
//! new frame, their evaluation and program build on the compute threads, the cell list) and the
//! render world's part (packing programs into the shared buffers, upload, encoding the passes).
//! GPU execution is not timed: each sample is the sum of the two systems' own CPU time over the
//! frames criterion asks for (`iter_custom`), not the frames' wall time.
//!
//! Rigs of the bundled cat (`assets/anims/anie/character.anie`: 256², 7 layers, 412 triangles,
//! 24 fps) at random phases, 60 Hz fixed steps:
//! * `anie_rigs/shared/N`: stepped frames, as AnimeEffects plays: rigs share one program per
//!   timeline frame (at most 48), and a rig is redrawn only when its frame changes;
//! * `anie_rigs/unshared/N`: fractional frames, every rig evaluated and drawn every frame;
//! * `anie_rigs/vertices/NAME`: 100 unshared rigs of each bundled sample, per triangle drawn;
//! * `anie_rigs/baseline_evaluate`: one `Evaluator::evaluate` of the cat, single-threaded, in
//!   the same run: the unit the others are quoted in.
//!
//!     cargo bench --profile dev --config 'profile.dev.package.rigplay.opt-level=3' --bench anie_rigs
//!
//! On lavapipe the bench sets `LP_NUM_THREADS=0`, so that the software GPU executes each frame
//! inside the queue submit instead of on worker threads that would run beside (and slow) the
//! systems being timed.

#[path = "../examples/anie_render/headless.rs"]
#[allow(dead_code)]
mod headless;
#[path = "../tests/rng.rs"]
#[allow(dead_code)]
mod rng;

use bevy::prelude::*;
use bevy::render::RenderApp;
use bevy::time::TimeUpdateStrategy;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rigplay::anie::eval::Evaluator;
use rigplay::formats::anie::AnieFile;
use rigplay::plugin::{AnieDisplay, AnieDrawStats, AnieFrames, AnieRenderStats, AnieRig, Playback};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A headless app with `count` rigs of `sample`, warmed up until every rig was drawn once.
fn scene(sample: &str, count: usize, frames: AnieFrames) -> App {
    let mut app = headless::headless_app(root());
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    let project = app
        .world()
        .resource::<AssetServer>()
        .load(format!("assets/anims/anie/{sample}.anie"));
    let mut rng = rng::Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..count {
        let mut playback = Playback::looping();
        playback.time = rng.range(0.0, 2.0);
        app.world_mut().spawn((
            AnieRig::new(project.clone())
                .with_frames(frames)
                .with_display(AnieDisplay::Offscreen)
                // Cells of 128² (half the canvas): 1000 of them fit in a few pages.
                .with_scale(0.5),
            playback,
        ));
    }
    for _ in 0..2000 {
        app.update();
        let drawn = headless::render_stats(&app).drawn;
        if drawn >= count as u64 {
            break;
        }
    }
    app
}

/// The mean CPU time per frame of the main and the render world's systems over 120 frames,
/// and the cells drawn per frame, printed beside criterion's numbers.
fn split(name: &str, app: &mut App) {
    let (mut main, mut render, mut cells) = (Duration::ZERO, Duration::ZERO, 0);
    for _ in 0..120 {
        app.update();
        main += app.world().resource::<AnieDrawStats>().time;
        let stats = *app.sub_app(RenderApp).world().resource::<AnieRenderStats>();
        render += stats.time;
        cells += app.world().resource::<AnieDrawStats>().redrawn;
    }
    println!(
        "{name}: main world {:.1} µs, render world {:.1} µs per frame, {:.1} cells drawn per frame",
        main.as_secs_f64() * 1e6 / 120.0,
        render.as_secs_f64() * 1e6 / 120.0,
        cells as f64 / 120.0
    );
}

/// The two systems' CPU time over `iters` frames.
fn cpu_time(app: &mut App, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        app.update();
        let main = app.world().resource::<AnieDrawStats>().time;
        let render = app
            .sub_app(RenderApp)
            .world()
            .resource::<AnieRenderStats>()
            .time;
        total += main + render;
    }
    total
}

fn rigs(c: &mut Criterion) {
    if std::env::var_os("LP_NUM_THREADS").is_none() {
        // SAFETY: set before the first app (and so the first thread that could read the
        // environment) is made; criterion runs the benchmarks on this thread.
        unsafe { std::env::set_var("LP_NUM_THREADS", "0") };
    }
    let mut g = c.benchmark_group("anie_rigs");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let bytes = std::fs::read(root().join("assets/anims/anie/character.anie")).unwrap();
    let cat = Evaluator::new(AnieFile::read(&bytes).unwrap().file);
    g.bench_function("baseline_evaluate", |b| {
        let mut f = 0.0;
        b.iter(|| {
            f = (f + 0.37) % 47.0;
            black_box(cat.evaluate(black_box(f)))
        })
    });
    for count in [1usize, 100, 1000] {
        for (name, frames) in [
            ("shared", AnieFrames::Stepped),
            ("unshared", AnieFrames::Smooth),
        ] {
            let mut app = scene("character", count, frames);
            g.throughput(Throughput::Elements(count as u64));
            g.bench_with_input(BenchmarkId::new(name, count), &count, |b, _| {
                b.iter_custom(|iters| cpu_time(&mut app, iters))
            });
            split(&format!("{name}/{count}"), &mut app);
        }
    }
    for sample in ["mesh_ffd", "character", "blend_sheet"] {
        let mut app = scene(sample, 100, AnieFrames::Smooth);
        app.update();
        let triangles = app
            .world()
            .resource::<rigplay::plugin::AnieDrawList>()
            .draws
            .iter()
            .map(|d| d.program.triangle_count() as u64)
            .sum::<u64>();
        g.throughput(Throughput::Elements(triangles.max(1)));
        g.bench_function(BenchmarkId::new("vertices", sample), |b| {
            b.iter_custom(|iters| cpu_time(&mut app, iters))
        });
        split(
            &format!("vertices/{sample} ({triangles} triangles per frame)"),
            &mut app,
        );
    }
    g.finish();
}

criterion_group!(benches, rigs);
criterion_main!(benches);
