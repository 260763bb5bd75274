//! Keeping the character in view: the bounds of a clip's pose over its whole length (or at one
//! time), and where an orbit camera must stand to see them, for the preview's views (front,
//! side, top, three-quarter).
//!
//! Bevy's axes throughout. A GTA ped faces −Z (its +Y), so the front view looks at it from −Z.

use bevy::math::{Quat, Vec3};
use rigplay::animation::{BonePose, Clip, WrapMode};
use rigplay::coords::GTA_TO_BEVY;
use rigplay::skeleton::Skeleton;

/// A camera direction around the character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// From in front of the character (its face).
    Front,
    /// From its right.
    Side,
    /// From above.
    Top,
    /// From in front and to the right, a little above: the default.
    ThreeQuarter,
}

impl View {
    /// Every view, in the order the UI lists them.
    pub const ALL: [View; 4] = [View::ThreeQuarter, View::Front, View::Side, View::Top];

    /// The orbit angles (yaw about +Y from +Z, pitch up) of this view.
    pub fn angles(self) -> (f32, f32) {
        use std::f32::consts::{FRAC_PI_2, PI};
        match self {
            View::Front => (PI, 0.05),
            View::Side => (FRAC_PI_2, 0.05),
            View::Top => (PI, 1.4),
            View::ThreeQuarter => (PI - 0.6, 0.25),
        }
    }

    /// The view a `--camera` value names (`front`, `side`, `top`, `three-quarter`).
    pub fn parse(s: &str) -> Option<View> {
        Some(match s.to_ascii_lowercase().as_str() {
            "front" => View::Front,
            "side" => View::Side,
            "top" => View::Top,
            "three-quarter" | "threequarter" | "3/4" => View::ThreeQuarter,
            _ => return None,
        })
    }

    /// Its name in the UI.
    pub fn label(self) -> &'static str {
        match self {
            View::Front => "front",
            View::Side => "side",
            View::Top => "top",
            View::ThreeQuarter => "three-quarter",
        }
    }
}

/// An axis-aligned box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    /// The box around `points` (finite ones); `None` when there are none.
    pub fn of(points: impl IntoIterator<Item = Vec3>) -> Option<Bounds> {
        let mut b: Option<Bounds> = None;
        for p in points.into_iter().filter(|p| p.is_finite()) {
            b = Some(match b {
                None => Bounds { min: p, max: p },
                Some(b) => Bounds {
                    min: b.min.min(p),
                    max: b.max.max(p),
                },
            });
        }
        b
    }

    /// This box grown to hold `other`.
    pub fn union(self, other: Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    pub fn centre(&self) -> Vec3 {
        (self.min + self.max) / 2.0
    }

    fn corners(&self) -> [Vec3; 8] {
        let (a, b) = (self.min, self.max);
        [
            Vec3::new(a.x, a.y, a.z),
            Vec3::new(b.x, a.y, a.z),
            Vec3::new(a.x, b.y, a.z),
            Vec3::new(b.x, b.y, a.z),
            Vec3::new(a.x, a.y, b.z),
            Vec3::new(b.x, a.y, b.z),
            Vec3::new(a.x, b.y, b.z),
            Vec3::new(b.x, b.y, b.z),
        ]
    }
}

/// The orbit camera's rotation for these angles (what the preview's camera uses).
pub fn orbit_rotation(yaw: f32, pitch: f32) -> Quat {
    Quat::from_euler(bevy::math::EulerRot::YXZ, yaw, -pitch, 0.0)
}

/// A part of the picture, in normalised device coordinates (−1 left / bottom, 1 right / top):
/// where the panels leave the 3D view free.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    pub x: (f32, f32),
    pub y: (f32, f32),
}

impl Region {
    /// The whole picture.
    pub const ALL: Region = Region {
        x: (-1.0, 1.0),
        y: (-1.0, 1.0),
    };

    /// The region of a `width` × `height` window left free by panels `left`, `right` and
    /// `bottom` pixels wide.
    pub fn between_panels(width: f32, height: f32, left: f32, right: f32, bottom: f32) -> Region {
        let (w, h) = (width.max(1.0), height.max(1.0));
        Region {
            x: (2.0 * left / w - 1.0, 1.0 - 2.0 * right / w),
            y: (2.0 * bottom / h - 1.0, 1.0),
        }
    }

