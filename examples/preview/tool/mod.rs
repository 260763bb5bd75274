//! The preview's logic that needs no window: framing the character and finding clips. A library
//! of the examples package, so that its tests run with `cargo test`.

pub mod clips;
pub mod framing;
