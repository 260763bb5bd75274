//! Motion capture into the games: the `.bvh` reader against a file written by hand (values
//! worked out in the comments), its errors on broken files, and a mocap walk imported onto the
//! peds of all three games, read back from the written IFP bytes and played on the built-in
//! skeleton: every limb points where the mocap's does, the hips move by the scaled amount.

use crate::bvh_fixtures::mocap_walk;
use crate::retarget_characters::{CHAINS, both_directed, size_of};
use glam::{Quat, Vec3};
use rigplay::animation::retarget::{BoneMap, HumanoidBone};
use rigplay::animation::{BonePose, Clip};
use rigplay::convert::import::{bvh_source, clip_to_gta, gta_package};
use rigplay::coords::GTA_TO_GLTF;
use rigplay::formats::bvh::{BvhChannel, BvhErrorKind, BvhFile};
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::GtaGame;

const SMALL: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 0.0 90.0 0.0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Left Up Leg
\t{
\t\tOFFSET 10 -5 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -40 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.5
1 90 2  0 0 0  0 0 0
1 91 4  90 0 0  30 90 0
";

#[test]
fn a_small_bvh_reads_field_by_field() {
    let read = BvhFile::read(SMALL.as_bytes()).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let bvh = read.file;
    assert_eq!(bvh.joints.len(), 2);
    assert_eq!(bvh.joints[0].name, "Hips");
    // A name with spaces, read to the end of its line.
    assert_eq!(bvh.joints[1].name, "Left Up Leg");
    assert_eq!(bvh.joints[1].parent, Some(0));
    assert_eq!(bvh.joints[1].offset, Vec3::new(10.0, -5.0, 0.0));
    assert_eq!(bvh.joints[1].end_site, Some(Vec3::new(0.0, -40.0, 0.0)));
    assert_eq!(bvh.joints[1].first_channel, 6);
    assert_eq!(
        bvh.joints[0].channels,
        [
            BvhChannel::Xposition,
            BvhChannel::Yposition,
            BvhChannel::Zposition,
            BvhChannel::Zrotation,
            BvhChannel::Xrotation,
            BvhChannel::Yrotation
        ]
    );
    assert_eq!((bvh.frames(), bvh.channels(), bvh.frame_time), (2, 9, 0.5));
    // Frame 1: the hips at (1, 91, 4) (the position channels are the translation itself),
    // turned 90° about Z.
    let (t, r) = bvh.local(0, 1);
    assert_eq!(t, Vec3::new(1.0, 91.0, 4.0));
    assert!(r.dot(Quat::from_rotation_z(90f32.to_radians())).abs() > 1.0 - 1e-6);
    // The leg: Zrotation 30, Xrotation 90, Yrotation 0, in that order: Rz(30°)·Rx(90°).
    let (t, r) = bvh.local(1, 1);
    assert_eq!(
        t,
        Vec3::new(10.0, -5.0, 0.0),
        "no position channels: the offset"
    );
    let want =
        Quat::from_rotation_z(30f32.to_radians()) * Quat::from_rotation_x(90f32.to_radians());
    assert!(r.dot(want).abs() > 1.0 - 1e-6, "{r} vs {want}");
    // Rx(90°) takes the bone's −Y to −Z (a leg swung back... or forward, depending on facing);
    // then Rz(30°) turns that about Z, which leaves −Z: the end site at (0, 0, −40).
    assert!((r * Vec3::new(0.0, -40.0, 0.0)).abs_diff_eq(Vec3::new(0.0, 0.0, -40.0), 1e-4));
    // As a clip: a key per frame at 0 and 0.5 s.
    let clip = bvh.to_clip("small");
    assert_eq!(clip.tracks().len(), 2);
    assert_eq!(clip.duration(), 0.5);
    let s = clip.sample_track(0, 0.5);
    assert_eq!(s.translation, Some(Vec3::new(1.0, 91.0, 4.0)));
    assert!(clip.tracks()[1].translation.is_none());
}

#[test]
fn broken_bvh_files_are_refused_with_the_byte_and_what_was_expected() {
    let cut = &SMALL[..SMALL.find("MOTION").unwrap() - 3];
    let e = BvhFile::read(cut.as_bytes()).unwrap_err();
    assert!(matches!(e.kind, BvhErrorKind::Truncated { .. }), "{e}");
    let bad = SMALL.replace("OFFSET 10 -5 0", "OFFSET 10 -x 0");
    let e = BvhFile::read(bad.as_bytes()).unwrap_err();
    assert_eq!(e.offset, bad.find("-x").unwrap());
    assert!(e.to_string().contains("\"-x\""), "{e}");
    let nan = SMALL.replace("1 91 4", "1 NaN 4");
    assert!(matches!(
        BvhFile::read(nan.as_bytes()).unwrap_err().kind,
        BvhErrorKind::BadNumber { .. }
    ));
    let seven = SMALL.replace("CHANNELS 3 Zrotation", "CHANNELS 7 Zrotation");
    assert!(matches!(
        BvhFile::read(seven.as_bytes()).unwrap_err().kind,
        BvhErrorKind::TooMany { .. }
    ));
    let not_text = [b"HIERARCHY\n".as_slice(), &[0xff, 0xfe, 0x00]].concat();
    assert_eq!(
        BvhFile::read(&not_text).unwrap_err().kind,
        BvhErrorKind::NotText
    );
    assert!(BvhFile::read(b"").is_err());
    assert!(BvhFile::read(b"HIERARCHY\nMOTION\nFrames: 0\nFrame Time: 0.1\n").is_err());
    // A frame count that disagrees with the rows: what is there is read, and said.
    let more = SMALL.replace("Frames: 2", "Frames: 2000000000");
    let read = BvhFile::read(more.as_bytes()).unwrap();
    assert_eq!(read.file.frames(), 2);
    assert!(!read.warnings.is_empty());
    // A cut last row: left out, and said.
    let short = SMALL.trim_end().trim_end_matches("30 90 0").to_owned();
    let read = BvhFile::read(short.as_bytes()).unwrap();
    assert_eq!(read.file.frames(), 1);
    assert!(!read.warnings.is_empty());
    // Every prefix and a byte flipped at every place: an error or a file, never a panic.
    for cut in 0..SMALL.len() {
        let _ = BvhFile::read(&SMALL.as_bytes()[..cut]);
        let mut flipped = SMALL.as_bytes().to_vec();
        flipped[cut] ^= 0x5a;
        let _ = BvhFile::read(&flipped);
    }
}

/// World positions (the file's axes) of every joint of the BVH in frame `f`, worked out here
/// from the parents and local transforms.
fn bvh_positions(bvh: &BvhFile, f: usize) -> Vec<Vec3> {
    let mut world: Vec<(Vec3, Quat)> = Vec::new();
    for (j, joint) in bvh.joints.iter().enumerate() {
        let (t, r) = bvh.local(j, f);
        world.push(match joint.parent {
            Some(p) => (world[p].0 + world[p].1 * t, world[p].1 * r),
            None => (t, r),
        });
    }
    world.into_iter().map(|w| w.0).collect()
}

/// World positions (glTF axes) of every bone of `game`'s ped playing `clip` at `t`.
fn gta_positions(game: GtaGame, clip: &Clip, t: f32) -> Vec<Vec3> {
    let skeleton = game.skeleton();
    let mut local: Vec<BonePose> = skeleton.rest_pose();
    for (track, target) in skeleton.bind(clip).targets.iter().enumerate() {
        if let Some(b) = target {
            let s = clip.sample_track(track, t);
            if let Some(r) = s.rotation {
                local[*b].rotation = r;
            }
            if let Some(p) = s.translation {
                local[*b].translation = p;
            }
        }
    }
    skeleton
        .model_space(&local)
        .into_iter()
        .map(|(_, p)| GTA_TO_GLTF * p)
        .collect()
}

/// How far `positions` (glTF axes, per bone of `game`'s ped, at a time) strays from the mocap
/// `bvh` at every third frame: the worst angle between a limb of the ped and the same limb of the
/// mocap (and where), the limbs compared, and the hips' distance from where the mocap's hips,
/// scaled by `hips_scale`, put them.
fn against_mocap(
    bvh: &BvhFile,
    game: GtaGame,
    hips_scale: f32,
    positions: impl Fn(f32) -> Vec<Vec3>,
) -> (f32, String, usize, f32) {
    let bvh_names: Vec<&str> = bvh.joints.iter().map(|j| j.name.as_str()).collect();
    let (_, bvh_map) = BoneMap::detect(&bvh_names);
    let skeleton = game.skeleton();
    let names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
    let (_, gta_map) = BoneMap::detect(&names);
    let (mut worst, mut at, mut compared) = (0.0f32, String::new(), 0);
    let mut hips_error = 0.0f32;
    let (h_bvh, h_gta) = (
        bvh_map.get(HumanoidBone::Hips).unwrap(),
        gta_map.get(HumanoidBone::Hips).unwrap(),
    );
    let (bvh0, gta0) = (bvh_positions(bvh, 0)[h_bvh], positions(0.0)[h_gta]);
    for f in (0..37).step_by(3) {
        let t = f as f32 / 30.0;
        let (b, g) = (bvh_positions(bvh, f), positions(t));
        let (b_size, g_size) = (size_of(&b), size_of(&g));
        for chain in CHAINS {
            let both: Vec<(usize, usize, HumanoidBone)> = chain
                .iter()
                .filter_map(|&h| Some((bvh_map.get(h)?, gta_map.get(h)?, h)))
                .collect();
            for w in both.windows(2) {
                let d_bvh = b[w[1].0] - b[w[0].0];
                let d_gta = g[w[1].1] - g[w[0].1];
                if !both_directed(d_bvh, b_size, d_gta, g_size) {
                    continue;
                }
                let angle = d_bvh.angle_between(d_gta).to_degrees();
                compared += 1;
                if angle > worst {
                    (worst, at) = (angle, format!("{:?} at {t:.3} s", w[0].2));
                }
            }
        }
        // The hips move as the mocap's, scaled.
        let moved = (b[h_bvh] - bvh0) * hips_scale;
        hips_error = hips_error.max((g[h_gta] - gta0 - moved).length());
    }
    (worst, at, compared, hips_error)
}

#[test]
fn a_mocap_walk_imported_onto_every_games_ped_points_every_limb_where_the_mocap_does() {
    let text = mocap_walk(37);
    let bvh = BvhFile::read(text.as_bytes()).unwrap().file;
    assert_eq!(bvh.joints.len(), 22);
    let source = bvh_source(&bvh);
    let clip = bvh.to_clip("mocap_walk");
    for game in [GtaGame::Sa, GtaGame::Vc, GtaGame::Iii] {
        let (ifp_clip, report) = clip_to_gta(&source, &clip, "mocap_walk", game, &[]).unwrap();
        assert!(report.pairs.len() >= 14, "{game:?}: {:?}", report.pairs);
        // The ped's hip height over the mocap's (95 cm up, feet 95 − 6 − 42 − 40 − 6 = 1 cm
        // above the floor at the toes: a hip height of 94 cm): about 1.04 / 94.
        assert!(
            report.hips_scale > 0.008 && report.hips_scale < 0.013,
            "{game:?}: {}",
            report.hips_scale
        );
        // Written, read back as the game would, and played on the built-in ped.
        let (package, _) = gta_package(game, "mocap", vec![ifp_clip]);
        let bytes = package.write().unwrap();
        let read = IfpFile::read(&bytes).unwrap().file;
        let skeleton = game.skeleton();
        let (played, dropped) =
            skeleton.clip_as_played(game, &read.clips().next().unwrap().to_clip());
        assert!(dropped.is_empty(), "{game:?}: {dropped:?}");
        let (worst, at, compared, hips_error) = against_mocap(&bvh, game, report.hips_scale, |t| {
            gta_positions(game, &played, t)
        });
        eprintln!(
            "{game:?}: {compared} directions, worst {worst:.3}° ({at}); hips within {hips_error:.5} m; {} keys a bone at {} a second",
            report.keys_per_bone, report.rate
        );
        assert!(compared >= 13 * 10, "{game:?}: {compared}");
        // 2°: the bound GTA clips on glTF characters are held to the other way round.
        assert!(worst < 2.0, "{game:?}: {worst:.3}° at {at}");
        // Within 1 cm of where the scaled mocap puts the hips (int16 ANP3 translations are
        // 1/1024 m steps).
        assert!(hips_error < 0.01, "{game:?}: hips off by {hips_error} m");
    }
}

/// The same walk imported as a DelDX `.dan` for each game: the written file read back holds
/// one bone per bone of the ped, in model space (Bevy's axes, metres, on the ground), and its
/// bones point every limb where the mocap's do, its hips moving as the scaled mocap's. The
/// `.dan.meta` names the bones and links them to their parents.
#[test]
fn a_mocap_walk_imported_as_dan_holds_every_bone_in_model_space() {
    use rigplay::formats::dan::{DanClipOptions, DanFile};
    let text = mocap_walk(37);
    let bvh = BvhFile::read(text.as_bytes()).unwrap().file;
    let source = bvh_source(&bvh);
    let clip = bvh.to_clip("mocap_walk");
    for game in [GtaGame::Sa, GtaGame::Vc, GtaGame::Iii] {
        let (ifp_clip, report) = clip_to_gta(&source, &clip, "mocap_walk", game, &[]).unwrap();
        let dan = rigplay::convert::import::gta_dan(&ifp_clip, game).unwrap();
        let skeleton = game.skeleton();
        assert_eq!(dan.file.bones.len(), skeleton.bones.len());
        assert_eq!(dan.names[1], skeleton.bones[1].name);
        let meta = dan.meta();
        assert!(
            meta.contains(&format!("{:?}", skeleton.bones[1].name)),
            "{meta}"
        );
        assert!(meta.contains("bone_links: [None, Some(0)"), "{meta}");
        let read = DanFile::read(&dan.file.write().unwrap()).unwrap();
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let played = read.file.to_clip("walk", &DanClipOptions::default());
        // Every bone keyed in model space: its position at t is where it is. Bevy's axes face
        // −Z, the mocap's and glTF's +Z: half a turn about Y.
        let turn = Quat::from_rotation_y(std::f32::consts::PI);
        let positions = |t: f32| -> Vec<Vec3> {
            (0..played.tracks().len())
                .map(|b| turn * played.sample_track(b, t).translation.unwrap())
                .collect()
        };
        // Standing on the ground: the lowest bone at rest height 0 at the start, give or take
        // the mocap's own stance.
        let lowest = positions(0.0)
            .iter()
            .map(|p| p.y)
            .fold(f32::INFINITY, f32::min);
        assert!(lowest.abs() < 0.1, "{game:?}: lowest bone at {lowest} m");
        let (worst, at, compared, hips_error) =
            against_mocap(&bvh, game, report.hips_scale, positions);
        eprintln!(
            "{game:?} as .dan: {compared} directions, worst {worst:.3}° ({at}); hips within {hips_error:.5} m"
        );
        assert!(compared >= 13 * 10, "{game:?}: {compared}");
        assert!(worst < 2.0, "{game:?}: {worst:.3}° at {at}");
        assert!(hips_error < 0.01, "{game:?}: hips off by {hips_error} m");
    }
}

include!("../fuzz/oracles/bvh.rs");

#[test]
fn the_fuzz_oracle_holds_on_the_fixtures_cut_and_flipped() {
    let walk = mocap_walk(9);
    for text in [SMALL, walk.as_str()] {
        check_bvh(text.as_bytes());
        for cut in (0..text.len()).step_by(7) {
            check_bvh(&text.as_bytes()[..cut]);
            let mut flipped = text.as_bytes().to_vec();
            flipped[cut] ^= 0x21;
            check_bvh(&flipped);
        }
    }
}

#[test]
fn a_users_map_pairs_bones_whose_names_say_nothing() {
    // The thighs renamed to what no convention knows: unpaired (they keep the ped's rest), and
    // the legs below them follow the mocap from the wrong place. A map pairs them again.
    let text = mocap_walk(19)
        .replace("LeftUpLeg", "jnt_07")
        .replace("RightUpLeg", "jnt_08");
    let bvh = BvhFile::read(text.as_bytes()).unwrap().file;
    let source = bvh_source(&bvh);
    let clip = bvh.to_clip("walk");
    let (_, report) = clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &[]).unwrap();
    assert!(
        report.unmatched.contains(&HumanoidBone::LeftUpperLeg),
        "{:?}",
        report.unmatched
    );
    let map = vec![
        ("jnt_07".to_owned(), "L Thigh".to_owned()),
        ("jnt_08".to_owned(), "R Thigh".to_owned()),
        ("no_such_bone".to_owned(), "Head".to_owned()),
    ];
    let (ifp_clip, report) = clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &map).unwrap();
    assert!(
        !report.unmatched.contains(&HumanoidBone::LeftUpperLeg),
        "{:?}",
        report.unmatched
    );
    assert!(
        // (SA's names as its model spells them, with a leading space.)
        report
            .pairs
            .iter()
            .any(|(s, t)| s == "jnt_07" && t.trim() == "L Thigh"),
        "{:?}",
        report.pairs
    );
    assert_eq!(report.map_problems.len(), 1, "{:?}", report.map_problems);
    // The left thigh now swings as the mocap's: its knee where the mocap's is, relative to
    // the hip, at the swing's peak (0.3 s: 30° forward).
    let read = IfpFile::read(
        &gta_package(GtaGame::Sa, "walk", vec![ifp_clip])
            .0
            .write()
            .unwrap(),
    )
    .unwrap()
    .file;
    let skeleton = GtaGame::Sa.skeleton();
    let (played, _) = skeleton.clip_as_played(GtaGame::Sa, &read.clips().next().unwrap().to_clip());
    let names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
    let (_, gta_map) = BoneMap::detect(&names);
    let bvh_names: Vec<&str> = bvh.joints.iter().map(|j| j.name.as_str()).collect();
    let (thigh, knee) = (
        bvh_names.iter().position(|n| *n == "jnt_07").unwrap(),
        bvh_names.iter().position(|n| *n == "LeftLeg").unwrap(),
    );
    let b = bvh_positions(&bvh, 9);
    let g = gta_positions(GtaGame::Sa, &played, 0.3);
    let d_bvh = b[knee] - b[thigh];
    let d_gta = g[gta_map.get(HumanoidBone::LeftLowerLeg).unwrap()]
        - g[gta_map.get(HumanoidBone::LeftUpperLeg).unwrap()];
    let angle = d_bvh.angle_between(d_gta).to_degrees();
    assert!(angle < 2.0, "the thigh points {angle:.2}° off");
}

