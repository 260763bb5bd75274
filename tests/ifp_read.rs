//! Reading hand-assembled IFP files of every layout; expected values worked out from the spec.

use crate::bytes::{Bytes, anim_payload};
pub use crate::ifp_fixtures::{anp3_with_types_1_to_4, anpk_with_44_byte_anim};
use rigplay::formats::ifp::*;
use rigplay::skeleton::bone_key;

/// ANPK with a 48-byte ANIM (links 7 and 9, no bone tag) carrying KRTS keys, then a sequence
/// with 0 frames (no KR header at all), then one more KR00 sequence.
pub fn anpk_with_48_byte_anim() -> Vec<u8> {
    let mut b = Bytes::new();
    b.anpk("car", "door_open", 3, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Swaist", 1, &[7, 9]));
            b.section(b"KRTS", |b| {
                // q, t, s, time
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 2.0, 2.0, 2.0, 0.25]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Smid", 0, &[0, 0]));
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Shead", 1, &[0, 0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.6, 0.0, 0.8, 0.5]);
            });
        });
    });
    b.done()
}

fn read_ok(bytes: &[u8]) -> IfpRead {
    IfpFile::read(bytes).unwrap_or_else(|e| panic!("fixture must read: {e}"))
}

#[test]
fn anpk_44_byte_anim_has_bone_tag_and_conjugated_quaternions() {
    let r = read_ok(&anpk_with_44_byte_anim());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let p = &r.file;
    assert_eq!(p.version, IfpVersion::Anpk);
    assert_eq!(p.name(), "ped");
    let clip = p.clip("WALK_CIVI").expect("case-insensitive lookup");
    assert_eq!(clip.name, "walk_civi");
    let pelvis = &clip.sequences[0];
    assert_eq!(pelvis.name, " Pelvis", "leading space kept as data");
    assert_eq!(pelvis.bone_id, 1);
    assert_eq!(pelvis.anim.layout, AnimLayout::BoneTag);
    assert!(pelvis.has_translation && !pelvis.has_scale);
    // Stored (0.5, -0.5, 0.5, 0.5) conjugated: (-0.5, 0.5, -0.5, 0.5).
    assert_eq!(pelvis.keys[0].rotation, [-0.5, 0.5, -0.5, 0.5]);
    assert_eq!(pelvis.keys[0].translation, [0.0, 0.0, 1.0]);
    assert_eq!(pelvis.keys[1].translation, [0.0, 2.0, 1.0]);
    assert_eq!(pelvis.keys[1].time, 1.0);
    let thigh = &clip.sequences[1];
    assert_eq!((thigh.bone_id, thigh.has_translation), (41, false));
    assert_eq!(thigh.keys[0].rotation, [-0.1, -0.2, -0.3, 0.9]);
    assert_eq!(clip.duration(), 1.0);
}

#[test]
fn anpk_48_byte_anim_matches_by_name_and_keeps_scale_and_zero_frame_sequences() {
    let r = read_ok(&anpk_with_48_byte_anim());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let clip = &r.file.blocks[0].clips[0];
    assert_eq!(clip.sequences.len(), 3);
    let waist = &clip.sequences[0];
    assert_eq!(waist.bone_id, -1, "48-byte ANIM has no bone tag");
    assert_eq!(waist.anim.layout, AnimLayout::Links([7, 9]));
    assert!(waist.has_translation && waist.has_scale);
    assert_eq!(waist.keys[0].translation, [1.0, 2.0, 3.0]);
    assert_eq!(waist.keys[0].scale, [2.0, 2.0, 2.0]);
    assert_eq!(waist.keys[0].time, 0.25);
    // Identity stays identity under conjugation (the -0.0 signs compare equal).
    assert_eq!(waist.keys[0].rotation, [0.0, 0.0, 0.0, 1.0]);
    let mid = &clip.sequences[1];
    assert_eq!((mid.name.as_str(), mid.keys.len()), ("Smid", 0));
    let head = &clip.sequences[2];
    assert_eq!(head.name, "Shead");
    assert_eq!(head.keys[0].rotation, [-0.0, -0.6, -0.0, 0.8]);
    assert_eq!(head.keys[0].time, 0.5);
}

