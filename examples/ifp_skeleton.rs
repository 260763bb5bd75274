//! The smallest embedding of rigplay's IFP support: load a package, spawn a GTA skeleton, play.
//!
//!     cargo run --example ifp_skeleton [CLIP]        (CLIP: walk, idle or wave; default walk)
//!
//! The clip name is matched as the games match names (any case); a name the package lacks ends
//! the app with status 1 and the closest names.

use bevy::prelude::*;
use rigplay::plugin::{GtaSkeleton, Ifp, PlayAnimation, RootMotion};

/// The package, and the clip name given on the command line.
#[derive(Resource)]
struct Package(Handle<Ifp>, String);

fn main() -> AppExit {
    // clap rejects an option it does not know, with a usage line and status 2.
    let m = clap::Command::new("ifp_skeleton")
        .arg(
            clap::Arg::new("clip")
                .value_name("CLIP")
                .default_value("walk")
                .help("walk, idle or wave (any case)"),
        )
        .get_matches();
    let clip = m.get_one::<String>("clip").expect("defaulted").clone();
    let exit = App::new()
        .add_plugins((
            DefaultPlugins,
            rigplay::IfpPlugin,
            rigplay_preview::shot::ExitWhenIdlePlugin,
        ))
        .add_systems(
            Startup,
            move |commands: Commands, assets: Res<AssetServer>| {
                setup(commands, assets, clip.clone())
            },
        )
        .add_systems(Update, play)
        .run();
    rigplay_preview::shot::leave(exit)
}

fn setup(mut commands: Commands, assets: Res<AssetServer>, clip: String) {
    commands.insert_resource(Package(assets.load("anims/sa_ped.ifp"), clip));
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

/// Once the package has loaded: its clip of that name on a GTA skeleton. (Bevy's label,
/// `anims/sa_ped.ifp#walk`, would do for an exact name; `Ifp::clip_handle` takes any case.)
fn play(
    mut commands: Commands,
    package: Option<Res<Package>>,
    packages: Res<Assets<Ifp>>,
    assets: Res<AssetServer>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(package) = package else { return };
    if let Some(bevy::asset::LoadState::Failed(e)) = assets.get_load_state(&package.0) {
        eprintln!("error: {e}");
        exit.write(AppExit::error());
        commands.remove_resource::<Package>();
        return;
    }
    let Some(ifp) = packages.get(&package.0) else {
        return;
    };
    match ifp.clip_handle(&package.1) {
        Ok(animation) => {
            commands.spawn((
                GtaSkeleton::SA,
                PlayAnimation::looping(animation),
                RootMotion::default(),
            ));
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit.write(AppExit::error());
        }
    }
    commands.remove_resource::<Package>();
}
