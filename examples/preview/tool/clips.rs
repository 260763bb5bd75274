//! Finding a clip among hundreds: the search filter, sorting, labels that tell duplicate names
//! apart, the names closest to a mistyped one, and which open file a `--clip NAME` picks.

use std::cmp::Ordering;

/// What the clip list knows of a clip.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipRow {
    pub name: String,
    pub duration: f32,
    pub keys: usize,
}

/// The order of the clip list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// As the file has them.
    #[default]
    File,
    Name,
    Duration,
    Keys,
}

impl SortBy {
    pub const ALL: [SortBy; 4] = [SortBy::File, SortBy::Name, SortBy::Duration, SortBy::Keys];

    pub fn label(self) -> &'static str {
        match self {
            SortBy::File => "file order",
            SortBy::Name => "name",
            SortBy::Duration => "duration",
            SortBy::Keys => "keys",
        }
    }
}

/// The indices of the clips whose name contains `query` (case-insensitive; an empty query
/// keeps every clip), in the order `sort` asks for (ties keep the file's order).
pub fn visible(rows: &[ClipRow], query: &str, sort: SortBy) -> Vec<usize> {
    let q = query.trim().to_lowercase();
    let mut out: Vec<usize> = (0..rows.len())
        .filter(|&i| q.is_empty() || rows[i].name.to_lowercase().contains(&q))
        .collect();
    let by = |a: &usize, b: &usize| -> Ordering {
        let (x, y) = (&rows[*a], &rows[*b]);
        match sort {
            SortBy::File => Ordering::Equal,
            SortBy::Name => x.name.to_lowercase().cmp(&y.name.to_lowercase()),
            SortBy::Duration => x.duration.total_cmp(&y.duration),
            SortBy::Keys => x.keys.cmp(&y.keys),
        }
    };
    out.sort_by(by);
    out
}

/// The label of clip `index` in the list: its name, with its index when another clip of the
/// file has the same name (case-insensitively), and its duration.
pub fn label(rows: &[ClipRow], index: usize) -> String {
    let row = &rows[index];
    let twins = rows
        .iter()
        .filter(|r| r.name.eq_ignore_ascii_case(&row.name))
        .count();
    if twins > 1 {
        format!("{}  #{index}  ({:.2} s)", row.name, row.duration)
    } else {
        format!("{}  ({:.2} s)", row.name, row.duration)
    }
}

/// The next visible clip after (`step` 1) or before (−1) `current` in `visible`, for the arrow
/// keys; the first (or last) when `current` is not among them.
pub fn step(visible: &[usize], current: Option<usize>, step: i32) -> Option<usize> {
    if visible.is_empty() {
        return None;
    }
    let at = current.and_then(|c| visible.iter().position(|&v| v == c));
    let next = match at {
        Some(i) => (i as i64 + step as i64).clamp(0, visible.len() as i64 - 1) as usize,
        None if step < 0 => visible.len() - 1,
        None => 0,
    };
    Some(visible[next])
}

pub use rigplay::animation::names::{closest, distance};

/// What `--clip NAME` makes of the open files, in command-line order.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// (file, clip): the first file that has a clip of that name (matched as the games match
    /// names: [`rigplay::animation::names::find_clip`]).
    Found(usize, usize),
    /// An earlier file is still loading: it might have it.
    Wait,
    /// No file has it: the closest names of all the files.
    Missing(Vec<String>),
    /// The first file that has it in some case has several clips of that name differing only
    /// in case, and none exactly: reported, not guessed between.
    Ambiguous(Vec<String>),
}

impl Pick {
    /// What a user is told when `wanted` found no clip: the closest names, or the clips it
    /// matches in other cases; `None` when a clip was found or may still be.
    pub fn problem(&self, wanted: &str) -> Option<String> {
        match self {
            Pick::Found(..) | Pick::Wait => None,
            Pick::Missing(closest) => Some(format!(
                "no open file has a clip named {wanted:?}; the closest: {}",
                closest.join(", ")
            )),
            Pick::Ambiguous(candidates) => Some(format!(
                "{wanted:?} matches clips that differ only in case ({}): give the exact name",
                candidates.join(", ")
            )),
        }
    }
}

