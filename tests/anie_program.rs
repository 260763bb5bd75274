//! [`Program`]: the GPU schedule of an evaluated frame, replayed on the CPU with the GPU's
//! semantics ([`replay`]: a destination copy and a mask that start as garbage, mask writes as a
//! zero pass then an add pass), against the CPU reference renderer, pixel for pixel; the
//! schedule itself on hand-built frames, with the expected steps worked out in the comments;
//! [`Program::segments`]; the image atlas.

use glam::{Affine2, Vec2};
use rigplay::anie::atlas::{AtlasError, ImageAtlas, PixelRect};
use rigplay::anie::blend::{BlendMode, HsvAdjust};
use rigplay::anie::cpu::raster::{MeshVertex, rasterize_triangle};
use rigplay::anie::cpu::{Renderer, replay};
use rigplay::anie::eval::{
    DrawOp, EvaluatedFrame, Evaluator, LayerFrame, LayerMesh, NodeFrame, Placement,
};
use rigplay::anie::program::{
    Barrier, LayerShader, MaskStep, Program, ProgramVertex, Segment, Step,
};
use rigplay::formats::anie::{
    AnieFile, Image, KeyKind, KeyRef, KeySlot, ResourceNode, ResourceRef, ResourceTree,
};

fn read(bytes: &[u8]) -> AnieFile {
    AnieFile::read(bytes).expect("reads").file
}

fn sample(name: &str) -> AnieFile {
    read(&crate::assets::read(&format!("anims/anie/{name}.anie")))
}

fn fixture(name: &str) -> AnieFile {
    let path = format!(
        "{}/tests/fixtures/anie/{name}.anie",
        env!("CARGO_MANIFEST_DIR")
    );
    read(&std::fs::read(path).expect("fixture"))
}

/// Every fragment of every program triangle lies inside its entry's `bounds`, and every
/// triangle's vertices belong to one entry.
fn assert_bounds_hold(program: &Program) {
    for tri in program.indices.chunks_exact(3) {
        let v = [tri[0], tri[1], tri[2]].map(|i| program.vertices[i as usize]);
        assert!(v.iter().all(|x| x.layer == v[0].layer));
        let bounds = program.layers[v[0].layer as usize].bounds;
        let mv = v.map(|v| MeshVertex {
            pos: v.position,
            uv: v.uv,
        });
        rasterize_triangle(program.width, program.height, mv, |x, y, _| {
            assert!(bounds.contains(x, y), "({x}, {y}) outside {bounds:?}");
        });
    }
}

/// Renders `project` at each frame and scale with [`Renderer::render`] and with
/// [`replay`] of [`Program::build`]; they must agree pixel for pixel. Returns the programs at
/// scale 1, frame by frame.
fn check_project(name: &str, project: &AnieFile, frames: &[f32]) -> Vec<Program> {
    let atlas = ImageAtlas::new(project).expect("atlas");
    let renderer = Renderer::new(project);
    let evaluator = Evaluator::new(project.clone());
    let mut programs = Vec::new();
    for &f in frames {
        let frame = evaluator.evaluate(f);
        for scale in [1.0, 0.5, 2.0] {
            let program = Program::build(&frame, &atlas, scale);
            let ours = replay(&program, &atlas);
            let theirs = renderer.render(&frame, scale);
            assert_eq!((ours.width, ours.height), (theirs.width, theirs.height));
            let off = ours
                .pixels
                .iter()
                .zip(&theirs.pixels)
                .position(|(a, b)| a != b);
            if let Some(i) = off {
                let (x, y) = (i as u32 % ours.width, i as u32 / ours.width);
                panic!(
                    "{name} frame {f} scale {scale}: pixel ({x}, {y}) replay {:?} render {:?}",
                    ours.pixels[i], theirs.pixels[i]
                );
            }
            assert_bounds_hold(&program);
            if scale == 1.0 {
                println!(
                    "{name} frame {f}: {} steps, {} copies, {} mask passes, {} segments, {} \
                     triangles",
                    program.steps.len(),
                    program.copy_count(),
                    program.mask_pass_count(),
                    program.segments().len(),
                    program.triangle_count()
                );
                programs.push(program);
            }
        }
    }
    programs
}

/// Whole frames, two fractional frames (between keys), the middle and the last frame.
fn frames_of(project: &AnieFile) -> Vec<f32> {
    let last = project.max_frame as f32;
    let mut frames = vec![0.0, 3.5, 12.25, (last / 2.0).floor(), last];
    frames.retain(|&f| f <= last);
    frames.dedup();
    frames
}

#[test]
fn replay_matches_render_character() {
    let p = sample("character");
    check_project("character", &p, &frames_of(&p));
}

#[test]
fn replay_matches_render_mesh_ffd() {
    let p = sample("mesh_ffd");
    check_project("mesh_ffd", &p, &frames_of(&p));
}

#[test]
fn replay_matches_render_blend_sheet() {
    let p = sample("blend_sheet");
    let programs = check_project("blend_sheet", &p, &frames_of(&p));
    // Its layers do not move between frames in ways that change the schedule.
    for program in &programs {
        assert_eq!((program.copy_count(), program.mask_pass_count()), (4, 2));
    }
}

