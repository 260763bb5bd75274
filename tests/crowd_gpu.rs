//! Crowd characters drawn by instanced GPU skinning (`CrowdDrawPlugin`) against the same poses
//! drawn by Bevy's own `SkinnedMesh` (`GtaModel` with bone entities), on lavapipe or any Vulkan
//! adapter, headless. `.ci/run` sets RIGPLAY_REQUIRE_RENDER=1 so a machine that cannot render
//! fails; elsewhere a machine with no adapter prints NOT RUN (`anie_gpu::on_gpu`).

use crate::anie_gpu::headless::{
    crop, headless_app_on, headless_app_with, noop_renderer, read_back,
};
use crate::anie_gpu::{on_gpu, write_diff};
use crate::gltf_export::{floats, ints};
use bevy::animation::AnimationTargetId;
use bevy::camera::RenderTarget;
use bevy::camera::visibility::VisibleEntities;
use bevy::core_pipeline::prepass::{DeferredPrepass, DepthPrepass, MotionVectorPrepass};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::ecs::query::QueryFilter;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::{AsBindGroup, TextureFormat, TextureUsages};
use bevy::render::settings::RenderCreation;
use bevy::shader::ShaderRef;
use bevy::time::TimeUpdateStrategy;
use rigplay::anie::cpu::RgbaImage;
use rigplay::plugin::{
    CrowdCharacter, CrowdDrawPlugin, CrowdDrawSettings, CrowdGltfModel, CrowdLod, CrowdMaterial,
    CrowdModel, CrowdPose, CrowdViewer, Dff, DffPlugin, GtaModel, IfpPlugin, KeepCrowdPose,
    Playback, Retarget, RigClip, SkeletalClip, SkeletonGizmos,
};
use rigplay::skeleton::GtaGame;
use std::any::TypeId;
use std::path::{Path, PathBuf};
use std::time::Duration;

const W: u32 = 384;
const H: u32 = 320;

/// A pair of the same ped, in the same place and pose: drawn by Bevy's skinning, and by the
/// crowd.
struct Pair {
    model: Entity,
    crowd: Entity,
}

fn spawn_pair(
    app: &mut App,
    ped: &Handle<Dff>,
    walk: &Handle<RigClip>,
    at: Transform,
    t: f32,
) -> Pair {
    let model = GtaModel::new(ped.clone());
    spawn_pair_of(
        app,
        GtaGame::Sa,
        model,
        CrowdModel(ped.clone()),
        walk,
        at,
        t,
    )
}

/// A pair of one character, at `at` and paused `t` seconds into `walk`: `model` (what Bevy
/// draws, with `SkeletalClip`) shown, and a crowd character of `game` wearing `worn` hidden.
fn spawn_pair_of(
    app: &mut App,
    game: GtaGame,
    model: impl Bundle,
    worn: impl Bundle,
    walk: &Handle<RigClip>,
    at: Transform,
    t: f32,
) -> Pair {
    let mut playback = Playback::looping();
    playback.paused = true;
    playback.seek(t);
    let model = app
        .world_mut()
        .spawn((
            model,
            SkeletalClip::new(walk.clone()),
            playback.clone(),
            at,
            Visibility::Visible,
        ))
        .id();
    let crowd = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(game, walk.clone()),
            worn,
            playback,
            at,
            Visibility::Hidden,
        ))
        .id();
    Pair { model, crowd }
}

/// Both of each of `pairs` played 12 frames of 1/30 s into a cross-fade of 0.8 s to `to` (the old
/// clip's weight 0.5), started in the same frame, then paused.
fn cross_fade_halfway(app: &mut App, pairs: &[&Pair], to: &Handle<RigClip>) {
    let both = || pairs.iter().flat_map(|p| [p.model, p.crowd]);
    for e in both() {
        app.world_mut().get_mut::<Playback>(e).unwrap().paused = false;
    }
    for pair in pairs {
        app.world_mut()
            .get_mut::<SkeletalClip>(pair.model)
            .unwrap()
            .cross_fade(to.clone(), 0.8);
        app.world_mut()
            .get_mut::<CrowdCharacter>(pair.crowd)
            .unwrap()
            .cross_fade(to.clone(), 0.8);
    }
    for _ in 0..12 {
        app.update();
    }
    for e in both() {
        app.world_mut().get_mut::<Playback>(e).unwrap().paused = true;
    }
}

/// A folder of the test build's own named `name`, with `files` copied into it from the
/// repository's assets (`(from, to)`).
fn asset_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let assets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    for (from, to) in files {
        std::fs::copy(assets.join(from), dir.join(to)).unwrap();
    }
    dir
}

/// Marks the asset `handle` modified (taken mutably, as a reload changes it): Bevy sends its
/// `AssetEvent::Modified` on the next update.
fn mark_modified<A: Asset>(app: &mut App, handle: &Handle<A>) {
    (app.world_mut().resource_mut::<Assets<A>>())
        .get_mut(handle)
        .unwrap()
        .into_inner();
}

/// How many entities match the query filter `F`.
fn count<F: QueryFilter>(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query_filtered::<(), F>().iter(world).count()
}

/// The crowd's drawn parts (each with a [`CrowdMaterial`]).
type CrowdParts = With<MeshMaterial3d<CrowdMaterial>>;

/// Updates `app` until `done`: at most `frames` updates, or more while less than 60 s have passed
/// (assets load on other threads in wall time; on a loaded machine 600 quick no-op frames can
/// pass before a clip is in).
fn run_until(app: &mut App, frames: usize, mut done: impl FnMut(&mut App) -> bool) {
    let start = std::time::Instant::now();
    let mut updates = 0;
    while updates < frames || start.elapsed() < Duration::from_secs(60) {
        app.update();
        updates += 1;
        if done(app) {
            return;
        }
        if updates >= frames {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn camera(app: &mut App, at: Vec3, looking_at: Vec3) -> (Entity, Handle<Image>) {
    let mut image = Image::new_target_texture(W, H, TextureFormat::Rgba8UnormSrgb, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(image);
    let camera = app
        .world_mut()
        .spawn((
            Camera3d::default(),
            Camera {
                clear_color: ClearColorConfig::Custom(Color::srgb(0.2, 0.25, 0.3)),
                ..default()
            },
            RenderTarget::Image(target.clone().into()),
            Msaa::Off,
            Transform::from_translation(at).looking_at(looking_at, Vec3::Y),
        ))
        .id();
    (camera, target)
}

/// A headless app that draws crowds (`CrowdDrawPlugin`) with assets under `root`, frames of
/// 1/30 s.
fn crowd_app(root: &std::path::Path) -> App {
    with_crowd_frames(headless_app_with(
        root,
        (IfpPlugin, DffPlugin, CrowdDrawPlugin),
    ))
}

/// How far `e`'s playhead ran since it stood at `before`, seconds, counted around the loop (a
/// looping clip may have wrapped back to its start since): 0 when it stood still.
fn ran(app: &App, e: Entity, before: f32) -> f32 {
    let playback = app.world().get::<Playback>(e).unwrap();
    let duration = playback.duration.expect("a timed playhead");
    (playback.time - before).rem_euclid(duration)
}

/// `app` stepping frames of 1/30 s.
fn with_crowd_frames(mut app: App) -> App {
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.0 / 30.0,
    )));
    app
}

/// The repository's sample ped and its walk and wave clips, loading in `app`.
fn sample_ped(app: &App) -> (Handle<Dff>, Handle<RigClip>, Handle<RigClip>) {
    let server = app.world().resource::<AssetServer>();
    (
        server.load("characters/ped.dff"),
        server.load("anims/sa_ped.ifp#walk"),
        server.load("anims/sa_ped.ifp#wave"),
    )
}

/// The cameras' images, once two reads in a row agree with no pipeline still compiling at
/// either (pipelines compile and textures upload meanwhile, leaving parts undrawn for a few
/// frames; under load a pipeline can take longer than two reads).
fn settled(app: &mut App, targets: &[Handle<Image>]) -> Vec<RgbaImage> {
    settled_after(app, targets, |_| {})
}

/// [`settled`], with `before_read` run before each read (to bring a scene that changes every
/// frame to the same phase).
fn settled_after(
    app: &mut App,
    targets: &[Handle<Image>],
    mut before_read: impl FnMut(&mut App),
) -> Vec<RgbaImage> {
    let whole = URect::new(0, 0, W, H);
    let mut last: Option<Vec<RgbaImage>> = None;
    for _ in 0..40 {
        for _ in 0..5 {
            app.update();
        }
        before_read(app);
        let images: Vec<RgbaImage> = read_back(app, targets)
            .expect("read back")
            .iter()
            .map(|bytes| crop(bytes, W, whole).unwrap())
            .collect();
        let compiling = app
            .sub_app(bevy::render::RenderApp)
            .world()
            .resource::<bevy::render::render_resource::PipelineCache>()
            .waiting_pipelines()
            .next()
            .is_some();
        if compiling {
            last = None;
            continue;
        }
        if last
            .as_ref()
            .is_some_and(|l| l.iter().zip(&images).all(|(a, b)| a.pixels == b.pixels))
        {
            return images;
        }
        last = Some(images);
    }
    panic!("the images never settled");
}

/// Where the far characters stand: 2.8 km out, at the corner of San Andreas' map.
/// The sample ped's parts in the crowd: its skinned body's two materials (equal: white, on the
/// `ped` atlas) merged into one, and the cap (another texture, alpha-masked). Bevy draws three
/// meshes.
const PED_PARTS: usize = 2;

const FAR: Vec3 = Vec3::new(2000.0, 0.0, -2000.0);

/// Two cameras, at the origin and at [`FAR`], each `back` metres out on +Z (`back − 1` at
/// `FAR`) and `up` high looking at 0.8 m above its place, a sun with shadows, and a ground of
/// 8 × 8 m under each: the scene the crowd's pixel tests draw in.
fn near_and_far(app: &mut App, up: f32, back: f32) -> [(Entity, Handle<Image>); 2] {
    let near = camera(app, Vec3::new(0.0, up, back), Vec3::new(0.0, 0.8, 0.0));
    let far = camera(
        app,
        FAR + Vec3::new(0.0, up, back - 1.0),
        FAR + Vec3::new(0.0, 0.8, 0.0),
    );
    sun_and_grounds(app, &[Vec3::ZERO, FAR]);
    [near, far]
}

/// The sun with shadows of the crowd's pixel tests, and a ground of 8 × 8 m at each of `places`.
fn sun_and_grounds(app: &mut App, places: &[Vec3]) {
    app.world_mut().spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            illuminance: 8000.0,
            ..default()
        },
        Transform::from_xyz(2.0, 4.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    let ground = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Plane3d::default().mesh().size(8.0, 8.0));
    let grey = app
        .world_mut()
        .resource_mut::<Assets<StandardMaterial>>()
        .add(Color::srgb(0.6, 0.6, 0.55));
    for &at in places {
        app.world_mut().spawn((
            Mesh3d(ground.clone()),
            MeshMaterial3d(grey.clone()),
            Transform::from_translation(at),
        ));
    }
}

/// Mean and largest absolute difference per channel (RGB), in 1/255.
fn difference(a: &RgbaImage, b: &RgbaImage) -> (f64, u8, usize) {
    let (mut sum, mut worst, mut over) = (0u64, 0u8, 0usize);
    for (p, q) in a.pixels.iter().zip(&b.pixels) {
        let d = (0..3).map(|i| p[i].abs_diff(q[i])).max().unwrap();
        sum += (0..3).map(|i| u64::from(p[i].abs_diff(q[i]))).sum::<u64>();
        worst = worst.max(d);
        over += usize::from(d > 8);
    }
    (sum as f64 / (a.pixels.len() * 3) as f64, worst, over)
}

/// Pixels that differ from the clear colour (the ground and the peds).
fn covered(a: &RgbaImage, background: &RgbaImage) -> usize {
    a.pixels
        .iter()
        .zip(&background.pixels)
        .filter(|(p, q)| p != q)
        .count()
}

/// The same poses drawn by the crowd renderer and by Bevy's `SkinnedMesh`, same cameras and
/// light (shadows on, onto a ground plane): a paused walk, a walk cross-fading into the wave
/// halfway, a ped half out of the picture, and a ped 2.8 km from the origin (the corner of San
/// Andreas' map) with its own camera. The peds' cap is a rigid atomic on the head bone.
///
/// - Near the origin the two draws agree within the issue's bounds: 2/255 mean and 8/255 per
///   pixel (measured: mean 0.0001/255, largest 2/255).
/// - 2.8 km out they agree within 2/255 mean, but a few silhouette and shadow-edge pixels flip
///   (measured: 12 of the 14,691 pixels the peds change, over 8/255). World coordinates there
///   are f32 with a step of 0.12 mm (2⁻¹³ m at 2000 m), and the two paths round differently:
///   Bevy's joint matrices are world-space matrices made on the CPU, the crowd's are model-space
///   ones that the shader moves into the world last. Measured the same way at other distances:
///   3 such pixels at 0.28 km, 6 at 1 km, 62 at 2 km, 31 at 4.9 km. The test bounds them at
///   0.5 % of the peds' pixels. Each way is farther than that from the exact picture, the crowd
///   no farther than Bevy's own
///   ([`far_from_the_origin_the_crowd_draws_as_near_the_exact_picture_as_bevys_skinned_meshes`]).
///
/// (Culling is checked in `crowd_peds_are_culled_per_instance_on_the_gpu_or_on_the_cpu`.)
#[test]
fn crowd_peds_draw_as_bevys_skinned_meshes_do() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, wave) = sample_ped(&app);

        let far = FAR;
        let [(_, near_image), (_, far_image)] = near_and_far(&mut app, 1.2, 3.6);
        let facing = |x: f32, z: f32| Transform::from_xyz(x, 0.0, z);
        let pairs = [
            spawn_pair(&mut app, &ped, &walk, facing(-0.7, 0.0), 0.4),
            spawn_pair(&mut app, &ped, &walk, facing(0.7, 0.0), 0.2),
            // Half out of the picture on the left.
            spawn_pair(&mut app, &ped, &walk, facing(-1.8, 0.0), 0.7),
            spawn_pair(&mut app, &ped, &walk, Transform::from_translation(far), 0.6),
            // Behind the near camera and far from every other.
            spawn_pair(&mut app, &ped, &walk, facing(0.0, 40.0), 0.1),
        ];
        let fading = &pairs[1];

        // Until every ped is drawn both ways: Bevy's skinned meshes spawned, the crowd's parts
        // dressed.
        let crowd_parts = count::<CrowdParts>;
        let skinned = count::<With<SkinnedMesh>>;
        run_until(&mut app, 600, |app| {
            crowd_parts(app) >= pairs.len() && skinned(app) >= pairs.len()
        });
        assert!(crowd_parts(&mut app) >= pairs.len(), "the crowd is dressed");
        // The sample ped: its skinned body in two materials, and the cap, a rigid atomic on the
        // head, as Bevy draws it: 2 skinned meshes and 1 plain one; in the crowd the body's
        // two (equal) materials are one part (`PED_PARTS`).
        assert_eq!(crowd_parts(&mut app), PED_PARTS * pairs.len());
        assert_eq!(skinned(&mut app), 2 * pairs.len());
        // The cross-fade, halfway.
        cross_fade_halfway(&mut app, &[fading], &wave);
        let weight = app
            .world()
            .get::<SkeletalClip>(fading.model)
            .unwrap()
            .fade_weight()
            .expect("still fading");
        assert!((0.2..0.8).contains(&weight), "mid-fade: {weight}");
        let times =
            [fading.model, fading.crowd].map(|e| app.world().get::<Playback>(e).unwrap().time);
        assert!((times[0] - times[1]).abs() < 1e-6, "{times:?}");

        let targets = [near_image, far_image];
        let [empty, bevys, crowds] = neither_bevys_crowds_in(&mut app, &pairs, &targets);

        for (k, name) in ["near", "far"].iter().enumerate() {
            compare(name, k == 0, &bevys[k], &crowds[k], &empty[k]);
        }

        // 70 more crowd peds, behind the near camera, take the bone buffer past its 64 slots, so
        // that it is made anew on the GPU; then every pair moves on to a new time, which only the
        // new buffer holds.
        for i in 0..70 {
            app.world_mut().spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdModel(ped.clone()),
                Transform::from_xyz(i as f32, 0.0, 60.0),
            ));
        }
        for pair in &pairs {
            for e in [pair.model, pair.crowd] {
                let mut playback = app.world_mut().get_mut::<Playback>(e).unwrap();
                let t = playback.time + 0.25;
                playback.seek(t);
            }
        }
        show_pairs(&mut app, &pairs, Some(false));
        let bevys = settled(&mut app, &targets);
        show_pairs(&mut app, &pairs, Some(true));
        let crowds = settled(&mut app, &targets);
        assert!(
            crowd_parts(&mut app) >= PED_PARTS * (pairs.len() + 70),
            "the new peds are dressed"
        );
        compare(
            "near, the buffer grown",
            true,
            &bevys[0],
            &crowds[0],
            &empty[0],
        );
    });
}

/// The places of the one scene of
/// [`far_from_the_origin_the_crowd_draws_as_near_the_exact_picture_as_bevys_skinned_meshes`]:
/// the origin, then 1.0, 2.8 ([`FAR`]) and 4.9 km out. (A coordinate of 704 steps by 2⁻¹⁴ m in
/// f32, 2000 by 2⁻¹³ m (0.12 mm), 3456 by 2⁻¹² m.)
const EXACT_PLACES: [Vec3; 4] = [
    Vec3::ZERO,
    Vec3::new(704.0, 0.0, -704.0),
    FAR,
    Vec3::new(3456.0, 0.0, -3456.0),
];

/// How near the exact picture each way draws peds far from the origin, where the two ways
/// differ by more than 8/255 on a few pixels ([`crowd_peds_draw_as_bevys_skinned_meshes_do`]).
/// The same scene stands at each of [`EXACT_PLACES`]: a ground, two peds (one mid cross-fade)
/// drawn both ways, a camera, and the one sun with shadows. Every offset within a scene is a
/// sum of powers of two that f32 holds exactly at every place (2000 + 1.25 is exact), so in exact
/// arithmetic the pictures are the same. At the origin the two ways agree within 1/255: Bevy's
/// picture there is the reference, the exact picture.
///
/// Far out, each way is farther from the exact picture than the two are from each other.
/// Measured (pixels over 8/255; the peds change 31,466 pixels with shadows, 25,963 without):
///
/// | | 1.0 km | 2.8 km | 4.9 km |
/// |---|---|---|---|
/// | shadows: Bevy vs exact | 686 | 303 | 867 |
/// | shadows: crowd vs exact | 699 | 296 | 835 |
/// | shadows: crowd vs Bevy | 18 | 34 | 132 |
/// | no shadows: Bevy vs exact | 23 | 61 | 259 |
/// | no shadows: crowd vs exact | 22 | 61 | 201 |
/// | no shadows: crowd vs Bevy | 7 | 13 | 62 |
/// | the ground alone vs exact | 17 | 37 | 86 |
///
/// Most of it is the shadows' edges (the shadow maps far out), and the ground's far edge. So the
/// pixels over the issue's 8/255 between the two ways far out are f32's rounding of world
/// coordinates, which Bevy's own skinned meshes show as much as the crowd: the crowd draws no
/// farther from the exact picture than they do (within a tenth, for another CPU's lavapipe).
#[test]
fn far_from_the_origin_the_crowd_draws_as_near_the_exact_picture_as_bevys_skinned_meshes() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, wave) = sample_ped(&app);
        sun_and_grounds(&mut app, &EXACT_PLACES);
        let mut targets = Vec::new();
        let mut pairs = Vec::new();
        for at in EXACT_PLACES {
            let (_, image) = camera(
                &mut app,
                at + Vec3::new(0.0, 1.25, 2.5),
                at + Vec3::new(0.0, 0.75, 0.0),
            );
            targets.push(image);
            let place = |x: f32| Transform::from_translation(at + Vec3::new(x, 0.0, 0.0));
            pairs.push(spawn_pair(&mut app, &ped, &walk, place(-0.375), 0.4));
            pairs.push(spawn_pair(&mut app, &ped, &walk, place(0.375), 0.2));
        }
        dress_pairs(&mut app, &pairs, PED_PARTS, 2);
        // The second ped of each place halfway into a cross-fade, all of them in the same frames.
        let fading: Vec<&Pair> = pairs.iter().skip(1).step_by(2).collect();
        cross_fade_halfway(&mut app, &fading, &wave);

        // With the sun's shadows, then without (the peds' own edges alone).
        for shadows in [true, false] {
            let mut lights = app.world_mut().query::<&mut DirectionalLight>();
            for mut light in lights.iter_mut(app.world_mut()) {
                light.shadow_maps_enabled = shadows;
            }
            let lit = match shadows {
                true => "shadows",
                false => "no shadows",
            };
            let [empty, bevys, crowds] = neither_bevys_crowds_in(&mut app, &pairs, &targets);
            let exact = &bevys[0];
            let shown = covered(exact, &empty[0]);
            assert!(shown > 8000, "{lit}: the peds show: {shown} pixels");
            let report = |name: &str, a: &RgbaImage, b: &RgbaImage| {
                let (mean, worst, over) = difference(a, b);
                println!(
                    "{lit}, {name}: mean {mean:.4}/255, largest {worst}/255, {over} pixels over 8/255 (the peds change {shown})"
                );
                let file = format!("crowd_exact_{lit}_{name}").replace([' ', ',', '.'], "_");
                (mean, over, write_diff(&file, a, b))
            };
            // At the origin the two ways agree (the reference holds for both).
            let (_, over, path) = report("at the origin, crowd vs Bevy", &crowds[0], exact);
            assert_eq!(over, 0, "{}", path.display());
            for (k, at) in EXACT_PLACES.iter().enumerate().skip(1) {
                let km = at.length() / 1000.0;
                let (bevy_mean, bevy_over, _) =
                    report(&format!("{km:.1} km, Bevy vs exact"), &bevys[k], exact);
                let (crowd_mean, crowd_over, path) =
                    report(&format!("{km:.1} km, crowd vs exact"), &crowds[k], exact);
                let (_, between, _) =
                    report(&format!("{km:.1} km, crowd vs Bevy"), &crowds[k], &bevys[k]);
                report(
                    &format!("{km:.1} km, no ped, vs exact"),
                    &empty[k],
                    &empty[0],
                );
                // No farther from the exact picture than Bevy's own (a tenth to spare, for
                // another CPU's lavapipe).
                assert!(
                    crowd_over * 10 <= bevy_over * 11 + 10 && crowd_mean <= bevy_mean * 1.1 + 0.01,
                    "{lit}, {km:.1} km: the crowd {crowd_over} pixels over 8/255 from the exact picture (mean {crowd_mean:.4}), Bevy {bevy_over} ({bevy_mean:.4}) ({})",
                    path.display()
                );
                println!("{lit}, {km:.1} km: {between} pixels over 8/255 between the two ways");
            }
        }
    });
}

/// The vertices the main passes shaded (Bevy's pipeline statistics: vertex shader
/// invocations of `main_opaque_pass_3d` and `main_transparent_pass_3d`), once 30 frames have
/// passed and four frames' counts in a row agree, above 0 (pipelines compile in their own
/// time: until then nothing is drawn).
fn main_pass_vertices(app: &mut App) -> f64 {
    use bevy::diagnostic::DiagnosticsStore;
    let mut counts = Vec::new();
    for frame in 0..400 {
        app.update();
        let store = app.world().resource::<DiagnosticsStore>();
        let shaded = (store.iter())
            .filter(|d| {
                let path = d.path().as_str();
                path.ends_with("vertex_shader_invocations")
                    && (path.contains("main_opaque_pass_3d")
                        || path.contains("main_transparent_pass_3d"))
            })
            .filter_map(|d| d.value())
            .sum::<f64>();
        counts.push(shaded);
        // Eight frames alike: on a loaded machine the count has held still for four frames
        // with one instance of an 82-vertex part missing (a CI run read 1,156 for 1,238) or
        // alone (82 for 1,238), its cause not found.
        let steady = counts.len() >= 8 && counts[counts.len() - 8..].iter().all(|c| *c == shaded);
        // A part whose pipeline is still compiling is not drawn.
        let compiling = (app.sub_app(bevy::render::RenderApp).world())
            .resource::<bevy::render::render_resource::PipelineCache>()
            .waiting_pipelines()
            .next()
            .is_some();
        if frame >= 60 && steady && !compiling && shaded > 0.0 {
            // The readings that led here, for a failure's log.
            eprintln!(
                "vertex counts, frames {}..={frame}: {:?}",
                frame + 1 - counts.len().min(16),
                &counts[counts.len().saturating_sub(16)..]
            );
            return shaded;
        }
    }
    panic!(
        "the vertex counts did not settle: {:?}",
        &counts[counts.len() - 8..]
    );
}

/// A drawn character's pose goes straight into the bone rows: its `CrowdPose` stays empty
/// unless it has `KeepCrowdPose`, and it is drawn the same either way. Two peds paused in the
/// walk, one with `KeepCrowdPose`: the picture at two times, then with the marker moved to the
/// other ped (each ped drawn once from its `CrowdPose` and once from the composition that skips
/// it, at both times), then both far from the one viewer with half rate on (posed every other
/// frame; on the frames it waits, the ped without the marker composed again from its local
/// pose), and with half rate off again. Half rate turned on and off makes the bone buffer anew
/// each time (three frames of rows kept, then two again).
#[test]
fn a_drawn_crowd_characters_pose_is_kept_only_where_asked_and_draws_the_same() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, _) = sample_ped(&app);
        let [(_, image), _] = near_and_far(&mut app, 1.2, 3.6);
        let mut playback = Playback::looping();
        playback.paused = true;
        let mut spawn = |x: f32| {
            let at = Transform::from_xyz(x, 0.0, 0.0);
            let character = CrowdCharacter::new(GtaGame::Sa, walk.clone());
            let model = CrowdModel(ped.clone());
            (app.world_mut())
                .spawn((character, model, playback.clone(), at))
                .id()
        };
        let (kept, bare) = (spawn(-0.6), spawn(0.6));
        app.world_mut().entity_mut(kept).insert(KeepCrowdPose);
        let bones = |app: &App, e: Entity| app.world().get::<CrowdPose>(e).unwrap().bones.len();
        run_until(&mut app, 600, |app| {
            count::<CrowdParts>(app) == 2 * PED_PARTS && bones(app, kept) == 32
        });
        assert_eq!(count::<CrowdParts>(&mut app), 2 * PED_PARTS, "dressed");
        let at = |app: &mut App, t: f32| {
            for e in [kept, bare] {
                app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
            }
        };
        let targets = [image];
        let picture = |app: &mut App| settled(app, &targets).remove(0);

        at(&mut app, 0.2);
        let early = picture(&mut app);
        assert_eq!((bones(&app, kept), bones(&app, bare)), (32, 0));
        at(&mut app, 0.6);
        let late = picture(&mut app);
        let (mean, worst, _) = difference(&early, &late);
        assert!(
            worst > 8,
            "the walk moved the peds: mean {mean}, largest {worst}"
        );

        // The marker moved: each ped drawn the other way.
        app.world_mut().entity_mut(kept).remove::<KeepCrowdPose>();
        app.world_mut().entity_mut(bare).insert(KeepCrowdPose);
        let late_swapped = picture(&mut app);
        assert_eq!((bones(&app, kept), bones(&app, bare)), (0, 32));
        at(&mut app, 0.2);
        let early_swapped = picture(&mut app);
        assert!(
            late_swapped.pixels == late.pixels,
            "late, drawn the other way"
        );
        assert!(
            early_swapped.pixels == early.pixels,
            "early, drawn the other way"
        );

        // Half rate beyond 10 m of a viewer 100 m away: both wait every other frame, one
        // composed again from its local pose, and are drawn as before.
        app.insert_resource(CrowdLod {
            half_rate_beyond: Some(10.0),
        });
        (app.world_mut()).spawn((CrowdViewer, Transform::from_xyz(0.0, 0.0, 100.0)));
        at(&mut app, 0.6);
        let late_far = picture(&mut app);
        assert_eq!((bones(&app, kept), bones(&app, bare)), (0, 32));
        assert!(late_far.pixels == late.pixels, "late, at half rate");

        // Half rate off again.
        app.insert_resource(CrowdLod::default());
        at(&mut app, 0.6);
        let late_again = picture(&mut app);
        assert!(
            late_again.pixels == late.pixels,
            "late, half rate off again"
        );
    });
}

