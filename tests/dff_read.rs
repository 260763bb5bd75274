//! The DFF reader on hand-assembled clumps (`docs/formats/dff.md`): every chunk written field by
//! field in the order of the spec's tables, independent of any writer.

include!("../fuzz/oracles/dff.rs");

use crate::bytes::Bytes;
use glam::{Mat4, Vec3};
use rigplay::formats::Bounds;
use rigplay::formats::dff::{DffFile, Geometry, HAnimNode, RwErrorKind, RwWarningKind, SkinLayout};

/// Library ID stamps (§1.2): SA 3.6.0.3, III PC 3.3.0.2, and 3.0.2 (old-form stamp, before
/// 3.0.4 and its Geometry List).
const SA: u32 = 0x1803_FFFF;
const III: u32 = 0x0C02_FFFF;
const OLD: u32 = 0x0000_0302;

const STRUCT: u32 = 0x01;
const STRING: u32 = 0x02;
const EXTENSION: u32 = 0x03;
const TEXTURE: u32 = 0x06;
const MATERIAL: u32 = 0x07;
const MATERIAL_LIST: u32 = 0x08;
const FRAME_LIST: u32 = 0x0E;
const GEOMETRY: u32 = 0x0F;
const CLUMP: u32 = 0x10;
const ATOMIC: u32 = 0x14;
const GEOMETRY_LIST: u32 = 0x1A;
const RTR: u32 = 0x1F;
const UV_ANIM_DICT: u32 = 0x2B;
const SKIN: u32 = 0x116;
const HANIM: u32 = 0x11E;
const MATFX: u32 = 0x120;
const BIN_MESH: u32 = 0x50E;
const REFLECTION: u32 = 0x253F2FC;
const BREAKABLE: u32 = 0x253F2FD;
const FRAME_NAME: u32 = 0x253F2FE;
const COLLISION: u32 = 0x253F2FA;

/// What the fixture varies.
#[derive(Clone, Copy)]
pub(crate) struct Opts {
    stamp: u32,
    /// Old skin layout (no used bones, 0xDEADDEAD before each matrix, no split data).
    old_skin: bool,
    parents: [i32; 3],
    frame_count: u32,
    bin_meshes: u32,
    flags0: u32,
    num_vertices0: i32,
    bone_index: u8,
    /// Cut every chunk of this type to this many payload bytes (ancestors' sizes follow).
    cut: Option<(u32, usize)>,
}

/// A chunk of the fixture, cut when `o.cut` says so.
fn ch(b: &mut Bytes, o: Opts, id: u32, body: impl FnOnce(&mut Bytes)) {
    let mut inner = Bytes::new();
    body(&mut inner);
    if let Some((cut_id, n)) = o.cut
        && cut_id == id
    {
        inner.0.truncate(n);
    }
    b.u32(id)
        .u32(inner.0.len() as u32)
        .u32(o.stamp)
        .raw(&inner.0);
}

pub(crate) const BASE: Opts = Opts {
    stamp: SA,
    old_skin: false,
    parents: [-1, 0, 1],
    frame_count: 3,
    bin_meshes: 1,
    flags0: 0x0001_0036,
    num_vertices0: 3,
    bone_index: 1,
    cut: None,
};

/// Frames (§2.1): 0 clump root (identity); 1 "Root", rotated 90° about Z (right (0,1,0), up
/// (−1,0,0), at (0,0,1)) at (0,0,1), owns the HAnim hierarchy; 2 " Bone", rotated 90° about X
/// (right (1,0,0), up (0,0,1), at (0,−1,0)) at (0,1,0) in its parent's space.
const FRAMES: [([f32; 12], &str); 3] = [
    ([1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.], ""),
    ([0., 1., 0., -1., 0., 0., 0., 0., 1., 0., 0., 1.], "Root"),
    ([1., 0., 0., 0., 0., 1., 0., -1., 0., 0., 1., 0.], " Bone"),
];

/// Skin-space positions of geometry 0 (the space of frame 1).
pub(crate) const POSITIONS: [[f32; 3]; 3] = [[0., 0., 0.], [0., 1., 0.5], [0.2, 0.3, 0.4]];

