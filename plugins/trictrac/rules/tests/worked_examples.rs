//! The worked examples of docs/trictrac.md §6 (TT1..TT22, TT9b, TT15b and the
//! two exits), each as a position, a roll and the exact points of both
//! players, with the jans that make them.
//!
//! Positions are written as in the specification: (field, count) in
//! White's numbering of the tric-trac fields for both sides (W moves
//! 1→24, B moves 24→1). White's field x is White's point 25 − x; a Black
//! checker on White's field x is on Black's point x.

mod common;

use bg_trictrac_rules::roll_events;
use bg_trictrac_rules::tally::SeatTally;
use bg_trictrac_rules::tally::mark;
use bg_variant_api::engine::Board;
use common::*;

fn tally(points: u32, bredouille: bool) -> SeatTally {
    SeatTally {
        points,
        bredouille,
        ..SeatTally::default()
    }
}

// ---------------------------------------------------------------- TT1, TT2

/// TT1/TT2's position: W 2..8, 9–12 ×2. B 13×2, 14×2, 16×2, 17×2, 18, 24×6.
fn t1_board() -> Board {
    let mut white = each(2, 8, 1);
    white.extend(each(9, 12, 2));
    board(
        &white,
        &[(13, 2), (14, 2), (16, 2), (17, 2), (18, 1), (24, 6)],
    )
}

/// TT1 (Lelasseux §132): B 6-3 hits W4 (9 from 13, the rest on the single
/// W7 passable) and W5 (9 from 14 via the single W8), 4 each; W7 and W8
/// two ways each, 2 + 2 each: B +16.
#[test]
fn tt1_b_6_3_hits_four_checkers_two_through_a_passable_rest() {
    let events = roll(&t1_board(), B, 6, 3);
    check(
        &events,
        B,
        16,
        0,
        &[
            (B, "true_hit_petit_table", 2, 8),
            (B, "true_hit_grand_table", 4, 8),
        ],
    );
}

/// TT2 (Lelasseux §138): B 6-6: true hits on W2 (12 via the single W8), 6;
/// W7, 4; W8, 4 (B +14); false hits on W4, W5, W6 through the W points
/// 10, 11, 12, 6 each (W +18).
#[test]
fn tt2_b_6_6_hits_three_truly_and_three_falsely() {
    let events = roll(&t1_board(), B, 6, 6);
    check(
        &events,
        B,
        14,
        18,
        &[
            (B, "true_hit_petit_table", 1, 6),
            (B, "true_hit_grand_table", 2, 8),
            (W, "false_hit_petit_table", 3, 18),
        ],
    );
}

// -------------------------------------------------------------------- TT3

/// TT3 (Lelasseux §197): W 6-6, no 6 playable: the grand jan kept by
/// impotence, 6, and a true hit on the lone B talon checker via the empty
/// 18, 6 (W +12); false hits on 19 and 20, 6 + 6, and two unplayable
/// numbers, 2 + 2 (B +16).
#[test]
fn tt3_w_6_6_keeps_the_grand_jan_by_impotence_with_one_true_and_two_false_hits() {
    let b = board(
        &[(7, 2), (8, 2), (9, 3), (10, 3), (11, 3), (12, 2)],
        &[
            (13, 2),
            (14, 2),
            (15, 2),
            (16, 2),
            (17, 2),
            (19, 1),
            (20, 1),
            (21, 2),
            (24, 1),
        ],
    );
    let events = roll(&b, W, 6, 6);
    check(
        &events,
        W,
        12,
        16,
        &[
            (W, "keep_grand_jan", 1, 6),
            (W, "true_hit_petit_table", 1, 6),
            (B, "false_hit_petit_table", 2, 12),
            (B, "unplayable_number", 2, 4),
        ],
    );
    let legal = plays(&b, W, 6, 6);
    assert_eq!(legal.len(), 1);
    assert!(
        legal[0].play.is_empty(),
        "nothing can be played: {}",
        legal[0].play
    );
}

// -------------------------------------------------------------------- TT4

