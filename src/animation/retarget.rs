//! Retargeting: playing a clip made for one skeleton (a GTA ped, a DAN rig) on another (a
//! humanoid glTF character), the maths written once.
//!
//! Two parts:
//! * **which bone is which**: [`HumanoidBone`] names the bones every humanoid has (VRM 1.0's
//!   required and common set); a [`BoneMap`] says which index of a skeleton's name list each is,
//!   found by [`BoneMap::detect`] from the naming conventions of [`BonePreset`] (Mixamo, VRM,
//!   Unreal's mannequin, GTA) and corrected by [`BoneMap::with`]; [`BoneMap::report`] lists what
//!   matched and what did not. [`BoneMap::pairs`] turns a source map and a target map into
//!   `(source index, target index)` pairs.
//! * **how a pose carries over**: a [`Retargeter`] built from both skeletons' rest poses
//!   ([`RestPose`]) and the pairs turns a source pose (local rotations) into a target pose.
//!
//! ## The rotation maths
//!
//! Notation: `Ws_rest(s)`, `Ws_pose(s)` are the world (model-space) rotations of source bone `s`
//! at rest and in the pose, in the source's axes; `Wt_rest(t)`, `Wt_pose(t)` the same for target
//! bone `t` in the target's axes; `C` is the change of basis, a rotation taking source axes to
//! target axes (for a GTA source on a Y-up glTF target, [`crate::coords::GTA_TO_BEVY`]). A
//! rotation `R` written in source axes is `C·R·C⁻¹` in target axes (see [`crate::coords`]).
//!
//! 1. *What the source bone did.* Its posed world frame is its rest world frame turned by
//!    `Δs = Ws_pose · Ws_rest⁻¹` (a world-space rotation: `Δs · Ws_rest = Ws_pose`). In target
//!    axes that is `D = C · Δs · C⁻¹`.
//! 2. *Where the two skeletons' rests disagree.* Each bone has rest *directions*: from the bone
//!    towards each of its mapped children (the mapped bones whose nearest mapped ancestor it
//!    is, so that source and target directions point at the same humanoid bone; a child sitting
//!    on the bone is looked through to its own children), or, for a bone with no mapped child,
//!    its own offset from its nearest mapped ancestor. The alignment `A` turns the target's directions (world,
//!    target axes) onto the source's (`C·ds`, now in target axes too): the direction that
//!    carries on the bone's chain (a neck's head) is matched by the shortest rotation, and the
//!    turn about it fits the other directions; a bone on no chain (a hip: a bone's chain is
//!    its offset from its nearest *mapped* ancestor, so nodes left unmapped above the hips
//!    make none) gets the rotation that best fits all of them (`align` spells out the rule). `A = 1` when no direction is
//!    left — a root, or a bone sitting on its parent with no child.
//!    A T-pose target paired with an A-pose source gets, at the arms, `A` = the 45° turn down.
//! 3. *The target pose.* `Wt_pose = D · A · Wt_rest`: first bring the target bone onto the
//!    source's rest direction, then do what the source did. Its direction is then
//!    `D·A·dt = D·C·ds = C·Δs·ds`, the source's posed direction in target axes, whatever the
//!    target's bone axes are (its rest rotations only enter through `Wt_rest`, on the right).
//!    Precomputed per pair: `Wt_pose = C · Ws_pose · T` with `T = Ws_rest⁻¹ · C⁻¹ · A · Wt_rest`,
//!    one product per bone and frame.
//! 4. *Back to local.* `Lt(t) = Wt_pose(parent)⁻¹ · Wt_pose(t)`, parents before children;
//!    unmapped target bones keep their rest local rotation (and so follow their parent).
//!
//! With [`RestAlignment::KeepTargetRest`], `A = 1`: the target copies the source's *change from
//! rest*, so at the source's rest pose the target stands in its own rest pose (T stays T), and a
//! source arm lifted 30° lifts the target arm 30° from the target's rest. With the default
//! [`RestAlignment::MatchSourceRest`] the target reproduces the source's world *directions*: at
//! the source's rest pose a T-pose target stands in the source's A pose, and a 30° lift is 30°
//! from there. The first suits clips authored as offsets from the rest; the second (the usual
//! retargeting) suits absolute poses, as GTA's and DAN's clips are.
//!
//! Identical skeletons with `C = 1` give `A = 1`, `T = Ws_rest⁻¹·Wt_rest = 1`, so the target's
//! local rotations are the source's.
//!
//! ## Translations
//!
//! Only the hips move: [`Retargeter::with_hips`] names the pair whose translation carries over,
//! and [`Retargeter::apply_pose`] then returns the target hips' world position. The source's
//! hips displacement from their rest position is scaled by the ratio of the hip heights
//! ([`hips_translation_scale`]; a hip height is measured from the lowest mapped bone at rest, a
//! toe or a foot, so that neither skeleton's origin matters) and turned into target axes
//! ([`retarget_root_translation`]). Other bones keep their rest translations: bone lengths stay
//! the target's.
//!
//! ## Sources and the user's map
//!
//! [`RetargetSource`] is what a clip brings: its skeleton's names and rest pose, the bone each
//! track drives and its axes (a GTA clip's from [`crate::skeleton`]; a DAN clip's bones are flat
//! and rest at the first frame, [`RetargetSource::first_frame`]). [`user_pairs`] corrects the
//! pairs a detected map gives with a user's (source name, target name) entries.
//!
//! A scene graph's scales are folded into the translations by [`RestPose::from_trs`], so that
//! the rotation maths stays pure rotations.
//!
//! ## Bad input
//!
//! Nothing here panics. A rest pose whose parents form a cycle or point past the end, or whose
//! `parents` and `local` differ in length, is refused ([`RestPoseError`]); pairs naming a bone
//! out of range, or a target bone already paired, are skipped and listed
//! ([`Retargeter::skipped`]); a source pose shorter than the source skeleton uses rest rotations
//! for the missing bones; an output shorter than the target skeleton gets what fits.

use super::{BoneRef, BoneTrack, Channel, Clip, ClipBuilder};
use crate::animation::hierarchy::HierarchyFault;
use glam::{Quat, Vec3};

mod align;

/// A bone every humanoid skeleton has: VRM 1.0's required bones and its common optional ones
/// (`upperChest`, `neck`, the shoulders, the toes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // the variants are the VRM bone names
pub enum HumanoidBone {
    Hips,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
}

impl HumanoidBone {
    /// How many humanoid bones there are.
    pub const COUNT: usize = 22;

    /// Every humanoid bone, in declaration order (torso, arms, legs; left before right).
    pub const ALL: [HumanoidBone; Self::COUNT] = {
        use HumanoidBone::*;
        [
            Hips,
            Spine,
            Chest,
            UpperChest,
            Neck,
            Head,
            LeftShoulder,
            LeftUpperArm,
            LeftLowerArm,
            LeftHand,
            RightShoulder,
            RightUpperArm,
            RightLowerArm,
            RightHand,
            LeftUpperLeg,
            LeftLowerLeg,
            LeftFoot,
            LeftToes,
            RightUpperLeg,
            RightLowerLeg,
            RightFoot,
            RightToes,
        ]
    };

