//! The engine-neutral sampler against poses computed by hand.

use glam::{Quat, Vec3};
use rigplay::animation::*;

fn close(a: Quat, b: Quat, tol: f32) -> bool {
    (a.x - b.x).abs() <= tol
        && (a.y - b.y).abs() <= tol
        && (a.z - b.z).abs() <= tol
        && (a.w - b.w).abs() <= tol
}

/// One bone turning 90° about Z over 1 s, its second key stored with the opposite sign
/// (-q is the same rotation), plus a translation from (0,0,0) to (2,4,-6).
fn quarter_turn_clip() -> Clip {
    let mut b = ClipBuilder::new("turn");
    let t = b.times(&[0.0, 1.0]).unwrap();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let rotation = b
        .rotations(t, &[Quat::IDENTITY, Quat::from_xyzw(0.0, 0.0, -h, -h)])
        .unwrap();
    let translation = b
        .translations(t, &[Vec3::ZERO, Vec3::new(2.0, 4.0, -6.0)])
        .unwrap();
    b.track(BoneTrack {
        bone: BoneRef {
            name: "Root".into(),
            id: Some(0),
        },
        rotation: Some(rotation),
        translation: Some(translation),
        scale: None,
    });
    b.build()
}

#[test]
fn slerp_takes_the_short_way_across_a_sign_flip() {
    let clip = quarter_turn_clip();
    let s = clip.sample_track(0, 0.5);
    // Halfway through a 90° turn about Z: 45°, q = (0, 0, sin 22.5°, cos 22.5°).
    assert!(
        close(
            s.rotation.unwrap(),
            Quat::from_xyzw(0.0, 0.0, 0.382_683_43, 0.923_879_5),
            1e-6
        ),
        "{s:?}"
    );
    // Without flip removal the path from (0,0,0,1) to (0,0,-.707,-.707) would pass through
    // a 270° turn; at 0.5 it would be 135° about -Z.
    assert_eq!(s.translation, Some(Vec3::new(1.0, 2.0, -3.0)));
    let s = clip.sample_track(0, 0.25);
    assert_eq!(s.translation, Some(Vec3::new(0.5, 1.0, -1.5)));
    assert!(close(
        s.rotation.unwrap(),
        Quat::from_xyzw(0.0, 0.0, 0.195_090_32, 0.980_785_3),
        1e-6
    ));
}

#[test]
fn loop_wraps_and_clamp_holds() {
    let clip = quarter_turn_clip();
    assert_eq!(clip.duration(), 1.0);
    // 1.25 s looped is 0.25 s: 22.5° about Z, q = (0, 0, sin 11.25°, cos 11.25°).
    let t = clip.wrap_time(1.25, WrapMode::Loop);
    assert_eq!(t, 0.25);
    assert!(close(
        clip.sample_track(0, t).rotation.unwrap(),
        Quat::from_xyzw(0.0, 0.0, 0.195_090_32, 0.980_785_3),
        1e-6
    ));
    // -0.25 s looped is 0.75 s: 67.5°, q = (0, 0, sin 33.75°, cos 33.75°).
    let t = clip.wrap_time(-0.25, WrapMode::Loop);
    assert_eq!(t, 0.75);
    assert!(close(
        clip.sample_track(0, t).rotation.unwrap(),
        Quat::from_xyzw(0.0, 0.0, 0.555_570_2, 0.831_469_6),
        1e-6
    ));
    // Exactly one period is the start again.
    assert_eq!(clip.wrap_time(1.0, WrapMode::Loop), 0.0);
    assert_eq!(clip.wrap_time(3.0, WrapMode::Loop), 0.0);
    // Clamped: the end pose, 90° about Z (with the flipped sign removed).
    let t = clip.wrap_time(1.25, WrapMode::Clamp);
    assert_eq!(t, 1.0);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(close(
        clip.sample_track(0, t).rotation.unwrap(),
        Quat::from_xyzw(0.0, 0.0, h, h),
        1e-6
    ));
    assert_eq!(clip.wrap_time(-3.0, WrapMode::Clamp), 0.0);
    assert_eq!(clip.wrap_time(f32::NAN, WrapMode::Loop), 0.0);
}

