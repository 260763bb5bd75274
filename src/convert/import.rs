//! Animation made elsewhere into the games: a humanoid clip (a motion-capture `.bvh`, a glTF,
//! VRM or VRM animation, …)
//! retargeted onto a GTA ped and written as an IFP clip.
//!
//! * The source skeleton is the file's rest pose (a BVH's `OFFSET`s, unrotated:
//!   [`bvh_source`]; a glTF's nodes: [`gltf_source`]); the target is the game's ped
//!   ([`GtaGame::skeleton`]).
//! * Bones are paired by their humanoid role, detected from the names on both sides
//!   ([`BoneMap::detect`]: Mixamo with any prefix, VRM, Unreal, Blender's and mocap names, Biped,
//!   GTA), corrected by a user's map where given ([`user_pairs`]), and the clip is retargeted with rest-pose compensation, the same maths GTA clips take
//!   onto glTF characters ([`Retargeter::retarget_clip`]), now from the humanoid onto GTA.
//! * The hips' translation is scaled by the ratio of the hip heights and written as the game
//!   reads it: on the ped's root bone (bone 0, the one the games extract root motion from,
//!   §3.5 of `docs/formats/ifp.md`; III's root is its waist, the hips themselves), as the
//!   local position itself in San Andreas and Vice City and as the offset from the rest
//!   position in GTA III, which adds its translation keys to the rest (§3.4).
//! * Keys are written at the game's clip rate, 60 a second for San Andreas (ANP3's time tick),
//!   30 for III and Vice City, the last at the clip's end; ANP3 stores them as int16 where
//!   every value fits and as floats otherwise ([`IfpFile::converted`]).
//! * Or as a DelDX `.dan` ([`gta_dan`]): every bone of the ped a DAN bone, keyed with its
//!   model-space transform, which is what DAN files hold.

use crate::animation::retarget::{
    BoneMap, HumanoidBone, RestPose, RetargetSource, Retargeter, user_pairs,
};
use crate::animation::{BoneTrack, Clip, ClipBuilder, aligned_to};
use crate::coords::{GTA_TO_GLTF, gta_quat_to_bevy, gta_vec_to_bevy};
use crate::formats::bvh::BvhFile;
use crate::formats::dan::DanWriteError;
use crate::formats::gltf::{GltfAnimation, GltfScene};
use crate::formats::ifp::{AnimLayout, IfpClip, IfpFile, IfpKey, IfpSequence, IfpVersion};
use crate::skeleton::GtaGame;
use glam::{Affine3A, Quat, Vec3};

/// A BVH file's skeleton as a retargeting source: its joints at their `OFFSET`s, unrotated;
/// track `j` of [`BvhFile::to_clip`] drives joint `j`. BVH files are +Y up and face +Z, glTF's
/// axes.
pub fn bvh_source(bvh: &BvhFile) -> RetargetSource {
    RetargetSource {
        names: bvh.joints.iter().map(|j| j.name.clone()).collect(),
        rest: RestPose {
            parents: bvh.joints.iter().map(|j| j.parent).collect(),
            local: bvh.rest(),
        },
        tracks: (0..bvh.joints.len()).map(Some).collect(),
        to_gltf: Quat::IDENTITY,
    }
}

