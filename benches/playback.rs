//! Headless frames of many animated characters.
//!
//! * `playback` and `playback, 2 threads`: 1000 SA skeletons (32 bones) at random phases:
//!   rigplay's `Playback` (`rigplay`) against the same scene played through Bevy's
//!   `AnimationPlayer` (`bevy_animation`), and the same scene with nothing playing (`idle`, the
//!   frame's fixed cost), on one thread and on two. Then (one thread) 1000 humanoid glTF-like
//!   characters (Mixamo names, T-pose, random bone axes, an armature node: 30 nodes, 21 of them
//!   mapped) playing the same clip through `Retarget`'s rest-pose compensation, against the same
//!   characters idle. Transform propagation is left out (no `TransformPlugin`): both paths pay it
//!   equally for the transforms they change, and it would hide the cost of animating. ns per bone
//!   per frame = (frame − idle frame) / (1000 × 32). On one thread the schedules run on the
//!   single-threaded executor (no pool thread to wake and wait for). rigplay's bones carry Bevy's
//!   `AnimatedBy` only while their root has an animation graph, so Bevy's `animate_targets`
//!   visits the bones of the `bevy_animation` scenes alone: that visit is in Bevy's per-bone
//!   figure, not in the idle frame (up to 2026-12-07 every bone had it, and the idle frame paid
//!   the visit, about 95 % of that frame).
//! * `layers`: the same 1000 SA skeletons playing 1, 2 and 4 clips at once, rigplay's
//!   `ClipLayers` (`rigplay, N layers`) against Bevy's `AnimationGraph` with the same clips,
//!   weights, mask and additive node (`bevy_animation, N layers`), one thread: 1 layer is the
//!   walk; 2 add the wave as a partial upper-body layer at 0.5 (Bevy: the wave's clip node masks
//!   out the lower body); 4 are the walk (0.6) and the idle (0.4) as full layers fading slowly,
//!   the upper-body wave at 0.5, and the idle again as an additive layer on the left arm at 0.3
//!   (Bevy: an additive blend node with that clip, masked to the left arm).
//! * `crowd growth`: 100, 1,000 and 10,000 walking SA peds on both threads, the whole frame
//!   with transform propagation: as bone entities (`GtaSkeleton` + `Playback`) and on the flat
//!   path (`CrowdCharacter`: no bone entities, model-space matrices per character); and 10,000
//!   on the flat path with `CrowdLod` posing the half farther than 40 m from a viewer at the
//!   grid's centre every other frame (`flat 10000, half at half rate`); and 10,000 on the flat
//!   path wearing the sample DFF ped (`CrowdModel`), their skin matrices computed each frame
//!   (`flat 10000, wearing a ped`); and 10,000 on the flat path with the wave over the upper body
//!   as a partial layer at 0.5 (`ClipLayers`; `flat 10000, an upper-body layer`).
//! * `empty app`: a frame of an app with nothing in it, Bevy's plugins alone (`bevy`) and with
//!   rigplay's IFP and DAN plugins (`with rigplay`), on one thread and two (Bevy's multi-threaded
//!   executor in both): what rigplay's systems cost when they have nothing to do.

use bevy::animation::AnimationPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
#[path = "../tests/assets.rs"]
mod assets;
#[path = "common/app.rs"]
mod common;
#[path = "../tests/humanoid.rs"]
mod humanoid;
#[path = "../tests/rng.rs"]
#[allow(dead_code)]
mod rng;

use assets::sample_files;
use criterion::{Criterion, criterion_group, criterion_main};
use rigplay::plugin::{
    CrowdCharacter, CrowdLod, CrowdViewer, GtaSkeleton, PlayAnimation, Playback, PlayingNode,
    Retarget, RigClip, SkeletalClip,
};
use std::time::Duration;

const CHARACTERS: usize = 1000;

/// How a scene is run: characters, threads, and whether transforms propagate.
#[derive(Clone, Copy)]
struct Run {
    characters: usize,
    threads: usize,
    propagate: bool,
}

const ONE_THREAD: Run = Run {
    characters: CHARACTERS,
    threads: 1,
    propagate: false,
};

