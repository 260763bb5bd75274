//! Bad input: truncation at every byte, impossible counts, bad values. Never a panic, always a
//! typed error that says what was expected and where.

use crate::bytes::{Bytes, anim_payload};
use crate::ifp_read::{anp3_with_types_1_to_4, anpk_with_44_byte_anim, anpk_with_48_byte_anim};
use rigplay::formats::Bounds;
use rigplay::formats::ifp::*;

include!("../fuzz/oracles/ifp.rs");

#[test]
fn truncation_at_every_byte_is_an_error_at_or_before_the_cut() {
    let mut anlf = Bytes::new();
    anlf.section(b"ANLF", |b| {
        b.u32(2);
    });
    anlf.raw(&anpk_with_44_byte_anim())
        .raw(&anpk_with_48_byte_anim());
    for file in [
        anpk_with_44_byte_anim(),
        anpk_with_48_byte_anim(),
        anp3_with_types_1_to_4(None),
        anlf.done(),
    ] {
        assert!(IfpFile::read(&file).is_ok());
        for cut in 0..file.len() {
            let err = IfpFile::read(&file[..cut]).expect_err("a cut file must not read");
            assert!(
                err.offset <= cut as u64,
                "cut {cut}: error at {}",
                err.offset
            );
            assert!(
                matches!(
                    err.kind,
                    IfpErrorKind::Bounds(Bounds::Truncated { .. })
                        | IfpErrorKind::Bounds(Bounds::CountTooLarge { .. })
                ),
                "cut {cut}: {err}"
            );
        }
    }
}

#[test]
fn a_huge_count_in_a_small_file_is_refused_before_allocating() {
    // ANP3 claiming 2^31 animations in a 100-byte file.
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("ped", 24, &[]).u32(1 << 31);
        b.raw(&[0; 64]);
    });
    let err = IfpFile::read(&b.done()).unwrap_err();
    assert_eq!(
        err.kind,
        IfpErrorKind::Bounds(Bounds::CountTooLarge {
            what: "animation",
            count: 1 << 31,
            min_each: 36,
            bytes_left: 64
        })
    );
    assert_eq!(err.offset, 36);

    // A sequence claiming u32::MAX keys: the error names the clip and the bone.
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("ped", 24, &[]).u32(1);
        b.fixed("walk", 24, &[]).u32(1).u32(10).u32(1);
        b.fixed(" Pelvis", 24, &[]).u32(3).u32(u32::MAX).i32(1);
        b.i16s(&[0, 0, 0, 4096, 0]);
    });
    let err = IfpFile::read(&b.done()).unwrap_err();
    assert!(matches!(
        err.kind,
        IfpErrorKind::Bounds(Bounds::CountTooLarge {
            what: "key",
            count: 4294967295,
            min_each: 10,
            bytes_left: 10
        })
    ));
    assert_eq!(err.location.clip, Some((0, "walk".into())));
    assert_eq!(err.location.sequence, Some((0, " Pelvis".into())));
    let text = err.to_string();
    // 8 (ANP3 header) + 28 (package head) + 36 (anim head) + 36 (sequence head) = 108, where
    // the keys would start.
    assert_eq!(err.offset, 108);
    assert!(
        text.contains("byte 108") && text.contains("\"walk\"") && text.contains("\" Pelvis\""),
        "{text}"
    );

    // ANPK claiming 2^31 animations.
    let mut b = Bytes::new();
    b.section(b"ANPK", |b| {
        b.section(b"INFO", |b| {
            b.u32(1 << 31).cstr("x");
        });
    });
    assert!(matches!(
        IfpFile::read(&b.done()).unwrap_err().kind,
        IfpErrorKind::Bounds(Bounds::CountTooLarge {
            what: "animation",
            ..
        })
    ));
}