#[test]
fn replay_matches_render_fixtures() {
    for name in ["t8", "blend_v8", "clip_v8", "ffd", "bones"] {
        let p = fixture(name);
        // The frames with reference renders, and the fractional ones.
        let mut frames = frames_of(&p);
        frames.extend([5.0, 7.0, 10.0, 15.0, 20.0, 23.0].map(|f: f32| f.min(p.max_frame as f32)));
        frames.sort_by(f32::total_cmp);
        frames.dedup();
        check_project(name, &p, &frames);
    }
}

/// The blend_sheet sample at frame 0:
///
/// ```text
/// ClearMask                         (it has a clipper: the mask holds the previous frame)
/// Draw(0..6)                        (the Normal backdrop)
/// CopyDestination, Draw(6..438)     (a non-Normal row, and the Normal ones after it)
/// CopyDestination, Draw(438..798)   (each further non-Normal row overlaps what was drawn)
/// CopyDestination, Draw(798..1158)
/// CopyDestination, Draw(1158..1956)
/// WriteMask(1956..2082)             (the clipper)
/// Draw(2082..2445)                  (its clippees)
/// ```
///
/// so 4 copies and 2 mask passes (the clear and the write), in 7 segments.
#[test]
fn blend_sheet_segments() {
    let p = sample("blend_sheet");
    let atlas = ImageAtlas::new(&p).unwrap();
    let frame = Evaluator::new(p.clone()).evaluate(0.0);
    let program = Program::build(&frame, &atlas, 1.0);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::Draw(0..6),
            Step::CopyDestination,
            Step::Draw(6..438),
            Step::CopyDestination,
            Step::Draw(438..798),
            Step::CopyDestination,
            Step::Draw(798..1158),
            Step::CopyDestination,
            Step::Draw(1158..1956),
            Step::WriteMask(1956..2082),
            Step::Draw(2082..2445),
        ]
    );
    assert_eq!(program.copy_count(), 4);
    assert_eq!(program.mask_pass_count(), 2);
    let copy = |draws| Segment {
        draws,
        barrier: Some(Barrier::CopyDestination),
    };
    assert_eq!(
        program.segments(),
        vec![
            Segment {
                draws: 0..0,
                barrier: Some(Barrier::Mask(vec![MaskStep::Clear])),
            },
            copy(0..6),
            copy(6..438),
            copy(438..798),
            copy(798..1158),
            Segment {
                draws: 1158..1956,
                barrier: Some(Barrier::Mask(vec![MaskStep::Write(1956..2082)])),
            },
            Segment {
                draws: 2082..2445,
                barrier: None,
            },
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-built frames.

/// A square layer: its top-left on the canvas, its side, the 2×2 image it shows (four texels,
/// so bilinear filtering and the transparent border both show) and its alpha.
#[derive(Clone, Copy)]
struct Square {
    x: f32,
    y: f32,
    side: f32,
    texels: [[u8; 4]; 4],
    alpha8: u8,
}

fn square(x: f32, colour: [u8; 4]) -> Square {
    Square {
        x,
        y: 0.0,
        side: 4.0,
        texels: [
            colour,
            [colour[2], colour[0], colour[1], colour[3]],
            [colour[1], colour[2], colour[0], 255],
            [255, 255, 255, 200],
        ],
        alpha8: 255,
    }
}

/// A project of one resource tree (image `i` for layer `i`) and a frame whose node `i` is
/// square `i` (Normal, visible); `draws` is left for the test to fill.
fn scene(canvas: (u32, u32), squares: &[Square]) -> (AnieFile, EvaluatedFrame) {
    let mut tree = ResourceTree {
        file_path: "test.psd".into(),
        nodes: Vec::new(),
    };
    let mut nodes = Vec::new();
    for (i, s) in squares.iter().enumerate() {
        tree.nodes.push(ResourceNode {
            is_layer: true,
            image: Some(Image {
                width: 2,
                height: 2,
                rgba: s.texels.concat(),
            }),
            ..ResourceNode::default()
        });
        let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)];
        nodes.push(NodeFrame {
            visible: true,
            local: Affine2::IDENTITY,
            world: Affine2::IDENTITY,
            opacity: 1.0,
            world_opacity: 1.0,
            alpha8: s.alpha8,
            depth: 0.0,
            world_depth: 0.0,
            hsv: None,
            bone_key: None,
            placement: Placement::Plain,
            layer: Some(LayerFrame {
                image_key: KeySlot::Default,
                resource: Some(ResourceRef { tree: 0, node: i }),
                blend_mode: BlendMode::Normal,
                image_offset: Vec2::ZERO,
                area_key: KeyRef {
                    node: i,
                    kind: KeyKind::Image,
                    slot: KeySlot::Default,
                },
                ffd: false,
                mesh: LayerMesh {
                    positions: corners
                        .map(|(u, v)| Vec2::new(s.x + u * s.side, s.y + v * s.side))
                        .to_vec(),
                    uvs: corners.map(|(u, v)| Vec2::new(u, v)).to_vec(),
                    indices: vec![0, 1, 2, 1, 3, 2],
                },
            }),
        });
    }
    let project = AnieFile {
        canvas_width: canvas.0,
        canvas_height: canvas.1,
        resources: vec![tree],
        ..AnieFile::default()
    };
    let frame = EvaluatedFrame {
        frame: 0.0,
        canvas_width: canvas.0,
        canvas_height: canvas.1,
        nodes,
        skeletons: Vec::new(),
        draws: Vec::new(),
    };
    (project, frame)
}

