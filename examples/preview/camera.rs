//! The orbit camera (left-drag orbit, right-drag pan, wheel zoom) and the scene around the
//! character: the floor grid and the selected bone.

use crate::files::{Character, Loaded, Preview, view};
use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use rigplay::plugin::{AnieRig, RigBone, RigClip, SkeletalClip};
use rigplay_preview::framing::{
    Bounds, Placed, Region, View, clip_bounds, fit, model_skeleton, orbit_rotation,
};

#[derive(Resource)]
pub struct Orbit {
    pub target: Vec3,
    pub yaw: f32,
    pub pitch: f32,
    pub distance: f32,
}

/// How the camera keeps the character in view.
#[derive(Resource, Debug, Clone)]
pub struct Framing {
    /// The view the next framing turns the camera to (`None`: keep the user's angles).
    pub view: Option<View>,
    /// Whether the view was chosen (`--camera`, a key): else a clip that travels is framed from
    /// the side of its path.
    pub view_forced: bool,
    /// Keep the character in the middle as it moves.
    pub follow: bool,
    /// Whether follow was set by hand (or `--camera follow`): not changed on a clip change.
    pub follow_forced: bool,
    /// Frame the pose over the whole clip, its path included (`--frame-all`), and never follow
    /// on its own.
    pub frame_all: bool,
    /// Frame only the pose at the playhead (a screenshot without `--frame-all`).
    pub pose_only: bool,
    /// The time that pose is taken at (a screenshot's `--at`): framing may come before the
    /// playhead is moved there.
    pub pose_at: Option<f32>,
    /// Frame at the next chance (set when a clip is shown, on `F`, on reset).
    pub pending: bool,
    /// The height above the root the camera looks at while following.
    pub follow_height: f32,
}

impl Default for Framing {
    fn default() -> Self {
        Self {
            view: Some(View::ThreeQuarter),
            view_forced: false,
            follow: false,
            follow_forced: false,
            frame_all: false,
            pose_only: false,
            pose_at: None,
            pending: true,
            follow_height: 0.9,
        }
    }
}

/// The 3D camera's vertical field of view (Bevy's default perspective).
const FOV_Y: f32 = std::f32::consts::FRAC_PI_4;

/// The part of the window the panels leave to the 3D view (files 230 px on the left, info 240
/// on the right, the timeline 118 at the bottom).
fn free_region(window: Vec2) -> Region {
    Region::between_panels(window.x, window.y, 230.0, 240.0, 118.0)
}