    /// The bone's position in [`HumanoidBone::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The VRM humanoid name (`"hips"`, `"leftUpperArm"`, …).
    pub fn vrm_name(self) -> &'static str {
        use HumanoidBone::*;
        match self {
            Hips => "hips",
            Spine => "spine",
            Chest => "chest",
            UpperChest => "upperChest",
            Neck => "neck",
            Head => "head",
            LeftShoulder => "leftShoulder",
            LeftUpperArm => "leftUpperArm",
            LeftLowerArm => "leftLowerArm",
            LeftHand => "leftHand",
            RightShoulder => "rightShoulder",
            RightUpperArm => "rightUpperArm",
            RightLowerArm => "rightLowerArm",
            RightHand => "rightHand",
            LeftUpperLeg => "leftUpperLeg",
            LeftLowerLeg => "leftLowerLeg",
            LeftFoot => "leftFoot",
            LeftToes => "leftToes",
            RightUpperLeg => "rightUpperLeg",
            RightLowerLeg => "rightLowerLeg",
            RightFoot => "rightFoot",
            RightToes => "rightToes",
        }
    }

    /// The bone with the given side (`left`), for a limb part given as its left variant.
    fn sided(left: HumanoidBone, right_side: bool) -> HumanoidBone {
        if right_side {
            HumanoidBone::ALL[left.index() + 4]
        } else {
            left
        }
    }
}

/// A skeleton naming convention [`BoneMap::detect`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BonePreset {
    /// Mixamo (`Hips`, `Spine1`, `LeftUpLeg`, `LeftForeArm`, `LeftToeBase`), with any prefix
    /// (`mixamorig:`, `mixamorig1:`, `Armature|mixamorig:`, `mixamorig_`) or none.
    Mixamo,
    /// VRM 0.x / 1.0 humanoid names (`hips`, `upperChest`, `leftUpperLeg`), and VRoid Studio's
    /// node names (`J_Bip_C_Hips`, `J_Bip_L_UpperArm`, `J_Bip_R_ToeBase`).
    Vrm,
    /// Unreal's mannequin (`pelvis`, `spine_01`..`spine_03`, `neck_01`, `clavicle_l`,
    /// `upperarm_l`, `lowerarm_l`, `thigh_l`, `calf_l`, `ball_l`).
    UnrealMannequin,
    /// GTA III / VC / SA ped bones as [`crate::skeleton`] spells them (`Pelvis`, `Spine1`,
    /// `Bip01 L Clavicle`, `L ForeArm`, `R Toe0`, III's `Swaist`, …), leading spaces ignored.
    Gta,
    /// 3ds Max Character Studio's Biped (`Bip01 Pelvis`, `Bip001 L Thigh`, `Bip01 R Forearm`,
    /// `Bip01 L Toe0`): what a DAN file exported from a Biped rig is named after.
    Biped,
}

impl BonePreset {
    /// Every preset, in the order [`BoneMap::detect`] prefers them on a tie.
    pub const ALL: [BonePreset; 5] = [
        BonePreset::Mixamo,
        BonePreset::Vrm,
        BonePreset::UnrealMannequin,
        BonePreset::Gta,
        BonePreset::Biped,
    ];

    /// The humanoid bone a name stands for in this convention, if any. Case, whitespace and
    /// separators (`_`, `-`, `.`) are ignored, and so is everything up to the last `:` or `|`.
    pub fn humanoid_bone(self, name: &str) -> Option<HumanoidBone> {
        let key = name_key(name);
        match self {
            BonePreset::Mixamo => mixamo(strip_mixamo_prefix(&key)),
            BonePreset::Vrm => vrm(&key).or_else(|| vroid(&key)),
            BonePreset::UnrealMannequin => unreal(&key),
            BonePreset::Gta => gta(&key),
            BonePreset::Biped => biped(&key),
        }
    }
}

/// A name's matching key: what follows the last `:` or `|`, ASCII lower case, letters and digits
/// only.
fn name_key(name: &str) -> String {
    let tail = name.rsplit([':', '|']).next().unwrap_or(name);
    tail.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `mixamorig` and the digits after it (`mixamorig_Hips` and `mixamorig12Hips`, which have no
/// `:` to cut at).
fn strip_mixamo_prefix(key: &str) -> &str {
    match key.strip_prefix("mixamorig") {
        Some(rest) => rest.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => key,
    }
}

/// Splits a `left…` / `right…` key into (is right, rest).
fn side(key: &str) -> Option<(bool, &str)> {
    if let Some(rest) = key.strip_prefix("left") {
        Some((false, rest))
    } else {
        key.strip_prefix("right").map(|rest| (true, rest))
    }
}

fn mixamo(key: &str) -> Option<HumanoidBone> {
    use HumanoidBone::*;
    Some(match key {
        "hips" => Hips,
        "spine" => Spine,
        "spine1" => Chest,
        "spine2" => UpperChest,
        "neck" => Neck,
        "head" => Head,
        _ => {
            let (right, part) = side(key)?;
            let left = match part {
                "shoulder" => LeftShoulder,
                "arm" => LeftUpperArm,
                "forearm" => LeftLowerArm,
                "hand" => LeftHand,
                "upleg" => LeftUpperLeg,
                "leg" => LeftLowerLeg,
                "foot" => LeftFoot,
                "toebase" => LeftToes,
                _ => return None,
            };
            HumanoidBone::sided(left, right)
        }
    })
}

fn vrm(key: &str) -> Option<HumanoidBone> {
    use HumanoidBone::*;
    Some(match key {
        "hips" => Hips,
        "spine" => Spine,
        "chest" => Chest,
        "upperchest" => UpperChest,
        "neck" => Neck,
        "head" => Head,
        _ => {
            let (right, part) = side(key)?;
            let left = match part {
                "shoulder" => LeftShoulder,
                "upperarm" => LeftUpperArm,
                "lowerarm" => LeftLowerArm,
                "hand" => LeftHand,
                "upperleg" => LeftUpperLeg,
                "lowerleg" => LeftLowerLeg,
                "foot" => LeftFoot,
                "toes" => LeftToes,
                _ => return None,
            };
            HumanoidBone::sided(left, right)
        }
    })
}

/// VRoid Studio's `J_Bip_{C,L,R}_<Part>` node names.
fn vroid(key: &str) -> Option<HumanoidBone> {
    let rest = key.strip_prefix("jbip")?;
    let (side, part) = rest.split_at_checked(1)?;
    let part = if part == "toebase" { "toes" } else { part };
    match side {
        "c" => vrm(part).filter(|b| b.index() < HumanoidBone::LeftShoulder.index()),
        "l" => vrm(&format!("left{part}")),
        "r" => vrm(&format!("right{part}")),
        _ => None,
    }
}

fn unreal(key: &str) -> Option<HumanoidBone> {
    use HumanoidBone::*;
    Some(match key {
        "pelvis" => Hips,
        "spine01" => Spine,
        "spine02" => Chest,
        "spine03" => UpperChest,
        "neck01" => Neck,
        "head" => Head,
        _ => {
            let (part, right) = if let Some(part) = key.strip_suffix('l') {
                (part, false)
            } else {
                (key.strip_suffix('r')?, true)
            };
            let left = match part {
                "clavicle" => LeftShoulder,
                "upperarm" => LeftUpperArm,
                "lowerarm" => LeftLowerArm,
                "hand" => LeftHand,
                "thigh" => LeftUpperLeg,
                "calf" => LeftLowerLeg,
                "foot" => LeftFoot,
                "ball" => LeftToes,
                _ => return None,
            };
            HumanoidBone::sided(left, right)
        }
    })
}

/// Biped's names: `bip` and its number, then the part (`pelvis`, `spine`, `spine1`,
/// `spine2`, `neck`, `head`, `l`/`r` with `clavicle`, `upperarm`, `forearm`, `hand`, `thigh`,
/// `calf`, `foot`, `toe0`).
fn biped(key: &str) -> Option<HumanoidBone> {
    use HumanoidBone::*;
    let part = key
        .strip_prefix("bip")?
        .trim_start_matches(|c: char| c.is_ascii_digit());
    Some(match part {
        "pelvis" => Hips,
        "spine" => Spine,
        "spine1" => Chest,
        "spine2" => UpperChest,
        "neck" => Neck,
        "head" => Head,
        _ => {
            let (right, part) = if let Some(p) = part.strip_prefix('l') {
                (false, p)
            } else {
                (true, part.strip_prefix('r')?)
            };
            let left = match part {
                "clavicle" => LeftShoulder,
                "upperarm" => LeftUpperArm,
                "forearm" => LeftLowerArm,
                "hand" => LeftHand,
                "thigh" => LeftUpperLeg,
                "calf" => LeftLowerLeg,
                "foot" => LeftFoot,
                "toe0" => LeftToes,
                _ => return None,
            };
            HumanoidBone::sided(left, right)
        }
    })
}

/// GTA's spellings (SA, VC, III) of the humanoid bones: the keys of
/// [`crate::skeleton::canonical_bone_id`] for the SA ids 1–5, 21–24, 31–34, 41–44 and 51–54
/// (written out here, since `animation` sits below `skeleton`; a test checks the two agree).
fn gta(key: &str) -> Option<HumanoidBone> {
    use HumanoidBone::*;
    Some(match key {
        "pelvis" | "swaist" => Hips,
        "spine" | "smid" => Spine,
        "spine1" | "storso" => Chest,
        "neck" => Neck,
        "head" | "shead" => Head,
        "bip01rclavicle" | "rclavicle" => RightShoulder,
        "rupperarm" | "supperarmr" => RightUpperArm,
        "rforearm" | "slowerarmr" => RightLowerArm,
        "rhand" | "srhand" => RightHand,
        "bip01lclavicle" | "lclavicle" => LeftShoulder,
        "lupperarm" | "supperarml" => LeftUpperArm,
        "lforearm" | "slowerarml" => LeftLowerArm,
        "lhand" | "slhand" => LeftHand,
        "lthigh" | "supperlegl" => LeftUpperLeg,
        "lcalf" | "slowerlegl" => LeftLowerLeg,
        "lfoot" | "sfootl" => LeftFoot,
        "ltoe" | "ltoe0" => LeftToes,
        "rthigh" | "supperlegr" => RightUpperLeg,
        "rcalf" | "slowerlegr" => RightLowerLeg,
        "rfoot" | "sfootr" => RightFoot,
        "rtoe" | "rtoe0" => RightToes,
        _ => return None,
    })
}

/// Which index of a skeleton's bone-name list each [`HumanoidBone`] is (at most one each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoneMap {
    bones: [Option<usize>; HumanoidBone::COUNT],
}

/// What a [`BoneMap`] made of a name list ([`BoneMap::report`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MatchReport {
    /// The humanoid bones found, with their index in the name list, in [`HumanoidBone::ALL`]
    /// order.
    pub matched: Vec<(HumanoidBone, usize)>,
    /// The humanoid bones not found (or mapped past the end of the list).
    pub unmatched: Vec<HumanoidBone>,
    /// The names no humanoid bone maps to, in list order.
    pub unused: Vec<String>,
    /// Humanoid bones mapped (by [`BoneMap::with`]) to an index past the end of the list.
    pub out_of_range: Vec<(HumanoidBone, usize)>,
}

