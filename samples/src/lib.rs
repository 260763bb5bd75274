//! The procedural motions that rigplay's bundled sample files are made from.
//!
//! No game data may ship, so `assets/` holds clips generated here and written by rigplay's own
//! writer (`cargo run -p rigplay-samples --bin make-samples` rewrites them; a test checks that
//! the committed files match). Motions are authored as rotations of bones about the ped's model-space axes
//! (X right, Y forward, Z up), applied on top of the skeleton's rest pose.

pub mod anie;
pub mod character;
pub mod iii_ped;
pub mod ped;
pub mod rw;

use glam::{Quat, Vec3};
use rigplay::formats::dan::{DanBone, DanFile, RotationKey, VectorKey};
use rigplay::formats::ifp::{IfpClip, IfpFile, IfpKey, IfpSequence, IfpVersion};
use rigplay::skeleton::Skeleton;
use std::f32::consts::TAU;

/// Keys per second of the sample clips (SA keys its clips at 30 fps).
pub const KEY_RATE: f32 = 30.0;

/// Forward speed of the sample walk, m/s (SA's `WALK_player` covers 1.87 m in 1.2 s).
pub const WALK_SPEED: f32 = 1.56;

/// A motion: for a phase in [0, 1), the extra rotation of each bone (by canonical SA bone id) about
/// a model-space axis, in radians, and the root's translation.
struct Motion {
    name: &'static str,
    duration: f32,
    /// Which canonical bones the clip animates.
    bones: &'static [i32],
    rotations: fn(f32, i32) -> Vec<(Vec3, f32)>,
    root: Option<fn(f32, f32) -> Vec3>,
}

fn walk_rotations(p: f32, id: i32) -> Vec<(Vec3, f32)> {
    let s = (p * TAU).sin();
    let c = (p * TAU).cos();
    let deg = f32::to_radians;
    match id {
        // Thighs swing forward/back about the right axis (+X), in opposition.
        41 => vec![(Vec3::X, deg(25.0) * s)],
        51 => vec![(Vec3::X, -deg(25.0) * s)],
        // Knees bend backwards, most while the leg swings forward.
        42 => vec![(
            Vec3::X,
            -deg(35.0) * (0.5 + 0.5 * (p * TAU + 0.9).sin()).powi(2),
        )],
        52 => vec![(
            Vec3::X,
            -deg(35.0) * (0.5 - 0.5 * (p * TAU + 0.9).sin()).powi(2),
        )],
        43 => vec![(Vec3::X, deg(10.0) * c)],
        53 => vec![(Vec3::X, -deg(10.0) * c)],
        // Arms swing against the legs; the upper arms hang down first.
        // (The rest pose holds the arms 45° below horizontal: about the forward axis +Y, a
        // positive turn lowers the right arm, a negative one the left.)
        32 => vec![(Vec3::Y, -deg(38.0)), (Vec3::X, -deg(18.0) * s)],
        22 => vec![(Vec3::Y, deg(38.0)), (Vec3::X, deg(18.0) * s)],
        33 | 23 => vec![(Vec3::X, deg(15.0))],
        // The torso counter-rotates a little about the up axis.
        2 => vec![(Vec3::Z, deg(4.0) * s)],
        5 => vec![(Vec3::Z, -deg(3.0) * s)],
        _ => vec![],
    }
}

fn walk_root(p: f32, duration: f32) -> Vec3 {
    // Forward along +Y at a steady speed, bobbing twice a cycle.
    Vec3::new(0.0, WALK_SPEED * p * duration, 0.02 * (2.0 * p * TAU).cos())
}

fn idle_rotations(p: f32, id: i32) -> Vec<(Vec3, f32)> {
    let s = (p * TAU).sin();
    let deg = f32::to_radians;
    match id {
        // Breathing in the chest, a slow look around, arms relaxed at the sides.
        3 => vec![(Vec3::X, deg(2.0) * s)],
        5 => vec![(Vec3::Z, deg(12.0) * (p * TAU * 0.5).sin().powi(3))],
        32 => vec![(Vec3::Y, -deg(40.0) - deg(2.0) * s)],
        22 => vec![(Vec3::Y, deg(40.0) + deg(2.0) * s)],
        33 | 23 => vec![(Vec3::X, deg(10.0))],
        _ => vec![],
    }
}

