//! The crowd's drawing state: the bone buffer's slots, the models built, and the components
//! of a dressed character and its parts.

use super::material::CrowdMaterial;
use super::parts::BuildParams;
use crate::plugin::dff::Dff;
use crate::plugin::skeletal::{BLOCK_BONES, BoneRows, CrowdDrawn, CrowdLod, CrowdSkeletons};
use crate::skeleton::GtaGame;
use bevy::asset::{AssetId, RenderAssetUsages, UntypedAssetId};
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{NoAutoAabb, NoCpuCulling};
use bevy::ecs::system::SystemParam;
use bevy::mesh::MeshTag;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::render::renderer::RenderDevice;
use bevy::render::storage::ShaderBuffer;
use bevy::render::view::NoIndirectDrawing;
use std::sync::Arc;

/// A part of a drawn model: its mesh, its material, and whether Bevy draws it in a phase sorted
/// by distance ([`sorted_by_distance`]).
pub(super) struct DrawnPart {
    pub(super) mesh: Handle<Mesh>,
    pub(super) material: Handle<CrowdMaterial>,
    pub(super) sorted: bool,
}

/// Whether Bevy draws `material` in a phase it sorts by each mesh's distance (its transparent
/// phase: blended alpha modes; its transmissive phase: specular transmission), as Bevy 0.19.1
/// decides a material's phase.
pub(super) fn sorted_by_distance(material: &StandardMaterial) -> bool {
    matches!(
        material.alpha_mode,
        AlphaMode::Blend | AlphaMode::Premultiplied | AlphaMode::Add | AlphaMode::Multiply
    ) || material.specular_transmission > 0.0
}

/// A drawn model, built once per (model, skeleton): its parts and how far its flesh reaches
/// from a joint.
pub(super) struct DrawnModel {
    pub(super) parts: Vec<DrawnPart>,
    /// The farthest a vertex lies from a joint on a bone it is weighted to (metres): the margin
    /// around the joints that the parts' bounds take.
    pub(super) reach: f32,
    /// The box, in the character's space, of the vertices weighted to joints that stay put (on
    /// no bone: a DFF frame of the model's own above its root bone), which the parts' bounds
    /// take in as well.
    pub(super) still: Option<(Vec3A, Vec3A)>,
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
    /// rigs drawn, rounded up to a multiple of [`BLOCK_BONES`] (the main world's bone rows are
    /// handed out by blocks of them).
    pub(super) stride: u32,
    /// The stride the bone buffer and the materials are laid out for.
    pub(super) laid_stride: u32,
    /// Each slot's character.
    pub(super) slots: Vec<Option<Entity>>,
    pub(super) free: Vec<u32>,
    pub(super) slot_of: HashMap<Entity, u32>,
    pub(super) models: HashMap<ModelKey, Arc<DrawnModel>>,
    /// Models that cannot be drawn, each warned of once (again when they change).
    pub(super) undrawable: HashSet<UntypedAssetId>,
    /// Whether the missing storage buffers were warned of.
    pub(super) no_storage_warned: bool,
    /// The slots the bone buffer holds (a power of two, so that it is rarely made anew).
    pub(super) capacity: usize,
    /// The frames of rows the bone buffer keeps ([`frames_kept`]; 0 before it is laid out).
    pub(super) frames: usize,
    /// Frames left in which every crowd material is marked changed, so that its bind group
    /// takes the bone buffer made anew when the capacity grew (or the stride or frames kept
    /// changed).
    pub(super) rebind: u8,
    /// Whether the bone rows are written this frame (and not yet sent to the render world).
    pub(super) written: bool,
    /// The slots taken by a character since the bone rows were last sent to the render world:
    /// they have no last frame's bones of their own, so their motion vectors start from this
    /// frame's.
    pub(super) fresh: Vec<u32>,
    /// Whether the bone buffer was made anew since the rows were last sent (no slot has last
    /// frame's bones in it).
    pub(super) all_fresh: bool,
    /// Whether the renderer culls mesh instances on the GPU (Bevy's GPU preprocessing in its
    /// culling mode), found once the renderer is made.
    pub(super) gpu_culls: bool,
    /// Whether the parts are left to the GPU's culling (`NoCpuCulling`): where the GPU culls,
    /// unless [`CrowdDrawSettings::cpu_culling`] asks otherwise.
    pub(super) parts_gpu_culled: bool,
    /// The parts given or relieved of `RenderLayers` this frame while the parts are culled on
    /// the GPU (`passed_on`), taken by the render world, which has Bevy's GPU culling follow
    /// their layers (`views`).
    pub(super) relayered: Vec<Entity>,
}

