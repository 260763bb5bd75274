//! The pose pipeline (`animation::pose`) against the clip sampler, `animation::blend` and
//! `Skeleton::model_space`: on the bundled SA clips and on random clips.

use crate::rng::Rng;
use glam::{Affine3A, Mat3A, Quat, Vec3};
use rigplay::animation::pose::*;
use rigplay::animation::{BonePose, BoneRef, BoneTrack, Clip, ClipBuilder, ClipCursor, WrapMode};
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::Skeleton;

/// The rotation angle between two quaternions, radians, in f64.
fn angle(a: Quat, b: Quat) -> f64 {
    let d = a.as_dquat().inverse() * b.as_dquat();
    let v = glam::DVec3::new(d.x, d.y, d.z).length();
    2.0 * v.atan2(d.w.abs())
}

/// The reference: `Clip::sample` into per-track poses starting from their joints' rest, then
/// mapped onto the joints (the first track driving a joint wins).
struct Reference<'a> {
    clip: &'a Clip,
    targets: Vec<Option<usize>>,
    rest: Vec<BonePose>,
    cursor: ClipCursor,
    tracks: Vec<BonePose>,
}

impl<'a> Reference<'a> {
    fn new(clip: &'a Clip, targets: &[Option<usize>], rest: &[BonePose]) -> Self {
        let mut taken = vec![false; rest.len()];
        let targets = targets
            .iter()
            .map(|t| match *t {
                Some(j) if j < rest.len() && !taken[j] => {
                    taken[j] = true;
                    Some(j)
                }
                _ => None,
            })
            .collect();
        Reference {
            clip,
            targets,
            rest: rest.to_vec(),
            cursor: clip.cursor(),
            tracks: vec![BonePose::default(); clip.tracks().len()],
        }
    }

