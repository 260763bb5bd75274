//! Drawn crowds: the whole headless frame of N walking SA peds with Bevy's renderer running on
//! wgpu's no-op backend, so that everything the CPU does for a frame is counted (posing,
//! transform propagation, the crowd's bone upload, visibility, extract, prepare, queue, command
//! encoding and submission) and the GPU's execution is not: the no-op device accepts the work
//! and does none. Two threads (Bevy's task pools), pipelined rendering off (the render world runs
//! after the main world, in the same `app.update()`), one camera into a 640×360 image that sees
//! every ped, one directional light without shadows, no skeleton gizmos.
//!
//! Cases, for N = 100, 1,000 and 10,000:
//! * `drawn N`: `CrowdCharacter` + `CrowdModel` of the sample ped, drawn by `CrowdDrawPlugin`;
//! * `flat N`: the same `CrowdCharacter`s without a model (posed, nothing drawn);
//! * `skinned mesh N`: the ped spawned with bone entities (`GtaModel` + `SkeletalClip`), drawn by
//!   Bevy's `SkinnedMesh`;
//! * `empty`: the same app with no ped (the renderer's fixed cost);
//! * `drawn, far half at half rate 10000`: `drawn 10000` with `CrowdLod` posing the peds farther
//!   from the camera than the grid's centre (about half) on every other frame.
//!
//!     cargo bench -p rigplay-examples --bench crowd_draw
//!
//! (or, sharing the tests' build: `cargo bench --profile dev --bench crowd_draw`, whose
//! dependencies are built at O3 too).

use bevy::app::{PluginsState, TaskPoolOptions, TaskPoolPlugin};
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::pipelined_rendering::PipelinedRenderingPlugin;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::settings::RenderCreation;
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use criterion::{Criterion, criterion_group, criterion_main};
use rigplay::plugin::{
    CrowdCharacter, CrowdDrawPlugin, CrowdLod, CrowdMaterial, CrowdModel, CrowdViewer, Dff,
    DffPlugin, GtaModel, IfpPlugin, Playback, RigClip, SkeletalClip, SkeletonGizmos,
};
use rigplay::skeleton::GtaGame;
use std::time::Duration;

// The bench takes only the no-op renderer.
#[allow(dead_code)]
#[path = "../anie_render/headless.rs"]
mod headless;
use headless::noop_renderer;

/// What the peds are.
#[derive(Clone, Copy, PartialEq)]
enum Peds {
    Drawn,
    /// Drawn, with the far half of the crowd (beyond the camera's distance to the grid's
    /// centre) posed at half rate ([`CrowdLod`]).
    DrawnHalfRate,
    Flat,
    SkinnedMesh,
}

/// The app with `count` peds, loaded, dressed and drawn once.
fn scene(peds: Peds, count: usize) -> App {
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(TaskPoolPlugin {
                task_pool_options: TaskPoolOptions::with_num_threads(2),
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
            .set(RenderPlugin {
                render_creation: RenderCreation::Manual(noop_renderer(None)),
                ..default()
            })
            .disable::<bevy::log::LogPlugin>()
            .disable::<WinitPlugin>()
            .disable::<PipelinedRenderingPlugin>(),
        IfpPlugin,
        DffPlugin,
        CrowdDrawPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.0 / 60.0,
    )))
    // Nothing but the peds is drawn: no skeleton lines or joints.
    .insert_resource(SkeletonGizmos {
        enabled: false,
        ..default()
    });
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();

    let server = app.world().resource::<AssetServer>().clone();
    let walk: Handle<RigClip> = server.load("anims/sa_ped.ifp#walk");
    let ped: Handle<Dff> = server.load("characters/ped.dff");
    for _ in 0..10_000 {
        if server.is_loaded_with_dependencies(walk.id())
            && server.is_loaded_with_dependencies(ped.id())
        {
            break;
        }
        app.update();
    }
    assert!(
        server.is_loaded_with_dependencies(ped.id()),
        "the ped loads"
    );

    let mut image = Image::new_target_texture(640, 360, TextureFormat::Rgba8UnormSrgb, None);
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
        DirectionalLight::default(),
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
            Peds::SkinnedMesh => {
                world.spawn((
                    GtaModel::new(ped.clone()),
                    SkeletalClip::new(walk.clone()),
                    playback,
                    at,
                    Visibility::default(),
                ));
            }
        }
    }
    // Until every ped is dressed (the crowd's parts, or Bevy's skinned meshes), and a few frames
    // more for the pipelines.
    let mut dressed = false;
    for _ in 0..200 {
        app.update();
        let world = app.world_mut();
        let parts = match peds {
            Peds::Drawn | Peds::DrawnHalfRate => world
                .query_filtered::<(), With<MeshMaterial3d<CrowdMaterial>>>()
                .iter(world)
                .count(),
            Peds::SkinnedMesh => world
                .query::<&bevy::mesh::skinning::SkinnedMesh>()
                .iter(world)
                .count(),
            Peds::Flat => count,
        };
        if parts >= count {
            dressed = true;
            break;
        }
    }
    assert!(dressed, "every ped is dressed");
    for _ in 0..10 {
        app.update();
    }
    app
}

fn crowd_draw(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd draw");
    g.sample_size(10);
    // Each app is built the first time criterion runs its case (so a filtered run builds only
    // the apps it measures) and dropped before the next case's.
    let mut case = |name: String, peds: Peds, count: usize| {
        let mut app = None;
        g.bench_function(name, |b| {
            let app = app.get_or_insert_with(|| scene(peds, count));
            b.iter(|| app.update())
        });
    };
    case("empty".into(), Peds::Flat, 0);
    for count in [100, 1_000, 10_000] {
        for (name, peds) in [
            ("flat", Peds::Flat),
            ("drawn", Peds::Drawn),
            ("skinned mesh", Peds::SkinnedMesh),
        ] {
            case(format!("{name} {count}"), peds, count);
        }
    }
    case(
        "drawn, far half at half rate 10000".into(),
        Peds::DrawnHalfRate,
        10_000,
    );
    g.finish();
}

criterion_group!(benches, crowd_draw);
criterion_main!(benches);
