//! The Playback system: modes, events, seeking, virtual time, cross-fades, and agreement with
//! Bevy's AnimationPlayer path.

use crate::bevy_ifp::{app, bone, lift_ifp, load, same_rotation};
use crate::bevy_layers::{bones_of, paused};
use bevy::prelude::*;
use rigplay::animation::{WrapMode, blend};
use rigplay::plugin::*;
use std::sync::{Arc, Mutex};

fn local(app: &mut App, name: &str, nth: usize) -> Transform {
    let world = app.world_mut();
    let mut q = world.query::<(&Name, &Transform, &ChildOf)>();
    let mut found: Vec<(Entity, Transform)> = q
        .iter(world)
        .filter(|(n, _, _)| n.as_str() == name)
        .map(|(_, t, c)| (c.parent(), *t))
        .collect();
    found.sort_by_key(|(e, _)| *e);
    found[nth].1
}

/// An app with the bundled SA package loaded as `sa.ifp`: its idle's handle, and the idle as
/// the core reads it (the reference the tests sample).
fn sa_idle_app() -> (App, Handle<RigClip>, Arc<rigplay::animation::Clip>) {
    let files = crate::assets::sample_files();
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], 1.0 / 60.0);
    let ifp: Handle<Ifp> = load(&mut app, "sa.ifp");
    let idle: Handle<RigClip> = load(&mut app, "sa.ifp#idle");
    let clip = app
        .world()
        .resource::<Assets<Ifp>>()
        .get(&ifp)
        .unwrap()
        .clip("idle")
        .unwrap()
        .clip
        .clone();
    (app, idle, clip)
}

#[test]
fn playback_poses_match_the_core_sampler_and_seek_shows_at_once() {
    let (mut app, idle, clip) = sa_idle_app();
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(idle),
            Playback::looping(),
        ))
        .id();
    let skeleton = rigplay::skeleton::Skeleton::gta_sa();
    let binding = skeleton.bind(&clip);
    for _ in 0..3 {
        app.update();
    }
    for t in [0.0, 0.37, 1.5, 1.99] {
        app.world_mut()
            .get_mut::<Playback>(character)
            .unwrap()
            .paused = true;
        app.world_mut()
            .get_mut::<Playback>(character)
            .unwrap()
            .seek(t);
        app.update();
        for (track, target) in binding.targets.iter().enumerate() {
            let name = &skeleton.bones[target.unwrap()].name;
            let got = bone(&mut app, name).2.rotation;
            let want = clip
                .sample_track(track, clip.wrap_time(t, WrapMode::Loop))
                .rotation
                .unwrap();
            assert!(
                (Vec4::from(got) - Vec4::from(want)).abs().max_element() < 1e-6,
                "{name} at {t}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn modes_speed_events_and_virtual_time() {
    let mut app = app(&[("test.ifp", lift_ifp())], &[], 0.1);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let looped = Arc::new(Mutex::new(0));
    let finished = Arc::new(Mutex::new(0));
    let (l, f) = (looped.clone(), finished.clone());
    app.add_observer(move |_: On<PlaybackLooped>| *l.lock().unwrap() += 1);
    app.add_observer(move |_: On<PlaybackFinished>| *f.lock().unwrap() += 1);
    let looping = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift.clone()),
            Playback::looping(),
        ))
        .id();
    let once = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift.clone()),
            Playback::looping().with_mode(PlayMode::Once),
        ))
        .id();
    let backwards = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift.clone()),
            Playback::looping()
                .with_mode(PlayMode::PingPong)
                .with_speed(2.0),
        ))
        .id();
    // The first update has no time step (Bevy's manual time starts there); 25 more of 0.1 s.
    for _ in 0..26 {
        app.update();
    }
    let p = |app: &App, e| app.world().get::<Playback>(e).unwrap().clone();
    // Looping: 2.5 s of a 1 s clip is 0.5 s in, after 2 wraps. (The first frame binds.)
    assert!(
        (p(&app, looping).time - 0.5).abs() < 1e-4,
        "{}",
        p(&app, looping).time
    );
    assert!(p(&app, once).is_finished() && p(&app, once).time == 1.0);
    // Ping-pong at 2x: 5 s of travel over a 1 s clip: ends back at 1.0 after 5 turns... within float error.
    let pp = p(&app, backwards).time;
    assert!((0.0..=1.0).contains(&pp));
    assert_eq!(*finished.lock().unwrap(), 1);
    assert!(
        *looped.lock().unwrap() >= 2 + 4,
        "looped {}",
        *looped.lock().unwrap()
    );

    // Pausing virtual time pauses every rig.
    app.world_mut().resource_mut::<Time<Virtual>>().pause();
    let before = p(&app, looping).time;
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(p(&app, looping).time, before);
    app.world_mut().resource_mut::<Time<Virtual>>().unpause();
    app.update();
    app.update();
    assert!(p(&app, looping).time != before);
}

/// The lift clip (1 s) on an SA skeleton, held at 1 s (pelvis 90° about Z) with speed 0, then
/// faded over 1 s into the same clip at 0 s (pelvis identity): the app (frames of 0.1 s), the
/// character, and the clip by name and by index, before the fade's first frame.
fn held_lift_fade() -> (App, Entity, [Handle<RigClip>; 2]) {
    let mut app = app(&[("test.ifp", lift_ifp())], &[], 0.1);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let lift0: Handle<RigClip> = load(&mut app, "test.ifp#Clip0");
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift.clone()),
            Playback::looping(),
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    {
        let mut p = app.world_mut().get_mut::<Playback>(character).unwrap();
        p.seek(1.0);
        p.speed = 0.0;
    }
    app.update();
    app.world_mut()
        .get_mut::<SkeletalClip>(character)
        .unwrap()
        .cross_fade(lift.clone(), 1.0);
    (app, character, [lift, lift0])
}

#[test]
fn cross_fade_blends_by_weighted_sum() {
    // Halfway through the fade the pelvis is at 45°.
    let (mut app, character, _) = held_lift_fade();
    for _ in 0..5 {
        app.update();
    }
    let w = app
        .world()
        .get::<SkeletalClip>(character)
        .unwrap()
        .fade_weight()
        .unwrap();
    assert!((w - 0.5).abs() < 1e-4, "{w}");
    let r = local(&mut app, " Pelvis", 0).rotation;
    let expected = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    assert!(
        r.abs_diff_eq(expected, 1e-5) || r.abs_diff_eq(-expected, 1e-5),
        "{r}"
    );
    for _ in 0..6 {
        app.update();
    }
    assert!(
        app.world()
            .get::<SkeletalClip>(character)
            .unwrap()
            .fade_weight()
            .is_none()
    );
}

