//! rigplay: legacy animation formats (GTA IFP, DelDX DAN, AnimeEffects ANIE) for real-time
//! playback in Bevy.
//!
//! The crate has a pure core that never links Bevy:
//! * [`formats`] decodes files into plain data and encodes them back;
//! * [`anim`] is the engine-neutral animation model and its sampler;
//! * [`coords`] holds every coordinate-system conversion, each written once.
//!
//! The Bevy integration sits behind the default `bevy` feature.

pub mod anim;
pub mod coords;
pub mod formats;
