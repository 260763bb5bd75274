//! A glTF's own animations, as Bevy's glTF loader loads them, played on a GTA ped (the `gltf`
//! feature): [`GltfClips`] makes a [`RigClip`] of an `AnimationClip` of a loaded [`Gltf`],
//! with the file's skin as the clip's source skeleton, so that a [`Retarget`] character (a
//! [`GtaSkeleton`](super::GtaSkeleton), a DFF ped, another glTF character) plays it rest poses
//! compensated, as it plays an IFP clip.
//!
//! It is the same import as the [`Motion`](super::Motion) loader's and `rigplay import`'s
//! ([`crate::convert::import::gltf_source`]), fed from Bevy's assets instead of the file: the
//! nodes' names, parents and rest transforms, the skins' joints and inverse bind matrices (the
//! pose the mesh was bound in, where the nodes stand in another), and the curves. Bevy keeps a
//! curve's keys behind a type-erased sampler, so each channel is sampled at 60 per second
//! (ANP3's tick) over its own span, its last key included: keys on that grid (a 30 or 60 per
//! second export) come back exactly, and a linear channel between them is rebuilt exactly;
//! keys off the grid are followed to within what 1/60 s of their motion makes.
//!
//! What it does not do: root motion other than [`RootMotionMode::Baked`] (the hips of a glTF
//! move in their parent's axes, not the game's; the [`Motion`](super::Motion) loader imports
//! the clip into the game's axes, where every mode works), morph-target weights (left out, said
//! in the warnings), and files Bevy loaded with `convert_coordinates` on (the source is taken
//! to be in glTF's axes).
//!
//! Crowd characters wearing a glTF model ([`CrowdGltfModel`]) have their rig made of the file's
//! nodes here too (`crowd_rig`), and their skins posed on the CPU where asked for
//! (`crowd_skin`, [`CrowdSkinPose`](super::CrowdSkinPose)).

mod crowd_rig;
mod crowd_skin;

pub use crowd_rig::{CrowdGltfModel, CrowdRigReport};
pub(crate) use crowd_rig::{drop_crowd_rig, note_crowd_gltf, rig_gltf_crowds};
pub(crate) use crowd_skin::pose_gltf_crowd_skins;

use super::{ClipInfo, ClipSettings, RigClip, RootMotionMode};
use crate::animation::{BoneRef, BoneTrack, ClipBuilder};
use crate::convert::import::{ImportError, gltf_source};
use crate::formats::gltf::{
    GltfAnimation, GltfNode as SceneNode, GltfScene, GltfSkin as SceneSkin,
};
use bevy::animation::animated_field;
use bevy::animation::animation_curves::{AnimatableProperty, AnimationCurve};
use bevy::animation::{AnimationClip, AnimationTargetId};
use bevy::ecs::system::SystemParam;
use bevy::gltf::{Gltf, GltfNode, GltfSkin};
use bevy::mesh::skinning::SkinnedMeshInverseBindposes;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The rate at which a Bevy curve is sampled into keys: ANP3's tick, the finest the games keep.
const RATE: f32 = 60.0;

/// The most keys one channel is sampled into (a channel of over 18 minutes at 60 per second is
/// refused rather than allocated).
const MAX_KEYS: usize = 1 << 16;

/// Makes [`RigClip`]s of the animations of loaded glTF files ([`GltfClips::rig_clip`]).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use bevy::gltf::Gltf;
/// # use rigplay::prelude::*;
/// #[derive(Resource)]
/// struct Dance(Handle<Gltf>);
///
/// fn once_loaded(
///     dance: Res<Dance>,
///     gltf_clips: GltfClips,
///     mut clips: ResMut<Assets<RigClip>>,
///     mut commands: Commands,
///     mut done: Local<bool>,
/// ) {
///     if *done {
///         return;
///     }
///     // Err(GltfClipError::NotLoaded) until the file and its parts are in.
///     let Ok(clip) = gltf_clips.rig_clip(&dance.0, "Dance", ClipSettings::default()) else {
///         return;
///     };
///     *done = true;
///     let clip = clips.add(clip.clip);
///     // The SA ped, posed where the glTF's bones point.
///     commands.spawn((
///         GtaSkeleton::SA,
///         Retarget::default(),
///         SkeletalClip::new(clip),
///         Playback::looping(),
///     ));
/// }
/// ```
#[derive(SystemParam)]
pub struct GltfClips<'w> {
    gltfs: Res<'w, Assets<Gltf>>,
    nodes: Res<'w, Assets<GltfNode>>,
    skins: Res<'w, Assets<GltfSkin>>,
    bindposes: Res<'w, Assets<SkinnedMeshInverseBindposes>>,
    clips: Res<'w, Assets<AnimationClip>>,
}

