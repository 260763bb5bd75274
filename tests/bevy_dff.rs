//! The DFF plugin in a headless Bevy app: a hand-assembled model with its texture dictionary
//! through the AssetServer, spawned by `GtaModel` and as a scene; skinning against the frames;
//! broken models and dictionaries; the bundled sample ped playing an IFP clip like the
//! built-in skeleton.

use crate::bevy_ifp::{app_with, bone, load, load_error};
use crate::bytes::Bytes;
use crate::dff_read::{BASE, POSITIONS, clump};
use bevy::asset::LoadState;
use bevy::image::ImagePlugin;
use bevy::math::Affine3A;
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::{MeshPlugin, VertexAttributeValues};
use bevy::prelude::*;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot, WorldSerializationPlugin};
use rigplay::animation::BonePose;
use rigplay::plugin::*;
use rigplay::skeleton::Skeleton;
use std::time::Duration;

pub(crate) const SA: u32 = 0x1803_FFFF;

/// A dictionary with one D3D9 8888 texture "SKIN" (upper case: materials find textures
/// case-insensitively), 2×2 with a 1×1 mip level. Level 0 texels (B, G, R, A in memory):
/// red opaque, green opaque, blue opaque, white with alpha 0.
pub(crate) fn skin_txd() -> Vec<u8> {
    let mut b = Bytes::new();
    b.chunk(0x16, SA, |b| {
        b.chunk(0x01, SA, |b| {
            b.u16(1).u16(2);
        });
        b.chunk(0x15, SA, |b| {
            b.chunk(0x01, SA, |b| {
                // platform 9, filter 2 (linear), U and V addressing 1 (wrap)
                b.u32(9).u32(0x1102);
                b.fixed("SKIN", 32, &[]).fixed("", 32, &[]);
                // raster 0x8500 (8888 with mip levels), D3DFMT_A8R8G8B8 = 21, 2×2, 32 bpp,
                // 2 levels, type 4, flags 1 (alpha)
                b.u32(0x8500).u32(21).u16(2).u16(2);
                b.u8(32).u8(2).u8(4).u8(1);
                b.u32(16).raw(&[
                    0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255, 255, 255, 255, 0,
                ]);
                b.u32(4).raw(&[10, 20, 30, 255]);
            });
            b.chunk(0x03, SA, |_| {});
        });
        b.chunk(0x03, SA, |_| {});
    });
    b.done()
}

/// A headless app that loads models: the IFP app of `bevy_ifp` with the DFF plugin and the
/// asset types a model's sub-assets need (meshes, images, materials) but no renderer.
fn dff_app(files: &[(&str, Vec<u8>)]) -> App {
    dff_app_with(files, &[])
}

/// [`dff_app`] with `.meta` files.
pub(crate) fn dff_app_with(files: &[(&str, Vec<u8>)], metas: &[(&str, &str)]) -> App {
    let mut app = app_with(
        files,
        metas,
        1.0 / 30.0,
        (
            ImagePlugin::default(),
            MeshPlugin,
            WorldSerializationPlugin,
            DffPlugin,
        ),
    );
    app.init_asset::<StandardMaterial>();
    app
}

fn mesh<'a>(app: &'a App, handle: &Handle<Mesh>) -> &'a Mesh {
    app.world().resource::<Assets<Mesh>>().get(handle).unwrap()
}

/// Where Bevy's skinning puts a stored vertex: Σ wₖ · (G(jointₖ) · IBMₖ) · v.
pub(crate) fn skinned(
    app: &mut App,
    skin: &SkinnedMesh,
    joints: [u16; 4],
    weights: [f32; 4],
    v: Vec3,
) -> Vec3 {
    let ibms = app
        .world()
        .resource::<Assets<SkinnedMeshInverseBindposes>>()
        .get(&skin.inverse_bindposes)
        .unwrap()
        .to_vec();
    let mut out = Vec3::ZERO;
    for k in 0..4 {
        let j = joints[k] as usize;
        let g = app
            .world()
            .get::<GlobalTransform>(skin.joints[j])
            .unwrap()
            .to_matrix();
        out += weights[k] * (g * ibms[j]).transform_point3(v);
    }
    out
}