/// Builds `frame`'s program, checks its replay against the renderer at scales 1, 2 and 0.75,
/// and returns the program at scale 1.
fn check(project: &AnieFile, frame: &EvaluatedFrame) -> Program {
    let atlas = ImageAtlas::new(project).unwrap();
    let renderer = Renderer::new(project);
    for scale in [1.0, 2.0, 0.75] {
        let program = Program::build(frame, &atlas, scale);
        assert_eq!(
            replay(&program, &atlas),
            renderer.render(frame, scale),
            "scale {scale}: {:?}",
            program.steps
        );
        assert_bounds_hold(&program);
    }
    Program::build(frame, &atlas, 1.0)
}

fn layer(node: usize) -> DrawOp {
    DrawOp::Layer { node, mask: None }
}

fn clippee(node: usize, id: u8) -> DrawOp {
    DrawOp::Layer {
        node,
        mask: Some(id),
    }
}

fn write(node: usize, id: u8) -> DrawOp {
    DrawOp::WriteMask {
        node,
        id,
        within: None,
    }
}

fn set_mode(frame: &mut EvaluatedFrame, node: usize, mode: BlendMode) {
    frame.nodes[node].layer.as_mut().unwrap().blend_mode = mode;
}

const RED: [u8; 4] = [255, 40, 0, 255];
const GREEN: [u8; 4] = [30, 220, 60, 180];
const BLUE: [u8; 4] = [10, 60, 250, 255];
const GREY: [u8; 4] = [128, 128, 128, 128];

#[test]
fn normal_layers_need_no_copy_and_make_one_draw() {
    // Three overlapping Normal layers: 3 × 2 triangles, one Draw, no copy, no mask.
    //   Draw(0..18)
    let (p, mut f) = scene(
        (12, 6),
        &[square(0.0, RED), square(2.0, GREEN), square(4.0, BLUE)],
    );
    f.draws = vec![layer(0), layer(1), layer(2)];
    let program = check(&p, &f);
    assert_eq!(program.steps, vec![Step::Draw(0..18)]);
    assert_eq!((program.copy_count(), program.mask_pass_count()), (0, 0));
    assert_eq!(program.vertices.len(), 12);
    assert_eq!(program.layers.len(), 3);
    // Entry 1's vertices: its square at x 2..6, uv as in the mesh, layer index 1.
    assert_eq!(
        program.vertices[4],
        ProgramVertex {
            position: Vec2::new(2.0, 0.0),
            uv: Vec2::ZERO,
            layer: 1
        }
    );
    assert_eq!(program.layers[1].bounds, PixelRect::new(2, 0, 4, 4));
    assert_eq!(
        program.layers[1].shader,
        LayerShader::Blend {
            mode: BlendMode::Normal,
            mask: None
        }
    );
    assert_eq!(
        program.segments(),
        vec![Segment {
            draws: 0..18,
            barrier: None
        }]
    );
}

#[test]
fn non_normal_layers_far_apart_share_one_copy() {
    // A Normal backdrop over x 0..16, then Multiply at x 0..4 and Screen at x 10..14: the first
    // non-Normal layer always copies (the copy holds the previous frame); the second's bounds
    // (10..14) miss everything drawn since that copy (the Multiply layer, 0..4), so it reads
    // the same copy.
    //   Draw(0..6), CopyDestination, Draw(6..18)
    let mut backdrop = square(0.0, GREY);
    backdrop.side = 16.0;
    let (p, mut f) = scene((16, 6), &[backdrop, square(0.0, RED), square(10.0, BLUE)]);
    set_mode(&mut f, 1, BlendMode::Multiply);
    set_mode(&mut f, 2, BlendMode::Screen);
    f.draws = vec![layer(0), layer(1), layer(2)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![Step::Draw(0..6), Step::CopyDestination, Step::Draw(6..18)]
    );
    assert_eq!(program.copy_count(), 1);
}

