//! Keyframe reduction: kept keys on hand-made channels, and the error bound on random rigs,
//! measured here independently of the library (glam `Mat4` composition, six shell points).

use crate::rng::Rng;
use glam::{EulerRot, Mat4, Quat, Vec3};
use rigplay::animation::reduce::*;
use rigplay::animation::*;
use rigplay::skeleton::Skeleton;

const R: f32 = DEFAULT_SHELL_RADIUS;

/// Rounding allowance between the library's error (differences of `Affine3A`s) and the one
/// computed here (differences of points moved by `Mat4`s): a few ulps of metre-sized values.
const SLACK: f32 = 2e-6;

fn bone(name: &str) -> BoneRef {
    BoneRef {
        name: name.into(),
        id: None,
    }
}

fn empty_track(name: &str) -> BoneTrack {
    BoneTrack {
        bone: bone(name),
        rotation: None,
        translation: None,
        scale: None,
    }
}

fn pose_matrix(p: BonePose) -> Mat4 {
    Mat4::from_scale_rotation_translation(p.scale, p.rotation, p.translation)
}

/// Object-space matrices of every rig bone at `t`, composed recursively (the rig is acyclic and
/// every track has a bone).
fn object_matrices(clip: &Clip, rig: &ReduceRig, t: f32) -> Vec<Mat4> {
    let n = rig.parents.len();
    let mut local: Vec<Mat4> = (0..n).map(|b| pose_matrix(rig.rest[b])).collect();
    for (k, b) in rig.track_bone.iter().enumerate() {
        let b = b.expect("test rigs drive a bone with every track");
        let s = clip.sample_track(k, t);
        let mut p = rig.rest[b];
        p.rotation = s.rotation.unwrap_or(p.rotation);
        p.translation = s.translation.unwrap_or(p.translation);
        p.scale = s.scale.unwrap_or(p.scale);
        local[b] = pose_matrix(p);
    }
    fn object(b: usize, rig: &ReduceRig, local: &[Mat4], memo: &mut [Option<Mat4>]) -> Mat4 {
        if let Some(m) = memo[b] {
            return m;
        }
        let m = match rig.parents[b] {
            Some(p) => object(p, rig, local, memo) * local[b],
            None => local[b],
        };
        memo[b] = Some(m);
        m
    }
    let mut memo = vec![None; n];
    (0..n).map(|b| object(b, rig, &local, &mut memo)).collect()
}

/// Every key time of the clip.
fn key_times(clip: &Clip) -> Vec<f32> {
    let mut times: Vec<f32> = clip
        .tracks()
        .iter()
        .flat_map(|t| [t.rotation, t.translation, t.scale])
        .flatten()
        .flat_map(|c| clip.times(c).to_vec())
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}

/// Per bone, the largest distance between the six shell points moved by the original and by
/// the reduced object matrices, over every original key time.
fn bone_errors(original: &Clip, reduced: &Clip, rig: &ReduceRig, r: f32) -> Vec<f32> {
    let points = [
        Vec3::X * r,
        -Vec3::X * r,
        Vec3::Y * r,
        -Vec3::Y * r,
        Vec3::Z * r,
        -Vec3::Z * r,
    ];
    let mut errors = vec![0.0f32; rig.parents.len()];
    for t in key_times(original) {
        let a = object_matrices(original, rig, t);
        let b = object_matrices(reduced, rig, t);
        for (bone, (a, b)) in a.iter().zip(&b).enumerate() {
            for p in points {
                let d = (a.transform_point3(p) - b.transform_point3(p)).length();
                errors[bone] = errors[bone].max(d);
            }
        }
    }
    errors
}

fn max_error(original: &Clip, reduced: &Clip, rig: &ReduceRig) -> f32 {
    bone_errors(original, reduced, rig, R)
        .into_iter()
        .fold(0.0, f32::max)
}

