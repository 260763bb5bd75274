//! The crate's layers: the pure core never reaches up into the Bevy integration, and each core
//! module imports only the modules below it. Read from the source text, so that a `use` that
//! breaks a layer fails here even where it would compile.
//!
//! | module | may use (besides itself) |
//! |---|---|
//! | `animation`, `coords` | nothing of the crate |
//! | `formats` | `animation`, `coords` |
//! | `skeleton` | `animation`, `formats`, `coords` |
//! | `anie` | `animation`, `formats`, `coords` |
//! | `model` | `animation`, `formats`, `coords`, `skeleton` |
//! | `convert` | `animation`, `formats`, `coords`, `skeleton`, `model` |
//! | `plugin`, `prelude` | anything |
//!
//! and no core module names Bevy.

use std::path::{Path, PathBuf};

const CORE: [(&str, &[&str]); 8] = [
    ("animation", &[]),
    ("coords", &[]),
    ("formats", &["animation", "coords"]),
    ("skeleton", &["animation", "formats", "coords"]),
    ("anie", &["animation", "formats", "coords"]),
    ("model", &["animation", "formats", "coords", "skeleton"]),
    (
        "convert",
        &["animation", "formats", "coords", "skeleton", "model"],
    ),
    ("lib", &[]),
];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The code of a file: lines that are not comments (`//`, `//!`, `///`), cut at a trailing `//`.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim_start();
        if t.starts_with("//") {
            return None;
        }
        Some((i + 1, l.split(" // ").next().unwrap_or(l)))
    })
}

/// The crate modules a line names: `crate::X`.
fn crate_modules(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .map(|(i, _)| {
            let rest = &line[i + 7..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Whether a line names Bevy: a path starting `bevy::` or `bevy_xxx::`, or `use bevy`.
fn names_bevy(line: &str) -> bool {
    let bytes = line.as_bytes();
    line.match_indices("bevy").any(|(i, _)| {
        let before_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = &line[i + 4..];
        let rest = rest.trim_start_matches(|c: char| c == '_' || c.is_ascii_lowercase());
        before_ok && (rest.starts_with("::") || line[..i].trim_end().ends_with("use"))
    })
}

#[test]
fn the_core_never_imports_a_higher_layer_or_bevy() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    let mut checked = 0;
    for (module, allowed) in CORE {
        let mut files = Vec::new();
        match module {
            "lib" => {}
            _ if src.join(module).is_dir() => rust_files(&src.join(module), &mut files),
            _ => files.push(src.join(format!("{module}.rs"))),
        }
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            checked += 1;
            for (n, line) in code_lines(&text) {
                for used in crate_modules(line) {
                    if used != module && !allowed.contains(&used) {
                        broken.push(format!(
                            "{}:{n}: {module} uses crate::{used}",
                            file.display()
                        ));
                    }
                }
                if names_bevy(line) {
                    broken.push(format!("{}:{n}: {module} names Bevy", file.display()));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} core files found");
    assert!(broken.is_empty(), "layer breaks:\n{}", broken.join("\n"));
}

#[test]
fn the_layer_check_sees_what_it_looks_for() {
    // The checks themselves, on lines written to break them.
    assert_eq!(crate_modules("use crate::plugin::Playback;"), ["plugin"]);
    assert!(names_bevy("use bevy::prelude::*;"));
    assert!(names_bevy("    let x: bevy_ecs::Entity;"));
    assert!(!names_bevy("pub fn gta_vec_to_bevy(v: Vec3) -> Vec3 {"));
    assert!(!names_bevy("let b = dan_quat_to_bevy(q);"));
    let lines: Vec<_> =
        code_lines("//! crate::plugin\nuse crate::animation; // crate::plugin\n").collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(crate_modules(lines[0].1), ["animation"]);
}
