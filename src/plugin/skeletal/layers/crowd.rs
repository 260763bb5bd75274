//! Layers on crowd characters: a [`ClipLayers`] beside a [`CrowdCharacter`] plays its layers
//! over the character's own clip (the bottom layer: full, weight 1, on the character's
//! [`Playback`], its cross-fades shown), on its crowd skeleton (its game's, or its glTF model's
//! rig with every clip retargeted onto it), mixed by the games' rule
//! as on a character with bone entities ([`pose::mix_onto`]). The crowd has no bone entities,
//! so this is its own binding: each layer's clip laid out on the crowd skeleton (the layouts the
//! crowd's own clips share), masks resolved on its bone names, additive reference poses shared.
//! [`super::super::crowd::pose_crowds`] samples and mixes the layers as it poses the character.

use super::bind::warn_new;
use super::{ClipLayers, Few, LayerReport, step_stack, trigger_layer_events};
use crate::animation::PlayStep;
use crate::animation::layers::{BoneMask, ResolvedMask};
use crate::animation::pose::{self, KeyedChannels, LocalPose, MixLayer, PoseCursor};
use crate::plugin::skeletal::bind::PoseLayouts;
use crate::plugin::skeletal::crowd::{
    CrowdCharacter, CrowdClip, CrowdRig, CrowdSkeleton, CrowdSkeletons,
};
use crate::plugin::skeletal::root_motion::playhead_displacement;
use crate::plugin::skeletal::{ClipInfo, LoadedClips, RigClip};
use bevy::ecs::system::ParallelCommands;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// A crowd character's [`ClipLayers`] bound to its crowd skeleton.
#[derive(Component, Default)]
pub(crate) struct CrowdLayerBinding {
    /// The [`ClipLayers::shape`], skeleton (its address) and clip generation bound last.
    bound: Option<(u64, usize, u64)>,
    /// The skeleton bound to (kept, so that its address names it).
    skeleton: Option<Arc<CrowdSkeleton>>,
    slots: Vec<CrowdSlot>,
    /// Per slot, what every frame reads and writes, kept inline (in the component's table,
    /// character after character) rather than in the slot on the heap: a cache miss per
    /// character saved in the playheads' step and in the posing.
    frames: Few<CrowdFrame>,
    /// This frame's root motion of the layers flagged to carry it (Bevy's axes), which
    /// [`super::super::crowd::pose_crowds`] adds to the bottom clip's.
    pub(crate) root_delta: Vec3,
    report: LayerReport,
    warned: HashSet<(u32, u8)>,
}

/// One layer's clip on the crowd skeleton: its layout, sampling cache and pose, its mask.
struct CrowdSlot {
    layer: u32,
    clip: AssetId<RigClip>,
    info: Arc<ClipInfo>,
    layout: CrowdClip,
    cursor: PoseCursor,
    pose: LocalPose,
    mask_of: Option<BoneMask>,
    mask: Option<Arc<ResolvedMask>>,
    /// An additive layer's reference time and the clip's pose there.
    reference: Option<(f32, Arc<LocalPose>)>,
    /// The clip's tracks that drive no bone.
    unmatched: Vec<String>,
}

/// A slot's layer and clip, and how the layer plays this frame.
#[derive(Clone, Copy)]
struct CrowdFrame {
    layer: u32,
    clip: AssetId<RigClip>,
    /// The clip's length.
    duration: f32,
    time: f32,
    weight: f32,
    partial: bool,
}

/// Binds every crowd character's [`ClipLayers`] (again when a layer, its clip or mask, the
/// character's game or a clip asset changes) and keeps its [`LayerReport`].
pub(crate) fn bind_crowd_layers(
    mut commands: Commands,
    clips: LoadedClips,
    mut skeletons: ResMut<CrowdSkeletons>,
    mut layouts: ResMut<PoseLayouts>,
    mut characters: Query<(
        Entity,
        &CrowdCharacter,
        &ClipLayers,
        Option<&mut CrowdLayerBinding>,
        Option<&CrowdRig>,
    )>,
) {
    let generation = clips.generation();
    for (entity, character, layers, binding, rig) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(CrowdLayerBinding::default());
            continue;
        };
        let binding = &mut *binding;
        // A glTF character's rig (none yet: its layers wait for it), or its game's skeleton.
        let skeleton = match rig {
            Some(CrowdRig(Some(rig))) => rig.clone(),
            Some(CrowdRig(None)) => continue,
            None => skeletons.get(character.game).clone(),
        };
        let now = (layers.shape, Arc::as_ptr(&skeleton) as usize, generation);
        if binding.bound == Some(now) && binding.report.clips_not_loaded.is_empty() {
            continue;
        }
        // A slot is kept while its layer, clip (as loaded), mask and skeleton are: a layer's
        // playhead changed through `ClipLayers::get_mut` rebinds nothing.
        let same_skeleton = binding.bound.is_some_and(|(_, s, _)| s == now.1);
        binding.bound = Some(now);
        binding.skeleton = Some(skeleton.clone());
        let mut report = LayerReport::default();
        let mut old = std::mem::take(&mut binding.slots);
        if !same_skeleton {
            old.clear();
        }
        for layer in layers.layers() {
            let id = layer.clip.id();
            let Some(info) = clips.get(id) else {
                report.clips_not_loaded.push(layer.id());
                continue;
            };
            let kept = old
                .iter()
                .position(|s| {
                    s.layer == layer.id()
                        && s.clip == id
                        && Arc::ptr_eq(&s.info, &info)
                        && s.mask_of == layer.mask
                })
                .map(|i| old.swap_remove(i));
            let mut slot = kept.unwrap_or_else(|| {
                let mask = (layer.mask.as_ref())
                    .map(|m| layouts.mask(m, skeleton.names(), skeleton.parents()));
                let layout = skeletons.layout(id, &skeleton, &info, mask.as_ref(), &mut layouts);
                CrowdSlot {
                    layer: layer.id(),
                    clip: id,
                    unmatched: CrowdSkeletons::unmatched(&skeleton, &info, &layout),
                    info: info.clone(),
                    cursor: PoseCursor::new(&layout.layout),
                    pose: skeleton.rest().clone(),
                    layout,
                    mask_of: layer.mask.clone(),
                    mask,
                    reference: None,
                }
            });
            match layer.additive {
                Some(t) if slot.reference.as_ref().is_none_or(|(at, _)| *at != t) => {
                    slot.reference = Some((t, layouts.reference(&slot.layout.layout, t)));
                }
                Some(_) => {}
                None => slot.reference = None,
            }
            if let Some(unknown) = slot.mask.as_ref().filter(|m| !m.unknown.is_empty()) {
                report
                    .unknown_mask_bones
                    .push((layer.id(), unknown.unknown.clone()));
            }
            if !slot.unmatched.is_empty() {
                report
                    .unmatched_tracks
                    .push((layer.id(), slot.unmatched.clone()));
            }
            binding.slots.push(slot);
        }
        binding.frames = (binding.slots.iter())
            .map(|slot| CrowdFrame {
                layer: slot.layer,
                clip: slot.clip,
                duration: slot.info.clip.duration(),
                time: 0.0,
                weight: 0.0,
                partial: false,
            })
            .collect();
        if report != binding.report {
            warn_new(entity, &report, &mut binding.warned);
            binding.report = report.clone();
            commands.entity(entity).insert(report);
        }
    }
}

