//! The crowd path: [`CrowdCharacter`]s, GTA skeletons whose bones are not entities. Each one's
//! pose is computed into [`CrowdPose`], a flat buffer of model-space transforms, by a system that
//! spreads the characters over every core; nothing per bone enters the ECS, so no transform
//! propagates. For crowds drawn by the user's own skinning, instancing or gizmos.

mod clips;
mod rows;
mod skeleton;
#[cfg(any(feature = "dff", feature = "gltf"))]
mod skin;

pub(crate) use clips::{CrowdClip, CrowdSkeletons};
use rows::RowSlot;
#[cfg(feature = "dff")]
pub(crate) use rows::{BLOCK_BONES, BONE_BYTES, MappedRows};
#[cfg(feature = "dff")]
pub(crate) use rows::{BoneRows, SlotState, bone_rows};
pub(crate) use rows::{CrowdBoneRows, CrowdDrawn};
pub(crate) use skeleton::CrowdSkeleton;
#[cfg(feature = "dff")]
pub(crate) use skeleton::{ModelFrame, RestOnly};
#[cfg(any(feature = "dff", feature = "gltf"))]
pub use skin::{CrowdSkinPose, SkinPalette};
#[cfg(any(feature = "dff", feature = "gltf"))]
pub(crate) use skin::{SkinBinding, SkinJoint, pose_palettes};

use super::bind::PoseLayouts;
use super::fade::{fade_weight, outgoing_time};
use super::layers::CrowdLayerBinding;
use super::{ClipInfo, LoadedClips, RigClip, RootMotion, step_displacement};
use crate::animation::PlayMode;
use crate::animation::pose::{self, BlendLayer, KeyedChannels, LocalPose, PoseCursor};
use crate::plugin::Playback;
use crate::skeleton::GtaGame;
use bevy::ecs::batching::BatchingStrategy;
use bevy::math::Affine3A;
use bevy::prelude::*;
use bevy::utils::Parallel;
use std::sync::{Arc, Mutex};

/// A GTA ped skeleton with no bone entities, playing `clip` on its [`Playback`]: its pose lands
/// in [`CrowdPose`] each frame, in the skeleton's bone order, in the character's own space
/// (Bevy's axes, the feet on the origin, as [`crate::plugin::GtaSkeleton`] places its bones).
/// Wearing a `CrowdModel` (a DFF ped, the `dff` feature), its bones rest as the model's do
/// (its own proportions, as `GtaModel` poses it), once the model has loaded.
/// With a `CrowdGltfModel` (the `gltf` feature) it poses that glTF character's own nodes
/// instead, every clip retargeted onto them.
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
    /// The clip, as a rigplay loader loaded it. Setting it switches at once, keeping the
    /// playhead's time; [`CrowdCharacter::cross_fade`] blends.
    pub clip: Handle<RigClip>,
    /// A cross-fade asked for and not yet started: the clip fading out and the fade's length.
    #[reflect(ignore)]
    fade: Option<(Handle<RigClip>, f32)>,
}

impl CrowdCharacter {
    /// `game`'s ped playing `clip`.
    pub fn new(game: GtaGame, clip: Handle<RigClip>) -> Self {
        Self {
            game,
            clip,
            fade: None,
        }
    }

    /// Switches to `clip`, blending from the current pose over `duration` seconds, as
    /// [`SkeletalClip::cross_fade`](super::SkeletalClip::cross_fade) does on a skeleton with
    /// bone entities: the playhead starts the new clip from 0 on the next frame, the old clip
    /// plays on at its own time, speed and mode while it fades, and a fade asked for during
    /// another fades out the pose shown.
    pub fn cross_fade(&mut self, clip: Handle<RigClip>, duration: f32) {
        let old = std::mem::replace(&mut self.clip, clip);
        self.fade = Some((old, duration.max(0.0)));
    }
}

/// The pose of a [`CrowdCharacter`]: per bone of its skeleton, the model-space transform (the
/// character's space, Bevy's axes); empty until its clip has loaded.
///
/// A character drawn by the crowd renderer (`CrowdDrawPlugin`, the `dff` feature) has its pose
/// written straight into the GPU's bone rows, and its `bones` stay empty unless it has
/// [`KeepCrowdPose`] (a [`CrowdSkinPose`] brings it).
#[derive(Component, Debug, Clone, Default)]
pub struct CrowdPose {
    /// Model-space transform of each bone, in the skeleton's bone order.
    pub bones: Vec<Affine3A>,
    /// The skeleton's parents (for drawing bones as lines).
    pub parents: Arc<[Option<usize>]>,
    /// The bones' names: a game's bone names, or a glTF model's node names.
    pub names: Arc<[String]>,
}

