//! The character on show: spawned for the selected clip (a GTA or flat skeleton playing it, or
//! an AnimeEffects project drawn by the GPU plugin on a 2D quad).

use crate::files::{Character, FileHandle, Loaded, Preview, view};
use bevy::prelude::*;
use rigplay::plugin::*;

/// The middle of the view between the panels, in 2D world units (pixels from the window's
/// centre, +y up), and the size it offers.
const ANIE_VIEW_CENTRE: Vec2 = Vec2::new(-5.0, 59.0);
const ANIE_VIEW_SIZE: Vec2 = Vec2::new(760.0, 520.0);

/// The backdrop behind an AnimeEffects canvas (its exported image is transparent).
const CANVAS_BACKDROP: Color = Color::srgb(0.82, 0.83, 0.85);

/// The camera that shows AnimeEffects rigs: before the 3D camera, which then draws only the
/// panels over it.
#[derive(Component)]
pub struct AnieCamera;

/// Where a canvas of `canvas` pixels is shown: its centre and its scale (as large as fits, at
/// most 3×).
pub fn anie_placement(canvas: Vec2) -> (Vec2, f32) {
    let s = (ANIE_VIEW_SIZE.x / canvas.x.max(1.0))
        .min(ANIE_VIEW_SIZE.y / canvas.y.max(1.0))
        .min(3.0);
    (ANIE_VIEW_CENTRE, s)
}

/// (Re)spawns the character when the shown clip changes.
pub fn spawn_character(
    mut commands: Commands,
    mut preview: ResMut<Preview>,
    loaded: Loaded,
    mut shown: Local<Option<(usize, usize)>>,
) {
    let Some((f, c)) = preview.current else {
        return;
    };
    if *shown == Some((f, c)) && preview.character.is_some() {
        return;
    }
    let Some(v) = view(f, &preview.files[f], &loaded) else {
        return;
    };
    let Some(clip) = v.clips.get(c) else { return };
    if let Some(old) = preview.character.take() {
        commands.entity(old).despawn();
    }
    let mut playback = Playback::looping();
    if !clip.looping {
        playback.mode = PlayMode::Once;
    }
    let mut character = match &clip.handle {
        Some(handle) => commands.spawn((
            SkeletalClip::new(handle.clone()),
            playback,
            RootMotion::default(),
        )),
        None => {
            // A timeline of its own: the playhead knows its length from the start.
            playback.duration = Some(clip.duration);
            commands.spawn(playback)
        }
    };
    match clip.character.clone() {
        Character::Gta(skeleton) => {
            character.insert(skeleton);
        }
        Character::Flat(skeleton) => {
            character.insert(skeleton);
        }
        Character::Anie(file) => {
            if let FileHandle::Anie(handle) = &preview.files[file].handle
                && let Some(anie) = loaded.anies.get(handle)
            {
                let canvas = anie.canvas_size().as_vec2();
                let (centre, s) = anie_placement(canvas);
                // Drawn at its size on screen: one cell texel per window pixel.
                character
                    .insert((
                        AnieRig::new(handle.clone()).with_scale(s),
                        Transform::from_translation(centre.extend(0.0))
                            .with_scale(Vec3::new(s, s, 1.0)),
                    ))
                    .with_children(|c| {
                        c.spawn((
                            Sprite::from_color(CANVAS_BACKDROP, canvas),
                            Transform::from_xyz(0.0, 0.0, -1.0),
                        ));
                    });
            }
        }
    };
    preview.character = Some(character.id());
    preview.selected_bone = None;
    *shown = Some((f, c));
}

/// Shows AnimeEffects rigs through their own 2D camera while one is on show; the 3D camera then
/// keeps what it drew (no clear) and adds the panels.
pub fn switch_cameras(
    rigs: Query<(), With<AnieRig>>,
    mut cameras_2d: Query<&mut Camera, (With<AnieCamera>, Without<Camera3d>)>,
    mut cameras_3d: Query<&mut Camera, With<Camera3d>>,
) {
    let anie = !rigs.is_empty();
    for mut c in &mut cameras_2d {
        if c.is_active != anie {
            c.is_active = anie;
        }
    }
    let clear = if anie {
        ClearColorConfig::None
    } else {
        ClearColorConfig::Default
    };
    for mut c in &mut cameras_3d {
        if matches!(c.clear_color, ClearColorConfig::None) != anie {
            c.clear_color = clear;
        }
    }
}
