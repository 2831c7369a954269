//! The committed nets, measured: each must beat the random player and the
//! one-ply heuristic player by the margins docs/bot.md reports (over
//! fewer games here, with the bound lowered by the wider interval).

use bg_bot::net::Net;
use bg_bot::player::{HeuristicPlayer, RandomPlayer, SearchPlayer};
use bg_bot_train::duel::duel;
use rand::SeedableRng;
use rand::rngs::StdRng;

fn committed(name: &str) -> Net {
    bg_bot::trained(name).expect("a committed net")
}

#[test]
fn random_against_random_wins_half_the_games() {
    let mut rng = StdRng::seed_from_u64(3);
    let (mut a, mut b) = (
        RandomPlayer(StdRng::seed_from_u64(1)),
        RandomPlayer(StdRng::seed_from_u64(2)),
    );
    let result = duel(&bg_hypergammon::Hypergammon, &mut a, &mut b, 2000, &mut rng).unwrap();
    assert!(
        (result.win_rate() - 0.5).abs() < 2.0 * result.margin(),
        "{result}"
    );
}

#[test]
fn the_hypergammon_net_beats_the_random_and_the_heuristic_player() {
    let net = committed("hypergammon");
    let mut player = SearchPlayer::new(&net, 3, 0);
    let mut rng = StdRng::seed_from_u64(11);
    let random = duel(
        &bg_hypergammon::Hypergammon,
        &mut player,
        &mut RandomPlayer(StdRng::seed_from_u64(12)),
        2000,
        &mut rng,
    )
    .unwrap();
    assert!(random.win_rate() > 0.8, "{random}");
    let heuristic = duel(
        &bg_hypergammon::Hypergammon,
        &mut player,
        &mut HeuristicPlayer,
        2000,
        &mut rng,
    )
    .unwrap();
    assert!(heuristic.win_rate() > 0.6, "{heuristic}");
}

#[test]
fn the_standard_net_beats_the_random_and_the_heuristic_player() {
    let net = committed("standard");
    let mut player = SearchPlayer::new(&net, 15, 0);
    let mut rng = StdRng::seed_from_u64(13);
    let random = duel(
        &bg_standard_rules::Standard,
        &mut player,
        &mut RandomPlayer(StdRng::seed_from_u64(14)),
        400,
        &mut rng,
    )
    .unwrap();
    assert!(random.win_rate() > 0.9, "{random}");
    let heuristic = duel(
        &bg_standard_rules::Standard,
        &mut player,
        &mut HeuristicPlayer,
        400,
        &mut rng,
    )
    .unwrap();
    assert!(heuristic.win_rate() > 0.6, "{heuristic}");
}

/// Training is reproducible: the same seed gives the same weights.
#[test]
fn training_with_the_same_seed_gives_the_same_weights() {
    let train = |seed: u64| {
        let mut rng = StdRng::seed_from_u64(seed);
        let net = Net::new(16, &mut rng);
        let mut trainer = bg_bot_train::td::Trainer {
            variant: &bg_hypergammon::Hypergammon,
            checkers: 3,
            net,
            alpha: 0.1,
            rng,
        };
        for _ in 0..300 {
            trainer.train_game().unwrap();
        }
        trainer.net.to_bytes()
    };
    assert_eq!(train(5), train(5));
    assert_ne!(train(5), train(6));
}

/// At 1-ply, a play that bears off the last checker is taken: the game
/// ends there, with no reply to look at.
#[test]
fn one_ply_takes_the_play_that_ends_the_game() {
    use bg_engine::{Board, Dice, Seat};
    use bg_variant_api::{Options, Variant};
    let net = committed("hypergammon");
    let variant = bg_hypergammon::Hypergammon;
    let board = Board::from_points_for(3, &[(1, 1), (2, 1)], &[(20, 2), (19, 1)]);
    let state = variant
        .setup_position(&board, &Options::new())
        .unwrap()
        .state;
    let mut plays = Vec::new();
    variant.legal_plays(&state, Seat::White, Dice::new(6, 5).unwrap(), &mut plays);
    let mut player = SearchPlayer::<bg_hypergammon::Hypergammon>::new(&net, 3, 1);
    use bg_bot::player::Player;
    let chosen = player
        .choose(
            &variant,
            &state,
            Seat::White,
            Dice::new(6, 5).unwrap(),
            &plays,
        )
        .unwrap();
    assert_eq!(plays[chosen].result.off(Seat::White), 3, "{plays:?}");
}

/// The levels, weakest first, are weaker and weaker against the heuristic
/// player as their noise grows (the order docs/bot.md measured).
#[test]
fn each_level_with_more_noise_wins_less() {
    use bg_bot::level::{LEVELS, level};
    assert_eq!(level(""), LEVELS.last().copied());
    assert_eq!(level("expert").map(|l| l.plies), Some(1));
    let net = committed("standard");
    let rate = |noise: f32| {
        let mut player = SearchPlayer::new(&net, 15, 0).with_noise(noise, StdRng::seed_from_u64(4));
        let mut rng = StdRng::seed_from_u64(5);
        duel(
            &bg_standard_rules::Standard,
            &mut player,
            &mut HeuristicPlayer,
            300,
            &mut rng,
        )
        .unwrap()
        .win_rate()
    };
    let (beginner, intermediate) = (rate(0.2), rate(0.05));
    assert!(
        beginner + 0.15 < intermediate,
        "{beginner} against {intermediate}"
    );
}

/// Tric-trac's net (it reads the scoreboard) wins parties against the
/// random player and the points-per-roll player, staying and going by
/// what follows each choice (docs/bot.md measures 1,000 parties each).
#[test]
fn the_trictrac_net_beats_the_random_and_the_points_per_roll_player() {
    let net = committed("trictrac");
    assert!(net.reads_scores());
    let variant = bg_trictrac_rules::TricTrac;
    let mut player = SearchPlayer::new(&net, 15, 0);
    let mut rng = StdRng::seed_from_u64(38);
    let random = duel(
        &variant,
        &mut player,
        &mut RandomPlayer(StdRng::seed_from_u64(39)),
        100,
        &mut rng,
    )
    .unwrap();
    assert!(random.win_rate() > 0.9, "{random}");
    let heuristic = duel(&variant, &mut player, &mut HeuristicPlayer, 200, &mut rng).unwrap();
    assert!(heuristic.win_rate() > 0.7, "{heuristic}");
}

/// Long nardy's and Fevga's nets (both sides the same way round) beat the
/// random player and the heuristic player that knows their geometry
/// (docs/bot.md measures 1,000 games each).
#[test]
fn the_long_nardy_and_fevga_nets_beat_the_random_and_the_heuristic_player() {
    fn measure<V: bg_variant_api::Variant>(variant: &V, name: &str, seed: u64) {
        let net = committed(name);
        let mut player = SearchPlayer::new(&net, 15, 0);
        let mut rng = StdRng::seed_from_u64(seed);
        let random = duel(
            variant,
            &mut player,
            &mut RandomPlayer(StdRng::seed_from_u64(seed + 1)),
            300,
            &mut rng,
        )
        .unwrap();
        assert!(random.win_rate() > 0.85, "{name}: {random}");
        let heuristic = duel(variant, &mut player, &mut HeuristicPlayer, 300, &mut rng).unwrap();
        assert!(heuristic.win_rate() > 0.55, "{name}: {heuristic}");
    }
    measure(&bg_same_way_rules::LongNardy, "long_nardy", 390);
    measure(&bg_same_way_rules::Fevga, "fevga", 391);
}
