//! File formats: pure decoding into plain data and encoding back. No engine types here.

pub mod anie;
mod bounds;
pub mod bvh;
pub(crate) mod bytes;
pub mod dan;
mod detect;
pub mod dff;
pub mod gltf;
pub mod ifp;
pub mod rw;
pub mod txd;

pub use bounds::Bounds;
pub use detect::FileFormat;