#[test]
fn a_skeleton_without_humanoid_names_is_refused_with_its_names() {
    let read = BvhFile::read(SMALL.as_bytes()).unwrap().file;
    let source = bvh_source(&read);
    let e = clip_to_gta(&source, &read.to_clip("x"), "x", GtaGame::Sa, &[]).unwrap_err();
    assert!(e.to_string().contains("Hips"), "{e}");
}

/// The mocap walk imported onto the bundled sample ped's own bones (`--model ped.dff`): its
/// frames are the built-in SA table's offsets and its root rests as the built-in one does, so
/// the keys are the built-in ped's; and onto the same model made 1.25 times taller (every
/// frame's offset scaled), the rotations stay and the hips move 1.25 times as far.
#[test]
fn a_walk_imported_onto_a_models_bones_fits_its_proportions() {
    use rigplay::convert::import::clip_to_ped;
    use rigplay::formats::dff::DffFile;
    use rigplay::model::Model;
    let bvh = BvhFile::read(mocap_walk(37).as_bytes()).unwrap().file;
    let source = bvh_source(&bvh);
    let clip = bvh.to_clip("walk");
    let dff = DffFile::read(&crate::assets::read("characters/ped.dff"))
        .unwrap()
        .file;
    let model = Model::new(&dff, GtaGame::Sa, &[]);
    let ped = model.clumps[0].bone_skeleton("ped");
    assert_eq!(ped.bones.len(), 32);
    let mut tall = model.clumps[0].clone();
    for f in &mut tall.frames {
        f.rest.translation *= 1.25;
    }
    let tall = tall.bone_skeleton("tall");
    let (built_in, r0) = clip_to_gta(&source, &clip, "walk", GtaGame::Sa, &[]).unwrap();
    let (on_model, r1) = clip_to_ped(&source, &clip, "walk", GtaGame::Sa, &ped, &[]).unwrap();
    let (on_tall, r2) = clip_to_ped(&source, &clip, "walk", GtaGame::Sa, &tall, &[]).unwrap();
    assert_eq!(r1.pairs.len(), r0.pairs.len());
    assert!((r1.hips_scale - r0.hips_scale).abs() < 1e-4 * r0.hips_scale);
    assert!(
        (r2.hips_scale / r1.hips_scale - 1.25).abs() < 1e-3,
        "{} vs {}",
        r2.hips_scale,
        r1.hips_scale
    );
    let angle = |a: &rigplay::formats::ifp::IfpClip, b: &rigplay::formats::ifp::IfpClip| {
        let mut worst = 0.0f32;
        for (sa, sb) in a.sequences.iter().zip(&b.sequences) {
            assert_eq!(sa.bone_id, sb.bone_id, "{}", sa.name);
            for (ka, kb) in sa.keys.iter().zip(&sb.keys) {
                let (qa, qb) = (Quat::from_array(ka.rotation), Quat::from_array(kb.rotation));
                worst = worst.max(2.0 * (qa.conjugate() * qb).xyz().length().min(1.0).asin());
            }
        }
        worst
    };
    let (same, taller) = (angle(&built_in, &on_model), angle(&on_model, &on_tall));
    eprintln!(
        "onto the sample ped's bones: {same:e} rad from the built-in ped; 1.25 taller: {taller:e} rad"
    );
    assert!(same < 1e-4, "{same} rad");
    assert!(taller < 1e-4, "{taller} rad");
    // The root's movement, 1.25 times as far on the taller ped.
    let root = |c: &rigplay::formats::ifp::IfpClip| {
        let keys = &c.sequences[0].keys;
        Vec3::from_array(keys.last().unwrap().translation) - Vec3::from_array(keys[0].translation)
    };
    let ratio = root(&on_tall).length() / root(&on_model).length();
    assert!((ratio - 1.25).abs() < 1e-3, "{ratio}");
}
