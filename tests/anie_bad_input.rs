//! Bad `.anie` input: truncation at every byte, corrupted bytes, impossible counts, broken
//! IDs, deep nesting, huge images. Never a panic, always a typed error that says what was
//! expected and where.

use crate::anie_read::{
    Anie, every_key_type, fixture, image_map, obj_node, one_layer, one_layer_resources,
    quad_grid_mesh, res_node, time_map,
};
use rigplay::formats::Bounds;
use rigplay::formats::anie::*;

include!("../fuzz/oracles/anie.rs");

fn read_err(bytes: &[u8]) -> AnieError {
    match AnieFile::read(bytes) {
        Ok(_) => panic!("must not read"),
        Err(e) => {
            // Every error has a message a modder can read.
            assert!(!e.to_string().is_empty());
            e
        }
    }
}

/// A project of format 0.8 with the resources of `one_layer` and an object tree body written
/// by `objects` (top count and nodes).
fn with_objects(objects: impl FnOnce(&mut Anie)) -> Vec<u8> {
    let mut b = Anie::new(8);
    b.header().glbl(32, 32, 10, 24, false);
    one_layer_resources(&mut b);
    b.block(b"ObjTree_", objects);
    b.done()
}

/// Offset of the first occurrence of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("needle present")
}

#[test]
fn truncation_at_every_byte_is_an_error_at_or_before_the_cut() {
    let mut files: Vec<Vec<u8>> = (4..=8).map(every_key_type).collect();
    files.push(fixture("t8.anie"));
    files.push(fixture("ffd.anie"));
    for file in &files {
        assert!(AnieFile::read(file).is_ok());
        for cut in 0..file.len() {
            let err = read_err(&file[..cut]);
            assert!(
                err.offset <= cut as u64,
                "cut {cut}: error at {}",
                err.offset
            );
            assert!(
                matches!(
                    err.kind,
                    AnieErrorKind::Bounds(Bounds::Truncated { .. })
                        | AnieErrorKind::BlockTooLong { .. }
                ),
                "cut {cut}: {err}"
            );
        }
    }
    // The error names the block whose length ran out or the file.
    let file = every_key_type(8);
    let err = read_err(&file[..100]);
    assert_eq!(
        err.kind,
        AnieErrorKind::Bounds(Bounds::Truncated {
            expected: "72-byte GLBL block",
            needed: 72,
            available: 68,
            within: None
        })
    );
    let err = read_err(&file[..200]);
    assert_eq!(
        err.kind,
        AnieErrorKind::BlockTooLong {
            block: "Resource",
            length: (find(&file, b"ObjTree_") - 120) as u64,
            available: 200 - 120,
        }
    );
}

#[test]
fn corrupting_any_byte_never_panics() {
    // Each byte of a small project set to 0x00 and to 0xff in turn: the reader returns an
    // error or a project, and a project passes the fuzz oracle. (The fuzzer goes further.)
    let file = every_key_type(8);
    let mut copy = file.clone();
    for i in 0..file.len() {
        for v in [0x00, 0xff] {
            copy[i] = v;
            check_anie(&copy);
        }
        copy[i] = file[i];
    }
}

