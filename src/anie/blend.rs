//! Blend modes, the layer fragment, compositing, opacity, clipping masks and HSV
//! (§4.4, §4.8, §4.9, §4.10 and the Addendum).
//!
//! Everything is **straight alpha**. Colours are `f32` channels in `[0, 1]`; the framebuffer, the
//! destination copy and the clip mask are 8 bits per channel, as in AnimeEffects (RGBA8 targets,
//! RG8UI mask), so those values are `u8` here.
//!
//! A layer fragment, step by step (§4.9):
//! 1. `src = (1, 1, 1, a_op) · texel` with `a_op = floor(255·worldOpacity)/255` ([`opacity_alpha8`]);
//! 2. clippees: `src.a *= mask/255` ([`ClipTexel::clippee_factor`]);
//! 3. `out.rgb = dst.a·BLEND(dst.rgb, src.rgb) + (1 − dst.a)·src.rgb`, `out.a = src.a`
//!    ([`layer_fragment`]), with `dst` the framebuffer copied before the mesh was drawn;
//! 4. fixed-function `SRC_ALPHA, ONE_MINUS_SRC_ALPHA` on colour and `ONE, ONE` on alpha into the
//!    live framebuffer ([`composite`]).
//!
//! HSV-active layers replace steps 2–3 with [`hsv_fragment`] (§4.10).
//!
//! Checked against AnimeEffects 1.7's framebuffers `blend_v8` (norm, mul, scrn, over, diff, lddg,
//! dark, sLit over an opaque gradient and over transparency) and `clip_v8` (clipper opacity
//! 1 → 0.5, additive alpha): every pixel within one 8-bit step, with the rasteriser of
//! [`super::cpu::raster`] and a throwaway scene loader.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use glam::{Vec3, Vec4};

use super::lerp;

/// The blend mode is the file model's (the ImageKey's 4-byte id, §4.9), in AnimeEffects' enum
/// order.
pub use crate::formats::anie::BlendMode;

/// One channel of a blend mode (§4.9): `a` is the destination, `b` the layer's colour.
/// The formulas are the shader's, including its edge cases (ColorBurn and Divide give 0 when
/// `b = 0`, ColorDodge gives 1 when `b = 1`). Inputs are expected in `[0, 1]`.
///
/// | mode (id) | formula |
/// |---|---|
/// | Normal (`norm`) | B |
/// | Darken (`dark`) | min(A, B) |
/// | Multiply (`mul `) | A·B |
/// | ColorBurn (`idiv`) | B = 0 ? 0 : max(0, 1 − (1 − A)/B) |
/// | LinearBurn (`lbrn`) | max(0, A + B − 1) |
/// | Lighten (`lite`) | max(A, B) |
/// | Screen (`scrn`) | 1 − (1 − A)(1 − B) |
/// | ColorDodge (`div `) | B = 1 ? 1 : min(1, A/(1 − B)) |
/// | LinearDodge (`lddg`) | min(1, A + B) |
/// | Overlay (`over`) | A < 0.5 ? 2AB : 1 − 2(1 − A)(1 − B) |
/// | SoftLight (`sLit`) | A < 0.5 ? 2AB + A²(1 − 2B) : √A·(2B − 1) + 2A(1 − B) |
/// | HardLight (`hLit`) | Overlay(B, A) |
/// | VividLight (`vLit`) | B < 0.5 ? ColorBurn(A, 2B) : ColorDodge(A, 2(B − 0.5)) |
/// | LinearLight (`lLit`) | B < 0.5 ? LinearBurn(A, 2B) : LinearDodge(A, 2(B − 0.5)) |
/// | PinLight (`pLit`) | B < 0.5 ? Darken(A, 2B) : Lighten(A, 2(B − 0.5)) |
/// | HardMix (`hMix`) | VividLight(A, B) < 0.5 ? 0 : 1 |
/// | Difference (`diff`) | \|A − B\| |
/// | Exclusion (`smud`) | A + B − 2AB |
/// | Subtract (`fsub`) | max(0, A − B) |
/// | Divide (`fdiv`) | B = 0 ? 0 : min(1, A/B) |
///
/// SoftLight branches on the **destination** A, not on the layer B as in Photoshop. The
/// reference render `blend_v8` confirms it: destination blue 128, layer blue 40 at alpha 200
/// gives 100 (this formula: 91.86·200/255 + 128·55/255 = 99.7), where B < 0.5 would give 94.
pub(crate) fn blend_channel(mode: BlendMode, a: f32, b: f32) -> f32 {
    use BlendMode::*;
    match mode {
        Normal => b,
        Darken => a.min(b),
        Multiply => a * b,
        ColorBurn => color_burn(a, b),
        LinearBurn => linear_burn(a, b),
        Lighten => a.max(b),
        Screen => 1.0 - (1.0 - a) * (1.0 - b),
        ColorDodge => color_dodge(a, b),
        LinearDodge => linear_dodge(a, b),
        Overlay => overlay(a, b),
        SoftLight => {
            if a < 0.5 {
                2.0 * a * b + a * a * (1.0 - 2.0 * b)
            } else {
                a.sqrt() * (2.0 * b - 1.0) + 2.0 * a * (1.0 - b)
            }
        }
        HardLight => overlay(b, a),
        VividLight => vivid_light(a, b),
        LinearLight => {
            if b < 0.5 {
                linear_burn(a, 2.0 * b)
            } else {
                linear_dodge(a, 2.0 * (b - 0.5))
            }
        }
        PinLight => {
            if b < 0.5 {
                a.min(2.0 * b)
            } else {
                a.max(2.0 * (b - 0.5))
            }
        }
        HardMix => {
            if vivid_light(a, b) < 0.5 {
                0.0
            } else {
                1.0
            }
        }
        Difference => (a - b).abs(),
        Exclusion => a + b - 2.0 * a * b,
        Subtract => (a - b).max(0.0),
        Divide => {
            if b == 0.0 {
                0.0
            } else {
                (a / b).min(1.0)
            }
        }
    }
}

