//! The evaluator and the CPU renderer against AnimeEffects 1.7 itself: every reference project
//! (`tests/fixtures/anie/NAME.anie`, copied from `shared/reference/anie/`) rendered at every frame
//! that has AnimeEffects' own framebuffer (`NAME_fF.raw.png`), compared by the reference
//! README's criterion: mean absolute error ≤ 1/255 per channel and ≤ 0.5 % of the pixels off by
//! more than 8/255. The measured numbers are printed (`cargo test anie_render -- --nocapture`).
//!
//! Then the evaluator on the same projects, with the expected values worked out by hand from the
//! spec's formulas.

use glam::Vec2;
use rigplay::anie::cpu::{Renderer, RgbaImage, compare, exported_png};
use rigplay::anie::eval::{
    DrawOp, EvalOptions, EvaluatedFrame, Evaluator, InfluenceSource, Placement, evaluate,
};
use rigplay::formats::anie::AnieFile;
use std::path::PathBuf;
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anie")
        .join(name)
}

fn project(name: &str) -> AnieFile {
    let bytes = std::fs::read(fixture(&format!("{name}.anie"))).expect("fixture");
    let read = AnieFile::read(&bytes).expect("reads");
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    read.file
}

/// AnimeEffects' framebuffer for a frame.
fn reference(name: &str, frame: u32) -> RgbaImage {
    let img = image::open(fixture(&format!("{name}_f{frame}.raw.png")))
        .expect("reference render")
        .to_rgba8();
    RgbaImage::from_rgba8(img.width(), img.height(), img.as_raw()).unwrap()
}

/// Renders `name` at each frame with `options`, compares with AnimeEffects' framebuffer and
/// prints the numbers; returns (mean error, share off) per frame.
fn check(name: &str, frames: &[u32], options: EvalOptions) -> Vec<(f64, f64)> {
    let p = project(name);
    let renderer = Renderer::new(&p);
    let evaluator = Evaluator::with_options(p, options);
    let mut out = Vec::new();
    for &frame in frames {
        let ours = renderer.render(&evaluator.evaluate(frame as f32), 1.0);
        let theirs = reference(name, frame);
        let (mean, off) = compare(&ours, &theirs, 8).expect("same size");
        let worst = ours
            .pixels
            .iter()
            .zip(&theirs.pixels)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)))
            .max()
            .unwrap_or(0);
        println!(
            "{name} frame {frame:>2}: mean abs error {mean:.4}/255, {:.3} % of pixels off by > 8/255, \
             largest difference {worst}/255",
            off * 100.0
        );
        assert!(
            mean <= 1.0 && off <= 0.005,
            "{name} frame {frame}: mean {mean}, {} % off",
            off * 100.0
        );
        out.push((mean, off));
    }
    out
}

/// The evaluator and the renderer borrow nothing: a Bevy asset or component (`Send + Sync +
/// 'static`) can keep them, and cloning one shares its prepared state.
#[test]
fn evaluator_and_renderer_are_owned_and_shareable() {
    const fn owned<T: Send + Sync + Clone + 'static>() {}
    const _: () = owned::<Evaluator>();
    const _: () = owned::<Renderer>();

    let p = Arc::new(project("t8"));
    let ev = Evaluator::new(Arc::clone(&p));
    assert!(Arc::ptr_eq(ev.project(), &p));
    let copy = ev.clone();
    assert!(Arc::ptr_eq(copy.project(), &p));
    assert_eq!(copy.evaluate(3.0), ev.evaluate(3.0));
    // The one-off function agrees with a kept evaluator.
    assert_eq!(evaluate(&p, 3.0), ev.evaluate(3.0));
    // A renderer takes the project by reference or the evaluator's Arc, alike; its clones share
    // the textures and draw the same.
    let frame = ev.evaluate(3.0);
    let by_ref = Renderer::new(&*p).render(&frame, 1.0);
    let shared = Renderer::new(ev.project());
    assert_eq!(shared.render(&frame, 1.0), by_ref);
    assert_eq!(shared.clone().render(&frame, 1.0), by_ref);
    assert_eq!(Renderer::new(Arc::clone(&p)).render(&frame, 1.0), by_ref);
}

