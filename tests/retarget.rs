//! Retargeting: bone-name presets, rest-pose alignment and the change of basis.

use glam::{Quat, Vec3};
use rigplay::animation::retarget::{
    BoneMap, BonePreset, HumanoidBone, RestAlignment, RestPose, RestPoseError, RetargetError,
    Retargeter, SkipReason, hips_translation_scale, retarget_root_translation,
};
use rigplay::coords::{GTA_TO_BEVY, gta_quat_to_bevy, gta_vec_to_bevy};
use rigplay::skeleton::{Skeleton, bone_key, canonical_bone_id};
use std::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, FRAC_PI_4, FRAC_PI_6};

/// `a` and `b` are the same rotation (a quaternion or its negation), component-wise within `eps`.
fn same_rotation(a: Quat, b: Quat, eps: f32) -> bool {
    a.abs_diff_eq(b, eps) || a.abs_diff_eq(-b, eps)
}

fn close(a: Vec3, b: Vec3, eps: f32) -> bool {
    (a - b).length() <= eps
}

/// World rotations (and positions) of a pose: local rotations with the rest translations.
fn world(rest: &RestPose, local: &[Quat]) -> Vec<(Vec3, Quat)> {
    let posed = RestPose {
        parents: rest.parents.clone(),
        local: rest
            .local
            .iter()
            .zip(local)
            .map(|(&(t, _), &r)| (t, r))
            .collect(),
    };
    posed.world().unwrap()
}

fn rest_rotations(rest: &RestPose) -> Vec<Quat> {
    rest.local.iter().map(|&(_, r)| r).collect()
}

/// A small tree: 0 root; 1 up from 0; 2 up from 1; 3 sideways from 1 (a branch); 4 from 3.
fn source_tree() -> RestPose {
    RestPose {
        parents: vec![None, Some(0), Some(1), Some(1), Some(3)],
        local: vec![
            (Vec3::new(0.0, 1.0, 0.0), Quat::from_rotation_y(0.2)),
            (Vec3::new(0.0, 0.5, 0.0), Quat::from_rotation_z(0.3)),
            (Vec3::new(0.0, 0.4, 0.1), Quat::from_rotation_x(-0.2)),
            (Vec3::new(0.3, 0.1, 0.0), Quat::from_rotation_z(-0.5)),
            (Vec3::new(0.25, 0.0, 0.0), Quat::IDENTITY),
        ],
    }
}

fn identity_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i, i)).collect()
}

/// Some pose of the tree.
fn tree_pose() -> Vec<Quat> {
    vec![
        Quat::from_euler(glam::EulerRot::XYZ, 0.1, -0.4, 0.2),
        Quat::from_rotation_z(0.9),
        Quat::from_euler(glam::EulerRot::YXZ, 0.5, 0.3, -0.7),
        Quat::from_rotation_x(1.2),
        Quat::from_rotation_y(-0.6),
    ]
}

#[test]
fn identical_skeletons_copy_the_source_rotations() {
    // C = 1, A = 1 (same directions), T = Ws_rest⁻¹ · Wt_rest = 1: target local = source local.
    let rest = source_tree();
    let r = Retargeter::new(&rest, &rest, &identity_pairs(5), Quat::IDENTITY).unwrap();
    assert!(r.skipped().is_empty());
    let pose = tree_pose();
    let mut out = vec![Quat::IDENTITY; 5];
    r.apply(&pose, &mut out);
    for (o, p) in out.iter().zip(&pose) {
        assert!(same_rotation(*o, *p, 1e-6), "{o} vs {p}");
    }
    // The rest pose maps to the rest pose.
    r.apply(&rest_rotations(&rest), &mut out);
    for (o, p) in out.iter().zip(rest_rotations(&rest)) {
        assert!(same_rotation(*o, p, 1e-6));
    }
}

#[test]
fn target_bone_axes_do_not_matter_only_directions_do() {
    // The target has the same joint positions but every bone's frame turned 90° about its own
    // X: Wt_rest = Ws_rest · Rx. Locals follow: rotation Rx⁻¹ · ls · Rx (root: ls · Rx),
    // translation Rx⁻¹ · ts (root: unchanged).
    let source = source_tree();
    let rx = Quat::from_rotation_x(FRAC_PI_2);
    let target = RestPose {
        parents: source.parents.clone(),
        local: source
            .local
            .iter()
            .zip(&source.parents)
            .map(|(&(t, r), p)| match p {
                None => (t, r * rx),
                Some(_) => (rx.inverse() * t, rx.inverse() * r * rx),
            })
            .collect(),
    };
    let ws = source.world().unwrap();
    let wt = target.world().unwrap();
    for (s, t) in ws.iter().zip(&wt) {
        assert!(close(s.0, t.0, 1e-5), "same joint positions");
        assert!(same_rotation(s.1 * rx, t.1, 1e-5), "frames turned by Rx");
    }
    let r = Retargeter::new(&source, &target, &identity_pairs(5), Quat::IDENTITY).unwrap();
    for bone in 0..5 {
        // Same rest directions: no alignment.
        assert!(same_rotation(
            r.alignment(bone).unwrap(),
            Quat::IDENTITY,
            1e-5
        ));
    }
    let pose = tree_pose();
    let mut out = vec![Quat::IDENTITY; 5];
    r.apply(&pose, &mut out);
    let ps = world(&source, &pose);
    let pt = world(&target, &out);
    for bone in 0..5 {
        // Posed frames differ by the same Rx: Wt_pose = Δs · Wt_rest = Ws_pose · Rx.
        assert!(same_rotation(ps[bone].1 * rx, pt[bone].1, 1e-5));
        // So every joint lands where the source's does, and every bone points the same way.
        assert!(close(ps[bone].0, pt[bone].0, 1e-5));
        if let Some(p) = source.parents[bone] {
            let ds = (ps[bone].0 - ps[p].0).normalize();
            let dt = (pt[bone].0 - pt[p].0).normalize();
            assert!(close(ds, dt, 1e-5), "bone {bone}: {ds} vs {dt}");
        }
    }
}

