//! The character on show: spawned for the selected clip (a GTA or flat skeleton playing it, or
//! an AnimeEffects project drawn into an image each frame its time changes).

use crate::files::{Character, FileHandle, OpenFile, Preview, view};
use bevy::asset::RenderAssetUsages;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use rigplay::plugin::*;

/// A character that shows an AnimeEffects project: the file, and the frame drawn last.
#[derive(Component)]
pub struct AnieView {
    file: usize,
    image: Handle<Image>,
    drawn: Option<f32>,
}

/// (Re)spawns the character when the shown clip changes.
pub fn spawn_character(
    mut commands: Commands,
    mut preview: ResMut<Preview>,
    ifps: Res<Assets<Ifp>>,
    dans: Res<Assets<Dan>>,
    mut images: ResMut<Assets<Image>>,
    mut shown: Local<Option<(usize, usize)>>,
) {
    let Some((f, c)) = preview.current else {
        return;
    };
    if *shown == Some((f, c)) && preview.character.is_some() {
        return;
    }
    let Some(v) = view(f, &preview.files[f], &ifps, &dans) else {
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
            if let FileHandle::Anie(Ok(anie)) = &preview.files[file].handle {
                let (w, h) = (
                    anie.project.canvas_width.clamp(1, 4096),
                    anie.project.canvas_height.clamp(1, 4096),
                );
                let image = images.add(Image::new_fill(
                    Extent3d {
                        width: w,
                        height: h,
                        depth_or_array_layers: 1,
                    },
                    TextureDimension::D2,
                    &[0, 0, 0, 0],
                    TextureFormat::Rgba8UnormSrgb,
                    RenderAssetUsages::default(),
                ));
                // Shown in the middle of the view between the panels, as large as fits (at most 3×).
                let s = (760.0 / w as f32).min(520.0 / h as f32).min(3.0);
                let (dw, dh) = (w as f32 * s, h as f32 * s);
                character.insert((
                    AnieView {
                        file,
                        image: image.clone(),
                        drawn: None,
                    },
                    Node {
                        position_type: PositionType::Absolute,
                        left: Val::Px(635.0 - dw / 2.0),
                        top: Val::Px(301.0 - dh / 2.0),
                        width: Val::Px(dw),
                        height: Val::Px(dh),
                        ..default()
                    },
                    BackgroundColor(Color::srgb(0.82, 0.83, 0.85)),
                    ImageNode::new(image),
                ));
            }
        }
    };
    preview.character = Some(character.id());
    preview.selected_bone = None;
    *shown = Some((f, c));
}

/// Draws the frame of each AnimeEffects view at its playback's time, when that time changed.
pub fn draw_anie_views(
    preview: Res<Preview>,
    mut views: Query<(&Playback, &mut AnieView)>,
    mut images: ResMut<Assets<Image>>,
) {
    for (playback, mut view) in &mut views {
        if view.drawn == Some(playback.time) {
            continue;
        }
        let Some(OpenFile {
            handle: FileHandle::Anie(Ok(anie)),
            ..
        }) = preview.files.get(view.file)
        else {
            continue;
        };
        let frame = playback.time * anie.project.fps.max(1) as f32;
        let evaluated = anie.evaluator.evaluate(frame);
        let framebuffer = anie.renderer.render(&evaluated, 1.0);
        let shown = rigplay::anie::cpu::exported_png(&framebuffer);
        if let Some(mut image) = images.get_mut(&view.image)
            && shown.width == image.width()
            && shown.height == image.height()
        {
            image.data = Some(shown.pixels.iter().flatten().copied().collect());
        }
        view.drawn = Some(playback.time);
    }
}
