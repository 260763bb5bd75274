//! The motion loader: animation made elsewhere (a motion-capture `.bvh`, the animations of a
//! glTF, VRM or VRM-animation file) retargeted onto a GTA ped as it loads, by the same import as
//! `rigplay import` ([`crate::convert::import`]), and served as a [`Motion`] asset: the IFP
//! package that import writes, its clips labelled as an `.ifp`'s are, ready to play on a
//! [`super::GtaSkeleton`] or a DFF ped and to save as an `.ifp`.

use super::Ifp;
use super::loader::{IfpLoaderSettings, ifp_asset};
use crate::convert::import::{
    ImportError, ImportReport, bvh_source, clip_to_gta, gltf_source, gta_package,
};
use crate::formats::bvh::{BvhError, BvhFile};
use crate::formats::gltf::{GltfReadError, GltfScene};
use crate::formats::ifp::{IfpError, IfpFile, IfpWriteError};
use crate::plugin::load::{AssetLoadError, log_warnings, read_bytes};
use crate::plugin::meta::log_meta_problems;
use crate::plugin::meta::{MetaProblems, lenient_settings};
use crate::plugin::skeletal::ClipSettings;
use crate::skeleton::GtaGame;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

/// Animation made elsewhere, retargeted onto a GTA ped when it loaded ([`MotionLoader`]).
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     // A motion-capture walk, on San Andreas' ped (the loader's default).
///     let walk = assets.load("mocap/walk.bvh#Clip0");
///     commands.spawn((GtaSkeleton::SA, PlayAnimation::looping(walk)));
/// }
/// ```
#[derive(Asset, TypePath, Debug)]
#[type_path = "rigplay::plugin"]
pub struct Motion {
    /// The package the import made (its file, `ifp.file`, is what `rigplay import` writes),
    /// with its clips as labelled [`crate::plugin::RigClip`]s (`Clip0`, the clip's name) and
    /// `AnimationClip`s (`Animation0`).
    pub ifp: Ifp,
    /// Per clip, how the import paired and scaled it: one line each.
    pub notes: Vec<String>,
}

