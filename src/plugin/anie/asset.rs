//! The [`Anie`] asset: an AnimeEffects project ready to draw, with its images as one
//! labelled texture.

use crate::anie::atlas::ImageAtlas;
use crate::anie::eval::Evaluator;
use crate::formats::anie::AnieFile;
use bevy::prelude::*;
use std::sync::Arc;

/// An `.anie` file as a Bevy asset: the project with its [`Evaluator`] prepared once, and every
/// image of the project packed into one texture ([`AnieAssetLabel::Atlas`], `Rgba8Unorm`: the
/// bytes as stored, never decoded as sRGB), which the GPU renderer samples.
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Anie {
    /// Evaluates the project at any frame; it shares the project.
    pub evaluator: Evaluator,
    /// Where each image lies in [`Anie::atlas`] (its pixels are in the texture).
    pub images: Arc<ImageAtlas>,
    /// The texture of every image (the labelled sub-asset [`AnieAssetLabel::Atlas`]).
    pub atlas: Handle<Image>,
    /// What the reader tolerated, one line each (also logged when the file loaded).
    pub warnings: Vec<String>,
}

impl Anie {
    /// The project.
    pub fn file(&self) -> &Arc<AnieFile> {
        self.evaluator.project()
    }

    /// Frames per second of the timeline (at least 1).
    pub fn frame_rate(&self) -> f32 {
        self.file().fps.max(1) as f32
    }

    /// Seconds the timeline plays: frames `0..=maxFrame`, each shown for `1/fps`, so
    /// `(maxFrame + 1) / fps`. AnimeEffects plays frame `maxFrame` and then wraps to 0 (§4.1: a
    /// loop's period is `maxFrame + 1` frames), so this is the length of one loop.
    pub fn duration(&self) -> f32 {
        (self.file().max_frame as f32 + 1.0) / self.frame_rate()
    }

    /// The canvas size in pixels.
    pub fn canvas_size(&self) -> UVec2 {
        UVec2::new(self.file().canvas_width, self.file().canvas_height)
    }
}

/// The labelled sub-assets of an `.anie` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnieAssetLabel {
    /// Every image of the project in one `Rgba8Unorm` texture: `"atlas"`.
    Atlas,
}

impl std::fmt::Display for AnieAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnieAssetLabel::Atlas => f.write_str("atlas"),
        }
    }
}
