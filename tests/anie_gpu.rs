//! The GPU renderer (`AniePlugin`) on lavapipe or any Vulkan adapter, headless: every bundled
//! sample and every AnimeEffects reference project at several frames and scales, drawn as rigs
//! of one app (so many rigs share pages and passes), read back, and compared with the CPU
//! reference (`Renderer::render`) and with AnimeEffects' own framebuffers
//! (`tests/fixtures/anie/NAME_fF.raw.png`) by the reference criterion: mean absolute error
//! ≤ 1/255 per channel and ≤ 0.5 % of the pixels off by more than 8/255.
//!
//! `.ci/run` sets RIGPLAY_REQUIRE_RENDER=1 so a machine that cannot render fails; elsewhere a
//! machine with no adapter prints NOT RUN. On a failure the test writes the GPU image, the
//! reference and their difference side by side under the target's temporary folder.

#[path = "../examples/anie_render/headless.rs"]
pub(crate) mod headless;

use crate::srgb::{srgb_decode, srgb_encode};
use headless::{Shot, render_shots};
use rigplay::anie::cpu::{Renderer, RgbaImage, compare};
use rigplay::anie::eval::Evaluator;
use rigplay::formats::anie::AnieFile;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(asset: &str) -> AnieFile {
    let bytes = std::fs::read(root().join(asset)).expect("project");
    AnieFile::read(&bytes).expect("reads").file
}

/// GPU, reference and the difference (×8, alpha opaque) side by side.
pub(crate) fn write_diff(name: &str, gpu: &RgbaImage, reference: &RgbaImage) -> PathBuf {
    let (w, h) = (gpu.width, gpu.height);
    let mut out = RgbaImage::new(w * 3, h);
    for y in 0..h {
        for x in 0..w {
            let (a, b) = (
                gpu.get(x.into(), y.into()),
                reference.get(x.into(), y.into()),
            );
            let d = std::array::from_fn(|i| {
                if i == 3 {
                    255
                } else {
                    a[i].abs_diff(b[i])
                        .max(a[3].abs_diff(b[3]))
                        .saturating_mul(8)
                }
            });
            for (k, p) in [a, b, d].into_iter().enumerate() {
                *out.get_mut(i64::from(x + k as u32 * w), y.into()).unwrap() = p;
            }
        }
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anie_gpu");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    image::save_buffer(
        &path,
        &out.to_rgba8(),
        out.width,
        out.height,
        image::ExtendedColorType::Rgba8,
    )
    .unwrap();
    path
}

fn largest_difference(a: &RgbaImage, b: &RgbaImage) -> u8 {
    a.pixels
        .iter()
        .zip(&b.pixels)
        .flat_map(|(p, q)| p.iter().zip(q).map(|(x, y)| x.abs_diff(*y)))
        .max()
        .unwrap_or(0)
}

/// Checks one image against a reference; returns a failure line, if any.
fn check(name: &str, gpu: &RgbaImage, reference: &RgbaImage, against: &str) -> Option<String> {
    let Some((mean, off)) = compare(gpu, reference, 8) else {
        return Some(format!(
            "{name}: GPU {}×{} vs {against} {}×{}",
            gpu.width, gpu.height, reference.width, reference.height
        ));
    };
    let worst = largest_difference(gpu, reference);
    println!(
        "{name:<24} vs {against:<13} mean {mean:.4}/255, off>8 {:.3} %, largest difference {worst}",
        off * 100.0
    );
    let nonempty = reference.pixels.iter().any(|p| p[3] > 0);
    if mean > 1.0 || off > 0.005 || !nonempty {
        let path = write_diff(&format!("{name}_vs_{against}"), gpu, reference);
        return Some(format!(
            "{name} vs {against}: mean {mean:.4}, off {:.3} % (images: {})",
            off * 100.0,
            path.display()
        ));
    }
    None
}

/// Whether a failure to render here is a failure of the test.
fn render_required() -> bool {
    std::env::var_os("RIGPLAY_REQUIRE_RENDER").is_some()
}

