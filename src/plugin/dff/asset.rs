//! The [`Dff`] asset: a `.dff` file's clumps as Bevy meshes, materials, textures and scenes,
//! and the frame hierarchy [`super::GtaModel`] spawns.

use crate::formats::dff::DffFile;
use crate::plugin::load::labelled;
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::AssetPath;
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::prelude::*;
use bevy::world_serialization::WorldAsset;
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded `.dff` file, like bevy_gltf's `Gltf`: the file's data, and per clump what it takes
/// to draw and animate it. Spawn a clump with [`super::GtaModel`] (its frames become entities
/// named and tagged like the built-in GTA skeleton, so IFP clips play on them), or as a scene
/// (`"ped.dff#Scene0"`, [`DffAssetLabel::Scene`]).
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Dff {
    /// Everything the file holds (see [`crate::formats::dff`]).
    pub file: DffFile,
    /// One per clump, in file order.
    pub clumps: Vec<Arc<DffClump>>,
    /// The textures found in the texture dictionaries, by name as the TXD spells it (materials
    /// look them up case-insensitively).
    pub textures: HashMap<String, Handle<Image>>,
    /// Texture names materials ask for that no dictionary held (they draw untextured).
    pub missing_textures: Vec<String>,
    /// The texture dictionaries read, as asset paths.
    pub dictionaries: Vec<String>,
    /// What the readers tolerated or the loader could not use, one line each (also logged).
    pub warnings: Vec<String>,
    /// The game whose bone names and ids the frames were tagged with.
    pub game: GtaGame,
}

impl Dff {
    /// The texture with this name (case-insensitive, as RenderWare looks textures up).
    pub fn texture(&self, name: &str) -> Option<&Handle<Image>> {
        self.textures
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, h)| h)
    }

    /// The clump a crowd character wears ([`super::CrowdModel`]): the first that has bones.
    pub(crate) fn crowd_clump(&self) -> Option<&DffClump> {
        self.clumps
            .iter()
            .map(|c| &**c)
            .find(|c| !c.bones.is_empty())
    }
}

/// One clump of a [`Dff`]: its frames and atomics, ready to spawn.
#[derive(Debug, Clone)]
pub struct DffClump {
    /// The clump as a scene (`Scene{index}`): a root entity with an `AnimationPlayer`, the
    /// basis entity turning GTA's Z-up into Bevy's Y-up, the frames and the meshes.
    pub scene: Handle<WorldAsset>,
    /// The frames, in the file's order.
    pub frames: Vec<DffFrame>,
    /// Frame indices, parents before children (the file's order need not be).
    pub order: Vec<usize>,
    /// The atomics that are drawn.
    pub atomics: Vec<DffAtomic>,
    /// The frames that are bones, in HAnim node order when the clump has a hierarchy (else the
    /// named frames in file order).
    pub bones: Vec<usize>,
    /// Height (GTA Z, metres) the basis lifts the model by, so that a skinned ped's lowest joint,
    /// or a GTA III ped of parts' lowest vertex (its soles), rests on the root's origin (0 for
    /// props and vehicles).
    pub lift: f32,
}

/// A frame of a [`DffClump`].
#[derive(Debug, Clone)]
pub struct DffFrame {
    /// The frame's name (`Frame{index}` when the file gives none).
    pub name: String,
    /// The parent frame.
    pub parent: Option<usize>,
    /// The local transform the frame rests at (GTA axes, metres). For the root bone of a ped
    /// this is the rest SA clips are relative to, not the file's bind rotation (see
    /// [`super::GtaModel`]).
    pub rest: Transform,
    /// The frame's HAnim bone id, when it has one.
    pub bone_id: Option<i32>,
    /// The animation target id tracks bind to, when the frame is a bone (or, in a model without
    /// bones, a named frame).
    pub target: Option<AnimationTargetId>,
}

/// An atomic of a [`DffClump`]: a geometry drawn on a frame, one mesh per material.
#[derive(Debug, Clone)]
pub struct DffAtomic {
    /// The frame it hangs on.
    pub frame: usize,
    /// The geometry's index in the file.
    pub geometry: usize,
    /// One `(mesh, material)` per material that has triangles.
    pub parts: Vec<(Handle<Mesh>, Handle<StandardMaterial>)>,
    /// The skin, when the geometry is skinned and its bones resolve.
    pub skin: Option<DffSkin>,
    /// Hidden at spawn: a damaged (`_dam`) or lowest-detail (`_vlo`) variant.
    pub hidden: bool,
}

/// The skin of a [`DffAtomic`].
#[derive(Debug, Clone)]
pub struct DffSkin {
    /// The file's inverse bind matrices, as Bevy's asset.
    pub inverse_bindposes: Handle<SkinnedMeshInverseBindposes>,
    /// The frame of each skin bone (HAnim node order).
    pub joints: Vec<usize>,
}

/// Labels of the sub-assets of a `.dff` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DffAssetLabel {
    /// `Scene{clump}`: a clump as a scene.
    Scene(usize),
    /// `Geometry{geometry}/Material{material}`: the triangles of one material of a geometry.
    Mesh {
        /// Geometry index.
        geometry: usize,
        /// Material index in the geometry's material list.
        material: usize,
    },
    /// `Material{geometry}/{material}`: a material as a `StandardMaterial`.
    Material {
        /// Geometry index.
        geometry: usize,
        /// Material index in the geometry's material list.
        material: usize,
    },
    /// `Skin{geometry}`: a geometry's inverse bind matrices.
    Skin(usize),
    /// `Texture/{name}`: a texture of the dictionaries, decoded to RGBA8 with its mip levels.
    Texture(String),
}

impl std::fmt::Display for DffAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DffAssetLabel::Scene(i) => write!(f, "Scene{i}"),
            DffAssetLabel::Mesh { geometry, material } => {
                write!(f, "Geometry{geometry}/Material{material}")
            }
            DffAssetLabel::Material { geometry, material } => {
                write!(f, "Material{geometry}/{material}")
            }
            DffAssetLabel::Skin(g) => write!(f, "Skin{g}"),
            DffAssetLabel::Texture(name) => write!(f, "Texture/{name}"),
        }
    }
}

impl DffAssetLabel {
    /// The full asset path of this label in the file at `path`.
    pub fn from_asset(&self, path: impl Into<AssetPath<'static>>) -> AssetPath<'static> {
        labelled(path, self)
    }
}
