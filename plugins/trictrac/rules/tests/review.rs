//! Review tests: rules the worked examples (TT1..TT22) do not exercise.
//! Each test names its rule and cites its source (the spec
//! /work/shared/rules/trictrac.md §, docs/trictrac.md §, Laws2013 art.,
//! Lelasseux §).
//!
//! Positions use White's field numbering for both sides (W moves 1→24, B
//! moves 24→1); White's field x is White's point 25 − x, a Black checker
//! on White's field x is on Black's point x.

mod common;

use std::collections::BTreeMap;

use bg_trictrac_rules::{TricTrac, TricTracState, roll_events};
use bg_variant_api::Variant;
use bg_variant_api::engine::{Board, LegalPlay};
use common::*;

/// White's checkers on White's field `f` of a result board.
fn wf(board: &Board, f: u8) -> u8 {
    board.count(W, 25 - f)
}

/// White's position as (field, count) pairs (field 25 = off).
fn white_fields(board: &Board) -> Vec<(u8, u8)> {
    let mut v: Vec<(u8, u8)> = (1..=24)
        .filter(|&f| wf(board, f) > 0)
        .map(|f| (f, wf(board, f)))
        .collect();
    if board.off(W) > 0 {
        v.push((25, board.off(W)));
    }
    v
}

fn results(out: &[LegalPlay]) -> Vec<Vec<(u8, u8)>> {
    out.iter().map(|lp| white_fields(&lp.result)).collect()
}

// ------------------------------------------------------------ tout d'une

/// B far on White's side (White's fields 2..9), unable to fill either of
/// his jans; W's talon moves of 1..5 blocked.
fn black_low() -> Vec<(u8, u8)> {
    vec![
        (2, 2),
        (3, 2),
        (4, 2),
        (5, 2),
        (6, 2),
        (7, 2),
        (9, 2),
        (10, 1),
    ]
}

/// Spec §2.3 / Laws2013 art. IX: an empty corner, the player's own, may be
/// the rest of a tout d'une. W 8 with 4-3: 11 is B's, 12 (own empty
/// corner) is the only rest; 8→12→15 is the only play.
#[test]
fn tout_d_une_may_rest_on_own_empty_corner() {
    let b = board(
        &[(1, 14), (8, 1)],
        &[(11, 2), (2, 3), (3, 3), (4, 3), (5, 2), (6, 2)],
    );
    let r = results(&plays(&b, W, 4, 3));
    assert_eq!(r, vec![vec![(1, 14), (15, 1)]]);
}

/// Spec §2.3 / Laws2013 art. IX: the opponent's empty corner may be the
/// rest of a tout d'une. W 9 with 4-2: 11 is B's, 13 (B's empty corner)
/// is the rest; 9→13→15 is the only play.
#[test]
fn tout_d_une_may_rest_on_opponents_empty_corner() {
    let b = board(
        &[(1, 14), (9, 1)],
        &[(11, 2), (2, 3), (3, 3), (4, 3), (5, 2), (6, 2)],
    );
    let r = results(&plays(&b, W, 4, 2));
    assert_eq!(r, vec![vec![(1, 14), (15, 1)]]);
}

/// Spec §2.2-2.3 / Laws2013 art. VII: a rest holding a single opposing
/// checker is blocked. W 5 with 3-2: 7 and 8 each hold one B checker, so
/// 5→10 is not a play; nothing is playable.
#[test]
fn tout_d_une_rest_blocked_by_a_single_opposing_checker() {
    let b = board(
        &[(1, 14), (5, 1)],
        &[(7, 1), (8, 1), (3, 3), (4, 3), (20, 7)],
    );
    let out = plays(&b, W, 3, 2);
    assert!(results(&out).iter().all(|r| !r.contains(&(10, 1))));
    assert_eq!(results(&out), vec![vec![(1, 14), (5, 1)]]);
}

