//! Drawn crowds: the whole headless frame of N walking SA peds with Bevy's renderer running on
//! wgpu's no-op backend, so that everything the CPU does for a frame is counted (posing,
//! transform propagation, the crowd's bone upload, visibility, extract, prepare, queue, command
//! encoding and submission) and the GPU's execution mostly is not: the no-op device draws
//! nothing, but it does run buffer copies (the bone upload's) on the CPU and makes its staging
//! buffers as zeroed vectors, which group `no-op backend` times on its own. Two threads (Bevy's task pools), pipelined rendering off (the render world runs
//! after the main world, in the same `app.update()`), one camera into a 640×360 image that sees
//! every ped, one directional light without shadows, no skeleton gizmos.
//!
//! Cases, for N = 100, 1,000 and 10,000:
//! * `drawn N`: `CrowdCharacter` + `CrowdModel` of the sample ped, drawn by `CrowdDrawPlugin`;
//! * `drawn glTF N` (1,000 and 10,000): `CrowdCharacter` + `CrowdGltfModel` of the sample glTF
//!   humanoid, the walk retargeted onto its 29 nodes, drawn by `CrowdDrawPlugin`;
//! * `flat N`: the same `CrowdCharacter`s without a model (posed, nothing drawn);
//! * `flat III 10000`, `flat VC 10000`: `flat` on GTA III's skeleton (16 bones, the SA walk
//!   bound through the bone aliases) and on Vice City's (24 bones, VC's walk);
//! * `drawn III 10000`: `flat III` wearing the bundled GTA III ped of parts (16 rigid parts in
//!   four colours: four parts per character), drawn by `CrowdDrawPlugin`;
//! * `flat glTF N` (1,000 and 10,000): the `drawn glTF N` characters in an app without
//!   `CrowdDrawPlugin` (posed on the glTF rig, nothing drawn): the baseline of `drawn glTF N`;
//! * `skinned mesh N`: the ped spawned with bone entities (`GtaModel` + `SkeletalClip`), drawn by
//!   Bevy's `SkinnedMesh`;
//! * `empty`: the same app with no ped (the renderer's fixed cost);
//! * `empty, Bevy alone`: the same without rigplay's plugins (so `empty` less it is what they add
//!   to a frame with no character);
//! * `flat, moving 10000`, `drawn, moving 10000`, `flat glTF, moving 10000`, `drawn glTF,
//!   moving 10000`: those cases with every character moved each frame (2 cm along X and back,
//!   [`crowd_scene::Moving`]), as a game moves its peds;
//! * `flat, travelling 10000`, `drawn, travelling 10000`: every character walking on along X,
//!   2.3 cm a frame ([`crowd_scene::Travelling`]), so that the drawn parts' boxes (kept in world
//!   space) are left behind and set again every few frames (over a run of about 600 frames the
//!   grid moves some 14 m and its far edge leaves the camera's view: the GPU culls those peds,
//!   the CPU's work is the same);
//! * `drawn, far half at half rate 10000`: `drawn 10000` with `CrowdLod` posing the peds farther
//!   from the camera than the grid's centre (about half) on every other frame;
//! * `drawn, rows copied 10000`, `drawn glTF, rows copied 10000`: `drawn 10000` and `drawn glTF
//!   10000` with `CrowdDrawSettings::copy_bone_rows` (the bone rows written into a vector, then
//!   copied into staging memory at upload, as before 2026-12-06): the same-run baseline of the
//!   rows written straight into mapped staging memory;
//! * `drawn, on a layer 10000`: `drawn 10000` with every character on layer 1 (`RenderLayers`,
//!   passed on to its parts) and the camera on layers 0 and 1; `drawn, on a layer, culled on the
//!   CPU 10000`: the same with `CrowdDrawSettings::cpu_culling` (as such parts were culled
//!   before 2026-12-07): its same-run baseline.
//!
//! Group `no-op backend`: what the no-op backend itself adds to a drawn frame, its upload of the
//! bone rows of 1,000 and 10,000 peds (see [`noop_upload`]).
//!
//! The scene fails on any render error: Bevy's own handler stops the renderer for good, and the
//! frames timed after would extract and draw nothing (as they did before 2026-12-06: the no-op
//! device's texture formats had no usages, `docs/performance.md`).
//!
//!     cargo bench -p rigplay-examples --bench crowd_draw
//!
//! Time it in release: in the dev profile (`cargo bench --profile dev --bench crowd_draw`, which
//! shares the tests' build) wgpu's debug assertions take a backtrace at each of its locks.
//!
//! "Two threads" is Bevy's own share of two cores (`TaskPoolOptions::with_num_threads(2)`, as a
//! game on two cores gets by default): one thread each for IO and async compute, and **one**
//! compute thread, on which the systems and their parallel loops run (a profile of `drawn
//! 10000` found 83 % of the samples there, 16 % on the main thread). `RIGPLAY_BENCH_COMPUTE_THREADS=N`
//! gives the compute pool N threads instead (a game that gives both cores to its systems), e.g.
//!
//!     RIGPLAY_BENCH_COMPUTE_THREADS=2 cargo bench -p rigplay-examples --bench crowd_draw
//!
//! `RIGPLAY_BENCH_FRAMES="CASE:N"` runs N frames of one case instead of criterion, and says
//! their times and the CPU time a frame ([`frames_only`]): for counting a profiler's samples over
//! a known number of frames, e.g. from `examples/`
//!
//!     RIGPLAY_BENCH_COMPUTE_THREADS=2 RIGPLAY_BENCH_FRAMES="drawn 10000:600" \
//!         perf record -e cpu-clock -F 999 BIN --bench

