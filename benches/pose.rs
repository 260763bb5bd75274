//! The pose pipeline (`rigplay::animation::pose`) for a crowd, against baselines run in the same
//! process.
//!
//! 1000 SA characters × 32 bones: the bundled SA walk (and idle, for blending) bound to
//! `Skeleton::gta_sa()`, each character from its own random phase, advancing 1/60 s per frame
//! (one iteration = one frame of all characters, one thread).
//!
//! * `pose/sample`: one clip sampled per character;
//! * `pose/blend2`: walk and idle sampled, blended 70/30;
//! * `pose/local_to_model`: the blended poses into model-space matrices;
//! * `pose/full`: two samples, the blend and local→model;
//! * `pose/sample_streams`: `pose/sample` with the clip laid out as key streams read into a
//!   per-character cache (`KeyLayout::Streams`, what clips whose channels share no key times
//!   get) instead of on one shared timeline (what the SA clips get);
//! * `pose/sample_real_walk`, `pose/sample_real_partial`: `pose/sample` on clips keyed as real
//!   SA packages are (built here, not from the bundled frame-grid samples): a walk whose 19
//!   bones share 33 key times while 13 have 2 keys, and an upper-body weapon partial whose 16
//!   bones have 17, 19 and 20 keys each (times that do not line up). Which layout each takes
//!   (shared timeline or streams) is printed;
//! * `pose/mix2_partial`, `pose/mix4`: the games' mix (`pose::mix`) of the walk and the partial
//!   at 0.5 over it, and of four layers (two full at 0.6 / 0.4, the partial at 0.5 with an
//!   upper-body mask, an additive layer on the left arm at 0.3), sampling included; `_only`:
//!   the mix alone, each character's poses sampled once; `_hot`: the mix alone on one
//!   character's poses, mixed once per character (in cache, as the bone pass's scratch poses
//!   are);
//! * `pose/baseline_sampler`: `Clip::sample` with a `ClipCursor` for the work of
//!   `pose/sample` (one clip into one `BonePose` per track).
//!
//! `floor/*` is a floor kernel written for this bench from the description in
//! `shared/bench/floor/README.md` ("the least work a pose pipeline can do per joint"): a clip of
//! uniformly spaced keys (31 keys at 30 fps, 32 joints), stored as structure-of-arrays per key,
//! rotations nlerped, translations lerped; and a local→model pass with glam `Affine3A` over a
//! parents array. It has no cursors, no uneven keys, no scale and no exact slerp: a floor, not a
//! peer. Per-joint cost = median / 32 000.
//!
//! After criterion's groups, the same workloads are timed once more in rotation, one frame of
//! each after the other for 1500 rounds (`RIGPLAY_POSE_ROUNDS`), and the medians' ratios printed:
//! on a shared machine they move less than ratios of groups measured minutes apart. `--
//! --paired-only` runs only that; `RIGPLAY_POSE_CHARACTERS` changes the 1000 characters.

use criterion::{Criterion, Throughput, criterion_group};
use glam::{Affine3A, Quat, Vec3};
use rigplay::animation::pose::{
    BlendLayer, KeyLayout, LocalPose, PoseClip, PoseCursor, PoseSkeleton, blend, local_to_model,
    sample,
};
use rigplay::animation::{BonePose, Clip, WrapMode, wrap_time};
use rigplay::skeleton::Skeleton;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "common/sa_clips.rs"]
mod sa_clips;
use sa_clips::sa_clip;

