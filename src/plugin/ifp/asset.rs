//! The [`Ifp`] asset: an `.ifp` package with its clips as labelled `AnimationClip`s.

use crate::anim::Clip;
use crate::anim::names::{ClipNameError, find_clip};
use crate::formats::ifp::IfpPackage;
use crate::plugin::load::labelled;
use crate::plugin::skeletal::ClipSettings;
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::AssetPath;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded `.ifp` file, like bevy_gltf's `Gltf`: the file's data, and per clip its engine-neutral
/// form, its settings and the handle of its labelled `AnimationClip`.
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Ifp {
    /// Everything the file holds (see [`crate::formats::ifp`]).
    pub package: IfpPackage,
    /// One per clip, in file order.
    pub clips: Vec<IfpClipAsset>,
    /// Clip index by name (the first clip of each name).
    pub named_clips: HashMap<String, usize>,
    /// What the reader tolerated, one line each.
    pub warnings: Vec<String>,
    /// The game whose skeleton the clips were bound to.
    pub game: GtaGame,
}

/// One clip of an [`Ifp`] asset.
#[derive(Debug)]
pub struct IfpClipAsset {
    /// The clip's name as stored.
    pub name: String,
    /// The clip in the engine-neutral model, as in the file (root motion not removed).
    pub clip: Arc<Clip>,
    /// How the clip plays, from the loader's settings.
    pub settings: ClipSettings,
    /// The clip as a Bevy `AnimationClip`, labelled by index (`Clip0`).
    pub handle: Handle<AnimationClip>,
    /// The same clip labelled by its name, when the name could be a label.
    pub named_handle: Option<Handle<AnimationClip>>,
    /// The rate the clip's keys were sampled at ([`Clip::frame_rate`]), worked out once.
    pub frame_rate: Option<f32>,
    /// The animation target id of each track, as [`crate::plugin::bone_target_id`] gives it.
    pub targets: Vec<AnimationTargetId>,
}

impl Ifp {
    /// A clip by name, matched as the games match names ([`crate::anim::names`]): the exact
    /// name, else the one clip whose name differs only in case; `None` when no clip has the
    /// name or several have it in other cases ([`Ifp::find_clip`] says which).
    pub fn clip(&self, name: &str) -> Option<&IfpClipAsset> {
        self.find_clip(name).ok()
    }

    /// [`Ifp::clip`], saying why no clip was found: none has the name (with the closest
    /// names), or several have it in other cases.
    pub fn find_clip(&self, name: &str) -> Result<&IfpClipAsset, ClipNameError> {
        let i = find_clip(self.clips.iter().map(|c| c.name.as_str()), name)?;
        Ok(&self.clips[i])
    }

    /// The handle of the clip a user names (case-insensitively, see [`Ifp::find_clip`]): what
    /// to play for a name typed on a command line, where Bevy's label (`FILE.ifp#NAME`) must be
    /// exact.
    pub fn clip_handle(&self, name: &str) -> Result<Handle<AnimationClip>, ClipNameError> {
        self.find_clip(name).map(|c| c.handle.clone())
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
        labelled(path, self)
    }
}