use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::settings::RenderCreation;
use criterion::{Criterion, criterion_group};
use rigplay::plugin::{CrowdCharacter, CrowdDrawSettings};

mod crowd_scene;
use crowd_scene::{Moving, Peds, Stage, Travelling};

// The bench takes only the no-op renderer.
#[allow(dead_code)]
#[path = "../anie_render/headless.rs"]
mod headless;
use headless::noop_renderer;

/// How the characters move in a case.
#[derive(Clone, Copy)]
enum Motion {
    Still,
    /// To and fro ([`Moving`]).
    Moving,
    /// On and on ([`Travelling`]).
    Travelling,
}

/// The scene on the no-op renderer, two threads, 640×360, no shadows.
fn scene(peds: Peds, count: usize, motion: Motion) -> App {
    let stage = Stage {
        render: RenderPlugin {
            render_creation: RenderCreation::Manual(noop_renderer(None)),
            ..default()
        },
        threads: Some(2),
        size: UVec2::new(640, 360),
        shadows: false,
    };
    let app = match motion {
        Motion::Moving => crowd_scene::scene(peds, count, stage, Moving),
        Motion::Travelling => crowd_scene::scene(peds, count, stage, Travelling),
        Motion::Still => crowd_scene::scene(peds, count, stage, ()),
    };
    app.unwrap_or_else(|e| panic!("crowd draw: {e}"))
}

/// Every case of group `crowd draw`: its name, its peds and how many.
fn cases() -> Vec<(String, Peds, usize)> {
    let mut cases = vec![
        ("empty".to_string(), Peds::Flat, 0),
        // (Its same-run baseline: the scene without rigplay's plugins.)
        ("empty, Bevy alone".to_string(), Peds::BevyAlone, 0),
    ];
    for count in [100, 1_000, 10_000] {
        for (name, peds) in [
            ("flat", Peds::Flat),
            ("drawn", Peds::Drawn),
            ("skinned mesh", Peds::SkinnedMesh),
        ] {
            cases.push((format!("{name} {count}"), peds, count));
        }
    }
    for count in [1_000, 10_000] {
        cases.push((format!("flat glTF {count}"), Peds::FlatGltf, count));
        cases.push((format!("drawn glTF {count}"), Peds::DrawnGltf, count));
    }
    // Characters that move every frame, as a game's do.
    for (name, peds) in [
        ("flat", Peds::Flat),
        ("drawn", Peds::Drawn),
        ("flat glTF", Peds::FlatGltf),
        ("drawn glTF", Peds::DrawnGltf),
    ] {
        cases.push((format!("{name}, moving 10000"), peds, 10_000));
    }
    for (name, peds) in [("flat", Peds::Flat), ("drawn", Peds::Drawn)] {
        cases.push((format!("{name}, travelling 10000"), peds, 10_000));
    }
    // The other games' skeletons, posed, and a GTA III ped of parts drawn (no VC ped model is
    // bundled).
    cases.push(("flat III 10000".into(), Peds::FlatIii, 10_000));
    cases.push(("drawn III 10000".into(), Peds::DrawnIii, 10_000));
    cases.push(("flat VC 10000".into(), Peds::FlatVc, 10_000));
    // The same-run baseline of the bone rows written straight into mapped staging memory.
    cases.push(("drawn, rows copied 10000".into(), Peds::Drawn, 10_000));
    cases.push((
        "drawn glTF, rows copied 10000".into(),
        Peds::DrawnGltf,
        10_000,
    ));
    cases.push((
        "drawn, far half at half rate 10000".into(),
        Peds::DrawnHalfRate,
        10_000,
    ));
    // Every character on layer 1, the camera on layers 0 and 1: its parts culled on the GPU, and
    // (the same-run baseline) on the CPU, as they were before 2026-12-07.
    cases.push(("drawn, on a layer 10000".into(), Peds::Drawn, 10_000));
    cases.push((
        "drawn, on a layer, culled on the CPU 10000".into(),
        Peds::Drawn,
        10_000,
    ));
    cases
}

