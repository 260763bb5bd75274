//! rigplay: legacy animation formats (GTA IFP, DelDX DAN, AnimeEffects ANIE) for real-time
//! playback in Bevy.
//!
//! The crate has a pure core that never links Bevy:
//! * [`formats`] decodes files into plain data and encodes them back, and tells them apart;
//! * [`anim`] is the engine-neutral animation model, its sampler, play time, blending, key
//!   reduction, retargeting onto humanoid skeletons, and the pose pipeline for crowds
//!   (`anim::pose`);
//! * [`skeleton`] holds the built-in GTA ped skeletons and the rules that bind tracks to bones;
//! * [`coords`] holds every coordinate-system conversion, each written once;
//! * [`convert`] rewrites files: an IFP package in another version, with fewer keys (what
//!   `rigplay convert` does); GTA and DAN clips out to glTF ([`convert::gltf`]); motion capture
//!   and glTF animation retargeted onto a GTA ped as IFP clips ([`convert::import`]);
//! * [`anie`] is AnimeEffects' playback: the evaluator, the frame as GPU work (`anie::program`)
//!   and the CPU reference renderer.
//!
//! The Bevy integration (`plugin`) sits behind the default `bevy` feature; [`prelude`] has
//! what a game usually needs. The `file_watcher` feature turns on Bevy's file watcher, so that
//! assets changed on disk reload under the rigs playing them. The format facts the code relies on are in the repository's
//! `docs/formats/` (`ifp.md`, `dan.md`, `anie.md`, `dff.md`); the `§` references in the code
//! point to their sections.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod anie;
pub mod anim;
pub mod convert;
pub mod coords;
pub mod formats;
#[cfg(feature = "bevy")]
pub mod plugin;
pub mod prelude;
pub mod skeleton;

#[cfg(feature = "bevy")]
pub use plugin::{AniePlugin, DanPlugin, DffPlugin, IfpPlugin, PlaybackPlugin, SkeletalPlugin};

/// The Rust snippets of the README and the guides in `docs/`, compiled as doctests (`no_run`:
/// they need game files or a window). Most need Bevy, so they are compiled with the `bevy`
/// feature.
#[cfg(all(doctest, feature = "bevy"))]
mod doc_snippets {
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[doc = include_str!("../docs/layers.md")]
    mod layers {}
    #[doc = include_str!("../docs/guide/anie.md")]
    mod anie {}
    #[doc = include_str!("../docs/guide/core.md")]
    mod core {}
    #[doc = include_str!("../docs/guide/dan.md")]
    mod dan {}
    #[doc = include_str!("../docs/guide/ifp.md")]
    mod ifp {}
    #[doc = include_str!("../docs/guide/models.md")]
    mod models {}
    #[doc = include_str!("../docs/guide/playback.md")]
    mod playback {}
    #[doc = include_str!("../docs/guide/retarget.md")]
    mod retarget {}
}