    fn sample(&mut self, t: f32) -> Vec<BonePose> {
        for (p, target) in self.tracks.iter_mut().zip(&self.targets) {
            *p = target.map_or(BonePose::default(), |j| self.rest[j]);
        }
        self.clip.sample(t, &mut self.cursor, &mut self.tracks);
        let mut joints = self.rest.clone();
        for (p, target) in self.tracks.iter().zip(&self.targets) {
            if let Some(j) = target {
                joints[*j] = *p;
            }
        }
        joints
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Errors {
    rotation: f64,
    translation_abs: f32,
    translation_rel: f32,
    scale_rel: f32,
    samples: usize,
}

impl Errors {
    fn add(&mut self, reference: &[BonePose], pose: &LocalPose) {
        assert_eq!(reference.len(), pose.len());
        for (j, r) in reference.iter().enumerate() {
            let p = pose.get(j);
            self.rotation = self.rotation.max(angle(r.rotation, p.rotation));
            let d = (r.translation - p.translation).length();
            self.translation_abs = self.translation_abs.max(d);
            self.translation_rel = self
                .translation_rel
                .max(d / r.translation.length().max(1e-3));
            let d = (r.scale - p.scale).length();
            self.scale_rel = self.scale_rel.max(d / r.scale.length().max(1e-3));
            assert!(
                (p.rotation.length() - 1.0).abs() < 1e-5,
                "joint {j}: |q| = {}",
                p.rotation.length()
            );
        }
        self.samples += 1;
    }

    fn check(&self, what: &str) {
        assert!(self.rotation < 2e-3, "{what}: rotation {}", self.rotation);
        assert!(self.translation_rel < 1e-5, "{what}: {self:?}");
        assert!(self.scale_rel < 1e-5, "{what}: {self:?}");
    }
}

/// Times that exercise a clip: 60 Hz forward over three loops with wraps, every key time
/// forwards and backwards, random seeks, and times outside the clip.
fn times_for(clip: &Clip, rng: &mut Rng) -> Vec<f32> {
    let d = clip.duration().max(1e-3);
    let mut times = Vec::new();
    let mut t = rng.range(0.0, d);
    for _ in 0..(3.0 * d * 60.0) as usize + 10 {
        t = clip.wrap_time(t + 1.0 / 60.0, WrapMode::Loop);
        times.push(t);
    }
    let mut keys: Vec<f32> = clip
        .tracks()
        .iter()
        .flat_map(|t| [t.rotation, t.translation, t.scale])
        .flatten()
        .flat_map(|c| clip.times(c).iter().copied())
        .collect();
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    times.extend(keys.iter().copied());
    times.extend(keys.iter().rev().copied());
    // Just around key times.
    for k in &keys {
        times.extend([k.next_down(), *k, k.next_up()]);
    }
    for _ in 0..200 {
        times.push(rng.range(-0.5, d + 0.5));
    }
    times.extend([-1.0, 0.0, d, d + 1.0, f32::NAN, 0.0, f32::INFINITY, d]);
    times
}

/// Samples `times` with both samplers, and with a fresh cursor (a seek) at each time, which
/// must give the very same bits as the cursor carried along.
fn compare(
    clip: &Clip,
    skeleton: &PoseSkeleton,
    targets: &[Option<usize>],
    times: &[f32],
) -> Errors {
    let pose_clip = PoseClip::new(clip, skeleton, targets);
    compare_laid_out(clip, &pose_clip, skeleton, targets, times)
}

/// [`compare`] for a clip already laid out (in a given [`KeyLayout`]).
fn compare_laid_out(
    clip: &Clip,
    pose_clip: &PoseClip,
    skeleton: &PoseSkeleton,
    targets: &[Option<usize>],
    times: &[f32],
) -> Errors {
    let rest: Vec<BonePose> = (0..skeleton.len())
        .map(|j| skeleton.rest().get(j))
        .collect();
    let mut reference = Reference::new(clip, targets, &rest);
    let mut cursor = PoseCursor::new(pose_clip);
    let mut pose = LocalPose::new(skeleton.len());
    let mut fresh = LocalPose::new(skeleton.len());
    let mut errors = Errors::default();
    for &t in times {
        sample(pose_clip, t, &mut cursor, &mut pose);
        let r = reference.sample(t);
        errors.add(&r, &pose);
        let mut seeked = PoseCursor::default();
        sample(pose_clip, t, &mut seeked, &mut fresh);
        assert_eq!(pose, fresh, "t = {t}: the carried cursor and a seek differ");
    }
    errors
}

/// A random clip on a random flat skeleton: big angles between keys, uneven key times (some
/// shared), first keys away from 0, channels of one key, missing channels and tracks.
fn random_case(rng: &mut Rng) -> (Clip, PoseSkeleton, Vec<Option<usize>>) {
    let joints = 1 + rng.below(13);
    let parents: Vec<Option<usize>> = (0..joints)
        .map(|j| (j > 0 && rng.below(5) > 0).then(|| rng.below(j)))
        .collect();
    let rest: Vec<BonePose> = (0..joints)
        .map(|_| BonePose {
            rotation: rng.quat(),
            translation: rng.vec3(1.0),
            scale: Vec3::ONE + rng.vec3(0.2),
        })
        .collect();
    let skeleton = PoseSkeleton::new(&parents, &rest).unwrap();
    let mut b = ClipBuilder::new("random");
    let mut targets = Vec::new();
    for _ in 0..rng.below(joints + 3) {
        let channel = |rng: &mut Rng, b: &mut ClipBuilder, kind: usize| {
            if rng.below(4) == 0 {
                return None;
            }
            let n = if rng.below(4) == 0 {
                1
            } else {
                2 + rng.below(7)
            };
            let mut t = rng.range(-0.3, 0.6);
            let times: Vec<f32> = (0..n)
                .map(|_| {
                    let now = t;
                    if rng.below(8) > 0 {
                        t += rng.range(0.001, 0.4);
                    }
                    now
                })
                .collect();
            let times = b.times(&times).unwrap();
            Some(match kind {
                0 => {
                    let q: Vec<Quat> = (0..n).map(|_| rng.quat() * 1.7).collect();
                    b.rotations(times, &q).unwrap()
                }
                1 => {
                    let v: Vec<Vec3> = (0..n).map(|_| rng.vec3(2.0)).collect();
                    b.translations(times, &v).unwrap()
                }
                _ => {
                    let v: Vec<Vec3> = (0..n).map(|_| Vec3::ONE + rng.vec3(0.5)).collect();
                    b.scales(times, &v).unwrap()
                }
            })
        };
        let rotation = channel(rng, &mut b, 0);
        let translation = channel(rng, &mut b, 1);
        let scale = channel(rng, &mut b, 2);
        b.track(BoneTrack {
            bone: BoneRef {
                name: "x".into(),
                id: None,
            },
            rotation,
            translation,
            scale,
        });
        // Some tracks drive nothing, some a joint another track drives, some out of range.
        targets.push(match rng.below(10) {
            0 => None,
            1 => Some(joints + 2),
            _ => Some(rng.below(joints)),
        });
    }
    (b.build(), skeleton, targets)
}

#[test]
fn sampling_matches_the_clip_sampler_on_random_clips() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut all = Errors::default();
    let mut big = 0.0f32;
    let (mut forced, mut auto) = (0, 0);
    for case in 0..300 {
        let (clip, skeleton, targets) = random_case(&mut rng);
        for t in clip.tracks() {
            if let Some(c) = t.rotation {
                let v = clip.rotation_values(c);
                for w in v.windows(2) {
                    big = big.max(w[0].angle_between(w[1]));
                }
            }
        }
        let times = times_for(&clip, &mut rng);
        // Whichever layout the clip gets, and each layout forced: a timeline over keys at
        // unrelated times is big but must be as exact.
        for layout in [KeyLayout::Auto, KeyLayout::Timeline, KeyLayout::Streams] {
            let pose_clip = PoseClip::with_layout(&clip, &skeleton, &targets, layout);
            match layout {
                KeyLayout::Timeline => forced += pose_clip.timeline_keys().is_some() as usize,
                KeyLayout::Auto => auto += pose_clip.timeline_keys().is_some() as usize,
                KeyLayout::Streams => assert_eq!(pose_clip.timeline_keys(), None),
            }
            let e = compare_laid_out(&clip, &pose_clip, &skeleton, &targets, &times);
            e.check(&format!("case {case}, {layout:?}"));
            all.rotation = all.rotation.max(e.rotation);
            all.translation_rel = all.translation_rel.max(e.translation_rel);
            all.translation_abs = all.translation_abs.max(e.translation_abs);
            all.scale_rel = all.scale_rel.max(e.scale_rel);
            all.samples += e.samples;
        }
    }
    eprintln!(
        "300 random clips (largest rotation between keys {big} rad), {forced} on a forced \
         timeline, {auto} on one by choice: {all:?}"
    );
    assert!(big > 3.0, "the random keys have big angles");
    // Most random clips can be put on a timeline (not those that step at a late first key),
    // but few are worth it.
    assert!(
        forced > 100 && auto < forced / 2,
        "{forced} forced, {auto} chosen"
    );
}

/// A clip as exporters write them: every channel keyed on one frame grid (`fps` from a start
/// that need not be 0), some channels key-reduced to a random subset of the frames (first and
/// last kept, as reducers keep them), some starting late or ending early, some with steps (two
/// keys at one frame), the root translated; big and small angles between keys.
fn frame_grid_case(rng: &mut Rng) -> (Clip, PoseSkeleton, Vec<Option<usize>>) {
    let joints = 1 + rng.below(40);
    let parents: Vec<Option<usize>> = (0..joints).map(|j| j.checked_sub(1)).collect();
    let rest: Vec<BonePose> = (0..joints)
        .map(|_| BonePose {
            rotation: rng.quat(),
            translation: rng.vec3(1.0),
            scale: Vec3::ONE,
        })
        .collect();
    let skeleton = PoseSkeleton::new(&parents, &rest).unwrap();
    let fps = [15.0, 24.0, 30.0, 60.0][rng.below(4)];
    let start = [0.0, 0.0, -0.1, 0.25][rng.below(4)];
    let frames = 2 + rng.below(50);
    let frame = |f: usize| start + f as f32 / fps;
    let spread = [0.05, 0.6, 2.5][rng.below(3)];
    let mut b = ClipBuilder::new("frames");
    let mut targets = Vec::new();
    for joint in 0..joints {
        if rng.below(6) == 0 {
            continue;
        }
        let keys = |rng: &mut Rng| -> Vec<f32> {
            let (first, last) = match rng.below(5) {
                0 => (rng.below(frames / 2 + 1), frames - 1),
                1 => (0, frames - 1 - rng.below(frames / 2 + 1)),
                _ => (0, frames - 1),
            };
            let keep = [1, 1, 2, 3][rng.below(4)];
            let mut times = Vec::new();
            for f in first..=last {
                if f == first || f == last || rng.below(keep) == 0 {
                    times.push(frame(f));
                    // A step: a second key at the frame (not at a late first key).
                    if rng.below(25) == 0 && (f > first || first == 0) {
                        times.push(frame(f));
                    }
                }
            }
            times
        };
        let times = keys(rng);
        let n = times.len();
        let t = b.times(&times).unwrap();
        let mut q = rng.quat();
        let rots: Vec<Quat> = (0..n)
            .map(|_| {
                q = (q * Quat::from_scaled_axis(rng.vec3(spread))).normalize();
                q
            })
            .collect();
        let rotation = Some(b.rotations(t, &rots).unwrap());
        let translation = (joint == 0 || rng.below(8) == 0).then(|| {
            let times = keys(rng);
            let v: Vec<Vec3> = (0..times.len()).map(|_| rng.vec3(2.0)).collect();
            let t = b.times(&times).unwrap();
            b.translations(t, &v).unwrap()
        });
        let scale = (rng.below(10) == 0).then(|| {
            let times = keys(rng);
            let v: Vec<Vec3> = (0..times.len())
                .map(|_| Vec3::ONE + rng.vec3(0.5))
                .collect();
            let t = b.times(&times).unwrap();
            b.scales(t, &v).unwrap()
        });
        b.track(BoneTrack {
            bone: BoneRef {
                name: format!("bone{joint}"),
                id: None,
            },
            rotation,
            translation,
            scale,
        });
        targets.push(Some(joint));
    }
    (b.build(), skeleton, targets)
}

#[test]
fn clips_keyed_on_a_frame_grid_sample_on_one_timeline_as_exactly() {
    let mut rng = Rng(0x51_7CC1_B727_220A);
    let mut all = Errors::default();
    let mut on_timeline = 0;
    for case in 0..300 {
        let (clip, skeleton, targets) = frame_grid_case(&mut rng);
        let times = times_for(&clip, &mut rng);
        let pose_clip = PoseClip::new(&clip, &skeleton, &targets);
        // A grid's keys are never more than the frames (twice, where some channel steps).
        let frames = clip
            .tracks()
            .iter()
            .flat_map(|t| [t.rotation, t.translation, t.scale])
            .flatten()
            .map(|c| clip.times(c).len())
            .max()
            .unwrap_or(0);
        if let Some(keys) = pose_clip.timeline_keys() {
            on_timeline += 1;
            assert!(keys >= frames.min(2), "case {case}: {keys} keys");
        }
        let e = compare_laid_out(&clip, &pose_clip, &skeleton, &targets, &times);
        e.check(&format!("case {case}"));
        // The same clip from streams.
        let streams = PoseClip::with_layout(&clip, &skeleton, &targets, KeyLayout::Streams);
        compare_laid_out(&clip, &streams, &skeleton, &targets, &times).check("streams");
        all.rotation = all.rotation.max(e.rotation);
        all.translation_rel = all.translation_rel.max(e.translation_rel);
        all.translation_abs = all.translation_abs.max(e.translation_abs);
        all.scale_rel = all.scale_rel.max(e.scale_rel);
        all.samples += e.samples;
    }
    eprintln!("300 frame-grid clips, {on_timeline} on a timeline: {all:?}");
    assert!(on_timeline > 250, "{on_timeline} of 300 on a timeline");
    // Exact, not nearly: slerp cut at a frame between two keys is the same arc (translations
    // are within 3.5 of 0 here: a few f32 steps).
    assert!(all.rotation < 2e-6, "{all:?}");
    assert!(
        all.translation_abs < 4e-6 && all.scale_rel < 2e-6,
        "{all:?}"
    );
}

/// A clip of one rotation track per entry of `times`, each through the three `keys`.
fn rotation_tracks(times: &[[f32; 3]], keys: &[Quat; 3]) -> Clip {
    let mut b = ClipBuilder::new("rotations");
    for t in times {
        let t = b.times(t).unwrap();
        let rotation = Some(b.rotations(t, keys).unwrap());
        b.track(BoneTrack {
            bone: BoneRef {
                name: "b".into(),
                id: None,
            },
            rotation,
            translation: None,
            scale: None,
        });
    }
    b.build()
}

#[test]
fn a_step_at_a_late_first_key_keeps_a_clip_off_the_timeline() {
    // Sampled at the very time of a channel's first key, a step there shows the key before
    // the step; a timeline that began earlier would show the one after.
    let qs = [
        Quat::IDENTITY,
        Quat::from_rotation_x(1.0),
        Quat::from_rotation_y(1.0),
    ];
    let clip = rotation_tracks(&[[0.0, 0.5, 1.0], [0.5, 0.5, 1.0]], &qs);
    let skeleton = PoseSkeleton::new(&[None, Some(0)], &[BonePose::default(); 2]).unwrap();
    let targets = [Some(0), Some(1)];
    for layout in [KeyLayout::Auto, KeyLayout::Timeline] {
        let pose_clip = PoseClip::with_layout(&clip, &skeleton, &targets, layout);
        assert_eq!(pose_clip.timeline_keys(), None);
        let mut pose = LocalPose::default();
        sample(&pose_clip, 0.5, &mut PoseCursor::default(), &mut pose);
        assert!(angle(pose.get(1).rotation, Quat::IDENTITY) < 1e-6);
        assert!(angle(pose.get(0).rotation, qs[1]) < 1e-6);
    }
    // The same step at the first key of the clip's earliest channel is fine.
    let clip = rotation_tracks(&[[0.5, 0.5, 1.0]], &qs);
    let pose_clip = PoseClip::new(&clip, &skeleton, &targets);
    assert_eq!(pose_clip.timeline_keys(), Some(3));
    let mut pose = LocalPose::default();
    for (t, q) in [(0.5, qs[0]), (0.5f32.next_up(), qs[1]), (1.0, qs[2])] {
        sample(&pose_clip, t, &mut PoseCursor::default(), &mut pose);
        assert!(angle(pose.get(0).rotation, q) < 1e-6, "t = {t}");
    }
}

fn random_pose(rng: &mut Rng, n: usize) -> LocalPose {
    let mut p = LocalPose::new(n);
    for j in 0..n {
        p.set(
            j,
            BonePose {
                rotation: rng.quat(),
                translation: rng.vec3(1.0),
                scale: Vec3::ONE + rng.vec3(0.3),
            },
        );
    }
    p
}

#[test]
fn two_layer_blend_matches_anim_blend() {
    let mut rng = Rng(11);
    let n = 31;
    let rest = random_pose(&mut rng, n);
    let mut out = LocalPose::default();
    let mut worst = (0.0f64, 0.0f32);
    for _ in 0..200 {
        let (a, b) = (random_pose(&mut rng, n), random_pose(&mut rng, n));
        let w = rng.unit();
        blend(
            &[
                BlendLayer {
                    pose: &a,
                    weight: 1.0 - w,
                    mask: None,
                },
                BlendLayer {
                    pose: &b,
                    weight: w,
                    mask: None,
                },
            ],
            &rest,
            &mut out,
        );
        for j in 0..n {
            let r = rigplay::animation::blend(a.get(j), b.get(j), w);
            let p = out.get(j);
            worst.0 = worst.0.max(angle(r.rotation, p.rotation));
            worst.1 = worst
                .1
                .max((r.translation - p.translation).length())
                .max((r.scale - p.scale).length());
        }
    }
    eprintln!(
        "blend vs animation::blend: rotation {:e} rad, vectors {:e}",
        worst.0, worst.1
    );
    assert!(worst.0 < 1e-5 && worst.1 < 1e-5, "{worst:?}");
}

#[test]
fn blend_masks_and_zero_weights() {
    let mut rng = Rng(12);
    let n = 6;
    let rest = random_pose(&mut rng, n);
    let (a, b, c) = (
        random_pose(&mut rng, n),
        random_pose(&mut rng, n),
        random_pose(&mut rng, n),
    );
    let mut out = LocalPose::default();
    // Joint 0: only a; joint 1: a and b equally; joint 2: nothing (rest); joints 3..: a and
    // b equally, c's weight 0; a mask too short gives 0 past its end.
    let mask_a = [1.0, 1.0, 0.0, 2.0, 2.0, 2.0];
    let mask_b = [0.0, 1.0, 0.0, 2.0, 2.0];
    blend(
        &[
            BlendLayer {
                pose: &a,
                weight: 0.5,
                mask: Some(&mask_a),
            },
            BlendLayer {
                pose: &b,
                weight: 0.5,
                mask: Some(&mask_b),
            },
            BlendLayer {
                pose: &c,
                weight: 0.0,
                mask: None,
            },
        ],
        &rest,
        &mut out,
    );
    let close = |x: BonePose, y: BonePose| {
        angle(x.rotation, y.rotation) < 1e-5
            && (x.translation - y.translation).length() < 1e-5
            && (x.scale - y.scale).length() < 1e-5
    };
    assert!(close(out.get(0), a.get(0)));
    assert!(close(
        out.get(1),
        rigplay::animation::blend(a.get(1), b.get(1), 0.5)
    ));
    assert!(close(out.get(2), rest.get(2)));
    assert!(close(
        out.get(3),
        rigplay::animation::blend(a.get(3), b.get(3), 0.5)
    ));
    assert!(close(out.get(5), a.get(5)));
    // No layers at all: rest.
    blend(&[], &rest, &mut out);
    assert_eq!(out, rest);
}

#[test]
fn local_to_model_applies_scale_then_rotation_then_translation() {
    let mut rng = Rng(3);
    let parents = [None, Some(0), Some(1), Some(0), Some(3)];
    let poses: Vec<BonePose> = (0..5)
        .map(|_| BonePose {
            rotation: rng.quat(),
            translation: rng.vec3(1.0),
            scale: Vec3::ONE + rng.vec3(0.5),
        })
        .collect();
    let skeleton = PoseSkeleton::new(&parents, &poses).unwrap();
    let mut out = [Affine3A::IDENTITY; 5];
    local_to_model(&skeleton, skeleton.rest(), &mut out);
    let mut expected: Vec<Affine3A> = Vec::new();
    for (p, pose) in parents.iter().zip(&poses) {
        let l =
            Affine3A::from_scale_rotation_translation(pose.scale, pose.rotation, pose.translation);
        expected.push(p.map_or(l, |p| expected[p] * l));
    }
    for (a, b) in out.iter().zip(&expected) {
        assert!(a.abs_diff_eq(*b, 1e-5), "{a:?} {b:?}");
    }
}

#[test]
fn skeletons_check_their_parents() {
    let rest = [BonePose::default(); 2];
    assert_eq!(
        PoseSkeleton::new(&[None, Some(1)], &rest),
        Err(PoseSkeletonError::ParentNotBefore {
            joint: 1,
            parent: 1
        })
    );
    assert!(matches!(
        PoseSkeleton::new(&[None], &rest),
        Err(PoseSkeletonError::LengthMismatch { .. })
    ));
    let s = PoseSkeleton::new(&[None, Some(0)], &rest).unwrap();
    assert_eq!(s.parents(), &[-1, 0]);
}

/// A skeleton hung in a model's own way: a joint under a later one and a fixed frame (an
/// offset) between a joint and its parent, posed at rest and with the offset's joint keyed.
/// Worked by hand, `Rz` and `Rx` quarter turns about Z and X:
/// - joint 0, the root: at (0, 0, 1);
/// - joint 2, under 0 through the offset `Rz`, 1 m along its x: `Rz · (1, 0, 0)` = (0, 1, 0),
///   so at (0, 1, 1), turned `Rz`;
/// - joint 1, under joint 2 (listed after it), 2 m along y: `Rz · (0, 2, 0)` = (−2, 0, 0), so
///   at (−2, 1, 1);
/// - joint 3, under joint 1, 1 m along x: `Rz · (1, 0, 0)` = (0, 1, 0), so at (−2, 2, 1).
///
/// Joint 2 keyed `Rx` (a clip's key replaces its local rotation, not the offset): joint 1 is at
/// (0, 1, 1) + `Rz · Rx · (0, 2, 0)` = (0, 1, 1) + `Rz · (0, 0, 2)` = (0, 1, 3), and joint 3 at
/// (0, 1, 3) + `Rz · Rx · (1, 0, 0)` = (0, 1, 3) + (0, 1, 0) = (0, 2, 3).
#[test]
fn a_skeleton_with_offsets_and_later_parents_poses_as_its_hierarchy() {
    use std::f32::consts::FRAC_PI_2;
    let (rz, rx) = (
        Quat::from_rotation_z(FRAC_PI_2),
        Quat::from_rotation_x(FRAC_PI_2),
    );
    let at = |x: f32, y: f32, z: f32| BonePose {
        rotation: Quat::IDENTITY,
        translation: Vec3::new(x, y, z),
        scale: Vec3::ONE,
    };
    let parents = [None, Some(2), Some(0), Some(1)];
    let rest = [
        at(0., 0., 1.),
        at(0., 2., 0.),
        at(1., 0., 0.),
        at(1., 0., 0.),
    ];
    let offsets = [None, None, Some(Affine3A::from_quat(rz)), None];
    let s = PoseSkeleton::with_offsets(&parents, &rest, &offsets).unwrap();
    assert_eq!(s.parents(), &[-1, 2, 0, 1]);
    let mut out = [Affine3A::IDENTITY; 4];
    let positions = |out: &[Affine3A]| {
        out.iter()
            .map(|m| Vec3::from(m.translation))
            .collect::<Vec<_>>()
    };
    let close = |got: Vec<Vec3>, want: [[f32; 3]; 4]| {
        for (j, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                g.abs_diff_eq(Vec3::from(w), 1e-5),
                "joint {j}: {g} against {w:?}"
            );
        }
    };
    local_to_model(&s, s.rest(), &mut out);
    close(
        positions(&out),
        [[0., 0., 1.], [-2., 1., 1.], [0., 1., 1.], [-2., 2., 1.]],
    );
    assert!(out[2].matrix3.abs_diff_eq(Mat3A::from_quat(rz), 1e-5));
    // Twice: the pass in joint order reads joint 2's last transform for joint 1, and the joints
    // composed after it put that right.
    local_to_model(&s, s.rest(), &mut out);
    close(
        positions(&out),
        [[0., 0., 1.], [-2., 1., 1.], [0., 1., 1.], [-2., 2., 1.]],
    );
    let mut keyed = s.rest().clone();
    keyed.set(
        2,
        BonePose {
            rotation: rx,
            ..rest[2]
        },
    );
    local_to_model(&s, &keyed, &mut out);
    close(
        positions(&out),
        [[0., 0., 1.], [0., 1., 3.], [0., 1., 1.], [0., 2., 3.]],
    );
    assert!(out[2].matrix3.abs_diff_eq(Mat3A::from_quat(rz * rx), 1e-5));

