//! The match state machine (bg-engine) driving the real standard plugin:
//! the cube, match play, resignation and scoring worked examples of rules
//! docs/rules.md §5 (T26-T32), one test each, with scripted dice.

use std::collections::VecDeque;

use bg_engine::game::{
    Command, CommandError, Crawford, CubeLimit, DiceSource, Event, Match, MatchSettings, Phase,
    ResignMode, ScoringLimit,
};
use bg_engine::{BAR, Board, Seat};
use bg_plugin_host::VariantRules;
use bg_tests::{spec_position, standard};
use bg_variant_api::Options;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use Seat::{Black, White};

/// Dice thrown in the order given.
struct Script(VecDeque<u8>);

impl DiceSource for Script {
    fn die(&mut self) -> u8 {
        self.0.pop_front().expect("the test scripted enough dice")
    }
}

fn script(dice: &[u8]) -> Script {
    Script(dice.iter().copied().collect())
}

fn rules(start: Option<Board>) -> VariantRules {
    let mut rules = VariantRules::new(standard(), Options::new());
    rules.start = start;
    rules
}

fn command(
    m: &mut Match,
    seat: Seat,
    c: Command,
    rules: &VariantRules,
    dice: &mut Script,
) -> Vec<Event> {
    m.apply(seat, &c, rules, dice)
        .unwrap_or_else(|e| panic!("{seat} {c:?}: {e}"))
}

fn play(notation: &str) -> Command {
    Command::Move {
        play: notation.parse().unwrap(),
    }
}

fn last_result(m: &Match) -> (Option<Seat>, u32, String) {
    let r = m.results.last().expect("a finished game");
    (r.winner, r.points, r.kind.clone())
}

/// T26 (and T25 with a cube of 4): white bears off against a black checker
/// left in white's home board, with the cube at 4. Backgammon: 12 under
/// Cox, 8 under Mars, 4 under Oin.
fn backgammon_with_cube_four(limit: ScoringLimit) -> u32 {
    // White: two checkers on its 6-point. Black: 14 on its 10-point and
    // one on its 22 (white's 3-point, in white's home board).
    let start = spec_position(&[(6, 2)], &[(15, 14), (3, 1)]);
    let rules = rules(Some(start));
    let settings = MatchSettings {
        scoring_limit: limit,
        ..MatchSettings::default()
    };
    // Opening: white 1, black 2: black starts with 2-1.
    let mut dice = script(&[1, 2, 2, 1, 2, 1, 6, 6]);
    let (mut m, _) = Match::new(settings, &rules, &mut dice).unwrap();
    assert_eq!((m.turn, m.phase), (Black, Phase::Move));
    command(&mut m, Black, play("10/8 10/9"), &rules, &mut dice);
    command(&mut m, White, Command::Double, &rules, &mut dice);
    command(&mut m, Black, Command::Take, &rules, &mut dice);
    command(&mut m, White, Command::Roll, &rules, &mut dice);
    command(&mut m, White, play("6/4 6/5"), &rules, &mut dice);
    command(&mut m, Black, Command::Double, &rules, &mut dice);
    command(&mut m, White, Command::Take, &rules, &mut dice);
    assert_eq!((m.cube.value, m.cube.owner), (4, Some(White)));
    command(&mut m, Black, Command::Roll, &rules, &mut dice);
    command(&mut m, Black, play("10/8 10/9"), &rules, &mut dice);
    command(&mut m, White, Command::Roll, &rules, &mut dice);
    let events = command(&mut m, White, play("5/off 4/off"), &rules, &mut dice);
    assert!(matches!(
        events.last(),
        Some(Event::MatchEnded {
            winner: Some(White),
            ..
        })
    ));
    let (winner, points, kind) = last_result(&m);
    assert_eq!((winner, kind.as_str()), (Some(White), "backgammon"));
    points
}

#[test]
fn t26_scoring_limit_caps_the_win_before_the_cube() {
    assert_eq!(backgammon_with_cube_four(ScoringLimit::Cox), 12);
    assert_eq!(backgammon_with_cube_four(ScoringLimit::Mars), 8);
    assert_eq!(backgammon_with_cube_four(ScoringLimit::Oin), 4);
}

