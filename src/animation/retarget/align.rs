//! The rest alignment `A` of each mapped target bone (step 2 of the [parent module's
//! maths](super)): the rotation that turns the target bone's rest directions onto the
//! source's.
//!
//! A bone's rest directions point from it to each of its mapped children (the mapped bones whose
//! nearest mapped ancestor it is). A child that sits on the bone, or so near it that its offset
//! says nothing of a direction (a GTA ped's Spine is 1.4 mm from its Pelvis, its clavicles
//! 0.1 mm from its Neck), is looked through: its own mapped children stand in for it. Then:
//! * the direction that carries on the bone's chain (the nearest, within 60°, to the bone's own
//!   offset from its parent: a neck's head, a hand's middle finger) is matched exactly, by the
//!   shortest rotation; the turn about it is the one that brings the bone's other directions
//!   nearest to the source's (a neck's clavicles, reached through to the upper arms);
//! * a bone that carries on no chain (a root: a GTA Pelvis sits on its Root), with directions
//!   not on one line, gets the rotation that best turns all its directions onto the source's
//!   (the least-squares fit of unit vectors, by Horn's quaternion method): a hip is set by its
//!   thighs and its spine together;
//! * directions on one line: the longest is matched exactly, the turn about it as above;
//! * a bone with no mapped child uses its own offset from its nearest mapped ancestor.
//!
//! A bone's chain is that of the mapped bones: its offset is taken from its nearest mapped
//! ancestor, so a mapped root (the hips under a scene's root node, a Blender `Armature` or an
//! Unreal `root`, none of them mapped) carries on no chain, and the same character gets the
//! same alignments whether or not such nodes sit above it.
//!
//! None of this depends on the order the bones are stored in: a DFF ped whose Pelvis lists
//! R Thigh, L Thigh, Spine is turned as the built-in SA skeleton, which lists Spine, L Thigh,
//! R Thigh.

use glam::{DQuat, DVec3, Quat, Vec3};

/// What every alignment reads: the rest positions (world, each skeleton's own axes), the
/// pairs and the mapped children.
pub(super) struct RestDirections<'a> {
    pub source_world: &'a [(Vec3, Quat)],
    pub target_world: &'a [(Vec3, Quat)],
    pub source_parents: &'a [Option<usize>],
    pub target_parents: &'a [Option<usize>],
    /// Per target bone, its source bone when mapped.
    pub target_source: &'a [Option<usize>],
    /// Source axes to target axes.
    pub basis: Quat,
}

/// How far the looking through a child on its parent goes.
const DEPTH: usize = 4;

/// Below this share of a skeleton's size (the diagonal of its mapped bones' rest box), a
/// child's offset from its bone is no direction.
const NEAR: f32 = 0.02;

/// Two unit directions closer to one line than this sine (about 10°) do not fix a turn about
/// it.
const ON_A_LINE: f64 = 0.17;

