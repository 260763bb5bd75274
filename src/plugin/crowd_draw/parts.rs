//! A drawn model's parts, whatever its format: per mesh a copy with the crowd's joint
//! attributes, a joint table and a material.

use super::material::{
    ATTRIBUTE_CROWD_JOINT_INDEX, ATTRIBUTE_CROWD_JOINT_WEIGHT, CrowdMaterial, CrowdSkin,
};
use crate::plugin::skeletal::bone_rows;
use bevy::asset::RenderAssetUsages;
use bevy::math::{Affine3A, Vec3A};
use bevy::mesh::VertexAttributeValues;
use bevy::mesh::morph::MorphAttributes;
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;

/// What building a drawn model writes to.
#[derive(bevy::ecs::system::SystemParam)]
pub(super) struct BuildParams<'w> {
    meshes: ResMut<'w, Assets<Mesh>>,
    standard: Res<'w, Assets<StandardMaterial>>,
    materials: ResMut<'w, Assets<CrowdMaterial>>,
    pub(super) buffers: ResMut<'w, Assets<ShaderBuffer>>,
    pub(super) ibms: Res<'w, Assets<SkinnedMeshInverseBindposes>>,
}

/// One drawn mesh's joint table: per joint, its bone in the crowd skeleton and its inverse bind
/// matrix. Adds the part of each (mesh, material) to `parts` and returns the farthest its flesh
/// reaches from a joint. The meshes' morph targets are applied at `morph_weights` (see
/// [`crowd_mesh`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn add_parts(
    joints: &[(usize, Affine3A)],
    meshes: &[(Handle<Mesh>, Handle<StandardMaterial>)],
    morph_weights: &[f32],
    skinned: bool,
    bones: &Handle<ShaderBuffer>,
    stride: u32,
    build: &mut BuildParams,
    parts: &mut Vec<(Handle<Mesh>, Handle<CrowdMaterial>)>,
) -> Result<f32, String> {
    let mut table = Vec::with_capacity(joints.len() * 64);
    for (bone, ibm) in joints {
        push_rows(&mut table, ibm);
        table.extend_from_slice(&(*bone as u32).to_le_bytes());
        table.extend_from_slice(&[0; 12]);
    }
    let table = build.buffers.add(ShaderBuffer::new(
        &table,
        RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
    ));
    // Where each joint sits at bind time, in the mesh's space.
    let bind_points: Vec<Vec3A> = joints
        .iter()
        .map(|(_, m)| m.inverse().translation)
        .collect();
    let mut reach = 0.0f32;
    for (mesh, material) in meshes {
        let mesh = build.meshes.get(mesh).ok_or("a mesh has not loaded")?;
        let (mesh, part_reach) = crowd_mesh(mesh, &bind_points, skinned, morph_weights)?;
        reach = reach.max(part_reach);
        let base = build
            .standard
            .get(material)
            .ok_or("a material has not loaded")?
            .clone();
        parts.push((
            build.meshes.add(mesh),
            build.materials.add(CrowdMaterial {
                base,
                extension: CrowdSkin {
                    bones: bones.clone(),
                    joints: table.clone(),
                    stride,
                },
            }),
        ));
    }
    Ok(reach)
}

