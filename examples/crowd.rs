//! Many walking GTA peds at once, on the crowd path or as bone entities, with the frame time.
//!
//! N SA skeletons play the bundled walk at random phases and speeds, on the crowd path
//! (`CrowdCharacter`: no bone entities, each pose computed into model-space matrices over both
//! cores and drawn as lines), with the frame time on screen.
//!
//!     cargo run --release --example crowd -- [N] [--model PED.dff|CHARACTER.glb] [--bones]
//!         [--lod M] [--screenshot OUT.png]
//!
//! (N: 1000.) `--model` dresses every ped in a DFF model (its `.txd` beside it), drawn by
//! instanced GPU skinning (`CrowdModel` with `CrowdDrawPlugin`), lit by a sun with shadows, on
//! the model's game's skeleton (`assets/characters/iii_ped.dff`, a GTA III ped of parts, poses
//! III's bones); a
//! `.glb` or `.gltf` humanoid plays the walk retargeted onto its own rig (`CrowdGltfModel`).
//! `--bones` spawns `GtaSkeleton`s instead (one entity per bone, posed by `SkeletalClip`, with
//! transform propagation), or with `--model` the model's own bone hierarchy drawn by Bevy's
//! `SkinnedMesh` (`GtaModel`, or the glTF's scene with `Retarget`): the per-bone path, for
//! comparison. `--lod M` poses the flat
//! path's peds farther than M metres from the camera every other frame (`CrowdLod`).
//! `--screenshot` saves the window after 120 frames, prints the counter line and exits.
//!
//! The counter line gives the frame time and, where the adapter has timestamp queries (Vulkan,
//! DX12), the GPU's time of a frame, shadows included (`GpuFrameTime`).

use bevy::asset::io::AssetSourceBuilder;
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::gltf::Gltf;
use bevy::prelude::*;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot};
use rigplay::plugin::{
    CrowdCharacter, CrowdDrawPlugin, CrowdGltfModel, CrowdLod, CrowdModel, CrowdViewer, Dff,
    DffPlugin, GtaModel, GtaSkeleton, IfpPlugin, Playback, Retarget, RigClip, SkeletalClip,
    SkeletonGizmos,
};
use rigplay::skeleton::GtaGame;
use rigplay_preview::crowd::{
    Counter, GpuFrameTime, counter_text, crowd_args, crowd_command, frame_ms, gpu_frame_ms, random,
};
use rigplay_preview::shot::{ShotAfter, shot_after_frames};

/// What is on show: how many peds, and on which path.
#[derive(Resource, Clone)]
struct Crowd {
    count: usize,
    bones: bool,
    /// The level-of-detail distance (`--lod`).
    lod: Option<f32>,
    /// The asset path of the model the peds wear (`--model`).
    model: Option<String>,
}

/// The asset source `--model`'s folder is read through.
const MODEL_SOURCE: &str = "model";

/// Bevy's task pools with the compute pool (where systems and their parallel loops run, the
/// crowd's posing among them) on every core. By default Bevy gives a quarter of the cores each
/// to its IO and async compute pools and the rest to compute: one compute thread on two cores,
/// four on eight. Those two pools idle while a crowd is posed, so the posing's loop was left to
/// half the cores (measured on two cores: `docs/performance.md`, twenty-sixth session).
fn every_core_computes() -> bevy::app::TaskPoolOptions {
    let mut options = bevy::app::TaskPoolOptions::default();
    options.compute.min_threads = bevy::tasks::available_parallelism();
    options
}

