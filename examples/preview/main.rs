//! The preview: open, play and scrub `.ifp`, `.dan`, `.anie` files, GTA models and glTF characters.
//!
//!     cargo run --example preview                      # the bundled samples (the GTA clips on the sample ped)
//!     cargo run --example preview -- FILE...           # your .ifp / .dan / .anie files (or drop them on the window)
//!     cargo run --example preview -- FILE.ifp CHARACTER.glb   # the clips on your glTF character too
//!     cargo run --example preview -- FILE --clip walk --screenshot out.png --at 0.5
//!
//! A `.dff` opened is a GTA model (a ped, a prop, a vehicle), textured from the `.txd` of the
//! same name beside it: GTA clips play on it instead of the stick skeleton, which is drawn
//! over its skin. Opened alone it stands in its rest pose.
//!
//!     cargo run --example preview -- ped.ifp ped.dff
//!
//! A `.glb` / `.gltf` opened (on the command line or dropped) is a character: every GTA or DAN
//! clip on show plays on it beside the stick skeleton, rest poses compensated (`Retarget`), and
//! the Info panel shows its bone map.
//!
//! The camera frames the character when a clip is shown (the pose over the whole clip), follows
//! it when the clip travels, and has front / side / top / three-quarter views: `F` frames, `R`
//! resets, `1`–`4` pick a view, `T` toggles following; `--camera
//! front|side|top|three-quarter|follow` and `--frame-all` (the whole clip rather than the pose
//! shot) set them for a screenshot.
//!
//! A file changed on disk by another tool (or its `.meta`, or a model's `.txd`) is read again
//! within a quarter of a second, and `F5` reads every open file again: characters keep their
//! playheads, and a file that no longer reads keeps its last good version, its error shown.
//!
//! `--bone NAME` selects a bone, `--curves` opens its curves (rotation and translation over the
//! clip, with the keys and the playhead).
//!
//! `--screenshot PATH --at SECONDS` poses the clip at that time, saves a PNG (and, next to it,
//! `PATH.joints.json` with the joints' window and world positions), and exits: usable headless
//! under xvfb.
//!
//! Layers: the Info panel's Layers section plays clips of any open file over the one on show
//! (an upper-body clip over a walk), each with its weight, fades, flags and mask; the timeline
//! marks every layer's playhead. `--layer NAME[:WEIGHT]` (repeatable) adds them from the command
//! line, so that a layered pose can be shot:
//!
//!     cargo run --example preview -- --clip walk --layer wave:0.5 --screenshot out.png --at 0.4
//!
//! AnimeEffects projects (`.anie`) play through the same transport and timeline, drawn by the
//! GPU plugin (`AniePlugin`) exactly as AnimeEffects draws them; the Info panel lists the
//! layers (visibility toggles, blend mode, opacity) and the timeline scrubs by whole frames.
//!
//! Modules: `files` (open files and what they hold), `character` (the rig on show), `camera`,
//! `screenshot`, `ui` (the egui panels).

mod camera;
mod character;
mod clip_panel;
mod convert;
mod curves;
mod files;
mod layers_panel;
mod screenshot;
mod ui;

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy_egui::{EguiGlobalSettings, EguiPlugin, EguiPrimaryContextPass, PrimaryEguiContext};
use camera::{
    Framing, Orbit, UiPointer, camera_keys, draw_scene, follow_character, frame_character,
    orbit_camera,
};
use character::{
    AnieCamera, fit_body, follow_playhead, log_model_shown, spawn_body, spawn_character,
    switch_cameras,
};
use files::{
    Preview, open, open_dropped, pick_first_clip, reload_files, select_wanted_bone, watch_files,
};
use rigplay::plugin::*;
use rigplay_preview::framing::View;
use rigplay_preview::motion::register_motion_sources;
use rigplay_preview::watch::{HotReload, files_anywhere, reload_changed_files};
use screenshot::{Shot, screenshot};
use std::path::{Path, PathBuf};

