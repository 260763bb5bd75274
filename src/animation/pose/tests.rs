//! Internals of the pose pipeline; the pipeline against the reference code is tested in
//! `tests/pose.rs`.

use super::*;
use crate::animation::{BoneRef, BoneTrack, ClipBuilder};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    fn quat(&mut self) -> Quat {
        loop {
            let v = Vec4::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if v.length() > 0.1 && v.length() < 1.0 {
                return Quat::from_vec4(v.normalize());
            }
        }
    }
}

#[test]
fn sinc_polynomials_hold_their_bound_up_to_their_angles() {
    // Each polynomial's truncation error (its terms summed in f64) at the largest angle it is
    // chosen for, and its f32 evaluation over the whole range.
    let coefficients = [1.0, -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362_880.0];
    let coefficients = [coefficients.as_slice(), &[-1.0 / 39_916_800.0]].concat();
    for (terms, largest) in [
        (2, 0.24f32),
        (3, 0.58),
        (4, 1.04),
        (5, std::f32::consts::FRAC_PI_2),
    ] {
        assert_eq!(
            SincTerms::for_angle(largest),
            [
                SincTerms::ToX4,
                SincTerms::ToX6,
                SincTerms::ToX8,
                SincTerms::ToX10
            ][terms - 2]
        );
        let x = largest as f64;
        let truncated: f64 = (0..=terms)
            .map(|i| coefficients[i] * x.powi(2 * i as i32))
            .sum();
        let exact = x.sin() / x;
        assert!((truncated - exact).abs() < 4e-8, "{terms} terms at {x}");
        for i in 0..=1000 {
            let x = largest * i as f32 / 1000.0;
            let got = match terms {
                2 => sinc_to::<2>(Vec4::splat(x)),
                3 => sinc_to::<3>(Vec4::splat(x)),
                4 => sinc_to::<4>(Vec4::splat(x)),
                _ => sinc_to::<5>(Vec4::splat(x)),
            }
            .x as f64;
            let x = x as f64;
            let exact = if x > 0.0 { x.sin() / x } else { 1.0 };
            assert!(
                (got - exact).abs() < 2e-7,
                "{terms} terms at {x}: {got} vs {exact}"
            );
        }
    }
    assert_eq!(SincTerms::for_angle(0.241), SincTerms::ToX6);
}

#[test]
fn polynomial_slerp_is_exact_to_float_precision() {
    // Against f64 slerp, for angles between keys up to π/2 (a half turn of rotation).
    let mut rng = Rng(7);
    let mut worst = 0.0f64;
    for _ in 0..20_000 {
        let a = rng.quat();
        let mut b = rng.quat();
        if a.dot(b) < 0.0 {
            b = -b;
        }
        let theta = a.dot(b).clamp(-1.0, 1.0).acos();
        let sin = theta.sin();
        let c = RotCache {
            a: Quat4 {
                x: Vec4::splat(a.x),
                y: Vec4::splat(a.y),
                z: Vec4::splat(a.z),
                w: Vec4::splat(a.w),
            },
            b: Quat4 {
                x: Vec4::splat(b.x),
                y: Vec4::splat(b.y),
                z: Vec4::splat(b.z),
                w: Vec4::splat(b.w),
            },
            t0: Vec4::ZERO,
            inv_dt: Vec4::ONE,
            theta: Vec4::splat(theta),
            inv_sinc: Vec4::splat(if sin > 0.0 { theta / sin } else { 1.0 }),
        };
        let u = rng.unit();
        let got = c.eval(Vec4::splat(u)).get(0);
        let exact = a.as_dquat().slerp(b.as_dquat(), u as f64);
        let e = {
            let d = got.as_dquat().inverse() * exact;
            2.0 * glam::DVec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
        };
        worst = worst.max(e);
        assert!((got.length() - 1.0).abs() < 1e-6);
    }
    eprintln!("polynomial slerp vs f64 slerp: {worst:e} rad");
    assert!(worst < 1e-5);
}

fn b_scale(b: &mut ClipBuilder, times: crate::animation::Times) -> crate::animation::Channel {
    b.scales(times, &[Vec3::ONE, Vec3::splat(2.0), Vec3::ONE])
        .unwrap()
}

