//! AnimeEffects (`.anie`) playback math on plain values (`docs/formats/anie.md` §4).
//!
//! The math modules take numbers, vectors, matrices and pixel values, and return the same; the
//! few data types they share with the file model (blend modes, easings, splines, bone shapes)
//! are the model's own. The evaluator (which keys apply at a frame) and the renderer (which
//! layers draw where) are built on them.
//!
//! * [`easing`]: the 13 easing types and the segment progress `s` (§4.2);
//! * [`spline`]: Move paths, Catmull-Rom tangents and the 8-sample arc-length table (§4.3);
//! * [`transform`]: a node's local matrix and the opacity/depth accumulation (§4.3, §4.4);
//! * [`skinning`]: bone world transforms, pose palettes, dual-quaternion skinning, influence
//!   weights, FFD and the order of deformation (§4.5, §4.6);
//! * [`blend`]: the 20 blend modes, the layer fragment, compositing, clipping masks and HSV
//!   (§4.4, §4.8, §4.9, §4.10, Addendum);
//! * [`eval`]: a whole project at a frame: key gathering, the object tree, deformed meshes and
//!   the draw order (§4.1–§4.8), on top of the modules above;
//! * [`cpu`]: the CPU reference renderer that replays an evaluated frame into the framebuffer
//!   AnimeEffects' exporter fills, and the PNG it saves from it; its triangle rasteriser
//!   (bilinear, transparent-border texture sampling) and its RGBA8 image; and [`cpu::replay`],
//!   which executes a [`program::Program`] with the GPU's semantics;
//! * [`atlas`]: every image of a project packed into one RGBA8 texture ([`atlas::ImageAtlas`]);
//! * [`program`]: an evaluated frame's draw sequence as GPU work for one cell (vertices,
//!   indices, layer entries, and the steps: draws, destination copies, mask passes).
//!
//! Coordinates are AnimeEffects' canvas pixels: origin top-left, +y down (§2). Angles are radians;
//! a positive rotation turns +x toward +y, i.e. clockwise on screen.
//!
//! Precision follows the program: `f32` (C++ `float`, GLSL `float`) except where the format doc says
//! AnimeEffects computes in `double` (the Custom easing).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

pub mod atlas;
pub mod blend;
// The GPU renderer's cells of its image atlas (`plugin::anie`): unused without the `anie` feature.
#[cfg_attr(not(feature = "anie"), allow(dead_code))]
pub(crate) mod cells;
pub mod cpu;
pub mod easing;
pub mod eval;
pub mod program;
pub mod skinning;
pub mod spline;
pub mod transform;

use glam::{Vec2, Vec3};

/// Key interpolation `lerp(a, b, s) = a + (b − a)·s` (§4.1 step 4), for scalars.
///
/// The format doc names the operation only; this is the one form used throughout these modules.
pub(crate) fn lerp(a: f32, b: f32, s: f32) -> f32 {
    a + (b - a) * s
}

/// [`lerp`] per component, for 2D values (positions, centroids, scales).
pub(crate) fn lerp_vec2(a: Vec2, b: Vec2, s: f32) -> Vec2 {
    a + (b - a) * s
}

/// [`lerp`] per component, for 3D values (FFD vertex positions).
pub(crate) fn lerp_vec3(a: Vec3, b: Vec3, s: f32) -> Vec3 {
    a + (b - a) * s
}