#[test]
fn anlf_container_holds_several_anpk_blocks() {
    let mut b = Bytes::new();
    b.section(b"ANLF", |b| {
        b.u32(2);
    });
    b.raw(&anpk_with_44_byte_anim())
        .raw(&anpk_with_48_byte_anim());
    let r = read_ok(&b.done());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let p = &r.file;
    assert!(p.anlf);
    assert_eq!(
        p.blocks.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        ["ped", "car"]
    );
    assert_eq!(
        p.clips().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["walk_civi", "door_open"]
    );
}

#[test]
fn anp3_frame_types_1_to_4_decode_as_the_spec_says() {
    let r = read_ok(&anp3_with_types_1_to_4(None));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let p = &r.file;
    assert_eq!(p.version, IfpVersion::Anp3);
    assert_eq!(p.name(), "ped");
    let clip = &p.blocks[0].clips[0];
    assert_eq!(clip.name, "abseil", "junk after the NUL is ignored");
    assert_eq!(clip.flags, 1);
    let s = &clip.sequences;
    // Type 1: floats, no conjugation.
    assert_eq!(
        (s[0].bone_id, s[0].compressed, s[0].has_translation),
        (8, false, false)
    );
    assert_eq!(s[0].keys[0].rotation, [0.0, 0.0, 0.6, 0.8]);
    assert_eq!(s[0].keys[0].time, 0.5);
    // Type 2: time (1.0) precedes translation (1, 2, 3).
    assert_eq!(s[1].name, " Pelvis");
    assert_eq!((s[1].compressed, s[1].has_translation), (false, true));
    assert_eq!(s[1].keys[0].time, 1.0);
    assert_eq!(s[1].keys[0].translation, [1.0, 2.0, 3.0]);
    // Type 3: 2896 / 4096 = 0.70703125; 30 ticks / 60 = 0.5 s; bone id -1 = by name.
    assert_eq!(
        (s[2].bone_id, s[2].compressed, s[2].has_translation),
        (-1, true, false)
    );
    assert_eq!(s[2].keys[0].rotation, [0.0, 0.0, 0.70703125, 0.70703125]);
    assert_eq!(s[2].keys[1].rotation, [0.0, 0.0, -0.70703125, 0.70703125]);
    assert_eq!((s[2].keys[0].time, s[2].keys[1].time), (0.0, 0.5));
    // Type 4: 4096 / 4096 = 1; 60 / 60 = 1 s; (1024, -512, 2048) / 1024 = (1, -0.5, 2).
    assert_eq!((s[3].compressed, s[3].has_translation), (true, true));
    assert_eq!(s[3].keys[0].rotation, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(s[3].keys[0].time, 1.0);
    assert_eq!(s[3].keys[0].translation, [1.0, -0.5, 2.0]);
    assert_eq!(clip.duration(), 1.0);
}

#[test]
fn anp2_has_no_frame_data_size_or_flags() {
    let mut b = Bytes::new();
    b.sized(b"ANP2", |b| {
        b.fixed("misc", 24, &[]).u32(1);
        b.fixed("idle", 24, &[]).u32(1);
        b.fixed("Head", 24, &[]).u32(3).u32(1).i32(5);
        b.i16s(&[0, 4096, 0, 0, 0]);
    });
    let r = read_ok(&b.done());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.file.version, IfpVersion::Anp2);
    let seq = &r.file.blocks[0].clips[0].sequences[0];
    assert_eq!((seq.name.as_str(), seq.bone_id), ("Head", 5));
    assert_eq!(seq.keys[0].rotation, [0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn stale_trailing_bytes_are_a_warning_and_change_nothing() {
    let clean = read_ok(&anpk_with_44_byte_anim()).file;
    // Stale data: a whole extra animation after the declared end (as in a cuts.img ANPK).
    let mut b = Bytes::new();
    b.raw(&anpk_with_44_byte_anim());
    b.section(b"NAME", |b| {
        b.cstr("stale");
    });
    let stale = b.done();
    let r = read_ok(&stale);
    assert_eq!(r.file, clean);
    let w = &r.warnings[..];
    assert_eq!(w.len(), 1, "{w:?}");
    let end = anpk_with_44_byte_anim().len() as u64;
    assert_eq!(w[0].offset, end);
    assert_eq!(
        w[0].kind,
        IfpWarningKind::TrailingBytes {
            count: stale.len() as u64 - end,
            all_zero: false
        }
    );
    // IMG sector padding: zeros up to 2048.
    let mut padded = anp3_with_types_1_to_4(None);
    padded.resize(2048, 0);
    let r = read_ok(&padded);
    assert!(matches!(
        r.warnings[..],
        [IfpWarning {
            kind: IfpWarningKind::TrailingBytes { all_zero: true, .. },
            ..
        }]
    ));
}

#[test]
fn frame_data_size_too_small_is_checked_not_trusted() {
    let r = read_ok(&anp3_with_types_1_to_4(Some(60)));
    assert_eq!(r.file, read_ok(&anp3_with_types_1_to_4(None)).file);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert_eq!(
        r.warnings[0].kind,
        IfpWarningKind::FrameDataSizeMismatch {
            declared: 60,
            actual: 88
        }
    );
    assert_eq!(r.warnings[0].location.clip, Some((0, "abseil".to_string())));
    // 8 (ANP3 header) + 28 (package head) + 28 (anim name + count) = where frameDataSize sits.
    assert_eq!(r.warnings[0].offset, 64);
}

#[test]
fn empty_key_header_written_by_some_tools_is_skipped_by_cpan_size() {
    // A 0-frame bone followed by an empty "K000" header (size 0) inside its CPAN, then a
    // normal bone: the CPAN size says where the next one starts.
    let mut b = Bytes::new();
    b.anpk("x", "a", 2, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Smid", 0, &[0, 0]));
            b.section(b"K000", |_| {});
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Shead", 1, &[0, 0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
            });
        });
    });
    let r = read_ok(&b.done());
    let seqs = &r.file.blocks[0].clips[0].sequences;
    assert_eq!(seqs[1].name, "Shead");
    assert_eq!(seqs[1].keys.len(), 1);
    assert!(matches!(
        r.warnings[..],
        [IfpWarning {
            kind: IfpWarningKind::SectionSizeMismatch {
                section: "CPAN",
                resynchronised: true,
                ..
            },
            ..
        }]
    ));
}

