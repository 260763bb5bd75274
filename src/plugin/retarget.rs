//! Which entity each track drives: animation target ids that do not depend on the hierarchy.
//!
//! Bevy's glTF loader derives target ids from paths of names. rigplay instead gives every bone
//! an id from what the bone *is*: its canonical SA bone id when the alias table knows it
//! (`Pelvis`, ` Pelvis`, `Swaist` and bone tag 1 are one bone), else its normalised name. So one
//! `AnimationClip` plays on the built-in skeletons and on any character whose bones are named
//! (or tagged with [`GtaBoneId`]) like GTA's.

use super::asset::{ClipSettings, SkeletonKind};
use super::skeleton::{PlayAnimation, RigBone};
use crate::anim::{BoneRef, Clip};
use crate::formats::ifp::bone_key;
use crate::skeleton::{Skeleton, canonical_bone_id};
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

fn target_for(canonical: Option<i32>, name: &str) -> AnimationTargetId {
    let key = match canonical {
        Some(c) => format!("rigplay:gta-bone:{c}"),
        None => format!("rigplay:bone:{}", bone_key(name)),
    };
    AnimationTargetId::from_name(&Name::new(key))
}

/// The animation target id of a bone: from its canonical bone (found in `skeleton` by id, name
/// or alias), else from its normalised name.
pub fn bone_target_id(skeleton: &Skeleton, bone: &BoneRef) -> AnimationTargetId {
    let canonical = match skeleton.find(bone) {
        Some(i) => skeleton.bones[i].canonical,
        None => canonical_bone_id(&bone_key(&bone.name)),
    };
    target_for(canonical, &bone.name)
}

/// The animation target id of a bone known only by name (a DAN bone, say): the id a
/// [`Retarget`] hierarchy's bone of the same name (normalised) gets when no GTA bone matches.
pub fn named_bone_target_id(name: &str) -> AnimationTargetId {
    target_for(canonical_bone_id(&bone_key(name)), name)
}

/// A GTA bone id (tag) on an entity of a custom hierarchy, for clips that bind by id.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
pub struct GtaBoneId(pub i32);

/// Put on the root of any named hierarchy (a glTF character's scene root, say) to let `.ifp`
/// clips drive it: every descendant whose name (after normalisation and the alias table) or
/// [`GtaBoneId`] names a GTA bone becomes an animation target of this root's `AnimationPlayer`.
/// Bones that appear later (a scene still spawning) are bound when they do.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[require(Transform)]
pub struct Retarget {
    /// The game whose bone ids [`GtaBoneId`] values are.
    pub skeleton: SkeletonKind,
}

/// What rigplay knows of every `.ifp` clip it loaded, by the clip's asset id: filled by the
/// loader itself, so that it is there even when nothing holds the file's root asset.
#[derive(Resource, Clone, Default)]
pub struct ClipRegistry(Arc<RegistryInner>);

#[derive(Default)]
struct RegistryInner {
    clips: RwLock<HashMap<AssetId<AnimationClip>, Arc<ClipInfo>>>,
    /// Counts changes, so that users may keep what they looked up until it moves.
    generation: AtomicU64,
}

/// One loaded clip: its engine-neutral form and settings, and its tracks' targets.
#[derive(Debug)]
pub struct ClipInfo {
    pub clip: Arc<Clip>,
    pub settings: ClipSettings,
    /// The GTA skeleton the clip was bound to (`None` for formats without one, such as DAN).
    pub skeleton: Option<SkeletonKind>,
    /// Target id and description ("name (id N)") of each track.
    pub tracks: Vec<(AnimationTargetId, String)>,
    /// The track of the skeleton's root bone, which carries root motion.
    pub root_track: Option<usize>,
}

impl ClipRegistry {
    /// Registers a clip for [`super::Playback`] under an `AnimationClip`'s id: what the loaders
    /// do for every clip they load, and what code that makes its own clips (or drives something
    /// else by a playback's time) does.
    pub fn insert(&self, id: AssetId<AnimationClip>, info: Arc<ClipInfo>) {
        if let Ok(mut map) = self.0.clips.write() {
            map.insert(id, info);
        }
        self.0.generation.fetch_add(1, Ordering::Release);
    }

    /// The clip behind an `AnimationClip` loaded from an `.ifp` file.
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

/// Binds the descendants of every [`Retarget`] root that are not bound yet.
pub(crate) fn retarget(
    mut commands: Commands,
    roots: Query<(Entity, &Retarget, Has<AnimationPlayer>)>,
    children: Query<&Children>,
    bones: Query<(Option<&Name>, Option<&GtaBoneId>, &Transform), Without<RigBone>>,
    named: Query<(), Added<Name>>,
    added_roots: Query<(), Added<Retarget>>,
) {
    if named.is_empty() && added_roots.is_empty() {
        return;
    }
    for (root, retarget, has_player) in &roots {
        if !has_player {
            commands.entity(root).insert(AnimationPlayer::default());
        }
        let skeleton = retarget.skeleton.skeleton();
        for entity in children.iter_descendants(root) {
            let Ok((name, id, transform)) = bones.get(entity) else {
                continue;
            };
            let name = name.map(|n| n.as_str().to_owned()).unwrap_or_default();
            let canonical = match id {
                Some(GtaBoneId(id)) => skeleton
                    .bones
                    .iter()
                    .find(|b| b.id == Some(*id))
                    .and_then(|b| b.canonical),
                None => canonical_bone_id(&bone_key(&name)),
            };
            if canonical.is_none() && name.is_empty() {
                continue;
            }
            let target = target_for(canonical, &name);
            commands.entity(entity).insert((
                target,
                AnimatedBy(root),
                RigBone {
                    index: None,
                    rest: *transform,
                    target,
                },
            ));
        }
    }
}

/// The tracks of the playing clip that drive no bone of this character ("name (id N)" each);
/// also logged once as a warning.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct UnmatchedTracks(pub Vec<String>);

/// Reports, once per character and clip, the tracks of a playing clip that drive no bone.
pub(crate) fn warn_unmatched(
    mut commands: Commands,
    players: Query<(Entity, &PlayAnimation)>,
    children: Query<&Children>,
    bones: Query<&RigBone>,
    registry: Res<ClipRegistry>,
    mut reported: Local<HashSet<(Entity, AssetId<AnimationClip>)>>,
) {
    for (entity, play) in &players {
        let key = (entity, play.clip.id());
        if reported.contains(&key) {
            continue;
        }
        let Some(info) = registry.get(play.clip.id()) else {
            continue;
        };
        let present: HashSet<AnimationTargetId> = children
            .iter_descendants(entity)
            .filter_map(|e| bones.get(e).ok())
            .map(|b| b.target)
            .collect();
        if present.is_empty() {
            // The hierarchy is not bound yet (a scene still spawning).
            continue;
        }
        let missing: Vec<&str> = info
            .tracks
            .iter()
            .filter(|(t, _)| !present.contains(t))
            .map(|(_, d)| d.as_str())
            .collect();
        if !missing.is_empty() {
            warn!(
                "{entity}: {} tracks of the clip match no bone and are ignored: {}",
                missing.len(),
                missing.join(", ")
            );
        }
        commands.entity(entity).insert(UnmatchedTracks(
            missing.iter().map(|s| s.to_string()).collect(),
        ));
        reported.insert(key);
    }
}
