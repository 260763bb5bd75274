//! The crowd path: [`CrowdCharacter`]s, GTA skeletons whose bones are not entities. Each one's
//! pose is computed into [`CrowdPose`], a flat buffer of model-space transforms, by a system that
//! spreads the characters over every core; nothing per bone enters the ECS, so no transform
//! propagates. For crowds drawn by the user's own skinning, instancing or gizmos.

use super::{ClipInfo, LoadedClips, RigClip, RootMotion, bone_target_id, step_displacement};
use crate::animation::BoneRef;
use crate::animation::pose::{self, LocalPose, PoseClip, PoseCursor, PoseSkeleton};
use crate::coords::{GTA_TO_BEVY, gta_vec_to_bevy};
use crate::plugin::Playback;
use crate::skeleton::GtaGame;
use bevy::animation::AnimationTargetId;
use bevy::math::Affine3A;
use bevy::prelude::*;
use std::sync::Arc;

/// A GTA ped skeleton with no bone entities, playing `clip` on its [`Playback`]: its pose lands
/// in [`CrowdPose`] each frame, in the skeleton's bone order, in the character's own space
/// (Bevy's axes, the feet on the origin, as [`crate::plugin::GtaSkeleton`] places its bones).
/// With a [`RootMotion`], a clip whose root motion is extracted reports (and, applied, moves the
/// character by) its root's movement, as it does for a skeleton with bone entities.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/sa_ped.ifp#walk");
///     for i in 0..10_000 {
///         let at = Transform::from_xyz((i % 100) as f32, 0.0, (i / 100) as f32);
///         commands.spawn((CrowdCharacter::new(GtaGame::Sa, walk.clone()), at));
///     }
/// }
/// ```
#[derive(Component, Debug, Clone, Reflect)]
#[reflect(Component)]
#[cfg_attr(
    feature = "render",
    require(Playback, CrowdPose, Transform, Visibility)
)]
#[cfg_attr(not(feature = "render"), require(Playback, CrowdPose, Transform))]
pub struct CrowdCharacter {
    /// Whose ped skeleton.
    #[reflect(ignore)]
    pub game: GtaGame,
    /// The clip, as a rigplay loader loaded it.
    pub clip: Handle<RigClip>,
}

impl CrowdCharacter {
    /// `game`'s ped playing `clip`.
    pub fn new(game: GtaGame, clip: Handle<RigClip>) -> Self {
        Self { game, clip }
    }
}

/// The pose of a [`CrowdCharacter`]: per bone of its skeleton, the model-space transform (the
/// character's space, Bevy's axes); empty until its clip has loaded.
#[derive(Component, Debug, Clone, Default)]
pub struct CrowdPose {
    /// Model-space transform of each bone, in the skeleton's bone order.
    pub bones: Vec<Affine3A>,
    /// The skeleton's parents (for drawing bones as lines).
    pub parents: Arc<[Option<usize>]>,
}

impl CrowdPose {
    /// Each bone's joint position and its parent's, in the character's space: the skeleton's
    /// lines.
    pub fn segments(&self) -> impl Iterator<Item = (Vec3, Vec3)> + '_ {
        self.parents.iter().zip(&self.bones).filter_map(|(p, m)| {
            let p = (*p)?;
            Some((self.bones[p].translation.into(), m.translation.into()))
        })
    }
}

/// Far crowd characters posed at half rate: a [`CrowdCharacter`] farther than
/// `half_rate_beyond` (metres, world space) from every [`CrowdViewer`] is posed on every other
/// frame only, half of such characters on even frames and half on odd ones, so that each frame
/// does the same work. Its playhead, events and root motion still advance every frame; between
/// two posings its [`CrowdPose`] holds the last pose. A character is posed on the frame it binds
/// whatever its distance.
///
/// With no viewer, or `half_rate_beyond` at `None` (the default), every character is posed every
/// frame.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// fn setup(mut commands: Commands) {
///     commands.insert_resource(CrowdLod { half_rate_beyond: Some(40.0) });
///     commands.spawn((Camera3d::default(), CrowdViewer));
/// }
/// ```
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Reflect)]
#[reflect(Resource, Default)]
pub struct CrowdLod {
    /// The distance beyond which a character is posed at half rate (`None`: never).
    pub half_rate_beyond: Option<f32>,
}

