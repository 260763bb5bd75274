//! IFP parse throughput and sampling cost, each against a baseline measured in the same run.
//!
//! * parse: a synthetic ANP3 and ANPK of 300 clips × 32 bones × 30 keys, read by
//!   `IfpFile::read`; baselines: copying the same bytes (memory bandwidth) and reading the
//!   ANP3 through the binrw record declarations alone, record by record.
//! * sample: 1000 characters × 32 bones playing forward at 60 Hz from random phases, with the
//!   core sampler and a cursor per character; baseline: binary search plus glam's `Quat::slerp`.
//! * reduce: error-bounded keyframe reduction at the default tolerance of the bundled SA walk
//!   on the SA skeleton, and of the synthetic clip with each track measured alone.

use binrw::BinRead;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::Quat;
use rigplay::animation::reduce::{ReduceOptions, ReduceRig, reduce};
use rigplay::animation::{BonePose, Clip, WrapMode};
use rigplay::formats::ifp::{IfpClip, IfpFile, IfpKey, IfpSequence, IfpVersion};
use std::hint::black_box;
use std::io::Cursor;

const CLIPS: usize = 300;
const BONES: usize = 32;
const KEYS: usize = 30;

/// A walk-like clip: 30 keys at 30 fps, bone 0 translating, all bones rotating smoothly.
fn synthetic_clip(c: usize) -> IfpClip {
    let sequences = (0..BONES)
        .map(|b| {
            let keys = (0..KEYS)
                .map(|k| {
                    let phase = (k as f32 / KEYS as f32) * std::f32::consts::TAU
                        + b as f32 * 0.3
                        + c as f32 * 0.01;
                    let q = Quat::from_euler(
                        glam::EulerRot::ZXY,
                        0.4 * phase.sin(),
                        0.2 * phase.cos(),
                        0.1 * b as f32,
                    );
                    IfpKey {
                        time: k as f32 * 2.0 / 60.0,
                        rotation: q.to_array(),
                        translation: if b == 0 {
                            [0.0, k as f32 * 0.05, 1.0 + 0.02 * phase.sin()]
                        } else {
                            [0.0; 3]
                        },
                        scale: [1.0; 3],
                    }
                })
                .collect();
            let mut s = IfpSequence::new(format!(" Bone{b}"), b as i32, keys);
            s.has_translation = b == 0;
            s.compressed = true;
            s
        })
        .collect();
    IfpClip {
        name: format!("clip{c}"),
        sequences,
        flags: 1,
        info_unknown: 0,
    }
}

fn synthetic_package(version: IfpVersion) -> Vec<u8> {
    let p = IfpFile::new(
        IfpVersion::Anp3,
        "bench",
        (0..CLIPS).map(synthetic_clip).collect(),
    );
    let (p, _) = p.converted(version);
    p.write().expect("synthetic package writes")
}

/// The ANP3 records as plain binrw declarations (`docs/formats/ifp.md` §2): the baseline reads
/// a package through them alone.
#[allow(dead_code)] // every field is read; the baseline uses the few it needs
mod baseline {
    use binrw::binrw;

    /// `char fourcc[4]; u32 size;`
    #[binrw]
    #[brw(little)]
    pub struct SectionHeader {
        pub magic: [u8; 4],
        pub size: u32,
    }

    /// The package name and its animation count.
    #[binrw]
    #[brw(little)]
    pub struct Anp3PackageHead {
        pub name: [u8; 24],
        pub num_anims: u32,
    }

    /// An animation's name and sequence count.
    #[binrw]
    #[brw(little)]
    pub struct Anp2AnimHead {
        pub name: [u8; 24],
        pub num_sequences: u32,
    }

    /// ANP3's frame data size and flags.
    #[binrw]
    #[brw(little)]
    pub struct Anp3AnimTail {
        pub frame_data_size: u32,
        pub flags: u32,
    }

    /// A sequence: bone name, frame type, key count, bone id.
    #[binrw]
    #[brw(little)]
    pub struct Anp3SequenceHead {
        pub name: [u8; 24],
        pub frame_type: u32,
        pub num_frames: u32,
        pub bone_id: i32,
    }

    /// Frame type 3: rotation ×4096, time ×60.
    #[binrw]
    #[brw(little)]
    pub struct Anp3RotFrameCompressed {
        pub q: [i16; 4],
        pub time: i16,
    }

    /// Frame type 4: rotation ×4096, time ×60, translation ×1024.
    #[binrw]
    #[brw(little)]
    pub struct Anp3RotTransFrameCompressed {
        pub q: [i16; 4],
        pub time: i16,
        pub t: [i16; 3],
    }
}

