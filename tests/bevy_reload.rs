//! Files that change, break and come back while they play: an `.ifp`, a `.dan` and a `.dff` reloaded in
//! place under playing characters (through the AssetServer's reload, what Bevy's file watcher
//! calls).

use crate::bevy_ifp::app_in;
use crate::bytes::Bytes;
use bevy::asset::LoadState;
use bevy::asset::io::memory::Dir;
use bevy::prelude::*;
use rigplay::plugin::*;
use std::path::Path;
use std::time::Duration;

/// ANP3 "test" with the clip "lift" (1 s): "Root" (id 0) rises from (0, 0, 0) to (0, `rise`, 0)
/// m (i16 translation × 1024, time × 60), and, when `extra`, a second clip "spare" (root held).
fn lift(rise: i16, extra: bool) -> Vec<u8> {
    let mut b = Bytes::new();
    b.sized(b"ANP3", |b| {
        b.fixed("test", 24, &[]).u32(1 + extra as u32);
        b.fixed("lift", 24, &[]).u32(1).u32(2 * 16).u32(1);
        b.fixed("Root", 24, &[]).u32(4).u32(2).i32(0);
        b.i16s(&[0, 0, 0, 4096, 0, 0, 0, 0]);
        b.i16s(&[0, 0, 0, 4096, 60, 0, rise * 1024, 0]);
        if extra {
            b.fixed("spare", 24, &[]).u32(1).u32(16).u32(1);
            b.fixed("Root", 24, &[]).u32(4).u32(1).i32(0);
            b.i16s(&[0, 0, 0, 4096, 0, 0, 0, 0]);
        }
    });
    b.done()
}

fn app(dir: &Dir) -> App {
    app_in(dir, 0.1, ())
}

/// Runs frames until `done` holds (for at most 60 s: reloads run on the task pool, which a busy
/// machine reaches late).
fn until(app: &mut App, mut done: impl FnMut(&mut App) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        app.update();
        if done(app) {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("not reached in 60 s");
}

/// The local transform of the root bone of `character`.
fn root_of(app: &mut App, character: Entity) -> Transform {
    let bones = app
        .world()
        .get::<SkeletonBones>(character)
        .unwrap()
        .0
        .clone();
    *app.world().get::<Transform>(bones[0]).unwrap()
}

#[test]
fn a_changed_broken_and_restored_package_reloads_under_a_playing_character() {
    let dir = Dir::default();
    dir.insert_asset(Path::new("test.ifp"), lift(1, true));
    let mut app = app(&dir);
    let ifp: Handle<Ifp> = app.world().resource::<AssetServer>().load("test.ifp");
    let clip: Handle<RigClip> = app.world().resource::<AssetServer>().load("test.ifp#lift");
    until(&mut app, |app| {
        app.world().resource::<Assets<Ifp>>().contains(&ifp)
    });
    let mut paused = Playback::looping();
    paused.paused = true;
    paused.time = 0.5;
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(clip.clone()),
            paused.clone(),
        ))
        .id();
    // A second character plays the clip that a later version drops.
    let spare: Handle<RigClip> = app.world().resource::<AssetServer>().load("test.ifp#spare");
    let spare_character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(spare.clone()),
            paused,
            Transform::from_xyz(5.0, 0.0, 0.0),
        ))
        .id();
    app.update();
    app.update();
    // Rising 1 m a second, half way: 0.5 m up (the root's GTA Y; its local frame is GTA's).
    assert!(
        (root_of(&mut app, character).translation.y - 0.5).abs() < 1e-3,
        "{}",
        root_of(&mut app, character).translation.y
    );

    // Changed on disk: rises 2 m. Reloaded in place, the playhead kept, the new keys shown.
    dir.insert_asset(Path::new("test.ifp"), lift(2, true));
    app.world().resource::<AssetServer>().reload("test.ifp");
    until(&mut app, |app| {
        (root_of(app, character).translation.y - 1.0).abs() < 1e-3
    });
    let playback = app.world().get::<Playback>(character).unwrap();
    assert_eq!((playback.time, playback.paused), (0.5, true));

    // Broken (half written): the last good version keeps playing, the failure is reported.
    let mut broken = lift(3, true);
    broken.truncate(40);
    dir.insert_asset(Path::new("test.ifp"), broken);
    app.world().resource::<AssetServer>().reload("test.ifp");
    until(&mut app, |app| {
        matches!(
            app.world().resource::<AssetServer>().load_state(ifp.id()),
            LoadState::Failed(_)
        )
    });
    for _ in 0..3 {
        app.update();
    }
    assert!(
        (root_of(&mut app, character).translation.y - 1.0).abs() < 1e-3,
        "the last good clip plays on"
    );
    assert!(app.world().resource::<Assets<Ifp>>().contains(&ifp));

    // Written again: recovers with the new keys.
    dir.insert_asset(Path::new("test.ifp"), lift(3, false));
    app.world().resource::<AssetServer>().reload("test.ifp");
    until(&mut app, |app| {
        (root_of(app, character).translation.y - 1.5).abs() < 1e-3
    });
    // The package asset follows (the loader registers clips as it reads, before the asset
    // replaces the old one).
    until(&mut app, |app| {
        app.world()
            .resource::<Assets<Ifp>>()
            .get(&ifp)
            .unwrap()
            .clips
            .len()
            == 1
    });
    // The spare clip is gone from the file: its character holds the rest pose (the root's rest
    // rotation, ≈90° about Z, not the clip's identity key).
    for _ in 0..3 {
        app.update();
    }
    let rest = rigplay::skeleton::Skeleton::gta_sa().bones[0].rest;
    let root = root_of(&mut app, spare_character);
    assert!(
        root.rotation.dot(rest.rotation).abs() > 1.0 - 1e-6,
        "{root:?}"
    );
    assert_eq!(root.translation, rest.translation);
}

