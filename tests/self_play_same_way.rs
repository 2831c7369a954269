//! Random self-play of complete games of long nardy and Fevga through
//! their plugins loaded from their files, with the rules of
//! docs/nardy-fevga.md checked after every play by this test's own
//! reading of them (not the plugin's code): no point shared, nothing hit,
//! one checker off the head a turn, no unlawful block, Fevga's first
//! checker and start quarter, and the result.

use std::sync::Arc;

use bg_engine::{Board, Dice, Geometry, Seat};
use bg_plugin_host::Plugin;
use bg_tests::loaded;
use bg_variant_api::Options;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GAMES: usize = 5_000;
/// No game lasts this long; reaching it means a loop.
const MAX_TURNS: usize = 1_000;

/// The mover's points along the opponent's track, from its start.
const THEIR_TRACK: [u8; 24] = [
    12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,
];

/// Whether `me` holds six points in a row along the opponent's track with
/// no opposing checker past them (none borne off either): §2.5.
fn unlawful_block(board: &Board, me: Seat) -> bool {
    let held = |i: usize| board.count(me, THEIR_TRACK[i]) > 0;
    let theirs_at =
        |i: usize| board.count(me.other(), Geometry::SameWay.facing(THEIR_TRACK[i])) > 0;
    (0..=18).any(|start| {
        (start..start + 6).all(held)
            && board.off(me.other()) == 0
            && !(start + 6..24).any(theirs_at)
    })
}

fn released(board: &Board, me: Seat) -> bool {
    board.off(me) > 0 || (1..=12).any(|p| board.count(me, p) > 0)
}

#[derive(Clone, Copy, PartialEq)]
enum Game {
    LongNardy,
    Fevga,
}

/// Every rule a play must keep, judged from the boards before and after.
fn check_play(game: Game, before: &Board, after: &Board, me: Seat, dice: Dice, at: &str) {
    after
        .validate_in(Geometry::SameWay, 15)
        .unwrap_or_else(|e| panic!("{at}: {e}: {after:?}"));
    assert_eq!(
        before.checkers[me.other().index()],
        after.checkers[me.other().index()],
        "{at}: nothing of the opponent's moves (no hit)"
    );
    assert!(after.pip_count(me) <= before.pip_count(me), "{at}");
    assert!(after.off(me) >= before.off(me), "{at}");
    let left_start = before.count(me, 24) - after.count(me, 24);
    match game {
        Game::LongNardy => {
            let first_turn = before.count(me, 24) == 15;
            let exception = first_turn && dice.is_double() && [6, 4, 3].contains(&dice.d1);
            assert!(
                left_start <= if exception { 2 } else { 1 },
                "{at}: {left_start} left the head with {dice}"
            );
            assert!(!unlawful_block(after, me), "{at}: a block: {after:?}");
        }
        Game::Fevga => {
            assert!(
                !(after.count(me, 24) > 0 && (19..=24).all(|p| after.count(me, p) > 0)),
                "{at}: the whole start quarter held: {after:?}"
            );
            if !released(after, me) {
                let off_start: u8 = (1..24).map(|p| after.count(me, p)).sum();
                assert!(off_start <= 1, "{at}: two checkers out before release");
            }
        }
    }
}

fn self_play(plugin: Arc<Plugin>, game: Game, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut plays = Vec::new();
    let mut wins = [0usize; 3];
    let mut total_turns = 0;
    for n in 0..GAMES {
        let mut state = plugin.new_game(&Options::new()).unwrap().state;
        let mut seat = if rng.random_bool(0.5) {
            Seat::White
        } else {
            Seat::Black
        };
        let mut turns = 0;
        let outcome = loop {
            let dice = Dice::new(rng.random_range(1..=6), rng.random_range(1..=6)).unwrap();
            let before = plugin.board(&state).unwrap();
            plugin.legal_plays(&state, seat, dice, &mut plays).unwrap();
            let chosen = plays[rng.random_range(0..plays.len())];
            let t = plugin.apply_play(&state, seat, dice, &chosen.play).unwrap();
            state = t.state;
            let after = plugin.board(&state).unwrap();
            assert_eq!(after, chosen.result);
            check_play(
                game,
                &before,
                &after,
                seat,
                dice,
                &format!("game {n} turn {turns}"),
            );
            if let Some(outcome) = t.outcome {
                assert_eq!(outcome.winner, Some(seat));
                assert_eq!(after.off(seat), 15, "only a side with all off wins");
                let expected = if after.off(seat.other()) == 0 { 2 } else { 1 };
                assert_eq!(outcome.level, expected, "game {n}");
                break outcome;
            }
            assert!(after.off(seat) < 15);
            turns += 1;
            assert!(turns < MAX_TURNS, "game {n} does not end");
            seat = seat.other();
        };
        wins[outcome.level as usize] += 1;
        total_turns += turns;
    }
    println!(
        "{}: {GAMES} games, {total_turns} turns: {} single, {} double",
        plugin.name(),
        wins[1],
        wins[2]
    );
    assert!(wins[1] > 0 && wins[2] > 0, "{wins:?}");
}

#[test]
fn five_thousand_random_long_nardy_games_keep_the_head_and_block_rules() {
    self_play(loaded("bg_long_nardy"), Game::LongNardy, 0x5eed_0039);
}

#[test]
fn five_thousand_random_fevga_games_keep_the_first_checker_and_start_quarter_rules() {
    self_play(loaded("bg_fevga"), Game::Fevga, 0x5eed_0040);
}
