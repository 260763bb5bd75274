//! What runs every frame: the bone rows sized and uploaded, the parts' boxes kept around their
//! poses, and the characters drawn the Bevy way posed.

use super::material::CrowdMaterial;
use super::staging::{BoneStaging, RowPool};
use super::state::{
    BONE_BYTES, BONES_HEAD_BYTES, CrowdDraw, CrowdDrawSettings, CrowdFallback, CrowdPart,
    StillFlesh, bone_buffer_bytes, bones_head, frame_rows, frames_back, frames_kept, held_marks,
};
use crate::plugin::skeletal::{
    BLOCK_BONES, BoneRows, CrowdBoneRows, CrowdCharacter, CrowdDrawn, CrowdLod, CrowdPose,
    CrowdSkeletons, MappedRows, SlotState, bone_rows,
};
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::asset::{AssetId, RenderAssetUsages};
use bevy::camera::primitives::Aabb;
use bevy::math::{Affine3A, Vec3A};
use bevy::mesh::MeshTag;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::MainWorld;
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::storage::{GpuShaderBuffer, ShaderBuffer};
use wgpu::{Buffer, CommandEncoderDescriptor};

/// Sizes the bone rows for every slot (the crowd's posing writes each drawn character's into its
/// slot), and the bone buffer for the slots, in powers of two (a buffer of another size is a new
/// GPU buffer, and every crowd material's bind group is made again).
pub(super) fn size_crowd_bones(
    mut draw: ResMut<CrowdDraw>,
    mut rows: ResMut<CrowdBoneRows>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    mut materials: ResMut<Assets<CrowdMaterial>>,
    lod: Option<Res<CrowdLod>>,
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
    // Half rate turned on or off: a third frame of rows kept, or no longer.
    let frames = frames_kept(lod.as_deref());
    if capacity != draw.capacity || restrided || frames != draw.frames {
        draw.capacity = capacity;
        draw.laid_stride = draw.stride;
        draw.frames = frames;
        // For two frames: the buffer is prepared in the frame it changes.
        draw.rebind = 2;
        draw.all_fresh = true;
        if let Some(mut buffer) = buffers.get_mut(handle) {
            *buffer = ShaderBuffer::with_size(
                bone_buffer_bytes(capacity, stride, frames),
                RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
            );
        }
    }
    if draw.rebind > 0 {
        draw.rebind -= 1;
        for model in draw.models.values() {
            for part in &model.parts {
                if let Some(mut m) = materials.get_mut(&part.material) {
                    m.extension.stride = draw.stride;
                }
            }
        }
    }
    let rows = &mut *rows;
    rows.stride = stride;
    // The bones go into the mapped memory handed over at the last extraction where it fits the
    // buffer's slots and stride; else (the first frame, or the crowd outgrew it) into `rows`.
    // (A stride of whole blocks, as `CrowdDraw::stride` always is: the mapped rows are handed
    // out by blocks.)
    let whole_blocks = stride.is_multiple_of(BLOCK_BONES);
    if whole_blocks
        && (rows.mapped.as_ref()).is_some_and(|m| m.slots == capacity && m.stride == stride)
    {
        rows.rows = Vec::new();
    } else {
        rows.mapped = None;
        rows.rows.resize(draw.slots.len() * stride, [0.0; 12]);
    }
    rows.places.resize(draw.slots.len(), [0.0; 12]);
    rows.bounds
        .resize(draw.slots.len(), (Vec3A::ZERO, Vec3A::ZERO));
    rows.states.resize(draw.slots.len(), SlotState::default());
    SlotState::next_frame(&mut rows.states, &draw.fresh, draw.all_fresh);
    draw.written = true;
}

/// The crowd's bone bytes on their way to the GPU: this frame's, swapped in from the main world at
/// extraction, and where they go in the bone buffer.
#[derive(Resource, Default)]
pub(super) struct CrowdBoneUpload {
    buffer: Option<AssetId<ShaderBuffer>>,
    /// This frame's bones, where the main world wrote them into mapped staging memory
    /// ([`RowPool`]); else in `bones`.
    mapped: Option<MappedRows>,
    bones: Vec<BoneRows>,
    /// The mapped staging memory the main world writes bones into.
    pool: RowPool,
    /// The characters' places, by slot.
    places: Vec<BoneRows>,
    /// Whether `bones` are this frame's and not yet written.
    pending: bool,
    /// The buffer's slots and bones per slot.
    capacity: usize,
    stride: usize,
    /// The frames of rows the buffer keeps ([`frames_kept`]), and which of them holds this
    /// frame's (the one before, last frame's; the one before that, the frame before last's).
    frames: usize,
    frame: usize,
    /// The slots whose last frame's bones are taken from this frame's (this frame's fresh
    /// slots and the last frame's, in case a slot's first rows came a frame after it was
    /// taken), or every slot's (`all_fresh`, for this frame and the next).
    fresh: Vec<u32>,
    fresh_before: Vec<u32>,
    all_fresh: u8,
    /// Per slot, whether its rows were held this frame (not written: last frame's are drawn),
    /// and last frame.
    held: Vec<bool>,
    held_before: Vec<bool>,
    /// Whether the bone buffer's held marks may be other than all 0.
    marked: bool,
    /// The held marks written this frame (none where no slot is held or was last frame).
    marks: Vec<BoneRows>,
    /// Where the bytes go on their way, made at the first upload.
    staging: Option<BoneStaging>,
}

