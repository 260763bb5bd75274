//! The `.dff` asset loader: a [`Dff`] with its meshes, materials, textures (from the `.txd`
//! dictionaries it names or finds beside the model) and one scene per clump.
//!
//! Section numbers (§) refer to `docs/formats/dff.md`.

use super::asset::{Dff, DffAssetLabel, DffAtomic, DffClump, DffFrame, DffSkin};
use super::spawn::spawn_clump;
use crate::animation::BoneRef;
use crate::formats::dff::{Clump, DffFile, Geometry, RwError};
use crate::formats::txd::{TextureNative, TxdFile};
use crate::plugin::load::{AssetLoadError, read_file};
use crate::plugin::meta::{MetaProblems, lenient_settings};
use crate::plugin::skeletal::bone_target_id;
use crate::skeleton::{GtaGame, Skeleton};
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
use std::collections::hash_map::Entry;
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
                    for t in read.file.textures {
                        if !textures
                            .iter()
                            .any(|k| k.name.eq_ignore_ascii_case(&t.name))
                        {
                            textures.push(t);
                        }
                    }
                    dictionaries.push(path.to_string());
                }
                Err(e) => warnings.push(format!("texture dictionary {path}: {e}")),
            }
        }

        // By lower-case name (materials look textures up case-insensitively): the image and
        // whether it has texels that are not opaque.
        let mut images: HashMap<String, (Handle<Image>, bool)> = HashMap::new();
        let mut by_name: HashMap<String, Handle<Image>> = HashMap::new();
        for t in &textures {
            match texture_image(t) {
                Ok((image, alpha)) => {
                    let handle = load_context.add_labeled_asset(
                        DffAssetLabel::Texture(t.name.clone()).to_string(),
                        image,
                    );
                    images.insert(t.name.to_ascii_lowercase(), (handle.clone(), alpha));
                    by_name.insert(t.name.clone(), handle);
                }
                Err(e) => warnings.push(format!("texture {:?}: {e}", t.name)),
            }
        }

        let skeleton = game.skeleton();
        let mut missing_textures: Vec<String> = Vec::new();
        let mut meshes: HashMap<
            usize,
            (
                Vec<(Handle<Mesh>, Handle<StandardMaterial>)>,
                Option<DffSkin>,
            ),
        > = HashMap::new();
        let mut clumps = Vec::new();
        let mut geometry_base = 0;
        for (c, clump) in dff.clumps.iter().enumerate() {
            let frames = clump_frames(clump, &skeleton);
            let order = parents_first(&frames);
            let hierarchy = clump.bones();
            let bones: Vec<usize> = match &hierarchy {
                Some(b) => b.iter().filter_map(|b| b.frame).collect(),
                None => (0..frames.len())
                    .filter(|&f| frames[f].target.is_some())
                    .collect(),
            };
            // A skinned ped stands on its lowest joint (its toes); a GTA III ped of parts, as
            // its game places it, on its soles: the lowest point of its parts' meshes at rest
            // (its lowest frames, the ankles, are centimetres above them). Props and vehicles
            // keep their own origin.
            let iii_ped = crate::skeleton::names_iii_ped(frames.iter().map(|f| f.name.as_str()));
            let lift = if hierarchy.is_some() {
                lowest_bone(&frames, &bones).map_or(0.0, |z| -z)
            } else if iii_ped {
                lowest_vertex(clump, &frames)
                    .or_else(|| lowest_bone(&frames, &bones))
                    .map_or(0.0, |z| -z)
            } else {
                0.0
            };
            let mut atomics = Vec::new();
            for atomic in &clump.atomics {
                let geometry = &clump.geometries[atomic.geometry];
                let g = geometry_base + atomic.geometry;
                if let Entry::Vacant(slot) = meshes.entry(g) {
                    let binding = skin_of(clump, atomic.frame, geometry, hierarchy.as_deref())
                        .map_err(|why| {
                            warnings.push(format!(
                                "geometry {g} on frame {:?} is drawn unskinned: {why}",
                                frames[atomic.frame].name
                            ))
                        })
                        .ok()
                        .flatten();
                    let parts = geometry_parts(
                        load_context,
                        g,
                        geometry,
                        binding.as_ref(),
                        &images,
                        &mut missing_textures,
                    );
                    let skin = binding.map(|binding| DffSkin {
                        inverse_bindposes: load_context.add_labeled_asset(
                            DffAssetLabel::Skin(g).to_string(),
                            SkinnedMeshInverseBindposes::from(binding.inverse_bind_matrices),
                        ),
                        joints: binding.joints,
                    });
                    slot.insert((parts, skin));
                }
                let (parts, skin) = meshes[&g].clone();
                let name = &frames[atomic.frame].name;
                let hidden = !settings.show_all_atomics
                    && (name.to_ascii_lowercase().contains("_dam")
                        || name.to_ascii_lowercase().contains("_vlo"));
                atomics.push(DffAtomic {
                    frame: atomic.frame,
                    geometry: g,
                    parts,
                    skin,
                    hidden,
                });
            }
            geometry_base += clump.geometries.len();
            let mut clump_model = DffClump {
                scene: Handle::default(),
                frames,
                order,
                atomics,
                bones,
                lift,
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
        missing_textures.sort();
        missing_textures.dedup();
        for name in &missing_textures {
            let line = format!("texture {name:?} is in no texture dictionary");
            warn!("{}: {line}", load_context.path());
        }
        Ok(Dff {
            file: dff,
            clumps,
            textures: by_name,
            missing_textures,
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

/// A frame's local matrix as a `Transform`. RenderWare matrices are not always orthonormal (1e-2
/// off in some files, §7.3): the rotation is the nearest one, any scale is kept.
fn frame_transform(m: Mat4) -> Transform {
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    let finite = scale.is_finite() && rotation.is_finite() && translation.is_finite();
    if !finite {
        return Transform::from_translation(if translation.is_finite() {
            translation
        } else {
            Vec3::ZERO
        });
    }
    Transform {
        translation,
        rotation: rotation.normalize(),
        scale,
    }
}

/// The frames of a clump with names, bone ids and target ids. Bones of an HAnim hierarchy are
/// bound by id and name like the game's skeleton's; in a clump without one (GTA III peds, props,
/// vehicles) every named frame is, by name. The hierarchy's root bone rests at the rotation
/// the game's clips are relative to, not at the file's bind rotation (§6.3): the inverse bind
/// matrices make the skin follow whatever the bones do, and a clip that leaves the root alone
/// then shows the ped upright, like the built-in skeleton.
fn clump_frames(clump: &Clump, skeleton: &Skeleton) -> Vec<DffFrame> {
    let hierarchy = clump.hierarchy_frame().is_some();
    let root_bone = clump.bones().and_then(|b| b.first().and_then(|b| b.frame));
    clump
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f.name.clone().unwrap_or_else(|| format!("Frame{i}"));
            let bone_id = f
                .hanim
                .as_ref()
                .map(|h| h.node_id)
                .filter(|&id| id >= 0 && hierarchy);
            let bone = BoneRef {
                name: name.clone(),
                id: bone_id,
            };
            let is_bone = if hierarchy {
                bone_id.is_some()
            } else {
                f.name.is_some()
            };
            let target = is_bone.then(|| bone_target_id(skeleton, &bone));
            let mut rest = frame_transform(f.local_matrix());
            if Some(i) == root_bone
                && let Some(b) = skeleton.find(&bone)
                && skeleton.bones[b].parent.is_none()
            {
                rest.rotation = skeleton.bones[b].rest.rotation;
            }
            DffFrame {
                name,
                parent: f.parent,
                rest,
                bone_id,
                target,
            }
        })
        .collect()
}

/// Frame indices with every parent before its children (children in file order).
fn parents_first(frames: &[DffFrame]) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); frames.len()];
    let mut order = Vec::with_capacity(frames.len());
    for (i, f) in frames.iter().enumerate() {
        match f.parent.filter(|&p| p < frames.len()) {
            Some(p) => children[p].push(i),
            None => order.push(i),
        }
    }
    let mut next = 0;
    while next < order.len() {
        order.extend_from_slice(&children[order[next]]);
        next += 1;
    }
    order
}