#[test]
fn playback_and_bevy_animation_player_give_the_same_poses() {
    let files = crate::assets::sample_files();
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], 0.047);
    let idle: Handle<RigClip> = load(&mut app, "sa.ifp#idle");
    let ours = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(idle.clone()),
            Playback::looping(),
        ))
        .id();
    let bevys = app
        .world_mut()
        .spawn((GtaSkeleton::SA, PlayAnimation::looping(idle)))
        .id();
    for _ in 0..3 {
        app.update();
    }
    let mut worst = 0.0f32;
    for i in 0..40 {
        // The same time on both paths (looped past the 2 s clip for some).
        let t = i as f32 * 0.173;
        let mut p = app.world_mut().get_mut::<Playback>(ours).unwrap();
        p.paused = true;
        p.seek(t % 2.0);
        let node = app.world().get::<PlayingNode>(bevys).unwrap().0;
        let mut player = app.world_mut().get_mut::<AnimationPlayer>(bevys).unwrap();
        player
            .animation_mut(node)
            .unwrap()
            .pause()
            .set_seek_time(t % 2.0);
        app.update();
        for name in [" Head", " L UpperArm", " R ForeArm", " Spine1", "Normal"] {
            let (a, b) = (local(&mut app, name, 0), local(&mut app, name, 1));
            let sign = a.rotation.dot(b.rotation).signum();
            worst = worst.max(
                (Vec4::from(a.rotation) - Vec4::from(b.rotation) * sign)
                    .abs()
                    .max_element(),
            );
            worst = worst.max((a.translation - b.translation).abs().max_element());
        }
    }
    assert!(worst < 1e-5, "worst difference {worst}");
}

#[test]
fn playback_extracts_root_motion_across_loops() {
    let meta = r#"(
    meta_format_version: "1.0",
    asset: Load(
        loader: "rigplay::plugin::IfpLoader",
        settings: ( clips: { "lift": (looping: true, root_motion: Extract(z: false)) } ),
    ),
)"#;
    let mut app = app(&[("test.ifp", lift_ifp())], &[("test.ifp", meta)], 0.1);
    let lift: Handle<RigClip> = load(&mut app, "test.ifp#lift");
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(lift),
            Playback::looping(),
            RootMotion::applied(),
        ))
        .id();
    app.update(); // binds
    let start = app.world().get::<Playback>(character).unwrap().time;
    for _ in 0..17 {
        app.update();
    }
    // 1.7 s of a clip moving 1 m/s along GTA +Y (Bevy -Z), looping every second.
    let moved = app.world().get::<Transform>(character).unwrap().translation;
    let played = 1.7 - start;
    assert!(
        (moved - Vec3::new(0.0, 0.0, -played)).length() < 1e-4,
        "moved {moved}, played {played}"
    );
    assert!(
        (bone(&mut app, "Normal").2.translation).length() < 1e-6,
        "the root bone stays in place"
    );
}

/// A cross-fade between two clips that both keep playing: at every frame of the fade, each
/// bone is the normalised weighted sum of the two clips' core-sampler poses at their own times.
#[test]
fn a_moving_cross_fade_blends_both_clips_at_their_own_times() {
    let files = crate::assets::sample_files();
    let dt = 0.047;
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], dt);
    let ifp: Handle<Ifp> = load(&mut app, "sa.ifp");
    let walk: Handle<RigClip> = load(&mut app, "sa.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa.ifp#idle");
    let (walk_clip, idle_clip) = {
        let ifp = app.world().resource::<Assets<Ifp>>().get(&ifp).unwrap();
        (
            ifp.clip("walk").unwrap().clip.clone(),
            ifp.clip("idle").unwrap().clip.clone(),
        )
    };
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(walk),
            Playback::looping(),
        ))
        .id();
    for _ in 0..4 {
        app.update();
    }
    let t0 = app.world().get::<Playback>(character).unwrap().time;
    let fade = 0.5;
    app.world_mut()
        .get_mut::<SkeletalClip>(character)
        .unwrap()
        .cross_fade(idle, fade);
    let skeleton = rigplay::skeleton::Skeleton::gta_sa();
    let rest = skeleton.rest_pose();
    let pose_of = |clip: &rigplay::animation::Clip, t: f32| {
        let binding = skeleton.bind(clip);
        let mut local = rest.clone();
        for (track, target) in binding.targets.iter().enumerate() {
            if let (Some(b), Some(r)) = (target, clip.sample_track(track, t).rotation) {
                local[*b].rotation = r;
            }
        }
        local
    };
    for k in 1..=9 {
        app.update();
        let old_t = walk_clip.wrap_time(t0 + k as f32 * dt, WrapMode::Loop);
        let new_t = idle_clip.wrap_time(k as f32 * dt, WrapMode::Loop);
        let w = (k as f32 * dt / fade).min(1.0);
        let (old, new) = (pose_of(&walk_clip, old_t), pose_of(&idle_clip, new_t));
        for (b, bone) in skeleton.bones.iter().enumerate() {
            let expected = if w >= 1.0 {
                new[b].rotation
            } else {
                blend(old[b], new[b], w).rotation
            };
            let got = local(&mut app, &bone.name, 0).rotation;
            assert!(
                got.abs_diff_eq(expected, 2e-5) || got.abs_diff_eq(-expected, 2e-5),
                "frame {k}, {}: {got} vs {expected}",
                bone.name
            );
        }
    }
}

fn pelvis_angle(app: &mut App) -> f32 {
    let r = local(app, " Pelvis", 0).rotation;
    r.angle_between(Quat::IDENTITY)
        .min(r.angle_between(-Quat::IDENTITY))
}

