//! Crowd characters wearing a glTF model ([`CrowdGltfModel`]): the rig made of the file's nodes
//! (once per file and settings, shared by its characters) and what retargeting found in it
//! ([`CrowdRigReport`]).

use super::{GltfClipError, GltfClips};
use crate::plugin::skeletal::{CrowdRig, CrowdSkeleton, TargetRig};
use bevy::animation::AnimationTargetId;
use bevy::gltf::Gltf;
use bevy::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// The glTF character a [`CrowdCharacter`](crate::plugin::CrowdCharacter) wears: the crowd poses the
/// file's own hierarchy (every node, its rest as the file gives it) with each clip retargeted
/// onto it as [`Retarget`](crate::plugin::Retarget) retargets it (`retarget`'s settings: axes, bone
/// map, rest alignment; its mode and game are not used), once per clip and rig, so that a frame
/// samples the clip as for a GTA ped. Its [`CrowdPose`](crate::plugin::CrowdPose) holds the file's nodes
/// in the file's order of a walk from its roots, parents before children; the pose is in the
/// character's space, the scene's root at its origin, as a `WorldAssetRoot` of the file's scene
/// places it. Cross-fades, [`ClipLayers`](crate::plugin::ClipLayers) (masks resolved on the file's
/// names) and root motion (scaled like the hips, in the file's axes) work as on a GTA ped.
///
/// With the `dff` feature's [`CrowdDrawPlugin`](crate::plugin::CrowdDrawPlugin) the character is drawn
/// by instanced GPU skinning: every skinned mesh of the file and every mesh on a node. Add
/// [`CrowdSkinPose`](crate::plugin::CrowdSkinPose) as well to get the skin matrices on the CPU each
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
    pub retarget: crate::plugin::Retarget,
}

impl CrowdGltfModel {
    /// `model` with [`Retarget::new`](crate::plugin::Retarget::new)'s settings.
    pub fn new(model: Handle<Gltf>) -> Self {
        Self {
            model,
            retarget: crate::plugin::Retarget::new(),
        }
    }
}

/// What retargeting found in the rig of a crowd character wearing a glTF model
/// ([`CrowdGltfModel`]): the [`RetargetReport`](crate::plugin::RetargetReport) a `Retarget` character
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
pub struct CrowdRigReport(Option<Arc<crate::plugin::RetargetReport>>);

impl CrowdRigReport {
    /// The report, once the character's rig is made.
    pub fn get(&self) -> Option<&crate::plugin::RetargetReport> {
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
                let report =
                    crate::plugin::RetargetReport::new(&model.retarget, nodes.names.clone());
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
    report: Arc<crate::plugin::RetargetReport>,
}

/// A crowd character given a glTF model is marked changed, so that it is bound (and dressed)
/// anew.
pub(crate) fn note_crowd_gltf(
    inserted: On<Insert, CrowdGltfModel>,
    mut characters: Query<&mut crate::plugin::CrowdCharacter>,
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
    mut characters: Query<&mut crate::plugin::CrowdCharacter>,
) {
    if let Ok(mut character) = characters.get_mut(removed.entity) {
        character.set_changed();
    }
    if let Ok(mut entity) = commands.get_entity(removed.entity) {
        entity.try_remove::<(CrowdRig, CrowdRigReport)>();
    }
}
