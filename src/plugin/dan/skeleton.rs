//! [`FlatSkeleton`]: the bones a DAN clip drives.

use crate::plugin::skeletal::{BoneLink, RigBone, SkeletonBones, named_bone_target_id};
use bevy::animation::AnimatedBy;
use bevy::prelude::*;

/// Put on an entity to give it one child bone per name, all directly under it (DAN keys are
/// model-space: each bone's key is its whole transform in the model, so no hierarchy is needed
/// to play them), named as given, at the identity. Like [`crate::plugin::GtaSkeleton`], the entity gets
/// an `AnimationPlayer` and [`SkeletonBones`]; [`crate::plugin::SkeletalClip`] and [`crate::plugin::PlayAnimation`]
/// play clips on it. [`crate::plugin::Dan::skeleton`] gives the one a file needs.
#[derive(Component, Debug, Clone, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Default)]
#[cfg_attr(feature = "render", require(Transform, Visibility))]
#[cfg_attr(not(feature = "render"), require(Transform))]
pub struct FlatSkeleton {
    /// The bones' names, one bone each.
    pub names: Vec<String>,
    /// For drawing only: per bone, the bone it is drawn linked to ([`BoneLink`]).
    pub links: Vec<Option<usize>>,
}

impl FlatSkeleton {
    /// `count` bones named `bone_0` … `bone_<count − 1>`, as a DAN file without names gives.
    pub fn numbered(count: usize) -> Self {
        Self {
            names: (0..count).map(|i| format!("bone_{i}")).collect(),
            links: Vec::new(),
        }
    }
}

/// Spawns the bones of a [`FlatSkeleton`] when it is added.
pub(crate) fn spawn_flat_skeleton(
    add: On<Add, FlatSkeleton>,
    skeletons: Query<(
        &FlatSkeleton,
        Has<AnimationPlayer>,
        Has<AnimationGraphHandle>,
        Has<Name>,
    )>,
    mut commands: Commands,
) {
    let root = add.event_target();
    let Ok((skeleton, has_player, has_graph, has_name)) = skeletons.get(root) else {
        return;
    };
    let mut entities = Vec::with_capacity(skeleton.names.len());
    for (i, name) in skeleton.names.iter().enumerate() {
        let target = named_bone_target_id(name);
        let mut bone = commands.spawn((
            Name::new(name.clone()),
            Transform::IDENTITY,
            crate::plugin::visible(),
            RigBone {
                index: Some(i),
                rest: Transform::IDENTITY,
                target,
            },
            target,
            ChildOf(root),
        ));
        // Bevy's player drives it only while the root has a graph (`give_bones_to_graph`).
        if has_graph {
            bone.insert(AnimatedBy(root));
        }
        entities.push(bone.id());
    }
    for (i, link) in skeleton.links.iter().enumerate() {
        if let (Some(&from), Some(&to)) = (entities.get(i), link.and_then(|l| entities.get(l))) {
            commands.entity(from).insert(BoneLink(to));
        }
    }
    let mut root_commands = commands.entity(root);
    root_commands.insert(SkeletonBones(entities));
    if !has_player {
        root_commands.insert(AnimationPlayer::default());
    }
    if !has_name {
        root_commands.insert(Name::new("dan skeleton"));
    }
}