fn frame_list(b: &mut Bytes, o: Opts) {
    ch(b, o, FRAME_LIST, |b| {
        ch(b, o, STRUCT, |b| {
            b.u32(o.frame_count);
            for (i, (m, _)) in FRAMES.iter().enumerate() {
                // right, up, at, pos, parent, matrix flags
                b.f32s(m)
                    .i32(o.parents[i])
                    .u32(if i == 0 { 0x20003 } else { 3 });
            }
        });
        // Frame 0: empty extension (no name, no HAnim).
        ch(b, o, EXTENSION, |_| {});
        // Frame 1: HAnim with the hierarchy, then its name (order is free, §1.5).
        ch(b, o, EXTENSION, |b| {
            ch(b, o, HANIM, |b| {
                // version, node ID 0, numNodes 2, flags 0, key frame size 36
                b.u32(0x100).i32(0).i32(2).u32(0).i32(36);
                // node 0: ID 0, index 0, flags 0; node 1: ID 1, index 1, POP
                b.i32(0).i32(0).u32(0);
                b.i32(1).i32(1).u32(HAnimNode::POP);
            });
            ch(b, o, FRAME_NAME, |b| {
                b.raw(b"Root");
            });
        });
        // Frame 2: name first, then HAnim without hierarchy (node ID 1).
        ch(b, o, EXTENSION, |b| {
            ch(b, o, FRAME_NAME, |b| {
                b.raw(b" Bone");
            });
            ch(b, o, HANIM, |b| {
                b.u32(0x100).i32(1).i32(0);
            });
        });
    });
}

/// Geometry Struct header (§3.2): format, numTriangles, numVertices, numMorphTargets, and the
/// surface properties before 3.4.
fn geometry_head(b: &mut Bytes, o: Opts, flags: u32, tris: i32, verts: i32) {
    b.u32(flags).i32(tris).i32(verts).i32(1);
    if o.stamp != SA {
        b.f32s(&[1.0, 0.5, 0.25]);
    }
}

/// A Material (§3.4), with a texture (§3.5) when `texture` is given.
fn material(b: &mut Bytes, o: Opts, colour: [u8; 4], texture: Option<(&str, &[u8])>) {
    ch(b, o, MATERIAL, |b| {
        ch(b, o, STRUCT, |b| {
            // flags, colour RGBA, stale word, textured, [ambient, specular, diffuse]
            b.u32(0)
                .raw(&colour)
                .i32(12231644)
                .u32(texture.is_some() as u32);
            if o.stamp != OLD {
                b.f32s(&[1.0, 1.0, 1.0]);
            }
        });
        if let Some((name, mask)) = texture {
            ch(b, o, TEXTURE, |b| {
                ch(b, o, STRUCT, |b| {
                    b.u32(0x11106);
                });
                ch(b, o, STRING, |b| {
                    b.fixed(name, 8, &[]);
                });
                // The mask: empty, garbage after the NUL.
                ch(b, o, STRING, |b| {
                    b.raw(mask);
                });
                ch(b, o, EXTENSION, |_| {});
            });
        }
        ch(b, o, EXTENSION, |b| {
            if texture.is_some() {
                // Reflection material (known, skipped) and an unknown chunk (warned).
                ch(b, o, REFLECTION, |b| {
                    b.f32s(&[1., 1., 1., 1., 0.09]).u32(0);
                });
                ch(b, o, 0x0BAD_F00D, |b| {
                    b.u32(7);
                });
            }
        });
    });
}

/// The skinned geometry: 3 vertices, 1 triangle, 1 UV set, normals, one textured material,
/// a Bin Mesh list and a Skin PLG with up to 4 weights per vertex.
fn geometry0(b: &mut Bytes, o: Opts) {
    ch(b, o, GEOMETRY, |b| {
        ch(b, o, STRUCT, |b| {
            geometry_head(b, o, o.flags0, 1, o.num_vertices0);
            for uv in [[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]] {
                b.f32s(&uv);
            }
            // Triangle (a, b, c) = (0, 1, 2) stored as b, a, material, c.
            b.u16(1).u16(0).u16(0).u16(2);
            // Morph target: sphere, hasVertices, hasNormals, positions, normals.
            b.f32s(&[0.1, 0.2, 0.3, 2.0]).u32(1).u32(1);
            for p in POSITIONS {
                b.f32s(&p);
            }
            for _ in 0..3 {
                b.f32s(&[0.0, 0.0, 1.0]);
            }
        });
        ch(b, o, MATERIAL_LIST, |b| {
            ch(b, o, STRUCT, |b| {
                b.i32(1).i32(-1);
            });
            material(b, o, [255, 128, 64, 200], Some(("skin", b"\0gsN")));
        });
        ch(b, o, EXTENSION, |b| {
            ch(b, o, BIN_MESH, |b| {
                // list, numMeshes, totalIndices; mesh: numIndices 3, material 0, indices
                b.u32(0).u32(o.bin_meshes).u32(3);
                b.u32(3).u32(0).u32(0).u32(1).u32(2);
            });
            ch(b, o, SKIN, |b| {
                // numBones 2, numUsedBones (0 = old layout), maxWeights, padding
                b.u8(2).u8(if o.old_skin { 0 } else { 2 });
                b.u8(if o.old_skin { 0 } else { 4 }).u8(0);
                if !o.old_skin {
                    b.u8(0).u8(1); // used bones
                }
                // Bone indices: vertex 0 has junk (7) on its zero-weight slots.
                b.raw(&[0, 7, 7, 7])
                    .raw(&[o.bone_index, 0, 1, 0])
                    .raw(&[0, 1, 0, 1]);
                b.f32s(&[1.0, 0.0, 0.0, 0.0]);
                b.f32s(&[0.5, 0.25, 0.125, 0.125]);
                b.f32s(&[0.4, 0.3, 0.2, 0.1]);
                // Inverse bind matrices (§6.2), rows right, up, at, pos, each with a junk 4th
                // float. Bone 0 sits on the atomic's frame: identity. Bone 1's bind matrix in
                // skin space is L(frame 2) = [R | (0,1,0)] with R columns (1,0,0), (0,0,1),
                // (0,−1,0); its inverse is [Rᵀ | −Rᵀ·(0,1,0)]: Rᵀ columns (1,0,0), (0,0,−1),
                // (0,1,0), translation (0,0,1).
                let junk = [f32::from_bits(0x1EAB_AA90), 0.0, f32::from_bits(1), 7.0];
                let ibm: [[f32; 12]; 2] = [
                    [1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.],
                    [1., 0., 0., 0., 0., -1., 0., 1., 0., 0., 0., 1.],
                ];
                for m in ibm {
                    if o.old_skin {
                        b.u32(0xDEAD_DEAD);
                    }
                    for r in 0..4 {
                        b.f32s(&m[3 * r..3 * r + 3]).f32(junk[r]);
                    }
                }
                if !o.old_skin {
                    b.u32(0).u32(0).u32(0); // split data
                }
            });
            ch(b, o, BREAKABLE, |b| {
                b.u32(0);
            });
        });
    });
}

