//! Skeletons drawn with gizmos (lines from each bone to its parent, joint spheres) and bone
//! names as UI labels that follow their joints.

use super::{BoneLink, RigBone};
use bevy::prelude::*;

/// How skeletons are drawn (needs `GizmoPlugin`, part of `DefaultPlugins`).
#[derive(Resource, Debug, Clone)]
pub struct SkeletonGizmos {
    /// Whether skeletons are drawn at all.
    pub enabled: bool,
    /// Radius of the joint spheres, metres (0 draws none).
    pub joint_radius: f32,
    /// Colour of the lines and spheres.
    pub color: Color,
    /// Bone names next to their joints (needs a 3D camera and bevy_ui).
    pub names: bool,
    /// Draw the skeleton in front of everything, so that it shows through a skinned model
    /// (a [`crate::plugin::GtaModel`], say); else meshes hide the bones inside them.
    pub on_top: bool,
}

/// The gizmo group skeletons are drawn in (its depth bias follows [`SkeletonGizmos::on_top`]).
#[derive(Default, Reflect, GizmoConfigGroup)]
pub struct SkeletonGizmoGroup;

impl Default for SkeletonGizmos {
    fn default() -> Self {
        Self {
            enabled: true,
            joint_radius: 0.02,
            color: Color::srgb(0.95, 0.8, 0.2),
            names: false,
            on_top: false,
        }
    }
}

/// Draws every rig bone: a line from its parent (or its [`BoneLink`]) and a joint sphere.
pub(crate) fn draw_skeletons(
    gizmos: Option<Gizmos<SkeletonGizmoGroup>>,
    settings: Res<SkeletonGizmos>,
    bones: Query<(&GlobalTransform, &ChildOf, Option<&BoneLink>), With<RigBone>>,
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

/// Gives the skeleton gizmo group the depth bias [`SkeletonGizmos::on_top`] asks for.
pub(crate) fn sync_gizmo_config(
    settings: Res<SkeletonGizmos>,
    store: Option<ResMut<GizmoConfigStore>>,
) {
    let Some(mut store) = store else { return };
    let bias = if settings.on_top { -1.0 } else { 0.0 };
    let (config, _) = store.config_mut::<SkeletonGizmoGroup>();
    if config.depth_bias != bias {
        config.depth_bias = bias;
    }
}

/// A UI label that follows a bone's joint on screen.
#[derive(Component)]
pub(crate) struct BoneNameLabel(Entity);

/// Keeps a UI label with its name next to every rig bone's joint on screen.
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
