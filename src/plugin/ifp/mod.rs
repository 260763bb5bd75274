//! The IFP wing: the `.ifp` loader ([`Ifp`] assets, clips labelled by index and name), its
//! settings, the motion loader (animation made elsewhere retargeted onto a GTA ped as it
//! loads: [`Motion`]), and the built-in GTA ped skeletons ([`GtaSkeleton`]).

mod asset;
mod loader;
mod motion;
mod skeleton;

pub use asset::{Ifp, IfpAssetLabel, IfpClipAsset};
pub use loader::{IfpLoadError, IfpLoader, IfpLoaderSettings};
pub use motion::{Motion, MotionError, MotionLoadError, MotionLoader, MotionLoaderSettings};
pub use skeleton::GtaSkeleton;

use crate::plugin::SkeletalPlugin;
use bevy::prelude::*;

/// Loads `.ifp` files, and motion files retargeted onto a GTA ped ([`Motion`]: `.bvh`, `.vrma`,
/// and glTF files loaded as `Handle<Motion>`), and drives GTA skeletons ([`GtaSkeleton`]). Needs `AssetPlugin` and
/// `AnimationPlugin` (both in `DefaultPlugins`); adds [`crate::plugin::SkeletalPlugin`].
pub struct IfpPlugin;

impl Plugin for IfpPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(SkeletalPlugin)
            .init_asset::<Ifp>()
            .register_asset_loader(IfpLoader)
            .init_asset::<Motion>()
            .register_asset_loader(MotionLoader)
            // (Skipped but in a frame a file changes: a system that runs is a task for a
            // thread, `benches/playback.rs`, group `empty app`.)
            .add_systems(
                Update,
                asset::drop_clips_gone_from_files.run_if(on_message::<AssetEvent<Ifp>>),
            )
            .register_type::<GtaSkeleton>()
            .add_observer(skeleton::spawn_skeleton);
    }
}
