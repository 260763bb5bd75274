// The `.anie` fuzz oracle, shared by the fuzz target (fuzz/fuzz_targets/anie_read.rs) and the
// regression tests (tests/anie_bad_input.rs), which `include!` it.
//
// Any bytes: the reader returns an error or a project and never panics. A project that reads
// must write in format 0.8; our output must read back equal, with no warnings other than those
// that belong to the data itself (an image key without an image, a resource rect that differs
// from its image), and write again to the same bytes. Formats 0.7 and 0.5 either refuse with
// `NeedsVersion` (a value they cannot hold) or round-trip the same way. The project evaluates
// at any frame (fractional, negative, past the end, NaN) and, when its canvas is small enough
// for a fuzzer, renders, without panicking.

pub fn check_anie(data: &[u8]) {
    use rigplay::formats::anie::{AnieVersion, AnieWarningKind, AnieWriteErrorKind, AnieFile};

    let Ok(read) = AnieFile::read(data) else { return };
    for w in &read.warnings {
        let _ = w.to_string();
    }
    let p = std::sync::Arc::new(read.file);
    let _ = p.key_parents();
    {
        use rigplay::anie::{cpu::Renderer, eval::Evaluator};
        let renderer = Renderer::new(&p);
        let evaluator = Evaluator::new(std::sync::Arc::clone(&p));
        let small = (p.canvas_width as u64) * (p.canvas_height as u64) <= 256 * 256;
        for frame in [0.0, 0.5, 3.25, -1.0, p.max_frame as f32, 1e9, f32::NAN] {
            let evaluated = evaluator.evaluate(frame);
            if small {
                let _ = renderer.render(&evaluated, 0.5);
            }
        }
    }
    for version in [AnieVersion::V0_8, AnieVersion::V0_7, AnieVersion::V0_5] {
        let bytes = match p.write(version) {
            Ok(bytes) => bytes,
            Err(e) if version < AnieVersion::V0_8 => {
                assert!(
                    matches!(e.kind, AnieWriteErrorKind::NeedsVersion { .. }),
                    "writing {version}: {e}"
                );
                continue;
            }
            Err(e) => panic!("a project that was read must write: {e}"),
        };
        let back = AnieFile::read(&bytes).expect("our own output reads");
        assert_eq!(back.version, version);
        for w in &back.warnings {
            assert!(
                matches!(
                    w.kind,
                    AnieWarningKind::MissingImage { .. }
                        | AnieWarningKind::ResourceWithoutImage { .. }
                        | AnieWarningKind::ImageSizeMismatch { .. }
                ),
                "our own {version} output has a structural warning: {w}"
            );
        }
        assert!(back.file == *p, "read(write(p, {version})) == p");
        assert_eq!(back.file.write(version).expect("writes again"), bytes, "write is a fixed point");
    }
}