/// A glTF animation made a [`RigClip`] ([`GltfClips::rig_clip`]).
#[derive(Debug, Clone)]
pub struct GltfRigClip {
    /// The clip: its source skeleton is the file's (the skins' bind pose), its `animation` the
    /// file's own `AnimationClip`.
    pub clip: RigClip,
    /// What was left out (a morph-weight channel, a curve on no node of the file).
    pub warnings: Vec<String>,
}

/// Why a glTF animation could not be made a [`RigClip`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GltfClipError {
    /// The file, or one of its nodes, skins, inverse bind matrices or animations, is not
    /// loaded (yet): try again on a later frame.
    #[error("the glTF file or a part of it is not loaded")]
    NotLoaded,
    /// The file has no animation of that name (nor, for a number, of that index).
    #[error("the glTF file has no animation {name:?} (it has {available:?})")]
    NoAnimation {
        /// The name asked for.
        name: String,
        /// The file's named animations.
        available: Vec<String>,
    },
    /// A root-motion mode other than [`RootMotionMode::Baked`] was asked for.
    #[error(
        "root motion {0:?} is not offered for a glTF's own clips (their hips move in the file's axes): load the file as a Motion, which imports it into the game's axes"
    )]
    RootMotion(RootMotionMode),
    /// A channel would take more keys than rigplay samples one into.
    #[error(
        "a channel of node {node:?} would take {keys} keys at 60 a second (at most {MAX_KEYS})"
    )]
    TooLong {
        /// The node's name.
        node: String,
        /// The keys it would take.
        keys: usize,
    },
    /// The file's skeleton or keys could not be made a source clip.
    #[error("{0}")]
    Import(#[from] ImportError),
}

