//! How a rig's cell is shown: a premultiplied-alpha quad in 2D ([`AnieCardMaterial`]) or on a
//! plane in 3D ([`AnieCardMaterial3d`]), and the quad's mesh.

use crate::coords::anie_canvas_to_bevy;
use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, MeshVertexBufferLayoutRef, PrimitiveTopology};
use bevy::pbr::{Material, MaterialPipeline, MaterialPipelineKey};
use bevy::prelude::*;
use bevy::render::render_resource::{
    AsBindGroup, BlendState, RenderPipelineDescriptor, ShaderType, SpecializedMeshPipelineError,
};
use bevy::shader::ShaderRef;
use bevy::sprite_render::{AlphaMode2d, Material2d, Material2dKey};

/// The shader of [`AnieCardMaterial`].
const CARD_SHADER: &str = "embedded://rigplay/plugin/anie/card.wgsl";
/// The shader of [`AnieCardMaterial3d`].
const CARD_3D_SHADER: &str = "embedded://rigplay/plugin/anie/card3d.wgsl";

/// A page's grid: every cell of the page has the same size, so a cell is found from its index
/// (the quad's [`MeshTag`](bevy::mesh::MeshTag)).
#[derive(ShaderType, Clone, Copy, Debug, Default, PartialEq)]
pub struct CardGrid {
    /// A cell's size in pixels.
    pub cell: Vec2,
    /// The page's side in pixels.
    pub page_side: f32,
    /// Cells per row.
    pub columns: u32,
}

/// Shows rigs of one page on 2D quads: the cell of each quad's [`MeshTag`](bevy::mesh::MeshTag), with premultiplied
/// alpha blending. One material per page, so every rig of a page batches.
///
/// With a camera that composites in sRGB ([`bevy::camera::CompositingSpace::Srgb`]) the cell's
/// values are blended as they are, like AnimeEffects' exported image over the scene in an image
/// editor; otherwise (linear compositing) each pixel is un-premultiplied, decoded from sRGB and
/// premultiplied again, so edges do not darken.
#[derive(Asset, TypePath, AsBindGroup, Clone, Debug)]
#[type_path = "rigplay::plugin"]
pub struct AnieCardMaterial {
    /// The page texture.
    #[texture(0)]
    #[sampler(1)]
    pub page: Handle<Image>,
    /// The page's grid.
    #[uniform(2)]
    pub grid: CardGrid,
}

impl Material2d for AnieCardMaterial {
    fn vertex_shader() -> ShaderRef {
        ShaderRef::Path(CARD_SHADER.into())
    }

    fn fragment_shader() -> ShaderRef {
        ShaderRef::Path(CARD_SHADER.into())
    }

    fn alpha_mode(&self) -> AlphaMode2d {
        AlphaMode2d::Blend
    }

    fn specialize(
        descriptor: &mut RenderPipelineDescriptor,
        _layout: &MeshVertexBufferLayoutRef,
        _key: Material2dKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        if let Some(target) = descriptor
            .fragment
            .as_mut()
            .and_then(|f| f.targets.first_mut())
            .and_then(Option::as_mut)
        {
            target.blend = Some(BlendState::PREMULTIPLIED_ALPHA_BLENDING);
        }
        Ok(())
    }
}

/// A cell's place on its page, in texture coordinates, for [`AnieCardMaterial3d`].
#[derive(ShaderType, Clone, Copy, Debug, Default, PartialEq)]
pub struct CardCell {
    /// The first (xy) and last (zw) texel centres of the cell.
    pub clamp: Vec4,
    /// The cell's origin (xy) and size (zw).
    pub rect: Vec4,
}

impl CardCell {
    /// The cell at `origin` of `size` pixels on a page of `side` pixels.
    pub fn new(origin: UVec2, size: UVec2, side: u32) -> Self {
        let side = side.max(1) as f32;
        let (o, s) = (origin.as_vec2(), size.as_vec2());
        let (first, last) = ((o + 0.5) / side, (o + s - 0.5) / side);
        Self {
            clamp: Vec4::new(first.x, first.y, last.x, last.y),
            rect: Vec4::new(o.x / side, o.y / side, s.x / side, s.y / side),
        }
    }
}

/// Shows one rig on a 3D plane: unlit, premultiplied alpha ([`AlphaMode::Premultiplied`]), no
/// tone mapping in the shader (give an HDR camera [`bevy::core_pipeline::tonemapping::Tonemapping::None`]
/// to keep the rig's colours).
#[derive(Asset, TypePath, AsBindGroup, Clone, Debug)]
#[type_path = "rigplay::plugin"]
pub struct AnieCardMaterial3d {
    /// The page texture.
    #[texture(0)]
    #[sampler(1)]
    pub page: Handle<Image>,
    /// The rig's cell on it.
    #[uniform(2)]
    pub cell: CardCell,
}

impl Material for AnieCardMaterial3d {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Path(CARD_3D_SHADER.into())
    }

    fn alpha_mode(&self) -> AlphaMode {
        AlphaMode::Premultiplied
    }

    fn specialize(
        _pipeline: &MaterialPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        _layout: &MeshVertexBufferLayoutRef,
        _key: MaterialPipelineKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        descriptor.primitive.cull_mode = None;
        Ok(())
    }
}

/// The quad a canvas of `width × height` pixels is shown on: 1 world unit per canvas pixel,
/// centred on the entity, its top at +Y ([`anie_canvas_to_bevy`]), facing +Z; texture
/// coordinates are the canvas's (0, 0) top-left to (1, 1) bottom-right.
pub fn card_mesh(width: u32, height: u32) -> Mesh {
    let (w, h) = (width as f32, height as f32);
    let corners = [
        Vec2::ZERO,
        Vec2::new(w, 0.0),
        Vec2::new(0.0, h),
        Vec2::new(w, h),
    ];
    let positions: Vec<[f32; 3]> = corners
        .iter()
        .map(|&c| anie_canvas_to_bevy(c, w, h).extend(0.0).to_array())
        .collect();
    let uvs: Vec<[f32; 2]> = corners
        .iter()
        .map(|&c| (c / Vec2::new(w, h)).to_array())
        .collect();
    // Kept in the main world too: visibility culling computes its bounds.
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, vec![[0.0, 0.0, 1.0]; 4])
    .with_inserted_attribute(Mesh::ATTRIBUTE_UV_0, uvs)
    // Counter-clockwise seen from +Z: top-left, bottom-left, top-right; top-right,
    // bottom-left, bottom-right.
    .with_inserted_indices(Indices::U32(vec![0, 2, 1, 1, 2, 3]))
}
