//! What a crowd character says of how it is drawn, passed on to the meshes that draw it.
//!
//! Bevy reads `NotShadowCaster`, `NotShadowReceiver` and `RenderLayers` on mesh entities, and
//! does not pass them down a hierarchy. A drawn crowd character's meshes are entities the crowd
//! makes: its parts (children of the character), or where it is drawn the Bevy way
//! ([`CrowdFallback`]) the meshes of its child model, spawned after it. So each of the three, on
//! the character, is given to those meshes as the character has it: when the character is
//! dressed (its parts made anew), when a fallback model's mesh (or glTF scene) is spawned, when
//! the component is inserted on the character or removed from it, and (`RenderLayers`, which
//! has a value) when it changes in place.
//!
//! A part given `RenderLayers` (or relieved of them) while the parts are culled on the GPU is
//! noted in [`CrowdDraw::relayered`]: Bevy 0.19.1's GPU culling takes a mesh's layers when it
//! first culls it and never again (`RenderGpuCulledEntities::update` stores a changed set of
//! layers but lists the mesh in no view anew), so the render world lists the noted parts as
//! changed there (`views`).
//!
//! Observers do the inserting and removing, so a crowd whose characters carry none of the three
//! costs nothing a frame; the one system (`RenderLayers` changed in place) runs only where a
//! dressed character has `RenderLayers`.

use super::state::{CrowdDraw, CrowdDressed, CrowdFallback};
use bevy::camera::visibility::RenderLayers;
use bevy::light::{NotShadowCaster, NotShadowReceiver};
use bevy::prelude::*;

/// Registers the observers (the system is added with the plugin's others).
pub(super) fn observe(app: &mut App) {
    #[cfg(feature = "gltf")]
    app.add_observer(pass_on_to_fallback_scene);
    app.add_observer(pass_on_to_dressed)
        .add_observer(pass_on_to_fallback_mesh)
        .add_observer(pass_on_inserted::<NotShadowCaster>)
        .add_observer(pass_on_inserted::<NotShadowReceiver>)
        .add_observer(take_back_removed::<NotShadowCaster>)
        .add_observer(take_back_removed::<NotShadowReceiver>)
        .add_observer(take_back_layers);
}

/// The mesh entities that draw a dressed character: its parts, or (drawn the Bevy way) every
/// mesh below its model.
fn meshes_of(
    dressed: &CrowdDressed,
    fallback: bool,
    children: &Query<&Children>,
    meshes: &Query<(), With<Mesh3d>>,
) -> Vec<Entity> {
    match fallback {
        false => dressed.parts.clone(),
        true => (dressed.parts.iter())
            .flat_map(|&model| children.iter_descendants(model))
            .filter(|&e| meshes.contains(e))
            .collect(),
    }
}

/// The three, as a character has them (`None`: it has not).
type Passed = (
    Option<&'static NotShadowCaster>,
    Option<&'static NotShadowReceiver>,
    Option<&'static RenderLayers>,
);

/// Gives `to` what a character has of the three.
fn give(
    commands: &mut Commands,
    to: Entity,
    (caster, receiver, layers): (
        Option<&NotShadowCaster>,
        Option<&NotShadowReceiver>,
        Option<&RenderLayers>,
    ),
) {
    let Ok(mut e) = commands.get_entity(to) else {
        return;
    };
    if let Some(c) = caster {
        e.try_insert(c.clone());
    }
    if let Some(r) = receiver {
        e.try_insert(r.clone());
    }
    if let Some(l) = layers {
        e.try_insert(l.clone());
    }
}

/// A character dressed (its parts made, or its fallback model spawned): its parts take what it
/// has. (A fallback model's meshes, spawned later, take it in [`pass_on_to_fallback_mesh`].)
fn pass_on_to_dressed(
    dressed: On<Insert, CrowdDressed>,
    characters: Query<(&CrowdDressed, Has<CrowdFallback>, Passed)>,
    mut commands: Commands,
) {
    let Ok((dressed, fallback, passed)) = characters.get(dressed.event_target()) else {
        return;
    };
    if fallback {
        return;
    }
    for &part in &dressed.parts {
        give(&mut commands, part, passed);
    }
}

/// A mesh spawned below a character drawn the Bevy way (its fallback model's): it takes what the
/// character has. The nearest dressed character above the mesh is its character. (Every mesh
/// spawned in the app comes here: where no character is drawn the Bevy way, it looks no
/// further.)
fn pass_on_to_fallback_mesh(
    added: On<Add, Mesh3d>,
    fallbacks: Query<(), With<CrowdFallback>>,
    parents: Query<&ChildOf>,
    characters: Query<(Has<CrowdFallback>, Passed), With<CrowdDressed>>,
    mut commands: Commands,
) {
    if fallbacks.is_empty() {
        return;
    }
    let mesh = added.event_target();
    let Some((fallback, passed)) = parents
        .iter_ancestors(mesh)
        .find_map(|a| characters.get(a).ok())
    else {
        return;
    };
    if fallback {
        give(&mut commands, mesh, passed);
    }
}

