//! Crowd characters drawn by instanced GPU skinning: [`CrowdDrawPlugin`]. A
//! [`crate::plugin::CrowdCharacter`] wearing a [`crate::plugin::CrowdModel`] (or, with the `gltf` feature, a glTF character:
//! `crate::plugin::CrowdGltfModel`) gets one child entity per look (material) of the model,
//! drawn through Bevy's own mesh pipeline with a [`CrowdMaterial`] whose vertex shader skins
//! from one buffer of every drawn character's bones. Bevy batches the children of a model into
//! one draw per part, culls each against the frustum (on the GPU where its renderer can:
//! [`CrowdDrawSettings::cpu_culling`]), and shades them as `StandardMaterial` shades a single
//! ped. The design and what was measured: the repository's
//! `docs/design/crowd-gpu.md`.

mod dff;
mod frame;
#[cfg(feature = "gltf")]
mod gltf;
mod material;
mod parts;
mod passed_on;
mod staging;
mod state;
mod views;

pub use material::{
    ATTRIBUTE_CROWD_JOINT_INDEX, ATTRIBUTE_CROWD_JOINT_WEIGHT, CrowdMaterial, CrowdSkin,
};
pub use state::CrowdDrawSettings;

use self::dff::dress_crowd;
use self::frame::{
    CrowdBoneUpload, bones_pending, extract_crowd_bones, follow_poses, place_crowds,
    pose_fallback_models, size_crowd_bones, write_crowd_bones,
};
use self::state::{CrowdDraw, CrowdFallback, CrowdPart};
use crate::plugin::PlaybackSystems;
use crate::plugin::dff::{CrowdModel, Dff};
use crate::plugin::skeletal::{CrowdBoneRows, CrowdCharacter, worn_or_model_changed};
use bevy::asset::embedded_asset;
use bevy::prelude::*;
use bevy::render::{ExtractSchedule, Render, RenderApp, RenderSystems};