/// The app of case `name` ([`cases`]).
fn case_app(name: &str, peds: Peds, count: usize) -> App {
    // (`, moving` or `, travelling` in the name: every character moves each frame.)
    let motion = match (name.contains(", moving"), name.contains(", travelling")) {
        (true, _) => Motion::Moving,
        (_, true) => Motion::Travelling,
        _ => Motion::Still,
    };
    let mut app = scene(peds, count, motion);
    // (`, rows copied` in the name: the bone rows through a vector, as before 2026-12-06.)
    if name.contains(", rows copied") {
        (app.world_mut().resource_mut::<CrowdDrawSettings>()).copy_bone_rows = true;
    }
    // (`, on a layer` in the name: every character on layer 1, seen by the camera; `, culled on
    // the CPU`: its parts culled there.)
    if name.contains(", on a layer") {
        use bevy::camera::visibility::RenderLayers;
        let world = app.world_mut();
        let characters: Vec<Entity> = (world.query_filtered::<Entity, With<CrowdCharacter>>())
            .iter(world)
            .collect();
        for character in characters {
            world.entity_mut(character).insert(RenderLayers::layer(1));
        }
        let camera = (world.query_filtered::<Entity, With<Camera>>())
            .single(world)
            .expect("one camera");
        (world.entity_mut(camera)).insert(RenderLayers::from_layers(&[0, 1]));
        world.resource_mut::<CrowdDrawSettings>().cpu_culling = name.contains("on the CPU");
    }
    app
}

fn crowd_draw(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd draw");
    g.sample_size(10);
    // Each app is built the first time criterion runs its case (so a filtered run builds only
    // the apps it measures) and dropped before the next case's.
    for (name, peds, count) in cases() {
        let mut app = None;
        g.bench_function(&name, |b| {
            let app = app.get_or_insert_with(|| case_app(&name, peds, count));
            b.iter(|| app.update())
        });
    }
    g.finish();
}

