//! The bundled AnimeEffects sample projects: they read back without warnings and equal, hold
//! the node and key kinds they promise, are laid out like the projects AnimeEffects saved
//! itself (`bones.anie`, `ffd.anie`), and their stored bone caches are the ones AnimeEffects
//! recomputes on load.

use crate::{fixture, read_ok};
use glam::{Vec2, Vec3};
use rigplay::anie::cpu::Renderer;
use rigplay::anie::eval::{DrawOp, EvalOptions, Evaluator, InfluenceSource, evaluate};
use rigplay::anie::skinning::polygon_contains;
use rigplay::formats::anie::*;
use rigplay_samples::anie::build::{Rig, RigBone, capsule_polygon, grid_mesh};
use rigplay_samples::anie::{sample_files, sample_projects};
use std::sync::{Arc, OnceLock};

/// The sample files, generated once for all tests (the character's bone shapes take a while
/// in a debug build).
fn files() -> &'static [(&'static str, Vec<u8>)] {
    static FILES: OnceLock<Vec<(&'static str, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(sample_files)
}

fn project(path: &str) -> AnieFile {
    let (_, bytes) = files()
        .iter()
        .find(|(p, _)| p.ends_with(path))
        .unwrap_or_else(|| panic!("{path} is a sample"));
    let read = read_ok(bytes);
    assert!(read.warnings.is_empty(), "{path}: {:?}", read.warnings);
    assert_eq!(read.version, AnieVersion::V0_8);
    read.file
}

fn key(node: usize, kind: KeyKind, slot: KeySlot) -> KeyRef {
    KeyRef { node, kind, slot }
}

fn node(p: &AnieFile, name: &str) -> usize {
    p.objects
        .iter()
        .position(|o| o.name == name)
        .unwrap_or_else(|| panic!("a node named {name:?}"))
}

/// How many keys of each kind (default keys included) the project holds.
fn key_counts(p: &AnieFile) -> Vec<(KeyKind, usize)> {
    KeyKind::ALL
        .into_iter()
        .map(|k| (k, p.objects.iter().map(|o| o.timeline.slots(k).len()).sum()))
        .collect()
}

#[test]
fn samples_are_format_0_8_and_round_trip() {
    let projects = sample_projects();
    assert_eq!(
        projects.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        [
            "anims/anie/character.anie",
            "anims/anie/mesh_ffd.anie",
            "anims/anie/blend_sheet.anie"
        ]
    );
    for ((path, p), (file_path, bytes)) in projects.iter().zip(files()) {
        assert_eq!(path, file_path);
        assert_eq!(&bytes[..6], b"ANIMFX");
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), 8);
        let back = read_ok(bytes);
        assert!(back.warnings.is_empty(), "{path}: {:?}", back.warnings);
        assert!(back.file == *p, "{path}: read(write(p)) == p");
        assert_eq!(&back.file.write(AnieVersion::V0_8).unwrap(), bytes);
        // Looping, 48 frames at 24 fps; a root folder over layers only.
        assert!(p.looping && p.max_frame == 47 && p.fps == 24, "{path}");
        assert_eq!(p.objects[0].kind, NodeKind::Folder);
        assert!(
            p.objects[1..]
                .iter()
                .all(|o| o.kind == NodeKind::Layer && o.parent == Some(0) && o.visible)
        );
        // PSD-import layout (Addendum 4): the root has Move/Rotate/Scale/Opa but no Depth map;
        // layers have all five and a default Image key centring an image of their resource.
        let root = &p.objects[0].timeline;
        assert!(root.depths.is_empty() && root.moves.default.is_some());
        for (i, o) in p.objects.iter().enumerate().skip(1) {
            let tl = &o.timeline;
            for kind in [
                KeyKind::Move,
                KeyKind::Rotate,
                KeyKind::Scale,
                KeyKind::Depth,
                KeyKind::Opa,
            ] {
                assert!(
                    tl.slots(kind).contains(&KeySlot::Default),
                    "{path} {i} {kind}"
                );
            }
            assert_eq!(
                tl.depths.default.as_ref().unwrap().value.depth,
                1.0 - i as f32
            );
            let image = &tl.images.default.as_ref().unwrap().value;
            let res = p.resource(image.resource.unwrap()).unwrap();
            let img = res.image.as_ref().unwrap();
            assert_eq!(
                (res.rect.width, res.rect.height),
                (img.width as i32, img.height as i32)
            );
            assert_eq!(res.identifier, o.name);
            assert_eq!(res.blend_mode, image.blend_mode);
            let size = Vec2::new(img.width as f32, img.height as f32);
            assert_eq!(image.image_offset, -size / 2.0);
            assert_eq!(image.mesh.origin_offset, image.image_offset);
            assert_eq!(image.mesh.size, [img.width as i32, img.height as i32]);
            assert!(!image.mesh.indices.is_empty());
            assert_eq!(image.mesh.connections.len(), image.mesh.positions.len());
        }
    }
}

