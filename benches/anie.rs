//! AnimeEffects evaluation and CPU rendering cost, on the reference project `bones`
//! (`tests/fixtures/anie/bones.anie`: a 96×24 bar, 68 vertices, skinned by a 4-joint chain with
//! Pose keys at 0, 10, 20), scaled up. Every case evaluates frame 5.5, between two Pose keys, so
//! the pose is blended and its world transforms recomputed.
//!
//! * `eval/vertices`: the rigged layer copied N times under the Bone key's owner; reported per
//!   vertex × influence (the influences with a non-zero weight, counted from the stored caches,
//!   which agree with the recomputed ones).
//! * `eval/skeletons` and `eval/skeletons_baseline`: N folders, each with a copy of the Bone key
//!   and its Pose keys and one layer with an empty mesh (so the palette is built but no vertex
//!   is skinned), against the same tree without bone keys; (difference) / (N × 4 bones) is the
//!   cost per bone.
//! * `render/bones` and `render/blend_v8`: the CPU renderer at 8× the canvas size, per pixel
//!   (criterion's elements are pixels; 1 Melem/s = 1 megapixel per second). `blend_v8` has 8
//!   layers in non-Normal modes, each copying the framebuffer first.
//! * `anie/program_build/character`: the GPU program of the `character` sample
//!   (`assets/anims/anie/character.anie`) at frame 5.5, per triangle, beside
//!   `anie/program_build/character_evaluate`, the evaluation that precedes it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rigplay::anie::atlas::ImageAtlas;
use rigplay::anie::cpu::Renderer;
use rigplay::anie::eval::{Evaluator, evaluate};
use rigplay::anie::program::Program;
use rigplay::formats::anie::{AnieFile, KeyRef, NodeKind};
use std::hint::black_box;
use std::time::Duration;

const FRAME: f32 = 5.5;

fn fixture(name: &str) -> AnieFile {
    let path = format!(
        "{}/tests/fixtures/anie/{name}.anie",
        env!("CARGO_MANIFEST_DIR")
    );
    AnieFile::read(&std::fs::read(path).expect("fixture"))
        .expect("reads")
        .file
}

/// `bones` with its layer (node 1) copied until there are `copies` of it.
fn many_layers(copies: usize) -> AnieFile {
    let mut p = fixture("bones");
    let layer = p.objects[1].clone();
    for _ in 1..copies {
        let i = p.objects.len();
        p.objects.push(layer.clone());
        p.objects[0].children.push(i);
    }
    p
}

/// Non-zero influences of the `bones` layer's vertices, from the stored cache.
fn influences_per_layer() -> usize {
    let p = fixture("bones");
    let cache = &p.objects[0].timeline.bones.keys[0].value.caches[0];
    cache
        .weights
        .iter()
        .map(|w| w.iter().filter(|&&w| w > 0.0).count())
        .sum()
}

/// `copies` folders under the root, each holding a copy of the root's Bone and Pose keys (or
/// none, for the baseline) and a layer whose mesh is empty.
fn many_skeletons(copies: usize, with_bones: bool) -> AnieFile {
    let source = fixture("bones");
    let mut p = source.clone();
    let mut root = source.objects[0].clone();
    root.timeline.bones = Default::default();
    root.timeline.poses = Default::default();
    root.children.clear();
    let mut layer = source.objects[1].clone();
    for image in layer.timeline.images.default.iter_mut() {
        image.value.mesh.positions.clear();
        image.value.mesh.indices.clear();
        image.value.mesh.texcoords.clear();
    }
    p.objects = vec![root];
    for _ in 0..copies {
        let f = p.objects.len();
        let mut folder = source.objects[0].clone();
        assert_eq!(folder.kind, NodeKind::Folder);
        folder.parent = Some(0);
        folder.children = vec![f + 1];
        if with_bones {
            // Re-point the keys' parent links at this folder.
            let retarget = |k: &mut KeyRef| k.node = f;
            for key in &mut folder.timeline.bones.keys {
                key.children.iter_mut().for_each(retarget);
                key.value.cache_owner = Some(f);
                key.value.caches.clear();
            }
            for key in &mut folder.timeline.poses.keys {
                for bone in &mut key.value.bones {
                    if let Some(origin) = &mut bone.origin {
                        origin.key.node = f;
                    }
                }
            }
        } else {
            folder.timeline.bones = Default::default();
            folder.timeline.poses = Default::default();
        }
        let mut l = layer.clone();
        l.parent = Some(f);
        p.objects[0].children.push(f);
        p.objects.push(folder);
        p.objects.push(l);
    }
    p
}

fn eval(c: &mut Criterion) {
    let mut g = c.benchmark_group("eval");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    let per_layer = influences_per_layer();
    for copies in [16, 64] {
        let p = many_layers(copies);
        let ev = Evaluator::new(p);
        assert!(matches!(
            ev.evaluate(FRAME).nodes[1].placement,
            rigplay::anie::eval::Placement::Skinned { .. }
        ));
        g.throughput(Throughput::Elements((copies * per_layer) as u64));
        g.bench_with_input(BenchmarkId::new("vertices", copies), &ev, |b, ev| {
            b.iter(|| black_box(ev.evaluate(black_box(FRAME))))
        });
    }
    for copies in [64, 256] {
        for (name, with_bones) in [("skeletons", true), ("skeletons_baseline", false)] {
            let p = many_skeletons(copies, with_bones);
            let ev = Evaluator::new(p);
            assert_eq!(
                ev.evaluate(FRAME).skeletons.len(),
                copies * usize::from(with_bones)
            );
            g.throughput(Throughput::Elements((copies * 4) as u64));
            g.bench_with_input(BenchmarkId::new(name, copies), &ev, |b, ev| {
                b.iter(|| black_box(ev.evaluate(black_box(FRAME))))
            });
        }
    }
    g.finish();
}

fn render(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    const SCALE: f32 = 8.0;
    for name in ["bones", "blend_v8"] {
        let p = fixture(name);
        let frame = evaluate(&p, FRAME);
        let renderer = Renderer::new(&p);
        let pixels =
            (p.canvas_width as f32 * SCALE) as u64 * (p.canvas_height as f32 * SCALE) as u64;
        g.throughput(Throughput::Elements(pixels));
        g.bench_function(name, |b| {
            b.iter(|| black_box(renderer.render(black_box(&frame), SCALE)))
        });
    }
    g.finish();
}

/// `program_build/character`: [`Program::build`] of the `character` sample at frame 5.5 (its
/// atlas built once, outside the loop), per triangle; `evaluate` beside it for scale.
fn program_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("anie/program_build");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    let path = format!(
        "{}/assets/anims/anie/character.anie",
        env!("CARGO_MANIFEST_DIR")
    );
    let p = AnieFile::read(&std::fs::read(path).expect("sample"))
        .expect("reads")
        .file;
    let atlas = ImageAtlas::new(&p).expect("atlas");
    let ev = Evaluator::new(p);
    let frame = ev.evaluate(FRAME);
    let program = Program::build(&frame, &atlas, 1.0);
    g.throughput(Throughput::Elements(program.triangle_count() as u64));
    g.bench_function("character", |b| {
        b.iter(|| black_box(Program::build(black_box(&frame), &atlas, 1.0)))
    });
    g.bench_function("character_evaluate", |b| {
        b.iter(|| black_box(ev.evaluate(black_box(FRAME))))
    });
    g.finish();
}

criterion_group!(benches, eval, render, program_build);
criterion_main!(benches);
