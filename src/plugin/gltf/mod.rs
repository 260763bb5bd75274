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

mod crowd_skin;

pub(crate) use crowd_skin::pose_gltf_crowd_skins;

use super::skeletal::{CrowdRig, CrowdSkeleton, TargetRig};
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

/// The glTF character a [`CrowdCharacter`](super::CrowdCharacter) wears: the crowd poses the
/// file's own hierarchy (every node, its rest as the file gives it) with each clip retargeted
/// onto it as [`Retarget`](super::Retarget) retargets it (`retarget`'s settings: axes, bone
/// map, rest alignment; its mode and game are not used), once per clip and rig, so that a frame
/// samples the clip as for a GTA ped. Its [`CrowdPose`](super::CrowdPose) holds the file's nodes
/// in the file's order of a walk from its roots, parents before children; the pose is in the
/// character's space, the scene's root at its origin, as a `WorldAssetRoot` of the file's scene
/// places it. Cross-fades, [`ClipLayers`](super::ClipLayers) (masks resolved on the file's
/// names) and root motion (scaled like the hips, in the file's axes) work as on a GTA ped.
///
/// With the `dff` feature's [`CrowdDrawPlugin`](super::CrowdDrawPlugin) the character is drawn
/// by instanced GPU skinning: every skinned mesh of the file and every mesh on a node. Add
/// [`CrowdSkinPose`](super::CrowdSkinPose) as well to get the skin matrices on the CPU each
/// frame, after the character is posed (one palette per skinned mesh node, in the file's node
/// order).
///
/// Until the file and its nodes and skins have loaded the character is not posed. A file that
/// fails to load, or whose nodes cannot be a skeleton, leaves it unposed with a warning.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/sa_ped.ifp#walk");
///     let model = assets.load("characters/humanoid.glb");
///     for i in 0..1000 {
///         let at = Transform::from_xyz((i % 40) as f32, 0.0, (i / 40) as f32);
///         commands.spawn((
///             CrowdCharacter::new(GtaGame::Sa, walk.clone()),
///             CrowdGltfModel::new(model.clone()),
///             at,
///         ));
///     }
/// }
/// ```
#[derive(Component, Debug, Clone)]
#[require(CrowdRig, CrowdRigReport)]
pub struct CrowdGltfModel {
    /// The glTF file.
    pub model: Handle<Gltf>,
    /// How clips are retargeted onto it.
    pub retarget: super::Retarget,
}

impl CrowdGltfModel {
    /// `model` with [`Retarget::new`](super::Retarget::new)'s settings.
    pub fn new(model: Handle<Gltf>) -> Self {
        Self {
            model,
            retarget: super::Retarget::new(),
        }
    }
}

/// What retargeting found in the rig of a crowd character wearing a glTF model
/// ([`CrowdGltfModel`]): the [`RetargetReport`](super::RetargetReport) a `Retarget` character
/// with bone entities gets (the naming convention, the humanoid bones found and missing, which
/// node each GTA bone drives, the problems with the user's map), made once per rig and shared by
/// every character of one file and settings. Empty until the file has loaded and its rig is
/// made, and where its nodes are no skeleton.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::plugin::CrowdRigReport;
/// fn missing(characters: Query<&CrowdRigReport, Changed<CrowdRigReport>>) {
///     for report in characters.iter().filter_map(CrowdRigReport::get) {
///         info!("{:?} names; missing {:?}", report.preset, report.report.unmatched);
///     }
/// }
/// ```
#[derive(Component, Debug, Clone, Default)]
pub struct CrowdRigReport(Option<Arc<super::RetargetReport>>);

impl CrowdRigReport {
    /// The report, once the character's rig is made.
    pub fn get(&self) -> Option<&super::RetargetReport> {
        self.0.as_deref()
    }
}

/// A glTF file's nodes as a crowd skeleton's: parents before children (a walk from the roots,
/// each node's children in the file's order), with each node's index in the file.
pub(crate) struct CrowdRigNodes {
    /// Per bone, its node's index in the file.
    pub(crate) file_index: Vec<usize>,
    pub(crate) parents: Vec<Option<usize>>,
    pub(crate) rests: Vec<crate::animation::BonePose>,
    pub(crate) names: Vec<String>,
    pub(crate) targets: Vec<AnimationTargetId>,
}

