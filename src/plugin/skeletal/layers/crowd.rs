//! Layers on crowd characters: a [`ClipLayers`] beside a [`CrowdCharacter`] plays its layers
//! over the character's own clip (the bottom layer: full, weight 1, on the character's
//! [`Playback`], its cross-fades shown), on the game's crowd skeleton, mixed by the games' rule
//! as on a character with bone entities ([`pose::mix_onto`]). The crowd has no bone entities,
//! so this is its own binding: each layer's clip laid out on the crowd skeleton (the layouts the
//! crowd's own clips share), masks resolved on its bone names, additive reference poses shared.
//! [`super::super::crowd::pose_crowds`] samples and mixes the layers as it poses the character.

use super::bind::warn_new;
use super::{ClipLayers, LayerReport, step_layers};
use crate::animation::PlayStep;
use crate::animation::layers::{BoneMask, ResolvedMask};
use crate::animation::pose::{self, KeyedChannels, LocalPose, MixLayer, PoseClip, PoseCursor};
use crate::plugin::skeletal::bind::PoseLayouts;
use crate::plugin::skeletal::crowd::{CrowdCharacter, CrowdSkeletons};
use crate::plugin::skeletal::root_motion::playhead_displacement;
use crate::plugin::skeletal::{ClipInfo, LoadedClips, RigClip};
use crate::skeleton::GtaGame;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// A crowd character's [`ClipLayers`] bound to its game's crowd skeleton.
#[derive(Component, Default)]
pub(crate) struct CrowdLayerBinding {
    /// The [`ClipLayers::shape`], game and clip generation bound last.
    bound: Option<(u64, GtaGame, u64)>,
    slots: Vec<CrowdSlot>,
    steps: Vec<PlayStep>,
    /// This frame's root motion of the layers flagged to carry it (Bevy's axes), which
    /// [`super::super::crowd::pose_crowds`] adds to the bottom clip's.
    pub(crate) root_delta: Vec3,
    report: LayerReport,
    warned: HashSet<(u32, u8)>,
}

/// One layer's clip on the crowd skeleton, and how it plays this frame.
struct CrowdSlot {
    layer: u32,
    clip: AssetId<RigClip>,
    info: Arc<ClipInfo>,
    layout: Arc<PoseClip>,
    cursor: PoseCursor,
    pose: LocalPose,
    mask_of: Option<BoneMask>,
    mask: Option<Arc<ResolvedMask>>,
    /// An additive layer's reference time and the clip's pose there.
    reference: Option<(f32, Arc<LocalPose>)>,
    /// This frame: the layer's time, weight and whether it is partial.
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
    )>,
) {
    let generation = clips.generation();
    for (entity, character, layers, binding) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(CrowdLayerBinding::default());
            continue;
        };
        let binding = &mut *binding;
        let now = (layers.shape, character.game, generation);
        if binding.bound == Some(now) && binding.report.clips_not_loaded.is_empty() {
            continue;
        }
        binding.bound = Some(now);
        let skeleton = skeletons.get(character.game).clone();
        let mut report = LayerReport::default();
        let mut old = std::mem::take(&mut binding.slots);
        for layer in layers.layers() {
            let id = layer.clip.id();
            let Some(info) = clips.get(id) else {
                report.clips_not_loaded.push(layer.id());
                continue;
            };
            let layout = skeletons.clip(id, character.game, &info);
            let kept = old
                .iter()
                .position(|s| {
                    s.layer == layer.id()
                        && Arc::ptr_eq(&s.layout, &layout)
                        && s.mask_of == layer.mask
                })
                .map(|i| old.swap_remove(i));
            let mut slot = kept.unwrap_or_else(|| {
                let mask = (layer.mask.as_ref())
                    .map(|m| layouts.mask(m, skeleton.names(), skeleton.parents()));
                CrowdSlot {
                    layer: layer.id(),
                    clip: id,
                    info: info.clone(),
                    cursor: PoseCursor::new(&layout),
                    pose: skeleton.rest().clone(),
                    layout: layout.clone(),
                    mask_of: layer.mask.clone(),
                    mask,
                    reference: None,
                    time: 0.0,
                    weight: 0.0,
                    partial: false,
                }
            });
            match layer.additive {
                Some(t) if slot.reference.as_ref().is_none_or(|(at, _)| *at != t) => {
                    slot.reference = Some((t, layouts.reference(&slot.layout, t)));
                }
                Some(_) => {}
                None => slot.reference = None,
            }
            if let Some(unknown) = slot.mask.as_ref().filter(|m| !m.unknown.is_empty()) {
                report
                    .unknown_mask_bones
                    .push((layer.id(), unknown.unknown.clone()));
            }
            let unmatched = skeletons.unmatched(character.game, &info);
            if !unmatched.is_empty() {
                report.unmatched_tracks.push((layer.id(), unmatched));
            }
            binding.slots.push(slot);
        }
        if report != binding.report {
            warn_new(entity, &report, &mut binding.warned);
            binding.report = report.clone();
            commands.entity(entity).insert(report);
        }
    }
}

