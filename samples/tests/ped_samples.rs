//! The bundled RenderWare ped (`assets/characters/ped.dff`, `ped.txd`): read back by rigplay's
//! readers as a real SA ped file would be.

use glam::Vec3;
use rigplay::formats::dff::{Clump, DffFile, SkinLayout};
use rigplay::formats::txd::{PixelFormat, TxdFile};
use rigplay::skeleton::Skeleton;
use rigplay_samples::ped::{self, Region};
use rigplay_samples::rw::{self, Image};

fn committed(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/characters")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn clump() -> Clump {
    let r = DffFile::read(&committed("ped.dff")).expect("ped.dff reads");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.file.clumps.len(), 1);
    r.file.clumps.into_iter().next().unwrap()
}

fn txd() -> TxdFile {
    let r = TxdFile::read(&committed("ped.txd")).expect("ped.txd reads");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r.file
}

#[test]
fn ped_has_the_layout_of_an_sa_ped() {
    let c = clump();
    assert_eq!(c.version, 0x36003);
    assert_eq!(c.frames.len(), 33);
    assert_eq!(c.frames[0].name, None);
    assert!(c.frames[0].hanim.is_none());
    assert_eq!(c.frames[1].name.as_deref(), Some("Normal"));
    assert_eq!(c.hierarchy_frame(), Some(1));
    assert_eq!(c.atomics.len(), 2);
    let body = c.atomics[0];
    assert_eq!(
        (body.frame, body.flags, body.right_to_render),
        (1, 5, Some((0x116, 1)))
    );
    let g = &c.geometries[body.geometry];
    assert_eq!(g.flags, 0x10037);
    assert_eq!(g.uv_sets.len(), 1);
    assert!(g.normals().is_some());
    assert!(g.materials.len() >= 2);
    assert!(
        g.materials
            .iter()
            .all(|m| m.texture.as_ref().unwrap().name == ped::BODY_TEXTURE)
    );
    let bm = g.bin_mesh.as_ref().unwrap();
    assert!(bm.strips);
    let skin = g.skin.as_ref().unwrap();
    assert_eq!(skin.layout, SkinLayout::New);
    assert_eq!(skin.num_bones, 32);
    assert_eq!(skin.split, Some([0, 0, 0]));
    assert_eq!(usize::from(skin.max_weights), skin.max_influences());
    assert_eq!(skin.max_influences(), 4);
    let mut histogram = [0usize; 5];
    for w in &skin.weights {
        histogram[w.iter().filter(|&&x| x != 0.0).count()] += 1;
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    eprintln!(
        "body: {} vertices, {} triangles, {} materials, influences 1/2/3/4 = {:?}, {} used bones",
        g.num_vertices,
        g.triangles.len(),
        g.materials.len(),
        &histogram[1..],
        skin.used_bones.len()
    );
    assert!(histogram[1] > histogram[2] && histogram[2] > 0 && histogram[3] + histogram[4] > 0);
    assert!((200..1000).contains(&g.num_vertices));
    // The used-bones list is the set of bones with a non-zero weight.
    let mut used = [false; 32];
    for (ix, w) in skin.bone_indices.iter().zip(&skin.weights) {
        for j in 0..4 {
            if w[j] != 0.0 {
                used[usize::from(ix[j])] = true;
            }
        }
    }
    let expected: Vec<u8> = (0..32).filter(|&k| used[k as usize]).collect();
    assert_eq!(skin.used_bones, expected);
    // The strips draw the triangle list's faces, winding included.
    let norm = |mut t: [u32; 3], m: u32| {
        while t[0] != *t.iter().min().unwrap() {
            t.rotate_left(1);
        }
        (m, t)
    };
    let mut from_strips: Vec<_> = g
        .faces()
        .iter()
        .map(|f| norm(f.vertices, f.material))
        .collect();
    let mut from_list: Vec<_> = g
        .triangles
        .iter()
        .map(|t| norm(t.vertices.map(u32::from), u32::from(t.material)))
        .collect();
    from_strips.sort();
    from_list.sort();
    assert_eq!(from_strips, from_list);
    // Triangles face outwards: the face normal agrees with the vertex normals.
    let (p, n) = (g.positions(), g.normals().unwrap());
    for t in &g.triangles {
        let [a, b, c] = t.vertices.map(usize::from);
        let face = (p[b] - p[a]).cross(p[c] - p[a]);
        assert!(face.dot(n[a] + n[b] + n[c]) > 0.0);
    }
    // The bounding sphere holds every vertex.
    let s = g.morph_targets[0].sphere;
    assert!(
        p.iter()
            .all(|v| v.distance(Vec3::new(s[0], s[1], s[2])) <= s[3])
    );
}

#[test]
fn ped_bones_are_the_sa_skeleton_and_frames_are_in_another_order() {
    let c = clump();
    let sa = Skeleton::gta_sa();
    let bones = c.bones().unwrap();
    assert_eq!(bones.len(), sa.bones.len());
    for (b, s) in bones.iter().zip(&sa.bones) {
        assert_eq!(Some(b.node_id), s.id);
        assert_eq!(b.parent, s.parent, "{}", s.name);
        let f = &c.frames[b.frame.unwrap()];
        assert_eq!(f.name.as_deref(), Some(s.name.as_str()));
        // Frame parents agree with the hierarchy's.
        let parent_frame = b.parent.map_or(Some(0), |p| bones[p].frame);
        assert_eq!(f.parent, parent_frame);
    }
    let frames: Vec<usize> = bones.iter().map(|b| b.frame.unwrap()).collect();
    assert_ne!(
        frames,
        (1..=32).collect::<Vec<_>>(),
        "frame order = node order"
    );
    for (i, f) in c.frames.iter().enumerate() {
        assert!(f.parent.is_none_or(|p| p < i));
    }
}

#[test]
fn ped_skin_bind_pose_gives_the_stored_positions() {
    let c = clump();
    let skinned = c.skin_bind_pose(0).unwrap();
    let stored = c.geometries[0].positions();
    let max = skinned
        .iter()
        .zip(stored)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    eprintln!("skin bind pose vs stored positions: max {max:e} m");
    assert!(max < 1e-4);
}

#[test]
fn ped_stands_up_along_z_in_skin_space_and_y_in_the_frame_pose() {
    let c = clump();
    let g = &c.geometries[0];
    let (lo, hi) = g.positions().iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), v| (lo.min(*v), hi.max(*v)),
    );
    eprintln!("skin space box {lo} … {hi}");
    let size = hi - lo;
    assert!(size.z > 1.5 && size.z > 2.0 * size.x, "{size}");
    // Clump space in the Frame List's pose: Normal's bind turns skin +Z into clump +Y (§6.3).
    let w = c.world_matrices()[1];
    let up = w.transform_vector3(Vec3::Z);
    assert!(up.abs_diff_eq(Vec3::Y, 1e-5), "{up}");
    // The head is above the feet in skin space.
    let bones = c.bones().unwrap();
    let world = c.world_matrices();
    let to_skin = world[1].inverse();
    let at = |id: i32| {
        let b = bones.iter().find(|b| b.node_id == id).unwrap();
        to_skin.transform_point3(world[b.frame.unwrap()].w_axis.truncate())
    };
    assert!(at(5).z - at(43).z > 1.2);
    assert!(at(41).y > at(51).y, "left thigh on +Y");
}

