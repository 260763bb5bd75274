//! What every example's `--screenshot` does at the end: the joints file beside the picture, then
//! the window saved and the app ended once it is written; and a screenshot after a fixed
//! number of frames.

use bevy::prelude::*;
use bevy::render::render_resource::PipelineCache;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::render::{Render, RenderApp, RenderSystems};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
/// written before they ask to exit. (That alone did not stop the crash: a CI run of 2026-12-06
/// saw it again, and [`ExitWhenIdlePlugin`] is what stops it.)
pub fn leave(exit: AppExit) -> ! {
    let code = match exit {
        AppExit::Success => 0,
        AppExit::Error(code) => i32::from(code.get()),
    };
    std::process::exit(code)
}

/// Holds the app's exit (`AppExit`, success or error) until the renderer compiles no pipeline,
/// for at most [`EXIT_HELD_FRAMES`] frames. An example that ends in its first frames (a typo in
/// a clip's name, say) was ending while lavapipe compiled the first pipelines on other threads,
/// and the process then crashed on its way out (status 139 for the 1 asked), under load:
/// measured with `retarget` and a misspelt clip, 6 runs in 150 with four busy loops on the two
/// cores, none without them. Add it beside `DefaultPlugins`.
pub struct ExitWhenIdlePlugin;

/// The most frames [`ExitWhenIdlePlugin`] holds an exit for.
pub const EXIT_HELD_FRAMES: u32 = 600;

/// Whether the render world had a pipeline waiting at its last frame.
#[derive(Resource, Clone, Default)]
struct PipelinesWaiting(Arc<AtomicBool>);

/// The exit asked for, and the frames it has been held.
#[derive(Resource, Default)]
struct HeldExit {
    exit: Option<AppExit>,
    frames: u32,
}

impl Plugin for ExitWhenIdlePlugin {
    fn build(&self, app: &mut App) {
        let waiting = PipelinesWaiting::default();
        app.insert_resource(waiting.clone())
            .init_resource::<HeldExit>()
            .add_systems(Last, hold_exit);
        if let Some(render) = app.get_sub_app_mut(RenderApp) {
            render
                .insert_resource(waiting)
                .add_systems(Render, note_waiting.in_set(RenderSystems::Cleanup));
        }
    }
}

fn note_waiting(cache: Option<Res<PipelineCache>>, waiting: Res<PipelinesWaiting>) {
    let busy = cache.is_some_and(|c| c.waiting_pipelines().next().is_some());
    waiting.0.store(busy, Ordering::Relaxed);
}

/// Takes this frame's exits out of the messages (an error before a success), and writes the
/// exit back once no pipeline waits, two frames on at least (the render world's last word is
/// a frame behind).
fn hold_exit(
    mut messages: ResMut<Messages<AppExit>>,
    mut held: ResMut<HeldExit>,
    waiting: Res<PipelinesWaiting>,
) {
    for exit in messages.drain() {
        if held.exit.as_ref().is_none_or(|e| !e.is_error()) {
            held.exit = Some(exit);
        }
    }
    let Some(exit) = held.exit.clone() else {
        return;
    };
    held.frames += 1;
    let idle = !waiting.0.load(Ordering::Relaxed);
    if (idle && held.frames > 2) || held.frames > EXIT_HELD_FRAMES {
        messages.write(exit);
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