/// A bone in the bone buffer.
pub(super) use crate::plugin::skeletal::BONE_BYTES;

/// The bone buffer's head: the first rows of this frame's rows, of last frame's and of the frame
/// before last's, the slots a frame holds, and the first row of the held marks (five `u32`s,
/// padded to 32 bytes, where the rows' 16-byte alignment puts them). Then come two or three
/// frames of rows ([`frames_kept`]), which take turns, each of [`frame_rows`] rows: per slot its
/// character's place in the world (its `GlobalTransform`), then per slot its `stride` bones in its
/// own space. Then the held marks, [`held_rows`] rows: per slot (12 a row, as floats) where its
/// bones are this frame and last frame ([`held_marks`]).
pub(super) const BONES_HEAD_BYTES: usize = 32;

/// The frames of rows the bone buffer keeps: this frame's and last frame's, and, where a far
/// character may be posed at half rate ([`CrowdLod`]), the frame before last's, which holds the
/// pose shown last frame by a character held then (its motion vectors' start, held mark
/// [`RESUMED`]). A third frame costs the GPU a third more memory (26 MB at 16,384 slots of 32
/// bones), so a crowd without half rate keeps two.
pub(super) fn frames_kept(lod: Option<&CrowdLod>) -> usize {
    match lod.is_some_and(|lod| lod.half_rate_beyond.is_some()) {
        true => 3,
        false => 2,
    }
}

/// The rows of one frame in the bone buffer: `capacity` places, then `capacity` slots of
/// `stride` bones.
pub(super) fn frame_rows(capacity: usize, stride: usize) -> usize {
    capacity * (stride + 1)
}

/// The frames of rows that hold last frame's and the frame before last's, where this frame's
/// are frame `current` of the `frames` kept, which take turns (where two are kept, the frame
/// before last's are this frame's).
pub(super) fn frames_back(current: usize, frames: usize) -> [usize; 2] {
    [1, 2].map(|back| (current + 2 * frames - back) % frames)
}

/// The bone buffer's head where this frame's rows are frame `current` of `frames`
/// ([`frames_kept`]), each of `capacity` slots of `stride` bones: the first rows of this
/// frame's rows, of last frame's (the frame before `current`, round the `frames`) and of the
/// frame before last's (where two frames are kept, this frame's), the slots, the first row of
/// the held marks (after the frames), and padding.
pub(super) fn bones_head(
    current: usize,
    frames: usize,
    capacity: usize,
    stride: usize,
) -> [u32; BONES_HEAD_BYTES / 4] {
    let rows = frame_rows(capacity, stride);
    let [previous, before_last] = frames_back(current, frames);
    [
        (current * rows) as u32,
        (previous * rows) as u32,
        (before_last * rows) as u32,
        capacity as u32,
        (frames * rows) as u32,
        0,
        0,
        0,
    ]
}

/// The rows of the bone buffer's held marks: one a slot, 12 a row.
pub(super) fn held_rows(capacity: usize) -> usize {
    capacity.div_ceil(HELD_PER_ROW)
}

/// Held marks a row holds.
const HELD_PER_ROW: usize = size_of::<BoneRows>() / size_of::<f32>();

/// A slot's held mark where its bones are this frame's in this frame's rows and last frame's in
/// last frame's rows (written this frame and last frame).
const MOVED: f32 = 0.0;
/// A held slot's mark: this frame's bones are last frame's, in last frame's rows (its character
/// waited for its frame at half rate, `CrowdLod`, and its rows were not written).
const HELD: f32 = 1.0;
/// The mark of a slot written this frame and held last frame: the bones it showed last frame
/// are those written the frame before, in that frame's rows (the third frame the buffer keeps
/// where half rate is on, [`frames_kept`]).
const RESUMED: f32 = 2.0;

