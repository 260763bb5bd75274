//! The crowd's material: Bevy's `StandardMaterial` extended with a vertex shader that skins
//! from the crowd's bone buffer, and the mesh attributes it reads.

use bevy::mesh::{MeshVertexAttribute, MeshVertexBufferLayoutRef};
use bevy::pbr::{
    ExtendedMaterial, MaterialExtension, MaterialExtensionKey, MaterialExtensionPipeline,
};
use bevy::prelude::*;
use bevy::render::render_resource::{
    AsBindGroup, RenderPipelineDescriptor, SpecializedMeshPipelineError, VertexFormat,
};
use bevy::render::storage::ShaderBuffer;
use bevy::shader::ShaderRef;

pub(super) const SHADER: &str = "embedded://rigplay/plugin/crowd_draw/crowd_draw.wgsl";

/// A crowd mesh's joint indices: the DFF mesh's `ATTRIBUTE_JOINT_INDEX` under an id of its own, so
/// that Bevy's mesh pipeline does not take the mesh for a `SkinnedMesh` (shader location 14).
pub const ATTRIBUTE_CROWD_JOINT_INDEX: MeshVertexAttribute = MeshVertexAttribute::new(
    "CrowdJointIndex",
    0x7269_6770_6c61_7901,
    VertexFormat::Uint16x4,
);
/// A crowd mesh's joint weights (shader location 15); see [`ATTRIBUTE_CROWD_JOINT_INDEX`].
pub const ATTRIBUTE_CROWD_JOINT_WEIGHT: MeshVertexAttribute = MeshVertexAttribute::new(
    "CrowdJointWeight",
    0x7269_6770_6c61_7902,
    VertexFormat::Float32x4,
);

/// The material of a drawn crowd character's part: the DFF's own `StandardMaterial` (textures,
/// colours, alpha mode as the DFF loader gives them), skinned by [`CrowdSkin`].
pub type CrowdMaterial = ExtendedMaterial<StandardMaterial, CrowdSkin>;

/// What the crowd's vertex shader skins from (`crowd_draw.wgsl`): every drawn character's bones,
/// and one atomic's joints.
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone)]
pub struct CrowdSkin {
    /// Every drawn character's place and bones, this frame's, last frame's (for motion vectors)
    /// and, where half rate is on, the frame before last's, shared by every crowd material: a
    /// head of five `u32`s (the first row of this frame's rows, of last frame's, of the frame
    /// before last's, the slots a frame holds, and the first row of the held marks; 32 bytes
    /// with its padding), then the frames, which take turns, each of 3×4 affine rows: per
    /// character slot its place in the world (its `GlobalTransform`), then per slot `stride`
    /// bones (model space, Bevy's axes); then the held marks.
    #[storage(100, read_only)]
    pub bones: Handle<ShaderBuffer>,
    /// Per skin joint of the atomic (one for a rigid atomic): its inverse bind matrix (3×4 rows),
    /// its bone's index in the crowd skeleton (`u32`) and its mesh's handedness (`f32`: −1 where
    /// the mesh's own transform in the character mirrors it, else 1), 64 bytes each.
    #[storage(101, read_only)]
    pub joints: Handle<ShaderBuffer>,
    /// Bones per character slot in `bones`.
    #[uniform(102)]
    pub stride: u32,
    /// 1 where the part is placed by its own transform (its character's, as a child), 0 where
    /// it stays at the identity and takes its character's place from `bones`. Parts that Bevy
    /// sorts by distance (blended or transmissive looks) are placed by their transform, since
    /// Bevy sorts them by it.
    #[uniform(103)]
    pub placed_by_entity: u32,
}

impl MaterialExtension for CrowdSkin {
    fn vertex_shader() -> ShaderRef {
        ShaderRef::Path(SHADER.into())
    }

    fn prepass_vertex_shader() -> ShaderRef {
        ShaderRef::Path(SHADER.into())
    }

    fn deferred_vertex_shader() -> ShaderRef {
        ShaderRef::Path(SHADER.into())
    }

    fn specialize(
        _pipeline: &MaterialExtensionPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        layout: &MeshVertexBufferLayoutRef,
        _key: MaterialExtensionKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        // Bevy's pipeline laid out the attributes its pass reads; the crowd's joints and weights
        // are read from the same interleaved buffer, at locations no pass uses.
        let joints = layout.0.get_layout(&[
            ATTRIBUTE_CROWD_JOINT_INDEX.at_shader_location(14),
            ATTRIBUTE_CROWD_JOINT_WEIGHT.at_shader_location(15),
        ])?;
        if let Some(buffer) = descriptor.vertex.buffers.first_mut() {
            buffer.attributes.extend(joints.attributes);
        }
        Ok(())
    }
}
