//! `rigplay`: inspect, validate, convert and sample animation files from the command line.

use rigplay::anim::{Clip, WrapMode};
use rigplay::coords::{gta_quat_to_bevy, gta_scale_to_bevy, gta_vec_to_bevy};
use rigplay::formats::ifp::{IfpPackage, IfpRead, IfpVersion};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
rigplay — legacy animation formats (GTA IFP) for Bevy

Usage:
  rigplay inspect FILE [--json]
      package name, format, clips, bones, key counts, durations, warnings
  rigplay validate FILE...
      exit 0 when every file reads; otherwise print each error with its byte offset, exit 1
  rigplay convert IN OUT --to anpk|anp3|anp2
      rewrite in another IFP version (ANP3: compressed keys where values fit int16)
  rigplay pose FILE --clip NAME --at SECONDS [--space file|bevy] [--loop] [--json]
      the sampled local transform of every bone of a clip at a time
      (--space bevy: GTA's Z-up axes turned into Bevy's Y-up; --loop wraps the time,
      otherwise it is clamped to the clip)
";

/// Writes a line to stdout; a closed pipe (`rigplay inspect f | head`) is not an error.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

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

fn load(path: &str) -> Result<IfpRead, Failure> {
    let bytes = std::fs::read(path).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
    IfpPackage::read(&bytes).map_err(|e| Failure(format!("{path}: {e}"), 1))
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
    let IfpRead { package, warnings } = load(path)?;
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

fn validate(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &[], &[])?;
    if a.positional.is_empty() {
        return Err(usage("validate takes one or more FILEs"));
    }
    let mut failed = 0;
    for path in &a.positional {
        match load(path) {
            Ok(r) => {
                out!(
                    "ok    {path} ({} warning{})",
                    r.warnings.len(),
                    if r.warnings.len() == 1 { "" } else { "s" }
                );
                for w in &r.warnings {
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

fn convert(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &["--to"], &[])?;
    let [input, output] = a.positional.as_slice() else {
        return Err(usage("convert takes IN and OUT"));
    };
    let version = parse_version(
        a.value("--to")
            .ok_or_else(|| usage("convert needs --to anpk|anp3|anp2"))?,
    )?;
    let IfpRead { package, warnings } = load(input)?;
    for w in &warnings {
        eprintln!("warning: {input}: {w}");
    }
    let (converted, notes) = package.converted(version);
    for n in &notes {
        eprintln!("note: {n}");
    }
    let bytes = converted
        .write()
        .map_err(|e| Failure(format!("{input}: cannot write {version}: {e}"), 1))?;
    std::fs::write(Path::new(output), &bytes).map_err(|e| Failure(format!("{output}: {e}"), 1))?;
    out!(
        "wrote {output}: {version}, {} clips, {} bytes",
        converted.clips().count(),
        bytes.len()
    );
    Ok(())
}

fn pose(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &["--clip", "--at", "--space"], &["--json", "--loop"])?;
    let [path] = a.positional.as_slice() else {
        return Err(usage("pose takes one FILE"));
    };
    let clip_name = a
        .value("--clip")
        .ok_or_else(|| usage("pose needs --clip NAME"))?;
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
    let IfpRead { package, .. } = load(path)?;
    let clip = package.clip(clip_name).ok_or_else(|| {
        let names: Vec<&str> = package.clips().map(|c| c.name.as_str()).collect();
        Failure(
            format!("{path}: no clip {clip_name:?}; clips: {}", names.join(", ")),
            1,
        )
    })?;
    let clip: Clip = clip.to_clip();
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
        let rotation = s
            .rotation
            .map(|q| if bevy { gta_quat_to_bevy(q) } else { q });
        let translation = s
            .translation
            .map(|v| if bevy { gta_vec_to_bevy(v) } else { v });
        let scale = s.scale.map(|v| if bevy { gta_scale_to_bevy(v) } else { v });
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
