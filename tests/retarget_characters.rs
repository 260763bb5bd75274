//! Retargeting GTA and DAN clips onto humanoid characters unlike GTA's ped (other names, bone
//! axes, rest poses, limb lengths, an armature node with a scale): every mapped bone points where
//! the source bone points, and the hips move by the scaled amount. Copying the local rotations
//! verbatim fails the same checks.

use crate::humanoid::{Arms, Character, Naming, Spec, build};
use glam::{Affine3A, Quat, Vec3};
use rigplay::animation::retarget::{
    BoneMap, BonePreset, HumanoidBone, RestPose, RetargetSource, Retargeter, user_pairs,
};
use rigplay::animation::{BonePose, Clip, ClipBuilder};
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::{GtaGame, Skeleton};

/// The humanoid chains along which a bone's direction (towards the next bone of the chain that
/// both skeletons have) is compared.
pub const CHAINS: [&[HumanoidBone]; 6] = {
    use HumanoidBone::*;
    [
        &[Spine, Chest, UpperChest, Neck, Head],
        // The hips' turn: the line from one thigh to the other. Segments from the hips to
        // their children are not compared: where a hip's spine and thighs stand is the
        // skeleton's own shape (SA's Spine sits 1.4 mm from its Pelvis; III's Smid is 8 cm from
        // its Swaist, down and back, 58° from a mocap spine's up), which no turn of the hips
        // makes match; the retargeter turns the hips to fit all three best.
        &[LeftUpperLeg, RightUpperLeg],
        &[LeftShoulder, LeftUpperArm, LeftLowerArm, LeftHand],
        &[RightShoulder, RightUpperArm, RightLowerArm, RightHand],
        &[LeftUpperLeg, LeftLowerLeg, LeftFoot, LeftToes],
        &[RightUpperLeg, RightLowerLeg, RightFoot, RightToes],
    ]
};

/// Whether two matching segments, one per skeleton, both have a direction to compare: a segment
/// shorter than 2 % of its skeleton's size ([`size_of`]) has none (GTA's Pelvis → Spine is
/// 1.4 mm, its Neck → clavicles 0.1 mm), as for the retargeter's rest alignment.
pub fn both_directed(a: Vec3, a_size: f32, b: Vec3, b_size: f32) -> bool {
    a.length() > 0.02 * a_size && b.length() > 0.02 * b_size
}

/// A skeleton's size: the diagonal of the box around its bones' positions.
pub fn size_of<'a>(points: impl IntoIterator<Item = &'a Vec3>) -> f32 {
    let (lo, hi) = points.into_iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    (hi - lo).length()
}

/// A source: a skeleton's rest pose, names, the clip's tracks on it.
pub struct Source {
    pub source: RetargetSource,
    pub clip: Clip,
}

impl Source {
    fn gta(game: GtaGame, clip: Clip) -> Self {
        Source {
            source: game.skeleton().retarget_source(&clip),
            clip,
        }
    }

    /// The source pose at `time`: every bone's local (translation, rotation), the clip's channels
    /// over the rest.
    fn pose(&self, time: f32) -> Vec<(Vec3, Quat)> {
        let mut pose = self.source.rest.local.clone();
        let mut poses: Vec<BonePose> = (0..self.clip.tracks().len())
            .map(|i| {
                let (t, r) = self.source.track_rest(i);
                BonePose {
                    translation: t,
                    rotation: r,
                    scale: Vec3::ONE,
                }
            })
            .collect();
        let mut cursor = self.clip.cursor();
        self.clip.sample(time, &mut cursor, &mut poses);
        for (track, p) in poses.iter().enumerate() {
            if let Some(b) = self.source.tracks[track] {
                pose[b] = (p.translation, p.rotation);
            }
        }
        pose
    }

    /// World positions of the source bones in a pose (its own axes).
    fn positions(&self, pose: &[(Vec3, Quat)]) -> Vec<Vec3> {
        RestPose {
            parents: self.source.rest.parents.clone(),
            local: pose.to_vec(),
        }
        .world()
        .unwrap()
        .iter()
        .map(|w| w.0)
        .collect()
    }