#[test]
fn t27_a_dropped_redouble_scores_the_value_before_it() {
    let rules = rules(None);
    // White opens with 3-1; black doubles, then rolls 2-1.
    let mut dice = script(&[3, 1, 2, 1]);
    let (mut m, _) = Match::new(MatchSettings::default(), &rules, &mut dice).unwrap();
    command(&mut m, White, play("8/5 6/5"), &rules, &mut dice);
    command(&mut m, Black, Command::Double, &rules, &mut dice);
    command(&mut m, White, Command::Take, &rules, &mut dice);
    command(&mut m, Black, Command::Roll, &rules, &mut dice);
    command(&mut m, Black, play("13/11 24/23"), &rules, &mut dice);
    // White owns the 2-cube and redoubles to 4; black drops.
    command(&mut m, White, Command::Double, &rules, &mut dice);
    command(&mut m, Black, Command::Drop, &rules, &mut dice);
    assert_eq!(last_result(&m), (Some(White), 2, "dropped".to_string()));
    assert_eq!(m.score, [2, 0]);
}

/// A money game with Jacoby (and `auto_doubles`) whose opening throws tie
/// `ties` times; after white's opening play black, optionally after
/// doubling and being taken, resigns by position: a backgammon at the
/// start, capped to a gammon by Mars. Returns the points and the cube
/// value the game began with.
fn jacoby_game(ties: usize, auto_doubles: u32, double_first: bool) -> (u32, u32) {
    let rules = rules(None);
    let settings = MatchSettings {
        jacoby: true,
        auto_doubles,
        scoring_limit: ScoringLimit::Mars,
        ..MatchSettings::default()
    };
    let mut thrown: Vec<u8> = [3, 3].repeat(ties);
    thrown.extend([3, 1]);
    let mut dice = script(&thrown);
    let (mut m, events) = Match::new(settings, &rules, &mut dice).unwrap();
    let tie_events = events
        .iter()
        .filter(|e| matches!(e, Event::OpeningTie { dice: [3, 3], .. }))
        .count();
    assert_eq!(tie_events, ties, "every tied throw is recorded");
    assert_eq!(m.cube.owner, None);
    let cube = m.cube.value;
    command(&mut m, White, play("8/5 6/5"), &rules, &mut dice);
    if double_first {
        command(&mut m, Black, Command::Double, &rules, &mut dice);
        command(&mut m, White, Command::Take, &rules, &mut dice);
    }
    command(
        &mut m,
        Black,
        Command::Resign { level: None },
        &rules,
        &mut dice,
    );
    let (winner, points, _) = last_result(&m);
    assert_eq!(winner, Some(White));
    (points, cube)
}

fn jacoby_gammon(double_first: bool) -> u32 {
    jacoby_game(0, 0, double_first).0
}

fn jacoby_gammon_after_ties(ties: usize, auto_doubles: u32) -> (u32, u32) {
    jacoby_game(ties, auto_doubles, false)
}

#[test]
fn t28_jacoby_counts_gammons_single_only_with_a_centred_cube() {
    // (a) gammon, cube never turned: 1. (b) after a double and take to 2: 4.
    assert_eq!(jacoby_gammon(false), 1);
    assert_eq!(jacoby_gammon(true), 4);
    // (c) after one automatic double (cube 2, still centred): 2 × 1.
    assert_eq!(jacoby_gammon_after_ties(1, 1), (2, 2));
}