#[test]
fn overlapping_non_normal_layers_copy_twice() {
    // Multiply at x 0..4, then Screen at x 2..6: the Screen layer overlaps the Multiply one
    // drawn since the copy, so it needs a fresh copy.
    //   CopyDestination, Draw(0..6), CopyDestination, Draw(6..12)
    let (p, mut f) = scene((8, 4), &[square(0.0, RED), square(2.0, BLUE)]);
    set_mode(&mut f, 0, BlendMode::Multiply);
    set_mode(&mut f, 1, BlendMode::Screen);
    f.draws = vec![layer(0), layer(1)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::CopyDestination,
            Step::Draw(0..6),
            Step::CopyDestination,
            Step::Draw(6..12)
        ]
    );
    assert_eq!(program.copy_count(), 2);
    // A Normal layer drawn between them in the way also forces the copy; an HSV layer counts
    // as drawing (Normal compositing) but needs no copy of its own.
    let (p, mut f) = scene(
        (12, 4),
        &[square(0.0, RED), square(6.0, GREEN), square(7.0, BLUE)],
    );
    set_mode(&mut f, 0, BlendMode::Overlay);
    f.nodes[1].hsv = Some(HsvAdjust {
        hue: 90,
        ..HsvAdjust::DEFAULT
    });
    set_mode(&mut f, 2, BlendMode::Difference);
    f.draws = vec![layer(0), layer(1), layer(2)];
    //   CopyDestination, Draw(0..12) [Overlay, Hsv], CopyDestination, Draw(12..18)
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::CopyDestination,
            Step::Draw(0..12),
            Step::CopyDestination,
            Step::Draw(12..18)
        ]
    );
}

#[test]
fn a_removed_copy_shows_in_the_replay() {
    // The overlapping case: without its second copy the Screen layer reads the copy made before
    // the Multiply layer; without the first, the garbage the copy starts as.
    let mut backdrop = square(0.0, GREY);
    backdrop.side = 8.0;
    let (p, mut f) = scene((8, 4), &[backdrop, square(0.0, RED), square(2.0, BLUE)]);
    set_mode(&mut f, 1, BlendMode::Multiply);
    set_mode(&mut f, 2, BlendMode::Screen);
    f.draws = vec![layer(0), layer(1), layer(2)];
    let program = check(&p, &f);
    let atlas = ImageAtlas::new(&p).unwrap();
    let good = replay(&program, &atlas);
    let copies: Vec<usize> = (0..program.steps.len())
        .filter(|&i| program.steps[i] == Step::CopyDestination)
        .collect();
    assert_eq!(copies.len(), 2);
    for &i in &copies {
        let mut broken = program.clone();
        broken.steps.remove(i);
        assert_ne!(replay(&broken, &atlas), good, "copy at step {i} removed");
    }
}

#[test]
fn a_removed_mask_clear_shows_in_the_replay() {
    // Clipper 0xEE (the id the replay's garbage mask holds) over x 0..4, its clippee over x
    // 2..6: without the initial clear, the clippee draws at x 4..6 too, through the garbage.
    //   ClearMask, WriteMask(0..6), Draw(6..12)
    let (p, mut f) = scene((8, 4), &[square(0.0, GREY), square(2.0, RED)]);
    f.draws = vec![write(0, 0xEE), clippee(1, 0xEE)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![Step::ClearMask, Step::WriteMask(0..6), Step::Draw(6..12)]
    );
    let atlas = ImageAtlas::new(&p).unwrap();
    let mut broken = program.clone();
    broken.steps.remove(0);
    assert_ne!(replay(&broken, &atlas), replay(&program, &atlas));
}

#[test]
fn a_clipper_and_two_clippees() {
    // The clipper draws (Normal), writes its mask, then its two clippees (one Multiply) draw
    // through it. The mask holds the previous frame, so the program starts with a clear; the
    // Multiply clippee is the first non-Normal layer, so it copies.
    //   ClearMask, Draw(0..6), WriteMask(6..12), Draw(12..18), CopyDestination, Draw(18..24)
    let mut clipper = square(1.0, GREY);
    clipper.texels[3] = [255, 255, 255, 90];
    clipper.alpha8 = 200;
    let (p, mut f) = scene((8, 6), &[clipper, square(0.0, RED), square(2.5, BLUE)]);
    set_mode(&mut f, 2, BlendMode::Multiply);
    f.draws = vec![layer(0), write(0, 1), clippee(1, 1), clippee(2, 1)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::Draw(0..6),
            Step::WriteMask(6..12),
            Step::Draw(12..18),
            Step::CopyDestination,
            Step::Draw(18..24),
        ]
    );
    assert_eq!(
        program.layers[1].shader,
        LayerShader::Mask {
            id: 1,
            within: None
        }
    );
    assert_eq!(program.layers[1].alpha8, 200);
    assert_eq!((program.copy_count(), program.mask_pass_count()), (1, 2));
    // Clear and write are consecutive mask steps: one barrier.
    assert_eq!(
        program.segments(),
        vec![
            Segment {
                draws: 0..0,
                barrier: Some(Barrier::Mask(vec![MaskStep::Clear])),
            },
            Segment {
                draws: 0..6,
                barrier: Some(Barrier::Mask(vec![MaskStep::Write(6..12)])),
            },
            Segment {
                draws: 12..18,
                barrier: Some(Barrier::CopyDestination),
            },
            Segment {
                draws: 18..24,
                barrier: None,
            },
        ]
    );
}

