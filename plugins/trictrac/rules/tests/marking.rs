//! The marking order and the partie (docs/trictrac.md §4, §9): through the
//! variant's own calls, as the host makes them (after_roll, decide,
//! after_play).

mod common;

use bg_trictrac_rules::{GO, STAY, TricTrac, TricTracState, moves};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Seat};
use bg_variant_api::{Options, Transition, Variant};
use common::{board, board_with_off, dice};

fn options(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn setup(board: &Board, pairs: &[(&str, &str)]) -> TricTracState {
    TricTrac
        .setup_position(board, &options(pairs))
        .expect("a position")
        .state
}

fn only_play(state: &TricTracState, seat: Seat, d: Dice) -> LegalPlay {
    let mut out = Vec::new();
    moves::legal_plays(&state.board, seat, d, false, &mut out);
    out[0]
}

fn points(t: &Transition<TricTracState>, seat: Seat) -> u32 {
    t.state.tally[seat.index()].points
}

/// Lelasseux §207: both players on 10; the roller's true hits win him a
/// hole (wiping the opponent's 10) before the opponent marks his false
/// hits, from zero.
fn both_on_ten() -> (TricTracState, Dice) {
    // TT2's position: black's 6-6 hits three checkers truly (14) and three
    // falsely (18 for white).
    let b = board(
        &[
            (2, 1),
            (3, 1),
            (4, 1),
            (5, 1),
            (6, 1),
            (7, 1),
            (8, 1),
            (9, 2),
            (10, 2),
            (11, 2),
            (12, 2),
        ],
        &[(13, 2), (14, 2), (16, 2), (17, 2), (18, 1), (24, 6)],
    );
    (
        setup(
            &b,
            &[("start_points", "10,10"), ("start_bredouille", "none")],
        ),
        dice(6, 6),
    )
}

#[test]
fn lelasseux_207_the_roller_marks_first_and_the_opponent_marks_from_zero() {
    let (state, d) = both_on_ten();
    let rolled = TricTrac.after_roll(&state, Seat::Black, d);
    // Black: 10 + 14 = 24: a hole, then another dozen of the same gain.
    assert_eq!(rolled.state.tally[1].holes, 3, "single hole, then a double");
    assert_eq!(points(&rolled, Seat::White), 0, "white's 10 wiped");
    assert_eq!(points(&rolled, Seat::Black), 0);
    assert!(rolled.events.iter().all(|e| e.seat == Seat::Black));
    let decision = rolled.decision.as_ref().expect("a hole on his own roll");
    assert_eq!(
        (decision.seat, decision.choices.clone()),
        (Seat::Black, vec![STAY.to_string(), GO.to_string()])
    );

    // Stay: he plays, then white marks his 18 from zero, in bredouille.
    let stayed = TricTrac.decide(&rolled.state, Seat::Black, STAY).unwrap();
    assert!(stayed.next_roller.is_none());
    let play = only_play(&stayed.state, Seat::Black, d);
    let played = TricTrac.after_play(&stayed.state, Seat::Black, &play);
    assert_eq!(played.events.iter().map(|e| e.points).sum::<u32>(), 18);
    assert!(played.events.iter().all(|e| e.seat == Seat::White));
    // 18 from zero in bredouille: one double hole, 6 left.
    assert_eq!(played.state.tally[0].holes, 2);
    assert_eq!(points(&played, Seat::White), 6);

    // Go: the gift is void, everything but the holes resets, black rolls.
    let gone = TricTrac.decide(&rolled.state, Seat::Black, GO).unwrap();
    assert_eq!(gone.next_roller, Some(Seat::Black));
    assert_eq!(gone.state.board, bg_trictrac_rules::start_board());
    assert!(gone.state.gift.is_empty());
    assert_eq!(gone.state.tally[1].holes, 3);
    for t in gone.state.tally {
        assert_eq!((t.points, t.bredouille, t.rolls), (0, false, 0));
    }
    assert_eq!(gone.state.round, 2);
}

/// Only the seat that won the hole decides, only stay or go, only once.
#[test]
fn stay_or_go_belongs_to_the_roller_who_won_the_hole() {
    let (state, d) = both_on_ten();
    let rolled = TricTrac.after_roll(&state, Seat::Black, d);
    assert!(TricTrac.decide(&rolled.state, Seat::White, GO).is_err());
    assert!(
        TricTrac
            .decide(&rolled.state, Seat::Black, "leave")
            .is_err()
    );
    let stayed = TricTrac.decide(&rolled.state, Seat::Black, STAY).unwrap();
    assert!(TricTrac.decide(&stayed.state, Seat::Black, GO).is_err());
}

/// A hole won from the opponent's roll (his false hits) is not the
/// winner's to leave: no decision (Laws2013 art. XVI).
#[test]
fn a_hole_from_the_opponents_roll_must_be_kept() {
    let (state, d) = both_on_ten();
    // White on 10 gains 18 after black's play: a hole, no decision.
    let state = TricTrac
        .decide(
            &TricTrac.after_roll(&state, Seat::Black, d).state,
            Seat::Black,
            STAY,
        )
        .unwrap()
        .state;
    let play = only_play(&state, Seat::Black, d);
    let played = TricTrac.after_play(&state, Seat::Black, &play);
    assert!(played.state.tally[0].holes > 0);
    assert!(played.decision.is_none() && played.next_roller.is_none());
}

/// Laws2013 art. VIII, §3.7: bearing off the last checker first scores
/// 4/6 on the roll; the checkers go back to the talons, points and
/// bredouille stay, and the same player rolls first.
#[test]
fn the_exit_scores_resets_the_checkers_keeps_the_points_and_the_exiter_rolls() {
    // White's other 13 are off.
    let b = board_with_off(
        &[(23, 1), (24, 1)],
        &[(1, 3), (2, 3), (3, 3), (4, 3), (5, 3)],
    );
    let state = setup(
        &b,
        &[("start_points", "2,4"), ("start_bredouille", "black")],
    );
    let d = dice(3, 1);
    let rolled = TricTrac.after_roll(&state, Seat::White, d);
    assert_eq!(
        rolled
            .events
            .iter()
            .map(|e| (e.reason.as_str(), e.points))
            .collect::<Vec<_>>(),
        [("exit", 4)]
    );
    assert_eq!(points(&rolled, Seat::White), 6);
    let play = only_play(&rolled.state, Seat::White, d);
    let played = TricTrac.after_play(&rolled.state, Seat::White, &play);
    assert_eq!(played.next_roller, Some(Seat::White));
    assert_eq!(played.state.board, bg_trictrac_rules::start_board());
    assert_eq!(
        (points(&played, Seat::White), points(&played, Seat::Black)),
        (6, 4)
    );
    assert_eq!(played.state.round, 2);
}

/// Twelve holes end the partie at once; the stake: x2 en grande
/// bredouille (the loser never won a hole), the 4/3/2/1 scale as an
/// option.
#[test]
fn twelve_holes_win_the_partie_at_the_stake_of_the_pavillon() {
    let (start, d) = both_on_ten();
    let b = start.board;
    for (pairs, level, kind) in [
        (vec![("start_holes", "0,10")], 2, "double"),
        (
            vec![("start_holes", "0,10"), ("stake", "4321")],
            4,
            "quadruple",
        ),
        (vec![("start_holes", "3,10")], 1, "single"),
        (
            vec![("start_holes", "3,10"), ("stake", "4321")],
            2,
            "double",
        ),
        (
            vec![("start_holes", "7,10"), ("stake", "4321")],
            1,
            "single",
        ),
        (
            vec![
                ("start_holes", "7,10"),
                ("start_pavillon", "flag_black"),
                ("stake", "4321"),
            ],
            3,
            "triple",
        ),
    ] {
        let mut pairs = pairs;
        pairs.extend([("start_points", "10,10"), ("start_bredouille", "none")]);
        let state = setup(&b, &pairs);
        let rolled = TricTrac.after_roll(&state, Seat::Black, d);
        let outcome = rolled
            .outcome
            .unwrap_or_else(|| panic!("{pairs:?}: the partie is over"));
        assert_eq!(outcome.winner, Some(Seat::Black));
        assert_eq!(
            (outcome.level, outcome.kind.as_str()),
            (level, kind),
            "{pairs:?}"
        );
        assert!(
            rolled.decision.is_none(),
            "no stay or go once the partie is won"
        );
    }
}

/// §3.8: with the option on, stacking all fifteen on the corner scores
/// 4/6 made and kept (and is then compulsory); off by default.
#[test]
fn pile_de_misere_scores_only_with_its_option() {
    let b = board(&[(10, 1), (11, 1), (12, 13)], &[(24, 15)]);
    let made = |pile: bool| {
        bg_trictrac_rules::roll_events(&b, Seat::White, dice(2, 1), 10, pile)
            .into_iter()
            .map(|e| (e.reason, e.points))
            .collect::<Vec<_>>()
    };
    // The corner is held and black's is empty: 2-1 also hits it (11 and
    // the corner's third checker).
    let hit = ("corner_hit".to_string(), 4);
    assert_eq!(
        made(true),
        [hit.clone(), ("pile_de_misere_made".to_string(), 4)]
    );
    assert_eq!(made(false), [hit]);
    let mut out = Vec::new();
    moves::legal_plays(&b, Seat::White, dice(2, 1), true, &mut out);
    assert_eq!(out.len(), 1, "making the pile is compulsory: {out:?}");
    let pile = board(&[(12, 15)], &[(24, 15)]);
    let kept = bg_trictrac_rules::roll_events(&pile, Seat::White, dice(6, 6), 10, true);
    let kept: Vec<(&str, u32)> = kept.iter().map(|e| (e.reason.as_str(), e.points)).collect();
    assert_eq!(kept, [("pile_de_misere_kept", 6), ("unplayable_number", 4)]);
}

/// A state survives its bytes, and damaged bytes are refused.
#[test]
fn the_state_reads_back_and_damaged_bytes_are_refused() {
    let (state, _) = both_on_ten();
    let bytes = TricTrac.encode_state(&state);
    assert_eq!(TricTrac.decode_state(&bytes).unwrap(), state);
    assert!(TricTrac.decode_state(&bytes[..bytes.len() / 2]).is_err());
    assert!(TricTrac.decode_state(&[]).is_err());
    let mut other_version = bytes.clone();
    other_version[0] = 99;
    assert!(TricTrac.decode_state(&other_version).is_err());
}