/// A prelit quad with two UV sets, a triangle strip Bin Mesh and two materials (the second
/// reusing the first).
fn geometry1(b: &mut Bytes, o: Opts) {
    ch(b, o, GEOMETRY, |b| {
        ch(b, o, STRUCT, |b| {
            // TRISTRIP | POSITIONS | PRELIT | NORMALS | LIGHT | MODULATE | TEXTURED2, 2 sets
            geometry_head(b, o, 0x0002_00FB, 2, 4);
            for c in [
                [255, 0, 0, 255],
                [0, 255, 0, 255],
                [0, 0, 255, 255],
                [9, 8, 7, 6],
            ] {
                b.raw(&c);
            }
            for uv in [[0., 0.], [1., 0.], [0., 1.], [1., 1.]] {
                b.f32s(&uv);
            }
            for uv in [[0.5, 0.5], [0.25, 0.5], [0.5, 0.25], [0.25, 0.25]] {
                b.f32s(&uv);
            }
            // (0,1,2) material 0, (2,1,3) material 1.
            b.u16(1).u16(0).u16(0).u16(2);
            b.u16(1).u16(2).u16(1).u16(3);
            b.f32s(&[0.5, 0.5, 0.0, 1.0]).u32(1).u32(0);
            for p in [[0., 0., 0.], [1., 0., 0.], [0., 1., 0.], [1., 1., 0.]] {
                b.f32s(&p);
            }
        });
        ch(b, o, MATERIAL_LIST, |b| {
            ch(b, o, STRUCT, |b| {
                b.i32(2).i32(-1).i32(0);
            });
            material(b, o, [60, 255, 0, 255], None);
        });
        ch(b, o, EXTENSION, |b| {
            ch(b, o, BIN_MESH, |b| {
                // strips, 2 meshes, 8 indices
                b.u32(1).u32(2).u32(8);
                // Material 0: 0 1 2 3 → (0,1,2), (2,1,3) (odd: first two swapped).
                b.u32(4).u32(0).u32(0).u32(1).u32(2).u32(3);
                // Material 1: 3 3 0 1 → (3,3,0) degenerate, dropped; (3,0,1) odd → (0,3,1).
                b.u32(4).u32(1).u32(3).u32(3).u32(0).u32(1);
            });
        });
    });
}

fn atomic(b: &mut Bytes, o: Opts, frame: i32, geometry: i32, ext: impl FnOnce(&mut Bytes)) {
    ch(b, o, ATOMIC, |b| {
        ch(b, o, STRUCT, |b| {
            b.i32(frame).i32(geometry).u32(5).u32(0);
        });
        ch(b, o, EXTENSION, ext);
    });
}