#[derive(Clone, Copy, PartialEq)]
enum Driver {
    Idle,
    Playback,
    AnimationPlayer,
    /// Humanoid characters with no clip.
    CharactersIdle,
    /// Humanoid characters playing through `Retarget`.
    Retarget,
    /// `CrowdCharacter`s: no bone entities.
    Crowd,
    /// The same, a viewer at the grid's centre and `CrowdLod` at 40 m: the half of the
    /// characters farther away posed every other frame.
    CrowdLod,
    /// `CrowdCharacter`s wearing the sample DFF ped (`CrowdModel`): their skin matrices too.
    CrowdSkin,
    /// `CrowdCharacter`s walking with the wave over their upper body (`ClipLayers`: one partial
    /// layer at 0.5, masked to the upper body).
    CrowdLayered,
    /// `ClipLayers` with this many layers.
    Layers(usize),
    /// Bevy's `AnimationGraph` with the same layers.
    Graph(usize),
}

/// The clips the layered scenes play.
struct Clips {
    walk: Handle<RigClip>,
    idle: Handle<RigClip>,
    wave: Handle<RigClip>,
}

/// `n` (1, 2 or 4) layers as `ClipLayers` (see the module documentation); 0: the 2-layer
/// scene's partial wave alone, over a crowd character's own walk.
fn layers(clips: &Clips, n: usize, i: usize) -> rigplay::plugin::ClipLayers {
    use rigplay::animation::layers::{BoneMask, Layer, LayerFlags};
    let mut layers = rigplay::plugin::ClipLayers::default();
    let at = |mut l: Layer<Handle<RigClip>>| {
        l.playhead.seek(phase(i));
        l
    };
    let partial = |clip: &Handle<RigClip>, w: f32, mask: BoneMask| {
        at(Layer::new(clip.clone()))
            .with_flags(LayerFlags::PARTIAL)
            .with_mask(mask)
            .with_weight(w)
            .unwrap()
    };
    match n {
        // Over a crowd character's own walk: the wave alone.
        0 => {
            layers.push(partial(&clips.wave, 0.5, BoneMask::UpperBody));
        }
        1 => {
            layers.push(at(Layer::new(clips.walk.clone())));
        }
        2 => {
            layers.push(at(Layer::new(clips.walk.clone())));
            layers.push(partial(&clips.wave, 0.5, BoneMask::UpperBody));
        }
        _ => {
            let walk = layers.push(at(Layer::new(clips.walk.clone())).with_weight(0.6).unwrap());
            let idle = layers.push(at(Layer::new(clips.idle.clone())).with_weight(0.4).unwrap());
            // Fading, slowly enough that the weights stay near the same over a benchmark.
            layers.set_blend_delta(walk, -1e-6);
            layers.set_blend_delta(idle, 1e-6);
            layers.push(partial(&clips.wave, 0.5, BoneMask::UpperBody));
            layers.push(
                at(Layer::new(clips.idle.clone()))
                    .additive(0.0)
                    .with_mask(BoneMask::LeftArm)
                    .with_weight(0.3)
                    .unwrap(),
            );
        }
    }
    layers
}

