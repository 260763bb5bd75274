// The DAN fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/dan_read.rs) and the
// regression tests (tests/dan.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a file and never panics. A file that reads is kept
// whole, so writing it gives the input back byte for byte; its clip samples at any time; a clip
// written by `from_clip` reads back without warnings and with as many keys; the key reducers
// run on it, stay within their tolerance, and keep the file readable.

pub fn check_dan(data: &[u8]) {
    use rigplay::animation::{BonePose, WrapMode};
    use rigplay::formats::dan::{DanClipOptions, DanFile};

    let Ok(read) = DanFile::read(data) else { return };
    for w in &read.warnings {
        let _ = w.to_string();
    }
    let f = read.file;
    assert_eq!(f.write().expect("a file that was read can be written"), data, "lossless");
    let _ = f.comment_text();
    let options = DanClipOptions::default();
    let clip = f.to_clip("fuzz", &options);
    assert!(clip.duration().is_finite() && clip.duration() >= 0.0);
    let mut cursor = clip.cursor();
    let mut poses = vec![BonePose::default(); clip.tracks().len()];
    for t in [0.0, 0.0331, 0.5, -1.0, 1e9, f32::NAN, f32::INFINITY] {
        let t = clip.wrap_time(t, WrapMode::Loop);
        clip.sample(t, &mut cursor, &mut poses);
        for track in 0..clip.tracks().len() {
            let _ = clip.sample_track(track, t);
        }
    }
    {
        use rigplay::animation::reduce::{ReduceOptions, ReduceRig, measure_error, reduce, reduce_constant_runs};
        let rig = ReduceRig::flat(&clip);
        let runs = reduce_constant_runs(&clip);
        assert!(runs.stats.keys_after <= runs.stats.keys_before);
        let options = ReduceOptions { tolerance: 0.5, shell_radius: 3.0 };
        let reduced = reduce(&clip, &rig, &options);
        let error = measure_error(&clip, &reduced.clip, &rig, options.shell_radius);
        // Huge values lose precision in f32 whatever is kept; the bound is checked where the
        // file's numbers are of a size a scene can have.
        let sane = f.bones.iter().all(|b| {
            b.positions.iter().chain(&b.scales).all(|k| k.value.iter().all(|v| v.abs() < 1e4))
        });
        if sane && error.max.is_finite() {
            assert!(error.max <= options.tolerance * 1.01 + 1e-3, "reduced error {} over tolerance", error.max);
        }
        let kept = f.sorted().with_keys(&reduced.kept);
        let bytes = kept.write().expect("writes");
        assert!(DanFile::read(&bytes).is_ok(), "a reduced file reads");
    }
    if let Ok(written) = DanFile::from_clip(&clip, &options) {
        let bytes = written.write().expect("writes");
        let back = DanFile::read(&bytes).expect("our own output reads");
        assert!(back.warnings.is_empty(), "our own output has warnings: {:?}", back.warnings);
        assert_eq!(back.file.key_count(), clip.key_count());
    }
}
