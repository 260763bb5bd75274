//! The bundled AnimeEffects sample projects, drawn and rigged by code (no third-party art):
//!
//! * [`character`] (`anims/anie/character.anie`): a cartoon cat waving, on a bone tree with
//!   Pose keys; its arms and tail are meshes skinned by influence maps, its head, body and
//!   legs are bound rigidly to bones;
//! * [`mesh_ffd`] (`anims/anie/mesh_ffd.anie`): grid meshes bent by FFD keys: a flag waving
//!   and a slime squashing, stretching and wobbling with a different easing on each key;
//! * [`blend_sheet`] (`anims/anie/blend_sheet.anie`): one disc in each of the 20 blend modes
//!   over a common backdrop, a clipper with two clippees, Opa keys and HSV keys.
//!
//! They are laid out the way AnimeEffects' PSD import and editing tools lay projects out
//! ([`build`]), following the projects `bones.anie` and `ffd.anie` that AnimeEffects 1.7
//! saved itself (spec `shared/reference/anie/`), and are written in format 0.8.

pub mod build;
pub mod paint;

use std::f32::consts::{PI, TAU};

use glam::{Vec2, Vec3};

use self::build::{DEFAULT_CELL, Rig, RigBone, Scene};
use self::paint::{Painter, Rgba, hsv, mix, rgb, rgba, sdf};
use rigplay::formats::anie::{
    AnieFile, AnieVersion, BlendMode, Easing, EasingKind, EasingRange, FfdKey, HsvKey, KeyKind,
    KeyRef, KeySlot, MoveKey, OpaKey, Spline, TimeKey,
};

/// The sample projects: (path under `assets/`, project).
pub fn sample_projects() -> Vec<(&'static str, AnieFile)> {
    vec![
        ("anims/anie/character.anie", character()),
        ("anims/anie/mesh_ffd.anie", mesh_ffd()),
        ("anims/anie/blend_sheet.anie", blend_sheet()),
    ]
}

/// The sample projects as files (format 0.8): (path under `assets/`, bytes).
pub fn sample_files() -> Vec<(&'static str, Vec<u8>)> {
    sample_projects()
        .into_iter()
        .map(|(path, p)| {
            (
                path,
                p.write(AnieVersion::V0_8)
                    .unwrap_or_else(|e| unreachable!("the sample projects are valid: {e}")),
            )
        })
        .collect()
}

fn easing(kind: EasingKind, range: EasingRange) -> Easing {
    Easing {
        kind,
        range,
        ..Easing::default()
    }
}

fn deg(d: f32) -> f32 {
    d.to_radians()
}

const OUTLINE: f32 = 2.5;

/// Bones of the cat, in DFS pre-order; the index is the palette index.
mod cat {
    pub const HIPS: usize = 0;
    pub const SPINE: usize = 1;
    pub const HEAD: usize = 2;
    pub const R_CLAVICLE: usize = 3;
    pub const R_UPPER_ARM: usize = 4;
    pub const R_FOREARM: usize = 5;
    pub const L_CLAVICLE: usize = 6;
    pub const L_UPPER_ARM: usize = 7;
    pub const L_FOREARM: usize = 8;
    pub const R_HIP: usize = 9;
    pub const R_LEG: usize = 10;
    pub const L_HIP: usize = 11;
    pub const L_LEG: usize = 12;
    pub const TAIL: [usize; 4] = [13, 14, 15, 16];
    pub const COUNT: usize = 17;
}