#[test]
fn ped_cap_is_a_rigid_atomic_on_the_head() {
    let c = clump();
    let a = c.atomics[1];
    assert_eq!(c.frames[a.frame].name.as_deref(), Some(" Head"));
    assert_eq!(a.right_to_render, Some((0x120, 0)));
    let g = &c.geometries[a.geometry];
    assert!(g.skin.is_none());
    assert_eq!(
        g.materials[0].texture.as_ref().unwrap().name,
        ped::CAP_TEXTURE
    );
    assert!(!g.bin_mesh.as_ref().unwrap().strips);
    assert_eq!(
        c.skin_bind_pose(1).unwrap_err().to_string(),
        "the atomic's geometry has no skin"
    );
}

#[test]
fn ped_textures_decode_and_the_uvs_land_on_their_regions() {
    let t = txd();
    assert_eq!(t.device_id, 2);
    let body = t.find(ped::BODY_TEXTURE).unwrap();
    assert_eq!(body.platform, 9);
    assert_eq!(body.pixel_format().unwrap(), PixelFormat::Dxt1);
    assert_eq!((body.width, body.height), (128, 128));
    assert!(body.levels.len() >= 2);
    for (l, level) in body.decode_all().into_iter().enumerate() {
        let img = level.unwrap_or_else(|e| panic!("level {l}: {e}"));
        assert_eq!((img.width, img.height), body.level_size(l));
    }
    let cap = t.find(ped::CAP_TEXTURE).unwrap();
    assert_eq!(cap.pixel_format().unwrap(), PixelFormat::Bgra8888);
    let cap_img = cap.decode(0).unwrap();
    let alphas: Vec<u8> = cap_img.pixels.chunks(4).map(|p| p[3]).collect();
    assert!(alphas.contains(&0) && alphas.contains(&255));
    assert_eq!(
        cap_img.pixels,
        ped::cap_image()
            .pixels
            .iter()
            .flatten()
            .copied()
            .collect::<Vec<u8>>()
    );

    // Rigid vertices of the body: their UV is inside the region of their bone, and the decoded
    // texels there have the region's colour on average.
    let c = clump();
    let g = &c.geometries[0];
    let skin = g.skin.as_ref().unwrap();
    let bones = c.bones().unwrap();
    let img = body.decode(0).unwrap();
    let region_of = |id: i32| match id {
        1 | 41 | 42 | 51 | 52 => Some(Region::Trousers),
        2 | 3 | 31 | 32 | 21 | 22 => Some(Region::Shirt),
        4 | 5 | 33 | 34 | 35 | 23 | 24 | 25 => Some(Region::Skin),
        43 | 44 | 53 | 54 => Some(Region::Shoes),
        _ => None,
    };
    let mut sums = std::collections::HashMap::<[u8; 3], ([f32; 3], f32)>::new();
    for (v, uv) in g.uv_sets[0].iter().enumerate() {
        if skin.weights[v][0] != 1.0 {
            continue;
        }
        let id = bones[usize::from(skin.bone_indices[v][0])].node_id;
        let region = region_of(id).unwrap_or_else(|| panic!("bone {id} has no region"));
        let [u0, v0, u1, v1] = region.uv_rect();
        assert!(
            uv[0] >= u0 - 1e-6 && uv[0] <= u1 + 1e-6 && uv[1] >= v0 - 1e-6 && uv[1] <= v1 + 1e-6,
            "bone {id}: uv {uv:?} outside {region:?}"
        );
        let x = ((uv[0] * 128.0) as usize).min(127);
        let y = ((uv[1] * 128.0) as usize).min(127);
        let px = &img.pixels[(y * 128 + x) * 4..][..3];
        let e = sums.entry(region.colour()).or_default();
        for (acc, &c) in e.0.iter_mut().zip(px) {
            *acc += f32::from(c);
        }
        e.1 += 1.0;
    }
    assert_eq!(sums.len(), 4);
    for (colour, (sum, n)) in sums {
        let mean = sum.map(|s| s / n);
        let off = (0..3)
            .map(|k| (mean[k] - f32::from(colour[k])).abs())
            .fold(0.0f32, f32::max);
        eprintln!("region {colour:?}: mean texel {mean:?} over {n} vertices");
        assert!(off < 60.0, "{colour:?} vs {mean:?}");
    }
}

