//! Retargeting in the skeletal wing: a rest-compensated [`Retarget`] character's hierarchy
//! ([`TargetRig`], gathered once per binding) and a clip retargeted onto it once
//! ([`RetargetPlan`]), which characters then play as any clip laid out for their bones.

use super::{ClipInfo, Retarget, RigBone};
use crate::animation::BonePose;
use crate::animation::pose::{KeyedChannels, PoseClip, PoseSkeleton};
use crate::animation::retarget::{
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
    let rests: Vec<BonePose> = bones.iter().map(|b| b.1).collect();
    let rig = TargetRig::new(retarget, &rests, parents, names);
    (bones, rig)
}

/// A rest-compensated [`Retarget`] character's hierarchy as the retargeting maths takes it:
/// every descendant (named or not) with its rest, its parent among them, its name, and the
/// character's settings. Built when the character is bound.
pub(crate) struct TargetRig {
    rest: RestPose,
    /// Per node, its rest as the character's hierarchy holds it.
    rests: Vec<BonePose>,
    /// Per node, its own and its ancestors' scales (what its children's offsets are scaled by).
    child_scales: Vec<Vec3>,
    names: Vec<String>,
    user: Vec<(String, String)>,
    from_gltf: Quat,
    up: Vec3,
    alignment: RestAlignment,
    /// A hash of all of the above: characters of equal rigs share their retargeting.
    pub(crate) fingerprint: u64,
}

impl TargetRig {
    /// The hierarchy of nodes with these rests, parents and names under `retarget`'s settings;
    /// `None` when it cannot be a skeleton (a parent out of range or after its child, a cycle).
    pub(crate) fn new(
        retarget: &Retarget,
        rests: &[BonePose],
        parents: Vec<Option<usize>>,
        names: Vec<String>,
    ) -> Option<Self> {
        let trs: Vec<(Vec3, Quat, Vec3)> = rests
            .iter()
            .map(|p| (p.translation, p.rotation, p.scale))
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
            rests: rests.to_vec(),
            child_scales,
            names,
            user: retarget.bone_map.clone(),
            from_gltf,
            up,
            alignment,
            fingerprint,
        })
    }
    /// Each node's rest, in the hierarchy's order.
    #[cfg(feature = "gltf")]
    pub(crate) fn rests(&self) -> &[BonePose] {
        &self.rests
    }

    /// Each node's parent, in the hierarchy's order.
    #[cfg(feature = "gltf")]
    pub(crate) fn parents(&self) -> &[Option<usize>] {
        &self.rest.parents
    }

    /// Each node's name, in the hierarchy's order.
    #[cfg(feature = "gltf")]
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }
}

/// One clip retargeted onto one rig, built once and shared by every character of that rig
/// ([`super::bind::PoseLayouts::retargeting`]): the clip retargeted key by key
/// ([`Retargeter::retarget_clip`]) and laid out for the character's bones, so that playing it
/// is sampling a clip, as for any character; which bones it sets; and what root motion needs.
pub(super) struct RetargetPlan {
    source: Arc<RetargetSource>,
    retargeter: Retargeter,
    /// The clip as played, retargeted, laid out for the character's bones.
    pub(super) layout: Arc<PoseClip>,
    /// The character's bones the clip sets (every paired bone).
    mapped: Vec<usize>,
    /// The character's channels the source clip keys (a layer playing the clip leaves the
    /// others to the layers under it).
    keyed: KeyedChannels,
    /// Source axes to the character's (for root motion).
    basis: Quat,
}

/// How closely a retargeted clip's keys follow the retargeting where a bone takes a product
/// of source bones (radians; the hips' translation within this times their scale).
const RETARGET_TOLERANCE: f32 = 1e-4;

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
        // Model space to the hips' local translation: the inverse of their parent's rest.
        let mut hips_parent_inverse = Affine3A::IDENTITY;
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
            hips_parent_inverse = parent.inverse();
        }
        let baked = retargeter.retarget_clip(
            &info.played,
            &source.tracks,
            |p| hips_parent_inverse.transform_point3(p),
            RETARGET_TOLERANCE,
        );
        let rests = &target.rests;
        let skeleton = PoseSkeleton::new(&vec![None; rests.len()], rests).ok()?;
        let layout = Arc::new(PoseClip::new(&baked.clip, &skeleton, &baked.targets));
        let keyed = KeyedChannels::new(rests.len(), |b| {
            let (r, t) = baked.keyed.get(b).copied().unwrap_or_default();
            (r, t, false)
        });
        Some(Self {
            layout,
            mapped: baked.targets.iter().flatten().copied().collect(),
            keyed,
            basis,
            retargeter,
            source,
        })
    }

    /// The character's bones the clip sets.
    pub(super) fn mapped(&self) -> &[usize] {
        &self.mapped
    }

    /// The character's channels the source clip keys (for a mix of layers).
    pub(super) fn keyed(&self) -> &KeyedChannels {
        &self.keyed
    }

    /// Whether the clip's track `track` reaches a bone of the character (its source bone is
    /// paired, or above a paired one).
    pub(super) fn uses_source_track(&self, track: usize) -> bool {
        self.source
            .tracks
            .get(track)
            .copied()
            .flatten()
            .is_some_and(|s| self.retargeter.uses_source(s))
    }

    /// The root's movement `gta_displacement` (the clip's axes) in the character's axes,
    /// scaled like the hips.
    pub(super) fn root_motion(&self, gta_displacement: Vec3) -> Vec3 {
        self.basis * (gta_displacement * self.retargeter.hips_scale())
    }
}