/// What [`CrowdLod`] measures distances from (a camera, say; any entity with a
/// `GlobalTransform`). With several, the nearest counts.
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component, Default)]
pub struct CrowdViewer;

/// One game's skeleton as the crowd path uses it: the flat skeleton the pose pipeline runs on,
/// target ids, the basis.
struct CrowdSkeleton {
    pose: PoseSkeleton,
    targets: Vec<AnimationTargetId>,
    parents: Arc<[Option<usize>]>,
    /// GTA's Z-up to Bevy's Y-up, lifted so that the lowest joint at rest is on the origin:
    /// composed into the root joint's (bone 0, the only root of the built-in skeletons) local
    /// transform each frame.
    basis: Affine3A,
}

impl CrowdSkeleton {
    fn new(game: GtaGame) -> Self {
        let skeleton = game.skeleton();
        let lowest = skeleton.lowest_rest_height();
        let targets = skeleton
            .bones
            .iter()
            .map(|b| {
                bone_target_id(
                    &skeleton,
                    &BoneRef {
                        name: b.name.clone(),
                        id: b.id,
                    },
                )
            })
            .collect();
        let parents = skeleton.bones.iter().map(|b| b.parent).collect();
        Self {
            basis: Affine3A::from_rotation_translation(GTA_TO_BEVY, Vec3::Y * -lowest),
            pose: skeleton
                .pose_skeleton()
                .expect("the built-in skeletons list parents before children"),
            targets,
            parents,
        }
    }
}

/// The three games' crowd skeletons, built once, and every clip laid out for them (shared by
/// all the characters that play it).
#[derive(Resource)]
pub(crate) struct CrowdSkeletons {
    skeletons: [Arc<CrowdSkeleton>; 3],
    clips: std::collections::HashMap<(AssetId<RigClip>, GtaGame), (Arc<ClipInfo>, Arc<PoseClip>)>,
}

impl Default for CrowdSkeletons {
    fn default() -> Self {
        Self {
            skeletons: [GtaGame::Iii, GtaGame::Vc, GtaGame::Sa]
                .map(|g| Arc::new(CrowdSkeleton::new(g))),
            clips: Default::default(),
        }
    }
}

impl CrowdSkeletons {
    fn get(&self, game: GtaGame) -> &Arc<CrowdSkeleton> {
        &self.skeletons[match game {
            GtaGame::Iii => 0,
            GtaGame::Vc => 1,
            GtaGame::Sa => 2,
        }]
    }

    /// `info`'s clip laid out for `game`'s skeleton: built once per clip (again when it reloads).
    fn clip(
        &mut self,
        id: AssetId<RigClip>,
        game: GtaGame,
        info: &Arc<ClipInfo>,
        tracks: &[Option<usize>],
    ) -> Arc<PoseClip> {
        let skeleton = self.get(game).clone();
        match self.clips.get(&(id, game)) {
            Some((i, c)) if Arc::ptr_eq(i, info) => c.clone(),
            _ => {
                let clip = Arc::new(PoseClip::new(&info.played, &skeleton.pose, tracks));
                self.clips.insert((id, game), (info.clone(), clip.clone()));
                clip
            }
        }
    }
}

/// What a crowd character is bound to.
#[derive(Component, Default)]
pub(crate) struct CrowdBinding {
    clip: Option<AssetId<RigClip>>,
    game: Option<GtaGame>,
    info: Option<Arc<ClipInfo>>,
    skeleton: Option<Arc<CrowdSkeleton>>,
    clip_layout: Option<Arc<PoseClip>>,
    cursor: PoseCursor,
    local: LocalPose,
    /// Whether the pose has been computed since the character bound (a far character waits
    /// for its frame only once it has been).
    posed: bool,
}