    // With scales (a pose whose scales are not all one takes the other pass).
    let mut scaled = keyed.clone();
    scaled.set(
        2,
        BonePose {
            rotation: rx,
            scale: Vec3::splat(2.0),
            ..rest[2]
        },
    );
    local_to_model(&s, &scaled, &mut out);
    // Joint 1's 2 m along y doubled: (0, 1, 1) + Rz · Rx · (0, 4, 0) = (0, 1, 5).
    assert!(Vec3::from(out[1].translation).abs_diff_eq(Vec3::new(0., 1., 5.), 1e-5));

    // Fewer joints in `out` or in the pose than in the skeleton: those are posed, joint 1
    // (under joint 2, past them) as a root.
    let mut two = [Affine3A::IDENTITY; 2];
    local_to_model(&s, s.rest(), &mut two);
    assert!(Vec3::from(two[0].translation).abs_diff_eq(Vec3::new(0., 0., 1.), 1e-6));
    assert!(Vec3::from(two[1].translation).abs_diff_eq(Vec3::new(0., 2., 0.), 1e-6));
    let mut one = [Affine3A::IDENTITY; 1];
    local_to_model(&s, s.rest(), &mut one);
    assert!(Vec3::from(one[0].translation).abs_diff_eq(Vec3::new(0., 0., 1.), 1e-6));
    let mut short = LocalPose::new(2);
    short.set(0, rest[0]);
    short.set(1, rest[1]);
    local_to_model(&s, &short, &mut out);
    assert!(Vec3::from(out[1].translation).abs_diff_eq(Vec3::new(0., 2., 0.), 1e-6));