/// Spec §2.1 / Lelasseux §30: a doublet is two moves, never four.
#[test]
fn doublet_moves_two_die_moves_only() {
    let b = board(&[(1, 15)], &[(24, 15)]);
    for lp in plays(&b, W, 2, 2) {
        let pips: u32 = white_fields(&lp.result)
            .iter()
            .map(|&(f, n)| u32::from(f - 1) * u32::from(n))
            .sum();
        assert_eq!(pips, 4, "{:?}", white_fields(&lp.result));
    }
}

// ------------------------------------------------------- forbidden jans

/// W: talon, 11, corner. B's talon (White's 24) has 1: B cannot fill his
/// petit jan; B's grand jan (White's 13..18, 15 empty) can still be filled.
fn stage_two_board() -> Board {
    board(
        &[(1, 12), (11, 1), (12, 2)],
        &[
            (24, 1),
            (19, 4),
            (18, 2),
            (17, 2),
            (16, 2),
            (14, 2),
            (13, 2),
        ],
    )
}

/// Spec §2.5 stage 2 / Laws2013 art. XIV: while B can fill only his grand
/// jan, its empty fields may be rests of a tout d'une landing in his petit
/// jan (11→15→20 with 5-4), never stops.
#[test]
fn stage_two_rest_in_opponents_grand_jan_landing_in_his_petit_jan() {
    let r = results(&plays(&stage_two_board(), W, 5, 4));
    assert!(
        r.iter().any(|p| p.contains(&(20, 1))),
        "11→15→20 must be legal: {r:?}"
    );
    assert!(
        r.iter()
            .all(|p| !p.iter().any(|&(f, _)| (13..=18).contains(&f))),
        "no checker may stop in B's fillable grand jan: {r:?}"
    );
}

/// Spec §2.5 stage 1: while B can still fill his petit jan (12 on his
/// talon), no W checker may end in it, nor in his grand jan.
#[test]
fn stage_one_nothing_crosses() {
    let b = board(&[(1, 12), (11, 1), (12, 2)], &[(24, 12), (18, 2), (16, 1)]);
    let r = results(&plays(&b, W, 5, 4));
    assert!(
        r.iter()
            .all(|p| !p.iter().any(|&(f, _)| (13..=24).contains(&f))),
        "{r:?}"
    );
}

/// Spec §2.5 stage 3: once B can fill neither jan, W may stop in B's grand
/// jan (11→16 with 8→12) and land in his petit jan (11→20).
#[test]
fn stage_three_any_free_field() {
    let mut black = black_low();
    black.retain(|&(f, _)| f != 10);
    black.push((24, 1));
    let b = board(&[(1, 11), (8, 1), (11, 1), (12, 2)], &black);
    let r = results(&plays(&b, W, 5, 4));
    assert!(r.contains(&vec![(1, 11), (12, 3), (16, 1)]), "{r:?}");
    assert!(r.iter().any(|p| p.contains(&(20, 1))), "{r:?}");
}

// ---------------------------------------------------------- corner laws

/// Spec §2.4 / Laws2013 art. IX: the corner is taken two at once; a lone
/// checker never ends on it.
#[test]
fn corner_never_holds_a_lone_checker() {
    // 10 is B's, the talon is blocked: 8/12 alone is not a play (nor the
    // 4 alone), 8→12→14 is the only one.
    let b = board(&[(1, 14), (8, 1)], &black_low());
    let r = results(&plays(&b, W, 4, 2));
    assert_eq!(r, vec![vec![(1, 14), (14, 1)]]);
}

/// Spec §2.4: the last two corner checkers leave together. W 1×13, 12×2,
/// talon blocked, B unable to fill: the only play is 12/14 12/15.
#[test]
fn corner_last_two_leave_together() {
    let b = board(&[(1, 13), (12, 2)], &black_low());
    let r = results(&plays(&b, W, 3, 2));
    assert_eq!(r, vec![vec![(1, 13), (14, 1), (15, 1)]]);
}

/// Spec §2.4: with three on the corner, the extra leaves freely (a tout
/// d'une 12→17 leaving two).
#[test]
fn corner_extra_checker_leaves_freely() {
    let b = board(&[(1, 12), (12, 3)], &black_low());
    let r = results(&plays(&b, W, 3, 2));
    assert!(r.contains(&vec![(1, 12), (12, 2), (17, 1)]), "{r:?}");
}