impl RestDirections<'_> {
    /// Every mapped target bone's alignment `A` (identity for unmapped bones).
    pub(super) fn alignments(&self) -> Vec<Quat> {
        let n = self.target_world.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for child in 0..n {
            if self.target_source[child].is_none() {
                continue;
            }
            let mut up = self.target_parents[child];
            while let Some(a) = up {
                if self.target_source[a].is_some() {
                    children[a].push(child);
                    break;
                }
                up = self.target_parents[a];
            }
        }
        let mapped = || (0..n).filter_map(|t| self.target_source[t].map(|s| (s, t)));
        let near_t = NEAR * diagonal(mapped().map(|(_, t)| self.target_world[t].0));
        let near_s = NEAR * diagonal(mapped().map(|(s, _)| self.source_world[s].0));
        (0..n)
            .map(|t| match self.target_source[t] {
                Some(s) => self.alignment(t, s, &children, (near_t, near_s)),
                None => Quat::IDENTITY,
            })
            .collect()
    }

    fn alignment(&self, t: usize, s: usize, children: &[Vec<usize>], near: (f32, f32)) -> Quat {
        // (target direction, source direction in target axes), both of their full length.
        let mut directions: Vec<(Vec3, Vec3)> = Vec::new();
        let mut stack: Vec<(usize, usize)> = children[t].iter().map(|&c| (c, 0)).collect();
        while let Some((c, depth)) = stack.pop() {
            let Some(sc) = self.target_source[c] else {
                continue;
            };
            let dt = self.target_world[c].0 - self.target_world[t].0;
            let ds = self.basis * (self.source_world[sc].0 - self.source_world[s].0);
            let far = |d: Vec3, near: f32| d.is_finite() && d.length() > near.max(1e-12);
            if far(dt, near.0) && far(ds, near.1) {
                directions.push((dt, ds));
            } else if depth < DEPTH {
                stack.extend(children[c].iter().map(|&cc| (cc, depth + 1)));
            }
        }
        // A bone's offset from its nearest mapped ancestor (zero for a mapped root): nodes
        // the map leaves out above the hips (a scene's root, a Blender `Armature`, an Unreal
        // `root`) make no chain of them.
        let source_mapped = |b: usize| self.target_source.contains(&Some(b));
        let target_mapped = |b: usize| self.target_source[b].is_some();
        let incoming = offset_from_mapped(self.target_world, self.target_parents, t, target_mapped);
        if directions.is_empty() {
            let ds = offset_from_mapped(self.source_world, self.source_parents, s, source_mapped);
            return shortest(incoming, self.basis * ds);
        }
        // The direction that carries on the bone's chain: the one nearest (within 60°) to the
        // bone's own offset from its mapped parent.
        let carried = (incoming.length() > near.0.max(1e-12))
            .then(|| {
                let along = |d: &Vec3| d.normalize().dot(incoming.normalize());
                directions
                    .iter()
                    .copied()
                    .filter(|(dt, _)| along(dt) > 0.5)
                    .reduce(|a, b| if along(&b.0) > along(&a.0) { b } else { a })
            })
            .flatten();
        if let Some((dt, ds)) = carried {
            return along_then_turned(dt, ds, &directions);
        }
        let unit: Vec<(DVec3, DVec3)> = directions
            .iter()
            .map(|(a, b)| (a.as_dvec3().normalize(), b.as_dvec3().normalize()))
            .collect();
        let spread = unit
            .iter()
            .flat_map(|(a, _)| unit.iter().map(move |(b, _)| a.cross(*b).length()))
            .fold(0.0, f64::max);
        if spread < ON_A_LINE {
            let (dt, ds) = directions
                .iter()
                .copied()
                .reduce(|a, b| if b.0.length() > a.0.length() { b } else { a })
                .unwrap_or_default();
            return along_then_turned(dt, ds, &directions);
        }
        best_fit(&unit)
    }
}

/// The shortest rotation taking `dt` onto `ds`, then turned about `ds` to bring the other
/// `directions` (target, source) nearest to the source's: the turn `θ` that maximises
/// `Σ b · R(θ) a` over the directions' parts across the axis, `θ = atan2(Σ u·(a × b), Σ a·b)`.
fn along_then_turned(dt: Vec3, ds: Vec3, directions: &[(Vec3, Vec3)]) -> Quat {
    let swing = shortest(dt, ds);
    let Some(u) = ds.try_normalize() else {
        return swing;
    };
    let (u, swing64) = (u.as_dvec3(), swing.as_dquat());
    let (mut sin, mut cos) = (0.0f64, 0.0f64);
    for (a, b) in directions {
        let (Some(a), Some(b)) = (a.try_normalize(), b.try_normalize()) else {
            continue;
        };
        let a = swing64 * a.as_dvec3();
        let b = b.as_dvec3();
        let (a, b) = (a - a.dot(u) * u, b - b.dot(u) * u);
        sin += u.dot(a.cross(b));
        cos += a.dot(b);
    }
    if sin.hypot(cos) < 1e-9 {
        return swing;
    }
    (DQuat::from_axis_angle(u, sin.atan2(cos)) * swing64)
        .normalize()
        .as_quat()
}

/// The shortest rotation taking `from` onto `to` (identity when either is not a direction).
fn shortest(from: Vec3, to: Vec3) -> Quat {
    match (from.try_normalize(), to.try_normalize()) {
        (Some(a), Some(b)) => Quat::from_rotation_arc(a, b),
        _ => Quat::IDENTITY,
    }
}

/// A bone's world offset from its nearest ancestor that is `mapped`; zero where none is (or
/// where the chain of parents loops, which a checked rest pose rules out).
fn offset_from_mapped(
    world: &[(Vec3, Quat)],
    parents: &[Option<usize>],
    bone: usize,
    mapped: impl Fn(usize) -> bool,
) -> Vec3 {
    let mut up = parents.get(bone).copied().flatten();
    for _ in 0..parents.len() {
        match up {
            Some(a) if mapped(a) => return world[bone].0 - world[a].0,
            Some(a) => up = parents.get(a).copied().flatten(),
            None => break,
        }
    }
    Vec3::ZERO
}

