//! Every view shown the meshes culled on the GPU, as its layers say.
//!
//! Where Bevy 0.19.1 culls a mesh on the GPU (`NoCpuCulling`, as the crowd's parts are by
//! default), it keeps, per view (a camera, a shadow-casting light's cascade or cube face), a
//! list of such meshes to draw, and adds a mesh to each view's list once: in the frame the mesh
//! starts to be culled on the GPU, after the layers of the views that exist then
//! (`collect_gpu_culled_meshes`, `bevy_pbr`). So, measured on lavapipe
//! (`crowd_gpu::every_camera_and_light_shows_the_crowd_as_its_layers_say`):
//! - a view made later shows none of them: a camera spawned after the crowd is drawn, or made
//!   inactive and active again, shows no ped, and a light spawned later, or whose shadows are
//!   turned off and on again, casts no ped's shadow (Bevy makes such views anew, empty);
//! - a view's layers changed later are not followed (bevyengine/bevy#25764, open): a camera
//!   moved off the crowd's layer still shows it, and one moved onto it does not.
//!
//! [`show_gpu_culled_meshes`] mends the lists, after Bevy has collected them each frame and
//! before meshes are specialised and queued: a view that is new this frame, or whose layers (or
//! its light's) differ from last frame's, gets every mesh culled on the GPU whose layers meet its
//! own, and loses those whose layers do not (and any it still lists that is culled on the GPU no
//! more), as Bevy does for a mesh new or gone in that frame. It
//! keeps the views' keys and layers from frame to frame; a frame in which no view changes costs a
//! lookup per view. The lists are Bevy's for every mesh culled on the GPU, so the meshes of the
//! app's own with `NoCpuCulling` are shown as their layers say too.

use bevy::camera::visibility::RenderLayers;
use bevy::pbr::RenderGpuCulledEntities;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::view::{
    ExtractedView, RenderShadowMapVisibleEntities, RenderVisibleEntities, RetainedViewEntity,
};
use std::any::TypeId;

/// The views seen in the last frame, each with its layers (`None`: it sees every layer), and a
/// second table kept for its memory.
#[derive(Default)]
pub(super) struct SeenViews {
    last: HashMap<RetainedViewEntity, Option<RenderLayers>>,
    now: HashMap<RetainedViewEntity, Option<RenderLayers>>,
}

impl SeenViews {
    /// Records `view` with `layers` for this frame; whether it is new or its layers changed.
    fn changed(&mut self, view: RetainedViewEntity, layers: Option<&RenderLayers>) -> bool {
        let changed = self
            .last
            .get(&view)
            .is_none_or(|was| was.as_ref() != layers);
        self.now.insert(view, layers.cloned());
        changed
    }

    /// Ends the frame: this frame's views are the last ones.
    fn end_frame(&mut self) {
        std::mem::swap(&mut self.last, &mut self.now);
        self.now.clear();
    }
}

/// Whether any mesh is culled on the GPU ([`show_gpu_culled_meshes`]' run condition). Where none
/// is, no view's list lacks one; the views made or changed meanwhile look new or changed to
/// [`SeenViews`] once there is one again, and their lists are looked over then.
pub(super) fn any_culled_on_the_gpu(culled: Option<Res<RenderGpuCulledEntities>>) -> bool {
    culled.is_some_and(|culled| !culled.entities.is_empty())
}

/// Shows every view that is new, or whose layers changed, the meshes culled on the GPU that its
/// layers meet, and takes from it those they do not (the module's doc says why).
pub(super) fn show_gpu_culled_meshes(
    culled: Res<RenderGpuCulledEntities>,
    mut cameras: Query<(
        &ExtractedView,
        Option<&RenderLayers>,
        &mut RenderVisibleEntities,
    )>,
    mut lights: Query<(Option<&RenderLayers>, &mut RenderShadowMapVisibleEntities)>,
    mut seen: Local<SeenViews>,
) {
    for (view, layers, mut visible) in &mut cameras {
        if seen.changed(view.retained_view_entity, layers) {
            show_in_view(&culled, layers, &mut visible);
        }
    }
    for (layers, mut shadow_views) in &mut lights {
        let changed: Vec<RetainedViewEntity> = (shadow_views.subviews.keys())
            .filter(|view| seen.changed(**view, layers))
            .copied()
            .collect();
        for view in changed {
            if let Some(visible) = shadow_views.subviews.get_mut(&view) {
                show_in_view(&culled, layers, visible);
            }
        }
    }
    seen.end_frame();
}

/// Makes `visible`'s list of meshes culled on the GPU those whose layers meet `view_layers`
/// (all where `None`): each one put in is also listed as added this frame (so that it is
/// specialised and queued), each one taken out (its layers do not meet them, or it is culled on
/// the GPU no more) as removed.
fn show_in_view(
    culled: &RenderGpuCulledEntities,
    view_layers: Option<&RenderLayers>,
    visible: &mut RenderVisibleEntities,
) {
    let shown = |layers: &RenderLayers| view_layers.is_none_or(|view| view.intersects(layers));
    let meshes = visible.classes.entry(TypeId::of::<Mesh3d>()).or_default();
    let removed = &mut meshes.removed_entities;
    meshes.entities_gpu_culling.retain(|mesh, _| {
        let keep = culled.entities.get(mesh).is_some_and(shown);
        if !keep {
            removed.push((Entity::PLACEHOLDER, *mesh));
        }
        keep
    });
    let mut added = false;
    for (mesh, layers) in &culled.entities {
        if shown(layers)
            && (meshes.entities_gpu_culling)
                .insert(*mesh, Entity::PLACEHOLDER)
                .is_none()
        {
            meshes.add_entity((Entity::PLACEHOLDER, *mesh));
            added = true;
        }
    }
    if added {
        meshes.sort_added_entities();
    }
}