/// Spec §2.4 / Laws2013 art. IX: never a checker on the opponent's corner.
#[test]
fn never_end_on_the_opponents_corner() {
    let b = board(&[(1, 13), (9, 1), (10, 1)], &[(24, 15)]);
    let r = results(&plays(&b, W, 4, 3));
    assert!(r.iter().all(|p| !p.iter().any(|&(f, _)| f == 13)), "{r:?}");
}

fn black_for_power() -> Vec<(u8, u8)> {
    vec![
        (2, 2),
        (3, 2),
        (4, 2),
        (5, 2),
        (6, 2),
        (9, 2),
        (10, 2),
        (11, 1),
    ]
}

/// Spec §2.4 / Lelasseux §44: W on 7 and 8 with 6-5, both corners empty:
/// the corner is taken by power (7/12 8/12).
#[test]
fn par_puissance_from_7_and_8_with_6_5() {
    let b = board(&[(1, 13), (7, 1), (8, 1)], &black_for_power());
    let r = results(&plays(&b, W, 6, 5));
    assert!(r.contains(&vec![(1, 13), (12, 2)]), "{r:?}");
}

/// Spec §2.4: no power when the opponent holds his corner.
#[test]
fn no_par_puissance_when_opponents_corner_held() {
    let mut black = black_for_power();
    black.retain(|&(f, _)| f != 11 && f != 10);
    black.push((13, 2));
    black.push((11, 1));
    let b = board(&[(1, 13), (7, 1), (8, 1)], &black);
    let r = results(&plays(&b, W, 6, 5));
    assert!(r.iter().all(|p| !p.contains(&(12, 2))), "{r:?}");
}

/// Spec §2.4 / Laws2013 art. IX: by effect when possible, never by power.
/// W 6, 7, 8 with 6-5: 6/12 7/12 is by effect; 7/12 8/12 by power is not
/// allowed.
#[test]
fn par_puissance_forbidden_when_par_effet_possible() {
    let mut black = black_for_power();
    black.retain(|&(f, _)| f != 6);
    black.push((11, 2));
    let b = board(&[(1, 12), (6, 1), (7, 1), (8, 1)], &black);
    let r = results(&plays(&b, W, 6, 5));
    assert!(r.contains(&vec![(1, 12), (8, 1), (12, 2)]), "{r:?}");
    assert!(!r.contains(&vec![(1, 12), (6, 1), (12, 2)]), "{r:?}");
}

/// Spec §2.4: on a doublet, power takes two checkers from one field (9×2
/// with 4-4).
#[test]
fn par_puissance_on_a_doublet() {
    let mut black = black_for_power();
    black.retain(|&(f, _)| f != 9);
    black.push((8, 2));
    let b = board(&[(1, 13), (9, 2)], &black);
    let r = results(&plays(&b, W, 4, 4));
    assert!(r.contains(&vec![(1, 13), (12, 2)]), "{r:?}");
}

/// Spec §2.4: power never adds to a held corner.
#[test]
fn par_puissance_never_adds_surplus() {
    let b = board(&[(1, 11), (7, 1), (8, 1), (12, 2)], &black_for_power());
    let r = results(&plays(&b, W, 6, 5));
    assert!(r.iter().all(|p| !p.contains(&(12, 4))), "{r:?}");
}

// ----------------------------------------------------------- bearing off

/// B's checkers for bear-off positions: his talon (White's 24) and far.
fn black_on_24() -> Vec<(u8, u8)> {
    vec![(24, 15)]
}

/// Laws2013 art. VIII: a number that cannot be played inside because of
/// opposing checkers is not played as an overflow from a nearer checker.
/// W 19, 23 with 5-1 (24 is B's): only 19→20→off.
#[test]
fn overflow_never_from_a_nearer_checker() {
    let b = board_with_off(&[(19, 1), (23, 1)], &black_on_24());
    let r = results(&plays(&b, W, 5, 1));
    assert_eq!(r, vec![vec![(23, 1), (25, 14)]]);
}

