//! `convert::gltf`: GTA and DAN clips written as glTF, read back field by field here (the JSON
//! with serde_json, the accessors from the binary buffer by hand), against values worked out
//! by hand from a package assembled byte by byte. The Khronos validator's verdict is in
//! `gltf_validator.rs`; Bevy's glTF loader playing the files is in `bevy_gltf_export.rs`.

use crate::bytes::{Bytes, anim_payload};
use glam::{Quat, Vec3};
use rigplay::convert::gltf::{
    GltfClip, GltfError, GltfExport, GltfFile, GltfModel, RootMotionExport,
};
use rigplay::coords::GTA_TO_GLTF;
use rigplay::formats::ifp::IfpFile;
use rigplay::skeleton::{GtaGame, Skeleton};
use serde_json::Value;

/// sin 45° = cos 45°.
const H: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// A Vice City package "ped" with clip "Walk_Test" (44-byte ANIMs with bone tags), shaped as
/// real walks are: a root moving forward, a pelvis turning, one name written in another case.
/// * "Root" (tag 0), KRT0, 4 frames: identity rotation; translation (0, 0, 0) at 0 s,
///   (0, 1, 0) at 0.5 s, (0, 2, 0) at 0.5 s again (a jump, two keys at one time), (0, 3, 0) at
///   1 s.
/// * " Pelvis" (tag 1), KR00, 2 frames: stored (0, 0, H, H) at 0 s, then the same rotation with
///   every sign flipped, (−0, −0, −H, −H), at 1 s. ANPK stores the conjugate of the engine's
///   rotation (`docs/formats/ifp.md` §1.4): the pelvis turns −90° about GTA's Z, (0, 0, −H, H).
/// * "l thigh" (tag 41, named in lower case), KR00, 1 frame: identity at 0 s.
pub fn vc_walk() -> Vec<u8> {
    let mut b = Bytes::new();
    b.anpk("ped", "Walk_Test", 3, |b| {
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "Root", 4, &[0]));
            b.section(b"KRT0", |b| {
                // qx qy qz qw, tx ty tz, time
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.5]);
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.5]);
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, " Pelvis", 2, &[1]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, H, H, 0.0]);
                b.f32s(&[-0.0, -0.0, -H, -H, 1.0]);
            });
        });
        b.section(b"CPAN", |b| {
            b.section(b"ANIM", |b| anim_payload(b, "l thigh", 1, &[41]));
            b.section(b"KR00", |b| {
                b.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0]);
            });
        });
    });
    b.done()
}

/// The floats of accessor `index`, read from the buffer through its buffer view.
pub(crate) fn floats(doc: &Value, bin: &[u8], index: usize) -> Vec<f32> {
    let accessor = &doc["accessors"][index];
    assert_eq!(accessor["componentType"], 5126, "floats");
    let view = &doc["bufferViews"][accessor["bufferView"].as_u64().unwrap() as usize];
    let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let length = view["byteLength"].as_u64().unwrap() as usize;
    bin[offset..offset + length]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The (input, output) floats of the channel of animation `a` on node `node`'s `path`.
fn channel(doc: &Value, bin: &[u8], a: usize, node: usize, path: &str) -> (Vec<f32>, Vec<f32>) {
    let animation = &doc["animations"][a];
    let channel = animation["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"]["node"] == node && c["target"]["path"] == path)
        .unwrap_or_else(|| panic!("a {path} channel on node {node}"));
    let sampler = &animation["samplers"][channel["sampler"].as_u64().unwrap() as usize];
    assert_eq!(sampler["interpolation"], "LINEAR");
    (
        floats(doc, bin, sampler["input"].as_u64().unwrap() as usize),
        floats(doc, bin, sampler["output"].as_u64().unwrap() as usize),
    )
}

fn node_named(doc: &Value, name: &str) -> usize {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("a node {name:?}"))
}

fn close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{what}: {got:?} vs {want:?}");
    }
}