#[test]
fn character_is_a_cat_on_a_bone_tree_with_pose_keys_and_caches() {
    let p = project("character.anie");
    let names: Vec<&str> = p.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cat", "head", "arm R", "arm L", "body", "leg R", "leg L", "tail"
        ]
    );
    let counts = key_counts(&p);
    assert!(counts.contains(&(KeyKind::Bone, 1)), "{counts:?}");
    assert!(counts.contains(&(KeyKind::Pose, 6)), "{counts:?}");
    assert!(counts.contains(&(KeyKind::Image, 7)), "{counts:?}");
    for kind in [KeyKind::Mesh, KeyKind::Ffd, KeyKind::Hsv] {
        assert!(counts.contains(&(kind, 0)), "{counts:?}");
    }
    let root = &p.objects[0].timeline;
    // The whole cat bobs on 12 Move keys of the root folder.
    assert_eq!(root.moves.keys.len(), 12);

    // One Bone key at frame 0, owned by the root, with a 17-bone tree: one top joint with
    // four branches (spine, two hips, tail), the spine branching into head and clavicles.
    let bk = &root.bones.keys[0];
    assert_eq!(bk.frame, 0);
    let bones = &bk.value.bones;
    assert_eq!(bones.len(), 17);
    assert_eq!(bk.value.cache_owner, Some(0));
    assert_eq!(bones[0].parent, None);
    assert_eq!(bones[0].children, [1, 9, 11, 13]);
    assert_eq!(bones[1].children, [2, 3, 6]);
    for (i, b) in bones.iter().enumerate().skip(1) {
        assert!(b.parent.unwrap() < i && b.origin.is_none());
        assert!(b.shape.valid && b.shape.polygon.len() > 3);
        assert_eq!(b.shape.polygon.first(), b.shape.polygon.last());
        // Addendum 10: the editor's radius is the range plus 0.3 · its x.
        assert_eq!(
            b.shape.radius[0],
            b.range[0] + Vec2::splat(0.3 * b.range[0].x)
        );
        let from = bones[b.parent.unwrap()].world_pos;
        assert!((b.shape.seg_start - from).length() < 1e-4);
        assert!((b.shape.seg_start + b.shape.seg_dir - b.world_pos).length() < 1e-3);
    }
    // Six Pose keys every 8 frames, children of the Bone key, shadowing its bones.
    let me = key(0, KeyKind::Bone, KeySlot::At(0));
    assert_eq!(
        root.poses.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
        [0, 8, 16, 24, 32, 40]
    );
    assert_eq!(
        bk.children,
        (0..6)
            .map(|i| key(0, KeyKind::Pose, KeySlot::At(i)))
            .collect::<Vec<_>>()
    );
    for pk in &root.poses.keys {
        assert_eq!(pk.value.easing.kind, EasingKind::Sine);
        assert_eq!(pk.value.bones.len(), bones.len());
        for (i, b) in pk.value.bones.iter().enumerate() {
            assert_eq!(b.origin, Some(BoneRef { key: me, bone: i }));
            assert_eq!(
                (b.shape.clone(), b.range),
                (bones[i].shape.clone(), bones[i].range)
            );
        }
        assert!(pk.value.bones.iter().any(|b| b.rotate != 0.0));
    }
    // Influence caches for the three skinned layers, binding caches for the four bound ones.
    let skinned: Vec<usize> = bk.value.caches.iter().map(|c| c.node).collect();
    assert_eq!(
        skinned,
        [node(&p, "arm R"), node(&p, "arm L"), node(&p, "tail")]
    );
    let bound: Vec<(usize, i32)> = bk
        .value
        .binding_caches
        .iter()
        .map(|c| (c.node, c.bone_index))
        .collect();
    assert_eq!(
        bound,
        [
            (node(&p, "body"), 1),
            (node(&p, "head"), 2),
            (node(&p, "leg R"), 10),
            (node(&p, "leg L"), 12)
        ]
    );
    for c in &bk.value.caches {
        let mesh = &p.objects[c.node]
            .timeline
            .images
            .default
            .as_ref()
            .unwrap()
            .value
            .mesh;
        assert_eq!(c.indices.len(), mesh.positions.len());
        assert_eq!(c.max_bone_count, 32);
        assert_eq!(
            c.frame_sign,
            Frame {
                value: -1,
                milli: 0
            }
        );
        for (i, w) in c.indices.iter().zip(&c.weights) {
            // Every vertex lies in some bone's shape: none falls back to rigid on bone 0.
            assert!(i[0] != 0 && (w.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
    }
}

#[test]
fn character_caches_are_those_animeeffects_recomputes_on_load() {
    // AnimeEffects ≥ 1.6 rebuilds the caches from the bone shapes when it opens a project
    // (Addendum 8): the stored ones must give the very same frames.
    let p = project("character.anie");
    let renderer = Renderer::new(&p);
    let p = Arc::new(p);
    let recompute = Evaluator::new(Arc::clone(&p));
    let stored = Evaluator::with_options(
        p,
        EvalOptions {
            influences: InfluenceSource::Stored,
        },
    );
    for frame in [0.0, 5.0, 12.0, 30.5] {
        let a = recompute.evaluate(frame);
        let b = stored.evaluate(frame);
        assert_eq!(a.nodes, b.nodes, "frame {frame}");
        let image = renderer.render(&a, 1.0);
        assert_eq!(image, renderer.render(&b, 1.0));
        assert!(image.pixels.iter().any(|px| px[3] == 255));
    }
    // The waving paw moves between the pose keys; the body sways on the spine.
    let paw = |f: f32| {
        let frame = recompute.evaluate(f);
        let sk = &frame.skeletons[0];
        sk.pose.as_ref().unwrap()[8].pos
    };
    assert!(paw(0.0).distance(paw(8.0)) > 15.0);
}

#[test]
fn mesh_ffd_bends_two_grid_meshes_with_ffd_keys() {
    let p = Arc::new(project("mesh_ffd.anie"));
    let names: Vec<&str> = p.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["mesh_ffd", "slime", "flag", "pole", "sky"]);
    let counts = key_counts(&p);
    assert!(counts.contains(&(KeyKind::Ffd, 13)), "{counts:?}");
    for kind in [KeyKind::Bone, KeyKind::Pose, KeyKind::Mesh, KeyKind::Hsv] {
        assert!(counts.contains(&(kind, 0)), "{counts:?}");
    }
    let parents = p.key_parents();
    let mut easings = Vec::new();
    for (name, frames) in [
        ("flag", vec![0, 6, 12, 18, 24, 30, 36, 42]),
        ("slime", vec![0, 8, 16, 24, 38]),
    ] {
        let n = node(&p, name);
        let tl = &p.objects[n].timeline;
        let mesh = &tl.images.default.as_ref().unwrap().value.mesh;
        // A triangular lattice of 8-pixel cells (Addendum 9), not a quad.
        assert_eq!(mesh.cell_px, 8);
        assert!(mesh.positions.len() > 50);
        assert_eq!(
            tl.ffds.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
            frames
        );
        for (i, k) in tl.ffds.keys.iter().enumerate() {
            // Addendum 11: without a Mesh key, FFD keys hang off the default Image key.
            assert_eq!(
                parents[&key(n, KeyKind::Ffd, KeySlot::At(i))],
                key(n, KeyKind::Image, KeySlot::Default)
            );
            assert_eq!(k.value.positions.len(), mesh.positions.len());
            assert!(k.value.positions.iter().all(|q| q.z == 0.0));
            easings.push((k.value.easing.kind, k.value.easing.range));
        }
        assert!(
            tl.ffds
                .keys
                .iter()
                .any(|k| k.value.positions != mesh.positions)
        );
    }
    use EasingKind::*;
    use EasingRange::*;
    assert_eq!(
        easings[8..],
        [
            (Quad, In),
            (Back, Out),
            (Sine, InOut),
            (Elastic, Out),
            (Custom, InOut)
        ]
    );
    // The flag's edge on the pole stays put; its far edge moves.
    let flag = node(&p, "flag");
    let ev = Evaluator::new(Arc::clone(&p));
    let at = |f: f32| {
        ev.evaluate(f).nodes[flag]
            .layer
            .clone()
            .unwrap()
            .mesh
            .positions
    };
    let (a, b) = (at(0.0), at(9.0));
    let mesh = &p.objects[flag]
        .timeline
        .images
        .default
        .as_ref()
        .unwrap()
        .value
        .mesh;
    for (v, q) in mesh.positions.iter().enumerate() {
        let moved = a[v].distance(b[v]);
        if q.x <= 0.0 {
            assert!(moved < 1e-3, "vertex {v} at {q}");
        }
    }
    assert!((0..a.len()).any(|v| a[v].distance(b[v]) > 5.0));
}

#[test]
fn blend_sheet_has_every_blend_mode_a_clipper_opacity_and_hsv() {
    let p = project("blend_sheet.anie");
    // 20 discs, each mode once, named after the file's 4-byte id.
    let mut modes = Vec::new();
    for o in &p.objects {
        if let Some(id) = o.name.strip_prefix("blend: ") {
            let mode = o.timeline.images.default.as_ref().unwrap().value.blend_mode;
            assert_eq!(id.as_bytes(), mode.id().trim_ascii_end());
            modes.push(mode);
        }
    }
    assert_eq!(modes, BlendMode::ALL);
    let others: Vec<BlendMode> = p
        .objects
        .iter()
        .filter(|o| !o.name.starts_with("blend: "))
        .filter_map(|o| o.timeline.images.default.as_ref())
        .map(|k| k.value.blend_mode)
        .collect();
    assert!(others.iter().all(|&m| m == BlendMode::Normal));
    // The backdrop lies under everything.
    assert_eq!(p.objects.last().unwrap().name, "backdrop");

    // The clipper and its two clippees: the clipped layers just above it in the list.
    let window = node(&p, "clip: window");
    let clipped: Vec<usize> = (1..p.objects.len())
        .filter(|&i| p.objects[i].clipped)
        .collect();
    assert_eq!(clipped, [window - 2, window - 1]);
    let frame = evaluate(&p, 0.0);
    let at = frame
        .draws
        .iter()
        .position(|op| matches!(op, DrawOp::WriteMask { node, .. } if *node == window))
        .expect("the window writes a mask");
    let DrawOp::WriteMask { id, .. } = frame.draws[at] else {
        unreachable!()
    };
    let clippees: Vec<DrawOp> = frame.draws[at + 1..at + 3].to_vec();
    assert_eq!(
        clippees,
        [
            DrawOp::Layer {
                node: window - 1,
                mask: Some(id)
            },
            DrawOp::Layer {
                node: window - 2,
                mask: Some(id)
            },
        ]
    );

    let counts = key_counts(&p);
    for kind in [KeyKind::Bone, KeyKind::Pose, KeyKind::Mesh, KeyKind::Ffd] {
        assert!(counts.contains(&(kind, 0)), "{counts:?}");
    }
    assert!(counts.contains(&(KeyKind::Hsv, 4)), "{counts:?}");
    let with = |f: fn(&Timeline) -> usize| -> Vec<&str> {
        p.objects
            .iter()
            .filter(|o| f(&o.timeline) > 0)
            .map(|o| o.name.as_str())
            .collect()
    };
    assert_eq!(
        with(|t| t.opacities.keys.len()),
        ["clip: window", "opacity: fade"]
    );
    assert_eq!(with(|t| t.hsvs.keys.len()), ["hsv: hue", "hsv: saturation"]);
    assert_eq!(
        with(|t| t.moves.keys.len()),
        ["clip: bubble", "clip: stripes"]
    );
    // Halfway, the window is at 35 % and the saturation bar is grey.
    let mid = evaluate(&p, 24.0);
    assert_eq!(mid.nodes[window].alpha8, 89);
    let sat = node(&p, "hsv: saturation");
    let hsv = mid.nodes[sat].hsv.unwrap();
    assert_eq!((hsv.sat, hsv.val), (0, 130));
}

/// On a branching skeleton (the cat's), each bone's polygon is its editor capsule clipped to
/// the union of every bone's plain capsule: a point is inside the polygon exactly when it is
/// in that region (points within 0.05 px of an edge aside).
#[test]
fn rig_polygons_are_the_capsule_clipped_to_the_union() {
    let p = project("character.anie");
    let bones = &p.objects[0].timeline.bones.keys[0].value.bones;
    let capsule = |b: &Bone, r: Vec2| {
        let start = b.shape.seg_start;
        let mut c = capsule_polygon(start, start + b.shape.seg_dir, [r; 2]);
        c.push(c[0]);
        c
    };
    let plain: Vec<Vec<Vec2>> = bones
        .iter()
        .filter(|b| b.parent.is_some())
        .map(|b| capsule(b, b.range[0]))
        .collect();
    let near_edge = |poly: &[Vec2], q: Vec2| {
        poly.windows(2).any(|e| {
            let ab = e[1] - e[0];
            let t = ((q - e[0]).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            (q - (e[0] + ab * t)).length() < 0.05
        })
    };
    for (i, b) in bones.iter().enumerate().skip(1) {
        let own = capsule(b, b.shape.radius[0]);
        let poly = &b.shape.polygon;
        let r = b.shape.bounding;
        let mut inside = 0;
        for y in (r.y - 2.0) as i32..(r.y + r.height + 3.0) as i32 {
            for x in (r.x - 2.0) as i32..(r.x + r.width + 3.0) as i32 {
                let q = Vec2::new(x as f32 + 0.37, y as f32 + 0.61);
                if near_edge(poly, q) || near_edge(&own, q) || plain.iter().any(|c| near_edge(c, q))
                {
                    continue;
                }
                let in_region =
                    polygon_contains(&own, q) && plain.iter().any(|c| polygon_contains(c, q));
                assert_eq!(polygon_contains(poly, q), in_region, "bone {i} at {q}");
                inside += usize::from(in_region);
            }
        }
        assert!(inside > 100, "bone {i}: {inside}");
        // The box is the polygon's.
        let (lo, hi) = poly.iter().fold((Vec2::MAX, Vec2::MIN), |(lo, hi), &q| {
            (lo.min(q), hi.max(q))
        });
        assert_eq!(
            (r.x, r.y, r.width, r.height),
            (lo.x, lo.y, hi.x - lo.x, hi.y - lo.y)
        );
    }
}

/// The bone shapes, transforms and poses [`Rig`] builds are those AnimeEffects' bone tools
/// stored in `bones.anie` (a straight 3-bone chain with pose keys).
#[test]
fn rig_rebuilds_the_bones_animeeffects_made() {
    let p = read_ok(&fixture("bones.anie")).file;
    let bk = &p.objects[0].timeline.bones.keys[0];
    let stored = &bk.value.bones;
    let rig = Rig {
        bones: stored
            .iter()
            .map(|b| RigBone {
                parent: b.parent,
                joint: b.world_pos,
                range: b.range[0],
                binds: b.binding_nodes.clone(),
            })
            .collect(),
    };
    let built = rig.bones();
    let close = |a: f32, b: f32, tol: f32| (a - b).abs() <= tol;
    let close2 = |a: Vec2, b: Vec2, tol: f32| (a - b).abs().max_element() <= tol;
    for (i, (b, s)) in built.iter().zip(stored).enumerate() {
        assert_eq!((b.parent, &b.children), (s.parent, &s.children), "bone {i}");
        assert_eq!(b.range, s.range);
        assert!(close2(b.local_pos, s.local_pos, 1e-4), "bone {i}");
        assert!(close(b.local_angle, s.local_angle, 1e-6));
        assert!(close2(b.world_pos, s.world_pos, 1e-4));
        assert!(close(b.world_angle, s.world_angle, 1e-6));
        let (bs, ss) = (&b.shape, &s.shape);
        assert_eq!(bs.valid, ss.valid, "bone {i}");
        assert!(close2(bs.seg_start, ss.seg_start, 1e-4));
        assert!(close2(bs.seg_dir, ss.seg_dir, 1e-4));
        assert!(close2(bs.v_unit, ss.v_unit, 1e-6));
        assert!(close(bs.v_dir_angle, ss.v_dir_angle, 1e-6));
        assert!(close(bs.length, ss.length, 1e-4));
        assert!(close2(bs.radius[0], ss.radius[0], 1e-4));
        assert!(close2(bs.radius[1], ss.radius[1], 1e-4));
        for k in 0..2 {
            assert!(close(bs.root_bend[k], ss.root_bend[k], 1e-5), "bone {i}");
            assert!(close(bs.tail_bend[k], ss.tail_bend[k], 1e-5), "bone {i}");
        }
        let (bb, sb) = (bs.bounding, ss.bounding);
        for (x, y) in [
            (bb.x, sb.x),
            (bb.y, sb.y),
            (bb.width, sb.width),
            (bb.height, sb.height),
        ] {
            assert!(close(x, y, 1e-3), "bone {i}: {bb:?} vs {sb:?}");
        }
        // The same closed polygon, vertex for vertex, up to where it starts.
        assert_eq!(bs.polygon.len(), ss.polygon.len(), "bone {i}");
        if let Some(n) = ss.polygon.len().checked_sub(1) {
            let shift = (0..n)
                .find(|&k| close2(bs.polygon[k], ss.polygon[0], 1e-3))
                .unwrap_or_else(|| panic!("bone {i}: start {} not found", ss.polygon[0]));
            for k in 0..n {
                assert!(
                    close2(bs.polygon[(k + shift) % n], ss.polygon[k], 1e-3),
                    "bone {i} point {k}: {} vs {}",
                    bs.polygon[(k + shift) % n],
                    ss.polygon[k]
                );
            }
        }
    }
    // The pose keys: the same rotations give the stored world transforms (Addendum 13).
    let me = key(0, KeyKind::Bone, KeySlot::At(0));
    for pk in &p.objects[0].timeline.poses.keys {
        let rotate: Vec<f32> = pk.value.bones.iter().map(|b| b.rotate).collect();
        let pose = rig.pose(me, &rotate, pk.value.easing);
        for (b, s) in pose.bones.iter().zip(&pk.value.bones) {
            assert_eq!(b.origin, s.origin);
            assert!(close2(b.world_pos, s.world_pos, 1e-3));
            assert!(close(b.world_angle, s.world_angle, 1e-5));
            assert_eq!(b.rotate, s.rotate);
        }
    }
}

/// [`grid_mesh`] over an opaque 96 × 24 image with 8-pixel cells is the lattice of
/// `bones.anie` (Addendum 9): the same vertices, triangles and neighbour lists; only the
/// border vertices, which AnimeEffects pulls onto an outline, sit elsewhere.
#[test]
fn grid_mesh_is_animeeffects_triangular_lattice() {
    let p = read_ok(&fixture("bones.anie")).file;
    let theirs = &p.objects[1]
        .timeline
        .images
        .default
        .as_ref()
        .unwrap()
        .value
        .mesh;
    let image = Image {
        width: 96,
        height: 24,
        rgba: vec![255; 96 * 24 * 4],
    };
    let ours = grid_mesh(&image, 8, theirs.origin_offset);
    assert_eq!(ours.positions.len(), 68);
    assert_eq!(ours.indices, theirs.indices);
    assert_eq!(ours.connections, theirs.connections);
    assert_eq!((ours.size, ours.cell_px), (theirs.size, theirs.cell_px));
    assert_eq!(
        ours.texcoords,
        ours.positions
            .iter()
            .map(|q| q.truncate())
            .collect::<Vec<_>>()
    );
    assert_eq!(ours.normals, vec![Vec3::Z; 68]);
    let mut same = 0;
    for (v, (a, b)) in ours.positions.iter().zip(&theirs.positions).enumerate() {
        let border = theirs.connections[v].contains(&-1);
        if !border {
            assert!((*a - *b).length() < 1e-3, "vertex {v}: {a} vs {b}");
            same += 1;
        } else {
            assert!((*a - *b).length() < 5.0, "vertex {v}: {a} vs {b}");
        }
    }
    // Rows 0 and 4 and both ends of rows 1–3 are border vertices.
    assert_eq!(same, 68 - 2 * 14 - 3 * 2);
    // Small images get AnimeEffects' quad (§3 createQuadMesh).
    let small = Image {
        width: 12,
        height: 12,
        rgba: vec![255; 12 * 12 * 4],
    };
    let quad = grid_mesh(&small, 16, Vec2::new(-6.0, -6.0));
    assert_eq!(quad.indices, [0, 1, 2, 1, 3, 2]);
    assert_eq!(quad.positions.len(), 4);
    // Cells that show nothing are left out.
    let mut half = image.clone();
    for (i, px) in half.rgba.chunks_exact_mut(4).enumerate() {
        px[3] = if i % 96 < 40 { 255 } else { 0 };
    }
    let cut = grid_mesh(&half, 8, Vec2::ZERO);
    assert!(cut.positions.len() < 40);
    assert!(cut.positions.iter().all(|q| q.x <= 48.0 + 1e-3));
}
