//! A GTA or DAN clip on any humanoid glTF character, rest poses compensated.
//!
//!     cargo run --example retarget -- CHARACTER.glb CLIP_PATH#CLIP
//!     cargo run --example retarget -- assets/characters/humanoid.glb assets/anims/sa_ped.ifp#walk
//!     cargo run --example retarget -- CHARACTER.glb CLIP.ifp#walk --at 0.5 --screenshot out.png
//!
//! The character plays the clip in the middle; the built-in skeleton the clip was made for (the
//! GTA ped of the package's game, or the DAN file's own bones) plays it beside, as sticks,
//! turned to face the way the character faces (+Z). Files may be anywhere on disk. `CLIP` is a
//! clip's name in an `.ifp` (or `ClipN`), `Clip0` for a `.dan`.
//!
//! With `--screenshot OUT.png` the clip is posed at `--at SECONDS` (0 without it), the window is
//! saved as `OUT.png` and `OUT.png.joints.json` is written, and the app exits (it runs headless
//! under xvfb): `{"map": {source bone: character bone}, "character": {character bone: [x, y,
//! z]}, "reference": {source bone: [x, y, z]}}`, world positions in Bevy's axes of every mapped
//! bone of the character and of the reference skeleton at the same time, each with its hips at
//! the origin.

use bevy::prelude::*;
use bevy::window::WindowResolution;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot};
use rigplay::animation::retarget::{BoneMap, HumanoidBone, bone_pairs};
use rigplay::plugin::*;
use std::path::{Path, PathBuf};

struct Args {
    character: PathBuf,
    clip: String,
    at: f32,
    screenshot: Option<PathBuf>,
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|e| {
        eprintln!("{}: {e}", p.display());
        std::process::exit(1)
    })
}

/// The command line: clap rejects an option it does not know, with a usage line and status 2.
fn parse_args() -> Args {
    use clap::{Arg, Command, value_parser};
    let mut command = Command::new("retarget")
        .about("A GTA or DAN clip on any humanoid glTF character, rest poses compensated")
        .arg(
            Arg::new("character")
                .value_name("CHARACTER.glb")
                .required(true)
                .value_parser(value_parser!(PathBuf)),
        )
        .arg(
            Arg::new("clip")
                .value_name("CLIP_PATH#CLIP")
                .required(true)
                .help("FILE.ifp#walk (any case), FILE.dan#Clip0"),
        )
        .arg(
            Arg::new("at")
                .long("at")
                .value_name("SECONDS")
                .value_parser(value_parser!(f32))
                .default_value("0"),
        )
        .arg(
            Arg::new("screenshot")
                .long("screenshot")
                .value_name("OUT.png")
                .value_parser(value_parser!(PathBuf)),
        );
    let m = command.get_matches_mut();
    let clip = m.get_one::<String>("clip").expect("required");
    let Some((file, label)) = clip.rsplit_once('#') else {
        command
            .error(
                clap::error::ErrorKind::InvalidValue,
                format!("{clip}: name the clip after '#' (FILE.ifp#walk, FILE.dan#Clip0)"),
            )
            .exit()
    };
    Args {
        character: absolute(m.get_one::<PathBuf>("character").expect("required")),
        clip: format!("{}#{label}", absolute(Path::new(file)).display()),
        at: *m.get_one::<f32>("at").expect("defaulted"),
        screenshot: m.get_one::<PathBuf>("screenshot").cloned(),
    }
}

#[derive(Resource)]
struct Setup {
    at: f32,
    screenshot: Option<PathBuf>,
    frames: u32,
    framed: bool,
}

/// The clip's file, the clip's name as typed (resolved case-insensitively once the file is
/// loaded, as the games match names: Bevy's labels are exact), and the character's scene.
#[derive(Resource)]
struct Source {
    file: SourceFile,
    label: String,
    scene: Handle<WorldAsset>,
    resolved: bool,
}

#[derive(Component)]
struct Character;

#[derive(Component)]
struct Reference;

