//! Built-in GTA ped skeletons and the rules that bind clip tracks to bones.
//!
//! Bones, ids and parents are those of `docs/formats/ifp.md` §4; rest offsets and rotations of the SA
//! skeleton are the bind pose of one SA ped (§4.1 table), in GTA's Z-up axes and the bone's
//! parent space. Values differ per model; a game model's own bind pose should replace them when
//! one is at hand.
//!
//! Binding a track to a bone (§2.9, §7.6): by bone id when the track has one and the skeleton
//! uses ids; otherwise by name, compared after [`bone_key`] normalisation (case and spaces
//! ignored), then through the alias table that maps the SA, VC and GTA III spellings of a bone
//! to one canonical SA bone id (`Root`≡`Normal`≡`Player`, `L Fingers`≡`L Finger`,
//! `R Forearm`≡`R ForeArm`, `L Toe`≡`L Toe0`, III `Swaist`≡`Pelvis`, …).
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use crate::animation::reduce::ReduceRig;
use crate::animation::{BonePose, BoneRef, Clip};
use glam::{Quat, Vec3};

mod rest;

pub use rest::{BoneRestDifference, RestDifference};

/// A bone of a skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct SkeletonBone {
    /// Name as the game's model spells it (leading spaces included).
    pub name: String,
    /// The bone id (tag) clips use, when the game binds by id.
    pub id: Option<i32>,
    /// The SA bone id this bone corresponds to, which the alias table maps names onto.
    pub canonical: Option<i32>,
    /// Index of the parent bone; `None` for the root.
    pub parent: Option<usize>,
    /// Local rest transform in the parent's space (GTA axes, metres).
    pub rest: BonePose,
}

/// A bone hierarchy: parents always come before their children.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    /// A name for display ("GTA SA ped").
    pub name: String,
    /// The bones, parents before children.
    pub bones: Vec<SkeletonBone>,
}

/// What a bone is, for binding ([`Skeleton::identity`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BoneIdentity {
    /// A canonical SA bone id (`docs/formats/ifp.md`'s alias table).
    Canonical(i32),
    /// A normalised name ([`bone_key`]), for a bone the alias table does not know.
    Name(String),
}

/// Which bone each track of a clip drives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Binding {
    /// One entry per track of the clip: the bone index, or `None` when nothing matched.
    pub targets: Vec<Option<usize>>,
    /// Tracks that matched no bone.
    pub unmatched: Vec<BoneRef>,
    /// Tracks that matched a bone already driven by an earlier track (the later one is dropped).
    pub duplicates: Vec<BoneRef>,
}

/// The canonical SA bone id of a normalised bone name (see [`bone_key`]), from the spellings of
/// SA, VC and GTA III (§4.1–4.3, §7.6).
pub fn canonical_bone_id(key: &str) -> Option<i32> {
    Some(match key {
        "root" | "normal" | "player" => 0,
        "pelvis" | "swaist" => 1,
        "spine" | "smid" => 2,
        "spine1" | "storso" => 3,
        "neck" => 4,
        "head" | "shead" => 5,
        "lbrow" => 6,
        "rbrow" => 7,
        "jaw" => 8,
        "bip01rclavicle" | "rclavicle" => 21,
        "rupperarm" | "supperarmr" => 22,
        "rforearm" | "slowerarmr" => 23,
        "rhand" | "srhand" => 24,
        "rfinger" | "rfingers" => 25,
        "rfinger01" => 26,
        "bip01lclavicle" | "lclavicle" => 31,
        "lupperarm" | "supperarml" => 32,
        "lforearm" | "slowerarml" => 33,
        "lhand" | "slhand" => 34,
        "lfinger" | "lfingers" => 35,
        "lfinger01" => 36,
        "lthigh" | "supperlegl" => 41,
        "lcalf" | "slowerlegl" => 42,
        "lfoot" | "sfootl" => 43,
        "ltoe" | "ltoe0" => 44,
        "rthigh" | "supperlegr" => 51,
        "rcalf" | "slowerlegr" => 52,
        "rfoot" | "sfootr" => 53,
        "rtoe" | "rtoe0" => 54,
        "belly" => 201,
        "rbreast" => 301,
        "lbreast" => 302,
        _ => return None,
    })
}