impl BoneMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map the preset's naming gives a name list: each humanoid bone is the first name that
    /// stands for it.
    pub fn from_preset(preset: BonePreset, names: &[&str]) -> Self {
        let mut map = Self::new();
        for (index, name) in names.iter().enumerate() {
            if let Some(bone) = preset.humanoid_bone(name) {
                map.bones[bone.index()].get_or_insert(index);
            }
        }
        map
    }

    /// The preset that finds the most humanoid bones in the list, and its map. On a tie the
    /// earlier of [`BonePreset::ALL`] wins (so an empty list gives Mixamo and an empty map).
    pub fn detect(names: &[&str]) -> (BonePreset, BoneMap) {
        let mut best = (
            BonePreset::Mixamo,
            BoneMap::from_preset(BonePreset::Mixamo, names),
        );
        for preset in &BonePreset::ALL[1..] {
            let map = BoneMap::from_preset(*preset, names);
            if map.len() > best.1.len() {
                best = (*preset, map);
            }
        }
        best
    }

    /// The same map with `bone` at `index` (a user's correction).
    pub fn with(mut self, bone: HumanoidBone, index: usize) -> Self {
        self.bones[bone.index()] = Some(index);
        self
    }

    /// The same map without `bone`.
    pub fn without(mut self, bone: HumanoidBone) -> Self {
        self.bones[bone.index()] = None;
        self
    }

    /// The index `bone` maps to.
    pub fn get(&self, bone: HumanoidBone) -> Option<usize> {
        self.bones[bone.index()]
    }

    /// How many humanoid bones are mapped.
    pub fn len(&self) -> usize {
        self.bones.iter().flatten().count()
    }

    /// Whether no bone is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The mapped bones and their indices, in [`HumanoidBone::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (HumanoidBone, usize)> + '_ {
        HumanoidBone::ALL
            .iter()
            .filter_map(|&bone| Some((bone, self.get(bone)?)))
    }

    /// `(source index, target index)` for every humanoid bone both maps have, in
    /// [`HumanoidBone::ALL`] order: the pairs a [`Retargeter`] takes.
    pub fn pairs(&self, target: &BoneMap) -> Vec<(usize, usize)> {
        self.iter()
            .filter_map(|(bone, source)| Some((source, target.get(bone)?)))
            .collect()
    }

    /// What the map makes of the name list it indexes.
    pub fn report(&self, names: &[&str]) -> MatchReport {
        let mut report = MatchReport::default();
        let mut used = vec![false; names.len()];
        for bone in HumanoidBone::ALL {
            match self.get(bone) {
                Some(index) if index < names.len() => {
                    used[index] = true;
                    report.matched.push((bone, index));
                }
                Some(index) => {
                    report.out_of_range.push((bone, index));
                    report.unmatched.push(bone);
                }
                None => report.unmatched.push(bone),
            }
        }
        report.unused = names
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(name, _)| (*name).to_owned())
            .collect();
        report
    }
}

/// Why a [`RestPose`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestPoseError {
    /// `parents` and `local` differ in length.
    #[error("{parents} parents but {local} local transforms")]
    LengthMismatch {
        /// `parents.len()`.
        parents: usize,
        /// `local.len()`.
        local: usize,
    },
    /// A bone's parent index is past the end.
    #[error("bone {bone} has parent {parent}, past the end")]
    ParentOutOfRange {
        /// The bone.
        bone: usize,
        /// Its parent index.
        parent: usize,
    },
    /// A bone is its own ancestor.
    #[error("bone {bone} is its own ancestor")]
    Cycle {
        /// A bone on the cycle.
        bone: usize,
    },
}

/// A skeleton's rest pose: each bone's parent and local rest transform (translation, rotation)
/// in its parent's space. Parents need not come before children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RestPose {
    /// Each bone's parent index; `None` for a root.
    pub parents: Vec<Option<usize>>,
    /// Each bone's local rest (translation, rotation).
    pub local: Vec<(Vec3, Quat)>,
}