/// A fade started during a fade starts from the pose on screen (no jump); a paused playback
/// holds its fade; a seek past the end of a paused looping clip wraps; a new clip assigned after
/// a `Once` clip finished plays.
#[test]
fn fades_pause_and_restart_from_the_pose_on_screen() {
    // Held at 1 s (pelvis 90°), fading over 1 s into the clip held at 0 s (pelvis 0°).
    let (mut app, character, [lift, lift0]) = held_lift_fade();
    for _ in 0..5 {
        app.update();
    }
    let halfway = pelvis_angle(&mut app);
    assert!(
        (halfway - std::f32::consts::FRAC_PI_4).abs() < 1e-4,
        "{halfway}"
    );

    // Paused: the fade holds.
    app.world_mut()
        .get_mut::<Playback>(character)
        .unwrap()
        .paused = true;
    for _ in 0..3 {
        app.update();
    }
    let w = app
        .world()
        .get::<SkeletalClip>(character)
        .unwrap()
        .fade_weight();
    assert!((w.unwrap() - 0.5).abs() < 1e-4, "{w:?}");
    assert!((pelvis_angle(&mut app) - halfway).abs() < 1e-5);
    app.world_mut()
        .get_mut::<Playback>(character)
        .unwrap()
        .paused = false;

    // A new fade from the 45° on screen to 0°: one frame in (weight 0.1) the pelvis is at the
    // normalised blend of 45° and 0°, not back at 0°.
    app.world_mut()
        .get_mut::<SkeletalClip>(character)
        .unwrap()
        .cross_fade(lift.clone(), 1.0);
    app.update();
    let on_screen = rigplay::animation::BonePose {
        rotation: Quat::from_rotation_z(halfway),
        ..Default::default()
    };
    let expected = blend(on_screen, rigplay::animation::BonePose::default(), 0.1).rotation;
    let got = pelvis_angle(&mut app);
    assert!(
        (got - expected.angle_between(Quat::IDENTITY)).abs() < 1e-4,
        "{got} vs {}",
        expected.angle_between(Quat::IDENTITY)
    );
    for _ in 0..12 {
        app.update();
    }

    // Paused, a seek past the end of the 1 s looping clip lands where playing would.
    {
        let mut p = app.world_mut().get_mut::<Playback>(character).unwrap();
        p.paused = true;
        p.seek(2.25);
    }
    app.update();
    let t = app.world().get::<Playback>(character).unwrap().time;
    assert!((t - 0.25).abs() < 1e-5, "{t}");

    // Once to the end, then another clip: it plays.
    {
        let mut p = app.world_mut().get_mut::<Playback>(character).unwrap();
        p.paused = false;
        p.speed = 1.0;
        p.mode = PlayMode::Once;
    }
    for _ in 0..12 {
        app.update();
    }
    assert!(
        app.world()
            .get::<Playback>(character)
            .unwrap()
            .is_finished()
    );
    {
        app.world_mut()
            .get_mut::<SkeletalClip>(character)
            .unwrap()
            .clip = lift0;
        app.world_mut().get_mut::<Playback>(character).unwrap().time = 0.0;
    }
    app.update();
    app.update();
    let p = app.world().get::<Playback>(character).unwrap();
    assert!(
        !p.is_finished() && p.time > 0.05,
        "{} {}",
        p.time,
        p.is_finished()
    );
}

#[test]
fn a_held_blend_shows_the_weighted_pose_of_both_clips_at_the_playhead() {
    // Walk and idle held at 30 % idle: every animated bone's rotation is the blend of the two
    // clips sampled at the playhead's time, as the core's blend computes it, and it follows a
    // seek; clearing the blend goes back to the walk alone.
    use crate::bevy_ifp::same_rotation;
    use rigplay::animation::BonePose;
    let files = crate::assets::sample_files();
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], 1.0 / 60.0);
    let ifp: Handle<Ifp> = load(&mut app, "sa.ifp");
    let walk: Handle<RigClip> = load(&mut app, "sa.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa.ifp#idle");
    let character = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(walk.clone()),
            Playback::looping(),
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    app.world_mut()
        .get_mut::<SkeletalClip>(character)
        .unwrap()
        .hold_blend(idle.clone(), 0.3);
    let (walk_clip, idle_clip) = {
        let ifp = app.world().resource::<Assets<Ifp>>().get(&ifp).unwrap();
        (ifp.clips[0].clip.clone(), ifp.clips[1].clip.clone())
    };
    let skeleton = rigplay::skeleton::Skeleton::gta_sa();
    for t in [0.25f32, 0.8, 1.1] {
        {
            let mut p = app.world_mut().get_mut::<Playback>(character).unwrap();
            p.paused = true;
            p.seek(t);
        }
        app.update();
        app.update();
        let (w, _) = {
            let s = app.world().get::<SkeletalClip>(character).unwrap();
            let (other, w) = s.held_blend().expect("held");
            assert_eq!(other, &idle);
            (w, ())
        };
        for (track, slot) in skeleton.bind(&walk_clip).targets.iter().enumerate() {
            let Some(b) = *slot else { continue };
            let name = skeleton.bones[b].name.clone();
            let idle_track = idle_clip
                .tracks()
                .iter()
                .position(|tr| skeleton.find(&tr.bone) == Some(b));
            let Some(idle_track) = idle_track else {
                continue;
            };
            let pose = |clip: &rigplay::animation::Clip, i: usize, t: f32| {
                let s = clip.sample_track(i, t);
                BonePose {
                    rotation: s.rotation.unwrap_or(skeleton.bones[b].rest.rotation),
                    ..skeleton.bones[b].rest
                }
            };
            let expected = blend(
                pose(&idle_clip, idle_track, t),
                pose(&walk_clip, track, t),
                1.0 - w,
            );
            let (_, _, transform) = bone(&mut app, &name);
            assert!(
                same_rotation(transform.rotation, expected.rotation, 1e-4),
                "{name} at {t}: {} vs {}",
                transform.rotation,
                expected.rotation
            );
        }
    }
    app.world_mut()
        .get_mut::<SkeletalClip>(character)
        .unwrap()
        .clear_blend();
    app.update();
    let at = app.world().get::<Playback>(character).unwrap().time;
    let (_, _, t) = bone(&mut app, " L Thigh");
    let t = *t;
    let thigh = walk_clip
        .tracks()
        .iter()
        .position(|tr| tr.bone.name == " L Thigh")
        .unwrap();
    let walk_only = walk_clip.sample_track(thigh, at).rotation.unwrap();
    assert!(same_rotation(t.rotation, walk_only, 1e-4));
}

