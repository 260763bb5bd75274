//! What runs every frame: the bone rows sized and uploaded, the parts' boxes kept around their
//! poses, and the characters drawn the Bevy way posed.

use super::material::CrowdMaterial;
use super::state::{
    BONE_BYTES, BONES_HEAD_BYTES, CrowdDraw, CrowdFallback, CrowdPart, bone_buffer_bytes,
};
use crate::plugin::skeletal::{BoneRows, CrowdBoneRows, CrowdCharacter, CrowdPose, CrowdSkeletons};
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
use bevy::render::renderer::RenderQueue;
use bevy::render::storage::{GpuShaderBuffer, ShaderBuffer};

/// Sizes the bone rows for every slot (the crowd's posing writes each drawn character's into its
/// slot), and the bone buffer for the slots, in powers of two (a buffer of another size is a new
/// GPU buffer, and every crowd material's bind group is made again).
pub(super) fn size_crowd_bones(
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
        draw.all_fresh = true;
        if let Some(mut buffer) = buffers.get_mut(handle) {
            *buffer = ShaderBuffer::with_size(
                bone_buffer_bytes(capacity, stride),
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
/// extraction, and where they go in the bone buffer.
#[derive(Resource, Default)]
pub(super) struct CrowdBoneUpload {
    buffer: Option<AssetId<ShaderBuffer>>,
    bones: Vec<BoneRows>,
    /// Whether `bones` are this frame's and not yet written.
    pending: bool,
    /// The buffer's slots and bones per slot.
    capacity: usize,
    stride: usize,
    /// Which half of the buffer holds this frame's bones (the other, last frame's).
    half: usize,
    /// The slots whose last frame's bones are taken from this frame's (this frame's fresh
    /// slots and the last frame's, in case a slot's first rows came a frame after it was
    /// taken), or every slot's (`all_fresh`, for this frame and the next).
    fresh: Vec<u32>,
    fresh_before: Vec<u32>,
    all_fresh: u8,
}

/// Takes the bone rows the main world wrote this frame, giving it last frame's to write into.
pub(super) fn extract_crowd_bones(main: ResMut<MainWorld>, mut upload: ResMut<CrowdBoneUpload>) {
    let world = main.into_inner();
    let Some(mut draw) = world.get_resource_mut::<CrowdDraw>() else {
        return;
    };
    if !std::mem::take(&mut draw.written) {
        return;
    }
    let upload = &mut *upload;
    upload.buffer = draw.bones.as_ref().map(Handle::id);
    upload.capacity = draw.capacity;
    upload.stride = draw.laid_stride as usize;
    std::mem::swap(&mut upload.fresh, &mut upload.fresh_before);
    upload.fresh.clear();
    upload.fresh.append(&mut draw.fresh);
    if std::mem::take(&mut draw.all_fresh) {
        upload.all_fresh = 2;
    }
    if let Some(mut rows) = world.get_resource_mut::<CrowdBoneRows>() {
        std::mem::swap(&mut rows.rows, &mut upload.bones);
        upload.pending = true;
    }
}

/// Writes this frame's bone bytes into the half of the bone buffer that held the frame before
/// last's (after Bevy prepared the buffer, made anew when it grew), and the head saying which
/// half is which. A fresh slot's bones go into both halves: it moved nowhere since last frame.
pub(super) fn write_crowd_bones(
    mut upload: ResMut<CrowdBoneUpload>,
    buffers: Res<RenderAssets<GpuShaderBuffer>>,
    queue: Res<RenderQueue>,
) {
    let upload = &mut *upload;
    if !std::mem::take(&mut upload.pending) {
        return;
    }
    let Some(gpu) = upload.buffer.and_then(|id| buffers.get(id)) else {
        return;
    };
    let half_rows = upload.capacity * upload.stride;
    if (gpu.buffer.size() as usize) < bone_buffer_bytes(upload.capacity, upload.stride) {
        return;
    }
    let bones = &upload.bones[..upload.bones.len().min(half_rows)];
    upload.half ^= 1;
    let (current, previous) = (upload.half, upload.half ^ 1);
    let head = [
        (current * half_rows) as u32,
        (previous * half_rows) as u32,
        0,
        0,
    ];
    queue.write_buffer(&gpu.buffer, 0, bytemuck::cast_slice(&head));
    let at =
        |half: usize, row: usize| (BONES_HEAD_BYTES + (half * half_rows + row) * BONE_BYTES) as u64;
    queue.write_buffer(&gpu.buffer, at(current, 0), bytemuck::cast_slice(bones));
    if upload.all_fresh > 0 {
        upload.all_fresh -= 1;
        queue.write_buffer(&gpu.buffer, at(previous, 0), bytemuck::cast_slice(bones));
        return;
    }
    let stride = upload.stride;
    for &slot in upload.fresh.iter().chain(&upload.fresh_before) {
        let first = slot as usize * stride;
        if let Some(rows) = bones.get(first..first + stride) {
            queue.write_buffer(&gpu.buffer, at(previous, first), bytemuck::cast_slice(rows));
        }
    }
}

/// How far past its character's posed bounds a part's box reaches ([`follow_poses`]), metres.
pub(super) const BOX_SLACK: f32 = 0.25;

/// How long a part's box stays looser than its pose needs (by more than twice [`BOX_SLACK`] on
/// some side) before it is fitted again, seconds: longer than half the cycle of a slow walk, so
/// that a clip's own swing (legs together, then apart) keeps one box.
pub(super) const BOX_SHRINK_AFTER: f32 = 2.0;

/// Keeps each part's bounds around its character's joints (worked out as the crowd is posed),
/// grown by how far the model's flesh reaches from a joint, so that Bevy culls it where it is
/// drawn. A part whose box changes is extracted again by Bevy's renderer, so the box changes
/// seldom:
/// - where the posed bounds leave it, it grows to take them in with [`BOX_SLACK`] to spare
///   (kept where it already reaches further), so that a looping clip's box soon holds all of its
///   poses;
/// - where it is looser than the pose needs by more than twice the slack for
///   [`BOX_SHRINK_AFTER`] seconds on end (a ped that stopped running and stands), it is fitted
///   to the pose again.
///
/// A walking crowd fitted to each pose, as before, set about one part's box in 36 every frame
/// (about 550 of 20,000), and each set had the part extracted again (`docs/performance.md`).
pub(super) fn follow_poses(
    time: Res<Time>,
    rows: Res<CrowdBoneRows>,
    mut parts: Query<(&MeshTag, &mut CrowdPart, &mut Aabb)>,
) {
    let dt = time.delta_secs();
    parts.par_iter_mut().for_each(|(tag, mut part, mut aabb)| {
        let Some(&(lo, hi)) = rows.bounds.get(tag.0 as usize) else {
            return;
        };
        let grown = Vec3A::splat(part.reach);
        let (lo, hi) = (lo - grown, hi + grown);
        let (min, max) = (aabb.min(), aabb.max());
        let slack = Vec3A::splat(BOX_SLACK);
        let fit = || Aabb::from_min_max((lo - slack).into(), (hi + slack).into());
        // A box never set (empty, as the part is spawned): fitted at once.
        if aabb.half_extents == Vec3A::ZERO {
            *aabb = fit();
            return;
        }
        let inside = lo.cmpge(min).all() && hi.cmple(max).all();
        if !inside {
            let (min, max) = (min.min(lo - slack), max.max(hi + slack));
            *aabb = Aabb::from_min_max(min.into(), max.into());
            part.loose_for = 0.0;
            return;
        }
        let loose = (lo - min).max_element() > 2.0 * BOX_SLACK
            || (max - hi).max_element() > 2.0 * BOX_SLACK;
        if !loose {
            // (Written only where it changes.)
            if part.loose_for != 0.0 {
                part.loose_for = 0.0;
            }
            return;
        }
        part.loose_for += dt;
        if part.loose_for >= BOX_SHRINK_AFTER {
            *aabb = fit();
            part.loose_for = 0.0;
        }
    });
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