#[test]
fn a_model_loads_textured_and_skinned_and_spawns_bones_clips_bind_to() {
    let mut app = dff_app(&[
        ("models/fixture.dff", clump(BASE)),
        ("models/fixture.txd", skin_txd()),
    ]);
    let handle: Handle<Dff> = load(&mut app, "models/fixture.dff");
    let model = app.world().resource::<Assets<Dff>>().get(&handle).unwrap();
    assert_eq!(model.dictionaries, ["models/fixture.txd"]);
    assert!(
        model.missing_textures.is_empty(),
        "{:?}",
        model.missing_textures
    );
    // The reader's warning about the unknown material plugin 0x0BADF00D is kept.
    assert!(
        model.warnings.iter().any(|w| w.contains("0xbadf00d")),
        "{:?}",
        model.warnings
    );
    let clump = model.clumps[0].clone();
    let names: Vec<&str> = clump.frames.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["Frame0", "Root", " Bone"]);
    assert_eq!(
        clump.frames.iter().map(|f| f.bone_id).collect::<Vec<_>>(),
        [None, Some(0), Some(1)]
    );
    // "Root" is the canonical root bone: the target id of the built-in skeleton's `Normal`.
    let sa = Skeleton::gta_sa();
    let normal = rigplay::animation::BoneRef {
        name: "Normal".into(),
        id: Some(0),
    };
    assert_eq!(clump.frames[1].target, Some(bone_target_id(&sa, &normal)));
    assert!(clump.frames[0].target.is_none());
    assert_eq!(clump.bones, [1, 2]);

    // Atomic 0: the skinned geometry, one material (colour alpha 200: blended) textured "skin".
    let skinned_atomic = &clump.atomics[0];
    assert_eq!(skinned_atomic.skin.as_ref().unwrap().joints, [1, 2]);
    assert_eq!(skinned_atomic.parts.len(), 1);
    let (mesh0, material0) = skinned_atomic.parts[0].clone();
    let mat = app
        .world()
        .resource::<Assets<StandardMaterial>>()
        .get(&material0)
        .unwrap();
    assert_eq!(mat.alpha_mode, AlphaMode::Blend);
    assert_eq!(mat.base_color_texture.as_ref(), model.texture("skin"));
    let image = app
        .world()
        .resource::<Assets<Image>>()
        .get(model.texture("Skin").unwrap())
        .unwrap();
    assert_eq!(image.texture_descriptor.mip_level_count, 2);
    // RGBA of level 0 then the 1×1 level: BGRA swapped.
    assert_eq!(
        image.data.as_deref().unwrap(),
        &[
            255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 0, 30, 20, 10, 255
        ]
    );
    let m = mesh(&app, &mesh0);
    let Some(VertexAttributeValues::Uint16x4(joints)) = m.attribute(Mesh::ATTRIBUTE_JOINT_INDEX)
    else {
        panic!("no joints")
    };
    let Some(VertexAttributeValues::Float32x4(weights)) = m.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT)
    else {
        panic!("no weights")
    };
    // Vertex 0: weight 1 on bone 0, the junk index 7 of its zero-weight slots not passed on;
    // vertex 1 binds its first slot to bone 1 (the fixture's bone_index). A bone named in two
    // slots takes both weights in its first (glTF forbids a joint twice on a vertex; the skinned
    // sum is the same): vertex 1's (1, 0, 1, 0) at (0.5, 0.25, 0.125, 0.125) is bone 1 at
    // 0.5 + 0.125 and bone 0 at 0.25 + 0.125; vertex 2's (0, 1, 0, 1) at (0.4, 0.3, 0.2, 0.1) is
    // bone 0 at 0.6 and bone 1 at 0.4. Weights sum to 1.
    assert_eq!(joints[0], [0, 0, 0, 0]);
    assert_eq!(weights[0], [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(joints[1], [1, 0, 0, 0]);
    assert_eq!(weights[1], [0.625, 0.375, 0.0, 0.0]);
    assert_eq!(joints[2], [0, 1, 0, 0]);
    let w2 = Vec4::from(weights[2]);
    assert!(w2.abs_diff_eq(Vec4::new(0.6, 0.4, 0.0, 0.0), 1e-6), "{w2}");
    let (joints, weights) = (joints.clone(), weights.clone());

    // Atomic 1: the rigid prelit quad on " Bone": two materials, two UV sets, vertex colours.
    let rigid = &clump.atomics[1];
    assert!(rigid.skin.is_none());
    assert_eq!((rigid.frame, rigid.parts.len()), (2, 2));
    let quad = mesh(&app, &rigid.parts[0].0);
    assert!(quad.attribute(Mesh::ATTRIBUTE_UV_1).is_some());
    let Some(VertexAttributeValues::Float32x4(colours)) = quad.attribute(Mesh::ATTRIBUTE_COLOR)
    else {
        panic!("no prelit colours")
    };
    assert_eq!(colours[0], [1.0, 0.0, 0.0, 1.0]);

    // Spawned: frames named as stored, bones with RigBone, the skin's joints those entities.
    let character = app.world_mut().spawn(GtaModel::new(handle)).id();
    app.update();
    app.update();
    let (root, _, _) = bone(&mut app, "Root");
    let (bone1, _, _) = bone(&mut app, " Bone");
    assert!(app.world().get::<RigBone>(root).is_some());
    assert!(app.world().get::<AnimationPlayer>(character).is_some());
    assert_eq!(
        app.world().get::<SkeletonBones>(character).unwrap().0,
        [root, bone1]
    );
    let skin = {
        let world = app.world_mut();
        let mut q = world.query::<&SkinnedMesh>();
        let skins: Vec<SkinnedMesh> = q.iter(world).cloned().collect();
        assert_eq!(skins.len(), 1);
        skins[0].clone()
    };
    assert_eq!(skin.joints, [root, bone1]);

    // In the bind pose every influence k gives G(k)·IBMₖ = G(Root) (the atomic's frame), so
    // each stored vertex lands where the Root entity's global transform puts it.
    let at_root = *app.world().get::<GlobalTransform>(root).unwrap();
    for (v, p) in POSITIONS.iter().enumerate() {
        let p = Vec3::from(*p);
        let got = skinned(&mut app, &skin, joints[v], weights[v], p);
        let want = at_root.transform_point(p);
        assert!((got - want).length() < 1e-5, "vertex {v}: {got} vs {want}");
    }
    // Turn " Bone" by 90° about its local Z: vertex 0 (all on Root) stays; vertex 2 (0.3 + 0.1
    // of its weight on bone 1) moves by that share of the turn.
    app.world_mut()
        .get_mut::<Transform>(bone1)
        .unwrap()
        .rotate_local_z(std::f32::consts::FRAC_PI_2);
    app.update();
    let p0 = Vec3::from(POSITIONS[0]);
    let got0 = skinned(&mut app, &skin, joints[0], weights[0], p0);
    assert!((got0 - at_root.transform_point(p0)).length() < 1e-5);
    let p2 = Vec3::from(POSITIONS[2]);
    let g_root = app
        .world()
        .get::<GlobalTransform>(root)
        .unwrap()
        .to_matrix();
    let g_bone = app
        .world()
        .get::<GlobalTransform>(bone1)
        .unwrap()
        .to_matrix();
    // Bone 1's bind in Root space (§6.2 of the fixture): L = [R | (0,1,0)], R columns (1,0,0),
    // (0,0,1), (0,−1,0); its IBM is L⁻¹.
    let l = Mat4::from_cols(
        Vec4::new(1., 0., 0., 0.),
        Vec4::new(0., 0., 1., 0.),
        Vec4::new(0., -1., 0., 0.),
        Vec4::new(0., 1., 0., 1.),
    );
    let by_root = g_root.transform_point3(p2);
    let by_bone = (g_bone * l.inverse()).transform_point3(p2);
    let want = 0.6 * by_root + 0.4 * by_bone;
    let got2 = skinned(&mut app, &skin, joints[2], weights[2], p2);
    assert!((got2 - want).length() < 1e-5, "{got2} vs {want}");
    assert!(
        (by_bone - by_root).length() > 0.1,
        "the turn moves the vertex"
    );
}

#[test]
fn a_model_spawns_as_a_scene_with_its_skin_joints_mapped() {
    let mut app = dff_app(&[("fixture.dff", clump(BASE))]);
    let scene: Handle<WorldAsset> = load(&mut app, "fixture.dff#Scene0");
    app.world_mut().spawn(WorldAssetRoot(scene));
    for _ in 0..5 {
        app.update();
    }
    let (root, _, _) = bone(&mut app, "Root");
    let (bone1, _, _) = bone(&mut app, " Bone");
    let world = app.world_mut();
    let skins: Vec<SkinnedMesh> = world.query::<&SkinnedMesh>().iter(world).cloned().collect();
    assert_eq!(skins.len(), 1);
    assert_eq!(skins[0].joints, [root, bone1]);
    assert!(world.get::<RigBone>(bone1).is_some());
    // No dictionary beside it: the model loads, the material untextured and named missing.
    let model: Handle<Dff> = load(&mut app, "fixture.dff");
    let model = app.world().resource::<Assets<Dff>>().get(&model).unwrap();
    assert_eq!(model.missing_textures, ["skin"]);
    assert!(model.dictionaries.is_empty());
}

#[test]
fn broken_models_fail_with_their_chunk_path_and_broken_dictionaries_only_warn() {
    let mut cut = clump(BASE);
    cut.truncate(200);
    let mut txd = skin_txd();
    txd.truncate(60);
    let mut app = dff_app(&[
        ("cut.dff", cut),
        ("good.dff", clump(BASE)),
        ("good.txd", txd),
    ]);
    let error = load_error::<Dff>(&mut app, "cut.dff");
    assert!(
        error.contains("cut.dff") && error.contains("Clump"),
        "{error}"
    );
    for _ in 0..5 {
        app.update();
    }
    let good: Handle<Dff> = load(&mut app, "good.dff");
    let model = app.world().resource::<Assets<Dff>>().get(&good).unwrap();
    assert!(
        model.warnings.iter().any(|w| w.contains("good.txd")),
        "{:?}",
        model.warnings
    );
    assert_eq!(model.missing_textures, ["skin"]);
}

/// The world positions of every rig bone under `root`, by name.
/// The built-in SA skeleton and a `GtaModel` of `model`, both playing `clip` paused at `at`,
/// after the frames that bind them.
fn side_by_side(
    app: &mut App,
    model: Handle<Dff>,
    clip: Handle<RigClip>,
    at: f32,
) -> (Entity, Entity) {
    let mut paused = Playback::looping();
    paused.paused = true;
    paused.time = at;
    let skeleton = app
        .world_mut()
        .spawn((
            GtaSkeleton::SA,
            SkeletalClip::new(clip.clone()),
            paused.clone(),
        ))
        .id();
    let model = app
        .world_mut()
        .spawn((GtaModel::new(model), SkeletalClip::new(clip), paused))
        .id();
    for _ in 0..3 {
        app.update();
    }
    (skeleton, model)
}

pub(crate) fn joint_positions(app: &mut App, root: Entity) -> Vec<(String, Vec3)> {
    let world = app.world_mut();
    let mut children = world.query::<&Children>();
    let mut stack = vec![root];
    let mut all = Vec::new();
    while let Some(e) = stack.pop() {
        all.push(e);
        if let Ok(c) = children.get(world, e) {
            stack.extend(c.iter());
        }
    }
    let mut bones = world.query::<(&Name, &GlobalTransform, &RigBone)>();
    let mut out: Vec<(String, Vec3)> = all
        .into_iter()
        .filter_map(|e| bones.get(world, e).ok())
        .map(|(n, g, _)| (n.to_string(), g.translation()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The bundled sample ped (`assets/characters/ped.dff`, the project's own file) and the bundled
/// SA walk: the model, spawned by `GtaModel`, plays the clip with no retarget step, and every
/// joint is where the built-in SA skeleton's is at the same time, at rest and through the cycle
/// (the sample's frames are the built-in table's offsets; the file's `Normal` bind rotation
/// differs and is replaced by the clip's root key).
#[test]
fn the_sample_ped_plays_an_ifp_clip_where_the_built_in_skeleton_does() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let read = |p: &str| std::fs::read(assets.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let mut app = dff_app(&[
        ("characters/ped.dff", read("characters/ped.dff")),
        ("characters/ped.txd", read("characters/ped.txd")),
        ("anims/sa_ped.ifp", read("anims/sa_ped.ifp")),
    ]);
    let ped: Handle<Dff> = load(&mut app, "characters/ped.dff");
    let walk: Handle<RigClip> = load(&mut app, "anims/sa_ped.ifp#walk");
    {
        let model = app.world().resource::<Assets<Dff>>().get(&ped).unwrap();
        assert!(model.warnings.is_empty(), "{:?}", model.warnings);
        assert!(
            model.missing_textures.is_empty(),
            "{:?}",
            model.missing_textures
        );
        assert_eq!(model.game, GtaGame::Sa);
        assert_eq!(model.clumps[0].bones.len(), 32);
    }
    let (skeleton, model) = side_by_side(&mut app, ped, walk, 0.0);
    assert!(
        app.world()
            .get::<UnmatchedTracks>(model)
            .is_none_or(|u| u.0.is_empty())
    );
    let rest_pelvis = joint_positions(&mut app, model)
        .into_iter()
        .find(|(n, _)| n == " Pelvis")
        .unwrap()
        .1;
    let mut largest = 0.0f32;
    let mut moved = 0.0f32;
    for t in [0.0, 0.3, 0.55, 0.9, 1.15] {
        for e in [skeleton, model] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        let a = joint_positions(&mut app, skeleton);
        let b = joint_positions(&mut app, model);
        assert_eq!(
            a.iter().map(|x| &x.0).collect::<Vec<_>>(),
            b.iter().map(|x| &x.0).collect::<Vec<_>>()
        );
        for ((name, p), (_, q)) in a.iter().zip(&b) {
            let d = (*p - *q).length();
            assert!(d < 1e-4, "{name} at {t} s: built-in {p}, model {q}");
            largest = largest.max(d);
        }
        let foot = b.iter().find(|(n, _)| n == " L Foot").unwrap().1;
        moved = moved.max((foot - rest_pelvis).length());
    }
    println!("largest joint difference, model vs built-in skeleton: {largest:e} m");
    assert!(moved > 0.5, "the clip moves the model's feet");

    // Bevy's own AnimationPlayer drives the model's bones too (they are animated by the
    // entity that holds the `GtaModel`), again where it drives the built-in skeleton's.
    let walk: Handle<RigClip> = load(&mut app, "anims/sa_ped.ifp#walk");
    let ped: Handle<Dff> = load(&mut app, "characters/ped.dff");
    for e in [skeleton, model] {
        app.world_mut().entity_mut(e).despawn();
    }
    let skeleton = app
        .world_mut()
        .spawn((GtaSkeleton::SA, PlayAnimation::looping(walk.clone())))
        .id();
    let model = app
        .world_mut()
        .spawn((GtaModel::new(ped), PlayAnimation::looping(walk)))
        .id();
    for _ in 0..12 {
        app.update();
    }
    let a = joint_positions(&mut app, skeleton);
    let b = joint_positions(&mut app, model);
    assert_eq!(a.len(), 32);
    for ((name, p), (_, q)) in a.iter().zip(&b) {
        assert!((*p - *q).length() < 1e-4, "{name}: built-in {p}, model {q}");
    }
    let l_foot = a.iter().find(|(n, _)| n == " L Foot").unwrap().1;
    let r_foot = a.iter().find(|(n, _)| n == " R Foot").unwrap().1;
    assert!(
        (l_foot - r_foot).length() > 0.2,
        "mid-stride the feet are apart"
    );
}

/// The sample ped with every frame's position scaled by `k` in place (a taller or smaller ped,
/// as models in the wild differ from the built-in table): the Frame List Struct is the first
/// child of the Frame List, the Clump's second child (§2.1), 56-byte records with the position
/// at +36.
pub(crate) fn scaled_ped(k: f32) -> Vec<u8> {
    ped_of_frames_scaled(|_| k)
}

/// Per frame, how much [`reproportioned`] and [`reproportioned_ped`] lengthen or shorten its
/// offset: frames in turn 12 % longer, 9 % shorter and 4 % longer (as much as peds in the wild
/// differ, and more: III's gang model is up to 3 cm off the table, §4.3).
pub(crate) fn proportion(frame: usize) -> f32 {
    [1.12, 0.91, 1.04][frame % 3]
}

/// The sample ped with frame `f`'s position scaled by [`proportion`]`(f)` (its skin's inverse
/// bind matrices as they were): a ped of other proportions in SA's own skinned layout.
pub(crate) fn reproportioned_ped() -> Vec<u8> {
    ped_of_frames_scaled(proportion)
}

/// `skeleton` with bone `i`'s offset scaled by [`proportion`]`(i + 1)` (bone `i` is frame
/// `i + 1` of [`skinned_ped`] and [`parts_ped`]): the bones of a model of other proportions.
pub(crate) fn reproportioned(skeleton: &Skeleton) -> Skeleton {
    let mut s = skeleton.clone();
    for (i, bone) in s.bones.iter_mut().enumerate() {
        bone.rest.translation *= proportion(i + 1);
    }
    s
}

/// The sample ped with every frame `f`'s position scaled by `k(f)` in place.
fn ped_of_frames_scaled(k: impl Fn(usize) -> f32) -> Vec<u8> {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut b = std::fs::read(assets.join("characters/ped.dff")).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(u32_at(&b, 0), 0x10, "a Clump");
    let clump_struct = 12;
    let frame_list = clump_struct + 12 + u32_at(&b, clump_struct + 4) as usize;
    assert_eq!(u32_at(&b, frame_list), 0x0E, "the Frame List");
    let records = frame_list + 12 + 12;
    let count = u32_at(&b, records) as usize;
    for f in 0..count {
        let at = records + 4 + 56 * f + 36;
        for c in 0..3 {
            let p = at + 4 * c;
            let v = f32::from_le_bytes(b[p..p + 4].try_into().unwrap()) * k(f);
            b[p..p + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    b
}

/// A ped whose bones are longer than the built-in table's plays the clip with its own
/// proportions: the clip's rotations, the model's offsets. Relative to the pelvis (the root's
/// clip translation is not scaled), every joint is k times as far as the built-in skeleton's.
/// (The skin's inverse bind matrices are left as they were: only the joints are compared.)
#[test]
fn a_ped_with_other_proportions_keeps_them_under_a_clip() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let k = 1.25;
    let mut app = dff_app(&[
        ("tall.dff", scaled_ped(k)),
        (
            "sa_ped.ifp",
            std::fs::read(assets.join("anims/sa_ped.ifp")).unwrap(),
        ),
    ]);
    let tall: Handle<Dff> = load(&mut app, "tall.dff");
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (skeleton, model) = side_by_side(&mut app, tall, walk, 0.4);
    let a = joint_positions(&mut app, skeleton);
    let b = joint_positions(&mut app, model);
    let pelvis = |v: &[(String, Vec3)]| v.iter().find(|(n, _)| n == " Pelvis").unwrap().1;
    let (pa, pb) = (pelvis(&a), pelvis(&b));
    let mut largest = 0.0f32;
    for ((name, p), (_, q)) in a.iter().zip(&b) {
        let want = (*p - pa) * k;
        let d = ((*q - pb) - want).length();
        assert!(d < 1e-4, "{name}: {} vs {want}", *q - pb);
        largest = largest.max(d);
    }
    let head = |v: &[(String, Vec3)]| v.iter().find(|(n, _)| n == " Head").unwrap().1;
    assert!(((head(&b) - pb).length() - k * (head(&a) - pa).length()).abs() < 1e-4);
    println!("largest difference from k × the built-in pose: {largest:e} m");
}

/// GTA III PC (3.3.0.2): peds are separate parts on named frames, no HAnim, no skin (§4.2).
pub(crate) const III: u32 = 0x0C02_FFFF;

/// A model without bones, written field by field (§2.1, §3.2–§3.4, §4.1): frames `(name,
/// parent, position)` with identity rotations, and one atomic per listed frame drawing its own
/// triangle (positions only: no UVs, no normals, so the loader computes them) in one untextured
/// material. III files (stamp `III`) carry the geometry's surface properties, SA ones do not.
pub(crate) fn rigid_model(
    stamp: u32,
    frames: &[(&str, i32, [f32; 3])],
    atomics: &[i32],
) -> Vec<u8> {
    let mut b = Bytes::new();
    b.chunk(0x10, stamp, |b| {
        b.chunk(0x01, stamp, |b| {
            b.i32(atomics.len() as i32).i32(0).i32(0);
        });
        b.chunk(0x0E, stamp, |b| {
            b.chunk(0x01, stamp, |b| {
                b.u32(frames.len() as u32);
                for (_, parent, p) in frames {
                    b.f32s(&[1., 0., 0., 0., 1., 0., 0., 0., 1.])
                        .f32s(p)
                        .i32(*parent)
                        .u32(0);
                }
            });
            for (name, _, _) in frames {
                b.chunk(0x03, stamp, |b| {
                    if !name.is_empty() {
                        b.chunk(0x253F2FE, stamp, |b| {
                            b.raw(name.as_bytes());
                        });
                    }
                });
            }
        });
        // Triangles 0.1 m a side in a bounding sphere of 1 m.
        triangle_atomics(b, stamp, atomics, 0.1, 1.0);
        b.chunk(0x03, stamp, |_| {});
    });
    b.done()
}

/// A Geometry List and Atomics (§3.2–§3.4, §4.1): per entry of `atomics` (a frame index) one
/// geometry of one triangle, `side` metres along x and y in its frame (positions only, no
/// UVs or normals, one untextured material), in a bounding sphere of `radius`, and one atomic
/// drawing it on that frame. III files (stamp `III`) carry the geometry's surface properties.
fn triangle_atomics(b: &mut Bytes, stamp: u32, atomics: &[i32], side: f32, radius: f32) {
    let old = stamp == III;
    b.chunk(0x1A, stamp, |b| {
        b.chunk(0x01, stamp, |b| {
            b.i32(atomics.len() as i32);
        });
        for _ in atomics {
            b.chunk(0x0F, stamp, |b| {
                b.chunk(0x01, stamp, |b| {
                    // POSITIONS | LIGHT, 1 triangle, 3 vertices, 1 morph target
                    b.u32(0x22).i32(1).i32(3).i32(1);
                    if old {
                        b.f32s(&[1.0, 1.0, 1.0]);
                    }
                    // (a, b, c) = (0, 1, 2) stored as b, a, material, c
                    b.u16(1).u16(0).u16(0).u16(2);
                    b.f32s(&[0., 0., 0., radius]).u32(1).u32(0);
                    b.f32s(&[0., 0., 0., side, 0., 0., 0., side, 0.]);
                });
                b.chunk(0x08, stamp, |b| {
                    b.chunk(0x01, stamp, |b| {
                        b.i32(1).i32(-1);
                    });
                    b.chunk(0x07, stamp, |b| {
                        b.chunk(0x01, stamp, |b| {
                            b.u32(0).raw(&[200, 200, 200, 255]).i32(0).u32(0);
                            b.f32s(&[1.0, 1.0, 1.0]);
                        });
                        b.chunk(0x03, stamp, |_| {});
                    });
                });
                b.chunk(0x03, stamp, |_| {});
            });
        }
    });
    for (g, frame) in atomics.iter().enumerate() {
        b.chunk(0x14, stamp, |b| {
            b.chunk(0x01, stamp, |b| {
                b.i32(*frame).i32(g as i32).u32(5).u32(0);
            });
            b.chunk(0x03, stamp, |_| {});
        });
    }
}

/// Vice City PC (3.4.0.3, §1.2): skinned peds with HAnim bones, the old Skin PLG layout.
pub(crate) const VC: u32 = 0x1003_FFFF;

/// A skinned ped written field by field (§2.1–§2.3, §3.2–§3.6, §4.1, §6.2) on the bones of
/// `skeleton` at their rest (its names, tags and parents; parents listed first, depth first):
/// frame 0 the clump's root, frame `1 + i` bone `i`, the HAnim hierarchy on bone 0's frame with
/// the node flags that give back the parents (PUSH where a later sibling follows, POP on a
/// leaf), and one atomic on that frame, skinned in the old layout as III and VC write it
/// (`numUsedBones` and `maxWeights` 0, a `0xDEADDEAD` before each inverse bind matrix, whose
/// fourth column holds junk).
///
/// The mesh is a box along each bone, 7 cm across, from 10 % to 85 % of the way from the bone
/// to its first child (of 10 cm past a leaf; no two boxes touch): its four corners nearer the
/// bone take the bone whole; the four nearer the child take 0.25 of the child, listed first,
/// and 0.75 of the bone (unsorted, as III's weights are), with a junk bone index in the
/// zero-weight slots.
pub(crate) fn skinned_ped(stamp: u32, skeleton: &Skeleton) -> Vec<u8> {
    let frames = &skeleton.bones;
    let all = skeleton.model_space(&skeleton.rest_pose());
    // The skin's bones: the frames with an HAnim ID, in frame order. A frame without one is no
    // bone: it has no box, no HAnim PLG, and the bones below it hang under the bone above it.
    let skin: Vec<usize> = (0..frames.len())
        .filter(|&i| frames[i].id.is_some())
        .collect();
    let bones: Vec<rigplay::skeleton::SkeletonBone> = (skin.iter())
        .map(|&i| {
            let mut up = frames[i].parent;
            while let Some(p) = up.filter(|p| frames[*p].id.is_none()) {
                up = frames[p].parent;
            }
            let mut bone = frames[i].clone();
            bone.parent = up.map(|p| skin.iter().position(|s| *s == p).unwrap());
            bone
        })
        .collect();
    let model: Vec<(Quat, Vec3)> = skin.iter().map(|&i| all[i]).collect();
    let n = bones.len();
    // The box of each bone: eight corners, (bone indices, weights) per corner, 12 triangles.
    let mut positions: Vec<Vec3> = Vec::new();
    let mut influences: Vec<([u8; 4], [f32; 4])> = Vec::new();
    let mut triangles: Vec<[u16; 3]> = Vec::new();
    for i in 0..n {
        let child = bones.iter().position(|b| b.parent == Some(i));
        let (from, to) = match child {
            Some(c) if model[c].1.distance(model[i].1) > 0.02 => (model[i].1, model[c].1),
            _ => (model[i].1, model[i].1 + model[i].0 * Vec3::X * 0.1),
        };
        // Short of both joints, so that no two boxes touch (coplanar faces would fight).
        let (start, end) = (from.lerp(to, 0.1), from.lerp(to, 0.85));
        let along = (end - start).normalize();
        let side = along.any_orthonormal_vector() * 0.035;
        let up = along.cross(side);
        let first = positions.len() as u16;
        for (k, centre) in [start, end].into_iter().enumerate() {
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(centre + side * a + up * b);
                influences.push(match (k, child) {
                    (1, Some(c)) => ([c as u8, i as u8, 7, 7], [0.25, 0.75, 0.0, 0.0]),
                    _ => ([i as u8, 9, 9, 9], [1.0, 0.0, 0.0, 0.0]),
                });
            }
        }
        // The two ends and the four sides, wound outwards.
        let quads = [
            [0, 3, 2, 1],
            [4, 5, 6, 7],
            [0, 1, 5, 4],
            [1, 2, 6, 5],
            [2, 3, 7, 6],
            [3, 0, 4, 7],
        ];
        for q in quads {
            let q = q.map(|v| first + v);
            triangles.push([q[0], q[1], q[2]]);
            triangles.push([q[0], q[2], q[3]]);
        }
    }
    // The node flags that give back the parents (§2.3).
    let flags: Vec<u32> = (0..n)
        .map(|i| {
            let later_sibling = (i + 1..n).any(|j| bones[j].parent == bones[i].parent);
            let leaf = !bones.iter().any(|b| b.parent == Some(i));
            (if later_sibling { 2 } else { 0 }) | (if leaf { 1 } else { 0 })
        })
        .collect();
    let mut b = Bytes::new();
    b.chunk(0x10, stamp, |b| {
        b.chunk(0x01, stamp, |b| {
            b.i32(1).i32(0).i32(0);
        });
        skeleton_frames(b, stamp, skeleton, Some(&flags));
        b.chunk(0x1A, stamp, |b| {
            b.chunk(0x01, stamp, |b| {
                b.i32(1);
            });
            b.chunk(0x0F, stamp, |b| {
                b.chunk(0x01, stamp, |b| {
                    // POSITIONS | LIGHT, one morph target (no surface properties from 3.4 on)
                    b.u32(0x22)
                        .i32(triangles.len() as i32)
                        .i32(positions.len() as i32)
                        .i32(1);
                    if stamp == III {
                        b.f32s(&[1.0, 1.0, 1.0]);
                    }
                    // (a, b, c) stored as b, a, material, c
                    for t in &triangles {
                        b.u16(t[1]).u16(t[0]).u16(0).u16(t[2]);
                    }
                    b.f32s(&[0., 0., 0., 2.]).u32(1).u32(0);
                    for p in &positions {
                        b.f32s(&p.to_array());
                    }
                });
                b.chunk(0x08, stamp, |b| {
                    b.chunk(0x01, stamp, |b| {
                        b.i32(1).i32(-1);
                    });
                    b.chunk(0x07, stamp, |b| {
                        b.chunk(0x01, stamp, |b| {
                            b.u32(0).raw(&[180, 140, 110, 255]).i32(0).u32(0);
                            b.f32s(&[1.0, 1.0, 1.0]);
                        });
                        b.chunk(0x03, stamp, |_| {});
                    });
                });
                b.chunk(0x03, stamp, |b| {
                    b.chunk(0x116, stamp, |b| {
                        // numBones, numUsedBones 0, maxWeights 0 (the old layout), padding
                        b.u8(n as u8).u8(0).u8(0).u8(0);
                        for (indices, _) in &influences {
                            b.raw(indices);
                        }
                        for (_, weights) in &influences {
                            b.f32s(weights);
                        }
                        // Each bone's inverse bind: the inverse of its model-space rest in the
                        // atomic's frame (bone 0's), rows right, up, at, pos (§6.2).
                        let bind0 = Mat4::from_rotation_translation(model[0].0, model[0].1);
                        for (r, t) in &model {
                            let bind = bind0.inverse() * Mat4::from_rotation_translation(*r, *t);
                            let ibm = bind.inverse();
                            b.u32(0xDEAD_DEAD);
                            for (c, junk) in [(0, 0.0), (1, 0.0), (2, 2.0000012), (3, 1e-40)] {
                                b.f32s(&ibm.col(c).truncate().to_array()).f32(junk);
                            }
                        }
                    });
                });
            });
        });
        b.chunk(0x14, stamp, |b| {
            b.chunk(0x01, stamp, |b| {
                // On bone 0's frame, geometry 0, flags 5 (render, collision test)
                b.i32(1).i32(0).u32(5).u32(0);
            });
            b.chunk(0x03, stamp, |_| {});
        });
        b.chunk(0x03, stamp, |_| {});
    });
    b.done()
}

/// The Frame List of a model on the bones of `skeleton` at their rest (§2.1, §2.2): frame 0
/// the clump's root (no name), frame `1 + i` bone `i`, named as the skeleton names it. With
/// `hanim` (the HAnim node flags per bone), each bone frame carries its HAnim PLG, bone 0's the
/// hierarchy (§2.3).
fn skeleton_frames(b: &mut Bytes, stamp: u32, skeleton: &Skeleton, hanim: Option<&[u32]>) {
    let bones = &skeleton.bones;
    let n = bones.len();
    // (With `hanim`, the frames without an HAnim ID are no bones: `skinned_ped`.)
    let nodes: Vec<usize> = (0..n).filter(|&i| bones[i].id.is_some()).collect();
    b.chunk(0x0E, stamp, |b| {
        b.chunk(0x01, stamp, |b| {
            b.u32(1 + n as u32);
            b.f32s(&[1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.])
                .i32(-1)
                .u32(0);
            for bone in bones {
                // right, up, at: the columns of the rotation (§6.1).
                // (Scaled by the rest's scale, where a fixture gives one.)
                let m = Mat3::from_quat(bone.rest.rotation) * Mat3::from_diagonal(bone.rest.scale);
                b.f32s(&m.x_axis.to_array())
                    .f32s(&m.y_axis.to_array())
                    .f32s(&m.z_axis.to_array())
                    .f32s(&bone.rest.translation.to_array())
                    .i32(bone.parent.map_or(0, |p| p as i32 + 1))
                    .u32(3);
            }
        });
        // The clump's root: no name, no HAnim.
        b.chunk(0x03, stamp, |_| {});
        for (i, bone) in bones.iter().enumerate() {
            b.chunk(0x03, stamp, |b| {
                if let Some(flags) = hanim.filter(|_| bone.id.is_some()) {
                    b.chunk(0x11E, stamp, |b| {
                        b.u32(0x100).i32(bone.id.unwrap_or(-1));
                        if nodes.first() == Some(&i) {
                            b.i32(nodes.len() as i32).u32(0).i32(36);
                            for (k, &node) in nodes.iter().enumerate() {
                                let id = bones[node].id.unwrap_or(-1);
                                b.i32(id).i32(k as i32).u32(flags[k]);
                            }
                        } else {
                            b.i32(0);
                        }
                    });
                }
                b.chunk(0x253F2FE, stamp, |b| {
                    b.raw(bone.name.as_bytes());
                });
            });
        }
    });
}

/// A GTA III ped of parts written field by field (§2.1, §3.2–§3.4, §4.1, §4.2): the frames of
/// `skeleton` at their rest (III's 16 named frames, no HAnim, no skin), and one atomic per bone
/// frame drawing a triangle in that frame (positions only, untextured).
pub(crate) fn parts_ped(skeleton: &Skeleton) -> Vec<u8> {
    let n = skeleton.bones.len();
    let mut b = Bytes::new();
    b.chunk(0x10, III, |b| {
        b.chunk(0x01, III, |b| {
            b.i32(n as i32).i32(0).i32(0);
        });
        skeleton_frames(b, III, skeleton, None);
        // Frame 0 is the clump's root: bone `i` is frame `1 + i`. Triangles 5 cm a side (the
        // model's lowest vertex is 5 cm below its lowest joint), in a sphere of 0.1 m.
        let frames: Vec<i32> = (1..=n as i32).collect();
        triangle_atomics(b, III, &frames, 0.05, 0.1);
        b.chunk(0x03, III, |_| {});
    });
    b.done()
}

/// The Vice City ped of [`skinned_ped`] reads as VC's: the old skin layout, HAnim parents as the
/// Frame List has them, the skin's joints the bones in node order, inverse bind matrices with
/// their junk column dropped; and a VC clip poses it where it poses VC's built-in skeleton.
#[test]
fn a_skinned_vice_city_ped_reads_and_plays_as_vcs_skeleton() {
    let vc = Skeleton::gta_vc();
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut app = dff_app(&[
        ("vc_ped.dff", skinned_ped(VC, &vc)),
        (
            "vc_ped.ifp",
            std::fs::read(assets.join("anims/vc_ped.ifp")).unwrap(),
        ),
    ]);
    let model: Handle<Dff> = load(&mut app, "vc_ped.dff");
    {
        let m = app.world().resource::<Assets<Dff>>().get(&model).unwrap();
        assert_eq!(m.game, GtaGame::Vc);
        let c = &m.clumps[0];
        assert_eq!(c.bones.len(), vc.bones.len());
        for (k, bone) in vc.bones.iter().enumerate() {
            let frame = &c.frames[c.bones[k]];
            assert_eq!(frame.name, bone.name);
            assert_eq!(frame.bone_id, bone.id);
            let parent = frame.parent.map(|p| c.bones.iter().position(|b| *b == p));
            assert_eq!(
                parent.flatten(),
                bone.parent,
                "the parent of {:?}",
                bone.name
            );
        }
        let skin = c.atomics[0].skin.as_ref().unwrap();
        assert_eq!(skin.joints, c.bones);
    }
    let walk: Handle<RigClip> = load(&mut app, "vc_ped.ifp#walk");
    let mut at = Playback::looping();
    at.paused = true;
    at.time = 0.4;
    let ped = app
        .world_mut()
        .spawn((
            GtaModel::new(model.clone()),
            SkeletalClip::new(walk.clone()),
            at.clone(),
        ))
        .id();
    let skeleton = app
        .world_mut()
        .spawn((GtaSkeleton::VC, SkeletalClip::new(walk), at))
        .id();
    for _ in 0..4 {
        app.update();
    }
    let on_model = joint_positions(&mut app, ped);
    let on_skeleton = joint_positions(&mut app, skeleton);
    let mut compared = 0;
    let mut farthest = 0.0f32;
    for (name, p) in &on_model {
        if let Some((_, q)) = on_skeleton.iter().find(|(n, _)| n == name) {
            farthest = farthest.max(p.distance(*q));
            compared += 1;
        }
    }
    println!("VC ped against VC's skeleton: {compared} joints, farthest {farthest} m");
    assert_eq!(compared, vc.bones.len());
    assert!(farthest < 1e-4, "{farthest} m");

    // At rest, Bevy's skinning with the read inverse binds and weights puts every stored vertex
    // where the atomic's frame (bone 0's) puts it: G(k)·IBMₖ = G(atomic frame) for every bone.
    let rest = app.world_mut().spawn(GtaModel::new(model.clone())).id();
    app.update();
    app.update();
    let skin = {
        let world = app.world_mut();
        let mut stack = vec![rest];
        let mut found = Vec::new();
        while let Some(e) = stack.pop() {
            if let Some(s) = world.get::<SkinnedMesh>(e) {
                found.push(s.clone());
            }
            if let Some(c) = world.get::<Children>(e) {
                stack.extend(c.iter());
            }
        }
        assert_eq!(found.len(), 1, "one skinned mesh on the rest ped");
        found.remove(0)
    };
    let (joints, weights, positions) = {
        let m = app.world().resource::<Assets<Dff>>().get(&model).unwrap();
        let mesh0 = &m.clumps[0].atomics[0].parts[0].0;
        let mesh = app.world().resource::<Assets<Mesh>>().get(mesh0).unwrap();
        let Some(VertexAttributeValues::Uint16x4(j)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_INDEX)
        else {
            panic!("no joints")
        };
        let Some(VertexAttributeValues::Float32x4(w)) =
            mesh.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT)
        else {
            panic!("no weights")
        };
        let Some(VertexAttributeValues::Float32x3(p)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION)
        else {
            panic!("no positions")
        };
        (j.clone(), w.clone(), p.clone())
    };
    // Corner 4 of each box (its child end) has the child at 0.25 and the bone at 0.75.
    assert_eq!(weights[4], [0.25, 0.75, 0.0, 0.0]);
    let frame = |app: &mut App, name: &str| {
        let world = app.world_mut();
        let mut q = world.query::<(&Name, &GlobalTransform)>();
        let mut stack = vec![rest];
        let mut found = None;
        while let Some(e) = stack.pop() {
            if let Ok((n, g)) = q.get(world, e)
                && n.as_str() == name
            {
                found = Some(*g);
            }
            if let Some(c) = world.get::<Children>(e) {
                stack.extend(c.iter());
            }
        }
        found.unwrap()
    };
    let atomic_frame = frame(&mut app, &vc.bones[0].name);
    let mut worst = 0.0f32;
    for v in 0..positions.len() {
        let p = Vec3::from(positions[v]);
        let got = skinned(&mut app, &skin, joints[v], weights[v], p);
        worst = worst.max(got.distance(atomic_frame.transform_point(p)));
    }
    println!(
        "VC ped at rest: {} vertices skinned, {worst} m from the atomic's frame",
        positions.len()
    );
    assert!(worst < 1e-5, "{worst} m");
}

/// A GTA III ped is parts on named frames: the frames are bound by name (III's `Swaist` is the
/// pelvis, `Shead` the head), so an SA clip's pelvis and head tracks drive them, and each part's
/// mesh moves with its frame.
#[test]
fn a_gta_iii_ped_of_parts_plays_a_clip_by_frame_name() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let frames = [
        ("", -1, [0., 0., 0.]),
        ("Swaist", 0, [0., 0., 1.0]),
        ("Storso", 1, [0., 0., 0.2]),
        ("Shead", 2, [0., 0., 0.45]),
    ];
    let mut app = dff_app(&[
        ("player.dff", rigid_model(III, &frames, &[1, 2, 3])),
        (
            "sa_ped.ifp",
            std::fs::read(assets.join("anims/sa_ped.ifp")).unwrap(),
        ),
    ]);
    let model: Handle<Dff> = load(&mut app, "player.dff");
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    {
        let m = app.world().resource::<Assets<Dff>>().get(&model).unwrap();
        assert_eq!(m.game, GtaGame::Iii);
        let c = &m.clumps[0];
        assert_eq!(c.bones, [1, 2, 3], "the named frames");
        // Placed as III places its peds, soles on the floor: the lowest vertex is the waist
        // part's, at the Swaist frame 1 m up (the parts' triangles start at their frame).
        assert_eq!(c.lift, -1.0);
        assert!(
            c.atomics
                .iter()
                .all(|a| a.skin.is_none() && a.parts.len() == 1)
        );
        let mesh = mesh(&app, &c.atomics[0].parts[0].0);
        assert!(
            mesh.attribute(Mesh::ATTRIBUTE_NORMAL).is_some(),
            "normals computed"
        );
    }
    let mut at = Playback::looping();
    at.paused = true;
    at.time = 0.3;
    app.world_mut()
        .spawn((GtaSkeleton::SA, SkeletalClip::new(walk.clone()), at.clone()));
    let ped = app
        .world_mut()
        .spawn((GtaModel::new(model), SkeletalClip::new(walk), at))
        .id();
    for _ in 0..3 {
        app.update();
    }
    assert!(app.world().get::<UnmatchedTracks>(ped).is_some());
    // The III frames take the local rotations the SA skeleton's pelvis and head take.
    for (iii, sa) in [("Swaist", " Pelvis"), ("Shead", " Head")] {
        let ours = *bone(&mut app, iii).2;
        let theirs = *bone(&mut app, sa).2;
        assert!(
            ours.rotation.dot(theirs.rotation).abs() > 1.0 - 1e-5,
            "{iii}: {:?} vs {:?}",
            ours.rotation,
            theirs.rotation
        );
    }
    // The head part's mesh hangs on Shead and moves with it.
    let (head, head_at, _) = bone(&mut app, "Shead");
    let head_at = *head_at;
    let world = app.world_mut();
    let part = world
        .query::<(&ChildOf, &GlobalTransform, &Mesh3d)>()
        .iter(world)
        .find(|(c, _, _)| c.parent() == head)
        .map(|(_, g, _)| *g)
        .expect("a mesh under Shead");
    assert!((part.translation() - head_at.translation()).length() < 1e-6);
}

/// A vehicle: parts on their own frames (no bones to tag), damaged and lowest-detail variants
/// hidden as the games and viewers hide them, unless the settings ask to show them.
#[test]
fn a_vehicle_shows_its_parts_and_hides_damaged_and_lowest_detail_ones() {
    let frames = [
        ("car", -1, [0., 0., 0.]),
        ("chassis", 0, [0., 0., 0.]),
        ("door_lf_ok", 0, [-0.9, 0.5, 0.]),
        ("door_lf_dam", 0, [-0.9, 0.5, 0.]),
        ("chassis_vlo", 0, [0., 0., 0.]),
        ("wheel_lf_dummy", 0, [-0.95, 1.7, -0.35]),
    ];
    let car = rigid_model(SA, &frames, &[1, 2, 3, 4]);
    let all_meta = r#"(
        meta_format_version: "1.0",
        asset: Load(loader: "rigplay::plugin::DffLoader", settings: (show_all_atomics: true)),
    )"#;
    let mut app = dff_app_with(
        &[("car.dff", car.clone()), ("all.dff", car)],
        &[("all.dff", all_meta)],
    );
    let all: Handle<Dff> = load(&mut app, "all.dff");
    let all = app.world().resource::<Assets<Dff>>().get(&all).unwrap();
    assert!(all.clumps[0].atomics.iter().all(|a| !a.hidden));
    let model: Handle<Dff> = load(&mut app, "car.dff");
    let hidden: Vec<bool> = app
        .world()
        .resource::<Assets<Dff>>()
        .get(&model)
        .unwrap()
        .clumps[0]
        .atomics
        .iter()
        .map(|a| a.hidden)
        .collect();
    assert_eq!(hidden, [false, false, true, true]);
    let car = app.world_mut().spawn(GtaModel::new(model.clone())).id();
    app.update();
    app.update();
    let world = app.world_mut();
    let mut shown = world
        .query::<(&ChildOf, &Visibility, &Mesh3d)>()
        .iter(world)
        .map(|(c, v, _)| {
            let name = world.get::<Name>(c.parent()).unwrap().to_string();
            (name, *v != Visibility::Hidden)
        })
        .collect::<Vec<_>>();
    shown.sort();
    assert_eq!(
        shown,
        [
            ("chassis".to_owned(), true),
            ("chassis_vlo".to_owned(), false),
            ("door_lf_dam".to_owned(), false),
            ("door_lf_ok".to_owned(), true),
        ]
    );
    // The wheel dummy is a frame like any other (a named frame of a model without bones).
    let (wheel, at, _) = bone(&mut app, "wheel_lf_dummy");
    let at = *at;
    assert!(app.world().get::<RigBone>(wheel).is_some());
    // GTA (−0.95, 1.7, −0.35) in Bevy's axes: (x, z, −y), no lift for a model without bones.
    assert!((at.translation() - Vec3::new(-0.95, -0.35, -1.7)).length() < 1e-5);

    // A changed (reloaded) model is spawned again: the old hierarchy goes, the new one holds
    // the change.
    {
        let mut models = app.world_mut().resource_mut::<Assets<Dff>>();
        let mut m = models.get_mut(&model).unwrap();
        let clump = std::sync::Arc::make_mut(&mut m.clumps[0]);
        clump.frames[5].rest.translation.z = -0.5;
    }
    app.update();
    app.update();
    let world = app.world_mut();
    let wheels: Vec<Vec3> = world
        .query::<(&Name, &Transform)>()
        .iter(world)
        .filter(|(n, _)| n.as_str() == "wheel_lf_dummy")
        .map(|(_, t)| t.translation)
        .collect();
    assert_eq!(wheels, [Vec3::new(-0.95, 1.7, -0.5)]);
    let children = world.get::<Children>(car).unwrap();
    assert_eq!(children.len(), 1, "one basis");
}

/// Damaged copies of the sample ped and its dictionary (bytes flipped at random, truncated)
/// through the AssetServer: each loads or fails with a typed error (never a loader panic), and
/// the ones that load spawn and play without bringing the app down.
#[test]
fn damaged_models_and_dictionaries_load_or_fail_and_never_panic() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let dff = std::fs::read(assets.join("characters/ped.dff")).unwrap();
    let txd = std::fs::read(assets.join("characters/ped.txd")).unwrap();
    let mut rng = crate::rng::Rng(0x5eed_0dff);
    let mut files = vec![(
        "sa_ped.ifp".to_owned(),
        std::fs::read(assets.join("anims/sa_ped.ifp")).unwrap(),
    )];
    let n = 60;
    for i in 0..n {
        let (mut d, mut t) = (dff.clone(), txd.clone());
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(d.len());
            d[at] ^= 1 << rng.below(8);
            let at = rng.below(t.len());
            t[at] ^= 1 << rng.below(8);
        }
        if i % 5 == 0 {
            d.truncate(rng.below(d.len()));
        }
        if i % 7 == 0 {
            t.truncate(rng.below(t.len()));
        }
        files.push((format!("m{i}.dff"), d));
        files.push((format!("m{i}.txd"), t));
    }
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let mut app = dff_app(&files);
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let handles: Vec<Handle<Dff>> = (0..n)
        .map(|i| {
            app.world()
                .resource::<AssetServer>()
                .load(format!("m{i}.dff"))
        })
        .collect();
    let (mut loaded, mut failed) = (0, 0);
    // Bounded by time, not frames: the loads run on the task pool, late on a busy machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        app.update();
        let server = app.world().resource::<AssetServer>();
        let states: Vec<LoadState> = handles.iter().map(|h| server.load_state(h.id())).collect();
        if states
            .iter()
            .all(|s| matches!(s, LoadState::Loaded | LoadState::Failed(_)))
        {
            for s in &states {
                match s {
                    LoadState::Failed(e) => {
                        let e = e.to_string();
                        assert!(!e.contains("panicked"), "{e}");
                        failed += 1;
                    }
                    _ => loaded += 1,
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(loaded + failed, n, "every load ends");
    for (i, h) in handles.iter().enumerate() {
        if app.world().resource::<Assets<Dff>>().contains(h) {
            let mut e = app
                .world_mut()
                .spawn((GtaModel::new(h.clone()), SkeletalClip::new(walk.clone())));
            e.get_mut::<Playback>().unwrap().time = i as f32 * 0.05;
        }
    }
    for _ in 0..5 {
        app.update();
    }
    println!("{loaded} damaged models loaded, {failed} refused");
    assert!(loaded > 0 && failed > 0, "{loaded} loaded, {failed} failed");
}

/// An object package (doors, a boot, a bonnet: the games' object animations) plays on any
/// model by frame name, with no ped skeleton: one clip animating several top-level objects,
/// its sequences named in another case than the model's frames, one for a frame the model
/// lacks.
#[test]
fn an_object_package_plays_on_a_model_by_frame_name() {
    use crate::bytes::anim_payload;
    // The model: a root, then two objects side by side under it (III-era RenderWare, no
    // HAnim: every named frame is bound by name).
    let frames = [
        ("car", -1, [0., 0., 0.]),
        ("door_lf_dummy", 0, [1.0, 0., 0.]),
        ("boot_dummy", 0, [0., -2.0, 0.5]),
    ];
    // The package: ANPK, 48-byte ANIMs (no bone tags, as III's are), one clip "open_all":
    // * "DOOR_LF_Dummy": KR00, 0 → 90° about z over 1 s (ANPK stores q conjugated:
    //   (0, 0, −sin 45°, cos 45°) in the file is +90° about z);
    // * "BOOT_DUMMY": KRT0, identity, position (0, −2, 0.5) → (0, −2.2, 0.9) over 1 s;
    // * "bonnet_dummy": KR00, a frame the model lacks.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let mut b = Bytes::new();
    b.anpk("car", "open_all", 3, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "DOOR_LF_Dummy", 2, &[0, 0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
                b.f32s(&[0.0, 0.0, -s, s, 1.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "BOOT_DUMMY", 2, &[0, 0]));
            b.section(b"KRT0", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, -2.0, 0.5, 0.0]);
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, -2.2, 0.9, 1.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "bonnet_dummy", 1, &[0, 0]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
            });
        });
    });
    let mut app = dff_app(&[
        ("car.dff", rigid_model(III, &frames, &[1, 2])),
        ("car.ifp", b.done()),
    ]);
    let model: Handle<Dff> = load(&mut app, "car.dff");
    // Bevy's labels are exact (`car.ifp#open_all`); the package looks a typed name up as the
    // games do.
    let package: Handle<Ifp> = load(&mut app, "car.ifp");
    let clip = app.world().resource::<Assets<Ifp>>().get(&package).unwrap();
    let clip = clip.clip_handle("OPEN_ALL").unwrap();
    let mut at = Playback::looping();
    at.paused = true;
    at.time = 0.5;
    let car = app
        .world_mut()
        .spawn((GtaModel::new(model), SkeletalClip::new(clip), at))
        .id();
    for _ in 0..3 {
        app.update();
    }
    // Halfway: the door turned 45° about the model's z (local to its frame), in place; the
    // boot halfway along its path, (0, −2.1, 0.7), not turned.
    let door = *bone(&mut app, "door_lf_dummy").2;
    let half = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    assert!(
        door.rotation.dot(half).abs() > 1.0 - 1e-5,
        "{:?}",
        door.rotation
    );
    assert!(door.translation.abs_diff_eq(Vec3::new(1.0, 0.0, 0.0), 1e-6));
    let boot = *bone(&mut app, "boot_dummy").2;
    assert!(
        boot.translation
            .abs_diff_eq(Vec3::new(0.0, -2.1, 0.7), 1e-5),
        "{:?}",
        boot.translation
    );
    assert!(boot.rotation.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6);
    // The bonnet's sequence drives nothing, and says so.
    let unmatched = app.world().get::<UnmatchedTracks>(car).expect("reported");
    assert_eq!(unmatched.0, ["\"bonnet_dummy\""]);
}

