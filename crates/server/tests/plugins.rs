//! Plugins dropped into a running server's folder, and plugins that fail:
//! a real server process, real plugin files.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_tests::{copy_plugin, library_file_name};
use common::*;
use rand::SeedableRng;
use tonic::Code;

async fn wait_for_variant(client: &mut Client, name: &str) -> Duration {
    let start = Instant::now();
    while !variant_names(client).await.contains(&name.to_string()) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{name} never appeared"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

#[tokio::test]
async fn a_plugin_copied_into_the_folder_is_playable_without_a_restart() {
    let fixture = start();
    let plugins = &fixture.plugins;
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(variant_names(&mut client).await, ["standard"]);

    // A foreign file and a broken "plugin" first: reported and ignored.
    std::fs::write(plugins.path().join("notes.txt"), "hello").unwrap();
    std::fs::write(plugins.path().join("broken.so"), b"not an ELF file").unwrap();
    copy_plugin(
        "bg_caucasian",
        &plugins.path().join(library_file_name("bg_caucasian")),
    );
    wait_for_variant(&mut client, "caucasian").await;
    assert_eq!(variant_names(&mut client).await, ["caucasian", "standard"]);

    // The new variant plays a game through the API.
    let mut g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "caucasian".into(),
            options: HashMap::from([("caucasian_mode".to_string(), "strict".to_string())]),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(g.game.variant, "caucasian");
    // A retried NewGame with several options gets the same game and tokens
    // (the options map must not make the retry look like another request).
    let retried = pb::NewGameRequest {
        variant: "caucasian".into(),
        options: HashMap::from([
            ("caucasian_mode".to_string(), "strict".to_string()),
            (
                "caucasian_hit_bearoff".to_string(),
                "only_if_forced".to_string(),
            ),
            ("setup".to_string(), "nackgammon".to_string()),
        ]),
        request_id: "retry-with-options".into(),
        ..Default::default()
    };
    let first = client.new_game(retried.clone()).await.unwrap().into_inner();
    for _ in 0..3 {
        assert_eq!(
            client.new_game(retried.clone()).await.unwrap().into_inner(),
            first
        );
    }
    assert_eq!(
        g.game.options.get("caucasian_mode").map(String::as_str),
        Some("strict")
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..40 {
        if g.game.phase == pb::Phase::MatchOver as i32 {
            break;
        }
        step(&mut client, &mut g, &mut rng).await;
    }
    assert!(g.game.version > 20);
}

#[tokio::test]
async fn a_faulty_plugin_fails_only_its_own_games() {
    let fixture = start_with_plugins(
        &[
            ("bg_standard", "libbg_standard.so"),
            ("bg_test_faulty", "libbg_test_faulty.so"),
        ],
        &[],
    );
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let mut sound = new_game(&mut client, pb::MatchSettings::default()).await;

    // A game whose plugin panics cannot even start: INTERNAL, stable reason.
    let status = client
        .new_game(pb::NewGameRequest {
            variant: "faulty".into(),
            options: HashMap::from([("fault".to_string(), "panic".to_string())]),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Internal, "VARIANT_FAULT")
    );
    assert!(
        !status.message().contains("panicked"),
        "internals stay in the log: {}",
        status.message()
    );

    // A game whose plugin accepts an illegal result: the move fails, the
    // game is unchanged.
    let lying = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "faulty".into(),
            options: HashMap::from([("fault".to_string(), "accept_anything".to_string())]),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let play = lying.game.legal_plays[0].notation.clone();
    let status = client
        .r#move(with_token(
            move_request(&lying, &play, ""),
            lying.to_act_token(),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Internal, "VARIANT_FAULT")
    );
    let unchanged = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: lying.id(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(unchanged, lying.game);

    // Every other game goes on.
    for _ in 0..20 {
        step(&mut client, &mut sound, &mut rng).await;
    }
    assert_eq!(variant_names(&mut client).await.len(), 2);
}

#[tokio::test]
async fn plakoto_plays_through_the_api_with_pins_shown_and_the_winner_starting_again() {
    let fixture = start_with_plugins(&[("bg_plakoto", "libbg_plakoto.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let mut g = variant_match(
        &mut client,
        "plakoto",
        pb::MatchSettings {
            match_length: 3,
            // Rolled by hand: the test follows each throw.
            auto_roll: Some(false),
            ..Default::default()
        },
    )
    .await;
    // The opening decides the starter, who then throws both dice afresh.
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    assert!(
        !g.game.cube.unwrap().in_play,
        "no cube in Plakoto by default"
    );
    assert!(
        g.game.position_id.is_empty(),
        "Plakoto boards are not gnubg positions"
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let mut saw_pin = false;
    while g.game.results.is_empty() {
        step(&mut client, &mut g, &mut rng).await;
        saw_pin |= !g.game.board.as_ref().unwrap().pins.is_empty();
    }
    assert!(saw_pin, "a pinned checker shows on the board");
    let first = g.game.results[0].clone();
    if first.winner != pb::Seat::Unspecified as i32 && g.game.phase != pb::Phase::MatchOver as i32 {
        assert_eq!(g.game.turn, first.winner, "the previous winner starts");
        assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    }
}

/// Issue 11, item 2: the files of loaded plugins are the operator's to
/// overwrite, truncate, replace or delete while the server runs: none of
/// it can crash the server (each plugin runs from a private copy), and
/// the variant already loaded keeps working until a restart.
#[tokio::test]
async fn overwriting_a_loaded_plugin_file_never_crashes_the_server() {
    let fixture = start_with_plugins(
        &[
            ("bg_caucasian", "libbg_caucasian.so"),
            ("bg_standard", "libbg_standard.so"),
        ],
        &[],
    );
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    let mut g = variant_match(&mut client, "caucasian", pb::MatchSettings::default()).await;
    let file = fixture.plugins.path().join("libbg_caucasian.so");
    let standard = bg_tests::plugin_file("bg_standard");
    // In place, as `cp` does: same file, new bytes (this crashed the
    // server when it ran the file itself).
    std::fs::copy(&standard, &file).unwrap();
    let plays = |g: &mut Game| g.game.phase != pb::Phase::MatchOver as i32;
    for _ in 0..20 {
        if plays(&mut g) {
            step(&mut client, &mut g, &mut rng).await;
        }
    }
    // Truncated, garbage, deleted: still no crash, the variant still plays.
    std::fs::write(&file, b"").unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    std::fs::write(&file, vec![0x7f; 100_000]).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    std::fs::remove_file(&file).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    for _ in 0..20 {
        if plays(&mut g) {
            step(&mut client, &mut g, &mut rng).await;
        }
    }
    assert_eq!(variant_names(&mut client).await, ["caucasian", "standard"]);
    let again = variant_match(&mut client, "caucasian", pb::MatchSettings::default()).await;
    assert_eq!(again.game.variant, "caucasian");
}

/// Issue 36: a variant's own tallies and marks reach clients with no
/// change in the engine, the host or the API. The dropped-in test
/// variant declares a tally ("pips") and a marker ("blot");
/// ListVariants lists them with what they mean, and every snapshot of a
/// game carries them as the board says: each seat's pip count, a mark on
/// every lone checker (in white's numbering), and no tric-trac tally.
#[tokio::test]
async fn a_new_variant_s_own_tallies_and_marks_reach_the_api() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    copy_plugin(
        "bg_test_nackgammon",
        &fixture
            .plugins
            .path()
            .join(library_file_name("bg_test_nackgammon")),
    );
    wait_for_variant(&mut client, "nackgammon").await;
    let listed = variants(&mut client).await;
    let nack = listed.iter().find(|v| v.name == "nackgammon").unwrap();
    let names = |labels: &[pb::Label]| labels.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&nack.tallies), ["pips"]);
    assert_eq!(names(&nack.markers), ["blot"]);
    assert!(nack.markers[0].description.contains("lone checker"));
    let standard = listed.iter().find(|v| v.name == "standard").unwrap();
    assert!(standard.tallies.is_empty() && standard.markers.is_empty());

    let mut g = variant_match(&mut client, "nackgammon", pb::MatchSettings::default()).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(36);
    let mut blots_seen = 0;
    for _ in 0..60 {
        if g.game.phase == pb::Phase::MatchOver as i32 {
            break;
        }
        let shown = g.game.scoreboard.clone().expect("a scoreboard");
        let board = g.game.board.clone().unwrap();
        let white = |i: usize| u32::try_from(board.points[i].max(0)).unwrap();
        let black = |i: usize| u32::try_from((-board.points[i]).max(0)).unwrap();
        let pips = [
            (0..24).map(|i| (i as u32 + 1) * white(i)).sum::<u32>() + 25 * board.white_bar,
            (0..24).map(|i| (24 - i as u32) * black(i)).sum::<u32>() + 25 * board.black_bar,
        ];
        assert_eq!(shown.tallies.len(), 1);
        assert_eq!(shown.tallies[0].name, "pips");
        assert_eq!(
            [shown.tallies[0].white, shown.tallies[0].black],
            pips.map(i64::from)
        );
        let mut blots: Vec<(i32, u32)> = (0..24)
            .flat_map(|i| {
                let point = i as u32 + 1;
                let mut on = Vec::new();
                if white(i) == 1 {
                    on.push((pb::Seat::White as i32, point));
                }
                if black(i) == 1 {
                    on.push((pb::Seat::Black as i32, point));
                }
                on
            })
            .collect();
        let mut marked: Vec<(i32, u32)> = shown
            .markers
            .iter()
            .map(|m| {
                assert_eq!(m.name, "blot");
                (m.seat, m.point)
            })
            .collect();
        blots.sort_unstable();
        marked.sort_unstable();
        assert_eq!(marked, blots, "version {}", g.game.version);
        blots_seen += blots.len();
        assert_eq!(shown.white, None, "no tric-trac tally");
        step(&mut client, &mut g, &mut rng).await;
    }
    assert!(blots_seen > 0, "blots came up and were marked");
}

/// Issue 37: a plugin call that never returns holds a thread of its own,
/// never the service. Two moves whose plugin spins for ever (as many as
/// the machine's cores) are each answered VARIANT_FAULT at the deadline;
/// meanwhile health checks answer SERVING, a standard game is played,
/// and ListVariants says the variant is unhealthy, whose games are then
/// refused at once rather than sent to it again.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_call_that_never_returns_is_answered_at_the_deadline_and_the_service_goes_on() {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let fixture = start_with_plugins(
        &[
            ("bg_standard", "libbg_standard.so"),
            ("bg_test_faulty", "libbg_test_faulty.so"),
        ],
        &["--plugin-call-timeout-ms", "300"],
    );
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(37);
    let mut sound = new_game(&mut client, pb::MatchSettings::default()).await;
    let spinning = [
        faulty_game(&mut client, "spin").await,
        faulty_game(&mut client, "spin").await,
    ];
    let moves = spinning.iter().map(|g| {
        let addr = fixture.server.addr.clone();
        let request = with_token(
            move_request(g, &g.game.legal_plays[0].notation, "spin"),
            g.to_act_token(),
        );
        tokio::spawn(async move {
            // A connection each: the two calls are made at once.
            connect(&addr).await.r#move(request).await
        })
    });
    let moves: Vec<_> = moves.collect();
    for answer in moves {
        let status = tokio::time::timeout(Duration::from_secs(20), answer)
            .await
            .expect("answered, not hung")
            .unwrap()
            .unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::Internal, "VARIANT_FAULT"),
            "{status:?}"
        );
        assert!(status.message().contains("deadline"), "{status:?}");
    }
    // Both still spin, each in a thread of its own.
    assert!(
        unhealthy(&mut client, "faulty")
            .await
            .starts_with("2 calls"),
        "two calls spin"
    );
    let mut health = HealthClient::new(channel(&fixture.server.addr).await);
    let serving = health
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        serving.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    for _ in 0..10 {
        step(&mut client, &mut sound, &mut rng).await;
    }
    assert_eq!(unhealthy(&mut client, "standard").await, "");
    // Its games are refused at once, without calling it.
    let refused = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: spinning[0].id(),
        })
        .await
        .unwrap_err();
    // Refused before any call, and it will clear by itself: UNAVAILABLE,
    // with when to try again (the deadline: when a spinning call returns
    // is not known).
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::Unavailable, "VARIANT_UNAVAILABLE"),
        "{refused:?}"
    );
    assert!(refused.message().contains("unavailable"), "{refused:?}");
    assert_eq!(
        common::error_metadata(&refused, "retry_after_ms").as_deref(),
        Some("300"),
        "{refused:?}"
    );
}

