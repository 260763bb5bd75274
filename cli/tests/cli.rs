//! The `rigplay` command-line tool, run as a user would.

/// The `rigplay` package's byte assembler for hand-made fixtures.
#[allow(dead_code)]
#[path = "../../tests/bytes.rs"]
mod bytes;

/// Two of the `rigplay` package's hand-assembled IFP files (the others are for its own tests).
#[allow(dead_code)]
#[path = "../../tests/ifp_fixtures.rs"]
mod ifp_fixtures;

use crate::ifp_fixtures::{anp3_with_types_1_to_4, anpk_with_44_byte_anim};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

#[path = "../../tests/scratch.rs"]
mod scratch;
use scratch::Scratch;

fn dir(test: &str) -> Scratch {
    Scratch::new(&format!("rigplay-cli-{test}"))
}

fn rigplay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigplay"))
        .args(args)
        .output()
        .expect("runs")
}

/// Runs `rigplay` with `args`, which must succeed; its standard output.
fn succeeds(args: &[&str]) -> String {
    let out = rigplay(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn inspect_lists_clips_bones_and_warnings() {
    let d = dir("inspect");
    let file = d.join("ped.ifp");
    let mut bytes = anp3_with_types_1_to_4(None);
    bytes.extend_from_slice(b"stale");
    std::fs::write(&file, &bytes).unwrap();
    let v = stdout_json(&rigplay(&["inspect", file.to_str().unwrap(), "--json"]));
    assert_eq!(v["format"], "ANP3");
    assert_eq!(v["name"], "ped");
    let clip = &v["clips"][0];
    assert_eq!(clip["name"], "abseil");
    assert_eq!(clip["duration"], 1.0);
    assert_eq!(clip["keys"], 5);
    assert_eq!(clip["bones"][1]["name"], " Pelvis");
    assert_eq!(
        clip["bones"][1]["channels"],
        serde_json::json!(["rotation", "translation"])
    );
    assert_eq!(clip["bones"][2]["id"], Value::Null);
    assert_eq!(clip["bones"][2]["compressed"], true);
    assert_eq!(v["warnings"][0]["offset"], bytes.len() - 5);
    // The text form names the same things.
    let out = rigplay(&["inspect", file.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ANP3 package \"ped\", 1 clip")
            && text.contains("\"L Fingers\"")
            && text.contains("5 bytes after"),
        "{text}"
    );
}

#[test]
fn validate_reports_each_error_with_its_offset() {
    let d = dir("validate");
    let good = d.join("good.ifp");
    let bad = d.join("bad.ifp");
    std::fs::write(&good, anpk_with_44_byte_anim()).unwrap();
    let mut cut = anp3_with_types_1_to_4(None);
    cut.truncate(100);
    std::fs::write(&bad, &cut).unwrap();
    let out = rigplay(&["validate", good.to_str().unwrap()]);
    assert!(out.status.success());
    let out = rigplay(&["validate", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    // The sequence headers start at 8 + 28 + 36 = 72; the 4 declared need 4 × 36 bytes, and
    // the cut at 100 leaves 28.
    assert!(text.contains("ok    "), "{text}");
    assert!(
        text.contains("bad.ifp: sequence count 4 cannot fit: each needs at least 36 bytes and only 28 remain at byte 72, clip #0 \"abseil\""),
        "{text}"
    );
    assert_eq!(rigplay(&["validate"]).status.code(), Some(2));
}

#[test]
fn convert_between_versions() {
    let d = dir("convert");
    let anpk = d.join("a.ifp");
    let anp3 = d.join("b.ifp");
    let back = d.join("c.ifp");
    std::fs::write(&anpk, anpk_with_44_byte_anim()).unwrap();
    let out = rigplay(&[
        "convert",
        anpk.to_str().unwrap(),
        anp3.to_str().unwrap(),
        "--to",
        "anp3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(&std::fs::read(&anp3).unwrap()[..4], b"ANP3");
    let v = stdout_json(&rigplay(&["inspect", anp3.to_str().unwrap(), "--json"]));
    assert_eq!(v["clips"][0]["flags"], 1, "values fit int16: compressed");
    let out = rigplay(&[
        "convert",
        anp3.to_str().unwrap(),
        back.to_str().unwrap(),
        "--to",
        "ANPK",
    ]);
    assert!(out.status.success());
    assert_eq!(&std::fs::read(&back).unwrap()[..4], b"ANPK");
    assert_eq!(
        rigplay(&[
            "convert",
            anpk.to_str().unwrap(),
            back.to_str().unwrap(),
            "--to",
            "x"
        ])
        .status
        .code(),
        Some(2)
    );
}

fn assert_close(v: &Value, expected: &[f64]) {
    let got: Vec<f64> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), expected.len(), "{v}");
    for (g, e) in got.iter().zip(expected) {
        assert!((g - e).abs() < 1e-6, "{got:?} vs {expected:?}");
    }
}

#[test]
fn pose_samples_every_bone_in_file_and_bevy_space() {
    let d = dir("pose");
    let file = d.join("ped.ifp");
    std::fs::write(&file, anpk_with_44_byte_anim()).unwrap();
    let f = file.to_str().unwrap();
    let v = stdout_json(&rigplay(&[
        "pose",
        f,
        "--clip",
        "walk_civi",
        "--at",
        "0.5",
        "--json",
    ]));
    assert_eq!(v["clip"], "walk_civi");
    assert_eq!(v["time"], 0.5);
    let pelvis = &v["bones"][0];
    assert_eq!(pelvis["name"], " Pelvis");
    assert_eq!(pelvis["id"], 1);
    // Keys q0 = (-0.5, 0.5, -0.5, 0.5) (conjugated from the file) and q1 = identity: dot 0.5, so
    // θ = 60° and halfway slerp = (q0 + q1) / (2 cos 30°) = (-0.5, 0.5, -0.5, 1.5) / 1.7320508.
    assert_close(
        &pelvis["rotation"],
        &[-0.28867513, 0.28867513, -0.28867513, 0.8660254],
    );
    // Translation halfway from (0, 0, 1) to (0, 2, 1).
    assert_close(&pelvis["translation"], &[0.0, 1.0, 1.0]);
    assert_eq!(pelvis["scale"], Value::Null);
    // One key (-0.1, -0.2, -0.3, 0.9), normalised by sqrt(0.95) = 0.97467943.
    let thigh = &v["bones"][1];
    assert_close(
        &thigh["rotation"],
        &[-0.10259784, -0.20519567, -0.30779351, 0.92338052],
    );
    assert_eq!(thigh["translation"], Value::Null);

    // Bevy space: (x, y, z, w) -> (x, z, -y, w); (x, y, z) -> (x, z, -y).
    let v = stdout_json(&rigplay(&[
        "pose",
        f,
        "--clip",
        "walk_civi",
        "--at",
        "0.5",
        "--space",
        "bevy",
        "--json",
    ]));
    assert_close(
        &v["bones"][0]["rotation"],
        &[-0.28867513, -0.28867513, -0.28867513, 0.8660254],
    );
    assert_close(&v["bones"][0]["translation"], &[0.0, 1.0, -1.0]);

    // Past the end: clamped by default, wrapped with --loop (1.5 s -> 0.5 s).
    let v = stdout_json(&rigplay(&[
        "pose",
        f,
        "--clip",
        "walk_civi",
        "--at",
        "1.5",
        "--json",
    ]));
    assert_close(&v["bones"][0]["translation"], &[0.0, 2.0, 1.0]);
    let v = stdout_json(&rigplay(&[
        "pose",
        f,
        "--clip",
        "walk_civi",
        "--at",
        "1.5",
        "--loop",
        "--json",
    ]));
    assert_close(&v["bones"][0]["translation"], &[0.0, 1.0, 1.0]);

    // Names as the games match them: any case finds the clip.
    let v = stdout_json(&rigplay(&[
        "pose",
        f,
        "--clip",
        "WALK_Civi",
        "--at",
        "0.5",
        "--json",
    ]));
    assert_close(&v["bones"][0]["translation"], &[0.0, 1.0, 1.0]);

    let out = rigplay(&["pose", f, "--clip", "nope", "--at", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no clip is named \"nope\"") && err.contains("walk_civi"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// DAN and key reduction.

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/anims")
        .join(name)
}

#[test]
fn dan_inspect_validate_and_pose_in_both_spaces() {
    let lamp = sample("lamp.dan");
    let v = stdout_json(&rigplay(&["inspect", lamp.to_str().unwrap(), "--json"]));
    assert_eq!(v["format"], "DAN");
    assert_eq!(v["version"], 10);
    assert_eq!(v["comment"], "rigplay sample: desk lamp");
    assert_eq!(v["end_ms"], 1947.0);
    assert_eq!(v["bones"].as_array().unwrap().len(), 5);
    // The base never moves: the exporter's rule leaves its first and last key.
    assert_eq!(
        v["bones"][0]["rotation"]["times_ms"],
        serde_json::json!([0, 1947])
    );
    assert_eq!(v["bones"][2]["position"]["keys"], 60);
    let text = String::from_utf8(rigplay(&["inspect", lamp.to_str().unwrap()]).stdout).unwrap();
    assert!(
        text.contains("DAN version 10") && text.contains("bone #4"),
        "{text}"
    );

    let d = dir("dan");
    let broken = d.join("broken.dan");
    std::fs::write(&broken, &std::fs::read(&lamp).unwrap()[..500]).unwrap();
    let out = rigplay(&["validate", lamp.to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ok    ") && text.contains("at byte"),
        "{text}"
    );

    // pose: Bevy space is the clip the loader makes; file space is the stored axes.
    let file = rigplay::formats::dan::DanFile::read(&std::fs::read(&lamp).unwrap())
        .unwrap()
        .file;
    let clip = file.to_clip("lamp", &Default::default());
    let bevy = stdout_json(&rigplay(&[
        "pose",
        lamp.to_str().unwrap(),
        "--at",
        "0.5",
        "--space",
        "bevy",
        "--json",
    ]));
    let raw = stdout_json(&rigplay(&[
        "pose",
        lamp.to_str().unwrap(),
        "--at",
        "0.5",
        "--json",
    ]));
    for b in 0..5 {
        let s = clip.sample_track(b, 0.5);
        let p = s.translation.unwrap();
        assert_close(
            &bevy["bones"][b]["translation"],
            &[p.x as f64, p.y as f64, p.z as f64],
        );
        // File axes: (x, y, −z).
        assert_close(
            &raw["bones"][b]["translation"],
            &[p.x as f64, p.y as f64, -p.z as f64],
        );
        let q = s.rotation.unwrap();
        assert_close(
            &raw["bones"][b]["rotation"],
            &[q.x as f64, q.y as f64, -q.z as f64, q.w as f64],
        );
    }
    assert_eq!(bevy["bones"][3]["name"], "bone_3");
}

/// The largest distance, over the original keys' times, between shell points (±r on each axis)
/// of each bone moved by the original and by the reduced clip: model space, no hierarchy.
fn flat_shell_error(a: &rigplay::animation::Clip, b: &rigplay::animation::Clip, r: f32) -> f32 {
    use glam::{Mat4, Quat, Vec3};
    let mut times: Vec<f32> = Vec::new();
    for t in a.tracks() {
        for c in [t.rotation, t.translation, t.scale].into_iter().flatten() {
            times.extend_from_slice(a.times(c));
        }
    }
    let mut worst = 0.0f32;
    for (i, _) in a.tracks().iter().enumerate() {
        for &t in &times {
            let m = |c: &rigplay::animation::Clip| {
                let s = c.sample_track(i, t);
                Mat4::from_scale_rotation_translation(
                    s.scale.unwrap_or(Vec3::ONE),
                    s.rotation.unwrap_or(Quat::IDENTITY),
                    s.translation.unwrap_or(Vec3::ZERO),
                )
            };
            let (ma, mb) = (m(a), m(b));
            for p in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z] {
                let d = ma.transform_point3(p * r) - mb.transform_point3(p * r);
                worst = worst.max(d.length());
            }
        }
    }
    worst
}

#[test]
fn convert_never_writes_over_its_input() {
    let d = dir("convert-in-place");
    let input = d.join("ped.ifp");
    let bytes = anpk_with_44_byte_anim();
    std::fs::write(&input, &bytes).unwrap();
    // The same file, by the same path and by another one.
    let other = d.join("../").join(d.file_name().unwrap()).join("ped.ifp");
    for output in [&input, &other] {
        let out = rigplay(&[
            "convert",
            input.to_str().unwrap(),
            output.to_str().unwrap(),
            "--to",
            "anp3",
        ]);
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("is the input"), "{text}");
        assert_eq!(
            std::fs::read(&input).unwrap(),
            bytes,
            "the input is untouched"
        );
    }
    // A write that cannot finish (the output is a folder) leaves no temporary file behind.
    let folder = d.join("taken.ifp");
    std::fs::create_dir_all(folder.join("x")).unwrap();
    let out = rigplay(&[
        "convert",
        input.to_str().unwrap(),
        folder.to_str().unwrap(),
        "--to",
        "anp3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn convert_reduces_dan_keys_within_the_tolerance_or_losslessly() {
    use rigplay::formats::dan::DanFile;
    let lamp = sample("lamp.dan");
    let d = dir("reduce-dan");
    let read = |p: &PathBuf| DanFile::read(&std::fs::read(p).unwrap()).unwrap();
    let original = read(&lamp).file;
    let clip = original.to_clip("", &Default::default());
    for tol in ["0.05", "0.5"] {
        let out_path = d.join(format!("lamp_{tol}.dan"));
        let out = rigplay(&[
            "convert",
            lamp.to_str().unwrap(),
            out_path.to_str().unwrap(),
            "--reduce",
            tol,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("keys (") && text.contains("p99"), "{text}");
        let reduced = read(&out_path);
        assert!(reduced.warnings.is_empty());
        assert!(reduced.file.key_count() < original.key_count() * 3 / 4);
        let err = flat_shell_error(&clip, &reduced.file.to_clip("", &Default::default()), 3.0);
        let tol: f32 = tol.parse().unwrap();
        assert!(err <= tol * 1.001, "error {err} over tolerance {tol}");
    }
    // --runs is lossless: the sample already follows the exporter's rule, so nothing changes.
    let runs = d.join("runs.dan");
    let out = rigplay(&[
        "convert",
        lamp.to_str().unwrap(),
        runs.to_str().unwrap(),
        "--runs",
    ]);
    assert!(out.status.success());
    assert_eq!(read(&runs).file.key_count(), original.key_count());
    assert_eq!(
        rigplay(&[
            "convert",
            lamp.to_str().unwrap(),
            runs.to_str().unwrap(),
            "--to",
            "anp3"
        ])
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn convert_reduces_ifp_keys_and_keeps_the_version() {
    use rigplay::formats::ifp::IfpFile;
    let sa = sample("sa_ped.ifp");
    let d = dir("reduce-ifp");
    let out_path = d.join("sa.ifp");
    let out = rigplay(&[
        "convert",
        sa.to_str().unwrap(),
        out_path.to_str().unwrap(),
        "--reduce",
        "0.002",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = IfpFile::read(&std::fs::read(&sa).unwrap()).unwrap().file;
    let after = IfpFile::read(&std::fs::read(&out_path).unwrap()).unwrap();
    assert!(after.warnings.is_empty());
    assert_eq!(after.file.version, before.version);
    let keys = |p: &IfpFile| -> usize {
        p.clips()
            .flat_map(|c| c.sequences.iter())
            .map(|s| s.keys.len())
            .sum()
    };
    assert!(
        keys(&after.file) < keys(&before),
        "{} keys",
        keys(&after.file)
    );
    // Every sequence keeps its first and last key.
    for (a, b) in before.clips().zip(after.file.clips()) {
        for (sa, sb) in a.sequences.iter().zip(&b.sequences) {
            assert_eq!(
                sa.keys.first().map(|k| k.time),
                sb.keys.first().map(|k| k.time)
            );
            assert_eq!(
                sa.keys.last().map(|k| k.time),
                sb.keys.last().map(|k| k.time)
            );
        }
    }
}

/// The command line writes what `rigplay::convert::convert_ifp` writes for the options its
/// arguments name: the preview's "Save as…" calls that function, and its test
/// (`examples/preview/tool/convert.rs`) checks that its settings give these options.
#[test]
fn convert_writes_what_the_library_writes() {
    use rigplay::animation::reduce::{KeyReduction, ReduceOptions};
    use rigplay::convert::{IfpConvertOptions, convert_ifp};
    use rigplay::formats::ifp::{IfpFile, IfpVersion};
    use rigplay::skeleton::Skeleton;
    let bounded = KeyReduction::Bounded(ReduceOptions {
        tolerance: 0.002,
        shell_radius: 0.03,
    });
    let cases: [(&[&str], IfpVersion, KeyReduction); 6] = [
        (&["--to", "anpk"], IfpVersion::Anpk, KeyReduction::None),
        (
            &["--to", "anpk", "--runs"],
            IfpVersion::Anpk,
            KeyReduction::Runs,
        ),
        (
            &["--to", "anpk", "--reduce", "0.002"],
            IfpVersion::Anpk,
            bounded,
        ),
        (&["--to", "anp3"], IfpVersion::Anp3, KeyReduction::None),
        (
            &["--to", "anp3", "--runs"],
            IfpVersion::Anp3,
            KeyReduction::Runs,
        ),
        (
            &["--to", "anp3", "--reduce", "0.002"],
            IfpVersion::Anp3,
            bounded,
        ),
    ];
    let d = dir("convert-library");
    for name in ["sa_ped.ifp", "vc_ped.ifp"] {
        let input = sample(name);
        let package = IfpFile::read(&std::fs::read(&input).unwrap()).unwrap().file;
        let skeleton = Skeleton::for_ifp(&package);
        for (i, (args, version, reduction)) in cases.iter().enumerate() {
            let out_path = d.join(format!("{i}_{name}"));
            let mut all = vec![
                "convert",
                input.to_str().unwrap(),
                out_path.to_str().unwrap(),
            ];
            all.extend_from_slice(args);
            let out = rigplay(&all);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let options = IfpConvertOptions {
                version: *version,
                reduction: *reduction,
                measure: None,
            };
            let theirs = convert_ifp(&package, &skeleton, &options).bytes.unwrap();
            let ours = std::fs::read(&out_path).unwrap();
            assert!(ours == theirs, "{name} {args:?}: the files differ");
        }
    }
}

fn anie_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/anie")
        .join(name)
}

#[test]
fn anie_inspect_shows_the_tree_keys_and_resources() {
    let t8 = anie_fixture("t8.anie");
    let v = stdout_json(&rigplay(&["inspect", t8.to_str().unwrap(), "--json"]));
    assert_eq!(v["format"], "ANIE");
    assert_eq!(v["version"], "0.8");
    assert_eq!(v["canvas"], serde_json::json!({"width": 64, "height": 48}));
    assert_eq!(
        (v["max_frame"].clone(), v["loop"].clone()),
        (23.into(), true.into())
    );
    assert_eq!(v["resources"][0]["nodes"][1]["name"], "layer1");
    assert_eq!(v["resources"][0]["nodes"][1]["width"], 4);
    let layer = &v["objects"][1];
    assert_eq!(
        (layer["name"].clone(), layer["kind"].clone()),
        ("layer1".into(), "layer".into())
    );
    // Move: the default key, then frames 0, 12, 23; the first is Cubic InOut, Catmull-Rom.
    let moves = layer["keys"]["Move"].as_array().unwrap();
    assert_eq!(moves.len(), 4);
    assert_eq!(moves[0]["default"], true);
    assert_eq!(moves[1]["frame"], 0);
    assert_eq!(moves[1]["value"]["pos"], serde_json::json!([10.0, 10.0]));
    assert_eq!(moves[1]["value"]["spline"], "CatmullRom");
    assert_eq!(moves[1]["easing"]["type"], "Cubic");
    assert_eq!(layer["keys"]["Image"][0]["value"]["blend"], "norm");
    assert_eq!(v["warnings"], serde_json::json!([]));
    // The text form: header, resource tree, object tree with keys; Pose keys name their
    // Bone key's children.
    let out = rigplay(&["inspect", t8.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("AnimeEffects project 0.8, canvas 64×48, frames 0..=23 at 24 fps, loop on")
            && text.contains("#1 layer \"layer1\"")
            && text.contains("@12      pos (50, 10) Catmull-Rom")
            && text.contains("[Cubic InOut]"),
        "{text}"
    );
    let bones = anie_fixture("bones.anie");
    let text = String::from_utf8(rigplay(&["inspect", bones.to_str().unwrap()]).stdout).unwrap();
    assert!(text.contains("→ Pose@0, Pose@10, Pose@20"), "{text}");
}

#[test]
fn anie_validate_knows_projects_by_magic_or_extension() {
    let d = dir("anie-validate");
    // The magic is enough, whatever the extension.
    let renamed = d.join("t8.bin");
    std::fs::copy(anie_fixture("t8.anie"), &renamed).unwrap();
    let out = rigplay(&["validate", renamed.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A cut project is an error with its offset; the extension says what it was meant to be.
    let cut = d.join("cut.anie");
    let bytes = std::fs::read(anie_fixture("t8.anie")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 40]).unwrap();
    let out = rigplay(&["validate", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("error ") && text.contains("at byte"),
        "{text}"
    );
    // convert and pose are for .ifp and .dan.
    let out = rigplay(&["pose", renamed.to_str().unwrap(), "--at", "0"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn anie_render_writes_a_frame_or_a_sequence() {
    let d = dir("anie-render");
    let t8 = anie_fixture("t8.anie");
    let t8 = t8.to_str().unwrap();
    // The framebuffer of frame 3 equals AnimeEffects' own within one step.
    let raw = d.join("raw.png");
    let out = rigplay(&[
        "render",
        t8,
        "--frame",
        "3",
        "-o",
        raw.to_str().unwrap(),
        "--raw",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = image::open(&raw).unwrap().to_rgba8();
    let theirs = image::open(anie_fixture("t8_f3.raw.png"))
        .unwrap()
        .to_rgba8();
    let worst = ours
        .as_raw()
        .iter()
        .zip(theirs.as_raw())
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(worst <= 1, "{worst}");
    // Without --raw: the PNG AnimeEffects saves, un-premultiplied: pixel (11, 8) of the
    // framebuffer (≈100, 0, 84, 184) becomes (≈139, 0, ≈116, 184).
    let png = d.join("f3.png");
    assert!(
        rigplay(&["render", t8, "--frame", "3", "-o", png.to_str().unwrap()])
            .status
            .success()
    );
    let p = *image::open(&png).unwrap().to_rgba8().get_pixel(11, 8);
    assert!(
        p[0].abs_diff(139) <= 2 && p[2].abs_diff(116) <= 2 && p[3] == 184,
        "{p:?}"
    );
    // A sequence, both ends included, at twice the size, with a progress bar on stderr.
    let seq = d.join("seq");
    let out = rigplay(&[
        "render",
        t8,
        "--frames",
        "0..2",
        "-o",
        seq.to_str().unwrap(),
        "--scale",
        "2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("3/3 frames"));
    for f in 0..3 {
        let img = image::open(seq.join(format!("t8_{f:04}.png"))).unwrap();
        assert_eq!((img.width(), img.height()), (128, 96));
    }
    // Fractional frames render; bad arguments are usage errors.
    let half = d.join("half.png");
    assert!(
        rigplay(&["render", t8, "--frame", "3.5", "-o", half.to_str().unwrap()])
            .status
            .success()
    );
    for bad in [
        &["render", t8, "-o", "x.png"][..],
        &["render", t8, "--frame", "1", "--frames", "0..2", "-o", "x"],
        &["render", t8, "--frames", "5..2", "-o", "x"],
        &["render", t8, "--frame", "1", "-o", "x.png", "--scale", "0"],
    ] {
        assert_eq!(rigplay(bad).status.code(), Some(2), "{bad:?}");
    }
}

/// RenderWare stamp of SA (3.6.0.3).
const RW_SA: u32 = 0x1803_FFFF;

/// A texture dictionary assembled field by field: "skin", 2×1 8888 (memory B, G, R, A: pixels
/// (0x30, 0x20, 0x10, 0x40) and (0, 0, 255, 128) in RGBA), and "broken", a DXT9 FourCC no
/// decoder knows.
fn txd_file() -> Vec<u8> {
    let mut b = bytes::Bytes::new();
    // The last header byte: D3D9's flags, 8 = compressed (the format word is a FourCC).
    let native = |b: &mut bytes::Bytes, name: &str, format: u32, flags: u8, level: &[u8]| {
        b.chunk(0x15, RW_SA, |b| {
            b.chunk(0x01, RW_SA, |b| {
                b.u32(9).u32(0x1102);
                b.fixed(name, 32, &[]).fixed("", 32, &[]);
                b.u32(0x500).u32(format).u16(2).u16(1);
                b.u8(32).u8(1).u8(4).u8(flags);
                b.u32(level.len() as u32).raw(level);
            });
            b.chunk(0x03, RW_SA, |_| {});
        });
    };
    b.chunk(0x16, RW_SA, |b| {
        b.chunk(0x01, RW_SA, |b| {
            b.u16(2).u16(2);
        });
        native(
            b,
            "skin",
            21,
            0,
            &[0x10, 0x20, 0x30, 0x40, 0xFF, 0, 0, 0x80],
        );
        native(b, "broken", u32::from_le_bytes(*b"DXT9"), 8, &[0; 8]);
        b.chunk(0x03, RW_SA, |_| {});
    });
    b.done()
}

/// A model assembled field by field: a Clump with one frame named "root" (bone id 0, no
/// parent), no geometry and no atomic.
fn dff_file() -> Vec<u8> {
    let mut b = bytes::Bytes::new();
    b.chunk(0x10, RW_SA, |b| {
        b.chunk(0x01, RW_SA, |b| {
            b.i32(0).i32(0).i32(0);
        });
        b.chunk(0x0E, RW_SA, |b| {
            b.chunk(0x01, RW_SA, |b| {
                b.u32(1);
                // rotation (right, up, at), position, parent −1, flags
                b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
                b.i32(-1).u32(0);
            });
            b.chunk(0x03, RW_SA, |b| {
                b.chunk(0x0253_F2FE, RW_SA, |b| {
                    b.raw(b"root");
                });
            });
        });
        b.chunk(0x1A, RW_SA, |b| {
            b.chunk(0x01, RW_SA, |b| {
                b.i32(0);
            });
        });
        b.chunk(0x03, RW_SA, |_| {});
    });
    b.done()
}

#[test]
fn inspect_and_validate_read_renderware_models_and_texture_dictionaries() {
    let d = dir("rw");
    let (dff, txd) = (d.join("ped.dff"), d.join("ped.txd"));
    std::fs::write(&dff, dff_file()).unwrap();
    std::fs::write(&txd, txd_file()).unwrap();
    let out = stdout_json(&rigplay(&["inspect", dff.to_str().unwrap(), "--json"]));
    assert_eq!(out["format"], "DFF");
    assert_eq!(out["clumps"][0]["version"], "3.6.0.3");
    assert_eq!(out["clumps"][0]["frames"][0]["name"], "root");
    assert_eq!(out["clumps"][0]["frames"].as_array().unwrap().len(), 1);
    let out = stdout_json(&rigplay(&["inspect", txd.to_str().unwrap(), "--json"]));
    assert_eq!(out["format"], "TXD");
    assert_eq!(out["textures"][0]["name"], "skin");
    assert_eq!(out["textures"][0]["width"], 2);
    assert!(
        out["textures"][1]["pixel_format"]
            .as_str()
            .unwrap()
            .starts_with("unsupported"),
        "{}",
        out["textures"][1]
    );
    let text = rigplay(&["inspect", txd.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("2 texture(s)") && text.contains("\"skin\""),
        "{text}"
    );
    let v = rigplay(&["validate", dff.to_str().unwrap(), txd.to_str().unwrap()]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // A cut model: a typed error with its offset and chunk path, exit 1.
    let cut = d.join("cut.dff");
    std::fs::write(&cut, &dff_file()[..40]).unwrap();
    let v = rigplay(&["validate", cut.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(1));
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(text.contains("error") && text.contains("Clump"), "{text}");
}

#[test]
fn inspect_compares_a_ped_model_s_bind_pose_with_the_built_in_skeleton() {
    // The bundled ped: its frames are the built-in SA table's offsets and rotations, its
    // `Normal` bound at the file's 120° turn about (1, 1, 1) rather than the clips' ≈90° about Z.
    let ped = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/characters/ped.dff");
    let v = stdout_json(&rigplay(&["inspect", ped.to_str().unwrap(), "--json"]));
    let d = &v["clumps"][0]["built_in_difference"];
    assert_eq!(d["skeleton"], "Sa");
    assert_eq!(d["matched"], 32);
    assert!(
        d["max_translation"]["metres"].as_f64().unwrap() < 1e-5,
        "{d}"
    );
    assert!(d["max_rotation"]["degrees"].as_f64().unwrap() < 1e-3, "{d}");
    let root = d["root_rotation_degrees"].as_f64().unwrap();
    assert!(root > 90.0, "{root}");
    assert_eq!(d["missing_in_model"].as_array().unwrap().len(), 0);
    let text = rigplay(&["inspect", ped.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("bind pose vs the built-in Sa skeleton: 32 bones matched"),
        "{text}"
    );
}

#[test]
fn txd_writes_every_texture_as_a_png_and_names_the_ones_it_cannot_decode() {
    let d = dir("txd");
    let txd = d.join("ped.txd");
    std::fs::write(&txd, txd_file()).unwrap();
    let out_dir = d.join("png");
    let out = rigplay(&[
        "txd",
        txd.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    // The DXT9 texture fails: exit 1, the good one still written.
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("error \"broken\""), "{text}");
    let png = image::open(out_dir.join("skin.png")).unwrap().to_rgba8();
    assert_eq!(png.dimensions(), (2, 1));
    assert_eq!(png.get_pixel(0, 0).0, [0x30, 0x20, 0x10, 0x40]);
    assert_eq!(png.get_pixel(1, 0).0, [0, 0, 255, 128]);
}

/// `--model`: the sample ped's meshes, skin, materials and textures (its `.txd` found beside
/// it) under the clips; the document's counts as the model has them, the texture a PNG.
#[test]
fn export_with_a_model_draws_the_ped_and_refuses_what_it_cannot_do() {
    let d = dir("export-model");
    let ifp = sample("sa_ped.ifp");
    let ifp = ifp.to_str().unwrap();
    let characters = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/characters");
    let dff = characters.join("ped.dff");
    let dff = dff.to_str().unwrap();
    let glb = d.join("ped.glb");
    let text = succeeds(&["export", ifp, "--model", dff, "-o", glb.to_str().unwrap()]);
    assert!(text.contains("3 animations on ped ("), "{text}");
    assert!(text.contains("1 skins"), "{text}");
    let bytes = std::fs::read(&glb).unwrap();
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let count = |key: &str| doc[key].as_array().map_or(0, |a| a.len());
    assert_eq!(count("skins"), 1);
    assert_eq!(count("animations"), 3);
    assert!(count("meshes") >= 1 && count("materials") >= 1, "{text}");
    assert!(count("images") >= 1, "the ped's texture: {text}");
    assert_eq!(doc["images"][0]["mimeType"], "image/png");
    // The same as a .gltf, its texture dictionary named (and found beside it again: one copy).
    let gltf = d.join("ped.gltf");
    let txd = characters.join("ped.txd");
    succeeds(&[
        "export",
        ifp,
        "--model",
        dff,
        "--txd",
        txd.to_str().unwrap(),
        "-o",
        gltf.to_str().unwrap(),
        "--clip",
        "walk",
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&gltf).unwrap()).unwrap();
    assert_eq!(doc["images"].as_array().unwrap().len(), count("images"));
    assert!(d.join("ped.bin").is_file());
    // A model that is not a DFF, a dictionary that is not there: status 1, named. A model
    // under a .dan's own bones: usage, status 2.
    let out = rigplay(&["export", ifp, "--model", ifp, "-o", glb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let out = rigplay(&[
        "export",
        ifp,
        "--model",
        dff,
        "--txd",
        "missing.txd",
        "-o",
        glb.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.txd"));
    let dan = sample("lamp.dan");
    let out = rigplay(&[
        "export",
        dan.to_str().unwrap(),
        "--model",
        dff,
        "-o",
        glb.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn export_writes_glb_and_gltf_with_named_clips_and_refuses_what_it_cannot_do() {
    let d = dir("export");
    let ifp = sample("sa_ped.ifp");
    let ifp = ifp.to_str().unwrap();
    // Every clip, as one .glb.
    let glb = d.join("ped.glb");
    let out_text = succeeds(&["export", ifp, "-o", glb.to_str().unwrap()]);
    let text = out_text;
    assert!(
        text.contains("3 animations on GTA SA ped (32 bones)"),
        "{text}"
    );
    let bytes = std::fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    // Two clips named in another case, as a .gltf with its .bin beside it, root motion
    // extracted.
    let gltf = d.join("two.gltf");
    succeeds(&[
        "export",
        ifp,
        "-o",
        gltf.to_str().unwrap(),
        "--clip",
        "WALK",
        "--clip",
        "Idle",
        "--root-motion",
        "extract",
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&gltf).unwrap()).unwrap();
    let names: Vec<&str> = doc["animations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["walk", "idle"]);
    assert_eq!(doc["buffers"][0]["uri"], "two.bin");
    assert!(d.join("two.bin").is_file());
    assert!(
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == "RootMotion")
    );
    // A clip no input has: status 1, named.
    let out = rigplay(&["export", ifp, "-o", glb.to_str().unwrap(), "--clip", "run"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"run\""));
    // An output that is not glTF, an unknown mode, an unknown option: usage, status 2.
    for args in [
        vec!["export", ifp, "-o", "x.fbx"],
        vec!["export", ifp, "-o", "x.glb", "--root-motion", "sideways"],
        vec!["export", ifp, "-o", "x.glb", "--bogus", "1"],
        vec!["export", ifp],
    ] {
        let out = rigplay(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    // A .dan on its own bones; an .ifp and a .dan together would need two skeletons: refused.
    let dan = sample("lamp.dan");
    succeeds(&["export", dan.to_str().unwrap(), "-o", glb.to_str().unwrap()]);
    let out = rigplay(&[
        "export",
        ifp,
        dan.to_str().unwrap(),
        "-o",
        glb.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("separate files"));
    // Never over an input.
    let copy = d.join("copy.glb");
    std::fs::copy(sample("sa_ped.ifp"), &copy).unwrap();
    let out = rigplay(&[
        "export",
        copy.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(sample("sa_ped.ifp")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The mocap walk the library's import tests use.
#[path = "../../tests/bvh_fixtures.rs"]
mod bvh_fixtures;

/// The IFP package written at `path`.
fn package_at(path: &std::path::Path) -> rigplay::formats::ifp::IfpFile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    rigplay::formats::ifp::IfpFile::read(&bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .file
}

/// `-o OUT.dan`: the walk as a DelDX file of the ped's bones in model space, with the
/// `.dan.meta` naming them (a user's own `.meta` kept), its keys reduced when asked; what only
/// an `.ifp` takes is refused. `--model` retargets onto a DFF's bones (into an `.ifp`).
#[test]
fn import_writes_a_mocap_walk_as_a_dan_with_its_meta() {
    use rigplay::formats::dan::DanFile;
    let d = dir("import-dan");
    let bvh = d.join("walk.bvh");
    std::fs::write(&bvh, bvh_fixtures::mocap_walk(31)).unwrap();
    let bvh = bvh.to_str().unwrap();
    let out = d.join("walk.dan");
    let text = succeeds(&["import", bvh, "-o", out.to_str().unwrap(), "--game", "vc"]);
    assert!(text.contains("DAN, 24 bones of the Vc ped"), "{text}");
    let read = DanFile::read(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(read.file.bones.len(), 24);
    let full = read.file.key_count();
    let meta = std::fs::read_to_string(d.join("walk.dan.meta")).unwrap();
    assert!(
        meta.contains("rigplay::plugin::DanLoader") && meta.contains("\"Pelvis\""),
        "{meta}"
    );
    // Again with a reduction: fewer keys; the .meta now there is kept.
    std::fs::write(d.join("walk.dan.meta"), "mine").unwrap();
    let text = succeeds(&[
        "import",
        bvh,
        "-o",
        out.to_str().unwrap(),
        "--game",
        "vc",
        "--reduce",
        "0.01",
    ]);
    assert!(text.contains("kept as it is"), "{text}");
    assert_eq!(
        std::fs::read_to_string(d.join("walk.dan.meta")).unwrap(),
        "mine"
    );
    let reduced = DanFile::read(&std::fs::read(&out).unwrap()).unwrap().file;
    assert!(
        reduced.key_count() < full,
        "{} of {full}",
        reduced.key_count()
    );
    // Onto the sample ped's own bones: its game (SA) from the file.
    let dff = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/characters/ped.dff");
    let ifp = d.join("onto_model.ifp");
    let text = succeeds(&[
        "import",
        bvh,
        "-o",
        ifp.to_str().unwrap(),
        "--model",
        dff.to_str().unwrap(),
    ]);
    assert!(text.contains("for Sa"), "{text}");
    let missing = rigplay(&[
        "import",
        bvh,
        "-o",
        ifp.to_str().unwrap(),
        "--model",
        "x.dff",
    ]);
    assert_eq!(missing.status.code(), Some(1));
    for args in [
        vec![
            "import",
            bvh,
            "-o",
            out.to_str().unwrap(),
            "--model",
            "x.dff",
        ],
        vec![
            "import",
            bvh,
            "-o",
            out.to_str().unwrap(),
            "--into",
            "x.ifp",
        ],
        vec![
            "import",
            bvh,
            "-o",
            out.to_str().unwrap(),
            "--format",
            "anpk",
        ],
        vec!["import", bvh, "-o", "walk.fbx"],
    ] {
        let out = rigplay(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn import_writes_a_mocap_walk_as_an_ifp_clip_and_into_a_package_keeping_the_others() {
    use rigplay::formats::ifp::{IfpFile, IfpVersion};
    let d = dir("import");
    let bvh = d.join("walk.bvh");
    std::fs::write(&bvh, bvh_fixtures::mocap_walk(31)).unwrap();
    let bvh = bvh.to_str().unwrap();
    // On its own: an ANP3 package with the one clip, named after the file.
    let out = d.join("walk.ifp");
    let run_text = succeeds(&["import", bvh, "-o", out.to_str().unwrap()]);
    let text = run_text;
    assert!(text.contains("clip \"walk\" for Sa"), "{text}");
    let package = package_at(&out);
    assert_eq!(package.version, IfpVersion::Anp3);
    let names: Vec<&str> = package.clips().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk"]);
    // Into the sample package in place of its walk (named in another case): every other clip
    // as it was, byte for byte: put the old walk back and the bytes are the sample's.
    let sample_path = sample("sa_ped.ifp");
    let original = std::fs::read(&sample_path).unwrap();
    let into = d.join("into.ifp");
    let run_text = succeeds(&[
        "import",
        bvh,
        "-o",
        into.to_str().unwrap(),
        "--name",
        "WALK",
        "--into",
        sample_path.to_str().unwrap(),
    ]);
    assert!(run_text.contains("replaces the package's clip"));
    let mut changed = package_at(&into);
    let before = IfpFile::read(&original).unwrap().file;
    let names: Vec<&str> = changed.clips().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["WALK", "idle", "wave"]);
    let old_walk = before.clips().next().unwrap().clone();
    *changed.clips_mut().next().unwrap() = old_walk;
    assert!(
        changed.write().unwrap() == original,
        "the other clips kept byte for byte"
    );
    // A new name is added at the end.
    let run = rigplay(&[
        "import",
        bvh,
        "-o",
        into.to_str().unwrap(),
        "--name",
        "mocap_walk",
        "--into",
        sample_path.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let added = package_at(&into);
    assert_eq!(added.clips().count(), 4);
    // Reduced within 1 mm on 3 cm shells: fewer keys, the count and the error said, the
    // error within the tolerance (and the int16 steps).
    let reduced = d.join("reduced.ifp");
    let text = succeeds(&[
        "import",
        bvh,
        "-o",
        reduced.to_str().unwrap(),
        "--reduce",
        "0.001",
    ]);
    eprintln!("{text}");
    assert!(
        text.contains("keys:") && text.contains("error max"),
        "{text}"
    );
    let count = |p: &std::path::Path| {
        package_at(p)
            .clips()
            .flat_map(|c| c.sequences.iter())
            .map(|s| s.keys.len())
            .sum::<usize>()
    };
    assert!(
        count(&reduced) < count(&out) / 2,
        "{} vs {}",
        count(&reduced),
        count(&out)
    );
    // A map: pairs a renamed thigh again; a line that is not `A = B` is refused with its line.
    let renamed = d.join("renamed.bvh");
    std::fs::write(
        &renamed,
        bvh_fixtures::mocap_walk(31).replace("LeftUpLeg", "jnt_07"),
    )
    .unwrap();
    let map = d.join("bones.map");
    std::fs::write(&map, "# mine\njnt_07 = L Thigh\n").unwrap();
    let text = succeeds(&[
        "import",
        renamed.to_str().unwrap(),
        "-o",
        reduced.to_str().unwrap(),
        "--map",
        map.to_str().unwrap(),
    ]);
    assert!(text.contains("21 bones paired"), "{text}");
    std::fs::write(&map, "jnt_07 L Thigh\n").unwrap();
    let run = rigplay(&[
        "import",
        renamed.to_str().unwrap(),
        "-o",
        reduced.to_str().unwrap(),
        "--map",
        map.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains(":1:"));
    // glTF in: the SA sample's clips exported to .glb, imported onto the VC ped (the GTA names
    // of the file's nodes pair with VC's): every animation, or the one --clip names.
    let glb = d.join("sa.glb");
    let run = rigplay(&[
        "export",
        sample("sa_ped.ifp").to_str().unwrap(),
        "-o",
        glb.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let from_gltf = d.join("from_gltf.ifp");
    succeeds(&[
        "import",
        glb.to_str().unwrap(),
        "-o",
        from_gltf.to_str().unwrap(),
        "--game",
        "vc",
    ]);
    let package = package_at(&from_gltf);
    let names: Vec<&str> = package.clips().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk", "idle", "wave"]);
    succeeds(&[
        "import",
        glb.to_str().unwrap(),
        "-o",
        from_gltf.to_str().unwrap(),
        "--clip",
        "IDLE",
        "--name",
        "idle_sa",
    ]);
    let package = package_at(&from_gltf);
    let names: Vec<&str> = package.clips().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["idle_sa"]);
    // SA keys written as ANPK with --format (SA loads ANPK too).
    let anpk = d.join("sa_anpk.ifp");
    succeeds(&[
        "import",
        bvh,
        "-o",
        anpk.to_str().unwrap(),
        "--format",
        "anpk",
    ]);
    let package = package_at(&anpk);
    assert_eq!(package.version, IfpVersion::Anpk);
    assert_eq!(
        rigplay(&["import", bvh, "-o", "x.ifp", "--format", "fbx"])
            .status
            .code(),
        Some(2)
    );
    // For Vice City: ANPK, 30 keys a second.
    let vc = d.join("vc.ifp");
    let run = rigplay(&["import", bvh, "-o", vc.to_str().unwrap(), "--game", "vc"]);
    assert!(run.status.success());
    let package = package_at(&vc);
    assert_eq!(package.version, IfpVersion::Anpk);
    // Refused: a package of another version than the game's, what is not a .bvh, an output
    // that is not .ifp, an unknown option.
    let run = rigplay(&[
        "import",
        bvh,
        "-o",
        into.to_str().unwrap(),
        "--into",
        sample("vc_ped.ifp").to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--game"));
    let run = rigplay(&["import", sample_path.to_str().unwrap(), "-o", "x.ifp"]);
    assert_eq!(run.status.code(), Some(1));
    for args in [
        vec!["import", bvh, "-o", "x.glb"],
        vec!["import", bvh, "-o", "x.ifp", "--bogus", "1"],
        vec!["import", bvh],
    ] {
        assert_eq!(rigplay(&args).status.code(), Some(2), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Every command explains itself with `--help` (clap's, from the command's own declaration), the
/// tool prints its version, and `completions` writes a script for each shell that names every
/// command.
#[test]
fn every_command_has_help_and_the_shells_get_completions() {
    let commands = [
        "inspect", "txd", "validate", "convert", "pose", "export", "import", "render",
    ];
    for command in commands {
        let out = rigplay(&[command, "--help"]);
        assert!(out.status.success(), "{command} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage: rigplay"), "{command}: {text}");
        assert!(text.contains(command), "{command}: {text}");
    }
    // An option of its own, with its value's name and its help line; and with --help (not -h),
    // the command's whole description.
    let text = String::from_utf8(rigplay(&["export", "--help"]).stdout).unwrap();
    assert!(
        text.contains("--root-motion <baked|in-place|extract>"),
        "{text}"
    );
    assert!(text.contains("A .gltf gets its .bin beside it"), "{text}");
    assert!(!text.contains("rigplay import"), "{text}");
    // The whole tool: every command, then the long description of each.
    let out = rigplay(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for command in commands {
        assert!(
            text.contains(&format!("rigplay {command}")),
            "{command}: {text}"
        );
    }
    let version = String::from_utf8(rigplay(&["--version"]).stdout).unwrap();
    assert_eq!(
        version.trim(),
        format!("rigplay {}", env!("CARGO_PKG_VERSION"))
    );
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef rigplay"),
        ("fish", "complete -c rigplay"),
        ("elvish", "edit:completion"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = rigplay(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        for command in commands {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    // No command, an unknown one, an unknown shell: usage errors, status 2.
    for bad in [&[][..], &["dance"], &["completions", "tcsh"]] {
        let out = rigplay(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Usage:"),
            "{bad:?}"
        );
    }
}

/// A clump with one frame and nothing drawn, written field by field (`docs/formats/dff.md` §2.1,
/// §4.3; SA's stamp 3.6.0.3): Clump { Struct (0 atomics, 0 lights, 0 cameras), Frame List {
/// Struct (1 frame: identity rotation, origin, no parent, flags 0x20003), Extension }, Geometry
/// List { Struct (0 geometries) }, Extension }. Chunk headers are id, size, stamp.
fn empty_clump() -> Vec<u8> {
    const SA: u32 = 0x1803_FFFF;
    fn chunk(id: u32, body: &[u8]) -> Vec<u8> {
        let mut c = Vec::new();
        for v in [id, body.len() as u32, SA] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        c.extend_from_slice(body);
        c
    }
    let words = |w: &[u32]| w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let floats = |f: &[f32]| f.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let mut frames = words(&[1]);
    frames.extend(floats(&[1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.]));
    frames.extend(words(&[u32::MAX, 0x20003])); // parent −1, flags
    let frame_list = [chunk(0x01, &frames), chunk(0x03, &[])].concat();
    let body = [
        chunk(0x01, &words(&[0, 0, 0])),
        chunk(0x0E, &frame_list),
        chunk(0x1A, &chunk(0x01, &words(&[0]))),
        chunk(0x03, &[]),
    ]
    .concat();
    chunk(0x10, &body)
}

/// A file of two clumps, as GTA III's peds and SA's player are: `--model` writes both, each a
/// scene, and the clips drive the first clump that has bones (here the second, the sample ped,
/// whose scene is the default) unless `--clump N` names one; a clump with no bones, or past the
/// last, is refused with status 1 and says why.
#[test]
fn export_with_a_model_of_two_clumps_draws_the_one_with_bones() {
    let d = dir("export-two-clumps");
    let ifp = sample("sa_ped.ifp");
    let ifp = ifp.to_str().unwrap();
    let characters = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/characters");
    let ped = std::fs::read(characters.join("ped.dff")).unwrap();
    let two = d.join("two.dff");
    std::fs::write(&two, [empty_clump(), ped].concat()).unwrap();
    let two = two.to_str().unwrap();
    let info = succeeds(&["inspect", two]);
    assert!(
        info.contains("2 clump(s)") && info.contains("clump 0: RW 3.6.0.3, 1 frames, 0 bones"),
        "{info}"
    );
    let glb = d.join("two.glb");
    let glb = glb.to_str().unwrap();
    let doc = |text: &str| -> Value {
        let bytes = std::fs::read(glb).unwrap();
        let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&bytes[20..20 + json_len]).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let text = succeeds(&["export", ifp, "--model", two, "-o", glb, "--clip", "walk"]);
    let written = doc(&text);
    assert_eq!(written["skins"].as_array().unwrap().len(), 1, "{text}");
    // The whole file: a scene per clump, the ped's the default.
    assert_eq!(written["scenes"].as_array().unwrap().len(), 2, "{text}");
    assert_eq!(written["scene"], 1, "{text}");
    assert!(
        text.contains("2 clumps, each a scene; the clips drive clump 1 (the default scene)"),
        "{text}"
    );
    let named = succeeds(&[
        "export", ifp, "--model", two, "--clump", "1", "-o", glb, "--clip", "walk",
    ]);
    assert_eq!(doc(&named)["skins"].as_array().unwrap().len(), 1, "{named}");
    assert_eq!(doc(&named)["scene"], 1, "{named}");
    let out = rigplay(&[
        "export", ifp, "--model", two, "--clump", "0", "-o", glb, "--clip", "walk",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--clump 0: the clump has no bones") && err.contains("clump 1 has 32"),
        "{err}"
    );
    let out = rigplay(&[
        "export", ifp, "--model", two, "--clump", "2", "-o", glb, "--clip", "walk",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the model has 2 clumps (0 to 1)"), "{err}");
    let out = rigplay(&["export", ifp, "--model", two, "--clump", "x", "-o", glb]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}