/// (id, DFF name, parent id, local position, local rotation x y z w) of the SA ped (§4.1).
type BoneRow = (i32, &'static str, Option<i32>, [f32; 3], [f32; 4]);

/// SA bones in HAnim order. The root's rest rotation is the ≈90° turn about Z that SA clips give
/// it (the DFF's `Normal` bind, (−0.5, −0.5, −0.5, 0.5), is not what clips are relative to: §4.1).
// Table values as the format doc gives them (4 decimals), not the constants they approximate.
#[allow(clippy::approx_constant)]
const SA_BONES: [BoneRow; 32] = [
    (
        0,
        "Normal",
        None,
        [0.0, 0.0, 0.0],
        [0.0076, 0.0, 0.7078, 0.7063],
    ),
    (
        1,
        " Pelvis",
        Some(0),
        [0.0, 0.0, 0.0],
        [-0.5, -0.5, -0.5, 0.5],
    ),
    (
        2,
        " Spine",
        Some(1),
        [-0.0010, -0.0002, -0.0010],
        [0.0, 0.0, 0.0004, 1.0],
    ),
    (
        3,
        " Spine1",
        Some(2),
        [0.1904, -0.0002, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ),
    (
        4,
        " Neck",
        Some(3),
        [0.2893, -0.0001, 0.0],
        [0.0, 0.0, 0.1036, 0.9946],
    ),
    (
        5,
        " Head",
        Some(4),
        [0.1401, 0.0, 0.0],
        [0.0, 0.0, -0.1040, 0.9946],
    ),
    (
        8,
        "Jaw",
        Some(5),
        [0.0112, 0.0155, -0.0042],
        [0.0, 0.0, 0.8260, 0.5637],
    ),
    (
        6,
        "L Brow",
        Some(5),
        [0.0836, -0.0171, 0.0201],
        [0.0480, -0.0629, 0.5800, 0.8108],
    ),
    (
        7,
        "R Brow",
        Some(5),
        [0.0831, -0.0175, -0.0239],
        [-0.0230, 0.0607, 0.5820, 0.8106],
    ),
    (
        31,
        "Bip01 L Clavicle",
        Some(4),
        [0.0, 0.0001, 0.0],
        [0.6479, -0.0677, 0.7546, 0.0789],
    ),
    (
        32,
        " L UpperArm",
        Some(31),
        [0.1942, 0.0, 0.0],
        [0.0284, 0.4286, -0.0357, 0.9024],
    ),
    (
        33,
        " L ForeArm",
        Some(32),
        [0.2751, 0.0, 0.0],
        [0.0, 0.0, -0.0071, 1.0],
    ),
    (
        34,
        " L Hand",
        Some(33),
        [0.2789, 0.0, 0.0],
        [-0.7068, 0.0, 0.0, 0.7074],
    ),
    (
        35,
        " L Finger",
        Some(34),
        [0.0820, 0.0, 0.0],
        [-0.0004, 0.0001, 0.1695, 0.9855],
    ),
    (
        36,
        "L Finger01",
        Some(35),
        [0.0414, 0.0, 0.0],
        [0.0, 0.0, 0.1781, 0.9840],
    ),
    (
        21,
        "Bip01 R Clavicle",
        Some(4),
        [0.0, 0.0001, 0.0],
        [-0.6479, 0.0677, 0.7546, 0.0789],
    ),
    (
        22,
        " R UpperArm",
        Some(21),
        [0.1942, 0.0, 0.0],
        [-0.0284, -0.4286, -0.0357, 0.9024],
    ),
    (
        23,
        " R ForeArm",
        Some(22),
        [0.2751, 0.0, 0.0],
        [0.0, 0.0, -0.0071, 1.0],
    ),
    (
        24,
        " R Hand",
        Some(23),
        [0.2789, 0.0, 0.0],
        [0.7068, 0.0, 0.0, 0.7074],
    ),
    (
        25,
        " R Finger",
        Some(24),
        [0.0820, 0.0, 0.0],
        [0.0004, -0.0001, 0.1695, 0.9855],
    ),
    (
        26,
        "R Finger01",
        Some(25),
        [0.0414, 0.0, 0.0],
        [0.0, 0.0, 0.1781, 0.9840],
    ),
    (
        302,
        "L breast",
        Some(3),
        [0.1291, -0.0684, 0.1032],
        [0.1107, 0.0732, 0.6454, 0.7522],
    ),
    (
        301,
        "R breast",
        Some(3),
        [0.1456, -0.0686, -0.1076],
        [-0.0511, -0.0223, 0.6704, 0.7399],
    ),
    (
        201,
        "Belly",
        Some(2),
        [0.1740, -0.0700, -0.0004],
        [0.0, 0.0, 0.6954, 0.7186],
    ),
    (
        41,
        " L Thigh",
        Some(1),
        [0.0, 0.0, 0.1125],
        [-0.0394, -0.9988, 0.0012, 0.0307],
    ),
    (
        42,
        " L Calf",
        Some(41),
        [0.4554, 0.0, 0.0],
        [0.0, 0.0, -0.0789, 0.9969],
    ),
    (
        43,
        " L Foot",
        Some(42),
        [0.4835, 0.0, 0.0],
        [0.0012, -0.0307, 0.0395, 0.9987],
    ),
    (
        44,
        " L Toe0",
        Some(43),
        [0.1020, 0.1541, 0.0],
        [0.0, 0.0, 0.7071, 0.7071],
    ),
    (
        51,
        " R Thigh",
        Some(1),
        [0.0, 0.0, -0.1125],
        [0.0394, 0.9988, 0.0012, 0.0307],
    ),
    (
        52,
        " R Calf",
        Some(51),
        [0.4554, 0.0, 0.0],
        [0.0, 0.0, -0.0789, 0.9969],
    ),
    (
        53,
        " R Foot",
        Some(52),
        [0.4835, 0.0, 0.0],
        [-0.0012, 0.0307, 0.0395, 0.9987],
    ),
    (
        54,
        " R Toe0",
        Some(53),
        [0.1020, 0.1541, 0.0],
        [0.0, 0.0, 0.7071, 0.7071],
    ),
];

/// VC bone ids (§4.2): as SA's for the bones VC has, toes 2000 / 2001.
/// Whether a bone tag is one only San Andreas' ped has: the toes (44, 54: VC tags them 2000 and
/// 2001), the jaw and brows (6–8), the finger joints (26, 36), the belly and breasts (201, 301,
/// 302), and SA's extra cutscene and face bones (28–30, 38–40, 303–307) (§4.1, §4.2). The
/// 5001–5022 range is used by both games.
pub fn is_sa_only_bone_id(id: i32) -> bool {
    matches!(
        id,
        6..=8 | 26 | 28..=30 | 36 | 38..=40 | 44 | 54 | 201 | 301 | 302 | 303..=307
    )
}

fn vc_id(sa_id: i32) -> Option<i32> {
    match sa_id {
        0..=5 | 21..=25 | 31..=35 | 41..=43 | 51..=53 => Some(sa_id),
        44 => Some(2000),
        54 => Some(2001),
        _ => None,
    }
}

/// VC's in-game names (`ConvertBoneTag2BoneName`, §4.2), and toes as in the DFFs.
fn vc_name(sa_id: i32) -> &'static str {
    match sa_id {
        0 => "Root",
        1 => "Pelvis",
        2 => "Spine",
        3 => "Spine1",
        4 => "Neck",
        5 => "Head",
        21 => "Bip01 R Clavicle",
        22 => "R UpperArm",
        23 => "R Forearm",
        24 => "R Hand",
        25 => "R Fingers",
        31 => "Bip01 L Clavicle",
        32 => "L UpperArm",
        33 => "L Forearm",
        34 => "L Hand",
        35 => "L Fingers",
        41 => "L Thigh",
        42 => "L Calf",
        43 => "L Foot",
        44 => "L Toe0",
        51 => "R Thigh",
        52 => "R Calf",
        53 => "R Foot",
        _ => "R Toe0",
    }
}

fn pose(p: [f32; 3], q: [f32; 4]) -> BonePose {
    BonePose {
        rotation: Quat::from_array(q).normalize(),
        translation: Vec3::from_array(p),
        scale: Vec3::ONE,
    }
}

/// A GTA game, for what differs between them: its ped skeleton ([`GtaGame::skeleton`]) and the
/// bone ids its clips use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum GtaGame {
    /// GTA III (2001): ANPK clips bound by frame name.
    Iii,
    /// GTA Vice City (2002): ANPK clips with bone tags.
    Vc,
    /// GTA San Andreas (2004): ANP3 clips.
    #[default]
    Sa,
}