fn wave_rotations(p: f32, id: i32) -> Vec<(Vec3, f32)> {
    let deg = f32::to_radians;
    match id {
        // Right arm up and out, the forearm waving side to side about the forward axis.
        22 => vec![(Vec3::Y, -deg(80.0))],
        23 => vec![(Vec3::Y, -deg(30.0) - deg(25.0) * (p * TAU * 2.0).sin())],
        24 => vec![(Vec3::Y, -deg(10.0) * (p * TAU * 2.0).sin())],
        _ => vec![],
    }
}

const BODY: &[i32] = &[
    0, 1, 2, 3, 4, 5, 21, 22, 23, 24, 31, 32, 33, 34, 41, 42, 43, 44, 51, 52, 53, 54,
];
const RIGHT_ARM: &[i32] = &[21, 22, 23, 24];

const MOTIONS: [Motion; 3] = [
    Motion {
        name: "walk",
        duration: 1.2,
        bones: BODY,
        rotations: walk_rotations,
        root: Some(walk_root),
    },
    Motion {
        name: "idle",
        duration: 2.0,
        bones: BODY,
        rotations: idle_rotations,
        root: None,
    },
    Motion {
        name: "wave",
        duration: 1.0,
        bones: RIGHT_ARM,
        rotations: wave_rotations,
        root: None,
    },
];

/// Local rotation of bone `i` turned about model-space `axes` in its rest frame: the rest local
/// rotation times the same turn about the axis seen from the bone's rest model rotation.
fn turned(rest_local: Quat, rest_model: Quat, axes: &[(Vec3, f32)]) -> Quat {
    axes.iter().fold(rest_local, |q, &(axis, angle)| {
        let local_axis = rest_model.inverse() * axis;
        (q * Quat::from_axis_angle(local_axis.normalize(), angle)).normalize()
    })
}

fn motion_clip(skeleton: &Skeleton, m: &Motion) -> IfpClip {
    let rest = skeleton.rest_pose();
    let model = skeleton.model_space(&rest);
    let n = (m.duration * KEY_RATE).round() as usize + 1;
    let mut sequences = Vec::new();
    for (i, bone) in skeleton.bones.iter().enumerate() {
        let Some(canonical) = bone.canonical.filter(|c| m.bones.contains(c)) else {
            continue;
        };
        let is_root = bone.parent.is_none();
        let root_motion = m.root.filter(|_| is_root);
        let keys = (0..n)
            .map(|k| {
                let time = k as f32 / KEY_RATE;
                let phase = time / m.duration;
                let rotation = turned(
                    rest[i].rotation,
                    model[i].0,
                    &(m.rotations)(phase, canonical),
                );
                IfpKey {
                    time,
                    rotation: rotation.to_array(),
                    translation: root_motion.map_or([0.0; 3], |f| {
                        (rest[i].translation + f(phase, m.duration)).to_array()
                    }),
                    scale: [1.0; 3],
                }
            })
            .collect();
        let mut s = IfpSequence::new(bone.name.clone(), bone.id.unwrap_or(-1), keys);
        s.has_translation = root_motion.is_some();
        sequences.push(s);
    }
    IfpClip {
        name: m.name.to_owned(),
        sequences,
        flags: 0,
        info_unknown: 0,
    }
}

/// The three sample clips (walk with root motion, idle, wave on the right arm only) on a
/// skeleton, as a package of the given version.
pub fn sample_package(skeleton: &Skeleton, name: &str, version: IfpVersion) -> IfpFile {
    let clips = MOTIONS.iter().map(|m| motion_clip(skeleton, m)).collect();
    IfpFile::new(IfpVersion::Anpk, name, clips)
        .converted(version)
        .0
}

/// Bone names of the sample `.dan` (the file stores none; its `.meta` gives these).
pub const LAMP_BONES: [&str; 5] = ["Base", "Arm1", "Arm2", "Head", "Bulb"];

/// Length of each segment of the sample lamp, centimetres.
const LAMP_SEGMENT: f32 = 30.0;

