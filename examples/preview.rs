//! rigplay's preview: open animation files, play them, scrub through them.
//!
//!     cargo run --example preview                      # the bundled samples
//!     cargo run --example preview -- FILE...           # your .ifp / .dan / .anie files (or drop them on the window)
//!     cargo run --example preview -- FILE --clip walk --screenshot out.png --at 0.5
//!
//! `--screenshot PATH --at SECONDS` poses the clip at that time, saves a PNG (and, next to it,
//! `PATH.joints.json` with the joints' window positions), and exits: usable headless under xvfb.
//!
//! AnimeEffects projects (`.anie`) play through the same transport and timeline: each frame is
//! evaluated and drawn by rigplay's CPU reference renderer into a texture shown in the view
//! (the GPU renderer in Bevy is a later step).

use bevy::asset::RenderAssetUsages;
use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::WindowResolution;
use bevy_egui::{EguiContexts, EguiPlugin, EguiPrimaryContextPass, egui};
use rigplay::anim::{Clip, ClipBuilder};
use rigplay::formats::anie::AnimeProject;
use rigplay::plugin::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Args {
    files: Vec<PathBuf>,
    clip: Option<String>,
    screenshot: Option<PathBuf>,
    at: f32,
}

fn parse_args() -> Args {
    let mut args = Args {
        files: Vec::new(),
        clip: None,
        screenshot: None,
        at: 0.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--clip" => args.clip = it.next(),
            "--screenshot" => args.screenshot = it.next().map(PathBuf::from),
            "--at" => args.at = it.next().and_then(|t| t.parse().ok()).unwrap_or(0.0),
            _ => args.files.push(PathBuf::from(a)),
        }
    }
    if args.files.is_empty() {
        let anims = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims");
        args.files = vec![
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

fn main() {
    let args = parse_args();
    App::new()
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
                // Files are opened by absolute path, wherever they are.
                .set(AssetPlugin {
                    file_path: "/".into(),
                    unapproved_path_mode: bevy::asset::UnapprovedPathMode::Allow,
                    ..default()
                }),
        )
        .add_plugins((EguiPlugin::default(), IfpPlugin, DanPlugin))
        .insert_resource(ClearColor(Color::srgb(0.12, 0.13, 0.15)))
        .insert_resource(Preview {
            files: Vec::new(),
            current: None,
            wanted_clip: args.clip.clone(),
            character: None,
            selected_bone: None,
        })
        .insert_resource(Orbit {
            target: Vec3::new(0.0, 0.75, 0.0),
            yaw: 0.5,
            pitch: 0.22,
            distance: 4.4,
        })
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
                pick_first_clip,
                spawn_character,
                orbit_camera,
                draw_scene,
                screenshot,
            )
                .chain(),
        )
        // After the playback system (PostUpdate, before propagation): the frame drawn is this
        // frame's time.
        .add_systems(
            PostUpdate,
            draw_anie_views.after(TransformSystems::Propagate),
        )
        .add_systems(EguiPrimaryContextPass, ui)
        .run();
}

#[derive(Resource)]
#[allow(non_camel_case_types)]
struct Startup_ {
    files: Vec<PathBuf>,
}

/// An open file of any format rigplay reads.
enum FileHandle {
    Ifp(Handle<Ifp>),
    Dan(Handle<Dan>),
    /// Read at once (no Bevy asset yet): the project, or why it did not read.
    Anie(Result<Arc<AnieFile>, String>),
}

/// An AnimeEffects project, with a clip registered for `Playback` that only carries its length,
/// so that the transport and timeline drive it like any clip.
struct AnieFile {
    project: AnimeProject,
    warnings: Vec<String>,
    clip: Handle<AnimationClip>,
    duration: f32,
}

/// A character that shows an AnimeEffects project: the file, and the frame drawn last.
#[derive(Component)]
struct AnieView {
    file: usize,
    image: Handle<Image>,
    drawn: Option<f32>,
}