/// The bundled lamp with every position key scaled by `k` (rigplay's DAN writer).
fn lamp(k: f32) -> Vec<u8> {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims/lamp.dan"),
    )
    .unwrap();
    let mut file = rigplay::formats::dan::DanFile::read(&bytes).unwrap().file;
    for bone in &mut file.bones {
        for key in &mut bone.positions {
            key.value = key.value.map(|v| v * k);
        }
    }
    file.write().unwrap()
}

#[test]
fn a_changed_then_deleted_dan_file_reloads_under_its_playing_flat_skeleton() {
    let dir = Dir::default();
    dir.insert_asset(Path::new("lamp.dan"), lamp(1.0));
    let mut app = app(&dir);
    let dan: Handle<Dan> = app.world().resource::<AssetServer>().load("lamp.dan");
    let clip: Handle<RigClip> = app.world().resource::<AssetServer>().load("lamp.dan#Clip0");
    until(&mut app, |app| {
        app.world().resource::<Assets<Dan>>().contains(&dan)
    });
    let skeleton = app
        .world()
        .resource::<Assets<Dan>>()
        .get(&dan)
        .unwrap()
        .skeleton();
    let mut paused = Playback::looping();
    paused.paused = true;
    paused.time = 0.8;
    let character = app
        .world_mut()
        .spawn((skeleton, SkeletalClip::new(clip), paused))
        .id();
    app.update();
    app.update();
    let last = |app: &mut App| {
        let bones = app
            .world()
            .get::<SkeletonBones>(character)
            .unwrap()
            .0
            .clone();
        app.world()
            .get::<Transform>(*bones.last().unwrap())
            .unwrap()
            .translation
    };
    let before = last(&mut app);
    assert!(before.length() > 0.1, "{before}");
    dir.insert_asset(Path::new("lamp.dan"), lamp(2.0));
    app.world().resource::<AssetServer>().reload("lamp.dan");
    until(&mut app, |app| (last(app) - 2.0 * before).length() < 1e-4);
    let playback = app.world().get::<Playback>(character).unwrap();
    assert_eq!((playback.time, playback.paused), (0.8, true));

    // Deleted: reading it again fails, and the last good version plays on.
    dir.remove_asset(Path::new("lamp.dan"))
        .expect("the file was there");
    app.world().resource::<AssetServer>().reload("lamp.dan");
    until(&mut app, |app| {
        matches!(
            app.world().resource::<AssetServer>().load_state(dan.id()),
            LoadState::Failed(_)
        )
    });
    for _ in 0..3 {
        app.update();
    }
    assert!(app.world().resource::<Assets<Dan>>().contains(&dan));
    assert!((last(&mut app) - 2.0 * before).length() < 1e-4);
}