/// Moves every crowd character's layers by virtual time, as [`super::advance_layers`] moves a
/// character's with bone entities (events triggered on it), notes each layer's time and weight
/// for the posing, and sums the root motion of the layers that carry it (§3.5).
pub(crate) fn advance_crowd_layers(
    mut commands: Commands,
    time: Res<Time>,
    mut characters: Query<(Entity, &mut ClipLayers, &mut CrowdLayerBinding)>,
) {
    let dt = time.delta_secs();
    for (entity, mut layers, mut binding) in &mut characters {
        let binding = &mut *binding;
        let slots = &binding.slots;
        let duration = |h: &Handle<RigClip>| {
            let id = h.id();
            slots
                .iter()
                .find(|s| s.clip == id)
                .map(|s| s.info.clip.duration())
        };
        step_layers(
            &mut commands,
            entity,
            &mut layers,
            dt,
            duration,
            &mut binding.steps,
        );
        binding.root_delta = Vec3::ZERO;
        for slot in &mut binding.slots {
            slot.weight = 0.0;
        }
        for (layer, step) in layers.layers().iter().zip(&binding.steps) {
            let Some(slot) = binding.slots.iter_mut().find(|s| s.layer == layer.id()) else {
                continue;
            };
            slot.time = layer.playhead.time;
            slot.weight = layer.weight();
            slot.partial = layer.flags.partial;
            if layer.flags.root_translation {
                let gta = playhead_displacement(
                    &slot.info,
                    step,
                    layer.playhead.time,
                    layer.playhead.mode,
                );
                binding.root_delta += crate::coords::gta_vec_to_bevy(gta) * layer.weight();
            }
        }
    }
}

impl CrowdLayerBinding {
    /// Whether a layer weighs in this frame.
    pub(crate) fn playing(&self) -> bool {
        self.slots.iter().any(|s| s.weight > 0.0)
    }

    /// Samples the layers that weigh in this frame and mixes them onto `out`, the bottom clip's
    /// pose (a full layer at weight 1, keying `base`), on a skeleton whose rest is `rest`.
    pub(crate) fn mix_onto(&mut self, base: &KeyedChannels, rest: &LocalPose, out: &mut LocalPose) {
        let mut layers: smallvec::SmallVec<[MixLayer; 8]> = smallvec::SmallVec::new();
        for slot in self.slots.iter_mut().filter(|s| s.weight > 0.0) {
            pose::sample(&slot.layout, slot.time, &mut slot.cursor, &mut slot.pose);
        }
        for slot in self.slots.iter().filter(|s| s.weight > 0.0) {
            layers.push(MixLayer {
                pose: &slot.pose,
                keyed: slot.layout.keyed(),
                weight: slot.weight,
                partial: slot.partial,
                mask: slot.mask.as_deref().map(|m| &m.weights[..]),
                additive: slot.reference.as_ref().map(|(_, p)| &**p),
            });
        }
        pose::mix_onto(base, &layers, rest, pose::TranslationRule::Absolute, out);
    }
}