/// 1000 characters, or `RIGPLAY_POSE_CHARACTERS` (to see how the costs change once the
/// characters' state fits a core's caches).
fn characters() -> usize {
    std::env::var("RIGPLAY_POSE_CHARACTERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

const STEP: f32 = 1.0 / 60.0;

/// Deterministic phases in [0, 1).
fn phases(seed: u64) -> Vec<f32> {
    let mut x = seed;
    (0..characters())
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// One character: two playing clips, their poses, the blend and the model-space matrices.
struct Character {
    times: [f32; 2],
    cursors: [PoseCursor; 2],
    poses: [LocalPose; 2],
    blended: LocalPose,
    model: Vec<Affine3A>,
}

struct Crowd {
    skeleton: PoseSkeleton,
    clips: [PoseClip; 2],
    characters: Vec<Character>,
}

impl Crowd {
    fn new(walk: &Clip, idle: &Clip) -> Self {
        Self::laid_out(walk, idle, KeyLayout::Auto)
    }

    fn laid_out(walk: &Clip, idle: &Clip, layout: KeyLayout) -> Self {
        let sa = Skeleton::gta_sa();
        let skeleton = sa.pose_skeleton().expect("the SA skeleton is flat");
        let clips =
            [walk, idle].map(|c| PoseClip::with_layout(c, &skeleton, &sa.bind(c).targets, layout));
        let (p0, p1) = (phases(0x2545_F491_4F6C_DD1D), phases(0x9E37_79B9_7F4A_7C15));
        let characters = (0..characters())
            .map(|i| {
                let times = [p0[i] * clips[0].duration(), p1[i] * clips[1].duration()];
                let mut c = Character {
                    times,
                    cursors: [PoseCursor::new(&clips[0]), PoseCursor::new(&clips[1])],
                    poses: [
                        LocalPose::new(skeleton.len()),
                        LocalPose::new(skeleton.len()),
                    ],
                    blended: LocalPose::new(skeleton.len()),
                    model: vec![Affine3A::IDENTITY; skeleton.len()],
                };
                for k in 0..2 {
                    sample(&clips[k], times[k], &mut c.cursors[k], &mut c.poses[k]);
                }
                c
            })
            .collect();
        Crowd {
            skeleton,
            clips,
            characters,
        }
    }

    #[inline]
    fn sample_layer(clips: &[PoseClip; 2], c: &mut Character, k: usize) {
        let clip = &clips[k];
        c.times[k] = wrap_time(c.times[k] + STEP, clip.duration(), WrapMode::Loop);
        sample(clip, c.times[k], &mut c.cursors[k], &mut c.poses[k]);
    }

    #[inline]
    fn blend(skeleton: &PoseSkeleton, c: &mut Character) {
        let [a, b] = &c.poses;
        blend(
            &[
                BlendLayer {
                    pose: a,
                    weight: 0.7,
                    mask: None,
                },
                BlendLayer {
                    pose: b,
                    weight: 0.3,
                    mask: None,
                },
            ],
            skeleton.rest(),
            &mut c.blended,
        );
    }
}

fn pose(c: &mut Criterion) {
    let (walk, idle) = (sa_clip("walk"), sa_clip("idle"));
    let joints = Skeleton::gta_sa().bones.len();
    assert_eq!(joints, 32);
    let mut g = c.benchmark_group("pose");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // One iteration = one 60 Hz frame of 1000 characters × 32 joints.
    g.throughput(Throughput::Elements((characters() * joints) as u64));

    let mut crowd = Crowd::new(&walk, &idle);
    g.bench_function("sample", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                Crowd::sample_layer(&crowd.clips, c, 0);
            }
            black_box(&crowd.characters);
        })
    });
    let mut crowd = Crowd::laid_out(&walk, &idle, KeyLayout::Streams);
    g.bench_function("sample_streams", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                Crowd::sample_layer(&crowd.clips, c, 0);
            }
            black_box(&crowd.characters);
        })
    });
    let mut crowd = Crowd::new(&walk, &idle);
    g.bench_function("blend2", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                Crowd::sample_layer(&crowd.clips, c, 0);
                Crowd::sample_layer(&crowd.clips, c, 1);
                Crowd::blend(&crowd.skeleton, c);
            }
            black_box(&crowd.characters);
        })
    });
    let mut crowd = Crowd::new(&walk, &idle);
    for c in &mut crowd.characters {
        Crowd::blend(&crowd.skeleton, c);
    }
    g.bench_function("local_to_model", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                local_to_model(&crowd.skeleton, &c.blended, &mut c.model);
            }
            black_box(&crowd.characters);
        })
    });
    // The same, on the SA skeleton of a model with a frame of its own (a helper, turned)
    // between `Spine` and `Spine1`: `Spine1` and the 22 joints below it (neck, head, both arms)
    // are composed after the pass in joint order (`PoseSkeleton::with_offsets`).
    let sa = Skeleton::gta_sa();
    let spine1 = (sa.bones.iter())
        .position(|b| b.name.trim() == "Spine1")
        .expect("SA's Spine1");
    let mut offsets = vec![None; joints];
    offsets[spine1] = Some(Affine3A::from_rotation_translation(
        glam::Quat::from_rotation_x(0.1),
        glam::Vec3::new(0.01, 0.0, 0.0),
    ));
    let parents: Vec<Option<usize>> = sa.bones.iter().map(|b| b.parent).collect();
    let helped = PoseSkeleton::with_offsets(&parents, &sa.rest_pose(), &offsets)
        .expect("the SA skeleton with an offset");
    g.bench_function("local_to_model_offset_spine1", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                local_to_model(&helped, &c.blended, &mut c.model);
            }
            black_box(&crowd.characters);
        })
    });
    let mut crowd = Crowd::new(&walk, &idle);
    g.bench_function("full", |b| {
        b.iter(|| {
            for c in &mut crowd.characters {
                Crowd::sample_layer(&crowd.clips, c, 0);
                Crowd::sample_layer(&crowd.clips, c, 1);
                Crowd::blend(&crowd.skeleton, c);
                local_to_model(&crowd.skeleton, &c.blended, &mut c.model);
            }
            black_box(&crowd.characters);
        })
    });
    real_packages(&mut g);
    g.bench_function("baseline_sampler", |b| {
        let duration = walk.duration();
        let mut times: Vec<f32> = phases(0x2545_F491_4F6C_DD1D)
            .iter()
            .map(|p| p * duration)
            .collect();
        let mut cursors: Vec<_> = (0..characters()).map(|_| walk.cursor()).collect();
        let tracks = walk.tracks().len();
        let mut poses = vec![BonePose::default(); characters() * tracks];
        b.iter(|| {
            for ((t, cursor), pose) in times
                .iter_mut()
                .zip(&mut cursors)
                .zip(poses.chunks_exact_mut(tracks))
            {
                *t = wrap_time(*t + STEP, duration, WrapMode::Loop);
                walk.sample(*t, cursor, pose);
            }
            black_box(&poses);
        })
    });
    g.finish();
}

