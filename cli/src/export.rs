//! `rigplay export IN... -o OUT.glb|.gltf`: GTA and DAN clips out to glTF, on their skeleton.

use crate::load::{Loaded, load};
use crate::{Args, Failure, usage};
use rigplay::animation::Clip;
use rigplay::convert::gltf::{GltfClip, GltfExport, GltfModel, RootMotionExport};
use rigplay::formats::dan::{DanClipOptions, DanRead};
use rigplay::formats::ifp::IfpRead;
use rigplay::formats::txd::{TextureNative, TxdFile};
use rigplay::model::{Model, merge_textures};
use rigplay::skeleton::{GtaGame, Skeleton};

/// The clips of the input files, on one skeleton.
struct Gathered {
    skeleton: Skeleton,
    /// A GTA ped's (else a DAN's bones): how the export turns and places it.
    gta: bool,
    clips: Vec<(Clip, Vec<Option<usize>>)>,
    /// Where the skeleton came from ("GTA SA ped (from a.ifp)"), to say when two disagree.
    from: String,
}

pub(crate) fn export(a: Args) -> Result<(), Failure> {
    if a.positional.is_empty() {
        return Err(usage("export takes one or more .ifp or .dan files"));
    }
    let output = a
        .value("-o")
        .ok_or_else(|| usage("export needs -o OUT.glb or -o OUT.gltf"))?;
    let glb = match std::path::Path::new(output)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("glb") => true,
        Some("gltf") => false,
        _ => {
            return Err(usage(format!(
                "-o takes a .glb or .gltf file, not {output:?}"
            )));
        }
    };
    let game = a.value("--game").map(crate::parse_game).transpose()?;
    let root_motion = match a.value("--root-motion").unwrap_or("baked") {
        "baked" => RootMotionExport::Baked,
        "in-place" => RootMotionExport::InPlace,
        "extract" => RootMotionExport::Extract,
        m => {
            return Err(usage(format!(
                "--root-motion takes baked, in-place or extract, not {m:?}"
            )));
        }
    };
    let wanted: Vec<&str> = a
        .options
        .iter()
        .filter(|(n, _)| n == "--clip")
        .filter_map(|(_, v)| v.as_deref())
        .collect();
    let mut gathered: Option<Gathered> = None;
    let mut found = vec![false; wanted.len()];
    for path in &a.positional {
        let next = gather(path, game, &wanted, &mut found)?;
        match &mut gathered {
            None => gathered = Some(next),
            Some(g) if g.skeleton == next.skeleton && g.gta == next.gta => {
                g.clips.extend(next.clips)
            }
            Some(g) => {
                return Err(Failure(
                    format!(
                        "{path}: its clips play on {}, the earlier files' on {}; export them to separate files",
                        next.from, g.from
                    ),
                    1,
                ));
            }
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Failure(
            format!("no input has a clip called {:?}", wanted[i]),
            1,
        ));
    }
    // Never over an input; every file written whole or not at all.
    let out_path = std::path::Path::new(output);
    let bin_path = out_path.with_file_name(format!(
        "{}.bin",
        out_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("out")
    ));
    for input in &a.positional {
        for written in [out_path, bin_path.as_path()] {
            if rigplay::convert::same_file(std::path::Path::new(input), written) {
                return Err(Failure(
                    format!(
                        "{} is an input: write the export under another name",
                        written.display()
                    ),
                    1,
                ));
            }
        }
    }
    let g = gathered.expect("at least one input");
    if g.clips.is_empty() {
        return Err(Failure("the inputs hold no clip".into(), 1));
    }
    let model = match a.value("--model") {
        Some(path) if g.gta => Some(model(path, &a)?),
        Some(_) => {
            return Err(usage(
                "--model draws GTA clips (.ifp); a .dan has its own bones",
            ));
        }
        None => None,
    };
    let (skeleton, model_targets, root_bone) = match &model {
        Some(m) => {
            let clump = &m.model.clumps[m.clump];
            let targets: Vec<Vec<Option<usize>>> = g
                .clips
                .iter()
                .map(|(clip, _)| clump.bind(&g.skeleton, clip))
                .collect();
            (
                clump.skeleton(&m.name),
                Some(targets),
                clump.root_frame(&g.skeleton),
            )
        }
        None => (g.skeleton.clone(), None, None),
    };
    let clips = g
        .clips
        .iter()
        .enumerate()
        .map(|(i, (clip, targets))| GltfClip {
            clip,
            targets: model_targets.as_ref().map_or(targets, |t| &t[i]),
        })
        .collect();
    let export = match &model {
        Some(m) => GltfExport::model(
            &skeleton,
            GltfModel {
                model: &m.model,
                clump: m.clump,
                other_clumps: true,
                png: m.png.clone(),
            },
            clips,
            root_motion,
            root_bone,
        ),
        None if g.gta => GltfExport::gta(&skeleton, clips, root_motion),
        None => GltfExport::dan(&skeleton, clips, root_motion),
    };
    let failed = |e: &dyn std::fmt::Display| Failure(format!("{output}: {e}"), 1);
    let write = rigplay::convert::write_replacing;
    let report = if glb {
        let (bytes, report) = export.to_glb().map_err(|e| failed(&e))?;
        write(out_path, &bytes).map_err(|e| failed(&e))?;
        report
    } else {
        let bin_name = bin_path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("out.bin");
        let (json, bin, report) = export.to_gltf(bin_name).map_err(|e| failed(&e))?;
        // The buffer first: a .gltf is never left naming a .bin that is not there.
        write(&bin_path, &bin).map_err(|e| failed(&e))?;
        write(out_path, json.as_bytes()).map_err(|e| failed(&e))?;
        report
    };
    out!(
        "{output}: {} animations on {} ({} {}), {} channels, {} keys",
        report.animations,
        skeleton.name,
        skeleton.bones.len(),
        if model.is_some() { "frames" } else { "bones" },
        report.channels,
        report.keys
    );
    if let Some(m) = &model {
        out!(
            "  {} meshes ({} primitives), {} skins, {} textures",
            report.meshes,
            report.primitives,
            report.skins,
            report.images
        );
        if report.scenes > 1 {
            out!(
                "  {} clumps, each a scene; the clips drive clump {} (the default scene), the others rest",
                report.scenes,
                m.clump
            );
        }
    }
    if report.nudged_times > 0 {
        out!(
            "  {} key times shared a time with the next key and were moved back by one ulp (glTF needs rising times)",
            report.nudged_times
        );
    }
    for name in &report.empty_clips {
        out!("  clip {name:?} drives no bone of the skeleton: left out");
    }
    Ok(())
}