#[test]
fn channels_hold_their_end_keys_outside_their_range() {
    let mut b = ClipBuilder::new("late");
    let long = b.times(&[0.0, 2.0]).unwrap();
    let short = b.times(&[0.5, 1.0]).unwrap();
    let a = b.translations(long, &[Vec3::ZERO, Vec3::X * 2.0]).unwrap();
    let c = b.translations(short, &[Vec3::Y, Vec3::Y * 3.0]).unwrap();
    let s = b.scales(short, &[Vec3::ONE, Vec3::splat(2.0)]).unwrap();
    for (name, translation, scale) in [("a", Some(a), None), ("c", Some(c), Some(s))] {
        b.track(BoneTrack {
            bone: BoneRef {
                name: name.into(),
                id: None,
            },
            rotation: None,
            translation,
            scale,
        });
    }
    let clip = b.build();
    assert_eq!(clip.duration(), 2.0);
    // Before its first key (0.5 s) track c holds it; after its last (1 s) it holds that.
    assert_eq!(clip.sample_track(1, 0.2).translation, Some(Vec3::Y));
    assert_eq!(clip.sample_track(1, 0.75).translation, Some(Vec3::Y * 2.0));
    assert_eq!(clip.sample_track(1, 0.75).scale, Some(Vec3::splat(1.5)));
    assert_eq!(clip.sample_track(1, 1.5).translation, Some(Vec3::Y * 3.0));
    assert_eq!(clip.sample_track(0, 1.5).translation, Some(Vec3::X * 1.5));
    assert_eq!(clip.sample_track(1, 1.5).rotation, None);
    // sample() writes only the channels a track has.
    let mut poses = [BonePose {
        rotation: Quat::from_rotation_x(1.0),
        ..BonePose::default()
    }; 2];
    clip.sample(1.5, &mut clip.cursor(), &mut poses);
    assert_eq!(poses[1].rotation, Quat::from_rotation_x(1.0));
    assert_eq!(poses[1].translation, Vec3::Y * 3.0);
    assert_eq!(poses[0].scale, Vec3::ONE);
}

#[test]
fn equal_times_make_a_step() {
    let mut b = ClipBuilder::new("step");
    let t = b.times(&[0.0, 1.0, 1.0, 2.0]).unwrap();
    let v = b
        .translations(t, &[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z])
        .unwrap();
    b.track(BoneTrack {
        bone: BoneRef {
            name: "x".into(),
            id: None,
        },
        rotation: None,
        translation: Some(v),
        scale: None,
    });
    let clip = b.build();
    assert_eq!(clip.sample_track(0, 0.5).translation, Some(Vec3::X * 0.5));
    assert_eq!(clip.sample_track(0, 1.0).translation, Some(Vec3::Y));
    assert_eq!(
        clip.sample_track(0, 1.5).translation,
        Some((Vec3::Y + Vec3::Z) * 0.5)
    );
}

#[test]
fn builder_refuses_bad_keys() {
    let mut b = ClipBuilder::new("bad");
    assert_eq!(
        b.times(&[0.0, 1.0, 0.5]),
        Err(ClipError::TimesNotSorted { key: 2, time: 0.5 })
    );
    assert_eq!(
        b.times(&[0.0, f32::NAN]).unwrap_err(),
        ClipError::NotFinite { key: 1 }
    );
    let t = b.times(&[0.0, 1.0]).unwrap();
    assert_eq!(
        b.rotations(t, &[Quat::IDENTITY]),
        Err(ClipError::LengthMismatch {
            times: 2,
            values: 1
        })
    );
    // A zero quaternion becomes identity rather than NaN.
    let r = b
        .rotations(t, &[Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), Quat::IDENTITY])
        .unwrap();
    let clip = b.build();
    assert_eq!(clip.rotation_values(r)[0], Quat::IDENTITY);
}

