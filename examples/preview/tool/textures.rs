//! What the Info panel says about a model's textures that no dictionary holds.

use rigplay::animation::names::closest;

/// Lines for textures that materials name and no dictionary holds: the missing names, each
/// with the dictionaries' name closest to it, then the names the dictionaries do hold (so a
/// modder sees the mismatch: `body` asked for, `body01` held). Nothing when none is missing.
pub fn missing_texture_lines(missing: &[String], held: &[&str]) -> Vec<String> {
    if missing.is_empty() {
        return Vec::new();
    }
    let each: Vec<String> = missing
        .iter()
        .map(|m| match closest(m, held, 1).first() {
            Some(near) => format!("{m} (closest held: {near})"),
            None => m.clone(),
        })
        .collect();
    let mut lines = vec![format!("textures in no dictionary: {}", each.join(", "))];
    if held.is_empty() {
        lines.push("the dictionaries hold no textures".to_owned());
    } else {
        let mut names: Vec<&str> = held.to_vec();
        names.sort_unstable_by_key(|n| n.to_ascii_lowercase());
        lines.push(format!(
            "the dictionaries hold {}: {}",
            names.len(),
            names.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_texture_is_shown_beside_the_names_the_dictionaries_hold() {
        let lines = missing_texture_lines(
            &["playerface".into(), "shoes".into()],
            &["PLAYER", "playerface01", "jeans"],
        );
        assert_eq!(
            lines,
            [
                "textures in no dictionary: playerface (closest held: playerface01), shoes (closest held: jeans)",
                "the dictionaries hold 3: jeans, PLAYER, playerface01",
            ]
        );
        assert!(missing_texture_lines(&[], &["a"]).is_empty());
        assert_eq!(
            missing_texture_lines(&["a".into()], &[]),
            [
                "textures in no dictionary: a",
                "the dictionaries hold no textures"
            ]
        );
    }
}