/// Whether bone rows were taken from the main world this frame ([`write_crowd_bones`]'s run
/// condition: without a crowd it is not a task for a thread every frame).
pub(super) fn bones_pending(upload: Res<CrowdBoneUpload>) -> bool {
    upload.pending
}

/// Takes the bone rows the main world wrote this frame, giving it mapped staging memory to write
/// the next frame's into (and last frame's rows, where that memory does not fit the next frame).
/// (Also takes the parts relayered this frame, where the render world follows them:
/// `views::take_relayered`.)
pub(super) fn extract_crowd_bones(
    main: ResMut<MainWorld>,
    mut upload: ResMut<CrowdBoneUpload>,
    relayered: Option<ResMut<super::views::RelayeredParts>>,
    device: Res<RenderDevice>,
) {
    let world = main.into_inner();
    let Some(mut draw) = world.get_resource_mut::<CrowdDraw>() else {
        return;
    };
    if let Some(mut relayered) = relayered {
        super::views::take_relayered(&mut draw, &mut relayered);
    }
    if !std::mem::take(&mut draw.written) {
        return;
    }
    let upload = &mut *upload;
    upload.buffer = draw.bones.as_ref().map(Handle::id);
    upload.capacity = draw.capacity;
    upload.stride = draw.laid_stride as usize;
    upload.frames = draw.frames;
    std::mem::swap(&mut upload.fresh, &mut upload.fresh_before);
    upload.fresh.clear();
    upload.fresh.append(&mut draw.fresh);
    if std::mem::take(&mut draw.all_fresh) {
        upload.all_fresh = 2;
    }
    let copy = (world.get_resource::<CrowdDrawSettings>()).is_some_and(|s| s.copy_bone_rows);
    if let Some(mut rows) = world.get_resource_mut::<CrowdBoneRows>() {
        // (Rows not uploaded last frame are mapped again.)
        if let Some(unsent) = upload.mapped.take() {
            upload.pool.keep(unsent);
        }
        match rows.mapped.take() {
            Some(mapped) => upload.mapped = Some(mapped),
            None => std::mem::swap(&mut rows.rows, &mut upload.bones),
        }
        std::mem::swap(&mut rows.places, &mut upload.places);
        std::mem::swap(&mut upload.held, &mut upload.held_before);
        upload.held.clear();
        upload.held.extend(rows.states.iter().map(|s| s.held));
        upload.pending = true;
        // Mapped memory for the next frame's bones, unless asked not to.
        if !copy {
            rows.mapped = upload.pool.take(&device, upload.capacity, upload.stride);
        }
    }
}

