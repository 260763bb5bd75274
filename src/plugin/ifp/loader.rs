//! The `.ifp` asset loader: an [`Ifp`] asset and one labelled `AnimationClip` per clip.

use super::{Ifp, IfpAssetLabel, IfpClipAsset};
use crate::formats::ifp::{IfpError, IfpFile};
use crate::plugin::load::{AssetLoadError, log_warnings, read_file};
use crate::plugin::meta::{MetaProblems, lenient_settings};
use crate::plugin::skeletal::{
    ClipInfo, ClipSettings, RigClip, RootMotionMode, animation_clip, bone_target_id,
};
use crate::skeleton::{GtaGame, Skeleton};
use bevy::animation::AnimationTargetId;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// Settings of the `.ifp` loader, set in a `.meta` file next to the asset:
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::IfpLoader",
///         settings: (
///             skeleton: Some(Sa),
///             clips: { "walk_civi": (looping: true, root_motion: Extract(z: false)) },
///         ),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Default, Serialize)]
pub struct IfpLoaderSettings {
    /// The game whose skeleton the clips are bound to (`Some(Sa)`, `Some(Vc)`, `Some(Iii)`);
    /// `None` picks it from the file ([`GtaGame::for_ifp`]).
    pub skeleton: Option<GtaGame>,
    /// Settings for clips not named in `clips`.
    pub default_clip: ClipSettings,
    /// Settings per clip name (compared case-insensitively).
    pub clips: HashMap<String, ClipSettings>,
    /// What the `.meta` file held that could not be used (each field keeps its default); the
    /// loader logs these. Never written.
    #[serde(skip)]
    pub meta_problems: MetaProblems,
}

lenient_settings!(IfpLoaderSettings {
    skeleton: "`None` or `Some(Sa)`, `Some(Vc)`, `Some(Iii)`",
    default_clip: "clip settings `(looping: bool, root_motion: Baked | InPlace | Extract(z: bool))`",
} map clips: "clip settings `(looping: bool, root_motion: Baked | InPlace | Extract(z: bool))`");

impl IfpLoaderSettings {
    /// The settings of the clip called `name`.
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
pub type IfpLoadError = AssetLoadError<IfpError>;

/// The `.ifp` asset loader. It labels every clip as a [`RigClip`] (by index and by name), which
/// [`crate::plugin::SkeletalClip`] plays, and as Bevy's `AnimationClip` (by index).
#[derive(TypePath, Default)]
#[type_path = "rigplay::plugin"]
pub struct IfpLoader;

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
        let meta = &settings.meta_problems;
        let (read, warnings) =
            read_file(reader, load_context, meta, IfpFile::read, |r| &r.warnings).await?;
        let package = read.file;
        let game = settings
            .skeleton
            .unwrap_or_else(|| GtaGame::for_ifp(&package));
        Ok(ifp_asset(package, game, settings, warnings, load_context))
    }

    fn extensions(&self) -> &[&str] {
        &["ifp"]
    }
}

/// The [`Ifp`] asset of `package` bound to `game`'s skeleton, its clips labelled by index and
/// name (and as Bevy's `AnimationClip`s): what the `.ifp` loader and the motion loader
/// ([`super::MotionLoader`], whose imports are IFP packages) both make.
pub(crate) fn ifp_asset(
    package: IfpFile,
    game: GtaGame,
    settings: &IfpLoaderSettings,
    mut warnings: Vec<String>,
    load_context: &mut LoadContext<'_>,
) -> Ifp {
    let skeleton = game.skeleton();
    let mut clips = Vec::new();
    let mut named_clips = HashMap::new();
    let clip_count = package.clips().count();
    for (index, ifp_clip) in package.clips().enumerate() {
        // GTA III adds translation keys to the bones' rest positions (§3.4); translation
        // keys that are not local offsets (SA cutscenes' clavicles) are not applied: said
        // once per clip.
        let (clip, unapplied) = skeleton.clip_as_played(game, &ifp_clip.to_clip());
        if !unapplied.is_empty() {
            let line = format!(
                "clip {:?}: the translation keys of {} are not local offsets (more than {} m from the bone's rest offset: positions in a scene's frame) and are not applied",
                clip.name,
                unapplied.join(", "),
                Skeleton::LOCAL_REACH
            );
            warnings.extend(log_warnings(load_context, &[line]));
        }
        let clip = Arc::new(clip);
        let clip_settings = settings.for_clip(&clip.name);
        let targets: Vec<AnimationTargetId> = clip
            .tracks()
            .iter()
            .map(|t| bone_target_id(&skeleton, &t.bone))
            .collect();
        let root = skeleton.root_track(&clip);
        let info = Arc::new(ClipInfo::new(
            clip.clone(),
            clip_settings,
            targets
                .iter()
                .zip(clip.tracks())
                .map(|(t, track)| (*t, track.bone.to_string()))
                .collect(),
            root,
            Some(Arc::new(skeleton.retarget_source(&clip))),
        ));
        // Bevy's clip from the clip as played: root motion was taken out once, above.
        let animation = animation_clip(&info.played, &targets, root, RootMotionMode::Baked);
        let animation =
            load_context.add_labeled_asset(IfpAssetLabel::Animation(index).to_string(), animation);
        let rig_clip = RigClip::new(info, animation.clone());
        let handle = load_context
            .add_labeled_asset(IfpAssetLabel::Clip(index).to_string(), rig_clip.clone());
        // A name label too, unless it would shadow an index label or an earlier clip's name.
        let mut named_handle = None;
        if !clip.name.is_empty()
            && !IfpAssetLabel::is_index_label(&clip.name, clip_count)
            && !named_clips.contains_key(&clip.name)
        {
            named_handle = Some(load_context.add_labeled_asset(
                IfpAssetLabel::Named(clip.name.clone()).to_string(),
                rig_clip,
            ));
            named_clips.insert(clip.name.clone(), index);
        }
        clips.push(IfpClipAsset {
            name: clip.name.clone(),
            frame_rate: clip.frame_rate(),
            clip,
            settings: clip_settings,
            handle,
            named_handle,
            animation,
            targets,
        });
    }
    Ifp {
        file: package,
        clips,
        named_clips,
        warnings,
        game,
    }
}