#[test]
fn zeroed_markers_and_unknown_key_magic_are_tolerated() {
    let mut b = Bytes::new();
    b.anpk("x", "a", 1, |b| {
        b.section(b"\0\0\0\0", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Shead", 1, &[0, 0]));
            // Unknown magic, but 32 bytes for 1 frame can only be KRT0.
            b.section(b"KRXX", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 4.0, 5.0, 6.0, 0.0]);
            });
        });
    });
    let r = read_ok(&b.done());
    let seq = &r.file.blocks[0].clips[0].sequences[0];
    assert_eq!(seq.keys[0].translation, [4.0, 5.0, 6.0]);
    let kinds: Vec<_> = r.warnings.iter().map(|w| &w.kind).collect();
    assert!(
        matches!(
            kinds[0],
            IfpWarningKind::UnexpectedMarker {
                expected: "CPAN",
                ..
            }
        ),
        "{kinds:?}"
    );
    assert!(
        matches!(
            kinds[1],
            IfpWarningKind::KeyBlockInferred { layout: "KRT0", .. }
        ),
        "{kinds:?}"
    );
}

#[test]
fn names_are_cut_at_nul_and_first_key_times_are_kept() {
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("ped", 24, b"\xffjunk").u32(1);
        b.fixed("GunCrouchBwd", 24, b"XYZ").u32(1).u32(10).u32(1);
        b.fixed(" L Brow", 24, b"\x01\x02").u32(3).u32(1).i32(6);
        // First key at 58 ticks (0.9666... s), as in SA's GunCrouchBwd face bones.
        b.i16s(&[0, 0, 0, 4096, 58]);
    });
    let r = read_ok(&b.done());
    let p = &r.file;
    assert_eq!(p.name(), "ped");
    let clip = &p.blocks[0].clips[0];
    assert_eq!(clip.name, "GunCrouchBwd");
    assert_eq!(clip.sequences[0].name, " L Brow");
    assert_eq!(clip.sequences[0].keys[0].time, 58.0 / 60.0);
    assert_eq!(bone_key(&clip.sequences[0].name), "lbrow");
}