/// Laws2013 art. VIII: "not permitted to play one number in a way that
/// forces the second to be played only as an overflow". W 19, 24 with
/// 6-5: the 5 must be played inside (19→24), the 6 then bears off; both
/// checkers cannot go off, so no exit scores.
#[test]
fn number_playable_inside_is_not_spent_as_overflow() {
    let b = board_with_off(&[(19, 1), (24, 1)], &[(2, 15)]);
    let r = results(&plays(&b, W, 6, 5));
    assert_eq!(r, vec![vec![(24, 1), (25, 14)]]);
    check(&roll(&b, W, 6, 5), W, 0, 0, &[]);
}

/// docs/trictrac.md §9 (choice): the exit is never declined. W 20, 22
/// with 5-3 both exact: the only play bears both off, and it scores 4.
#[test]
fn exit_is_forced_when_possible() {
    let b = board_with_off(&[(20, 1), (22, 1)], &[(2, 15)]);
    let r = results(&plays(&b, W, 5, 3));
    assert_eq!(r, vec![vec![(25, 15)]]);
    check(&roll(&b, W, 5, 3), W, 4, 0, &[(W, "exit", 1, 4)]);
}

/// Spec §3.6: on the roll that bears off the last checker, the unused
/// number is ignored (W 22 alone, 6-5: exit 4, B nothing).
#[test]
fn exit_with_one_number_gives_no_impotence() {
    let b = board_with_off(&[(22, 1)], &[(2, 15)]);
    check(&roll(&b, W, 6, 5), W, 4, 0, &[(W, "exit", 1, 4)]);
}

/// Spec §2.8: the last checker may come home with one number and the
/// other bears off (W 18 and 24 with 6-1: 18→24 then 24→off exact, or
/// 18→19→off? 19+6 = 25 exact).
#[test]
fn last_checker_enters_and_the_other_number_bears_off() {
    let b = board_with_off(&[(18, 1), (24, 1)], &[(2, 15)]);
    let r = results(&plays(&b, W, 6, 1));
    assert!(r.contains(&vec![(24, 1), (25, 14)]), "{r:?}");
}

// ------------------------------------------------------------------ hits

/// Spec §3.2: an empty corner is an admissible rest for a hit by the sum.
/// W 8 with 4-3 on B15: rest 11 holds two B, rest 12 is W's empty corner:
/// a true hit, 2 points.
#[test]
fn hit_by_the_sum_through_own_empty_corner_is_true() {
    let b = board(&[(1, 14), (8, 1)], &[(15, 1), (11, 2), (24, 12)]);
    check(
        &roll(&b, W, 4, 3),
        W,
        2,
        0,
        &[(W, "true_hit_grand_table", 1, 2)],
    );
}

/// Spec §3.2 / Laws2013 art. X: a doublet counts one way for its number
/// even with two checkers on the field (W 8×2, B alone on 11, 3-3: 4).
#[test]
fn doublet_direct_hit_is_one_way_with_two_checkers() {
    let b = board(&[(1, 13), (8, 2)], &[(11, 1), (24, 14)]);
    check(
        &roll(&b, W, 3, 3),
        W,
        4,
        0,
        &[(W, "true_hit_grand_table", 1, 4)],
    );
}

/// Spec §3.2: a false hit on a checker in the petit-jan table gives the
/// opponent 4 (W 11 on B20 with 5-4, rests 15 and 16 held by B).
#[test]
fn false_hit_in_petit_jan_table_gives_four() {
    let b = board(&[(1, 14), (11, 1)], &[(20, 1), (15, 2), (16, 2), (24, 10)]);
    check(
        &roll(&b, W, 5, 4),
        W,
        0,
        4,
        &[(B, "false_hit_petit_table", 1, 4)],
    );
}

/// Spec §3.2 / §8.9: forbidden jans do not matter for hits; a lone B on
/// his own grand jan (White's 16) is hit directly by 4 from 12 although B
/// can still fill that jan.
#[test]
fn hits_ignore_forbidden_jans() {
    let b = board(&[(1, 13), (12, 2)], &[(16, 1), (24, 14)]);
    let ev = roll(&b, W, 4, 2);
    assert!(
        ev.iter()
            .any(|e| e.seat == W && e.reason == "true_hit_grand_table" && e.ways == 1),
        "{ev:?}"
    );
}