/// `mesh` with its joints and weights moved to the crowd's attributes (a rigid mesh: every
/// vertex on joint 0, weight 1), and the farthest a vertex lies from its most weighted joint's
/// bind point.
///
/// A mesh with morph targets is drawn as they leave it at `morph_weights` (weight `i` for
/// target `i`; a target past the weights' end at 0): the targets are added into the copy's
/// positions, normals and tangents once, as Bevy's vertex shader adds them every frame, and the
/// copy keeps no targets, so Bevy's pipeline is not keyed for morphing that the crowd's shader
/// would not do.
pub(super) fn crowd_mesh(
    mesh: &Mesh,
    bind_points: &[Vec3A],
    skinned: bool,
    morph_weights: &[f32],
) -> Result<(Mesh, f32), String> {
    if !mesh.asset_usage.contains(RenderAssetUsages::MAIN_WORLD) {
        return Err("its meshes are kept only on the GPU".into());
    }
    let mut mesh = match mesh.morph_targets() {
        Some(targets) => morphed(mesh, targets, morph_weights)?,
        None => mesh.clone(),
    };
    let joints = mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_INDEX);
    let weights = mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT);
    let Some(VertexAttributeValues::Float32x3(positions)) =
        mesh.attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        return Err("a mesh has no positions".into());
    };
    let (joints, weights) = if skinned {
        let (
            Some(VertexAttributeValues::Uint16x4(joints)),
            Some(VertexAttributeValues::Float32x4(weights)),
        ) = (joints, weights)
        else {
            return Err("a skinned mesh has no joints or weights".into());
        };
        (joints, weights)
    } else {
        (
            vec![[0u16; 4]; positions.len()],
            vec![[1.0f32, 0.0, 0.0, 0.0]; positions.len()],
        )
    };
    if joints
        .iter()
        .flatten()
        .any(|&j| j as usize >= bind_points.len())
    {
        return Err("a vertex names a joint the skin does not have".into());
    }
    let mut reach = 0.0f32;
    for ((p, j), w) in positions.iter().zip(&joints).zip(&weights) {
        let most = (0..4).fold(0, |m, i| if w[i] > w[m] { i } else { m });
        if let Some(at) = bind_points.get(j[most] as usize) {
            reach = reach.max(Vec3A::from(*p).distance(*at));
        }
    }
    mesh.insert_attribute(
        ATTRIBUTE_CROWD_JOINT_INDEX,
        VertexAttributeValues::Uint16x4(joints),
    );
    mesh.insert_attribute(
        ATTRIBUTE_CROWD_JOINT_WEIGHT,
        VertexAttributeValues::Float32x4(weights),
    );
    Ok((mesh, reach))
}

/// `mesh` without its morph `targets` (per target, one displacement per vertex), their
/// displacements added at `weights`: `p + Σ wᵢ·Δpᵢ`, and so for normals and tangents (a
/// tangent's sign kept), as Bevy's `mesh.wgsl` morphs a vertex before skinning it.
fn morphed(mesh: &Mesh, targets: &[MorphAttributes], weights: &[f32]) -> Result<Mesh, String> {
    let vertices = mesh.count_vertices();
    if vertices == 0 || !targets.len().is_multiple_of(vertices) {
        return Err("a mesh's morph targets are not one displacement per vertex".into());
    }
    let mut out = Mesh::new(mesh.primitive_topology(), mesh.asset_usage);
    if let Some(indices) = mesh.indices() {
        out.insert_indices(indices.clone());
    }
    for (attribute, values) in mesh.attributes() {
        out.insert_attribute(*attribute, values.clone());
    }
    let used = targets.chunks_exact(vertices).zip(weights);
    for (target, &w) in used.filter(|(_, w)| **w != 0.0 && w.is_finite()) {
        let mut add = |id, delta: fn(&MorphAttributes) -> Vec3| match out.attribute_mut(id) {
            Some(VertexAttributeValues::Float32x3(values)) => {
                for (v, d) in values.iter_mut().zip(target) {
                    *v = (Vec3::from(*v) + w * delta(d)).into();
                }
            }
            Some(VertexAttributeValues::Float32x4(values)) => {
                for (v, d) in values.iter_mut().zip(target) {
                    let xyz = Vec3::new(v[0], v[1], v[2]) + w * delta(d);
                    *v = [xyz.x, xyz.y, xyz.z, v[3]];
                }
            }
            _ => {}
        };
        add(Mesh::ATTRIBUTE_POSITION.id, |d| d.position);
        add(Mesh::ATTRIBUTE_NORMAL.id, |d| d.normal);
        add(Mesh::ATTRIBUTE_TANGENT.id, |d| d.tangent);
    }
    Ok(out)
}

/// The rows of `m` (see [`bone_rows`]) as bytes.
pub(super) fn push_rows(out: &mut Vec<u8>, m: &Affine3A) {
    for v in bone_rows(m) {
        out.extend_from_slice(&v.to_le_bytes());
    }
}
