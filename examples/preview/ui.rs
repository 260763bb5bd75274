//! The egui panels: transport and timeline (bottom), files and clips (left), info and the bone
//! tree (right).

use crate::camera::UiPointer;
use crate::clip_panel::{self, BlendControls};
use crate::convert::{self, ConvertState};
use crate::curves::{self, CurveMode};
use crate::files::{DEFAULT_FPS, Loaded, Preview, load_error, model_info, rows, view};
use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use rigplay::plugin::*;
use rigplay_preview::clips::{self, SortBy, visible};

/// The colour of errors.
const ERROR_RED: egui::Color32 = egui::Color32::from_rgb(235, 90, 80);

/// What the panels show and change of the character on show.
type Shown = (
    &'static mut Playback,
    Option<&'static mut SkeletalClip>,
    Option<&'static UnmatchedTracks>,
    Option<&'static RootMotion>,
    Option<&'static mut AnieRig>,
);

/// The layers over the clip on show, and what is wrong with them.
type Layered = (
    Option<&'static mut ClipLayers>,
    Option<&'static LayerReport>,
);

#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it shows
pub fn ui(
    mut contexts: EguiContexts,
    mut preview: ResMut<Preview>,
    mut pointer: ResMut<UiPointer>,
    loaded: Loaded,
    mut registry: ResMut<Assets<RigClip>>,
    mut playbacks: Query<Shown>,
    children: Query<&Children>,
    parents: Query<&ChildOf>,
    rig_bones: Query<(&Name, &RigBone)>,
    reports: Query<&RetargetReport>,
    (assets, models): (Res<AssetServer>, Res<Assets<Dff>>),
    (mut blend_controls, mut gizmo_settings): (ResMut<BlendControls>, ResMut<SkeletonGizmos>),
    (mut convert_state, mut curve_mode): (Local<ConvertState>, Local<CurveMode>),
    mut time: ResMut<Time<Virtual>>,
    (mut layered, mut commands, mut layer_controls): (
        Query<Layered>,
        Commands,
        Local<crate::layers_panel::LayerControls>,
    ),
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    let mut root = egui::Ui::new(
        ctx.clone(),
        "viewport".into(),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(ctx.viewport_rect()),
    );
    let current = preview.current;

    let character = preview.character;
    let mut selected_bone = preview.selected_bone;
    let info = character
        .and_then(|c| playbacks.get(c).ok())
        .and_then(|(_, s, _, _, _)| s.map(|s| s.clip.clone()))
        .and_then(|clip| registry.get(clip.id()).map(|c| c.info().clone()));
    let (fps, duration) = current
        .and_then(|(f, c)| {
            view(f, &preview.files[f], &loaded)
                .and_then(|v| v.clips.get(c).map(|clip| (clip.fps, clip.duration)))
        })
        .unwrap_or((DEFAULT_FPS, 0.0));

    // Transport and timeline.
    egui::Panel::bottom("timeline")
        .resizable(false)
        .exact_size(118.0)
        .show(&mut root, |ui| {
            let Some(c) = character else { return };
            let Ok((mut playback, _, _, _, rig)) = playbacks.get_mut(c) else {
                return;
            };
            ui.horizontal(|ui| {
                if ui
                    .button(if playback.paused {
                        "▶ Play"
                    } else {
                        "⏸ Pause"
                    })
                    .clicked()
                {
                    playback.paused = !playback.paused;
                }
                let frame = 1.0 / fps;
                if ui.button("◀ frame").clicked() {
                    playback.paused = true;
                    let t = (playback.time - frame).max(0.0);
                    playback.seek(t);
                }
                if ui.button("frame ▶").clicked() {
                    playback.paused = true;
                    let t = (playback.time + frame).min(duration);
                    playback.seek(t);
                }
                ui.add(egui::Slider::new(&mut playback.speed, -2.0..=2.0).text("speed"));
                egui::ComboBox::from_id_salt("mode")
                    .selected_text(format!("{:?}", playback.mode))
                    .show_ui(ui, |ui| {
                        for m in [PlayMode::Loop, PlayMode::Once, PlayMode::PingPong] {
                            ui.selectable_value(&mut playback.mode, m, format!("{m:?}"));
                        }
                    });
                let mut game_paused = time.is_paused();
                if ui.checkbox(&mut game_paused, "pause game time").changed() {
                    if game_paused {
                        time.pause()
                    } else {
                        time.unpause()
                    }
                }
                ui.label(
                    egui::RichText::new(format!(
                        "{:7.3} s / {:.3} s  (frame {})",
                        playback.time,
                        duration,
                        (playback.time * fps).round()
                    ))
                    .monospace(),
                );
            });
            // Key times of the selected bone's track (all tracks' keys if none is selected).
            let mut keys: Vec<f32> = Vec::new();
            if let Some(info) = &info {
                let target = selected_bone
                    .and_then(|b| rig_bones.get(b).ok())
                    .map(|(_, r)| r.target);
                for (i, track) in info.clip.tracks().iter().enumerate() {
                    if target.is_none() || Some(info.tracks[i].0) == target {
                        for ch in [track.rotation, track.translation].into_iter().flatten() {
                            keys.extend_from_slice(info.clip.times(ch));
                        }
                    }
                }
            }
            let size = egui::vec2(ui.available_width(), 44.0);
            let response = ui.allocate_response(size, egui::Sense::click_and_drag());
            let rect = response.rect;
            let painter = ui.painter();
            painter.rect_filled(rect, 3.0, egui::Color32::from_gray(28));
            if duration > 0.0 {
                let x = |t: f32| egui::remap(t, 0.0..=duration, rect.x_range());
                for &k in &keys {
                    painter.line_segment(
                        [
                            egui::pos2(x(k), rect.bottom() - 12.0),
                            egui::pos2(x(k), rect.bottom()),
                        ],
                        egui::Stroke::new(1.0, egui::Color32::from_gray(150)),
                    );
                }
                if let Ok((Some(layers), _)) = layered.get(c) {
                    crate::layers_panel::timeline_marks(painter, rect, layers);
                }
                let px = x(playback.time);
                painter.line_segment(
                    [egui::pos2(px, rect.top()), egui::pos2(px, rect.bottom())],
                    egui::Stroke::new(2.0, egui::Color32::from_rgb(250, 200, 60)),
                );
                if (response.clicked() || response.dragged())
                    && let Some(pos) = response.interact_pointer_pos()
                {
                    playback.paused = true;
                    let mut t = egui::remap_clamp(pos.x, rect.x_range(), 0.0..=duration);
                    // An AnimeEffects rig shows whole frames: scrub from frame to frame.
                    if rig.is_some() {
                        t = (t * fps).round() / fps;
                    }
                    playback.seek(t);
                }
            }
            ui.label(
                egui::RichText::new(
                    "drag to scrub · left-drag orbit · right-drag pan · wheel zoom",
                )
                .weak()
                .small(),
            );
        });

    // Files and clips: a search box and an order over every file's clip list; up / down step
    // through the shown file's visible clips.
    let mut step = 0;
    if !ctx.egui_wants_keyboard_input() {
        ctx.input(|i| {
            if i.key_pressed(egui::Key::ArrowDown) {
                step = 1;
            }
            if i.key_pressed(egui::Key::ArrowUp) {
                step = -1;
            }
        });
    }
    egui::Panel::left("files")
        .default_size(230.0)
        .show(&mut root, |ui| {
            ui.heading("Files");
            ui.horizontal(|ui| {
                ui.add(
                    egui::TextEdit::singleline(&mut preview.search)
                        .hint_text("search clips")
                        .desired_width(120.0),
                );
                let mut sort = preview.sort;
                egui::ComboBox::from_id_salt("sort")
                    .selected_text(sort.label())
                    .width(80.0)
                    .show_ui(ui, |ui| {
                        for s in SortBy::ALL {
                            ui.selectable_value(&mut sort, s, s.label());
                        }
                    });
                preview.sort = sort;
            });
            let reveal = std::mem::take(&mut preview.reveal) || step != 0;
            let mut pick = None;
            egui::ScrollArea::vertical()
                .id_salt("files")
                .auto_shrink([false; 2])
                .show(ui, |ui| {
                    for (f, file) in preview.files.iter().enumerate() {
                        let name = file
                            .path
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default();
                        let v = view(f, file, &loaded);
                        let failed = load_error(&assets, file);
                        let title = match (&v, &failed) {
                            (_, Some(_)) => egui::RichText::new(name).strong().color(ERROR_RED),
                            _ => egui::RichText::new(name).strong(),
                        };
                        egui::CollapsingHeader::new(title)
                            .id_salt(f)
                            .default_open(true)
                            .show(ui, |ui| match (v, &failed) {
                                (None, Some(e)) => {
                                    ui.label(egui::RichText::new(e).color(ERROR_RED).small());
                                }
                                (Some(v), failed) => {
                                    // A reload that failed: its error, and the last good
                                    // version, which plays on.
                                    if let Some(e) = failed {
                                        ui.label(
                                            egui::RichText::new(format!(
                                                "reload failed, the last good version plays on: {e}"
                                            ))
                                            .color(ERROR_RED)
                                            .small(),
                                        );
                                    }
                                    let rows = rows(&v);
                                    let shown = visible(&rows, &preview.search, preview.sort);
                                    if step != 0
                                        && let Some((cf, cc)) = current
                                        && cf == f
                                        && let Some(next) = clips::step(&shown, Some(cc), step)
                                    {
                                        pick = Some((f, next));
                                    }
                                    if shown.is_empty() && !rows.is_empty() {
                                        ui.label(
                                            egui::RichText::new(format!(
                                                "no clip matches ({} hidden)",
                                                rows.len()
                                            ))
                                            .weak(),
                                        );
                                    }
                                    for &c in &shown {
                                        let selected = pick.unwrap_or_else(|| current.unwrap_or((usize::MAX, 0))) == (f, c);
                                        let r = ui.selectable_label(selected, clips::label(&rows, c));
                                        if r.clicked() {
                                            pick = Some((f, c));
                                        }
                                        if selected && reveal {
                                            r.scroll_to_me(Some(egui::Align::Center));
                                        }
                                    }
                                }
                                (None, None) => {
                                    ui.label(egui::RichText::new("loading…").weak());
                                }
                            });
                    }
                });
            if pick.is_some() {
                preview.current = pick;
            }
            ui.separator();
            ui.label(
                egui::RichText::new("Drop .ifp, .dan or .anie files here to open them, a .dff model or a .glb / .gltf character to play the clips on. ↑ ↓ step through the clips.").weak(),
            );
        });

    // Bones and info.
    egui::Panel::right("bones")
        .default_size(240.0)
        .show(&mut root, |ui| {
            ui.heading("Info");
            if let Some((f, c)) = current
                && let Some(v) = view(f, &preview.files[f], &loaded)
            {
                for line in &v.info {
                    ui.label(line);
                }
                if let Some(clip) = v.clips.get(c) {
                    for line in &clip.info {
                        ui.label(line);
                    }
                }
                for w in &v.warnings {
                    ui.label(
                        egui::RichText::new(format!("⚠ {w}"))
                            .color(egui::Color32::from_rgb(230, 180, 60))
                            .small(),
                    );
                }
                // An IFP package (or a motion file's, as imported): save a converted copy, as
                // `rigplay convert` (or `rigplay import`) writes it.
                if let Some(ifp) = loaded.package(&preview.files[f].handle) {
                    egui::CollapsingHeader::new("Save as…")
                        .id_salt("convert")
                        .show(ui, |ui| {
                            convert::convert_panel(
                                ui,
                                &mut convert_state,
                                &ifp.file,
                                &preview.files[f].path,
                            );
                        });
                }
            }
            // The GTA model: what it holds, and what it lacks.
            if let Some(model) = &preview.model {
                ui.separator();
                let name = model
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                ui.label(egui::RichText::new(format!("model {name}")).strong());
                match models.get(&model.handle) {
                    Some(m) => {
                        let (info, warnings) = model_info(m);
                        for line in info {
                            ui.label(egui::RichText::new(line).small());
                        }
                        for w in warnings {
                            ui.label(
                                egui::RichText::new(format!("⚠ {w}"))
                                    .color(egui::Color32::from_rgb(230, 180, 60))
                                    .small(),
                            );
                        }
                        ui.checkbox(&mut gizmo_settings.enabled, "skeleton over the skin");
                    }
                    None => match assets.get_load_state(model.handle.id()) {
                        Some(bevy::asset::LoadState::Failed(e)) => {
                            ui.label(egui::RichText::new(format!("failed: {e}")).color(ERROR_RED));
                        }
                        _ => {
                            ui.label(egui::RichText::new("loading…").weak());
                        }
                    },
                }
            }
            // The glTF character: its naming convention and bone map.
            if let Some(body) = &preview.body {
                ui.separator();
                let name = body
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                ui.label(egui::RichText::new(format!("character {name}")).strong());
                match body.entity.and_then(|e| reports.get(e).ok()) {
                    Some(r) if !r.report.matched.is_empty() => {
                        ui.label(format!(
                            "{:?} names: {} of {} humanoid bones",
                            r.preset,
                            r.report.matched.len(),
                            r.report.matched.len() + r.report.unmatched.len()
                        ));
                        if !r.report.unmatched.is_empty() {
                            ui.label(
                                egui::RichText::new(format!(
                                    "no bone for {:?}",
                                    r.report.unmatched
                                ))
                                .color(egui::Color32::from_rgb(230, 180, 60))
                                .small(),
                            );
                        }
                        for p in &r.problems {
                            ui.label(
                                egui::RichText::new(format!("⚠ bone map: {p}"))
                                    .color(egui::Color32::from_rgb(230, 180, 60))
                                    .small(),
                            );
                        }
                        egui::CollapsingHeader::new(format!("bone map ({})", r.map.len()))
                            .id_salt("bone map")
                            .show(ui, |ui| {
                                for (gta, bone) in &r.map {
                                    ui.label(
                                        egui::RichText::new(format!("{gta} → {bone}")).small(),
                                    );
                                }
                            });
                    }
                    Some(_) => {
                        ui.label(
                            egui::RichText::new("no humanoid bone found by any naming convention")
                                .color(egui::Color32::from_rgb(230, 180, 60)),
                        );
                    }
                    None if body.entity.is_none() => {
                        ui.label(egui::RichText::new("shown with GTA and DAN clips").weak());
                    }
                    None => {
                        ui.label(egui::RichText::new("loading… (or failed: see the log)").weak());
                    }
                }
            }
            // A skeletal clip: root motion, blending, labels, unmatched tracks.
            if let Some(c) = character
                && let Ok((_, Some(mut skeletal), unmatched, motion, _)) = playbacks.get_mut(c)
            {
                ui.separator();
                let clip = skeletal.clip.clone();
                clip_panel::root_motion(ui, &mut registry, &clip, motion);
                if let Some((f, _)) = current
                    && let Some(v) = view(f, &preview.files[f], &loaded)
                {
                    clip_panel::blend(
                        ui,
                        &mut blend_controls,
                        &mut preview,
                        &v.clips,
                        &mut skeletal,
                    );
                }
                if let Ok((layers, report)) = layered.get_mut(c) {
                    crate::layers_panel::panel(
                        ui,
                        &mut layer_controls,
                        &mut commands,
                        c,
                        (layers.map(|l| l.into_inner()), report),
                        crate::layers_panel::Sources {
                            preview: &preview,
                            loaded: &loaded,
                            registry: &registry,
                        },
                    );
                }
                ui.checkbox(&mut gizmo_settings.names, "bone names in the view");
                for u in unmatched.map(|u| u.0.as_slice()).unwrap_or_default() {
                    ui.label(
                        egui::RichText::new(format!("unmatched track {u}"))
                            .color(egui::Color32::from_rgb(230, 180, 60))
                            .small(),
                    );
                }
            }
            // An AnimeEffects rig: its layers at the current frame.
            if let Some(c) = character
                && let Ok((playback, _, _, _, Some(mut rig))) = playbacks.get_mut(c)
                && let Some(anie) = loaded.anies.get(&rig.project)
            {
                ui.separator();
                ui.heading("Layers");
                let frame = anie.evaluator.evaluate(rig.frame_at(
                    playback.time,
                    anie.frame_rate(),
                    anie.file().max_frame,
                ));
                let project = anie.file().clone();
                egui::ScrollArea::vertical()
                    .id_salt("layers")
                    .max_height(320.0)
                    .auto_shrink([false; 2])
                    .show(ui, |ui| {
                        let mut hidden = rig.hidden.clone();
                        for n in &project.objects {
                            if n.parent.is_none() {
                                for &child in &n.children {
                                    layer_tree(ui, &project, &frame, child, &mut hidden);
                                }
                            }
                        }
                        if hidden != rig.hidden {
                            rig.hidden = hidden;
                        }
                    });
            }
            let flat = character.is_some_and(|c| {
                playbacks
                    .get(c)
                    .is_ok_and(|(_, _, _, _, rig)| rig.is_some())
            });
            if flat {
                return;
            }
            ui.separator();
            ui.heading("Bones");
            if let (Some(info), Some((_, bone))) =
                (&info, selected_bone.and_then(|b| rig_bones.get(b).ok()))
            {
                clip_panel::key_counts(ui, info, bone.target);
                ui.checkbox(&mut preview.show_curves, "curves of the selected bone");
            }
            egui::ScrollArea::vertical()
                .id_salt("bones")
                .auto_shrink([false; 2])
                .show(ui, |ui| {
                    if let Some(c) = character {
                        // The top bones: a GTA skeleton has one root, a flat one many.
                        let tops: Vec<Entity> = children
                            .iter_descendants(c)
                            .filter(|e| rig_bones.contains(*e))
                            .filter(|e| {
                                parents
                                    .get(*e)
                                    .is_ok_and(|p| !rig_bones.contains(p.parent()))
                            })
                            .collect();
                        for top in tops {
                            bone_tree(ui, top, &children, &rig_bones, &mut selected_bone);
                        }
                    }
                });
        });

    // The selected bone's curves, in a window of their own; a click seeks.
    if preview.show_curves
        && let (Some(info), Some((name, bone)), Some(c)) = (
            &info,
            selected_bone.and_then(|b| rig_bones.get(b).ok()),
            character,
        )
        && let Some(track) = info.tracks.iter().position(|(t, _)| *t == bone.target)
        && let Ok((mut playback, _, _, _, _)) = playbacks.get_mut(c)
    {
        let mut open = true;
        egui::Window::new(format!("curves: {}", name.as_str().trim()))
            .id(egui::Id::new("curves"))
            .default_width(520.0)
            .default_pos(egui::pos2(250.0, 330.0))
            .open(&mut open)
            .show(&ctx, |ui| {
                if let Some(t) = curves::bone_curves(
                    ui,
                    &info.clip,
                    track,
                    playback.time,
                    duration,
                    &mut curve_mode,
                ) {
                    playback.paused = true;
                    playback.seek(t);
                }
            });
        preview.show_curves = open;
    }

    let free = root.available_rect_before_wrap();
    pointer.over_ui = ctx.egui_wants_pointer_input()
        || ctx.is_pointer_over_egui()
        || ctx.pointer_hover_pos().is_some_and(|p| !free.contains(p));
    preview.selected_bone = selected_bone;
    Ok(())
}