    fn bone(&self, bone: HumanoidBone) -> Option<usize> {
        self.source.bone_map().1.get(bone)
    }
}

/// What a check found: the largest direction error (degrees) and where, the largest hips
/// error (world units) and the hips scale used.
#[derive(Debug)]
pub struct Errors {
    pub angle: f32,
    pub worst: String,
    pub hips: f32,
    pub scale: f32,
    pub compared: usize,
}

/// How the target's local rotations are made.
#[derive(Clone, Copy, PartialEq)]
enum Method {
    Retarget,
    /// What binding by name alone does: the source's local rotation on the target bone.
    Verbatim,
}

/// Plays `source` on `character` at `times` and measures every chain direction against the
/// source's (turned into glTF axes), and the hips' displacement against the source's scaled.
fn check(source: &Source, character: &Character, times: &[f32], method: Method) -> Errors {
    let names: Vec<&str> = character.names.iter().map(String::as_str).collect();
    let (_, target_map) = BoneMap::detect(&names);
    let (source_preset, source_map) = source.source.bone_map();
    assert!(
        matches!(source_preset, BonePreset::Gta | BonePreset::Biped),
        "{source_preset:?}"
    );
    let pairs = source_map.pairs(&target_map);
    let (target_rest, _) = RestPose::from_trs(character.parents.clone(), &character.trs).unwrap();
    let source_hips = source.bone(HumanoidBone::Hips).unwrap();
    let target_hips = character.node(HumanoidBone::Hips).unwrap();
    let retargeter = Retargeter::new(
        &source.source.rest,
        &target_rest,
        &pairs,
        source.source.to_gltf,
    )
    .unwrap()
    .with_hips(source_hips, target_hips, Vec3::Y);
    let basis = source.source.to_gltf;
    let rest_world = character.world(&character.trs);
    let hips_parent = character.parents[target_hips].map_or(Affine3A::IDENTITY, |p| rest_world[p]);
    let source_rest_positions = source.positions(&source.source.rest.local);
    let target_rest_positions = character.rest_positions();
    let mut out = vec![Quat::IDENTITY; character.names.len()];
    let mut errors = Errors {
        angle: 0.0,
        worst: String::new(),
        hips: 0.0,
        scale: retargeter.hips_scale(),
        compared: 0,
    };
    for &time in times {
        let pose = source.pose(time);
        let hips = retargeter.apply_pose(&pose, &mut out);
        let mut trs = character.trs.clone();
        match method {
            Method::Retarget => {
                for (i, r) in out.iter().enumerate() {
                    trs[i].1 = *r;
                }
                // The hips' new world position, as a local translation under their parent.
                let hips = hips.unwrap();
                trs[target_hips].0 = hips_parent.inverse().transform_point3(hips);
            }
            Method::Verbatim => {
                for &(s, t) in &pairs {
                    trs[t].1 = pose[s].1;
                }
            }
        }
        let world = character.world(&trs);
        let target_positions: Vec<Vec3> = world.iter().map(|a| a.translation.into()).collect();
        let source_positions = source.positions(&pose);
        let (source_size, target_size) = (size_of(&source_positions), size_of(&target_positions));
        for chain in CHAINS {
            let both: Vec<(usize, usize, HumanoidBone)> = chain
                .iter()
                .filter_map(|&b| Some((source_map.get(b)?, target_map.get(b)?, b)))
                .collect();
            for w in both.windows(2) {
                let (s0, t0, b0) = w[0];
                let (s1, t1, _) = w[1];
                let ds = basis * (source_positions[s1] - source_positions[s0]);
                let dt = target_positions[t1] - target_positions[t0];
                if !both_directed(ds, source_size, dt, target_size) {
                    continue;
                }
                let angle = ds.angle_between(dt).to_degrees();
                errors.compared += 1;
                if angle > errors.angle {
                    errors.angle = angle;
                    errors.worst = format!("{b0:?} at {time:.3} s");
                }
            }
        }
        let expected = target_rest_positions[target_hips]
            + basis
                * ((source_positions[source_hips] - source_rest_positions[source_hips])
                    * errors.scale);
        let hips_error = (target_positions[target_hips] - expected).length();
        errors.hips = errors.hips.max(hips_error);
    }
    errors
}

