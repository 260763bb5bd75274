//! sRGB decoding and encoding of one channel in 0..=1 (IEC 61966-2-1), for tests that work out
//! by hand what a camera compositing in linear light shows. Shared by `#[path]` with the
//! preview's tests.

/// An sRGB-encoded value as linear light.
pub fn srgb_decode(c: f64) -> f64 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light as an sRGB-encoded value.
pub fn srgb_encode(l: f64) -> f64 {
    if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }
}
