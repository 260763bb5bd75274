//! Crowd characters drawn by instanced GPU skinning: [`CrowdDrawPlugin`]. A [`CrowdCharacter`]
//! wearing a [`CrowdModel`] (or, with the `gltf` feature, a glTF character:
//! `crate::plugin::CrowdGltfModel`) gets one child entity per (atomic, material) of the model,
//! drawn through Bevy's own mesh pipeline with a [`CrowdMaterial`] whose vertex shader skins
//! from one buffer of every drawn character's bones. Bevy batches the children of a model into
//! one draw per part, culls each against the frustum, and shades them as `StandardMaterial`
//! shades a single ped. The design and what was measured: the repository's
//! `docs/design/crowd-gpu.md`.

use super::crowd_skin::{SkinBinding, bind};
use super::{CrowdModel, Dff, DffClump, GtaModel};
use crate::plugin::PlaybackSystems;
use crate::plugin::skeletal::{
    BoneRows, CrowdBoneRows, CrowdCharacter, CrowdDrawn, CrowdPose, CrowdSkeletons, bone_rows,
};
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::{AssetId, RenderAssetUsages, UntypedAssetId, embedded_asset};
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::NoAutoAabb;
use bevy::math::{Affine3A, Vec3A};
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::mesh::{MeshTag, MeshVertexAttribute, MeshVertexBufferLayoutRef, VertexAttributeValues};
use bevy::pbr::{
    ExtendedMaterial, MaterialExtension, MaterialExtensionKey, MaterialExtensionPipeline,
};
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::{
    AsBindGroup, RenderPipelineDescriptor, SpecializedMeshPipelineError, VertexFormat,
};
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::storage::{GpuShaderBuffer, ShaderBuffer};
use bevy::render::{ExtractSchedule, MainWorld, Render, RenderApp, RenderSystems};
use bevy::shader::ShaderRef;
use std::sync::Arc;

const SHADER: &str = "embedded://rigplay/plugin/dff/crowd_draw.wgsl";

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
    /// Per character slot, `stride` bones as 3×4 affine rows (model space, Bevy's axes); shared
    /// by every crowd material.
    #[storage(100, read_only)]
    pub bones: Handle<ShaderBuffer>,
    /// Per skin joint of the atomic (one for a rigid atomic): its inverse bind matrix (3×4 rows)
    /// and its bone's index in the crowd skeleton, 64 bytes each.
    #[storage(101, read_only)]
    pub joints: Handle<ShaderBuffer>,
    /// Bones per character slot in `bones`.
    #[uniform(102)]
    pub stride: u32,
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

