//! What the rules tests share: positions in the worked examples'
//! notation, rolls, legal plays, and the check of a roll's points.
#![allow(dead_code)]

use bg_trictrac_rules::moves::legal_plays;
use bg_trictrac_rules::roll_events;
use bg_trictrac_rules::view::board_from_fields;
use bg_variant_api::ScoreEvent;
use bg_variant_api::engine::{Board, Dice, LegalPlay, Seat};

pub const W: Seat = Seat::White;
pub const B: Seat = Seat::Black;

/// Any roll that is not the third of the relevé (the jan de six tables
/// scores only on the third).
pub const LATER_ROLL: u32 = 10;

/// A board from (field, count) lists in White's field numbering, both
/// sides; checkers not placed are borne off.
pub fn board_with_off(white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
    for &(field, _) in white.iter().chain(black) {
        assert!(
            (1..=24).contains(&field),
            "field {field} is not on the board"
        );
    }
    board_from_fields(white, black)
}

/// [`board_with_off`] with all 15 checkers of each side on the board.
pub fn board(white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
    let total = |side: &[(u8, u8)]| side.iter().map(|&(_, n)| u32::from(n)).sum::<u32>();
    assert_eq!(total(white), 15, "White must have 15 checkers on the board");
    assert_eq!(total(black), 15, "Black must have 15 checkers on the board");
    board_with_off(white, black)
}

/// Fields `from..=to`, `count` checkers on each.
pub fn each(from: u8, to: u8, count: u8) -> Vec<(u8, u8)> {
    (from..=to).map(|f| (f, count)).collect()
}

pub fn dice(d1: u8, d2: u8) -> Dice {
    Dice::new(d1, d2).unwrap()
}

/// The events of `roller`'s roll `d1-d2`, not the third of the relevé.
pub fn roll(board: &Board, roller: Seat, d1: u8, d2: u8) -> Vec<ScoreEvent> {
    roll_events(board, roller, dice(d1, d2), LATER_ROLL, false)
}

pub fn plays(board: &Board, seat: Seat, d1: u8, d2: u8) -> Vec<LegalPlay> {
    let mut out = Vec::new();
    legal_plays(board, seat, dice(d1, d2), false, &mut out);
    out
}

/// Asserts the roller's and the opponent's points, and that the events
/// are exactly `jans` (beneficiary, name, ways, points), in any order.
pub fn check(
    events: &[ScoreEvent],
    roller: Seat,
    roller_points: u32,
    opponent_points: u32,
    jans: &[(Seat, &str, u32, u32)],
) {
    let got: Vec<(Seat, String, u32, u32)> = events
        .iter()
        .map(|e| (e.seat, e.reason.clone(), e.ways, e.points))
        .collect();
    let sum = |seat: Seat| -> u32 {
        events
            .iter()
            .filter(|e| e.seat == seat)
            .map(|e| e.points)
            .sum()
    };
    assert_eq!(
        (sum(roller), sum(roller.other())),
        (roller_points, opponent_points),
        "(roller, opponent) points; events: {got:?}"
    );
    let mut got_sorted = got.clone();
    got_sorted.sort_by(|a, b| (a.0.index(), &a.1).cmp(&(b.0.index(), &b.1)));
    let mut want: Vec<(Seat, String, u32, u32)> = jans
        .iter()
        .map(|&(s, name, ways, points)| (s, name.to_string(), ways, points))
        .collect();
    want.sort_by(|a, b| (a.0.index(), &a.1).cmp(&(b.0.index(), &b.1)));
    assert_eq!(got_sorted, want, "jans (seat, name, ways, points)");
}