/// The bone rows written straight into mapped staging memory (the default) and into a vector
/// copied at upload (`CrowdDrawSettings::copy_bone_rows`) draw the same to the byte: six peds at
/// six times of the walk, three by the origin and three 2.8 km from it, one cross-fading into
/// the wave, each frame's rows both ways in turn; then with the crowd grown past the bone
/// buffer's 64 slots (the frame it grows, the rows go through the vector whatever the setting);
/// then the first six alone again.
#[test]
fn bone_rows_written_into_mapped_memory_or_copied_draw_the_same() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, wave) = sample_ped(&app);
        let [(_, near), (_, far)] = near_and_far(&mut app, 1.2, 4.0);
        let mut playback = Playback::looping();
        playback.paused = true;
        let spawn = |app: &mut App, i: usize| {
            // Half of them by the camera at the origin, half by the one far from it.
            let base = if i.is_multiple_of(2) { Vec3::ZERO } else { FAR };
            let across = Vec3::new(-0.8 + 0.8 * ((i / 2) % 3) as f32, 0.0, -((i / 6) as f32));
            let at = Transform::from_translation(base + across);
            let character = CrowdCharacter::new(GtaGame::Sa, walk.clone());
            let mut playback = playback.clone();
            playback.seek(0.13 * i as f32);
            let model = CrowdModel(ped.clone());
            (app.world_mut())
                .spawn((character, model, playback, at))
                .id()
        };
        let peds: Vec<Entity> = (0..6).map(|i| spawn(&mut app, i)).collect();
        run_until(&mut app, 600, |app| {
            count::<CrowdParts>(app) == 6 * PED_PARTS
        });
        assert_eq!(count::<CrowdParts>(&mut app), 6 * PED_PARTS, "dressed");
        // One ped halfway into the wave (12 frames of 1/30 s into a fade of 0.8 s), held there
        // (paused, its fade's clock stops too).
        let fading = peds[2];
        app.world_mut().get_mut::<Playback>(fading).unwrap().paused = false;
        (app.world_mut().get_mut::<CrowdCharacter>(fading).unwrap()).cross_fade(wave, 0.8);
        for _ in 0..12 {
            app.update();
        }
        app.world_mut().get_mut::<Playback>(fading).unwrap().paused = true;
        let targets = [near, far];
        let copy = |app: &mut App, copy: bool| {
            app.world_mut()
                .resource_mut::<CrowdDrawSettings>()
                .copy_bone_rows = copy;
        };
        let pictures = |app: &mut App| {
            copy(app, false);
            let mapped = settled(app, &targets);
            copy(app, true);
            let copied = settled(app, &targets);
            for (m, c) in mapped.iter().zip(&copied) {
                let (mean, worst, n) = difference(m, c);
                assert!(
                    m.pixels == c.pixels,
                    "mapped and copied differ: {n} pixels, mean {mean}, largest {worst}"
                );
            }
            mapped
        };
        let six = pictures(&mut app);
        // The crowd grown to 70 characters (128 slots), the rows copied for the last frames.
        let more: Vec<Entity> = (6..70).map(|i| spawn(&mut app, i)).collect();
        run_until(&mut app, 600, |app| {
            count::<CrowdParts>(app) == 70 * PED_PARTS
        });
        assert_eq!(count::<CrowdParts>(&mut app), 70 * PED_PARTS, "grown");
        let grown = pictures(&mut app);
        // (The ones behind change the pictures: the test saw the new slots drawn.)
        for (six, grown) in six.iter().zip(&grown) {
            let (_, worst, _) = difference(six, grown);
            assert!(worst > 8, "the grown crowd is seen");
        }
        // Back to the first six, mapped: the first picture again.
        for e in more {
            app.world_mut().despawn(e);
        }
        copy(&mut app, false);
        let again = settled(&mut app, &targets);
        assert!(again[0].pixels == six[0].pixels, "the six again, near");
        assert!(again[1].pixels == six[1].pixels, "the six again, far");
    });
}

/// Two far drawn peds at half rate, for [`far_pair`].
struct FarPair {
    app: App,
    /// The images of the two cameras, each seeing one ped.
    cameras: [Handle<Image>; 2],
    first: Entity,
    /// The ped with `KeepCrowdPose`.
    second: Entity,
    wave: Handle<RigClip>,
    /// The two pictures once settled (the same: the peds are paused at the same time).
    still: Vec<RgbaImage>,
}

/// Two peds wearing `worn` in one place, paused in the walk, both far from the viewer (half
/// rate, `CrowdLod`), each seen alone by its own camera (render layers 1 and 2), the second with
/// `KeepCrowdPose`, its entity index of the first's parity where `same_turn` (half rate takes
/// turns by the index: they wait on the same frames), else of the other; dressed and settled.
fn far_pair(worn: Worn, same_turn: bool) -> FarPair {
    use bevy::camera::visibility::RenderLayers;
    let wearing = worn.wearing();
    let dir = worn.dir(&format!("crowd_far_pair_{worn:?}_{same_turn}"));
    let mut app = crowd_app(&dir);
    let server = app.world().resource::<AssetServer>();
    let ped: Handle<Dff> = server.load("ped.dff");
    let walk: Handle<RigClip> = server.load(wearing.walk);
    let wave: Handle<RigClip> = server.load(wearing.fade_to);
    let cameras = [1, 2].map(|layer| {
        let (camera, image) = camera(&mut app, Vec3::new(0.0, 1.2, 3.0), Vec3::Y * 0.8);
        (app.world_mut().entity_mut(camera)).insert(RenderLayers::layer(layer));
        image
    });
    app.insert_resource(CrowdLod {
        half_rate_beyond: Some(10.0),
    });
    (app.world_mut()).spawn((CrowdViewer, Transform::from_xyz(0.0, 0.0, 100.0)));
    let mut playback = Playback::looping();
    playback.paused = true;
    let spawn = |app: &mut App| {
        let character = CrowdCharacter::new(wearing.game, walk.clone());
        let model = CrowdModel(ped.clone());
        (app.world_mut())
            .spawn((character, model, playback.clone()))
            .id()
    };
    let first = spawn(&mut app);
    let second = loop {
        let e = spawn(&mut app);
        if (e.index_u32() % 2 == first.index_u32() % 2) == same_turn {
            break e;
        }
        app.world_mut().despawn(e);
    };
    app.world_mut().entity_mut(second).insert(KeepCrowdPose);
    for (character, layer) in [(first, 1), (second, 2)] {
        (app.world_mut().entity_mut(character)).insert(RenderLayers::layer(layer));
    }
    let parts = 2 * wearing.parts;
    run_until(&mut app, 600, |app| count::<CrowdParts>(app) == parts);
    assert_eq!(count::<CrowdParts>(&mut app), parts, "dressed");
    let still = settled(&mut app, &cameras);
    assert!(still[0].pixels == still[1].pixels, "paused");
    FarPair {
        app,
        cameras,
        first,
        second,
        wave,
        still,
    }
}

/// Far drawn characters at half rate (`CrowdLod`) show on the frames they wait the pose they
/// showed the frame before, with or without `KeepCrowdPose` (without it, composed again from
/// the local pose it was composed from: the clip's, or during a cross-fade the blend). Two
/// peds in one place walking, each seen by its own camera alone (render layers 1 and 2), the
/// one with the marker, the other without, waiting on the same frames: their pictures, read
/// back in one frame, are the same to the byte at every read, walking and cross-fading, on
/// frames of both parities.
#[test]
fn far_drawn_characters_waiting_for_their_frame_show_their_last_pose() {
    on_gpu(|| {
        let FarPair {
            mut app,
            cameras,
            first: bare,
            second: kept,
            wave,
            mut still,
        } = far_pair(Worn::SamplePed, true);

        let playing = |app: &mut App, on: bool| {
            for e in [bare, kept] {
                app.world_mut().get_mut::<Playback>(e).unwrap().paused = !on;
            }
        };
        let read = |app: &mut App| -> [RgbaImage; 2] {
            let whole = URect::new(0, 0, W, H);
            let bytes = read_back(app, &cameras).expect("read back");
            [0, 1].map(|i| crop(&bytes[i], W, whole).unwrap())
        };
        playing(&mut app, true);
        let mut seen = vec![still.remove(0)];
        for round in 0..16 {
            if round == 8 {
                for e in [bare, kept] {
                    let mut character = app.world_mut().get_mut::<CrowdCharacter>(e).unwrap();
                    character.cross_fade(wave.clone(), 2.0);
                }
            }
            // Every other read a frame later: reads of both parities.
            if round % 2 == 1 {
                app.update();
            }
            let [without, with] = read(&mut app);
            assert!(
                without.pixels == with.pixels,
                "read {round}: the ped without `KeepCrowdPose` drawn otherwise"
            );
            seen.push(without);
        }
        let bones = |e: Entity| app.world().get::<CrowdPose>(e).unwrap().bones.len();
        assert_eq!((bones(bare), bones(kept)), (0, 32));
        let moved = seen
            .windows(2)
            .filter(|w| w[0].pixels != w[1].pixels)
            .count();
        assert!(moved >= 12, "the peds walked: {moved} of 16 reads changed");
    });
}

/// Whether the ped [`APosed`] watches was posed in the last update: its `CrowdPose` (kept with
/// `KeepCrowdPose`) changes only when it is.
#[derive(Resource)]
struct APosed(Entity, bool);

fn watch_a_posed(mut watched: ResMut<APosed>, poses: Query<Ref<CrowdPose>>) {
    watched.1 = poses.get(watched.0).is_ok_and(|p| p.is_changed());
}

/// A far character waiting for its frame at half rate (`CrowdLod`) holds its bone rows: they are
/// not written that frame, and the GPU draws last frame's, from the other half of the bone
/// buffer (the slot's held mark). Two peds in one place, both far, taking turns (indices of
/// both parities), each seen by its own camera alone; their paused playheads are moved together
/// only in the frames ped A is posed. Read in the frame after, where A waits and B is posed at
/// the same time, the two pictures are the same to the byte, in eight such frames of the walk
/// (the last three with the rows written through the vector, `copy_bone_rows`). The same for
/// the three games' peds: the sample SA ped, a skinned Vice City ped (VC's 24 bones in slots of
/// 32) and the bundled GTA III ped of parts.
/// With the held mark ignored, A's slot in this frame's half holds rows of an earlier frame (the
/// mapped staging memory goes round three buffers), and the pictures differ.
#[test]
fn a_far_character_holding_its_rows_draws_its_last_pose() {
    on_gpu(|| {
        for worn in [Worn::SamplePed, Worn::ViceCity, Worn::IiiSample] {
            a_far_character_wearing_holds_its_rows(worn);
        }
    });
}

/// [`a_far_character_holding_its_rows_draws_its_last_pose`], for peds wearing `worn`.
fn a_far_character_wearing_holds_its_rows(worn: Worn) {
    {
        // A, of the other parity, keeps its pose: its `CrowdPose` says when it is posed.
        let FarPair {
            mut app,
            cameras,
            first: b,
            second: a,
            ..
        } = far_pair(worn, false);
        app.insert_resource(APosed(a, false)).add_systems(
            PostUpdate,
            watch_a_posed.after(rigplay::plugin::PlaybackSystems::Apply),
        );

        let posed = |app: &App| app.world().resource::<APosed>().1;
        let whole = URect::new(0, 0, W, H);
        let mut seen: Vec<RgbaImage> = Vec::new();
        for round in 0..8 {
            // The last three rounds with the rows through the vector (`copy_bone_rows`).
            if round == 5 {
                (app.world_mut().resource_mut::<CrowdDrawSettings>()).copy_bone_rows = true;
            }
            // The next frame poses A (the last one did not).
            if posed(&app) {
                app.update();
            }
            assert!(!posed(&app), "turns");
            let time = 0.1 + 0.13 * round as f32;
            for e in [a, b] {
                app.world_mut().get_mut::<Playback>(e).unwrap().time = time;
            }
            app.update();
            assert!(posed(&app), "round {round}: A posed at {time} s");
            // The frame read: A waits, holding its rows; B is posed at the same time.
            let bytes = read_back(&mut app, &cameras).expect("read back");
            let [posed_b, held] = [0, 1].map(|i| crop(&bytes[i], W, whole).unwrap());
            if held.pixels != posed_b.pixels {
                let diff = write_diff(&format!("crowd_held_rows_{worn:?}"), &held, &posed_b);
                panic!(
                    "{worn:?}, round {round} ({time} s): the held ped drawn otherwise than B ({})",
                    diff.display()
                );
            }
            seen.push(held);
        }
        let moved = seen
            .windows(2)
            .filter(|w| w[0].pixels != w[1].pixels)
            .count();
        eprintln!("{worn:?}: {moved} of 7 reads changed");
        assert_eq!(
            moved, 7,
            "{worn:?}: the peds walked: {moved} of 7 reads changed"
        );
    }
}

/// Shows or hides `character` (its parts inherit its visibility).
fn show(app: &mut App, character: Entity, shown: bool) {
    let visibility = match shown {
        true => Visibility::Inherited,
        false => Visibility::Hidden,
    };
    app.world_mut().entity_mut(character).insert(visibility);
}

/// A crowd app on `root`'s assets that counts the GPU's shaded vertices
/// ([`main_pass_vertices`]), with a camera 3.6 m back looking at a ped's waist and a light, and
/// a paused playback for its characters.
fn counting_app(root: &Path) -> (App, Entity, Playback) {
    let mut app = with_crowd_frames(headless_app_with(
        root,
        (
            IfpPlugin,
            DffPlugin,
            CrowdDrawPlugin,
            bevy::render::diagnostic::RenderDiagnosticsPlugin,
        ),
    ));
    let (camera, _) = camera(&mut app, Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
    app.world_mut().spawn((
        DirectionalLight::default(),
        Transform::from_xyz(1.0, 3.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    let mut paused = Playback::looping();
    paused.paused = true;
    (app, camera, paused)
}

/// Per-instance culling, both ways, counted on the GPU (its pipeline statistics: the vertex
/// shader invocations of the main passes) and on the CPU. One camera; three walking crowd peds
/// (paused): one in the middle of the picture, one half out of it on the left, one behind the
/// camera.
///
/// - By default, where Bevy's renderer culls on the GPU (lavapipe does), the parts carry
///   `NoCpuCulling` and the GPU culls each instance: the ped behind the camera shades no vertex
///   (hiding it changes nothing), the one half inside shades all of its own (the two shown
///   shade twice the middle one's), and the ped behind the camera, moved into view, shades its
///   own too.
/// - With `CrowdDrawSettings::cpu_culling`, the parts are Bevy's CPU-culled meshes again: the
///   camera's visible entities hold the half-inside ped's parts and not those behind it.
/// - So they are while a camera draws without indirect draws (`NoIndirectDrawing`), where the
///   GPU culls nothing (the ped behind the camera, left to the GPU, was measured shading its
///   619 vertices there).
#[test]
fn crowd_peds_are_culled_per_instance_on_the_gpu_or_on_the_cpu() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let (mut app, camera, paused) = counting_app(&root);
        let (ped, walk, _) = sample_ped(&app);
        let mut spawn = |at: Vec3| {
            (app.world_mut())
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(ped.clone()),
                    paused.clone(),
                    Transform::from_translation(at),
                ))
                .id()
        };
        let middle = spawn(Vec3::ZERO);
        let half = spawn(Vec3::new(-1.8, 0.0, 0.0));
        let behind = spawn(Vec3::new(0.0, 0.0, 40.0));
        run_until(&mut app, 600, |app| {
            count::<CrowdParts>(app) == 3 * PED_PARTS
        });
        assert_eq!(count::<CrowdParts>(&mut app), 3 * PED_PARTS, "dressed");
        let gpu_culled = count::<(CrowdParts, With<bevy::camera::visibility::NoCpuCulling>)>;
        assert_eq!(
            gpu_culled(&mut app),
            3 * PED_PARTS,
            "left to the GPU's culling"
        );

        let all = main_pass_vertices(&mut app);
        show(&mut app, behind, false);
        let without_behind = main_pass_vertices(&mut app);
        show(&mut app, half, false);
        let one = main_pass_vertices(&mut app);
        eprintln!(
            "vertices shaded: all three {all}, without the one behind {without_behind}, the middle one alone {one}"
        );
        assert!(one > 0.0, "the middle ped is drawn");
        assert_eq!(all, without_behind, "the ped behind the camera is culled");
        assert_eq!(all, 2.0 * one, "the ped half inside is drawn whole");
        // The ped from behind the camera, moved into the picture on the right: drawn.
        show(&mut app, half, true);
        show(&mut app, behind, true);
        let mut moved = app.world_mut().get_mut::<Transform>(behind).unwrap();
        moved.translation = Vec3::new(0.8, 0.0, 0.0);
        assert_eq!(main_pass_vertices(&mut app), 3.0 * one, "in view, drawn");
        app.world_mut()
            .get_mut::<Transform>(behind)
            .unwrap()
            .translation = Vec3::new(0.0, 0.0, 40.0);

        // Culled on the CPU, as asked: Bevy's own frustum test per part.
        app.insert_resource(CrowdDrawSettings {
            cpu_culling: true,
            ..default()
        });
        assert_eq!(main_pass_vertices(&mut app), all, "the same drawn");
        assert_eq!(gpu_culled(&mut app), 0, "taken back from the GPU's culling");
        // Whether `camera` lists a part of `character` among the meshes it draws.
        let in_view = |app: &App, camera: Entity, character: Entity| {
            let visible =
                (app.world().get::<VisibleEntities>(camera).unwrap()).get(TypeId::of::<Mesh3d>());
            app.world()
                .get::<Children>(character)
                .is_some_and(|c| c.iter().any(|part| visible.contains(&part)))
        };
        assert!(
            in_view(&app, camera, middle) && in_view(&app, camera, half),
            "half inside is drawn"
        );
        assert!(!in_view(&app, camera, behind), "behind the camera is not");
        // And given back to the GPU.
        app.insert_resource(CrowdDrawSettings::default());
        app.update();
        assert_eq!(gpu_culled(&mut app), 3 * PED_PARTS);
        assert_eq!(main_pass_vertices(&mut app), all);
        // A camera that draws without indirect draws culls nothing on the GPU (with one, the
        // ped behind it was measured shading its 619 vertices): the parts are culled on the
        // CPU while one is there. (A second camera, made so: Bevy 0.19.1 fails wgpu's
        // validation when a drawing camera is given `NoIndirectDrawing`.)
        let (direct, _) =
            self::camera(&mut app, Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
        app.world_mut()
            .entity_mut(direct)
            .insert(bevy::render::view::NoIndirectDrawing);
        for _ in 0..5 {
            app.update();
        }
        assert_eq!(gpu_culled(&mut app), 0, "on the CPU");
        assert!(in_view(&app, direct, half) && !in_view(&app, direct, behind));
        app.world_mut().despawn(direct);
        app.update();
        assert_eq!(gpu_culled(&mut app), 3 * PED_PARTS, "the GPU's again");
    });
}

/// The GPU's per-instance culling for the other kinds of crowd model: the bundled GTA III ped
/// of parts (16 rigid parts, one look) and the glTF humanoid. Per model, one paused character in
/// the middle of the picture and one behind the camera, their parts left to the GPU's culling:
/// hiding the one behind changes no count of shaded vertices (it shaded none), and moved into
/// the picture beside the other it doubles the count.
#[test]
fn iii_and_gltf_crowd_characters_are_culled_per_instance_on_the_gpu() {
    on_gpu(|| {
        for worn in [Worn::IiiSample, Worn::Gltf] {
            let dir = worn.dir(&format!("crowd_culled_{worn:?}"));
            let Wearing {
                game, walk, parts, ..
            } = worn.wearing();
            let (mut app, _, paused) = counting_app(&dir);
            let server = app.world().resource::<AssetServer>().clone();
            let walk: Handle<RigClip> = server.load(walk);
            let mut spawn = |at: Vec3| {
                let mut character = app.world_mut().spawn((
                    CrowdCharacter::new(game, walk.clone()),
                    paused.clone(),
                    Transform::from_translation(at),
                ));
                match worn {
                    Worn::Gltf => {
                        character.insert(CrowdGltfModel::new(server.load("humanoid.glb")))
                    }
                    _ => character.insert(CrowdModel(server.load("ped.dff"))),
                };
                character.id()
            };
            spawn(Vec3::new(-0.5, 0.0, 0.0));
            let behind = spawn(Vec3::new(0.0, 0.0, 40.0));
            run_until(&mut app, 600, |app| count::<CrowdParts>(app) == 2 * parts);
            let gpu_culled = count::<(CrowdParts, With<bevy::camera::visibility::NoCpuCulling>)>;
            assert_eq!(gpu_culled(&mut app), 2 * parts, "{worn:?}: left to the GPU");
            let all = main_pass_vertices(&mut app);
            show(&mut app, behind, false);
            let without_behind = main_pass_vertices(&mut app);
            show(&mut app, behind, true);
            app.world_mut()
                .get_mut::<Transform>(behind)
                .unwrap()
                .translation = Vec3::new(0.5, 0.0, 0.0);
            let both = main_pass_vertices(&mut app);
            eprintln!(
                "{worn:?}: vertices shaded with one ped behind the camera {all}, without it {without_behind}, with it in view {both}"
            );
            assert!(all > 0.0, "{worn:?}: the one in view is drawn");
            assert_eq!(all, without_behind, "{worn:?}: the one behind is culled");
            assert_eq!(both, 2.0 * all, "{worn:?}: in view, drawn");
        }
    });
}

/// Each part's box ([`bevy::camera::primitives::Aabb`], for Bevy's culling) holds its
/// character's joints on every frame, and changes seldom, since a part whose box changes is
/// extracted again by Bevy's renderer: four peds walking at four phases keep one box each once a
/// walk cycle (1.2 s) has shown them all its poses, and a ped that turns to the idle clip (a
/// smaller pose) is fitted again after standing loose in its walking box for about 2 s.
///
/// Measured: with the boxes grown to take each pose in, one frame of the first 60 changed some
/// box, none of the next 60. Fitted to each pose as before, 12 and 14 did (and a walking crowd of
/// 10,000 set about 550 of its 20,000 boxes each frame). The standing ped's parts went from
/// 13.8 m³ (the walk's poses, its root travelling) to 10.2 m³.
#[test]
fn a_crowds_boxes_hold_its_joints_and_settle_while_it_walks() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, _) = sample_ped(&app);
        let idle: Handle<RigClip> = app
            .world()
            .resource::<AssetServer>()
            .load("anims/sa_ped.ifp#idle");
        // The peds are spawned once the model and the clips have loaded (on other threads, in
        // their own time), so that each is dressed, and its parts' boxes first fitted, at the
        // phase its walk starts from. Spawned before, a ped posed a few frames before it was
        // dressed (the model loading after the walk, as under load in 1 run of 3 of this
        // module) had its box first fitted to a pose whose box held the whole walk: it never
        // grew, and the idle pose was not loose in it, so it was never fitted again (as it
        // should not be; the check below needs a box the idle pose is loose in).
        let loaded = |app: &App| {
            let server = app.world().resource::<AssetServer>();
            [ped.id().untyped(), walk.id().untyped(), idle.id().untyped()]
                .into_iter()
                .all(|id| server.is_loaded_with_dependencies(id))
        };
        run_until(&mut app, 600, |app| loaded(app));
        assert!(loaded(&app), "the model and the clips loaded");
        let peds = walking_row(&mut app, GtaGame::Sa, &ped, &walk, 4);
        run_until(&mut app, 600, |app| {
            dressed_and_posed(app, &peds, PED_PARTS)
        });
        assert!(
            dressed_and_posed(&mut app, &peds, PED_PARTS),
            "dressed and posed"
        );
        let boxes = part_boxes;
        // 1/30 s a frame: 2 s of walking (more than a cycle), then 2 s more, counting the frames
        // in which some box changed.
        let mut before = boxes(&mut app);
        let mut changed_frames = [0; 2];
        for frame in 0..120 {
            app.update();
            let now = boxes(&mut app);
            if now != before {
                changed_frames[frame / 60] += 1;
            }
            before = now;
        }
        eprintln!(
            "frames changing some box: first 2 s {}, next 2 s {}",
            changed_frames[0], changed_frames[1]
        );
        assert_eq!(changed_frames[1], 0, "the walking crowd's boxes settled");
        let volume = |b: &(Entity, Vec3, Vec3)| (b.2 - b.1).element_product();
        let walking: Vec<f32> = before.iter().map(volume).collect();

        // The first ped stands (the idle clip): within 1.5 s its boxes are still the walk's,
        // by 3 s they are fitted to the idle pose, smaller; the walking peds' do not change.
        app.world_mut()
            .get_mut::<CrowdCharacter>(peds[0])
            .unwrap()
            .cross_fade(idle.clone(), 0.2);
        for _ in 0..45 {
            app.update();
        }
        assert_eq!(boxes(&mut app), before, "not fitted again at once");
        for _ in 45..90 {
            app.update();
        }
        let after = boxes(&mut app);
        for (k, (b, was)) in after.iter().zip(&walking).enumerate() {
            let now = volume(b);
            if b.0 == peds[0] {
                eprintln!("standing ped's part: {was:.3} m³ walking, {now:.3} m³ standing");
                assert!(now < 0.8 * was, "part {k}: {now} of {was}");
            } else {
                assert_eq!(*b, before[k], "a walking ped's box is kept");
            }
        }
    });
}

/// `count` crowd characters of `game` wearing `ped`, walking (`walk`, looping) in a row along x
/// 1.5 m apart, each 0.3 s further into the walk than the one before.
fn walking_row(
    app: &mut App,
    game: GtaGame,
    ped: &Handle<Dff>,
    walk: &Handle<RigClip>,
    count: usize,
) -> Vec<Entity> {
    (0..count)
        .map(|i| {
            let mut playback = Playback::looping();
            playback.seek(i as f32 * 0.3);
            app.world_mut()
                .spawn((
                    CrowdCharacter::new(game, walk.clone()),
                    CrowdModel(ped.clone()),
                    playback,
                    Transform::from_xyz(i as f32 * 1.5, 0.0, 0.0),
                    KeepCrowdPose,
                ))
                .id()
        })
        .collect()
}

/// Whether the crowd holds `parts` drawn parts per character of `characters`, and each of them
/// is posed.
fn dressed_and_posed(app: &mut App, characters: &[Entity], parts: usize) -> bool {
    let posed =
        |e: &Entity| (app.world().get::<CrowdPose>(*e)).is_some_and(|p| !p.bones.is_empty());
    characters.iter().all(posed) && count::<CrowdParts>(app) == parts * characters.len()
}

/// Every crowd part's box (in world space: a part stays at the identity, its character's place
/// being a row of the bone buffer), by character, after checking that it holds the character's
/// joints.
fn part_boxes(app: &mut App) -> Vec<(Entity, Vec3, Vec3)> {
    use bevy::camera::primitives::Aabb;
    let world = app.world_mut();
    let mut parts = world.query_filtered::<(&ChildOf, &Aabb, &GlobalTransform), CrowdParts>();
    let mut found = Vec::new();
    for (of, aabb, own) in parts.iter(world) {
        assert_eq!(
            *own,
            GlobalTransform::IDENTITY,
            "a part stays at the origin"
        );
        let pose = world.get::<CrowdPose>(of.parent()).unwrap();
        let place = world.get::<GlobalTransform>(of.parent()).unwrap();
        assert!(!pose.bones.is_empty());
        let (min, max) = (Vec3::from(aabb.min()), Vec3::from(aabb.max()));
        for bone in &pose.bones {
            let at = place.transform_point(Vec3::from(bone.translation));
            assert!(
                at.cmpge(min).all() && at.cmple(max).all(),
                "a joint at {at} out of its part's box {min}..{max}"
            );
        }
        found.push((of.parent(), min, max));
    }
    found.sort_by_key(|b| b.0);
    found
}

/// The boxes of GTA III and Vice City peds' parts (a III ped of parts, a skinned VC ped, a VC
/// ped that hangs its hand under its upper arm) hold every joint in every frame of 3 s of
/// walking, and settle: no box changes in the last second. (The SA sample ped's are checked
/// above.)
#[test]
fn iii_and_vice_city_crowd_peds_boxes_hold_their_joints_while_they_walk() {
    on_gpu(|| {
        for worn in [Worn::GtaIii, Worn::ViceCity, Worn::ViceCityRehung] {
            let w = worn.wearing();
            let mut app = crowd_app(&worn.dir(&format!("crowd_boxes_{worn:?}")));
            let server = app.world().resource::<AssetServer>().clone();
            let (ped, walk): (Handle<Dff>, Handle<RigClip>) =
                (server.load("ped.dff"), server.load(w.walk));
            let peds = walking_row(&mut app, w.game, &ped, &walk, 3);
            run_until(&mut app, 600, |app| dressed_and_posed(app, &peds, w.parts));
            assert!(
                dressed_and_posed(&mut app, &peds, w.parts),
                "{worn:?}: dressed and posed"
            );
            let mut before = part_boxes(&mut app);
            let mut last_changed = None;
            for frame in 0..90 {
                app.update();
                let now = part_boxes(&mut app);
                if now != before {
                    last_changed = Some(frame);
                }
                before = now;
            }
            eprintln!("{worn:?}: the last frame a box changed: {last_changed:?} of 90");
            assert!(last_changed.is_none_or(|f| f < 60), "{worn:?}: settled");
        }
    });
}

