//! Tric-trac through the API against the real server: complete parties
//! with stays and goes, the scoreboard in every snapshot, positions set
//! up through NewGame.

mod common;

use bg_api::v1 as pb;
use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::Code;

fn decide_request(g: &Game, choice: &str) -> pb::DecideRequest {
    pb::DecideRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        choice: choice.into(),
    }
}

fn tally(g: &pb::Game, seat: i32) -> pb::SeatTally {
    let board = g
        .scoreboard
        .as_ref()
        .expect("tric-trac shows its scoreboard");
    let t = if seat == pb::Seat::White as i32 {
        &board.white
    } else {
        &board.black
    };
    t.expect("both tallies")
}

/// White's talon is its 24-point; black's, its own 24 (white's 1).
fn at_the_talons(board: &pb::Board) -> bool {
    board.points[23] == 15 && board.points[0] == -15
}

/// Issue 13: a complete partie through the gRPC API, including a stay
/// and a go (each an ordinary Decide of the seat that won the hole, with
/// the version and token rules of every action); the scoreboard (points,
/// holes, bredouille, pavillon, rolls, last jans) in every snapshot.
#[tokio::test]
async fn a_complete_partie_through_the_api_with_a_stay_and_a_go() {
    let fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let listed = variants(&mut client).await;
    let trictrac = listed
        .iter()
        .find(|v| v.name == "trictrac")
        .expect("listed");
    assert!(trictrac.options.iter().any(|o| o.name == "stake"));
    assert!(!trictrac.cube, "no cube in tric-trac");

    // Rolled by hand: the test follows each throw (auto-roll is
    // tested on its own, in auto_roll.rs).
    let by_hand = pb::MatchSettings {
        auto_roll: Some(false),
        ..Default::default()
    };
    let mut g = variant_match(&mut client, "trictrac", by_hand).await;
    assert!(at_the_talons(g.game.board.as_ref().unwrap()));
    assert!(
        !g.game.position_id.is_empty(),
        "tric-trac boards are gnubg positions"
    );
    let mut rng = StdRng::seed_from_u64(13);
    let (mut stays, mut goes, mut jans_seen) = (0, 0, 0);
    let mut holes = [0u32; 2];
    let mut actions = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        actions += 1;
        assert!(actions < 50_000, "the partie does not end");
        let version = g.game.version;
        let token = g.to_act_token().to_string();
        let next = match pb::Phase::try_from(g.game.phase).unwrap() {
            pb::Phase::Roll => client.roll(roll(&g, "")).await.unwrap().into_inner(),
            pb::Phase::Move => {
                let plays = &g.game.legal_plays;
                let play = plays[rng.random_range(0..plays.len())].notation.clone();
                client
                    .r#move(with_token(move_request(&g, &play, ""), &token))
                    .await
                    .unwrap()
                    .into_inner()
            }
            pb::Phase::Decision => {
                let decision = g.game.decision.clone().expect("the decision is listed");
                assert_eq!(decision.choices, ["stay", "go"]);
                assert_eq!(decision.seat, g.game.to_act);
                assert_eq!(decision.seat, g.game.turn, "the roller decides");
                // The other seat cannot decide for him; a choice not on
                // offer and a stale version are refused; nothing changes.
                let other_token = g.token_of(other(g.game.to_act)).to_string();
                let refused = client
                    .decide(with_token(decide_request(&g, "go"), &other_token))
                    .await
                    .unwrap_err();
                assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
                assert_eq!(reason(&refused), "NOT_YOUR_TURN");
                let refused = client
                    .decide(with_token(decide_request(&g, "leave"), &token))
                    .await
                    .unwrap_err();
                assert_eq!(reason(&refused), "ILLEGAL_DECISION", "{refused:?}");
                let mut stale = decide_request(&g, "go");
                stale.expected_version -= 1;
                assert!(client.decide(with_token(stale, &token)).await.is_err());
                assert_eq!(get_game(&mut client, &g).await.version, version);

                let go = goes == 0 || (stays > 0 && rng.random_bool(0.2));
                let roller = g.game.turn;
                let next = client
                    .decide(with_token(
                        decide_request(&g, if go { "go" } else { "stay" }),
                        &token,
                    ))
                    .await
                    .unwrap()
                    .into_inner();
                if go {
                    goes += 1;
                    // Everything but the holes resets; the goer rolls first.
                    assert_eq!(next.phase, pb::Phase::Roll as i32);
                    assert_eq!(next.turn, roller);
                    assert!(next.dice.is_none());
                    assert!(at_the_talons(next.board.as_ref().unwrap()));
                    for seat in [pb::Seat::White as i32, pb::Seat::Black as i32] {
                        let t = tally(&next, seat);
                        assert_eq!((t.points, t.bredouille, t.rolls), (0, false, 0));
                    }
                } else {
                    stays += 1;
                    // The roller plays on with the same dice (or passes).
                    assert_eq!(next.dice.is_some(), next.phase == pb::Phase::Move as i32);
                    // The opponent's points are wiped by the hole; when the
                    // roller passes, the opponent's own roll (auto-roll, in
                    // the same action) may score anew, so look only while
                    // the roller still plays.
                    if next.turn == roller {
                        assert_eq!(tally(&next, other(roller)).points, 0, "wiped by the hole");
                    }
                }
                next
            }
            other => panic!("phase {other:?} never comes in tric-trac"),
        };
        assert_eq!(
            next.version,
            version + 1,
            "each action raises the version by one"
        );
        g.game = next;
        if g.game.phase == pb::Phase::MatchOver as i32 {
            break;
        }
        let board = g
            .game
            .scoreboard
            .clone()
            .expect("a scoreboard in every snapshot");
        jans_seen += board.last_roll.len();
        for j in &board.last_roll {
            assert!(j.points > 0 && j.ways > 0 && !j.kind.is_empty(), "{j:?}");
            assert_ne!(j.beneficiary, pb::Seat::Unspecified as i32);
        }
        for (i, seat) in [pb::Seat::White as i32, pb::Seat::Black as i32]
            .into_iter()
            .enumerate()
        {
            let t = tally(&g.game, seat);
            assert!(t.points < 12);
            assert!(t.holes >= holes[i] && t.holes < 12);
            holes[i] = t.holes;
        }
    }
    eprintln!("{actions} actions, {stays} stays, {goes} goes, {jans_seen} jans shown");
    assert!(stays > 0 && goes > 0, "stays {stays}, goes {goes}");
    assert!(jans_seen > 0);
    let result = g.game.results.last().expect("the partie's result");
    assert!(["single", "double", "triple", "quadruple"].contains(&result.kind.as_str()));
    // The last snapshot still shows the board and tally the partie ended on.
    assert!(
        tally(&g.game, result.winner).holes >= 12,
        "the winner has twelve holes"
    );
    assert!(tally(&g.game, other(result.winner)).holes < 12);
}