fn main() -> AppExit {
    let args = parse_args();
    let exit = App::new()
        .add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: Some(Window {
                        title: "rigplay retarget".into(),
                        resolution: WindowResolution::new(1280, 720)
                            .with_scale_factor_override(1.0),
                        ..default()
                    }),
                    ..default()
                })
                // Files by absolute path; no file watcher over all of `/`.
                .set(rigplay_preview::watch::files_anywhere()),
        )
        .add_plugins((
            IfpPlugin,
            DanPlugin,
            rigplay_preview::shot::ExitWhenIdlePlugin,
        ))
        .insert_resource(ClearColor(Color::srgb(0.12, 0.13, 0.15)))
        .insert_resource(Setup {
            at: args.at,
            screenshot: args.screenshot.clone(),
            frames: 0,
            framed: false,
        })
        .add_systems(
            Startup,
            move |commands: Commands, assets: Res<AssetServer>| setup(commands, assets, &args),
        )
        .add_systems(
            Update,
            (
                resolve_clip,
                spawn_reference,
                report,
                frame_camera,
                hold_and_capture,
            )
                .chain(),
        )
        .run();
    rigplay_preview::shot::leave(exit)
}

fn setup(mut commands: Commands, assets: Res<AssetServer>, args: &Args) {
    let (file, label) = args.clip.rsplit_once('#').unwrap_or((&args.clip, ""));
    let file = if file.to_ascii_lowercase().ends_with(".dan") {
        SourceFile::Dan(assets.load(file.to_owned()))
    } else {
        SourceFile::Ifp(assets.load(file.to_owned()))
    };
    let scene: Handle<WorldAsset> = assets.load(format!("{}#Scene0", args.character.display()));
    commands.insert_resource(Source {
        file,
        label: label.to_owned(),
        scene: scene.clone(),
        resolved: false,
    });
    let mut playback = Playback::looping();
    if args.screenshot.is_some() {
        playback.paused = true;
    }
    // The clip is given to both once its file has loaded and the name is resolved
    // (`resolve_clip`).
    commands.spawn((
        Name::new("character"),
        Character,
        WorldAssetRoot(scene),
        Retarget::new(),
        playback.clone(),
    ));
    // The reference skeleton, once its file says which (spawn_reference).
    commands.spawn((
        Name::new("reference"),
        Reference,
        playback,
        // GTA peds face −Z in Bevy's axes; turned to face +Z as glTF characters do.
        Transform::from_rotation(Quat::from_rotation_y(std::f32::consts::PI)),
        Visibility::default(),
    ));
    commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(0.0, 1.2, 4.0).looking_at(Vec3::new(0.0, 0.9, 0.0), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 6000.0,
            ..default()
        },
        Transform::from_xyz(2.0, 5.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 400.0,
        ..default()
    });
}

/// The file the clip comes from, held so that its skeleton can be read once it is loaded.
enum SourceFile {
    Ifp(Handle<Ifp>),
    Dan(Handle<Dan>),
}

