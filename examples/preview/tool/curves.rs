//! The curves of one bone's track over a clip, for the preview's plot: its rotation as Euler
//! angles (degrees, unwrapped so that they do not jump at ±180° where another equivalent angle
//! continues the curve) or as the four quaternion components, and its translation, sampled
//! densely and at every key.

use bevy::math::{EulerRot, Quat};
use rigplay::animation::Clip;

/// How the rotation is plotted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CurveMode {
    /// Euler angles X, Y, Z in degrees (`EulerRot::XYZ`), unwrapped.
    #[default]
    Euler,
    /// The quaternion's x, y, z, w, each sample on the hemisphere of the one before.
    Quaternion,
}

impl CurveMode {
    pub const ALL: [CurveMode; 2] = [CurveMode::Euler, CurveMode::Quaternion];

    pub fn label(self) -> &'static str {
        match self {
            CurveMode::Euler => "Euler XYZ (°)",
            CurveMode::Quaternion => "quaternion",
        }
    }
}

/// The sampled curves of a track.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Curves {
    /// Sample times, increasing.
    pub times: Vec<f32>,
    /// One series per component (3 Euler angles or 4 quaternion components), a value per
    /// sample time; empty when the track has no rotation keys.
    pub rotation: Vec<Vec<f32>>,
    /// X, Y, Z, a value per sample time; empty when the track has no translation keys.
    pub translation: Vec<Vec<f32>>,
    /// Key times of the rotation channel.
    pub rotation_keys: Vec<f32>,
    /// Key times of the translation channel.
    pub translation_keys: Vec<f32>,
    /// Keys per channel: rotation, translation, scale (0 for a channel the track lacks).
    pub key_counts: [usize; 3],
}

/// `samples` times evenly over `0..=duration`, with `extra` times (the keys) inside it merged
/// in, sorted, each once. A duration that is not finite or not positive gives `[0]`.
pub fn sample_times(duration: f32, samples: usize, extra: &[f32]) -> Vec<f32> {
    if !(duration.is_finite() && duration > 0.0) {
        return vec![0.0];
    }
    let n = samples.max(2);
    let mut times: Vec<f32> = (0..n)
        .map(|i| duration * i as f32 / (n - 1) as f32)
        .chain(
            extra
                .iter()
                .copied()
                .filter(|t| (0.0..=duration).contains(t)),
        )
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}

/// The curves of `track` of `clip` over `0..=duration` (`samples` even samples plus every key
/// time); `None` when the clip has no such track.
pub fn curves(
    clip: &Clip,
    track: usize,
    duration: f32,
    samples: usize,
    mode: CurveMode,
) -> Option<Curves> {
    let t = clip.tracks().get(track)?;
    let keys =
        |c: Option<rigplay::animation::Channel>| c.map_or(&[][..], |c| clip.times(c)).to_vec();
    let (rotation_keys, translation_keys) = (keys(t.rotation), keys(t.translation));
    let key_counts = [t.rotation, t.translation, t.scale].map(|c| c.map_or(0, |c| c.len()));
    let extra: Vec<f32> = rotation_keys
        .iter()
        .chain(&translation_keys)
        .copied()
        .collect();
    let times = sample_times(duration, samples, &extra);
    let sampled: Vec<_> = times.iter().map(|&s| clip.sample_track(track, s)).collect();
    let rotations: Option<Vec<Quat>> = sampled.iter().map(|s| s.rotation).collect();
    let rotation = match (rotations, mode) {
        (None, _) => Vec::new(),
        (Some(q), CurveMode::Euler) => transpose(&euler_curve(&q)),
        (Some(q), CurveMode::Quaternion) => transpose(
            &quaternion_curve(&q)
                .iter()
                .map(|q| q.to_array())
                .collect::<Vec<_>>(),
        ),
    };
    let translation = match sampled
        .iter()
        .map(|s| s.translation)
        .collect::<Option<Vec<_>>>()
    {
        None => Vec::new(),
        Some(v) => transpose(&v.iter().map(|v| v.to_array()).collect::<Vec<_>>()),
    };
    Some(Curves {
        times,
        rotation,
        translation,
        rotation_keys,
        translation_keys,
        key_counts,
    })
}

fn transpose<const N: usize>(rows: &[[f32; N]]) -> Vec<Vec<f32>> {
    (0..N)
        .map(|i| rows.iter().map(|r| r[i]).collect())
        .collect()
}

