//! A drawn model's parts, whatever its format: per mesh a copy with the crowd's joint
//! attributes, a joint table and a material.

use super::material::{
    ATTRIBUTE_CROWD_JOINT_INDEX, ATTRIBUTE_CROWD_JOINT_WEIGHT, CrowdMaterial, CrowdSkin,
};
use super::state::{DrawnPart, sorted_by_distance};
use crate::plugin::skeletal::{SkinJoint, bone_rows};
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

/// A drawn model's meshes before they become parts ([`Pieces::add`]), and the joint lists their
/// crowd joint indices point into.
#[derive(Default)]
pub(super) struct Pieces {
    pieces: Vec<Piece>,
    /// Per atomic (or glTF mesh node): per joint, its bone in the crowd skeleton and its
    /// inverse bind matrix ([`SkinJoint`]); and whether the mesh's own transform in the
    /// character mirrors it.
    joint_lists: Vec<(Vec<SkinJoint>, bool)>,
    /// The farthest a vertex lies from a joint on a bone it is weighted to (metres).
    pub(super) reach: f32,
    /// The box, in the character's space, of the vertices weighted to joints that stay put
    /// (see [`SkinJoint`]).
    pub(super) still: Option<(Vec3A, Vec3A)>,
}

/// The bone a joint table names for a joint with no bone ([`SkinJoint`]), which `crowd_draw.wgsl` reads as the
/// identity (its `STILL_JOINT`).
const STILL_JOINT: u32 = u32::MAX;

/// One mesh of a model, with the crowd's joint attributes (indices into joint list `joints`), and
/// its material.
struct Piece {
    mesh: Mesh,
    material: StandardMaterial,
    joints: usize,
}

impl Pieces {
    /// Adds the meshes of one atomic or glTF mesh node, whose joints are `joints`. Their morph targets are applied
    /// at `morph_weights` (see [`crowd_mesh`]). A length in the meshes is `scale` times as long
    /// in the character's space (the frames above a DFF atomic may scale it). `mirrored`: the
    /// transform of the meshes' own entity in the character, as Bevy spawns the model, mirrors
    /// (its determinant is negative), which turns their tangents' handedness over in Bevy's
    /// renderer whether or not they are skinned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        joints: &[SkinJoint],
        meshes: &[(Handle<Mesh>, Handle<StandardMaterial>)],
        morph_weights: &[f32],
        skinned: bool,
        scale: f32,
        mirrored: bool,
        build: &BuildParams,
    ) -> Result<(), String> {
        let list = self.joint_lists.len();
        self.joint_lists.push((joints.to_vec(), mirrored));
        let anchors: Vec<Anchor> = joints
            .iter()
            .map(|&(bone, m)| Anchor::of(bone, m))
            .collect();
        for (mesh, material) in meshes {
            let mesh = build.meshes.get(mesh).ok_or("a mesh has not loaded")?;
            let (mesh, flesh) = crowd_mesh(mesh, &anchors, skinned, morph_weights)?;
            self.reach = self.reach.max(flesh.reach * scale);
            self.still = union(self.still, flesh.still);
            let material = build
                .standard
                .get(material)
                .ok_or("a material has not loaded")?
                .clone();
            self.pieces.push(Piece {
                mesh,
                material,
                joints: list,
            });
        }
        Ok(())
    }

    /// Whether no mesh was added.
    pub(super) fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The model's parts, one per look: the meshes whose materials are equal (the same
    /// textures, colours and alpha mode, as a GTA III ped's body parts are, or an SA ped's
    /// materials on one atlas) and whose vertices have the same attributes are merged into one
    /// mesh, their joint lists laid end to end in one table. So a character is as few entities
    /// as it has looks: each costs Bevy's renderer per frame what a mesh entity costs. Meshes
    /// without indices are not merged.
    pub(super) fn parts(
        self,
        bones: &Handle<ShaderBuffer>,
        stride: u32,
        build: &mut BuildParams,
    ) -> Result<Vec<DrawnPart>, String> {
        let Pieces {
            pieces,
            joint_lists,
            ..
        } = self;
        let mut looks: Vec<Look> = Vec::new();
        for Piece {
            mut mesh,
            material,
            joints,
        } in pieces
        {
            let layout = layout(&mut mesh);
            let list = &joint_lists[joints].0;
            let same = looks.iter_mut().find(|look| {
                layout.is_some()
                    && look.layout == layout
                    && look.joint_count + list.len() <= u16::MAX as usize + 1
                    && same_look(&look.material, &material)
            });
            match same {
                Some(look) => {
                    let offset = look.offset_of(joints, list.len());
                    shift_joints(&mut mesh, offset);
                    look.mesh
                        .merge(&mesh)
                        .map_err(|e| format!("merging meshes of one look: {e}"))?;
                }
                None => looks.push(Look {
                    mesh,
                    material,
                    layout,
                    lists: vec![(joints, 0)],
                    joint_count: list.len(),
                }),
            }
        }
        let mut parts = Vec::with_capacity(looks.len());
        for look in looks {
            let mut table = Vec::with_capacity(look.joint_count * 64);
            for (list, _) in &look.lists {
                let (joints, mirrored) = &joint_lists[*list];
                let handedness: f32 = if *mirrored { -1.0 } else { 1.0 };
                for (bone, ibm) in joints {
                    push_rows(&mut table, ibm);
                    let bone = bone.map_or(STILL_JOINT, |b| b as u32);
                    table.extend_from_slice(&bone.to_le_bytes());
                    table.extend_from_slice(&handedness.to_le_bytes());
                    table.extend_from_slice(&[0; 8]);
                }
            }
            let table = build.buffers.add(ShaderBuffer::new(
                &table,
                RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
            ));
            let sorted = sorted_by_distance(&look.material);
            parts.push(DrawnPart {
                mesh: build.meshes.add(look.mesh),
                material: build.materials.add(CrowdMaterial {
                    base: look.material,
                    extension: CrowdSkin {
                        bones: bones.clone(),
                        joints: table,
                        stride,
                        placed_by_entity: u32::from(sorted),
                    },
                }),
                sorted,
            });
        }
        Ok(parts)
    }
}

