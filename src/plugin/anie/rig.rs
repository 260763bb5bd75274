//! [`AnieRig`]: an AnimeEffects project drawn at an entity, and what it shows.

use super::Anie;
use crate::plugin::Playback;
use bevy::prelude::*;

/// Which frames a rig shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
pub enum AnieFrames {
    /// Whole frames, `floor(time · fps)`, as AnimeEffects plays and exports. A crowd of one
    /// project then shares at most one evaluation per frame of its timeline.
    #[default]
    Stepped,
    /// Fractional frames (`time · fps` at AnimeEffects' 1/1000 frame precision): smooth motion
    /// at any display rate; every rig at its own time is evaluated on its own.
    Smooth,
}

/// Where a rig's pixels are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
pub enum AnieDisplay {
    /// On a quad in the 2D scene (`Mesh2d` with an [`AnieCardMaterial`](super::AnieCardMaterial)),
    /// centred on the entity, 1 world unit per canvas pixel; its `Transform` scales it.
    #[default]
    Quad2d,
    /// On a plane in 3D (`Mesh3d` with an [`AnieCardMaterial3d`](super::AnieCardMaterial3d)),
    /// in the entity's XY plane facing +Z, 1 world unit per canvas pixel.
    Plane3d,
    /// Only drawn into its cell ([`AnieCell`]): for a user's own material, UI or readback.
    /// Drawn while the entity is visible (`InheritedVisibility`).
    Offscreen,
}

/// An AnimeEffects project drawn by the GPU at this entity, exactly as AnimeEffects draws it,
/// at the time of its [`Playback`] (which the plugin gives the timeline's length: play, pause,
/// speed, loop modes, seek and events work as for any clip).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::plugin::{AnieRig, Playback};
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     commands.spawn(Camera2d);
///     commands.spawn((
///         AnieRig::new(assets.load("anims/anie/character.anie")),
///         Playback::looping(),
///         Transform::from_xyz(-200.0, 0.0, 0.0),
///     ));
/// }
/// ```
#[derive(Component, Clone, Debug, Reflect)]
#[require(Playback, Transform, Visibility)]
pub struct AnieRig {
    /// The project.
    pub project: Handle<Anie>,
    /// Cell pixels per canvas pixel: the resolution the rig is drawn at (vertex positions are
    /// scaled, textures sampled as they are). Size it to the rig's size on screen.
    pub scale: f32,
    /// Whole or fractional frames.
    pub frames: AnieFrames,
    /// Where the pixels are shown.
    pub display: AnieDisplay,
    /// Object nodes (indices into [`AnieFile::objects`](crate::formats::anie::AnieFile))
    /// not drawn, as if their visibility were off.
    pub hidden: Vec<usize>,
}

impl AnieRig {
    /// A rig of `project` at scale 1, stepped frames, on a 2D quad.
    pub fn new(project: Handle<Anie>) -> Self {
        Self {
            project,
            scale: 1.0,
            frames: AnieFrames::default(),
            display: AnieDisplay::default(),
            hidden: Vec::new(),
        }
    }

    /// With another drawing scale.
    pub fn with_scale(mut self, scale: f32) -> Self {
        self.scale = scale;
        self
    }

    /// With whole or fractional frames.
    pub fn with_frames(mut self, frames: AnieFrames) -> Self {
        self.frames = frames;
        self
    }

    /// Shown elsewhere.
    pub fn with_display(mut self, display: AnieDisplay) -> Self {
        self.display = display;
        self
    }

    /// The frame shown at `time` seconds of a timeline of `fps` frames per second whose last
    /// frame is `max_frame`: whole frames never pass `max_frame` (a playhead held at the end of
    /// the timeline shows the last frame); fractional ones run up to `max_frame + 1`, where a
    /// looping timeline's keys wrap (§4.1).
    pub fn frame_at(&self, time: f32, fps: f32, max_frame: u32) -> f32 {
        let frame = (time * fps).max(0.0);
        match self.frames {
            // A time set from a frame (`frame / fps`) can come back a hair below it.
            AnieFrames::Stepped => (frame + 1e-4).floor().min(max_frame as f32),
            AnieFrames::Smooth => {
                crate::anie::eval::quantize_frame(frame.min(max_frame as f32 + 1.0))
            }
        }
    }
}

/// Where a rig is drawn (inserted by the plugin once the project has loaded): its page, a
/// `Rgba8Unorm` texture holding AnimeEffects' raw framebuffer (premultiplied colour), and its
/// cell on it.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct AnieCell {
    /// The page texture.
    pub page: Handle<Image>,
    /// The cell's pixels on the page.
    pub rect: URect,
    /// The frame last sent to be drawn (it is on the page a frame later, once the GPU ran).
    pub frame: Option<f32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_step_as_animeeffects_plays_and_stop_at_the_last() {
        let stepped = AnieRig::new(Handle::default());
        let smooth = AnieRig::new(Handle::default()).with_frames(AnieFrames::Smooth);
        // 24 fps, frames 0..=47: 0.5 s is frame 12 exactly; 12/24 s computed in f32 still 12.
        assert_eq!(stepped.frame_at(0.5, 24.0, 47), 12.0);
        assert_eq!(stepped.frame_at(12.0 / 24.0, 24.0, 47), 12.0);
        assert_eq!(stepped.frame_at(0.52, 24.0, 47), 12.0); // 12.48 → 12
        // The end of the 2 s loop (48 frames) holds the last frame, never 48.
        assert_eq!(stepped.frame_at(2.0, 24.0, 47), 47.0);
        assert_eq!(stepped.frame_at(-1.0, 24.0, 47), 0.0);
        // Fractional frames at AnimeEffects' 1/1000 precision, up to maxFrame + 1 where a loop's
        // keys wrap: 0.52 s = 12.48; 1.99 s = 47.76; 3 s = 72 → 48.
        assert_eq!(smooth.frame_at(0.52, 24.0, 47), 12.48);
        assert_eq!(smooth.frame_at(1.99, 24.0, 47), 47.76);
        assert_eq!(smooth.frame_at(3.0, 24.0, 47), 48.0);
    }
}