/// World (clump-space) matrices of the frames at rest.
pub(crate) fn rest_worlds(frames: &[DffFrame], order: &[usize]) -> Vec<Mat4> {
    let mut world = vec![Mat4::IDENTITY; frames.len()];
    for &i in order {
        let local = frames[i].rest.to_matrix();
        world[i] = match frames[i].parent {
            Some(p) if p < frames.len() => world[p] * local,
            _ => local,
        };
    }
    world
}

/// The lowest height (GTA Z) of a bone at rest.
fn lowest_bone(frames: &[DffFrame], bones: &[usize]) -> Option<f32> {
    let world = rest_worlds(frames, &parents_first(frames));
    bones
        .iter()
        .map(|&b| world[b].w_axis.z)
        .filter(|z| z.is_finite())
        .reduce(f32::min)
}

/// The lowest height (GTA Z) of any atomic's vertices, each placed by its frame at rest.
fn lowest_vertex(clump: &Clump, frames: &[DffFrame]) -> Option<f32> {
    let world = rest_worlds(frames, &parents_first(frames));
    clump
        .atomics
        .iter()
        .filter_map(|a| {
            let at = world.get(a.frame)?;
            let positions = clump
                .geometries
                .get(a.geometry)?
                .morph_targets
                .first()?
                .positions
                .as_ref()?;
            positions
                .iter()
                .map(|p| at.transform_point3(*p).z)
                .filter(|z| z.is_finite())
                .reduce(f32::min)
        })
        .reduce(f32::min)
}

