//! Many AnimeEffects rigs at once, with the frame time, the GPU's and the renderer's counters.
//!
//! N copies of the bundled `character.anie` at random phases and speeds, each drawn by the GPU
//! plugin into its own cell and shown on a 2D quad, with the frame time, the GPU's time of a
//! frame (where the adapter has timestamp queries) and the renderer's counters on screen.
//!
//!     cargo run --release --example anie_crowd -- [N] [--screenshot OUT.png]   (N: 100)
//!
//! `--screenshot` saves the window after 120 frames and exits.
//!
//! Rigs step whole frames as AnimeEffects plays, so a crowd of one project shares at most one
//! evaluation per frame of its timeline; only rigs whose frame changed are redrawn.

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy::render::RenderApp;
use rigplay::plugin::{AniePlugin, AnieRenderStats, AnieRig, Playback};
use rigplay_preview::crowd::{
    Counter, GpuFrameTime, counter_text, crowd_args, crowd_command, frame_ms, gpu_frame_ms, random,
};
use rigplay_preview::shot::{ShotAfter, shot_after_frames};
use std::sync::{Arc, Mutex};

/// The render world's counters, copied out each frame for the text.
#[derive(Resource, Clone, Default)]
struct Stats(Arc<Mutex<AnieRenderStats>>);

fn main() {
    let (count, shot) = crowd_args(
        &crowd_command(
            "anie_crowd",
            "Many AnimeEffects rigs at once, drawn by the GPU plugin",
            "100",
        )
        .get_matches(),
    );
    let stats = Stats::default();
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(AssetPlugin {
                file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/../assets").into(),
                ..default()
            })
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: format!("rigplay: {count} AnimeEffects rigs"),
                    ..default()
                }),
                ..default()
            }),
        FrameTimeDiagnosticsPlugin::default(),
        GpuFrameTime,
        AniePlugin,
    ))
    .insert_resource(stats.clone())
    .insert_resource(ShotAfter::new(shot))
    .add_systems(
        Startup,
        move |commands: Commands, assets: Res<AssetServer>| setup(commands, assets, count),
    )
    .add_systems(Update, (show_counters, shot_after_frames));
    let shared = stats.0.clone();
    app.sub_app_mut(RenderApp)
        .add_systems(bevy::render::Render, move |render: Res<AnieRenderStats>| {
            *shared.lock().unwrap() = *render
        });
    app.run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>, count: usize) {
    commands.spawn(Camera2d);
    let project = assets.load("anims/anie/character.anie");
    // A square grid filling a 1200 × 660 area; each rig drawn at its size on screen.
    let columns = (count as f32).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(columns).max(1);
    let cell = (1200.0 / columns as f32).min(660.0 / rows as f32);
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..count {
        let (c, r) = ((i % columns) as f32, (i / columns) as f32);
        let at = Vec3::new(
            (c + 0.5 - columns as f32 / 2.0) * cell,
            (rows as f32 / 2.0 - r - 0.5) * cell - 20.0,
            i as f32 * 1e-3,
        );
        let mut playback = Playback::looping().with_speed(0.8 + 0.4 * random(&mut seed));
        playback.time = random(&mut seed) * 10.0;
        commands.spawn((
            // 1 world unit per canvas pixel: scaled to the grid cell (the canvas is assumed
            // about 256 px; the cell resolution follows the on-screen size).
            AnieRig::new(project.clone()).with_scale(cell / 256.0),
            playback,
            Transform::from_translation(at).with_scale(Vec3::splat(cell / 256.0)),
        ));
    }
    commands.spawn(counter_text());
}

fn show_counters(
    diagnostics: Res<DiagnosticsStore>,
    stats: Res<Stats>,
    rigs: Query<(), With<AnieRig>>,
    mut text: Single<&mut Text, With<Counter>>,
) {
    let ms = frame_ms(&diagnostics);
    let gpu = gpu_frame_ms(&diagnostics).map_or_else(String::new, |g| format!(", GPU {g:.2} ms"));
    let s = *stats.0.lock().unwrap();
    text.0 = format!(
        "{} rigs | frame {ms:.2} ms{gpu} | last drawn: {} cells from {} programs, {} draws in {} passes, {} copies",
        rigs.iter().count(),
        s.cells,
        s.programs,
        s.draws,
        s.passes,
        s.copies,
    );
}
