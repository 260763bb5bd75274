//! File formats: pure decoding into plain data and encoding back. No engine types here.

pub mod anie;
pub(crate) mod bytes;
pub mod dan;
pub mod detect;
pub mod ifp;

pub use detect::FileFormat;