/// Deferred rendering (a camera with `DeferredPrepass`, materials drawn the deferred way by
/// default): the crowd's parts go through Bevy's deferred prepass with the crowd's vertex
/// shader, and two peds (one in a cross-fade) look as Bevy's `SkinnedMesh` draws them there.
/// Measured: 16,029 pixels changed by the peds, mean 0.0001/255, largest 6/255.
#[test]
fn crowd_peds_draw_as_bevys_skinned_meshes_do_in_deferred_rendering() {
    on_gpu(|| deferred(Worn::SamplePed));
}

/// [`crowd_peds_draw_as_bevys_skinned_meshes_do_in_deferred_rendering`] for skinned Vice City
/// peds of their own proportions in a VC crowd, against their bone entities.
#[test]
fn vice_city_crowd_peds_draw_as_their_bone_entities_do_in_deferred_rendering() {
    on_gpu(|| deferred(Worn::ViceCity));
}

/// [`crowd_peds_draw_as_bevys_skinned_meshes_do_in_deferred_rendering`] for GTA III peds of
/// parts of their own proportions in a III crowd, against their bone entities.
#[test]
fn gta_iii_crowd_peds_draw_as_their_bone_entities_do_in_deferred_rendering() {
    on_gpu(|| deferred(Worn::GtaIii));
}

/// The deferred test, for pairs wearing `worn`.
fn deferred(worn: Worn) {
    let app = two_pairs_compared(worn, "deferred", true, |app, camera| {
        app.insert_resource(bevy::pbr::DefaultOpaqueRendererMethod::deferred());
        let mut camera = app.world_mut().entity_mut(camera);
        camera.insert((DepthPrepass, DeferredPrepass));
    });
    // Drawn the deferred way, on the near camera: the ground and the crowd's bodies in the opaque
    // deferred phase (a draw each), the sample ped's caps (alpha-masked) in the masked one. Bevy
    // 0.19 queues an alpha-masked material in the forward masked phase as well, deferred or not
    // (`queue_material_meshes` skips deferred materials for the opaque phase only), so the caps
    // are there too, as a `StandardMaterial` of theirs would be; the fixtures have no
    // alpha-masked look. The far camera (no deferred prepass) queues the caps in its forward
    // masked phase as well: parts left to the GPU's culling are queued in every view and culled
    // there per view (the far camera sees none of them: the pixel comparison above). Its other
    // phases are empty. (Counted per view: hiding the crowd empties both masked phases.)
    use bevy::core_pipeline::core_3d::{AlphaMask3d, Opaque3d};
    use bevy::core_pipeline::deferred::{AlphaMask3dDeferred, Opaque3dDeferred};
    let draws = [
        binned::<Opaque3dDeferred>(&app),
        binned::<AlphaMask3dDeferred>(&app),
        binned::<Opaque3d>(&app),
        binned::<AlphaMask3d>(&app),
    ];
    let masked = usize::from(worn == Worn::SamplePed);
    assert_eq!(
        draws,
        [2, masked, 0, 2 * masked],
        "{worn:?}: deferred opaque, deferred masked, forward opaque, forward masked"
    );
}

/// Multisampling, as Bevy's cameras have it by default (`Msaa::Sample4`; the other tests turn
/// it off to compare whole pixels): the crowd's parts are drawn with Bevy's multisampled
/// pipelines, and two peds (one in a cross-fade) look as Bevy's `SkinnedMesh` draws them:
/// within 2/255 on the mean, and 8/255 at all but 0.5 % of the peds' pixels. Measured: 16,789
/// pixels changed by the peds, mean 0.0002/255, and one pixel (at a hand's edge) 9/255 off: the
/// two ways round a vertex differently (see the first test), and at an edge that can move one
/// of a pixel's four samples across.
#[test]
fn crowd_peds_draw_as_bevys_skinned_meshes_do_multisampled() {
    on_gpu(|| {
        // (The images are what this test checks; the app is not needed after.)
        let _app = two_pairs_compared(Worn::SamplePed, "multisampled", false, multisampled);
    });
}

/// [`crowd_peds_draw_as_bevys_skinned_meshes_do_multisampled`] for skinned Vice City peds and
/// GTA III peds of parts, of their own proportions, in their games' crowds.
#[test]
fn vice_city_and_gta_iii_crowd_peds_draw_as_their_bone_entities_do_multisampled() {
    on_gpu(|| {
        for worn in [Worn::ViceCity, Worn::GtaIii] {
            let _app = two_pairs_compared(worn, "multisampled", false, multisampled);
        }
    });
}

/// Multisamples `camera` as Bevy's cameras do by default.
fn multisampled(app: &mut App, camera: Entity) {
    app.world_mut().entity_mut(camera).insert(Msaa::Sample4);
}

/// Two pairs wearing `worn` (the second cross-fading, halfway) drawn both ways and seen by the
/// near camera of [`near_and_far`], which `setup` changes first; the crowd's image compared
/// with Bevy's ([`compare`], `strict` or not). Returns the app.
fn two_pairs_compared(
    worn: Worn,
    name: &str,
    strict: bool,
    setup: impl FnOnce(&mut App, Entity),
) -> App {
    let w = worn.wearing();
    let name = &format!("{name}, {worn:?}");
    let dir = worn.dir(&format!("crowd_{}", name.replace([' ', ','], "_")));
    let mut app = crowd_app(&dir);
    let server = app.world().resource::<AssetServer>().clone();
    let ped = server.load("ped.dff");
    let (walk, fade_to) = (server.load(w.walk), server.load(w.fade_to));
    let [(near_camera, near_image), _] = near_and_far(&mut app, 1.2, 3.6);
    setup(&mut app, near_camera);
    let facing = |x: f32| Transform::from_xyz(x, 0.0, 0.0);
    let pairs = [
        spawn_worn_pair(&mut app, w.game, &ped, &walk, facing(-0.7), 0.4),
        spawn_worn_pair(&mut app, w.game, &ped, &walk, facing(0.7), 0.2),
    ];
    dress_pairs(&mut app, &pairs, w.parts, w.skinned);
    // Every mesh of the Bevy way's models spawned too (and the two grounds).
    let all = 2 + 2 * (w.parts + w.meshes);
    run_until(&mut app, 300, |app| count::<With<Mesh3d>>(app) >= all);
    cross_fade_halfway(&mut app, &[&pairs[1]], &fade_to);
    let [empty, bevys, crowds] = neither_bevys_crowds(&mut app, &pairs, near_image);
    compare_at_least(name, strict, w.covered, [&bevys, &crowds, &empty]);
    app
}

/// `image` settled with none of `pairs` shown, with Bevy's twins shown, and with the crowd's.
fn neither_bevys_crowds(app: &mut App, pairs: &[Pair], image: Handle<Image>) -> [RgbaImage; 3] {
    neither_bevys_crowds_in(app, pairs, &[image]).map(|mut images| images.remove(0))
}

/// [`neither_bevys_crowds`], each of `targets`.
fn neither_bevys_crowds_in(
    app: &mut App,
    pairs: &[Pair],
    targets: &[Handle<Image>],
) -> [Vec<RgbaImage>; 3] {
    [None, Some(false), Some(true)].map(|crowd| {
        show_pairs(app, pairs, crowd);
        settled(app, targets)
    })
}

/// Updates `app` until every pair is drawn both ways (the crowd dressed in `parts` parts per
/// character, Bevy's `meshes` skinned meshes per model spawned), and checks the crowd's count.
fn dress_pairs(app: &mut App, pairs: &[Pair], parts: usize, meshes: usize) {
    let crowd_parts = count::<CrowdParts>;
    let skinned = count::<With<SkinnedMesh>>;
    run_until(app, 600, |app| {
        crowd_parts(app) >= parts * pairs.len() && skinned(app) >= meshes * pairs.len()
    });
    assert_eq!(
        crowd_parts(app),
        parts * pairs.len(),
        "the crowd is dressed"
    );
}

/// Shows each pair's crowd character (`Some(true)`), its Bevy twin (`Some(false)`) or neither
/// (`None`), hiding the rest.
fn show_pairs(app: &mut App, pairs: &[Pair], crowd: Option<bool>) {
    for pair in pairs {
        for (e, is_crowd) in [(pair.model, false), (pair.crowd, true)] {
            let visibility = match crowd == Some(is_crowd) {
                true => Visibility::Visible,
                false => Visibility::Hidden,
            };
            app.world_mut().entity_mut(e).insert(visibility);
        }
    }
}

/// Shows the motion vectors of the camera's prepass (`MotionVectorPrepass`) as colours, on a
/// quad in front of the camera: red and green `0.5 + 40 · motion` (motion in the view's UV units
/// per frame), blue 0.5.
#[derive(Asset, TypePath, AsBindGroup, Clone)]
struct MotionShown {}

impl Material for MotionShown {
    fn fragment_shader() -> ShaderRef {
        "motion.wgsl".into()
    }

    fn alpha_mode(&self) -> AlphaMode {
        AlphaMode::Blend
    }

    fn enable_prepass() -> bool {
        false
    }

    fn enable_shadows() -> bool {
        false
    }
}

const MOTION_SHADER: &str = r#"
#import bevy_pbr::forward_io::VertexOutput
#import bevy_pbr::prepass_utils

@fragment
fn fragment(in: VertexOutput) -> @location(0) vec4<f32> {
#ifdef MOTION_VECTOR_PREPASS
    let motion = prepass_utils::prepass_motion_vector(in.position, 0u);
    return vec4<f32>(clamp(vec2<f32>(0.5) + 40.0 * motion, vec2<f32>(0.0), vec2<f32>(1.0)), 0.5, 1.0);
#else
    return vec4<f32>(1.0, 0.0, 1.0, 1.0);
#endif
}
"#;

/// A character that [`swing`] moves every frame: its playhead's time and its place on even
/// frames, and what odd frames add to them.
struct Swung {
    character: Entity,
    time: f32,
    at: Vec3,
    by: (f32, Vec3),
}

/// The characters [`swing`] moves, and the frames it counted.
#[derive(Resource, Default)]
struct Swing {
    frame: u64,
    swung: Vec<Swung>,
}

/// Odd frames: every swung character its seconds further into its clip and its offset along;
/// even frames: back.
fn swing(mut swing: ResMut<Swing>, mut characters: Query<(&mut Playback, &mut Transform)>) {
    swing.frame += 1;
    let odd = swing.frame % 2 == 1;
    for s in &swing.swung {
        if let Ok((mut playback, mut transform)) = characters.get_mut(s.character) {
            let (dt, dx) = if odd { s.by } else { (0.0, Vec3::ZERO) };
            playback.seek(s.time + dt);
            transform.translation = s.at + dx;
        }
    }
}

/// Motion vectors (temporal anti-aliasing and motion blur read them): the crowd's are Bevy's
/// `SkinnedMesh`'s for the same motion. Each frame, two peds of each way swing between two
/// states: one between two times of its walk 0.15 s apart (its place held), the other between
/// two places 2 cm apart (its pose held). The camera has Bevy's depth and motion-vector
/// prepasses, and a quad in front of it shows the motion vectors as colours (`MotionShown`); the
/// images are read on odd frames (the swing out), which both ways reach from the same even frame.
///
/// Measured: 13,064 of the 122,880 pixels show motion (over 8/255 from the still image) for
/// Bevy's peds, and the crowd's agree within mean 0.0000/255, largest 1/255. Each half of the
/// motion fails on its own: with last frame's transform taken for this frame's, 6,643 pixels
/// are over 8/255 (the moving ped); with last frame's bones taken for this frame's, 6,421 (the
/// walking one); with no previous pose at all (before the crowd kept one), all 13,064.
///
/// Then the peds stand still and 70 more crowd characters (behind the camera) make the bone
/// buffer anew: the frames that follow show no motion. Measured with the new buffer's halves
/// not both filled with this frame's bones: 13,185 pixels moving in the frame it is made in.
#[test]
fn crowd_peds_motion_vectors_are_bevys_skinned_meshes() {
    on_gpu(|| motion_vectors_both_ways(Worn::SamplePed));
}

/// [`crowd_peds_motion_vectors_are_bevys_skinned_meshes`] for a glTF character
/// (`CrowdGltfModel` against its scene with `Retarget`). Measured: 12,312 pixels move, mean
/// 0.0000/255, largest 1/255.
#[test]
fn gltf_crowd_characters_motion_vectors_are_their_twins() {
    on_gpu(|| motion_vectors_both_ways(Worn::Gltf));
}

/// [`crowd_peds_motion_vectors_are_bevys_skinned_meshes`] for a skinned Vice City ped of its
/// own proportions (`bevy_dff::skinned_ped`, `reproportioned`) in a VC crowd playing VC's walk.
#[test]
fn a_vice_city_peds_motion_vectors_in_a_crowd_are_its_skinned_meshes() {
    on_gpu(|| motion_vectors_both_ways(Worn::ViceCity));
}

/// [`crowd_peds_motion_vectors_are_bevys_skinned_meshes`] for a GTA III ped of parts of its own
/// proportions (`bevy_dff::parts_ped`, `reproportioned`: rigid parts, one bone each) in a III
/// crowd, against the same parts on its bone entities.
#[test]
fn a_gta_iii_ped_of_parts_motion_vectors_in_a_crowd_are_its_bone_entities() {
    on_gpu(|| motion_vectors_both_ways(Worn::GtaIii));
}

/// What the pairs of a motion-vector test wear.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Worn {
    /// The sample DFF ped (SA).
    SamplePed,
    /// The sample glTF humanoid.
    Gltf,
    /// A skinned Vice City ped, written field by field.
    ViceCity,
    /// A GTA III ped of parts, written field by field.
    GtaIii,
    /// The sample DFF ped with other proportions.
    SaOwn,
    /// The bundled GTA III ped of parts (`assets/characters/iii_ped.dff`).
    IiiSample,
    /// A skinned Vice City ped whose left hand hangs under its upper arm (the forearm a leaf
    /// beside it), written field by field.
    ViceCityRehung,
    /// The skinned Vice City ped, half transparent (its material's alpha at 128).
    ViceCityBlended,
}

/// How a pair test's characters wear a [`Worn`].
struct Wearing {
    game: GtaGame,
    /// The clip they play, and one to cross-fade into.
    walk: &'static str,
    fade_to: &'static str,
    /// Parts in the crowd; skinned meshes and all meshes the Bevy way, per character.
    parts: usize,
    skinned: usize,
    meshes: usize,
    /// Pixels that move at least in the motion-vector test; pixels the peds cover at least.
    least: usize,
    covered: usize,
}

impl Worn {
    fn wearing(self) -> Wearing {
        let (game, walk, fade_to) = match self {
            Worn::ViceCity | Worn::ViceCityRehung | Worn::ViceCityBlended => {
                (GtaGame::Vc, "vc_ped.ifp#walk", "vc_ped.ifp#walk")
            }
            Worn::GtaIii | Worn::IiiSample => (GtaGame::Iii, "sa_ped.ifp#walk", "sa_ped.ifp#wave"),
            _ => (GtaGame::Sa, "sa_ped.ifp#walk", "sa_ped.ifp#wave"),
        };
        let (parts, skinned, meshes, least, covered) = match self {
            Worn::SamplePed | Worn::SaOwn => (PED_PARTS, 2, 3, 1000, 4000),
            Worn::Gltf | Worn::ViceCity | Worn::ViceCityRehung | Worn::ViceCityBlended => {
                (1, 1, 1, 1000, 4000)
            }
            // (Its parts are small triangles.)
            Worn::GtaIii => (1, 0, 16, 100, 200),
            // (Its 16 parts share one material: one look in the crowd.)
            Worn::IiiSample => (1, 0, 16, 1000, 4000),
        };
        Wearing {
            game,
            walk,
            fade_to,
            parts,
            skinned,
            meshes,
            least,
            covered,
        }
    }

    /// A folder `name` with the sample assets, the clips and (for the fixtures) `ped.dff`: a
    /// skinned Vice City ped or a GTA III ped of parts, of their own proportions.
    fn dir(self, name: &str) -> PathBuf {
        use crate::bevy_dff::{
            VC, parts_ped, rehung, reproportioned, reproportioned_ped, skinned_ped,
        };
        use rigplay::skeleton::Skeleton;
        let dir = asset_dir(
            name,
            &[
                ("characters/ped.dff", "ped.dff"),
                ("characters/ped.txd", "ped.txd"),
                ("characters/humanoid.glb", "humanoid.glb"),
                ("anims/sa_ped.ifp", "sa_ped.ifp"),
                ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
                ("anims/vc_ped.ifp", "vc_ped.ifp"),
                ("anims/vc_ped.ifp.meta", "vc_ped.ifp.meta"),
            ],
        );
        let fixture = match self {
            Worn::ViceCity => Some(skinned_ped(VC, &reproportioned(&Skeleton::gta_vc()))),
            Worn::GtaIii => Some(parts_ped(&reproportioned(&Skeleton::gta_iii()))),
            Worn::SaOwn => Some(reproportioned_ped()),
            Worn::IiiSample => Some(crate::assets::read("characters/iii_ped.dff")),
            Worn::ViceCityRehung => Some(skinned_ped(
                VC,
                &rehung(&Skeleton::gta_vc(), "L Hand", "L UpperArm"),
            )),
            Worn::ViceCityBlended => Some(half_transparent(skinned_ped(VC, &Skeleton::gta_vc()))),
            _ => None,
        };
        if let Some(ped) = fixture {
            std::fs::write(dir.join("ped.dff"), ped).unwrap();
        }
        dir
    }
}

/// A pair of `ped` as a crowd character of `game` and with bone entities ([`spawn_pair_of`]).
fn spawn_worn_pair(
    app: &mut App,
    game: GtaGame,
    ped: &Handle<Dff>,
    walk: &Handle<RigClip>,
    at: Transform,
    t: f32,
) -> Pair {
    let (model, worn) = (GtaModel::new(ped.clone()), CrowdModel(ped.clone()));
    spawn_pair_of(app, game, model, worn, walk, at, t)
}

/// The motion-vector test, for the pairs wearing `worn`.
/// A crowd app on the assets in `dir`, frames of 1/30 s, with a camera 3.6 m back looking at a
/// ped's waist, its depth and motion-vector prepasses, and a quad in front of it showing the
/// motion vectors as colours ([`MotionShown`]): the app and the camera's image.
fn motion_app(dir: &Path) -> (App, Handle<Image>) {
    std::fs::write(dir.join("motion.wgsl"), MOTION_SHADER).unwrap();
    let mut app = with_crowd_frames(headless_app_with(
        dir,
        (
            IfpPlugin,
            DffPlugin,
            CrowdDrawPlugin,
            MaterialPlugin::<MotionShown>::default(),
        ),
    ));
    let (camera, image) = camera(&mut app, Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
    let quad = (app.world_mut().resource_mut::<Assets<Mesh>>()).add(Rectangle::new(4.0, 4.0));
    let shown = (app.world_mut().resource_mut::<Assets<MotionShown>>()).add(MotionShown {});
    app.world_mut().entity_mut(camera).insert((
        DepthPrepass,
        MotionVectorPrepass,
        Tonemapping::None,
    ));
    app.world_mut().spawn((
        Mesh3d(quad),
        MeshMaterial3d(shown),
        Transform::from_xyz(0.0, 0.0, -0.5),
        ChildOf(camera),
    ));
    (app, image)
}

/// At half rate (`CrowdLod`) a drawn character's skin keeps its motion vectors. On the frames it
/// waits, its held rows are last frame's (held mark 1: last frame's rows for both frames): no
/// skin motion. On the frames it is posed again (mark 2), the pose it showed last frame is the
/// one written the frame before, which the bone buffer keeps as a third frame of rows where half
/// rate is on. A ped walking in place (its paused playhead moved by 0.13 s a round), the camera's
/// motion vectors drawn as colours (as in `crowd_peds_motion_vectors_are_bevys_skinned_meshes`):
/// far, each frame it is posed again after a hold is read, and a frame it holds. Then, with the
/// viewer beside it (full rate: posed every frame), the same two poses are shown in two frames in
/// a row and the second is read: the two pictures are the same to the byte, in six rounds (the
/// last three with the rows written through the vector, `copy_bone_rows`, both ways), and the
/// held frames show no pixel moving.
/// Until the thirty-eighth session the buffer kept two frames and such a skin had no motion
/// vectors (mark 2 read this frame's rows for both frames): the far reads then showed no pixel
/// moving. With mark 2 reading last frame's rows (not written for a held slot), they differ.
/// Each game's ped: the sample SA ped, a skinned Vice City ped and a GTA III ped of parts (each
/// part skinned on its one bone), both written field by field.
#[test]
fn a_far_characters_skin_moves_at_half_rate_as_a_ped_posed_every_frame() {
    on_gpu(|| {
        for worn in [Worn::SamplePed, Worn::ViceCity, Worn::GtaIii] {
            a_far_skin_wearing_moves_at_half_rate(worn);
        }
    });
}

/// [`a_far_characters_skin_moves_at_half_rate_as_a_ped_posed_every_frame`], for a ped wearing
/// `worn`.
fn a_far_skin_wearing_moves_at_half_rate(worn: Worn) {
    let w = worn.wearing();
    let dir = worn.dir(&format!("crowd_motion_half_rate_{worn:?}"));
    let (mut app, image) = motion_app(&dir);
    let server = app.world().resource::<AssetServer>().clone();
    let (ped, walk) = (server.load("ped.dff"), server.load(w.walk));
    app.insert_resource(CrowdLod {
        half_rate_beyond: Some(10.0),
    });
    let viewer = (app.world_mut())
        .spawn((CrowdViewer, Transform::from_xyz(0.0, 0.0, 100.0)))
        .id();
    let mut paused = Playback::looping();
    paused.paused = true;
    let character = CrowdCharacter::new(w.game, walk);
    let ped = (app.world_mut())
        .spawn((character, CrowdModel(ped), paused, KeepCrowdPose))
        .id();
    // (Its `CrowdPose`, kept, says in which frames it is posed.)
    app.insert_resource(APosed(ped, false)).add_systems(
        PostUpdate,
        watch_a_posed.after(rigplay::plugin::PlaybackSystems::Apply),
    );
    run_until(&mut app, 600, |app| count::<CrowdParts>(app) == w.parts);
    assert_eq!(count::<CrowdParts>(&mut app), w.parts, "{worn:?}: dressed");
    let targets = [image];
    let still = settled(&mut app, &targets).remove(0);
    let whole = URect::new(0, 0, W, H);
    let read = |app: &mut App| {
        let bytes = read_back(app, &targets).expect("read back");
        crop(&bytes[0], W, whole).unwrap()
    };
    let moving_pixels = |image: &RgbaImage| {
        (image.pixels.iter().zip(&still.pixels))
            .filter(|(p, q)| (0..3).any(|i| p[i].abs_diff(q[i]) > 8))
            .count()
    };
    let posed = |app: &App| app.world().resource::<APosed>().1;
    let time = |round: usize| 0.1 + 0.13 * round as f32;
    let set = |app: &mut App, round: usize| {
        (app.world_mut().get_mut::<Playback>(ped).unwrap()).time = time(round);
    };
    // The rows through mapped memory, or (from round 4) through the vector.
    let through_vector = |app: &mut App, round: usize| {
        (app.world_mut().resource_mut::<CrowdDrawSettings>()).copy_bone_rows = round >= 4;
    };
    const ROUNDS: usize = 6;

    // Far: the frame read (`read_back`'s first update) poses the ped again after a hold.
    set(&mut app, 0);
    for _ in 0..4 {
        app.update();
    }
    let (mut far, mut held) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        through_vector(&mut app, round);
        if posed(&app) {
            app.update();
        }
        assert!(!posed(&app), "{worn:?}: turns");
        set(&mut app, round);
        far.push(read(&mut app));
        // A frame it holds (the pose unchanged since).
        if !posed(&app) {
            app.update();
        }
        assert!(posed(&app), "{worn:?}: turns");
        held.push(moving_pixels(&read(&mut app)));
    }

    // Beside the viewer: posed every frame.
    (app.world_mut().get_mut::<Transform>(viewer).unwrap()).translation = Vec3::ZERO;
    through_vector(&mut app, 1);
    for _ in 0..4 {
        app.update();
    }
    let mut moved = Vec::new();
    for (round, far) in (1..=ROUNDS).zip(&far) {
        through_vector(&mut app, round);
        set(&mut app, round - 1);
        app.update();
        set(&mut app, round);
        let near = read(&mut app);
        moved.push(moving_pixels(&near));
        if near.pixels != far.pixels {
            let diff = write_diff(&format!("crowd_motion_half_rate_{worn:?}"), far, &near);
            panic!(
                "{worn:?}, round {round}: the far ped's motion vectors are not the near one's ({})",
                diff.display()
            );
        }
    }
    println!("motion vectors at half rate, {worn:?}: moving pixels {moved:?}, held {held:?}");
    assert!(held.iter().all(|&n| n == 0), "{worn:?}, held: {held:?}");
    // (0.13 s of the walk moved 1,431 to 6,382 pixels of the SA ped in the run seen, 673 to
    // 2,701 of the VC ped, 42 to 81 of the III ped's small parts.)
    assert!(
        moved.iter().all(|&n| n > w.least / 4),
        "{worn:?}, moved: {moved:?}"
    );
}

fn motion_vectors_both_ways(worn: Worn) {
    let gltf = worn == Worn::Gltf;
    let dir = worn.dir(&format!("crowd_motion_{worn:?}"));
    let Wearing {
        game,
        walk: clip,
        parts,
        skinned: meshes,
        meshes: all_meshes,
        least,
        ..
    } = worn.wearing();
    let (mut app, image) = motion_app(&dir);
    app.init_resource::<Swing>().add_systems(Update, swing);
    let server = app.world().resource::<AssetServer>().clone();
    let (ped, walk) = (server.load("ped.dff"), server.load(clip));
    let (walking, moving) = (Vec3::new(-0.6, 0.0, 0.0), Vec3::new(0.6, 0.0, 0.0));
    let pair = |app: &mut App, at: Vec3, t: f32| {
        let at = Transform::from_translation(at);
        match gltf {
            true => spawn_gltf_pair(app, "humanoid.glb", &walk, at, t),
            false => spawn_worn_pair(app, game, &ped, &walk, at, t),
        }
    };
    let pairs = [pair(&mut app, walking, 0.3), pair(&mut app, moving, 0.6)];
    // The walking ped holds its place; the moving one, its pose.
    let swings = [
        (walking, 0.3, (0.15, Vec3::ZERO)),
        (moving, 0.6, (0.0, Vec3::new(0.02, 0.0, 0.0))),
    ];
    for (pair, (at, time, by)) in pairs.iter().zip(swings) {
        for character in [pair.model, pair.crowd] {
            let swung = Swung {
                character,
                time,
                at,
                by,
            };
            app.world_mut().resource_mut::<Swing>().swung.push(swung);
        }
    }
    dress_pairs(&mut app, &pairs, parts, meshes);
    // Every mesh of the Bevy way's two models spawned too (and the quad).
    let all = 1 + 2 * (parts + all_meshes);
    run_until(&mut app, 300, |app| count::<With<Mesh3d>>(app) >= all);
    assert_eq!(count::<With<Mesh3d>>(&mut app), all, "the meshes");

    // The next update's frame is odd: the swing out.
    let to_odd = |app: &mut App| {
        while app.world().resource::<Swing>().frame % 2 == 1 {
            app.update();
        }
    };
    let targets = [image];
    show_pairs(&mut app, &pairs, None);
    let still = settled_after(&mut app, &targets, to_odd).remove(0);
    show_pairs(&mut app, &pairs, Some(false));
    let bevys = settled_after(&mut app, &targets, to_odd).remove(0);
    show_pairs(&mut app, &pairs, Some(true));
    let crowds = settled_after(&mut app, &targets, to_odd).remove(0);

    let moving_pixels = |image: &RgbaImage| {
        image
            .pixels
            .iter()
            .zip(&still.pixels)
            .filter(|(p, q)| (0..3).any(|i| p[i].abs_diff(q[i]) > 8))
            .count()
    };
    let (bevy_moving, crowd_moving) = (moving_pixels(&bevys), moving_pixels(&crowds));
    let (mean, worst, over) = difference(&bevys, &crowds);
    let name = format!("crowd_motion_vectors_{worn:?}");
    let path = write_diff(&name, &crowds, &bevys);
    println!(
        "motion vectors, {worn:?}: {bevy_moving} pixels move for Bevy's peds, {crowd_moving} for the crowd's; crowd vs SkinnedMesh mean {mean:.4}/255, largest {worst}/255, {over} pixels over 8/255"
    );
    assert!(bevy_moving > least, "Bevy's peds move ({})", path.display());
    assert!(mean <= 0.1, "mean {mean} ({})", path.display());
    assert!(
        over * 200 <= bevy_moving,
        "{over} pixels over 8/255 ({})",
        path.display()
    );

    // The bone buffer made anew (70 more characters, behind the camera, take it past its 64
    // slots) holds no last frame's bones: the still crowd shows no motion in the frames that
    // follow.
    app.world_mut().resource_mut::<Swing>().swung.clear();
    show_pairs(&mut app, &pairs, Some(true));
    for _ in 0..10 {
        app.update();
    }
    for i in 0..70 {
        let mut more = app.world_mut().spawn((
            CrowdCharacter::new(game, walk.clone()),
            Transform::from_xyz(i as f32, 0.0, 60.0),
        ));
        match gltf {
            true => more.insert(CrowdGltfModel::new(server.load("humanoid.glb"))),
            false => more.insert(CrowdModel(ped.clone())),
        };
    }
    for frame in 0..4 {
        let image = read_back(&mut app, &targets).expect("read back");
        let image = crop(&image[0], W, URect::new(0, 0, W, H)).unwrap();
        let moved = moving_pixels(&image);
        assert_eq!(moved, 0, "frame {frame} of the new buffer shows motion");
    }
    assert!(
        count::<CrowdParts>(&mut app) >= parts * (pairs.len() + 70),
        "the new characters are dressed"
    );
}

