//! `rigplay convert IN OUT`: an IFP package in another version, or a file with fewer keys.

use crate::load::{Loaded, load};
use crate::{Args, Failure, usage};
use rigplay::animation::reduce::{KeyReduction, ReduceOptions, ReduceRig, ReduceStats};
use rigplay::convert::{IfpConvertOptions, convert_ifp};
use rigplay::formats::dan::{DanClipOptions, DanFile, DanRead};
use rigplay::formats::ifp::{IfpRead, IfpVersion};
use rigplay::skeleton::Skeleton;
use std::path::Path;

pub(crate) fn parse_version(option: &str, s: &str) -> Result<IfpVersion, Failure> {
    match s.to_ascii_lowercase().as_str() {
        "anpk" => Ok(IfpVersion::Anpk),
        "anp3" => Ok(IfpVersion::Anp3),
        "anp2" => Ok(IfpVersion::Anp2),
        _ => Err(usage(format!(
            "{option} takes anpk, anp3 or anp2, not {s:?}"
        ))),
    }
}

pub(crate) fn reduction(a: &Args, default_shell: f32) -> Result<KeyReduction, Failure> {
    let positive = |name: &str, v: &str| {
        v.parse::<f32>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| usage(format!("{name} takes a distance ≥ 0, not {v:?}")))
    };
    match (a.value("--reduce"), a.flag("--runs")) {
        (Some(_), true) => Err(usage("--reduce and --runs exclude each other")),
        (Some(tol), false) => Ok(KeyReduction::Bounded(ReduceOptions {
            tolerance: positive("--reduce", tol)?,
            shell_radius: match a.value("--shell") {
                Some(r) => positive("--shell", r)?,
                None => default_shell,
            },
        })),
        (None, true) => Ok(KeyReduction::Runs),
        (None, false) => Ok(KeyReduction::None),
    }
}

pub(crate) fn report(what: &str, stats: &ReduceStats) {
    let ReduceStats {
        keys_before: before,
        keys_after: after,
        error,
    } = *stats;
    let (max, p99) = (error.max, error.p99);
    out!(
        "{what}: {before} → {after} keys ({:.1} %), error max {max:.6}, p99 {p99:.6} (file units)",
        if before > 0 {
            after as f64 * 100.0 / before as f64
        } else {
            100.0
        }
    );
}

pub(crate) fn convert(a: Args) -> Result<(), Failure> {
    let [input, output] = a.positional.as_slice() else {
        return Err(usage("convert takes IN and OUT"));
    };
    // Never over the input: a converted copy goes elsewhere, and is written whole or not at all.
    if rigplay::convert::same_file(Path::new(input), Path::new(output)) {
        return Err(Failure(
            format!("{output} is the input: write the converted file under another name"),
            1,
        ));
    }
    let write = |bytes: &[u8]| {
        rigplay::convert::write_replacing(Path::new(output), bytes)
            .map_err(|e| Failure(format!("{output}: {e}"), 1))
    };
    match load(input)? {
        Loaded::Dff(_) | Loaded::Txd(_) => {
            return Err(Failure(
                format!(
                    "{input}: convert is for .ifp and .dan; RenderWare models and textures are read only"
                ),
                1,
            ));
        }
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
            let out_file = reduced_dan(file, &how, input);
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
        Loaded::Ifp(IfpRead {
            file: package,
            warnings,
        }) => {
            for w in &warnings {
                eprintln!("warning: {input}: {w}");
            }
            let how = reduction(&a, 0.03)?;
            let version = match a.value("--to") {
                Some(v) => parse_version("--to", v)?,
                None if how != KeyReduction::None => package.version,
                None => return Err(usage("convert needs --to anpk|anp3|anp2 or a reduction")),
            };
            let options = IfpConvertOptions {
                version,
                reduction: how,
                // What the written file plays, against the input: reduction and quantisation.
                measure: match how {
                    KeyReduction::Bounded(o) => Some(o.shell_radius),
                    _ => None,
                },
            };
            let done = convert_ifp(&package, &Skeleton::for_ifp(&package), &options);
            if let Some(stats) = &done.reduction {
                report(input, stats);
            }
            for n in &done.notes {
                eprintln!("note: {n}");
            }
            let bytes = done
                .bytes
                .map_err(|e| Failure(format!("{input}: cannot write {version}: {e}"), 1))?;
            write(&bytes)?;
            out!(
                "wrote {output}: {version}, {} clips, {} bytes",
                done.package.clips().count(),
                bytes.len()
            );
            if let Some(e) = done.error {
                out!(
                    "as written ({version}): error max {:.6}, p99 {:.6}",
                    e.max,
                    e.p99
                );
            }
        }
    }
    Ok(())
}

/// A DAN file with the keys `how` keeps, what was kept said under `label` (sorted first: what
/// the exporter meant, §3, and what the clip's key indices are); the file itself when `how`
/// keeps every key.
pub(crate) fn reduced_dan(file: DanFile, how: &KeyReduction, label: &str) -> DanFile {
    let sorted = file.sorted();
    let clip = sorted.to_clip("", &DanClipOptions::default());
    match how.apply(&clip, &ReduceRig::flat(&clip)) {
        Some(r) => {
            report(label, &ReduceStats::combined([&r.stats]));
            sorted.with_keys(&r.kept)
        }
        None => file,
    }
}