#[test]
fn a_folder_clipper_writes_one_merged_mask_step() {
    // A folder clipper's two child layers write the same id one after the other (overlapping:
    // the coverage adds, capped at 255): one WriteMask step, one zero pass then one add pass.
    //   ClearMask, WriteMask(0..12), Draw(12..18)
    let mut a = square(0.0, GREY);
    a.texels = [[0, 0, 0, 150]; 4];
    let mut b = square(2.0, GREY);
    b.texels = [[0, 0, 0, 140]; 4];
    let (p, mut f) = scene((8, 4), &[a, b, square(1.0, RED)]);
    f.draws = vec![write(0, 3), write(1, 3), clippee(2, 3)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![Step::ClearMask, Step::WriteMask(0..12), Step::Draw(12..18)]
    );
    assert_eq!(
        program.segments(),
        vec![
            Segment {
                draws: 0..0,
                barrier: Some(Barrier::Mask(vec![MaskStep::Clear, MaskStep::Write(0..12)])),
            },
            Segment {
                draws: 12..18,
                barrier: None,
            },
        ]
    );
    // Different ids are separate steps.
    f.draws = vec![write(0, 3), write(1, 4), clippee(2, 4)];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::WriteMask(0..6),
            Step::WriteMask(6..12),
            Step::Draw(12..18)
        ]
    );
}

#[test]
fn wrapped_mask_ids_clear_the_mask() {
    // Clipper 255 and its clippee, then the ids wrap (ClearMask) and clipper 1 and its clippee.
    // A clippee of 255 after the clear is dropped: the mask cannot hold 255 any more.
    //   ClearMask, WriteMask(0..6), Draw(6..12), ClearMask, WriteMask(12..18), Draw(18..24)
    let (p, mut f) = scene(
        (8, 4),
        &[
            square(0.0, GREY),
            square(1.0, RED),
            square(3.0, GREY),
            square(2.0, BLUE),
            square(0.0, GREEN),
        ],
    );
    f.draws = vec![
        write(0, 255),
        clippee(1, 255),
        DrawOp::ClearMask,
        write(2, 1),
        clippee(3, 1),
        clippee(4, 255),
    ];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::WriteMask(0..6),
            Step::Draw(6..12),
            Step::ClearMask,
            Step::WriteMask(12..18),
            Step::Draw(18..24),
        ]
    );
    assert_eq!(program.mask_pass_count(), 4);
    assert_eq!(
        program.segments()[1],
        Segment {
            draws: 6..12,
            barrier: Some(Barrier::Mask(vec![
                MaskStep::Clear,
                MaskStep::Write(12..18)
            ])),
        }
    );
}

#[test]
fn a_nested_clipper() {
    // Outer clipper 1 over x 0..4; clipper 2 (itself a clippee of 1) over x 2..6, writing only
    // where the mask holds 1, scaled by it; clippee of 2 over x 1..5.
    //   ClearMask, WriteMask(0..6), WriteNestedMask(6..12), Draw(12..18)
    let mut outer = square(0.0, GREY);
    outer.texels = [
        [0, 0, 0, 255],
        [0, 0, 0, 200],
        [0, 0, 0, 100],
        [0, 0, 0, 255],
    ];
    let mut inner = square(2.0, GREY);
    inner.alpha8 = 180;
    let (p, mut f) = scene((8, 4), &[outer, inner, square(1.0, RED)]);
    f.draws = vec![
        write(0, 1),
        DrawOp::WriteMask {
            node: 1,
            id: 2,
            within: Some(1),
        },
        clippee(2, 2),
    ];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::WriteMask(0..6),
            Step::WriteNestedMask(6..12),
            Step::Draw(12..18)
        ]
    );
    assert_eq!(
        program.layers[1].shader,
        LayerShader::Mask {
            id: 2,
            within: Some(1)
        }
    );
    assert_eq!(
        program.segments(),
        vec![
            Segment {
                draws: 0..0,
                barrier: Some(Barrier::Mask(vec![MaskStep::Clear, MaskStep::Write(0..6)])),
            },
            Segment {
                draws: 0..0,
                barrier: Some(Barrier::NestedMask(6..12)),
            },
            Segment {
                draws: 12..18,
                barrier: None,
            },
        ]
    );
    // Two nested writes of one id (a nested folder clipper): a step each, each with its own
    // scratch copy, so the second writes only where the first left the outer id.
    f.draws = vec![
        write(0, 1),
        DrawOp::WriteMask {
            node: 1,
            id: 2,
            within: Some(1),
        },
        DrawOp::WriteMask {
            node: 2,
            id: 2,
            within: Some(1),
        },
        clippee(1, 2),
    ];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::WriteMask(0..6),
            Step::WriteNestedMask(6..12),
            Step::WriteNestedMask(12..18),
            Step::Draw(18..24)
        ]
    );
}

