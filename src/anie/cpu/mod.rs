//! The CPU reference renderer: an evaluated frame ([`crate::anie::eval::EvaluatedFrame`])
//! replayed into the RGBA8 framebuffer AnimeEffects 1.7's exporter fills (§4.7–§4.10,
//! Addendum 1), and the PNG it saves from it.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use rigplay::anie::cpu::{Renderer, exported_png};
//! use rigplay::anie::eval::Evaluator;
//! use rigplay::formats::anie::AnieFile;
//!
//! let project = AnieFile::read(&std::fs::read("walk.anie")?)?.file;
//! let renderer = Renderer::new(&project); // the images are decoded once, here
//! let evaluator = Evaluator::new(project);
//! let framebuffer = renderer.render(&evaluator.evaluate(3.5), 1.0);
//! let png = exported_png(&framebuffer); // what AnimeEffects would save
//! # let _ = png;
//! # Ok(())
//! # }
//! ```
//!
//! * [`Renderer`] keeps a project's textures and renders frames: compositing, blend modes, the
//!   clipping mask and HSV, as described in its notes;
//! * [`raster`] is the triangle rasteriser underneath it (pixel centres, 1/256 px snapping,
//!   top-left rule, bilinear sampling with a transparent border);
//! * [`replay`] executes a [`crate::anie::program::Program`] with the GPU's semantics (the
//!   check that a program's schedule gives what [`Renderer`] gives);
//! * [`RgbaImage`] is the image type both use: the framebuffer, the textures, the result.
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

mod image;
pub mod raster;
mod render;
mod replay;

pub use image::RgbaImage;
pub use render::{MAX_RENDER_SIDE, Renderer, compare, exported_png, render, scaled_size};
pub use replay::replay;