/// The diagonal of the box around `points` (0 for none).
fn diagonal(points: impl Iterator<Item = Vec3>) -> f32 {
    let (lo, hi) = points.fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    let d = (hi - lo).length();
    if d.is_finite() { d } else { 0.0 }
}

/// The rotation `q` that best turns each `a` onto its `b` (all unit vectors): the one that
/// maximises `Σ b · (q a q⁻¹)`. Horn (1987): that `q` is the eigenvector of the largest
/// eigenvalue of the symmetric 4×4 matrix `N` built from `S = Σ a bᵀ`.
pub(super) fn best_fit(pairs: &[(DVec3, DVec3)]) -> Quat {
    let mut s = [[0.0f64; 3]; 3];
    for (a, b) in pairs {
        let (a, b) = (a.to_array(), b.to_array());
        for (i, row) in s.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v += a[i] * b[j];
            }
        }
    }
    let [[xx, xy, xz], [yx, yy, yz], [zx, zy, zz]] = s;
    let n = [
        [xx + yy + zz, yz - zy, zx - xz, xy - yx],
        [yz - zy, xx - yy - zz, xy + yx, zx + xz],
        [zx - xz, xy + yx, -xx + yy - zz, yz + zy],
        [xy - yx, zx + xz, yz + zy, -xx - yy + zz],
    ];
    let [w, x, y, z] = largest_eigenvector(n);
    let q = DQuat::from_xyzw(x, y, z, w);
    let len = q.length();
    if len.is_finite() && len > 1e-12 {
        (q / len).as_quat()
    } else {
        Quat::IDENTITY
    }
}

/// The eigenvector of the largest eigenvalue of a symmetric 4×4 matrix, by cyclic Jacobi
/// rotations: each zeroes one off-diagonal pair, `A ← Jᵀ A J`, and the product of the `J`s
/// gathers the eigenvectors in its columns.
fn largest_eigenvector(mut a: [[f64; 4]; 4]) -> [f64; 4] {
    let mut v = [[0.0f64; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _sweep in 0..64 {
        let off: f64 = (0..4)
            .flat_map(|p| (0..4).filter(move |&q| q != p).map(move |q| (p, q)))
            .map(|(p, q)| a[p][q] * a[p][q])
            .sum();
        let scale: f64 = (0..4).map(|i| a[i][i] * a[i][i]).sum::<f64>() + off;
        if off <= 1e-30 * scale.max(1e-300) {
            break;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                if a[p][q] == 0.0 {
                    continue;
                }
                // `t = tan φ` with `(1 − t²) / 2t = (a_qq − a_pp) / 2a_pq`, the smaller root.
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
                let (rp, rq) = (a[p], a[q]);
                for k in 0..4 {
                    a[p][k] = c * rp[k] - s * rq[k];
                    a[q][k] = s * rp[k] + c * rq[k];
                }
                for row in v.iter_mut() {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
            }
        }
    }
    let top = (0..4)
        .reduce(|i, j| if a[j][j] > a[i][i] { j } else { i })
        .unwrap_or(0);
    [v[0][top], v[1][top], v[2][top], v[3][top]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A known rotation, found back from three directions and their turned copies; and a half
    /// turn (whose quaternion has w = 0).
    #[test]
    fn best_fit_finds_the_rotation_that_turned_the_directions() {
        let turn = DQuat::from_euler(glam::EulerRot::YXZ, 2.1, -0.7, 0.4);
        let dirs = [
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(-0.6, -0.8, 0.0),
            DVec3::new(0.1, 0.2, 0.97).normalize(),
        ];
        let pairs: Vec<_> = dirs.iter().map(|&a| (a, turn * a)).collect();
        let q = best_fit(&pairs).as_dquat();
        assert!(q.dot(turn).abs() > 1.0 - 1e-7, "{q:?} against {turn:?}");
        // A half turn (the eigenvector's w is 0).
        let half =
            DQuat::from_axis_angle(DVec3::new(0.0, 1.0, 1.0).normalize(), std::f64::consts::PI);
        let pairs: Vec<_> = dirs.iter().map(|&a| (a, half * a)).collect();
        assert!(best_fit(&pairs).as_dquat().dot(half).abs() > 1.0 - 1e-7);
    }
}
