//! `rigplay`: inspect, validate, convert, export and sample animation files, and render
//! AnimeEffects projects, from the command line.
//!
//! This file parses the arguments and dispatches; each command is a module, and `load` reads
//! a file of any format, told apart by `rigplay::formats::detect`.

use serde_json::Value;
use std::process::ExitCode;

const USAGE: &str = "\
rigplay — legacy animation formats (GTA .ifp, DelDX .dan, AnimeEffects .anie) for Bevy

Usage:
  rigplay inspect FILE [--json]
      .ifp: package name, format, clips, bones, key counts, durations, warnings
      .dan: comment, range, per bone the key times of each track, warnings
      .anie: canvas, frames, resources, the object tree with every key, warnings
      .dff: clumps, frames and bones, geometry counts, materials, skins, atomics, warnings
      .txd: textures with their pixel formats, sizes and mip levels, warnings
  rigplay txd FILE.txd -o DIR/
      write every texture (its first level, decoded to RGBA) as DIR/NAME.png
  rigplay validate FILE...
      exit 0 when every file reads; otherwise print each error with its byte offset, exit 1
  rigplay convert IN OUT [--to anpk|anp3|anp2] [--reduce TOL [--shell R] | --runs]
      .ifp: rewrite in another IFP version (ANP3: compressed keys where values fit int16)
      --reduce TOL: drop every key its neighbours reproduce within TOL (file units: metres
      for .ifp), measured as ACL does: distance of points on a shell of radius R around
      each bone in object space, parents' errors included (R: 0.03 for .ifp, 3 for .dan,
      i.e. 3 cm when a .dan is in centimetres); --runs: only drop the inside of constant
      runs (lossless; the DelDX exporter's intended rule). .dan in, .dan out.
  rigplay pose FILE [--clip NAME] --at SECONDS [--space file|bevy] [--loop] [--json]
      the sampled local transform of every bone of a clip at a time
      (--space bevy: GTA's Z-up or Direct3D's left-handed axes turned into Bevy's;
      --loop wraps the time, otherwise it is clamped to the clip; a .dan has one clip)
  rigplay export IN... -o OUT.glb|OUT.gltf [--clip NAME]... [--game sa|vc|iii]
                 [--root-motion baked|in-place|extract]
      GTA (.ifp) and DAN (.dan) clips to glTF: the clip's skeleton (its game's ped, or the
      DAN's bones) as nodes and a skin, each clip one animation at the file's own key times,
      in glTF's axes; every clip, or those named by --clip (case-insensitive); --game says
      whose ped (default: from the file); --root-motion: as the file has it, held in place,
      or moved onto a RootMotion node above the skeleton. A .gltf gets its .bin beside it
  rigplay import IN -o OUT.ifp [--game sa|vc|iii] [--clip NAME] [--name CLIP] [--into PACKAGE.ifp]
                 [--reduce TOL [--shell R] | --runs] [--map FILE] [--format anp3|anpk|anp2]
      motion capture (.bvh) and glTF animation (.gltf, .glb, .vrm, .vrma: every animation, or
      the one --clip names) retargeted onto a GTA ped (rest poses compensated, bones paired
      by their names: Mixamo, mocap, VRM, Unreal, Blender, Biped), written as an IFP clip
      (ANP3 for sa, ANPK for vc and iii) at the game's clip rate, the hips' movement scaled to
      the ped and put on its root bone; --into adds the clip to a package (or replaces the
      clip of that name) and writes the result to OUT, every other clip as it was; --reduce
      and --runs drop keys as convert does (metres), and say how many and the error; --map
      FILE corrects the pairing: one `SOURCE BONE = GTA BONE` a line; --format writes another
      IFP version than the game's own (SA also loads ANPK)
  rigplay render FILE.anie (--frame N -o OUT.png | --frames A..B -o DIR/) [--scale S] [--raw]
      render frames as AnimeEffects exports them (N may be fractional; A..B includes both
      ends, written as DIR/NAME_NNNN.png with a progress bar on stderr); --scale S multiplies
      the canvas size; --raw writes the framebuffer itself (premultiplied-looking colour,
      additive alpha) instead of the PNG AnimeEffects saves from it
";

/// Writes a line to stdout; a closed pipe (`rigplay inspect f | head`) is not an error.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

mod convert;
mod export;
mod import;
mod inspect;
mod load;
mod pose;
mod render;
mod txd;
mod validate;

/// A failure that ends the command: the message, and the exit code.
struct Failure(String, u8);

fn usage(message: impl Into<String>) -> Failure {
    Failure(format!("{}\n\n{USAGE}", message.into()), 2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("inspect") => inspect::inspect(&args[1..]),
        Some("validate") => validate::validate(&args[1..]),
        Some("convert") => convert::convert(&args[1..]),
        Some("export") => export::export(&args[1..]),
        Some("import") => import::import(&args[1..]),
        Some("pose") => pose::pose(&args[1..]),
        Some("render") => render::render(&args[1..]),
        Some("txd") => txd::txd(&args[1..]),
        Some("-h" | "--help" | "help") => {
            out!("{}", USAGE.trim_end());
            Ok(())
        }
        Some(other) => Err(usage(format!("unknown command {other:?}"))),
        None => Err(usage("no command given")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message, code)) => {
            eprintln!("rigplay: {message}");
            ExitCode::from(code)
        }
    }
}

