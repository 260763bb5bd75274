//! The repository's Markdown links resolve: every relative link of the README, the CHANGELOG and
//! the pages under `docs/` names a file or folder that exists, and a link's `#anchor` names a
//! heading of the page it points to (GitHub's anchors: the heading in lower case, its
//! punctuation dropped, spaces made hyphens, a repeated heading numbered `-1`, `-2`…). Links in
//! code (fenced blocks, `spans`) are text, not links, and web addresses are not followed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The Markdown pages users read: the README, the CHANGELOG and every page under `docs/`.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `text`'s lines with fenced code blocks blanked out (so that line numbers still hold).
fn unfenced(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return "";
            }
            if fenced { "" } else { line }
        })
        .collect()
}

/// `line` without the text of its code spans (`…`), which is not Markdown.
fn without_code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push('`');
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links (`[text](target)`, `![alt](target)`) and reference
/// definitions (`[label]: target`) on `line`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('[')
        && let Some(end) = trimmed.find("]:")
        && let Some(target) = trimmed[end + 2..].split_whitespace().next()
    {
        out.push(target.trim_matches(['<', '>']).to_owned());
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(at) = line[i..].find("](") {
        let start = i + at + 2;
        // The target runs to the parenthesis that closes it (a target may hold balanced ones).
        let mut depth = 0;
        let mut end = start;
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                b' ' if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        out.push(line[start..end].trim_matches(['<', '>']).to_owned());
        i = end.max(start);
    }
    out
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    // A link in a heading reads as its text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `page`'s headings.
fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for line in unfenced(&text) {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&trimmed[hashes..].replace('`', ""));
        let n = seen.entry(base.clone()).or_default();
        out.push(if *n == 0 { base } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// What is wrong with `target`, a link on `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".into());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        page.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "an anchor into {}, which is no Markdown page",
            file.display()
        ));
    }
    let known = anchors(&file);
    (!known.iter().any(|a| a == anchor)).then(|| {
        format!(
            "{} has no heading whose anchor is #{anchor}",
            file.display()
        )
    })
}

#[test]
fn every_relative_link_of_the_readme_and_the_docs_resolves() {
    let mut faults = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in unfenced(&text).iter().enumerate() {
            for target in link_targets(&without_code(line)) {
                checked += 1;
                if let Some(why) = broken(&page, &target) {
                    faults.push(format!("{}:{}: ({target}) {why}", page.display(), n + 1));
                }
            }
        }
    }
    // The README alone links to a dozen pages; fewer links found means the reading broke.
    assert!(checked > 50, "only {checked} links found");
    assert!(
        faults.is_empty(),
        "{} broken links:\n{}",
        faults.len(),
        faults.join("\n")
    );
}

/// The reading of links and anchors, on lines written for it.
#[test]
fn links_and_anchors_are_read_as_github_reads_them() {
    assert_eq!(
        link_targets("see [the guide](docs/guide/ifp.md#loading) and ![a picture](docs/p.png)."),
        ["docs/guide/ifp.md#loading", "docs/p.png"]
    );
    assert_eq!(
        link_targets("[spec]: ../shared/specs/ifp.md"),
        ["../shared/specs/ifp.md"]
    );
    assert_eq!(
        link_targets("[a](x_(y).md) [b](<z.md>)"),
        ["x_(y).md", "z.md"]
    );
    // Code is text.
    assert!(
        unfenced("`[a](b)` and\n```\n[c](d)\n```")
            .iter()
            .all(|l| link_targets(&without_code(l)).is_empty())
    );
    assert_eq!(
        slug("2026-12-05 (nineteenth session): drawn crowds, the glTF characters' baseline"),
        "2026-12-05-nineteenth-session-drawn-crowds-the-gltf-characters-baseline"
    );
    assert_eq!(
        slug("Layers (ClipLayers), 2026-12-02"),
        "layers-cliplayers-2026-12-02"
    );
    assert_eq!(slug("The [guide](x.md) — §3.3"), "the-guide--33");
}