/// A clip keyed as a real package: per track (joint, key count), `n` keys evenly over 1.2 s
/// turning about an axis of the joint's own, plus translations on the root.
fn real_clip(name: &str, tracks: &[(usize, usize)], skeleton: &Skeleton) -> Clip {
    use rigplay::animation::{BoneRef, BoneTrack, ClipBuilder};
    let mut b = ClipBuilder::new(name);
    for &(joint, n) in tracks {
        let times: Vec<f32> = (0..n).map(|k| 1.2 * k as f32 / (n - 1) as f32).collect();
        let axis = Vec3::new(1.0, joint as f32 * 0.37, 0.5).normalize();
        let rotations: Vec<Quat> = times
            .iter()
            .map(|t| Quat::from_axis_angle(axis, (t * 3.0 + joint as f32).sin() * 0.6))
            .collect();
        let times = b.times(&times).unwrap();
        let rotation = Some(b.rotations(times, &rotations).unwrap());
        let translation = (joint == 0).then(|| {
            let v: Vec<Vec3> = (0..n)
                .map(|k| Vec3::new(0.0, k as f32 * 0.05, 1.0))
                .collect();
            b.translations(times, &v).unwrap()
        });
        let bone = &skeleton.bones[joint];
        b.track(BoneTrack {
            bone: BoneRef {
                name: bone.name.clone(),
                id: bone.id,
            },
            rotation,
            translation,
            scale: None,
        });
    }
    b.build()
}