/// TT4 (Lelasseux §193): W 6-6, the only legal play is 9→(15)→21, which
/// breaks the grand jan: no keep. W 0, B +6 (false hit on B20 via the
/// blocked 14).
#[test]
fn tt4_w_6_6_only_play_breaks_the_grand_jan_so_no_keep_and_a_false_hit() {
    let b = board(
        &[(6, 1), (7, 3), (8, 2), (9, 2), (10, 2), (11, 3), (12, 2)],
        &[
            (13, 2),
            (14, 2),
            (16, 2),
            (17, 3),
            (18, 3),
            (19, 2),
            (20, 1),
        ],
    );
    let events = roll(&b, W, 6, 6);
    check(&events, W, 0, 6, &[(B, "false_hit_petit_table", 1, 6)]);

    let legal = plays(&b, W, 6, 6);
    let shown: Vec<String> = legal.iter().map(|lp| lp.play.to_string()).collect();
    assert_eq!(legal.len(), 1, "legal plays: {shown:?}");
    assert_eq!(legal[0].play.to_string(), "16/10 10/4");
    let after = board(
        &[
            (6, 1),
            (7, 3),
            (8, 2),
            (9, 1),
            (10, 2),
            (11, 3),
            (12, 2),
            (21, 1),
        ],
        &[
            (13, 2),
            (14, 2),
            (16, 2),
            (17, 3),
            (18, 3),
            (19, 2),
            (20, 1),
        ],
    );
    assert_eq!(legal[0].result, after);
}

// -------------------------------------------------------------------- TT5

const T5_BLACK: [(u8, u8); 4] = [(24, 11), (23, 1), (22, 2), (21, 1)];

/// TT5 (Lepeintre ch. II): W 1×13, 8, 10; 4-3 brings 8 to the own corner
/// and 10 to the opponent's: jan de deux tables, W +4.
#[test]
fn tt5_w_4_3_makes_the_jan_de_deux_tables() {
    let b = board(&[(1, 13), (8, 1), (10, 1)], &T5_BLACK);
    check(&roll(&b, W, 4, 3), W, 4, 0, &[(W, "two_tables", 1, 4)]);
}

/// TT5: the same position with 5-2 (10→12, 8→13): W +4.
#[test]
fn tt5_w_5_2_also_makes_the_jan_de_deux_tables() {
    let b = board(&[(1, 13), (8, 1), (10, 1)], &T5_BLACK);
    check(&roll(&b, W, 5, 2), W, 4, 0, &[(W, "two_tables", 1, 4)]);
}

/// TT5: with W on 9 and 10, 3-3 makes the jan de deux tables on a
/// doublet: W +6.
#[test]
fn tt5_w_3_3_from_9_and_10_makes_the_jan_de_deux_tables_for_6() {
    let b = board(&[(1, 13), (9, 1), (10, 1)], &T5_BLACK);
    check(&roll(&b, W, 3, 3), W, 6, 0, &[(W, "two_tables", 1, 6)]);
}

/// TT5: if B holds his corner (13×2), 4-3 is the contre-jan: B +4.
/// B's two corner checkers are taken from his talon (24×9): no lone B
/// checker is added or removed, so no hit changes.
#[test]
fn tt5_w_4_3_with_b_holding_his_corner_is_the_contre_jan_for_b() {
    let b = board(
        &[(1, 13), (8, 1), (10, 1)],
        &[(24, 9), (23, 1), (22, 2), (21, 1), (13, 2)],
    );
    check(
        &roll(&b, W, 4, 3),
        W,
        0,
        4,
        &[(B, "contre_two_tables", 1, 4)],
    );
}

// -------------------------------------------------------------------- TT6

/// TT6 (Lepeintre ch. II): W 5-1 hits B17 by 5 from the corner, 2, and
/// B18 by 6 through the empty B corner, 2; no corner hit (the 1 would
/// need a third corner checker): W +4.
#[test]
fn tt6_w_5_1_hits_from_the_corner_once_through_the_empty_opponent_corner() {
    let b = board(
        &[(1, 11), (4, 1), (5, 1), (12, 2)],
        &[(24, 9), (23, 1), (22, 2), (21, 1), (18, 1), (17, 1)],
    );
    check(
        &roll(&b, W, 5, 1),
        W,
        4,
        0,
        &[(W, "true_hit_grand_table", 2, 4)],
    );
}