#[test]
fn the_fuzz_oracle_passes_the_reference_files_and_fixtures() {
    for name in crate::anie_read::REFERENCE_FILES {
        check_anie(&fixture(name));
    }
    for minor in 4..=8 {
        check_anie(&every_key_type(minor));
    }
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    // Resource tree count i32::MAX at byte 120 (after header 32, GLBL 72, block head 16);
    // each tree needs at least 4 (path) + 64 (smallest ResNode_) bytes.
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(i32::MAX).raw(&[0; 60]);
    });
    let err = read_err(&b.done());
    assert_eq!(err.offset, 124);
    assert_eq!(
        err.kind,
        AnieErrorKind::Bounds(Bounds::CountTooLarge {
            what: "resource tree",
            count: i32::MAX as u64,
            min_each: 68,
            bytes_left: 60
        })
    );
    // A negative count.
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(-1);
    });
    assert_eq!(
        read_err(&b.done()).kind,
        AnieErrorKind::Bounds(Bounds::NegativeCount {
            what: "resource tree",
            value: -1
        })
    );
    // 2^30 FFD keys in a map of a few bytes: each key needs at least
    // frame 4 + ID 4 + easing 28 + count 4 + childCount 4 = 44 bytes.
    let file = one_layer(8, |b| {
        b.i32(1);
        b.block(b"TimeMap_", |b| {
            b.qstring("FFD").bool(false).i32(1 << 30).raw(&[0; 8]);
        });
    });
    let err = read_err(&file);
    assert!(
        matches!(
            err.kind,
            AnieErrorKind::Bounds(Bounds::CountTooLarge {
                what: "key",
                count: 1073741824,
                min_each: 44,
                bytes_left: 8
            })
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("node #1 \"layer\", FFD keys"),
        "{err}"
    );
    // A grid mesh claiming 10^9 vertices (68 bytes each at least).
    let file = one_layer(8, |b| {
        b.i32(1);
        time_map(
            b,
            "Image",
            Some(&|b| {
                b.i32(43).linear().i32(2).raw(b"norm").f32s(&[0.0, 0.0]);
                b.block(b"GridMesh", |b| {
                    b.i32(0).i32(2).i32(2).f32s(&[0.0, 0.0]).i32(16).i32(0);
                    b.i32(0).i32(1_000_000_000).raw(&[0; 16]);
                });
                b.i32(0);
            }),
            &[],
        );
    });
    assert!(matches!(
        read_err(&file).kind,
        AnieErrorKind::Bounds(Bounds::CountTooLarge {
            what: "grid mesh vertex",
            count: 1_000_000_000,
            min_each: 68,
            ..
        })
    ));
}

/// A Resource block with one tree "x.psd" whose only node is a layer with this image body.
fn project_with_image(image: impl FnOnce(&mut Anie)) -> Vec<u8> {
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(1).qstring("x.psd");
        res_node(b, "big", 0, 1, true, [0, 0, 1, 1], b"norm", image);
    });
    b.block(b"ObjTree_", |b| {
        b.i32(0);
    });
    b.done()
}

#[test]
fn huge_images_are_errors_not_allocations() {
    // 65536 × 32768 × 4 bytes = 8 GiB: refused from the header (image at byte 152).
    let file = project_with_image(|b| {
        b.u32(1).u32(65536).u32(32768).u64(8).raw(&[0; 8]);
    });
    let err = read_err(&file);
    assert_eq!(
        err.kind,
        AnieErrorKind::ImageTooLarge {
            width: 65536,
            height: 32768,
            max: 16384
        }
    );
    assert!(
        err.to_string().contains("resource tree #0 node #0 \"big\""),
        "{err}"
    );
    // 16384 × 16384 (1 GiB of pixels) with 16 bytes of data: each of the 4 × 16384 channel
    // rows needs its u32 length and 2 bytes per 128 pixels: 4 + 2 × 128 = 260 bytes.
    let file = project_with_image(|b| {
        b.u32(1).u32(16384).u32(16384).u64(16).raw(&[0; 16]);
    });
    assert_eq!(
        read_err(&file).kind,
        AnieErrorKind::Bounds(Bounds::CountTooLarge {
            what: "image scanline",
            count: 4 * 16384,
            min_each: 260,
            bytes_left: 16
        })
    );
    // A data length past the end of the file.
    let file = project_with_image(|b| {
        b.u32(1).u32(1).u32(1).u64(u64::MAX).raw(&[0; 16]);
    });
    assert!(matches!(
        read_err(&file).kind,
        AnieErrorKind::BlockTooLong {
            block: "image data",
            length: u64::MAX,
            ..
        }
    ));
    // A null image with a size.
    let file = project_with_image(|b| {
        b.u32(0).u32(3).u32(0);
    });
    assert_eq!(
        read_err(&file).kind,
        AnieErrorKind::NullImageWithSize {
            width: 3,
            height: 0
        }
    );
}

