//! Clip names as a user types them (`rigplay::animation::names`): matched as the games match names.

use rigplay::animation::names::{ClipNameError, closest, distance, find_clip};

#[test]
fn the_exact_name_wins_then_the_one_in_another_case() {
    let names = ["FightA_1", "walk_civi", "WALK_player"];
    assert_eq!(find_clip(names, "FightA_1"), Ok(0));
    // The case: `fighta_1` is `FightA_1` to the games.
    assert_eq!(find_clip(names, "fighta_1"), Ok(0));
    assert_eq!(find_clip(names, "FIGHTA_1"), Ok(0));
    assert_eq!(find_clip(names, "walk_player"), Ok(2));
}

#[test]
fn names_differing_only_in_case_are_reported_not_guessed() {
    let names = ["walk", "WALK", "run"];
    // Typed exactly: no guess needed.
    assert_eq!(find_clip(names, "walk"), Ok(0));
    assert_eq!(find_clip(names, "WALK"), Ok(1));
    // Typed another way: both are candidates, in the file's order.
    let e = find_clip(names, "Walk").unwrap_err();
    assert_eq!(
        e,
        ClipNameError::Ambiguous {
            wanted: "Walk".into(),
            candidates: vec!["walk".into(), "WALK".into()],
        }
    );
    assert!(e.to_string().contains("walk, WALK"), "{e}");
}

#[test]
fn a_missing_name_comes_with_the_closest() {
    let names = [
        "walk_civi",
        "walk_player",
        "run_civi",
        "idle_stance",
        "WALK_CIVI_2",
    ];
    match find_clip(names, "walk_cvi") {
        Err(ClipNameError::NotFound { wanted, closest }) => {
            assert_eq!(wanted, "walk_cvi");
            // Edit distances: walk_civi 1, run_civi 4 ("walk_" → "run_c"…), walk_player 5.
            assert_eq!(closest[0], "walk_civi");
            assert!(closest.len() <= 5);
        }
        other => panic!("{other:?}"),
    }
    // Nothing to be close to.
    assert_eq!(
        find_clip([], "walk"),
        Err(ClipNameError::NotFound {
            wanted: "walk".into(),
            closest: vec![],
        })
    );
}

#[test]
fn closeness_puts_containing_names_first_and_lists_each_name_once() {
    // "walk" is in walk_civi (5 longer) and walk_player (7 longer); idle is at distance 4.
    let names = ["idle", "walk_player", "walk_civi", "WALK_CIVI"];
    assert_eq!(
        closest("walk", &names, 3),
        ["walk_civi", "walk_player", "idle"]
    );
    assert_eq!(distance("kitten", "SITTING"), 3);
    assert_eq!(distance("", "abc"), 3);
}