#[test]
fn to_clip_normalises_removes_flips_and_sorts() {
    let r = read_ok(&anp3_with_types_1_to_4(None));
    let clip = r.file.blocks[0].clips[0].to_clip();
    assert_eq!(clip.name, "abseil");
    assert_eq!(clip.tracks().len(), 4);
    assert_eq!(clip.duration(), 1.0);
    let fingers = &clip.tracks()[2];
    assert_eq!(fingers.bone.id, None);
    let q = clip.rotation_values(fingers.rotation.unwrap());
    // (0, 0, ±0.70703125, 0.70703125) normalised: components ±1/√2. The two keys' dot product
    // is -0.5 + 0.5 = 0, not negative, so the second keeps its sign.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!((q[0].z - h).abs() < 1e-6 && (q[0].w - h).abs() < 1e-6);
    assert!((q[1].z + h).abs() < 1e-6 && (q[1].w - h).abs() < 1e-6);
    let root = &clip.tracks()[3];
    assert_eq!(root.bone.id, Some(0));
    assert_eq!(
        clip.vector_values(root.translation.unwrap()),
        [glam::Vec3::new(1.0, -0.5, 2.0)]
    );
}

#[test]
fn a_iii_ped_package_mixing_44_and_48_byte_anims_reads_and_binds_by_name() {
    // GTA III's ped.ifp mixes ANIM record sizes in one file, most 48 bytes (two link ints, no
    // bone tag), some 44 (one int at +40, where VC keeps a bone tag). One clip, "walk_civi",
    // four sequences in III's frame names, mixed case as in the files:
    // * "Swaist", 48 bytes (links 0, 0), KRT0, 2 frames;
    // * "SMID", 44 bytes (int 7 at +40), KR00, 1 frame;
    // * "Storso", 48 bytes, KR00, 1 frame;
    // * "sfootl", 44 bytes (int 0 at +40), KR00, 2 frames.
    // Every sequence keeps its keys, the package is III's (not VC's, although two records
    // carry what VC would take for tags), and every sequence binds by name to the III ped.
    let mut b = Bytes::new();
    b.anpk("ped", "walk_civi", 4, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Swaist", 2, &[0, 0]));
            b.section(b"KRT0", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 1.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "SMID", 1, &[7]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.6, 0.0, 0.8, 0.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Storso", 1, &[0, 0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.6, 0.8, 0.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "sfootl", 2, &[0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
                b.f32s(&[0.6, 0.0, 0.0, 0.8, 1.0]);
            });
        });
    });
    let r = read_ok(&b.done());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let clip = r.file.clip("WALK_CIVI").unwrap();
    let frames: Vec<(&str, usize, AnimLayout)> = clip
        .sequences
        .iter()
        .map(|s| (s.name.as_str(), s.keys.len(), s.anim.layout.clone()))
        .collect();
    assert_eq!(
        frames,
        [
            ("Swaist", 2, AnimLayout::Links([0, 0])),
            ("SMID", 1, AnimLayout::BoneTag),
            ("Storso", 1, AnimLayout::Links([0, 0])),
            ("sfootl", 2, AnimLayout::BoneTag),
        ]
    );
    // The 44-byte records' int, read as VC reads it.
    assert_eq!(clip.sequences[1].bone_id, 7);
    // The second key of Swaist: translation (0, 0.5, 0) at 1 s.
    assert_eq!(clip.sequences[0].keys[1].time, 1.0);
    let game = rigplay::skeleton::GtaGame::for_ifp(&r.file);
    assert_eq!(game, rigplay::skeleton::GtaGame::Iii);
    let skeleton = game.skeleton();
    let bound = skeleton.bind(&clip.to_clip()).targets;
    let names: Vec<Option<&str>> = bound
        .iter()
        .map(|t| t.map(|b| skeleton.bones[b].name.as_str()))
        .collect();
    assert_eq!(
        names,
        [Some("Swaist"), Some("Smid"), Some("Storso"), Some("Sfootl")]
    );
}