/// Writes into `rows` each slot's held mark ([`MOVED`], [`HELD`], [`RESUMED`]) from whether it
/// was held this frame (`held`) and last frame (`before`), by rows of the bone buffer.
pub(super) fn held_marks(
    held: &[bool],
    before: &[bool],
    capacity: usize,
    rows: &mut Vec<BoneRows>,
) {
    rows.resize(held_rows(capacity), [MOVED; HELD_PER_ROW]);
    for (slot, mark) in rows.iter_mut().flatten().enumerate() {
        *mark = match (held.get(slot), before.get(slot)) {
            (Some(true), _) => HELD,
            (_, Some(true)) => RESUMED,
            _ => MOVED,
        };
    }
}

/// The bone buffer's size for `capacity` slots of `stride` bones, `frames` frames of them
/// ([`frames_kept`]).
pub(super) fn bone_buffer_bytes(capacity: usize, stride: usize, frames: usize) -> usize {
    BONES_HEAD_BYTES + (frames * frame_rows(capacity, stride) + held_rows(capacity)) * BONE_BYTES
}

impl CrowdDraw {
    /// The stride, first worked out from the games' skeletons.
    pub(super) fn init_stride(&mut self, skeletons: &CrowdSkeletons) {
        if self.stride == 0 {
            self.stride = [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa]
                .map(|g| skeletons.targets(g).len() as u32)
                .into_iter()
                .max()
                .unwrap_or(1)
                .next_multiple_of(BLOCK_BONES as u32);
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
                    bone_buffer_bytes(1, 1, 2),
                    RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
                ))
            })
            .clone()
    }

    /// Gives `entity` a slot and the parts of `drawn` (children tagged with the slot), built
    /// for `key`.
    ///
    /// A part is a child without a `Transform`, so that Bevy's transform propagation passes it
    /// by: its `GlobalTransform` stays the identity, and its character's place is a row of the
    /// bone buffer, read by the vertex shader. A character that moves then changes nothing of
    /// its parts, and Bevy's renderer does not extract them again (it does for any mesh whose
    /// `GlobalTransform` changed); its parts' boxes are kept in world space
    /// ([`super::frame::follow_poses`]).
    ///
    /// A part that Bevy sorts by distance (a blended or transmissive look) keeps its
    /// `Transform` and so its character's place: Bevy sorts it by its own transform, and at
    /// the identity every such part would sort as if at the world's origin. Its material says
    /// so to the shader ([`super::CrowdSkin::placed_by_entity`]), and its box is in its
    /// character's space.
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
            .map(|drawn_part| {
                let mut part = commands.spawn((
                    Mesh3d(drawn_part.mesh.clone()),
                    MeshMaterial3d(drawn_part.material.clone()),
                    MeshTag(slot),
                    NoAutoAabb,
                    Aabb::default(),
                    CrowdPart {
                        reach: drawn.reach,
                        loose_for: 0.0,
                        fitted_at: Vec3A::ZERO,
                        placed_by_entity: drawn_part.sorted,
                    },
                    GlobalTransform::IDENTITY,
                    ChildOf(entity),
                ));
                // (`Mesh3d` asks for a `Transform`; a part's place is its character's.)
                if !drawn_part.sorted {
                    part.remove::<Transform>();
                }
                if self.parts_gpu_culled {
                    part.insert(NoCpuCulling);
                }
                if let Some((lo, hi)) = drawn.still {
                    part.insert(StillFlesh { lo, hi });
                }
                part.id()
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

    /// `built` (the model of `key`, at `path`) kept for the characters that wear it; if it
    /// could not be built, the model is warned of once and remembered as undrawable.
    pub(super) fn keep_built(
        &mut self,
        key: ModelKey,
        built: Result<DrawnModel, String>,
        path: Option<&bevy::asset::AssetPath>,
    ) -> Option<Arc<DrawnModel>> {
        match built {
            Ok(drawn) => {
                let drawn = Arc::new(drawn);
                self.models.insert(key, drawn.clone());
                Some(drawn)
            }
            Err(why) => {
                warn!("crowd characters wearing {path:?} are not drawn: {why}");
                self.undrawable.insert(key.asset());
                None
            }
        }
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
        self.fresh.push(slot);
        slot
    }

    fn give_back(&mut self, character: Entity) {
        if let Some(slot) = self.slot_of.remove(&character) {
            self.slots[slot as usize] = None;
            self.free.push(slot);
        }
    }
}

/// What the dressing systems of both wings (DFF peds, glTF characters) work with, and the steps
/// they share.
#[derive(SystemParam)]
pub(super) struct Dresser<'w, 's> {
    pub(super) commands: Commands<'w, 's>,
    pub(super) draw: ResMut<'w, CrowdDraw>,
    pub(super) assets: Res<'w, AssetServer>,
    pub(super) skeletons: Res<'w, CrowdSkeletons>,
    pub(super) build: BuildParams<'w>,
    device: Option<Res<'w, RenderDevice>>,
    settings: Res<'w, CrowdDrawSettings>,
    worn: Query<'w, 's, &'static CrowdDressed>,
}

/// What a wing's dressing learns first each frame ([`Dresser::open`]).
pub(super) struct Opening<A: Asset> {
    /// Whether characters are drawn the Bevy way ([`CrowdDraw::fallback`]).
    pub(super) fallback: bool,
    /// The wing's models that changed or went, forgotten ([`CrowdDraw::forget_changed`]).
    pub(super) changed: HashSet<AssetId<A>>,
}

impl Dresser<'_, '_> {
    /// The frame's first steps: the slots' stride worked out (once), the way characters are
    /// drawn chosen, and the models `events` say changed or went forgotten.
    pub(super) fn open<A: Asset>(
        &mut self,
        events: &mut MessageReader<AssetEvent<A>>,
    ) -> Opening<A> {
        let draw = &mut *self.draw;
        draw.init_stride(&self.skeletons);
        Opening {
            fallback: draw.fallback(self.device.as_deref(), &self.settings),
            changed: draw.forget_changed(events),
        }
    }

    /// Takes `entity`'s parts away and gives its slot back.
    pub(super) fn undress(&mut self, entity: Entity, dressed: &CrowdDressed) {
        undress(&mut self.commands, &mut self.draw, entity, dressed);
    }

    /// Undresses the characters that lost their model, `removed`; one that went (its parts went
    /// with it) gives its slot back.
    pub(super) fn undress_removed(&mut self, removed: impl Iterator<Item = Entity>) {
        for entity in removed {
            match self.worn.get(entity) {
                Ok(dressed) => undress(&mut self.commands, &mut self.draw, entity, dressed),
                Err(_) => self.draw.give_back(entity),
            }
        }
    }

    /// Whether `model` failed to load; if so, it is warned of (once) and remembered as
    /// undrawable.
    pub(super) fn failed_to_load<A: Asset>(&mut self, model: &Handle<A>) -> bool {
        if !self.assets.load_state(model).is_failed() {
            return false;
        }
        warn!(
            "crowd characters wearing {:?} are not drawn: the model failed to load",
            model.path()
        );
        self.draw.undrawable.insert(model.id().untyped());
        true
    }
}

/// On a drawn crowd character: its model and parts.
#[derive(Component)]
pub(super) struct CrowdDressed {
    pub(super) model: ModelKey,
    pub(super) parts: Vec<Entity>,
}

/// How [`super::CrowdDrawPlugin`] draws the crowd.
#[derive(Resource, Debug, Clone, Default, Reflect)]
#[reflect(Resource)]
pub struct CrowdDrawSettings {
    /// Draw every crowd character as Bevy's skinned meshes (a [`crate::plugin::GtaModel`] with bone entities,
    /// posed from the character's pose), as on a device without storage buffers, rather than by
    /// instanced skinning. Characters already drawn keep their way until their model changes.
    pub bevy_skinning: bool,
    /// Cull each drawn character's parts on the CPU, as Bevy culls any mesh (a frustum test
    /// per part and view, each frame, which sets the parts' `ViewVisibility`), rather than on
    /// the GPU. By default, where Bevy's renderer culls on the GPU (its GPU preprocessing in
    /// culling mode: desktop Vulkan, DX12 and Metal), the parts carry `NoCpuCulling`: the GPU
    /// tests each instance's box against each view, shadow views included, and the CPU does
    /// no per-part work for a character whose box has not changed. A part's `ViewVisibility`
    /// then says only whether it is shown, not whether a camera sees it. Where the renderer
    /// does not cull on the GPU, or while a camera draws without indirect draws
    /// (`NoIndirectDrawing`, which culls nothing on the GPU), the parts are culled on the CPU
    /// either way.
    pub cpu_culling: bool,
    /// Write the drawn characters' bone rows into a vector, copied into staging memory when
    /// they are uploaded, rather than straight into the staging memory (mapped, handed to the
    /// main world each frame). Slower, and drawn the same; for comparing the two. (The vector
    /// is also the way of a frame whose crowd outgrew the mapped memory handed over.)
    pub copy_bone_rows: bool,
}

/// On a crowd character drawn by Bevy's skinned meshes (no storage buffers): the child
/// [`GtaModel`] (or glTF scene) whose bones follow its pose, matched by animation target (or,
/// `by_name`, by name).
#[derive(Component)]
pub(super) struct CrowdFallback {
    pub(super) model: Entity,
    pub(super) by_name: bool,
}

/// A slot no character has: a character drawn by Bevy's skinned meshes writes no bone rows.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// On a part of a drawn crowd character: how far its flesh reaches from the joints, for how
/// long (seconds) its box has been looser than its pose needs and where its character stood
/// when the box was last fitted ([`super::frame::follow_poses`]), and whether it is placed by its
/// own transform, its character's (a part Bevy sorts by distance: [`CrowdDraw::dress`]) rather
/// than at the identity.
#[derive(Component)]
pub(super) struct CrowdPart {
    pub(super) reach: f32,
    pub(super) loose_for: f32,
    pub(super) fitted_at: Vec3A,
    pub(super) placed_by_entity: bool,
}

/// On a part of a drawn crowd character whose model has vertices that stay put (on joints with
/// no bone): their box in the character's space, which the part's box takes in
/// ([`super::frame::follow_poses`]). (A component of its own, so that the parts of other models,
/// nearly all, carry nothing more through that loop.)
#[derive(Component)]
pub(super) struct StillFlesh {
    pub(super) lo: Vec3A,
    pub(super) hi: Vec3A,
}

/// Takes `entity`'s parts away, and the components saying how it is drawn, and gives its slot
/// back.
fn undress(commands: &mut Commands, draw: &mut CrowdDraw, entity: Entity, dressed: &CrowdDressed) {
    for &part in &dressed.parts {
        commands.entity(part).try_despawn();
    }
    if let Ok(mut e) = commands.get_entity(entity) {
        e.try_remove::<(CrowdDressed, CrowdDrawn, CrowdFallback)>();
    }
    draw.give_back(entity);
}

/// Leaves the parts to the GPU's culling, or takes them back: every part made since, and every
/// part there is, when the choice changes. The GPU culls where the renderer can, unless
/// [`CrowdDrawSettings::cpu_culling`] asks otherwise or a camera draws without indirect draws
/// (`NoIndirectDrawing`, which culls nothing on the GPU).
pub(super) fn choose_culling(
    mut commands: Commands,
    mut draw: ResMut<CrowdDraw>,
    settings: Res<CrowdDrawSettings>,
    direct: Query<(), (With<Camera>, With<NoIndirectDrawing>)>,
    parts: Query<Entity, With<CrowdPart>>,
) {
    let gpu = draw.gpu_culls && !settings.cpu_culling && direct.is_empty();
    if gpu == draw.parts_gpu_culled {
        return;
    }
    draw.parts_gpu_culled = gpu;
    for part in &parts {
        match gpu {
            true => commands.entity(part).insert(NoCpuCulling),
            false => commands.entity(part).remove::<NoCpuCulling>(),
        };
    }
}