/// The sampling and mixing of clips keyed as real packages (see the module documentation).
fn real_packages(g: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>) {
    use rigplay::animation::layers::BoneMask;
    use rigplay::animation::pose::{MixLayer, TranslationRule, mix};
    let sa = Skeleton::gta_sa();
    let skeleton = sa.pose_skeleton().expect("flat");
    let names: Vec<&str> = sa.bones.iter().map(|b| b.name.as_str()).collect();
    let parents: Vec<Option<usize>> = sa.bones.iter().map(|b| b.parent).collect();
    let upper = BoneMask::UpperBody.resolve(&names, &parents).weights;
    let left_arm = BoneMask::LeftArm.resolve(&names, &parents).weights;
    let walk_tracks: Vec<(usize, usize)> =
        (0..32).map(|j| (j, if j < 19 { 33 } else { 2 })).collect();
    let partial_tracks: Vec<(usize, usize)> = (0..32)
        .filter(|&j| upper[j] == 1.0)
        .take(16)
        .enumerate()
        .map(|(k, j)| (j, [17, 19, 20][k % 3]))
        .collect();
    let walk = real_clip("walk", &walk_tracks, &sa);
    let partial = real_clip("partial", &partial_tracks, &sa);
    let lay = |c: &Clip| PoseClip::new(c, &skeleton, &sa.bind(c).targets);
    let (walk_l, partial_l, idle_l) = (lay(&walk), lay(&partial), lay(&sa_clip("idle")));
    for (name, l) in [("real walk", &walk_l), ("real partial", &partial_l)] {
        match l.timeline_keys() {
            Some(k) => eprintln!("pose: {name}: a shared timeline of {k} key times"),
            None => eprintln!("pose: {name}: key streams"),
        }
    }
    let n = characters();
    let ph = phases(0x2545_F491_4F6C_DD1D);
    struct Layered {
        t: f32,
        cursors: [PoseCursor; 4],
        poses: [LocalPose; 4],
        out: LocalPose,
    }
    let fresh = || -> Vec<Layered> {
        (0..n)
            .map(|i| Layered {
                t: ph[i] * 1.2,
                cursors: std::array::from_fn(|_| PoseCursor::default()),
                poses: std::array::from_fn(|_| LocalPose::new(32)),
                out: LocalPose::new(0),
            })
            .collect()
    };
    for (name, clip) in [
        ("sample_real_walk", &walk_l),
        ("sample_real_partial", &partial_l),
    ] {
        let mut crowd = fresh();
        g.bench_function(name, |b| {
            b.iter(|| {
                for c in &mut crowd {
                    c.t = wrap_time(c.t + STEP, clip.duration(), WrapMode::Loop);
                    sample(clip, c.t, &mut c.cursors[0], &mut c.poses[0]);
                }
                black_box(&crowd);
            })
        });
    }
    let mut reference = LocalPose::new(32);
    sample(&idle_l, 0.0, &mut PoseCursor::new(&idle_l), &mut reference);
    for (name, count, only, hot) in [
        ("mix2_partial", 2, false, false),
        ("mix4", 4, false, false),
        ("mix2_partial_only", 2, true, false),
        ("mix4_only", 4, true, false),
        ("mix2_partial_hot", 2, true, true),
        ("mix4_hot", 4, true, true),
    ] {
        let mut crowd = fresh();
        let clips: [&PoseClip; 4] = if count == 2 {
            [&walk_l, &partial_l, &walk_l, &walk_l]
        } else {
            [&walk_l, &idle_l, &partial_l, &idle_l]
        };
        if hot {
            // `_hot`: one character's poses mixed as many times as there are characters: the
            // poses stay in cache, as the bone pass's scratch poses do, so only the mix's own
            // work is timed.
            let first = crowd.len().min(1);
            crowd.truncate(first);
        }
        g.bench_function(name, |b| {
            b.iter(|| {
                for i in 0..n {
                    let c = &mut crowd[if hot { 0 } else { i }];
                    c.t = wrap_time(c.t + STEP, 1.2, WrapMode::Loop);
                    // `_only`: the poses sampled once, the mix alone timed.
                    if !only || c.out.is_empty() {
                        for (k, clip) in clips.iter().enumerate().take(count) {
                            let t = c.t.min(clip.duration());
                            sample(clip, t, &mut c.cursors[k], &mut c.poses[k]);
                        }
                    }
                    let layer = |k: usize, w: f32| MixLayer {
                        pose: &c.poses[k],
                        keyed: clips[k].keyed(),
                        weight: w,
                        partial: false,
                        mask: None,
                        additive: None,
                    };
                    let layers = if count == 2 {
                        [
                            layer(0, 1.0),
                            MixLayer {
                                partial: true,
                                ..layer(1, 0.5)
                            },
                            layer(0, 0.0),
                            layer(0, 0.0),
                        ]
                    } else {
                        [
                            layer(0, 0.6),
                            layer(1, 0.4),
                            MixLayer {
                                partial: true,
                                mask: Some(&upper),
                                ..layer(2, 0.5)
                            },
                            MixLayer {
                                mask: Some(&left_arm),
                                additive: Some(&reference),
                                ..layer(3, 0.3)
                            },
                        ]
                    };
                    mix(
                        &layers[..count],
                        skeleton.rest(),
                        TranslationRule::Absolute,
                        &mut c.out,
                    );
                }
                black_box(&crowd);
            })
        });
    }
}

