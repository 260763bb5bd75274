//! [`Retarget`]: clips on any humanoid hierarchy (a glTF character, say), rest poses
//! compensated or bound by bone name or [`GtaBoneId`]; the report of its bone map
//! ([`RetargetReport`]) and of the tracks that found no bone ([`UnmatchedTracks`]).

use super::{GtaBoneId, LoadedClips, PlayAnimation, RigBone, RigClip, target_for};
use crate::animation::retarget::{BoneMap, BonePreset, MatchReport, RestAlignment, bone_pairs};
use crate::skeleton::{GtaGame, bone_key, canonical_bone_id};
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::prelude::*;
use std::collections::HashSet;

/// Put on the root of any named hierarchy (a glTF character's scene root, a DFF ped) to play
/// rigplay's clips on it.
///
/// With [`SkeletalClip`](super::SkeletalClip) on the same entity and the default
/// [`RetargetMode::RestCompensated`], every humanoid bone of the character (found by its naming
/// convention, [`RetargetReport`], corrected by [`Retarget::bone_map`]) points where the clip's
/// source bone points, whatever the character's rest pose and bone axes are; the hips move by the
/// clip's root movement scaled by the ratio of the hip heights; other bones keep their rest
/// (bone lengths stay the character's). The maths is [`crate::animation::retarget`]'s, done once per
/// clip and rig ([`crate::animation::retarget::Retargeter::retarget_clip`]): the character then
/// samples the retargeted clip as any other. [`ClipLayers`](super::ClipLayers) on it play
/// every layer retargeted.
///
/// Every descendant whose name (after normalisation and the alias table) or [`GtaBoneId`] names
/// a GTA bone is also an animation target of this root's `AnimationPlayer`, so that
/// [`PlayAnimation`] plays clips on it by bone name (local rotations as they are: right for a
/// character with GTA's rest pose, a DFF ped). Bones that appear later (a scene still spawning)
/// are bound when they do.
#[derive(Component, Debug, Clone, Default, Reflect)]
#[reflect(Component, Default)]
#[require(Transform)]
pub struct Retarget {
    /// The game whose bone ids [`GtaBoneId`] values are, and whose skeleton the report's map is
    /// worked out for.
    pub game: GtaGame,
    /// How [`SkeletalClip`](super::SkeletalClip) poses the character.
    pub mode: RetargetMode,
    /// Which way the character's model space is turned.
    pub axes: CharacterAxes,
    /// The user's corrections to the detected map: (source bone name, character bone name), GTA
    /// (or DAN) bone first. An entry replaces what its bones were paired with; an empty
    /// character name unmaps the source bone. Entries naming no bone are listed in the report.
    pub bone_map: Vec<(String, String)>,
    /// Start from the character's own rest pose instead of turning each bone onto the source's
    /// rest direction first ([`RestAlignment::KeepTargetRest`]): for clips made as offsets
    /// from a rest pose like the character's.
    pub keep_character_rest: bool,
}

impl Retarget {
    /// Rest-pose compensated retargeting onto a glTF-oriented character.
    pub fn new() -> Self {
        Self::default()
    }

    /// With a user correction of the bone map: `source` (a GTA or DAN bone name) drives
    /// `character` (a bone of this character; empty to unmap `source`).
    pub fn with_bone(mut self, source: impl Into<String>, character: impl Into<String>) -> Self {
        self.bone_map.push((source.into(), character.into()));
        self
    }

    /// With the character's model axes.
    pub fn with_axes(mut self, axes: CharacterAxes) -> Self {
        self.axes = axes;
        self
    }

    /// The rest alignment this setting stands for.
    pub fn alignment(&self) -> RestAlignment {
        if self.keep_character_rest {
            RestAlignment::KeepTargetRest
        } else {
            RestAlignment::MatchSourceRest
        }
    }
}

/// How a [`Retarget`] character plays a [`SkeletalClip`](super::SkeletalClip).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
pub enum RetargetMode {
    /// Rest poses compensated: every mapped bone points where the source bone points.
    #[default]
    RestCompensated,
    /// The clip's local rotations copied onto the bones of the same name, as they are (right
    /// only for a character with the source's rest pose and bone axes, a DFF ped say).
    ByName,
}