#[test]
fn bad_packbits_streams_are_errors() {
    // A 2×1 image; the R stream is `r`, G, B, A are repeat runs [−1, v] (2 × v); `extra`
    // zero bytes follow the scanlines inside the declared data length.
    let image_with = |r: &'static [u8], extra: u64| {
        project_with_image(move |b| {
            let lines: [&[u8]; 4] = [r, &[0xff, 1], &[0xff, 2], &[0xff, 3]];
            let total = lines.iter().map(|l| 4 + l.len() as u64).sum::<u64>() + extra;
            b.u32(1).u32(2).u32(1).u64(total);
            for l in lines {
                b.u32(l.len() as u32).raw(l);
            }
            b.raw(&[0; 8][..extra as usize]);
            b.raw(&[0; 3][..((4 - total % 4) % 4) as usize]);
        })
    };
    let problem = |file: &[u8]| match read_err(file).kind {
        AnieErrorKind::PackBits {
            row: 0,
            channel: 0,
            problem,
        } => problem,
        k => panic!("{k}"),
    };
    assert_eq!(
        problem(&image_with(&[0x80, 0xff, 5], 0)),
        PackBitsProblem::NoOpHeader { at: 0 }
    );
    assert_eq!(
        problem(&image_with(&[2, 5, 6], 0)),
        PackBitsProblem::LiteralOverrun {
            at: 0,
            needed: 3,
            available: 2
        }
    );
    assert_eq!(
        problem(&image_with(&[0xfe, 5], 0)),
        PackBitsProblem::TooLong { width: 2, at: 0 }
    );
    assert_eq!(
        problem(&image_with(&[0, 5], 0)),
        PackBitsProblem::TooShort {
            width: 2,
            decoded: 1
        }
    );
    assert_eq!(
        problem(&image_with(&[0, 5, 0xff], 0)),
        PackBitsProblem::RepeatMissingByte { at: 2 }
    );
    // Scanlines that end 4 bytes before the declared data length: 4 × 4 + 3 + 2 × 3 = 25.
    assert_eq!(
        read_err(&image_with(&[1, 9, 8], 4)).kind,
        AnieErrorKind::ImageDataLength {
            declared: 29,
            actual: 25
        }
    );
    // And the good one reads: pixels (9, 1, 2, 3) and (8, 1, 2, 3).
    let p = AnieFile::read(&image_with(&[1, 9, 8], 0)).unwrap().file;
    assert_eq!(
        p.resources[0].nodes[0].image.as_ref().unwrap().rgba,
        [9, 1, 2, 3, 8, 1, 2, 3]
    );
}

#[test]
fn header_and_global_block_errors() {
    let good = every_key_type(8);
    let with = |at: usize, bytes: &[u8]| {
        let mut f = good.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        read_err(&f)
    };
    let e = with(0, b"ANIMFY");
    assert_eq!(
        (e.offset, e.kind),
        (
            0,
            AnieErrorKind::NotAnie {
                found: "ANIMFY".into()
            }
        )
    );
    assert_eq!(
        with(6, &[0, 0xff]).kind,
        AnieErrorKind::BadEndianMarker { found: [0, 0xff] }
    );
    for (major, minor) in [(0, 3), (0, 9), (1, 8)] {
        let mut v = Vec::new();
        v.extend_from_slice(&u32::to_le_bytes(major));
        v.extend_from_slice(&u32::to_le_bytes(minor));
        assert_eq!(
            with(8, &v).kind,
            AnieErrorKind::UnsupportedVersion { major, minor }
        );
    }
    assert!(matches!(
        with(31, &[1]).kind,
        AnieErrorKind::NonZeroReserved { .. }
    ));
    assert_eq!(
        with(32, b"GLBX").kind,
        AnieErrorKind::BadSignature {
            expected: "GLBL",
            found: "GLBX".into()
        }
    );
    assert_eq!(
        with(36, &[63]).kind,
        AnieErrorKind::BadGlobalLength { length: 63 }
    );
    assert!(matches!(
        with(103, &[1]).kind,
        AnieErrorKind::NonZeroReserved { .. }
    ));
    assert!(matches!(
        with(104, b"Resourcf").kind,
        AnieErrorKind::BadSignature {
            expected: "Resource",
            ..
        }
    ));
    // A 0.7 body labelled 0.8 (Addendum 7: "invalid easing param"): the 12-byte easings
    // are misread and the structure breaks.
    let mut f = every_key_type(7);
    f[12] = 8;
    assert!(AnieFile::read(&f).is_err());
    // Trailing bytes are a warning.
    let mut f = good.clone();
    f.extend_from_slice(&[0; 5]);
    let r = AnieFile::read(&f).unwrap();
    assert_eq!(
        r.warnings[0].kind,
        AnieWarningKind::TrailingBytes { count: 5 }
    );
}

