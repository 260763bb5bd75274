//! The [`Ifp`] asset: an `.ifp` package with its clips as labelled [`RigClip`]s and
//! `AnimationClip`s.

use crate::animation::Clip;
use crate::animation::names::{ClipNameError, find_clip};
use crate::formats::ifp::IfpFile;
use crate::plugin::load::labelled;
use crate::plugin::skeletal::{ClipSettings, RigClip};
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::AssetPath;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded `.ifp` file, like bevy_gltf's `Gltf`: the file's data, and per clip its engine-neutral
/// form, its settings and the handles of its labelled [`RigClip`] and `AnimationClip`.
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Ifp {
    /// Everything the file holds (see [`crate::formats::ifp`]).
    pub file: IfpFile,
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
    /// The clip as rigplay plays it, labelled by index (`Clip0`).
    pub handle: Handle<RigClip>,
    /// The same clip labelled by its name, when the name could be a label.
    pub named_handle: Option<Handle<RigClip>>,
    /// The clip as Bevy's `AnimationClip`, labelled by index (`Animation0`).
    pub animation: Handle<AnimationClip>,
    /// The rate the clip's keys were sampled at ([`Clip::frame_rate`]), worked out once.
    pub frame_rate: Option<f32>,
    /// The animation target id of each track, as [`crate::plugin::bone_target_id`] gives it.
    pub targets: Vec<AnimationTargetId>,
}

impl Ifp {
    /// A clip by name, matched as the games match names ([`crate::animation::names`]): the exact
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
    pub fn clip_handle(&self, name: &str) -> Result<Handle<RigClip>, ClipNameError> {
        self.find_clip(name).map(|c| c.handle.clone())
    }

    /// Every clip asset of the file: by index, and by name where it has a name label.
    pub fn clip_ids(&self) -> impl Iterator<Item = AssetId<RigClip>> + '_ {
        self.clips.iter().flat_map(|c| {
            std::iter::once(c.handle.id()).chain(c.named_handle.as_ref().map(|h| h.id()))
        })
    }
}

/// Labels of the sub-assets of an `.ifp` file. Each clip is a [`RigClip`], labelled by index
/// (`Clip0`) and by name (`walk_civi`), and a Bevy `AnimationClip`, labelled by index
/// (`Animation0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfpAssetLabel {
    /// `Clip{index}`: the clip at this index, in file order.
    Clip(usize),
    /// The clip's own name, e.g. `walk_civi`.
    Named(String),
    /// `Animation{index}`: the clip at this index as Bevy's `AnimationClip`.
    Animation(usize),
}

/// The prefixes of the index labels, `Clip{index}` and `Animation{index}`.
const CLIP: &str = "Clip";
const ANIMATION: &str = "Animation";

impl std::fmt::Display for IfpAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IfpAssetLabel::Clip(i) => write!(f, "{CLIP}{i}"),
            IfpAssetLabel::Named(name) => f.write_str(name),
            IfpAssetLabel::Animation(i) => write!(f, "{ANIMATION}{i}"),
        }
    }
}

impl IfpAssetLabel {
    /// Whether `name` reads as an index label of a file of `clips` clips (`Clip1`,
    /// `Animation0`): a clip of that name gets no name label, which would take the index's.
    pub(crate) fn is_index_label(name: &str, clips: usize) -> bool {
        [CLIP, ANIMATION].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|d| d.parse::<usize>().is_ok_and(|i| i < clips))
        })
    }

    /// The full asset path of this label in the file at `path`.
    pub fn from_asset(&self, path: impl Into<AssetPath<'static>>) -> AssetPath<'static> {
        labelled(path, self)
    }
}

/// Removes the clips a reloaded file no longer has (a clip deleted from the package, then
/// reloaded), so that characters playing them go back to rest rather than play the old keys.
/// Bevy keeps a labelled asset that a reload does not make again while a handle holds it.
pub(crate) fn drop_clips_gone_from_files(
    mut events: MessageReader<AssetEvent<Ifp>>,
    files: Res<Assets<Ifp>>,
    server: Res<AssetServer>,
    mut clips: ResMut<Assets<RigClip>>,
) {
    for event in events.read() {
        let AssetEvent::Modified { id } = event else {
            continue;
        };
        let (Some(file), Some(path)) = (files.get(*id), server.get_path(*id)) else {
            continue;
        };
        let kept: std::collections::HashSet<_> = file.clip_ids().collect();
        let gone: Vec<AssetId<RigClip>> = clips
            .ids()
            .filter(|c| !kept.contains(c))
            .filter(|c| {
                server.get_path(*c).is_some_and(|p| {
                    p.label().is_some() && p.path() == path.path() && p.source() == path.source()
                })
            })
            .collect();
        for c in gone {
            clips.remove(c);
        }
    }
}
