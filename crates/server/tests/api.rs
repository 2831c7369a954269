//! The service end to end: a real `backgammond` process on a free port,
//! a real SQLite file, the real standard plugin loaded from its file, and
//! a real gRPC client.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use bg_api::v1 as pb;
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tonic::transport::Channel;
use tonic::{Code, Request};
use tonic_types::StatusExt;

#[tokio::test]
async fn a_complete_match_to_three_points_through_the_api() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(3);
    let mut g = new_game(
        &mut client,
        pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(g.game.version, 1);
    assert_eq!(g.game.crawford, pb::Crawford::NotYet as i32);
    let mut actions = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        step(&mut client, &mut g, &mut rng).await;
        actions += 1;
        assert!(actions < 5_000, "the match ends");
    }
    let score = g.game.score.unwrap();
    let winner = g.game.match_winner;
    assert!(score.white >= 3 || score.black >= 3);
    let winner_score = if winner == pb::Seat::White as i32 {
        score.white
    } else {
        score.black
    };
    assert!(winner_score >= 3, "{score:?} won by {winner}");
    let points: u32 = g.game.results.iter().map(|r| r.points).sum();
    assert_eq!(points, score.white + score.black);

    // The stored game says the same; the event log replays every version.
    let stored = get_game(&mut client, &g).await;
    assert_eq!(stored, g.game);
    let mut updates = watch(&mut client, &g, 0).await;
    let mut versions = Vec::new();
    while versions.last() != Some(&g.game.version) {
        let update = updates.message().await.unwrap().expect("an update");
        assert!(!update.events.is_empty());
        versions.push(update.version);
    }
    assert_eq!(versions, (1..=g.game.version).collect::<Vec<_>>());
}

/// WatchGame sends what happened after `from_version` and nothing else:
/// from the current version, the next action first; from a version the
/// game has not reached, a clear error (issue 34).
#[tokio::test]
async fn a_watch_sends_exactly_the_versions_after_from_version() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut rng = StdRng::seed_from_u64(34);
    for _ in 0..4 {
        step(&mut client, &mut g, &mut rng).await;
    }
    let now = g.game.version;
    let mut watchers = Vec::new();
    for from in [0, 1, now - 1, now] {
        watchers.push((from, watch(&mut client, &g, from).await));
    }
    step(&mut client, &mut g, &mut rng).await;
    for (from, mut updates) in watchers {
        let mut versions = Vec::new();
        while versions.last() != Some(&g.game.version) {
            let update = updates.message().await.unwrap().expect("an update");
            versions.push(update.version);
        }
        assert_eq!(versions, (from + 1..=g.game.version).collect::<Vec<_>>());
    }
    for ahead in [g.game.version + 1, u64::MAX] {
        let refused = client
            .watch_game(pb::WatchGameRequest {
                game_id: g.id(),
                from_version: ahead,
                read_mask: None,
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::OutOfRange, "{refused:?}");
        assert_eq!(reason(&refused), "VERSION_AHEAD");
        let info = refused.get_details_error_info().unwrap();
        assert_eq!(
            info.metadata.get("current_version"),
            Some(&g.game.version.to_string())
        );
    }
}

#[tokio::test]
async fn concurrent_conflicting_moves_apply_exactly_one() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    // The opening roll is thrown at NewGame: the starter is to move.
    assert_eq!(g.game.phase, pb::Phase::Move as i32);
    let token = g.to_act_token().to_string();
    let g = Arc::new(g);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let mut client = client.clone();
            let g = g.clone();
            let token = token.clone();
            tokio::spawn(async move {
                let plays = &g.game.legal_plays;
                let play = plays[i % plays.len()].notation.clone();
                client
                    .r#move(with_token(move_request(&g, &play, ""), &token))
                    .await
            })
        })
        .collect();
    let mut applied = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(game) => {
                applied += 1;
                assert_eq!(game.into_inner().version, 2);
            }
            Err(status) => {
                assert_eq!(status.code(), Code::Aborted, "{status:?}");
                assert_eq!(reason(&status), "VERSION_MISMATCH");
                let info = status.get_details_error_info().unwrap();
                assert_eq!(
                    info.metadata.get("current_version").map(String::as_str),
                    Some("2")
                );
            }
        }
    }
    assert_eq!(applied, 1);
    let game = get_game(&mut client, &g).await;
    assert_eq!(game.version, 2);
}

