//! Skeletons from a DFF's HAnim bones, and how far two skeletons' rest poses differ.

use super::{GtaGame, SA_BONES, Skeleton, SkeletonBone, bone_key, canonical_bone_id};
use crate::animation::BonePose;
use crate::formats::dff::Clump;
use glam::{Mat3, Quat, Vec3};

/// How the rest poses of two skeletons differ, bone by bone, matched by canonical SA bone id
/// (by [`bone_key`] name for bones without one). See [`Skeleton::rest_difference`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RestDifference {
    /// Every matched bone, in the order of the first skeleton.
    pub bones: Vec<BoneRestDifference>,
    /// The largest translation difference of any matched bone, metres, and that bone's name (in
    /// the first skeleton).
    pub max_translation: Option<(f32, String)>,
    /// The largest rotation difference of any matched bone except the roots, radians, and that
    /// bone's name.
    pub max_rotation: Option<(f32, String)>,
    /// The rotation difference of the roots (radians), when both roots matched. Reported apart:
    /// a DFF's root (`Normal`) carries its bind rotation where the built-in skeletons carry the
    /// ≈90° about Z that clips give the root.
    pub root_rotation: Option<f32>,
    /// Bones of the first skeleton that the second lacks.
    pub missing_in_other: Vec<String>,
    /// Bones of the second skeleton that the first lacks.
    pub missing_in_self: Vec<String>,
}

/// The rest difference of one matched bone.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneRestDifference {
    /// The bone's name in the first skeleton.
    pub name: String,
    /// Its canonical SA bone id, when it has one.
    pub canonical: Option<i32>,
    /// Whether it is the root of the first skeleton.
    pub root: bool,
    /// Distance between the two local rest translations, metres.
    pub translation: f32,
    /// Angle of the rotation between the two local rest rotations, radians (0…π).
    pub rotation: f32,
}

/// The angle of the rotation that takes `a` to `b`, radians in 0…π, accurate near 0.
fn angle_between(a: Quat, b: Quat) -> f32 {
    let d = a.inverse() * b;
    2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
}

/// A rotation matrix as a unit quaternion, its columns orthonormalised first (Gram–Schmidt):
/// DFF frames are only approximately orthonormal (`docs/formats/dff.md` §2.1).
fn rotation_of(m: Mat3) -> Quat {
    let x = m.x_axis.normalize_or(Vec3::X);
    let y = (m.y_axis - x * x.dot(m.y_axis)).normalize_or(x.any_orthonormal_vector());
    let z = x.cross(y);
    Quat::from_mat3(&Mat3::from_cols(x, y, z)).normalize()
}

/// The canonical SA bone id of a DFF bone: from its name by the alias table, else from its
/// node id where the game's ids are SA's (SA; VC, whose toes are 2000 and 2001).
fn dff_canonical(name: &str, node_id: i32, game: GtaGame) -> Option<i32> {
    canonical_bone_id(&bone_key(name)).or(match (game, node_id) {
        (GtaGame::Vc, 2000) => Some(44),
        (GtaGame::Vc, 2001) => Some(54),
        (GtaGame::Sa | GtaGame::Vc, id) => SA_BONES.iter().any(|r| r.0 == id).then_some(id),
        (GtaGame::Iii, _) => None,
    })
}

impl Skeleton {
    /// The skeleton of a DFF's HAnim hierarchy (`docs/formats/dff.md` §2.3): one bone per
    /// node, in node order (the skin's bone order); names from the node's frame (verbatim,
    /// leading spaces kept), ids the node ids, canonical ids by the alias rules (the name,
    /// else the node id for SA and VC), parents from the PUSH/POP flags ([`Clump::bones`]),
    /// rest = the frame's local rotation (orthonormalised) and position, scale 1.
    ///
    /// The root bone (`Normal` in SA) keeps its frame's local transform, the DFF's bind pose:
    /// in SA files a rotation of (−0.5, −0.5, −0.5, 0.5) (120° about (1, 1, 1), §6.3), so the
    /// assembled rest stands along +Y. The built-in skeletons instead give the root the ≈90°
    /// about Z that clips are relative to, and stand along +Z; below the root the two agree.
    /// The clump root frame above the hierarchy is not a bone.
    ///
    /// `None` when the clump has no hierarchy or a node has no frame.
    pub fn from_dff(clump: &Clump, game: GtaGame) -> Option<Skeleton> {
        let bones = clump.bones()?;
        let mut out = Vec::with_capacity(bones.len());
        for b in &bones {
            let frame = clump.frames.get(b.frame?)?;
            let name = frame.name.clone().unwrap_or_default();
            out.push(SkeletonBone {
                canonical: dff_canonical(&name, b.node_id, game),
                name,
                id: Some(b.node_id),
                parent: b.parent,
                rest: BonePose {
                    rotation: rotation_of(frame.rotation),
                    translation: frame.position,
                    scale: Vec3::ONE,
                },
            });
        }
        Some(Skeleton {
            name: format!("DFF ped ({game:?})"),
            bones: out,
        })
    }

