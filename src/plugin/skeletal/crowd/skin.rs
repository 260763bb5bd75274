//! The skin matrices of a crowd character's model, posed by the character: per skinned mesh of
//! the model, per skin joint, the joint's pose in the character's space times its inverse bind
//! matrix, ready for a skinning shader. The DFF wing fills them for a `CrowdModel`, the glTF wing
//! for a `CrowdGltfModel`.

use super::{CrowdPose, KeepCrowdPose};
use bevy::math::Affine3A;
use bevy::prelude::*;

/// The skin matrices of a crowd character's model (a `CrowdModel` with the `dff` feature, a
/// `CrowdGltfModel` with the `gltf` feature) posed by its character: one
/// [`SkinPalette`] per skinned mesh of the model. Empty until the model and the character's clip
/// have loaded. Computed only for characters that have this component (add it beside the
/// model); `CrowdDrawPlugin` does not need them.
///
/// They cost about as much as the pose itself (10,000 SA peds wearing the sample ped: about
/// 6 ms more a frame on two cores, `docs/performance.md`): use them for your own skinning or to
/// check a renderer. They are made from the character's [`CrowdPose`], which this component
/// keeps ([`KeepCrowdPose`]).
#[derive(Component, Debug, Clone, Default)]
#[require(KeepCrowdPose)]
pub struct CrowdSkinPose {
    /// One per skinned mesh: a DFF model's skinned atomics in the clump's atomic order, a glTF
    /// file's skinned mesh nodes in the file's node order.
    pub palettes: Vec<SkinPalette>,
}

/// The skin matrices of one skinned mesh.
#[derive(Debug, Clone, Default)]
pub struct SkinPalette {
    /// Which mesh of the model: a DFF atomic's index in its clump (`DffClump::atomics`), or a
    /// glTF node's index in its file (`GltfNode::index`).
    pub mesh: usize,
    /// Per skin joint, in the skin's order: the joint's pose in the character's space times its
    /// inverse bind matrix. A vertex's position in the character's space is the sum of these,
    /// weighted by its joint weights, applied to its position in the mesh. Bevy's
    /// `SkinnedMesh` computes the same with the joints' world transforms. A DFF skin's joint
    /// that is no bone of the character (a bone of the model's own, which no clip keys) stays
    /// at rest under the nearest bone above it, as its bone entity does, and one with no bone
    /// above it (a frame of the model's own above its root bone) stays where it rests in the
    /// character; a glTF skin's joint that is no node of the character's rig follows the root
    /// bone.
    pub joints: Vec<Affine3A>,
}

/// A joint of a crowd character's model: its bone in the crowd skeleton and its inverse bind
/// matrix, the joint's skin matrix being the bone's pose times that matrix; or, with no bone
/// (a DFF frame with no bone above it: it stays put in the character's space), the skin matrix
/// itself.
pub(crate) type SkinJoint = (Option<usize>, Affine3A);

/// How one skinned mesh's joints map to a crowd skeleton's bones, and its inverse bind matrices:
/// worked out once per model and skeleton.
#[derive(Debug, Clone)]
pub(crate) struct SkinBinding {
    /// [`SkinPalette::mesh`].
    pub(crate) mesh: usize,
    /// Per skin joint, in the skin's order (a bone past the pose's end is taken for the root
    /// bone).
    pub(crate) joints: Vec<SkinJoint>,
}

/// `skin`'s palettes, one per binding, from the character's `pose`.
pub(crate) fn pose_palettes(bindings: &[SkinBinding], pose: &CrowdPose, skin: &mut CrowdSkinPose) {
    let Some(&root) = pose.bones.first() else {
        return;
    };
    skin.palettes
        .resize_with(bindings.len(), SkinPalette::default);
    for (palette, b) in skin.palettes.iter_mut().zip(bindings) {
        palette.mesh = b.mesh;
        palette.joints.clear();
        palette
            .joints
            .extend(b.joints.iter().map(|&(bone, m)| match bone {
                Some(bone) => pose.bones.get(bone).copied().unwrap_or(root) * m,
                None => m,
            }));
    }
}
