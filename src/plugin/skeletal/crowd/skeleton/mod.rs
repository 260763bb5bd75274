//! A skeleton as the crowd path poses it: a game's built-in one, a game's bones at a DFF
//! model's rests, or a glTF character's nodes.

use super::super::retargeted::TargetRig;
use super::super::{ClipInfo, bone_target_id};
use crate::animation::pose::{LocalPose, PoseSkeleton};
use crate::animation::{BonePose, BoneRef};
use crate::coords::GTA_TO_BEVY;
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::math::Affine3A;
use bevy::prelude::*;
use std::sync::Arc;

/// A skeleton as the crowd path uses it, one game's or a glTF character's: the flat skeleton the
/// pose pipeline runs on, target ids, names, the basis, and for a glTF character the rig clips
/// are retargeted onto.
pub(crate) struct CrowdSkeleton {
    pub(super) pose: PoseSkeleton,
    pub(super) targets: Vec<AnimationTargetId>,
    pub(super) names: Arc<[String]>,
    pub(super) parents: Arc<[Option<usize>]>,
    /// A game's: GTA's Z-up to Bevy's Y-up, lifted so that the lowest joint at rest is on the
    /// origin (a DFF ped's: as `GtaModel` lifts it, with the frames above its root bone):
    /// composed into the root joint's (bone 0, the only root of the built-in skeletons) local
    /// transform each frame. A glTF character has none (its clips are retargeted into its own
    /// axes).
    pub(super) basis: Option<Basis>,
    /// A glTF character's rig, which clips are retargeted onto.
    pub(super) rig: Option<Arc<TargetRig>>,
    /// A glTF character's: per bone, its node's index in the file.
    #[cfg_attr(not(all(feature = "dff", feature = "gltf")), allow(dead_code))]
    pub(super) file_nodes: Vec<usize>,
}

/// What a game's crowd skeleton composes into its root bone: an affine transform, its rotation
/// (the root's rotation turned by it) and its scale (the root's scaled by it: exact for a
/// uniform scale, as a model's frames above its root bone have; a frame scaled unevenly would
/// shear the bones, which no bone's transform can hold).
#[derive(Clone, Copy)]
pub(super) struct Basis {
    affine: Affine3A,
    rotation: Quat,
    scale: Vec3,
}

impl Basis {
    /// GTA's Z-up to Bevy's Y-up, lifted by `lift` (metres, along Bevy's Y), after `above`.
    fn new(lift: f32, above: Affine3A) -> Self {
        let turned = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * lift);
        let (above_scale, above_rotation, _) = above.to_scale_rotation_translation();
        Self {
            affine: turned * above,
            rotation: (GTA_TO_BEVY * above_rotation).normalize(),
            scale: unit_within_rounding(above_scale),
        }
    }
}

/// What [`CrowdSkeleton::with_model_rests`] cannot follow in a model's hierarchy: posed right at
/// rest only, and otherwise under a clip than the model's bone entities are.
#[cfg(feature = "dff")]
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RestOnly {
    /// The bone whose frame is above the root bone's. The root bone is the root all the same
    /// (the frames above it fixed, as at rest), so it and every bone below it do not follow that
    /// bone's keys.
    pub(crate) root_under: Option<String>,
    /// Bones with more than one frame of their animation target: the first follows the clip's
    /// keys, the others (and what hangs on them) stay at rest under the bone above them. (As
    /// bone entities, `SkeletalClip` drives the first found breadth-first, Bevy's
    /// `AnimationPlayer` every one.)
    pub(crate) repeated: Vec<String>,
}

/// A frame of a model a crowd character wears (a DFF ped's), as
/// [`CrowdSkeleton::with_model_rests`] takes it: the animation target tracks bind to, the parent
/// frame and the local rest transform (GTA's axes).
#[cfg(feature = "dff")]
#[derive(Clone)]
pub(crate) struct ModelFrame {
    pub(crate) target: Option<AnimationTargetId>,
    pub(crate) parent: Option<usize>,
    pub(crate) rest: Affine3A,
}

