//! Random self-play of complete games through the plugins loaded from
//! their files (standard, Caucasian), with the invariants checked after
//! every play.

use bg_engine::{Board, Dice, Seat, WinType};
use std::sync::Arc;

use bg_plugin_host::{Plugin, PluginHost};
use bg_tests::{library_file_name, plugin_dir, standard};
use bg_variant_api::Options;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const GAMES: usize = 10_000;
/// No game of backgammon lasts this long; reaching it means a loop.
const MAX_TURNS: usize = 2_000;

fn roll(rng: &mut StdRng) -> Dice {
    Dice::new(rng.random_range(1..=6), rng.random_range(1..=6)).unwrap()
}

/// Invariants of every position: 15 checkers a side, no point held by
/// both sides, nothing pinned.
fn check(board: &Board) {
    board
        .validate()
        .unwrap_or_else(|e| panic!("{e}: {board:?}"));
    assert_eq!(board.pinned, [0, 0]);
}

#[test]
fn ten_thousand_random_standard_games_end_with_every_invariant_kept() {
    self_play(standard(), &Options::new(), 0x5eed_0001);
}

#[test]
fn ten_thousand_random_caucasian_games_end_with_every_invariant_kept() {
    let dir = plugin_dir(&[("bg_caucasian", &library_file_name("bg_caucasian"))]);
    let host = PluginHost::new(dir.path());
    host.scan().unwrap();
    self_play(host.get("caucasian").unwrap(), &Options::new(), 0x5eed_0002);
}

fn self_play(plugin: Arc<Plugin>, options: &Options, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut plays = Vec::new();
    let mut wins = [0usize; 4];
    let mut total_turns = 0;
    for game in 0..GAMES {
        let setup = plugin.new_game(options).unwrap();
        let mut state = setup.state;
        // Opening: one die each, ties thrown again; the higher plays both.
        let (mut seat, mut dice) = loop {
            let (w, b) = (rng.random_range(1..=6), rng.random_range(1..=6));
            if w != b {
                break (
                    if w > b { Seat::White } else { Seat::Black },
                    Dice::new(w, b).unwrap(),
                );
            }
        };
        let mut turns = 0;
        let outcome = loop {
            let before = plugin.board(&state).unwrap();
            plugin.legal_plays(&state, seat, dice, &mut plays).unwrap();
            let chosen = plays[rng.random_range(0..plays.len())];
            let t = plugin.apply_play(&state, seat, dice, &chosen.play).unwrap();
            state = t.state;
            let after = plugin.board(&state).unwrap();
            check(&after);
            assert_eq!(
                after, chosen.result,
                "game {game}: applying a legal play reaches its result"
            );
            // The mover only moves forward; the opponent only goes back (hit).
            assert!(after.pip_count(seat) <= before.pip_count(seat));
            assert!(after.pip_count(seat.other()) >= before.pip_count(seat.other()));
            assert!(after.off(seat) >= before.off(seat));
            if let Some(outcome) = t.outcome {
                assert_eq!(
                    after.off(seat),
                    15,
                    "only a player with all checkers off wins"
                );
                let expected = WinType::of_loser(&after, seat.other());
                assert_eq!(outcome.winner, Some(seat as u32));
                assert_eq!(outcome.level, expected.points());
                break outcome;
            }
            assert!(after.off(seat) < 15, "game {game}: all off but no outcome");
            turns += 1;
            assert!(turns < MAX_TURNS, "game {game} does not end");
            seat = seat.other();
            dice = roll(&mut rng);
        };
        wins[outcome.level as usize] += 1;
        total_turns += turns;
    }
    println!(
        "{}: {GAMES} games, {total_turns} turns: {} single, {} gammon, {} backgammon",
        plugin.name(),
        wins[1],
        wins[2],
        wins[3]
    );
    assert_eq!(wins[1] + wins[2] + wins[3], GAMES);
    // Random play loses many gammons; each kind must occur.
    assert!(wins.iter().skip(1).all(|&n| n > 0), "{wins:?}");
}