    /// How this skeleton's local rest transforms differ from `other`'s, bone by bone: bones
    /// are matched by canonical id (by [`bone_key`] name when a bone has none); rotations are
    /// compared as the angle between them (a quaternion and its negation are one rotation);
    /// the roots' rotation is reported apart ([`RestDifference::root_rotation`]) and left out
    /// of [`RestDifference::max_rotation`].
    pub fn rest_difference(&self, other: &Skeleton) -> RestDifference {
        let find = |b: &SkeletonBone| -> Option<usize> {
            match b.canonical {
                Some(c) => other.bones.iter().position(|o| o.canonical == Some(c)),
                None => {
                    let key = bone_key(&b.name);
                    other
                        .bones
                        .iter()
                        .position(|o| o.canonical.is_none() && bone_key(&o.name) == key)
                }
            }
        };
        let mut out = RestDifference::default();
        let mut matched = vec![false; other.bones.len()];
        for b in &self.bones {
            let Some(j) = find(b) else {
                out.missing_in_other.push(b.name.clone());
                continue;
            };
            matched[j] = true;
            let o = &other.bones[j];
            let d = BoneRestDifference {
                name: b.name.clone(),
                canonical: b.canonical,
                root: b.parent.is_none(),
                translation: b.rest.translation.distance(o.rest.translation),
                rotation: angle_between(b.rest.rotation, o.rest.rotation),
            };
            if out
                .max_translation
                .as_ref()
                .is_none_or(|m| d.translation > m.0)
            {
                out.max_translation = Some((d.translation, d.name.clone()));
            }
            if d.root && o.parent.is_none() {
                out.root_rotation = Some(d.rotation);
            } else if out.max_rotation.as_ref().is_none_or(|m| d.rotation > m.0) {
                out.max_rotation = Some((d.rotation, d.name.clone()));
            }
            out.bones.push(d);
        }
        out.missing_in_self = other
            .bones
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(b, _)| b.name.clone())
            .collect();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::dff::{Frame, HAnim, HAnimHierarchy, HAnimNode};

    fn bone(
        name: &str,
        canonical: Option<i32>,
        parent: Option<usize>,
        t: Vec3,
        r: Quat,
    ) -> SkeletonBone {
        SkeletonBone {
            name: name.to_owned(),
            id: canonical,
            canonical,
            parent,
            rest: BonePose {
                rotation: r,
                translation: t,
                scale: Vec3::ONE,
            },
        }
    }

    #[test]
    fn rest_difference_reports_the_largest_per_bone_and_the_root_apart() {
        let a = Skeleton {
            name: "a".into(),
            bones: vec![
                bone(
                    "Root",
                    Some(0),
                    None,
                    Vec3::ZERO,
                    Quat::from_rotation_z(1.5),
                ),
                bone(
                    "Pelvis",
                    Some(1),
                    Some(0),
                    Vec3::new(0.0, 0.0, 1.0),
                    Quat::IDENTITY,
                ),
                bone(
                    "Spine",
                    Some(2),
                    Some(1),
                    Vec3::new(0.2, 0.0, 0.0),
                    Quat::from_rotation_x(0.1),
                ),
                bone("Tail", None, Some(1), Vec3::X, Quat::IDENTITY),
                bone("L Thigh", Some(41), Some(1), Vec3::X, Quat::IDENTITY),
            ],
        };
        let b = Skeleton {
            name: "b".into(),
            bones: vec![
                // Another root rotation, and −q for the pelvis: the same rotation.
                bone("Normal", Some(0), None, Vec3::ZERO, Quat::IDENTITY),
                bone(
                    " Pelvis",
                    Some(1),
                    Some(0),
                    Vec3::new(0.0, 0.03, 1.0),
                    -Quat::IDENTITY,
                ),
                bone(
                    " Spine",
                    Some(2),
                    Some(1),
                    Vec3::new(0.2, 0.0, 0.0),
                    Quat::from_rotation_x(0.35),
                ),
                bone("tail", None, Some(1), Vec3::X, Quat::IDENTITY),
                bone("Belly", Some(201), Some(2), Vec3::X, Quat::IDENTITY),
            ],
        };
        let d = a.rest_difference(&b);
        assert_eq!(d.bones.len(), 4);
        let (t, tb) = d.max_translation.clone().unwrap();
        assert!((t - 0.03).abs() < 1e-6 && tb == "Pelvis");
        let (r, rb) = d.max_rotation.clone().unwrap();
        assert!((r - 0.25).abs() < 1e-5 && rb == "Spine", "{r} {rb}");
        assert!((d.root_rotation.unwrap() - 1.5).abs() < 1e-5);
        assert!(d.bones[1].rotation < 1e-6, "q and −q are one rotation");
        assert_eq!(d.missing_in_other, ["L Thigh"]);
        assert_eq!(d.missing_in_self, ["Belly"]);
        // Against itself: all zero.
        let same = a.rest_difference(&a);
        assert_eq!(same.max_translation.unwrap().0, 0.0);
        assert!(same.max_rotation.unwrap().0 < 1e-6);
        assert!(same.missing_in_other.is_empty() && same.missing_in_self.is_empty());
    }