// -------------------------------------------------------------------- TT7

/// TT7 (Lepeintre ch. II): W 4-3 hits B16 by 4, 2, and B19 by 7, 4: W +6
/// (the printed "8 points" is a slip; the text's total of 14 needs 6).
#[test]
fn tt7_w_4_3_hits_for_six() {
    let b = board(
        &[(1, 10), (4, 1), (5, 1), (7, 1), (12, 2)],
        &[
            (24, 8),
            (23, 1),
            (22, 1),
            (21, 1),
            (19, 1),
            (18, 1),
            (17, 1),
            (16, 1),
        ],
    );
    check(
        &roll(&b, W, 4, 3),
        W,
        6,
        0,
        &[
            (W, "true_hit_grand_table", 1, 2),
            (W, "true_hit_petit_table", 1, 4),
        ],
    );
}

/// TT7: W had 8 points in bredouille; +6 makes 14: 2 holes and 2 points.
#[test]
fn tt7_eight_in_bredouille_plus_six_is_two_holes_and_two_points() {
    let mut t = [tally(8, true), tally(0, false)];
    assert_eq!(mark(&mut t, W, 6), 2);
    assert_eq!((t[0].holes, t[0].points), (2, 2));
    assert_eq!(t[1].points, 0);
}

// -------------------------------------------------------------------- TT8

/// TT8 (Lepeintre ch. II): W 6-5 hits B17 by 5, 2; B18 by 6 and by 11
/// from W7, 2 + 2; B16 by 11 from W5, 2; B23 by 11 from the corner, 4;
/// B19 by 11 from W8, 4; and hits the corner (7+6 / 8+5), 4: W +20.
#[test]
fn tt8_w_6_5_hits_six_ways_and_the_corner_for_twenty() {
    let b = board(
        &[(1, 9), (4, 1), (5, 1), (7, 1), (8, 1), (12, 2)],
        &[
            (24, 7),
            (23, 1),
            (22, 1),
            (21, 1),
            (20, 1),
            (19, 1),
            (18, 1),
            (17, 1),
            (16, 1),
        ],
    );
    check(
        &roll(&b, W, 6, 5),
        W,
        20,
        0,
        &[
            (W, "true_hit_grand_table", 4, 8),
            (W, "true_hit_petit_table", 2, 8),
            (W, "corner_hit", 1, 4),
        ],
    );
}

/// TT8: W had 2 points in bredouille; +20 makes 22: 2 holes and 10 points.
#[test]
fn tt8_two_in_bredouille_plus_twenty_is_two_holes_and_ten_points() {
    let mut t = [tally(2, true), tally(0, false)];
    assert_eq!(mark(&mut t, W, 20), 2);
    assert_eq!((t[0].holes, t[0].points), (2, 10));
    assert_eq!(t[1].points, 0);
}

// --------------------------------------------------------------- TT9, TT9b

/// B is "far away": all 15 on his talon (White's field 24). No lone B
/// checker to hit, and W's petit jan is untouched.
const B_ON_TALON: [(u8, u8); 1] = [(24, 15)];

/// TT9 (Lelasseux fig. 8): the petit jan less one checker on f6.
fn t9_board() -> Board {
    board(
        &[(1, 3), (2, 4), (3, 2), (4, 3), (5, 2), (6, 1)],
        &B_ON_TALON,
    )
}

/// TT9 (Lelasseux §55): 5-4 fills the petit jan two ways (5 from the
/// talon, 4 from f2): 8.
#[test]
fn tt9_w_5_4_fills_the_petit_jan_two_ways() {
    check(
        &roll(&t9_board(), W, 5, 4),
        W,
        8,
        0,
        &[(W, "fill_petit_jan", 2, 8)],
    );
}

/// TT9 (Lelasseux §56): 4-1 fills two ways, the 4 from f2 and the 5 from
/// the talon; the 1 from f5 is a revirade, no way: 8.
#[test]
fn tt9_w_4_1_fills_the_petit_jan_two_ways_not_counting_the_revirade() {
    check(
        &roll(&t9_board(), W, 4, 1),
        W,
        8,
        0,
        &[(W, "fill_petit_jan", 2, 8)],
    );
}

