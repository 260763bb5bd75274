// The IFP fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/ifp_read.rs) and the
// regression tests (tests/ifp_bad_input.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a package and never panics. A package that reads
// must write; our output must read back equal, with no warnings other than those that belong
// to the data itself (an unusual ANIM size, times going backwards), and write again to the same
// bytes; its clips must sample at any time; and it must convert to every version. Each clip is
// also reduced on the package's GTA skeleton: the reduced clip stays within the tolerance at
// every key time (through the bone hierarchy), and the package with the kept keys writes and reads.

pub fn check_ifp(data: &[u8]) {
    use rigplay::animation::{BonePose, WrapMode};
    use rigplay::formats::ifp::{IfpFile, IfpVersion, IfpWarningKind};

    let Ok(read) = IfpFile::read(data) else { return };
    for w in &read.warnings {
        let _ = w.to_string();
    }
    let p = read.file;
    let bytes = p.write().expect("a package that was read can be written");
    let back = IfpFile::read(&bytes).expect("our own output reads");
    for w in &back.warnings {
        assert!(
            matches!(w.kind, IfpWarningKind::LongAnimRecord { .. } | IfpWarningKind::TimesNotSorted { .. }),
            "our own output has a structural warning: {w}"
        );
    }
    assert_eq!(back.file, p, "read(write(p)) == p");
    assert_eq!(back.file.write().expect("writes again"), bytes, "write is a fixed point");
    for clip in p.clips() {
        let c = clip.to_clip();
        let mut cursor = c.cursor();
        let mut poses = vec![BonePose::default(); c.tracks().len()];
        for t in [-1.0, 0.0, 0.013, 0.5, 1.0, 7.3, 1e30, f32::NAN, f32::INFINITY] {
            c.sample(c.wrap_time(t, WrapMode::Loop), &mut cursor, &mut poses);
            c.sample(c.wrap_time(t, WrapMode::Clamp), &mut cursor, &mut poses);
            for (i, _) in c.tracks().iter().enumerate() {
                let _ = c.sample_track(i, t);
            }
        }
    }
    {
        use rigplay::animation::reduce::{ReduceOptions, ReduceRig, measure_error, reduce};
        let skeleton = rigplay::skeleton::Skeleton::for_ifp(&p);
        let options = ReduceOptions { tolerance: 0.01, shell_radius: 0.03 };
        let mut reduced_package = p.clone();
        for clip in reduced_package.clips_mut() {
            let c = clip.to_clip();
            let rig = ReduceRig::from_skeleton(&skeleton, &c);
            let r = reduce(&c, &rig, &options);
            let e = measure_error(&c, &r.clip, &rig, options.shell_radius);
            // Translations far beyond a game's world lose the precision a bound needs in f32.
            let sane = clip.sequences.iter().flat_map(|s| &s.keys).all(|k| {
                k.translation.iter().chain(&k.scale).all(|v| v.abs() < 1e4) && k.time.abs() < 1e5
            });
            if sane && e.max.is_finite() {
                assert!(e.max <= options.tolerance * 1.01 + 1e-4, "reduced error {} over tolerance", e.max);
            }
            clip.keep_keys(&r.kept);
        }
        let out = reduced_package.write().expect("a reduced package writes");
        IfpFile::read(&out).expect("reduced output reads");
    }
    for version in [IfpVersion::Anpk, IfpVersion::Anp3, IfpVersion::Anp2] {
        let (converted, _notes) = p.converted(version);
        let out = converted.write().expect("a converted package writes");
        IfpFile::read(&out).expect("converted output reads");
    }
}
