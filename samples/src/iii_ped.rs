//! A GTA III ped of parts (`assets/characters/iii_ped.dff`), written field by field as GTA III
//! on the PC writes its peds (`docs/formats/dff.md` §1.2, §2.1, §3.2–§3.4, §4.1, §4.2): RW
//! 3.3.0.2, III's 16 named bone frames at the built-in table's rest (no HAnim, no skin) under
//! the clump's root frame, and one rigid part per bone: a box from the bone towards its first
//! child (or 10 cm along its own X at a hand, foot or the head), with flat normals, coloured by
//! body region (skin, shirt, trousers, shoes) in prelit vertex colours. Every part has the same
//! untextured white material, as a III ped's parts share one texture, so a crowd draws each
//! ped as one look. Geometries carry III's surface properties.

use crate::rw::{Bytes, id};
use glam::{Mat3, Vec3};
use rigplay::skeleton::Skeleton;

/// The library ID stamp of RW 3.3.0.2 with build 0xFFFF, as on GTA III's PC files (§1.2).
pub const STAMP_III: u32 = 0x0C02_FFFF;

/// The clump's root frame's name (a III model's root frame carries the model's name).
const ROOT_NAME: &str = "iii_ped";

/// A part's colour (RGBA) by its bone's name (any case: the table writes `SRhand`). The skin is
/// kept clear of the skeleton gizmos' orange under any light (its red less than 1.5 times its
/// blue), so that the example tests can tell bone lines from heads and hands.
fn colour(bone: &str) -> [u8; 4] {
    match bone.to_ascii_lowercase().as_str() {
        "shead" | "slhand" | "srhand" => [186, 146, 128, 255],
        "sfootl" | "sfootr" => [40, 34, 30, 255],
        "swaist" | "supperlegl" | "slowerlegl" | "supperlegr" | "slowerlegr" => [58, 66, 96, 255],
        _ => [172, 52, 44, 255],
    }
}

/// A part's half-width, metres, by its bone's name (any case).
fn half_width(bone: &str) -> f32 {
    match bone.to_ascii_lowercase().as_str() {
        "smid" | "storso" => 0.13,
        "swaist" => 0.12,
        "shead" => 0.09,
        "supperlegl" | "supperlegr" => 0.075,
        _ => 0.05,
    }
}

/// One part: 24 vertices (4 per face, flat normals) and 12 triangles, in the bone's frame.
struct Part {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    triangles: Vec<[u16; 3]>,
}

/// The box of bone `b` of `skeleton`: from 5 % to 95 % of the way to its first child (or 10 cm
/// along its X), `half_width` across.
fn part(skeleton: &Skeleton, b: usize) -> Part {
    let bone = &skeleton.bones[b];
    let child = skeleton.bones.iter().position(|c| c.parent == Some(b));
    let to = match child.map(|c| skeleton.bones[c].rest.translation) {
        Some(t) if t.length() > 0.02 => t,
        _ => Vec3::X * 0.1,
    };
    let (start, end) = (to * 0.05, to * 0.95);
    let along = (end - start).normalize();
    let w = half_width(&bone.name);
    let side = along.any_orthonormal_vector() * w;
    let up = along.cross(side).normalize() * w;
    // The eight corners: k = 0 at `start`, 1 at `end`; (a, b) round the section.
    let corner = |k: usize, a: f32, b: f32| [start, end][k] + side * a + up * b;
    let faces: [[(usize, f32, f32); 4]; 6] = [
        [(0, -1., -1.), (0, -1., 1.), (0, 1., 1.), (0, 1., -1.)],
        [(1, -1., -1.), (1, 1., -1.), (1, 1., 1.), (1, -1., 1.)],
        [(0, -1., -1.), (0, 1., -1.), (1, 1., -1.), (1, -1., -1.)],
        [(0, 1., -1.), (0, 1., 1.), (1, 1., 1.), (1, 1., -1.)],
        [(0, 1., 1.), (0, -1., 1.), (1, -1., 1.), (1, 1., 1.)],
        [(0, -1., 1.), (0, -1., -1.), (1, -1., -1.), (1, -1., 1.)],
    ];
    let mut p = Part {
        positions: Vec::new(),
        normals: Vec::new(),
        triangles: Vec::new(),
    };
    let centre = (start + end) / 2.0;
    for face in faces {
        let first = p.positions.len() as u16;
        let corners = face.map(|(k, a, b)| corner(k, a, b));
        let mut normal = (corners[1] - corners[0])
            .cross(corners[2] - corners[0])
            .normalize();
        // Wound outwards: the normal points away from the box's centre.
        let outwards = normal.dot(corners[0] - centre) > 0.0;
        if !outwards {
            normal = -normal;
        }
        p.positions.extend(corners);
        p.normals.extend([normal; 4]);
        let quad = if outwards { [0, 1, 2, 3] } else { [0, 3, 2, 1] };
        let q = quad.map(|v| first + v);
        p.triangles.push([q[0], q[1], q[2]]);
        p.triangles.push([q[0], q[2], q[3]]);
    }
    p
}