impl GtaGame {
    /// The game an IFP package's clips are for: ANP3/ANP2 → SA; ANPK whose sequences are named
    /// for GTA III's frames (`Swaist`, `Smid`, …: a III package may mix 44-byte ANIM records,
    /// with an int where VC keeps a bone tag, among its 48-byte ones) → III; ANPK whose bone
    /// tags include an id only SA's ped has ([`is_sa_only_bone_id`]: cutscene packages of SA are
    /// ANPK) → SA; other ANPK with bone tags → VC; ANPK without → III (§1.2, §4.1–§4.3).
    pub fn for_ifp(package: &crate::formats::ifp::IfpFile) -> GtaGame {
        use crate::formats::ifp::{AnimLayout, IfpVersion};
        match package.version {
            IfpVersion::Anp3 | IfpVersion::Anp2 => GtaGame::Sa,
            IfpVersion::Anpk
                if names_iii_ped(
                    package
                        .clips()
                        .flat_map(|c| c.sequences.iter())
                        .map(|s| s.name.as_str()),
                ) =>
            {
                GtaGame::Iii
            }
            IfpVersion::Anpk => {
                let mut tags = package
                    .clips()
                    .flat_map(|c| c.sequences.iter())
                    .filter(|s| s.anim.layout == AnimLayout::BoneTag && s.bone_id != -1)
                    .map(|s| s.bone_id)
                    .peekable();
                if tags.peek().is_none() {
                    GtaGame::Iii
                } else if tags.any(is_sa_only_bone_id) {
                    GtaGame::Sa
                } else {
                    GtaGame::Vc
                }
            }
        }
    }

