//! Bounded memory while reading: every parser's peak heap use (counted by the test binary's
//! allocator, per thread) stays within a small multiple of the file's size plus a constant, on
//! the bundled files, on a real-size one, and on hostile copies where aligned 32-bit words
//! spread over the file (400 of them, 40 in the 2.4 MB package; counts and size fields among
//! them) are set to their maximum in turn; and on the small fixtures of every format (the fuzz
//! seeds, assembled field by field), where every field is set to its maximum in turn: at every
//! byte offset, an 8-, 16- and 32-bit all-ones value and the largest signed 32-bit one, so that
//! each count, size and image side of whatever width is hit.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes each thread holds and the most it held since the last [`measure`].
pub struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // `try_with`: a thread being torn down has no counters left; its frees are not counted.
    let _ = HELD.try_with(|h| {
        let now = h.get() + delta;
        h.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The most heap this thread held above what it held before, while `f` ran.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = HELD.with(|h| h.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(|p| p.get()) - base;
    (r, peak.max(0) as usize)
}

use rigplay::formats::anie::AnieFile;
use rigplay::formats::dan::DanFile;
use rigplay::formats::dff::DffFile;
use rigplay::formats::ifp::IfpFile;
use rigplay::formats::txd::TxdFile;

#[derive(Clone, Copy, Debug)]
enum Format {
    Ifp,
    Dan,
    Anie,
    Dff,
    Txd,
}

/// Reads `bytes` as `format`, dropping the result (its size counts in the peak).
fn read(format: Format, bytes: &[u8]) {
    match format {
        Format::Ifp => drop(IfpFile::read(bytes)),
        Format::Dan => drop(DanFile::read(bytes)),
        Format::Anie => drop(AnieFile::read(bytes)),
        Format::Dff => drop(DffFile::read(bytes)),
        Format::Txd => drop(TxdFile::read(bytes)),
    }
}

/// The stated bound: peak heap while reading ≤ `factor` × file size + `constant` bytes.
fn bound(format: Format) -> (usize, usize) {
    match format {
        // Keys are decoded to f32 quaternions and vectors: ANP3's int16 keys grow about 4×
        // (measured 4.2×, plus about 100 KB of tables).
        Format::Ifp => (5, 128 << 10),
        // Measured 1.04×.
        Format::Dan => (2, 64 << 10),
        // Images are decoded from PackBits to RGBA8, and a PackBits run can stand for up to 64
        // times its bytes: the bound that holds for any file (measured 2.8–4.1× on the
        // bundled projects).
        Format::Anie => (64, 1 << 20),
        // The levels and vertex arrays are kept as read (measured 1.03–1.06×; TXD levels are
        // decoded only when asked).
        Format::Dff => (2, 64 << 10),
        Format::Txd => (2, 64 << 10),
    }
}

fn asset(path: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The bundled files, and a real-size IFP (the SA package's clips repeated to about 2.4 MB, the
/// size of SA's `ped.ifp`) written by rigplay's writer.
fn files() -> Vec<(Format, String, Vec<u8>)> {
    let mut out = vec![
        (
            Format::Ifp,
            "sa_ped.ifp".to_owned(),
            asset("anims/sa_ped.ifp"),
        ),
        (
            Format::Ifp,
            "vc_ped.ifp".to_owned(),
            asset("anims/vc_ped.ifp"),
        ),
        (Format::Dan, "lamp.dan".to_owned(), asset("anims/lamp.dan")),
        (
            Format::Anie,
            "character.anie".to_owned(),
            asset("anims/anie/character.anie"),
        ),
        (
            Format::Anie,
            "mesh_ffd.anie".to_owned(),
            asset("anims/anie/mesh_ffd.anie"),
        ),
        (
            Format::Dff,
            "ped.dff".to_owned(),
            asset("characters/ped.dff"),
        ),
        (
            Format::Txd,
            "ped.txd".to_owned(),
            asset("characters/ped.txd"),
        ),
    ];
    let mut big = IfpFile::read(&asset("anims/sa_ped.ifp")).unwrap().file;
    let clips: Vec<_> = big.clips().cloned().collect();
    let per_copy = asset("anims/sa_ped.ifp").len();
    for i in 0..2_400_000 / per_copy {
        for c in &clips {
            let mut c = c.clone();
            c.name = format!("{}{i}", c.name);
            big.blocks[0].clips.push(c);
        }
    }
    out.push((Format::Ifp, "2.4 MB ANP3".to_owned(), big.write().unwrap()));
    out
}

#[test]
fn every_parser_reads_within_its_memory_bound() {
    for (format, name, bytes) in files() {
        let (factor, constant) = bound(format);
        let ((), peak) = measure(|| read(format, &bytes));
        println!(
            "{format:?} {name}: {} bytes, peak {peak} ({:.2}× the size)",
            bytes.len(),
            peak as f64 / bytes.len() as f64
        );
        assert!(
            peak <= factor * bytes.len() + constant,
            "{name}: peak {peak} for {} bytes",
            bytes.len()
        );
        // Hostile copies: each aligned 32-bit word set to 0xFFFFFFFF and to 0x7FFFFFFF.
        let mut worst = (0usize, 0usize);
        // 400 words per file, spread over it (the debug build reads the 2.4 MB package in tens
        // of milliseconds, so it gets 40).
        let words = if bytes.len() > 1 << 20 { 40 } else { 400 };
        let step = (bytes.len() / 4 / words).max(1) * 4;
        for at in (0..bytes.len().saturating_sub(3)).step_by(step) {
            for v in [u32::MAX, i32::MAX as u32] {
                let mut b = bytes.clone();
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
                let ((), peak) = measure(|| read(format, &b));
                if peak > worst.0 {
                    worst = (peak, at);
                }
                assert!(
                    peak <= factor * bytes.len() + constant,
                    "{name} with the word at byte {at} set to {v:#x}: peak {peak} for {} bytes",
                    bytes.len()
                );
            }
        }
        println!(
            "  hostile: worst peak {} at byte {} ({:.2}× the size)",
            worst.0,
            worst.1,
            worst.0 as f64 / bytes.len() as f64
        );
    }
}

/// The fuzz seeds of `target` of at most 4 KB.
fn small_seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .filter(|(_, b)| b.len() <= 4096)
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn every_field_of_the_small_fixtures_at_its_maximum_stays_within_the_bound() {
    let targets = [
        (Format::Ifp, "ifp_read"),
        (Format::Dan, "dan_read"),
        (Format::Anie, "anie_read"),
        (Format::Dff, "dff_read"),
        (Format::Txd, "txd_read"),
    ];
    let maxima: [&[u8]; 4] = [
        &[0xFF],
        &[0xFF, 0xFF],
        &[0xFF, 0xFF, 0xFF, 0xFF],
        &[0xFF, 0xFF, 0xFF, 0x7F],
    ];
    for (format, target) in targets {
        let seeds = small_seeds(target);
        assert!(!seeds.is_empty(), "{target}: no fixture");
        let (factor, constant) = bound(format);
        for (name, bytes) in seeds {
            let limit = factor * bytes.len() + constant;
            let mut worst = (0usize, 0usize);
            let mut reads = 0;
            for at in 0..bytes.len() {
                for value in maxima {
                    if at + value.len() > bytes.len() {
                        continue;
                    }
                    let mut b = bytes.clone();
                    b[at..at + value.len()].copy_from_slice(value);
                    let ((), peak) = measure(|| read(format, &b));
                    reads += 1;
                    if peak > worst.0 {
                        worst = (peak, at);
                    }
                    assert!(
                        peak <= limit,
                        "{target}/{name} with {value:02x?} at byte {at}: peak {peak}, bound {limit}"
                    );
                }
            }
            println!(
                "{format:?} {name}: {} bytes, {reads} hostile reads, worst peak {} at byte {} (bound {limit})",
                bytes.len(),
                worst.0,
                worst.1
            );
        }
    }
}
