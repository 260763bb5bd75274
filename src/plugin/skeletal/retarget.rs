//! [`Retarget`]: clips on any named hierarchy (a glTF character, say), bound by bone name or
//! [`GtaBoneId`], and the report of the tracks that found no bone ([`UnmatchedTracks`]).

use super::{ClipRegistry, GtaBoneId, PlayAnimation, RigBone, target_for};
use crate::anim::retarget::{BoneMap, BonePreset, MatchReport};
use crate::skeleton::{GtaGame, bone_key, canonical_bone_id};
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::prelude::*;
use std::collections::HashSet;

/// Put on the root of any named hierarchy (a glTF character's scene root, say) to let `.ifp`
/// clips drive it: every descendant whose name (after normalisation and the alias table) or
/// [`GtaBoneId`] names a GTA bone becomes an animation target of this root's `AnimationPlayer`.
/// Bones that appear later (a scene still spawning) are bound when they do.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component, Default)]
#[require(Transform)]
pub struct Retarget {
    /// The game whose bone ids [`GtaBoneId`] values are.
    pub game: GtaGame,
}

/// What a [`Retarget`] root's bone names are as humanoid bones: the naming convention found
/// (Mixamo with any prefix, VRM, Unreal's mannequin, GTA's own) and what matched, what did not
/// and which names are no humanoid bone ([`crate::anim::retarget`]). Inserted on the root, and
/// renewed as its bones appear.
#[derive(Component, Debug, Clone, PartialEq)]
pub struct RetargetReport {
    /// The naming convention that matched the most humanoid bones.
    pub preset: BonePreset,
    /// The humanoid bones found (with the index of the name in [`RetargetReport::names`]),
    /// those not found, and the names that are no humanoid bone.
    pub report: MatchReport,
    /// The descendants' names, in hierarchy order.
    pub names: Vec<String>,
}

/// Works out each [`Retarget`] root's [`RetargetReport`] when its hierarchy gains names.
pub(crate) fn report_humanoid_bones(
    mut commands: Commands,
    roots: Query<Entity, With<Retarget>>,
    children: Query<&Children>,
    names: Query<&Name>,
    named: Query<(), Added<Name>>,
    added_roots: Query<(), Added<Retarget>>,
) {
    if named.is_empty() && added_roots.is_empty() {
        return;
    }
    for root in &roots {
        let found: Vec<String> = children
            .iter_descendants(root)
            .filter_map(|e| names.get(e).ok())
            .map(|n| n.as_str().to_owned())
            .collect();
        let refs: Vec<&str> = found.iter().map(String::as_str).collect();
        let (preset, map) = BoneMap::detect(&refs);
        let report = map.report(&refs);
        commands.entity(root).insert(RetargetReport {
            preset,
            report,
            names: found,
        });
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
        let skeleton = retarget.game.skeleton();
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
