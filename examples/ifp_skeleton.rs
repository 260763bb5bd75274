//! The smallest embedding of rigplay's IFP support: load a package, spawn a GTA skeleton, play.
//!
//!     cargo run --example ifp_skeleton [CLIP]        (CLIP: walk, idle or wave; default walk)

use bevy::prelude::*;
use rigplay::plugin::{GtaSkeleton, PlayAnimation, RootMotion};

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, rigplay::IfpPlugin))
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, assets: Res<AssetServer>) {
    let clip = std::env::args().nth(1).unwrap_or_else(|| "walk".into());
    // A labelled sub-asset: the clip named `clip` in the package.
    let animation = assets.load(format!("anims/sa_ped.ifp#{clip}"));
    commands.spawn((
        GtaSkeleton::SA,
        PlayAnimation::looping(animation),
        RootMotion::default(),
    ));
    commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(2.2, 1.4, 2.2).looking_at(Vec3::new(0.0, 0.9, 0.0), Vec3::Y),
    ));
    commands.spawn((
        Mesh3d(assets.add(Plane3d::default().mesh().size(6.0, 6.0).build())),
        MeshMaterial3d(assets.add(StandardMaterial::from_color(Color::srgb(0.3, 0.32, 0.35)))),
    ));
    commands.spawn((
        DirectionalLight::default(),
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}