// ------------------------------------------------------------ jans rares

/// Spec §3.1 / Lepeintre ch. II: the two checkers out may stand on one
/// field (8×2 with 5-4: 8+4 = 12, 8+5 = 13): jan de deux tables, 4.
#[test]
fn two_tables_from_one_field() {
    let b = board(&[(1, 13), (8, 2)], &[(24, 15)]);
    check(&roll(&b, W, 5, 4), W, 4, 0, &[(W, "two_tables", 1, 4)]);
}

/// Spec §3.1: the jan de deux tables needs exactly two checkers out.
#[test]
fn no_two_tables_with_three_checkers_out() {
    let b = board(&[(1, 12), (8, 2), (2, 1)], &[(24, 15)]);
    let ev = roll(&b, W, 5, 4);
    assert!(ev.iter().all(|e| e.reason != "two_tables"), "{ev:?}");
}

/// Spec §3.1: the jan de mézéas needs exactly two checkers out.
#[test]
fn no_mezeas_with_a_third_checker_out() {
    let b = board(&[(1, 12), (5, 1), (12, 2)], &[(24, 15)]);
    let ev = roll(&b, W, 6, 1);
    assert!(ev.iter().all(|e| e.reason != "mezeas"), "{ev:?}");
}

/// Spec §3.1: no jan de six tables unless the roll brings talon checkers
/// to both empty fields (W 1×11, 2, 5, 6, 7 on the third roll with 3-1).
#[test]
fn six_tables_needs_both_empty_fields() {
    let b = board(&[(1, 11), (2, 1), (5, 1), (6, 1), (7, 1)], &[(24, 15)]);
    let ev = roll_events(&b, W, dice(3, 1), 3, false);
    assert!(ev.iter().all(|e| e.reason != "six_tables"), "{ev:?}");
}

// --------------------------------------------------------------- filling

/// Spec §3.4 / Laws2013 art. XIII: the two checkers of the corner never
/// count for filling the jan de retour. W 12×2, 18×2, 19..23×2, 24×1 with
/// 6-6: the direct 6 from 18 is one way; the 12 from the corner is not:
/// 6 points.
#[test]
fn retour_fill_never_counts_the_corners_last_two() {
    let mut white = vec![(12, 2), (18, 2), (24, 1)];
    white.extend((19..=23).map(|f| (f, 2)));
    let b = board(&white, &[(2, 3), (3, 3), (4, 3), (5, 3), (6, 3)]);
    check(&roll(&b, W, 6, 6), W, 6, 0, &[(W, "fill_retour_jan", 1, 6)]);
}

/// Spec §3.4: a third corner checker does count (12×3, 18, 6-6: the 6
/// from 18 and the 12 from the corner through 18: 12 points).
#[test]
fn retour_fill_counts_a_third_corner_checker() {
    let mut white = vec![(12, 3), (18, 1), (24, 1)];
    white.extend((19..=23).map(|f| (f, 2)));
    let b = board(&white, &[(2, 3), (3, 3), (4, 3), (5, 3), (6, 3)]);
    check(
        &roll(&b, W, 6, 6),
        W,
        12,
        0,
        &[(W, "fill_retour_jan", 2, 12)],
    );
}

/// Spec §2.4 and §3.4: filling the grand jan by taking the corner by
/// power (two missing: one way) is compulsory and scores 4.
#[test]
fn grand_jan_filled_by_power_one_way() {
    let b = board(
        &[(1, 3), (7, 3), (8, 3), (9, 2), (10, 2), (11, 2)],
        &[(24, 15)],
    );
    check(&roll(&b, W, 6, 5), W, 4, 0, &[(W, "fill_grand_jan", 1, 4)]);
    let r = results(&plays(&b, W, 6, 5));
    assert_eq!(
        r,
        vec![vec![
            (1, 3),
            (7, 2),
            (8, 2),
            (9, 2),
            (10, 2),
            (11, 2),
            (12, 2)
        ]]
    );
}