/// The meshes of one material merged into one ([`Pieces::parts`]).
struct Look {
    mesh: Mesh,
    material: StandardMaterial,
    layout: Option<Layout>,
    /// The joint lists its table holds, in order, each with its first joint's place.
    lists: Vec<(usize, u32)>,
    joint_count: usize,
}

impl Look {
    /// Where joint list `list` (of `len` joints) starts in the table, added at its end if new.
    fn offset_of(&mut self, list: usize, len: usize) -> u32 {
        if let Some(&(_, at)) = self.lists.iter().find(|(l, _)| *l == list) {
            return at;
        }
        let at = self.joint_count as u32;
        self.lists.push((list, at));
        self.joint_count += len;
        at
    }
}

/// A mesh's topology and vertex attributes (ids and formats), which meshes merged into one must
/// share; `None` for a mesh without indices. Its indices become 32-bit (so that merged meshes
/// may pass 65,536 vertices).
type Layout = (
    bevy::mesh::PrimitiveTopology,
    Vec<(
        bevy::mesh::MeshVertexAttributeId,
        bevy::render::render_resource::VertexFormat,
    )>,
);

fn layout(mesh: &mut Mesh) -> Option<Layout> {
    let wide = match mesh.indices()? {
        bevy::mesh::Indices::U16(i) => {
            bevy::mesh::Indices::U32(i.iter().map(|&v| v as u32).collect())
        }
        bevy::mesh::Indices::U32(_) => return Some(attributes(mesh)),
    };
    mesh.insert_indices(wide);
    Some(attributes(mesh))
}

fn attributes(mesh: &Mesh) -> Layout {
    let mut attributes: Vec<_> = mesh.attributes().map(|(a, _)| (a.id, a.format)).collect();
    attributes.sort_by_key(|(id, _)| *id);
    (mesh.primitive_topology(), attributes)
}

/// Whether two materials are equal field by field: by reflection (a field that cannot be
/// compared makes them unequal, and the meshes stay apart), and the faces culled, which
/// reflection leaves out (Bevy's glTF loader gives a mirrored node's mesh a copy of its material
/// that differs there alone).
fn same_look(a: &StandardMaterial, b: &StandardMaterial) -> bool {
    use bevy::reflect::PartialReflect;
    a.cull_mode == b.cull_mode && a.reflect_partial_eq(b) == Some(true)
}

/// Moves `mesh`'s crowd joint indices `offset` on (its joint list placed there in a merged
/// table).
fn shift_joints(mesh: &mut Mesh, offset: u32) {
    if offset == 0 {
        return;
    }
    if let Some(VertexAttributeValues::Uint16x4(joints)) =
        mesh.attribute_mut(ATTRIBUTE_CROWD_JOINT_INDEX)
    {
        for j in joints.iter_mut().flatten() {
            *j += offset as u16;
        }
    }
}

/// Where a joint's vertices are, for a part's box: for a joint on a bone, where the joint sits at
/// bind time in the mesh's space (its flesh reaches from there as the bone moves); for a joint
/// that stays put, its skin matrix (it puts its vertices where they stay in the character).
#[derive(Clone, Copy)]
pub(super) enum Anchor {
    Bone(Vec3A),
    Still(Affine3A),
}

impl Anchor {
    fn of(bone: Option<usize>, m: Affine3A) -> Self {
        match bone {
            Some(_) => Anchor::Bone(m.inverse().translation),
            None => Anchor::Still(m),
        }
    }
}

/// Where a mesh's vertices lie for a part's box ([`crowd_mesh`]): the farthest a vertex lies
/// from the bind point of a joint on a bone it is weighted to, and the box (in the character's
/// space) of where the joints that stay put put the vertices weighted to them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Flesh {
    pub(super) reach: f32,
    pub(super) still: Option<(Vec3A, Vec3A)>,
}