    // In order and without offsets: the same skeleton as `new` makes, nothing composed after.
    let ordered = [None, Some(0), Some(1), Some(0)];
    assert_eq!(
        PoseSkeleton::with_offsets(&ordered, &rest, &[None; 4]),
        PoseSkeleton::new(&ordered, &rest)
    );
}

/// Random forests of up to 40 joints listed in random order (parents before or after their
/// children), a third of the joints with a random offset, the scales all one or not: the pipeline's
/// model transforms are each joint's parent's · offset · local, composed joint by joint up the
/// chain, within 1e-4; and a pose sampled twice in a row gives the same transforms both times.
#[test]
fn skeletons_with_offsets_pose_random_hierarchies_in_any_order() {
    let mut rng = Rng(41);
    for round in 0..200 {
        let n = 1 + rng.below(40);
        // A forest in some order: each joint's parent is an earlier one of a random
        // permutation, or none.
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut parents = vec![None; n];
        for k in 1..n {
            if rng.below(6) != 0 {
                parents[order[k]] = Some(order[rng.below(k)]);
            }
        }
        let offsets: Vec<Option<Affine3A>> = (0..n)
            .map(|_| {
                (rng.below(3) == 0).then(|| {
                    Affine3A::from_scale_rotation_translation(Vec3::ONE, rng.quat(), rng.vec3(0.5))
                })
            })
            .collect();
        let local: Vec<BonePose> = (0..n)
            .map(|_| BonePose {
                rotation: rng.quat(),
                translation: rng.vec3(1.0),
                // (Every other round all ones: the pass without scales.)
                scale: Vec3::splat(1.0 + 0.2 * rng.unit() * (round % 2) as f32),
            })
            .collect();
        let s = PoseSkeleton::with_offsets(&parents, &local, &offsets).unwrap();
        let in_order = (0..n).all(|j| parents[j].is_none_or(|p| p < j) && offsets[j].is_none());
        assert_eq!(s.in_joint_order(), in_order, "round {round}");
        let compose = |mut j: usize| {
            let mut m = Affine3A::IDENTITY;
            loop {
                let l = local[j];
                let own =
                    Affine3A::from_scale_rotation_translation(l.scale, l.rotation, l.translation);
                m = offsets[j].unwrap_or(Affine3A::IDENTITY) * own * m;
                match parents[j] {
                    Some(p) => j = p,
                    None => return m,
                }
            }
        };
        let mut out = vec![Affine3A::IDENTITY; n];
        for pass in 0..2 {
            local_to_model(&s, s.rest(), &mut out);
            for (j, got) in out.iter().enumerate() {
                let want = compose(j);
                assert!(
                    got.abs_diff_eq(want, 1e-4),
                    "round {round} pass {pass}, joint {j}: {got:?} against {want:?}"
                );
            }
        }
    }
}