/// The wanted clips of one file (all when none is named), on its skeleton.
fn gather(
    path: &str,
    game: Option<GtaGame>,
    wanted: &[&str],
    found: &mut [bool],
) -> Result<Gathered, Failure> {
    let take = |name: &str, found: &mut [bool]| -> bool {
        if wanted.is_empty() {
            return true;
        }
        // Named as the games match names: case-insensitively.
        let mut any = false;
        for (w, f) in wanted.iter().zip(found.iter_mut()) {
            if w.eq_ignore_ascii_case(name) {
                *f = true;
                any = true;
            }
        }
        any
    };
    match load(path)? {
        Loaded::Ifp(IfpRead {
            file: package,
            warnings,
            ..
        }) => {
            for w in &warnings {
                eprintln!("{path}: {w}");
            }
            let game = game.unwrap_or_else(|| GtaGame::for_ifp(&package));
            let skeleton = game.skeleton();
            let mut clips = Vec::new();
            for c in package.clips() {
                if !take(&c.name, found) {
                    continue;
                }
                let (clip, unapplied) = skeleton.clip_as_played(game, &c.to_clip());
                if !unapplied.is_empty() {
                    eprintln!(
                        "{path}: clip {:?}: the translation keys of {} are not local offsets and are not exported",
                        c.name,
                        unapplied.join(", ")
                    );
                }
                let targets = skeleton.bind(&clip).targets;
                clips.push((clip, targets));
            }
            Ok(Gathered {
                from: format!("{} (from {path})", skeleton.name),
                skeleton,
                gta: true,
                clips,
            })
        }
        Loaded::Dan(DanRead { file, warnings }) => {
            for w in &warnings {
                eprintln!("{path}: {w}");
            }
            let name = std::path::Path::new(path)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("dan")
                .to_owned();
            let clip = file.to_clip(&name, &DanClipOptions::default());
            let skeleton = Skeleton::first_frame(&name, &clip, &[]);
            let mut clips = Vec::new();
            if take(&name, found) {
                let targets = (0..clip.tracks().len()).map(Some).collect();
                clips.push((clip, targets));
            }
            Ok(Gathered {
                from: format!("the bones of {path}"),
                skeleton,
                gta: false,
                clips,
            })
        }
        Loaded::Anie(_) | Loaded::Dff(_) | Loaded::Txd(_) => Err(Failure(
            format!("{path}: export takes .ifp and .dan files"),
            1,
        )),
    }
}

