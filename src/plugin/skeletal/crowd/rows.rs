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
///
/// [`pose_crowds`]: super::pose_crowds
#[derive(Resource, Debug, Default)]
pub(crate) struct CrowdBoneRows {
    /// Bones per slot.
    pub(crate) stride: usize,
    /// `slots · stride` bones, where the frame's bones are not written into [`Self::mapped`].
    pub(crate) rows: Vec<BoneRows>,
    /// Per slot, the bounds of its joints' positions (character space).
    pub(crate) bounds: Vec<(Vec3A, Vec3A)>,
    /// Per slot, whether its rows were written or held this frame, and whether they may be held.
    pub(crate) states: Vec<SlotState>,
    /// Per slot, its character's place in the world (its `GlobalTransform`), written by the
    /// drawing wing after Bevy's transform propagation.
    #[cfg_attr(not(feature = "dff"), allow(dead_code))]
    pub(crate) places: Vec<BoneRows>,
    /// Staging memory the GPU copies from, mapped, handed over by the drawing wing for this
    /// frame's bones: written there, not into [`Self::rows`], where it is given (its slots and
    /// stride the frame's).
    #[cfg(feature = "dff")]
    pub(crate) mapped: Option<MappedRows>,
}

/// A slot's rows in a frame: written, or held (its character waited for its frame at half rate,
/// [`CrowdLod`], and the GPU draws its last frame's rows, which last frame's rows in the bone
/// buffer hold), and whether they may be held.
///
/// [`CrowdLod`]: super::CrowdLod
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SlotState {
    /// Its rows were written this frame.
    pub(crate) written: bool,
    /// Its rows were held this frame.
    pub(crate) held: bool,
    /// It may be held this frame: it was written last frame, and neither the slot was taken nor
    /// the bone buffer made anew in the last [`SlotState::SETTLE`] frames (in those frames the
    /// render world copies a slot's rows into last frame's rows too, and its last frame's rows
    /// are not where a held slot's are read).
    pub(crate) holdable: bool,
    /// Frames since the slot was taken or the bone buffer made anew, up to [`SlotState::SETTLE`].
    settled: u8,
}

#[cfg_attr(not(feature = "dff"), allow(dead_code))]
impl SlotState {
    /// Frames after a slot is taken, or the bone buffer made anew, before the slot may be held:
    /// the render world copies such a slot's rows into last frame's rows too for two frames, and
    /// a third covers a frame whose upload waited for the buffer to be prepared.
    pub(crate) const SETTLE: u8 = 3;

    /// Moves every slot's state to the next frame: `fresh` are the slots taken this frame,
    /// `anew` whether the bone buffer was made anew.
    pub(crate) fn next_frame(states: &mut [SlotState], fresh: &[u32], anew: bool) {
        if anew {
            states.iter_mut().for_each(|s| s.settled = 0);
        }
        for &slot in fresh {
            if let Some(state) = states.get_mut(slot as usize) {
                state.settled = 0;
            }
        }
        for state in states {
            *state = SlotState {
                written: false,
                held: false,
                holdable: state.written && state.settled >= Self::SETTLE,
                settled: (state.settled + 1).min(Self::SETTLE),
            };
        }
    }
}

/// Mapped staging memory for a frame's bone rows ([`CrowdBoneRows::mapped`]): `slots · stride`
/// bones, written only (mapped memory may be write-combined: read, it is slow).
#[cfg(feature = "dff")]
#[derive(Debug)]
pub(crate) struct MappedRows {
    pub(crate) view: wgpu::BufferViewMut,
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) slots: usize,
    pub(crate) stride: usize,
}

/// Bones a slot's rows are handed out by in mapped memory (a slot's stride is a multiple of it:
/// [`CrowdBoneRows::slots`]).
#[cfg(feature = "dff")]
pub(crate) const BLOCK_BONES: usize = 16;

/// A bone's rows in bytes, in mapped memory and in the bone buffer.
#[cfg(feature = "dff")]
pub(crate) const BONE_BYTES: usize = size_of::<BoneRows>();

/// [`BLOCK_BONES`] bones' rows in mapped memory, until written. (By blocks of a size known when
/// compiling, since wgpu 29's `WriteOnly` of a slice is not `Send`: its impl asks `T: Send`,
/// which asks `T: Sized`.)
#[cfg(feature = "dff")]
pub(super) type MappedBlock<'a> = Option<wgpu::WriteOnly<'a, [u8; BLOCK_BONES * BONE_BYTES]>>;

/// Nothing to hand out without the drawing wing.
#[cfg(not(feature = "dff"))]
pub(super) type MappedBlock<'a> = std::marker::PhantomData<&'a ()>;

impl CrowdBoneRows {
    /// Each slot's rows and bounds: in the mapped staging memory where the frame has it (handed
    /// out by [`BLOCK_BONES`] through `blocks`), else in [`Self::rows`].
    pub(super) fn slots<'a>(
        &'a mut self,
        blocks: &'a mut Vec<MappedBlock<'a>>,
    ) -> Vec<RowSlot<'a>> {
        let stride = self.stride;
        if stride == 0 {
            return Vec::new();
        }
        #[cfg(feature = "dff")]
        if let Some(mapped) = (self.mapped.as_mut()).filter(|_| stride.is_multiple_of(BLOCK_BONES))
        {
            let (all, _) = mapped
                .view
                .slice(..)
                .into_chunks::<{ BLOCK_BONES * BONE_BYTES }>();
            // (The slots in use: the memory holds the bone buffer's capacity.)
            let per_slot = stride / BLOCK_BONES;
            let in_use = self.bounds.len() * per_slot;
            blocks.extend(all.into_iter().take(in_use).map(Some));
            return (blocks.chunks_exact_mut(per_slot))
                .zip(self.bounds.iter_mut().zip(self.states.iter_mut()))
                .map(|(blocks, (bounds, state))| RowSlot {
                    rows: SlotRows::Mapped(blocks),
                    bounds,
                    state,
                })
                .collect();
        }
        #[cfg(not(feature = "dff"))]
        let _ = blocks;
        (self.rows.chunks_exact_mut(stride))
            .zip(self.bounds.iter_mut().zip(self.states.iter_mut()))
            .map(|(rows, (bounds, state))| RowSlot {
                rows: SlotRows::Cpu(rows),
                bounds,
                state,
            })
            .collect()
    }
}

