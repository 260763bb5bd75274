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
mod headless;

use headless::{Shot, render_shots};
use rigplay::anie::cpu::{Renderer, RgbaImage, compare};
use rigplay::anie::eval::Evaluator;
use rigplay::formats::anie::AnimeProject;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(asset: &str) -> AnimeProject {
    let bytes = std::fs::read(root().join(asset)).expect("project");
    AnimeProject::read(&bytes).expect("reads").project
}

/// GPU, reference and the difference (×8, alpha opaque) side by side.
fn write_diff(name: &str, gpu: &RgbaImage, reference: &RgbaImage) -> PathBuf {
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

/// Renders the shots, or `None` (NOT RUN) where no adapter exists and rendering is not required.
fn render_or_skip(shots: &[Shot]) -> Option<Vec<RgbaImage>> {
    let root = root();
    let shots = shots.to_vec();
    let result = std::thread::spawn(move || render_shots(&root, &shots)).join();
    match result {
        Ok(Ok(images)) => Some(images),
        Ok(Err(e)) => panic!("the GPU renderer failed: {e}"),
        Err(_) if !render_required() => {
            eprintln!(
                "NOT RUN: no GPU adapter (install mesa-vulkan-drivers for lavapipe to run this test)"
            );
            None
        }
        Err(panic) => std::panic::resume_unwind(panic),
    }
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
            });
        }
    }
    for (name, frames) in REFERENCES {
        for &frame in frames {
            shots.push(Shot {
                asset: format!("{FIXTURES}/{name}.anie"),
                frame: frame as f32,
                scale: 1.0,
            });
        }
        shots.push(Shot {
            asset: format!("{FIXTURES}/{name}.anie"),
            frame: 2.5,
            scale: 1.5,
        });
    }
    let Some(images) = render_or_skip(&shots) else {
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
        let cpu = Renderer::new(&project)
            .render(&Evaluator::new(project).evaluate(shot.frame), shot.scale);
        failures.extend(check(&name, gpu, &cpu, "CPU reference"));
        let stem = Path::new(&shot.asset)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let raw = root()
            .join(FIXTURES)
            .join(format!("{stem}_f{}.raw.png", shot.frame));
        if shot.scale == 1.0 && raw.exists() {
            let img = image::open(&raw).unwrap().to_rgba8();
            let ae = RgbaImage::from_rgba8(img.width(), img.height(), img.as_raw()).unwrap();
            failures.extend(check(&name, gpu, &ae, "AnimeEffects"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
