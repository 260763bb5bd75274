//! The bone pass: writes the bones of every character whose pose came through the pose
//! pipeline this frame (a [`super::SkeletalClip`] on its common frame, or [`super::ClipLayers`]
//! mixed), walking the bones in the order the world stores them.

use super::bind::{BonePass, BoneSetView, PlaybackBinding, PoseSource, PosedBy};
use super::layers::{LayerBinding, LayerScratch};
use crate::animation::BonePose;
use crate::animation::pose::{self, LocalPose, PoseCursor};
use crate::plugin::Playback;
use bevy::ecs::change_detection::{ContiguousMut, Tick};
use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy::utils::Parallel;
use std::sync::atomic::Ordering;

/// Writes the bones of every character on its common frame on the pose pipeline (see
/// [`BonePass`]), walking the bones in the order the world stores them: a character's bones
/// were tagged together, so they lie together, and its binding is looked up (and, on a timeline
/// clip, its pose sampled into a scratch pose) once per run of its bones, so the pose is written
/// while it is in the cache.
///
/// The bones are read as whole table columns ([`Query::contiguous_iter_mut`]): a tight loop
/// over slices of tags, transforms and change ticks, with no per-bone call into the query's
/// iteration. A bone's change tick is set only when its transform is written. On more than one
/// thread, the columns are cut into runs spread over the compute task pool.
pub(crate) fn write_posed_bones(
    characters: Query<(Option<&'static Playback>, &'static PoseSource)>,
    bindings: Query<&'static PlaybackBinding>,
    layered: Query<&'static LayerBinding>,
    mut bones: Query<(&PosedBy, &mut Transform)>,
    scratch: Local<Parallel<BoneScratch>>,
) {
    let Ok(tables) = bones.contiguous_iter_mut() else {
        // Never: both components are stored in tables.
        return;
    };
    let mut tables: Vec<_> = tables
        .map(|(tags, transforms)| {
            let (values, ticks) = ContiguousMut::bypass_change_detection_split(transforms);
            (tags, values, ticks)
        })
        .collect();
    let reader = CharacterReader {
        characters: &characters,
        bindings: &bindings,
        layered: &layered,
    };
    let Some(this_run) = tables.first_mut().map(|t| t.2.this_run()) else {
        return;
    };
    let slices: Vec<BoneSlice> = tables
        .iter_mut()
        .map(|(tags, values, ticks)| BoneSlice {
            tags,
            values,
            changed: ticks.changed_mut(),
        })
        .collect();
    let bones: usize = slices.iter().map(|s| s.tags.len()).sum();
    let threads = ComputeTaskPool::try_get().map_or(1, |p| p.thread_num());
    // Runs of at least this many bones, a few per thread (so that one finishing early takes
    // another).
    const MIN_RUN: usize = 2048;
    let runs = if threads <= 1 {
        1
    } else {
        (bones / MIN_RUN).clamp(1, threads * 4)
    };
    if runs == 1 {
        reader.write(slices, this_run, &mut scratch.borrow_local_mut());
    } else {
        // Every table cut at the same fractions: run `i` takes the `i`-th piece of each, which
        // holds the same characters where the tables list them in the same order (as the
        // bones were tagged, character by character).
        let mut pieces: Vec<Vec<BoneSlice>> = (0..runs).map(|_| Vec::new()).collect();
        for slice in slices {
            for (run, piece) in pieces.iter_mut().zip(slice.cut(runs)) {
                run.push(piece);
            }
        }
        ComputeTaskPool::get().scope(|scope| {
            for run in pieces {
                let (reader, scratch) = (&reader, &scratch);
                scope.spawn(async move {
                    reader.write(run, this_run, &mut scratch.borrow_local_mut());
                });
            }
        });
    }
    // With Bevy's `track_location`: where the transforms written (marked with this run's tick)
    // were changed.
    let caller = std::panic::Location::caller();
    for (_, _, ticks) in &mut tables {
        if ticks.changed_by().into_option().is_none() {
            continue;
        }
        let written: Vec<bool> = ticks
            .changed()
            .iter()
            .map(|t| t.get() == this_run.get())
            .collect();
        if let Some(by) = ticks.changed_by_mut().into_option() {
            for (by, written) in by.iter_mut().zip(written) {
                if written {
                    *by = caller;
                }
            }
        }
    }
}

/// Consecutive bones of one table: their tags, transforms and change ticks.
struct BoneSlice<'a> {
    tags: &'a [PosedBy],
    values: &'a mut [Transform],
    changed: &'a mut [Tick],
}

