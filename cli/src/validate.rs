//! `rigplay validate FILE...`: whether each file reads, with its warnings or its error.

use crate::load::{Loaded, load};
use crate::{Args, Failure, usage};

pub(crate) fn validate(a: Args) -> Result<(), Failure> {
    if a.positional.is_empty() {
        return Err(usage("validate takes one or more FILEs"));
    }
    let mut failed = 0;
    for path in &a.positional {
        match load(path) {
            Ok(loaded) => {
                let warnings: Vec<String> = match &loaded {
                    Loaded::Ifp(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Dan(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Anie(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Dff(r) => r.warnings.iter().map(ToString::to_string).collect(),
                    Loaded::Txd(r) => r.warnings.iter().map(ToString::to_string).collect(),
                };
                out!(
                    "ok    {path} ({} warning{})",
                    warnings.len(),
                    if warnings.len() == 1 { "" } else { "s" }
                );
                for w in &warnings {
                    out!("      warning: {w}");
                }
            }
            Err(Failure(message, _)) => {
                failed += 1;
                out!("error {message}");
            }
        }
    }
    if failed > 0 {
        return Err(Failure(
            format!("{failed} of {} files failed", a.positional.len()),
            1,
        ));
    }
    Ok(())
}