/// Draws every [`crate::plugin::CrowdCharacter`] that wears a [`crate::plugin::CrowdModel`] (a
/// DFF ped) or, with the `gltf`
/// feature, a `CrowdGltfModel` (a glTF character, its clips retargeted onto its own rig) by
/// instanced GPU skinning. Needs [`super::DffPlugin`] and Bevy's rendering (`DefaultPlugins`).
///
/// - A character gets one child per look of its model: the meshes of equal materials (the same
///   textures, colours, alpha mode and culled faces) are merged into one, each vertex still on
///   its own atomic's or skin's joints. The sample ped is two (its body's two materials on one
///   atlas, and the cap); a GTA III ped whose parts share one texture is one.
/// - A glTF character's meshes are each primitive of each mesh of the file: a skinned mesh
///   skins from its skin's joints (its own node's transform ignored, as glTF and Bevy's
///   `SkinnedMesh` do), a mesh on a node without a skin moves with that node. Its materials are
///   the `StandardMaterial`s Bevy's glTF loader gives the file's scene (under a node whose scale
///   mirrors it, the copy that culls the other faces). Morph targets are drawn at
///   the weights Bevy's loader gives the scene (the glTF mesh's defaults), applied once to the
///   crowd's copy of the mesh; weights changed at run time are not followed.
/// - A slot holds as many bones as the largest skeleton drawn: 32 (the SA ped's) until a glTF
///   rig of more nodes is drawn, when every slot (and every material) is laid out again.
/// - A DFF ped's meshes are each (atomic, material) of its model's first clump that has
///   bones, skinned atomics and rigid ones (a cap on the head, a GTA III ped's parts) alike,
///   but not the hidden (`_dam`, `_vlo`) ones. Each child has `Mesh3d` (the looks' meshes, their joints under
///   [`ATTRIBUTE_CROWD_JOINT_INDEX`] and [`ATTRIBUTE_CROWD_JOINT_WEIGHT`]), a [`CrowdMaterial`]
///   shared by every character of the model, a `MeshTag` (the character's slot in the bone
///   buffer) and an `Aabb` that follows the pose, for Bevy's frustum culling: on the GPU
///   (`NoCpuCulling`) where Bevy's renderer culls there, unless
///   [`CrowdDrawSettings::cpu_culling`] asks for the CPU's.
/// - Each frame, after the crowd is posed, the bones of every drawn character are written into
///   one storage buffer, uploaded whole, each character's place in the world (its
///   `GlobalTransform`) beside them. The parts themselves have no `Transform` and stay at the
///   identity, so that a character that moves costs its parts nothing in Bevy's transform
///   propagation and extraction; their boxes are in world space. (A blended or transmissive
///   part keeps its transform, its character's, since Bevy sorts such meshes by it.) The buffer keeps last frame's bones too, so that a
///   camera's motion vectors (`MotionVectorPrepass`, for temporal anti-aliasing and motion
///   blur) follow the crowd's poses and places as they follow a `SkinnedMesh`'s.
/// - A drawn character's pose is written straight into its rows: its
///   [`crate::plugin::CrowdPose`] stays empty unless it has [`crate::plugin::KeepCrowdPose`].
/// - `NotShadowCaster`, `NotShadowReceiver` and `RenderLayers` on a crowd character (which Bevy
///   reads on mesh entities only) are given to the meshes that draw it, either way, as the
///   character has them: when it is dressed, when they are inserted, changed (the layers) or
///   removed. Put them on the character, not on its parts: the parts' layers changed by the
///   plugin are followed where the GPU culls them (Bevy 0.19.1 alone does not follow a mesh's
///   layers changed after it first culls it).
/// - Every camera and shadow-casting light shows the parts culled on the GPU as its layers say:
///   one spawned after the crowd is drawn or made active again, one whose `RenderLayers` change,
///   a light whose shadows are turned on again. (Bevy 0.19.1 lists such a mesh in the views of
///   the frame it is first culled in, with their layers of then, and never again; the plugin
///   mends those lists, for every mesh Bevy culls on the GPU.)
/// - A drawn character's bones are not drawn as skeleton gizmo lines over it.
/// - A model that fails to load, or has no atomic on a bone, leaves its characters undrawn with
///   one warning. A model reloaded while the crowd plays is drawn anew
///   from the next frame; the playheads are the characters' and do not change.
/// - Where the device has no storage buffers (WebGL2), one warning is logged and each character
///   is drawn the Bevy way instead: a child [`super::GtaModel`] of its model (bone entities and
///   `SkinnedMesh`es), or the glTF file's scene, whose bones follow the character's
///   [`crate::plugin::CrowdPose`] every frame (a glTF's nodes matched by name under the node matched above them). That costs what
///   `GtaModel` costs (an entity per bone).
///   [`CrowdDrawSettings::bevy_skinning`] asks for that way on any device.
///
/// The CPU palettes of [`super::CrowdSkinPose`] are not needed for drawing: add that component
/// only where you want them.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use rigplay::prelude::*;
/// # use rigplay::plugin::CrowdDrawPlugin;
/// fn main() {
///     App::new()
///         .add_plugins((DefaultPlugins, IfpPlugin, DffPlugin, CrowdDrawPlugin))
///         .add_systems(Startup, spawn)
///         .run();
/// }
///
/// fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
///     let walk = assets.load("anims/sa_ped.ifp#walk");
///     let ped = assets.load("characters/ped.dff");
///     for i in 0..1000 {
///         let at = Transform::from_xyz((i % 40) as f32, 0.0, (i / 40) as f32);
///         commands.spawn((CrowdCharacter::new(GtaGame::Sa, walk.clone()), CrowdModel(ped.clone()), at));
///     }
/// }
/// ```
pub struct CrowdDrawPlugin;