    fn frame(name: &str, parent: Option<usize>, r: Mat3, p: Vec3, hanim: Option<HAnim>) -> Frame {
        Frame {
            rotation: r,
            position: p,
            parent,
            flags: 0,
            name: Some(name.to_owned()),
            hanim,
        }
    }

    #[test]
    fn from_dff_takes_names_ids_parents_and_rest_from_the_hierarchy() {
        let h = |id, hierarchy| {
            Some(HAnim {
                version: 0x100,
                node_id: id,
                hierarchy,
            })
        };
        let node = |id, index, flags| HAnimNode { id, index, flags };
        // Nodes: Normal(0) → Pelvis(1) → {L Thigh(41), R Thigh(51)}; frames in another order,
        // one frame scaled by 2 and slightly skewed.
        let normal = Mat3::from_quat(Quat::from_array([-0.5, -0.5, -0.5, 0.5]));
        let turn = Quat::from_rotation_y(0.3);
        let skewed = Mat3::from_cols(
            Mat3::from_quat(turn).x_axis * 2.0,
            Mat3::from_quat(turn).y_axis * 2.0 + Mat3::from_quat(turn).x_axis * 1e-3,
            Mat3::from_quat(turn).z_axis * 2.0,
        );
        let clump = Clump {
            frames: vec![
                Frame {
                    name: None,
                    ..frame("", None, Mat3::IDENTITY, Vec3::ZERO, None)
                },
                frame(
                    "Normal",
                    Some(0),
                    normal,
                    Vec3::ZERO,
                    h(
                        0,
                        Some(HAnimHierarchy {
                            flags: 0,
                            key_frame_size: 36,
                            nodes: vec![
                                node(0, 0, 0),
                                node(1, 1, 0),
                                node(41, 2, HAnimNode::PUSH | HAnimNode::POP),
                                node(51, 3, HAnimNode::POP),
                            ],
                        }),
                    ),
                ),
                frame(
                    " Pelvis",
                    Some(1),
                    Mat3::IDENTITY,
                    Vec3::new(0.0, 0.0, 1.0),
                    h(1, None),
                ),
                frame(
                    " R Thigh",
                    Some(2),
                    skewed,
                    Vec3::new(0.0, 0.0, -0.1),
                    h(51, None),
                ),
                frame(
                    "Thigh_L",
                    Some(2),
                    Mat3::IDENTITY,
                    Vec3::new(0.0, 0.0, 0.1),
                    h(41, None),
                ),
            ],
            ..Clump::default()
        };
        let s = Skeleton::from_dff(&clump, GtaGame::Sa).unwrap();
        let names: Vec<&str> = s.bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["Normal", " Pelvis", "Thigh_L", " R Thigh"]);
        assert_eq!(
            s.bones.iter().map(|b| b.id).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(41), Some(51)]
        );
        // "Thigh_L" is no alias: its canonical id comes from the SA node id.
        assert_eq!(
            s.bones.iter().map(|b| b.canonical).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(41), Some(51)]
        );
        assert_eq!(
            s.bones.iter().map(|b| b.parent).collect::<Vec<_>>(),
            [None, Some(0), Some(1), Some(1)]
        );
        assert!(
            angle_between(
                s.bones[0].rest.rotation,
                Quat::from_array([-0.5, -0.5, -0.5, 0.5])
            ) < 1e-6
        );
        assert!(angle_between(s.bones[3].rest.rotation, turn) < 1e-3);
        assert!(s.bones[3].rest.rotation.is_normalized());
        assert_eq!(s.bones[3].rest.translation, Vec3::new(0.0, 0.0, -0.1));
        // III has no SA ids: only names count.
        let iii = Skeleton::from_dff(&clump, GtaGame::Iii).unwrap();
        assert_eq!(iii.bones[2].canonical, None);
        // Against the built-in SA skeleton: the root differs (bind vs clip-relative), the
        // rest of the bones are matched or reported missing.
        let d = s.rest_difference(&Skeleton::gta_sa());
        assert!(d.root_rotation.unwrap() > 1.0);
        assert_eq!(d.bones.len(), 4);
        assert_eq!(d.missing_in_self.len(), 28);
        // No hierarchy: no skeleton.
        let mut flat = clump.clone();
        flat.frames[1].hanim = None;
        assert!(Skeleton::from_dff(&flat, GtaGame::Sa).is_none());
    }
}
