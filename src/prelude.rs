//! What a game that plays rigplay's formats usually needs: `use rigplay::prelude::*;`.

pub use crate::animation::layers::{BoneMask, Layer, LayerFlags};
pub use crate::animation::{BonePose, Clip, PlayMode, WrapMode};
pub use crate::skeleton::GtaGame;

#[cfg(feature = "bevy")]
pub use crate::plugin::{
    // Assets and their labels.
    Anie,
    // Events and reports.
    AnieDisplay,
    AnieFrames,
    // Settings.
    AnieLoaderSettings,
    // Plugins.
    AniePlugin,
    AnieRenderSettings,
    // Components.
    AnieRig,
    CharacterAxes,
    ClipLayers,
    ClipSettings,
    CrowdCharacter,
    CrowdPose,
    Dan,
    DanAssetLabel,
    DanLoaderSettings,
    DanPlugin,
    Dff,
    DffAssetLabel,
    DffLoaderSettings,
    DffPlugin,
    FlatSkeleton,
    GtaModel,
    GtaSkeleton,
    Ifp,
    IfpAssetLabel,
    IfpLoaderSettings,
    IfpPlugin,
    LayerFinished,
    LayerLooped,
    LayerRemoved,
    LayerReport,
    PlayAnimation,
    Playback,
    PlaybackFinished,
    PlaybackLooped,
    PlaybackPlugin,
    Retarget,
    RetargetMode,
    RetargetReport,
    RigClip,
    RootMotion,
    RootMotionMode,
    SkeletalClip,
    SkeletalPlugin,
    SkeletonGizmos,
    UnmatchedTracks,
};
