//! The IFP wing: the `.ifp` loader ([`Ifp`] assets, clips labelled by index and name), its
//! settings, and the built-in GTA ped skeletons ([`GtaSkeleton`]).

mod asset;
mod loader;
mod skeleton;

pub use asset::{Ifp, IfpAssetLabel, IfpClipAsset};
pub use loader::{IfpLoadError, IfpLoader, IfpLoaderSettings};
pub use skeleton::GtaSkeleton;

use crate::plugin::SkeletalPlugin;
use bevy::prelude::*;

/// Loads `.ifp` files and drives GTA skeletons ([`GtaSkeleton`]). Needs `AssetPlugin` and
/// `AnimationPlugin` (both in `DefaultPlugins`); adds [`crate::plugin::SkeletalPlugin`].
pub struct IfpPlugin;

impl Plugin for IfpPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(SkeletalPlugin)
            .init_asset::<Ifp>()
            .register_asset_loader(IfpLoader)
            .add_systems(Update, asset::drop_clips_gone_from_files)
            .register_type::<GtaSkeleton>()
            .add_observer(skeleton::spawn_skeleton);
    }
}