/// `anims/anie/character.anie`: a cartoon cat (256 × 256 canvas, 48 frames at 24 fps,
/// looping) waving its paw.
///
/// * Object tree: the root folder `cat` (the Bone key's owner, bobbing on Move keys) over the
///   layers `head`, `arm R`, `arm L`, `body`, `leg R`, `leg L`, `tail`.
/// * One Bone key at frame 0 on the root: 17 bones (a top joint at the hips; spine → head;
///   clavicle → upper arm → forearm on each side; hip → leg on each side; a 4-bone tail), the
///   influence shapes the bone editor builds ([`Rig::bones`]), influence caches for the three
///   skinned layers (arms and tail, every vertex inside some bone's shape) and binding caches
///   for the four bound layers (`body` on the spine, `head` on the head bone, each leg on its
///   leg bone). Skinned parts are drawn apart from each other's bones, since a Bone key
///   weighs every layer under its owner by position alone.
/// * Six Pose keys (frames 0, 8, …, 40), children of the Bone key, with Sine InOut easing: the
///   left paw raised and waving every 16 frames, the body swaying, a foot tapping, the tail
///   swishing in a 24-frame wave down its length.
pub fn character() -> AnieFile {
    let fur = rgb(240, 150, 60);
    let dark = rgb(90, 50, 30);
    let cream = rgb(255, 232, 196);
    let pink = rgba(255, 130, 140, 200);
    let v = Vec2::new;

    // Joints (canvas pixels); the skeleton and the drawings share them.
    let hips = v(128.0, 158.0);
    let chest = v(128.0, 114.0);
    let head_joint = v(128.0, 84.0);
    // The right arm (screen left) hangs; the left one is raised to wave. A limb's last joint
    // is its paw or ankle.
    let arm_r = [v(106.0, 122.0), v(92.0, 140.0), v(84.0, 160.0)];
    let arm_l = [v(150.0, 120.0), v(172.0, 104.0), v(184.0, 80.0)];
    let leg = |side: f32| [v(128.0 + 12.0 * side, 164.0), v(128.0 + 16.0 * side, 212.0)];
    // The tail leaves the hips behind the body and curls up on the right, clear of the limbs.
    let tail = [
        v(154.0, 156.0),
        v(180.0, 158.0),
        v(204.0, 150.0),
        v(218.0, 132.0),
    ];

    let mut scene = Scene::new([256, 256], 47, 24, true, "cat.psd", "cat");

    // Head: ears, face, eyes, muzzle, smile.
    let mut head = Painter::at(86, 18, 84, 92);
    let head_c = v(128.0, 74.0);
    for side in [-1.0f32, 1.0] {
        let ear = [
            v(128.0 + 28.0 * side, 62.0),
            v(128.0 + 30.0 * side, 24.0),
            v(128.0 + 4.0 * side, 46.0),
        ];
        head.fill_solid(|p| sdf::polygon(p, &ear) - 1.0, dark);
        head.fill_solid(|p| sdf::polygon(p, &ear) + 1.5, fur);
        let inner = ear.map(|q| q + (v(128.0 + 20.0 * side, 44.0) - q) * 0.45);
        head.fill_solid(|p| sdf::polygon(p, &inner), pink);
    }
    head.fill_solid(|p| sdf::circle(p, head_c, 30.0 + OUTLINE / 2.0), dark);
    head.fill(
        |p| sdf::circle(p, head_c, 30.0 - OUTLINE / 2.0),
        |p| {
            mix(
                fur,
                rgb(255, 190, 110),
                ((head_c.y - p.y) / 40.0).clamp(0.0, 1.0),
            )
        },
    );
    for side in [-1.0f32, 1.0] {
        let eye = v(128.0 + 12.0 * side, 70.0);
        head.fill_solid(|p| sdf::ellipse(p, eye, v(7.0, 8.5)), rgb(255, 255, 255));
        head.fill_solid(|p| sdf::circle(p, eye + v(1.0, 1.5), 4.5), rgb(40, 28, 30));
        head.fill_solid(
            |p| sdf::circle(p, eye + v(-0.5, -1.0), 1.6),
            rgb(255, 255, 255),
        );
        head.fill_solid(
            |p| sdf::ellipse(p, v(128.0 + 21.0 * side, 84.0), v(5.0, 3.0)),
            pink,
        );
    }
    head.fill_solid(|p| sdf::ellipse(p, v(128.0, 89.0), v(12.0, 8.0)), cream);
    let nose = [v(124.0, 83.0), v(132.0, 83.0), v(128.0, 88.0)];
    head.fill_solid(|p| sdf::polygon(p, &nose) - 0.5, rgb(200, 80, 90));
    for side in [-1.0f32, 1.0] {
        let c = v(128.0 + 4.0 * side, 88.0);
        head.fill_solid(
            |p| ((p - c).length() - 4.0).abs().max(88.5 - p.y) - 0.8,
            dark,
        );
    }
    let head_layer = scene.layer("head", head, BlendMode::Normal, DEFAULT_CELL);

    // Arms: upper arm and forearm as one outlined capsule chain ending in a paw.
    let draw_arm = |[shoulder, elbow, paw]: [Vec2; 3], rect: [i32; 4]| {
        let mut p = Painter::at(rect[0], rect[1], rect[2], rect[3]);
        let limb = move |q: Vec2, r: f32| {
            sdf::capsule(q, shoulder, elbow, r)
                .min(sdf::capsule(q, elbow, paw, r))
                .min(sdf::circle(q, paw, r + 2.5))
        };
        p.fill_solid(|q| limb(q, 7.0 + OUTLINE / 2.0), dark);
        p.fill_solid(|q| limb(q, 7.0 - OUTLINE / 2.0), fur);
        p.fill_solid(
            |q| sdf::circle(q, paw + (paw - elbow).normalize() * 2.0, 5.0),
            cream,
        );
        p
    };
    scene.layer(
        "arm R",
        draw_arm(arm_r, [68, 108, 50, 68]),
        BlendMode::Normal,
        8,
    );
    scene.layer(
        "arm L",
        draw_arm(arm_l, [136, 64, 62, 70]),
        BlendMode::Normal,
        8,
    );

    // Body: an outlined egg with a cream belly.
    let mut body = Painter::at(96, 104, 64, 72);
    let body_c = v(128.0, 140.0);
    body.fill_solid(
        |p| sdf::ellipse(p, body_c, v(28.0 + OUTLINE / 2.0, 32.0 + OUTLINE / 2.0)),
        dark,
    );
    body.fill_solid(
        |p| sdf::ellipse(p, body_c, v(28.0 - OUTLINE / 2.0, 32.0 - OUTLINE / 2.0)),
        fur,
    );
    body.fill_solid(|p| sdf::ellipse(p, v(128.0, 146.0), v(17.0, 21.0)), cream);
    let body_layer = scene.layer("body", body, BlendMode::Normal, DEFAULT_CELL);

    // Legs: an outlined capsule on a foot.
    let draw_leg = |side: f32| {
        let [hip, ankle] = leg(side);
        let foot = ankle + v(4.0 * side, 6.0);
        let x0 = if side < 0.0 { 92 } else { 128 };
        let mut p = Painter::at(x0, 150, 36, 78);
        let limb = move |q: Vec2, r: f32| {
            sdf::capsule(q, hip + v(0.0, -6.0), ankle, r).min(sdf::ellipse(
                q,
                foot,
                v(r + 6.0, r - 1.0),
            ))
        };
        p.fill_solid(|q| limb(q, 8.0 + OUTLINE / 2.0), dark);
        p.fill_solid(|q| limb(q, 8.0 - OUTLINE / 2.0), fur);
        p
    };
    let leg_r = scene.layer("leg R", draw_leg(-1.0), BlendMode::Normal, DEFAULT_CELL);
    let leg_l = scene.layer("leg L", draw_leg(1.0), BlendMode::Normal, DEFAULT_CELL);

    // Tail: a tapering chain of capsules with a cream tip.
    let mut tail_p = Painter::at(118, 116, 112, 56);
    let chain = [hips, tail[0], tail[1], tail[2], tail[3]];
    let tail_d = move |q: Vec2, grow: f32| {
        (0..4)
            .map(|k| sdf::capsule(q, chain[k], chain[k + 1], 7.0 - 0.6 * k as f32 + grow))
            .fold(f32::MAX, f32::min)
    };
    tail_p.fill_solid(|q| tail_d(q, OUTLINE / 2.0), dark);
    tail_p.fill(
        |q| tail_d(q, -OUTLINE / 2.0),
        |q| {
            if q.distance(tail[3]) < 11.0 {
                cream
            } else {
                fur
            }
        },
    );
    scene.layer("tail", tail_p, BlendMode::Normal, 8);

    // The skeleton: (parent, joint, range across/along). The ranges of the skinned arms and
    // tail reach past their drawings by about a grid cell, so that every mesh vertex has an
    // influence (none falls back to rigid on the top bone); the bound parts' bones are thin.
    let (ra, la, rl, ll) = (arm_r, arm_l, leg(-1.0), leg(1.0));
    let bone = |parent: Option<usize>, joint: Vec2, range: Vec2| RigBone {
        parent,
        joint,
        range,
        binds: Vec::new(),
    };
    let mut rig = Rig {
        bones: vec![
            bone(None, hips, Vec2::ZERO),
            bone(Some(cat::HIPS), chest, v(20.0, 12.0)),
            bone(Some(cat::SPINE), head_joint, v(8.0, 6.0)),
            bone(Some(cat::SPINE), ra[0], v(14.0, 8.0)),
            bone(Some(cat::R_CLAVICLE), ra[1], v(17.0, 10.0)),
            bone(Some(cat::R_UPPER_ARM), ra[2], v(19.0, 20.0)),
            bone(Some(cat::SPINE), la[0], v(14.0, 8.0)),
            bone(Some(cat::L_CLAVICLE), la[1], v(17.0, 10.0)),
            bone(Some(cat::L_UPPER_ARM), la[2], v(19.0, 20.0)),
            bone(Some(cat::HIPS), rl[0], v(6.0, 4.0)),
            bone(Some(cat::R_HIP), rl[1], v(6.0, 4.0)),
            bone(Some(cat::HIPS), ll[0], v(6.0, 4.0)),
            bone(Some(cat::L_HIP), ll[1], v(6.0, 4.0)),
            bone(Some(cat::HIPS), tail[0], v(16.0, 14.0)),
            bone(Some(cat::TAIL[0]), tail[1], v(16.0, 10.0)),
            bone(Some(cat::TAIL[1]), tail[2], v(15.0, 10.0)),
            bone(Some(cat::TAIL[2]), tail[3], v(15.0, 16.0)),
        ],
    };
    debug_assert_eq!(rig.bones.len(), cat::COUNT);
    rig.bones[cat::SPINE].binds.push(body_layer);
    rig.bones[cat::HEAD].binds.push(head_layer);
    rig.bones[cat::R_LEG].binds.push(leg_r);
    rig.bones[cat::L_LEG].binds.push(leg_l);

    let bone_key = KeyRef {
        node: 0,
        kind: KeyKind::Bone,
        slot: KeySlot::At(0),
    };
    let mut key = rig.bone_key(&scene, 0);
    let sine = easing(EasingKind::Sine, EasingRange::InOut);
    let mut poses = Vec::new();
    for k in 0..6 {
        let s = if k % 2 == 0 { 1.0 } else { -1.0 };
        let sway = (TAU * k as f32 / 6.0).sin();
        let wave = TAU * k as f32 / 3.0;
        let mut r = [0.0f32; cat::COUNT];
        r[cat::SPINE] = deg(3.0) * sway;
        r[cat::HEAD] = deg(-5.0) * sway + deg(3.0) * s;
        r[cat::R_UPPER_ARM] = deg(6.0) * sway;
        r[cat::R_FOREARM] = deg(5.0) * s;
        r[cat::L_UPPER_ARM] = deg(4.0) * s;
        r[cat::L_FOREARM] = deg(30.0) * s;
        r[cat::L_LEG] = deg(-2.0) * s;
        for (j, &b) in cat::TAIL.iter().enumerate() {
            let amp = [3.0, 10.0, 16.0, 22.0][j];
            r[b] = deg(amp) * (wave - 0.9 * j as f32).sin();
        }
        poses.push(TimeKey::new(8 * k, rig.pose(bone_key, &r, sine)));
        key.children.push(KeyRef {
            node: 0,
            kind: KeyKind::Pose,
            slot: KeySlot::At(k as usize),
        });
    }
    let root = &mut scene.project.objects[0].timeline;
    root.bones.keys.push(key);
    root.poses.keys = poses;
    // The whole cat bobs twice per wave.
    root.moves.keys = (0..12)
        .map(|k| {
            TimeKey::new(
                4 * k,
                MoveKey {
                    easing: sine,
                    pos: v(0.0, if k % 2 == 0 { 0.0 } else { -3.0 }),
                    ..MoveKey::default()
                },
            )
        })
        .collect();
    scene.project
}

