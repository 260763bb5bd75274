//! Building `.anie` projects by code (`rigplay::samples::anie::build`): the bone shapes and
//! grid meshes come out as AnimeEffects made them in `bones.anie`.

use crate::anie_read::{fixture, read_ok};
use glam::{Vec2, Vec3};
use rigplay::formats::anie::*;
use rigplay::samples::anie::build::{Rig, RigBone, grid_mesh};

fn key(node: usize, kind: KeyKind, slot: KeySlot) -> KeyRef {
    KeyRef { node, kind, slot }
}

/// The bone shapes, transforms and poses [`Rig`] builds are those AnimeEffects' bone tools
/// stored in `bones.anie` (a straight 3-bone chain with pose keys).
#[test]
fn rig_rebuilds_the_bones_animeeffects_made() {
    let p = read_ok(&fixture("bones.anie")).project;
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
    let p = read_ok(&fixture("bones.anie")).project;
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