/// TT9: 2-2 fills two ways (2 from f4, 4 from f2), 6 each: 12.
#[test]
fn tt9_w_2_2_fills_the_petit_jan_two_ways_on_a_doublet() {
    check(
        &roll(&t9_board(), W, 2, 2),
        W,
        12,
        0,
        &[(W, "fill_petit_jan", 2, 12)],
    );
}

/// TT9: 6-1 cannot fill (the 1 from f5 breaks f5): 0.
#[test]
fn tt9_w_6_1_does_not_fill_the_petit_jan() {
    check(&roll(&t9_board(), W, 6, 1), W, 0, 0, &[]);
}

/// TT9b (Lelasseux §56): one f2 checker moved to f5; 4-1 now fills three
/// ways (4 from f2, 1 from f5, 5 from the talon): 12.
#[test]
fn tt9b_w_4_1_fills_the_petit_jan_three_ways_with_a_surplus_on_f5() {
    let b = board(
        &[(1, 3), (2, 3), (3, 2), (4, 3), (5, 3), (6, 1)],
        &B_ON_TALON,
    );
    check(
        &roll(&b, W, 4, 1),
        W,
        12,
        0,
        &[(W, "fill_petit_jan", 3, 12)],
    );
}

// ------------------------------------------------------------------- TT10

/// TT10 (Lelasseux fig. 12): the grand jan less one checker on f11; B
/// holds his corner.
fn t10_white() -> Vec<(u8, u8)> {
    vec![
        (4, 1),
        (5, 1),
        (7, 3),
        (8, 2),
        (9, 3),
        (10, 2),
        (11, 1),
        (12, 2),
    ]
}

fn t10_board() -> Board {
    board(&t10_white(), &[(13, 2), (24, 13)])
}

/// TT10 (Lelasseux §72–73): the fill of the grand jan by each roll, ways
/// counted by number: 4-2 three ways (12), 6-4 / 6-1 / 5-2 two (8), 3-2 /
/// 2-1 one (4), 3-1 one by the sum only (4).
#[test]
fn tt10_w_4_2_fills_the_grand_jan_three_ways() {
    check(
        &roll(&t10_board(), W, 4, 2),
        W,
        12,
        0,
        &[(W, "fill_grand_jan", 3, 12)],
    );
}

#[test]
fn tt10_w_6_4_fills_the_grand_jan_two_ways() {
    check(
        &roll(&t10_board(), W, 6, 4),
        W,
        8,
        0,
        &[(W, "fill_grand_jan", 2, 8)],
    );
}

/// 6 from f5 and 7 from f4; the 1 from f10 is a revirade.
#[test]
fn tt10_w_6_1_fills_the_grand_jan_two_ways_not_counting_the_revirade() {
    check(
        &roll(&t10_board(), W, 6, 1),
        W,
        8,
        0,
        &[(W, "fill_grand_jan", 2, 8)],
    );
}

#[test]
fn tt10_w_5_2_fills_the_grand_jan_two_ways() {
    check(
        &roll(&t10_board(), W, 5, 2),
        W,
        8,
        0,
        &[(W, "fill_grand_jan", 2, 8)],
    );
}

#[test]
fn tt10_w_3_2_fills_the_grand_jan_one_way() {
    check(
        &roll(&t10_board(), W, 3, 2),
        W,
        4,
        0,
        &[(W, "fill_grand_jan", 1, 4)],
    );
}

#[test]
fn tt10_w_2_1_fills_the_grand_jan_one_way() {
    check(
        &roll(&t10_board(), W, 2, 1),
        W,
        4,
        0,
        &[(W, "fill_grand_jan", 1, 4)],
    );
}

/// 3 from f8 and 1 from f10 are revirades; only the sum 4 from f7.
#[test]
fn tt10_w_3_1_fills_the_grand_jan_by_the_sum_only() {
    check(
        &roll(&t10_board(), W, 3, 1),
        W,
        4,
        0,
        &[(W, "fill_grand_jan", 1, 4)],
    );
}