/// `anims/anie/mesh_ffd.anie`: grid meshes bent by FFD keys (256 × 192 canvas, 48 frames at
/// 24 fps, looping). As in `ffd.anie`, the FFD keys of each layer are children of its default
/// Image key and hold absolute positions for every vertex of its grid mesh.
///
/// * `flag`: a checkered flag on a pole, waving: 8 FFD keys (every 6 frames, Linear), each a
///   phase of a wave that grows from the pole outwards.
/// * `slime`: a jelly blob: rest (Quad In) → squashed (Back Out) → stretched (Sine InOut) →
///   leaning (Elastic Out) → breathing (Custom bezier) → back to rest through the loop.
/// * `pole` and `sky`: undeformed layers.
pub fn mesh_ffd() -> AnieFile {
    let v = Vec2::new;
    let mut scene = Scene::new([256, 192], 47, 24, true, "mesh_ffd.psd", "mesh_ffd");

    // Slime: a dome with a highlight and eyes, 80 × 64, standing on y = 170.
    let mut slime = Painter::at(150, 104, 92, 72);
    let dome = |p: Vec2| sdf::ellipse(p, v(196.0, 150.0), v(38.0, 42.0)).max(p.y - 170.0);
    slime.fill_solid(|p| dome(p) - 1.2, rgb(30, 110, 50));
    slime.fill(dome, |p| {
        mix(
            rgba(140, 230, 120, 235),
            rgba(60, 170, 80, 235),
            ((p.y - 110.0) / 60.0).clamp(0.0, 1.0),
        )
    });
    slime.fill_solid(
        |p| sdf::ellipse(p, v(180.0, 126.0), v(9.0, 6.0)),
        rgba(255, 255, 255, 170),
    );
    for x in [186.0, 206.0] {
        slime.fill_solid(
            |p| sdf::ellipse(p, v(x, 146.0), v(4.0, 6.0)),
            rgb(20, 40, 25),
        );
    }
    let slime_layer = scene.layer("slime", slime, BlendMode::Normal, 8);

    // Flag: a 112 × 72 checker with a border; its left edge rides on the pole.
    let mut flag = Painter::at(30, 24, 112, 72);
    flag.fill(
        |p| sdf::rounded_box(p, v(86.0, 60.0), v(55.0, 35.0), 2.0),
        |p| {
            let (i, j) = (((p.x - 31.0) / 14.0) as i32, ((p.y - 25.0) / 14.0) as i32);
            if (i + j) % 2 == 0 {
                rgb(250, 250, 245)
            } else {
                rgb(30, 30, 40)
            }
        },
    );
    flag.stroke(
        |p| sdf::rounded_box(p, v(86.0, 60.0), v(55.0, 35.0), 2.0),
        2.0,
        rgb(200, 40, 40),
    );
    let flag_layer = scene.layer("flag", flag, BlendMode::Normal, 8);

    let mut pole = Painter::at(20, 14, 14, 162);
    pole.fill(
        |p| sdf::rounded_box(p, v(27.0, 96.0), v(3.0, 78.0), 2.0),
        |p| mix(rgb(200, 200, 210), rgb(110, 110, 125), (p.x - 24.0) / 6.0),
    );
    pole.fill_solid(|p| sdf::circle(p, v(27.0, 20.0), 5.0), rgb(230, 190, 60));
    scene.layer("pole", pole, BlendMode::Normal, DEFAULT_CELL);

    let mut sky = Painter::at(0, 0, 256, 192);
    sky.fill(
        |_| -1.0,
        |p| {
            if p.y > 170.0 {
                mix(rgb(110, 170, 80), rgb(80, 130, 60), (p.y - 170.0) / 22.0)
            } else {
                mix(rgb(120, 180, 240), rgb(215, 235, 250), p.y / 170.0)
            }
        },
    );
    scene.layer("sky", sky, BlendMode::Normal, 256);

    // Flag FFD: y += A·(x/w)^1.2·sin(2π x/λ − φ), x pulled in a little as the cloth folds.
    let flag_rest: Vec<Vec3> = scene.mesh(flag_layer).positions.clone();
    let flag_keys: Vec<TimeKey<FfdKey>> = (0..8)
        .map(|k| {
            let phase = TAU * k as f32 / 8.0;
            let positions = flag_rest
                .iter()
                .map(|p| {
                    let t = (p.x / 112.0).clamp(0.0, 1.1);
                    let a = TAU * p.x / 96.0 - phase;
                    Vec3::new(
                        p.x - 3.0 * t * (1.0 + a.cos()),
                        p.y + 9.0 * t.powf(1.2) * a.sin(),
                        0.0,
                    )
                })
                .collect();
            TimeKey::new(
                6 * k,
                FfdKey {
                    easing: Easing::default(),
                    positions,
                },
            )
        })
        .collect();

    // Slime FFD shapes, about the bottom centre (46, 66) of its image.
    let slime_rest: Vec<Vec3> = scene.mesh(slime_layer).positions.clone();
    let base = v(46.0, 66.0);
    let shape = |f: &dyn Fn(Vec2) -> Vec2| -> Vec<Vec3> {
        slime_rest
            .iter()
            .map(|p| (base + f(p.truncate() - base)).extend(0.0))
            .collect()
    };
    let height = 62.0;
    let squash = shape(&|d| v(d.x * 1.22, d.y * 0.72));
    let stretch = shape(&|d| v(d.x * 0.86, d.y * 1.22));
    let lean = shape(&|d| {
        let up = (-d.y / height).clamp(0.0, 1.2);
        v(d.x + 14.0 * up * up, d.y)
    });
    let breathe = shape(&|d| v(d.x * 1.05, d.y * 0.95));
    let ease = |kind, range| easing(kind, range);
    let custom = Easing {
        kind: EasingKind::Custom,
        bezier: [0.3, 0.0, 0.2, 1.0],
        ..Easing::default()
    };
    let slime_keys = vec![
        (
            0,
            slime_rest.clone(),
            ease(EasingKind::Quad, EasingRange::In),
        ),
        (8, squash, ease(EasingKind::Back, EasingRange::Out)),
        (16, stretch, ease(EasingKind::Sine, EasingRange::InOut)),
        (24, lean, ease(EasingKind::Elastic, EasingRange::Out)),
        (38, breathe, custom),
    ]
    .into_iter()
    .map(|(frame, positions, easing)| TimeKey::new(frame, FfdKey { easing, positions }))
    .collect();

    for (node, keys) in [(flag_layer, flag_keys), (slime_layer, slime_keys)] {
        let tl = &mut scene.project.objects[node].timeline;
        tl.ffds.keys = keys;
        let children = (0..tl.ffds.keys.len())
            .map(|i| KeyRef {
                node,
                kind: KeyKind::Ffd,
                slot: KeySlot::At(i),
            })
            .collect();
        tl.images.default.as_mut().expect("a layer").children = children;
    }
    scene.project
}

