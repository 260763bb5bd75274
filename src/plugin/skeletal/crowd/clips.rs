//! Every clip laid out for a crowd skeleton, shared by all the characters that play it, and
//! the three games' skeletons.

use super::CrowdSkeleton;
use crate::animation::layers::ResolvedMask;
use crate::animation::pose::{KeyedChannels, PoseClip};
use crate::coords::gta_vec_to_bevy;
use crate::plugin::skeletal::bind::{PoseLayouts, unmatched_tracks};
use crate::plugin::skeletal::retargeted::RetargetPlan;
use crate::plugin::skeletal::{ClipInfo, RigClip};
use crate::skeleton::GtaGame;
#[cfg(feature = "dff")]
use bevy::animation::AnimationTargetId;
use bevy::prelude::*;
use std::sync::Arc;

/// The three games' crowd skeletons, built once, and every clip laid out for a crowd skeleton
/// (shared by all the characters that play it).
#[derive(Resource)]
pub(crate) struct CrowdSkeletons {
    skeletons: [Arc<CrowdSkeleton>; 3],
    /// By clip, skeleton and mask (their addresses; 0: no mask), the clip's layout, with what
    /// it was made from (kept alive with its layout, so that their addresses name them).
    clips: std::collections::HashMap<(AssetId<RigClip>, usize, usize), CachedLayout>,
}

/// A layout of [`CrowdSkeletons::layout`], with what it was made from.
type CachedLayout = (
    Arc<ClipInfo>,
    Arc<CrowdSkeleton>,
    Option<Arc<ResolvedMask>>,
    CrowdClip,
);

/// A clip laid out for a crowd skeleton: the layout sampled, and for a glTF character the
/// retargeting it was baked by (which channels the source keys, how root motion turns).
#[derive(Clone)]
pub(crate) struct CrowdClip {
    pub(in crate::plugin::skeletal) layout: Arc<PoseClip>,
    plan: Option<Arc<RetargetPlan>>,
}

impl CrowdClip {
    /// The channels the clip keys (a retargeted clip's: those its source keys).
    pub(in crate::plugin::skeletal) fn keyed(&self) -> &KeyedChannels {
        self.plan
            .as_ref()
            .map_or(self.layout.keyed(), |p| p.keyed())
    }

    /// The root's movement `gta` (the clip's axes) in the character's axes (Bevy's for a
    /// game's skeleton; a glTF character's own, scaled like its hips).
    pub(in crate::plugin::skeletal) fn root_motion(&self, gta: Vec3) -> Vec3 {
        match &self.plan {
            Some(plan) => plan.root_motion(gta),
            None => gta_vec_to_bevy(gta),
        }
    }
}

impl Default for CrowdSkeletons {
    fn default() -> Self {
        Self {
            skeletons: [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa]
                .map(|g| Arc::new(CrowdSkeleton::new(g))),
            clips: Default::default(),
        }
    }
}

impl CrowdSkeletons {
    /// The animation target of each bone of `game`'s crowd skeleton, in bone order (the order of
    /// [`CrowdPose::bones`]).
    #[cfg(feature = "dff")]
    pub(crate) fn targets(&self, game: GtaGame) -> &[AnimationTargetId] {
        &self.get(game).targets
    }

    pub(crate) fn get(&self, game: GtaGame) -> &Arc<CrowdSkeleton> {
        &self.skeletons[match game {
            GtaGame::Iii => 0,
            GtaGame::Vc => 1,
            GtaGame::Sa => 2,
        }]
    }

    /// `info`'s clip laid out for `skeleton`: a game's, its tracks bound to the bones by their
    /// target ids; a glTF character's, retargeted onto its rig (shared through `layouts` with
    /// the characters of an equal rig that have bone entities), else bound by target ids too.
    /// Built once per clip and skeleton (again when the clip reloads).
    pub(in crate::plugin::skeletal) fn clip(
        &mut self,
        id: AssetId<RigClip>,
        skeleton: &Arc<CrowdSkeleton>,
        info: &Arc<ClipInfo>,
        layouts: &mut PoseLayouts,
    ) -> CrowdClip {
        self.layout(id, skeleton, info, None, layouts)
    }

    /// [`Self::clip`], with `mask` only the tracks of the bones it weighs: a bone a layer's mask
    /// leaves out is, for the mix, a bone the layer does not key, so sampling skips it (an
    /// upper-body layer samples the upper body). Shared by the characters of the same skeleton
    /// and mask. (A retargeted clip is sampled whole; the mix weighs it by the mask all the
    /// same.)
    pub(in crate::plugin::skeletal) fn layout(
        &mut self,
        id: AssetId<RigClip>,
        skeleton: &Arc<CrowdSkeleton>,
        info: &Arc<ClipInfo>,
        mask: Option<&Arc<ResolvedMask>>,
        layouts: &mut PoseLayouts,
    ) -> CrowdClip {
        let key = (
            id,
            Arc::as_ptr(skeleton) as usize,
            mask.map_or(0, |m| Arc::as_ptr(m) as usize),
        );
        match self.clips.get(&key) {
            Some((i, k, m, c))
                if Arc::ptr_eq(i, info)
                    && Arc::ptr_eq(k, skeleton)
                    && m.as_ref().map(Arc::as_ptr) == mask.map(Arc::as_ptr) =>
            {
                c.clone()
            }
            _ => {
                if self.clips.len() > 64 {
                    // Kept while a character holds its layout (a retargeted one's plan holds it
                    // too).
                    self.clips.retain(|_, (_, _, _, c)| {
                        Arc::strong_count(&c.layout) > 1 + usize::from(c.plan.is_some())
                    });
                }
                let plan = (skeleton.rig.as_deref()).and_then(|r| layouts.retargeting(id, info, r));
                // (Once per clip and rig: the layout is kept.)
                if skeleton.rig.is_some() && plan.as_ref().is_none_or(|p| p.mapped().is_empty()) {
                    warn!(
                        "a clip of {} tracks drives no node of a glTF crowd character's rig ({} nodes, the first {:?}): the two have no humanoid bone in common, or the clip's source skeleton is unknown; those characters stay at rest",
                        info.tracks.len(),
                        skeleton.names.len(),
                        skeleton.names.first().map_or("", String::as_str),
                    );
                }
                let clip = match plan {
                    Some(plan) => CrowdClip {
                        layout: plan.layout.clone(),
                        plan: Some(plan),
                    },
                    None => {
                        let weighed = |b: &usize| {
                            mask.is_none_or(|m| m.weights.get(*b).is_some_and(|w| *w > 0.0))
                        };
                        let tracks: Vec<Option<usize>> = (skeleton.tracks(info).into_iter())
                            .map(|t| t.filter(weighed))
                            .collect();
                        CrowdClip {
                            layout: Arc::new(PoseClip::new(&info.played, &skeleton.pose, &tracks)),
                            plan: None,
                        }
                    }
                };
                let made = (info.clone(), skeleton.clone(), mask.cloned(), clip.clone());
                self.clips.insert(key, made);
                clip
            }
        }
    }

    /// The descriptions of `info`'s tracks that drive no bone of `skeleton` (`clip`: the clip
    /// laid out for it).
    pub(in crate::plugin::skeletal) fn unmatched(
        skeleton: &CrowdSkeleton,
        info: &ClipInfo,
        clip: &CrowdClip,
    ) -> Vec<String> {
        match &clip.plan {
            Some(plan) => unmatched_tracks(info, &[], Some(plan)),
            None => unmatched_tracks(info, &skeleton.tracks(info), None),
        }
    }
}
