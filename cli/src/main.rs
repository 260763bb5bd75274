//! `rigplay`: inspect, validate, convert, export and sample animation files, and render
//! AnimeEffects projects, from the command line.
//!
//! This file parses the arguments and dispatches; each command is a module, and `load` reads
//! a file of any format, told apart by `rigplay::formats::FileFormat`.

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
                 [--root-motion baked|in-place|extract] [--model PED.dff [--txd FILE.txd]... [--clump N]]
      GTA (.ifp) and DAN (.dan) clips to glTF: the clip's skeleton (its game's ped, or the
      DAN's bones) as nodes and a skin, each clip one animation at the file's own key times,
      in glTF's axes; every clip, or those named by --clip (case-insensitive); --game says
      whose ped (default: from the file); --root-motion: as the file has it, held in place,
      or moved onto a RootMotion node above the skeleton. A .gltf gets its .bin beside it.
      --model PED.dff [--txd FILE.txd]...: the GTA clips on that model's frames, with its
      skinned meshes, materials and textures (the .txd beside the model, and any --txd);
      every clump of the file is written, each a scene; the clips drive the first clump that has
      bones (the default scene), or clump N with --clump N
  rigplay import IN -o OUT.ifp|OUT.dan [--game sa|vc|iii] [--model PED.dff] [--clip NAME]
                 [--name CLIP] [--into PACKAGE.ifp]
                 [--reduce TOL [--shell R] | --runs] [--map FILE] [--format anp3|anpk|anp2]
      motion capture (.bvh) and glTF animation (.gltf, .glb, .vrm, .vrma: every animation, or
      the one --clip names) retargeted onto a GTA ped (rest poses compensated, bones paired
      by their names: Mixamo, mocap, VRM, Unreal, Blender, Biped), written as an IFP clip
      (ANP3 for sa, ANPK for vc and iii) at the game's clip rate, the hips' movement scaled to
      the ped and put on its root bone; --into adds the clip to a package (or replaces the
      clip of that name) and writes the result to OUT, every other clip as it was; --reduce
      and --runs drop keys as convert does (metres), and say how many and the error; --map
      FILE corrects the pairing: one `SOURCE BONE = GTA BONE` a line; --format writes another
      IFP version than the game's own (SA also loads ANPK). -o OUT.dan writes one clip as a
      DelDX .dan instead: every bone of the ped in model space (Bevy's axes, metres), with an
      OUT.dan.meta naming the bones for rigplay's DAN loader (an existing one is kept).
      --model PED.dff retargets onto that model's bones (its rest pose and proportions; its
      game from the file unless --game says) instead of the game's built-in ped
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

/// One command's command line: what it takes, with the help `rigplay COMMAND --help` prints.
struct Spec {
    name: &'static str,
    about: &'static str,
    /// The positionals' value name, and whether several may be given.
    positional: (&'static str, bool),
    /// Options that take a value: name (`--long` or `-s`), value name, help.
    values: &'static [(&'static str, &'static str, &'static str)],
    /// Switches: name, help.
    switches: &'static [(&'static str, &'static str)],
}

/// Every command, in the order `rigplay --help` lists them. USAGE says more of each.
const COMMANDS: [Spec; 8] = [
    Spec {
        name: "inspect",
        about: "What a file holds: clips, bones, keys, objects, textures, warnings",
        positional: ("FILE", false),
        values: &[],
        switches: &[("--json", "print JSON")],
    },
    Spec {
        name: "txd",
        about: "Write every texture of a .txd as a PNG",
        positional: ("FILE.txd", false),
        values: &[("-o", "DIR", "the folder to write into")],
        switches: &[],
    },
    Spec {
        name: "validate",
        about: "Exit 0 when every file reads; else print each error with its byte offset",
        positional: ("FILE", true),
        values: &[],
        switches: &[],
    },
    Spec {
        name: "convert",
        about: "Rewrite an .ifp in another version, or drop keys within a tolerance",
        positional: ("IN OUT", true),
        values: &[
            ("--to", "anpk|anp3|anp2", "the IFP version to write"),
            (
                "--reduce",
                "TOL",
                "drop keys their neighbours reproduce within TOL",
            ),
            (
                "--shell",
                "R",
                "the radius of the shell the error is measured on",
            ),
        ],
        switches: &[("--runs", "drop only the inside of constant runs (lossless)")],
    },
    Spec {
        name: "pose",
        about: "The sampled local transform of every bone of a clip at a time",
        positional: ("FILE", false),
        values: &[
            ("--clip", "NAME", "the clip (any case)"),
            ("--at", "SECONDS", "the time"),
            ("--space", "file|bevy", "the file's axes or Bevy's"),
        ],
        switches: &[
            ("--json", "print JSON"),
            ("--loop", "wrap the time instead of clamping it"),
        ],
    },
    Spec {
        name: "export",
        about: "GTA and DAN clips to glTF (.glb or .gltf)",
        positional: ("IN", true),
        values: &[
            ("-o", "OUT", "the .glb or .gltf to write"),
            (
                "--clip",
                "NAME",
                "a clip to export (repeatable; default: all)",
            ),
            ("--game", "sa|vc|iii", "whose ped"),
            (
                "--root-motion",
                "baked|in-place|extract",
                "what happens to root motion",
            ),
            (
                "--model",
                "PED.dff",
                "draw the GTA clips on this model (meshes, skins, materials, textures)",
            ),
            (
                "--txd",
                "FILE.txd",
                "a texture dictionary for --model (repeatable; the .txd beside the model is read too)",
            ),
            (
                "--clump",
                "N",
                "which clump of --model the clips drive (from 0; by default the first that has bones); every clump is written, each a scene",
            ),
        ],
        switches: &[],
    },
    Spec {
        name: "import",
        about: "Motion capture (.bvh) and glTF animation retargeted onto a GTA ped, as IFP",
        positional: ("IN", false),
        values: &[
            (
                "-o",
                "OUT.ifp|OUT.dan",
                "the package (or DelDX .dan) to write",
            ),
            ("--game", "sa|vc|iii", "whose ped"),
            (
                "--model",
                "PED.dff",
                "retarget onto this model's bones instead of the game's ped",
            ),
            ("--name", "CLIP", "the clip's name in the package"),
            ("--into", "PACKAGE.ifp", "add the clip to this package"),
            ("--reduce", "TOL", "drop keys within TOL metres"),
            (
                "--shell",
                "R",
                "the radius of the shell the error is measured on",
            ),
            ("--map", "FILE", "bone pairs: one `SOURCE = GTA` a line"),
            ("--clip", "NAME", "the animation to import"),
            ("--format", "anp3|anpk|anp2", "the IFP version to write"),
        ],
        switches: &[("--runs", "drop only the inside of constant runs (lossless)")],
    },
    Spec {
        name: "render",
        about: "Render frames of an AnimeEffects project as it exports them",
        positional: ("FILE.anie", false),
        values: &[
            ("--frame", "N", "one frame (may be fractional)"),
            ("--frames", "A..B", "frames A to B, both included"),
            ("-o", "OUT", "the PNG (--frame) or the folder (--frames)"),
            ("--scale", "S", "multiply the canvas size"),
        ],
        switches: &[("--raw", "write the framebuffer itself")],
    },
];