#[test]
fn automatic_doubles_stop_at_their_limit_and_are_off_by_default() {
    assert_eq!(jacoby_gammon_after_ties(3, 2), (4, 4));
    assert_eq!(jacoby_gammon_after_ties(2, 0), (1, 1));
    let refused = MatchSettings {
        match_length: 5,
        auto_doubles: 1,
        ..MatchSettings::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(refused.field, "auto_doubles");
}

/// Plays a game of a match to its end by a resignation offer: `loser`
/// offers `level`, the other accepts.
fn resign_game(m: &mut Match, rules: &VariantRules, dice: &mut Script, loser: Seat, level: u32) {
    command(
        m,
        loser,
        Command::Resign { level: Some(level) },
        rules,
        dice,
    );
    command(m, loser.other(), Command::AcceptResignation, rules, dice);
}

fn five_point_match() -> MatchSettings {
    MatchSettings {
        match_length: 5,
        resignation: ResignMode::Offer,
        ..MatchSettings::default()
    }
}

#[test]
fn t29_the_game_after_first_reaching_match_point_is_the_crawford_game() {
    let rules = rules(None);
    let mut dice = script(&[3, 1]);
    let (mut m, _) = Match::new(five_point_match(), &rules, &mut dice).unwrap();
    resign_game(&mut m, &rules, &mut dice, Black, 2); // 2-0
    resign_game(&mut m, &rules, &mut dice, White, 1); // 2-1
    assert_eq!(m.crawford, Crawford::Before);
    resign_game(&mut m, &rules, &mut dice, Black, 2); // 4-1
    assert_eq!((m.score, m.crawford), ([4, 1], Crawford::ThisGame));
    // Loser starts: black, who may not double in the Crawford game.
    assert_eq!((m.turn, m.phase), (Black, Phase::Roll));
    let refused = m
        .apply(Black, &Command::Double, &rules, &mut dice)
        .unwrap_err();
    assert!(
        matches!(&refused, CommandError::CubeUnavailable(why) if why.contains("Crawford")),
        "{refused}"
    );
    resign_game(&mut m, &rules, &mut dice, White, 1); // 4-2
    assert_eq!(m.crawford, Crawford::Post);
    // Post-Crawford the cube is back, for black (white's is dead: T30).
    let mut dice = script(&[2, 1]);
    command(&mut m, White, Command::Roll, &rules, &mut dice);
    command(&mut m, White, play("13/11 24/23"), &rules, &mut dice);
    command(&mut m, Black, Command::Double, &rules, &mut dice);
    command(&mut m, White, Command::Take, &rules, &mut dice);
    resign_game(&mut m, &rules, &mut dice, White, 1); // 4-4, the 2-cube
    assert_eq!(m.score, [4, 4]);
    assert_eq!(m.crawford, Crawford::Post, "no second Crawford game");
    resign_game(&mut m, &rules, &mut dice, Black, 2); // 6-4
    assert_eq!(
        (m.phase, m.winner, m.score),
        (Phase::MatchOver, Some(White), [6, 4])
    );
    let after = m
        .apply(White, &Command::Roll, &rules, &mut dice)
        .unwrap_err();
    assert_eq!(after, CommandError::MatchOver);
}

#[test]
fn t30_no_double_when_the_current_cube_already_wins_the_match() {
    let rules = rules(None);
    let mut dice = script(&[3, 1]);
    let (mut m, _) = Match::new(five_point_match(), &rules, &mut dice).unwrap();
    resign_game(&mut m, &rules, &mut dice, Black, 3); // A (white) 3 - 0
    resign_game(&mut m, &rules, &mut dice, White, 1); // 3 - 1; white, the loser, starts
    assert_eq!((m.score, m.turn), ([3, 1], White));
    // Black doubles and white takes: white (A) owns a 2-cube.
    let mut dice = script(&[2, 1, 4, 2]);
    command(&mut m, White, Command::Roll, &rules, &mut dice);
    command(&mut m, White, play("13/11 24/23"), &rules, &mut dice);
    command(&mut m, Black, Command::Double, &rules, &mut dice);
    command(&mut m, White, Command::Take, &rules, &mut dice);
    command(&mut m, Black, Command::Roll, &rules, &mut dice);
    command(&mut m, Black, play("8/4 6/4"), &rules, &mut dice);
    assert_eq!((m.cube.value, m.cube.owner), (2, Some(White)));
    let refused = m
        .apply(White, &Command::Double, &rules, &mut dice)
        .unwrap_err();
    assert!(
        matches!(&refused, CommandError::CubeUnavailable(why) if why.contains("dead cube")),
        "{refused}"
    );
}

#[test]
fn t30_post_crawford_the_leader_at_match_point_may_not_double_but_the_trailer_may() {
    let rules = rules(None);
    let mut dice = script(&[3, 1]);
    let (mut m, _) = Match::new(five_point_match(), &rules, &mut dice).unwrap();
    resign_game(&mut m, &rules, &mut dice, Black, 3); // 3-0
    resign_game(&mut m, &rules, &mut dice, Black, 1); // 4-0: next is Crawford
    resign_game(&mut m, &rules, &mut dice, White, 2); // 4-2, post-Crawford
    assert_eq!(
        (m.score, m.crawford, m.turn),
        ([4, 2], Crawford::Post, White)
    );
    let refused = m
        .apply(White, &Command::Double, &rules, &mut dice)
        .unwrap_err();
    assert!(matches!(refused, CommandError::CubeUnavailable(_)));
    let mut dice = script(&[2, 1]);
    command(&mut m, White, Command::Roll, &rules, &mut dice);
    command(&mut m, White, play("13/11 24/23"), &rules, &mut dice);
    command(&mut m, Black, Command::Double, &rules, &mut dice);
}

fn resign_at_start(limit: ScoringLimit) -> u32 {
    let rules = rules(None);
    let settings = MatchSettings {
        scoring_limit: limit,
        ..MatchSettings::default()
    };
    let mut dice = script(&[3, 1]);
    let (mut m, _) = Match::new(settings, &rules, &mut dice).unwrap();
    command(&mut m, White, play("8/5 6/5"), &rules, &mut dice);
    command(
        &mut m,
        Black,
        Command::Resign { level: None },
        &rules,
        &mut dice,
    );
    last_result(&m).1
}

#[test]
fn t31_resigning_by_position_at_the_start_is_a_backgammon() {
    assert_eq!(resign_at_start(ScoringLimit::Cox), 3);
    assert_eq!(resign_at_start(ScoringLimit::Mars), 2);
    assert_eq!(resign_at_start(ScoringLimit::Oin), 1);
}

/// T32: white moved first and bears off its last checker; black gets one
/// last roll. `black` is black's position (its own numbering).
fn last_roll(black: &[(u8, u8)], last_dice: [u8; 2]) -> (Option<Seat>, u32) {
    let board = Board::from_points(&[(1, 1)], black);
    let rules = rules(Some(board));
    let settings = MatchSettings {
        draw_on_last_roll: true,
        ..MatchSettings::default()
    };
    let mut dice = script(&[2, 1, last_dice[0], last_dice[1]]);
    let (mut m, events) = Match::new(settings, &rules, &mut dice).unwrap();
    assert_eq!(m.turn, White);
    command(&mut m, White, play("1/off"), &rules, &mut dice);
    assert_eq!((m.turn, m.phase), (Black, Phase::Roll), "{events:?}");
    // Nobody resigns a decided game: only the last roll remains.
    for seat in [White, Black] {
        let refused = m.apply(seat, &Command::Resign { level: None }, &rules, &mut dice);
        assert!(
            matches!(refused, Err(CommandError::Resignation(_))),
            "{refused:?}"
        );
    }
    command(&mut m, Black, Command::Roll, &rules, &mut dice);
    if m.phase == Phase::Move {
        let legal =
            bg_engine::game::Rules::legal_plays(&rules, &m.variant_state, Black, m.dice.unwrap())
                .unwrap();
        command(
            &mut m,
            Black,
            Command::Move {
                play: legal[0].play,
            },
            &rules,
            &mut dice,
        );
    }
    assert_eq!(m.phase, Phase::MatchOver);
    let (winner, points, _) = last_result(&m);
    (winner, points)
}

#[test]
fn t32_the_last_roll_draws_when_it_bears_everything_off() {
    assert_eq!(last_roll(&[(1, 2)], [3, 1]), (None, 0));
    assert_eq!(last_roll(&[(6, 3)], [6, 6]), (None, 0));
    assert_eq!(last_roll(&[(6, 3)], [5, 4]), (Some(White), 1));
}

#[test]
fn rolling_twice_shows_the_same_dice_and_refused_commands_change_nothing() {
    let rules = rules(None);
    let mut dice = script(&[3, 1, 6, 5]);
    let (mut m, _) = Match::new(MatchSettings::default(), &rules, &mut dice).unwrap();
    command(&mut m, White, play("8/5 6/5"), &rules, &mut dice);
    let before = m.clone();
    assert_eq!(
        m.apply(White, &Command::Roll, &rules, &mut dice),
        Err(CommandError::NotYourTurn(
            "black to roll (or double)".into()
        ))
    );
    assert!(matches!(
        m.apply(Black, &play("24/18"), &rules, &mut dice),
        Err(CommandError::WrongPhase(_))
    ));
    // The seat not on turn hears that it must wait, whatever it asks.
    for asked in [play("24/18"), Command::Double] {
        assert!(matches!(
            m.apply(White, &asked, &rules, &mut dice),
            Err(CommandError::NotYourTurn(_))
        ));
    }
    assert_eq!(m, before);
    assert_eq!(
        command(&mut m, Black, Command::Roll, &rules, &mut dice).len(),
        1
    );
    assert!(command(&mut m, Black, Command::Roll, &rules, &mut dice).is_empty());
    assert_eq!(m.dice, Some(bg_engine::Dice::new(6, 5).unwrap()));
    let before = m.clone();
    let illegal = m
        .apply(Black, &play("24/18"), &rules, &mut dice)
        .unwrap_err();
    assert_eq!(illegal.reason(), "ILLEGAL_PLAY");
    assert_eq!(m, before);
}

#[test]
fn a_turn_without_a_legal_move_passes_by_itself() {
    // Spec T2: white on the bar against a board where 6-4 cannot enter.
    let board = spec_position(
        &[(BAR, 1), (24, 1), (13, 5), (8, 3), (6, 5)],
        &[(21, 2), (19, 5), (17, 3), (12, 5)],
    );
    let rules = rules(Some(board));
    let mut dice = script(&[6, 4]);
    let (m, events) = Match::new(MatchSettings::default(), &rules, &mut dice).unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Passed { seat: White, .. })),
        "{events:?}"
    );
    assert_eq!((m.turn, m.phase), (Black, Phase::Roll));
}