/// A chest (0), an upper arm (1) at (0.2, 0, 0) and a hand (2) 0.3 along the arm's local X.
/// The arm's rest rotation is `arm` about Z: Rz(−45°) is an A pose (arm 45° down), 1 a T pose.
fn arm(arm: Quat) -> RestPose {
    RestPose {
        parents: vec![None, Some(0), Some(1)],
        local: vec![
            (Vec3::ZERO, Quat::IDENTITY),
            (Vec3::new(0.2, 0.0, 0.0), arm),
            (Vec3::new(0.3, 0.0, 0.0), Quat::IDENTITY),
        ],
    }
}

fn arm_direction(pose: &RestPose, local: &[Quat]) -> Vec3 {
    let w = world(pose, local);
    (w[2].0 - w[1].0).normalize()
}

#[test]
fn t_pose_target_plays_an_a_pose_source() {
    let a_pose = arm(Quat::from_rotation_z(-FRAC_PI_4));
    let t_pose = arm(Quat::IDENTITY);
    let pairs = identity_pairs(3);
    let down45 = Vec3::new(FRAC_1_SQRT_2, -FRAC_1_SQRT_2, 0.0);
    // The source lifts its arm 30°: local Rz(−45° + 30°) = Rz(−15°), direction
    // (cos 15°, −sin 15°, 0) = (0.96593, −0.25882, 0).
    let lifted = [
        Quat::IDENTITY,
        Quat::from_rotation_z(-FRAC_PI_4 + FRAC_PI_6),
        Quat::IDENTITY,
    ];
    let down15 = Vec3::new(0.965_925_8, -0.258_819, 0.0);
    assert!(close(arm_direction(&a_pose, &lifted), down15, 1e-5));

    // Keeping the target's rest (A = 1): at the source's rest the target stays in its T pose;
    // the 30° lift lifts the target 30° from T, to (cos 30°, sin 30°, 0) = (0.86603, 0.5, 0).
    let keep = Retargeter::with_alignment(
        &a_pose,
        &t_pose,
        &pairs,
        Quat::IDENTITY,
        RestAlignment::KeepTargetRest,
    )
    .unwrap();
    let mut out = vec![Quat::IDENTITY; 3];
    keep.apply(&rest_rotations(&a_pose), &mut out);
    for q in &out {
        assert!(same_rotation(*q, Quat::IDENTITY, 1e-6), "T stays T");
    }
    assert!(close(arm_direction(&t_pose, &out), Vec3::X, 1e-6));
    keep.apply(&lifted, &mut out);
    let up30 = Vec3::new(0.866_025_4, 0.5, 0.0);
    assert!(close(arm_direction(&t_pose, &out), up30, 1e-5));
    assert!((arm_direction(&t_pose, &out).angle_between(Vec3::X) - FRAC_PI_6).abs() < 1e-5);

    // Matching the source's rest (the default): A at the arm is the 45° turn from X down to
    // (0.7071, −0.7071, 0), so at the source's rest the target arm is in the A pose, and lifted
    // it points where the source's does, 30° above that.
    let matched = Retargeter::new(&a_pose, &t_pose, &pairs, Quat::IDENTITY).unwrap();
    assert!(same_rotation(
        matched.alignment(1).unwrap(),
        Quat::from_rotation_z(-FRAC_PI_4),
        1e-6
    ));
    // The hand has no mapped child: its own offset from the arm, also 45° apart.
    assert!(same_rotation(
        matched.alignment(2).unwrap(),
        Quat::from_rotation_z(-FRAC_PI_4),
        1e-6
    ));
    matched.apply(&rest_rotations(&a_pose), &mut out);
    assert!(close(arm_direction(&t_pose, &out), down45, 1e-6));
    matched.apply(&lifted, &mut out);
    let dir = arm_direction(&t_pose, &out);
    assert!(close(dir, down15, 1e-5));
    assert!(
        (dir.angle_between(down45) - FRAC_PI_6).abs() < 1e-5,
        "30° from the A pose"
    );
    // The hand keeps its rest local rotation relative to the arm (both aligned alike).
    assert!(same_rotation(out[2], Quat::IDENTITY, 1e-6));
}

#[test]
fn gta_z_up_source_drives_a_y_up_target() {
    // A GTA (Z-up) chain and the same chain in Bevy axes (every local conjugated by C:
    // translation C·t, rotation C·q·C⁻¹), so A = 1 and T = C · ... cancels: target local =
    // C · source local · C⁻¹.
    let source = RestPose {
        parents: vec![None, Some(0), Some(1)],
        local: vec![
            (Vec3::new(0.0, 0.0, 1.0), Quat::IDENTITY),
            (Vec3::new(0.0, 0.0, 0.5), Quat::from_rotation_x(0.1)),
            (Vec3::new(0.0, 0.1, 0.4), Quat::IDENTITY),
        ],
    };
    let target = RestPose {
        parents: source.parents.clone(),
        local: source
            .local
            .iter()
            .map(|&(t, r)| (gta_vec_to_bevy(t), gta_quat_to_bevy(r)))
            .collect(),
    };
    let r = Retargeter::new(&source, &target, &identity_pairs(3), GTA_TO_BEVY).unwrap();
    // The root turns 0.7 rad about GTA up (Z), the spine 0.4 rad more about its own Z.
    let pose = [
        Quat::from_rotation_z(0.7),
        Quat::from_rotation_x(0.1) * Quat::from_rotation_z(0.4),
        Quat::IDENTITY,
    ];
    let mut out = vec![Quat::IDENTITY; 3];
    r.apply(&pose, &mut out);
    // A turn about source Z is a turn about target Y (coords: (x, y, z, w) ↦ (x, z, −y, w)).
    assert!(same_rotation(out[0], Quat::from_rotation_y(0.7), 1e-6));
    assert!(same_rotation(
        out[1],
        Quat::from_axis_angle(Vec3::X, 0.1) * Quat::from_rotation_y(0.4),
        1e-6
    ));
    // World directions are the source's, converted.
    let ps = world(&source, &pose);
    let pt = world(&target, &out);
    for bone in 1..3 {
        let ds = ps[bone].0 - ps[bone - 1].0;
        let dt = pt[bone].0 - pt[bone - 1].0;
        assert!(close(gta_vec_to_bevy(ds), dt, 1e-5));
    }
}