/// Which file and clip `--clip wanted` shows. `files[i]` is the clip names of file `i` once it
/// has loaded, `None` while it loads, and `Some(empty)` for a file that failed or has no clips.
pub fn pick(files: &[Option<Vec<String>>], wanted: &str) -> Pick {
    use rigplay::animation::names::{ClipNameError, find_clip};
    for (f, names) in files.iter().enumerate() {
        match names {
            None => return Pick::Wait,
            Some(names) => match find_clip(names.iter().map(String::as_str), wanted) {
                Ok(c) => return Pick::Found(f, c),
                Err(ClipNameError::Ambiguous { candidates, .. }) => {
                    return Pick::Ambiguous(candidates);
                }
                Err(ClipNameError::NotFound { .. }) => {}
            },
        }
    }
    let all: Vec<&str> = files
        .iter()
        .flatten()
        .flat_map(|n| n.iter().map(String::as_str))
        .collect();
    Pick::Missing(
        closest(wanted, &all, 5)
            .into_iter()
            .map(String::from)
            .collect(),
    )
}

/// Whether a glTF file (`.glb`, or `.gltf` with its buffers beside it) holds animations: the
/// preview then opens them as clips too (retargeted onto a GTA ped), beside the character.
pub fn gltf_has_animations(path: &std::path::Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let beside = rigplay::formats::gltf::files_beside(path);
    rigplay::formats::gltf::GltfScene::read(&bytes, beside)
        .is_ok_and(|r| !r.scene.animations.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<ClipRow> {
        [
            ("WALK_civi", 1.2, 400),
            ("walk_player", 1.1, 300),
            ("run_civi", 0.8, 250),
            ("IDLE_stance", 3.0, 900),
            ("walk_civi", 1.0, 100),
        ]
        .iter()
        .map(|&(n, d, k)| ClipRow {
            name: n.into(),
            duration: d,
            keys: k,
        })
        .collect()
    }

    #[test]
    fn search_is_a_case_insensitive_substring_and_sorting_keeps_ties_in_file_order() {
        let r = rows();
        assert_eq!(visible(&r, "walk", SortBy::File), [0, 1, 4]);
        assert_eq!(visible(&r, "  CIVI ", SortBy::File), [0, 2, 4]);
        assert_eq!(visible(&r, "", SortBy::File), [0, 1, 2, 3, 4]);
        assert!(visible(&r, "swim", SortBy::File).is_empty());
        // "WALK_civi" and "walk_civi" compare equal by name: file order between them.
        assert_eq!(visible(&r, "", SortBy::Name), [3, 2, 0, 4, 1]);
        assert_eq!(visible(&r, "", SortBy::Duration), [2, 4, 1, 0, 3]);
        assert_eq!(visible(&r, "walk", SortBy::Keys), [4, 1, 0]);
    }

    #[test]
    fn duplicate_names_show_their_index() {
        let r = rows();
        assert_eq!(label(&r, 0), "WALK_civi  #0  (1.20 s)");
        assert_eq!(label(&r, 4), "walk_civi  #4  (1.00 s)");
        assert_eq!(label(&r, 2), "run_civi  (0.80 s)");
    }

    #[test]
    fn arrow_keys_step_through_the_visible_clips_and_stop_at_the_ends() {
        let v = [0, 1, 4];
        assert_eq!(step(&v, Some(1), 1), Some(4));
        assert_eq!(step(&v, Some(4), 1), Some(4));
        assert_eq!(step(&v, Some(0), -1), Some(0));
        assert_eq!(step(&v, Some(2), 1), Some(0), "hidden: from the top");
        assert_eq!(step(&v, None, -1), Some(4));
        assert_eq!(step(&[], Some(0), 1), None);
    }

    #[test]
    fn a_typo_suggests_the_nearest_names() {
        // kitten → sitting: 3 edits (k→s, e→i, +g).
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("Walk", "WALK"), 0);
        let names = [
            "walk_player",
            "WALK_civi",
            "walk_civi",
            "run_player",
            "idle_stance",
        ];
        // "WALK_plyer" is one edit from walk_player; WALK_civi and run_player are both five
        // away (p,l,y,e,r → c,i,v,i; w,a,l,k → r,u,n and the missing a): the earlier first.
        assert_eq!(distance("walk_plyer", "walk_civi"), 5);
        assert_eq!(distance("walk_plyer", "run_player"), 5);
        assert_eq!(
            closest("WALK_plyer", &names, 2),
            ["walk_player", "WALK_civi"]
        );
        // A part of a name: those containing it first, duplicates by case once; then by
        // distance (civi → run_player 10 edits, walk_player 11).
        assert_eq!(distance("civi", "run_player"), 10);
        assert_eq!(distance("civi", "walk_player"), 11);
        assert_eq!(
            closest("civi", &names, 3),
            ["WALK_civi", "run_player", "walk_player"]
        );
    }

    #[test]
    fn clip_picks_the_first_file_in_command_line_order_that_has_it() {
        let a = Some(vec!["walk".to_string(), "idle".into()]);
        let b = Some(vec!["run".to_string(), "IDLE".into()]);
        assert_eq!(pick(&[a.clone(), b.clone()], "idle"), Pick::Found(0, 1));
        assert_eq!(pick(&[a.clone(), b.clone()], "Run"), Pick::Found(1, 0));
        // The first file still loading: wait, even if a later one has it.
        assert_eq!(pick(&[None, b.clone()], "run"), Pick::Wait);
        // A failed first file (no clips) does not hold the others up.
        assert_eq!(pick(&[Some(vec![]), b.clone()], "run"), Pick::Found(1, 0));
        match pick(&[a, b], "rnu") {
            Pick::Missing(names) => assert_eq!(names[0], "run"),
            other => panic!("{other:?}"),
        }
        // Two clips differing only in case, neither typed exactly: reported.
        let c = Some(vec!["Walk".to_string(), "WALK".into()]);
        assert_eq!(
            pick(std::slice::from_ref(&c), "walk"),
            Pick::Ambiguous(vec!["Walk".into(), "WALK".into()])
        );
        assert_eq!(pick(&[c], "WALK"), Pick::Found(0, 1));
    }

    /// The bundled humanoid character has no animation (it opens as a character only); a
    /// glTF written here with one (two keys of one rotation, in a base64 buffer) has; a file
    /// that is not there or not glTF has none.
    #[test]
    fn a_gltf_with_animations_is_told_from_a_character_without() {
        let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
        assert!(!gltf_has_animations(
            &assets.join("characters/humanoid.glb")
        ));
        assert!(!gltf_has_animations(&assets.join("anims/sa_ped.ifp")));
        assert!(!gltf_has_animations(&assets.join("missing.glb")));
        // Times 0 and 1 (8 bytes), then two identity rotations (32 bytes).
        let mut bin = Vec::new();
        for f in [0.0f32, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0] {
            bin.extend_from_slice(&f.to_le_bytes());
        }
        let b64 = {
            const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut out = String::new();
            for c in bin.chunks(3) {
                let n = (u32::from(c[0]) << 16)
                    | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*c.get(2).unwrap_or(&0));
                for k in 0..4 {
                    if k <= c.len() {
                        out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
                    } else {
                        out.push('=');
                    }
                }
            }
            out
        };
        let doc = format!(
            r#"{{"asset":{{"version":"2.0"}},"nodes":[{{"name":"Hips"}}],
            "buffers":[{{"byteLength":40,"uri":"data:application/octet-stream;base64,{b64}"}}],
            "bufferViews":[{{"buffer":0,"byteLength":8}},{{"buffer":0,"byteOffset":8,"byteLength":32}}],
            "accessors":[{{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]}},
                {{"bufferView":1,"componentType":5126,"count":2,"type":"VEC4"}}],
            "animations":[{{"name":"turn","samplers":[{{"input":0,"output":1}}],
                "channels":[{{"sampler":0,"target":{{"node":0,"path":"rotation"}}}}]}}]}}"#
        );
        let path = std::env::temp_dir().join(format!("rigplay-anim-{}.gltf", std::process::id()));
        std::fs::write(&path, doc).unwrap();
        assert!(gltf_has_animations(&path));
        let _ = std::fs::remove_file(&path);
    }
}