/// A rotation as Euler angles X, Y, Z in degrees (`EulerRot::XYZ`; Y within ±90°).
pub fn euler_xyz_degrees(q: Quat) -> [f32; 3] {
    let (x, y, z) = q.to_euler(EulerRot::XYZ);
    [x.to_degrees(), y.to_degrees(), z.to_degrees()]
}

/// `angle` plus the multiple of 360° that brings it nearest `previous` (degrees).
pub fn unwrap_angle(previous: f32, angle: f32) -> f32 {
    if !(previous.is_finite() && angle.is_finite()) {
        return angle;
    }
    angle + ((previous - angle) / 360.0).round() * 360.0
}

/// The Euler angles of `rotation` nearest `previous`: among the equivalent angles (each plus
/// multiples of 360°; the other solution (x + 180°, 180° − y, z + 180°); and, at Y = ±90° where
/// only x + z or x − z is defined, the split of that sum nearest `previous`), the ones whose
/// summed distance to `previous` is smallest.
pub fn unwrap_euler(previous: [f32; 3], rotation: Quat) -> [f32; 3] {
    let [x, y, z] = euler_xyz_degrees(rotation);
    let mut candidates = vec![[x, y, z], [x + 180.0, 180.0 - y, z + 180.0]];
    if 90.0 - y.abs() < 0.5 {
        // Gimbal lock: keep whichever of x + z and x − z the rotation fixes, and move x and z
        // by halves of its change from `previous`.
        let [px, _, pz] = previous;
        let sum = unwrap_angle(px + pz, x + z);
        let dx = (sum - px - pz) * 0.5;
        candidates.push([px + dx, y, pz + dx]);
        let diff = unwrap_angle(px - pz, x - z);
        let dx = (diff - px + pz) * 0.5;
        candidates.push([px + dx, y, pz - dx]);
        candidates.retain(|&c| same_rotation(rotation, from_euler_degrees(c)));
    }
    candidates
        .into_iter()
        .map(|[a, b, c]| {
            let u = [
                unwrap_angle(previous[0], a),
                unwrap_angle(previous[1], b),
                unwrap_angle(previous[2], c),
            ];
            let d: f32 = (0..3).map(|i| (u[i] - previous[i]).abs()).sum();
            (u, d)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or([x, y, z], |(u, _)| u)
}

/// The rotation of Euler angles X, Y, Z in degrees (`EulerRot::XYZ`).
pub fn from_euler_degrees([x, y, z]: [f32; 3]) -> Quat {
    Quat::from_euler(
        EulerRot::XYZ,
        x.to_radians(),
        y.to_radians(),
        z.to_radians(),
    )
}

/// Whether two unit quaternions are the same rotation, within about 0.2°.
fn same_rotation(a: Quat, b: Quat) -> bool {
    a.dot(b).abs() > 1.0 - 1e-6
}

/// The Euler angles of successive rotations, each unwrapped against the one before.
pub fn euler_curve(rotations: &[Quat]) -> Vec<[f32; 3]> {
    let mut out: Vec<[f32; 3]> = Vec::with_capacity(rotations.len());
    for &q in rotations {
        out.push(match out.last() {
            Some(&prev) if prev.iter().all(|a| a.is_finite()) => unwrap_euler(prev, q),
            _ => euler_xyz_degrees(q),
        });
    }
    out
}

/// Successive rotations, each negated when that brings it nearer the one before (the same
/// rotation either way), so that the components do not jump.
pub fn quaternion_curve(rotations: &[Quat]) -> Vec<Quat> {
    let mut out: Vec<Quat> = Vec::with_capacity(rotations.len());
    for &q in rotations {
        out.push(match out.last() {
            Some(prev) if prev.dot(q) < 0.0 => -q,
            _ => q,
        });
    }
    out
}

/// The range a plot of these series shows: their finite minimum and maximum, widened to at
/// least `min_span` around a flat curve; `None` when no value is finite.
pub fn value_range(series: &[Vec<f32>], min_span: f32) -> Option<(f32, f32)> {
    let (lo, hi) = series.iter().flatten().filter(|v| v.is_finite()).fold(
        None,
        |acc: Option<(f32, f32)>, &v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        },
    )?;
    let span = min_span.abs().max(f32::EPSILON);
    if hi - lo < span {
        let mid = lo * 0.5 + hi * 0.5;
        Some((mid - span * 0.5, mid + span * 0.5))
    } else {
        Some((lo, hi))
    }
}

/// The value of a series at time `t`, linear between samples and held beyond the ends; `None`
/// for an empty series.
pub fn value_at(times: &[f32], values: &[f32], t: f32) -> Option<f32> {
    let n = times.len().min(values.len());
    if n == 0 {
        return None;
    }
    let i = times[..n].partition_point(|&s| s < t);
    if i == 0 {
        return Some(values[0]);
    }
    if i == n {
        return Some(values[n - 1]);
    }
    let (t0, t1) = (times[i - 1], times[i]);
    let u = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
    Some(values[i - 1] + (values[i] - values[i - 1]) * u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec3;
    use rigplay::animation::{BoneRef, BoneTrack, ClipBuilder};

    fn from_degrees(e: [f32; 3]) -> Quat {
        from_euler_degrees(e)
    }

    #[test]
    fn angles_unwrap_to_the_nearest_turn() {
        assert_eq!(unwrap_angle(170.0, -170.0), 190.0);
        assert_eq!(unwrap_angle(-170.0, 170.0), -190.0);
        assert_eq!(unwrap_angle(700.0, 0.0), 720.0);
        assert_eq!(unwrap_angle(10.0, 20.0), 20.0);
        assert!(unwrap_angle(f32::NAN, 20.0) == 20.0);
    }

    #[test]
    fn the_other_euler_solution_is_the_same_rotation() {
        for e in [
            [10.0, 20.0, 30.0],
            [-100.0, 80.0, 170.0],
            [45.0, -89.0, -45.0],
        ] {
            let [x, y, z] = e;
            assert!(same_rotation(
                from_degrees(e),
                from_degrees([x + 180.0, 180.0 - y, z + 180.0])
            ));
            let back = euler_xyz_degrees(from_degrees(e));
            assert!(same_rotation(from_degrees(back), from_degrees(e)));
        }
    }

    #[test]
    fn a_full_turn_about_x_is_one_straight_line() {
        let qs: Vec<Quat> = (0..=72)
            .map(|i| Quat::from_rotation_x((i as f32 * 5.0).to_radians()))
            .collect();
        let e = euler_curve(&qs);
        for (i, a) in e.iter().enumerate() {
            assert!((a[0] - i as f32 * 5.0).abs() < 1e-2, "{i}: {a:?}");
            assert!(a[1].abs() < 1e-3 && a[2].abs() < 1e-3, "{i}: {a:?}");
        }
    }

    #[test]
    fn a_turn_through_the_poles_of_y_does_not_flip_x_and_z() {
        // Y past ±90°: the canonical angles jump to (x ± 180, ±180 − y, z ± 180), and at ±90°
        // exactly only x + z or x − z is defined; the curve goes straight on.
        for sign in [1.0f32, -1.0] {
            let qs: Vec<Quat> = (0..=40)
                .map(|i| from_degrees([10.0, sign * (60.0 + i as f32 * 1.5), 20.0]))
                .collect();
            let e = euler_curve(&qs);
            for (i, a) in e.iter().enumerate() {
                let want = [10.0, sign * (60.0 + i as f32 * 1.5), 20.0];
                assert!(
                    (0..3).all(|k| (a[k] - want[k]).abs() < 0.05),
                    "{i}: {a:?}, not {want:?}"
                );
            }
            for (q, a) in qs.iter().zip(&e) {
                assert!(same_rotation(*q, from_degrees(*a)));
            }
        }
    }

    #[test]
    fn quaternions_stay_on_one_hemisphere() {
        let q = Quat::from_rotation_y(1.0);
        let out = quaternion_curve(&[q, -q, q]);
        assert_eq!(out, [q, q, q]);
    }

    #[test]
    fn sample_times_include_the_keys_and_survive_zero_durations() {
        assert_eq!(sample_times(0.0, 200, &[0.0, 1.0]), [0.0]);
        assert_eq!(sample_times(f32::NAN, 200, &[]), [0.0]);
        assert_eq!(
            sample_times(1.0, 3, &[0.25, 0.5, 2.0, f32::NAN]),
            [0.0, 0.25, 0.5, 1.0]
        );
        assert_eq!(sample_times(1.0, 0, &[]), [0.0, 1.0]);
    }

    #[test]
    fn ranges_widen_flat_curves_and_skip_non_finite_values() {
        assert_eq!(value_range(&[], 1.0), None);
        assert_eq!(value_range(&[vec![f32::NAN]], 1.0), None);
        assert_eq!(value_range(&[vec![2.0, 2.0]], 1.0), Some((1.5, 2.5)));
        assert_eq!(
            value_range(&[vec![0.0, f32::INFINITY], vec![-3.0]], 1.0),
            Some((-3.0, 0.0))
        );
    }

    #[test]
    fn values_between_samples_are_linear_and_held_past_the_ends() {
        let (t, v) = ([0.0, 1.0, 1.0, 2.0], [0.0, 10.0, 20.0, 40.0]);
        assert_eq!(value_at(&t, &v, -1.0), Some(0.0));
        assert_eq!(value_at(&t, &v, 0.5), Some(5.0));
        assert_eq!(value_at(&t, &v, 1.5), Some(30.0));
        assert_eq!(value_at(&t, &v, 9.0), Some(40.0));
        assert_eq!(value_at(&[], &[], 0.0), None);
    }

    fn clip() -> Clip {
        let mut b = ClipBuilder::new("turn");
        let times = b.times(&[0.0, 0.5, 1.0]).unwrap();
        let rotation = b
            .rotations(
                times,
                &[0.0f32, 170.0, 340.0].map(|d| Quat::from_rotation_z(d.to_radians())),
            )
            .unwrap();
        let t2 = b.times(&[0.0, 1.0]).unwrap();
        let translation = b
            .translations(t2, &[Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0)])
            .unwrap();
        b.track(BoneTrack {
            bone: BoneRef {
                name: "root".into(),
                id: None,
            },
            rotation: Some(rotation),
            translation: Some(translation),
            scale: None,
        });
        b.track(BoneTrack {
            bone: BoneRef {
                name: "still".into(),
                id: None,
            },
            rotation: None,
            translation: None,
            scale: None,
        });
        b.build()
    }

    #[test]
    fn a_tracks_curves_turn_smoothly_and_name_their_keys() {
        let clip = clip();
        let c = curves(&clip, 0, clip.duration(), 50, CurveMode::Euler).unwrap();
        assert_eq!(c.key_counts, [3, 2, 0]);
        assert_eq!(c.rotation.len(), 3);
        assert_eq!(c.translation.len(), 3);
        assert_eq!(c.rotation_keys, [0.0, 0.5, 1.0]);
        // Z turns on to 340° rather than jumping to −20°.
        let z = &c.rotation[2];
        assert!((z.last().unwrap() - 340.0).abs() < 1e-2, "{z:?}");
        assert!(z.windows(2).all(|w| w[1] >= w[0] - 1e-3));
        assert_eq!(value_at(&c.times, &c.translation[1], 1.0), Some(2.0));
        let q = curves(&clip, 0, clip.duration(), 50, CurveMode::Quaternion).unwrap();
        assert_eq!(q.rotation.len(), 4);
    }

    #[test]
    fn tracks_without_channels_zero_durations_and_missing_tracks() {
        let clip = clip();
        let still = curves(&clip, 1, clip.duration(), 50, CurveMode::Euler).unwrap();
        assert!(still.rotation.is_empty() && still.translation.is_empty());
        assert_eq!(still.key_counts, [0, 0, 0]);
        let zero = curves(&clip, 0, 0.0, 50, CurveMode::Euler).unwrap();
        assert_eq!(zero.times, [0.0]);
        assert_eq!(zero.rotation[0].len(), 1);
        assert!(curves(&clip, 2, 1.0, 50, CurveMode::Euler).is_none());
    }

    #[test]
    fn every_sample_track_plots_finite_curves_without_jumps() {
        use rigplay::formats::ifp::IfpFile;
        for name in ["sa_ped.ifp", "vc_ped.ifp"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../assets/anims")
                .join(name);
            let package = IfpFile::read(&std::fs::read(path).unwrap()).unwrap().file;
            for ifp in package.clips() {
                let clip = ifp.to_clip();
                for track in 0..clip.tracks().len() {
                    for mode in CurveMode::ALL {
                        let c = curves(&clip, track, clip.duration(), 200, mode).unwrap();
                        for series in c.rotation.iter().chain(&c.translation) {
                            assert_eq!(series.len(), c.times.len());
                            assert!(series.iter().all(|v| v.is_finite()));
                        }
                        if mode == CurveMode::Euler {
                            let jump = c
                                .rotation
                                .iter()
                                .flat_map(|s| s.windows(2).map(|w| (w[1] - w[0]).abs()))
                                .fold(0.0f32, f32::max);
                            assert!(jump < 30.0, "{name} {} #{track}: {jump}°", clip.name);
                        }
                    }
                }
            }
        }
    }
}
