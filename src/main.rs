//! `rigplay`: inspect, validate, convert and sample animation files, and render AnimeEffects
//! projects, from the command line.

use glam::{Quat, Vec3};
use rigplay::anim::reduce::{
    ReduceOptions, ReduceRig, Reduced, measure_error, reduce, reduce_constant_runs,
};
use rigplay::anim::{Clip, WrapMode};
use rigplay::coords::{
    bevy_quat_to_dan, bevy_scale_to_dan, bevy_vec_to_dan, gta_quat_to_bevy, gta_scale_to_bevy,
    gta_vec_to_bevy,
};
use rigplay::formats::anie::AnieRead;
use rigplay::formats::dan::{DanClipOptions, DanFile, DanRead};
use rigplay::formats::ifp::{IfpPackage, IfpRead, IfpVersion};
use rigplay::skeleton::Skeleton;
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
rigplay — legacy animation formats (GTA .ifp, DelDX .dan, AnimeEffects .anie) for Bevy

Usage:
  rigplay inspect FILE [--json]
      .ifp: package name, format, clips, bones, key counts, durations, warnings
      .dan: comment, range, per bone the key times of each track, warnings
      .anie: canvas, frames, resources, the object tree with every key, warnings
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

mod cli_anie;

/// A failure that ends the command: the message, and the exit code.
struct Failure(String, u8);

