//! One pipeline (issue 48): the duels' and the trainer's player
//! (`bg_bot::player::SearchPlayer`, given the variant's decoded state as a
//! duel holds it) chooses the play the service's own search chooses
//! (`bg_bot::search::rank` on the state bytes a bot seat holds, what the
//! bot seat, `Hint` and `AnalyzeMatch` run), on the positions of the
//! standard corpus, the variant played through the engine's `Rules` in
//! process (`bg_variant_api::in_process`) as the server plays it through
//! a plugin: nothing is lost between the two holdings of a state.

use bg_bot::player::{Player, SearchPlayer};
use bg_bot::search::{Evaluator, rank};
use bg_engine::game::Rules;
use bg_engine::{Dice, Seat, position_id};
use bg_standard_rules::Standard;
use bg_variant_api::Variant;
use bg_variant_api::in_process::InProcess;

/// The corpus's positions: the board (white on roll), the dice, and the
/// state the service would hold for it.
fn positions(rules: &InProcess<Standard>, count: usize) -> Vec<(Dice, Vec<u8>)> {
    let text = include_str!("../../../tests/data/standard-legal-plays.txt");
    text.lines()
        .take(count)
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let board = position_id::decode(fields[0], Seat::White).unwrap();
            let dice = Dice::new(fields[1].parse().unwrap(), fields[2].parse().unwrap()).unwrap();
            (dice, rules.setup_at(&board).unwrap().state)
        })
        .collect()
}

#[test]
fn the_duels_players_choose_the_plays_the_service_s_search_chooses() {
    let net = bg_bot::trained("standard").unwrap();
    let rules = InProcess::new(Standard);
    let eval = Evaluator {
        net: &net,
        checkers: 15,
    };
    let mut zero = SearchPlayer::<Standard>::new(&net, 15, 0);
    let mut one = SearchPlayer::<Standard>::new(&net, 15, 1);
    let (mut compared, mut one_ply) = (0, 0);
    for (i, (dice, bytes)) in positions(&rules, 600).into_iter().enumerate() {
        let plays = rules.legal_plays(&bytes, Seat::White, dice).unwrap();
        if plays.len() < 2 {
            continue;
        }
        let state = Standard.decode_state(&bytes).unwrap();
        let result = |index: usize| plays[index].result;
        // 1-ply on the first 150 lines (each about 21 times the work).
        for plies in if i < 150 { 0..=1 } else { 0..=0 } {
            let service = rank(&rules, eval, &bytes, Seat::White, dice, &plays, plies).unwrap();
            let trainer = match plies {
                0 => zero.choose(&Standard, &state, Seat::White, dice, &plays),
                _ => one.choose(&Standard, &state, Seat::White, dice, &plays),
            }
            .unwrap();
            let (a, b) = (result(service[0].index), result(trainer));
            assert_eq!(a, b, "{plies}-ply, line {}", i + 1);
            match plies {
                0 => compared += 1,
                _ => one_ply += 1,
            }
        }
    }
    assert!(
        compared > 400 && one_ply > 100,
        "{compared} and {one_ply} compared"
    );
}