/// The bundled GTA III ped of parts (see the module docs).
pub fn iii_ped_dff() -> Vec<u8> {
    let skeleton = Skeleton::gta_iii();
    let bones = &skeleton.bones;
    let n = bones.len();
    let s = STAMP_III;
    let mut b = Bytes::new();
    b.chunk_stamped(id::CLUMP, s, |b| {
        b.chunk_stamped(id::STRUCT, s, |b| {
            b.i32(n as i32).i32(0).i32(0);
        });
        // Frame 0 the clump's root, frame 1 + i bone i (parents before children).
        b.chunk_stamped(id::FRAME_LIST, s, |b| {
            b.chunk_stamped(id::STRUCT, s, |b| {
                b.u32(1 + n as u32);
                b.f32s(&Mat3::IDENTITY.to_cols_array())
                    .f32s(&[0.0; 3])
                    .i32(-1)
                    .u32(0);
                for bone in bones {
                    // right, up, at: the columns of the rotation (§6.1).
                    b.f32s(&Mat3::from_quat(bone.rest.rotation).to_cols_array())
                        .f32s(&bone.rest.translation.to_array())
                        .i32(bone.parent.map_or(0, |p| p as i32 + 1))
                        .u32(3);
                }
            });
            let names = std::iter::once(ROOT_NAME).chain(bones.iter().map(|b| b.name.as_str()));
            for name in names {
                b.chunk_stamped(id::EXTENSION, s, |b| {
                    b.chunk_stamped(id::FRAME_NAME, s, |b| {
                        b.raw(name.as_bytes());
                    });
                });
            }
        });
        b.chunk_stamped(id::GEOMETRY_LIST, s, |b| {
            b.chunk_stamped(id::STRUCT, s, |b| {
                b.i32(n as i32);
            });
            for (k, bone) in bones.iter().enumerate() {
                geometry(b, &part(&skeleton, k), colour(&bone.name));
            }
        });
        // Part k on bone k's frame (1 + k), geometry k, flags 5 (render, collision test).
        for k in 0..n {
            b.chunk_stamped(id::ATOMIC, s, |b| {
                b.chunk_stamped(id::STRUCT, s, |b| {
                    b.i32(k as i32 + 1).i32(k as i32).u32(5).u32(0);
                });
                b.chunk_stamped(id::EXTENSION, s, |_| {});
            });
        }
        b.chunk_stamped(id::EXTENSION, s, |_| {});
    });
    b.0
}

/// A Geometry chunk of III's layout (§3.2–§3.4): the Struct with the surface properties after
/// the counts, one morph target with positions and normals, one untextured material.
fn geometry(b: &mut Bytes, part: &Part, colour: [u8; 4]) {
    let s = STAMP_III;
    b.chunk_stamped(id::GEOMETRY, s, |b| {
        b.chunk_stamped(id::STRUCT, s, |b| {
            // POSITIONS | PRELIT | NORMALS | LIGHT | MODULATE_MATERIAL_COLOR, one morph target
            b.u32(0x7A)
                .i32(part.triangles.len() as i32)
                .i32(part.positions.len() as i32)
                .i32(1);
            // Ambient, specular, diffuse (III and VC before 3.4: §3.2).
            b.f32s(&[1.0, 1.0, 1.0]);
            for _ in &part.positions {
                b.raw(&colour);
            }
            // (a, b, c) stored as b, a, material, c
            for t in &part.triangles {
                b.u16(t[1]).u16(t[0]).u16(0).u16(t[2]);
            }
            let centre = part.positions.iter().sum::<Vec3>() / part.positions.len() as f32;
            let radius = (part.positions.iter())
                .map(|p| p.distance(centre))
                .fold(0.0f32, f32::max);
            b.f32s(&centre.to_array()).f32(radius).u32(1).u32(1);
            for p in &part.positions {
                b.f32s(&p.to_array());
            }
            for v in &part.normals {
                b.f32s(&v.to_array());
            }
        });
        b.chunk_stamped(id::MATERIAL_LIST, s, |b| {
            b.chunk_stamped(id::STRUCT, s, |b| {
                b.i32(1).i32(-1);
            });
            b.chunk_stamped(id::MATERIAL, s, |b| {
                b.chunk_stamped(id::STRUCT, s, |b| {
                    b.u32(0).raw(&[255, 255, 255, 255]).i32(0).u32(0);
                    b.f32s(&[1.0, 1.0, 1.0]);
                });
                b.chunk_stamped(id::EXTENSION, s, |_| {});
            });
        });
        b.chunk_stamped(id::EXTENSION, s, |_| {});
    });
}
