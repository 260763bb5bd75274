//! The crowd skeleton of a model's rests against the frames `GtaModel` poses.

use super::*;

/// The frames of a model made from `game`'s table: frame 0 the clump's root, 0.5 m up and
/// turned a quarter about Z; frame `1 + b` bone `b`, its offset scaled by `k`.
fn frames(game: &CrowdSkeleton, k: f32) -> Vec<ModelFrame> {
    let root = ModelFrame {
        target: None,
        parent: None,
        rest: Affine3A::from_rotation_translation(
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            Vec3::Z * 0.5,
        ),
    };
    let bones = (0..game.parents.len()).map(|b| {
        let mut rest = game.pose.rest().get(b);
        rest.translation *= k;
        ModelFrame {
            target: Some(game.targets[b]),
            parent: Some(game.parents[b].map_or(0, |p| p + 1)),
            rest: affine(rest),
        }
    });
    std::iter::once(root).chain(bones).collect()
}

/// Each bone's model-space transform with the basis (Bevy's axes), posed by the pose
/// pipeline as the crowd poses it: the rests, each bone `key` gives turned by it (its
/// offset kept), the basis composed into the root.
fn posed_by(s: &CrowdSkeleton, key: &dyn Fn(usize) -> Option<Quat>) -> Vec<Affine3A> {
    let mut local = s.pose.rest().clone();
    for b in 0..s.parents.len() {
        if let Some(turn) = key(b) {
            let rest = local.get(b);
            local.set(
                b,
                BonePose {
                    rotation: turn,
                    ..rest
                },
            );
        }
    }
    if let Some(basis) = &s.basis {
        local.set(0, CrowdSkeleton::based(basis, local.get(0)));
    }
    let mut model = vec![Affine3A::IDENTITY; s.parents.len()];
    crate::animation::pose::local_to_model(&s.pose, &local, &mut model);
    model
}

/// Each bone's model-space rest with the basis (Bevy's axes).
fn placed(s: &CrowdSkeleton) -> Vec<Affine3A> {
    posed_by(s, &|_| None)
}

/// Each frame's model-space rest under `GtaModel`'s basis (lifted by `lift`, Z-up to Y-up).
fn frames_placed(frames: &[ModelFrame], lift: f32) -> Vec<Affine3A> {
    let basis = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * lift);
    let placed = |mut f: usize| {
        let mut m = frames[f].rest;
        while let Some(p) = frames[f].parent {
            m = frames[p].rest * m;
            f = p;
        }
        basis * m
    };
    (0..frames.len()).map(placed).collect()
}

fn apart(a: Affine3A, b: Affine3A) -> f32 {
    (a.matrix3 - b.matrix3)
        .to_cols_array()
        .iter()
        .chain((a.translation - b.translation).to_array().iter())
        .fold(0.0f32, |m, v| m.max(v.abs()))
}

/// `frames` with a frame that is no bone (not animated) put between bone frame `f` and its
/// parent: `rest` relative to that parent, `f` keeping where it rests.
fn with_frame_between(frames: &[ModelFrame], f: usize, rest: Affine3A) -> Vec<ModelFrame> {
    let mut out = frames.to_vec();
    let placed = frames_placed(frames, 0.0);
    let parent = frames[f].parent;
    out.push(ModelFrame {
        target: None,
        parent,
        rest,
    });
    let basis = Affine3A::from_quat(GTA_TO_BEVY);
    let between = parent.map_or(basis * rest, |p| placed[p] * rest);
    out[f].parent = Some(out.len() - 1);
    out[f].rest = between.inverse() * placed[f];
    out
}

/// `frames` with bone frame `f` (and the frames below it) hung under frame `under`, resting
/// where it did.
fn rehung(frames: &[ModelFrame], f: usize, under: usize) -> Vec<ModelFrame> {
    let mut out = frames.to_vec();
    let placed = frames_placed(frames, 0.0);
    out[f].parent = Some(under);
    out[f].rest = placed[under].inverse() * placed[f];
    out
}