/// A crowd character wearing a ped (`CrowdModel`) gets, per skin joint, the matrix Bevy's own
/// skinning computes for the same ped spawned with bone entities (`GtaModel`) playing the same
/// clip at the same time: the joint's transform relative to the character times its inverse
/// bind matrix, so that a shader skinning from the palette draws the ped where `SkinnedMesh`
/// does. Checked at three times of the walk, on every skinned part (measured: 192 matrices,
/// 6e-7 apart at most). Peds of other proportions: the next test.
#[test]
fn a_crowd_character_wearing_a_ped_gets_the_skin_matrices_bevy_skins_with() {
    use rigplay::skeleton::GtaGame;
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut app = dff_app(&[
        (
            "ped.dff",
            std::fs::read(assets.join("characters/ped.dff")).unwrap(),
        ),
        (
            "sa_ped.ifp",
            std::fs::read(assets.join("anims/sa_ped.ifp")).unwrap(),
        ),
    ]);
    let ped: Handle<Dff> = load(&mut app, "ped.dff");
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let (model, crowd) = model_and_crowd(&mut app, GtaGame::Sa, ped, walk);
    let mut farthest = 0.0f32;
    let mut compared = 0;
    for t in [0.0, 0.4, 0.9] {
        for e in [model, crowd] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        let world = app.world_mut();
        let root = world.get::<GlobalTransform>(model).unwrap().affine();
        let skins: Vec<SkinnedMesh> = world.query::<&SkinnedMesh>().iter(world).cloned().collect();
        assert!(!skins.is_empty(), "the ped is drawn skinned");
        let palettes = world.get::<CrowdSkinPose>(crowd).unwrap().palettes.clone();
        assert_eq!(palettes.len(), 1, "the sample ped has one skinned atomic");
        let joints = &palettes[0].joints;
        for skin in &skins {
            farthest = farthest.max(palette_gap(world, root, skin, joints));
            compared += joints.len();
        }
    }
    println!(
        "crowd skin palette against Bevy's skinning: {compared} matrices, largest difference {farthest:e}"
    );
    assert!(compared >= 3 * 32, "{compared}");
    assert!(farthest < 1e-4, "{farthest}");
}