/// `n` times spread over a clip, its ends included.
fn times(clip: &Clip, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| clip.duration() * i as f32 / (n - 1) as f32)
        .collect()
}

fn ifp_clips(path: &str) -> Vec<Clip> {
    let package = IfpFile::read(&crate::assets::read(path)).unwrap().file;
    package.clips().map(|c| c.to_clip()).collect()
}

/// The characters the checks run on: every naming scheme, T and A poses, other proportions, an
/// armature node turned and scaled as a Blender export is (centimetres under a 0.01 scale).
fn characters() -> Vec<(String, Character)> {
    let blender = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let specs = [
        Spec {
            size: 1.1,
            arm: 1.2,
            leg: 0.9,
            armature: Some((blender, 0.01)),
            seed: 11,
            ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::T)
        },
        Spec {
            size: 0.8,
            arm: 0.85,
            leg: 1.25,
            seed: 12,
            ..Spec::new(Naming::Vrm, Arms::A(35.0))
        },
        Spec {
            size: 0.3,
            arm: 1.0,
            leg: 0.7,
            seed: 13,
            ..Spec::new(Naming::VRoid, Arms::T)
        },
        Spec {
            // Unreal units: centimetres, a `root` bone at the feet.
            size: 180.0,
            arm: 1.1,
            leg: 1.05,
            seed: 14,
            ..Spec::new(Naming::Unreal, Arms::A(45.0))
        },
        Spec {
            size: 1.0,
            armature: Some((Quat::from_rotation_y(0.7) * blender, 2.5)),
            seed: 15,
            ..Spec::new(Naming::Mixamo("mixamorig12:"), Arms::A(20.0))
        },
    ];
    specs
        .iter()
        .map(|s| (format!("{:?} {:?}", s.naming, s.arms), build(s)))
        .collect()
}

#[test]
fn the_test_characters_are_what_they_claim() {
    // The builder's own facts, checked from the nodes: every humanoid bone found by its naming
    // scheme, the hips at the designed height above the toes, the arms at the designed angle.
    for (label, c) in characters() {
        let names: Vec<&str> = c.names.iter().map(String::as_str).collect();
        let (_, map) = BoneMap::detect(&names);
        assert_eq!(map.len(), HumanoidBone::COUNT, "{label}");
        for (bone, node) in &c.humanoid {
            assert_eq!(map.get(*bone), Some(*node), "{label}: {bone:?}");
        }
        let p = c.rest_positions();
        let hips = p[c.node(HumanoidBone::Hips).unwrap()];
        let toes = p[c.node(HumanoidBone::LeftToes).unwrap()];
        assert!(
            ((hips.y - toes.y) - c.hip_height).abs() < 1e-4 * c.hip_height,
            "{label}: {} vs {}",
            hips.y - toes.y,
            c.hip_height
        );
        let arm = p[c.node(HumanoidBone::LeftLowerArm).unwrap()]
            - p[c.node(HumanoidBone::LeftUpperArm).unwrap()];
        let droop = (-arm.y).atan2(arm.x).to_degrees();
        let expected = if label.contains("A(") {
            label
                .split("A(")
                .nth(1)
                .and_then(|s| s.trim_end_matches(')').parse::<f32>().ok())
                .unwrap()
        } else {
            0.0
        };
        assert!((droop - expected).abs() < 0.01, "{label}: {droop}°");
        // No bone keeps GTA's (or any common) rest axes: every local rotation is far from 1.
        assert!(c.trs.iter().skip(1).all(|(_, r, _)| r.w.abs() < 0.9999));
    }
}