/// Reads an ANP3 through the binrw declarations alone (no bulk key decoding, no checks).
fn binrw_only_anp3(bytes: &[u8]) -> usize {
    use baseline::*;
    let mut c = Cursor::new(bytes);
    let _ = SectionHeader::read(&mut c).unwrap();
    let head = Anp3PackageHead::read(&mut c).unwrap();
    let mut keys = 0;
    for _ in 0..head.num_anims {
        let a = Anp2AnimHead::read(&mut c).unwrap();
        let _ = Anp3AnimTail::read(&mut c).unwrap();
        for _ in 0..a.num_sequences {
            let s = Anp3SequenceHead::read(&mut c).unwrap();
            let mut out: Vec<IfpKey> = Vec::with_capacity(s.num_frames as usize);
            for _ in 0..s.num_frames {
                let (q, time, t) = if s.frame_type == 4 {
                    let f = Anp3RotTransFrameCompressed::read(&mut c).unwrap();
                    (f.q, f.time, f.t)
                } else {
                    let f = Anp3RotFrameCompressed::read(&mut c).unwrap();
                    (f.q, f.time, [0; 3])
                };
                out.push(IfpKey {
                    time: f32::from(time) / 60.0,
                    rotation: q.map(|v| f32::from(v) / 4096.0),
                    translation: t.map(|v| f32::from(v) / 1024.0),
                    scale: [1.0; 3],
                });
            }
            keys += black_box(out).len();
        }
    }
    keys
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    g.sample_size(30);
    for (name, version) in [("ANP3", IfpVersion::Anp3), ("ANPK", IfpVersion::Anpk)] {
        let bytes = synthetic_package(version);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("read", name), &bytes, |b, bytes| {
            b.iter(|| IfpFile::read(black_box(bytes)).unwrap())
        });
        g.bench_with_input(
            BenchmarkId::new("read+to_clip", name),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let r = IfpFile::read(black_box(bytes)).unwrap();
                    r.file.clips().map(|c| c.to_clip()).collect::<Vec<Clip>>()
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("baseline memcpy", name),
            &bytes,
            |b, bytes| b.iter(|| black_box(bytes).to_vec()),
        );
        if version == IfpVersion::Anp3 {
            g.bench_with_input(
                BenchmarkId::new("baseline binrw records", name),
                &bytes,
                |b, bytes| b.iter(|| binrw_only_anp3(black_box(bytes))),
            );
        }
    }
    g.finish();
}

const CHARACTERS: usize = 1000;

/// Deterministic phases in [0, 1).
fn phases() -> Vec<f32> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..CHARACTERS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The naive way: binary search each channel, glam's slerp and lerp.
fn naive_sample(clip: &Clip, t: f32, poses: &mut [BonePose]) {
    for (track, pose) in clip.tracks().iter().zip(poses.iter_mut()) {
        if let Some(ch) = track.rotation {
            let times = clip.times(ch);
            let v = clip.rotation_values(ch);
            let k = times.partition_point(|&x| x <= t);
            pose.rotation = if k == 0 {
                v[0]
            } else if k == times.len() {
                v[k - 1]
            } else {
                v[k - 1].slerp(v[k], (t - times[k - 1]) / (times[k] - times[k - 1]))
            };
        }
        if let Some(ch) = track.translation {
            let times = clip.times(ch);
            let v = clip.vector_values(ch);
            let k = times.partition_point(|&x| x <= t);
            pose.translation = if k == 0 {
                v[0]
            } else if k == times.len() {
                v[k - 1]
            } else {
                v[k - 1].lerp(v[k], (t - times[k - 1]) / (times[k] - times[k - 1]))
            };
        }
    }
}

fn sample(c: &mut Criterion) {
    let clip = synthetic_clip(0).to_clip();
    let duration = clip.duration();
    let mut g = c.benchmark_group("sample");
    g.sample_size(30);
    // One iteration = one 60 Hz frame of 1000 characters × 32 bones.
    g.throughput(Throughput::Elements((CHARACTERS * BONES) as u64));
    g.bench_function("core sampler with cursors", |b| {
        let mut times: Vec<f32> = phases().iter().map(|p| p * duration).collect();
        let mut cursors: Vec<_> = (0..CHARACTERS).map(|_| clip.cursor()).collect();
        let mut poses = vec![BonePose::default(); CHARACTERS * BONES];
        b.iter(|| {
            for ((t, cursor), pose) in times
                .iter_mut()
                .zip(&mut cursors)
                .zip(poses.chunks_exact_mut(BONES))
            {
                *t = clip.wrap_time(*t + 1.0 / 60.0, WrapMode::Loop);
                clip.sample(*t, cursor, pose);
            }
            black_box(&poses);
        })
    });
    g.bench_function("baseline search + glam slerp", |b| {
        let mut times: Vec<f32> = phases().iter().map(|p| p * duration).collect();
        let mut poses = vec![BonePose::default(); CHARACTERS * BONES];
        b.iter(|| {
            for (t, pose) in times.iter_mut().zip(poses.chunks_exact_mut(BONES)) {
                *t = clip.wrap_time(*t + 1.0 / 60.0, WrapMode::Loop);
                naive_sample(&clip, *t, pose);
            }
            black_box(&poses);
        })
    });
    g.finish();
}

fn reduction(c: &mut Criterion) {
    let skeleton = rigplay::skeleton::Skeleton::gta_sa();
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/anims/sa_ped.ifp"
    ))
    .expect("the committed SA sample");
    let package = IfpFile::read(&bytes).expect("it reads").file;
    let walk = package
        .clip("walk")
        .expect("the samples have a walk")
        .to_clip();
    let rig = ReduceRig::from_skeleton(&skeleton, &walk);
    let synthetic = synthetic_clip(0).to_clip();
    let flat = ReduceRig::flat(&synthetic);
    let options = ReduceOptions::default();
    let mut g = c.benchmark_group("reduce");
    g.sample_size(20);
    // Throughput in input keys.
    g.throughput(Throughput::Elements(walk.key_count() as u64));
    g.bench_function("SA walk on the SA skeleton", |b| {
        b.iter(|| black_box(reduce(&walk, &rig, &options)))
    });
    g.throughput(Throughput::Elements(synthetic.key_count() as u64));
    g.bench_function("synthetic clip, flat rig", |b| {
        b.iter(|| black_box(reduce(&synthetic, &flat, &options)))
    });
    g.finish();
}

criterion_group!(benches, parse, sample, reduction);
criterion_main!(benches);
