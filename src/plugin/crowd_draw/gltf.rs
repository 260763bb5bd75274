//! glTF characters in the drawn crowd (the `gltf` feature): a [`CrowdCharacter`] wearing a
//! [`CrowdGltfModel`] is drawn by [`super::CrowdDrawPlugin`]'s instanced skinning as a DFF ped
//! is, its joints the file's nodes as its rig poses them. Where the device has no storage
//! buffers (or [`super::CrowdDrawSettings::bevy_skinning`] asks for it), the file's scene is
//! spawned under the character instead and its nodes follow the pose by name.

use super::parts::{BuildParams, Pieces};
use super::state::{CrowdDressed, DrawnModel, Dresser, ModelKey, Opening};
use crate::plugin::CrowdGltfModel;
use crate::plugin::skeletal::{BLOCK_BONES, CrowdCharacter, CrowdRig, CrowdSkeleton, SkinJoint};
use bevy::asset::AssetPath;
use bevy::ecs::system::SystemParam;
use bevy::gltf::{Gltf, GltfMesh, GltfNode, GltfSkin};
use bevy::math::Affine3A;
use bevy::mesh::morph::{MeshMorphWeights, MorphWeights};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot};
use std::sync::Arc;

/// The parts of loaded glTF files a drawn model is built from.
#[derive(SystemParam)]
pub(super) struct GltfParts<'w> {
    files: Res<'w, Assets<Gltf>>,
    nodes: Res<'w, Assets<GltfNode>>,
    meshes: Res<'w, Assets<GltfMesh>>,
    skins: Res<'w, Assets<GltfSkin>>,
    scenes: Res<'w, Assets<WorldAsset>>,
}

/// A dressed crowd character wearing a glTF model.
pub(super) type Dressed = (
    Entity,
    &'static CrowdGltfModel,
    &'static CrowdRig,
    &'static CrowdDressed,
);

/// The crowd characters wearing glTF models, as [`dress_gltf_crowd`] looks at them.
#[derive(SystemParam)]
pub(super) struct GltfWearers<'w, 's> {
    removed: RemovedComponents<'w, 's, CrowdGltfModel>,
    undressed: Query<
        'w,
        's,
        (Entity, &'static CrowdGltfModel, &'static CrowdRig),
        (With<CrowdCharacter>, Without<CrowdDressed>),
    >,
    dressed: Query<'w, 's, Dressed>,
    restyled: Query<'w, 's, Dressed, Or<(Changed<CrowdGltfModel>, Changed<CrowdRig>)>>,
}

/// How the scene Bevy spawns shows one (node, mesh) pair.
struct Shown {
    /// The weights its morph targets are drawn at (the glTF mesh's defaults, as Bevy's loader
    /// sets them).
    morph_weights: Vec<f32>,
    /// Its material: the file's, or the copy Bevy's loader makes with the other faces culled
    /// for a node whose scale mirrors it.
    material: Option<Handle<StandardMaterial>>,
    /// Whether its entity's transform in the scene mirrors it (the scales up its chain flip an
    /// odd number of axes), which turns its tangents over in Bevy's renderer.
    mirrored: bool,
}

/// The key of a glTF model drawn on `rig`.
pub(super) fn key(model: &CrowdGltfModel, rig: &Arc<CrowdSkeleton>) -> ModelKey {
    ModelKey::Gltf(model.model.id(), Arc::as_ptr(rig) as usize)
}

