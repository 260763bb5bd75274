//! A character's playing clips as the games keep them (their "associations",
//! `docs/formats/ifp.md` §3.3–§3.5): any number of layers, each with its own playhead, a weight
//! that a blend delta moves each second, and the games' flags; plus Bevy-style additive layers
//! and bone masks. [`LayerStack::step`] moves them all one frame as the games' clump update
//! does; [`super::pose::mix`] combines their poses.
//!
//! What a frame does, in the games' order:
//! 1. **Weights**: `weight += blend_delta · dt`. A layer fading out that reaches 0 stops fading
//!    and, when flagged [`LayerFlags::remove_when_faded`], is removed. A weight reaching 1 stops
//!    fading in.
//! 2. **Movement sync**: movement layers (walk, run, sprint) do not advance at their own speed
//!    but at one shared rate of their cycles: with `L` each one's length over its speed and `w`
//!    its weight, every movement layer advances by `dt · length · Σw / Σ(w·L)`, so walk and run
//!    blended stay at the same phase of the step and cycle at the blend of their rates.
//! 3. **Time**: the others advance at their own speed by their play mode. A layer that does not
//!    loop and reaches its end holds its last frame when flagged
//!    [`LayerFlags::freeze_last_frame`]; otherwise it fades out at 4 per second and is removed
//!    (the games' fade-out when done).
//!
//! [`LayerStack::blend_animation`] starts a clip as the games' `BlendAnimation` does: it fades in
//! at the given rate, the other layers of its kind (partial or full) fade out at the same rate
//! and go, and a movement clip starts at the phase of the movement clip already playing.

mod mask;

pub use mask::{BoneMask, ResolvedMask};

use super::{PlayMode, PlayStep, Playhead};

/// What the games store per playing animation besides its time and weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayerFlags {
    /// An upper-body (or any part-body) clip: keeps its own weight over the full-body layers
    /// (§3.3).
    pub partial: bool,
    /// A locomotion clip: advances in step with the other movement layers.
    pub movement: bool,
    /// At its end a layer that does not loop holds its last frame; without this it fades out
    /// and is removed.
    pub freeze_last_frame: bool,
    /// Removed once its weight has faded to 0.
    pub remove_when_faded: bool,
    /// Its root translation counts towards the character's root motion (§3.5).
    pub root_translation: bool,
}

impl LayerFlags {
    /// A full-body locomotion clip (walk, run): movement, carrying root translation.
    pub const MOVEMENT: Self = LayerFlags {
        partial: false,
        movement: true,
        freeze_last_frame: false,
        remove_when_faded: false,
        root_translation: true,
    };
    /// An upper-body clip played over the others (phone, weapon, gang talk).
    pub const PARTIAL: Self = LayerFlags {
        partial: true,
        movement: false,
        freeze_last_frame: false,
        remove_when_faded: false,
        root_translation: false,
    };
}

/// The rate at which a layer that ends without freezing fades out, per second (the games' −4).
pub const FADE_OUT_WHEN_DONE: f32 = 4.0;

/// The largest blend delta taken (per second); larger ones switch within a frame.
const MAX_DELTA: f32 = 1.0e6;

/// Why a layer's weight, blend delta or play speed was refused.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum LayerError {
    /// A weight that is NaN, infinite or below 0.
    #[error("weight {0} refused: a layer's weight is a number from 0 to 1")]
    Weight(f32),
    /// A blend delta that is NaN.
    #[error("blend delta {0} refused: not a number")]
    Delta(f32),
    /// A fade-in rate for `blend_animation` that is NaN or not above 0.
    #[error("blend rate {0} refused: a clip fades in at a rate above 0 per second")]
    Rate(f32),
    /// No layer has this id.
    #[error("no layer {0}")]
    NoLayer(u32),
}