impl RestPose {
    /// Number of bones.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether there are no bones.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// A rest pose from local (translation, rotation, scale) transforms, as a scene graph has
    /// them: each translation is multiplied by its ancestors' scales (component-wise; exact for
    /// uniform scales, which is what skeletons use), so that world positions are right while
    /// the rotations stay pure. Also returns, per bone, the product of its own and its
    /// ancestors' scales: what its children's translations are multiplied by (for turning a
    /// world position back into a child's local translation). A broken hierarchy is refused.
    pub fn from_trs(
        parents: Vec<Option<usize>>,
        trs: &[(Vec3, Quat, Vec3)],
    ) -> Result<(Self, Vec<Vec3>), RestPoseError> {
        let mut pose = Self {
            parents,
            local: trs.iter().map(|&(t, r, _)| (t, r)).collect(),
        };
        let order = pose.order()?;
        let mut scales = vec![Vec3::ONE; trs.len()];
        for &bone in &order {
            let inherited = pose.parents[bone].map_or(Vec3::ONE, |p| scales[p]);
            let own = trs[bone].2;
            let own = if own.is_finite() { own } else { Vec3::ONE };
            scales[bone] = inherited * own;
            pose.local[bone].0 = finite(trs[bone].0) * inherited;
        }
        Ok((pose, scales))
    }

    /// The bone indices with every parent before its children (index order where it already
    /// is), or why there is no such order.
    pub fn order(&self) -> Result<Vec<usize>, RestPoseError> {
        let n = self.parents.len();
        if self.local.len() != n {
            return Err(RestPoseError::LengthMismatch {
                parents: n,
                local: self.local.len(),
            });
        }
        crate::animation::hierarchy::parents_first(&self.parents).map_err(|fault| match fault {
            HierarchyFault::ParentOutOfRange { node, parent } => {
                RestPoseError::ParentOutOfRange { bone: node, parent }
            }
            HierarchyFault::Cycle { node } => RestPoseError::Cycle { bone: node },
        })
    }

    /// Every bone's world (model-space) rest transform (position, rotation).
    pub fn world(&self) -> Result<Vec<(Vec3, Quat)>, RestPoseError> {
        let order = self.order()?;
        Ok(self.world_in(&order))
    }

    fn world_in(&self, order: &[usize]) -> Vec<(Vec3, Quat)> {
        let mut world = vec![(Vec3::ZERO, Quat::IDENTITY); self.len()];
        for &bone in order {
            let (t, r) = self.local[bone];
            let (t, r) = (finite(t), unit(r));
            world[bone] = match self.parents[bone] {
                Some(p) => {
                    let (pt, pr) = world[p];
                    (pt + pr * t, (pr * r).normalize())
                }
                None => (t, r),
            };
        }
        world
    }
}

/// `q` normalised; the identity for a zero or non-finite one.
fn unit(q: Quat) -> Quat {
    let len = q.length();
    if len.is_finite() && len > 1e-12 {
        q / len
    } else {
        Quat::IDENTITY
    }
}

/// Which skeleton a [`RetargetError`] is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetargetError {
    /// The source rest pose was refused.
    #[error("source skeleton: {0}")]
    Source(RestPoseError),
    /// The target rest pose was refused.
    #[error("target skeleton: {0}")]
    Target(RestPoseError),
}

/// How [`Retargeter`] treats the two skeletons' differing rest poses (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RestAlignment {
    /// Turn each target bone onto the source's rest direction first (`A` of the module docs):
    /// the target reproduces the source's world directions.
    #[default]
    MatchSourceRest,
    /// No alignment (`A = 1`): the target copies the source's change from rest, starting from
    /// its own rest.
    KeepTargetRest,
}

/// Why a pair given to [`Retargeter::new`] was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// The source index is past the source skeleton's end.
    SourceOutOfRange,
    /// The target index is past the target skeleton's end.
    TargetOutOfRange,
    /// An earlier pair already drives this target bone.
    DuplicateTarget,
}

/// A pair [`Retargeter::new`] did not use, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedPair {
    /// The source index given.
    pub source: usize,
    /// The target index given.
    pub target: usize,
    /// Why it was skipped.
    pub reason: SkipReason,
}

/// One mapped pair, precomputed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pair {
    source: usize,
    target: usize,
    /// The alignment `A`.
    align: Quat,
    /// `T = Ws_rest⁻¹ · C⁻¹ · A · Wt_rest`, so that `Wt_pose = C · Ws_pose · T`.
    tail: Quat,
}

/// Carries poses from a source skeleton to a target skeleton (the maths is in the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Retargeter {
    basis: Quat,
    source_parents: Vec<Option<usize>>,
    source_order: Vec<usize>,
    /// `source_order` cut to the bones whose world transform is needed: paired bones, the hips
    /// and their ancestors.
    source_fk: Vec<usize>,
    /// The work per frame, built once: one step per pair, reading the source bones of
    /// `chains`, and the hips' chain (root first) for their position.
    target_steps: Vec<TargetStep>,
    chains: Vec<u32>,
    hips_chain: Vec<u32>,
    source_rest: Vec<Quat>,
    target_parents: Vec<Option<usize>>,
    target_rest: Vec<Quat>,
    /// Per target bone, its index in `pairs`.
    target_pair: Vec<Option<usize>>,
    pairs: Vec<Pair>,
    skipped: Vec<SkippedPair>,
    /// Each source bone's local rest translation (for the source's posed positions).
    source_rest_translation: Vec<Vec3>,
    /// Each bone's world rest position, source then target.
    source_rest_position: Vec<Vec3>,
    target_rest_position: Vec<Vec3>,
    hips: Option<HipsPair>,
}

/// One pair's work per frame.
///
/// The target bone's world rotation is `W = C · Ws · T` (`T`: the pair's `tail`). Its
/// parent's world rotation is its nearest paired ancestor's, `Wa = C · Wsa · Ta`, times the
/// rests of the unpaired bones between (`B`, constant), or `B` alone when no ancestor is
/// paired. Its local rotation is then `B⁻¹ · Wa⁻¹ · W = B⁻¹ · Ta⁻¹ · (Wsa⁻¹ · Ws) · T`: `C`
/// cancels, and `Wsa⁻¹ · Ws` is the product of the source's local rotations from below the
/// ancestor's source bone down to the pair's (one of them when the source bone's parent is
/// the ancestor's, as it mostly is). So a step is `pre · Π(down) · T`, with `pre = B⁻¹ · Ta⁻¹`
/// (or `B⁻¹ · C` with no paired ancestor, `down` then running from the source's root), and no
/// forward kinematics of either skeleton. When the ancestor's source bone is not above the
/// pair's (a user's map may say so), `up` holds its chain from the root: `pre · Π(up)⁻¹ ·
/// Π(down) · T`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TargetStep {
    target: u32,
    /// Where the step's source bones start in `chains`: `up` of them, then `down`.
    chain: u32,
    up: u16,
    down: u16,
    pre: Quat,
    tail: Quat,
}

/// The pair whose translation carries over ([`Retargeter::with_hips`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct HipsPair {
    source: usize,
    target: usize,
    scale: f32,
}

impl Retargeter {
    /// A retargeter with [`RestAlignment::MatchSourceRest`]. `pairs` are (source bone, target
    /// bone) indices; `basis` turns source axes into target axes.
    pub fn new(
        source: &RestPose,
        target: &RestPose,
        pairs: &[(usize, usize)],
        basis: Quat,
    ) -> Result<Self, RetargetError> {
        Self::with_alignment(source, target, pairs, basis, RestAlignment::MatchSourceRest)
    }