#[test]
fn hsv_layers_and_folder_redraws() {
    // Node 0 is a folder with an active HSV key; layers 1 and 2 are its children, drawn, then
    // re-drawn with the folder's adjustment. Layer 3 has its own HSV and a clipper id that was
    // never written: HSV layers are unmasked, so it draws (and no mask step is needed). Node 4
    // is a folder without HSV: its re-draw op draws nothing.
    //   Draw(0..30): Blend, Blend, Hsv(folder), Hsv(folder), Hsv(own)
    let (p, mut f) = scene(
        (10, 4),
        &[
            square(0.0, GREY),
            square(1.0, RED),
            square(3.0, BLUE),
            square(5.0, GREEN),
            square(0.0, GREY),
        ],
    );
    let folder_hsv = HsvAdjust {
        hue: 200,
        sat: 60,
        val: 110,
        absolute: false,
    };
    f.nodes[0].layer = None;
    f.nodes[0].hsv = Some(folder_hsv);
    f.nodes[4].layer = None;
    let own = HsvAdjust {
        hue: 30,
        absolute: true,
        ..HsvAdjust::DEFAULT
    };
    f.nodes[3].hsv = Some(own);
    set_mode(&mut f, 2, BlendMode::Screen);
    f.draws = vec![
        layer(0),
        layer(1),
        layer(2),
        DrawOp::HsvRedraw {
            layer: 1,
            folder: 0,
        },
        DrawOp::HsvRedraw {
            layer: 2,
            folder: 0,
        },
        DrawOp::HsvRedraw {
            layer: 1,
            folder: 4,
        },
        clippee(3, 7),
    ];
    let program = check(&p, &f);
    //   Draw(0..6) [layer 1], CopyDestination (layer 2 is Screen), Draw(6..30)
    assert_eq!(
        program.steps,
        vec![Step::Draw(0..6), Step::CopyDestination, Step::Draw(6..30)]
    );
    let shaders: Vec<LayerShader> = program.layers.iter().map(|l| l.shader).collect();
    assert_eq!(
        shaders,
        vec![
            LayerShader::Blend {
                mode: BlendMode::Normal,
                mask: None
            },
            LayerShader::Blend {
                mode: BlendMode::Screen,
                mask: None
            },
            LayerShader::Hsv(folder_hsv),
            LayerShader::Hsv(folder_hsv),
            LayerShader::Hsv(own),
        ]
    );
    assert_eq!(
        program.layers.iter().map(|l| l.node).collect::<Vec<_>>(),
        vec![1, 2, 1, 2, 3]
    );
}

#[test]
fn layers_that_draw_nothing_are_left_out() {
    // 0: hidden; 1: alpha 0; 2: no image; 3: an image whose bytes do not match its size (the
    // renderer and the atlas skip it); 4: off the canvas; 5: drawn, with one triangle out of
    // range (dropped) and a trailing index; 6: a hidden clipper, whose clippee 7 is dropped.
    //   Draw(0..3)
    let (mut p, mut f) = scene(
        (8, 4),
        &[
            square(0.0, RED),
            square(0.0, RED),
            square(0.0, RED),
            square(0.0, RED),
            square(20.0, RED),
            square(1.0, BLUE),
            square(0.0, GREY),
            square(0.0, GREEN),
        ],
    );
    f.nodes[0].visible = false;
    f.nodes[1].alpha8 = 0;
    f.nodes[2].layer.as_mut().unwrap().resource = None;
    p.resources[0].nodes[3].image.as_mut().unwrap().rgba.pop();
    f.nodes[5].layer.as_mut().unwrap().mesh.indices = vec![0, 1, 2, 1, 3, 9, 3];
    f.nodes[6].visible = false;
    f.draws = vec![
        layer(0),
        layer(1),
        layer(2),
        layer(3),
        layer(4),
        layer(5),
        write(6, 1),
        clippee(7, 1),
    ];
    let program = check(&p, &f);
    assert_eq!(program.steps, vec![Step::Draw(0..3)]);
    assert_eq!(program.layers.len(), 1);
    assert_eq!(program.layers[0].node, 5);
    assert_eq!(program.indices, vec![0, 1, 2]);
    // A NaN vertex: its triangle is kept (in range) but draws nothing; the bounds come from
    // the finite vertices.
    let mesh = &mut f.nodes[5].layer.as_mut().unwrap().mesh;
    mesh.positions.push(Vec2::NAN);
    mesh.uvs.push(Vec2::ZERO);
    mesh.indices = vec![0, 1, 4, 0, 1, 2];
    let program = check(&p, &f);
    assert_eq!(program.indices, vec![0, 1, 4, 0, 1, 2]);
    assert_eq!(program.layers[0].bounds, PixelRect::new(1, 0, 4, 4));
    // Nothing at all: no steps, no segments, and the replay is the transparent cell.
    f.draws.clear();
    let program = check(&p, &f);
    assert!(program.steps.is_empty() && program.segments().is_empty());
}

