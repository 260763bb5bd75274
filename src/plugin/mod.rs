//! Bevy integration (the default `bevy` feature).
//!
//! * [`IfpPlugin`]: an asset loader for `.ifp` files giving an [`Ifp`] asset and one labelled
//!   `AnimationClip` per clip (`"anims/ped.ifp#walk_civi"` by name, `"…#Clip0"` by index, see
//!   [`IfpAssetLabel`]); built-in GTA ped skeletons ([`GtaSkeleton`]) drawn with gizmos;
//!   retargeting onto any named hierarchy ([`Retarget`]); root motion ([`RootMotion`]);
//!   and [`PlayAnimation`], the smallest way to play a clip with Bevy's `AnimationPlayer`.
//! * [`DanPlugin`]: `.dan` files ([`Dan`], its clip labelled `Clip0`) and [`FlatSkeleton`]s.
//! * [`PlaybackPlugin`], which both add: [`Playback`], one system that plays every character.
//!
//! Coordinates: IFP clips keep GTA's Z-up local transforms; the one conversion to Bevy's Y-up is a
//! rotation on the skeleton's basis entity, between the character root and its first bone
//! ([`crate::coords::GTA_TO_BEVY`]). DAN clips are converted to Bevy's axes key by key when
//! loaded (a mirror, which no root rotation can do; [`crate::coords::dan_quat_to_bevy`]).

// Bevy systems take many parameters of long types by nature.
#![allow(clippy::type_complexity, clippy::too_many_arguments)]

mod asset;
mod dan;
mod playback;
mod retarget;
mod root_motion;
mod skeleton;

pub use asset::{
    ClipSettings, Ifp, IfpAssetLabel, IfpClipAsset, IfpLoadError, IfpLoader, IfpLoaderSettings,
    RootMotionMode, SkeletonKind,
};
pub use dan::{
    BoneLink, Dan, DanAssetLabel, DanLoadError, DanLoader, DanLoaderSettings, FlatSkeleton,
};
pub use playback::{PlayMode, Playback, PlaybackFinished, PlaybackLooped, blend, playback_clip};
pub use retarget::{
    ClipInfo, ClipRegistry, GtaBoneId, Retarget, UnmatchedTracks, bone_target_id,
    named_bone_target_id,
};
pub use root_motion::RootMotion;
pub use skeleton::{
    GtaSkeleton, PlayAnimation, PlayingNode, RigBone, SkeletonBones, SkeletonGizmos,
};

use crate::anim::BonePose;
use bevy::prelude::*;

/// A bone's local transform as Bevy's `Transform` (the same three parts).
impl From<BonePose> for Transform {
    fn from(p: BonePose) -> Self {
        Transform {
            translation: p.translation,
            rotation: p.rotation,
            scale: p.scale,
        }
    }
}

/// A `Transform` as the engine-neutral local pose.
impl From<Transform> for BonePose {
    fn from(t: Transform) -> Self {
        BonePose {
            rotation: t.rotation,
            translation: t.translation,
            scale: t.scale,
        }
    }
}

/// What every rigplay format shares: the [`ClipRegistry`], [`Playback`] (one system for every
/// character), [`PlayAnimation`], [`Retarget`], root motion, and skeleton gizmos. [`IfpPlugin`]
/// and [`DanPlugin`] add it; adding it again (before or after them) does nothing more. Needs
/// `AnimationPlugin` (in `DefaultPlugins`); draws skeletons when `GizmoPlugin` is present.
pub struct PlaybackPlugin;

/// Marks that [`PlaybackPlugin`] is built, so that adding it twice adds its systems once.
#[derive(Resource)]
struct PlaybackInstalled;

impl Plugin for PlaybackPlugin {
    fn is_unique(&self) -> bool {
        false
    }

    fn build(&self, app: &mut App) {
        if app.world().contains_resource::<PlaybackInstalled>() {
            return;
        }
        app.insert_resource(PlaybackInstalled)
            .init_resource::<ClipRegistry>()
            .init_resource::<SkeletonGizmos>()
            .init_resource::<playback::BonesChanged>()
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

/// The registry [`PlaybackPlugin`] holds, adding the plugin first (it builds once).
fn shared_registry(app: &mut App) -> ClipRegistry {
    app.add_plugins(PlaybackPlugin);
    app.world().resource::<ClipRegistry>().clone()
}

/// Loads `.ifp` files and drives GTA skeletons ([`GtaSkeleton`]). Needs `AssetPlugin` and
/// `AnimationPlugin` (both in `DefaultPlugins`); adds [`PlaybackPlugin`].
pub struct IfpPlugin;

impl Plugin for IfpPlugin {
    fn build(&self, app: &mut App) {
        let registry = shared_registry(app);
        app.init_asset::<Ifp>()
            .register_asset_loader(IfpLoader { registry })
            .add_observer(skeleton::spawn_skeleton);
    }
}

/// Loads `.dan` files ([`Dan`]) and spawns [`FlatSkeleton`]s for them. Needs `AssetPlugin` and
/// `AnimationPlugin`; adds [`PlaybackPlugin`].
pub struct DanPlugin;

impl Plugin for DanPlugin {
    fn build(&self, app: &mut App) {
        let registry = shared_registry(app);
        app.init_asset::<Dan>()
            .register_asset_loader(DanLoader { registry })
            .add_observer(dan::spawn_flat_skeleton);
    }
}