/// The kept keys are increasing original indices with both ends, shared times stay shared and
/// the rebuilt channels hold exactly the original keys at those indices.
fn check_kept(original: &Clip, reduced: &Reduced) {
    let clip = &reduced.clip;
    assert_eq!(clip.name, original.name);
    assert_eq!(clip.duration(), original.duration());
    assert_eq!(clip.tracks().len(), original.tracks().len());
    assert_eq!(reduced.kept.len(), original.tracks().len());
    for ((o, r), kept) in original
        .tracks()
        .iter()
        .zip(clip.tracks())
        .zip(&reduced.kept)
    {
        assert_eq!(o.bone, r.bone);
        let kinds = [
            (o.rotation, r.rotation, &kept.rotation),
            (o.translation, r.translation, &kept.translation),
            (o.scale, r.scale, &kept.scale),
        ];
        for (k, &(oc, rc, idx)) in kinds.iter().enumerate() {
            let (Some(oc), Some(rc)) = (oc, rc) else {
                assert!(oc.is_none() && rc.is_none() && idx.is_empty());
                continue;
            };
            let n = oc.len();
            assert_eq!(idx.len(), rc.len());
            assert_eq!(idx.first(), Some(&0));
            assert_eq!(idx.last(), Some(&(n as u32 - 1)));
            assert!(idx.windows(2).all(|w| w[0] < w[1]));
            assert!(rc.len() == n.min(2) || rc.len() > 2);
            let ot = original.times(oc);
            let want: Vec<f32> = idx.iter().map(|&i| ot[i as usize]).collect();
            assert_eq!(clip.times(rc), &want[..]);
            if k == 0 {
                let ov = original.rotation_values(oc);
                for (&i, q) in idx.iter().zip(clip.rotation_values(rc)) {
                    let o = ov[i as usize];
                    assert!(*q == o || *q == -o, "rotation key {i}: {q} vs {o}");
                }
            } else {
                let ov = original.vector_values(oc);
                let want: Vec<Vec3> = idx.iter().map(|&i| ov[i as usize]).collect();
                assert_eq!(clip.vector_values(rc), &want[..]);
            }
            // Channels that shared their times in the original still do.
            for &(oc2, rc2, idx2) in &kinds[k + 1..] {
                if let (Some(oc2), Some(rc2)) = (oc2, rc2)
                    && std::ptr::eq(original.times(oc).as_ptr(), original.times(oc2).as_ptr())
                {
                    assert_eq!(idx, idx2);
                    assert!(std::ptr::eq(
                        clip.times(rc).as_ptr(),
                        clip.times(rc2).as_ptr()
                    ));
                }
            }
        }
    }
    assert_eq!(reduced.stats.keys_before, original.key_count());
    assert_eq!(reduced.stats.keys_after, clip.key_count());
}

fn times_at(b: &mut ClipBuilder, n: usize, hz: f32) -> Times {
    let t: Vec<f32> = (0..n).map(|k| k as f32 / hz).collect();
    b.times(&t).unwrap()
}

#[test]
fn constant_channels_keep_two_keys_and_one_key_channels_one() {
    let mut b = ClipBuilder::new("still");
    let mut t = empty_track("Root");
    let rt = times_at(&mut b, 12, 30.0);
    t.rotation = Some(b.rotations(rt, &[Quat::from_rotation_x(0.7); 12]).unwrap());
    let tt = times_at(&mut b, 7, 10.0);
    t.translation = Some(b.translations(tt, &[Vec3::new(0.1, 0.2, 0.3); 7]).unwrap());
    let st = b.times(&[0.25]).unwrap();
    t.scale = Some(b.scales(st, &[Vec3::new(1.0, 2.0, 3.0)]).unwrap());
    b.track(t);
    let clip = b.build();
    let rig = ReduceRig::flat(&clip);
    for reduced in [
        reduce_constant_runs(&clip),
        reduce(&clip, &rig, &ReduceOptions::default()),
        reduce(
            &clip,
            &rig,
            &ReduceOptions {
                tolerance: f32::INFINITY,
                ..Default::default()
            },
        ),
    ] {
        check_kept(&clip, &reduced);
        let k = &reduced.kept[0];
        assert_eq!(k.rotation, [0, 11]);
        assert_eq!(k.translation, [0, 6]);
        assert_eq!(k.scale, [0]);
        assert_eq!(reduced.stats.keys_after, 5);
        assert!(max_error(&clip, &reduced.clip, &rig) <= 1e-6);
    }
}

