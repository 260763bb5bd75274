//! Exported glTF files through the Khronos glTF Validator (npm `gltf-validator`, run by
//! `tests/support/gltf_validate.js` under Node): no errors and no warnings, for every game's
//! skeleton, every root-motion mode, `.glb` and `.gltf`, a DAN clip, and the sample ped drawn
//! with its meshes, skin, materials and textures.
//!
//! The validator is found in `$RIGPLAY_GLTF_VALIDATOR` (a `node_modules` folder holding
//! `gltf-validator`; `.ci/run` installs it into `~/.cache/rigplay-npm`). Without it the test
//! says so and passes, unless `RIGPLAY_REQUIRE_VALIDATOR` is set (CI sets it).

use crate::bytes::{Bytes, anim_payload};
use rigplay::convert::gltf::{GltfClip, GltfExport, RootMotionExport};
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::{GtaGame, Skeleton};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A GTA III package: III binds by name (`docs/formats/ifp.md` §4.3), so its clip names III's
/// frames, one of them in another case, with a root translation.
pub fn iii_walk() -> Vec<u8> {
    let mut b = Bytes::new();
    b.anpk("ped", "walk_civi", 2, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Swaist", 2, &[]));
            b.section(b"KRT0", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
                b.f32s(&[0.0, 0.0, 0.1, 0.995, 0.0, 0.4, 0.0, 0.5]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "smid", 2, &[]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
                b.f32s(&[0.1, 0.0, 0.0, 0.995, 0.5]);
            });
        });
    });
    b.done()
}

/// The validator's `node_modules`, or `None` (with the reason printed) when it is not there.
pub(crate) fn validator() -> Option<PathBuf> {
    let dir = std::env::var_os("RIGPLAY_GLTF_VALIDATOR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/rigplay-npm/node_modules"))
        })?;
    let found = dir.join("gltf-validator").is_dir()
        && Command::new("node").arg("--version").output().is_ok();
    if !found {
        let message = format!(
            "the Khronos glTF Validator is not in {} (npm install --prefix ~/.cache/rigplay-npm gltf-validator)",
            dir.display()
        );
        assert!(
            std::env::var_os("RIGPLAY_REQUIRE_VALIDATOR").is_none(),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return None;
    }
    Some(dir)
}

/// `file` written as a `.gltf` named `stem` (its `.bin` beside it) passes the validator with no
/// error and no warning, where the validator is installed. (Used by the Bevy modules.)
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
pub(crate) fn assert_clean(file: &rigplay::convert::gltf::GltfFile, stem: &str) {
    let Some(modules) = validator() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("rigplay-{stem}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut json = file.json.clone();
    json["buffers"][0]["uri"] = serde_json::json!(format!("{stem}.bin"));
    let gltf = dir.join(format!("{stem}.gltf"));
    std::fs::write(&gltf, serde_json::to_vec(&json).unwrap()).unwrap();
    std::fs::write(dir.join(format!("{stem}.bin")), &file.bin).unwrap();
    let reports = validate(&modules, &[gltf]);
    let issues = &reports[0].1;
    assert_eq!(issues["numErrors"], 0, "{stem}: {issues:#}");
    assert_eq!(issues["numWarnings"], 0, "{stem}: {issues:#}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The validator's issue counts and messages for each file.
pub(crate) fn validate(modules: &Path, files: &[PathBuf]) -> Vec<(String, serde_json::Value)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/gltf_validate.js");
    let output = Command::new("node")
        .arg(script)
        .args(files)
        .env("NODE_PATH", modules)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("one report per line");
            (
                v["file"].as_str().unwrap_or("").to_owned(),
                v["issues"].clone(),
            )
        })
        .collect()
}

#[test]
fn exports_of_every_game_and_of_a_dan_clip_pass_the_khronos_validator() {
    let Some(modules) = validator() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("rigplay-gltf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let packages = [
        (GtaGame::Sa, crate::assets::read("anims/sa_ped.ifp")),
        (GtaGame::Vc, crate::assets::read("anims/vc_ped.ifp")),
        (GtaGame::Vc, crate::gltf_export::vc_walk()),
        (GtaGame::Iii, iii_walk()),
        (
            GtaGame::Sa,
            crate::ifp_fixtures::anpk_sa_cutscene_scene_space(40),
        ),
    ];
    for (k, (game, bytes)) in packages.iter().enumerate() {
        let package = IfpFile::read(bytes).unwrap().file;
        let skeleton = game.skeleton();
        let clips = crate::gltf_export::played_clips(&package, *game, &skeleton);
        for (m, mode) in [
            RootMotionExport::Baked,
            RootMotionExport::InPlace,
            RootMotionExport::Extract,
        ]
        .into_iter()
        .enumerate()
        {
            let export = GltfExport::gta(
                &skeleton,
                clips
                    .iter()
                    .map(|(clip, targets)| GltfClip { clip, targets })
                    .collect(),
                mode,
            );
            assert!(export.write(None).unwrap().report.animations > 0);
            if m == 1 {
                let path = dir.join(format!("p{k}_{m}.gltf"));
                let bin = format!("p{k}_{m}.bin");
                let (json, data, _) = export.to_gltf(&bin).unwrap();
                std::fs::write(&path, json).unwrap();
                std::fs::write(dir.join(&bin), data).unwrap();
                files.push(path);
            } else {
                let path = dir.join(format!("p{k}_{m}.glb"));
                std::fs::write(&path, export.to_glb().unwrap().0).unwrap();
                files.push(path);
            }
        }
    }
    let dan = rigplay::formats::dan::DanFile::read(&crate::assets::read("anims/lamp.dan")).unwrap();
    let clip = dan
        .file
        .to_clip("lamp", &rigplay::formats::dan::DanClipOptions::default());
    let skeleton = Skeleton::first_frame("lamp", &clip, &[]);
    let targets: Vec<Option<usize>> = (0..clip.tracks().len()).map(Some).collect();
    let export = GltfExport::dan(
        &skeleton,
        vec![GltfClip {
            clip: &clip,
            targets: &targets,
        }],
        RootMotionExport::Baked,
    );
    let path = dir.join("lamp.glb");
    std::fs::write(&path, export.to_glb().unwrap().0).unwrap();
    files.push(path);
    // The sample ped drawn: meshes, skin, materials, textures, as .glb and as .gltf.
    for (m, mode) in [RootMotionExport::Baked, RootMotionExport::Extract]
        .into_iter()
        .enumerate()
    {
        let file = crate::gltf_export::sample_ped_export(mode);
        assert!(file.report.meshes > 0 && file.report.images > 0);
        let path = dir.join(format!("ped_{m}.gltf"));
        let bin = format!("ped_{m}.bin");
        let mut json = file.json;
        json["buffers"][0]["uri"] = serde_json::json!(bin);
        std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
        std::fs::write(dir.join(&bin), &file.bin).unwrap();
        files.push(path);
    }
    let reports = validate(&modules, &files);
    assert_eq!(reports.len(), files.len());
    for (file, issues) in &reports {
        let messages: Vec<String> = issues["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["severity"].as_u64().unwrap_or(9) <= 1)
            .map(|m| format!("{} {} {}", m["code"], m["pointer"], m["message"]))
            .collect();
        assert_eq!(issues["numErrors"], 0, "{file}: {messages:#?}");
        assert_eq!(issues["numWarnings"], 0, "{file}: {messages:#?}");
        // Only information is left: a skin without a mesh, unused texture coordinates.
        eprintln!(
            "{file}: {} errors, {} warnings, {} infos",
            issues["numErrors"], issues["numWarnings"], issues["numInfos"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
