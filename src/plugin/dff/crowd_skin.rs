//! The DFF model a crowd character wears ([`CrowdModel`]), and its skins posed by the character:
//! each skinned atomic's skin matrices ([`CrowdSkinPose`]).

use super::spawn::clump_basis;
use super::{Dff, DffClump};
use crate::plugin::skeletal::{
    CrowdCharacter, CrowdPose, CrowdSkeletons, CrowdSkinPose, SkinBinding, SkinJoint, pose_palettes,
};
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::AssetId;
use bevy::math::Affine3A;
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

/// The DFF model a [`CrowdCharacter`] wears (its first clump that has bones). With
/// [`crate::plugin::CrowdDrawPlugin`] the character is drawn in it by instanced GPU skinning. The skin's
/// joints are matched to the character's bones as clips bind to bones: by HAnim bone id, else by
/// name as the games match names. A joint that is no bone of the game's (a mod's ponytail)
/// stays at rest under the nearest bone above it, as on the model spawned with bone entities,
/// and one with no bone above it (a frame of the model's own above its root bone) stays where
/// it rests in the character.
///
/// Once the model has loaded, the character poses its game's bones at the model's own rests
/// (peds differ from the built-in tables: a clip keys rotations, the model gives the bones'
/// lengths), as [`GtaModel`](super::GtaModel) poses the model with bone entities. The bones,
/// their order and names stay the game's ([`crate::plugin::CrowdPose`] lists them so).
///
/// Add [`CrowdSkinPose`] as well to get the skin matrices on the CPU each frame, after the
/// character is posed (one palette per skinned atomic, in the clump's atomic order).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/sa_ped.ifp#walk");
///     let ped = assets.load("characters/ped.dff");
///     commands.spawn((CrowdCharacter::new(GtaGame::Sa, walk), CrowdModel(ped)));
/// }
/// ```
#[derive(Component, Debug, Clone)]
pub struct CrowdModel(pub Handle<Dff>);

/// Fills the [`CrowdSkinPose`] of every posed crowd character that wears a model.
pub(crate) fn pose_crowd_skins(
    models: Res<Assets<Dff>>,
    inverse_bindposes: Res<Assets<SkinnedMeshInverseBindposes>>,
    skeletons: Res<CrowdSkeletons>,
    mut bindings: Local<HashMap<(AssetId<Dff>, GtaGame), Vec<SkinBinding>>>,
    mut dropped: MessageReader<AssetEvent<Dff>>,
    mut characters: Query<(&CrowdCharacter, &CrowdModel, &CrowdPose, &mut CrowdSkinPose)>,
) {
    for event in dropped.read() {
        if let AssetEvent::Modified { id } | AssetEvent::Removed { id } = event {
            bindings.retain(|(model, _), _| model != id);
        }
    }
    // The bindings of models and games not seen before (a pass over the characters with no
    // work per bone), then the palettes, spread over the cores as the crowd's poses are.
    for (character, model, pose, _) in &characters {
        let key = (model.0.id(), character.game);
        if pose.bones.is_empty() || bindings.contains_key(&key) {
            continue;
        }
        let Some(dff) = models.get(&model.0) else {
            continue;
        };
        let targets = skeletons.targets(character.game);
        if let Some(binding) = bind(dff, targets, &inverse_bindposes) {
            bindings.insert(key, binding);
        }
    }
    let bindings = &*bindings;
    characters
        .par_iter_mut()
        .for_each(|(character, model, pose, mut skin)| {
            if let Some(binding) = bindings.get(&(model.0.id(), character.game)) {
                pose_palettes(binding, pose, &mut skin);
            }
        });
}

