//! The `.dan` asset loader (a [`Dan`] asset and its labelled `AnimationClip`) and
//! [`FlatSkeleton`], the bones a DAN clip drives.

use super::asset::{ClipSettings, animation_clip};
use super::retarget::{ClipInfo, ClipRegistry, named_bone_target_id};
use super::skeleton::{RigBone, SkeletonBones};
use crate::anim::Clip;
use crate::formats::dan::{DanClipOptions, DanError, DanFile};
use crate::skeleton::Skeleton;
use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, AssetPath, LoadContext};
use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A loaded `.dan` file: the file's data, its clip in the engine-neutral model (Bevy axes) and
/// the handle of its labelled `AnimationClip`.
#[derive(Asset, TypePath, Debug)]
pub struct Dan {
    /// Everything the file holds, as stored (see [`crate::formats::dan`]).
    pub file: DanFile,
    /// The clip in Bevy's axes, positions times [`DanLoaderSettings::scale`].
    pub clip: Arc<Clip>,
    /// The clip as a Bevy `AnimationClip`, labelled `Clip0` ([`DanAssetLabel::Clip`]).
    pub handle: Handle<AnimationClip>,
    /// The bone names the tracks target, one per bone of the file.
    pub bone_names: Vec<String>,
    /// The animation target id of each track.
    pub targets: Vec<AnimationTargetId>,
    /// What the reader tolerated, one line each.
    pub warnings: Vec<String>,
    pub settings: DanLoaderSettings,
}

impl Dan {
    /// A [`FlatSkeleton`] with this file's bones, to spawn for playing its clip.
    pub fn skeleton(&self) -> FlatSkeleton {
        FlatSkeleton {
            names: self.bone_names.clone(),
            links: self.settings.bone_links.clone(),
        }
    }
}

/// Labels of a `.dan` file's sub-assets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DanAssetLabel {
    /// The file's one clip: `"arm.dan#Clip0"`, the label of an `.ifp` file's first clip, so that
    /// code can treat both alike.
    Clip,
}

impl std::fmt::Display for DanAssetLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DanAssetLabel::Clip => f.write_str("Clip0"),
        }
    }
}

impl DanAssetLabel {
    /// The full asset path of this label in the file at `path`.
    pub fn from_asset(&self, path: impl Into<AssetPath<'static>>) -> AssetPath<'static> {
        path.into().with_label(self.to_string())
    }
}

/// Settings of the `.dan` loader, set in a `.meta` file next to the asset:
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::dan::DanLoader",
///         settings: (scale: 0.01, bone_names: ["Bip01", "Bip01 Spine"], looping: true),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DanLoaderSettings {
    /// Multiplies positions. DAN files are in the Max scene's units (often centimetres or
    /// inches); 0.01 turns centimetres into Bevy's metres; 1 keeps the file's units.
    pub scale: f32,
    /// Bone names by index (the file stores none); bones beyond the list are `bone_<index>`.
    /// Names are what the clip's targets match, on a [`FlatSkeleton`] or a [`super::Retarget`]
    /// hierarchy.
    pub bone_names: Vec<String>,
    /// Whether the clip is meant to loop (else to hold its last pose): recorded in the clip's
    /// settings for players to follow, as the preview does; a [`super::Playback`]'s own mode
    /// decides how it plays.
    pub looping: bool,
    /// For drawing only: the bone each bone hangs from in the Max scene (the file does not
    /// say), so that skeleton gizmos draw a line between them. Playback ignores it.
    pub bone_links: Vec<Option<usize>>,
}

impl Default for DanLoaderSettings {
    fn default() -> Self {
        Self {
            scale: 1.0,
            bone_names: Vec::new(),
            looping: true,
            bone_links: Vec::new(),
        }
    }
}

/// Why a `.dan` asset did not load. The message names the byte offset, bone, track and key.
#[derive(Debug, thiserror::Error)]
pub enum DanLoadError {
    #[error("could not read the file: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Format(#[from] DanError),
}

/// The `.dan` asset loader. It records its clip in the [`ClipRegistry`] resource, so that
/// [`super::Playback`] plays it.
#[derive(TypePath)]
pub struct DanLoader {
    pub(crate) registry: ClipRegistry,
}