/// One playing clip of a [`LayerStack`]. `K` names the clip (a Bevy handle, an index).
#[derive(Debug, Clone, PartialEq)]
pub struct Layer<K> {
    /// The clip.
    pub clip: K,
    /// Its playhead (time, speed, mode, pause, seek).
    pub playhead: Playhead,
    /// The games' flags.
    pub flags: LayerFlags,
    /// Additive (Bevy's meaning): the layer adds its clip's difference from the clip's pose at
    /// this time (seconds) to the layers under it.
    pub additive: Option<f32>,
    /// The bones the layer affects, when not all.
    pub mask: Option<BoneMask>,
    id: u32,
    weight: f32,
    blend_delta: f32,
    /// Not yet started at the phase of this movement layer (its length was not known yet).
    sync_with: Option<u32>,
    /// The clip's duration, once the owner knows it ([`LayerStack::step`]).
    duration: Option<f32>,
}

impl<K> Layer<K> {
    /// A layer playing `clip` from 0 at weight 1, looping, with no flags.
    pub fn new(clip: K) -> Self {
        Layer {
            clip,
            playhead: Playhead::new(PlayMode::Loop),
            flags: LayerFlags::default(),
            additive: None,
            mask: None,
            id: 0,
            weight: 1.0,
            blend_delta: 0.0,
            sync_with: None,
            duration: None,
        }
    }

    /// The same layer with these flags.
    pub fn with_flags(mut self, flags: LayerFlags) -> Self {
        self.flags = flags;
        self
    }

    /// The same layer in another play mode.
    pub fn with_mode(mut self, mode: PlayMode) -> Self {
        self.playhead.mode = mode;
        self
    }

    /// The same layer at another weight (NaN or below 0 refused, above 1 taken as 1).
    pub fn with_weight(mut self, weight: f32) -> Result<Self, LayerError> {
        self.set_weight(weight)?;
        Ok(self)
    }

    /// The same layer, additive against its clip's pose at `reference` seconds.
    pub fn additive(mut self, reference: f32) -> Self {
        self.additive = Some(reference);
        self
    }

    /// The same layer, affecting only the bones of `mask`.
    pub fn with_mask(mut self, mask: BoneMask) -> Self {
        self.mask = Some(mask);
        self
    }

    /// The layer's id in its stack (0 until pushed).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The weight, 0 to 1.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// How fast the weight moves, per second (negative: fading out).
    pub fn blend_delta(&self) -> f32 {
        self.blend_delta
    }

    /// The clip's duration, once known.
    pub fn duration(&self) -> Option<f32> {
        self.duration
    }

    /// Sets the weight (0 to 1; above 1 is taken as 1). NaN, infinite and negative weights are
    /// refused and the weight stays.
    pub fn set_weight(&mut self, weight: f32) -> Result<(), LayerError> {
        if !weight.is_finite() || weight < 0.0 {
            return Err(LayerError::Weight(weight));
        }
        self.weight = weight.min(1.0);
        Ok(())
    }

    /// Sets the blend delta: the weight moves by it each second (fading in above 0, out below).
    /// NaN is refused; magnitudes beyond 10⁶ are taken as 10⁶ (a switch within a frame).
    pub fn set_blend_delta(&mut self, delta: f32) -> Result<(), LayerError> {
        if delta.is_nan() {
            return Err(LayerError::Delta(delta));
        }
        self.blend_delta = delta.clamp(-MAX_DELTA, MAX_DELTA);
        Ok(())
    }

    /// Fades the layer out at `rate` per second and removes it once faded.
    pub fn fade_out(&mut self, rate: f32) -> Result<(), LayerError> {
        if rate.is_nan() || rate <= 0.0 {
            return Err(LayerError::Rate(rate));
        }
        self.set_blend_delta(-rate)?;
        self.flags.remove_when_faded = true;
        Ok(())
    }

    /// Whether it fades out and goes.
    pub fn is_leaving(&self) -> bool {
        self.flags.remove_when_faded && self.blend_delta < 0.0
    }
}

