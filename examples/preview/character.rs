//! The character on show: spawned for the selected clip (a GTA or flat skeleton playing it, or
//! an AnimeEffects project drawn by the GPU plugin on a 2D quad).

use crate::files::{Character, FileHandle, Loaded, Preview, open_motion_paths, view};
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;
use rigplay::plugin::*;
use rigplay_preview::motion::{follow_motion_files, followed_motion_clip};

/// What a character on show keeps when a model opens under its clip: its layers, its playhead
/// and its held blend.
type Kept = (
    Option<&'static ClipLayers>,
    Option<&'static Playback>,
    Option<&'static SkeletalClip>,
);

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

/// The clip (file, clip) and the model on show.
#[derive(Default)]
pub struct Shown {
    clip: Option<(usize, usize)>,
    model: Option<AssetId<Dff>>,
}

/// (Re)spawns the character when the shown clip changes.
pub fn spawn_character(
    mut commands: Commands,
    mut preview: ResMut<Preview>,
    loaded: Loaded,
    mut framing: ResMut<crate::camera::Framing>,
    shot: Res<crate::screenshot::Shot>,
    mut shown: Local<Shown>,
    // The skeleton lines' settings, and what a character on show keeps when a model opens.
    (mut gizmos, on_show, assets): (ResMut<SkeletonGizmos>, Query<Kept>, Res<AssetServer>),
) {
    let model = preview.model.as_ref().map(|m| m.handle.clone());
    let model_changed = shown.model != model.as_ref().map(|m| m.id());
    // The stick skeleton shows through a model's skin.
    if gizmos.on_top != model.is_some() {
        gizmos.on_top = model.is_some();
    }
    let Some((f, c)) = preview.current else {
        // No clip to show: an opened model stands alone in its rest pose.
        if let Some(model) = model
            && (model_changed || preview.character.is_none())
        {
            if let Some(old) = preview.character.take() {
                commands.entity(old).despawn();
            }
            shown.model = Some(model.id());
            preview.character = Some(commands.spawn(GtaModel::new(model)).id());
            framing.pending = true;
        }
        return;
    };
    // A cross-fade changed the clip on the character itself.
    if preview.faded_to.take() == Some((f, c)) && preview.character.is_some() {
        shown.clip = Some((f, c));
        return;
    }
    if shown.clip == Some((f, c)) && preview.character.is_some() && !model_changed {
        return;
    }
    let Some(v) = view(f, &preview.files[f], &loaded) else {
        return;
    };
    let Some(clip) = v.clips.get(c) else { return };
    // A model opened under the clip on show: the new character goes on from the old one's
    // playhead, with its layers and held blend (a motion file's clips among them follow the
    // file onto the model's ped).
    let kept = (model_changed && shown.clip == Some((f, c)))
        .then(|| preview.character.and_then(|e| on_show.get(e).ok()))
        .flatten();
    let (kept_layers, kept_blend, kept_playhead) = match kept {
        None => (None, None, None),
        Some((layers, playback, skeletal)) => {
            // The motion files were loaded again onto the model's ped when it opened.
            let open = open_motion_paths(&preview, &assets);
            let layers = layers.cloned().map(|mut layers| {
                follow_motion_files(&mut layers, &assets, &open);
                layers
            });
            let blend = skeletal.and_then(|s| s.held_blend()).map(|(clip, weight)| {
                let clip = match followed_motion_clip(clip, &assets, &open) {
                    Some(path) => assets.load(path),
                    None => clip.clone(),
                };
                (clip, weight)
            });
            let playhead = playback.map(|p| (p.time, p.speed, p.paused));
            (layers, blend, playhead)
        }
    };
    if let Some(old) = preview.character.take() {
        commands.entity(old).despawn();
    }
    let mut playback = Playback::looping();
    if !clip.looping {
        playback.mode = PlayMode::Once;
    }
    if let Some((time, speed, paused)) = kept_playhead {
        playback.time = time;
        playback.speed = speed;
        playback.paused = paused;
    }
    let mut character = match &clip.handle {
        Some(handle) => commands.spawn((
            {
                let mut skeletal = SkeletalClip::new(handle.clone());
                if let Some((other, weight)) = kept_blend {
                    skeletal.hold_blend(other, weight);
                }
                skeletal
            },
            playback,
            // Extracted root motion moves the character (the camera follows it); a screenshot
            // shows the pose where it stands.
            if shot.path.is_none() {
                RootMotion::applied()
            } else {
                RootMotion::default()
            },
        )),
        None => {
            // A timeline of its own: the playhead knows its length from the start.
            playback.duration = Some(clip.duration);
            commands.spawn(playback)
        }
    };
    match clip.character.clone() {
        // An opened model plays the clip instead of the stick skeleton (which gizmos draw over
        // its skin).
        Character::Gta(skeleton) => {
            match &model {
                Some(m) => {
                    character.insert(GtaModel::new(m.clone()));
                }
                None => {
                    character.insert(skeleton);
                }
            }
            if let Some(layers) = kept_layers {
                character.insert(layers);
            }
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
    framing.pending = true;
    shown.clip = Some((f, c));
    shown.model = model.map(|m| m.id());
}

/// Logs how long an opened model took from the file to the first frame that shows it (read,
/// textures decoded, meshes built, spawned and posed).
pub fn log_model_shown(
    mut preview: ResMut<Preview>,
    spawned: Query<(), (With<GtaModel>, With<SkeletonBones>)>,
) {
    let Some(character) = preview.character else {
        return;
    };
    let Some(model) = preview.model.as_mut() else {
        return;
    };
    if model.shown || spawned.get(character).is_err() {
        return;
    }
    model.shown = true;
    info!(
        "{}: on show {:.0} ms after it was opened",
        model.path.display(),
        model.opened.elapsed().as_secs_f64() * 1000.0
    );
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

/// Marks the glTF character playing the clip on show.
#[derive(Component)]
pub struct Body;

/// Where the body stands: beside the stick skeleton, facing the way it faces.
const BODY_OFFSET: Vec3 = Vec3::new(-1.1, 0.0, 0.0);

/// (Re)spawns the opened glTF character for the skeletal clip on show: it plays the same clip on
/// its own playhead, which follows the stick skeleton's ([`follow_playhead`]).
pub fn spawn_body(
    mut commands: Commands,
    mut preview: ResMut<Preview>,
    clips: Query<&SkeletalClip>,
    bodies: Query<&SkeletalClip, With<Body>>,
) {
    for e in std::mem::take(&mut preview.stale) {
        commands.entity(e).despawn();
    }
    let clip = preview
        .character
        .and_then(|c| clips.get(c).ok())
        .map(|s| s.clip.clone());
    let Some(body) = preview.body.as_mut() else {
        return;
    };
    let showing = body
        .entity
        .and_then(|e| bodies.get(e).ok())
        .map(|s| s.clip.id());
    if showing.is_some() && showing == clip.as_ref().map(|c| c.id()) {
        return;
    }
    if let Some(old) = body.entity.take() {
        commands.entity(old).despawn();
    }
    // Only skeletal clips (GTA, DAN) play on a body.
    let Some(clip) = clip else { return };
    let name = body
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    body.entity = Some(
        commands
            .spawn((
                Name::new(name),
                Body,
                WorldAssetRoot(body.scene.clone()),
                Retarget::new(),
                SkeletalClip::new(clip),
                Playback::looping(),
                // glTF characters face +Z; GTA's skeleton faces −Z in Bevy's axes.
                Transform::from_translation(BODY_OFFSET)
                    .with_rotation(Quat::from_rotation_y(std::f32::consts::PI)),
            ))
            .id(),
    );
}

/// Scales a body whose bones span less than half a metre or more than three (a character in
/// centimetres, say) to the stick skeleton's height, once its bones are there.
pub fn fit_body(
    mut bodies: Query<(Entity, &mut Transform, &RetargetReport), With<Body>>,
    children: Query<&Children>,
    bones: Query<&GlobalTransform, With<RigBone>>,
    mut fitted: Local<Option<Entity>>,
) {
    for (entity, mut transform, report) in &mut bodies {
        if *fitted == Some(entity) || report.report.matched.is_empty() {
            continue;
        }
        let (lo, hi) = children
            .iter_descendants(entity)
            .filter_map(|e| bones.get(e).ok())
            .fold((f32::MAX, f32::MIN), |(lo, hi), g| {
                let y = g.translation().y;
                (lo.min(y), hi.max(y))
            });
        let height = (hi - lo) / transform.scale.y.max(1e-6);
        if !(height.is_finite() && height > 0.0) {
            continue;
        }
        if !(0.5..=3.0).contains(&height) {
            transform.scale = Vec3::splat(1.7 / height);
        }
        *fitted = Some(entity);
    }
}

/// Keeps the body's playhead where the stick skeleton's is (the transport drives that one).
pub fn follow_playhead(preview: Res<Preview>, mut playbacks: Query<&mut Playback>) {
    let (Some(character), Some(body)) = (
        preview.character,
        preview.body.as_ref().and_then(|b| b.entity),
    ) else {
        return;
    };
    let Ok(lead) = playbacks.get(character).cloned() else {
        return;
    };
    if let Ok(mut p) = playbacks.get_mut(body) {
        *p = lead;
    }
}