/// Draws every [`CrowdCharacter`] that wears a [`CrowdModel`] (a DFF ped) or, with the `gltf`
/// feature, a `CrowdGltfModel` (a glTF character, its clips retargeted onto its own rig) by
/// instanced GPU skinning. Needs [`super::DffPlugin`] and Bevy's rendering (`DefaultPlugins`).
///
/// - A glTF character gets one child per primitive of each mesh of the file: a skinned mesh
///   skins from its skin's joints (its own node's transform ignored, as glTF and Bevy's
///   `SkinnedMesh` do), a mesh on a node without a skin moves with that node. Its materials are
///   the `StandardMaterial`s Bevy's glTF loader made of the file's.
/// - A slot holds as many bones as the largest skeleton drawn: 32 (the SA ped's) until a glTF
///   rig of more nodes is drawn, when every slot (and every material) is laid out again.
/// - Each character gets one child per (atomic, material) of its model's first clump that has
///   bones, skinned atomics and rigid ones (a cap on the head, a GTA III ped's parts) alike,
///   but not the hidden (`_dam`, `_vlo`) ones: `Mesh3d` (a copy of the DFF's mesh, its joints under
///   [`ATTRIBUTE_CROWD_JOINT_INDEX`] and [`ATTRIBUTE_CROWD_JOINT_WEIGHT`]), a [`CrowdMaterial`]
///   shared by every character of the model, a `MeshTag` (the character's slot in the bone
///   buffer) and an `Aabb` that follows the pose, for Bevy's frustum culling.
/// - Each frame, after the crowd is posed, the bones of every drawn character are written into
///   one storage buffer, uploaded whole.
/// - A drawn character's bones are not drawn as skeleton gizmo lines over it.
/// - A model that fails to load, or has no atomic on a bone, leaves its characters undrawn with
///   one warning. A model reloaded while the crowd plays is drawn anew
///   from the next frame; the playheads are the characters' and do not change.
/// - Where the device has no storage buffers (WebGL2), one warning is logged and each character
///   is drawn the Bevy way instead: a child [`super::GtaModel`] of its model (bone entities and
///   `SkinnedMesh`es), or the glTF file's scene, whose bones follow the character's
///   [`crate::plugin::CrowdPose`] every frame (a glTF's nodes matched by name). That costs what
///   `GtaModel` costs (an entity per bone).
///   [`CrowdDrawSettings::bevy_skinning`] asks for that way on any device.
///
/// The CPU palettes of [`super::CrowdSkinPose`] are not needed for drawing: add that component
/// only where you want them.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// # use rigplay::plugin::CrowdDrawPlugin;
/// fn main() {
///     App::new()
///         .add_plugins((DefaultPlugins, IfpPlugin, DffPlugin, CrowdDrawPlugin))
///         .add_systems(Startup, spawn)
///         .run();
/// }
///
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/sa_ped.ifp#walk");
///     let ped = assets.load("characters/ped.dff");
///     for i in 0..1000 {
///         let at = Transform::from_xyz((i % 40) as f32, 0.0, (i / 40) as f32);
///         commands.spawn((CrowdCharacter::new(GtaGame::Sa, walk.clone()), CrowdModel(ped.clone()), at));
///     }
/// }
/// ```
pub struct CrowdDrawPlugin;

impl Plugin for CrowdDrawPlugin {
    fn build(&self, app: &mut App) {
        embedded_asset!(app, "crowd_draw.wgsl");
        app.add_plugins(MaterialPlugin::<CrowdMaterial>::default())
            .init_resource::<CrowdDraw>()
            .init_resource::<CrowdDrawSettings>()
            .init_resource::<CrowdBoneRows>()
            .add_systems(
                PostUpdate,
                (
                    // The crowd's posing (in `Apply`) writes the bone rows these size.
                    (
                        dress_crowd,
                        // (Where Bevy's glTF loader is.)
                        #[cfg(feature = "gltf")]
                        super::crowd_gltf::dress_gltf_crowd
                            .run_if(resource_exists::<Assets<bevy::gltf::Gltf>>),
                        size_crowd_bones,
                    )
                        .chain()
                        .after(PlaybackSystems::Prepare)
                        .before(PlaybackSystems::Apply),
                    follow_poses
                        .after(PlaybackSystems::Apply)
                        .before(bevy::camera::visibility::VisibilitySystems::CheckVisibility),
                    pose_fallback_models
                        .after(PlaybackSystems::Apply)
                        .before(bevy::transform::TransformSystems::Propagate),
                ),
            );
        if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app
                .init_resource::<CrowdBoneUpload>()
                .add_systems(ExtractSchedule, extract_crowd_bones)
                .add_systems(
                    Render,
                    write_crowd_bones.in_set(RenderSystems::PrepareResources),
                );
        }
    }
}

/// A drawn model, built once per (model, skeleton): its parts and how far its flesh reaches
/// from a joint.
pub(super) struct DrawnModel {
    pub(super) parts: Vec<(Handle<Mesh>, Handle<CrowdMaterial>)>,
    /// The farthest a vertex lies from its most weighted joint (metres): the margin around the
    /// joints that the parts' bounds take.
    pub(super) reach: f32,
    /// A glTF model's rig (kept, so that its address in the model's key names it).
    #[cfg(feature = "gltf")]
    pub(super) _rig: Option<Arc<crate::plugin::skeletal::CrowdSkeleton>>,
}

/// What a drawn model is built for: a DFF on a game's skeleton, or a glTF on its rig (the rig's
/// address).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum ModelKey {
    Dff(AssetId<Dff>, GtaGame),
    #[cfg(feature = "gltf")]
    Gltf(AssetId<bevy::gltf::Gltf>, usize),
}

