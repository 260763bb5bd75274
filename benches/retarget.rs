//! Retargeting SA clips onto humanoid characters in the core (`rigplay::animation::retarget`), for
//! 1000 characters, one thread, beside the sampling it follows (run in the same process).
//!
//! Every character plays the bundled SA walk from its own phase, sampled on the SA skeleton by
//! the pose pipeline, and retargets it onto a Mixamo-named humanoid with an `Armature` node
//! (`tests/humanoid.rs`: random rest rotations on every joint, extra unmapped bones), as a
//! `Retarget` character does each frame. One iteration = one 60 Hz frame of all of them.
//!
//! * `retarget/sample`: the source sampled, nothing retargeted (the baseline);
//! * `retarget/sample+apply_pose`: sampled, copied into a `(translation, rotation)` slice and
//!   retargeted with `Retargeter::apply_pose` (every target bone written);
//! * `retarget/sample+retarget`: sampled and retargeted straight from the pose
//!   (`Retargeter::retarget` reading the sampled pose; only the mapped bones written), one
//!   retargeter shared by every character;
//! * `retarget/sample+retarget, own retargeter`: the same with a retargeter per character;
//! * `retarget/retargeted clip`: the clip retargeted once (`Retargeter::retarget_clip`, what a
//!   `Retarget` character plays now) and sampled on the character's own skeleton, every node
//!   of it (mapped or not), as the pose pipeline samples any clip;
//! * `retarget/retarget_clip`: that retargeting, done once per clip and rig (not per frame).
//!
//! Per mapped bone = (median − `retarget/sample`'s) / (1000 × mapped pairs).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use rigplay::animation::BonePose;
use rigplay::animation::pose::{LocalPose, PoseClip, PoseCursor, PoseSkeleton, sample};
use rigplay::animation::retarget::{BoneMap, HumanoidBone, RestPose, Retargeter};
use rigplay::animation::{WrapMode, wrap_time};
use rigplay::skeleton::Skeleton;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/humanoid.rs"]
mod humanoid;
#[path = "../tests/rng.rs"]
#[allow(dead_code)]
mod rng;
#[path = "common/sa_clips.rs"]
mod sa_clips;

const CHARACTERS: usize = 1000;
const STEP: f32 = 1.0 / 60.0;

struct Character {
    time: f32,
    cursor: PoseCursor,
    sampled: LocalPose,
    source_pose: Vec<(Vec3, Quat)>,
    out: Vec<Quat>,
    own: Option<Retargeter>,
}

struct Scene {
    clip: PoseClip,
    /// The walk retargeted onto the character, laid out for its skeleton.
    retargeted: PoseClip,
    /// What building `retargeted` reads.
    bake: Box<dyn Fn() -> PoseClip>,
    retargeter: Retargeter,
    characters: Vec<Character>,
    pairs: usize,
}

impl Scene {
    fn new(own: bool) -> Self {
        let sa = Skeleton::gta_sa();
        let walk = sa_clips::sa_clip("walk");
        let skeleton = sa.pose_skeleton().expect("the SA skeleton is flat");
        let clip = PoseClip::new(&walk, &skeleton, &sa.bind(&walk).targets);
        let source = sa.retarget_source(&walk);
        let character = humanoid::build(&humanoid::Spec {
            armature: Some((Quat::from_rotation_x(std::f32::consts::FRAC_PI_2), 0.01)),
            ..humanoid::Spec::new(humanoid::Naming::Mixamo("mixamorig:"), humanoid::Arms::T)
        });
        let names: Vec<&str> = character.names.iter().map(String::as_str).collect();
        let (_, target_map) = BoneMap::detect(&names);
        let (_, source_map) = source.bone_map();
        let pairs = source_map.pairs(&target_map);
        let (target_rest, _) =
            RestPose::from_trs(character.parents.clone(), &character.trs).expect("a tree");
        let retargeter = Retargeter::new(&source.rest, &target_rest, &pairs, source.to_gltf)
            .expect("both rests are trees")
            .with_hips(
                source_map.get(HumanoidBone::Hips).expect("SA has hips"),
                character
                    .node(HumanoidBone::Hips)
                    .expect("so has the humanoid"),
                Vec3::Y,
            );
        let rest: Vec<Quat> = character.trs.iter().map(|t| t.1).collect();
        let bake = {
            let (retargeter, source, walk) = (retargeter.clone(), source.clone(), walk.clone());
            let hips = character
                .node(HumanoidBone::Hips)
                .expect("the humanoid has hips");
            let world = character.world(&character.trs);
            let parent_inverse = character.parents[hips]
                .map_or(glam::Affine3A::IDENTITY, |p| world[p])
                .inverse();
            let rests: Vec<BonePose> = character
                .trs
                .iter()
                .map(|&(translation, rotation, scale)| BonePose {
                    translation,
                    rotation,
                    scale,
                })
                .collect();
            // Flat, as the plugin lays clips out (the bone pass writes local transforms).
            let target = PoseSkeleton::new(&vec![None; rests.len()], &rests).expect("flat");
            Box::new(move || {
                let baked = retargeter.retarget_clip(
                    &walk,
                    &source.tracks,
                    |p| parent_inverse.transform_point3(p),
                    1e-4,
                );
                PoseClip::new(&baked.clip, &target, &baked.targets)
            })
        };
        let retargeted = bake();
        let characters = (0..CHARACTERS)
            .map(|i| Character {
                time: ((i * 7919) % 1000) as f32 / 1000.0 * clip.duration(),
                cursor: PoseCursor::new(&clip),
                sampled: LocalPose::new(skeleton.len()),
                source_pose: source.rest.local.clone(),
                out: rest.clone(),
                own: own.then(|| retargeter.clone()),
            })
            .collect();
        Scene {
            clip,
            retargeted,
            bake,
            retargeter,
            characters,
            pairs: pairs.len(),
        }
    }
}