/// The whole file: a UV animation dictionary (skipped), the Clump, 20 zero bytes of padding.
pub(crate) fn clump(o: Opts) -> Vec<u8> {
    let mut b = Bytes::new();
    ch(&mut b, o, UV_ANIM_DICT, |b| {
        ch(b, o, STRUCT, |b| {
            b.u32(0);
        });
    });
    ch(&mut b, o, CLUMP, |b| {
        ch(b, o, STRUCT, |b| {
            b.i32(2).i32(0).i32(0); // atomics, lights, cameras
        });
        frame_list(b, o);
        ch(b, o, GEOMETRY_LIST, |b| {
            ch(b, o, STRUCT, |b| {
                b.i32(2);
            });
            geometry0(b, o);
            geometry1(b, o);
        });
        atomic(b, o, 1, 0, |b| {
            ch(b, o, RTR, |b| {
                b.u32(0x116).u32(1);
            });
        });
        atomic(b, o, 2, 1, |b| {
            ch(b, o, MATFX, |b| {
                b.u32(1);
            });
        });
        ch(b, o, EXTENSION, |b| {
            ch(b, o, COLLISION, |b| {
                b.raw(b"COL3\0\0\0\0");
            });
        });
    });
    b.raw(&[0; 20]);
    b.done()
}

fn read(bytes: &[u8]) -> rigplay::formats::dff::DffRead {
    DffFile::read(bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn close(a: Vec3, b: Vec3, eps: f32) -> bool {
    (a - b).abs().max_element() <= eps
}

#[test]
fn frames_names_and_hanim() {
    let r = read(&clump(BASE));
    assert_eq!(r.file.clumps.len(), 1);
    let c = &r.file.clumps[0];
    assert_eq!(c.version, 0x36003);
    assert_eq!(c.frames.len(), 3);
    let parents: Vec<_> = c.frames.iter().map(|f| f.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1)]);
    assert_eq!(c.frames[0].name, None);
    assert_eq!(c.frames[1].name.as_deref(), Some("Root"));
    assert_eq!(
        c.frames[2].name.as_deref(),
        Some(" Bone"),
        "leading space kept"
    );
    assert_eq!(c.frames[0].flags, 0x20003);
    assert_eq!(c.frames[1].rotation.x_axis, Vec3::new(0., 1., 0.));
    assert_eq!(c.frames[1].rotation.y_axis, Vec3::new(-1., 0., 0.));
    assert_eq!(c.frames[1].position, Vec3::new(0., 0., 1.));
    let h = c.frames[1].hanim.as_ref().unwrap();
    assert_eq!((h.version, h.node_id), (0x100, 0));
    let hier = h.hierarchy.as_ref().unwrap();
    assert_eq!((hier.flags, hier.key_frame_size), (0, 36));
    assert_eq!(hier.nodes.len(), 2);
    assert_eq!(hier.nodes[1].flags, HAnimNode::POP);
    assert_eq!(c.frames[2].hanim.as_ref().unwrap().node_id, 1);
    assert!(c.frames[2].hanim.as_ref().unwrap().hierarchy.is_none());
    assert_eq!(c.hierarchy_frame(), Some(1));
    let bones = c.bones().unwrap();
    assert_eq!(bones.len(), 2);
    assert_eq!((bones[0].frame, bones[0].parent), (Some(1), None));
    assert_eq!((bones[1].frame, bones[1].parent), (Some(2), Some(0)));
    // World matrix of frame 2: (0,0,1) + Rz90·(0,1,0) = (−1, 0, 1).
    let world = c.world_matrices();
    assert!(close(
        world[2].w_axis.truncate(),
        Vec3::new(-1., 0., 1.),
        1e-6
    ));
}