/// Writes this frame's places and bones into the frame of rows in the bone buffer that held the
/// oldest frame's (after Bevy prepared the buffer, made anew when it grew), and the head saying
/// which frame's rows are where. A fresh slot's rows go into last frame's rows too: it moved
/// nowhere since last frame.
///
/// The bytes go through staging memory kept from frame to frame ([`BoneStaging`]), in one command
/// buffer of copies submitted here, before the frame's draws. (Through `Queue::write_buffer`,
/// wgpu makes a staging buffer for each write, every frame: on the no-op backend the benches run
/// on, a zeroed vector copied into an `Arc`, 28 % of a frame of 10,000 drawn peds.)
pub(super) fn write_crowd_bones(
    mut upload: ResMut<CrowdBoneUpload>,
    buffers: Res<RenderAssets<GpuShaderBuffer>>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
) {
    let upload = &mut *upload;
    if !std::mem::take(&mut upload.pending) {
        return;
    }
    let (capacity, stride) = (upload.capacity, upload.stride);
    // (Two at least: a buffer is laid out before its first rows are sent.)
    let frames = upload.frames.max(2);
    let gpu = upload.buffer.and_then(|id| buffers.get(id));
    let size = bone_buffer_bytes(capacity, stride, frames);
    let Some(gpu) = gpu.filter(|gpu| gpu.buffer.size() as usize >= size) else {
        // (Not prepared yet: this frame's rows are not drawn.)
        if let Some(mapped) = upload.mapped.take() {
            upload.pool.keep(mapped);
        }
        return;
    };
    let frame_rows = frame_rows(capacity, stride);
    let places = &upload.places[..upload.places.len().min(capacity)];
    // The bones, in mapped memory (copied from there) or in the vector (staged with the rest).
    // (It was handed out for the frame's slots and stride: `size_crowd_bones` keeps it only
    // where they are the same.)
    let mapped = (upload.mapped.take()).filter(|m| m.slots == capacity && m.stride == stride);
    let bones: &[BoneRows] = match mapped {
        Some(_) => {
            upload.bones = Vec::new();
            &[]
        }
        None => &upload.bones[..upload.bones.len().min(capacity * stride)],
    };
    // The frames take turns: this frame's rows go where the oldest frame's were. (Where two are
    // kept, the frame before last's is this frame's: see `RESUMED`.)
    upload.frame = (upload.frame + 1) % frames;
    let current = upload.frame;
    let [previous, _] = frames_back(current, frames);
    let head = bones_head(current, frames, capacity, stride);
    // The held marks, where a slot is held this frame or was last frame, or they were written
    // last frame (a buffer made anew holds 0s).
    let holding = upload.held.iter().chain(&upload.held_before).any(|&h| h);
    match holding || upload.marked {
        true => held_marks(
            &upload.held,
            &upload.held_before,
            capacity,
            &mut upload.marks,
        ),
        false => upload.marks.clear(),
    }
    upload.marked = holding;
    let marks = &upload.marks;
    // A frame's places (from its first row), then its bones (from row `capacity`).
    let at = |frame: usize, row: usize| {
        (BONES_HEAD_BYTES + (frame * frame_rows + row) * BONE_BYTES) as u64
    };
    let staging = BoneStaging::fit(
        &mut upload.staging,
        &device,
        &[
            bytemuck::bytes_of(&head),
            bytemuck::cast_slice(places),
            bytemuck::cast_slice(bones),
            bytemuck::cast_slice(marks),
        ],
    );
    let mut encoder = device.create_command_encoder(&CommandEncoderDescriptor {
        label: Some("rigplay crowd bones"),
    });
    let target: &Buffer = &gpu.buffer;
    staging.stage(&mut encoder, target, bytemuck::bytes_of(&head), &[0]);
    staging.stage(
        &mut encoder,
        target,
        bytemuck::cast_slice(marks),
        &[at(frames, 0)],
    );
    let all_fresh = upload.all_fresh > 0;
    upload.all_fresh = upload.all_fresh.saturating_sub(1);
    // Copies `rows` rows from `from` (at `staged_at`) into this frame's rows from its row
    // `start`, and into last frame's too where every slot is fresh, or each fresh slot's rows.
    // (No slot is held within three frames of being fresh, `SlotState::holdable`, so none reads
    // the frame before last's rows then.)
    let fresh = || upload.fresh.iter().chain(&upload.fresh_before);
    let copy_run = |encoder: &mut wgpu::CommandEncoder,
                    (from, staged_at): (&Buffer, u64),
                    rows: usize,
                    start: usize,
                    per_slot: usize| {
        let into = match all_fresh {
            true => &[current, previous][..],
            false => &[current][..],
        };
        for &frame in into {
            let (to, size) = (at(frame, start), (rows * BONE_BYTES) as u64);
            encoder.copy_buffer_to_buffer(from, staged_at, target, to, size);
        }
        if all_fresh {
            return;
        }
        for &slot in fresh() {
            let first = slot as usize * per_slot;
            if first + per_slot <= rows {
                encoder.copy_buffer_to_buffer(
                    from,
                    staged_at + (first * BONE_BYTES) as u64,
                    target,
                    at(previous, start + first),
                    (per_slot * BONE_BYTES) as u64,
                );
            }
        }
    };
    // A frame's two runs of rows: the places (from its first row, a row per slot), then the bones
    // (from row `capacity`, `stride` per slot).
    if let Some((from, staged_at)) =
        staging.stage(&mut encoder, target, bytemuck::cast_slice(places), &[])
    {
        copy_run(&mut encoder, (&from, staged_at), places.len(), 0, 1);
    }
    let from_mapped = mapped.map(RowPool::unmap);
    match &from_mapped {
        Some(from) if !places.is_empty() => {
            let rows = places.len() * stride;
            copy_run(&mut encoder, (from, 0), rows, capacity, stride);
        }
        Some(_) => {}
        None => {
            if let Some((from, staged_at)) =
                staging.stage(&mut encoder, target, bytemuck::cast_slice(bones), &[])
            {
                copy_run(
                    &mut encoder,
                    (&from, staged_at),
                    bones.len(),
                    capacity,
                    stride,
                );
            }
        }
    }
    staging.finish();
    queue.submit([encoder.finish()]);
    staging.recall();
    if let Some(buffer) = from_mapped {
        upload.pool.remap(buffer);
    }
}

/// Writes each drawn character's place (its `GlobalTransform`, propagated this frame) by its
/// slot, where the vertex shader takes it: a part's own `GlobalTransform` is the identity
/// ([`super::state::CrowdDraw::dress`]).
pub(super) fn place_crowds(
    mut rows: ResMut<CrowdBoneRows>,
    characters: Query<(&CrowdDrawn, &GlobalTransform)>,
) {
    let places = &mut rows.places;
    for (drawn, at) in &characters {
        // (A character drawn the Bevy way has no slot.)
        if let Some(place) = places.get_mut(drawn.slot as usize) {
            *place = bone_rows(&at.affine());
        }
    }
}

/// The affine transform whose rows are `rows` ([`bone_rows`]'s inverse).
fn from_rows(r: &BoneRows) -> Affine3A {
    Affine3A::from_cols_array(&[
        r[0], r[4], r[8], r[1], r[5], r[9], r[2], r[6], r[10], r[3], r[7], r[11],
    ])
}

/// How far past its character's posed bounds a part's box reaches ([`follow_poses`]), metres.
pub(super) const BOX_SLACK: f32 = 0.25;

/// How long a part's box stays looser than its pose needs (by more than twice [`BOX_SLACK`] on
/// some side) before it is fitted again, seconds: longer than half the cycle of a slow walk, so
/// that a clip's own swing (legs together, then apart) keeps one box.
pub(super) const BOX_SHRINK_AFTER: f32 = 2.0;

