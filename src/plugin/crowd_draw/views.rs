//! Every view shown the meshes culled on the GPU, as its layers say.
//!
//! Where Bevy 0.19.1 culls a mesh on the GPU (`NoCpuCulling`, as the crowd's parts are by
//! default), it keeps, per view (a camera, a shadow-casting light's cascade or cube face), a
//! list of such meshes to draw, and adds a mesh to each view's list once: in the frame the mesh
//! starts to be culled on the GPU, after the layers of the views that exist then
//! (`collect_gpu_culled_meshes`, `bevy_pbr`). So, measured on lavapipe:
//! - a view made later shows none of them: a camera spawned after the crowd is drawn, or made
//!   inactive and active again, shows no ped, and a light spawned later, or whose shadows are
//!   turned off and on again, casts no ped's shadow (Bevy makes such views anew, empty). By a
//!   reading of `extract_lights`, so does a sun hidden and shown again; that is handled the same
//!   way, but not shown on pixels: the ped then casts no shadow from the sun with its parts
//!   culled on the CPU either (cause not looked into);
//! - a view's layers changed later are not followed (the open pull request
//!   bevyengine/bevy#25764 fixes it): a camera moved off the crowd's layer still shows it, and
//!   one moved onto it does not
//!   (`crowd_gpu::every_camera_and_light_shows_the_crowd_as_its_layers_say`);
//! - a mesh's layers changed later are not followed: Bevy stores them
//!   (`RenderGpuCulledEntities::update`) but never lists the mesh among those whose layers
//!   changed (`changed_layers`), so no view takes it in or out;
//! - a camera without `RenderLayers` shows every mesh culled on the GPU, whatever its layers,
//!   where Bevy's CPU culling (and `RenderLayers`' own rule) gives it layer 0 alone: the crowd's
//!   ped on layer 1 showed in such a camera, 240/255 off the empty picture
//!   (`crowd_gpu::a_crowd_characters_shadow_and_layer_settings_draw_as_on_bevys_own_meshes`).
//!
//! What mends them, in the render world, each frame:
//! - [`follow_relayered_parts`], before Bevy collects the lists: the crowd's parts whose layers
//!   changed (noted by `passed_on`, which marks their `Mesh3d` changed so that Bevy stores the
//!   new layers) are listed in `changed_layers`, and Bevy follows them.
//! - [`show_gpu_culled_meshes`], after Bevy collects the lists and before meshes are specialised
//!   (the prepass's too) and queued: a view that is new this frame, or whose layers (or its
//!   light's) differ from last frame's, gets every mesh culled on the GPU whose layers meet its
//!   own (layer 0 where it has none), and loses those whose layers do not (and any it still
//!   lists that is culled on the GPU no more), as Bevy does for a mesh new or gone in that frame;
//!   and a camera without layers loses the meshes Bevy listed there this frame on no layer it
//!   sees. It keeps the
//!   views' keys and layers from frame to frame; a frame in which no view changes and no mesh
//!   comes costs a lookup, an insert and a copy of the layers per view.
//!
//! The lists are Bevy's for every mesh culled on the GPU, so the app's own meshes with
//! `NoCpuCulling` are shown by new and changed views, and by cameras without layers, as their
//! layers say too (a mesh's own layers changed later are followed for the crowd's parts only).

use super::state::CrowdDraw;
use bevy::camera::visibility::RenderLayers;
use bevy::pbr::RenderGpuCulledEntities;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::sync_world::{MainEntity, MainEntityHashSet};
use bevy::render::view::{
    ExtractedView, RenderExtractedShadowMapVisibleEntities, RenderShadowMapVisibleEntities,
    RenderVisibleEntities, RenderVisibleEntitiesClass, RetainedViewEntity,
};
use std::any::TypeId;

/// The crowd's parts whose `RenderLayers` were given, changed or taken off (with their
/// character's) this frame and the one before, for [`follow_relayered_parts`].
#[derive(Resource, Default)]
pub(super) struct RelayeredParts {
    now: Vec<MainEntity>,
    before: Vec<MainEntity>,
}

/// Takes the parts the main world noted as relayered this frame ([`CrowdDraw::relayered`]),
/// while the crowd's bones are extracted (`extract_crowd_bones`, which has the main world).
pub(super) fn take_relayered(draw: &mut CrowdDraw, parts: &mut RelayeredParts) {
    std::mem::swap(&mut parts.now, &mut parts.before);
    parts.now.clear();
    parts
        .now
        .extend(draw.relayered.drain(..).map(MainEntity::from));
}

/// Whether a part was relayered this frame or the one before.
pub(super) fn any_relayered(parts: Res<RelayeredParts>) -> bool {
    !(parts.now.is_empty() && parts.before.is_empty())
}

