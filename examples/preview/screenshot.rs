//! `--screenshot PATH --at SECONDS`: poses the clip (and its layers) at that time, saves a PNG
//! and the joints' window positions and world positions (Bevy axes) in `PATH.joints.json`, and
//! exits.

use crate::files::Preview;
use bevy::prelude::*;
use rigplay::plugin::{ClipLayers, Playback, RigBone};
use std::path::PathBuf;

#[derive(Resource)]
pub struct Shot {
    pub path: Option<PathBuf>,
    pub at: f32,
    pub frames: u32,
    pub requested: bool,
}

pub fn screenshot(
    mut commands: Commands,
    mut shot: ResMut<Shot>,
    preview: Res<Preview>,
    mut playbacks: Query<(&mut Playback, Option<&mut ClipLayers>)>,
    bones: Query<(&Name, &GlobalTransform), With<RigBone>>,
    camera: Query<(&Camera, &GlobalTransform), With<Camera3d>>,
) {
    let Some(path) = shot.path.clone() else {
        return;
    };
    let Some((mut playback, layers)) = preview.character.and_then(|c| playbacks.get_mut(c).ok())
    else {
        return;
    };
    // Not until what it plays is loaded (the playhead knows its length then).
    if playback.duration.is_none() {
        return;
    }
    playback.paused = true;
    if playback.time != shot.at {
        playback.seek(shot.at);
    }
    // Layers over the clip are shown at the same time of their own clips (held at their ends).
    if let Some(mut layers) = layers {
        for layer in layers.layers_mut() {
            let at = layer.duration().map_or(shot.at, |d| shot.at.min(d));
            if !layer.playhead.paused || layer.playhead.time != at {
                layer.playhead.paused = true;
                layer.playhead.seek(at);
            }
        }
    }
    shot.frames += 1;
    // Let render pipelines compile before capturing.
    if shot.frames < 60 || shot.requested {
        return;
    }
    shot.requested = true;
    let Ok((camera, cam)) = camera.single() else {
        return;
    };
    let joints: Vec<String> = bones
        .iter()
        .filter_map(|(name, t)| {
            camera
                .world_to_viewport(cam, t.translation())
                .ok()
                .map(|p| {
                    let w = t.translation();
                    format!(
                        "{{\"name\":{:?},\"x\":{},\"y\":{},\"world\":[{},{},{}]}}",
                        name.as_str(),
                        p.x,
                        p.y,
                        w.x,
                        w.y,
                        w.z
                    )
                })
        })
        .collect();
    let json = format!("[{}]\n", joints.join(","));
    rigplay_preview::shot::write_joints(&path, &json);
    rigplay_preview::shot::save_window_and_exit(&mut commands, path);
}