#[test]
fn gta_ped_retargets_onto_itself_in_bevy_axes() {
    // End to end with the built-in SA skeleton: detect both sides, pair, retarget a pose.
    let sa = Skeleton::gta_sa();
    let names: Vec<&str> = sa.bones.iter().map(|b| b.name.as_str()).collect();
    let (preset, map) = BoneMap::detect(&names);
    assert_eq!(preset, BonePreset::Gta);
    let source = RestPose::from(&sa);
    let target = RestPose {
        parents: source.parents.clone(),
        local: source
            .local
            .iter()
            .map(|&(t, r)| (gta_vec_to_bevy(t), gta_quat_to_bevy(r)))
            .collect(),
    };
    let pairs = map.pairs(&map);
    assert_eq!(pairs.len(), 21, "every humanoid bone but UpperChest");
    let r = Retargeter::new(&source, &target, &pairs, GTA_TO_BEVY).unwrap();
    let pose: Vec<Quat> = source
        .local
        .iter()
        .enumerate()
        .map(|(i, &(_, q))| q * Quat::from_rotation_z(0.05 * i as f32))
        .collect();
    let mut out = vec![Quat::IDENTITY; pose.len()];
    r.apply(&pose, &mut out);
    for (i, (o, p)) in out.iter().zip(&pose).enumerate() {
        if r.pairs().any(|(_, t)| t == i) {
            assert!(same_rotation(*o, gta_quat_to_bevy(*p), 1e-4), "bone {i}");
        } else {
            // Unmapped (root, fingers, face, breasts): the target's rest rotation.
            assert!(same_rotation(*o, target.local[i].1, 1e-6), "bone {i}");
        }
    }
}

#[test]
fn root_translation_is_scaled_and_converted() {
    // Hip heights 1 m (source) and 2 m (target): scale 2.
    let scale = hips_translation_scale(1.0, 2.0);
    assert_eq!(scale, 2.0);
    assert_eq!(hips_translation_scale(0.0, 2.0), 1.0);
    assert_eq!(hips_translation_scale(f32::NAN, 2.0), 1.0);
    // Source hips rest at (0, 0, 1), posed at (0.5, 0, 0.9): displacement (0.5, 0, −0.1),
    // ×2 = (1, 0, −0.2), in Y-up (x, z, −y) = (1, −0.2, 0); plus the target rest (0, 2, 0)
    // = (1, 1.8, 0).
    let p = retarget_root_translation(
        Vec3::new(0.5, 0.0, 0.9),
        Vec3::new(0.0, 0.0, 1.0),
        Vec3::new(0.0, 2.0, 0.0),
        scale,
        GTA_TO_BEVY,
    );
    assert!(close(p, Vec3::new(1.0, 1.8, 0.0), 1e-6), "{p}");
}

const MIXAMO: [&str; 24] = [
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "HeadTop_End",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
    "RightToe_End",
];

fn prefixed(prefix: &str) -> Vec<String> {
    MIXAMO.iter().map(|n| format!("{prefix}{n}")).collect()
}

#[test]
fn mixamo_names_are_found_with_any_prefix() {
    for prefix in [
        "",
        "mixamorig:",
        "mixamorig1:",
        "Armature|mixamorig:",
        "mixamorig_",
    ] {
        let owned = prefixed(prefix);
        let names: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (preset, map) = BoneMap::detect(&names);
        assert_eq!(preset, BonePreset::Mixamo, "prefix {prefix:?}");
        assert_eq!(map.len(), 22);
        assert_eq!(map.get(HumanoidBone::Chest), Some(2));
        assert_eq!(map.get(HumanoidBone::UpperChest), Some(3));
        assert_eq!(map.get(HumanoidBone::LeftLowerArm), Some(9));
        assert_eq!(map.get(HumanoidBone::RightToes), Some(22));
        let report = map.report(&names);
        assert_eq!(report.matched.len(), 22);
        assert!(report.unmatched.is_empty());
        assert_eq!(
            report.unused,
            vec![
                format!("{prefix}HeadTop_End"),
                format!("{prefix}RightToe_End")
            ]
        );
    }
}

