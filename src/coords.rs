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
//!
//! Section numbers (§) refer to `docs/formats/dan.md`.

//!
//! ## DAN (the DelDX 3ds Max exporter): Direct3D's left-handed, Y-up axes
//!
//! See [`dan_quat_to_bevy`] for the derivation. The change is a mirror (z ↦ −z), not a rotation,
//! so it is applied to every key value when a DAN file becomes a clip, not on a root entity.

use glam::{Quat, Vec3};

/// The GTA → Bevy change of basis as a rotation (−90° about X).
pub const GTA_TO_BEVY: Quat = Quat::from_xyzw(
    -std::f32::consts::FRAC_1_SQRT_2,
    0.0,
    0.0,
    std::f32::consts::FRAC_1_SQRT_2,
);

/// The GTA → glTF change of basis, for a GTA clip on a glTF character: glTF is Y up like Bevy,
/// but a character faces **+Z** where a GTA ped faces +Y, so GTA forward must land on +Z, up on
/// +Y, and (to stay a proper rotation) X on −X; the ped's left (−X) is then the character's left
/// (+X, facing +Z with Y up). That is [`GTA_TO_BEVY`] (−90° about X, which takes +Y to −Z)
/// followed by 180° about Y: `Ry(π)·Rx(−π/2)` = `(0, 1/√2, 1/√2, 0)`, a half turn about
/// `(0, 1, 1)/√2`: `v ↦ (−x, z, y)`.
pub const GTA_TO_GLTF: Quat = Quat::from_xyzw(
    0.0,
    std::f32::consts::FRAC_1_SQRT_2,
    std::f32::consts::FRAC_1_SQRT_2,
    0.0,
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

/// A DAN rotation `(x, y, z, w)` as stored, in Bevy's axes: `Quat::from_xyzw(x, y, −z, w)`,
/// normalised (`docs/formats/dan.md` §2).
///
/// Derivation. 3ds Max is right-handed with Z up; a Max position `(X, Y, Z)` is Bevy's
/// `(X, Z, −Y)` (up to up, Max +Y — away from the viewer in the front view — to Bevy −Z). That
/// map has determinant +1, so a right-handed rotation about a Max axis `(ax, ay, az)` by θ is the
/// rotation about Bevy's `(ax, az, −ay)` by the same θ: the true quaternion
/// `(qx, qy, qz, qw)` becomes `(qx, qz, −qy, qw)` in Bevy.
/// MaxScript's `.rotation` is the conjugate of the true rotation (its quaternions use the
/// left-handed sense: a node turned +90° about Z in the UI reports `(quat 0 0 −0.7071 0.7071)`),
/// `m = (−qx, −qy, −qz, qw)`, and the exporter writes `(m.x, m.z, m.y, −m.w)` =
/// `(−qx, −qz, −qy, −qw)`. So from the stored `(x, y, z, w)`: `qx = −x, qz = −y, qy = −z,
/// qw = −w`, and the Bevy quaternion `(qx, qz, −qy, qw) = (−x, −y, z, −w)`, which is the same
/// rotation as its negation `(x, y, −z, w)`.
///
/// The one assumption is MaxScript's quaternion sign; no real `.dan` file is public to confirm
/// it. If one ever shows mirrored motion, this function and [`bevy_quat_to_dan`] are the only
/// places to change.
pub fn dan_quat_to_bevy(q: [f32; 4]) -> Quat {
    let v = glam::Vec4::new(q[0], q[1], -q[2], q[3]);
    Quat::from_vec4(v.try_normalize().unwrap_or(glam::Vec4::W))
}

/// A DAN position `(x, y, z)` (Max's `(X, Z, Y)` as written) in Bevy's axes: `(x, y, −z)`,
/// since Max `(X, Y, Z)` is Bevy `(X, Z, −Y)`.
pub fn dan_vec_to_bevy(v: [f32; 3]) -> Vec3 {
    Vec3::new(v[0], v[1], -v[2])
}

/// A DAN scale `(x, y, z)` (Max's `(sX, sZ, sY)`) in Bevy's axes: unchanged, since Bevy's X, Y
/// and Z axes are Max's X, Z and (−)Y and a scale factor has no sign to flip.
pub fn dan_scale_to_bevy(s: [f32; 3]) -> Vec3 {
    Vec3::from_array(s)
}

/// The inverse of [`dan_quat_to_bevy`] (for a unit quaternion): `(x, y, −z, w)`.
pub fn bevy_quat_to_dan(q: Quat) -> [f32; 4] {
    [q.x, q.y, -q.z, q.w]
}

/// The inverse of [`dan_vec_to_bevy`]: `(x, y, −z)`.
pub fn bevy_vec_to_dan(v: Vec3) -> [f32; 3] {
    [v.x, v.y, -v.z]
}

/// The inverse of [`dan_scale_to_bevy`].
pub fn bevy_scale_to_dan(s: Vec3) -> [f32; 3] {
    s.to_array()
}

/// ## ANIE (AnimeEffects): canvas pixels, origin top-left, +y down
///
/// A canvas point `(x, y)` of a `width × height` canvas, in Bevy world units (1 unit per pixel)
/// with the canvas centred on the origin and +Y up: `(x − width/2, height/2 − y)`. A mirror of
/// y (det −1), so a canvas drawn as an image keeps its look: texture row 0 (canvas top) lands at
/// the top. It is applied once, to the four corners of the quad a rig is shown on; the rig's own
/// pixels never leave canvas space.
pub fn anie_canvas_to_bevy(p: glam::Vec2, width: f32, height: f32) -> glam::Vec2 {
    glam::Vec2::new(p.x - width / 2.0, height / 2.0 - p.y)
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

    /// Max's axes in Bevy: X → X, Y → −Z, Z (up) → Y.
    fn max_to_bevy(v: Vec3) -> Vec3 {
        Vec3::new(v.x, v.z, -v.y)
    }

    /// What the exporter writes for a Max position: `(x, z, y)`.
    fn max_pos_to_file(v: Vec3) -> [f32; 3] {
        [v.x, v.z, v.y]
    }

    /// What the exporter writes for a true (right-handed) Max rotation `q`: MaxScript holds
    /// `m = conj(q)` and writes `(m.x, m.z, m.y, −m.w)`.
    fn max_rot_to_file(q: Quat) -> [f32; 4] {
        let m = q.conjugate();
        [m.x, m.z, m.y, -m.w]
    }

    #[test]
    fn dan_positions_map_max_axes_to_bevy_axes() {
        // Max +X → Bevy +X, Max +Y → Bevy −Z, Max +Z (up) → Bevy +Y.
        for (max, bevy) in [
            (Vec3::X, Vec3::X),
            (Vec3::Y, Vec3::NEG_Z),
            (Vec3::Z, Vec3::Y),
        ] {
            assert_eq!(dan_vec_to_bevy(max_pos_to_file(max)), bevy);
        }
        assert_eq!(
            bevy_vec_to_dan(dan_vec_to_bevy([1.0, 2.0, 3.0])),
            [1.0, 2.0, 3.0]
        );
    }

    #[test]
    fn dan_rotations_match_the_specs_example_and_every_axis() {
        // Spec §2: +90° about Max Z is reported as (quat 0 0 −0.7071 0.7071), written
        // (0, −0.7071, 0, −0.7071), and is +90° about Bevy +Y.
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let q = dan_quat_to_bevy([0.0, -s, 0.0, -s]);
        assert!(
            q.abs_diff_eq(Quat::from_rotation_y(FRAC_PI_2), 1e-6)
                || q.abs_diff_eq(-Quat::from_rotation_y(FRAC_PI_2), 1e-6)
        );
        // Every Max axis, and a general rotation: rotating a vector in Max then mapping it to
        // Bevy equals mapping it then rotating by the converted quaternion.
        let v = Vec3::new(0.3, -0.8, 1.7);
        for q in [
            Quat::from_rotation_x(0.4),
            Quat::from_rotation_y(-1.1),
            Quat::from_rotation_z(2.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
        ] {
            let bevy = dan_quat_to_bevy(max_rot_to_file(q));
            assert!((max_to_bevy(q * v) - bevy * max_to_bevy(v)).length() < 1e-5);
            let back = dan_quat_to_bevy(bevy_quat_to_dan(bevy));
            assert!(back.abs_diff_eq(bevy, 1e-6));
        }
    }

    #[test]
    fn dan_scale_axes() {
        // Max scale (sX, sY, sZ) is written (sX, sZ, sY); Bevy X, Y, Z are Max X, Z, Y.
        let written = [2.0, 4.0, 3.0];
        assert_eq!(dan_scale_to_bevy(written), Vec3::new(2.0, 4.0, 3.0));
    }

    #[test]
    fn anie_canvas_centre_is_the_origin_and_its_top_is_up() {
        // A 200 × 100 canvas: its top-left corner (0, 0) is (−100, 50), up and to the left.
        let f = |x, y| anie_canvas_to_bevy(glam::Vec2::new(x, y), 200.0, 100.0);
        assert_eq!(f(0.0, 0.0), glam::Vec2::new(-100.0, 50.0));
        assert_eq!(f(100.0, 50.0), glam::Vec2::ZERO);
        assert_eq!(f(200.0, 100.0), glam::Vec2::new(100.0, -50.0));
    }

    #[test]
    fn gta_forward_is_a_gltf_characters_forward() {
        // (x, y, z) ↦ (−x, z, y): forward +Y → +Z, up +Z → +Y, the ped's left −X → +X.
        let v = GTA_TO_GLTF * Vec3::new(1.0, 2.0, 3.0);
        assert!(v.abs_diff_eq(Vec3::new(-1.0, 3.0, 2.0), 1e-6), "{v}");
        let composed = Quat::from_rotation_y(std::f32::consts::PI) * GTA_TO_BEVY;
        assert!(
            composed.abs_diff_eq(GTA_TO_GLTF, 1e-6) || composed.abs_diff_eq(-GTA_TO_GLTF, 1e-6)
        );
    }
}