struct Args {
    files: Vec<PathBuf>,
    clip: Option<String>,
    screenshot: Option<PathBuf>,
    at: f32,
    camera: Option<String>,
    frame_all: bool,
    bone: Option<String>,
    curves: bool,
    layers: Vec<(String, f32)>,
}

/// The command line: clap rejects an option it does not know, with a usage line and status 2.
fn command() -> clap::Command {
    use clap::{Arg, ArgAction, Command, value_parser};
    Command::new("preview")
        .about("Open, play and scrub GTA (.ifp, .dff), DAN and AnimeEffects files")
        .arg(
            Arg::new("files")
                .value_name("FILE")
                .num_args(0..)
                .value_parser(value_parser!(PathBuf))
                .help("files to open (the bundled samples without any)"),
        )
        .arg(
            Arg::new("clip")
                .long("clip")
                .value_name("NAME")
                .help("show this clip (any case)"),
        )
        .arg(
            Arg::new("screenshot")
                .long("screenshot")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .help("pose the clip at --at, save a PNG and its joints, and exit"),
        )
        .arg(
            Arg::new("at")
                .long("at")
                .value_name("SECONDS")
                .value_parser(value_parser!(f32))
                .allow_negative_numbers(true)
                .default_value("0"),
        )
        .arg(
            Arg::new("camera")
                .long("camera")
                .value_name("VIEW")
                .help("front, side, top, three-quarter or follow"),
        )
        .arg(
            Arg::new("frame-all")
                .long("frame-all")
                .action(ArgAction::SetTrue)
                .help("frame the whole clip, its path included"),
        )
        .arg(Arg::new("bone").long("bone").value_name("NAME"))
        .arg(Arg::new("curves").long("curves").action(ArgAction::SetTrue))
        .arg(
            Arg::new("layer")
                .long("layer")
                .value_name("NAME[:WEIGHT]")
                .action(ArgAction::Append)
                .help("play a clip over the one on show (repeatable)"),
        )
}

fn parse_args() -> Args {
    let m = command().get_matches();
    let mut layers = Vec::new();
    for l in m.get_many::<String>("layer").into_iter().flatten() {
        match layers_panel::parse_layer(l) {
            Ok(layer) => layers.push(layer),
            Err(e) => command()
                .error(clap::error::ErrorKind::InvalidValue, e)
                .exit(),
        }
    }
    let mut args = Args {
        files: m
            .get_many::<PathBuf>("files")
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
        clip: m.get_one::<String>("clip").cloned(),
        screenshot: m.get_one::<PathBuf>("screenshot").cloned(),
        at: *m.get_one::<f32>("at").expect("defaulted"),
        camera: m.get_one::<String>("camera").cloned(),
        frame_all: m.get_flag("frame-all"),
        bone: m.get_one::<String>("bone").cloned(),
        curves: m.get_flag("curves"),
        layers,
    };
    if args.files.is_empty() {
        // The repository's bundled samples (this package lives in `examples/`).
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
        let anims = assets.join("anims");
        args.files = vec![
            // The sample RenderWare ped: the GTA clips play on it (its .txd beside it).
            assets.join("characters/ped.dff"),
            anims.join("sa_ped.ifp"),
            anims.join("vc_ped.ifp"),
            anims.join("lamp.dan"),
            anims.join("anie/character.anie"),
            anims.join("anie/mesh_ffd.anie"),
            anims.join("anie/blend_sheet.anie"),
        ];
    }
    args
}