/// A glTF animation and the file's nodes as a retargeting source, and the clip as the source
/// plays it.
///
/// * The source skeleton is every node at its rest transform, a skin's joints at the pose the
///   skin was bound in ([`GltfScene::bind_pose`]); scales are folded into the
///   offsets below them (an `Armature` node scaled 0.01, as Blender exports centimetres), and
///   the animation's translation keys are scaled in the same way, so that positions agree.
/// * Nodes a VRM or VRM-animation extension names as humanoid bones take that name
///   (`hips`, `leftUpperLeg`), so that they pair by the file's own word, whatever the nodes are
///   called. glTF is +Y up and characters face +Z.
pub fn gltf_source(
    scene: &GltfScene,
    animation: &GltfAnimation,
) -> Result<(RetargetSource, Clip), ImportError> {
    let parents: Vec<Option<usize>> = scene.nodes.iter().map(|n| n.parent).collect();
    let trs = scene.bind_pose();
    let (rest, scales) =
        RestPose::from_trs(parents.clone(), &trs).map_err(|e| ImportError::Rest(e.to_string()))?;
    let mut names: Vec<String> = scene.nodes.iter().map(|n| n.name.clone()).collect();
    for (bone, node) in &scene.humanoid {
        names[*node] = bone.clone();
    }
    // The translation keys, scaled by the node's ancestors' scales.
    let clip = &animation.clip;
    let mut b = ClipBuilder::new(clip.name.clone());
    b.extend_duration(clip.duration());
    for (track, &node) in clip.tracks().iter().zip(&animation.nodes) {
        let inherited = parents[node].map_or(Vec3::ONE, |p| scales[p]);
        let mut out = BoneTrack {
            bone: track.bone.clone(),
            rotation: None,
            translation: None,
            scale: None,
        };
        if let Some(c) = track.rotation {
            out.rotation = b
                .times(clip.times(c))
                .and_then(|t| b.rotations(t, clip.rotation_values(c)))
                .ok();
        }
        if let Some(c) = track.translation {
            let values: Vec<Vec3> = clip
                .vector_values(c)
                .iter()
                .map(|v| *v * inherited)
                .collect();
            out.translation = b
                .times(clip.times(c))
                .and_then(|t| b.translations(t, &values))
                .ok();
        }
        b.track(out);
    }
    Ok((
        RetargetSource {
            names,
            rest,
            tracks: animation.nodes.iter().map(|&n| Some(n)).collect(),
            to_gltf: Quat::IDENTITY,
        },
        b.build(),
    ))
}

/// What an import did.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    /// (source bone, GTA bone) for every pair retargeted.
    pub pairs: Vec<(String, String)>,
    /// The GTA ped's humanoid bones the source has no bone for (they keep their rest pose).
    pub unmatched: Vec<HumanoidBone>,
    /// What the hips' translation was scaled by (the ped's hip height over the source's).
    pub hips_scale: f32,
    /// Keys written per bone, and their rate (keys per second).
    pub keys_per_bone: usize,
    /// Keys per second.
    pub rate: f32,
    /// The entries of the user's map that named no bone (skipped).
    pub map_problems: Vec<String>,
}

/// Why a clip could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The source's bone names give no hips, so nothing says where the body is.
    #[error("no bone of the source is recognised as the hips (names: {names})")]
    NoHips {
        /// The first source names.
        names: String,
    },
    /// Too few bones were paired for a body to follow.
    #[error(
        "only {paired} bones of the source pair with the ped's ({names}): not a humanoid this tool knows the names of"
    )]
    NotHumanoid {
        /// How many paired.
        paired: usize,
        /// The first source names.
        names: String,
    },
    /// The source's or the ped's rest pose is not a tree.
    #[error("the rest poses cannot be retargeted: {0}")]
    Rest(String),
}

/// The IFP version each game's packages are written in.
pub fn ifp_version(game: GtaGame) -> IfpVersion {
    match game {
        GtaGame::Sa => IfpVersion::Anp3,
        GtaGame::Vc | GtaGame::Iii => IfpVersion::Anpk,
    }
}

/// `clip` (played on `source`'s skeleton) retargeted onto `game`'s ped, as an IFP clip named
/// `name`. `map` corrects the pairs detected from the names: `(source bone, GTA bone)`, an
/// empty GTA name unpairing the source bone ([`user_pairs`]).
pub fn clip_to_gta(
    source: &RetargetSource,
    clip: &Clip,
    name: &str,
    game: GtaGame,
    map: &[(String, String)],
) -> Result<(IfpClip, ImportReport), ImportError> {
    clip_to_ped(source, clip, name, game, &game.skeleton(), map)
}