#[tokio::test]
async fn a_retry_with_the_same_request_id_returns_the_first_answer() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let token = g.to_act_token().to_string();
    let play = g.game.legal_plays[0].notation.clone();
    let first = client
        .r#move(with_token(move_request(&g, &play, "req-1"), &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.version, 2);
    // The same request again (its expected_version is now stale): the
    // first answer, and nothing applied twice.
    let again = client
        .r#move(with_token(move_request(&g, &play, "req-1"), &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, first);
    // The same id for another request is refused.
    let other = g.game.legal_plays.last().unwrap().notation.clone();
    let status = client
        .r#move(with_token(move_request(&g, &other, "req-1"), &token))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::InvalidArgument, "REQUEST_ID_REUSED")
    );
    // ... also when the new request expects the current version: the same
    // seat resigning now under the used id changes nothing.
    let resign = pb::ResignRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: 2,
        request_id: "req-1".into(),
        action: pb::ResignAction::Resign as i32,
        level: 0,
    };
    let status = client.resign(with_token(resign, &token)).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::InvalidArgument, "REQUEST_ID_REUSED")
    );
    let game = get_game(&mut client, &g).await;
    assert_eq!(game.version, 2);
    assert_eq!(game, first);

    // A NewGame retry answers with the seat tokens: a guessable id is refused.
    let status = client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            request_id: "new-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("at least 16 characters"),
        "{}",
        status.message()
    );

    // NewGame too: a retry returns the same game and tokens.
    let request = pb::NewGameRequest {
        variant: "standard".into(),
        request_id: "6a1f3c0e-0d0b-4b8e-9c3e-2f1d7a5b9e41".into(),
        ..Default::default()
    };
    let a = client.new_game(request.clone()).await.unwrap().into_inner();
    let b = client.new_game(request).await.unwrap().into_inner();
    assert_eq!(a, b);

    // Rolling twice in one turn shows the same dice and changes nothing.
    let mut g2 = Game {
        game: first,
        tokens: g.tokens.clone(),
    };
    let rolled = client.roll(roll(&g2, "roll-1")).await.unwrap().into_inner();
    g2.game = rolled.clone();
    if rolled.phase == pb::Phase::Move as i32 {
        let mut again = roll(&g2, "");
        again.get_mut().expected_version = rolled.version;
        let shown = client.roll(again).await.unwrap().into_inner();
        assert_eq!((shown.version, shown.dice), (rolled.version, rolled.dice));
        // Nothing to commit, but the id belongs to another request.
        let reused = roll(&g2, "roll-1");
        let status = client.roll(reused).await.unwrap_err();
        assert_eq!(reason(&status), "REQUEST_ID_REUSED");
    }
}

#[tokio::test]
async fn no_seat_can_act_without_its_token() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let other_game = new_game(&mut client, pb::MatchSettings::default()).await;
    let play = g.game.legal_plays[0].notation.clone();
    let request = move_request(&g, &play, "");

    let status = client
        .r#move(Request::new(request.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Unauthenticated, "TOKEN_MISSING")
    );
    for token in ["not-a-token", other_game.to_act_token()] {
        let status = client
            .r#move(with_token(request.clone(), token))
            .await
            .unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::PermissionDenied, "TOKEN_INVALID")
        );
    }
    // Without the seat's token a request is not even judged: a malformed
    // one gets the same answer as a good one.
    let malformed = pb::MoveRequest {
        expected_version: 0,
        notation: "13/x".into(),
        ..request.clone()
    };
    let status = client
        .r#move(Request::new(malformed.clone()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let status = client
        .r#move(with_token(malformed, other_game.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    // The other seat's own token: a real seat, but not on turn.
    let waiting = g.token_of(other(g.game.to_act));
    let status = client
        .r#move(with_token(request.clone(), waiting))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "NOT_YOUR_TURN")
    );
    // It says whose turn it is and what the game waits for.
    let mover = if g.game.to_act == pb::Seat::White as i32 {
        "white"
    } else {
        "black"
    };
    assert!(
        status
            .message()
            .ends_with(&format!("the game waits for {mover} to move")),
        "{status:?}"
    );
    let game = get_game(&mut client, &g).await;
    assert_eq!(game, g.game, "nothing changed");
}

