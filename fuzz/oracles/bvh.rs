// The BVH fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/bvh_read.rs) and the
// regression tests (tests/bvh_import.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a file and never panics. A file that reads has
// parents before children and every channel inside a frame's row; its clip samples at any time;
// and importing it onto a GTA ped gives a clip or an error, never a panic.

pub fn check_bvh(data: &[u8]) {
    use rigplay::animation::WrapMode;
    use rigplay::convert::import::{bvh_source, clip_to_gta};
    use rigplay::formats::bvh::BvhFile;
    use rigplay::skeleton::GtaGame;

    let Ok(read) = BvhFile::read(data) else { return };
    let bvh = read.file;
    for (j, joint) in bvh.joints.iter().enumerate() {
        assert!(joint.parent.is_none_or(|p| p < j), "parents first");
        assert!(joint.first_channel + joint.channels.len() <= bvh.channels());
    }
    assert_eq!(bvh.values.len(), bvh.frames() * bvh.channels());
    // Mocap files are small enough to import whole; a huge one is only sampled.
    if bvh.values.len() > 200_000 {
        return;
    }
    let clip = bvh.to_clip("fuzz");
    assert!(clip.duration().is_finite() && clip.duration() >= 0.0);
    for t in [0.0, 0.5, -1.0, 1e9, f32::NAN] {
        let t = clip.wrap_time(t, WrapMode::Loop);
        for track in 0..clip.tracks().len() {
            let _ = clip.sample_track(track, t);
        }
    }
    if clip.duration() < 60.0 {
        let _ = clip_to_gta(&bvh_source(&bvh), &clip, "fuzz", GtaGame::Sa, &[]);
    }
}
