//! The "Save as…" panel of an open IFP file: a converted copy (another version, fewer keys),
//! written by the same library call as `rigplay convert` (`rigplay_preview::convert`, whose
//! tests check that both write the same bytes). The conversion runs on a thread of its own, so
//! that reducing a large package does not freeze the window.

use bevy::prelude::Resource;
use bevy_egui::egui;
use rigplay::formats::ifp::{IfpFile, IfpVersion};
pub use rigplay_preview::convert::{ConvertSettings, Reduction, Summary};
use rigplay_preview::convert::{default_output, save};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// The converted file's bytes and what they hold, or why it cannot be written: what Save
/// writes, and what `rigplay convert` writes for [`ConvertSettings::cli_args`].
#[allow(dead_code)] // the panel saves through `save`; this is for callers that want the bytes
pub fn convert_bytes(
    package: &IfpFile,
    settings: &ConvertSettings,
) -> Result<(Vec<u8>, Summary), String> {
    rigplay_preview::convert::convert_bytes(package, settings)
}

/// What the panel remembers between frames.
#[derive(Resource, Default)]
pub struct ConvertState {
    pub settings: ConvertSettings,
    /// The file name typed in; back to the default beside the source when the source changes.
    pub path: String,
    /// The source the path and the last result are for.
    source: Option<PathBuf>,
    /// A save in progress: the file it writes, and the thread writing it.
    pending: Option<(PathBuf, JoinHandle<Result<Summary, String>>)>,
    /// The last save: the file, and what it wrote or why it failed.
    last: Option<(PathBuf, Result<Summary, String>)>,
}

const RED: egui::Color32 = egui::Color32::from_rgb(240, 90, 80);

/// The panel: target version, key reduction (off, lossless runs, bounded with a tolerance),
/// the file to write (`NAME.converted.ifp` beside `source_path` by default), a Save button,
/// and after saving the key counts before and after and the largest error, or the error in red.
pub fn convert_panel(
    ui: &mut egui::Ui,
    state: &mut ConvertState,
    package: &IfpFile,
    source_path: &Path,
) {
    if state.source.as_deref() != Some(source_path) {
        state.source = Some(source_path.to_path_buf());
        state.path = default_output(source_path).display().to_string();
        state.last = None;
    }
    let settings = &mut state.settings;
    ui.horizontal(|ui| {
        ui.label("version");
        for v in [IfpVersion::Anpk, IfpVersion::Anp3] {
            ui.selectable_value(&mut settings.version, v, v.magic())
                .on_hover_text(match v {
                    IfpVersion::Anpk => "GTA III and Vice City: float keys",
                    _ => "San Andreas: int16 keys where every value fits",
                });
        }
    });
    ui.horizontal(|ui| {
        ui.label("keys");
        for r in Reduction::ALL {
            ui.selectable_value(&mut settings.reduction, r, r.label())
                .on_hover_text(match r {
                    Reduction::Off => "keep every key",
                    Reduction::Runs => "drop the inside of runs of equal keys (lossless)",
                    Reduction::Bounded => {
                        "drop every key its neighbours reproduce within the tolerance"
                    }
                });
        }
    });
    if settings.reduction == Reduction::Bounded {
        let mut mm = settings.tolerance * 1000.0;
        let slider = egui::Slider::new(&mut mm, 0.01..=20.0)
            .logarithmic(true)
            .suffix(" mm")
            .text("tolerance");
        if ui
            .add(slider)
            .on_hover_text(
                "the largest distance any point 3 cm from a bone may move, parents included",
            )
            .changed()
        {
            settings.tolerance = mm / 1000.0;
        }
    }
    ui.horizontal(|ui| {
        ui.label("Save as…");
        ui.add(egui::TextEdit::singleline(&mut state.path).desired_width(f32::INFINITY));
    });
    ui.label(
        egui::RichText::new(format!(
            "same as: rigplay convert IN OUT {}",
            state.settings.cli_args().join(" ")
        ))
        .weak()
        .small(),
    );

    if let Some((_, handle)) = &state.pending
        && handle.is_finished()
        && let Some((path, handle)) = state.pending.take()
    {
        let result = handle
            .join()
            .unwrap_or_else(|_| Err("the conversion failed unexpectedly".to_owned()));
        state.last = Some((path, result));
    }
    ui.horizontal(|ui| {
        let busy = state.pending.is_some();
        if ui.add_enabled(!busy, egui::Button::new("Save")).clicked() {
            let path = PathBuf::from(state.path.trim());
            let (package, settings, source) =
                (package.clone(), state.settings, source_path.to_path_buf());
            let target = path.clone();
            let handle = std::thread::spawn(move || save(&package, &settings, &source, &target));
            state.pending = Some((path, handle));
            state.last = None;
        }
        if busy {
            ui.spinner();
            ui.label("converting…");
            ui.ctx().request_repaint();
        }
    });
    match &state.last {
        Some((path, Ok(s))) => {
            ui.label(format!(
                "wrote {}: {}, {} clips, {} bytes",
                path.display(),
                s.version,
                s.clips,
                s.bytes
            ));
            let percent = if s.keys_before > 0 {
                s.keys_after as f64 * 100.0 / s.keys_before as f64
            } else {
                100.0
            };
            ui.label(format!(
                "keys {} → {} ({percent:.1} %)",
                s.keys_before, s.keys_after
            ));
            match s.max_error {
                Some(e) => ui.label(format!("max error {:.3} mm as written", e * 1000.0)),
                None => ui.label(egui::RichText::new("the file did not read back").color(RED)),
            };
            for n in &s.notes {
                ui.label(egui::RichText::new(format!("note: {n}")).small());
            }
        }
        Some((_, Err(e))) => {
            ui.label(egui::RichText::new(e).color(RED));
        }
        None => {}
    }
}