/// How far a part's box may reach past its pose on any side when it grows, metres: a clip whose
/// root travels in the pose (not extracted as root motion) would otherwise grow it along the
/// whole path, and cull it less and less. Past this, the box is fitted to the pose instead.
pub(super) const BOX_GROWTH_LIMIT: f32 = 3.0;

/// Keeps each part's bounds around its character's joints (worked out as the crowd is posed),
/// grown by how far the model's flesh reaches from a joint, so that Bevy culls it where it is
/// drawn. The boxes are in world space (a part's `GlobalTransform` is the identity), taken
/// through the character's place ([`place_crowds`]). A part whose box changes is extracted again
/// by Bevy's renderer, so the box changes seldom ([`next_box`]): a character that steps about
/// within its box changes nothing.
///
/// Fitted to each pose instead, a walking crowd's boxes would be set about one in 36 every frame
/// (about 550 of 20,000, each part then extracted again: `docs/performance.md`).
pub(super) fn follow_poses(
    time: Res<Time>,
    rows: Res<CrowdBoneRows>,
    mut parts: Query<(&MeshTag, &mut CrowdPart, &mut Aabb, Option<&StillFlesh>)>,
) {
    let dt = time.delta_secs();
    parts
        .par_iter_mut()
        .for_each(|(tag, mut part, mut aabb, still)| {
            let slot = tag.0 as usize;
            let (Some(&(lo, hi)), Some(place)) = (rows.bounds.get(slot), rows.places.get(slot))
            else {
                return;
            };
            // The box around the joints, grown by the flesh (and taking in what stays put), in the
            // character's space; then the world box around it (but for a part its character's
            // transform places).
            let place = match part.placed_by_entity {
                true => Affine3A::IDENTITY,
                false => from_rows(place),
            };
            let (lo, hi) = (lo - Vec3A::splat(part.reach), hi + Vec3A::splat(part.reach));
            let (lo, hi) = match still {
                Some(still) => (lo.min(still.lo), hi.max(still.hi)),
                None => (lo, hi),
            };
            let centre = place.transform_point3a((lo + hi) * 0.5);
            let half = (hi - lo) * 0.5;
            let m = place.matrix3;
            let half = m.x_axis.abs() * half.x + m.y_axis.abs() * half.y + m.z_axis.abs() * half.z;
            let (lo, hi) = (centre - half, centre + half);
            // How far the character has travelled since the box was fitted: its place, not its
            // pose (a clip whose root travels in the pose comes back to where it started).
            let travel = place.translation - part.fitted_at;
            let (set, loose_for) = next_box(&aabb, lo, hi, part.loose_for, travel, dt);
            if let Some(set) = set {
                *aabb = set.aabb;
                if set.fitted {
                    part.fitted_at = place.translation;
                }
            }
            // (Written only where it changes.)
            if part.loose_for != loose_for {
                part.loose_for = loose_for;
            }
        });
}

/// A part's box set anew ([`next_box`]): fitted to the pose, or grown to take it in.
#[derive(Debug, Clone, Copy, PartialEq)]
struct BoxSet {
    aabb: Aabb,
    fitted: bool,
}

/// A part's next box, where it changes, and how long it has then been loose, from its box, its
/// pose's bounds (`lo`, `hi`, flesh included), how long it has been loose, how far its character
/// has travelled since the box was last fitted and the frame's time:
/// - a box never set (empty, as the part is spawned) is fitted to the pose, with [`BOX_SLACK`]
///   to spare;
/// - where the pose leaves it, it grows to take the pose in with the slack to spare (kept where
///   it already reaches further), so that a looping clip's box soon holds all of its poses;
///   - and where the character has travelled more than the slack since the box was fitted (a
///     character walking on), it grows twice that far ahead of the pose, so that it is set
///     again after three times the travel rather than after every [`BOX_SLACK`] of it;
/// - where it would then reach more than [`BOX_GROWTH_LIMIT`] past the pose on some side, or
///   already does (a pose that travelled within it), it is fitted instead;
/// - where it is looser than the pose needs by more than twice the slack for
///   [`BOX_SHRINK_AFTER`] seconds on end (a ped that stopped running and stands), it is fitted
///   again.
fn next_box(
    aabb: &Aabb,
    lo: Vec3A,
    hi: Vec3A,
    loose_for: f32,
    travel: Vec3A,
    dt: f32,
) -> (Option<BoxSet>, f32) {
    let slack = Vec3A::splat(BOX_SLACK);
    let fit = || BoxSet {
        aabb: Aabb::from_min_max((lo - slack).into(), (hi + slack).into()),
        fitted: true,
    };
    if aabb.half_extents == Vec3A::ZERO {
        return (Some(fit()), 0.0);
    }
    let (min, max) = (aabb.min(), aabb.max());
    let past = |min: Vec3A, max: Vec3A| (lo - min).max_element().max((max - hi).max_element());
    if !(lo.cmpge(min).all() && hi.cmple(max).all()) {
        // The lead ahead of a travelling character, each way along each axis: twice the travel
        // past the slack, and never so far that the box would reach past the growth limit.
        let lead = |t: Vec3A| {
            let most = Vec3A::splat(BOX_GROWTH_LIMIT - 2.0 * BOX_SLACK);
            Vec3A::select(t.cmpgt(slack), (2.0 * t).min(most), Vec3A::ZERO)
        };
        let (min, max) = (
            min.min(lo - slack - lead(-travel)),
            max.max(hi + slack + lead(travel)),
        );
        return match past(min, max) > BOX_GROWTH_LIMIT {
            true => (Some(fit()), 0.0),
            false => (
                Some(BoxSet {
                    aabb: Aabb::from_min_max(min.into(), max.into()),
                    fitted: false,
                }),
                0.0,
            ),
        };
    }
    let loose = past(min, max);
    // (A pose that travelled inside the box, away from where it grew.)
    if loose > BOX_GROWTH_LIMIT {
        return (Some(fit()), 0.0);
    }
    if loose <= 2.0 * BOX_SLACK {
        return (None, 0.0);
    }
    match loose_for + dt >= BOX_SHRINK_AFTER {
        true => (Some(fit()), 0.0),
        false => (None, loose_for + dt),
    }
}