#[test]
fn vrm_and_vroid_names_are_found() {
    let vrm: Vec<&str> = HumanoidBone::ALL.iter().map(|b| b.vrm_name()).collect();
    let (preset, map) = BoneMap::detect(&vrm);
    assert_eq!(preset, BonePreset::Vrm);
    for (i, bone) in HumanoidBone::ALL.iter().enumerate() {
        assert_eq!(map.get(*bone), Some(i));
    }
    // VRoid Studio, without toes and upper chest: those are reported.
    let vroid = [
        "Root",
        "J_Bip_C_Hips",
        "J_Bip_C_Spine",
        "J_Bip_C_Chest",
        "J_Bip_C_Neck",
        "J_Bip_C_Head",
        "J_Bip_L_Shoulder",
        "J_Bip_L_UpperArm",
        "J_Bip_L_LowerArm",
        "J_Bip_L_Hand",
        "J_Bip_R_Shoulder",
        "J_Bip_R_UpperArm",
        "J_Bip_R_LowerArm",
        "J_Bip_R_Hand",
        "J_Bip_L_UpperLeg",
        "J_Bip_L_LowerLeg",
        "J_Bip_L_Foot",
        "J_Bip_R_UpperLeg",
        "J_Bip_R_LowerLeg",
        "J_Bip_R_Foot",
        "J_Bip_C_LeftHand",
    ];
    let (preset, map) = BoneMap::detect(&vroid);
    assert_eq!(preset, BonePreset::Vrm);
    assert_eq!(map.get(HumanoidBone::Hips), Some(1));
    assert_eq!(map.get(HumanoidBone::RightLowerArm), Some(12));
    let report = map.report(&vroid);
    assert_eq!(
        report.unmatched,
        vec![
            HumanoidBone::UpperChest,
            HumanoidBone::LeftToes,
            HumanoidBone::RightToes
        ]
    );
    // A centre-line prefix on a limb is no bone.
    assert_eq!(report.unused, vec!["Root", "J_Bip_C_LeftHand"]);
}

#[test]
fn unreal_mannequin_names_are_found() {
    let names = [
        "root",
        "pelvis",
        "spine_01",
        "spine_02",
        "spine_03",
        "neck_01",
        "head",
        "clavicle_l",
        "upperarm_l",
        "lowerarm_l",
        "hand_l",
        "clavicle_r",
        "upperarm_r",
        "lowerarm_r",
        "hand_r",
        "thigh_l",
        "calf_l",
        "foot_l",
        "ball_l",
        "thigh_r",
        "calf_r",
        "foot_r",
        "ball_r",
        "ik_hand_root",
    ];
    let (preset, map) = BoneMap::detect(&names);
    assert_eq!(preset, BonePreset::UnrealMannequin);
    assert_eq!(map.len(), 22);
    assert_eq!(map.get(HumanoidBone::Hips), Some(1));
    assert_eq!(map.get(HumanoidBone::RightToes), Some(22));
    assert_eq!(map.get(HumanoidBone::LeftShoulder), Some(7));
    let report = map.report(&names);
    assert!(report.unmatched.is_empty());
    assert_eq!(report.unused, vec!["root", "ik_hand_root"]);
}

#[test]
fn gta_names_are_found_for_every_game() {
    for skeleton in [Skeleton::gta_sa(), Skeleton::gta_vc(), Skeleton::gta_iii()] {
        let names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
        let (preset, map) = BoneMap::detect(&names);
        assert_eq!(preset, BonePreset::Gta, "{}", skeleton.name);
        let report = map.report(&names);
        let by_name = |bone| names[map.get(bone).unwrap()].trim();
        match skeleton.name.as_str() {
            "GTA III ped" => {
                // III has no neck, clavicles or toes; its spine is Smid/Storso.
                assert_eq!(by_name(HumanoidBone::Hips), "Swaist");
                assert_eq!(by_name(HumanoidBone::Chest), "Storso");
                assert_eq!(
                    report.unmatched,
                    vec![
                        HumanoidBone::UpperChest,
                        HumanoidBone::Neck,
                        HumanoidBone::LeftShoulder,
                        HumanoidBone::RightShoulder,
                        HumanoidBone::LeftToes,
                        HumanoidBone::RightToes
                    ]
                );
            }
            _ => {
                assert_eq!(by_name(HumanoidBone::Hips), "Pelvis");
                assert_eq!(by_name(HumanoidBone::LeftShoulder), "Bip01 L Clavicle");
                assert!(by_name(HumanoidBone::RightLowerArm).eq_ignore_ascii_case("R ForeArm"));
                assert_eq!(report.unmatched, vec![HumanoidBone::UpperChest]);
            }
        }
    }
    // Case and leading spaces do not matter.
    assert_eq!(
        BonePreset::Gta.humanoid_bone("  l upperarm"),
        Some(HumanoidBone::LeftUpperArm)
    );
}

#[test]
fn mixed_and_garbage_lists_report_what_did_not_match() {
    let names = [
        "Hips",
        "banana",
        "",
        "LeftUpLeg",
        "thigh_r",
        "Spine",
        "☃",
        "leftUpperArm",
    ];
    let (preset, map) = BoneMap::detect(&names);
    // Mixamo finds Hips, LeftUpLeg, Spine (3); VRM hips, spine, leftUpperArm (3): a tie, and
    // Mixamo comes first.
    assert_eq!(preset, BonePreset::Mixamo);
    let report = map.report(&names);
    assert_eq!(
        report.matched,
        vec![
            (HumanoidBone::Hips, 0),
            (HumanoidBone::Spine, 5),
            (HumanoidBone::LeftUpperLeg, 3)
        ]
    );
    assert_eq!(report.unmatched.len(), 19);
    assert_eq!(
        report.unused,
        vec!["banana", "", "thigh_r", "☃", "leftUpperArm"]
    );
    // A user's corrections, including one past the end of the list.
    let fixed = map
        .with(HumanoidBone::LeftUpperArm, 7)
        .with(HumanoidBone::RightUpperLeg, 4)
        .with(HumanoidBone::Head, 99)
        .without(HumanoidBone::Spine);
    let report = fixed.report(&names);
    assert_eq!(report.matched.len(), 4);
    assert_eq!(report.out_of_range, vec![(HumanoidBone::Head, 99)]);
    assert!(report.unmatched.contains(&HumanoidBone::Head));
    assert!(report.unmatched.contains(&HumanoidBone::Spine));
    assert_eq!(report.unused, vec!["banana", "", "Spine", "☃"]);
}