/// Random matches with random cube actions and resignations: every match
/// ends, the score only grows by what each game says, Crawford comes at
/// most once, and the winner has the match points.
#[test]
fn random_matches_with_the_cube_end_with_consistent_scores() {
    struct Random(StdRng);
    impl DiceSource for Random {
        fn die(&mut self) -> u8 {
            self.0.random_range(1..=6)
        }
    }
    let rules = rules(None);
    let mut rng = StdRng::seed_from_u64(7);
    let mut dice = Random(StdRng::seed_from_u64(8));
    for n in 0..60 {
        let settings = MatchSettings {
            match_length: 1 + n % 7,
            cube: if n % 5 == 0 {
                CubeLimit::Unlimited
            } else {
                CubeLimit::Max(64)
            },
            resignation: if n % 2 == 0 {
                ResignMode::ByPosition
            } else {
                ResignMode::Offer
            },
            ..MatchSettings::default()
        };
        let (mut m, _) = Match::new(settings.clone(), &rules, &mut dice).unwrap();
        let mut crawford_games = 0;
        let mut actions = 0;
        while m.phase != Phase::MatchOver {
            actions += 1;
            assert!(actions < 20_000, "match {n} does not end");
            let seat = m.to_act().unwrap();
            let choice = rng.random_range(0..100);
            let command = match m.phase {
                Phase::Roll if choice < 10 => Command::Double,
                Phase::Roll if choice < 11 => Command::Resign {
                    level: (settings.resignation == ResignMode::Offer).then_some(1 + choice % 3),
                },
                Phase::Roll => Command::Roll,
                Phase::Move => {
                    let legal = bg_engine::game::Rules::legal_plays(
                        &rules,
                        &m.variant_state,
                        seat,
                        m.dice.unwrap(),
                    )
                    .unwrap();
                    Command::Move {
                        play: legal[rng.random_range(0..legal.len())].play,
                    }
                }
                Phase::CubeOffered if choice < 70 => Command::Take,
                Phase::CubeOffered => Command::Drop,
                Phase::ResignationOffered if choice < 50 => Command::AcceptResignation,
                Phase::ResignationOffered => Command::DeclineResignation,
                Phase::Decision | Phase::MatchOver => unreachable!("standard has no decisions"),
            };
            let score_before = m.score;
            match m.apply(seat, &command, &rules, &mut dice) {
                Ok(events) => {
                    for e in &events {
                        if let Event::GameEnded { result, score } = e {
                            let w = result.winner.expect("standard games have a winner");
                            assert_eq!(score[w.index()] - score_before[w.index()], result.points);
                            assert_eq!(score[w.other().index()], score_before[w.other().index()]);
                        }
                        if let Event::GameStarted { crawford: true, .. } = e {
                            crawford_games += 1;
                        }
                    }
                }
                // Doubles and resignations may be refused; nothing changes.
                Err(CommandError::CubeUnavailable(_) | CommandError::Resignation(_)) => {}
                Err(e) => panic!("match {n}: {command:?} by {seat}: {e}"),
            }
        }
        assert!(crawford_games <= 1);
        let w = m.winner.expect("a match has a winner").index();
        assert!(m.score[w] >= settings.match_length && m.score[1 - w] < settings.match_length);
    }
}
