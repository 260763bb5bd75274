//! How a skeletal clip is meant to play: the per-clip choices a loader's settings give.
//!
//! Section numbers (§) refer to `docs/formats/ifp.md`.

use crate::animation::WrapMode;
use bevy::prelude::*;
use serde::{Deserialize, Serialize};

/// What happens to the root bone's translation (§3.5 of `docs/formats/ifp.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Reflect)]
pub enum RootMotionMode {
    /// The root moves as the file says: the character walks away from its entity.
    #[default]
    Baked,
    /// The root's horizontal (X, Y in GTA axes) movement is removed: the character walks in place.
    InPlace,
    /// As `InPlace`, and the removed movement is reported each frame in [`super::RootMotion`] so
    /// that the game moves the character (the games extract X and Y; Z only in their "3D" mode).
    Extract {
        /// Whether the vertical movement is extracted too.
        z: bool,
    },
}

impl RootMotionMode {
    /// The axes root motion takes out of the root's translation (GTA axes): 1 where removed.
    pub fn extracted_axes(self) -> Vec3 {
        match self {
            RootMotionMode::Baked => Vec3::ZERO,
            RootMotionMode::InPlace | RootMotionMode::Extract { z: false } => {
                Vec3::new(1.0, 1.0, 0.0)
            }
            RootMotionMode::Extract { z: true } => Vec3::ONE,
        }
    }
}

/// Per-clip choices; neither is stored in IFP or DAN files (the games keep them in code tables).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Reflect)]
#[serde(default)]
pub struct ClipSettings {
    /// Whether the clip loops (else it holds its last pose).
    pub looping: bool,
    /// What happens to the root's movement.
    pub root_motion: RootMotionMode,
}

impl Default for ClipSettings {
    fn default() -> Self {
        Self {
            looping: true,
            root_motion: RootMotionMode::Baked,
        }
    }
}

impl ClipSettings {
    /// How a play time past the end maps into the clip: looped or clamped.
    pub fn wrap_mode(&self) -> WrapMode {
        if self.looping {
            WrapMode::Loop
        } else {
            WrapMode::Clamp
        }
    }
}
