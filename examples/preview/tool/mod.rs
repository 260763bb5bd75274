//! The preview's logic that needs no window: framing the character, finding clips, saving a
//! converted copy of a file, and the curves of a bone. A library of the examples package, so
//! that its tests run with `cargo test`.

pub mod clips;
pub mod convert;
pub mod crowd;
pub mod curves;
pub mod framing;
pub mod motion;
pub mod shot;
pub mod textures;
pub mod watch;