/// Gives every crowd character wearing a loaded glTF model (its rig made) its parts, and takes
/// them away when the model, its rig or the file change, or the model goes.
pub(super) fn dress_gltf_crowd(
    mut dresser: Dresser,
    files: GltfParts,
    mut events: MessageReader<AssetEvent<Gltf>>,
    mut wearers: GltfWearers,
) {
    let Opening { fallback, changed } = dresser.open(&mut events);
    let suspects = if changed.is_empty() {
        wearers.restyled.iter().collect::<Vec<_>>()
    } else {
        wearers.dressed.iter().collect()
    };
    for (entity, model, rig, dressed) in suspects {
        let same = rig
            .0
            .as_ref()
            .is_some_and(|r| dressed.model == key(model, r));
        if changed.contains(&model.model.id()) || !same {
            dresser.undress(entity, dressed);
        }
    }
    dresser.undress_removed(wearers.removed.read());
    let bones = dresser.draw.bone_buffer(&mut dresser.build.buffers);
    for (entity, model, rig) in &wearers.undressed {
        let id = model.model.id();
        let draw = &mut *dresser.draw;
        if draw.undrawable.contains(&id.untyped()) {
            continue;
        }
        // The rig is made once the file and its parts have loaded (a file that fails to load
        // is warned of by the rig's system, once).
        let (Some(rig), Some(file)) = (&rig.0, files.files.get(id)) else {
            continue;
        };
        let key = key(model, rig);
        if fallback {
            let Some(scene) = file.default_scene.clone().or(file.scenes.first().cloned()) else {
                warn!(
                    "crowd characters wearing {:?} are not drawn: the file has no scene",
                    model.model.path()
                );
                draw.undrawable.insert(id.untyped());
                continue;
            };
            let scene = WorldAssetRoot(scene);
            draw.dress_fallback(&mut dresser.commands, entity, scene, key, true);
            continue;
        }
        let drawn = match draw.models.get(&key) {
            Some(drawn) => drawn.clone(),
            None => {
                // A rig of more bones than a slot holds widens every slot.
                draw.stride =
                    (draw.stride).max((rig.len() as u32).next_multiple_of(BLOCK_BONES as u32));
                let built = build_gltf_model(
                    file,
                    &model.model,
                    rig,
                    &files,
                    &dresser.assets,
                    &bones,
                    draw.stride,
                    &mut dresser.build,
                );
                let Some(drawn) = draw.keep_built(key, built, model.model.path()) else {
                    continue;
                };
                drawn
            }
        };
        draw.dress(&mut dresser.commands, entity, &drawn, key);
    }
}

