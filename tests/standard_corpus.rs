//! Standard rules against GNU Backgammon: for each of the corpus's 5,000
//! positions, the set of positions the loaded plugin reaches must equal
//! the set gnubg's move generator reaches, exactly.

use bg_engine::{Dice, Seat, position_id};
use bg_tests::{corpus_path, standard};

#[test]
fn every_corpus_position_has_exactly_gnubgs_legal_plays() {
    let plugin = standard();
    let corpus = std::fs::read_to_string(corpus_path()).expect("corpus");
    let mut plays = Vec::new();
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for line in corpus.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let board = position_id::decode(fields[0], Seat::White).expect("position id");
        let dice = Dice::new(fields[1].parse().unwrap(), fields[2].parse().unwrap()).unwrap();
        let count: usize = fields[3].parse().unwrap();
        let mut expected: Vec<&str> = fields[4..].to_vec();
        expected.sort();
        assert_eq!(expected.len(), count, "corpus line is inconsistent: {line}");

        let setup = plugin
            .setup_position(&board, &Default::default())
            .expect("setup");
        plugin
            .legal_plays(&setup.state, Seat::White, dice, &mut plays)
            .expect("legal plays");
        let mut found: Vec<String> = plays
            .iter()
            .map(|lp| position_id::encode(&lp.result, Seat::White))
            .collect();
        found.sort();
        if found != expected {
            mismatches.push(format!(
                "{} {}: gnubg {expected:?}, plugin {found:?}",
                fields[0], dice
            ));
        }
        checked += 1;
    }
    assert_eq!(checked, 5000);
    assert!(
        mismatches.is_empty(),
        "{} of {checked} positions differ from gnubg; first: {}",
        mismatches.len(),
        mismatches[0]
    );
}

#[test]
fn each_legal_play_is_listed_once_with_moves_that_reach_its_result() {
    // The plays a client sees must be distinct and each must replay to its
    // own result: check that on the whole corpus.
    let plugin = standard();
    let corpus = std::fs::read_to_string(corpus_path()).expect("corpus");
    let mut plays = Vec::new();
    for line in corpus.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let board = position_id::decode(fields[0], Seat::White).unwrap();
        let dice = Dice::new(fields[1].parse().unwrap(), fields[2].parse().unwrap()).unwrap();
        let setup = plugin.setup_position(&board, &Default::default()).unwrap();
        plugin
            .legal_plays(&setup.state, Seat::White, dice, &mut plays)
            .unwrap();
        let mut results: Vec<_> = plays.iter().map(|lp| lp.result).collect();
        results.sort();
        results.dedup();
        assert_eq!(results.len(), plays.len(), "duplicate results for {line}");
        for lp in &plays {
            assert_eq!(
                bg_tests::after_white_plays(&board, &lp.play.to_string()),
                lp.result,
                "{} {dice}: {} does not reach its result",
                fields[0],
                lp.play
            );
        }
    }
}