impl<'a> BoneSlice<'a> {
    /// Cut into `n` consecutive pieces of about equal length (some empty when shorter than
    /// `n`).
    fn cut(self, n: usize) -> Vec<BoneSlice<'a>> {
        let len = self.tags.len();
        let (mut tags, mut values, mut changed) = (self.tags, self.values, self.changed);
        let mut pieces = Vec::with_capacity(n);
        let mut at = 0;
        for i in 1..=n {
            let end = len * i / n;
            let (t, rest_t) = tags.split_at(end - at);
            let (v, rest_v) = values.split_at_mut(end - at);
            let (c, rest_c) = changed.split_at_mut(end - at);
            pieces.push(BoneSlice {
                tags: t,
                values: v,
                changed: c,
            });
            (tags, values, changed, at) = (rest_t, rest_v, rest_c, end);
        }
        pieces
    }
}

/// What [`write_posed_bones`] reads of the characters.
struct CharacterReader<'a, 'w, 's> {
    characters: &'a Query<'w, 's, (Option<&'static Playback>, &'static PoseSource)>,
    bindings: &'a Query<'w, 's, &'static PlaybackBinding>,
    layered: &'a Query<'w, 's, &'static LayerBinding>,
}

impl CharacterReader<'_, '_, '_> {
    /// Writes the bones of `parts` (pieces of tables) that their characters' clips drive,
    /// marking each written transform changed. The parts are walked side by side, a character
    /// at a time: its bones at the head of every part are written together, so a character
    /// whose bones lie in several tables (a skeleton's leaves have no `Children`) is looked up
    /// and sampled once, where the parts list the characters in the same order.
    fn write(&self, mut parts: Vec<BoneSlice>, this_run: Tick, scratch: &mut BoneScratch) {
        let mut heads = vec![0usize; parts.len()];
        let mut first = 0;
        loop {
            while first < parts.len() && heads[first] == parts[first].tags.len() {
                first += 1;
            }
            let Some(part) = parts.get(first) else {
                return;
            };
            let character = part.tags[heads[first]].character;
            let found = self.find(character, scratch);
            for (part, head) in parts[first..].iter_mut().zip(&mut heads[first..]) {
                let bones = part.tags[*head..]
                    .iter()
                    .zip(&mut part.values[*head..])
                    .zip(&mut part.changed[*head..]);
                let Some((source, pose)) = found else {
                    *head += bones
                        .take_while(|((by, _), _)| by.character == character)
                        .count();
                    continue;
                };
                let driven = source.driven.view();
                let pose = pose.unwrap_or(&scratch.pose).reader();
                let n = write_run(bones, character, driven, this_run, |b| pose.get(b));
                *head += n;
            }
        }
    }

    /// The character's pose source when its bones are posed this frame, and the pose: its
    /// binding's, or `None` where it is sampled here into `scratch.pose` (a timeline clip, or
    /// layers on timeline clips, mixed).
    fn find(
        &self,
        character: Entity,
        scratch: &mut BoneScratch,
    ) -> Option<(&PoseSource, Option<&LocalPose>)> {
        let (playback, source) = self
            .characters
            .get(character)
            .ok()
            .filter(|(_, source)| source.pass != BonePass::Off)?;
        if source.pass == BonePass::Sample
            && let Some(layout) = &source.layout
            && let Some(playback) = playback
        {
            let BoneScratch { cursor, pose, .. } = scratch;
            cursor.resume_at(layout, source.segment.load(Ordering::Relaxed));
            pose::sample(layout, playback.time, cursor, pose);
            source
                .segment
                .store(cursor.timeline_segment(), Ordering::Relaxed);
            Some((source, None))
        } else if let Ok(layered) = self.layered.get(character) {
            match layered.pose() {
                Some(pose) => Some((source, Some(pose))),
                None => {
                    let BoneScratch { pose, layers, .. } = scratch;
                    layered.pose_into(layers, pose);
                    Some((source, None))
                }
            }
        } else {
            Some((source, Some(&self.bindings.get(character).ok()?.local)))
        }
    }
}

/// Writes `character`'s bones at the head of `bones` that its clip drives, from `pose`, marking
/// each written transform changed; how many of its bones were there. (A bone the clip no longer
/// drives stays. A bone two characters drive carries the tag of the one bound last, and is
/// written once, by that one.)
#[inline(always)]
fn write_run<'a>(
    bones: impl Iterator<Item = ((&'a PosedBy, &'a mut Transform), &'a mut Tick)>,
    character: Entity,
    driven: BoneSetView,
    this_run: Tick,
    pose: impl Fn(usize) -> Option<BonePose>,
) -> usize {
    let mut n = 0;
    for ((by, transform), tick) in bones {
        if by.character != character {
            break;
        }
        n += 1;
        let b = by.bone as usize;
        if driven.contains(b)
            && let Some(pose) = pose(b)
        {
            *transform = Transform::from(pose);
            *tick = this_run;
        }
    }
    n
}

/// A thread's scratch for [`write_posed_bones`]: a cursor and pose to sample a timeline clip
/// (or mix layers) into, and the layers' own poses.
#[derive(Default)]
pub(crate) struct BoneScratch {
    cursor: PoseCursor,
    pose: LocalPose,
    layers: LayerScratch,
}