/// Once the clip's file has loaded: the clip the typed name means (case-insensitively, as the
/// games match names), given to the character and the reference. A file or character that
/// fails to load, a name no clip has (with the closest names), or one that matches two clips
/// differing only in case ends the app with status 1.
#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it reads
fn resolve_clip(
    mut commands: Commands,
    mut source: ResMut<Source>,
    assets: Res<AssetServer>,
    ifps: Res<Assets<Ifp>>,
    dans: Res<Assets<Dan>>,
    character: Query<Entity, With<Character>>,
    reference: Query<Entity, With<Reference>>,
    mut exit: MessageWriter<AppExit>,
) {
    if source.resolved {
        return;
    }
    let file = match &source.file {
        SourceFile::Ifp(h) => h.id().untyped(),
        SourceFile::Dan(h) => h.id().untyped(),
    };
    for (id, what) in [
        (file, "clip file"),
        (source.scene.id().untyped(), "character"),
    ] {
        if let Some(bevy::asset::LoadState::Failed(e)) = assets.get_load_state(id) {
            eprintln!("error: the {what} did not load: {e}");
            exit.write(AppExit::error());
            source.resolved = true;
            return;
        }
    }
    let found = match &source.file {
        SourceFile::Ifp(h) => {
            let Some(ifp) = ifps.get(h) else { return };
            ifp.clip_handle(&source.label).map_err(|e| e.to_string())
        }
        SourceFile::Dan(h) => {
            let Some(dan) = dans.get(h) else { return };
            // A DAN file holds one clip, labelled `Clip0`.
            if source.label.eq_ignore_ascii_case("Clip0") {
                Ok(dan.handle.clone())
            } else {
                Err(format!(
                    "a .dan file has one clip, Clip0, not {:?}",
                    source.label
                ))
            }
        }
    };
    source.resolved = true;
    match found {
        Ok(clip) => {
            for e in character.iter().chain(&reference) {
                commands.entity(e).insert(SkeletalClip::new(clip.clone()));
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit.write(AppExit::error());
        }
    }
}

/// Gives the reference entity the skeleton its clip was made for: the package's GTA ped, or the
/// DAN file's bones.
fn spawn_reference(
    mut commands: Commands,
    source: Res<Source>,
    ifps: Res<Assets<Ifp>>,
    dans: Res<Assets<Dan>>,
    reference: Query<Entity, (With<Reference>, Without<SkeletonBones>)>,
) {
    let Ok(entity) = reference.single() else {
        return;
    };
    match &source.file {
        SourceFile::Ifp(h) => {
            if let Some(ifp) = ifps.get(h) {
                commands.entity(entity).insert(GtaSkeleton(ifp.game));
            }
        }
        SourceFile::Dan(h) => {
            if let Some(dan) = dans.get(h) {
                commands.entity(entity).insert(dan.skeleton());
            }
        }
    }
}

/// Logs the character's bone map once it is known, and what did not match.
fn report(reports: Query<&RetargetReport, Changed<RetargetReport>>) {
    for r in &reports {
        if r.report.matched.is_empty() {
            continue;
        }
        info!(
            "{:?} names: {} of {} humanoid bones matched; GTA → character: {}",
            r.preset,
            r.report.matched.len(),
            HumanoidBone::COUNT,
            r.map
                .iter()
                .map(|(s, t)| format!("{s} → {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !r.report.unmatched.is_empty() {
            warn!("no bone for: {:?}", r.report.unmatched);
        }
        for p in &r.problems {
            warn!("bone map: {p}");
        }
    }
}

/// The character's bones (named descendants) with world positions.
fn bones_of(
    root: Entity,
    children: &Query<&Children>,
    nodes: &Query<(&Name, &GlobalTransform)>,
) -> Vec<(String, Vec3)> {
    children
        .iter_descendants(root)
        .filter_map(|e| nodes.get(e).ok())
        .map(|(n, g)| (n.as_str().to_owned(), g.translation()))
        .collect()
}

/// Places the character's hips at the origin of the view (and the reference skeleton beside it,
/// scaled to the character's height), and the camera to see both, once the character is there.
#[allow(clippy::type_complexity)]
fn frame_camera(
    mut setup: ResMut<Setup>,
    character: Query<(Entity, &RetargetReport), With<Character>>,
    mut reference: Query<(Entity, &mut Transform), (With<Reference>, With<SkeletonBones>)>,
    children: Query<&Children>,
    nodes: Query<(&Name, &GlobalTransform)>,
    mut camera: Query<&mut Transform, (With<Camera3d>, Without<Reference>)>,
) {
    if setup.framed {
        return;
    }
    let (Ok((root, report)), Ok((reference, mut placed))) =
        (character.single(), reference.single_mut())
    else {
        return;
    };
    if report.report.matched.is_empty() {
        return;
    }
    let bones = bones_of(root, &children, &nodes);
    let ref_bones = bones_of(reference, &children, &nodes);
    if bones.is_empty() || ref_bones.is_empty() {
        return;
    }
    let (min, max) = bones
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), (_, p)| {
            (lo.min(*p), hi.max(*p))
        });
    let height = (max.y - min.y).max(1e-3);
    let (rmin, rmax) = ref_bones
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), (_, p)| {
            (lo.min(*p), hi.max(*p))
        });
    let ref_height = (rmax.y - rmin.y).max(1e-3);
    // The reference stands at the character's left, its feet on the character's floor.
    let s = height / ref_height;
    placed.scale = Vec3::splat(s);
    placed.translation = Vec3::new(
        max.x + 0.6 * height,
        min.y - rmin.y * s,
        (min.z + max.z) / 2.0,
    );
    let centre = Vec3::new(
        (min.x + max.x + 0.6 * height) / 2.0 + 0.15 * height,
        (min.y + max.y) / 2.0,
        (min.z + max.z) / 2.0,
    );
    if let Ok(mut cam) = camera.single_mut() {
        // Three-quarter view from the front, a little above.
        *cam = Transform::from_translation(centre + Vec3::new(1.0, 0.35, 1.9) * height)
            .looking_at(centre, Vec3::Y);
    }
    setup.framed = true;
}

