//! Writing `.anie` projects: byte-for-byte round trips of AnimeEffects' own files, round trips
//! in every written version, AnimeEffects' ID order, and every refusal of the writer.

use crate::anie_read::{REFERENCE_FILES, every_key_type, fixture, read_ok};
use glam::{Vec2, Vec3};
use rigplay::formats::anie::*;

const WRITTEN: [AnieVersion; 3] = [AnieVersion::V0_8, AnieVersion::V0_7, AnieVersion::V0_5];

fn write(p: &AnieFile, v: AnieVersion) -> Vec<u8> {
    p.write(v).unwrap_or_else(|e| panic!("writes {v}: {e}"))
}

fn write_err(p: &AnieFile, v: AnieVersion) -> AnieWriteError {
    let e = p.write(v).expect_err("must not write");
    assert!(!e.to_string().is_empty());
    e
}

/// read(write(p, v)) == p, without warnings, and writing that gives the same bytes.
fn round_trip(p: &AnieFile, v: AnieVersion) {
    let bytes = write(p, v);
    let back = read_ok(&bytes);
    assert!(back.warnings.is_empty(), "{v}: {:?}", back.warnings);
    assert_eq!(back.version, v);
    assert!(back.file == *p, "read(write(p, {v})) == p");
    assert_eq!(write(&back.file, v), bytes, "write {v} is a fixed point");
}

#[test]
fn the_reference_projects_write_back_byte_for_byte() {
    // Same layout, same IDs (AnimeEffects' first-appearance order), same PackBits choices.
    for name in REFERENCE_FILES {
        let bytes = fixture(name);
        let p = read_ok(&bytes).file;
        let out = write(&p, AnieVersion::default());
        assert!(
            out == bytes,
            "{name}: {} bytes written, {} read",
            out.len(),
            bytes.len()
        );
    }
}

#[test]
fn projects_round_trip_in_every_version_that_can_hold_them() {
    for name in REFERENCE_FILES {
        let p = read_ok(&fixture(name)).file;
        for v in WRITTEN {
            round_trip(&p, v);
        }
    }
    for minor in 4..=8 {
        let p = read_ok(&every_key_type(minor)).file;
        round_trip(&p, AnieVersion::V0_8);
        // 0.8's fixture has an edited bezier; 0.6/0.7's have HSV keys, which 0.5 lacks.
        match p.write(AnieVersion::V0_7) {
            Ok(_) => round_trip(&p, AnieVersion::V0_7),
            Err(e) => assert_eq!(minor, 8, "{e}"),
        }
        match p.write(AnieVersion::V0_5) {
            Ok(_) => round_trip(&p, AnieVersion::V0_5),
            Err(e) => assert!(minor >= 6, "{e}"),
        }
    }
}

#[test]
fn version_dependent_fields_survive_their_version() {
    let p7 = read_ok(&every_key_type(7)).file;
    let (v8, v7) = (write(&p7, AnieVersion::V0_8), write(&p7, AnieVersion::V0_7));
    // 16 easings of 28 bytes instead of 12.
    assert_eq!(v8.len() - v7.len(), 16 * 16);
    let hsv = |p: &AnieFile| p.objects[1].timeline.hsvs.keys[0].value;
    assert!(
        hsv(&read_ok(&v7).file).absolute,
        "0.7 keeps the 4th HSV int"
    );
    // 0.5 cannot hold HSV keys: the writer says so rather than dropping them.
    let e = write_err(&p7, AnieVersion::V0_5);
    assert_eq!(
        e.kind,
        AnieWriteErrorKind::NeedsVersion {
            what: "an HSV key",
            needed: AnieVersion::V0_6
        }
    );
    assert_eq!(e.location.node, Some((1, "eye layer".to_owned())));
    let mut p5 = p7.clone();
    p5.objects[1].timeline.hsvs = KeyMap::default();
    let v5 = write(&p5, AnieVersion::V0_5);
    // Without the HSV map (16 + "HSV" 4 + 4 + 4 + frame 4 + ID 4 + easing 12 + 4 ints 16
    // + childCount 4 = 68 bytes), 0.5 is 0.7's size: the vertexRect is still there.
    assert_eq!(v7.len() - v5.len(), 68);
    assert_eq!(read_ok(&v5).file, p5);
    // 0.8's bezier: an edited curve or a Custom easing need 0.8.
    let p8 = read_ok(&every_key_type(8)).file;
    assert_eq!(
        write_err(&p8, AnieVersion::V0_7).kind,
        AnieWriteErrorKind::NeedsVersion {
            what: "an easing with bezier control points other than (1, 0, 0, 1)",
            needed: AnieVersion::V0_8
        }
    );
    let mut custom = p5.clone();
    custom.objects[1].timeline.moves.keys[1].value.easing.kind = EasingKind::Custom;
    assert!(matches!(
        write_err(&custom, AnieVersion::V0_7).kind,
        AnieWriteErrorKind::NeedsVersion {
            needed: AnieVersion::V0_8,
            ..
        }
    ));
    round_trip(&custom, AnieVersion::V0_8);
    for v in [AnieVersion::V0_4, AnieVersion::V0_6] {
        assert_eq!(
            write_err(&p5, v).kind,
            AnieWriteErrorKind::UnsupportedVersion { version: v }
        );
    }
}