#[test]
fn geometry_materials_bin_mesh_and_atomics() {
    let r = read(&clump(BASE));
    let c = &r.file.clumps[0];
    assert_eq!(c.geometries.len(), 2);
    let g = &c.geometries[0];
    assert_eq!(g.flags, 0x10036);
    assert_eq!(g.surface, None, "no surface properties from 3.4 on");
    assert_eq!(g.num_vertices, 3);
    assert_eq!(g.prelit, None);
    assert_eq!(g.uv_sets.len(), 1);
    assert_eq!(g.uv_sets[0][2], [0.5, 1.0]);
    assert_eq!(g.triangles.len(), 1);
    assert_eq!(g.triangles[0].vertices, [0, 1, 2], "(2nd, 1st, 4th u16)");
    assert_eq!(g.triangles[0].material, 0);
    assert_eq!(g.morph_targets[0].sphere, [0.1, 0.2, 0.3, 2.0]);
    assert_eq!(g.positions()[1], Vec3::new(0., 1., 0.5));
    assert_eq!(g.normals().unwrap()[0], Vec3::Z);
    let m = &g.materials[0];
    assert_eq!(m.colour, [255, 128, 64, 200]);
    assert_eq!(m.surface, Some([1.0, 1.0, 1.0]));
    let t = m.texture.as_ref().unwrap();
    assert_eq!((t.filter_addressing, t.name.as_str()), (0x11106, "skin"));
    assert_eq!(t.mask, "", "cut at the NUL, garbage after it dropped");
    let bm = g.bin_mesh.as_ref().unwrap();
    assert!(!bm.strips);
    assert_eq!(g.faces()[0].vertices, [0, 1, 2]);

    // Geometry 1: two UV sets (TEXTURED2 without TEXTURED, count in bits 16–23), prelit,
    // strips.
    let g = &c.geometries[1];
    assert_eq!(g.flags & Geometry::TRISTRIP, 1);
    assert_eq!(g.uv_sets.len(), 2);
    assert_eq!(g.uv_sets[0][3], [1., 1.]);
    assert_eq!(g.uv_sets[1][1], [0.25, 0.5]);
    assert_eq!(g.prelit.as_ref().unwrap()[3], [9, 8, 7, 6]);
    assert_eq!(g.normals(), None);
    assert_eq!(g.triangles[1].vertices, [2, 1, 3]);
    assert_eq!(g.triangles[1].material, 1);
    assert_eq!(g.materials.len(), 2);
    assert_eq!(g.materials[1], g.materials[0], "index 0 reuses material 0");
    assert_eq!(g.materials[0].texture, None);
    let faces: Vec<_> = g.faces().iter().map(|f| (f.vertices, f.material)).collect();
    assert_eq!(
        faces,
        [([0, 1, 2], 0), ([2, 1, 3], 0), ([0, 3, 1], 1)],
        "strip decoded: odd triangles flipped, degenerate dropped"
    );

    assert_eq!(c.atomics.len(), 2);
    assert_eq!((c.atomics[0].frame, c.atomics[0].geometry), (1, 0));
    assert_eq!(c.atomics[0].flags, 5);
    assert_eq!(c.atomics[0].right_to_render, Some((0x116, 1)));
    assert_eq!((c.atomics[1].frame, c.atomics[1].geometry), (2, 1));

    // Warnings: the unknown material plugin chunk and the zero padding; nothing else.
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(matches!(
        r.warnings[0].kind,
        RwWarningKind::UnknownChunk {
            chunk_type: 0x0BAD_F00D,
            size: 4
        }
    ));
    assert!(
        r.warnings[0]
            .path
            .ends_with("Geometry[0]/MaterialList/Material[0]/Extension"),
        "{}",
        r.warnings[0].path
    );
    assert!(matches!(
        r.warnings[1].kind,
        RwWarningKind::TrailingBytes {
            count: 20,
            all_zero: true
        }
    ));
}

#[test]
fn skin_new_layout_with_four_weights() {
    let r = read(&clump(BASE));
    let s = r.file.clumps[0].geometries[0].skin.as_ref().unwrap();
    assert_eq!(s.layout, SkinLayout::New);
    assert_eq!((s.num_bones, s.max_weights), (2, 4));
    assert_eq!(s.used_bones, [0, 1]);
    assert_eq!(
        s.bone_indices[0],
        [0, 7, 7, 7],
        "junk indices on zero weights kept as stored"
    );
    assert_eq!(s.bone_indices[1], [1, 0, 1, 0]);
    assert_eq!(s.weights[1], [0.5, 0.25, 0.125, 0.125]);
    assert_eq!(s.max_influences(), 4);
    assert_eq!(s.split, Some([0, 0, 0]));
    assert_eq!(
        s.inverse_bind[0],
        Mat4::IDENTITY,
        "junk 4th column replaced"
    );
    let m = s.inverse_bind[1];
    assert_eq!(m.y_axis, glam::Vec4::new(0., 0., -1., 0.));
    assert_eq!(m.w_axis, glam::Vec4::new(0., 0., 1., 1.));
}

#[test]
fn skin_old_layout_and_iii_struct_sizes() {
    let o = Opts {
        stamp: III,
        old_skin: true,
        ..BASE
    };
    let r = read(&clump(o));
    let c = &r.file.clumps[0];
    assert_eq!(c.version, 0x33002);
    let g = &c.geometries[0];
    assert_eq!(
        g.surface,
        Some([1.0, 0.5, 0.25]),
        "surface properties before 3.4"
    );
    let s = g.skin.as_ref().unwrap();
    assert_eq!(s.layout, SkinLayout::Old);
    assert_eq!(s.max_weights, 0);
    assert_eq!(s.max_influences(), 4, "recomputed");
    assert!(s.used_bones.is_empty());
    assert_eq!(s.split, None);
    assert_eq!(s.inverse_bind, BASE_IBM.with(|m| m.clone()));
    assert_eq!(c.skin_bind_pose(0).unwrap().len(), 3);
}