/// Runs `body` on its own thread: its result, or `None` (NOT RUN) where Bevy finds no GPU
/// adapter and rendering is not required. Any other panic is the test's.
pub(crate) fn on_gpu<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    crate::task_pools();
    match std::thread::spawn(body).join() {
        Ok(value) => Some(value),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !render_required() && message.contains("GPU") {
                eprintln!(
                    "NOT RUN: no GPU adapter (install mesa-vulkan-drivers for lavapipe): {message}"
                );
                return None;
            }
            std::panic::resume_unwind(panic)
        }
    }
}

/// Runs frames until `rig`'s cell has been drawn and nothing waited for the GPU for `frames`
/// frames in a row (at most 3000): the cell, and its page's side in pixels.
fn until_drawn(
    app: &mut bevy::prelude::App,
    rig: bevy::prelude::Entity,
    frames: usize,
) -> (rigplay::plugin::AnieCell, u32) {
    use bevy::prelude::*;
    use rigplay::plugin::AnieCell;
    let mut settled = 0;
    for _ in 0..3000 {
        app.update();
        let drawn = app
            .world()
            .get::<AnieCell>(rig)
            .is_some_and(|c| c.frame.is_some())
            && headless::render_stats(app).pending == 0
            && headless::render_stats(app).drawn > 0;
        settled = if drawn { settled + 1 } else { 0 };
        if settled > frames {
            break;
        }
    }
    assert!(settled > frames, "the rig was never drawn");
    let cell = app.world().get::<AnieCell>(rig).unwrap().clone();
    let side = app
        .world()
        .resource::<Assets<Image>>()
        .get(&cell.page)
        .unwrap()
        .width();
    (cell, side)
}

/// Renders the shots of projects under `root` ([`on_gpu`]).
fn render_or_skip(root: PathBuf, shots: &[Shot]) -> Option<Vec<RgbaImage>> {
    let shots = shots.to_vec();
    on_gpu(move || render_shots(&root, &shots))
        .map(|r| r.unwrap_or_else(|e| panic!("the GPU renderer failed: {e}")))
}

const SAMPLES: &str = "assets/anims/anie";
const FIXTURES: &str = "tests/fixtures/anie";

/// AnimeEffects' framebuffers: (project, frames).
const REFERENCES: [(&str, &[u32]); 5] = [
    ("t8", &[0, 3, 7, 23]),
    ("blend_v8", &[0, 3]),
    ("clip_v8", &[0, 3, 7]),
    ("ffd", &[0, 5, 10]),
    ("bones", &[0, 5, 10, 15, 20]),
];