/// Poses the bone entities of each character drawn by Bevy's skinned meshes ([`CrowdFallback`])
/// from its [`CrowdPose`]: a bone of the crowd skeleton (matched by animation target) takes the
/// pose's model-space transform, through whatever frames lie between it and the model; every
/// other frame keeps its own. The model's space is the character's (the model is its child at
/// the origin), as the pose's is.
pub(super) fn pose_fallback_models(
    skeletons: Res<CrowdSkeletons>,
    characters: Query<(&CrowdCharacter, &CrowdPose, &CrowdFallback)>,
    children: Query<&Children>,
    mut frames: Query<(&mut Transform, Option<&AnimationTargetId>, Option<&Name>)>,
    names: Query<&Name>,
) {
    let mut index: HashMap<GtaGame, HashMap<AnimationTargetId, usize>> = HashMap::new();
    for (character, pose, fallback) in &characters {
        if pose.bones.is_empty() {
            continue;
        }
        // A glTF scene's nodes are matched to the pose's bones by name among the children of
        // the bone matched above them (the roots among the pose's roots), so that two nodes of
        // one name in different places each take their own bone.
        let mut under: Vec<Vec<usize>> = Vec::new();
        if fallback.by_name {
            under.resize(pose.bones.len() + 1, Vec::new());
            for (b, p) in pose.parents.iter().enumerate() {
                // (The roots are listed last, under "no bone".)
                under[p.unwrap_or(pose.bones.len())].push(b);
            }
        }
        let index = index.entry(character.game).or_insert_with(|| {
            let targets = skeletons.targets(character.game);
            targets.iter().enumerate().map(|(i, t)| (*t, i)).collect()
        });
        // Depth first from the model, each frame with its parent's model-space transform, (by
        // name) the bone matched above it, and how many earlier siblings share its name.
        let mut stack: Vec<(Entity, Affine3A, Option<usize>, usize)> = Vec::new();
        let by_name = fallback.by_name;
        let push_children = |stack: &mut Vec<_>, of: Entity, model, above| {
            let Ok(c) = children.get(of) else { return };
            let name = |e: Entity| names.get(e).ok().map(Name::as_str);
            for (i, e) in c.iter().enumerate() {
                // (Matched by animation target, a frame's place among its siblings is no matter.)
                let earlier = match (by_name, name(e)) {
                    (true, Some(n)) => c.iter().take(i).filter(|&s| name(s) == Some(n)).count(),
                    _ => 0,
                };
                stack.push((e, model, above, earlier));
            }
        };
        push_children(&mut stack, fallback.model, Affine3A::IDENTITY, None);
        while let Some((entity, parent, above, earlier)) = stack.pop() {
            let Ok((mut transform, target, name)) = frames.get_mut(entity) else {
                continue;
            };
            let bone = match fallback.by_name {
                // Siblings of one name take the bones of that name in their order (the pose
                // lists a node's children in the file's order, as Bevy spawns them).
                true => name.and_then(|n| {
                    let candidates = &under[above.unwrap_or(pose.bones.len())];
                    candidates
                        .iter()
                        .copied()
                        .filter(|&b| pose.names.get(b).is_some_and(|m| m == n.as_str()))
                        .nth(earlier)
                }),
                false => target.and_then(|t| index.get(t)).copied(),
            };
            let posed = bone.and_then(|i| pose.bones.get(i));
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
            // Below a bone, its children are looked for among that bone's; above the first one
            // (the scene's own root), among the roots.
            push_children(&mut stack, entity, model, bone.or(above));
        }
    }
}