/// Every bone rests where `GtaModel` puts its frame: the clump's root above the root bone
/// (in the basis), a frame between two bones (a nub 2 cm along, or turned), a bone the model
/// lacks at the game's rest, a bone hung under another than the game's (earlier or later in
/// the game's order), a bone with no bone above it.
#[test]
fn a_models_rests_place_the_games_bones_where_its_frames_are() {
    for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
        let built_in = CrowdSkeleton::new(game);
        let n = built_in.parents.len();
        let plain = frames(&built_in, 1.1);
        let last = plain.len() - 1;
        let nub = Affine3A::from_translation(Vec3::X * 0.02);
        let frames = with_frame_between(&plain, last, nub);
        let right = |what: &str, frames: &[ModelFrame]| {
            let (s, rest_only) = CrowdSkeleton::with_model_rests(&built_in, frames, 0.9).unwrap();
            assert_eq!(rest_only, RestOnly::default(), "{game:?} {what}");
            // Frames of rotations give scales of exactly 1 (the pose pipeline's path without
            // scales), not 1 within rounding.
            let unit = (0..n).all(|b| s.pose.rest().get(b).scale == Vec3::ONE);
            assert!(unit, "{game:?} {what}: scales of 1");
            let (ours, theirs) = (placed(&s), frames_placed(frames, 0.9));
            for (b, target) in s.targets.iter().enumerate() {
                if let Some(f) = frames.iter().position(|f| f.target == Some(*target)) {
                    let d = apart(ours[b], theirs[f]);
                    assert!(d < 1e-5, "{game:?} {what}: bone {b} {d} off");
                }
            }
            s
        };
        let s = right("nub", &frames);
        // (A nub that only moves the bone is an offset all the same: a clip's translation
        // keys, where it has them, replace the bone's own.)
        assert!(!s.pose.in_joint_order(), "{game:?}");
        // The turned root is in the basis; the root bone's own rest is its frame's.
        let root = s.pose.rest().get(0);
        let want = built_in.pose.rest().get(0).translation * 1.1;
        assert!(root.translation.distance(want) < 1e-6, "{game:?}");
        // A model of the game's hierarchy, only longer: posed in joint order.
        let s = right("plain", &plain);
        assert!(s.pose.in_joint_order(), "{game:?}");
        assert_eq!(s.parents, built_in.parents, "{game:?}");

        // A bone the model lacks (the last): the game's rest under the model's parent.
        let mut lacking = frames.clone();
        lacking[last].target = None;
        let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &lacking, 0.9).unwrap();
        let (rest, games) = (s.pose.rest().get(n - 1), built_in.pose.rest().get(n - 1));
        assert!(rest.translation.distance(games.translation) < 1e-6);

        // The last bone's frame hung under the root bone's: hung under the root bone.
        let s = right("moved", &rehung(&plain, last, 1));
        assert_eq!(s.parents[n - 1], Some(0), "{game:?}");

        // ... under a bone later in the game's order (the last but two under the last but
        // one, hung in turn under the root).
        let late = rehung(&rehung(&plain, last - 1, 1), last - 2, last - 1);
        let s = right("late", &late);
        assert_eq!(s.parents[n - 3], Some(n - 2), "{game:?}");

        // The nub turned a quarter about x.
        let turn = Affine3A::from_rotation_translation(
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
            Vec3::X * 0.02,
        );
        right("turned", &with_frame_between(&plain, last, turn));

        // The last bone's frame straight under the clump's root: no bone above it.
        let s = right("orphan", &rehung(&plain, last, 0));
        assert_eq!(s.parents[n - 1], None, "{game:?}");

        // The root bone's frame hung under the last bone's, and a second frame of the last
        // bone: both reported.
        let mut odd = frames.clone();
        odd[1].parent = Some(last);
        odd.push(ModelFrame {
            target: Some(built_in.targets[n - 1]),
            parent: Some(0),
            rest: Affine3A::IDENTITY,
        });
        let (_, rest_only) = CrowdSkeleton::with_model_rests(&built_in, &odd, 0.9).unwrap();
        let last_name = built_in.names[n - 1].clone();
        assert_eq!(
            rest_only,
            RestOnly {
                root_under: Some(last_name.clone()),
                repeated: vec![last_name],
            },
            "{game:?}"
        );

        // No frame of the root bone: no skeleton.
        let mut rootless = frames.clone();
        rootless[1].target = None;
        assert!(CrowdSkeleton::with_model_rests(&built_in, &rootless, 0.9).is_none());

        // Frames whose parents are out of range (the root bone's, another's), or a cycle:
        // no panic.
        let mut bad = frames.clone();
        bad[0].parent = Some(frames.len() + 5);
        bad[2].parent = Some(2);
        assert!(CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9).is_some());
        bad[1].parent = Some(frames.len() + 9);
        assert!(CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9).is_some());
        bad[3].parent = Some(4);
        bad[4].parent = Some(3);
        let _ = CrowdSkeleton::with_model_rests(&built_in, &bad, 0.9);
    }
}

