//! The worked examples of docs/nardy-fevga.md (§2.10 LN1-LN19, §3.9
//! FV1-FV16, §3.10 SC1-SC6), each a test named after it: the complete
//! set of legal plays (as the positions they reach), or their count with
//! the plays the example names as legal and as illegal.

use std::collections::BTreeSet;

use bg_same_way_rules::{Fevga, LongNardy, SameWayState};
use bg_variant_api::engine::{Board, Dice, Geometry, Seat};
use bg_variant_api::{Options, Variant};

/// A position with X (white) to move: X's checkers, and O's (black's)
/// given in X's numbering as the examples give them.
fn position(x: &[(u8, u8)], o_in_x_numbering: &[(u8, u8)]) -> Board {
    let o: Vec<(u8, u8)> = o_in_x_numbering
        .iter()
        .map(|&(p, n)| (Geometry::SameWay.facing(p), n))
        .collect();
    Board::from_points(x, &o)
}

fn start() -> Board {
    position(&[(24, 15)], &[(12, 15)])
}

/// The board a play in the examples' notation reaches: `24/18(2)`,
/// `23/20/17`, `6/4/off`, moves separated by spaces; `-` is no play.
fn reach(board: &Board, play: &str) -> Board {
    let mut b = *board;
    for token in play.split_whitespace().filter(|t| *t != "-") {
        let (path, times) = match token.split_once('(') {
            Some((path, n)) => (path, n.trim_end_matches(')').parse::<usize>().unwrap()),
            None => (token, 1),
        };
        let points: Vec<u8> = path
            .split('/')
            .map(|p| if p == "off" { 0 } else { p.parse().unwrap() })
            .collect();
        for _ in 0..times {
            let (from, to) = (points[0], *points.last().unwrap());
            b.checkers[0][usize::from(from)] -= 1;
            b.checkers[0][usize::from(to)] += 1;
        }
    }
    b
}