/// A `.dff` changed on disk (its frames 1.25× as far apart) reloads under its `GtaModel`: the
/// hierarchy is spawned again from the new file, once. A crowd character wearing it (paused in
/// the walk) takes the new proportions too, at the same time of the clip: the head 1.25× as far
/// from the pelvis (the clip's rotations, the model's offsets).
#[test]
fn a_changed_model_is_spawned_again_from_the_new_file() {
    use bevy::image::ImagePlugin;
    use bevy::mesh::MeshPlugin;
    use bevy::world_serialization::WorldSerializationPlugin;
    use rigplay::skeleton::GtaGame;
    let dir = Dir::default();
    dir.insert_asset(Path::new("ped.dff"), crate::bevy_dff::scaled_ped(1.0));
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims/sa_ped.ifp");
    dir.insert_asset(Path::new("sa_ped.ifp"), std::fs::read(assets).unwrap());
    let mut app = app_in(
        &dir,
        0.1,
        (
            ImagePlugin::default(),
            MeshPlugin,
            WorldSerializationPlugin,
            DffPlugin,
        ),
    );
    app.init_asset::<StandardMaterial>();
    let model: Handle<Dff> = app.world().resource::<AssetServer>().load("ped.dff");
    until(&mut app, |app| {
        app.world().resource::<Assets<Dff>>().contains(&model)
    });
    let ped = app.world_mut().spawn(GtaModel::new(model.clone())).id();
    let walk: Handle<RigClip> = app
        .world()
        .resource::<AssetServer>()
        .load("sa_ped.ifp#walk");
    let mut paused = Playback::looping();
    paused.paused = true;
    paused.seek(0.4);
    let crowd = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            CrowdModel(model.clone()),
            paused,
        ))
        .id();
    // The crowd character's head from its pelvis, once posed.
    let neck = |app: &App| {
        let pose = app.world().get::<CrowdPose>(crowd)?;
        let at = |name: &str| {
            let b = pose.names.iter().position(|n| n == name)?;
            Some(Vec3::from(pose.bones.get(b)?.translation))
        };
        Some(at(" Head")?.distance(at(" Pelvis")?))
    };
    until(&mut app, |app| neck(app).is_some());
    app.update();
    app.update();
    let neck_before = neck(&app).unwrap();
    let head = |app: &mut App| {
        let world = app.world_mut();
        let heads: Vec<Vec3> = world
            .query::<(&Name, &Transform)>()
            .iter(world)
            .filter(|(n, _)| n.as_str() == " Head")
            .map(|(_, t)| t.translation)
            .collect();
        heads
    };
    let before = head(&mut app);
    assert_eq!(before.len(), 1);
    dir.insert_asset(Path::new("ped.dff"), crate::bevy_dff::scaled_ped(1.25));
    app.world().resource::<AssetServer>().reload("ped.dff");
    until(&mut app, |app| {
        let h = head(app);
        h.len() == 1 && (h[0] - before[0] * 1.25).length() < 1e-5
    });
    until(&mut app, |app| {
        neck(app).is_some_and(|n| (n - neck_before * 1.25).abs() < 1e-4)
    });
    assert_eq!(app.world().get::<Playback>(crowd).unwrap().time, 0.4);
    assert_eq!(
        app.world().get::<Children>(ped).unwrap().len(),
        1,
        "one basis"
    );
}

/// Runs frames, 10 ms of real time apart, until `done` holds (at most 10 s: Bevy's file
/// watcher waits 300 ms for a file to settle before it reports it).
#[cfg(feature = "file_watcher")]
fn until_seconds(app: &mut App, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        app.update();
        if done(app) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{what}: not within 10 s");
}