impl GltfClips<'_> {
    /// `file`'s nodes in the order a crowd skeleton takes them (see [`CrowdRigNodes`]).
    pub(crate) fn rig_nodes(&self, file: &Gltf) -> Result<CrowdRigNodes, GltfClipError> {
        let (scene, targets) = self.skeleton(file)?;
        let nodes = &scene.nodes;
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent.filter(|p| *p < nodes.len()) {
                children[p].push(i);
            }
        }
        // Depth first from each root, in the file's order (a node is placed once).
        let mut order = Vec::with_capacity(nodes.len());
        let mut placed = vec![false; nodes.len()];
        for root in (0..nodes.len()).filter(|&i| nodes[i].parent.is_none()) {
            let mut stack = vec![root];
            while let Some(i) = stack.pop() {
                if std::mem::replace(&mut placed[i], true) {
                    continue;
                }
                order.push(i);
                stack.extend(children[i].iter().rev());
            }
        }
        let mut bone_of = vec![usize::MAX; nodes.len()];
        for (b, &i) in order.iter().enumerate() {
            bone_of[i] = b;
        }
        Ok(CrowdRigNodes {
            names: order.iter().map(|&i| nodes[i].name.clone()).collect(),
            targets: order.iter().map(|&i| targets[i]).collect(),
            parents: (order.iter())
                .map(|&i| nodes[i].parent.map(|p| bone_of[p]))
                .collect(),
            rests: (order.iter())
                .map(|&i| {
                    let (translation, rotation, scale) = nodes[i].rest;
                    crate::animation::BonePose {
                        translation,
                        rotation,
                        scale,
                    }
                })
                .collect(),
            // (`skeleton` lists the nodes by their index in the file, 0 to n − 1.)
            file_index: order,
        })
    }
}

