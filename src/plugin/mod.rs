//! Bevy integration (the default `bevy` feature).
//!
//! * [`PlaybackPlugin`]: [`Playback`], the playhead of every rig (2D or 3D), advanced by
//!   virtual time; it knows no format.
//! * [`SkeletalPlugin`], the wing IFP and DAN share: the [`RigClip`] asset the loaders make,
//!   [`SkeletalClip`] (the clip a character plays on its [`Playback`], with cross-fades),
//!   [`PlayAnimation`] for Bevy's own `AnimationPlayer`, [`Retarget`] onto any named hierarchy,
//!   [`RootMotion`], and skeleton gizmos ([`SkeletonGizmos`]).
//! * [`IfpPlugin`]: `.ifp` files as [`Ifp`] assets with one labelled `AnimationClip` per clip
//!   (`"anims/ped.ifp#walk_civi"` by name, `"…#Clip0"` by index: [`IfpAssetLabel`]), and the
//!   built-in GTA ped skeletons ([`GtaSkeleton`]).
//! * [`DanPlugin`]: `.dan` files ([`Dan`], its clip labelled `Clip0`) and [`FlatSkeleton`]s.
//! * [`GltfClips`] (the `gltf` feature): the animations Bevy's glTF loader loads, made
//!   [`RigClip`]s with the file's skin as their source skeleton, to play on a GTA ped through
//!   [`Retarget`].
//! * [`DffPlugin`]: GTA's RenderWare models (`.dff`, textured from `.txd`) as [`Dff`]
//!   assets, spawned by [`GtaModel`] with bones IFP clips drive, or as scenes (`#Scene0`).
//!
//! Coordinates: IFP clips keep GTA's Z-up local transforms; the one conversion to Bevy's Y-up is a
//! rotation on the skeleton's basis entity, between the character root and its first bone
//! ([`crate::coords::GTA_TO_BEVY`]). DAN clips are converted to Bevy's axes key by key when
//! loaded (a mirror, which no root rotation can do; [`crate::coords::dan_quat_to_bevy`]).

// Bevy systems take many parameters of long types by nature.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]

#[cfg(feature = "anie")]
mod anie;
#[cfg(feature = "dff")]
mod crowd_draw;
mod dan;
#[cfg(feature = "dff")]
mod dff;
#[cfg(feature = "gltf")]
mod gltf;
mod ifp;
mod load;
pub(crate) mod meta;
mod playback;
mod skeletal;

#[cfg(feature = "anie")]
pub use anie::{
    Anie, AnieAssetError, AnieAssetLabel, AnieCardMaterial, AnieCardMaterial3d, AnieCell,
    AnieDisplay, AnieDrawList, AnieDrawStats, AnieFrames, AnieLoadError, AnieLoader,
    AnieLoaderSettings, AniePlugin, AnieRenderSettings, AnieRenderStats, AnieRig, AnieSystems,
    CardCell, CardGrid, CellDraw, card_mesh,
};
#[cfg(feature = "dff")]
pub use crowd_draw::{
    ATTRIBUTE_CROWD_JOINT_INDEX, ATTRIBUTE_CROWD_JOINT_WEIGHT, CrowdDrawPlugin, CrowdDrawSettings,
    CrowdMaterial, CrowdSkin,
};
pub use dan::{
    Dan, DanAssetLabel, DanLoadError, DanLoader, DanLoaderSettings, DanPlugin, FlatSkeleton,
};
#[cfg(feature = "dff")]
pub use dff::{
    CrowdModel, Dff, DffAssetLabel, DffAtomic, DffClump, DffFrame, DffLoadError, DffLoader,
    DffLoaderSettings, DffPlugin, DffSkin, GtaModel,
};
#[cfg(feature = "gltf")]
pub use gltf::{CrowdGltfModel, CrowdRigReport, GltfClipError, GltfClips, GltfRigClip};
pub use ifp::{
    GtaSkeleton, Ifp, IfpAssetLabel, IfpClipAsset, IfpLoadError, IfpLoader, IfpLoaderSettings,
    IfpPlugin, Motion, MotionError, MotionLoadError, MotionLoader, MotionLoaderSettings,
};
pub use load::AssetLoadError;
pub use meta::{MetaProblem, MetaProblems};
pub use playback::{
    Playback, PlaybackFinished, PlaybackLooped, PlaybackPlugin, PlaybackStep, PlaybackSystems,
};
pub use skeletal::{
    BoneLink, CharacterAxes, ClipInfo, ClipLayers, ClipSettings, CrowdCharacter, CrowdLod,
    CrowdPose, CrowdViewer, GtaBoneId, KeepCrowdPose, LayerFinished, LayerLooped, LayerRemoved,
    LayerReport, PlayAnimation, PlayingNode, Retarget, RetargetMode, RetargetReport, RigBone,
    RigClip, RootMotion, RootMotionMode, SkeletalClip, SkeletalPlugin, SkeletonBones,
    UnmatchedTracks, animation_clip, bone_target_id, named_bone_target_id,
};
#[cfg(any(feature = "dff", feature = "gltf"))]
pub use skeletal::{CrowdSkinPose, SkinPalette};
#[cfg(feature = "gizmos")]
pub use skeletal::{SkeletonGizmoGroup, SkeletonGizmos};

/// Makes a spawned entity part of Bevy's visibility hierarchy (so that meshes parented to it
/// show): `Visibility` with the `render` feature, nothing without it.
#[cfg(feature = "render")]
pub(crate) fn visible() -> bevy::prelude::Visibility {
    bevy::prelude::Visibility::default()
}

/// Makes a spawned entity part of Bevy's visibility hierarchy: nothing without the `render`
/// feature.
#[cfg(not(feature = "render"))]
pub(crate) fn visible() {}

pub use crate::animation::PlayMode;
pub use crate::animation::layers::{BoneMask, Layer, LayerFlags};
pub use crate::skeleton::GtaGame;