/// `RIGPLAY_BENCH_FRAMES="CASE:N"` (CASE one of group `crowd draw`'s, e.g. `drawn 10000:600`):
/// instead of criterion, N frames of that case after 60 to settle, each timed, and the process's
/// CPU time over them (Linux). A profiler's samples over the run (`perf record`) are then over a
/// known number of frames, which criterion does not say: counted per function, they compare two
/// cases or two builds without the wall clock's drift between runs.
fn frames_only() {
    let Ok(asked) = std::env::var("RIGPLAY_BENCH_FRAMES") else {
        return;
    };
    let Some((case, frames)) = (asked.rsplit_once(':'))
        .and_then(|(case, n)| Some((case.to_string(), n.parse::<usize>().ok()?)))
        .filter(|(_, n)| *n > 0)
    else {
        eprintln!("RIGPLAY_BENCH_FRAMES: \"{asked}\" is not CASE:FRAMES");
        std::process::exit(2);
    };
    let Some((name, peds, count)) = cases().into_iter().find(|(name, ..)| *name == case) else {
        eprintln!("RIGPLAY_BENCH_FRAMES: no case \"{case}\"");
        std::process::exit(2);
    };
    let mut app = case_app(&name, peds, count);
    for _ in 0..60 {
        app.update();
    }
    let (cpu_before, started) = (cpu_seconds(), std::time::Instant::now());
    let mut times: Vec<f64> = (0..frames)
        .map(|_| {
            let frame = std::time::Instant::now();
            app.update();
            frame.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let wall = started.elapsed().as_secs_f64() * 1e3;
    let cpu = cpu_seconds().zip(cpu_before).map(|(a, b)| (a - b) * 1e3);
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    print!(
        "{name}, {frames} frames: min {:.3} ms, p25 {:.3}, median {:.3}, mean {:.3}",
        at(0.0),
        at(0.25),
        at(0.5),
        wall / frames as f64
    );
    match cpu {
        Some(cpu) => println!(", CPU {:.3} ms a frame", cpu / frames as f64),
        None => println!(),
    }
    std::process::exit(0);
}

/// The process's CPU time so far (user and system, all threads), seconds, where Linux says it
/// (`/proc/self/stat`, in clock ticks: `USER_HZ`, which is 100 on Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name (in brackets, which may hold spaces): utime and stime
    // are the 12th and 13th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
}

/// What the no-op backend itself adds to a drawn frame: it runs on the CPU what a real device
/// does elsewhere. Each case moves the rows of N drawn SA peds (N · 32 · 48 bytes) into a
/// storage buffer and submits, as the crowd uploads its bones each frame:
/// * `belt N`: through staging memory kept from frame to frame (a `StagingBelt`), as the crowd
///   did in the thirty-first and thirty-second sessions (2026-12-06; its places still go this
///   way, and its bones where `CrowdDrawSettings::copy_bone_rows` asks): the rows copied into
///   mapped memory, and on submit the no-op backend copies them into the buffer (the GPU's
///   work). Since the thirty-third session the bones are written straight into mapped memory as
///   they are posed, and only the copy on submit is left of this;
/// * `write_buffer N`: through `Queue::write_buffer`, as the crowd did before: on top, the
///   no-op backend makes a staging buffer each frame, as a zeroed vector copied into an `Arc`
///   (fresh pages each frame);
/// * `copy N`: the same bytes copied once between two vectors made before: what mapped staging
///   memory costs the CPU at least, and what the no-op's copy on submit costs it again. A drawn
///   frame's cost on a real device's CPU is about `drawn N − copy N` (the copy on submit taken
///   away).
fn noop_upload(c: &mut Criterion) {
    let mut g = c.benchmark_group("no-op backend");
    g.sample_size(10);
    for count in [1_000, 10_000] {
        let bytes = count * 32 * 48;
        let rows = vec![1u8; bytes];
        // (The no-op device is made at once: that takes no time.)
        let resources = noop_renderer(None);
        let (device, queue) = (resources.0.wgpu_device().clone(), resources.1);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bones"),
            size: bytes as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let chunk = (bytes as u64).next_power_of_two();
        let mut belt = wgpu::util::StagingBelt::new(device.clone(), chunk);
        g.bench_function(format!("belt {count}"), |b| {
            b.iter(|| {
                let mut encoder = device.create_command_encoder(&Default::default());
                let size = wgpu::BufferSize::new(bytes as u64).expect("not zero");
                belt.write_buffer(&mut encoder, &buffer, 0, size)
                    .copy_from_slice(&rows);
                belt.finish();
                queue.submit([encoder.finish()]);
                belt.recall();
            })
        });
        g.bench_function(format!("write_buffer {count}"), |b| {
            b.iter(|| {
                queue.write_buffer(&buffer, 0, &rows);
                queue.submit(std::iter::empty());
            })
        });
        let mut to = vec![0u8; bytes];
        g.bench_function(format!("copy {count}"), |b| {
            b.iter(|| to.copy_from_slice(std::hint::black_box(&rows)))
        });
    }
    g.finish();
}

criterion_group!(benches, crowd_draw, noop_upload);

fn main() {
    frames_only();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