/// How a skinned geometry binds to the clump's bones.
struct SkinBinding {
    /// The frame of each skin bone.
    joints: Vec<usize>,
    inverse_bind_matrices: Vec<Mat4>,
    /// The skin bone a vertex whose weights are all zero follows: the atomic's own frame's.
    fallback: u16,
}

/// Bevy's limit on the joints of one skinned mesh.
const MAX_JOINTS: usize = 256;

/// The skin binding of an atomic's geometry; `Ok(None)` when it has no skin, `Err` with the
/// reason when its skin cannot be used (it is then drawn rigidly on its frame).
fn skin_of(
    clump: &Clump,
    atomic_frame: usize,
    geometry: &Geometry,
    hierarchy: Option<&[crate::formats::dff::Bone]>,
) -> Result<Option<SkinBinding>, String> {
    let Some(skin) = &geometry.skin else {
        return Ok(None);
    };
    let Some(bones) = hierarchy else {
        return Err("the clump has no HAnim hierarchy".into());
    };
    if skin.num_bones != bones.len() {
        return Err(format!(
            "the skin has {} bones, the hierarchy {} nodes",
            skin.num_bones,
            bones.len()
        ));
    }
    if skin.num_bones > MAX_JOINTS {
        return Err(format!("{} bones, more than {MAX_JOINTS}", skin.num_bones));
    }
    let joints = bones
        .iter()
        .map(|b| {
            b.frame
                .ok_or_else(|| format!("no frame carries bone id {}", b.node_id))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if skin.inverse_bind.len() != joints.len() || clump.frames.len() <= atomic_frame {
        return Err("the skin's matrices do not match its bones".into());
    }
    let fallback = joints.iter().position(|&f| f == atomic_frame).unwrap_or(0) as u16;
    Ok(Some(SkinBinding {
        joints,
        inverse_bind_matrices: skin.inverse_bind.clone(),
        fallback,
    }))
}

/// sRGB bytes as a colour.
fn srgb(c: [u8; 4]) -> Color {
    Color::srgba_u8(c[0], c[1], c[2], c[3])
}

/// One mesh and material per material of a geometry that has triangles: the vertices those
/// triangles use, with normals (computed when the file has none), the first two UV sets, prelit
/// colours, and joints and weights when skinned.
fn geometry_parts(
    load_context: &mut LoadContext,
    g: usize,
    geometry: &Geometry,
    skin: Option<&SkinBinding>,
    images: &HashMap<String, (Handle<Image>, bool)>,
    missing: &mut Vec<String>,
) -> Vec<(Handle<Mesh>, Handle<StandardMaterial>)> {
    let positions = geometry.positions();
    let normals = geometry.normals();
    let faces = geometry.faces();
    let n = positions.len();
    let mut parts = Vec::new();
    for (m, material) in geometry.materials.iter().enumerate() {
        let mut remap = vec![u32::MAX; n];
        let mut used: Vec<usize> = Vec::new();
        let mut indices: Vec<u32> = Vec::new();
        for face in faces.iter().filter(|f| f.material as usize == m) {
            if face.vertices.iter().any(|&v| v as usize >= n) {
                continue;
            }
            for &v in &face.vertices {
                let v = v as usize;
                if remap[v] == u32::MAX {
                    remap[v] = used.len() as u32;
                    used.push(v);
                }
                indices.push(remap[v]);
            }
        }
        if indices.is_empty() {
            continue;
        }
        let mut mesh = Mesh::new(
            PrimitiveTopology::TriangleList,
            RenderAssetUsages::default(),
        );
        let pick = |values: &[Vec3]| -> Vec<[f32; 3]> {
            used.iter().map(|&v| values[v].to_array()).collect()
        };
        mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, pick(positions));
        for (set, attribute) in [(0, Mesh::ATTRIBUTE_UV_0), (1, Mesh::ATTRIBUTE_UV_1)] {
            if let Some(uvs) = geometry.uv_sets.get(set).filter(|u| u.len() == n) {
                let uvs: Vec<[f32; 2]> = used.iter().map(|&v| uvs[v]).collect();
                mesh.insert_attribute(attribute, uvs);
            }
        }
        if let Some(prelit) = geometry.prelit.as_ref().filter(|p| p.len() == n) {
            let colours: Vec<[f32; 4]> = used
                .iter()
                .map(|&v| srgb(prelit[v]).to_linear().to_f32_array())
                .collect();
            mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colours);
        }
        if let (Some(binding), Some(s)) = (skin, &geometry.skin) {
            let mut joints = Vec::with_capacity(used.len());
            let mut weights = Vec::with_capacity(used.len());
            for &v in &used {
                let (j, w) = vertex_influences(s, v, binding);
                joints.push(j);
                weights.push(w);
            }
            mesh.insert_attribute(
                Mesh::ATTRIBUTE_JOINT_INDEX,
                VertexAttributeValues::Uint16x4(joints),
            );
            mesh.insert_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, weights);
        }
        mesh.insert_indices(Indices::U32(indices));
        match normals.filter(|ns| ns.len() == n) {
            Some(ns) => mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, pick(ns)),
            None => mesh.compute_smooth_normals(),
        }
        if skin.is_some()
            && let Err(e) = mesh.generate_skinned_mesh_bounds()
        {
            warn!("{}: geometry {g}: {e}", load_context.path());
        }
        let mesh = load_context.add_labeled_asset(
            DffAssetLabel::Mesh {
                geometry: g,
                material: m,
            }
            .to_string(),
            mesh,
        );
        let texture = material.texture.as_ref().filter(|t| !t.name.is_empty());
        let image = texture.and_then(|t| images.get(&t.name.to_ascii_lowercase()));
        if let (Some(t), None) = (texture, image) {
            missing.push(t.name.clone());
        }
        let colour = srgb(material.colour);
        let alpha_mode = if material.colour[3] < 255 {
            AlphaMode::Blend
        } else if image.is_some_and(|(_, alpha)| *alpha) {
            AlphaMode::Mask(0.5)
        } else {
            AlphaMode::Opaque
        };
        let standard = StandardMaterial {
            base_color: colour,
            base_color_texture: image.map(|(h, _)| h.clone()),
            alpha_mode,
            perceptual_roughness: 0.85,
            metallic: 0.0,
            reflectance: 0.2,
            ..default()
        };
        let material = load_context.add_labeled_asset(
            DffAssetLabel::Material {
                geometry: g,
                material: m,
            }
            .to_string(),
            standard,
        );
        parts.push((mesh, material));
    }
    parts
}

