//! Writing: byte-exact against hand-assembled files, round trips, conversion, refusals.

use crate::bytes::Bytes;
use crate::ifp_read::{anp3_with_types_1_to_4, anpk_with_44_byte_anim, anpk_with_48_byte_anim};
use crate::rng::Rng;
use rigplay::formats::ifp::*;

fn read(bytes: &[u8]) -> IfpFile {
    let r = IfpFile::read(bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r.file
}

#[test]
fn writer_reproduces_hand_assembled_files_byte_for_byte() {
    let mut anlf = Bytes::new();
    anlf.section(b"ANLF", |b| {
        b.u32(2);
    });
    anlf.raw(&anpk_with_44_byte_anim())
        .raw(&anpk_with_48_byte_anim());
    let mut anp3 = Bytes::new();
    anp3.sized(b"ANP3", |b| {
        b.fixed("ped", 24, &[]).u32(1);
        b.fixed("run", 24, &[]).u32(2).u32(10 + 2 * 16).u32(1);
        b.fixed(" Spine", 24, &[]).u32(3).u32(1).i32(2);
        b.i16s(&[1, -2, 3, 4090, 0]);
        b.fixed("Root", 24, &[]).u32(4).u32(2).i32(0);
        b.i16s(&[0, 0, 2896, 2896, 0, 0, 0, 0]);
        b.i16s(&[0, 0, 2896, 2896, 44, 0, 4280, -20]);
    });
    for original in [
        anpk_with_44_byte_anim(),
        anpk_with_48_byte_anim(),
        anlf.done(),
        anp3.done(),
    ] {
        let written = read(&original).write().expect("writes");
        assert_eq!(written, original);
    }
}

#[test]
fn read_write_read_keeps_everything() {
    for file in [
        anpk_with_44_byte_anim(),
        anpk_with_48_byte_anim(),
        anp3_with_types_1_to_4(None),
    ] {
        let p = read(&file);
        let written = p.write().unwrap();
        assert_eq!(read(&written), p);
        // And our own output is a fixed point, byte for byte.
        assert_eq!(read(&written).write().unwrap(), written);
    }
}

/// A bone or clip name of up to `max` letters and spaces.
fn random_name(rng: &mut Rng, max: usize) -> String {
    let len = rng.below(max + 1);
    (0..len)
        .map(|_| {
            if rng.below(8) == 0 {
                ' '
            } else {
                (b'A' + rng.below(26) as u8) as char
            }
        })
        .collect()
}

fn random_package(rng: &mut Rng, version: IfpVersion) -> IfpFile {
    let compressed_file = version != IfpVersion::Anpk && rng.below(2) == 0;
    let clips = (0..rng.below(4))
        .map(|_| {
            let sequences = (0..rng.below(5))
                .map(|_| {
                    let n_keys = rng.below(6);
                    // ANPK stores channels in the key block, which a 0-frame sequence lacks.
                    let has_translation =
                        rng.below(2) == 0 && (n_keys > 0 || version != IfpVersion::Anpk);
                    let has_scale =
                        version == IfpVersion::Anpk && has_translation && rng.below(2) == 0;
                    let mut time = 0.0f32;
                    let keys = (0..n_keys)
                        .map(|_| {
                            time += if compressed_file {
                                rng.below(4) as f32 / 60.0
                            } else {
                                rng.range(0.0, 0.1)
                            };
                            let q = |rng: &mut Rng| {
                                if compressed_file {
                                    rng.below(8193) as f32 / 4096.0 - 1.0
                                } else {
                                    rng.range(-1.0, 1.0)
                                }
                            };
                            let t = |rng: &mut Rng| {
                                if compressed_file {
                                    rng.below(4000) as f32 / 1024.0 - 2.0
                                } else {
                                    rng.range(-50.0, 50.0)
                                }
                            };
                            IfpKey {
                                time: if compressed_file {
                                    (time * 60.0).round() / 60.0
                                } else {
                                    time
                                },
                                rotation: [q(rng), q(rng), q(rng), q(rng)],
                                translation: if has_translation {
                                    [t(rng), t(rng), t(rng)]
                                } else {
                                    [0.0; 3]
                                },
                                scale: if has_scale {
                                    [rng.range(0.5, 2.0), 1.0, rng.range(0.5, 2.0)]
                                } else {
                                    [1.0; 3]
                                },
                            }
                        })
                        .collect();
                    let by_name = version == IfpVersion::Anpk && rng.below(3) == 0;
                    let mut s = IfpSequence::new(
                        random_name(rng, 20),
                        if by_name {
                            -1
                        } else {
                            rng.below(60) as i32 - 1
                        },
                        keys,
                    );
                    s.has_translation = has_translation;
                    s.has_scale = has_scale;
                    s.compressed = compressed_file;
                    if by_name {
                        s.anim.layout =
                            AnimLayout::Links([rng.below(9) as i32, rng.below(9) as i32]);
                    }
                    s
                })
                .collect();
            IfpClip {
                name: random_name(rng, if version == IfpVersion::Anpk { 40 } else { 23 }),
                sequences,
                flags: if version == IfpVersion::Anp3 {
                    u32::from(compressed_file)
                } else {
                    0
                },
                info_unknown: 0,
            }
        })
        .collect();
    IfpFile::new(version, random_name(rng, 20), clips)
}

#[test]
fn random_packages_round_trip_in_every_version() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let version = [IfpVersion::Anpk, IfpVersion::Anp3, IfpVersion::Anp2][i % 3];
        let p = random_package(&mut rng, version);
        let bytes = p.write().unwrap_or_else(|e| panic!("package {i}: {e}"));
        let back = read(&bytes);
        assert_eq!(back, p, "package {i}");
        assert_eq!(back.write().unwrap(), bytes, "package {i}");
    }
}

