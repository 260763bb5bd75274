//! Rewriting a file: an IFP package in another version, with fewer keys; and GTA and DAN clips
//! out to glTF ([`gltf`]). The code behind `rigplay convert` and `rigplay export` and any other
//! front end (the preview's "Save as…"), so that every one of them writes the same bytes for
//! the same settings.
//!
//! [`convert_ifp`] reduces each clip on the skeleton it plays on ([`ReduceRig::from_skeleton`]),
//! keeps the matching file keys ([`IfpClip::keep_keys`](crate::formats::ifp::IfpClip::keep_keys)),
//! makes the package fit the version ([`IfpFile::converted`]), encodes it, and, when asked,
//! reads the bytes back and measures what they play against the input: reduction and the
//! quantisation of compressed ANP3 keys both.

pub mod gltf;
pub mod import;

use crate::animation::Clip;
use crate::animation::reduce::{ErrorStats, KeyReduction, ReduceRig, ReduceStats, measure_error};
use crate::formats::ifp::{IfpFile, IfpVersion, IfpWriteError};
use crate::skeleton::Skeleton;

/// What [`convert_ifp`] makes of a package.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IfpConvertOptions {
    /// The version to write.
    pub version: IfpVersion,
    /// The keys to drop first.
    pub reduction: KeyReduction,
    /// Measure the written file against the input with points at this distance from each bone
    /// ([`measure_error`]); `None`: not measured.
    pub measure: Option<f32>,
}

/// A converted package, its bytes, and what the conversion did.
#[derive(Debug, Clone, PartialEq)]
pub struct IfpConversion {
    /// The package as written: reduced, then made to fit the version.
    pub package: IfpFile,
    /// What fitting the version lost, one line each ([`IfpFile::converted`]).
    pub notes: Vec<String>,
    /// The reduction's key counts and error, every clip together
    /// ([`ReduceStats::combined`]); `None` without reduction.
    pub reduction: Option<ReduceStats>,
    /// Keys of the input's clips, all channels ([`Clip::key_count`]).
    pub keys_before: usize,
    /// Keys of the written package's clips.
    pub keys_after: usize,
    /// The file, or why the package cannot be written in that version.
    pub bytes: Result<Vec<u8>, IfpWriteError>,
    /// What the written file plays against the input, every clip together
    /// ([`ErrorStats::worst`]); `None` when not asked for, or when nothing was written or it
    /// does not read back.
    pub error: Option<ErrorStats>,
}

/// `package` in `options.version`, its keys reduced first, its clips measured on `skeleton`
/// (usually [`Skeleton::for_ifp`]). Never panics: a package that cannot be written in that
/// version gives the writer's error in [`IfpConversion::bytes`].
pub fn convert_ifp(
    package: &IfpFile,
    skeleton: &Skeleton,
    options: &IfpConvertOptions,
) -> IfpConversion {
    let originals: Vec<Clip> = package.clips().map(|c| c.to_clip()).collect();
    let mut reduced = package.clone();
    let reduction = (options.reduction != KeyReduction::None).then(|| {
        let mut stats = Vec::new();
        for (clip, model) in reduced.clips_mut().zip(&originals) {
            let rig = ReduceRig::from_skeleton(skeleton, model);
            if let Some(r) = options.reduction.apply(model, &rig) {
                clip.keep_keys(&r.kept);
                stats.push(r.stats);
            }
        }
        ReduceStats::combined(&stats)
    });
    let (converted, notes) = reduced.converted(options.version);
    let bytes = converted.write();
    let error = match (options.measure, &bytes) {
        (Some(radius), Ok(bytes)) => IfpFile::read(bytes).ok().map(|back| {
            let errors: Vec<ErrorStats> = originals
                .iter()
                .zip(back.file.clips())
                .map(|(original, written)| {
                    let rig = ReduceRig::from_skeleton(skeleton, original);
                    measure_error(original, &written.to_clip(), &rig, radius)
                })
                .collect();
            ErrorStats::worst(&errors)
        }),
        _ => None,
    };
    IfpConversion {
        keys_before: originals.iter().map(Clip::key_count).sum(),
        keys_after: converted.clips().map(|c| c.to_clip().key_count()).sum(),
        package: converted,
        notes,
        reduction,
        bytes,
        error,
    }
}

/// Writes `bytes` to `path` without ever leaving a half-written file there: into a temporary
/// file beside it first (same folder, so the rename cannot cross file systems), flushed to disk,
/// then renamed over `path`. If anything fails, `path` keeps what it held and the temporary
/// file is removed. What `rigplay convert` and the preview's "Save as…" write through.
pub fn write_replacing(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".rigplay-{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Whether `a` and `b` name the same file (after resolving links and `..`; two paths that do
/// not exist yet are compared as written).
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod write_tests {
    use super::*;

    /// A fresh folder of the test's own (each test removes it at its end).
    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rigplay-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temporary_file() {
        let d = dir("replace");
        let f = d.join("out.ifp");
        std::fs::write(&f, b"old").unwrap();
        write_replacing(&f, b"new bytes").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new bytes");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_write_leaves_what_was_there() {
        let d = dir("fail");
        // The target is a folder with something in it: the rename fails after the temporary
        // file was written in full.
        let target = d.join("taken");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        assert!(write_replacing(&target, b"bytes").is_err());
        assert!(target.join("inside").is_dir());
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temporary file left"
        );
        // A folder that does not exist: nothing is written anywhere.
        assert!(write_replacing(&d.join("missing/out.ifp"), b"bytes").is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_same_file_by_another_path_is_the_same() {
        let d = dir("same");
        let f = d.join("a.ifp");
        std::fs::write(&f, b"x").unwrap();
        assert!(same_file(
            &f,
            &d.join("../").join(d.file_name().unwrap()).join("a.ifp")
        ));
        assert!(!same_file(&f, &d.join("b.ifp")));
        let _ = std::fs::remove_dir_all(&d);
    }
}