fn color_burn(a: f32, b: f32) -> f32 {
    if b == 0.0 {
        0.0
    } else {
        (1.0 - (1.0 - a) / b).max(0.0)
    }
}

fn linear_burn(a: f32, b: f32) -> f32 {
    (a + b - 1.0).max(0.0)
}

fn color_dodge(a: f32, b: f32) -> f32 {
    if b == 1.0 {
        1.0
    } else {
        (a / (1.0 - b)).min(1.0)
    }
}

fn linear_dodge(a: f32, b: f32) -> f32 {
    (a + b).min(1.0)
}

fn overlay(a: f32, b: f32) -> f32 {
    if a < 0.5 {
        2.0 * a * b
    } else {
        1.0 - 2.0 * (1.0 - a) * (1.0 - b)
    }
}

fn vivid_light(a: f32, b: f32) -> f32 {
    if b < 0.5 {
        color_burn(a, 2.0 * b)
    } else {
        color_dodge(a, 2.0 * (b - 0.5))
    }
}

/// [`blend_channel`] on the three colour channels.
pub(crate) fn blend_rgb(mode: BlendMode, dst: Vec3, src: Vec3) -> Vec3 {
    Vec3::new(
        blend_channel(mode, dst.x, src.x),
        blend_channel(mode, dst.y, src.y),
        blend_channel(mode, dst.z, src.z),
    )
}

/// A channel clamped to `[0, 1]`, NaN → 0.
pub fn saturate(v: f32) -> f32 {
    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
}

/// A `[0, 1]` value as an 8-bit unorm: `round(255·v)` after [`saturate`] (GL's float → unorm8
/// conversion, round to nearest).
pub(crate) fn to_unorm8(v: f32) -> u8 {
    (saturate(v) * 255.0 + 0.5) as u8
}

/// An 8-bit unorm as `[0, 1]`: `v/255`.
pub(crate) fn from_unorm8(v: u8) -> f32 {
    f32::from(v) / 255.0
}

/// An 8-bit RGBA pixel as `[0, 1]` channels.
pub(crate) fn rgba_from_unorm8(p: [u8; 4]) -> Vec4 {
    Vec4::new(
        from_unorm8(p[0]),
        from_unorm8(p[1]),
        from_unorm8(p[2]),
        from_unorm8(p[3]),
    )
}

/// `[0, 1]` RGBA channels as an 8-bit pixel ([`to_unorm8`] per channel).
pub(crate) fn rgba_to_unorm8(c: Vec4) -> [u8; 4] {
    [
        to_unorm8(c.x),
        to_unorm8(c.y),
        to_unorm8(c.z),
        to_unorm8(c.w),
    ]
}

