//! Saving a converted copy of an IFP package: the settings the preview's "Save as…" panel
//! offers, turned into the same library call as `rigplay convert`
//! ([`rigplay::convert::convert_ifp`] on [`Skeleton::for_ifp`]), so that the preview and the
//! command line write the same bytes for the same settings ([`ConvertSettings::cli_args`]
//! names the command that does).

use rigplay::animation::reduce::{DEFAULT_SHELL_RADIUS, KeyReduction, ReduceOptions};
use rigplay::convert::{IfpConvertOptions, convert_ifp};
use rigplay::formats::ifp::{IfpFile, IfpVersion};
use rigplay::skeleton::Skeleton;
use std::path::{Path, PathBuf};

/// Which keys the converted file drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reduction {
    /// Every key is kept (`rigplay convert --to V`).
    #[default]
    Off,
    /// Only the inside of constant runs, losslessly (`--runs`).
    Runs,
    /// Every key its neighbours reproduce within [`ConvertSettings::tolerance`] (`--reduce`).
    Bounded,
}

impl Reduction {
    /// Every choice, in the order the panel lists them.
    pub const ALL: [Reduction; 3] = [Reduction::Off, Reduction::Runs, Reduction::Bounded];

    /// Its name in the panel.
    pub fn label(self) -> &'static str {
        match self {
            Reduction::Off => "off",
            Reduction::Runs => "lossless runs",
            Reduction::Bounded => "bounded",
        }
    }
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvertSettings {
    /// The IFP version of the file.
    pub version: IfpVersion,
    pub reduction: Reduction,
    /// [`Reduction::Bounded`]: the largest error allowed, metres (`--reduce TOL`).
    pub tolerance: f32,
    /// The distance of the measured points from each bone, metres (`--shell R`): for
    /// [`Reduction::Bounded`], and for measuring what the written file plays.
    pub shell_radius: f32,
}

impl Default for ConvertSettings {
    fn default() -> Self {
        Self {
            version: IfpVersion::Anp3,
            reduction: Reduction::Off,
            tolerance: 0.001,
            shell_radius: DEFAULT_SHELL_RADIUS,
        }
    }
}

/// What a conversion wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub version: IfpVersion,
    pub clips: usize,
    /// Size of the file.
    pub bytes: usize,
    /// Keys of the source's clips, all channels.
    pub keys_before: usize,
    /// Keys of the written file's clips.
    pub keys_after: usize,
    /// The largest error of what the written file plays against the source, metres (points
    /// at [`ConvertSettings::shell_radius`] around each bone, parents included): reduction and
    /// the int16 rounding of compressed ANP3 keys together. `None` when the written bytes did
    /// not read back (never expected).
    pub max_error: Option<f32>,
    /// What fitting the version lost (merged ANLF blocks, cut names, dropped scale keys).
    pub notes: Vec<String>,
}

impl ConvertSettings {
    /// The arguments after `rigplay convert IN OUT` that write the same bytes.
    pub fn cli_args(&self) -> Vec<String> {
        let mut args = vec!["--to".to_owned(), self.version.magic().to_ascii_lowercase()];
        match self.reduction {
            Reduction::Off => {}
            Reduction::Runs => args.push("--runs".to_owned()),
            Reduction::Bounded => {
                args.extend(["--reduce".to_owned(), self.tolerance.to_string()]);
                if self.shell_radius != DEFAULT_SHELL_RADIUS {
                    args.extend(["--shell".to_owned(), self.shell_radius.to_string()]);
                }
            }
        }
        args
    }

    /// The library's options for these settings, or why they are not valid (the command
    /// line's rule: distances finite and ≥ 0).
    pub fn options(&self) -> Result<IfpConvertOptions, String> {
        let distance = |name: &str, v: f32| {
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(format!("the {name} must be a distance ≥ 0, not {v}"))
            }
        };
        let shell_radius = distance("shell radius", self.shell_radius)?;
        let reduction = match self.reduction {
            Reduction::Off => KeyReduction::None,
            Reduction::Runs => KeyReduction::Runs,
            Reduction::Bounded => KeyReduction::Bounded(ReduceOptions {
                tolerance: distance("tolerance", self.tolerance)?,
                shell_radius,
            }),
        };
        Ok(IfpConvertOptions {
            version: self.version,
            reduction,
            measure: Some(shell_radius),
        })
    }
}

