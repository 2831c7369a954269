//! Plakoto worked examples of docs/rules.md §5 (T16-T24, T33), one test each,
//! through the Plakoto plugin loaded from its file. Positions are written
//! as docs/rules.md writes them: X (white) to move, both sides in X's numbering.

use std::collections::BTreeSet;
use std::sync::Arc;

use bg_engine::{Board, Dice, Seat};
use bg_plugin_host::Plugin;
use bg_tests::loaded;
use bg_variant_api::Options;

fn plakoto() -> Arc<Plugin> {
    loaded("bg_plakoto")
}

/// X (white) and O (black) in X's numbering; `x_pinned`: X's points where
/// an X checker is pinned (listed in `x` too); `o_pinned`: X's points where
/// an O checker is pinned (listed in `o` too).
fn position(x: &[(u8, u8)], o: &[(u8, u8)], x_pinned: &[u8], o_pinned: &[u8]) -> Board {
    let o_own: Vec<(u8, u8)> = o.iter().map(|&(p, n)| (25 - p, n)).collect();
    let mut board = Board::from_points(x, &o_own);
    for &p in x_pinned {
        board.pinned[0] |= 1 << p;
    }
    for &p in o_pinned {
        board.pinned[1] |= 1 << (25 - p);
    }
    board.validate().expect("a valid Plakoto position");
    board
}

fn state(board: &Board) -> Vec<u8> {
    state_with(board, &Options::new())
}

fn state_with(board: &Board, options: &Options) -> Vec<u8> {
    plakoto().setup_position(board, options).unwrap().state
}

fn option(name: &str, value: &str) -> Options {
    Options::from([(name.to_string(), value.to_string())])
}

fn plays(board: &Board, d1: u8, d2: u8) -> Vec<(String, Board)> {
    plays_with(board, &Options::new(), d1, d2)
}

fn plays_with(board: &Board, options: &Options, d1: u8, d2: u8) -> Vec<(String, Board)> {
    let mut plays = Vec::new();
    plakoto()
        .legal_plays(
            &state_with(board, options),
            Seat::White,
            Dice::new(d1, d2).unwrap(),
            &mut plays,
        )
        .unwrap();
    plays
        .iter()
        .map(|lp| (lp.play.to_string(), lp.result))
        .collect()
}

/// The board after white plays `notation` on `board` (through the plugin).
fn after(
    board: &Board,
    d1: u8,
    d2: u8,
    notation: &str,
) -> (Board, Option<(Option<Seat>, u32, String)>) {
    after_with(board, &Options::new(), d1, d2, notation)
}

fn after_with(
    board: &Board,
    options: &Options,
    d1: u8,
    d2: u8,
    notation: &str,
) -> (Board, Option<(Option<Seat>, u32, String)>) {
    let t = plakoto()
        .apply_play(
            &state_with(board, options),
            Seat::White,
            Dice::new(d1, d2).unwrap(),
            &notation.parse().unwrap(),
        )
        .unwrap_or_else(|e| panic!("{notation}: {e}"));
    let outcome = t.outcome.map(|o| (o.winner, o.level, o.kind));
    (plakoto().board(&t.state).unwrap(), outcome)
}

fn assert_plays(board: &Board, d1: u8, d2: u8, expected: &[&str]) {
    let found: BTreeSet<Board> = plays(board, d1, d2).into_iter().map(|(_, b)| b).collect();
    let want: BTreeSet<Board> = expected.iter().map(|p| after(board, d1, d2, p).0).collect();
    assert_eq!(want.len(), expected.len(), "expected plays must differ");
    assert_eq!(
        found,
        want,
        "{d1}-{d2}: {:?}",
        plays(board, d1, d2)
            .iter()
            .map(|p| &p.0)
            .collect::<Vec<_>>()
    );
}

#[test]
fn t16_from_the_start_six_five_runs_or_splits() {
    let board = position(&[(24, 15)], &[(1, 15)], &[], &[]);
    assert_eq!(board, bg_plakoto_start());
    assert_plays(&board, 6, 5, &["24/18 24/19", "24/13"]);
}

fn bg_plakoto_start() -> Board {
    let plugin = plakoto();
    let setup = plugin.new_game(&Options::new()).unwrap();
    plugin.board(&setup.state).unwrap()
}

#[test]
fn t17_pinned_checkers_block_and_cannot_move_and_freeing_is_optional() {
    let board = position(
        &[(24, 12), (13, 1), (10, 1), (7, 1)],
        &[(10, 1), (7, 1), (1, 13)],
        &[10],
        &[7],
    );
    assert_plays(
        &board,
        6,
        3,
        &["24/18 24/21", "24/15", "24/18 7/4", "24/21 13/7", "13/7/4"],
    );
    // 7/4 frees black's checker on 7, unless 13/7 left another on top.
    let (freed, _) = after(&board, 6, 3, "24/18 7/4");
    assert!(!freed.is_pinned(Seat::Black, 25 - 7));
    let (still, _) = after(&board, 6, 3, "13/7/4");
    assert!(still.is_pinned(Seat::Black, 25 - 7));
    // 13/10 lands on a point black holds over a pinned white checker.
    assert!(
        plakoto()
            .apply_play(
                &state(&board),
                Seat::White,
                Dice::new(6, 3).unwrap(),
                &"13/10 24/18".parse().unwrap()
            )
            .is_err()
    );
}

