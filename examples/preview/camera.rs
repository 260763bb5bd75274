//! The orbit camera (left-drag orbit, right-drag pan, wheel zoom) and the scene around the
//! character: the floor grid and the selected bone.

use crate::files::Preview;
use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use rigplay::plugin::{AnieRig, RigBone};

#[derive(Resource)]
pub struct Orbit {
    pub target: Vec3,
    pub yaw: f32,
    pub pitch: f32,
    pub distance: f32,
}

#[derive(Resource, Default)]
pub struct UiPointer {
    pub over_ui: bool,
}

pub fn orbit_camera(
    mut orbit: ResMut<Orbit>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    pointer: Res<UiPointer>,
    mut dragging: Local<Option<MouseButton>>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    for b in [MouseButton::Left, MouseButton::Right, MouseButton::Middle] {
        if buttons.just_pressed(b) && !pointer.over_ui {
            *dragging = Some(b);
        }
    }
    if dragging.is_some_and(|b| !buttons.pressed(b)) {
        *dragging = None;
    }
    match *dragging {
        Some(MouseButton::Left) => {
            orbit.yaw -= motion.delta.x * 0.008;
            orbit.pitch = (orbit.pitch + motion.delta.y * 0.008).clamp(-1.4, 1.4);
        }
        Some(_) => {
            let rotation = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
            let pan =
                rotation * Vec3::new(-motion.delta.x, motion.delta.y, 0.0) * 0.002 * orbit.distance;
            orbit.target += pan;
        }
        None => {}
    }
    if !pointer.over_ui {
        let dy = match scroll.unit {
            MouseScrollUnit::Line => scroll.delta.y,
            MouseScrollUnit::Pixel => scroll.delta.y / 100.0,
        };
        orbit.distance = (orbit.distance * (1.0 - dy * 0.1)).clamp(0.3, 50.0);
    }
    let rotation = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
    for mut t in &mut camera {
        *t = Transform::from_translation(orbit.target + rotation * Vec3::Z * orbit.distance)
            .looking_at(orbit.target, Vec3::Y);
    }
}

pub fn draw_scene(
    mut gizmos: Gizmos,
    preview: Res<Preview>,
    bones: Query<&GlobalTransform, With<RigBone>>,
    rigs: Query<(), With<AnieRig>>,
) {
    // A 2D rig has no floor (and every camera would draw these lines).
    if !rigs.is_empty() {
        return;
    }
    gizmos
        .grid(
            Isometry3d::from_rotation(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)),
            UVec2::splat(20),
            Vec2::splat(0.5),
            Color::srgb(0.3, 0.31, 0.33),
        )
        .outer_edges();
    if let Some(t) = preview.selected_bone.and_then(|b| bones.get(b).ok()) {
        gizmos
            .sphere(t.translation(), 0.045, Color::srgb(1.0, 0.25, 0.3))
            .resolution(16);
        gizmos.axes(*t, 0.12);
    }
}
