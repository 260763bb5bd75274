//! Key easing (§4.2): the progress `s` of a segment between two keys.
//!
//! AnimeEffects calls its easing with `b = 0`, `c = 1`, `t = F − f0`, `d = f1 − f0` (§4.1 step 4),
//! so every function here returns a progress value that is 0 at the earlier key and 1 at the later
//! one, and that may leave `[0, 1]` (Back, Elastic, Custom). The 12 Penner types are evaluated in
//! `f32` (the C++ code uses `float`); the Custom bezier is solved in `f64` and cast to `f32`, as the
//! format doc says.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use std::f32::consts::PI;

/// The easing data is the file model's: type, range, weight and the Custom bezier
/// `[x1, y1, x2, y2]` (§1.1, §4.2). The reader validates it as AnimeEffects' `isValidParam`
/// does; [`ease`] still gives every value a defined result.
pub use crate::formats::anie::{Easing, EasingKind, EasingRange};

/// Segment progress `s` for `t` frames into a segment of `d` frames (§4.1 step 4, §4.2).
///
/// * None → 0; Linear → `t/d`.
/// * Sine … Bounce → Robert Penner's function for the range, then mixed toward linear by the
///   weight: `s = eased·w + (t/d)·(1 − w)`.
/// * Custom → the cubic bezier solved for `x = (t/d)·(2 − w)` (the AnimeEffects quirk, see
///   [`custom_bezier`]), returned without the weight mix.
///
/// Inputs AnimeEffects never produces are given a defined meaning: `t` is clamped to `[0, d]`
/// (NaN `t` counts as 0); a `d` that is not a positive finite number gives 0 (hold the earlier
/// key); the weight is clamped to `[0, 1]` (NaN counts as 1). The result is never NaN or infinite:
/// if the arithmetic gives one (non-finite bezier points), the linear progress `t/d` is returned.
pub fn ease(easing: &Easing, t: f32, d: f32) -> f32 {
    if !(d > 0.0 && d.is_finite()) {
        return 0.0;
    }
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, d) };
    let w = if easing.weight.is_nan() {
        1.0
    } else {
        easing.weight.clamp(0.0, 1.0)
    };
    let linear = t / d;
    let s = match easing.kind {
        EasingKind::None => 0.0,
        EasingKind::Linear => linear,
        EasingKind::Custom => custom_bezier(&easing.bezier, t, d, w),
        kind => {
            let eased = penner(kind, easing.range, t, d);
            eased * w + linear * (1.0 - w)
        }
    };
    if s.is_finite() { s } else { linear }
}

