//! [`GtaSkeleton`]: the built-in GTA ped skeletons as Bevy entity hierarchies.

use crate::animation::BoneRef;
use crate::coords::GTA_TO_BEVY;
use crate::plugin::skeletal::{RigBone, SkeletonBones, bone_target_id};
use crate::skeleton::GtaGame;
use bevy::animation::AnimatedBy;
use bevy::prelude::*;

/// Put on an entity to give it a GTA ped skeleton: a child "basis" entity turns GTA's Z-up into
/// Bevy's Y-up (and lifts the skeleton so that its feet rest on the entity's origin), and under
/// it one entity per bone, named as the game names it, in its rest pose. The entity gets an
/// `AnimationPlayer`; [`crate::plugin::SkeletalClip`] (or [`crate::plugin::PlayAnimation`])
/// plays a clip on it. The bones carry Bevy's `AnimatedBy` only while the entity has an
/// `AnimationGraphHandle` (Bevy visits every `AnimatedBy` entity each frame).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/ped.ifp#walk_civi");
///     commands.spawn((GtaSkeleton::SA, SkeletalClip::new(walk)));
/// }
/// ```
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[reflect(Component)]
#[cfg_attr(feature = "render", require(Transform, Visibility))]
#[cfg_attr(not(feature = "render"), require(Transform))]
pub struct GtaSkeleton(pub GtaGame);

impl GtaSkeleton {
    /// The San Andreas ped.
    pub const SA: Self = Self(GtaGame::Sa);
    /// The Vice City ped.
    pub const VC: Self = Self(GtaGame::Vc);
    /// The GTA III ped.
    pub const III: Self = Self(GtaGame::Iii);
}

bevy::reflect::impl_reflect! {
    #[reflect(Debug, PartialEq, Default)]
    #[type_path = "rigplay::skeleton"]
    enum GtaGame {
        Iii,
        Vc,
        Sa,
    }
}

/// Spawns the bones of a [`GtaSkeleton`] when it is added.
pub(crate) fn spawn_skeleton(
    add: On<Add, GtaSkeleton>,
    kinds: Query<(
        &GtaSkeleton,
        Has<AnimationPlayer>,
        Has<AnimationGraphHandle>,
        Has<Name>,
    )>,
    mut commands: Commands,
) {
    let root = add.event_target();
    let Ok((kind, has_player, has_graph, has_name)) = kinds.get(root) else {
        return;
    };
    let skeleton = kind.0.skeleton();
    // Lift the skeleton so that its lowest joint rests at the entity's origin.
    let lowest = skeleton.lowest_rest_height();
    let basis = commands
        .spawn((
            Name::new("gta basis"),
            Transform {
                translation: Vec3::Y * -lowest,
                rotation: GTA_TO_BEVY,
                scale: Vec3::ONE,
            },
            crate::plugin::visible(),
            ChildOf(root),
        ))
        .id();
    let mut entities: Vec<Entity> = Vec::with_capacity(skeleton.bones.len());
    for (i, bone) in skeleton.bones.iter().enumerate() {
        let parent = bone.parent.map_or(basis, |p| entities[p]);
        let transform = Transform::from(bone.rest);
        let target = bone_target_id(
            &skeleton,
            &BoneRef {
                name: bone.name.clone(),
                id: bone.id,
            },
        );
        let mut entity = commands.spawn((
            Name::new(bone.name.clone()),
            transform,
            crate::plugin::visible(),
            RigBone {
                index: Some(i),
                rest: transform,
                target,
            },
            target,
            ChildOf(parent),
        ));
        // Bevy's player drives it only while the root has a graph (`give_bones_to_graph`).
        if has_graph {
            entity.insert(AnimatedBy(root));
        }
        entities.push(entity.id());
    }
    let mut root_commands = commands.entity(root);
    root_commands.insert(SkeletonBones(entities));
    if !has_player {
        root_commands.insert(AnimationPlayer::default());
    }
    if !has_name {
        root_commands.insert(Name::new(skeleton.name));
    }
}
