//! The `.dff` asset loader: a [`Dff`] with its meshes, materials, textures (from the `.txd`
//! dictionaries it names or finds beside the model) and one scene per clump.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

use super::asset::{Dff, DffAssetLabel, DffAtomic, DffClump, DffFrame, DffSkin};
use super::spawn::spawn_clump;
use crate::formats::dff::{DffFile, RwError};
use crate::formats::txd::{TextureNative, TxdFile};
use crate::model::{Addressing, Model, ModelAlpha, ModelMesh, ModelTexture, merge_textures};
use crate::plugin::load::{AssetLoadError, read_file};
use crate::plugin::meta::{MetaProblems, lenient_settings};
use crate::plugin::skeletal::identity_target;
use crate::skeleton::GtaGame;
use bevy::asset::io::{AssetReaderError, Reader};
use bevy::asset::{AssetLoader, AssetPath, LoadContext, ReadAssetBytesError, RenderAssetUsages};
use bevy::image::{ImageAddressMode, ImageFilterMode, ImageSampler, ImageSamplerDescriptor};
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::mesh::{Indices, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use bevy::world_serialization::WorldAsset;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// Settings of the `.dff` loader, set in a `.meta` file next to the asset:
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::DffLoader",
///         settings: (
///             textures: ["../txd/generic.txd"],
///             game: Some(Sa),
///         ),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct DffLoaderSettings {
    /// Texture dictionaries to read besides the one beside the model, as asset paths relative
    /// to the model's folder (`/` at the start: relative to the asset root). A vehicle's shared
    /// textures live in `vehicle.txd`, for instance. Earlier dictionaries win a name.
    pub textures: Vec<String>,
    /// Also read the `.txd` of the same name beside the model, when there is one.
    pub txd_beside: bool,
    /// The game whose bone names and ids the frames are tagged with; `None` picks it from the
    /// file ([`GtaGame::for_dff`]: RenderWare 3.5 and later → SA, an HAnim hierarchy in an
    /// older file → VC, else III).
    pub game: Option<GtaGame>,
    /// Show the damaged (`_dam`) and lowest-detail (`_vlo`) variants of vehicle parts, which
    /// viewers and the games hide (§4.2).
    pub show_all_atomics: bool,
    /// What the `.meta` file held that could not be used (each field keeps its default); the
    /// loader logs these. Never written.
    #[serde(skip)]
    pub meta_problems: MetaProblems,
}

lenient_settings!(DffLoaderSettings {
    textures: "a list of asset paths `[\"../txd/generic.txd\", …]`",
    txd_beside: "`true` or `false`",
    game: "`None` or `Some(Sa)`, `Some(Vc)`, `Some(Iii)`",
    show_all_atomics: "`true` or `false`",
});

impl Default for DffLoaderSettings {
    fn default() -> Self {
        Self {
            textures: Vec::new(),
            txd_beside: true,
            game: None,
            show_all_atomics: false,
            meta_problems: MetaProblems::default(),
        }
    }
}

/// Why a `.dff` asset did not load: the message names the byte offset and the chunk path
/// (`Clump/GeometryList/Geometry[0]/…`). A texture dictionary that fails to read does not
/// fail the model: it is a warning, and the materials draw untextured.
pub type DffLoadError = AssetLoadError<RwError>;

/// The `.dff` asset loader.
#[derive(TypePath, Default)]
#[type_path = "rigplay::plugin"]
pub struct DffLoader;

