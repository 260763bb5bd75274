// The DAN fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/dan_read.rs) and the
// regression tests (tests/dan.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a file and never panics. A file that reads is kept
// whole, so writing it gives the input back byte for byte; its clip samples at any time; a clip
// written by `from_clip` reads back without warnings and with as many keys.

pub fn check_dan(data: &[u8]) {
    use rigplay::anim::{BonePose, WrapMode};
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
    if let Ok(written) = DanFile::from_clip(&clip, &options) {
        let bytes = written.write().expect("writes");
        let back = DanFile::read(&bytes).expect("our own output reads");
        assert!(back.warnings.is_empty(), "our own output has warnings: {:?}", back.warnings);
        assert_eq!(back.file.key_count(), clip.key_count());
    }
}