/// `n` layers as Bevy's `AnimationGraph` (see the module documentation), and its clip nodes.
/// `clips`: the walk, the idle and the wave.
fn graph(
    clips: &[Handle<AnimationClip>; 3],
    n: usize,
) -> (AnimationGraph, Vec<(AnimationNodeIndex, f32)>) {
    let [walk, idle, wave] = clips;
    use rigplay::animation::BoneRef;
    use rigplay::animation::layers::BoneMask;
    let sk = rigplay::skeleton::Skeleton::gta_sa();
    let names: Vec<&str> = sk.bones.iter().map(|b| b.name.as_str()).collect();
    let parents: Vec<Option<usize>> = sk.bones.iter().map(|b| b.parent).collect();
    let upper = BoneMask::UpperBody.resolve(&names, &parents).weights;
    let left_arm = BoneMask::LeftArm.resolve(&names, &parents).weights;
    let mut graph = AnimationGraph::new();
    // Group 0: the lower body; group 1: the upper body but the left arm; group 2: the left arm.
    // (One clip needs no mask: Bevy's player then skips the mask look-ups.)
    for (b, bone) in sk.bones.iter().enumerate().filter(|_| n > 1) {
        let target = rigplay::plugin::bone_target_id(
            &sk,
            &BoneRef {
                name: bone.name.clone(),
                id: bone.id,
            },
        );
        let group = if left_arm[b] == 1.0 {
            2
        } else if upper[b] == 1.0 {
            1
        } else {
            0
        };
        graph.add_target_to_mask_group(target, group);
    }
    let root = graph.root;
    let mut nodes = Vec::new();
    match n {
        1 => nodes.push((graph.add_clip(walk.clone(), 1.0, root), 1.0)),
        2 => {
            nodes.push((graph.add_clip(walk.clone(), 1.0, root), 1.0));
            nodes.push((
                graph.add_clip_with_mask(wave.clone(), 1 << 0, 0.5, root),
                0.5,
            ));
        }
        _ => {
            nodes.push((graph.add_clip(walk.clone(), 0.6, root), 0.6));
            nodes.push((graph.add_clip(idle.clone(), 0.4, root), 0.4));
            nodes.push((
                graph.add_clip_with_mask(wave.clone(), 1 << 0, 0.5, root),
                0.5,
            ));
            let add = graph.add_additive_blend(1.0, root);
            nodes.push((graph.add_clip_with_mask(idle.clone(), 0b011, 0.3, add), 0.3));
        }
    }
    (graph, nodes)
}

/// A humanoid character's node hierarchy under `root`, as a glTF scene spawns it.
fn spawn_character(world: &mut World, root: Entity, c: &humanoid::Character) {
    let mut entities: Vec<Entity> = Vec::with_capacity(c.names.len());
    for (i, name) in c.names.iter().enumerate() {
        let (t, r, s) = c.trs[i];
        let parent = c.parents[i].map_or(root, |p| entities[p]);
        entities.push(
            world
                .spawn((
                    Name::new(name.clone()),
                    Transform {
                        translation: t,
                        rotation: r,
                        scale: s,
                    },
                    ChildOf(parent),
                ))
                .id(),
        );
    }
}

fn phase(i: usize) -> f32 {
    ((i * 7919) % 1000) as f32 / 1000.0 * 1.2
}

