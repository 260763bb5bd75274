//! Built-in skeletons and binding tracks to bones by id, name and alias.

use glam::{Quat, Vec3};
use rigplay::anim::{BoneRef, BoneTrack, ClipBuilder};
use rigplay::skeleton::{Skeleton, canonical_bone_id};

fn bone(name: &str, id: Option<i32>) -> BoneRef {
    BoneRef {
        name: name.into(),
        id,
    }
}

#[test]
fn sa_skeleton_matches_the_spec_tables() {
    let s = Skeleton::gta_sa();
    assert_eq!(s.bones.len(), 32);
    let by_id = |id| s.bones.iter().find(|b| b.id == Some(id)).unwrap();
    let parent_id = |id| s.bones[by_id(id).parent.unwrap()].id.unwrap();
    // Clavicles hang off the neck, thighs off the pelvis, Belly off Spine, breasts off Spine1.
    assert_eq!(
        (parent_id(21), parent_id(31), parent_id(41), parent_id(51)),
        (4, 4, 1, 1)
    );
    assert_eq!((parent_id(201), parent_id(301), parent_id(302)), (2, 3, 3));
    assert_eq!(by_id(44).name, " L Toe0");
    assert_eq!(by_id(42).rest.translation, Vec3::new(0.4554, 0.0, 0.0));
    // Parents come before children.
    assert!(
        s.bones
            .iter()
            .enumerate()
            .all(|(i, b)| b.parent.is_none_or(|p| p < i))
    );
    assert_eq!(Skeleton::gta_vc().bones.len(), 24);
    assert_eq!(Skeleton::gta_iii().bones.len(), 16);
}

#[test]
fn tracks_bind_by_id_then_name_then_alias() {
    let sa = Skeleton::gta_sa();
    let name_of = |b: &BoneRef, s: &Skeleton| s.find(b).map(|i| s.bones[i].name.clone());
    // By id, whatever the name says (SA ped.ifp binds "DOOR" to id 1).
    assert_eq!(
        name_of(&bone("DOOR", Some(1)), &sa).as_deref(),
        Some(" Pelvis")
    );
    // By name with id -1: leading spaces and case do not matter.
    assert_eq!(
        name_of(&bone("pelvis", None), &sa).as_deref(),
        Some(" Pelvis")
    );
    // Aliases: VC spellings, III names, Root/Normal.
    assert_eq!(
        name_of(&bone("L Fingers", None), &sa).as_deref(),
        Some(" L Finger")
    );
    assert_eq!(
        name_of(&bone("R Forearm", None), &sa).as_deref(),
        Some(" R ForeArm")
    );
    assert_eq!(
        name_of(&bone("L Toe", None), &sa).as_deref(),
        Some(" L Toe0")
    );
    assert_eq!(name_of(&bone("Root", None), &sa).as_deref(), Some("Normal"));
    assert_eq!(
        name_of(&bone("Slowerlegr", None), &sa).as_deref(),
        Some(" R Calf")
    );
    // And the other way: SA names onto the III skeleton, which has no ids.
    let iii = Skeleton::gta_iii();
    assert_eq!(
        name_of(&bone(" R Calf", Some(52)), &iii).as_deref(),
        Some("Slowerlegr")
    );
    assert_eq!(name_of(&bone("HeadNub", Some(303)), &sa), None);
    assert_eq!(canonical_bone_id("bip01lclavicle"), Some(31));

    // VC toes have their own ids.
    let vc = Skeleton::gta_vc();
    assert_eq!(
        name_of(&bone("x", Some(2001)), &vc).as_deref(),
        Some("R Toe0")
    );
}

