//! The curves of the selected bone: its track's rotation (Euler angles in degrees, or the
//! quaternion's components) and translation over the clip, with its keys, the playhead, and
//! click-to-seek. The sampling and angle unwrapping are `rigplay_preview::curves`.

use bevy_egui::egui;
use rigplay::animation::Clip;
pub use rigplay_preview::curves::CurveMode;
use rigplay_preview::curves::{Curves, curves, value_at, value_range};

/// Samples over the clip (the keys are sampled too).
const SAMPLES: usize = 200;
/// Height of one plot.
const PLOT_HEIGHT: f32 = 110.0;

const COLORS: [egui::Color32; 4] = [
    egui::Color32::from_rgb(235, 80, 80),
    egui::Color32::from_rgb(90, 200, 90),
    egui::Color32::from_rgb(90, 140, 250),
    egui::Color32::from_gray(170),
];
const NAMES: [&str; 4] = ["x", "y", "z", "w"];

/// Draws the curves of `track` of `clip` over `0..=duration` (the clip's own duration when
/// `duration` is not positive) with the playhead at `time`, and a switch between Euler angles
/// and quaternion components. Returns the time clicked or dragged to on a plot, to seek to.
pub fn bone_curves(
    ui: &mut egui::Ui,
    clip: &Clip,
    track: usize,
    time: f32,
    duration: f32,
    mode: &mut CurveMode,
) -> Option<f32> {
    let span = [duration, clip.duration()]
        .into_iter()
        .find(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    let Some(c) = curves(clip, track, span, SAMPLES, *mode) else {
        ui.label(egui::RichText::new("this clip has no track for the bone").weak());
        return None;
    };
    ui.horizontal(|ui| {
        for m in CurveMode::ALL {
            ui.selectable_value(mode, m, m.label());
        }
    });
    let [r, t, s] = c.key_counts;
    ui.label(
        egui::RichText::new(format!("keys: rotation {r}, translation {t}, scale {s}")).small(),
    );
    let mut seek = None;
    let rotation = match mode {
        CurveMode::Euler => ("rotation (°)", 1.0, 1),
        CurveMode::Quaternion => ("rotation (quaternion)", 0.01, 3),
    };
    for (title, series, keys, (min_span, decimals)) in [
        (
            rotation.0,
            &c.rotation,
            &c.rotation_keys,
            (rotation.1, rotation.2),
        ),
        (
            "translation (file units)",
            &c.translation,
            &c.translation_keys,
            (0.01, 3),
        ),
    ] {
        if series.is_empty() {
            ui.label(egui::RichText::new(format!("{title}: no keys")).weak());
            continue;
        }
        legend(ui, title, series.len());
        let plot = Plot {
            curves: &c,
            series,
            keys,
            span,
            min_span,
            decimals,
        };
        seek = plot.show(ui, time).or(seek);
    }
    seek
}

fn legend(ui: &mut egui::Ui, title: &str, components: usize) {
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new(title).small());
        for i in 0..components.min(4) {
            ui.label(egui::RichText::new(NAMES[i]).color(COLORS[i]).small());
        }
    });
}

struct Plot<'a> {
    curves: &'a Curves,
    series: &'a [Vec<f32>],
    keys: &'a [f32],
    span: f32,
    /// The smallest value range shown (a flat curve sits in the middle of it).
    min_span: f32,
    decimals: usize,
}

impl Plot<'_> {
    /// Draws the plot; the time clicked or dragged to.
    fn show(&self, ui: &mut egui::Ui, time: f32) -> Option<f32> {
        let size = egui::vec2(ui.available_width().max(60.0), PLOT_HEIGHT);
        let response = ui.allocate_response(size, egui::Sense::click_and_drag());
        let rect = response.rect;
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 3.0, egui::Color32::from_gray(24));
        let area = rect.shrink2(egui::vec2(6.0, 14.0));
        let (lo, hi) = value_range(self.series, self.min_span).unwrap_or((-1.0, 1.0));
        let span = self.span;
        let x = |t: f32| {
            if span > 0.0 {
                egui::remap_clamp(t, 0.0..=span, area.x_range())
            } else {
                area.center().x
            }
        };
        let y = |v: f32| egui::remap_clamp(v, lo..=hi, area.bottom()..=area.top());
        let faint = egui::Stroke::new(1.0, egui::Color32::from_gray(60));
        if lo < 0.0 && hi > 0.0 {
            painter.hline(area.x_range(), y(0.0), faint);
        }
        let times = &self.curves.times;
        for (i, values) in self.series.iter().enumerate() {
            let color = COLORS[i.min(3)];
            if times.len() < 2 {
                // One sample (a clip of no length): the value across the plot.
                if let Some(&v) = values.first().filter(|v| v.is_finite()) {
                    painter.hline(area.x_range(), y(v), egui::Stroke::new(1.5, color));
                }
                continue;
            }
            // Polylines through the finite values; a non-finite one breaks the line.
            let mut run: Vec<egui::Pos2> = Vec::new();
            for (&t, &v) in times.iter().zip(values) {
                if v.is_finite() {
                    run.push(egui::pos2(x(t), y(v)));
                } else {
                    flush(&painter, &mut run, color);
                }
            }
            flush(&painter, &mut run, color);
        }
        // Keys: a tick at the bottom, and a dot on each curve.
        for &k in self.keys.iter().filter(|k| (0.0..=span).contains(*k)) {
            let kx = x(k);
            painter.vline(kx, (rect.bottom() - 6.0)..=rect.bottom(), faint);
            for (i, values) in self.series.iter().enumerate() {
                if let Some(v) = value_at(times, values, k).filter(|v| v.is_finite()) {
                    painter.circle_filled(egui::pos2(kx, y(v)), 2.0, COLORS[i.min(3)]);
                }
            }
        }
        if time.is_finite() {
            painter.vline(
                x(time.clamp(0.0, span)),
                rect.y_range(),
                egui::Stroke::new(1.5, egui::Color32::from_rgb(250, 200, 60)),
            );
        }
        let font = egui::FontId::monospace(10.0);
        let text = egui::Color32::from_gray(160);
        let d = self.decimals;
        painter.text(
            rect.left_top() + egui::vec2(4.0, 1.0),
            egui::Align2::LEFT_TOP,
            format!("{hi:.d$}"),
            font.clone(),
            text,
        );
        painter.text(
            rect.left_bottom() + egui::vec2(4.0, -1.0),
            egui::Align2::LEFT_BOTTOM,
            format!("{lo:.d$}"),
            font.clone(),
            text,
        );
        painter.text(
            rect.right_bottom() + egui::vec2(-4.0, -1.0),
            egui::Align2::RIGHT_BOTTOM,
            format!("{span:.2} s"),
            font,
            text,
        );
        if span > 0.0
            && (response.clicked() || response.dragged())
            && let Some(pos) = response.interact_pointer_pos()
        {
            return Some(egui::remap_clamp(pos.x, area.x_range(), 0.0..=span));
        }
        None
    }
}

/// Draws a run of points as a line (a dot when it is one point) and empties it.
fn flush(painter: &egui::Painter, run: &mut Vec<egui::Pos2>, color: egui::Color32) {
    match run.len() {
        0 => {}
        1 => {
            painter.circle_filled(run[0], 1.5, color);
        }
        _ => {
            painter.line(std::mem::take(run), egui::Stroke::new(1.5, color));
        }
    }
    run.clear();
}
