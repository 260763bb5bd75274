//! Reading `.anie` projects: the reference files AnimeEffects opens, and fixtures assembled
//! field by field (independently of rigplay's writer) for every key type and every format
//! version 0.4–0.8. Expected values are written out from the spec's tables.

use glam::{Mat4, Vec2, Vec3};
use rigplay::formats::anie::*;

/// The reference projects (format 0.8) of `/work/shared/reference/anie`, which AnimeEffects 1.7
/// opens without a message. `bones` and `ffd` were saved by AnimeEffects itself.
pub const REFERENCE_FILES: [&str; 5] = [
    "t8.anie",
    "blend_v8.anie",
    "clip_v8.anie",
    "bones.anie",
    "ffd.anie",
];

pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anie")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---- a byte assembler for .anie files (spec §1.1) ----

/// Little-endian fields, aligned strings and `signature, u64 length, body` blocks. `minor` is
/// the format version the payloads follow (easing 12/28 bytes, HSV 3/4 ints, vertexRect).
#[derive(Clone)]
pub struct Anie {
    pub b: Vec<u8>,
    pub minor: u32,
}

impl Anie {
    pub fn new(minor: u32) -> Self {
        Self {
            b: Vec::new(),
            minor,
        }
    }

    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.b.extend_from_slice(b);
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn i32s(&mut self, vs: &[i32]) -> &mut Self {
        for &v in vs {
            self.i32(v);
        }
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.raw(&v.to_le_bytes())
    }

    pub fn f32s(&mut self, vs: &[f32]) -> &mut Self {
        for &v in vs {
            self.raw(&v.to_le_bytes());
        }
        self
    }

    /// A `bool`: u32 0/1.
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.u32(v as u32)
    }

    /// A `QString`: bytes, NUL, zeros until (len + 1) is a multiple of 4.
    pub fn qstring(&mut self, s: &str) -> &mut Self {
        self.raw(s.as_bytes()).raw(&[0]);
        self.raw(&[0; 3][..(4 - (s.len() + 1) % 4) % 4])
    }

    /// A generic block: 8-byte signature, u64 length of the body, body.
    pub fn block(&mut self, sig: &[u8; 8], body: impl FnOnce(&mut Anie)) -> &mut Self {
        let mut inner = Anie::new(self.minor);
        body(&mut inner);
        self.raw(sig).u64(inner.b.len() as u64).raw(&inner.b)
    }

    /// `Easing::Param`: type, range, weight, and the bezier from format 0.8 on.
    pub fn easing(&mut self, kind: i32, range: i32, weight: f32, bezier: [f32; 4]) -> &mut Self {
        self.i32(kind).i32(range).f32s(&[weight]);
        if self.minor >= 8 {
            self.f32s(&bezier);
        }
        self
    }

    /// Linear, InOut, weight 1, bezier (1, 0, 0, 1).
    pub fn linear(&mut self) -> &mut Self {
        self.easing(1, 2, 1.0, [1.0, 0.0, 0.0, 1.0])
    }

    /// The 32-byte header of format 0.`minor`.
    pub fn header(&mut self) -> &mut Self {
        let minor = self.minor;
        self.raw(b"ANIMFX")
            .raw(&[0xFF, 0])
            .u32(0)
            .u32(minor)
            .raw(&[0; 16])
    }

    /// GLBL: length 64, canvas, maxFrame, fps, loop, 47 zeros.
    pub fn glbl(&mut self, w: u32, h: u32, max_frame: u32, fps: u32, looping: bool) -> &mut Self {
        self.raw(b"GLBL")
            .u32(64)
            .u32(w)
            .u32(h)
            .u32(max_frame)
            .u32(fps)
            .raw(&[looping as u8])
            .raw(&[0; 47])
    }

    pub fn done(&self) -> Vec<u8> {
        self.b.clone()
    }
}

/// Writes a key: bind ID, payload, childCount, children.
pub type KeyFn<'a> = &'a dyn Fn(&mut Anie);

/// A `ResNode_` block: identifier, childCount, bindID, isLayer, rect, blend id, image.
#[allow(clippy::too_many_arguments)]
pub fn res_node(
    b: &mut Anie,
    name: &str,
    children: i32,
    id: i32,
    is_layer: bool,
    rect: [i32; 4],
    blend: &[u8; 4],
    image: impl FnOnce(&mut Anie),
) {
    b.block(b"ResNode_", |b| {
        b.qstring(name)
            .i32(children)
            .i32(id)
            .bool(is_layer)
            .i32s(&rect)
            .raw(blend);
        image(b);
    });
}

/// A null image: type 0, 0×0.
pub fn null_image(b: &mut Anie) {
    b.u32(0).u32(0).u32(0);
}

/// A PackBits image from `lines` (one PackBits stream per row and channel, R G B A), with the
/// total length and the padding to 4 that follows it.
pub fn packbits_image(b: &mut Anie, w: u32, h: u32, lines: &[&[u8]]) {
    b.u32(1).u32(w).u32(h);
    let total: usize = lines.iter().map(|l| 4 + l.len()).sum();
    b.u64(total as u64);
    for l in lines {
        b.u32(l.len() as u32).raw(l);
    }
    b.raw(&[0; 3][..(4 - total % 4) % 4]);
}

/// An `ObjNode_` block with its LayerNd_/FolderNd block: type, childCount, bindID, name,
/// visible, slimDown, initialRect, clipped, then `timeline` writes the TimeLine body (mapCount
/// and maps).
#[allow(clippy::too_many_arguments)]
pub fn obj_node(
    b: &mut Anie,
    folder: bool,
    children: i32,
    id: i32,
    name: &str,
    flags: [bool; 3],
    rect: [i32; 4],
    timeline: impl FnOnce(&mut Anie),
) {
    b.block(b"ObjNode_", |b| {
        b.i32(folder as i32).i32(children).i32(id);
        let sig = if folder { b"FolderNd" } else { b"LayerNd_" };
        b.block(sig, |b| {
            b.qstring(name)
                .bool(flags[0])
                .bool(flags[1])
                .i32s(&rect)
                .bool(flags[2]);
            b.block(b"TimeLine", timeline);
        });
    });
}

/// A `TimeMap_` block: type name, hasDefaultKey, [default key], keyCount, (frame, key)…
/// Each key is written by its closure (bindID, payload, childCount, children).
pub fn time_map(b: &mut Anie, name: &str, default: Option<KeyFn>, keys: &[(i32, KeyFn)]) {
    b.block(b"TimeMap_", |b| {
        b.qstring(name).bool(default.is_some());
        if let Some(k) = default {
            k(b);
        }
        b.i32(keys.len() as i32);
        for (frame, k) in keys {
            b.i32(*frame);
            k(b);
        }
    });
}

