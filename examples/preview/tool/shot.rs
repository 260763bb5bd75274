//! What every example's `--screenshot` does at the end: the joints file beside the picture, then
//! the window saved and the app ended once it is written.

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