#[test]
fn t8_matches_animeeffects() {
    check("t8", &[0, 3, 7, 23], EvalOptions::default());
}

#[test]
fn blend_v8_matches_animeeffects() {
    check("blend_v8", &[0, 3], EvalOptions::default());
}

#[test]
fn clip_v8_matches_animeeffects() {
    check("clip_v8", &[0, 3, 7], EvalOptions::default());
}

#[test]
fn ffd_matches_animeeffects() {
    check("ffd", &[0, 5, 10], EvalOptions::default());
}

#[test]
fn bones_matches_animeeffects_with_influences_recomputed_or_stored() {
    let frames = [0, 5, 10, 15, 20];
    let recomputed = check("bones", &frames, EvalOptions::default());
    // The stored caches were fresh when AnimeEffects saved the file, so they agree
    // (Addendum 8: use them only to cross-check).
    let stored = check(
        "bones",
        &frames,
        EvalOptions {
            influences: InfluenceSource::Stored,
        },
    );
    for ((m0, o0), (m1, o1)) in recomputed.iter().zip(&stored) {
        assert!((m0 - m1).abs() < 0.01 && (o0 - o1).abs() < 1e-9);
    }
}

#[test]
fn stored_and_recomputed_influences_place_the_bones_mesh_alike() {
    let p = Arc::new(project("bones"));
    let recomputed = Evaluator::new(Arc::clone(&p));
    let stored = Evaluator::with_options(
        p,
        EvalOptions {
            influences: InfluenceSource::Stored,
        },
    );
    for frame in [5.0, 12.5, 20.0] {
        let a = recomputed.evaluate(frame);
        let b = stored.evaluate(frame);
        let (a, b) = (
            &a.nodes[1].layer.as_ref().unwrap().mesh.positions,
            &b.nodes[1].layer.as_ref().unwrap().mesh.positions,
        );
        let worst = a
            .iter()
            .zip(b)
            .map(|(p, q)| p.distance(*q))
            .fold(0.0, f32::max);
        assert!(worst < 1e-3, "frame {frame}: {worst} px");
    }
}

#[test]
fn the_exported_png_is_the_framebuffer_unpremultiplied() {
    // t8 frame 3, pixel (11, 8): framebuffer (100, 0, 84, 184) → round(100·255/184) = 139,
    // round(84·255/184) = 116 (±1 for the framebuffer's own ±1).
    let p = project("t8");
    let fb = Renderer::new(&p).render(&evaluate(&p, 3.0), 1.0);
    let png = exported_png(&fb);
    let [r, g, b, a] = png.get(11, 8);
    let [fr, _, fb_b, fa] = fb.get(11, 8);
    assert_eq!(a, fa);
    assert_eq!(r, ((u32::from(fr) * 255 + 92) / 184) as u8);
    assert!(
        r.abs_diff(139) <= 2 && g == 0 && b.abs_diff(116) <= 2,
        "{r} {g} {b}"
    );
    assert_eq!(b, ((u32::from(fb_b) * 255 + 92) / 184) as u8);
}

fn translation(f: &EvaluatedFrame, node: usize) -> Vec2 {
    f.nodes[node].world.translation
}

fn angle(f: &EvaluatedFrame, node: usize) -> f32 {
    let m = f.nodes[node].world.matrix2;
    m.x_axis.y.atan2(m.x_axis.x)
}