/// Robert Penner's easing with `b = 0`, `c = 1` (§4.2), for the types Sine … Bounce.
/// [`EasingKind::None`], `Linear` and `Custom` give `t/d` here; [`ease`] handles them itself.
pub(crate) fn penner(kind: EasingKind, range: EasingRange, t: f32, d: f32) -> f32 {
    use EasingKind as E;
    use EasingRange::*;
    match (kind, range) {
        (E::None | E::Linear | E::Custom, _) => t / d,

        (E::Sine, In) => -(t / d * (PI / 2.0)).cos() + 1.0,
        (E::Sine, Out) => (t / d * (PI / 2.0)).sin(),
        (E::Sine, InOut) => -0.5 * ((PI * t / d).cos() - 1.0),

        (E::Quad, In) => {
            let t = t / d;
            t * t
        }
        (E::Quad, Out) => {
            let t = t / d;
            -t * (t - 2.0)
        }
        (E::Quad, InOut) => {
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * t * t
            } else {
                let t = t - 1.0;
                -0.5 * (t * (t - 2.0) - 1.0)
            }
        }

        (E::Cubic, In) => {
            let t = t / d;
            t * t * t
        }
        (E::Cubic, Out) => {
            let t = t / d - 1.0;
            t * t * t + 1.0
        }
        (E::Cubic, InOut) => {
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * t * t * t
            } else {
                let t = t - 2.0;
                0.5 * (t * t * t + 2.0)
            }
        }

        (E::Quart, In) => {
            let t = t / d;
            t * t * t * t
        }
        (E::Quart, Out) => {
            let t = t / d - 1.0;
            -(t * t * t * t - 1.0)
        }
        (E::Quart, InOut) => {
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * t * t * t * t
            } else {
                let t = t - 2.0;
                -0.5 * (t * t * t * t - 2.0)
            }
        }

        (E::Quint, In) => {
            let t = t / d;
            t * t * t * t * t
        }
        (E::Quint, Out) => {
            let t = t / d - 1.0;
            t * t * t * t * t + 1.0
        }
        (E::Quint, InOut) => {
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * t * t * t * t * t
            } else {
                let t = t - 2.0;
                0.5 * (t * t * t * t * t + 2.0)
            }
        }

        (E::Expo, In) => {
            if t == 0.0 {
                0.0
            } else {
                2f32.powf(10.0 * (t / d - 1.0))
            }
        }
        (E::Expo, Out) => {
            if t == d {
                1.0
            } else {
                -(2f32.powf(-10.0 * t / d)) + 1.0
            }
        }
        (E::Expo, InOut) => {
            if t == 0.0 {
                return 0.0;
            }
            if t == d {
                return 1.0;
            }
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * 2f32.powf(10.0 * (t - 1.0))
            } else {
                0.5 * (-(2f32.powf(-10.0 * (t - 1.0))) + 2.0)
            }
        }

        (E::Circ, In) => {
            let t = t / d;
            -((1.0 - t * t).sqrt() - 1.0)
        }
        (E::Circ, Out) => {
            let t = t / d - 1.0;
            (1.0 - t * t).sqrt()
        }
        (E::Circ, InOut) => {
            let t = t / (d / 2.0);
            if t < 1.0 {
                -0.5 * ((1.0 - t * t).sqrt() - 1.0)
            } else {
                let t = t - 2.0;
                0.5 * ((1.0 - t * t).sqrt() + 1.0)
            }
        }

        (E::Back, In) => {
            let s = BACK_S;
            let t = t / d;
            t * t * ((s + 1.0) * t - s)
        }
        (E::Back, Out) => {
            let s = BACK_S;
            let t = t / d - 1.0;
            t * t * ((s + 1.0) * t + s) + 1.0
        }
        (E::Back, InOut) => {
            let s = BACK_S * 1.525;
            let t = t / (d / 2.0);
            if t < 1.0 {
                0.5 * (t * t * ((s + 1.0) * t - s))
            } else {
                let t = t - 2.0;
                0.5 * (t * t * ((s + 1.0) * t + s) + 2.0)
            }
        }

        (E::Elastic, In) => {
            if t == 0.0 {
                return 0.0;
            }
            let t = t / d;
            if t == 1.0 {
                return 1.0;
            }
            let p = d * 0.3;
            let s = p / 4.0;
            let t = t - 1.0;
            -(2f32.powf(10.0 * t) * ((t * d - s) * (2.0 * PI) / p).sin())
        }
        (E::Elastic, Out) => {
            if t == 0.0 {
                return 0.0;
            }
            let t = t / d;
            if t == 1.0 {
                return 1.0;
            }
            let p = d * 0.3;
            let s = p / 4.0;
            2f32.powf(-10.0 * t) * ((t * d - s) * (2.0 * PI) / p).sin() + 1.0
        }
        (E::Elastic, InOut) => {
            if t == 0.0 {
                return 0.0;
            }
            let t = t / (d / 2.0);
            if t == 2.0 {
                return 1.0;
            }
            let p = d * (0.3 * 1.5);
            let s = p / 4.0;
            if t < 1.0 {
                let t = t - 1.0;
                -0.5 * (2f32.powf(10.0 * t) * ((t * d - s) * (2.0 * PI) / p).sin())
            } else {
                let t = t - 1.0;
                2f32.powf(-10.0 * t) * ((t * d - s) * (2.0 * PI) / p).sin() * 0.5 + 1.0
            }
        }

        (E::Bounce, In) => 1.0 - bounce_out(d - t, d),
        (E::Bounce, Out) => bounce_out(t, d),
        (E::Bounce, InOut) => {
            if t < d / 2.0 {
                (1.0 - bounce_out(d - t * 2.0, d)) * 0.5
            } else {
                bounce_out(t * 2.0 - d, d) * 0.5 + 0.5
            }
        }
    }
}

