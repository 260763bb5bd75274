//! rigplay's integration tests: one binary, one module per area. The Bevy modules build with
//! the default features (`bevy`, `gizmos`, `dff`, `anie`) and the workspace's Bevy (run them from
//! the repository's root: `cargo test`); without Bevy, the core's modules alone run
//! (`cargo test -p rigplay --no-default-features`). A headless app with the `bevy` feature alone
//! is tested in `tests/headless/`.

/// Heap use counted per thread, for the memory bounds of the parsers (`memory`).
#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;

/// Makes Bevy's compute task pool with two threads, whatever the machine, before any test app
/// does: every app of these tests is made after calling this, so the systems' parallel paths
/// (work cut into runs over the pool's threads) are the ones tested. The pool Bevy's
/// `TaskPoolPlugin` makes has a single compute thread on a two-core machine, on which those
/// systems run everything inline.
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
pub fn task_pools() {
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
    });
}

mod anie_bad_input;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod anie_gpu;
mod anie_math;
mod anie_program;
mod anie_read;
mod anie_render;
mod anie_write;
mod assets;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_dan;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_dff;
#[cfg(all(
    feature = "gltf",
    feature = "gizmos",
    feature = "dff",
    feature = "anie"
))]
mod bevy_gltf_clips;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_gltf_export;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_ifp;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_layers;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_meta;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_playback;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_reload;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod bevy_retarget;
mod blend_layers;
mod bvh_fixtures;
mod bvh_import;
mod bytes;
mod convert;
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod crowd_gpu;
mod dan;
mod dff_read;
mod doc_links;
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
#[cfg(all(feature = "gizmos", feature = "dff", feature = "anie"))]
mod srgb;
mod txd_read;
