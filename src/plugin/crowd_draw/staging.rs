//! The staging memory the crowd's bone rows go through on their way to the GPU, kept from frame
//! to frame.

use super::state::BONE_BYTES;
use crate::plugin::skeletal::MappedRows;
use bevy::render::renderer::RenderDevice;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use wgpu::util::StagingBelt;
use wgpu::{
    Buffer, BufferDescriptor, BufferSize, BufferUsages, COPY_BUFFER_ALIGNMENT, CommandEncoder,
    MAP_ALIGNMENT, MapMode,
};

/// The staging memory of the crowd's bone upload: a [`StagingBelt`] whose chunks each hold a
/// whole frame's bytes, mapped again and reused once the GPU has copied out of them (wgpu maps
/// them at a later submit or poll; on a GPU some frames behind, there is a chunk per frame in
/// flight).
///
/// Through `Queue::write_buffer` instead, wgpu makes a staging buffer for each write, every
/// frame (`docs/performance.md`, 2026-12-06, thirty-first session).
pub(super) struct BoneStaging {
    belt: StagingBelt,
    /// The chunks' size: a power of two, at least [`Self::MIN_CHUNK`].
    chunk: u64,
}

impl BoneStaging {
    const MIN_CHUNK: u64 = 1 << 20;

    /// The staging to write `writes` through this frame: the one kept, unless they outgrew its
    /// chunks, or need less than an eighth of them (a crowd that was large keeps no large
    /// chunks); then a new one, whose chunk is the power of two that holds them.
    pub(super) fn fit<'a>(
        kept: &'a mut Option<BoneStaging>,
        device: &RenderDevice,
        writes: &[&[u8]],
    ) -> &'a mut BoneStaging {
        // Each write starts at a multiple of the map alignment.
        let need: u64 = writes
            .iter()
            .map(|bytes| (bytes.len() as u64).next_multiple_of(MAP_ALIGNMENT))
            .sum();
        let chunk = need.next_power_of_two().max(Self::MIN_CHUNK);
        if kept
            .as_ref()
            .is_some_and(|kept| kept.chunk < need || kept.chunk / 8 > chunk)
        {
            // (The old chunks are freed once the GPU is done with them.)
            *kept = None;
        }
        kept.get_or_insert_with(|| BoneStaging {
            belt: StagingBelt::new(device.wgpu_device().clone(), chunk),
            chunk,
        })
    }

    /// Copies `bytes` into staging memory, and records their copy from there to each offset of
    /// `to` in `target`. Returns where they were staged, for more copies of them, or `None` for
    /// no bytes.
    pub(super) fn stage(
        &mut self,
        encoder: &mut CommandEncoder,
        target: &Buffer,
        bytes: &[u8],
        to: &[u64],
    ) -> Option<(Buffer, u64)> {
        let size = BufferSize::new(bytes.len() as u64)?;
        let alignment = BufferSize::new(COPY_BUFFER_ALIGNMENT).expect("not zero");
        let slice = self.belt.allocate(size, alignment);
        slice.get_mapped_range_mut().copy_from_slice(bytes);
        for &at in to {
            encoder.copy_buffer_to_buffer(slice.buffer(), slice.offset(), target, at, size.get());
        }
        Some((slice.buffer().clone(), slice.offset()))
    }

    /// To be called once the frame's copies are recorded, before their command buffer is
    /// submitted.
    pub(super) fn finish(&mut self) {
        self.belt.finish();
    }

    /// To be called once the frame's copies are submitted: the chunks are mapped again for
    /// another frame once the GPU is done with them.
    pub(super) fn recall(&mut self) {
        self.belt.recall();
    }
}