#[test]
fn constant_runs_keep_their_ends_and_shared_channels_keep_either_channels_keys() {
    let (a, bb, c, d) = (
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.0, 0.5, 0.0),
        Vec3::new(0.0, 0.5, 2.0),
        Vec3::new(0.0, 0.0, 2.0),
    );
    let values = [a, a, a, bb, c, c, c, c, d];
    let (q0, q1) = (Quat::IDENTITY, Quat::from_rotation_y(0.3));
    let rotations = [q0, q0, q0, q0, q0, q1, q1, q1, q1];

    // Translation alone: runs 0–2 (A), 3 (B), 4–7 (C), 8 (D).
    let mut b = ClipBuilder::new("runs");
    let times = times_at(&mut b, 9, 30.0);
    let mut t = empty_track("alone");
    t.translation = Some(b.translations(times, &values).unwrap());
    b.track(t);
    // The same translation sharing its times with a rotation whose runs are 0–4 and 5–8: a key
    // stays if either channel needs it.
    let times = times_at(&mut b, 9, 30.0);
    let mut t = empty_track("shared");
    t.translation = Some(b.translations(times, &values).unwrap());
    t.rotation = Some(b.rotations(times, &rotations).unwrap());
    b.track(t);
    let clip = b.build();

    let reduced = reduce_constant_runs(&clip);
    check_kept(&clip, &reduced);
    assert_eq!(reduced.kept[0].translation, [0, 2, 3, 4, 7, 8]);
    // Rotation alone would keep 0, 4, 5, 8; with the translation's 0, 2, 3, 4, 7, 8:
    assert_eq!(reduced.kept[1].translation, [0, 2, 3, 4, 5, 7, 8]);
    assert_eq!(reduced.kept[1].rotation, reduced.kept[1].translation);
    // Lossless but for the sampler's rounding of lerp(a, a, u).
    assert!(reduced.stats.error.max <= 1e-6, "{:?}", reduced.stats);
    assert!(max_error(&clip, &reduced.clip, &ReduceRig::flat(&clip)) <= 1e-6);
}

#[test]
fn a_linear_translation_keeps_its_ends() {
    let mut b = ClipBuilder::new("line");
    let times = times_at(&mut b, 25, 30.0);
    let (start, step) = (Vec3::new(-1.0, 0.5, 0.25), Vec3::new(0.04, -0.01, 0.02));
    let values: Vec<Vec3> = (0..25).map(|k| start + step * k as f32).collect();
    let mut t = empty_track("Root");
    t.translation = Some(b.translations(times, &values).unwrap());
    b.track(t);
    let clip = b.build();
    let rig = ReduceRig::flat(&clip);
    let reduced = reduce(
        &clip,
        &rig,
        &ReduceOptions {
            tolerance: 1e-5,
            ..Default::default()
        },
    );
    check_kept(&clip, &reduced);
    assert_eq!(reduced.kept[0].translation, [0, 24]);
    // Keys and lerp agree up to rounding (values ≈ 1 m: ulp ≈ 1.2e-7).
    assert!(reduced.stats.error.max < 1e-6, "{:?}", reduced.stats);
    assert!(max_error(&clip, &reduced.clip, &rig) < 1e-6);
    // 25 key times × 1 bone.
    assert_eq!(reduced.stats.error.samples, 25);
}

/// A turn about Z at constant speed, a key every 10°, up to `degrees`.
fn turn(degrees: u32) -> Clip {
    let n = (degrees / 10 + 1) as usize;
    let mut b = ClipBuilder::new("turn");
    let times = times_at(&mut b, n, 30.0);
    let values: Vec<Quat> = (0..n)
        .map(|k| Quat::from_rotation_z((10.0 * k as f32).to_radians()))
        .collect();
    let mut t = empty_track("Root");
    t.rotation = Some(b.rotations(times, &values).unwrap());
    b.track(t);
    b.build()
}

#[test]
fn a_constant_speed_turn_keeps_one_key_per_half_turn() {
    let options = ReduceOptions {
        tolerance: 1e-5,
        ..Default::default()
    };
    // 170°: slerp between the ends is the motion itself.
    let clip = turn(170);
    let rig = ReduceRig::flat(&clip);
    let reduced = reduce(&clip, &rig, &options);
    check_kept(&clip, &reduced);
    assert_eq!(reduced.kept[0].rotation, [0, 17]);
    assert!(max_error(&clip, &reduced.clip, &rig) < 1e-6);

    // 340°: slerp between the ends would turn 20° the short way round, so a key near the half
    // turn stays (170° or 180°, where the quaternions are orthogonal and rounding decides), and
    // each kept segment turns at most 180°.
    let clip = turn(340);
    let rig = ReduceRig::flat(&clip);
    let reduced = reduce(&clip, &rig, &options);
    check_kept(&clip, &reduced);
    let kept = &reduced.kept[0].rotation;
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(kept[1] == 17 || kept[1] == 18, "{kept:?}");
    assert!(kept.windows(2).all(|w| (w[1] - w[0]) * 10 <= 180));
    assert!(max_error(&clip, &reduced.clip, &rig) < 1e-6);
    assert!(reduced.stats.error.max <= options.tolerance);
}

