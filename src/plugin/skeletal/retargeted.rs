//! Retargeting in the skeletal wing: a rest-compensated [`Retarget`] character's hierarchy
//! ([`TargetRig`], gathered once per binding) and a clip retargeted onto it ([`Retargeted`]),
//! which the passes sample into the character's pose.

use super::{ClipInfo, Retarget, RigBone};
use crate::anim::BonePose;
use crate::anim::pose::{self, LocalPose, PoseClip, PoseCursor};
use crate::anim::retarget::{
    HumanoidBone, RestAlignment, RestPose, RetargetSource, Retargeter, bone_pairs,
};
use bevy::animation::AnimationTargetId;
use bevy::math::Affine3A;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// A [`Retarget`] character's whole hierarchy below it (unnamed nodes too: their rests place the
/// bones under them; a node rigplay does not drive rests where it is), and the rig the
/// retargeting maths takes.
pub(super) fn gather_hierarchy(
    entity: Entity,
    retarget: &Retarget,
    children: &Query<&Children>,
    nodes: &Query<(&Transform, Option<&Name>, &ChildOf)>,
    rig_bones: &Query<&RigBone>,
) -> (
    Vec<(Entity, BonePose, AnimationTargetId)>,
    Option<TargetRig>,
) {
    let unbound = AnimationTargetId::from_name(&Name::new("rigplay:unbound-node"));
    let bones: Vec<_> = children
        .iter_descendants(entity)
        .filter_map(|e| {
            let (transform, _, _) = nodes.get(e).ok()?;
            Some(match rig_bones.get(e) {
                Ok(r) => (e, BonePose::from(r.rest), r.target),
                Err(_) => (e, BonePose::from(*transform), unbound),
            })
        })
        .collect();
    let index: HashMap<Entity, usize> = bones.iter().enumerate().map(|(i, b)| (b.0, i)).collect();
    let (parents, names): (Vec<_>, Vec<_>) = bones
        .iter()
        .map(|(e, _, _)| match nodes.get(*e) {
            Ok((_, name, child_of)) => (
                index.get(&child_of.parent()).copied(),
                name.map_or_else(String::new, |n| n.as_str().to_owned()),
            ),
            Err(_) => (None, String::new()),
        })
        .unzip();
    let rig = TargetRig::new(retarget, &bones, parents, names);
    (bones, rig)
}

/// A rest-compensated [`Retarget`] character's hierarchy as the retargeting maths takes it:
/// every descendant (named or not) with its rest, its parent among them, its name, and the
/// character's settings. Built when the character is bound.
pub(crate) struct TargetRig {
    rest: RestPose,
    /// Per node, its own and its ancestors' scales (what its children's offsets are scaled by).
    child_scales: Vec<Vec3>,
    names: Vec<String>,
    user: Vec<(String, String)>,
    from_gltf: Quat,
    up: Vec3,
    alignment: RestAlignment,
    /// A hash of all of the above: characters of equal rigs share their retargeting.
    pub(super) fingerprint: u64,
}

impl TargetRig {
    /// `None` when the hierarchy cannot be a skeleton (it always can, coming from Bevy's
    /// parent links; kept for safety).
    pub(super) fn new(
        retarget: &Retarget,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        parents: Vec<Option<usize>>,
        names: Vec<String>,
    ) -> Option<Self> {
        let trs: Vec<(Vec3, Quat, Vec3)> = bones
            .iter()
            .map(|(_, p, _)| (p.translation, p.rotation, p.scale))
            .collect();
        let (rest, child_scales) = RestPose::from_trs(parents, &trs).ok()?;
        let (from_gltf, up, alignment) = (
            retarget.axes.from_gltf(),
            retarget.axes.up(),
            retarget.alignment(),
        );
        let fingerprint = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let floats = rest
                .local
                .iter()
                .flat_map(|(t, r)| t.to_array().into_iter().chain(r.to_array()))
                .chain(child_scales.iter().flat_map(|s| s.to_array()))
                .chain(from_gltf.to_array())
                .chain(up.to_array());
            floats.for_each(|v| v.to_bits().hash(&mut h));
            (&rest.parents, &names, &retarget.bone_map).hash(&mut h);
            std::mem::discriminant(&alignment).hash(&mut h);
            h.finish()
        };
        Some(Self {
            rest,
            child_scales,
            names,
            user: retarget.bone_map.clone(),
            from_gltf,
            up,
            alignment,
            fingerprint,
        })
    }
}

/// One clip retargeted onto one rig, built once and shared by every character of that rig
/// ([`super::bind::PoseLayouts::retargeting`]): the [`Retargeter`], which of the character's
/// bones it drives, and the clip laid out on its source skeleton.
pub(super) struct RetargetPlan {
    source: Arc<RetargetSource>,
    retargeter: Retargeter,
    /// The character's bones the clip drives.
    mapped: Vec<usize>,
    /// The hips' bone and the inverse of their parent's rest world transform (model space to
    /// the hips' local translation).
    hips: Option<(usize, Affine3A)>,
    /// The clip laid out on the source skeleton ([`ClipInfo::source_layout`]).
    layout: Arc<PoseClip>,
    /// Source axes to the character's (for root motion).
    basis: Quat,
}