#[test]
fn t8_layer_follows_the_catmull_rom_path_without_a_wrapped_neighbour() {
    // Move keys (10,10) @0 Cubic InOut, (50,10) @12, (50,40) @23, all Catmull-Rom; loop on.
    // Segment 0 → 12 has no kn (the loop does not supply key 23 as one; AnimeEffects' own render
    // shows it, see `anie::eval`) and k2 = (50, 40):
    // v1 = ½((50,40) − (10,10)) = (20, 15); v0 = mirror about (1, 0) = (20, −15);
    // a = 2p0 − 2p1 + v0 + v1 = (−40, 0); b = −3p0 + 3p1 − 2v0 − v1 = (60, 15);
    // P(u) = (−40u³ + 60u² + 20u + 10, 15u² − 15u + 10).
    // Chord table L = 0, 3.7386, 8.6462, 14.3925, 20.5688, 26.7451, 32.4914, 37.3990, 41.1376.
    let ev = Evaluator::new(project("t8"));
    // Frame 3: s = CubicInOut(3/12) = 0.5·0.5³ = 0.0625, tl = 0.0625·41.1376 = 2.5711 → a = 0,
    // u = 2.5711/3.7386/8 = 0.085965 → P = (12.1373, 8.8214).
    let f3 = ev.evaluate(3.0);
    assert!(
        translation(&f3, 1).distance(Vec2::new(12.1373, 8.8214)) < 2e-3,
        "{}",
        translation(&f3, 1)
    );
    // Rotate 0 → 3.14159 over 0..23, linear: 3.14159·3/23 = 0.409773.
    assert!((angle(&f3, 1) - 0.409_773).abs() < 1e-4);
    // Opacity 1 → 0.5: 1 − 0.5·3/23 = 0.934783 → 255·0.934783 = 238.37 → 238.
    assert_eq!(f3.nodes[1].alpha8, 238);
    // Frame 7: s = CubicInOut(7/12): t' = 7/6, u' = −5/6, 0.5·((−5/6)³ + 2) = 0.710648;
    // tl = 29.2344 → a = 5 (L[5] = 26.7451 ≤ tl < L[6]), u = (5 + 2.4893/5.7463)/8 = 0.679149
    // → P = (38.7275, 6.7314); opacity 1 − 0.5·7/23 = 0.847826 → 216.2 → 216.
    let f7 = ev.evaluate(7.0);
    assert!(
        translation(&f7, 1).distance(Vec2::new(38.7275, 6.7314)) < 2e-3,
        "{}",
        translation(&f7, 1)
    );
    assert_eq!(f7.nodes[1].alpha8, 216);
    // Frame 23 is the last key: (50, 40), rotate 3.14159, opacity 0.5 → 127.
    let f23 = ev.evaluate(23.0);
    assert!(translation(&f23, 1).distance(Vec2::new(50.0, 40.0)) < 1e-4);
    assert_eq!(f23.nodes[1].alpha8, 127);
    // The quad's first vertex (0, 0) + origin (−2, −2), unrotated at frame 0: (8, 8).
    let f0 = ev.evaluate(0.0);
    let v = f0.nodes[1].layer.as_ref().unwrap().mesh.positions[0];
    assert!(v.distance(Vec2::new(8.0, 8.0)) < 1e-5, "{v}");
}

#[test]
fn clip_v8_draws_the_clipper_then_its_clippee() {
    // Root children: clippee (clipped), clipper, under. Collected in reverse: under, clipper;
    // the clippee follows its clipper with mask 1. Clipper opacity 1 → 0.5 over 0..7:
    // frame 3 → 1 − 0.5·3/7 = 0.785714 → 200.36 → 200. Clippee Move (20, 24) → (44, 24):
    // 20 + 24·3/7 = 30.2857.
    let p = project("clip_v8");
    let f = evaluate(&p, 3.0);
    assert_eq!(
        f.draws,
        [
            DrawOp::Layer {
                node: 3,
                mask: None
            },
            DrawOp::Layer {
                node: 2,
                mask: None
            },
            DrawOp::WriteMask {
                node: 2,
                id: 1,
                within: None
            },
            DrawOp::Layer {
                node: 1,
                mask: Some(1)
            },
        ]
    );
    assert_eq!(f.nodes[2].alpha8, 200);
    assert!((translation(&f, 1).x - 30.285_713).abs() < 1e-4);
}

