//! Built-in skeletons and binding tracks to bones by id, name and alias.

use glam::{Quat, Vec3};
use rigplay::animation::{BoneRef, BoneTrack, ClipBuilder};
use rigplay::skeleton::{Skeleton, canonical_bone_id};

fn bone(name: &str, id: Option<i32>) -> BoneRef {
    BoneRef {
        name: name.into(),
        id,
    }
}

#[test]
fn sa_skeleton_matches_the_spec_tables() {
    let s = Skeleton::gta_sa();
    assert_eq!(s.bones.len(), 32);
    let by_id = |id| s.bones.iter().find(|b| b.id == Some(id)).unwrap();
    let parent_id = |id| s.bones[by_id(id).parent.unwrap()].id.unwrap();
    // Clavicles hang off the neck, thighs off the pelvis, Belly off Spine, breasts off Spine1.
    assert_eq!(
        (parent_id(21), parent_id(31), parent_id(41), parent_id(51)),
        (4, 4, 1, 1)
    );
    assert_eq!((parent_id(201), parent_id(301), parent_id(302)), (2, 3, 3));
    assert_eq!(by_id(44).name, " L Toe0");
    assert_eq!(by_id(42).rest.translation, Vec3::new(0.4554, 0.0, 0.0));
    // Parents come before children.
    assert!(
        s.bones
            .iter()
            .enumerate()
            .all(|(i, b)| b.parent.is_none_or(|p| p < i))
    );
    assert_eq!(Skeleton::gta_vc().bones.len(), 24);
    assert_eq!(Skeleton::gta_iii().bones.len(), 16);
}

#[test]
fn tracks_bind_by_id_then_name_then_alias() {
    let sa = Skeleton::gta_sa();
    let name_of = |b: &BoneRef, s: &Skeleton| s.find(b).map(|i| s.bones[i].name.clone());
    // By id, whatever the name says (SA ped.ifp binds "DOOR" to id 1).
    assert_eq!(
        name_of(&bone("DOOR", Some(1)), &sa).as_deref(),
        Some(" Pelvis")
    );
    // By name with id -1: leading spaces and case do not matter.
    assert_eq!(
        name_of(&bone("pelvis", None), &sa).as_deref(),
        Some(" Pelvis")
    );
    // Aliases: VC spellings, III names, Root/Normal.
    assert_eq!(
        name_of(&bone("L Fingers", None), &sa).as_deref(),
        Some(" L Finger")
    );
    assert_eq!(
        name_of(&bone("R Forearm", None), &sa).as_deref(),
        Some(" R ForeArm")
    );
    assert_eq!(
        name_of(&bone("L Toe", None), &sa).as_deref(),
        Some(" L Toe0")
    );
    assert_eq!(name_of(&bone("Root", None), &sa).as_deref(), Some("Normal"));
    assert_eq!(
        name_of(&bone("Slowerlegr", None), &sa).as_deref(),
        Some(" R Calf")
    );
    // And the other way: SA names onto the III skeleton, which has no ids.
    let iii = Skeleton::gta_iii();
    assert_eq!(
        name_of(&bone(" R Calf", Some(52)), &iii).as_deref(),
        Some("Slowerlegr")
    );
    assert_eq!(name_of(&bone("HeadNub", Some(303)), &sa), None);
    assert_eq!(canonical_bone_id("bip01lclavicle"), Some(31));

    // VC toes have their own ids.
    let vc = Skeleton::gta_vc();
    assert_eq!(
        name_of(&bone("x", Some(2001)), &vc).as_deref(),
        Some("R Toe0")
    );
}

#[test]
fn binding_reports_unmatched_and_duplicate_tracks() {
    let mut b = ClipBuilder::new("c");
    let t = b.times(&[0.0]).unwrap();
    for (name, id) in [
        ("Normal", Some(0)),
        ("Root", None),
        ("Tail", None),
        (" Head", Some(5)),
    ] {
        let r = b.rotations(t, &[Quat::IDENTITY]).unwrap();
        b.track(BoneTrack {
            bone: bone(name, id),
            rotation: Some(r),
            translation: None,
            scale: None,
        });
    }
    let clip = b.build();
    let sa = Skeleton::gta_sa();
    let binding = sa.bind(&clip);
    assert_eq!(binding.targets, vec![Some(0), None, None, Some(5)]);
    assert_eq!(binding.duplicates, vec![bone("Root", None)]);
    assert_eq!(binding.unmatched, vec![bone("Tail", None)]);
}