impl ModelKey {
    /// The model's asset.
    fn asset(self) -> UntypedAssetId {
        match self {
            ModelKey::Dff(id, _) => id.untyped(),
            #[cfg(feature = "gltf")]
            ModelKey::Gltf(id, _) => id.untyped(),
        }
    }
}

/// The crowd's drawing state: the bone buffer, the slots, the models built.
#[derive(Resource, Default)]
pub(super) struct CrowdDraw {
    pub(super) bones: Option<Handle<ShaderBuffer>>,
    /// Bones per slot: the most bones of the three games' crowd skeletons and of the glTF
    /// rigs drawn.
    pub(super) stride: u32,
    /// The stride the bone buffer and the materials are laid out for.
    laid_stride: u32,
    /// Each slot's character.
    slots: Vec<Option<Entity>>,
    free: Vec<u32>,
    slot_of: HashMap<Entity, u32>,
    pub(super) models: HashMap<ModelKey, Arc<DrawnModel>>,
    /// Models that cannot be drawn, each warned of once (again when they change).
    pub(super) undrawable: HashSet<UntypedAssetId>,
    /// Whether the missing storage buffers were warned of.
    no_storage_warned: bool,
    /// The slots the bone buffer holds (a power of two, so that it is rarely made anew).
    capacity: usize,
    /// Frames left in which every crowd material is marked changed, so that its bind group
    /// takes the bone buffer made anew when the capacity grew.
    rebind: u8,
    /// Whether the bone rows are written this frame (and not yet sent to the render world).
    written: bool,
}

/// A bone in the bone buffer.
const BONE_BYTES: usize = size_of::<BoneRows>();

impl CrowdDraw {
    /// The stride, first worked out from the games' skeletons.
    pub(super) fn init_stride(&mut self, skeletons: &CrowdSkeletons) {
        if self.stride == 0 {
            self.stride = [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa]
                .map(|g| skeletons.targets(g).len() as u32)
                .into_iter()
                .max()
                .unwrap_or(1);
        }
    }

    /// Whether characters are drawn as Bevy's skinned meshes (no storage buffers on `device`,
    /// or asked for), warning once of missing storage buffers.
    pub(super) fn fallback(
        &mut self,
        device: Option<&RenderDevice>,
        settings: &CrowdDrawSettings,
    ) -> bool {
        let no_storage =
            device.is_some_and(|d| d.limits().max_storage_buffers_per_shader_stage < 4);
        if no_storage && !self.no_storage_warned {
            warn!(
                "the device has no storage buffers (WebGL2?): crowd characters are drawn as Bevy's skinned meshes, with an entity per bone"
            );
            self.no_storage_warned = true;
        }
        no_storage || settings.bevy_skinning
    }

    /// The bone buffer, made on first use.
    pub(super) fn bone_buffer(
        &mut self,
        buffers: &mut Assets<ShaderBuffer>,
    ) -> Handle<ShaderBuffer> {
        self.bones
            .get_or_insert_with(|| {
                buffers.add(ShaderBuffer::with_size(
                    BONE_BYTES,
                    RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
                ))
            })
            .clone()
    }

    /// Gives `entity` a slot and the parts of `drawn` (children tagged with the slot), built
    /// for `key`.
    pub(super) fn dress(
        &mut self,
        commands: &mut Commands,
        entity: Entity,
        drawn: &DrawnModel,
        key: ModelKey,
    ) {
        let slot = self.take_slot(entity);
        let parts: Vec<Entity> = drawn
            .parts
            .iter()
            .map(|(mesh, material)| {
                commands
                    .spawn((
                        Mesh3d(mesh.clone()),
                        MeshMaterial3d(material.clone()),
                        MeshTag(slot),
                        NoAutoAabb,
                        Aabb::default(),
                        CrowdPart { reach: drawn.reach },
                        ChildOf(entity),
                    ))
                    .id()
            })
            .collect();
        commands
            .entity(entity)
            .insert((CrowdDressed { model: key, parts }, CrowdDrawn { slot }));
    }

