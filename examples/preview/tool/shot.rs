//! What every example's `--screenshot` does at the end: the joints file beside the picture, then
//! the window saved and the app ended once it is written; and a screenshot after a fixed
//! number of frames.

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use std::path::{Path, PathBuf};

/// Writes `json` as `PATH.joints.json` beside the screenshot `path` (a failure is logged).
pub fn write_joints(path: &Path, json: &str) {
    let joints = PathBuf::from(format!("{}.joints.json", path.display()));
    if let Err(e) = std::fs::write(&joints, json) {
        error!("{}: {e}", joints.display());
    }
}

/// Ends the process with `exit`'s status (0, or the error's code) without dropping the app
/// that returned it. An example that ends in its first frames (a typo in a clip's name, say)
/// may still be building pipelines on the driver's threads, and lavapipe has crashed tearing the
/// device down then (status 139 under load, after the right message and status were decided).
/// Nothing of the app's is left to save when its runner returns: what the examples write is
/// written before they ask to exit.
pub fn leave(exit: AppExit) -> ! {
    let code = match exit {
        AppExit::Success => 0,
        AppExit::Error(code) => i32::from(code.get()),
    };
    std::process::exit(code)
}

/// Saves the primary window to `path` and ends the app once the file is written.
pub fn save_window_and_exit(commands: &mut Commands, path: PathBuf) {
    commands
        .spawn(Screenshot::primary_window())
        .observe(save_to_disk(path))
        .observe(
            |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                exit.write(AppExit::Success);
            },
        );
}

/// `--screenshot PATH` of an example that saves its window after a fixed number of frames.
#[derive(Resource)]
pub struct ShotAfter {
    /// Where to save; `None` runs on.
    pub path: Option<PathBuf>,
    /// The frame to save at (pipelines compile and assets load before it).
    pub frame: u32,
    /// Frames run so far.
    pub frames: u32,
}

impl ShotAfter {
    /// Saves at `path` (if any) after 120 frames.
    pub fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            frame: 120,
            frames: 0,
        }
    }
}

/// Counts frames and, at [`ShotAfter::frame`], saves the window and ends the app.
pub fn shot_after_frames(mut commands: Commands, mut shot: ResMut<ShotAfter>) {
    let Some(path) = shot.path.clone() else {
        return;
    };
    shot.frames += 1;
    if shot.frames == shot.frame {
        save_window_and_exit(&mut commands, path);
    }
}