/// Shapes the error of a whole clip: a 1° turn about Z moves the shell points on X and Y along a
/// chord of 2·r·sin(0.5°) = 2 × 0.03 × 0.00872654 = 0.000523592 m; those on Z stay.
#[test]
fn measured_errors_match_the_geometry() {
    let one_bone = |rotation: Quat, scale: Vec3| {
        let mut b = ClipBuilder::new("one");
        let times = b.times(&[0.0, 1.0]).unwrap();
        let mut t = empty_track("Root");
        t.rotation = Some(b.rotations(times, &[rotation; 2]).unwrap());
        t.scale = Some(b.scales(times, &[scale; 2]).unwrap());
        b.track(t);
        b.build()
    };
    let still = one_bone(Quat::IDENTITY, Vec3::ONE);
    let turned = one_bone(Quat::from_rotation_z(1f32.to_radians()), Vec3::ONE);
    let flat = ReduceRig::flat(&still);
    let e = measure_error(&still, &turned, &flat, 0.03);
    let chord = 2.0 * 0.03 * 0.5f32.to_radians().sin();
    assert!((chord - 0.000_523_592).abs() < 1e-9);
    assert!((e.max - chord).abs() < 1e-8, "{e:?}");
    assert_eq!(e.p99, e.max);
    // 1 bone × 2 key times.
    assert_eq!(e.samples, 2);

    // A child resting 1 m along the parent's X: its point at (1.03, 0, 0) swings on a radius
    // of 1.03 m: 2 × 1.03 × sin(0.5°) = 2.06 × 0.00872654 = 0.0179767 m.
    let chain = ReduceRig {
        parents: vec![None, Some(0)],
        rest: vec![
            BonePose::default(),
            BonePose {
                translation: Vec3::X,
                ..Default::default()
            },
        ],
        track_bone: vec![Some(0)],
    };
    let e = measure_error(&still, &turned, &chain, 0.03);
    assert!((e.max - 0.017_976_7).abs() < 1e-6, "{e:?}");
    // 2 bones × 2 key times; the nearest rank of 99 % of 4 samples is the 4th.
    assert_eq!((e.samples, e.p99), (4, e.max));
    assert!((bone_errors(&still, &turned, &chain, 0.03)[1] - e.max).abs() < SLACK);

    // Scaling by 1.1 moves each point at r by 0.1 × 0.03 = 0.003 m.
    let grown = one_bone(Quat::IDENTITY, Vec3::splat(1.1));
    let e = measure_error(&still, &grown, &flat, 0.03);
    assert!((e.max - 0.003).abs() < 1e-7, "{e:?}");
    // The radius scales rotation and scale errors: at 1 m, 1.1× moves points by 0.1 m.
    let e = measure_error(&still, &grown, &flat, 1.0);
    assert!((e.max - 0.1).abs() < 1e-6, "{e:?}");
}

/// `count` keys at `hz` of three sines of random frequency and phase, with small noise; a
/// quarter of the keys repeat the previous one (holds).
fn wave(rng: &mut Rng, count: usize, hz: f32, amplitude: f32) -> Vec<[f32; 3]> {
    let f: [f32; 3] = std::array::from_fn(|_| rng.range(0.5, 4.0));
    let phase: [f32; 3] = std::array::from_fn(|_| rng.range(0.0, 6.0));
    let mut out: Vec<[f32; 3]> = Vec::with_capacity(count);
    for k in 0..count {
        let t = k as f32 / hz;
        if k > 0 && rng.below(4) == 0 {
            out.push(out[k - 1]);
            continue;
        }
        out.push(std::array::from_fn(|i| {
            amplitude * (f[i] * t + phase[i]).sin() + rng.range(-1e-4, 1e-4)
        }));
    }
    out
}