impl CrowdSkeleton {
    pub(super) fn new(game: GtaGame) -> Self {
        let skeleton = game.skeleton();
        let lowest = skeleton.lowest_rest_height();
        let targets = skeleton
            .bones
            .iter()
            .map(|b| {
                bone_target_id(
                    &skeleton,
                    &BoneRef {
                        name: b.name.clone(),
                        id: b.id,
                    },
                )
            })
            .collect();
        let parents = skeleton.bones.iter().map(|b| b.parent).collect();
        let names = skeleton.bones.iter().map(|b| b.name.clone()).collect();
        Self {
            names,
            basis: Some(Basis::new(-lowest, Affine3A::IDENTITY)),
            pose: skeleton
                .pose_skeleton()
                .expect("the built-in skeletons list parents before children"),
            targets,
            parents,
            rig: None,
            file_nodes: Vec::new(),
        }
    }

    /// `game` (a game's built-in skeleton, [`Self::new`]) with a model's own rests and
    /// hierarchy, posed as `GtaModel` poses that model with bone entities. Each bone the model
    /// has (its first frame of the bone's animation target):
    /// - hangs under the bone of the nearest frame above it in the model, wherever that bone
    ///   comes in the game's order;
    /// - rests where its frame rests relative to that bone. Frames between them that are not
    ///   bones are a fixed transform between the two ([`PoseSkeleton::with_offsets`]), which a
    ///   clip's keys for the bone below do not replace;
    /// - where no bone is above its frame, is fixed where the frames above it put it, and moves
    ///   only by its own keys.
    ///
    /// So a model that lacks a bone between two others (a forearm), hangs a bone under another
    /// than the game does, or puts a turned frame of its own between two bones, moves each bone
    /// as its bone entities move. A bone the model lacks keeps the game's rest and parent. The
    /// basis lifts by `lift` (the model's, metres) after the frames above the root bone. The
    /// bones, their order, names and targets stay the game's, so that everything bound by them
    /// (skins, masks, layers) holds. `None` when the model has no frame of the root bone.
    ///
    /// Also returns what it could not follow ([`RestOnly`]).
    #[cfg(feature = "dff")]
    pub(crate) fn with_model_rests(
        game: &CrowdSkeleton,
        frames: &[ModelFrame],
        lift: f32,
    ) -> Option<(Self, RestOnly)> {
        let n = frames.len();
        // A frame's parent chain, at most as long as the frames (a cycle or a parent out of
        // range ends it).
        let chain = |f: usize| {
            let mut at = frames.get(f).and_then(|f| f.parent);
            std::iter::from_fn(move || {
                let p = at.filter(|p| *p < n)?;
                at = frames[p].parent;
                Some(p)
            })
            .take(n)
        };
        let model_rest = |f: usize| chain(f).fold(frames[f].rest, |m, p| frames[p].rest * m);
        let frame_of: Vec<Option<usize>> = (game.targets.iter())
            .map(|t| frames.iter().position(|f| f.target == Some(*t)))
            .collect();
        let root = (*frame_of.first()?)?;
        let above = (frames[root].parent)
            .filter(|p| *p < n)
            .map_or(Affine3A::IDENTITY, model_rest);
        let basis = Basis::new(lift, above);
        // A frame's rest in the skeleton's model space (the root bone's parent frame's).
        let below_above = above.inverse();
        let frame_model = |f: usize| below_above * model_rest(f);
        // Each frame's bone, where it is one.
        let mut bone_of = vec![None; n];
        for (b, f) in frame_of.iter().enumerate() {
            if let Some(f) = *f {
                bone_of[f].get_or_insert(b);
            }
        }
        let rest_only = RestOnly {
            root_under: chain(root)
                .find_map(|a| bone_of[a])
                .map(|b| game.names[b].clone()),
            repeated: (game.targets.iter().zip(game.names.iter()))
                .filter(|(t, _)| frames.iter().filter(|f| f.target == Some(**t)).count() > 1)
                .map(|(_, name)| name.clone())
                .collect(),
        };
        // Each bone's rest in model space: its frame's, or (a bone the model lacks) the game's
        // rest under its parent's.
        let mut model: Vec<Affine3A> = Vec::with_capacity(game.parents.len());
        for (b, games) in game.parents.iter().enumerate() {
            let placed = match (frame_of[b], games) {
                (Some(f), _) => frame_model(f),
                (None, Some(p)) => model[*p] * affine(game.pose.rest().get(b)),
                (None, None) => affine(game.pose.rest().get(b)),
            };
            model.push(placed);
        }
        let nb = game.parents.len();
        let (mut rests, mut parents, mut offsets) = (
            Vec::with_capacity(nb),
            Vec::with_capacity(nb),
            Vec::with_capacity(nb),
        );
        let decomposed = |m: Affine3A| {
            let (scale, rotation, translation) = m.to_scale_rotation_translation();
            BonePose {
                rotation: rotation.normalize(),
                translation,
                scale: unit_within_rounding(scale),
            }
        };
        for (b, games) in game.parents.iter().enumerate() {
            let (parent, offset, local) = match (frame_of[b], games) {
                (None, _) => (*games, None, affine(game.pose.rest().get(b))),
                // The root bone: its frame's rest, the frames above it in the basis.
                (Some(f), None) => (None, None, frames[f].rest),
                (Some(f), Some(_)) => {
                    let up = frames[f].parent.filter(|p| *p < n);
                    // The bone of the nearest frame above (`a`), and the frame straight above.
                    let above = chain(f)
                        .find_map(|a| bone_of[a].filter(|p| *p != b).map(|p| (a, p)))
                        .zip(up);
                    match above {
                        Some(((a, p), up)) => {
                            // The frames between, where there are some that move or turn it.
                            let between = (up != a)
                                .then(|| model[p].inverse() * frame_model(up))
                                .filter(|m| !m.abs_diff_eq(Affine3A::IDENTITY, 1e-6));
                            match between {
                                None => (Some(p), None, model[p].inverse() * model[b]),
                                Some(between) => (Some(p), Some(between), frames[f].rest),
                            }
                        }
                        // No bone above: where its frames put it, in the character's space.
                        None => {
                            let placed = up.map_or(below_above, frame_model);
                            (None, Some(basis.affine * placed), frames[f].rest)
                        }
                    }
                }
            };
            rests.push(decomposed(local));
            parents.push(parent);
            offsets.push(offset);
        }
        let pose = PoseSkeleton::with_offsets(&parents, &rests, &offsets).ok()?;
        // The game's parents where the model hangs its bones as the game does (shared).
        let parents = match parents[..] == game.parents[..] {
            true => game.parents.clone(),
            false => parents.into(),
        };
        // The game's bones, names and targets, shared with its skeleton.
        let skeleton = Self {
            pose,
            basis: Some(basis),
            targets: game.targets.clone(),
            names: game.names.clone(),
            parents,
            rig: None,
            file_nodes: Vec::new(),
        };
        Some((skeleton, rest_only))
    }

