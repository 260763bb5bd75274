//! The DAN wing: the `.dan` loader ([`Dan`] assets, the clip labelled `Clip0`), its settings,
//! and [`FlatSkeleton`], the bones a DAN clip drives.

mod asset;
mod loader;
mod skeleton;

pub use asset::{Dan, DanAssetLabel};
pub use loader::{DanLoadError, DanLoader, DanLoaderSettings};
pub use skeleton::FlatSkeleton;

use crate::plugin::SkeletalPlugin;
use bevy::prelude::*;

/// Loads `.dan` files ([`Dan`]) and spawns [`FlatSkeleton`]s for them. Needs `AssetPlugin` and
/// `AnimationPlugin`; adds [`crate::plugin::SkeletalPlugin`].
pub struct DanPlugin;

impl Plugin for DanPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(SkeletalPlugin)
            .init_asset::<Dan>()
            .register_asset_loader(DanLoader)
            .register_type::<FlatSkeleton>()
            .add_observer(skeleton::spawn_flat_skeleton);
    }
}