/// The layer's 8-bit alpha (§4.4): `QColor(255, 255, 255, clamp(int(255·worldOpacity)))`, i.e.
/// `255·worldOpacity` (in `f32`) **truncated** and clamped to 0..=255. 0.5 gives 127
/// (Addendum 2). NaN gives 0.
pub fn opacity_alpha8(world_opacity: f32) -> u8 {
    // `as` truncates toward zero, saturates, and maps NaN to 0.
    (255.0 * world_opacity) as u8
}

/// The layer fragment (§4.9) in straight alpha, before the fixed-function blend:
/// `src = (1,1,1, alpha8/255)·texel`; `src.a *= clip` (clippees; pass 1 otherwise);
/// `out.rgb = dst.a·BLEND(dst.rgb, src.rgb) + (1 − dst.a)·src.rgb`; `out.a = src.a`.
///
/// `texel` is the sampled texture colour (straight alpha), `dst` the destination copy's pixel
/// (made before this mesh was drawn). Inputs are [`saturate`]d first. For Normal the result is
/// `src` itself (the formula gives `dst.a·B + (1 − dst.a)·B = B` up to one rounding, and
/// AnimeEffects does not even refresh the destination copy for Normal layers).
pub fn layer_fragment(mode: BlendMode, texel: Vec4, alpha8: u8, clip: f32, dst: [u8; 4]) -> Vec4 {
    let texel = texel.map(saturate);
    let src_rgb = texel.truncate();
    let src_a = from_unorm8(alpha8) * texel.w * saturate(clip);
    if mode == BlendMode::Normal {
        return src_rgb.extend(src_a);
    }
    let dst = rgba_from_unorm8(dst);
    let dst_a = dst.w;
    let rgb = dst_a * blend_rgb(mode, dst.truncate(), src_rgb) + (1.0 - dst_a) * src_rgb;
    rgb.extend(src_a)
}

/// The fixed-function blend into the framebuffer (§4.9, Addendum 1; the reference renders'
/// framebuffer): `glBlendFuncSeparate(SRC_ALPHA, ONE_MINUS_SRC_ALPHA, ONE, ONE)` on RGBA8:
/// `fb.rgb = out.rgb·out.a + fb.rgb·(1 − out.a)`, `fb.a = min(1, out.a + fb.a)` (alpha **adds**),
/// each channel rounded to 8 bits. `out` is [`saturate`]d first, as GL clamps fragment colours
/// for unorm targets.
///
/// The arithmetic is exact `f32` with one rounding per channel; a GPU (llvmpipe) may round each
/// product to 8 bits, which differs by at most one step.
pub fn composite(fb: [u8; 4], out: Vec4) -> [u8; 4] {
    let out = out.map(saturate);
    let fb = rgba_from_unorm8(fb);
    let a = out.w;
    let rgb = out.truncate() * a + fb.truncate() * (1.0 - a);
    rgba_to_unorm8(rgb.extend(a + fb.w))
}

/// A texel of the clipping mask (§4.8): an RG8UI texture holding the id of the clipper that
/// wrote it and its 8-bit coverage. Cleared to `{0, 0}` at the start of every frame and when the
/// ids wrap; clipper ids run 1..=255.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ClipTexel {
    /// The id of the clipper that wrote this texel (1..=255; 0: none).
    pub id: u8,
    /// Its coverage here, `0..=255`.
    pub coverage: u8,
}

impl ClipTexel {
    /// The cleared mask.
    pub const CLEAR: Self = Self { id: 0, coverage: 0 };

    /// The mask after clipper `id` writes coverage `coverage` here (§4.8): coverage from the
    /// same id adds, capped at 255 (a folder clipper writes all its child layers); another id
    /// replaces the texel.
    pub fn write(self, id: u8, coverage: u8) -> Self {
        if self.id == id {
            Self {
                id,
                coverage: self.coverage.saturating_add(coverage),
            }
        } else {
            Self { id, coverage }
        }
    }

    /// A clippee's alpha factor here (§4.8): `None` (discard the fragment) where the mask's id
    /// is not its clipper's, else `coverage/255`.
    pub fn clippee_factor(self, clipper_id: u8) -> Option<f32> {
        (self.id == clipper_id).then(|| from_unorm8(self.coverage))
    }
}