/// The box around two boxes, either of which may be none.
pub(super) fn union(
    a: Option<(Vec3A, Vec3A)>,
    b: Option<(Vec3A, Vec3A)>,
) -> Option<(Vec3A, Vec3A)> {
    match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => Some((alo.min(blo), ahi.max(bhi))),
        (a, None) => a,
        (None, b) => b,
    }
}

/// `mesh` with its joints and weights moved to the crowd's attributes (a rigid mesh: every
/// vertex on joint 0, weight 1), and where its vertices lie from the `anchors` of the joints
/// they are weighted to ([`Flesh`]).
///
/// A mesh with morph targets is drawn as they leave it at `morph_weights` (weight `i` for
/// target `i`; a target past the weights' end at 0): the targets are added into the copy's
/// positions, normals and tangents once, as Bevy's vertex shader adds them every frame, and the
/// copy keeps no targets, so Bevy's pipeline is not keyed for morphing that the crowd's shader
/// would not do.
pub(super) fn crowd_mesh(
    mesh: &Mesh,
    anchors: &[Anchor],
    skinned: bool,
    morph_weights: &[f32],
) -> Result<(Mesh, Flesh), String> {
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
        .any(|&j| j as usize >= anchors.len())
    {
        return Err("a vertex names a joint the skin does not have".into());
    }
    // Every joint a vertex is weighted to, as Bevy's `SkinnedMeshBounds` takes them: the vertex
    // lies between where each of them puts it, so a box around all of those holds it.
    let mut flesh = Flesh::default();
    for ((p, j), w) in positions.iter().zip(&joints).zip(&weights) {
        let p = Vec3A::from(*p);
        for (joint, _) in j.iter().zip(w).filter(|(_, w)| **w > 0.0) {
            match anchors.get(*joint as usize) {
                Some(Anchor::Bone(at)) => flesh.reach = flesh.reach.max(p.distance(*at)),
                Some(Anchor::Still(m)) => {
                    let at = m.transform_point3a(p);
                    flesh.still = union(flesh.still, Some((at, at)));
                }
                None => {}
            }
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
    Ok((mesh, flesh))
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

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::mesh::PrimitiveTopology;

    /// A skinned triangle whose vertices are weighted to `joints` by `weights`.
    fn triangle(positions: [[f32; 3]; 3], joints: [[u16; 4]; 3], weights: [[f32; 4]; 3]) -> Mesh {
        Mesh::new(
            PrimitiveTopology::TriangleList,
            RenderAssetUsages::MAIN_WORLD | RenderAssetUsages::RENDER_WORLD,
        )
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions.to_vec())
        .with_inserted_attribute(
            Mesh::ATTRIBUTE_JOINT_INDEX,
            VertexAttributeValues::Uint16x4(joints.to_vec()),
        )
        .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, weights.to_vec())
    }

    /// A part's flesh counts every joint a vertex is weighted to, as Bevy's `SkinnedMeshBounds`
    /// does, not only its most weighted one: a vertex lies between where each of its joints puts
    /// it. Joint 0 on a bone, bound at the origin; joint 1 on a bone, bound at (2, 0, 0); joint
    /// 2 stays put, moving the mesh 5 m up.
    #[test]
    fn a_meshs_flesh_counts_every_joint_its_vertices_are_weighted_to() {
        let anchors = [
            Anchor::of(Some(0), Affine3A::IDENTITY),
            Anchor::of(
                Some(1),
                Affine3A::from_translation(Vec3::new(-2.0, 0.0, 0.0)),
            ),
            Anchor::of(None, Affine3A::from_translation(Vec3::Y * 5.0)),
        ];
        // Vertex 0 at (0.5, 0, 0): 0.9 on joint 0 (0.5 from it), 0.1 on joint 1 (1.5 from it).
        // Vertex 1 at (0, 1, 0): 0.7 on joint 0 (1 from it), 0.3 on joint 2 (put at (0, 6, 0)).
        // Vertex 2 at (0, 0, -1): joint 2 alone (put at (0, 5, -1)), the other slots weighing 0
        // (joint 1 named there: not counted).
        let mesh = triangle(
            [[0.5, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]],
            [[0, 1, 0, 0], [0, 2, 0, 0], [2, 1, 1, 1]],
            [
                [0.9, 0.1, 0.0, 0.0],
                [0.7, 0.3, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
            ],
        );
        let (_, flesh) = crowd_mesh(&mesh, &anchors, true, &[]).unwrap();
        // The farthest from a bound joint on a bone: vertex 0 from joint 1, 1.5 (by its most
        // weighted joint alone, 1.0: vertex 1 from joint 0).
        assert_eq!(flesh.reach, 1.5);
        // Where joint 2 puts vertices 1 and 2: (0, 6, 0) and (0, 5, -1).
        assert_eq!(
            flesh.still,
            Some((Vec3A::new(0.0, 5.0, -1.0), Vec3A::new(0.0, 6.0, 0.0)))
        );
    }
}
