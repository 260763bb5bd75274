//! What a game that plays rigplay's formats usually needs: `use rigplay::prelude::*;`.

pub use crate::animation::layers::{BoneMask, Layer, LayerFlags};
pub use crate::animation::{BonePose, Clip, PlayMode, WrapMode};
pub use crate::skeleton::GtaGame;

#[cfg(feature = "bevy")]
pub use crate::plugin::{
    Anie, AnieDisplay, AnieFrames, AniePlugin, AnieRig, CharacterAxes, ClipLayers, CrowdCharacter,
    CrowdPose, Dan, DanAssetLabel, DanPlugin, Dff, DffPlugin, FlatSkeleton, GtaModel, GtaSkeleton,
    Ifp, IfpAssetLabel, IfpPlugin, LayerFinished, LayerLooped, LayerRemoved, LayerReport,
    PlayAnimation, Playback, PlaybackFinished, PlaybackLooped, PlaybackPlugin, Retarget,
    RetargetMode, RetargetReport, RigClip, RootMotion, RootMotionMode, SkeletalClip,
    SkeletalPlugin, SkeletonGizmos,
};
