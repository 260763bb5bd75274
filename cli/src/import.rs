//! `rigplay import IN -o OUT.ifp`: motion capture (`.bvh`) and glTF animation (`.gltf`, `.glb`,
//! `.vrm`, `.vrma`) retargeted onto a GTA ped, as IFP clips.

use crate::{Args, Failure, usage};
use rigplay::animation::Clip;
use rigplay::animation::reduce::KeyReduction;
use rigplay::animation::retarget::RetargetSource;
use rigplay::convert::import::{
    ImportReport, bvh_source, clip_to_ped, gltf_source, gta_dan, ifp_version,
};
use rigplay::convert::{IfpConvertOptions, convert_ifp};
use rigplay::formats::bvh::BvhFile;
use rigplay::formats::gltf::GltfScene;
use rigplay::formats::ifp::{IfpClip, IfpFile, IfpVersion};
use rigplay::skeleton::GtaGame;
use std::path::Path;

pub(crate) fn import(a: Args) -> Result<(), Failure> {
    // The shell metric `convert` uses, in metres (3 cm points around each bone).
    let reduction = crate::convert::reduction(&a, 0.03)?;
    let [input] = a.positional.as_slice() else {
        return Err(usage(
            "import takes one .bvh, .gltf, .glb, .vrm or .vrma file",
        ));
    };
    let output = a
        .value("-o")
        .ok_or_else(|| usage("import needs -o OUT.ifp"))?;
    let game = match a.value("--game").map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("sa") => Some(GtaGame::Sa),
        Some("vc") => Some(GtaGame::Vc),
        Some("iii" | "3") => Some(GtaGame::Iii),
        Some(g) => return Err(usage(format!("--game takes sa, vc or iii, not {g:?}"))),
    };
    let ext = |p: &str| {
        Path::new(p)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
    };
    let dan = match ext(output).as_deref() {
        Some("ifp") => false,
        Some("dan") => true,
        _ => {
            return Err(usage(format!(
                "-o takes an .ifp or a .dan file, not {output:?}"
            )));
        }
    };
    if dan {
        for option in ["--into", "--format", "--model"] {
            if a.value(option).is_some() {
                return Err(usage(format!("{option} is for .ifp output")));
            }
        }
    }
    // The ped: a model's bones (its game from the file unless --game says), or the game's own.
    let model = a
        .value("--model")
        .map(|path| ped_of(path, game))
        .transpose()?;
    let game = model
        .as_ref()
        .map_or(game.unwrap_or(GtaGame::Sa), |(_, g)| *g);
    let skeleton = model.map_or_else(|| game.skeleton(), |(s, _)| s);
    // The version: the game's own (ANP3 for SA, ANPK for III and VC), or --format's (SA also
    // loads ANPK).
    let version = match a.value("--format") {
        None => ifp_version(game),
        Some(f) => crate::convert::parse_version("--format", f)?,
    };
    let into = a.value("--into");
    for written in [Some(output), into].into_iter().flatten() {
        if rigplay::convert::same_file(Path::new(input), Path::new(written)) {
            return Err(Failure(format!("{written} is the input"), 1));
        }
    }
    let map = match a.value("--map") {
        Some(path) => read_map(path)?,
        None => Vec::new(),
    };
    let sources = match ext(input).as_deref() {
        Some("bvh") => bvh_clips(input, a.value("--name"))?,
        Some("gltf" | "glb" | "vrm" | "vrma") => {
            gltf_clips(input, a.value("--clip"), a.value("--name"))?
        }
        _ => {
            return Err(Failure(
                format!("{input}: import reads .bvh, .gltf, .glb, .vrm and .vrma files"),
                1,
            ));
        }
    };
    if dan && sources.len() > 1 {
        return Err(usage(format!(
            "a .dan holds one clip; {input} has {}: pick one with --clip",
            sources.len()
        )));
    }
    let mut clips = Vec::new();
    for (name, source, clip) in &sources {
        let (ifp_clip, report) = clip_to_ped(source, clip, name, game, &skeleton, &map)
            .map_err(|e| Failure(format!("{input}: clip {name:?}: {e}"), 1))?;
        say(output, name, game, &report, a.value("--map"));
        clips.push(ifp_clip);
    }
    if dan {
        return write_dan(output, clips.remove(0), game, &reduction);
    }
    // The clips as the game's version stores them (ANP3: int16 where every value fits), their
    // keys reduced first when asked.
    let package_name = sources.first().map_or("clips", |s| s.0.as_str()).to_owned();
    let (written, notes) = stored(game, version, &package_name, clips, reduction)?;
    // Into an existing package: each clip added, or put in place of the one of the same name
    // (as the games match names, case-insensitively); every other clip as it was.
    let package = match into {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
            let mut package = IfpFile::read(&bytes)
                .map_err(|e| Failure(format!("{path}: {e}"), 1))?
                .file;
            if package.version != version {
                return Err(Failure(
                    format!(
                        "{path} is {:?}, and the clips are written as {version:?}: give the package's game with --game (or its version with --format)",
                        package.version,
                    ),
                    1,
                ));
            }
            for new_clip in written.clips() {
                let mut replaced = false;
                for clip in package.clips_mut() {
                    if clip.name.eq_ignore_ascii_case(&new_clip.name) {
                        *clip = new_clip.clone();
                        replaced = true;
                        break;
                    }
                }
                if replaced {
                    out!(
                        "  clip {:?} replaces the package's clip of that name",
                        new_clip.name
                    );
                } else {
                    match package.blocks.last_mut() {
                        Some(block) => block.clips.push(new_clip.clone()),
                        None => {
                            return Err(Failure(format!("{path}: the package has no block"), 1));
                        }
                    }
                }
            }
            // Every other clip is written from what was read, as it was.
            package
        }
        None => written,
    };
    let bytes = package
        .write()
        .map_err(|e| Failure(format!("{output}: {e}"), 1))?;
    rigplay::convert::write_replacing(Path::new(output), &bytes)
        .map_err(|e| Failure(format!("{output}: {e}"), 1))?;
    for n in &notes {
        eprintln!("{output}: {n}");
    }
    Ok(())
}

