//! Rewriting a file: an IFP package in another version, with fewer keys. The code behind
//! `rigplay convert` and any other front end (the preview's "Save as…"), so that every one of
//! them writes the same bytes for the same settings.
//!
//! [`convert_ifp`] reduces each clip on the skeleton it plays on ([`ReduceRig::from_skeleton`]),
//! keeps the matching file keys ([`IfpClip::keep_keys`](crate::formats::ifp::IfpClip::keep_keys)),
//! makes the package fit the version ([`IfpPackage::converted`]), encodes it, and, when asked,
//! reads the bytes back and measures what they play against the input: reduction and the
//! quantisation of compressed ANP3 keys both.

use crate::anim::Clip;
use crate::anim::reduce::{ErrorStats, KeyReduction, ReduceRig, ReduceStats, measure_error};
use crate::formats::ifp::{IfpPackage, IfpVersion, IfpWriteError};
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
    pub package: IfpPackage,
    /// What fitting the version lost, one line each ([`IfpPackage::converted`]).
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
    package: &IfpPackage,
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
        (Some(radius), Ok(bytes)) => IfpPackage::read(bytes).ok().map(|back| {
            let errors: Vec<ErrorStats> = originals
                .iter()
                .zip(back.package.clips())
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
