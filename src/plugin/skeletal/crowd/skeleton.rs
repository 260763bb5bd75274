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

/// The bones of a crowd skeleton made from a model's rests
/// ([`CrowdSkeleton::with_model_rests`]) that are posed right at rest only, and wrong under a
/// clip that turns them or the bones above them.
#[cfg(feature = "dff")]
#[derive(Debug, Default)]
pub(crate) struct RestOnly {
    /// Hung under a bone of the model that comes later in the game's order: posed under the
    /// game's parent instead, from the model's rest.
    pub(crate) regrafted: Vec<String>,
    /// With a turned frame that is no bone between theirs and their parent's: the turn is
    /// folded into the bone's rest, and a clip's key replaces it.
    pub(crate) turned_between: Vec<String>,
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
    /// hierarchy, as `GtaModel` poses that model with bone entities: each bone the model has
    /// (its first frame of the bone's animation target) hangs under the bone of the nearest
    /// frame above it in the model and rests where its frame rests relative to that bone, the
    /// frames between them (not animated) folded in; the basis lifts by `lift` (the model's,
    /// metres) after the frames above the root bone. So a model that lacks a bone between two
    /// others (a forearm), or hangs a bone under another than the game does, moves each bone
    /// with the bones above it in the model, as its bone entities move. A bone the model lacks
    /// keeps the game's rest and parent. The bones, their order, names and targets stay the
    /// game's, so that everything bound by them (skins, masks, layers) holds. `None` when the
    /// model has no frame of the root bone.
    ///
    /// Also returns the bones posed right at rest only ([`RestOnly`]).
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
        let below_above = above.inverse();
        // Each frame's bone, where it is one.
        let mut bone_of = vec![None; n];
        for (b, f) in frame_of.iter().enumerate() {
            if let Some(f) = *f {
                bone_of[f].get_or_insert(b);
            }
        }
        let mut model: Vec<Affine3A> = Vec::with_capacity(game.parents.len());
        let mut rests = Vec::with_capacity(game.parents.len());
        let mut parents = Vec::with_capacity(game.parents.len());
        // A frame that is turned (by more than about 0.01°).
        let turned = |a: usize| {
            let (_, turn, _) = frames[a].rest.to_scale_rotation_translation();
            turn.w.abs() < (1e-4f32).cos()
        };
        let mut rest_only = RestOnly::default();
        for (b, games) in game.parents.iter().enumerate() {
            // The bone of the nearest frame above this bone's in the model; the game's parent
            // where there is none, or where that bone comes later in the game's order (the
            // pose pipeline places parents first).
            let parent = match frame_of[b].zip(*games) {
                Some((f, games)) => match chain(f).find_map(|a| bone_of[a]) {
                    Some(p) if p < b => {
                        // The frames between (no bones) fold into this bone's rest, and a
                        // clip's key replaces a turn among them.
                        let mut between = chain(f).take_while(|a| bone_of[*a].is_none());
                        if between.any(turned) {
                            rest_only.turned_between.push(game.names[b].clone());
                        }
                        Some(p)
                    }
                    Some(_) => {
                        rest_only.regrafted.push(game.names[b].clone());
                        Some(games)
                    }
                    None => Some(games),
                },
                None => *games,
            };
            let local = match (frame_of[b], parent) {
                (Some(f), None) => frames[f].rest,
                (Some(f), Some(p)) => model[p].inverse() * below_above * model_rest(f),
                (None, _) => affine(game.pose.rest().get(b)),
            };
            let (scale, rotation, translation) = local.to_scale_rotation_translation();
            let rest = BonePose {
                rotation: rotation.normalize(),
                translation,
                scale,
            };
            let local = affine(rest);
            model.push(parent.map_or(local, |p| model[p] * local));
            rests.push(rest);
            parents.push(parent);
        }
        let pose = PoseSkeleton::new(&parents, &rests).ok()?;
        // The game's parents where the model hangs its bones as the game does (shared).
        let parents = match parents[..] == game.parents[..] {
            true => game.parents.clone(),
            false => parents.into(),
        };
        // The game's bones, names and targets, shared with its skeleton.
        Some((
            Self {
                pose,
                basis: Some(Basis::new(lift, above)),
                targets: game.targets.clone(),
                names: game.names.clone(),
                parents,
                rig: None,
                file_nodes: Vec::new(),
            },
            rest_only,
        ))
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