/// [`clip_to_gta`] onto `skeleton`, a ped of `game` (a DFF model's bones:
/// [`crate::model::ModelClump::bone_skeleton`]) instead of the game's built-in one: its rest
/// pose is what the retargeting compensates for and its hip height what the hips' movement is
/// scaled to; the sequences take its bones' names and ids.
pub fn clip_to_ped(
    source: &RetargetSource,
    clip: &Clip,
    name: &str,
    game: GtaGame,
    skeleton: &crate::skeleton::Skeleton,
    map: &[(String, String)],
) -> Result<(IfpClip, ImportReport), ImportError> {
    let first_names = || {
        let mut s: Vec<&str> = source.names.iter().take(6).map(String::as_str).collect();
        if source.names.len() > 6 {
            s.push("…");
        }
        s.join(", ")
    };
    let target_names: Vec<&str> = skeleton.bones.iter().map(|b| b.name.as_str()).collect();
    let (_, target_map) = BoneMap::detect(&target_names);
    let (_, source_map) = source.bone_map();
    let source_names: Vec<&str> = source.names.iter().map(String::as_str).collect();
    let (pairs, problems) = user_pairs(
        source_map.pairs(&target_map),
        &source_names,
        &target_names,
        map,
    );
    let target_hips = target_map
        .get(HumanoidBone::Hips)
        .ok_or_else(|| ImportError::Rest("the ped has no hips".into()))?;
    // The source's hips: the bone paired with the ped's (a user's map may name it).
    let source_hips = pairs
        .iter()
        .find(|p| p.1 == target_hips)
        .map(|p| p.0)
        .ok_or_else(|| ImportError::NoHips {
            names: first_names(),
        })?;
    if pairs.len() < 6 {
        return Err(ImportError::NotHumanoid {
            paired: pairs.len(),
            names: first_names(),
        });
    }
    let target_rest = RestPose::from(skeleton);
    // The source's axes into GTA's: through glTF's.
    let basis = (GTA_TO_GLTF.conjugate() * source.to_gltf).normalize();
    let retargeter = Retargeter::new(&source.rest, &target_rest, &pairs, basis)
        .map_err(|e| ImportError::Rest(e.to_string()))?
        .with_hips(source_hips, target_hips, Vec3::Z);
    let world = target_rest
        .world()
        .map_err(|e| ImportError::Rest(e.to_string()))?;
    let parent_world = skeleton.bones[target_hips]
        .parent
        .map_or(Affine3A::IDENTITY, |p| {
            Affine3A::from_rotation_translation(world[p].1, world[p].0)
        });
    let parent_inverse = parent_world.inverse();
    let baked = retargeter.retarget_clip(
        clip,
        &source.tracks,
        |p| parent_inverse.transform_point3(p),
        1e-4,
    );
    // The game's clip rate; the last key at the clip's end.
    let rate = match game {
        GtaGame::Sa => 60.0,
        GtaGame::Vc | GtaGame::Iii => 30.0,
    };
    let duration = clip.duration().max(0.0);
    let steps = (duration * rate).ceil().max(0.0) as usize;
    let times: Vec<f32> = (0..=steps)
        .map(|k| (k as f32 / rate).min(duration))
        .collect();
    // Where the hips' movement goes: the root bone carries it (the games extract root motion
    // from bone 0 alone, §3.5, and translation keys on other bones must stay local offsets).
    // On a ped whose hips are its root (III's waist), the hips' own keys carry it.
    let root = skeleton
        .bones
        .iter()
        .position(|b| b.parent.is_none())
        .unwrap_or(target_hips);
    let hips_track = baked.targets.iter().position(|t| *t == Some(target_hips));
    let hips_local = |t: f32| {
        hips_track
            .and_then(|k| baked.clip.sample_track(k, t).translation)
            .unwrap_or(skeleton.bones[target_hips].rest.translation)
    };
    let hips_rest_world =
        parent_world.transform_point3(skeleton.bones[target_hips].rest.translation);
    // III adds translation keys to the rest position (§3.4); the others read them as they are.
    let written = |bone: usize, translation: Vec3| match game {
        GtaGame::Iii => translation - skeleton.bones[bone].rest.translation,
        _ => translation,
    };
    let sequence = |bone: usize, keys: Vec<IfpKey>, moves: bool| {
        let b = &skeleton.bones[bone];
        let mut s = match game {
            // III binds by name: 48-byte records without a bone tag.
            GtaGame::Iii => {
                let mut s = IfpSequence::new(b.name.clone(), -1, keys);
                s.anim.layout = AnimLayout::Links([0, 0]);
                s
            }
            _ => IfpSequence::new(b.name.clone(), b.id.unwrap_or(-1), keys),
        };
        s.has_translation = moves;
        s
    };
    let mut sequences = Vec::new();
    if root != target_hips {
        let rest = skeleton.bones[root].rest;
        let keys = times
            .iter()
            .map(|&t| {
                let moved = parent_world.transform_point3(hips_local(t)) - hips_rest_world;
                IfpKey {
                    time: t,
                    rotation: rest.rotation.normalize().to_array(),
                    translation: written(root, rest.translation + moved).to_array(),
                    scale: [1.0; 3],
                }
            })
            .collect();
        sequences.push(sequence(root, keys, true));
    }
    for (track, target) in baked.targets.iter().enumerate() {
        let Some(b) = *target else { continue };
        let bone = &skeleton.bones[b];
        let moves = b == target_hips && b == root;
        let mut previous: Option<Quat> = None;
        let keys: Vec<IfpKey> = times
            .iter()
            .map(|&t| {
                let s = baked.clip.sample_track(track, t);
                let mut q = s.rotation.unwrap_or(bone.rest.rotation).normalize();
                if let Some(p) = previous {
                    q = aligned_to(q, p);
                }
                previous = Some(q);
                let translation = if moves {
                    written(b, s.translation.unwrap_or(bone.rest.translation)).to_array()
                } else {
                    [0.0; 3]
                };
                IfpKey {
                    time: t,
                    rotation: q.to_array(),
                    translation,
                    scale: [1.0; 3],
                }
            })
            .collect();
        sequences.push(sequence(b, keys, moves));
    }
    let report = ImportReport {
        pairs: retargeter
            .pairs()
            .map(|(s, t)| (source.names[s].clone(), skeleton.bones[t].name.clone()))
            .collect(),
        unmatched: target_map
            .iter()
            .filter(|(_, t)| !pairs.iter().any(|p| p.1 == *t))
            .map(|(h, _)| h)
            .collect(),
        map_problems: problems.iter().map(|p| p.to_string()).collect(),
        hips_scale: retargeter.hips_scale(),
        keys_per_bone: times.len(),
        rate,
    };
    Ok((
        IfpClip {
            name: name.to_owned(),
            sequences,
            flags: 0,
            info_unknown: 0,
        },
        report,
    ))
}