/// Checks the crowd's image against Bevy's: the mean within 2/255, and each pixel within 8/255
/// (`strict`) or all but 0.5 % of the peds' pixels.
fn compare(name: &str, strict: bool, bevys: &RgbaImage, crowds: &RgbaImage, empty: &RgbaImage) {
    compare_at_least(name, strict, 4000, [bevys, crowds, empty]);
}

/// [`compare`], the peds covering at least `least` pixels.
fn compare_at_least(name: &str, strict: bool, least: usize, images: [&RgbaImage; 3]) {
    let [bevys, crowds, empty] = images;
    let shown = covered(bevys, empty);
    let (mean, worst, over) = difference(bevys, crowds);
    println!(
        "crowd vs SkinnedMesh, {name}: {shown} pixels changed by the peds, mean {mean:.4}/255, largest {worst}/255, {over} pixels over 8/255"
    );
    let path = write_diff(
        &format!("crowd_{}", name.replace([' ', ','], "_")),
        crowds,
        bevys,
    );
    assert!(shown > least, "{name}: the peds show ({})", path.display());
    assert!(mean <= 2.0, "{name}: mean {mean} ({})", path.display());
    if strict {
        assert!(
            worst <= 8,
            "{name}: {over} pixels over 8/255, worst {worst} ({})",
            path.display()
        );
    } else {
        assert!(
            over * 200 <= shown,
            "{name}: {over} pixels over 8/255 ({})",
            path.display()
        );
    }
}

/// Two ped types in one crowd, and faults while it plays: a model that fails to load leaves its
/// characters undrawn (one warning, `CrowdDrawPlugin` remembers the model as undrawable) while
/// they play on; the model of drawn characters changed under them (as a reload does: its asset
/// modified) dresses them anew from the next frames and keeps every playhead; a character
/// despawned gives its slot back, which the next character dressed takes; a character whose model
/// is taken off is undressed and gives its slot back.
#[test]
fn a_failed_or_reloaded_crowd_model_keeps_the_crowd_playing() {
    on_gpu(|| {
        let dir = asset_dir(
            "crowd_faults",
            &[
                ("characters/ped.dff", "ped.dff"),
                ("characters/ped.txd", "ped.txd"),
                ("anims/sa_ped.ifp", "sa_ped.ifp"),
                ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
                // A second ped type (another asset, drawn by its own meshes and materials).
                ("characters/ped.dff", "other.dff"),
                ("characters/ped.txd", "other.txd"),
            ],
        );
        // A chunk header promising more bytes than the file has.
        std::fs::write(dir.join("broken.dff"), b"\x10\0\0\0\xff\xff\xff\x7f").unwrap();
        let mut app = crowd_app(&dir);
        let server = app.world().resource::<AssetServer>().clone();
        let ped: Handle<Dff> = server.load("ped.dff");
        let broken: Handle<Dff> = server.load("broken.dff");
        let walk: Handle<RigClip> = server.load("sa_ped.ifp#walk");
        let spawn = |app: &mut App, model: &Handle<Dff>| {
            app.world_mut()
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(model.clone()),
                ))
                .id()
        };
        let other: Handle<Dff> = server.load("other.dff");
        let worn = [spawn(&mut app, &ped), spawn(&mut app, &ped)];
        let failed = spawn(&mut app, &broken);
        let mixed = spawn(&mut app, &other);
        let parts = |app: &App, e: Entity| crowd_materials(app, e).len();
        run_until(&mut app, 600, |app| {
            [worn[0], worn[1], mixed]
                .iter()
                .all(|&e| parts(app, e) == PED_PARTS)
                && server.load_state(&broken).is_failed()
        });
        let time = |app: &App, e: Entity| app.world().get::<Playback>(e).unwrap().time;
        assert!(server.load_state(&broken).is_failed());
        for e in [worn[0], worn[1], mixed] {
            assert_eq!(
                parts(&app, e),
                PED_PARTS,
                "dressed: the body (its two materials merged) and the cap"
            );
        }
        // Several models in one crowd: a model's characters share its materials (one batch per
        // (mesh, material)), and the other model's have their own.
        assert_eq!(
            crowd_materials(&app, worn[0]),
            crowd_materials(&app, worn[1])
        );
        let theirs = crowd_materials(&app, mixed);
        assert!(
            crowd_materials(&app, worn[0])
                .iter()
                .all(|m| !theirs.contains(m))
        );
        let before = time(&app, failed);
        for _ in 0..5 {
            app.update();
        }
        assert_eq!(parts(&app, failed), 0, "a model that failed draws nothing");
        assert!(
            ran(&app, failed, before) > 0.0,
            "and its character plays on"
        );

        // The model modified under the playing crowd: new parts, same playheads going on.
        let old_parts: Vec<Entity> = app.world().get::<Children>(worn[0]).unwrap().to_vec();
        let times = worn.map(|e| time(&app, e));
        mark_modified(&mut app, &ped);
        app.update();
        for (e, t) in worn.iter().zip(times) {
            // One frame of 1/30 s on, at the walk's speed (the clip loops: it may wrap).
            let now = time(&app, *e);
            assert!(now > t || now < 0.1, "the playhead goes on: {t} → {now}");
        }
        for _ in 0..3 {
            app.update();
        }
        let new_parts: Vec<Entity> = app.world().get::<Children>(worn[0]).unwrap().to_vec();
        assert_eq!(parts(&app, worn[0]), PED_PARTS, "dressed again");
        assert!(
            new_parts.iter().all(|p| !old_parts.contains(p)),
            "in parts made from the changed model"
        );

        // A character gone gives its slot back: the next one dressed takes it.
        let tag = |app: &App, e: Entity| {
            let child = app.world().get::<Children>(e).unwrap()[0];
            app.world().get::<bevy::mesh::MeshTag>(child).unwrap().0
        };
        let slot = tag(&app, worn[1]);
        app.world_mut().despawn(worn[1]);
        app.update();
        let next = spawn(&mut app, &ped);
        for _ in 0..3 {
            app.update();
        }
        assert_eq!(tag(&app, next), slot);
        assert_ne!(tag(&app, worn[0]), slot);

        // A character whose model is taken off loses its parts and its slot, and plays on.
        let parts_before: Vec<Entity> = app.world().get::<Children>(next).unwrap().to_vec();
        let before = time(&app, next);
        app.world_mut().entity_mut(next).remove::<CrowdModel>();
        app.update();
        app.update();
        assert_eq!(parts(&app, next), 0, "undressed");
        assert!(
            parts_before
                .iter()
                .all(|p| app.world().get_entity(*p).is_err())
        );
        assert!(ran(&app, next, before) > 0.0, "plays on");
        let again = spawn(&mut app, &ped);
        for _ in 0..3 {
            app.update();
        }
        assert_eq!(tag(&app, again), slot, "the slot was given back");

        // A character given another model is dressed in that model's parts (and keeps its slot).
        app.world_mut()
            .entity_mut(again)
            .insert(CrowdModel(other.clone()));
        for _ in 0..3 {
            app.update();
        }
        assert_eq!(parts(&app, again), PED_PARTS);
        assert_eq!(
            crowd_materials(&app, again),
            crowd_materials(&app, mixed),
            "the other model's"
        );
        // And one switched to another game is dressed again, for that game's skeleton.
        app.world_mut()
            .get_mut::<CrowdCharacter>(again)
            .unwrap()
            .game = GtaGame::Vc;
        let vc_parts: Vec<Entity> = app.world().get::<Children>(again).unwrap().to_vec();
        for _ in 0..3 {
            app.update();
        }
        let now: Vec<Entity> = app.world().get::<Children>(again).unwrap().to_vec();
        assert!(
            now.iter().all(|p| !vc_parts.contains(p)),
            "new parts for VC"
        );
    });
}

/// Crowd characters drawn the Bevy way (`CrowdDrawSettings::bevy_skinning`, what a device without
/// storage buffers gets): a child `GtaModel` whose bone entities follow each character's pose.
/// The same picture as `GtaModel` + `SkeletalClip` for the same poses, a cross-fade among them,
/// and no crowd material.
#[test]
fn crowd_characters_drawn_as_bevys_skinned_meshes_match_gta_models() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        app.insert_resource(CrowdDrawSettings {
            bevy_skinning: true,
            ..default()
        });
        let (ped, walk, wave) = sample_ped(&app);
        let (_, image) = camera(&mut app, Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
        app.world_mut().spawn((
            DirectionalLight {
                illuminance: 8000.0,
                ..default()
            },
            Transform::from_xyz(2.0, 4.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        let pairs = [
            spawn_pair(
                &mut app,
                &ped,
                &walk,
                Transform::from_xyz(-0.7, 0.0, 0.0),
                0.4,
            ),
            spawn_pair(
                &mut app,
                &ped,
                &walk,
                Transform::from_xyz(0.7, 0.0, 0.0).with_rotation(Quat::from_rotation_y(0.6)),
                0.2,
            ),
        ];
        let skinned = count::<With<SkinnedMesh>>;
        // Bevy's two skinned meshes per ped, for the pairs' models and the crowd's.
        run_until(&mut app, 600, |app| skinned(app) >= 4 * pairs.len());
        assert_eq!(skinned(&mut app), 4 * pairs.len());
        assert_eq!(count::<CrowdParts>(&mut app), 0, "no crowd material");

        // The second pair mid-way through a cross-fade, then paused.
        let fading = &pairs[1];
        cross_fade_halfway(&mut app, &[fading], &wave);

        let targets = [image];
        let [empty, bevys, crowds] = neither_bevys_crowds_in(&mut app, &pairs, &targets);
        assert!(
            covered(&crowds[0], &empty[0]) > 2000,
            "the crowd's peds are drawn"
        );
        compare("Bevy's skinning", true, &bevys[0], &crowds[0], &empty[0]);
    });
}

/// A crowd app (the repository's assets, frames of 1/30 s) on wgpu's no-op backend held to
/// `limits`, which runs Bevy's whole frame on the CPU.
fn noop_crowd_app(limits: wgpu::Limits) -> App {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    noop_crowd_app_on(&root, Some(limits), ())
}

/// A crowd app (assets under `root`, frames of 1/30 s, the plugins `more` too) on wgpu's no-op
/// backend, held to `limits` (else the adapter's).
fn noop_crowd_app_on<M>(
    root: &Path,
    limits: Option<wgpu::Limits>,
    more: impl bevy::app::Plugins<M>,
) -> App {
    let render = RenderPlugin {
        render_creation: RenderCreation::Manual(noop_renderer(limits)),
        ..default()
    };
    with_crowd_frames(headless_app_on(
        root,
        render,
        false,
        (IfpPlugin, DffPlugin, CrowdDrawPlugin, more),
    ))
}

/// Per system of rigplay's in `world`'s schedules (by schedule and name), the tick it last ran
/// at. (A system a run condition skips keeps its tick.)
fn rigplays_systems(world: &World) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    for (label, schedule) in world.resource::<Schedules>().iter() {
        let Ok(systems) = schedule.systems() else {
            continue;
        };
        for (_, system) in systems {
            let name = system.name().to_string();
            if name.starts_with("rigplay::") {
                found.push((format!("{label:?} {name}"), system.get_last_run().get()));
            }
        }
    }
    found.sort();
    found
}

/// The names of rigplay's systems, main and render world, that ran over `frames` updates.
fn rigplays_systems_run(app: &mut App, frames: usize) -> Vec<String> {
    let ticks = |app: &App| {
        let mut all = rigplays_systems(app.world());
        all.extend(rigplays_systems(
            app.sub_app(bevy::render::RenderApp).world(),
        ));
        all
    };
    let before = ticks(app);
    for _ in 0..frames {
        app.update();
    }
    let after = ticks(app);
    assert_eq!(before.len(), after.len());
    (before.into_iter().zip(after))
        .filter(|(b, a)| b.1 != a.1)
        .map(|(_, a)| a.0)
        .collect()
}

/// Asserts that over four frames no system of rigplay's runs but the two that run by design:
/// `extract_crowd_bones` and `fill_culling_data`.
fn assert_idle(app: &mut App, what: &str) {
    let by_design = |name: &str| {
        name.ends_with("crowd_draw::frame::extract_crowd_bones")
            || name.ends_with("crowd_draw::frame::fill_culling_data")
    };
    let run = rigplays_systems_run(app, 4);
    let unexpected: Vec<&String> = run.iter().filter(|n| !by_design(n)).collect();
    assert!(unexpected.is_empty(), "{what}: {unexpected:#?} ran");
}

/// Despawns `e` and runs two frames, in which its removal is seen.
fn gone(app: &mut App, e: Entity) {
    app.world_mut().despawn(e);
    for _ in 0..2 {
        app.update();
    }
}

/// Runs three frames (in which a change just made is seen), then [`assert_idle`].
fn settled_idle(app: &mut App, what: &str) {
    for _ in 0..3 {
        app.update();
    }
    assert_idle(app, what);
}

/// Asserts that each of `systems` (the ends of their names) runs over two frames, for `what`.
fn assert_run(app: &mut App, what: &str, systems: &[&str]) {
    let run = rigplays_systems_run(app, 2);
    for system in systems {
        assert!(
            run.iter().any(|n| n.ends_with(system)),
            "{system} runs for {what}: {run:#?}"
        );
    }
}

/// Pauses crowd character `e` at `t` seconds of its clip, posed there three frames on.
fn pause_at(app: &mut App, e: Entity, t: f32) {
    let mut playback = app.world_mut().get_mut::<Playback>(e).unwrap();
    playback.paused = true;
    playback.seek(t);
    for _ in 0..3 {
        app.update();
    }
}

/// The crowd materials of crowd character `e`'s parts (its children drawn by the crowd).
fn crowd_materials(app: &App, e: Entity) -> Vec<AssetId<CrowdMaterial>> {
    (app.world().get::<Children>(e).into_iter().flatten())
        .filter_map(|p| app.world().get::<MeshMaterial3d<CrowdMaterial>>(*p))
        .map(|m| m.0.id())
        .collect()
}

/// Every system rigplay adds is skipped by a run condition in a frame that has nothing for it
/// to do (a system that runs is a task for a thread, about 18 µs on two cores:
/// `docs/performance.md`): an app of the IFP, DAN, DFF and crowd-drawing plugins, among Bevy's
/// default plugins (its glTF loader and gizmos too), on the no-op renderer, with no character,
/// no model spawned and no file changing, runs two of rigplay's systems a frame, both by design:
/// `extract_crowd_bones` (extraction runs on one thread, no task) and `fill_culling_data` (where
/// Bevy culls on the GPU, it guards every mesh from a Bevy bug). Then:
/// - a crowd character wearing the sample ped runs the crowd's systems (the check sees systems
///   run), and once it is gone, two frames later, none runs again;
/// - the model changed while nobody wears it (as a reload does) is built anew for the next
///   character that wears it: the crowd's cache of built models must hear of the change in a
///   frame its systems would otherwise skip (with the dressing skipped then, the character
///   was dressed in the old build's materials);
/// - likewise the rig of the model's rests (`rig_dff_crowds`): a bone's rest moved 0.3 m while
///   nobody wears the model poses the next character with the bone 0.3 m off the last one's,
///   paused at the same time (with the rig's message condition taken out, 0 m);
/// - likewise the skin's binding (`pose_crowd_skins`): the skin's inverse bind matrices replaced
///   while nobody wears the model skin the next character on them.
#[test]
fn rigplays_systems_are_skipped_where_they_have_nothing_to_do() {
    use rigplay::plugin::{CrowdSkinPose, DanPlugin};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut app = noop_crowd_app_on(&root, None, DanPlugin);
    for _ in 0..5 {
        app.update();
    }
    let idle = assert_idle;
    // (The check has systems to look at: rigplay's names are there.)
    let all = rigplays_systems(app.world());
    assert!(all.len() >= 20, "{all:#?}");
    idle(&mut app, "an app with nothing in it");

    let (ped, walk, _) = sample_ped(&app);
    // A character wearing the ped, once it is dressed and posed.
    let spawn = |app: &mut App| {
        let e = (app.world_mut())
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdModel(ped.clone()),
                CrowdSkinPose::default(),
            ))
            .id();
        run_until(app, 600, |app| dressed_and_posed(app, &[e], PED_PARTS));
        assert!(dressed_and_posed(app, &[e], PED_PARTS));
        e
    };
    let first = spawn(&mut app);
    assert_run(
        &mut app,
        "a crowd",
        &[
            "crowd_draw::dff::dress_crowd",
            "crowd_draw::frame::size_crowd_bones",
            "crowd_draw::frame::follow_poses",
            "crowd_draw::frame::write_crowd_bones",
            "dff::crowd_rig::rig_dff_crowds",
            "dff::crowd_skin::pose_crowd_skins",
            "skeletal::crowd::pose_crowds",
        ],
    );
    let built = crowd_materials(&app, first);
    assert_eq!(built.len(), PED_PARTS);

    // Gone: its removal is seen (its slot given back), then nothing runs.
    gone(&mut app, first);
    idle(&mut app, "the crowd gone");

    // The model changed with nobody wearing it, then worn again.
    mark_modified(&mut app, &ped);
    settled_idle(&mut app, "after the model changed");
    let next = spawn(&mut app);
    let rebuilt = crowd_materials(&app, next);
    assert_eq!(rebuilt.len(), PED_PARTS);
    assert!(
        rebuilt.iter().all(|m| !built.contains(m)),
        "dressed from the changed model: {built:?} then {rebuilt:?}"
    );

    // The same for the rig of the model's rests (`rig_dff_crowds`): a bone's rest moved while
    // nobody wears the model poses the next character with it. Each character paused at 0.3 s.
    let posed_at = |app: &mut App, e: Entity| {
        pause_at(app, e, 0.3);
        app.world().get::<CrowdPose>(e).unwrap().bones.clone()
    };
    let before = posed_at(&mut app, next);
    gone(&mut app, next);
    // The file's last frame that is a bone, moved 0.3 m along its parent's Z.
    {
        let mut dffs = app.world_mut().resource_mut::<Assets<Dff>>();
        let dff = dffs.get_mut(&ped).unwrap().into_inner();
        let clump = (dff.clumps.iter_mut())
            .find(|c| !c.bones.is_empty())
            .unwrap();
        let clump = std::sync::Arc::make_mut(clump);
        let frame = (clump.frames.iter_mut())
            .rfind(|f| f.target.is_some())
            .unwrap();
        frame.rest.translation.z += 0.3;
    }
    settled_idle(&mut app, "after a bone's rest moved");
    let last = spawn(&mut app);
    let after = posed_at(&mut app, last);
    let off: Vec<f32> = (before.iter().zip(&after))
        .map(|(b, a)| b.translation.distance(a.translation))
        .collect();
    // (That bone and any below it moved 0.3 m, as a whole; the others stayed.)
    let most = off.iter().cloned().fold(0.0, f32::max);
    assert!(
        (0.25..0.35).contains(&most),
        "posed on the moved rest: {off:?}"
    );
    assert!(
        off.iter().filter(|d| **d > 1e-4).count() < off.len() / 2,
        "the other bones stay: {off:?}"
    );

    // And the skin's binding (`pose_crowd_skins`): the skin's inverse bind matrices changed
    // while nobody wears the model (as a reload changes them) skin the next character.
    let before = palettes(&app, last);
    gone(&mut app, last);
    let (atomic, binds) = {
        let dff = app.world().resource::<Assets<Dff>>().get(&ped).unwrap();
        let clump = dff.clumps.iter().find(|c| !c.bones.is_empty()).unwrap();
        (clump.atomics.iter().enumerate())
            .find_map(|(a, atomic)| Some((a, atomic.skin.as_ref()?.inverse_bindposes.clone())))
            .unwrap()
    };
    let by = move_first_bind(app.world_mut(), &binds);
    // (The model marked modified, as a reload marks it.)
    mark_modified(&mut app, &ped);
    settled_idle(&mut app, "after the skin changed");
    let reskinned = spawn(&mut app);
    posed_at(&mut app, reskinned);
    assert_skinned_on_the_moved_bind(&before, &palettes(&app, reskinned), &[atomic], by);
}

/// A crowd character's skin matrices ([`rigplay::plugin::CrowdSkinPose`]), per skinned mesh:
/// the mesh's index (a DFF atomic's in its clump, a glTF node's in its file) and its joints'.
fn palettes(app: &App, e: Entity) -> Vec<(usize, Vec<bevy::math::Affine3A>)> {
    let skin = app
        .world()
        .get::<rigplay::plugin::CrowdSkinPose>(e)
        .unwrap();
    (skin.palettes.iter())
        .map(|p| (p.mesh, p.joints.clone()))
        .collect()
}

/// Moves the first of `binds`' inverse bind matrices 0.3 m along the bind's Z (`B` becomes
/// `T·B`), as a reload that changed it would. Returns what that joint's skin matrix is then
/// multiplied by on the right: `pose·T·B = (pose·B)·(B⁻¹·T·B)`.
fn move_first_bind(
    world: &mut World,
    binds: &Handle<bevy::mesh::skinning::SkinnedMeshInverseBindposes>,
) -> bevy::math::Affine3A {
    use bevy::math::Affine3A;
    use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
    let mut all = world.resource_mut::<Assets<SkinnedMeshInverseBindposes>>();
    let mut moved = all.get(binds).unwrap().to_vec();
    let bind = Affine3A::from_mat4(moved[0]);
    let by = Affine3A::from_translation(Vec3::Z * 0.3);
    moved[0] = Mat4::from(by * bind);
    all.insert(binds, moved.into()).unwrap();
    bind.inverse() * by * bind
}

/// `after`'s skin matrices are `before`'s but for the first joint of each mesh in `moved`,
/// which is `before`'s times `by` (see [`move_first_bind`]); within 10⁻⁴.
fn assert_skinned_on_the_moved_bind(
    before: &[(usize, Vec<bevy::math::Affine3A>)],
    after: &[(usize, Vec<bevy::math::Affine3A>)],
    moved: &[usize],
    by: bevy::math::Affine3A,
) {
    let meshes = |p: &[(usize, Vec<_>)]| p.iter().map(|(m, _)| *m).collect::<Vec<_>>();
    assert_eq!(meshes(before), meshes(after));
    assert!(
        moved.iter().all(|m| meshes(before).contains(m)),
        "{moved:?}"
    );
    for ((mesh, before), (_, after)) in before.iter().zip(after) {
        assert_eq!(before.len(), after.len());
        for (j, (b, a)) in before.iter().zip(after).enumerate() {
            let expected = match j == 0 && moved.contains(mesh) {
                true => *b * by,
                false => *b,
            };
            assert!(
                a.abs_diff_eq(expected, 1e-4),
                "mesh {mesh}, joint {j}: {a:?}, expected {expected:?} (before: {b:?})"
            );
        }
    }
}

/// The glTF wing's systems as `rigplays_systems_are_skipped_where_they_have_nothing_to_do`
/// checks the DFF wing's: a crowd character wearing the sample `humanoid.glb` (with
/// `CrowdSkinPose`) runs the rig, the dressing and the skins' systems; with it gone they are
/// skipped. The file changed while nobody wears it (its skin's first inverse bind matrix moved
/// 0.3 m, the file marked modified, as a reload does both) is built anew for the next character:
/// new materials and skin matrices on the moved bind. The rig (`rig_gltf_crowds`) is found again
/// by its rests, and the built model and the skins' bindings by the rig they were made for, so
/// one of the three systems missing the change alone only keeps a stale entry in memory, unused
/// (each message condition taken out alone, the test passed). With the rig's and the dressing's
/// taken out, the character was dressed in the old build's materials; with the rig's and the
/// skins', skinned on the old bind: both fail here.
#[test]
fn gltf_crowd_systems_are_skipped_when_idle_and_hear_of_a_file_changed_meanwhile() {
    use bevy::gltf::{Gltf, GltfNode, GltfSkin};
    use rigplay::plugin::CrowdSkinPose;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut app = noop_crowd_app_on(&root, None, ());
    // (The schedules are built over the first frames.)
    for _ in 0..5 {
        app.update();
    }
    assert_idle(&mut app, "an app with nothing in it");
    let server = app.world().resource::<AssetServer>().clone();
    let model: Handle<Gltf> = server.load("characters/humanoid.glb");
    let walk: Handle<RigClip> = server.load("anims/sa_ped.ifp#walk");
    let spawn = |app: &mut App| {
        let character = (
            CrowdCharacter::new(GtaGame::Sa, walk.clone()),
            CrowdGltfModel::new(model.clone()),
            CrowdSkinPose::default(),
        );
        let e = app.world_mut().spawn(character).id();
        run_until(app, 600, |app| dressed_and_posed(app, &[e], 1));
        assert!(dressed_and_posed(app, &[e], 1));
        pause_at(app, e, 0.3);
        e
    };
    let first = spawn(&mut app);
    assert_run(
        &mut app,
        "a glTF crowd",
        &[
            "gltf::crowd_rig::rig_gltf_crowds",
            "gltf::crowd_skin::pose_gltf_crowd_skins",
            "crowd_draw::gltf::dress_gltf_crowd",
            "skeletal::crowd::pose_crowds",
        ],
    );
    let built = crowd_materials(&app, first);
    assert_eq!(built.len(), 1);
    let before = palettes(&app, first);
    gone(&mut app, first);
    assert_idle(&mut app, "the glTF crowd gone");

    // The skin's first bind moved, the file marked modified.
    let (meshes, binds) = {
        let world = app.world();
        let file = world.resource::<Assets<Gltf>>().get(&model).unwrap();
        let skin = file.skins.first().unwrap();
        let binds = (world.resource::<Assets<GltfSkin>>().get(skin))
            .unwrap()
            .inverse_bind_matrices
            .clone();
        let nodes = world.resource::<Assets<GltfNode>>();
        let meshes: Vec<usize> = (file.nodes.iter())
            .filter_map(|n| nodes.get(n))
            .filter(|n| n.mesh.is_some() && n.skin.as_ref() == Some(skin))
            .map(|n| n.index)
            .collect();
        (meshes, binds)
    };
    assert!(!meshes.is_empty());
    let by = move_first_bind(app.world_mut(), &binds);
    mark_modified(&mut app, &model);
    settled_idle(&mut app, "after the file changed");

    let next = spawn(&mut app);
    let rebuilt = crowd_materials(&app, next);
    assert_eq!(rebuilt.len(), 1);
    assert!(
        rebuilt.iter().all(|m| !built.contains(m)),
        "dressed from the changed file: {built:?} then {rebuilt:?}"
    );
    assert_skinned_on_the_moved_bind(&before, &palettes(&app, next), &meshes, by);
}