/// The converted file's bytes and what they hold, or why it cannot be written.
pub fn convert_bytes(
    package: &IfpFile,
    settings: &ConvertSettings,
) -> Result<(Vec<u8>, Summary), String> {
    let options = settings.options()?;
    let done = convert_ifp(package, &Skeleton::for_ifp(package), &options);
    let bytes = done
        .bytes
        .map_err(|e| format!("cannot write {}: {e}", options.version))?;
    let summary = Summary {
        version: options.version,
        clips: done.package.clips().count(),
        bytes: bytes.len(),
        keys_before: done.keys_before,
        keys_after: done.keys_after,
        max_error: done.error.map(|e| e.max),
        notes: done.notes,
    };
    Ok((bytes, summary))
}

/// Converts `package` and writes it to `path`, which must not be `source` (the open file).
pub fn save(
    package: &IfpFile,
    settings: &ConvertSettings,
    source: &Path,
    path: &Path,
) -> Result<Summary, String> {
    check_output(source, path)?;
    let (bytes, summary) = convert_bytes(package, settings)?;
    rigplay::convert::write_replacing(path, &bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(summary)
}

/// Where "Save as…" proposes to write a converted copy of `source`: beside it, as
/// `NAME.converted.ifp`; for a motion file imported as a package (`walk.bvh`), `NAME.ifp`.
pub fn default_output(source: &Path) -> PathBuf {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "animations".to_owned());
    let motion = source.extension().is_some_and(|e| {
        ["bvh", "vrma", "vrm", "glb", "gltf"]
            .iter()
            .any(|m| e.eq_ignore_ascii_case(m))
    });
    if motion {
        source.with_file_name(format!("{stem}.ifp"))
    } else {
        source.with_file_name(format!("{stem}.converted.ifp"))
    }
}

