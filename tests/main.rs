//! rigplay's integration tests: one binary, one module per area.

/// Heap use counted per thread, for the memory bounds of the parsers (`memory`).
#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

/// Makes Bevy's compute task pool with two threads, whatever the machine, before any test app
/// does: every app of these tests is made after calling this, so the systems' parallel paths
/// (work cut into runs over the pool's threads) are the ones tested. The pool Bevy's
/// `TaskPoolPlugin` makes has a single compute thread on a two-core machine, on which those
/// systems run everything inline.
#[cfg(feature = "bevy")]
pub fn task_pools() {
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
    });
}

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
mod bevy_gltf_export;
#[cfg(feature = "bevy")]
mod bevy_ifp;
#[cfg(feature = "bevy")]
mod bevy_layers;
#[cfg(feature = "bevy")]
mod bevy_meta;
#[cfg(feature = "bevy")]
mod bevy_playback;
#[cfg(feature = "bevy")]
mod bevy_reload;
#[cfg(feature = "bevy")]
mod bevy_retarget;
mod blend_layers;
mod bvh_fixtures;
mod bvh_import;
mod bytes;
mod convert;
mod dan;
mod dff_read;
mod gltf_export;
mod gltf_import;
mod gltf_validator;
mod humanoid;
mod ifp_bad_input;
mod ifp_fixtures;
mod ifp_read;
mod ifp_write;
mod layers;
mod memory;
mod names;
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