#[test]
fn anpk_packages_bind_to_sa_when_they_use_a_bone_id_only_sa_has() {
    use rigplay::formats::ifp::IfpFile;
    use rigplay::skeleton::{GtaGame, is_sa_only_bone_id};
    // Tags 1 and 41 are in VC's ped as well: VC.
    let vc = IfpFile::read(&crate::ifp_fixtures::anpk_with_44_byte_anim()).unwrap();
    assert_eq!(GtaGame::for_ifp(&vc.file), GtaGame::Vc);
    // Belly (201) and L breast (301) exist only in SA's ped: a cutscene package of SA.
    let cs = IfpFile::read(&crate::ifp_fixtures::anpk_sa_cutscene()).unwrap();
    assert_eq!(GtaGame::for_ifp(&cs.file), GtaGame::Sa);
    // The table: SA's toes, jaw, brows, finger joints, belly and breasts; not the shared ones
    // nor the 5000s both games use.
    for id in [6, 7, 8, 26, 36, 44, 54, 201, 301, 302, 305] {
        assert!(is_sa_only_bone_id(id), "{id}");
    }
    for id in [0, 1, 5, 21, 25, 31, 35, 41, 43, 51, 53, 2000, 5001, -1] {
        assert!(!is_sa_only_bone_id(id), "{id}");
    }
    // Every SA-only id is a bone of the SA skeleton or of SA's cutscene extras, and none of the
    // VC skeleton's.
    let vc_skeleton = GtaGame::Vc.skeleton();
    for b in &GtaGame::Sa.skeleton().bones {
        if let Some(id) = b.id
            && is_sa_only_bone_id(id)
        {
            assert!(
                !vc_skeleton.bones.iter().any(|v| v.id == Some(id)),
                "{} ({id}) is in VC's skeleton",
                b.name
            );
        }
    }
}

#[test]
fn gta_iii_adds_translation_keys_to_the_rest_position_where_vc_and_sa_take_them_as_is() {
    // A III clip moving "Smid" by (0.01, 0, 0) and "Swaist" (the root) by (0, 1, 0): III's
    // rule (§3.4) puts each at its rest (the PC `player.dff` table of §4.3: Smid at
    // (0.0451, −0.0708, 0), Swaist at (0.0004, 0.0231, −0.0103)) plus the key. The root's
    // offset is constant, so its displacement (root motion) is the key's.
    let mut b = ClipBuilder::new("nudge");
    for (name, key) in [("Smid", Vec3::new(0.01, 0.0, 0.0)), ("Swaist", Vec3::Y)] {
        let times = b.times(&[0.0, 1.0]).unwrap();
        let translation = b.translations(times, &[Vec3::ZERO, key]).unwrap();
        b.track(BoneTrack {
            bone: BoneRef {
                name: name.into(),
                id: None,
            },
            rotation: None,
            translation: Some(translation),
            scale: None,
        });
    }
    let clip = b.build();
    let iii = Skeleton::gta_iii().additive_translations(&clip);
    let at = |c: &rigplay::animation::Clip, track: usize, t: f32| {
        c.sample_track(track, t).translation.unwrap()
    };
    assert!(at(&iii, 0, 1.0).abs_diff_eq(Vec3::new(0.0551, -0.0708, 0.0), 1e-6));
    assert!(at(&iii, 0, 0.0).abs_diff_eq(Vec3::new(0.0451, -0.0708, 0.0), 1e-6));
    let waist = Vec3::new(0.0004, 0.0231, -0.0103);
    assert!(at(&iii, 1, 1.0).abs_diff_eq(Vec3::Y + waist, 1e-6));
    assert!((at(&iii, 1, 1.0) - at(&iii, 1, 0.0)).abs_diff_eq(Vec3::Y, 1e-6));
    // The original is untouched (VC and SA play it so).
    assert_eq!(at(&clip, 0, 1.0), Vec3::new(0.01, 0.0, 0.0));
}