/// A GridMesh block for a 2×2 image: the quad AnimeEffects makes for small images (§3):
/// vertices (0,0), (2,0), (0,2), (2,2), indices 0 1 2 1 3 2, origin offset (−1, −1).
pub fn quad_grid_mesh(b: &mut Anie) {
    b.block(b"GridMesh", |b| {
        b.i32(0).i32(2).i32(2).f32s(&[-1.0, -1.0]).i32(16).i32(0);
        b.i32(6).i32s(&[0, 1, 2, 1, 3, 2]);
        b.i32(4);
        b.f32s(&[0., 0., 0., 2., 0., 0., 0., 2., 0., 2., 2., 0.]); // positions
        b.f32s(&[0.0; 12]); // offsets
        b.f32s(&[0., 0., 2., 0., 0., 2., 2., 2.]); // texcoords
        b.f32s(&[0., 0., 1., 0., 0., 1., 0., 0., 1., 0., 0., 1.]); // normals
        b.u64(96);
        b.i32s(&[1, 2, -1, -1, -1, -1]);
        b.i32s(&[3, -1, -1, -1, -1, 0]);
        b.i32s(&[-1, -1, 0, 3, -1, -1]);
        b.i32s(&[-1, -1, -1, -1, 2, 1]);
        if b.minor >= 5 {
            b.i32s(&[0, 0, 2, 2]);
        }
    });
}

/// A bone record and no children of its own written here: childCount, bindID, originID,
/// localPos, localAngle, range0, range1, shape, binding nodes, worldPos, worldAngle, rotate.
#[allow(clippy::too_many_arguments)]
pub fn bone(
    b: &mut Anie,
    children: i32,
    id: i32,
    origin: i32,
    local: [f32; 3],
    range: [f32; 4],
    valid_shape: bool,
    bindings: &[i32],
    world: [f32; 4],
) {
    b.i32(children)
        .i32(id)
        .i32(origin)
        .f32s(&local)
        .f32s(&range);
    if valid_shape {
        b.bool(true)
            .f32s(&[1.0, 2.0, 10.0, 0.0, 0.0, 1.0, 0.0, 10.0]) // segStart, segDir, vUnit, vDirAngle, length
            .f32s(&[5.2, 4.2, 5.2, 4.2]) // radius0, radius1
            .f32s(&[3.0, -3.0, 3.0, -3.0]) // rootBend, tailBend
            .f32s(&[0.0, 0.0, 12.0, 8.0]) // bounding
            .i32(3)
            .f32s(&[0.0, 0.0, 12.0, 0.0, 6.0, 8.0]); // polygon
    } else {
        b.bool(false)
            .f32s(&[0.0; 8])
            .f32s(&[0.0; 4])
            .f32s(&[-1.0, 1.0, -1.0, 1.0])
            .f32s(&[0.0; 4])
            .i32(0);
    }
    b.i32(bindings.len() as i32).i32s(bindings).f32s(&world);
}

/// Bind IDs of [`every_key_type`], picked out of AnimeEffects' order on purpose.
pub mod id {
    pub const TOP_RES: i32 = 50;
    pub const EYE_RES: i32 = 51;
    pub const ROOT: i32 = 60;
    pub const LAYER: i32 = 70;
    pub const BONE_KEY: i32 = 80;
    pub const POSE_0: i32 = 83;
    pub const POSE_10: i32 = 84;
    pub const MESH_KEY: i32 = 89;
    pub const FFD_2: i32 = 90;
    pub const FFD_7: i32 = 91;
    pub const IMAGE_DEFAULT: i32 = 92;
}

/// The resource tree of [`every_key_type`]: "art.psd" → "topnode" folder → "eye", a 2×2
/// image in `mul ` mode at (3, 4). Its PackBits rows (R, G, B, A):
/// * row 0: literal [10, 20]; repeat 30 ×2; literal [40, 50]; repeat 255 ×2
/// * row 1: literal [60, 61]; literal [70, 80]; repeat 90 ×2; literal [128, 0]
///
/// Scanline bytes: row 0 = (4+3)+(4+2)+(4+3)+(4+2) = 26, row 1 = 7+7+6+7 = 27, total 53,
/// so 3 bytes of padding follow.
pub fn eye_resources(b: &mut Anie) {
    b.block(b"Resource", |b| {
        b.i32(1).qstring("art.psd");
        res_node(
            b,
            "topnode",
            1,
            id::TOP_RES,
            false,
            [0; 4],
            b"norm",
            null_image,
        );
        res_node(b, "eye", 0, id::EYE_RES, true, [3, 4, 2, 2], b"mul ", |b| {
            packbits_image(
                b,
                2,
                2,
                &[
                    &[1, 10, 20],
                    &[0xff, 30],
                    &[1, 40, 50],
                    &[0xff, 255],
                    &[1, 60, 61],
                    &[1, 70, 80],
                    &[0xff, 90],
                    &[1, 128, 0],
                ],
            )
        });
    });
}