/// A random chain of `bones` bones, listed in a shuffled index order, with rotation,
/// translation and non-uniform scale: IFP-like tracks (rotation and translation on shared
/// times) or DAN-like ones (each channel on its own times). Motion mixes sines of random
/// frequency, holds and small noise.
fn random_chain(rng: &mut Rng, bones: usize) -> (Clip, ReduceRig) {
    let mut order: Vec<usize> = (0..bones).collect();
    for i in (1..bones).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut parents = vec![None; bones];
    let mut rest = vec![BonePose::default(); bones];
    for i in 0..bones {
        parents[order[i]] = i.checked_sub(1).map(|p| order[p]);
        rest[order[i]] = BonePose {
            rotation: Quat::from_rotation_y(rng.range(-0.5, 0.5)),
            translation: Vec3::new(rng.range(0.2, 0.6), rng.range(-0.05, 0.05), 0.0),
            scale: Vec3::ONE,
        };
    }
    let mut b = ClipBuilder::new(format!("random{bones}"));
    let mut track_bone = Vec::new();
    for &bone_index in &order {
        let mut track = empty_track(&format!("bone{bone_index}"));
        let ifp_like = rng.below(2) == 0;
        let n = 30 + rng.below(40);
        let rt = times_at(&mut b, n, 30.0);
        let (tn, tt) = if ifp_like {
            (n, rt)
        } else {
            let m = 10 + rng.below(20);
            (m, times_at(&mut b, m, 15.0))
        };
        let rotations: Vec<Quat> = wave(rng, n, 30.0, 0.8)
            .into_iter()
            .map(|[x, y, z]| Quat::from_euler(EulerRot::ZXY, z, x, y))
            .collect();
        let offset = rest[bone_index].translation;
        let translations: Vec<Vec3> = wave(rng, tn, if ifp_like { 30.0 } else { 15.0 }, 0.05)
            .into_iter()
            .map(|v| offset + Vec3::from(v))
            .collect();
        track.rotation = Some(b.rotations(rt, &rotations).unwrap());
        track.translation = Some(b.translations(tt, &translations).unwrap());
        if rng.below(3) > 0 {
            let sn = 5 + rng.below(20);
            let st = times_at(&mut b, sn, 10.0);
            let scales: Vec<Vec3> = wave(rng, sn, 10.0, 0.15)
                .into_iter()
                .map(|v| Vec3::ONE + Vec3::from(v))
                .collect();
            track.scale = Some(b.scales(st, &scales).unwrap());
        }
        b.track(track);
        track_bone.push(Some(bone_index));
    }
    (
        b.build(),
        ReduceRig {
            parents,
            rest,
            track_bone,
        },
    )
}

#[test]
fn random_chains_stay_within_tolerance() {
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let bones = 3 + rng.below(3);
        let (clip, rig) = random_chain(&mut rng, bones);
        for tolerance in [1e-4, 1e-3, 1e-2] {
            let options = ReduceOptions {
                tolerance,
                ..Default::default()
            };
            let reduced = reduce(&clip, &rig, &options);
            check_kept(&clip, &reduced);
            let errors = bone_errors(&clip, &reduced.clip, &rig, R);
            let max = errors.iter().copied().fold(0.0, f32::max);
            eprintln!(
                "seed {seed}, {bones} bones, tolerance {tolerance}: {} → {} keys, \
                 error {:?}, here {errors:?}",
                reduced.stats.keys_before, reduced.stats.keys_after, reduced.stats.error
            );
            assert!(max <= tolerance + SLACK, "seed {seed}: {errors:?}");
            assert!(reduced.stats.error.max <= tolerance);
            assert!((reduced.stats.error.max - max).abs() <= SLACK);
            assert_eq!(reduced.stats.error.samples, bones * key_times(&clip).len());
            assert!(
                reduced.stats.keys_after < reduced.stats.keys_before,
                "seed {seed}: nothing removed"
            );
        }
    }
}

/// A 10-bone chain, bones 1 m apart, only the root animated: its rotation wiggles by up to
/// ±0.003° about two axes around a fixed turn. A rotation error of 0.003° moves the root's
/// shell points by 2 × 0.03 × sin(0.0015°) = 1.6e-6 m, far below the 0.1 mm tolerance, but the
/// tip's (9.03 m from the root) by 2 × 9.03 × sin(0.0015°) = 4.7e-4 m, nearly five times it.
#[test]
fn a_parents_small_error_is_bounded_at_its_far_descendants() {
    let bones = 10;
    let mut rng = Rng(77);
    let mut b = ClipBuilder::new("wiggle");
    let n = 60;
    let times = times_at(&mut b, n, 30.0);
    let base = Quat::from_rotation_x(0.3);
    let values: Vec<Quat> = (0..n)
        .map(|_| {
            base * Quat::from_rotation_z(rng.range(-0.003, 0.003).to_radians())
                * Quat::from_rotation_y(rng.range(-0.003, 0.003).to_radians())
        })
        .collect();
    let mut t = empty_track("Root");
    t.rotation = Some(b.rotations(times, &values).unwrap());
    b.track(t);
    let clip = b.build();
    let chain = ReduceRig {
        parents: (0..bones).map(|i: usize| i.checked_sub(1)).collect(),
        rest: (0..bones)
            .map(|i| BonePose {
                translation: if i == 0 { Vec3::ZERO } else { Vec3::X },
                ..Default::default()
            })
            .collect(),
        track_bone: vec![Some(0)],
    };
    let options = ReduceOptions::default();

    // Measured on the root alone, the wiggle is noise: two keys are enough…
    let alone = reduce(&clip, &ReduceRig::flat(&clip), &options);
    assert_eq!(alone.kept[0].rotation, [0, n as u32 - 1]);
    assert!(alone.stats.error.max < 1e-5, "{:?}", alone.stats);
    // …but they would move the tip by far more than the tolerance.
    let tip = bone_errors(&clip, &alone.clip, &chain, R)[bones - 1];
    assert!(tip > 2.0 * options.tolerance, "tip error {tip}");

    // Measured through the chain, every bone stays within tolerance.
    let reduced = reduce(&clip, &chain, &options);
    check_kept(&clip, &reduced);
    let errors = bone_errors(&clip, &reduced.clip, &chain, R);
    eprintln!(
        "{} → {} keys, errors {errors:?}",
        reduced.stats.keys_before, reduced.stats.keys_after
    );
    assert!(errors.iter().all(|&e| e <= options.tolerance + SLACK));
    assert!(reduced.stats.error.max <= options.tolerance);
    assert!(reduced.kept[0].rotation.len() > 2);
    // The tip's error is the largest: errors grow down the chain.
    assert_eq!(
        errors[bones - 1],
        errors.iter().copied().fold(0.0, f32::max)
    );
}