impl AssetLoader for DanLoader {
    type Asset = Dan;
    type Settings = DanLoaderSettings;
    type Error = DanLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &DanLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Dan, DanLoadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let read = DanFile::read(&bytes)?;
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        for w in &warnings {
            warn!("{}: {w}", load_context.path());
        }
        let options = DanClipOptions {
            scale: settings.scale,
            names: settings.bone_names.clone(),
        };
        let name = load_context
            .path()
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let clip = Arc::new(read.file.to_clip(&name, &options));
        let bone_names: Vec<String> = (0..read.file.bones.len())
            .map(|i| options.bone_name(i))
            .collect();
        let targets: Vec<AnimationTargetId> =
            bone_names.iter().map(|n| named_bone_target_id(n)).collect();
        // Names are matched after normalisation and GTA's alias table: two that meet would drive
        // one bone with two tracks.
        for (i, t) in targets.iter().enumerate() {
            if let Some(j) = targets[..i].iter().position(|u| u == t) {
                warn!(
                    "{}: bones {j} ({:?}) and {i} ({:?}) have names that match the same bone; \
                     give them distinct names in the .meta's bone_names",
                    load_context.path(),
                    bone_names[j],
                    bone_names[i]
                );
            }
        }
        if !(settings.scale.is_finite() && settings.scale != 0.0) {
            warn!(
                "{}: scale {} is not a usable factor; positions are kept in the file's units",
                load_context.path(),
                settings.scale
            );
        }
        let clip_settings = ClipSettings {
            looping: settings.looping,
            ..ClipSettings::default()
        };
        // No skeleton: DAN keys are model-space, there is no root whose motion to extract.
        let no_skeleton = Skeleton {
            name: String::new(),
            bones: Vec::new(),
        };
        let animation = animation_clip(&clip, &no_skeleton, &targets, clip_settings.root_motion);
        let handle = load_context.add_labeled_asset(DanAssetLabel::Clip.to_string(), animation);
        self.registry.insert(
            handle.id(),
            Arc::new(ClipInfo {
                clip: clip.clone(),
                settings: clip_settings,
                skeleton: None,
                tracks: targets.iter().copied().zip(bone_names.clone()).collect(),
                root_track: None,
            }),
        );
        Ok(Dan {
            file: read.file,
            clip,
            handle,
            bone_names,
            targets,
            warnings,
            settings: settings.clone(),
        })
    }

    fn extensions(&self) -> &[&str] {
        &["dan"]
    }
}

/// Put on an entity to give it one child bone per name, all directly under it (DAN keys are
/// model-space: each bone's key is its whole transform in the model, so no hierarchy is needed
/// to play them), named as given, at the identity. Like [`super::GtaSkeleton`], the entity gets
/// an `AnimationPlayer` and [`SkeletonBones`]; [`super::Playback`] and [`super::PlayAnimation`]
/// play clips on it. [`Dan::skeleton`] gives the one a file needs.
#[derive(Component, Debug, Clone, PartialEq, Eq, Default, Reflect)]
#[require(Transform, Visibility)]
pub struct FlatSkeleton {
    pub names: Vec<String>,
    /// For drawing only: per bone, the bone it is drawn linked to ([`BoneLink`]).
    pub links: Vec<Option<usize>>,
}

impl FlatSkeleton {
    /// `count` bones named `bone_0` … `bone_<count − 1>`, as a DAN file without names gives.
    pub fn numbered(count: usize) -> Self {
        Self {
            names: (0..count).map(|i| format!("bone_{i}")).collect(),
            links: Vec::new(),
        }
    }
}

/// Draws a gizmo line from this bone to another one that is not its parent entity (the bones
/// of a [`FlatSkeleton`] are all children of the character).
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoneLink(pub Entity);

pub(crate) fn spawn_flat_skeleton(
    add: On<Add, FlatSkeleton>,
    skeletons: Query<(&FlatSkeleton, Has<AnimationPlayer>, Has<Name>)>,
    mut commands: Commands,
) {
    let root = add.event_target();
    let Ok((skeleton, has_player, has_name)) = skeletons.get(root) else {
        return;
    };
    let mut entities = Vec::with_capacity(skeleton.names.len());
    for (i, name) in skeleton.names.iter().enumerate() {
        let target = named_bone_target_id(name);
        entities.push(
            commands
                .spawn((
                    Name::new(name.clone()),
                    Transform::IDENTITY,
                    Visibility::default(),
                    RigBone {
                        index: Some(i),
                        rest: Transform::IDENTITY,
                        target,
                    },
                    target,
                    AnimatedBy(root),
                    ChildOf(root),
                ))
                .id(),
        );
    }
    for (i, link) in skeleton.links.iter().enumerate() {
        if let (Some(&from), Some(&to)) = (entities.get(i), link.and_then(|l| entities.get(l))) {
            commands.entity(from).insert(BoneLink(to));
        }
    }
    let mut root_commands = commands.entity(root);
    root_commands.insert(SkeletonBones(entities));
    if !has_player {
        root_commands.insert(AnimationPlayer::default());
    }
    if !has_name {
        root_commands.insert(Name::new("dan skeleton"));
    }
}