#[test]
fn gta_clips_point_every_mapped_bone_where_the_ped_does_on_unlike_characters() {
    let mut sources = Vec::new();
    for clip in ifp_clips("anims/sa_ped.ifp") {
        sources.push(Source::gta(GtaGame::Sa, clip));
    }
    for clip in ifp_clips("anims/vc_ped.ifp") {
        sources.push(Source::gta(GtaGame::Vc, clip));
    }
    assert!(sources.len() >= 4, "{} clips", sources.len());
    for (label, character) in characters() {
        for source in &sources {
            let t = times(&source.clip, 24);
            let e = check(source, &character, &t, Method::Retarget);
            let name = &source.clip.name;
            assert!(
                e.compared >= 24 * 14,
                "{label} {name}: {} directions",
                e.compared
            );
            assert!(
                e.angle < 2.0,
                "{label} {name}: {:.3}° at {}",
                e.angle,
                e.worst
            );
            // Hips: within 0.1 % of the character's hip height.
            assert!(
                e.hips < 1e-3 * character.hip_height,
                "{label} {name}: hips off by {}",
                e.hips
            );
            // The scale is the ratio of the hip heights.
            let skeleton = source.source.rest.clone();
            let p: Vec<Vec3> = skeleton.world().unwrap().iter().map(|w| w.0).collect();
            let (_, map) = source.source.bone_map();
            let lowest = map
                .iter()
                .map(|(_, i)| p[i].z)
                .fold(f32::INFINITY, f32::min);
            let gta_height = p[map.get(HumanoidBone::Hips).unwrap()].z - lowest;
            let expected = character.hip_height / gta_height;
            assert!(
                (e.scale / expected - 1.0).abs() < 1e-3,
                "{label} {name}: scale {} vs {expected}",
                e.scale
            );
        }
    }
}

#[test]
fn copying_local_rotations_verbatim_fails_the_same_checks() {
    let clip = ifp_clips("anims/sa_ped.ifp").remove(0);
    let source = Source::gta(GtaGame::Sa, clip);
    let t = times(&source.clip, 24);
    for (label, character) in characters() {
        let e = check(&source, &character, &t, Method::Verbatim);
        assert!(
            e.angle > 20.0,
            "{label}: verbatim copy only {:.2}° off",
            e.angle
        );
        let r = check(&source, &character, &t, Method::Retarget);
        assert!(r.angle < 2.0, "{label}: {:.3}°", r.angle);
    }
}

#[test]
fn the_sa_hip_height_and_scale_worked_out_by_hand() {
    // SA's bind pose (the skeleton table, GTA axes, metres): Pelvis sits at the model origin;
    // the lowest humanoid bone is R Toe0 at z = −1.0363 (R Thigh −0.0012, R Calf −0.4542,
    // R Foot −0.9359, R Toe0 −1.0363 down the chain; L Toe0 is at −1.0326). So GTA's hip height
    // is 1.0363 m. A character built with a hip height of exactly 1.0 (size 1, legs 1:
    // 0.12 + 0.45 + 0.43) scales the hips' movement by 1 / 1.0363 = 0.96497.
    let skeleton = Skeleton::gta_sa();
    let world = RestPose::from(&skeleton).world().unwrap();
    let toe = skeleton
        .bones
        .iter()
        .position(|b| b.name.trim() == "R Toe0")
        .unwrap();
    assert!((world[toe].0.z + 1.0363).abs() < 1e-4, "{}", world[toe].0.z);
    let character = build(&Spec::new(Naming::Vrm, Arms::T));
    assert!((character.hip_height - 1.0).abs() < 1e-6);
    let clip = ifp_clips("anims/sa_ped.ifp").remove(0);
    let source = Source::gta(GtaGame::Sa, clip);
    let e = check(&source, &character, &[0.0], Method::Retarget);
    assert!((e.scale - 0.96497).abs() < 1e-4, "{}", e.scale);
}