#[test]
fn empty_clips_single_keys_and_zero_tolerance() {
    // No tracks at all.
    let empty = ClipBuilder::new("empty").build();
    for reduced in [
        reduce_constant_runs(&empty),
        reduce(&empty, &ReduceRig::flat(&empty), &ReduceOptions::default()),
    ] {
        assert_eq!(reduced.clip, empty);
        assert!(reduced.kept.is_empty());
        assert_eq!(reduced.stats, ReduceStats::default());
    }

    // One key per channel, two tracks at the same time.
    let mut b = ClipBuilder::new("pose");
    for name in ["a", "b"] {
        let times = b.times(&[0.5]).unwrap();
        let mut t = empty_track(name);
        t.rotation = Some(b.rotations(times, &[Quat::from_rotation_x(1.0)]).unwrap());
        t.translation = Some(b.translations(times, &[Vec3::Y]).unwrap());
        b.track(t);
    }
    let pose = b.build();
    let reduced = reduce(&pose, &ReduceRig::flat(&pose), &ReduceOptions::default());
    check_kept(&pose, &reduced);
    assert_eq!(reduced.clip, pose);
    assert_eq!(reduced.stats.error.samples, 2);

    // Zero tolerance (and what reads as zero) removes only keys whose removal changes nothing
    // at any key time: the exact constant rotation run here.
    let mut rng = Rng(5);
    let (clip, rig) = random_chain(&mut rng, 4);
    for tolerance in [0.0, -1.0, f32::NAN] {
        let options = ReduceOptions {
            tolerance,
            shell_radius: R,
        };
        let reduced = reduce(&clip, &rig, &options);
        check_kept(&clip, &reduced);
        assert_eq!(reduced.stats.error.max, 0.0, "{:?}", reduced.stats);
        assert!(max_error(&clip, &reduced.clip, &rig) <= SLACK);
        assert!(reduced.stats.keys_after <= reduced.stats.keys_before);
    }

    // A constant translation run of awkward values: the sampler's a + (b − a)·u gives the value
    // back exactly, so zero tolerance keeps only its ends, and the runs rule is lossless.
    let mut b = ClipBuilder::new("still");
    let times = b.times(&[0.0, 0.1, 0.2, 0.3, 0.4]).unwrap();
    let mut t = empty_track("still");
    t.translation = Some(
        b.translations(times, &[Vec3::new(0.1, -7.3, 1e-3); 5])
            .unwrap(),
    );
    b.track(t);
    let still = b.build();
    let zero = ReduceOptions {
        tolerance: 0.0,
        shell_radius: R,
    };
    for reduced in [
        reduce(&still, &ReduceRig::flat(&still), &zero),
        reduce_constant_runs(&still),
    ] {
        assert_eq!(reduced.kept[0].translation, [0, 4]);
        for k in 0..40 {
            let t = k as f32 * 0.01;
            assert_eq!(
                reduced.clip.sample_track(0, t).translation,
                still.sample_track(0, t).translation,
                "at {t}"
            );
        }
    }
}