fn usage(message: impl Into<String>) -> Failure {
    Failure(format!("{}\n\n{USAGE}", message.into()), 2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("inspect") => inspect(&args[1..]),
        Some("validate") => validate(&args[1..]),
        Some("convert") => convert(&args[1..]),
        Some("pose") => pose(&args[1..]),
        Some("render") => cli_anie::render(&args[1..]),
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

/// Splits arguments into positionals and `--flag [value]` options.
struct Args {
    positional: Vec<String>,
    options: Vec<(String, Option<String>)>,
}

impl Args {
    fn parse(args: &[String], with_value: &[&str], switches: &[&str]) -> Result<Self, Failure> {
        let mut out = Args {
            positional: Vec::new(),
            options: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if with_value.contains(&a.as_str()) {
                let v = it
                    .next()
                    .ok_or_else(|| usage(format!("{a} needs a value")))?;
                out.options.push((a.clone(), Some(v.clone())));
            } else if switches.contains(&a.as_str()) {
                out.options.push((a.clone(), None));
            } else if a.starts_with("--") {
                return Err(usage(format!("unknown option {a}")));
            } else {
                out.positional.push(a.clone());
            }
        }
        Ok(out)
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

/// A file of any format, told apart by its first bytes (IFP's and ANIE's magic) or its
/// extension.
enum Loaded {
    Ifp(IfpRead),
    Dan(DanRead),
    Anie(Box<AnieRead>),
}

fn is_dan(path: &str, bytes: &[u8]) -> bool {
    let ifp_magic =
        bytes.len() >= 4 && matches!(&bytes[..4], b"ANPK" | b"ANP3" | b"ANP2" | b"ANLF");
    let dan_ext = Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dan"));
    !ifp_magic && (dan_ext || bytes.get(..4) == Some(&10i32.to_le_bytes()[..]))
}

fn load_any(path: &str) -> Result<Loaded, Failure> {
    let bytes = std::fs::read(path).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
    if cli_anie::is_anie(path, &bytes) {
        cli_anie::read(path, &bytes).map(|r| Loaded::Anie(Box::new(r)))
    } else if is_dan(path, &bytes) {
        DanFile::read(&bytes)
            .map(Loaded::Dan)
            .map_err(|e| Failure(format!("{path}: {e}"), 1))
    } else {
        IfpPackage::read(&bytes)
            .map(Loaded::Ifp)
            .map_err(|e| Failure(format!("{path}: {e}"), 1))
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

fn channels(has_translation: bool, has_scale: bool) -> Vec<&'static str> {
    let mut c = vec!["rotation"];
    if has_translation {
        c.push("translation");
    }
    if has_scale {
        c.push("scale");
    }
    c
}

fn inspect(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &[], &["--json"])?;
    let [path] = a.positional.as_slice() else {
        return Err(usage("inspect takes one FILE"));
    };
    let IfpRead { package, warnings } = match load_any(path)? {
        Loaded::Ifp(read) => read,
        Loaded::Dan(read) => return inspect_dan(path, &read, a.flag("--json")),
        Loaded::Anie(read) => return cli_anie::inspect(path, &read, a.flag("--json")),
    };
    if a.flag("--json") {
        let mut clips = Vec::new();
        for (b, block) in package.blocks.iter().enumerate() {
            for clip in &block.clips {
                let bones: Vec<Value> = clip
                    .sequences
                    .iter()
                    .map(|s| {
                        json!({
                            "name": s.name,
                            "id": (s.bone_id != -1).then_some(s.bone_id),
                            "keys": s.keys.len(),
                            "channels": channels(s.has_translation, s.has_scale),
                            "compressed": s.compressed,
                            "first_time": s.keys.first().map(|k| num(k.time)),
                            "last_time": s.keys.last().map(|k| num(k.time)),
                        })
                    })
                    .collect();
                clips.push(json!({
                    "name": clip.name,
                    "block": b,
                    "duration": num(clip.duration()),
                    "keys": clip.sequences.iter().map(|s| s.keys.len()).sum::<usize>(),
                    "flags": clip.flags,
                    "bones": bones,
                }));
            }
        }
        let out = json!({
            "file": path,
            "format": package.version.magic(),
            "container": package.anlf.then_some("ANLF"),
            "name": package.name(),
            "blocks": package.blocks.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
            "clips": clips,
            "warnings": warnings.iter().map(|w| json!({"offset": w.offset, "message": w.to_string()})).collect::<Vec<_>>(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    let clip_count = package.clips().count();
    out!(
        "{path}: {}{} package {:?}, {clip_count} clip{}",
        package.version,
        if package.anlf {
            " (ANLF container)"
        } else {
            ""
        },
        package.name(),
        if clip_count == 1 { "" } else { "s" }
    );
    for block in &package.blocks {
        if package.anlf {
            out!("block {:?}", block.name);
        }
        for clip in &block.clips {
            let keys: usize = clip.sequences.iter().map(|s| s.keys.len()).sum();
            out!(
                "  clip {:?}: {} bones, {keys} keys, {:.3} s{}",
                clip.name,
                clip.sequences.len(),
                clip.duration(),
                if package.version == IfpVersion::Anp3 {
                    format!(", flags {}", clip.flags)
                } else {
                    String::new()
                }
            );
            for s in &clip.sequences {
                let id = if s.bone_id == -1 {
                    "by name".to_owned()
                } else {
                    format!("id {}", s.bone_id)
                };
                let span = match (s.keys.first(), s.keys.last()) {
                    (Some(f), Some(l)) => format!(" {:.3}–{:.3} s", f.time, l.time),
                    _ => String::new(),
                };
                out!(
                    "    {:<24} {id:<8} {:>4} keys ({}){span}{}",
                    format!("{:?}", s.name),
                    s.keys.len(),
                    channels(s.has_translation, s.has_scale).join(", "),
                    if s.compressed { ", compressed" } else { "" }
                );
            }
        }
    }
    if !warnings.is_empty() {
        out!("warnings:");
        for w in &warnings {
            out!("  {w}");
        }
    }
    Ok(())
}

/// Key times of a track, in milliseconds as stored.
fn times_text(times: &[i32]) -> String {
    const SHOWN: usize = 16;
    let mut parts: Vec<String> = times.iter().take(SHOWN).map(|t| t.to_string()).collect();
    if times.len() > SHOWN {
        parts.push(format!("… ({} more)", times.len() - SHOWN));
    }
    parts.join(" ")
}

fn inspect_dan(path: &str, read: &DanRead, as_json: bool) -> Result<(), Failure> {
    let f = &read.file;
    let tracks = |b: &rigplay::formats::dan::DanBone| {
        [
            (
                "rotation",
                b.rotations.iter().map(|k| k.time_ms).collect::<Vec<_>>(),
            ),
            ("position", b.positions.iter().map(|k| k.time_ms).collect()),
            ("scale", b.scales.iter().map(|k| k.time_ms).collect()),
        ]
    };
    if as_json {
        let bones: Vec<Value> = f
            .bones
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut bone = serde_json::Map::new();
                bone.insert("index".into(), json!(i));
                for (name, times) in tracks(b) {
                    bone.insert(
                        name.into(),
                        json!({ "keys": times.len(), "times_ms": times }),
                    );
                }
                Value::Object(bone)
            })
            .collect();
        let out = json!({
            "file": path,
            "format": "DAN",
            "version": f.version,
            "comment": f.comment_text(),
            "start_ms": num(f.start_ms),
            "end_ms": num(f.end_ms),
            "duration": num(f.duration()),
            "keys": f.key_count(),
            "bones": bones,
            "trailing_bytes": f.trailing.len(),
            "warnings": read.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    out!(
        "{path}: DAN version {}, {:?}, {} bones, {} keys, {}–{} ms ({:.3} s)",
        f.version,
        f.comment_text(),
        f.bones.len(),
        f.key_count(),
        f.start_ms,
        f.end_ms,
        f.duration()
    );
    for (i, b) in f.bones.iter().enumerate() {
        out!("  bone #{i}");
        for (name, times) in tracks(b) {
            out!(
                "    {name:<8} {:>4} keys  ms: {}",
                times.len(),
                times_text(&times)
            );
        }
    }
    if !read.warnings.is_empty() {
        out!("warnings:");
        for w in &read.warnings {
            out!("  {w}");
        }
    }
    Ok(())
}

fn validate(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &[], &[])?;
    if a.positional.is_empty() {
        return Err(usage("validate takes one or more FILEs"));
    }
    let mut failed = 0;
    for path in &a.positional {
        match load_any(path) {
            Ok(loaded) => {
                let warnings: Vec<String> = match &loaded {
                    Loaded::Ifp(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Dan(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Anie(r) => r.warnings.iter().map(ToString::to_string).collect(),
                };
                out!(
                    "ok    {path} ({} warning{})",
                    warnings.len(),
                    if warnings.len() == 1 { "" } else { "s" }
                );
                for w in &warnings {
                    out!("      warning: {w}");
                }
            }
            Err(Failure(message, _)) => {
                failed += 1;
                out!("error {message}");
            }
        }
    }
    if failed > 0 {
        return Err(Failure(
            format!("{failed} of {} files failed", a.positional.len()),
            1,
        ));
    }
    Ok(())
}

fn parse_version(s: &str) -> Result<IfpVersion, Failure> {
    match s.to_ascii_lowercase().as_str() {
        "anpk" => Ok(IfpVersion::Anpk),
        "anp3" => Ok(IfpVersion::Anp3),
        "anp2" => Ok(IfpVersion::Anp2),
        _ => Err(usage(format!("--to takes anpk, anp3 or anp2, not {s:?}"))),
    }
}

/// How `convert` reduces keys.
#[derive(Clone, Copy)]
enum Reduction {
    None,
    /// Only the inside of constant runs (lossless).
    Runs,
    Bounded(ReduceOptions),
}

fn reduction(a: &Args, default_shell: f32) -> Result<Reduction, Failure> {
    let positive = |name: &str, v: &str| {
        v.parse::<f32>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| usage(format!("{name} takes a distance ≥ 0, not {v:?}")))
    };
    match (a.value("--reduce"), a.flag("--runs")) {
        (Some(_), true) => Err(usage("--reduce and --runs exclude each other")),
        (Some(tol), false) => Ok(Reduction::Bounded(ReduceOptions {
            tolerance: positive("--reduce", tol)?,
            shell_radius: match a.value("--shell") {
                Some(r) => positive("--shell", r)?,
                None => default_shell,
            },
        })),
        (None, true) => Ok(Reduction::Runs),
        (None, false) => Ok(Reduction::None),
    }
}

fn reduce_clip(clip: &Clip, rig: &ReduceRig, how: Reduction) -> Option<Reduced> {
    match how {
        Reduction::None => None,
        Reduction::Runs => Some(reduce_constant_runs(clip)),
        Reduction::Bounded(options) => Some(reduce(clip, rig, &options)),
    }
}

fn report(what: &str, reduced: &[Reduced]) {
    let before: usize = reduced.iter().map(|r| r.stats.keys_before).sum();
    let after: usize = reduced.iter().map(|r| r.stats.keys_after).sum();
    let max = reduced
        .iter()
        .map(|r| r.stats.error.max)
        .fold(0.0, f32::max);
    let p99 = reduced
        .iter()
        .map(|r| r.stats.error.p99)
        .fold(0.0, f32::max);
    out!(
        "{what}: {before} → {after} keys ({:.1} %), error max {max:.6}, p99 {p99:.6} (file units)",
        if before > 0 {
            after as f64 * 100.0 / before as f64
        } else {
            100.0
        }
    );
}

fn convert(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &["--to", "--reduce", "--shell"], &["--runs"])?;
    let [input, output] = a.positional.as_slice() else {
        return Err(usage("convert takes IN and OUT"));
    };
    let write = |bytes: &[u8]| {
        std::fs::write(Path::new(output), bytes).map_err(|e| Failure(format!("{output}: {e}"), 1))
    };
    match load_any(input)? {
        Loaded::Anie(_) => {
            return Err(Failure(
                format!(
                    "{input}: convert is for .ifp and .dan; .anie projects render (see render)"
                ),
                1,
            ));
        }
        Loaded::Dan(DanRead { file, warnings }) => {
            if a.value("--to").is_some() {
                return Err(usage("--to is for .ifp files; a .dan converts to .dan"));
            }
            for w in &warnings {
                eprintln!("warning: {input}: {w}");
            }
            let how = reduction(&a, 3.0)?;
            // Sorted first: what the exporter meant (§3), and what the clip's key indices are.
            let sorted = file.sorted();
            let clip = sorted.to_clip("", &DanClipOptions::default());
            let out_file = match reduce_clip(&clip, &ReduceRig::flat(&clip), how) {
                Some(r) => {
                    report(input, std::slice::from_ref(&r));
                    sorted.with_keys(&r.kept)
                }
                None => file,
            };
            let bytes = out_file
                .write()
                .map_err(|e| Failure(format!("{input}: cannot write: {e}"), 1))?;
            write(&bytes)?;
            out!(
                "wrote {output}: DAN, {} bones, {} keys, {} bytes",
                out_file.bones.len(),
                out_file.key_count(),
                bytes.len()
            );
        }
        Loaded::Ifp(IfpRead { package, warnings }) => {
            for w in &warnings {
                eprintln!("warning: {input}: {w}");
            }
            let how = reduction(&a, 0.03)?;
            let version = match a.value("--to") {
                Some(v) => parse_version(v)?,
                None if !matches!(how, Reduction::None) => package.version,
                None => return Err(usage("convert needs --to anpk|anp3|anp2 or a reduction")),
            };
            let mut package = package;
            let skeleton = Skeleton::for_ifp(&package);
            let originals: Vec<Clip> = package.clips().map(|c| c.to_clip()).collect();
            if !matches!(how, Reduction::None) {
                let mut reports = Vec::new();
                for (clip, model) in package.clips_mut().zip(&originals) {
                    let rig = ReduceRig::from_skeleton(&skeleton, model);
                    if let Some(r) = reduce_clip(model, &rig, how) {
                        clip.keep_keys(&r.kept);
                        reports.push(r);
                    }
                }
                report(input, &reports);
            }
            let (converted, notes) = package.converted(version);
            for n in &notes {
                eprintln!("note: {n}");
            }
            let bytes = converted
                .write()
                .map_err(|e| Failure(format!("{input}: cannot write {version}: {e}"), 1))?;
            write(&bytes)?;
            out!(
                "wrote {output}: {version}, {} clips, {} bytes",
                converted.clips().count(),
                bytes.len()
            );
            // What the written file plays, against the input: reduction and quantisation both.
            if let (Reduction::Bounded(o), Ok(back)) = (how, IfpPackage::read(&bytes)) {
                let (mut max, mut p99) = (0.0f32, 0.0f32);
                for (original, written) in originals.iter().zip(back.package.clips()) {
                    let rig = ReduceRig::from_skeleton(&skeleton, original);
                    let e = measure_error(original, &written.to_clip(), &rig, o.shell_radius);
                    max = max.max(e.max);
                    p99 = p99.max(e.p99);
                }
                out!("as written ({version}): error max {max:.6}, p99 {p99:.6}");
            }
        }
    }
    Ok(())
}

fn pose(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &["--clip", "--at", "--space"], &["--json", "--loop"])?;
    let [path] = a.positional.as_slice() else {
        return Err(usage("pose takes one FILE"));
    };
    let at = a
        .value("--at")
        .ok_or_else(|| usage("pose needs --at SECONDS"))?;
    let at: f32 = at
        .parse()
        .ok()
        .filter(|t: &f32| t.is_finite())
        .ok_or_else(|| usage(format!("--at takes seconds, not {at:?}")))?;
    let bevy = match a.value("--space").unwrap_or("file") {
        "file" => false,
        "bevy" => true,
        s => return Err(usage(format!("--space takes file or bevy, not {s:?}"))),
    };
    // Each format's values in its own axes, and its map to Bevy's.
    type ToBevy = (fn(Quat) -> Quat, fn(Vec3) -> Vec3, fn(Vec3) -> Vec3);
    let (clip, file_space, to_bevy): (Clip, bool, ToBevy) = match load_any(path)? {
        Loaded::Ifp(IfpRead { package, .. }) => {
            let clip_name = a
                .value("--clip")
                .ok_or_else(|| usage("pose needs --clip NAME for an .ifp"))?;
            let clip = package.clip(clip_name).ok_or_else(|| {
                let names: Vec<&str> = package.clips().map(|c| c.name.as_str()).collect();
                Failure(
                    format!("{path}: no clip {clip_name:?}; clips: {}", names.join(", ")),
                    1,
                )
            })?;
            (
                clip.to_clip(),
                true,
                (gta_quat_to_bevy, gta_vec_to_bevy, gta_scale_to_bevy),
            )
        }
        Loaded::Anie(_) => {
            return Err(Failure(
                format!("{path}: pose is for .ifp and .dan; .anie projects render (see render)"),
                1,
            ));
        }
        // The DAN clip is in Bevy's axes already; file space is the stored axes.
        Loaded::Dan(DanRead { file, .. }) => (
            file.to_clip("", &DanClipOptions::default()),
            false,
            (|q| q, |v| v, |v| v),
        ),
    };
    let time = clip.wrap_time(
        at,
        if a.flag("--loop") {
            WrapMode::Loop
        } else {
            WrapMode::Clamp
        },
    );
    let mut bones = Vec::new();
    for (i, track) in clip.tracks().iter().enumerate() {
        let s = clip.sample_track(i, time);
        let (rotation, translation, scale) = match (bevy, file_space) {
            // IFP: the clip is in the file's axes.
            (false, true) | (true, false) => (s.rotation, s.translation, s.scale),
            (true, true) => (
                s.rotation.map(to_bevy.0),
                s.translation.map(to_bevy.1),
                s.scale.map(to_bevy.2),
            ),
            // DAN in the file's axes: the stored (x, y, z, w) and (x, y, z).
            (false, false) => (
                s.rotation.map(|q| Quat::from_array(bevy_quat_to_dan(q))),
                s.translation.map(|v| Vec3::from_array(bevy_vec_to_dan(v))),
                s.scale.map(|v| Vec3::from_array(bevy_scale_to_dan(v))),
            ),
        };
        bones.push((track, rotation, translation, scale));
    }
    if a.flag("--json") {
        let out = json!({
            "clip": clip.name,
            "time": num(time),
            "space": if bevy { "bevy" } else { "file" },
            "bones": bones.iter().map(|(t, r, tr, s)| json!({
                "name": t.bone.name,
                "id": t.bone.id,
                "rotation": r.map(|q| nums(&q.to_array())),
                "translation": tr.map(|v| nums(&v.to_array())),
                "scale": s.map(|v| nums(&v.to_array())),
            })).collect::<Vec<_>>(),
        });
        out!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        out!(
            "clip {:?} at {time} s ({} space)",
            clip.name,
            if bevy { "bevy" } else { "file" }
        );
        for (t, r, tr, s) in &bones {
            let fmt = |v: &[f32]| {
                v.iter()
                    .map(|x| format!("{x:9.5}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            out!(
                "  {:<24} rot [{}]{}{}",
                format!("{:?}", t.bone.name),
                r.map(|q| fmt(&q.to_array())).unwrap_or_default(),
                tr.map(|v| format!("  pos [{}]", fmt(&v.to_array())))
                    .unwrap_or_default(),
                s.map(|v| format!("  scale [{}]", fmt(&v.to_array())))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}