impl RetargetPlan {
    /// `None` when the clip does not know its source skeleton or the maths refuses the pair
    /// (the clip then plays on the character by bone name).
    pub(super) fn new(info: &ClipInfo, target: &TargetRig) -> Option<Self> {
        let source = info.source.clone()?;
        let source_names: Vec<&str> = source.names.iter().map(String::as_str).collect();
        let target_names: Vec<&str> = target.names.iter().map(String::as_str).collect();
        let (pairs, _) = bone_pairs(&source_names, &target_names, &target.user);
        let basis = (target.from_gltf * source.to_gltf).normalize();
        let mut retargeter =
            Retargeter::with_alignment(&source.rest, &target.rest, &pairs, basis, target.alignment)
                .ok()?;
        let source_hips = source.bone_map().1.get(HumanoidBone::Hips);
        let target_hips = source_hips.and_then(|s| retargeter.pairs().find(|p| p.0 == s));
        let mut hips = None;
        if let (Some(s), Some((_, t))) = (source_hips, target_hips) {
            retargeter = retargeter.with_hips(s, t, target.up);
            let world = target.rest.world().ok()?;
            let parent = target.rest.parents[t].map_or(Affine3A::IDENTITY, |p| {
                Affine3A::from_scale_rotation_translation(
                    target.child_scales[p],
                    world[p].1,
                    world[p].0,
                )
            });
            hips = Some((t, parent.inverse()));
        }
        Some(Self {
            layout: info.source_layout()?.clone(),
            mapped: retargeter.pairs().map(|p| p.1).collect(),
            hips,
            basis,
            retargeter,
            source,
        })
    }
}

/// One character playing a clip retargeted onto it: the shared [`RetargetPlan`], and the
/// character's own sampling cache, sampled source pose and retargeted rotations.
pub(super) struct Retargeted {
    plan: Arc<RetargetPlan>,
    cursor: PoseCursor,
    /// The source pose sampled last, as the pose pipeline samples it and the retargeting
    /// maths reads it.
    sampled: LocalPose,
    /// Per character bone, its local rotation (the mapped ones retargeted; only they are read).
    out: Vec<Quat>,
    hips_position: Option<Vec3>,
}

impl Retargeted {
    /// A character of the plan's rig (`bones`: its bones and their rests) starting the clip.
    pub(super) fn new(
        plan: Arc<RetargetPlan>,
        bones: &[(Entity, BonePose, AnimationTargetId)],
    ) -> Self {
        Self {
            cursor: PoseCursor::new(&plan.layout),
            sampled: LocalPose::new(plan.layout.len()),
            out: bones.iter().map(|(_, p, _)| p.rotation).collect(),
            hips_position: None,
            plan,
        }
    }

    /// The character's bones the clip drives.
    pub(super) fn mapped(&self) -> &[usize] {
        &self.plan.mapped
    }

    /// Whether source bone `s` reaches a bone of the character (paired, or above a paired one).
    pub(super) fn uses_source_track(&self, track: usize) -> bool {
        let plan = &self.plan;
        plan.source
            .tracks
            .get(track)
            .copied()
            .flatten()
            .is_some_and(|s| plan.retargeter.uses_source(s))
    }

    /// Samples the clip as played (root motion taken out) at `time` on the source skeleton and
    /// retargets the pose.
    pub(super) fn sample(&mut self, time: f32) {
        let plan = &*self.plan;
        pose::sample(&plan.layout, time, &mut self.cursor, &mut self.sampled);
        let sampled = self.sampled.reader();
        self.hips_position = plan.retargeter.retarget(
            |b| sampled.get(b).map(|p| (p.translation, p.rotation)),
            &mut self.out,
        );
    }

    /// The local pose of mapped bone `b` (rest translation and scale, the retargeted rotation;
    /// the hips at their retargeted position).
    pub(super) fn bone_pose(&self, b: usize, rest: &BonePose) -> BonePose {
        let mut pose = BonePose {
            rotation: self.out[b],
            ..*rest
        };
        if let (Some((hips, parent_inverse)), Some(at)) = (self.plan.hips, self.hips_position)
            && hips == b
        {
            pose.translation = parent_inverse.transform_point3(at);
        }
        pose
    }

    /// The character's pose: `rest` with the retargeted bones set.
    pub(super) fn pose_into(
        &self,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        rest: &LocalPose,
        out: &mut LocalPose,
    ) {
        out.clone_from(rest);
        self.write_mapped(bones, out);
    }

    /// Sets the retargeted bones in `out` (the others keep what they hold).
    pub(super) fn write_mapped(
        &self,
        bones: &[(Entity, BonePose, AnimationTargetId)],
        out: &mut LocalPose,
    ) {
        for &b in &self.plan.mapped {
            out.set(b, self.bone_pose(b, &bones[b].1));
        }
    }

    /// The root's movement from `from` to `to` in the character's axes, scaled like the hips.
    pub(super) fn root_motion(&self, gta_displacement: Vec3) -> Vec3 {
        self.plan.basis * (gta_displacement * self.plan.retargeter.hips_scale())
    }
}