/// TT10 with B's corner empty (his two corner checkers back on his talon,
/// 24×15: no lone B checker either way): 4-2 fills three ways and hits
/// the corner (9 + 4, 11 + 2): 16.
#[test]
fn tt10_w_4_2_with_b_corner_empty_also_hits_the_corner() {
    let b = board(&t10_white(), &B_ON_TALON);
    check(
        &roll(&b, W, 4, 2),
        W,
        16,
        0,
        &[(W, "fill_grand_jan", 3, 12), (W, "corner_hit", 1, 4)],
    );
}

// ------------------------------------------------------------------- TT11

/// TT11 (Lelasseux §54): W 1×3, 2×3, 3×3, 4×4, 5, 6: two half-fields
/// missing, so any fill is one way only.
fn t11_board() -> Board {
    board(
        &[(1, 3), (2, 3), (3, 3), (4, 4), (5, 1), (6, 1)],
        &B_ON_TALON,
    )
}

#[test]
fn tt11_w_4_2_fills_two_half_fields_one_way() {
    check(
        &roll(&t11_board(), W, 4, 2),
        W,
        4,
        0,
        &[(W, "fill_petit_jan", 1, 4)],
    );
}

#[test]
fn tt11_w_4_4_fills_two_half_fields_one_way() {
    check(
        &roll(&t11_board(), W, 4, 4),
        W,
        6,
        0,
        &[(W, "fill_petit_jan", 1, 6)],
    );
}

#[test]
fn tt11_w_2_1_fills_two_half_fields_one_way() {
    check(
        &roll(&t11_board(), W, 2, 1),
        W,
        4,
        0,
        &[(W, "fill_petit_jan", 1, 4)],
    );
}

// ------------------------------------------------------------------- TT12

/// TT12 (Lelasseux §45): W holds his corner with `corner` checkers, has
/// `on9` on 9 and one on 7, the rest on his talon; B's corner empty (B on
/// his talon, no lone checker).
fn t12_board(corner: u8, on9: u8) -> Board {
    let talon = 15 - corner - on9 - 1;
    board(&[(1, talon), (7, 1), (9, on9), (12, corner)], &B_ON_TALON)
}

#[test]
fn tt12_w_6_4_hits_the_corner_from_7_and_9() {
    check(
        &roll(&t12_board(2, 1), W, 6, 4),
        W,
        4,
        0,
        &[(W, "corner_hit", 1, 4)],
    );
}

#[test]
fn tt12_w_4_4_with_two_on_9_hits_the_corner_for_six() {
    check(
        &roll(&t12_board(2, 2), W, 4, 4),
        W,
        6,
        0,
        &[(W, "corner_hit", 1, 6)],
    );
}

/// The ace would need a third corner checker.
#[test]
fn tt12_w_6_1_with_two_in_the_corner_does_not_hit_the_corner() {
    check(&roll(&t12_board(2, 1), W, 6, 1), W, 0, 0, &[]);
}

#[test]
fn tt12_w_6_1_with_three_in_the_corner_hits_the_corner() {
    check(
        &roll(&t12_board(3, 1), W, 6, 1),
        W,
        4,
        0,
        &[(W, "corner_hit", 1, 4)],
    );
}

#[test]
fn tt12_w_1_1_with_four_in_the_corner_hits_the_corner() {
    check(
        &roll(&t12_board(4, 1), W, 1, 1),
        W,
        6,
        0,
        &[(W, "corner_hit", 1, 6)],
    );
}

#[test]
fn tt12_w_1_1_with_three_in_the_corner_does_not_hit_the_corner() {
    check(&roll(&t12_board(3, 1), W, 1, 1), W, 0, 0, &[]);
}

// ------------------------------------------------------------------- TT13

/// TT13 (Lelasseux §126): W 1×13, 12×2, B 24×15: mézéas, 1-1 +6.
#[test]
fn tt13_w_1_1_makes_the_jan_de_mezeas_for_six() {
    let b = board(&[(1, 13), (12, 2)], &B_ON_TALON);
    check(&roll(&b, W, 1, 1), W, 6, 0, &[(W, "mezeas", 1, 6)]);
}

