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

/// What a game's crowd skeleton composes into its root bone: an affine transform, and its
/// rotation (the root's rotation turned by it).
#[derive(Clone, Copy)]
pub(super) struct Basis {
    affine: Affine3A,
    rotation: Quat,
}

impl Basis {
    /// GTA's Z-up to Bevy's Y-up, lifted by `lift` (metres, along Bevy's Y), after `above`.
    fn new(lift: f32, above: Affine3A) -> Self {
        let turned = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * lift);
        let (_, above_rotation, _) = above.to_scale_rotation_translation();
        Self {
            affine: turned * above,
            rotation: (GTA_TO_BEVY * above_rotation).normalize(),
        }
    }
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
    #[cfg(feature = "dff")]
    pub(crate) fn with_model_rests(
        game: &CrowdSkeleton,
        frames: &[ModelFrame],
        lift: f32,
    ) -> Option<Self> {
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
                scale,
            }
        };
        for (b, games) in game.parents.iter().enumerate() {
            let (parent, offset, local) = match (frame_of[b], games) {
                (None, _) => (*games, None, affine(game.pose.rest().get(b))),
                // The root bone: its frame's rest, the frames above it in the basis.
                (Some(f), None) => (None, None, frames[f].rest),
                (Some(f), Some(_)) => {
                    let up = frames[f].parent.filter(|p| *p < n);
                    match chain(f).find(|a| bone_of[*a].is_some_and(|p| p != b)) {
                        // Straight under its bone, or with frames between that do nothing.
                        Some(a)
                            if up == Some(a)
                                || (model[bone_of[a]?].inverse() * frame_model(up?))
                                    .abs_diff_eq(Affine3A::IDENTITY, 1e-6) =>
                        {
                            let p = bone_of[a]?;
                            (Some(p), None, model[p].inverse() * model[b])
                        }
                        // Frames between that move or turn it.
                        Some(a) => {
                            let p = bone_of[a]?;
                            let between = model[p].inverse() * frame_model(up?);
                            (Some(p), Some(between), frames[f].rest)
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
        Some(Self {
            pose,
            basis: Some(basis),
            targets: game.targets.clone(),
            names: game.names.clone(),
            parents,
            rig: None,
            file_nodes: Vec::new(),
        })
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

    /// A glTF character's: per bone, its node's index in the file (empty for a game's).
    #[cfg(all(feature = "dff", feature = "gltf"))]
    pub(crate) fn file_nodes(&self) -> &[usize] {
        &self.file_nodes
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
            scale: root.scale,
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
            scale: root.scale,
        }
    }
}

/// A local pose as an affine transform.
#[cfg(feature = "dff")]
fn affine(p: BonePose) -> Affine3A {
    Affine3A::from_scale_rotation_translation(p.scale, p.rotation, p.translation)
}

#[cfg(all(test, feature = "dff"))]
mod tests {
    use super::*;

    /// The frames of a model made from `game`'s table: frame 0 the clump's root, 0.5 m up and
    /// turned a quarter about Z; frame `1 + b` bone `b`, its offset scaled by `k`.
    fn frames(game: &CrowdSkeleton, k: f32) -> Vec<ModelFrame> {
        let root = ModelFrame {
            target: None,
            parent: None,
            rest: Affine3A::from_rotation_translation(
                Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
                Vec3::Z * 0.5,
            ),
        };
        let bones = (0..game.parents.len()).map(|b| {
            let mut rest = game.pose.rest().get(b);
            rest.translation *= k;
            ModelFrame {
                target: Some(game.targets[b]),
                parent: Some(game.parents[b].map_or(0, |p| p + 1)),
                rest: affine(rest),
            }
        });
        std::iter::once(root).chain(bones).collect()
    }

    /// Each bone's model-space transform with the basis (Bevy's axes), posed by the pose
    /// pipeline as the crowd poses it: the rests, each bone `key` gives turned by it (its
    /// offset kept), the basis composed into the root.
    fn posed_by(s: &CrowdSkeleton, key: &dyn Fn(usize) -> Option<Quat>) -> Vec<Affine3A> {
        let mut local = s.pose.rest().clone();
        for b in 0..s.parents.len() {
            if let Some(turn) = key(b) {
                let rest = local.get(b);
                local.set(
                    b,
                    BonePose {
                        rotation: turn,
                        ..rest
                    },
                );
            }
        }
        if let Some(basis) = &s.basis {
            local.set(0, CrowdSkeleton::based(basis, local.get(0)));
        }
        let mut model = vec![Affine3A::IDENTITY; s.parents.len()];
        crate::animation::pose::local_to_model(&s.pose, &local, &mut model);
        model
    }

    /// Each bone's model-space rest with the basis (Bevy's axes).
    fn placed(s: &CrowdSkeleton) -> Vec<Affine3A> {
        posed_by(s, &|_| None)
    }

    /// Each frame's model-space rest under `GtaModel`'s basis (lifted by `lift`, Z-up to Y-up).
    fn frames_placed(frames: &[ModelFrame], lift: f32) -> Vec<Affine3A> {
        let basis = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * lift);
        let placed = |mut f: usize| {
            let mut m = frames[f].rest;
            while let Some(p) = frames[f].parent {
                m = frames[p].rest * m;
                f = p;
            }
            basis * m
        };
        (0..frames.len()).map(placed).collect()
    }

    fn apart(a: Affine3A, b: Affine3A) -> f32 {
        (a.matrix3 - b.matrix3)
            .to_cols_array()
            .iter()
            .chain((a.translation - b.translation).to_array().iter())
            .fold(0.0f32, |m, v| m.max(v.abs()))
    }

    /// `frames` with a frame that is no bone (not animated) put between bone frame `f` and its
    /// parent: `rest` relative to that parent, `f` keeping where it rests.
    fn with_frame_between(frames: &[ModelFrame], f: usize, rest: Affine3A) -> Vec<ModelFrame> {
        let mut out = frames.to_vec();
        let placed = frames_placed(frames, 0.0);
        let parent = frames[f].parent;
        out.push(ModelFrame {
            target: None,
            parent,
            rest,
        });
        let basis = Affine3A::from_quat(GTA_TO_BEVY);
        let between = parent.map_or(basis * rest, |p| placed[p] * rest);
        out[f].parent = Some(out.len() - 1);
        out[f].rest = between.inverse() * placed[f];
        out
    }

    /// `frames` with bone frame `f` (and the frames below it) hung under frame `under`, resting
    /// where it did.
    fn rehung(frames: &[ModelFrame], f: usize, under: usize) -> Vec<ModelFrame> {
        let mut out = frames.to_vec();
        let placed = frames_placed(frames, 0.0);
        out[f].parent = Some(under);
        out[f].rest = placed[under].inverse() * placed[f];
        out
    }

    /// Every bone rests where `GtaModel` puts its frame: the clump's root above the root bone
    /// (in the basis), a frame between two bones (a nub 2 cm along, or turned), a bone the model
    /// lacks at the game's rest, a bone hung under another than the game's (earlier or later in
    /// the game's order), a bone with no bone above it.
    #[test]
    fn a_models_rests_place_the_games_bones_where_its_frames_are() {
        for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
            let built_in = CrowdSkeleton::new(game);
            let n = built_in.parents.len();
            let plain = frames(&built_in, 1.1);
            let last = plain.len() - 1;
            let nub = Affine3A::from_translation(Vec3::X * 0.02);
            let frames = with_frame_between(&plain, last, nub);
            let right = |what: &str, frames: &[ModelFrame]| {
                let s = CrowdSkeleton::with_model_rests(&built_in, frames, 0.9).unwrap();
                let (ours, theirs) = (placed(&s), frames_placed(frames, 0.9));
                for (b, target) in s.targets.iter().enumerate() {
                    if let Some(f) = frames.iter().position(|f| f.target == Some(*target)) {
                        let d = apart(ours[b], theirs[f]);
                        assert!(d < 1e-5, "{game:?} {what}: bone {b} {d} off");
                    }
                }
                s
            };
            let s = right("nub", &frames);
            // (A nub that only moves the bone is an offset all the same: a clip's translation
            // keys, where it has them, replace the bone's own.)
            assert!(!s.pose.in_joint_order(), "{game:?}");
            // The turned root is in the basis; the root bone's own rest is its frame's.
            let root = s.pose.rest().get(0);
            let want = built_in.pose.rest().get(0).translation * 1.1;
            assert!(root.translation.distance(want) < 1e-6, "{game:?}");
            // A model of the game's hierarchy, only longer: posed in joint order.
            let s = right("plain", &plain);
            assert!(s.pose.in_joint_order(), "{game:?}");
            assert_eq!(s.parents, built_in.parents, "{game:?}");

            // A bone the model lacks (the last): the game's rest under the model's parent.
            let mut lacking = frames.clone();
            lacking[last].target = None;
            let s = CrowdSkeleton::with_model_rests(&built_in, &lacking, 0.9).unwrap();
            let (rest, games) = (s.pose.rest().get(n - 1), built_in.pose.rest().get(n - 1));
            assert!(rest.translation.distance(games.translation) < 1e-6);

            // The last bone's frame hung under the root bone's: hung under the root bone.
            let s = right("moved", &rehung(&plain, last, 1));
            assert_eq!(s.parents[n - 1], Some(0), "{game:?}");

            // ... under a bone later in the game's order (the last but two under the last but
            // one, hung in turn under the root).
            let late = rehung(&rehung(&plain, last - 1, 1), last - 2, last - 1);
            let s = right("late", &late);
            assert_eq!(s.parents[n - 3], Some(n - 2), "{game:?}");

            // The nub turned a quarter about x.
            let turn = Affine3A::from_rotation_translation(
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
                Vec3::X * 0.02,
            );
            right("turned", &with_frame_between(&plain, last, turn));

            // The last bone's frame straight under the clump's root: no bone above it.
            let s = right("orphan", &rehung(&plain, last, 0));
            assert_eq!(s.parents[n - 1], None, "{game:?}");

            // No frame of the root bone: no skeleton.
            let mut rootless = frames.clone();
            rootless[1].target = None;
            assert!(CrowdSkeleton::with_model_rests(&built_in, &rootless, 0.9).is_none());

            // Frames whose parents are out of range (the root bone's, another's), or a cycle:
            // no panic.
            let mut bad = frames.clone();
            bad[0].parent = Some(frames.len() + 5);
            bad[2].parent = Some(2);
            assert!(CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9).is_some());
            bad[1].parent = Some(frames.len() + 9);
            assert!(CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9).is_some());
            bad[3].parent = Some(4);
            bad[4].parent = Some(3);
            let _ = CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9);
        }
    }

    /// Posed (each bone turned by its own key, as a clip turns it), a model's bones are where
    /// `GtaModel`'s frames are, each bone moving with the bones above it in the model: where the
    /// model lacks a bone between two others (the game's forearm, say), hangs a bone under
    /// another bone than the game does (earlier or later in the game's order), puts a turned
    /// frame of its own between two bones, or hangs a bone under no bone. Hung on the game's
    /// hierarchy (as before), the first two were right at rest only.
    #[test]
    fn a_models_own_hierarchy_moves_its_bones_as_its_frames_when_posed() {
        // Bone b's key: a turn of its own about an axis of its own.
        let key = |b: usize| {
            let axis = Vec3::new(1.0, 0.3 * b as f32, -0.5).normalize();
            Quat::from_axis_angle(axis, 0.2 + 0.07 * b as f32)
        };
        let posed = |s: &CrowdSkeleton| posed_by(s, &|b| Some(key(b)));
        // The model's frames posed as bone entities are: a bone's frame turned by its key at
        // its own offset, the other frames at rest.
        let frames_posed = |frames: &[ModelFrame], bone: &dyn Fn(usize) -> Option<usize>| {
            let basis = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * 0.9);
            let local = |f: usize| match bone(f) {
                Some(b) => {
                    Affine3A::from_rotation_translation(key(b), frames[f].rest.translation.into())
                }
                None => frames[f].rest,
            };
            (0..frames.len())
                .map(|mut f| {
                    let mut m = local(f);
                    while let Some(p) = frames[f].parent {
                        m = local(p) * m;
                        f = p;
                    }
                    basis * m
                })
                .collect::<Vec<_>>()
        };
        for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
            let built_in = CrowdSkeleton::new(game);
            let n = built_in.parents.len();
            let frames = frames(&built_in, 1.1);
            // Frame 1 + b is bone b's.
            let game_targets = &built_in.targets;
            let bone_of = |frames: &[ModelFrame]| {
                let targets: Vec<_> = frames.iter().map(|f| f.target).collect();
                move |f: usize| targets[f].and_then(|t| game_targets.iter().position(|x| *x == t))
            };
            // A bone in the middle of a chain (one with a parent and a child), and its child.
            let middle = (1..n)
                .find(|&b| built_in.parents[b].is_some() && built_in.parents.contains(&Some(b)))
                .unwrap();
            let child = built_in
                .parents
                .iter()
                .position(|p| *p == Some(middle))
                .unwrap();
            let grand = built_in.parents[middle].unwrap();
            // (a) The model lacks the middle bone: its children's frames hang under the middle
            // bone's parent, each at the two rests together (the middle frame left a leaf).
            let mut lacking = frames.clone();
            lacking[1 + middle].target = None;
            for c in (0..n).filter(|&c| built_in.parents[c] == Some(middle)) {
                lacking[1 + c].parent = Some(1 + grand);
                lacking[1 + c].rest = frames[1 + middle].rest * frames[1 + c].rest;
            }
            // (b) The last bone's frame hung under the root bone's.
            let last = frames.len() - 1;
            let moved = rehung(&frames, last, 1);
            // (c) The middle bone's child hung under the last bone (later in the game's
            // order), the last bone hung under the root bone.
            let late = rehung(&moved, 1 + child, last);
            // (d) A frame turned a quarter about x and 3 cm along between the middle bone and
            // its child.
            let turn = Affine3A::from_rotation_translation(
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
                Vec3::new(0.03, 0.0, 0.0),
            );
            let turned = with_frame_between(&frames, 1 + child, turn);
            // (e) The middle bone's child under the clump's root, through a turned frame.
            let orphan = with_frame_between(&rehung(&frames, 1 + child, 0), 1 + child, turn);
            let cases = [
                ("lacking", &lacking, Some(middle)),
                ("moved", &moved, None),
                ("late", &late, None),
                ("turned", &turned, None),
                ("orphan", &orphan, None),
            ];
            for (what, model, left_out) in cases {
                let s = CrowdSkeleton::with_model_rests(&built_in, model, 0.9).unwrap();
                let (ours, theirs) = (posed(&s), frames_posed(model, &bone_of(model)));
                for b in (0..n).filter(|b| Some(*b) != left_out) {
                    let d = apart(ours[b], theirs[1 + b]);
                    assert!(
                        d < 1e-4,
                        "{game:?} {what}: bone {b} {:?} is {d} off",
                        built_in.names[b]
                    );
                }
                // On the game's hierarchy from the same rests, the bone the model hangs
                // elsewhere moves with the wrong bones (or without its frame's turn).
                let wrong = match what {
                    "lacking" | "late" | "turned" | "orphan" => child,
                    _ => n - 1,
                };
                let at_rest = placed(&s);
                let rests: Vec<BonePose> = (0..n)
                    .map(|b| {
                        // (Its rest as the game's hierarchy would place it.)
                        let p = built_in.parents[b];
                        let local = p.map_or(at_rest[b], |p| at_rest[p].inverse() * at_rest[b]);
                        let (scale, rotation, translation) = local.to_scale_rotation_translation();
                        BonePose {
                            rotation,
                            translation,
                            scale,
                        }
                    })
                    .collect();
                let basis = s.basis.unwrap().affine;
                let mut fixed = rests.clone();
                fixed[0] = {
                    let local = basis.inverse() * affine(rests[0]);
                    let (scale, rotation, translation) = local.to_scale_rotation_translation();
                    BonePose {
                        rotation,
                        translation,
                        scale,
                    }
                };
                let mut game_hung = CrowdSkeleton::with_model_rests(&built_in, model, 0.9).unwrap();
                game_hung.parents = built_in.parents.clone();
                game_hung.pose = PoseSkeleton::new(&built_in.parents, &fixed).unwrap();
                let d = apart(posed(&game_hung)[wrong], theirs[1 + wrong]);
                assert!(
                    d > 1e-2,
                    "{game:?} {what}: on the game's hierarchy only {d} off"
                );
            }
        }
    }
}
