//! The bundled sample animations: in sync with their generator, and moving as described.

use rigplay::animation::BonePose;
use rigplay::formats::ifp::{IfpFile, IfpVersion};
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
    let sa = IfpFile::read(&files[0].1).unwrap();
    assert!(sa.warnings.is_empty());
    assert_eq!(sa.file.version, IfpVersion::Anp3);
    let vc = IfpFile::read(&files[1].1).unwrap();
    assert_eq!(vc.file.version, IfpVersion::Anpk);
    let skeleton = Skeleton::gta_sa();
    let walk = sa.file.clip("walk").unwrap().to_clip();
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
    let wave = sa.file.clip("wave").unwrap();
    assert_eq!(
        wave.sequences.iter().map(|s| s.bone_id).collect::<Vec<_>>(),
        [21, 22, 23, 24]
    );
}

/// The glTF JSON and BIN chunks of a `.glb`, checked field by field against the container
/// layout (glTF 2.0 §4.4: 12-byte header, then chunks of length, type, data).
fn glb_chunks(bytes: &[u8]) -> (serde_json::Value, &[u8]) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(word(4), 2, "version");
    assert_eq!(word(8), bytes.len(), "total length");
    let json_len = word(12);
    assert_eq!(&bytes[16..20], b"JSON");
    assert!(json_len.is_multiple_of(4));
    let json = serde_json::from_slice(&bytes[20..20 + json_len]).expect("JSON chunk");
    let bin_at = 20 + json_len;
    let bin_len = word(bin_at);
    assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0");
    assert_eq!(bin_at + 8 + bin_len, bytes.len());
    (json, &bytes[bin_at + 8..])
}