/// Keeps a drawn [`CrowdCharacter`]'s pose in its [`CrowdPose`] as well as in the GPU's bone
/// rows, for what a game reads of it (a prop held in a hand, a hit test on a bone). Characters
/// not drawn by the crowd renderer always keep it. Without it, 10,000 drawn SA peds write
/// 20 MB less each frame (`docs/performance.md`).
#[derive(Component, Debug, Clone, Copy, Default, Reflect)]
#[reflect(Component, Default)]
pub struct KeepCrowdPose;

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
/// two posings it shows its last pose (in its [`CrowdPose`], where it keeps one). A character
/// is posed on the frame it binds whatever its distance.
///
/// A character drawn by the crowd renderer (`CrowdDrawPlugin`) holds its bone rows on the frames
/// it waits: they are not composed nor written, and the GPU draws last frame's again. Its motion
/// vectors are kept: where half rate is on, the bone buffer keeps a third frame of bones (26 MB
/// more GPU memory at 16,384 slots), so that on the frames it is posed again the pose it showed
/// last frame is still there. Turning half rate on or off makes the bone buffer anew. In its
/// first three frames in a slot (or after the bone buffer grew), its rows are written again from
/// its last pose instead.
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

/// The skeleton a [`CrowdCharacter`] wearing a model poses, where not its game's.
/// - A glTF model's (its rig), set by the glTF wing when the model has loaded; `None` until
///   then, and the character is not posed meanwhile.
/// - A DFF ped's (the game's bones at the model's rests), set by the DFF wing when the model
///   has loaded; absent until then, and the character poses its game's skeleton meanwhile.
#[derive(Component, Default, Clone)]
pub(crate) struct CrowdRig(pub(crate) Option<Arc<CrowdSkeleton>>);

/// What a crowd character is bound to.
#[derive(Component, Default)]
pub(crate) struct CrowdBinding {
    clip: Option<AssetId<RigClip>>,
    info: Option<Arc<ClipInfo>>,
    skeleton: Option<Arc<CrowdSkeleton>>,
    clip_layout: Option<CrowdClip>,
    cursor: PoseCursor,
    local: LocalPose,
    /// Whether the pose has been computed since the character bound (a far character waits
    /// for its frame only once it has been).
    posed: bool,
    /// The clip fading out, while a cross-fade runs.
    fading: Option<Box<CrowdFading>>,
    /// The blend of the two clips' poses during a cross-fade.
    mixed: LocalPose,
    /// Whether the pose last shown was `mixed` (else `local`), composed again for a drawn
    /// character that waits for its frame and keeps no `CrowdPose`.
    shows_mixed: bool,
}

/// The clip fading out of a crowd character: its layout, sampling cache and pose, and its own
/// playhead (the one the character's [`Playback`] had when the fade started).
struct CrowdFading {
    /// `None`: the pose is a snapshot of the pose shown when the fade started (a fade started
    /// during another one), which fades out as it is.
    layout: Option<CrowdClip>,
    /// The channels either clip keys (the blend's, for layers mixed onto it).
    keyed: KeyedChannels,
    duration_of_clip: f32,
    cursor: PoseCursor,
    pose: LocalPose,
    time: f32,
    speed: f32,
    mode: PlayMode,
    elapsed: f32,
    duration: f32,
}

impl CrowdFading {
    /// The outgoing clip's weight: 1 when the fade starts, 0 once it has run its length.
    fn weight(&self) -> f32 {
        fade_weight(self.elapsed, self.duration)
    }

    /// Moves the fade and the outgoing clip's playhead on by `dt` (held while the character's
    /// playback is paused or finished).
    fn step(&mut self, dt: f32, running: bool) {
        if running {
            self.elapsed += dt;
        }
        if self.layout.is_some() {
            self.time = outgoing_time(
                self.time,
                &mut self.speed,
                dt,
                self.duration_of_clip,
                self.mode,
                running,
            );
        }
    }
}

