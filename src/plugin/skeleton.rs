//! Built-in GTA skeletons as Bevy entity hierarchies, drawn with gizmos, and [`PlayAnimation`].

use super::retarget::bone_target_id;
use crate::anim::BoneRef;
use crate::coords::GTA_TO_BEVY;
use crate::skeleton::Skeleton;
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::prelude::*;

/// Put on an entity to give it a GTA ped skeleton: a child "basis" entity turns GTA's Z-up into
/// Bevy's Y-up (and lifts the skeleton so that its feet rest on the entity's origin), and under
/// it one entity per bone, named as the game names it, in its rest pose. The entity gets an
/// `AnimationPlayer`; [`PlayAnimation`] plays a clip on it.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Reflect)]
#[require(Transform, Visibility)]
pub enum GtaSkeleton {
    Sa,
    Vc,
    Iii,
}

impl GtaSkeleton {
    pub fn skeleton(self) -> Skeleton {
        match self {
            GtaSkeleton::Sa => Skeleton::gta_sa(),
            GtaSkeleton::Vc => Skeleton::gta_vc(),
            GtaSkeleton::Iii => Skeleton::gta_iii(),
        }
    }
}

/// A bone driven by rigplay: its rest transform (what it returns to when a clip does not animate
/// it) and its animation target id. `index` is the bone's index in a built-in skeleton.
#[derive(Component, Debug, Clone, Copy, PartialEq)]
pub struct RigBone {
    pub index: Option<usize>,
    pub rest: Transform,
    pub target: AnimationTargetId,
}

/// The bone entities of a [`GtaSkeleton`], in the skeleton's bone order.
#[derive(Component, Debug, Clone, Default)]
pub struct SkeletonBones(pub Vec<Entity>);

/// Plays a clip on a character with Bevy's `AnimationPlayer`: the clip starts over when this
/// changes, and bones it does not animate go back to their rest pose.
#[derive(Component, Debug, Clone)]
pub struct PlayAnimation {
    pub clip: Handle<AnimationClip>,
    pub repeat: bool,
    pub speed: f32,
}

impl PlayAnimation {
    /// Plays `clip` looped at normal speed.
    pub fn looping(clip: Handle<AnimationClip>) -> Self {
        Self {
            clip,
            repeat: true,
            speed: 1.0,
        }
    }

    /// Plays `clip` once, then holds its last pose.
    pub fn once(clip: Handle<AnimationClip>) -> Self {
        Self {
            clip,
            repeat: false,
            speed: 1.0,
        }
    }
}

/// The graph node [`PlayAnimation`] started, for systems that read the player's time.
#[derive(Component, Debug, Clone, Copy)]
pub struct PlayingNode(pub AnimationNodeIndex);

/// How skeletons are drawn (needs `GizmoPlugin`, part of `DefaultPlugins`).
#[derive(Resource, Debug, Clone)]
pub struct SkeletonGizmos {
    pub enabled: bool,
    /// Radius of the joint spheres, metres (0 draws none).
    pub joint_radius: f32,
    pub color: Color,
    /// Bone names next to their joints (needs a 3D camera and bevy_ui).
    pub names: bool,
}

impl Default for SkeletonGizmos {
    fn default() -> Self {
        Self {
            enabled: true,
            joint_radius: 0.02,
            color: Color::srgb(0.95, 0.8, 0.2),
            names: false,
        }
    }
}