/// A project of format 0.`minor` whose layer has keys of every type the version knows:
/// * canvas 64×48, maxFrame 23, fps 12, loop on;
/// * resources: [`eye_resources`];
/// * objects: folder "root" (ID 60; a default Move key) holding layer "eye layer" (ID 70;
///   visible, slimDown, clipped) with Move (default + frames 0, 12), Rotate (3), Scale
///   (default + 6), Depth (default), Opa (0, 23), Bone (0: two bones, a cache, a binding
///   cache; children: the two Pose keys), Pose (0, 10), Mesh (5; child: FFD 7), FFD (2, 7),
///   Image (default: resource "eye", `mul `, the quad mesh; child: FFD 2), and from 0.6 on
///   HSV (4).
///
/// Forward references on purpose: the Bone key lists Pose keys that come later, the Mesh and
/// Image keys list FFD keys that came earlier.
pub fn every_key_type(minor: u32) -> Vec<u8> {
    let mut b = Anie::new(minor);
    b.header().glbl(64, 48, 23, 12, true);
    eye_resources(&mut b);
    b.block(b"ObjTree_", |b| {
        b.i32(1);
        obj_node(
            b,
            true,
            1,
            id::ROOT,
            "root",
            [true, false, false],
            [0, 0, 64, 48],
            |b| {
                b.i32(1);
                time_map(
                    b,
                    "Move",
                    Some(&|b| {
                        b.i32(61).linear().i32(0).f32s(&[0.0; 4]).i32(0);
                    }),
                    &[],
                );
            },
        );
        obj_node(
            b,
            false,
            0,
            id::LAYER,
            "eye layer",
            [true, true, true],
            [3, 4, 2, 2],
            |b| {
                b.i32(if minor >= 6 { 11 } else { 10 });
                time_map(
                    b,
                    "Move",
                    Some(&|b| {
                        b.i32(71).linear().i32(0).f32s(&[4.0, 4.0, 0.0, 0.0]).i32(0);
                    }),
                    &[
                        (0, &|b| {
                            // Cubic, Out, weight 0.5, bezier (0.1, 0.2, 0.3, 0.4); Catmull-Rom
                            b.i32(72).easing(4, 1, 0.5, [0.1, 0.2, 0.3, 0.4]);
                            b.i32(1).f32s(&[10.0, -5.0, 1.0, 2.0]).i32(0);
                        }),
                        (12, &|b| {
                            b.i32(73).easing(9, 0, 1.0, [1.0, 0.0, 0.0, 1.0]);
                            b.i32(1).f32s(&[20.0, 5.0, 0.0, 0.0]).i32(0);
                        }),
                    ],
                );
                time_map(
                    b,
                    "Rotate",
                    None,
                    &[(3, &|b| {
                        b.i32(74)
                            .easing(0, 2, 1.0, [1.0, 0.0, 0.0, 1.0])
                            .f32s(&[1.5])
                            .i32(0);
                    })],
                );
                time_map(
                    b,
                    "Scale",
                    Some(&|b| {
                        b.i32(75).linear().f32s(&[1.0, 1.0]).i32(0);
                    }),
                    &[(6, &|b| {
                        b.i32(76).linear().f32s(&[-1.0, 2.0]).i32(0);
                    })],
                );
                time_map(
                    b,
                    "Depth",
                    Some(&|b| {
                        b.i32(77).linear().f32s(&[-2.0]).i32(0);
                    }),
                    &[],
                );
                time_map(
                    b,
                    "Opa",
                    None,
                    &[
                        (0, &|b| {
                            b.i32(78).linear().f32s(&[1.0]).i32(0);
                        }),
                        (23, &|b| {
                            b.i32(79).linear().f32s(&[0.25]).i32(0);
                        }),
                    ],
                );
                time_map(
                    b,
                    "Bone",
                    None,
                    &[(0, &|b| {
                        b.i32(id::BONE_KEY).i32(1);
                        // A root joint at (1, 2) with one child bone of length 10 at angle 0.5,
                        // bound to the folder.
                        bone(
                            b,
                            1,
                            81,
                            0,
                            [1.0, 2.0, 0.0],
                            [0.0; 4],
                            false,
                            &[],
                            [1.0, 2.0, 0.0, 0.0],
                        );
                        bone(
                            b,
                            0,
                            82,
                            0,
                            [10.0, 0.0, 0.5],
                            [4.0, 3.0, 4.0, 3.0],
                            true,
                            &[id::ROOT],
                            [11.0, 2.0, 0.5, 0.0],
                        );
                        b.i32(id::LAYER); // cache owner
                        b.i32(1).i32(id::LAYER);
                        b.f32s(&Mat4::IDENTITY.to_cols_array())
                            .f32s(&[0.0, 0.0])
                            .i32(-1)
                            .i32(0);
                        // 2 vertices, maxBoneCount 32, indices0, indices1, weights0, weights1
                        b.i32(2).i32(32);
                        b.i32s(&[0, 1, 0, 0, 1, 0, 0, 0])
                            .i32s(&[0, 0, 0, 0, 0, 0, 0, 5]);
                        b.f32s(&[0.75, 0.25, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
                            .f32s(&[0.0; 7])
                            .f32s(&[0.5]);
                        b.i32(1).i32(id::ROOT).i32(1);
                        b.f32s(&Mat4::from_translation(Vec3::new(5.0, 6.0, 0.0)).to_cols_array());
                        b.i32(2).i32(id::POSE_0).i32(id::POSE_10);
                    })],
                );
                time_map(
                    b,
                    "Pose",
                    None,
                    &[
                        (0, &|b| {
                            b.i32(id::POSE_0).linear().i32(1);
                            bone(
                                b,
                                1,
                                85,
                                81,
                                [1.0, 2.0, 0.0],
                                [0.0; 4],
                                false,
                                &[],
                                [1.0, 2.0, 0.0, 0.0],
                            );
                            bone(
                                b,
                                0,
                                86,
                                82,
                                [10.0, 0.0, 0.5],
                                [4.0, 3.0, 4.0, 3.0],
                                true,
                                &[],
                                [11.0, 2.0, 0.8, 0.3],
                            );
                            b.i32(0);
                        }),
                        (10, &|b| {
                            b.i32(id::POSE_10).linear().i32(1);
                            bone(
                                b,
                                1,
                                87,
                                81,
                                [1.0, 2.0, 0.0],
                                [0.0; 4],
                                false,
                                &[],
                                [1.0, 2.0, 0.0, 0.0],
                            );
                            bone(
                                b,
                                0,
                                88,
                                82,
                                [10.0, 0.0, 0.5],
                                [4.0, 3.0, 4.0, 3.0],
                                true,
                                &[],
                                [11.0, 2.0, 0.2, -0.3],
                            );
                            b.i32(0);
                        }),
                    ],
                );
                time_map(
                    b,
                    "Mesh",
                    None,
                    &[(5, &|b| {
                        b.i32(id::MESH_KEY).f32s(&[-1.0, -1.0]);
                        b.i32(3).f32s(&[0.0, 0.0, 2.0, 0.0, 0.0, 2.0]);
                        b.i32(3).i32s(&[0, 1, 1, 2, 2, 0]);
                        b.i32(1).i32s(&[0, 1, 2]);
                        b.i32(1).i32(id::FFD_7);
                    })],
                );
                time_map(
                    b,
                    "FFD",
                    None,
                    &[
                        (2, &|b| {
                            b.i32(id::FFD_2).linear().i32(4);
                            b.f32s(&[0., 0., 0., 2.5, 0., 0., 0., 2., 0., 2., 2., 0.])
                                .i32(0);
                        }),
                        (7, &|b| {
                            b.i32(id::FFD_7)
                                .easing(3, 1, 1.0, [1.0, 0.0, 0.0, 1.0])
                                .i32(3);
                            b.f32s(&[0., 0., 0., 2., 0., 0., 0., 3., 0.]).i32(0);
                        }),
                    ],
                );
                time_map(
                    b,
                    "Image",
                    Some(&|b| {
                        b.i32(id::IMAGE_DEFAULT)
                            .linear()
                            .i32(id::EYE_RES)
                            .raw(b"mul ")
                            .f32s(&[-1.0, -1.0]);
                        quad_grid_mesh(b);
                        b.i32(1).i32(id::FFD_2);
                    }),
                    &[],
                );
                if minor >= 6 {
                    time_map(
                        b,
                        "HSV",
                        None,
                        &[(4, &|b| {
                            b.i32(93).linear().i32s(&[30, 80, 120]);
                            if b.minor >= 7 {
                                b.i32(1);
                            }
                            b.i32(0);
                        })],
                    );
                }
            },
        );
    });
    b.done()
}

pub fn read_ok(bytes: &[u8]) -> AnieRead {
    AnieFile::read(bytes).unwrap_or_else(|e| panic!("fixture must read: {e}"))
}

fn key<T>(map: &KeyMap<T>, frame: i32) -> &TimeKey<T> {
    map.keys
        .iter()
        .find(|k| k.frame == frame)
        .unwrap_or_else(|| panic!("no key at frame {frame}"))
}

#[test]
fn the_reference_projects_read_without_warnings() {
    for name in REFERENCE_FILES {
        let r = AnieFile::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.warnings.is_empty(), "{name}: {:?}", r.warnings);
        assert_eq!(r.version, AnieVersion::V0_8);
    }
}

#[test]
fn t8_has_one_folder_one_4x4_layer_and_its_keys() {
    let p = read_ok(&fixture("t8.anie")).file;
    // GLBL: 64 × 48, maxFrame 23, fps 24, loop on (bytes 40..57).
    assert_eq!((p.canvas_width, p.canvas_height), (64, 48));
    assert_eq!((p.max_frame, p.fps, p.looping), (23, 24, true));
    assert_eq!(p.resources.len(), 1);
    let res = &p.resources[0];
    assert_eq!(res.file_path, "sample.psd");
    assert_eq!(res.nodes[0].identifier, "topnode");
    assert_eq!(res.nodes[0].children, [1]);
    let layer = &res.nodes[1];
    assert_eq!(layer.identifier, "layer1");
    assert_eq!(
        layer.rect,
        IRect {
            x: 30,
            y: 20,
            width: 4,
            height: 4
        }
    );
    let img = layer.image.as_ref().unwrap();
    assert_eq!((img.width, img.height, img.rgba.len()), (4, 4, 64));
    // Every scanline is one repeat run (`fd xx`: 4 × xx): rows 0–1 are (255, 0, 0, 255),
    // rows 2–3 are (0, 0, 255, 128).
    assert_eq!(&img.rgba[0..4], &[255, 0, 0, 255]);
    assert_eq!(&img.rgba[2 * 16..2 * 16 + 4], &[0, 0, 255, 128]);
    assert_eq!(&img.rgba[60..64], &[0, 0, 255, 128]);

    assert_eq!(p.objects.len(), 2);
    let (root, l) = (&p.objects[0], &p.objects[1]);
    assert_eq!(
        (root.kind, root.name.as_str(), root.parent),
        (NodeKind::Folder, "root", None)
    );
    assert_eq!(root.children, [1]);
    assert_eq!(
        (l.kind, l.name.as_str(), l.parent),
        (NodeKind::Layer, "layer1", Some(0))
    );
    assert!(l.visible && !l.clipped);
    // Move: default pos (32, 22); keys at 0, 12, 23, all Catmull-Rom; the 0 key is Cubic.
    let m = &l.timeline.moves;
    assert_eq!(m.default.as_ref().unwrap().value.pos, Vec2::new(32.0, 22.0));
    assert_eq!(
        m.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
        [0, 12, 23]
    );
    assert_eq!(m.keys[0].value.easing.kind, EasingKind::Cubic);
    assert!(m.keys.iter().all(|k| k.value.spline == Spline::CatmullRom));
    let path: Vec<Vec2> = m.keys.iter().map(|k| k.value.pos).collect();
    assert_eq!(
        path,
        [
            Vec2::new(10.0, 10.0),
            Vec2::new(50.0, 10.0),
            Vec2::new(50.0, 40.0)
        ]
    );
    // Rotate 23: 0x40490fd0 = 3.14159.
    assert_eq!(
        key(&l.timeline.rotates, 23).value.rotate,
        f32::from_bits(0x4049_0fd0)
    );
    assert_eq!(key(&l.timeline.opacities, 23).value.opacity, 0.5);
    let image = l.timeline.images.default.as_ref().unwrap();
    assert_eq!(image.value.resource, Some(ResourceRef { tree: 0, node: 1 }));
    assert_eq!(image.value.image_offset, Vec2::new(-2.0, -2.0));
    assert_eq!(image.value.mesh.indices, [0, 1, 2, 1, 3, 2]);
    assert_eq!(
        image.value.mesh.vertex_rect,
        IRect {
            x: 0,
            y: 0,
            width: 4,
            height: 4
        }
    );
    assert_eq!(p.image(image.value.resource.unwrap()), Some(img));
}

#[test]
fn bones_reference_has_a_three_bone_chain_pose_keys_and_caches() {
    let p = read_ok(&fixture("bones.anie")).file;
    let (owner, bk) = p
        .objects
        .iter()
        .enumerate()
        .find_map(|(i, o)| o.timeline.bones.keys.first().map(|k| (i, k)))
        .expect("a bone key");
    let bones = &bk.value.bones;
    // A root joint plus a chain: every bone but the last has one child.
    assert!(bones.len() >= 3);
    assert_eq!(bones[0].parent, None);
    for (i, b) in bones.iter().enumerate().skip(1) {
        assert_eq!(b.parent, Some(i - 1));
        assert_eq!(b.origin, None);
    }
    // Addendum 10: range (16, 10) is stored as radius (20.8, 14.8).
    assert_eq!(bones[1].range[0], Vec2::new(16.0, 10.0));
    assert_eq!(bones[1].shape.radius[0], Vec2::new(20.8, 14.8));
    // Pose keys at 0, 10, 20 are the bone key's children; their bones point at its bones.
    let poses = &p.objects[owner].timeline.poses;
    assert_eq!(
        poses.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
        [0, 10, 20]
    );
    let me = KeyRef {
        node: owner,
        kind: KeyKind::Bone,
        slot: KeySlot::At(0),
    };
    assert_eq!(
        bk.children,
        (0..3)
            .map(|i| KeyRef {
                node: owner,
                kind: KeyKind::Pose,
                slot: KeySlot::At(i)
            })
            .collect::<Vec<_>>()
    );
    for pk in &poses.keys {
        for (i, b) in pk.value.bones.iter().enumerate() {
            assert_eq!(b.origin, Some(BoneRef { key: me, bone: i }));
        }
    }
    let parents = p.key_parents();
    assert_eq!(parents[&bk.children[1]], me);
    // One influence cache for the bar layer: 68 vertices (Addendum 9), 8 influences each.
    assert_eq!(bk.value.cache_owner, Some(owner));
    let cache = &bk.value.caches[0];
    assert_eq!(p.objects[cache.node].kind, NodeKind::Layer);
    assert_eq!(
        (
            cache.indices.len(),
            cache.weights.len(),
            cache.max_bone_count
        ),
        (68, 68, 32)
    );
    // Addendum 12: the frame is stored as (−1, 0) for a key at frame 0.
    assert_eq!(
        cache.frame_sign,
        Frame {
            value: -1,
            milli: 0
        }
    );
    let mesh = &p.objects[cache.node]
        .timeline
        .images
        .default
        .as_ref()
        .unwrap()
        .value
        .mesh;
    assert_eq!((mesh.positions.len(), mesh.indices.len()), (68, 300));
    assert_eq!(
        mesh.vertex_rect,
        IRect {
            x: -5,
            y: 0,
            width: 111,
            height: 29
        }
    );
}

#[test]
fn ffd_reference_keys_hang_off_the_default_image_key() {
    let p = read_ok(&fixture("ffd.anie")).file;
    let (node, layer) = p
        .objects
        .iter()
        .enumerate()
        .find(|(_, o)| !o.timeline.ffds.keys.is_empty())
        .unwrap();
    let ffds = &layer.timeline.ffds;
    assert_eq!(
        ffds.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
        [0, 10]
    );
    // Quad Out easing on the frame-0 key (README).
    assert_eq!(ffds.keys[0].value.easing.kind, EasingKind::Quad);
    assert_eq!(ffds.keys[0].value.easing.range, EasingRange::Out);
    let image = layer.timeline.images.default.as_ref().unwrap();
    assert_eq!(
        ffds.keys[0].value.positions.len(),
        image.value.mesh.positions.len()
    );
    // Addendum 11: without a Mesh key, FFD keys are children of the default image key.
    let parents = p.key_parents();
    for i in 0..2 {
        let k = KeyRef {
            node,
            kind: KeyKind::Ffd,
            slot: KeySlot::At(i),
        };
        assert_eq!(
            parents[&k],
            KeyRef {
                node,
                kind: KeyKind::Image,
                slot: KeySlot::Default
            }
        );
    }
}

#[test]
fn blend_reference_has_eight_blend_modes() {
    let p = read_ok(&fixture("blend_v8.anie")).file;
    let modes: Vec<BlendMode> = p
        .objects
        .iter()
        .filter_map(|o| o.timeline.images.default.as_ref())
        .map(|k| k.value.blend_mode)
        .collect();
    for m in [
        BlendMode::Normal,
        BlendMode::Multiply,
        BlendMode::Screen,
        BlendMode::Overlay,
        BlendMode::Difference,
        BlendMode::LinearDodge,
        BlendMode::Darken,
        BlendMode::SoftLight,
    ] {
        assert!(modes.contains(&m), "{m:?} in {modes:?}");
    }
    let clip = read_ok(&fixture("clip_v8.anie")).file;
    assert!(clip.objects.iter().any(|o| o.clipped));
}

#[test]
fn the_minimal_144_byte_project_of_spec_section_5_reads() {
    let hex = "414e494d4658ff00 00000000 08000000 00000000000000000000000000000000
               474c424c 40000000 80020000 e0010000 3b000000 18000000 01
               0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
               5265736f75726365 0400000000000000 00000000
               4f626a547265655f 0400000000000000 00000000";
    let bytes: Vec<u8> = hex
        .split_whitespace()
        .flat_map(|w| {
            (0..w.len())
                .step_by(2)
                .map(move |i| u8::from_str_radix(&w[i..i + 2], 16).unwrap())
        })
        .collect();
    assert_eq!(bytes.len(), 144);
    let r = read_ok(&bytes);
    assert!(r.warnings.is_empty());
    let p = r.file;
    // 0x280 × 0x1e0 = 640 × 480, maxFrame 0x3b = 59, fps 0x18 = 24, loop 1.
    assert_eq!(
        (
            p.canvas_width,
            p.canvas_height,
            p.max_frame,
            p.fps,
            p.looping
        ),
        (640, 480, 59, 24, true)
    );
    assert!(p.resources.is_empty() && p.objects.is_empty());
}

/// Checks the model of [`every_key_type`] field by field.
fn check_every_key_type(p: &AnieFile, minor: u32) {
    assert_eq!(
        (
            p.canvas_width,
            p.canvas_height,
            p.max_frame,
            p.fps,
            p.looping
        ),
        (64, 48, 23, 12, true)
    );
    // Resources.
    let tree = &p.resources[0];
    assert_eq!(tree.file_path, "art.psd");
    assert_eq!(tree.nodes.len(), 2);
    assert_eq!(
        (tree.nodes[0].is_layer, tree.nodes[0].image.is_none()),
        (false, true)
    );
    assert_eq!(tree.nodes[0].children, [1]);
    let eye = &tree.nodes[1];
    assert_eq!(
        (eye.identifier.as_str(), eye.is_layer, eye.parent),
        ("eye", true, Some(0))
    );
    assert_eq!(
        eye.rect,
        IRect {
            x: 3,
            y: 4,
            width: 2,
            height: 2
        }
    );
    assert_eq!(eye.blend_mode, BlendMode::Multiply);
    let img = eye.image.as_ref().unwrap();
    #[rustfmt::skip]
    assert_eq!(img.rgba, [
        10, 30, 40, 255,   20, 30, 50, 255,   // row 0: R literal 10 20, G 30 30, B 40 50, A 255 255
        60, 70, 90, 128,   61, 80, 90, 0,     // row 1: R 60 61, G 70 80, B 90 90, A 128 0
    ]);
    // Objects.
    assert_eq!(p.objects.len(), 2);
    let root = &p.objects[0];
    assert_eq!(
        (root.kind, root.children.as_slice(), root.visible),
        (NodeKind::Folder, &[1][..], true)
    );
    assert!(root.timeline.moves.default.is_some() && root.timeline.depths.is_empty());
    let l = &p.objects[1];
    assert_eq!(
        (l.name.as_str(), l.kind, l.parent),
        ("eye layer", NodeKind::Layer, Some(0))
    );
    assert!(l.visible && l.slim_down && l.clipped);
    assert_eq!(
        l.initial_rect,
        IRect {
            x: 3,
            y: 4,
            width: 2,
            height: 2
        }
    );
    let t = &l.timeline;
    let at = |kind, i| KeyRef {
        node: 1,
        kind,
        slot: KeySlot::At(i),
    };

    // Move: default (4, 4); frame 0: Cubic Out 0.5, bezier only from 0.8, Catmull-Rom.
    assert_eq!(t.moves.default.as_ref().unwrap().frame, -1);
    assert_eq!(
        t.moves.default.as_ref().unwrap().value.pos,
        Vec2::new(4.0, 4.0)
    );
    let m0 = &t.moves.keys[0].value;
    let bezier = if minor >= 8 {
        [0.1, 0.2, 0.3, 0.4]
    } else {
        Easing::DEFAULT_BEZIER
    };
    assert_eq!(
        m0.easing,
        Easing {
            kind: EasingKind::Cubic,
            range: EasingRange::Out,
            weight: 0.5,
            bezier
        }
    );
    assert_eq!(
        (m0.spline, m0.pos, m0.centroid),
        (
            Spline::CatmullRom,
            Vec2::new(10.0, -5.0),
            Vec2::new(1.0, 2.0)
        )
    );
    assert_eq!(t.moves.keys[1].frame, 12);
    assert_eq!(t.moves.keys[1].value.easing.kind, EasingKind::Back);
    assert_eq!(t.moves.keys[1].value.easing.range, EasingRange::In);
    // Rotate, Scale, Depth, Opa.
    assert_eq!(key(&t.rotates, 3).value.rotate, 1.5);
    assert_eq!(key(&t.rotates, 3).value.easing.kind, EasingKind::None);
    assert_eq!(t.scales.default.as_ref().unwrap().value.scale, Vec2::ONE);
    assert_eq!(key(&t.scales, 6).value.scale, Vec2::new(-1.0, 2.0));
    assert_eq!(t.depths.default.as_ref().unwrap().value.depth, -2.0);
    assert!(t.depths.keys.is_empty());
    assert_eq!(key(&t.opacities, 23).value.opacity, 0.25);
    // Bone key: root joint + one bone bound to the folder, a cache of 2 vertices, a binding.
    let bk = key(&t.bones, 0);
    let bones = &bk.value.bones;
    assert_eq!(bones.len(), 2);
    assert_eq!(
        (bones[0].parent, bones[0].children.as_slice()),
        (None, &[1][..])
    );
    assert_eq!(
        (bones[1].parent, bones[1].local_pos, bones[1].local_angle),
        (Some(0), Vec2::new(10.0, 0.0), 0.5)
    );
    assert_eq!(bones[1].range, [Vec2::new(4.0, 3.0); 2]);
    assert!(bones[1].shape.valid && !bones[0].shape.valid);
    assert_eq!(
        bones[1].shape.polygon,
        [Vec2::ZERO, Vec2::new(12.0, 0.0), Vec2::new(6.0, 8.0)]
    );
    assert_eq!(
        bones[1].shape.bounding,
        FRect {
            x: 0.0,
            y: 0.0,
            width: 12.0,
            height: 8.0
        }
    );
    assert_eq!(bones[0].shape.root_bend, [-1.0, 1.0]);
    assert_eq!(bones[1].binding_nodes, [0]);
    assert_eq!(
        (bones[1].world_pos, bones[1].world_angle),
        (Vec2::new(11.0, 2.0), 0.5)
    );
    assert_eq!(bk.value.cache_owner, Some(1));
    let c = &bk.value.caches[0];
    assert_eq!(
        (c.node, c.inner_matrix, c.frame_sign),
        (
            1,
            Mat4::IDENTITY,
            Frame {
                value: -1,
                milli: 0
            }
        )
    );
    // indices0 = [0 1 0 0 | 1 0 0 0], indices1 = [0 0 0 0 | 0 0 0 5]: vertex 1's 8th is 5.
    assert_eq!(
        c.indices,
        [[0, 1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 5]]
    );
    assert_eq!(
        c.weights,
        [
            [0.75, 0.25, 0., 0., 0., 0., 0., 0.],
            [1., 0., 0., 0., 0., 0., 0., 0.5]
        ]
    );
    let bc = &bk.value.binding_caches[0];
    assert_eq!((bc.node, bc.bone_index), (0, 1));
    assert_eq!(
        bc.inner_matrix.w_axis,
        glam::Vec4::new(5.0, 6.0, 0.0, 1.0),
        "column-major"
    );
    assert_eq!(bk.children, [at(KeyKind::Pose, 0), at(KeyKind::Pose, 1)]);
    // Pose keys: shadow bones whose origins are the bone key's bones.
    let bone_key = at(KeyKind::Bone, 0);
    for pk in &t.poses.keys {
        assert_eq!(
            pk.value.bones[0].origin,
            Some(BoneRef {
                key: bone_key,
                bone: 0
            })
        );
        assert_eq!(
            pk.value.bones[1].origin,
            Some(BoneRef {
                key: bone_key,
                bone: 1
            })
        );
    }
    assert_eq!(key(&t.poses, 10).value.bones[1].rotate, -0.3);
    // Mesh key: a triangle, its FFD key at 7.
    let mk = key(&t.meshes, 5);
    assert_eq!(
        mk.value.vertices,
        [Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(0.0, 2.0)]
    );
    assert_eq!(
        (mk.value.edges.as_slice(), mk.value.faces.as_slice()),
        (&[[0, 1], [1, 2], [2, 0]][..], &[[0, 1, 2]][..])
    );
    assert_eq!(mk.value.face_vertices(0), Some([0, 1, 2]));
    assert_eq!(mk.children, [at(KeyKind::Ffd, 1)]);
    // FFD keys.
    assert_eq!(key(&t.ffds, 2).value.positions[1], Vec3::new(2.5, 0.0, 0.0));
    assert_eq!(key(&t.ffds, 7).value.easing.kind, EasingKind::Quad);
    // Image key: resource "eye", mul, offset (−1, −1), the quad mesh, its FFD key at 2.
    let ik = t.images.default.as_ref().unwrap();
    assert_eq!(ik.value.resource, Some(ResourceRef { tree: 0, node: 1 }));
    assert_eq!(
        (ik.value.blend_mode, ik.value.image_offset),
        (BlendMode::Multiply, Vec2::new(-1.0, -1.0))
    );
    let mesh = &ik.value.mesh;
    assert_eq!(
        (mesh.size, mesh.origin_offset, mesh.cell_px),
        ([2, 2], Vec2::new(-1.0, -1.0), 16)
    );
    assert_eq!(mesh.indices, [0, 1, 2, 1, 3, 2]);
    assert_eq!(mesh.positions[3], Vec3::new(2.0, 2.0, 0.0));
    assert_eq!(mesh.texcoords[1], Vec2::new(2.0, 0.0));
    assert_eq!(mesh.normals[2], Vec3::Z);
    assert_eq!(mesh.connections[1], [3, -1, -1, -1, -1, 0]);
    // Stored from 0.5 on; rebuilt from the positions (0..2 × 0..2) for 0.4: the same rect.
    assert_eq!(
        mesh.vertex_rect,
        IRect {
            x: 0,
            y: 0,
            width: 2,
            height: 2
        }
    );
    assert_eq!(ik.children, [at(KeyKind::Ffd, 0)]);
    // HSV from 0.6; `absolute` from 0.7.
    if minor >= 6 {
        let h = &key(&t.hsvs, 4).value;
        assert_eq!((h.hue, h.sat, h.val, h.absolute), (30, 80, 120, minor >= 7));
    } else {
        assert!(t.hsvs.is_empty());
    }
    // Parents: FFD 2 → image default, FFD 7 → mesh 5, poses → bone key.
    let parents = p.key_parents();
    assert_eq!(
        parents[&at(KeyKind::Ffd, 0)],
        KeyRef {
            node: 1,
            kind: KeyKind::Image,
            slot: KeySlot::Default
        }
    );
    assert_eq!(parents[&at(KeyKind::Ffd, 1)], at(KeyKind::Mesh, 0));
    assert_eq!(parents[&at(KeyKind::Pose, 1)], bone_key);
    assert_eq!(parents.len(), 4);
}

#[test]
fn every_key_type_reads_in_every_version() {
    for minor in 4..=8 {
        let r = read_ok(&every_key_type(minor));
        assert!(r.warnings.is_empty(), "0.{minor}: {:?}", r.warnings);
        assert_eq!(r.version.minor(), minor);
        check_every_key_type(&r.file, minor);
    }
}

#[test]
fn versions_differ_by_easing_hsv_and_vertex_rect_sizes() {
    let len = |m| every_key_type(m).len() as i64;
    // 0.4 → 0.5: one GridMesh gains a 16-byte vertexRect.
    assert_eq!(len(5) - len(4), 16);
    // 0.5 → 0.6: an HSV map: 16 (block head) + 4 ("HSV\0") + 4 (hasDefault) + 4 (count)
    // + 4 (frame) + 4 (ID) + 12 (easing) + 12 (3 ints) + 4 (childCount) = 64.
    assert_eq!(len(6) - len(5), 64);
    // 0.6 → 0.7: the HSV key's 4th int.
    assert_eq!(len(7) - len(6), 4);
    // 0.7 → 0.8: 16 more bytes per easing; the fixture has 16 easings:
    // root Move default 1; Move 3; Rotate 1; Scale 2; Depth 1; Opa 2; Pose 2; FFD 2;
    // Image 1; HSV 1 (Bone and Mesh keys have none).
    assert_eq!(len(8) - len(7), 16 * 16);
}

#[test]
fn unsorted_keys_are_sorted_and_references_follow_them() {
    // FFD keys stored at frames 9 then 2; the image key lists the frame-9 one (ID 41).
    let file = one_layer(8, |b| {
        b.i32(2);
        time_map(
            b,
            "FFD",
            None,
            &[
                (9, &|b| {
                    b.i32(41).linear().i32(0).i32(0);
                }),
                (2, &|b| {
                    b.i32(42).linear().i32(0).i32(0);
                }),
            ],
        );
        image_map(b, 43, 2, &[41]);
    });
    let r = read_ok(&file);
    assert_eq!(r.warnings.len(), 1);
    assert_eq!(r.warnings[0].kind, AnieWarningKind::KeysSorted);
    let t = &r.file.objects[1].timeline;
    assert_eq!(
        t.ffds.keys.iter().map(|k| k.frame).collect::<Vec<_>>(),
        [2, 9]
    );
    let child = t.images.default.as_ref().unwrap().children[0];
    assert_eq!(child.slot, KeySlot::At(1), "the frame-9 key, now second");
}

#[test]
fn unknown_key_types_are_skipped_by_their_length() {
    // A "Blur" map (a later fork's key type) between Opa and Image: skipped with a warning.
    let file = one_layer(8, |b| {
        b.i32(3);
        time_map(
            b,
            "Opa",
            None,
            &[(0, &|b| {
                b.i32(40).linear().f32s(&[0.5]).i32(0);
            })],
        );
        time_map(
            b,
            "Blur",
            None,
            &[(0, &|b| {
                b.i32(41).linear().f32s(&[3.0, 7.0]).i32(0);
            })],
        );
        image_map(b, 43, 2, &[]);
    });
    let r = read_ok(&file);
    assert_eq!(r.warnings.len(), 1);
    assert!(
        matches!(&r.warnings[0].kind, AnieWarningKind::UnknownKeyType { name, .. } if name == "Blur")
    );
    let t = &r.file.objects[1].timeline;
    assert_eq!(key(&t.opacities, 0).value.opacity, 0.5);
    assert!(t.images.default.is_some());
}

#[test]
fn a_missing_image_degrades_to_an_empty_layer_with_a_warning() {
    // Resource ID 99 is bound nowhere; ID 0 means none.
    for rid in [99, 0] {
        let file = one_layer(8, |b| {
            b.i32(1);
            image_map(b, 43, rid, &[]);
        });
        let r = read_ok(&file);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert_eq!(
            r.warnings[0].kind,
            AnieWarningKind::MissingImage { id: rid }
        );
        assert!(
            r.warnings[0].to_string().contains("node #1 \"layer\""),
            "{}",
            r.warnings[0]
        );
        assert_eq!(
            r.file.objects[1]
                .timeline
                .images
                .default
                .as_ref()
                .unwrap()
                .value
                .resource,
            None
        );
    }
    // The folder resource (ID 1) has no image.
    let file = one_layer(8, |b| {
        b.i32(1);
        image_map(b, 43, 1, &[]);
    });
    let r = read_ok(&file);
    assert_eq!(
        r.warnings[0].kind,
        AnieWarningKind::ResourceWithoutImage { id: 1 }
    );
}

#[test]
fn out_of_range_values_are_clamped_as_animeeffects_does() {
    let file = one_layer(8, |b| {
        b.i32(2);
        time_map(
            b,
            "Opa",
            None,
            &[(0, &|b| {
                b.i32(40).linear().f32s(&[1.5]).i32(0);
            })],
        );
        time_map(
            b,
            "Scale",
            None,
            &[(0, &|b| {
                b.i32(41).linear().f32s(&[2e4, -1.0]).i32(0);
            })],
        );
    });
    let r = read_ok(&file);
    let kinds: Vec<_> = r.warnings.iter().map(|w| &w.kind).collect();
    assert_eq!(
        kinds,
        [
            &AnieWarningKind::ValueClamped {
                field: "opacity",
                value: 1.5,
                clamped: 1.0
            },
            &AnieWarningKind::ValueClamped {
                field: "scale",
                value: 2e4,
                clamped: 1e4
            },
        ]
    );
    let t = &r.file.objects[1].timeline;
    assert_eq!(t.opacities.keys[0].value.opacity, 1.0);
    assert_eq!(t.scales.keys[0].value.scale, Vec2::new(1e4, -1.0));
}

#[test]
fn format_0_4_rebuilds_the_vertex_rect_and_0_6_resets_huge_hsv() {
    // 0.4: a mesh with positions from (−0.5, 1.2) to (3.5, 2.0) → rect (−1, 1, 5, 1).
    let file = one_layer(4, |b| {
        b.i32(1);
        time_map(
            b,
            "Image",
            Some(&|b| {
                b.i32(43).linear().i32(2).raw(b"norm").f32s(&[0.0, 0.0]);
                b.block(b"GridMesh", |b| {
                    b.i32(0)
                        .i32(1)
                        .i32(1)
                        .f32s(&[0.0, 0.0])
                        .i32(16)
                        .i32(0)
                        .i32(0);
                    b.i32(2)
                        .f32s(&[-0.5, 1.2, 0.0, 3.5, 2.0, 0.0])
                        .f32s(&[0.0; 6]);
                    b.f32s(&[-0.5, 1.2, 3.5, 2.0])
                        .f32s(&[0.0; 6])
                        .u64(48)
                        .i32s(&[-1; 12]);
                });
                b.i32(0);
            }),
            &[],
        );
    });
    let r = read_ok(&file);
    let mesh = &r.file.objects[1]
        .timeline
        .images
        .default
        .as_ref()
        .unwrap()
        .value
        .mesh;
    assert_eq!(
        mesh.vertex_rect,
        IRect {
            x: -1,
            y: 1,
            width: 5,
            height: 1
        }
    );
    // 0.6: 3 ints; a value ≥ 1e5 resets the key to (0, 100, 100) with a warning.
    let file = one_layer(6, |b| {
        b.i32(1);
        time_map(
            b,
            "HSV",
            None,
            &[(0, &|b| {
                b.i32(40).linear().i32s(&[5, 100_000, 7]).i32(0);
            })],
        );
    });
    let r = read_ok(&file);
    assert_eq!(
        r.warnings[0].kind,
        AnieWarningKind::HsvReset {
            values: [5, 100_000, 7]
        }
    );
    let h = &r.file.objects[1].timeline.hsvs.keys[0].value;
    assert_eq!((h.hue, h.sat, h.val, h.absolute), (0, 100, 100, false));
    // HSV in a 0.5 file is read (3 ints) with a warning.
    let file = one_layer(5, |b| {
        b.i32(1);
        time_map(
            b,
            "HSV",
            None,
            &[(0, &|b| {
                b.i32(40).linear().i32s(&[5, 50, 70]).i32(0);
            })],
        );
    });
    let r = read_ok(&file);
    assert_eq!(
        r.warnings[0].kind,
        AnieWarningKind::HsvInOldFormat {
            version: AnieVersion::V0_5
        }
    );
    assert_eq!(r.file.objects[1].timeline.hsvs.keys[0].value.sat, 50);
}

#[test]
fn strings_are_aligned_and_lossy_utf8_is_a_warning() {
    // Names of 0..=8 bytes: (len + 1) rounded up to 4 on disk.
    for name in ["", "a", "ab", "abc", "abcd", "é", "layer√"] {
        let file = one_layer_named(8, name, |b| {
            b.i32(0);
        });
        let r = read_ok(&file);
        assert_eq!(r.file.objects[1].name, name);
    }
    let file = one_layer_named_bytes(8, b"bad\xff", |b| {
        b.i32(0);
    });
    let r = read_ok(&file);
    assert_eq!(r.file.objects[1].name, "bad\u{fffd}");
    assert_eq!(
        r.warnings[0].kind,
        AnieWarningKind::InvalidUtf8 { what: "node name" }
    );
}

// ---- small projects around one layer ----

/// An Image map with a default key (bind `id`, resource `resource`, `norm`, offset 0, a quad
/// mesh) whose children are `children`.
pub fn image_map(b: &mut Anie, id: i32, resource: i32, children: &[i32]) {
    let children = children.to_vec();
    time_map(
        b,
        "Image",
        Some(&move |b| {
            b.i32(id)
                .linear()
                .i32(resource)
                .raw(b"norm")
                .f32s(&[-1.0, -1.0]);
            quad_grid_mesh(b);
            b.i32(children.len() as i32).i32s(&children);
        }),
        &[],
    );
}

/// Format 0.`minor`: canvas 32×32, maxFrame 10, fps 24; resource tree "a.psd" with
/// "topnode" (ID 1) and a 2×2 layer "px" (ID 2, all pixels (1, 2, 3, 4)); a root folder
/// (ID 3) holding one layer "layer" (ID 4) whose TimeLine body `timeline` writes.
pub fn one_layer(minor: u32, timeline: impl FnOnce(&mut Anie)) -> Vec<u8> {
    one_layer_named(minor, "layer", timeline)
}

pub fn one_layer_named(minor: u32, name: &str, timeline: impl FnOnce(&mut Anie)) -> Vec<u8> {
    one_layer_named_bytes(minor, name.as_bytes(), timeline)
}

pub fn one_layer_named_bytes(minor: u32, name: &[u8], timeline: impl FnOnce(&mut Anie)) -> Vec<u8> {
    let mut b = Anie::new(minor);
    b.header().glbl(32, 32, 10, 24, false);
    one_layer_resources(&mut b);
    b.block(b"ObjTree_", |b| {
        b.i32(1);
        obj_node(
            b,
            true,
            1,
            3,
            "root",
            [true, false, false],
            [0, 0, 32, 32],
            |b| {
                b.i32(0);
            },
        );
        b.block(b"ObjNode_", |b| {
            b.i32(0).i32(0).i32(4);
            b.block(b"LayerNd_", |b| {
                b.raw(name).raw(&[0]);
                b.raw(&[0; 3][..(4 - (name.len() + 1) % 4) % 4]);
                b.bool(true).bool(false).i32s(&[0, 0, 2, 2]).bool(false);
                b.block(b"TimeLine", timeline);
            });
        });
    });
    b.done()
}

/// The resource block of [`one_layer`].
pub fn one_layer_resources(b: &mut Anie) {
    b.block(b"Resource", |b| {
        b.i32(1).qstring("a.psd");
        res_node(b, "topnode", 1, 1, false, [0; 4], b"norm", null_image);
        res_node(b, "px", 0, 2, true, [0, 0, 2, 2], b"norm", |b| {
            // Each channel row is a repeat run of 2: header −1.
            packbits_image(
                b,
                2,
                2,
                &[
                    &[0xff, 1],
                    &[0xff, 2],
                    &[0xff, 3],
                    &[0xff, 4],
                    &[0xff, 1],
                    &[0xff, 2],
                    &[0xff, 3],
                    &[0xff, 4],
                ],
            )
        });
    });
}