/// Makes Bevy's GPU culling data as long as its mesh instances' data before Bevy writes to it,
/// one entry at a time. Bevy 0.19.1 lengthens that buffer in one step when it falls short
/// (`MeshCullingDataBuffer::grow`), and that step leaves out the buffer's change marks for its
/// last elements when the new length is below 256, or within 256 past a multiple of 16,384:
/// the next write to one of them panics in `collect_meshes_for_gpu_building` ("index out of
/// bounds", Bevy issue #24730). Crowd parts left to the GPU's culling met it in a scene of a
/// few meshes. Entries added one at a time are marked as they come; the entries written here
/// (an infinite box: never culled) are each overwritten by Bevy before its instance is drawn.
pub(super) fn fill_culling_data(
    buffers: Option<
        Res<
            bevy::render::batching::gpu_preprocessing::BatchedInstanceBuffers<
                bevy::pbr::MeshUniform,
                bevy::pbr::MeshInputUniform,
            >,
        >,
    >,
    culling: Option<ResMut<bevy::pbr::MeshCullingDataBuffer>>,
) {
    let (Some(buffers), Some(mut culling)) = (buffers, culling) else {
        return;
    };
    let wanted = buffers.current_input_buffer.len() as u32;
    while culling.len() < wanted {
        culling.push(bevy::pbr::MeshCullingData {
            aabb_center: Vec4::ZERO,
            aabb_half_extents: Vec3::INFINITY.extend(0.0),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, y: f32, z: f32) -> Vec3A {
        Vec3A::new(x, y, z)
    }

    fn bounds(b: &Aabb) -> (Vec3A, Vec3A) {
        (b.min(), b.max())
    }

    /// Asserts that `b` runs from `min` to `max`, within `eps`.
    #[track_caller]
    fn assert_box(b: &Aabb, min: Vec3A, max: Vec3A, eps: f32) {
        let (lo, hi) = bounds(b);
        assert!(
            lo.abs_diff_eq(min, eps) && hi.abs_diff_eq(max, eps),
            "{lo}..{hi}, not {min}..{max}"
        );
    }

    /// The box `first` grows to for a pose from `lo` to `hi` of a character that travelled
    /// `travel` since the fit (not loose before, a frame of 0.1 s): asserted to be grown, not
    /// fitted anew.
    #[track_caller]
    fn grown(first: &Aabb, lo: Vec3A, hi: Vec3A, travel: Vec3A) -> Aabb {
        let (set, _) = next_box(first, lo, hi, 0.0, travel, 0.1);
        let set = set.expect("the box is set");
        assert!(!set.fitted, "grown, not fitted");
        set.aabb
    }

    /// A first box fits the pose with the slack; a pose inside changes nothing; one leaving it
    /// grows it on that side only.
    #[test]
    fn a_box_is_fitted_once_then_grows_to_take_poses_in() {
        let (lo, hi) = (v(-0.5, 0.0, -0.2), v(0.5, 1.8, 0.2));
        let (set, t) = next_box(&Aabb::default(), lo, hi, 0.0, Vec3A::ZERO, 0.1);
        let set = set.unwrap();
        assert!(set.fitted);
        let first = set.aabb;
        // (The character stands where the box was fitted.)
        let still = Vec3A::ZERO;
        // −0.5 − 0.25 … 0.5 + 0.25, and so on.
        assert_box(&first, v(-0.75, -0.25, -0.45), v(0.75, 2.05, 0.45), 1e-6);
        assert_eq!(t, 0.0);
        // Inside, and not loose by more than 0.5 anywhere (0.25 + 0.2 = 0.45 at most).
        let (set, t) = next_box(
            &first,
            v(-0.3, 0.0, -0.2),
            v(0.5, 1.8, 0.2),
            0.0,
            still,
            0.1,
        );
        assert!(set.is_none() && t == 0.0);
        // A foot 0.6 m out front (z): z grows to 0.6 + 0.25, the rest is kept (no lead: the
        // character has not travelled).
        let aabb = grown(&first, v(-0.5, 0.0, -0.2), v(0.5, 1.8, 0.6), still);
        assert_box(&aabb, v(-0.75, -0.25, -0.45), v(0.75, 2.05, 0.85), 1e-6);
    }

    /// A pose that left its box, its character having travelled more than the slack since the
    /// box was fitted: the box grows twice the travel ahead of it, on that side alone.
    #[test]
    fn a_box_grows_ahead_of_a_pose_that_travelled() {
        let first = Aabb::from_min_max(Vec3::new(-0.75, -0.25, -0.45), Vec3::new(0.75, 2.05, 0.45));
        // The character (and its pose) 0.4 m on along x: x's far end at 0.9 + 0.25 slack
        // + 2 · 0.4 lead = 1.95; the near end and the other axes kept.
        let aabb = grown(
            &first,
            v(-0.1, 0.0, -0.2),
            v(0.9, 1.8, 0.2),
            v(0.4, 0.0, 0.0),
        );
        assert_box(&aabb, v(-0.75, -0.25, -0.45), v(1.95, 2.05, 0.45), 1e-6);
        // 2 m back along −z: the lead is at most 3 − 2 · 0.25 = 2.5 (twice the travel would be
        // 4), so the near end reaches −2.2 − 0.25 − 2.5 = −4.95, 2.75 past the pose (within the
        // growth limit); the far z end is kept at 0.45, 2.65 past the pose.
        let aabb = grown(
            &first,
            v(-0.5, 0.0, -2.2),
            v(0.5, 1.8, -1.8),
            v(0.0, 0.0, -2.0),
        );
        assert_box(&aabb, v(-0.75, -0.25, -4.95), v(0.75, 2.05, 0.45), 1e-5);
    }

    /// A box looser than the pose needs by more than twice the slack is kept for 2 s of frames,
    /// then fitted; a frame in which the pose fills it again starts the count anew.
    #[test]
    fn a_loose_box_is_fitted_again_after_two_seconds_loose() {
        let walk = Aabb::from_min_max(Vec3::new(-0.75, -0.25, -1.0), Vec3::new(0.75, 2.05, 1.0));
        // Standing: z within ±0.2, so 0.8 loose on both ends (over 0.5).
        let (lo, hi) = (v(-0.5, 0.0, -0.2), v(0.5, 1.8, 0.2));
        let still = Vec3A::ZERO;
        let dt = 1.0 / 30.0;
        let mut loose_for = 0.0;
        let mut frames = 0;
        loop {
            let (set, t) = next_box(&walk, lo, hi, loose_for, still, dt);
            frames += 1;
            if let Some(set) = set {
                assert!(set.fitted);
                assert!(bounds(&set.aabb).1.abs_diff_eq(v(0.75, 2.05, 0.45), 1e-6));
                assert_eq!(t, 0.0);
                break;
            }
            loose_for = t;
            // A frame of the walk's own swing (the feet at ±0.7: 0.3 loose) starts anew.
            if frames == 30 {
                let (set, t) = next_box(
                    &walk,
                    v(-0.5, 0.0, -0.7),
                    v(0.5, 1.8, 0.7),
                    loose_for,
                    still,
                    dt,
                );
                assert!(set.is_none());
                assert_eq!(t, 0.0);
                loose_for = 0.0;
            }
            assert!(frames < 200);
        }
        // 30 frames, then 60 more (2 s at 1/30 s; the 60th reaches 2.0 within rounding).
        assert!((89..=91).contains(&frames), "{frames}");
    }

    /// `next_box` as `follow_poses` calls it, frame after frame, for a character standing `at`
    /// with its pose's bounds: the box, where the character stood when it was fitted, and how
    /// long it has been loose kept between frames. Returns the box set, if one was.
    fn follow(
        aabb: &mut Aabb,
        fitted_at: &mut Vec3A,
        loose_for: &mut f32,
        (at, (lo, hi)): (Vec3A, (Vec3A, Vec3A)),
        dt: f32,
    ) -> Option<BoxSet> {
        let (set, t) = next_box(aabb, lo, hi, *loose_for, at - *fitted_at, dt);
        *loose_for = t;
        if let Some(set) = set {
            *aabb = set.aabb;
            if set.fitted {
                *fitted_at = at;
            }
        }
        set
    }

    /// A ped walking on across the world at 1.4 m/s, 60 frames a second (2.3 cm a frame, its
    /// world-space box following it), 0.6 m across along its way: its box is set 15 times in
    /// 600 frames, where it was set every 11 frames or so (55 times) without the lead. Worked
    /// out by hand, x being where the ped stands (frame · 0.023), its pose about it:
    /// - frame 1 fits it: −0.527 … 0.573 (0.3 + 0.25 about x = 0.023);
    /// - frame 12 (x = 0.276, 0.253 on from the fit) grows it: 0.576 + 0.25 + 2 · 0.253 = 1.332;
    /// - frame 45 (x = 1.035, its front 1.335 past 1.332) grows it: 1.335 + 0.25 + 2 · 1.012
    ///   = 3.609;
    /// - frame 121 (x = 2.783, its back 2.483 now 3.01 past the box's −0.527) fits it again;
    /// - and so on every 120 frames: sets at 1, 12, 45, 121, 132, 165, 241, … 481, 492, 525.
    #[test]
    fn a_ped_walking_on_sets_its_box_about_every_forty_frames() {
        let (mut aabb, mut fitted_at, mut loose_for) = (Aabb::default(), Vec3A::ZERO, 0.0);
        let mut sets = Vec::new();
        for frame in 1..=600 {
            let x = frame as f32 * 0.023;
            let pose = (v(x - 0.3, 0.0, -0.2), v(x + 0.3, 1.8, 0.2));
            let (at, dt) = (v(x, 0.0, 0.0), 1.0 / 60.0);
            if follow(&mut aabb, &mut fitted_at, &mut loose_for, (at, pose), dt).is_some() {
                sets.push(frame);
            }
            let (min, max) = bounds(&aabb);
            assert!(
                pose.0.cmpge(min).all() && pose.1.cmple(max).all(),
                "holds the pose"
            );
        }
        eprintln!("boxes set at frames {sets:?}");
        assert_eq!(
            sets,
            [
                1, 12, 45, 121, 132, 165, 241, 252, 285, 361, 372, 405, 481, 492, 525
            ]
        );
    }

    /// A ped walking in place (its pose swaying 5 cm, its feet swinging 0.4 m to and fro along
    /// its way, a second a step): its box, fitted to the feet apart, is never set again.
    #[test]
    fn a_ped_walking_in_place_keeps_one_box() {
        let (mut aabb, mut fitted_at, mut loose_for) = (Aabb::default(), Vec3A::ZERO, 0.0);
        let mut sets = 0;
        for frame in 0..600 {
            let phase = frame as f32 / 60.0 * std::f32::consts::TAU;
            let (sway, swing) = (0.05 * phase.sin(), 0.4 * phase.cos().abs());
            let pose = (
                v(sway - 0.3 - swing, 0.0, -0.2),
                v(sway + 0.3 + swing, 1.8, 0.2),
            );
            let (at, dt) = (Vec3A::ZERO, 1.0 / 60.0);
            if follow(&mut aabb, &mut fitted_at, &mut loose_for, (at, pose), dt).is_some() {
                sets += 1;
            }
        }
        // The first fit (feet apart at frame 0, the box then as wide as the swing).
        assert_eq!(sets, 1, "{sets} sets");
    }

    /// A pose whose root travels (not extracted): the box grows with it, never reaching more
    /// than 3 m past the pose, and is fitted to the pose again where it would.
    #[test]
    fn a_travelling_pose_is_followed_within_the_growth_limit() {
        let (mut aabb, mut fitted_at, mut loose_for) = (Aabb::default(), Vec3A::ZERO, 0.0);
        let dt = 1.0 / 30.0;
        let (mut sets, mut fits) = (0, 0);
        for step in 0..100 {
            let x = step as f32 * 0.1;
            let (lo, hi) = (v(x - 0.5, 0.0, -0.2), v(x + 0.5, 1.8, 0.2));
            let before = aabb;
            // (The character stands still: its clip's root travels in the pose.)
            let at = Vec3A::ZERO;
            if let Some(set) = follow(
                &mut aabb,
                &mut fitted_at,
                &mut loose_for,
                (at, (lo, hi)),
                dt,
            ) {
                // (Fitted again: its back end moved up to the pose's. The first fit is not
                // counted.)
                if step > 0 {
                    assert_eq!(set.fitted, set.aabb.min().x > before.min().x + 1e-6);
                    fits += usize::from(set.fitted);
                }
                sets += 1;
            }
            let (min, max) = bounds(&aabb);
            assert!(lo.cmpge(min).all() && hi.cmple(max).all(), "holds the pose");
            let past = (lo - min).max_element().max((max - hi).max_element());
            assert!(past <= BOX_GROWTH_LIMIT + 1e-5, "step {step}: {past}");
        }
        // Grown as the pose leaves it (each 0.3 m: 0.25 to spare, 0.1 a step; no lead, as the
        // character has not travelled), fitted each time it reaches 3 m behind the pose: about
        // 10 m in all.
        eprintln!("{sets} sets, {fits} fits");
        assert!(fits >= 2 && sets < 50, "{sets} sets, {fits} fits");
    }

    #[test]
    fn held_marks_say_where_each_slots_bones_are() {
        use super::super::state::held_marks;
        // 14 slots in 2 rows of 12 marks: slot 1 held now, slot 2 held last frame, slot 13 both
        // (cannot happen: held wins), the rest written both frames.
        let mut held = vec![false; 14];
        let mut before = vec![false; 14];
        held[1] = true;
        before[2] = true;
        held[13] = true;
        before[13] = true;
        let mut marks = Vec::new();
        held_marks(&held, &before, 16, &mut marks);
        assert_eq!(marks.len(), 2);
        let flat: Vec<f32> = marks.iter().flatten().copied().collect();
        let mut expected = vec![0.0; 24];
        expected[1] = 1.0;
        expected[2] = 2.0;
        expected[13] = 1.0;
        assert_eq!(flat, expected);
        // Fewer states than slots (the last frame's crowd was smaller): 0 past them, the marks
        // of the frame before written over.
        held_marks(&[true], &[], 64, &mut marks);
        assert_eq!(marks.len(), 6);
        assert_eq!(marks[0][0], 1.0);
        assert!(marks.iter().flatten().skip(1).all(|&m| m == 0.0));
    }

    #[test]
    fn the_head_names_this_last_and_the_frame_before_lasts_rows() {
        use super::super::state::{BONES_HEAD_BYTES, bone_buffer_bytes, bones_head};
        // 64 slots of 32 bones: a frame is 64 places + 64 · 32 bones = 2,112 rows.
        // Three frames (half rate on), taking turns 0, 1, 2, 0: last frame's is the one before
        // round the three, the frame before last's the one before that; the held marks after
        // the three frames, from row 6,336.
        assert_eq!(bones_head(0, 3, 64, 32), [0, 4224, 2112, 64, 6336, 0, 0, 0]);
        assert_eq!(bones_head(1, 3, 64, 32), [2112, 0, 4224, 64, 6336, 0, 0, 0]);
        assert_eq!(bones_head(2, 3, 64, 32), [4224, 2112, 0, 64, 6336, 0, 0, 0]);
        // Two frames: the frame before last's rows are this frame's (a held slot's skin posed
        // again then has no motion), the marks from row 4,224.
        assert_eq!(bones_head(0, 2, 64, 32), [0, 2112, 0, 64, 4224, 0, 0, 0]);
        assert_eq!(bones_head(1, 2, 64, 32), [2112, 0, 2112, 64, 4224, 0, 0, 0]);
        // The buffer: the head, the frames, and 6 rows of marks (64 slots, 12 a row, rounded
        // up), 48 bytes a row: 32 + (3 · 2,112 + 6) · 48 = 304,448 bytes.
        assert_eq!(BONES_HEAD_BYTES, 32);
        assert_eq!(bone_buffer_bytes(64, 32, 3), 304_448);
        assert_eq!(bone_buffer_bytes(64, 32, 2), 32 + (2 * 2112 + 6) * 48);
    }
}