/// A vertex's four joints and weights for Bevy: weights normalised to sum 1, zero-weight slots
/// pointed at joint 0 (their stored index is junk, §8), a vertex with no weight at all given to
/// the atomic's own bone, indices past the skin's bones dropped.
fn vertex_influences(
    skin: &crate::formats::dff::Skin,
    v: usize,
    b: &SkinBinding,
) -> ([u16; 4], [f32; 4]) {
    let (Some(idx), Some(w)) = (skin.bone_indices.get(v), skin.weights.get(v)) else {
        return ([b.fallback, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
    };
    let mut joints = [0u16; 4];
    let mut weights = [0f32; 4];
    for k in 0..4 {
        let ok = w[k].is_finite() && w[k] > 0.0 && usize::from(idx[k]) < b.joints.len();
        if ok {
            joints[k] = u16::from(idx[k]);
            weights[k] = w[k];
        }
    }
    let sum: f32 = weights.iter().sum();
    if sum <= 0.0 {
        return ([b.fallback, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
    }
    (joints, weights.map(|x| x / sum))
}

/// The largest texture side every GPU takes (wgpu's default limit); GTA's textures are at most
/// 2048.
const MAX_TEXTURE_SIDE: u32 = 8192;

/// Why a texture of a dictionary is not used.
#[derive(Debug, thiserror::Error)]
enum TextureImageError {
    #[error("{0}")]
    Decode(#[from] crate::formats::txd::TextureDecodeError),
    #[error("{0}×{1} pixels: not a size a GPU texture takes (1 to {MAX_TEXTURE_SIDE} a side)")]
    Size(u32, u32),
}

/// A texture as a Bevy image (sRGB RGBA8) with every mip level that decodes and has its chain
/// size, sampled as the texture's filter and addressing say (§3.5); and whether any texel of
/// level 0 is not opaque.
fn texture_image(t: &TextureNative) -> Result<(Image, bool), TextureImageError> {
    let first = t.decode(0)?;
    if first.width == 0 || first.height == 0 || first.width.max(first.height) > MAX_TEXTURE_SIDE {
        return Err(TextureImageError::Size(first.width, first.height));
    }
    let alpha = first.pixels.chunks_exact(4).any(|p| p[3] < 255);
    let (width, height) = (first.width, first.height);
    let mut data = first.pixels;
    let mut levels = 1;
    for level in 1..t.levels.len() {
        let (w, h) = ((width >> level).max(1), (height >> level).max(1));
        match t.decode(level) {
            Ok(img) if img.width == w && img.height == h => {
                data.extend_from_slice(&img.pixels);
                levels += 1;
            }
            _ => break,
        }
        if w == 1 && h == 1 {
            break;
        }
    }
    let level0 = (width * height * 4) as usize;
    let mut image = Image::new(
        Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data[..level0].to_vec(),
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::default(),
    );
    // The mip levels follow level 0 in the data, as wgpu uploads them.
    image.data = Some(data);
    image.texture_descriptor.mip_level_count = levels;
    let address = |bits: u32| match bits & 0xF {
        2 => ImageAddressMode::MirrorRepeat,
        3 | 4 => ImageAddressMode::ClampToEdge,
        _ => ImageAddressMode::Repeat,
    };
    let filter = t.filter_addressing & 0xFF;
    // 1 nearest, 3 and 4 point-sampled mip levels; the others bilinear (§3.5).
    let nearest = matches!(filter, 1 | 3 | 4);
    let mag = if nearest {
        ImageFilterMode::Nearest
    } else {
        ImageFilterMode::Linear
    };
    image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor {
        address_mode_u: address(t.filter_addressing >> 8),
        address_mode_v: address(t.filter_addressing >> 12),
        mag_filter: mag,
        min_filter: mag,
        mipmap_filter: if matches!(filter, 4 | 6) {
            ImageFilterMode::Linear
        } else {
            ImageFilterMode::Nearest
        },
        ..default()
    });
    Ok((image, alpha))
}