#[test]
fn a_block_whose_content_ends_early_or_late_is_an_error() {
    // A ResNode_ whose declared length holds 4 bytes more than its content.
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(1).qstring("x.psd");
        res_node(b, "n", 0, 1, false, [0; 4], b"norm", |b| {
            b.u32(0).u32(0).u32(0).u32(0);
        });
    });
    let err = read_err(&b.done());
    // The ResNode_ head is at 132 (120 + tree count 4 + "x.psd" 8); its content is
    // "n" 4 + 4 + 4 + 4 + 16 + 4 + 12 = 48 bytes, declared 52.
    assert_eq!(
        (err.offset, err.kind),
        (
            132 + 16 + 48,
            AnieErrorKind::BlockLengthMismatch {
                block: "ResNode_",
                declared_end: 132 + 16 + 52,
                content_end: 132 + 16 + 48
            }
        )
    );
    // A ResNode_ whose declared length stops 4 bytes short: its content runs out inside it.
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(1).qstring("x.psd");
        b.raw(b"ResNode_").u64(44);
        b.qstring("n")
            .i32(0)
            .i32(1)
            .bool(false)
            .i32s(&[0; 4])
            .raw(b"norm");
        b.u32(0).u32(0).u32(0);
    });
    assert_eq!(
        read_err(&b.done()).kind,
        AnieErrorKind::Bounds(Bounds::Truncated {
            expected: "image height",
            needed: 4,
            available: 0,
            within: Some("ResNode_")
        })
    );
}