/// A call past the deadline changes nothing: the game stays at its
/// version, the variant is healthy again once the call returns, and the
/// same move sent again is applied then, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_the_deadline_changes_nothing_and_the_game_plays_on_once_it_returns() {
    let fixture = start_with_plugins(
        &[("bg_test_faulty", "libbg_test_faulty.so")],
        &["--plugin-call-timeout-ms", "300"],
    );
    let mut client = connect(&fixture.server.addr).await;
    let g = faulty_game(&mut client, "slow_once").await;
    let play = g.game.legal_plays[0].notation.clone();
    let request = move_request(&g, &play, "slow-once");
    let status = client
        .r#move(with_token(request.clone(), g.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(reason(&status), "VARIANT_FAULT", "{status:?}");
    let start = std::time::Instant::now();
    while !unhealthy(&mut client, "faulty").await.is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never healthy again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let unchanged = get_game(&mut client, &g).await;
    assert_eq!(unchanged.version, g.game.version);
    assert_eq!(unchanged.board, g.game.board);
    let moved = client
        .r#move(with_token(request.clone(), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(moved.version, g.game.version + 1);
    // Sent a third time: the same answer, not a second move.
    let again = client
        .r#move(with_token(request, g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.version, moved.version);
    assert_eq!(
        stored_history(&mut client, &g.id()).await.len() as u64,
        moved.version
    );
}