#[test]
fn binding_reports_unmatched_and_duplicate_tracks() {
    let mut b = ClipBuilder::new("c");
    let t = b.times(&[0.0]).unwrap();
    for (name, id) in [
        ("Normal", Some(0)),
        ("Root", None),
        ("Tail", None),
        (" Head", Some(5)),
    ] {
        let r = b.rotations(t, &[Quat::IDENTITY]).unwrap();
        b.track(BoneTrack {
            bone: bone(name, id),
            rotation: Some(r),
            translation: None,
            scale: None,
        });
    }
    let clip = b.build();
    let sa = Skeleton::gta_sa();
    let binding = sa.bind(&clip);
    assert_eq!(binding.targets, vec![Some(0), None, None, Some(5)]);
    assert_eq!(binding.duplicates, vec![bone("Root", None)]);
    assert_eq!(binding.unmatched, vec![bone("Tail", None)]);
}

#[test]
fn anpk_packages_bind_to_sa_when_they_use_a_bone_id_only_sa_has() {
    use rigplay::formats::ifp::IfpPackage;
    use rigplay::skeleton::{GtaGame, is_sa_only_bone_id};
    // Tags 1 and 41 are in VC's ped as well: VC.
    let vc = IfpPackage::read(&crate::ifp_fixtures::anpk_with_44_byte_anim()).unwrap();
    assert_eq!(GtaGame::for_ifp(&vc.package), GtaGame::Vc);
    // Belly (201) and L breast (301) exist only in SA's ped: a cutscene package of SA.
    let cs = IfpPackage::read(&crate::ifp_fixtures::anpk_sa_cutscene()).unwrap();
    assert_eq!(GtaGame::for_ifp(&cs.package), GtaGame::Sa);
    // The table: SA's toes, jaw, brows, finger joints, belly and breasts; not the shared ones
    // nor the 5000s both games use.
    for id in [6, 7, 8, 26, 36, 44, 54, 201, 301, 302, 305] {
        assert!(is_sa_only_bone_id(id), "{id}");
    }
    for id in [0, 1, 5, 21, 25, 31, 35, 41, 43, 51, 53, 2000, 5001, -1] {
        assert!(!is_sa_only_bone_id(id), "{id}");
    }
    // Every SA-only id is a bone of the SA skeleton or of SA's cutscene extras, and none of the
    // VC skeleton's.
    let vc_skeleton = GtaGame::Vc.skeleton();
    for b in &GtaGame::Sa.skeleton().bones {
        if let Some(id) = b.id
            && is_sa_only_bone_id(id)
        {
            assert!(
                !vc_skeleton.bones.iter().any(|v| v.id == Some(id)),
                "{} ({id}) is in VC's skeleton",
                b.name
            );
        }
    }
}

#[test]
fn gta_iii_adds_translation_keys_to_the_rest_position_where_vc_and_sa_take_them_as_is() {
    // A III clip moving "Smid" by (0.01, 0, 0) and "Swaist" (the root, at the origin) by
    // (0, 1, 0): III's rule (§3.4) puts Smid at its rest (0.0451, −0.0708, 0.0003) + the key,
    // and leaves the root's keys as they are.
    let mut b = ClipBuilder::new("nudge");
    for (name, key) in [("Smid", Vec3::new(0.01, 0.0, 0.0)), ("Swaist", Vec3::Y)] {
        let times = b.times(&[0.0, 1.0]).unwrap();
        let translation = b.translations(times, &[Vec3::ZERO, key]).unwrap();
        b.track(BoneTrack {
            bone: BoneRef {
                name: name.into(),
                id: None,
            },
            rotation: None,
            translation: Some(translation),
            scale: None,
        });
    }
    let clip = b.build();
    let iii = Skeleton::gta_iii().additive_translations(&clip);
    let at = |c: &rigplay::anim::Clip, track: usize, t: f32| {
        c.sample_track(track, t).translation.unwrap()
    };
    assert!(at(&iii, 0, 1.0).abs_diff_eq(Vec3::new(0.0551, -0.0708, 0.0003), 1e-6));
    assert!(at(&iii, 0, 0.0).abs_diff_eq(Vec3::new(0.0451, -0.0708, 0.0003), 1e-6));
    assert_eq!(at(&iii, 1, 1.0), Vec3::Y);
    // The original is untouched (VC and SA play it so).
    assert_eq!(at(&clip, 0, 1.0), Vec3::new(0.01, 0.0, 0.0));
}