#[inline]
fn step(clip: &PoseClip, c: &mut Character) {
    c.time = wrap_time(c.time + STEP, clip.duration(), WrapMode::Loop);
    sample(clip, c.time, &mut c.cursor, &mut c.sampled);
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("retarget");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut scene = Scene::new(false);
    println!(
        "{} mapped pairs per character, {CHARACTERS} characters",
        scene.pairs
    );
    g.throughput(Throughput::Elements((CHARACTERS * scene.pairs) as u64));
    g.bench_function("sample", |b| {
        b.iter(|| {
            for c in &mut scene.characters {
                step(&scene.clip, c);
            }
            black_box(&scene.characters);
        })
    });
    g.bench_function("sample+apply_pose", |b| {
        b.iter(|| {
            for c in &mut scene.characters {
                step(&scene.clip, c);
                let sampled = c.sampled.reader();
                for (b, s) in c.source_pose.iter_mut().enumerate() {
                    if let Some(p) = sampled.get(b) {
                        *s = (p.translation, p.rotation);
                    }
                }
                black_box(scene.retargeter.apply_pose(&c.source_pose, &mut c.out));
            }
            black_box(&scene.characters);
        })
    });
    g.bench_function("sample+retarget", |b| {
        b.iter(|| {
            for c in &mut scene.characters {
                step(&scene.clip, c);
                let sampled = c.sampled.reader();
                black_box(scene.retargeter.retarget(
                    |b| sampled.get(b).map(|p| (p.translation, p.rotation)),
                    &mut c.out,
                ));
            }
            black_box(&scene.characters);
        })
    });
    // Each character's own cache and pose for the retargeted clip (on the target's bones).
    let mut on_target: Vec<(f32, PoseCursor, LocalPose)> = scene
        .characters
        .iter()
        .map(|c| {
            let clip = &scene.retargeted;
            (c.time, PoseCursor::new(clip), LocalPose::new(clip.len()))
        })
        .collect();
    g.bench_function("retargeted clip", |b| {
        b.iter(|| {
            let clip = &scene.retargeted;
            for (time, cursor, pose) in &mut on_target {
                *time = wrap_time(*time + STEP, clip.duration(), WrapMode::Loop);
                sample(clip, *time, cursor, pose);
            }
            black_box(&on_target);
        })
    });
    g.throughput(Throughput::Elements(scene.pairs as u64));
    g.bench_function("retarget_clip", |b| b.iter(|| black_box((scene.bake)())));
    g.throughput(Throughput::Elements((CHARACTERS * scene.pairs) as u64));
    let mut scene = Scene::new(true);
    g.bench_function("sample+retarget, own retargeter", |b| {
        b.iter(|| {
            for c in &mut scene.characters {
                step(&scene.clip, c);
                let sampled = c.sampled.reader();
                let retargeter = c.own.as_ref().expect("each has its own");
                black_box(retargeter.retarget(
                    |b| sampled.get(b).map(|p| (p.translation, p.rotation)),
                    &mut c.out,
                ));
            }
            black_box(&scene.characters);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