/// A DAN-like source: the SA walk as flat model-space keys (each bone its own root, keyed with
/// its whole model transform, in Bevy-like Y-up axes facing +Z), named as a 3ds Max Biped, keyed
/// every `step` seconds.
pub fn biped_walk(step: f32) -> Source {
    let walk = Source::gta(GtaGame::Sa, ifp_clips("anims/sa_ped.ifp").remove(0));
    let biped_names = [
        ("Pelvis", "Bip01 Pelvis"),
        ("Spine", "Bip01 Spine"),
        ("Spine1", "Bip01 Spine1"),
        ("Neck", "Bip01 Neck"),
        ("Head", "Bip01 Head"),
        ("Bip01 L Clavicle", "Bip01 L Clavicle"),
        ("L UpperArm", "Bip01 L UpperArm"),
        ("L ForeArm", "Bip01 L Forearm"),
        ("L Hand", "Bip01 L Hand"),
        ("Bip01 R Clavicle", "Bip01 R Clavicle"),
        ("R UpperArm", "Bip01 R UpperArm"),
        ("R ForeArm", "Bip01 R Forearm"),
        ("R Hand", "Bip01 R Hand"),
        ("L Thigh", "Bip01 L Thigh"),
        ("L Calf", "Bip01 L Calf"),
        ("L Foot", "Bip01 L Foot"),
        ("L Toe0", "Bip01 L Toe0"),
        ("R Thigh", "Bip01 R Thigh"),
        ("R Calf", "Bip01 R Calf"),
        ("R Foot", "Bip01 R Foot"),
        ("R Toe0", "Bip01 R Toe0"),
    ];
    let bones: Vec<(usize, &str)> = biped_names
        .iter()
        .map(|(gta, biped)| {
            let i = walk
                .source
                .names
                .iter()
                .position(|n| n.trim() == *gta)
                .unwrap();
            (i, *biped)
        })
        .collect();
    // Model-space keys at 30 fps: world transforms of the posed ped, turned into glTF axes.
    let basis = walk.source.to_gltf;
    let n = (walk.clip.duration() / step).floor() as usize + 1;
    let mut builder = ClipBuilder::new("biped walk");
    let key_times: Vec<f32> = (0..n).map(|k| k as f32 * step).collect();
    let mut per_bone: Vec<(Vec<Quat>, Vec<Vec3>)> = vec![(Vec::new(), Vec::new()); bones.len()];
    for &t in &key_times {
        let pose = walk.pose(t);
        let world = RestPose {
            parents: walk.source.rest.parents.clone(),
            local: pose,
        }
        .world()
        .unwrap();
        for (k, (i, _)) in bones.iter().enumerate() {
            per_bone[k].0.push(basis * world[*i].1);
            per_bone[k].1.push(basis * world[*i].0);
        }
    }
    for (k, (_, name)) in bones.iter().enumerate() {
        let times = builder.times(&key_times).unwrap();
        let rotation = builder.rotations(times, &per_bone[k].0).unwrap();
        let translation = builder.translations(times, &per_bone[k].1).unwrap();
        builder.track(rigplay::animation::BoneTrack {
            bone: rigplay::animation::BoneRef {
                name: (*name).to_owned(),
                id: None,
            },
            rotation: Some(rotation),
            translation: Some(translation),
            scale: None,
        });
    }
    let clip = builder.build();
    let names: Vec<String> = bones.iter().map(|(_, n)| (*n).to_owned()).collect();
    Source {
        source: RetargetSource::first_frame(&clip, &names, Quat::IDENTITY),
        clip,
    }
}

#[test]
fn dan_clips_rest_on_their_first_frame_and_retarget_the_same_way() {
    // A flat (model-space) Biped-named source, resting at its first frame, not in any T or A
    // pose: the characters still point every bone where it does.
    let source = biped_walk(1.0 / 30.0);
    assert_eq!(source.source.bone_map().0, BonePreset::Biped);
    assert_eq!(source.source.bone_map().1.len(), 21);
    let t = times(&source.clip, 24);
    for (label, character) in characters() {
        let e = check(&source, &character, &t, Method::Retarget);
        assert!(e.angle < 2.0, "{label}: {:.3}° at {}", e.angle, e.worst);
        assert!(
            e.hips < 1e-3 * character.hip_height,
            "{label}: hips {}",
            e.hips
        );
    }
}

#[test]
fn missing_limbs_bind_the_rest_and_are_reported() {
    let character = build(&Spec {
        missing: vec![HumanoidBone::LeftUpperArm, HumanoidBone::RightToes],
        seed: 21,
        ..Spec::new(Naming::Mixamo("mixamorig:"), Arms::T)
    });
    let names: Vec<&str> = character.names.iter().map(String::as_str).collect();
    let (preset, map) = BoneMap::detect(&names);
    assert_eq!(preset, BonePreset::Mixamo);
    let report = map.report(&names);
    use HumanoidBone::*;
    assert_eq!(
        report.unmatched,
        vec![LeftUpperArm, LeftLowerArm, LeftHand, RightToes]
    );
    let source = Source::gta(GtaGame::Sa, ifp_clips("anims/sa_ped.ifp").remove(0));
    let e = check(
        &source,
        &character,
        &times(&source.clip, 21),
        Method::Retarget,
    );
    assert!(e.angle < 2.0, "{:.3}° at {}", e.angle, e.worst);
}

