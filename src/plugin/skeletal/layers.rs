//! [`ClipLayers`]: many clips on one character at once, as the games play them (upper-body
//! clips over a full-body base, walk and run in step, every clip fading at its own rate) and as
//! Bevy's `AnimationGraph` layers them (additive clips, bone masks). The core does the work:
//! [`crate::anim::layers`] moves the layers, [`crate::anim::pose::mix`] combines their poses;
//! this module binds each layer's clip to the character's bones, samples the layers, and hands
//! the mixed pose to the bone pass that writes every skeletal character's bones.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use super::sample::PlaybackBinding;
use super::sample::{
    BonePass, BoneSet, BonesChanged, PoseLayouts, PoseSource, PosedBy, RootHold, bind_tracks,
    unmatched_tracks,
};
use super::{
    ClipInfo, ClipRegistry, Retarget, RigBone, RootMotion, SkeletalClip,
    root_motion::playhead_displacement, step_displacement,
};
use crate::anim::layers::{BoneMask, Layer, LayerError, LayerEvent, LayerFlags, LayerStack};
use crate::anim::pose::{self, LocalPose, MixLayer, PoseClip, PoseCursor, TranslationRule};
use crate::anim::{BonePose, PlayStep};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::Playback;
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The clips a character plays at once, each a layer with its own playhead, weight and flags
/// ([`Layer`]), mixed by the games' rule (§3.3–§3.6; [`crate::anim::pose::mix`]). Put it on a
/// character with rigplay bones (a [`crate::plugin::GtaSkeleton`], a
/// [`crate::plugin::GtaModel`], a [`crate::plugin::FlatSkeleton`]). Beside a
/// [`super::SkeletalClip`], that clip is the bottom layer (full, weight 1, played by the
/// character's [`Playback`], its extracted root motion applied) and the layers go over it; its
/// cross-fades and held blends are not shown while the layers are there.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// # use rigplay::anim::layers::{BoneMask, Layer, LayerFlags};
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/ped.ifp#walk_civi");
///     let phone = assets.load("anims/ped.ifp#phone_talk");
///     let mut layers = ClipLayers::default();
///     layers.push(Layer::new(walk).with_flags(LayerFlags::MOVEMENT));
///     // The phone clip over the walk's upper body, at half weight.
///     layers.push(
///         Layer::new(phone)
///             .with_flags(LayerFlags::PARTIAL)
///             .with_mask(BoneMask::UpperBody)
///             .with_weight(0.5)
///             .unwrap(),
///     );
///     commands.spawn((GtaSkeleton::SA, layers));
/// }
/// ```
///
/// Each frame the layers' weights move by their blend deltas, their playheads advance
/// (movement layers in step), layers that faded out with [`LayerFlags::remove_when_faded`] go,
/// and [`LayerLooped`], [`LayerFinished`] and [`LayerRemoved`] are triggered on the character.
/// Problems (a clip not loaded, a mask naming bones the character lacks) are in its
/// [`LayerReport`]; the other layers play on.
#[derive(Component, Debug, Clone, Default)]
pub struct ClipLayers {
    stack: LayerStack<Handle<AnimationClip>>,
}

impl ClipLayers {
    /// One layer playing `clip`, looping at weight 1.
    pub fn single(clip: Handle<AnimationClip>) -> Self {
        let mut layers = Self::default();
        layers.push(Layer::new(clip));
        layers
    }

    /// Adds `layer` on top; its id.
    pub fn push(&mut self, layer: Layer<Handle<AnimationClip>>) -> u32 {
        self.stack.push(layer)
    }

    /// Starts `clip` as the games' `BlendAnimation` does ([`LayerStack::blend_animation`]):
    /// fading in at `rate` per second while the other layers of its kind fade out and go, a
    /// movement clip at the phase of the one playing. `None`, with a warning, for a rate that is
    /// not a number above 0.
    pub fn blend_animation(
        &mut self,
        clip: Handle<AnimationClip>,
        rate: f32,
        flags: LayerFlags,
    ) -> Option<u32> {
        refused(self.stack.blend_animation(clip, rate, flags))
    }

    /// Sets a layer's weight (0 to 1). A NaN, infinite or negative weight is refused with a
    /// warning and the weight stays.
    pub fn set_weight(&mut self, layer: u32, weight: f32) -> bool {
        let Some(l) = self.stack.get_mut(layer) else {
            refused::<()>(Err(LayerError::NoLayer(layer)));
            return false;
        };
        refused(l.set_weight(weight)).is_some()
    }

