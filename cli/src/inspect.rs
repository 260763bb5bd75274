//! `rigplay inspect FILE [--json]`: what a file holds, in text or JSON.

mod anie;
mod rw;

use crate::load::{Loaded, load};
use crate::{Args, Failure, num, usage};
use rigplay::formats::dan::DanRead;
use rigplay::formats::ifp::{IfpRead, IfpVersion};
use serde_json::{Value, json};

pub(crate) fn inspect(a: Args) -> Result<(), Failure> {
    let [path] = a.positional.as_slice() else {
        return Err(usage("inspect takes one FILE"));
    };
    let as_json = a.flag("--json");
    match load(path)? {
        Loaded::Ifp(read) => ifp(path, read, as_json),
        Loaded::Dan(read) => dan(path, &read, as_json),
        Loaded::Anie(read) => anie::inspect(path, &read, as_json),
        Loaded::Dff(read) => rw::dff(path, &read, as_json),
        Loaded::Txd(read) => rw::txd(path, &read, as_json),
    }
}

fn ifp(path: &str, read: IfpRead, as_json: bool) -> Result<(), Failure> {
    let IfpRead {
        file: package,
        warnings,
    } = read;
    if as_json {
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

/// Key times of a track, in milliseconds as stored.
fn times_text(times: &[i32]) -> String {
    const SHOWN: usize = 16;
    let mut parts: Vec<String> = times.iter().take(SHOWN).map(|t| t.to_string()).collect();
    if times.len() > SHOWN {
        parts.push(format!("… ({} more)", times.len() - SHOWN));
    }
    parts.join(" ")
}

fn dan(path: &str, read: &DanRead, as_json: bool) -> Result<(), Failure> {
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