/// A 32-bone clip with 30 keys per bone of varied rotations.
fn busy_clip() -> Clip {
    let mut b = ClipBuilder::new("busy");
    let times: Vec<f32> = (0..30).map(|k| k as f32 / 30.0).collect();
    let t = b.times(&times).unwrap();
    for bone in 0..32 {
        let q: Vec<Quat> = (0..30)
            .map(|k| {
                Quat::from_euler(
                    glam::EulerRot::ZXY,
                    0.3 * k as f32 + bone as f32,
                    0.17 * k as f32,
                    -0.05 * (k * bone) as f32,
                )
            })
            .collect();
        let v: Vec<Vec3> = (0..30)
            .map(|k| Vec3::new(k as f32, bone as f32, (k * k) as f32 * 0.01))
            .collect();
        let rotation = Some(b.rotations(t, &q).unwrap());
        let translation = (bone == 0).then(|| b.translations(t, &v).unwrap());
        b.track(BoneTrack {
            bone: BoneRef {
                name: format!("b{bone}"),
                id: Some(bone),
            },
            rotation,
            translation,
            scale: None,
        });
    }
    b.build()
}

#[test]
fn cursor_sampling_equals_searching_in_any_order() {
    let clip = busy_clip();
    let mut cursor = clip.cursor();
    let mut poses = vec![BonePose::default(); 32];
    let forward: Vec<f32> = (0..600).map(|i| i as f32 / 500.0).collect();
    let backward: Vec<f32> = forward.iter().rev().copied().collect();
    let scattered: Vec<f32> = (0..600)
        .map(|i| ((i * 7919) % 600) as f32 / 550.0 - 0.05)
        .collect();
    for times in [forward, backward, scattered] {
        for &t in &times {
            let t = clip.wrap_time(t, WrapMode::Loop);
            clip.sample(t, &mut cursor, &mut poses);
            for (i, pose) in poses.iter().enumerate() {
                let s = clip.sample_track(i, t);
                assert_eq!(Some(pose.rotation), s.rotation);
                if let Some(tr) = s.translation {
                    assert_eq!(pose.translation, tr);
                }
            }
        }
    }
}

#[test]
fn slerp_matches_the_formula_in_double_precision() {
    // slerp(a, b; u) = (sin((1-u)θ) a + sin(uθ) b) / sin θ, computed in f64 as the reference.
    let mut worst = 0.0f64;
    for i in 0..2000 {
        let a = Quat::from_euler(
            glam::EulerRot::XYZ,
            i as f32 * 0.37,
            i as f32 * 0.11,
            i as f32 * 0.07,
        )
        .normalize();
        let mut b = Quat::from_euler(
            glam::EulerRot::XYZ,
            i as f32 * 0.13 + 0.9,
            -(i as f32) * 0.29,
            1.3,
        )
        .normalize();
        if a.dot(b) < 0.0 {
            b = -b;
        }
        let u = (i % 17) as f32 / 16.0;
        // The sampler's slerp, through a clip of the two keys one second apart.
        let mut builder = ClipBuilder::new("arc");
        let t = builder.times(&[0.0, 1.0]).unwrap();
        let rotation = builder.rotations(t, &[a, b]).unwrap();
        builder.track(BoneTrack {
            bone: BoneRef {
                name: "Root".into(),
                id: None,
            },
            rotation: Some(rotation),
            translation: None,
            scale: None,
        });
        let got = builder.build().sample_track(0, u).rotation.unwrap();
        let (a64, b64) = (a.to_array().map(f64::from), b.to_array().map(f64::from));
        let dot: f64 = (0..4).map(|c| a64[c] * b64[c]).sum::<f64>().min(1.0);
        let theta = dot.acos();
        let u = f64::from(u);
        let (wa, wb) = if theta < 1e-9 {
            (1.0 - u, u)
        } else {
            (
                ((1.0 - u) * theta).sin() / theta.sin(),
                (u * theta).sin() / theta.sin(),
            )
        };
        let got = got.to_array();
        for c in 0..4 {
            worst = worst.max((f64::from(got[c]) - (wa * a64[c] + wb * b64[c])).abs());
        }
    }
    assert!(worst < 2e-6, "worst component error {worst}");
}

/// Keys a whole f32 range apart interpolate to finite values (−3e38 to 3e38: halfway is 0,
/// where `a + (b − a)·u` would overflow to infinity).
#[test]
fn vectors_at_the_ends_of_the_f32_range_interpolate_finitely() {
    let mut b = ClipBuilder::new("far");
    let t = b.times(&[0.0, 1.0]).unwrap();
    let translation = b
        .translations(t, &[Vec3::splat(-3e38), Vec3::splat(3e38)])
        .unwrap();
    b.track(BoneTrack {
        bone: BoneRef {
            name: "Root".into(),
            id: None,
        },
        rotation: None,
        translation: Some(translation),
        scale: None,
    });
    let clip = b.build();
    let mid = clip.sample_track(0, 0.5).translation.unwrap();
    assert!(mid.is_finite() && mid.abs().max_element() < 1e32, "{mid}");
}