fn options(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The positions the legal plays of X with `d1-d2` reach.
fn results<V: Variant<State = SameWayState>>(
    variant: &V,
    board: &Board,
    d1: u8,
    d2: u8,
    opts: &[(&str, &str)],
) -> BTreeSet<Board> {
    let state = variant.setup_position(board, &options(opts)).unwrap().state;
    let mut plays = Vec::new();
    variant.legal_plays(&state, Seat::White, Dice::new(d1, d2).unwrap(), &mut plays);
    let set: BTreeSet<Board> = plays.iter().map(|lp| lp.result).collect();
    assert_eq!(set.len(), plays.len(), "each result once");
    set
}

/// Exactly `expected` are legal.
#[track_caller]
fn exactly(set: &BTreeSet<Board>, board: &Board, expected: &[&str]) {
    let want: BTreeSet<Board> = expected.iter().map(|p| reach(board, p)).collect();
    assert_eq!(set, &want, "expected {expected:?}");
}

/// `count` plays, among them `legal`, none of `illegal`.
#[track_caller]
fn counted(set: &BTreeSet<Board>, board: &Board, count: usize, legal: &[&str], illegal: &[&str]) {
    for play in legal {
        assert!(set.contains(&reach(board, play)), "{play} is legal");
    }
    for play in illegal {
        assert!(!set.contains(&reach(board, play)), "{play} is not legal");
    }
    assert_eq!(set.len(), count);
}

fn nardy(board: &Board, d1: u8, d2: u8) -> BTreeSet<Board> {
    results(&LongNardy, board, d1, d2, &[])
}

fn fevga(board: &Board, d1: u8, d2: u8) -> BTreeSet<Board> {
    results(&Fevga, board, d1, d2, &[])
}

#[test]
fn ln1_one_checker_off_the_head_plays_both_dice() {
    exactly(&nardy(&start(), 6, 5), &start(), &["24/13"]);
}

#[test]
fn ln2_first_turn_six_six_takes_two_off_the_head_and_loses_two_sixes() {
    exactly(&nardy(&start(), 6, 6), &start(), &["24/18(2)"]);
}

#[test]
fn ln3_first_turn_four_four_stops_both_at_sixteen() {
    exactly(&nardy(&start(), 4, 4), &start(), &["24/16(2)"]);
}

#[test]
fn ln4_first_turn_three_three_takes_two_off_the_head() {
    exactly(
        &nardy(&start(), 3, 3),
        &start(),
        &["24/15 24/21", "24/18(2)"],
    );
}

#[test]
fn ln5_five_five_gives_no_exception() {
    exactly(&nardy(&start(), 5, 5), &start(), &["24/4"]);
}

#[test]
fn ln5a_every_double_with_head_doubles_all() {
    let set = results(&LongNardy, &start(), 5, 5, &[("head_doubles", "all")]);
    exactly(&set, &start(), &["24/4", "24/9 24/19", "24/14(2)"]);
}

#[test]
fn ln6_three_three_without_the_exception_loses_a_three() {
    let set = results(&LongNardy, &start(), 3, 3, &[("head_doubles", "64")]);
    exactly(&set, &start(), &["24/15"]);
}

#[test]
fn ln7_second_players_four_four_classic_and_strict() {
    let b = position(&[(24, 15)], &[(12, 14), (16, 1)]);
    exactly(&nardy(&b, 4, 4), &b, &["24/20(2)"]);
    let strict = results(&LongNardy, &b, 4, 4, &[("head_exception", "strict")]);
    exactly(&strict, &b, &["24/20"]);
}

/// `head_exception=strict` asks that the lone checker be stopped by the
/// opponent's head: with every double allowed, 5-5 jumps over it, so
/// one checker plays the roll (the classic reading gives LN5a's three).
#[test]
fn ln5a_strict_five_five_is_not_stopped_by_the_opponents_head() {
    let set = results(
        &LongNardy,
        &start(),
        5,
        5,
        &[("head_doubles", "all"), ("head_exception", "strict")],
    );
    exactly(&set, &start(), &["24/4"]);
    let six_six = results(&LongNardy, &start(), 6, 6, &[("head_exception", "strict")]);
    exactly(&six_six, &start(), &["24/18(2)"]);
}

#[test]
fn ln8_only_one_head_checker_on_a_later_turn() {
    let b = position(&[(24, 14), (13, 1)], &[(12, 14), (1, 1)]);
    exactly(&nardy(&b, 6, 6), &b, &["24/18 13/7"]);
}

fn ln9_board(o: &[(u8, u8)]) -> Board {
    position(&[(24, 10), (23, 1), (22, 1), (21, 1), (20, 1), (15, 1)], o)
}

#[test]
fn ln9_no_six_block_with_every_opposing_checker_behind() {
    let b = ln9_board(&[(12, 13), (9, 1), (5, 1)]);
    counted(
        &nardy(&b, 5, 1),
        &b,
        29,
        &["24/19 20/19", "24/19 23/22", "24/18", "24/23 15/10"],
        &["24/19 15/14"],
    );
}

#[test]
fn ln10_an_opposing_checker_ahead_makes_the_block_lawful() {
    let b = ln9_board(&[(12, 13), (9, 1), (13, 1)]);
    counted(&nardy(&b, 5, 1), &b, 30, &["24/19 15/14"], &[]);
}

fn ln11_board() -> Board {
    position(
        &[(24, 9), (23, 1), (22, 1), (8, 2), (2, 1), (1, 1)],
        &[(12, 14), (10, 1)],
    )
}

#[test]
fn ln11_a_block_across_the_seam_and_a_touch_down_are_judged() {
    let b = ln11_board();
    counted(
        &nardy(&b, 3, 3),
        &b,
        35,
        &["24/21 23/20 22/19 8/5", "23/17 24/18", "8/2(2)", "23/11"],
        &["24/21 8/5(2) 5/2", "24/18 8/5(2)", "22/10"],
    );
}

#[test]
fn ln11e_block_timing_end_judges_the_final_position_only() {
    let b = ln11_board();
    let set = results(&LongNardy, &b, 3, 3, &[("block_timing", "end")]);
    counted(&set, &b, 38, &["24/18 8/5(2)"], &["24/21 8/5(2) 5/2"]);
}

fn ln12_board(o: &[(u8, u8)]) -> Board {
    position(&[(7, 9), (6, 2), (5, 1), (4, 1), (3, 1), (2, 1)], o)
}

#[test]
fn ln12_a_gap_must_be_opened_before_the_home_board_closes() {
    let b = ln12_board(&[(12, 13), (9, 2)]);
    exactly(
        &nardy(&b, 6, 1),
        &b,
        &["5/4 7/1", "4/3 7/1", "3/2 7/1", "2/1 7/1"],
    );
}

#[test]
fn ln13_with_an_opposing_checker_ahead_the_home_board_may_close() {
    let b = ln12_board(&[(12, 13), (9, 1), (15, 1)]);
    exactly(
        &nardy(&b, 6, 1),
        &b,
        &[
            "5/4 7/1", "4/3 7/1", "3/2 7/1", "2/1 7/1", "7/6 7/1", "6/5 7/1",
        ],
    );
}

#[test]
fn ln14_bearing_off_with_the_larger_die_only_from_the_highest_point() {
    let b = position(&[(6, 1), (3, 1)], &[(1, 1), (15, 14)]);
    exactly(&nardy(&b, 5, 2), &b, &["6/4/off"]);
}

#[test]
fn ln15_exact_and_larger_die_bear_offs() {
    let b = position(&[(5, 1), (3, 1)], &[(15, 15)]);
    exactly(&nardy(&b, 6, 2), &b, &["5/3/off", "5/off 3/1"]);
}

#[test]
fn ln16_either_die_alone_plays_the_larger() {
    let b = position(&[(9, 1)], &[(1, 1), (16, 14)]);
    exactly(&nardy(&b, 5, 3), &b, &["9/4"]);
}

#[test]
fn ln17_no_legal_play_passes_the_turn() {
    let b = position(&[(24, 14), (13, 1)], &[(12, 13), (18, 1), (7, 1)]);
    exactly(&nardy(&b, 6, 6), &b, &["-"]);
}

fn ln18_board() -> Board {
    position(
        &[(24, 10), (18, 1), (17, 1), (16, 1), (15, 1), (14, 1)],
        &[(12, 14), (23, 1)],
    )
}

#[test]
fn ln18_a_touch_down_completing_a_block_is_illegal() {
    let b = ln18_board();
    let set = nardy(&b, 5, 1);
    counted(&set, &b, 22, &["24/19 18/17"], &["24/18"]);
}

#[test]
fn ln18e_block_timing_end_allows_the_touch_down() {
    let b = ln18_board();
    let set = results(&LongNardy, &b, 5, 1, &[("block_timing", "end")]);
    counted(&set, &b, 23, &["24/18"], &[]);
}

#[test]
fn ln19_a_checker_comes_home_and_another_bears_off_in_one_turn() {
    let b = position(&[(7, 1), (3, 1), (2, 1)], &[(18, 15)]);
    exactly(&nardy(&b, 4, 2), &b, &["7/3 2/off", "7/1"]);
}

#[test]
fn fv1_six_six_opening_runner_stopped_by_the_opponents_start() {
    exactly(&fevga(&start(), 6, 6), &start(), &["24/18"]);
}

#[test]
fn fv2_five_five_releases_on_the_third_five() {
    exactly(&fevga(&start(), 5, 5), &start(), &["24/4", "24/9 24/19"]);
}

#[test]
fn fv3_four_four_loses_two_fours() {
    exactly(&fevga(&start(), 4, 4), &start(), &["24/16"]);
}

#[test]
fn fv4_three_three_loses_a_three() {
    exactly(&fevga(&start(), 3, 3), &start(), &["24/15"]);
}

#[test]
fn fv5_six_five_is_not_yet_released() {
    exactly(&fevga(&start(), 6, 5), &start(), &["24/13"]);
}

#[test]
fn fv6_release_after_the_first_die_frees_the_second() {
    let b = position(&[(24, 14), (14, 1)], &[(12, 14), (3, 1)]);
    exactly(&fevga(&b, 3, 1), &b, &["14/10", "14/11 24/23"]);
}

#[test]
fn fv7_only_the_runner_moves_before_release() {
    let b = position(&[(24, 14), (14, 1)], &[(12, 14), (11, 1)]);
    exactly(&fevga(&b, 3, 1), &b, &["14/13/10"]);
}

#[test]
fn fv7b_a_die_the_runner_cannot_play_is_lost() {
    let b = position(&[(24, 14), (15, 1)], &[(12, 14), (11, 1)]);
    exactly(&fevga(&b, 3, 1), &b, &["15/14"]);
}

#[test]
fn fv8_either_die_alone_plays_the_larger() {
    let b = position(&[(24, 14), (20, 1)], &[(12, 14), (13, 1)]);
    exactly(&fevga(&b, 6, 1), &b, &["20/14"]);
}

fn fv9_board(x: &[(u8, u8)]) -> Board {
    position(x, &[(12, 13), (6, 1), (14, 1)])
}

#[test]
fn fv9_no_full_start_quarter_while_the_start_holds_checkers() {
    let b = fv9_board(&[(24, 9), (23, 1), (22, 1), (21, 1), (20, 1), (5, 2)]);
    counted(
        &fevga(&b, 5, 1),
        &b,
        24,
        &["24/19 20/19", "24/19 23/22", "24/18"],
        &["24/19 5/4"],
    );
}

#[test]
fn fv10_the_start_empties_as_the_quarter_fills() {
    let b = fv9_board(&[(24, 1), (23, 1), (22, 1), (21, 1), (20, 1), (5, 10)]);
    counted(&fevga(&b, 5, 1), &b, 25, &["24/19 5/4"], &[]);
}

fn fv11_board() -> Board {
    position(
        &[
            (24, 5),
            (8, 1),
            (7, 1),
            (6, 1),
            (5, 1),
            (4, 1),
            (3, 1),
            (2, 4),
        ],
        &[(9, 15)],
    )
}

#[test]
fn fv11_a_wall_in_front_of_every_opposing_checker_must_open() {
    let b = fv11_board();
    counted(
        &fevga(&b, 2, 1),
        &b,
        43,
        &["3/1 24/23", "8/6 7/6", "4/2 24/23"],
        &["24/21", "24/23 24/22", "24/22 2/1"],
    );
}

#[test]
fn fv11n_without_the_trap_duty_the_wall_may_stand() {
    let b = fv11_board();
    let set = results(&Fevga, &b, 2, 1, &[("trap_duty", "off")]);
    counted(&set, &b, 46, &["24/21", "24/23 24/22", "24/22 2/1"], &[]);
}

#[test]
fn fv12_the_duty_lapses_when_no_play_can_open_the_wall() {
    let b = position(
        &[(24, 9), (6, 1), (5, 1), (4, 1), (3, 1), (2, 1), (1, 1)],
        &[(7, 15)],
    );
    exactly(
        &fevga(&b, 6, 6),
        &b,
        &["24/6 24/18", "24/12(2)", "24/12 24/18(2)", "24/18(4)"],
    );
}

fn fv13_board() -> Board {
    position(
        &[(24, 9), (10, 1), (7, 1), (6, 1), (5, 1), (4, 1), (3, 1)],
        &[(12, 14), (8, 1)],
    )
}

#[test]
fn fv13_primes_outside_the_start_quarter_are_lawful() {
    let b = fv13_board();
    counted(&fevga(&b, 6, 2), &b, 18, &["10/4/2"], &[]);
}

#[test]
fn fv13n_the_nardy_block_option_forbids_them() {
    let b = fv13_board();
    let set = results(&Fevga, &b, 6, 2, &[("nardy_block", "on")]);
    counted(&set, &b, 17, &[], &["10/4/2"]);
}

#[test]
fn fv14_bearing_off_as_in_long_nardy() {
    let b = position(&[(6, 1), (3, 1)], &[(1, 1), (13, 14)]);
    exactly(&fevga(&b, 5, 2), &b, &["6/4/off"]);
}

fn fv15_board() -> Board {
    position(&[(24, 14), (13, 1)], &[(11, 1), (9, 1), (3, 13)])
}

#[test]
fn fv15_landing_on_the_empty_opposing_start_releases() {
    let b = fv15_board();
    exactly(
        &fevga(&b, 1, 1),
        &b,
        &["13/12 24/21", "13/12 24/22 24/23", "13/12 24/23(3)"],
    );
}

#[test]
fn fv15p_release_pass_needs_a_checker_past_it() {
    let b = fv15_board();
    let set = results(&Fevga, &b, 1, 1, &[("release", "pass")]);
    exactly(&set, &b, &["13/12"]);
}

#[test]
fn fv16_a_blocked_runner_passes_the_turn() {
    let b = position(&[(24, 14), (18, 1)], &[(12, 14), (17, 1)]);
    exactly(&fevga(&b, 1, 1), &b, &["-"]);
}

/// What `loser` concedes (the position's result).
fn conceded<V: Variant<State = SameWayState>>(
    variant: &V,
    board: &Board,
    opts: &[(&str, &str)],
) -> (u32, String) {
    let state = variant.new_game(&options(opts)).unwrap().state;
    let state = SameWayState {
        board: *board,
        ..state
    };
    let outcome = variant.concede(&state, Seat::Black);
    assert_eq!(outcome.winner, Some(Seat::White));
    (outcome.level, outcome.kind)
}

/// White has borne off everything but three checkers; black's position
/// is given.
fn scoring_board(black: &[(u8, u8)]) -> Board {
    Board::from_points(&[(1, 3)], black)
}

#[test]
fn sc1_to_sc6_oin_mars_koks_single_and_double() {
    let one_off = scoring_board(&[(3, 14)]);
    let none_off_far = scoring_board(&[(20, 15)]);
    let none_off_four_home = scoring_board(&[(20, 11), (2, 4)]);
    let three_off = scoring_board(&[(3, 12)]);
    assert_eq!(conceded(&LongNardy, &one_off, &[]), (1, "oin".into()));
    assert_eq!(conceded(&LongNardy, &none_off_far, &[]), (2, "mars".into()));
    assert_eq!(
        conceded(&LongNardy, &none_off_far, &[("koks", "on")]),
        (3, "koks".into())
    );
    assert_eq!(
        conceded(&LongNardy, &none_off_four_home, &[("koks", "on")]),
        (2, "mars".into())
    );
    assert_eq!(conceded(&Fevga, &none_off_far, &[]), (2, "double".into()));
    assert_eq!(conceded(&Fevga, &three_off, &[]), (1, "single".into()));
}

#[test]
fn a_shared_point_or_a_checker_on_the_bar_is_refused() {
    let shared = position(&[(24, 14), (5, 1)], &[(12, 14), (5, 1)]);
    assert!(LongNardy.setup_position(&shared, &Options::new()).is_err());
    let mut barred = start();
    barred.checkers[0][24] -= 1;
    barred.checkers[0][25] += 1;
    assert!(Fevga.setup_position(&barred, &Options::new()).is_err());
    assert!(
        LongNardy
            .new_game(&options(&[("head_doubles", "9")]))
            .is_err()
    );
    assert!(Fevga.new_game(&options(&[("koks", "on")])).is_err());
}