impl Plugin for CrowdDrawPlugin {
    fn build(&self, app: &mut App) {
        embedded_asset!(app, "crowd_draw.wgsl");
        app.add_plugins(MaterialPlugin::<CrowdMaterial>::default())
            .init_resource::<CrowdDraw>()
            .init_resource::<CrowdDrawSettings>()
            .init_resource::<CrowdBoneRows>()
            .add_systems(
                PostUpdate,
                (
                    // The crowd's posing (in `Apply`) writes the bone rows these size.
                    // Each system is skipped where it has nothing to do (a system that runs is a
                    // task for a thread, about 18 µs: `docs/performance.md`): the dressing
                    // systems run where a character wears a model, or in a frame one takes its
                    // model off or goes (its slot is given back), or a model changes or goes
                    // (what was built of it is forgotten).
                    (
                        state::choose_culling.run_if(any_with_component::<CrowdCharacter>),
                        dress_crowd.run_if(worn_or_model_changed::<CrowdModel, Dff>),
                        // (Where Bevy's glTF loader is.)
                        #[cfg(feature = "gltf")]
                        gltf::dress_gltf_crowd.run_if(
                            resource_exists::<Assets<bevy::gltf::Gltf>>.and_then(
                                worn_or_model_changed::<
                                    crate::plugin::CrowdGltfModel,
                                    bevy::gltf::Gltf,
                                >,
                            ),
                        ),
                        size_crowd_bones.run_if(any_with_component::<CrowdCharacter>),
                    )
                        .chain()
                        .after(PlaybackSystems::Prepare)
                        .before(PlaybackSystems::Apply),
                    // The characters' places, once their transforms are propagated.
                    (place_crowds, follow_poses)
                        .chain()
                        .run_if(any_with_component::<CrowdPart>)
                        .after(PlaybackSystems::Apply)
                        .after(bevy::transform::TransformSystems::Propagate)
                        .before(bevy::camera::visibility::VisibilitySystems::CheckVisibility),
                    pose_fallback_models
                        .run_if(any_with_component::<CrowdFallback>)
                        .after(PlaybackSystems::Apply)
                        .before(bevy::transform::TransformSystems::Propagate),
                    // A character's `RenderLayers` changed in place, for its meshes (what it
                    // has of the three is otherwise passed on by observers: `passed_on`).
                    passed_on::pass_on_layers
                        .run_if(passed_on::any_dressed_with_layers)
                        .after(PlaybackSystems::Prepare)
                        .before(bevy::camera::visibility::VisibilitySystems::CheckVisibility),
                ),
            );
        passed_on::observe(app);
        if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app
                .init_resource::<CrowdBoneUpload>()
                .add_systems(ExtractSchedule, extract_crowd_bones)
                .add_systems(
                    Render,
                    write_crowd_bones
                        .run_if(bones_pending)
                        .in_set(RenderSystems::PrepareResources),
                );
        }
    }

    fn finish(&self, app: &mut App) {
        // Whether Bevy's renderer culls mesh instances on the GPU: its GPU preprocessing in
        // culling mode, building the instances' data there (as it does by default where it can).
        use bevy::pbr::RenderMeshInstances;
        use bevy::render::batching::gpu_preprocessing::GpuPreprocessingSupport;
        let gpu_culls = app.get_sub_app(RenderApp).is_some_and(|render| {
            let world = render.world();
            world
                .get_resource::<GpuPreprocessingSupport>()
                .is_some_and(GpuPreprocessingSupport::is_culling_supported)
                && matches!(
                    world.get_resource::<RenderMeshInstances>(),
                    Some(RenderMeshInstances::GpuBuilding(_))
                )
        });
        app.world_mut().resource_mut::<CrowdDraw>().gpu_culls = gpu_culls;
        if gpu_culls && let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app
                .add_systems(
                    Render,
                    (
                        frame::fill_culling_data
                            .in_set(RenderSystems::PrepareMeshes)
                            .before(bevy::pbr::collect_meshes_for_gpu_building),
                        // Views made, or whose layers changed, after the parts were first culled
                        // on the GPU (`views`' doc); before the prepass's specialisation, which
                        // reads the lists in `PrepareMeshes` after `set_mesh_motion_vector_flags`.
                        views::show_gpu_culled_meshes
                            .run_if(views::any_culled_on_the_gpu)
                            .in_set(RenderSystems::PrepareMeshes)
                            .after(bevy::pbr::collect_gpu_culled_meshes)
                            .before(bevy::pbr::set_mesh_motion_vector_flags),
                        // Parts whose layers changed (`views::follow_relayered_parts`).
                        views::follow_relayered_parts
                            .run_if(views::any_relayered)
                            .in_set(RenderSystems::PrepareMeshes)
                            .after(bevy::pbr::collect_meshes_for_gpu_building)
                            .before(bevy::pbr::collect_gpu_culled_meshes),
                    ),
                )
                .init_resource::<views::RelayeredParts>();
        }
    }
}