/// Bevy's file watcher (rigplay's `file_watcher` feature) on a folder of real files: the
/// package rewritten on disk by another program, half written, completed, its `.meta` written
/// and changed, saved by a rename, deleted and written back, with no reload asked for in code.
/// (Bevy 0.19.1 does not reload an asset whose `.meta` is deleted: its settings stay until the
/// file changes.)
#[cfg(feature = "file_watcher")]
#[test]
fn bevys_file_watcher_reloads_a_package_another_program_rewrites() {
    use bevy::animation::AnimationPlugin;
    use bevy::asset::AssetPlugin;
    use bevy::time::TimeUpdateStrategy;
    use std::io::Write;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("watched-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("test.ifp");
    std::fs::write(&file, lift(1, false)).unwrap();
    crate::task_pools();
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.to_string_lossy().into_owned(),
            watch_for_changes_override: Some(true),
            ..default()
        },
        TransformPlugin,
        AnimationPlugin,
        IfpPlugin,
    ));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        0.1,
    )));
    app.finish();
    app.cleanup();
    let ifp: Handle<Ifp> = app.world().resource::<AssetServer>().load("test.ifp");
    let clip: Handle<RigClip> = app.world().resource::<AssetServer>().load("test.ifp#lift");
    let mut paused = Playback::looping();
    paused.paused = true;
    paused.time = 0.5;
    let character = app
        .world_mut()
        .spawn((GtaSkeleton::SA, SkeletalClip::new(clip), paused))
        .id();
    let height = |app: &mut App| root_of(app, character).translation.y;
    until_seconds(&mut app, "first load", |app| {
        (height(app) - 0.5).abs() < 1e-3
    });

    // Rewritten in place: rises 2 m, so 1 m at the paused playhead.
    std::fs::write(&file, lift(2, false)).unwrap();
    until_seconds(&mut app, "rewritten", |app| {
        (height(app) - 1.0).abs() < 1e-3
    });

    // Half written, the writer pausing longer than the watcher waits: the half file fails to
    // load and the last good version stays; the completed file is then shown.
    let whole = lift(3, false);
    let mut writer = std::fs::File::create(&file).unwrap();
    writer.write_all(&whole[..whole.len() / 2]).unwrap();
    writer.flush().unwrap();
    until_seconds(&mut app, "half written", |app| {
        matches!(
            app.world().resource::<AssetServer>().load_state(ifp.id()),
            LoadState::Failed(_)
        )
    });
    assert!(
        (height(&mut app) - 1.0).abs() < 1e-3,
        "the last good clip plays on"
    );
    writer.write_all(&whole[whole.len() / 2..]).unwrap();
    drop(writer);
    until_seconds(&mut app, "completed", |app| {
        (height(app) - 1.5).abs() < 1e-3
    });

    // The `.meta` written beside it: the clip now plays in place (its root's GTA X and Y
    // movement removed), so the root stays down.
    std::fs::write(
        dir.join("test.ifp.meta"),
        r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::IfpLoader",
        settings: (clips: { "lift": (root_motion: InPlace) }),
    ),
)"#,
    )
    .unwrap();
    until_seconds(&mut app, "meta written", |app| height(app).abs() < 1e-3);
    let playback = app.world().get::<Playback>(character).unwrap();
    assert_eq!((playback.time, playback.paused), (0.5, true));

    // Saved the way many editors (and rigplay's converter) save: a new file renamed over the
    // old one.
    std::fs::write(
        dir.join("test.ifp.meta"),
        r#"(meta_format_version: "1.0", asset: Load(loader: "rigplay::plugin::IfpLoader", settings: ()))"#,
    )
    .unwrap();
    until_seconds(&mut app, "meta reset", |app| {
        (height(app) - 1.5).abs() < 1e-3
    });
    std::fs::write(dir.join("test.ifp.new"), lift(4, false)).unwrap();
    std::fs::rename(dir.join("test.ifp.new"), &file).unwrap();
    until_seconds(&mut app, "renamed over", |app| {
        (height(app) - 2.0).abs() < 1e-3
    });

    // Deleted: the last good version stays (past the watcher's 300 ms); written back, it loads.
    std::fs::remove_file(&file).unwrap();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(800) {
        app.update();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(app.world().resource::<Assets<Ifp>>().contains(&ifp));
    assert!(
        (height(&mut app) - 2.0).abs() < 1e-3,
        "the deleted file's clip plays on"
    );
    std::fs::write(&file, lift(1, false)).unwrap();
    until_seconds(&mut app, "written back", |app| {
        (height(app) - 0.5).abs() < 1e-3
    });
    std::fs::remove_dir_all(&dir).unwrap();
}