/// Spec §3.4: a tout d'une fill way needs a rest the checker may stop on:
/// a rest holding one B checker does not count (W 2×3 would fill 5 by 3
/// via 3 or 4; 3 has B alone, 4 is W's).
#[test]
fn fill_ways_sum_through_own_rest() {
    // Petit jan: 1×3, 2×3, 3×2, 4×2, 5×1, 6×2 = 13, + 7×2 = 15.
    let b = board(
        &[(1, 3), (2, 3), (3, 2), (4, 2), (5, 1), (6, 2), (7, 2)],
        &[(24, 15)],
    );
    // 2-1: direct 1 from 4 (4×2, not surplus), direct 2 from 3 (not
    // surplus), sum 3 from 2 (surplus, rests 3 and 4 own): one way.
    check(&roll(&b, W, 2, 1), W, 4, 0, &[(W, "fill_petit_jan", 1, 4)]);
}

// ------------------------------------------------- marking, stay and go

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn state(b: &Board, opts: &[(&str, &str)]) -> TricTracState {
    TricTrac
        .setup_position(b, &options(opts))
        .expect("setup")
        .state
}

/// TT1/TT2's position, where B's 6-6 gives B 14 and W 18.
fn t2_board() -> Board {
    let mut white: Vec<(u8, u8)> = (2..=8).map(|f| (f, 1)).collect();
    white.extend((9..=12).map(|f| (f, 2)));
    board(
        &white,
        &[(13, 2), (14, 2), (16, 2), (17, 2), (18, 1), (24, 6)],
    )
}

/// Spec §4 / Laws2013 art. XV-XVI / Lelasseux §158: the roller marks
/// first; a hole from his own roll asks stay or go; after stay and the
/// play, the opponent marks his gift from 0 and in bredouille.
#[test]
fn roller_marks_first_then_stays_and_the_opponent_marks_from_zero() {
    let s = state(
        &t2_board(),
        &[("start_points", "8,10"), ("start_bredouille", "none")],
    );
    let t = TricTrac.after_roll(&s, B, dice(6, 6));
    // B: 10 + 14 = 24: one single hole, then a double one: 3 holes, 0 left.
    assert_eq!(t.state.tally[B.index()].holes, 3);
    assert_eq!(t.state.tally[W.index()].points, 0);
    assert!(t.decision.is_some(), "a hole from his own roll: stay or go");
    let t = TricTrac.decide(&t.state, B, "stay").unwrap();
    let mut out = Vec::new();
    TricTrac.legal_plays(&t.state, B, dice(6, 6), &mut out);
    let t = TricTrac.after_play(&t.state, B, &out[0]);
    // W: 18 from 0 in bredouille: 2 holes, 6 left; he must stay.
    assert_eq!(t.state.tally[W.index()].holes, 2);
    assert_eq!(t.state.tally[W.index()].points, 6);
    assert!(t.decision.is_none());
}

/// Spec §4 / Laws2013 art. XVI / Lelasseux §157: after a go, the
/// opponent's gift is void, every point resets, the checkers go back,
/// and the goer rolls first.
#[test]
fn go_voids_the_gift_and_resets() {
    let s = state(
        &t2_board(),
        &[("start_points", "8,10"), ("start_bredouille", "none")],
    );
    let t = TricTrac.after_roll(&s, B, dice(6, 6));
    let t = TricTrac.decide(&t.state, B, "go").unwrap();
    assert_eq!(t.next_roller, Some(B));
    assert_eq!(t.state.tally[B.index()].holes, 3);
    assert_eq!(t.state.tally[W.index()].holes, 0);
    assert_eq!((t.state.tally[0].points, t.state.tally[1].points), (0, 0));
    assert_eq!((t.state.tally[0].rolls, t.state.tally[1].rolls), (0, 0));
    assert_eq!(t.state.board, bg_trictrac_rules::start_board());
    assert!(t.state.gift.is_empty());
}