    /// Each bone's model-space rest with the basis (Bevy's axes).
    fn placed(s: &CrowdSkeleton) -> Vec<Affine3A> {
        let mut model: Vec<Affine3A> = Vec::new();
        for (b, p) in s.parents.iter().enumerate() {
            let local = affine(s.pose.rest().get(b));
            let basis = s.basis.map_or(Affine3A::IDENTITY, |b| b.affine);
            model.push(p.map_or(basis * local, |p| model[p] * local));
        }
        model
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

    /// Every bone rests where `GtaModel` puts its frame: the clump's root above the root bone
    /// (in the basis), a frame between two bones folded in, a bone the model lacks at the
    /// game's rest; a frame under another bone than the game's is reported.
    #[test]
    fn a_models_rests_place_the_games_bones_where_its_frames_are() {
        for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
            let built_in = CrowdSkeleton::new(game);
            let n = built_in.parents.len();
            let mut frames = frames(&built_in, 1.1);
            // A frame between the last bone and its parent (a nub, not animated): 2 cm along x.
            let last = frames.len() - 1;
            frames.push(ModelFrame {
                target: None,
                parent: frames[last].parent,
                rest: Affine3A::from_translation(Vec3::X * 0.02),
            });
            frames[last].parent = Some(frames.len() - 1);
            let (s, rest_only) = CrowdSkeleton::with_model_rests(&built_in, &frames, 0.9).unwrap();
            assert!(rest_only.regrafted.is_empty(), "{game:?}: {rest_only:?}");
            // (The nub is not turned.)
            assert!(
                rest_only.turned_between.is_empty(),
                "{game:?}: {rest_only:?}"
            );
            let (ours, theirs) = (placed(&s), frames_placed(&frames, 0.9));
            for b in 0..n {
                let d = apart(ours[b], theirs[1 + b]);
                assert!(d < 1e-5, "{game:?} bone {b}: {d}");
            }
            // The turned root is in the basis; the root bone's own rest is its frame's.
            let root = s.pose.rest().get(0);
            let want = built_in.pose.rest().get(0).translation * 1.1;
            assert!(root.translation.distance(want) < 1e-6, "{game:?}");

            // A bone the model lacks (the last): the game's rest under the model's parent.
            let mut lacking = frames.clone();
            lacking[last].target = None;
            let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &lacking, 0.9).unwrap();
            let (rest, games) = (s.pose.rest().get(n - 1), built_in.pose.rest().get(n - 1));
            assert!(rest.translation.distance(games.translation) < 1e-6);

            // The last bone's frame hung under the root bone's: hung under the root bone, and
            // placed at rest where the frame is.
            let mut moved = frames.clone();
            moved[last].parent = Some(1);
            let (s, rest_only) = CrowdSkeleton::with_model_rests(&built_in, &moved, 0.9).unwrap();
            assert!(rest_only.regrafted.is_empty(), "{game:?}: {rest_only:?}");
            assert_eq!(s.parents[n - 1], Some(0), "{game:?}");
            let d = apart(placed(&s)[n - 1], frames_placed(&moved, 0.9)[last]);
            assert!(d < 1e-5, "{game:?}: {d}");

            // ... under a bone later in the game's order (the last but one, hung in turn under
            // the root): the game's parent kept, and reported.
            let mut late = frames.clone();
            late[last - 1].parent = Some(1);
            late[last - 2].parent = Some(last - 1);
            let (_, rest_only) = CrowdSkeleton::with_model_rests(&built_in, &late, 0.9).unwrap();
            assert_eq!(
                rest_only.regrafted,
                [built_in.names[n - 3].clone()],
                "{game:?}"
            );

            // The nub turned a quarter about x: the last bone is reported.
            let mut turned = frames.clone();
            let nub = turned.len() - 1;
            turned[nub].rest = Affine3A::from_rotation_translation(
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
                Vec3::X * 0.02,
            );
            let (_, rest_only) = CrowdSkeleton::with_model_rests(&built_in, &turned, 0.9).unwrap();
            assert_eq!(
                rest_only.turned_between,
                [built_in.names[n - 1].clone()],
                "{game:?}"
            );

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
        }
    }

    /// Posed (each bone turned by its own key, as a clip turns it), a model's bones are where
    /// `GtaModel`'s frames are: where the model lacks a bone between two others (the game's
    /// forearm, say), or hangs a bone under another bone than the game does, each bone moves
    /// with the bones above it in the model. Hung on the game's hierarchy (as before), the
    /// same models were right at rest only.
    #[test]
    fn a_models_own_hierarchy_moves_its_bones_as_its_frames_when_posed() {
        // Bone b's key: a turn of its own about an axis of its own.
        let key = |b: usize| {
            let axis = Vec3::new(1.0, 0.3 * b as f32, -0.5).normalize();
            Quat::from_axis_angle(axis, 0.2 + 0.07 * b as f32)
        };
        // The crowd skeleton's bones posed: each at its rest's offset, turned by its key.
        let posed = |s: &CrowdSkeleton| {
            let basis = s.basis.map_or(Affine3A::IDENTITY, |b| b.affine);
            let mut model: Vec<Affine3A> = Vec::new();
            for (b, p) in s.parents.iter().enumerate() {
                let rest = s.pose.rest().get(b);
                let local = Affine3A::from_rotation_translation(key(b), rest.translation);
                model.push(p.map_or(basis * local, |p| model[p] * local));
            }
            model
        };
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
            let mut moved = frames.clone();
            let last = frames.len() - 1;
            moved[last].parent = Some(1);
            for (what, model, left_out) in
                [("lacking", &lacking, Some(middle)), ("moved", &moved, None)]
            {
                let (s, rest_only) =
                    CrowdSkeleton::with_model_rests(&built_in, model, 0.9).unwrap();
                let right = rest_only.regrafted.is_empty() && rest_only.turned_between.is_empty();
                assert!(right, "{game:?} {what}: {rest_only:?}");
                let (ours, theirs) = (posed(&s), frames_posed(model, &bone_of(model)));
                for b in (0..n).filter(|b| Some(*b) != left_out) {
                    let d = apart(ours[b], theirs[1 + b]);
                    assert!(
                        d < 1e-4,
                        "{game:?} {what}: bone {b} {:?} is {d} off",
                        built_in.names[b]
                    );
                }
                // On the game's hierarchy, the bone the model hangs elsewhere moves with the
                // wrong bones.
                let mut game_hung = CrowdSkeleton::with_model_rests(&built_in, model, 0.9)
                    .unwrap()
                    .0;
                game_hung.parents = built_in.parents.clone();
                let wrong = match left_out {
                    Some(_) => child,
                    None => n - 1,
                };
                let rests = (0..n).map(|b| {
                    // (Its rest as the game's hierarchy would place it.)
                    let p = built_in.parents[b];
                    let want = placed(&s)[b];
                    let local = p.map_or(want, |p| placed(&s)[p].inverse() * want);
                    let (scale, rotation, translation) = local.to_scale_rotation_translation();
                    BonePose {
                        rotation,
                        translation,
                        scale,
                    }
                });
                let rests: Vec<BonePose> = rests.collect();
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
                game_hung.pose = PoseSkeleton::new(&built_in.parents, &fixed).unwrap();
                let d = apart(posed(&game_hung)[wrong], theirs[1 + wrong]);
                assert!(
                    d > 1e-2,
                    "{game:?} {what}: on the game's hierarchy only {d} off"
                );
            }
        }
    }

    /// A model made from the game's own table, lifted as the game's skeleton is, rests as the
    /// game's skeleton does; one of other proportions, or lifted otherwise, does not.
    #[test]
    fn a_model_of_the_games_table_rests_as_its_skeleton() {
        for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
            let built_in = CrowdSkeleton::new(game);
            let lift = built_in.basis.unwrap().affine.translation.y;
            let mut same = frames(&built_in, 1.0);
            same[0].rest = Affine3A::IDENTITY;
            let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &same, lift).unwrap();
            assert!(s.rests_as(&built_in), "{game:?}");
            let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &same, lift + 0.01).unwrap();
            assert!(!s.rests_as(&built_in), "{game:?}: lifted 1 cm more");
            let mut longer = frames(&built_in, 1.001);
            longer[0].rest = Affine3A::IDENTITY;
            let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &longer, lift).unwrap();
            assert!(!s.rests_as(&built_in), "{game:?}: 0.1 % longer");
        }
    }
}