#[test]
fn a_user_map_overrides_the_detected_one() {
    // A character whose arm bones have names no preset knows: the user names them.
    let mut character = build(&Spec::new(Naming::Vrm, Arms::T));
    for (bone, name) in [
        (HumanoidBone::LeftUpperArm, "arm_upper_jnt_L"),
        (HumanoidBone::LeftLowerArm, "arm_lower_jnt_L"),
    ] {
        let i = character.node(bone).unwrap();
        character.names[i] = name.into();
    }
    let names: Vec<&str> = character.names.iter().map(String::as_str).collect();
    let (_, target_map) = BoneMap::detect(&names);
    assert_eq!(target_map.get(HumanoidBone::LeftUpperArm), None);
    let skeleton = Skeleton::gta_sa();
    let source_names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
    let (_, source_map) = BoneMap::detect(&source_names);
    let detected = source_map.pairs(&target_map);
    let user = [
        ("L UpperArm".to_owned(), "arm_upper_jnt_L".to_owned()),
        ("l forearm".to_owned(), "ARM_LOWER_JNT_L".to_owned()),
        // Unmaps the head: it keeps its rest.
        ("Head".to_owned(), String::new()),
        ("No Such Bone".to_owned(), "leftHand".to_owned()),
        ("R Hand".to_owned(), "nothing_here".to_owned()),
    ];
    let (pairs, problems) = user_pairs(detected.clone(), &source_names, &names, &user);
    let s_upper = source_names
        .iter()
        .position(|n| n.trim() == "L UpperArm")
        .unwrap();
    let s_fore = source_names
        .iter()
        .position(|n| n.trim() == "L ForeArm")
        .unwrap();
    let s_head = source_names
        .iter()
        .position(|n| n.trim() == "Head")
        .unwrap();
    assert!(pairs.contains(&(s_upper, character.node(HumanoidBone::LeftUpperArm).unwrap())));
    assert!(pairs.contains(&(s_fore, character.node(HumanoidBone::LeftLowerArm).unwrap())));
    assert!(!pairs.iter().any(|p| p.0 == s_head));
    assert_eq!(pairs.len(), detected.len() + 2 - 1);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        problems[0].to_string(),
        "no source bone is named \"No Such Bone\""
    );
    assert_eq!(
        problems[1].to_string(),
        "no character bone is named \"nothing_here\""
    );
}

/// The angle between two rotations, in f64 from the sine of its half (`Quat::angle_between`
/// takes the arc cosine of an f32 dot product, which cannot tell angles under ~7e-4 rad).
fn angle(a: Quat, b: Quat) -> f32 {
    let d = a.as_dquat().inverse() * b.as_dquat();
    (2.0 * d.xyz().length().min(1.0).asin()) as f32
}

