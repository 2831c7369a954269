//! Caucasian worked examples of docs/rules.md §5 (T10-T15), one test each,
//! through the Caucasian plugin loaded from its file, next to the standard
//! plugin for the counts docs/rules.md compares.

use std::collections::BTreeSet;
use std::sync::Arc;

use bg_engine::{BAR, Board};
use bg_plugin_host::Plugin;
use bg_tests::{after_white_plays, legal_results, loaded, spec_position, standard};
use bg_variant_api::Options;

fn caucasian() -> Arc<Plugin> {
    loaded("bg_caucasian")
}

fn results(
    plugin: &Plugin,
    options: &[(&str, &str)],
    board: &Board,
    d1: u8,
    d2: u8,
) -> BTreeSet<Board> {
    legal_results(plugin, options, board, d1, d2)
}

const LAST_LANDING: &[(&str, &str)] = &[];
const STRICT: &[(&str, &str)] = &[("caucasian_mode", "strict")];

fn contains(set: &BTreeSet<Board>, board: &Board, play: &str) -> bool {
    set.contains(&after_white_plays(board, play))
}

#[test]
fn t10_a_hitter_in_the_home_board_may_not_hide_on_its_own_point() {
    let board = spec_position(
        &[(13, 6), (8, 2), (6, 5), (4, 2)],
        &[(5, 1), (12, 4), (17, 3), (19, 5), (24, 2)],
    );
    let standard = results(&standard(), &[], &board, 3, 1);
    let caucasian = results(&caucasian(), LAST_LANDING, &board, 3, 1);
    assert_eq!((standard.len(), caucasian.len()), (17, 16));
    let removed: Vec<_> = standard.difference(&caucasian).collect();
    assert_eq!(removed, vec![&after_white_plays(&board, "8/5*/4")]);
    for allowed in ["8/5* 6/5", "6/5*/2", "8/5* 4/3", "8/7/4"] {
        assert!(contains(&caucasian, &board, allowed), "{allowed}");
    }
}

#[test]
fn t11_hit_then_bear_off_is_allowed_hit_then_hide_is_not() {
    let board = spec_position(
        &[(6, 2), (5, 3), (4, 3), (2, 4), (1, 3)],
        &[(3, 1), (24, 14)],
    );
    let standard = results(&standard(), &[], &board, 3, 1);
    let caucasian = results(&caucasian(), LAST_LANDING, &board, 3, 1);
    assert_eq!((standard.len(), caucasian.len()), (16, 15));
    let removed: Vec<_> = standard.difference(&caucasian).collect();
    assert_eq!(removed, vec![&after_white_plays(&board, "6/3*/2")]);
    assert!(contains(&caucasian, &board, "4/3*/off"));
    assert!(contains(&caucasian, &board, "6/3* 4/3"));
}

#[test]
fn t12_touch_and_go_is_allowed_by_default_and_not_in_strict_mode() {
    let board = spec_position(
        &[(13, 12), (9, 1), (3, 2)],
        &[(5, 1), (17, 4), (19, 6), (20, 4)],
    );
    let standard = results(&standard(), &[], &board, 2, 2);
    let last_landing = results(&caucasian(), LAST_LANDING, &board, 2, 2);
    let strict = results(&caucasian(), STRICT, &board, 2, 2);
    assert_eq!(
        (standard.len(), last_landing.len(), strict.len()),
        (19, 18, 17)
    );
    let removed: Vec<_> = standard.difference(&last_landing).collect();
    assert_eq!(removed, vec![&after_white_plays(&board, "13/11 9/5*/3")]);
    assert!(contains(&last_landing, &board, "9/5*/3/1"));
    // Strict mode removes exactly one play more: the touch-and-go.
    assert!(strict.is_subset(&last_landing));
    let removed: Vec<_> = last_landing.difference(&strict).collect();
    assert_eq!(removed, vec![&after_white_plays(&board, "9/5*/3/1")]);
}