/// Which way a [`Retarget`] character's model space is turned.
#[derive(Debug, Clone, Copy, PartialEq, Default, Reflect)]
pub enum CharacterAxes {
    /// glTF's: Y up, facing +Z (Mixamo, VRM, Blender and Unreal exports).
    #[default]
    Gltf,
    /// GTA's: Z up, facing +Y (a DFF ped, under an entity that turns it into Bevy's axes).
    Gta,
    /// Bevy's: Y up, facing −Z (`Transform::forward`): the root of a
    /// [`GtaSkeleton`](crate::plugin::GtaSkeleton), which turns the ped it holds into Bevy's
    /// axes.
    Bevy,
    /// Any other: the rotation from glTF's axes to the character's.
    Custom(Quat),
}

impl CharacterAxes {
    /// The rotation from glTF's axes to the character's.
    pub fn from_gltf(self) -> Quat {
        match self {
            CharacterAxes::Gltf => Quat::IDENTITY,
            // GTA → glTF is `GTA_TO_GLTF`; its inverse brings glTF axes back.
            CharacterAxes::Gta => crate::coords::GTA_TO_GLTF.inverse(),
            // Facing −Z instead of +Z: a half turn about Y.
            CharacterAxes::Bevy => Quat::from_rotation_y(std::f32::consts::PI),
            CharacterAxes::Custom(q) => q.normalize(),
        }
    }

    /// The character's up axis, in its own model space.
    pub fn up(self) -> Vec3 {
        self.from_gltf() * Vec3::Y
    }
}

/// What a [`Retarget`] root's bone names are as humanoid bones: the naming convention found
/// (Mixamo with any prefix, VRM, VRoid, Unreal's mannequin, GTA's own, 3ds Max Biped), what
/// matched, what did not and why, and the resulting map from the game's skeleton. Inserted on the
/// root, and renewed as its bones appear or its [`Retarget`] changes.
#[derive(Component, Debug, Clone, PartialEq)]
pub struct RetargetReport {
    /// The naming convention that matched the most humanoid bones.
    pub preset: BonePreset,
    /// The humanoid bones found (with the index of the name in [`RetargetReport::names`]),
    /// those not found (no name in the convention's spelling), and the names that are no
    /// humanoid bone.
    pub report: MatchReport,
    /// The descendants' names, in hierarchy order.
    pub names: Vec<String>,
    /// Which bone of the character each bone of [`Retarget::game`]'s skeleton drives (GTA name,
    /// character name), the user's corrections applied, in the skeleton's order.
    pub map: Vec<(String, String)>,
    /// Why entries of [`Retarget::bone_map`] were not used.
    pub problems: Vec<String>,
}

impl RetargetReport {
    /// The report for a character's names under a retarget setting.
    pub fn new(retarget: &Retarget, names: Vec<String>) -> Self {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (preset, map) = BoneMap::detect(&refs);
        let report = map.report(&refs);
        let skeleton = retarget.game.skeleton();
        let source_names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
        let (mut pairs, problems) = bone_pairs(&source_names, &refs, &retarget.bone_map);
        pairs.sort_unstable();
        Self {
            preset,
            report,
            map: pairs
                .iter()
                .map(|&(s, t)| (source_names[s].trim().to_owned(), names[t].clone()))
                .collect(),
            problems: problems.iter().map(ToString::to_string).collect(),
            names,
        }
    }
}

/// Counts the `Name`s added anywhere (a glTF scene spawned), so that [`retarget`] and
/// [`report_humanoid_bones`] look at their roots again when it moved since they last did;
/// cheaper than each scanning every named entity (every bone of every character) for
/// `Added<Name>` each frame. Each system keeps the count it last saw: a flag cleared by one of
/// them lost the names added between the two (a scene spawned while `Update` ran), and that
/// character's nodes never became bones.
#[derive(Resource, Default)]
pub(crate) struct NamesAdded(pub(crate) u64);

pub(crate) fn note_new_name(_: On<Add, Name>, mut added: ResMut<NamesAdded>) {
    added.0 = added.0.wrapping_add(1);
}

