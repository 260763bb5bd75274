//! Playing a [`ClipLayers`] character: its layers moved by virtual time (with their events and
//! root motion), then sampled and mixed into the pose the bone pass writes.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::{BASE, ClipLayers, LayerBinding, LayerFinished, LayerLooped, LayerRemoved, SlotPlay};
use crate::animation::PlayStep;
use crate::animation::layers::{LayerEvent, LayerFlags};
use crate::animation::pose::{self, MixLayer, TranslationRule};
use crate::plugin::Playback;
use crate::plugin::skeletal::bind::PoseSource;
use crate::plugin::skeletal::root_motion::playhead_displacement;
use crate::plugin::skeletal::{RigClip, RootMotion, step_displacement};
use bevy::prelude::*;

/// Moves every character's layers by virtual time ([`LayerStack::step`]), triggers their
/// events, and moves characters with a [`RootMotion`] by their layers' root motion: each layer
/// flagged [`LayerFlags::root_translation`] whose clip's root motion is extracted adds its
/// root's movement times its weight (§3.5).
pub(crate) fn advance_layers(
    mut commands: Commands,
    time: Res<Time>,
    mut characters: Query<(
        Entity,
        &mut ClipLayers,
        &mut LayerBinding,
        Option<&mut RootMotion>,
        Option<&mut Transform>,
        Option<&Playback>,
    )>,
) {
    let dt = time.delta_secs();
    for (entity, mut layers, mut binding, motion, transform, playback) in &mut characters {
        let binding = &mut *binding;
        let frames = &binding.frames;
        let duration = |h: &Handle<RigClip>| {
            let id = h.id();
            frames.iter().find(|s| s.clip == id).map(|s| s.duration)
        };
        step_layers(
            &mut commands,
            entity,
            &mut layers,
            dt,
            duration,
            &mut binding.steps,
        );
        let (Some(mut motion), Some(mut transform)) = (motion, transform) else {
            continue;
        };
        let mut delta = Vec3::ZERO;
        if let Some(playback) = playback
            && let Some(slot) = binding.slots.iter().find(|s| s.layer == BASE)
        {
            delta += slot.root_motion(step_displacement(&slot.info, playback));
        }
        for (layer, step) in layers.layers().iter().zip(&binding.steps) {
            if !layer.flags.root_translation {
                continue;
            }
            if let Some(slot) = binding.slots.iter().find(|s| s.layer == layer.id()) {
                delta += slot.root_motion(playhead_displacement(
                    &slot.info,
                    step,
                    layer.playhead.time,
                    layer.playhead.mode,
                )) * layer.weight();
            }
        }
        motion.move_by(delta, &mut transform);
    }
}

/// Moves `entity`'s layers by `dt` ([`LayerStack::step`](crate::animation::layers::LayerStack::step),
/// each clip's length from `duration`, each layer's playhead step into `steps`) and triggers
/// their events on it.
fn step_layers(
    commands: &mut Commands,
    entity: Entity,
    layers: &mut ClipLayers,
    dt: f32,
    duration: impl Fn(&Handle<RigClip>) -> Option<f32>,
    steps: &mut Vec<PlayStep>,
) {
    let events = step_stack(layers, dt, duration, steps);
    trigger_layer_events(commands, entity, events);
}

/// [`step_layers`] without the events triggered: they are returned.
pub(super) fn step_stack(
    layers: &mut ClipLayers,
    dt: f32,
    duration: impl Fn(&Handle<RigClip>) -> Option<f32>,
    steps: &mut Vec<PlayStep>,
) -> Vec<LayerEvent<Handle<RigClip>>> {
    let mut events = Vec::new();
    layers.stack.step(dt, duration, &mut events, steps);
    if events.iter().any(|e| matches!(e, LayerEvent::Removed(..))) {
        layers.reshaped();
    }
    events
}

/// Triggers `events` (of `entity`'s layers) on `entity`.
pub(super) fn trigger_layer_events(
    commands: &mut Commands,
    entity: Entity,
    events: Vec<LayerEvent<Handle<RigClip>>>,
) {
    for e in events {
        match e {
            LayerEvent::Looped(layer) => commands.trigger(LayerLooped { entity, layer }),
            LayerEvent::Finished(layer) => commands.trigger(LayerFinished { entity, layer }),
            LayerEvent::Removed(layer, clip) => commands.trigger(LayerRemoved {
                entity,
                layer,
                clip,
            }),
        }
    }
}