#[tokio::test]
async fn malformed_requests_get_their_status_and_change_nothing() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let token = g.to_act_token().to_string();

    let unknown = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: "00000000-0000-4000-8000-000000000000".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.code(), reason(&unknown).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND")
    );
    let bad_id = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: "xyz".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_id.code(), Code::InvalidArgument);

    let variant = client
        .new_game(pb::NewGameRequest {
            variant: "chess".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(variant.code(), Code::InvalidArgument);
    assert!(
        variant.message().contains("standard"),
        "{}",
        variant.message()
    );
    let option = client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            options: HashMap::from([("setup".to_string(), "hypergammon".to_string())]),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        (option.code(), reason(&option).as_str()),
        (Code::InvalidArgument, "INVALID_OPTION")
    );
    let settings = client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            settings: Some(pb::MatchSettings {
                cube_max: Some(3),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(settings.code(), Code::InvalidArgument);

    let mut out_of_range = move_request(&g, "", "");
    out_of_range.moves = vec![pb::CheckerMove { from: 30, to: 24 }];
    let status = client
        .r#move(with_token(out_of_range, &token))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let status = client
        .r#move(with_token(move_request(&g, "13/0x", ""), &token))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let mut no_version = move_request(&g, &g.game.legal_plays[0].notation, "");
    no_version.expected_version = 0;
    let status = client
        .r#move(with_token(no_version, &token))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let mut stale = move_request(&g, &g.game.legal_plays[0].notation, "");
    stale.expected_version = 7;
    let status = client.r#move(with_token(stale, &token)).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Aborted, "VERSION_MISMATCH")
    );
    let status = client
        .r#move(with_token(move_request(&g, "24/1", ""), &token))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "ILLEGAL_PLAY")
    );
    let status = client
        .double(with_token(
            pb::DoubleRequest {
                read_mask: None,
                game_id: g.id(),
                expected_version: g.game.version,
                request_id: String::new(),
                action: 0,
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    // Doubling after the roll is refused.
    let status = client
        .double(with_token(
            pb::DoubleRequest {
                read_mask: None,
                game_id: g.id(),
                expected_version: g.game.version,
                request_id: String::new(),
                action: pb::DoubleAction::Offer as i32,
            },
            &token,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "WRONG_PHASE")
    );

    let game = get_game(&mut client, &g).await;
    assert_eq!(game, g.game, "nothing changed");
}

#[tokio::test]
async fn every_acknowledged_action_survives_sigkill() {
    let mut fixture = start();
    let mut rng = StdRng::seed_from_u64(11);
    let mut client = connect(&fixture.server.addr).await;
    let mut games = Vec::new();
    for _ in 0..4 {
        games.push(new_game(&mut client, pb::MatchSettings::default()).await);
    }
    // A stream of actions, each with a request id; the kill lands while
    // one is in flight.
    let mut acknowledged: Vec<u64> = games.iter().map(|g| g.game.version).collect();
    let mut in_flight = None;
    let kill_after = 120;
    for n in 0..kill_after {
        let i = n % games.len();
        let g = &mut games[i];
        if g.game.phase == pb::Phase::MatchOver as i32 {
            continue;
        }
        step(&mut client, g, &mut rng).await;
        acknowledged[i] = g.game.version;
        if n == kill_after - 1 {
            // Send one more action and kill the server without waiting.
            let g = &games[(n + 1) % games.len()];
            if g.game.phase == pb::Phase::Roll as i32 || g.game.phase == pb::Phase::Move as i32 {
                let request = if g.game.phase == pb::Phase::Roll as i32 {
                    None
                } else {
                    Some(move_request(
                        g,
                        &g.game.legal_plays[0].notation,
                        "in-flight",
                    ))
                };
                let mut c = client.clone();
                let token = g.to_act_token().to_string();
                let index = (n + 1) % games.len();
                let roll_request = roll(g, "in-flight");
                let call = tokio::spawn(async move {
                    match request {
                        Some(m) => c
                            .r#move(with_token(m, &token))
                            .await
                            .map(|r| r.into_inner()),
                        None => c.roll(roll_request).await.map(|r| r.into_inner()),
                    }
                });
                in_flight = Some((index, call));
            }
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    fixture.server.kill();
    let in_flight_result = match in_flight {
        Some((index, call)) => Some((index, call.await.unwrap())),
        None => None,
    };

    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    // Seat tokens still work after the restart.
    let h = &games[1];
    let stored = get_game(&mut client, h).await;
    let status = client
        .roll(with_token(
            pb::RollRequest {
                read_mask: None,
                game_id: h.id(),
                expected_version: stored.version + 100,
                request_id: String::new(),
                dice_seed: String::new(),
            },
            h.to_act_token(),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        status.code(),
        Code::Aborted,
        "authenticated, then refused on the version: {status:?}"
    );
    for (i, g) in games.iter().enumerate() {
        let stored = get_game(&mut client, g).await;
        match &in_flight_result {
            Some((index, result)) if *index == i => {
                // The unanswered action either was applied (then a retry
                // with its request id returns it) or was not.
                assert!(stored.version == acknowledged[i] || stored.version == acknowledged[i] + 1);
                if let Ok(answer) = result {
                    assert_eq!(
                        answer.version,
                        acknowledged[i] + 1,
                        "an answered action is stored"
                    );
                    assert_eq!(stored.version, acknowledged[i] + 1);
                }
            }
            _ => {
                assert_eq!(
                    stored.version, acknowledged[i],
                    "game {i}: every acknowledged action, nothing else"
                );
                assert_eq!(stored, g.game);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_server_cleanly() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    // A watcher keeps a stream open: shutdown ends it instead of waiting.
    let mut watch = watch(&mut client, &g, 0).await;
    watch.message().await.unwrap().expect("version 1");
    let (code, took) = tokio::task::block_in_place(|| fixture.server.terminate());
    assert_eq!(code, Some(0), "clean exit");
    assert!(
        took < std::time::Duration::from_secs(5),
        "well within the grace period: {took:?}"
    );
    let end = watch.message().await;
    assert!(
        matches!(&end, Err(s) if s.code() == Code::Unavailable && reason(s) == "SHUTTING_DOWN")
            || matches!(end, Ok(None)),
        "{end:?}"
    );
}

#[tokio::test]
async fn health_and_reflection_answer() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let fixture = start();
    let channel = Channel::from_shared(fixture.server.addr.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel.clone());
    for service in ["", "backgammon.v1.GameService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
    let mut reflection = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::once(request))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("{response:?}")
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(
        names.contains(&"backgammon.v1.GameService".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"grpc.health.v1.Health".to_string()),
        "{names:?}"
    );
}

/// Older clients (grpcurl before 1.8.8, evans) only speak v1alpha.
#[tokio::test]
async fn reflection_answers_v1alpha_clients_too() {
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;

    let fixture = start();
    let channel = Channel::from_shared(fixture.server.addr.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(
            "backgammon.v1.GameService".into(),
        )),
    };
    let response = ServerReflectionClient::new(channel)
        .server_reflection_info(tokio_stream::once(request))
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap();
    let Some(MessageResponse::FileDescriptorResponse(files)) = response.message_response else {
        panic!("{response:?}")
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

#[tokio::test]
async fn variants_are_listed_with_their_options() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let variants = variants(&mut client).await;
    let [standard] = &variants[..] else {
        panic!("{variants:?}")
    };
    assert_eq!(standard.name, "standard");
    assert!(standard.cube && standard.standard_board && !standard.draws);
    assert_eq!(standard.options[0].name, "setup");
}

#[tokio::test]
async fn an_idle_game_leaves_memory_and_is_read_back_from_storage() {
    let fixture = start_with_args(&["--idle-seconds", "0.2"]);
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    // Long enough for the game to be evicted several times over.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let play = g.game.legal_plays[0].notation.clone();
    let moved = client
        .r#move(with_token(
            move_request(&g, &play, "after-idle"),
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(moved.version, 2);
    let read = get_game(&mut client, &g).await;
    assert_eq!(read, moved);
}

/// Both sides have a checker on the bar against a closed board: every roll
/// passes at once, and the answer must still show what was thrown.
#[tokio::test]
async fn a_roll_that_must_pass_shows_its_dice_in_the_last_events() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut points = vec![0; 24];
    points[..6].fill(2); // white's home board, closed
    points[6] = 2;
    points[18..].fill(-2); // black's home board, closed
    points[17] = -2;
    let board = pb::Board {
        points,
        white_bar: 1,
        black_bar: 1,
        ..Default::default()
    };
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            start_board: Some(board),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let kinds = |game: &pb::Game| -> Vec<String> {
        game.last_events.iter().map(|e| e.kind.clone()).collect()
    };
    // The opening roll's winner could not enter: the other seat rolls.
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    assert!(
        kinds(&g.game).contains(&"passed".to_string()),
        "{:?}",
        g.game.last_events
    );

    let roller = g.game.to_act;
    let rolled = client.roll(roll(&g, "r1")).await.unwrap().into_inner();
    assert_eq!(rolled.version, g.game.version + 1);
    assert_eq!(
        (rolled.phase, rolled.to_act, rolled.dice),
        (pb::Phase::Roll as i32, other(roller), None),
        "the turn passed"
    );
    assert_eq!(kinds(&rolled), ["rolled", "passed"]);
    assert!(rolled.last_events.iter().all(|e| e.seat == roller));
    let detail: serde_json::Value =
        serde_json::from_str(&rolled.last_events[0].detail_json).unwrap();
    assert!(detail.get("dice").is_some(), "{detail}");
    // So does the game read back from storage after a restart.
    fixture.server.kill();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(get_game(&mut client, &g).await, rolled);
}

/// Two servers on one database, as replicas share one: an action that
/// expects a version the game reached through the other server is judged
/// on that version, not refused against a stale copy in memory. (One
/// server per data folder is the rule with SQLite, so replicas are made
/// here of two data folders whose games.db is one file, by a symlink.)
#[tokio::test]
async fn a_server_reads_a_game_again_when_another_server_moved_it_on() {
    let a = start();
    let a_data = a.data.as_ref().unwrap().path();
    let b_data = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(a_data.join("games.db"), b_data.path().join("games.db")).unwrap();
    std::fs::copy(a_data.join("server.key"), b_data.path().join("server.key")).unwrap();
    let b = bg_tests::server::ServerProcess::start_with(
        env!("CARGO_BIN_EXE_backgammond").as_ref(),
        a.plugins.path(),
        b_data.path(),
        &[],
    );
    let mut on_a = connect(&a.server.addr).await;
    let mut on_b = connect(&b.addr).await;
    let mut g = new_game(&mut on_a, pb::MatchSettings::default()).await;
    assert_eq!(get_game(&mut on_b, &g).await, g.game, "b holds version 1");
    let mut watching_b = watch(&mut on_b, &g, 1).await;

    let play = g.game.legal_plays[0].notation.clone();
    g.game = on_a
        .r#move(with_token(move_request(&g, &play, "m1"), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(g.game.version, 2);
    let rolled = on_b.roll(roll(&g, "r1")).await.unwrap().into_inner();
    assert_eq!(rolled.version, 3);
    assert_eq!(
        rolled.board, g.game.board,
        "rolled from the position a left"
    );
    // B's watcher hears of a's move too, before b's roll.
    let mut next = async || {
        tokio::time::timeout(std::time::Duration::from_secs(10), watching_b.message())
            .await
            .expect("an update within 10 s")
            .unwrap()
            .unwrap()
    };
    let versions = [next().await, next().await];
    assert_eq!(versions.each_ref().map(|u| u.version), [2, 3]);
    assert_eq!(versions[0].events[0].kind, "moved");
    assert_eq!(versions[1].game.as_ref(), Some(&rolled));
}

/// Request ids are remembered for `--request-retention-seconds`: a retry
/// within it gets the first answer; one after it is judged afresh, and
/// its stale version still keeps it from being applied twice.
#[tokio::test]
async fn a_retry_after_the_retention_is_judged_afresh_and_applies_nothing() {
    let fixture = start_with_args(&["--request-retention-seconds", "3"]);
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let play = g.game.legal_plays[0].notation.clone();
    let request = move_request(&g, &play, "m1");
    let first = client
        .r#move(with_token(request.clone(), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    let again = client
        .r#move(with_token(request.clone(), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, first, "within the retention: the first answer");

    // Ids are stamped in whole seconds, so one is forgotten 3 to 4 s after
    // it was recorded; the sweep runs every 750 ms. Wait well past both.
    tokio::time::sleep(std::time::Duration::from_millis(6500)).await;
    let late = client
        .r#move(with_token(request, g.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(
        (late.code(), reason(&late).as_str()),
        (Code::Aborted, "VERSION_MISMATCH")
    );
    assert_eq!(get_game(&mut client, &g).await, first, "applied once");
}
