//! A DFF model's skins posed by a crowd character: each skinned atomic's skin matrices (joint
//! pose times inverse bind matrix), in the character's space, ready for a skinning shader. The
//! first part of drawing crowds (see the repository's `docs/design/crowd-gpu.md`).

use super::Dff;
use crate::plugin::skeletal::{CrowdCharacter, CrowdPose, CrowdSkeletons};
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
/// name as the games match names.
///
/// Once the model has loaded, the character poses its game's bones at the model's own rests
/// (peds differ from the built-in tables: a clip keys rotations, the model gives the bones'
/// lengths), as [`GtaModel`](super::GtaModel) poses the model with bone entities. The bones,
/// their order and names stay the game's ([`crate::plugin::CrowdPose`] lists them so).
///
/// Add [`CrowdSkinPose`] as well to get the skin matrices on the CPU each frame, after the
/// character is posed. They cost about as much as the pose itself (10,000 SA peds wearing the
/// sample ped: about 6 ms more a frame on two cores, `docs/performance.md`): use them for your
/// own skinning or to check a renderer.
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

/// The skin matrices of a [`CrowdModel`] posed by its character: one [`SkinPalette`] per skinned
/// atomic of the model. Empty until the model and the character's clip have loaded. Computed
/// only for characters that have this component (add it beside the [`CrowdModel`]).
#[derive(Component, Debug, Clone, Default)]
pub struct CrowdSkinPose {
    /// One per skinned atomic, in the clump's atomic order.
    pub palettes: Vec<SkinPalette>,
}

/// The skin matrices of one skinned atomic.
#[derive(Debug, Clone, Default)]
pub struct SkinPalette {
    /// The atomic's index in its clump ([`super::DffClump::atomics`]).
    pub atomic: usize,
    /// Per skin joint, in the skin's order: the joint's pose in the character's space times its
    /// inverse bind matrix. A vertex's position in the character's space is the sum of these,
    /// weighted by its joint weights, applied to its position in the mesh. Bevy's
    /// `SkinnedMesh` computes the same with the joints' world transforms. A joint no bone of
    /// the character matches follows the character's root bone.
    pub joints: Vec<Affine3A>,
}

/// How one skinned atomic's joints map to a crowd skeleton's bones, and its inverse bind
/// matrices: worked out once per (model, game).
#[derive(Debug, Clone)]
pub(crate) struct SkinBinding {
    pub(crate) atomic: usize,
    pub(crate) bones: Vec<usize>,
    pub(crate) inverse_binds: Vec<Affine3A>,
}

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
            let Some(binding) = bindings.get(&(model.0.id(), character.game)) else {
                return;
            };
            let Some(&root) = pose.bones.first() else {
                return;
            };
            let skin = &mut *skin;
            skin.palettes
                .resize_with(binding.len(), SkinPalette::default);
            for (palette, b) in skin.palettes.iter_mut().zip(binding) {
                palette.atomic = b.atomic;
                palette.joints.clear();
                palette.joints.extend(
                    (b.bones.iter().zip(&b.inverse_binds))
                        .map(|(&bone, ibm)| pose.bones.get(bone).copied().unwrap_or(root) * *ibm),
                );
            }
        });
}

/// The skinned atomics of `dff`'s first clump that has bones, their joints matched to the bones
/// whose animation targets are `targets`; `None` until every skin's inverse bind matrices have
/// loaded.
pub(crate) fn bind(
    dff: &Dff,
    targets: &[AnimationTargetId],
    inverse_bindposes: &Assets<SkinnedMeshInverseBindposes>,
) -> Option<Vec<SkinBinding>> {
    let Some(clump) = dff.clumps.iter().find(|c| !c.bones.is_empty()) else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    for (a, atomic) in clump.atomics.iter().enumerate() {
        let Some(skin) = &atomic.skin else {
            continue;
        };
        let ibms = inverse_bindposes.get(&skin.inverse_bindposes)?;
        let bones = skin
            .joints
            .iter()
            .map(|&frame| {
                let target = clump.frames.get(frame).and_then(|f| f.target);
                target
                    .and_then(|t| targets.iter().position(|x| *x == t))
                    .unwrap_or(0)
            })
            .collect();
        out.push(SkinBinding {
            atomic: a,
            bones,
            inverse_binds: ibms.iter().map(|m| Affine3A::from_mat4(*m)).collect(),
        });
    }
    Some(out)
}