/// An app with the bundled SA package (`sa_ped.ifp`), stepping `step` seconds a frame.
fn sa_app(step: f32) -> App {
    let sa = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims/sa_ped.ifp"),
    )
    .unwrap();
    app(&[("sa_ped.ifp", sa)], &[], step)
}

/// A `GtaSkeleton` and a `CrowdCharacter` playing `clip` from time `t`, placed at `skeleton_at`
/// and `crowd_at`.
fn skeleton_and_crowd(
    app: &mut App,
    clip: &Handle<RigClip>,
    t: f32,
    skeleton_at: Transform,
    crowd_at: Transform,
) -> (Entity, Entity) {
    let mut start = Playback::looping();
    start.time = t;
    let world = app.world_mut();
    let skeleton = world
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(clip.clone()),
            start.clone(),
            skeleton_at,
        ))
        .id();
    let crowd = world
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, clip.clone()),
            start,
            crowd_at,
        ))
        .id();
    (skeleton, crowd)
}

/// The largest distance between a joint of the crowd character `crowd` and the same joint of
/// the skeleton `skeleton`, each relative to its character, with the two playheads at one time.
fn crowd_gap(app: &mut App, skeleton: Entity, crowd: Entity) -> f32 {
    let world = app.world_mut();
    let root = *world.get::<GlobalTransform>(skeleton).unwrap();
    let bones = world.get::<SkeletonBones>(skeleton).unwrap().0.clone();
    let pose = world.get::<CrowdPose>(crowd).unwrap().clone();
    assert_eq!(pose.bones.len(), bones.len());
    let t = world.get::<Playback>(crowd).unwrap().time;
    assert_eq!(t, world.get::<Playback>(skeleton).unwrap().time);
    bones
        .iter()
        .enumerate()
        .map(|(b, e)| {
            let g = world.get::<GlobalTransform>(*e).unwrap();
            let want = root.affine().inverse().transform_point3(g.translation());
            (want - Vec3::from(pose.bones[b].translation)).length()
        })
        .fold(0.0, f32::max)
}

/// The crowd path poses a character like the per-bone path: the bundled SA walk on a
/// `CrowdCharacter` (no bone entities) and on a `GtaSkeleton` at the same playhead give every
/// joint at the same place relative to the character, while playing forward (the sampler's
/// cursor across a loop wrap), after seeks back and forth, with the characters placed and turned
/// differently.
#[test]
fn a_crowd_character_poses_like_a_gta_skeleton_without_bone_entities() {
    let mut app = sa_app(1.0 / 60.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (skeleton, crowd) = skeleton_and_crowd(
        &mut app,
        &walk,
        1.1,
        Transform::from_xyz(-3.0, 0.0, 2.0),
        Transform::from_xyz(4.0, 0.5, -1.0).with_rotation(Quat::from_rotation_y(2.0)),
    );
    let mut largest = 0.0f32;
    let mut check = |app: &mut App| {
        let d = crowd_gap(app, skeleton, crowd);
        assert!(d < 1e-4, "{d} m");
        largest = largest.max(d);
    };
    // Both bind on their first frames.
    app.update();
    app.update();
    for _ in 0..20 {
        app.update();
        check(&mut app);
    }
    for t in [0.2, 0.95, 0.05] {
        for e in [skeleton, crowd] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        check(&mut app);
    }
    // Drawn where the character stands: the first line starts at a joint moved by its transform.
    let pose = app.world().get::<CrowdPose>(crowd).unwrap().clone();
    assert_eq!(pose.segments().count(), pose.bones.len() - 1);
    println!("largest crowd vs skeleton joint difference: {largest:e} m");
}

/// A crowd character is bound again when something changes, not every frame: its clip swapped
/// through `CrowdCharacter`, a playhead put on anew (without its length), and its clip replaced
/// in the assets (as a reload replaces it) each show in its pose as in a `GtaSkeleton` given the
/// same.
#[test]
fn a_crowd_character_is_bound_again_when_its_clip_changes_or_is_replaced() {
    let mut app = sa_app(1.0 / 60.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let wave: Handle<RigClip> = load(&mut app, "sa_ped.ifp#wave");
    let (skeleton, crowd) = skeleton_and_crowd(
        &mut app,
        &walk,
        0.3,
        Transform::IDENTITY,
        Transform::from_xyz(2.0, 0.0, 0.0),
    );
    app.update();
    app.update();
    for _ in 0..5 {
        app.update();
    }
    assert!(crowd_gap(&mut app, skeleton, crowd) < 1e-4);
    let length = |app: &App, clip: &Handle<RigClip>| {
        let clips = app.world().resource::<Assets<RigClip>>();
        clips.get(clip).unwrap().info().clip.duration()
    };
    // The clip swapped on both characters.
    app.world_mut()
        .get_mut::<CrowdCharacter>(crowd)
        .unwrap()
        .clip = wave.clone();
    app.world_mut()
        .entity_mut(skeleton)
        .insert(SkeletalClip::new(wave.clone()));
    for _ in 0..3 {
        app.update();
    }
    assert!(crowd_gap(&mut app, skeleton, crowd) < 1e-4);
    let duration = app.world().get::<Playback>(crowd).unwrap().duration;
    assert_eq!(duration, Some(length(&app, &wave)));
    // A playhead put on anew, at one time on both: the crowd's learns its length again.
    for e in [skeleton, crowd] {
        let mut fresh = Playback::looping();
        fresh.time = 0.5;
        app.world_mut().entity_mut(e).insert(fresh);
    }
    app.update();
    let duration = app.world().get::<Playback>(crowd).unwrap().duration;
    assert_eq!(duration, Some(length(&app, &wave)));
    assert!(crowd_gap(&mut app, skeleton, crowd) < 1e-4);
    let wave_length = length(&app, &wave);
    // The wave replaced in the assets by the walk (as a reload replaces a clip): both
    // characters show the walk under the wave's handle.
    let walk_asset = app
        .world()
        .resource::<Assets<RigClip>>()
        .get(&walk)
        .unwrap()
        .clone();
    app.world_mut()
        .resource_mut::<Assets<RigClip>>()
        .insert(wave.id(), walk_asset)
        .unwrap();
    for _ in 0..3 {
        app.update();
    }
    // (The walk and the wave differ in length: the crowd's playhead took the walk's.)
    assert_ne!(length(&app, &walk), wave_length);
    let duration = app.world().get::<Playback>(crowd).unwrap().duration;
    assert_eq!(duration, Some(length(&app, &walk)));
    assert!(crowd_gap(&mut app, skeleton, crowd) < 1e-4);
}

/// Extracted root motion on the crowd path: the SA walk (extracted in X and Y by the bundled
/// `.meta`) moves a `CrowdCharacter` with `RootMotion::applied()` exactly as it moves a
/// `GtaSkeleton`, turned the way each character faces, across loop wraps.
#[test]
fn a_crowd_characters_extracted_root_motion_moves_it_like_a_gta_skeleton() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sa = std::fs::read(root.join("assets/anims/sa_ped.ifp")).unwrap();
    let meta = std::fs::read_to_string(root.join("assets/anims/sa_ped.ifp.meta")).unwrap();
    let mut app = app(&[("sa_ped.ifp", sa)], &[("sa_ped.ifp", &meta)], 1.0 / 30.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let turn = Quat::from_rotation_y(0.7);
    let skeleton = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(walk.clone()),
            Playback::looping(),
            RootMotion::applied(),
            Transform::from_xyz(-3.0, 0.0, 2.0).with_rotation(turn),
        ))
        .id();
    let crowd = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            Playback::looping(),
            RootMotion::applied(),
            Transform::from_xyz(4.0, 0.0, -1.0).with_rotation(turn),
        ))
        .id();
    // 3 s at 30 fps: the walk (about 1.07 s) loops twice.
    for _ in 0..90 {
        app.update();
    }
    let world = app.world();
    let moved = |e: Entity, from: Vec3| world.get::<Transform>(e).unwrap().translation - from;
    let by_skeleton = moved(skeleton, Vec3::new(-3.0, 0.0, 2.0));
    let by_crowd = moved(crowd, Vec3::new(4.0, 0.0, -1.0));
    assert!(
        by_skeleton.length() > 2.0,
        "the walk moved the skeleton {by_skeleton}"
    );
    assert!(
        (by_skeleton - by_crowd).length() < 1e-4,
        "{by_crowd} vs {by_skeleton}"
    );
    // Forward for a ped turned by `turn` is `turn · −Z`; the walk does not rise.
    let forward = turn * Vec3::NEG_Z;
    assert!(by_crowd.normalize().dot(forward) > 0.99, "{by_crowd}");
    let motion = world.get::<RootMotion>(crowd).unwrap();
    assert!((motion.total - world.get::<RootMotion>(skeleton).unwrap().total).length() < 1e-4);
}