    /// Whether `self` rests as `other` does, within 10 µm and 10 µrad (a model made from a
    /// game's tables, its matrices rounded), the two having the same bones.
    #[cfg(feature = "dff")]
    pub(crate) fn rests_as(&self, other: &Self) -> bool {
        const CLOSE: f32 = 1e-5;
        let near = |a: Vec3, b: Vec3| (a - b).abs().max_element() < CLOSE;
        // (q and −q are one rotation; each component moves by about half the angle.)
        let turned = |a: Quat, b: Quat| {
            let (a, b) = (Vec4::from(a), Vec4::from(b));
            (a - b).abs().max_element().min((a + b).abs().max_element()) < CLOSE
        };
        let (a, b) = (self.pose.rest(), other.pose.rest());
        let bases = match (&self.basis, &other.basis) {
            (Some(x), Some(y)) => {
                turned(x.rotation, y.rotation)
                    && near(x.affine.translation.into(), y.affine.translation.into())
                    && (x.affine.matrix3 - y.affine.matrix3)
                        .to_cols_array()
                        .iter()
                        .all(|d| d.abs() < CLOSE)
            }
            (None, None) => true,
            _ => false,
        };
        bases
            && self.pose.in_joint_order()
            && other.pose.in_joint_order()
            && self.parents == other.parents
            && self.targets == other.targets
            && (0..self.parents.len()).all(|j| {
                let (p, q) = (a.get(j), b.get(j));
                near(p.translation, q.translation)
                    && near(p.scale, q.scale)
                    && turned(p.rotation, q.rotation)
            })
    }