    /// Dresses `entity` the Bevy way: `model` (spawned as its child) drawn by Bevy's skinned
    /// meshes, its frames matched to the pose's bones by animation target, or by name.
    pub(super) fn dress_fallback(
        &mut self,
        commands: &mut Commands,
        entity: Entity,
        model: impl Bundle,
        key: ModelKey,
        by_name: bool,
    ) {
        let model = commands.spawn((model, ChildOf(entity))).id();
        commands.entity(entity).insert((
            CrowdDressed {
                model: key,
                parts: vec![model],
            },
            CrowdDrawn { slot: NO_SLOT },
            CrowdFallback { model, by_name },
        ));
    }

    /// Forgets the models that `events` say changed or went (built again, and warned of
    /// again), and returns them.
    pub(super) fn forget_changed<A: Asset>(
        &mut self,
        events: &mut MessageReader<AssetEvent<A>>,
    ) -> HashSet<AssetId<A>> {
        let mut changed = HashSet::new();
        for event in events.read() {
            if let AssetEvent::Modified { id } | AssetEvent::Removed { id } = event {
                changed.insert(*id);
            }
        }
        for id in &changed {
            let id = id.untyped();
            self.models.retain(|key, _| key.asset() != id);
            self.undrawable.remove(&id);
        }
        changed
    }

    fn take_slot(&mut self, character: Entity) -> u32 {
        if let Some(&slot) = self.slot_of.get(&character) {
            return slot;
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() as u32 - 1
        });
        self.slots[slot as usize] = Some(character);
        self.slot_of.insert(character, slot);
        slot
    }

    pub(super) fn give_back(&mut self, character: Entity) {
        if let Some(slot) = self.slot_of.remove(&character) {
            self.slots[slot as usize] = None;
            self.free.push(slot);
        }
    }
}

/// On a drawn crowd character: its model and parts.
#[derive(Component)]
pub(super) struct CrowdDressed {
    pub(super) model: ModelKey,
    parts: Vec<Entity>,
}

/// How [`CrowdDrawPlugin`] draws the crowd.
#[derive(Resource, Debug, Clone, Default, Reflect)]
#[reflect(Resource)]
pub struct CrowdDrawSettings {
    /// Draw every crowd character as Bevy's skinned meshes (a [`GtaModel`] with bone entities,
    /// posed from the character's pose), as on a device without storage buffers, rather than by
    /// instanced skinning. Characters already drawn keep their way until their model changes.
    pub bevy_skinning: bool,
}

/// On a crowd character drawn by Bevy's skinned meshes (no storage buffers): the child
/// [`GtaModel`] (or glTF scene) whose bones follow its pose, matched by animation target (or,
/// `by_name`, by name).
#[derive(Component)]
struct CrowdFallback {
    model: Entity,
    by_name: bool,
}

/// A slot no character has: a character drawn by Bevy's skinned meshes writes no bone rows.
const NO_SLOT: u32 = u32::MAX;

/// On a part of a drawn crowd character: how far its flesh reaches from the joints.
#[derive(Component)]
struct CrowdPart {
    reach: f32,
}

