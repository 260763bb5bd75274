//! The DFF wing: the `.dff` loader ([`Dff`] assets: meshes, materials, the textures of the
//! `.txd` beside the model or named in its settings, a scene per clump) and [`GtaModel`], which
//! spawns a model whose bones IFP clips drive.

mod asset;
mod crowd_rig;
mod crowd_skin;
mod loader;
mod spawn;

pub use asset::{Dff, DffAssetLabel, DffAtomic, DffClump, DffFrame, DffSkin};
pub use crowd_skin::CrowdModel;
pub(crate) use crowd_skin::{bind, bone_frames, frame_joint, frame_model};
pub use loader::{DffLoadError, DffLoader, DffLoaderSettings};
pub use spawn::GtaModel;

use crate::plugin::PlaybackSystems;
use crate::plugin::skeletal::{SkeletalPlugin, worn_or_model_changed};
use bevy::prelude::*;

/// Loads `.dff` models (with their `.txd` textures) and spawns them ([`GtaModel`]). Needs
/// `AssetPlugin`, `AnimationPlugin` and, to draw, `PbrPlugin` (all in `DefaultPlugins`); adds
/// [`crate::plugin::SkeletalPlugin`], so [`crate::plugin::IfpPlugin`] clips play on the
/// models.
pub struct DffPlugin;

impl Plugin for DffPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(SkeletalPlugin);
        app.init_asset::<Dff>()
            .register_asset_loader(DffLoader)
            .register_type::<GtaModel>()
            // What the scenes hold, for the scene spawner (the PBR plugin registers it too).
            .register_type::<MeshMaterial3d<StandardMaterial>>()
            // Each system is skipped where it has nothing to do (a system that runs is a task
            // for a thread, about 18 µs: `docs/performance.md`). Those that remember what they
            // made of a model run too in a frame a model changes or goes, to forget it.
            .add_systems(
                Update,
                spawn::spawn_models.run_if(any_with_component::<GtaModel>),
            )
            .add_systems(
                PostUpdate,
                (
                    crowd_rig::rig_dff_crowds
                        .run_if(worn_or_model_changed::<CrowdModel, Dff>)
                        .in_set(PlaybackSystems::Prepare)
                        .after(bevy::asset::AssetEventSystems)
                        .before(crate::plugin::skeletal::bind_crowds),
                    crowd_skin::pose_crowd_skins
                        .run_if(worn_or_model_changed::<crate::plugin::CrowdSkinPose, Dff>)
                        .after(PlaybackSystems::Apply),
                ),
            );
    }
}
