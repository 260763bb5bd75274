//! Coordinate-system conversions, each written once.
//!
//! Bevy is right-handed with +Y up and −Z forward.
//!
//! ## GTA (RenderWare): right-handed, +Z up, peds face +Y
//!
//! The change of basis is the rotation of −90° about X, `B`:
//! `(x, y, z) ↦ (x, z, −y)`. It sends GTA up (+Z) to Bevy up (+Y), and a ped's forward (+Y) to
//! Bevy's forward (−Z); X stays X. Being a proper rotation (det = +1) it keeps handedness.
//!
//! A transform `T` given in GTA axes is the transform `B·T·B⁻¹` in Bevy axes. For the parts of a
//! local transform that means:
//! * a translation or any vector: `v ↦ B·v = (x, z, −y)`;
//! * a rotation: its axis turns like a vector and its angle is unchanged, so the quaternion
//!   `(x, y, z, w) ↦ (x, z, −y, w)`;
//! * a scale: the axes are permuted, signs do not matter for lengths: `(sx, sy, sz) ↦ (sx, sz, sy)`.
//!
//! Applying this to every bone's local transform is the same as applying it once at the
//! skeleton's root, since `B·T₁·B⁻¹ · B·T₂·B⁻¹ = B·(T₁·T₂)·B⁻¹`.

use glam::{Quat, Vec3};

/// The GTA → Bevy change of basis as a rotation (−90° about X).
pub const GTA_TO_BEVY: Quat = Quat::from_xyzw(
    -std::f32::consts::FRAC_1_SQRT_2,
    0.0,
    0.0,
    std::f32::consts::FRAC_1_SQRT_2,
);

/// A GTA-space vector (translation, direction) in Bevy axes: `(x, y, z) ↦ (x, z, −y)`.
pub fn gta_vec_to_bevy(v: Vec3) -> Vec3 {
    Vec3::new(v.x, v.z, -v.y)
}

/// A GTA-space rotation in Bevy axes (`B·q·B⁻¹`): `(x, y, z, w) ↦ (x, z, −y, w)`.
pub fn gta_quat_to_bevy(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, q.z, -q.y, q.w)
}

/// A GTA-space scale in Bevy axes: `(sx, sy, sz) ↦ (sx, sz, sy)`.
pub fn gta_scale_to_bevy(s: Vec3) -> Vec3 {
    Vec3::new(s.x, s.z, s.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::FRAC_PI_2;

    #[test]
    fn gta_axes_map_to_bevy_axes() {
        // Up: GTA +Z is Bevy +Y.
        assert_eq!(gta_vec_to_bevy(Vec3::Z), Vec3::Y);
        // Forward: a ped's +Y is Bevy's forward, -Z.
        assert_eq!(gta_vec_to_bevy(Vec3::Y), Vec3::NEG_Z);
        // Right: X stays X.
        assert_eq!(gta_vec_to_bevy(Vec3::X), Vec3::X);
        // The same as rotating by the basis quaternion.
        for v in [Vec3::X, Vec3::Y, Vec3::Z, Vec3::new(0.3, -1.2, 2.5)] {
            assert!((GTA_TO_BEVY * v - gta_vec_to_bevy(v)).length() < 1e-6);
        }
    }

    #[test]
    fn gta_rotation_is_conjugated_by_the_basis() {
        // A turn of +90° about GTA up (Z) is a turn of +90° about Bevy up (Y).
        let q = gta_quat_to_bevy(Quat::from_rotation_z(FRAC_PI_2));
        assert!(q.abs_diff_eq(Quat::from_rotation_y(FRAC_PI_2), 1e-6));
        // About GTA +Y (forward) it is about Bevy -Z.
        let q = gta_quat_to_bevy(Quat::from_rotation_y(0.7));
        assert!(q.abs_diff_eq(Quat::from_axis_angle(Vec3::NEG_Z, 0.7), 1e-6));
        // Formula and definition B q B^-1 agree for an arbitrary rotation.
        let r = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0);
        let expected = GTA_TO_BEVY * r * GTA_TO_BEVY.inverse();
        assert!(gta_quat_to_bevy(r).abs_diff_eq(expected, 1e-6));
        // It acts on vectors consistently: B (q v) = q' (B v).
        let v = Vec3::new(0.2, 0.5, -0.9);
        assert!(
            (gta_vec_to_bevy(r * v) - gta_quat_to_bevy(r) * gta_vec_to_bevy(v)).length() < 1e-5
        );
    }

    #[test]
    fn gta_scale_axes_are_permuted() {
        assert_eq!(
            gta_scale_to_bevy(Vec3::new(1.0, 2.0, 3.0)),
            Vec3::new(1.0, 3.0, 2.0)
        );
    }
}