/// A skinned SA ped made three times as large by a frame above its root bone: its part's box
/// holds every vertex of the ped as skinned from its `CrowdSkinPose` (the skin matrices the crowd
/// draws with), in every frame of 2 s of walking. The flesh's reach around the joints is scaled
/// as the bones are: measured in the mesh's own space alone, the legs' far ends left the box.
/// (No-op renderer: the boxes are kept in the main world.)
#[test]
fn a_ped_scaled_above_its_root_bone_keeps_its_flesh_in_its_parts_boxes() {
    use crate::bevy_dff::{SA, framed, skinned_ped};
    use bevy::camera::primitives::Aabb;
    use bevy::mesh::VertexAttributeValues;
    use rigplay::animation::BonePose;
    use rigplay::plugin::CrowdSkinPose;
    use rigplay::skeleton::Skeleton;
    let dir = asset_dir(
        "crowd_scaled_boxes",
        &[
            ("anims/sa_ped.ifp", "sa_ped.ifp"),
            ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
        ],
    );
    let thrice = BonePose {
        scale: Vec3::splat(3.0),
        ..BonePose::default()
    };
    let ped = skinned_ped(
        SA,
        &framed(&Skeleton::gta_sa(), "Normal", "Xscaled", thrice),
    );
    std::fs::write(dir.join("ped.dff"), ped).unwrap();
    let mut app = noop_crowd_app_on(&dir, None, ());
    let server = app.world().resource::<AssetServer>().clone();
    let (model, walk): (Handle<Dff>, Handle<RigClip>) =
        (server.load("ped.dff"), server.load("sa_ped.ifp#walk"));
    let character = (app.world_mut())
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            CrowdModel(model.clone()),
            CrowdSkinPose::default(),
        ))
        .id();
    run_until(&mut app, 600, |app| dressed_and_posed(app, &[character], 1));
    // The skinned atomic's vertices, joints and weights.
    let (positions, joints, weights) = {
        let world = app.world();
        let dff = world.resource::<Assets<Dff>>().get(&model).unwrap();
        let atomic = (dff.clumps.iter().flat_map(|c| &c.atomics))
            .find(|a| a.skin.is_some())
            .unwrap();
        let mesh = (world.resource::<Assets<Mesh>>().get(&atomic.parts[0].0)).unwrap();
        let attribute = |a| mesh.attribute(a).unwrap();
        let (
            VertexAttributeValues::Float32x3(p),
            VertexAttributeValues::Uint16x4(j),
            VertexAttributeValues::Float32x4(w),
        ) = (
            attribute(Mesh::ATTRIBUTE_POSITION),
            attribute(Mesh::ATTRIBUTE_JOINT_INDEX),
            attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT),
        )
        else {
            panic!("positions, joints and weights");
        };
        (p.clone(), j.clone(), w.clone())
    };
    let mut farthest = f32::NEG_INFINITY;
    for frame in 0..60 {
        app.update();
        let world = app.world_mut();
        let palette = (world.get::<CrowdSkinPose>(character).unwrap().palettes[0].joints).clone();
        let mut boxes = world.query_filtered::<&Aabb, CrowdParts>();
        let aabb = boxes.single(world).unwrap();
        let (min, max) = (Vec3::from(aabb.min()), Vec3::from(aabb.max()));
        for ((p, j), w) in positions.iter().zip(&joints).zip(&weights) {
            let at = (0..4)
                .map(|i| palette[j[i] as usize].transform_point3(Vec3::from(*p)) * w[i])
                .sum::<Vec3>();
            let out = (min - at).max(at - max).max_element();
            farthest = farthest.max(out);
            assert!(
                out <= 1e-4,
                "frame {frame}: a vertex at {at} is {out} m out of its part's box {min}..{max}"
            );
        }
    }
    eprintln!(
        "{} vertices in the box in 60 frames (at worst {:.3} m inside its side)",
        positions.len(),
        -farthest
    );
}

/// A crowd character that moves (here under a parent that steps 2 cm to and fro, as a game moves
/// its peds every frame) changes nothing of its parts: they stay at the identity, and their
/// boxes (in world space) hold its joints where it is. Bevy's renderer extracts a mesh again
/// when its `GlobalTransform`, `PreviousGlobalTransform` or `Aabb` changes; none does here. Moved
/// 10 m, its parts' boxes are fitted where it went. (No-op renderer: the parts' components are
/// the main world's.)
///
/// Before parts stayed at the identity, each was a child at its character's origin: 2 parts'
/// transforms propagated and extracted again per moving ped each frame.
#[test]
fn a_moving_crowd_character_changes_nothing_of_its_parts() {
    use bevy::camera::primitives::Aabb;
    use bevy::ecs::change_detection::Tick;
    let mut app = noop_crowd_app(wgpu::Limits::default());
    // A camera, so that Bevy keeps the meshes' previous transforms (for motion vectors).
    app.world_mut().spawn((
        Camera3d::default(),
        Transform::from_xyz(0.0, 1.0, 6.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
    ));
    let (ped, walk, _) = sample_ped(&app);
    let mover = (app.world_mut())
        .spawn((
            Transform::from_xyz(3.0, 0.0, -2.0).with_rotation(Quat::from_rotation_y(0.7)),
            Visibility::default(),
        ))
        .id();
    let mut playback = Playback::looping();
    playback.seek(0.4);
    playback.paused = true;
    let character = (app.world_mut())
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            CrowdModel(ped),
            playback,
            Transform::from_xyz(1.0, 0.0, 0.0),
            ChildOf(mover),
            KeepCrowdPose,
        ))
        .id();
    run_until(&mut app, 600, |app| {
        dressed_and_posed(app, &[character], PED_PARTS)
    });
    assert!(dressed_and_posed(&mut app, &[character], PED_PARTS));
    // When each part's components last changed.
    let changes = |app: &mut App| -> Vec<(Entity, Tick, Tick, Option<Tick>)> {
        let world = app.world_mut();
        let mut parts = world.query_filtered::<Entity, CrowdParts>();
        let parts: Vec<Entity> = parts.iter(world).collect();
        parts
            .into_iter()
            .map(|p| {
                let e = world.entity(p);
                let own = e.get_ref::<GlobalTransform>().unwrap();
                assert_eq!(
                    *own,
                    GlobalTransform::IDENTITY,
                    "a part stays at the origin"
                );
                assert!(e.get::<Transform>().is_none(), "a part has no transform");
                let last = e.get_ref::<bevy::pbr::PreviousGlobalTransform>();
                (
                    p,
                    own.last_changed(),
                    e.get_ref::<Aabb>().unwrap().last_changed(),
                    last.map(|l| l.last_changed()),
                )
            })
            .collect()
    };
    for _ in 0..3 {
        app.update();
    }
    let boxes = part_boxes(&mut app);
    let before = changes(&mut app);
    assert_eq!(before.len(), PED_PARTS);
    // (With a camera, Bevy keeps every mesh's previous transform, for motion vectors.)
    assert!(
        before.iter().all(|c| c.3.is_some()),
        "previous transforms kept"
    );
    // Moves the character's parent `dx` along X.
    let shift = |app: &mut App, dx: f32| {
        app.world_mut()
            .get_mut::<Transform>(mover)
            .unwrap()
            .translation
            .x += dx;
    };
    for frame in 0..20 {
        let dx = if frame % 2 == 0 { 0.02 } else { -0.02 };
        shift(&mut app, dx);
        app.update();
        assert_eq!(part_boxes(&mut app), boxes, "frame {frame}: the boxes hold");
        assert_eq!(changes(&mut app), before, "frame {frame}: no part changed");
    }
    // 10 m away: the boxes are fitted there (`part_boxes` checks they hold the joints where the
    // character now is).
    shift(&mut app, 10.0);
    app.update();
    let moved = part_boxes(&mut app);
    for (b, was) in moved.iter().zip(&boxes) {
        assert!(
            b.1.x > was.1.x + 5.0,
            "{b:?} went with its character from {was:?}"
        );
    }

    // Walking on, 2.3 cm a frame along X for 240 frames (1.4 m/s at 60 frames a second): the
    // boxes hold its joints on every frame, and are set again in few frames. Each box grows
    // ahead of the character by twice how far it has travelled since the box was fitted
    // (`next_box`), so a box is set about three times in every 120 frames (2.8 m): 7 frames set
    // some box. Grown only by the 0.25 m of slack, as before, 22 did.
    let mut last = part_boxes(&mut app);
    let mut set_frames = 0;
    for _ in 0..240 {
        shift(&mut app, 0.023);
        app.update();
        let now = part_boxes(&mut app);
        set_frames += usize::from(now != last);
        last = now;
    }
    eprintln!("walking on: boxes set in {set_frames} of 240 frames");
    assert!(
        (4..=9).contains(&set_frames),
        "{set_frames} frames set boxes"
    );
}

/// On a device whose renderer does not cull on the GPU (wgpu's no-op backend held to wgpu's
/// default limits: 8 storage buffers and 4 storage textures a stage, below the 10 and 12 Bevy's
/// GPU culling asks for, so Bevy preprocesses on the GPU without culling there), the crowd's
/// parts stay on Bevy's CPU culling: none carries `NoCpuCulling`, and the camera's visible
/// entities hold the ped in front of it and not the one behind it.
#[test]
fn where_the_gpu_does_not_cull_the_crowd_is_culled_on_the_cpu() {
    use bevy::render::batching::gpu_preprocessing::GpuPreprocessingSupport;
    let mut app = noop_crowd_app(wgpu::Limits::default());
    let support = app
        .sub_app(bevy::render::RenderApp)
        .world()
        .resource::<GpuPreprocessingSupport>();
    assert!(support.is_available() && !support.is_culling_supported());
    let (ped, walk, _) = sample_ped(&app);
    let (camera, _) = camera(&mut app, Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
    let mut spawn = |at: Vec3| {
        (app.world_mut())
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdModel(ped.clone()),
                Transform::from_translation(at),
            ))
            .id()
    };
    let (front, behind) = (spawn(Vec3::ZERO), spawn(Vec3::new(0.0, 0.0, 40.0)));
    run_until(&mut app, 600, |app| {
        count::<CrowdParts>(app) == 2 * PED_PARTS
    });
    assert_eq!(count::<CrowdParts>(&mut app), 2 * PED_PARTS, "dressed");
    for _ in 0..3 {
        app.update();
    }
    let gpu_culled = count::<(CrowdParts, With<bevy::camera::visibility::NoCpuCulling>)>;
    assert_eq!(gpu_culled(&mut app), 0, "culled on the CPU");
    let in_view = |app: &App, character: Entity| {
        let visible =
            (app.world().get::<VisibleEntities>(camera).unwrap()).get(TypeId::of::<Mesh3d>());
        app.world()
            .get::<Children>(character)
            .is_some_and(|c| c.iter().any(|part| visible.contains(&part)))
    };
    assert!(in_view(&app, front) && !in_view(&app, behind));
}

/// On a device with WebGL2's limits (no storage buffers, no compute; wgpu's no-op backend, which
/// runs Bevy's whole frame on the CPU) the crowd falls back to Bevy's skinned meshes: each
/// character's bone entities sit where its pose puts them, frame after frame, the playheads run
/// and nothing is drawn by instanced skinning.
#[test]
fn without_storage_buffers_the_crowd_falls_back_to_bevys_skinned_meshes() {
    let mut app = noop_crowd_app(wgpu::Limits::downlevel_webgl2_defaults());
    let limits = app
        .world()
        .resource::<bevy::render::renderer::RenderDevice>()
        .limits();
    assert_eq!(limits.max_storage_buffers_per_shader_stage, 0);
    let (ped, walk, _) = sample_ped(&app);
    let characters: Vec<Entity> = (0..3)
        .map(|i| {
            app.world_mut()
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(ped.clone()),
                    Transform::from_xyz(i as f32 * 1.5, 0.0, -2.0)
                        .with_rotation(Quat::from_rotation_y(i as f32)),
                ))
                .id()
        })
        .collect();
    let skinned = count::<With<SkinnedMesh>>;
    // Dressed, and the walk loaded (the model and the clip load apart: until the clip is in, the
    // playheads stand still).
    let timed = |app: &App| {
        characters
            .iter()
            .all(|&c| app.world().get::<Playback>(c).unwrap().duration.is_some())
    };
    run_until(&mut app, 600, |app| {
        skinned(app) >= 2 * characters.len() && timed(app)
    });
    assert!(timed(&app), "the walk loaded");
    assert_eq!(
        skinned(&mut app),
        2 * characters.len(),
        "Bevy's skinned meshes"
    );
    assert_eq!(count::<CrowdParts>(&mut app), 0);

    // Every bone entity of the crowd skeleton (found by its animation target, under the
    // character) sits where the character's pose puts it: the character's transform times the
    // bone's model-space transform.
    let check = |app: &mut App, frame: usize| {
        let world = app.world_mut();
        let mut bones = world.query::<(&AnimationTargetId, &GlobalTransform)>();
        let mut checked = 0;
        for &character in &characters {
            let pose = world.get::<CrowdPose>(character).unwrap().bones.clone();
            let at = world.get::<GlobalTransform>(character).unwrap().affine();
            let game = world.get::<CrowdCharacter>(character).unwrap().game;
            // The crowd skeleton's bones in pose order: the game's skeleton, by target id.
            let targets = crate::bevy_dff::crowd_targets(game);
            let mut stack = vec![character];
            while let Some(e) = stack.pop() {
                if let Some(children) = world.get::<Children>(e) {
                    stack.extend(children.iter());
                }
                let Ok((target, global)) = bones.get(world, e) else {
                    continue;
                };
                let Some(i) = targets.iter().position(|t| t == target) else {
                    continue;
                };
                let want = at * pose[i];
                let got = global.affine();
                let err = (want.translation - got.translation).length();
                assert!(err < 1e-3, "frame {frame}: bone {i} is {err} m off");
                checked += 1;
            }
        }
        assert!(checked >= 20 * characters.len(), "{checked} bones checked");
    };
    // The playhead runs: each frame advances it by the frame's 1/30 s from where it stood. (The
    // walk loops, so the time itself may wrap back to the start within these frames.)
    let playback = |app: &App| app.world().get::<Playback>(characters[0]).unwrap().clone();
    for frame in 0..5 {
        let before = playback(&app).time;
        app.update();
        let step = playback(&app).last_step();
        assert_eq!(
            step.from, before,
            "frame {frame}: the advance starts where it stood"
        );
        assert!(
            (step.step - 1.0 / 30.0).abs() < 1e-5,
            "frame {frame}: the playhead runs 1/30 s, not {}",
            step.step
        );
        check(&mut app, frame);
    }
}

/// A GTA III ped (parts on named frames, no skin: a fixture built field by field) in a III crowd,
/// drawn by instanced skinning and the Bevy way (`CrowdDrawSettings::bevy_skinning`) in two apps
/// with the same pose, camera and light: the same picture. Each part hangs rigidly on its frame's
/// crowd bone in both.
#[test]
fn a_gta_iii_ped_of_parts_draws_the_same_both_ways_in_a_crowd() {
    on_gpu(|| {
        use crate::bevy_dff::{III, rigid_model};
        let dir = asset_dir(
            "crowd_iii",
            &[
                ("anims/sa_ped.ifp", "sa_ped.ifp"),
                ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
            ],
        );
        // III's names: `Swaist` the pelvis, `Storso` the spine, `Shead` the head.
        let frames = [
            ("", -1, [0., 0., 0.]),
            ("Swaist", 0, [0., 0., 1.0]),
            ("Storso", 1, [0., 0., 0.2]),
            ("Shead", 2, [0., 0., 0.45]),
        ];
        std::fs::write(
            dir.join("player.dff"),
            rigid_model(III, &frames, &[1, 2, 3]),
        )
        .unwrap();
        // Three parts the Bevy way; one in the crowd: the three atomics share one material.
        let (shown, drawn) =
            drawn_both_ways("iii", &dir, GtaGame::Iii, "sa_ped.ifp#walk", [3, 1], 0.9);
        eprintln!("III parts: {shown} pixels the Bevy way, {drawn} instanced");
        assert!(shown > 300, "the parts show: {shown} pixels");
        assert!(drawn > 300, "the parts show: {drawn} pixels");
    });
}

/// Peds of their own proportions (`bevy_dff::proportion`: offsets 4–12 % off the built-in
/// tables) in a crowd of their game look as the same peds spawned with bone entities
/// (`GtaModel` + `SkeletalClip`, Bevy's `SkinnedMesh`) do: a GTA III ped of parts, a skinned
/// Vice City ped, the SA sample ped, two of each, one mid cross-fade. Strict bounds (mean
/// 2/255, every pixel 8/255). Measured: III 282 pixels, none apart; VC 7,315 and SA 16,203,
/// largest 1/255. Before crowd characters took their models' rests, a first version of this
/// test (the camera 3 m out, no cross-fade) found the III peds 559 pixels over 8/255 (largest
/// 142/255).
#[test]
fn peds_of_their_own_proportions_draw_in_a_crowd_as_with_bone_entities() {
    on_gpu(|| {
        for worn in [Worn::GtaIii, Worn::ViceCity, Worn::SaOwn] {
            let _app = two_pairs_compared(worn, "own proportions", true, |_, _| {});
        }
    });
}

/// A skinned Vice City ped whose left hand hangs under its upper arm (not its forearm) draws in
/// a VC crowd as with bone entities: the hand moves with the upper arm alone, as its bone
/// entity does. Strict bounds. Measured: 6,879 pixels, largest 1/255. Posed on the game's
/// hierarchy (before 2026-12-05), 1,221 pixels were over 8/255 (largest 205/255).
#[test]
fn a_ped_that_hangs_a_bone_its_own_way_draws_in_a_crowd_as_with_bone_entities() {
    on_gpu(|| {
        let _app = two_pairs_compared(Worn::ViceCityRehung, "rehung VC ped", true, |_, _| {});
    });
}

/// The bundled GTA III ped of parts (16 boxes in prelit colours, one shared material: one look
/// per ped in the crowd) in a III crowd, two peds (one mid cross-fade), against the same model
/// on its bone entities. Strict bounds.
#[test]
fn the_bundled_gta_iii_ped_draws_in_a_crowd_as_with_bone_entities() {
    on_gpu(|| {
        let _app = two_pairs_compared(Worn::IiiSample, "bundled III ped", true, |_, _| {});
    });
}

/// A skinned Vice City ped (`bevy_dff::skinned_ped`: VC's 24 bones, the old skin layout with its
/// junk matrix column, two weights on every box's far end) in a VC crowd playing VC's walk: the
/// same picture drawn by instanced skinning and the Bevy way.
#[test]
fn a_skinned_vice_city_ped_draws_the_same_both_ways_in_a_crowd() {
    on_gpu(|| {
        use crate::bevy_dff::{VC, skinned_ped};
        let dir = asset_dir(
            "crowd_vc",
            &[
                ("anims/vc_ped.ifp", "vc_ped.ifp"),
                ("anims/vc_ped.ifp.meta", "vc_ped.ifp.meta"),
            ],
        );
        let ped = skinned_ped(VC, &rigplay::skeleton::Skeleton::gta_vc());
        std::fs::write(dir.join("player.dff"), ped).unwrap();
        let (shown, drawn) =
            drawn_both_ways("vc", &dir, GtaGame::Vc, "vc_ped.ifp#walk", [1, 1], 2.2);
        eprintln!("VC ped: {shown} pixels the Bevy way, {drawn} instanced");
        assert!(shown > 1000, "the ped shows: {shown} pixels");
        assert!(drawn > 1000, "the ped shows: {drawn} pixels");
    });
}

/// A folder `name` with Vice City's and San Andreas' walks (`vc_ped.ifp`, `sa_ped.ifp`).
fn walks_dir(name: &str) -> PathBuf {
    asset_dir(
        name,
        &[
            ("anims/vc_ped.ifp", "vc_ped.ifp"),
            ("anims/vc_ped.ifp.meta", "vc_ped.ifp.meta"),
            ("anims/sa_ped.ifp", "sa_ped.ifp"),
            ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
        ],
    )
}

/// Peds with bones of their own beside the game's (`bevy_dff::with_ponytail`: a ponytail under
/// the head and a nub below it, HAnim IDs no game has, each a box of the skin or a part of its
/// own) draw in a crowd as the Bevy way draws them, in every game: a skinned VC ped, a skinned SA
/// ped and a GTA III ped of parts (18 rigid triangles, one crowd part). No clip keys those bones:
/// they stay at rest under the head. (Before 2026-12-07, a skin's joints on such bones were
/// skinned on the root bone: the VC ped's ponytail skin matrices 1.01 m off its bone entities'.)
#[test]
fn peds_with_bones_of_their_own_draw_in_a_crowd_as_the_bevy_way_does() {
    on_gpu(|| {
        let peds = crate::bevy_dff::every_games_ped(
            crate::bevy_dff::with_ponytail,
            ["Shead", "Head", "Head"],
        );
        every_games_ped_draws_as_the_bevy_way_does("crowd_own_bones", "with a ponytail", peds, 18);
    });
}

/// Peds whose bones hang under a frame of the model's own above the root bone
/// (`bevy_dff::with_armature`: an `Armature` with an HAnim ID no game has) draw in a crowd as the
/// Bevy way draws them, in every game: a skinned VC ped and a skinned SA ped, the skin's first
/// joint on that frame (a box of the skin along it), and a GTA III ped of parts with a part of
/// its own on it (17 rigid triangles, one crowd part). No bone is above that frame, so it stays
/// where it rests in the character. (Before 2026-12-07, the skin's joint on it followed the root
/// bone, and the III part was not drawn, with a warning.)
#[test]
fn peds_under_a_frame_of_their_own_draw_in_a_crowd_as_the_bevy_way_does() {
    on_gpu(|| {
        let peds = crate::bevy_dff::every_games_ped(
            crate::bevy_dff::with_armature,
            ["Swaist", "Root", "Normal"],
        );
        let label = "under a frame of its own";
        every_games_ped_draws_as_the_bevy_way_does("crowd_armature", label, peds, 17);
    });
}

/// Each game's ped of `peds` (`bevy_dff::every_games_ped`: a GTA III ped of parts, skinned VC
/// and SA peds, each with its clips' file) playing its file's walk, drawn in a crowd
/// ([`drawn_both_ways`], in folder `dir` with the walks): within the strict bounds of the Bevy
/// way, which shows the skinned peds as one mesh each and the III ped as `iii_meshes`.
fn every_games_ped_draws_as_the_bevy_way_does(
    dir: &str,
    what: &str,
    peds: [(GtaGame, Vec<u8>, &str, usize); 3],
    iii_meshes: usize,
) {
    let dir = walks_dir(dir);
    for (game, ped, clips, _) in peds {
        let meshes = match game {
            GtaGame::Iii => iii_meshes,
            _ => 1,
        };
        std::fs::write(dir.join("player.dff"), ped).unwrap();
        let label = format!("{game:?} {what}");
        let walk = format!("{clips}#walk");
        let (shown, drawn) = drawn_both_ways(&label, &dir, game, &walk, [meshes, 1], 2.2);
        eprintln!("{label}: {shown} pixels the Bevy way, {drawn} instanced");
        assert!(shown > 100 && drawn > 100, "{label}: {shown}, {drawn}");
    }
}

/// A part that stays put in its character (a GTA III ped's part on a frame of its own above the
/// root bone, here 4 m to the ped's right) is culled by where it stays, not by the bones: two
/// such peds 4 m to the left of the picture, their bodies out of it and those parts in the
/// middle of it, are both drawn (each its one crowd part, whole); one moved 30 m further left is
/// not. (Culled by the bones' box alone, neither ped was drawn.)
#[test]
fn a_part_that_stays_put_in_its_character_is_culled_where_it_stays() {
    on_gpu(|| {
        use crate::bevy_dff::{framed, parts_ped};
        use rigplay::animation::BonePose;
        use rigplay::skeleton::Skeleton;
        let dir = walks_dir("crowd_still_part");
        let aside = BonePose {
            translation: Vec3::new(4.0, 0.0, 0.0),
            ..BonePose::default()
        };
        let ped = parts_ped(&framed(&Skeleton::gta_iii(), "Swaist", "Xaside", aside));
        std::fs::write(dir.join("player.dff"), ped).unwrap();
        let (mut app, _, paused) = counting_app(&dir);
        let server = app.world().resource::<AssetServer>().clone();
        let walk: Handle<RigClip> = server.load("sa_ped.ifp#walk");
        let model: Handle<Dff> = server.load("player.dff");
        let peds: Vec<Entity> = (0..2)
            .map(|_| {
                (app.world_mut())
                    .spawn((
                        CrowdCharacter::new(GtaGame::Iii, walk.clone()),
                        CrowdModel(model.clone()),
                        paused.clone(),
                        Transform::from_xyz(-4.0, 0.0, 0.0),
                    ))
                    .id()
            })
            .collect();
        run_until(&mut app, 600, |app| count::<CrowdParts>(app) == 2);
        assert_eq!(count::<CrowdParts>(&mut app), 2, "dressed");
        let both = main_pass_vertices(&mut app);
        app.world_mut()
            .get_mut::<Transform>(peds[1])
            .unwrap()
            .translation
            .x = -34.0;
        let one = main_pass_vertices(&mut app);
        eprintln!("vertices shaded: both peds' parts in view {both}, one 30 m further left {one}");
        assert!(one > 0.0, "the part in view is drawn");
        assert_eq!(
            both,
            2.0 * one,
            "both drawn, then the one out of view culled"
        );
    });
}

/// A ped of a half-transparent material (its material's alpha at 128: the DFF loader gives it
/// `AlphaMode::Blend`) draws in a crowd as the Bevy way draws it, and its part keeps its
/// character's transform: Bevy sorts blended meshes by their own transforms, so a blended part
/// left at the identity, as opaque parts are, would sort as if it stood at the world's origin.
/// Its material says the shader takes the part's own transform. In every game: a skinned VC ped
/// and a skinned SA ped (each on its game's bones), and a GTA III ped of parts (16 rigid
/// triangles in one material: one part in the crowd, 16 meshes the Bevy way).
#[test]
fn a_blended_ped_draws_as_bevys_and_keeps_its_characters_transform_for_sorting() {
    on_gpu(|| {
        use crate::bevy_dff::{SA, VC, parts_ped, skinned_ped};
        use rigplay::skeleton::Skeleton;
        let dir = walks_dir("crowd_blended");
        // (game, its walk, the ped, meshes the Bevy way, pixels it covers at least.)
        let peds = [
            (
                GtaGame::Vc,
                "vc_ped.ifp#walk",
                skinned_ped(VC, &Skeleton::gta_vc()),
                1,
                1000,
            ),
            (
                GtaGame::Sa,
                "sa_ped.ifp#walk",
                skinned_ped(SA, &Skeleton::gta_sa()),
                1,
                1000,
            ),
            // (Its triangles are 5 cm a side.)
            (
                GtaGame::Iii,
                "sa_ped.ifp#walk",
                parts_ped(&Skeleton::gta_iii()),
                16,
                100,
            ),
        ];
        for (game, walk, ped, meshes, least) in peds {
            std::fs::write(dir.join("player.dff"), half_transparent(ped)).unwrap();
            let label = format!("{game:?} blended");
            let (shown, drawn) = drawn_both_ways(&label, &dir, game, walk, [meshes, 1], 2.2);
            eprintln!("{label} ped: {shown} pixels the Bevy way, {drawn} instanced");
            assert!(
                shown > least && drawn > least,
                "{label}: the ped shows: {shown}, {drawn}"
            );

            let mut app = crowd_app(&dir);
            let server = app.world().resource::<AssetServer>().clone();
            let place =
                Transform::from_xyz(2.0, 0.0, -3.0).with_rotation(Quat::from_rotation_y(1.0));
            let character = (app.world_mut())
                .spawn((
                    CrowdCharacter::new(game, server.load(walk)),
                    CrowdModel(server.load("player.dff")),
                    place,
                    KeepCrowdPose,
                ))
                .id();
            run_until(&mut app, 600, |app| dressed_and_posed(app, &[character], 1));
            assert!(dressed_and_posed(&mut app, &[character], 1), "{label}");
            let world = app.world_mut();
            let mut parts = world.query_filtered::<(
                Option<&Transform>,
                &GlobalTransform,
                &MeshMaterial3d<CrowdMaterial>,
            ), CrowdParts>();
            let (own, global, material) = parts.single(world).unwrap();
            assert_eq!(
                own,
                Some(&Transform::IDENTITY),
                "{label}: the part keeps a transform"
            );
            assert_eq!(
                *global,
                GlobalTransform::from(place),
                "{label}: its character's"
            );
            let material = world
                .resource::<Assets<CrowdMaterial>>()
                .get(material)
                .unwrap();
            assert_eq!(material.base.alpha_mode, AlphaMode::Blend, "{label}");
            assert_eq!(material.extension.placed_by_entity, 1, "{label}");
        }
    });
}

/// Two half-transparent VC peds (`half_transparent`), the far one seen through the near one:
/// drawn in the crowd as the Bevy way draws them, within the strict bounds. Bevy draws blended
/// meshes back to front, sorted by each mesh's own transform; the crowd's blended parts keep
/// their characters' transforms for that.
#[test]
fn half_transparent_peds_one_behind_the_other_draw_in_the_order_bevys_do() {
    on_gpu(|| {
        let _app = two_pairs_compared(
            Worn::ViceCityBlended,
            "one behind the other",
            true,
            |app, camera| {
                // Along the row (the peds at x = ±0.7): the one at 0.7 in front of the other.
                let at = Transform::from_xyz(3.0, 1.1, 0.35)
                    .looking_at(Vec3::new(-0.7, 0.9, 0.0), Vec3::Y);
                *app.world_mut().get_mut::<Transform>(camera).unwrap() = at;
            },
        );
    });
}