/// Works out each [`Retarget`] root's [`RetargetReport`] when its hierarchy gains names or its
/// setting changes.
pub(crate) fn report_humanoid_bones(
    mut commands: Commands,
    roots: Query<(Entity, &Retarget)>,
    children: Query<&Children>,
    names: Query<&Name>,
    named: Res<NamesAdded>,
    mut seen: Local<u64>,
    changed_roots: Query<(), Changed<Retarget>>,
) {
    let named = std::mem::replace(&mut *seen, named.0) != named.0;
    if roots.is_empty() || (!named && changed_roots.is_empty()) {
        return;
    }
    for (root, retarget) in &roots {
        let found: Vec<String> = children
            .iter_descendants(root)
            .filter_map(|e| names.get(e).ok())
            .map(|n| n.as_str().to_owned())
            .collect();
        commands
            .entity(root)
            .insert(RetargetReport::new(retarget, found));
    }
}

/// Binds the descendants of every [`Retarget`] root that are not bound yet.
pub(crate) fn retarget(
    mut commands: Commands,
    roots: Query<(
        Entity,
        &Retarget,
        Has<AnimationPlayer>,
        Has<AnimationGraphHandle>,
    )>,
    children: Query<&Children>,
    bones: Query<(Option<&Name>, Option<&GtaBoneId>, &Transform), Without<RigBone>>,
    named: Res<NamesAdded>,
    mut seen: Local<u64>,
    added_roots: Query<(), Added<Retarget>>,
) {
    let named = std::mem::replace(&mut *seen, named.0) != named.0;
    if roots.is_empty() || (!named && added_roots.is_empty()) {
        return;
    }
    for (root, retarget, has_player, has_graph) in &roots {
        if !has_player {
            commands.entity(root).insert(AnimationPlayer::default());
        }
        let skeleton = retarget.game.skeleton();
        for entity in children.iter_descendants(root) {
            let Ok((name, id, transform)) = bones.get(entity) else {
                continue;
            };
            let name = name.map(|n| n.as_str().to_owned()).unwrap_or_default();
            let canonical = match id {
                Some(GtaBoneId(id)) => skeleton
                    .bones
                    .iter()
                    .find(|b| b.id == Some(*id))
                    .and_then(|b| b.canonical),
                None => canonical_bone_id(&bone_key(&name)),
            };
            if canonical.is_none() && name.is_empty() {
                continue;
            }
            let target = target_for(canonical, &name);
            let mut bone = commands.entity(entity);
            bone.insert((
                target,
                RigBone {
                    index: None,
                    rest: *transform,
                    target,
                },
            ));
            // Bevy's player drives it only while the root has a graph (`give_bones_to_graph`).
            if has_graph {
                bone.insert(AnimatedBy(root));
            }
        }
    }
}

/// The tracks of the playing clip that drive no bone of this character ("name (id N)" each);
/// also logged once as a warning.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct UnmatchedTracks(pub Vec<String>);

/// Reports, once per character and clip, the tracks of a playing clip that drive no bone.
pub(crate) fn warn_unmatched(
    mut commands: Commands,
    players: Query<(Entity, &PlayAnimation)>,
    children: Query<&Children>,
    bones: Query<&RigBone>,
    clips: LoadedClips,
    mut reported: Local<HashSet<(Entity, AssetId<RigClip>)>>,
) {
    for (entity, play) in &players {
        let key = (entity, play.clip.id());
        if reported.contains(&key) {
            continue;
        }
        let Some(info) = clips.get(play.clip.id()) else {
            continue;
        };
        let present: HashSet<AnimationTargetId> = children
            .iter_descendants(entity)
            .filter_map(|e| bones.get(e).ok())
            .map(|b| b.target)
            .collect();
        if present.is_empty() {
            // The hierarchy is not bound yet (a scene still spawning).
            continue;
        }
        let missing: Vec<&str> = info
            .tracks
            .iter()
            .filter(|(t, _)| !present.contains(t))
            .map(|(_, d)| d.as_str())
            .collect();
        if !missing.is_empty() {
            warn!(
                "{entity}: {} tracks of the clip match no bone and are ignored: {}",
                missing.len(),
                missing.join(", ")
            );
        }
        commands.entity(entity).insert(UnmatchedTracks(
            missing.iter().map(|s| s.to_string()).collect(),
        ));
        reported.insert(key);
    }
}