/// A glTF character's fallback scene spawned (`WorldInstanceReady` on its model): its meshes
/// take what the character has. (A scene's entities get their components one by one, their
/// parents among them, so [`pass_on_to_fallback_mesh`] may not find the character above a mesh
/// as it is added.)
#[cfg(feature = "gltf")]
fn pass_on_to_fallback_scene(
    ready: On<bevy::world_serialization::WorldInstanceReady>,
    parents: Query<&ChildOf>,
    characters: Query<(&CrowdDressed, Has<CrowdFallback>, Passed)>,
    children: Query<&Children>,
    meshes: Query<(), With<Mesh3d>>,
    mut commands: Commands,
) {
    let model = ready.event_target();
    let Some((dressed, true, passed)) = parents
        .get(model)
        .ok()
        .and_then(|p| characters.get(p.parent()).ok())
    else {
        return;
    };
    if !dressed.parts.contains(&model) {
        return;
    }
    for mesh in meshes_of(dressed, true, &children, &meshes) {
        give(&mut commands, mesh, passed);
    }
}

/// `C` inserted on a dressed character: its meshes take it.
fn pass_on_inserted<C: Component + Clone>(
    inserted: On<Insert, C>,
    characters: Query<(&C, &CrowdDressed, Has<CrowdFallback>)>,
    children: Query<&Children>,
    meshes: Query<(), With<Mesh3d>>,
    mut commands: Commands,
) {
    let Ok((c, dressed, fallback)) = characters.get(inserted.event_target()) else {
        return;
    };
    for mesh in meshes_of(dressed, fallback, &children, &meshes) {
        commands.entity(mesh).try_insert(c.clone());
    }
}

/// `C` removed from a dressed character: its meshes lose it.
fn take_back_removed<C: Component>(
    removed: On<Remove, C>,
    characters: Query<(&CrowdDressed, Has<CrowdFallback>)>,
    children: Query<&Children>,
    meshes: Query<(), With<Mesh3d>>,
    mut commands: Commands,
) {
    let Ok((dressed, fallback)) = characters.get(removed.event_target()) else {
        return;
    };
    for mesh in meshes_of(dressed, fallback, &children, &meshes) {
        commands.entity(mesh).try_remove::<C>();
    }
}

/// Whether a dressed character has `RenderLayers` ([`pass_on_layers`]'s run condition: a
/// crowd without them does not run it).
pub(super) fn any_dressed_with_layers(
    characters: Query<(), (With<RenderLayers>, With<CrowdDressed>)>,
) -> bool {
    !characters.is_empty()
}

/// A dressed character's `RenderLayers` inserted or changed in place: its meshes take the new
/// layers, and are drawn anew ([`draw_anew`]); its parts are noted as relayered.
pub(super) fn pass_on_layers(
    characters: Query<(&RenderLayers, &CrowdDressed, Has<CrowdFallback>), Changed<RenderLayers>>,
    children: Query<&Children>,
    meshes: Query<(), With<Mesh3d>>,
    mut draw: ResMut<CrowdDraw>,
    mut commands: Commands,
) {
    for (layers, dressed, fallback) in &characters {
        for mesh in meshes_of(dressed, fallback, &children, &meshes) {
            let mut mesh = commands.entity(mesh);
            mesh.try_insert(layers.clone());
            mesh.queue_silenced(draw_anew);
        }
        note_relayered(&mut draw, dressed, fallback);
    }
}

/// Marks a mesh whose layers changed as changed (its `Mesh3d`), so that Bevy specialises and
/// queues it again in every view. Without it, Bevy 0.19.1 can leave such a mesh out of a light's
/// shadow views it enters while a camera sees it throughout. Measured on lavapipe, a ped moved
/// from layer 1 back to layer 0 (the sun's) while shown: Bevy's own `SkinnedMesh` ped then drew
/// 159 pixels more than 8/255 off its first picture, part of its shadow missing; the crowd's
/// ped lacked all of its shadow (1,531 pixels), and with this, none.
fn draw_anew(mut mesh: EntityWorldMut) {
    if let Some(mut m) = mesh.get_mut::<Mesh3d>() {
        m.set_changed();
    }
}

/// `RenderLayers` removed from a dressed character: its meshes lose them, and are drawn anew
/// ([`draw_anew`]); its parts are noted as relayered.
fn take_back_layers(
    removed: On<Remove, RenderLayers>,
    characters: Query<(&CrowdDressed, Has<CrowdFallback>)>,
    children: Query<&Children>,
    meshes: Query<(), With<Mesh3d>>,
    mut draw: ResMut<CrowdDraw>,
    mut commands: Commands,
) {
    let Ok((dressed, fallback)) = characters.get(removed.event_target()) else {
        return;
    };
    for mesh in meshes_of(dressed, fallback, &children, &meshes) {
        let mut mesh = commands.entity(mesh);
        mesh.try_remove::<RenderLayers>();
        mesh.queue_silenced(draw_anew);
    }
    note_relayered(&mut draw, dressed, fallback);
}

/// Notes a character's parts as relayered (their `RenderLayers` given, changed or taken off),
/// where they are culled on the GPU, for the render world to have Bevy follow their layers
/// (`views`). (Not its fallback's meshes: Bevy culls those on the CPU.)
fn note_relayered(draw: &mut CrowdDraw, dressed: &CrowdDressed, fallback: bool) {
    if !fallback && draw.parts_gpu_culled {
        draw.relayered.extend_from_slice(&dressed.parts);
    }
}