    /// A retargeter with the given rest alignment.
    pub fn with_alignment(
        source: &RestPose,
        target: &RestPose,
        pairs: &[(usize, usize)],
        basis: Quat,
        alignment: RestAlignment,
    ) -> Result<Self, RetargetError> {
        let basis = unit(basis);
        let source_order = source.order().map_err(RetargetError::Source)?;
        let target_order = target.order().map_err(RetargetError::Target)?;
        let source_world = source.world_in(&source_order);
        let target_world = target.world_in(&target_order);

        let mut skipped = Vec::new();
        let mut target_source = vec![None; target.len()];
        for &(s, t) in pairs {
            let reason = if s >= source.len() {
                SkipReason::SourceOutOfRange
            } else if t >= target.len() {
                SkipReason::TargetOutOfRange
            } else if target_source[t].is_some() {
                SkipReason::DuplicateTarget
            } else {
                target_source[t] = Some(s);
                continue;
            };
            skipped.push(SkippedPair {
                source: s,
                target: t,
                reason,
            });
        }

        let aligned = match alignment {
            RestAlignment::MatchSourceRest => align::RestDirections {
                source_world: &source_world,
                target_world: &target_world,
                source_parents: &source.parents,
                target_parents: &target.parents,
                target_source: &target_source,
                basis,
            }
            .alignments(),
            RestAlignment::KeepTargetRest => vec![Quat::IDENTITY; target.len()],
        };
        let mut target_pair = vec![None; target.len()];
        let mut out_pairs = Vec::new();
        for t in 0..target.len() {
            let Some(s) = target_source[t] else { continue };
            let align = aligned[t];
            let tail = source_world[s].1.inverse() * basis.inverse() * align * target_world[t].1;
            target_pair[t] = Some(out_pairs.len());
            out_pairs.push(Pair {
                source: s,
                target: t,
                align,
                tail: tail.normalize(),
            });
        }

        let source_fk = chain_order(
            &source_order,
            &source.parents,
            out_pairs.iter().map(|p| p.source),
        );
        let target_rest: Vec<Quat> = target.local.iter().map(|&(_, r)| unit(r)).collect();
        let (target_steps, chains) = target_steps(
            &target_order,
            &target.parents,
            &target_rest,
            &target_pair,
            &out_pairs,
            &source.parents,
            basis,
        );
        Ok(Self {
            basis,
            source_parents: source.parents.clone(),
            source_fk,
            target_steps,
            chains,
            hips_chain: Vec::new(),
            source_order,
            source_rest: source.local.iter().map(|&(_, r)| unit(r)).collect(),
            target_parents: target.parents.clone(),
            target_rest,
            target_pair,
            pairs: out_pairs,
            skipped,
            source_rest_translation: source.local.iter().map(|&(t, _)| finite(t)).collect(),
            source_rest_position: source_world.iter().map(|&(p, _)| p).collect(),
            target_rest_position: target_world.iter().map(|&(p, _)| p).collect(),
            hips: None,
        })
    }

    /// The same retargeter, with `source_hips`'s translation carried onto `target_hips`
    /// ([`Retargeter::apply_pose`] returns where the target hips go): the source's displacement
    /// from its rest position, scaled by the ratio of the hip heights and turned into target
    /// axes ([`retarget_root_translation`]). A hip height is measured along `target_up` (target
    /// axes; `basis⁻¹ · target_up` on the source) from the lowest mapped bone at rest (a toe or
    /// a foot) to the hips, so that neither skeleton's origin matters (a GTA ped's is at its
    /// waist, a glTF character's at its feet). Indices out of range leave the retargeter as it
    /// was.
    pub fn with_hips(mut self, source_hips: usize, target_hips: usize, target_up: Vec3) -> Self {
        if source_hips >= self.source_parents.len() || target_hips >= self.target_parents.len() {
            return self;
        }
        let up = target_up.try_normalize().unwrap_or(Vec3::Y);
        let source_up = self.basis.inverse() * up;
        let height =
            |positions: &[Vec3], bones: &mut dyn Iterator<Item = usize>, hips: usize, up: Vec3| {
                let lowest = bones
                    .map(|b| positions[b].dot(up))
                    .fold(f32::INFINITY, f32::min);
                positions[hips].dot(up) - lowest
            };
        let source_height = height(
            &self.source_rest_position,
            &mut self.pairs.iter().map(|p| p.source),
            source_hips,
            source_up,
        );
        let target_height = height(
            &self.target_rest_position,
            &mut self.pairs.iter().map(|p| p.target),
            target_hips,
            up,
        );
        self.source_fk = chain_order(
            &self.source_order,
            &self.source_parents,
            self.pairs.iter().map(|p| p.source).chain([source_hips]),
        );
        self.hips = Some(HipsPair {
            source: source_hips,
            target: target_hips,
            scale: hips_translation_scale(source_height, target_height),
        });
        self.hips_chain = chain(&self.source_parents, None, source_hips);
        self
    }

    /// The factor source hip translations are scaled by (1 without [`Retargeter::with_hips`]).
    pub fn hips_scale(&self) -> f32 {
        self.hips.map_or(1.0, |h| h.scale)
    }

    /// The world rest position of a target bone (target axes).
    pub fn target_rest_position(&self, target_bone: usize) -> Option<Vec3> {
        self.target_rest_position.get(target_bone).copied()
    }

