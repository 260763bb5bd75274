//! rigplay: legacy animation formats (GTA IFP, DelDX DAN, AnimeEffects ANIE) for real-time
//! playback in Bevy.
//!
//! The crate has a pure core that never links Bevy:
//! * [`formats`] decodes files into plain data and encodes them back;
//! * [`anim`] is the engine-neutral animation model and its sampler;
//! * [`coords`] holds every coordinate-system conversion, each written once;
//! * [`anie`] is AnimeEffects' playback math (easing, Move paths, skinning, blend modes, a CPU
//!   rasteriser) on plain values.
//!
//! The Bevy integration sits behind the default `bevy` feature.

pub mod anie;
pub mod anim;
pub mod coords;
pub mod formats;

#[cfg(doctest)]
mod readme_example {
    //! The README's Rust snippet, compiled (not run: it needs a game file).
    //!
    //! ```no_run
    //! # fn main() -> Result<(), Box<dyn std::error::Error>> {
    //! use rigplay::anim::{BonePose, WrapMode};
    //! use rigplay::formats::ifp::IfpPackage;
    //!
    //! let bytes = std::fs::read("ped.ifp")?;
    //! let read = IfpPackage::read(&bytes)?;
    //! for warning in &read.warnings {
    //!     eprintln!("{warning}");
    //! }
    //! let clip = read.package.clip("walk_civi").unwrap().to_clip();
    //! let mut cursor = clip.cursor();
    //! let mut pose = vec![BonePose::default(); clip.tracks().len()];
    //! let t = clip.wrap_time(1.3, WrapMode::Loop);
    //! clip.sample(t, &mut cursor, &mut pose);
    //! # Ok(())
    //! # }
    //! ```
    //!
    //! ```no_run
    //! # fn main() -> Result<(), Box<dyn std::error::Error>> {
    //! use rigplay::anie::{cpu::Renderer, eval::Evaluator};
    //! use rigplay::formats::anie::AnimeProject;
    //!
    //! let project = AnimeProject::read(&std::fs::read("rig.anie")?)?.project;
    //! let renderer = Renderer::new(&project);            // decodes the images once
    //! let evaluator = Evaluator::new(project);           // owns the project: keep it
    //! let frame = evaluator.evaluate(12.5);              // any fractional frame
    //! let image = renderer.render(&frame, 1.0);          // RGBA8, AnimeEffects' framebuffer
    //! # let _ = image;
    //! # Ok(())
    //! # }
    //! ```
}
pub mod skeleton;

#[cfg(feature = "bevy")]
pub mod plugin;
pub mod prelude;
#[cfg(feature = "bevy")]
pub use plugin::{DanPlugin, IfpPlugin, PlaybackPlugin, SkeletalPlugin};