thread_local! {
    static BASE_IBM: Vec<Mat4> = read(&clump(BASE)).file.clumps[0].geometries[0]
        .skin
        .as_ref()
        .unwrap()
        .inverse_bind
        .clone();
}

/// The bind pose skinned by the inverse bind matrices and the frames' world matrices gives
/// the stored positions back (§6.2); and the stored matrices are the inverses of the bones'
/// bind matrices in skin space.
#[test]
fn bind_pose_skinning_gives_the_stored_positions() {
    let r = read(&clump(BASE));
    let c = &r.file.clumps[0];
    let world = c.world_matrices();
    let s = c.geometries[0].skin.as_ref().unwrap();
    for (k, frame) in [1, 2].into_iter().enumerate() {
        let bind = world[1].inverse() * world[frame];
        let expected = bind.inverse();
        assert!(
            s.inverse_bind[k].abs_diff_eq(expected, 1e-6),
            "bone {k}: {:?} vs {expected:?}",
            s.inverse_bind[k]
        );
    }
    let skinned = c.skin_bind_pose(0).unwrap();
    for (v, p) in skinned.iter().zip(POSITIONS) {
        assert!(close(*v, Vec3::from_array(p), 1e-4), "{v} vs {p:?}");
    }
    // Moving bone 1 moves the vertices it weighs and not vertex 0.
    let mut moved = c.clone();
    moved.frames[2].position += Vec3::X;
    let skinned = moved.skin_bind_pose(0).unwrap();
    assert!(close(skinned[0], Vec3::ZERO, 1e-6));
    // Vertex 1 has 0.5 + 0.125 on bone 1: moved by 0.625 along the skin space's image of X.
    let shift = skinned[1] - Vec3::from_array(POSITIONS[1]);
    assert!((shift.length() - 0.625).abs() < 1e-5, "{shift}");
    // An atomic without a skin says so.
    assert!(c.skin_bind_pose(1).is_err());
}

