//! Layers: clips of any open file played over the clip on show ([`ClipLayers`]), each with its
//! weight, fades, the games' flags, an additive choice and a bone mask. `--layer NAME[:WEIGHT]`
//! (repeatable) adds them from the command line, so that a layered pose can be shot without
//! the window.

use crate::files::{Loaded, Preview, view};
use bevy::prelude::*;
use bevy_egui::egui;
use rigplay::animation::layers::{BoneMask, Layer, LayerFlags};
use rigplay::plugin::*;
use rigplay_preview::clips::{Pick, pick};

/// The layers asked for on the command line, and the character they were put on.
#[derive(Resource, Default)]
pub struct LayerArgs {
    pub wanted: Vec<(String, f32)>,
    pub done_for: Option<Entity>,
}

/// Parses `NAME[:WEIGHT]` (a weight from 0 to 1, 1 when not given).
pub fn parse_layer(arg: &str) -> Result<(String, f32), String> {
    match arg.rsplit_once(':') {
        Some((name, w)) if !name.is_empty() => match w.parse::<f32>() {
            Ok(w) if (0.0..=1.0).contains(&w) => Ok((name.to_owned(), w)),
            _ => Err(format!(
                "--layer {arg}: the weight after ':' is a number from 0 to 1"
            )),
        },
        _ if !arg.is_empty() => Ok((arg.to_owned(), 1.0)),
        _ => Err("--layer takes NAME[:WEIGHT]".to_owned()),
    }
}

/// Every skeletal clip of the open files: (label, clip name, handle).
fn open_clips(preview: &Preview, loaded: &Loaded) -> Vec<(String, String, Handle<RigClip>)> {
    let mut out = Vec::new();
    for (f, file) in preview.files.iter().enumerate() {
        let Some(v) = view(f, file, loaded) else {
            continue;
        };
        let stem = file
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for c in v.clips {
            if let Some(h) = c.handle {
                out.push((format!("{stem} · {}", c.name), c.name, h));
            }
        }
    }
    out
}

/// Whether a clip keys no pelvis or leg bone: an upper-body clip, which the games play as a
/// partial layer (34 of San Andreas' 330 ped clips are).
fn is_upper_body(registry: &Assets<RigClip>, clip: &Handle<RigClip>) -> bool {
    let Some(info) = registry.get(clip.id()).map(|c| c.info().clone()) else {
        return false;
    };
    let lower = [
        "pelvis", "thigh", "calf", "foot", "toe", "swaist", "upperleg", "lowerleg",
    ];
    !info.clip.tracks().iter().any(|t| {
        let name = t.bone.name.to_ascii_lowercase();
        lower.iter().any(|l| name.contains(l)) || t.bone.id == Some(1)
    })
}

/// A layer as the preview adds it: partial when the clip is an upper-body clip.
fn new_layer(
    registry: &Assets<RigClip>,
    clip: Handle<RigClip>,
    weight: f32,
) -> Layer<Handle<RigClip>> {
    let partial = is_upper_body(registry, &clip);
    let mut layer = Layer::new(clip).with_flags(LayerFlags {
        partial,
        ..LayerFlags::default()
    });
    // A weight from the command line is checked already; the panel's slider stays in range.
    let _ = layer.set_weight(weight);
    layer
}

/// Puts the `--layer` clips on the character on show, once its clip is there; exits with
/// status 1 and the closest names when one is missing.
#[allow(clippy::too_many_arguments)] // a Bevy system: one parameter per thing it reads
pub fn apply_layer_args(
    mut commands: Commands,
    mut args: ResMut<LayerArgs>,
    preview: Res<Preview>,
    loaded: Loaded,
    registry: Res<Assets<RigClip>>,
    skeletal: Query<&SkeletalClip>,
    assets: Res<AssetServer>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(character) = preview.character else {
        return;
    };
    if args.wanted.is_empty() || args.done_for == Some(character) || !skeletal.contains(character) {
        return;
    }
    let names = crate::files::clip_names(&preview, &loaded, &assets);
    let mut layers = ClipLayers::default();
    for (name, weight) in &args.wanted {
        match pick(&names, name) {
            Pick::Found(f, c) => {
                let Some(handle) = view(f, &preview.files[f], &loaded)
                    .and_then(|v| v.clips.get(c).and_then(|c| c.handle.clone()))
                else {
                    eprintln!("error: --layer {name}: not a clip that plays on a skeleton");
                    exit.write(AppExit::error());
                    return;
                };
                // Its flags come from its tracks: wait until its entry is registered.
                if !registry.contains(handle.id()) {
                    return;
                }
                layers.push(new_layer(&registry, handle, *weight));
            }
            Pick::Wait => return,
            ref pick @ (Pick::Missing(_) | Pick::Ambiguous(_)) => {
                let problem = pick.problem(name).expect("no clip found");
                eprintln!("error: --layer: {problem}");
                exit.write(AppExit::error());
                return;
            }
        }
    }
    commands.entity(character).insert(layers);
    args.done_for = Some(character);
}