    /// The pairs in use, (source, target), in target index order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.pairs.iter().map(|p| (p.source, p.target))
    }

    /// Whether the pose of source bone `bone` reaches the target: it is paired, or the hips, or
    /// an ancestor of one of them (its motion moves them).
    pub fn uses_source(&self, bone: usize) -> bool {
        self.source_fk.contains(&bone)
    }

    /// The pairs given to [`Retargeter::new`] that were not used.
    pub fn skipped(&self) -> &[SkippedPair] {
        &self.skipped
    }

    /// The rest alignment `A` (target axes, world) of a mapped target bone.
    pub fn alignment(&self, target_bone: usize) -> Option<Quat> {
        let pair = (*self.target_pair.get(target_bone)?)?;
        Some(self.pairs[pair].align)
    }

    /// The target's local rotations for a source pose given as local rotations (one per source
    /// bone; missing ones are the source's rest). Mapped target bones follow their source bone;
    /// the others keep their rest rotation. `out_target_local` gets one rotation per target bone,
    /// as many as fit.
    pub fn apply(&self, source_pose_local: &[Quat], out_target_local: &mut [Quat]) {
        let pose: Vec<(Vec3, Quat)> = source_pose_local
            .iter()
            .zip(&self.source_rest_translation)
            .map(|(&r, &t)| (t, r))
            .collect();
        self.apply_pose(&pose, out_target_local);
    }

    /// [`Retargeter::apply`] for a whole source pose, local (translation, rotation) per source
    /// bone (missing bones are at rest). Returns the target hips' world position (target axes) when [`Retargeter::with_hips`] named them.
    pub fn apply_pose(
        &self,
        source_pose_local: &[(Vec3, Quat)],
        out_target_local: &mut [Quat],
    ) -> Option<Vec3> {
        for (bone, out) in out_target_local.iter_mut().enumerate() {
            if self.target_pair.get(bone).is_some_and(Option::is_none) {
                *out = self.target_rest[bone];
            }
        }
        self.retarget(|b| source_pose_local.get(b).copied(), out_target_local)
    }

    /// The paired target bones' local rotations for a source pose read bone by bone
    /// (`source_local(bone)`: local translation and rotation, `None` for the rest), written into
    /// `out_target_local` (as many as fit); the target's other bones are not written: they keep
    /// their rest rotation ([`Retargeter::target_rest_rotation`]), which the caller wrote once.
    /// Returns the target hips' world position as [`Retargeter::apply_pose`] does.
    ///
    /// A source rotation that is not unit length is taken for the rotation it scales: every
    /// product scales with it, and the result is normalised. A zero or non-finite one leaves
    /// the target bones whose step reads it (see `TargetStep`) at rest.
    #[inline]
    pub fn retarget(
        &self,
        source_local: impl Fn(usize) -> Option<(Vec3, Quat)>,
        out_target_local: &mut [Quat],
    ) -> Option<Vec3> {
        let rotation = |bone: u32| {
            let bone = bone as usize;
            source_local(bone).map_or(self.source_rest[bone], |(_, r)| r)
        };
        for step in &self.target_steps {
            let target = step.target as usize;
            if let Some(out) = out_target_local.get_mut(target) {
                *out = self.step_rotation(step, rotation);
            }
        }
        self.hips_position(source_local)
    }

    /// One step's target local rotation, the source's local rotations read by `rotation`.
    #[inline(always)]
    fn step_rotation(&self, step: &TargetStep, rotation: impl Fn(u32) -> Quat) -> Quat {
        let start = step.chain as usize;
        let (up, down) = self.chains[start..start + step.up as usize + step.down as usize]
            .split_at(step.up as usize);
        let mut q = step.pre;
        if !up.is_empty() {
            q *= up
                .iter()
                .fold(Quat::IDENTITY, |w, &b| w * rotation(b))
                .conjugate();
        }
        for &b in down {
            q *= rotation(b);
        }
        unit_or(q * step.tail, self.target_rest[step.target as usize])
    }

    /// The target hips' world position for the source's local poses read by `source_local`
    /// (`None` for a bone at rest), when [`Retargeter::with_hips`] named the hips.
    #[inline]
    fn hips_position(&self, source_local: impl Fn(usize) -> Option<(Vec3, Quat)>) -> Option<Vec3> {
        let h = self.hips?;
        // The hips' world position: their chain from the source's root, unit rotations.
        let (mut position, mut turn) = (Vec3::ZERO, Quat::IDENTITY);
        for &b in &self.hips_chain {
            let bone = b as usize;
            let (t, r) = source_local(bone)
                .unwrap_or((self.source_rest_translation[bone], self.source_rest[bone]));
            position += turn * finite(t);
            turn = (turn * unit(r)).normalize();
        }
        Some(retarget_root_translation(
            position,
            self.source_rest_position[h.source],
            self.target_rest_position[h.target],
            h.scale,
            self.basis,
        ))
    }

    /// `clip` retargeted onto the target skeleton once, key by key, as a clip of the target's
    /// bones: what [`Retargeter::retarget`] gives at every time, stored so that playing it is
    /// sampling a clip (no retargeting per frame). `source_bone[i]` is the source bone track
    /// `i` of `clip` drives; `hips_local` turns the hips' world position (target axes) into
    /// their local translation.
    ///
    /// Every paired target bone gets a rotation track, keyed at the key times of the source
    /// bones its step reads (a bone whose source bones have no keys gets one key: the source's
    /// rest retargeted). Where a step reads one source bone, `pre · q · T` slerps as `q` does
    /// (multiplying by fixed unit quaternions keeps arcs), so the keys are exact between keys
    /// too. Where it reads a product of several, keys are added at midpoints until the slerp of
    /// the stored keys is within `tolerance` radians of the product (at most 64 per source
    /// interval). The hips' translation is keyed in the same way, within `tolerance` times the
    /// hips' scale (target units per source unit).
    pub fn retarget_clip(
        &self,
        clip: &Clip,
        source_bone: &[Option<usize>],
        hips_local: impl Fn(Vec3) -> Vec3,
        tolerance: f32,
    ) -> RetargetedClip {
        let sources = self.source_rest.len();
        let mut track_of = vec![None; sources];
        for (track, bone) in source_bone.iter().enumerate().take(clip.tracks().len()) {
            if let Some(b) = *bone
                && b < sources
                && track_of[b].is_none()
            {
                track_of[b] = Some(track);
            }
        }
        let local = |bone: usize, t: f32| -> Option<(Vec3, Quat)> {
            let track = track_of.get(bone).copied().flatten()?;
            let s = clip.sample_track(track, t);
            if s.rotation.is_none() && s.translation.is_none() {
                return None;
            }
            Some((
                s.translation.unwrap_or(self.source_rest_translation[bone]),
                s.rotation.unwrap_or(self.source_rest[bone]),
            ))
        };
        let rotation_at = |t: f32| {
            move |b: u32| local(b as usize, t).map_or(self.source_rest[b as usize], |p| p.1)
        };
        // Key times of a set of source bones' channels (rotation, and translation if asked).
        let times_of = |bones: &mut dyn Iterator<Item = u32>, translations: bool| {
            let mut times: Vec<f32> = Vec::new();
            for b in bones {
                let Some(track) = track_of.get(b as usize).copied().flatten() else {
                    continue;
                };
                let t = &clip.tracks()[track];
                let channels = [t.rotation, if translations { t.translation } else { None }];
                for c in channels.into_iter().flatten() {
                    times.extend_from_slice(clip.times(c));
                }
            }
            times.sort_by(f32::total_cmp);
            times.dedup();
            times
        };
        let mut builder = ClipBuilder::new(clip.name.clone());
        builder.extend_duration(clip.duration());
        let mut targets = Vec::new();
        let mut keyed = vec![(false, false); self.target_rest.len()];
        let hips_target = self.hips.map(|h| h.target);
        let mut hips_translation: Option<Channel> = None;
        // The hips first, so that their translation joins their rotation's track.
        if let Some(h) = self.hips {
            let times = times_of(&mut self.hips_chain.iter().copied(), true);
            let exact =
                |t: f32| hips_local(self.hips_position(|b| local(b, t)).unwrap_or_default());
            let (times, values) = refine(
                &times,
                exact,
                |a, b, u| a.lerp(b, u),
                |a, b| a.distance(b) <= tolerance * h.scale.abs().max(f32::MIN_POSITIVE),
                self.hips_chain.len() > 1,
            );
            keyed[h.target].1 = !times.is_empty();
            let (times, values) = if times.is_empty() {
                (vec![0.0], vec![exact(0.0)])
            } else {
                (times, values)
            };
            if let Ok(at) = builder.times(&times) {
                hips_translation = builder.translations(at, &values).ok();
            }
        }
        for step in &self.target_steps {
            let target = step.target as usize;
            let start = step.chain as usize;
            let chain = &self.chains[start..start + step.up as usize + step.down as usize];
            let times = times_of(&mut chain.iter().copied(), false);
            let exact = |t: f32| self.step_rotation(step, rotation_at(t));
            let (times, mut values) = refine(
                &times,
                exact,
                |a: Quat, b: Quat, u| a.slerp(b, u),
                // The sine of half the angle between them (precise where an arc cosine of
                // their dot product cannot tell angles under ~7e-4 rad).
                |a: Quat, b: Quat| (a.conjugate() * b).xyz().length() <= (0.5 * tolerance).sin(),
                chain.len() > 1,
            );
            keyed[target].0 = !times.is_empty();
            let times = if times.is_empty() {
                values = vec![self.step_rotation(step, |b| self.source_rest[b as usize])];
                vec![0.0]
            } else {
                times
            };
            // Keys on one hemisphere after the other: the shorter way, as the product turned.
            for k in 1..values.len() {
                values[k] = crate::animation::aligned_to(values[k], values[k - 1]);
            }
            let rotation = builder
                .times(&times)
                .and_then(|at| builder.rotations(at, &values))
                .ok();
            let translation = if hips_target == Some(target) {
                hips_translation.take()
            } else {
                None
            };
            builder.track(BoneTrack {
                bone: BoneRef {
                    name: String::new(),
                    id: Some(target as i32),
                },
                rotation,
                translation,
                scale: None,
            });
            targets.push(Some(target));
        }
        // Hips that are no pair's target bone: their translation on a track of its own.
        if let (Some(h), Some(translation)) = (self.hips, hips_translation) {
            builder.track(BoneTrack {
                bone: BoneRef {
                    name: String::new(),
                    id: Some(h.target as i32),
                },
                rotation: None,
                translation: Some(translation),
                scale: None,
            });
            targets.push(Some(h.target));
        }
        RetargetedClip {
            clip: builder.build(),
            targets,
            keyed,
        }
    }

    /// A target bone's rest rotation: what [`Retargeter::retarget`] leaves on the bones it
    /// does not drive.
    pub fn target_rest_rotation(&self, target_bone: usize) -> Option<Quat> {
        self.target_rest.get(target_bone).copied()
    }
}

