//! Worked examples of docs/rules.md §5 through the API (T25-T32), arranged
//! so that their outcome does not depend on the dice (the server's dice
//! are random): from the start position or from a `start_board`. They
//! also run against the engine with the real plugin and scripted dice in
//! `tests/match_flow.rs`, with the dice-dependent halves (T32's 6-6 or 5-4).

mod common;

use bg_api::v1 as pb;
use common::*;
use tonic::Code;

async fn resign(
    client: &mut Client,
    g: &mut Game,
    seat: i32,
    action: pb::ResignAction,
    level: u32,
) {
    let request = pb::ResignRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: action as i32,
        level,
    };
    g.game = client
        .resign(with_token(request, g.token_of(seat)))
        .await
        .unwrap_or_else(|s| panic!("{action:?}: {s:?}"))
        .into_inner();
}

/// `loser` resigns at `level` and the other seat accepts.
async fn resign_accepted(client: &mut Client, g: &mut Game, loser: i32, level: u32) {
    resign(client, g, loser, pb::ResignAction::Resign, level).await;
    resign(client, g, other(loser), pb::ResignAction::Accept, 0).await;
}

async fn cube(
    client: &mut Client,
    g: &mut Game,
    seat: i32,
    action: pb::DoubleAction,
) -> Result<(), tonic::Status> {
    let request = pb::DoubleRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: action as i32,
    };
    g.game = client
        .double(with_token(request, g.token_of(seat)))
        .await?
        .into_inner();
    Ok(())
}

const WHITE: i32 = pb::Seat::White as i32;
const BLACK: i32 = pb::Seat::Black as i32;

/// Plays the turn of whoever is on turn (roll and a legal play) so that
/// the other player is on turn, before rolling.
async fn pass_turn(client: &mut Client, g: &mut Game) {
    let seat = g.game.turn;
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(g.game.version);
    while g.game.turn == seat && g.game.phase != pb::Phase::MatchOver as i32 {
        step(client, g, &mut rng).await;
    }
}

#[tokio::test]
async fn t27_a_dropped_redouble_scores_the_value_before_it() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    pass_turn(&mut client, &mut g).await;
    // B doubles, A takes and owns the 2-cube.
    let b = g.game.turn;
    let a = other(b);
    cube(&mut client, &mut g, b, pb::DoubleAction::Offer)
        .await
        .unwrap();
    cube(&mut client, &mut g, a, pb::DoubleAction::Take)
        .await
        .unwrap();
    assert_eq!(g.game.cube.unwrap().value, 2);
    pass_turn(&mut client, &mut g).await;
    assert_eq!(g.game.turn, a);
    // A redoubles to 4; B drops: A scores 2.
    cube(&mut client, &mut g, a, pb::DoubleAction::Offer)
        .await
        .unwrap();
    cube(&mut client, &mut g, b, pb::DoubleAction::Drop)
        .await
        .unwrap();
    let result = g.game.results.last().unwrap();
    assert_eq!(
        (result.winner, result.points, result.reason.as_str()),
        (a, 2, "dropped")
    );
}

#[tokio::test]
async fn t29_crawford_then_post_crawford_in_a_five_point_match() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let settings = pb::MatchSettings {
        match_length: 5,
        resignation: pb::ResignationMode::Offer as i32,
        ..Default::default()
    };
    let mut g = new_game(&mut client, settings).await;
    // White +2, black +1, white +2: 4-1.
    for (loser, level) in [(BLACK, 2), (WHITE, 1), (BLACK, 2)] {
        resign_accepted(&mut client, &mut g, loser, level).await;
    }
    let score = g.game.score.unwrap();
    assert_eq!((score.white, score.black), (4, 1));
    assert_eq!(g.game.crawford, pb::Crawford::ThisGame as i32);
    assert!(!g.game.cube.unwrap().in_play);
    let turn = g.game.turn;
    let refused = cube(&mut client, &mut g, turn, pb::DoubleAction::Offer)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    // Black +1 (4-2): post-Crawford, and white, at match point, may not double (T30).
    resign_accepted(&mut client, &mut g, WHITE, 1).await;
    assert_eq!(g.game.crawford, pb::Crawford::Post as i32);
    assert!(g.game.cube.unwrap().in_play);
    assert_eq!(g.game.turn, WHITE, "the loser starts");
    let refused = cube(&mut client, &mut g, WHITE, pb::DoubleAction::Offer)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("dead cube"),
        "{}",
        refused.message()
    );
    // White +2 wins the match 6-2.
    resign_accepted(&mut client, &mut g, BLACK, 2).await;
    assert_eq!(g.game.phase, pb::Phase::MatchOver as i32);
    assert_eq!(g.game.match_winner, WHITE);
}