/// Cross-fades on the crowd path: a `CrowdCharacter` and a `GtaSkeleton` (bone entities,
/// `SkeletalClip`) walking at the same playhead both cross-fade to the idle over 0.5 s, and,
/// 0.2 s into it, to the wave over 0.3 s (a fade during a fade: the pose shown fades out). Every frame,
/// through both fades and after, every joint of the crowd character is where the skeleton's is
/// (relative to each character), and the fade's weight shows: mid-fade the pose is neither clip's.
#[test]
fn a_crowd_character_cross_fades_as_a_gta_skeleton_does() {
    let mut app = sa_app(1.0 / 30.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let idle: Handle<RigClip> = load(&mut app, "sa_ped.ifp#idle");
    let wave: Handle<RigClip> = load(&mut app, "sa_ped.ifp#wave");
    let (skeleton, crowd) = skeleton_and_crowd(
        &mut app,
        &walk,
        0.3,
        Transform::default(),
        Transform::from_xyz(4.0, 0.0, -1.0),
    );
    // A crowd character that switches to the idle at once: the fade's pose differs from it.
    let switched = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(GtaGame::Sa, walk),
            Playback::looping(),
            Transform::from_xyz(8.0, 0.0, 0.0),
        ))
        .id();
    let farthest = |app: &mut App| crowd_gap(app, skeleton, crowd);
    for _ in 0..4 {
        app.update();
    }
    assert!(farthest(&mut app) < 1e-4);
    let fade = |app: &mut App, clip: &Handle<RigClip>, seconds: f32| {
        let world = app.world_mut();
        world
            .get_mut::<SkeletalClip>(skeleton)
            .unwrap()
            .cross_fade(clip.clone(), seconds);
        world
            .get_mut::<CrowdCharacter>(crowd)
            .unwrap()
            .cross_fade(clip.clone(), seconds);
    };
    fade(&mut app, &idle, 0.5);
    app.world_mut()
        .get_mut::<CrowdCharacter>(switched)
        .unwrap()
        .clip = idle.clone();
    let mut largest = 0.0f32;
    let mut mid_fade_gap = 0.0f32;
    for frame in 0..30 {
        if frame == 6 {
            fade(&mut app, &wave, 0.3);
        }
        app.update();
        largest = largest.max(farthest(&mut app));
        if frame == 3 {
            // 4 frames into the idle's fade (the walk's pose at 1 − 4/15): not the idle.
            let world = app.world();
            let a = &world.get::<CrowdPose>(crowd).unwrap().bones;
            let b = &world.get::<CrowdPose>(switched).unwrap().bones;
            mid_fade_gap = a
                .iter()
                .zip(b)
                .map(|(x, y)| (x.translation - y.translation).length())
                .fold(0.0, f32::max);
        }
    }
    println!(
        "crowd vs skeleton through two cross-fades: {largest:e} m; mid-fade from the idle: {mid_fade_gap} m"
    );
    assert!(largest < 1e-4, "{largest} m");
    assert!(mid_fade_gap > 0.01, "the fade shows: {mid_fade_gap} m");
}

