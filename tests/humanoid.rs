//! Humanoid characters built for the retargeting tests, as a glTF scene graph would hold them:
//! names in one convention (Mixamo with a prefix, VRM, VRoid, Unreal's mannequin), a T-pose or an
//! A-pose, limb lengths unlike GTA's, a random rest rotation on every joint (so that no bone's
//! axes match GTA's), extra bones the map does not know (twist bones, end bones, an Unreal
//! `root`), and optionally an `Armature` node above them with a rotation and a scale (what a
//! Blender or FBX export has). Built field by field from world positions; nothing of rigplay's
//! retargeting is used.
//!
//! Axes: Y up, facing +Z, so the character's left is +X (glTF's convention).

#![allow(dead_code)]

use crate::rng::Rng;
use glam::{Affine3A, Quat, Vec3};
use rigplay::animation::retarget::HumanoidBone;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Naming {
    /// Mixamo, every name behind this prefix (`mixamorig:`, `mixamorig12:`, ``).
    Mixamo(&'static str),
    Vrm,
    VRoid,
    Unreal,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arms {
    T,
    /// Arms this many degrees below the horizontal.
    A(f32),
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub naming: Naming,
    pub arms: Arms,
    /// Overall size (1: about 1.7 m tall).
    pub size: f32,
    /// Arm and leg length factors (GTA's ped is about 1 and 1).
    pub arm: f32,
    pub leg: f32,
    /// An `Armature` root node: its rotation and uniform scale.
    pub armature: Option<(Quat, f32)>,
    /// Humanoid bones left out, with everything below them.
    pub missing: Vec<HumanoidBone>,
    pub seed: u64,
}

impl Spec {
    pub fn new(naming: Naming, arms: Arms) -> Self {
        Spec {
            naming,
            arms,
            size: 1.0,
            arm: 1.0,
            leg: 1.0,
            armature: None,
            missing: Vec::new(),
            seed: 1,
        }
    }
}

/// A built character: nodes in parent-before-child order.
#[derive(Debug, Clone)]
pub struct Character {
    pub names: Vec<String>,
    pub parents: Vec<Option<usize>>,
    /// Local (translation, rotation, scale), as a glTF node has them.
    pub trs: Vec<(Vec3, Quat, Vec3)>,
    /// Which node each humanoid bone is.
    pub humanoid: Vec<(HumanoidBone, usize)>,
    /// The hips' height above the lowest humanoid bone (the toes), world units: by
    /// construction `0.12·size + 0.45·size·leg + 0.43·size·leg` with both legs there.
    pub hip_height: f32,
}

impl Character {
    pub fn node(&self, bone: HumanoidBone) -> Option<usize> {
        self.humanoid
            .iter()
            .find(|(b, _)| *b == bone)
            .map(|(_, i)| *i)
    }

    /// World affine of every node for these local transforms (plain scene-graph composition).
    pub fn world(&self, trs: &[(Vec3, Quat, Vec3)]) -> Vec<Affine3A> {
        let mut out: Vec<Affine3A> = Vec::with_capacity(trs.len());
        for (i, &(t, r, s)) in trs.iter().enumerate() {
            let local = Affine3A::from_scale_rotation_translation(s, r, t);
            out.push(match self.parents[i] {
                Some(p) => out[p] * local,
                None => local,
            });
        }
        out
    }

    /// The rest world positions.
    pub fn rest_positions(&self) -> Vec<Vec3> {
        self.world(&self.trs)
            .iter()
            .map(|a| a.translation.into())
            .collect()
    }
}

/// One joint of the template: role, parent role, humanoid bone.
struct Joint {
    role: &'static str,
    parent: Option<&'static str>,
    bone: Option<HumanoidBone>,
}

fn name(naming: Naming, role: &str) -> String {
    use Naming::*;
    let (side, part) = match role.split_once('.') {
        Some((s, p)) => (Some(s == "l"), p),
        None => (None, role),
    };
    let mixamo = |part: &str| -> String {
        match part {
            "hips" => "Hips",
            "spine" => "Spine",
            "chest" => "Spine1",
            "upperchest" => "Spine2",
            "neck" => "Neck",
            "head" => "Head",
            "headend" => "HeadTop_End",
            "shoulder" => "Shoulder",
            "upperarm" => "Arm",
            "twist" => "ArmTwist",
            "lowerarm" => "ForeArm",
            "hand" => "Hand",
            "handend" => "HandIndex1",
            "upperleg" => "UpLeg",
            "lowerleg" => "Leg",
            "foot" => "Foot",
            "toes" => "ToeBase",
            "toesend" => "Toe_End",
            other => other,
        }
        .to_owned()
    };
    let vrm = |part: &str| -> String {
        match part {
            "upperchest" => "upperChest",
            "upperarm" => "UpperArm",
            "lowerarm" => "LowerArm",
            "upperleg" => "UpperLeg",
            "lowerleg" => "LowerLeg",
            "twist" => "UpperArmTwist",
            "handend" => "IndexProximal",
            "toesend" => "ToesEnd",
            "headend" => "head_end",
            "shoulder" => "Shoulder",
            "hand" => "Hand",
            "foot" => "Foot",
            "toes" => "Toes",
            other => other,
        }
        .to_owned()
    };
    match naming {
        Mixamo(prefix) => {
            let side = match side {
                Some(true) => "Left",
                Some(false) => "Right",
                None => "",
            };
            format!("{prefix}{side}{}", mixamo(part))
        }
        Vrm => match side {
            Some(l) => format!("{}{}", if l { "left" } else { "right" }, vrm(part)),
            None => vrm(part),
        },
        VRoid => {
            let part = match part {
                "upperchest" => "UpperChest".to_owned(),
                "toes" => "ToeBase".to_owned(),
                "headend" => "HeadTop_End".to_owned(),
                p => {
                    let v = vrm(p);
                    let mut c = v.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                }
            };
            let side = match side {
                Some(true) => "L",
                Some(false) => "R",
                None => "C",
            };
            format!("J_Bip_{side}_{part}")
        }
        Unreal => {
            let base = match part {
                "hips" => "pelvis",
                "spine" => "spine_01",
                "chest" => "spine_02",
                "upperchest" => "spine_03",
                "neck" => "neck_01",
                "head" => "head",
                "headend" => "head_end",
                "shoulder" => "clavicle",
                "upperarm" => "upperarm",
                "twist" => "upperarm_twist_01",
                "lowerarm" => "lowerarm",
                "hand" => "hand",
                "handend" => "index_01",
                "upperleg" => "thigh",
                "lowerleg" => "calf",
                "foot" => "foot",
                "toes" => "ball",
                "toesend" => "ball_end",
                "root" => "root",
                other => other,
            };
            match side {
                Some(l) => format!("{base}_{}", if l { "l" } else { "r" }),
                None => base.to_owned(),
            }
        }
    }
}

fn template(unreal_root: bool) -> Vec<Joint> {
    use HumanoidBone::*;
    let mut j = Vec::new();
    let mut push = |role, parent, bone| j.push(Joint { role, parent, bone });
    if unreal_root {
        push("root", None, None);
        push("hips", Some("root"), Some(Hips));
    } else {
        push("hips", None, Some(Hips));
    }
    push("spine", Some("hips"), Some(Spine));
    push("chest", Some("spine"), Some(Chest));
    push("upperchest", Some("chest"), Some(UpperChest));
    push("neck", Some("upperchest"), Some(Neck));
    push("head", Some("neck"), Some(Head));
    push("headend", Some("head"), None);
    for (s, [sh, ua, la, h, ul, ll, f, t]) in [
        (
            "l",
            [
                LeftShoulder,
                LeftUpperArm,
                LeftLowerArm,
                LeftHand,
                LeftUpperLeg,
                LeftLowerLeg,
                LeftFoot,
                LeftToes,
            ],
        ),
        (
            "r",
            [
                RightShoulder,
                RightUpperArm,
                RightLowerArm,
                RightHand,
                RightUpperLeg,
                RightLowerLeg,
                RightFoot,
                RightToes,
            ],
        ),
    ] {
        let r = |p: &str| -> &'static str { Box::leak(format!("{s}.{p}").into_boxed_str()) };
        push(r("shoulder"), Some("upperchest"), Some(sh));
        push(r("upperarm"), Some(r("shoulder")), Some(ua));
        push(r("lowerarm"), Some(r("upperarm")), Some(la));
        push(r("twist"), Some(r("upperarm")), None);
        push(r("hand"), Some(r("lowerarm")), Some(h));
        push(r("handend"), Some(r("hand")), None);
        push(r("upperleg"), Some("hips"), Some(ul));
        push(r("lowerleg"), Some(r("upperleg")), Some(ll));
        push(r("foot"), Some(r("lowerleg")), Some(f));
        push(r("toes"), Some(r("foot")), Some(t));
        push(r("toesend"), Some(r("toes")), None);
    }
    j
}

/// A random unit quaternion (uniform enough for the tests).
pub fn random_rotation(rng: &mut Rng) -> Quat {
    loop {
        let v = glam::Vec4::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        );
        let l = v.length();
        if l > 0.1 && l <= 1.0 {
            return Quat::from_vec4(v / l);
        }
    }
}

pub fn build(spec: &Spec) -> Character {
    let s = spec.size;
    let ul = 0.45 * s * spec.leg;
    let ll = 0.43 * s * spec.leg;
    let hips_y = 0.12 * s + ul + ll;
    let arm_dir = |left: bool| {
        let x = if left { 1.0 } else { -1.0 };
        match spec.arms {
            Arms::T => Vec3::new(x, 0.0, 0.0),
            Arms::A(deg) => {
                let a = deg.to_radians();
                Vec3::new(x * a.cos(), -a.sin(), 0.0)
            }
        }
    };
    // A joint's world position from the joints placed before it (template order).
    let position = |role: &str, placed: &HashMap<String, Vec3>| -> Vec3 {
        let at = |r: &str| placed[r];
        let (side, part) = match role.split_once('.') {
            Some((side, p)) => (Some(side == "l"), p),
            None => (None, role),
        };
        let x = if side == Some(true) { 1.0 } else { -1.0 };
        let sided = |p: &str| format!("{}.{p}", if side == Some(true) { "l" } else { "r" });
        match part {
            "root" => Vec3::ZERO,
            "hips" => Vec3::new(0.0, hips_y, 0.0),
            "spine" => at("hips") + Vec3::new(0.0, 0.10 * s, -0.01 * s),
            "chest" => at("spine") + Vec3::new(0.0, 0.12 * s, 0.0),
            "upperchest" => at("chest") + Vec3::new(0.0, 0.12 * s, 0.01 * s),
            "neck" => at("upperchest") + Vec3::new(0.0, 0.13 * s, 0.0),
            "head" => at("neck") + Vec3::new(0.0, 0.09 * s, 0.01 * s),
            "headend" => at("head") + Vec3::new(0.0, 0.18 * s, 0.0),
            "shoulder" => at("upperchest") + Vec3::new(x * 0.04 * s, 0.09 * s, 0.0),
            "upperarm" => at(&sided("shoulder")) + Vec3::new(x * 0.12 * s, 0.0, 0.0),
            "lowerarm" => {
                at(&sided("upperarm")) + arm_dir(side == Some(true)) * (0.28 * s * spec.arm)
            }
            "twist" => (at(&sided("upperarm")) + at(&sided("lowerarm"))) * 0.5,
            "hand" => at(&sided("lowerarm")) + arm_dir(side == Some(true)) * (0.25 * s * spec.arm),
            "handend" => at(&sided("hand")) + arm_dir(side == Some(true)) * (0.09 * s),
            "upperleg" => at("hips") + Vec3::new(x * 0.09 * s, -0.05 * s, 0.0),
            "lowerleg" => at(&sided("upperleg")) + Vec3::new(0.0, -ul, 0.01 * s),
            "foot" => at(&sided("lowerleg")) + Vec3::new(0.0, -ll, -0.02 * s),
            "toes" => at(&sided("foot")) + Vec3::new(0.0, -0.07 * s, 0.12 * s),
            "toesend" => at(&sided("toes")) + Vec3::new(0.0, 0.0, 0.05 * s),
            other => panic!("no role {other}"),
        }
    };
    let joints = template(spec.naming == Naming::Unreal);
    let mut rng = Rng(spec.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut cache: HashMap<String, Vec3> = HashMap::new();
    let mut c = Character {
        names: Vec::new(),
        parents: Vec::new(),
        trs: Vec::new(),
        humanoid: Vec::new(),
        hip_height: hips_y,
    };
    // World (position, rotation, scale) of the nodes placed so far, by role.
    let mut placed: HashMap<&str, (usize, Affine3A)> = HashMap::new();
    let armature = spec.armature.map(|(r, scale)| {
        c.names.push("Armature".into());
        c.parents.push(None);
        c.trs.push((Vec3::ZERO, r, Vec3::splat(scale)));
        (
            0,
            Affine3A::from_scale_rotation_translation(Vec3::splat(scale), r, Vec3::ZERO),
        )
    });
    let mut skipped: Vec<&str> = Vec::new();
    for j in &joints {
        if j.bone.is_some_and(|b| spec.missing.contains(&b))
            || j.parent.is_some_and(|p| skipped.contains(&p))
        {
            skipped.push(j.role);
            continue;
        }
        let p_world = position(j.role, &cache);
        cache.insert(j.role.to_owned(), p_world);
        let w_rot = random_rotation(&mut rng);
        let (parent, parent_affine) = match j.parent {
            Some(p) => {
                let (i, a) = placed[p];
                (Some(i), a)
            }
            None => match armature {
                Some((i, a)) => (Some(i), a),
                None => (None, Affine3A::IDENTITY),
            },
        };
        let inv = parent_affine.inverse();
        let t = inv.transform_point3(p_world);
        let (_, parent_rot, _) = parent_affine.to_scale_rotation_translation();
        let r = (parent_rot.inverse() * w_rot).normalize();
        let index = c.names.len();
        c.names.push(name(spec.naming, j.role));
        c.parents.push(parent);
        c.trs.push((t, r, Vec3::ONE));
        if let Some(b) = j.bone {
            c.humanoid.push((b, index));
        }
        placed.insert(
            j.role,
            (
                index,
                parent_affine * Affine3A::from_rotation_translation(r, t),
            ),
        );
    }
    c
}

/// The character as a glTF 2.0 JSON document: one node per bone with its TRS, no mesh (a scene
/// graph is all a retarget binds to). Written field by field here, not by rigplay.
pub fn gltf_json(c: &Character) -> String {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); c.names.len()];
    let mut roots = Vec::new();
    for (i, p) in c.parents.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(i),
            None => roots.push(i),
        }
    }
    let nodes: Vec<serde_json::Value> = (0..c.names.len())
        .map(|i| {
            let (t, r, s) = c.trs[i];
            let mut node = serde_json::json!({
                "name": c.names[i],
                "translation": [t.x, t.y, t.z],
                "rotation": [r.x, r.y, r.z, r.w],
                "scale": [s.x, s.y, s.z],
            });
            if !children[i].is_empty() {
                node["children"] = serde_json::json!(children[i]);
            }
            node
        })
        .collect();
    serde_json::json!({
        "asset": {"version": "2.0", "generator": "rigplay tests"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
    })
    .to_string()
}