#[test]
fn the_sample_character_is_a_skinned_mixamo_humanoid_in_a_t_pose() {
    use glam::{Mat4, Quat, Vec3};
    let files = rigplay_samples::sample_files();
    let (_, bytes) = files
        .iter()
        .find(|(p, _)| *p == "characters/humanoid.glb")
        .expect("the character is a sample");
    let (json, bin) = glb_chunks(bytes);
    let nodes = json["nodes"].as_array().unwrap();
    let skin = &json["skins"][0];
    let joints: Vec<usize> = skin["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_u64().unwrap() as usize)
        .collect();
    let name = |i: usize| nodes[i]["name"].as_str().unwrap().to_owned();
    // Mixamo's names, with its prefix.
    let names: Vec<String> = joints.iter().map(|&j| name(j)).collect();
    for wanted in [
        "mixamorig:Hips",
        "mixamorig:Spine2",
        "mixamorig:Head",
        "mixamorig:LeftArm",
        "mixamorig:RightForeArm",
        "mixamorig:LeftUpLeg",
        "mixamorig:RightFoot",
    ] {
        assert!(names.iter().any(|n| n == wanted), "{wanted} in {names:?}");
    }
    // World rest transforms from the node hierarchy (the Armature root is the identity).
    let mut parent = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for c in node["children"].as_array().into_iter().flatten() {
            parent[c.as_u64().unwrap() as usize] = Some(i);
        }
    }
    let local = |i: usize| {
        let v = |key: &str, n: usize, default: &[f32]| -> Vec<f32> {
            nodes[i][key]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_f64().unwrap() as f32).collect())
                .unwrap_or_else(|| default[..n].to_vec())
        };
        let t = v("translation", 3, &[0.0, 0.0, 0.0]);
        let r = v("rotation", 4, &[0.0, 0.0, 0.0, 1.0]);
        Mat4::from_rotation_translation(
            Quat::from_xyzw(r[0], r[1], r[2], r[3]),
            Vec3::new(t[0], t[1], t[2]),
        )
    };
    let world = |mut i: usize| {
        let mut m = local(i);
        while let Some(p) = parent[i] {
            m = local(p) * m;
            i = p;
        }
        m
    };
    let at = |n: &str| {
        let i = joints[names.iter().position(|x| x == n).unwrap()];
        world(i).w_axis.truncate()
    };
    // T-pose: the arms horizontal along ±X (the left arm at +X: facing +Z, Y up), the legs
    // straight down, the hips about 0.95 m up.
    let (shoulder, elbow, wrist) = (
        at("mixamorig:LeftArm"),
        at("mixamorig:LeftForeArm"),
        at("mixamorig:LeftHand"),
    );
    assert!((at("mixamorig:Hips").y - 0.95).abs() < 1e-5);
    for (a, b) in [(shoulder, elbow), (elbow, wrist)] {
        let d = (b - a).normalize();
        assert!(d.dot(Vec3::X) > 0.9999, "left arm along +X: {d}");
    }
    assert!((at("mixamorig:RightForeArm").x + 0.44).abs() < 1e-5);
    let d = (at("mixamorig:LeftLeg") - at("mixamorig:LeftUpLeg")).normalize();
    assert!(d.dot(-Vec3::Y) > 0.9999, "thigh straight down: {d}");
    // Not GTA's axes nor the identity: a bone's rest rotation points its +Y along the bone.
    let forearm = joints[names
        .iter()
        .position(|x| x == "mixamorig:LeftForeArm")
        .unwrap()];
    let y = world(forearm).transform_vector3(Vec3::Y);
    assert!(
        y.dot(Vec3::X) > 0.9999,
        "the forearm's +Y runs down the bone: {y}"
    );
    // Inverse bind matrices: each the inverse of its joint's rest world transform.
    let accessors = json["accessors"].as_array().unwrap();
    let views = json["bufferViews"].as_array().unwrap();
    let read_floats = |accessor: usize| -> Vec<f32> {
        let a = &accessors[accessor];
        let view = &views[a["bufferView"].as_u64().unwrap() as usize];
        let at = view["byteOffset"].as_u64().unwrap() as usize;
        let len = view["byteLength"].as_u64().unwrap() as usize;
        bin[at..at + len]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let ibm = read_floats(skin["inverseBindMatrices"].as_u64().unwrap() as usize);
    assert_eq!(ibm.len(), joints.len() * 16);
    for (k, &j) in joints.iter().enumerate() {
        let m = Mat4::from_cols_slice(&ibm[k * 16..k * 16 + 16]) * world(j);
        assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-5), "{}: {m}", name(j));
    }
    // The skinned mesh: every vertex weighted 1 to one joint, positions within the accessor's
    // bounds, indices in range.
    let primitive = &json["meshes"][0]["primitives"][0];
    let attr = |k: &str| primitive["attributes"][k].as_u64().unwrap() as usize;
    let positions = read_floats(attr("POSITION"));
    let weights = read_floats(attr("WEIGHTS_0"));
    let count = accessors[attr("POSITION")]["count"].as_u64().unwrap() as usize;
    assert_eq!(positions.len(), count * 3);
    assert!(count >= 24 * 15, "a box per bone: {count} vertices");
    for w in weights.chunks_exact(4) {
        assert_eq!(w, [1.0, 0.0, 0.0, 0.0]);
    }
    let max = &accessors[attr("POSITION")]["max"];
    let top = max[1].as_f64().unwrap();
    assert!((1.7..1.8).contains(&top), "about 1.75 m tall: {top}");
    assert_eq!(nodes.iter().filter(|n| n.get("skin").is_some()).count(), 1);
    // Its names are found as Mixamo's, every humanoid bone matched.
    use rigplay::animation::retarget::{BoneMap, BonePreset};
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (preset, map) = BoneMap::detect(&refs);
    assert_eq!(preset, BonePreset::Mixamo);
    let report = map.report(&refs);
    println!(
        "unmatched {:?}, unused {:?}",
        report.unmatched, report.unused
    );
    assert!(report.unmatched.is_empty(), "{:?}", report.unmatched);
}