#[test]
fn scale_and_size() {
    let (p, mut f) = scene((8, 4), &[square(1.0, RED)]);
    f.draws = vec![layer(0)];
    let atlas = ImageAtlas::new(&p).unwrap();
    let at = |scale| Program::build(&f, &atlas, scale);
    // 8·0.75 = 6, 4·0.75 = 3; positions × 0.75: the square's right edge 5 → 3.75.
    let program = at(0.75);
    assert_eq!((program.width, program.height), (6, 3));
    assert_eq!(program.vertices[1].position, Vec2::new(3.75, 0.0));
    // Bounds: x 0.75..3.75 → columns 0..4; y 0..3 (clamped to the cell).
    assert_eq!(program.layers[0].bounds, PixelRect::new(0, 0, 4, 3));
    // A scale that is not a positive finite number counts as 1.
    for bad in [0.0, -2.0, f32::NAN, f32::INFINITY] {
        assert_eq!(at(bad), at(1.0));
    }
}

// ---------------------------------------------------------------------------------------------
// The atlas.

fn assert_atlas_holds(project: &AnieFile, atlas: &ImageAtlas) {
    assert!(atlas.width <= ImageAtlas::MAX_SIDE && atlas.height <= ImageAtlas::MAX_SIDE);
    assert_eq!(
        atlas.rgba.len(),
        atlas.width as usize * atlas.height as usize * 4
    );
    let whole = PixelRect::new(0, 0, atlas.width, atlas.height);
    let rects: Vec<(ResourceRef, PixelRect)> = atlas.rects().collect();
    for (i, (_, a)) in rects.iter().enumerate() {
        assert!(whole.contains_rect(a), "{a:?} outside the atlas");
        for (_, b) in &rects[i + 1..] {
            assert!(!a.intersects(b), "{a:?} overlaps {b:?}");
        }
    }
    let mut images = 0;
    for (t, tree) in project.resources.iter().enumerate() {
        for (n, node) in tree.nodes.iter().enumerate() {
            let Some(image) = &node.image else { continue };
            let rect = atlas.rect(ResourceRef { tree: t, node: n });
            if image.rgba.len() != image.width as usize * image.height as usize * 4 {
                assert_eq!(rect, None);
                continue;
            }
            images += 1;
            let rect = rect.expect("packed");
            assert_eq!((rect.width, rect.height), (image.width, image.height));
            for y in 0..image.height {
                for x in 0..image.width {
                    let i = ((y * image.width + x) * 4) as usize;
                    assert_eq!(
                        atlas.texel(rect.x + x, rect.y + y),
                        image.rgba[i..i + 4],
                        "image ({t}, {n}) pixel ({x}, {y})"
                    );
                }
            }
        }
    }
    assert_eq!(rects.len(), images);
}

#[test]
fn atlas_packs_every_sample_and_fixture() {
    let projects = ["character", "mesh_ffd", "blend_sheet"]
        .map(|n| (n, sample(n)))
        .into_iter()
        .chain(["t8", "blend_v8", "clip_v8", "ffd", "bones"].map(|n| (n, fixture(n))));
    for (name, p) in projects {
        let atlas = ImageAtlas::new(&p).unwrap();
        println!("{name}: atlas {}×{}", atlas.width, atlas.height);
        assert_atlas_holds(&p, &atlas);
    }
}

fn images_project(sizes: &[(u32, u32)]) -> AnieFile {
    let nodes = sizes
        .iter()
        .enumerate()
        .map(|(i, &(width, height))| ResourceNode {
            is_layer: true,
            image: Some(Image {
                width,
                height,
                rgba: (0..width * height * 4)
                    .map(|b| (b as usize * 7 + i * 31) as u8)
                    .collect(),
            }),
            ..ResourceNode::default()
        })
        .collect();
    AnieFile {
        resources: vec![ResourceTree {
            file_path: String::new(),
            nodes,
        }],
        ..AnieFile::default()
    }
}

#[test]
fn atlas_packing_by_hand() {
    // Sizes 3×3, 5×2, 2×4, 1×1, 4×2: area 9 + 10 + 8 + 1 + 8 = 36 → width max(5, √36 = 6) = 6.
    // Sorted by height: 2×4, 3×3, 5×2, 4×2, 1×1. Shelf 0 (height 4): 2×4 at (0,0), 3×3 at
    // (2,0); 5×2 does not fit (5 + 5 > 6). Shelf 1 (y 4, height 2): 5×2 at (0,4). Shelf 2
    // (y 6): 4×2 at (0,6), 1×1 at (4,6). Height 8; width 5, the widest shelf.
    let p = images_project(&[(3, 3), (5, 2), (2, 4), (1, 1), (4, 2)]);
    let atlas = ImageAtlas::new(&p).unwrap();
    assert_eq!((atlas.width, atlas.height), (5, 8));
    let rect = |node| atlas.rect(ResourceRef { tree: 0, node }).unwrap();
    assert_eq!(rect(2), PixelRect::new(0, 0, 2, 4));
    assert_eq!(rect(0), PixelRect::new(2, 0, 3, 3));
    assert_eq!(rect(1), PixelRect::new(0, 4, 5, 2));
    assert_eq!(rect(4), PixelRect::new(0, 6, 4, 2));
    assert_eq!(rect(3), PixelRect::new(4, 6, 1, 1));
    assert_atlas_holds(&p, &atlas);
    // Unused texels are transparent.
    assert_eq!(atlas.texel(2, 3), [0; 4]);
    assert_eq!(atlas.texel(4, 7), [0; 4]);
    assert_eq!(atlas.texel(5, 0), [0; 4]); // outside
    // A zero-sized image has an empty rectangle (it draws as transparent), an odd one none.
    let mut p = images_project(&[(0, 3), (2, 2)]);
    p.resources[0].nodes.push(ResourceNode {
        image: Some(Image {
            width: 2,
            height: 2,
            rgba: vec![0; 15],
        }),
        ..ResourceNode::default()
    });
    let atlas = ImageAtlas::new(&p).unwrap();
    assert!(
        atlas
            .rect(ResourceRef { tree: 0, node: 0 })
            .unwrap()
            .is_empty()
    );
    assert_eq!(atlas.rect(ResourceRef { tree: 0, node: 2 }), None);
    assert_eq!((atlas.width, atlas.height), (2, 2));
}