fn main() {
    let m = crowd_command(
        "crowd",
        "Many walking GTA peds at once, with the frame time on screen",
        "1000",
    )
    .arg(
        clap::Arg::new("bones")
            .long("bones")
            .action(clap::ArgAction::SetTrue)
            .help("one entity per bone (the per-bone path), for comparison"),
    )
    .arg(
        clap::Arg::new("lod")
            .long("lod")
            .value_name("METRES")
            .value_parser(clap::value_parser!(f32))
            .help("pose the flat path's peds farther than this from the camera every other frame"),
    )
    .arg(
        clap::Arg::new("model")
            .long("model")
            .value_name("PED.dff|CHARACTER.glb")
            .value_parser(clap::value_parser!(std::path::PathBuf))
            .help(
                "dress the peds in this DFF model (its .txd beside it) or glTF humanoid, drawn by GPU skinning",
            ),
    )
    .get_matches();
    let (count, shot) = crowd_args(&m);
    let bones = m.get_flag("bones");
    let lod = m.get_one::<f32>("lod").copied();
    let model = m.get_one::<std::path::PathBuf>("model").cloned();
    let mut app = App::new();
    if let Some(path) = &model {
        // The model's folder becomes an asset source of its own, so that any path works and the
        // `.txd` beside the model is found.
        let (Some(dir), Some(_)) = (path.parent(), path.file_name()) else {
            eprintln!("crowd: --model needs a file's path, not {}", path.display());
            std::process::exit(2);
        };
        if !path.is_file() {
            eprintln!("crowd: {} is not a file", path.display());
            std::process::exit(2);
        }
        if !is_gltf(path) && !has_extension(path, "dff") {
            eprintln!(
                "crowd: --model takes a .dff, .glb or .gltf, not {}",
                path.display()
            );
            std::process::exit(2);
        }
        let dir = if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        };
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        app.register_asset_source(
            MODEL_SOURCE,
            AssetSourceBuilder::platform_default(&dir.to_string_lossy(), None),
        );
    }
    let crowd = Crowd {
        count,
        bones,
        lod,
        model: model.map(|p| {
            let name = p.file_name().expect("checked").to_string_lossy();
            format!("{MODEL_SOURCE}://{name}")
        }),
    };
    // Joint spheres would cost more than the poses: lines only, and none on dressed peds.
    let gizmos = SkeletonGizmos {
        enabled: crowd.model.is_none(),
        joint_radius: 0.0,
        ..default()
    };
    app.add_plugins((
        DefaultPlugins
            .set(AssetPlugin {
                file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/../assets").into(),
                ..default()
            })
            .set(TaskPoolPlugin {
                task_pool_options: every_core_computes(),
            })
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: format!("rigplay: {count} peds"),
                    ..default()
                }),
                ..default()
            }),
        FrameTimeDiagnosticsPlugin::default(),
        GpuFrameTime,
        IfpPlugin,
        DffPlugin,
        CrowdDrawPlugin,
    ))
    .insert_resource(crowd)
    .insert_resource(CrowdLod {
        half_rate_beyond: lod,
    })
    .insert_resource(ShotAfter::new(shot))
    .insert_resource(gizmos)
    .add_systems(Startup, setup)
    .add_systems(Update, (shot_after_frames, show_counters).chain())
    .add_systems(Update, game_of_model)
    .run();
}

