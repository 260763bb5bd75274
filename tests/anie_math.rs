//! The `anie` math modules chained together and checked against AnimeEffects 1.7's own
//! framebuffer for the reference project `t8` (`shared/reference/anie/t8.anie`, frames 3 and 7).
//!
//! The scene is transcribed from that file by hand: one 4×4 layer (top two rows opaque red, bottom
//! two rows blue at alpha 128) whose quad mesh spans (−2, −2)–(2, 2) around its Move position
//! (originOffset = imageOffset = (−2, −2)); loop on, maxFrame 23; keys:
//! * Move: frame 0 (10, 10) Cubic InOut, frame 12 (50, 10) Linear, frame 23 (50, 40) Linear, all
//!   Catmull-Rom;
//! * Rotate: frame 0 → 0, frame 23 → 3.14159012 rad, Linear;
//! * Opa: frame 0 → 1, frame 23 → 0.5, Linear.
//!
//! Frames 3 and 7 lie between the Move keys at 0 and 12. AnimeEffects gives that segment **no**
//! neighbour before key 0 (the loop does not wrap the last key round as kn here): with kn =
//! (50, 40) the layer lands at (11.74, 8.22) instead of (12.14, 8.82) at frame 3, and 16 pixels
//! differ from AnimeEffects' by up to 199.

use glam::Vec2;
use rigplay::anie::blend::{BlendMode, composite, layer_fragment, opacity_alpha8};
use rigplay::anie::cpu::RgbaImage;
use rigplay::anie::cpu::raster::{MeshVertex, draw_mesh};
use rigplay::anie::easing::{Easing, EasingKind, EasingRange, ease};
use rigplay::anie::skinning::place_plain;
use rigplay::anie::spline::MovePath;
use rigplay::anie::transform::local_matrix;
use rigplay::formats::anie::Spline;

/// The t8 layer's texture: rows 0–1 (255, 0, 0, 255), rows 2–3 (0, 0, 255, 128).
fn t8_texture() -> RgbaImage {
    let mut img = RgbaImage::filled(4, 4, [255, 0, 0, 255]);
    for px in &mut img.pixels[8..] {
        *px = [0, 0, 255, 128];
    }
    img
}

/// Renders t8 at a frame strictly between 0 and 12 onto a transparent 64×48 canvas.
fn render_t8(frame: f32) -> RgbaImage {
    let cr = Spline::CatmullRom;
    let s = ease(
        &Easing {
            kind: EasingKind::Cubic,
            range: EasingRange::InOut,
            ..Easing::default()
        },
        frame,
        12.0,
    );
    let path = MovePath::new(
        None,
        (Vec2::new(10.0, 10.0), cr),
        (Vec2::new(50.0, 10.0), cr),
        Some(Vec2::new(50.0, 40.0)),
    );
    let pos = path.point(s);
    let linear = ease(&Easing::default(), frame, 23.0);
    // The stored key value, 3.14159012 (f32 bits 0x40490fd0), just below π.
    // Key interpolation a + (b − a)·s (§4.1 step 4).
    let lerp = |a: f32, b: f32, s: f32| a + (b - a) * s;
    let rotate = lerp(0.0, f32::from_bits(0x4049_0fd0), linear);
    let opacity = lerp(1.0, 0.5, linear);
    let world = local_matrix(pos, rotate, Vec2::ONE, Vec2::ZERO);
    let origin = Vec2::splat(-2.0);
    let vertices: Vec<MeshVertex> = [(0.0, 0.0), (4.0, 0.0), (0.0, 4.0), (4.0, 4.0)]
        .into_iter()
        .map(|(x, y)| {
            let mesh = Vec2::new(x, y);
            MeshVertex {
                pos: place_plain(world, origin, mesh),
                // (texcoord + originOffset − imageOffset) / size = mesh / 4.
                uv: mesh / 4.0,
            }
        })
        .collect();
    let alpha8 = opacity_alpha8(opacity);
    let mut target = RgbaImage::new(64, 48);
    draw_mesh(
        &mut target,
        &t8_texture(),
        &vertices,
        &[0, 1, 2, 1, 3, 2],
        |fragment, pixel| {
            let out = layer_fragment(BlendMode::Normal, fragment.texel, alpha8, 1.0, *pixel);
            *pixel = composite(*pixel, out);
        },
    );
    target
}