#[test]
fn empty_inputs_and_bad_indices_do_not_panic() {
    let (preset, map) = BoneMap::detect(&[]);
    assert_eq!(preset, BonePreset::Mixamo);
    assert!(map.is_empty());
    let report = map.report(&[]);
    assert_eq!(report.unmatched.len(), HumanoidBone::COUNT);
    assert!(report.unused.is_empty());

    // Empty skeletons.
    let empty = RestPose::default();
    assert_eq!(empty.world(), Ok(vec![]));
    let r = Retargeter::new(&empty, &empty, &[(0, 0)], Quat::IDENTITY).unwrap();
    assert_eq!(r.skipped().len(), 1);
    let mut out: Vec<Quat> = vec![];
    r.apply(&[], &mut out);

    // Out-of-range and duplicate pairs are skipped and listed.
    let rest = source_tree();
    let r = Retargeter::new(
        &rest,
        &rest,
        &[(0, 0), (7, 1), (1, 9), (2, 0), (1, 1)],
        Quat::IDENTITY,
    )
    .unwrap();
    let reasons: Vec<_> = r
        .skipped()
        .iter()
        .map(|s| (s.source, s.target, s.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (7, 1, SkipReason::SourceOutOfRange),
            (1, 9, SkipReason::TargetOutOfRange),
            (2, 0, SkipReason::DuplicateTarget)
        ]
    );
    assert_eq!(r.pairs().collect::<Vec<_>>(), vec![(0, 0), (1, 1)]);
    // A short source pose (rest for the rest) and a short output (what fits).
    let mut short = vec![Quat::IDENTITY; 2];
    r.apply(&[Quat::from_rotation_x(0.3)], &mut short);
    assert!(same_rotation(short[0], Quat::from_rotation_x(0.3), 1e-6));
    assert!(same_rotation(short[1], rest.local[1].1, 1e-6));
    // Non-unit and zero quaternions are normalised / taken as the identity.
    let mut out = vec![Quat::IDENTITY; 5];
    r.apply(
        &[
            Quat::from_xyzw(0.0, 0.0, 0.0, 3.0),
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        ],
        &mut out,
    );
    assert!(out.iter().all(|q| q.is_normalized()));

    // Cycles, bad parents and mismatched lengths are refused, naming the skeleton.
    let cyclic = RestPose {
        parents: vec![Some(1), Some(0)],
        local: vec![(Vec3::ZERO, Quat::IDENTITY); 2],
    };
    assert_eq!(
        Retargeter::new(&rest, &cyclic, &[], Quat::IDENTITY),
        Err(RetargetError::Target(RestPoseError::Cycle { bone: 0 }))
    );
    assert_eq!(
        Retargeter::new(&cyclic, &rest, &[], Quat::IDENTITY),
        Err(RetargetError::Source(RestPoseError::Cycle { bone: 0 }))
    );
    let mismatched = RestPose {
        parents: vec![None],
        local: vec![],
    };
    assert_eq!(
        mismatched.world(),
        Err(RestPoseError::LengthMismatch {
            parents: 1,
            local: 0
        })
    );
    let dangling = RestPose {
        parents: vec![None, Some(3)],
        local: vec![(Vec3::ZERO, Quat::IDENTITY); 2],
    };
    assert_eq!(
        dangling.order(),
        Err(RestPoseError::ParentOutOfRange { bone: 1, parent: 3 })
    );
}

#[test]
fn basis_and_alignment_compose() {
    // The A-pose arm given in GTA axes (v ↦ C⁻¹·v, q ↦ C⁻¹·q·C) onto the Y-up T pose, with
    // basis C, gives what the Y-up A pose gave without a basis: aligned to 45° down, then
    // lifted 30° to (cos 15°, −sin 15°, 0).
    let c = GTA_TO_BEVY;
    let to_gta = |pose: RestPose| RestPose {
        parents: pose.parents,
        local: pose
            .local
            .iter()
            .map(|&(t, r)| (c.inverse() * t, c.inverse() * r * c))
            .collect(),
    };
    let source = to_gta(arm(Quat::from_rotation_z(-FRAC_PI_4)));
    let t_pose = arm(Quat::IDENTITY);
    let r = Retargeter::new(&source, &t_pose, &identity_pairs(3), c).unwrap();
    let lifted: Vec<Quat> = [
        Quat::IDENTITY,
        Quat::from_rotation_z(-FRAC_PI_4 + FRAC_PI_6),
        Quat::IDENTITY,
    ]
    .iter()
    .map(|&q| c.inverse() * q * c)
    .collect();
    let mut out = vec![Quat::IDENTITY; 3];
    r.apply(&lifted, &mut out);
    let down15 = Vec3::new(0.965_925_8, -0.258_819, 0.0);
    assert!(close(arm_direction(&t_pose, &out), down15, 1e-5));
}

