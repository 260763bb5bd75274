//! Many clips on one skeleton: the games' blend rule (`pose::mix`, `docs/formats/ifp.md`
//! §3.3–§3.6), additive layers and masks, and the layer stack's fades, flags and movement sync
//! (`animation::layers`). Every expected value is worked out by hand in the comments.

use glam::{Quat, Vec3};
use rigplay::animation::layers::{BoneMask, Layer, LayerError, LayerEvent, LayerFlags, LayerStack};
use rigplay::animation::pose::{
    LocalPose, MixLayer, PoseClip, PoseCursor, PoseSkeleton, TranslationRule, mix, mix_onto, sample,
};
use rigplay::animation::{BonePose, BoneRef, BoneTrack, Clip, ClipBuilder, PlayMode, PlayStep};

/// A skeleton of `n` joints in a chain, each at rest 1 m above its parent, unrotated.
fn chain(n: usize) -> PoseSkeleton {
    let parents: Vec<Option<usize>> = (0..n).map(|j| j.checked_sub(1)).collect();
    let rest = vec![
        BonePose {
            translation: Vec3::Z,
            ..BonePose::default()
        };
        n
    ];
    PoseSkeleton::new(&parents, &rest).unwrap()
}

/// One key (or two, at 0 and 1 s) per channel: `keys[i] = (joint, rotations, translations)`.
type Keys<'a> = &'a [(usize, &'a [Quat], Option<&'a [Vec3]>)];

/// A clip keying the given joints, its tracks named `j{joint}`, laid out for `skeleton`.
fn clip(skeleton: &PoseSkeleton, keys: Keys) -> (Clip, PoseClip) {
    let mut b = ClipBuilder::new("test");
    for (joint, rotations, translations) in keys {
        let times: Vec<f32> = (0..rotations.len()).map(|k| k as f32).collect();
        let times = b.times(&times).unwrap();
        let rotation = Some(b.rotations(times, rotations).unwrap());
        let translation = translations.map(|t| b.translations(times, t).unwrap());
        b.track(BoneTrack {
            bone: BoneRef {
                name: format!("j{joint}"),
                id: None,
            },
            rotation,
            translation,
            scale: None,
        });
    }
    let clip = b.build();
    let targets: Vec<Option<usize>> = keys.iter().map(|k| Some(k.0)).collect();
    let pose = PoseClip::new(&clip, skeleton, &targets);
    (clip, pose)
}

fn sampled(clip: &PoseClip, t: f32) -> LocalPose {
    let mut pose = LocalPose::default();
    sample(clip, t, &mut PoseCursor::new(clip), &mut pose);
    pose
}

fn full<'a>(pose: &'a LocalPose, clip: &'a PoseClip, weight: f32) -> MixLayer<'a> {
    MixLayer {
        pose,
        keyed: clip.keyed(),
        weight,
        partial: false,
        mask: None,
        additive: None,
    }
}

fn z_turn(degrees: f32) -> Quat {
    Quat::from_rotation_z(degrees.to_radians())
}

/// The rotation angle between two quaternions, radians, in f64 (f32's `acos` near 1 is off by
/// 7e-4).
fn angle(a: Quat, b: Quat) -> f64 {
    let d = a.as_dquat().inverse() * b.as_dquat();
    let v = glam::DVec3::new(d.x, d.y, d.z).length();
    2.0 * v.atan2(d.w.abs())
}

fn assert_quat(got: Quat, want: Quat, what: &str) {
    let d = angle(got, want);
    assert!(d < 1e-4, "{what}: {got} vs {want} ({d} rad apart)");
}

fn assert_vec(got: Vec3, want: Vec3, what: &str) {
    assert!(
        (got - want).abs().max_element() < 1e-5,
        "{what}: {got} vs {want}"
    );
}