/// Penner's Back overshoot constant (§4.2); InOut multiplies it by 1.525.
pub(crate) const BACK_S: f32 = 1.70158;

/// Penner's BounceOut with `b = 0`, `c = 1`: four parabolas meeting at 1/2.75, 2/2.75, 2.5/2.75.
fn bounce_out(t: f32, d: f32) -> f32 {
    let t = t / d;
    if t < 1.0 / 2.75 {
        7.5625 * t * t
    } else if t < 2.0 / 2.75 {
        let t = t - 1.5 / 2.75;
        7.5625 * t * t + 0.75
    } else if t < 2.5 / 2.75 {
        let t = t - 2.25 / 2.75;
        7.5625 * t * t + 0.9375
    } else {
        let t = t - 2.625 / 2.75;
        7.5625 * t * t + 0.984375
    }
}

/// The Custom easing (§4.2): a cubic bezier P0 = (0,0), P1, P2, P3 = (1,1) read as y(x).
///
/// 1. `x = (t/d)·(2 − w)`. AnimeEffects computes `c·t/d + b·w + (c·t/d + b)·(1 − w)` with
///    `b = 0`, which is `t/d` only at the default weight 1. Kept as is (the quirk).
/// 2. Newton–Raphson on the bezier's x polynomial, in `f64`: start at `u = x`; each of at most 25
///    iterations stops if the derivative is `< 1e-8`, else steps `u −= (x(u) − x)/x'(u)`, clamps
///    `u` to `[−2, 2]`, and stops once `|Δu| < 1e-6`.
/// 3. Returns `y(u)` cast to `f32`. The weight does not mix the result toward linear.
///
/// `t`, `d`, `w` are used as given (see [`ease`] for the clamping it applies first).
pub fn custom_bezier(bezier: &[f32; 4], t: f32, d: f32, w: f32) -> f32 {
    let [x1, y1, x2, y2] = bezier.map(f64::from);
    let (t, d, w) = (f64::from(t), f64::from(d), f64::from(w));
    let x = t / d + (t / d) * (1.0 - w);
    let mut u = x;
    for _ in 0..25 {
        let dx = bezier_derivative(x1, x2, u);
        if dx < 1e-8 {
            break;
        }
        let du = (bezier_component(x1, x2, u) - x) / dx;
        u = (u - du).clamp(-2.0, 2.0);
        if du.abs() < 1e-6 {
            break;
        }
    }
    bezier_component(y1, y2, u) as f32
}

/// One coordinate of the bezier with end values 0 and 1:
/// `3(1−u)²u·a + 3(1−u)u²·b + u³`.
fn bezier_component(a: f64, b: f64, u: f64) -> f64 {
    let v = 1.0 - u;
    3.0 * v * v * u * a + 3.0 * v * u * u * b + u * u * u
}