/// The fixture's clip as VC plays it, on VC's skeleton.
fn vc() -> (Skeleton, rigplay::animation::Clip, Vec<Option<usize>>) {
    let package = IfpFile::read(&vc_walk()).unwrap().file;
    let skeleton = GtaGame::Vc.skeleton();
    let clip = package.clips().next().unwrap().to_clip();
    let (clip, dropped) = skeleton.clip_as_played(GtaGame::Vc, &clip);
    assert!(dropped.is_empty());
    let targets = skeleton.bind(&clip).targets;
    (skeleton, clip, targets)
}

/// Every clip of an IFP package as `game` plays it, with the bone each track drives on its
/// skeleton: what an export of the package takes.
pub fn played_clips(
    package: &IfpFile,
    game: GtaGame,
    skeleton: &Skeleton,
) -> Vec<(rigplay::animation::Clip, Vec<Option<usize>>)> {
    package
        .clips()
        .map(|c| {
            let (clip, _) = skeleton.clip_as_played(game, &c.to_clip());
            let targets = skeleton.bind(&clip).targets;
            (clip, targets)
        })
        .collect()
}

fn export<'a>(
    skeleton: &'a Skeleton,
    clip: &'a rigplay::animation::Clip,
    targets: &'a [Option<usize>],
    root_motion: RootMotionExport,
) -> GltfExport<'a> {
    GltfExport {
        skeleton,
        to_gltf: GTA_TO_GLTF,
        clips: vec![GltfClip { clip, targets }],
        root_motion,
        extracted_axes: Vec3::new(1.0, 1.0, 0.0),
        offset: Vec3::ZERO,
        root_bone: None,
        model: None,
    }
}

#[test]
fn a_vc_walk_becomes_nodes_a_skin_and_an_animation_at_the_files_key_times() {
    let (skeleton, clip, targets) = vc();
    let file = export(&skeleton, &clip, &targets, RootMotionExport::Baked)
        .write(Some("walk.bin"))
        .unwrap();
    let (doc, bin) = (&file.json, &file.bin);
    assert_eq!(doc["asset"]["version"], "2.0");
    assert_eq!(doc["buffers"][0]["uri"], "walk.bin");
    assert_eq!(doc["buffers"][0]["byteLength"], bin.len());
    // One node per bone, named as the skeleton names them, children under their parents.
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), skeleton.bones.len());
    let root = node_named(doc, "Root");
    let pelvis = node_named(doc, "Pelvis");
    let thigh = node_named(doc, "L Thigh");
    assert!(
        nodes[root]["children"]
            .as_array()
            .unwrap()
            .contains(&Value::from(pelvis))
    );
    assert_eq!(doc["scenes"][0]["nodes"], serde_json::json!([root]));
    // The pelvis' rest in glTF axes: GTA (x, y, z) ↦ (−x, z, y).
    let rest = skeleton.bones[pelvis].rest.translation;
    let t: Vec<f32> = nodes[pelvis]["translation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    close(&t, &[-rest.x, rest.z, rest.y], "pelvis rest");
    // The skin: every bone a joint; the root's inverse bind matrix undoes its rest.
    let skin = &doc["skins"][0];
    assert_eq!(skin["joints"].as_array().unwrap().len(), nodes.len());
    assert_eq!(skin["skeleton"], root);
    let ibm = floats(
        doc,
        bin,
        skin["inverseBindMatrices"].as_u64().unwrap() as usize,
    );
    assert_eq!(ibm.len(), 16 * nodes.len());
    // Last row exactly (0, 0, 0, 1) in every matrix, as the validator demands.
    for m in ibm.chunks(16) {
        assert_eq!([m[3], m[7], m[11], m[15]], [0.0, 0.0, 0.0, 1.0]);
    }
    // The animation, named as in the file.
    assert_eq!(doc["animations"][0]["name"], "Walk_Test");
    assert_eq!(file.report.animations, 1);
    // Root translation: 4 keys at the file's times, the second 0.5 s moved back by one ulp
    // (glTF wants rising times; rigplay steps to the later of equal times, so does this);
    // (0, k, 0) in GTA is (0, 0, k) in glTF.
    let (times, values) = channel(doc, bin, 0, root, "translation");
    assert_eq!(times, [0.0, 0.5f32.next_down(), 0.5, 1.0]);
    assert_eq!(file.report.nudged_times, 1);
    close(
        &values,
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0],
        "root translation",
    );
    // The root's rotation keys share its times: one input accessor for both.
    let (rt, _) = channel(doc, bin, 0, root, "rotation");
    assert_eq!(rt, times);
    // Pelvis: −90° about GTA's Z is −90° about glTF's Y (B·Z = +Y: B turns 180° about
    // (0, 1, 1)/√2), (0, −H, 0, H); the second key, stored with every sign flipped, is written
    // on the first's hemisphere so that slerp takes the short way, as the games do.
    let (times, values) = channel(doc, bin, 0, pelvis, "rotation");
    assert_eq!(times, [0.0, 1.0]);
    close(
        &values,
        &[0.0, -H, 0.0, H, 0.0, -H, 0.0, H],
        "pelvis rotation",
    );
    // "l thigh" binds to "L Thigh" by its tag (and would by name, case-insensitively).
    let (times, values) = channel(doc, bin, 0, thigh, "rotation");
    assert_eq!(times, [0.0]);
    close(&values, &[0.0, 0.0, 0.0, 1.0], "thigh rotation");
    assert_eq!(file.report.keys, 4 + 4 + 2 + 1);
    assert_eq!(file.report.channels, 4);
    // Animation inputs carry their bounds.
    let accessor = &doc["accessors"][doc["animations"][0]["samplers"][0]["input"]
        .as_u64()
        .unwrap() as usize];
    assert_eq!(accessor["min"], serde_json::json!([0.0]));
    assert_eq!(accessor["max"], serde_json::json!([1.0]));
}