/// Far crowd characters at half rate (`CrowdLod`): with a viewer at the origin and
/// `half_rate_beyond` 40 m, two characters 100 m away (one of even and one of odd entity index)
/// are each posed on alternate frames, on frames of opposite parity, and hold their last pose
/// in between; a character 10 m away is posed every frame. Posed, a far character is exactly
/// where the near one is (the same clip at the same time). Every playhead advances every frame.
/// With the viewer gone, every character is posed every frame; a character just spawned far away
/// is posed on its first frame.
#[test]
fn far_crowd_characters_are_posed_every_other_frame_and_hold_their_pose_between() {
    let mut app = sa_app(1.0 / 30.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    app.insert_resource(CrowdLod {
        half_rate_beyond: Some(40.0),
    });
    let viewer = app
        .world_mut()
        .spawn((CrowdViewer, Transform::default()))
        .id();
    let spawn = |app: &mut App, x: f32| {
        app.world_mut()
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                Playback::looping(),
                Transform::from_xyz(x, 0.0, 0.0),
            ))
            .id()
    };
    let near = spawn(&mut app, 10.0);
    let mut far = [spawn(&mut app, 100.0), spawn(&mut app, -100.0)];
    // One far character of each entity-index parity.
    if far[0].index_u32() % 2 == far[1].index_u32() % 2 {
        far[1] = spawn(&mut app, -100.0);
    }
    assert_ne!(far[0].index_u32() % 2, far[1].index_u32() % 2);
    // Bind, and let the transforms of the first frame propagate.
    for _ in 0..3 {
        app.update();
    }
    let state = |app: &App, e: Entity| {
        let world = app.world();
        (
            world.get::<CrowdPose>(e).unwrap().bones.clone(),
            world.get::<Playback>(e).unwrap().time,
        )
    };
    let mut last: Vec<_> = far.iter().map(|&e| state(&app, e)).collect();
    let mut posed_frames = [Vec::new(), Vec::new()];
    for frame in 0..8 {
        let before_near = state(&app, near);
        app.update();
        let near_now = state(&app, near);
        assert!(near_now.1 != before_near.1, "the near playhead moves");
        assert!(
            near_now.0 != before_near.0,
            "frame {frame}: the near pose follows it"
        );
        for (k, &e) in far.iter().enumerate() {
            let now = state(&app, e);
            assert_eq!(now.1, near_now.1, "every playhead advances every frame");
            if now.0 != last[k].0 {
                // Posed this frame: as the near character at the same time, joint for joint.
                assert_eq!(now.0, near_now.0, "far character {k}, frame {frame}");
                posed_frames[k].push(frame);
            }
            last[k] = now;
        }
    }
    // Alternate frames, opposite parities: between them, every frame is covered once.
    assert_eq!(posed_frames[0].len(), 4, "{posed_frames:?}");
    assert_eq!(posed_frames[1].len(), 4, "{posed_frames:?}");
    for k in 0..2 {
        assert!(
            posed_frames[k].windows(2).all(|w| w[1] - w[0] == 2),
            "{posed_frames:?}"
        );
    }
    assert_ne!(posed_frames[0][0] % 2, posed_frames[1][0] % 2);
    // A character spawned far away is posed on the frame it binds.
    let late = spawn(&mut app, 200.0);
    app.update();
    app.update();
    assert!(
        app.world().get::<CrowdPose>(late).unwrap().bones.len() == 32
            && state(&app, late).0 != vec![bevy::math::Affine3A::IDENTITY; 32],
        "posed when bound"
    );
    // No viewer: every character every frame.
    app.world_mut().despawn(viewer);
    for _ in 0..3 {
        let before: Vec<_> = far.iter().map(|&e| state(&app, e).0).collect();
        app.update();
        for (k, &e) in far.iter().enumerate() {
            assert_ne!(
                state(&app, e).0,
                before[k],
                "far character {k} without a viewer"
            );
        }
    }
}

#[test]
fn switching_to_a_clip_that_drives_fewer_bones_leaves_the_others_to_the_game() {
    // The playback system writes the bones a clip drives in storage order (each bone tagged
    // with its character when bound). After a switch to a clip that drives only the root and
    // pelvis, the bones only the first clip drove are set to rest once, then left alone: a
    // value the game writes there stays, while the driven bones keep following the clip. A
    // second character bound to the same clip is posed at its own time.
    let files = crate::assets::sample_files();
    let mut app = app(
        &[("sa.ifp", files[0].1.clone()), ("lift.ifp", lift_ifp())],
        &[],
        1.0 / 60.0,
    );
    let idle: Handle<RigClip> = load(&mut app, "sa.ifp#idle");
    let lift: Handle<RigClip> = load(&mut app, "lift.ifp#lift");
    let spawn = |app: &mut App, clip: &Handle<RigClip>, t: f32| {
        let mut playback = Playback::looping();
        playback.seek(t);
        playback.paused = true;
        app.world_mut()
            .spawn((GtaSkeleton::SA, SkeletalClip::new(clip.clone()), playback))
            .id()
    };
    let a = spawn(&mut app, &idle, 0.4);
    for _ in 0..3 {
        app.update();
    }
    // A character's bone by name: its `SkeletonBones` are in the SA skeleton's bone order.
    let sa = rigplay::skeleton::Skeleton::gta_sa();
    let bone_of = |app: &mut App, character: Entity, name: &str| -> Entity {
        let index = sa.bones.iter().position(|b| b.name == name).unwrap();
        app.world().get::<SkeletonBones>(character).unwrap().0[index]
    };
    let head = bone_of(&mut app, a, " Head");
    let pelvis = bone_of(&mut app, a, " Pelvis");
    let rest = app.world().get::<RigBone>(head).unwrap().rest;
    assert!(
        app.world()
            .get::<Transform>(head)
            .unwrap()
            .rotation
            .angle_between(rest.rotation)
            > 1e-3,
        "the idle turns the head away from rest"
    );
    app.world_mut().get_mut::<SkeletalClip>(a).unwrap().clip = lift.clone();
    {
        let mut p = app.world_mut().get_mut::<Playback>(a).unwrap();
        p.seek(0.5);
        p.paused = true;
    }
    app.update();
    assert_eq!(*app.world().get::<Transform>(head).unwrap(), rest);
    let b = spawn(&mut app, &lift, 0.75);
    for _ in 0..3 {
        app.update();
    }
    // The game turns the head; the lift does not drive it, so it stays turned.
    let turned = Transform::from_rotation(Quat::from_rotation_y(0.7));
    *app.world_mut().get_mut::<Transform>(head).unwrap() = turned;
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(*app.world().get::<Transform>(head).unwrap(), turned);
    // The pelvis follows the lift, each character at its own time. The lift turns it from
    // identity to 90° about Z over 1 s (keys (0, 0, 0, 4096) and (0, 0, 2896, 2896) / 4096),
    // so slerp gives 45° at 0.5 s and 67.5° at 0.75 s.
    let pelvis_b = bone_of(&mut app, b, " Pelvis");
    let rotation = |app: &App, e: Entity| app.world().get::<Transform>(e).unwrap().rotation;
    let (at_half, at_three_quarters) = (
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
        Quat::from_rotation_z(3.0 * std::f32::consts::FRAC_PI_8),
    );
    assert!(same_rotation(rotation(&app, pelvis), at_half, 1e-6));
    assert!(same_rotation(
        rotation(&app, pelvis_b),
        at_three_quarters,
        1e-6
    ));
    // Written over by the game, a driven bone is posed again on the next frame.
    *app.world_mut().get_mut::<Transform>(pelvis).unwrap() = turned;
    app.update();
    assert!(same_rotation(rotation(&app, pelvis), at_half, 1e-6));
    // Only what is written is marked changed: the head keeps the tick of the game's write
    // (which propagation and the user's `Changed` filters go by), the pelvis gets each frame's.
    let changed = |app: &App, e: Entity| {
        app.world()
            .entity(e)
            .get_ref::<Transform>()
            .unwrap()
            .last_changed()
    };
    let (head_tick, pelvis_tick) = (changed(&app, head), changed(&app, pelvis));
    app.update();
    assert_eq!(changed(&app, head), head_tick);
    let now = app.world().read_change_tick();
    assert!(changed(&app, pelvis).is_newer_than(pelvis_tick, now));
}

