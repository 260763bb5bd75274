//! Clip names as a user types them, matched as the games match names: case-insensitively (the
//! games hash names upper-cased, so `FightA_1` and `fighta_1` are one clip to them).
//!
//! Bevy's asset labels are exact (`ped.ifp#walk_civi` finds no `WALK_CIVI`), so a name a user
//! types is resolved here first, against the file's clip names, and the clip's own label (or
//! handle) is used after: an exact match wins; else the one clip whose name differs only in
//! case; two or more such clips are reported, never guessed between; no match at all is
//! reported with the closest names.

/// Why a typed clip name found no clip ([`find_clip`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClipNameError {
    /// No clip has the name in any case.
    #[error("no clip is named {wanted:?}; the closest: {}", closest.join(", "))]
    NotFound {
        /// The name asked for.
        wanted: String,
        /// Up to five of the clips' names closest to it ([`closest`]).
        closest: Vec<String>,
    },
    /// No clip has the exact name, and several have it in other cases.
    #[error(
        "{wanted:?} matches {} clips that differ only in case ({}): give the exact name",
        candidates.len(),
        candidates.join(", ")
    )]
    Ambiguous {
        /// The name asked for.
        wanted: String,
        /// The clips' names that match it, in the file's order.
        candidates: Vec<String>,
    },
}

/// The index in `names` of the clip `wanted` names (see the module documentation).
pub fn find_clip<'a>(
    names: impl IntoIterator<Item = &'a str>,
    wanted: &str,
) -> Result<usize, ClipNameError> {
    let names: Vec<&str> = names.into_iter().collect();
    if let Some(i) = names.iter().position(|n| *n == wanted) {
        return Ok(i);
    }
    let matching: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].eq_ignore_ascii_case(wanted))
        .collect();
    match matching.as_slice() {
        [i] => Ok(*i),
        [] => Err(ClipNameError::NotFound {
            wanted: wanted.to_owned(),
            closest: closest(wanted, &names, 5)
                .into_iter()
                .map(String::from)
                .collect(),
        }),
        many => Err(ClipNameError::Ambiguous {
            wanted: wanted.to_owned(),
            candidates: many.iter().map(|&i| names[i].to_owned()).collect(),
        }),
    }
}

/// Edit distance between two names, case-insensitive (Levenshtein, on chars).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

/// The `n` names closest to `wanted`: names containing it (or contained in it) first, the
/// nearest in length first, then by edit distance; ties in the names' order; one of each name
/// whatever its case.
pub fn closest<'a>(wanted: &str, names: &[&'a str], n: usize) -> Vec<&'a str> {
    let w = wanted.to_lowercase();
    let mut scored: Vec<(usize, usize, &str)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let lower = name.to_lowercase();
            let score = if lower.contains(&w) || w.contains(&lower) {
                lower.len().abs_diff(w.len())
            } else {
                1000 + distance(&w, &lower)
            };
            (score, i, *name)
        })
        .collect();
    scored.sort();
    let mut out: Vec<&str> = Vec::new();
    for (_, _, name) in scored {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(name)) {
            out.push(name);
        }
        if out.len() == n {
            break;
        }
    }
    out
}