/// The largest difference, entry by entry (the 3×3 part and the translation), between a crowd
/// character's skin palette `ours` and the matrices Bevy skins `skin` with: each joint's world
/// transform relative to the character's (`root`) times its inverse bind matrix.
pub(crate) fn palette_gap(
    world: &World,
    root: Affine3A,
    skin: &SkinnedMesh,
    ours: &[Affine3A],
) -> f32 {
    let ibms = world
        .resource::<Assets<SkinnedMeshInverseBindposes>>()
        .get(&skin.inverse_bindposes)
        .unwrap();
    assert_eq!(skin.joints.len(), ours.len(), "a palette entry per joint");
    let mut farthest = 0.0f32;
    for ((joint, ibm), ours) in skin.joints.iter().zip(ibms.iter()).zip(ours) {
        let global = world.get::<GlobalTransform>(*joint).unwrap().affine();
        let bevys = root.inverse() * global * Affine3A::from_mat4(*ibm);
        let d = (bevys.matrix3 - ours.matrix3)
            .to_cols_array()
            .iter()
            .chain((bevys.translation - ours.translation).to_array().iter())
            .fold(0.0f32, |m, v| m.max(v.abs()));
        farthest = farthest.max(d);
    }
    farthest
}

/// `ped` spawned with bone entities (`GtaModel` + `SkeletalClip`) and worn by a crowd character
/// of `game` (with `CrowdSkinPose`), both paused at the start of `walk`, after four frames.
fn model_and_crowd(
    app: &mut App,
    game: rigplay::skeleton::GtaGame,
    ped: Handle<Dff>,
    walk: Handle<RigClip>,
) -> (Entity, Entity) {
    let mut paused = Playback::looping();
    paused.paused = true;
    let model = app
        .world_mut()
        .spawn((
            GtaModel::new(ped.clone()),
            SkeletalClip::new(walk.clone()),
            paused.clone(),
        ))
        .id();
    let crowd = app
        .world_mut()
        .spawn((
            CrowdCharacter::new(game, walk),
            CrowdModel(ped),
            CrowdSkinPose::default(),
            paused,
        ))
        .id();
    for _ in 0..4 {
        app.update();
    }
    (model, crowd)
}

