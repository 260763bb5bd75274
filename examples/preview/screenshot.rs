//! `--screenshot PATH --at SECONDS`: poses the clip at that time, saves a PNG and the joints'
//! window positions (`PATH.joints.json`), and exits.

use crate::files::Preview;
use bevy::prelude::*;
use rigplay::plugin::{Playback, RigBone};
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
    mut playbacks: Query<&mut Playback>,
    bones: Query<(&Name, &GlobalTransform), With<RigBone>>,
    camera: Query<(&Camera, &GlobalTransform), With<Camera3d>>,
) {
    let Some(path) = shot.path.clone() else {
        return;
    };
    let Some(mut playback) = preview.character.and_then(|c| playbacks.get_mut(c).ok()) else {
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
                    format!(
                        "{{\"name\":{:?},\"x\":{},\"y\":{}}}",
                        name.as_str(),
                        p.x,
                        p.y
                    )
                })
        })
        .collect();
    let json = format!("[{}]\n", joints.join(","));
    rigplay_preview::shot::write_joints(&path, &json);
    rigplay_preview::shot::save_window_and_exit(&mut commands, path);
}
