//! Renders one frame of an AnimeEffects project through the GPU plugin, headless, and writes
//! the raw framebuffer (premultiplied colour, as `rigplay render --raw` writes it) as a PNG:
//!
//!     cargo run --example anie_render -- FILE.anie --frame N --out OUT.png [--scale S]
//!
//! No window is opened; on a machine without a GPU, Mesa's lavapipe (mesa-vulkan-drivers)
//! renders it. A fractional frame (`--frame 3.5`) is drawn as it is; a whole frame as
//! AnimeEffects steps it.

mod headless;

use headless::{Shot, render_shots};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: anie_render FILE.anie --frame N --out OUT.png [--scale S]";

struct Args {
    file: PathBuf,
    frame: f32,
    out: PathBuf,
    scale: f32,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut file, mut frame, mut out, mut scale) = (None, None, None, 1.0);
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--frame" => {
                let v = value("--frame")?;
                frame = Some(
                    v.parse::<f32>()
                        .map_err(|_| format!("--frame {v}: not a number"))?,
                );
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--scale" => {
                let v = value("--scale")?;
                scale = v
                    .parse::<f32>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .ok_or(format!("--scale {v}: not a positive number"))?;
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}\n{USAGE}")),
            _ if file.is_none() => file = Some(PathBuf::from(arg)),
            _ => return Err(format!("one file only\n{USAGE}")),
        }
    }
    match (file, frame, out) {
        (Some(file), Some(frame), Some(out)) if frame.is_finite() && frame >= 0.0 => Ok(Args {
            file,
            frame,
            out,
            scale,
        }),
        _ => Err(USAGE.into()),
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let file = match std::fs::canonicalize(&args.file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            return ExitCode::FAILURE;
        }
    };
    let (Some(root), Some(name)) = (file.parent(), file.file_name()) else {
        eprintln!("{}: not a file", file.display());
        return ExitCode::FAILURE;
    };
    let shot = Shot {
        asset: name.to_string_lossy().into_owned(),
        frame: args.frame,
        scale: args.scale,
        hidden: Vec::new(),
    };
    let image = match render_shots(root, &[shot]) {
        Ok(mut images) => images.remove(0),
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let bytes = image.to_rgba8();
    if let Err(e) = image::save_buffer(
        &args.out,
        &bytes,
        image.width,
        image.height,
        image::ExtendedColorType::Rgba8,
    ) {
        eprintln!("{}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    println!(
        "{}: frame {} at scale {} ({}×{}) → {}",
        file.display(),
        args.frame,
        args.scale,
        image.width,
        image.height,
        args.out.display()
    );
    ExitCode::SUCCESS
}