#[test]
fn directions_skip_unmapped_bones_between_mapped_ones() {
    // 0 chest → 1 twist (unmapped, sitting on 0) → 2 arm at (0.2, 0, 0)... → 3 hand.
    // Target: the same without the twist bone, in a T pose; the source arm hangs 45° down.
    // The chest's mapped child is the arm (through the twist), so the chest's direction is
    // towards the arm's joint: (1, 0, 0) on both sides, and A(chest) = 1.
    let source = RestPose {
        parents: vec![None, Some(0), Some(1), Some(2)],
        local: vec![
            (Vec3::ZERO, Quat::IDENTITY),
            (Vec3::ZERO, Quat::IDENTITY),
            (Vec3::new(0.2, 0.0, 0.0), Quat::from_rotation_z(-FRAC_PI_4)),
            (Vec3::new(0.3, 0.0, 0.0), Quat::IDENTITY),
        ],
    };
    let target = arm(Quat::IDENTITY);
    let r = Retargeter::new(&source, &target, &[(0, 0), (2, 1), (3, 2)], Quat::IDENTITY).unwrap();
    assert!(same_rotation(r.alignment(0).unwrap(), Quat::IDENTITY, 1e-6));
    assert!(same_rotation(
        r.alignment(1).unwrap(),
        Quat::from_rotation_z(-FRAC_PI_4),
        1e-6
    ));
    // The twist bone turning moves the source arm, and so the target's.
    let mut out = vec![Quat::IDENTITY; 3];
    r.apply(
        &[
            Quat::IDENTITY,
            Quat::from_rotation_z(FRAC_PI_6),
            Quat::from_rotation_z(-FRAC_PI_4),
            Quat::IDENTITY,
        ],
        &mut out,
    );
    let down15 = Vec3::new(0.965_925_8, -0.258_819, 0.0);
    assert!(close(arm_direction(&target, &out), down15, 1e-5));
}

#[test]
fn gta_preset_agrees_with_the_skeleton_alias_table() {
    // animation cannot use skeleton, so the GTA preset spells the names out; every spelling the
    // skeleton module knows must give the humanoid bone of its canonical SA id.
    let humanoid = |id: i32| {
        use HumanoidBone::*;
        Some(match id {
            1 => Hips,
            2 => Spine,
            3 => Chest,
            4 => Neck,
            5 => Head,
            21 => RightShoulder,
            22 => RightUpperArm,
            23 => RightLowerArm,
            24 => RightHand,
            31 => LeftShoulder,
            32 => LeftUpperArm,
            33 => LeftLowerArm,
            34 => LeftHand,
            41 => LeftUpperLeg,
            42 => LeftLowerLeg,
            43 => LeftFoot,
            44 => LeftToes,
            51 => RightUpperLeg,
            52 => RightLowerLeg,
            53 => RightFoot,
            54 => RightToes,
            _ => return None,
        })
    };
    let mut names: Vec<String> = [Skeleton::gta_sa(), Skeleton::gta_vc(), Skeleton::gta_iii()]
        .iter()
        .flat_map(|s| s.bones.iter().map(|b| b.name.clone()))
        .collect();
    // Every key of the alias table (skeleton.rs, canonical_bone_id).
    names.extend(
        [
            "root",
            "normal",
            "player",
            "pelvis",
            "swaist",
            "spine",
            "smid",
            "spine1",
            "storso",
            "neck",
            "head",
            "shead",
            "lbrow",
            "rbrow",
            "jaw",
            "bip01rclavicle",
            "rclavicle",
            "rupperarm",
            "supperarmr",
            "rforearm",
            "slowerarmr",
            "rhand",
            "srhand",
            "rfinger",
            "rfingers",
            "rfinger01",
            "bip01lclavicle",
            "lclavicle",
            "lupperarm",
            "supperarml",
            "lforearm",
            "slowerarml",
            "lhand",
            "slhand",
            "lfinger",
            "lfingers",
            "lfinger01",
            "lthigh",
            "supperlegl",
            "lcalf",
            "slowerlegl",
            "lfoot",
            "sfootl",
            "ltoe",
            "ltoe0",
            "rthigh",
            "supperlegr",
            "rcalf",
            "slowerlegr",
            "rfoot",
            "sfootr",
            "rtoe",
            "rtoe0",
            "belly",
            "rbreast",
            "lbreast",
        ]
        .map(String::from),
    );
    for name in &names {
        let id = canonical_bone_id(&bone_key(name));
        assert!(id.is_some(), "{name} is a GTA bone");
        assert_eq!(
            BonePreset::Gta.humanoid_bone(name),
            id.and_then(humanoid),
            "{name}"
        );
    }
}

/// A random tree of `n` bones (each bone's parent before it, after a random root), random
/// rests.
fn random_tree(rng: &mut crate::rng::Rng, n: usize) -> RestPose {
    RestPose {
        parents: (0..n).map(|i| (i > 0).then(|| rng.below(i))).collect(),
        local: (0..n).map(|_| (rng.vec3(0.5), rng.quat())).collect(),
    }
}