pub(crate) fn spawn_skeleton(
    add: On<Add, GtaSkeleton>,
    kinds: Query<(&GtaSkeleton, Has<AnimationPlayer>, Has<Name>)>,
    mut commands: Commands,
) {
    let root = add.event_target();
    let Ok((kind, has_player, has_name)) = kinds.get(root) else {
        return;
    };
    let skeleton = kind.skeleton();
    let rest = skeleton.rest_pose();
    // Lift the skeleton so that its lowest joint rests at the entity's origin.
    let lowest = skeleton
        .model_space(&rest)
        .iter()
        .map(|(_, p)| p.z)
        .fold(0.0, f32::min);
    let basis = commands
        .spawn((
            Name::new("gta basis"),
            Transform {
                translation: Vec3::Y * -lowest,
                rotation: GTA_TO_BEVY,
                scale: Vec3::ONE,
            },
            Visibility::default(),
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
        let entity = commands
            .spawn((
                Name::new(bone.name.clone()),
                transform,
                Visibility::default(),
                RigBone {
                    index: Some(i),
                    rest: transform,
                    target,
                },
                target,
                AnimatedBy(root),
                ChildOf(parent),
            ))
            .id();
        entities.push(entity);
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

pub(crate) fn start_animations(
    mut commands: Commands,
    mut players: Query<
        (Entity, &PlayAnimation, Option<&mut AnimationPlayer>),
        Changed<PlayAnimation>,
    >,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    children: Query<&Children>,
    mut bones: Query<(&RigBone, &mut Transform)>,
) {
    for (entity, play, player) in &mut players {
        let (graph, node) = AnimationGraph::from_clip(play.clip.clone());
        let start = |player: &mut AnimationPlayer| {
            player.stop_all();
            let active = player.play(node);
            active.set_speed(play.speed);
            if play.repeat {
                active.repeat();
            }
        };
        let mut e = commands.entity(entity);
        e.insert((AnimationGraphHandle(graphs.add(graph)), PlayingNode(node)));
        match player {
            Some(mut player) => start(&mut player),
            None => {
                let mut player = AnimationPlayer::default();
                start(&mut player);
                e.insert(player);
            }
        }
        // Bones the new clip does not animate go back to rest, not the last clip's pose.
        for bone in children.iter_descendants(entity) {
            if let Ok((rig, mut transform)) = bones.get_mut(bone) {
                *transform = rig.rest;
            }
        }
    }
}

pub(crate) fn draw_skeletons(
    gizmos: Option<Gizmos>,
    settings: Res<SkeletonGizmos>,
    bones: Query<(&GlobalTransform, &ChildOf, Option<&super::dan::BoneLink>), With<RigBone>>,
    parents: Query<&GlobalTransform, With<RigBone>>,
) {
    let Some(mut gizmos) = gizmos else { return };
    if !settings.enabled {
        return;
    }
    for (transform, child_of, link) in &bones {
        let at = transform.translation();
        let from = link.map_or(child_of.parent(), |l| l.0);
        if let Ok(parent) = parents.get(from) {
            gizmos.line(parent.translation(), at, settings.color);
        }
        if settings.joint_radius > 0.0 {
            gizmos
                .sphere(at, settings.joint_radius, settings.color)
                .resolution(8);
        }
    }
}

/// A UI label that follows a bone's joint on screen.
#[derive(Component)]
pub(crate) struct BoneNameLabel(Entity);

pub(crate) fn place_bone_names(
    mut commands: Commands,
    settings: Res<SkeletonGizmos>,
    bones: Query<(Entity, &GlobalTransform, &Name), With<RigBone>>,
    mut labels: Query<(Entity, &BoneNameLabel, &mut Node)>,
    cameras: Query<(&Camera, &GlobalTransform), With<Camera3d>>,
    mut labelled: Local<bevy::platform::collections::HashSet<Entity>>,
) {
    if !settings.names || !settings.enabled {
        for (label, _, _) in &labels {
            commands.entity(label).despawn();
        }
        labelled.clear();
        return;
    }
    let Some((camera, camera_transform)) = cameras.iter().find(|(c, _)| c.is_active) else {
        return;
    };
    for (label, BoneNameLabel(bone), mut node) in &mut labels {
        match bones.get(*bone).ok().and_then(|(_, t, _)| {
            camera
                .world_to_viewport(camera_transform, t.translation())
                .ok()
        }) {
            Some(p) => {
                node.left = Val::Px(p.x + 4.0);
                node.top = Val::Px(p.y - 8.0);
            }
            None => {
                commands.entity(label).despawn();
                labelled.remove(bone);
            }
        }
    }
    for (bone, _, name) in &bones {
        if labelled.insert(bone) {
            commands.spawn((
                BoneNameLabel(bone),
                Text::new(name.as_str().trim()),
                TextFont {
                    font_size: FontSize::Px(11.0),
                    ..default()
                },
                Node {
                    position_type: PositionType::Absolute,
                    ..default()
                },
            ));
        }
    }
}