#[test]
fn atlas_of_nothing_and_too_much() {
    let atlas = ImageAtlas::new(&AnieFile::default()).unwrap();
    assert_eq!(
        (atlas.width, atlas.height, atlas.rgba.clone()),
        (1, 1, vec![0; 4])
    );
    assert_eq!(atlas.rects().count(), 0);
    // Wider than 8192.
    let err = ImageAtlas::new(&images_project(&[(9000, 1)])).unwrap_err();
    assert_eq!(
        err,
        AtlasError::TooLarge {
            needed_width: 9000,
            needed_height: 1
        }
    );
    assert!(err.to_string().contains("9000×1"));
    // Taller than 8192.
    assert_eq!(
        ImageAtlas::new(&images_project(&[(1, 8193)])).unwrap_err(),
        AtlasError::TooLarge {
            needed_width: 1,
            needed_height: 8193
        }
    );
    // Two 1×5000 images fit side by side (width √10000 = 100).
    let atlas = ImageAtlas::new(&images_project(&[(1, 5000), (1, 5000)])).unwrap();
    assert_eq!((atlas.width, atlas.height), (2, 5000));
    // 100×8000 and two 1000×1000: area 2.8 M, width √ = 1674: the tall one and one square on
    // the first shelf (1100 wide), the second square (2100 > 1674) on a shelf at y 8000 — 9000
    // tall, too much; so they are packed again 8192 wide: one shelf, 2100 × 8000.
    let p = images_project(&[(100, 8000), (1000, 1000), (1000, 1000)]);
    let atlas = ImageAtlas::new(&p).unwrap();
    assert_eq!((atlas.width, atlas.height), (2100, 8000));
    assert_eq!(
        atlas.rect(ResourceRef { tree: 0, node: 2 }),
        Some(PixelRect::new(1100, 0, 1000, 1000))
    );
    assert_atlas_holds(&p, &atlas);
    let _: &dyn std::error::Error = &err;
}

#[test]
fn a_nested_clipper_folded_over_itself() {
    // The nested clipper's mesh has a second copy of its first triangle on top, sampling
    // other texels. On the CPU the first fragment at a pixel replaces the outer id, so later
    // ones there find no outer id and write nothing: the first triangle wins. A GPU pass over
    // one scratch copy would let the last win, so the builder cuts the entry where a triangle
    // covers a pixel an earlier one of the run covered: triangles 0 and 1 (the quad, sharing
    // an edge but no pixel), then triangle 2 (on top of 0) in its own step.
    //   ClearMask, WriteMask(0..6), WriteNestedMask(6..12), WriteNestedMask(12..15),
    //   Draw(15..21)
    let mut outer = square(0.0, GREY);
    outer.texels = [[0, 0, 0, 255]; 4];
    let mut inner = square(0.0, GREY);
    inner.texels = [[0, 0, 0, 250], [0, 0, 0, 20], [0, 0, 0, 120], [0, 0, 0, 60]];
    let (p, mut f) = scene((8, 4), &[outer, inner, square(0.0, RED)]);
    let mesh = &mut f.nodes[1].layer.as_mut().unwrap().mesh;
    mesh.positions
        .extend([mesh.positions[0], mesh.positions[1], mesh.positions[2]]);
    mesh.uvs.extend([
        Vec2::new(1.0, 1.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(1.0, 0.0),
    ]);
    mesh.indices.extend([4, 5, 6]);
    f.draws = vec![
        write(0, 1),
        DrawOp::WriteMask {
            node: 1,
            id: 2,
            within: Some(1),
        },
        clippee(2, 2),
    ];
    let program = check(&p, &f);
    assert_eq!(
        program.steps,
        vec![
            Step::ClearMask,
            Step::WriteMask(0..6),
            Step::WriteNestedMask(6..12),
            Step::WriteNestedMask(12..15),
            Step::Draw(15..21)
        ]
    );
    // Merged back into one step, the replay differs (the last triangle wins there).
    let atlas = ImageAtlas::new(&p).unwrap();
    let mut merged = program.clone();
    merged.steps.splice(2..4, [Step::WriteNestedMask(6..15)]);
    assert_ne!(replay(&merged, &atlas), replay(&program, &atlas));
}