/// `bone`'s chain from below `from` (from the root with `None`) down to `bone`, root first;
/// empty when `from` is not above `bone` (or is `bone`).
fn chain(parents: &[Option<usize>], from: Option<usize>, bone: usize) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = Some(bone);
    while at != from {
        let Some(b) = at else {
            // `from` is not above `bone`.
            return Vec::new();
        };
        out.push(b as u32);
        at = parents[b];
    }
    out.reverse();
    out
}

/// One [`TargetStep`] per pair, parents before children (`order`), and the source chains
/// they read.
#[allow(clippy::too_many_arguments)]
fn target_steps(
    order: &[usize],
    parents: &[Option<usize>],
    rest: &[Quat],
    target_pair: &[Option<usize>],
    pairs: &[Pair],
    source_parents: &[Option<usize>],
    basis: Quat,
) -> (Vec<TargetStep>, Vec<u32>) {
    let mut steps = Vec::with_capacity(pairs.len());
    let mut chains = Vec::new();
    for &bone in order {
        let Some(k) = target_pair[bone] else { continue };
        let pair = &pairs[k];
        // B: the rests of the unpaired bones between the nearest paired ancestor and the bone.
        let mut between = Quat::IDENTITY;
        let mut up = parents[bone];
        let mut above = None;
        while let Some(a) = up {
            if let Some(ka) = target_pair[a] {
                above = Some(&pairs[ka]);
                break;
            }
            between = rest[a] * between;
            up = parents[a];
        }
        let between_inverse = unit(between).inverse();
        let (pre, up, down) = match above {
            None => (
                between_inverse * basis,
                Vec::new(),
                chain(source_parents, None, pair.source),
            ),
            Some(a) => {
                let pre = between_inverse * a.tail.inverse();
                let is_above = a.source == pair.source
                    || !chain(source_parents, Some(a.source), pair.source).is_empty();
                if is_above {
                    (
                        pre,
                        Vec::new(),
                        chain(source_parents, Some(a.source), pair.source),
                    )
                } else {
                    (
                        pre,
                        chain(source_parents, None, a.source),
                        chain(source_parents, None, pair.source),
                    )
                }
            }
        };
        steps.push(TargetStep {
            target: bone as u32,
            chain: chains.len() as u32,
            up: up.len() as u16,
            down: down.len() as u16,
            pre: pre.normalize(),
            tail: pair.tail,
        });
        chains.extend(up);
        chains.extend(down);
    }
    (steps, chains)
}

/// A clip retargeted onto a target skeleton ([`Retargeter::retarget_clip`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RetargetedClip {
    /// The clip, one track per paired target bone (its id the bone's index, its name empty).
    pub clip: Clip,
    /// The target bone each track drives.
    pub targets: Vec<Option<usize>>,
    /// Per target bone, whether the source clip keys what moves its rotation and its
    /// translation (a paired bone whose source bones have no keys holds the source's rest
    /// retargeted: it is not keyed, so a layer playing the clip leaves it to the layers under
    /// it).
    pub keyed: Vec<(bool, bool)>,
}

/// The values of `exact` at `times`, with keys added at midpoints where `interpolate`-ing
/// the stored neighbours misses `exact` there (as `close` judges; only when `refine` is
/// set), at most 6 halvings deep per interval.
fn refine<T: Copy>(
    times: &[f32],
    exact: impl Fn(f32) -> T,
    interpolate: impl Fn(T, T, f32) -> T,
    close: impl Fn(T, T) -> bool,
    refine: bool,
) -> (Vec<f32>, Vec<T>) {
    fn split<T: Copy>(
        (t0, v0): (f32, T),
        (t1, v1): (f32, T),
        depth: u32,
        exact: &impl Fn(f32) -> T,
        interpolate: &impl Fn(T, T, f32) -> T,
        close: &impl Fn(T, T) -> bool,
        out: &mut (Vec<f32>, Vec<T>),
    ) {
        let tm = 0.5 * (t0 + t1);
        if depth == 0 || tm <= t0 || tm >= t1 {
            return;
        }
        let vm = exact(tm);
        if close(interpolate(v0, v1, 0.5), vm) {
            // Also at the quarters: a product can cross its chord at the middle.
            let (q1, q3) = (0.5 * (t0 + tm), 0.5 * (tm + t1));
            if close(interpolate(v0, v1, 0.25), exact(q1))
                && close(interpolate(v0, v1, 0.75), exact(q3))
            {
                return;
            }
        }
        split(
            (t0, v0),
            (tm, vm),
            depth - 1,
            exact,
            interpolate,
            close,
            out,
        );
        out.0.push(tm);
        out.1.push(vm);
        split(
            (tm, vm),
            (t1, v1),
            depth - 1,
            exact,
            interpolate,
            close,
            out,
        );
    }
    let mut out = (
        Vec::with_capacity(times.len()),
        Vec::with_capacity(times.len()),
    );
    let mut previous: Option<(f32, T)> = None;
    for &t in times {
        let v = exact(t);
        if let Some(p) = previous
            && refine
        {
            split(p, (t, v), 6, &exact, &interpolate, &close, &mut out);
        }
        out.0.push(t);
        out.1.push(v);
        previous = Some((t, v));
    }
    out
}

/// `q` normalised, or `fallback` for a zero or non-finite one. A product of unit rotations is
/// within a few ulps of unit length: one Newton step for `1/√(q·q)` around 1 makes it unit to
/// float precision without a square root or a division.
#[inline]
fn unit_or(q: Quat, fallback: Quat) -> Quat {
    let len_sq = q.length_squared();
    if (len_sq - 1.0).abs() < 1e-3 {
        q * (1.5 - 0.5 * len_sq)
    } else if len_sq.is_finite() && len_sq > 1e-24 {
        q * len_sq.sqrt().recip()
    } else {
        fallback
    }
}

/// `v`, or zero when any part is not finite.
fn finite(v: Vec3) -> Vec3 {
    if v.is_finite() { v } else { Vec3::ZERO }
}

/// The bones of `order` that are `marked` or an ancestor of a marked bone, in `order`'s order.
fn chain_order(
    order: &[usize],
    parents: &[Option<usize>],
    marked: impl Iterator<Item = usize>,
) -> Vec<usize> {
    let mut keep = vec![false; parents.len()];
    for mut bone in marked {
        while bone < keep.len() && !keep[bone] {
            keep[bone] = true;
            match parents[bone] {
                Some(p) => bone = p,
                None => break,
            }
        }
    }
    order.iter().copied().filter(|&b| keep[b]).collect()
}

/// The skeleton a clip was made for, as a retargeting source: its bones' names and rest pose,
/// which bone each of the clip's tracks drives, and the rotation from its axes to a glTF
/// character's (Y up, facing +Z). [`crate::skeleton::Skeleton::retarget_source`] gives a GTA
/// clip's; [`RetargetSource::first_frame`] a clip whose bones have no hierarchy (DAN's).
#[derive(Debug, Clone, PartialEq)]
pub struct RetargetSource {
    /// The source bones' names.
    pub names: Vec<String>,
    /// The source rest pose.
    pub rest: RestPose,
    /// Per track of the clip, the source bone it drives.
    pub tracks: Vec<Option<usize>>,
    /// Source axes to glTF axes.
    pub to_gltf: Quat,
}