#[tokio::test]
async fn t31_resigning_by_position_at_the_start_costs_a_backgammon() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    for (limit, points) in [
        (pb::ScoringLimit::Cox, 3),
        (pb::ScoringLimit::Mars, 2),
        (pb::ScoringLimit::Oin, 1),
    ] {
        let settings = pb::MatchSettings {
            scoring_limit: limit as i32,
            ..Default::default()
        };
        let mut g = new_game(&mut client, settings).await;
        // The player not on turn resigns: nothing of theirs has moved.
        let loser = other(g.game.turn);
        resign(&mut client, &mut g, loser, pb::ResignAction::Resign, 0).await;
        let result = g.game.results.last().unwrap();
        assert_eq!(
            (result.winner, result.points),
            (other(loser), points),
            "{limit:?}"
        );
    }
}

/// The player who moved first redoubles to 4 after the other's double, and
/// the other takes. The first mover then resigns by position: nothing of
/// theirs borne off and a back checker still in the winner's home board
/// (an opening play, never a double, cannot bring both out; a hit checker
/// on the bar counts the same), so a backgammon.
async fn backgammon_at_cube_four(client: &mut Client, limit: pb::ScoringLimit) -> (String, u32) {
    let settings = pb::MatchSettings {
        scoring_limit: limit as i32,
        ..Default::default()
    };
    let mut g = new_game(client, settings).await;
    let a = g.game.turn;
    let b = other(a);
    pass_turn(client, &mut g).await;
    cube(client, &mut g, b, pb::DoubleAction::Offer)
        .await
        .unwrap();
    cube(client, &mut g, a, pb::DoubleAction::Take)
        .await
        .unwrap();
    pass_turn(client, &mut g).await;
    cube(client, &mut g, a, pb::DoubleAction::Offer)
        .await
        .unwrap();
    cube(client, &mut g, b, pb::DoubleAction::Take)
        .await
        .unwrap();
    let board = g.game.board.clone().unwrap();
    let (a_off, b_home_has_a) = if a == WHITE {
        (
            board.white_off,
            board.white_bar > 0 || board.points[18..24].iter().any(|&n| n > 0),
        )
    } else {
        (
            board.black_off,
            board.black_bar > 0 || board.points[0..6].iter().any(|&n| n < 0),
        )
    };
    assert_eq!(a_off, 0);
    assert!(b_home_has_a, "{board:?}");
    assert_eq!(g.game.cube.unwrap().value, 4);
    resign(client, &mut g, a, pb::ResignAction::Resign, 0).await;
    let result = g.game.results.last().unwrap();
    assert_eq!(result.winner, b);
    (result.kind.clone(), result.points)
}

#[tokio::test]
async fn t25_t26_a_backgammon_at_cube_four_scores_12_capped_by_mars_and_oin() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(
        backgammon_at_cube_four(&mut client, pb::ScoringLimit::Cox).await,
        ("backgammon".to_string(), 12)
    );
    assert_eq!(
        backgammon_at_cube_four(&mut client, pb::ScoringLimit::Mars)
            .await
            .1,
        8
    );
    assert_eq!(
        backgammon_at_cube_four(&mut client, pb::ScoringLimit::Oin)
            .await
            .1,
        4
    );
}

