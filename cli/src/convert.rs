//! `rigplay convert IN OUT`: an IFP package in another version, or a file with fewer keys.

use crate::load::{Loaded, load};
use crate::{Args, Failure, usage};
use rigplay::anim::Clip;
use rigplay::anim::reduce::{
    ReduceOptions, ReduceRig, Reduced, measure_error, reduce, reduce_constant_runs,
};
use rigplay::formats::dan::{DanClipOptions, DanRead};
use rigplay::formats::ifp::{IfpPackage, IfpRead, IfpVersion};
use rigplay::skeleton::Skeleton;
use std::path::Path;

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

pub(crate) fn convert(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(args, &["--to", "--reduce", "--shell"], &["--runs"])?;
    let [input, output] = a.positional.as_slice() else {
        return Err(usage("convert takes IN and OUT"));
    };
    let write = |bytes: &[u8]| {
        std::fs::write(Path::new(output), bytes).map_err(|e| Failure(format!("{output}: {e}"), 1))
    };
    match load(input)? {
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