    /// The region shrunk about its centre to `f` of its size.
    fn shrunk(self, f: f32) -> Region {
        let s = |(lo, hi): (f32, f32)| {
            let (c, r) = ((lo + hi) / 2.0, (hi - lo) / 2.0 * f);
            (c - r, c + r)
        };
        Region {
            x: s(self.x),
            y: s(self.y),
        }
    }
}

/// Where an orbit camera at `yaw`, `pitch` must look and how far away it must stand for every
/// corner of `bounds` to project inside `region` (with a margin of 6 % of the region), as
/// close as that allows, for a perspective camera of vertical field of view `fov_y` and aspect
/// `aspect`. Returns (target, distance); the distance is at least 0.3 (the orbit camera's).
///
/// The derivation. Let `R` be the camera's rotation and `c` the box's centre; corner `i` is
/// `pᵢ = R⁻¹·(cornerᵢ − c)` in the camera's axes (`x` right, `y` up, `z` towards the camera).
/// The camera looks at `c + R·(sx, sy, 0)` from distance `d`, so along one axis, with
/// `k = tan(fov_y/2)` (times `aspect` for `x`), the corner projects to
/// `(pᵢ − s) / (k·(d − zᵢ))`, which must lie in `[lo, hi]`:
/// `pᵢ − hi·k·(d − zᵢ) ≤ s ≤ pᵢ − lo·k·(d − zᵢ)`. Some `s` satisfies all corners' bounds at once
/// when every lower bound is below every upper one, i.e. for all `i`, `j`:
/// `d ≥ (pᵢ − pⱼ + k·(hi·zᵢ − lo·zⱼ)) / (k·(hi − lo))`. The distance is the largest of these over
/// both axes, and `s` the middle of the interval left at that distance.
pub fn fit(
    bounds: &Bounds,
    yaw: f32,
    pitch: f32,
    fov_y: f32,
    aspect: f32,
    region: Region,
) -> (Vec3, f32) {
    let region = region.shrunk(0.94);
    let centre = bounds.centre();
    let rotation = orbit_rotation(yaw, pitch);
    let inverse = rotation.inverse();
    let p: Vec<Vec3> = bounds
        .corners()
        .iter()
        .map(|c| inverse * (*c - centre))
        .collect();
    let k = (fov_y / 2.0).tan();
    let axes = [(k * aspect, region.x, 0usize), (k, region.y, 1usize)];
    let coord = |v: Vec3, axis: usize| if axis == 0 { v.x } else { v.y };
    let mut distance: f32 = 0.3;
    for &(k, (lo, hi), axis) in &axes {
        for pi in &p {
            for pj in &p {
                let d = (coord(*pi, axis) - coord(*pj, axis) + k * (hi * pi.z - lo * pj.z))
                    / (k * (hi - lo));
                distance = distance.max(d);
            }
        }
    }
    let mut shift = [0.0f32; 2];
    for &(k, (lo, hi), axis) in &axes {
        let low = p
            .iter()
            .map(|q| coord(*q, axis) - hi * k * (distance - q.z))
            .fold(f32::MIN, f32::max);
        let high = p
            .iter()
            .map(|q| coord(*q, axis) - lo * k * (distance - q.z))
            .fold(f32::MAX, f32::min);
        shift[axis] = (low + high) / 2.0;
    }
    (
        centre + rotation * Vec3::new(shift[0], shift[1], 0.0),
        distance,
    )
}

/// A skeleton as rigplay places it on an entity at the origin: turned from GTA's axes into
/// Bevy's and lifted by `lift` (GTA Z, metres).
#[derive(Debug, Clone, Copy)]
pub struct Placed<'a> {
    pub skeleton: &'a Skeleton,
    pub lift: f32,
}

impl<'a> Placed<'a> {
    /// A built-in GTA skeleton (`GtaSkeleton`): its lowest rest joint on the floor.
    pub fn gta(skeleton: &'a Skeleton) -> Self {
        Placed {
            skeleton,
            lift: -skeleton.lowest_rest_height(),
        }
    }
}