/// A `.bvh`'s one clip, named `--name` or after the file.
fn bvh_clips(
    input: &str,
    name: Option<&str>,
) -> Result<Vec<(String, RetargetSource, Clip)>, Failure> {
    let bytes = std::fs::read(input).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    let read = BvhFile::read(&bytes).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    for w in &read.warnings {
        eprintln!("{input}: {w}");
    }
    let name = name.map(str::to_owned).unwrap_or_else(|| {
        Path::new(input)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("clip")
            .to_owned()
    });
    let clip = read.file.to_clip(&name);
    Ok(vec![(name, bvh_source(&read.file), clip)])
}

/// A glTF's animations (every one, or the one `--clip` names), each named as in the file (or
/// `--name`, for one).
fn gltf_clips(
    input: &str,
    wanted: Option<&str>,
    name: Option<&str>,
) -> Result<Vec<(String, RetargetSource, Clip)>, Failure> {
    let bytes = std::fs::read(input).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    // Buffers in files beside it, by their relative names only.
    let external = rigplay::formats::gltf::files_beside(Path::new(input));
    let read =
        GltfScene::read(&bytes, external).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
    for w in &read.warnings {
        eprintln!("{input}: {w}");
    }
    let scene = read.scene;
    if scene.animations.is_empty() {
        return Err(Failure(format!("{input}: the file has no animation"), 1));
    }
    let picked: Vec<usize> = match wanted {
        Some(w) => {
            let index = rigplay::animation::names::find_clip(
                scene.animations.iter().map(|a| a.clip.name.as_str()),
                w,
            )
            .map_err(|e| Failure(format!("{input}: {e}"), 1))?;
            vec![index]
        }
        None => (0..scene.animations.len()).collect(),
    };
    if name.is_some() && picked.len() > 1 {
        return Err(usage(format!(
            "--name names one clip; {input} has {} animations: pick one with --clip",
            picked.len()
        )));
    }
    let mut out = Vec::new();
    for i in picked {
        let animation = &scene.animations[i];
        let (source, clip) =
            gltf_source(&scene, animation).map_err(|e| Failure(format!("{input}: {e}"), 1))?;
        let name = name.map_or_else(|| animation.clip.name.clone(), str::to_owned);
        out.push((name, source, clip));
    }
    Ok(out)
}