#[test]
#[allow(clippy::approx_constant)] // the spec's four decimals, not 1/√2
fn the_built_in_iii_ped_is_the_measured_pc_player_model() {
    // §4.3's addendum, typed in from the spec: (frame, parent, position, rotation x y z w) of
    // a real PC GTA III `player.dff`, the root frame at the identity.
    let table: [(&str, &str, [f32; 3], [f32; 4]); 16] = [
        (
            "Swaist",
            "",
            [0.0004, 0.0231, -0.0103],
            [0.0037, -0.7071, -0.0037, 0.7071],
        ),
        (
            "Smid",
            "Swaist",
            [0.0451, -0.0708, 0.0000],
            [0.0, 0.0, -0.0031, 1.0000],
        ),
        (
            "Storso",
            "Smid",
            [0.2084, -0.0002, 0.0],
            [0.0, 0.0, -0.0009, 1.0000],
        ),
        (
            "Shead",
            "Storso",
            [0.4109, 0.1050, 0.0056],
            [0.0, 0.0, 0.0963, 0.9954],
        ),
        (
            "Supperarml",
            "Storso",
            [0.2382, 0.0094, 0.2545],
            [-0.1610, -0.1392, -0.9704, 0.1143],
        ),
        (
            "Slowerarml",
            "Supperarml",
            [0.2807, 0.0004, 0.0010],
            [-0.0002, 0.0001, -0.2161, 0.9764],
        ),
        (
            "SLhand",
            "Slowerarml",
            [0.2803, 0.0005, 0.0],
            [-0.8487, 0.2114, -0.0488, 0.4822],
        ),
        (
            "Supperarmr",
            "Storso",
            [0.2382, 0.0095, -0.2459],
            [0.1608, 0.1324, -0.9716, 0.1126],
        ),
        (
            "Slowerarmr",
            "Supperarmr",
            [0.2802, -0.0004, 0.0005],
            [0.0003, -0.0002, -0.2155, 0.9765],
        ),
        (
            "SRhand",
            "Slowerarmr",
            [0.2803, 0.0001, -0.0001],
            [0.8652, -0.2114, -0.0349, 0.4533],
        ),
        (
            "Supperlegl",
            "Swaist",
            [-0.0357, -0.0156, 0.1116],
            [0.0202, -0.9977, -0.0545, 0.0354],
        ),
        (
            "Slowerlegl",
            "Supperlegl",
            [0.4214, 0.0, 0.0],
            [0.0, 0.0, -0.0709, 0.9975],
        ),
        (
            "Sfootl",
            "Slowerlegl",
            [0.3750, 0.0, 0.0],
            [0.0485, -0.0293, 0.0899, 0.9943],
        ),
        (
            "Supperlegr",
            "Swaist",
            [-0.0357, -0.0156, -0.1116],
            [-0.0184, 0.9977, -0.0545, 0.0355],
        ),
        (
            "Slowerlegr",
            "Supperlegr",
            [0.4214, 0.0, 0.0],
            [0.0, 0.0, -0.0692, 0.9976],
        ),
        (
            "Sfootr",
            "Slowerlegr",
            [0.3750, 0.0, 0.0],
            [-0.0484, 0.0294, 0.0847, 0.9948],
        ),
    ];
    let iii = Skeleton::gta_iii();
    assert_eq!(iii.bones.len(), table.len());
    for (name, parent, p, q) in table {
        let b = iii.bones.iter().find(|b| b.name == name).unwrap();
        let parent_name = b.parent.map_or("", |p| iii.bones[p].name.as_str());
        assert_eq!(parent_name, parent, "{name}'s parent");
        assert!(
            b.rest.translation.abs_diff_eq(Vec3::from_array(p), 1e-4),
            "{name}"
        );
        // The table quotes 4 decimals: the skeleton holds the quaternion normalised, within
        // 1e-4 of the table's (or its negation).
        let want = Quat::from_array(q);
        let r = b.rest.rotation;
        assert!(
            r.abs_diff_eq(want, 1e-4) || r.abs_diff_eq(-want, 1e-4),
            "{name}: {r:?} against {want:?}"
        );
    }
    // What the issue measured against the old estimate: the head 0.41 m along the torso
    // (it was 0.25), the shoulders at (0.238, 0.009, ±0.25) (they were (0.2, 0, ±0.17)).
    let world = iii.model_space(&iii.rest_pose());
    let at = |name: &str| world[iii.bones.iter().position(|b| b.name == name).unwrap()].1;
    // Limb lengths, worked from the table: upper arms 0.2807 / 0.2802 (the lower arm's
    // offset), forearms 0.2803, thighs 0.4214, shins 0.3750.
    for (from, to, length) in [
        ("Supperarml", "Slowerarml", 0.2807),
        ("Supperarmr", "Slowerarmr", 0.2802),
        ("Slowerarml", "SLhand", 0.2803),
        ("Supperlegl", "Slowerlegl", 0.4214),
        ("Slowerlegr", "Sfootr", 0.3750),
        ("Storso", "Shead", 0.4233),
    ] {
        let d = at(to).distance(at(from));
        assert!((d - length).abs() < 1e-3, "{from}→{to}: {d}");
    }
    // The head is above the torso and the waist; the feet are the lowest joints, level with
    // each other within 1 cm, at most 0.832 m below the waist frame: the hip 0.0357 below it
    // (the waist's +X points up), then 0.4214 + 0.3750 of leg, less what the knee's and hip's
    // bends take (0.825 here).
    let (head, torso, waist) = (at("Shead"), at("Storso"), at("Swaist"));
    assert!(
        head.z > torso.z + 0.35 && torso.z > waist.z,
        "{head} {torso} {waist}"
    );
    let (l, r) = (at("Sfootl"), at("Sfootr"));
    assert!((l.z - r.z).abs() < 0.01, "feet level: {l} {r}");
    let lowest = world.iter().map(|w| w.1.z).fold(f32::INFINITY, f32::min);
    assert!((l.z.min(r.z) - lowest).abs() < 1e-6);
    assert!(
        waist.z - l.z > 0.78 && waist.z - l.z <= 0.832,
        "{waist} {l}"
    );
}