/// `ped` (a skinned ped from `bevy_dff::skinned_ped`, or a ped of parts from
/// `bevy_dff::parts_ped`) with its materials' alpha at 128 (of 255): the DFF loader gives them
/// `AlphaMode::Blend`.
fn half_transparent(mut ped: Vec<u8>) -> Vec<u8> {
    // A material's flags and colour (§3.4): the skinned ped's, or each triangle's of the parts.
    let colours = [
        [0, 0, 0, 0, 180, 140, 110, 255],
        [0, 0, 0, 0, 200, 200, 200, 255],
    ];
    let at: Vec<usize> = (ped.windows(8).enumerate())
        .filter(|(_, w)| colours.iter().any(|c| w == c))
        .map(|(i, _)| i)
        .collect();
    assert!(!at.is_empty(), "a material's colour");
    for i in at {
        ped[i + 7] = 128;
    }
    ped
}

/// The ped `dir/player.dff` (`meshes_shown` meshes the Bevy way, `parts_drawn` crowd parts) as a crowd character of `game` paused 0.3 s into
/// `clip`, seen from six sides `distance` from its joints' middle, drawn by instanced skinning in one app and the Bevy way in
/// another. Asserts that every view agrees within the strict bounds (mean ≤ 2/255, every pixel
/// ≤ 8/255) and returns the pixels the ped covers the Bevy way and instanced, summed over the
/// views.
fn drawn_both_ways(
    label: &str,
    dir: &Path,
    game: GtaGame,
    clip: &str,
    [meshes_shown, parts_drawn]: [usize; 2],
    distance: f32,
) -> (usize, usize) {
    let draw = |bevy_skinning: bool| -> (Vec<RgbaImage>, Vec<RgbaImage>) {
        // The Bevy way's meshes, or the crowd's parts.
        let parts = match bevy_skinning {
            true => meshes_shown,
            false => parts_drawn,
        };
        let mut app = crowd_app(dir);
        app.insert_resource(CrowdDrawSettings {
            bevy_skinning,
            ..default()
        });
        // The Bevy way's bone entities would be drawn as skeleton lines.
        app.insert_resource(SkeletonGizmos {
            enabled: false,
            ..default()
        });
        let server = app.world().resource::<AssetServer>().clone();
        let model: Handle<Dff> = server.load("player.dff");
        let walk: Handle<RigClip> = server.load(clip.to_owned());
        let mut playback = Playback::looping();
        playback.paused = true;
        playback.seek(0.3);
        let ped = app
            .world_mut()
            .spawn((
                CrowdCharacter::new(game, walk),
                CrowdModel(model),
                playback,
                Transform::from_rotation(Quat::from_rotation_y(0.5)),
                KeepCrowdPose,
            ))
            .id();
        // Until the parts are meshes in the world either way (the Bevy way's `GtaModel` spawns
        // them once the model has loaded) and the ped is posed.
        let meshes = count::<With<Mesh3d>>;
        run_until(&mut app, 300, |app| {
            meshes(app) == parts
                && app
                    .world()
                    .get::<CrowdPose>(ped)
                    .is_some_and(|p| !p.bones.is_empty())
        });
        assert_eq!(meshes(&mut app), parts, "the parts");
        let pose = &app.world().get::<CrowdPose>(ped).expect("posed").bones;
        let (lo, hi) = pose.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(lo, hi), m| (lo.min(m.translation.into()), hi.max(m.translation.into())),
        );
        // Six cameras `distance` from the joints' middle, on each axis: a pose turns
        // one-sided triangles every way.
        let middle = (lo + hi) / 2.0;
        let images: Vec<Handle<Image>> = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z]
            .into_iter()
            .map(|axis| {
                let off = if axis.y != 0.0 {
                    Vec3::Z * 0.01
                } else {
                    Vec3::ZERO
                };
                camera(&mut app, middle + axis * distance + off, middle).1
            })
            .collect();
        app.world_mut().spawn((
            DirectionalLight {
                illuminance: 8000.0,
                ..default()
            },
            Transform::from_xyz(2.0, 4.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        app.world_mut().entity_mut(ped).insert(Visibility::Hidden);
        let empty = settled(&mut app, &images);
        app.world_mut().entity_mut(ped).insert(Visibility::Visible);
        let shown = settled(&mut app, &images);
        // Which way it was drawn.
        let crowd_parts = count::<CrowdParts>(&mut app);
        assert_eq!(crowd_parts, if bevy_skinning { 0 } else { parts });
        (shown, empty)
    };
    let (instanced, empty) = draw(false);
    let (bevys, _) = draw(true);
    let (mut shown, mut drawn) = (0, 0);
    for (k, ((instanced, bevys), empty)) in instanced.iter().zip(&bevys).zip(&empty).enumerate() {
        shown += covered(bevys, empty);
        drawn += covered(instanced, empty);
        let (mean, worst, over) = difference(bevys, instanced);
        let path = write_diff(&format!("crowd_{label}_{k}"), instanced, bevys);
        assert!(
            mean <= 2.0 && worst <= 8,
            "{label} view {k}: mean {mean}, worst {worst}, {over} over 8/255 ({})",
            path.display()
        );
    }
    (shown, drawn)
}

/// The draws a frame's main passes make: per binned phase, one per multidrawable batch set, one
/// per batchable bin and one per unbatchable entity; in the transparent phase, one per batch of
/// items (as `SortedRenderPhase::render_range` walks them). Summed over every camera.
fn draw_calls(app: &App) -> [usize; 3] {
    use bevy::core_pipeline::core_3d::{AlphaMask3d, Opaque3d, Transparent3d};
    use bevy::render::render_phase::{PhaseItem, ViewSortedRenderPhases};
    let world = app.sub_app(bevy::render::RenderApp).world();
    let transparent = world
        .get_resource::<ViewSortedRenderPhases<Transparent3d>>()
        .map_or(0, |views| {
            views
                .0
                .values()
                .map(|phase| {
                    let items: Vec<&Transparent3d> = phase.items.values().collect();
                    let (mut i, mut draws) = (0, 0);
                    while i < items.len() {
                        let n = items[i].batch_range().len();
                        draws += usize::from(n > 0);
                        i += n.max(1);
                    }
                    draws
                })
                .sum()
        });
    [
        binned::<Opaque3d>(app),
        binned::<AlphaMask3d>(app),
        transparent,
    ]
}

/// The draws of the render world's binned phase `P`, over every view: its multidrawn and
/// batched bins and its unbatchable entities.
fn binned<P: bevy::render::render_phase::BinnedPhaseItem>(app: &App) -> usize {
    let world = app.sub_app(bevy::render::RenderApp).world();
    world
        .get_resource::<bevy::render::render_phase::ViewBinnedRenderPhases<P>>()
        .map_or(0, |views| {
            views
                .0
                .values()
                .map(|phase| {
                    phase.multidrawable_meshes.len()
                        + phase.batchable_meshes.len()
                        + phase
                            .unbatchable_meshes
                            .values()
                            .map(|u| u.entities.len())
                            .sum::<usize>()
                })
                .sum()
        })
}

/// One draw per (mesh, material) of a model for all its characters: the crowd's main passes make
/// as many draws for 40 peds in view as for 4.
#[test]
fn the_crowd_draws_once_per_part_however_many_peds() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, _) = sample_ped(&app);
        let (_, image) = camera(
            &mut app,
            Vec3::new(0.0, 9.0, 12.0),
            Vec3::new(0.0, 0.8, 0.0),
        );
        app.world_mut().spawn((
            DirectionalLight::default(),
            Transform::from_xyz(2.0, 4.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
        ));
        let mut spawned = 0;
        let mut spawn = |app: &mut App, up_to: usize| {
            while spawned < up_to {
                let (c, r) = ((spawned % 8) as f32, (spawned / 8) as f32);
                // Paused, so that the picture settles (pipelines compiled, every part drawn).
                let mut playback = Playback::looping();
                playback.paused = true;
                playback.seek(spawned as f32 * 0.1);
                app.world_mut().spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdModel(ped.clone()),
                    playback,
                    Transform::from_xyz(c - 3.5, 0.0, r - 2.0),
                ));
                spawned += 1;
            }
        };
        let parts = count::<CrowdParts>;
        let mut counts = Vec::new();
        for peds in [4, 40] {
            spawn(&mut app, peds);
            run_until(&mut app, 300, |app| parts(app) == PED_PARTS * peds);
            assert_eq!(parts(&mut app), PED_PARTS * peds);
            settled(&mut app, std::slice::from_ref(&image));
            counts.push(draw_calls(&app));
        }
        eprintln!(
            "draws [opaque, alpha mask, transparent]: 4 peds {:?}, 40 peds {:?}",
            counts[0], counts[1]
        );
        // The sample ped's two parts: the body (its two materials, equal, merged into one) and
        // the cap: one opaque draw and one alpha-masked (before the merge, measured on
        // lavapipe: 2 opaque multidraws and 1 alpha-masked).
        assert_eq!(counts[0], [1, 1, 0], "{counts:?}");
        assert_eq!(counts[0], counts[1], "as many draws for 40 peds as for 4");
    });
}

/// The glTF character `model` (an asset path) in the crowd and as a `Retarget` character with
/// bone entities drawn by Bevy's `SkinnedMesh`, paired as [`spawn_pair`] pairs DFF peds: the
/// same clip, time, place and light; with `mirrored`, the first pair mirrored left to right
/// (its transform's scale `(-1, 1, 1)`). Returns the pairs.
fn spawn_gltf_pairs(app: &mut App, model: &str, mirrored: bool) -> Vec<Pair> {
    let walk: Handle<RigClip> = app
        .world()
        .resource::<AssetServer>()
        .load("anims/sa_ped.ifp#walk");
    let at = |x: f32, z: f32, turn: f32| {
        Transform::from_xyz(x, 0.0, z).with_rotation(Quat::from_rotation_y(turn))
    };
    // Where asked, the first character mirrored left to right.
    let mirror = |at: Transform| match mirrored {
        true => at.with_scale(Vec3::new(-1.0, 1.0, 1.0)),
        false => at,
    };
    [
        (mirror(at(-0.7, 0.0, 0.3)), 0.4),
        (at(0.7, 0.0, -0.4), 0.2),
        // Half out of the picture on the left.
        (at(-1.9, 0.0, 0.0), 0.7),
        (Transform::from_translation(FAR), 0.6),
    ]
    .into_iter()
    .map(|(at, t)| spawn_gltf_pair(app, model, &walk, at, t))
    .collect()
}

/// The glTF character `model` (a file under the app's assets) in the same place and pose both
/// ways: its scene with `Retarget`, drawn by Bevy's skinning, and a crowd character wearing it
/// (hidden), both paused `t` seconds into `walk`.
fn spawn_gltf_pair(
    app: &mut App,
    model: &str,
    walk: &Handle<RigClip>,
    at: Transform,
    t: f32,
) -> Pair {
    let server = app.world().resource::<AssetServer>().clone();
    let file: Handle<bevy::gltf::Gltf> = server.load(model.to_owned());
    let scene: Handle<bevy::world_serialization::WorldAsset> =
        server.load(format!("{model}#Scene0"));
    let model = (
        bevy::world_serialization::WorldAssetRoot(scene),
        Retarget::new(),
    );
    spawn_pair_of(
        app,
        GtaGame::Sa,
        model,
        CrowdGltfModel::new(file),
        walk,
        at,
        t,
    )
}

/// The glTF pairs of [`spawn_gltf_pairs`] (of `model` under `root`, which has the sample's
/// `anims/` and `characters/`) drawn both ways, with the crowd drawing by instanced skinning or
/// (`bevy_skinning`) the Bevy way. The second pair cross-fades into the wave (halfway); the
/// fourth stands 2.8 km out, with its own camera. With `ped`, a pair of the sample DFF ped is
/// drawn (dressed) first, beside them. `meshes` is how many skinned meshes the model has and
/// how many parts the crowd draws it in, meshes of one material being one part (the sample:
/// `[1, 1]`); `mirrored` mirrors the first pair ([`spawn_gltf_pairs`]). Returns, per camera (near,
/// far), the images with every character hidden, drawn by Bevy's skinned meshes and by the
/// crowd.
fn gltf_pairs_drawn(
    root: &Path,
    model: &str,
    bevy_skinning: bool,
    ped: bool,
    [skinned_meshes, parts]: [usize; 2],
    mirrored: bool,
) -> [[RgbaImage; 3]; 2] {
    let mut app = crowd_app(root);
    app.insert_resource(CrowdDrawSettings {
        bevy_skinning,
        ..default()
    });
    app.insert_resource(SkeletonGizmos {
        enabled: false,
        ..default()
    });
    let [(_, near_image), (_, far_image)] = near_and_far(&mut app, 1.0, 3.4);
    let skinned = count::<With<SkinnedMesh>>;
    let crowd_parts = count::<CrowdParts>;
    let mut pairs = Vec::new();
    // The ped's own parts: 2 skinned meshes and a rigid cap (as `crowd_peds_draw_as…`).
    let (mut want_skinned, mut want_parts) = (0, 0);
    if ped {
        let (dff, walk, _) = sample_ped(&app);
        let at = Transform::from_xyz(1.6, 0.0, -0.6);
        pairs.push(spawn_pair(&mut app, &dff, &walk, at, 0.5));
        (want_skinned, want_parts) = (2, PED_PARTS);
        run_until(&mut app, 600, |app| crowd_parts(app) == PED_PARTS);
        assert_eq!(crowd_parts(&mut app), PED_PARTS, "the ped is dressed first");
        assert_eq!(strides(&app), [32], "the ped's slots");
    }
    let gltf_pairs = spawn_gltf_pairs(&mut app, model, mirrored);
    // Until every twin's scene and every crowd character's parts (or, the Bevy way, its scene)
    // are meshes, and every crowd character is posed. The character: one skinned mesh of one
    // primitive.
    if bevy_skinning {
        want_skinned += 2 * skinned_meshes * gltf_pairs.len();
    } else {
        want_skinned += skinned_meshes * gltf_pairs.len();
        want_parts += parts * gltf_pairs.len();
    }
    let fading = ped as usize + 1;
    pairs.extend(gltf_pairs);
    let posed = |app: &App| {
        (pairs.iter())
            .all(|p| (app.world().get::<CrowdPose>(p.crowd)).is_some_and(|c| !c.names.is_empty()))
    };
    run_until(&mut app, 600, |app| {
        skinned(app) == want_skinned && crowd_parts(app) == want_parts && posed(app)
    });
    assert_eq!(skinned(&mut app), want_skinned, "skinned meshes");
    if ped && !bevy_skinning {
        // Every material, the ped's too, at the widest rig's bones a slot.
        let rig = app
            .world()
            .get::<CrowdPose>(pairs[1].crowd)
            .unwrap()
            .names
            .len();
        // (Rounded up to a multiple of 16: the main world's rows are handed out by blocks of
        // 16 bones.)
        let widened = rig.next_multiple_of(16) as u32;
        assert_eq!(strides(&app), [widened], "every slot widened");
    }
    assert_eq!(crowd_parts(&mut app), want_parts, "crowd parts");
    assert!(posed(&app), "the crowd is posed");
    let server = app.world().resource::<AssetServer>().clone();
    let wave: Handle<RigClip> = server.load("anims/sa_ped.ifp#wave");
    run_until(&mut app, 300, |app| {
        app.world().resource::<Assets<RigClip>>().contains(&wave)
    });
    cross_fade_halfway(&mut app, &[&pairs[fading]], &wave);
    let weight = (app
        .world()
        .get::<SkeletalClip>(pairs[fading].model)
        .unwrap())
    .fade_weight();
    assert!(
        weight.is_some_and(|w| (0.2..0.8).contains(&w)),
        "mid-fade: {weight:?}"
    );
    let targets = [near_image, far_image];
    let show = |app: &mut App, shown: &[bool; 2]| {
        for pair in &pairs {
            for (e, on) in [pair.model, pair.crowd].into_iter().zip(shown) {
                let visibility = if *on {
                    Visibility::Visible
                } else {
                    Visibility::Hidden
                };
                app.world_mut().entity_mut(e).insert(visibility);
            }
        }
    };
    show(&mut app, &[false, false]);
    let empty = settled(&mut app, &targets);
    show(&mut app, &[true, false]);
    let bevys = settled(&mut app, &targets);
    show(&mut app, &[false, true]);
    let crowds = settled(&mut app, &targets);
    let [e0, e1] = empty.try_into().unwrap();
    let [b0, b1] = bevys.try_into().unwrap();
    let [c0, c1] = crowds.try_into().unwrap();
    [[e0, b0, c0], [e1, b1, c1]]
}

/// glTF characters in the crowd draw as their twins with bone entities do (`Retarget` on the
/// file's scene, Bevy's `SkinnedMesh`), drawn by instanced skinning and, where asked for (as on
/// a device without storage buffers), the Bevy way: a paused walk, one cross-fading into the
/// wave, one half out of the picture, one 2.8 km out. The two retarget the same clip each for
/// its own rig (the twin's hierarchy has the scene's root and the mesh's node beside the
/// file's joints), which puts a joint at most 5e-4 of the hip height apart
/// (`bevy_retarget::a_gltf_crowd_character_puts_every_node_where_its_retargeted_twin_with_bone_entities_does`):
/// under a pixel here. Bounds as for DFF peds (`compare`): strict near the origin, 0.5 % of
/// the characters' pixels over 8/255 far out.
#[test]
fn gltf_crowd_characters_draw_as_their_twins_skinned_meshes_do() {
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        for bevy_skinning in [false, true] {
            let way = if bevy_skinning {
                "the Bevy way"
            } else {
                "instanced"
            };
            let model = "characters/humanoid.glb";
            let [[e0, b0, c0], [e1, b1, c1]] =
                gltf_pairs_drawn(&root, model, bevy_skinning, false, [1, 1], false);
            compare(&format!("glTF near, {way}"), true, &b0, &c0, &e0);
            compare(&format!("glTF far, {way}"), false, &b1, &c1, &e1);
        }
    });
}

/// The bones a slot of every crowd material's skin, each stride once.
fn strides(app: &App) -> Vec<u32> {
    let materials = app.world().resource::<Assets<CrowdMaterial>>();
    let mut strides: Vec<u32> = materials.iter().map(|(_, m)| m.extension.stride).collect();
    strides.sort_unstable();
    strides.dedup();
    strides
}

/// [`gltf_pairs_drawn`] instanced (with the DFF ped beside, where `ped`), compared with
/// [`compare`]: strictly near the origin, within 0.5 % of the pixels far out.
fn drawn_like_twins(root: &Path, model: &str, ped: bool, label: &str) {
    drawn_like_twins_with(root, model, ped, [1, 1], false, label);
}

/// [`drawn_like_twins`] for a model of `meshes`: skinned meshes, and crowd parts (see
/// [`gltf_pairs_drawn`]), the first pair mirrored where `mirrored`.
fn drawn_like_twins_with(
    root: &Path,
    model: &str,
    ped: bool,
    meshes: [usize; 2],
    mirrored: bool,
    label: &str,
) {
    let [[e0, b0, c0], [e1, b1, c1]] = gltf_pairs_drawn(root, model, false, ped, meshes, mirrored);
    compare(&format!("{label}, near"), true, &b0, &c0, &e0);
    compare(&format!("{label}, far"), false, &b1, &c1, &e1);
}

/// A folder of the test build's own named `name` holding the sample walk (with its `.meta`),
/// the repository's `also` (asset paths), and `characters/NAME` (`model`): the sample glTF
/// character changed by `change`.
fn changed_sample(
    name: &str,
    model: &str,
    also: &[&str],
    change: impl FnOnce(&[u8]) -> Vec<u8>,
) -> PathBuf {
    let dir = asset_dir(name, &[]);
    let assets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    for sub in ["anims", "characters"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for file in ["anims/sa_ped.ifp", "anims/sa_ped.ifp.meta"]
        .iter()
        .chain(also)
    {
        std::fs::copy(assets.join(file), dir.join(file)).unwrap();
    }
    let glb = std::fs::read(assets.join("characters/humanoid.glb")).unwrap();
    std::fs::write(dir.join("characters").join(model), change(&glb)).unwrap();
    dir
}

/// `glb` (a binary glTF) with its JSON and binary chunk changed by `change`.
fn rewrite_glb(glb: &[u8], change: impl FnOnce(&mut serde_json::Value, &mut Vec<u8>)) -> Vec<u8> {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let mut bin = bin_of(glb).to_vec();
    change(&mut json, &mut bin);
    crate::gltf_import::glb_of(&json, bin)
}

/// `glb` with `extra` more nodes, empty, children of node `under` listed before its own: in a
/// crowd rig (a walk from the roots) they come before the joints below `under`, which move up by
/// `extra` bones.
fn with_extra_nodes(glb: &[u8], under: usize, extra: usize) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        let nodes = json["nodes"].as_array_mut().unwrap();
        let first = nodes.len();
        for k in 0..extra {
            let at = [0.0, 0.01 * k as f32, 0.0];
            nodes.push(serde_json::json!({"name": format!("extra{k}"), "translation": at}));
        }
        let children = nodes[under]["children"].as_array().unwrap().clone();
        let mut listed: Vec<serde_json::Value> = (first..first + extra).map(|i| i.into()).collect();
        listed.extend(children);
        nodes[under]["children"] = listed.into();
    })
}

/// `glb` with two morph targets (blend shapes, as VRM faces have) on every primitive, at the
/// mesh's default `weights`:
/// - target 0 widens the body from its middle, a different move for each vertex (`Δp = (0.15 x,
///   0, 0.3 z)` of the vertex's own position) and tilts its normals (`Δn = (0, 0, 0.5)`);
/// - target 1 lifts every vertex 10 cm (`Δp = (0, 0.1, 0)`), no normals.
fn with_morph_targets(glb: &[u8], weights: [f32; 2]) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        // `values` appended as a VEC3 float accessor; `bounds`: with the `min` and `max` glTF
        // asks of a target's positions.
        let vec3 =
            |json: &mut serde_json::Value, bin: &mut Vec<u8>, values: &[[f32; 3]], bounds| {
                let mut accessor = serde_json::json!({
                    "componentType": 5126, "count": values.len(), "type": "VEC3",
                });
                if bounds {
                    let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
                    for v in values {
                        for k in 0..3 {
                            min[k] = min[k].min(v[k]);
                            max[k] = max[k].max(v[k]);
                        }
                    }
                    accessor["min"] = serde_json::json!(min);
                    accessor["max"] = serde_json::json!(max);
                }
                let bytes: Vec<u8> = values
                    .iter()
                    .flatten()
                    .flat_map(|v| v.to_le_bytes())
                    .collect();
                append_accessor(json, bin, &bytes, accessor)
            };
        for (m, p) in primitives(json) {
            let attributes = &json["meshes"][m]["primitives"][p]["attributes"];
            let positions = attributes["POSITION"].as_u64().unwrap() as usize;
            let positions: Vec<[f32; 3]> = floats(json, bin, positions)
                .chunks_exact(3)
                .map(|p| [p[0], p[1], p[2]])
                .collect();
            let widen: Vec<[f32; 3]> = positions
                .iter()
                .map(|p| [0.15 * p[0], 0.0, 0.3 * p[2]])
                .collect();
            let tilt = vec![[0.0, 0.0, 0.5]; positions.len()];
            let lift = vec![[0.0, 0.1, 0.0]; positions.len()];
            let (widen, tilt, lift) = (
                vec3(json, bin, &widen, true),
                vec3(json, bin, &tilt, false),
                vec3(json, bin, &lift, true),
            );
            json["meshes"][m]["primitives"][p]["targets"] = serde_json::json!([
                { "POSITION": widen, "NORMAL": tilt },
                { "POSITION": lift },
            ]);
            json["meshes"][m]["weights"] = serde_json::json!(weights);
        }
    })
}

/// The binary chunk of `glb`: after the JSON chunk, its length, "BIN\0", its bytes.
fn bin_of(glb: &[u8]) -> &[u8] {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let at = 20 + json_len;
    let bin_len = u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    &glb[at + 8..at + 8 + bin_len]
}

/// `bytes` appended to the binary chunk `bin` of `json`'s buffer 0, in a buffer view of their
/// own, and `accessor` (its `bufferView` set to it) appended to the accessors; its index.
fn append_accessor(
    json: &mut serde_json::Value,
    bin: &mut Vec<u8>,
    bytes: &[u8],
    mut accessor: serde_json::Value,
) -> usize {
    let offset = bin.len();
    bin.extend_from_slice(bytes);
    json["buffers"][0]["byteLength"] = bin.len().into();
    let views = json["bufferViews"].as_array_mut().unwrap();
    views.push(serde_json::json!({
        "buffer": 0, "byteOffset": offset, "byteLength": bytes.len(),
    }));
    accessor["bufferView"] = (views.len() - 1).into();
    let accessors = json["accessors"].as_array_mut().unwrap();
    accessors.push(accessor);
    accessors.len() - 1
}

/// A glTF character whose mesh has morph targets is drawn as they leave it at the file's
/// weights, as Bevy draws its scene (Bevy's vertex shader morphs before skinning; the crowd
/// adds the targets into its copy of the mesh once). The two targets at 0.6 and 0.5 move the
/// body by up to 0.07 m sideways, 0.05 m up and bend its normals. Measured: near, mean 0/255
/// and largest 1/255 over 21,549 pixels; far, 47 of 19,016 pixels over 8/255. Drawn unmorphed
/// (the code before this test), the near picture was 6.0/255 from the twin's on average, with
/// 10,305 pixels over 8/255.
#[test]
fn a_gltf_character_with_morph_targets_draws_at_the_files_weights() {
    on_gpu(|| {
        let dir = changed_sample("crowd_morph", "morphed.glb", &[], |glb| {
            with_morph_targets(glb, [0.6, 0.5])
        });
        drawn_like_twins(
            &dir,
            "characters/morphed.glb",
            false,
            "glTF with morph targets",
        );
    });
}

/// `glb` with a second scene, not the default, holding one more node, unskinned, half a metre
/// up and forward: with a copy of the first mesh (a mesh of its own, on the same accessors), or
/// (`shared`) with the first mesh itself, which the default scene's body node shows too.
fn with_second_scene(glb: &[u8], shared: bool) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        let mesh = if shared {
            0
        } else {
            copy_body_mesh(json, "copy")
        };
        let nodes = json["nodes"].as_array_mut().unwrap();
        nodes.push(serde_json::json!({
            "name": "elsewhere", "mesh": mesh, "translation": [0.0, 0.5, 0.5]
        }));
        let node = nodes.len() - 1;
        json["scene"] = 0.into();
        let scenes = json["scenes"].as_array_mut().unwrap();
        scenes.push(serde_json::json!({ "name": "other", "nodes": [node] }));
    })
}

/// A glTF of two scenes draws its default scene's meshes only, as Bevy spawns that scene: a mesh
/// that only the other scene's node shows is not drawn (it was, over the character's chest).
#[test]
fn a_gltf_of_two_scenes_draws_its_default_scene_as_bevy_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_two_scenes", "scenes.glb", &[], |glb| {
            with_second_scene(glb, false)
        });
        drawn_like_twins(&dir, "characters/scenes.glb", false, "glTF of two scenes");
    });
}

/// `glb` with one more node under the `Armature` (node 28): a copy of the first mesh, unskinned,
/// mirrored and at half size (scale `(-0.5, 0.5, 0.5)`), standing 0.9 m to the character's side.
fn with_mirrored_part(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        let mesh = copy_body_mesh(json, "mirror");
        under_armature(
            json,
            serde_json::json!({
                "name": "mirrored", "mesh": mesh,
                "translation": [0.9, 0.0, 0.0], "scale": [-0.5, 0.5, 0.5]
            }),
        );
    })
}

/// The sample character's node that is the scene's root, `Armature` (the joints and `Body` are
/// its children).
const ARMATURE: usize = 28;

/// Adds `node` to `json`'s nodes, a child of the sample's `Armature`.
fn under_armature(json: &mut serde_json::Value, node: serde_json::Value) {
    under_node(json, ARMATURE, node);
}

/// Adds `node` to `json`'s nodes, a child of node `parent`.
fn under_node(json: &mut serde_json::Value, parent: usize, node: serde_json::Value) {
    let nodes = json["nodes"].as_array_mut().unwrap();
    nodes.push(node);
    let node = nodes.len() - 1;
    if !nodes[parent]["children"].is_array() {
        nodes[parent]["children"] = serde_json::json!([]);
    }
    (nodes[parent]["children"].as_array_mut().unwrap()).push(node.into());
}

/// Every primitive of `json`'s meshes, as (mesh, primitive) indices.
fn primitives(json: &serde_json::Value) -> Vec<(usize, usize)> {
    let meshes = json["meshes"].as_array().unwrap();
    (meshes.iter().enumerate())
        .flat_map(|(m, mesh)| {
            (0..mesh["primitives"].as_array().unwrap().len()).map(move |p| (m, p))
        })
        .collect()
}