/// The package of `clips` as `game` stores them, reduced first when asked (with the counts and
/// errors said).
fn stored(
    game: GtaGame,
    version: IfpVersion,
    name: &str,
    clips: Vec<IfpClip>,
    reduction: KeyReduction,
) -> Result<(IfpFile, Vec<String>), Failure> {
    if reduction == KeyReduction::None {
        return Ok(IfpFile::new(version, name, clips).converted(version));
    }
    let shell = match &reduction {
        KeyReduction::Bounded(o) => o.shell_radius,
        _ => 0.03,
    };
    let conversion = convert_ifp(
        &IfpFile::new(version, name, clips),
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
            "as written, against the retargeted clips: error max {:.6}, p99 {:.6} m",
            e.max,
            e.p99
        );
    }
    Ok((conversion.package, conversion.notes))
}

fn say(output: &str, name: &str, game: GtaGame, report: &ImportReport, map: Option<&str>) {
    out!(
        "{output}: clip {name:?} for {game:?} ({} bones paired, {} keys a bone at {} a second, hips scaled by {:.4})",
        report.pairs.len(),
        report.keys_per_bone,
        report.rate,
        report.hips_scale
    );
    for p in &report.map_problems {
        eprintln!("{}: {p}: the line is skipped", map.unwrap_or("--map"));
    }
    if !report.unmatched.is_empty() {
        out!(
            "  the ped's {:?} have no bone in the file: they keep their rest pose",
            report.unmatched
        );
    }
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

/// The clip as a `.dan` of the ped's bones in model space ([`gta_dan`]), its keys reduced when
/// asked, with a `.dan.meta` beside it naming the bones and their parents for rigplay's DAN
/// loader (unless one is there already: a user's own is kept).
fn write_dan(
    output: &str,
    clip: IfpClip,
    game: GtaGame,
    reduction: &KeyReduction,
) -> Result<(), Failure> {
    let failed = |e: &dyn std::fmt::Display| Failure(format!("{output}: {e}"), 1);
    let dan = gta_dan(&clip, game).map_err(|e| failed(&e))?;
    let file = crate::convert::reduced_dan(dan.file.clone(), reduction, output);
    let bytes = file.write().map_err(|e| failed(&e))?;
    rigplay::convert::write_replacing(Path::new(output), &bytes).map_err(|e| failed(&e))?;
    out!(
        "{output}: DAN, {} bones of the {game:?} ped in model space, {} keys",
        file.bones.len(),
        file.key_count()
    );
    let meta = format!("{output}.meta");
    if Path::new(&meta).exists() {
        out!("  {meta} is there already: kept as it is");
        return Ok(());
    }
    let text = dan.meta();
    rigplay::convert::write_replacing(Path::new(&meta), text.as_bytes())
        .map_err(|e| Failure(format!("{meta}: {e}"), 1))?;
    out!("  {meta}: the bones' names and parents for rigplay's DAN loader");
    Ok(())
}

/// The bones of `--model PATH`'s first clump that has any, as the ped to retarget onto, and its
/// game (`game`, else the one the file's bones say).
fn ped_of(
    path: &str,
    game: Option<GtaGame>,
) -> Result<(rigplay::skeleton::Skeleton, GtaGame), Failure> {
    let dff = crate::load::dff(path)?;
    let game = game.unwrap_or_else(|| GtaGame::for_dff(&dff));
    let model = rigplay::model::Model::new(&dff, game, &[]);
    let stem = Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    let clump = model
        .clumps
        .iter()
        .find(|c| !c.bones.is_empty())
        .ok_or_else(|| {
            Failure(
                format!("{path}: the model has no bones to play a clip on"),
                1,
            )
        })?;
    Ok((clump.bone_skeleton(stem), game))
}