impl GltfClips<'_> {
    /// The animation `animation` (its name, or its index as a number when no animation has that
    /// name) of `gltf` as a [`RigClip`] played as `settings` say, with the file's skeleton at
    /// its skins' bind pose as the clip's source: a [`Retarget`](super::Retarget) character
    /// plays it rest poses compensated, its bones paired by their names (Mixamo, Blender,
    /// Unreal, mocap and 3ds Max Biped names are told apart as for every clip).
    pub fn rig_clip(
        &self,
        gltf: &Handle<Gltf>,
        animation: &str,
        settings: ClipSettings,
    ) -> Result<GltfRigClip, GltfClipError> {
        if settings.root_motion != RootMotionMode::Baked {
            return Err(GltfClipError::RootMotion(settings.root_motion));
        }
        let file = self.gltfs.get(gltf).ok_or(GltfClipError::NotLoaded)?;
        let handle = file
            .named_animations
            .get(animation)
            .or_else(|| {
                let index: usize = animation.parse().ok()?;
                file.animations.get(index)
            })
            .ok_or_else(|| GltfClipError::NoAnimation {
                name: animation.to_owned(),
                available: {
                    let mut names: Vec<String> = file
                        .named_animations
                        .keys()
                        .map(|k| k.to_string())
                        .collect();
                    names.sort();
                    names
                },
            })?;
        let bevy_clip = self.clips.get(handle).ok_or(GltfClipError::NotLoaded)?;
        let (mut scene, targets) = self.skeleton(file)?;
        let mut warnings = Vec::new();
        let (gltf_animation, track_targets) =
            sampled(animation, bevy_clip, &scene.nodes, &targets, &mut warnings)?;
        scene.animations.push(gltf_animation);
        let (source, clip) = gltf_source(&scene, &scene.animations[0])?;
        let tracks = track_targets
            .into_iter()
            .zip(clip.tracks())
            .map(|(target, track)| (target, track.bone.name.clone()))
            .collect();
        let info = ClipInfo::new(
            Arc::new(clip),
            settings,
            tracks,
            None,
            Some(Arc::new(source)),
        );
        Ok(GltfRigClip {
            clip: RigClip::new(info, handle.clone()),
            warnings,
        })
    }

    /// The file's nodes and skins as the importer reads them from a file, and each node's
    /// animation target (the path of names from its scene's root, as Bevy's loader names it).
    fn skeleton(&self, file: &Gltf) -> Result<(GltfScene, Vec<AnimationTargetId>), GltfClipError> {
        let mut nodes: Vec<&GltfNode> = Vec::with_capacity(file.nodes.len());
        for handle in &file.nodes {
            nodes.push(self.nodes.get(handle).ok_or(GltfClipError::NotLoaded)?);
        }
        // The file's order (Bevy's list may be in another).
        nodes.sort_by_key(|n| n.index);
        // Nodes by their index in the file (a node's children and a skin's joints are handles
        // to the same assets, matched by the index each asset holds).
        let position: HashMap<usize, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.index, i))
            .collect();
        let at = |handle: &Handle<GltfNode>| {
            let node = self.nodes.get(handle)?;
            position.get(&node.index).copied()
        };
        let mut parents = vec![None; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            for child in &node.children {
                if let Some(c) = at(child) {
                    parents[c] = Some(i);
                }
            }
        }
        let scene_nodes: Vec<SceneNode> = nodes
            .iter()
            .zip(&parents)
            .map(|(n, parent)| SceneNode {
                name: n.name.clone(),
                parent: *parent,
                rest: (
                    n.transform.translation,
                    n.transform.rotation,
                    n.transform.scale,
                ),
            })
            .collect();
        let targets = (0..nodes.len())
            .map(|i| {
                // Root first; a cycle (which Bevy's loader refuses) cannot loop here.
                let mut path = vec![Name::new(nodes[i].name.clone())];
                let mut at = parents[i];
                while let Some(p) = at.filter(|_| path.len() <= nodes.len()) {
                    path.push(Name::new(nodes[p].name.clone()));
                    at = parents[p];
                }
                AnimationTargetId::from_names(path.iter().rev())
            })
            .collect();
        let mut listed = Vec::with_capacity(file.skins.len());
        for handle in &file.skins {
            listed.push(self.skins.get(handle).ok_or(GltfClipError::NotLoaded)?);
        }
        // The file's order (Bevy keeps the skins in a map's).
        listed.sort_by_key(|s| s.index);
        let mut skins = Vec::with_capacity(listed.len());
        for skin in listed {
            let inverse_bind = self
                .bindposes
                .get(&skin.inverse_bind_matrices)
                .ok_or(GltfClipError::NotLoaded)?
                .to_vec();
            let joints = (skin.joints.iter())
                .map(|j| at(j).ok_or(GltfClipError::NotLoaded))
                .collect::<Result<Vec<_>, _>>()?;
            // The node whose mesh it deforms (the first, as the file reader takes it).
            let node = nodes.iter().position(|n| {
                let on = n.skin.as_ref().and_then(|s| self.skins.get(s));
                on.is_some_and(|s| s.index == skin.index)
            });
            skins.push(SceneSkin {
                node,
                joints,
                inverse_bind,
            });
        }
        Ok((
            GltfScene {
                nodes: scene_nodes,
                animations: Vec::new(),
                humanoid: Vec::new(),
                skins,
            },
            targets,
        ))
    }
}

