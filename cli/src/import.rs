//! `rigplay import IN.bvh -o OUT.ifp`: motion capture retargeted onto a GTA ped, as an IFP clip.

use crate::{Args, Failure, usage};
use rigplay::anim::reduce::KeyReduction;
use rigplay::convert::import::{bvh_source, clip_to_gta, gta_package, ifp_version};
use rigplay::convert::{IfpConvertOptions, convert_ifp};
use rigplay::formats::bvh::Bvh;
use rigplay::formats::ifp::IfpPackage;
use rigplay::skeleton::GtaGame;
use std::path::Path;

pub(crate) fn import(args: &[String]) -> Result<(), Failure> {
    let a = Args::parse(
        args,
        &[
            "-o", "--game", "--name", "--into", "--reduce", "--shell", "--map",
        ],
        &["--runs"],
    )?;
    // The shell metric `convert` uses, in metres (3 cm points around each bone).
    let reduction = crate::convert::reduction(&a, 0.03)?;
    let [input] = a.positional.as_slice() else {
        return Err(usage("import takes one .bvh file"));
    };
    let output = a
        .value("-o")
        .ok_or_else(|| usage("import needs -o OUT.ifp"))?;
    let game = match a
        .value("--game")
        .unwrap_or("sa")
        .to_ascii_lowercase()
        .as_str()
    {
        "sa" => GtaGame::Sa,
        "vc" => GtaGame::Vc,
        "iii" | "3" => GtaGame::Iii,
        g => return Err(usage(format!("--game takes sa, vc or iii, not {g:?}"))),
    };
    let ext = |p: &str| {
        Path::new(p)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
    };
    if ext(input).as_deref() != Some("bvh") {
        return Err(Failure(
            format!("{input}: import reads .bvh files (glTF, VRM and VRMA are not done yet)"),
            1,
        ));
    }
    if ext(output).as_deref() != Some("ifp") {
        return Err(usage(format!("-o takes an .ifp file, not {output:?}")));
    }
    let into = a.value("--into");
    for written in [Some(output), into].into_iter().flatten() {
        if rigplay::convert::same_file(Path::new(input), Path::new(written)) {
            return Err(Failure(format!("{written} is the input"), 1));
        }
    }
    let bytes = std::fs::read(input).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    let read = Bvh::read(&bytes).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    for w in &read.warnings {
        eprintln!("{input}: {w}");
    }
    let name = a.value("--name").map(str::to_owned).unwrap_or_else(|| {
        Path::new(input)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("clip")
            .to_owned()
    });
    let map = match a.value("--map") {
        Some(path) => read_map(path)?,
        None => Vec::new(),
    };
    let clip = read.bvh.to_clip(&name);
    let (ifp_clip, report) = clip_to_gta(&bvh_source(&read.bvh), &clip, &name, game, &map)
        .map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    // The clip as the game's version stores it (ANP3: int16 where every value fits), its keys
    // reduced first when asked.
    let (single, notes) = if reduction == KeyReduction::None {
        gta_package(game, &name, vec![ifp_clip])
    } else {
        let version = ifp_version(game);
        let shell = match &reduction {
            KeyReduction::Bounded(o) => o.shell_radius,
            _ => 0.03,
        };
        let conversion = convert_ifp(
            &IfpPackage::new(version, &name, vec![ifp_clip]),
            &game.skeleton(),
            &IfpConvertOptions {
                version,
                reduction,
                measure: Some(shell),
            },
        );
        if let Some(stats) = &conversion.reduction {
            crate::convert::report("keys", stats);
        }
        if let Some(e) = &conversion.error {
            out!(
                "as written, against the retargeted clip: error max {:.6}, p99 {:.6} m",
                e.max,
                e.p99
            );
        }
        (conversion.package, conversion.notes)
    };
    // Into an existing package: the clip added, or put in place of the one of the same name
    // (as the games match names, case-insensitively); every other clip as it was.
    let (package, replaced) = match into {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
            let mut package = IfpPackage::read(&bytes)
                .map_err(|e| Failure(format!("{path}: {e}"), 1))?
                .package;
            if package.version != ifp_version(game) {
                return Err(Failure(
                    format!(
                        "{path} is {:?}, and {game:?} clips are written as {:?}: give the package's game with --game",
                        package.version,
                        ifp_version(game)
                    ),
                    1,
                ));
            }
            let new_clip = single.clips().next().cloned().unwrap_or_default();
            let mut replaced = false;
            for clip in package.clips_mut() {
                if clip.name.eq_ignore_ascii_case(&name) {
                    *clip = new_clip.clone();
                    replaced = true;
                    break;
                }
            }
            if !replaced {
                match package.blocks.last_mut() {
                    Some(block) => block.clips.push(new_clip),
                    None => return Err(Failure(format!("{path}: the package has no block"), 1)),
                }
            }
            // Every other clip is written from what was read, as it was.
            (package, replaced)
        }
        None => (single, false),
    };
    let bytes = package
        .write()
        .map_err(|e| Failure(format!("{output}: {e}"), 1))?;
    rigplay::convert::write_replacing(Path::new(output), &bytes)
        .map_err(|e| Failure(format!("{output}: {e}"), 1))?;
    for n in &notes {
        eprintln!("{output}: {n}");
    }
    let verb = if replaced { "replaced" } else { "written" };
    out!(
        "{output}: clip {name:?} {verb} for {game:?} ({} bones paired, {} keys a bone at {} a second, hips scaled by {:.4})",
        report.pairs.len(),
        report.keys_per_bone,
        report.rate,
        report.hips_scale
    );
    for p in &report.map_problems {
        eprintln!(
            "{}: {p}: the line is skipped",
            a.value("--map").unwrap_or("--map")
        );
    }
    if !report.unmatched.is_empty() {
        out!(
            "  the ped's {:?} have no bone in the file: they keep their rest pose",
            report.unmatched
        );
    }
    Ok(())
}

/// A bone map file: one `SOURCE BONE = GTA BONE` a line (an empty GTA side unpairs the source
/// bone), `#` starting a comment, blank lines skipped.
fn read_map(path: &str) -> Result<Vec<(String, String)>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
    let mut map = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((source, target)) = line.split_once('=') else {
            return Err(Failure(
                format!("{path}:{}: {line:?} is not `SOURCE BONE = GTA BONE`", n + 1),
                1,
            ));
        };
        map.push((source.trim().to_owned(), target.trim().to_owned()));
    }
    Ok(map)
}
