//! Move-key position paths (§4.3 "Move position path"): Catmull-Rom tangents, a
//! Ferguson/Hermite cubic, and AnimeEffects' 8-sample arc-length reparameterisation.
//!
//! Build a [`MovePath`] for the segment between the keys k0 and k1 (with the neighbours kn before
//! k0 and k2 after k1, as the key gatherer supplies them, loop wrap included), then ask it for the
//! position at the eased progress `s` of §4.2. The centroid is not on the path: it is lerped with
//! the same `s` (§4.3).
//!
//! Observed in AnimeEffects 1.7's own render of `reference/anie/t8` (loop on, Catmull-Rom keys at
//! frames 0, 12, 23): between the first two keys the path has **no** kn, although the loop could
//! supply the last key at `23 − 24 = −1`. With that kn the layer would sit 0.7 px off at frame 3
//! (see `tests/anie_math.rs`). Which neighbours the gatherer supplies is the evaluator's business.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use glam::Vec2;

use crate::formats::anie::Spline;

/// Qt's `QVector2D::normalized()`: a vector whose squared length is within 1e-5 of 0 normalises to
/// zero, one within 1e-5 of 1 is returned as is, anything else is divided by its length.
///
/// The format doc names only "normalize"; AnimeEffects' vectors are `QVector2D`, whose rule this is.
/// With it the mirror of a zero-length segment is `−v` rather than NaN.
pub(crate) fn qt_normalized(v: Vec2) -> Vec2 {
    let (x, y) = (f64::from(v.x), f64::from(v.y));
    let len2 = x * x + y * y;
    if (len2 - 1.0).abs() <= 1e-5 {
        v
    } else if len2.abs() > 1e-5 || len2.is_nan() {
        // NaN lands here too, as in Qt, and stays NaN.
        let len = len2.sqrt();
        Vec2::new((x / len) as f32, (y / len) as f32)
    } else {
        Vec2::ZERO
    }
}

/// The Hermite tangents `(v0, v1)` of the segment p0 → p1 (§4.3, `getCatmullRomVels`).
///
/// `prev` is kn's position if k0's spline is Catmull-Rom and kn exists, `next` is k2's position if
/// k1's spline is Catmull-Rom and k2 exists (see [`MovePath::new`], which applies those rules):
/// * neither: `v0 = v1 = p1 − p0` (a straight line);
/// * only `prev`: `v0 = ½(p1 − pn)`, `v1 = mirror(v0)`;
/// * only `next`: `v1 = ½(p2 − p0)`, `v0 = mirror(v1)`;
/// * both: `v0 = ½(p1 − pn)`, `v1 = ½(p2 − p0)`;
///
/// where `mirror(v) = 2n(n·v) − v` about `n = normalize(p1 − p0)` ([`qt_normalized`]).
pub(crate) fn catmull_rom_tangents(
    prev: Option<Vec2>,
    p0: Vec2,
    p1: Vec2,
    next: Option<Vec2>,
) -> (Vec2, Vec2) {
    let mirror = |v: Vec2| {
        let n = qt_normalized(p1 - p0);
        2.0 * n * n.dot(v) - v
    };
    match (prev, next) {
        (None, None) => (p1 - p0, p1 - p0),
        (Some(pn), None) => {
            let v0 = 0.5 * (p1 - pn);
            (v0, mirror(v0))
        }
        (None, Some(p2)) => {
            let v1 = 0.5 * (p2 - p0);
            (mirror(v1), v1)
        }
        (Some(pn), Some(p2)) => (0.5 * (p1 - pn), 0.5 * (p2 - p0)),
    }
}

/// The Ferguson/Hermite cubic of §4.3:
/// `P(u) = (2p0 − 2p1 + v0 + v1)u³ + (−3p0 + 3p1 − 2v0 − v1)u² + v0·u + p0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HermiteCurve {
    /// Start point (u = 0).
    pub p0: Vec2,
    /// End point (u = 1).
    pub p1: Vec2,
    /// Tangent at the start.
    pub v0: Vec2,
    /// Tangent at the end.
    pub v1: Vec2,
}