#[test]
fn t18_the_larger_die_rule_as_in_t4() {
    let board = position(
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
        &[],
        &[],
    );
    assert_plays(&board, 2, 1, &["24/22"]);
}

#[test]
fn t19_combined_moves_need_an_open_point_on_the_way() {
    let board = position(
        &[(24, 2), (4, 2), (3, 4), (2, 5), (1, 2)],
        &[(23, 2), (21, 3), (19, 2), (18, 4), (17, 3), (15, 1)],
        &[],
        &[],
    );
    assert_plays(&board, 6, 4, &["24/20/14"]);
    assert_plays(&board, 5, 6, &["pass"]);
}

#[test]
fn t20_pinning_the_mother_with_no_checker_left_on_ones_start_wins_two() {
    let board = position(&[(13, 14), (7, 1)], &[(1, 1), (20, 14)], &[], &[]);
    assert_plays(&board, 6, 2, &["7/1", "13/11 7/1", "13/11 13/7", "13/7/5"]);
    for wins in ["7/1", "13/11 7/1"] {
        let (_, outcome) = after(&board, 6, 2, wins);
        assert_eq!(
            outcome,
            Some((Some(Seat::White), 2, "mother".to_string())),
            "{wins}"
        );
    }
}

#[test]
fn t21_pinning_the_mother_while_keeping_checkers_on_ones_start_plays_on() {
    let board = position(&[(24, 2), (13, 12), (7, 1)], &[(1, 1), (20, 14)], &[], &[]);
    // docs/rules.md gives the count (9); the set, worked out from §3.2: O's
    // 14 checkers block white's 20-point, and 7/1 pins the mother.
    assert_plays(
        &board,
        6,
        2,
        &[
            "24/18 24/22",
            "24/18/16",
            "24/18 13/11",
            "24/18 7/5",
            "24/22 13/7",
            "24/22 7/1",
            "13/7 13/11",
            "13/7/5",
            "13/11 7/1",
        ],
    );
    let (pinned, outcome) = after(&board, 6, 2, "7/1 24/22");
    assert!(
        pinned.is_pinned(Seat::Black, 24),
        "black's mother is pinned"
    );
    assert_eq!(outcome, None, "play continues");
    // X wins when its last start checker leaves with the mother still pinned.
    let next = position(
        &[(24, 1), (22, 1), (13, 12), (1, 1)],
        &[(1, 1), (20, 14)],
        &[],
        &[1],
    );
    let (_, outcome) = after(&next, 3, 1, "24/21 22/21");
    assert_eq!(outcome, Some((Some(Seat::White), 2, "mother".to_string())));
}

#[test]
fn t22_both_mothers_pinned_is_a_draw() {
    let board = position(
        &[(24, 1), (13, 13), (7, 1)],
        &[(24, 1), (1, 1), (20, 13)],
        &[24],
        &[],
    );
    let (_, outcome) = after(&board, 6, 2, "7/1");
    assert_eq!(outcome, Some((None, 0, "draw".to_string())));
}

#[test]
fn t23_no_bearing_off_while_one_of_ones_checkers_is_pinned() {
    let board = position(
        &[(6, 4), (5, 4), (4, 3), (3, 1), (2, 3)],
        &[(3, 1), (24, 14)],
        &[3],
        &[],
    );
    assert_plays(&board, 6, 5, &["6/1"]);
    let two_one = plays(&board, 2, 1);
    assert_eq!(two_one.len(), 6);
    assert!(two_one.iter().all(|(_, b)| b.off(Seat::White) == 0));
    // With the option, bearing off goes on.
    let allow = Options::from([("bearoff_with_pinned".to_string(), "allow".to_string())]);
    let setup = plakoto().setup_position(&board, &allow).unwrap();
    let mut with_option = Vec::new();
    plakoto()
        .legal_plays(
            &setup.state,
            Seat::White,
            Dice::new(6, 5).unwrap(),
            &mut with_option,
        )
        .unwrap();
    assert!(with_option.iter().any(|lp| lp.result.off(Seat::White) > 0));
}

#[test]
fn t24_moving_the_pinner_away_frees_the_pinned_checker() {
    let board = position(&[(24, 14), (7, 1)], &[(7, 1), (1, 14)], &[], &[7]);
    assert_plays(
        &board,
        3,
        1,
        &["24/21 24/23", "24/21/20", "7/6 24/21", "7/4 24/23", "7/4/3"],
    );
    for play in ["7/6 24/21", "7/4 24/23", "7/3"] {
        let (result, _) = after(&board, 3, 1, play);
        assert!(
            !result.is_pinned(Seat::Black, 25 - 7),
            "{play} frees black's checker"
        );
        assert_eq!(
            result.count(Seat::Black, 25 - 7),
            1,
            "which is then a normal blot"
        );
    }
}