/// Spec §4 / Laws2013 art. XVI: a hole won from the opponent's roll gives
/// no choice. W 10, B 0; B's 6-6 on TT2: B's 14 make his holes first (W's
/// 10 wiped), then W's gift of 18 from 0 makes 2 holes: no decision.
#[test]
fn hole_from_the_opponents_roll_must_stay() {
    let s = state(&t2_board(), &[("start_points", "10,0")]);
    let t = TricTrac.after_roll(&s, B, dice(6, 6));
    let t = TricTrac.decide(&t.state, B, "stay").unwrap();
    let mut out = Vec::new();
    TricTrac.legal_plays(&t.state, B, dice(6, 6), &mut out);
    let t = TricTrac.after_play(&t.state, B, &out[0]);
    assert!(t.decision.is_none());
    assert!(t.next_roller.is_none());
    assert_eq!(t.state.tally[W.index()].holes, 2);
}

/// Spec §3.7 / Laws2013 art. VIII, XVIII.6: bearing off the last checker
/// scores 4, the checkers go back, the points and bredouille stay, the
/// rolls reset and the exiter rolls first.
#[test]
fn exit_is_a_releve_keeping_points_and_the_exiter_rolls_first() {
    let b = board_with_off(&[(22, 1)], &[(2, 15)]);
    let s = state(&b, &[("start_points", "2,6"), ("start_rolls", "30,30")]);
    let t = TricTrac.after_roll(&s, W, dice(6, 5));
    assert!(t.decision.is_none());
    assert_eq!(t.state.tally[W.index()].points, 6);
    let mut out = Vec::new();
    TricTrac.legal_plays(&t.state, W, dice(6, 5), &mut out);
    assert_eq!(out.len(), 1);
    let t = TricTrac.after_play(&t.state, W, &out[0]);
    assert_eq!(t.next_roller, Some(W));
    assert_eq!(t.state.board, bg_trictrac_rules::start_board());
    assert_eq!((t.state.tally[0].points, t.state.tally[1].points), (6, 6));
    assert!(!t.state.tally[0].bredouille && !t.state.tally[1].bredouille);
    assert_eq!((t.state.tally[0].rolls, t.state.tally[1].rolls), (0, 0));
}

/// Spec §3.1 / Laws2013 art. XII: the jan de six tables on the third roll
/// of the relevé, counted by the state (start_rolls 2 → next is the 3rd).
#[test]
fn six_tables_on_the_third_roll_through_the_state() {
    let b = board(&[(1, 11), (2, 1), (5, 1), (6, 1), (7, 1)], &[(24, 15)]);
    let s = state(&b, &[("start_rolls", "2,0")]);
    let t = TricTrac.after_roll(&s, W, dice(3, 2));
    assert!(
        t.events.iter().any(|e| e.reason == "six_tables"),
        "{:?}",
        t.events
    );
}

// ------------------------------------------- Lelasseux fig. 13 (§77-§82)

/// Lelasseux fig. 13: W's grand jan full with surplus on 8, 9, 11; B can
/// fill neither jan (13×4, 14×3, 15×3, 17×4, 20×1).
fn fig13(white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
    board(white, black)
}

fn fig13_white() -> Vec<(u8, u8)> {
    vec![(7, 2), (8, 3), (9, 3), (10, 2), (11, 3), (12, 2)]
}

fn fig13_black() -> Vec<(u8, u8)> {
    vec![(13, 4), (14, 3), (15, 3), (17, 4), (20, 1)]
}

/// Lelasseux §77: with 5-4, to keep, W must play 11→16 and 8→12 (the 9
/// from 11 would land on B's lone 20). Keep 4, and B20 hit by 9 from 11
/// through the empty 16: 4.
#[test]
fn lelasseux_77_five_four_forces_the_only_keeping_play() {
    let b = fig13(&fig13_white(), &fig13_black());
    let r = results(&plays(&b, W, 5, 4));
    assert_eq!(
        r,
        vec![vec![
            (7, 2),
            (8, 2),
            (9, 3),
            (10, 2),
            (11, 2),
            (12, 3),
            (16, 1)
        ]]
    );
    check(
        &roll(&b, W, 5, 4),
        W,
        8,
        0,
        &[
            (W, "keep_grand_jan", 1, 4),
            (W, "true_hit_petit_table", 1, 4),
        ],
    );
}

