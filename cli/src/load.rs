//! Reading a file of any of rigplay's formats, told apart by `rigplay::formats::FileFormat`.

use crate::Failure;
use rigplay::formats::FileFormat;
use rigplay::formats::anie::{AnieFile, AnieRead};
use rigplay::formats::dan::{DanFile, DanRead};
use rigplay::formats::dff::{DffFile, DffRead};
use rigplay::formats::ifp::{IfpFile, IfpRead};
use rigplay::formats::txd::{TxdFile, TxdRead};

/// A file of any format, told apart by its first bytes or its extension.
pub(crate) enum Loaded {
    Ifp(IfpRead),
    Dan(DanRead),
    Anie(Box<AnieRead>),
    Dff(DffRead),
    Txd(TxdRead),
}

/// The whole file.
pub(crate) fn bytes(path: &str) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure(format!("{path}: {e}"), 1))
}

/// The format its bytes or its extension say ([`FileFormat::detect`]); a file neither tells goes
/// to the IFP reader, whose error names the magic it found instead.
pub(crate) fn detect(path: &str, bytes: &[u8]) -> FileFormat {
    FileFormat::detect(bytes, path).unwrap_or(FileFormat::Ifp)
}

/// Reads the file in the format [`detect`] gives.
pub(crate) fn load(path: &str) -> Result<Loaded, Failure> {
    let bytes = bytes(path)?;
    let failed = |e: &dyn std::fmt::Display| Failure(format!("{path}: {e}"), 1);
    match detect(path, &bytes) {
        FileFormat::Anie => anie(path, &bytes).map(|r| Loaded::Anie(Box::new(r))),
        FileFormat::Dan => DanFile::read(&bytes)
            .map(Loaded::Dan)
            .map_err(|e| failed(&e)),
        FileFormat::Ifp => IfpFile::read(&bytes)
            .map(Loaded::Ifp)
            .map_err(|e| failed(&e)),
        FileFormat::Dff => DffFile::read(&bytes)
            .map(Loaded::Dff)
            .map_err(|e| failed(&e)),
        FileFormat::Txd => TxdFile::read(&bytes)
            .map(Loaded::Txd)
            .map_err(|e| failed(&e)),
    }
}

/// An AnimeEffects project.
pub(crate) fn anie(path: &str, bytes: &[u8]) -> Result<AnieRead, Failure> {
    AnieFile::read(bytes).map_err(|e| Failure(format!("{path}: {e}"), 1))
}

/// A RenderWare model, its reader's warnings printed.
pub(crate) fn dff(path: &str) -> Result<DffFile, Failure> {
    let read = DffFile::read(&bytes(path)?).map_err(|e| Failure(format!("{path}: {e}"), 1))?;
    for w in &read.warnings {
        eprintln!("{path}: {w}");
    }
    Ok(read.file)
}