/// Whether `path` can take the converted file: not empty, not a folder, not the source.
pub fn check_output(source: &Path, path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("no file name given".to_owned());
    }
    if path.is_dir() {
        return Err(format!("{} is a folder", path.display()));
    }
    if rigplay::convert::same_file(source, path) {
        return Err("that is the open file: choose another name".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> (PathBuf, IfpFile) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets/anims")
            .join(name);
        let package = IfpFile::read(&std::fs::read(&path).unwrap()).unwrap().file;
        (path, package)
    }

    /// The settings the panel offers (tolerance 0.002 m, the default shell), each with the
    /// `rigplay convert` arguments that write the same bytes. The command line's test
    /// (`cli/tests/cli.rs`, `convert_writes_what_the_library_writes`) runs these arguments and
    /// checks its file against [`convert_ifp`] with the options [`cli_options`] gives.
    const CASES: [(IfpVersion, Reduction, &[&str]); 6] = [
        (IfpVersion::Anpk, Reduction::Off, &["--to", "anpk"]),
        (
            IfpVersion::Anpk,
            Reduction::Runs,
            &["--to", "anpk", "--runs"],
        ),
        (
            IfpVersion::Anpk,
            Reduction::Bounded,
            &["--to", "anpk", "--reduce", "0.002"],
        ),
        (IfpVersion::Anp3, Reduction::Off, &["--to", "anp3"]),
        (
            IfpVersion::Anp3,
            Reduction::Runs,
            &["--to", "anp3", "--runs"],
        ),
        (
            IfpVersion::Anp3,
            Reduction::Bounded,
            &["--to", "anp3", "--reduce", "0.002"],
        ),
    ];

    /// The options `rigplay convert` builds from those arguments (`cli/src/convert.rs`).
    fn cli_options(version: IfpVersion, reduction: Reduction) -> IfpConvertOptions {
        let bounded = ReduceOptions {
            tolerance: 0.002,
            shell_radius: 0.03,
        };
        IfpConvertOptions {
            version,
            reduction: match reduction {
                Reduction::Off => KeyReduction::None,
                Reduction::Runs => KeyReduction::Runs,
                Reduction::Bounded => KeyReduction::Bounded(bounded),
            },
            measure: (reduction == Reduction::Bounded).then_some(bounded.shell_radius),
        }
    }

    #[test]
    fn the_preview_writes_the_bytes_rigplay_convert_writes() {
        for name in ["sa_ped.ifp", "vc_ped.ifp"] {
            let (_, package) = sample(name);
            for (version, reduction, args) in CASES {
                let settings = ConvertSettings {
                    version,
                    reduction,
                    tolerance: 0.002,
                    ..Default::default()
                };
                assert_eq!(settings.cli_args(), args, "{settings:?}");
                let cli = cli_options(version, reduction);
                let (bytes, summary) = convert_bytes(&package, &settings).unwrap();
                let theirs = convert_ifp(&package, &Skeleton::for_ifp(&package), &cli);
                assert!(
                    theirs.bytes.as_ref() == Ok(&bytes),
                    "{name} {args:?}: the preview's file differs from the command line's"
                );
                assert_eq!(&bytes[..4], settings.version.magic().as_bytes());
                assert_eq!(summary.bytes, bytes.len());
                assert_eq!(summary.clips, package.clips().count());
                assert!(summary.keys_after <= summary.keys_before);
                let error = summary.max_error.expect("measured");
                match settings.reduction {
                    Reduction::Off => assert_eq!(summary.keys_after, summary.keys_before),
                    Reduction::Runs => {}
                    Reduction::Bounded => {
                        assert!(summary.keys_after * 2 < summary.keys_before);
                        // The tolerance, plus ANP3's int16 rounding.
                        assert!(error <= 0.002 + 2e-3, "{error}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_settings_and_outputs_are_errors_not_panics() {
        let (path, package) = sample("vc_ped.ifp");
        for (tolerance, shell_radius) in [(-1.0, 0.03), (f32::NAN, 0.03), (0.001, f32::INFINITY)] {
            let settings = ConvertSettings {
                reduction: Reduction::Bounded,
                tolerance,
                shell_radius,
                ..Default::default()
            };
            assert!(convert_bytes(&package, &settings).is_err(), "{settings:?}");
        }
        let settings = ConvertSettings::default();
        assert!(save(&package, &settings, &path, &path).is_err());
        assert!(save(&package, &settings, &path, Path::new("")).is_err());
        let dir = std::env::temp_dir();
        assert!(save(&package, &settings, &path, &dir).is_err());
        let missing = dir.join("rigplay-no-such-folder/x/y.ifp");
        assert!(save(&package, &settings, &path, &missing).is_err());
    }

    #[test]
    fn save_writes_what_convert_bytes_gives() {
        let (path, package) = sample("sa_ped.ifp");
        let out = std::env::temp_dir().join(format!("rigplay-preview-{}.ifp", std::process::id()));
        let settings = ConvertSettings {
            version: IfpVersion::Anpk,
            reduction: Reduction::Runs,
            ..Default::default()
        };
        let summary = save(&package, &settings, &path, &out).unwrap();
        let (bytes, same) = convert_bytes(&package, &settings).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), bytes);
        assert_eq!(summary, same);
        let _ = std::fs::remove_file(&out);
    }

    #[test]
    fn the_default_output_sits_beside_the_source() {
        assert_eq!(
            default_output(Path::new("/a/b/ped.ifp")),
            Path::new("/a/b/ped.converted.ifp")
        );
        assert_eq!(
            default_output(Path::new("ped")),
            Path::new("ped.converted.ifp")
        );
        assert_eq!(
            default_output(Path::new("")),
            Path::new("animations.converted.ifp")
        );
        // A motion file imported as a package: the package beside it.
        assert_eq!(
            default_output(Path::new("/a/walk.BVH")),
            Path::new("/a/walk.ifp")
        );
        assert_eq!(
            default_output(Path::new("mixamo.glb")),
            Path::new("mixamo.ifp")
        );
    }

    #[test]
    fn cli_args_name_the_shell_only_when_it_is_not_the_default() {
        let s = ConvertSettings {
            version: IfpVersion::Anp2,
            reduction: Reduction::Bounded,
            tolerance: 0.0005,
            shell_radius: 0.1,
        };
        assert_eq!(
            s.cli_args(),
            ["--to", "anp2", "--reduce", "0.0005", "--shell", "0.1"]
        );
    }
}