fn scene(driver: Driver, run: Run) -> App {
    let mut files = sample_files();
    files.push(("characters/ped.dff", assets::read("characters/ped.dff")));
    let mut app = common::memory_app(files, run.threads);
    app.add_plugins((AnimationPlugin, rigplay::IfpPlugin));
    if driver == Driver::CrowdSkin {
        // What the `.dff` loader's assets need, headless (no rendering).
        app.add_plugins((
            bevy::image::ImagePlugin::default(),
            bevy::mesh::MeshPlugin,
            bevy::world_serialization::WorldSerializationPlugin,
            rigplay::DffPlugin,
        ));
        app.init_asset::<StandardMaterial>();
    }
    if run.propagate {
        app.add_plugins(TransformPlugin);
    }
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        1.0 / 60.0,
    )));
    if run.threads == 1 {
        // One thread means one: systems run in turn on the calling thread, not handed to a
        // pool thread and waited for (whose wake-ups made the frame's fixed cost vary 3×
        // between runs).
        use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
        let labels = [
            First.intern(),
            PreUpdate.intern(),
            Update.intern(),
            PostUpdate.intern(),
            Last.intern(),
        ];
        for label in labels {
            app.edit_schedule(label, |s| {
                s.set_executor(SingleThreadedExecutor::new());
            });
        }
    }
    app.finish();
    app.cleanup();
    let walk = common::load_walk(&mut app);
    let clips = Clips {
        walk: walk.clone(),
        idle: common::load_sa_clip(&mut app, "idle"),
        wave: common::load_sa_clip(&mut app, "wave"),
    };
    let graph = match driver {
        Driver::Graph(n) => {
            // Bevy's graph plays the same clips as Bevy's own `AnimationClip`s.
            let rig_clips = app.world().resource::<Assets<RigClip>>();
            let animation = |h: &Handle<RigClip>| rig_clips.get(h).unwrap().animation.clone();
            let animations = [&clips.walk, &clips.idle, &clips.wave].map(animation);
            let (graph, nodes) = graph(&animations, n);
            let handle = app
                .world_mut()
                .resource_mut::<Assets<AnimationGraph>>()
                .add(graph);
            Some((handle, nodes))
        }
        _ => None,
    };
    let character = humanoid::build(&humanoid::Spec {
        armature: Some((Quat::from_rotation_x(std::f32::consts::FRAC_PI_2), 0.01)),
        ..humanoid::Spec::new(humanoid::Naming::Mixamo("mixamorig:"), humanoid::Arms::T)
    });
    if driver == Driver::CrowdLod {
        // A disc of 40 m about the centre of the 100 × 100 grid holds half of 10,000 characters
        // (π · 40² ≈ 5,027 of them).
        app.insert_resource(CrowdLod {
            half_rate_beyond: Some(40.0),
        });
        app.world_mut()
            .spawn((CrowdViewer, Transform::from_xyz(49.5, 0.0, 49.5)));
    }
    let ped = (driver == Driver::CrowdSkin).then(|| {
        let ped: Handle<rigplay::plugin::Dff> = app
            .world()
            .resource::<AssetServer>()
            .load("characters/ped.dff");
        while !app.world().resource::<AssetServer>().is_loaded(ped.id()) {
            app.update();
        }
        ped
    });
    for i in 0..run.characters {
        let at = Transform::from_xyz((i % 100) as f32, 0.0, (i / 100) as f32);
        if matches!(
            driver,
            Driver::Crowd | Driver::CrowdLod | Driver::CrowdSkin | Driver::CrowdLayered
        ) {
            let mut p = Playback::looping();
            p.seek(phase(i));
            let mut e = app.world_mut().spawn((
                CrowdCharacter::new(rigplay::skeleton::GtaGame::Sa, walk.clone()),
                p,
                at,
            ));
            if driver == Driver::CrowdLayered {
                e.insert(layers(&clips, 0, i));
            }
            if let Some(ped) = &ped {
                e.insert((
                    rigplay::plugin::CrowdModel(ped.clone()),
                    rigplay::plugin::CrowdSkinPose::default(),
                ));
            }
            continue;
        }
        if matches!(driver, Driver::CharactersIdle | Driver::Retarget) {
            let mut p = Playback::looping();
            p.seek(phase(i));
            let world = app.world_mut();
            let mut e = world.spawn((Retarget::new(), at));
            if driver == Driver::Retarget {
                e.insert((SkeletalClip::new(walk.clone()), p));
            }
            let root = e.id();
            spawn_character(world, root, &character);
            continue;
        }
        let mut e = app.world_mut().spawn((GtaSkeleton::SA, at));
        match driver {
            Driver::Idle => {}
            Driver::Playback => {
                let mut p = Playback::looping();
                p.seek(phase(i));
                e.insert((SkeletalClip::new(walk.clone()), p));
            }
            Driver::AnimationPlayer => {
                e.insert(PlayAnimation::looping(walk.clone()));
            }
            Driver::Layers(n) => {
                e.insert(layers(&clips, n, i));
            }
            Driver::Graph(_) => {
                let (handle, nodes) = graph.as_ref().unwrap();
                let mut player = AnimationPlayer::default();
                for &(node, weight) in nodes {
                    player
                        .play(node)
                        .repeat()
                        .set_weight(weight)
                        .seek_to(phase(i));
                }
                e.insert((AnimationGraphHandle(handle.clone()), player));
            }
            Driver::CharactersIdle
            | Driver::Retarget
            | Driver::Crowd
            | Driver::CrowdLod
            | Driver::CrowdSkin
            | Driver::CrowdLayered => {
                unreachable!()
            }
        }
    }
    for _ in 0..3 {
        app.update();
    }
    if driver == Driver::AnimationPlayer {
        let world = app.world_mut();
        let mut q = world.query::<(&PlayingNode, &mut AnimationPlayer)>();
        for (i, (node, mut player)) in q.iter_mut(world).enumerate() {
            player.animation_mut(node.0).unwrap().seek_to(phase(i));
        }
    }
    app
}