#[test]
fn sampling_reuses_its_buffers() {
    let mut b = ClipBuilder::new("two keys");
    let times = b.times(&[0.0, 0.5, 1.0]).unwrap();
    let q = [
        Quat::IDENTITY,
        Quat::from_rotation_x(1.0),
        Quat::from_rotation_y(1.0),
    ];
    let rotation = Some(b.rotations(times, &q).unwrap());
    let v = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let translation = Some(b.translations(times, &v).unwrap());
    let scale = Some(b_scale(&mut b, times));
    for _ in 0..6 {
        b.track(BoneTrack {
            bone: BoneRef {
                name: "b".into(),
                id: None,
            },
            rotation,
            translation,
            scale,
        });
    }
    let clip = b.build();
    let flat = PoseSkeleton::new(
        &[None, Some(0), Some(1), Some(0), Some(3), Some(4)],
        &[BonePose::default(); 6],
    )
    .unwrap();
    let targets = [Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)];
    for layout in [KeyLayout::Streams, KeyLayout::Auto] {
        let pose_clip = PoseClip::with_layout(&clip, &flat, &targets, layout);
        // A timeline needs no cache per instance at all.
        assert_eq!(
            pose_clip.timeline_keys().is_some(),
            layout == KeyLayout::Auto
        );
        let mut cursor = PoseCursor::new(&pose_clip);
        assert_eq!(cursor.rotations.is_empty(), layout == KeyLayout::Auto);
        let mut pose = LocalPose::new(flat.len());
        let pointers = |c: &PoseCursor, p: &LocalPose| {
            (
                c.rotations.as_ptr(),
                c.translations.as_ptr(),
                c.scales.as_ptr(),
                p.rotations.as_ptr(),
            )
        };
        let before = pointers(&cursor, &pose);
        let mut t = 0.0;
        for _ in 0..600 {
            // Forward steps, loop wraps (re-seeks) and jumps.
            t += pose_clip.duration() * 0.37;
            t %= pose_clip.duration();
            sample(&pose_clip, t, &mut cursor, &mut pose);
        }
        assert_eq!(before, pointers(&cursor, &pose));
    }
}

#[test]
fn a_reader_reads_every_joint_as_get_does_and_nothing_past_them() {
    // 0, 1, 4, 5 and 7 joints: empty, a part-filled lane group, one full, one plus one, one
    // plus three; each joint set to its own transform.
    let mut rng = Rng(0x5EED_F0DD_5EED);
    for joints in [0usize, 1, 4, 5, 7] {
        let poses: Vec<BonePose> = (0..joints)
            .map(|_| BonePose {
                rotation: rng.quat(),
                translation: Vec3::new(rng.unit(), rng.unit(), rng.unit()),
                scale: Vec3::splat(rng.range(0.5, 2.0)),
            })
            .collect();
        let pose = LocalPose::from_bone_poses(&poses);
        let reader = pose.reader();
        for (j, p) in poses.iter().enumerate() {
            assert_eq!(reader.get(j), Some(*p));
            assert_eq!(reader.get(j), Some(pose.get(j)));
        }
        // The lanes padding the last group are not joints.
        for j in joints..joints.div_ceil(LANES) * LANES + LANES {
            assert_eq!(reader.get(j), None, "joint {j} of {joints}");
        }
    }
}

#[test]
fn joints_added_to_a_pose_are_identities_whatever_a_longer_pose_left_in_their_lanes() {
    let turned = |scale: f32| BonePose {
        rotation: Quat::from_rotation_z(0.5),
        translation: Vec3::new(1.0, 2.0, 3.0),
        scale: Vec3::splat(scale),
    };
    let ones = |p: &LocalPose| p.scales.iter().all(|s| *s == Vec3x4::ONE);
    // Joints set with scale 1 keep the pose's scales unit, every lane 1.
    let mut pose = LocalPose::new(7);
    pose.set(2, turned(1.0));
    pose.set(5, turned(1.0));
    assert!(pose.unit_scales && ones(&pose));
    assert_eq!(pose.get(5), turned(1.0));
    assert_eq!(pose.reader().get(5), Some(turned(1.0)));
    // One joint scaled: its lane is written, the others still read 1.
    pose.set(6, turned(2.0));
    assert!(!pose.unit_scales);
    assert_eq!(pose.get(6), turned(2.0));
    assert_eq!(pose.get(5), turned(1.0));
    assert_eq!(pose.get(4).scale, Vec3::ONE);
    // Shrunk to 5 joints and grown to 8 again: joints 5 to 7 are added, so they are the
    // identity, not what the longer pose left in their lanes (joint 5 turned and moved, joint 6
    // scaled by 2).
    pose.resize(5);
    pose.resize(8);
    for j in 5..8 {
        assert_eq!(pose.get(j), BonePose::default(), "joint {j}");
    }
    assert_eq!(pose.get(2), turned(1.0));
    // The same in a pose of unit scales (grown past a full group too: 4 → 3 → 9).
    let mut pose = LocalPose::new(4);
    pose.set(3, turned(1.0));
    pose.resize(3);
    pose.resize(9);
    assert!(pose.unit_scales && ones(&pose));
    for j in 3..9 {
        assert_eq!(pose.get(j), BonePose::default(), "joint {j}");
    }
}