/// The mapped staging buffers the main world writes a frame's bone rows straight into
/// ([`MappedRows`]), so that they are written once on the CPU: one is handed over at each
/// extraction for the next frame, and comes back at the one after, to be copied from and mapped
/// again.
///
/// A buffer goes round in three frames where the GPU keeps up: written by the main world in one,
/// copied from in the next (and mapped again once that copy is done, which wgpu learns at a later
/// submit or poll), free in the third. A GPU frames behind takes more, up to
/// [`Self::MOST_MAPPING`] buffers waiting to be mapped again; past them no mapped memory is
/// handed out, and the frame's rows go the vector's way (no buffer made each frame while the GPU
/// falls behind). Buffers of another size than asked, and buffers whose mapping failed, are
/// dropped.
#[derive(Default)]
pub(super) struct RowPool {
    /// Buffers copied from and being mapped again, each with how its mapping stands.
    mapping: Vec<(Buffer, Arc<AtomicU8>)>,
}

/// How a buffer's mapping stands ([`RowPool::mapping`]).
const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

impl RowPool {
    /// The most buffers waiting to be mapped again before no more are made.
    pub(super) const MOST_MAPPING: usize = 4;

    /// Mapped memory for `slots · stride` bones: a buffer of that size mapped again, or a new one
    /// mapped at creation, or none while [`Self::MOST_MAPPING`] are still being mapped.
    pub(super) fn take(
        &mut self,
        device: &RenderDevice,
        slots: usize,
        stride: usize,
    ) -> Option<MappedRows> {
        let size = (slots * stride * BONE_BYTES).max(BONE_BYTES) as u64;
        self.mapping.retain(|(buffer, state)| {
            buffer.size() == size && state.load(Ordering::Acquire) != FAILED
        });
        let ready = (self.mapping.iter()).position(|(_, s)| s.load(Ordering::Acquire) == MAPPED);
        let buffer = match ready {
            Some(i) => self.mapping.remove(i).0,
            None if self.mapping.len() >= Self::MOST_MAPPING => return None,
            None => device.wgpu_device().create_buffer(&BufferDescriptor {
                label: Some("rigplay crowd bone rows"),
                size,
                usage: BufferUsages::MAP_WRITE | BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            }),
        };
        Some(MappedRows {
            view: buffer.get_mapped_range_mut(..),
            buffer,
            slots,
            stride,
        })
    }

    /// Takes back rows not copied from: still mapped, free for another frame.
    pub(super) fn keep(&mut self, rows: MappedRows) {
        let MappedRows { view, buffer, .. } = rows;
        drop(view);
        self.mapping.push((buffer, Arc::new(AtomicU8::new(MAPPED))));
    }

    /// Unmaps the rows' buffer, to be copied from in a submission. Once it is submitted, give
    /// it back with [`Self::remap`].
    pub(super) fn unmap(rows: MappedRows) -> Buffer {
        let MappedRows { view, buffer, .. } = rows;
        drop(view);
        buffer.unmap();
        buffer
    }

