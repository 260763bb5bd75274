//! The `rigplay` command-line tool, run as a user would.

use crate::ifp_read::{anp3_with_types_1_to_4, anpk_with_44_byte_anim};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rigplay-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rigplay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigplay"))
        .args(args)
        .output()
        .expect("runs")
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

    let out = rigplay(&["pose", f, "--clip", "nope", "--at", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("walk_civi"));
}