/// The derivative of [`bezier_component`] in `u`:
/// `3(1−u)²·a + 6(1−u)u·(b − a) + 3u²·(1 − b)`.
fn bezier_derivative(a: f64, b: f64, u: f64) -> f64 {
    let v = 1.0 - u;
    3.0 * v * v * a + 6.0 * v * u * (b - a) + 3.0 * u * u * (1.0 - b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use EasingKind::{
        Back, Bounce, Circ, Cubic, Custom, Elastic, Expo, Linear, Quad, Quart, Quint, Sine,
    };
    use EasingRange::*;

    fn e(kind: EasingKind, range: EasingRange) -> Easing {
        Easing {
            kind,
            range,
            ..Easing::default()
        }
    }

    /// The Custom easing with these control points `[x1, y1, x2, y2]`, weight 1.
    fn custom(bezier: [f32; 4]) -> Easing {
        Easing {
            bezier,
            ..e(Custom, InOut)
        }
    }

    trait WithWeight {
        fn with_weight(self, weight: f32) -> Self;
    }

    impl WithWeight for Easing {
        fn with_weight(self, weight: f32) -> Self {
            Easing { weight, ..self }
        }
    }

    fn close(a: f32, b: f32, eps: f32) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn codes_and_the_default() {
        for (i, kind) in EasingKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.code(), i as i32);
            assert_eq!(EasingKind::from_code(i as i32), Some(kind));
        }
        assert_eq!(Easing::default(), e(Linear, InOut));
    }

    #[test]
    fn none_holds_and_linear_is_t_over_d() {
        // None: s = 0 anywhere inside the segment (a step at the later key's frame).
        assert_eq!(ease(&e(EasingKind::None, In), 3.0, 4.0), 0.0);
        // Linear: 3/4 = 0.75; weight is ignored for Linear.
        assert_eq!(ease(&e(Linear, Out).with_weight(0.0), 3.0, 4.0), 0.75);
    }

    #[test]
    fn polynomial_easings_at_hand_computed_points() {
        // QuadIn(0.5) = 0.5² = 0.25.
        assert_eq!(ease(&e(Quad, In), 1.0, 2.0), 0.25);
        // QuadOut(0.5) = −0.5·(0.5 − 2) = 0.75.
        assert_eq!(ease(&e(Quad, Out), 1.0, 2.0), 0.75);
        // QuadInOut at t/d = 0.25: t' = 0.5 < 1 → 0.5·0.25 = 0.125;
        // at 0.75: t' = 1.5 → u = 0.5, −0.5·(0.5·(0.5 − 2) − 1) = −0.5·(−1.75) = 0.875.
        assert_eq!(ease(&e(Quad, InOut), 1.0, 4.0), 0.125);
        assert_eq!(ease(&e(Quad, InOut), 3.0, 4.0), 0.875);
        // CubicIn(0.5) = 0.125; CubicOut(0.5) = (−0.5)³ + 1 = 0.875.
        assert_eq!(ease(&e(Cubic, In), 1.0, 2.0), 0.125);
        assert_eq!(ease(&e(Cubic, Out), 1.0, 2.0), 0.875);
        // CubicInOut(0.75): t' = 1.5, u = −0.5, 0.5·(−0.125 + 2) = 0.9375.
        assert_eq!(ease(&e(Cubic, InOut), 3.0, 4.0), 0.9375);
        // QuartIn(0.5) = 0.0625; QuartOut(0.5) = −((−0.5)⁴ − 1) = 0.9375.
        assert_eq!(ease(&e(Quart, In), 1.0, 2.0), 0.0625);
        assert_eq!(ease(&e(Quart, Out), 1.0, 2.0), 0.9375);
        // QuartInOut(0.25): t' = 0.5, 0.5·0.0625 = 0.03125.
        assert_eq!(ease(&e(Quart, InOut), 1.0, 4.0), 0.03125);
        // QuintIn(0.5) = 0.03125; QuintOut(0.5) = (−0.5)⁵ + 1 = 0.96875.
        assert_eq!(ease(&e(Quint, In), 1.0, 2.0), 0.03125);
        assert_eq!(ease(&e(Quint, Out), 1.0, 2.0), 0.96875);
        // QuintInOut(0.75): u = −0.5, 0.5·(−0.03125 + 2) = 0.984375.
        assert_eq!(ease(&e(Quint, InOut), 3.0, 4.0), 0.984375);
    }

    #[test]
    fn sine_expo_circ_at_hand_computed_points() {
        // SineIn(0.5) = 1 − cos(π/4) = 1 − 0.70710678 = 0.29289322.
        assert!(close(ease(&e(Sine, In), 1.0, 2.0), 0.292_893_2, 1e-6));
        // SineOut(0.5) = sin(π/4) = 0.70710678.
        assert!(close(
            ease(&e(Sine, Out), 1.0, 2.0),
            std::f32::consts::FRAC_1_SQRT_2,
            1e-6
        ));
        // SineInOut(0.25) = −0.5·(cos(π/4) − 1) = 0.14644661.
        assert!(close(ease(&e(Sine, InOut), 1.0, 4.0), 0.146_446_6, 1e-6));
        // ExpoIn(0.5) = 2^(10·(0.5−1)) = 2^−5 = 0.03125; shortcut at t = 0.
        assert_eq!(ease(&e(Expo, In), 1.0, 2.0), 0.03125);
        assert_eq!(ease(&e(Expo, In), 0.0, 2.0), 0.0);
        // ExpoOut(0.5) = 1 − 2^−5 = 0.96875; shortcut at t = d.
        assert_eq!(ease(&e(Expo, Out), 1.0, 2.0), 0.96875);
        assert_eq!(ease(&e(Expo, Out), 2.0, 2.0), 1.0);
        // ExpoInOut(0.25): t' = 0.5, 0.5·2^(10·(−0.5)) = 0.5·2^−5 = 0.015625.
        assert_eq!(ease(&e(Expo, InOut), 1.0, 4.0), 0.015625);
        // ExpoInOut(0.75): t' = 1.5, 0.5·(2 − 2^(−10·0.5)) = 0.5·(2 − 0.03125) = 0.984375.
        assert_eq!(ease(&e(Expo, InOut), 3.0, 4.0), 0.984375);
        // CircIn(0.6) = 1 − √(1 − 0.36) = 1 − 0.8 = 0.2.
        assert!(close(ease(&e(Circ, In), 3.0, 5.0), 0.2, 1e-6));
        // CircOut(0.4): u = −0.6, √(1 − 0.36) = 0.8.
        assert!(close(ease(&e(Circ, Out), 2.0, 5.0), 0.8, 1e-6));
        // CircInOut(0.8): t' = 1.6, u = −0.4, 0.5·(√(1 − 0.16) + 1) = 0.5·1.9165151 = 0.9582576.
        assert!(close(ease(&e(Circ, InOut), 4.0, 5.0), 0.958_257_6, 1e-6));
    }

    #[test]
    fn back_elastic_bounce_at_hand_computed_points() {
        // BackIn(0.5) = 0.25·(2.70158·0.5 − 1.70158) = 0.25·(−0.35079) = −0.0876975.
        assert!(close(ease(&e(Back, In), 1.0, 2.0), -0.087_697_5, 1e-6));
        // BackOut(0.5): u = −0.5, 0.25·(2.70158·(−0.5) + 1.70158) + 1 = 0.25·0.35079 + 1 = 1.0876975.
        assert!(close(ease(&e(Back, Out), 1.0, 2.0), 1.087_697_5, 1e-6));
        // BackInOut(0.25): s = 1.70158·1.525 = 2.5949095, t' = 0.5,
        // 0.5·0.25·(3.5949095·0.5 − 2.5949095) = 0.125·(−0.79745475) = −0.09968184.
        assert!(close(ease(&e(Back, InOut), 1.0, 4.0), -0.099_681_84, 1e-6));
        // ElasticOut(0.5), d = 1: p = 0.3, s = 0.075,
        // 2^−5·sin((0.5 − 0.075)·2π/0.3) + 1 = 0.03125·sin(8.9011792) + 1
        // = 0.03125·0.5 + 1 = 1.015625 (8.9011792 = 2π + 2.6179939 and sin(5π/6) = 0.5).
        assert!(close(ease(&e(Elastic, Out), 0.5, 1.0), 1.015_625, 1e-5));
        // ElasticIn(0.5): u = −0.5, −(2^−5·sin((−0.5 − 0.075)·2π/0.3))
        // = −(0.03125·sin(−12.042772)) = −(0.03125·0.5) = −0.015625 (−12.042772 = −4π + 0.5235988).
        assert!(close(ease(&e(Elastic, In), 0.5, 1.0), -0.015_625, 1e-5));
        // ElasticInOut(0.25), d = 1: p = 0.45, s = 0.1125, t' = 0.5, u = −0.5,
        // −0.5·2^−5·sin((−0.5 − 0.1125)·2π/0.45) = −0.015625·sin(−8.5521133)
        // = −0.015625·(−0.7660444) = 0.01196944 (−8.5521133 = −2π − 2.2689280, sin = −sin(130°)).
        assert!(close(
            ease(&e(Elastic, InOut), 0.25, 1.0),
            0.011_969_44,
            1e-5
        ));
        // Shortcuts at the ends.
        assert_eq!(ease(&e(Elastic, In), 0.0, 3.0), 0.0);
        assert_eq!(ease(&e(Elastic, Out), 3.0, 3.0), 1.0);
        assert_eq!(ease(&e(Elastic, InOut), 3.0, 3.0), 1.0);
        // BounceOut(0.2) = 7.5625·0.04 = 0.3025 (first arc, 0.2 < 1/2.75 = 0.3636).
        assert!(close(ease(&e(Bounce, Out), 1.0, 5.0), 0.3025, 1e-6));
        // BounceOut(0.6): second arc, u = 0.6 − 1.5/2.75 = 0.0545455, 7.5625·0.0029752 + 0.75 = 0.7725.
        assert!(close(ease(&e(Bounce, Out), 3.0, 5.0), 0.7725, 1e-5));
        // BounceOut(0.85): third arc, u = 0.85 − 2.25/2.75 = 0.0318182, 7.5625·0.0010124 + 0.9375 = 0.9451563.
        assert!(close(ease(&e(Bounce, Out), 0.85, 1.0), 0.945_156_3, 1e-5));
        // BounceOut(0.95): fourth arc, u = 0.95 − 2.625/2.75 = −0.0045455, 7.5625·0.0000207 + 0.984375 = 0.9845313.
        assert!(close(ease(&e(Bounce, Out), 0.95, 1.0), 0.984_531_3, 1e-5));
        // BounceIn(0.8) = 1 − BounceOut(0.2) = 1 − 0.3025 = 0.6975.
        assert!(close(ease(&e(Bounce, In), 4.0, 5.0), 0.6975, 1e-6));
        // BounceInOut(0.25) = (1 − BounceOut(1 − 0.5))·0.5: BounceOut(0.5) second arc,
        // u = 0.5 − 0.5454545 = −0.0454545, 7.5625·0.0020661 + 0.75 = 0.765625 → (1 − 0.765625)·0.5 = 0.1171875.
        assert!(close(ease(&e(Bounce, InOut), 1.0, 4.0), 0.117_187_5, 1e-6));
        // BounceInOut(0.6) = BounceOut(0.2)·0.5 + 0.5 = 0.15125 + 0.5 = 0.65125.
        assert!(close(ease(&e(Bounce, InOut), 3.0, 5.0), 0.65125, 1e-6));
    }

    #[test]
    fn every_penner_type_runs_from_0_to_1() {
        let kinds = [
            Sine, Quad, Cubic, Quart, Quint, Expo, Circ, Back, Elastic, Bounce,
        ];
        for kind in kinds {
            for range in [In, Out, InOut] {
                let start = ease(&e(kind, range), 0.0, 7.0);
                let end = penner(kind, range, 7.0, 7.0);
                assert!(start.abs() < 1e-6, "{kind:?} {range:?} starts at {start}");
                assert!((end - 1.0).abs() < 1e-6, "{kind:?} {range:?} ends at {end}");
            }
        }
    }

    #[test]
    fn weight_mixes_toward_linear() {
        // QuadIn(0.5) = 0.25, linear 0.5, weight 0.4: 0.25·0.4 + 0.5·0.6 = 0.1 + 0.3 = 0.4.
        let s = ease(&e(Quad, In).with_weight(0.4), 1.0, 2.0);
        assert!(close(s, 0.4, 1e-6));
        // Weight 0 is linear.
        assert_eq!(ease(&e(Cubic, Out).with_weight(0.0), 1.0, 4.0), 0.25);
    }

    #[test]
    fn custom_bezier_at_weight_1() {
        // Control points (0,0),(1,1): x(u) = 3(1−u)²u·0 + 3(1−u)u²·1 + u³ = 3u² − 2u³, same for y,
        // so y(x) = x. At x = 0.3: Newton converges to u with 3u² − 2u³ = 0.3, y = 0.3.
        let linear = custom([0.0, 0.0, 1.0, 1.0]);
        assert!(close(ease(&linear, 3.0, 10.0), 0.3, 1e-6));
        // Default points (1,0),(0,1): x(u) = 3(1−u)²u + u³ and y(u) = 3(1−u)u² + u³.
        // At x = 0.5, by symmetry u = 0.5: x(0.5) = 3·0.25·0.5 + 0.125 = 0.5, y = 0.5.
        assert!(close(
            ease(&custom(Easing::DEFAULT_BEZIER), 1.0, 2.0),
            0.5,
            1e-6
        ));
        // Points (0.5,0),(1,1) at x = 0.5: x(u) = 1.5(1−u)²u + 3(1−u)u² + u³ = 1.5u − 0.5u³... :
        // expand: 1.5u(1 − 2u + u²) + 3u² − 3u³ + u³ = 1.5u + 0u² − 0.5u³.
        // Solve 1.5u − 0.5u³ = 0.5 → u³ − 3u + 1 = 0 → u = 0.34729636 (2·cos(4π/9)).
        // y(u) = 3(1−u)u² + u³ = 3u² − 2u³ = 0.36184 − 0.08378 = 0.27806.
        let b = custom([0.5, 0.0, 1.0, 1.0]);
        let u: f64 = 0.347_296_355_333_860_7;
        let y = (3.0 * u * u - 2.0 * u * u * u) as f32;
        assert!(close(ease(&b, 1.0, 2.0), y, 1e-6));
        assert!(close(y, 0.278_06, 1e-4));
    }

    #[test]
    fn custom_bezier_keeps_the_weight_quirk() {
        // Weight 0.5 at t/d = 0.25: x = 0.25·(2 − 0.5) = 0.375, not 0.25.
        // With points (0,0),(1,1) (y = x), the result is 0.375, and it is not mixed toward linear.
        let b = custom([0.0, 0.0, 1.0, 1.0]).with_weight(0.5);
        assert!(close(ease(&b, 1.0, 4.0), 0.375, 1e-6));
        // Weight 0 at t/d = 0.75: x = 0.75·2 = 1.5, past the end of the curve. On y = x the x
        // polynomial is 3u² − 2u³ with derivative 6u(1 − u); at the start u = 1.5 that is
        // 6·1.5·(−0.5) = −4.5 < 1e-8, so Newton stops at once and s = y(1.5) = 3·2.25 − 2·3.375 = 0.
        let b = b.with_weight(0.0);
        assert_eq!(ease(&b, 3.0, 4.0), 0.0);
        // With the default points the x polynomial is 3u − 6u² + 4u³ (derivative 3(1 − 2u)² ≥ 0),
        // so Newton converges past the end: 3u − 6u² + 4u³ = 1.5 at u = 1.1299605, and
        // y = 3(1−u)u² + u³ = 3·(−0.1299605)·1.2768108 + 1.4427458 = −0.4978050 + 1.4427458 = 0.9449408.
        let d = custom(Easing::DEFAULT_BEZIER).with_weight(0.0);
        let s = ease(&d, 3.0, 4.0);
        assert!(close(s, 0.944_940_8, 1e-5), "{s}");
    }

    #[test]
    fn degenerate_inputs_have_defined_results() {
        let q = e(Quad, In);
        // d ≤ 0, NaN or infinite: hold the earlier key.
        assert_eq!(ease(&q, 1.0, 0.0), 0.0);
        assert_eq!(ease(&q, 1.0, -2.0), 0.0);
        assert_eq!(ease(&q, 1.0, f32::NAN), 0.0);
        assert_eq!(ease(&q, 1.0, f32::INFINITY), 0.0);
        // NaN t counts as 0; t outside [0, d] is clamped (CircIn would otherwise take √ of < 0).
        assert_eq!(ease(&q, f32::NAN, 2.0), 0.0);
        assert_eq!(ease(&e(Circ, In), 5.0, 2.0), 1.0);
        assert_eq!(ease(&e(Circ, Out), -5.0, 2.0), 0.0);
        // NaN weight counts as 1; out-of-range weight is clamped.
        assert_eq!(ease(&q.with_weight(f32::NAN), 1.0, 2.0), 0.25);
        assert_eq!(ease(&q.with_weight(7.0), 1.0, 2.0), 0.25);
        // A NaN bezier falls back to linear progress.
        let nan = custom([f32::NAN, 0.0, 1.0, 1.0]);
        assert_eq!(ease(&nan, 1.0, 4.0), 0.25);
        let inf = custom([0.2, f32::INFINITY, 1.0, 1.0]);
        assert!(ease(&inf, 1.0, 4.0).is_finite());
    }
}