    /// Sets a layer's blend delta (weight change per second). NaN is refused with a warning.
    pub fn set_blend_delta(&mut self, layer: u32, delta: f32) -> bool {
        let Some(l) = self.stack.get_mut(layer) else {
            refused::<()>(Err(LayerError::NoLayer(layer)));
            return false;
        };
        refused(l.set_blend_delta(delta)).is_some()
    }

    /// The layer with this id.
    pub fn get(&self, layer: u32) -> Option<&Layer<Handle<AnimationClip>>> {
        self.stack.get(layer)
    }

    /// The layer with this id, to change its playhead (seek, speed, pause), flags or mask.
    pub fn get_mut(&mut self, layer: u32) -> Option<&mut Layer<Handle<AnimationClip>>> {
        self.stack.get_mut(layer)
    }

    /// Removes a layer at once.
    pub fn remove(&mut self, layer: u32) -> Option<Layer<Handle<AnimationClip>>> {
        self.stack.remove(layer)
    }

    /// The layers, bottom first.
    pub fn layers(&self) -> &[Layer<Handle<AnimationClip>>] {
        self.stack.layers()
    }

    /// The layers, bottom first, to change.
    pub fn layers_mut(&mut self) -> &mut [Layer<Handle<AnimationClip>>] {
        self.stack.layers_mut()
    }

    /// The stack itself.
    pub fn stack(&self) -> &LayerStack<Handle<AnimationClip>> {
        &self.stack
    }
}

/// `Some` of an accepted value; `None` with a warning for a refused one.
fn refused<T>(result: Result<T, LayerError>) -> Option<T> {
    result.map_err(|e| warn!("ClipLayers: {e}")).ok()
}

/// Triggered on a character when one of its layers wraps (loop) or turns (ping-pong).
#[derive(EntityEvent, Debug, Clone)]
pub struct LayerLooped {
    /// The character.
    pub entity: Entity,
    /// The layer's id.
    pub layer: u32,
}

/// Triggered on a character when one of its layers that does not loop reaches its end.
#[derive(EntityEvent, Debug, Clone)]
pub struct LayerFinished {
    /// The character.
    pub entity: Entity,
    /// The layer's id.
    pub layer: u32,
}

/// Triggered on a character when one of its layers has faded out and is removed.
#[derive(EntityEvent, Debug, Clone)]
pub struct LayerRemoved {
    /// The character.
    pub entity: Entity,
    /// The layer's id.
    pub layer: u32,
    /// Its clip.
    pub clip: Handle<AnimationClip>,
}

/// What is wrong with a character's layers (the others play on). Updated when it changes.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct LayerReport {
    /// Layers whose clip is not loaded (yet, or it failed, or it is gone from its file).
    pub clips_not_loaded: Vec<u32>,
    /// Per layer, what its mask names that the character lacks.
    pub unknown_mask_bones: Vec<(u32, Vec<String>)>,
    /// Per layer, the descriptions of its clip's tracks that drive no bone of the character.
    pub unmatched_tracks: Vec<(u32, Vec<String>)>,
}

/// One layer's clip bound to the character's bones.
struct Slot {
    layer: u32,
    clip: AssetId<AnimationClip>,
    info: Arc<ClipInfo>,
    layout: Arc<PoseClip>,
    cursor: PoseCursor,
    pose: LocalPose,
    /// The root bone and its extracted axes held, when the clip's root motion is taken out.
    hold: Option<(usize, RootHold)>,
    /// The mask as last resolved, and its weight per bone.
    mask_of: Option<BoneMask>,
    mask: Option<Vec<f32>>,
    /// An additive layer's reference time and the clip's pose there.
    reference: Option<(f32, LocalPose)>,
    /// What the mask names that the character lacks.
    unknown_mask: Vec<String>,
    /// The clip's tracks that drive no bone.
    unmatched: Vec<String>,
}

/// What a [`ClipLayers`] character is bound to: its bones, and each layer's clip on them.
#[derive(Component, Default)]
pub(crate) struct LayerBinding {
    bound: bool,
    bones_seen: u64,
    generation: u64,
    bones: Vec<(Entity, BonePose, AnimationTargetId)>,
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    rest: LocalPose,
    slots: Vec<Slot>,
    /// Per bone, whether some layer's clip keys it (the bones the bone pass writes).
    driven: Vec<bool>,
    /// The mixed pose the bone pass writes.
    pose: LocalPose,
    /// When one layer alone at weight 1 (full, unmasked, not additive) poses the character:
    /// its slot, whose sampled pose is the mix (a single unit rotation normalised is itself;
    /// weights summing to 1 leave the rest nothing).
    direct: Option<usize>,
    report: LayerReport,
    warned: HashSet<(u32, u8)>,
    /// The layers' playhead steps this frame (for root motion).
    steps: Vec<PlayStep>,
    /// The character's own clip ([`SkeletalClip`]) when it is the bottom layer.
    base_clip: Option<AssetId<AnimationClip>>,
}