/// What happened to a layer during a [`LayerStack::step`].
#[derive(Debug, Clone, PartialEq)]
pub enum LayerEvent<K> {
    /// The layer's time wrapped (loop) or turned (ping-pong).
    Looped(u32),
    /// A layer that does not loop reached its end.
    Finished(u32),
    /// The layer faded out and was removed.
    Removed(u32, K),
}

/// The playing clips of one character. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerStack<K> {
    /// Inline up to four (a game's ped plays a few at once): a stack in a component lies in
    /// the component's table, where a frame of many characters reads it in order.
    layers: smallvec::SmallVec<[Layer<K>; 4]>,
    next_id: u32,
}

impl<K> Default for LayerStack<K> {
    fn default() -> Self {
        LayerStack {
            layers: smallvec::SmallVec::new(),
            next_id: 1,
        }
    }
}

impl<K: Clone + PartialEq> LayerStack<K> {
    /// No layers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `layer` on top; its id.
    pub fn push(&mut self, mut layer: Layer<K>) -> u32 {
        layer.id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let id = layer.id;
        self.layers.push(layer);
        id
    }

    /// The layers, bottom first.
    pub fn layers(&self) -> &[Layer<K>] {
        &self.layers
    }

    /// The layers, bottom first, to change their playheads, flags and clips.
    pub fn layers_mut(&mut self) -> &mut [Layer<K>] {
        &mut self.layers
    }

    /// The layer with this id.
    pub fn get(&self, id: u32) -> Option<&Layer<K>> {
        self.layers.iter().find(|l| l.id == id)
    }