/// `anims/anie/blend_sheet.anie`: blend modes, clipping, opacity and HSV (320 × 352 canvas,
/// 48 frames at 24 fps, looping).
///
/// * `blend: xxxx` (20 layers, one per mode, named by the file's 4-byte ids): a disc in 8
///   steps from deep violet to pale yellow, drawn in that mode over `backdrop`, bricks whose
///   hue turns across the sheet and whose value rises down each row of discs.
/// * `clip: window` clips `clip: bubble` and `clip: stripes` (the two clipped layers just
///   above it); the window's Opa keys fade it to 35 % and back, the stripes slide on Linear
///   Move keys, the bubble circles over them on Catmull-Rom Move keys.
/// * `hsv: hue` turns its hue wheel once around (HSV keys, relative hue), `hsv: saturation`
///   drains its colour and brightens (saturation 100 → 0, value 100 → 130) and back.
/// * `opacity: fade` fades out and in on Opa keys.
pub fn blend_sheet() -> AnieFile {
    let v = Vec2::new;
    let mut scene = Scene::new([320, 352], 47, 24, true, "blend_sheet.psd", "blend_sheet");
    let tile = 64.0;

    // Clipping: stripes and a bubble seen through a star-shaped window.
    let window_c = v(60.0, 304.0);
    let mut bubble = Painter::at(40, 284, 40, 40);
    bubble.fill(
        |p| sdf::circle(p, v(60.0, 304.0), 18.0),
        |p| {
            mix(
                rgba(255, 255, 255, 240),
                rgba(40, 90, 220, 240),
                ((p - v(54.0, 298.0)).length() / 24.0).min(1.0),
            )
        },
    );
    let bubble_layer = scene.layer("clip: bubble", bubble, BlendMode::Normal, DEFAULT_CELL);
    let mut stripes = Painter::at(4, 262, 112, 84);
    stripes.fill(
        |_| -1.0,
        |p| {
            let band = ((p.x + p.y) / 12.0).floor() as i32;
            hsv(band as f32 / 7.0, 0.75, 0.95)
        },
    );
    let stripes_layer = scene.layer("clip: stripes", stripes, BlendMode::Normal, DEFAULT_CELL);
    let star: Vec<Vec2> = (0..10)
        .map(|k| {
            let r = if k % 2 == 0 { 42.0 } else { 20.0 };
            window_c + Vec2::from_angle(-PI / 2.0 + k as f32 * PI / 5.0) * r
        })
        .collect();
    let mut window = Painter::at(16, 260, 88, 88);
    window.fill_solid(|p| sdf::polygon(p, &star) + 1.0, rgb(255, 255, 255));
    let window_layer = scene.layer("clip: window", window, BlendMode::Normal, DEFAULT_CELL);

    // HSV: a hue wheel and a rainbow bar.
    let wheel_c = v(166.0, 304.0);
    let mut wheel = Painter::at(126, 264, 80, 80);
    wheel.fill(
        |p| sdf::circle(p, wheel_c, 36.0),
        |p| {
            let d = p - wheel_c;
            let s = (d.length() / 36.0).min(1.0);
            hsv(d.y.atan2(d.x) / TAU, s, 1.0)
        },
    );
    let hue_layer = scene.layer("hsv: hue", wheel, BlendMode::Normal, DEFAULT_CELL);
    let mut bar = Painter::at(214, 264, 52, 80);
    bar.fill(
        |p| sdf::rounded_box(p, v(240.0, 304.0), v(24.0, 38.0), 6.0),
        |p| hsv((p.y - 266.0) / 76.0, 0.8, 0.55 + 0.4 * (p.x - 216.0) / 48.0),
    );
    let sat_layer = scene.layer("hsv: saturation", bar, BlendMode::Normal, DEFAULT_CELL);

    let mut fade = Painter::at(272, 282, 44, 44);
    fade.fill(
        |p| sdf::circle(p, v(294.0, 304.0), 20.0),
        |p| mix(rgb(255, 90, 60), rgb(250, 220, 80), (p.y - 284.0) / 40.0),
    );
    let fade_layer = scene.layer("opacity: fade", fade, BlendMode::Normal, DEFAULT_CELL);

    // One disc per blend mode, five to a row: an 8-step wedge from deep violet to pale yellow.
    let low: Rgba = rgb(50, 20, 110);
    let high: Rgba = rgb(255, 235, 140);
    for (i, mode) in BlendMode::ALL.into_iter().enumerate() {
        let (col, row) = ((i % 5) as f32, (i / 5) as f32);
        let c = v(col * tile + 32.0, row * tile + 32.0);
        let mut disc = Painter::at(col as i32 * 64 + 6, row as i32 * 64 + 6, 52, 52);
        disc.fill(
            |p| sdf::circle(p, c, 24.0),
            |p| {
                let step = ((p.x - c.x + 24.0) / 6.0).floor().clamp(0.0, 7.0);
                mix(low, high, step / 7.0)
            },
        );
        let id = mode.id();
        let name = format!("blend: {}", String::from_utf8_lossy(&id).trim_end());
        scene.layer(&name, disc, mode, DEFAULT_CELL);
    }

    // The backdrop: 16 × 8 bricks whose hue turns across the sheet and whose value rises down
    // each row of discs.
    let mut backdrop = Painter::at(0, 0, 320, 352);
    backdrop.fill(
        |_| -1.0,
        |p| {
            let size = v(16.0, 8.0);
            let cell = (p / size).floor() * size + size / 2.0;
            let in_tile = if cell.y < 256.0 {
                (cell.y % tile) / tile
            } else {
                0.5
            };
            let checker = if ((cell.x / size.x) as i32 + (cell.y / size.y) as i32) % 2 == 0 {
                0.04
            } else {
                0.0
            };
            hsv(cell.x / 320.0 * 0.85, 0.55, 0.18 + 0.74 * in_tile + checker)
        },
    );
    scene.layer("backdrop", backdrop, BlendMode::Normal, 352);

    let objects = &mut scene.project.objects;
    objects[stripes_layer].clipped = true;
    objects[bubble_layer].clipped = true;

    let linear = Easing::default();
    let sine = easing(EasingKind::Sine, EasingRange::InOut);
    let centre = |node: usize, objects: &Vec<rigplay::formats::anie::ObjectNode>| {
        objects[node]
            .timeline
            .moves
            .default
            .as_ref()
            .expect("a layer")
            .value
            .pos
    };
    let stripes_c = centre(stripes_layer, objects);
    objects[stripes_layer].timeline.moves.keys = vec![
        TimeKey::new(
            0,
            MoveKey {
                easing: linear,
                pos: stripes_c + v(-12.0, 0.0),
                ..MoveKey::default()
            },
        ),
        TimeKey::new(
            24,
            MoveKey {
                easing: linear,
                pos: stripes_c + v(12.0, 0.0),
                ..MoveKey::default()
            },
        ),
    ];
    let bubble_c = centre(bubble_layer, objects);
    objects[bubble_layer].timeline.moves.keys = (0..3)
        .map(|k| {
            let a = -PI / 2.0 + TAU * k as f32 / 3.0;
            TimeKey::new(
                16 * k,
                MoveKey {
                    easing: linear,
                    spline: Spline::CatmullRom,
                    pos: bubble_c + Vec2::from_angle(a) * 18.0,
                    ..MoveKey::default()
                },
            )
        })
        .collect();
    objects[window_layer].timeline.opacities.keys = vec![
        TimeKey::new(
            0,
            OpaKey {
                easing: sine,
                opacity: 1.0,
            },
        ),
        TimeKey::new(
            24,
            OpaKey {
                easing: sine,
                opacity: 0.35,
            },
        ),
    ];
    objects[fade_layer].timeline.opacities.keys = vec![
        TimeKey::new(
            0,
            OpaKey {
                easing: sine,
                opacity: 1.0,
            },
        ),
        TimeKey::new(
            24,
            OpaKey {
                easing: sine,
                opacity: 0.1,
            },
        ),
    ];
    let hsv_key = |frame, easing, hue, sat, val| {
        TimeKey::new(
            frame,
            HsvKey {
                easing,
                hue,
                sat,
                val,
                absolute: false,
            },
        )
    };
    objects[hue_layer].timeline.hsvs.keys = vec![
        hsv_key(0, linear, 0, 100, 100),
        hsv_key(47, linear, 352, 100, 100),
    ];
    objects[sat_layer].timeline.hsvs.keys =
        vec![hsv_key(0, sine, 0, 100, 100), hsv_key(24, sine, 0, 0, 130)];
    scene.project
}
