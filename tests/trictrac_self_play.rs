//! Random self-play of complete tric-trac parties through the plugin
//! loaded from its file, driven by the engine's match state machine as the
//! server drives it, with the invariants checked after every action and
//! every scoring event counted.

use std::collections::BTreeMap;

use bg_engine::game::{Command, DiceSource, Event, Match, MatchSettings, Phase, Rules};
use bg_engine::{Board, Seat};
use bg_plugin_host::VariantRules;
use bg_tests::loaded;
use bg_variant_api::Options;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const PARTIES: usize = 6_000;
/// No partie lasts this long; reaching it means a loop.
const MAX_ACTIONS: usize = 100_000;

struct Random(StdRng);

impl DiceSource for Random {
    fn die(&mut self) -> u8 {
        self.0.random_range(1..=6)
    }
}

/// Every scoring event of the table (docs/trictrac.md §3), by its name;
/// the pile de misère, an option off by default, has its own tests.
const TABLE: [&str; 18] = [
    "six_tables",
    "two_tables",
    "contre_two_tables",
    "mezeas",
    "contre_mezeas",
    "true_hit_grand_table",
    "true_hit_petit_table",
    "corner_hit",
    "false_hit_grand_table",
    "false_hit_petit_table",
    "fill_petit_jan",
    "fill_grand_jan",
    "fill_retour_jan",
    "keep_petit_jan",
    "keep_grand_jan",
    "keep_retour_jan",
    "unplayable_number",
    "exit",
];

fn check_board(board: &Board, at: &str) {
    board.validate().unwrap_or_else(|e| panic!("{at}: {e}"));
    for seat in Seat::BOTH {
        assert_eq!(
            board.count(seat, bg_engine::BAR),
            0,
            "{at}: a checker on the bar"
        );
    }
}

#[test]
fn six_thousand_random_parties_end_with_every_invariant_kept_and_every_jan_scored() {
    let plugin = loaded("bg_trictrac");
    let mut rng = StdRng::seed_from_u64(0x7c7c_0001);
    let mut dice = Random(StdRng::seed_from_u64(0x7c7c_0002));
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let (mut stays, mut goes, mut exits, mut releves) = (0u64, 0u64, 0u64, 0u64);
    let mut levels = [0u64; 5];
    for partie in 0..PARTIES {
        let mut options = Options::new();
        if partie % 2 == 1 {
            options.insert("stake".into(), "4321".into());
        }
        let rules = VariantRules::new(plugin.clone(), options);
        // Rolled by hand: the invariants below follow each throw (auto-roll
        // is tested through the API, crates/server/tests/auto_roll.rs).
        let settings = MatchSettings {
            auto_roll: Some(false),
            ..MatchSettings::default()
        };
        let (mut m, _) = Match::new(settings, &rules, &mut dice).unwrap();
        let mut holes = [0i64; 2];
        let mut round = 1;
        let mut actions = 0;
        let mut exit_scored = false;
        // Some players go often (many relevés: the jans of the start),
        // some seldom (long relevés: the jans de retour and the exits).
        let go_percent = [60, 3, 30, 3][partie % 4];
        while m.phase != Phase::MatchOver {
            actions += 1;
            assert!(actions < MAX_ACTIONS, "partie {partie} does not end");
            let seat = m.to_act().expect("someone acts");
            let command = match m.phase {
                Phase::Roll => Command::Roll,
                Phase::Move => {
                    let legal = rules
                        .legal_plays(&m.variant_state, seat, m.dice.unwrap())
                        .unwrap();
                    Command::Move {
                        play: legal[rng.random_range(0..legal.len())].play,
                    }
                }
                Phase::Decision => {
                    let d = m.pending_decision.as_ref().unwrap();
                    assert_eq!(d.choices, ["stay", "go"]);
                    // Going now and then: relevés happen, and parties still
                    // reach their jans de retour and exits.
                    let go = rng.random_range(0..100) < go_percent;
                    if go {
                        goes += 1;
                    } else {
                        stays += 1;
                    }
                    Command::Decide {
                        choice: if go { "go" } else { "stay" }.into(),
                    }
                }
                other => panic!("partie {partie}: phase {other:?} never comes in tric-trac"),
            };
            let events = m
                .apply(seat, &command, &rules, &mut dice)
                .unwrap_or_else(|e| panic!("partie {partie}: {seat} {command:?}: {e}"));
            for e in &events {
                if let Event::Scored {
                    reason,
                    points,
                    ways,
                    ..
                } = e
                {
                    assert!(*points > 0 && points % 2 == 0, "{reason}: {points} points");
                    assert!(*ways > 0, "{reason}: no ways");
                    *counts.entry(reason.clone()).or_default() += 1;
                    exit_scored |= reason == "exit";
                }
                if let Event::Rolled { .. } = e {
                    exit_scored = false;
                }
                if let Event::GameEnded { result, .. } = e {
                    levels[result.level as usize] += 1;
                }
            }
            if m.phase == Phase::MatchOver {
                break;
            }
            let at = format!("partie {partie}, action {actions}");
            check_board(&plugin.board(&m.variant_state).unwrap(), &at);
            let board = rules
                .scoreboard(&m.variant_state)
                .unwrap()
                .expect("a scoreboard");
            let (points, seat_holes) = (
                board.tally("points").expect("points"),
                board.tally("holes").expect("holes"),
            );
            for seat in Seat::BOTH {
                let (points, seat_holes) = (points[seat.index()], seat_holes[seat.index()]);
                assert!(points <= 11, "{at}: {seat} has {points} points");
                assert!(
                    seat_holes >= holes[seat.index()],
                    "{at}: {seat}'s holes went down"
                );
                assert!(
                    seat_holes < 12,
                    "{at}: {seat} has 12 holes and the partie goes on"
                );
                holes[seat.index()] = seat_holes;
            }
            let board_round = board.counter("round").expect("the round");
            if board_round != round {
                assert_eq!(board_round, round + 1, "{at}: one relevé at a time");
                round = board_round;
                releves += 1;
                if exit_scored {
                    exits += 1;
                }
                assert_eq!(
                    plugin.board(&m.variant_state).unwrap(),
                    bg_trictrac_rules::start_board(),
                    "{at}: a relevé puts every checker back on its talon"
                );
                assert_eq!(
                    m.phase,
                    Phase::Roll,
                    "{at}: the relevé's first mover rolls afresh"
                );
            }
        }
        assert!(m.winner.is_some(), "partie {partie} has a winner");
    }
    eprintln!("scoring events over {PARTIES} parties:");
    for (reason, n) in &counts {
        eprintln!("  {reason:<24} {n}");
    }
    eprintln!(
        "stays {stays}, goes {goes}, relevés {releves} ({exits} after an exit); wins by level {:?}",
        &levels[1..]
    );
    for name in TABLE {
        assert!(counts.contains_key(name), "{name} never occurred");
    }
    assert!(stays > 0 && goes > 0 && exits > 0);
}
