//! The skeletal wing: what IFP and DAN share. The clip asset the loaders make
//! ([`RigClip`], [`ClipSettings`]), Bevy `AnimationClip` building ([`animation_clip`]),
//! the bones rigplay drives ([`RigBone`]) and their target ids, the playback systems that pose
//! them ([`SkeletalClip`] on a [`crate::plugin::Playback`], [`ClipLayers`], [`CrowdCharacter`]),
//! cross-fades, [`PlayAnimation`] for Bevy's own player, [`Retarget`], [`RootMotion`], and
//! skeleton gizmos. [`SkeletalPlugin`] adds all of it; the format plugins add it.
//!
//! Every character samples through the pose pipeline ([`crate::animation::pose`]), one room per step:
//! - `bind`: a character's bones and its clip laid out for them, decided when either changes;
//! - `sample`: the clip sampled at the playhead, and what the frames that bind or fade need;
//! - `fade`: a clip fading out (or held blended in), blended with the current one;
//! - `retargeted`: a clip retargeted onto a [`Retarget`] character's own skeleton;
//! - `layers`: many clips mixed by the games' rule;
//! - `write`: the bone pass, writing the posed bones in the order the world stores them;
//! - `root_motion`: the character moved by the root's movement, which the loaders take out of
//!   the clip once ([`ClipInfo::played`]).

mod bind;
mod bones;
mod clip;
mod crowd;
mod fade;
#[cfg(feature = "gizmos")]
mod gizmos;
mod layers;
mod play_animation;
mod retarget;
mod retargeted;
mod rig_clip;
mod root_motion;
mod sample;
mod settings;
mod skeletal_clip;
mod write;

#[cfg(feature = "dff")]
pub(crate) use bones::identity_target;
pub(crate) use bones::target_for;
pub use bones::{
    BoneLink, GtaBoneId, RigBone, SkeletonBones, bone_target_id, named_bone_target_id,
};
pub use clip::animation_clip;
#[cfg(feature = "dff")]
pub(crate) use crowd::{BLOCK_BONES, BONE_BYTES, MappedRows};
#[cfg(feature = "dff")]
pub(crate) use crowd::{BoneRows, CrowdBoneRows, CrowdDrawn, CrowdSkeletons, SlotState, bone_rows};
pub use crowd::{CrowdCharacter, CrowdLod, CrowdPose, CrowdViewer, KeepCrowdPose};
#[cfg(any(feature = "gltf", feature = "dff"))]
pub(crate) use crowd::{CrowdRig, CrowdSkeleton};
#[cfg(any(feature = "dff", feature = "gltf"))]
pub use crowd::{CrowdSkinPose, SkinPalette};
#[cfg(feature = "dff")]
pub(crate) use crowd::{ModelFrame, RestOnly, bind_crowds};
#[cfg(any(feature = "dff", feature = "gltf"))]
pub(crate) use crowd::{SkinBinding, SkinJoint, pose_palettes, worn_or_model_changed};
#[cfg(feature = "gizmos")]
pub use gizmos::{SkeletonGizmoGroup, SkeletonGizmos};
pub use layers::{ClipLayers, LayerFinished, LayerLooped, LayerRemoved, LayerReport};
pub use play_animation::{PlayAnimation, PlayingNode};
pub use retarget::{CharacterAxes, Retarget, RetargetMode, RetargetReport, UnmatchedTracks};
#[cfg(feature = "gltf")]
pub(crate) use retargeted::TargetRig;
pub(crate) use rig_clip::LoadedClips;
pub use rig_clip::{ClipInfo, RigClip};
pub use root_motion::RootMotion;
pub(crate) use root_motion::step_displacement;
pub use settings::{ClipSettings, RootMotionMode};
pub use skeletal_clip::SkeletalClip;

use crate::plugin::{PlaybackPlugin, PlaybackSystems};
use bevy::prelude::*;

