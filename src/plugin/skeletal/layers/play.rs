//! Playing a [`ClipLayers`] character: its layers moved by virtual time (with their events and
//! root motion), then sampled and mixed into the pose the bone pass writes.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::{BASE, ClipLayers, LayerBinding, LayerFinished, LayerLooped, LayerRemoved};
use crate::anim::layers::{LayerEvent, LayerFlags};
use crate::anim::pose::{self, MixLayer, TranslationRule};
use crate::plugin::Playback;
use crate::plugin::skeletal::bind::PoseSource;
use crate::plugin::skeletal::root_motion::playhead_displacement;
use crate::plugin::skeletal::{RootMotion, step_displacement};
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
    mut events: Local<Vec<LayerEvent<Handle<AnimationClip>>>>,
) {
    let dt = time.delta_secs();
    for (entity, mut layers, mut binding, motion, transform, playback) in &mut characters {
        let binding = &mut *binding;
        let slots = &binding.slots;
        let duration = |h: &Handle<AnimationClip>| {
            let id = h.id();
            slots
                .iter()
                .find(|s| s.clip == id)
                .map(|s| s.info.clip.duration())
        };
        events.clear();
        layers
            .stack
            .step(dt, duration, &mut events, &mut binding.steps);
        for e in events.drain(..) {
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

/// Samples every character's layers at their playheads and mixes them into the pose the bone
/// pass writes; the characters spread over the task pool's threads.
pub(crate) fn sample_layers(
    mut characters: Query<(&ClipLayers, &mut LayerBinding, Option<&Playback>)>,
) {
    characters
        .par_iter_mut()
        .for_each(|(layers, mut binding, playback)| {
            let binding = &mut *binding;
            if binding.slots.is_empty() {
                return;
            }
            for slot in &mut binding.slots {
                let Some(layer) = layer_of(layers, playback, slot.layer) else {
                    continue;
                };
                pose::sample(&slot.layout, layer.time, &mut slot.cursor, &mut slot.pose);
                match (layer.additive, &slot.reference) {
                    (None, _) => slot.reference = None,
                    (Some(t), Some((at, _))) if *at == t => {}
                    (Some(t), _) => slot.reference = Some((t, slot.pose_at(t))),
                }
            }
            // One plain layer at weight 1: its pose is the mix.
            binding.direct = None;
            if let [only] = binding.slots.as_slice()
                && let Some(layer) = layer_of(layers, playback, only.layer)
                && layer.weight == 1.0
                && !layer.flags.partial
                && only.mask.is_none()
                && only.reference.is_none()
            {
                binding.direct = Some(0);
                return;
            }
            // At most a few layers: on the stack, not the heap.
            let LayerBinding {
                slots,
                rest,
                pose: out,
                ..
            } = binding;
            let unused = MixLayer {
                pose: rest,
                keyed: slots[0].keyed(),
                weight: 0.0,
                partial: false,
                mask: None,
                additive: None,
            };
            let mut few = [unused; 8];
            let mut many: Vec<MixLayer> = Vec::new();
            let mut n = 0;
            for slot in slots.iter() {
                let Some(layer) = layer_of(layers, playback, slot.layer) else {
                    continue;
                };
                let m = MixLayer {
                    pose: &slot.pose,
                    keyed: slot.keyed(),
                    weight: layer.weight,
                    partial: layer.flags.partial,
                    mask: slot.mask.as_deref().map(|m| &m.weights[..]),
                    additive: slot.reference.as_ref().map(|r| &r.1),
                };
                if n < few.len() {
                    few[n] = m;
                } else {
                    if many.is_empty() {
                        many.extend_from_slice(&few);
                    }
                    many.push(m);
                }
                n += 1;
            }
            let list = if many.is_empty() {
                &few[..n]
            } else {
                &many[..]
            };
            pose::mix(list, rest, TranslationRule::Absolute, out);
        });
}

/// What sampling and mixing read of a layer: its time, weight, flags and additive time.
struct LayerView {
    time: f32,
    weight: f32,
    flags: LayerFlags,
    additive: Option<f32>,
}

/// Layer `id` of the stack, or for [`BASE`] the bottom layer the character's own [`Playback`]
/// plays (weight 1 at the playhead).
fn layer_of(layers: &ClipLayers, playback: Option<&Playback>, id: u32) -> Option<LayerView> {
    if id == BASE {
        return playback.map(|p| LayerView {
            time: p.time,
            weight: 1.0,
            flags: LayerFlags::default(),
            additive: None,
        });
    }
    layers.get(id).map(|l| LayerView {
        time: l.playhead.time,
        weight: l.weight(),
        flags: l.flags,
        additive: l.additive,
    })
}

/// When a character's [`ClipLayers`] go, so does what they bound: a [`SkeletalClip`] of its own
/// binds afresh.
pub(crate) fn unbind_layers(removed: On<Remove, ClipLayers>, mut commands: Commands) {
    if let Ok(mut e) = commands.get_entity(removed.entity) {
        e.try_remove::<(LayerBinding, PoseSource)>();
    }
}
