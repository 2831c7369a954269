//! A play in a match is worth what its chances are worth at the score,
//! as GNU Backgammon values plays in matches: the computer chooses by it
//! (`act::play_value`), and `Hint` and `AnalyzeMatch` rank and judge by
//! the same measure. In money play it is the cubeless equity.

use bg_bot::act::play_value;
use bg_bot::search::Evaluation;
use bg_engine::Seat;
use bg_engine::game::{Cube, DiceSource, Match, MatchSettings, Resume, Rules};
use bg_standard_rules::Standard;
use bg_variant_api::in_process::InProcess;

struct Threes;

impl DiceSource for Threes {
    fn die(&mut self) -> u8 {
        3
    }
}

/// A 5-point match taken up at `score`, white to roll, the cube at
/// `cube` (black's once turned).
fn match_at(score: [u32; 2], cube: u32) -> Match {
    let rules = InProcess::new(Standard);
    let setup = rules.new_game().unwrap();
    let settings = MatchSettings {
        match_length: 5,
        ..MatchSettings::default()
    };
    let from = Resume {
        score,
        cube: Cube {
            value: cube,
            owner: (cube > 1).then_some(Seat::Black),
        },
        on_roll: Seat::White,
        crawford: false,
    };
    Match::resume(settings, setup, from, &rules, &mut Threes)
        .unwrap()
        .0
}

fn valued(outputs: [f32; 5]) -> Evaluation {
    Evaluation {
        outputs,
        equity: bg_bot::net::equity(&outputs),
    }
}

#[test]
fn at_double_match_point_a_play_is_worth_its_winning_chances_alone() {
    // 4-4 in a 5-point match: whoever wins this game wins the match.
    let m = match_at([4, 4], 1);
    let value = play_value(Some(&m), Seat::White);
    let quiet = valued([0.6, 0.0, 0.0, 0.0, 0.0]);
    let gammonish = valued([0.6, 0.35, 0.05, 0.15, 0.01]);
    assert!((value(&quiet) - 0.2).abs() < 1e-4, "{}", value(&quiet));
    assert!(
        (value(&gammonish) - 0.2).abs() < 1e-4,
        "{}",
        value(&gammonish)
    );
    // Money play: the cubeless equity, gammons counted double.
    let money = play_value(None, Seat::White);
    assert_eq!(money(&gammonish), gammonish.equity);
    assert!(money(&gammonish) > money(&quiet));
}

#[test]
fn at_an_early_score_gammons_count_and_the_value_is_in_emg_at_the_cube() {
    let m = match_at([0, 0], 1);
    let value = play_value(Some(&m), Seat::White);
    let quiet = valued([0.6, 0.0, 0.0, 0.0, 0.0]);
    let gammonish = valued([0.6, 0.35, 0.05, 0.15, 0.01]);
    assert!(value(&gammonish) > value(&quiet) + 0.1);
    // At a 2-cube the same chances are worth twice the EMG.
    let doubled = play_value(Some(&match_at([0, 0], 2)), Seat::White);
    assert!(
        doubled(&quiet) > 1.5 * value(&quiet),
        "{} {}",
        doubled(&quiet),
        value(&quiet)
    );
}