/// Whether `path`'s extension is `ext`, in any case.
fn has_extension(path: &std::path::Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

/// Whether `path` names a glTF file.
/// Crowd characters wearing a DFF model take its game's skeleton once it has loaded (a GTA III
/// ped of parts poses III's bones, playing the SA walk through the bone aliases).
fn game_of_model(
    models: Res<Assets<Dff>>,
    mut events: MessageReader<AssetEvent<Dff>>,
    mut characters: Query<(&mut CrowdCharacter, &CrowdModel)>,
) {
    for event in events.read() {
        let AssetEvent::LoadedWithDependencies { id } = event else {
            continue;
        };
        let Some(model) = models.get(*id) else {
            continue;
        };
        for (mut character, _) in characters.iter_mut().filter(|(_, m)| m.0.id() == *id) {
            if character.game != model.game {
                character.game = model.game;
            }
        }
    }
}

fn is_gltf(path: &std::path::Path) -> bool {
    has_extension(path, "glb") || has_extension(path, "gltf")
}

/// The model the peds wear.
enum Wear {
    Dff(Handle<Dff>),
    /// The file, and its first scene (for `--bones`).
    Gltf(Handle<Gltf>, Handle<WorldAsset>),
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    crowd: Res<Crowd>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let walk: Handle<RigClip> = assets.load("anims/sa_ped.ifp#walk");
    let ped: Option<Wear> = crowd.model.as_ref().map(|path| {
        if is_gltf(std::path::Path::new(path)) {
            Wear::Gltf(
                assets.load(path.clone()),
                assets.load(format!("{path}#Scene0")),
            )
        } else {
            Wear::Dff(assets.load(path.clone()))
        }
    });
    // A square grid, 1.2 m apart, walking in place (the clip's root motion is extracted).
    let columns = (crowd.count as f32).sqrt().ceil().max(1.0) as usize;
    let spacing = 1.2;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..crowd.count {
        let (c, r) = ((i % columns) as f32, (i / columns) as f32);
        let at = Transform::from_xyz(
            (c - columns as f32 / 2.0) * spacing,
            0.0,
            (r - columns as f32 / 2.0) * spacing,
        );
        // Towards the camera: a GTA ped faces −Z, a glTF character +Z.
        let at = match &ped {
            Some(Wear::Gltf(..)) => at,
            _ => at.with_rotation(Quat::from_rotation_y(std::f32::consts::PI)),
        };
        let mut playback = Playback::looping().with_speed(0.8 + 0.4 * random(&mut seed));
        playback.time = random(&mut seed) * 1.2;
        match (&ped, crowd.bones) {
            (None, true) => {
                commands.spawn((
                    GtaSkeleton::SA,
                    SkeletalClip::new(walk.clone()),
                    playback,
                    at,
                ));
            }
            (Some(Wear::Dff(ped)), true) => {
                commands.spawn((
                    GtaModel::new(ped.clone()),
                    SkeletalClip::new(walk.clone()),
                    playback,
                    at,
                    Visibility::default(),
                ));
            }
            (Some(Wear::Gltf(_, scene)), true) => {
                commands.spawn((
                    WorldAssetRoot(scene.clone()),
                    Retarget::new(),
                    SkeletalClip::new(walk.clone()),
                    playback,
                    at,
                    Visibility::default(),
                ));
            }
            (None, false) => {
                commands.spawn((CrowdCharacter::new(GtaGame::Sa, walk.clone()), playback, at));
            }
            (Some(Wear::Dff(ped)), false) => {
                commands.spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(ped.clone()),
                    playback,
                    at,
                ));
            }
            (Some(Wear::Gltf(file, _)), false) => {
                commands.spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdGltfModel::new(file.clone()),
                    playback,
                    at,
                ));
            }
        }
    }
    let extent = columns as f32 * spacing;
    if ped.is_some() {
        commands.spawn((
            DirectionalLight {
                shadow_maps_enabled: true,
                illuminance: 8000.0,
                ..default()
            },
            Transform::from_xyz(1.0, 3.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        commands.spawn((
            Mesh3d(meshes.add(Plane3d::default().mesh().size(extent + 4.0, extent + 4.0))),
            MeshMaterial3d(materials.add(Color::srgb(0.45, 0.47, 0.42))),
        ));
    }
    commands.spawn((
        Camera3d::default(),
        CrowdViewer,
        Transform::from_xyz(0.0, 0.5 * extent + 2.0, 0.9 * extent + 3.0)
            .looking_at(Vec3::new(0.0, 0.9, 0.0), Vec3::Y),
    ));
    commands.spawn(counter_text());
}

fn show_counters(
    diagnostics: Res<DiagnosticsStore>,
    crowd: Res<Crowd>,
    shot: Res<ShotAfter>,
    characters: Query<&CrowdCharacter>,
    mut text: Single<&mut Text, With<Counter>>,
) {
    // The crowd's game (a DFF model's, once it has loaded).
    let game = match characters.iter().next().map(|c| c.game) {
        Some(GtaGame::Iii) => "GTA III",
        Some(GtaGame::Vc) => "VC",
        _ => "SA",
    };
    let ms = frame_ms(&diagnostics);
    let gpu = gpu_frame_ms(&diagnostics).map_or_else(String::new, |g| format!(", GPU {g:.2} ms"));
    let lod = match crowd.lod {
        Some(m) if !crowd.bones => format!(", half rate beyond {m} m"),
        _ => String::new(),
    };
    let gltf = crowd
        .model
        .as_ref()
        .is_some_and(|m| is_gltf(std::path::Path::new(m)));
    text.0 = format!(
        "{} {game} peds, {}{lod} | frame {ms:.2} ms{gpu}",
        crowd.count,
        match (crowd.bones, crowd.model.is_some(), gltf) {
            (true, false, _) => "bone entities (GtaSkeleton)",
            (true, true, false) => "bone entities (GtaModel, SkinnedMesh)",
            (true, true, true) => "bone entities (glTF scene, Retarget, SkinnedMesh)",
            (false, false, _) => "flat (CrowdCharacter)",
            (false, true, false) => "flat (CrowdCharacter), drawn by GPU skinning (CrowdModel)",
            (false, true, true) =>
                "flat (CrowdCharacter), drawn by GPU skinning (CrowdGltfModel, retargeted)",
        }
    );
    // The frame the screenshot is asked for: the line goes to the terminal too.
    if shot.path.is_some() && shot.frames == shot.frame {
        println!("{}", text.0);
    }
}
