//! The drawn-crowd scene shared by the CPU bench (`crowd_draw.rs`, on wgpu's no-op backend) and
//! the GPU timing example (`crowd_gpu.rs`, on the machine's own adapter): N walking SA peds on a
//! grid 1.2 m apart, seen whole from above one corner by one camera drawing into an image, lit
//! by one directional light.

use bevy::app::{Plugins, PluginsState, TaskPoolOptions, TaskPoolPlugin};
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::error_handler::RenderErrorHandler;
use bevy::render::pipelined_rendering::PipelinedRenderingPlugin;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use rigplay::plugin::{
    CrowdCharacter, CrowdDrawPlugin, CrowdGltfModel, CrowdLod, CrowdMaterial, CrowdModel,
    CrowdPose, CrowdViewer, Dff, DffPlugin, GtaModel, IfpPlugin, Playback, RigClip, SkeletalClip,
    SkeletonGizmos,
};
use rigplay::skeleton::GtaGame;
use std::time::Duration;

/// What the peds are.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Peds {
    /// `CrowdCharacter` + `CrowdModel` of the sample ped, drawn by `CrowdDrawPlugin`.
    Drawn,
    /// Drawn, with the far half of the crowd (beyond the camera's distance to the grid's
    /// centre) posed at half rate ([`CrowdLod`]).
    DrawnHalfRate,
    /// The same `CrowdCharacter`s without a model: posed, nothing drawn.
    Flat,
    /// `Flat` on GTA III's skeleton (16 bones), playing the SA walk (bound through the bone
    /// aliases, as III peds play SA clips in the tests).
    FlatIii,
    /// `Flat` on Vice City's skeleton (24 bones), playing VC's walk.
    FlatVc,
    /// `FlatIii` wearing the bundled GTA III ped of parts (16 rigid parts in four colours),
    /// drawn by `CrowdDrawPlugin`.
    DrawnIii,
    /// `CrowdCharacter` + `CrowdGltfModel` of the sample glTF humanoid (29 nodes, the walk
    /// retargeted onto them), drawn by `CrowdDrawPlugin`.
    DrawnGltf,
    /// The `DrawnGltf` characters without `CrowdDrawPlugin`: posed on the glTF rig, nothing
    /// drawn (what `DrawnGltf` costs less its drawing).
    FlatGltf,
    /// The ped spawned with bone entities (`GtaModel` + `SkeletalClip`), drawn by Bevy's
    /// `SkinnedMesh`.
    SkinnedMesh,
    /// No rigplay plugin and no ped, whatever the count: Bevy's renderer, the camera and the
    /// light alone (the same-run baseline of what rigplay's plugins add to a frame with no
    /// character).
    BevyAlone,
}

/// Updates `app` until every asset of `paths` (path under the repository's `assets/`, id) has
/// loaded with its dependencies, for at most 10,000 frames. An error names the first that
/// failed or did not load in time.
fn loaded(
    app: &mut App,
    server: &AssetServer,
    paths: &[(&str, bevy::asset::UntypedAssetId)],
) -> Result<(), String> {
    for _ in 0..10_000 {
        if paths
            .iter()
            .all(|(_, id)| server.is_loaded_with_dependencies(*id))
            || (paths.iter()).any(|(_, id)| server.recursive_dependency_load_state(*id).is_failed())
        {
            break;
        }
        app.update();
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets");
    for (path, id) in paths {
        if let bevy::asset::RecursiveDependencyLoadState::Failed(e) =
            server.recursive_dependency_load_state(*id)
        {
            return Err(format!("{path} (under {root}) failed to load: {e}"));
        }
    }
    for (path, id) in paths {
        if !server.is_loaded_with_dependencies(*id) {
            return Err(format!("{path} (under {root}) did not load in time"));
        }
    }
    Ok(())
}

/// Moves every crowd character 2 cm along X and back on alternate frames, as a game moves its
/// peds every frame: a character that moves changes its transform (its drawn parts stay at the
/// identity, its place going to the bone buffer).
pub struct Moving;

impl Plugin for Moving {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, step_aside);
    }
}

/// [`Moving`]'s system.
fn step_aside(mut frame: Local<u32>, mut characters: Query<&mut Transform, With<CrowdCharacter>>) {
    *frame += 1;
    let dx = if frame.is_multiple_of(2) { 0.02 } else { -0.02 };
    characters
        .par_iter_mut()
        .for_each(|mut at| at.translation.x += dx);
}