/// Why a motion file did not load: the file's reader refused it, it holds no animation, or a
/// clip could not be retargeted onto the ped.
#[derive(Debug, thiserror::Error)]
pub enum MotionError {
    /// The `.bvh` reader refused the file.
    #[error("{0}")]
    Bvh(#[from] BvhError),
    /// The glTF reader refused the file.
    #[error("{0}")]
    Gltf(#[from] GltfReadError),
    /// The file holds no animation.
    #[error("the file has no animation")]
    NoAnimation,
    /// The imported package could not be written (a value no IFP version holds).
    #[error("the imported clips cannot be written as IFP: {0}")]
    Write(IfpWriteError),
    /// The written package did not read back (a defect of rigplay's writer).
    #[error("the imported package does not read back: {0}")]
    Reread(IfpError),
    /// A clip could not be retargeted (no humanoid bones paired, say).
    #[error("clip {clip:?}: {error}")]
    Import {
        /// The clip's name.
        clip: String,
        /// Why.
        error: ImportError,
    },
}

/// Why a motion file did not load.
pub type MotionLoadError = AssetLoadError<MotionError>;

/// Settings of the motion loader, set in a `.meta` file next to the asset: the `.ifp` loader's
/// ([`IfpLoaderSettings`]) and a bone map, as `rigplay import --map` takes it.
///
/// ```ron
/// (
///     meta_format_version: "1.0",
///     asset: Load(
///         loader: "rigplay::plugin::MotionLoader",
///         settings: (
///             skeleton: Some(Vc),
///             default_clip: (looping: true),
///             bone_map: { "root_jnt": "Pelvis", "spine_a": "Spine", "tail": "" },
///         ),
///     ),
/// )
/// ```
#[derive(Debug, Clone, Default, Serialize)]
pub struct MotionLoaderSettings {
    /// The ped the clips are retargeted onto (`None`: San Andreas').
    pub skeleton: Option<GtaGame>,
    /// Settings for clips not named in `clips`.
    pub default_clip: ClipSettings,
    /// Settings per clip name (compared case-insensitively).
    pub clips: HashMap<String, ClipSettings>,
    /// Bone pairs the names do not give, from the file's bone to the GTA bone (SA's names, any
    /// case): they replace what the names pair. An empty GTA bone unpairs the file's bone. A
    /// pair naming a bone that is not there is reported in the asset's notes and skipped.
    pub bone_map: HashMap<String, String>,
    /// What the `.meta` file held that could not be used (each field keeps its default); the
    /// loader logs these. Never written.
    #[serde(skip)]
    pub meta_problems: MetaProblems,
}

lenient_settings!(MotionLoaderSettings {
    skeleton: "`None` or `Some(Sa)`, `Some(Vc)`, `Some(Iii)`",
    default_clip: "clip settings `(looping: bool, root_motion: Baked | InPlace | Extract(z: bool))`",
} map clips: "clip settings `(looping: bool, root_motion: Baked | InPlace | Extract(z: bool))`"
  map bone_map: "the GTA bone's name, a string");

impl MotionLoaderSettings {
    /// The bone map as `(file bone, GTA bone)` pairs, in the order of the file bones' names
    /// (a map has none of its own).
    fn pairs(&self) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = self
            .bone_map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        pairs.sort();
        pairs
    }

    /// How the clips play: the `.ifp` loader's settings of the same fields.
    fn ifp(&self) -> IfpLoaderSettings {
        IfpLoaderSettings {
            skeleton: self.skeleton,
            default_clip: self.default_clip,
            clips: self.clips.clone(),
            meta_problems: MetaProblems::default(),
        }
    }
}

/// Loads `.bvh` and `.vrma` files (and `.gltf`, `.glb` and `.vrm` files whose `.meta` names this
/// loader, or loaded as `Handle<Motion>`: Bevy's own glTF loader keeps those extensions) as a
/// [`Motion`]: every animation retargeted onto a GTA ped, rest poses compensated and bones
/// paired by their names (and by the settings' `bone_map`), as `rigplay import` does it. Its
/// settings ([`MotionLoaderSettings`]) are the `.ifp` loader's and the bone map: `skeleton` is
/// the ped (`None`: San Andreas), `clips` and `default_clip` set how each clip plays.
#[derive(TypePath, Default)]
#[type_path = "rigplay::plugin"]
pub struct MotionLoader;

impl AssetLoader for MotionLoader {
    type Asset = Motion;
    type Settings = MotionLoaderSettings;
    type Error = MotionLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &MotionLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Motion, MotionLoadError> {
        let bytes = read_bytes(reader).await?;
        let mut warnings = log_meta_problems(load_context, &settings.meta_problems);
        let path = load_context.path().clone_owned();
        let stem = path
            .path()
            .file_stem()
            .map_or_else(|| "motion".to_owned(), |s| s.to_string_lossy().into_owned());
        let bvh = path
            .path()
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("bvh"));
        let sources = if bvh {
            let read = BvhFile::read(&bytes).map_err(|e| AssetLoadError::Format(e.into()))?;
            warnings.extend(log_warnings(load_context, &read.warnings));
            let clip = read.file.to_clip(&stem);
            vec![(stem.clone(), bvh_source(&read.file), clip)]
        } else {
            // Buffers in files beside a .gltf, read through the asset source first.
            let mut external: HashMap<String, Vec<u8>> = HashMap::new();
            if !bytes.starts_with(b"glTF")
                && let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes)
            {
                let uris = doc["buffers"].as_array().into_iter().flatten();
                for uri in uris.filter_map(|b| b["uri"].as_str()) {
                    if uri.starts_with("data:") {
                        continue;
                    }
                    if let Ok(at) = path.resolve_embed_str(uri)
                        && let Ok(data) = load_context.read_asset_bytes(at).await
                    {
                        external.insert(uri.to_owned(), data);
                    }
                }
            }
            let read = GltfScene::read(&bytes, |uri| external.get(uri).cloned())
                .map_err(|e| AssetLoadError::Format(e.into()))?;
            warnings.extend(log_warnings(load_context, &read.warnings));
            let scene = read.scene;
            let mut sources = Vec::new();
            for animation in &scene.animations {
                let name = animation.clip.name.clone();
                let (source, clip) = gltf_source(&scene, animation).map_err(|error| {
                    AssetLoadError::Format(MotionError::Import {
                        clip: name.clone(),
                        error,
                    })
                })?;
                sources.push((name, source, clip));
            }
            sources
        };
        if sources.is_empty() {
            return Err(AssetLoadError::Format(MotionError::NoAnimation));
        }
        let game = settings.skeleton.unwrap_or(GtaGame::Sa);
        let map = settings.pairs();
        let mut clips = Vec::new();
        let mut notes = Vec::new();
        for (name, source, clip) in &sources {
            let (ifp_clip, report) =
                clip_to_gta(source, clip, name, game, &map).map_err(|error| {
                    AssetLoadError::Format(MotionError::Import {
                        clip: name.clone(),
                        error,
                    })
                })?;
            for problem in &report.map_problems {
                let line = format!(
                    "{}: clip {name:?}: bone map: {problem}; skipped",
                    load_context.path()
                );
                warn!("{line}");
                warnings.push(line);
            }
            notes.push(note(name, game, &report));
            clips.push(ifp_clip);
        }
        let (package, conversion) = gta_package(game, &stem, clips);
        warnings.extend(conversion);
        // As written and read back: the clips play the keys the saved package holds (ANP3's
        // int16 steps included), not the import's floats.
        let bytes = package
            .write()
            .map_err(|e| AssetLoadError::Format(MotionError::Write(e)))?;
        let package = IfpFile::read(&bytes)
            .map_err(|e| AssetLoadError::Format(MotionError::Reread(e)))?
            .file;
        Ok(Motion {
            ifp: ifp_asset(package, game, &settings.ifp(), warnings, load_context),
            notes,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["bvh", "vrma"]
    }
}

/// What the import did to one clip, in a line.
fn note(name: &str, game: GtaGame, report: &ImportReport) -> String {
    let mut line = format!(
        "clip {name:?} on the {game:?} ped: {} bones paired, {} keys a bone at {} a second, hips scaled by {:.4}",
        report.pairs.len(),
        report.keys_per_bone,
        report.rate,
        report.hips_scale
    );
    if !report.unmatched.is_empty() {
        line += &format!("; {:?} keep their rest pose", report.unmatched);
    }
    for problem in &report.map_problems {
        line += &format!("; bone map: {problem}, skipped");
    }
    line
}
