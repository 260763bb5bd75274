//! The Clip section of the Info panel for skeletal clips: root motion per clip, blending with a
//! second clip (a cross-fade, or a blend held at a weight), bone-name labels, and the key counts
//! of the selected bone's track.

use crate::files::{ClipEntry, Preview};
use bevy::prelude::*;
use bevy_egui::egui;
use rigplay::plugin::*;

/// What the blend controls remember between frames.
#[derive(Resource)]
pub struct BlendControls {
    /// The clip (index in the file) to blend with.
    pub other: Option<usize>,
    pub fade: f32,
    /// The weight of `other` held; 0 holds nothing.
    pub hold: f32,
}

impl Default for BlendControls {
    fn default() -> Self {
        Self {
            other: None,
            fade: 0.3,
            hold: 0.0,
        }
    }
}

/// The root motion modes the UI offers.
const MODES: [(RootMotionMode, &str); 4] = [
    (RootMotionMode::Baked, "baked (the root moves)"),
    (RootMotionMode::InPlace, "in place"),
    (RootMotionMode::Extract { z: false }, "extracted (X, Y)"),
    (RootMotionMode::Extract { z: true }, "extracted (X, Y, Z)"),
];

/// How far the root travels over one play of the clip (GTA's X and Y, metres).
fn travel(info: &ClipInfo) -> f32 {
    let (Some(root), clip) = (info.root_track, &info.clip) else {
        return 0.0;
    };
    let at = |t: f32| clip.sample_track(root, t).translation.unwrap_or_default();
    let d = at(clip.duration()) - at(0.0);
    Vec2::new(d.x, d.y).length()
}

/// Root motion of the clip on show, set from the UI: the clip asset is replaced with the new
/// setting, so that the playback binds again with it.
pub fn root_motion(
    ui: &mut egui::Ui,
    registry: &mut ResMut<Assets<RigClip>>,
    clip: &Handle<RigClip>,
    motion: Option<&RootMotion>,
) {
    let Some(info) = registry.get(clip.id()).map(|c| c.info().clone()) else {
        return;
    };
    let mut mode = info.settings.root_motion;
    ui.horizontal(|ui| {
        ui.label("root motion");
        egui::ComboBox::from_id_salt("root motion")
            .selected_text(MODES.iter().find(|m| m.0 == mode).map_or("?", |m| m.1))
            .show_ui(ui, |ui| {
                for (m, label) in MODES {
                    ui.selectable_value(&mut mode, m, label);
                }
            });
    });
    if mode != info.settings.root_motion {
        let settings = ClipSettings {
            root_motion: mode,
            ..info.settings
        };
        if let Some(mut asset) = registry.get_mut(clip.id()) {
            let animation = asset.animation.clone();
            *asset = RigClip::new(info.with_settings(settings), animation);
        }
    }
    let mut line = format!("travels {:.2} m per play", travel(&info));
    if let Some(m) = motion
        && matches!(mode, RootMotionMode::Extract { .. })
    {
        line += &format!(", moved {:.2} m", m.total.length());
    }
    ui.label(egui::RichText::new(line).small());
}

/// Blending with another clip of the same file: a cross-fade over `fade` seconds (the list then
/// shows the new clip), or a blend held at a weight.
pub fn blend(
    ui: &mut egui::Ui,
    controls: &mut BlendControls,
    preview: &mut Preview,
    clips: &[ClipEntry],
    skeletal: &mut SkeletalClip,
) {
    let Some((f, c)) = preview.current else {
        return;
    };
    ui.horizontal(|ui| {
        ui.label("blend with");
        let name = |i: usize| format!("{} #{i}", clips[i].name);
        egui::ComboBox::from_id_salt("blend with")
            .selected_text(controls.other.map_or("—".into(), name))
            .width(120.0)
            .show_ui(ui, |ui| {
                for (i, clip) in clips.iter().enumerate() {
                    if i != c && clip.handle.is_some() {
                        ui.selectable_value(&mut controls.other, Some(i), name(i));
                    }
                }
            });
    });
    let Some(other) = controls.other.filter(|&o| o != c && o < clips.len()) else {
        return;
    };
    let Some(handle) = clips[other].handle.clone() else {
        return;
    };
    ui.horizontal(|ui| {
        ui.add(egui::Slider::new(&mut controls.fade, 0.0..=2.0).text("s"));
        if ui.button("cross-fade").clicked() {
            skeletal.cross_fade(handle.clone(), controls.fade);
            controls.hold = 0.0;
            // The list shows the clip faded to; the character stays (no respawn).
            preview.current = Some((f, other));
            preview.faded_to = Some((f, other));
            controls.other = Some(c);
        }
    });
    let before = controls.hold;
    ui.add(egui::Slider::new(&mut controls.hold, 0.0..=1.0).text("held weight"));
    if controls.hold != before {
        if controls.hold > 0.0 {
            skeletal.hold_blend(handle, controls.hold);
        } else {
            skeletal.clear_blend();
        }
    }
}

/// The key counts of a bone's track in the clip: rotation, translation, scale.
pub fn key_counts(ui: &mut egui::Ui, info: &ClipInfo, target: bevy::animation::AnimationTargetId) {
    for (i, (t, desc)) in info.tracks.iter().enumerate() {
        if *t != target {
            continue;
        }
        let track = &info.clip.tracks()[i];
        let n = |c: Option<rigplay::animation::Channel>| c.map_or(0, |c| c.len());
        ui.label(
            egui::RichText::new(format!(
                "track {desc}: {} rotation, {} translation, {} scale keys",
                n(track.rotation),
                n(track.translation),
                n(track.scale)
            ))
            .small(),
        );
    }
}