/// What the add controls remember between frames.
#[derive(Default)]
pub struct LayerControls {
    /// The clip to add (index into the open clips).
    pick: Option<usize>,
    /// Fade-in rate (per second) of an added layer; 0 adds it at full weight.
    rate: f32,
}

/// The masks the panel offers.
fn masks() -> [(Option<BoneMask>, &'static str); 6] {
    [
        (None, "whole body"),
        (Some(BoneMask::UpperBody), "upper body"),
        (Some(BoneMask::LowerBody), "lower body"),
        (Some(BoneMask::LeftArm), "left arm"),
        (Some(BoneMask::RightArm), "right arm"),
        (Some(BoneMask::Head), "head"),
    ]
}

/// What the Layers section reads besides the character: the open files and the clips' entries.
pub struct Sources<'a, 'w> {
    pub preview: &'a Preview,
    pub loaded: &'a Loaded<'w>,
    pub registry: &'a Assets<RigClip>,
}

/// The Layers section: every layer over the clip on show, and a clip to add.
pub fn panel(
    ui: &mut egui::Ui,
    controls: &mut LayerControls,
    commands: &mut Commands,
    character: Entity,
    (layers, report): (Option<&mut ClipLayers>, Option<&LayerReport>),
    sources: Sources,
) {
    let Sources {
        preview,
        loaded,
        registry,
    } = sources;
    ui.separator();
    ui.heading("Layers");
    let clips = open_clips(preview, loaded);
    let label = |h: &Handle<RigClip>| {
        clips
            .iter()
            .find(|c| c.2.id() == h.id())
            .map_or_else(|| "(not open)".to_owned(), |c| c.0.clone())
    };
    let mut added = None;
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt("layer clip")
            .selected_text(
                controls
                    .pick
                    .and_then(|i| clips.get(i))
                    .map_or("clip…", |c| c.0.as_str()),
            )
            .width(130.0)
            .show_ui(ui, |ui| {
                for (i, c) in clips.iter().enumerate() {
                    ui.selectable_value(&mut controls.pick, Some(i), &c.0);
                }
            });
        ui.add(
            egui::DragValue::new(&mut controls.rate)
                .range(0.0..=20.0)
                .suffix("/s"),
        )
        .on_hover_text("fade-in rate (weight per second); 0 adds it at once");
        if ui.button("add").clicked()
            && let Some(c) = controls.pick.and_then(|i| clips.get(i))
        {
            added = Some(c.2.clone());
        }
    });
    let Some(layers) = layers else {
        if let Some(clip) = added {
            let mut l = ClipLayers::default();
            push(&mut l, registry, clip, controls.rate);
            commands.entity(character).insert(l);
        }
        ui.label(
            egui::RichText::new("add a clip to play it over the one on show")
                .weak()
                .small(),
        );
        return;
    };
    if let Some(clip) = added {
        push(layers, registry, clip, controls.rate);
    }
    let mut remove = Vec::new();
    let ids: Vec<u32> = layers.layers().iter().map(|l| l.id()).collect();
    for id in ids {
        let Some(layer) = layers.get_mut(id) else {
            continue;
        };
        egui::CollapsingHeader::new(format!("{id}: {}", label(&layer.clip)))
            .id_salt(("layer", id))
            .default_open(true)
            .show(ui, |ui| {
                let mut w = layer.weight();
                if ui
                    .add(egui::Slider::new(&mut w, 0.0..=1.0).text("weight"))
                    .changed()
                {
                    let _ = layer.set_weight(w);
                }
                ui.horizontal(|ui| {
                    if ui.button("fade in").clicked() {
                        let _ = layer.set_blend_delta(2.0);
                    }
                    if ui.button("fade out").clicked() {
                        let _ = layer.set_blend_delta(-2.0);
                    }
                    if ui.button("remove").clicked() {
                        remove.push(id);
                    }
                });
                let f = &mut layer.flags;
                ui.horizontal_wrapped(|ui| {
                    ui.checkbox(&mut f.partial, "partial");
                    ui.checkbox(&mut f.movement, "movement");
                    ui.checkbox(&mut f.freeze_last_frame, "freeze");
                    ui.checkbox(&mut f.remove_when_faded, "remove faded");
                    ui.checkbox(&mut f.root_translation, "root motion");
                });
                let mut additive = layer.additive.is_some();
                if ui
                    .checkbox(&mut additive, "additive (against its first frame)")
                    .changed()
                {
                    layer.additive = additive.then_some(0.0);
                }
                let shown = masks()
                    .into_iter()
                    .find(|m| m.0 == layer.mask)
                    .map_or("bones…", |m| m.1);
                egui::ComboBox::from_id_salt(("mask", id))
                    .selected_text(shown)
                    .show_ui(ui, |ui| {
                        for (m, name) in masks() {
                            ui.selectable_value(&mut layer.mask, m, name);
                        }
                    });
                ui.label(
                    egui::RichText::new(format!(
                        "{:.3} s{}",
                        layer.playhead.time,
                        layer
                            .duration()
                            .map_or(String::new(), |d| format!(" / {d:.3} s"))
                    ))
                    .monospace()
                    .small(),
                );
            });
    }
    for id in remove {
        layers.remove(id);
    }
    if let Some(r) = report {
        let warn = |ui: &mut egui::Ui, s: String| {
            ui.label(
                egui::RichText::new(s)
                    .color(egui::Color32::from_rgb(230, 180, 60))
                    .small(),
            );
        };
        for l in &r.clips_not_loaded {
            warn(ui, format!("layer {l}: its clip is not loaded"));
        }
        for (l, names) in &r.unknown_mask_bones {
            warn(
                ui,
                format!(
                    "layer {l}: the mask names what the character lacks: {}",
                    names.join(", ")
                ),
            );
        }
        for (l, tracks) in &r.unmatched_tracks {
            warn(
                ui,
                format!("layer {l}: {} tracks match no bone", tracks.len()),
            );
        }
    }
}