/// The skinned atomics of `dff`'s first clump that has bones, their joints matched to the bones
/// whose animation targets are `targets`; `None` until every skin's inverse bind matrices have
/// loaded.
///
/// A joint whose frame is one of those bones (the first frame of the bone's target, as the
/// crowd skeleton takes it) is that bone. Any other joint (a bone of the model's own that no
/// game has, as a mod's ponytail; a second frame of a game's bone) is posed as its bone entity
/// is: no clip keys it, so it stays at rest under the nearest bone above its frame, and its
/// skin matrix is that bone's pose times the rest transforms between times its inverse bind
/// matrix. A joint with no bone above its frame (a frame of the model's own above its root
/// bone) stays where its frame rests in the character, as its entity does: its skin matrix is
/// that rest times its inverse bind matrix. (Both by [`frame_joint`].)
pub(crate) fn bind(
    dff: &Dff,
    targets: &[AnimationTargetId],
    inverse_bindposes: &Assets<SkinnedMeshInverseBindposes>,
) -> Option<Vec<SkinBinding>> {
    let Some(clump) = dff.crowd_clump() else {
        return Some(Vec::new());
    };
    let bones = bone_frames(clump, targets);
    let mut out = Vec::new();
    for (a, atomic) in clump.atomics.iter().enumerate() {
        let Some(skin) = &atomic.skin else {
            continue;
        };
        let ibms = inverse_bindposes.get(&skin.inverse_bindposes)?;
        let joints = (skin.joints.iter())
            .zip(ibms.iter().map(|m| Affine3A::from_mat4(*m)))
            .map(|(&frame, ibm)| {
                let (bone, m) = frame_joint(clump, frame, &bones);
                (bone, m * ibm)
            })
            .collect();
        out.push(SkinBinding { mesh: a, joints });
    }
    Some(out)
}

/// Per frame of `clump`, the crowd bone it is (by the bones' animation `targets`): the first
/// frame of each bone's target, as the crowd skeleton takes it
/// (`CrowdSkeleton::with_model_rests`). A later frame of the same target is no bone.
pub(crate) fn bone_frames(clump: &DffClump, targets: &[AnimationTargetId]) -> Vec<Option<usize>> {
    let mut out = vec![None; clump.frames.len()];
    for (bone, target) in targets.iter().enumerate() {
        if let Some(f) = clump.frames.iter().position(|f| f.target == Some(*target)) {
            out[f].get_or_insert(bone);
        }
    }
    out
}

/// How what hangs on `frame` moves, as it moves on the model spawned with bone entities (the
/// joint of a skin joint or a rigid part on it, before its own inverse bind matrix): with the
/// nearest frame at or above it that is a bone (`bones`, from [`bone_frames`]), through the
/// rest transforms of the frames from there down to `frame` (no clip keys them: they stay at
/// rest); or, where no frame above it is a bone, not at all: it stays where `frame` rests in
/// the character ([`frame_in_character`]).
pub(crate) fn frame_joint(clump: &DffClump, frame: usize, bones: &[Option<usize>]) -> SkinJoint {
    bone_above(clump, frame, bones).map_or_else(
        || (None, frame_in_character(clump, frame)),
        |(bone, offset)| (Some(bone), offset),
    )
}

/// The nearest bone at or above `frame` and the rest transforms from it down to `frame`; `None`
/// where there is none.
fn bone_above(
    clump: &DffClump,
    frame: usize,
    bones: &[Option<usize>],
) -> Option<(usize, Affine3A)> {
    let mut offset = Affine3A::IDENTITY;
    let mut at = frame;
    // (At most as many steps as frames: a cycle ends the walk, as a parent out of range does.)
    for _ in 0..clump.frames.len() {
        if let Some(bone) = bones.get(at).copied().flatten() {
            return Some((bone, offset));
        }
        let f = clump.frames.get(at)?;
        offset = f.rest.compute_affine() * offset;
        at = f.parent?;
    }
    None
}

/// Where `frame` rests in the character's space (Bevy's axes): the model's basis, as the model
/// is spawned with bone entities (GTA's Z-up turned to Y-up, lifted by the clump's `lift`),
/// times its rest in the model ([`frame_model`]). What hangs on a frame with no bone above it
/// stays there while the character plays.
pub(crate) fn frame_in_character(clump: &DffClump, frame: usize) -> Affine3A {
    clump_basis(clump).compute_affine() * frame_model(clump, frame)
}