/// A model read for `--model`, with its textures as PNG files.
struct ReadModel {
    model: Model,
    /// The clump the clips drive: `--clump N`, else the first that has bones.
    clump: usize,
    /// The model file's stem: the skeleton's name in the export.
    name: String,
    png: Vec<Option<Vec<u8>>>,
}

/// Reads `--model PATH`, its `--txd` dictionaries, then the `.txd` beside it (earlier ones win a
/// texture name), and encodes its textures as PNG.
fn model(path: &str, a: &Args) -> Result<ReadModel, Failure> {
    let failed = |p: &str, e: &dyn std::fmt::Display| Failure(format!("{p}: {e}"), 1);
    let dff = crate::load::dff(path)?;
    if dff.clumps.is_empty() {
        return Err(Failure(format!("{path}: the model has no clump"), 1));
    }
    let mut dictionaries: Vec<(String, bool)> = a
        .options
        .iter()
        .filter(|(n, _)| n == "--txd")
        .filter_map(|(_, v)| v.clone())
        .map(|p| (p, true))
        .collect();
    let beside = std::path::Path::new(path).with_extension("txd");
    dictionaries.push((beside.to_string_lossy().into_owned(), false));
    let mut textures: Vec<TextureNative> = Vec::new();
    for (txd, named) in dictionaries {
        let bytes = match std::fs::read(&txd) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => continue,
            Err(e) => return Err(failed(&txd, &e)),
        };
        let read = TxdFile::read(&bytes).map_err(|e| failed(&txd, &e))?;
        for w in &read.warnings {
            eprintln!("{txd}: {w}");
        }
        merge_textures(&mut textures, read.file.textures);
    }
    let game = rigplay::skeleton::GtaGame::for_dff(&dff);
    let model = Model::new(&dff, game, &textures);
    for w in &model.warnings {
        eprintln!("{path}: {w}");
    }
    for name in &model.missing_textures {
        eprintln!("{path}: texture {name:?} is in no texture dictionary: drawn untextured");
    }
    let png = model
        .textures
        .iter()
        .map(|t| {
            let image = image::RgbaImage::from_raw(t.width, t.height, t.levels.first()?.clone())?;
            let mut out = std::io::Cursor::new(Vec::new());
            image.write_to(&mut out, image::ImageFormat::Png).ok()?;
            Some(out.into_inner())
        })
        .collect();
    let name = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_owned();
    let clump = match a.value("--clump") {
        Some(v) => {
            let i: usize = v.parse().map_err(|_| {
                usage(format!(
                    "--clump takes a clump's index (0, 1, …), not {v:?}"
                ))
            })?;
            if i >= model.clumps.len() {
                return Err(Failure(
                    format!(
                        "{path}: --clump {i}: the model has {} clump{} (0 to {})",
                        model.clumps.len(),
                        if model.clumps.len() == 1 { "" } else { "s" },
                        model.clumps.len() - 1
                    ),
                    1,
                ));
            }
            if model.clumps[i].bones.is_empty() {
                let with: Vec<String> = (model.clumps.iter().enumerate())
                    .filter(|(_, c)| !c.bones.is_empty())
                    .map(|(k, c)| format!("clump {k} has {}", c.bones.len()))
                    .collect();
                return Err(Failure(
                    format!(
                        "{path}: --clump {i}: the clump has no bones for the clips to drive ({})",
                        if with.is_empty() {
                            "no clump of the model has any".to_owned()
                        } else {
                            with.join(", ")
                        }
                    ),
                    1,
                ));
            }
            i
        }
        // GTA III peds and SA's player keep their ped in a later clump of the file.
        None => model
            .clumps
            .iter()
            .position(|c| !c.bones.is_empty())
            .unwrap_or(0),
    };
    Ok(ReadModel {
        model,
        clump,
        name,
        png,
    })
}
