//! [`ClipLayers`]: many clips on one character at once, as the games play them (upper-body
//! clips over a full-body base, walk and run in step, every clip fading at its own rate) and as
//! Bevy's `AnimationGraph` layers them (additive clips, bone masks). The core does the work:
//! [`crate::animation::layers`] moves the layers, [`crate::animation::pose::mix`] combines their poses;
//! this module binds each layer's clip to the character's bones, samples the layers, and hands
//! the mixed pose to the bone pass that writes every skeletal character's bones.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

mod bind;
mod crowd;
mod play;

use crate::animation::layers::ResolvedMask;
pub(crate) use bind::bind_layers;
pub(crate) use crowd::{CrowdLayerBinding, advance_crowd_layers, bind_crowd_layers};
pub(crate) use play::{advance_layers, sample_layers, unbind_layers};
use play::{step_stack, trigger_layer_events};

use super::retargeted::{RetargetPlan, TargetRig};
use super::{ClipInfo, RigClip, SkeletalClip};
use crate::animation::layers::{BoneMask, Layer, LayerError, LayerFlags, LayerStack};
use crate::animation::pose::{
    self, KeyedChannels, LocalPose, MixLayer, PoseClip, PoseCursor, TranslationRule,
};
use crate::animation::{BonePose, PlayStep};
use crate::coords::gta_vec_to_bevy;
use std::sync::atomic::{AtomicU32, Ordering};

use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// The clips a character plays at once, each a layer with its own playhead, weight and flags
/// ([`Layer`]), mixed by the games' rule (§3.3–§3.6; [`crate::animation::pose::mix`]). Put it on a
/// character with rigplay bones (a [`crate::plugin::GtaSkeleton`], a
/// [`crate::plugin::GtaModel`], a [`crate::plugin::FlatSkeleton`]), on a
/// [`super::Retarget`] character, where each layer's clip is retargeted onto it, or on a
/// [`super::CrowdCharacter`], whose clip is then the bottom layer and whose cross-fades are
/// shown under the layers. Beside a
/// [`super::SkeletalClip`], that clip is the bottom layer (full, weight 1, played by the
/// character's [`Playback`](crate::plugin::Playback), its extracted root motion applied) and the layers go over it; its
/// cross-fades and held blends are not shown while the layers are there.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// # use rigplay::animation::layers::{BoneMask, Layer, LayerFlags};
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
    stack: LayerStack<Handle<RigClip>>,
    /// Which layers there are, on which clips and masks: a number taken afresh (from
    /// [`NEXT_SHAPE`]) by every change that can alter them, so that binding sees in one
    /// comparison that a frame's layers are last frame's.
    shape: u64,
}