/// A run condition of the systems that serve crowd characters wearing a `C` of an `A` asset (a
/// model) and remember what they made of each model: true where a character wears one, or in a
/// frame a character took it off or went, or an `A` changed or went (so that the system forgets
/// what it made of it then, not in a later frame whose messages are gone). Both readers are read
/// every frame, so that neither holds last frame's news.
#[cfg(any(feature = "dff", feature = "gltf"))]
pub(crate) fn worn_or_model_changed<C: Component, A: Asset>(
    worn: Query<(), With<C>>,
    mut taken_off: RemovedComponents<C>,
    mut changed: MessageReader<AssetEvent<A>>,
) -> bool {
    let taken_off = taken_off.read().count() > 0;
    let changed = changed.read().count() > 0;
    !worn.is_empty() || taken_off || changed
}

/// Binds each crowd character to its clip when the clip (or its asset, or the game)
/// changes, starts the cross-fades asked for, and tells its playhead the clip's length.
pub(crate) fn bind_crowds(
    mut commands: Commands,
    clips: LoadedClips,
    mut skeletons: ResMut<CrowdSkeletons>,
    mut layouts: ResMut<PoseLayouts>,
    // The clips' generation the characters were last all looked at with.
    mut looked_at: Local<Option<u64>>,
    mut characters: Query<(
        Entity,
        &mut CrowdCharacter,
        &mut Playback,
        &mut CrowdPose,
        Option<&mut CrowdBinding>,
        Option<Ref<CrowdRig>>,
    )>,
) {
    // A character is bound again only when it changed (its clip, game or a cross-fade asked
    // for), when a clip was added, replaced or removed, or when its playhead lost its length:
    // otherwise its binding stands, and the frame costs no lookup per character.
    let generation = clips.generation();
    let every = *looked_at != Some(generation);
    *looked_at = Some(generation);
    for (entity, mut character, mut playback, mut pose, binding, rig) in &mut characters {
        let Some(mut binding) = binding else {
            commands.entity(entity).insert(CrowdBinding::default());
            continue;
        };
        let rig_changed = rig.as_ref().is_some_and(Ref::is_changed);
        // (A playhead put on anew, without its length, is given it again.)
        if !every
            && !character.is_changed()
            && !rig_changed
            && !binding.is_added()
            && playback.duration.is_some()
        {
            continue;
        }
        // A glTF character's rig, or its game's skeleton; a glTF character whose model has not
        // loaded waits for it.
        let skeleton = match rig.as_deref() {
            Some(CrowdRig(Some(rig))) => rig.clone(),
            Some(CrowdRig(None)) => {
                binding.info = None;
                playback.duration = None;
                continue;
            }
            None => skeletons.get(character.game).clone(),
        };
        // A cross-fade asked for: the outgoing clip takes the playhead as it was (or, during
        // another fade, the pose shown fades out as it is), and the playhead starts the new
        // clip.
        if character.fade.is_some() {
            let (old, duration) = character
                .bypass_change_detection()
                .fade
                .take()
                .expect("checked above");
            // (During a fade, the pose shown is the blend.)
            let snapshot = (binding.fading.is_some() && binding.posed).then(|| {
                let mut shown = binding.mixed.clone();
                shown.set(0, skeleton.unbased(shown.get(0)));
                shown
            });
            let outgoing = clips.get(old.id());
            let incoming = clips
                .get(character.clip.id())
                .map(|info| skeletons.clip(character.clip.id(), &skeleton, &info, &mut layouts));
            binding.fading = outgoing.map(|info| {
                let layout = snapshot
                    .is_none()
                    .then(|| skeletons.clip(old.id(), &skeleton, &info, &mut layouts));
                // A snapshot keys what the pose shown did: both clips, taken as every channel.
                let joints = skeleton.pose.len();
                let keys = |c: &Option<CrowdClip>, j| {
                    c.as_ref()
                        .map_or((true, true, true), |c| c.keyed().keys_joint(j))
                };
                let keyed = KeyedChannels::new(joints, |j| {
                    let (a, b) = (keys(&layout, j), keys(&incoming, j));
                    (a.0 || b.0, a.1 || b.1, a.2 || b.2)
                });
                Box::new(CrowdFading {
                    keyed,
                    cursor: (layout.as_ref())
                        .map(|c| PoseCursor::new(&c.layout))
                        .unwrap_or_default(),
                    pose: snapshot.unwrap_or_else(|| skeleton.pose.rest().clone()),
                    layout,
                    duration_of_clip: info.clip.duration(),
                    time: playback.time,
                    speed: playback.rate(),
                    mode: playback.mode,
                    elapsed: 0.0,
                    duration,
                })
            });
            playback.time = 0.0;
            playback.restart();
        }
        let id = character.clip.id();
        let Some(info) = clips.get(id) else {
            binding.info = None;
            playback.duration = None;
            continue;
        };
        let same = binding.clip == Some(id)
            && binding
                .skeleton
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &skeleton))
            && binding.info.as_ref().is_some_and(|i| Arc::ptr_eq(i, &info));
        if !same {
            // A fade's poses are of the skeleton it started on: another one cuts it.
            if (binding.skeleton.as_ref()).is_some_and(|s| !Arc::ptr_eq(s, &skeleton)) {
                binding.fading = None;
            }
            let layout = skeletons.clip(id, &skeleton, &info, &mut layouts);
            binding.cursor = PoseCursor::new(&layout.layout);
            binding.local = LocalPose::new(skeleton.pose.len());
            pose.bones = vec![Affine3A::IDENTITY; skeleton.pose.len()];
            pose.parents = skeleton.parents.clone();
            pose.names = skeleton.names.clone();
            binding.clip_layout = Some(layout);
            binding.clip = Some(id);
            binding.skeleton = Some(skeleton);
            binding.info = Some(info.clone());
            binding.posed = false;
        }
        playback.duration = Some(info.clip.duration());
    }
}