fn one_sequence_anpk(anim: impl FnOnce(&mut Bytes), keys: impl FnOnce(&mut Bytes)) -> Vec<u8> {
    let mut b = Bytes::new();
    b.section(b"ANPK", |b| {
        b.section(b"INFO", |b| {
            b.u32(1).cstr("x");
        });
        b.section(b"NAME", |b| {
            b.cstr("a");
        });
        b.section(b"DGAN", |b| {
            b.section(b"INFO", |b| {
                b.u32(1).u32(0);
            });
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", anim);
                keys(b);
            });
        });
    });
    b.done()
}

#[test]
fn bad_values_are_typed_errors() {
    // Negative frame count: the int at ANIM +28. Offsets: ANPK 8, INFO 8+8, NAME 8+4, DGAN 8,
    // INFO 8+8, CPAN 8, ANIM header 8 -> payload at 76, frame count at 104.
    let file = one_sequence_anpk(|b| anim_payload(b, "Shead", -5, &[0, 0]), |_| {});
    let err = IfpFile::read(&file).unwrap_err();
    assert_eq!(
        err.kind,
        IfpErrorKind::Bounds(Bounds::NegativeCount {
            what: "frame",
            value: -5
        })
    );
    assert_eq!(err.offset, 104);

    // A NaN in the third key's rotation.
    let file = one_sequence_anpk(
        |b| anim_payload(b, "Shead", 3, &[5]),
        |b| {
            b.section(b"KR00", |b| {
                b.f32s(&[
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                    0.1,
                    f32::NAN,
                    0.0,
                    0.0,
                    1.0,
                    0.2,
                ]);
            });
        },
    );
    let err = IfpFile::read(&file).unwrap_err();
    assert!(
        matches!(
            err.kind,
            IfpErrorKind::NotFinite {
                field: "rotation",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.location.key, Some(2));
    assert_eq!(err.location.sequence, Some((0, "Shead".into())));

    // An unknown key block whose size fits no frame layout.
    let file = one_sequence_anpk(
        |b| anim_payload(b, "Shead", 2, &[5]),
        |b| {
            b.section(b"KRQQ", |b| {
                b.f32s(&[0.0; 9]);
            });
        },
    );
    assert_eq!(
        IfpFile::read(&file).unwrap_err().kind,
        IfpErrorKind::UnknownKeyBlock {
            magic: "KRQQ".into(),
            size: 36,
            frames: 2
        }
    );

    // An ANIM record too short to hold its 40-byte head.
    // (Bytes follow inside the CPAN so that the sequence count passes its bound.)
    let file = one_sequence_anpk(
        |b| {
            b.raw(&[0; 36]);
        },
        |b| {
            b.raw(&[0; 20]);
        },
    );
    assert_eq!(
        IfpFile::read(&file).unwrap_err().kind,
        IfpErrorKind::AnimTooShort { size: 36 }
    );

    // An ANP3 frame type that does not exist: the error points at the field.
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("ped", 24, &[]).u32(1);
        b.fixed("walk", 24, &[]).u32(1).u32(0).u32(1);
        b.fixed("Jaw", 24, &[]).u32(7).u32(0).i32(8);
    });
    let err = IfpFile::read(&b.done()).unwrap_err();
    assert_eq!(err.kind, IfpErrorKind::UnknownFrameType { frame_type: 7 });
    assert_eq!(err.offset, 8 + 28 + 36 + 24);

    // Not an IFP at all.
    let err = IfpFile::read(b"RIFF\0\0\0\0WAVE").unwrap_err();
    assert_eq!(
        err.kind,
        IfpErrorKind::UnknownFormat {
            found: "RIFF".into()
        }
    );
    assert!(IfpFile::read(b"").is_err());
}

#[test]
fn fuzz_regressions_pass_the_oracle() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions/ifp");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        check_ifp(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 2, "regression inputs in {}", dir.display());
    // The fuzzer's seeds too.
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/ifp_read");
    for entry in std::fs::read_dir(seeds).unwrap() {
        check_ifp(&std::fs::read(entry.unwrap().path()).unwrap());
    }
}