/// RW 3.0.2: no Geometry List, the atomic nests its geometry, 12-byte atomic and 4-byte clump
/// Structs, 16-byte material Struct (§1.2).
#[test]
fn pre_3_4_clump_with_the_geometry_inside_the_atomic() {
    let o = Opts { stamp: OLD, ..BASE };
    let mut b = Bytes::new();
    b.chunk(CLUMP, OLD, |b| {
        b.chunk(STRUCT, OLD, |b| {
            b.i32(1);
        });
        frame_list(b, o);
        b.chunk(ATOMIC, OLD, |b| {
            b.chunk(STRUCT, OLD, |b| {
                b.i32(2).u32(5).u32(0);
            });
            geometry1(b, o);
            b.chunk(EXTENSION, OLD, |_| {});
        });
    });
    let r = read(&b.done());
    let c = &r.file.clumps[0];
    assert_eq!(c.version, 0x30200);
    assert_eq!(c.geometries.len(), 1);
    assert_eq!((c.atomics[0].frame, c.atomics[0].geometry), (2, 0));
    assert_eq!(c.geometries[0].surface, Some([1.0, 0.5, 0.25]));
    assert_eq!(c.geometries[0].materials[0].surface, None);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn every_truncation_is_a_typed_error() {
    for o in [
        BASE,
        Opts {
            stamp: III,
            old_skin: true,
            ..BASE
        },
    ] {
        let bytes = clump(o);
        // The 20 padding bytes are optional; the UV dictionary ends at byte 28.
        let clump_end = bytes.len() - 20;
        for n in 0..clump_end {
            let r = DffFile::read(&bytes[..n]);
            assert!(r.is_err(), "cut at {n} of {clump_end} read");
        }
    }
}

/// Each data chunk cut at every length inside its parent (the sizes of the enclosing chunks
/// adjusted) gives an error.
#[test]
fn every_cut_payload_is_a_typed_error() {
    for old_skin in [false, true] {
        let o = Opts {
            stamp: if old_skin { III } else { SA },
            old_skin,
            ..BASE
        };
        let full = clump(o).len();
        for id in [STRUCT, SKIN, BIN_MESH, HANIM, RTR] {
            for n in 0.. {
                let bytes = clump(Opts {
                    cut: Some((id, n)),
                    ..o
                });
                if bytes.len() == full {
                    break;
                }
                assert!(
                    DffFile::read(&bytes).is_err(),
                    "chunk {id:#x} cut to {n} bytes read"
                );
            }
        }
    }
}

#[test]
fn a_huge_count_in_a_small_file_is_refused_before_allocating() {
    // 2^31 Bin Mesh meshes (u32).
    let e = DffFile::read(&clump(Opts {
        bin_meshes: 1 << 31,
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::Bounds(Bounds::CountTooLarge { count, .. }) if count == 1 << 31),
        "{e}"
    );
    assert_eq!(e.path, "Clump/GeometryList/Geometry[0]/Extension/BinMesh");
    // 2^31 frames: negative as i32.
    let e = DffFile::read(&clump(Opts {
        frame_count: 1 << 31,
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::Bounds(Bounds::NegativeCount { .. })),
        "{e}"
    );
    assert_eq!(e.path, "Clump/FrameList/Struct");
    // 2^31 − 1 prelit vertices.
    let e = DffFile::read(&clump(Opts {
        flags0: 0x0001_003E,
        num_vertices0: i32::MAX,
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(
            e.kind,
            RwErrorKind::Bounds(Bounds::CountTooLarge {
                what: "prelit colour",
                ..
            })
        ),
        "{e}"
    );
}

#[test]
fn a_chunk_larger_than_its_parent_is_refused() {
    let mut bytes = clump(BASE);
    // The Frame List Struct's size field: UV dict (28) + Clump header (12) + Clump Struct (24)
    // + Frame List header (12) = byte 76; its size at 80.
    let at = 28 + 12 + 24 + 12;
    assert_eq!(
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()),
        STRUCT
    );
    bytes[at + 4..at + 8].copy_from_slice(&100_000u32.to_le_bytes());
    let e = DffFile::read(&bytes).unwrap_err();
    assert!(
        matches!(
            e.kind,
            RwErrorKind::ChunkTooLong {
                chunk_type: STRUCT,
                size: 100_000,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!((e.offset, e.path.as_str()), (at as u64, "Clump/FrameList"));
}

#[test]
fn frame_parent_cycles_and_bad_parents_are_refused() {
    let e = DffFile::read(&clump(Opts {
        parents: [-1, 2, 1],
        ..BASE
    }))
    .unwrap_err();
    assert!(matches!(e.kind, RwErrorKind::FrameCycle { .. }), "{e}");
    let e = DffFile::read(&clump(Opts {
        parents: [0, 0, 1],
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::FrameCycle { frame: 0 }),
        "{e}"
    );
    let e = DffFile::read(&clump(Opts {
        parents: [-1, 3, 1],
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(
            e.kind,
            RwErrorKind::IndexOutOfRange {
                what: "frame parent",
                index: 3,
                limit: 3
            }
        ),
        "{e}"
    );
}

#[test]
fn errors_name_the_chunk_path() {
    // A weighted bone index past numBones.
    let e = DffFile::read(&clump(Opts {
        bone_index: 2,
        ..BASE
    }))
    .unwrap_err();
    assert_eq!(e.path, "Clump/GeometryList/Geometry[0]/Extension/Skin");
    assert!(
        matches!(
            e.kind,
            RwErrorKind::IndexOutOfRange {
                what: "Skin bone index",
                index: 2,
                limit: 2
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("Clump/GeometryList/Geometry[0]/Extension/Skin")
    );
    // Console geometry.
    let e = DffFile::read(&clump(Opts {
        flags0: 0x0100_0036,
        ..BASE
    }))
    .unwrap_err();
    assert!(
        matches!(e.kind, RwErrorKind::UnsupportedPlatform { .. }),
        "{e}"
    );
    assert_eq!(e.path, "Clump/GeometryList/Geometry[0]/Struct");
    // Not a DFF at all.
    assert!(matches!(
        DffFile::read(&[0; 64]).unwrap_err().kind,
        RwErrorKind::MissingChunk { .. }
    ));
}

/// The fuzz oracle holds on the fixtures, every truncation of them and single-byte changes.
#[test]
fn the_fuzz_oracle_holds_on_the_fixtures() {
    let bytes = clump(BASE);
    check_dff(&bytes);
    // Vertex 1's weights (0.5, 0.25, 0.125, 0.125) made so large their sum overflows f32: the
    // model still gives weights summing to 1 (the oracle checks it), here 1/3 each on bones
    // 1, 0 and 1: bone 1 two thirds, bone 0 one third.
    let weights: Vec<u8> = [0.5f32, 0.25, 0.125, 0.125]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let at = bytes
        .windows(16)
        .position(|w| w == weights.as_slice())
        .unwrap();
    let mut huge = bytes.clone();
    for k in 0..3 {
        huge[at + 4 * k..at + 4 * k + 4].copy_from_slice(&3e38f32.to_le_bytes());
    }
    huge[at + 12..at + 16].copy_from_slice(&0f32.to_le_bytes());
    check_dff(&huge);
    let dff = DffFile::read(&huge).unwrap().file;
    let model = rigplay::model::Model::new(&dff, rigplay::skeleton::GtaGame::Sa, &[]);
    let skinned = model
        .geometries
        .iter()
        .flatten()
        .find(|g| g.skin.is_some())
        .unwrap();
    let mesh = &skinned.meshes[0];
    let v = mesh
        .positions
        .iter()
        .position(|p| *p == Vec3::from(POSITIONS[1]))
        .unwrap();
    assert_eq!(mesh.joints.as_ref().unwrap()[v], [1, 0, 0, 0]);
    let w = mesh.weights.as_ref().unwrap()[v];
    assert!(
        (w[0] - 2.0 / 3.0).abs() < 1e-6 && (w[1] - 1.0 / 3.0).abs() < 1e-6,
        "{w:?}"
    );
    for n in 0..bytes.len() {
        check_dff(&bytes[..n]);
        let mut changed = bytes.clone();
        changed[n] ^= 0xFF;
        check_dff(&changed);
    }
}

/// The bundled GTA III ped of parts (`assets/characters/iii_ped.dff`, written by the sample
/// generator) reads as III writes its peds: RW 3.3.0.2, the clump's root and III's 16 named
/// frames with no HAnim, one rigid atomic per bone frame, geometries with III's surface
/// properties and prelit colours, every part's material the same untextured white; no warning.
#[test]
fn the_bundled_gta_iii_ped_reads_as_a_ped_of_parts() {
    let r = read(&crate::assets::read("characters/iii_ped.dff"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let [clump] = r.file.clumps.as_slice() else {
        panic!("one clump");
    };
    // 3.3.0.2 (§1.2).
    assert_eq!(clump.version, 0x33002);
    let skeleton = rigplay::skeleton::Skeleton::gta_iii();
    assert_eq!(clump.frames.len(), 1 + skeleton.bones.len());
    for (k, bone) in skeleton.bones.iter().enumerate() {
        let frame = &clump.frames[1 + k];
        assert_eq!(frame.name.as_deref(), Some(bone.name.as_str()));
        assert!(frame.hanim.is_none());
        assert_eq!(frame.parent, Some(bone.parent.map_or(0, |p| p + 1)));
        assert!(
            close(frame.position, bone.rest.translation, 1e-6),
            "{}",
            bone.name
        );
    }
    assert_eq!(clump.atomics.len(), 16);
    for (k, atomic) in clump.atomics.iter().enumerate() {
        assert_eq!((atomic.frame, atomic.geometry), (1 + k, k));
        let g = &clump.geometries[k];
        assert!(g.surface.is_some(), "III's surface properties");
        assert_eq!(g.prelit.as_ref().map(Vec::len), Some(24));
        assert_eq!(g.materials.len(), 1);
        assert_eq!(g.materials[0], clump.geometries[0].materials[0]);
    }
}

/// A hand-built clump whose frames hang in a circle (files are checked as they are read, a clump
/// made in code is not): its world matrices and its model are made without a panic or a lost
/// frame. Frames 1 and 2 hang under each other, frame 3 under a frame past the end. The walk
/// from 1 goes up to 2 and back to 1, so 2 (walked from last) is taken as a root, and 3 too.
/// Each frame is moved 1 m along its own axis (0: X, 1: Y, 2: Z, 3: X):
/// - 0 and 2 are roots: (1, 0, 0) and (0, 0, 1);
/// - 1 under 2: (0, 1, 1);
/// - 3 a root: (1, 0, 0).
#[test]
fn a_hand_built_clump_of_frames_in_a_circle_composes_them_from_where_it_is_cut() {
    use rigplay::formats::dff::{Clump, Frame};
    use rigplay::model::Model;
    use rigplay::skeleton::GtaGame;
    let frame = |parent: Option<usize>, position: Vec3, name: &str| Frame {
        rotation: glam::Mat3::IDENTITY,
        position,
        parent,
        flags: 0,
        name: Some(name.to_owned()),
        hanim: None,
    };
    let clump = Clump {
        frames: vec![
            frame(None, Vec3::X, "a"),
            frame(Some(2), Vec3::Y, "b"),
            frame(Some(1), Vec3::Z, "c"),
            frame(Some(9), Vec3::X, "d"),
        ],
        ..Default::default()
    };
    let world = clump.world_matrices();
    let at: Vec<Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
    assert_eq!(
        at,
        [Vec3::X, Vec3::new(0., 1., 1.), Vec3::Z, Vec3::X],
        "{at:?}"
    );
    let model = Model::new(
        &DffFile {
            clumps: vec![clump],
        },
        GtaGame::Sa,
        &[],
    );
    let clump = &model.clumps[0];
    let mut order = clump.order.clone();
    order.sort_unstable();
    assert_eq!(order, [0, 1, 2, 3], "every frame is spawned");
    let rest: Vec<Vec3> = clump
        .rest_worlds()
        .iter()
        .map(|m| m.w_axis.truncate())
        .collect();
    assert_eq!(rest, at);
}