/// More plugin work than the plugin threads can start within the
/// deadline: what waited past it without starting is answered
/// `UNAVAILABLE`, `OVERLOADED`, nothing changed, with no fault charged to
/// the plugin; every other move is applied or answered at the deadline.
#[tokio::test(flavor = "multi_thread")]
async fn work_that_could_not_start_within_the_deadline_is_refused_as_overloaded() {
    let fixture = start_with_plugins(
        &[("bg_test_faulty", "libbg_test_faulty.so")],
        &["--plugin-call-timeout-ms", "1000"],
    );
    let mut client = connect(&fixture.server.addr).await;
    // Every move takes 400 ms, on as many threads as the cores: far more
    // moves at once than can start within a second.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut games = Vec::new();
    for _ in 0..cores * 4 + 4 {
        games.push(faulty_game(&mut client, "slow").await);
    }
    let moves: Vec<_> = games
        .iter()
        .map(|g| {
            let addr = fixture.server.addr.clone();
            let request = with_token(
                move_request(g, &g.game.legal_plays[0].notation, "slow"),
                g.to_act_token(),
            );
            tokio::spawn(async move { connect(&addr).await.r#move(request).await })
        })
        .collect();
    let mut overloaded = Vec::new();
    for (g, answer) in games.iter().zip(moves) {
        match answer.await.unwrap() {
            Ok(moved) => assert_eq!(moved.into_inner().version, g.game.version + 1),
            Err(status) if reason(&status) == "OVERLOADED" => {
                assert_eq!(status.code(), Code::Unavailable);
                overloaded.push(g);
            }
            // A call past the deadline, or (once one is) a refusal until
            // it returns.
            Err(status) => assert!(
                ["VARIANT_FAULT", "VARIANT_UNAVAILABLE"].contains(&reason(&status).as_str()),
                "{status:?}"
            ),
        }
    }
    assert!(!overloaded.is_empty(), "some work could not start in time");
    // Nothing happened to those games, once the variant is free again.
    let start = std::time::Instant::now();
    while !unhealthy(&mut client, "faulty").await.is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never healthy again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for g in overloaded {
        let unchanged = get_game(&mut client, g).await;
        assert_eq!(unchanged.version, g.game.version);
    }
}

/// Hypergammon (issue 37's worked example) is played with three checkers
/// a side through the API: ListVariants says so, its Position IDs are
/// gnubg's hypergammon ones, a start board of three checkers a side is
/// taken and one of fifteen refused, and whole games end.
#[tokio::test]
async fn hypergammon_is_played_through_the_api_with_three_checkers_a_side() {
    let fixture = start_with_plugins(&[("bg_hypergammon", "libbg_hypergammon.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let listed = variants(&mut client).await;
    let hyper = listed.iter().find(|v| v.name == "hypergammon").unwrap();
    assert_eq!((hyper.checkers, hyper.standard_board), (3, true));

    let request = |start_board| pb::NewGameRequest {
        variant: "hypergammon".into(),
        start_board,
        ..Default::default()
    };
    let mut g = variant_game(&mut client, request(None)).await.unwrap();
    let start = g.game.board.clone().unwrap();
    assert_eq!(start.points[21..], [1, 1, 1], "white on its 22-24");
    assert_eq!(
        start.points[..3],
        [-1, -1, -1],
        "black on its 22-24 (white's 1-3)"
    );
    // The start as gnubg writes it (symmetric: either side on roll).
    assert_eq!(g.game.position_id, "AACgAgAAKgAAAA");
    let mut rng = rand::rngs::StdRng::seed_from_u64(41);
    let mut steps = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        step(&mut client, &mut g, &mut rng).await;
        steps += 1;
        assert!(steps < 2_000, "the game ends");
    }
    assert!(g.game.results.last().is_some_and(|r| r.points >= 1));

    let three_a_side = pb::Board {
        points: {
            let mut points = vec![0; 24];
            points[0] = 2;
            points[5] = 1;
            points[23] = -3;
            points
        },
        ..Default::default()
    };
    let taken = variant_game(&mut client, request(Some(three_a_side.clone())))
        .await
        .unwrap();
    assert_eq!(taken.game.board, Some(three_a_side));
    let fifteen = variant_game(&mut client, {
        let mut standard = request(None);
        standard.variant = "hypergammon".into();
        standard.start_board = Some(pb::Board {
            points: {
                let mut points = vec![0; 24];
                points[0] = 15;
                points[23] = -15;
                points
            },
            ..Default::default()
        });
        standard
    })
    .await
    .unwrap_err();
    assert_eq!(fifteen.code(), Code::InvalidArgument, "{fifteen:?}");
    assert!(fifteen.message().contains("the 3 a side"), "{fifteen:?}");
}