/// The block of [`USAGE`] that describes `command`: its synopsis and what each option does.
fn usage_of(command: &str) -> String {
    let head = format!("  rigplay {command} ");
    let mut lines = USAGE.lines().skip_while(|l| !l.starts_with(&head));
    let mut block: Vec<&str> = lines.next().into_iter().collect();
    block.extend(lines.take_while(|l| !l.starts_with("  rigplay ")));
    block.join("\n")
}

/// The command line as clap parses it: every command with its options and help, and
/// `completions SHELL`.
fn cli() -> clap::Command {
    use clap::{Arg, ArgAction, Command};
    // `--name` is a long option, `-n` a short one.
    let named = |name: &'static str| match name.strip_prefix("--") {
        Some(long) => Arg::new(name).long(long),
        None => Arg::new(name).short(name.chars().nth(1).unwrap_or('?')),
    };
    let mut root = Command::new("rigplay")
        .about("Legacy animation formats (GTA .ifp, DelDX .dan, AnimeEffects .anie) for Bevy")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .after_long_help(USAGE);
    for spec in &COMMANDS {
        let (value_name, many) = spec.positional;
        let positional = Arg::new("positional").value_name(value_name);
        let positional = if many {
            positional.num_args(0..).action(ArgAction::Append)
        } else {
            positional.num_args(0..=1).action(ArgAction::Set)
        };
        let mut command = Command::new(spec.name)
            .about(spec.about)
            .after_long_help(usage_of(spec.name))
            .arg(positional);
        for &(name, value, help) in spec.values {
            command = command.arg(
                named(name)
                    .value_name(value)
                    .help(help)
                    .num_args(1)
                    .allow_negative_numbers(true)
                    .action(ArgAction::Append),
            );
        }
        for &(name, help) in spec.switches {
            command = command.arg(named(name).help(help).action(ArgAction::SetTrue));
        }
        root = root.subcommand(command);
    }
    root.subcommand(
        Command::new("completions")
            .about("Print a shell completion script (bash, zsh, fish, elvish, powershell)")
            .arg(
                Arg::new("shell")
                    .required(true)
                    .value_parser(clap::value_parser!(clap_complete::Shell)),
            ),
    )
}

fn main() -> ExitCode {
    let matches = match cli().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // clap's first line ("error: unexpected argument '--x' found"); the usage below is
            // the tool's own.
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("bad arguments");
            let line = line.trim_start_matches("error: ");
            let message = if matches!(
                e.kind(),
                ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                "no command given"
            } else {
                line
            };
            eprintln!("rigplay: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some((name, sub)) = matches.subcommand() else {
        return ExitCode::from(2);
    };
    let result = if name == "completions" {
        let shell = *sub
            .get_one::<clap_complete::Shell>("shell")
            .expect("a required argument");
        clap_complete::generate(shell, &mut cli(), "rigplay", &mut std::io::stdout());
        Ok(())
    } else {
        let spec = COMMANDS
            .iter()
            .find(|c| c.name == name)
            .expect("every subcommand has a spec");
        let args = Args::from_matches(sub, spec);
        match name {
            "inspect" => inspect::inspect(args),
            "validate" => validate::validate(args),
            "convert" => convert::convert(args),
            "export" => export::export(args),
            "import" => import::import(args),
            "pose" => pose::pose(args),
            "render" => render::render(args),
            "txd" => txd::txd(args),
            other => Err(usage(format!("unknown command {other:?}"))),
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message, code)) => {
            eprintln!("rigplay: {message}");
            ExitCode::from(code)
        }
    }
}

/// A command's arguments as clap parsed them: positionals and `--flag [value]` options.
struct Args {
    positional: Vec<String>,
    options: Vec<(String, Option<String>)>,
}

impl Args {
    fn from_matches(m: &clap::ArgMatches, spec: &Spec) -> Self {
        let mut options = Vec::new();
        for &(name, _, _) in spec.values {
            for v in m.get_many::<String>(name).into_iter().flatten() {
                options.push((name.to_owned(), Some(v.clone())));
            }
        }
        for &(name, _) in spec.switches {
            if m.get_flag(name) {
                options.push((name.to_owned(), None));
            }
        }
        Args {
            positional: m
                .get_many::<String>("positional")
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            options,
        }
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
