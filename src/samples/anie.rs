//! AnimeEffects sample projects, drawn and rigged by code (no third-party art).
//!
//! They are laid out the way AnimeEffects' PSD import and editing tools lay projects out
//! ([`build`]), following the projects `bones.anie` and `ffd.anie` that AnimeEffects 1.7
//! saved itself (spec `shared/reference/anie/`), and are written in format 0.8.

pub mod build;
pub mod paint;