/// Frames the character when asked (a clip shown, `F`, a view button): the camera looks at the
/// bounds of the pose over the clip from the chosen view, as close as keeps them inside the part
/// of the window the panels leave free. A clip that travels more than 1.5 m turns following on
/// (unless following was set by hand, or `--frame-all` asks for the whole path, which is then
/// framed from the side of the path).
#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it reads
pub fn frame_character(
    mut framing: ResMut<Framing>,
    mut orbit: ResMut<Orbit>,
    preview: Res<Preview>,
    loaded: Loaded,
    registry: Res<Assets<RigClip>>,
    clips: Query<(&SkeletalClip, &rigplay::plugin::Playback)>,
    windows: Query<&Window>,
    models: Res<Assets<rigplay::plugin::Dff>>,
) {
    if !framing.pending {
        return;
    }
    let (Some(character), Some((f, c))) = (preview.character, preview.current) else {
        return;
    };
    let Ok((clip, playback)) = clips.get(character) else {
        // Not a skeletal clip (an AnimeEffects rig has its own 2D camera).
        framing.pending = false;
        return;
    };
    let Some(info) = registry.get(clip.clip.id()).map(|c| c.info().clone()) else {
        return;
    };
    // What is drawn: an opened model's own frames, placed as the model is (its lift); else
    // the built-in skeleton of the clip's game.
    let model = preview
        .model
        .as_ref()
        .and_then(|m| models.get(&m.handle))
        .and_then(|m| m.clumps.first())
        .map(|c| model_skeleton(c));
    let skeleton = match view(f, &preview.files[f], &loaded)
        .and_then(|v| v.clips.get(c).map(|e| e.character.clone()))
    {
        Some(Character::Gta(g)) => Some(model.unwrap_or_else(|| {
            let s = g.0.skeleton();
            let lift = -s.lowest_rest_height();
            (s, lift)
        })),
        Some(_) => None,
        None => return,
    };
    let placed = skeleton.as_ref().map(|(skeleton, lift)| Placed {
        skeleton,
        lift: *lift,
    });
    let axes = info.settings.root_motion.extracted_axes();
    let whole = clip_bounds(placed, &info.clip, axes, info.root_track, None, 32);
    let Some(whole) = whole else {
        framing.pending = false;
        return;
    };
    let travel = (whole.max - whole.min) * Vec3::new(1.0, 0.0, 1.0);
    // A clip that travels is followed (unless told otherwise); the camera then keeps the
    // distance that frames the clip's pose in place (its root's horizontal path held).
    if !framing.follow_forced {
        framing.follow = !framing.frame_all && !framing.pose_only && travel.length() > 1.5;
    }
    let bounds: Bounds = if framing.pose_only {
        clip_bounds(
            placed,
            &info.clip,
            axes,
            info.root_track,
            Some(framing.pose_at.unwrap_or(playback.time)),
            1,
        )
        .unwrap_or(whole)
    } else if framing.follow {
        let in_place = axes.max(Vec3::new(1.0, 1.0, 0.0));
        clip_bounds(placed, &info.clip, in_place, info.root_track, None, 32).unwrap_or(whole)
    } else {
        whole
    };
    // An opened model's skin reaches past the joints (the top of the head, the hands, the
    // toes): a margin around them.
    let bounds = if preview.model.is_some() {
        Bounds {
            min: bounds.min - Vec3::new(0.15, 0.1, 0.15),
            max: bounds.max + Vec3::new(0.15, 0.3, 0.15),
        }
    } else {
        bounds
    };
    if let Some(v) = framing.view {
        (orbit.yaw, orbit.pitch) = v.angles();
        // A clip that travels, framed whole from a view nobody chose: from the side of its path
        // (the side nearer the character's front), so that the path runs across the picture.
        if !framing.view_forced && !framing.follow && travel.length() > 1.5 {
            let t = travel.normalize();
            let mut side = Vec3::new(-t.z, 0.0, t.x);
            if side.z > 0.0 {
                side = -side;
            }
            orbit.yaw = side.x.atan2(side.z);
            orbit.pitch = 0.2;
        }
    }
    let size = windows.iter().next().map_or(Vec2::new(1280.0, 720.0), |w| {
        Vec2::new(w.width(), w.height())
    });
    let (target, distance) = fit(
        &bounds,
        orbit.yaw,
        orbit.pitch,
        FOV_Y,
        size.x / size.y.max(1.0),
        free_region(size),
    );
    orbit.target = target;
    orbit.distance = distance.clamp(0.3, 500.0);
    framing.follow_height = target.y - bounds.min.y;
    framing.pending = false;
}

/// While following: the camera's target moves with the character's joints (their middle,
/// horizontally; the framed height above their lowest point).
pub fn follow_character(
    framing: Res<Framing>,
    mut orbit: ResMut<Orbit>,
    preview: Res<Preview>,
    children: Query<&Children>,
    bones: Query<&GlobalTransform, With<RigBone>>,
) {
    if !framing.follow || framing.pending {
        return;
    }
    let Some(character) = preview.character else {
        return;
    };
    let Some(b) = Bounds::of(
        children
            .iter_descendants(character)
            .filter_map(|e| bones.get(e).ok())
            .map(|g| g.translation()),
    ) else {
        return;
    };
    let c = b.centre();
    orbit.target = Vec3::new(c.x, b.min.y + framing.follow_height, c.z);
}

/// Keys: `F` frames the character, `R` resets the view (three-quarter, framed), `1`–`4` pick
/// the front, side, top and three-quarter views, `T` toggles following.
pub fn camera_keys(
    keys: Res<ButtonInput<KeyCode>>,
    mut framing: ResMut<Framing>,
    mut contexts: bevy_egui::EguiContexts,
) {
    // Not while a text field (the clip search) has the keyboard.
    if contexts
        .ctx_mut()
        .is_ok_and(|c| c.egui_wants_keyboard_input())
    {
        return;
    }
    let mut view = None;
    if keys.just_pressed(KeyCode::KeyF) {
        framing.pending = true;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        framing.view = Some(View::ThreeQuarter);
        framing.view_forced = false;
        framing.follow_forced = false;
        framing.pending = true;
    }
    for (key, v) in [
        (KeyCode::Digit1, View::Front),
        (KeyCode::Digit2, View::Side),
        (KeyCode::Digit3, View::Top),
        (KeyCode::Digit4, View::ThreeQuarter),
    ] {
        if keys.just_pressed(key) {
            view = Some(v);
        }
    }
    if keys.just_pressed(KeyCode::KeyT) {
        framing.follow = !framing.follow;
        framing.follow_forced = true;
    }
    if let Some(v) = view {
        framing.view = Some(v);
        framing.view_forced = true;
        framing.pending = true;
    }
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
            let rotation = orbit_rotation(orbit.yaw, orbit.pitch);
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
        orbit.distance = (orbit.distance * (1.0 - dy * 0.1)).clamp(0.3, 500.0);
    }
    let rotation = orbit_rotation(orbit.yaw, orbit.pitch);
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