/// The skeletal wing's systems and resources: the [`RigClip`] asset, [`SkeletalClip`] playback
/// (on [`PlaybackPlugin`]'s playheads), [`PlayAnimation`], [`Retarget`], root motion and
/// skeleton gizmos. [`crate::plugin::IfpPlugin`] and [`crate::plugin::DanPlugin`] add it; adding
/// it again (before or after them) does nothing more. Needs `AnimationPlugin` (in
/// `DefaultPlugins`); draws skeletons when `GizmoPlugin` is present.
pub struct SkeletalPlugin;

/// Marks that [`SkeletalPlugin`] is built, so that adding it twice adds its systems once.
#[derive(Resource)]
struct SkeletalInstalled;

/// Marks that the glTF crowd rigs' system is added (by [`SkeletalPlugin::finish`], once).
#[cfg(feature = "gltf")]
#[derive(Resource)]
struct GltfCrowdsInstalled;

impl Plugin for SkeletalPlugin {
    fn is_unique(&self) -> bool {
        false
    }

    fn finish(&self, _app: &mut App) {
        #[cfg(feature = "gizmos")]
        Self::init_gizmos(_app);
        // Crowd characters wearing glTF models, where Bevy's glTF loader is (once).
        #[cfg(feature = "gltf")]
        if _app.world().contains_resource::<Assets<bevy::gltf::Gltf>>()
            && !_app.world().contains_resource::<GltfCrowdsInstalled>()
        {
            _app.insert_resource(GltfCrowdsInstalled)
                .add_observer(crate::plugin::gltf::drop_crowd_rig)
                .add_observer(crate::plugin::gltf::note_crowd_gltf)
                .add_systems(
                    PostUpdate,
                    (
                        // (Skipped where there is no such character, but in a frame a file
                        // changes or goes: what was made of it is forgotten then.)
                        crate::plugin::gltf::rig_gltf_crowds
                            .run_if(
                                worn_or_model_changed::<
                                    crate::plugin::CrowdGltfModel,
                                    bevy::gltf::Gltf,
                                >,
                            )
                            .in_set(PlaybackSystems::Prepare)
                            // (A file's change is announced there: the rig is made again in
                            // that frame, not the next.)
                            .after(bevy::asset::AssetEventSystems)
                            .before(crowd::bind_crowds),
                        crate::plugin::gltf::pose_gltf_crowd_skins
                            .run_if(worn_or_model_changed::<CrowdSkinPose, bevy::gltf::Gltf>)
                            .after(PlaybackSystems::Apply)
                            .after(bevy::asset::AssetEventSystems),
                    ),
                );
        }
    }