    /// Maps `buffer` again once the GPU has copied from it, for another frame.
    pub(super) fn remap(&mut self, buffer: Buffer) {
        let state = Arc::new(AtomicU8::new(PENDING));
        let done = state.clone();
        buffer.map_async(MapMode::Write, .., move |result| {
            let now = if result.is_ok() { MAPPED } else { FAILED };
            done.store(now, Ordering::Release);
        });
        self.mapping.push((buffer, state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::platform::collections::HashSet;
    use wgpu::{BufferDescriptor, BufferUsages, CommandEncoderDescriptor, Device, Queue};

    /// A device and queue of wgpu's no-op backend, which runs copies and mappings on the CPU.
    fn noop_device() -> (RenderDevice, Queue) {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::NOOP,
            flags: wgpu::InstanceFlags::default(),
            memory_budget_thresholds: Default::default(),
            display: None,
            backend_options: wgpu::BackendOptions {
                noop: wgpu::NoopBackendOptions { enable: true },
                ..Default::default()
            },
        });
        let adapter = bevy::tasks::block_on(instance.request_adapter(&Default::default()))
            .expect("the no-op backend gives an adapter");
        let (device, queue) = bevy::tasks::block_on(adapter.request_device(&Default::default()))
            .expect("the no-op backend gives a device");
        (RenderDevice::from(device), queue)
    }

    /// A buffer to copy into that can be read back.
    fn target(device: &Device, size: u64) -> Buffer {
        device.create_buffer(&BufferDescriptor {
            label: Some("target"),
            size,
            usage: BufferUsages::COPY_DST | BufferUsages::MAP_READ,
            mapped_at_creation: false,
        })
    }

    fn read_back(device: &Device, buffer: &Buffer) -> Vec<u8> {
        let slice = buffer.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("polled");
        let bytes = slice.get_mapped_range().to_vec();
        buffer.unmap();
        bytes
    }

    /// One frame's upload, as the crowd's: staged, copied to each of `to`, submitted, recalled.
    /// The staging buffer the bytes went through.
    fn frame(
        kept: &mut Option<BoneStaging>,
        device: &RenderDevice,
        queue: &Queue,
        target: &Buffer,
        bytes: &[u8],
        to: &[u64],
    ) -> Buffer {
        let staging = BoneStaging::fit(kept, device, &[bytes]);
        let mut encoder = device
            .wgpu_device()
            .create_command_encoder(&CommandEncoderDescriptor::default());
        let (from, _) = staging
            .stage(&mut encoder, target, bytes, to)
            .expect("bytes staged");
        staging.finish();
        queue.submit([encoder.finish()]);
        staging.recall();
        from
    }

    #[test]
    fn staged_bytes_arrive_at_every_offset_asked() {
        let (device, queue) = noop_device();
        let target = target(device.wgpu_device(), 64);
        let bytes: Vec<u8> = (1..=24).collect();
        let mut kept = None;
        frame(&mut kept, &device, &queue, &target, &bytes, &[0, 32]);
        let back = read_back(device.wgpu_device(), &target);
        assert_eq!(&back[..24], &bytes[..]);
        // Nothing between the two copies.
        assert_eq!(&back[24..32], &[0; 8]);
        assert_eq!(&back[32..56], &bytes[..]);
        assert_eq!(&back[56..], &[0; 8]);
        // No bytes: nothing staged, no copy.
        let staging = BoneStaging::fit(&mut kept, &device, &[]);
        let mut encoder = device
            .wgpu_device()
            .create_command_encoder(&CommandEncoderDescriptor::default());
        assert!(staging.stage(&mut encoder, &target, &[], &[0]).is_none());
    }

    /// The point of the staging: the same memory frame after frame, not a buffer a frame.
    #[test]
    fn frames_of_the_same_size_reuse_one_chunk() {
        let (device, queue) = noop_device();
        // A frame of 1,000 SA peds' rows (1,000 · 32 · 48 bytes).
        let bytes = vec![7u8; 1_000 * 32 * 48];
        let target = target(device.wgpu_device(), bytes.len() as u64);
        let mut kept = None;
        let used: HashSet<Buffer> = (0..20)
            .map(|_| frame(&mut kept, &device, &queue, &target, &bytes, &[0]))
            .collect();
        // The no-op backend is done with a submission at once, but wgpu maps a chunk again only
        // at the next submit, after the next frame staged its bytes: two chunks take turns, and
        // no more are made.
        assert_eq!(used.len(), 2);
        assert_eq!(kept.as_ref().map(|k| k.chunk), Some(2 << 20));
        assert_eq!(read_back(device.wgpu_device(), &target), bytes);
    }

    /// Mapped rows as the crowd uses them, frame after frame: taken at one extraction for the
    /// next frame, written (by the main world), then unmapped, copied from, submitted and mapped
    /// again. Three buffers go round (the no-op backend maps a buffer again at the next submit,
    /// one frame after its copy), and each frame's bytes arrive.
    #[test]
    fn mapped_rows_go_round_three_buffers_and_arrive() {
        let (device, queue) = noop_device();
        // 4 slots of 16 bones: 3,072 bytes.
        let (slots, stride) = (4, 16);
        let size = (slots * stride * BONE_BYTES) as u64;
        let target = target(device.wgpu_device(), size);
        let mut pool = RowPool::default();
        let mut used = HashSet::new();
        let take = |pool: &mut RowPool| pool.take(&device, slots, stride).expect("rows");
        let mut next = take(&mut pool);
        for frame in 0..20u8 {
            // The main world writes this frame's rows; the next frame's memory is handed over.
            let mut rows = std::mem::replace(&mut next, take(&mut pool));
            assert_eq!((rows.slots, rows.stride), (slots, stride));
            rows.view.slice(..).fill(frame);
            let buffer = RowPool::unmap(rows);
            used.insert(buffer.clone());
            let mut encoder = device
                .wgpu_device()
                .create_command_encoder(&CommandEncoderDescriptor::default());
            encoder.copy_buffer_to_buffer(&buffer, 0, &target, 0, size);
            queue.submit([encoder.finish()]);
            pool.remap(buffer);
        }
        assert_eq!(used.len(), 3, "buffers made");
        assert_eq!(
            read_back(device.wgpu_device(), &target),
            vec![19; size as usize]
        );
    }

    /// Rows not copied from are kept mapped, handed out again at once; a buffer of another size
    /// is dropped, not handed out.
    #[test]
    fn mapped_rows_kept_or_of_another_size() {
        let (device, _) = noop_device();
        let mut pool = RowPool::default();
        let rows = pool.take(&device, 64, 32).unwrap();
        let first = rows.buffer.clone();
        pool.keep(rows);
        let again = pool.take(&device, 64, 32).unwrap();
        assert_eq!(again.buffer, first, "kept, handed out again");
        pool.keep(again);
        // The crowd grew: a buffer of 128 slots, the smaller one dropped.
        let grown = pool.take(&device, 128, 32).unwrap();
        assert_ne!(grown.buffer, first);
        assert_eq!(grown.buffer.size(), (128 * 32 * BONE_BYTES) as u64);
        assert!(pool.mapping.is_empty(), "the old size is dropped");
    }

    /// A GPU that falls behind (no submit, so no buffer is mapped again): new buffers while fewer
    /// than four wait to be mapped, then none (the frame's rows go the vector's way); once a
    /// submit maps them again, they are handed out again, and no new one is made.
    #[test]
    fn mapped_rows_stop_while_the_gpu_falls_behind() {
        let (device, queue) = noop_device();
        let mut pool = RowPool::default();
        let mut made = HashSet::new();
        for _ in 0..RowPool::MOST_MAPPING {
            let rows = pool.take(&device, 64, 32).expect("a new buffer");
            made.insert(rows.buffer.clone());
            pool.remap(RowPool::unmap(rows));
        }
        assert_eq!(made.len(), RowPool::MOST_MAPPING);
        assert!(pool.take(&device, 64, 32).is_none(), "none while four wait");
        // A submit: wgpu maps them again.
        queue.submit([]);
        device
            .wgpu_device()
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("polled");
        for _ in 0..RowPool::MOST_MAPPING {
            let rows = pool.take(&device, 64, 32).expect("mapped again");
            assert!(made.contains(&rows.buffer), "one of the four");
        }
    }

    #[test]
    fn the_chunks_follow_the_crowd_up_and_down() {
        let (device, _) = noop_device();
        let mut kept = None;
        let chunk = |kept: &mut Option<BoneStaging>, bytes: usize| {
            BoneStaging::fit(kept, &device, &[&vec![0u8; bytes]]).chunk
        };
        // Small frames: the smallest chunk.
        assert_eq!(chunk(&mut kept, 100), 1 << 20);
        // 10,000 peds (15,360,000 bytes): the power of two above.
        assert_eq!(chunk(&mut kept, 15_360_000), 16 << 20);
        // A few peds fewer: the same chunks.
        assert_eq!(chunk(&mut kept, 15_000_000), 16 << 20);
        // An eighth of them or more: kept.
        assert_eq!(chunk(&mut kept, 2 << 20), 16 << 20);
        // Under an eighth: smaller chunks.
        assert_eq!(chunk(&mut kept, 1 << 20), 1 << 20);
        // Writes each start at a multiple of 8: two of 4 bytes need 16.
        let mut kept = None;
        let staging = BoneStaging::fit(&mut kept, &device, &[&[0; 4], &[0; 4]]);
        assert_eq!(staging.chunk, 1 << 20);
    }
}