/// Gives every crowd character wearing a loaded DFF model its parts (and takes them away when
/// the model changes, reloads or goes).
#[allow(clippy::too_many_arguments)]
fn dress_crowd(
    mut commands: Commands,
    mut draw: ResMut<CrowdDraw>,
    device: Option<Res<RenderDevice>>,
    assets: Res<AssetServer>,
    models: Res<Assets<Dff>>,
    skeletons: Res<CrowdSkeletons>,
    settings: Res<CrowdDrawSettings>,
    mut build: BuildParams,
    mut events: MessageReader<AssetEvent<Dff>>,
    mut removed: RemovedComponents<CrowdModel>,
    undressed: Query<(Entity, &CrowdCharacter, &CrowdModel), Without<CrowdDressed>>,
    dressed: Query<(Entity, &CrowdCharacter, &CrowdModel, &CrowdDressed)>,
    restyled: Query<
        (Entity, &CrowdCharacter, &CrowdModel, &CrowdDressed),
        Or<(Changed<CrowdModel>, Changed<CrowdCharacter>)>,
    >,
    worn: Query<&CrowdDressed>,
    // A character wearing a glTF model too is posed on its rig, and dressed in that alone.
    #[cfg(feature = "gltf")] gltf_worn: Query<(), With<crate::plugin::CrowdGltfModel>>,
) {
    #[cfg(feature = "gltf")]
    let wears_gltf = |e: Entity| gltf_worn.contains(e);
    #[cfg(not(feature = "gltf"))]
    let wears_gltf = |_: Entity| false;
    let undressed = undressed.iter().filter(|(e, _, _)| !wears_gltf(*e));
    let draw = &mut *draw;
    draw.init_stride(&skeletons);
    let fallback = draw.fallback(device.as_deref(), &settings);
    // Characters whose model changed, reloaded or went are undressed (and dressed again below,
    // from the next frame).
    let changed = draw.forget_changed(&mut events);
    // Every dressed character where a model changed; else only those whose model or game may
    // have (not the whole crowd every frame).
    let suspects = if changed.is_empty() {
        restyled.iter().collect::<Vec<_>>()
    } else {
        dressed.iter().collect()
    };
    // (A character dressed in a glTF model is the glTF wing's.)
    let suspects = suspects
        .into_iter()
        .filter(|s| matches!(s.3.model, ModelKey::Dff(..)));
    for (entity, character, model, dressed) in suspects {
        let key = ModelKey::Dff(model.0.id(), character.game);
        if changed.contains(&model.0.id()) || dressed.model != key || wears_gltf(entity) {
            undress(&mut commands, draw, entity, dressed);
        }
    }
    // A character that lost its model (or went: its parts went with it) gives its slot back.
    for entity in removed.read() {
        match worn.get(entity) {
            Ok(dressed) => undress(&mut commands, draw, entity, dressed),
            Err(_) => draw.give_back(entity),
        }
    }
    if fallback {
        for (entity, character, model) in undressed {
            let id = model.0.id();
            if draw.undrawable.contains(&id.untyped()) || failed_to_load(draw, &assets, &model.0) {
                continue;
            }
            let key = ModelKey::Dff(id, character.game);
            draw.dress_fallback(
                &mut commands,
                entity,
                GtaModel::new(model.0.clone()),
                key,
                false,
            );
        }
        return;
    }
    let bones = draw.bone_buffer(&mut build.buffers);
    for (entity, character, model) in undressed {
        let id = model.0.id();
        if draw.undrawable.contains(&id.untyped()) {
            continue;
        }
        let key = ModelKey::Dff(id, character.game);
        let drawn = match draw.models.get(&key) {
            Some(drawn) => drawn.clone(),
            None => {
                let Some(dff) = models.get(&model.0) else {
                    failed_to_load(draw, &assets, &model.0);
                    continue;
                };
                let targets = skeletons.targets(character.game);
                let Some(binding) = bind(dff, targets, &build.ibms) else {
                    continue;
                };
                match build_model(dff, &binding, targets, &bones, draw.stride, &mut build) {
                    Ok(drawn) => {
                        let drawn = Arc::new(drawn);
                        draw.models.insert(key, drawn.clone());
                        drawn
                    }
                    Err(why) => {
                        warn!(
                            "crowd characters wearing {:?} are not drawn: {why}",
                            model.0.path()
                        );
                        draw.undrawable.insert(id.untyped());
                        continue;
                    }
                }
            }
        };
        draw.dress(&mut commands, entity, &drawn, key);
    }
}

/// Whether `model` failed to load; if so, it is warned of (once) and remembered as undrawable.
pub(super) fn failed_to_load<A: Asset>(
    draw: &mut CrowdDraw,
    assets: &AssetServer,
    model: &Handle<A>,
) -> bool {
    if !assets.load_state(model).is_failed() {
        return false;
    }
    warn!(
        "crowd characters wearing {:?} are not drawn: the model failed to load",
        model.path()
    );
    draw.undrawable.insert(model.id().untyped());
    true
}

pub(super) fn undress(
    commands: &mut Commands,
    draw: &mut CrowdDraw,
    entity: Entity,
    dressed: &CrowdDressed,
) {
    for &part in &dressed.parts {
        commands.entity(part).try_despawn();
    }
    if let Ok(mut e) = commands.get_entity(entity) {
        e.try_remove::<(CrowdDressed, CrowdDrawn, CrowdFallback)>();
    }
    draw.give_back(entity);
}