#[test]
fn gpu_rigs_match_the_cpu_reference_and_animeeffects() {
    let mut shots = Vec::new();
    // Samples at whole and fractional frames and three scales; references at their frames.
    for name in ["character", "mesh_ffd", "blend_sheet"] {
        for (frame, scale) in [(0.0, 1.0), (3.5, 1.0), (7.0, 0.5), (12.25, 2.0)] {
            shots.push(Shot {
                asset: format!("{SAMPLES}/{name}.anie"),
                frame,
                scale,
                hidden: Vec::new(),
            });
        }
    }
    for (name, frames) in REFERENCES {
        for &frame in frames {
            shots.push(Shot {
                asset: format!("{FIXTURES}/{name}.anie"),
                frame: frame as f32,
                scale: 1.0,
                hidden: Vec::new(),
            });
        }
        shots.push(Shot {
            asset: format!("{FIXTURES}/{name}.anie"),
            frame: 2.5,
            scale: 1.5,
            hidden: Vec::new(),
        });
    }
    // Hidden nodes: in each sample its first folder under the root with its subtree, or its
    // first layer where it has no folder.
    for name in ["character", "mesh_ffd", "blend_sheet"] {
        let project = read(&format!("{SAMPLES}/{name}.anie"));
        let under_root = |n: &&rigplay::formats::anie::ObjectNode| n.parent.is_some();
        let node = project
            .objects
            .iter()
            .position(|n| under_root(&n) && !n.children.is_empty())
            .or_else(|| project.objects.iter().position(|n| under_root(&n)))
            .expect("a node to hide");
        println!(
            "{name}: hiding node {node} ({:?})",
            project.objects[node].name
        );
        shots.push(Shot {
            asset: format!("{SAMPLES}/{name}.anie"),
            frame: 5.0,
            scale: 1.0,
            hidden: vec![node],
        });
    }
    // Rigs at the same program are drawn as one instanced draw (and their mask passes and
    // copies go together): the blend sheet (copies, mask passes) and clip_v8 (masks) twice more.
    for (asset, frame) in [
        ("{SAMPLES}/blend_sheet.anie", 3.5),
        ("{FIXTURES}/clip_v8.anie", 3.0),
    ] {
        let asset = asset
            .replace("{SAMPLES}", SAMPLES)
            .replace("{FIXTURES}", FIXTURES);
        for _ in 0..2 {
            shots.push(Shot {
                asset: asset.clone(),
                frame,
                scale: 1.0,
                hidden: Vec::new(),
            });
        }
    }
    let Some(images) = render_or_skip(root(), &shots) else {
        return;
    };
    let mut failures = Vec::new();
    for (shot, gpu) in shots.iter().zip(&images) {
        let project = read(&shot.asset);
        let name = format!(
            "{}_f{}_x{}",
            Path::new(&shot.asset)
                .file_stem()
                .unwrap()
                .to_string_lossy(),
            shot.frame,
            shot.scale
        );
        let mut frame = Evaluator::new(project.clone()).evaluate(shot.frame);
        // Hidden nodes and their subtrees, as their visibility flag would hide them.
        let mut stack = shot.hidden.clone();
        while let Some(n) = stack.pop() {
            frame.nodes[n].visible = false;
            stack.extend(&project.objects[n].children);
        }
        let cpu = Renderer::new(&project).render(&frame, shot.scale);
        if !shot.hidden.is_empty() {
            let whole = Renderer::new(&project).render(
                &Evaluator::new(project.clone()).evaluate(shot.frame),
                shot.scale,
            );
            assert_ne!(whole.pixels, cpu.pixels, "{name}: hiding changed nothing");
        }
        failures.extend(check(&name, gpu, &cpu, "CPU reference"));
        let stem = Path::new(&shot.asset)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let raw = root()
            .join(FIXTURES)
            .join(format!("{stem}_f{}.raw.png", shot.frame));
        if shot.scale == 1.0 && shot.hidden.is_empty() && raw.exists() {
            let img = image::open(&raw).unwrap().to_rgba8();
            let ae = RgbaImage::from_rgba8(img.width(), img.height(), img.as_raw()).unwrap();
            failures.extend(check(&name, gpu, &ae, "AnimeEffects"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_2d_camera_shows_the_rig_as_its_cell_holds_it() {
    use bevy::camera::{CompositingSpace, RenderTarget, ScalingMode};
    use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
    use bevy::prelude::*;
    use bevy::render::render_resource::{TextureFormat, TextureUsages};
    use headless::{crop, headless_app, read_back};
    use rigplay::plugin::{AnieDisplay, AnieRig, Playback};

    on_gpu(|| {
        let mut app = headless_app(&root());
        let project = read("assets/anims/anie/character.anie");
        let (w, h) = (project.canvas_width, project.canvas_height);
        // Two cameras on the same rig, each into an sRGB image (as a window's swapchain is): one
        // compositing in sRGB, one in linear light. (Into an `Rgba8Unorm` image Bevy writes
        // linear values: its final blit decodes the sRGB-composited texture, and only an sRGB
        // target encodes it again.)
        let mut targets = Vec::new();
        for (space, format) in [
            (CompositingSpace::Srgb, TextureFormat::Rgba8UnormSrgb),
            (CompositingSpace::Linear, TextureFormat::Rgba8UnormSrgb),
        ] {
            let mut image = Image::new_target_texture(w, h, format, None);
            image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
            let handle = app.world_mut().resource_mut::<Assets<Image>>().add(image);
            app.world_mut().spawn((
                Camera2d,
                Camera {
                    clear_color: ClearColorConfig::Custom(Color::NONE),
                    ..default()
                },
                RenderTarget::Image(handle.clone().into()),
                space,
                Msaa::Off,
            ));
            targets.push(handle);
        }
        // And a 3D camera, orthographic at one pixel per unit, looking at a plane rig.
        let mut image = Image::new_target_texture(w, h, TextureFormat::Rgba8UnormSrgb, None);
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        let target_3d = app.world_mut().resource_mut::<Assets<Image>>().add(image);
        app.world_mut().spawn((
            Camera3d::default(),
            Camera {
                clear_color: ClearColorConfig::Custom(Color::NONE),
                ..default()
            },
            RenderTarget::Image(target_3d.clone().into()),
            Projection::from(OrthographicProjection {
                scaling_mode: ScalingMode::WindowSize,
                ..OrthographicProjection::default_3d()
            }),
            Tonemapping::None,
            DebandDither::Disabled,
            Msaa::Off,
            Transform::from_xyz(0.0, 0.0, 100.0).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        targets.push(target_3d);
        let handle = app
            .world()
            .resource::<AssetServer>()
            .load("assets/anims/anie/character.anie");
        let mut playback = Playback::once();
        playback.paused = true;
        let rig = app
            .world_mut()
            .spawn((AnieRig::new(handle.clone()), playback.clone()))
            .id();
        app.world_mut().spawn((
            AnieRig::new(handle).with_display(AnieDisplay::Plane3d),
            playback,
        ));
        // The card's own pipeline compiles meanwhile.
        let (cell, side) = until_drawn(&mut app, rig, 60);
        let mut textures = targets.clone();
        textures.push(cell.page.clone());
        let data = read_back(&mut app, &textures).unwrap();
        let whole = URect::new(0, 0, w, h);
        let srgb = crop(&data[0], w, whole).unwrap();
        let linear = crop(&data[1], w, whole).unwrap();
        let plane = crop(&data[2], w, whole).unwrap();
        let raw = crop(&data[3], side, cell.rect).unwrap();
        assert!(
            raw.pixels.iter().filter(|p| p[3] == 255).count() > 1000,
            "the rig shows"
        );
        assert!(
            raw.pixels.iter().any(|p| p[3] > 0 && p[3] < 255),
            "with soft edges"
        );
        // sRGB compositing over a transparent clear: the cell's bytes exactly.
        let differ = srgb
            .pixels
            .iter()
            .zip(&raw.pixels)
            .filter(|(a, b)| a != b)
            .count();
        let shown = srgb.pixels.iter().filter(|p| p[3] > 0).count();
        assert_eq!(
            differ, 0,
            "sRGB compositing: {differ} pixels differ ({shown} shown)"
        );
        // Linear compositing: each pixel un-premultiplied, decoded, premultiplied in linear
        // light and encoded again by the target: encode(decode(c/a)·a), alpha a; ±1.
        let mut worst = 0u8;
        let mut worst_3d = 0u8;
        for ((got, c), got_3d) in linear.pixels.iter().zip(&raw.pixels).zip(&plane.pixels) {
            let a = f64::from(c[3]) / 255.0;
            let expect: [u8; 4] = std::array::from_fn(|i| {
                if i == 3 || c[3] == 0 {
                    return c[i];
                }
                let straight = (f64::from(c[i]) / 255.0 / a).min(1.0);
                (srgb_encode(srgb_decode(straight) * a) * 255.0).round() as u8
            });
            for i in 0..4 {
                worst = worst.max(got[i].abs_diff(expect[i]));
                worst_3d = worst_3d.max(got_3d[i].abs_diff(expect[i]));
            }
        }
        println!("linear compositing: largest difference {worst}/255; 3D plane: {worst_3d}/255");
        assert!(worst <= 1, "linear compositing off by {worst}/255");
        // The same rig on a plane in 3D (unlit, premultiplied, no tone mapping): the 3D
        // projection puts pixel centres a hair off the texel centres, so filtering may mix in
        // a neighbour: ±2.
        assert!(worst_3d <= 2, "the 3D plane is off by {worst_3d}/255");
    });
}

#[test]
fn a_broken_project_logs_an_error_and_its_rig_draws_nothing() {
    use bevy::asset::LoadState;
    use bevy::prelude::*;
    use headless::{headless_app, render_stats};
    use rigplay::plugin::{AnieCell, AnieRig};

    on_gpu(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anie_broken");
        std::fs::create_dir_all(&dir).unwrap();
        // A real project cut in the middle, and bytes that are no project at all.
        let good = std::fs::read(root().join("tests/fixtures/anie/clip_v8.anie")).unwrap();
        std::fs::write(dir.join("cut.anie"), &good[..good.len() / 2]).unwrap();
        std::fs::write(
            dir.join("garbage.anie"),
            b"not an AnimeEffects project at all",
        )
        .unwrap();
        std::fs::write(dir.join("good.anie"), &good).unwrap();
        let mut app = headless_app(&dir);
        let server = app.world().resource::<AssetServer>().clone();
        let names = ["cut.anie", "garbage.anie", "good.anie"];
        let rigs: Vec<(Entity, Handle<_>)> = names
            .iter()
            .map(|n| {
                let h = server.load(*n);
                (app.world_mut().spawn(AnieRig::new(h.clone())).id(), h)
            })
            .collect();
        for _ in 0..3000 {
            app.update();
            if render_stats(&app).drawn > 0
                && rigs.iter().all(|(_, h)| !server.load_state(h).is_loading())
            {
                break;
            }
        }
        for ((entity, handle), name) in rigs.iter().zip(names) {
            let state = server.load_state(handle);
            let cell = app.world().get::<AnieCell>(*entity);
            if name == "good.anie" {
                assert!(matches!(state, LoadState::Loaded), "{name}: {state:?}");
                assert!(cell.is_some(), "the good project is drawn");
            } else {
                let LoadState::Failed(error) = state else {
                    panic!("{name} loaded: {state:?}");
                };
                // The reader's message names where in the file it stopped.
                let message = error.to_string();
                println!("{name}: {message}");
                assert!(
                    message.contains("offset") || message.contains("byte"),
                    "{message}"
                );
                assert!(
                    cell.is_none(),
                    "{name}: a rig of a broken project has no cell"
                );
            }
        }
        // The app runs on.
        for _ in 0..10 {
            app.update();
        }
    });
}

#[test]
fn playback_drives_rigs_that_share_frames_and_skip_what_did_not_change() {
    use bevy::prelude::*;
    use bevy::time::TimeUpdateStrategy;
    use headless::{headless_app, render_stats};
    use rigplay::plugin::{
        AnieCell, AnieDisplay, AnieDrawStats, AnieRig, PlayMode, Playback, PlaybackLooped,
    };
    use std::time::Duration;

    on_gpu(|| {
        let mut app = headless_app(&root());
        // 1/48 s per update: half a frame of the cat's 24 fps timeline.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 48.0,
        )));
        #[derive(Resource, Default)]
        struct Loops(usize);
        app.init_resource::<Loops>();
        app.add_observer(|_: On<PlaybackLooped>, mut loops: ResMut<Loops>| loops.0 += 1);
        let handle = app
            .world()
            .resource::<AssetServer>()
            .load("assets/anims/anie/character.anie");
        let rig = |display| AnieRig::new(handle.clone()).with_display(display);
        // Ten rigs at one time (one program between them), one paused, one hidden, one at
        // double speed.
        let world = app.world_mut();
        let crowd: Vec<Entity> = (0..10)
            .map(|_| {
                world
                    .spawn((rig(AnieDisplay::Offscreen), Playback::looping()))
                    .id()
            })
            .collect();
        let mut paused = Playback::looping();
        paused.paused = true;
        paused.time = 0.5;
        let paused = world.spawn((rig(AnieDisplay::Offscreen), paused)).id();
        let hidden = world
            .spawn((
                rig(AnieDisplay::Offscreen),
                Playback::looping(),
                Visibility::Hidden,
            ))
            .id();
        let fast = world
            .spawn((
                rig(AnieDisplay::Offscreen),
                Playback::looping()
                    .with_speed(2.0)
                    .with_mode(PlayMode::Loop),
            ))
            .id();
        // Until the first frame of every visible rig is drawn.
        for _ in 0..3000 {
            app.update();
            if render_stats(&app).drawn >= 12 && render_stats(&app).pending == 0 {
                break;
            }
        }
        let world = app.world();
        // The playhead knows the timeline: frames 0..=47 at 24 fps, each shown 1/24 s, so a
        // loop of 48 frames, 2 s.
        let playback = world.get::<Playback>(crowd[0]).unwrap();
        assert_eq!(playback.duration, Some(2.0));
        assert!(
            world
                .get::<AnieCell>(hidden)
                .is_some_and(|c| c.frame.is_none())
        );
        assert_eq!(world.get::<AnieCell>(paused).unwrap().frame, Some(12.0));
        // Frame by frame: the crowd shares one program per frame; the paused rig is not drawn
        // again; a rig is drawn only when its whole frame changes (every other update for the
        // crowd at 1/48 s, every update for the fast one).
        let mut built = 0;
        let mut redrawn = 0;
        let updates = 96;
        for _ in 0..updates {
            app.update();
            let stats = *app.world().resource::<AnieDrawStats>();
            assert!(stats.built <= 2, "{stats:?}");
            built += stats.built;
            redrawn += stats.redrawn;
        }
        let world = app.world();
        let frame = |e| world.get::<AnieCell>(e).unwrap().frame.unwrap();
        let time = world.get::<Playback>(crowd[0]).unwrap().time;
        assert_eq!(frame(crowd[0]), (time * 24.0 + 1e-4).floor());
        assert_eq!(frame(paused), 12.0);
        assert!(world.get::<AnieCell>(hidden).unwrap().frame.is_none());
        // 96 updates = 2 s (after the warm-up): the crowd went once round the 2 s loop, the fast
        // rig twice.
        assert!(
            world.resource::<Loops>().0 >= 11,
            "{} loops",
            world.resource::<Loops>().0
        );
        // The crowd: ~48 frame changes × 10 rigs, the fast rig ~96, built once per frame each.
        println!("{redrawn} cells drawn, {built} programs built in {updates} updates");
        assert!(
            (48 * 10..=49 * 10 + 97).contains(&redrawn),
            "{redrawn} drawn"
        );
        assert!(built <= 48 + 97, "{built} built");
        let _ = fast;
    });
}

#[test]
fn hsv_layers_and_folders_match_the_cpu_reference() {
    use rigplay::formats::anie::{AnieVersion, HsvKey, TimeKey};
    // The cat with HSV keys no bundled file has: its head shifted then set to an absolute hue,
    // and its root folder (which then re-draws every layer under it) desaturated and darkened.
    let mut project = read(&format!("{SAMPLES}/character.anie"));
    let key = |frame, hue, sat, val, absolute| TimeKey {
        frame,
        value: HsvKey {
            hue,
            sat,
            val,
            absolute,
            ..HsvKey::default()
        },
        children: Vec::new(),
    };
    let head = project
        .objects
        .iter()
        .position(|n| n.name == "head")
        .expect("head");
    let root = project
        .objects
        .iter()
        .position(|n| n.parent.is_none())
        .expect("root");
    project.objects[head].timeline.hsvs.keys =
        vec![key(0, 90, 150, 80, false), key(20, 200, 60, 120, true)];
    project.objects[root].timeline.hsvs.keys = vec![key(10, -30, 40, 70, false)];
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anie_hsv");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = project.write(AnieVersion::default()).expect("writes");
    std::fs::write(dir.join("hsv.anie"), &bytes).unwrap();
    let project = AnieFile::read(&bytes).unwrap().file;
    // Before the root's key (layer HSV only), between the head's keys, and after both.
    let frames = [3.0, 12.0, 25.0];
    let shots: Vec<Shot> = frames
        .iter()
        .map(|&frame| Shot {
            asset: "hsv.anie".into(),
            frame,
            scale: 1.0,
            hidden: Vec::new(),
        })
        .collect();
    let Some(images) = render_or_skip(dir, &shots) else {
        return;
    };
    let renderer = Renderer::new(&project);
    let evaluator = Evaluator::new(project);
    let plain = Renderer::new(read(&format!("{SAMPLES}/character.anie"))).render(
        &Evaluator::new(read(&format!("{SAMPLES}/character.anie"))).evaluate(12.0),
        1.0,
    );
    let mut failures = Vec::new();
    for (frame, gpu) in frames.iter().zip(&images) {
        let cpu = renderer.render(&evaluator.evaluate(*frame), 1.0);
        if *frame == 12.0 {
            assert_ne!(cpu.pixels, plain.pixels, "the HSV keys change the picture");
        }
        failures.extend(check(&format!("hsv_f{frame}"), gpu, &cpu, "CPU reference"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nested_clippers_match_the_cpu_reference() {
    use rigplay::anie::atlas::ImageAtlas;
    use rigplay::anie::program::{Program, Step};
    use rigplay::formats::anie::{AnieVersion, NodeKind};
    // clip_v8 rebuilt so that a clipper is itself clipped: a clipped folder F holding the
    // clippee and a second clipper, above the clipper and the backdrop layer:
    //   #0 root: [#1 F (clipped), #4 clipper, #5 under]
    //   #1 F: [#2 clippee (clipped), #3 clipper2]
    // clipper2 is F's unclipped descendant, so a clippee of clipper, and the clipper of the
    // clippee: its mask write is nested within clipper's id (DrawOp::WriteMask { within }).
    let source = read(&format!("{FIXTURES}/clip_v8.anie"));
    let mut project = source.clone();
    let (root, clippee, clipper, under) = (
        source.objects[0].clone(),
        source.objects[1].clone(),
        source.objects[2].clone(),
        source.objects[3].clone(),
    );
    let mut folder = root.clone();
    folder.kind = NodeKind::Folder;
    folder.name = "F".into();
    folder.clipped = true;
    folder.parent = Some(0);
    folder.children = vec![2, 3];
    let mut nodes = vec![root, folder, clippee, clipper.clone(), clipper, under];
    nodes[0].children = vec![1, 4, 5];
    nodes[2].parent = Some(1);
    nodes[3].parent = Some(1);
    nodes[3].name = "clipper2".into();
    nodes[4].parent = Some(0);
    nodes[5].parent = Some(0);
    project.objects = nodes;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anie_nested");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = project.write(AnieVersion::default()).expect("writes");
    std::fs::write(dir.join("nested.anie"), &bytes).unwrap();
    let project = AnieFile::read(&bytes).unwrap().file;
    let evaluator = Evaluator::new(project.clone());
    // The program really has a nested mask write.
    let atlas = ImageAtlas::new(&project).unwrap();
    let program = Program::build(&evaluator.evaluate(3.0), &atlas, 1.0);
    assert!(
        program
            .steps
            .iter()
            .any(|s| matches!(s, Step::WriteNestedMask(_))),
        "{:?}",
        program.steps
    );
    let frames = [0.0, 3.0, 7.0];
    let shots: Vec<Shot> = frames
        .iter()
        .map(|&frame| Shot {
            asset: "nested.anie".into(),
            frame,
            scale: 1.0,
            hidden: Vec::new(),
        })
        .collect();
    let Some(images) = render_or_skip(dir, &shots) else {
        return;
    };
    let renderer = Renderer::new(&project);
    let mut failures = Vec::new();
    for (frame, gpu) in frames.iter().zip(&images) {
        let cpu = renderer.render(&evaluator.evaluate(*frame), 1.0);
        failures.extend(check(
            &format!("nested_f{frame}"),
            gpu,
            &cpu,
            "CPU reference",
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_project_changed_broken_and_restored_on_disk_reloads_under_its_playing_rig() {
    use bevy::asset::LoadState;
    use bevy::prelude::*;
    use headless::{crop, headless_app, read_back};
    use rigplay::plugin::{Anie, AnieDisplay, AnieRig, PlayMode, Playback};

    on_gpu(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anie_reload");
        std::fs::create_dir_all(&dir).unwrap();
        let clip = std::fs::read(root().join("tests/fixtures/anie/clip_v8.anie")).unwrap();
        let ffd = std::fs::read(root().join("tests/fixtures/anie/ffd.anie")).unwrap();
        std::fs::write(dir.join("rig.anie"), &clip).unwrap();
        let mut app = headless_app(&dir);
        let server = app.world().resource::<AssetServer>().clone();
        let handle: Handle<Anie> = server.load("rig.anie");
        // Paused at 0.25 s, twice as fast, ping-ponging: all of it must survive the reloads.
        let mut playback = Playback::looping()
            .with_speed(2.0)
            .with_mode(PlayMode::PingPong);
        playback.paused = true;
        playback.time = 0.25;
        let rig = app
            .world_mut()
            .spawn((
                AnieRig::new(handle.clone()).with_display(AnieDisplay::Offscreen),
                playback,
            ))
            .id();
        // Runs frames until the rig's cell is drawn and on its page, then reads it back.
        let shown = |app: &mut App| {
            let (cell, side) = until_drawn(app, rig, 5);
            let data = read_back(app, std::slice::from_ref(&cell.page)).unwrap();
            crop(&data[0], side, cell.rect).unwrap()
        };
        let duration = |app: &App| app.world().get::<Playback>(rig).unwrap().duration;
        let project_duration = |app: &App| {
            app.world()
                .resource::<Assets<Anie>>()
                .get(&handle)
                .unwrap()
                .duration()
        };
        let first = shown(&mut app);
        assert_eq!(duration(&app), Some(project_duration(&app)));
        let clip_duration = project_duration(&app);

        // Another project written over it: reloaded in place, drawn anew, the playhead kept.
        std::fs::write(dir.join("rig.anie"), &ffd).unwrap();
        server.reload("rig.anie");
        let mut reloaded = false;
        for _ in 0..3000 {
            app.update();
            if (project_duration(&app) - clip_duration).abs() > 1e-6 {
                reloaded = true;
                break;
            }
        }
        assert!(reloaded, "the new project replaced the old");
        let second = shown(&mut app);
        assert_eq!(duration(&app), Some(project_duration(&app)));
        assert!(
            (second.width, second.height) != (first.width, first.height)
                || second.pixels != first.pixels,
            "the new project is drawn"
        );
        let playback = app.world().get::<Playback>(rig).unwrap();
        assert_eq!(
            (
                playback.time,
                playback.paused,
                playback.speed,
                playback.mode
            ),
            (0.25, true, 2.0, PlayMode::PingPong)
        );

        // Garbage written over it: the load fails, the last good project is still drawn.
        std::fs::write(dir.join("rig.anie"), b"half a projec").unwrap();
        server.reload("rig.anie");
        let mut failed = false;
        for _ in 0..3000 {
            app.update();
            if matches!(server.load_state(&handle), LoadState::Failed(_)) {
                failed = true;
                break;
            }
        }
        assert!(failed, "the broken file fails to load");
        assert_eq!(
            shown(&mut app).pixels,
            second.pixels,
            "the last good project plays on"
        );

        // The first project restored: exactly its first picture again.
        std::fs::write(dir.join("rig.anie"), &clip).unwrap();
        server.reload("rig.anie");
        for _ in 0..3000 {
            app.update();
            if (project_duration(&app) - clip_duration).abs() < 1e-6 {
                break;
            }
        }
        let third = shown(&mut app);
        assert_eq!((third.width, third.height), (first.width, first.height));
        assert!(
            third.pixels == first.pixels,
            "the restored project draws as before"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    });
}
