//! The skins of a glTF model worn by crowd characters ([`CrowdGltfModel`]), posed by each
//! character: every skinned mesh node's skin matrices ([`CrowdSkinPose`]), as the DFF wing
//! poses a [`CrowdModel`](crate::plugin::CrowdModel)'s.

use super::CrowdGltfModel;
use crate::plugin::skeletal::{
    CrowdPose, CrowdRig, CrowdSkeleton, CrowdSkinPose, SkinBinding, SkinJoint, pose_palettes,
};
use bevy::asset::AssetId;
use bevy::gltf::{Gltf, GltfNode, GltfSkin};
use bevy::math::Affine3A;
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The bindings of one file on one rig, the rig held so that its address is not reused while
/// the key names it.
type Bound = (Arc<CrowdSkeleton>, Vec<SkinBinding>);

/// Fills the [`CrowdSkinPose`] of every posed crowd character that wears a glTF model: per
/// skinned mesh node of the file, its skin's joints (nodes of the character's rig) posed times
/// their inverse bind matrices.
#[allow(clippy::type_complexity)]
pub(crate) fn pose_gltf_crowd_skins(
    files: Res<Assets<Gltf>>,
    nodes: Res<Assets<GltfNode>>,
    skins: Res<Assets<GltfSkin>>,
    inverse_bindposes: Res<Assets<SkinnedMeshInverseBindposes>>,
    mut bindings: Local<HashMap<(AssetId<Gltf>, usize), Bound>>,
    mut changed: MessageReader<AssetEvent<Gltf>>,
    mut characters: Query<(&CrowdGltfModel, &CrowdRig, &CrowdPose, &mut CrowdSkinPose)>,
) {
    for event in changed.read() {
        if let AssetEvent::Modified { id } | AssetEvent::Removed { id } = event {
            bindings.retain(|(file, _), _| file != id);
        }
    }
    // The bindings of files and rigs not seen before (a pass over the characters with no work
    // per bone), then the palettes, spread over the cores as the crowd's poses are.
    for (model, rig, pose, _) in &characters {
        let Some(rig) = rig.0.as_ref().filter(|_| !pose.bones.is_empty()) else {
            continue;
        };
        let key = (model.model.id(), Arc::as_ptr(rig) as usize);
        if bindings.contains_key(&key) {
            continue;
        }
        let Some(file) = files.get(&model.model) else {
            continue;
        };
        if let Some(bound) = bind(file, rig, &nodes, &skins, &inverse_bindposes) {
            bindings.insert(key, (rig.clone(), bound));
        }
    }
    let bindings = &*bindings;
    characters
        .par_iter_mut()
        .for_each(|(model, rig, pose, mut skin)| {
            let Some(rig) = &rig.0 else { return };
            let key = (model.model.id(), Arc::as_ptr(rig) as usize);
            if let Some((_, binding)) = bindings.get(&key) {
                pose_palettes(binding, pose, &mut skin);
            }
        });
}

/// The skinned mesh nodes of `file` (a node with a mesh and a skin), in the file's node order,
/// their skins' joints matched to `rig`'s bones by node (a joint that is no bone of the rig
/// follows the root bone); `None` until every node, skin and inverse bind matrix has loaded.
fn bind(
    file: &Gltf,
    rig: &CrowdSkeleton,
    nodes: &Assets<GltfNode>,
    skins: &Assets<GltfSkin>,
    inverse_bindposes: &Assets<SkinnedMeshInverseBindposes>,
) -> Option<Vec<SkinBinding>> {
    let bone_of = rig.bones_by_file_node();
    let mut skinned: Vec<(&GltfNode, &GltfSkin)> = Vec::new();
    for handle in &file.nodes {
        let node = nodes.get(handle)?;
        if let (Some(_), Some(skin)) = (&node.mesh, &node.skin) {
            skinned.push((node, skins.get(skin)?));
        }
    }
    skinned.sort_by_key(|(node, _)| node.index);
    let mut out = Vec::with_capacity(skinned.len());
    for (node, skin) in skinned {
        let ibms = inverse_bindposes.get(&skin.inverse_bind_matrices)?;
        // (Per joint and inverse bind matrix, as the palettes pair them.)
        let mut joints: Vec<SkinJoint> = Vec::with_capacity(skin.joints.len());
        for (joint, ibm) in skin.joints.iter().zip(ibms.iter()) {
            let joint = nodes.get(joint)?;
            let bone = bone_of.get(joint.index).copied().flatten().unwrap_or(0);
            joints.push((Some(bone), Affine3A::from_mat4(*ibm)));
        }
        out.push(SkinBinding {
            mesh: node.index,
            joints,
        });
    }
    Some(out)
}