/// Lelasseux §77: 5-3 keeps by 11→19 (rest 16). B20 by 8 from the
/// corner: rests 17 and 15 are B's: a false hit for B, 4.
#[test]
fn lelasseux_77_five_three_keeps_passing_to_the_retour() {
    let b = fig13(&fig13_white(), &fig13_black());
    let r = results(&plays(&b, W, 5, 3));
    assert!(r.iter().any(|p| p.contains(&(19, 1))), "{r:?}");
    check(
        &roll(&b, W, 5, 3),
        W,
        4,
        4,
        &[
            (W, "keep_grand_jan", 1, 4),
            (B, "false_hit_petit_table", 1, 4),
        ],
    );
}

/// Lelasseux §82 (remplir en passant): fig. 13 with one of 10 moved to
/// 11; 4-2: the 2 fills (8→10) but the 4 must then break: no fill, no
/// points.
#[test]
fn lelasseux_82_fill_en_passant_scores_nothing() {
    let b = fig13(
        &[(7, 2), (8, 3), (9, 3), (10, 1), (11, 4), (12, 2)],
        &fig13_black(),
    );
    check(&roll(&b, W, 4, 2), W, 0, 0, &[]);
}

/// Lelasseux §80: B having moved to 16, 6-6 can be played only by
/// leaving the corner (12→18 twice); then 4-3 retakes it by effect and
/// fills again (two missing: one way, 4).
#[test]
fn lelasseux_80_leave_the_corner_then_retake_it() {
    let black = vec![(13, 4), (14, 3), (15, 3), (16, 2), (17, 2), (20, 1)];
    let b = fig13(&fig13_white(), &black);
    let out = plays(&b, W, 6, 6);
    assert_eq!(
        results(&out),
        vec![vec![(7, 2), (8, 3), (9, 3), (10, 2), (11, 3), (18, 2)]]
    );
    let after = out[0].result;
    check(
        &roll(&after, W, 4, 3),
        W,
        4,
        0,
        &[(W, "fill_grand_jan", 1, 4)],
    );
}

/// Lelasseux §62: petit jan full and two on 7; 6-6 could take the corner
/// by power from 7 (keeping the petit jan), but by effect (6→12 twice) is
/// possible, so power is not allowed.
#[test]
fn lelasseux_62_six_six_power_forbidden_by_effect() {
    let b = board(
        &[(1, 2), (2, 2), (3, 2), (4, 3), (5, 2), (6, 2), (7, 2)],
        &[(24, 15)],
    );
    let r = results(&plays(&b, W, 6, 6));
    assert!(
        !r.contains(&vec![
            (1, 2),
            (2, 2),
            (3, 2),
            (4, 3),
            (5, 2),
            (6, 2),
            (12, 2)
        ]),
        "{r:?}"
    );
    assert!(
        r.contains(&vec![
            (1, 2),
            (2, 2),
            (3, 2),
            (4, 3),
            (5, 2),
            (7, 2),
            (12, 2)
        ]),
        "{r:?}"
    );
}

/// Spec §2.3-2.4 (a held corner is an own field; with three there the
/// extra leaves freely): in fig. 13, 4-4 is played 8→12→16 and keeps (6),
/// with B20 hit by 8 from the corner through the empty 16 (6).
/// NOTE: Lelasseux §78 says 4-4 breaks here ("vous ne pouvez jouer
/// l'autre 4 que de votre flèche sixième ou septième"); this pins the
/// spec's reading, which disagrees with that sentence.
#[test]
fn held_corner_as_rest_of_a_doublet_keeps_fig13_four_four() {
    let b = fig13(&fig13_white(), &fig13_black());
    let r = results(&plays(&b, W, 4, 4));
    assert_eq!(
        r,
        vec![vec![
            (7, 2),
            (8, 2),
            (9, 3),
            (10, 2),
            (11, 3),
            (12, 2),
            (16, 1)
        ]]
    );
    check(
        &roll(&b, W, 4, 4),
        W,
        12,
        0,
        &[
            (W, "keep_grand_jan", 1, 6),
            (W, "true_hit_petit_table", 1, 6),
        ],
    );
}