/// A money game with Jacoby, the gammon capped by Mars: the player who has
/// not moved resigns by position after the opening play (optionally after
/// doubling and being taken).
async fn jacoby_gammon(client: &mut Client, double_first: bool) -> u32 {
    let settings = pb::MatchSettings {
        jacoby: true,
        scoring_limit: pb::ScoringLimit::Mars as i32,
        ..Default::default()
    };
    let mut g = new_game(client, settings).await;
    pass_turn(client, &mut g).await;
    let loser = g.game.turn;
    if double_first {
        cube(client, &mut g, loser, pb::DoubleAction::Offer)
            .await
            .unwrap();
        cube(client, &mut g, other(loser), pb::DoubleAction::Take)
            .await
            .unwrap();
    }
    resign(client, &mut g, loser, pb::ResignAction::Resign, 0).await;
    let result = g.game.results.last().unwrap();
    assert_eq!(result.winner, other(loser));
    // Judged a backgammon on the position; Mars makes it count as a gammon
    // (level 2), and Jacoby as a single (level 1) while the cube is centred.
    assert_eq!(result.kind, "backgammon");
    assert_eq!(result.level, if double_first { 2 } else { 1 });
    result.points
}

#[tokio::test]
async fn t28_jacoby_counts_a_gammon_single_only_while_the_cube_is_centred() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    // (a) cube never turned: 1. (b) after a double and take to 2: 4.
    // (c) needs automatic doubles, which this service does not offer.
    assert_eq!(jacoby_gammon(&mut client, false).await, 1);
    assert_eq!(jacoby_gammon(&mut client, true).await, 4);

    // (c) after one automatic double: games until an opening throw ties
    // (one in six), then the player who has not moved resigns: 2 × 1.
    let settings = pb::MatchSettings {
        jacoby: true,
        auto_doubles: 1,
        scoring_limit: pb::ScoringLimit::Mars as i32,
        ..Default::default()
    };
    let mut tries = 0;
    let mut g = loop {
        let g = new_game(&mut client, settings).await;
        if g.game.cube.unwrap().value == 2 {
            break g;
        }
        tries += 1;
        assert!(tries < 300, "an opening throw ties now and then");
    };
    let events = watch(&mut client, &g, 0)
        .await
        .message()
        .await
        .unwrap()
        .unwrap()
        .events;
    assert!(events.iter().any(|e| e.kind == "opening_tie"), "{events:?}");
    let loser = other(g.game.turn);
    resign(&mut client, &mut g, loser, pb::ResignAction::Resign, 0).await;
    let result = g.game.results.last().unwrap();
    assert_eq!((result.level, result.cube, result.points), (1, 2, 2));
}

/// White: one checker on its 1-point (14 off). Black: two on its 1-point
/// (13 off). Whoever moves first bears off everything with the opening
/// throw; the other then has one last roll, which bears off everything too.
fn last_roll_position() -> pb::Board {
    let mut points = vec![0; 24];
    points[0] = 1; // white's 1-point
    points[23] = -2; // white's 24-point: black's 1-point
    pb::Board {
        points,
        white_off: 14,
        black_off: 13,
        ..Default::default()
    }
}

/// Rolls and plays the only play until the game in progress ends.
async fn bear_off_to_the_end(client: &mut Client, g: &mut Game) {
    let game_number = g.game.game_number;
    while g.game.game_number == game_number && g.game.phase != pb::Phase::MatchOver as i32 {
        let token = g.to_act_token().to_string();
        g.game = if g.game.phase == pb::Phase::Roll as i32 {
            client.roll(roll(g, "")).await.unwrap().into_inner()
        } else {
            let play = g.game.legal_plays[0].notation.clone();
            let request = move_request(g, &play, "");
            client
                .r#move(with_token(request, &token))
                .await
                .unwrap()
                .into_inner()
        };
    }
}