/// Issue 13: any worked example can be set up through NewGame: the board
/// (start_board) and, by options, the points, holes, bredouille and the
/// roll's number; bad values are refused with the option named.
#[tokio::test]
async fn new_game_sets_up_a_worked_example_with_points_holes_and_roll_number() {
    let fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    // T7 (docs/trictrac.md): W 1x10, 4, 5, 7, 12x2 (white's fields); B
    // 24x8, 23, 22, 21, 19, 18, 17, 16; white has 8 points in bredouille.
    let mut points = vec![0i32; 24];
    let white_field = |f: usize| 25 - f; // white's point of its field f
    for (f, n) in [(1, 10), (4, 1), (5, 1), (7, 1), (12, 2)] {
        points[white_field(f) - 1] += n;
    }
    for (f, n) in [
        (24, 8),
        (23, 1),
        (22, 1),
        (21, 1),
        (19, 1),
        (18, 1),
        (17, 1),
        (16, 1),
    ] {
        // Black's checker on white's field f is on white's point 25 - f.
        points[white_field(f) - 1] -= n;
    }
    let options = [
        ("start_points", "8,0"),
        ("start_holes", "3,1"),
        ("start_bredouille", "white"),
        ("start_rolls", "5,5"),
        // The opening throw only decides who rolls first: nothing is
        // scored before the game is shown.
        ("opening", "throw_again"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "trictrac".into(),
            options,
            settings: Some(pb::MatchSettings {
                auto_roll: Some(false),
                ..Default::default()
            }),
            start_board: Some(pb::Board {
                points: points.clone(),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await
    .expect("set up");
    let white = tally(&g.game, pb::Seat::White as i32);
    let black = tally(&g.game, pb::Seat::Black as i32);
    assert_eq!((white.points, white.holes, white.bredouille), (8, 3, true));
    assert_eq!((black.points, black.holes, black.bredouille), (0, 1, false));
    assert_eq!((white.rolls, black.rolls), (5, 5));
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    let board = g.game.scoreboard.unwrap();
    assert!(board.raised_stake.is_empty(), "both have holes: closed");

    for (name, value) in [
        ("start_points", "12,0"),
        ("start_holes", "x"),
        ("stake", "double"),
        ("no_such_option", "1"),
    ] {
        let refused = variant_game(
            &mut client,
            pb::NewGameRequest {
                variant: "trictrac".into(),
                options: [(name.to_string(), value.to_string())]
                    .into_iter()
                    .collect(),
                settings: Some(pb::MatchSettings::default()),
                ..Default::default()
            },
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("{name}={value} accepted"));
        assert_eq!(refused.code(), Code::InvalidArgument, "{name}: {refused:?}");
        assert!(refused.message().contains(name), "{}", refused.message());
    }
}

/// Rolls or moves (a random legal play) for whoever is on turn, until the
/// game waits for a decision; `None` if the partie ends first.
async fn play_until_a_decision(client: &mut Client, g: &mut Game, rng: &mut StdRng) -> Option<()> {
    loop {
        let token = g.to_act_token().to_string();
        g.game = match pb::Phase::try_from(g.game.phase).unwrap() {
            pb::Phase::Decision => return Some(()),
            pb::Phase::MatchOver => return None,
            pb::Phase::Roll => client.roll(roll(g, "")).await.unwrap().into_inner(),
            pb::Phase::Move => {
                let plays = &g.game.legal_plays;
                let play = plays[rng.random_range(0..plays.len())].notation.clone();
                client
                    .r#move(with_token(move_request(g, &play, ""), &token))
                    .await
                    .unwrap()
                    .into_inner()
            }
            other => panic!("phase {other:?} never comes in tric-trac"),
        };
    }
}

/// A killed server loses nothing of a partie: the pending stay-or-go, the
/// scoreboard and the board come back as they were acknowledged, and a
/// Decide retried with its request id after a crash is answered as the
/// first time, not applied twice.
#[tokio::test]
async fn a_pending_stay_or_go_and_its_answer_survive_sigkill() {
    let mut fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(7);
    // Rolled by hand: the test follows each throw (auto-roll is
    // tested on its own, in auto_roll.rs).
    let by_hand = pb::MatchSettings {
        auto_roll: Some(false),
        ..Default::default()
    };
    let mut g = variant_match(&mut client, "trictrac", by_hand).await;
    play_until_a_decision(&mut client, &mut g, &mut rng)
        .await
        .expect("a hole is won before the partie ends");
    let waiting = g.game.clone();

    fixture.server.kill();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    let after_crash = get_game(&mut client, &g).await;
    assert_eq!(after_crash.version, waiting.version);
    assert_eq!(after_crash.decision, waiting.decision);
    assert_eq!(after_crash.scoreboard, waiting.scoreboard);
    assert_eq!(after_crash.board, waiting.board);

    let token = g.to_act_token().to_string();
    let mut request = decide_request(&g, "go");
    request.request_id = "go-after-crash".into();
    let answered = client
        .decide(with_token(request.clone(), &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answered.version, waiting.version + 1);

    fixture.server.kill();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    let retried = client
        .decide(with_token(request, &token))
        .await
        .expect("a retry of an acknowledged Decide is answered, not refused")
        .into_inner();
    assert_eq!(retried.version, answered.version, "applied once");
    assert_eq!(retried.scoreboard, answered.scoreboard);
    assert_eq!(get_game(&mut client, &g).await.version, answered.version);
}

/// Plays that are not tric-trac plays are refused and change nothing: a
/// checker moved backwards, three moves on one roll, a move of a checker
/// that is not there.
#[tokio::test]
async fn plays_outside_the_rules_are_refused_and_change_nothing() {
    let fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let g = variant_match(&mut client, "trictrac", pb::MatchSettings::default()).await;
    // Primauté: the winner of the opening throw plays it at once.
    assert_eq!(g.game.phase, pb::Phase::Move as i32);
    let token = g.to_act_token().to_string();
    for notation in ["20/24", "24/23 24/22 24/21", "13/10", "24/1"] {
        let refused = client
            .r#move(with_token(move_request(&g, notation, ""), &token))
            .await
            .expect_err(notation);
        assert!(
            matches!(
                refused.code(),
                Code::FailedPrecondition | Code::InvalidArgument
            ),
            "{notation}: {refused:?}"
        );
        assert_eq!(
            get_game(&mut client, &g).await,
            g.game,
            "{notation} changed the game"
        );
    }
}

/// Issue 35: a decision runs the clock of the seat that must decide, and
/// the clock always runs for the seat the game waits for: through the
/// holes of a partie, each stay or go and what follows it.
#[tokio::test]
async fn a_stay_or_go_runs_the_clock_of_the_seat_that_decides() {
    let fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(35);
    let settings = pb::MatchSettings {
        auto_roll: Some(false),
        clock: Some(pb::ClockSettings {
            reserve_ms: 3_600_000,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut g = variant_match(&mut client, "trictrac", settings).await;
    let running = |game: &pb::Game| game.clock.expect("a clock").running;
    assert_eq!(running(&g.game), g.game.to_act);
    let mut decisions = 0;
    while decisions < 4 {
        if play_until_a_decision(&mut client, &mut g, &mut rng)
            .await
            .is_none()
        {
            break;
        }
        let decision = g.game.decision.clone().expect("the decision is listed");
        assert_eq!(running(&g.game), decision.seat, "the decider's time runs");
        let choice = if decisions % 2 == 0 { "stay" } else { "go" };
        g.game = client
            .decide(with_token(
                decide_request(&g, choice),
                g.token_of(decision.seat),
            ))
            .await
            .unwrap()
            .into_inner();
        decisions += 1;
        if g.game.phase != pb::Phase::MatchOver as i32 {
            assert_eq!(running(&g.game), g.game.to_act, "after a {choice}");
        }
    }
    assert!(decisions >= 2, "a stay and a go were decided");
}
