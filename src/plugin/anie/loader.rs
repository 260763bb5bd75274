//! The `.anie` asset loader and its settings.

use super::{Anie, AnieAssetLabel};
use crate::anie::atlas::{AtlasError, ImageAtlas};
use crate::anie::eval::{EvalOptions, Evaluator, InfluenceSource};
use crate::formats::anie::{AnieError, AnieFile};
use crate::plugin::load::{AssetLoadError, read_file};
use crate::plugin::meta::{MetaProblems, lenient_settings};
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext, RenderAssetUsages};
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use serde::Serialize;
use std::sync::Arc;

/// Choices for loading an `.anie` file, set in its `.meta` file.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct AnieLoaderSettings {
    /// Skin with the bone influences stored in the file (as AnimeEffects ≤ 1.5 did) instead of
    /// recomputing them from the bone shapes (as AnimeEffects 1.6 and later do when they open a
    /// project; the default).
    pub stored_influences: bool,
    /// What the `.meta` file held that could not be used (each field keeps its default); the
    /// loader logs these. Never written.
    #[serde(skip)]
    pub meta_problems: MetaProblems,
}

lenient_settings!(AnieLoaderSettings {
    stored_influences: "`true` or `false`",
});

/// Why an `.anie` file did not become an asset.
#[derive(Debug, thiserror::Error)]
pub enum AnieAssetError {
    /// The file is not a project the reader accepts (the message has the byte offset).
    #[error("{0}")]
    Read(#[from] AnieError),
    /// Its images do not fit one texture.
    #[error("{0}")]
    Atlas(#[from] AtlasError),
}

/// The error of [`AnieLoader`].
pub type AnieLoadError = AssetLoadError<AnieAssetError>;

/// Loads `.anie` files as [`Anie`]s.
#[derive(TypePath, Default)]
#[type_path = "rigplay::plugin"]
pub struct AnieLoader;

impl AssetLoader for AnieLoader {
    type Asset = Anie;
    type Settings = AnieLoaderSettings;
    type Error = AnieLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &AnieLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Anie, AnieLoadError> {
        let meta = &settings.meta_problems;
        let read = |bytes: &[u8]| AnieFile::read(bytes).map_err(AnieAssetError::Read);
        let (read, warnings) = read_file(reader, load_context, meta, read, |r| &r.warnings).await?;
        let mut images = ImageAtlas::new(&read.file)
            .map_err(|e| AssetLoadError::Format(AnieAssetError::Atlas(e)))?;
        let texture = Image::new(
            Extent3d {
                width: images.width,
                height: images.height,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            std::mem::take(&mut images.rgba),
            TextureFormat::Rgba8Unorm,
            RenderAssetUsages::RENDER_WORLD,
        );
        let atlas = load_context.add_labeled_asset(AnieAssetLabel::Atlas.to_string(), texture);
        let influences = if settings.stored_influences {
            InfluenceSource::Stored
        } else {
            InfluenceSource::Recompute
        };
        Ok(Anie {
            evaluator: Evaluator::with_options(Arc::new(read.file), EvalOptions { influences }),
            images: Arc::new(images),
            atlas,
            warnings,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["anie"]
    }
}