#[test]
fn frame_rate_is_one_over_the_finest_key_step() {
    // The quarter turn has keys 1 s apart: 1 frame per second.
    assert_eq!(quarter_turn_clip().frame_rate(), Some(1.0));
    // A rotation track keyed every 2 ticks of 1/60 s (SA's usual 30 fps) beside a translation
    // track with one gap of 4 ticks and one of 2: the finest step, 2/60 s, gives 30 fps; a
    // repeated time (a step key) does not count as a step.
    let mut b = ClipBuilder::new("sa");
    let fine = b.times(&[0.0, 2.0 / 60.0, 4.0 / 60.0]).unwrap();
    let coarse = b.times(&[0.0, 4.0 / 60.0, 4.0 / 60.0, 6.0 / 60.0]).unwrap();
    let r = b.rotations(fine, &[Quat::IDENTITY; 3]).unwrap();
    let t = b.translations(coarse, &[Vec3::ZERO; 4]).unwrap();
    for (name, rotation, translation) in [("a", Some(r), None), ("b", None, Some(t))] {
        b.track(BoneTrack {
            bone: BoneRef {
                name: name.into(),
                id: None,
            },
            rotation,
            translation,
            scale: None,
        });
    }
    let rate = b.build().frame_rate().unwrap();
    assert!((rate - 30.0).abs() < 1e-3, "{rate}");
    // One key per channel: no rate to tell.
    let mut b = ClipBuilder::new("still");
    let t = b.times(&[0.5]).unwrap();
    let r = b.rotations(t, &[Quat::IDENTITY]).unwrap();
    b.track(BoneTrack {
        bone: BoneRef {
            name: "x".into(),
            id: None,
        },
        rotation: Some(r),
        translation: None,
        scale: None,
    });
    assert_eq!(b.build().frame_rate(), None);
}

/// Root motion taken out when the clip is built: on the extracted axes every key holds the first
/// key's value, the other axes and the rotations are untouched, and the original clip keeps its
/// movement for whoever reads root motion from it.
#[test]
fn root_held_at_the_first_key_on_the_extracted_axes_only() {
    let clip = quarter_turn_clip();
    // X and Y extracted (GTA's horizontal plane), Z kept: the key (2, 4, -6) becomes (0, 0, -6);
    // halfway, (1, 2, -3) becomes (0, 0, -3).
    let held = clip.with_root_held(0, Vec3::new(1.0, 1.0, 0.0));
    let end = held.sample_track(0, 1.0).translation.unwrap();
    assert_eq!(end, Vec3::new(0.0, 0.0, -6.0));
    let mid = held.sample_track(0, 0.5).translation.unwrap();
    assert!((mid - Vec3::new(0.0, 0.0, -3.0)).length() < 1e-6, "{mid}");
    // The rotation channel is the same.
    let (a, b) = (clip.sample_track(0, 0.5), held.sample_track(0, 0.5));
    assert!(close(a.rotation.unwrap(), b.rotation.unwrap(), 0.0));
    // The source keeps its movement.
    assert_eq!(
        clip.sample_track(0, 1.0).translation.unwrap(),
        Vec3::new(2.0, 4.0, -6.0)
    );
    // Every axis held: the root stays at its first key throughout.
    let still = clip.with_root_held(0, Vec3::ONE);
    assert_eq!(still.sample_track(0, 0.7).translation.unwrap(), Vec3::ZERO);
    // Nothing to hold: no axes, a track past the end, NaN axes.
    for same in [
        clip.with_root_held(0, Vec3::ZERO),
        clip.with_root_held(5, Vec3::ONE),
        clip.with_root_held(0, Vec3::NAN),
    ] {
        assert_eq!(
            same.sample_track(0, 1.0).translation.unwrap(),
            Vec3::new(2.0, 4.0, -6.0)
        );
    }
}