#[test]
fn hundreds_of_characters_posed_over_the_task_pool_match_the_core_sampler() {
    // 240 SA skeletons playing the idle, each paused at its own time: 240 × 22 driven bones,
    // more than one run of the bone pass (2048 bones), so with the tests' pool of two threads
    // the bones are cut into runs that split characters between threads. A skeleton's bones lie
    // in two tables (its leaves have no `Children`), which list the characters in the order
    // they were tagged, until despawning some reorders the rows. Every driven bone must hold
    // the clip's own sample at its character's time, as `Clip::sample_track` gives it.
    let (mut app, idle, clip) = sa_idle_app();
    // Times spread over the clip (2 s long), none on a key boundary by design.
    let time = |i: usize| (i * 7919 % 240) as f32 / 240.0 * 2.0 + 0.003;
    let mut characters: Vec<(Entity, f32)> = (0..240)
        .map(|i| {
            let mut playback = Playback::looping();
            playback.seek(time(i));
            playback.paused = true;
            let e = app
                .world_mut()
                .spawn((GtaSkeleton::SA, SkeletalClip::new(idle.clone()), playback))
                .id();
            (e, time(i))
        })
        .collect();
    let skeleton = rigplay::skeleton::Skeleton::gta_sa();
    let binding = skeleton.bind(&clip);
    let worst = |app: &App, characters: &[(Entity, f32)]| {
        let mut worst = 0.0f32;
        for &(character, time) in characters {
            let bones = &app.world().get::<SkeletonBones>(character).unwrap().0;
            let t = clip.wrap_time(time, WrapMode::Loop);
            for (track, target) in binding.targets.iter().enumerate() {
                let got = app
                    .world()
                    .get::<Transform>(bones[target.unwrap()])
                    .unwrap();
                let want = clip.sample_track(track, t);
                let (g, q) = (Vec4::from(got.rotation), Vec4::from(want.rotation.unwrap()));
                worst = worst.max((g - q).abs().max_element().min((g + q).abs().max_element()));
                if let Some(v) = want.translation {
                    worst = worst.max((got.translation - v).abs().max_element());
                }
            }
        }
        worst
    };
    for _ in 0..3 {
        app.update();
    }
    let w = worst(&app, &characters);
    assert!(w < 1e-5, "worst difference {w}");
    // Despawned characters' rows are filled from the tables' ends, differently in each table;
    // the others are moved to new times.
    for i in [3, 50, 100, 101, 200] {
        app.world_mut().despawn(characters[i].0);
    }
    characters = characters
        .into_iter()
        .enumerate()
        .filter(|(i, _)| ![3, 50, 100, 101, 200].contains(i))
        .map(|(i, (e, t))| (e, if i % 3 == 0 { t + 0.37 } else { t }))
        .collect();
    for &(e, t) in &characters {
        app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
    }
    app.update();
    let w = worst(&app, &characters);
    assert!(w < 1e-5, "after despawning, worst difference {w}");
}

/// The bone of `root`'s skeleton ([`SkeletonBones`]) named `name`.
fn bone_of(app: &App, root: Entity, name: &str) -> Entity {
    let world = app.world();
    (world.get::<SkeletonBones>(root).unwrap().0.iter().copied())
        .find(|&b| world.get::<Name>(b).is_some_and(|n| n.as_str() == name))
        .unwrap_or_else(|| panic!("no bone {name}"))
}

/// The bones below `root` ([`RigBone`]), each with the player its `AnimatedBy` names, if any.
fn animated_by(app: &mut App, root: Entity) -> Vec<(Entity, Option<Entity>)> {
    let world = app.world_mut();
    let mut bones = Vec::new();
    let mut below = vec![root];
    while let Some(e) = below.pop() {
        if e != root && world.get::<RigBone>(e).is_some() {
            let by = world.get::<bevy::animation::AnimatedBy>(e).map(|a| a.0);
            bones.push((e, by));
        }
        if let Some(children) = world.get::<Children>(e) {
            below.extend(children.iter());
        }
    }
    bones
}