/// `frame`'s rest transform in the model: the rest transforms up its chain together. Its largest
/// scale is how much longer a length in the frame's space is in the model's (1 for a model of
/// rotations); where its determinant is negative, the frame mirrors what hangs on it.
pub(crate) fn frame_model(clump: &DffClump, frame: usize) -> Affine3A {
    let mut model = Affine3A::IDENTITY;
    let mut at = Some(frame);
    for _ in 0..=clump.frames.len() {
        let Some(f) = at.and_then(|a| clump.frames.get(a)) else {
            break;
        };
        model = f.rest.compute_affine() * model;
        at = f.parent;
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::dff::DffFrame;

    fn frame(parent: Option<usize>, along: f32, target: Option<AnimationTargetId>) -> DffFrame {
        DffFrame {
            name: String::new(),
            parent,
            rest: Transform::from_xyz(along, 0.0, 0.0).with_rotation(Quat::from_rotation_z(0.3)),
            bone_id: None,
            target,
        }
    }

    /// A frame is a bone only as the first frame of the bone's target; what hangs on any other
    /// frame (a bone no game has, a second frame of a game's bone) moves with the nearest bone
    /// above it, through the rests between; on a frame with no bone above, or in a cycle, or
    /// under a parent out of range, it moves with none, staying where the frame rests in the
    /// character.
    #[test]
    fn a_frame_moves_with_the_nearest_bone_at_or_above_it_whose_first_frame_it_is() {
        let target = |n: &str| AnimationTargetId::from_name(&Name::new(n.to_owned()));
        let (a, b, own) = (target("a"), target("b"), target("ponytail"));
        let frames = vec![
            frame(None, 0.0, None),         // 0: the clump's root
            frame(Some(0), 1.0, Some(a)),   // 1: bone 0
            frame(Some(1), 2.0, Some(b)),   // 2: bone 1
            frame(Some(2), 3.0, Some(own)), // 3: a bone of the model's own
            frame(Some(3), 4.0, Some(a)),   // 4: a second frame of bone 0
            frame(Some(6), 5.0, None),      // 5, 6: a cycle
            frame(Some(5), 6.0, None),
            frame(Some(99), 7.0, Some(own)), // 7: under a parent out of range
        ];
        let clump = DffClump {
            scene: Handle::default(),
            frames,
            order: Vec::new(),
            atomics: Vec::new(),
            bones: Vec::new(),
            lift: 0.0,
        };
        let bones = bone_frames(&clump, &[a, b]);
        assert_eq!(
            bones,
            [None, Some(0), Some(1), None, None, None, None, None]
        );
        let rest = |f: usize| clump.frames[f].rest.compute_affine();
        assert_eq!(
            frame_joint(&clump, 1, &bones),
            (Some(0), Affine3A::IDENTITY)
        );
        assert_eq!(
            frame_joint(&clump, 2, &bones),
            (Some(1), Affine3A::IDENTITY)
        );
        assert_eq!(frame_joint(&clump, 3, &bones), (Some(1), rest(3)));
        // (Bone 1's pose · rest 3 · rest 4 is where frame 4 rests when bone 1 does.)
        let (bone, offset) = frame_joint(&clump, 4, &bones);
        assert_eq!(bone, Some(1));
        assert!(offset.abs_diff_eq(rest(3) * rest(4), 1e-6));
        for f in [0, 5, 6, 7, 8] {
            assert_eq!(
                frame_joint(&clump, f, &bones),
                (None, frame_in_character(&clump, f)),
                "frame {f}"
            );
        }
        // Frame 0, the clump's root, stays where the model's basis puts it: GTA's Z-up turned
        // to Bevy's Y-up (the clump lifts by 0), after its own rest.
        let (_, still) = frame_joint(&clump, 0, &bones);
        let basis = Affine3A::from_quat(crate::coords::GTA_TO_BEVY);
        assert!(still.abs_diff_eq(basis * rest(0), 1e-6));
        // Frame 4 in the model: the rests from the root down.
        let model = rest(0) * rest(1) * rest(2) * rest(3) * rest(4);
        assert!(frame_model(&clump, 4).abs_diff_eq(model, 1e-5));
        // (A cycle ends the walk.)
        let _ = frame_model(&clump, 5);
    }
}