/// A clipper's coverage at a fragment (§4.8): `uint(alpha·255)` (truncated, clamped to 0..=255,
/// NaN → 0), where `alpha` = texture alpha × the clipper's world opacity.
pub fn clip_coverage(alpha: f32) -> u8 {
    (alpha * 255.0) as u8
}

/// An HSV key's value (§3, §4.10): hue in degrees, saturation and value in percent, and the
/// absolute-hue flag (format ≥ 0.7). The built-in default is `{0, 100, 100, false}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HsvAdjust {
    /// Hue shift in degrees (or the hue itself while `absolute`).
    pub hue: i32,
    /// Saturation in percent (100: unchanged).
    pub sat: i32,
    /// Value (brightness) in percent (100: unchanged).
    pub val: i32,
    /// Whether `hue` replaces the texel's hue instead of shifting it (format ≥ 0.7).
    pub absolute: bool,
}

impl HsvAdjust {
    /// No change: `{0, 100, 100, relative}`.
    pub const DEFAULT: Self = Self {
        hue: 0,
        sat: 100,
        val: 100,
        absolute: false,
    };

    /// Between two HSV keys (§4.10): hue, sat and val lerped with the eased `s` and **truncated
    /// to int** (NaN → 0). The absolute flag is not interpolated: AnimeEffects keeps the value
    /// of its previous evaluation, which the caller supplies as `absolute`.
    pub fn lerp(k0: &Self, k1: &Self, s: f32, absolute: bool) -> Self {
        let mix = |a: i32, b: i32| lerp(a as f32, b as f32, s) as i32;
        Self {
            hue: mix(k0.hue, k1.hue),
            sat: mix(k0.sat, k1.sat),
            val: mix(k0.val, k1.val),
            absolute,
        }
    }
}