/// An opened model's frames as a skeleton (parents first; ids and names as the model has them,
/// so that a clip binds to it as it binds to the spawned model), and its lift: what the preview
/// frames when a GTA clip plays on the model rather than on the built-in skeleton.
pub fn model_skeleton(clump: &rigplay::plugin::DffClump) -> (Skeleton, f32) {
    let mut index = vec![None; clump.frames.len()];
    let mut bones = Vec::with_capacity(clump.order.len());
    for &f in &clump.order {
        let Some(frame) = clump.frames.get(f) else {
            continue;
        };
        index[f] = Some(bones.len());
        bones.push(rigplay::skeleton::SkeletonBone {
            name: frame.name.clone(),
            id: frame.bone_id,
            canonical: rigplay::skeleton::canonical_bone_id(&rigplay::skeleton::bone_key(
                &frame.name,
            )),
            parent: frame.parent.and_then(|p| index.get(p).copied().flatten()),
            rest: BonePose {
                translation: frame.rest.translation,
                rotation: frame.rest.rotation,
                scale: frame.rest.scale,
            },
        });
    }
    (
        Skeleton {
            name: "opened model".to_owned(),
            bones,
        },
        clump.lift,
    )
}

/// The joints of a character playing `clip` at `time`, in world space as rigplay's plugin places
/// them on an entity at the origin: a GTA ped or model (`placed`: a built-in skeleton, or an
/// opened model's frames with the model's lift), or (none) a DAN clip's flat bones, whose keys
/// are model-space in Bevy's axes already. `held_axes` are the root translation's axes held at
/// the first key (root motion in place or extracted, GTA axes), on track `root_track`.
pub fn pose_points(
    placed: Option<Placed>,
    clip: &Clip,
    time: f32,
    held_axes: Vec3,
    root_track: Option<usize>,
) -> Vec<Vec3> {
    let time = clip.wrap_time(time, WrapMode::Clamp);
    let sample = |i: usize| {
        let s = clip.sample_track(i, time);
        let mut t = s.translation;
        if Some(i) == root_track
            && let (Some(now), Some(c)) = (t, clip.tracks()[i].translation)
        {
            let first = clip.vector_values(c)[0];
            t = Some(now * (Vec3::ONE - held_axes) + first * held_axes);
        }
        (s.rotation, t)
    };
    match placed {
        Some(Placed { skeleton, lift }) => {
            let binding = skeleton.bind(clip);
            let mut pose: Vec<BonePose> = skeleton.rest_pose();
            for (track, bone) in binding.targets.iter().enumerate() {
                if let Some(b) = *bone {
                    let (r, t) = sample(track);
                    if let Some(r) = r {
                        pose[b].rotation = r;
                    }
                    if let Some(t) = t {
                        pose[b].translation = t;
                    }
                }
            }
            skeleton
                .model_space(&pose)
                .iter()
                .map(|(_, p)| Vec3::Y * lift + GTA_TO_BEVY * *p)
                .collect()
        }
        None => (0..clip.tracks().len())
            .filter_map(|i| sample(i).1)
            .collect(),
    }
}