#[test]
fn dxt1_encoder_is_close_to_its_source() {
    let t = txd();
    let body = t.find(ped::BODY_TEXTURE).unwrap();
    let source = ped::body_atlas().mip_chain(16);
    assert_eq!(source.len(), body.levels.len());
    let mut worst = 0u8;
    let mut total = 0u64;
    let mut count = 0u64;
    let mut errors = Vec::new();
    for (l, src) in source.iter().enumerate() {
        let img = body.decode(l).unwrap();
        for (a, b) in img.pixels.chunks(4).zip(&src.pixels) {
            for k in 0..3 {
                let d = a[k].abs_diff(b[k]);
                worst = worst.max(d);
                errors.push(d);
                total += u64::from(d);
                count += 1;
            }
            assert_eq!(a[3], 255);
        }
    }
    errors.sort_unstable();
    let p99 = errors[errors.len() * 99 / 100];
    let mean = total as f64 / count as f64;
    eprintln!(
        "DXT1 of the atlas, all levels: max channel error {worst}, 99th percentile {p99}, mean {mean:.2}"
    );
    // Blocks where three colours meet (stripe crossings) cannot be fitted by one line of four
    // colours: the worst texel is far off, the image as a whole close.
    assert!(worst <= 96 && p99 <= 40 && mean < 4.0, "max error {worst}");

    // A smooth gradient through the encoder alone: within 565 quantisation and interpolation.
    let g = Image::from_fn(64, 64, |x, y| [(x * 4) as u8, (y * 4) as u8, 128, 255]);
    let enc = rw::txd_bytes(&[rw::TexSpec {
        name: "g",
        format: rw::TexFormat::Dxt1,
        levels: std::slice::from_ref(&g),
    }]);
    let dec = TxdFile::read(&enc).unwrap().file.textures[0]
        .decode(0)
        .unwrap();
    let worst = dec
        .pixels
        .chunks(4)
        .zip(&g.pixels)
        .flat_map(|(a, b)| (0..3).map(move |k| a[k].abs_diff(b[k])))
        .max()
        .unwrap();
    eprintln!("DXT1 of a 64×64 gradient: max channel error {worst}");
    assert!(worst <= 12);
}

#[test]
fn ped_rest_pose_agrees_with_the_built_in_sa_skeleton() {
    // The sample is built from the built-in table, so this checks the pipeline (writer, reader,
    // `Skeleton::from_dff`), not the table against a real ped.
    let c = clump();
    let dff = Skeleton::from_dff(&c, rigplay::skeleton::GtaGame::Sa).unwrap();
    let d = dff.rest_difference(&Skeleton::gta_sa());
    let (t, tb) = d.max_translation.clone().unwrap();
    let (r, rb) = d.max_rotation.clone().unwrap();
    let root = d.root_rotation.unwrap();
    eprintln!(
        "DFF vs built-in SA rest: max translation {t:e} m ({tb:?}), max rotation {r:e} rad \
         ({rb:?}), root rotation {:.2}°",
        root.to_degrees()
    );
    assert_eq!(d.bones.len(), 32);
    assert!(d.missing_in_other.is_empty() && d.missing_in_self.is_empty());
    assert!(t < 1e-6 && r < 1e-5, "{d:?}");
    // The root: the DFF's bind (−0.5, −0.5, −0.5, 0.5) against the clip-relative ≈90° about Z.
    assert!(root > 1.0, "{root}");
    for (b, s) in dff.bones.iter().zip(&Skeleton::gta_sa().bones) {
        assert_eq!(
            (&b.name, b.id, b.canonical, b.parent),
            (&s.name, s.id, s.canonical, s.parent)
        );
    }
}