/// What building a drawn model writes to.
#[derive(bevy::ecs::system::SystemParam)]
pub(super) struct BuildParams<'w> {
    meshes: ResMut<'w, Assets<Mesh>>,
    standard: Res<'w, Assets<StandardMaterial>>,
    materials: ResMut<'w, Assets<CrowdMaterial>>,
    pub(super) buffers: ResMut<'w, Assets<ShaderBuffer>>,
    pub(super) ibms: Res<'w, Assets<SkinnedMeshInverseBindposes>>,
}

/// A model's parts for the crowd: per drawn atomic of its first clump that has bones, its joint
/// table, and per material a copy of the mesh with the crowd's joint attributes and a
/// [`CrowdMaterial`]. A skinned atomic's joints are its skin's; a rigid one (a cap on the head,
/// a GTA III ped's parts) has one joint: the nearest bone at or above its frame, with the rest
/// transforms of the frames between as its "inverse bind" matrix.
fn build_model(
    dff: &Dff,
    binding: &[SkinBinding],
    targets: &[AnimationTargetId],
    bones: &Handle<ShaderBuffer>,
    stride: u32,
    build: &mut BuildParams,
) -> Result<DrawnModel, String> {
    let clump = dff
        .clumps
        .iter()
        .find(|c| !c.bones.is_empty())
        .ok_or("it has no bones")?;
    let mut parts = Vec::new();
    let mut reach = 0.0f32;
    let mut unhung = 0;
    for (a, atomic) in clump.atomics.iter().enumerate() {
        if atomic.hidden {
            continue;
        }
        let skin = binding.iter().find(|b| b.atomic == a);
        let (joint_bones, inverse_binds) = match skin {
            Some(b) => (b.bones.clone(), b.inverse_binds.clone()),
            None => match rigid_joint(clump, atomic.frame, targets) {
                Some((bone, offset)) => (vec![bone], vec![offset]),
                None => {
                    unhung += 1;
                    continue;
                }
            },
        };
        let joints: Vec<(usize, Affine3A)> = joint_bones.into_iter().zip(inverse_binds).collect();
        let part_reach = add_parts(
            &joints,
            &atomic.parts,
            skin.is_some(),
            bones,
            stride,
            build,
            &mut parts,
        )?;
        reach = reach.max(part_reach);
    }
    if unhung > 0 {
        warn!("{unhung} atomic(s) of a crowd model hang on no bone and are not drawn");
    }
    if parts.is_empty() {
        return Err("it has no atomic on a bone to draw".into());
    }
    Ok(DrawnModel {
        parts,
        reach,
        #[cfg(feature = "gltf")]
        _rig: None,
    })
}