/// The bounds of the pose over the whole clip (`samples` times, ends included) or, with `at`,
/// at that time only.
pub fn clip_bounds(
    placed: Option<Placed>,
    clip: &Clip,
    held_axes: Vec3,
    root_track: Option<usize>,
    at: Option<f32>,
    samples: usize,
) -> Option<Bounds> {
    let times: Vec<f32> = match at {
        Some(t) => vec![t],
        None => {
            let n = samples.max(2);
            (0..n)
                .map(|i| clip.duration() * i as f32 / (n - 1) as f32)
                .collect()
        }
    };
    times
        .iter()
        .filter_map(|&t| Bounds::of(pose_points(placed, clip, t, held_axes, root_track)))
        .reduce(Bounds::union)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Projects `p` with an orbit camera; (x, y) in [-1, 1] inside the picture.
    fn project(
        p: Vec3,
        target: Vec3,
        yaw: f32,
        pitch: f32,
        d: f32,
        fov_y: f32,
        aspect: f32,
    ) -> (f32, f32) {
        let q = orbit_rotation(yaw, pitch).inverse() * (p - target);
        let depth = d - q.z;
        let t = (fov_y / 2.0).tan();
        (q.x / (depth * t * aspect), q.y / (depth * t))
    }

    #[test]
    fn every_corner_projects_inside_the_region_and_the_fit_is_tight() {
        // A figure 1.8 m tall standing 6 m from the origin, and a 5 m run, in the region the
        // preview's panels leave (1280 × 720, panels 230, 240 and 118 px): from every view each
        // corner lands inside the region, and the box spans the region's margin on one axis.
        let boxes = [
            Bounds {
                min: Vec3::new(-6.9, 0.0, -4.8),
                max: Vec3::new(-6.3, 1.8, -4.4),
            },
            Bounds {
                min: Vec3::new(-0.3, 0.0, -5.2),
                max: Vec3::new(0.3, 1.8, 0.2),
            },
        ];
        let (fov, aspect) = (std::f32::consts::FRAC_PI_4, 1280.0 / 720.0);
        let region = Region::between_panels(1280.0, 720.0, 230.0, 240.0, 118.0);
        assert!((region.x.0 + 0.640625).abs() < 1e-6 && (region.x.1 - 0.625).abs() < 1e-6);
        assert!((region.y.0 + 0.672222).abs() < 1e-5 && region.y.1 == 1.0);
        let inner = region.shrunk(0.94);
        for b in boxes {
            for view in View::ALL {
                let (yaw, pitch) = view.angles();
                let (target, d) = fit(&b, yaw, pitch, fov, aspect, region);
                let (mut x0, mut x1, mut y0, mut y1) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
                for c in b.corners() {
                    let (x, y) = project(c, target, yaw, pitch, d, fov, aspect);
                    assert!(
                        x >= inner.x.0 - 1e-4 && x <= inner.x.1 + 1e-4,
                        "{view:?}: x {x} outside {:?}",
                        inner.x
                    );
                    assert!(
                        y >= inner.y.0 - 1e-4 && y <= inner.y.1 + 1e-4,
                        "{view:?}: y {y} outside {:?}",
                        inner.y
                    );
                    (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
                }
                // Tight: on the axis that decides the distance the box spans the region.
                let fill =
                    ((x1 - x0) / (inner.x.1 - inner.x.0)).max((y1 - y0) / (inner.y.1 - inner.y.0));
                assert!(fill > 0.999, "{view:?}: fills {fill}");
            }
        }
    }

    #[test]
    fn views_look_from_where_they_say() {
        // The camera sits at target + rotation·Z·d: the front view at −Z (a ped faces −Z), the
        // side at +X, the top above.
        let at = |v: View| {
            let (yaw, pitch) = v.angles();
            orbit_rotation(yaw, pitch) * Vec3::Z
        };
        assert!(at(View::Front).z < -0.99);
        assert!(at(View::Side).x > 0.99);
        assert!(at(View::Top).y > 0.98);
        let q = at(View::ThreeQuarter);
        assert!(q.z < -0.7 && q.x > 0.4 && q.y > 0.2, "{q}");
        assert_eq!(View::parse("Side"), Some(View::Side));
        assert_eq!(View::parse("follow"), None);
    }

    #[test]
    fn the_rest_pose_of_the_sa_ped_stands_on_the_floor_facing_minus_z() {
        // A clip with no tracks poses the rest: the lowest joint at y = 0, the head about 1.6 m
        // up, the toes ahead (−Z) of the heels.
        let skeleton = Skeleton::gta_sa();
        let clip = rigplay::animation::ClipBuilder::new("rest").build();
        let p = pose_points(Some(Placed::gta(&skeleton)), &clip, 0.0, Vec3::ZERO, None);
        let b = Bounds::of(p.iter().copied()).unwrap();
        assert!(b.min.y.abs() < 1e-5, "{}", b.min.y);
        assert!(b.max.y > 1.5 && b.max.y < 1.8, "{}", b.max.y);
        let name = |n: &str| {
            skeleton
                .bones
                .iter()
                .position(|b| b.name.trim() == n)
                .unwrap()
        };
        assert!(p[name("L Toe0")].z < p[name("L Foot")].z);
    }
}