#[test]
fn skeletons_with_offsets_check_their_parents() {
    let rest = [BonePose::default(); 3];
    let none = [None; 3];
    assert_eq!(
        PoseSkeleton::with_offsets(&[None, Some(2), Some(1)], &rest, &none),
        Err(PoseSkeletonError::Cycle { joint: 1 })
    );
    assert_eq!(
        PoseSkeleton::with_offsets(&[None, Some(1), None], &rest, &none),
        Err(PoseSkeletonError::ParentOutOfRange {
            joint: 1,
            parent: 1,
            joints: 3
        })
    );
    assert_eq!(
        PoseSkeleton::with_offsets(&[None, Some(3), None], &rest, &none),
        Err(PoseSkeletonError::ParentOutOfRange {
            joint: 1,
            parent: 3,
            joints: 3
        })
    );
    assert_eq!(
        PoseSkeleton::with_offsets(&[None, None, None], &rest, &none[..2]),
        Err(PoseSkeletonError::OffsetsLength {
            parents: 3,
            offsets: 2
        })
    );
}

fn sa_clips() -> Vec<Clip> {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/anims/sa_ped.ifp"
    ))
    .expect("the bundled SA sample");
    IfpFile::read(&bytes)
        .expect("it reads")
        .file
        .clips()
        .map(|c| c.to_clip())
        .collect()
}