/// Reads an `.anie` file and registers its timeline as a clip.
fn open_anie(
    path: &Path,
    registry: &ClipRegistry,
    clips: &mut Assets<AnimationClip>,
) -> Result<Arc<AnieFile>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let read = AnimeProject::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let project = read.project;
    let fps = project.fps.max(1) as f32;
    let duration = project.max_frame as f32 / fps;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut b = ClipBuilder::new(name);
    b.extend_duration(duration);
    let clip: Arc<Clip> = Arc::new(b.build());
    let handle = clips.add(AnimationClip::default());
    registry.insert(
        handle.id(),
        Arc::new(ClipInfo {
            clip,
            settings: ClipSettings {
                looping: project.looping,
                ..ClipSettings::default()
            },
            skeleton: None,
            tracks: Vec::new(),
            root_track: None,
        }),
    );
    Ok(Arc::new(AnieFile {
        warnings: read.warnings.iter().map(ToString::to_string).collect(),
        project,
        clip: handle,
        duration,
    }))
}

struct OpenFile {
    path: PathBuf,
    handle: FileHandle,
}

/// What the preview shows of a character to spawn for a clip.
#[derive(Clone)]
enum Character {
    Gta(GtaSkeleton),
    Flat(FlatSkeleton),
    /// An AnimeEffects project: the index of its file.
    Anie(usize),
}

/// One clip of an open file, whatever its format.
struct ClipEntry {
    name: String,
    duration: f32,
    /// Frames per second, for stepping and the frame number.
    fps: f32,
    handle: Handle<AnimationClip>,
    looping: bool,
    character: Character,
    /// Lines for the info panel.
    info: Vec<String>,
}

/// A loaded file's clips, description and warnings; `None` while it loads (or failed).
struct FileView {
    clips: Vec<ClipEntry>,
    info: Vec<String>,
    warnings: Vec<String>,
}

fn view(index: usize, file: &OpenFile, ifps: &Assets<Ifp>, dans: &Assets<Dan>) -> Option<FileView> {
    match &file.handle {
        FileHandle::Anie(Err(_)) => None,
        FileHandle::Anie(Ok(anie)) => {
            let p = &anie.project;
            let name = file
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Some(FileView {
                clips: vec![ClipEntry {
                    name,
                    duration: anie.duration,
                    fps: p.fps.max(1) as f32,
                    handle: anie.clip.clone(),
                    looping: p.looping,
                    character: Character::Anie(index),
                    info: vec![format!(
                        "frames 0..={} at {} fps, {:.3} s",
                        p.max_frame, p.fps, anie.duration
                    )],
                }],
                info: vec![
                    format!(
                        "AnimeEffects project, canvas {}×{}",
                        p.canvas_width, p.canvas_height
                    ),
                    format!(
                        "{} nodes, {} image resources; drawn by the CPU renderer",
                        p.objects.len(),
                        p.resources.iter().map(|r| r.nodes.len()).sum::<usize>()
                    ),
                ],
                warnings: anie.warnings.clone(),
            })
        }
        FileHandle::Ifp(h) => {
            let ifp = ifps.get(h)?;
            let skeleton = match ifp.skeleton {
                SkeletonKind::Vc => GtaSkeleton::Vc,
                SkeletonKind::Iii => GtaSkeleton::Iii,
                SkeletonKind::Sa | SkeletonKind::Auto => GtaSkeleton::Sa,
            };
            let p = &ifp.package;
            Some(FileView {
                clips: ifp
                    .clips
                    .iter()
                    .map(|c| ClipEntry {
                        name: c.name.clone(),
                        duration: c.clip.duration(),
                        // SA and VC key their clips at 30 fps.
                        fps: 30.0,
                        handle: c.handle.clone(),
                        looping: c.settings.looping,
                        character: Character::Gta(skeleton),
                        info: vec![
                            format!(
                                "clip {:?}: {} tracks, {} keys, {:.3} s",
                                c.name,
                                c.clip.tracks().len(),
                                c.clip.key_count(),
                                c.clip.duration()
                            ),
                            format!(
                                "loop {}, root motion {:?}",
                                c.settings.looping, c.settings.root_motion
                            ),
                        ],
                    })
                    .collect(),
                info: vec![
                    format!(
                        "{} {}package {:?}",
                        p.version,
                        if p.anlf { "(ANLF) " } else { "" },
                        p.name()
                    ),
                    format!("{} clips, skeleton {:?}", ifp.clips.len(), ifp.skeleton),
                ],
                warnings: ifp.warnings.clone(),
            })
        }
        FileHandle::Dan(h) => {
            let dan = dans.get(h)?;
            let f = &dan.file;
            Some(FileView {
                clips: vec![ClipEntry {
                    name: dan.clip.name.clone(),
                    duration: dan.clip.duration(),
                    // The exporter's 33 ms frames.
                    fps: 1000.0 / 33.0,
                    handle: dan.handle.clone(),
                    looping: dan.settings.looping,
                    character: Character::Flat(dan.skeleton()),
                    info: vec![format!(
                        "{} bones, {} keys, {:.3} s, positions × {}",
                        f.bones.len(),
                        f.key_count(),
                        dan.clip.duration(),
                        dan.settings.scale
                    )],
                }],
                info: vec![
                    format!("DAN version {}, {:?}", f.version, f.comment_text()),
                    format!("range {}–{} ms, model-space bones", f.start_ms, f.end_ms),
                ],
                warnings: dan.warnings.clone(),
            })
        }
    }
}

