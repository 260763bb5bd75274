//! DFF peds in the drawn crowd ([`crate::plugin::CrowdModel`]): dressing the characters, and a
//! model's parts built from its first clump that has bones.

use super::parts::{BuildParams, Pieces};
use super::state::{CrowdDressed, DrawnModel, Dresser, ModelKey, Opening};
use crate::plugin::dff::{CrowdModel, Dff, GtaModel, bind, bone_frames, frame_joint, frame_model};
use crate::plugin::skeletal::CrowdCharacter;
use crate::plugin::skeletal::{SkinBinding, SkinJoint};
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;

/// Gives every crowd character wearing a loaded DFF model its parts (and takes them away when
/// the model changes, reloads or goes).
#[allow(clippy::type_complexity)]
pub(super) fn dress_crowd(
    mut dresser: Dresser,
    models: Res<Assets<Dff>>,
    mut events: MessageReader<AssetEvent<Dff>>,
    mut removed: RemovedComponents<CrowdModel>,
    undressed: Query<(Entity, &CrowdCharacter, &CrowdModel), Without<CrowdDressed>>,
    dressed: Query<(Entity, &CrowdCharacter, &CrowdModel, &CrowdDressed)>,
    restyled: Query<
        (Entity, &CrowdCharacter, &CrowdModel, &CrowdDressed),
        Or<(Changed<CrowdModel>, Changed<CrowdCharacter>)>,
    >,
    // A character wearing a glTF model too is posed on its rig, and dressed in that alone.
    #[cfg(feature = "gltf")] gltf_worn: Query<(), With<crate::plugin::CrowdGltfModel>>,
) {
    #[cfg(feature = "gltf")]
    let wears_gltf = |e: Entity| gltf_worn.contains(e);
    #[cfg(not(feature = "gltf"))]
    let wears_gltf = |_: Entity| false;
    let undressed = undressed.iter().filter(|(e, _, _)| !wears_gltf(*e));
    // Characters whose model changed, reloaded or went are undressed (and dressed again below,
    // from the next frame).
    let Opening { fallback, changed } = dresser.open(&mut events);
    // Every dressed character where a model changed; else only those whose model or game may
    // have (not the whole crowd every frame).
    let suspects = if changed.is_empty() {
        restyled.iter().collect::<Vec<_>>()
    } else {
        dressed.iter().collect()
    };
    // (A character dressed in a glTF model is the glTF wing's.)
    let suspects = suspects
        .into_iter()
        .filter(|s| matches!(s.3.model, ModelKey::Dff(..)));
    for (entity, character, model, dressed) in suspects {
        let key = ModelKey::Dff(model.0.id(), character.game);
        if changed.contains(&model.0.id()) || dressed.model != key || wears_gltf(entity) {
            dresser.undress(entity, dressed);
        }
    }
    dresser.undress_removed(removed.read());
    if fallback {
        for (entity, character, model) in undressed {
            let id = model.0.id();
            if dresser.draw.undrawable.contains(&id.untyped()) || dresser.failed_to_load(&model.0) {
                continue;
            }
            let key = ModelKey::Dff(id, character.game);
            dresser.draw.dress_fallback(
                &mut dresser.commands,
                entity,
                GtaModel::new(model.0.clone()),
                key,
                false,
            );
        }
        return;
    }
    let bones = dresser.draw.bone_buffer(&mut dresser.build.buffers);
    for (entity, character, model) in undressed {
        let id = model.0.id();
        if dresser.draw.undrawable.contains(&id.untyped()) {
            continue;
        }
        let key = ModelKey::Dff(id, character.game);
        let drawn = match dresser.draw.models.get(&key) {
            Some(drawn) => drawn.clone(),
            None => {
                let Some(dff) = models.get(&model.0) else {
                    dresser.failed_to_load(&model.0);
                    continue;
                };
                let targets = dresser.skeletons.targets(character.game);
                let Some(binding) = bind(dff, targets, &dresser.build.ibms) else {
                    continue;
                };
                let stride = dresser.draw.stride;
                let built = build_model(dff, &binding, targets, &bones, stride, &mut dresser.build);
                let Some(drawn) = dresser.draw.keep_built(key, built, model.0.path()) else {
                    continue;
                };
                drawn
            }
        };
        dresser
            .draw
            .dress(&mut dresser.commands, entity, &drawn, key);
    }
}

/// A model's parts for the crowd: per drawn atomic of its first clump that has bones, its joints,
/// and per material a copy of the mesh with the crowd's joint attributes; the copies of equal
/// materials merged into one part with one [`CrowdMaterial`] ([`Pieces::parts`]). A skinned
/// atomic's joints are its skin's ([`bind`]); a rigid one (a cap on the head, a GTA III ped's
/// parts) has one joint: the nearest bone at or above its frame, with the rest transforms of the
/// frames between as its "inverse bind" matrix, or, with no bone above its frame, none: it
/// stays where its frame rests in the character, as its entity does on the model spawned with
/// bone entities ([`frame_joint`]).
pub(super) fn build_model(
    dff: &Dff,
    binding: &[SkinBinding],
    targets: &[AnimationTargetId],
    bones: &Handle<ShaderBuffer>,
    stride: u32,
    build: &mut BuildParams,
) -> Result<DrawnModel, String> {
    let clump = dff.crowd_clump().ok_or("it has no bones")?;
    let bones_of_frames = bone_frames(clump, targets);
    let mut pieces = Pieces::default();
    for (a, atomic) in clump.atomics.iter().enumerate() {
        if atomic.hidden {
            continue;
        }
        let skin = binding.iter().find(|b| b.mesh == a);
        let joints: Vec<SkinJoint> = match skin {
            Some(b) => b.joints.clone(),
            None => vec![frame_joint(clump, atomic.frame, &bones_of_frames)],
        };
        let frame = frame_model(clump, atomic.frame).matrix3;
        let scale = (frame.x_axis.length())
            .max(frame.y_axis.length())
            .max(frame.z_axis.length());
        let mirrored = frame.determinant() < 0.0;
        let skinned = skin.is_some();
        pieces.add(&joints, &atomic.parts, &[], skinned, scale, mirrored, build)?;
    }
    if pieces.is_empty() {
        return Err("it has no atomic to draw".into());
    }
    let (reach, still) = (pieces.reach, pieces.still);
    Ok(DrawnModel {
        parts: pieces.parts(bones, stride, build)?,
        reach,
        still,
        #[cfg(feature = "gltf")]
        _rig: None,
    })
}