    /// A glTF character's skeleton: `rig`'s nodes (parents before children), each with its
    /// animation target and its index in the file. `None` when a parent comes after its child
    /// or the lists differ in length.
    #[cfg(feature = "gltf")]
    pub(crate) fn for_rig(
        rig: TargetRig,
        targets: Vec<AnimationTargetId>,
        file_nodes: Vec<usize>,
    ) -> Option<Self> {
        let parents = rig.parents();
        let n = parents.len();
        if targets.len() != n || file_nodes.len() != n {
            return None;
        }
        Some(Self {
            // (Refuses a parent after its child.)
            pose: PoseSkeleton::new(parents, rig.rests()).ok()?,
            names: rig.names().into(),
            targets,
            parents: parents.into(),
            basis: None,
            rig: Some(Arc::new(rig)),
            file_nodes,
        })
    }

    /// A glTF character's: per node of the file (by its index), the node's bone (empty for a
    /// game's).
    #[cfg(feature = "gltf")]
    pub(crate) fn bones_by_file_node(&self) -> Vec<Option<usize>> {
        let mut bone_of = vec![None; self.file_nodes.iter().max().map_or(0, |m| m + 1)];
        for (bone, &node) in self.file_nodes.iter().enumerate() {
            bone_of[node] = Some(bone);
        }
        bone_of
    }

    /// How many bones it has.
    #[cfg(all(feature = "dff", feature = "gltf"))]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The bone each of `info`'s tracks drives (by target id).
    pub(super) fn tracks(&self, info: &ClipInfo) -> Vec<Option<usize>> {
        (info.tracks.iter())
            .map(|(t, _)| self.targets.iter().position(|b| b == t))
            .collect()
    }

    /// The bones' names, in bone order.
    pub(in crate::plugin::skeletal) fn names(&self) -> &[String] {
        &self.names
    }

    /// The bones' parents, in bone order.
    pub(in crate::plugin::skeletal) fn parents(&self) -> &[Option<usize>] {
        &self.parents
    }

    /// The rest pose (GTA's axes: no basis in the root).
    pub(in crate::plugin::skeletal) fn rest(&self) -> &LocalPose {
        self.pose.rest()
    }

    /// `root` (joint 0's local transform) with `basis` composed into it.
    pub(super) fn based(basis: &Basis, root: BonePose) -> BonePose {
        BonePose {
            rotation: basis.rotation * root.rotation,
            translation: basis.affine.transform_point3(root.translation),
            scale: basis.scale * root.scale,
        }
    }

    /// `root` with the basis (if any) taken out of it again ([`Self::based`] undone).
    pub(super) fn unbased(&self, root: BonePose) -> BonePose {
        let Some(basis) = &self.basis else {
            return root;
        };
        BonePose {
            rotation: basis.rotation.inverse() * root.rotation,
            translation: basis.affine.inverse().transform_point3(root.translation),
            scale: root.scale / basis.scale,
        }
    }
}

/// `scale`, or exactly 1 where it is 1 within a matrix's rounding (10⁻⁵): a model's frames are
/// rotations, and a scale of 0.99999994 taken out of one would send every pose of the skeleton
/// through the pose pipeline's path with scales.
fn unit_within_rounding(scale: Vec3) -> Vec3 {
    match scale.abs_diff_eq(Vec3::ONE, 1e-5) {
        true => Vec3::ONE,
        false => scale,
    }
}

/// A local pose as an affine transform.
#[cfg(feature = "dff")]
fn affine(p: BonePose) -> Affine3A {
    Affine3A::from_scale_rotation_translation(p.scale, p.rotation, p.translation)
}

#[cfg(all(test, feature = "dff"))]
mod tests;
