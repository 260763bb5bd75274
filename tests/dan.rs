//! DAN: hand-assembled files, the exporter simulated from its MaxScript, bad input, round trips.

use crate::bytes::Bytes;
use crate::rng::Rng;
use glam::{Quat, Vec3};
use rigplay::animation::Clip;
use rigplay::formats::Bounds;
include!("../fuzz/oracles/dan.rs");

use rigplay::formats::dan::{
    DanClipOptions, DanErrorKind, DanFile, DanTrack, DanWarning, RotationKey, VectorKey,
};

/// The 80-byte header, field by field (spec §1).
fn header(b: &mut Bytes, comment: &str, bones: i32, start_ms: f32, end_ms: f32) {
    b.i32(10)
        .fixed(comment, 64, &[])
        .i32(bones)
        .f32(start_ms)
        .f32(end_ms);
}

/// One bone: counts then keys `(time, values)`.
fn bone(
    b: &mut Bytes,
    rot: &[(i32, [f32; 4])],
    pos: &[(i32, [f32; 3])],
    scale: &[(i32, [f32; 3])],
) {
    b.i32(rot.len() as i32);
    for (t, v) in rot {
        b.i32(*t).f32s(v);
    }
    b.i32(pos.len() as i32);
    for (t, v) in pos {
        b.i32(*t).f32s(v);
    }
    b.i32(scale.len() as i32);
    for (t, v) in scale {
        b.i32(*t).f32s(v);
    }
}

fn two_bone_file() -> Vec<u8> {
    let mut b = Bytes::new();
    header(&mut b, "walk", 2, 0.0, 66.0);
    bone(
        &mut b,
        &[
            (0, [0.0, 0.0, 0.0, -1.0]),
            (66, [0.0, -0.5, 0.0, -0.8660254]),
        ],
        &[(0, [1.0, 2.0, 3.0])],
        &[],
    );
    bone(
        &mut b,
        &[],
        &[(33, [0.0, 10.0, -4.0]), (66, [0.0, 12.0, -4.0])],
        &[(0, [1.0, 1.0, 1.0])],
    );
    b.0
}

#[test]
fn a_hand_assembled_file_reads_field_by_field_and_writes_back_the_same_bytes() {
    let bytes = two_bone_file();
    // 80 header + bone 0: 4 + 2×20 + 4 + 16 + 4 = 68; bone 1: 4 + 4 + 2×16 + 4 + 16 = 60.
    assert_eq!(bytes.len(), 80 + 68 + 60);
    let read = DanFile::read(&bytes).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let f = &read.file;
    assert_eq!(f.version, 10);
    assert_eq!(f.comment_text(), "walk");
    assert_eq!((f.start_ms, f.end_ms), (0.0, 66.0));
    assert_eq!(f.bones.len(), 2);
    assert_eq!(
        f.bones[0].rotations[1],
        RotationKey {
            time_ms: 66,
            value: [0.0, -0.5, 0.0, -0.8660254]
        }
    );
    assert_eq!(
        f.bones[1].positions[0],
        VectorKey {
            time_ms: 33,
            value: [0.0, 10.0, -4.0]
        }
    );
    assert!(f.bones[1].rotations.is_empty());
    assert_eq!(f.write().unwrap(), bytes);
}

#[test]
fn the_clip_is_in_bevy_axes_seconds_from_the_start_and_lasts_the_range() {
    let mut b = Bytes::new();
    // The range starts at 100 ms: key times become seconds from there.
    header(&mut b, "", 1, 100.0, 400.0);
    // Rotation stored (0, −0.5, 0, −0.866) = Max's conj of +60° about Z, written (x, z, y, −w):
    // the Bevy value (x, y, −z, w) = (0, −0.5, 0, −0.866) ≡ (0, 0.5, 0, 0.866) = +60° about +Y.
    bone(
        &mut b,
        &[
            (100, [0.0, 0.0, 0.0, -1.0]),
            (300, [0.0, -0.5, 0.0, -0.8660254]),
        ],
        &[(200, [1.0, 2.0, 3.0])],
        &[(100, [2.0, 3.0, 4.0])],
    );
    let file = DanFile::read(&b.0).unwrap().file;
    let clip: Clip = file.to_clip(
        "c",
        &DanClipOptions {
            scale: 0.01,
            names: vec!["Hips".into()],
        },
    );
    // Range 100..400 ms lasts 0.3 s although the last key is at 300 ms.
    assert!((clip.duration() - 0.3).abs() < 1e-6);
    assert_eq!(clip.tracks()[0].bone.name, "Hips");
    let at_end = clip.sample_track(0, 0.2);
    let r = at_end.rotation.unwrap();
    assert!(
        same_rotation(r, Quat::from_rotation_y(60f32.to_radians()), 1e-6),
        "{r}"
    );
    // Halfway in time (0.1 s of 0.2 s) the slerp is at 30°.
    let half = clip.sample_track(0, 0.1).rotation.unwrap();
    assert!(half.angle_between(Quat::IDENTITY) - 30f32.to_radians() < 1e-5);
    // Position (x, y, −z) × 0.01 = (0.01, 0.02, −0.03); scale unchanged.
    assert!(
        at_end
            .translation
            .unwrap()
            .abs_diff_eq(Vec3::new(0.01, 0.02, -0.03), 1e-7)
    );
    assert_eq!(at_end.scale.unwrap(), Vec3::new(2.0, 3.0, 4.0));
}

