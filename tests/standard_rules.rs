//! The worked examples of docs/rules.md §5 (T1-T9, and the win types of T25),
//! one test each, through the standard plugin loaded from its file.
//! Positions are written as docs/rules.md writes them: X (white) to move, both
//! sides in X's numbering.

use std::collections::BTreeSet;

use bg_engine::game::{RulesError, RulesErrorKind};
use bg_engine::{BAR, Board, Dice, Play, Seat};
use bg_tests::{after_white_plays, spec_position, standard};
use bg_variant_api::Options;

/// The results of white's legal plays from `board` with `d1-d2`.
fn legal_results(board: &Board, d1: u8, d2: u8) -> BTreeSet<Board> {
    bg_tests::legal_results(&standard(), &[], board, d1, d2)
}

/// Asserts that the legal plays are exactly `expected` (in notation).
fn assert_plays(board: &Board, d1: u8, d2: u8, expected: &[&str]) {
    let want: BTreeSet<Board> = expected
        .iter()
        .map(|p| after_white_plays(board, p))
        .collect();
    assert_eq!(want.len(), expected.len(), "expected plays must differ");
    assert_eq!(
        legal_results(board, d1, d2),
        want,
        "{d1}-{d2} from {board:?}"
    );
}

fn t1_position() -> Board {
    spec_position(
        &[(BAR, 1), (24, 1), (13, 5), (8, 3), (6, 5)],
        &[(20, 2), (19, 5), (17, 3), (12, 5)],
    )
}

#[test]
fn t1_enter_with_the_four_when_the_six_is_blocked() {
    assert_plays(
        &t1_position(),
        6,
        4,
        &["bar/21 24/18", "bar/21/15", "bar/21 13/7", "bar/21 8/2"],
    );
}

#[test]
fn t2_no_entry_means_the_turn_passes() {
    let board = spec_position(
        &[(BAR, 1), (24, 1), (13, 5), (8, 3), (6, 5)],
        &[(21, 2), (19, 5), (17, 3), (12, 5)],
    );
    // The only play is the empty play, which leaves the board as it is.
    assert_plays(&board, 6, 4, &["pass"]);
}

#[test]
fn t3_two_on_the_bar_and_one_enters_loses_the_rest_of_the_turn() {
    let board = spec_position(
        &[(BAR, 2), (13, 5), (8, 3), (6, 5)],
        &[(20, 2), (19, 5), (17, 3), (12, 5)],
    );
    assert_plays(&board, 6, 4, &["bar/21"]);
}

#[test]
fn t4_when_only_one_die_can_be_played_it_must_be_the_larger() {
    let board = spec_position(
        &[(24, 1), (1, 14)],
        &[
            (13, 1),
            (14, 2),
            (16, 2),
            (17, 2),
            (18, 2),
            (19, 2),
            (20, 2),
            (21, 2),
        ],
    );
    assert_plays(&board, 2, 1, &["24/22"]);
}

#[test]
fn t5_both_dice_must_be_played_even_if_only_one_order_allows_it() {
    let board = spec_position(
        &[(6, 1), (4, 2), (2, 1)],
        &[
            (1, 2),
            (13, 1),
            (16, 2),
            (17, 2),
            (18, 2),
            (19, 2),
            (20, 2),
            (21, 2),
        ],
    );
    assert_eq!(board.off(Seat::White), 11);
    assert_plays(&board, 6, 3, &["6/3 4/off"]);
}

#[test]
fn t6_bearing_off_with_the_higher_die_from_the_rearmost_point() {
    let board = spec_position(&[(6, 1), (4, 2), (3, 2), (2, 1), (1, 9)], &[(24, 7)]);
    assert_eq!(board.off(Seat::Black), 8);
    assert_plays(
        &board,
        6,
        1,
        &[
            "6/off 4/3",
            "6/off 3/2",
            "6/off 2/1",
            "6/off 1/off",
            "6/5/off",
        ],
    );
}

#[test]
fn t7_all_home_is_checked_again_after_each_move() {
    let board = spec_position(
        &[(7, 1), (6, 1), (4, 2), (3, 2), (2, 9)],
        &[(1, 1), (13, 1), (21, 3), (23, 2), (24, 8)],
    );
    assert_plays(
        &board,
        6,
        1,
        &[
            "7/1* 6/5",
            "7/1* 4/3",
            "7/1* 3/2",
            "7/1* 2/1",
            "7/1*/off",
            "7/6 6/off",
        ],
    );
}

#[test]
fn t8_a_double_plays_as_many_moves_as_possible() {
    let board = spec_position(&[(24, 2), (6, 13)], &[(12, 2), (1, 13)]);
    assert_plays(&board, 6, 6, &["24/18(2)"]);
}

#[test]
fn t9_a_larger_die_bears_off_only_from_the_highest_point() {
    let board = spec_position(&[(6, 1), (2, 1)], &[(24, 15)]);
    // 6/2 2/off and 6/3/off reach the same position: one play.
    assert_plays(&board, 4, 3, &["6/2 2/off"]);
    assert_eq!(
        after_white_plays(&board, "6/2 2/off"),
        after_white_plays(&board, "6/3/off")
    );
    // 2/off with the 4 (then 6/3) is illegal: the 6-point checker is higher.
    let illegal = after_white_plays(&board, "2/off 6/3");
    assert!(!legal_results(&board, 4, 3).contains(&illegal));
}

