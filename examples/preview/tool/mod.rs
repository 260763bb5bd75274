//! The preview's logic that needs no window: framing the character, finding clips, and saving
//! a converted copy of a file. A library of the examples package, so that its tests run with
//! `cargo test`.

pub mod clips;
pub mod convert;
pub mod framing;