/// The sample `.dan`: a desk lamp of five bones in a chain (a base that never moves, two arm
/// segments and a head that nod and turn, a bulb that pulses in scale) over 2 s, written the
/// way the DelDX exporter writes: 3ds Max scene units (centimetres, Z up), model-space keys
/// sampled at 30 fps with times in integer milliseconds (`frame × 33`), Max quaternions
/// conjugated and stored `(x, z, y, −w)`, vectors `(x, z, y)`, and the exporter's intended
/// reduction (a constant run keeps its first and last key).
pub fn sample_dan() -> DanFile {
    const FRAMES: usize = 60;
    // Per frame, each bone's local rotation about Max axes and its offset from its parent.
    let local = |bone: usize, p: f32| -> (Quat, Vec3) {
        let swing = (p * TAU).sin();
        match bone {
            0 => (Quat::IDENTITY, Vec3::ZERO),
            1 => (
                Quat::from_rotation_z(0.6 * swing) * Quat::from_rotation_x(0.35 + 0.25 * swing),
                Vec3::new(0.0, 0.0, 5.0),
            ),
            2 => (
                Quat::from_rotation_x(-0.9 + 0.4 * (p * TAU + 1.0).sin()),
                Vec3::new(0.0, 0.0, LAMP_SEGMENT),
            ),
            3 => (
                Quat::from_rotation_x(-0.6 + 0.3 * (p * TAU * 2.0).sin()),
                Vec3::new(0.0, 0.0, LAMP_SEGMENT),
            ),
            _ => (Quat::IDENTITY, Vec3::new(0.0, 8.0, -4.0)),
        }
    };
    let mut file = DanFile::new();
    file.set_comment("rigplay sample: desk lamp");
    file.end_ms = ((FRAMES - 1) * 33) as f32;
    let mut bones = vec![DanBone::default(); LAMP_BONES.len()];
    for frame in 0..FRAMES {
        let p = frame as f32 / (FRAMES - 1) as f32;
        let time_ms = (frame * 33) as i32;
        let (mut rotation, mut position) = (Quat::IDENTITY, Vec3::ZERO);
        for (b, bone) in bones.iter_mut().enumerate() {
            let (r, offset) = local(b, p);
            position += rotation * offset;
            rotation = (rotation * r).normalize();
            let scale = if b == 4 {
                1.0 + 0.25 * (p * TAU * 3.0).sin().max(0.0)
            } else {
                1.0
            };
            // MaxScript's quaternion is the conjugate of the rotation.
            let m = rotation.conjugate();
            bone.rotations.push(RotationKey {
                time_ms,
                value: [m.x, m.z, m.y, -m.w],
            });
            bone.positions.push(VectorKey {
                time_ms,
                value: [position.x, position.z, position.y],
            });
            bone.scales.push(VectorKey {
                time_ms,
                value: [scale, scale, scale],
            });
        }
    }
    file.bones = bones;
    // The exporter's intended reduction: a constant run keeps its first and last key.
    let runs = rigplay::animation::reduce::reduce_constant_runs(
        &file.to_clip("", &rigplay::formats::dan::DanClipOptions::default()),
    );
    file.with_keys(&runs.kept)
}

/// The bundled sample files: (path under `assets/`, bytes): two `.ifp` packages, a `.dan`, the
/// AnimeEffects projects of [`anie`], the glTF character, the RenderWare ped of [`ped`] and the
/// GTA III ped of parts of [`iii_ped`].
pub fn sample_files() -> Vec<(&'static str, Vec<u8>)> {
    let sa = sample_package(&Skeleton::gta_sa(), "sa_ped", IfpVersion::Anp3);
    let vc = sample_package(&Skeleton::gta_vc(), "vc_ped", IfpVersion::Anpk);
    [("anims/sa_ped.ifp", sa), ("anims/vc_ped.ifp", vc)]
        .into_iter()
        .map(|(path, p)| {
            (
                path,
                p.write()
                    .unwrap_or_else(|e| unreachable!("sample packages fit their versions: {e}")),
            )
        })
        .chain(std::iter::once((
            "anims/lamp.dan",
            sample_dan()
                .write()
                .unwrap_or_else(|e| unreachable!("the sample fits the format: {e}")),
        )))
        .chain(anie::sample_files())
        .chain(std::iter::once((
            "characters/humanoid.glb",
            character::humanoid_glb(),
        )))
        .chain([
            ("characters/ped.dff", ped::ped_dff()),
            ("characters/ped.txd", ped::ped_txd()),
            ("characters/iii_ped.dff", iii_ped::iii_ped_dff()),
        ])
        .collect()
}