/// The animation targets of `game`'s crowd bones, in the order of `CrowdPose::bones`.
pub(crate) fn crowd_targets(
    game: rigplay::skeleton::GtaGame,
) -> Vec<bevy::animation::AnimationTargetId> {
    let skeleton = game.skeleton();
    (skeleton.bones.iter())
        .map(|b| {
            let bone = rigplay::animation::BoneRef {
                name: b.name.clone(),
                id: b.id,
            };
            bone_target_id(&skeleton, &bone)
        })
        .collect()
}

/// Crowd characters wearing peds of their own proportions ([`proportion`]: offsets 4–12 % off
/// the built-in tables) are posed on their models' bones, as the same peds spawned with bone
/// entities (`GtaModel`) are: in each game (a GTA III ped of parts, a skinned Vice City ped,
/// the SA sample ped reproportioned; and the bundled III ped of parts, the table's offsets but
/// standing on its soles), at three times of the walk, every crowd bone the model has
/// is where the model's frame of that bone is (relative to the character), and a skinned ped's
/// skin matrices are those Bevy skins with. (Before crowd characters took their models' rests,
/// the crowd's bones were up to 0.19 m from the model's.)
#[test]
fn crowd_characters_keep_their_models_own_proportions_in_every_game() {
    use rigplay::skeleton::GtaGame;
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims");
    let cases = [
        (
            GtaGame::Iii,
            parts_ped(&reproportioned(&Skeleton::gta_iii())),
            "sa_ped.ifp",
        ),
        (
            GtaGame::Vc,
            skinned_ped(VC, &reproportioned(&Skeleton::gta_vc())),
            "vc_ped.ifp",
        ),
        (GtaGame::Sa, reproportioned_ped(), "sa_ped.ifp"),
        // The bundled GTA III ped of parts (the built-in table's offsets, standing on its soles).
        (
            GtaGame::Iii,
            std::fs::read(assets.join("../characters/iii_ped.dff")).unwrap(),
            "sa_ped.ifp",
        ),
    ];
    let mut apart = Vec::new();
    for (game, dff, clips) in cases {
        let (bones, bones_apart, skins, skins_apart) =
            crowd_against_bone_entities(game, dff, clips);
        println!(
            "{game:?} ped of its own proportions in a crowd: {bones} bones, largest difference from its bone entities {bones_apart:e}; {skins} skin matrices, {skins_apart:e}"
        );
        let expected = match game {
            GtaGame::Iii => 16,
            GtaGame::Vc => 24,
            GtaGame::Sa => 32,
        };
        assert_eq!(bones, 3 * expected, "{game:?}: every bone compared");
        apart.push((game, bones_apart, skins_apart));
    }
    for (game, bones, skins) in apart {
        assert!(bones < 1e-4 && skins < 1e-4, "{game:?}: {bones}, {skins}");
    }
}