/// Lists the relayered parts culled on the GPU among the meshes whose layers changed this frame
/// (`RenderGpuCulledEntities::changed_layers`), which Bevy 0.19.1 never fills: Bevy then shows
/// each in the views its new layers meet, and in no other. Their new layers are in Bevy's table
/// once the part is extracted again (`passed_on` marks its `Mesh3d` changed); the parts of the
/// frame before are listed again, in case one was not (a mesh listed whose layers did not change
/// changes nothing).
pub(super) fn follow_relayered_parts(
    parts: Res<RelayeredParts>,
    mut culled: ResMut<RenderGpuCulledEntities>,
) {
    let culled = &mut *culled;
    for part in parts.now.iter().chain(&parts.before) {
        if culled.entities.contains_key(part) {
            culled.changed_layers.push(*part);
        }
    }
}

/// The views seen in the last frame, each with its layers (`None`: it has none, and sees layer
/// 0), and a second table kept for its memory.
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
/// layers meet, and takes from it those they do not; and takes from a camera without layers
/// (layer 0 alone) the meshes Bevy listed there this frame on no layer it sees (the module's
/// doc says why).
pub(super) fn show_gpu_culled_meshes(
    culled: Res<RenderGpuCulledEntities>,
    mut cameras: Query<(
        &ExtractedView,
        Option<&RenderLayers>,
        &mut RenderVisibleEntities,
    )>,
    mut lights: Query<(
        Option<&RenderLayers>,
        &mut RenderShadowMapVisibleEntities,
        Has<RenderExtractedShadowMapVisibleEntities>,
    )>,
    mut seen: Local<SeenViews>,
) {
    let layer_0 = RenderLayers::default();
    for (view, layers, mut visible) in &mut cameras {
        if seen.changed(view.retained_view_entity, layers) {
            show_in_view(&culled, layers.unwrap_or(&layer_0), &mut visible);
        } else if layers.is_none() && !(culled.added.is_empty() && culled.changed_layers.is_empty())
        {
            let meshes = visible.classes.entry(TypeId::of::<Mesh3d>()).or_default();
            let off_layer_0 = (culled.added.iter())
                .chain(&culled.changed_layers)
                .filter(|mesh| {
                    (culled.entities.get(*mesh)).is_some_and(|layers| !layer_0.intersects(layers))
                })
                .copied();
            take_out(meshes, off_layer_0);
        }
    }
    for (layers, mut shadow_views, extracted) in &mut lights {
        // A hidden directional light keeps its views' lists but not what was extracted for
        // them, and is given new, empty lists when shown again (`extract_lights`): its views
        // are not seen while it is hidden, so that they are new then.
        if !extracted {
            continue;
        }
        let changed: Vec<RetainedViewEntity> = (shadow_views.subviews.keys())
            .filter(|view| seen.changed(**view, layers))
            .copied()
            .collect();
        for view in changed {
            if let Some(visible) = shadow_views.subviews.get_mut(&view) {
                show_in_view(&culled, layers.unwrap_or(&layer_0), visible);
            }
        }
    }
    seen.end_frame();
}

/// Makes `visible`'s list of meshes culled on the GPU those whose layers meet `view_layers`:
/// each one put in is also listed as added this frame (so that it is specialised and queued),
/// each one taken out (its layers do not meet them, or it is culled on the GPU no more) as
/// [`take_out`] says.
fn show_in_view(
    culled: &RenderGpuCulledEntities,
    view_layers: &RenderLayers,
    visible: &mut RenderVisibleEntities,
) {
    let meshes = visible.classes.entry(TypeId::of::<Mesh3d>()).or_default();
    let out: Vec<MainEntity> = (meshes.entities_gpu_culling.keys())
        .filter(|mesh| {
            !(culled.entities.get(*mesh)).is_some_and(|layers| view_layers.intersects(layers))
        })
        .copied()
        .collect();
    take_out(meshes, out);
    let mut added = false;
    for (mesh, layers) in &culled.entities {
        if view_layers.intersects(layers)
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

/// Takes `out` out of a view's list of meshes culled on the GPU: each one listed as added this
/// frame (Bevy put it there) is struck from that list, as never shown; the others are listed as
/// removed this frame. (In one pass over the added ones, however many go.)
fn take_out(meshes: &mut RenderVisibleEntitiesClass, out: impl IntoIterator<Item = MainEntity>) {
    let mut struck: MainEntityHashSet = (out.into_iter())
        .filter(|mesh| meshes.entities_gpu_culling.remove(mesh).is_some())
        .collect();
    if struck.is_empty() {
        return;
    }
    (meshes.added_entities).retain(|(_, mesh)| !struck.remove(mesh));
    (meshes.removed_entities).extend(struck.into_iter().map(|mesh| (Entity::PLACEHOLDER, mesh)));
}
