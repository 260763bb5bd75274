//! The `.ifp` asset loader: an [`Ifp`] asset and one labelled `AnimationClip` per clip.

use super::retarget::{ClipInfo, ClipRegistry, bone_target_id};
use crate::anim::{Clip, WrapMode};
use crate::formats::ifp::{IfpError, IfpPackage};
use crate::skeleton::Skeleton;
use bevy::animation::animation_curves::{AnimatableCurve, AnimatedField};
use bevy::animation::{AnimationTargetId, animated_field};
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, AssetPath, LoadContext};
use bevy::math::curve::{ConstantCurve, Interval, UnevenSampleAutoCurve};
use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded `.ifp` file, like bevy_gltf's `Gltf`: the file's data, and per clip its engine-neutral
/// form, its settings and the handle of its labelled `AnimationClip`.
#[derive(Asset, TypePath, Debug)]
pub struct Ifp {
    /// Everything the file holds (see [`crate::formats::ifp`]).
    pub package: IfpPackage,
    /// One per clip, in file order.
    pub clips: Vec<IfpClipAsset>,
    /// Clip index by name (the first clip of each name).
    pub named_clips: HashMap<String, usize>,
    /// What the reader tolerated, one line each.
    pub warnings: Vec<String>,
    /// The skeleton the clips were bound to.
    pub skeleton: SkeletonKind,
}

/// One clip of an [`Ifp`] asset.
#[derive(Debug)]
pub struct IfpClipAsset {
    pub name: String,
    /// The clip in the engine-neutral model, as in the file (root motion not removed).
    pub clip: Arc<Clip>,
    pub settings: ClipSettings,
    /// The clip as a Bevy `AnimationClip`, labelled by index (`Clip0`).
    pub handle: Handle<AnimationClip>,
    /// The same clip labelled by its name, when the name could be a label.
    pub named_handle: Option<Handle<AnimationClip>>,
    /// The animation target id of each track, as [`bone_target_id`] gives it.
    pub targets: Vec<AnimationTargetId>,
}

impl Ifp {
    /// A clip by name (case-insensitive, as the games look clips up).
    pub fn clip(&self, name: &str) -> Option<&IfpClipAsset> {
        self.named_clips
            .get(name)
            .or_else(|| {
                self.named_clips
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v)
            })
            .map(|&i| &self.clips[i])
    }
}

/// Labels of the sub-assets of an `.ifp` file. Clips are labelled by index (`Clip0`) and by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfpAssetLabel {
    /// `Clip{index}`: the clip at this index, in file order.
    Clip(usize),
    /// The clip's own name, e.g. `walk_civi`.
    Named(String),
}

impl std::fmt::Display for IfpAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IfpAssetLabel::Clip(i) => write!(f, "Clip{i}"),
            IfpAssetLabel::Named(name) => f.write_str(name),
        }
    }
}

impl IfpAssetLabel {
    /// The full asset path of this label in the file at `path`.
    pub fn from_asset(&self, path: impl Into<AssetPath<'static>>) -> AssetPath<'static> {
        path.into().with_label(self.to_string())
    }
}

/// Which built-in skeleton the clips are bound to (for bone ids, which differ between games).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Reflect)]
pub enum SkeletonKind {
    /// Chosen from the file: ANP3/ANP2 → SA; ANPK with bone tags → VC; ANPK without → III.
    #[default]
    Auto,
    Sa,
    Vc,
    Iii,
}

impl SkeletonKind {
    pub fn skeleton(self) -> Skeleton {
        match self {
            SkeletonKind::Sa | SkeletonKind::Auto => Skeleton::gta_sa(),
            SkeletonKind::Vc => Skeleton::gta_vc(),
            SkeletonKind::Iii => Skeleton::gta_iii(),
        }
    }