/// A 2×2 RGBA image.
fn image() -> Image {
    Image {
        width: 2,
        height: 2,
        rgba: (0..16).collect(),
    }
}

/// The quad grid mesh of a 2×2 image (§3 `createQuadMesh`).
fn quad() -> GridMesh {
    let pos = [(0., 0.), (2., 0.), (0., 2.), (2., 2.)];
    GridMesh {
        size: [2, 2],
        origin_offset: Vec2::new(-1.0, -1.0),
        cell_px: 16,
        indices: vec![0, 1, 2, 1, 3, 2],
        positions: pos.iter().map(|&(x, y)| Vec3::new(x, y, 0.0)).collect(),
        offsets: vec![Vec3::ZERO; 4],
        texcoords: pos.iter().map(|&(x, y)| Vec2::new(x, y)).collect(),
        normals: vec![Vec3::Z; 4],
        connections: vec![[-1; 6]; 4],
        vertex_rect: IRect {
            x: 0,
            y: 0,
            width: 2,
            height: 2,
        },
    }
}

/// A project built in code: a root folder (node 0) with a Bone key whose bone binds the layer
/// (node 1, later in the file), and the layer with an image key, an FFD key under it, and
/// two Move keys.
fn built_in_code() -> AnieFile {
    let res = ResourceTree {
        file_path: "a.psd".into(),
        nodes: vec![
            ResourceNode {
                identifier: "topnode".into(),
                children: vec![1],
                ..ResourceNode::default()
            },
            ResourceNode {
                identifier: "px".into(),
                is_layer: true,
                rect: IRect {
                    x: 0,
                    y: 0,
                    width: 2,
                    height: 2,
                },
                image: Some(image()),
                parent: Some(0),
                ..ResourceNode::default()
            },
        ],
    };
    let mut root = ObjectNode {
        kind: NodeKind::Folder,
        name: "root".into(),
        visible: true,
        children: vec![1],
        ..ObjectNode::default()
    };
    root.timeline.bones.keys.push(TimeKey::new(
        0,
        BoneKey {
            bones: vec![Bone {
                binding_nodes: vec![1],
                ..Bone::default()
            }],
            cache_owner: Some(0),
            ..BoneKey::default()
        },
    ));
    let mut layer = ObjectNode {
        kind: NodeKind::Layer,
        name: "layer".into(),
        visible: true,
        parent: Some(0),
        ..ObjectNode::default()
    };
    let tl = &mut layer.timeline;
    tl.moves.keys = vec![
        TimeKey::new(0, MoveKey::default()),
        TimeKey::new(
            10,
            MoveKey {
                pos: Vec2::new(5.0, -3.0),
                spline: Spline::CatmullRom,
                ..MoveKey::default()
            },
        ),
    ];
    tl.ffds.keys.push(TimeKey::new(
        4,
        FfdKey {
            easing: Easing::default(),
            positions: quad().positions,
        },
    ));
    let mut image_key = TimeKey::new(
        -1,
        ImageKey {
            resource: Some(ResourceRef { tree: 0, node: 1 }),
            image_offset: Vec2::new(-1.0, -1.0),
            mesh: quad(),
            ..ImageKey::default()
        },
    );
    image_key.children.push(KeyRef {
        node: 1,
        kind: KeyKind::Ffd,
        slot: KeySlot::At(0),
    });
    tl.images.default = Some(image_key);
    AnieFile {
        canvas_width: 32,
        canvas_height: 32,
        max_frame: 20,
        fps: 24,
        looping: true,
        resources: vec![res],
        objects: vec![root, layer],
    }
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_project_built_in_code_writes_with_animeeffects_id_order() {
    let p = built_in_code();
    for v in WRITTEN {
        round_trip(&p, v);
    }
    let b = write(&p, AnieVersion::V0_8);
    // IDs go 1, 2, 3… in order of first appearance (§1.6): resource nodes 1 and 2 (bind ID
    // after the identifier and child count: head 16 + "topnode" 8 + 4), the root folder 3
    // (after type and child count), its Bone key 4, its bone 5; the bone's binding list
    // refers to the layer before the layer's own block, so the layer is 6; the root's
    // cache owner is 3 again.
    let res = find_all(&b, b"ResNode_");
    assert_eq!(i32_at(&b, res[0] + 16 + 8 + 4), 1);
    assert_eq!(i32_at(&b, res[1] + 16 + 4 + 4), 2);
    let obj = find_all(&b, b"ObjNode_");
    assert_eq!(i32_at(&b, obj[0] + 16 + 8), 3);
    assert_eq!(i32_at(&b, obj[1] + 16 + 8), 6);
    // Layer keys: Move 0 → 7, Move 10 → 8, FFD 4 → 9, image default → 10, whose resource
    // is 2 and whose child is 9.
    let maps = find_all(&b, b"TimeMap_");
    let image_map = *maps.last().unwrap();
    // head 16, "Image" 8, hasDefault 4 → ID; easing 28 → resource ID.
    assert_eq!(i32_at(&b, image_map + 16 + 8 + 4), 10);
    assert_eq!(i32_at(&b, image_map + 16 + 8 + 4 + 4 + 28), 2);
    // blend 4 and offset 8 follow, then the GridMesh block: signature 8, length 8, body.
    let grid = image_map + 16 + 8 + 4 + 4 + 28 + 4 + 4 + 8;
    assert_eq!(&b[grid..grid + 8], b"GridMesh");
    let grid_len = u64::from_le_bytes(b[grid + 8..grid + 16].try_into().unwrap()) as usize;
    let after_grid = grid + 16 + grid_len;
    assert_eq!(
        &b[after_grid..after_grid + 8],
        &[1, 0, 0, 0, 9, 0, 0, 0],
        "childCount 1, child 9"
    );
}

#[test]
fn images_are_packbits_per_channel_row() {
    let p = built_in_code();
    let b = write(&p, AnieVersion::V0_8);
    // Image 2×2 with bytes 0..16: each channel row is 2 different bytes, a literal run
    // [1, a, b]. Row 0 R = (0, 4), G = (1, 5), …; total = 8 × (4 + 3) = 56, no padding.
    let res = find_all(&b, b"ResNode_")[1];
    let img = res + 16 + 4 + 4 + 4 + 4 + 16 + 4;
    assert_eq!(&b[img..img + 12], &[1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(
        u64::from_le_bytes(b[img + 12..img + 20].try_into().unwrap()),
        56
    );
    assert_eq!(&b[img + 20..img + 27], &[3, 0, 0, 0, 1, 0, 4]);
    assert_eq!(&b[img + 27..img + 34], &[3, 0, 0, 0, 1, 1, 5]);
    assert_eq!(&b[img + 20 + 49..img + 20 + 56], &[3, 0, 0, 0, 1, 11, 15]);
}

#[test]
fn trees_must_be_in_pre_order() {
    let bad_tree = |p: &AnieFile| match write_err(p, AnieVersion::V0_8).kind {
        AnieWriteErrorKind::BadTree { tree, index, .. } => (tree, index),
        k => panic!("{k}"),
    };
    // The layer lists no parent.
    let mut p = built_in_code();
    p.objects[1].parent = None;
    assert_eq!(bad_tree(&p), ("object node", 1));
    // The root lists a child that is not next in pre-order.
    let mut p = built_in_code();
    p.objects[0].children = vec![1, 1];
    assert_eq!(bad_tree(&p), ("object node", 1));
    // A layer with children.
    let mut p = built_in_code();
    p.objects[0].kind = NodeKind::Layer;
    assert_eq!(bad_tree(&p), ("object node", 0));
    // A resource tree without nodes; a resource child out of range.
    let mut p = built_in_code();
    p.resources[0].nodes.clear();
    assert_eq!(bad_tree(&p), ("resource tree", 0));
    let mut p = built_in_code();
    p.resources[0].nodes[0].children = vec![5];
    assert_eq!(bad_tree(&p), ("resource node", 5));
    // Bones: a child that names another parent.
    let mut p = built_in_code();
    let bones = &mut p.objects[0].timeline.bones.keys[0].value.bones;
    bones.push(Bone {
        parent: None,
        ..Bone::default()
    });
    bones[0].children = vec![1];
    assert_eq!(bad_tree(&p), ("bone", 1));
    // Two top bones are fine (roots are the bones without a parent).
    let mut p = built_in_code();
    p.objects[0].timeline.bones.keys[0]
        .value
        .bones
        .push(Bone::default());
    round_trip(&p, AnieVersion::V0_8);
    // 257 levels.
    let mut p = built_in_code();
    p.objects.truncate(1);
    p.objects[0].children.clear();
    p.objects[0].timeline = Timeline::default();
    for i in 1..=MAX_TREE_DEPTH {
        p.objects[i - 1].children = vec![i];
        p.objects.push(ObjectNode {
            parent: Some(i - 1),
            ..ObjectNode::default()
        });
    }
    assert_eq!(
        write_err(&p, AnieVersion::V0_8).kind,
        AnieWriteErrorKind::TreeTooDeep {
            tree: "object node",
            max: 256
        }
    );
    p.objects.pop();
    p.objects[MAX_TREE_DEPTH - 1].children.clear();
    round_trip(&p, AnieVersion::V0_8);
}

#[test]
fn references_must_point_at_something_without_cycles() {
    let ffd = KeyRef {
        node: 1,
        kind: KeyKind::Ffd,
        slot: KeySlot::At(0),
    };
    let image = KeyRef {
        node: 1,
        kind: KeyKind::Image,
        slot: KeySlot::Default,
    };
    let kind = |p: &AnieFile| write_err(p, AnieVersion::V0_8).kind;
    let mut p = built_in_code();
    p.objects[1]
        .timeline
        .images
        .default
        .as_mut()
        .unwrap()
        .children[0]
        .slot = KeySlot::At(3);
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::DanglingReference { what: "key child" }
    );
    let mut p = built_in_code();
    p.objects[1]
        .timeline
        .images
        .default
        .as_mut()
        .unwrap()
        .children[0] = image;
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::SelfReference { what: "key child" }
    );
    let mut p = built_in_code();
    p.objects[1].timeline.ffds.keys[0].children.push(image);
    assert_eq!(kind(&p), AnieWriteErrorKind::Cycle { what: "key child" });
    let mut p = built_in_code();
    p.objects[1].timeline.moves.keys[0].children.push(ffd);
    assert_eq!(kind(&p), AnieWriteErrorKind::TwoParents);
    // Image resource, bone origin, binding node.
    let mut p = built_in_code();
    p.objects[1]
        .timeline
        .images
        .default
        .as_mut()
        .unwrap()
        .value
        .resource = Some(ResourceRef { tree: 0, node: 9 });
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::DanglingReference {
            what: "image key resource"
        }
    );
    let bone_key = KeyRef {
        node: 0,
        kind: KeyKind::Bone,
        slot: KeySlot::At(0),
    };
    let mut p = built_in_code();
    p.objects[0].timeline.bones.keys[0].value.bones[0].origin = Some(BoneRef {
        key: bone_key,
        bone: 0,
    });
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::SelfReference {
            what: "bone origin"
        }
    );
    let mut p = built_in_code();
    p.objects[0].timeline.bones.keys[0].value.bones[0].origin = Some(BoneRef {
        key: bone_key,
        bone: 1,
    });
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::DanglingReference {
            what: "bone origin"
        }
    );
    // Two pose keys whose bones name each other.
    let mut p = built_in_code();
    let pose = |frame: i32, other: usize| {
        TimeKey::new(
            frame,
            PoseKey {
                bones: vec![Bone {
                    origin: Some(BoneRef {
                        key: KeyRef {
                            node: 0,
                            kind: KeyKind::Pose,
                            slot: KeySlot::At(other),
                        },
                        bone: 0,
                    }),
                    ..Bone::default()
                }],
                ..PoseKey::default()
            },
        )
    };
    p.objects[0].timeline.poses.keys = vec![pose(0, 1), pose(5, 0)];
    assert_eq!(
        kind(&p),
        AnieWriteErrorKind::Cycle {
            what: "bone origin"
        }
    );
    let mut p = built_in_code();
    p.objects[0].timeline.bones.keys[0].value.bones[0].binding_nodes = vec![7];
    let e = write_err(&p, AnieVersion::V0_8);
    assert_eq!(
        e.kind,
        AnieWriteErrorKind::IndexOutOfRange {
            what: "bone binding node",
            index: 7,
            count: 2
        }
    );
    assert!(
        e.to_string()
            .contains("node #0 \"root\", Bone key at frame 0, bone #0"),
        "{e}"
    );
}