/// The floor kernel's clip: `keys` uniformly spaced keys for `joints` joints, key-major
/// structure-of-arrays (all joints' x of key 0, then of key 1, …).
struct FloorClip {
    joints: usize,
    keys: usize,
    rate: f32,
    rot: [Vec<f32>; 4],
    pos: [Vec<f32>; 3],
}

/// The floor kernel's local pose, structure-of-arrays.
#[derive(Clone)]
struct FloorPose {
    rot: [Vec<f32>; 4],
    pos: [Vec<f32>; 3],
}

impl FloorClip {
    fn new(joints: usize, keys: usize, rate: f32) -> Self {
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut rot: [Vec<f32>; 4] = Default::default();
        let mut pos: [Vec<f32>; 3] = Default::default();
        for _ in 0..joints * keys {
            let q = Quat::from_euler(glam::EulerRot::XYZ, rnd(), rnd(), rnd());
            for (c, v) in rot.iter_mut().zip(q.to_array()) {
                c.push(v);
            }
            for c in pos.iter_mut() {
                c.push(rnd());
            }
        }
        FloorClip {
            joints,
            keys,
            rate,
            rot,
            pos,
        }
    }

    fn duration(&self) -> f32 {
        (self.keys - 1) as f32 / self.rate
    }
}

/// Uniform keys: the key index from the time, then nlerp (shortest way) and lerp per joint.
#[inline(never)]
fn floor_sample(c: &FloorClip, t: f32, out: &mut FloorPose) {
    let f = t * c.rate;
    let k = (f as usize).min(c.keys - 2);
    let a = f - k as f32;
    let n = c.joints;
    let (i0, i1) = (k * n, (k + 1) * n);
    let [x, y, z, w] = &c.rot;
    let (x0, x1) = (&x[i0..i0 + n], &x[i1..i1 + n]);
    let (y0, y1) = (&y[i0..i0 + n], &y[i1..i1 + n]);
    let (z0, z1) = (&z[i0..i0 + n], &z[i1..i1 + n]);
    let (w0, w1) = (&w[i0..i0 + n], &w[i1..i1 + n]);
    let [ox, oy, oz, ow] = &mut out.rot;
    for j in 0..n {
        let d = x0[j] * x1[j] + y0[j] * y1[j] + z0[j] * z1[j] + w0[j] * w1[j];
        let s = if d < 0.0 { -1.0 } else { 1.0 };
        let qx = x0[j] + (x1[j] * s - x0[j]) * a;
        let qy = y0[j] + (y1[j] * s - y0[j]) * a;
        let qz = z0[j] + (z1[j] * s - z0[j]) * a;
        let qw = w0[j] + (w1[j] * s - w0[j]) * a;
        let inv = 1.0 / (qx * qx + qy * qy + qz * qz + qw * qw).sqrt();
        ox[j] = qx * inv;
        oy[j] = qy * inv;
        oz[j] = qz * inv;
        ow[j] = qw * inv;
    }
    for (o, v) in out.pos.iter_mut().zip(&c.pos) {
        let (v0, v1) = (&v[i0..i0 + n], &v[i1..i1 + n]);
        for j in 0..n {
            o[j] = v0[j] + (v1[j] - v0[j]) * a;
        }
    }
}

