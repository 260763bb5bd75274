//! [`AniePlugin`]: AnimeEffects projects (`.anie`) as assets, drawn by the GPU exactly as
//! AnimeEffects draws them, driven by [`Playback`](crate::plugin::Playback).
//!
//! Each rig is drawn offscreen into a cell of a shared page (an `Rgba8Unorm` texture holding
//! AnimeEffects' raw framebuffer) by one layer pipeline that does every blend mode against a
//! copy of the destination, the clipping masks, 8-bit opacity, depth order, HSV and bilinear
//! texels with a transparent border ([`crate::anie::program`] is what it replays). The cell is
//! then shown on a premultiplied-alpha quad in 2D, on a plane in 3D, or left to the user.
//!
//! Per frame, only visible rigs whose frame changed are drawn; rigs at the same (project,
//! frame, scale) share one evaluation; evaluations run in parallel on the compute threads;
//! every draw of a page goes through shared buffers, in as many passes as the rig with the most
//! barriers needs.

mod asset;
mod card;
mod draw;
mod loader;
mod render;
mod rig;

pub use asset::{Anie, AnieAssetLabel};
pub use card::{AnieCardMaterial, AnieCardMaterial3d, CardCell, CardGrid, card_mesh};
pub use draw::{AnieDrawList, AnieDrawStats, AnieRenderSettings, CellDraw};
pub use loader::{AnieAssetError, AnieLoadError, AnieLoader, AnieLoaderSettings};
pub use render::AnieRenderStats;
pub use rig::{AnieCell, AnieDisplay, AnieFrames, AnieRig};

use crate::plugin::{PlaybackPlugin, PlaybackSystems};
use bevy::asset::{AssetEventSystems, embedded_asset};
use bevy::camera::visibility::VisibilitySystems;
use bevy::pbr::MaterialPlugin;
use bevy::prelude::*;
use bevy::sprite_render::Material2dPlugin;

/// The systems of [`AniePlugin`] in `PostUpdate`.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum AnieSystems {
    /// Cells, display quads and the playhead's length (after the playheads advanced, before
    /// visibility is worked out).
    Prepare,
    /// The visible rigs' new frames evaluated and listed for the render world (after
    /// visibility).
    Draw,
}

/// Loads `.anie` files as [`Anie`]s and draws every [`AnieRig`].
///
/// Needs Bevy's rendering (`DefaultPlugins`); adds [`PlaybackPlugin`] if it is missing.
/// [`AnieRenderSettings`] (insert it before the plugin) sets the page size.
#[derive(Default)]
pub struct AniePlugin;

impl Plugin for AniePlugin {
    fn build(&self, app: &mut App) {
        embedded_asset!(app, "layer.wgsl");
        embedded_asset!(app, "card.wgsl");
        embedded_asset!(app, "card3d.wgsl");
        if !app.is_plugin_added::<PlaybackPlugin>() {
            app.add_plugins(PlaybackPlugin);
        }
        app.init_asset::<Anie>()
            .register_asset_loader(AnieLoader)
            .register_type::<AnieRig>()
            .add_plugins((
                Material2dPlugin::<AnieCardMaterial>::default(),
                MaterialPlugin::<AnieCardMaterial3d>::default(),
            ))
            .init_resource::<AnieRenderSettings>()
            .init_resource::<draw::AnieCells>()
            .init_resource::<draw::ProgramCache>()
            .init_resource::<AnieDrawList>()
            .init_resource::<AnieDrawStats>()
            .configure_sets(
                PostUpdate,
                (
                    // A reloaded project's event is read in the frame it reloads.
                    AnieSystems::Prepare
                        .after(PlaybackSystems::Apply)
                        .after(AssetEventSystems)
                        .before(VisibilitySystems::CalculateBounds),
                    AnieSystems::Draw
                        .after(VisibilitySystems::MarkNewlyHiddenEntitiesInvisible)
                        .after(AssetEventSystems),
                ),
            )
            .add_systems(
                PostUpdate,
                (
                    draw::prepare_rigs.in_set(AnieSystems::Prepare),
                    draw::draw_rigs.in_set(AnieSystems::Draw),
                ),
            );
        render::build(app);
    }
}