fn bone_tree(
    ui: &mut egui::Ui,
    bone: Entity,
    children: &Query<&Children>,
    bones: &Query<(&Name, &RigBone)>,
    selected: &mut Option<Entity>,
) {
    let Ok((name, _)) = bones.get(bone) else {
        return;
    };
    let kids: Vec<Entity> = children
        .get(bone)
        .map(|c| c.iter().filter(|e| bones.contains(*e)).collect())
        .unwrap_or_default();
    let text = egui::RichText::new(name.as_str()).color(if *selected == Some(bone) {
        egui::Color32::from_rgb(255, 90, 100)
    } else {
        egui::Color32::from_gray(220)
    });
    if kids.is_empty() {
        if ui.selectable_label(*selected == Some(bone), text).clicked() {
            *selected = Some(bone);
        }
        return;
    }
    let r = egui::CollapsingHeader::new(text)
        .id_salt(bone)
        .default_open(true)
        .show(ui, |ui| {
            for k in kids {
                bone_tree(ui, k, children, bones, selected);
            }
        });
    if r.header_response.clicked() {
        *selected = Some(bone);
    }
}

/// One node of an AnimeEffects project in the Layers panel: a visibility toggle, its name, and
/// for layers their blend mode and opacity at this frame; folders hold their children (first
/// child on top, as in AnimeEffects).
fn layer_tree(
    ui: &mut egui::Ui,
    project: &rigplay::formats::anie::AnieFile,
    frame: &rigplay::anie::eval::EvaluatedFrame,
    node: usize,
    hidden: &mut Vec<usize>,
) {
    let (Some(n), Some(f)) = (project.objects.get(node), frame.nodes.get(node)) else {
        return;
    };
    let mut shown = !hidden.contains(&node);
    let detail = match &f.layer {
        Some(layer) => format!(
            "{:?} · {:.0} %{}",
            layer.blend_mode,
            f.world_opacity * 100.0,
            if n.clipped { " · clipped" } else { "" }
        ),
        None if n.children.is_empty() => format!("{:.0} %", f.world_opacity * 100.0),
        None => String::new(),
    };
    let text = if f.visible {
        egui::RichText::new(&n.name)
    } else {
        egui::RichText::new(&n.name).weak()
    };
    let row = |ui: &mut egui::Ui, shown: &mut bool| {
        let changed = ui.checkbox(shown, text.clone()).changed();
        if !detail.is_empty() {
            ui.label(egui::RichText::new(&detail).small().weak());
        }
        changed
    };
    let toggle = |shown: bool, hidden: &mut Vec<usize>| {
        if shown {
            hidden.retain(|&h| h != node);
        } else {
            hidden.push(node);
        }
    };
    if n.children.is_empty() {
        if ui.horizontal(|ui| row(ui, &mut shown)).inner {
            toggle(shown, hidden);
        }
        return;
    }
    egui::CollapsingHeader::new(egui::RichText::new(format!("📁 {}", n.name)))
        .id_salt(("layer", node))
        .default_open(true)
        .show(ui, |ui| {
            if ui.horizontal(|ui| row(ui, &mut shown)).inner {
                toggle(shown, hidden);
            }
            for &child in &n.children {
                layer_tree(ui, project, frame, child, hidden);
            }
        });
}