/// The id of the bottom layer a [`SkeletalClip`] beside the layers plays (the stack's ids start
/// at 1).
pub const BASE: u32 = 0;

/// The layer a [`SkeletalClip`] beside the layers plays: full, weight 1, carrying root motion.
/// Its playhead is the character's [`Playback`], read where the layer is sampled.
fn base_layer(skeletal: &SkeletalClip) -> Layer<Handle<AnimationClip>> {
    Layer::new(skeletal.clip.clone()).with_flags(LayerFlags {
        root_translation: true,
        ..LayerFlags::default()
    })
}

impl LayerBinding {
    /// The mixed pose of the character's bones.
    pub(super) fn pose(&self) -> &LocalPose {
        match self.direct.and_then(|i| self.slots.get(i)) {
            Some(slot) => &slot.pose,
            None => &self.pose,
        }
    }
}

/// Binds every [`ClipLayers`] character's bones and each layer's clip (again when bones appear,
/// the registry changes, or a layer's clip or mask does), tags the bones the layers drive for
/// the bone pass, and keeps the character's [`LayerReport`].
pub(crate) fn bind_layers(
    mut commands: Commands,
    registry: Res<ClipRegistry>,
    bones_changed: Res<BonesChanged>,
    mut layouts: ResMut<PoseLayouts>,
    mut characters: Query<(
        Entity,
        &ClipLayers,
        Option<&mut LayerBinding>,
        Option<&mut PoseSource>,
        Option<(&SkeletalClip, &mut Playback)>,
        Has<Retarget>,
    )>,
    children: Query<&Children>,
    rig_bones: Query<&RigBone>,
    nodes: Query<(Option<&Name>, &ChildOf)>,
    posed_by: Query<&PosedBy>,
    mut transforms: Query<&mut Transform>,
) {
    let generation = registry.generation();
    for (entity, layers, binding, source, mut base, retargeted) in &mut characters {
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
        if retargeted && binding.warned.insert((BASE, 9)) {
            warn!(
                "{entity}: layers do not retarget yet: on a Retarget character they drive the bones whose names the clips use, with no rest-pose compensation"
            );
        }
        let new_bones = !binding.bound || binding.bones_seen != bones_changed.0;
        if new_bones {
            gather_bones(entity, binding, &children, &rig_bones, &nodes);
            binding.bones_seen = bones_changed.0;
            binding.bound = true;
            binding.slots.clear();
        }
        let registry_moved = binding.generation != generation;
        binding.generation = generation;
        // The common frame: the same layers on the same clips and masks as last frame, all
        // bound, nothing reloaded. Nothing to do but keep the base's duration.
        if !new_bones && !registry_moved && binding.report.clips_not_loaded.is_empty() {
            let base_clip = base.as_ref().map(|(skeletal, _)| skeletal.clip.id());
            let wanted = base_clip.iter().count() + layers.layers().len();
            let same = binding.slots.len() == wanted
                && binding
                    .slots
                    .iter()
                    .zip(
                        base_clip.map(|c| (BASE, c, None)).into_iter().chain(
                            layers
                                .layers()
                                .iter()
                                .map(|l| (l.id(), l.clip.id(), l.mask.as_ref())),
                        ),
                    )
                    .all(|(s, (layer, clip, mask))| {
                        s.layer == layer && s.clip == clip && s.mask_of.as_ref() == mask
                    });
            if same {
                continue;
            }
        }
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
                    !registry_moved || registry.get(id).is_some_and(|i| Arc::ptr_eq(&i, &s.info))
                });
            let slot = match kept {
                Some(slot) => Some(slot),
                None => {
                    changed = true;
                    bind_slot(layer, id, binding, &registry, &mut layouts)
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
            if slot.mask_of != layer.mask {
                slot.mask_of = layer.mask.clone();
                slot.unknown_mask.clear();
                slot.mask = layer.mask.as_ref().map(|m| {
                    let names: Vec<&str> = binding.names.iter().map(String::as_str).collect();
                    let resolved = m.resolve(&names, &binding.parents);
                    slot.unknown_mask = resolved.unknown;
                    resolved.weights
                });
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
        if changed {
            retag(
                entity,
                binding,
                &mut source,
                &posed_by,
                &mut commands,
                &mut transforms,
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

/// The character's bones (descendants with a [`RigBone`]), their names, their parents among
/// them and their rest pose.
fn gather_bones(
    entity: Entity,
    binding: &mut LayerBinding,
    children: &Query<&Children>,
    rig_bones: &Query<&RigBone>,
    nodes: &Query<(Option<&Name>, &ChildOf)>,
) {
    binding.bones = children
        .iter_descendants(entity)
        .filter_map(|e| {
            let r = rig_bones.get(e).ok()?;
            Some((e, BonePose::from(r.rest), r.target))
        })
        .collect();
    let index: HashMap<Entity, usize> = binding
        .bones
        .iter()
        .enumerate()
        .map(|(i, b)| (b.0, i))
        .collect();
    binding.names.clear();
    binding.parents.clear();
    for (e, _, _) in &binding.bones {
        let (name, child_of) = nodes.get(*e).map_or((None, None), |(n, c)| (n, Some(c)));
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
            up = nodes.get(p).ok().map(|(_, c)| c.parent());
        }
        binding.parents.push(parent);
    }
    let rests: Vec<BonePose> = binding.bones.iter().map(|b| b.1).collect();
    binding.rest = LocalPose::from_bone_poses(&rests);
    binding.driven = vec![false; binding.bones.len()];
}

/// `layer`'s clip bound to the character's bones, or `None` while the clip is not loaded.
fn bind_slot(
    layer: &Layer<Handle<AnimationClip>>,
    id: AssetId<AnimationClip>,
    binding: &LayerBinding,
    registry: &ClipRegistry,
    layouts: &mut PoseLayouts,
) -> Option<Slot> {
    let info = registry.get(id)?;
    let tracks = bind_tracks(&info, &binding.bones);
    let layout = layouts.get(id, &info, &binding.bones, &tracks)?;
    let unmatched = unmatched_tracks(&info, &tracks, None);
    let root = info
        .root_track
        .and_then(|r| tracks.get(r).copied().flatten());
    Some(Slot {
        layer: layer.id(),
        clip: id,
        hold: root.zip(RootHold::of(&info)),
        cursor: PoseCursor::new(&layout),
        pose: LocalPose::new(binding.bones.len()),
        layout,
        info,
        mask_of: None,
        mask: None,
        reference: None,
        unknown_mask: Vec::new(),
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
    for slot in &binding.slots {
        for (b, d) in driven.iter_mut().enumerate() {
            let (r, t, s) = slot.layout.keys_joint(b);
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
fn warn_new(entity: Entity, report: &LayerReport, warned: &mut HashSet<(u32, u8)>) {
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
            delta += step_displacement(&slot.info, playback);
        }
        for (layer, step) in layers.layers().iter().zip(&binding.steps) {
            if !layer.flags.root_translation {
                continue;
            }
            if let Some(slot) = binding.slots.iter().find(|s| s.layer == layer.id()) {
                delta += playhead_displacement(
                    &slot.info,
                    step,
                    layer.playhead.time,
                    layer.playhead.mode,
                ) * layer.weight();
            }
        }
        motion.move_by(gta_vec_to_bevy(delta), &mut transform);
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
                let Slot {
                    layout,
                    hold,
                    cursor,
                    pose,
                    reference,
                    ..
                } = slot;
                sample_held(layout, *hold, layer.time, cursor, pose);
                match (layer.additive, &reference) {
                    (None, _) => *reference = None,
                    (Some(t), Some((at, _))) if *at == t => {}
                    (Some(t), _) => {
                        let mut pose = LocalPose::default();
                        sample_held(layout, *hold, t, &mut PoseCursor::new(layout), &mut pose);
                        *reference = Some((t, pose));
                    }
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
                clip: &slots[0].layout,
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
                    clip: &slot.layout,
                    weight: layer.weight,
                    partial: layer.flags.partial,
                    mask: slot.mask.as_deref(),
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

/// `layout` at `time` into `pose`, the root's extracted axes held.
fn sample_held(
    layout: &PoseClip,
    hold: Option<(usize, RootHold)>,
    time: f32,
    cursor: &mut PoseCursor,
    pose: &mut LocalPose,
) {
    pose::sample(layout, time, cursor, pose);
    if let Some((bone, hold)) = hold {
        hold.hold_in(layout, bone, pose);
    }
}

/// When a character's [`ClipLayers`] go, so does what they bound: a [`SkeletalClip`] of its own
/// binds afresh.
pub(crate) fn unbind_layers(removed: On<Remove, ClipLayers>, mut commands: Commands) {
    if let Ok(mut e) = commands.get_entity(removed.entity) {
        e.try_remove::<(LayerBinding, PoseSource)>();
    }
}
