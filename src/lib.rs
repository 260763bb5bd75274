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
    //! The README's Rust snippets, compiled (not run: they need game files or a window).
    //!
    //! ```no_run
    //! # fn main() -> Result<(), Box<dyn std::error::Error>> {
    //! use rigplay::anim::{BonePose, WrapMode};
    //! use rigplay::formats::ifp::IfpPackage;
    //!
    //! let bytes = std::fs::read("ped.ifp")?;
    //! let read = IfpPackage::read(&bytes)?;
    //! for warning in &read.warnings {
    //!     eprintln!("{warning}");
    //! }
    //! let clip = read.package.clip("walk_civi").unwrap().to_clip();
    //! let mut cursor = clip.cursor();
    //! let mut pose = vec![BonePose::default(); clip.tracks().len()];
    //! let t = clip.wrap_time(1.3, WrapMode::Loop);
    //! clip.sample(t, &mut cursor, &mut pose);
    //! # Ok(())
    //! # }
    //! ```
    //!
    //! ```no_run
    //! # fn main() -> Result<(), Box<dyn std::error::Error>> {
    //! use rigplay::anie::{cpu::Renderer, eval::Evaluator};
    //! use rigplay::formats::anie::AnimeProject;
    //! use std::sync::Arc;
    //!
    //! let project = Arc::new(AnimeProject::read(&std::fs::read("rig.anie")?)?.project);
    //! let evaluator = Evaluator::new(project.clone());
    //! let renderer = Renderer::new(project);
    //! let frame = evaluator.evaluate(12.5);
    //! let image = renderer.render(&frame, 1.0);
    //! # let _ = image;
    //! # Ok(())
    //! # }
    //! ```
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
# fn main() { App::new().add_systems(Startup, load).add_systems(Update, spawn); }
```

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn wave_when_done(
    finished: On<PlaybackFinished>,
    mut clips: Query<&mut SkeletalClip>,
    assets: Res<AssetServer>,
) {
    if let Ok(mut clip) = clips.get_mut(finished.entity) {
        clip.cross_fade(assets.load("anims/sa_ped.ifp#wave"), 0.25);
    }
}
# fn main() { App::new().add_observer(wave_when_done); }
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

```no_run
use bevy::prelude::*;
use rigplay::prelude::*;

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, AniePlugin))
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(Camera2d);
    let cat = assets.load("anims/anie/character.anie");
    // At its canvas size, whole frames as AnimeEffects plays them, looping.
    commands.spawn((AnieRig::new(cat.clone()), Playback::looping()));
    // Twice as large on screen, drawn at twice the resolution, smooth frames, half speed.
    commands.spawn((
        AnieRig::new(cat).with_scale(2.0).with_frames(AnieFrames::Smooth),
        Playback::looping().with_speed(0.5),
        Transform::from_xyz(400.0, 0.0, 0.0).with_scale(Vec3::splat(2.0)),
    ));
}
```

```no_run
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;
use rigplay::prelude::*;

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn((
        WorldAssetRoot(assets.load("hero.glb#Scene0")),
        Retarget::new(),
        SkeletalClip::new(assets.load("ped.ifp#walk_civi")),
    ));
    // A character whose arm bones no naming convention knows.
    commands.spawn((
        WorldAssetRoot(assets.load("robot.glb#Scene0")),
        Retarget::new()
            .with_bone("L UpperArm", "arm_upper_jnt_L")
            .with_bone("L ForeArm", "arm_lower_jnt_L"),
        SkeletalClip::new(assets.load("ped.ifp#walk_civi")),
    ));
}
# fn main() { App::new().add_plugins((DefaultPlugins, IfpPlugin)).add_systems(Startup, setup).run(); }
```
"##
    )]
}
