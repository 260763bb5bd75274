//! The `.dan` asset loader and its settings.

use super::{Dan, DanAssetLabel};
use crate::animation::retarget::RetargetSource;
use crate::formats::dan::{DanClipOptions, DanError, DanFile};
use crate::plugin::load::{AssetLoadError, read_file};
use crate::plugin::meta::{MetaProblems, lenient_settings};
use crate::plugin::skeletal::{
    ClipInfo, ClipSettings, RigClip, animation_clip, named_bone_target_id,
};
use bevy::animation::AnimationTargetId;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::prelude::*;
use serde::Serialize;
use std::sync::Arc;

/// Settings of the `.dan` loader, set in a `.meta` file next to the asset:
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::DanLoader",
///         settings: (scale: 0.01, bone_names: ["Bip01", "Bip01 Spine"], looping: true),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DanLoaderSettings {
    /// Multiplies positions. DAN files are in the Max scene's units (often centimetres or
    /// inches); 0.01 turns centimetres into Bevy's metres; 1 keeps the file's units.
    pub scale: f32,
    /// Bone names by index (the file stores none); bones beyond the list are `bone_<index>`.
    /// Names are what the clip's targets match, on a [`crate::plugin::FlatSkeleton`] or a [`crate::plugin::Retarget`]
    /// hierarchy.
    pub bone_names: Vec<String>,
    /// Whether the clip is meant to loop (else to hold its last pose): recorded in the clip's
    /// settings for players to follow, as the preview does; a [`crate::plugin::SkeletalClip`]'s own mode
    /// decides how it plays.
    pub looping: bool,
    /// For drawing only: the bone each bone hangs from in the Max scene (the file does not
    /// say), so that skeleton gizmos draw a line between them. Playback ignores it.
    pub bone_links: Vec<Option<usize>>,
    /// What the `.meta` file held that could not be used (each field keeps its default); the
    /// loader logs these. Never written.
    #[serde(skip)]
    pub meta_problems: MetaProblems,
}

lenient_settings!(DanLoaderSettings {
    scale: "a number",
    bone_names: "a list of names `[\"Bip01\", …]`",
    looping: "`true` or `false`",
    bone_links: "a list of parents `[None, Some(0), …]`",
});

impl Default for DanLoaderSettings {
    fn default() -> Self {
        Self {
            scale: 1.0,
            bone_names: Vec::new(),
            looping: true,
            bone_links: Vec::new(),
            meta_problems: MetaProblems::default(),
        }
    }
}

/// Why a `.dan` asset did not load. The message names the byte offset, bone, track and key.
pub type DanLoadError = AssetLoadError<DanError>;

/// The `.dan` asset loader. It labels the file's clip as a [`RigClip`] (`Clip0`), which
/// [`crate::plugin::SkeletalClip`] plays, and as Bevy's `AnimationClip` (`Animation0`).
#[derive(TypePath, Default)]
#[type_path = "rigplay::plugin"]
pub struct DanLoader;

impl AssetLoader for DanLoader {
    type Asset = Dan;
    type Settings = DanLoaderSettings;
    type Error = DanLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &DanLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Dan, DanLoadError> {
        let meta = &settings.meta_problems;
        let (read, warnings) =
            read_file(reader, load_context, meta, DanFile::read, |r| &r.warnings).await?;
        let options = DanClipOptions {
            scale: settings.scale,
            names: settings.bone_names.clone(),
        };
        let name = load_context
            .path()
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let clip = Arc::new(read.file.to_clip(&name, &options));
        let bone_names: Vec<String> = (0..read.file.bones.len())
            .map(|i| options.bone_name(i))
            .collect();
        let targets: Vec<AnimationTargetId> =
            bone_names.iter().map(|n| named_bone_target_id(n)).collect();
        // Names are matched after normalisation and GTA's alias table: two that meet would drive
        // one bone with two tracks.
        for (i, t) in targets.iter().enumerate() {
            if let Some(j) = targets[..i].iter().position(|u| u == t) {
                warn!(
                    "{}: bones {j} ({:?}) and {i} ({:?}) have names that match the same bone; \
                     give them distinct names in the .meta's bone_names",
                    load_context.path(),
                    bone_names[j],
                    bone_names[i]
                );
            }
        }
        if !(settings.scale.is_finite() && settings.scale != 0.0) {
            warn!(
                "{}: scale {} is not a usable factor; positions are kept in the file's units",
                load_context.path(),
                settings.scale
            );
        }
        let clip_settings = ClipSettings {
            looping: settings.looping,
            ..ClipSettings::default()
        };
        // No root track: DAN keys are model-space, there is no root whose motion to extract.
        let animation = animation_clip(&clip, &targets, None, clip_settings.root_motion);
        let animation =
            load_context.add_labeled_asset(DanAssetLabel::Animation.to_string(), animation);
        let info = ClipInfo::new(
            clip.clone(),
            clip_settings,
            targets.iter().copied().zip(bone_names.clone()).collect(),
            None,
            // DAN keys are whole model transforms in Bevy's axes, where a 3ds Max character
            // faces +Z as a glTF one does; the file's first frame is its rest.
            Some(Arc::new(RetargetSource::first_frame(
                &clip,
                &bone_names,
                Quat::IDENTITY,
            ))),
        );
        let handle = load_context.add_labeled_asset(
            DanAssetLabel::Clip.to_string(),
            RigClip::new(info, animation.clone()),
        );
        Ok(Dan {
            frame_rate: clip.frame_rate(),
            file: read.file,
            clip,
            handle,
            animation,
            bone_names,
            targets,
            warnings,
            settings: settings.clone(),
        })
    }

    fn extensions(&self) -> &[&str] {
        &["dan"]
    }
}