/// Posed (each bone turned by its own key, as a clip turns it), a model's bones are where
/// `GtaModel`'s frames are, each bone moving with the bones above it in the model: where the
/// model lacks a bone between two others (the game's forearm, say), hangs a bone under
/// another bone than the game does (earlier or later in the game's order), puts a turned
/// frame of its own between two bones, or hangs a bone under no bone. Hung on the game's
/// hierarchy (as before), the first two were right at rest only.
#[test]
fn a_models_own_hierarchy_moves_its_bones_as_its_frames_when_posed() {
    // Bone b's key: a turn of its own about an axis of its own.
    let key = |b: usize| {
        let axis = Vec3::new(1.0, 0.3 * b as f32, -0.5).normalize();
        Quat::from_axis_angle(axis, 0.2 + 0.07 * b as f32)
    };
    let posed = |s: &CrowdSkeleton| posed_by(s, &|b| Some(key(b)));
    // The model's frames posed as bone entities are: a bone's frame turned by its key at
    // its own offset, the other frames at rest.
    let frames_posed = |frames: &[ModelFrame], bone: &dyn Fn(usize) -> Option<usize>| {
        let basis = Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * 0.9);
        let local = |f: usize| match bone(f) {
            Some(b) => {
                Affine3A::from_rotation_translation(key(b), frames[f].rest.translation.into())
            }
            None => frames[f].rest,
        };
        (0..frames.len())
            .map(|mut f| {
                let mut m = local(f);
                while let Some(p) = frames[f].parent {
                    m = local(p) * m;
                    f = p;
                }
                basis * m
            })
            .collect::<Vec<_>>()
    };
    for game in [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa] {
        let built_in = CrowdSkeleton::new(game);
        let n = built_in.parents.len();
        let frames = frames(&built_in, 1.1);
        // Frame 1 + b is bone b's.
        let game_targets = &built_in.targets;
        let bone_of = |frames: &[ModelFrame]| {
            let targets: Vec<_> = frames.iter().map(|f| f.target).collect();
            move |f: usize| targets[f].and_then(|t| game_targets.iter().position(|x| *x == t))
        };
        // A bone in the middle of a chain (one with a parent and a child), and its child.
        let middle = (1..n)
            .find(|&b| built_in.parents[b].is_some() && built_in.parents.contains(&Some(b)))
            .unwrap();
        let child = built_in
            .parents
            .iter()
            .position(|p| *p == Some(middle))
            .unwrap();
        let grand = built_in.parents[middle].unwrap();
        // (a) The model lacks the middle bone: its children's frames hang under the middle
        // bone's parent, each at the two rests together (the middle frame left a leaf).
        let mut lacking = frames.clone();
        lacking[1 + middle].target = None;
        for c in (0..n).filter(|&c| built_in.parents[c] == Some(middle)) {
            lacking[1 + c].parent = Some(1 + grand);
            lacking[1 + c].rest = frames[1 + middle].rest * frames[1 + c].rest;
        }
        // (b) The last bone's frame hung under the root bone's.
        let last = frames.len() - 1;
        let moved = rehung(&frames, last, 1);
        // (c) The middle bone's child hung under the last bone (later in the game's
        // order), the last bone hung under the root bone.
        let late = rehung(&moved, 1 + child, last);
        // (d) A frame turned a quarter about x and 3 cm along between the middle bone and
        // its child.
        let turn = Affine3A::from_rotation_translation(
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
            Vec3::new(0.03, 0.0, 0.0),
        );
        let turned = with_frame_between(&frames, 1 + child, turn);
        // (e) The middle bone's child under the clump's root, through a turned frame.
        let orphan = with_frame_between(&rehung(&frames, 1 + child, 0), 1 + child, turn);
        // (f) The clump's root frame (above the root bone) also scaling by 2, and the orphan
        // of (e) under it: every bone scaled with it, as the frames are.
        let mut scaled = orphan.clone();
        scaled[0].rest = Affine3A::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            Vec3::Z * 0.5,
        );
        let (s, _) = CrowdSkeleton::with_model_rests(&built_in, &scaled, 0.9).unwrap();
        let (ours, theirs) = (posed(&s), frames_posed(&scaled, &bone_of(&scaled)));
        for b in 0..n {
            let d = apart(ours[b], theirs[1 + b]);
            assert!(d < 1e-4, "{game:?} scaled: bone {b} is {d} off");
        }
        let cases = [
            ("lacking", &lacking, Some(middle)),
            ("moved", &moved, None),
            ("late", &late, None),
            ("turned", &turned, None),
            ("orphan", &orphan, None),
        ];
        for (what, model, left_out) in cases {
            let (s, rest_only) = CrowdSkeleton::with_model_rests(&built_in, model, 0.9).unwrap();
            assert_eq!(rest_only, RestOnly::default(), "{game:?} {what}");
            let (ours, theirs) = (posed(&s), frames_posed(model, &bone_of(model)));
            for b in (0..n).filter(|b| Some(*b) != left_out) {
                let d = apart(ours[b], theirs[1 + b]);
                assert!(
                    d < 1e-4,
                    "{game:?} {what}: bone {b} {:?} is {d} off",
                    built_in.names[b]
                );
            }
            // On the game's hierarchy from the same rests, the bone the model hangs
            // elsewhere moves with the wrong bones (or without its frame's turn).
            let wrong = match what {
                "lacking" | "late" | "turned" | "orphan" => child,
                _ => n - 1,
            };
            let at_rest = placed(&s);
            let rests: Vec<BonePose> = (0..n)
                .map(|b| {
                    // (Its rest as the game's hierarchy would place it.)
                    let p = built_in.parents[b];
                    let local = p.map_or(at_rest[b], |p| at_rest[p].inverse() * at_rest[b]);
                    let (scale, rotation, translation) = local.to_scale_rotation_translation();
                    BonePose {
                        rotation,
                        translation,
                        scale,
                    }
                })
                .collect();
            let basis = s.basis.unwrap().affine;
            let mut fixed = rests.clone();
            fixed[0] = {
                let local = basis.inverse() * affine(rests[0]);
                let (scale, rotation, translation) = local.to_scale_rotation_translation();
                BonePose {
                    rotation,
                    translation,
                    scale,
                }
            };
            let (mut game_hung, _) =
                CrowdSkeleton::with_model_rests(&built_in, model, 0.9).unwrap();
            game_hung.parents = built_in.parents.clone();
            game_hung.pose = PoseSkeleton::new(&built_in.parents, &fixed).unwrap();
            let d = apart(posed(&game_hung)[wrong], theirs[1 + wrong]);
            assert!(
                d > 1e-2,
                "{game:?} {what}: on the game's hierarchy only {d} off"
            );
        }
    }
}