// ---------------------------------------------------------------------------------------------
// The exporter, simulated: DelDX_Anim_Export.ms sampling known Max-space transforms.

/// A true (right-handed) Max-space transform of one bone at one frame.
#[derive(Clone, Copy, PartialEq)]
struct MaxTransform {
    rotation: Quat,
    position: Vec3,
    scale: Vec3,
}

/// A MaxScript key `TTimeAndValue`: time in frames, value as MaxScript reports it.
#[derive(Clone, Copy, PartialEq)]
struct MsKey<V> {
    time: i32,
    value: V,
}

/// The exporter's per-sample append with its reduction, 1-based arrays emulated exactly:
/// `if (list[count-1].Value == v) and (list[count].Value == v) then list[count-1].Time = t`.
fn maxscript_append<V: PartialEq + Copy>(list: &mut Vec<MsKey<V>>, key: MsKey<V>) {
    let count = list.len();
    if count <= 1 {
        list.push(key);
    } else if list[count - 2].value == key.value && list[count - 1].value == key.value {
        // MaxScript's list[count-1] is the second-to-last element: the defect.
        list[count - 2].time = key.time;
    } else {
        list.push(key);
    }
}

/// The exporter's final step: `if (count > 1) and (list[count-1].Value == list[count].Value)`
/// delete the last.
fn maxscript_finish<V: PartialEq + Copy>(list: &mut Vec<MsKey<V>>) {
    let count = list.len();
    if count > 1 && list[count - 2].value == list[count - 1].value {
        list.pop();
    }
}

