//! [`SkeletalClip`]: the clip a character plays with rigplay's sampler, and the cross-fades
//! and held blends it asks for. The playhead is the character's [`Playback`]; the systems that
//! bind, sample and write are in the rooms beside this one.

use super::RigClip;
use crate::animation::PlayMode;
use crate::plugin::Playback;
use bevy::prelude::*;

/// The clip a character plays with rigplay's sampler (on a [`crate::plugin::GtaSkeleton`], a
/// [`crate::plugin::FlatSkeleton`], a [`super::Retarget`] hierarchy, …); its [`Playback`] (added
/// with it) is the playhead. Setting `clip` switches at once, keeping the playhead's time;
/// [`SkeletalClip::cross_fade`] blends.
#[derive(Component, Debug, Clone, Reflect)]
#[reflect(Component)]
#[require(Playback)]
pub struct SkeletalClip {
    /// The clip, as loaded by a rigplay loader (or added to `Assets<RigClip>`).
    pub clip: Handle<RigClip>,
    #[reflect(ignore)]
    pub(super) fade: Option<Fade>,
}

/// A clip being blended out over `duration` seconds.
#[derive(Debug, Clone)]
pub(super) struct Fade {
    pub(super) clip: Handle<RigClip>,
    /// The outgoing clip's own playhead: taken from the character's [`Playback`] when the fade
    /// starts (`started` false until then).
    pub(super) time: f32,
    pub(super) speed: f32,
    pub(super) mode: PlayMode,
    pub(super) started: bool,
    pub(super) elapsed: f32,
    pub(super) duration: f32,
    /// Not bound yet by the playback system.
    pub(super) fresh: bool,
    /// Started while another fade ran: the pose on screen fades out, not `clip`.
    pub(super) from_pose: bool,
    /// A held blend ([`SkeletalClip::hold_blend`]): `clip`'s weight, kept until cleared.
    pub(super) held: Option<f32>,
}

impl Fade {
    /// Weight of the outgoing clip: 1 when the fade starts, 0 once `duration` has passed.
    pub(super) fn old_weight(&self) -> f32 {
        if let Some(w) = self.held {
            return w.clamp(0.0, 1.0);
        }
        super::fade::fade_weight(self.elapsed, self.duration)
    }
}

impl SkeletalClip {
    /// Plays `clip`; the playhead is the entity's [`Playback`] (looped from the start unless
    /// one is given).
    pub fn new(clip: Handle<RigClip>) -> Self {
        Self { clip, fade: None }
    }

    /// Switches to `clip`, blending from the current pose over `duration` seconds (the games
    /// blend by a weighted sum of the clips' poses, normalised: §3.3 of
    /// `docs/formats/ifp.md`). The playhead starts the new clip from 0 in the next playback
    /// update; the old clip keeps playing at its own time, speed and mode while it fades.
    pub fn cross_fade(&mut self, clip: Handle<RigClip>, duration: f32) {
        let from_pose = self.fade.is_some();
        self.fade = Some(Fade {
            clip: std::mem::replace(&mut self.clip, clip),
            time: 0.0,
            speed: 0.0,
            mode: PlayMode::Loop,
            started: false,
            elapsed: 0.0,
            duration: duration.max(0.0),
            fresh: true,
            from_pose,
            held: None,
        });
    }

    /// Blends `other` into the clip at `weight` (0: only the clip, 1: only `other`) and holds it
    /// there until [`SkeletalClip::clear_blend`] or a cross-fade: `other` is shown at the
    /// character's playhead time (wrapped or held by its play mode into `other`'s length), so
    /// playing, seeking and scrubbing move both. Called again with the same `other`, only the
    /// weight changes.
    pub fn hold_blend(&mut self, other: Handle<RigClip>, weight: f32) {
        if let Some(f) = self
            .fade
            .as_mut()
            .filter(|f| f.held.is_some() && f.clip == other)
        {
            f.held = Some(weight);
            return;
        }
        self.fade = Some(Fade {
            clip: other,
            time: 0.0,
            speed: 0.0,
            mode: PlayMode::Loop,
            started: false,
            elapsed: 0.0,
            duration: 0.0,
            fresh: true,
            from_pose: false,
            held: Some(weight),
        });
    }

    /// Ends a held blend at once.
    pub fn clear_blend(&mut self) {
        if self.fade.as_ref().is_some_and(|f| f.held.is_some()) {
            self.fade = None;
        }
    }

    /// The clip held blended in and its weight, if any.
    pub fn held_blend(&self) -> Option<(&Handle<RigClip>, f32)> {
        let f = self.fade.as_ref()?;
        Some((&f.clip, f.held?))
    }

    /// Weight of the clip being faded out, if any.
    pub fn fade_weight(&self) -> Option<f32> {
        self.fade.as_ref().map(Fade::old_weight)
    }
}