#[test]
fn tt13_w_6_1_makes_the_jan_de_mezeas_for_four() {
    let b = board(&[(1, 13), (12, 2)], &B_ON_TALON);
    check(&roll(&b, W, 6, 1), W, 4, 0, &[(W, "mezeas", 1, 4)]);
}

/// TT13 (Lelasseux §127): with B on 13×2 (from his talon, 24×13), 6-1 is
/// the contre-jan: B +4.
#[test]
fn tt13_w_6_1_with_b_holding_his_corner_is_the_contre_mezeas_for_b() {
    let b = board(&[(1, 13), (12, 2)], &[(24, 13), (13, 2)]);
    check(&roll(&b, W, 6, 1), W, 0, 4, &[(B, "contre_mezeas", 1, 4)]);
}

// ------------------------------------------------------------------- TT14

/// TT14 (Laws2013 XII): W 1×11, 2, 5, 6, 7 on his third roll; 3-2 brings
/// two talon checkers to the empty 3 and 4: jan de six tables, +4.
#[test]
fn tt14_w_3_2_on_the_third_roll_makes_the_jan_de_six_tables() {
    let b = board(&[(1, 11), (2, 1), (5, 1), (6, 1), (7, 1)], &B_ON_TALON);
    let events = roll_events(&b, W, dice(3, 2), 3, false);
    check(&events, W, 4, 0, &[(W, "six_tables", 1, 4)]);
}

#[test]
fn tt14_w_3_2_on_the_fourth_roll_scores_nothing() {
    let b = board(&[(1, 11), (2, 1), (5, 1), (6, 1), (7, 1)], &B_ON_TALON);
    let events = roll_events(&b, W, dice(3, 2), 4, false);
    check(&events, W, 0, 0, &[]);
}

// ------------------------------------------------------------- TT15, TT15b

/// TT15: W 1×15 against B 3×2, 5×2, 7×2: 4-2 cannot be played at all:
/// B +4.
#[test]
fn tt15_w_4_2_cannot_play_anything_so_b_gains_four() {
    let b = board(&[(1, 15)], &[(3, 2), (5, 2), (7, 2), (24, 9)]);
    check(
        &roll(&b, W, 4, 2),
        W,
        0,
        4,
        &[(B, "unplayable_number", 2, 4)],
    );
}

/// TT15b (Traité, "Impuissance"): W 2-2, only 7→9 can be played: B +2.
#[test]
fn tt15b_w_2_2_plays_only_one_move_so_b_gains_two() {
    let b = board(
        &[(1, 14), (7, 1)],
        &[(3, 2), (5, 2), (11, 2), (13, 2), (24, 7)],
    );
    check(
        &roll(&b, W, 2, 2),
        W,
        0,
        2,
        &[(B, "unplayable_number", 1, 2)],
    );
    let legal = plays(&b, W, 2, 2);
    assert_eq!(legal.len(), 1);
    assert_eq!(legal[0].play.to_string(), "18/16");
}

// ------------------------------------------------------------------- TT16

fn t16_board() -> Board {
    let mut white = vec![(7, 5)];
    white.extend(each(8, 12, 2));
    let mut black = each(13, 18, 2);
    black.push((24, 3));
    board(&white, &black)
}

/// TT16 (Lelasseux §76): 6-5, no 6 playable, the 5 (7→12) keeps the grand
/// jan: W +4, B +2.
#[test]
fn tt16_w_6_5_keeps_the_grand_jan_with_the_6_unplayable() {
    check(
        &roll(&t16_board(), W, 6, 5),
        W,
        4,
        2,
        &[(W, "keep_grand_jan", 1, 4), (B, "unplayable_number", 1, 2)],
    );
}

/// TT16: 6-6, nothing playable, the grand jan kept by impotence: W +6,
/// B +4.
#[test]
fn tt16_w_6_6_keeps_the_grand_jan_by_impotence_with_nothing_playable() {
    check(
        &roll(&t16_board(), W, 6, 6),
        W,
        6,
        4,
        &[(W, "keep_grand_jan", 1, 6), (B, "unplayable_number", 2, 4)],
    );
}