#[test]
fn t13_in_strict_mode_a_die_whose_every_use_hides_the_hitter_is_lost() {
    let board = spec_position(&[(8, 1), (2, 1), (1, 13)], &[(5, 1), (24, 14)]);
    let full = after_white_plays(&board, "8/5*/2/off 2/off");
    assert_eq!(
        results(&standard(), &[], &board, 3, 3),
        BTreeSet::from([full])
    );
    assert_eq!(
        results(&caucasian(), LAST_LANDING, &board, 3, 3),
        BTreeSet::from([full])
    );
    let strict = results(&caucasian(), STRICT, &board, 3, 3);
    assert_eq!(strict, BTreeSet::from([after_white_plays(&board, "8/5*")]));
}

#[test]
fn t14_entering_hits_are_never_restricted() {
    let board = spec_position(
        &[(BAR, 1), (20, 2), (13, 5), (8, 2), (6, 5)],
        &[(22, 1), (19, 5), (17, 3), (12, 5), (1, 1)],
    );
    let standard = results(&standard(), &[], &board, 3, 2);
    let caucasian = results(&caucasian(), LAST_LANDING, &board, 3, 2);
    assert_eq!(standard.len(), 9);
    assert_eq!(caucasian, standard);
    assert!(contains(&caucasian, &board, "bar/22*/20"));
}

#[test]
fn t15_a_hit_outside_the_home_board_is_unrestricted() {
    let board = spec_position(
        &[(13, 11), (10, 1), (6, 3)],
        &[(8, 1), (17, 4), (19, 6), (20, 4)],
    );
    let caucasian = results(&caucasian(), LAST_LANDING, &board, 2, 2);
    assert!(contains(&caucasian, &board, "10/8*/6 13/11(2)"));
    assert_eq!(caucasian, results(&standard(), &[], &board, 2, 2));
}

#[test]
fn hitting_and_bearing_the_hitter_off_only_if_forced_is_an_option() {
    // T11's position: 4/3*/off bears the hitter off although the 1 had
    // other uses; with only_if_forced it is refused.
    let board = spec_position(
        &[(6, 2), (5, 3), (4, 3), (2, 4), (1, 3)],
        &[(3, 1), (24, 14)],
    );
    let forced = results(
        &caucasian(),
        &[("caucasian_hit_bearoff", "only_if_forced")],
        &board,
        3,
        1,
    );
    assert!(!contains(&forced, &board, "4/3*/off"));
    assert!(contains(&forced, &board, "6/3* 4/3"));
}

#[test]
fn caucasian_options_are_checked() {
    let plugin = caucasian();
    let bad = Options::from([("caucasian_mode".to_string(), "lenient".to_string())]);
    assert!(plugin.new_game(&bad).is_err());
    let names: Vec<String> = plugin
        .info()
        .options
        .iter()
        .map(|o| o.name.clone())
        .collect();
    assert_eq!(names, ["setup", "caucasian_mode", "caucasian_hit_bearoff"]);
}

/// §2 edge case 5: each hitter is tracked on its own. With 3-3, two
/// checkers hit on 5 and 4; the second may not then hide on the 1-point,
/// whichever of the two hit first.
#[test]
fn several_hitters_are_each_held_to_the_rule() {
    let board = spec_position(
        &[(13, 11), (8, 1), (7, 1), (1, 2)],
        &[(5, 1), (4, 1), (19, 13)],
    );
    let standard = results(&standard(), &[], &board, 3, 3);
    let caucasian = results(&caucasian(), LAST_LANDING, &board, 3, 3);
    let hides = "8/5* 7/4* 4/1 13/10";
    assert!(contains(&standard, &board, hides));
    assert!(!contains(&caucasian, &board, hides));
    for stays in ["8/5* 7/4* 13/10 13/10", "8/5* 5/2 7/4* 13/10"] {
        assert!(contains(&caucasian, &board, stays), "{stays}");
    }
}