/// A copy of `json`'s first mesh (the sample's body), named `name`, added to its meshes; the
/// copy's index.
fn copy_body_mesh(json: &mut serde_json::Value, name: &str) -> usize {
    let mut copy = json["meshes"][0].clone();
    copy["name"] = name.into();
    let meshes = json["meshes"].as_array_mut().unwrap();
    meshes.push(copy);
    meshes.len() - 1
}

/// A part under a node whose scale mirrors it (its determinant negative) turns its triangles'
/// winding over; Bevy's loader gives it a copy of its material that culls the other faces, and
/// the crowd draws it with that copy, as Bevy does.
#[test]
fn a_mirrored_gltf_part_is_drawn_with_the_faces_bevy_culls() {
    on_gpu(|| {
        let dir = changed_sample("crowd_mirrored", "mirrored.glb", &[], with_mirrored_part);
        let model = "characters/mirrored.glb";
        drawn_like_twins_with(
            &dir,
            model,
            false,
            [1, 2],
            false,
            "glTF with a mirrored part",
        );
    });
}

/// `glb` with a normal map on its material, tilting every normal 45° along the bitangent (a 2×2
/// texture of one texel, `(128, 200, 200)`: `(0, 0.57, 0.57)` before normalising), and
/// the texture coordinates and tangents it needs on every primitive: each vertex's tangent
/// `normalize(up × n)` (`x` where the normal is vertical), of handedness `w = 1`. The bitangent,
/// `w · (n × t)`, then points along the body's height, so a tangent whose handedness is flipped
/// tilts the lit normals down instead of up.
fn with_normal_map(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        let bytes =
            |values: &[f32]| -> Vec<u8> { values.iter().flat_map(|v| v.to_le_bytes()).collect() };
        for (m, p) in primitives(json) {
            let attributes = &json["meshes"][m]["primitives"][p]["attributes"];
            let normals = attributes["NORMAL"].as_u64().unwrap() as usize;
            let normals = floats(json, bin, normals);
            let count = normals.len() / 3;
            let tangents: Vec<f32> = (normals.chunks_exact(3))
                .flat_map(|n| {
                    let t = Vec3::Y.cross(Vec3::new(n[0], n[1], n[2]));
                    let t = if t.length() > 1e-3 {
                        t.normalize()
                    } else {
                        Vec3::X
                    };
                    [t.x, t.y, t.z, 1.0]
                })
                .collect();
            // Any coordinates: the texture is of one texel.
            let uvs = vec![0.25; 2 * count];
            let tangents = append_accessor(
                json,
                bin,
                &bytes(&tangents),
                serde_json::json!({"componentType": 5126, "count": count, "type": "VEC4"}),
            );
            let uvs = append_accessor(
                json,
                bin,
                &bytes(&uvs),
                serde_json::json!({"componentType": 5126, "count": count, "type": "VEC2"}),
            );
            let attributes = &mut json["meshes"][m]["primitives"][p]["attributes"];
            attributes["TANGENT"] = tangents.into();
            attributes["TEXCOORD_0"] = uvs.into();
        }
        let texel = image::RgbaImage::from_pixel(2, 2, image::Rgba([128, 200, 200, 255]));
        let texture = append_texture(json, bin, &texel);
        for material in json["materials"].as_array_mut().unwrap() {
            material["normalTexture"] = serde_json::json!({"index": texture});
        }
    })
}

/// `image` appended to `json` as a PNG in the binary chunk `bin` (padded to 4 bytes, so that
/// accessors appended after it stay aligned), with a texture showing it (nearest filtering, so
/// that both ways sample the same texels); the texture's index.
fn append_texture(
    json: &mut serde_json::Value,
    bin: &mut Vec<u8>,
    image: &image::RgbaImage,
) -> usize {
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let mut png = png.into_inner();
    png.resize(png.len().next_multiple_of(4), 0);
    let offset = bin.len();
    bin.extend_from_slice(&png);
    json["buffers"][0]["byteLength"] = bin.len().into();
    let views = json["bufferViews"].as_array_mut().unwrap();
    views.push(serde_json::json!({"buffer": 0, "byteOffset": offset, "byteLength": png.len()}));
    let view = views.len() - 1;
    let push = |json: &mut serde_json::Value, key: &str, item: serde_json::Value| {
        if !json[key].is_array() {
            json[key] = serde_json::json!([]);
        }
        let list = json[key].as_array_mut().unwrap();
        list.push(item);
        list.len() - 1
    };
    let source = push(
        json,
        "images",
        serde_json::json!({"bufferView": view, "mimeType": "image/png"}),
    );
    let sampler = push(
        json,
        "samplers",
        serde_json::json!({"magFilter": 9728, "minFilter": 9728}),
    );
    push(
        json,
        "textures",
        serde_json::json!({"source": source, "sampler": sampler}),
    )
}

/// `glb` with a base colour texture (8×8 texels of a checker of red and blue, tinted by the
/// vertex colours) on its material, and texture coordinates on every primitive: each vertex's
/// position seen from the front (`(x, y)`, scaled to cover the texture about twice over the
/// body), so that the checker lies across the body and moves with it.
fn with_base_colour_texture(glb: &[u8]) -> Vec<u8> {
    with_checker(glb, false)
}

/// [`with_base_colour_texture`], its checker's blue texels transparent (alpha 0) and the
/// material cut out at alpha 0.5 (`alphaMode` `MASK`): the body is drawn, and casts its shadow,
/// with holes.
fn with_cut_out_texture(glb: &[u8]) -> Vec<u8> {
    with_checker(glb, true)
}

/// [`with_base_colour_texture`] or (`cut_out`) [`with_cut_out_texture`].
fn with_checker(glb: &[u8], cut_out: bool) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        for (m, p) in primitives(json) {
            let attributes = &json["meshes"][m]["primitives"][p]["attributes"];
            let positions = attributes["POSITION"].as_u64().unwrap() as usize;
            let uvs: Vec<u8> = (floats(json, bin, positions).chunks_exact(3))
                .flat_map(|p| [p[0] * 1.2 + 0.5, 1.0 - p[1] * 1.2])
                .flat_map(f32::to_le_bytes)
                .collect();
            let count = uvs.len() / 8;
            let uvs = append_accessor(
                json,
                bin,
                &uvs,
                serde_json::json!({"componentType": 5126, "count": count, "type": "VEC2"}),
            );
            json["meshes"][m]["primitives"][p]["attributes"]["TEXCOORD_0"] = uvs.into();
        }
        let blue_alpha = if cut_out { 0 } else { 255 };
        let checker = image::RgbaImage::from_fn(8, 8, |x, y| match (x + y) % 2 {
            0 => image::Rgba([220, 40, 40, 255]),
            _ => image::Rgba([40, 60, 220, blue_alpha]),
        });
        let texture = append_texture(json, bin, &checker);
        for material in json["materials"].as_array_mut().unwrap() {
            material["pbrMetallicRoughness"]["baseColorTexture"] =
                serde_json::json!({"index": texture});
            if cut_out {
                material["alphaMode"] = "MASK".into();
                material["alphaCutoff"] = 0.5.into();
            }
        }
    })
}

/// A glTF character of a cut-out material (a texture's alpha against a cutoff, `MASK`) draws as
/// its twin does, holes and shadow alike: Bevy draws such parts in its alpha-mask phases, and
/// its prepass and shadow passes read the texture through the crowd's vertex stage's texture
/// coordinates.
#[test]
fn a_cut_out_gltf_character_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_cut_out", "cut_out.glb", &[], with_cut_out_texture);
        drawn_like_twins(&dir, "characters/cut_out.glb", false, "cut-out glTF");
    });
}

/// A glTF character of a textured material (a base colour texture over texture coordinates, as
/// most exported characters have) draws as its twin does: the crowd's copy of the mesh keeps
/// its coordinates, and its part the file's material.
#[test]
fn a_textured_gltf_character_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample(
            "crowd_textured",
            "textured.glb",
            &[],
            with_base_colour_texture,
        );
        drawn_like_twins(&dir, "characters/textured.glb", false, "textured glTF");
    });
}

/// A normal-mapped glTF character's tangents keep their handedness where Bevy keeps it: Bevy
/// flips a tangent's `w` by the sign of its mesh entity's transform, so under a mirroring node
/// (the mirrored half-size copy of [`with_mirrored_part`]) or a mirroring character (the first
/// pair, of scale `(-1, 1, 1)`), but not under both. Drawn by instanced skinning, against the
/// twins' `SkinnedMesh` and mirrored mesh.
///
/// Measured: near, 22,580 pixels, mean 0.0001/255, one pixel at 9/255 (on the ground in a
/// mirrored character's shadow, where the shadow filter's samples fall either side of an edge
/// moved by rounding); far, 25 of 21,685 pixels over 8/255. With the tangents flipped by the
/// character's place alone (the code before), near was 2.79/255 off on average with 3,580
/// pixels over 8/255, all on the mirrored parts, and far 3.50/255 with 3,887. So near is held to
/// the mean and to a handful of pixels over 8/255, not to none.
#[test]
fn a_normal_mapped_gltf_character_keeps_its_tangents_handedness_where_bevy_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_normal_mapped", "normal_mapped.glb", &[], |glb| {
            with_mirrored_part(&with_normal_map(glb))
        });
        let model = "characters/normal_mapped.glb";
        let [[e0, b0, c0], [e1, b1, c1]] =
            gltf_pairs_drawn(&dir, model, false, false, [1, 2], true);
        let label = "normal-mapped glTF, mirrored";
        let (shown, (mean, worst, over)) = (covered(&b0, &e0), difference(&b0, &c0));
        println!(
            "{label}, near: {shown} pixels, mean {mean:.4}/255, largest {worst}/255, {over} over 8/255"
        );
        let path = write_diff("crowd_normal_mapped_near", &c0, &b0);
        assert!(shown > 4000, "the characters show ({})", path.display());
        assert!(
            mean <= 2.0 && over <= 5,
            "near: mean {mean}, {over} over 8/255 ({})",
            path.display()
        );
        compare(&format!("{label}, far"), false, &b1, &c1, &e1);
    });
}

/// `glb` with its material half transparent: `alphaMode` `BLEND` and a base colour of alpha 0.5
/// (Bevy's loader gives it `AlphaMode::Blend`).
fn with_blended_material(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        for material in json["materials"].as_array_mut().unwrap() {
            material["alphaMode"] = "BLEND".into();
            material["pbrMetallicRoughness"]["baseColorFactor"] =
                serde_json::json!([1.0, 1.0, 1.0, 0.5]);
        }
    })
}

/// A glTF character of a half-transparent material draws as its twin does: its part is sorted
/// by its character's transform, as Bevy sorts the twin's blended mesh (the DFF peds' test above
/// checks the part's transform; here the four characters' blended pictures, one behind another,
/// are compared).
#[test]
fn a_blended_gltf_character_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_blended", "blended.glb", &[], with_blended_material);
        drawn_like_twins(&dir, "characters/blended.glb", false, "blended glTF");
    });
}

/// `glb` with every primitive drawn without indices, as some exporters write them: each
/// attribute's values laid out again in the order the indices name them (three vertices per
/// triangle), in accessors of their own, and the indices taken away.
fn with_unindexed_primitives(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        for (m, p) in primitives(json) {
            let primitive = json["meshes"][m]["primitives"][p].clone();
            let indices = ints(json, bin, primitive["indices"].as_u64().unwrap() as usize);
            let attributes = primitive["attributes"].as_object().unwrap().clone();
            for (name, accessor) in attributes {
                let accessor = accessor.as_u64().unwrap() as usize;
                let described = json["accessors"][accessor].clone();
                let view = &json["bufferViews"][described["bufferView"].as_u64().unwrap() as usize];
                assert!(view["byteStride"].is_null(), "{name}: packed values");
                let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
                let length = view["byteLength"].as_u64().unwrap() as usize;
                let size = length / described["count"].as_u64().unwrap() as usize;
                let values = &bin[offset..offset + length];
                let laid: Vec<u8> = (indices.iter())
                    .flat_map(|&i| values[i as usize * size..(i as usize + 1) * size].to_vec())
                    .collect();
                let mut again = described.clone();
                again["count"] = indices.len().into();
                let again = append_accessor(json, bin, &laid, again);
                json["meshes"][m]["primitives"][p]["attributes"][&name] = again.into();
            }
            let primitive = json["meshes"][m]["primitives"][p].as_object_mut().unwrap();
            primitive.remove("indices");
        }
    })
}

/// A glTF character whose meshes have no indices (each triangle's three vertices in turn) draws
/// as its twin does: two bodies of one material on two skins ([`with_second_skin`]), which the
/// crowd leaves as two parts (meshes without indices are not merged into one).
#[test]
fn an_unindexed_gltf_character_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_unindexed", "unindexed.glb", &[], |glb| {
            with_second_skin(&with_unindexed_primitives(glb))
        });
        let model = "characters/unindexed.glb";
        drawn_like_twins_with(&dir, model, false, [2, 2], false, "unindexed glTF");
    });
}

/// `glb` with its skin's vertex attributes stored small, as exporters often write them: the
/// joint indices as bytes (`JOINTS_0` of `UNSIGNED_BYTE`) and the weights as normalised 16-bit
/// integers (`WEIGHTS_0` of `UNSIGNED_SHORT`, `normalized`).
fn with_small_skin_attributes(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        for (m, p) in primitives(json) {
            let attributes = json["meshes"][m]["primitives"][p]["attributes"].clone();
            let joints = ints(json, bin, attributes["JOINTS_0"].as_u64().unwrap() as usize);
            let weights = floats(
                json,
                bin,
                attributes["WEIGHTS_0"].as_u64().unwrap() as usize,
            );
            let count = joints.len() / 4;
            let bytes: Vec<u8> = joints.iter().map(|&j| u8::try_from(j).unwrap()).collect();
            let joints = append_accessor(
                json,
                bin,
                &bytes,
                serde_json::json!({"componentType": 5121, "count": count, "type": "VEC4"}),
            );
            let shorts: Vec<u8> = (weights.iter())
                .flat_map(|w| ((w * 65535.0).round() as u16).to_le_bytes())
                .collect();
            let weights = append_accessor(
                json,
                bin,
                &shorts,
                serde_json::json!({
                    "componentType": 5123, "normalized": true, "count": count, "type": "VEC4"
                }),
            );
            let attributes = &mut json["meshes"][m]["primitives"][p]["attributes"];
            attributes["JOINTS_0"] = joints.into();
            attributes["WEIGHTS_0"] = weights.into();
        }
    })
}

/// A glTF character whose skin's joints are bytes and weights 16-bit integers draws as its twin
/// does (Bevy's loader widens both; the crowd takes the widened values).
#[test]
fn a_gltf_character_of_small_skin_attributes_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample(
            "crowd_small_skin",
            "small.glb",
            &[],
            with_small_skin_attributes,
        );
        drawn_like_twins(
            &dir,
            "characters/small.glb",
            false,
            "glTF of small skin attributes",
        );
    });
}

/// `glb` with a rigid mesh held in the right hand: a copy of the body's mesh at a fifth of its
/// size, on a node of its own (no skin) under `mixamorig:RightHand` (node 20), 10 cm along the
/// hand, so that it swings with the hand as the walk plays.
fn with_held_mesh(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        let mesh = copy_body_mesh(json, "held");
        assert_eq!(json["nodes"][20]["name"], "mixamorig:RightHand");
        let held = serde_json::json!({
            "name": "held", "mesh": mesh, "translation": [0.0, 0.1, 0.0], "scale": [0.2, 0.2, 0.2]
        });
        under_node(json, 20, held);
    })
}

/// A glTF character holding a rigid mesh in its hand (a node with a mesh and no skin, under an
/// animated joint) draws as its twin does: the crowd moves the mesh with the hand's node (in
/// one part with the body: the two share a material).
#[test]
fn a_gltf_character_holding_a_rigid_mesh_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_held", "held.glb", &[], with_held_mesh);
        let model = "characters/held.glb";
        drawn_like_twins_with(
            &dir,
            model,
            false,
            [1, 1],
            false,
            "glTF holding a rigid mesh",
        );
    });
}

/// `glb` with its `Armature` (node 28, above the joints and the body) scaled unevenly:
/// `(1.0, 1.3, 0.8)`, taller and thinner, which no rotation and uniform scale hold.
fn with_uneven_armature(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        assert_eq!(json["nodes"][ARMATURE]["name"], "Armature");
        json["nodes"][ARMATURE]["scale"] = serde_json::json!([1.0, 1.3, 0.8]);
    })
}

/// A glTF character under an unevenly scaled root node draws as its twin does: the crowd poses
/// it through the pose pipeline's scaled path and skins with general 3×4 matrices.
#[test]
fn a_gltf_character_under_an_unevenly_scaled_root_draws_as_its_twin_does() {
    on_gpu(|| {
        let dir = changed_sample("crowd_uneven", "uneven.glb", &[], with_uneven_armature);
        drawn_like_twins(
            &dir,
            "characters/uneven.glb",
            false,
            "glTF of an uneven root",
        );
    });
}

/// `glb` with a second skinned body: a copy of the first mesh on a second skin whose joints are
/// the first's in reverse order, the copy's joint indices and the skin's inverse bind matrices
/// reordered to match, on a node of its own beside the `Body`. Skinned right, it lies exactly
/// on the first body; skinned on the first skin's joints, it would be torn apart.
pub(crate) fn with_second_skin(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, bin| {
        let joints: Vec<serde_json::Value> = json["skins"][0]["joints"].as_array().unwrap().clone();
        let n = joints.len();
        // Joint j of the first skin is joint n − 1 − j of the second.
        let ibm = json["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
        let reversed: Vec<u8> = (floats(json, bin, ibm).chunks_exact(16).rev())
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let ibm = append_accessor(
            json,
            bin,
            &reversed,
            serde_json::json!({"componentType": 5126, "count": n, "type": "MAT4"}),
        );
        let attributes = &json["meshes"][0]["primitives"][0]["attributes"];
        let vertex_joints = attributes["JOINTS_0"].as_u64().unwrap() as usize;
        let count = json["accessors"][vertex_joints]["count"].clone();
        let remapped: Vec<u8> = (ints(json, bin, vertex_joints).into_iter())
            .flat_map(|j| (n as u16 - 1 - j as u16).to_le_bytes())
            .collect();
        let vertex_joints = append_accessor(
            json,
            bin,
            &remapped,
            serde_json::json!({"componentType": 5123, "count": count, "type": "VEC4"}),
        );
        let mut copy = json["meshes"][0].clone();
        copy["name"] = "second body".into();
        copy["primitives"][0]["attributes"]["JOINTS_0"] = vertex_joints.into();
        let meshes = json["meshes"].as_array_mut().unwrap();
        meshes.push(copy);
        let mesh = meshes.len() - 1;
        let mut skin = json["skins"][0].clone();
        skin["name"] = "reversed".into();
        skin["joints"] = joints.into_iter().rev().collect();
        skin["inverseBindMatrices"] = ibm.into();
        let skins = json["skins"].as_array_mut().unwrap();
        skins.push(skin);
        let skin = skins.len() - 1;
        under_armature(
            json,
            serde_json::json!({"name": "Body2", "mesh": mesh, "skin": skin}),
        );
    })
}

/// A glTF of two skinned meshes on two skins (the second's joints in another order): each mesh
/// skins from its own skin's joints, as Bevy's `SkinnedMesh`es do.
#[test]
fn a_gltf_of_two_skins_skins_each_mesh_on_its_own_joints() {
    on_gpu(|| {
        let dir = changed_sample("crowd_two_skins", "skins.glb", &[], with_second_skin);
        let model = "characters/skins.glb";
        drawn_like_twins_with(&dir, model, false, [2, 1], false, "glTF of two skins");
    });
}

/// `glb` with a second skeleton beside the first: a copy of the armature's 27 joints (the same
/// names, as a file of two characters has them) under a root `Armature2` 1 m along X, skinning
/// the same `Body` mesh through a second skin (the first skin's inverse bind matrices: at rest
/// the copy stands 1 m to the side of the first).
fn with_second_skeleton(glb: &[u8]) -> Vec<u8> {
    rewrite_glb(glb, |json, _| {
        let nodes = json["nodes"].as_array_mut().unwrap();
        let first = nodes.len();
        // Nodes 0 to 26 are the joints (`with_second_skin`'s, listed by the skin in order).
        let copies: Vec<serde_json::Value> = (0..27)
            .map(|i| {
                let mut node = nodes[i].clone();
                if let Some(children) = node["children"].as_array_mut() {
                    for c in children.iter_mut() {
                        *c = (c.as_u64().unwrap() as usize + first).into();
                    }
                }
                node
            })
            .collect();
        nodes.extend(copies);
        nodes.push(serde_json::json!({"name": "Body2", "mesh": 0, "skin": 1}));
        let body = nodes.len() - 1;
        nodes.push(serde_json::json!({
            "name": "Armature2",
            "children": [first, body],
            "translation": [1.0, 0.0, 0.0],
        }));
        let root = nodes.len() - 1;
        let mut skin = json["skins"][0].clone();
        skin["name"] = "Armature2".into();
        skin["joints"] = (first..first + 27).collect::<Vec<_>>().into();
        skin["skeleton"] = first.into();
        json["skins"].as_array_mut().unwrap().push(skin);
        json["scenes"][0]["nodes"]
            .as_array_mut()
            .unwrap()
            .push(root.into());
    })
}

/// A glTF of two separate skeletons of the same bone names (two characters in one file), one
/// mesh skinned on each: the crowd draws both as Bevy draws the file's scene with `Retarget`
/// on it, the clip on the skeleton retargeting finds and the other at rest.
#[test]
fn a_gltf_of_two_skeletons_draws_as_bevy_draws_it() {
    on_gpu(|| {
        let dir = changed_sample("crowd_two_skeletons", "pair.glb", &[], with_second_skeleton);
        let model = "characters/pair.glb";
        drawn_like_twins_with(&dir, model, false, [2, 1], false, "glTF of two skeletons");
    });
}

/// The other scene's node showing the very mesh the default scene's body node shows: the crowd
/// draws the body node's alone, as Bevy spawns the default scene. (Matched by mesh alone, the
/// other scene's node was taken for one to draw too.)
#[test]
fn a_mesh_the_other_scene_shows_too_is_drawn_on_the_default_scenes_node_alone() {
    on_gpu(|| {
        let dir = changed_sample("crowd_shared_mesh", "shared.glb", &[], |glb| {
            with_second_scene(glb, true)
        });
        drawn_like_twins(&dir, "characters/shared.glb", false, "glTF sharing a mesh");
    });
}

/// A glTF character of more nodes than the crowd's 32 bones a slot: the sample character with
/// 24 empty nodes before its joints (53 in all, the skin's joints moved to bones 25 to 52),
/// drawn after a DFF ped is already drawn at 32 bones a slot. The bone buffer and every
/// material, the ped's included, are laid out again at 53 a slot, and both still draw as Bevy
/// draws them.
#[test]
fn a_gltf_character_of_more_bones_than_a_slot_widens_every_slot() {
    on_gpu(|| {
        let ped = ["characters/ped.dff", "characters/ped.txd"];
        let dir = changed_sample("crowd_wide_rig", "wide.glb", &ped, |glb| {
            with_extra_nodes(glb, ARMATURE, 24)
        });
        drawn_like_twins(&dir, "characters/wide.glb", true, "wide glTF and a ped");
    });
}

/// Faults with glTF models in the crowd: a file that fails to load leaves its characters
/// unposed and undrawn while they play on; the file modified under the crowd (as a reload
/// does) poses and dresses its characters anew and keeps every playhead; a character that
/// takes the model off is undressed, gives its slot back, and poses its game's ped again.
#[test]
fn a_failed_or_reloaded_gltf_crowd_model_keeps_the_crowd_playing() {
    on_gpu(|| {
        let dir = asset_dir(
            "crowd_gltf_faults",
            &[
                ("characters/humanoid.glb", "humanoid.glb"),
                ("characters/ped.dff", "ped.dff"),
                ("characters/ped.txd", "ped.txd"),
                ("anims/sa_ped.ifp", "sa_ped.ifp"),
                ("anims/sa_ped.ifp.meta", "sa_ped.ifp.meta"),
            ],
        );
        // A binary glTF header promising more bytes than the file has.
        std::fs::write(dir.join("broken.glb"), b"glTF\x02\0\0\0\xff\xff\0\0").unwrap();
        let mut app = crowd_app(&dir);
        let server = app.world().resource::<AssetServer>().clone();
        let model: Handle<bevy::gltf::Gltf> = server.load("humanoid.glb");
        let broken: Handle<bevy::gltf::Gltf> = server.load("broken.glb");
        let walk: Handle<RigClip> = server.load("sa_ped.ifp#walk");
        let spawn = |app: &mut App, model: &Handle<bevy::gltf::Gltf>| {
            app.world_mut()
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                    CrowdGltfModel::new(model.clone()),
                    KeepCrowdPose,
                ))
                .id()
        };
        let worn = [spawn(&mut app, &model), spawn(&mut app, &model)];
        let failed = spawn(&mut app, &broken);
        let parts = |app: &App, e: Entity| crowd_materials(app, e).len();
        let bones = |app: &App, e: Entity| app.world().get::<CrowdPose>(e).unwrap().bones.len();
        run_until(&mut app, 600, |app| {
            worn.iter()
                .all(|&e| parts(app, e) == 1 && bones(app, e) > 0)
                && server.load_state(&broken).is_failed()
        });
        assert!(server.load_state(&broken).is_failed());
        assert!(worn.iter().all(|&e| parts(&app, e) == 1), "dressed");
        let time = |app: &App, e: Entity| app.world().get::<Playback>(e).unwrap().time;
        // The file's 29 nodes.
        assert_eq!(bones(&app, worn[0]), 29);
        let before = time(&app, failed);
        for _ in 0..5 {
            app.update();
        }
        assert_eq!(parts(&app, failed), 0, "a file that failed draws nothing");
        assert_eq!(bones(&app, failed), 0, "and poses nothing");
        // (It waits for its rig: its playhead has no clip length to play against.)
        assert_eq!(time(&app, failed), before);

        // The file modified under the playing crowd: new parts, the playheads going on.
        let old_parts: Vec<Entity> = app.world().get::<Children>(worn[0]).unwrap().to_vec();
        let times = worn.map(|e| time(&app, e));
        mark_modified(&mut app, &model);
        app.update();
        for (e, t) in worn.iter().zip(times) {
            let now = time(&app, *e);
            assert!(now > t || now < 0.1, "the playhead goes on: {t} → {now}");
        }
        for _ in 0..3 {
            app.update();
        }
        let new_parts: Vec<Entity> = app.world().get::<Children>(worn[0]).unwrap().to_vec();
        assert_eq!(parts(&app, worn[0]), 1, "dressed again");
        assert!(new_parts.iter().all(|p| !old_parts.contains(p)), "anew");
        assert_eq!(bones(&app, worn[0]), 29, "posed");

        // The model taken off: undressed, and the SA ped's 32 bones posed.
        let before = time(&app, worn[1]);
        app.world_mut()
            .entity_mut(worn[1])
            .remove::<CrowdGltfModel>();
        for _ in 0..3 {
            app.update();
        }
        assert_eq!(parts(&app, worn[1]), 0, "undressed");
        assert!(ran(&app, worn[1], before) > 0.0, "plays on");
        assert_eq!(bones(&app, worn[1]), 32, "the SA ped's bones");
        let again = spawn(&mut app, &model);
        for _ in 0..3 {
            app.update();
        }
        let tag = |app: &App, e: Entity| {
            let child = app.world().get::<Children>(e).unwrap()[0];
            app.world().get::<bevy::mesh::MeshTag>(child).unwrap().0
        };
        assert_ne!(tag(&app, again), tag(&app, worn[0]));
        assert!(
            tag(&app, again) < 3,
            "a slot given back: {}",
            tag(&app, again)
        );
        // A character despawned gives its slot back too: the next one dressed takes it.
        let slot = tag(&app, again);
        app.world_mut().despawn(again);
        app.update();
        let next = spawn(&mut app, &model);
        for _ in 0..3 {
            app.update();
        }
        assert_eq!(tag(&app, next), slot, "the despawned character's slot");

        // A character in the sample DFF ped, given the glTF model too: posed on the glTF rig and
        // dressed in the glTF model alone (the ped's parts go).
        let ped: Handle<Dff> = server.load("ped.dff");
        let both = app
            .world_mut()
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdModel(ped),
                KeepCrowdPose,
            ))
            .id();
        run_until(&mut app, 300, |app| parts(app, both) == PED_PARTS);
        assert_eq!(parts(&app, both), PED_PARTS, "dressed in the ped");
        app.world_mut()
            .entity_mut(both)
            .insert(CrowdGltfModel::new(model.clone()));
        for _ in 0..4 {
            app.update();
        }
        assert_eq!(parts(&app, both), 1, "dressed in the glTF model alone");
        assert_eq!(bones(&app, both), 29, "posed on its rig");
    });
}