#[test]
fn ffd_blends_vertex_positions_with_k0s_quad_out() {
    // FFD keys @0 (Quad Out) and @10, children of the default Image key. Frame 5:
    // s = QuadOut(0.5) = −0.5·(0.5 − 2) = 0.75; vertex i = (64, 32) + (−48, −12)
    // + lerp(k0[i], k1[i], 0.75).
    let p = project("ffd");
    let tl = &p.objects[1].timeline;
    let (k0, k1) = (
        &tl.ffds.keys[0].value.positions,
        &tl.ffds.keys[1].value.positions,
    );
    let f = evaluate(&p, 5.0);
    let layer = f.nodes[1].layer.as_ref().unwrap();
    assert!(layer.ffd);
    for (i, v) in layer.mesh.positions.iter().enumerate() {
        let ffd = k0[i].truncate() + (k1[i].truncate() - k0[i].truncate()) * 0.75;
        let expected = Vec2::new(64.0, 32.0) + Vec2::new(-48.0, -12.0) + ffd;
        assert!(v.distance(expected) < 1e-4, "vertex {i}: {v} vs {expected}");
    }
    // After the last key (frame 15, no loop) FFD@10 holds.
    let f = evaluate(&p, 15.0);
    let v0 = f.nodes[1].layer.as_ref().unwrap().mesh.positions[0];
    assert!(v0.distance(Vec2::new(16.0, 20.0) + k1[0].truncate()) < 1e-4);
}

#[test]
fn bones_pose_is_stored_at_keys_and_recomputed_between() {
    // Bone key on the root: joint (16, 32), then three bones of length 32 along +x, rest world
    // positions (48, 32), (80, 32), (112, 32). Pose keys @0 (Sine InOut, all rotate 0),
    // @10 (rotate 0.6, −0.8 on bones 2, 3), @20 (−0.3, 0.4).
    let p = Arc::new(project("bones"));
    let ev = Evaluator::new(Arc::clone(&p));
    // Frame 5: s = SineInOut(0.5) = −0.5·(cos(π/2) − 1) = 0.5 → rotate 0.3 and −0.4.
    // Bone 2: angle 0.3, pos (48, 32) + 32·(cos 0.3, sin 0.3) = (78.5708, 41.4566).
    // Bone 3: angle 0.3 − 0.4 = −0.1, pos + 32·(cos 0.1, −sin 0.1) = (110.4109, 38.2620).
    let f = ev.evaluate(5.0);
    assert!(matches!(f.nodes[1].placement, Placement::Skinned { .. }));
    let pose = f.skeletons[0].pose.as_ref().unwrap();
    assert!((pose[2].angle - 0.3).abs() < 1e-6);
    assert!(pose[2].pos.distance(Vec2::new(78.5708, 41.4566)) < 1e-3);
    assert!((pose[3].angle + 0.1).abs() < 1e-6);
    assert!(pose[3].pos.distance(Vec2::new(110.4109, 38.2620)) < 1e-3);
    // The palette maps bone 2's rest joint (80, 32) onto its posed position.
    let m = f.skeletons[0].palette[2].matrix;
    assert!(
        m.transform_point2(Vec2::new(80.0, 32.0))
            .distance(pose[2].pos)
            < 1e-3
    );
    // Frame 10 is a pose key: its stored world transforms, which equal the formula
    // (Addendum 13): bone 2 at 0.6 rad, (48 + 32·cos 0.6, 32 + 32·sin 0.6) = (74.4107, 50.0685).
    let f = ev.evaluate(10.0);
    let pose = f.skeletons[0].pose.as_ref().unwrap();
    let stored = &p.objects[0].timeline.poses.keys[1].value.bones[2];
    assert_eq!(
        (pose[2].pos, pose[2].angle),
        (stored.world_pos, stored.world_angle)
    );
    assert!(pose[2].pos.distance(Vec2::new(74.4107, 50.0685)) < 1e-3);
    // The rest pose (frame 0, all rotates 0) deforms nothing: identity palette.
    let f = ev.evaluate(0.0);
    for e in &f.skeletons[0].palette {
        assert!(e.matrix.abs_diff_eq(glam::Affine2::IDENTITY, 1e-5));
    }
}