#[test]
fn root_motion_in_place_holds_the_root_and_extracted_moves_a_root_motion_node() {
    let (skeleton, clip, targets) = vc();
    // In place: the root held at its first key on GTA's ground plane (x, y): every key (0, 0, 0).
    let file = export(&skeleton, &clip, &targets, RootMotionExport::InPlace)
        .write(None)
        .unwrap();
    let root = node_named(&file.json, "Root");
    let (_, values) = channel(&file.json, &file.bin, 0, root, "translation");
    close(&values, &[0.0; 12], "held root");
    assert!(
        file.json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["name"] != "RootMotion")
    );
    // Extracted: the root held, and a `RootMotion` node above it moving by the root's keys
    // less the first, (0, k, 0) in GTA = (0, 0, k) in glTF; the scene starts at that node.
    let file = export(&skeleton, &clip, &targets, RootMotionExport::Extract)
        .write(None)
        .unwrap();
    let doc = &file.json;
    let motion = node_named(doc, "RootMotion");
    assert_eq!(doc["scenes"][0]["nodes"], serde_json::json!([motion]));
    assert_eq!(doc["nodes"][motion]["children"], serde_json::json!([root]));
    let (_, held) = channel(doc, &file.bin, 0, root, "translation");
    close(&held, &[0.0; 12], "held root");
    let (times, moved) = channel(doc, &file.bin, 0, motion, "translation");
    assert_eq!(times, [0.0, 0.5f32.next_down(), 0.5, 1.0]);
    close(
        &moved,
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0],
        "moved",
    );
}