/// With `--screenshot`: holds both at `--at`, then writes the joints and the PNG and exits.
#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it reads
fn hold_and_capture(
    mut commands: Commands,
    mut setup: ResMut<Setup>,
    mut playbacks: Query<&mut Playback>,
    character: Query<(Entity, &RetargetReport, &Retarget, &SkeletalClip), With<Character>>,
    reference: Query<(Entity, &Transform), With<Reference>>,
    children: Query<&Children>,
    nodes: Query<(&Name, &GlobalTransform)>,
    registry: Res<Assets<RigClip>>,
) {
    let Some(path) = setup.screenshot.clone() else {
        return;
    };
    let at = setup.at;
    let mut ready = true;
    for mut p in &mut playbacks {
        p.paused = true;
        if p.time != at {
            p.seek(at);
        }
        ready &= p.duration.is_some();
    }
    if !ready || !setup.framed {
        return;
    }
    setup.frames += 1;
    // Let render pipelines compile (and the pose settle) before capturing.
    if setup.frames != 60 {
        return;
    }
    let (Ok((root, report, retarget, clip)), Ok((reference, reference_scale))) =
        (character.single(), reference.single())
    else {
        return;
    };
    let character_bones = bones_of(root, &children, &nodes);
    let reference_bones = bones_of(reference, &children, &nodes);
    let json = joints_json(
        &source_pairs(&registry, &clip.clip, retarget, report),
        &character_bones,
        &reference_bones,
        reference_scale.scale.x,
    );
    rigplay_preview::shot::write_joints(&path, &json);
    rigplay_preview::shot::save_window_and_exit(&mut commands, path);
}

/// Which source bone drives which character bone for this clip: the clip's own skeleton's
/// names (a GTA ped's, a DAN file's) matched to the character's as the playback does.
fn source_pairs(
    registry: &Assets<RigClip>,
    clip: &Handle<RigClip>,
    retarget: &Retarget,
    report: &RetargetReport,
) -> Vec<(String, String)> {
    let Some(source) = registry
        .get(clip.id())
        .map(|c| c.info().clone())
        .and_then(|i| i.source.clone())
    else {
        return report.map.clone();
    };
    let source_names: Vec<&str> = source.names.iter().map(String::as_str).collect();
    let target_names: Vec<&str> = report.names.iter().map(String::as_str).collect();
    let (pairs, _) = bone_pairs(&source_names, &target_names, &retarget.bone_map);
    pairs
        .iter()
        .map(|&(s, t)| (source.names[s].clone(), report.names[t].clone()))
        .collect()
}

/// The joints file: the map, and both skeletons' mapped bones with their hips at the origin.
fn joints_json(
    pairs: &[(String, String)],
    character: &[(String, Vec3)],
    reference: &[(String, Vec3)],
    reference_scale: f32,
) -> String {
    let find = |list: &[(String, Vec3)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name || n.trim() == name.trim())
            .map(|(_, p)| *p)
    };
    // The hips of each side: the humanoid Hips of its names.
    let hips_of = |list: &[(String, Vec3)]| {
        let names: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
        let (_, map) = BoneMap::detect(&names);
        map.get(HumanoidBone::Hips)
            .map(|i| list[i].1)
            .unwrap_or(Vec3::ZERO)
    };
    let (ch, rh) = (hips_of(character), hips_of(reference));
    let v = |p: Vec3| format!("[{}, {}, {}]", p.x, p.y, p.z);
    let mut map = Vec::new();
    let mut chars = Vec::new();
    let mut refs = Vec::new();
    for (source, target) in pairs {
        let (Some(c), Some(r)) = (find(character, target), find(reference, source)) else {
            continue;
        };
        let source = source.trim();
        map.push(format!("{source:?}: {target:?}"));
        chars.push(format!("{target:?}: {}", v(c - ch)));
        // In the skeleton's own size (the view scales it to the character's).
        refs.push(format!("{source:?}: {}", v((r - rh) / reference_scale)));
    }
    format!(
        "{{\n  \"map\": {{{}}},\n  \"character\": {{{}}},\n  \"reference\": {{{}}}\n}}\n",
        map.join(", "),
        chars.join(", "),
        refs.join(", ")
    )
}