/// `dff` spawned with bone entities and worn by a crowd character of `game`, both playing
/// `clips`' walk, compared at three times of it: how many crowd bones have a frame in the
/// model, and the largest difference of their transforms (relative to the character) from
/// those frames'; how many skin matrices, and their largest difference from those Bevy skins
/// with (each joint's transform times its inverse bind matrix).
fn crowd_against_bone_entities(
    game: rigplay::skeleton::GtaGame,
    dff: Vec<u8>,
    clips: &str,
) -> (usize, f32, usize, f32) {
    use bevy::animation::AnimationTargetId;
    use bevy::math::Affine3A;
    let anims = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/anims");
    let largest = |a: Affine3A, b: Affine3A| {
        (a.matrix3 - b.matrix3)
            .to_cols_array()
            .iter()
            .chain((a.translation - b.translation).to_array().iter())
            .fold(0.0f32, |m, v| m.max(v.abs()))
    };
    let ifp = std::fs::read(anims.join(clips)).unwrap();
    let mut app = dff_app(&[("ped.dff", dff), (clips, ifp)]);
    let ped: Handle<Dff> = load(&mut app, "ped.dff");
    let walk: Handle<RigClip> = load(&mut app, &format!("{clips}#walk"));
    let (model, crowd) = model_and_crowd(&mut app, game, ped, walk);
    let targets = crowd_targets(game);
    let (mut bones_apart, mut skins_apart, mut bones, mut skins) = (0.0f32, 0.0f32, 0, 0);
    for t in [0.1, 0.45, 0.8] {
        for e in [model, crowd] {
            app.world_mut().get_mut::<Playback>(e).unwrap().seek(t);
        }
        app.update();
        let world = app.world_mut();
        let root = world
            .get::<GlobalTransform>(model)
            .unwrap()
            .affine()
            .inverse();
        // (Only the model has bone entities: no crowd character spawns any.)
        let frames: Vec<(AnimationTargetId, Entity, Affine3A)> = world
            .query::<(&AnimationTargetId, Entity, &GlobalTransform)>()
            .iter(world)
            .map(|(t, e, g)| (*t, e, root * g.affine()))
            .collect();
        let pose = &world.get::<CrowdPose>(crowd).unwrap().bones;
        assert_eq!(pose.len(), targets.len(), "{game:?}: the game's bones");
        for (posed, target) in pose.iter().zip(&targets) {
            // (A bone the model lacks has no frame to be compared with.)
            if let Some((_, _, frame)) = frames.iter().find(|f| f.0 == *target) {
                bones_apart = bones_apart.max(largest(*posed, *frame));
                bones += 1;
            }
        }
        // Skinned: per joint, the joint's transform times its inverse bind matrix.
        let palettes = world.get::<CrowdSkinPose>(crowd).unwrap().palettes.clone();
        let mut meshes = world.query::<&SkinnedMesh>();
        let skinned: Vec<SkinnedMesh> = meshes.iter(world).cloned().collect();
        assert_eq!(palettes.len(), skinned.len().min(1), "{game:?}: one skin");
        for (skin, palette) in skinned.iter().zip(palettes.iter().cycle()) {
            let ibms = world
                .resource::<Assets<SkinnedMeshInverseBindposes>>()
                .get(&skin.inverse_bindposes)
                .unwrap();
            for ((joint, ibm), ours) in skin.joints.iter().zip(ibms.iter()).zip(&palette.joints) {
                let frame = frames.iter().find(|f| f.1 == *joint).unwrap().2;
                let bevys = frame * Affine3A::from_mat4(*ibm);
                skins_apart = skins_apart.max(largest(bevys, *ours));
                skins += 1;
            }
        }
    }
    (bones, bones_apart, skins, skins_apart)
}