#[test]
fn anpk_to_anp3_keeps_every_key_within_int16_quantisation() {
    let mut rng = Rng(42);
    for _ in 0..50 {
        let mut p = random_package(&mut rng, IfpVersion::Anpk);
        // Values inside the compressed range: |t| < 32 m, times < 546 s.
        for k in p.blocks[0]
            .clips
            .iter_mut()
            .flat_map(|c| c.sequences.iter_mut())
            .flat_map(|s| s.keys.iter_mut())
        {
            k.translation = k.translation.map(|v| v / 2.0);
        }
        let (anp3, _notes) = p.converted(IfpVersion::Anp3);
        let back = read(&anp3.write().unwrap());
        for (a, b) in p.clips().zip(back.clips()) {
            assert_eq!(b.flags & 1, 1, "fits int16, so compressed");
            for (sa, sb) in a.sequences.iter().zip(&b.sequences) {
                assert!(sb.compressed && !sb.has_scale);
                assert_eq!(sa.keys.len(), sb.keys.len());
                for (ka, kb) in sa.keys.iter().zip(&sb.keys) {
                    // Half a quantisation step: 1/8192 rotation, 1/120 s, 1/2048 m.
                    for c in 0..4 {
                        assert!((ka.rotation[c] - kb.rotation[c]).abs() <= 0.5 / 4096.0 + 1e-7);
                    }
                    assert!((ka.time - kb.time).abs() <= 0.5 / 60.0 + 1e-6);
                    for c in 0..3 {
                        let expected = if sa.has_translation {
                            ka.translation[c]
                        } else {
                            0.0
                        };
                        assert!((expected - kb.translation[c]).abs() <= 0.5 / 1024.0 + 1e-6);
                    }
                }
            }
        }
        // And back to ANPK: the same compressed values, exactly (floats hold them).
        let (anpk, _) = back.converted(IfpVersion::Anpk);
        let again = read(&anpk.write().unwrap());
        for (a, b) in back.clips().zip(again.clips()) {
            for (sa, sb) in a.sequences.iter().zip(&b.sequences) {
                assert_eq!(sa.keys, sb.keys);
            }
        }
    }
}

#[test]
fn values_outside_int16_become_float_frames_never_an_overflow() {
    let mut seq = IfpSequence::new(
        "Root",
        0,
        vec![IfpKey {
            translation: [0.0, 40.0, 0.0],
            ..IfpKey::default()
        }],
    );
    seq.has_translation = true;
    let p = IfpFile::new(
        IfpVersion::Anpk,
        "x",
        vec![IfpClip {
            name: "far".into(),
            sequences: vec![seq],
            flags: 0,
            info_unknown: 0,
        }],
    );
    let (anp3, notes) = p.converted(IfpVersion::Anp3);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let bytes = anp3.write().unwrap();
    // Sequence header at 8 + 28 + 36: frame type field at +24 must be 2 (float, translation).
    assert_eq!(u32::from_le_bytes(bytes[96..100].try_into().unwrap()), 2);
    let back = read(&bytes);
    assert_eq!(
        back.blocks[0].clips[0].sequences[0].keys[0].translation,
        [0.0, 40.0, 0.0]
    );
    assert_eq!(back.blocks[0].clips[0].flags & 1, 0);

    // Asking for compression directly is refused with the key's location.
    let mut forced = anp3.clone();
    forced.blocks[0].clips[0].sequences[0].compressed = true;
    let err = forced.write().unwrap_err();
    assert_eq!(
        err.kind,
        IfpWriteErrorKind::CompressedOverflow {
            field: "translation",
            value: 40.0
        }
    );
    assert_eq!(err.location.key, Some(0));
    assert_eq!(err.location.sequence, Some((0, "Root".to_string())));
}

#[test]
fn unrepresentable_data_is_refused_not_dropped() {
    let mut p = read(&anpk_with_48_byte_anim());
    p.version = IfpVersion::Anp3;
    assert_eq!(
        p.write().unwrap_err().kind,
        IfpWriteErrorKind::ScaleNotRepresentable
    );
    let (converted, notes) = read(&anpk_with_48_byte_anim()).converted(IfpVersion::Anp3);
    assert!(notes.iter().any(|n| n.contains("scale")), "{notes:?}");
    assert!(converted.write().is_ok());

    let mut long = read(&anp3_with_types_1_to_4(None));
    long.blocks[0].clips[0].sequences[0].name = "x".repeat(25);
    assert_eq!(
        long.write().unwrap_err().kind,
        IfpWriteErrorKind::NameTooLong {
            name: "x".repeat(25),
            max: 24
        }
    );

    let mut wide = read(&anpk_with_44_byte_anim());
    wide.blocks[0].clips[0].name = "걷기".into();
    assert!(matches!(
        wide.write().unwrap_err().kind,
        IfpWriteErrorKind::NameNotLatin1 { .. }
    ));

    let mut tagged = read(&anpk_with_48_byte_anim());
    tagged.blocks[0].clips[0].sequences[0].bone_id = 3;
    assert_eq!(
        tagged.write().unwrap_err().kind,
        IfpWriteErrorKind::BoneIdNotRepresentable { bone_id: 3 }
    );
}

#[test]
fn latin1_names_round_trip() {
    let mut p = read(&anpk_with_44_byte_anim());
    p.blocks[0].clips[0].name = "caf\u{e9} \u{ff}".into();
    assert_eq!(read(&p.write().unwrap()), p);
}