/// Samples every character's layers at their playheads and mixes them into the pose the bone
/// pass writes; the characters spread over the task pool's threads. Where every layer's clip
/// is laid out on a shared timeline, only this frame's times and weights are noted: the bone
/// pass samples and mixes them as it writes the bones ([`LayerBinding::pose_into`]).
pub(crate) fn sample_layers(
    mut characters: Query<(&ClipLayers, &mut LayerBinding, Option<&Playback>)>,
) {
    characters
        .par_iter_mut()
        .for_each(|(layers, mut binding, playback)| {
            let binding = &mut *binding;
            binding.plays.clear();
            binding.direct = None;
            binding.onto = false;
            binding.in_bone_pass = false;
            if binding.slots.is_empty() {
                return;
            }
            let mut timeline = true;
            // (An additive layer's reference pose is bound with it: a change to the layer's
            // additive time binds it afresh.)
            for (i, frame) in binding.frames.iter().enumerate() {
                let Some(layer) = layer_of(layers, playback, frame.layer) else {
                    continue;
                };
                timeline &= frame.timeline;
                binding.plays.push(SlotPlay {
                    slot: i,
                    time: layer.time,
                    weight: layer.weight,
                    partial: layer.flags.partial,
                });
            }
            // A plain bottom layer at weight 1 (full, unmasked, not additive): alone, its pose
            // is the mix; under others, it is sampled where the mix goes and they are mixed
            // onto it.
            binding.onto = binding.plays.first().is_some_and(|bottom| {
                let frame = &binding.frames[bottom.slot];
                bottom.weight == 1.0
                    && !bottom.partial
                    && frame.mask.is_none()
                    && frame.reference.is_none()
            });
            if let [only] = binding.plays.as_slice()
                && binding.onto
            {
                binding.direct = Some(only.slot);
            }
            if timeline && !binding.plays.is_empty() {
                binding.in_bone_pass = true;
                return;
            }
            // Sampled and mixed here.
            let LayerBinding {
                slots,
                frames,
                rest,
                pose: out,
                plays,
                direct,
                ..
            } = binding;
            for play in plays.iter() {
                let slot = &mut slots[play.slot];
                pose::sample(&slot.layout, play.time, &mut slot.cursor, &mut slot.pose);
            }
            if direct.is_some() {
                return;
            }
            // At most a few layers: on the stack, not the heap.
            let layer = |play: &SlotPlay| frames[play.slot].mix_layer(play, &slots[play.slot].pose);
            let Some(first) = plays.first() else {
                // No layer playing: every bone at rest.
                pose::mix(&[], rest, TranslationRule::Absolute, out);
                return;
            };
            const FEW: usize = 8;
            if plays.len() <= FEW {
                let mut few = [layer(first); FEW];
                for (to, play) in few.iter_mut().zip(plays.iter()) {
                    *to = layer(play);
                }
                pose::mix(&few[..plays.len()], rest, TranslationRule::Absolute, out);
            } else {
                let many: Vec<MixLayer> = plays.iter().map(layer).collect();
                pose::mix(&many, rest, TranslationRule::Absolute, out);
            }
        });
}

/// What sampling and mixing read of a layer: its time, weight and flags.
struct LayerView {
    time: f32,
    weight: f32,
    flags: LayerFlags,
}

/// Layer `id` of the stack, or for [`BASE`] the bottom layer the character's own [`Playback`]
/// plays (weight 1 at the playhead).
fn layer_of(layers: &ClipLayers, playback: Option<&Playback>, id: u32) -> Option<LayerView> {
    if id == BASE {
        return playback.map(|p| LayerView {
            time: p.time,
            weight: 1.0,
            flags: LayerFlags::default(),
        });
    }
    layers.get(id).map(|l| LayerView {
        time: l.playhead.time,
        weight: l.weight(),
        flags: l.flags,
    })
}

/// When a character's [`ClipLayers`] go, so does what they bound: a [`SkeletalClip`] of its own
/// binds afresh (a crowd character plays its own clip alone).
pub(crate) fn unbind_layers(removed: On<Remove, ClipLayers>, mut commands: Commands) {
    if let Ok(mut e) = commands.get_entity(removed.entity) {
        e.try_remove::<(LayerBinding, PoseSource, super::CrowdLayerBinding)>();
    }
}
