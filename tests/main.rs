//! rigplay's integration tests: one binary, one module per area.

/// Heap use counted per thread, for the memory bounds of the parsers (`memory`).
#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

mod anie_bad_input;
#[cfg(feature = "bevy")]
mod anie_gpu;
mod anie_math;
mod anie_program;
mod anie_read;
mod anie_render;
mod anie_write;
mod assets;
#[cfg(feature = "bevy")]
mod bevy_dan;
#[cfg(feature = "bevy")]
mod bevy_dff;
#[cfg(feature = "bevy")]
mod bevy_ifp;
#[cfg(feature = "bevy")]
mod bevy_meta;
#[cfg(feature = "bevy")]
mod bevy_playback;
#[cfg(feature = "bevy")]
mod bevy_reload;
#[cfg(feature = "bevy")]
mod bevy_retarget;
mod bytes;
mod convert;
mod dan;
mod dff_read;
mod humanoid;
mod ifp_bad_input;
mod ifp_fixtures;
mod ifp_read;
mod ifp_write;
mod layers;
mod memory;
mod pose;
mod reduce;
mod retarget;
pub mod retarget_characters;
mod rng;
mod sampler;
mod skeleton;
#[cfg(feature = "bevy")]
mod srgb;
mod txd_read;