/// Compares every pixel; returns (largest channel difference, pixels that differ at all).
fn compare(render: &RgbaImage, expected: &[(u32, u32, [u8; 4])]) -> (u8, usize) {
    let mut reference = RgbaImage::new(64, 48);
    for &(x, y, p) in expected {
        *reference.get_mut(i64::from(x), i64::from(y)).unwrap() = p;
    }
    let mut worst = 0;
    let mut differing = 0;
    for (a, b) in render.pixels.iter().zip(&reference.pixels) {
        let diff = a.iter().zip(b).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        worst = worst.max(diff);
        differing += usize::from(diff > 0);
    }
    (worst, differing)
}

#[test]
fn t8_frame_3_matches_animeeffects() {
    // s = CubicInOut(3/12) = 0.5·0.5³ = 0.0625; rotate = 3.14159·3/23 = 0.409773; opacity
    // 1 − 0.5·3/23 = 0.934783 → alpha 238.
    let (worst, differing) = compare(&render_t8(3.0), &T8_F3);
    assert!(
        worst <= 1 && differing <= 4,
        "worst {worst}, {differing} pixels differ"
    );
}

#[test]
fn t8_frame_7_matches_animeeffects() {
    // s = CubicInOut(7/12): t' = 7/6, u = −5/6, 0.5·(−0.5787037 + 2) = 0.7106481;
    // opacity 1 − 0.5·7/23 = 0.847826 → alpha 216.
    let (worst, differing) = compare(&render_t8(7.0), &T8_F7);
    assert!(
        worst <= 1 && differing <= 4,
        "worst {worst}, {differing} pixels differ"
    );
}