#[test]
fn random_trees_and_maps_keep_every_paired_bone_on_the_formula() {
    // With no rest alignment (A = 1) the module's formula is Wt_pose = C · Ws_pose · T with
    // T = Ws_rest⁻¹ · C⁻¹ · Wt_rest, so every paired target bone's world rotation, composed
    // here from the output's local rotations by plain forward kinematics, must equal
    // C · Ws_pose · Ws_rest⁻¹ · C⁻¹ · Wt_rest; unpaired bones keep their rest rotation.
    // Random trees and maps give what the step plan must handle: unpaired target bones
    // between paired ones, a target child mapped to a source bone that is not below its
    // ancestor's, several bones between paired source bones, pairs with no paired ancestor.
    // Source rotations are given scaled (0.5× to 2×), which the maths must take for the
    // rotation they scale.
    let mut rng = crate::rng::Rng(0x5eed_7a26);
    for round in 0..200 {
        let (ns, nt) = (2 + rng.below(12), 2 + rng.below(12));
        let (source, target) = (random_tree(&mut rng, ns), random_tree(&mut rng, nt));
        let mut pairs = Vec::new();
        for t in 0..nt {
            if rng.unit() < 0.7 {
                pairs.push((rng.below(ns), t));
            }
        }
        let basis = rng.quat();
        let r = Retargeter::with_alignment(
            &source,
            &target,
            &pairs,
            basis,
            RestAlignment::KeepTargetRest,
        )
        .unwrap();
        let pose: Vec<Quat> = (0..ns).map(|_| rng.quat()).collect();
        let scaled: Vec<(Vec3, Quat)> = source
            .local
            .iter()
            .zip(&pose)
            .map(|(&(t, _), &q)| (t, q * rng.range(0.5, 2.0)))
            .collect();
        let mut out = vec![Quat::from_xyzw(9.0, 9.0, 9.0, 9.0); nt];
        r.apply_pose(&scaled, &mut out);
        let (ws_rest, wt_rest) = (source.world().unwrap(), target.world().unwrap());
        let ws_pose = world(&source, &pose);
        let wt_pose = world(&target, &out);
        for t in 0..nt {
            match pairs.iter().find(|p| p.1 == t) {
                Some(&(s, _)) => {
                    let want = basis
                        * ws_pose[s].1
                        * ws_rest[s].1.inverse()
                        * basis.inverse()
                        * wt_rest[t].1;
                    assert!(
                        same_rotation(wt_pose[t].1, want, 2e-4),
                        "round {round}: bone {t} (from {s}): {:?} against {want:?}",
                        wt_pose[t].1
                    );
                    assert!((out[t].length() - 1.0).abs() < 1e-5);
                }
                None => assert!(
                    same_rotation(out[t], target.local[t].1, 1e-6),
                    "round {round}: bone {t}"
                ),
            }
        }
    }
}

#[test]
fn a_non_finite_source_rotation_rests_the_bones_whose_step_reads_it() {
    // 0 → 1 → 2 on both sides, paired one to one (identical skeletons: each target local is
    // the source's). Source bone 1's rotation is NaN: target bone 1, whose step reads it,
    // takes its rest; bones 0 and 2 are retargeted (bone 2's rotation relative to its parent
    // reads only source bone 2); every output is finite.
    let chain = RestPose {
        parents: vec![None, Some(0), Some(1)],
        local: vec![
            (Vec3::ZERO, Quat::from_rotation_y(0.3)),
            (Vec3::Y, Quat::from_rotation_x(0.2)),
            (Vec3::Y, Quat::from_rotation_z(-0.4)),
        ],
    };
    let r = Retargeter::new(&chain, &chain, &identity_pairs(3), Quat::IDENTITY).unwrap();
    let mut out = vec![Quat::IDENTITY; 3];
    r.apply(
        &[
            Quat::from_rotation_y(0.5),
            Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
            Quat::from_rotation_z(0.1),
        ],
        &mut out,
    );
    assert!(same_rotation(out[0], Quat::from_rotation_y(0.5), 1e-5));
    assert_eq!(out[1], chain.local[1].1);
    assert!(same_rotation(out[2], Quat::from_rotation_z(0.1), 1e-5));
    assert!(out.iter().all(|q| q.is_finite()));
}

/// The same skeleton stored in another bone order (as the bundled DFF ped stores SA's: its
/// Pelvis lists R Thigh, L Thigh, Spine, its Neck the clavicles before the Head) is posed the
/// same, joint for joint, by a source of another shape (the mocap walk's BVH, Y up, its hips'
/// children at other angles than a GTA Pelvis's). The rest alignment once took each bone's
/// direction to its first mapped child in index order, and put the legs and head of such a ped
/// 0.22 m from the built-in skeleton's.
#[test]
fn the_same_skeleton_stored_in_another_order_is_posed_the_same() {
    let bvh = rigplay::formats::bvh::BvhFile::read(crate::bvh_fixtures::mocap_walk(31).as_bytes())
        .unwrap()
        .file;
    let source = rigplay::convert::import::bvh_source(&bvh);
    let source_names: Vec<&str> = source.names.iter().map(|n| n.as_str()).collect();
    let (_, source_map) = BoneMap::detect(&source_names);
    let sa = Skeleton::gta_sa();
    let stored = RestPose::from(&sa);
    // Every bone's children listed in reverse: `order[new] = old`.
    let n = stored.len();
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = (0..n).filter(|&b| stored.parents[b].is_none()).collect();
    while let Some(b) = stack.pop() {
        order.push(b);
        // Pushed in index order, popped last first.
        stack.extend((0..n).filter(|&c| stored.parents[c] == Some(b)));
    }
    assert_eq!(order.len(), n);
    let new_of = |old: usize| order.iter().position(|&o| o == old).unwrap();
    let reordered = RestPose {
        parents: order
            .iter()
            .map(|&old| stored.parents[old].map(new_of))
            .collect(),
        local: order.iter().map(|&old| stored.local[old]).collect(),
    };
    let name = |i: usize| sa.bones[i].name.trim().to_string();
    let pelvis_children = |pose: &RestPose, names: &dyn Fn(usize) -> String| {
        let pelvis = (0..n).find(|&i| names(i) == "Pelvis").unwrap();
        (0..n)
            .filter(|&c| pose.parents[c] == Some(pelvis))
            .map(names)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pelvis_children(&stored, &name),
        ["Spine", "L Thigh", "R Thigh"]
    );
    assert_eq!(
        pelvis_children(&reordered, &|i| name(order[i])),
        ["R Thigh", "L Thigh", "Spine"]
    );
    let pose: Vec<Quat> = source
        .rest
        .local
        .iter()
        .enumerate()
        .map(|(i, &(_, q))| q * Quat::from_rotation_x(0.25 * (i % 5) as f32 - 0.5))
        .collect();
    let basis = rigplay::coords::GTA_TO_GLTF.inverse();
    let posed = |target: &RestPose, names: Vec<String>| {
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let (_, map) = BoneMap::detect(&names);
        let pairs = source_map.pairs(&map);
        assert_eq!(pairs.len(), 21);
        let r = Retargeter::new(&source.rest, target, &pairs, basis).unwrap();
        let mut out = vec![Quat::IDENTITY; target.len()];
        r.apply(&pose, &mut out);
        world(target, &out)
    };
    let a = posed(&stored, (0..n).map(|i| sa.bones[i].name.clone()).collect());
    let b = posed(
        &reordered,
        order.iter().map(|&o| sa.bones[o].name.clone()).collect(),
    );
    let mut farthest = 0.0f32;
    for (new, &old) in order.iter().enumerate() {
        farthest = farthest.max(a[old].0.distance(b[new].0));
    }
    // Only rounding: the two plans do the same sums in another order.
    assert!(farthest < 1e-5, "{farthest} m");
    // And the pose is one: the left knee moved from rest.
    let knee = (0..n).find(|&i| name(i) == "L Calf").unwrap();
    let rest = stored.world().unwrap();
    let moved = (a[knee].0 - rest[knee].0).length();
    assert!(moved > 0.05, "the knee moved {moved} m");
}

