//! The bundled sample animations: in sync with their generator, and moving as described.

use rigplay::anim::BonePose;
use rigplay::formats::ifp::{IfpPackage, IfpVersion};
use rigplay::skeleton::Skeleton;

#[test]
fn committed_samples_match_their_generator() {
    for (path, bytes) in rigplay_samples::sample_files() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets")
            .join(path);
        let committed = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            committed == bytes,
            "{path} is stale: run `cargo run -p rigplay-samples --bin make-samples`"
        );
    }
}

#[test]
fn sample_walk_moves_forward_and_swings_the_legs() {
    let files = rigplay_samples::sample_files();
    let sa = IfpPackage::read(&files[0].1).unwrap();
    assert!(sa.warnings.is_empty());
    assert_eq!(sa.package.version, IfpVersion::Anp3);
    let vc = IfpPackage::read(&files[1].1).unwrap();
    assert_eq!(vc.package.version, IfpVersion::Anpk);
    let skeleton = Skeleton::gta_sa();
    let walk = sa.package.clip("walk").unwrap().to_clip();
    let binding = skeleton.bind(&walk);
    assert!(binding.unmatched.is_empty() && binding.duplicates.is_empty());
    let pose_at = |t: f32| {
        let mut local = skeleton.rest_pose();
        let mut by_track = vec![BonePose::default(); walk.tracks().len()];
        for (i, target) in binding.targets.iter().enumerate() {
            by_track[i] = local[target.unwrap()];
        }
        walk.sample(t, &mut walk.cursor(), &mut by_track);
        for (i, target) in binding.targets.iter().enumerate() {
            local[target.unwrap()] = by_track[i];
        }
        skeleton.model_space(&local)
    };
    let foot = |pose: &[(glam::Quat, glam::Vec3)], id| {
        pose[skeleton
            .bones
            .iter()
            .position(|b| b.id == Some(id))
            .unwrap()]
        .1
    };
    // Root motion: 1.56 m/s forward (+Y) over the 1.2 s cycle, within int16 quantisation.
    let end = pose_at(1.2);
    assert!((end[0].1.y - 1.872).abs() < 2e-3, "{}", end[0].1);
    // A quarter cycle in, the left foot is ahead of the right; three quarters in, behind.
    let (q1, q3) = (pose_at(0.3), pose_at(0.9));
    assert!(foot(&q1, 43).y - q1[0].1.y > foot(&q1, 53).y - q1[0].1.y + 0.2);
    assert!(foot(&q3, 43).y - q3[0].1.y < foot(&q3, 53).y - q3[0].1.y - 0.2);
    // The wave animates the right arm only.
    let wave = sa.package.clip("wave").unwrap();
    assert_eq!(
        wave.sequences.iter().map(|s| s.bone_id).collect::<Vec<_>>(),
        [21, 22, 23, 24]
    );
}