/// Special values thrown at every entry point: nothing may panic, and results are defined.
#[test]
fn hostile_inputs_do_not_panic() {
    use rigplay::anie::blend::{ClipTexel, HsvAdjust, clip_coverage, hsv_fragment};
    use rigplay::anie::easing::EasingRange as R;
    use rigplay::anie::skinning::*;
    use rigplay::anie::spline::HermiteCurve;

    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1e-30,
        1e30,
        -1e30,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    for kind in 0..=12 {
        for range in [R::In, R::Out, R::InOut] {
            let kind = EasingKind::from_code(kind).unwrap();
            for &a in &specials {
                for &b in &specials {
                    let e = Easing {
                        kind,
                        range,
                        weight: a,
                        bezier: [a, b, b, a],
                    };
                    assert!(ease(&e, a, b).is_finite());
                    assert!(ease(&e, b, 4.0).is_finite());
                }
            }
        }
    }
    let texture = t8_texture();
    for &a in &specials {
        let v = Vec2::new(a, 1.0);
        let path = MovePath::new(
            Some(v),
            (Vec2::ZERO, Spline::CatmullRom),
            (v, Spline::CatmullRom),
            Some(-v),
        );
        let _ = path.point(a);
        let _ = MovePath::from_curve(HermiteCurve {
            p0: v,
            p1: v,
            v0: v,
            v1: v,
        })
        .point(0.5);
        let rest = BoneWorld { pos: v, angle: a };
        let palette = build_palette(&[rest, rest], Some(&[BoneWorld::default(), rest]));
        let influences = VertexInfluences {
            bones: [0, 1, -5, 99, 0, 0, 0, 0],
            weights: [a; 8],
        };
        let skin = skin_matrix(&palette, &influences);
        assert!(skin.is_finite(), "{skin:?}");
        let shape = BoneShape {
            valid: true,
            seg_dir: v,
            v_unit: v,
            radius: [v, Vec2::splat(a)],
            root_bend: [a, -a],
            bounding: rigplay::formats::anie::FRect {
                x: -1e30,
                y: -1e30,
                width: 3e30,
                height: 3e30,
            },
            polygon: vec![
                Vec2::splat(-1e30),
                Vec2::new(1e30, -1e30),
                Vec2::splat(1e30),
            ],
            ..BoneShape::default()
        };
        let _ = vertex_influences([(1, &shape), (2, &shape)], v);
        let mut out = Vec::new();
        blend_ffd(&[v.extend(a)], &[], a, &mut out);
        let texel = glam::Vec4::splat(a);
        for mode in BlendMode::ALL {
            let out = layer_fragment(mode, texel, opacity_alpha8(a), a, [a as u8; 4]);
            let _ = composite([7; 4], out);
        }
        let _ = hsv_fragment(
            texel,
            200,
            &HsvAdjust {
                hue: a as i32,
                sat: a as i32,
                val: i32::MAX,
                absolute: false,
            },
        );
        let _ = ClipTexel::CLEAR
            .write(1, clip_coverage(a))
            .clippee_factor(1);
        let mut target = RgbaImage::new(8, 8);
        let vertices = [
            MeshVertex {
                pos: Vec2::new(a, 0.0),
                uv: v,
            },
            MeshVertex {
                pos: Vec2::new(8.0, a),
                uv: -v,
            },
            MeshVertex {
                pos: Vec2::new(0.0, 8.0),
                uv: Vec2::splat(a),
            },
        ];
        draw_mesh(
            &mut target,
            &texture,
            &vertices,
            &[0, 1, 2, 2, 1, 0, 0, 9, 1, 2],
            |f, p| {
                *p = composite(*p, layer_fragment(BlendMode::Screen, f.texel, 255, 1.0, *p));
            },
        );
    }
}

/// AnimeEffects 1.7's framebuffer for t8 frame 3: every pixel that is not (0, 0, 0, 0).
const T8_F3: [(u32, u32, [u8; 4]); 15] = [
    (11, 6, [91, 0, 0, 147]),
    (11, 7, [238, 0, 0, 238]),
    (12, 7, [238, 0, 0, 238]),
    (13, 7, [132, 0, 0, 177]),
    (10, 8, [15, 0, 89, 119]),
    (11, 8, [100, 0, 84, 184]),
    (12, 8, [217, 0, 14, 231]),
    (13, 8, [238, 0, 0, 238]),
    (10, 9, [0, 0, 119, 119]),
    (11, 9, [0, 0, 119, 119]),
    (12, 9, [3, 0, 119, 122]),
    (13, 9, [68, 0, 94, 166]),
    (11, 10, [0, 0, 59, 84]),
    (12, 10, [0, 0, 119, 119]),
    (13, 10, [0, 0, 40, 69]),
];
/// AnimeEffects 1.7's framebuffer for t8 frame 7: every pixel that is not (0, 0, 0, 0).
const T8_F7: [(u32, u32, [u8; 4]); 16] = [
    (38, 4, [64, 0, 0, 118]),
    (39, 4, [73, 0, 0, 126]),
    (37, 5, [17, 0, 64, 103]),
    (38, 5, [216, 0, 0, 216]),
    (39, 5, [216, 0, 0, 216]),
    (36, 6, [0, 0, 71, 88]),
    (37, 6, [0, 0, 108, 108]),
    (38, 6, [70, 0, 87, 157]),
    (39, 6, [216, 0, 0, 216]),
    (40, 6, [182, 0, 0, 198]),
    (37, 7, [0, 0, 108, 108]),
    (38, 7, [0, 0, 108, 108]),
    (39, 7, [125, 0, 57, 182]),
    (40, 7, [157, 0, 0, 184]),
    (38, 8, [0, 0, 108, 108]),
    (39, 8, [5, 0, 40, 73]),
];