/// §1.3 (b), as gnubg's `SaveMoves`: the most dice are played even where
/// fewer would bear off the last checker. The game ends either way; the
/// plays differ in where the blot ends up.
#[test]
fn bearing_off_the_last_checker_still_plays_both_dice_when_it_can() {
    // X's last checker on the 3-point, an O blot on X's 2-point: hit first.
    let board = spec_position(&[(3, 1)], &[(2, 1), (24, 14)]);
    assert_plays(&board, 3, 1, &["3/2*/off"]);
    let board = spec_position(&[(5, 1)], &[(3, 1), (24, 14)]);
    assert_plays(&board, 5, 2, &["5/3*/off"]);
    // Nothing to hit: one die bears the checker off, the other is void.
    let board = spec_position(&[(3, 1)], &[(24, 15)]);
    assert_plays(&board, 3, 1, &["3/off"]);
}

#[test]
fn t25_win_types_are_judged_on_the_losers_position() {
    let plugin = standard();
    // Black has borne off none and has a checker in white's home board.
    let backgammon = spec_position(&[(1, 1)], &[(3, 1), (20, 14)]);
    let setup = plugin.setup_position(&backgammon, &Options::new()).unwrap();
    let outcome = plugin.concede(&setup.state, Seat::Black).unwrap();
    assert_eq!(
        (outcome.winner, outcome.level, outcome.kind.as_str()),
        (Some(Seat::White), 3, "backgammon")
    );

    // The same, finished by a real play: white bears off its last checker.
    let t = plugin
        .apply_play(
            &setup.state,
            Seat::White,
            Dice::new(2, 1).unwrap(),
            &"1/off".parse().unwrap(),
        )
        .unwrap();
    let outcome = t.outcome.expect("the game is over");
    assert_eq!((outcome.winner, outcome.level), (Some(Seat::White), 3));

    // With one checker off, even with one on the bar, it is a single game.
    let single = spec_position(&[(1, 1)], &[(BAR, 1), (20, 13)]);
    assert_eq!(single.off(Seat::Black), 1);
    let setup = plugin.setup_position(&single, &Options::new()).unwrap();
    let outcome = plugin.concede(&setup.state, Seat::Black).unwrap();
    assert_eq!((outcome.level, outcome.kind.as_str()), (1, "single"));

    // None off, nothing in white's home or on the bar: a gammon.
    let gammon = spec_position(&[(1, 1)], &[(13, 15)]);
    let setup = plugin.setup_position(&gammon, &Options::new()).unwrap();
    assert_eq!(plugin.concede(&setup.state, Seat::Black).unwrap().level, 2);
}

#[test]
fn a_play_is_accepted_in_any_notation_that_reaches_a_legal_result() {
    let plugin = standard();
    let setup = plugin.new_game(&Options::new()).unwrap();
    let dice = Dice::new(6, 1).unwrap();
    for play in ["13/7 8/7", "8/7 13/7", "13/7, 8/7"] {
        let t = plugin
            .apply_play(&setup.state, Seat::White, dice, &play.parse().unwrap())
            .unwrap();
        let board = plugin.board(&t.state).unwrap();
        assert_eq!(
            board,
            after_white_plays(&Board::standard_start(), "13/7 8/7"),
            "{play}"
        );
    }
    // Black plays from its own side, in its own numbering.
    let t = plugin
        .apply_play(&setup.state, Seat::Black, dice, &"13/7/6".parse().unwrap())
        .unwrap();
    assert_eq!(plugin.board(&t.state).unwrap().count(Seat::Black, 6), 6);
}

#[test]
fn an_illegal_play_is_refused_with_a_reason() {
    let plugin = standard();
    let setup = plugin.new_game(&Options::new()).unwrap();
    let dice = Dice::new(6, 1).unwrap();
    for (play, why) in [
        ("13/7", "not a legal play of 6-1"), // both dice can be played
        ("13/6", ""),                        // 13/7/6 in one stroke: legal
        ("6/1", "blocked"),                  // black holds white's 1-point
        ("5/4 13/7", "no checker"),
        ("7/13", "does not move forward"),
    ] {
        let result = plugin.apply_play(
            &setup.state,
            Seat::White,
            dice,
            &play.parse::<Play>().unwrap(),
        );
        match (play, result) {
            // One checker moving 7 pips by 13/7/6 reaches a legal result.
            ("13/6", Ok(_)) => {}
            (
                _,
                Err(RulesError {
                    kind: RulesErrorKind::IllegalPlay,
                    message,
                }),
            ) => {
                assert!(message.contains(why), "{play}: {message}")
            }
            (_, other) => panic!("{play}: {other:?}"),
        }
    }
}

#[test]
fn nackgammon_setup_is_an_option_and_unknown_options_are_refused() {
    let plugin = standard();
    let options = Options::from([("setup".to_string(), "nackgammon".to_string())]);
    let setup = plugin.new_game(&options).unwrap();
    assert_eq!(
        plugin.board(&setup.state).unwrap(),
        Board::nackgammon_start()
    );

    let bad_value = Options::from([("setup".to_string(), "hypergammon".to_string())]);
    assert!(
        matches!(plugin.new_game(&bad_value), Err(RulesError { kind: RulesErrorKind::InvalidOption, message: m }) if m.contains("hypergammon"))
    );
    let unknown = Options::from([("jacoby".to_string(), "on".to_string())]);
    assert!(
        matches!(plugin.new_game(&unknown), Err(RulesError { kind: RulesErrorKind::InvalidOption, message: m }) if m.contains("jacoby"))
    );
}

#[test]
fn corrupt_state_bytes_are_refused() {
    let plugin = standard();
    let mut plays = Vec::new();
    let dice = Dice::new(3, 1).unwrap();
    for state in [&b""[..], &[1u8; 10], &[9u8; 53]] {
        let result = plugin.legal_plays(state, Seat::White, dice, &mut plays);
        assert!(
            matches!(
                result,
                Err(RulesError {
                    kind: RulesErrorKind::InvalidInput,
                    ..
                })
            ),
            "{result:?}"
        );
    }
}