/// Where a slot's rows are written.
pub(super) enum SlotRows<'a> {
    Cpu(&'a mut [BoneRows]),
    #[cfg(feature = "dff")]
    Mapped(&'a mut [MappedBlock<'a>]),
}

/// One slot of [`CrowdBoneRows`].
pub(super) struct RowSlot<'a> {
    rows: SlotRows<'a>,
    bounds: &'a mut (Vec3A, Vec3A),
    state: &'a mut SlotState,
}

impl RowSlot<'_> {
    /// Reads a float of each of the slot's rows, so that their cache lines are loaded while the
    /// character is posed, not when its rows are written. (Mapped memory is not read.)
    pub(super) fn touch(&self) {
        #[cfg_attr(not(feature = "dff"), allow(irrefutable_let_patterns))]
        if let SlotRows::Cpu(rows) = &self.rows {
            let sum: f32 = rows.iter().map(|row| row[0]).sum();
            std::hint::black_box(sum);
        }
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

    /// Holds the slot's rows, where it may be ([`SlotState::holdable`]): they are not written
    /// this frame, and the GPU draws last frame's. Returns whether they are held.
    pub(super) fn hold(&mut self) -> bool {
        self.state.held = self.state.holdable;
        self.state.held
    }

    pub(super) fn write(&mut self, bones: &[Affine3A]) {
        let Some(first) = bones.first() else { return };
        self.state.written = true;
        let (mut lo, mut hi) = (first.translation, first.translation);
        for m in bones {
            lo = lo.min(m.translation);
            hi = hi.max(m.translation);
        }
        *self.bounds = (lo, hi);
        match &mut self.rows {
            SlotRows::Cpu(rows) => {
                for (out, m) in rows.iter_mut().zip(bones) {
                    *out = bone_rows(m);
                }
            }
            #[cfg(feature = "dff")]
            SlotRows::Mapped(blocks) => {
                let mut bones = bones.iter();
                // (Each block is written once: a slot's rows are written once a frame.)
                for block in blocks.iter_mut().map_while(Option::take) {
                    let (rows, _) =
                        wgpu::WriteOnly::<[u8]>::from(block).into_chunks::<BONE_BYTES>();
                    let n = rows.len().min(bones.len());
                    let bytes = bones.by_ref().take(n).map(|m| bytemuck::cast(bone_rows(m)));
                    rows.into_slice(..n).write_iter(bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SlotState;

    /// Whether each slot may be held, frame by frame.
    fn holdable(states: &[SlotState]) -> Vec<bool> {
        states.iter().map(|s| s.holdable).collect()
    }

    #[test]
    fn a_slot_may_be_held_only_after_a_frame_written_and_three_frames_settled() {
        // Three slots; the buffer made anew in frame 0, every slot written every frame but slot
        // 2 in frame 4.
        let mut states = vec![SlotState::default(); 3];
        let mut seen = Vec::new();
        for frame in 0..8 {
            SlotState::next_frame(&mut states, &[], frame == 0);
            seen.push(holdable(&states));
            for (slot, state) in states.iter_mut().enumerate() {
                state.written = !(slot == 2 && frame == 4);
            }
        }
        // Frames 0, 1, 2: settling (the render world copies every slot into last frame's rows
        // too in frames 0 and 1; frame 2 covers an upload that waited for the buffer). Frame 3 on:
        // written last frame, so holdable, but for slot 2 in frame 5 (not written in frame 4).
        let (no, yes) = ([false; 3].to_vec(), [true; 3].to_vec());
        assert_eq!(seen[..3], [no.clone(), no.clone(), no]);
        assert_eq!(seen[3..5], [yes.clone(), yes.clone()]);
        assert_eq!(seen[5], [true, true, false]);
        assert_eq!(seen[6..], [yes.clone(), yes]);
    }

    #[test]
    fn a_slot_taken_settles_again_and_a_held_one_is_not_holdable_next() {
        let mut states = vec![SlotState::default(); 2];
        let written = |states: &mut [SlotState]| states.iter_mut().for_each(|s| s.written = true);
        for _ in 0..4 {
            SlotState::next_frame(&mut states, &[], false);
            written(&mut states);
        }
        SlotState::next_frame(&mut states, &[], false);
        assert_eq!(holdable(&states), [true, true]);
        // Slot 0 held (not written); slot 1 taken by another character this frame.
        states[0].held = true;
        states[1].written = true;
        SlotState::next_frame(&mut states, &[1], false);
        // Slot 0 was held, not written: its last frame's rows are not in last frame's rows.
        assert_eq!(holdable(&states), [false, false]);
        assert!(!states[0].held, "a new frame holds nothing yet");
        for frame in 0..3 {
            written(&mut states);
            SlotState::next_frame(&mut states, &[], false);
            assert_eq!(holdable(&states), [true, frame == 2], "frame {frame} after");
        }
    }
}
