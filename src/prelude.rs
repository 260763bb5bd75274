//! What a game that plays rigplay's formats usually needs: `use rigplay::prelude::*;`.

pub use crate::animation::layers::{BoneMask, Layer, LayerFlags};
pub use crate::animation::{BonePose, Clip, PlayMode, WrapMode};
pub use crate::skeleton::GtaGame;

// Plugins.
#[cfg(feature = "anie")]
pub use crate::plugin::AniePlugin;
#[cfg(feature = "dff")]
pub use crate::plugin::DffPlugin;
#[cfg(feature = "bevy")]
pub use crate::plugin::{DanPlugin, IfpPlugin, PlaybackPlugin, SkeletalPlugin};

// Assets, their labels and their loaders' settings.
#[cfg(feature = "anie")]
pub use crate::plugin::{Anie, AnieLoaderSettings};
#[cfg(feature = "bevy")]
pub use crate::plugin::{
    ClipSettings, Dan, DanAssetLabel, DanLoaderSettings, Ifp, IfpAssetLabel, IfpLoaderSettings,
    Motion, MotionLoaderSettings, RigClip, RootMotionMode,
};
#[cfg(feature = "dff")]
pub use crate::plugin::{Dff, DffAssetLabel, DffLoaderSettings};

// glTF animations as rigplay clips.
#[cfg(feature = "gltf")]
pub use crate::plugin::{CrowdGltfModel, CrowdRigReport, GltfClips};

// Components and resources.
#[cfg(any(feature = "dff", feature = "gltf"))]
pub use crate::plugin::CrowdSkinPose;
#[cfg(feature = "gizmos")]
pub use crate::plugin::SkeletonGizmos;
#[cfg(feature = "anie")]
pub use crate::plugin::{AnieDisplay, AnieRenderSettings, AnieRig};
#[cfg(feature = "bevy")]
pub use crate::plugin::{
    CharacterAxes, ClipLayers, CrowdCharacter, CrowdLod, CrowdPose, CrowdViewer, FlatSkeleton,
    GtaSkeleton, KeepCrowdPose, PlayAnimation, Playback, Retarget, RetargetMode, RootMotion,
    SkeletalClip,
};
#[cfg(feature = "dff")]
pub use crate::plugin::{CrowdDrawPlugin, CrowdModel, GtaModel};

// Events and reports.
#[cfg(feature = "anie")]
pub use crate::plugin::AnieFrames;
#[cfg(feature = "bevy")]
pub use crate::plugin::{
    LayerFinished, LayerLooped, LayerRemoved, LayerReport, PlaybackFinished, PlaybackLooped,
    RetargetReport, UnmatchedTracks,
};
