//! A node's transform, opacity and depth down the object tree (§4.3, §4.4).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use glam::{Affine2, Vec2};

/// The local matrix of a node (§4.3): `L = T(pos) · R_z(rotate) · S(scale) · T(centroid)`.
///
/// A point is shifted by the centroid, scaled, rotated by `rotate` radians (+x toward +y:
/// clockwise on screen, since y is down) and translated by `pos`. Negative scales flip.
pub fn local_matrix(pos: Vec2, rotate: f32, scale: Vec2, centroid: Vec2) -> Affine2 {
    Affine2::from_translation(pos)
        * Affine2::from_angle(rotate)
        * Affine2::from_scale(scale)
        * Affine2::from_translation(centroid)
}

/// A node's world matrix (§4.3): `parentWorld · L`. The root folder's parent is the identity.
pub fn world_matrix(parent_world: Affine2, local: Affine2) -> Affine2 {
    parent_world * local
}

/// A node's world opacity (§4.4): `parent.worldOpacity × own opacity`. The root's parent is 1.
pub fn world_opacity(parent: f32, own: f32) -> f32 {
    parent * own
}

/// A node's world depth (§4.4): `parent.worldDepth + own depth`. The root's parent is 0.
pub fn world_depth(parent: f32, own: f32) -> f32 {
    parent + own
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::FRAC_PI_2;

    #[test]
    fn local_matrix_applies_centroid_scale_rotate_translate_in_that_order() {
        // pos (10, 20), rotate 90°, scale (2, 3), centroid (1, 0); point (1, 1):
        // + centroid → (2, 1); scale → (4, 3); rotate 90° (x,y) ↦ (−y, x) → (−3, 4);
        // + pos → (7, 24).
        let m = local_matrix(
            Vec2::new(10.0, 20.0),
            FRAC_PI_2,
            Vec2::new(2.0, 3.0),
            Vec2::X,
        );
        let p = m.transform_point2(Vec2::ONE);
        assert!((p - Vec2::new(7.0, 24.0)).length() < 1e-5, "{p}");
    }

    #[test]
    fn world_is_parent_times_local() {
        // Parent: translate (100, 0). Child: rotate 90° about its pos (0, 10).
        // Child point (5, 0) → rotate → (0, 5) → + (0, 10) → (0, 15) → parent → (100, 15).
        let parent = local_matrix(Vec2::new(100.0, 0.0), 0.0, Vec2::ONE, Vec2::ZERO);
        let child = local_matrix(Vec2::new(0.0, 10.0), FRAC_PI_2, Vec2::ONE, Vec2::ZERO);
        let p = world_matrix(parent, child).transform_point2(Vec2::new(5.0, 0.0));
        assert!((p - Vec2::new(100.0, 15.0)).length() < 1e-5, "{p}");
    }

    #[test]
    fn opacity_multiplies_and_depth_adds() {
        // 0.5 × 0.5 = 0.25; depth 2 + (−1) = 1.
        assert_eq!(world_opacity(world_opacity(1.0, 0.5), 0.5), 0.25);
        assert_eq!(world_depth(2.0, -1.0), 1.0);
    }
}