#[test]
fn t33_plakoto_wins_are_worth_one_or_two_and_a_draw_nothing() {
    let plugin = plakoto();
    // Bearing off the last checker: 2 if the loser has none off, else 1.
    let gammoned = position(&[(1, 1)], &[(13, 15)], &[], &[]);
    assert_eq!(
        after(&gammoned, 2, 1, "1/off").1,
        Some((Some(Seat::White), 2, "double".to_string()))
    );
    let single = position(&[(1, 1)], &[(13, 14)], &[], &[]);
    assert_eq!(
        after(&single, 2, 1, "1/off").1,
        Some((Some(Seat::White), 1, "single".to_string()))
    );
    // Resigning is judged the same way.
    let outcome = plugin.concede(&state(&single), Seat::Black).unwrap();
    assert_eq!((outcome.winner, outcome.level), (Some(Seat::White), 1));
    let outcome = plugin.concede(&state(&gammoned), Seat::Black).unwrap();
    assert_eq!((outcome.winner, outcome.level), (Some(Seat::White), 2));
}

#[test]
fn plakoto_options_are_checked_and_set_the_opening_and_cube() {
    let plugin = plakoto();
    let setup = plugin.new_game(&Options::new()).unwrap();
    assert!(!setup.cube);
    assert_eq!(setup.opening, bg_variant_api::Opening::ThrowAgain);
    let options = Options::from([
        ("cube".to_string(), "on".to_string()),
        ("opening".to_string(), "use_die_off".to_string()),
    ]);
    let setup = plugin.new_game(&options).unwrap();
    assert!(setup.cube);
    assert_eq!(setup.opening, bg_variant_api::Opening::PlayOpeningDice);
    assert!(
        plugin
            .new_game(&Options::from([("cube".to_string(), "64".to_string())]))
            .is_err()
    );
}

#[test]
fn with_mother_exception_off_a_pinned_mother_loses_at_once() {
    // T21's position: white still has checkers on its start.
    let board = position(&[(24, 2), (13, 12), (7, 1)], &[(1, 1), (20, 14)], &[], &[]);
    let off = option("mother_exception", "off");
    let (_, outcome) = after_with(&board, &off, 6, 2, "7/1 24/22");
    assert_eq!(outcome, Some((Some(Seat::White), 2, "mother".to_string())));
    let (_, outcome) = after(&board, 6, 2, "7/1 24/22");
    assert_eq!(outcome, None, "by default play goes on (T21)");
}

#[test]
fn with_mother_check_at_end_of_turn_a_pin_moved_away_does_not_count() {
    // 7/1 pins black's mother; with the 1, the pinner can bear off.
    let board = position(&[(6, 14), (7, 1)], &[(1, 1), (20, 14)], &[], &[]);
    let end_of_turn = option("mother_check", "end_of_turn");
    let (passed_through, outcome) = after_with(&board, &end_of_turn, 6, 1, "7/1/off");
    assert_eq!(outcome, None, "the mother is free again when the turn ends");
    assert!(!passed_through.is_pinned(Seat::Black, 24));
    assert!(
        plays_with(&board, &end_of_turn, 6, 1)
            .iter()
            .any(|(_, b)| *b == passed_through)
    );
    // Judged after every move (the default), the pin wins at once and the
    // play stops there, with the 1 unused; judged at the end of the turn,
    // the 1 must be played too.
    let (pinned, outcome) = after(&board, 6, 1, "7/1");
    assert_eq!(outcome, Some((Some(Seat::White), 2, "mother".to_string())));
    assert!(plays(&board, 6, 1).iter().any(|(_, b)| *b == pinned));
    assert!(
        plays_with(&board, &end_of_turn, 6, 1)
            .iter()
            .all(|(_, b)| *b != pinned)
    );
}

/// §3.3: a pinning checker may itself bear off, and that frees the checker
/// it held.
#[test]
fn bearing_off_a_pinner_frees_the_checker_beneath() {
    let board = position(
        &[(6, 4), (5, 4), (4, 3), (3, 1), (2, 3)],
        &[(3, 1), (24, 14)],
        &[],
        &[3],
    );
    assert!(board.is_pinned(Seat::Black, 22));
    let (freed, outcome) = after(&board, 3, 1, "3/off 2/1");
    assert_eq!(outcome, None);
    assert!(!freed.is_pinned(Seat::Black, 22));
    assert_eq!(freed.count(Seat::Black, 22), 1, "a free black blot");
    assert!(plays(&board, 3, 1).iter().any(|(_, b)| *b == freed));
}