#[tokio::test]
async fn t32_the_last_roll_draws_when_it_bears_everything_off() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let request = pb::NewGameRequest {
        variant: "standard".into(),
        settings: Some(pb::MatchSettings {
            money_games: Some(3),
            draw_on_last_roll: true,
            ..Default::default()
        }),
        start_board: Some(last_roll_position()),
        ..Default::default()
    };
    let mut g = variant_game(&mut client, request).await.unwrap();
    assert_eq!(g.game.board.as_ref(), Some(&last_roll_position()));
    bear_off_to_the_end(&mut client, &mut g).await;
    let result = g.game.results.last().unwrap();
    assert_eq!(
        (result.winner, result.kind.as_str(), result.points),
        (pb::Seat::Unspecified as i32, "draw", 0)
    );

    // Every game of the session starts from the position, also after a
    // restart (the server reads it back from the store).
    assert_eq!(g.game.board.as_ref(), Some(&last_roll_position()));
    bear_off_to_the_end(&mut client, &mut g).await;
    fixture.server.kill();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    g.game = get_game(&mut client, &g).await;
    assert_eq!(g.game.game_number, 3);
    assert_eq!(g.game.board.as_ref(), Some(&last_roll_position()));
    bear_off_to_the_end(&mut client, &mut g).await;
    assert_eq!(g.game.phase, pb::Phase::MatchOver as i32);
    assert!(g.game.results.iter().all(|r| r.kind == "draw"));
}

#[tokio::test]
async fn a_start_position_that_is_not_possible_is_refused_and_creates_nothing() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let sixteen = pb::Board {
        white_off: 15,
        ..last_roll_position()
    };
    let short = pb::Board {
        points: vec![0; 23],
        ..last_roll_position()
    };
    let over = pb::Board {
        points: vec![0; 24],
        white_off: 15,
        black_off: 15,
        ..Default::default()
    };
    let pinned = pb::Board {
        pins: vec![pb::Pin {
            point: 1,
            pinned: BLACK,
        }],
        black_off: 12,
        ..last_roll_position()
    };
    for (board, says) in [
        (sixteen, "16 checkers"),
        (short, "23 entries"),
        (over, "borne off every checker"),
        (pinned, "no pinned checkers"),
    ] {
        let request = pb::NewGameRequest {
            variant: "standard".into(),
            start_board: Some(board),
            ..Default::default()
        };
        let status = client.new_game(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(says), "{}", status.message());
    }
}