#[test]
fn invalid_values_are_typed_errors() {
    let one_map = |map: &dyn Fn(&mut Anie)| {
        one_layer(8, |b| {
            b.i32(1);
            map(b);
        })
    };
    // Spline 2.
    let f = one_map(&|b| {
        time_map(
            b,
            "Move",
            None,
            &[(0, &|b| {
                b.i32(40).linear().i32(2).f32s(&[0.0; 4]).i32(0);
            })],
        )
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::InvalidValue {
            field: "spline",
            value: 2,
            expected: "0 (linear) or 1 (Catmull-Rom)"
        }
    );
    // Easing: type 13, range 3, weight 1.5, and Custom (12) before 0.8.
    for (kind, range, weight) in [(13, 2, 1.0), (1, 3, 1.0), (1, 2, 1.5), (-1, 2, 1.0)] {
        let f = one_map(&|b| {
            time_map(
                b,
                "Opa",
                None,
                &[(0, &|b| {
                    b.i32(40)
                        .easing(kind, range, weight, [1.0, 0.0, 0.0, 1.0])
                        .f32s(&[1.0])
                        .i32(0);
                })],
            )
        });
        assert_eq!(
            read_err(&f).kind,
            AnieErrorKind::InvalidEasing {
                kind,
                range,
                weight
            }
        );
    }
    let f = one_layer(7, |b| {
        b.i32(1);
        time_map(
            b,
            "Opa",
            None,
            &[(0, &|b| {
                b.i32(40).easing(12, 2, 1.0, [0.0; 4]).f32s(&[1.0]).i32(0);
            })],
        );
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::InvalidEasing { kind: 12, .. }
    ));
    // NaN and infinity.
    let f = one_map(&|b| {
        time_map(
            b,
            "Rotate",
            None,
            &[(0, &|b| {
                b.i32(40).linear().f32s(&[f32::NAN]).i32(0);
            })],
        )
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::NotFinite {
            field: "rotation",
            ..
        }
    ));
    // Unknown blend mode.
    let f = one_map(&|b| {
        time_map(
            b,
            "Image",
            Some(&|b| {
                b.i32(43).linear().i32(2).raw(b"mul\0").f32s(&[0.0, 0.0]);
                quad_grid_mesh(b);
                b.i32(0);
            }),
            &[],
        )
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::UnknownBlendMode {
            found: "mul\0".into()
        }
    );
    // Grid mesh: type 1, primitive 4, an index past the vertices, connections of 95 bytes.
    let grid = |t: i32, prim: i32, index: u32, conn: u64| {
        one_map(&|b| {
            time_map(
                b,
                "Image",
                Some(&|b| {
                    b.i32(43).linear().i32(2).raw(b"norm").f32s(&[0.0, 0.0]);
                    b.block(b"GridMesh", |b| {
                        b.i32(t).i32(1).i32(1).f32s(&[0.0, 0.0]).i32(16).i32(prim);
                        b.i32(3).i32s(&[0, 1, index as i32]);
                        b.i32(2).f32s(&[0.0; 6]).f32s(&[0.0; 6]).f32s(&[0.0; 4]);
                        b.f32s(&[0.0; 6]).u64(conn).i32s(&[-1; 12]).i32s(&[0; 4]);
                    });
                    b.i32(0);
                }),
                &[],
            )
        })
    };
    assert!(AnieFile::read(&grid(0, 0, 1, 48)).is_ok());
    assert!(matches!(
        read_err(&grid(1, 0, 1, 48)).kind,
        AnieErrorKind::InvalidValue {
            field: "grid mesh type",
            value: 1,
            ..
        }
    ));
    assert!(matches!(
        read_err(&grid(0, 4, 1, 48)).kind,
        AnieErrorKind::InvalidValue {
            field: "grid mesh primitive",
            value: 4,
            ..
        }
    ));
    assert_eq!(
        read_err(&grid(0, 0, 2, 48)).kind,
        AnieErrorKind::IndexOutOfRange {
            what: "grid mesh index",
            index: 2,
            count: 2
        }
    );
    assert_eq!(
        read_err(&grid(0, 0, 1, 47)).kind,
        AnieErrorKind::ConnectionsSize {
            size: 47,
            expected: 48
        }
    );
    // Mesh key: an edge to vertex 3 of 3.
    let f = one_map(&|b| {
        time_map(
            b,
            "Mesh",
            None,
            &[(0, &|b| {
                b.i32(40).f32s(&[0.0, 0.0]).i32(3).f32s(&[0.0; 6]);
                b.i32(1).i32s(&[0, 3]).i32(0).i32(0);
            })],
        )
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::IndexOutOfRange {
            what: "mesh edge vertex",
            index: 3,
            count: 3
        }
    );
    // Two keys at one frame; a key at frame −1; a second Opa map.
    let opa = |frame: i32, id: i32| {
        move |b: &mut Anie| {
            let _ = frame;
            b.i32(id).linear().f32s(&[1.0]).i32(0);
        }
    };
    let (k1, k2) = (opa(3, 40), opa(3, 41));
    let f = one_map(&|b| time_map(b, "Opa", None, &[(3, &k1), (3, &k2)]));
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::DuplicateKeyFrame { frame: 3 }
    );
    let f = one_map(&|b| time_map(b, "Opa", None, &[(-1, &k1)]));
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::NegativeKeyFrame { frame: -1 }
    );
    let f = one_layer(8, |b| {
        b.i32(2);
        time_map(b, "Opa", None, &[(1, &k1)]);
        time_map(b, "Opa", None, &[(2, &k2)]);
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::DuplicateMap { kind: KeyKind::Opa }
    );
    // Object tree: type 2, a layer with children, two top nodes.
    let f = with_objects(|b| {
        b.i32(1);
        b.block(b"ObjNode_", |b| {
            b.i32(2).i32(0).i32(3);
        });
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::InvalidValue {
            field: "object type",
            value: 2,
            ..
        }
    ));
    let f = with_objects(|b| {
        b.i32(1);
        obj_node(b, false, 1, 3, "l", [true; 3], [0; 4], |b| {
            b.i32(0);
        });
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::LayerWithChildren { count: 1 }
    );
    let f = with_objects(|b| {
        b.i32(2);
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::InvalidValue {
            field: "top node count",
            value: 2,
            ..
        }
    ));
    // A string without its NUL before the block ends.
    let f = with_objects(|b| {
        b.i32(1);
        b.block(b"ObjNode_", |b| {
            b.i32(0).i32(0).i32(3);
            b.block(b"LayerNd_", |b| {
                b.raw(b"abcd");
            });
        });
    });
    assert_eq!(
        read_err(&f).kind,
        AnieErrorKind::UnterminatedString { what: "node name" }
    );
}

#[test]
fn id_errors_name_the_id_and_the_referrer() {
    // FFD keys 41 (frame 1) and 42 (frame 2); the image key (43) lists `image_children`; FFD
    // 41 lists `ffd_children`.
    let project = |ffd_children: &'static [i32], image_children: &'static [i32]| {
        one_layer(8, move |b| {
            b.i32(2);
            time_map(
                b,
                "FFD",
                None,
                &[
                    (1, &move |b| {
                        b.i32(41).linear().i32(0);
                        b.i32(ffd_children.len() as i32).i32s(ffd_children);
                    }),
                    (2, &|b| {
                        b.i32(42).linear().i32(0).i32(1).i32(41);
                    }),
                ],
            );
            image_map(b, 43, 2, image_children);
        })
    };
    // Key 42 lists 41; 41 lists 42: a cycle.
    let err = read_err(&project(&[42], &[]));
    assert!(
        matches!(
            err.kind,
            AnieErrorKind::IdCycle {
                referrer: "key child",
                ..
            }
        ),
        "{err}"
    );
    // A key listing itself.
    let err = read_err(&project(&[41], &[]));
    assert_eq!(
        err.kind,
        AnieErrorKind::SelfReference {
            id: 41,
            referrer: "key child"
        }
    );
    assert!(err.to_string().contains("FFD key at frame 1"), "{err}");
    // 41 is the child of both 42 and the image key.
    assert_eq!(
        read_err(&project(&[], &[41])).kind,
        AnieErrorKind::TwoParents { id: 41 }
    );
    // An unresolved ID: the error names it, the referrer, the node and the key.
    let err = read_err(&project(&[], &[999]));
    assert_eq!(
        err.kind,
        AnieErrorKind::UnresolvedId {
            id: 999,
            referrer: "key child"
        }
    );
    assert_eq!(err.location.node, Some((1, "layer".to_owned())), "{err}");
    assert_eq!(
        (err.location.map, err.location.key),
        (Some(KeyKind::Image), Some(-1))
    );
    assert!(
        err.to_string()
            .contains("key child refers to ID 999, which nothing in the file binds"),
        "{err}"
    );
    // ID 0 as a child; a child that is a resource node (ID 2).
    assert_eq!(
        read_err(&project(&[], &[0])).kind,
        AnieErrorKind::NullReference {
            referrer: "key child"
        }
    );
    assert_eq!(
        read_err(&project(&[], &[2])).kind,
        AnieErrorKind::WrongIdKind {
            id: 2,
            referrer: "key child",
            expected: "time key",
            found: "resource node"
        }
    );
    // The image key's resource is an object node.
    let f = one_layer(8, |b| {
        b.i32(1);
        image_map(b, 43, 3, &[]);
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::WrongIdKind {
            id: 3,
            expected: "resource node",
            found: "object node",
            ..
        }
    ));
    // Bind IDs: a duplicate (the layer's ID 4 again), zero, negative.
    for (id, kind) in [
        (
            4,
            AnieErrorKind::DuplicateId {
                id: 4,
                first_offset: 0,
            },
        ),
        (0, AnieErrorKind::BadBindId { id: 0 }),
        (-7, AnieErrorKind::BadBindId { id: -7 }),
    ] {
        let f = one_layer(8, |b| {
            b.i32(1);
            image_map(b, id, 2, &[]);
        });
        let err = read_err(&f);
        match (err.kind, kind) {
            (
                AnieErrorKind::DuplicateId { id, first_offset },
                AnieErrorKind::DuplicateId { .. },
            ) => {
                assert_eq!(id, 4);
                assert_eq!(
                    i32::from_le_bytes(f[first_offset as usize..][..4].try_into().unwrap()),
                    4
                );
            }
            (got, want) => assert_eq!(got, want),
        }
    }
}

/// A Bone key (ID 40) with one root bone (ID 41) whose pose key (ID 50, frame 0) has one bone
/// (ID 51) with origin `origin`; `binding` lists the bone's binding nodes.
fn bone_project(origin: i32, binding: &'static [i32]) -> Vec<u8> {
    one_layer(8, move |b| {
        b.i32(2);
        time_map(
            b,
            "Bone",
            None,
            &[(0, &move |b| {
                b.i32(40).i32(1);
                crate::anie_read::bone(b, 0, 41, 0, [0.0; 3], [0.0; 4], false, binding, [0.0; 4]);
                b.i32(4).i32(0).i32(0).i32(1).i32(50);
            })],
        );
        time_map(
            b,
            "Pose",
            None,
            &[(0, &move |b| {
                b.i32(50).linear().i32(1);
                crate::anie_read::bone(b, 0, 51, origin, [0.0; 3], [0.0; 4], false, &[], [0.0; 4]);
                b.i32(0);
            })],
        );
    })
}

#[test]
fn bone_reference_errors() {
    assert!(AnieFile::read(&bone_project(41, &[3])).is_ok());
    assert_eq!(
        read_err(&bone_project(51, &[])).kind,
        AnieErrorKind::SelfReference {
            id: 51,
            referrer: "pose bone origin"
        }
    );
    assert_eq!(
        read_err(&bone_project(4, &[])).kind,
        AnieErrorKind::WrongIdKind {
            id: 4,
            referrer: "pose bone origin",
            expected: "bone",
            found: "object node"
        }
    );
    let err = read_err(&bone_project(41, &[77]));
    assert_eq!(
        err.kind,
        AnieErrorKind::UnresolvedId {
            id: 77,
            referrer: "bone binding node"
        }
    );
    assert_eq!(err.location.bone, Some(0));
    assert_eq!(
        read_err(&bone_project(41, &[41])).kind,
        AnieErrorKind::WrongIdKind {
            id: 41,
            referrer: "bone binding node",
            expected: "object node",
            found: "bone"
        }
    );
}

#[test]
fn a_bone_origin_cycle_is_an_error() {
    // Two pose keys whose bones point at each other.
    let f = one_layer(8, |b| {
        b.i32(1);
        time_map(
            b,
            "Pose",
            None,
            &[
                (0, &|b| {
                    b.i32(50).linear().i32(1);
                    crate::anie_read::bone(b, 0, 51, 61, [0.0; 3], [0.0; 4], false, &[], [0.0; 4]);
                    b.i32(0);
                }),
                (5, &|b| {
                    b.i32(60).linear().i32(1);
                    crate::anie_read::bone(b, 0, 61, 51, [0.0; 3], [0.0; 4], false, &[], [0.0; 4]);
                    b.i32(0);
                }),
            ],
        );
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::IdCycle {
            referrer: "pose bone origin",
            ..
        }
    ));
}

/// An object tree of `depth` folders, each the only child of the one before.
fn nested_folders(depth: usize) -> Vec<u8> {
    with_objects(|b| {
        b.i32(1);
        for i in 0..depth {
            let children = i32::from(i + 1 < depth);
            obj_node(
                b,
                true,
                children,
                10 + i as i32,
                "f",
                [true, false, false],
                [0; 4],
                |b| {
                    b.i32(0);
                },
            );
        }
    })
}

/// A bone key whose bones form a chain `depth` deep.
fn nested_bones(depth: usize) -> Vec<u8> {
    one_layer(8, |b| {
        b.i32(1);
        time_map(
            b,
            "Bone",
            None,
            &[(0, &|b| {
                b.i32(40).i32(1);
                for i in 0..depth {
                    let children = i32::from(i + 1 < depth);
                    crate::anie_read::bone(
                        b,
                        children,
                        100 + i as i32,
                        0,
                        [0.0; 3],
                        [0.0; 4],
                        false,
                        &[],
                        [0.0; 4],
                    );
                }
                b.i32(0).i32(0).i32(0).i32(0);
            })],
        );
    })
}

#[test]
fn nesting_deeper_than_256_is_an_error() {
    let p = AnieFile::read(&nested_folders(MAX_TREE_DEPTH))
        .unwrap()
        .file;
    assert_eq!(p.objects.len(), 256);
    assert_eq!(p.objects[255].parent, Some(254));
    assert!(matches!(
        read_err(&nested_folders(MAX_TREE_DEPTH + 1)).kind,
        AnieErrorKind::TreeTooDeep { max: 256 }
    ));
    let p = AnieFile::read(&nested_bones(MAX_TREE_DEPTH)).unwrap().file;
    assert_eq!(p.objects[1].timeline.bones.keys[0].value.bones.len(), 256);
    // Our own output of a 256-deep tree reads back.
    check_anie(&nested_bones(MAX_TREE_DEPTH));
    check_anie(&nested_folders(MAX_TREE_DEPTH));
    let err = read_err(&nested_bones(MAX_TREE_DEPTH + 1));
    assert!(matches!(err.kind, AnieErrorKind::TreeTooDeep { max: 256 }));
    // The location is the last bone read: #255, the deepest allowed.
    assert_eq!(err.location.bone, Some(255));
    // A resource tree 300 deep.
    let mut b = Anie::new(8);
    b.header().glbl(1, 1, 1, 1, false);
    b.block(b"Resource", |b| {
        b.i32(1).qstring("x.psd");
        for i in 0..300 {
            res_node(b, "n", 1, 1 + i, false, [0; 4], b"norm", |b| {
                b.u32(0).u32(0).u32(0);
            });
        }
    });
    assert!(matches!(
        read_err(&b.done()).kind,
        AnieErrorKind::TreeTooDeep { .. }
    ));
    // Children that the file does not hold: a count past the bytes left.
    let f = with_objects(|b| {
        b.i32(1);
        obj_node(b, true, 1_000_000, 3, "f", [true; 3], [0; 4], |b| {
            b.i32(0);
        });
    });
    assert!(matches!(
        read_err(&f).kind,
        AnieErrorKind::Bounds(Bounds::CountTooLarge {
            what: "object node",
            count: 1_000_000,
            ..
        })
    ));
}

#[test]
fn fuzz_regressions_and_seeds_pass_the_oracle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["tests/fuzz_regressions/anie", "fuzz/seeds/anie_read"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            check_anie(&std::fs::read(&path).unwrap());
            n += 1;
        }
    }
    assert!(n >= 5, "seeds in fuzz/seeds/anie_read");
}

/// Writes the hand-assembled fixtures into the fuzzer's seed folder (run by hand:
/// `cargo test --no-default-features write_anie_fuzz_seeds -- --ignored`).
#[test]
#[ignore]
fn write_anie_fuzz_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/anie_read");
    std::fs::create_dir_all(&dir).unwrap();
    for name in crate::anie_read::REFERENCE_FILES {
        std::fs::write(dir.join(name), fixture(name)).unwrap();
    }
    for minor in 4..=8 {
        std::fs::write(
            dir.join(format!("every_key_type_v{minor}")),
            every_key_type(minor),
        )
        .unwrap();
    }
    std::fs::write(dir.join("bone_binding"), bone_project(41, &[3])).unwrap();
    std::fs::write(dir.join("nested_folders_8"), nested_folders(8)).unwrap();
}