impl AssetLoader for DffLoader {
    type Asset = Dff;
    type Settings = DffLoaderSettings;
    type Error = DffLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &DffLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Dff, DffLoadError> {
        let meta = &settings.meta_problems;
        let (read, mut warnings) =
            read_file(reader, load_context, meta, DffFile::read, |r| &r.warnings).await?;
        let dff = read.file;
        let game = settings.game.unwrap_or_else(|| GtaGame::for_dff(&dff));

        // Texture dictionaries: the named ones first, then the one beside the model.
        let base = load_context.path().clone_owned();
        let mut paths: Vec<(AssetPath<'static>, bool)> = Vec::new();
        for t in &settings.textures {
            match base.resolve_embed_str(t) {
                Ok(p) => paths.push((p, true)),
                Err(e) => warnings.push(format!("texture dictionary {t:?}: {e}")),
            }
        }
        if settings.txd_beside {
            let beside = base.path().with_extension("txd");
            let beside = AssetPath::from(beside).with_source(base.source().clone_owned());
            if !paths.iter().any(|(p, _)| *p == beside) {
                paths.push((beside, false));
            }
        }
        let mut dictionaries = Vec::new();
        let mut textures: Vec<TextureNative> = Vec::new();
        for (path, named) in paths {
            let bytes = match load_context.read_asset_bytes(path.clone()).await {
                Ok(b) => b,
                Err(ReadAssetBytesError::AssetReaderError(AssetReaderError::NotFound(_)))
                    if !named =>
                {
                    continue;
                }
                Err(e) => {
                    warnings.push(format!("texture dictionary {path}: {e}"));
                    continue;
                }
            };
            match TxdFile::read(&bytes) {
                Ok(read) => {
                    for w in &read.warnings {
                        warnings.push(format!("{path}: {w}"));
                    }
                    merge_textures(&mut textures, read.file.textures);
                    dictionaries.push(path.to_string());
                }
                Err(e) => warnings.push(format!("texture dictionary {path}: {e}")),
            }
        }

        let model = Model::new(&dff, game, &textures);
        warnings.extend(model.warnings.iter().cloned());
        let mut images = Vec::with_capacity(model.textures.len());
        let mut by_name: HashMap<String, Handle<Image>> = HashMap::new();
        for t in &model.textures {
            let handle = load_context
                .add_labeled_asset(DffAssetLabel::Texture(t.name.clone()).to_string(), image(t));
            by_name.insert(t.name.clone(), handle.clone());
            images.push(handle);
        }
        // Per geometry drawn: its meshes and materials, and its skin.
        let mut geometries: Vec<
            Option<(
                Vec<(Handle<Mesh>, Handle<StandardMaterial>)>,
                Option<DffSkin>,
            )>,
        > = Vec::with_capacity(model.geometries.len());
        for (g, geometry) in model.geometries.iter().enumerate() {
            geometries.push(geometry.as_ref().map(|geometry| {
                let parts = geometry
                    .meshes
                    .iter()
                    .map(|m| mesh_and_material(load_context, g, m, &images))
                    .collect();
                let skin = geometry.skin.as_ref().map(|skin| DffSkin {
                    inverse_bindposes: load_context.add_labeled_asset(
                        DffAssetLabel::Skin(g).to_string(),
                        SkinnedMeshInverseBindposes::from(skin.inverse_bind.clone()),
                    ),
                    joints: skin.joints.clone(),
                });
                (parts, skin)
            }));
        }

        let mut clumps = Vec::new();
        for (c, clump) in model.clumps.iter().enumerate() {
            let frames = clump
                .frames
                .iter()
                .map(|f| DffFrame {
                    name: f.name.clone(),
                    parent: f.parent,
                    rest: f.rest.into(),
                    bone_id: f.bone_id,
                    target: f.bone.as_ref().map(identity_target),
                })
                .collect();
            let atomics = clump
                .atomics
                .iter()
                .filter_map(|a| {
                    let (parts, skin) = geometries.get(a.geometry)?.clone()?;
                    Some(DffAtomic {
                        frame: a.frame,
                        geometry: a.geometry,
                        parts,
                        skin,
                        hidden: !settings.show_all_atomics && a.variant,
                    })
                })
                .collect();
            let mut clump_model = DffClump {
                scene: Handle::default(),
                frames,
                order: clump.order.clone(),
                atomics,
                bones: clump.bones.clone(),
                lift: clump.lift,
            };
            let mut world = World::new();
            let root = world
                .spawn((
                    Name::new(scene_name(load_context, c)),
                    Transform::default(),
                    Visibility::default(),
                    AnimationPlayer::default(),
                ))
                .id();
            spawn_clump(&mut world, root, &clump_model);
            clump_model.scene = load_context
                .add_labeled_asset(DffAssetLabel::Scene(c).to_string(), WorldAsset::new(world));
            clumps.push(Arc::new(clump_model));
        }
        for name in &model.missing_textures {
            let line = format!("texture {name:?} is in no texture dictionary");
            warn!("{}: {line}", load_context.path());
        }
        Ok(Dff {
            file: dff,
            clumps,
            textures: by_name,
            missing_textures: model.missing_textures,
            dictionaries,
            warnings,
            game,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["dff"]
    }
}

/// The scene's root entity name: the file's stem (and the clump's index after the first).
fn scene_name(context: &LoadContext, clump: usize) -> String {
    let stem = context
        .path()
        .path()
        .file_stem()
        .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned());
    if clump == 0 {
        stem
    } else {
        format!("{stem} clump {clump}")
    }
}

/// sRGB bytes as a colour.
fn srgb(c: [u8; 4]) -> Color {
    Color::srgba_u8(c[0], c[1], c[2], c[3])
}

/// A model's mesh as a Bevy mesh (normals computed when the file has none; skinned bounds) and
/// its material as a `StandardMaterial`, both labelled.
fn mesh_and_material(
    load_context: &mut LoadContext,
    g: usize,
    m: &ModelMesh,
    images: &[Handle<Image>],
) -> (Handle<Mesh>, Handle<StandardMaterial>) {
    let mut mesh = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    );
    let arrays =
        |values: &[Vec3]| -> Vec<[f32; 3]> { values.iter().map(|v| v.to_array()).collect() };
    mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, arrays(&m.positions));
    for (uvs, attribute) in m
        .uvs
        .iter()
        .zip([Mesh::ATTRIBUTE_UV_0, Mesh::ATTRIBUTE_UV_1])
    {
        if let Some(uvs) = uvs {
            mesh.insert_attribute(attribute, uvs.clone());
        }
    }
    if let Some(colours) = &m.colours {
        let colours: Vec<[f32; 4]> = colours
            .iter()
            .map(|&c| srgb(c).to_linear().to_f32_array())
            .collect();
        mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colours);
    }
    if let (Some(joints), Some(weights)) = (&m.joints, &m.weights) {
        mesh.insert_attribute(
            Mesh::ATTRIBUTE_JOINT_INDEX,
            VertexAttributeValues::Uint16x4(joints.clone()),
        );
        mesh.insert_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, weights.clone());
    }
    mesh.insert_indices(Indices::U32(m.indices.clone()));
    match &m.normals {
        Some(ns) => mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, arrays(ns)),
        None => mesh.compute_smooth_normals(),
    }
    if m.joints.is_some()
        && let Err(e) = mesh.generate_skinned_mesh_bounds()
    {
        warn!("{}: geometry {g}: {e}", load_context.path());
    }
    let label = |material| DffAssetLabel::Mesh {
        geometry: g,
        material,
    };
    let mesh = load_context.add_labeled_asset(label(m.material).to_string(), mesh);
    let look = m.look;
    let standard = StandardMaterial {
        base_color: srgb(look.colour),
        base_color_texture: look.texture.and_then(|t| images.get(t).cloned()),
        alpha_mode: match look.alpha {
            ModelAlpha::Opaque => AlphaMode::Opaque,
            ModelAlpha::Mask => AlphaMode::Mask(0.5),
            ModelAlpha::Blend => AlphaMode::Blend,
        },
        perceptual_roughness: 0.85,
        metallic: 0.0,
        reflectance: 0.2,
        ..default()
    };
    let material = load_context.add_labeled_asset(
        DffAssetLabel::Material {
            geometry: g,
            material: m.material,
        }
        .to_string(),
        standard,
    );
    (mesh, material)
}

/// A model's texture as a Bevy image (sRGB RGBA8) with its mip levels, sampled as the texture's
/// filter and addressing say (§3.5).
fn image(t: &ModelTexture) -> Image {
    let mut image = Image::new(
        Extent3d {
            width: t.width,
            height: t.height,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        t.levels.first().cloned().unwrap_or_default(),
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::default(),
    );
    // The mip levels follow level 0 in the data, as wgpu uploads them.
    image.data = Some(t.levels.concat());
    image.texture_descriptor.mip_level_count = t.levels.len() as u32;
    let address = |a: Addressing| match a {
        Addressing::Repeat => ImageAddressMode::Repeat,
        Addressing::Mirror => ImageAddressMode::MirrorRepeat,
        Addressing::Clamp => ImageAddressMode::ClampToEdge,
    };
    let filter = if t.nearest {
        ImageFilterMode::Nearest
    } else {
        ImageFilterMode::Linear
    };
    image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor {
        address_mode_u: address(t.addressing[0]),
        address_mode_v: address(t.addressing[1]),
        mag_filter: filter,
        min_filter: filter,
        mipmap_filter: if t.mip_linear {
            ImageFilterMode::Linear
        } else {
            ImageFilterMode::Nearest
        },
        ..default()
    });
    image
}