/// A package of `clips` for `game`, in its IFP version (ANP3 clips compressed where every
/// value fits an int16), with what the conversion noted.
pub fn gta_package(game: GtaGame, name: &str, clips: Vec<IfpClip>) -> (IfpFile, Vec<String>) {
    let version = ifp_version(game);
    IfpFile::new(version, name, clips).converted(version)
}

/// A GTA clip (as [`clip_to_gta`] makes it) as a DelDX `.dan` file: every bone of `game`'s ped
/// one DAN bone, in the skeleton's order, keyed at every time one of the clip's channels is
/// with its **model-space** transform (what the exporter stores: the bone's whole transform in
/// the model, `docs/formats/dan.md`), in Bevy's axes (a rotation `q` as `B·q·B⁻¹`, so that
/// the bone's own axes are Bevy's too, as in the glTF export) with the ped standing on the ground as
/// rigplay's skeletons stand ([`crate::skeleton::Skeleton::lowest_rest_height`]), positions in
/// metres (a DAN clip option `scale` of 1 reads them back as such), times rounded to whole
/// milliseconds as the exporter writes them. Bones the clip does not key rest, moved by their
/// parents. With the bones' names and parents, in the file's bone order, for a `.dan.meta`.
pub fn gta_dan(clip: &IfpClip, game: GtaGame) -> Result<GtaDan, DanWriteError> {
    let skeleton = game.skeleton();
    let (played, _) = skeleton.clip_as_played(game, &clip.to_clip());
    let targets = skeleton.bind(&played).targets;
    let mut times: Vec<f32> = played
        .tracks()
        .iter()
        .flat_map(|t| [t.rotation, t.translation, t.scale])
        .flatten()
        .flat_map(|c| played.times(c).iter().copied())
        .filter(|t| t.is_finite())
        .collect();
    times.sort_by(f32::total_cmp);
    times.dedup();
    let lift = Vec3::Y * -skeleton.lowest_rest_height();
    let n = skeleton.bones.len();
    let mut rotations = vec![Vec::with_capacity(times.len()); n];
    let mut positions = vec![Vec::with_capacity(times.len()); n];
    for &t in &times {
        let mut local = skeleton.rest_pose();
        for (track, target) in targets.iter().enumerate() {
            let Some(b) = *target else { continue };
            let s = played.sample_track(track, t);
            if let Some(r) = s.rotation {
                local[b].rotation = r;
            }
            if let Some(p) = s.translation {
                local[b].translation = p;
            }
        }
        for (b, (q, p)) in skeleton.model_space(&local).into_iter().enumerate() {
            rotations[b].push(gta_quat_to_bevy(q));
            positions[b].push(gta_vec_to_bevy(p) + lift);
        }
    }
    let mut builder = ClipBuilder::new(clip.name.clone());
    let shared = builder
        .times(&times)
        .map_err(|_| DanWriteError::DurationOutOfRange {
            seconds: played.duration(),
        })?;
    for (b, bone) in skeleton.bones.iter().enumerate() {
        let rotation = builder.rotations(shared, &rotations[b]).ok();
        let translation = builder.translations(shared, &positions[b]).ok();
        builder.track(BoneTrack {
            bone: crate::animation::BoneRef {
                name: bone.name.clone(),
                id: None,
            },
            rotation,
            translation,
            scale: None,
        });
    }
    builder.extend_duration(played.duration());
    let dan = crate::formats::dan::DanFile::from_clip(
        &builder.build(),
        &crate::formats::dan::DanClipOptions::default(),
    )?;
    Ok(GtaDan {
        file: dan,
        names: skeleton.bones.iter().map(|b| b.name.clone()).collect(),
        parents: skeleton.bones.iter().map(|b| b.parent).collect(),
    })
}

/// A GTA clip as a `.dan` ([`gta_dan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GtaDan {
    /// The file: one bone per bone of the ped, in the skeleton's order.
    pub file: crate::formats::dan::DanFile,
    /// The bones' names, in the file's order (DAN files name none).
    pub names: Vec<String>,
    /// The bones' parents (DAN files have no hierarchy; rigplay's DAN loader draws links).
    pub parents: Vec<Option<usize>>,
}

impl GtaDan {
    /// The `.dan.meta` text that has rigplay's DAN loader name the bones, link them to their
    /// parents, read positions as metres and loop the clip.
    pub fn meta(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("{n:?}")).collect();
        let links: Vec<String> = self
            .parents
            .iter()
            .map(|p| p.map_or_else(|| "None".to_owned(), |p| format!("Some({p})")))
            .collect();
        format!(
            "(\n    meta_format_version: \"1.0\",\n    asset: Load(\n        loader: \"rigplay::plugin::DanLoader\",\n        settings: (\n            scale: 1.0,\n            bone_names: [{}],\n            looping: true,\n            bone_links: [{}],\n        ),\n    ),\n)\n",
            names.join(", "),
            links.join(", ")
        )
    }
}
