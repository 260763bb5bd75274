//! The bone rows of drawn crowd characters: each one's bones packed by slot as the GPU takes
//! them, written by [`super::pose_crowds`] as it poses the character.

use crate::animation::pose::{self, LocalPose, PoseSkeleton};
use bevy::math::{Affine3A, Vec3A};
use bevy::prelude::*;

/// On a crowd character drawn in a model (by the DFF wing's `CrowdDrawPlugin`): its slot in the
/// [`CrowdBoneRows`]. Its bones are not drawn as lines over it.
#[derive(Component, Debug)]
pub(crate) struct CrowdDrawn {
    pub(crate) slot: u32,
}

/// A bone as the drawn crowd's bone buffer takes it: the rows of its model-space 3×4 affine
/// matrix (what WGSL's `mat3x4<f32>` holds as its columns), 48 bytes. A character's place in the
/// world is held in the same form.
pub(crate) type BoneRows = [f32; 12];

/// The rows of `m`.
pub(crate) fn bone_rows(m: &Affine3A) -> BoneRows {
    let (x, y, z, t) = (
        m.matrix3.x_axis,
        m.matrix3.y_axis,
        m.matrix3.z_axis,
        m.translation,
    );
    [x.x, y.x, z.x, t.x, x.y, y.y, z.y, t.y, x.z, y.z, z.z, t.z]
}

/// The bones of every drawn crowd character, packed by slot as the GPU takes them, written by
/// [`pose_crowds`] as it poses each (the drawing wing sizes it before, writes the characters'
/// places once transforms are propagated, and uploads it all after).
#[derive(Resource, Debug, Default)]
pub(crate) struct CrowdBoneRows {
    /// Bones per slot.
    pub(crate) stride: usize,
    /// `slots · stride` bones.
    pub(crate) rows: Vec<BoneRows>,
    /// Per slot, the bounds of its joints' positions (character space).
    pub(crate) bounds: Vec<(Vec3A, Vec3A)>,
    /// Per slot, its character's place in the world (its `GlobalTransform`), written by the
    /// drawing wing after Bevy's transform propagation.
    #[cfg_attr(not(feature = "dff"), allow(dead_code))]
    pub(crate) places: Vec<BoneRows>,
}

/// One slot of [`CrowdBoneRows`].
pub(super) struct RowSlot<'a> {
    pub(super) rows: &'a mut [BoneRows],
    pub(super) bounds: &'a mut (Vec3A, Vec3A),
}

impl RowSlot<'_> {
    /// Reads a float of each of the slot's rows, so that their cache lines are loaded while the
    /// character is posed, not when its rows are written.
    pub(super) fn touch(&self) {
        let sum: f32 = self.rows.iter().map(|row| row[0]).sum();
        std::hint::black_box(sum);
    }

    /// Composes `local` on `skeleton` into `scratch` (a thread's own: it stays in the cache) and
    /// writes the slot's rows from there.
    pub(super) fn write_composed(
        &mut self,
        skeleton: &PoseSkeleton,
        local: &LocalPose,
        scratch: &mut Vec<Affine3A>,
    ) {
        scratch.resize(skeleton.len(), Affine3A::IDENTITY);
        pose::local_to_model(skeleton, local, scratch);
        self.write(scratch);
    }

    pub(super) fn write(&mut self, bones: &[Affine3A]) {
        let Some(first) = bones.first() else { return };
        let (mut lo, mut hi) = (first.translation, first.translation);
        for (out, m) in self.rows.iter_mut().zip(bones) {
            lo = lo.min(m.translation);
            hi = hi.max(m.translation);
            *out = bone_rows(m);
        }
        *self.bounds = (lo, hi);
    }
}