/// Bevy's `animate_targets` visits every entity with `AnimatedBy` each frame, even where its
/// player has no graph, so rigplay's bones carry it only while their character plays through
/// Bevy's `AnimationPlayer` (its root has an `AnimationGraphHandle`):
/// - none on a GTA skeleton playing `Playback`, on an idle one, on a DAN skeleton or on a
///   `Retarget` hierarchy;
/// - on every bone, naming the root, once `PlayAnimation` has started (and the clip moves
///   them), and at once on a skeleton spawned with a graph;
/// - off again when the graph goes, but for an `AnimatedBy` that names another player.
#[test]
fn bones_are_animated_by_their_root_only_while_it_plays_bevy_clips() {
    let files = crate::assets::sample_files();
    let mut app = app(&[("sa.ifp", files[0].1.clone())], &[], 1.0 / 60.0);
    let walk: Handle<RigClip> = load(&mut app, "sa.ifp#walk");
    let world = app.world_mut();
    let played = world
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(walk.clone()),
            Playback::looping(),
        ))
        .id();
    let idle = world.spawn(GtaSkeleton::VC).id();
    let dan = world
        .spawn(FlatSkeleton {
            names: vec!["Bip01".into(), "Bip01 Spine".into()],
            links: Vec::new(),
        })
        .id();
    // A humanoid's nodes, named as SA's bones, under a rest-compensated character.
    let humanoid = world.spawn(Retarget::new()).id();
    let pelvis = world
        .spawn((Name::new("Pelvis"), Transform::default(), ChildOf(humanoid)))
        .id();
    world.spawn((
        Name::new("Spine1"),
        Transform::from_xyz(0.0, 0.2, 0.0),
        ChildOf(pelvis),
    ));
    for _ in 0..3 {
        app.update();
    }
    for (root, bones) in [(played, 32), (idle, 24), (dan, 2), (humanoid, 2)] {
        let found = animated_by(&mut app, root);
        assert_eq!(found.len(), bones, "{root}: {found:?}");
        assert!(
            found.iter().all(|(_, by)| by.is_none()),
            "{root}: {found:?}"
        );
    }

    // Bevy's player on the idle VC skeleton and on the humanoid: every bone names its root.
    for root in [idle, humanoid] {
        app.world_mut()
            .entity_mut(root)
            .insert(PlayAnimation::looping(walk.clone()));
    }
    let head_rest = app
        .world()
        .get::<Transform>(bone_of(&app, idle, "Head"))
        .copied();
    for _ in 0..10 {
        app.update();
    }
    for root in [idle, humanoid] {
        let found = animated_by(&mut app, root);
        assert!(
            found.iter().all(|(_, by)| *by == Some(root)),
            "{root}: {found:?}"
        );
    }
    let head = app
        .world()
        .get::<Transform>(bone_of(&app, idle, "Head"))
        .copied();
    assert_ne!(
        head, head_rest,
        "Bevy's player moves the VC skeleton's head"
    );
    // Neither the skeleton playing `Playback` nor the DAN skeleton.
    for root in [played, dan] {
        assert!(
            animated_by(&mut app, root)
                .iter()
                .all(|(_, by)| by.is_none())
        );
    }

    // A skeleton spawned with its graph has it at once.
    let graph = app
        .world()
        .get::<AnimationGraphHandle>(idle)
        .unwrap()
        .clone();
    let with_graph = app.world_mut().spawn((GtaSkeleton::III, graph)).id();
    app.update();
    let found = animated_by(&mut app, with_graph);
    assert_eq!(found.len(), 16);
    assert!(
        found.iter().all(|(_, by)| *by == Some(with_graph)),
        "{found:?}"
    );

    // The graph goes: so does `AnimatedBy`, but for a bone given to another player.
    let other = app.world_mut().spawn(AnimationPlayer::default()).id();
    let lent = bone_of(&app, idle, "Head");
    app.world_mut()
        .entity_mut(lent)
        .insert(bevy::animation::AnimatedBy(other));
    app.world_mut()
        .entity_mut(idle)
        .remove::<(PlayAnimation, AnimationGraphHandle)>();
    app.update();
    for (e, by) in animated_by(&mut app, idle) {
        let expected = (e == lent).then_some(other);
        assert_eq!(by, expected, "{e}");
    }
    // The humanoid still plays.
    assert!(
        animated_by(&mut app, humanoid)
            .iter()
            .all(|(_, by)| *by == Some(humanoid))
    );
}

/// rigplay's per-character systems are skipped (run conditions) while no character of theirs
/// exists. After frames with no character at all, three start paused at one time of the walk: a
/// GTA skeleton playing `Playback`, a GTA skeleton with the walk as its one `ClipLayers` layer
/// and a crowd character. From the crowd character's second frame, each frame the three agree
/// (the crowd's joints with the skeleton's within 0.1 mm, the layered skeleton's bones with the
/// other's within 1e-5) away from the rest pose. Then all three go, more frames pass with none,
/// and three start again at another time: they agree again.
#[test]
fn characters_started_after_frames_without_any_are_posed() {
    let mut app = sa_app(1.0 / 60.0);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    for (round, t) in [0.3, 0.7].into_iter().enumerate() {
        for _ in 0..5 {
            app.update();
        }
        let (skeleton, crowd) = skeleton_and_crowd(
            &mut app,
            &walk,
            t,
            Transform::default(),
            Transform::from_xyz(3.0, 0.0, 0.0),
        );
        for e in [skeleton, crowd] {
            app.world_mut().get_mut::<Playback>(e).unwrap().paused = true;
        }
        let mut layers = ClipLayers::default();
        layers.push(paused(walk.clone(), t));
        let layered = app
            .world_mut()
            .spawn((GtaSkeleton::SA, layers, Transform::from_xyz(-3.0, 0.0, 0.0)))
            .id();
        // (A crowd character's first frame binds it; it is posed from its second.)
        app.update();
        for frame in 0..4 {
            app.update();
            let gap = crowd_gap(&mut app, skeleton, crowd);
            assert!(
                gap < 1e-4,
                "round {round}, frame {frame}: crowd {gap} m off"
            );
            let (played, by_layers) = (bones_of(&app, skeleton), bones_of(&app, layered));
            let mut off_rest = 0.0f32;
            for (b, (p, l)) in played.iter().zip(&by_layers).enumerate() {
                let same = p.rotation.dot(l.rotation).abs() > 1.0 - 1e-5
                    && p.translation.distance(l.translation) < 1e-5;
                assert!(
                    same,
                    "round {round}, frame {frame}, bone {b}: {p:?} against {l:?}"
                );
                let bone = app.world().get::<SkeletonBones>(skeleton).unwrap().0[b];
                let rest = app.world().get::<RigBone>(bone).unwrap().rest;
                off_rest = off_rest.max(p.rotation.angle_between(rest.rotation));
            }
            assert!(off_rest > 0.1, "round {round}: the walk at {t} s is posed");
        }
        for e in [skeleton, crowd, layered] {
            app.world_mut().entity_mut(e).despawn();
        }
    }
}