/// A character's hips under nodes the map leaves out (a scene's root placing it, an Unreal-style
/// `root` at its feet) are posed as the same character with the hips at the top. The rest
/// alignment once took a bone's chain from its parent, mapped or not: under such a node the hips
/// carried on a chain from it (up from the feet) and were matched to the source's spine alone,
/// not to the spine and thighs together as a root is. With GTA III's waist turned a quarter
/// from its rest, the VRoid's hips came out 16° apart (a crowd character, posed from the file's
/// nodes, against its twin with bone entities under the scene's root).
#[test]
fn unmapped_nodes_above_the_hips_do_not_change_the_pose() {
    use crate::humanoid::{Arms, Naming, Spec, build};
    let c = build(&Spec {
        size: 0.3,
        leg: 0.7,
        seed: 43,
        missing: vec![HumanoidBone::LeftUpperArm, HumanoidBone::RightToes],
        ..Spec::new(Naming::VRoid, Arms::A(30.0))
    });
    let n = c.names.len();
    // As built (the hips at the top), under a placing root, under a `root` at the origin.
    let above = |node: Option<(&str, Vec3)>| {
        let mut names = c.names.clone();
        let mut parents = c.parents.clone();
        let mut trs = c.trs.clone();
        if let Some((name, at)) = node {
            names.insert(0, name.to_owned());
            parents = std::iter::once(None)
                .chain(c.parents.iter().map(|p| Some(p.map_or(0, |p| p + 1))))
                .collect();
            trs.insert(0, (at, Quat::IDENTITY, Vec3::ONE));
        }
        let (rest, _) = RestPose::from_trs(parents, &trs).unwrap();
        (names, rest)
    };
    let variants = [
        above(None),
        above(Some(("Scene0", Vec3::new(1.5, 0.0, -2.0)))),
        above(Some(("root", Vec3::ZERO))),
    ];
    for (game, skeleton) in [
        ("III", Skeleton::gta_iii()),
        ("VC", Skeleton::gta_vc()),
        ("SA", Skeleton::gta_sa()),
    ] {
        let source = RestPose::from(&skeleton);
        let source_names: Vec<String> = skeleton.bones.iter().map(|b| b.name.clone()).collect();
        let source_names: Vec<&str> = source_names.iter().map(|s| s.as_str()).collect();
        // Every source bone turned from its rest; the pelvis (III's waist) to the identity.
        let pose: Vec<Quat> = (source.local.iter().enumerate())
            .map(|(i, &(_, q))| q * Quat::from_rotation_z(0.2 * (i % 4) as f32 - 0.3))
            .collect::<Vec<_>>();
        let mut pose = pose;
        let pelvis = (skeleton.bones.iter())
            .position(|b| ["swaist", "pelvis"].contains(&b.name.trim().to_lowercase().as_str()))
            .unwrap();
        pose[pelvis] = Quat::IDENTITY;
        // Per node of the character: its world rotation and its position from the hips.
        let posed: Vec<Vec<(Quat, Vec3)>> = variants
            .iter()
            .map(|(names, target)| {
                let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                let (pairs, _) =
                    rigplay::animation::retarget::bone_pairs(&source_names, &names, &[]);
                assert!(pairs.len() >= 13, "{game}: {} pairs", pairs.len());
                let r = Retargeter::new(&source, target, &pairs, GTA_TO_BEVY).unwrap();
                let mut out: Vec<Quat> = target.local.iter().map(|p| p.1).collect();
                r.apply(&pose, &mut out);
                let w = world(target, &out);
                let first = w.len() - n;
                let hips = w[first].0;
                w[first..].iter().map(|&(p, q)| (q, p - hips)).collect()
            })
            .collect();
        for v in &posed[1..] {
            for (node, (a, b)) in posed[0].iter().zip(v).enumerate() {
                // The sine of half the angle between them, and the distance.
                let turn = (a.0.conjugate() * b.0).xyz().length();
                assert!(turn < 1e-5, "{game}: {} turned {turn}", c.names[node]);
                let d = a.1.distance(b.1);
                assert!(d < 1e-6, "{game}: {} {d} m apart", c.names[node]);
            }
        }
        // And the pose is one: the hips turned from their rest.
        let rest = world(
            &variants[0].1,
            &variants[0].1.local.iter().map(|p| p.1).collect::<Vec<_>>(),
        );
        assert!(
            posed[0][0].0.angle_between(rest[0].1) > 0.1,
            "{game}: the hips turned"
        );
    }
}