// ------------------------------------------------------------------- TT17

fn t17_board() -> Board {
    let mut black = vec![(13, 3)];
    black.extend(each(14, 19, 2));
    board(&[(7, 3), (8, 3), (9, 3), (10, 1), (11, 3), (12, 2)], &black)
}

/// TT17 (Lelasseux §81): the small number fills the grand jan (7→10,
/// 8→10 or 9→10) one way, the 6 cannot be played: W +4, B +2; the same
/// for 6-3, 6-2 and 6-1.
#[test]
fn tt17_w_6_3_fills_with_the_3_and_the_6_is_unplayable() {
    check(
        &roll(&t17_board(), W, 6, 3),
        W,
        4,
        2,
        &[(W, "fill_grand_jan", 1, 4), (B, "unplayable_number", 1, 2)],
    );
}

#[test]
fn tt17_w_6_2_fills_with_the_2_and_the_6_is_unplayable() {
    check(
        &roll(&t17_board(), W, 6, 2),
        W,
        4,
        2,
        &[(W, "fill_grand_jan", 1, 4), (B, "unplayable_number", 1, 2)],
    );
}

#[test]
fn tt17_w_6_1_fills_with_the_1_and_the_6_is_unplayable() {
    check(
        &roll(&t17_board(), W, 6, 1),
        W,
        4,
        2,
        &[(W, "fill_grand_jan", 1, 4), (B, "unplayable_number", 1, 2)],
    );
}

// ------------------------------------------------------------------- TT18

/// TT18's position: W 19×4, 20–23 ×2, 24×3. B's checkers cannot be on his
/// talon (White's 24 is W's); they are far away in his own jan de retour
/// (White's fields 1–5, 3 each), behind every W checker, so they block
/// nothing and cannot be hit.
fn t18_board() -> Board {
    let mut white = vec![(19, 4)];
    white.extend(each(20, 23, 2));
    white.push((24, 3));
    board(&white, &each(1, 5, 3))
}

/// TT18 (Lelasseux §110): 6-6 bears off two from 19 and keeps the jan de
/// retour: +6.
#[test]
fn tt18_w_6_6_keeps_the_jan_de_retour_by_bearing_off_surplus() {
    check(
        &roll(&t18_board(), W, 6, 6),
        W,
        6,
        0,
        &[(W, "keep_retour_jan", 1, 6)],
    );
}

#[test]
fn tt18_w_6_1_keeps_the_jan_de_retour_by_bearing_off_surplus() {
    check(
        &roll(&t18_board(), W, 6, 1),
        W,
        4,
        0,
        &[(W, "keep_retour_jan", 1, 4)],
    );
}

// ------------------------------------------------------------------- TT19

/// TT19 (mmai `corner_by_effect_and_filled_corner`): W 1–6 ×2, 7×2, 8;
/// 6-5. The corner by power (7, 8) is illegal as it can be taken by
/// effect (6→12, 7→12), which breaks the petit jan; the only play is
/// 8→(13)→19, keeping it: W +4.
#[test]
fn tt19_w_6_5_must_keep_the_petit_jan_by_8_13_19_not_take_the_corner() {
    let black = [
        (14, 2),
        (18, 2),
        (20, 2),
        (21, 2),
        (22, 2),
        (23, 2),
        (24, 3),
    ];
    let mut white = each(1, 6, 2);
    white.extend([(7, 2), (8, 1)]);
    let b = board(&white, &black);
    check(&roll(&b, W, 6, 5), W, 4, 0, &[(W, "keep_petit_jan", 1, 4)]);

    let legal = plays(&b, W, 6, 5);
    let shown: Vec<String> = legal.iter().map(|lp| lp.play.to_string()).collect();
    assert_eq!(legal.len(), 1, "legal plays: {shown:?}");
    assert_eq!(legal[0].play.to_string(), "17/12 12/6");
    let mut after = each(1, 6, 2);
    after.extend([(7, 2), (19, 1)]);
    assert_eq!(legal[0].result, board(&after, &black));
}

// ------------------------------------------------------------------- TT20

