//! What every rigplay asset loader shares: reading the bytes, logging what the reader
//! tolerated, the error type, and sub-asset paths.

use crate::plugin::meta::{MetaProblems, log_meta_problems};
use bevy::asset::io::Reader;
use bevy::asset::{AssetPath, LoadContext};
use bevy::log::warn;
use std::fmt::Display;

/// Why a rigplay asset did not load: the bytes could not be read, or the reader refused them
/// (its message names the byte offset and what was expected there). Bevy's asset server adds
/// the file's path when it logs it, and the app runs on.
#[derive(Debug, thiserror::Error)]
pub enum AssetLoadError<E: std::error::Error + Send + Sync + 'static> {
    /// The asset source could not deliver the file.
    #[error("could not read the file: {0}")]
    Io(#[from] std::io::Error),
    /// The file is not one the format's reader accepts.
    #[error("{0}")]
    Format(#[source] E),
}

/// Reads the whole file.
pub(crate) async fn read_bytes(reader: &mut dyn Reader) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).await?;
    Ok(bytes)
}

/// What every rigplay loader does first: reads the whole file, hands it to the format's reader
/// (`parse`, its refusal the load's error), and logs with the file's path what was wrong in the
/// settings' `.meta` and what the reader tolerated (`warnings_of`). Returns what the reader made
/// and those lines, for the asset's `warnings`.
pub(crate) async fn read_file<R, W: Display, E: std::error::Error + Send + Sync + 'static>(
    reader: &mut dyn Reader,
    context: &LoadContext<'_>,
    meta: &MetaProblems,
    parse: impl FnOnce(&[u8]) -> Result<R, E>,
    warnings_of: impl FnOnce(&R) -> &[W],
) -> Result<(R, Vec<String>), AssetLoadError<E>> {
    let bytes = read_bytes(reader).await?;
    let read = parse(&bytes).map_err(AssetLoadError::Format)?;
    let mut warnings = log_meta_problems(context, meta);
    warnings.extend(log_warnings(context, warnings_of(&read)));
    Ok((read, warnings))
}

/// Logs each warning of a reader with the file's path, and returns them as lines.
pub(crate) fn log_warnings<W: Display>(context: &LoadContext, warnings: &[W]) -> Vec<String> {
    let lines: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    for w in &lines {
        warn!("{}: {w}", context.path());
    }
    lines
}

/// The asset path of a sub-asset `label` of the file at `path`.
pub(crate) fn labelled(
    path: impl Into<AssetPath<'static>>,
    label: impl Display,
) -> AssetPath<'static> {
    path.into().with_label(label.to_string())
}
