//! [`RigClip`], the asset every rigplay loader makes of each skeletal clip it reads, and what
//! the playing components hold; [`ClipInfo`], what it carries; [`LoadedClips`], how the wing's
//! systems look clips up and notice that one was added, reloaded or removed.

use super::ClipSettings;
use crate::animation::Clip;
use crate::animation::retarget::RetargetSource;
use bevy::animation::AnimationTargetId;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use std::sync::Arc;

/// A skeletal clip as rigplay plays it: the asset each rigplay loader makes of every clip it
/// reads (`"anims/ped.ifp#walk_civi"`, `"anims/lamp.dan#Clip0"`), and what [`super::SkeletalClip`],
/// [`super::ClipLayers`], [`super::CrowdCharacter`] and [`super::PlayAnimation`] hold.
///
/// It carries the clip once, in the engine-neutral model ([`ClipInfo`]), and the handle of the
/// same clip as Bevy's own `AnimationClip` (the file's `Animation{index}` label), for Bevy's
/// `AnimationPlayer` and `AnimationGraph`. A reload replaces it in place: characters playing it
/// keep their playheads and play the new keys.
///
/// Code that makes its own clips adds one with [`RigClip::new`] and `Assets::add`.
#[derive(Asset, TypePath, Debug, Clone)]
pub struct RigClip {
    info: Arc<ClipInfo>,
    /// The same clip as Bevy's `AnimationClip`.
    pub animation: Handle<AnimationClip>,
}

impl RigClip {
    /// The clip described by `info`, and the same clip as Bevy's `AnimationClip`.
    pub fn new(info: impl Into<Arc<ClipInfo>>, animation: Handle<AnimationClip>) -> Self {
        Self {
            info: info.into(),
            animation,
        }
    }

    /// What the clip is: the engine-neutral clip, as read and as played, its settings, its
    /// tracks' targets and its source skeleton. Shared by every copy of this asset.
    pub fn info(&self) -> &Arc<ClipInfo> {
        &self.info
    }
}

impl std::ops::Deref for RigClip {
    type Target = ClipInfo;
    fn deref(&self) -> &ClipInfo {
        &self.info
    }
}

/// One loaded clip: its engine-neutral form and settings, and its tracks' targets. Made by
/// [`ClipInfo::new`], which takes root motion out of the clip once, for every player.
#[derive(Debug)]
pub struct ClipInfo {
    /// The clip in the engine-neutral model, as the file has it (root motion not removed):
    /// where root motion is read from.
    pub clip: Arc<Clip>,
    /// The clip as characters play it: the root's extracted axes held at its first key
    /// ([`Clip::with_root_held`], as [`ClipSettings::root_motion`] says). The same `Arc` as
    /// `clip` when nothing is extracted.
    pub played: Arc<Clip>,
    /// How the clip is meant to play.
    pub settings: ClipSettings,
    /// Target id and description ("name (id N)") of each track.
    pub tracks: Vec<(AnimationTargetId, String)>,
    /// The track of the skeleton's root bone, which carries root motion.
    pub root_track: Option<usize>,
    /// The skeleton the clip was made for (its rest pose, names and axes), which a
    /// [`super::Retarget`] character's rest-pose compensation starts from; `None` plays the
    /// clip on such a character by bone name only.
    pub source: Option<Arc<RetargetSource>>,
}

impl ClipInfo {
    /// A clip's entry, with the clip as played built from it (root motion taken out of the
    /// `root_track` on the axes `settings` extract).
    pub fn new(
        clip: Arc<Clip>,
        settings: ClipSettings,
        tracks: Vec<(AnimationTargetId, String)>,
        root_track: Option<usize>,
        source: Option<Arc<RetargetSource>>,
    ) -> Self {
        let axes = settings.root_motion.extracted_axes();
        let played = match root_track {
            Some(root) if axes != Vec3::ZERO => Arc::new(clip.with_root_held(root, axes)),
            _ => clip.clone(),
        };
        Self {
            clip,
            played,
            settings,
            tracks,
            root_track,
            source,
        }
    }

    /// The same clip with other settings (the clip as played built again).
    pub fn with_settings(&self, settings: ClipSettings) -> Self {
        Self::new(
            self.clip.clone(),
            settings,
            self.tracks.clone(),
            self.root_track,
            self.source.clone(),
        )
    }
}

/// The loaded clips, as the wing's systems look them up.
#[derive(SystemParam)]
pub(crate) struct LoadedClips<'w> {
    clips: Res<'w, Assets<RigClip>>,
}

impl LoadedClips<'_> {
    /// The clip behind a handle's id, when loaded.
    pub(crate) fn get(&self, id: AssetId<RigClip>) -> Option<Arc<ClipInfo>> {
        self.clips.get(id).map(|c| c.info.clone())
    }

    /// Changes whenever a clip is added, replaced or removed: what [`Self::get`] returned stays
    /// current while this stays the same.
    pub(crate) fn generation(&self) -> u64 {
        // The tick at which a clip asset was last added, replaced or removed.
        u64::from(self.clips.last_changed().get())
    }
}
