//! One frame of an AnimeEffects project drawn by the GPU plugin, headless, written as a PNG.
//!
//! The PNG holds the raw framebuffer (premultiplied colour, as `rigplay render --raw` writes it):
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

struct Args {
    file: PathBuf,
    frame: f32,
    out: PathBuf,
    scale: f32,
}

/// The command line: clap rejects an option it does not know, or a value out of range, with a
/// usage line and status 2.
fn parse() -> Args {
    use clap::{Arg, Command, value_parser};
    let non_negative = |v: &str| match v.parse::<f32>() {
        Ok(f) if f.is_finite() && f >= 0.0 => Ok(f),
        _ => Err(format!("{v}: not a number of 0 or more")),
    };
    let positive = |v: &str| match v.parse::<f32>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("{v}: not a positive number")),
    };
    let m = Command::new("anie_render")
        .about("One frame of an AnimeEffects project, drawn by the GPU plugin, as a PNG")
        .arg(
            Arg::new("file")
                .value_name("FILE.anie")
                .required(true)
                .value_parser(value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("frame")
                .long("frame")
                .value_name("N")
                .required(true)
                .value_parser(non_negative),
        )
        .arg(
            Arg::new("out")
                .long("out")
                .value_name("OUT.png")
                .required(true)
                .value_parser(value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("scale")
                .long("scale")
                .value_name("S")
                .value_parser(positive)
                .default_value("1"),
        )
        .get_matches();
    Args {
        file: m.get_one::<PathBuf>("file").expect("required").clone(),
        frame: *m.get_one::<f32>("frame").expect("required"),
        out: m.get_one::<PathBuf>("out").expect("required").clone(),
        scale: *m.get_one::<f32>("scale").expect("defaulted"),
    }
}

fn main() -> ExitCode {
    let args = parse();
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