/// Moves every crowd character's layers by virtual time, as [`super::advance_layers`] moves a
/// character's with bone entities (events triggered on it), notes each layer's time and weight
/// for the posing, and sums the root motion of the layers that carry it (§3.5). The characters
/// spread over the task pool's threads.
pub(crate) fn advance_crowd_layers(
    commands: ParallelCommands,
    time: Res<Time>,
    mut characters: Query<(Entity, &mut ClipLayers, &mut CrowdLayerBinding)>,
) {
    let dt = time.delta_secs();
    characters.par_iter_mut().for_each_init(
        // Each thread's playhead steps, in its cache.
        Vec::new,
        |steps, (entity, mut layers, mut binding)| {
            let binding = &mut *binding;
            let frames = &binding.frames;
            let duration = |h: &Handle<RigClip>| {
                let id = h.id();
                frames.iter().find(|f| f.clip == id).map(|f| f.duration)
            };
            let events = step_stack(&mut layers, dt, duration, steps);
            if !events.is_empty() {
                commands.command_scope(|mut commands| {
                    trigger_layer_events(&mut commands, entity, events);
                });
            }
            binding.play(&layers, steps);
        },
    );
}

impl CrowdLayerBinding {
    /// Notes each layer's time, weight and kind for this frame's posing (`steps`: the layers'
    /// playhead steps), and the root motion of those that carry it.
    fn play(&mut self, layers: &ClipLayers, steps: &[PlayStep]) {
        self.root_delta = Vec3::ZERO;
        for frame in &mut self.frames {
            frame.weight = 0.0;
        }
        for (layer, step) in layers.layers().iter().zip(steps) {
            let Some(k) = self.frames.iter().position(|f| f.layer == layer.id()) else {
                continue;
            };
            let frame = &mut self.frames[k];
            frame.time = layer.playhead.time;
            frame.weight = layer.weight();
            frame.partial = layer.flags.partial;
            if layer.flags.root_translation {
                let gta = playhead_displacement(
                    &self.slots[k].info,
                    step,
                    layer.playhead.time,
                    layer.playhead.mode,
                );
                self.root_delta += self.slots[k].layout.root_motion(gta) * layer.weight();
            }
        }
    }

    /// Whether a layer weighs in this frame.
    pub(crate) fn playing(&self) -> bool {
        self.frames.iter().any(|f| f.weight > 0.0)
    }

    /// Samples the layers that weigh in this frame and mixes them onto `out`, the bottom clip's
    /// pose (a full layer at weight 1, keying `base`), on a skeleton whose rest is `rest`.
    pub(crate) fn mix_onto(&mut self, base: &KeyedChannels, rest: &LocalPose, out: &mut LocalPose) {
        let mut layers: smallvec::SmallVec<[MixLayer; 8]> = smallvec::SmallVec::new();
        for (slot, frame) in (self.slots.iter_mut()).zip(&self.frames) {
            if frame.weight > 0.0 {
                pose::sample(
                    &slot.layout.layout,
                    frame.time,
                    &mut slot.cursor,
                    &mut slot.pose,
                );
            }
        }
        let playing = (self.slots.iter()).zip(&self.frames);
        for (slot, frame) in playing.filter(|(_, f)| f.weight > 0.0) {
            layers.push(MixLayer {
                pose: &slot.pose,
                keyed: slot.layout.keyed(),
                weight: frame.weight,
                partial: frame.partial,
                mask: slot.mask.as_deref().map(|m| &m.weights[..]),
                additive: slot.reference.as_ref().map(|(_, p)| &**p),
            });
        }
        pose::mix_onto(base, &layers, rest, pose::TranslationRule::Absolute, out);
    }
}