impl Default for HsvAdjust {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// RGB → HSV with all three in `[0, 1]` (hue as a fraction of a turn, red = 0, green = 1/3,
/// blue = 2/3). Greys have hue 0 and saturation 0.
pub(crate) fn rgb_to_hsv(rgb: Vec3) -> Vec3 {
    let (r, g, b) = (rgb.x, rgb.y, rgb.z);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let d = max - min;
    let h = if d <= 0.0 {
        0.0
    } else if max == r {
        ((g - b) / d).rem_euclid(6.0) / 6.0
    } else if max == g {
        ((b - r) / d + 2.0) / 6.0
    } else {
        ((r - g) / d + 4.0) / 6.0
    };
    let s = if max <= 0.0 { 0.0 } else { d / max };
    Vec3::new(h, s, max)
}

/// HSV → RGB, the inverse of [`rgb_to_hsv`]; the hue wraps (`fract`).
pub(crate) fn hsv_to_rgb(hsv: Vec3) -> Vec3 {
    let (h, s, v) = (hsv.x, hsv.y, hsv.z);
    let channel = |offset: f32| {
        let k = (h + offset).rem_euclid(1.0) * 6.0;
        let p = (k - 3.0).abs() - 1.0;
        v * lerp(1.0, p.clamp(0.0, 1.0), s)
    };
    Vec3::new(channel(0.0), channel(2.0 / 3.0), channel(1.0 / 3.0))
}

/// The HSV shader's colour change (§4.10, v1.6+ meaning, Addendum 14): rgb → hsv;
/// `h = absolute ? hue/360 : fract(h + hue/360)`; `s = min(1, s·sat/100)`;
/// `v = min(1, v·val/100)`; hsv → rgb.
pub fn hsv_adjust(rgb: Vec3, adjust: &HsvAdjust) -> Vec3 {
    let hsv = rgb_to_hsv(rgb.map(saturate));
    let hue = adjust.hue as f32 / 360.0;
    let h = if adjust.absolute {
        hue
    } else {
        (hsv.x + hue).rem_euclid(1.0)
    };
    let s = (hsv.y * adjust.sat as f32 / 100.0).min(1.0);
    let v = (hsv.z * adjust.val as f32 / 100.0).min(1.0);
    hsv_to_rgb(Vec3::new(h, s.max(0.0), v.max(0.0)))
}

/// An HSV-active layer's fragment (§4.10): drawn **instead of** its blend-mode shader, with
/// normal compositing, and unmasked even if it is a clippee (only the non-clippee variant of
/// the shader exists). `src = (1,1,1, alpha8/255)·texel`, colour changed by [`hsv_adjust`].
/// Composite the result with [`composite`].
pub fn hsv_fragment(texel: Vec4, alpha8: u8, adjust: &HsvAdjust) -> Vec4 {
    let texel = texel.map(saturate);
    hsv_adjust(texel.truncate(), adjust).extend(from_unorm8(alpha8) * texel.w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use BlendMode::*;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn modes_are_numbered_in_enum_order() {
        for (i, mode) in BlendMode::ALL.into_iter().enumerate() {
            assert_eq!(mode as usize, i);
            assert_eq!(BlendMode::from_id(mode.id()), Some(mode));
        }
        assert_eq!(BlendMode::from_id(*b"div "), Some(ColorDodge));
        assert_eq!(BlendMode::from_id(*b"xxxx"), None);
    }

    #[test]
    fn each_mode_on_two_fixed_values() {
        // A = destination 0.6, B = layer 0.3 (and B = 0.7 for the modes that split on B).
        let (a, b) = (0.6, 0.3);
        let cases = [
            (Normal, 0.3),            // B
            (Darken, 0.3),            // min(0.6, 0.3)
            (Multiply, 0.18),         // 0.6·0.3
            (ColorBurn, 0.0),         // max(0, 1 − (1 − 0.6)/0.3) = max(0, −0.3333) = 0
            (LinearBurn, 0.0),        // max(0, 0.6 + 0.3 − 1) = max(0, −0.1) = 0
            (Lighten, 0.6),           // max(0.6, 0.3)
            (Screen, 0.72),           // 1 − 0.4·0.7 = 1 − 0.28
            (ColorDodge, 0.6 / 0.7),  // min(1, 0.6/0.7) = 0.8571429
            (LinearDodge, 0.9),       // min(1, 0.9)
            (Overlay, 0.44),          // A ≥ 0.5: 1 − 2·0.4·0.7 = 1 − 0.56
            (SoftLight, 0.530_161_3), // A ≥ 0.5: √0.6·(2·0.3 − 1) + 2·0.6·0.7 = −0.3098387 + 0.84
            (HardLight, 0.36),        // Overlay(B=0.3, A=0.6): 0.3 < 0.5 → 2·0.3·0.6
            (VividLight, 1.0 / 3.0),  // B < 0.5: ColorBurn(0.6, 0.6) = 1 − 0.4/0.6 = 0.3333
            (LinearLight, 0.2),       // B < 0.5: LinearBurn(0.6, 0.6) = 0.2
            (PinLight, 0.6),          // B < 0.5: min(0.6, 0.6)
            (HardMix, 0.0),           // VividLight = 0.3333 < 0.5 → 0
            (Difference, 0.3),        // |0.6 − 0.3|
            (Exclusion, 0.54),        // 0.6 + 0.3 − 2·0.18 = 0.9 − 0.36
            (Subtract, 0.3),          // max(0, 0.3)
            (Divide, 1.0),            // min(1, 0.6/0.3 = 2)
        ];
        for (mode, expected) in cases {
            let got = blend_channel(mode, a, b);
            assert!(
                (got - expected).abs() < 1e-6,
                "{mode:?}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn modes_that_split_on_the_other_side() {
        // A = 0.2 (dark destination), B = 0.7 (light layer).
        let (a, b) = (0.2, 0.7);
        // Overlay, A < 0.5: 2·0.2·0.7 = 0.28.
        assert!(close(blend_channel(Overlay, a, b), 0.28));
        // SoftLight, A < 0.5: 2·0.2·0.7 + 0.04·(1 − 1.4) = 0.28 − 0.016 = 0.264.
        assert!(close(blend_channel(SoftLight, a, b), 0.264));
        // HardLight = Overlay(0.7, 0.2): 0.7 ≥ 0.5 → 1 − 2·0.3·0.8 = 0.52.
        assert!(close(blend_channel(HardLight, a, b), 0.52));
        // VividLight, B ≥ 0.5: ColorDodge(0.2, 0.4) = 0.2/0.6 = 0.3333333.
        assert!(close(blend_channel(VividLight, a, b), 1.0 / 3.0));
        // LinearLight, B ≥ 0.5: LinearDodge(0.2, 0.4) = 0.6.
        assert!(close(blend_channel(LinearLight, a, b), 0.6));
        // PinLight, B ≥ 0.5: max(0.2, 0.4) = 0.4.
        assert!(close(blend_channel(PinLight, a, b), 0.4));
        // HardMix: VividLight 0.3333 < 0.5 → 0; with A = 0.5: ColorDodge(0.5, 0.4) = 0.8333 → 1.
        assert_eq!(blend_channel(HardMix, a, b), 0.0);
        assert_eq!(blend_channel(HardMix, 0.5, b), 1.0);
        // ColorDodge: min(1, 0.2/0.3) = 0.6666667; Subtract max(0, −0.5) = 0.
        assert!(close(blend_channel(ColorDodge, a, b), 0.2 / 0.3));
        assert_eq!(blend_channel(Subtract, a, b), 0.0);
        // LinearDodge caps: min(1, 0.7 + 0.7) = 1. Divide: 0.2/0.7 = 0.2857143.
        assert_eq!(blend_channel(LinearDodge, 0.7, 0.7), 1.0);
        assert!(close(blend_channel(Divide, a, b), 0.2 / 0.7));
    }

    #[test]
    fn shader_edge_cases() {
        // ColorBurn and Divide give 0 for B = 0; ColorDodge gives 1 for B = 1.
        assert_eq!(blend_channel(ColorBurn, 0.7, 0.0), 0.0);
        assert_eq!(blend_channel(Divide, 0.7, 0.0), 0.0);
        assert_eq!(blend_channel(ColorDodge, 0.0, 1.0), 1.0);
        // VividLight at B = 0: ColorBurn(A, 0) = 0; at B = 1: ColorDodge(A, 1) = 1.
        assert_eq!(blend_channel(VividLight, 0.4, 0.0), 0.0);
        assert_eq!(blend_channel(VividLight, 0.4, 1.0), 1.0);
    }

    #[test]
    fn opacity_is_truncated_to_8_bits() {
        // 255·0.5 = 127.5 → 127 (Addendum 2); 255·1 = 255; 255·0.999 = 254.745 → 254.
        assert_eq!(opacity_alpha8(0.5), 127);
        assert_eq!(opacity_alpha8(1.0), 255);
        assert_eq!(opacity_alpha8(0.999), 254);
        assert_eq!(opacity_alpha8(-0.2), 0);
        assert_eq!(opacity_alpha8(3.0), 255);
        assert_eq!(opacity_alpha8(f32::NAN), 0);
    }

    #[test]
    fn normal_layer_over_transparent_black() {
        // Addendum 1: a layer colour 30 at alpha 90 onto (0,0,0,0):
        // rgb = 30/255·90/255 + 0 → ·255 = 30·90/255 = 10.588 → 11; a = 90.
        let texel = Vec4::new(30.0 / 255.0, 30.0 / 255.0, 30.0 / 255.0, 1.0);
        let out = layer_fragment(Normal, texel, 90, 1.0, [0; 4]);
        assert_eq!(composite([0; 4], out), [11, 11, 11, 90]);
    }

    #[test]
    fn alpha_adds_while_colour_goes_over() {
        // fb (100, 0, 0, 128); layer white at alpha 127 (opacity 0.5):
        // rgb = 1·127/255 + fb·(1 − 127/255): r = 127 + 100·128/255 = 127 + 50.196 = 177.196 → 177,
        //   g = b = 127; alpha = min(255, 127 + 128) = 255.
        let out = layer_fragment(Normal, Vec4::ONE, opacity_alpha8(0.5), 1.0, [0; 4]);
        assert_eq!(composite([100, 0, 0, 128], out), [177, 127, 127, 255]);
        // Alpha saturates: 200 + 127 → 255.
        assert_eq!(composite([0, 0, 0, 200], out)[3], 255);
    }

    #[test]
    fn blend_modes_weight_by_destination_alpha() {
        // Multiply, dst (204, 102, 0, 128) = (0.8, 0.4, 0, 0.5019608), layer (0.5, 0.5, 1) opaque:
        // BLEND = (0.4, 0.2, 0); out = 0.5019608·BLEND + 0.4980392·src
        //   r = 0.2007843 + 0.2490196 = 0.4498039, g = 0.1003922 + 0.2490196 = 0.3494118,
        //   b = 0 + 0.4980392 = 0.4980392; out.a = 1.
        let dst = [204, 102, 0, 128];
        let out = layer_fragment(Multiply, Vec4::new(0.5, 0.5, 1.0, 1.0), 255, 1.0, dst);
        assert!(close(out.x, 0.449_803_9) && close(out.y, 0.349_411_8));
        assert!(close(out.z, 0.498_039_2) && out.w == 1.0);
        // Composite with out.a = 1 replaces the colour: round(0.4498039·255) = round(114.7) = 115,
        // round(89.1) = 89, round(127.0) = 127; alpha min(1, 1 + 0.5) → 255.
        assert_eq!(composite(dst, out), [115, 89, 127, 255]);
        // Over a transparent destination every mode is Normal: dst.a = 0 → out = src.
        let out = layer_fragment(
            Difference,
            Vec4::new(0.2, 0.4, 0.6, 1.0),
            255,
            1.0,
            [9, 9, 9, 0],
        );
        assert!(close(out.x, 0.2) && close(out.y, 0.4) && close(out.z, 0.6));
    }

    #[test]
    fn clipping_mask() {
        // Coverage: texture alpha 0.8 × clipper opacity 0.5 = 0.4 → uint(102.0) = 102.
        assert_eq!(clip_coverage(0.8 * 0.5), 102);
        assert_eq!(clip_coverage(0.999), 254); // 254.745 truncated
        assert_eq!(clip_coverage(f32::NAN), 0);
        // Same id adds and caps; another id replaces.
        let m = ClipTexel::CLEAR.write(3, 200);
        assert_eq!(
            m,
            ClipTexel {
                id: 3,
                coverage: 200
            }
        );
        assert_eq!(
            m.write(3, 100),
            ClipTexel {
                id: 3,
                coverage: 255
            }
        );
        assert_eq!(
            m.write(4, 10),
            ClipTexel {
                id: 4,
                coverage: 10
            }
        );
        // Clippee: other id → discard; same id → alpha × 102/255 = 0.4.
        let m = ClipTexel {
            id: 3,
            coverage: 102,
        };
        assert_eq!(m.clippee_factor(2), None);
        assert!(close(m.clippee_factor(3).unwrap(), 0.4));
        // In the fragment: opaque texel, opacity 255, clip 0.4 → out.a = 0.4 → composite onto
        // transparent black: white·0.4 = 102, alpha 102.
        let out = layer_fragment(Normal, Vec4::ONE, 255, 0.4, [0; 4]);
        assert_eq!(composite([0; 4], out), [102, 102, 102, 102]);
    }

    #[test]
    fn rgb_hsv_round_trip_by_hand() {
        // (1, 0.5, 0): max r = 1, min 0, d = 1, h = ((0.5 − 0)/1 mod 6)/6 = 0.0833333 (30°),
        // s = 1, v = 1.
        let hsv = rgb_to_hsv(Vec3::new(1.0, 0.5, 0.0));
        assert!(close(hsv.x, 30.0 / 360.0) && hsv.y == 1.0 && hsv.z == 1.0);
        assert!(
            (hsv_to_rgb(hsv) - Vec3::new(1.0, 0.5, 0.0))
                .abs()
                .max_element()
                < 1e-6
        );
        // Blue (0, 0, 1): h = ((0 − 0)/1 + 4)/6 = 2/3.
        assert!(close(rgb_to_hsv(Vec3::Z).x, 2.0 / 3.0));
        // Grey (0.5, 0.5, 0.5): h = 0, s = 0, v = 0.5.
        assert_eq!(rgb_to_hsv(Vec3::splat(0.5)), Vec3::new(0.0, 0.0, 0.5));
        // Magenta (1, 0, 1): max r (ties go to r first), h = ((0 − 1)/1 mod 6)/6 = 5/6.
        assert!(close(rgb_to_hsv(Vec3::new(1.0, 0.0, 1.0)).x, 5.0 / 6.0));
    }

    #[test]
    fn hsv_adjust_by_hand() {
        // Red, hue +120 (relative): h = fract(0 + 1/3) → green (0, 1, 0).
        let shift = HsvAdjust {
            hue: 120,
            ..HsvAdjust::DEFAULT
        };
        let c = hsv_adjust(Vec3::X, &shift);
        assert!((c - Vec3::Y).abs().max_element() < 1e-6, "{c}");
        // Red, hue −120: fract(0 − 1/3) = 2/3 → blue.
        let c = hsv_adjust(
            Vec3::X,
            &HsvAdjust {
                hue: -120,
                ..HsvAdjust::DEFAULT
            },
        );
        assert!((c - Vec3::Z).abs().max_element() < 1e-6, "{c}");
        // Absolute hue 240 on (1, 0.5, 0): h = 2/3, s = 1, v = 1 → blue.
        let c = hsv_adjust(
            Vec3::new(1.0, 0.5, 0.0),
            &HsvAdjust {
                hue: 240,
                absolute: true,
                ..HsvAdjust::DEFAULT
            },
        );
        assert!((c - Vec3::Z).abs().max_element() < 1e-6, "{c}");
        // (0.8, 0.4, 0.4): h = 0, s = 0.5, v = 0.8. sat 50 → s = 0.25; val 200 → v = min(1, 1.6) = 1:
        // rgb = (1, 0.75, 0.75).
        let c = hsv_adjust(
            Vec3::new(0.8, 0.4, 0.4),
            &HsvAdjust {
                hue: 0,
                sat: 50,
                val: 200,
                absolute: false,
            },
        );
        assert!(
            (c - Vec3::new(1.0, 0.75, 0.75)).abs().max_element() < 1e-6,
            "{c}"
        );
        // sat 300 on s = 0.5 → min(1, 1.5) = 1: (0.8, 0, 0).
        let c = hsv_adjust(
            Vec3::new(0.8, 0.4, 0.4),
            &HsvAdjust {
                sat: 300,
                ..HsvAdjust::DEFAULT
            },
        );
        assert!(
            (c - Vec3::new(0.8, 0.0, 0.0)).abs().max_element() < 1e-6,
            "{c}"
        );
        // The default changes nothing.
        let c = hsv_adjust(Vec3::new(0.3, 0.6, 0.9), &HsvAdjust::DEFAULT);
        assert!(
            (c - Vec3::new(0.3, 0.6, 0.9)).abs().max_element() < 1e-6,
            "{c}"
        );
    }

    #[test]
    fn hsv_keys_lerp_and_truncate() {
        // hue 0 → 100 at s = 0.555: 55.5 → 55; sat 100 → 0: 44.5 → 44; val 100 → 101: 100.555 → 100.
        let k0 = HsvAdjust::DEFAULT;
        let k1 = HsvAdjust {
            hue: 100,
            sat: 0,
            val: 101,
            absolute: true,
        };
        let h = HsvAdjust::lerp(&k0, &k1, 0.555, false);
        assert_eq!((h.hue, h.sat, h.val, h.absolute), (55, 44, 100, false));
        // Truncation is toward zero for negatives: 0 → −100 at 0.555 = −55.5 → −55.
        let k2 = HsvAdjust { hue: -100, ..k0 };
        assert_eq!(HsvAdjust::lerp(&k0, &k2, 0.555, true).hue, -55);
    }

    #[test]
    fn hsv_fragment_keeps_alpha_and_ignores_the_mask() {
        let out = hsv_fragment(
            Vec4::new(1.0, 0.0, 0.0, 0.5),
            255,
            &HsvAdjust {
                hue: 120,
                ..HsvAdjust::DEFAULT
            },
        );
        assert!((out - Vec4::new(0.0, 1.0, 0.0, 0.5)).abs().max_element() < 1e-6);
    }

    #[test]
    fn nan_inputs_are_defined() {
        let out = layer_fragment(Screen, Vec4::splat(f32::NAN), 255, f32::NAN, [1, 2, 3, 4]);
        assert!(!out.is_nan());
        assert_eq!(composite([5, 5, 5, 5], Vec4::splat(f32::NAN)), [5, 5, 5, 5]);
        assert!(!hsv_adjust(Vec3::splat(f32::NAN), &HsvAdjust::DEFAULT).is_nan());
        assert_eq!(to_unorm8(f32::NAN), 0);
    }
}