/// Writes a .dan exactly as the MaxScript does: at 30 fps `TickToMS = 160 × 1000 / 4800 = 33`
/// (integer), times `frame × 33`, rotations `(m.x, m.z, m.y, −m.w)` of MaxScript's quaternion
/// `m = conj(true rotation)`, positions and scales `(x, z, y)`.
fn maxscript_export(frames: &[Vec<MaxTransform>], comment: &str) -> Vec<u8> {
    const TICK_TO_MS: i32 = 160 * 1000 / 4800;
    let last = frames.len() as i32 - 1;
    let bones = frames[0].len();
    let mut b = Bytes::new();
    header(
        &mut b,
        comment,
        bones as i32,
        0.0,
        (last * TICK_TO_MS) as f32,
    );
    for bone_index in 0..bones {
        let (mut r, mut t, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for (frame, pose) in frames.iter().enumerate() {
            let p = pose[bone_index];
            let time = frame as i32;
            let m = p.rotation.conjugate();
            maxscript_append(
                &mut r,
                MsKey {
                    time,
                    value: [m.x, m.y, m.z, m.w],
                },
            );
            maxscript_append(
                &mut t,
                MsKey {
                    time,
                    value: p.position.to_array(),
                },
            );
            maxscript_append(
                &mut s,
                MsKey {
                    time,
                    value: p.scale.to_array(),
                },
            );
        }
        maxscript_finish(&mut r);
        maxscript_finish(&mut t);
        maxscript_finish(&mut s);
        b.i32(r.len() as i32);
        for k in &r {
            let [x, y, z, w] = k.value;
            b.i32(k.time * TICK_TO_MS).f32s(&[x, z, y, -w]);
        }
        for list in [&t, &s] {
            b.i32(list.len() as i32);
            for k in list.iter() {
                let [x, y, z] = k.value;
                b.i32(k.time * TICK_TO_MS).f32s(&[x, z, y]);
            }
        }
    }
    b.0
}

/// Three bones over frames 0..=20: bone 0 holds still for 5 frames then turns about Max +Z,
/// reaching +90° at frame 20; bone 1 waits 3 frames then moves along Max +Y at 2 units a
/// frame; bone 2 scales its Max X and Y by 1 + 0.1 per frame from frame 10. Every constant run
/// starts at frame 0, where the exporter's defect loses nothing (see the test after).
fn scene(frame: usize) -> Vec<MaxTransform> {
    let f = frame as f32;
    let turn = ((f - 5.0) / 15.0).clamp(0.0, 1.0) * 90f32.to_radians();
    let moved = (f - 3.0).max(0.0) * 2.0;
    let grow = 1.0 + (f - 10.0).max(0.0) * 0.1;
    vec![
        MaxTransform {
            rotation: Quat::from_rotation_z(turn),
            position: Vec3::new(1.0, 2.0, 3.0),
            scale: Vec3::ONE,
        },
        MaxTransform {
            rotation: Quat::IDENTITY,
            position: Vec3::new(0.0, moved, 0.0),
            scale: Vec3::ONE,
        },
        MaxTransform {
            rotation: Quat::IDENTITY,
            position: Vec3::ZERO,
            scale: Vec3::new(grow, grow, 1.0),
        },
    ]
}

/// `a` and `b` are the same rotation (q and −q are) within `eps` per component.
fn same_rotation(a: Quat, b: Quat, eps: f32) -> bool {
    a.abs_diff_eq(b, eps) || a.abs_diff_eq(-b, eps)
}

#[test]
fn exporter_output_with_backwards_times_reads_with_a_warning_and_poses_exactly() {
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    let bytes = maxscript_export(&frames, "DelDX test");
    let read = DanFile::read(&bytes).unwrap();
    // Bone 0's rotation: frames 0..5 constant → keys A@0, A@1 then A@2 overwrites the first:
    // A@5, A@1 — its second key's time (33 ms) is earlier than its first (165 ms).
    let r0 = &read.file.bones[0].rotations;
    assert_eq!((r0[0].time_ms, r0[1].time_ms), (5 * 33, 33));
    assert!(read.warnings.iter().any(|w| matches!(
        w,
        DanWarning::TimesNotSorted {
            bone: 0,
            track: DanTrack::Rotation,
            key: 1,
            ..
        }
    )));
    // Bone 0's position never changes: the exporter leaves a single key (at the last frame).
    assert_eq!(read.file.bones[0].positions.len(), 1);
    assert_eq!(read.file.end_ms, 660.0);

    let clip = read.file.to_clip("test", &DanClipOptions::default());
    assert!((clip.duration() - 0.66).abs() < 1e-6);
    for (frame, pose) in frames.iter().enumerate() {
        let t = frame as f32 * 0.033;
        for (b, max) in pose.iter().enumerate() {
            let s = clip.sample_track(b, t);
            // Expected Bevy values from the Max values by the spec's axes: +θ about Max Z is
            // +θ about Bevy Y; Max (X, Y, Z) is Bevy (X, Z, −Y); scale (sX, sZ, sY).
            let (axis, angle) = max.rotation.to_axis_angle();
            let expected_rot = Quat::from_axis_angle(Vec3::new(axis.x, axis.z, -axis.y), angle);
            let expected_pos = Vec3::new(max.position.x, max.position.z, -max.position.y);
            let expected_scale = Vec3::new(max.scale.x, max.scale.z, max.scale.y);
            let rot = s.rotation.unwrap_or(Quat::IDENTITY);
            assert!(
                same_rotation(rot, expected_rot, 1e-5),
                "bone {b} frame {frame}: {rot} vs {expected_rot}"
            );
            assert!(
                s.translation.unwrap().abs_diff_eq(expected_pos, 1e-5),
                "bone {b} frame {frame}: {:?} vs {expected_pos}",
                s.translation
            );
            assert!(s.scale.unwrap().abs_diff_eq(expected_scale, 1e-5));
        }
    }
    // Bone 0 at frame 20 is +90° about Bevy +Y: its +X axis points to Bevy −Z.
    let r = clip.sample_track(0, 20.0 * 0.033).rotation.unwrap();
    assert!((r * Vec3::X).abs_diff_eq(Vec3::NEG_Z, 1e-5));
    // Bone 1 at frame 8 has moved 10 units along Max +Y: Bevy −Z.
    let p = clip.sample_track(1, 8.0 * 0.033).translation.unwrap();
    assert!(p.abs_diff_eq(Vec3::new(0.0, 0.0, -10.0), 1e-5));
}

/// Spec §3 says the backwards keys leave the pose unaffected. Running the exporter's logic
/// shows otherwise for a constant run that does not start at frame 0: the run's first key is
/// moved to the run's last frame and the key after it is the run's *second* frame, so the
/// run's first frame is lost; and a run at the end keeps only its last frame.
#[test]
fn the_exporters_defect_loses_the_first_frame_of_a_later_constant_run() {
    // Max Y per frame: 0 1 2 3 3 3 3 3 4 5 (a run of 3 over frames 3..=7).
    let ys = [0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 4.0, 5.0];
    let frames: Vec<Vec<MaxTransform>> = ys
        .iter()
        .map(|&y| {
            vec![MaxTransform {
                rotation: Quat::IDENTITY,
                position: Vec3::new(0.0, y, 0.0),
                scale: Vec3::ONE,
            }]
        })
        .collect();
    let read = DanFile::read(&maxscript_export(&frames, "")).unwrap();
    // f5: keys 2@2, 3@3, 3@4 → 3@3's time becomes 5; f6, f7 likewise: …, 3@7, 3@4, then 4@8.
    let times: Vec<i32> = read.file.bones[0]
        .positions
        .iter()
        .map(|k| k.time_ms)
        .collect();
    assert_eq!(times, vec![0, 33, 66, 7 * 33, 4 * 33, 8 * 33, 9 * 33]);
    let clip = read.file.to_clip("c", &DanClipOptions::default());
    // Frame 3 (99 ms) lies between 2@66 and 3@132 after sorting: Max Y 2.5, Bevy z −2.5,
    // where Max had 3.
    let p = clip.sample_track(0, 0.099).translation.unwrap();
    assert!((p.z - -2.5).abs() < 1e-5, "{p}");
    // Frames 4..=7 are right.
    let p = clip.sample_track(0, 0.165).translation.unwrap();
    assert!((p.z - -3.0).abs() < 1e-6);

    // A run at the end: Max Y 0 1 2 2 2 keeps only 2@4 and interpolates from 1@1.
    let frames: Vec<Vec<MaxTransform>> = [0.0, 1.0, 2.0, 2.0, 2.0]
        .iter()
        .map(|&y| {
            vec![MaxTransform {
                rotation: Quat::IDENTITY,
                position: Vec3::new(0.0, y, 0.0),
                scale: Vec3::ONE,
            }]
        })
        .collect();
    let read = DanFile::read(&maxscript_export(&frames, "")).unwrap();
    let times: Vec<i32> = read.file.bones[0]
        .positions
        .iter()
        .map(|k| k.time_ms)
        .collect();
    assert_eq!(times, vec![0, 33, 132]);
    let clip = read.file.to_clip("c", &DanClipOptions::default());
    // Frame 2 (66 ms): between 1@33 and 2@132, a third of the way: 1.333 instead of 2.
    let p = clip.sample_track(0, 0.066).translation.unwrap();
    assert!((p.z - -(1.0 + 1.0 / 3.0)).abs() < 1e-5, "{p}");
}

#[test]
fn sorting_is_stable_and_the_file_keeps_its_order() {
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    let bytes = maxscript_export(&frames, "");
    let file = DanFile::read(&bytes).unwrap().file;
    // The file model keeps the order as written, so that it writes back the same bytes.
    assert_eq!(file.write().unwrap(), bytes);
    let sorted = file.sorted();
    for bone in &sorted.bones {
        assert!(
            bone.rotations
                .windows(2)
                .all(|w| w[0].time_ms <= w[1].time_ms)
        );
        assert!(
            bone.positions
                .windows(2)
                .all(|w| w[0].time_ms <= w[1].time_ms)
        );
    }
    assert_eq!(sorted.key_count(), file.key_count());
}

// ---------------------------------------------------------------------------------------------
// Bad input.

#[test]
fn truncation_at_every_byte_is_an_error_at_or_before_the_cut() {
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    for bytes in [two_bone_file(), maxscript_export(&frames, "x")] {
        for cut in 0..bytes.len() {
            let e = DanFile::read(&bytes[..cut]).expect_err("a cut file is an error");
            assert!(e.offset <= cut as u64, "cut {cut}: {e}");
            assert!(
                matches!(
                    e.kind,
                    DanErrorKind::Bounds(Bounds::Truncated { .. })
                        | DanErrorKind::Bounds(Bounds::CountTooLarge { .. })
                ),
                "cut {cut}: {e}"
            );
        }
    }
}

#[test]
fn counts_are_checked_against_the_bytes_left_before_allocating() {
    let mut b = Bytes::new();
    header(&mut b, "", 1_000_000_000, 0.0, 0.0);
    let e = DanFile::read(&b.0).unwrap_err();
    assert_eq!(e.offset, 68);
    assert!(
        matches!(
            e.kind,
            DanErrorKind::Bounds(Bounds::CountTooLarge {
                what: "bone",
                count: 1_000_000_000,
                min_each: 12,
                ..
            })
        ),
        "{e}"
    );

    let mut b = Bytes::new();
    header(&mut b, "", 2, 0.0, 0.0);
    bone(&mut b, &[], &[], &[]);
    // Bone 1: 0 rotations, then i32::MAX position keys with 8 bytes left.
    b.i32(0).i32(i32::MAX).i32(0).i32(0);
    let e = DanFile::read(&b.0).unwrap_err();
    // The count itself: 80 + bone 0 (12) + bone 1's rotation count (4) = 96.
    assert_eq!(e.offset, 96);
    assert_eq!(e.location.bone, Some(1));
    assert_eq!(e.location.track, Some(DanTrack::Position));
    assert!(
        matches!(
            e.kind,
            DanErrorKind::Bounds(Bounds::CountTooLarge {
                min_each: 16,
                bytes_left: 8,
                ..
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("bone #1 position"), "{e}");

    let mut b = Bytes::new();
    header(&mut b, "", 1, 0.0, 0.0);
    b.i32(-3).i32(0).i32(0);
    let e = DanFile::read(&b.0).unwrap_err();
    assert_eq!(e.offset, 80);
    assert!(matches!(
        e.kind,
        DanErrorKind::Bounds(Bounds::NegativeCount { value: -3, .. })
    ));

    let mut b = Bytes::new();
    header(&mut b, "", -1, 0.0, 0.0);
    assert!(matches!(
        DanFile::read(&b.0).unwrap_err().kind,
        DanErrorKind::Bounds(Bounds::NegativeCount { .. })
    ));
}

#[test]
fn nan_and_infinity_name_the_bone_track_and_key() {
    let mut b = Bytes::new();
    header(&mut b, "", 2, 0.0, 0.0);
    bone(&mut b, &[], &[], &[]);
    bone(
        &mut b,
        &[],
        &[],
        &[(0, [1.0, 1.0, 1.0]), (33, [1.0, f32::INFINITY, 1.0])],
    );
    let e = DanFile::read(&b.0).unwrap_err();
    // 80 + bone 0 (12) + bone 1: 4 + 4 + 4 + key 0 (16) = 120 is key 1, whose values start at
    // 124; the infinity is its second value, at 128.
    assert_eq!(e.offset, 128);
    assert_eq!(e.location.bone, Some(1));
    assert_eq!(e.location.track, Some(DanTrack::Scale));
    assert_eq!(e.location.key, Some(1));
    assert!(matches!(e.kind, DanErrorKind::NotFinite { .. }));

    let mut b = Bytes::new();
    header(&mut b, "", 1, 0.0, 0.0);
    bone(&mut b, &[(0, [f32::NAN, 0.0, 0.0, 1.0])], &[], &[]);
    let e = DanFile::read(&b.0).unwrap_err();
    assert_eq!(
        (e.location.track, e.location.key),
        (Some(DanTrack::Rotation), Some(0))
    );
}

#[test]
fn other_versions_are_refused_and_trailing_bytes_are_kept_with_a_warning() {
    let mut bytes = two_bone_file();
    bytes[0] = 11;
    let e = DanFile::read(&bytes).unwrap_err();
    assert_eq!(e.kind, DanErrorKind::UnsupportedVersion { found: 11 });

    let mut bytes = two_bone_file();
    bytes.extend_from_slice(b"junk");
    let read = DanFile::read(&bytes).unwrap();
    assert_eq!(
        read.warnings,
        vec![DanWarning::TrailingBytes {
            offset: 208,
            count: 4
        }]
    );
    assert_eq!(read.file.trailing, b"junk");
    assert_eq!(read.file.write().unwrap(), bytes);
}

#[test]
fn zero_keys_leave_the_channel_out_and_a_legacy_comment_is_kept_byte_for_byte() {
    let mut b = Bytes::new();
    b.i32(10);
    // "걷기" in CP949 (0xB0 0xC8 0xB1 0xE2), then zero fill, then stale bytes after the NUL.
    let mut comment = [0u8; 64];
    comment[..4].copy_from_slice(&[0xB0, 0xC8, 0xB1, 0xE2]);
    comment[10] = 0x55;
    b.raw(&comment).i32(1).f32(0.0).f32(33.0);
    bone(&mut b, &[], &[(0, [1.0, 2.0, 3.0])], &[]);
    let file = DanFile::read(&b.0).unwrap().file;
    assert_eq!(file.comment, comment);
    assert_eq!(file.comment_text().chars().count(), 4);
    assert_eq!(file.write().unwrap(), b.0);
    let clip = file.to_clip("c", &DanClipOptions::default());
    let t = &clip.tracks()[0];
    assert!(t.rotation.is_none() && t.scale.is_none() && t.translation.is_some());
    assert_eq!(t.bone.name, "bone_0");
}

// ---------------------------------------------------------------------------------------------
// Our writer.

#[test]
fn random_files_round_trip_through_writer_and_reader() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..200 {
        let mut file = DanFile::new();
        file.set_comment("round trip");
        file.start_ms = rng.range(-10.0, 10.0);
        file.end_ms = rng.range(-10.0, 10.0) * 100.0;
        for _ in 0..rng.below(6) {
            let mut bone = rigplay::formats::dan::DanBone::default();
            for _ in 0..rng.below(7) {
                bone.rotations.push(RotationKey {
                    time_ms: rng.next() as i32,
                    value: std::array::from_fn(|_| rng.range(-10.0, 10.0)),
                });
            }
            for _ in 0..rng.below(7) {
                bone.positions.push(VectorKey {
                    time_ms: rng.next() as i32,
                    value: std::array::from_fn(|_| rng.range(-10.0, 10.0)),
                });
            }
            for _ in 0..rng.below(4) {
                bone.scales.push(VectorKey {
                    time_ms: rng.next() as i32,
                    value: std::array::from_fn(|_| rng.range(-10.0, 10.0)),
                });
            }
            file.bones.push(bone);
        }
        let bytes = file.write().unwrap();
        let read = DanFile::read(&bytes).unwrap();
        assert_eq!(read.file, file);
        assert_eq!(read.file.write().unwrap(), bytes);
    }
}

#[test]
fn a_clip_written_as_dan_reads_back_as_the_same_clip() {
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    let original = DanFile::read(&maxscript_export(&frames, "")).unwrap().file;
    let options = DanClipOptions {
        scale: 0.01,
        names: vec![],
    };
    let clip = original.to_clip("c", &options);
    let file = DanFile::from_clip(&clip, &options).unwrap();
    let again = DanFile::read(&file.write().unwrap()).unwrap();
    assert!(again.warnings.is_empty());
    let clip2 = again.file.to_clip("c", &options);
    assert!((clip2.duration() - clip.duration()).abs() < 1e-6);
    for frame in 0..=20 {
        let t = frame as f32 * 0.033;
        for b in 0..3 {
            let (a, c) = (clip.sample_track(b, t), clip2.sample_track(b, t));
            assert!(a.rotation.unwrap().abs_diff_eq(c.rotation.unwrap(), 1e-6));
            assert!(
                a.translation
                    .unwrap()
                    .abs_diff_eq(c.translation.unwrap(), 1e-6)
            );
            assert!(a.scale.unwrap().abs_diff_eq(c.scale.unwrap(), 1e-6));
        }
    }
}

/// Seeds for the fuzzer and inputs it found bugs with, replayed through its oracle.
#[test]
fn fuzz_seeds_and_regressions_pass_the_oracle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["fuzz/seeds/dan_read", "tests/fuzz_regressions/dan"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            check_dan(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
    }
    assert!(n >= 3, "seed files");
    // And the files made here.
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    check_dan(&maxscript_export(&frames, "x"));
    check_dan(&two_bone_file());
}

/// Writes the fuzzer's seeds (run with `--ignored` after changing the fixtures).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/dan_read");
    std::fs::create_dir_all(&dir).unwrap();
    let frames: Vec<Vec<MaxTransform>> = (0..=20).map(scene).collect();
    std::fs::write(dir.join("exporter.dan"), maxscript_export(&frames, "seed")).unwrap();
    std::fs::write(dir.join("two_bones.dan"), two_bone_file()).unwrap();
    let mut trailing = two_bone_file();
    trailing.extend_from_slice(b"tail");
    std::fs::write(dir.join("trailing.dan"), trailing).unwrap();
}