/// Gives each crowd character wearing a glTF model ([`CrowdGltfModel`]) its rig once the file
/// has loaded (again when the model, its settings or the file change), shared by the
/// characters of one file and settings.
pub(crate) fn rig_gltf_crowds(
    gltf: GltfClips,
    assets: Res<AssetServer>,
    mut events: MessageReader<AssetEvent<Gltf>>,
    // By file: the rigs made of it (each with the settings' fingerprint), and the files warned
    // of.
    mut rigs: Local<HashMap<AssetId<Gltf>, Vec<Rig>>>,
    mut warned: Local<std::collections::HashSet<AssetId<Gltf>>>,
    // Whether a character was left waiting for its rig (a file still loading, or failed).
    mut waiting: Local<bool>,
    changed_models: Query<(), Changed<CrowdGltfModel>>,
    mut characters: Query<(Ref<CrowdGltfModel>, &mut CrowdRig, &mut CrowdRigReport)>,
) {
    let mut changed = std::collections::HashSet::new();
    // A file loaded at last (once it failed, its path fixed and loaded again, say).
    let mut loaded = false;
    for event in events.read() {
        match event {
            AssetEvent::Modified { id } | AssetEvent::Removed { id } => {
                rigs.remove(id);
                warned.remove(id);
                changed.insert(*id);
            }
            AssetEvent::Added { .. } | AssetEvent::LoadedWithDependencies { .. } => loaded = true,
            AssetEvent::Unused { .. } => {}
        }
    }
    // Nothing to do (the usual frame): no pass over the characters.
    if !*waiting && !loaded && changed.is_empty() && changed_models.is_empty() {
        return;
    }
    *waiting = false;
    // Each file's nodes, read once a pass (a crowd is many characters of few files).
    let mut read: HashMap<AssetId<Gltf>, Arc<CrowdRigNodes>> = HashMap::new();
    for (model, mut rig, mut report) in &mut characters {
        let id = model.model.id();
        let mut no_skeleton = || {
            if warned.insert(id) {
                warn!(
                    "crowd characters wearing {:?} are not posed: its nodes are no skeleton",
                    model.model.path()
                );
            }
        };
        let stale = changed.contains(&id) || model.is_changed();
        if rig.0.is_some() && !stale {
            continue;
        }
        if stale && rig.0.is_some() {
            rig.0 = None;
            report.0 = None;
        }
        let Some(file) = gltf.gltfs.get(id) else {
            if !assets.load_state(&model.model).is_failed() {
                // Still loading: looked at again next frame.
                *waiting = true;
            } else if warned.insert(id) {
                warn!(
                    "crowd characters wearing {:?} are not posed: the file failed to load",
                    model.model.path()
                );
            }
            continue;
        };
        let nodes = match read.get(&id) {
            Some(nodes) => Ok(nodes.clone()),
            None => gltf.rig_nodes(file).map(Arc::new),
        };
        let nodes = match nodes {
            Ok(nodes) => {
                read.insert(id, nodes.clone());
                nodes
            }
            // Its nodes, skins or inverse bind matrices still loading.
            Err(GltfClipError::NotLoaded) => {
                *waiting = true;
                continue;
            }
            Err(why) => {
                if warned.insert(id) {
                    warn!(
                        "crowd characters wearing {:?} are not posed: {why}",
                        model.model.path()
                    );
                }
                continue;
            }
        };
        let Some(target) = TargetRig::new(
            &model.retarget,
            &nodes.rests,
            nodes.parents.clone(),
            nodes.names.clone(),
        ) else {
            no_skeleton();
            continue;
        };
        let made = rigs.entry(id).or_default();
        let made_rig = match made.iter().find(|r| r.fingerprint == target.fingerprint) {
            Some(r) => r.clone(),
            None => {
                let fingerprint = target.fingerprint;
                let built =
                    CrowdSkeleton::for_rig(target, nodes.targets.clone(), nodes.file_index.clone());
                let Some(skeleton) = built else {
                    no_skeleton();
                    continue;
                };
                // What the retargeting found in it, said once per rig and shared by its
                // characters (a crowd of thousands would otherwise hold as many copies).
                let report = super::RetargetReport::new(&model.retarget, nodes.names.clone());
                info!(
                    "crowd rig of {:?}: {} nodes, {:?} names, {} of {} humanoid bones found{}",
                    model.model.path(),
                    nodes.names.len(),
                    report.preset,
                    report.report.matched.len(),
                    crate::animation::retarget::HumanoidBone::COUNT,
                    match report.report.unmatched.is_empty() {
                        true => String::new(),
                        false => format!(" (none for {:?})", report.report.unmatched),
                    },
                );
                let made_rig = Rig {
                    fingerprint,
                    skeleton: Arc::new(skeleton),
                    report: Arc::new(report),
                };
                made.push(made_rig.clone());
                made_rig
            }
        };
        rig.0 = Some(made_rig.skeleton);
        report.0 = Some(made_rig.report);
    }
}

/// A rig made of a glTF file under some settings (their fingerprint), and its report.
#[derive(Clone)]
pub(crate) struct Rig {
    fingerprint: u64,
    skeleton: Arc<CrowdSkeleton>,
    report: Arc<super::RetargetReport>,
}

/// A crowd character given a glTF model is marked changed, so that it is bound (and dressed)
/// anew.
pub(crate) fn note_crowd_gltf(
    inserted: On<Insert, CrowdGltfModel>,
    mut characters: Query<&mut super::CrowdCharacter>,
) {
    if let Ok(mut character) = characters.get_mut(inserted.entity) {
        character.set_changed();
    }
}

/// A crowd character that takes off its glTF model loses its rig, and poses its game's
/// skeleton again from the next frame (its character marked changed, so that it binds anew).
pub(crate) fn drop_crowd_rig(
    removed: On<Remove, CrowdGltfModel>,
    mut commands: Commands,
    mut characters: Query<&mut super::CrowdCharacter>,
) {
    if let Ok(mut character) = characters.get_mut(removed.entity) {
        character.set_changed();
    }
    if let Ok(mut entity) = commands.get_entity(removed.entity) {
        entity.try_remove::<(CrowdRig, CrowdRigReport)>();
    }
}
