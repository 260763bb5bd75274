//! `rigplay render FILE.anie`: frames of an AnimeEffects project as PNG files.

use crate::load::{anie, bytes, detect};
use crate::{Args, Failure, usage};
use rigplay::anie::cpu::{Renderer, RgbaImage, exported_png};
use rigplay::anie::eval::Evaluator;
use rigplay::formats::FileFormat;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// `A..B` or `A..=B` (both ends included either way), whole frames.
fn parse_frames(s: &str) -> Option<(i64, i64)> {
    let (a, b) = s.split_once("..")?;
    let b = b.strip_prefix('=').unwrap_or(b);
    let (a, b): (i64, i64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

fn write_png(path: &Path, image: &RgbaImage) -> Result<(), Failure> {
    image::save_buffer(
        path,
        &image.to_rgba8(),
        image.width,
        image.height,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| Failure(format!("{}: {e}", path.display()), 1))
}

/// A progress bar on stderr: `[#####-----] 12/24 frames`.
fn progress(done: usize, total: usize) {
    const WIDTH: usize = 30;
    let filled = done * WIDTH / total.max(1);
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "\r[{}{}] {done}/{total} frames",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled)
    );
    if done == total {
        let _ = writeln!(err);
    }
    let _ = err.flush();
}

pub(crate) fn render(a: Args) -> Result<(), Failure> {
    let [path] = a.positional.as_slice() else {
        return Err(usage("render takes one FILE.anie"));
    };
    let out = a
        .value("-o")
        .ok_or_else(|| usage("render needs -o OUT.png (or -o DIR/ with --frames)"))?;
    let scale = match a.value("--scale") {
        None => 1.0,
        Some(s) => s
            .parse::<f32>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0 && *x <= 64.0)
            .ok_or_else(|| usage(format!("--scale takes a number in (0, 64], not {s:?}")))?,
    };
    let bytes = bytes(path)?;
    if detect(path, &bytes) != FileFormat::Anie {
        return Err(Failure(
            format!("{path}: render needs an AnimeEffects .anie project"),
            1,
        ));
    }
    let read = anie(path, &bytes)?;
    for w in &read.warnings {
        eprintln!("warning: {path}: {w}");
    }
    let renderer = Renderer::new(&read.file);
    let evaluator = Evaluator::new(read.file);
    let raw = a.flag("--raw");
    let picture = |frame: f32| {
        let fb = renderer.render(&evaluator.evaluate(frame), scale);
        if raw { fb } else { exported_png(&fb) }
    };
    match (a.value("--frame"), a.value("--frames")) {
        (Some(_), Some(_)) => Err(usage("--frame and --frames exclude each other")),
        (None, None) => Err(usage("render needs --frame N or --frames A..B")),
        (Some(f), None) => {
            let frame: f32 = f
                .parse()
                .ok()
                .filter(|x: &f32| x.is_finite())
                .ok_or_else(|| usage(format!("--frame takes a frame number, not {f:?}")))?;
            let image = picture(frame);
            write_png(Path::new(out), &image)?;
            out!(
                "wrote {out}: frame {frame}, {}×{}",
                image.width,
                image.height
            );
            Ok(())
        }
        (None, Some(range)) => {
            let (first, last) = parse_frames(range).ok_or_else(|| {
                usage(format!(
                    "--frames takes A..B (both included), not {range:?}"
                ))
            })?;
            let dir = PathBuf::from(out);
            std::fs::create_dir_all(&dir)
                .map_err(|e| Failure(format!("{}: {e}", dir.display()), 1))?;
            let stem = Path::new(path)
                .file_stem()
                .map_or("frame".into(), |s| s.to_string_lossy().into_owned());
            let total = usize::try_from(last - first + 1).unwrap_or(usize::MAX);
            let digits = first.abs().max(last.abs()).to_string().len().max(4);
            progress(0, total);
            for (done, frame) in (first..=last).enumerate() {
                let image = picture(frame as f32);
                let file = dir.join(format!("{stem}_{frame:0digits$}.png"));
                write_png(&file, &image)?;
                progress(done + 1, total);
            }
            out!("wrote {total} frames {first}..={last} to {}", dir.display());
            Ok(())
        }
    }
}