/// The next [`ClipLayers::shape`]: unique over the app, so that a `ClipLayers` replaced by
/// another never shows its binding the number it bound.
static NEXT_SHAPE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl ClipLayers {
    /// One layer playing `clip`, looping at weight 1.
    pub fn single(clip: Handle<RigClip>) -> Self {
        let mut layers = Self::default();
        layers.push(Layer::new(clip));
        layers
    }

    /// Adds `layer` on top; its id.
    pub fn push(&mut self, layer: Layer<Handle<RigClip>>) -> u32 {
        self.reshaped();
        self.stack.push(layer)
    }

    /// Notes that the layers, their clips or their masks may have changed.
    fn reshaped(&mut self) {
        self.shape = NEXT_SHAPE.fetch_add(1, Ordering::Relaxed);
    }

    /// Starts `clip` as the games' `BlendAnimation` does ([`LayerStack::blend_animation`]):
    /// fading in at `rate` per second while the other layers of its kind fade out and go, a
    /// movement clip at the phase of the one playing. `None`, with a warning, for a rate that is
    /// not a number above 0.
    pub fn blend_animation(
        &mut self,
        clip: Handle<RigClip>,
        rate: f32,
        flags: LayerFlags,
    ) -> Option<u32> {
        self.reshaped();
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
    pub fn get(&self, layer: u32) -> Option<&Layer<Handle<RigClip>>> {
        self.stack.get(layer)
    }

    /// The layer with this id, to change its playhead (seek, speed, pause), flags or mask.
    pub fn get_mut(&mut self, layer: u32) -> Option<&mut Layer<Handle<RigClip>>> {
        self.reshaped();
        self.stack.get_mut(layer)
    }

    /// Removes a layer at once.
    pub fn remove(&mut self, layer: u32) -> Option<Layer<Handle<RigClip>>> {
        self.reshaped();
        self.stack.remove(layer)
    }

    /// The layers, bottom first.
    pub fn layers(&self) -> &[Layer<Handle<RigClip>>] {
        self.stack.layers()
    }

    /// The layers, bottom first, to change.
    pub fn layers_mut(&mut self) -> &mut [Layer<Handle<RigClip>>] {
        self.reshaped();
        self.stack.layers_mut()
    }

    /// The stack itself.
    pub fn stack(&self) -> &LayerStack<Handle<RigClip>> {
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
    pub clip: Handle<RigClip>,
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
    clip: AssetId<RigClip>,
    info: Arc<ClipInfo>,
    /// The clip laid out for the character's bones (retargeted onto them first on a
    /// rest-compensated [`super::Retarget`] character: `retarget`), and its sampling cache.
    layout: Arc<PoseClip>,
    cursor: PoseCursor,
    retarget: Option<Arc<RetargetPlan>>,
    /// The pose sampled last (every bone: those the clip does not set at rest).
    pose: LocalPose,
    /// The mask as last resolved, and its weight per bone.
    mask_of: Option<BoneMask>,
    mask: Option<Arc<ResolvedMask>>,
    /// An additive layer's reference time and the clip's pose there (shared by the characters
    /// whose layer has the same layout and time: [`super::bind::PoseLayouts::reference`]).
    reference: Option<(f32, Arc<LocalPose>)>,
    /// What the mask names that the character lacks.
    unknown_mask: Vec<String>,
    /// The clip's tracks that drive no bone.
    unmatched: Vec<String>,
}

impl Slot {
    /// The root's movement `gta` (in GTA axes, the clip's) in the character's axes: scaled
    /// like the hips and turned to the character's facing when retargeted.
    fn root_motion(&self, gta: Vec3) -> Vec3 {
        match &self.retarget {
            Some(plan) => plan.root_motion(gta),
            None => gta_vec_to_bevy(gta),
        }
    }
}

/// What every frame reads of a bound layer ([`Slot`]), kept inline in the [`LayerBinding`] (so
/// in the component table, character after character) rather than in the slot on the heap a
/// few cache lines long: the layer, its clip's length, layout, keyed channels and mask, and
/// where the bone pass's sampling of it resumes.
struct SlotFrame {
    layer: u32,
    clip: AssetId<RigClip>,
    duration: f32,
    layout: Arc<PoseClip>,
    /// Whether `layout` is on a shared timeline (sampled in the bone pass).
    timeline: bool,
    retarget: Option<Arc<RetargetPlan>>,
    mask: Option<Arc<ResolvedMask>>,
    /// An additive layer's reference pose (the slot's, set when the layer binds: a change to a
    /// layer's additive time binds it afresh), here so that the mix does not read the slot.
    reference: Option<Arc<LocalPose>>,
    /// When the bone pass samples the layer (a shared-timeline layout): the segment it sampled
    /// last ([`PoseCursor::timeline_segment`]).
    segment: AtomicU32,
}

impl SlotFrame {
    /// The layer as the mix takes it this frame (`play`), with its pose `pose`.
    fn mix_layer<'a>(&'a self, play: &SlotPlay, pose: &'a LocalPose) -> MixLayer<'a> {
        MixLayer {
            pose,
            keyed: self.keyed(),
            weight: play.weight,
            partial: play.partial,
            mask: self.mask.as_deref().map(|m| &m.weights[..]),
            additive: self.reference.as_deref(),
        }
    }

    fn of(slot: &Slot) -> Self {
        SlotFrame {
            layer: slot.layer,
            clip: slot.clip,
            duration: slot.info.clip.duration(),
            layout: slot.layout.clone(),
            timeline: slot.layout.timeline_keys().is_some(),
            retarget: slot.retarget.clone(),
            mask: slot.mask.clone(),
            reference: slot.reference.as_ref().map(|(_, pose)| pose.clone()),
            segment: AtomicU32::new(0),
        }
    }

    /// Which of the character's channels the layer's clip keys (on a retargeted layer, the
    /// character's bones its source bones reach).
    fn keyed(&self) -> &KeyedChannels {
        match &self.retarget {
            Some(plan) => plan.keyed(),
            None => self.layout.keyed(),
        }
    }
}

/// A few of something per character, inline up to four.
type Few<T> = smallvec::SmallVec<[T; 4]>;

/// What a [`ClipLayers`] character is bound to: its bones, and each layer's clip on them.
#[derive(Component, Default)]
pub(crate) struct LayerBinding {
    bound: bool,
    bones_seen: u64,
    generation: u64,
    bones: Vec<(Entity, BonePose, AnimationTargetId)>,
    /// On a rest-compensated [`super::Retarget`] character, its hierarchy (`bones` is then
    /// every node below it), onto which clips that know their source skeleton are retargeted.
    target: Option<Arc<TargetRig>>,
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    /// The bones' rest pose, shared with the characters of the same skeleton.
    rest: Arc<LocalPose>,
    slots: Vec<Slot>,
    /// Per slot, what each frame reads of it.
    frames: Few<SlotFrame>,
    /// Per bone, whether some layer's clip keys it (the bones the bone pass writes).
    driven: Vec<bool>,
    /// The mixed pose the bone pass writes.
    pose: LocalPose,
    /// When one layer alone at weight 1 (full, unmasked, not additive) poses the character:
    /// its slot, whose sampled pose is the mix (a single unit rotation normalised is itself;
    /// weights summing to 1 leave the rest nothing).
    direct: Option<usize>,
    /// Whether the bottom layer is plain at weight 1 (full, unmasked, not additive): the bone
    /// pass samples it straight into the mixed pose and mixes the others onto it
    /// ([`pose::mix_onto`]), so that the bones only it poses cost no mixing.
    onto: bool,
    /// This frame's layers, as the mix takes them.
    plays: Few<SlotPlay>,
    /// Whether the bone pass samples and mixes `plays` ([`LayerBinding::pose_into`]), as it
    /// writes the bones, in its thread's scratch poses (rather than [`sample_layers`], into
    /// poses the bone pass would read back cold): when every layer's clip is laid out on a
    /// shared timeline, whose cursor resumes from one number.
    in_bone_pass: bool,
    report: LayerReport,
    warned: HashSet<(u32, u8)>,
    /// The layers' playhead steps this frame (for root motion).
    steps: Vec<PlayStep>,
    /// The character's own clip ([`SkeletalClip`]) when it is the bottom layer.
    base_clip: Option<AssetId<RigClip>>,
    /// The [`ClipLayers::shape`] and the bottom layer's clip (if any) bound last.
    bound_shape: (u64, Option<AssetId<RigClip>>),
}

/// The id of the bottom layer a [`SkeletalClip`] beside the layers plays (the stack's ids start
/// at 1).
pub const BASE: u32 = 0;

/// The layer a [`SkeletalClip`] beside the layers plays: full, weight 1, carrying root motion.
/// Its playhead is the character's [`Playback`](crate::plugin::Playback), read where the layer is sampled.
fn base_layer(skeletal: &SkeletalClip) -> Layer<Handle<RigClip>> {
    Layer::new(skeletal.clip.clone()).with_flags(LayerFlags {
        root_translation: true,
        ..LayerFlags::default()
    })
}

/// A layer as [`LayerBinding::pose_into`] samples and mixes it this frame.
#[derive(Debug, Clone, Copy)]
struct SlotPlay {
    slot: usize,
    time: f32,
    weight: f32,
    partial: bool,
}

/// A thread's scratch poses for [`LayerBinding::pose_into`]: one per layer, and a cursor.
#[derive(Default)]
pub(crate) struct LayerScratch {
    poses: Vec<LocalPose>,
    cursor: PoseCursor,
}

impl LayerBinding {
    /// The mixed pose of the character's bones, when [`sample_layers`] made it (`None`: the
    /// bone pass makes it, with [`LayerBinding::pose_into`]).
    pub(super) fn pose(&self) -> Option<&LocalPose> {
        if self.in_bone_pass {
            return None;
        }
        Some(match self.direct.and_then(|i| self.slots.get(i)) {
            Some(slot) => &slot.pose,
            None => &self.pose,
        })
    }

    /// Layer `play` as the mix takes it, with its pose `pose`.
    fn mix_layer<'a>(&'a self, play: &SlotPlay, pose: &'a LocalPose) -> MixLayer<'a> {
        self.frames[play.slot].mix_layer(play, pose)
    }

    /// Samples this frame's layers (each in a scratch pose, its cursor resumed at the segment
    /// sampled last) and mixes them into `out`, as [`sample_layers`] would have.
    pub(super) fn pose_into(&self, scratch: &mut LayerScratch, out: &mut LocalPose) {
        let LayerScratch { poses, cursor } = scratch;
        let sample_slot = |play: &SlotPlay, cursor: &mut PoseCursor, pose: &mut LocalPose| {
            let frame = &self.frames[play.slot];
            cursor.resume_at(&frame.layout, frame.segment.load(Ordering::Relaxed));
            pose::sample(&frame.layout, play.time, cursor, pose);
            frame
                .segment
                .store(cursor.timeline_segment(), Ordering::Relaxed);
        };
        if let Some(i) = self.direct {
            if let Some(play) = self.plays.iter().find(|p| p.slot == i) {
                sample_slot(play, cursor, out);
            }
            return;
        }
        // Over a plain bottom layer: it is sampled into `out` and the others mixed onto it.
        let (base, others) = match self.plays.split_first() {
            Some((bottom, others)) if self.onto => {
                sample_slot(bottom, cursor, out);
                (Some(self.frames[bottom.slot].keyed()), others)
            }
            _ => (None, &self.plays[..]),
        };
        if poses.len() < others.len() {
            poses.resize_with(others.len(), LocalPose::default);
        }
        for (play, pose) in others.iter().zip(poses.iter_mut()) {
            sample_slot(play, cursor, pose);
        }
        let mix = |layers: &[MixLayer], out: &mut LocalPose| match base {
            Some(keyed) => {
                pose::mix_onto(keyed, layers, &self.rest, TranslationRule::Absolute, out)
            }
            None => pose::mix(layers, &self.rest, TranslationRule::Absolute, out),
        };
        const FEW: usize = 8;
        let n = others.len();
        match others.first() {
            Some(first) if n <= FEW => {
                let first = self.mix_layer(first, &poses[0]);
                let mut few = [first; FEW];
                for ((to, play), pose) in few.iter_mut().zip(others).zip(poses.iter()) {
                    *to = self.mix_layer(play, pose);
                }
                mix(&few[..n], out);
            }
            _ => {
                let many: Vec<MixLayer> = (others.iter().zip(poses.iter()))
                    .map(|(play, pose)| self.mix_layer(play, pose))
                    .collect();
                mix(&many, out);
            }
        }
    }
}