    fn build(&self, app: &mut App) {
        app.add_plugins(PlaybackPlugin);
        if app.world().contains_resource::<SkeletalInstalled>() {
            return;
        }
        app.insert_resource(SkeletalInstalled)
            .init_asset::<RigClip>()
            .init_resource::<bind::BonesChanged>()
            .init_resource::<retarget::NamesAdded>()
            .init_resource::<bind::PoseLayouts>()
            .init_resource::<crowd::CrowdSkeletons>()
            .register_type::<CrowdCharacter>()
            .register_type::<CrowdLod>()
            .register_type::<CrowdViewer>()
            .register_type::<KeepCrowdPose>()
            .register_type::<SkeletalClip>()
            .register_type::<RigBone>()
            .register_type::<SkeletonBones>()
            .register_type::<BoneLink>()
            .register_type::<GtaBoneId>()
            .register_type::<Retarget>()
            .register_type::<RootMotion>()
            .add_observer(bind::note_new_bone)
            .add_observer(bones::give_bones_to_graph)
            .add_observer(bones::take_bones_from_graph)
            .add_observer(layers::unbind_layers)
            .add_observer(retarget::note_new_name)
            // In `PostUpdate`, after `SpawnScene` and before anything is posed: a glTF scene
            // spawned this frame has its nodes made bones, at rest, before its character first
            // poses them (in `Update`, the next frame's run took the posed transforms for rests).
            .add_systems(
                PostUpdate,
                (
                    retarget::retarget.run_if(any_with_component::<Retarget>),
                    retarget::report_humanoid_bones.run_if(any_with_component::<Retarget>),
                    play_animation::start_animations.run_if(any_with_component::<PlayAnimation>),
                    retarget::warn_unmatched.run_if(any_with_component::<PlayAnimation>),
                )
                    .chain()
                    .before(PlaybackSystems::Prepare)
                    .before(bevy::app::AnimationSystems),
            )
            .add_systems(
                PostUpdate,
                (
                    root_motion::extract_root_motion
                        .run_if(any_with_component::<PlayAnimation>)
                        .after(bevy::app::AnimationSystems)
                        .before(TransformSystems::Propagate),
                    (
                        bind::prepare_skeletal.run_if(any_with_component::<SkeletalClip>),
                        layers::bind_layers.run_if(any_with_component::<ClipLayers>),
                    )
                        .in_set(PlaybackSystems::Prepare),
                    // After the playheads: the bottom layer's root motion is the step its
                    // `Playback` took this frame.
                    layers::advance_layers
                        .run_if(any_with_component::<ClipLayers>)
                        .in_set(PlaybackSystems::Advance)
                        .after(crate::plugin::playback::advance_playbacks),
                    (
                        sample::sample_skeletal.run_if(any_with_component::<SkeletalClip>),
                        sample::apply_skeletal.run_if(any_with_component::<SkeletalClip>),
                        layers::sample_layers.run_if(any_with_component::<ClipLayers>),
                        write::write_posed_bones.run_if(any_with_component::<bind::PoseSource>),
                    )
                        .chain()
                        .in_set(PlaybackSystems::Apply),
                    (
                        crowd::bind_crowds.run_if(any_with_component::<CrowdCharacter>),
                        layers::bind_crowd_layers.run_if(any_with_component::<ClipLayers>),
                    )
                        .chain()
                        .in_set(PlaybackSystems::Prepare),
                    layers::advance_crowd_layers
                        .run_if(any_with_component::<ClipLayers>)
                        .in_set(PlaybackSystems::Advance),
                    crowd::pose_crowds
                        .run_if(any_with_component::<CrowdCharacter>)
                        .in_set(PlaybackSystems::Apply),
                ),
            );
        // (Each system above, and each gizmo system, is skipped by a run condition where there
        // is none of the characters it serves (the gizmo settings' copy into Bevy's gizmo
        // config, where they did not change): Bevy's multi-threaded executor then spawns no
        // task for it. A task is a thread hop, about 18 µs a system on the two cores
        // measured: `benches/playback.rs`, group `empty app`, and `docs/performance.md`.)
        #[cfg(feature = "gizmos")]
        app.init_resource::<SkeletonGizmos>().add_systems(
            PostUpdate,
            (
                gizmos::sync_gizmo_config.run_if(resource_changed::<SkeletonGizmos>),
                gizmos::draw_skeletons.run_if(any_with_component::<RigBone>),
                crowd::draw_crowds.run_if(any_with_component::<CrowdCharacter>),
                gizmos::place_bone_names.run_if(
                    any_with_component::<RigBone>
                        .or_eager(any_with_component::<gizmos::BoneNameLabel>),
                ),
            )
                .chain()
                .after(TransformSystems::Propagate),
        );
    }
}

#[cfg(feature = "gizmos")]
impl SkeletalPlugin {
    /// Registers the skeleton gizmo group where gizmos are drawn at all (its systems need the
    /// gizmo plugin's resources; the drawing system does nothing without them).
    fn init_gizmos(app: &mut App) {
        if app
            .world()
            .contains_resource::<bevy::gizmos::config::GizmoConfigStore>()
        {
            app.init_gizmo_group::<SkeletonGizmoGroup>();
        }
    }
}