/// `skeleton` with bone `name` hung under bone `under` instead of its parent, resting where it
/// did (its local rest taken against its new parent's).
pub(crate) fn rehung(skeleton: &Skeleton, name: &str, under: &str) -> Skeleton {
    let model = skeleton.model_space(&skeleton.rest_pose());
    let at = |n: &str| {
        (skeleton.bones.iter())
            .position(|b| b.name.trim() == n)
            .unwrap()
    };
    let (b, p) = (at(name), at(under));
    assert!(p < b, "parents before children");
    let mut s = skeleton.clone();
    s.bones[b].parent = Some(p);
    s.bones[b].rest.rotation = model[p].0.inverse() * model[b].0;
    s.bones[b].rest.translation = model[p].0.inverse() * (model[b].1 - model[p].1);
    s
}

/// `skeleton` without bone `name`: its children hung under its parent, resting where they did
/// (a model that lacks a bone between two others).
pub(crate) fn without(skeleton: &Skeleton, name: &str) -> Skeleton {
    let r = (skeleton.bones.iter())
        .position(|b| b.name.trim() == name)
        .unwrap();
    let above = skeleton.bones[r].parent.expect("not the root");
    let mut s = skeleton.clone();
    for c in 0..s.bones.len() {
        if s.bones[c].parent == Some(r) {
            let grand = skeleton.bones[above].name.trim().to_owned();
            s = rehung(&s, skeleton.bones[c].name.trim(), &grand);
        }
    }
    s.bones.remove(r);
    for bone in &mut s.bones {
        bone.parent = bone.parent.map(|p| if p > r { p - 1 } else { p });
    }
    s
}

/// `skeleton` with a frame named `name` that is no bone (no HAnim ID) put between bone `below`
/// and its parent, resting at `rest` under that parent; `below` rests where it did.
pub(crate) fn framed(skeleton: &Skeleton, below: &str, name: &str, rest: BonePose) -> Skeleton {
    let at = (skeleton.bones.iter())
        .position(|b| b.name.trim() == below)
        .unwrap();
    let old = skeleton.model_space(&skeleton.rest_pose());
    let mut s = skeleton.clone();
    let mut frame = s.bones[at].clone();
    frame.name = name.to_owned();
    frame.id = None;
    frame.rest = rest;
    s.bones.insert(at, frame);
    for (i, bone) in s.bones.iter_mut().enumerate() {
        if i != at {
            bone.parent = bone.parent.map(|p| if p >= at { p + 1 } else { p });
        }
    }
    s.bones[at + 1].parent = Some(at);
    let new = s.model_space(&s.rest_pose());
    s.bones[at + 1].rest.rotation = new[at].0.inverse() * old[at].0;
    s.bones[at + 1].rest.translation = new[at].0.inverse() * (old[at].1 - new[at].1);
    s
}

/// `skeleton` with bone `name` and the bones below it moved to the end of its list, `name` hung
/// under bone `under` (which the game lists after `name`), all resting where they did.
pub(crate) fn hung_late(skeleton: &Skeleton, name: &str, under: &str) -> Skeleton {
    let at = |n: &str| {
        (skeleton.bones.iter())
            .position(|b| b.name.trim() == n)
            .unwrap()
    };
    let b = at(name);
    assert!(
        at(under) > b,
        "the game lists the new parent after the bone"
    );
    let below = |mut i: usize| loop {
        if i == b {
            return true;
        }
        match skeleton.bones[i].parent {
            Some(up) => i = up,
            None => return false,
        }
    };
    // The bones in their order, those below `name` last (their parents kept).
    let order: Vec<usize> = (0..skeleton.bones.len())
        .filter(|i| !below(*i))
        .chain((0..skeleton.bones.len()).filter(|i| below(*i)))
        .collect();
    let new_index = |old: usize| order.iter().position(|o| *o == old).unwrap();
    let mut s = skeleton.clone();
    s.bones = order
        .iter()
        .map(|&o| {
            let mut bone = skeleton.bones[o].clone();
            bone.parent = bone.parent.map(new_index);
            bone
        })
        .collect();
    rehung(&s, name, under)
}

/// Crowd characters wearing peds whose bones hang in ways the game's order cannot follow are
/// posed as the same peds with bone entities (`GtaModel`) are, at three times of the walk,
/// within 0.1 mm:
/// - a GTA III ped of parts with a frame of its own (`Xturn`, no bone) between the right upper
///   arm and forearm, turned 30° about x and 4 cm along: the forearm and hand move with the
///   upper arm through that turn, which the clip's keys for the forearm do not replace;
/// - a skinned Vice City ped whose left arm (from `L UpperArm` down) hangs under the right
///   clavicle, a bone the game lists after it;
/// - a skinned San Andreas ped whose left upper arm and right forearm each hang under a frame of
///   their own between them and their parents, turned.
///
/// (Before, each of these was posed right at rest only, with a warning.)
#[test]
fn crowd_characters_follow_frames_between_bones_and_bones_hung_under_later_ones() {
    use rigplay::skeleton::GtaGame;
    let turn = |deg: f32, along: f32| BonePose {
        rotation: Quat::from_rotation_x(deg.to_radians()),
        translation: Vec3::new(along, 0.0, 0.0),
        scale: Vec3::ONE,
    };
    let sa = framed(
        &framed(
            &Skeleton::gta_sa(),
            "L UpperArm",
            "L Helper",
            turn(25.0, 0.03),
        ),
        "R ForeArm",
        "R Helper",
        turn(-40.0, 0.0),
    );
    let cases = [
        (
            GtaGame::Iii,
            parts_ped(&framed(
                &Skeleton::gta_iii(),
                "Slowerarmr",
                "Xturn",
                turn(30.0, 0.04),
            )),
            "sa_ped.ifp",
            16,
        ),
        (
            GtaGame::Vc,
            skinned_ped(
                VC,
                &hung_late(&Skeleton::gta_vc(), "L UpperArm", "Bip01 R Clavicle"),
            ),
            "vc_ped.ifp",
            24,
        ),
        (GtaGame::Sa, skinned_ped(SA, &sa), "sa_ped.ifp", 32),
    ];
    crowd_poses_as_bone_entities("with frames between or bones hung late", cases);
}

/// A ped scaled by a frame above its root bone (a model made larger by its frames, not its
/// vertices) in a crowd is posed as its bone entities are: every bone scaled with it, at three
/// times of the walk, in every game.
#[test]
fn crowd_characters_wearing_a_ped_scaled_above_its_root_bone_pose_as_its_bone_entities() {
    let scaled = |skeleton: &Skeleton, root: &str| {
        let by = BonePose {
            scale: Vec3::splat(1.25),
            ..BonePose::default()
        };
        framed(skeleton, root, "Xscaled", by)
    };
    let cases = every_games_ped(scaled, ["Swaist", "Root", "Normal"]);
    crowd_poses_as_bone_entities("scaled above its root bone", cases);
}

/// Crowd characters wearing peds that hang their bones otherwise than the game's skeleton are
/// posed as the same peds with bone entities (`GtaModel`) are, every bone moving with the bones
/// above it in the model: a GTA III ped of parts without its right forearm (the hand under the
/// upper arm), a skinned Vice City ped whose left hand hangs under its upper arm (the forearm
/// a leaf beside it), and a skinned San Andreas ped without `Spine1` (the neck and both
/// clavicles under `Spine`). At three times of the walk, every crowd bone the model has is
/// where its frame is, within 0.1 mm. (Hung on the game's hierarchy, as before, they were right
/// at rest only: the hand and everything below the missing bone moved with a bone the model
/// does not have.)
#[test]
fn crowd_characters_hang_their_bones_as_their_models_do_in_every_game() {
    use rigplay::skeleton::GtaGame;
    let cases = [
        (
            GtaGame::Iii,
            parts_ped(&without(&Skeleton::gta_iii(), "Slowerarmr")),
            "sa_ped.ifp",
            15,
        ),
        (
            GtaGame::Vc,
            skinned_ped(VC, &rehung(&Skeleton::gta_vc(), "L Hand", "L UpperArm")),
            "vc_ped.ifp",
            24,
        ),
        (
            GtaGame::Sa,
            skinned_ped(SA, &without(&Skeleton::gta_sa(), "Spine1")),
            "sa_ped.ifp",
            31,
        ),
    ];
    crowd_poses_as_bone_entities("hung its own way", cases);
}