/// Bevy's clip sampled into keys, one track per animated node, and each track's target.
fn sampled(
    name: &str,
    clip: &AnimationClip,
    nodes: &[SceneNode],
    targets: &[AnimationTargetId],
    warnings: &mut Vec<String>,
) -> Result<(GltfAnimation, Vec<AnimationTargetId>), GltfClipError> {
    let node_of: HashMap<AnimationTargetId, usize> =
        targets.iter().enumerate().map(|(i, t)| (*t, i)).collect();
    let translation = animated_field!(Transform::translation);
    let rotation = animated_field!(Transform::rotation);
    let scale = animated_field!(Transform::scale);
    let mut animated: Vec<(usize, AnimationTargetId)> = Vec::new();
    let mut unknown = 0;
    for (target, _) in clip.curves() {
        match node_of.get(target) {
            Some(&node) => animated.push((node, *target)),
            None => unknown += 1,
        }
    }
    if unknown > 0 {
        warnings.push(format!(
            "animation {name:?}: {unknown} animated targets are no node of the file's and are left out"
        ));
    }
    // The file's node order, whatever the map's.
    animated.sort_by_key(|(node, _)| *node);
    let mut b = ClipBuilder::new(name);
    b.extend_duration(clip.duration());
    let mut morphs = 0;
    let mut track_nodes = Vec::new();
    let mut track_targets = Vec::new();
    for (node, target) in animated {
        let mut track = BoneTrack {
            bone: BoneRef {
                name: nodes[node].name.clone(),
                id: None,
            },
            rotation: None,
            translation: None,
            scale: None,
        };
        for curve in clip.curves_for_target(target).into_iter().flatten() {
            let curve = &*curve.0;
            let id = curve.evaluator_id();
            let node_name = &nodes[node].name;
            let times = times_of(curve, node_name)?;
            let (channel, what) = if id == rotation.evaluator_id() {
                let values: Vec<Quat> = values(curve, &times);
                let keys = b.times(&times).and_then(|t| b.rotations(t, &values));
                (&mut track.rotation, keys.map_err(|e| ("rotation", e)))
            } else if id == translation.evaluator_id() {
                let values: Vec<Vec3> = values(curve, &times);
                let keys = b.times(&times).and_then(|t| b.translations(t, &values));
                (&mut track.translation, keys.map_err(|e| ("translation", e)))
            } else if id == scale.evaluator_id() {
                let values: Vec<Vec3> = values(curve, &times);
                let keys = b.times(&times).and_then(|t| b.scales(t, &values));
                (&mut track.scale, keys.map_err(|e| ("scale", e)))
            } else {
                morphs += 1;
                continue;
            };
            match what {
                Ok(keys) => *channel = Some(keys),
                Err((path, e)) => warnings.push(format!(
                    "animation {name:?}: the {path} of node {node_name:?} is left out: {e}"
                )),
            }
        }
        b.track(track);
        track_nodes.push(node);
        track_targets.push(target);
    }
    if morphs > 0 {
        warnings.push(format!(
            "animation {name:?}: {morphs} channels that are not a node's transform (morph-target weights) are left out"
        ));
    }
    Ok((
        GltfAnimation {
            clip: b.build(),
            nodes: track_nodes,
        },
        track_targets,
    ))
}

/// The times a curve is sampled at: its span at [`RATE`] a second from its start, and its end
/// (one key for a constant curve, whose span is unbounded).
fn times_of(curve: &dyn AnimationCurve, node: &str) -> Result<Vec<f32>, GltfClipError> {
    let domain = curve.domain();
    if !domain.is_bounded() {
        return Ok(vec![0.0]);
    }
    let (start, end) = (domain.start().max(0.0), domain.end().max(0.0));
    let span = (end - start).max(0.0);
    let steps = (span * RATE).ceil();
    // `steps` is finite (a bounded interval's ends are); `ceil` of a span ≥ 0 is ≥ 0.
    let keys = steps as usize + 1;
    if keys > MAX_KEYS {
        return Err(GltfClipError::TooLong {
            node: node.to_owned(),
            keys,
        });
    }
    let mut times: Vec<f32> = (0..keys)
        .map(|k| (start + k as f32 / RATE).min(end))
        .collect();
    times.dedup();
    Ok(times)
}

/// A curve's values at `times` (the curve's own type: `Quat` for a rotation, `Vec3` for a
/// translation or scale; a value of another type, which no transform curve gives, is the
/// type's default).
fn values<T: Copy + Default + 'static>(curve: &dyn AnimationCurve, times: &[f32]) -> Vec<T> {
    times
        .iter()
        .map(|&t| {
            curve
                .sample_clamped(t)
                .downcast::<T>()
                .map_or_else(|_| T::default(), |v| *v)
        })
        .collect()
}