/// The sample character's joints as a rest pose (parents, local rest transforms) with their
/// names, from its glTF nodes.
fn character_rest_pose() -> (Vec<String>, rigplay::animation::retarget::RestPose) {
    use glam::{Quat, Vec3};
    let files = rigplay_samples::sample_files();
    let (_, bytes) = files
        .iter()
        .find(|(p, _)| *p == "characters/humanoid.glb")
        .unwrap();
    let (json, _) = glb_chunks(bytes);
    let nodes = json["nodes"].as_array().unwrap();
    let joints: Vec<usize> = json["skins"][0]["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_u64().unwrap() as usize)
        .collect();
    let f = |v: &serde_json::Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let mut parents = vec![None; joints.len()];
    let mut local = Vec::new();
    for (k, &node) in joints.iter().enumerate() {
        for c in nodes[node]["children"].as_array().into_iter().flatten() {
            let c = c.as_u64().unwrap() as usize;
            if let Some(child) = joints.iter().position(|&j| j == c) {
                parents[child] = Some(k);
            }
        }
        let (t, r) = (f(&nodes[node]["translation"]), f(&nodes[node]["rotation"]));
        local.push((
            Vec3::new(t[0], t[1], t[2]),
            Quat::from_xyzw(r[0], r[1], r[2], r[3]),
        ));
    }
    let names = joints
        .iter()
        .map(|&n| nodes[n]["name"].as_str().unwrap().to_owned())
        .collect();
    (
        names,
        rigplay::animation::retarget::RestPose { parents, local },
    )
}

#[test]
fn the_sample_walk_retargeted_onto_the_sample_character_points_its_limbs_where_the_ped_does() {
    use glam::{Quat, Vec3};
    use rigplay::animation::retarget::{BoneMap, RestPose, Retargeter};
    use rigplay::coords::GTA_TO_GLTF;
    // Source: the SA ped (Z up, facing +Y, A-pose rest arms) playing the sample walk; target:
    // the Mixamo-named T-pose character (Y up, facing +Z, its bones' +Y along the bones).
    let files = rigplay_samples::sample_files();
    let sa = IfpFile::read(&files[0].1).unwrap();
    let skeleton = Skeleton::gta_sa();
    let walk = sa.file.clip("walk").unwrap().to_clip();
    let binding = skeleton.bind(&walk);
    let source = RestPose::from(&skeleton);
    let source_names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
    let (_, source_map) = BoneMap::detect(&source_names);
    let (target_names, target) = character_rest_pose();
    let target_refs: Vec<&str> = target_names.iter().map(String::as_str).collect();
    let (_, target_map) = BoneMap::detect(&target_refs);
    let pairs = source_map.pairs(&target_map);
    assert!(pairs.len() >= 20, "{} pairs", pairs.len());
    let retargeter = Retargeter::new(&source, &target, &pairs, GTA_TO_GLTF).unwrap();
    let world = |rest: &RestPose, rotations: &[Quat]| {
        let posed = RestPose {
            parents: rest.parents.clone(),
            local: rest
                .local
                .iter()
                .zip(rotations)
                .map(|(&(t, _), &r)| (t, r))
                .collect(),
        };
        posed.world().unwrap()
    };
    let source_index = |name: &str| {
        source_names
            .iter()
            .position(|n| n.trim() == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let target_index = |name: &str| target_refs.iter().position(|n| *n == name).unwrap();
    // Limbs: (source bone, its child) and (target bone, its child), directions compared in
    // the character's axes (glTF: Y up, facing +Z).
    let limbs = [
        (
            ("L Thigh", "L Calf"),
            ("mixamorig:LeftUpLeg", "mixamorig:LeftLeg"),
        ),
        (
            ("R Calf", "R Foot"),
            ("mixamorig:RightLeg", "mixamorig:RightFoot"),
        ),
        (
            ("L UpperArm", "L ForeArm"),
            ("mixamorig:LeftArm", "mixamorig:LeftForeArm"),
        ),
        (
            ("R ForeArm", "R Hand"),
            ("mixamorig:RightForeArm", "mixamorig:RightHand"),
        ),
        (("Spine1", "Neck"), ("mixamorig:Spine2", "mixamorig:Neck")),
    ];
    let mut worst = 0.0f32;
    for step in 0..12 {
        let t = step as f32 * 0.1;
        let mut local = skeleton.rest_pose();
        let mut by_track = vec![BonePose::default(); walk.tracks().len()];
        for (i, b) in binding.targets.iter().enumerate() {
            by_track[i] = local[b.unwrap()];
        }
        walk.sample(t, &mut walk.cursor(), &mut by_track);
        for (i, b) in binding.targets.iter().enumerate() {
            local[b.unwrap()] = by_track[i];
        }
        let source_rotations: Vec<Quat> = local.iter().map(|p| p.rotation).collect();
        let mut target_rotations: Vec<Quat> = target.local.iter().map(|l| l.1).collect();
        retargeter.apply(&source_rotations, &mut target_rotations);
        let (sw, tw) = (
            world(&source, &source_rotations),
            world(&target, &target_rotations),
        );
        for ((sa, sb), (ta, tb)) in limbs {
            let s = GTA_TO_GLTF * (sw[source_index(sb)].0 - sw[source_index(sa)].0).normalize();
            let d = (tw[target_index(tb)].0 - tw[target_index(ta)].0).normalize();
            let angle = s.angle_between(d).to_degrees();
            worst = worst.max(angle);
            assert!(
                angle < 1.0,
                "t {t}: {ta} points {d}, the ped's {sa} {s} ({angle}°)"
            );
        }
        // The legs swing: at a quarter cycle the left foot is ahead (+Z, the character's
        // forward) of the right, three quarters in behind.
        let z = |n: &str| tw[target_index(n)].0.z;
        if step == 3 {
            assert!(z("mixamorig:LeftFoot") > z("mixamorig:RightFoot") + 0.1);
        }
        if step == 9 {
            assert!(z("mixamorig:LeftFoot") < z("mixamorig:RightFoot") - 0.1);
        }
    }
    println!("largest limb direction difference {worst:.4}°");
    let _ = Vec3::ZERO;
}