#[test]
fn sampling_matches_the_clip_sampler_on_the_bundled_sa_clips() {
    let skeleton = Skeleton::gta_sa();
    let flat = skeleton.pose_skeleton().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut all = Errors::default();
    let clips = sa_clips();
    assert!(!clips.is_empty());
    for clip in &clips {
        let binding = skeleton.bind(clip);
        // Exported at 30 fps: one timeline of their frames.
        let laid_out = PoseClip::new(clip, &flat, &binding.targets);
        let frames = clip.tracks()[0].rotation.map(|c| c.len());
        assert_eq!(laid_out.timeline_keys(), frames, "{}", clip.name);
        let times = times_for(clip, &mut rng);
        let e = compare(clip, &flat, &binding.targets, &times);
        e.check(&clip.name);
        eprintln!("{}: {e:?}", clip.name);
        all.rotation = all.rotation.max(e.rotation);
        all.translation_rel = all.translation_rel.max(e.translation_rel);
        all.translation_abs = all.translation_abs.max(e.translation_abs);
        all.samples += e.samples;
    }
    eprintln!("{} SA clips: {all:?}", clips.len());
}

#[test]
fn local_to_model_matches_the_skeleton() {
    let skeleton = Skeleton::gta_sa();
    let flat = skeleton.pose_skeleton().unwrap();
    let clip = sa_clips().into_iter().find(|c| c.name == "walk").unwrap();
    let pose_clip = PoseClip::new(&clip, &flat, &skeleton.bind(&clip).targets);
    let mut cursor = PoseCursor::new(&pose_clip);
    let mut pose = LocalPose::default();
    let mut model = vec![Affine3A::IDENTITY; flat.len()];
    let mut bone_poses = vec![BonePose::default(); flat.len()];
    let mut worst = (0.0f32, 0.0f32);
    for f in 0..60 {
        sample(&pose_clip, f as f32 / 60.0, &mut cursor, &mut pose);
        local_to_model(&flat, &pose, &mut model);
        pose.write_bone_poses(&mut bone_poses);
        let reference = skeleton.model_space(&bone_poses);
        for (m, (q, t)) in model.iter().zip(&reference) {
            let r = Affine3A::from_rotation_translation(*q, *t);
            worst.0 = worst.0.max((m.translation - r.translation).length());
            worst.1 = worst.1.max(
                (m.matrix3.x_axis - r.matrix3.x_axis)
                    .abs()
                    .max((m.matrix3.y_axis - r.matrix3.y_axis).abs())
                    .max((m.matrix3.z_axis - r.matrix3.z_axis).abs())
                    .max_element(),
            );
        }
    }
    eprintln!(
        "local_to_model vs model_space: translation {:e}, matrix {:e}",
        worst.0, worst.1
    );
    assert!(worst.0 < 1e-5 && worst.1 < 1e-5, "{worst:?}");
}