#[test]
fn a_gta_ped_stands_on_the_ground_under_a_top_node_named_after_its_skeleton() {
    let (skeleton, clip, targets) = vc();
    let e = GltfExport::gta(
        &skeleton,
        vec![GltfClip {
            clip: &clip,
            targets: &targets,
        }],
        RootMotionExport::Extract,
    );
    let doc = e.write(None).unwrap().json;
    let top = node_named(&doc, "GTA VC ped");
    let motion = node_named(&doc, "RootMotion");
    assert_eq!(doc["scenes"][0]["nodes"], serde_json::json!([top]));
    assert_eq!(doc["nodes"][top]["children"], serde_json::json!([motion]));
    // Lifted by the lowest joint's depth below the root at rest (VC's toes, GTA's −Z), on
    // glTF's +Y.
    let lift = -skeleton.lowest_rest_height();
    assert!(lift > 0.9 && lift < 1.2, "{lift}");
    let t: Vec<f32> = doc["nodes"][top]["translation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    close(&t, &[0.0, lift, 0.0], "lift");
}

#[test]
fn a_glb_holds_the_same_document_and_buffer_in_its_two_chunks() {
    let (skeleton, clip, targets) = vc();
    let e = export(&skeleton, &clip, &targets, RootMotionExport::Baked);
    let (glb, _) = e.to_glb().unwrap();
    let file = e.write(None).unwrap();
    let u32_at = |o: usize| u32::from_le_bytes(glb[o..o + 4].try_into().unwrap()) as usize;
    assert_eq!(&glb[0..4], b"glTF");
    assert_eq!(u32_at(4), 2);
    assert_eq!(u32_at(8), glb.len());
    let json_len = u32_at(12);
    assert_eq!(&glb[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let doc: Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    // The chunk is the document as serde_json writes it, padded with spaces to 4 bytes.
    let text = serde_json::to_vec(&file.json).unwrap();
    assert_eq!(&glb[20..20 + text.len()], &text[..]);
    assert!(
        glb[20 + text.len()..20 + json_len]
            .iter()
            .all(|&b| b == b' ')
    );
    assert!(
        doc["buffers"][0].get("uri").is_none(),
        "the GLB's own chunk"
    );
    let bin_at = 20 + json_len;
    let bin_len = u32_at(bin_at);
    assert_eq!(&glb[bin_at + 4..bin_at + 8], b"BIN\0");
    assert_eq!(bin_len % 4, 0);
    assert_eq!(
        &glb[bin_at + 8..bin_at + 8 + file.bin.len()],
        &file.bin[..],
        "the buffer"
    );
    assert_eq!(bin_at + 8 + bin_len, glb.len());
}

#[test]
fn a_dan_clip_exports_on_its_own_bones_resting_on_the_first_frame_and_empty_input_is_refused() {
    let read =
        rigplay::formats::dan::DanFile::read(&crate::assets::read("anims/lamp.dan")).unwrap();
    let clip = read
        .file
        .to_clip("lamp", &rigplay::formats::dan::DanClipOptions::default());
    let skeleton = Skeleton::first_frame("lamp", &clip, &[]);
    let targets: Vec<Option<usize>> = (0..clip.tracks().len()).map(Some).collect();
    let file = GltfExport::dan(
        &skeleton,
        vec![GltfClip {
            clip: &clip,
            targets: &targets,
        }],
        RootMotionExport::Baked,
    )
    .write(None)
    .unwrap();
    let nodes = file.json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), clip.tracks().len());
    // Flat: every bone a root of the scene, resting where the clip starts.
    assert_eq!(
        file.json["scenes"][0]["nodes"].as_array().unwrap().len(),
        nodes.len()
    );
    for (i, node) in nodes.iter().enumerate() {
        let first = clip.sample_track(i, 0.0);
        if let Some(r) = first.rotation {
            let q: Vec<f32> = node["rotation"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            let q = Quat::from_slice(&q);
            assert!(q.dot(r).abs() > 1.0 - 1e-6, "bone {i}: {q} vs {r}");
        }
    }
    assert_eq!(file.report.keys, clip.key_count());
    // No bones: refused, not a file without a skin's joints.
    let empty = Skeleton {
        name: "none".into(),
        bones: Vec::new(),
    };
    let e = GltfExport {
        skeleton: &empty,
        clips: Vec::new(),
        ..GltfExport {
            skeleton: &skeleton,
            to_gltf: Quat::IDENTITY,
            clips: Vec::new(),
            root_motion: RootMotionExport::Baked,
            extracted_axes: Vec3::ZERO,
            offset: Vec3::ZERO,
            root_bone: None,
            model: None,
        }
    };
    assert_eq!(e.write(None).unwrap_err(), GltfError::NoBones);
}

/// A texture's level 0 as a PNG file, as `rigplay export --model` encodes it.
pub fn png(t: &rigplay::model::ModelTexture) -> Vec<u8> {
    let image = image::RgbaImage::from_raw(t.width, t.height, t.levels[0].clone()).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// The bundled sample ped (`assets/characters/ped.dff` and its `.txd`) with every clip of the
/// bundled SA package, exported as `rigplay export --model` exports them.
pub fn sample_ped_export(root_motion: RootMotionExport) -> GltfFile {
    model_export(
        &crate::assets::read("characters/ped.dff"),
        Some(&crate::assets::read("characters/ped.txd")),
        &crate::assets::read("anims/sa_ped.ifp"),
        GtaGame::Sa,
        root_motion,
    )
}

/// Every clip of an IFP package, played as `game` plays it, on a DFF model with its texture
/// dictionary, exported as `rigplay export --model` exports them.
pub fn model_export(
    dff: &[u8],
    txd: Option<&[u8]>,
    ifp: &[u8],
    game: GtaGame,
    root_motion: RootMotionExport,
) -> GltfFile {
    use rigplay::formats::{dff::DffFile, txd::TxdFile};
    use rigplay::model::Model;
    let package = IfpFile::read(ifp).unwrap().file;
    let skeleton = game.skeleton();
    let clips = played_clips(&package, game, &skeleton);
    let dff = DffFile::read(dff).unwrap().file;
    let textures = txd.map_or_else(Vec::new, |t| TxdFile::read(t).unwrap().file.textures);
    let model = Model::new(&dff, GtaGame::for_dff(&dff), &textures);
    assert!(model.warnings.is_empty(), "{:?}", model.warnings);
    // The first clump that has bones, as the CLI takes it.
    let c = (model.clumps.iter().position(|c| !c.bones.is_empty())).unwrap_or(0);
    let clump = &model.clumps[c];
    let frames = clump.skeleton("ped");
    let targets: Vec<Vec<Option<usize>>> = clips
        .iter()
        .map(|(clip, _)| clump.bind(&skeleton, clip))
        .collect();
    let export = GltfExport::model(
        &frames,
        GltfModel {
            model: &model,
            clump: c,
            other_clumps: true,
            png: model.textures.iter().map(|t| Some(png(t))).collect(),
        },
        clips
            .iter()
            .zip(&targets)
            .map(|((clip, _), targets)| GltfClip { clip, targets })
            .collect(),
        root_motion,
        clump.root_frame(&skeleton),
    );
    export.write(None).unwrap()
}

/// The integers of accessor `index` (u16 or u32), read from the buffer through its buffer view.
pub(crate) fn ints(doc: &Value, bin: &[u8], index: usize) -> Vec<u32> {
    let accessor = &doc["accessors"][index];
    let view = &doc["bufferViews"][accessor["bufferView"].as_u64().unwrap() as usize];
    let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let length = view["byteLength"].as_u64().unwrap() as usize;
    let bytes = &bin[offset..offset + length];
    match accessor["componentType"].as_u64().unwrap() {
        5123 => bytes
            .chunks(2)
            .map(|c| u32::from(u16::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        5125 => bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        other => panic!("component type {other}"),
    }
}

/// The sample ped with its clips, read back against the DFF and TXD as their readers give them
/// (the readers know nothing of the export): frames as nodes, the skin's joints and inverse
/// bind matrices, every vertex of every material in glTF's axes, weights, materials, textures,
/// and the clips on the frames that are bones.
#[test]
fn the_sample_ped_exports_with_its_meshes_skin_materials_and_textures() {
    use rigplay::formats::{dff::DffFile, txd::TxdFile};
    let file = sample_ped_export(RootMotionExport::Baked);
    let (doc, bin) = (&file.json, &file.bin);
    let dff = DffFile::read(&crate::assets::read("characters/ped.dff"))
        .unwrap()
        .file;
    let txd = TxdFile::read(&crate::assets::read("characters/ped.txd"))
        .unwrap()
        .file;
    let clump = &dff.clumps[0];
    // Nodes 0.. are the frames, named as the file names them.
    for (i, f) in clump.frames.iter().enumerate() {
        let want = f.name.clone().unwrap_or_else(|| format!("Frame{i}"));
        assert_eq!(doc["nodes"][i]["name"], want.as_str(), "node {i}");
    }
    // GTA → glTF is v ↦ (−x, z, y) (coords::GTA_TO_GLTF): its matrix P is its own inverse.
    let p = glam::Mat4::from_cols(
        glam::Vec4::new(-1.0, 0.0, 0.0, 0.0),
        glam::Vec4::new(0.0, 0.0, 1.0, 0.0),
        glam::Vec4::new(0.0, 1.0, 0.0, 0.0),
        glam::Vec4::W,
    );
    let turn = |v: Vec3| Vec3::new(-v.x, v.z, v.y);
    let skinned: Vec<usize> = clump
        .atomics
        .iter()
        .filter(|a| clump.geometries[a.geometry].skin.is_some())
        .map(|a| a.geometry)
        .collect();
    assert_eq!(file.report.skins, skinned.len());
    assert_eq!(doc["skins"].as_array().unwrap().len(), skinned.len());
    let bones = clump.bones().unwrap();
    let skin = &doc["skins"][0];
    let joints: Vec<u64> = skin["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_u64().unwrap())
        .collect();
    let want: Vec<u64> = bones.iter().map(|b| b.frame.unwrap() as u64).collect();
    assert_eq!(
        joints, want,
        "the joints are the hierarchy's frames, node order"
    );
    let file_skin = clump.geometries[skinned[0]].skin.as_ref().unwrap();
    let ibms = floats(
        doc,
        bin,
        skin["inverseBindMatrices"].as_u64().unwrap() as usize,
    );
    for (k, m) in ibms.chunks(16).enumerate() {
        let want = p * file_skin.inverse_bind[k] * p;
        close(
            m,
            &want.to_cols_array(),
            &format!("inverse bind matrix {k}"),
        );
    }
    // Every material of the geometry with triangles: a primitive whose vertices are the file's,
    // in the order its faces first use them.
    let geometry = &clump.geometries[skinned[0]];
    let mesh = &doc["meshes"][0];
    let primitives = mesh["primitives"].as_array().unwrap();
    let faces = geometry.faces();
    let mut m = 0;
    for (material, look) in geometry.materials.iter().enumerate() {
        let used: Vec<u32> = faces
            .iter()
            .filter(|f| f.material as usize == material)
            .flat_map(|f| f.vertices)
            .collect();
        if used.is_empty() {
            continue;
        }
        let primitive = &primitives[m];
        m += 1;
        let attribute = |name: &str| primitive["attributes"][name].as_u64().unwrap() as usize;
        let positions = floats(doc, bin, attribute("POSITION"));
        let indices = ints(doc, bin, primitive["indices"].as_u64().unwrap() as usize);
        assert_eq!(indices.len(), used.len());
        let weights = floats(doc, bin, attribute("WEIGHTS_0"));
        let joints = ints(doc, bin, attribute("JOINTS_0"));
        for (i, &v) in indices.iter().zip(&used) {
            let got = Vec3::from_slice(&positions[3 * *i as usize..]);
            let want = turn(geometry.positions()[v as usize]);
            assert!(got.abs_diff_eq(want, 1e-6), "vertex {v}: {got} vs {want}");
            // The file's weights, normalised, on the file's bones.
            let w = file_skin.weights[v as usize];
            let sum: f32 = w.iter().sum();
            for k in 0..4 {
                let (gw, gj) = (weights[4 * *i as usize + k], joints[4 * *i as usize + k]);
                if w[k] > 0.0 {
                    assert!((gw - w[k] / sum).abs() < 1e-6, "vertex {v} weight {k}");
                    assert_eq!(gj, u32::from(file_skin.bone_indices[v as usize][k]));
                }
            }
        }
        // The material: the file's colour made linear, its texture, its alpha as the texture's
        // texels and the colour decide.
        let gm = &doc["materials"][primitive["material"].as_u64().unwrap() as usize];
        let factor: Vec<f32> = gm["pbrMetallicRoughness"]["baseColorFactor"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let linear = |u: u8| {
            let x = f32::from(u) / 255.0;
            if x <= 0.04045 {
                x / 12.92
            } else {
                ((x + 0.055) / 1.055).powf(2.4)
            }
        };
        let c = look.colour;
        close(
            &factor,
            &[
                linear(c[0]),
                linear(c[1]),
                linear(c[2]),
                f32::from(c[3]) / 255.0,
            ],
            "base colour",
        );
        let texture = look.texture.as_ref().and_then(|t| txd.find(&t.name));
        let texture_alpha =
            texture.is_some_and(|t| t.decode(0).unwrap().pixels.chunks(4).any(|p| p[3] < 255));
        let mode = gm["alphaMode"].as_str().unwrap_or("OPAQUE");
        let want = if c[3] < 255 {
            "BLEND"
        } else if texture_alpha {
            "MASK"
        } else {
            "OPAQUE"
        };
        assert_eq!(mode, want, "material {material}");
        if let Some(t) = texture {
            let index = gm["pbrMetallicRoughness"]["baseColorTexture"]["index"]
                .as_u64()
                .unwrap() as usize;
            let image = &doc["images"][doc["textures"][index]["source"].as_u64().unwrap() as usize];
            assert_eq!(image["mimeType"], "image/png");
            let view = &doc["bufferViews"][image["bufferView"].as_u64().unwrap() as usize];
            let at = view["byteOffset"].as_u64().unwrap() as usize;
            let png = &bin[at..at + view["byteLength"].as_u64().unwrap() as usize];
            let decoded = image::load_from_memory(png).unwrap().to_rgba8();
            let level0 = t.decode(0).unwrap();
            assert_eq!(
                (decoded.width(), decoded.height()),
                (level0.width, level0.height)
            );
            assert_eq!(decoded.as_raw(), &level0.pixels, "the texture's texels");
        }
    }
    assert_eq!(m, primitives.len());
    assert!(m > 0);
    // The clips: on the frames that are bones, the same channels as on the built-in skeleton.
    let package = IfpFile::read(&crate::assets::read("anims/sa_ped.ifp"))
        .unwrap()
        .file;
    let skeleton = GtaGame::Sa.skeleton();
    let clips = played_clips(&package, GtaGame::Sa, &skeleton);
    assert_eq!(file.report.animations, clips.len());
    for (a, (clip, targets)) in clips.iter().enumerate() {
        let channels = doc["animations"][a]["channels"].as_array().unwrap();
        let per_track: usize = clip
            .tracks()
            .iter()
            .zip(targets)
            .filter(|(_, t)| t.is_some())
            .map(|(t, _)| {
                usize::from(t.rotation.is_some())
                    + usize::from(t.translation.is_some())
                    + usize::from(t.scale.is_some())
            })
            .sum();
        assert_eq!(channels.len(), per_track, "{}", clip.name);
        for c in channels {
            let node = c["target"]["node"].as_u64().unwrap() as usize;
            assert!(
                clump.frames[node]
                    .hanim
                    .as_ref()
                    .is_some_and(|h| h.node_id >= 0),
                "{}: node {node} is a bone",
                clip.name
            );
        }
    }
}