/// Each joint's local matrix, times its parent's model matrix.
#[inline(never)]
fn floor_local_to_model(p: &FloorPose, parents: &[i16], out: &mut [Affine3A]) {
    for (j, &parent) in parents.iter().enumerate() {
        let local = Affine3A::from_rotation_translation(
            Quat::from_xyzw(p.rot[0][j], p.rot[1][j], p.rot[2][j], p.rot[3][j]),
            Vec3::new(p.pos[0][j], p.pos[1][j], p.pos[2][j]),
        );
        out[j] = if parent < 0 {
            local
        } else {
            out[parent as usize] * local
        };
    }
}

fn floor(c: &mut Criterion) {
    let sa = Skeleton::gta_sa().pose_skeleton().expect("flat");
    let joints = sa.len();
    let clip = FloorClip::new(joints, 31, 30.0);
    let duration = clip.duration();
    let empty = FloorPose {
        rot: std::array::from_fn(|_| vec![0.0; joints]),
        pos: std::array::from_fn(|_| vec![0.0; joints]),
    };
    let mut g = c.benchmark_group("floor");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements((characters() * joints) as u64));
    let mut times: Vec<f32> = phases(0x2545_F491_4F6C_DD1D)
        .iter()
        .map(|p| p * duration)
        .collect();
    let mut poses = vec![empty; characters()];
    g.bench_function("sample f32", |b| {
        b.iter(|| {
            for (t, pose) in times.iter_mut().zip(&mut poses) {
                *t = wrap_time(*t + STEP, duration, WrapMode::Loop);
                floor_sample(&clip, *t, pose);
            }
            black_box(&poses);
        })
    });
    let mut models = vec![vec![Affine3A::IDENTITY; joints]; characters()];
    g.bench_function("local->model", |b| {
        b.iter(|| {
            for (pose, model) in poses.iter().zip(&mut models) {
                floor_local_to_model(pose, sa.parents(), model);
            }
            black_box(&models);
        })
    });
    g.finish();
}