impl HermiteCurve {
    /// The point at parameter `u` (any real: outside `[0, 1]` the cubic is extrapolated).
    pub fn point(&self, u: f32) -> Vec2 {
        let (p0, p1, v0, v1) = (self.p0, self.p1, self.v0, self.v1);
        let a = 2.0 * p0 - 2.0 * p1 + v0 + v1;
        let b = -3.0 * p0 + 3.0 * p1 - 2.0 * v0 - v1;
        a * (u * u * u) + b * (u * u) + v0 * u + p0
    }
}

/// Number of chords in the arc-length table (§4.3).
pub(crate) const ARC_SAMPLES: usize = 8;

/// A chord shorter than this counts as zero length (§4.3).
pub(crate) const MIN_CHORD: f32 = 0.001;

/// One Move segment's path, with its arc-length table (§4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MovePath {
    /// The segment's cubic.
    pub curve: HermiteCurve,
    /// `L[i]`: the summed chord lengths from `P(0)` to `P(i/8)`; `L[0] = 0`.
    pub lengths: [f32; ARC_SAMPLES + 1],
}

impl MovePath {
    /// The path between k0 (at `p0`, spline `spline0`) and k1 (at `p1`, spline `spline1`), with
    /// the neighbours `prev` (kn) and `next` (k2) where the gatherer has them. k0's Linear spline
    /// drops kn, k1's Linear spline drops k2 (§4.3).
    pub fn new(
        prev: Option<Vec2>,
        (p0, spline0): (Vec2, Spline),
        (p1, spline1): (Vec2, Spline),
        next: Option<Vec2>,
    ) -> Self {
        let prev = prev.filter(|_| spline0 == Spline::CatmullRom);
        let next = next.filter(|_| spline1 == Spline::CatmullRom);
        let (v0, v1) = catmull_rom_tangents(prev, p0, p1, next);
        Self::from_curve(HermiteCurve { p0, p1, v0, v1 })
    }

    /// The path along `curve`, sampling it at `u = i/8` to build the chord-length table.
    pub fn from_curve(curve: HermiteCurve) -> Self {
        let mut lengths = [0.0; ARC_SAMPLES + 1];
        let mut last = curve.point(0.0);
        for i in 1..=ARC_SAMPLES {
            let here = curve.point(i as f32 / ARC_SAMPLES as f32);
            lengths[i] = lengths[i - 1] + (here - last).length();
            last = here;
        }
        Self { curve, lengths }
    }

    /// The curve parameter `u` for progress `s` (§4.3):
    /// * `tl = s·L[8]`; the largest `a` in 0..=7 with `L[a] ≤ tl`, found by a binary search with
    ///   steps 4, 2, 1 (so `a = 0` below the start and `a = 7` past the end);
    /// * `u = (a + (tl − L[a]) / (L[a+1] − L[a])) / 8`, which extrapolates for `s` outside `[0, 1]`;
    /// * if `L[a+1] − L[a] < 0.001`, `u = a/8` in **integer** division, i.e. always 0 (the quirk:
    ///   a zero-length chord sends the point back to p0).
    ///
    /// A NaN `s` counts as 0.
    pub fn parameter(&self, s: f32) -> f32 {
        let s = if s.is_nan() { 0.0 } else { s };
        let l = &self.lengths;
        let tl = s * l[ARC_SAMPLES];
        let mut a = 0;
        for step in [4, 2, 1] {
            if l[a + step] <= tl {
                a += step;
            }
        }
        let chord = l[a + 1] - l[a];
        if chord < MIN_CHORD || chord.is_nan() {
            // `a / 8` with integer division: a ≤ 7, so this is always 0.
            return (a / ARC_SAMPLES) as f32;
        }
        (a as f32 + (tl - l[a]) / chord) / ARC_SAMPLES as f32
    }