#[test]
fn two_full_layers_at_three_and_seven_tenths() {
    let sk = chain(1);
    let (_, a) = clip(
        &sk,
        &[(0, &[Quat::IDENTITY], Some(&[Vec3::new(0.0, 0.0, 1.0)]))],
    );
    let (_, b) = clip(
        &sk,
        &[(0, &[z_turn(90.0)], Some(&[Vec3::new(0.0, 0.0, 2.0)]))],
    );
    let (pa, pb) = (sampled(&a, 0.0), sampled(&b, 0.0));
    let mut out = LocalPose::default();
    mix(
        &[full(&pa, &a, 0.3), full(&pb, &b, 0.7)],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // 0.3·(0, 0, 0, 1) + 0.7·(0, 0, sin 45°, cos 45°) = (0, 0, 0.49497, 0.79497); its length
    // is 0.93647, so the mix is (0, 0, 0.52855, 0.84890): a turn of 2·atan2(0.52855, 0.84890)
    // = 63.815° about Z (not the 63° of a linear blend of angles).
    let p = out.get(0);
    assert_quat(
        p.rotation,
        Quat::from_xyzw(0.0, 0.0, 0.52855, 0.84890),
        "rotation",
    );
    assert!((p.rotation.to_axis_angle().1.to_degrees() - 63.815).abs() < 1e-2);
    // Translation: 0.3·1 + 0.7·2 = 1.7 (the weights sum to 1: no rest share).
    assert_vec(p.translation, Vec3::new(0.0, 0.0, 1.7), "translation");
}

#[test]
fn a_partial_layer_at_half_takes_half_of_the_bones_it_keys_and_none_of_the_others() {
    let sk = chain(3);
    // The base keys all three joints at 10°; the partial (an upper-body clip) keys joint 1 at
    // 90° and joint 2 at 50°.
    let (_, base) = clip(
        &sk,
        &[
            (0, &[z_turn(10.0)], None),
            (1, &[z_turn(10.0)], None),
            (2, &[z_turn(10.0)], None),
        ],
    );
    let (_, upper) = clip(
        &sk,
        &[(1, &[z_turn(90.0)], None), (2, &[z_turn(50.0)], None)],
    );
    let (pb, pu) = (sampled(&base, 0.0), sampled(&upper, 0.0));
    let partial = MixLayer {
        partial: true,
        ..full(&pu, &upper, 0.5)
    };
    let mut out = LocalPose::default();
    mix(
        &[full(&pb, &base, 1.0), partial],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // Joint 0: no partial keys it, so the base keeps its whole weight: 10°.
    assert_quat(out.get(0).rotation, z_turn(10.0), "joint 0");
    // Joint 1: the base is scaled by 1 − 0.5 = 0.5, the partial keeps 0.5: half of 10° and half
    // of 90°, two unit quaternions 80° apart summed equally, whose normalised sum lies halfway:
    // 50°.
    assert_quat(out.get(1).rotation, z_turn(50.0), "joint 1");
    // Joint 2: halfway between 10° and 50°: 30°.
    assert_quat(out.get(2).rotation, z_turn(30.0), "joint 2");
    // No layer keys a translation: every joint at its rest translation.
    for j in 0..3 {
        assert_vec(out.get(j).translation, Vec3::Z, "rest translation");
    }
}

/// `layers` mixed onto `base` sampled at 0 ([`mix_onto`]), checked against [`mix`] with the
/// base first (within 10⁻⁶ at every joint): the pose mixed onto.
fn onto_as_mix(base: &PoseClip, layers: &[MixLayer], rest: &LocalPose) -> LocalPose {
    let pb = sampled(base, 0.0);
    let mut want = LocalPose::default();
    let mut all = vec![full(&pb, base, 1.0)];
    all.extend_from_slice(layers);
    mix(&all, rest, TranslationRule::Absolute, &mut want);
    let mut got = sampled(base, 0.0);
    mix_onto(
        base.keyed(),
        layers,
        rest,
        TranslationRule::Absolute,
        &mut got,
    );
    for j in 0..rest.len() {
        let (g, w) = (got.get(j), want.get(j));
        assert!(
            angle(g.rotation, w.rotation) < 1e-6,
            "joint {j}: {g:?} against {w:?}"
        );
        assert!(g.translation.distance(w.translation) < 1e-6, "joint {j}");
    }
    got
}

#[test]
fn layers_mixed_onto_a_base_sampled_in_place_give_the_mix_with_the_base_first() {
    // Nine joints: three lane groups (joints 0–3, 4–7, 8). The base keys every joint (a walk:
    // 10° about Z, joint 0 moved to (0, 0.2, 1)); the partial keys joints 5 and 6 only (90°),
    // so that only the second group has another layer in it.
    let sk = chain(9);
    let base_keys: Vec<(usize, Vec<Quat>, Option<Vec<Vec3>>)> = (0..9)
        .map(|j| {
            let t = (j == 0).then(|| vec![Vec3::new(0.0, 0.2, 1.0)]);
            (j, vec![z_turn(10.0)], t)
        })
        .collect();
    let base_keys: Vec<_> = base_keys
        .iter()
        .map(|(j, r, t)| (*j, &r[..], t.as_deref()))
        .collect();
    let (_, base) = clip(&sk, &base_keys);
    let (_, upper) = clip(
        &sk,
        &[(5, &[z_turn(90.0)], None), (6, &[z_turn(90.0)], None)],
    );
    let pu = sampled(&upper, 0.0);
    let partial = MixLayer {
        partial: true,
        ..full(&pu, &upper, 0.5)
    };
    let mut onto = sampled(&base, 0.0);
    mix_onto(
        base.keyed(),
        &[partial],
        sk.rest(),
        TranslationRule::Absolute,
        &mut onto,
    );
    // Joints 5 and 6: the base scaled by 1 − 0.5, the partial 0.5: halfway between 10° and
    // 90°, 50°. Every other joint is the base's: 10°, joint 0 at (0, 0.2, 1).
    for j in 0..9 {
        let want = if j == 5 || j == 6 { 50.0 } else { 10.0 };
        assert_quat(onto.get(j).rotation, z_turn(want), &format!("joint {j}"));
    }
    assert_vec(onto.get(0).translation, Vec3::new(0.0, 0.2, 1.0), "joint 0");
    assert_vec(onto.get(5).translation, Vec3::Z, "joint 5 at rest");
    // The first and third groups were not touched: bit for bit the sample.
    let plain = sampled(&base, 0.0);
    for j in [0, 1, 2, 3, 8] {
        assert_eq!(onto.get(j), plain.get(j), "joint {j} untouched");
    }
    // Partial layers alone over the base (an upper-body clip and another over a walk): against
    // `mix` with the base first. The partial at 0.5, and a second one at 0.4 keying joint 8's
    // rotation and translation, masked to 0.5 there.
    let (_, second) = clip(&sk, &[(8, &[z_turn(-40.0)], Some(&[Vec3::X]))]);
    let ps = sampled(&second, 0.0);
    let half_on_8 = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5];
    let partials = [
        partial,
        MixLayer {
            partial: true,
            mask: Some(&half_on_8),
            ..full(&ps, &second, 0.4)
        },
    ];
    let got = onto_as_mix(&base, &partials, sk.rest());
    // Joint 8 by hand: the partial takes 0.4 · 0.5 = 0.2 of it, the base 0.8: half-angles 5°
    // and −20°, z = 0.8·sin 5° − 0.2·sin 20° = 0.001321, w = 0.8·cos 5° + 0.2·cos 20° =
    // 0.984894, angle 2·atan2(z, w) = 0.1537°. Its translation: the base does not key it, so the
    // rest (0, 0, 1) takes what the partial leaves: 0.2·(1, 0, 0) + 0.8·(0, 0, 1).
    assert_quat(
        got.get(8).rotation,
        z_turn(0.1537),
        "joint 8, partials only",
    );
    assert_vec(
        got.get(8).translation,
        Vec3::new(0.2, 0.0, 0.8),
        "joint 8, partials only",
    );

    // Against `mix` with the base first, over other layers too: a second full layer at 0.3 on
    // the last group, the partial masked to joint 5, an additive layer on joint 8.
    let (_, other) = clip(&sk, &[(8, &[z_turn(-40.0)], Some(&[Vec3::X]))]);
    let (_, add) = clip(&sk, &[(8, &[z_turn(0.0), z_turn(30.0)], None)]);
    let po = sampled(&other, 0.0);
    let (now, reference) = (sampled(&add, 1.0), sampled(&add, 0.0));
    let mask = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    let layers = [
        full(&po, &other, 0.3),
        MixLayer {
            mask: Some(&mask),
            ..partial
        },
        MixLayer {
            additive: Some(&reference),
            ..full(&now, &add, 0.5)
        },
    ];
    let got = onto_as_mix(&base, &layers, sk.rest());
    // Joint 8 by hand: the base (10°, weight 1) and the other (−40°, 0.3), summed and
    // normalised. About Z, half-angles 5° and −20°: z = sin 5° − 0.3·sin 20° = −0.015449,
    // w = cos 5° + 0.3·cos 20° = 1.278103, so the angle is 2·atan2(z, w) = −1.3852°. Then the
    // additive turns it by half its 30°: 15° − 1.3852° = 13.6148°.
    assert_quat(got.get(8).rotation, z_turn(13.6148), "joint 8");
    // Its translation: the base does not key it (rest (0, 0, 1) takes what is left), the
    // other keys (1, 0, 0) at 0.3: 0.3·(1, 0, 0) + 0.7·(0, 0, 1).
    assert_vec(got.get(8).translation, Vec3::new(0.3, 0.0, 0.7), "joint 8");
}

#[test]
fn a_sign_flipped_key_blends_as_the_same_rotation() {
    let sk = chain(1);
    let q = z_turn(90.0);
    let (_, a) = clip(&sk, &[(0, &[Quat::IDENTITY], None)]);
    let (_, b) = clip(&sk, &[(0, &[-q], None)]);
    let (pa, pb) = (sampled(&a, 0.0), sampled(&b, 0.0));
    assert!(pb.get(0).rotation.w < 0.0, "the key is stored flipped");
    let mut out = LocalPose::default();
    mix(
        &[full(&pa, &a, 0.5), full(&pb, &b, 0.5)],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // Aligned to the sum so far, −q counts as q: (0,0,0,1)·0.5 + (0,0,0.7071,0.7071)·0.5
    // normalised = (0, 0, 0.38268, 0.92388), 45°. Unaligned it would be (0, 0, −0.354, 0.146)
    // normalised: a turn of −135°.
    assert_quat(out.get(0).rotation, z_turn(45.0), "rotation");
}

#[test]
fn a_bone_no_layer_keys_keeps_its_rest_pose() {
    let parents = [None, Some(0)];
    let rest = [
        BonePose::default(),
        BonePose {
            rotation: z_turn(33.0),
            translation: Vec3::new(0.1, 0.2, 0.3),
            scale: Vec3::ONE,
        },
    ];
    let sk = PoseSkeleton::new(&parents, &rest).unwrap();
    let (_, a) = clip(&sk, &[(0, &[z_turn(20.0)], Some(&[Vec3::X]))]);
    let pa = sampled(&a, 0.0);
    let mut out = LocalPose::default();
    mix(
        &[full(&pa, &a, 0.6)],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // (The games would give it the identity, §3.6; we keep the rest.)
    assert_eq!(out.get(1), rest[1]);
    // The keyed joint: one layer alone, normalised, is its own rotation whatever its weight.
    assert_quat(out.get(0).rotation, z_turn(20.0), "keyed joint");
    // No layer at all: the rest pose.
    mix(&[], sk.rest(), TranslationRule::Absolute, &mut out);
    assert_eq!((out.get(0), out.get(1)), (rest[0], rest[1]));
}

#[test]
fn gta_iii_adds_translation_keys_to_the_rest_where_sa_takes_them_as_positions() {
    let sk = chain(1);
    // Rest (0, 0, 1); one layer keys (0, 0, 0.2) at weight 0.5.
    let (_, a) = clip(
        &sk,
        &[(0, &[Quat::IDENTITY], Some(&[Vec3::new(0.0, 0.0, 0.2)]))],
    );
    let pa = sampled(&a, 0.0);
    let layers = [full(&pa, &a, 0.5)];
    let mut out = LocalPose::default();
    // SA (absolute): Σw·t + (1 − W)·rest = 0.5·0.2 + 0.5·1 = 0.6.
    mix(&layers, sk.rest(), TranslationRule::Absolute, &mut out);
    assert_vec(out.get(0).translation, Vec3::new(0.0, 0.0, 0.6), "SA");
    // III (added to the rest): rest + Σw·t = 1 + 0.1 = 1.1.
    mix(&layers, sk.rest(), TranslationRule::AddedToRest, &mut out);
    assert_vec(out.get(0).translation, Vec3::new(0.0, 0.0, 1.1), "III");
    // rigplay's loader gives III clips their rest offsets added (key 0.2 becomes 1.2), and
    // the absolute rule then gives III's answer: 0.5·1.2 + 0.5·1 = 1.1.
    let (_, loaded) = clip(
        &sk,
        &[(0, &[Quat::IDENTITY], Some(&[Vec3::new(0.0, 0.0, 1.2)]))],
    );
    let pl = sampled(&loaded, 0.0);
    mix(
        &[full(&pl, &loaded, 0.5)],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    assert_vec(
        out.get(0).translation,
        Vec3::new(0.0, 0.0, 1.1),
        "III as loaded",
    );
    // Weights summing over 1 are normalised: two layers at 1 keying 0.2 and 0.4 give 0.3.
    let (_, b) = clip(
        &sk,
        &[(0, &[Quat::IDENTITY], Some(&[Vec3::new(0.0, 0.0, 0.4)]))],
    );
    let pb = sampled(&b, 0.0);
    mix(
        &[full(&pa, &a, 1.0), full(&pb, &b, 1.0)],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    assert_vec(
        out.get(0).translation,
        Vec3::new(0.0, 0.0, 0.3),
        "normalised",
    );
}

#[test]
fn an_additive_layer_adds_its_difference_from_its_reference_frame() {
    let sk = chain(2);
    let (_, base) = clip(
        &sk,
        &[
            (0, &[z_turn(30.0)], Some(&[Vec3::Z])),
            (1, &[z_turn(5.0)], None),
        ],
    );
    // The additive clip keys joint 0 only: 10° at 0 s, 50° at 1 s; translation x 0.5 → 1.5.
    let (_, add) = clip(
        &sk,
        &[(
            0,
            &[z_turn(10.0), z_turn(50.0)],
            Some(&[Vec3::new(0.5, 0.0, 0.0), Vec3::new(1.5, 0.0, 0.0)]),
        )],
    );
    let pb = sampled(&base, 0.0);
    let (now, reference) = (sampled(&add, 1.0), sampled(&add, 0.0));
    let additive = MixLayer {
        additive: Some(&reference),
        ..full(&now, &add, 0.5)
    };
    let mut out = LocalPose::default();
    mix(
        &[full(&pb, &base, 1.0), additive],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // Δ = 50° − 10° = 40° about Z; half of it (slerp from the identity) is 20°, put before the
    // base's 30°: 50°. Translation: (0, 0, 1) + 0.5·((1.5, 0, 0) − (0.5, 0, 0)) = (0.5, 0, 1).
    assert_quat(out.get(0).rotation, z_turn(50.0), "joint 0");
    assert_vec(
        out.get(0).translation,
        Vec3::new(0.5, 0.0, 1.0),
        "joint 0 translation",
    );
    // Joint 1: the additive clip does not key it.
    assert_quat(out.get(1).rotation, z_turn(5.0), "joint 1");
    // At the reference time the additive layer changes nothing.
    let at_reference = MixLayer {
        additive: Some(&reference),
        ..full(&reference, &add, 1.0)
    };
    mix(
        &[full(&pb, &base, 1.0), at_reference],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    assert_quat(out.get(0).rotation, z_turn(30.0), "at the reference");
    assert_vec(out.get(0).translation, Vec3::Z, "at the reference");
}

#[test]
fn a_mask_limits_a_layer_and_leaves_the_base_whole_elsewhere() {
    let sk = chain(2);
    let (_, base) = clip(&sk, &[(0, &[z_turn(0.0)], None), (1, &[z_turn(0.0)], None)]);
    let (_, upper) = clip(
        &sk,
        &[(0, &[z_turn(80.0)], None), (1, &[z_turn(80.0)], None)],
    );
    let (pb, pu) = (sampled(&base, 0.0), sampled(&upper, 0.0));
    let mask = [0.0, 1.0];
    let partial = MixLayer {
        partial: true,
        mask: Some(&mask),
        ..full(&pu, &upper, 0.5)
    };
    let mut out = LocalPose::default();
    mix(
        &[full(&pb, &base, 1.0), partial],
        sk.rest(),
        TranslationRule::Absolute,
        &mut out,
    );
    // Joint 0 is masked out of the partial: the base keeps it whole (0°). Joint 1: halfway,
    // 40°.
    assert_quat(out.get(0).rotation, Quat::IDENTITY, "masked out");
    assert_quat(out.get(1).rotation, z_turn(40.0), "masked in");
}

#[test]
fn weights_that_are_not_numbers_or_below_zero_are_left_out_of_a_mix_and_refused_by_layers() {
    let sk = chain(1);
    let (_, a) = clip(&sk, &[(0, &[z_turn(20.0)], None)]);
    let (_, b) = clip(&sk, &[(0, &[z_turn(70.0)], None)]);
    let (pa, pb) = (sampled(&a, 0.0), sampled(&b, 0.0));
    let mut out = LocalPose::default();
    for bad in [f32::NAN, -0.5, f32::INFINITY] {
        mix(
            &[full(&pa, &a, 1.0), full(&pb, &b, bad)],
            sk.rest(),
            TranslationRule::Absolute,
            &mut out,
        );
        assert_quat(out.get(0).rotation, z_turn(20.0), "bad weight left out");
        let mut layer = Layer::new(0u32);
        assert!(matches!(layer.set_weight(bad), Err(LayerError::Weight(_))));
        assert_eq!(layer.weight(), 1.0, "the weight stays");
    }
    let mut stack = LayerStack::new();
    assert!(matches!(
        stack.blend_animation(1u32, f32::NAN, LayerFlags::default()),
        Err(LayerError::Rate(_))
    ));
    assert!(matches!(
        stack.blend_animation(1u32, -2.0, LayerFlags::default()),
        Err(LayerError::Rate(_))
    ));
    assert!(stack.is_empty());
}

/// Steps `stack` by `dt` with every clip `len(clip)` long; the events.
fn step(stack: &mut LayerStack<u32>, dt: f32, len: impl Fn(u32) -> f32) -> Vec<LayerEvent<u32>> {
    let mut events = Vec::new();
    let mut steps: Vec<PlayStep> = Vec::new();
    stack.step(dt, |c| Some(len(*c)), &mut events, &mut steps);
    events
}

#[test]
fn weights_follow_the_blend_deltas_frame_by_frame_and_faded_layers_go() {
    let mut stack = LayerStack::new();
    let idle = stack.push(Layer::new(1u32));
    // Walk fades in at 2.5 per second; idle, of the same kind, fades out at 2.5 and goes.
    let walk = stack
        .blend_animation(2u32, 2.5, LayerFlags::MOVEMENT)
        .unwrap();
    for frame in 1..=5 {
        let events = step(&mut stack, 0.1, |_| 1.0);
        // Each 0.1 s frame moves the weights by 0.25.
        let w = (0.25 * frame as f32).min(1.0);
        assert!(
            (stack.get(walk).unwrap().weight() - w).abs() < 1e-6,
            "frame {frame}"
        );
        match stack.get(idle) {
            Some(l) => assert!((l.weight() - (1.0 - w)).abs() < 1e-6, "frame {frame}"),
            None => {
                // Faded to 0 at frame 4 (1 − 4·0.25), and removed then.
                assert!(frame >= 4, "idle removed at frame {frame}");
                assert_eq!(
                    events.contains(&LayerEvent::Removed(idle, 1)),
                    frame == 4,
                    "frame {frame}"
                );
            }
        }
    }
    assert!(stack.get(idle).is_none() && stack.len() == 1);
    // Walk reached 1 and stopped fading in.
    assert_eq!(stack.get(walk).unwrap().blend_delta(), 0.0);
}

#[test]
fn a_layer_that_ends_freezes_on_its_last_frame_or_fades_out_and_goes() {
    let mut stack = LayerStack::new();
    let frozen = stack.push(
        Layer::new(1u32)
            .with_mode(PlayMode::Once)
            .with_flags(LayerFlags {
                freeze_last_frame: true,
                ..LayerFlags::default()
            }),
    );
    let fading = stack.push(Layer::new(2u32).with_mode(PlayMode::Once));
    // Both clips last 0.5 s: frames of 0.125 s end them on frame 4.
    let mut finished = Vec::new();
    for frame in 1..=5 {
        for e in step(&mut stack, 0.125, |_| 0.5) {
            if let LayerEvent::Finished(id) = e {
                assert_eq!(frame, 4);
                finished.push(id);
            }
        }
    }
    finished.sort();
    assert_eq!(finished, vec![frozen, fading]);
    let f = stack.get(frozen).unwrap();
    assert_eq!((f.playhead.time, f.weight()), (0.5, 1.0), "frozen holds");
    // The other fades at 4 per second from frame 4 on: 1 − 4·0.125 = 0.5 after frame 5, 0
    // (and removed) after frame 6.
    let g = stack.get(fading).unwrap();
    assert_eq!(g.weight(), 0.5);
    let events = step(&mut stack, 0.125, |_| 0.5);
    assert!(stack.get(fading).is_none(), "faded out and removed");
    assert!(events.contains(&LayerEvent::Removed(fading, 2)));
    for _ in 0..20 {
        step(&mut stack, 0.125, |_| 0.5);
    }
    let f = stack.get(frozen).unwrap();
    assert_eq!((f.playhead.time, f.weight()), (0.5, 1.0), "still frozen");
}

#[test]
fn walk_to_run_keeps_the_phase_of_the_step() {
    // Walk cycles in 1.2 s, run in 0.8 s.
    let len = |c: u32| if c == 1 { 1.2 } else { 0.8 };
    let mut stack = LayerStack::new();
    let walk = stack.push(Layer::new(1u32).with_flags(LayerFlags::MOVEMENT));
    for _ in 0..5 {
        step(&mut stack, 0.1, len);
    }
    // Walk alone advances at its own speed: 0.5 s in, phase 0.5 / 1.2 = 0.41667.
    assert!((stack.get(walk).unwrap().playhead.time - 0.5).abs() < 1e-5);
    let run = stack
        .blend_animation(2u32, 4.0, LayerFlags::MOVEMENT)
        .unwrap();
    let phase = |s: &LayerStack<u32>, id: u32, c: u32| s.get(id).map(|l| l.playhead.time / len(c));
    let mut last = phase(&stack, walk, 1).unwrap();
    for frame in 0..6 {
        step(&mut stack, 0.1, len);
        let (pw, pr) = (phase(&stack, walk, 1), phase(&stack, run, 2).unwrap());
        if let Some(pw) = pw {
            assert!((pw - pr).abs() < 1e-5, "frame {frame}: walk {pw} run {pr}");
            // Both advance by dt·Σw/Σ(w·L): on frame 0 the weights are 0.6 (walk) and 0.4
            // (run): 0.1 · 1 / (0.6·1.2 + 0.4·0.8) = 0.1 / 1.04 = 0.096154 of a cycle.
            if frame == 0 {
                assert!((pw - last - 0.1 / 1.04).abs() < 1e-5, "{pw} {last}");
            }
            last = pw;
        }
    }
    // Walk has faded out (0.25 s at 4 per second) and gone; run plays at its own rate.
    assert!(stack.get(walk).is_none());
    assert_eq!(stack.get(run).unwrap().weight(), 1.0);
}

#[test]
fn blend_animation_fades_out_only_layers_of_its_kind() {
    let mut stack = LayerStack::new();
    let base = stack.push(Layer::new(1u32));
    let phone = stack
        .blend_animation(5u32, 10.0, LayerFlags::PARTIAL)
        .unwrap();
    step(&mut stack, 0.05, |_| 1.0);
    // A partial clip leaves the full base alone.
    assert_eq!(stack.get(base).unwrap().blend_delta(), 0.0);
    assert!((stack.get(phone).unwrap().weight() - 0.5).abs() < 1e-6);
    // A second partial replaces the first; the base still stays.
    let gun = stack
        .blend_animation(6u32, 10.0, LayerFlags::PARTIAL)
        .unwrap();
    assert!(stack.get(phone).unwrap().is_leaving());
    assert!(!stack.get(base).unwrap().is_leaving());
    for _ in 0..3 {
        step(&mut stack, 0.05, |_| 1.0);
    }
    assert!(stack.get(phone).is_none());
    assert_eq!(stack.get(gun).unwrap().weight(), 1.0);
    // Blending the same clip in again keeps its layer.
    assert_eq!(
        stack
            .blend_animation(6u32, 10.0, LayerFlags::PARTIAL)
            .unwrap(),
        gun
    );
}

/// The built-in SA skeleton's bone names and parents.
fn sa_names() -> (Vec<String>, Vec<Option<usize>>) {
    let sk = rigplay::skeleton::Skeleton::gta_sa();
    (
        sk.bones.iter().map(|b| b.name.clone()).collect(),
        sk.bones.iter().map(|b| b.parent).collect(),
    )
}

#[test]
fn named_masks_split_a_gta_skeleton_into_body_parts() {
    let (names, parents) = sa_names();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let has = |mask: &BoneMask, bone: &str| {
        let r = mask.resolve(&names, &parents);
        assert!(r.unknown.is_empty(), "{:?}", r.unknown);
        let i = names
            .iter()
            .position(|n| n.trim().eq_ignore_ascii_case(bone))
            .unwrap_or_else(|| panic!("no {bone}"));
        r.weights[i] == 1.0
    };
    let upper = BoneMask::UpperBody;
    for b in ["Spine", "Spine1", "Head", "L Hand", "R Finger", "Neck"] {
        assert!(has(&upper, b), "upper body has {b}");
    }
    for b in ["Pelvis", "L Thigh", "R Foot", "Normal"] {
        assert!(!has(&upper, b), "upper body lacks {b}");
        assert!(has(&BoneMask::LowerBody, b), "lower body has {b}");
    }
    assert!(has(&BoneMask::LeftArm, "L Hand") && !has(&BoneMask::LeftArm, "R Hand"));
    assert!(has(&BoneMask::RightArm, "R ForeArm") && !has(&BoneMask::RightArm, "Head"));
    assert!(has(&BoneMask::Head, "Head") && !has(&BoneMask::Head, "Spine1"));
    // Names as GTA matches them: case and spaces ignored.
    let bones = BoneMask::Bones(vec!["spine 1".into(), "L HAND".into()]);
    assert!(has(&bones, "Spine1") && has(&bones, "L Hand") && !has(&bones, "L Finger"));
    let below = BoneMask::Below(vec!["l forearm".into()]);
    assert!(has(&below, "L Hand") && has(&below, "L Finger") && !has(&below, "L UpperArm"));
    // Unknown names are reported, not guessed.
    let r = BoneMask::Bones(vec!["Tail".into(), "Head".into()]).resolve(&names, &parents);
    assert_eq!(r.unknown, vec!["Tail".to_string()]);
    assert_eq!(r.weights.iter().filter(|w| **w == 1.0).count(), 1);
    // A skeleton with no spine cannot split into halves.
    let r = BoneMask::UpperBody.resolve(&["a", "b"], &[None, Some(0)]);
    assert_eq!(r.weights, vec![0.0, 0.0]);
    assert_eq!(r.unknown.len(), 1);
}

#[test]
fn a_cycle_in_the_parents_ends() {
    let r =
        BoneMask::Below(vec!["a".into()]).resolve(&["a", "b", "c"], &[Some(1), Some(0), Some(1)]);
    // a is under itself; b and c loop through a.
    assert_eq!(r.weights, vec![1.0, 1.0, 1.0]);
    let r = BoneMask::Below(vec!["c".into()]).resolve(&["a", "b", "c"], &[Some(1), Some(0), None]);
    assert_eq!(r.weights, vec![0.0, 0.0, 1.0]);
}

/// Clips keyed as real packages are: a test that `Clip` tracks with unrelated key times mix.
#[test]
fn layers_of_unrelated_key_times_mix_at_every_frame_as_per_joint_slerps_predict() {
    let sk = chain(2);
    let (_, a) = clip(&sk, &[(0, &[z_turn(0.0), z_turn(60.0)], None)]);
    let (_, b) = clip(
        &sk,
        &[(0, &[z_turn(20.0), z_turn(20.0), z_turn(80.0)], None)],
    );
    let mut out = LocalPose::default();
    for k in 0..=10 {
        let t = k as f32 * 0.1;
        let (pa, pb) = (sampled(&a, t), sampled(&b, t));
        mix(
            &[full(&pa, &a, 0.5), full(&pb, &b, 0.5)],
            sk.rest(),
            TranslationRule::Absolute,
            &mut out,
        );
        // a turns 60·t degrees; b holds 20° until 1 s. Equal weights of two turns about one
        // axis give the turn halfway: (60t + 20) / 2.
        assert_quat(out.get(0).rotation, z_turn((60.0 * t + 20.0) / 2.0), "t");
    }
}

#[test]
fn an_additive_layer_turns_by_the_exact_slerp_fraction_at_any_angle() {
    let sk = chain(1);
    let (_, base) = clip(&sk, &[(0, &[Quat::IDENTITY], None)]);
    let pb = sampled(&base, 0.0);
    for degrees in [0.0f32, 0.5, 5.0, 60.0, 120.0, 179.0, 250.0] {
        let axis = Vec3::new(0.3, -0.5, 0.8).normalize();
        let turn = Quat::from_axis_angle(axis, degrees.to_radians());
        let (_, add) = clip(&sk, &[(0, &[Quat::IDENTITY, turn], None)]);
        let (now, reference) = (sampled(&add, 1.0), sampled(&add, 0.0));
        for w in [0.1f32, 0.3, 0.75, 1.0] {
            let mut out = LocalPose::default();
            mix(
                &[
                    full(&pb, &base, 1.0),
                    MixLayer {
                        additive: Some(&reference),
                        ..full(&now, &add, w)
                    },
                ],
                sk.rest(),
                TranslationRule::Absolute,
                &mut out,
            );
            // The short way round from the identity to the key, a fraction w of it (f64).
            let d = now.get(0).rotation.as_dquat();
            let d = if d.w < 0.0 { -d } else { d };
            let want = glam::DQuat::IDENTITY.slerp(d, w as f64).as_quat();
            let e = angle(out.get(0).rotation, want);
            assert!(e < 2e-6, "{degrees}° at {w}: {e} rad off");
        }
    }
}
