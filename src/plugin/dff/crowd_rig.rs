//! A DFF ped's own proportions in the crowd: a crowd character wearing a [`CrowdModel`] poses
//! its game's bones at the model's rests and on its hierarchy
//! ([`CrowdSkeleton::with_model_rests`]), as `GtaModel` poses the model with bone entities.
//! Peds differ from the built-in tables (§4.3 of the IFP notes: every GTA III ped model carries
//! its own offsets), and a clip keys rotations, not lengths.

use super::{CrowdModel, Dff};
use crate::plugin::skeletal::{
    CrowdCharacter, CrowdRig, CrowdSkeleton, CrowdSkeletons, ModelFrame, RestOnly,
};
use crate::skeleton::GtaGame;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use std::sync::Arc;

/// Per (model, game), the crowd skeleton of the model's rests; `None` where the model has no
/// frame of the game's root bone (its characters pose the game's skeleton).
type ModelRigs = HashMap<(AssetId<Dff>, GtaGame), Option<Arc<CrowdSkeleton>>>;

/// Gives each crowd character wearing a loaded DFF model the skeleton of its model's rests (its
/// [`CrowdRig`]), made once per model and game; a character whose model has not loaded (or
/// failed to) poses its game's skeleton meanwhile. Looks at every such character when a model
/// is added, changes or goes, else only at those whose model or game may have changed. A character
/// also wearing a glTF model is the glTF wing's.
#[allow(clippy::type_complexity)]
pub(crate) fn rig_dff_crowds(
    mut commands: Commands,
    models: Res<Assets<Dff>>,
    skeletons: Res<CrowdSkeletons>,
    mut events: MessageReader<AssetEvent<Dff>>,
    mut rigs: Local<ModelRigs>,
    mut taken_off: RemovedComponents<CrowdModel>,
    mut characters: Query<(Entity, &CrowdCharacter, &CrowdModel, Option<&mut CrowdRig>)>,
    changed: Query<
        Entity,
        (
            With<CrowdModel>,
            Or<(Changed<CrowdModel>, Changed<CrowdCharacter>)>,
        ),
    >,
    mut undressed: Query<(&mut CrowdCharacter, Has<CrowdRig>), Without<CrowdModel>>,
    #[cfg(feature = "gltf")] gltf_worn: Query<(), With<crate::plugin::CrowdGltfModel>>,
) {
    #[cfg(feature = "gltf")]
    let wears_gltf = |e: Entity| gltf_worn.contains(e);
    #[cfg(not(feature = "gltf"))]
    let wears_gltf = |_: Entity| false;
    let mut every = false;
    for event in events.read() {
        match event {
            AssetEvent::Modified { id } | AssetEvent::Removed { id } => {
                rigs.retain(|(model, _), _| model != id);
                every = true;
            }
            // (Seen in the frame the model is added: this system runs after Bevy's asset events
            // are sent, so the rig is there before the crowd is first drawn in the model.)
            AssetEvent::Added { .. } => every = true,
            AssetEvent::LoadedWithDependencies { .. } | AssetEvent::Unused { .. } => {}
        }
    }
    // A character that takes its model off poses its game's skeleton again (bound anew).
    for entity in taken_off.read() {
        if wears_gltf(entity) {
            continue;
        }
        if let Ok((mut character, true)) = undressed.get_mut(entity) {
            character.set_changed();
            commands.entity(entity).try_remove::<CrowdRig>();
        }
    }
    let looked_at: Vec<Entity> = match every {
        true => characters.iter().map(|c| c.0).collect(),
        false => changed.iter().collect(),
    };
    for entity in looked_at {
        let Ok((entity, character, model, rig)) = characters.get_mut(entity) else {
            continue;
        };
        if wears_gltf(entity) {
            continue;
        }
        let key = (model.0.id(), character.game);
        let wanted = match rigs.get(&key) {
            Some(made) => made.clone(),
            None => match models.get(key.0) {
                Some(dff) => {
                    let game = skeletons.get(character.game);
                    let made = model_rig(dff, game, character.game, &model.0);
                    rigs.insert(key, made.clone());
                    made
                }
                // Not loaded (yet): looked at again when it is.
                None => None,
            },
        };
        match (wanted, rig) {
            (Some(wanted), Some(mut rig)) => {
                if !rig.0.as_ref().is_some_and(|r| Arc::ptr_eq(r, &wanted)) {
                    rig.0 = Some(wanted);
                }
            }
            (Some(wanted), None) => {
                commands.entity(entity).insert(CrowdRig(Some(wanted)));
            }
            (None, Some(_)) => {
                commands.entity(entity).try_remove::<CrowdRig>();
                // (Bound anew on the game's skeleton: a rig taken away is no change it sees.)
                let mut undo = commands.entity(entity);
                undo.queue(|mut e: EntityWorldMut| {
                    if let Some(mut c) = e.get_mut::<CrowdCharacter>() {
                        c.set_changed();
                    }
                });
            }
            (None, None) => {}
        }
    }
}

/// The crowd skeleton of `dff`'s rests (its first clump that has bones) for `game`'s bones
/// (`built_in`: its skeleton), or `built_in` itself where the model rests as it does (a model
/// made from the game's tables: the characters share its clips' layouts, and pose exactly as
/// they would without the model).
fn model_rig(
    dff: &Dff,
    built_in: &Arc<CrowdSkeleton>,
    game: GtaGame,
    model: &Handle<Dff>,
) -> Option<Arc<CrowdSkeleton>> {
    if dff.game != game {
        // (Its bones may still match the game's through the aliases: a III ped's `Swaist` is
        // SA's pelvis.)
        warn!(
            "crowd characters of {game:?} wear {:?}, a {:?} model: they pose {game:?}'s bones; a character of {:?} poses the model's own",
            model.path(),
            dff.game,
            dff.game,
        );
    }
    let clump = dff.crowd_clump()?;
    let frames: Vec<ModelFrame> = (clump.frames.iter())
        .map(|f| ModelFrame {
            target: f.target,
            parent: f.parent,
            rest: f.rest.compute_affine(),
        })
        .collect();
    let Some((skeleton, rest_only)) =
        CrowdSkeleton::with_model_rests(built_in, &frames, clump.lift)
    else {
        warn!(
            "crowd characters of {game:?} wearing {:?} pose the built-in skeleton: the model has no frame of its root bone, or its frames loop",
            model.path()
        );
        return None;
    };
    let RestOnly {
        root_under,
        repeated,
    } = rest_only;
    if let Some(above) = root_under {
        warn!(
            "crowd characters of {game:?} wearing {:?}: the root bone hangs under {above:?}; posed as the root all the same (right at rest only: it does not follow {above:?}'s keys)",
            model.path(),
        );
    }
    if !repeated.is_empty() {
        warn!(
            "crowd characters of {game:?} wearing {:?}: {repeated:?} have more than one frame each; only the first follows the clip (the others, and what hangs on them, stay at rest under the bone above them)",
            model.path(),
        );
    }
    if skeleton.rests_as(built_in) {
        return Some(built_in.clone());
    }
    Some(Arc::new(skeleton))
}