/// One drawn mesh's joint table: per joint, its bone in the crowd skeleton and its inverse bind
/// matrix. Adds the part of each (mesh, material) to `parts` and returns the farthest its flesh
/// reaches from a joint.
pub(super) fn add_parts(
    joints: &[(usize, Affine3A)],
    meshes: &[(Handle<Mesh>, Handle<StandardMaterial>)],
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
        let (mesh, part_reach) = crowd_mesh(mesh, &bind_points, skinned)?;
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

/// The crowd bone a rigid atomic on `frame` moves with: the nearest frame at or above it that is
/// one of the crowd skeleton's bones (`targets`), and the rest transforms of the frames from
/// there down to `frame` (not animated: they stay at rest on a model spawned with bones too).
fn rigid_joint(
    clump: &DffClump,
    frame: usize,
    targets: &[AnimationTargetId],
) -> Option<(usize, Affine3A)> {
    let mut offset = Affine3A::IDENTITY;
    let mut at = Some(frame);
    // A frame's parent chain is at most as long as the frames (a cycle ends the walk).
    for _ in 0..=clump.frames.len() {
        let f = clump.frames.get(at?)?;
        if let Some(bone) = f.target.and_then(|t| targets.iter().position(|x| *x == t)) {
            return Some((bone, offset));
        }
        offset = f.rest.compute_affine() * offset;
        at = f.parent;
    }
    None
}

/// `mesh` with its joints and weights moved to the crowd's attributes (a rigid mesh: every
/// vertex on joint 0, weight 1), and the farthest a vertex lies from its most weighted joint's
/// bind point.
fn crowd_mesh(mesh: &Mesh, bind_points: &[Vec3A], skinned: bool) -> Result<(Mesh, f32), String> {
    if !mesh.asset_usage.contains(RenderAssetUsages::MAIN_WORLD) {
        return Err("its meshes are kept only on the GPU".into());
    }
    let mut mesh = mesh.clone();
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

/// The rows of `m` (see [`bone_rows`]) as bytes.
fn push_rows(out: &mut Vec<u8>, m: &Affine3A) {
    for v in bone_rows(m) {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Sizes the bone rows for every slot (the crowd's posing writes each drawn character's into its
/// slot), and the bone buffer for the slots, in powers of two (a buffer of another size is a new
/// GPU buffer, and every crowd material's bind group is made again).
fn size_crowd_bones(
    mut draw: ResMut<CrowdDraw>,
    mut rows: ResMut<CrowdBoneRows>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    mut materials: ResMut<Assets<CrowdMaterial>>,
) {
    let draw = &mut *draw;
    let Some(handle) = &draw.bones else {
        return;
    };
    if draw.slots.is_empty() {
        return;
    }
    let stride = draw.stride as usize;
    let capacity = draw.slots.len().next_power_of_two().max(64);
    // A glTF rig with more bones than the stride widened it: every slot is laid out again.
    let restrided = draw.laid_stride != draw.stride;
    if capacity != draw.capacity || restrided {
        draw.capacity = capacity;
        draw.laid_stride = draw.stride;
        // For two frames: the buffer is prepared in the frame it changes.
        draw.rebind = 2;
        if let Some(mut buffer) = buffers.get_mut(handle) {
            *buffer = ShaderBuffer::with_size(
                capacity * stride * BONE_BYTES,
                RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
            );
        }
    }
    if draw.rebind > 0 {
        draw.rebind -= 1;
        for model in draw.models.values() {
            for (_, material) in &model.parts {
                if let Some(mut m) = materials.get_mut(material) {
                    m.extension.stride = draw.stride;
                }
            }
        }
    }
    let rows = &mut *rows;
    rows.stride = stride;
    rows.rows.resize(draw.slots.len() * stride, [0.0; 12]);
    rows.bounds
        .resize(draw.slots.len(), (Vec3A::ZERO, Vec3A::ZERO));
    draw.written = true;
}

/// The crowd's bone bytes on their way to the GPU: this frame's, swapped in from the main world at
/// extraction.
#[derive(Resource, Default)]
struct CrowdBoneUpload {
    buffer: Option<AssetId<ShaderBuffer>>,
    bones: Vec<BoneRows>,
    fresh: bool,
}

/// Takes the bone rows the main world wrote this frame, giving it last frame's to write into.
fn extract_crowd_bones(main: ResMut<MainWorld>, mut upload: ResMut<CrowdBoneUpload>) {
    let world = main.into_inner();
    let Some(mut draw) = world.get_resource_mut::<CrowdDraw>() else {
        return;
    };
    if !std::mem::take(&mut draw.written) {
        return;
    }
    upload.buffer = draw.bones.as_ref().map(Handle::id);
    if let Some(mut rows) = world.get_resource_mut::<CrowdBoneRows>() {
        std::mem::swap(&mut rows.rows, &mut upload.bones);
        upload.fresh = true;
    }
}

/// Writes the bone bytes into the bone buffer (after Bevy prepared it, made anew when it grew).
fn write_crowd_bones(
    mut upload: ResMut<CrowdBoneUpload>,
    buffers: Res<RenderAssets<GpuShaderBuffer>>,
    queue: Res<RenderQueue>,
) {
    if !std::mem::take(&mut upload.fresh) {
        return;
    }
    let Some(gpu) = upload.buffer.and_then(|id| buffers.get(id)) else {
        return;
    };
    let bytes: &[u8] = bytemuck::cast_slice(&upload.bones);
    let n = bytes.len().min(gpu.buffer.size() as usize);
    queue.write_buffer(&gpu.buffer, 0, &bytes[..n]);
}

/// How far past its character's posed bounds a part's box reaches ([`follow_poses`]), metres.
const BOX_SLACK: f32 = 0.25;

/// Keeps each part's bounds around its character's joints (worked out as the crowd is posed),
/// grown by how far the model's flesh reaches from a joint, so that Bevy culls it where it is
/// drawn. The box is set with [`BOX_SLACK`] to spare and set again only when the posed bounds
/// leave it: a part whose box changes is extracted again by Bevy's renderer, and a ped walking
/// (or standing) keeps its limbs within a box a little larger than one pose's.
fn follow_poses(rows: Res<CrowdBoneRows>, mut parts: Query<(&MeshTag, &CrowdPart, &mut Aabb)>) {
    parts.par_iter_mut().for_each(|(tag, part, mut aabb)| {
        let Some(&(lo, hi)) = rows.bounds.get(tag.0 as usize) else {
            return;
        };
        let grown = Vec3A::splat(part.reach);
        let (lo, hi) = (lo - grown, hi + grown);
        let (min, max) = (aabb.min(), aabb.max());
        let inside = lo.cmpge(min).all() && hi.cmple(max).all();
        // Too large by more than twice the slack (a pose that has shrunk): fit it again.
        let loose = (lo - min).max_element() > 2.0 * BOX_SLACK
            || (max - hi).max_element() > 2.0 * BOX_SLACK;
        if !inside || loose {
            let slack = Vec3A::splat(BOX_SLACK);
            *aabb = Aabb::from_min_max((lo - slack).into(), (hi + slack).into());
        }
    });
}

/// Poses the bone entities of each character drawn by Bevy's skinned meshes ([`CrowdFallback`])
/// from its [`CrowdPose`]: a bone of the crowd skeleton (matched by animation target) takes the
/// pose's model-space transform, through whatever frames lie between it and the model; every
/// other frame keeps its own. The model's space is the character's (the model is its child at
/// the origin), as the pose's is.
fn pose_fallback_models(
    skeletons: Res<CrowdSkeletons>,
    characters: Query<(&CrowdCharacter, &CrowdPose, &CrowdFallback)>,
    children: Query<&Children>,
    mut frames: Query<(&mut Transform, Option<&AnimationTargetId>, Option<&Name>)>,
) {
    let mut index: HashMap<GtaGame, HashMap<AnimationTargetId, usize>> = HashMap::new();
    for (character, pose, fallback) in &characters {
        if pose.bones.is_empty() {
            continue;
        }
        // A glTF scene's nodes, by name (its own pose's names).
        let by_name: HashMap<&str, usize> = match fallback.by_name {
            true => (pose.names.iter().enumerate())
                .map(|(i, n)| (n.as_str(), i))
                .collect(),
            false => HashMap::new(),
        };
        let index = index.entry(character.game).or_insert_with(|| {
            let targets = skeletons.targets(character.game);
            targets.iter().enumerate().map(|(i, t)| (*t, i)).collect()
        });
        // Depth first from the model, each frame with its parent's model-space transform.
        let mut stack: Vec<(Entity, Affine3A)> = children
            .get(fallback.model)
            .map(|c| c.iter().map(|e| (e, Affine3A::IDENTITY)).collect())
            .unwrap_or_default();
        while let Some((entity, parent)) = stack.pop() {
            let Ok((mut transform, target, name)) = frames.get_mut(entity) else {
                continue;
            };
            let bone = match fallback.by_name {
                true => name.and_then(|n| by_name.get(n.as_str())),
                false => target.and_then(|t| index.get(t)),
            };
            let posed = bone.and_then(|&i| pose.bones.get(i));
            let model = match posed {
                Some(&model) => {
                    let local = Transform::from_matrix((parent.inverse() * model).into());
                    if *transform != local {
                        *transform = local;
                    }
                    model
                }
                None => parent * transform.compute_affine(),
            };
            if let Ok(c) = children.get(entity) {
                stack.extend(c.iter().map(|e| (e, model)));
            }
        }
    }
}