fn push(layers: &mut ClipLayers, registry: &Assets<RigClip>, clip: Handle<RigClip>, rate: f32) {
    if rate > 0.0 {
        let flags = new_layer(registry, clip.clone(), 1.0).flags;
        // Fades in at the rate; the others of its kind stay (the panel does not replace them).
        let mut layer = Layer::new(clip).with_flags(flags);
        let _ = layer.set_weight(0.0);
        let _ = layer.set_blend_delta(rate);
        layers.push(layer);
    } else {
        layers.push(new_layer(registry, clip, 1.0));
    }
}

/// The layers' playheads on the timeline: a thin mark per layer at the same fraction of its
/// clip as the fraction of the timeline, coloured by layer.
pub fn timeline_marks(painter: &egui::Painter, rect: egui::Rect, layers: &ClipLayers) {
    const COLOURS: [egui::Color32; 4] = [
        egui::Color32::from_rgb(90, 190, 250),
        egui::Color32::from_rgb(140, 230, 120),
        egui::Color32::from_rgb(240, 120, 200),
        egui::Color32::from_rgb(200, 160, 255),
    ];
    for (i, layer) in layers.layers().iter().enumerate() {
        let Some(d) = layer.duration().filter(|d| *d > 0.0) else {
            continue;
        };
        let x = egui::remap(layer.playhead.time / d, 0.0..=1.0, rect.x_range());
        let y = rect.top() + 4.0 + 6.0 * (i % 5) as f32;
        let colour = COLOURS[i % COLOURS.len()];
        painter.line_segment(
            [egui::pos2(x, y), egui::pos2(x, rect.bottom() - 14.0)],
            egui::Stroke::new(1.5, colour.gamma_multiply(0.4 + 0.6 * layer.weight())),
        );
        painter.circle_filled(egui::pos2(x, y), 3.0, colour);
    }
}