/// The same frames timed in rotation, one frame of each workload after the other, so that all
/// of them see the same machine: the medians over the rounds give ratios that the noise of a
/// shared machine moves less than those of criterion's groups, which run minutes apart.
fn paired() {
    let (walk, idle) = (sa_clip("walk"), sa_clip("idle"));
    let n = characters();
    let sa = Skeleton::gta_sa().pose_skeleton().expect("flat");
    let joints = sa.len();
    let floor_clip = FloorClip::new(joints, 31, 30.0);
    let floor_duration = floor_clip.duration();
    let mut floor_times: Vec<f32> = phases(0x2545_F491_4F6C_DD1D)
        .iter()
        .map(|p| p * floor_duration)
        .collect();
    let mut floor_poses = vec![
        FloorPose {
            rot: std::array::from_fn(|_| vec![0.0; joints]),
            pos: std::array::from_fn(|_| vec![0.0; joints]),
        };
        n
    ];
    let mut floor_models = vec![vec![Affine3A::IDENTITY; joints]; n];
    let mut sample_crowd = Crowd::new(&walk, &idle);
    let mut blend_crowd = Crowd::new(&walk, &idle);
    let mut l2m_crowd = Crowd::new(&walk, &idle);
    for c in &mut l2m_crowd.characters {
        Crowd::blend(&l2m_crowd.skeleton, c);
    }
    let mut full_crowd = Crowd::new(&walk, &idle);
    let mut streams_crowd = Crowd::laid_out(&walk, &idle, KeyLayout::Streams);
    let names = [
        "floor/sample f32",
        "floor/local->model",
        "pose/sample",
        "pose/blend2",
        "pose/local_to_model",
        "pose/full",
        "pose/sample_streams",
    ];
    let rounds: usize = std::env::var("RIGPLAY_POSE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let mut ns: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); names.len()];
    for _ in 0..rounds {
        for (w, times) in ns.iter_mut().enumerate() {
            let start = Instant::now();
            match w {
                0 => {
                    for (t, pose) in floor_times.iter_mut().zip(&mut floor_poses) {
                        *t = wrap_time(*t + STEP, floor_duration, WrapMode::Loop);
                        floor_sample(&floor_clip, *t, pose);
                    }
                }
                1 => {
                    for (pose, model) in floor_poses.iter().zip(&mut floor_models) {
                        floor_local_to_model(pose, sa.parents(), model);
                    }
                }
                2 => {
                    for c in &mut sample_crowd.characters {
                        Crowd::sample_layer(&sample_crowd.clips, c, 0);
                    }
                }
                3 => {
                    for c in &mut blend_crowd.characters {
                        Crowd::sample_layer(&blend_crowd.clips, c, 0);
                        Crowd::sample_layer(&blend_crowd.clips, c, 1);
                        Crowd::blend(&blend_crowd.skeleton, c);
                    }
                }
                4 => {
                    for c in &mut l2m_crowd.characters {
                        local_to_model(&l2m_crowd.skeleton, &c.blended, &mut c.model);
                    }
                }
                6 => {
                    for c in &mut streams_crowd.characters {
                        Crowd::sample_layer(&streams_crowd.clips, c, 0);
                    }
                }
                _ => {
                    for c in &mut full_crowd.characters {
                        Crowd::sample_layer(&full_crowd.clips, c, 0);
                        Crowd::sample_layer(&full_crowd.clips, c, 1);
                        Crowd::blend(&full_crowd.skeleton, c);
                        local_to_model(&full_crowd.skeleton, &c.blended, &mut c.model);
                    }
                }
            }
            times.push(start.elapsed().as_nanos() as f64 / (n * joints) as f64);
        }
    }
    black_box((
        &floor_models,
        &sample_crowd.characters,
        &blend_crowd.characters,
    ));
    black_box((&l2m_crowd.characters, &full_crowd.characters));
    black_box(&streams_crowd.characters);
    let median: Vec<f64> = ns
        .iter_mut()
        .map(|v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect();
    println!("paired medians over {rounds} rounds, {n} characters × {joints} joints (ns/joint):");
    for (name, m) in names.iter().zip(&median) {
        println!("  {name:22} {m:6.2}");
    }
    let (fs, fl) = (median[0], median[1]);
    println!(
        "  pose/sample ÷ floor sample f32 = {:.2} (target ≤ 1.2)",
        median[2] / fs
    );
    println!(
        "  pose/full ÷ (floor sample f32 + floor local->model) = {:.2} (target ≤ 1.6)",
        median[5] / (fs + fl)
    );
    println!(
        "  pose/local_to_model ÷ floor local->model = {:.2}",
        median[4] / fl
    );
    println!(
        "  pose/sample_streams ÷ floor sample f32 = {:.2}",
        median[6] / fs
    );
}

criterion_group!(benches, pose, floor);

fn main() {
    // `--paired-only` (after `--`) skips criterion's groups; `RIGPLAY_PAIRED=0` in the
    // environment skips the paired rounds (for a profile of one group).
    if !std::env::args().any(|a| a == "--paired-only") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if std::env::var("RIGPLAY_PAIRED").as_deref() != Ok("0") {
        paired();
    }
}