/// TT20 (mmai `get_points`): W 3-6 hits B15 two ways (2 + 2), B18 two ways
/// (2 + 2) and B20 by 9 through the open 14 (the rest on 17 is blocked),
/// 4: W +12, B 0.
#[test]
fn tt20_w_3_6_hits_by_ways_and_truly_through_one_open_rest() {
    let mut white = each(1, 4, 2);
    white.extend([(8, 2), (9, 2), (11, 1), (12, 2)]);
    let b = board(
        &white,
        &[
            (13, 2),
            (15, 1),
            (16, 2),
            (17, 2),
            (18, 1),
            (19, 1),
            (20, 1),
            (22, 1),
            (23, 2),
            (24, 2),
        ],
    );
    check(
        &roll(&b, W, 3, 6),
        W,
        12,
        0,
        &[
            (W, "true_hit_grand_table", 4, 8),
            (W, "true_hit_petit_table", 1, 4),
        ],
    );
}

// ------------------------------------------------------------------- TT21

/// TT21: W 1×15, B 3, 4, 6, 24×12; 3-2 hits B3 by 2, B4 by 3, B6 by 5
/// through the single on 3, 4 each (W +12); W cannot move (B +4).
#[test]
fn tt21_w_3_2_hits_three_from_the_talon_and_cannot_move() {
    let b = board(&[(1, 15)], &[(3, 1), (4, 1), (6, 1), (24, 12)]);
    check(
        &roll(&b, W, 3, 2),
        W,
        12,
        4,
        &[
            (W, "true_hit_petit_table", 3, 12),
            (B, "unplayable_number", 2, 4),
        ],
    );
}

// ------------------------------------------------------------------- TT22

/// TT22 (§4, through the public `tally::mark`): 4 and 4 (A first), +16 →
/// 1 hole + 8; 8 single against 8 in bredouille, +18 → 3 holes + 2; the
/// second scorer (4) then 8 → 2 holes; and from 0-0, +13 → 2 holes + 1.
#[test]
fn tt22_bredouille_arithmetic_through_the_public_mark() {
    let mut t = [tally(4, false), tally(4, true)];
    assert_eq!(mark(&mut t, W, 16), 1);
    assert_eq!((t[0].holes, t[0].points, t[1].points), (1, 8, 0));

    let mut t = [tally(8, false), tally(8, true)];
    assert_eq!(mark(&mut t, W, 18), 3);
    assert_eq!((t[0].holes, t[0].points, t[1].points), (3, 2, 0));

    let mut t = [tally(0, false), tally(0, false)];
    assert_eq!(mark(&mut t, W, 2), 0);
    assert_eq!(mark(&mut t, B, 4), 0);
    assert_eq!(mark(&mut t, B, 8), 2);
    assert_eq!((t[1].holes, t[1].points, t[0].points), (2, 0, 0));

    let mut t = [tally(0, false), tally(0, false)];
    assert_eq!(mark(&mut t, W, 13), 2);
    assert_eq!((t[0].holes, t[0].points), (2, 1));
}

// ----------------------------------------------------------------- Exits

/// B's checkers for the exits: his talon is White's 24, where W stands,
/// so they are far away in his own jan de retour (White's fields 1–5, 3
/// each), where they block no W play.
fn exit_black() -> Vec<(u8, u8)> {
    each(1, 5, 3)
}

/// Exits (mmai tests): W alone on 23 and 24 (13 off), 3-1 bears both off
/// (the 3 as an overflow from the farthest): +4.
#[test]
fn exit_w_3_1_from_23_and_24_bears_off_the_last_checkers_for_four() {
    let b = board_with_off(&[(23, 1), (24, 1)], &exit_black());
    check(&roll(&b, W, 3, 1), W, 4, 0, &[(W, "exit", 1, 4)]);
}

/// W alone on 23 (14 off), 2-2 bears it off; the unused second 2 is
/// ignored (no unplayable number): +6.
#[test]
fn exit_w_2_2_from_23_bears_off_the_last_checker_for_six() {
    let b = board_with_off(&[(23, 1)], &exit_black());
    check(&roll(&b, W, 2, 2), W, 6, 0, &[(W, "exit", 1, 6)]);
}
