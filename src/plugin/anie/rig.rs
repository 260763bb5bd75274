//! [`AnieRig`]: an AnimeEffects project drawn at an entity, and what it shows.

use super::AnieProject;
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
    pub project: Handle<AnieProject>,
    /// Cell pixels per canvas pixel: the resolution the rig is drawn at (vertex positions are
    /// scaled, textures sampled as they are). Size it to the rig's size on screen.
    pub scale: f32,
    /// Whole or fractional frames.
    pub frames: AnieFrames,
    /// Where the pixels are shown.
    pub display: AnieDisplay,
    /// Object nodes (indices into [`AnimeProject::objects`](crate::formats::anie::AnimeProject))
    /// not drawn, as if their visibility were off.
    pub hidden: Vec<usize>,
}

impl AnieRig {
    /// A rig of `project` at scale 1, stepped frames, on a 2D quad.
    pub fn new(project: Handle<AnieProject>) -> Self {
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

    /// The frame shown at `time` seconds of a timeline of `fps` frames per second.
    pub fn frame_at(&self, time: f32, fps: f32) -> f32 {
        let frame = time * fps;
        match self.frames {
            // A time set from a frame (`frame / fps`) can come back a hair below it.
            AnieFrames::Stepped => (frame + 1e-4).floor(),
            AnieFrames::Smooth => crate::anie::eval::quantize_frame(frame),
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