/// Moves every crowd character 2.3 cm along X each frame, on and on (1.4 m/s, a walk's pace, at
/// 60 frames a second), as peds walking across a city do: unlike [`Moving`]'s, their parts'
/// boxes (in world space) are left behind and set again every few frames.
pub struct Travelling;

impl Plugin for Travelling {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, walk_on);
    }
}

/// [`Travelling`]'s system.
fn walk_on(mut characters: Query<&mut Transform, With<CrowdCharacter>>) {
    characters
        .par_iter_mut()
        .for_each(|mut at| at.translation.x += 0.023);
}

/// How the scene is rendered.
pub struct Stage {
    /// The renderer (the no-op backend, or the machine's adapter).
    pub render: RenderPlugin,
    /// Bevy's task pools' threads, shared as Bevy shares them (with 2: one each for IO, async
    /// compute and compute); `None`: Bevy's default (every core).
    pub threads: Option<usize>,
    /// The image the camera draws into, in pixels.
    pub size: UVec2,
    /// Whether the light casts shadows.
    pub shadows: bool,
}

/// The app with `count` peds, loaded, dressed and drawn a few times. `more` are plugins added
/// with Bevy's (before the app is finished). An error says what did not happen in time (the
/// assets did not load, or the peds were not all dressed).
pub fn scene<M>(
    peds: Peds,
    count: usize,
    stage: Stage,
    more: impl Plugins<M>,
) -> Result<App, String> {
    let mut app = App::new();
    let mut threads = match stage.threads {
        Some(n) => TaskPoolOptions::with_num_threads(n),
        None => TaskPoolOptions::default(),
    };
    // (The compute pool's threads, where asked: `benches/crowd_draw.rs`.)
    if let Some(n) = std::env::var("RIGPLAY_BENCH_COMPUTE_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        threads.compute.min_threads = n;
        threads.compute.max_threads = n;
    }
    app.add_plugins(
        DefaultPlugins
            .set(TaskPoolPlugin {
                task_pool_options: threads,
            })
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .set(AssetPlugin {
                file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/../assets").into(),
                watch_for_changes_override: Some(false),
                ..default()
            })
            .set(stage.render)
            .disable::<bevy::log::LogPlugin>()
            .disable::<WinitPlugin>()
            .disable::<PipelinedRenderingPlugin>(),
    )
    .add_plugins(more)
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.0 / 60.0,
    )));
    let rigplay = peds != Peds::BevyAlone;
    if rigplay {
        app.add_plugins((IfpPlugin, DffPlugin))
            // Nothing but the peds is drawn: no skeleton lines or joints.
            .insert_resource(SkeletonGizmos {
                enabled: false,
                ..default()
            });
    }
    if rigplay && peds != Peds::FlatGltf {
        app.add_plugins(CrowdDrawPlugin);
    }
    // A renderer that fails stops for good, and a bench of it would time a frame that
    // extracts and draws nothing: fail instead (Bevy's own handler asks the app to exit, which
    // a bench calling `app.update()` never reads).
    app.insert_resource(RenderErrorHandler(|error, _, _| {
        panic!(
            "the renderer failed ({:?}): {}",
            error.ty, error.description
        )
    }));
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();

    let server = app.world().resource::<AssetServer>().clone();
    // (Without rigplay's loaders and asset types, nothing to load: no ped.)
    let count = if rigplay { count } else { 0 };
    fn load<A: Asset>(server: &AssetServer, rigplay: bool, path: &'static str) -> Handle<A> {
        match rigplay {
            true => server.load(path),
            false => Handle::default(),
        }
    }
    let walk: Handle<RigClip> = load(&server, rigplay, "anims/sa_ped.ifp#walk");
    let vc_walk: Handle<RigClip> = load(&server, rigplay, "anims/vc_ped.ifp#walk");
    let ped: Handle<Dff> = load(&server, rigplay, "characters/ped.dff");
    let iii_ped: Handle<Dff> = load(&server, rigplay, "characters/iii_ped.dff");
    let humanoid: Handle<bevy::gltf::Gltf> = load(&server, rigplay, "characters/humanoid.glb");
    let paths = [
        ("anims/sa_ped.ifp#walk", walk.id().untyped()),
        ("anims/vc_ped.ifp#walk", vc_walk.id().untyped()),
        ("characters/ped.dff", ped.id().untyped()),
        ("characters/iii_ped.dff", iii_ped.id().untyped()),
        ("characters/humanoid.glb", humanoid.id().untyped()),
    ];
    if rigplay {
        loaded(&mut app, &server, &paths)?;
    }
    let mut image = Image::new_target_texture(
        stage.size.x,
        stage.size.y,
        TextureFormat::Rgba8UnormSrgb,
        None,
    );
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(image);
    // A grid 1.2 m apart, seen whole from above one corner.
    let columns = (count as f32).sqrt().ceil().max(1.0) as usize;
    let extent = columns as f32 * 1.2;
    // Ped `i`'s place on the grid.
    let place = |i: usize| {
        let (c, r) = ((i % columns) as f32, (i / columns) as f32);
        Vec3::new(
            (c - columns as f32 / 2.0) * 1.2,
            0.0,
            (r - columns as f32 / 2.0) * 1.2,
        )
    };
    let eye = Vec3::new(0.0, 0.6 * extent + 3.0, 0.9 * extent + 4.0);
    let camera = app
        .world_mut()
        .spawn((
            Camera3d::default(),
            RenderTarget::Image(target.into()),
            Msaa::Off,
            Transform::from_translation(eye).looking_at(Vec3::new(0.0, 0.9, 0.0), Vec3::Y),
        ))
        .id();
    if peds == Peds::DrawnHalfRate {
        let beyond = eye.length();
        app.world_mut().entity_mut(camera).insert(CrowdViewer);
        app.insert_resource(CrowdLod {
            half_rate_beyond: Some(beyond),
        });
        let far = (0..count)
            .filter(|&i| place(i).distance(eye) > beyond)
            .count();
        eprintln!("half rate beyond {beyond:.0} m: {far} of {count} peds");
    }
    app.world_mut().spawn((
        DirectionalLight {
            shadow_maps_enabled: stage.shadows,
            ..default()
        },
        Transform::from_xyz(1.0, 3.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    for i in 0..count {
        let at = Transform::from_translation(place(i));
        let mut playback = Playback::looping();
        playback.seek(((i * 7919) % 1000) as f32 / 1000.0 * 1.2);
        let world = app.world_mut();
        match peds {
            Peds::Drawn | Peds::DrawnHalfRate => {
                world.spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(ped.clone()),
                    playback,
                    at,
                ));
            }
            Peds::Flat => {
                world.spawn((CrowdCharacter::new(GtaGame::Sa, walk.clone()), playback, at));
            }
            Peds::FlatIii => {
                world.spawn((
                    CrowdCharacter::new(GtaGame::Iii, walk.clone()),
                    playback,
                    at,
                ));
            }
            Peds::DrawnIii => {
                world.spawn((
                    CrowdCharacter::new(GtaGame::Iii, walk.clone()),
                    CrowdModel(iii_ped.clone()),
                    playback,
                    at,
                ));
            }
            Peds::FlatVc => {
                let character = CrowdCharacter::new(GtaGame::Vc, vc_walk.clone());
                world.spawn((character, playback, at));
            }
            Peds::DrawnGltf | Peds::FlatGltf => {
                world.spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdGltfModel::new(humanoid.clone()),
                    playback,
                    at,
                ));
            }
            Peds::SkinnedMesh => {
                world.spawn((
                    GtaModel::new(ped.clone()),
                    SkeletalClip::new(walk.clone()),
                    playback,
                    at,
                    Visibility::default(),
                ));
            }
            // (No ped: the count is 0.)
            Peds::BevyAlone => {}
        }
    }
    // Until every ped is dressed (the crowd's parts, or Bevy's skinned meshes), and a few frames
    // more for the pipelines.
    let mut dressed = false;
    for _ in 0..200 {
        app.update();
        let world = app.world_mut();
        let parts = match peds {
            Peds::Drawn | Peds::DrawnHalfRate | Peds::DrawnGltf | Peds::DrawnIii => world
                .query_filtered::<(), With<MeshMaterial3d<CrowdMaterial>>>()
                .iter(world)
                .count(),
            Peds::SkinnedMesh => world
                .query::<&bevy::mesh::skinning::SkinnedMesh>()
                .iter(world)
                .count(),
            Peds::Flat | Peds::FlatIii | Peds::FlatVc | Peds::BevyAlone => count,
            // Every character posed (on the glTF rig, once the file's rig is made).
            Peds::FlatGltf => world
                .query::<&CrowdPose>()
                .iter(world)
                .filter(|p| !p.bones.is_empty())
                .count(),
        };
        if parts >= count {
            dressed = true;
            break;
        }
    }
    if !dressed {
        return Err(format!(
            "the {count} peds were not all dressed in 200 frames"
        ));
    }
    for _ in 0..10 {
        app.update();
    }
    Ok(app)
}