#[test]
fn malformed_rigs_are_measured_without_panicking() {
    let mut rng = Rng(11);
    let (clip, _) = random_chain(&mut rng, 4);
    let options = ReduceOptions::default();
    for rig in [
        // A cycle, a self-parent, an out-of-range parent, no rest poses.
        ReduceRig {
            parents: vec![Some(1), Some(2), Some(0), Some(3), Some(42)],
            rest: vec![],
            track_bone: vec![Some(0), Some(1), Some(2), Some(4)],
        },
        // Two tracks on one bone, a track out of range, fewer bone entries than tracks.
        ReduceRig {
            parents: vec![None, Some(0)],
            rest: vec![BonePose::default(); 2],
            track_bone: vec![Some(1), Some(1), Some(9)],
        },
        // No bones at all.
        ReduceRig {
            parents: vec![],
            rest: vec![],
            track_bone: vec![],
        },
    ] {
        let reduced = reduce(&clip, &rig, &options);
        check_kept(&clip, &reduced);
        assert!(reduced.stats.error.max <= options.tolerance);
        assert!(reduced.stats.keys_after < reduced.stats.keys_before);
        let again = measure_error(&clip, &reduced.clip, &rig, R);
        assert_eq!(again, reduced.stats.error);
    }
    // A shell radius that is not finite reads as the default.
    let odd = ReduceOptions {
        shell_radius: f32::NAN,
        ..options
    };
    let flat = ReduceRig::flat(&clip);
    assert_eq!(reduce(&clip, &flat, &odd), reduce(&clip, &flat, &options));
}

#[test]
fn skeleton_rigs_bind_by_name_and_add_unknown_tracks_as_roots() {
    let skeleton = Skeleton::gta_iii();
    let mut rng = Rng(3);
    let (random, _) = random_chain(&mut rng, 5);
    // Rename the random tracks to a III chain, an unknown bone and a duplicate.
    let names = ["Swaist", "Smid", "Storso", "Tail", "swaist"];
    let mut b = ClipBuilder::new("iii");
    for (track, name) in random.tracks().iter().zip(names) {
        let mut t = empty_track(name);
        if let Some(c) = track.rotation {
            let times = b.times(random.times(c)).unwrap();
            t.rotation = Some(b.rotations(times, random.rotation_values(c)).unwrap());
        }
        if let Some(c) = track.scale {
            let times = b.times(random.times(c)).unwrap();
            t.scale = Some(b.scales(times, random.vector_values(c)).unwrap());
        }
        b.track(t);
    }
    let clip = b.build();
    let rig = ReduceRig::from_skeleton(&skeleton, &clip);
    let n = skeleton.bones.len();
    assert_eq!(rig.parents.len(), n + 2);
    assert_eq!(rig.parents[n..], [None, None]);
    assert_eq!(rig.track_bone[..3], [Some(0), Some(1), Some(2)]);
    assert_eq!(rig.track_bone[3..], [Some(n), Some(n + 1)]);

    let options = ReduceOptions {
        tolerance: 5e-4,
        ..Default::default()
    };
    let reduced = reduce(&clip, &rig, &options);
    check_kept(&clip, &reduced);
    let errors = bone_errors(&clip, &reduced.clip, &rig, R);
    assert!(
        errors.iter().all(|&e| e <= options.tolerance + SLACK),
        "{errors:?}"
    );
    assert!(reduced.stats.keys_after < reduced.stats.keys_before);
    // The hands hang below the torso: they are measured too (all 16 bones are animated).
    assert_eq!(
        reduced.stats.error.samples,
        (n + 2) * key_times(&clip).len()
    );
}