/// A glTF file's parts for the crowd: per node with a mesh, its joint table (a skinned mesh's
/// skin joints, matched to the rig's bones by node, with their inverse bind matrices; a mesh on
/// a node without a skin moves with that node) and per primitive a copy of its mesh with the
/// crowd's joint attributes and the file's `StandardMaterial` for it; the copies of equal
/// materials merged into one part with one [`super::CrowdMaterial`]. As glTF says (and Bevy's `SkinnedMesh` does), a skinned mesh
/// ignores its own node's transform.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_gltf_model(
    file: &Gltf,
    handle: &Handle<Gltf>,
    rig: &Arc<CrowdSkeleton>,
    parts_of: &GltfParts,
    assets: &AssetServer,
    bones: &Handle<ShaderBuffer>,
    stride: u32,
    build: &mut BuildParams,
) -> Result<DrawnModel, String> {
    const NOT_LOADED: &str = "a part of the file is not loaded";
    let path = handle.path().ok_or("the file has no asset path")?;
    // Each node's bone, by the node's index in the file.
    let bone_of = rig.bones_by_file_node();
    let bone = |node: &GltfNode| bone_of.get(node.index).copied().flatten();
    // The `StandardMaterial` Bevy's loader made for a primitive's material ("…/std").
    let standard = |material: Option<&Handle<bevy::gltf::GltfMaterial>>| {
        let label = match material {
            Some(m) => m
                .path()
                .and_then(|p| p.label().map(str::to_owned))
                .ok_or("a material has no asset path")?,
            None => "DefaultMaterial".to_owned(),
        };
        let at: AssetPath = path.clone().with_label(format!("{label}/std"));
        assets
            .get_handle::<StandardMaterial>(&at)
            .ok_or("a material was not made a StandardMaterial (is Bevy's PBR plugin added?)")
    };
    // The (node, mesh) pairs of the scene Bevy spawns (the default, else the first), which is
    // what the fallback draws: a file of several scenes shows that one only. A primitive's
    // entity is a child of its node's, which bears the node's name (as `GltfNode::name`).
    let shown: Option<HashMap<(String, AssetId<Mesh>), Shown>> = file
        .default_scene
        .as_ref()
        .or(file.scenes.first())
        .map(|scene| {
            let scene = parts_of.scenes.get(scene).ok_or(NOT_LOADED)?;
            let world = &scene.world;
            Ok::<_, &str>(
                (world.iter_entities())
                    .filter_map(|e| {
                        let mesh = e.get::<Mesh3d>()?.0.id();
                        let node = world.get::<Name>(e.get::<ChildOf>()?.parent())?;
                        let morph_weights = match e.get::<MeshMorphWeights>() {
                            Some(MeshMorphWeights::Value { weights }) => weights.clone(),
                            Some(MeshMorphWeights::Reference(node)) => world
                                .get::<MorphWeights>(*node)
                                .map_or_else(Vec::new, |w| w.weights().to_vec()),
                            None => Vec::new(),
                        };
                        let material = e.get::<MeshMaterial3d<StandardMaterial>>();
                        // The sign of the entity's transform in the scene: its own and its
                        // ancestors' (a rotation's determinant is 1).
                        let chain = std::iter::successors(Some(e.id()), |&e| {
                            world.get::<ChildOf>(e).map(ChildOf::parent)
                        });
                        let flips = (chain.take(world.entities().len() as usize + 1))
                            .filter_map(|e| world.get::<Transform>(e))
                            .filter(|t| t.scale.x * t.scale.y * t.scale.z < 0.0)
                            .count();
                        let shown = Shown {
                            morph_weights,
                            material: material.map(|m| m.0.clone()),
                            mirrored: flips % 2 == 1,
                        };
                        Some(((node.as_str().to_owned(), mesh), shown))
                    })
                    .collect(),
            )
        })
        .transpose()?;
    let shown_as = |node: &GltfNode, mesh: &Handle<Mesh>| {
        (shown.as_ref()).map(|s| s.get(&(node.name.clone(), mesh.id())))
    };
    // (A file without scenes: every node's.)
    let in_scene =
        |node: &GltfNode, mesh: &Handle<Mesh>| !matches!(shown_as(node, mesh), Some(None));
    let mut pieces = Pieces::default();
    let mut nodes: Vec<&GltfNode> = Vec::with_capacity(file.nodes.len());
    for handle in &file.nodes {
        nodes.push(parts_of.nodes.get(handle).ok_or(NOT_LOADED)?);
    }
    nodes.sort_by_key(|n| n.index);
    for node in nodes {
        let Some(mesh) = &node.mesh else {
            continue;
        };
        let mesh = parts_of.meshes.get(mesh).ok_or(NOT_LOADED)?;
        if !mesh.primitives.iter().any(|p| in_scene(node, &p.mesh)) {
            continue;
        }
        let joints: Vec<SkinJoint> = match &node.skin {
            Some(skin) => {
                let skin = parts_of.skins.get(skin).ok_or(NOT_LOADED)?;
                let ibms = build
                    .ibms
                    .get(&skin.inverse_bind_matrices)
                    .ok_or(NOT_LOADED)?;
                if ibms.len() != skin.joints.len() {
                    return Err("a skin has not one inverse bind matrix per joint".into());
                }
                let mut joints = Vec::with_capacity(skin.joints.len());
                for (joint, ibm) in skin.joints.iter().zip(ibms.iter()) {
                    let joint = parts_of.nodes.get(joint).ok_or(NOT_LOADED)?;
                    let bone = bone(joint).ok_or("a skin's joint is no node of the rig")?;
                    joints.push((Some(bone), Affine3A::from_mat4(*ibm)));
                }
                joints
            }
            None => vec![(
                Some(bone(node).ok_or("a mesh's node is no node of the rig")?),
                Affine3A::IDENTITY,
            )],
        };
        let mut meshes = Vec::with_capacity(mesh.primitives.len());
        let mut weights = &[][..];
        let mut mirrored = false;
        for primitive in mesh.primitives.iter().filter(|p| in_scene(node, &p.mesh)) {
            let shown = shown_as(node, &primitive.mesh).flatten();
            // The material Bevy gives the primitive's entity: the file's, or (under a mirroring
            // node) its copy that culls the other faces.
            let material = match shown.and_then(|s| s.material.clone()) {
                Some(material) => material,
                None => standard(primitive.material.as_ref())?,
            };
            meshes.push((primitive.mesh.clone(), material));
            // One node's weights drive all its mesh's primitives.
            if let Some(shown) = shown.filter(|_| weights.is_empty()) {
                weights = &shown.morph_weights;
            }
            // (And one node's transform places them all.)
            mirrored |= shown.is_some_and(|s| s.mirrored);
        }
        // (A glTF skin's bind space is the file's: its lengths are the scene's.)
        let skinned = node.skin.is_some();
        pieces.add(&joints, &meshes, weights, skinned, 1.0, mirrored, build)?;
    }
    if pieces.is_empty() {
        return Err("it has no mesh to draw".into());
    }
    let (reach, still) = (pieces.reach, pieces.still);
    Ok(DrawnModel {
        parts: pieces.parts(bones, stride, build)?,
        reach,
        still,
        _rig: Some(rig.clone()),
    })
}
