//! Binding a [`ClipLayers`] character: its bones, each layer's clip laid out for them, the
//! masks resolved, the bones the layers drive tagged for the bone pass, and the character's
//! [`LayerReport`].

use super::{BASE, ClipLayers, LayerBinding, LayerReport, Slot, SlotFrame, base_layer};
use crate::animation::BonePose;
use crate::animation::layers::Layer;
use crate::animation::pose::{LocalPose, PoseCursor};
use crate::plugin::Playback;
use crate::plugin::skeletal::bind::{
    BonePass, BoneSet, BonesChanged, PlaybackBinding, PoseLayouts, PoseSource, PosedBy,
    bind_tracks, unmatched_tracks,
};
use crate::plugin::skeletal::retargeted::gather_hierarchy;
use crate::plugin::skeletal::{
    CrowdCharacter, LoadedClips, Retarget, RetargetMode, RigBone, RigClip, SkeletalClip,
};
use bevy::ecs::system::ParamSet;
use bevy::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Binds every [`ClipLayers`] character's bones and each layer's clip (again when bones appear,
/// a clip asset changes, or a layer's clip or mask does), tags the bones the layers drive for
/// the bone pass, and keeps the character's [`LayerReport`]. On a rest-compensated
/// [`Retarget`] character every layer whose clip knows its source skeleton is retargeted onto
/// it, as a [`SkeletalClip`] alone would be; the others bind by bone name.
pub(crate) fn bind_layers(
    mut commands: Commands,
    clips: LoadedClips,
    bones_changed: Res<BonesChanged>,
    mut layouts: ResMut<PoseLayouts>,
    mut characters: Query<
        (
            Entity,
            &ClipLayers,
            Option<&mut LayerBinding>,
            Option<&mut PoseSource>,
            Option<(&mut SkeletalClip, &mut Playback)>,
            Option<Ref<Retarget>>,
        ),
        // A crowd character's layers are bound on its crowd skeleton (`super::crowd`).
        Without<CrowdCharacter>,
    >,
    children: Query<&Children>,
    rig_bones: Query<&RigBone>,
    mut nodes: ParamSet<(
        Query<(&Transform, Option<&Name>, &ChildOf)>,
        Query<&mut Transform>,
    )>,
    posed_by: Query<&PosedBy>,
) {
    let generation = clips.generation();
    for (entity, layers, binding, source, mut base, retarget) in &mut characters {
        let (Some(mut binding), Some(mut source)) = (binding, source) else {
            // What a clip of its own bound (if it played one before) goes: the layers bind
            // afresh.
            commands
                .entity(entity)
                .remove::<PlaybackBinding>()
                .insert((LayerBinding::default(), PoseSource::default()));
            continue;
        };
        let binding = &mut *binding;
        // A cross-fade of the bottom clip is not shown under layers: the new clip starts from
        // 0 at once, as the fade would have started it (a held blend stays, for when the
        // layers go).
        if let Some((skeletal, playback)) = base.as_mut()
            && skeletal
                .fade
                .as_ref()
                .is_some_and(|f| !f.started && f.held.is_none())
        {
            skeletal.fade = None;
            playback.time = 0.0;
            playback.restart();
        }
        let retarget = retarget.filter(|r| r.mode == RetargetMode::RestCompensated);
        let retarget_moved = retarget.as_ref().is_some_and(|r| r.is_changed())
            || retarget.is_some() != binding.target.is_some();
        let new_bones = !binding.bound || binding.bones_seen != bones_changed.0 || retarget_moved;
        if new_bones {
            gather_bones(
                entity,
                retarget.as_deref(),
                binding,
                &children,
                &rig_bones,
                &nodes.p0(),
                &mut layouts,
            );
            binding.bones_seen = bones_changed.0;
            binding.bound = true;
            binding.slots.clear();
        }
        let clips_moved = binding.generation != generation;
        binding.generation = generation;
        // The common frame: the same layers on the same clips and masks as last frame, all
        // bound, nothing reloaded. Nothing to do.
        let shape = (
            layers.shape,
            base.as_ref().map(|(skeletal, _)| skeletal.clip.id()),
        );
        if !new_bones
            && !clips_moved
            && binding.report.clips_not_loaded.is_empty()
            && binding.bound_shape == shape
        {
            continue;
        }
        binding.bound_shape = shape;
        let mut changed = new_bones;
        let mut report = LayerReport::default();
        let mut old = std::mem::take(&mut binding.slots);
        let base_layer = base.as_ref().map(|(skeletal, _)| base_layer(skeletal));
        for layer in base_layer.iter().chain(layers.layers()) {
            let id = layer.clip.id();
            let kept = old
                .iter()
                .position(|s| s.layer == layer.id() && s.clip == id)
                .map(|i| old.swap_remove(i))
                .filter(|s| {
                    (!clips_moved || clips.get(id).is_some_and(|i| Arc::ptr_eq(&i, &s.info)))
                        && s.mask_of == layer.mask
                });
            let slot = match kept {
                Some(slot) => Some(slot),
                None => {
                    changed = true;
                    bind_slot(layer, id, binding, &clips, &mut layouts)
                }
            };
            let Some(mut slot) = slot else {
                report.clips_not_loaded.push(layer.id());
                if layer.id() == BASE
                    && let Some((_, playback)) = base.as_mut()
                    && playback.duration.is_some()
                {
                    playback.duration = None;
                }
                continue;
            };
            if layer.id() == BASE
                && let Some((_, playback)) = base.as_mut()
            {
                let d = Some(slot.info.clip.duration());
                if playback.duration != d {
                    playback.duration = d;
                }
                if binding.base_clip.is_some_and(|c| c != id) {
                    // A new clip set on the character starts afresh, as without layers.
                    playback.restart();
                }
                binding.base_clip = Some(id);
            }
            // An additive layer's reference pose, shared with the characters of the same
            // layout and reference time.
            match layer.additive {
                Some(t) if slot.reference.as_ref().is_none_or(|(at, _)| *at != t) => {
                    slot.reference = Some((t, layouts.reference(&slot.layout, t)));
                }
                Some(_) => {}
                None => slot.reference = None,
            }
            if !slot.unknown_mask.is_empty() {
                report
                    .unknown_mask_bones
                    .push((layer.id(), slot.unknown_mask.clone()));
            }
            if !slot.unmatched.is_empty() && !binding.bones.is_empty() {
                report
                    .unmatched_tracks
                    .push((layer.id(), slot.unmatched.clone()));
            }
            binding.slots.push(slot);
        }
        changed |= !old.is_empty();
        binding.frames = binding.slots.iter().map(SlotFrame::of).collect();
        if changed {
            retag(
                entity,
                binding,
                &mut source,
                &posed_by,
                &mut commands,
                &mut nodes.p1(),
            );
        }
        source.pass = if binding.slots.is_empty() || binding.bones.is_empty() {
            BonePass::Off
        } else {
            BonePass::Sampled
        };
        if report != binding.report {
            warn_new(entity, &report, &mut binding.warned);
            binding.report = report.clone();
            commands.entity(entity).insert(report);
        }
    }
}

/// The character's bones (descendants with a [`RigBone`]; on a rest-compensated [`Retarget`]
/// character, every node below it, and its rig), their names, their parents among them and
/// their rest pose.
fn gather_bones(
    entity: Entity,
    retarget: Option<&Retarget>,
    binding: &mut LayerBinding,
    children: &Query<&Children>,
    rig_bones: &Query<&RigBone>,
    nodes: &Query<(&Transform, Option<&Name>, &ChildOf)>,
    layouts: &mut PoseLayouts,
) {
    match retarget {
        Some(retarget) => {
            let (bones, rig) = gather_hierarchy(entity, retarget, children, nodes, rig_bones);
            binding.bones = bones;
            binding.target = rig.map(Arc::new);
        }
        None => {
            binding.bones = children
                .iter_descendants(entity)
                .filter_map(|e| {
                    let r = rig_bones.get(e).ok()?;
                    Some((e, BonePose::from(r.rest), r.target))
                })
                .collect();
            binding.target = None;
        }
    }
    let index: HashMap<Entity, usize> = binding
        .bones
        .iter()
        .enumerate()
        .map(|(i, b)| (b.0, i))
        .collect();
    binding.names.clear();
    binding.parents.clear();
    for (e, _, _) in &binding.bones {
        let (name, child_of) = nodes.get(*e).map_or((None, None), |(_, n, c)| (n, Some(c)));
        binding
            .names
            .push(name.map_or_else(String::new, |n| n.as_str().to_owned()));
        // The nearest ancestor that is a bone (entities between, a basis, are skipped).
        let mut up = child_of.map(|c| c.parent());
        let mut parent = None;
        while let Some(p) = up {
            if p == entity {
                break;
            }
            if let Some(&i) = index.get(&p) {
                parent = Some(i);
                break;
            }
            up = nodes.get(p).ok().map(|(_, _, c)| c.parent());
        }
        binding.parents.push(parent);
    }
    binding.rest = layouts.rest(&binding.bones);
    binding.driven = vec![false; binding.bones.len()];
}

/// `layer`'s clip bound to the character's bones (retargeted onto them on a rest-compensated
/// character, when the clip knows its source skeleton) with its mask resolved, or `None` while
/// the clip is not loaded.
///
/// A masked layer's clip (bound by name) is laid out with only the tracks of the bones its mask
/// weighs: a bone the mask leaves out is, for the mix, a bone the layer does not key, so neither
/// sampling nor the mix spends anything on it (an arm-masked layer samples the arm, not the
/// body). Every character of one skeleton and mask shares that layout.
fn bind_slot(
    layer: &Layer<Handle<RigClip>>,
    id: AssetId<RigClip>,
    binding: &LayerBinding,
    clips: &LoadedClips,
    layouts: &mut PoseLayouts,
) -> Option<Slot> {
    let info = clips.get(id)?;
    let mask = (layer.mask.as_ref()).map(|m| layouts.mask(m, &binding.names, &binding.parents));
    let retargeted = binding
        .target
        .as_deref()
        .and_then(|t| layouts.retargeting(id, &info, t));
    let (layout, unmatched) = match &retargeted {
        Some(plan) => (
            plan.layout.clone(),
            unmatched_tracks(&info, &[], Some(plan)),
        ),
        None => {
            let tracks = bind_tracks(&info, &binding.bones);
            let unmatched = unmatched_tracks(&info, &tracks, None);
            let weighed = |b: &usize| mask.as_ref().is_none_or(|m| m.weights.get(*b) > Some(&0.0));
            let laid_out: Vec<Option<usize>> = tracks.iter().map(|t| t.filter(weighed)).collect();
            (
                layouts.get(id, &info, &binding.bones, &laid_out)?,
                unmatched,
            )
        }
    };
    Some(Slot {
        layer: layer.id(),
        clip: id,
        cursor: PoseCursor::new(&layout),
        layout,
        retarget: retargeted,
        pose: LocalPose::clone(&binding.rest),
        info,
        mask_of: layer.mask.clone(),
        unknown_mask: mask.as_ref().map(|m| m.unknown.clone()).unwrap_or_default(),
        mask,
        reference: None,
        unmatched,
    })
}

/// Works out which bones the layers drive, tags them for the bone pass, and puts the bones no
/// layer drives any more back to rest.
fn retag(
    entity: Entity,
    binding: &mut LayerBinding,
    source: &mut PoseSource,
    posed_by: &Query<&PosedBy>,
    commands: &mut Commands,
    transforms: &mut Query<&mut Transform>,
) {
    let mut driven = vec![false; binding.bones.len()];
    for frame in &binding.frames {
        for (b, d) in driven.iter_mut().enumerate() {
            let (r, t, s) = frame.keyed().keys_joint(b);
            *d |= r || t || s;
        }
    }
    let mut set = BoneSet::default();
    for (b, (&now, was)) in driven.iter().zip(&binding.driven).enumerate() {
        let (bone, rest, _) = binding.bones[b];
        if now {
            set.insert(b);
            let by = PosedBy {
                character: entity,
                bone: b as u32,
            };
            if posed_by.get(bone).ok() != Some(&by) {
                commands.entity(bone).try_insert(by);
            }
        } else if *was && let Ok(mut t) = transforms.get_mut(bone) {
            *t = Transform::from(rest);
        }
    }
    binding.driven = driven;
    source.driven = set;
}

/// Warns once per layer and kind of problem.
pub(super) fn warn_new(entity: Entity, report: &LayerReport, warned: &mut HashSet<(u32, u8)>) {
    for &l in &report.clips_not_loaded {
        if warned.insert((l, 0)) {
            debug!("{entity}: layer {l}'s clip is not loaded; the other layers play on");
        }
    }
    for (l, names) in &report.unknown_mask_bones {
        if warned.insert((*l, 1)) {
            warn!(
                "{entity}: layer {l}'s mask names what the character lacks: {}",
                names.join(", ")
            );
        }
    }
    for (l, tracks) in &report.unmatched_tracks {
        if warned.insert((*l, 2)) {
            warn!(
                "{entity}: {} tracks of layer {l}'s clip match no bone and are ignored: {}",
                tracks.len(),
                tracks.join(", ")
            );
        }
    }
}
