//! Hand-assembled IFP files shared by the reader's tests (`ifp_read.rs`, where their contents
//! are checked field by field) and the command-line tool's tests.

use crate::bytes::{Bytes, anim_payload};

/// One ANPK package "ped" with clip "walk_civi":
/// * " Pelvis", 44-byte ANIM, bone tag 1, KRT0 with 2 frames;
/// * "L Thigh", 44-byte ANIM, bone tag 41, KR00 with 1 frame.
pub fn anpk_with_44_byte_anim() -> Vec<u8> {
    let mut b = Bytes::new();
    b.anpk("ped", "walk_civi", 2, |b| {
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
    b.anpk("cuts", "cs_scene", 3, |b| {
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
    b.done()
}

/// An SA cutscene package shaped like the real one measured in `docs/formats/ifp.md` §3.4's
/// addendum: ANPK, 44-byte ANIMs with SA bone tags, one clip "cs_talk" of `keys` keys at
/// 30 per second:
/// * "Root" (tag 0), KRT0: the root far from the origin, around (−6.720, −4.460, −0.059),
///   drifting 1 cm per key along x, turning slowly about z;
/// * " Pelvis" (1), " Spine" (2), " Spine1" (3), " Neck" (4), the arms' " R UpperArm" (22),
///   " R Forearm" (23), " R Hand" (24), " L UpperArm" (32), " L Forearm" (33), " L Hand"
///   (34), "Belly" (201, a bone only SA's ped has), KR00: rotations swinging by up to 0.4 rad;
/// * " R Clavicle" (21) and " L Clavicle" (31), KRT0: their rotations, and as translation
///   the root's key plus (0.12, ∓0.17, 0.65) plus a constant (0.6, 0.9, 0.3): positions in the
///   scene's frame, metres from the clavicle's rest offset from the neck (under 1 cm).
pub fn anpk_sa_cutscene_scene_space(keys: usize) -> Vec<u8> {
    use glam::{EulerRot, Quat, Vec3};
    let rotation = |bone: u32, k: usize| {
        let a = (k as f32 * 0.05 + bone as f32).sin() * 0.4;
        Quat::from_euler(EulerRot::XYZ, a * 0.5, a, -a * 0.3)
    };
    let root_at = |k: usize| Vec3::new(-6.720 + 0.01 * k as f32, -4.460, -0.059);
    let rotation_only: [(&str, u32); 11] = [
        (" Pelvis", 1),
        (" Spine", 2),
        (" Spine1", 3),
        (" Neck", 4),
        (" R UpperArm", 22),
        (" R Forearm", 23),
        (" R Hand", 24),
        (" L UpperArm", 32),
        (" L Forearm", 33),
        (" L Hand", 34),
        ("Belly", 201),
    ];
    let mut b = Bytes::new();
    b.anpk("cuts", "cs_talk", rotation_only.len() as u32 + 3, |b| {
        // (rotation, translation) per key, time in seconds.
        let krt0 = |b: &mut Bytes, q: &dyn Fn(usize) -> Quat, t: &dyn Fn(usize) -> Vec3| {
            for k in 0..keys {
                let (q, t) = (q(k), t(k));
                b.f32s(&[q.x, q.y, q.z, q.w, t.x, t.y, t.z, k as f32 / 30.0]);
            }
        };
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Root", keys as i32, &[0]));
            b.section(b"KRT0", |b| {
                krt0(b, &|k| Quat::from_rotation_z(k as f32 * 0.002), &root_at)
            });
        });
        for (name, tag) in rotation_only {
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", |b| {
                    anim_payload(b, name, keys as i32, &[tag as i32])
                });
                b.section(b"KR00", |b| {
                    for k in 0..keys {
                        let q = rotation(tag, k);
                        b.f32s(&[q.x, q.y, q.z, q.w, k as f32 / 30.0]);
                    }
                });
            });
        }
        for (name, tag, side) in [(" R Clavicle", 21u32, 1.0f32), (" L Clavicle", 31, -1.0)] {
            b.section(b"CPAN", |b| {
                b.section(b"ANIM", |b| {
                    anim_payload(b, name, keys as i32, &[tag as i32])
                });
                b.section(b"KRT0", |b| {
                    krt0(b, &|k| rotation(tag, k), &|k| {
                        root_at(k) + Vec3::new(0.12, -0.17 * side, 0.65) + Vec3::new(0.6, 0.9, 0.3)
                    })
                });
            });
        }
    });
    b.done()
}