#[test]
fn a_clip_retargeted_once_plays_what_retargeting_every_frame_gives() {
    // `Retargeter::retarget_clip` bakes the retargeting into a clip of the target's bones. Its
    // samples must be what `apply_pose` gives at every time, between keys too: exact for the
    // steps that read one source bone (a fixed rotation on each side keeps the slerp), within
    // the tolerance (1e-4 rad, and 1e-4 × the hip scale for the hips) where a step reads a
    // product of source bones. Sampled at 97 times, off the 30 Hz keys.
    const TOLERANCE: f32 = 1e-4;
    let mut sources = Vec::new();
    for clip in ifp_clips("anims/sa_ped.ifp") {
        sources.push(Source::gta(GtaGame::Sa, clip));
    }
    for clip in ifp_clips("anims/vc_ped.ifp") {
        sources.push(Source::gta(GtaGame::Vc, clip));
    }
    sources.push(biped_walk(1.0 / 30.0));
    let mut refined = 0;
    for (label, character) in characters() {
        let names: Vec<&str> = character.names.iter().map(String::as_str).collect();
        let (_, target_map) = BoneMap::detect(&names);
        let (target_rest, _) =
            RestPose::from_trs(character.parents.clone(), &character.trs).unwrap();
        let target_hips = character.node(HumanoidBone::Hips).unwrap();
        let rest_world = character.world(&character.trs);
        let hips_parent =
            character.parents[target_hips].map_or(Affine3A::IDENTITY, |p| rest_world[p]);
        for source in &sources {
            let name = &source.clip.name;
            let pairs = source.source.bone_map().1.pairs(&target_map);
            let source_hips = source.bone(HumanoidBone::Hips).unwrap();
            let retargeter = Retargeter::new(
                &source.source.rest,
                &target_rest,
                &pairs,
                source.source.to_gltf,
            )
            .unwrap()
            .with_hips(source_hips, target_hips, Vec3::Y);
            let baked = retargeter.retarget_clip(
                &source.clip,
                &source.source.tracks,
                |p| hips_parent.inverse().transform_point3(p),
                TOLERANCE,
            );
            // One track per pair, each on its pair's bone.
            let mut bones: Vec<usize> = baked.targets.iter().flatten().copied().collect();
            bones.sort_unstable();
            let mut paired: Vec<usize> = retargeter.pairs().map(|p| p.1).collect();
            paired.sort_unstable();
            assert_eq!(bones, paired, "{label} {name}");
            let source_keys = source.clip.key_count();
            refined += baked.clip.key_count().saturating_sub(source_keys);
            let mut live = vec![Quat::IDENTITY; character.names.len()];
            let hip_scale = retargeter.hips_scale();
            let (mut worst, mut worst_hips) = (0.0f32, 0.0f32);
            for k in 0..97 {
                let t = source.clip.duration() * (k as f32 + 0.37) / 97.0;
                let hips = retargeter.apply_pose(&source.pose(t), &mut live).unwrap();
                for (track, target) in baked.targets.iter().enumerate() {
                    let b = target.unwrap();
                    let s = baked.clip.sample_track(track, t);
                    let r = s.rotation.expect("a rotation per paired bone");
                    worst = worst.max(angle(r, live[b]));
                    if b == target_hips {
                        let at = s.translation.expect("the hips' translation");
                        let want = hips_parent.inverse().transform_point3(hips);
                        worst_hips = worst_hips.max(at.distance(want) / hip_scale);
                    }
                }
            }
            // Float rounding of the products (f32) adds a few 1e-6 rad.
            assert!(worst < TOLERANCE + 2e-5, "{label} {name}: {worst:e} rad");
            assert!(
                worst_hips < TOLERANCE + 2e-5,
                "{label} {name}: hips off by {worst_hips:e} (source units)"
            );
            // Keyed: every paired bone whose step reads a keyed source bone. The sample's
            // `wave` keys the right arm alone (bones 21–24): only that arm's bones are keyed,
            // and the hips (whose translation the root's keys do not move) are not.
            let keyed: Vec<&str> = baked
                .keyed
                .iter()
                .enumerate()
                .filter(|(_, k)| k.0)
                .map(|(b, _)| character.names[b].as_str())
                .collect();
            if name == "wave" {
                assert!(
                    !keyed.is_empty() && keyed.len() <= 4,
                    "{label} {name}: {keyed:?}"
                );
                assert!(!baked.keyed[target_hips].1, "{label} {name}");
                for n in &keyed {
                    let b = target_map
                        .iter()
                        .find(|(_, i)| character.names[*i] == *n)
                        .map(|(h, _)| h);
                    assert!(
                        matches!(
                            b,
                            Some(
                                HumanoidBone::RightShoulder
                                    | HumanoidBone::RightUpperArm
                                    | HumanoidBone::RightLowerArm
                                    | HumanoidBone::RightHand
                            )
                        ),
                        "{label} {name}: {n} keyed ({b:?})"
                    );
                }
            } else if name == "walk" {
                assert_eq!(keyed.len(), paired.len(), "{label} {name}");
                assert!(baked.keyed[target_hips].1, "{label} {name}");
            }
        }
    }
    eprintln!("keys added where steps read several source bones: {refined}");
}
