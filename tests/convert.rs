//! `rigplay::convert`: an IFP package in another version, with fewer keys.

use crate::bytes::Bytes;
use crate::ifp_fixtures::anpk_with_44_byte_anim;
use rigplay::animation::reduce::{ErrorStats, KeyReduction, ReduceOptions, ReduceStats};
use rigplay::convert::{IfpConversion, IfpConvertOptions, convert_ifp};
use rigplay::formats::ifp::{IfpFile, IfpVersion};
use rigplay::skeleton::Skeleton;

fn package(path: &str) -> IfpFile {
    IfpFile::read(&crate::assets::read(path))
        .expect("the sample reads")
        .file
}

fn convert(p: &IfpFile, version: IfpVersion, reduction: KeyReduction) -> IfpConversion {
    let options = IfpConvertOptions {
        version,
        reduction,
        measure: Some(0.03),
    };
    convert_ifp(p, &Skeleton::for_ifp(p), &options)
}

#[test]
fn samples_convert_to_every_version_and_read_back_as_written() {
    let bounded = KeyReduction::Bounded(ReduceOptions {
        tolerance: 0.002,
        shell_radius: 0.03,
    });
    for path in ["anims/sa_ped.ifp", "anims/vc_ped.ifp"] {
        let p = package(path);
        for version in [IfpVersion::Anpk, IfpVersion::Anp3, IfpVersion::Anp2] {
            for reduction in [KeyReduction::None, KeyReduction::Runs, bounded] {
                let c = convert(&p, version, reduction);
                let bytes = c.bytes.as_ref().expect("the samples can be written");
                let back = IfpFile::read(bytes).expect("what was written reads");
                assert!(back.warnings.is_empty(), "{:?}", back.warnings);
                assert_eq!(back.file.version, version);
                assert!(
                    back.file.write().as_ref() == Ok(bytes),
                    "{path} {version} {reduction:?}: the file does not write back the same"
                );
                assert_eq!(c.package.clips().count(), p.clips().count());
                assert!(c.keys_after <= c.keys_before);
                let error = c.error.expect("measured");
                match reduction {
                    KeyReduction::None => {
                        assert!(c.reduction.is_none());
                        assert_eq!(c.keys_after, c.keys_before);
                    }
                    KeyReduction::Runs => {
                        let stats = c.reduction.unwrap();
                        assert_eq!(stats.keys_before, c.keys_before);
                        assert_eq!(stats.keys_after, c.keys_after);
                    }
                    KeyReduction::Bounded(o) => {
                        let stats = c.reduction.unwrap();
                        assert!(stats.keys_after * 2 < stats.keys_before, "{stats:?}");
                        assert!(stats.error.max <= o.tolerance);
                        // ANP3's int16 keys add their rounding (rotations 1/4096, translations
                        // 1/1024 m) to the reduction's error.
                        assert!(error.max <= o.tolerance + 2e-3, "{error:?}");
                    }
                }
                if version == IfpVersion::Anpk && reduction == KeyReduction::None {
                    assert!(error.max < 1e-5, "floats are exact: {error:?}");
                }
            }
        }
    }
}

#[test]
fn the_same_settings_give_the_same_bytes_and_measuring_changes_none() {
    let p = package("anims/vc_ped.ifp");
    let skeleton = Skeleton::for_ifp(&p);
    let mut options = IfpConvertOptions {
        version: IfpVersion::Anp3,
        reduction: KeyReduction::Runs,
        measure: None,
    };
    let a = convert_ifp(&p, &skeleton, &options);
    assert_eq!(a.error, None, "not asked for");
    options.measure = Some(0.03);
    let b = convert_ifp(&p, &skeleton, &options);
    assert_eq!(a.bytes, b.bytes);
    assert!(b.error.is_some());
}

#[test]
fn anlf_blocks_merge_with_a_note_and_empty_packages_convert() {
    let mut b = Bytes::new();
    b.section(b"ANLF", |b| {
        b.u32(2);
    });
    b.raw(&anpk_with_44_byte_anim())
        .raw(&anpk_with_44_byte_anim());
    let p = IfpFile::read(&b.done()).unwrap().file;
    let c = convert(&p, IfpVersion::Anp3, KeyReduction::Runs);
    assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
    assert!(c.notes[0].contains("merged"), "{:?}", c.notes);
    assert_eq!(c.package.blocks.len(), 1);
    assert_eq!(c.package.clips().count(), 2);
    assert!(c.bytes.is_ok());

    let empty = IfpFile {
        version: IfpVersion::Anpk,
        anlf: true,
        blocks: Vec::new(),
    };
    for version in [IfpVersion::Anpk, IfpVersion::Anp3, IfpVersion::Anp2] {
        let c = convert(&empty, version, KeyReduction::Bounded(Default::default()));
        assert_eq!((c.keys_before, c.keys_after), (0, 0));
        assert_eq!(c.reduction, Some(ReduceStats::default()));
        assert_eq!(c.error, Some(ErrorStats::default()));
        IfpFile::read(&c.bytes.unwrap()).expect("reads back");
    }
}

#[test]
fn a_package_that_cannot_be_written_says_why_without_panicking() {
    let mut p = package("anims/sa_ped.ifp");
    p.blocks[0].clips[0].name = "wálk\u{2603}".to_owned();
    let c = convert(&p, IfpVersion::Anpk, KeyReduction::Runs);
    let e = c.bytes.expect_err("a snowman is not Latin-1");
    assert!(e.to_string().contains("Latin-1"), "{e}");
    assert_eq!(c.error, None, "nothing written, nothing measured");
    assert!(c.reduction.is_some());
}

#[test]
fn combined_stats_sum_keys_and_keep_the_worst_errors() {
    let s = |before, after, max, p99| ReduceStats {
        keys_before: before,
        keys_after: after,
        error: ErrorStats {
            max,
            p99,
            samples: 10,
        },
    };
    let all = ReduceStats::combined(&[s(10, 4, 0.5, 0.1), s(6, 6, 0.2, 0.3)]);
    let mut want = s(16, 10, 0.5, 0.3);
    want.error.samples = 20;
    assert_eq!(all, want);
    assert_eq!(ReduceStats::combined(&[]), ReduceStats::default());
}