/// A command's arguments: positionals and `--flag [value]` options, parsed by clap (an option
/// the command does not take, or one without its value, is a usage error, status 2).
struct Args {
    positional: Vec<String>,
    options: Vec<(String, Option<String>)>,
}

impl Args {
    fn parse(
        args: &[String],
        with_value: &[&'static str],
        switches: &[&'static str],
    ) -> Result<Self, Failure> {
        use clap::{Arg, ArgAction, Command};
        // `--name` is a long option, `-n` a short one.
        let named = |name: &'static str| match name.strip_prefix("--") {
            Some(long) => Arg::new(name).long(long),
            None => Arg::new(name).short(name.chars().nth(1).unwrap_or('?')),
        };
        let mut command = Command::new("rigplay")
            .no_binary_name(true)
            .disable_help_flag(true)
            .arg(
                Arg::new("positional")
                    .num_args(0..)
                    .action(ArgAction::Append),
            );
        for &name in with_value {
            command = command.arg(
                named(name)
                    .num_args(1)
                    .allow_negative_numbers(true)
                    .action(ArgAction::Append),
            );
        }
        for &name in switches {
            command = command.arg(named(name).action(ArgAction::SetTrue));
        }
        let m = command.try_get_matches_from(args).map_err(|e| {
            let text = e.to_string();
            // clap's first line ("error: unexpected argument '--x' found"); the usage below
            // is the tool's own.
            let line = text.lines().next().unwrap_or("bad arguments");
            usage(line.trim_start_matches("error: ").to_owned())
        })?;
        let mut options = Vec::new();
        for &name in with_value {
            for v in m.get_many::<String>(name).into_iter().flatten() {
                options.push((name.to_owned(), Some(v.clone())));
            }
        }
        for &name in switches {
            if m.get_flag(name) {
                options.push((name.to_owned(), None));
            }
        }
        Ok(Args {
            positional: m
                .get_many::<String>("positional")
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            options,
        })
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }
}

/// A `--game` value: `sa`, `vc`, or `iii` (or `3`), in any case.
fn parse_game(value: &str) -> Result<rigplay::skeleton::GtaGame, Failure> {
    use rigplay::skeleton::GtaGame;
    match value.to_ascii_lowercase().as_str() {
        "sa" => Ok(GtaGame::Sa),
        "vc" => Ok(GtaGame::Vc),
        "iii" | "3" => Ok(GtaGame::Iii),
        _ => Err(usage(format!("--game takes sa, vc or iii, not {value:?}"))),
    }
}

/// An f32 as the shortest decimal that reads back to it, in JSON.
fn num(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .map(Value::from)
        .unwrap_or(Value::Null)
}

fn nums(xs: &[f32]) -> Value {
    Value::Array(xs.iter().copied().map(num).collect())
}