#[test]
fn a_model_is_taken_for_the_game_its_bone_names_say() {
    use glam::Mat3;
    use rigplay::formats::dff::{Clump, DffFile, Frame, HAnim, HAnimHierarchy, HAnimNode};
    use rigplay::skeleton::GtaGame;
    // A clump of RenderWare `version` whose frames are `names` under a root, each a bone
    // with HAnim id = its index when `skinned` (the first owning the hierarchy), as the
    // mobile III ped, a VC ped and SA's are built; none without.
    let model = |version: u32, names: &[&str], skinned: bool| {
        let mut frames = vec![Frame {
            rotation: Mat3::IDENTITY,
            position: Vec3::ZERO,
            parent: None,
            flags: 0,
            name: Some("player".into()),
            hanim: None,
        }];
        for (i, name) in names.iter().enumerate() {
            frames.push(Frame {
                rotation: Mat3::IDENTITY,
                position: Vec3::X * 0.1,
                parent: Some(i),
                flags: 0,
                name: Some((*name).into()),
                hanim: skinned.then(|| HAnim {
                    version: 0x100,
                    node_id: i as i32,
                    hierarchy: (i == 0).then(|| HAnimHierarchy {
                        flags: 0,
                        key_frame_size: 36,
                        nodes: (0..names.len() as i32)
                            .map(|id| HAnimNode {
                                id,
                                index: id,
                                flags: 0,
                            })
                            .collect(),
                    }),
                }),
            });
        }
        DffFile {
            clumps: vec![Clump {
                version,
                frames,
                ..Clump::default()
            }],
        }
    };
    let iii = ["Swaist", "Smid", "Storso", "Shead", "Supperarml", "Sfootl"];
    let iii_upper = ["SWAIST", "SMID", "STORSO", "SHEAD"];
    let vc = ["Root", "Pelvis", "Spine", "Spine1", "Neck", "Head"];
    // The skinned mobile III ped: RW 3.4, an HAnim hierarchy, III's names and ids 0–15.
    assert_eq!(GtaGame::for_dff(&model(0x34003, &iii, true)), GtaGame::Iii);
    assert_eq!(
        GtaGame::for_dff(&model(0x34003, &iii_upper, true)),
        GtaGame::Iii
    );
    // A PC III ped of parts: no hierarchy.
    assert_eq!(GtaGame::for_dff(&model(0x31001, &iii, false)), GtaGame::Iii);
    assert_eq!(GtaGame::for_dff(&model(0x31001, &vc, false)), GtaGame::Iii);
    // A skinned VC ped.
    assert_eq!(GtaGame::for_dff(&model(0x34003, &vc, true)), GtaGame::Vc);
    // RenderWare 3.5 and later is SA's, whatever the names.
    assert_eq!(GtaGame::for_dff(&model(0x36003, &vc, true)), GtaGame::Sa);
}