    /// The game whose bones a RenderWare model is named and tagged for: RenderWare 3.5 and later
    /// is SA's; a model whose frames carry GTA III's bone names (`Swaist`, `Smid`, … in any
    /// case) is III's, skinned or not (the skinned mobile III ped has an HAnim hierarchy, with
    /// ids 0–15, and III's names: `docs/formats/ifp.md` §4.3); another older file with an HAnim
    /// hierarchy is a skinned VC ped; else GTA III, whose peds are separate parts bound by
    /// frame name (`docs/formats/dff.md` §4.2, §1.2).
    pub fn for_dff(dff: &crate::formats::dff::DffFile) -> GtaGame {
        let version = dff.clumps.first().map_or(0, |c| c.version);
        let iii_names = names_iii_ped(
            dff.clumps
                .iter()
                .flat_map(|c| &c.frames)
                .filter_map(|f| f.name.as_deref()),
        );
        if version >= 0x35000 {
            GtaGame::Sa
        } else if iii_names {
            GtaGame::Iii
        } else if dff.clumps.iter().any(|c| c.hierarchy_frame().is_some()) {
            GtaGame::Vc
        } else {
            GtaGame::Iii
        }
    }

    /// The game's built-in ped skeleton.
    pub fn skeleton(self) -> Skeleton {
        match self {
            GtaGame::Sa => Skeleton::gta_sa(),
            GtaGame::Vc => Skeleton::gta_vc(),
            GtaGame::Iii => Skeleton::gta_iii(),
        }
    }
}

/// Whether `name` is one of GTA III's ped frames that neither VC nor SA has (`Swaist`, `Smid`,
/// `Storso`, `Shead`, the `Supper…`/`Slower…` limbs, hands and feet; any case or spacing).
pub(crate) fn is_iii_bone_name(name: &str) -> bool {
    const III_ONLY: [&str; 16] = [
        "swaist",
        "smid",
        "storso",
        "shead",
        "supperarml",
        "slowerarml",
        "slhand",
        "supperarmr",
        "slowerarmr",
        "srhand",
        "supperlegl",
        "slowerlegl",
        "sfootl",
        "supperlegr",
        "slowerlegr",
        "sfootr",
    ];
    III_ONLY.contains(&bone_key(name).as_str())
}

/// Whether `names` (a model's frames, a package's sequences) are a GTA III ped's: at least three
/// of them are III's own bone names ([`is_iii_bone_name`]).
pub(crate) fn names_iii_ped<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    names
        .into_iter()
        .filter(|n| is_iii_bone_name(n))
        .nth(2)
        .is_some()
}

