//! The bones the skeletal wing drives, and which track drives which: animation target ids that
//! do not depend on the hierarchy.
//!
//! Bevy's glTF loader derives target ids from paths of names. rigplay instead gives every bone
//! an id from what the bone *is*: its canonical SA bone id when the alias table knows it
//! (`Pelvis`, ` Pelvis`, `Swaist` and bone tag 1 are one bone), else its normalised name. So one
//! `AnimationClip` plays on the built-in skeletons and on any character whose bones are named
//! (or tagged with [`GtaBoneId`]) like GTA's.

use crate::animation::{BonePose, BoneRef};
use crate::skeleton::{BoneIdentity, Skeleton, bone_key, canonical_bone_id};
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::prelude::*;

/// A bone driven by rigplay: its rest transform (what it returns to when a clip does not animate
/// it) and its animation target id.
#[derive(Component, Debug, Clone, Copy, PartialEq, Reflect)]
#[reflect(Component)]
pub struct RigBone {
    /// The bone's index in its skeleton (built-in GTA or flat), `None` on a retargeted hierarchy.
    pub index: Option<usize>,
    /// The local transform the bone rests at.
    pub rest: Transform,
    /// The target id tracks bind to.
    pub target: AnimationTargetId,
}

/// The bone entities of a spawned skeleton, in the skeleton's bone order.
#[derive(Component, Debug, Clone, Default, Reflect)]
#[reflect(Component)]
pub struct SkeletonBones(#[entities] pub Vec<Entity>);

/// Draws a gizmo line from this bone to another one that is not its parent entity (the bones
/// of a flat skeleton are all children of the character).
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct BoneLink(#[entities] pub Entity);

/// A GTA bone id (tag) on an entity of a custom hierarchy, for clips that bind by id.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[reflect(Component)]
pub struct GtaBoneId(pub i32);

/// The target id of a canonical GTA bone, else of a normalised name.
pub(crate) fn target_for(canonical: Option<i32>, name: &str) -> AnimationTargetId {
    match canonical {
        Some(c) => identity_target(&BoneIdentity::Canonical(c)),
        None => identity_target(&BoneIdentity::Name(bone_key(name))),
    }
}

/// The animation target id of a bone that is `identity` ([`Skeleton::identity`]).
pub(crate) fn identity_target(identity: &BoneIdentity) -> AnimationTargetId {
    let key = match identity {
        BoneIdentity::Canonical(c) => format!("rigplay:gta-bone:{c}"),
        BoneIdentity::Name(key) => format!("rigplay:bone:{key}"),
    };
    AnimationTargetId::from_name(&Name::new(key))
}

/// The animation target id of a bone: from its canonical bone (found in `skeleton` by id, name
/// or alias), else from its normalised name ([`Skeleton::identity`]).
pub fn bone_target_id(skeleton: &Skeleton, bone: &BoneRef) -> AnimationTargetId {
    identity_target(&skeleton.identity(bone))
}

/// The animation target id of a bone known only by name (a DAN bone, say): the id a
/// [`super::Retarget`] hierarchy's bone of the same name (normalised) gets.
pub fn named_bone_target_id(name: &str) -> AnimationTargetId {
    target_for(canonical_bone_id(&bone_key(name)), name)
}

/// Puts `AnimatedBy(root)` on the bones of a character whose root can now play Bevy clips (it
/// has just been given an `AnimationGraphHandle`).
///
/// rigplay's bones carry `AnimatedBy` only while their character plays through Bevy's
/// `AnimationPlayer`: Bevy's `animate_targets` visits every entity with `AnimatedBy` each frame
/// and looks its player up, even where the player has no graph and nothing plays. On bones that
/// rigplay's own `Playback` poses, that visit was more than half of the frame of 1,000 idle SA
/// skeletons (`benches/playback.rs`, `layers/idle`; `docs/performance.md`). The spawners put it on
/// at once where the root already has a graph.
pub(crate) fn give_bones_to_graph(
    insert: On<Insert, AnimationGraphHandle>,
    children: Query<&Children>,
    kinds: Query<(Has<RigBone>, Has<SkeletonBones>, Has<super::Retarget>)>,
    mut commands: Commands,
) {
    let root = insert.event_target();
    each_bone(root, &children, &kinds, |bone| {
        commands.entity(bone).try_insert(AnimatedBy(root));
    });
}

/// Takes `AnimatedBy(root)` off the bones of a character whose root has lost its
/// `AnimationGraphHandle` (nothing plays through its `AnimationPlayer` any more), leaving an
/// `AnimatedBy` that names another player alone.
pub(crate) fn take_bones_from_graph(
    remove: On<Remove, AnimationGraphHandle>,
    children: Query<&Children>,
    kinds: Query<(Has<RigBone>, Has<SkeletonBones>, Has<super::Retarget>)>,
    animated_by: Query<&AnimatedBy>,
    mut commands: Commands,
) {
    let root = remove.event_target();
    each_bone(root, &children, &kinds, |bone| {
        if animated_by.get(bone).is_ok_and(|a| a.0 == root) {
            commands.entity(bone).try_remove::<AnimatedBy>();
        }
    });
}

/// Calls `f` on every bone ([`RigBone`]) below `root`, not looking inside another character
/// (an entity with [`SkeletonBones`] or a [`super::Retarget`] of its own). An animated glTF scene's
/// own `AnimationPlayer` below a `Retarget` root is no boundary: its nodes are the root's bones.
fn each_bone(
    root: Entity,
    children: &Query<&Children>,
    kinds: &Query<(Has<RigBone>, Has<SkeletonBones>, Has<super::Retarget>)>,
    mut f: impl FnMut(Entity),
) {
    let mut below: Vec<Entity> = children.get(root).map(|c| c.to_vec()).unwrap_or_default();
    while let Some(e) = below.pop() {
        let (bone, skeleton, retarget) = kinds.get(e).unwrap_or_default();
        if skeleton || retarget {
            continue;
        }
        if bone {
            f(e);
        }
        below.extend(children.get(e).into_iter().flatten());
    }
}

/// A bone's local transform as Bevy's `Transform` (the same three parts).
impl From<BonePose> for Transform {
    #[inline]
    fn from(p: BonePose) -> Self {
        Transform {
            translation: p.translation,
            rotation: p.rotation,
            scale: p.scale,
        }
    }
}

/// A `Transform` as the engine-neutral local pose.
impl From<Transform> for BonePose {
    fn from(t: Transform) -> Self {
        BonePose {
            rotation: t.rotation,
            translation: t.translation,
            scale: t.scale,
        }
    }
}
