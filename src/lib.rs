//! rigplay: legacy animation formats (GTA IFP, DelDX DAN, AnimeEffects ANIE) for real-time
//! playback in Bevy.
//!
//! The crate has a pure core that never links Bevy:
//! * [`formats`] decodes files into plain data and encodes them back, and tells them apart;
//! * [`anim`] is the engine-neutral animation model, its sampler, play time, blending, key
//!   reduction, retargeting onto humanoid skeletons, and the pose pipeline for crowds
//!   (`anim::pose`);
//! * [`skeleton`] holds the built-in GTA ped skeletons and the rules that bind tracks to bones;
//! * [`coords`] holds every coordinate-system conversion, each written once;
//! * [`convert`] rewrites files: an IFP package in another version, with fewer keys (what
//!   `rigplay convert` does); GTA and DAN clips out to glTF ([`convert::gltf`]); motion capture
//!   and glTF animation retargeted onto a GTA ped as IFP clips ([`convert::import`]);
//! * [`anie`] is AnimeEffects' playback: the evaluator, the frame as GPU work (`anie::program`)
//!   and the CPU reference renderer.
//!
//! The Bevy integration (`plugin`) sits behind the default `bevy` feature; [`prelude`] has
//! what a game usually needs. The `file_watcher` feature turns on Bevy's file watcher, so that
//! assets changed on disk reload under the rigs playing them. The format facts the code relies on are in the repository's
//! `docs/formats/` (`ifp.md`, `dan.md`, `anie.md`, `dff.md`); the `§` references in the code
//! point to their sections.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod anie;
pub mod anim;
pub mod convert;
pub mod coords;
pub mod formats;
#[cfg(feature = "bevy")]
pub mod plugin;
pub mod prelude;
pub mod skeleton;

#[cfg(feature = "bevy")]
pub use plugin::{AniePlugin, DanPlugin, DffPlugin, IfpPlugin, PlaybackPlugin, SkeletalPlugin};

#[cfg(doctest)]
mod readme_example {
    //! The README's Rust snippets, in the README's order, compiled (not run: they need game
    //! files or a window). The Bevy ones need the `bevy` feature.
    #![cfg_attr(
        feature = "bevy",
        doc = r##"
```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn main() {
    App::new().add_plugins((DefaultPlugins, IfpPlugin)).add_systems(Startup, setup).run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    // Every clip of a package is a labelled AnimationClip: by name, or by index ("…#Clip0").
    let walk = assets.load("anims/sa_ped.ifp#walk");
    commands.spawn((GtaSkeleton::SA, SkeletalClip::new(walk), Playback::looping()));
    commands.spawn((Camera3d::default(), Transform::from_xyz(2.0, 1.4, 2.0).looking_at(Vec3::Y, Vec3::Y)));
}
```

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

#[derive(Resource)]
struct Lamp(Handle<Dan>);

fn load(mut commands: Commands, assets: Res<AssetServer>) {
    commands.insert_resource(Lamp(assets.load("anims/lamp.dan")));
}

fn spawn(mut commands: Commands, lamp: Res<Lamp>, dans: Res<Assets<Dan>>, mut done: Local<bool>) {
    if let (false, Some(dan)) = (*done, dans.get(&lamp.0)) {
        commands.spawn((dan.skeleton(), SkeletalClip::new(dan.handle.clone())));
        *done = true;
    }
}
# fn main() {
#     App::new()
#         .add_plugins((DefaultPlugins, DanPlugin))
#         .add_systems(Startup, load)
#         .add_systems(Update, spawn)
#         .run();
# }
```

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, IfpPlugin, DffPlugin))
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    // ped.txd beside ped.dff gives the textures.
    let ped = assets.load("characters/ped.dff");
    let walk = assets.load("anims/sa_ped.ifp#walk");
    commands.spawn((GtaModel::new(ped), SkeletalClip::new(walk)));
}
```

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn main() {
    App::new().add_plugins((DefaultPlugins, AniePlugin)).add_systems(Startup, setup).run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(Camera2d);
    // At its canvas size, whole frames as AnimeEffects plays them, looping.
    commands.spawn((AnieRig::new(assets.load("anims/anie/character.anie")), Playback::looping()));
}
```
"##
    )]
    //!
    //! ```no_run
    //! # fn main() -> Result<(), Box<dyn std::error::Error>> {
    //! use rigplay::anim::{BonePose, WrapMode};
    //! use rigplay::formats::ifp::IfpPackage;
    //!
    //! let bytes = std::fs::read("ped.ifp")?;
    //! let read = IfpPackage::read(&bytes)?;          // typed error with byte offset, clip and bone
    //! for warning in &read.warnings {
    //!     eprintln!("{warning}");
    //! }
    //! let clip = read.package.clip("walk_civi").unwrap().to_clip();
    //! let mut cursor = clip.cursor();                // one per playing instance
    //! let mut pose = vec![BonePose::default(); clip.tracks().len()];
    //! let t = clip.wrap_time(1.3, WrapMode::Loop);
    //! clip.sample(t, &mut cursor, &mut pose);        // one local transform per track
    //! # Ok(())
    //! # }
    //! ```
    #![cfg_attr(
        feature = "bevy",
        doc = r##"
```no_run
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;
use rigplay::prelude::*;

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    // Any humanoid: Mixamo, VRM / VRoid, Unreal-mannequin bone names, or your own map.
    commands.spawn((
        WorldAssetRoot(assets.load("characters/humanoid.glb#Scene0")),
        Retarget::new(),
        SkeletalClip::new(assets.load("anims/sa_ped.ifp#walk")),
    ));
}
# fn main() { App::new().add_plugins((DefaultPlugins, IfpPlugin)).add_systems(Startup, setup).run(); }
```

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn phone_over_walk(mut commands: Commands, assets: Res<AssetServer>) {
    let mut layers = ClipLayers::default();
    layers.push(Layer::new(assets.load("anims/sa_ped.ifp#walk")).with_flags(LayerFlags::MOVEMENT));
    layers.push(
        Layer::new(assets.load("anims/sa_ped.ifp#wave"))
            .with_flags(LayerFlags::PARTIAL)
            .with_mask(BoneMask::UpperBody)
            .with_weight(0.5)
            .unwrap(),
    );
    commands.spawn((GtaSkeleton::SA, layers));
}
# fn main() { App::new().add_systems(Startup, phone_over_walk); }
```
"##
    )]
}