/// The most characters [`pose_crowds`] poses in one task (some tens of microseconds of work for SA
/// peds).
const CROWD_BATCH: usize = 128;

/// Poses every bound crowd character at its playhead's time, spread over the task pool's
/// threads (each character touches only its own components); far ones every other frame
/// ([`CrowdLod`]).
pub(crate) fn pose_crowds(
    time: Res<Time>,
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
        Option<&CrowdDrawn>,
        Option<&mut CrowdLayerBinding>,
        Has<KeepCrowdPose>,
    )>,
    mut drawn: Option<ResMut<CrowdBoneRows>>,
    scratch: Local<Parallel<Vec<Affine3A>>>,
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
    let dt = time.delta_secs();
    // Each drawn character's slot of the bone rows, taken by one character (a lock never waited
    // on), so that its rows are written while its pose is still in the cache.
    let mut blocks = Vec::new();
    let slots: Vec<Mutex<RowSlot>> = match drawn.as_deref_mut() {
        Some(rows) => rows
            .slots(&mut blocks)
            .into_iter()
            .map(Mutex::new)
            .collect(),
        None => Vec::new(),
    };
    let take_slot = |drawn: Option<&CrowdDrawn>| {
        let slot = drawn.and_then(|d| slots.get(d.slot as usize))?;
        let slot = slot.try_lock().ok()?;
        // Its rows' memory on its way into the cache while the character is posed.
        slot.touch();
        Some(slot)
    };
    // Batches of at most `CROWD_BATCH` characters, taken by whichever thread is free: a batch
    // per thread (Bevy's default) left one thread idle while the other finished its share, the
    // shares' costs differing (far characters held at half rate cost little).
    let batching = BatchingStrategy::new().max_batch_size(CROWD_BATCH);
    characters
        .par_iter_mut()
        .batching_strategy(batching)
        .for_each_init(
        || scratch.borrow_local_mut(),
        |scratch,
         (entity, at, playback, mut binding, mut pose, root_motion, drawn, layers, kept)| {
            let binding = &mut *binding;
            let (Some(info), Some(skeleton), Some(layout)) =
                (&binding.info, &binding.skeleton, &binding.clip_layout)
            else {
                return;
            };
            // Extracted root motion moves the character (with `RootMotion::applied`) as it
            // moves a `GtaSkeleton`, every frame.
            // Layers that carry root translation add theirs, by weight (§3.5).
            if let Some((mut motion, mut transform)) = root_motion {
                let layered = layers.as_ref().map_or(Vec3::ZERO, |l| l.root_delta);
                let delta = layout.root_motion(step_displacement(info, playback)) + layered;
                motion.move_by(delta, &mut transform);
            }
            // A cross-fade moves on every frame, and ends when it has run its length.
            if let Some(fading) = binding.fading.as_mut() {
                fading.step(dt, playback.is_running());
                if fading.weight() <= 0.0 {
                    binding.fading = None;
                }
            }
            let mut slot = take_slot(drawn);
            // A drawn character's pose goes straight into its rows, its `CrowdPose` left empty
            // unless asked for. (`CrowdPose` holds the last pose or nothing.)
            let keep = slot.is_none() || kept;
            if binding.posed && waits(entity, at) {
                // Last frame's pose: a drawn character's rows held where they may be (the GPU
                // draws last frame's), else written again.
                let held = slot.as_mut().is_some_and(|slot| slot.hold());
                match slot.as_mut().filter(|_| !held) {
                    Some(slot) if pose.bones.is_empty() => {
                        // Composed again from the local pose it was composed from.
                        let shown = match binding.shows_mixed {
                            true => &binding.mixed,
                            false => &binding.local,
                        };
                        slot.write_composed(&skeleton.pose, shown, scratch);
                    }
                    Some(slot) => slot.write(&pose.bones),
                    None => {}
                }
                return;
            }
            pose::sample(
                &layout.layout,
                playback.time,
                &mut binding.cursor,
                &mut binding.local,
            );
            // Layers over the character's clip (its `ClipLayers`): mixed onto its pose (or onto
            // the cross-fade's blend) by the games' rule, before the basis goes into the root.
            let mut layers = layers.filter(|l| l.playing());
            let shown = match binding.fading.as_deref_mut() {
                None => {
                    if let Some(layers) = layers.as_mut() {
                        let rest = skeleton.pose.rest();
                        layers.mix_onto(layout.keyed(), rest, &mut binding.local);
                    }
                    // The basis (Z-up to Y-up, lifted) composed into the root joint (a glTF
                    // rig has none).
                    if let Some(basis) = &skeleton.basis {
                        let local = &mut binding.local;
                        let based = |root| CrowdSkeleton::based(basis, root);
                        (layout.layout).map_joint(0, local, based);
                    }
                    &binding.local
                }
                Some(fading) => {
                    // As the games blend clips: a normalised weighted sum.
                    if let Some(old) = &fading.layout {
                        let old = &old.layout;
                        pose::sample(old, fading.time, &mut fading.cursor, &mut fading.pose);
                    }
                    let w = fading.weight();
                    pose::blend(
                        &[
                            BlendLayer {
                                pose: &fading.pose,
                                weight: w,
                                mask: None,
                            },
                            BlendLayer {
                                pose: &binding.local,
                                weight: 1.0 - w,
                                mask: None,
                            },
                        ],
                        skeleton.pose.rest(),
                        &mut binding.mixed,
                    );
                    if let Some(layers) = layers.as_mut() {
                        let rest = skeleton.pose.rest();
                        layers.mix_onto(&fading.keyed, rest, &mut binding.mixed);
                    }
                    if let Some(basis) = &skeleton.basis {
                        let root = CrowdSkeleton::based(basis, binding.mixed.get(0));
                        binding.mixed.set(0, root);
                    }
                    &binding.mixed
                }
            };
            binding.posed = true;
            binding.shows_mixed = binding.fading.is_some();
            match slot.as_mut() {
                Some(slot) if !keep => {
                    slot.write_composed(&skeleton.pose, shown, scratch);
                    if !pose.bones.is_empty() {
                        pose.bones = Vec::new();
                    }
                }
                slot => {
                    pose.bones.resize(skeleton.pose.len(), Affine3A::IDENTITY);
                    pose::local_to_model(&skeleton.pose, shown, &mut pose.bones);
                    if let Some(slot) = slot {
                        slot.write(&pose.bones);
                    }
                }
            }
        },
    );
}

/// Draws the bones of every crowd character not drawn in a model ([`CrowdDrawn`]) as lines when
/// skeletons are drawn.
#[cfg(feature = "gizmos")]
pub(crate) fn draw_crowds(
    gizmos: Option<Gizmos<super::SkeletonGizmoGroup>>,
    settings: Res<super::SkeletonGizmos>,
    characters: Query<(&GlobalTransform, &CrowdPose), Without<CrowdDrawn>>,
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