fn frames(c: &mut Criterion) {
    for (group, threads) in [("playback", 1), ("playback, 2 threads", 2)] {
        let mut g = c.benchmark_group(group);
        g.sample_size(20);
        let run = Run {
            threads,
            ..ONE_THREAD
        };
        for (name, driver) in [
            ("idle", Driver::Idle),
            ("rigplay", Driver::Playback),
            ("bevy_animation", Driver::AnimationPlayer),
        ] {
            let mut app = scene(driver, run);
            g.bench_function(name, |b| b.iter(|| app.update()));
        }
        if threads == 1 {
            for (name, driver) in [
                ("humanoid characters idle", Driver::CharactersIdle),
                ("humanoid characters, Retarget", Driver::Retarget),
            ] {
                let mut app = scene(driver, run);
                g.bench_function(name, |b| b.iter(|| app.update()));
            }
        }
        g.finish();
    }
    let mut g = c.benchmark_group("layers");
    g.sample_size(20);
    let mut idle = scene(Driver::Idle, ONE_THREAD);
    g.bench_function("idle", |b| b.iter(|| idle.update()));
    drop(idle);
    for n in [1, 2, 4] {
        for (name, driver) in [
            ("rigplay", Driver::Layers(n)),
            ("bevy_animation", Driver::Graph(n)),
        ] {
            let mut app = scene(driver, ONE_THREAD);
            g.bench_function(format!("{name}, {n} layers"), |b| b.iter(|| app.update()));
        }
    }
    g.finish();
}

fn growth(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd growth");
    g.sample_size(10);
    for characters in [100, 1_000, 10_000] {
        let run = Run {
            characters,
            threads: 2,
            propagate: true,
        };
        for (name, driver) in [("bone entities", Driver::Playback), ("flat", Driver::Crowd)] {
            let mut app = scene(driver, run);
            g.bench_function(format!("{name} {characters}"), |b| b.iter(|| app.update()));
        }
    }
    // Half of 10,000 beyond the level-of-detail distance, posed every other frame.
    let mut app = scene(
        Driver::CrowdLod,
        Run {
            characters: 10_000,
            threads: 2,
            propagate: true,
        },
    );
    g.bench_function("flat 10000, half at half rate", |b| b.iter(|| app.update()));
    // The same 10,000 wearing the sample ped: its skin matrices computed too.
    let mut app = scene(
        Driver::CrowdSkin,
        Run {
            characters: 10_000,
            threads: 2,
            propagate: true,
        },
    );
    g.bench_function("flat 10000, wearing a ped", |b| b.iter(|| app.update()));
    // The same 10,000 with the wave over their upper body.
    let mut app = scene(
        Driver::CrowdLayered,
        Run {
            characters: 10_000,
            threads: 2,
            propagate: true,
        },
    );
    g.bench_function("flat 10000, an upper-body layer", |b| {
        b.iter(|| app.update())
    });
    g.finish();
}

/// A frame of an app with nothing in it: Bevy's `MinimalPlugins`, assets, animation and
/// transform propagation, alone and with rigplay's IFP and DAN plugins (playback, the skeletal
/// wing, layers and crowds), on one thread and on two. What rigplay's systems cost a frame when
/// they have nothing to do.
fn empty(c: &mut Criterion) {
    let mut g = c.benchmark_group("empty app");
    g.sample_size(20);
    for threads in [1, 2] {
        for (name, rigplay) in [("bevy", false), ("with rigplay", true)] {
            let mut app = common::memory_app(sample_files(), threads);
            app.add_plugins((AnimationPlugin, TransformPlugin));
            if rigplay {
                app.add_plugins((rigplay::IfpPlugin, rigplay::DanPlugin));
            }
            app.finish();
            app.cleanup();
            for _ in 0..3 {
                app.update();
            }
            g.bench_function(format!("{name}, {threads} threads"), |b| {
                b.iter(|| app.update())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, frames, growth, empty);
criterion_main!(benches);