/// Crowd characters wearing peds with bones of their own beside the game's (a mod's ponytail
/// under the head, with an HAnim ID no game has, and a nub below it) are posed as their bone
/// entities (`GtaModel`) are: no clip keys those bones, so each stays at rest under its parent
/// while the game's bones walk, and so do the skin's vertices on them. At three times of the
/// walk, every bone and skin matrix within 0.1 mm, in every game (III: a ped of parts, the
/// ponytail a part of its own).
#[test]
fn crowd_characters_keep_a_models_own_extra_bones_at_rest_under_their_parents() {
    let cases = every_games_ped(with_ponytail, ["Shead", "Head", "Head"]);
    crowd_poses_as_bone_entities("with bones of its own", cases);
}

/// Crowd characters wearing peds whose bones hang under a frame of the model's own above the
/// root bone (an exporter's `Armature`, HAnim ID 9100, which no game has: for VC and SA the skin's
/// first joint and its hierarchy's root, with vertices on it; for III a frame with a part of its
/// own) are posed as their bone entities are: that frame has no bone above it, so it stays where
/// it rests in the character while the game's bones walk, and so do the skin's vertices on it.
/// At three times of the walk, every bone and skin matrix within 0.1 mm, in every game.
///
/// (Before, such a joint kept its rest place relative to the root bone, and moved with it: the
/// VC ped's skin matrices were 1.32 off their bone entities', the largest difference of an entry
/// or a translation.)
#[test]
fn crowd_characters_keep_a_frame_of_the_models_own_above_its_root_bone_where_it_rests() {
    let cases = every_games_ped(with_armature, ["Swaist", "Root", "Normal"]);
    crowd_poses_as_bone_entities("under a frame of its own", cases);
}

/// `skeleton` with a frame of its own, `Armature` (HAnim ID 9100, which no game has), above its
/// root bone `root`: under the clump's root, turned 0.4 rad about z and 0.2 m along x, 0.1 m
/// along y and 0.35 m down; the root bone rests where it did. (In a skinned ped it is the skin's
/// first joint, the root of its HAnim hierarchy, with a box of the skin along it to the root
/// bone; in a ped of parts, a frame with a part of its own.)
pub(crate) fn with_armature(skeleton: &Skeleton, root: &str) -> Skeleton {
    let rest = BonePose {
        rotation: Quat::from_rotation_z(0.4),
        translation: Vec3::new(0.2, 0.1, -0.35),
        scale: Vec3::ONE,
    };
    let mut s = framed(skeleton, root, "Armature", rest);
    let at = (s.bones.iter()).position(|b| b.name == "Armature").unwrap();
    s.bones[at].id = Some(9100);
    s
}

/// `skeleton` with two bones of its own, as a mod adds them: a `Ponytail` (HAnim ID 9001, which
/// no game has) under bone `head`, turned and 10 cm back, and a `Ponytail Nub` (9002) 12 cm
/// along it.
pub(crate) fn with_ponytail(skeleton: &Skeleton, head: &str) -> Skeleton {
    let tail = BonePose {
        rotation: Quat::from_rotation_z(0.6),
        translation: Vec3::new(0.05, -0.08, 0.02),
        scale: Vec3::ONE,
    };
    let nub = BonePose {
        translation: Vec3::new(0.12, 0.0, 0.0),
        ..BonePose::default()
    };
    let s = with_bone(skeleton, head, "Ponytail", Some(9001), tail);
    with_bone(&s, "Ponytail", "Ponytail Nub", Some(9002), nub)
}

/// `skeleton` with a bone `name` (HAnim ID `id`, no game's) added last, under bone `under`,
/// resting at `rest` there.
fn with_bone(
    skeleton: &Skeleton,
    under: &str,
    name: &str,
    id: Option<i32>,
    rest: BonePose,
) -> Skeleton {
    let parent = (skeleton.bones.iter())
        .position(|b| b.name.trim() == under)
        .unwrap();
    let mut s = skeleton.clone();
    s.bones.push(rigplay::skeleton::SkeletonBone {
        name: name.to_owned(),
        id,
        canonical: None,
        parent: Some(parent),
        rest,
    });
    s
}

/// A ped of each game made from its skeleton changed by `change` at bone `at[game]` (III, VC,
/// SA): a GTA III ped of parts, skinned VC and SA peds, with the clips' file each plays and the
/// game's bones (the cases of [`crowd_poses_as_bone_entities`]).
pub(crate) fn every_games_ped(
    change: impl Fn(&Skeleton, &str) -> Skeleton,
    at: [&str; 3],
) -> [(rigplay::skeleton::GtaGame, Vec<u8>, &'static str, usize); 3] {
    use rigplay::skeleton::GtaGame;
    [
        (
            GtaGame::Iii,
            parts_ped(&change(&Skeleton::gta_iii(), at[0])),
            "sa_ped.ifp",
            16,
        ),
        (
            GtaGame::Vc,
            skinned_ped(VC, &change(&Skeleton::gta_vc(), at[1])),
            "vc_ped.ifp",
            24,
        ),
        (
            GtaGame::Sa,
            skinned_ped(SA, &change(&Skeleton::gta_sa(), at[2])),
            "sa_ped.ifp",
            32,
        ),
    ]
}

/// Each case's ped (`game`, the model's bytes, the clips' file, the bones the model has) in a
/// crowd against the same ped with bone entities ([`crowd_against_bone_entities`]): every bone
/// compared at each of the three times, every bone and skin matrix within 0.1 mm.
fn crowd_poses_as_bone_entities(
    what: &str,
    cases: [(rigplay::skeleton::GtaGame, Vec<u8>, &str, usize); 3],
) {
    for (game, dff, clips, expected) in cases {
        let (bones, bones_apart, skins, skins_apart) =
            crowd_against_bone_entities(game, dff, clips);
        println!(
            "{game:?} ped {what} in a crowd: {bones} bones, largest difference from its bone entities {bones_apart:e}; {skins} skin matrices, {skins_apart:e}"
        );
        assert_eq!(bones, 3 * expected, "{game:?}: every bone compared");
        assert!(bones_apart < 1e-4, "{game:?}: bones {bones_apart}");
        assert!(skins_apart < 1e-4, "{game:?}: skins {skins_apart}");
    }
}

/// `CrowdModel` on bad or unusual models: one that fails to load, and a GTA III ped of parts (no
/// skin), leave the palettes empty while the characters play on. A model changed while playing
/// (its skin's inverse bind matrices replaced, as a reload does) gives palettes of the new
/// matrices from the next frame, and keeps the playhead.
#[test]
fn crowd_models_that_fail_have_no_skin_or_change_leave_the_crowd_playing() {
    use bevy::math::Affine3A;
    use rigplay::skeleton::GtaGame;
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let frames = [
        ("", -1, [0., 0., 0.]),
        ("Swaist", 0, [0., 0., 1.0]),
        ("Shead", 1, [0., 0., 0.6]),
    ];
    let mut app = dff_app(&[
        (
            "ped.dff",
            std::fs::read(assets.join("characters/ped.dff")).unwrap(),
        ),
        ("player.dff", rigid_model(III, &frames, &[1, 2])),
        ("broken.dff", b"\x10\0\0\0\xff\xff\xff\x7f".to_vec()),
        (
            "sa_ped.ifp",
            std::fs::read(assets.join("anims/sa_ped.ifp")).unwrap(),
        ),
    ]);
    let ped: Handle<Dff> = load(&mut app, "ped.dff");
    let player: Handle<Dff> = load(&mut app, "player.dff");
    let _ = load_error::<Dff>(&mut app, "broken.dff");
    let broken: Handle<Dff> = app.world().resource::<AssetServer>().load("broken.dff");
    let walk: Handle<RigClip> = load(&mut app, "sa_ped.ifp#walk");
    let mut spawn = |model: Handle<Dff>| {
        app.world_mut()
            .spawn((
                CrowdCharacter::new(GtaGame::Sa, walk.clone()),
                CrowdModel(model),
                CrowdSkinPose::default(),
            ))
            .id()
    };
    let (worn, parts, failed) = (spawn(ped.clone()), spawn(player), spawn(broken));
    for _ in 0..4 {
        app.update();
    }
    let palettes = |app: &App, e: Entity| {
        app.world()
            .get::<CrowdSkinPose>(e)
            .unwrap()
            .palettes
            .clone()
    };
    let time = |app: &App, e: Entity| app.world().get::<Playback>(e).unwrap().time;
    assert_eq!(palettes(&app, worn).len(), 1);
    assert!(
        palettes(&app, parts).is_empty(),
        "no skin on a ped of parts"
    );
    assert!(palettes(&app, failed).is_empty(), "no model");
    for e in [parts, failed] {
        assert!(time(&app, e) > 0.0, "plays on");
        assert!(!app.world().get::<CrowdPose>(e).unwrap().bones.is_empty());
    }
    // Paused, so that the pose stays and only the matrices change; then the skin's inverse bind
    // matrices replaced by ones moved 1 m along x (in the mesh's space).
    app.world_mut().get_mut::<Playback>(worn).unwrap().paused = true;
    app.update();
    let before = palettes(&app, worn)[0].joints.clone();
    let at = time(&app, worn);
    assert!(at > 0.0);
    {
        let world = app.world_mut();
        let skin = world.resource::<Assets<Dff>>().get(&ped).unwrap().clumps[0]
            .atomics
            .iter()
            .find_map(|a| a.skin.clone())
            .unwrap();
        let moved: Vec<Mat4> = world
            .resource::<Assets<SkinnedMeshInverseBindposes>>()
            .get(&skin.inverse_bindposes)
            .unwrap()
            .iter()
            .map(|m| *m * Mat4::from_translation(Vec3::X))
            .collect();
        let handle = world
            .resource_mut::<Assets<SkinnedMeshInverseBindposes>>()
            .add(SkinnedMeshInverseBindposes::from(moved));
        let mut models = world.resource_mut::<Assets<Dff>>();
        let mut m = models.get_mut(&ped).unwrap();
        for clump in m.clumps.iter_mut() {
            for atomic in std::sync::Arc::make_mut(clump).atomics.iter_mut() {
                if let Some(s) = &mut atomic.skin {
                    s.inverse_bindposes = handle.clone();
                }
            }
        }
    }
    app.update();
    app.update();
    assert_eq!(time(&app, worn), at, "the playhead is kept");
    let after = palettes(&app, worn)[0].joints.clone();
    assert_eq!(after.len(), before.len());
    for (b, a) in before.iter().zip(&after) {
        // M · T(x) moves the result by M's x axis: a joint's matrix times the shifted inverse
        // bind is the old matrix with its translation moved by its own x column.
        let want = *b * Affine3A::from_translation(Vec3::X);
        assert!(
            (want.translation - a.translation).length() < 1e-4,
            "{:?} vs {:?}",
            want.translation,
            a.translation
        );
    }
}
