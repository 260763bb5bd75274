//! The [`Dan`] asset: a `.dan` file with its clip as a labelled [`RigClip`] and `AnimationClip`.

use super::{DanLoaderSettings, FlatSkeleton};
use crate::animation::Clip;
use crate::formats::dan::DanFile;
use crate::plugin::load::labelled;
use crate::plugin::skeletal::RigClip;
use bevy::animation::AnimationTargetId;
use bevy::asset::AssetPath;
use bevy::prelude::*;
use std::sync::Arc;

/// A loaded `.dan` file: the file's data, its clip in the engine-neutral model (Bevy axes) and
/// the handles of its labelled [`RigClip`] and `AnimationClip`.
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Dan {
    /// Everything the file holds, as stored (see [`crate::formats::dan`]).
    pub file: DanFile,
    /// The clip in Bevy's axes, positions times [`DanLoaderSettings::scale`].
    pub clip: Arc<Clip>,
    /// The clip as rigplay plays it, labelled `Clip0` ([`DanAssetLabel::Clip`]).
    pub handle: Handle<RigClip>,
    /// The clip as Bevy's `AnimationClip`, labelled `Animation0` ([`DanAssetLabel::Animation`]).
    pub animation: Handle<AnimationClip>,
    /// The rate the clip's keys were sampled at ([`Clip::frame_rate`]), worked out once.
    pub frame_rate: Option<f32>,
    /// The bone names the tracks target, one per bone of the file.
    pub bone_names: Vec<String>,
    /// The animation target id of each track.
    pub targets: Vec<AnimationTargetId>,
    /// What the reader tolerated, one line each.
    pub warnings: Vec<String>,
    /// The settings it was loaded with.
    pub settings: DanLoaderSettings,
}

impl Dan {
    /// A [`FlatSkeleton`] with this file's bones, to spawn for playing its clip.
    pub fn skeleton(&self) -> FlatSkeleton {
        FlatSkeleton {
            names: self.bone_names.clone(),
            links: self.settings.bone_links.clone(),
        }
    }
}

/// Labels of a `.dan` file's sub-assets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DanAssetLabel {
    /// The file's one clip, as the [`RigClip`] rigplay plays: `"arm.dan#Clip0"`, the label of
    /// an `.ifp` file's first clip, so that code can treat both alike.
    Clip,
    /// The same clip as Bevy's `AnimationClip`: `"arm.dan#Animation0"`.
    Animation,
}

impl std::fmt::Display for DanAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DanAssetLabel::Clip => f.write_str("Clip0"),
            DanAssetLabel::Animation => f.write_str("Animation0"),
        }
    }
}

impl DanAssetLabel {
    /// The full asset path of this label in the file at `path`.
    pub fn from_asset(&self, path: impl Into<AssetPath<'static>>) -> AssetPath<'static> {
        labelled(path, self)
    }
}