    /// The Move position at progress `s` (§4.3): `P(parameter(s))`.
    pub fn point(&self, s: f32) -> Vec2 {
        self.curve.point(self.parameter(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Spline::*;

    fn close(a: Vec2, b: Vec2, eps: f32) -> bool {
        (a - b).abs().max_element() <= eps
    }

    #[test]
    fn hermite_curve_from_four_control_points() {
        // pn = (0,0), p0 = (10,0), p1 = (20,10), p2 = (30,10), all Catmull-Rom:
        // v0 = ½(p1 − pn) = (10, 5); v1 = ½(p2 − p0) = (10, 5).
        let path = MovePath::new(
            Some(Vec2::new(0.0, 0.0)),
            (Vec2::new(10.0, 0.0), CatmullRom),
            (Vec2::new(20.0, 10.0), CatmullRom),
            Some(Vec2::new(30.0, 10.0)),
        );
        assert_eq!(path.curve.v0, Vec2::new(10.0, 5.0));
        assert_eq!(path.curve.v1, Vec2::new(10.0, 5.0));
        // a = 2p0 − 2p1 + v0 + v1 = (20,0) − (40,20) + (20,10) = (0, −10);
        // b = −3p0 + 3p1 − 2v0 − v1 = (−30,0) + (60,30) − (20,10) − (10,5) = (0, 15).
        // P(0.5) = a/8 + b/4 + v0/2 + p0 = (0, −1.25) + (0, 3.75) + (5, 2.5) + (10, 0) = (15, 5).
        assert_eq!(path.curve.point(0.5), Vec2::new(15.0, 5.0));
        // P(0.25) = a/64 + b/16 + v0/4 + p0 = (0, −0.15625) + (0, 0.9375) + (2.5, 1.25) + (10, 0)
        //         = (12.5, 2.03125).
        assert_eq!(path.curve.point(0.25), Vec2::new(12.5, 2.03125));
        // The ends are the keys.
        assert_eq!(path.curve.point(0.0), Vec2::new(10.0, 0.0));
        assert_eq!(path.curve.point(1.0), Vec2::new(20.0, 10.0));
    }

    #[test]
    fn linear_keys_ignore_their_neighbours() {
        // k0 Linear drops kn, k1 Linear drops k2: v0 = v1 = p1 − p0 = (8, 6).
        let path = MovePath::new(
            Some(Vec2::new(-100.0, 3.0)),
            (Vec2::ZERO, Linear),
            (Vec2::new(8.0, 6.0), Linear),
            Some(Vec2::new(50.0, 50.0)),
        );
        assert_eq!(path.curve.v0, Vec2::new(8.0, 6.0));
        assert_eq!(path.curve.v1, Vec2::new(8.0, 6.0));
        // A straight line of length 10, 8 equal chords of 1.25: L = 0, 1.25, …, 10.
        assert!((path.lengths[8] - 10.0).abs() < 1e-5);
        assert!((path.lengths[3] - 3.75).abs() < 1e-5);
        // Uniform motion: s = 0.3 → 3 px along (8,6)/10 → (2.4, 1.8).
        assert!(close(path.point(0.3), Vec2::new(2.4, 1.8), 1e-5));
    }

    #[test]
    fn one_sided_tangents_are_mirrored_about_the_chord() {
        // p0 = (0,0), p1 = (10,0), n = (1,0). Only kn = (0,−10) (k1 Linear):
        // v0 = ½((10,0) − (0,−10)) = (5, 5); mirror about x: 2(1,0)·5 − (5,5) = (5, −5).
        let (v0, v1) = catmull_rom_tangents(
            Some(Vec2::new(0.0, -10.0)),
            Vec2::ZERO,
            Vec2::new(10.0, 0.0),
            None,
        );
        assert_eq!((v0, v1), (Vec2::new(5.0, 5.0), Vec2::new(5.0, -5.0)));
        // Only k2 = (20, 10): v1 = ½((20,10) − (0,0)) = (10, 5); v0 = mirror = (10, −5).
        let (v0, v1) = catmull_rom_tangents(
            None,
            Vec2::ZERO,
            Vec2::new(10.0, 0.0),
            Some(Vec2::new(20.0, 10.0)),
        );
        assert_eq!((v0, v1), (Vec2::new(10.0, -5.0), Vec2::new(10.0, 5.0)));
        // A zero-length segment normalises to n = 0 (Qt), so mirror(v) = −v.
        let (v0, v1) = catmull_rom_tangents(Some(Vec2::new(-2.0, 0.0)), Vec2::ONE, Vec2::ONE, None);
        assert_eq!((v0, v1), (Vec2::new(1.5, 0.5), Vec2::new(-1.5, -0.5)));
    }

    #[test]
    fn arc_length_reparameterisation_follows_the_chords() {
        // A curve with uneven speed: p0 = (0,0), p1 = (8,0), v0 = (0,0), v1 = (0,0) (ease in/out).
        // a = (−16, 0)... P(u).x = −16u³ + 24u², i.e. 8·(3u² − 2u³).
        let path = MovePath::from_curve(HermiteCurve {
            p0: Vec2::ZERO,
            p1: Vec2::new(8.0, 0.0),
            v0: Vec2::ZERO,
            v1: Vec2::ZERO,
        });
        // x(i/8) = 8·(3i²/64 − 2i³/512): 0, 0.34375, 1.25, 2.53125, 4, 5.46875, 6.75, 7.65625, 8.
        // The chords are the differences, so L = those values.
        let expected = [
            0.0, 0.34375, 1.25, 2.53125, 4.0, 5.46875, 6.75, 7.65625, 8.0,
        ];
        for (l, e) in path.lengths.iter().zip(expected) {
            assert!((l - e).abs() < 1e-5, "{l} vs {e}");
        }
        // s = 0.25: tl = 2; binary search: L[4] = 4 > 2, L[2] = 1.25 ≤ 2 → a = 2, L[3] = 2.53 > 2.
        // u = (2 + (2 − 1.25)/(2.53125 − 1.25))/8 = (2 + 0.75/1.28125)/8 = (2 + 0.5853659)/8
        //   = 0.3231707; P(u).x = 8·(3·0.1044393 − 2·0.0337517) = 8·0.2458145 = 1.9665158.
        let u = path.parameter(0.25);
        assert!((u - 0.323_170_7).abs() < 1e-6, "{u}");
        assert!((path.point(0.25).x - 1.966_515_8).abs() < 1e-4);
        // s = 0.5 lands on a sample: tl = 4 = L[4] → a = 4, u = 0.5, P = (4, 0).
        assert_eq!(path.parameter(0.5), 0.5);
        assert_eq!(path.point(0.5), Vec2::new(4.0, 0.0));
    }

    #[test]
    fn overshoot_extrapolates_the_cubic() {
        // Straight path (0,0) → (8,0), L[8] = 8, chords of 1.
        let path = MovePath::new(
            None,
            (Vec2::ZERO, Linear),
            (Vec2::new(8.0, 0.0), Linear),
            None,
        );
        // s = 1.25: tl = 10, a = 7, u = (7 + (10 − 7)/1)/8 = 1.25 → P = (10, 0).
        assert!((path.parameter(1.25) - 1.25).abs() < 1e-6);
        assert!(close(path.point(1.25), Vec2::new(10.0, 0.0), 1e-5));
        // s = −0.25: tl = −2, a = 0, u = (0 + (−2 − 0)/1)/8 = −0.25 → P = (−2, 0).
        assert!(close(path.point(-0.25), Vec2::new(-2.0, 0.0), 1e-5));
    }

    #[test]
    fn zero_length_chords_snap_to_p0() {
        // Both keys at (5,5), both Linear: every chord is 0, tl = 0, the search ends at a = 7
        // (L[7] = 0 ≤ 0), L[8] − L[7] = 0 < 0.001 → u = 7/8 in integer division = 0 → p0.
        let p = Vec2::new(5.0, 5.0);
        let path = MovePath::new(None, (p, Linear), (p, Linear), None);
        assert_eq!(path.parameter(0.6), 0.0);
        assert_eq!(path.point(0.6), p);
        // A loop-shaped path (p0 == p1 with Catmull-Rom neighbours) is not zero length.
        let looped = MovePath::new(
            Some(Vec2::new(0.0, 10.0)),
            (Vec2::ZERO, CatmullRom),
            (Vec2::ZERO, CatmullRom),
            Some(Vec2::new(10.0, 0.0)),
        );
        assert!(looped.lengths[8] > 1.0);
        // A NaN s counts as 0.
        assert_eq!(looped.point(f32::NAN), Vec2::ZERO);
    }

    #[test]
    fn qt_normalisation_rule() {
        assert_eq!(qt_normalized(Vec2::new(3.0, 4.0)), Vec2::new(0.6, 0.8));
        assert_eq!(qt_normalized(Vec2::new(0.001, 0.0)), Vec2::ZERO);
        // Squared length 1.000002 is within 1e-5 of 1: returned unchanged.
        let v = Vec2::new(1.000_001, 0.0);
        assert_eq!(qt_normalized(v), v);
        assert!(qt_normalized(Vec2::NAN).is_nan());
    }
}