#[test]
fn cutscene_clavicle_keys_in_the_scene_frame_are_not_applied_and_the_hands_stay_on_the_body() {
    use rigplay::animation::BonePose;
    use rigplay::formats::ifp::IfpFile;
    use rigplay::skeleton::GtaGame;
    // A package built like a real SA cutscene (172 keys, the root 8 m from the origin, both
    // clavicles keyed with positions in the scene's frame: see the fixture).
    let package = IfpFile::read(&crate::ifp_fixtures::anpk_sa_cutscene_scene_space(172))
        .unwrap()
        .file;
    let game = GtaGame::for_ifp(&package);
    assert_eq!(game, GtaGame::Sa, "bone tags 0–34 and 201: SA's");
    let skeleton = game.skeleton();
    let clip = package.clip("cs_talk").unwrap().to_clip();
    let (played, unapplied) = skeleton.local_translations(&clip);
    // Only the clavicles' translations are left out; the root's (metres from the origin too,
    // but the root's: the clip's movement) is applied.
    assert_eq!(unapplied, ["R Clavicle", "L Clavicle"]);
    let root = played
        .tracks()
        .iter()
        .position(|t| t.bone.name == "Root")
        .unwrap();
    assert!(played.tracks()[root].translation.is_some());

    // Every key: the skeleton posed by the clip as played, each hand within the arm's reach of
    // Spine1 (the sum of the rest offsets from Spine1 down the arm to the hand), and, as a
    // check that the fixture is the case at hand, metres away when the keys are applied.
    let targets = skeleton.bind(&clip).targets;
    let pose_at = |c: &rigplay::animation::Clip, t: f32| {
        let mut pose: Vec<BonePose> = skeleton.rest_pose();
        for (track, bone) in targets.iter().enumerate() {
            let Some(bone) = bone else { continue };
            let s = c.sample_track(track, t);
            if let Some(r) = s.rotation {
                pose[*bone].rotation = r;
            }
            if let Some(v) = s.translation {
                pose[*bone].translation = v;
            }
        }
        skeleton.model_space(&pose)
    };
    let index = |name: &str| {
        skeleton
            .bones
            .iter()
            .position(|b| b.name.trim() == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let reach = |hand: &str| {
        let (spine1, mut b, mut length) = (index("Spine1"), index(hand), 0.0);
        while b != spine1 {
            length += skeleton.bones[b].rest.translation.length();
            b = skeleton.bones[b].parent.unwrap();
        }
        length
    };
    let mut worst_raw = 0.0f32;
    for k in 0..172 {
        let t = k as f32 / 30.0;
        let (posed, raw) = (pose_at(&played, t), pose_at(&clip, t));
        for hand in ["R Hand", "L Hand"] {
            let d = posed[index(hand)].1.distance(posed[index("Spine1")].1);
            assert!(d <= reach(hand) + 1e-3, "key {k}: {hand} {d} m from Spine1");
            worst_raw = worst_raw.max(raw[index(hand)].1.distance(raw[index("Spine1")].1));
        }
    }
    assert!(
        worst_raw > 3.0,
        "applied, the keys throw the hands {worst_raw} m away"
    );
}