#[derive(Resource)]
struct Preview {
    files: Vec<OpenFile>,
    /// (file, clip) shown.
    current: Option<(usize, usize)>,
    wanted_clip: Option<String>,
    character: Option<Entity>,
    selected_bone: Option<Entity>,
}

#[derive(Resource)]
struct Orbit {
    target: Vec3,
    yaw: f32,
    pitch: f32,
    distance: f32,
}

#[derive(Resource, Default)]
struct UiPointer {
    over_ui: bool,
}

#[derive(Resource)]
struct Shot {
    path: Option<PathBuf>,
    at: f32,
    frames: u32,
    requested: bool,
}

fn open(
    preview: &mut Preview,
    assets: &AssetServer,
    registry: &ClipRegistry,
    clips: &mut Assets<AnimationClip>,
    path: &Path,
) {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let asset_path = absolute
        .to_string_lossy()
        .trim_start_matches('/')
        .to_string();
    let extension = absolute
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let handle = match extension.as_str() {
        "dan" => FileHandle::Dan(assets.load(asset_path)),
        "anie" => {
            let anie = open_anie(&absolute, registry, clips);
            if let Err(e) = &anie {
                error!("{e}");
            }
            FileHandle::Anie(anie)
        }
        _ => FileHandle::Ifp(assets.load(asset_path)),
    };
    preview.files.push(OpenFile {
        path: absolute,
        handle,
    });
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    registry: Res<ClipRegistry>,
    mut clips: ResMut<Assets<AnimationClip>>,
    mut preview: ResMut<Preview>,
    start: Res<Startup_>,
) {
    for f in &start.files {
        open(&mut preview, &assets, &registry, &mut clips, f);
    }
    commands.spawn((Camera3d::default(), Transform::default()));
    commands.spawn((
        DirectionalLight {
            illuminance: 4000.0,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

fn open_dropped(
    mut drops: MessageReader<FileDragAndDrop>,
    mut preview: ResMut<Preview>,
    assets: Res<AssetServer>,
    registry: Res<ClipRegistry>,
    mut clips: ResMut<Assets<AnimationClip>>,
) {
    for d in drops.read() {
        if let FileDragAndDrop::DroppedFile { path_buf, .. } = d {
            open(&mut preview, &assets, &registry, &mut clips, path_buf);
            let file = preview.files.len() - 1;
            preview.current = Some((file, 0));
        }
    }
}

/// Shows the first clip (or the one asked for) once the first file has loaded.
fn pick_first_clip(mut preview: ResMut<Preview>, ifps: Res<Assets<Ifp>>, dans: Res<Assets<Dan>>) {
    if preview.current.is_some() {
        return;
    }
    for (f, file) in preview.files.iter().enumerate() {
        if let Some(v) = view(f, file, &ifps, &dans) {
            let clip = match &preview.wanted_clip {
                Some(name) => v
                    .clips
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                    .unwrap_or(0),
                None => 0,
            };
            if !v.clips.is_empty() {
                preview.current = Some((f, clip));
                return;
            }
        }
    }
}

/// (Re)spawns the character when the shown clip changes.
fn spawn_character(
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
    let mut playback = Playback::new(clip.handle.clone());
    if !clip.looping {
        playback.mode = PlayMode::Once;
    }
    let mut character = commands.spawn((playback, RootMotion::default()));
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
fn draw_anie_views(
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
        let p = &anie.project;
        let frame = playback.time * p.fps.max(1) as f32;
        let evaluated = rigplay::anie::eval::evaluate(p, frame);
        let framebuffer = rigplay::anie::render::render(p, &evaluated, 1.0);
        let shown = rigplay::anie::render::exported_png(&framebuffer);
        if let Some(mut image) = images.get_mut(&view.image)
            && shown.width == image.width()
            && shown.height == image.height()
        {
            image.data = Some(shown.pixels.iter().flatten().copied().collect());
        }
        view.drawn = Some(playback.time);
    }
}

fn orbit_camera(
    mut orbit: ResMut<Orbit>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    pointer: Res<UiPointer>,
    mut dragging: Local<Option<MouseButton>>,
    mut camera: Query<&mut Transform, With<Camera3d>>,
) {
    for b in [MouseButton::Left, MouseButton::Right, MouseButton::Middle] {
        if buttons.just_pressed(b) && !pointer.over_ui {
            *dragging = Some(b);
        }
    }
    if dragging.is_some_and(|b| !buttons.pressed(b)) {
        *dragging = None;
    }
    match *dragging {
        Some(MouseButton::Left) => {
            orbit.yaw -= motion.delta.x * 0.008;
            orbit.pitch = (orbit.pitch + motion.delta.y * 0.008).clamp(-1.4, 1.4);
        }
        Some(_) => {
            let rotation = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
            let pan =
                rotation * Vec3::new(-motion.delta.x, motion.delta.y, 0.0) * 0.002 * orbit.distance;
            orbit.target += pan;
        }
        None => {}
    }
    if !pointer.over_ui {
        let dy = match scroll.unit {
            MouseScrollUnit::Line => scroll.delta.y,
            MouseScrollUnit::Pixel => scroll.delta.y / 100.0,
        };
        orbit.distance = (orbit.distance * (1.0 - dy * 0.1)).clamp(0.3, 50.0);
    }
    let rotation = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
    for mut t in &mut camera {
        *t = Transform::from_translation(orbit.target + rotation * Vec3::Z * orbit.distance)
            .looking_at(orbit.target, Vec3::Y);
    }
}

fn draw_scene(
    mut gizmos: Gizmos,
    preview: Res<Preview>,
    bones: Query<&GlobalTransform, With<RigBone>>,
) {
    gizmos
        .grid(
            Isometry3d::from_rotation(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)),
            UVec2::splat(20),
            Vec2::splat(0.5),
            Color::srgb(0.3, 0.31, 0.33),
        )
        .outer_edges();
    if let Some(t) = preview.selected_bone.and_then(|b| bones.get(b).ok()) {
        gizmos
            .sphere(t.translation(), 0.045, Color::srgb(1.0, 0.25, 0.3))
            .resolution(16);
        gizmos.axes(*t, 0.12);
    }
}

fn screenshot(
    mut commands: Commands,
    mut shot: ResMut<Shot>,
    preview: Res<Preview>,
    registry: Res<ClipRegistry>,
    mut playbacks: Query<&mut Playback>,
    bones: Query<(&Name, &GlobalTransform), With<RigBone>>,
    camera: Query<(&Camera, &GlobalTransform)>,
) {
    let Some(path) = shot.path.clone() else {
        return;
    };
    let Some(mut playback) = preview.character.and_then(|c| playbacks.get_mut(c).ok()) else {
        return;
    };
    if registry.get(playback.clip.id()).is_none() {
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
    let joints_path = PathBuf::from(format!("{}.joints.json", path.display()));
    if let Err(e) = std::fs::write(&joints_path, json) {
        error!("{}: {e}", joints_path.display());
    }
    commands
        .spawn(Screenshot::primary_window())
        .observe(save_to_disk(path))
        .observe(
            |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                exit.write(AppExit::Success);
            },
        );
}

#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it shows
fn ui(
    mut contexts: EguiContexts,
    mut preview: ResMut<Preview>,
    mut pointer: ResMut<UiPointer>,
    ifps: Res<Assets<Ifp>>,
    dans: Res<Assets<Dan>>,
    registry: Res<ClipRegistry>,
    mut playbacks: Query<(&mut Playback, Option<&UnmatchedTracks>, Option<&RootMotion>)>,
    children: Query<&Children>,
    parents: Query<&ChildOf>,
    rig_bones: Query<(&Name, &RigBone)>,
    mut time: ResMut<Time<Virtual>>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    let mut root = egui::Ui::new(
        ctx.clone(),
        "viewport".into(),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(ctx.viewport_rect()),
    );
    let current = preview.current;

    let character = preview.character;
    let mut selected_bone = preview.selected_bone;
    let info = character
        .and_then(|c| playbacks.get(c).ok())
        .and_then(|(p, _, _)| playback_clip(&registry, p));
    let fps = current
        .and_then(|(f, c)| {
            view(f, &preview.files[f], &ifps, &dans)
                .and_then(|v| v.clips.get(c).map(|clip| clip.fps))
        })
        .unwrap_or(30.0);

    // Transport and timeline.
    egui::Panel::bottom("timeline")
        .resizable(false)
        .exact_size(118.0)
        .show(&mut root, |ui| {
            let Some(c) = character else { return };
            let Ok((mut playback, _, _)) = playbacks.get_mut(c) else {
                return;
            };
            let duration = info.as_ref().map_or(0.0, |i| i.clip.duration());
            ui.horizontal(|ui| {
                if ui
                    .button(if playback.paused {
                        "▶ Play"
                    } else {
                        "⏸ Pause"
                    })
                    .clicked()
                {
                    playback.paused = !playback.paused;
                }
                let frame = 1.0 / fps;
                if ui.button("◀ frame").clicked() {
                    playback.paused = true;
                    let t = (playback.time - frame).max(0.0);
                    playback.seek(t);
                }
                if ui.button("frame ▶").clicked() {
                    playback.paused = true;
                    let t = (playback.time + frame).min(duration);
                    playback.seek(t);
                }
                ui.add(egui::Slider::new(&mut playback.speed, -2.0..=2.0).text("speed"));
                egui::ComboBox::from_id_salt("mode")
                    .selected_text(format!("{:?}", playback.mode))
                    .show_ui(ui, |ui| {
                        for m in [PlayMode::Loop, PlayMode::Once, PlayMode::PingPong] {
                            ui.selectable_value(&mut playback.mode, m, format!("{m:?}"));
                        }
                    });
                let mut game_paused = time.is_paused();
                if ui.checkbox(&mut game_paused, "pause game time").changed() {
                    if game_paused {
                        time.pause()
                    } else {
                        time.unpause()
                    }
                }
                ui.label(
                    egui::RichText::new(format!(
                        "{:7.3} s / {:.3} s  (frame {})",
                        playback.time,
                        duration,
                        (playback.time * fps).round()
                    ))
                    .monospace(),
                );
            });
            // Key times of the selected bone's track (all tracks' keys if none is selected).
            let mut keys: Vec<f32> = Vec::new();
            if let Some(info) = &info {
                let target = selected_bone
                    .and_then(|b| rig_bones.get(b).ok())
                    .map(|(_, r)| r.target);
                for (i, track) in info.clip.tracks().iter().enumerate() {
                    if target.is_none() || Some(info.tracks[i].0) == target {
                        for ch in [track.rotation, track.translation].into_iter().flatten() {
                            keys.extend_from_slice(info.clip.times(ch));
                        }
                    }
                }
            }
            let size = egui::vec2(ui.available_width(), 44.0);
            let response = ui.allocate_response(size, egui::Sense::click_and_drag());
            let rect = response.rect;
            let painter = ui.painter();
            painter.rect_filled(rect, 3.0, egui::Color32::from_gray(28));
            if duration > 0.0 {
                let x = |t: f32| egui::remap(t, 0.0..=duration, rect.x_range());
                for &k in &keys {
                    painter.line_segment(
                        [
                            egui::pos2(x(k), rect.bottom() - 12.0),
                            egui::pos2(x(k), rect.bottom()),
                        ],
                        egui::Stroke::new(1.0, egui::Color32::from_gray(150)),
                    );
                }
                let px = x(playback.time);
                painter.line_segment(
                    [egui::pos2(px, rect.top()), egui::pos2(px, rect.bottom())],
                    egui::Stroke::new(2.0, egui::Color32::from_rgb(250, 200, 60)),
                );
                if (response.clicked() || response.dragged())
                    && let Some(pos) = response.interact_pointer_pos()
                {
                    playback.paused = true;
                    playback.seek(egui::remap_clamp(pos.x, rect.x_range(), 0.0..=duration));
                }
            }
            ui.label(
                egui::RichText::new(
                    "drag to scrub · left-drag orbit · right-drag pan · wheel zoom",
                )
                .weak()
                .small(),
            );
        });

    // Files and clips.
    egui::Panel::left("files")
        .default_size(230.0)
        .show(&mut root, |ui| {
            ui.heading("Files");
            egui::ScrollArea::vertical()
                .id_salt("files")
                .auto_shrink([false; 2])
                .show(ui, |ui| {
                    let mut pick = None;
                    for (f, file) in preview.files.iter().enumerate() {
                        let name = file
                            .path
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default();
                        egui::CollapsingHeader::new(egui::RichText::new(name).strong())
                            .id_salt(f)
                            .default_open(true)
                            .show(ui, |ui| match view(f, file, &ifps, &dans) {
                                Some(v) => {
                                    for (c, clip) in v.clips.iter().enumerate() {
                                        let label =
                                            format!("{}  ({:.2} s)", clip.name, clip.duration);
                                        if ui
                                            .selectable_label(current == Some((f, c)), label)
                                            .clicked()
                                        {
                                            pick = Some((f, c));
                                        }
                                    }
                                }
                                None => {
                                    ui.label(
                                        egui::RichText::new("loading… (or failed: see the log)")
                                            .weak(),
                                    );
                                }
                            });
                    }
                    if pick.is_some() {
                        preview.current = pick;
                    }
                });
            ui.separator();
            ui.label(
                egui::RichText::new("Drop .ifp, .dan or .anie files here to open them.").weak(),
            );
        });

    // Bones and info.
    egui::Panel::right("bones")
        .default_size(240.0)
        .show(&mut root, |ui| {
            ui.heading("Info");
            if let Some((f, c)) = current
                && let Some(v) = view(f, &preview.files[f], &ifps, &dans)
            {
                for line in &v.info {
                    ui.label(line);
                }
                if let Some(clip) = v.clips.get(c) {
                    for line in &clip.info {
                        ui.label(line);
                    }
                }
                for w in &v.warnings {
                    ui.label(
                        egui::RichText::new(format!("⚠ {w}"))
                            .color(egui::Color32::from_rgb(230, 180, 60))
                            .small(),
                    );
                }
            }
            if let Some((_, Some(unmatched), motion)) =
                character.and_then(|c| playbacks.get(c).ok())
            {
                for u in &unmatched.0 {
                    ui.label(egui::RichText::new(format!("unmatched track {u}")).small());
                }
                if let Some(m) = motion {
                    ui.label(format!("root motion {:.2} m", m.total.length()));
                }
            }
            ui.separator();
            ui.heading("Bones");
            egui::ScrollArea::vertical()
                .id_salt("bones")
                .auto_shrink([false; 2])
                .show(ui, |ui| {
                    if let Some(c) = character {
                        // The top bones: a GTA skeleton has one root, a flat one many.
                        let tops: Vec<Entity> = children
                            .iter_descendants(c)
                            .filter(|e| rig_bones.contains(*e))
                            .filter(|e| {
                                parents
                                    .get(*e)
                                    .is_ok_and(|p| !rig_bones.contains(p.parent()))
                            })
                            .collect();
                        for top in tops {
                            bone_tree(ui, top, &children, &rig_bones, &mut selected_bone);
                        }
                    }
                });
        });

    let free = root.available_rect_before_wrap();
    pointer.over_ui = ctx.egui_wants_pointer_input()
        || ctx.is_pointer_over_egui()
        || ctx.pointer_hover_pos().is_some_and(|p| !free.contains(p));
    preview.selected_bone = selected_bone;
    Ok(())
}

fn bone_tree(
    ui: &mut egui::Ui,
    bone: Entity,
    children: &Query<&Children>,
    bones: &Query<(&Name, &RigBone)>,
    selected: &mut Option<Entity>,
) {
    let Ok((name, _)) = bones.get(bone) else {
        return;
    };
    let kids: Vec<Entity> = children
        .get(bone)
        .map(|c| c.iter().filter(|e| bones.contains(*e)).collect())
        .unwrap_or_default();
    let text = egui::RichText::new(name.as_str()).color(if *selected == Some(bone) {
        egui::Color32::from_rgb(255, 90, 100)
    } else {
        egui::Color32::from_gray(220)
    });
    if kids.is_empty() {
        if ui.selectable_label(*selected == Some(bone), text).clicked() {
            *selected = Some(bone);
        }
        return;
    }
    let r = egui::CollapsingHeader::new(text)
        .id_salt(bone)
        .default_open(true)
        .show(ui, |ui| {
            for k in kids {
                bone_tree(ui, k, children, bones, selected);
            }
        });
    if r.header_response.clicked() {
        *selected = Some(bone);
    }
}
