//! RenderWare read throughput, against copying the same bytes in the same run.
//!
//! * DFF: the sample ped at a finer subdivision (5 rings, 8 sides: about 940 vertices, 1550
//!   triangles, a 32-bone SA skin, plus the rigid cap), `DffFile::read` then `skin_bind_pose`.
//! * TXD: 4 DXT5 and 4 DXT1 textures of 512×512 with full mip chains (≈ 2.1 MB),
//!   `TxdFile::read` then every level decoded to RGBA8.
//!
//! With `FLOOR_BENCH=/path/to/floor_bench` the floor kernel (`/work/shared/bench/floor`) runs
//! first, pinned like its README says (`taskset -c 1 floor_bench 32 1000 600`), so the rows can
//! be quoted as ratios of the same session.

use criterion::{BenchmarkId, Criterion, Throughput};
use rigplay::formats::dff::DffFile;
use rigplay::formats::txd::TxdFile;
use rigplay_samples::ped::{Detail, ped_dff_with};
use rigplay_samples::rw::{Image, TexFormat, TexSpec, txd_bytes};
use std::hint::black_box;

fn big_txd() -> Vec<u8> {
    let image = |seed: u32| {
        Image::from_fn(512, 512, move |x, y| {
            // Smooth colour gradients with a hashed speckle, and a varying alpha.
            let h = (x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663) ^ seed)
                .wrapping_mul(2_654_435_761)
                >> 27;
            [
                ((x / 2 + h) & 255) as u8,
                ((y / 2 + seed * 40) & 255) as u8,
                (((x + y) / 4 + h * 2) & 255) as u8,
                ((x ^ y) & 255) as u8,
            ]
        })
    };
    let chains: Vec<(TexFormat, Vec<Image>)> = (0..8u32)
        .map(|i| {
            let format = if i < 4 {
                TexFormat::Dxt5
            } else {
                TexFormat::Dxt1
            };
            (format, image(i).mip_chain(16))
        })
        .collect();
    let names: Vec<String> = (0..chains.len()).map(|i| format!("tex{i}")).collect();
    let specs: Vec<TexSpec<'_>> = chains
        .iter()
        .zip(&names)
        .map(|((format, levels), name)| TexSpec {
            name,
            format: *format,
            levels,
        })
        .collect();
    txd_bytes(&specs)
}

fn rw_read(c: &mut Criterion) {
    let dff = ped_dff_with(Detail { rings: 5, sides: 8 });
    let clump = &DffFile::read(&dff).unwrap().file.clumps[0];
    let g = &clump.geometries[0];
    eprintln!(
        "DFF: {} bytes, body {} vertices, {} triangles, {} bones; cap {} vertices",
        dff.len(),
        g.num_vertices,
        g.triangles.len(),
        g.skin.as_ref().unwrap().num_bones,
        clump.geometries[1].num_vertices
    );
    let txd = big_txd();
    let t = TxdFile::read(&txd).unwrap().file;
    eprintln!(
        "TXD: {} bytes, {} textures, {} levels",
        txd.len(),
        t.textures.len(),
        t.textures.iter().map(|t| t.levels.len()).sum::<usize>()
    );

    let mut group = c.benchmark_group("rw");
    group.throughput(Throughput::Bytes(dff.len() as u64));
    group.bench_with_input(
        BenchmarkId::new("dff read+skin_bind_pose", "ped"),
        &dff,
        |b, bytes| {
            b.iter(|| {
                let r = DffFile::read(black_box(bytes)).unwrap();
                r.file.clumps[0].skin_bind_pose(0).unwrap()
            })
        },
    );
    group.bench_with_input(BenchmarkId::new("dff read", "ped"), &dff, |b, bytes| {
        b.iter(|| DffFile::read(black_box(bytes)).unwrap())
    });
    group.bench_with_input(
        BenchmarkId::new("baseline memcpy", "ped"),
        &dff,
        |b, bytes| b.iter(|| black_box(bytes).to_vec()),
    );
    group.throughput(Throughput::Bytes(txd.len() as u64));
    group.sample_size(20);
    group.bench_with_input(
        BenchmarkId::new("txd read+decode all levels", "2MB DXT"),
        &txd,
        |b, bytes| {
            b.iter(|| {
                let r = TxdFile::read(black_box(bytes)).unwrap();
                r.file
                    .textures
                    .iter()
                    .flat_map(|t| t.decode_all())
                    .map(|l| l.unwrap().pixels.len())
                    .sum::<usize>()
            })
        },
    );
    group.bench_with_input(BenchmarkId::new("txd read", "2MB DXT"), &txd, |b, bytes| {
        b.iter(|| TxdFile::read(black_box(bytes)).unwrap())
    });
    group.bench_with_input(
        BenchmarkId::new("baseline memcpy", "2MB DXT"),
        &txd,
        |b, bytes| b.iter(|| black_box(bytes).to_vec()),
    );
    group.finish();
}

fn main() {
    if let Ok(floor) = std::env::var("FLOOR_BENCH") {
        let out = std::process::Command::new("taskset")
            .args(["-c", "1", &floor, "32", "1000", "600"])
            .output()
            .expect("FLOOR_BENCH runs");
        eprintln!("floor kernel (32 joints, 1000 characters, 600 frames):");
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
    }
    let mut c = Criterion::default().configure_from_args();
    rw_read(&mut c);
    c.final_summary();
}