/// Binds each crowd character to its clip when the clip (or its asset, or the game)
/// changes, and tells its playhead the clip's length.
pub(crate) fn bind_crowds(
    mut commands: Commands,
    clips: LoadedClips,
    mut skeletons: ResMut<CrowdSkeletons>,
    mut characters: Query<(
        Entity,
        &CrowdCharacter,
        &mut Playback,
        &mut CrowdPose,
        Option<&mut CrowdBinding>,
    )>,
) {
    for (entity, character, mut playback, mut pose, binding) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(CrowdBinding::default());
            continue;
        };
        let id = character.clip.id();
        let Some(info) = clips.get(id) else {
            binding.info = None;
            playback.duration = None;
            continue;
        };
        let same = binding.clip == Some(id)
            && binding.game == Some(character.game)
            && binding.info.as_ref().is_some_and(|i| Arc::ptr_eq(i, &info));
        if !same {
            let skeleton = skeletons.get(character.game).clone();
            let tracks: Vec<Option<usize>> = info
                .tracks
                .iter()
                .map(|(t, _)| skeleton.targets.iter().position(|b| b == t))
                .collect();
            let layout = skeletons.clip(id, character.game, &info, &tracks);
            binding.cursor = PoseCursor::new(&layout);
            binding.local = LocalPose::new(skeleton.pose.len());
            pose.bones = vec![Affine3A::IDENTITY; skeleton.pose.len()];
            pose.parents = skeleton.parents.clone();
            binding.clip_layout = Some(layout);
            binding.clip = Some(id);
            binding.game = Some(character.game);
            binding.skeleton = Some(skeleton);
            binding.info = Some(info.clone());
            binding.posed = false;
        }
        playback.duration = Some(info.clip.duration());
    }
}

/// Poses every bound crowd character at its playhead's time, spread over the task pool's
/// threads (each character touches only its own components); far ones every other frame
/// ([`CrowdLod`]).
pub(crate) fn pose_crowds(
    lod: Option<Res<CrowdLod>>,
    viewers: Query<&GlobalTransform, With<CrowdViewer>>,
    mut frame: Local<u32>,
    mut characters: Query<(
        Entity,
        &GlobalTransform,
        &Playback,
        &mut CrowdBinding,
        &mut CrowdPose,
        Option<(&mut RootMotion, &mut Transform)>,
    )>,
) {
    *frame = frame.wrapping_add(1);
    let frame = *frame;
    // Squared distance beyond which a character waits for its frame, and where from.
    let beyond = lod
        .and_then(|l| l.half_rate_beyond)
        .filter(|d| d.is_finite() && *d >= 0.0)
        .map(|d| d * d);
    let viewers: Vec<Vec3> = viewers.iter().map(GlobalTransform::translation).collect();
    let waits = |entity: Entity, at: &GlobalTransform| {
        let Some(beyond) = beyond.filter(|_| !viewers.is_empty()) else {
            return false;
        };
        // Half of the far characters on odd frames, half on even ones.
        if (entity.index_u32() ^ frame) & 1 == 0 {
            return false;
        }
        let at = at.translation();
        viewers.iter().all(|v| v.distance_squared(at) > beyond)
    };
    characters.par_iter_mut().for_each(
        |(entity, at, playback, mut binding, mut pose, root_motion)| {
            let binding = &mut *binding;
            let (Some(info), Some(skeleton), Some(layout)) =
                (&binding.info, &binding.skeleton, &binding.clip_layout)
            else {
                return;
            };
            // Extracted root motion moves the character (with `RootMotion::applied`) as it
            // moves a `GtaSkeleton`, every frame.
            if let Some((mut motion, mut transform)) = root_motion {
                let delta = gta_vec_to_bevy(step_displacement(info, playback));
                motion.move_by(delta, &mut transform);
            }
            if binding.posed && waits(entity, at) {
                return;
            }
            pose::sample(
                layout,
                playback.time,
                &mut binding.cursor,
                &mut binding.local,
            );
            // The basis (Z-up to Y-up, lifted) composed into the root joint.
            layout.map_joint(0, &mut binding.local, |mut root| {
                root.rotation = GTA_TO_BEVY * root.rotation;
                root.translation = skeleton.basis.transform_point3(root.translation);
                root
            });
            pose::local_to_model(&skeleton.pose, &binding.local, &mut pose.bones);
            binding.posed = true;
        },
    );
}

/// Draws every crowd character's bones as lines when skeletons are drawn.
#[cfg(feature = "gizmos")]
pub(crate) fn draw_crowds(
    gizmos: Option<Gizmos<super::SkeletonGizmoGroup>>,
    settings: Res<super::SkeletonGizmos>,
    characters: Query<(&GlobalTransform, &CrowdPose)>,
) {
    let Some(mut gizmos) = gizmos else { return };
    if !settings.enabled {
        return;
    }
    for (at, pose) in &characters {
        for (a, b) in pose.segments() {
            gizmos.line(at.transform_point(a), at.transform_point(b), settings.color);
        }
    }
}