/// The form of a bone name used for matching: ASCII lower case with all whitespace removed, so
/// `" R Thigh"`, `"R Thigh"` and `"r thigh"` are one key (§2.9, as the games' modding tools
/// match names).
pub fn bone_key(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl Skeleton {
    /// `clip` as GTA III plays it on this skeleton: III adds a translation key to the bone's
    /// rest position (its DFF frame position) where VC and SA take the key as the position
    /// itself (§3.4), so each translation key of a bound track gets its bone's rest translation
    /// added. The root's rest position is the origin, so root motion is unchanged.
    pub fn additive_translations(&self, clip: &Clip) -> Clip {
        let targets = self.bind(clip).targets;
        clip.with_translation_offsets(|track| {
            let bone = targets.get(track).copied().flatten()?;
            Some(self.bones[bone].rest.translation).filter(|t| *t != Vec3::ZERO)
        })
    }

    /// How far (metres) a translation key of a bone other than the root may lie from the
    /// bone's rest offset and still be taken for a local offset ([`Skeleton::local_translations`]).
    pub const LOCAL_REACH: f32 = 0.5;

    /// `clip` with the translation keys that are not local offsets taken out, and the names of
    /// the bones whose translation was not applied.
    ///
    /// The rule: the root's translation is always applied (it carries the clip's movement);
    /// another bone's is applied only when every key lies within [`Skeleton::LOCAL_REACH`] of
    /// the bone's rest offset from its parent. Why: a ped's bones turn, they do not stretch, so
    /// a local offset stays near the rest one (the SA and VC packages' translated bones other
    /// than the root move by centimetres); SA cutscene packages also key both clavicles, but
    /// with positions in the scene's frame (metres away, a constant offset from where the
    /// clip's own rotations put the clavicle: `docs/formats/ifp.md` §3.4), which no game
    /// applies as local offsets. Tracks the skeleton does not bind are left as they are (they
    /// drive no bone). For GTA III, give the clip as played ([`Skeleton::additive_translations`]),
    /// whose keys are then positions like the other games'.
    pub fn local_translations(&self, clip: &Clip) -> (Clip, Vec<String>) {
        let targets = self.bind(clip).targets;
        let mut dropped = Vec::new();
        let mut names = Vec::new();
        for (i, track) in clip.tracks().iter().enumerate() {
            let (Some(channel), Some(Some(bone))) = (track.translation, targets.get(i)) else {
                continue;
            };
            let bone = &self.bones[*bone];
            if bone.parent.is_none() {
                continue;
            }
            let rest = bone.rest.translation;
            let strays = clip
                .vector_values(channel)
                .iter()
                // A non-finite key strays too.
                .any(|v| v.distance(rest) > Self::LOCAL_REACH || !v.is_finite());
            if strays {
                dropped.push(i);
                names.push(track.bone.name.trim().to_owned());
            }
        }
        if dropped.is_empty() {
            return (clip.clone(), names);
        }
        (clip.without_translations(&dropped), names)
    }

    /// This skeleton as the source of a clip made for it, for retargeting onto other characters:
    /// the bones' names and rest pose (the bind pose, GTA axes), the bone each of the clip's
    /// tracks drives ([`Skeleton::bind`]), and GTA's axes turned into glTF's
    /// ([`crate::coords::GTA_TO_GLTF`]).
    pub fn retarget_source(&self, clip: &Clip) -> crate::animation::retarget::RetargetSource {
        crate::animation::retarget::RetargetSource {
            names: self.bones.iter().map(|b| b.name.clone()).collect(),
            rest: self.into(),
            tracks: self.bind(clip).targets,
            to_gltf: crate::coords::GTA_TO_GLTF,
        }
    }
}

impl From<&Skeleton> for crate::animation::retarget::RestPose {
    /// The skeleton's rest pose for a [`crate::animation::retarget::Retargeter`] (GTA axes).
    fn from(skeleton: &Skeleton) -> Self {
        Self {
            parents: skeleton.bones.iter().map(|b| b.parent).collect(),
            local: skeleton
                .bones
                .iter()
                .map(|b| (b.rest.translation, b.rest.rotation))
                .collect(),
        }
    }
}

impl ReduceRig {
    /// The skeleton's bones with their rest poses, tracks bound by [`Skeleton::bind`]. Tracks
    /// the skeleton does not know, and duplicates of a bone already driven, become extra root
    /// bones after the skeleton's.
    pub fn from_skeleton(skeleton: &Skeleton, clip: &Clip) -> Self {
        let mut parents: Vec<Option<usize>> = skeleton.bones.iter().map(|b| b.parent).collect();
        let mut rest = skeleton.rest_pose();
        let track_bone = skeleton
            .bind(clip)
            .targets
            .into_iter()
            .map(|target| {
                Some(target.unwrap_or_else(|| {
                    parents.push(None);
                    rest.push(BonePose::default());
                    parents.len() - 1
                }))
            })
            .collect();
        Self {
            parents,
            rest,
            track_bone,
        }
    }
}

impl Skeleton {
    fn from_rows(name: &str, rows: impl Iterator<Item = (BoneRow, Option<i32>, String)>) -> Self {
        let mut bones: Vec<SkeletonBone> = Vec::new();
        for ((sa_id, _, parent, p, q), id, bone_name) in rows {
            let parent = parent.and_then(|pid| bones.iter().position(|b| b.canonical == Some(pid)));
            bones.push(SkeletonBone {
                name: bone_name,
                id,
                canonical: Some(sa_id),
                parent,
                rest: pose(p, q),
            });
        }
        Skeleton {
            name: name.to_owned(),
            bones,
        }
    }

    /// The San Andreas ped: 32 bones (§4.1).
    pub fn gta_sa() -> Self {
        Self::from_rows(
            "GTA SA ped",
            SA_BONES.iter().map(|r| (*r, Some(r.0), r.1.to_owned())),
        )
    }

    /// The Vice City skinned ped: the 24 bones VC has (§4.2), with SA's tree and offsets (no VC
    /// model was available to the format doc; the shape is expected to match).
    pub fn gta_vc() -> Self {
        Self::from_rows(
            "GTA VC ped",
            SA_BONES
                .iter()
                .filter(|r| vc_id(r.0).is_some())
                .map(|r| (*r, vc_id(r.0), vc_name(r.0).to_owned())),
        )
    }

    /// The GTA III ped (§4.3 of `docs/formats/ifp.md`): the 16 frames PC peds are made of,
    /// bound by name (PC peds are not skinned), with the offsets and rest rotations of a real PC
    /// `player.dff` (the format doc's measured table). The model's root frame sits at the
    /// identity, so the waist is the root here, at its position under it. A III model's own
    /// frames differ by up to a few centimetres (every model carries its own); this is the
    /// stand-in when no model is given.
    // The waist's 0.7071s are the file's four decimals, not 1/√2.
    #[allow(clippy::approx_constant)]
    pub fn gta_iii() -> Self {
        // (name, canonical SA id, parent name, local position, local rotation x, y, z, w).
        type Row = (&'static str, i32, Option<&'static str>, [f32; 3], [f32; 4]);
        const ROWS: [Row; 16] = [
            (
                "Swaist",
                1,
                None,
                [0.0004, 0.0231, -0.0103],
                [0.0037, -0.7071, -0.0037, 0.7071],
            ),
            (
                "Smid",
                2,
                Some("Swaist"),
                [0.0451, -0.0708, 0.0],
                [0.0, 0.0, -0.0031, 1.0],
            ),
            (
                "Storso",
                3,
                Some("Smid"),
                [0.2084, -0.0002, 0.0],
                [0.0, 0.0, -0.0009, 1.0],
            ),
            (
                "Shead",
                5,
                Some("Storso"),
                [0.4109, 0.1050, 0.0056],
                [0.0, 0.0, 0.0963, 0.9954],
            ),
            (
                "Supperarmr",
                22,
                Some("Storso"),
                [0.2382, 0.0095, -0.2459],
                [0.1608, 0.1324, -0.9716, 0.1126],
            ),
            (
                "Slowerarmr",
                23,
                Some("Supperarmr"),
                [0.2802, -0.0004, 0.0005],
                [0.0003, -0.0002, -0.2155, 0.9765],
            ),
            (
                "SRhand",
                24,
                Some("Slowerarmr"),
                [0.2803, 0.0001, -0.0001],
                [0.8652, -0.2114, -0.0349, 0.4533],
            ),
            (
                "Supperarml",
                32,
                Some("Storso"),
                [0.2382, 0.0094, 0.2545],
                [-0.1610, -0.1392, -0.9704, 0.1143],
            ),
            (
                "Slowerarml",
                33,
                Some("Supperarml"),
                [0.2807, 0.0004, 0.0010],
                [-0.0002, 0.0001, -0.2161, 0.9764],
            ),
            (
                "SLhand",
                34,
                Some("Slowerarml"),
                [0.2803, 0.0005, 0.0],
                [-0.8487, 0.2114, -0.0488, 0.4822],
            ),
            (
                "Supperlegl",
                41,
                Some("Swaist"),
                [-0.0357, -0.0156, 0.1116],
                [0.0202, -0.9977, -0.0545, 0.0354],
            ),
            (
                "Slowerlegl",
                42,
                Some("Supperlegl"),
                [0.4214, 0.0, 0.0],
                [0.0, 0.0, -0.0709, 0.9975],
            ),
            (
                "Sfootl",
                43,
                Some("Slowerlegl"),
                [0.3750, 0.0, 0.0],
                [0.0485, -0.0293, 0.0899, 0.9943],
            ),
            (
                "Supperlegr",
                51,
                Some("Swaist"),
                [-0.0357, -0.0156, -0.1116],
                [-0.0184, 0.9977, -0.0545, 0.0355],
            ),
            (
                "Slowerlegr",
                52,
                Some("Supperlegr"),
                [0.4214, 0.0, 0.0],
                [0.0, 0.0, -0.0692, 0.9976],
            ),
            (
                "Sfootr",
                53,
                Some("Slowerlegr"),
                [0.3750, 0.0, 0.0],
                [-0.0484, 0.0294, 0.0847, 0.9948],
            ),
        ];
        let mut bones: Vec<SkeletonBone> = Vec::new();
        for (name, canonical, parent, p, rotation) in ROWS {
            let parent = parent.and_then(|pn| bones.iter().position(|b| b.name == pn));
            bones.push(SkeletonBone {
                name: name.to_owned(),
                id: None,
                canonical: Some(canonical),
                parent,
                rest: pose(p, rotation),
            });
        }
        Skeleton {
            name: "GTA III ped".to_owned(),
            bones,
        }
    }

    /// The skeleton an IFP package's clips are for ([`GtaGame::for_ifp`]).
    pub fn for_ifp(package: &crate::formats::ifp::IfpFile) -> Skeleton {
        GtaGame::for_ifp(package).skeleton()
    }

    /// The bone a track drives: by id when both have one, else by normalised name, else by
    /// the alias table.
    pub fn find(&self, bone: &BoneRef) -> Option<usize> {
        if let Some(id) = bone.id
            && let Some(i) = self.bones.iter().position(|b| b.id == Some(id))
        {
            return Some(i);
        }
        let key = bone_key(&bone.name);
        if let Some(i) = self.bones.iter().position(|b| bone_key(&b.name) == key) {
            return Some(i);
        }
        let canonical = canonical_bone_id(&key)?;
        self.bones
            .iter()
            .position(|b| b.canonical == Some(canonical))
    }

    /// What `bone` is, for binding: the canonical SA bone id of the bone this skeleton finds
    /// for it (by id, name or alias), else of its name in the alias table, else its normalised
    /// name ([`bone_key`]). A track and a bone of the same identity are one bone, on any
    /// character: the Bevy plugin's animation target ids are made from it.
    pub fn identity(&self, bone: &BoneRef) -> BoneIdentity {
        let key = bone_key(&bone.name);
        let canonical = match self.find(bone) {
            Some(i) => self.bones[i].canonical,
            None => canonical_bone_id(&key),
        };
        match canonical {
            Some(c) => BoneIdentity::Canonical(c),
            None => BoneIdentity::Name(key),
        }
    }

    /// A flat skeleton of a clip's tracks (a DAN clip's bones: no hierarchy), each bone named
    /// by `names` (or its track's name) and resting at the clip's first frame; track `i`
    /// drives bone `i`.
    pub fn first_frame(name: &str, clip: &Clip, names: &[String]) -> Skeleton {
        let bones = clip
            .tracks()
            .iter()
            .enumerate()
            .map(|(i, track)| {
                let s = clip.sample_track(i, 0.0);
                SkeletonBone {
                    name: names
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| track.bone.name.clone()),
                    id: None,
                    canonical: None,
                    parent: None,
                    rest: BonePose {
                        translation: s.translation.unwrap_or(Vec3::ZERO),
                        rotation: s.rotation.unwrap_or(Quat::IDENTITY),
                        scale: s.scale.unwrap_or(Vec3::ONE),
                    },
                }
            })
            .collect();
        Skeleton {
            name: name.to_owned(),
            bones,
        }
    }

    /// An IFP clip as characters of `game` play it: GTA III's translation keys added to the
    /// bones' rest offsets (§3.4 of `docs/formats/ifp.md`), and translation keys that are not
    /// local offsets (SA cutscenes' scene-space keys) not applied; with the names of the bones
    /// whose translation was dropped.
    pub fn clip_as_played(&self, game: GtaGame, clip: &Clip) -> (Clip, Vec<String>) {
        let clip = match game {
            GtaGame::Iii => self.additive_translations(clip),
            _ => clip.clone(),
        };
        self.local_translations(&clip)
    }

    /// Index of the clip's track that drives the skeleton's root bone (a bone without parent):
    /// the track that carries root motion.
    pub fn root_track(&self, clip: &Clip) -> Option<usize> {
        clip.tracks().iter().position(|t| {
            self.find(&t.bone)
                .is_some_and(|i| self.bones[i].parent.is_none())
        })
    }

    /// Binds every track of `clip` to a bone of this skeleton.
    pub fn bind(&self, clip: &Clip) -> Binding {
        let mut binding = Binding::default();
        let mut taken = vec![false; self.bones.len()];
        for track in clip.tracks() {
            let target = match self.find(&track.bone) {
                Some(i) if taken[i] => {
                    binding.duplicates.push(track.bone.clone());
                    None
                }
                Some(i) => {
                    taken[i] = true;
                    Some(i)
                }
                None => {
                    binding.unmatched.push(track.bone.clone());
                    None
                }
            };
            binding.targets.push(target);
        }
        binding
    }

    /// The height (GTA Z, metres) of the lowest joint at rest, relative to the root's origin,
    /// or 0 when none is below it. Spawned skeletons are lifted by its negative, so that a
    /// ped's feet rest on its entity's origin.
    pub fn lowest_rest_height(&self) -> f32 {
        self.model_space(&self.rest_pose())
            .iter()
            .map(|(_, p)| p.z)
            .fold(0.0, f32::min)
    }

    /// Model-space transforms (rotation, position) of every bone for the given local poses.
    pub fn model_space(&self, local: &[BonePose]) -> Vec<(Quat, Vec3)> {
        let mut out: Vec<(Quat, Vec3)> = Vec::with_capacity(self.bones.len());
        for (bone, pose) in self.bones.iter().zip(local) {
            let world = match bone.parent.and_then(|p| out.get(p)) {
                Some(&(pr, pt)) => (pr * pose.rotation, pt + pr * pose.translation),
                None => (pose.rotation, pose.translation),
            };
            out.push(world);
        }
        out
    }

    /// The rest pose, one local transform per bone.
    pub fn rest_pose(&self) -> Vec<BonePose> {
        self.bones.iter().map(|b| b.rest).collect()
    }

    /// The flat form of this skeleton for the pose pipeline ([`crate::animation::pose`]): its bones
    /// in order, their parents and rest transforms. Fails only if a bone's parent does not come
    /// before it, or on more than 32767 bones.
    pub fn pose_skeleton(
        &self,
    ) -> Result<crate::animation::pose::PoseSkeleton, crate::animation::pose::PoseSkeletonError>
    {
        let parents: Vec<Option<usize>> = self.bones.iter().map(|b| b.parent).collect();
        crate::animation::pose::PoseSkeleton::new(&parents, &self.rest_pose())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(s: &Skeleton, name: &str) -> Vec3 {
        let world = s.model_space(&s.rest_pose());
        world[s.bones.iter().position(|b| b.name == name).unwrap()].1
    }

    #[test]
    fn built_in_sa_rest_rotations_are_unit_quaternions_to_their_precision() {
        // The table quotes a real SA ped to 4 decimals: each component is off by up to 5e-5,
        // so |‖q‖ − 1| stays well under 1e-3 for a unit quaternion.
        let (worst, name) = SA_BONES
            .iter()
            .map(|r| ((Quat::from_array(r.4).length() - 1.0).abs(), r.1))
            .fold((0.0f32, ""), |a, b| if b.0 > a.0 { b } else { a });
        eprintln!("largest |‖q‖ − 1| of the SA table: {worst:e} ({name:?})");
        assert!(worst < 1e-3, "{name:?}: {worst}");
    }

    #[test]
    fn rest_poses_stand_up_along_z() {
        for (s, head, pelvis, lfoot, rfoot) in [
            (Skeleton::gta_sa(), " Head", " Pelvis", " L Foot", " R Foot"),
            (Skeleton::gta_vc(), "Head", "Pelvis", "L Foot", "R Foot"),
            (Skeleton::gta_iii(), "Shead", "Swaist", "Sfootl", "Sfootr"),
        ] {
            let (h, p, l, r) = (
                position(&s, head),
                position(&s, pelvis),
                position(&s, lfoot),
                position(&s, rfoot),
            );
            eprintln!("{}: head {h} pelvis {p} feet {l} {r}", s.name);
            assert!(h.z - p.z > 0.4, "{}: head above pelvis", s.name);
            assert!(
                p.z - l.z > 0.7 && p.z - r.z > 0.7,
                "{}: feet below pelvis",
                s.name
            );
            // Peds face +Y with Z up, so their left is -X.
            assert!(
                l.x < -0.05 && r.x > 0.05,
                "{}: left foot on the left",
                s.name
            );
        }
    }
}
