//! Bevy integration (the default `bevy` feature).
//!
//! * [`IfpPlugin`]: an asset loader for `.ifp` files giving an [`Ifp`] asset and one labelled
//!   `AnimationClip` per clip (`"anims/ped.ifp#walk_civi"` by name, `"…#Clip0"` by index, see
//!   [`IfpAssetLabel`]); built-in GTA ped skeletons ([`GtaSkeleton`]) drawn with gizmos;
//!   retargeting onto any named hierarchy ([`Retarget`]); root motion ([`RootMotion`]);
//!   and [`PlayAnimation`], the smallest way to play a clip with Bevy's `AnimationPlayer`.
//!
//! Coordinates: clips keep GTA's Z-up local transforms; the one conversion to Bevy's Y-up is a
//! rotation on the skeleton's basis entity, between the character root and its first bone
//! ([`crate::coords::GTA_TO_BEVY`]).

// Bevy systems take many parameters of long types by nature.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]

mod asset;
mod playback;
mod retarget;
mod root_motion;
mod skeleton;

pub use asset::{
    ClipSettings, Ifp, IfpAssetLabel, IfpClipAsset, IfpLoadError, IfpLoader, IfpLoaderSettings,
    RootMotionMode, SkeletonKind,
};
pub use playback::{PlayMode, Playback, PlaybackFinished, PlaybackLooped, blend, playback_clip};
pub use retarget::{ClipInfo, ClipRegistry, GtaBoneId, Retarget, UnmatchedTracks, bone_target_id};
pub use root_motion::RootMotion;
pub use skeleton::{
    GtaSkeleton, PlayAnimation, PlayingNode, RigBone, SkeletonBones, SkeletonGizmos,
};

use bevy::prelude::*;

/// Loads `.ifp` files and drives GTA skeletons. Needs `AssetPlugin` and `AnimationPlugin`
/// (both in `DefaultPlugins`); draws skeletons when `GizmoPlugin` is present.
pub struct IfpPlugin;

impl Plugin for IfpPlugin {
    fn build(&self, app: &mut App) {
        let registry = ClipRegistry::default();
        app.init_asset::<Ifp>()
            .register_asset_loader(IfpLoader {
                registry: registry.clone(),
            })
            .insert_resource(registry)
            .init_resource::<SkeletonGizmos>()
            .init_resource::<playback::BonesChanged>()
            .add_observer(skeleton::spawn_skeleton)
            .add_observer(playback::note_new_bone)
            .add_systems(
                Update,
                (
                    retarget::forget_unloaded_clips,
                    retarget::retarget,
                    skeleton::start_animations,
                    retarget::warn_unmatched,
                )
                    .chain(),
            )
            .add_systems(
                PostUpdate,
                (
                    root_motion::extract_root_motion
                        .after(bevy::app::AnimationSystems)
                        .before(TransformSystems::Propagate),
                    playback::advance_and_sample
                        .after(bevy::app::AnimationSystems)
                        .before(TransformSystems::Propagate),
                    (skeleton::draw_skeletons, skeleton::place_bone_names)
                        .after(TransformSystems::Propagate),
                ),
            );
    }
}