    /// The layer with this id, to change.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Layer<K>> {
        self.layers.iter_mut().find(|l| l.id == id)
    }

    /// Removes the layer with this id at once.
    pub fn remove(&mut self, id: u32) -> Option<Layer<K>> {
        let i = self.layers.iter().position(|l| l.id == id)?;
        Some(self.layers.remove(i))
    }

    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Starts `clip` as the games' `BlendAnimation` does: fading in at `rate` per second
    /// (from weight 0, or from where it is if the clip already plays with the same kind), while
    /// every other layer of its kind (partial or full, additive layers aside) fades out at
    /// `rate` and is removed once faded. A movement clip starts at the phase of the movement
    /// layer already playing (walk → run keeps the step). A clip already playing that had
    /// finished starts again from 0. Returns the clip's layer id.
    pub fn blend_animation(
        &mut self,
        clip: K,
        rate: f32,
        flags: LayerFlags,
    ) -> Result<u32, LayerError> {
        if rate.is_nan() || rate <= 0.0 {
            return Err(LayerError::Rate(rate));
        }
        let rate = rate.min(MAX_DELTA);
        let same_kind = |l: &Layer<K>| l.additive.is_none() && l.flags.partial == flags.partial;
        let found = self
            .layers
            .iter()
            .position(|l| same_kind(l) && l.clip == clip);
        let sync = flags
            .movement
            .then(|| {
                self.layers
                    .iter()
                    .filter(|l| l.flags.movement && l.clip != clip && l.weight > 0.0)
                    .max_by(|a, b| a.weight.total_cmp(&b.weight))
                    .map(|l| l.id)
            })
            .flatten();
        let mut gone = Vec::new();
        for l in self.layers.iter_mut() {
            if same_kind(l) && l.clip != clip {
                if l.weight <= 0.0 {
                    gone.push(l.id);
                } else {
                    l.blend_delta = -rate;
                    l.flags.remove_when_faded = true;
                }
            }
        }
        self.layers.retain(|l| !gone.contains(&l.id));
        if let Some(i) = found.and_then(|_| {
            self.layers
                .iter()
                .position(|l| same_kind(l) && l.clip == clip)
        }) {
            let l = &mut self.layers[i];
            l.blend_delta = rate;
            l.flags = flags;
            if l.playhead.is_finished() {
                l.playhead.seek(0.0);
                l.playhead.restart();
            }
            return Ok(l.id);
        }
        let mut layer = Layer::new(clip).with_flags(flags);
        layer.weight = 0.0;
        layer.blend_delta = rate;
        layer.sync_with = sync;
        Ok(self.push(layer))
    }

    /// Moves every layer by `dt` seconds of game time (see the [module documentation](self)).
    /// `duration` gives each clip's length, `None` while it is not loaded (such a layer's time
    /// stands; its weight still moves). Appends what happened to `events`; `steps` gets each
    /// remaining layer's [`PlayStep`], in layer order (for root motion).
    pub fn step(
        &mut self,
        dt: f32,
        duration: impl Fn(&K) -> Option<f32>,
        events: &mut Vec<LayerEvent<K>>,
        steps: &mut Vec<PlayStep>,
    ) {
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        for l in &mut self.layers {
            l.duration = duration(&l.clip).filter(|d| d.is_finite() && *d >= 0.0);
        }
        // 1. Weights.
        let mut i = 0;
        while i < self.layers.len() {
            let l = &mut self.layers[i];
            let w = l.weight + l.blend_delta * dt;
            l.weight = if w.is_finite() { w } else { l.weight };
            if l.weight <= 0.0 && l.blend_delta < 0.0 {
                l.weight = 0.0;
                l.blend_delta = 0.0;
                if l.flags.remove_when_faded {
                    let l = self.layers.remove(i);
                    events.push(LayerEvent::Removed(l.id, l.clip));
                    continue;
                }
            }
            l.weight = l.weight.max(0.0);
            if l.weight >= 1.0 {
                l.weight = 1.0;
                l.blend_delta = l.blend_delta.min(0.0);
            }
            i += 1;
        }
        // Movement layers waiting for a phase take it once both lengths are known.
        for i in 0..self.layers.len() {
            let Some(other) = self.layers[i].sync_with else {
                continue;
            };
            let Some(own) = self.layers[i].duration else {
                continue;
            };
            let phase = self
                .layers
                .iter()
                .find(|l| l.id == other)
                .and_then(|l| Some(l.playhead.time / l.duration.filter(|d| *d > 0.0)?));
            let l = &mut self.layers[i];
            l.sync_with = None;
            if let Some(phase) = phase {
                l.playhead.seek(phase * own);
            }
        }
        // 2. The movement layers' shared rate: Σw over Σ(w · length / speed).
        let (mut cycle, mut weight) = (0.0f32, 0.0f32);
        for l in self.layers.iter().filter(|l| l.flags.movement) {
            if let Some(d) = l.duration.filter(|_| l.playhead.speed != 0.0) {
                cycle += d / l.playhead.speed.abs() * l.weight;
                weight += l.weight;
            }
        }
        let rate = if cycle > 0.0 { weight / cycle } else { 1.0 };
        // 3. Time.
        steps.clear();
        let mut i = 0;
        while i < self.layers.len() {
            let l = &mut self.layers[i];
            let Some(d) = l.duration else {
                steps.push(PlayStep {
                    from: l.playhead.time,
                    ..PlayStep::default()
                });
                i += 1;
                continue;
            };
            let s = if l.flags.movement {
                let direction = if l.playhead.speed > 0.0 {
                    1.0
                } else if l.playhead.speed < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                l.playhead.advance_by(dt * d * rate * direction, d)
            } else {
                l.playhead.advance(dt, d)
            };
            if s.laps != 0 {
                events.push(LayerEvent::Looped(l.id));
            }
            if s.finished {
                events.push(LayerEvent::Finished(l.id));
                if !l.flags.freeze_last_frame {
                    l.blend_delta = -FADE_OUT_WHEN_DONE;
                    l.flags.remove_when_faded = true;
                }
            }
            steps.push(s);
            i += 1;
        }
    }
}