/// The bundled sample clips (smooth procedural motion keyed at 30 Hz, rotation and root
/// translation sharing IFP keys; the committed `sa_ped.ifp`, so within ANP3's int16
/// quantisation) on the SA skeleton: fewer keys, every bone within the default 0.1 mm. The
/// wave's forearm swings ±25° twice a second: a chord between keys 1/30 s apart strays from it
/// by about A·ω²·h²/8 = 0.44 × (4π)² × (1/30)² / 8 = 9.6e-3 rad, which moves the hand's points
/// 0.28 m away by far more than 0.1 mm, so its keys stay; its still upper arm and clavicle keep
/// two keys each.
#[test]
fn the_sample_clips_reduce_within_tolerance_on_the_sa_skeleton() {
    use rigplay::formats::ifp::IfpFile;
    let skeleton = Skeleton::gta_sa();
    let package = IfpFile::read(&crate::assets::read("anims/sa_ped.ifp"))
        .expect("the committed SA sample reads")
        .file;
    let options = ReduceOptions::default();
    let (mut before, mut after) = (0, 0);
    for ifp in package.clips() {
        let clip = ifp.to_clip();
        let rig = ReduceRig::from_skeleton(&skeleton, &clip);
        assert_eq!(rig.parents.len(), skeleton.bones.len(), "every track binds");
        let reduced = reduce(&clip, &rig, &options);
        check_kept(&clip, &reduced);
        let max = max_error(&clip, &reduced.clip, &rig);
        eprintln!(
            "{}: {} → {} keys, error {:?}, here {max}",
            clip.name, reduced.stats.keys_before, reduced.stats.keys_after, reduced.stats.error
        );
        assert!(max <= options.tolerance + SLACK);
        assert!(reduced.stats.error.max <= options.tolerance);
        assert!(reduced.stats.keys_after < reduced.stats.keys_before);
        before += reduced.stats.keys_before;
        after += reduced.stats.keys_after;
    }
    assert!(after * 3 < before, "{before} → {after} keys");
}

/// Found by the DAN fuzzer: keys exactly 180° apart as rotations (dot product 0) can be slerped
/// either way. The way must not depend on the sign earlier keys gave the first of them, or a
/// reduced clip (whose kept keys can get other signs) turns the other way round between two
/// neighbours it kept. Here the first key is stored as `p` in one clip and `−p` in the other.
#[test]
fn keys_half_a_turn_apart_turn_the_same_way_whatever_the_first_keys_sign() {
    // p: 340° about Z, (0, 0, sin 170°, cos 170°); q = p ⊗ (180° about X) = (cos 170°,
    // sin 170°, 0, 0), whose dot product with p is exactly 0.
    let (s, c) = 170f32.to_radians().sin_cos();
    let p = Quat::from_xyzw(0.0, 0.0, s, c);
    let q = Quat::from_xyzw(c, s, 0.0, 0.0);
    assert_eq!(p.dot(q), 0.0);
    let clip = |first: Quat| {
        let mut b = ClipBuilder::new("tie");
        let times = b.times(&[0.0, 1.0]).unwrap();
        let mut t = empty_track("tie");
        t.rotation = Some(b.rotations(times, &[first, q]).unwrap());
        b.track(t);
        b.build()
    };
    let (a, b) = (clip(p), clip(-p));
    // Building a clip from a clip's own keys stores them unchanged (aligning is idempotent).
    let c = a.tracks()[0].rotation.unwrap();
    let again = clip(a.rotation_values(c)[0]);
    assert_eq!(
        again.rotation_values(again.tracks()[0].rotation.unwrap()),
        a.rotation_values(c)
    );
    for k in 0..=10 {
        let t = k as f32 / 10.0;
        let (x, y) = (
            a.sample_track(0, t).rotation.unwrap(),
            b.sample_track(0, t).rotation.unwrap(),
        );
        assert!(
            x.abs_diff_eq(y, 1e-6) || x.abs_diff_eq(-y, 1e-6),
            "at {t}: {x} vs {y}"
        );
    }
}

/// Found in review: the kept indices refer to the clip's key order, so an IFP sequence must be
/// put in that order before picking. Times 0.0 and −0.0 compare equal there (file order kept);
/// a total order would swap them and pick the wrong keys. An empty sequence before it, which
/// makes no track, must not shift the tracks either.
#[test]
fn ifp_keys_kept_by_the_runs_rule_leave_the_pose_unchanged() {
    use rigplay::formats::ifp::{IfpClip, IfpKey, IfpSequence};
    let key = |time: f32, x: f32| IfpKey {
        time,
        translation: [x, 0.0, 0.0],
        ..IfpKey::default()
    };
    let mut seq = IfpSequence::new(
        "Root",
        0,
        vec![key(0.0, 5.0), key(-0.0, 1.0), key(0.5, 1.0), key(1.0, 1.0)],
    );
    seq.has_translation = true;
    let mut clip = IfpClip {
        name: "c".into(),
        sequences: vec![IfpSequence::new("Empty", 1, vec![]), seq],
        flags: 0,
        info_unknown: 0,
    };
    let before = clip.to_clip();
    let runs = reduce_constant_runs(&before);
    clip.keep_keys(&runs.kept);
    let after = clip.to_clip();
    assert!(after.key_count() < before.key_count());
    for k in 0..=20 {
        let t = k as f32 / 20.0;
        assert_eq!(
            after.sample_track(0, t).translation,
            before.sample_track(0, t).translation,
            "at {t}"
        );
    }
}
