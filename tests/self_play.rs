//! Random self-play of complete games through the plugins loaded from
//! their files (standard, Caucasian), with the invariants checked after
//! every play.

use bg_engine::{Board, Dice, Seat};
use bg_standard_rules::WinType;
use std::sync::Arc;

use bg_plugin_host::Plugin;
use bg_tests::{loaded, standard};
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
    self_play(loaded("bg_caucasian"), &Options::new(), 0x5eed_0002);
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
                assert_eq!(outcome.winner, Some(seat));
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

#[test]
fn ten_thousand_random_plakoto_games_reach_every_kind_of_end() {
    let plugin = loaded("bg_plakoto");
    let mut rng = StdRng::seed_from_u64(0x5eed_0003);
    let mut plays = Vec::new();
    let mut ends: std::collections::BTreeMap<String, usize> = Default::default();
    let mut total_turns = 0;
    for game in 0..GAMES {
        let mut state = plugin.new_game(&Options::new()).unwrap().state;
        let mut seat = if rng.random_bool(0.5) {
            Seat::White
        } else {
            Seat::Black
        };
        let mut turns = 0;
        let end = loop {
            let dice = roll(&mut rng);
            let before = plugin.board(&state).unwrap();
            plugin.legal_plays(&state, seat, dice, &mut plays).unwrap();
            let chosen = plays[rng.random_range(0..plays.len())];
            let t = plugin.apply_play(&state, seat, dice, &chosen.play).unwrap();
            state = t.state;
            let after = plugin.board(&state).unwrap();
            // The host checked 15 a side and pins; here: nothing moves back.
            after.validate().unwrap();
            assert_eq!(after, chosen.result);
            assert!(
                after.pip_count(seat) <= before.pip_count(seat),
                "game {game}"
            );
            assert_eq!(
                after.pip_count(seat.other()),
                before.pip_count(seat.other()),
                "no hitting in Plakoto"
            );
            if let Some(o) = t.outcome {
                match (o.kind.as_str(), o.winner, o.level) {
                    ("draw", None, 0) => {}
                    ("mother", Some(w), 2) | ("double", Some(w), 2) | ("single", Some(w), 1) => {
                        assert_eq!(w, seat, "only the mover can end the game")
                    }
                    other => panic!("game {game}: unexpected outcome {other:?}"),
                }
                if o.kind == "single" || o.kind == "double" {
                    assert_eq!(after.off(seat), 15);
                    assert_eq!(o.kind == "double", after.off(seat.other()) == 0);
                }
                break o.kind;
            }
            turns += 1;
            assert!(turns < MAX_TURNS, "game {game} does not end");
            seat = seat.other();
        };
        *ends.entry(end).or_default() += 1;
        total_turns += turns;
    }
    println!("plakoto: {GAMES} games, {total_turns} turns, ends: {ends:?}");
    for kind in ["single", "double", "mother", "draw"] {
        assert!(
            ends.get(kind).copied().unwrap_or(0) > 0,
            "no game ended by {kind}: {ends:?}"
        );
    }
}
