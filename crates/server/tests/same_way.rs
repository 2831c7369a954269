//! Long nardy and Fevga through the API against the real server (issue
//! 39): both plugin files dropped into the folder of a running server
//! that had only the standard plugin, listed with their geometry, and
//! played to the end, their boards shown in white's numbering by the same
//! way geometry; a start position set up through NewGame; a shared point
//! refused.

mod common;

use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_tests::{copy_plugin, library_file_name};
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tonic::Code;

async fn variants(client: &mut Client) -> Vec<pb::Variant> {
    client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .unwrap()
        .into_inner()
        .variants
}

/// Plays random legal actions for whoever is to act until the match ends;
/// checks every board on the way (15 a side, no point shared).
async fn play_to_the_end(client: &mut Client, g: &mut Game, seed: u64) -> usize {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut actions = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        let sent = next_action(&g.game, &mut rng, false).expect("an action");
        let token = if g.game.to_act == pb::Seat::White as i32 {
            g.tokens[0].clone()
        } else {
            g.tokens[1].clone()
        };
        g.game = send(client, &sent, &token).await.unwrap();
        let board = g.game.board.clone().unwrap();
        let white: i32 = board.points.iter().filter(|&&n| n > 0).sum();
        let black: i32 = -board.points.iter().filter(|&&n| n < 0).sum::<i32>();
        assert_eq!(white + board.white_off as i32, 15, "{board:?}");
        assert_eq!(black + board.black_off as i32, 15, "{board:?}");
        assert_eq!((board.white_bar, board.black_bar), (0, 0));
        actions += 1;
        assert!(actions < 5_000, "the match ends");
    }
    actions
}

#[tokio::test]
async fn both_dropped_into_a_running_servers_folder_are_listed_and_played_to_the_end() {
    let fixture = start_with_plugins(&[("bg_standard", "libbg_standard.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(variants(&mut client).await.len(), 1);
    for lib in ["bg_long_nardy", "bg_fevga"] {
        copy_plugin(lib, &fixture.plugins.path().join(library_file_name(lib)));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        let listed = variants(&mut client).await;
        if listed.len() == 3 {
            break listed;
        }
        assert!(
            Instant::now() < deadline,
            "the dropped plugins are picked up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for name in ["long_nardy", "fevga"] {
        let v = listed.iter().find(|v| v.name == name).unwrap();
        assert_eq!(v.geometry, pb::Geometry::SameWay as i32, "{v:?}");
        assert!(v.auto_roll, "no cube by default: auto-roll");
        assert!(!v.cube || v.options.iter().any(|o| o.name == "cube"));
        assert!(!v.standard_board);
    }
    let standard = listed.iter().find(|v| v.name == "standard").unwrap();
    assert_eq!(standard.geometry, pb::Geometry::Opposed as i32);

    for (name, seed) in [("long_nardy", 39), ("fevga", 40)] {
        let settings = pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        };
        let mut g = variant_match(&mut client, name, settings).await;
        assert_eq!(g.game.geometry, pb::Geometry::SameWay as i32);
        // White's head is its 24; black's, its own 24, is white's 12.
        let start = g.game.board.clone().unwrap();
        let heads = (start.points[23], start.points[11]);
        assert!(
            heads == (15, -15) || g.game.version > 1,
            "{name}: heads on white's 24 and 12: {start:?}"
        );
        let actions = play_to_the_end(&mut client, &mut g, seed).await;
        assert!(actions > 20, "{name}: {actions} actions");
        let kinds: Vec<&str> = g.game.results.iter().map(|r| r.kind.as_str()).collect();
        let allowed: &[&str] = if name == "fevga" {
            &["single", "double"]
        } else {
            &["oin", "mars"]
        };
        assert!(
            kinds.iter().all(|k| allowed.contains(k)),
            "{name}: {kinds:?}"
        );
        // The match record: JSON (the moves in each mover's numbering);
        // gnubg's .mat is refused, saying why.
        let export = |format: pb::RecordFormat| pb::ExportMatchRequest {
            game_id: g.id(),
            format: format as i32,
            ..Default::default()
        };
        let json = client
            .export_match(export(pb::RecordFormat::Json))
            .await
            .unwrap()
            .into_inner();
        assert!(json.text.contains(name), "{name}: {}", json.text);
        let mat = client
            .export_match(export(pb::RecordFormat::Mat))
            .await
            .unwrap_err();
        assert_eq!(mat.code(), Code::FailedPrecondition, "{name}: {mat:?}");
    }
}

#[tokio::test]
async fn a_start_position_is_read_in_white_numbering_by_the_same_way_geometry() {
    let fixture = start_with_plugins(&[("bg_long_nardy", "libbg_long_nardy.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    // LN8's position: white 24×14, 13×1; black 12×14 (its head) and one
    // checker on white's 1 (its own 13).
    let mut points = vec![0i32; 24];
    points[23] = 14;
    points[12] = 1;
    points[11] = -14;
    points[0] = -1;
    let request = |points: Vec<i32>| pb::NewGameRequest {
        variant: "long_nardy".into(),
        settings: Some(pb::MatchSettings {
            auto_roll: Some(false),
            ..Default::default()
        }),
        start_board: Some(pb::Board {
            points,
            ..Default::default()
        }),
        ..Default::default()
    };
    let g = variant_game(&mut client, request(points.clone()))
        .await
        .unwrap();
    assert_eq!(g.game.board.as_ref().unwrap().points, points);
    assert_eq!(g.game.geometry, pb::Geometry::SameWay as i32);
    // No bar in this geometry: a checker there is refused.
    let mut on_bar = points.clone();
    on_bar[23] = 13;
    let refused = variant_game(
        &mut client,
        pb::NewGameRequest {
            start_board: Some(pb::Board {
                points: on_bar,
                white_bar: 1,
                ..Default::default()
            }),
            ..request(vec![])
        },
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("bar"), "{}", refused.message());
}