/// How the camera starts: `--camera front|side|top|three-quarter|follow`, `--frame-all` (the
/// pose over the whole clip, its path included; a screenshot without it frames the pose it
/// takes, the window frames the clip and follows one that travels).
fn framing(args: &Args) -> Framing {
    let mut framing = Framing {
        frame_all: args.frame_all,
        pose_only: args.screenshot.is_some() && !args.frame_all,
        pose_at: args.screenshot.is_some().then_some(args.at),
        ..Framing::default()
    };
    match args.camera.as_deref() {
        None => {}
        Some("follow") => {
            framing.follow = true;
            framing.follow_forced = true;
            framing.frame_all = false;
            framing.pose_only = false;
        }
        Some(name) => match View::parse(name) {
            Some(v) => {
                framing.view = Some(v);
                framing.view_forced = true;
            }
            None => {
                eprintln!("--camera takes front, side, top, three-quarter or follow, not {name:?}");
                std::process::exit(2);
            }
        },
    }
    framing
}

fn main() -> AppExit {
    let args = parse_args();
    let mut app = App::new();
    // Motion files load through one asset source per GTA game (see `rigplay_preview::motion`).
    register_motion_sources(&mut app, "/");
    let exit = app
        .add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: Some(Window {
                        title: "rigplay preview".into(),
                        resolution: WindowResolution::new(1280, 720)
                            .with_scale_factor_override(1.0),
                        ..default()
                    }),
                    ..default()
                })
                // Files are opened by absolute path, wherever they are. Bevy's file watcher
                // would watch all of `/`: `watch_files` looks at the open files instead.
                .set(files_anywhere()),
        )
        .add_plugins((
            EguiPlugin::default(),
            IfpPlugin,
            DanPlugin,
            DffPlugin,
            AniePlugin,
            rigplay_preview::shot::ExitWhenIdlePlugin,
        ))
        .insert_resource(EguiGlobalSettings {
            auto_create_primary_context: false,
            ..default()
        })
        .insert_resource(ClearColor(Color::srgb(0.12, 0.13, 0.15)))
        .insert_resource(Preview {
            files: Vec::new(),
            current: None,
            wanted_clip: args.clip.clone(),
            character: None,
            selected_bone: None,
            body: None,
            stale: Vec::new(),
            search: String::new(),
            sort: rigplay_preview::clips::SortBy::File,
            reveal: false,
            faded_to: None,
            wanted_bone: args.bone.clone(),
            show_curves: args.curves,
            model: None,
        })
        .init_resource::<clip_panel::BlendControls>()
        .init_resource::<HotReload>()
        .insert_resource(layers_panel::LayerArgs {
            wanted: args.layers.clone(),
            done_for: None,
        })
        .insert_resource(Orbit {
            target: Vec3::new(0.0, 0.9, 0.0),
            yaw: View::ThreeQuarter.angles().0,
            pitch: View::ThreeQuarter.angles().1,
            distance: 4.4,
        })
        .insert_resource(framing(&args))
        .insert_resource(UiPointer::default())
        .insert_resource(Shot {
            path: args.screenshot.clone(),
            at: args.at,
            frames: 0,
            requested: false,
        })
        .insert_resource(Startup_ { files: args.files })
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                open_dropped,
                reload_files,
                watch_files,
                reload_changed_files,
                pick_first_clip,
                spawn_character,
                layers_panel::apply_layer_args,
                log_model_shown,
                select_wanted_bone,
                spawn_body,
                fit_body,
                follow_playhead,
                switch_cameras,
                camera_keys,
                frame_character,
                follow_character,
                orbit_camera,
                draw_scene,
                screenshot,
            )
                .chain(),
        )
        .add_systems(EguiPrimaryContextPass, ui::ui)
        .run();
    rigplay_preview::shot::leave(exit)
}

#[derive(Resource)]
#[allow(non_camel_case_types)]
struct Startup_ {
    files: Vec<PathBuf>,
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut preview: ResMut<Preview>,
    start: Res<Startup_>,
) {
    for f in &start.files {
        open(&mut preview, &assets, f);
    }
    // egui draws the panels with the 3D camera, which renders after the 2D one.
    commands.spawn((
        Camera3d::default(),
        Transform::default(),
        PrimaryEguiContext,
    ));
    commands.spawn((
        Camera2d,
        Camera {
            order: -1,
            is_active: false,
            ..default()
        },
        AnieCamera,
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 4000.0,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}