impl RetargetSource {
    /// A source whose bones are the clip's tracks, each a root of its own (a DAN clip's keys
    /// are whole model-space transforms), resting where the clip has them at time 0. `names`
    /// names the tracks' bones (the clip's own names where it is shorter).
    pub fn first_frame(clip: &crate::animation::Clip, names: &[String], to_gltf: Quat) -> Self {
        let tracks = clip.tracks();
        let local = (0..tracks.len())
            .map(|i| {
                let s = clip.sample_track(i, 0.0);
                (
                    s.translation.unwrap_or(Vec3::ZERO),
                    s.rotation.unwrap_or(Quat::IDENTITY),
                )
            })
            .collect();
        Self {
            names: tracks
                .iter()
                .enumerate()
                .map(|(i, t)| names.get(i).cloned().unwrap_or_else(|| t.bone.name.clone()))
                .collect(),
            rest: RestPose {
                parents: vec![None; tracks.len()],
                local,
            },
            tracks: (0..tracks.len()).map(Some).collect(),
            to_gltf,
        }
    }

    /// The naming convention of the source's names, and its map.
    pub fn bone_map(&self) -> (BonePreset, BoneMap) {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        BoneMap::detect(&names)
    }

    /// Per track, the source bone's rest (translation, rotation): what the channels a clip lacks
    /// keep.
    pub fn track_rest(&self, track: usize) -> (Vec3, Quat) {
        self.tracks
            .get(track)
            .copied()
            .flatten()
            .and_then(|b| self.rest.local.get(b).copied())
            .unwrap_or((Vec3::ZERO, Quat::IDENTITY))
    }
}

/// The (source bone, target bone) pairs a [`Retargeter`] takes for two skeletons known by
/// their names: each side's naming convention found ([`BoneMap::detect`]), the humanoid bones
/// both have paired in [`HumanoidBone::ALL`] order ([`BoneMap::pairs`]), then the user's
/// `(source name, target name)` corrections applied ([`user_pairs`]), with what went wrong with
/// them.
pub fn bone_pairs(
    source_names: &[&str],
    target_names: &[&str],
    user: &[(String, String)],
) -> (Vec<(usize, usize)>, Vec<UserMapProblem>) {
    let (_, source) = BoneMap::detect(source_names);
    let (_, target) = BoneMap::detect(target_names);
    user_pairs(source.pairs(&target), source_names, target_names, user)
}

/// What went wrong with one entry of a user's bone map ([`user_pairs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserMapProblem {
    /// No source bone has this name.
    UnknownSource(String),
    /// No target bone has this name.
    UnknownTarget(String),
}

impl std::fmt::Display for UserMapProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserMapProblem::UnknownSource(n) => write!(f, "no source bone is named {n:?}"),
            UserMapProblem::UnknownTarget(n) => write!(f, "no character bone is named {n:?}"),
        }
    }
}

/// The pairs of a detected map corrected by a user's entries `(source name, target name)`: each
/// entry replaces whatever pair had that source bone or that target bone; an empty target name
/// unmaps the source bone. A source name matches by its key (case, spaces, separators and
/// prefixes up to `:` / `|` ignored) or, failing that, as the same humanoid bone in GTA's
/// spelling (`L Thigh` finds ` L Thigh` and `Bip01 L Thigh`); a target name matches exactly, then by
/// its key. Entries naming no bone are reported and skipped.
pub fn user_pairs(
    mut pairs: Vec<(usize, usize)>,
    source_names: &[&str],
    target_names: &[&str],
    user: &[(String, String)],
) -> (Vec<(usize, usize)>, Vec<UserMapProblem>) {
    let mut problems = Vec::new();
    for (source, target) in user {
        let key = name_key(source);
        let humanoid = BonePreset::Gta.humanoid_bone(source);
        let s = source_names
            .iter()
            .position(|n| name_key(n) == key)
            .or_else(|| {
                let h = humanoid?;
                source_names
                    .iter()
                    .position(|n| BonePreset::Gta.humanoid_bone(n) == Some(h))
            });
        let Some(s) = s else {
            problems.push(UserMapProblem::UnknownSource(source.clone()));
            continue;
        };
        if target.is_empty() {
            pairs.retain(|p| p.0 != s);
            continue;
        }
        let target_key = name_key(target);
        let t = target_names
            .iter()
            .position(|n| n == target)
            .or_else(|| target_names.iter().position(|n| name_key(n) == target_key));
        let Some(t) = t else {
            problems.push(UserMapProblem::UnknownTarget(target.clone()));
            continue;
        };
        pairs.retain(|p| p.0 != s && p.1 != t);
        pairs.push((s, t));
    }
    (pairs, problems)
}

/// The factor a source root translation is scaled by on the target: the ratio of the hip
/// heights, `target / source`; 1 when the source height is zero or either is not finite.
pub fn hips_translation_scale(source_hip_height: f32, target_hip_height: f32) -> f32 {
    if source_hip_height.is_finite()
        && target_hip_height.is_finite()
        && source_hip_height.abs() > 1e-6
    {
        target_hip_height / source_hip_height
    } else {
        1.0
    }
}

/// The target's root (hips) position for a source root position: the source's displacement from
/// its rest position, scaled and turned into target axes, added to the target's rest position:
/// `target_rest + basis · (scale · (source − source_rest))`. Positions are in each skeleton's
/// model space (source axes for the source, target axes for the target).
pub fn retarget_root_translation(
    source: Vec3,
    source_rest: Vec3,
    target_rest: Vec3,
    scale: f32,
    basis: Quat,
) -> Vec3 {
    target_rest + unit(basis) * ((source - source_rest) * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_drop_prefixes_case_and_separators() {
        assert_eq!(name_key("Armature|mixamorig:Spine2"), "spine2");
        assert_eq!(name_key(" L UpperArm"), "lupperarm");
        assert_eq!(name_key("spine_01"), "spine01");
        assert_eq!(name_key(""), "");
        assert_eq!(strip_mixamo_prefix("mixamorig12lefthand"), "lefthand");
    }

    #[test]
    fn right_bones_are_four_after_left_ones() {
        use HumanoidBone::*;
        for (l, r) in [
            (LeftShoulder, RightShoulder),
            (LeftHand, RightHand),
            (LeftUpperLeg, RightUpperLeg),
            (LeftToes, RightToes),
        ] {
            assert_eq!(HumanoidBone::sided(l, true), r);
        }
        for (i, b) in HumanoidBone::ALL.iter().enumerate() {
            assert_eq!(b.index(), i);
        }
    }

    #[test]
    fn order_puts_parents_first_and_refuses_cycles() {
        let pose = |parents: Vec<Option<usize>>| RestPose {
            local: vec![(Vec3::ZERO, Quat::IDENTITY); parents.len()],
            parents,
        };
        assert_eq!(
            pose(vec![Some(2), None, Some(1)]).order(),
            Ok(vec![1, 2, 0])
        );
        assert_eq!(
            pose(vec![Some(1), Some(0)]).order(),
            Err(RestPoseError::Cycle { bone: 0 })
        );
        assert_eq!(
            pose(vec![Some(0)]).order(),
            Err(RestPoseError::Cycle { bone: 0 })
        );
        assert_eq!(
            pose(vec![None, Some(5)]).order(),
            Err(RestPoseError::ParentOutOfRange { bone: 1, parent: 5 })
        );
    }
}
