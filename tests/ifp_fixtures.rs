//! Hand-assembled IFP files shared by the reader's tests (`ifp_read.rs`, where their contents
//! are checked field by field) and the command-line tool's tests.

use crate::bytes::{Bytes, anim_payload};

/// One ANPK package "ped" with clip "walk_civi":
/// * " Pelvis", 44-byte ANIM, bone tag 1, KRT0 with 2 frames;
/// * "L Thigh", 44-byte ANIM, bone tag 41, KR00 with 1 frame.
pub fn anpk_with_44_byte_anim() -> Vec<u8> {
    let mut b = Bytes::new();
    b.section(b"ANPK", |b| {
        b.section(b"INFO", |b| {
            b.u32(1).cstr("ped");
        });
        b.section(b"NAME", |b| {
            b.cstr("walk_civi");
        });
        b.section(b"DGAN", |b| {
            b.section(b"INFO", |b| {
                b.u32(2).u32(0);
            });
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", |b| anim_payload(b, " Pelvis", 2, &[1]));
                b.section(b"KRT0", |b| {
                    // qx qy qz qw, tx ty tz, time
                    b.f32s(&[0.5, -0.5, 0.5, 0.5, 0.0, 0.0, 1.0, 0.0]);
                    b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 1.0, 1.0]);
                });
            });
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", |b| anim_payload(b, "L Thigh", 1, &[41]));
                b.section(b"KR00", |b| {
                    b.f32s(&[0.1, 0.2, 0.3, 0.9, 0.0]);
                });
            });
        });
    });
    b.done()
}

/// ANP3 package "ped" with one clip whose name has junk after its NUL (as in SA's ped.ifp) and
/// one sequence of each frame type 1–4.
pub fn anp3_with_types_1_to_4(frame_data_size: Option<u32>) -> Vec<u8> {
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("ped", 24, &[]).u32(1);
        b.fixed("abseil", 24, b"\0=C:=C:\\3dsmax5");
        // key bytes: 1 key type 1 (20) + 1 key type 2 (32) + 2 keys type 3 (20) + 1 key type 4 (16)
        b.u32(4)
            .u32(frame_data_size.unwrap_or(20 + 32 + 20 + 16))
            .u32(1);
        // type 1: q (0, 0, 0.6, 0.8), time 0.5 s
        b.fixed("Jaw", 24, &[]).u32(1).u32(1).i32(8);
        b.f32s(&[0.0, 0.0, 0.6, 0.8, 0.5]);
        // type 2: q, then time 1.0 s, then translation (1, 2, 3): time before translation
        b.fixed(" Pelvis", 24, &[]).u32(2).u32(1).i32(1);
        b.f32s(&[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0]);
        // type 3: i16 q ×4096, i16 time ×60
        b.fixed("L Fingers", 24, &[]).u32(3).u32(2).i32(-1);
        b.i16s(&[0, 0, 2896, 2896, 0]);
        b.i16s(&[0, 0, -2896, 2896, 30]);
        // type 4: i16 q, i16 time, i16 translation ×1024
        b.fixed("Root", 24, &[]).u32(4).u32(1).i32(0);
        b.i16s(&[0, 0, 0, 4096, 60, 1024, -512, 2048]);
    });
    b.done()
}

/// One ANPK package "cuts" with clip "cs_scene", as SA's cutscene packages are written: 44-byte
/// ANIMs with bone tags, two of them ids only SA's ped has:
/// * " Pelvis", tag 1, KR00 with 1 frame;
/// * "Belly", tag 201, KR00 with 1 frame;
/// * "L breast", tag 301, KRT0 with 1 frame.
pub fn anpk_sa_cutscene() -> Vec<u8> {
    let mut b = Bytes::new();
    b.section(b"ANPK", |b| {
        b.section(b"INFO", |b| {
            b.u32(1).cstr("cuts");
        });
        b.section(b"NAME", |b| {
            b.cstr("cs_scene");
        });
        b.section(b"DGAN", |b| {
            b.section(b"INFO", |b| {
                b.u32(3).u32(0);
            });
            for (name, tag) in [(" Pelvis", 1), ("Belly", 201)] {
                b.section(b"CPAN", |b| {
                    b.section(b"ANIM", |b| anim_payload(b, name, 1, &[tag]));
                    b.section(b"KR00", |b| {
                        b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
                    });
                });
            }
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", |b| anim_payload(b, "L breast", 1, &[301]));
                b.section(b"KRT0", |b| {
                    b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.1, 0.05, 0.0, 0.0]);
                });
            });
        });
    });
    b.done()
}