    fn resolve(self, package: &IfpPackage) -> SkeletonKind {
        use crate::skeleton::GtaPed;
        match self {
            SkeletonKind::Auto => match GtaPed::for_ifp(package) {
                GtaPed::Sa => SkeletonKind::Sa,
                GtaPed::Vc => SkeletonKind::Vc,
                GtaPed::Iii => SkeletonKind::Iii,
            },
            other => other,
        }
    }
}

/// What happens to the root bone's translation (spec §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Reflect)]
pub enum RootMotionMode {
    /// The root moves as the file says: the character walks away from its entity.
    #[default]
    Baked,
    /// The root's horizontal (X, Y in GTA axes) movement is removed: the character walks in place.
    InPlace,
    /// As `InPlace`, and the removed movement is reported each frame in [`super::RootMotion`] so
    /// that the game moves the character (the games extract X and Y; Z only in their "3D" mode).
    Extract { z: bool },
}

/// Per-clip choices; neither is stored in IFP files (the games keep them in code tables).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(default)]
pub struct ClipSettings {
    /// Whether the clip loops (else it holds its last pose).
    pub looping: bool,
    pub root_motion: RootMotionMode,
}

impl Default for ClipSettings {
    fn default() -> Self {
        Self {
            looping: true,
            root_motion: RootMotionMode::Baked,
        }
    }
}

impl ClipSettings {
    pub fn wrap_mode(&self) -> WrapMode {
        if self.looping {
            WrapMode::Loop
        } else {
            WrapMode::Clamp
        }
    }
}

/// Settings of the `.ifp` loader, set in a `.meta` file next to the asset:
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::asset::IfpLoader",
///         settings: (
///             skeleton: Sa,
///             clips: { "walk_civi": (looping: true, root_motion: Extract(z: false)) },
///         ),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IfpLoaderSettings {
    /// The skeleton the clips are bound to. `Auto` picks it from the file.
    pub skeleton: SkeletonKind,
    /// Settings for clips not named in `clips`.
    pub default_clip: ClipSettings,
    /// Settings per clip name (compared case-insensitively).
    pub clips: HashMap<String, ClipSettings>,
}

impl IfpLoaderSettings {
    pub fn for_clip(&self, name: &str) -> ClipSettings {
        self.clips
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, s)| *s)
            .unwrap_or(self.default_clip)
    }
}

/// Why an `.ifp` asset did not load. The message names the byte offset, clip and bone; Bevy's
/// asset server adds the file's path when it logs it.
#[derive(Debug, thiserror::Error)]
pub enum IfpLoadError {
    #[error("could not read the file: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Format(#[from] IfpError),
}

/// The `.ifp` asset loader. It records every clip it loads in the [`ClipRegistry`] resource.
#[derive(TypePath)]
pub struct IfpLoader {
    pub(crate) registry: ClipRegistry,
}

