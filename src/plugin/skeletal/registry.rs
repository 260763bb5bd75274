//! The [`ClipRegistry`]: what rigplay knows of every skeletal clip it loaded, by the id of the
//! clip's `AnimationClip`. Every format's loader fills it; [`super::SkeletalClip`] plays from it.

use super::ClipSettings;
use crate::anim::Clip;
use crate::anim::retarget::RetargetSource;
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// What rigplay knows of every clip it loaded, by the clip's asset id: filled by the loaders
/// themselves, so that it is there even when nothing holds the file's root asset.
#[derive(Resource, Clone, Default)]
pub struct ClipRegistry(Arc<RegistryInner>);

#[derive(Default)]
struct RegistryInner {
    clips: RwLock<HashMap<AssetId<AnimationClip>, Arc<ClipInfo>>>,
    /// The clips each file's last good load registered, by asset path.
    files: RwLock<HashMap<String, Vec<AssetId<AnimationClip>>>>,
    /// Counts changes, so that users may keep what they looked up until it moves.
    generation: AtomicU64,
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

impl ClipRegistry {
    /// Registers a clip under an `AnimationClip`'s id: what the loaders do for every clip they
    /// load, and what code that makes its own clips does.
    pub fn insert(&self, id: AssetId<AnimationClip>, info: Arc<ClipInfo>) {
        if let Ok(mut map) = self.0.clips.write() {
            map.insert(id, info);
        }
        self.0.generation.fetch_add(1, Ordering::Release);
    }

    /// The clip behind an `AnimationClip` that a rigplay loader loaded (or that was inserted).
    pub fn get(&self, id: AssetId<AnimationClip>) -> Option<Arc<ClipInfo>> {
        self.0
            .clips
            .read()
            .ok()
            .and_then(|map| map.get(&id).cloned())
    }

    /// Changes whenever a clip is added, replaced or forgotten: what [`Self::get`] returned
    /// stays current while this stays the same.
    pub fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::Acquire)
    }

    /// Records the clips a file's load registered; those its previous load had and this one
    /// has not (clips removed from the file, then reloaded) are forgotten, so that characters
    /// playing them stop. A load that fails never gets here: the last good clips stay.
    pub(crate) fn file_loaded(&self, file: String, ids: Vec<AssetId<AnimationClip>>) {
        let old = self
            .0
            .files
            .write()
            .ok()
            .and_then(|mut files| files.insert(file, ids.clone()));
        for id in old.unwrap_or_default() {
            if !ids.contains(&id) {
                self.forget(id);
            }
        }
    }

    pub(crate) fn forget(&self, id: AssetId<AnimationClip>) {
        if let Ok(mut map) = self.0.clips.write() {
            map.remove(&id);
        }
        self.0.generation.fetch_add(1, Ordering::Release);
    }
}

/// Drops the entries of clips that were unloaded.
pub(crate) fn forget_unloaded_clips(
    mut events: MessageReader<AssetEvent<AnimationClip>>,
    registry: Res<ClipRegistry>,
) {
    for event in events.read() {
        if let AssetEvent::Removed { id } = event {
            registry.forget(*id);
        }
    }
}