/// Drawn the Bevy way (as without storage buffers), a glTF character's scene follows its pose
/// node by node, matched by name under the node matched above: two nodes of one name in two
/// places (an `end` under `A` and one under `B`) each stay at their own rest (a match by name
/// alone put both where the last was).
#[test]
fn the_bevy_way_a_gltf_scenes_nodes_of_one_name_keep_their_own_places() {
    on_gpu(|| {
        let dir = asset_dir("crowd_same_names", &[("anims/sa_ped.ifp", "sa_ped.ifp")]);
        let file = r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
            "nodes":[{"name":"Armature","children":[1,3]},
            {"name":"A","translation":[0.5,0,0],"children":[2,5,6]},
            {"name":"end","translation":[0,1,0]},
            {"name":"B","translation":[-0.5,0,0],"children":[4]},
            {"name":"end","translation":[0,2,0]},
            {"name":"twin","translation":[0,3,0]},
            {"name":"twin","translation":[0,4,0]}]}"#;
        std::fs::write(dir.join("same_names.gltf"), file).unwrap();
        let mut app = crowd_app(&dir);
        app.insert_resource(CrowdDrawSettings {
            bevy_skinning: true,
            ..default()
        });
        let server = app.world().resource::<AssetServer>().clone();
        let walk: Handle<RigClip> = server.load("sa_ped.ifp#walk");
        let model: Handle<bevy::gltf::Gltf> = server.load("same_names.gltf");
        let character = app
            .world_mut()
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk),
                CrowdGltfModel::new(model),
                Transform::from_xyz(3.0, 0.0, 0.0),
            ))
            .id();
        let named = |app: &mut App, name: &str| -> Vec<Vec3> {
            let world = app.world_mut();
            let mut q = world.query::<(&Name, &GlobalTransform)>();
            let mut at: Vec<Vec3> = (q.iter(world))
                .filter(|(n, _)| n.as_str() == name)
                .map(|(_, g)| g.translation())
                .collect();
            at.sort_by(|a, b| a.y.total_cmp(&b.y));
            at
        };
        let ends = |app: &mut App| named(app, "end");
        let posed = |app: &App| {
            app.world()
                .get::<CrowdPose>(character)
                .is_some_and(|p| !p.bones.is_empty())
        };
        run_until(&mut app, 300, |app| posed(app) && ends(app).len() == 2);
        for _ in 0..3 {
            app.update();
        }
        let at = ends(&mut app);
        assert_eq!(at.len(), 2, "the scene spawned under the character");
        let expected = [Vec3::new(3.5, 1.0, 0.0), Vec3::new(2.5, 2.0, 0.0)];
        for (got, want) in at.iter().zip(expected) {
            assert!(got.distance(want) < 1e-5, "{at:?} against {expected:?}");
        }
        // Two siblings of one name each keep their own place (both took the first's before).
        let at = named(&mut app, "twin");
        let expected = [Vec3::new(3.5, 3.0, 0.0), Vec3::new(3.5, 4.0, 0.0)];
        assert_eq!(at.len(), 2);
        for (got, want) in at.iter().zip(expected) {
            assert!(got.distance(want) < 1e-5, "{at:?} against {expected:?}");
        }
    });
}

/// Every mesh entity below `e` (a character's parts, or its fallback model's meshes; a Bevy
/// twin's meshes).
fn meshes_below(app: &mut App, e: Entity) -> Vec<Entity> {
    let world = app.world_mut();
    let mut meshes = world.query_filtered::<(), With<Mesh3d>>();
    let mut found = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(children.iter());
        }
        if meshes.get(world, e).is_ok() {
            found.push(e);
        }
    }
    found
}

/// How many of the meshes below `e` have `C`, and how many meshes there are.
fn meshes_with<C: Component>(app: &mut App, e: Entity) -> (usize, usize) {
    let meshes = meshes_below(app, e);
    let with = (meshes.iter())
        .filter(|&&m| app.world().get::<C>(m).is_some())
        .count();
    (with, meshes.len())
}

/// A crowd character's `NotShadowCaster`, `NotShadowReceiver` and `RenderLayers` (which Bevy
/// reads on mesh entities only) reach the meshes that draw it, both ways it is drawn, for a DFF
/// ped and a glTF character: its parts (instanced skinning), and without storage buffers its
/// fallback model's meshes (Bevy's skinned meshes: a `GtaModel`'s, or the glTF file's scene,
/// spawned after the character is dressed). Each is passed on when the character is dressed
/// with it already (and dressed anew, its model reloaded), when it is inserted later, and
/// (`RenderLayers`) when it changes in place; removed from the character, it is taken off them.
/// On the no-op backend: what the GPU draws of it is checked on lavapipe
/// (`a_crowd_characters_shadow_and_layer_settings_draw_as_on_bevys_own_meshes`).
#[test]
fn a_crowd_characters_shadow_and_layer_settings_reach_the_meshes_that_draw_it() {
    use bevy::camera::visibility::RenderLayers;
    use bevy::gltf::Gltf;
    use bevy::light::{NotShadowCaster, NotShadowReceiver};
    for (gltf, limits) in [
        (false, wgpu::Limits::default()),
        (false, wgpu::Limits::downlevel_webgl2_defaults()),
        (true, wgpu::Limits::default()),
        (true, wgpu::Limits::downlevel_webgl2_defaults()),
    ] {
        let way = match (gltf, limits.max_storage_buffers_per_shader_stage) {
            (false, 0) => "a DFF ped the Bevy way",
            (false, _) => "a DFF ped instanced",
            (true, 0) => "a glTF character the Bevy way",
            (true, _) => "a glTF character instanced",
        };
        let mut app = noop_crowd_app(limits);
        let (ped, walk, _) = sample_ped(&app);
        let humanoid: Handle<Gltf> =
            (app.world().resource::<AssetServer>()).load("characters/humanoid.glb");
        // Dressed with one of them already; the other character with none.
        let spawn = |app: &mut App, x: f32| {
            let mut e = app.world_mut().spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                Transform::from_xyz(x, 0.0, -2.0),
            ));
            match gltf {
                false => e.insert(CrowdModel(ped.clone())),
                true => e.insert(CrowdGltfModel::new(humanoid.clone())),
            };
            e.id()
        };
        let (a, b) = (spawn(&mut app, 0.0), spawn(&mut app, 1.5));
        app.world_mut().entity_mut(a).insert(NotShadowCaster);
        // The sample ped: two parts instanced, three meshes the Bevy way; the glTF humanoid:
        // one part, one mesh.
        let meshes = match way {
            "a DFF ped instanced" => PED_PARTS,
            "a DFF ped the Bevy way" => 3,
            _ => 1,
        };
        run_until(&mut app, 600, |app| {
            meshes_below(app, a).len() >= meshes && meshes_below(app, b).len() >= meshes
        });
        app.update();
        assert_eq!(meshes_below(&mut app, a).len(), meshes, "{way}: dressed");
        assert_eq!(
            meshes_with::<NotShadowCaster>(&mut app, a),
            (meshes, meshes),
            "{way}: dressed with it"
        );
        assert_eq!(meshes_with::<NotShadowCaster>(&mut app, b).0, 0, "{way}");

        // Inserted later, on the other character.
        let layers = RenderLayers::layer(1);
        (app.world_mut().entity_mut(b)).insert((NotShadowReceiver, layers.clone()));
        app.update();
        assert_eq!(meshes_with::<NotShadowReceiver>(&mut app, b).0, meshes);
        let on_layer = |app: &mut App, e: Entity, layers: &RenderLayers| {
            (meshes_below(app, e).iter())
                .filter(|&&m| app.world().get::<RenderLayers>(m) == Some(layers))
                .count()
        };
        assert_eq!(on_layer(&mut app, b, &layers), meshes, "{way}: layer 1");
        assert_eq!(meshes_with::<RenderLayers>(&mut app, a).0, 0, "{way}");
        // Changed in place.
        let both = RenderLayers::from_layers(&[0, 2]);
        *app.world_mut().get_mut::<RenderLayers>(b).unwrap() = both.clone();
        app.update();
        assert_eq!(
            on_layer(&mut app, b, &both),
            meshes,
            "{way}: layers 0 and 2"
        );

        // Removed: taken off the meshes.
        (app.world_mut().entity_mut(b)).remove::<(NotShadowReceiver, RenderLayers)>();
        app.world_mut().entity_mut(a).remove::<NotShadowCaster>();
        app.update();
        for e in [a, b] {
            assert_eq!(meshes_with::<NotShadowCaster>(&mut app, e).0, 0, "{way}");
            assert_eq!(meshes_with::<NotShadowReceiver>(&mut app, e).0, 0, "{way}");
            assert_eq!(meshes_with::<RenderLayers>(&mut app, e).0, 0, "{way}");
        }

        // Dressed anew (the model reloaded) with it: the new meshes take it.
        app.world_mut().entity_mut(a).insert(NotShadowCaster);
        let old = meshes_below(&mut app, a);
        match gltf {
            false => mark_modified(&mut app, &ped),
            true => mark_modified(&mut app, &humanoid),
        }
        run_until(&mut app, 600, |app| {
            let now = meshes_below(app, a);
            now.len() >= meshes && now.iter().all(|m| !old.contains(m))
        });
        app.update();
        let now = meshes_below(&mut app, a);
        assert!(now.iter().all(|m| !old.contains(m)), "{way}: dressed anew");
        assert_eq!(
            meshes_with::<NotShadowCaster>(&mut app, a),
            (meshes, meshes),
            "{way}: dressed anew with it"
        );
    }
}

/// What [`a_crowd_characters_shadow_and_layer_settings_reach_the_meshes_that_draw_it`] passes
/// on, drawn: a ped drawn by the crowd with `NotShadowCaster`, `NotShadowReceiver` or
/// `RenderLayers` on its character draws as its Bevy twin with the same on its meshes (within
/// the issue's strict bounds), and each makes the difference it should: no shadow on the ground;
/// no shadow of a box above it on the ped; on layer 1, nothing at all in a camera of layer 0
/// (and no shadow: the sun's layer is the default's), while a camera of layers 0 and 1 sees it.
/// Taken off again, or the layers changed in place back to layer 0, the pictures are the first
/// ones to the pixel.
#[test]
fn a_crowd_characters_shadow_and_layer_settings_draw_as_on_bevys_own_meshes() {
    use bevy::camera::visibility::{NoCpuCulling, RenderLayers};
    use bevy::light::{NotShadowCaster, NotShadowReceiver};
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut app = crowd_app(&root);
        let (ped, walk, _) = sample_ped(&app);
        let (eye, looking_at) = (Vec3::new(0.0, 1.2, 3.6), Vec3::new(0.0, 0.8, 0.0));
        let (_, default_layer) = camera(&mut app, eye, looking_at);
        let (both_layers, both_image) = camera(&mut app, eye, looking_at);
        let both = RenderLayers::from_layers(&[0, 1]);
        app.world_mut().entity_mut(both_layers).insert(both);
        let images = [default_layer, both_image];
        sun_and_grounds(&mut app, &[Vec3::ZERO]);
        // A box of 0.3 m toward the sun from the ped's chest, 1.5 m out: its shadow falls on the
        // ped.
        let sun = Vec3::new(2.0, 4.0, 3.0).normalize();
        let cube = (app.world_mut().resource_mut::<Assets<Mesh>>()).add(Cuboid::from_length(0.3));
        let red = (app.world_mut().resource_mut::<Assets<StandardMaterial>>())
            .add(Color::srgb(0.7, 0.2, 0.2));
        app.world_mut().spawn((
            Mesh3d(cube),
            MeshMaterial3d(red),
            Transform::from_translation(Vec3::new(0.0, 1.2, 0.0) + sun * 1.5),
        ));
        let pairs = [spawn_pair(&mut app, &ped, &walk, Transform::IDENTITY, 0.4)];
        let pair = &pairs[0];
        dress_pairs(&mut app, &pairs, PED_PARTS, 2);
        // The twin's three meshes, the ground and the box.
        run_until(&mut app, 300, |app| {
            count::<With<Mesh3d>>(app) >= PED_PARTS + 5
        });
        let twin = meshes_below(&mut app, pair.model);
        assert_eq!(twin.len(), 3, "the twin's meshes");
        // `f` on the crowd character and on each of its twin's meshes.
        let on_both = |app: &mut App, f: &dyn Fn(&mut EntityWorldMut)| {
            for &e in twin.iter().chain([&pair.crowd]) {
                f(&mut app.world_mut().entity_mut(e));
            }
        };
        // Both cameras' pictures of the twin, then of the crowd's ped.
        let both_ways = |app: &mut App| {
            show_pairs(app, &pairs, Some(false));
            let bevys = settled(app, &images);
            show_pairs(app, &pairs, Some(true));
            let crowds = settled(app, &images);
            (bevys, crowds)
        };
        let [empty, bevys, first] = neither_bevys_crowds_in(&mut app, &pairs, &images);
        compare("shadows as they are", true, &bevys[0], &first[0], &empty[0]);
        assert_eq!(difference(&first[0], &first[1]).1, 0, "the cameras agree");

        // No shadow of the ped.
        on_both(&mut app, &|e| {
            e.insert(NotShadowCaster);
        });
        let (bevys, no_caster) = both_ways(&mut app);
        compare("NotShadowCaster", true, &bevys[0], &no_caster[0], &empty[0]);
        let gone = difference(&first[0], &no_caster[0]).2;
        println!("NotShadowCaster: {gone} pixels changed by over 8/255");
        assert!(gone > 300, "the ped's shadow is gone: {gone} pixels");

        // No shadow on the ped.
        on_both(&mut app, &|e| {
            e.insert(NotShadowReceiver);
        });
        let (bevys, no_receiver) = both_ways(&mut app);
        compare(
            "NotShadowReceiver",
            true,
            &bevys[0],
            &no_receiver[0],
            &empty[0],
        );
        let lit = difference(&no_caster[0], &no_receiver[0]).2;
        println!("NotShadowReceiver: {lit} pixels changed by over 8/255");
        assert!(
            lit > 100,
            "the box's shadow on the ped is gone: {lit} pixels"
        );

        // Both taken off: the first picture.
        on_both(&mut app, &|e| {
            e.remove::<(NotShadowCaster, NotShadowReceiver)>();
        });
        let (_, again) = both_ways(&mut app);
        assert_eq!(difference(&first[0], &again[0]).1, 0, "as at first");

        // On layer 1: the camera of layer 0 and the sun do not see the ped; the camera of layers
        // 0 and 1 does, with no shadow.
        on_both(&mut app, &|e| {
            e.insert(RenderLayers::layer(1));
        });
        let (bevys, crowds) = both_ways(&mut app);
        let gpu_culled = count::<(CrowdParts, With<RenderLayers>, With<NoCpuCulling>)>;
        assert_eq!(
            gpu_culled(&mut app),
            PED_PARTS,
            "on layer 1, culled on the GPU"
        );
        for (way, image) in [("Bevy's", &bevys[0]), ("the crowd's", &crowds[0])] {
            assert_eq!(difference(&empty[0], image).1, 0, "{way} ped unseen");
        }
        compare("on layer 1", true, &bevys[1], &crowds[1], &empty[1]);
        let shadowless = difference(&no_caster[1], &crowds[1]);
        assert_eq!(shadowless.1, 0, "as without its shadow: {shadowless:?}");
        // Changed in place back to layer 0: the first pictures.
        *app.world_mut().get_mut::<RenderLayers>(pair.crowd).unwrap() = RenderLayers::layer(0);
        show_pairs(&mut app, &pairs, Some(true));
        let crowds = settled(&mut app, &images);
        for k in 0..2 {
            let d = difference(&first[k], &crowds[k]);
            assert_eq!(d.1, 0, "back on layer 0, camera {k}: {d:?}");
        }
        // Taken off: the first pictures.
        app.world_mut()
            .entity_mut(pair.crowd)
            .remove::<RenderLayers>();
        let crowds = settled(&mut app, &images);
        for k in 0..2 {
            assert_eq!(
                difference(&first[k], &crowds[k]).1,
                0,
                "on no layer of its own"
            );
        }
    });
}

/// One of two apps stepped alike ([`step_alike`]): its cameras (in
/// [`every_camera_and_light_shows_the_crowd_as_its_layers_say`], the first made before the crowd
/// was dressed, the second after) and its ped (`Entity::PLACEHOLDER` where it has none).
struct Views {
    app: App,
    cameras: Vec<(Entity, Handle<Image>)>,
    ped: Entity,
}

impl Views {
    /// The pictures of every camera, once settled.
    fn pictures(&mut self) -> Vec<RgbaImage> {
        let targets: Vec<Handle<Image>> = self.cameras.iter().map(|c| c.1.clone()).collect();
        settled(&mut self.app, &targets)
    }
}

/// Steps two [`Views`] alike (`change` on each, then their pictures): the first culled on the
/// GPU, the second on the CPU. Every camera's picture is the same in both within 1/255 (a
/// failure writes the two, named after `prefix` and `what`); the first's pictures are returned.
fn step_alike(
    scenes: &mut [Views; 2],
    prefix: &str,
    what: &str,
    change: &dyn Fn(&mut Views),
) -> Vec<RgbaImage> {
    let mut pictures = scenes.each_mut().map(|scene| {
        change(scene);
        scene.pictures()
    });
    for (n, (gpu, cpu)) in pictures[0].iter().zip(&pictures[1]).enumerate() {
        let (mean, worst, over) = difference(gpu, cpu);
        let name = format!("{prefix}_{}_{n}", what.replace(' ', "_"));
        let path = write_diff(&name, gpu, cpu);
        println!(
            "{what}, camera {n}: culled on the GPU against the CPU: mean {mean:.4}/255, largest {worst}/255, {over} pixels over 8/255"
        );
        assert!(
            worst <= 1,
            "{what}, camera {n}: {over} pixels apart ({})",
            path.display()
        );
    }
    std::mem::take(&mut pictures[0])
}

/// Every view shows the crowd as its layers say, whenever it was made. Bevy 0.19.1 lists a mesh
/// culled on the GPU (`NoCpuCulling`: the crowd's parts by default) in each view once, as the
/// mesh is first culled there, after the views and layers of that frame; the crowd mends the
/// lists (`crowd_draw::views`). The same scene twice, stepped alike: the crowd's parts culled on
/// the GPU, and on the CPU (`CrowdDrawSettings::cpu_culling`: Bevy's own visibility, which
/// follows every view each frame); at each step every camera's picture is the same in both, and:
///
/// - a camera spawned after the crowd is drawn, where the first camera is, shows the same
///   picture (without the mending: no ped, 8,818 pixels over 8/255 apart from the CPU's);
/// - either camera moved onto layer 1 (where nothing is) shows a blank picture (without the
///   mending, the first camera: the ped alone, 7,625 pixels apart), and back on layer 0 the ped
///   again;
/// - the sun's shadows turned off and on again give the first picture (without: no ped's
///   shadow, 2,049 pixels apart in the first camera);
/// - a point light with shadows spawned later shades the ped's shadow as on the CPU (without:
///   5,726 pixels apart in the first camera);
/// - the first camera made inactive for three frames and active again (Bevy then makes its view
///   anew) shows the same picture as before (without: no ped, 12,111 pixels apart);
/// - the sun hidden and shown again gives the same picture both ways (neither casts the ped's
///   shadow from the sun then: see the step).
#[test]
fn every_camera_and_light_shows_the_crowd_as_its_layers_say() {
    use bevy::camera::visibility::{NoCpuCulling, RenderLayers};
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let (eye, look) = (Vec3::new(0.6, 1.4, 3.2), Vec3::new(0.0, 0.6, 0.0));
        let mut scenes = [false, true].map(|cpu_culling| {
            let mut app = crowd_app(&root);
            app.insert_resource(CrowdDrawSettings {
                cpu_culling,
                ..default()
            });
            let first = camera(&mut app, eye, look);
            sun_and_grounds(&mut app, &[Vec3::ZERO]);
            let (model, walk, _) = sample_ped(&app);
            let mut paused = Playback::looping();
            paused.paused = true;
            paused.time = 0.4;
            let ped = (app.world_mut())
                .spawn((
                    CrowdCharacter::new(GtaGame::Sa, walk),
                    CrowdModel(model),
                    paused,
                    Transform::from_rotation(Quat::from_rotation_y(0.5)),
                ))
                .id();
            run_until(&mut app, 600, |app| count::<CrowdParts>(app) == PED_PARTS);
            assert_eq!(count::<CrowdParts>(&mut app), PED_PARTS, "dressed");
            Views {
                app,
                cameras: vec![first],
                ped,
            }
        });
        let gpu_culled = count::<(CrowdParts, With<NoCpuCulling>)>;
        assert_eq!(
            gpu_culled(&mut scenes[0].app),
            PED_PARTS,
            "culled on the GPU"
        );
        assert_eq!(gpu_culled(&mut scenes[1].app), 0, "culled on the CPU");

        // Steps both scenes alike; every camera's picture in the two within 1/255.
        let mut step = |what: &str, change: &dyn Fn(&mut Views)| {
            step_alike(&mut scenes, "crowd_views", what, change)
        };

        let bare = step("the ped hidden", &|s| show(&mut s.app, s.ped, false));
        let first = step("the ped shown", &|s| show(&mut s.app, s.ped, true));
        let ped_covers = covered(&first[0], &bare[0]);
        assert!(
            ped_covers > 4000,
            "the ped and its shadow: {ped_covers} pixels"
        );

        let two = step("a second camera", &|s| {
            let second = camera(&mut s.app, eye, look);
            s.cameras.push(second);
        });
        assert_eq!(two[0].pixels, first[0].pixels, "the first camera as before");
        assert_eq!(two[1].pixels, first[0].pixels, "the second as the first");

        let blank = |picture: &RgbaImage| picture.pixels.iter().all(|p| *p == picture.pixels[0]);
        for n in [0, 1] {
            let layered = step(&format!("camera {n} on layer 1"), &|s| {
                let camera = s.cameras[n].0;
                (s.app.world_mut().entity_mut(camera)).insert(RenderLayers::layer(1));
            });
            assert!(blank(&layered[n]), "nothing is on layer 1");
            assert_eq!(layered[1 - n].pixels, first[0].pixels, "the other camera");
            let back = step(&format!("camera {n} on layer 0"), &|s| {
                let camera = s.cameras[n].0;
                (s.app.world_mut().entity_mut(camera)).remove::<RenderLayers>();
            });
            assert_eq!(back[n].pixels, first[0].pixels, "the ped again");
        }

        fn sun(s: &mut Views) -> Mut<'_, DirectionalLight> {
            let world = s.app.world_mut();
            let mut suns = world.query::<&mut DirectionalLight>();
            suns.single_mut(world).unwrap()
        }
        let unshadowed = step("the sun's shadows off", &|s| {
            sun(s).shadow_maps_enabled = false
        });
        assert_ne!(unshadowed[0].pixels, first[0].pixels, "shadows gone");
        let shadowed = step("the sun's shadows on again", &|s| {
            sun(s).shadow_maps_enabled = true
        });
        assert_eq!(shadowed[0].pixels, first[0].pixels, "the first picture");
        assert_eq!(shadowed[1].pixels, first[0].pixels, "the first picture");

        let lamp = step("a lamp spawned", &|s| {
            s.app.world_mut().spawn((
                PointLight {
                    shadow_maps_enabled: true,
                    intensity: 400_000.0,
                    ..default()
                },
                Transform::from_xyz(-1.2, 2.2, 0.8),
            ));
        });
        assert!(
            covered(&lamp[0], &first[0]) > 4000,
            "the lamp lights the scene"
        );

        let again = step("the first camera off and on again", &|s| {
            let camera = s.cameras[0].0;
            let active = |s: &mut Views, on: bool| {
                let mut world = s.app.world_mut().entity_mut(camera);
                world.get_mut::<Camera>().unwrap().is_active = on;
            };
            active(s, false);
            for _ in 0..3 {
                s.app.update();
            }
            active(s, true);
        });
        assert_eq!(again[0].pixels, lamp[0].pixels, "the ped again");

        let sun_shown = |s: &mut Views, shown: bool| {
            let world = s.app.world_mut();
            let mut suns = world.query_filtered::<Entity, With<DirectionalLight>>();
            let sun = suns.single(world).unwrap();
            world.entity_mut(sun).insert(match shown {
                true => Visibility::Inherited,
                false => Visibility::Hidden,
            });
        };
        let hidden = step("the sun hidden", &|s| sun_shown(s, false));
        assert_ne!(hidden[0].pixels, lamp[0].pixels, "the sun's light gone");
        // Shown again, the two agree, but neither is the picture before: the ped then casts no
        // shadow from the sun, its parts culled on the CPU too (1,904 pixels over 8/255 off the
        // picture before; the cause is not looked into, nor whether Bevy's own meshes lose
        // theirs). So this step shows no more than that both ways agree.
        let shown = step("the sun shown again", &|s| sun_shown(s, true));
        let (_, _, over) = difference(&shown[0], &lamp[0]);
        println!("the sun shown again: {over} pixels over 8/255 off the picture before");
    });
}

/// The mending of Bevy's lists of meshes culled on the GPU (`crowd_draw::views`) serves the app's
/// own meshes with `NoCpuCulling` too. Two apps with `CrowdDrawPlugin` and no crowd, stepped
/// alike: two cubes, one on layer 0 and one on layer 1, culled on the GPU in the first app and
/// on the CPU in the second (Bevy's own visibility: the reference). At each step every camera's
/// picture is the same in both to the pixel:
///
/// - a camera without `RenderLayers` (layer 0 alone) shows the first cube only (without the
///   mending, Bevy 0.19.1 shows it both: 4,377 pixels over 8/255 apart);
/// - a camera of layers 0 and 1 spawned later shows both (without: neither, 8,754 apart);
/// - the first camera moved onto layer 1 shows the second cube only (without: 4,377 apart).
#[test]
fn the_apps_own_meshes_culled_on_the_gpu_show_as_their_layers_say() {
    use bevy::camera::visibility::{NoCpuCulling, RenderLayers};
    on_gpu(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let (eye, look) = (Vec3::new(0.0, 1.0, 4.0), Vec3::new(0.0, 0.5, 0.0));
        let mut scenes = [true, false].map(|gpu| {
            let mut app = crowd_app(&root);
            let first = camera(&mut app, eye, look);
            app.world_mut().spawn((
                DirectionalLight::default(),
                Transform::from_xyz(1.0, 3.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
            ));
            let cube =
                (app.world_mut().resource_mut::<Assets<Mesh>>()).add(Cuboid::from_length(0.6));
            let white = (app.world_mut().resource_mut::<Assets<StandardMaterial>>())
                .add(StandardMaterial::default());
            for (x, layer) in [(-0.8, 0), (0.8, 1)] {
                let mut e = app.world_mut().spawn((
                    Mesh3d(cube.clone()),
                    MeshMaterial3d(white.clone()),
                    Transform::from_xyz(x, 0.5, 0.0),
                    RenderLayers::layer(layer),
                ));
                if gpu {
                    e.insert(NoCpuCulling);
                }
            }
            Views {
                app,
                cameras: vec![first],
                ped: Entity::PLACEHOLDER,
            }
        });
        let mut step = |what: &str, change: &dyn Fn(&mut Views)| {
            step_alike(&mut scenes, "own_meshes", what, change)
        };
        // Pixels in the picture's left and right halves unlike its first pixel (the clear colour).
        let halves = |p: &RgbaImage| {
            let mut n = [0; 2];
            for (i, px) in p.pixels.iter().enumerate() {
                let x = i % p.width as usize;
                if *px != p.pixels[0] {
                    n[usize::from(x >= p.width as usize / 2)] += 1;
                }
            }
            n
        };
        let one = step("a camera of layer 0", &|_| {});
        let [left, right] = halves(&one[0]);
        println!("a camera of layer 0: {left} pixels left, {right} right");
        assert!(left > 500 && right == 0, "the first cube alone");
        let two = step("a camera of layers 0 and 1 spawned later", &|s| {
            let (second, image) = camera(&mut s.app, eye, look);
            let world = s.app.world_mut();
            world
                .entity_mut(second)
                .insert(RenderLayers::from_layers(&[0, 1]));
            s.cameras.push((second, image));
        });
        let [left, right] = halves(&two[1]);
        assert!(left > 500 && right > 500, "both cubes: {left}, {right}");
        let moved = step("the first camera on layer 1", &|s| {
            let first = s.cameras[0].0;
            s.app
                .world_mut()
                .entity_mut(first)
                .insert(RenderLayers::layer(1));
        });
        let [left, right] = halves(&moved[0]);
        assert!(
            left == 0 && right > 500,
            "the second cube alone: {left}, {right}"
        );
    });
}
