//! rigplay plays legacy animation formats in real time inside Bevy: GTA III, Vice City and San
//! Andreas IFP clips, the DelDX 3ds Max exporter's DAN files, and AnimeEffects 2D rigs
//! (`.anie`). It reads GTA's own DFF/TXD models, and plays GTA clips on any humanoid glTF
//! character. A pure core reads and writes the files without Bevy.
//!
//! # Quick start
//!
//! ## An IFP clip on a GTA ped
//!
//! Every clip of a `.ifp` package is a labelled `RigClip` asset (`"ped.ifp#walk_civi"`), and
//! the same clip as Bevy's `AnimationClip` (`"ped.ifp#Animation0"`). A `GtaSkeleton` spawns the game's ped skeleton as bone entities;
//! `SkeletalClip` binds the clip to them and `Playback` is its playhead:
//!
//! ```no_run
//! # #[cfg(feature = "bevy")] {
//! use bevy::prelude::*;
//! use rigplay::prelude::*;
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     let walk = assets.load("anims/sa_ped.ifp#walk");
//!     commands.spawn((GtaSkeleton::SA, SkeletalClip::new(walk), Playback::looping()));
//!     commands.spawn((Camera3d::default(), Transform::from_xyz(2.0, 1.4, 2.0).looking_at(Vec3::Y, Vec3::Y)));
//! }
//!
//! App::new().add_plugins((DefaultPlugins, IfpPlugin)).add_systems(Startup, setup).run();
//! # }
//! ```
//!
//! With `DffPlugin` added, `GtaModel::new(assets.load("ped.dff"))` spawns the game's own ped
//! (its TXD beside it) in place of the stick skeleton.
//!
//! ## The same clip on your glTF character
//!
//! `Retarget` on a glTF scene's root maps its bones by name (Mixamo, VRM, Unreal, Blender,
//! mocap conventions, or your own map) and compensates the rest poses:
//!
//! ```no_run
//! # #[cfg(feature = "bevy")] {
//! use bevy::prelude::*;
//! use bevy::world_serialization::WorldAssetRoot;
//! use rigplay::prelude::*;
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     commands.spawn((
//!         WorldAssetRoot(assets.load("characters/humanoid.glb#Scene0")),
//!         Retarget::new(),
//!         SkeletalClip::new(assets.load("anims/sa_ped.ifp#walk")),
//!     ));
//! }
//!
//! App::new().add_plugins((DefaultPlugins, IfpPlugin)).add_systems(Startup, setup).run();
//! # }
//! ```
//!
//! ## An AnimeEffects rig
//!
//! ```no_run
//! # #[cfg(feature = "anie")] {
//! use bevy::prelude::*;
//! use rigplay::prelude::*;
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     commands.spawn(Camera2d);
//!     commands.spawn((AnieRig::new(assets.load("anims/anie/character.anie")), Playback::looping()));
//! }
//!
//! App::new().add_plugins((DefaultPlugins, AniePlugin)).add_systems(Startup, setup).run();
//! # }
//! ```
//!
//! ## The core, without Bevy
//!
//! With `default-features = false`, rigplay reads, writes and samples the files with no Bevy
//! in the build:
//!
//! ```no_run
//! use rigplay::animation::{BonePose, WrapMode};
//! use rigplay::formats::ifp::IfpFile;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let read = IfpFile::read(&std::fs::read("ped.ifp")?)?;
//! let clip = read.file.clip("walk_civi").unwrap().to_clip();
//! let mut cursor = clip.cursor();
//! let mut pose = vec![BonePose::default(); clip.tracks().len()];
//! clip.sample(clip.wrap_time(1.3, WrapMode::Loop), &mut cursor, &mut pose);
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! | Feature | Default | What it adds | Bevy features it turns on |
//! |---|---|---|---|
//! | `bevy` | yes | The Bevy plugins for IFP and DAN: asset loaders, the GTA and flat skeletons, playback, layers, retargeting onto any named hierarchy (a glTF character too), root motion, crowds. Headless: no window, camera, renderer or UI. | assets, animation, log |
//! | `render` | with the next three | `Visibility` on the skeletons and crowd characters rigplay spawns, so that meshes parented to their bones show. Turn it on with `bevy` alone when you draw your own meshes on them. | camera |
//! | `gizmos` | yes | Skeletons drawn with gizmos, bone names as UI text (`SkeletonGizmos`). | gizmos, UI |
//! | `dff` | yes | GTA's `.dff` models with their `.txd` textures (`DffPlugin`, `GtaModel`). | PBR, scenes |
//! | `anie` | yes | AnimeEffects rigs in Bevy: the `.anie` loader and GPU renderer (`AniePlugin`). | render, core pipeline, 2D sprites, PBR |
//! | `gltf` | yes | A glTF's own animations, as Bevy's glTF loader loads them, played on a GTA ped through `Retarget` (`GltfClips`); glTF characters in the crowd (`CrowdGltfModel`, drawn with `dff`'s `CrowdDrawPlugin`). | glTF, animation, mesh |
//! | `serde` | with `bevy` | `Serialize` / `Deserialize` on the core's settings types (the loaders' `.meta` files). | |
//! | `file_watcher` | no | Bevy's file watcher: files changed on disk reload under the characters playing them. | `file_watcher` |
//!
//! No feature turns on a window backend, input, a bundled font, KTX2/zstd or tonemapping
//! tables: a game adds `DefaultPlugins` (or its own set) through its own `bevy` dependency, and
//! its features join rigplay's. A headless server that only poses skeletons (say, for hit boxes)
//! takes `rigplay = { version = "0.1", default-features = false, features = ["bevy"] }` and
//! builds 161 crates instead of 267 (no wgpu, naga, renderer, window, UI or text crates). The
//! pure core alone is `default-features = false`.
//!
//! # The modules
//!
//! The pure core never links Bevy:
//! * [`formats`] decodes files into plain data and encodes them back, and tells them apart;
//! * [`animation`] is the engine-neutral animation model, its sampler, play time, blending, key
//!   reduction, retargeting onto humanoid skeletons, and the pose pipeline for crowds
//!   (`animation::pose`);
//! * [`skeleton`] holds the built-in GTA ped skeletons and the rules that bind tracks to bones;
//! * [`model`] makes a DFF model and its TXD textures ready to draw (meshes, skins, materials,
//!   textures), for Bevy's `.dff` loader and the glTF export alike;
//! * [`coords`] holds every coordinate-system conversion, each written once;
//! * [`convert`] rewrites files: an IFP package in another version, with fewer keys (what
//!   `rigplay convert` does); GTA and DAN clips out to glTF ([`convert::gltf`]); motion capture
//!   and glTF animation retargeted onto a GTA ped as IFP clips ([`convert::import`]);
//! * [`anie`] is AnimeEffects' playback: the evaluator, the frame as GPU work (`anie::program`)
//!   and the CPU reference renderer.
//!
//! The Bevy integration (`plugin`) sits behind the default `bevy` feature; [`prelude`] has
//! what a game usually needs. The format facts the code relies on are in the repository's
//! `docs/formats/` (`ifp.md`, `dan.md`, `anie.md`, `dff.md`); the `§` references in the code
//! point to their sections. The guides are in `docs/guide/`.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod anie;
pub mod animation;
pub mod convert;
pub mod coords;
pub mod formats;
pub mod model;
#[cfg(feature = "bevy")]
pub mod plugin;
pub mod prelude;
pub mod skeleton;

#[cfg(feature = "anie")]
pub use plugin::AniePlugin;
#[cfg(feature = "dff")]
pub use plugin::DffPlugin;
#[cfg(feature = "bevy")]
pub use plugin::{DanPlugin, IfpPlugin, PlaybackPlugin, SkeletalPlugin};

/// The Rust snippets of the README and the guides in `docs/`, compiled as doctests (`no_run`:
/// they need game files or a window). Most need Bevy, so they are compiled with the `bevy`
/// feature.
#[cfg(all(doctest, feature = "bevy"))]
mod doc_snippets {
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[doc = include_str!("../docs/layers.md")]
    mod layers {}
    #[doc = include_str!("../docs/guide/anie.md")]
    mod anie {}
    #[doc = include_str!("../docs/guide/core.md")]
    mod core {}
    #[doc = include_str!("../docs/guide/dan.md")]
    mod dan {}
    #[doc = include_str!("../docs/guide/ifp.md")]
    mod ifp {}
    #[doc = include_str!("../docs/guide/models.md")]
    mod models {}
    #[doc = include_str!("../docs/guide/playback.md")]
    mod playback {}
    #[cfg(feature = "gltf")]
    #[doc = include_str!("../docs/guide/retarget.md")]
    mod retarget {}
}