#[tokio::test]
async fn a_plakoto_start_position_with_a_pinned_checker_is_played_from_as_given() {
    let fixture = start_with_plugins(&[("bg_plakoto", "libbg_plakoto.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    // White's checker on its 10-point lies pinned under a black checker;
    // the others wait on each side's 24-point.
    let mut points = vec![0; 24];
    points[23] = 14;
    points[9] = -1;
    points[0] = -14;
    let board = pb::Board {
        points,
        pins: vec![pb::Pin {
            point: 10,
            pinned: WHITE,
        }],
        ..Default::default()
    };
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "plakoto".into(),
            start_board: Some(board.clone()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(g.game.board, Some(board));
}

#[tokio::test]
async fn plakoto_has_no_triple_so_a_resignation_offer_stops_at_two() {
    let fixture = start_plakoto_and_standard();
    let mut client = connect(&fixture.server.addr).await;
    let variants = variants(&mut client).await;
    let level = |name: &str| {
        variants
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.max_win_level)
    };
    assert_eq!((level("plakoto"), level("standard")), (Some(2), Some(3)));

    let mut g = variant_match(
        &mut client,
        "plakoto",
        pb::MatchSettings {
            resignation: pb::ResignationMode::Offer as i32,
            ..Default::default()
        },
    )
    .await;
    let loser = g.game.turn;
    let offer = |level| pb::ResignRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: pb::ResignAction::Resign as i32,
        level,
    };
    let status = client
        .resign(with_token(offer(3), g.token_of(loser)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains("from 1 to 2"),
        "{}",
        status.message()
    );
    resign_accepted(&mut client, &mut g, loser, 2).await;
    let result = g.game.results.last().unwrap();
    assert_eq!((result.winner, result.points), (other(loser), 2));
    // Named as Plakoto names a level-2 win played out (T33: "double"),
    // not with the standard board's "gammon".
    assert_eq!((result.kind.as_str(), result.level), ("double", 2));
}

/// Each variant names its resigned wins as its played ones: the standard
/// board's "gammon" at level 2.
#[tokio::test]
async fn a_standard_resignation_at_level_two_is_a_gammon() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = variant_match(
        &mut client,
        "standard",
        pb::MatchSettings {
            resignation: pb::ResignationMode::Offer as i32,
            match_length: 5,
            ..Default::default()
        },
    )
    .await;
    let loser = g.game.turn;
    resign_accepted(&mut client, &mut g, loser, 2).await;
    let result = g.game.results.last().unwrap();
    assert_eq!((result.kind.as_str(), result.level), ("gammon", 2));
}

/// §4.3: later games start with the loser, except in Plakoto (the
/// winner); the settings show the rule in force, the match's own first.
#[tokio::test]
async fn who_starts_later_games_is_shown_in_the_settings() {
    let fixture = start_plakoto_and_standard();
    let mut client = connect(&fixture.server.addr).await;
    let first_move = |g: &Game| g.game.settings.as_ref().unwrap().first_move;
    let standard = new_game(&mut client, pb::MatchSettings::default()).await;
    assert_eq!(first_move(&standard), pb::FirstMove::Loser as i32);
    let plakoto = variant_match(&mut client, "plakoto", pb::MatchSettings::default()).await;
    assert_eq!(first_move(&plakoto), pb::FirstMove::Winner as i32);
    let alternate = pb::MatchSettings {
        first_move: pb::FirstMove::Alternate as i32,
        ..Default::default()
    };
    let chosen = variant_match(&mut client, "plakoto", alternate).await;
    assert_eq!(first_move(&chosen), pb::FirstMove::Alternate as i32);
}

/// `Cube.may_double` says beforehand what a Double would meet: over
/// random matches of 3 and 5 points (the Crawford game, post-Crawford, a
/// dead cube, each side's cube) and a money session with a cube limit of
/// 4, each seat to roll doubles whenever it says so, and each Double it
/// refuses in between is refused `CUBE_UNAVAILABLE`, nothing changed.
#[tokio::test]
async fn may_double_is_true_exactly_when_a_double_is_taken_up() {
    use rand::{Rng, SeedableRng};
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(56);
    let (mut offered, mut refused) = (0, 0);
    for settings in [
        pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        },
        pb::MatchSettings {
            match_length: 5,
            ..Default::default()
        },
        pb::MatchSettings {
            money_games: Some(3),
            cube_max: Some(4),
            ..Default::default()
        },
    ] {
        let mut g = new_game(&mut client, settings).await;
        for _ in 0..3_000 {
            if g.game.phase == pb::Phase::MatchOver as i32 {
                break;
            }
            let may_double = g.game.cube.unwrap().may_double;
            let to_act = g.game.to_act;
            if g.game.phase == pb::Phase::Roll as i32 && may_double {
                cube(&mut client, &mut g, to_act, pb::DoubleAction::Offer)
                    .await
                    .unwrap();
                offered += 1;
                continue;
            }
            if g.game.phase == pb::Phase::Roll as i32 && rng.random_bool(0.5) {
                let before = g.game.clone();
                let status = cube(&mut client, &mut g, to_act, pb::DoubleAction::Offer)
                    .await
                    .unwrap_err();
                assert_eq!(reason(&status), "CUBE_UNAVAILABLE", "{status:?}");
                assert_eq!(g.game, before);
                refused += 1;
            }
            let next = next_action(&g.game, &mut rng, false).unwrap();
            // Half the doubles are passed, half taken.
            let next = match next {
                Sent::Double(mut d) if rng.random_bool(0.5) => {
                    d.action = pb::DoubleAction::Drop as i32;
                    Sent::Double(d)
                }
                other => other,
            };
            let token = g.to_act_token().to_string();
            g.game = send(&mut client, &next, &token).await.unwrap();
        }
        assert_eq!(g.game.phase, pb::Phase::MatchOver as i32);
    }
    assert!(offered > 10 && refused > 10, "{offered} {refused}");
}