#[test]
fn values_the_reader_would_change_or_refuse_are_errors() {
    let kind = |f: &dyn Fn(&mut AnieFile)| {
        let mut p = built_in_code();
        f(&mut p);
        write_err(&p, AnieVersion::V0_8).kind
    };
    assert!(matches!(
        kind(&|p| p.objects[1].timeline.opacities.keys.push(TimeKey::new(
            0,
            OpaKey {
                opacity: 2.0,
                ..OpaKey::default()
            }
        ))),
        AnieWriteErrorKind::ValueOutOfRange {
            field: "opacity",
            value: 2.0,
            ..
        }
    ));
    assert!(matches!(
        kind(&|p| p.objects[1].timeline.moves.keys[0].value.pos.x = f32::NAN),
        AnieWriteErrorKind::ValueOutOfRange {
            field: "move position",
            ..
        }
    ));
    assert!(matches!(
        kind(&|p| p.objects[1].timeline.moves.keys[0].value.easing.weight = 1.5),
        AnieWriteErrorKind::ValueOutOfRange {
            field: "easing weight",
            ..
        }
    ));
    assert!(matches!(
        kind(&|p| p.objects[1].timeline.scales.keys.push(TimeKey::new(
            0,
            ScaleKey {
                scale: Vec2::new(1e5, 1.0),
                ..ScaleKey::default()
            }
        ))),
        AnieWriteErrorKind::ValueOutOfRange { field: "scale", .. }
    ));
    assert!(matches!(
        kind(&|p| p.objects[1].timeline.ffds.keys[0].value.positions[0].z = f32::INFINITY),
        AnieWriteErrorKind::ValueOutOfRange {
            field: "FFD position",
            ..
        }
    ));
    assert_eq!(
        kind(&|p| p.objects[1].name = "a\0b".into()),
        AnieWriteErrorKind::NulInString {
            what: "node name",
            text: "a\0b".into()
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1].timeline.moves.keys[1].frame = 0),
        AnieWriteErrorKind::BadKeyFrame {
            frame: 0,
            problem: "keys must be in strictly ascending frame order"
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1].timeline.moves.keys[0].frame = -2),
        AnieWriteErrorKind::BadKeyFrame {
            frame: -2,
            problem: "keys are at frames ≥ 0"
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1].timeline.images.default.as_mut().unwrap().frame = 0),
        AnieWriteErrorKind::BadKeyFrame {
            frame: 0,
            problem: "a default key's frame is -1"
        }
    );
    assert_eq!(
        kind(&|p| p.resources[0].nodes[1]
            .image
            .as_mut()
            .unwrap()
            .rgba
            .pop()
            .map(drop)
            .unwrap()),
        AnieWriteErrorKind::ImageBufferSize {
            width: 2,
            height: 2,
            len: 15
        }
    );
    assert_eq!(
        kind(&|p| p.resources[0].nodes[1].image.as_mut().unwrap().width = 20_000),
        AnieWriteErrorKind::ImageTooLarge {
            width: 20_000,
            height: 2,
            max: 16384
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1]
            .timeline
            .images
            .default
            .as_mut()
            .unwrap()
            .value
            .mesh
            .normals
            .pop()
            .map(drop)
            .unwrap()),
        AnieWriteErrorKind::MeshArrays {
            what: "grid mesh normals",
            len: 3,
            expected: 4
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1]
            .timeline
            .images
            .default
            .as_mut()
            .unwrap()
            .value
            .mesh
            .indices[5] = 4),
        AnieWriteErrorKind::IndexOutOfRange {
            what: "grid mesh index",
            index: 4,
            count: 4
        }
    );
    assert_eq!(
        kind(&|p| p.objects[1].timeline.meshes.keys.push(TimeKey::new(
            3,
            MeshKey {
                vertices: vec![Vec2::ZERO; 2],
                edges: vec![[0, 2]],
                ..MeshKey::default()
            }
        ))),
        AnieWriteErrorKind::IndexOutOfRange {
            what: "mesh edge vertex",
            index: 2,
            count: 2
        }
    );
    assert_eq!(
        kind(&|p| p.objects[0].timeline.bones.keys[0]
            .value
            .caches
            .push(BoneCache {
                indices: vec![[0; 8]; 2],
                weights: vec![[0.0; 8]; 1],
                ..BoneCache::default()
            })),
        AnieWriteErrorKind::MeshArrays {
            what: "influence weights",
            len: 1,
            expected: 2
        }
    );
}