#[test]
fn one_pose_buffer_serves_clips_in_turn() {
    // A buffer keeps the constant groups of the clip last sampled into it: sampling another
    // clip, or changing a joint, must not leave stale values.
    let skeleton = Skeleton::gta_sa();
    let flat = skeleton.pose_skeleton().unwrap();
    let clips: Vec<PoseClip> = sa_clips()
        .iter()
        .map(|c| PoseClip::new(c, &flat, &skeleton.bind(c).targets))
        .collect();
    let mut shared = LocalPose::default();
    let mut cursors: Vec<PoseCursor> = clips.iter().map(PoseCursor::new).collect();
    for f in 0..90 {
        let k = f % clips.len();
        let t = (f as f32 / 60.0) % clips[k].duration();
        if f % 7 == 6 {
            shared.set(3, BonePose::default());
        }
        sample(&clips[k], t, &mut cursors[k], &mut shared);
        let mut own = LocalPose::default();
        sample(&clips[k], t, &mut PoseCursor::default(), &mut own);
        assert_eq!(shared, own, "frame {f}");
    }
}

#[test]
fn a_clip_without_keys_or_joints_gives_rest() {
    let flat = Skeleton::gta_sa().pose_skeleton().unwrap();
    let clip = ClipBuilder::new("empty").build();
    let pose_clip = PoseClip::new(&clip, &flat, &[]);
    let mut pose = LocalPose::default();
    sample(&pose_clip, 0.5, &mut PoseCursor::default(), &mut pose);
    assert_eq!(&pose, flat.rest());
    let none = PoseSkeleton::new(&[], &[]).unwrap();
    let pose_clip = PoseClip::new(&clip, &none, &[]);
    sample(&pose_clip, 0.5, &mut PoseCursor::default(), &mut pose);
    assert!(pose.is_empty());
    let mut model: [Affine3A; 0] = [];
    local_to_model(&none, &pose, &mut model);
}

#[test]
fn poses_of_unit_scales_blend_and_transform_like_any_other() {
    // Blending and local→model skip the scales of poses whose scales are all 1: a buffer that
    // held other scales must still come out right, and so must a pose whose scale was set.
    let mut rng = Rng(21);
    let n = 9;
    let parents: Vec<Option<usize>> = (0..n).map(|j: usize| j.checked_sub(1)).collect();
    let unit = |p: &mut LocalPose| {
        for j in 0..n {
            let mut b = p.get(j);
            b.scale = Vec3::ONE;
            p.set(j, b);
        }
    };
    let (mut a, mut b, mut rest) = (
        random_pose(&mut rng, n),
        random_pose(&mut rng, n),
        random_pose(&mut rng, n),
    );
    let mut out = LocalPose::default();
    let layers = |a: &LocalPose, b: &LocalPose, out: &mut LocalPose, rest: &LocalPose| {
        blend(
            &[
                BlendLayer {
                    pose: a,
                    weight: 0.25,
                    mask: None,
                },
                BlendLayer {
                    pose: b,
                    weight: 0.75,
                    mask: None,
                },
            ],
            rest,
            out,
        )
    };
    layers(&a, &b, &mut out, &rest);
    assert!(out.get(4).scale != Vec3::ONE);
    unit(&mut a);
    unit(&mut b);
    unit(&mut rest);
    layers(&a, &b, &mut out, &rest);
    for j in 0..n {
        assert_eq!(out.get(j).scale, Vec3::ONE);
        let r = rigplay::animation::blend(a.get(j), b.get(j), 0.75);
        assert!(angle(r.rotation, out.get(j).rotation) < 1e-5);
    }
    // A scale set on the blended pose is used by local→model.
    let rest_poses: Vec<BonePose> = (0..n).map(|j| rest.get(j)).collect();
    let skeleton = PoseSkeleton::new(&parents, &rest_poses).unwrap();
    let mut m = vec![Affine3A::IDENTITY; n];
    local_to_model(&skeleton, &out, &mut m);
    let mut p = out.get(2);
    p.scale = Vec3::splat(2.0);
    out.set(2, p);
    local_to_model(&skeleton, &out, &mut m);
    let expected = Affine3A::from_scale_rotation_translation(p.scale, p.rotation, p.translation);
    let local_of_2 = m[1].inverse() * m[2];
    assert!(local_of_2.abs_diff_eq(expected, 1e-4), "{local_of_2:?}");
}

