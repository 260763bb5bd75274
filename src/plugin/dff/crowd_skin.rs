//! The DFF model a crowd character wears ([`CrowdModel`]), and its skins posed by the character:
//! each skinned atomic's skin matrices ([`CrowdSkinPose`]).

use super::Dff;
use crate::plugin::skeletal::{
    CrowdCharacter, CrowdPose, CrowdSkeletons, CrowdSkinPose, SkinBinding, pose_palettes,
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
/// name as the games match names.
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
            mesh: a,
            bones,
            inverse_binds: ibms.iter().map(|m| Affine3A::from_mat4(*m)).collect(),
        });
    }
    Some(out)
}