impl AssetLoader for IfpLoader {
    type Asset = Ifp;
    type Settings = IfpLoaderSettings;
    type Error = IfpLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &IfpLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Ifp, IfpLoadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let read = IfpPackage::read(&bytes)?;
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        for w in &warnings {
            warn!("{}: {w}", load_context.path());
        }
        let package = read.package;
        let kind = settings.skeleton.resolve(&package);
        let skeleton = kind.skeleton();
        let mut clips = Vec::new();
        let mut named_clips = HashMap::new();
        let names: Vec<String> = package.clips().map(|c| c.name.clone()).collect();
        for (index, ifp_clip) in package.clips().enumerate() {
            let clip = Arc::new(ifp_clip.to_clip());
            let clip_settings = settings.for_clip(&clip.name);
            let targets: Vec<AnimationTargetId> = clip
                .tracks()
                .iter()
                .map(|t| bone_target_id(&skeleton, &t.bone))
                .collect();
            let animation = animation_clip(&clip, &skeleton, &targets, clip_settings.root_motion);
            let handle = load_context
                .add_labeled_asset(IfpAssetLabel::Clip(index).to_string(), animation.clone());
            // A name label too, unless it would shadow an index label or an earlier clip's name.
            let is_index_label = |n: &str| {
                n.strip_prefix("Clip")
                    .is_some_and(|d| d.parse::<usize>().is_ok_and(|i| i < names.len()))
            };
            let mut named_handle = None;
            if !clip.name.is_empty()
                && !is_index_label(&clip.name)
                && !named_clips.contains_key(&clip.name)
            {
                named_handle = Some(load_context.add_labeled_asset(
                    IfpAssetLabel::Named(clip.name.clone()).to_string(),
                    animation,
                ));
                named_clips.insert(clip.name.clone(), index);
            }
            let info = Arc::new(ClipInfo {
                clip: clip.clone(),
                settings: clip_settings,
                skeleton: Some(kind),
                tracks: targets
                    .iter()
                    .zip(clip.tracks())
                    .map(|(t, track)| (*t, track.bone.to_string()))
                    .collect(),
                root_track: root_track(&clip, &skeleton),
            });
            for h in std::iter::once(&handle).chain(named_handle.as_ref()) {
                self.registry.insert(h.id(), info.clone());
            }
            clips.push(IfpClipAsset {
                name: clip.name.clone(),
                clip,
                settings: clip_settings,
                handle,
                named_handle,
                targets,
            });
        }
        Ok(Ifp {
            package,
            clips,
            named_clips,
            warnings,
            skeleton: kind,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["ifp"]
    }
}

/// Times for a Bevy keyframe curve: Bevy keeps the first of equal times and drops the rest,
/// while rigplay's sampler steps to the last of them; moving the earlier ones back by one ulp
/// each makes both give the same values everywhere but inside those ulps.
fn distinct_times(times: &[f32]) -> Vec<f32> {
    let mut out = times.to_vec();
    for k in (0..out.len().saturating_sub(1)).rev() {
        if out[k] >= out[k + 1] {
            out[k] = out[k + 1].next_down();
        }
    }
    out
}

/// Index of the root track (bone without parent in the skeleton, or GTA's root names).
pub(crate) fn root_track(clip: &Clip, skeleton: &Skeleton) -> Option<usize> {
    clip.tracks().iter().position(|t| {
        skeleton
            .find(&t.bone)
            .is_some_and(|i| skeleton.bones[i].parent.is_none())
    })
}

/// The axes root motion takes out of the root's translation (GTA axes).
pub(crate) fn extracted_axes(mode: RootMotionMode) -> Vec3 {
    match mode {
        RootMotionMode::Baked => Vec3::ZERO,
        RootMotionMode::InPlace | RootMotionMode::Extract { z: false } => Vec3::new(1.0, 1.0, 0.0),
        RootMotionMode::Extract { z: true } => Vec3::ONE,
    }
}

/// Adds a keyframe curve on `field` of `Transform`: constant for one key, else Bevy's
/// interpolating curve (slerp for rotations, lerp for vectors).
macro_rules! add_keys {
    ($out:expr, $target:expr, $field:ident, $times:expr, $values:expr) => {{
        let values = $values;
        match values {
            [only] => $out.add_curve_to_target(
                $target,
                AnimatableCurve::new(
                    animated_field!(Transform::$field),
                    ConstantCurve::new(Interval::EVERYWHERE, *only),
                ),
            ),
            _ => {
                if let Ok(curve) =
                    UnevenSampleAutoCurve::new($times.iter().copied().zip(values.iter().copied()))
                {
                    $out.add_curve_to_target(
                        $target,
                        AnimatableCurve::new(animated_field!(Transform::$field), curve),
                    );
                }
            }
        }
    }};
}

/// Builds the Bevy `AnimationClip`: one rotation / translation / scale curve per channel on the
/// track's target id, with the clip's duration; root motion removed as the mode says.
pub fn animation_clip(
    clip: &Clip,
    skeleton: &Skeleton,
    targets: &[AnimationTargetId],
    root_motion: RootMotionMode,
) -> AnimationClip {
    let mut out = AnimationClip::default();
    let root = root_track(clip, skeleton);
    let axes = extracted_axes(root_motion);
    for (i, (track, &target)) in clip.tracks().iter().zip(targets).enumerate() {
        if let Some(c) = track.rotation {
            add_keys!(
                out,
                target,
                rotation,
                distinct_times(clip.times(c)),
                clip.rotation_values(c)
            );
        }
        if let Some(c) = track.translation {
            let mut values = clip.vector_values(c).to_vec();
            if Some(i) == root && axes != Vec3::ZERO {
                let first = values[0];
                for v in &mut values {
                    *v = *v * (Vec3::ONE - axes) + first * axes;
                }
            }
            add_keys!(
                out,
                target,
                translation,
                distinct_times(clip.times(c)),
                values.as_slice()
            );
        }
        if let Some(c) = track.scale {
            add_keys!(
                out,
                target,
                scale,
                distinct_times(clip.times(c)),
                clip.vector_values(c)
            );
        }
    }
    // A repeating clip of duration 0 would make Bevy's player time NaN.
    out.set_duration(clip.duration().max(f32::EPSILON));
    out
}