/// The SA skeleton's pose skeleton, the bundled SA walk's targets on it and its pose clip.
fn sa_walk_on_its_skeleton() -> (PoseSkeleton, Vec<Option<usize>>, PoseClip) {
    let skeleton = Skeleton::gta_sa();
    let flat = skeleton.pose_skeleton().unwrap();
    let clip = sa_clips().into_iter().find(|c| c.name == "walk").unwrap();
    let targets = skeleton.bind(&clip).targets;
    let pose_clip = PoseClip::new(&clip, &flat, &targets);
    (flat, targets, pose_clip)
}

#[test]
fn a_joint_changed_after_sampling_leaves_the_next_sample_right() {
    // `map_joint` keeps the pose's record of the clip's constant groups only where the clip
    // animates what it changed: the next sample must equal one into a fresh buffer either way.
    let (flat, targets, pose_clip) = sa_walk_on_its_skeleton();
    let undriven = (0..flat.len())
        .find(|j| !targets.contains(&Some(*j)))
        .expect("the walk leaves some SA bones alone");
    let mut cursor = PoseCursor::new(&pose_clip);
    let mut pose = LocalPose::default();
    for f in 0..40 {
        let t = f as f32 / 60.0;
        sample(&pose_clip, t, &mut cursor, &mut pose);
        let mut fresh = LocalPose::default();
        sample(&pose_clip, t, &mut PoseCursor::default(), &mut fresh);
        assert_eq!(pose, fresh, "frame {f}");
        // The root's translation (animated), then a bone the clip does not drive (constant).
        let joint = if f % 2 == 0 { 0 } else { undriven };
        pose_clip.map_joint(joint, &mut pose, |mut p| {
            p.translation += Vec3::X;
            p.rotation = Quat::from_rotation_z(0.3) * p.rotation;
            p
        });
        assert_eq!(
            pose.get(joint).translation,
            fresh.get(joint).translation + Vec3::X
        );
    }
    // Past the pose's joints: nothing.
    pose_clip.map_joint(99, &mut pose, |_| BonePose::default());
}

#[test]
fn a_joint_changed_after_sampling_keeps_or_takes_its_scale() {
    // `map_joint` on a pose whose scales are all 1 (the SA walk's): `f` is handed a scale of 1;
    // a scale `f` sets is written, and the pose then has scales (which `local_to_model` must not
    // skip). Where the pose has scales, `f` gets the joint's own.
    let (flat, _, pose_clip) = sa_walk_on_its_skeleton();
    let mut pose = LocalPose::default();
    sample(
        &pose_clip,
        0.25,
        &mut PoseCursor::new(&pose_clip),
        &mut pose,
    );
    let mut model = vec![Affine3A::IDENTITY; flat.len()];
    local_to_model(&flat, &pose, &mut model);
    let unscaled = model.clone();

    // Scale 1 handed over and kept: the pose as it was, but for the rotation.
    let turn = Quat::from_rotation_y(0.5);
    let mut seen = Vec3::ZERO;
    pose_clip.map_joint(0, &mut pose, |mut p| {
        seen = p.scale;
        p.rotation = turn * p.rotation;
        p
    });
    assert_eq!(seen, Vec3::ONE);
    assert_eq!(pose.get(0).scale, Vec3::ONE);
    local_to_model(&flat, &pose, &mut model);
    let turned = Affine3A::from_quat(turn);
    for (j, (m, before)) in model.iter().zip(&unscaled).enumerate() {
        // Joint 0 has no parent: every joint is turned about the root's place.
        let at = unscaled[0].translation;
        let expected = Affine3A::from_translation(at.into())
            * turned
            * Affine3A::from_translation((-at).into())
            * *before;
        assert!(
            m.abs_diff_eq(expected, 1e-4),
            "joint {j}: {m:?} against {expected:?}"
        );
    }

    // A scale of 2 set on the root: written, and every joint's model transform doubles its
    // distance from the root's place.
    pose_clip.map_joint(0, &mut pose, |mut p| {
        p.scale = Vec3::splat(2.0);
        p
    });
    assert_eq!(pose.get(0).scale, Vec3::splat(2.0));
    let turned_model = model.clone();
    local_to_model(&flat, &pose, &mut model);
    let root = turned_model[0].translation;
    for (j, (m, before)) in model.iter().zip(&turned_model).enumerate().skip(1) {
        let expected = root + (before.translation - root) * 2.0;
        assert!(
            Vec3::from(m.translation).abs_diff_eq(expected.into(), 1e-4),
            "joint {j}: {:?} against {expected:?}",
            m.translation
        );
    }

    // Now the pose has scales: `f` is handed the root's own.
    pose_clip.map_joint(0, &mut pose, |p| {
        seen = p.scale;
        p
    });
    assert_eq!(seen, Vec3::splat(2.0));
}
