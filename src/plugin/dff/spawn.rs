//! [`GtaModel`]: a `.dff` clump spawned as an entity hierarchy whose bones IFP clips drive.

use super::asset::{Dff, DffClump};
use crate::coords::GTA_TO_BEVY;
use crate::plugin::skeletal::{RigBone, SkeletonBones};
use bevy::animation::AnimatedBy;
use bevy::camera::visibility::DynamicSkinnedMeshBounds;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;

/// Put on an entity to give it a GTA model from a `.dff` file: a child "gta basis" entity
/// turns GTA's Z-up into Bevy's Y-up (and, for a ped, lifts the model so that its lowest joint
/// rests on the entity's origin), under it one entity per frame, named as the file names it, in
/// its rest pose, and the meshes: a skinned mesh per material of a skinned atomic, plain meshes
/// under their frames for the rest (props, vehicles, rigid parts).
///
/// The bones are named and tagged like the built-in [`crate::plugin::GtaSkeleton`]'s, so
/// [`crate::plugin::SkeletalClip`] and [`crate::plugin::PlayAnimation`] on the same entity play
/// IFP clips on the model with no retarget step. Bones rest at the model's own bind pose, except
/// the root bone's rotation: a ped file binds `Normal` at a 120° turn that no clip is relative
/// to, so it rests at the turn SA clips give it, as on the built-in skeleton. The entity gets an
/// `AnimationPlayer` and a [`SkeletonBones`] (the bones in HAnim node order).
///
/// When the asset is reloaded the hierarchy is spawned again.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let ped = assets.load("characters/ped.dff"); // ped.txd beside it gives the textures
///     let walk = assets.load("anims/ped.ifp#walk_civi");
///     commands.spawn((GtaModel::new(ped), SkeletalClip::new(walk)));
/// }
/// ```
#[derive(Component, Debug, Clone, Reflect)]
#[reflect(Component)]
#[require(Transform, Visibility)]
pub struct GtaModel {
    /// The model.
    pub model: Handle<Dff>,
    /// Which clump of the file (most files hold one).
    pub clump: usize,
}

impl GtaModel {
    /// The first clump of `model`.
    pub fn new(model: Handle<Dff>) -> Self {
        Self { model, clump: 0 }
    }
}

/// What [`GtaModel`] spawned: the basis entity (despawned to spawn again) and the asset.
#[derive(Component, Debug)]
pub(crate) struct SpawnedModel {
    basis: Entity,
    model: AssetId<Dff>,
    clump: usize,
}

/// Spawns (or spawns again) the hierarchy of every [`GtaModel`] whose asset is loaded and not
/// spawned yet, changed, or reloaded.
pub(crate) fn spawn_models(
    mut commands: Commands,
    models: Query<(Entity, &GtaModel, Option<&SpawnedModel>)>,
    assets: Res<Assets<Dff>>,
    mut events: MessageReader<AssetEvent<Dff>>,
) {
    let reloaded: Vec<AssetId<Dff>> = events
        .read()
        .filter_map(|e| match e {
            AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    for (entity, model, spawned) in &models {
        let id = model.model.id();
        let fresh = spawned
            .is_some_and(|s| s.model == id && s.clump == model.clump && !reloaded.contains(&id));
        if fresh {
            continue;
        }
        let Some(asset) = assets.get(id) else {
            continue;
        };
        let Some(clump) = asset.clumps.get(model.clump).cloned() else {
            warn!(
                "GtaModel: the model has {} clumps, no clump {}",
                asset.clumps.len(),
                model.clump
            );
            continue;
        };
        if let Some(s) = spawned {
            commands.entity(s.basis).despawn();
        }
        let clump_index = model.clump;
        commands.queue(move |world: &mut World| {
            if world.get_entity(entity).is_err() {
                return;
            }
            let basis = spawn_clump(world, entity, &clump);
            world.entity_mut(entity).insert(SpawnedModel {
                basis,
                model: id,
                clump: clump_index,
            });
        });
    }
}

/// Where a clump's frames hang in the entity that shows it: GTA's Z-up turned to Bevy's Y-up,
/// lifted by the clump's `lift`.
pub(crate) fn clump_basis(clump: &DffClump) -> Transform {
    Transform {
        translation: Vec3::Y * clump.lift,
        rotation: GTA_TO_BEVY,
        scale: Vec3::ONE,
    }
}

/// Spawns a clump under `root` (which gets an `AnimationPlayer`, a [`SkeletonBones`] and a
/// `Name` when it has none); returns the basis entity.
pub(crate) fn spawn_clump(world: &mut World, root: Entity, clump: &DffClump) -> Entity {
    let basis = world
        .spawn((
            Name::new("gta basis"),
            clump_basis(clump),
            Visibility::default(),
            ChildOf(root),
        ))
        .id();
    let has_graph = world.entity(root).contains::<AnimationGraphHandle>();
    let mut entities = vec![Entity::PLACEHOLDER; clump.frames.len()];
    for &i in &clump.order {
        let frame = &clump.frames[i];
        let parent = frame
            .parent
            .map(|p| entities[p])
            .filter(|e| *e != Entity::PLACEHOLDER)
            .unwrap_or(basis);
        let mut e = world.spawn((
            Name::new(frame.name.clone()),
            frame.rest,
            Visibility::default(),
            ChildOf(parent),
        ));
        if let Some(target) = frame.target {
            e.insert((
                RigBone {
                    index: None,
                    rest: frame.rest,
                    target,
                },
                target,
            ));
            // Bevy's player drives it only while the root has a graph (`give_bones_to_graph`).
            if has_graph {
                e.insert(AnimatedBy(root));
            }
        }
        entities[i] = e.id();
    }
    for atomic in &clump.atomics {
        let frame = entities[atomic.frame];
        let visibility = if atomic.hidden {
            Visibility::Hidden
        } else {
            Visibility::Inherited
        };
        for (mesh, material) in &atomic.parts {
            let mut e = world.spawn((
                Mesh3d(mesh.clone()),
                MeshMaterial3d(material.clone()),
                Transform::default(),
                visibility,
                ChildOf(frame),
            ));
            if let Some(skin) = &atomic.skin {
                e.insert((
                    SkinnedMesh {
                        inverse_bindposes: skin.inverse_bindposes.clone(),
                        joints: skin.joints.iter().map(|&j| entities[j]).collect(),
                    },
                    DynamicSkinnedMeshBounds,
                ));
            }
        }
    }
    let bones: Vec<Entity> = clump.bones.iter().map(|&b| entities[b]).collect();
    let mut root_entity = world.entity_mut(root);
    let has_player = root_entity.contains::<AnimationPlayer>();
    let has_name = root_entity.contains::<Name>();
    root_entity.insert(SkeletonBones(bones));
    if !has_player {
        root_entity.insert(AnimationPlayer::default());
    }
    if !has_name {
        root_entity.insert(Name::new("gta model"));
    }
    basis
}
