//! The fleet (issue 46), end to end on SQLite: a real server process,
//! gRPC over a socket. Labels and player ids kept with a match and
//! refused by field when malformed; ListMatches paging through thousands
//! of matches while others are created and played, none repeated or
//! skipped; the feed resumed from any cursor, across a restart, giving
//! every event once in each match's version order; who may list and
//! follow. The replicas' side (PostgreSQL, racing writers, a replica
//! killed) is in `replicas.rs`.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bg_api::v1 as pb;
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tonic::{Code, Request};

/// The operator's token these servers are started with.
const OPERATOR: &str = "operator-token-for-the-fleet-tests-0123456789";

/// A server with the standard plugin, an operator token, no limit on
/// NewGame, and these arguments.
fn start_fleet(args: &[&str]) -> (Fixture, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    let token = folder.path().join("operator.token");
    std::fs::write(&token, format!("{OPERATOR}\n")).unwrap();
    let mut all = vec![
        "--operator-token-file",
        token.to_str().unwrap(),
        "--new-games-per-second",
        "0",
    ];
    all.extend_from_slice(args);
    (start_with_args(&all), folder)
}

fn operator<T>(message: T) -> Request<T> {
    with_token(message, OPERATOR)
}

fn labelled(labels: &[(&str, &str)], players: [&str; 2]) -> pb::NewGameRequest {
    pb::NewGameRequest {
        variant: "standard".into(),
        settings: Some(pb::MatchSettings {
            match_length: 1,
            ..Default::default()
        }),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        players: Some(pb::Players {
            white: players[0].into(),
            black: players[1].into(),
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn labels_and_players_are_kept_with_the_match_and_refused_by_field() {
    let (fixture, _folder) = start_fleet(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let g = variant_game(
        &mut client,
        labelled(
            &[("tournament", "spring-26"), ("site.example/table", "7")],
            ["ann", "bob"],
        ),
    )
    .await
    .unwrap();
    let shown = get_game(&mut client, &g).await;
    assert_eq!(
        shown.labels.get("tournament").map(String::as_str),
        Some("spring-26")
    );
    assert_eq!(shown.labels.len(), 2);
    assert_eq!(shown.players.as_ref().unwrap().black, "bob");
    assert_eq!(shown.state, pb::MatchState::InProgress as i32);
    assert!(shown.created_at.is_some() && shown.updated_at.is_some());
    // Kept by the export.
    let record = json_record(&mut client, &g).await;
    assert!(
        record.contains("spring-26") && record.contains("\"ann\""),
        "{record}"
    );
    for (labels, players) in [
        (vec![("a b", "x")], ["", ""]),
        (vec![("k", "not a value")], ["", ""]),
        (vec![("-k", "v")], ["", ""]),
    ] {
        let refused = variant_game(&mut client, labelled(&labels, players))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
        assert_eq!(error_metadata(&refused, "field").as_deref(), Some("labels"));
    }
    let many: Vec<(String, String)> = (0..33).map(|i| (format!("k{i}"), "v".into())).collect();
    let refused = variant_game(
        &mut client,
        pb::NewGameRequest {
            labels: many.into_iter().collect(),
            ..labelled(&[], ["", ""])
        },
    )
    .await
    .unwrap_err();
    assert_eq!(error_metadata(&refused, "field").as_deref(), Some("labels"));
    let long = "p".repeat(129);
    let refused = variant_game(&mut client, labelled(&[], [&long, ""]))
        .await
        .unwrap_err();
    assert_eq!(
        error_metadata(&refused, "field").as_deref(),
        Some("players")
    );
}

/// Every page of a list, from the first, with this request's filter.
async fn list_all(client: &mut Client, request: pb::ListMatchesRequest) -> Vec<pb::Game> {
    let mut all = Vec::new();
    let mut token = String::new();
    loop {
        let page = client
            .list_matches(operator(pb::ListMatchesRequest {
                page_token: token.clone(),
                ..request.clone()
            }))
            .await
            .unwrap()
            .into_inner();
        all.extend(page.matches);
        if page.next_page_token.is_empty() {
            return all;
        }
        token = page.next_page_token;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn list_matches_pages_through_ten_thousand_matches_while_others_are_made_and_played() {
    let (fixture, _folder) = start_fleet(&[]);
    let addr = fixture.server.addr.clone();
    let mut client = connect(&addr).await;
    // 10,000 matches, by 16 callers at once; a tenth of them labelled.
    let mut made = Vec::new();
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let addr = addr.clone();
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&addr).await;
            let mut ids = Vec::new();
            for i in 0..625 {
                let labels: &[(&str, &str)] = if i % 10 == 0 {
                    &[("tier", "gold")]
                } else {
                    &[]
                };
                let g = variant_game(
                    &mut client,
                    labelled(labels, [&format!("w{worker}"), "house"]),
                )
                .await
                .unwrap();
                ids.push((g.id(), i % 10 == 0));
            }
            ids
        }));
    }
    for t in tasks {
        made.extend(t.await.unwrap());
    }
    assert_eq!(made.len(), 10_000);
    // While the list is paged, others are created and played.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = {
        let (addr, stop) = (addr.clone(), stop.clone());
        tokio::spawn(async move {
            let mut client = connect(&addr).await;
            let mut rng = StdRng::seed_from_u64(46);
            let mut created = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut g = variant_game(&mut client, labelled(&[], ["late", "house"]))
                    .await
                    .unwrap();
                created += 1;
                for _ in 0..6 {
                    if g.game.phase == pb::Phase::MatchOver as i32 {
                        break;
                    }
                    step(&mut client, &mut g, &mut rng).await;
                }
            }
            created
        })
    };
    for descending in [false, true] {
        let listed = list_all(
            &mut client,
            pb::ListMatchesRequest {
                page_size: 337,
                descending,
                filter: Some(pb::MatchFilter {
                    player: "house".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await;
        let ids: Vec<&str> = listed.iter().map(|g| g.game_id.as_str()).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "no match repeated");
        for (id, _) in &made {
            assert!(
                unique.contains(id.as_str()),
                "{id} skipped (descending {descending})"
            );
        }
        // In creation order, as asked.
        let times: Vec<i64> = listed
            .iter()
            .map(|g| {
                let t = g.created_at.unwrap();
                t.seconds * 1_000_000 + i64::from(t.nanos / 1000)
            })
            .collect();
        let sorted = times.windows(2).all(|w| {
            if descending {
                w[0] >= w[1]
            } else {
                w[0] <= w[1]
            }
        });
        assert!(sorted, "in order");
        assert!(
            listed
                .iter()
                .all(|g| g.variant == "standard" && g.version >= 1)
        );
    }
    // A label selector: exactly the gold matches of the first 10,000.
    let gold = list_all(
        &mut client,
        pb::ListMatchesRequest {
            page_size: 1000,
            filter: Some(pb::MatchFilter {
                label_selector: "tier=gold".into(),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await;
    let expected: HashSet<&str> = made
        .iter()
        .filter(|(_, g)| *g)
        .map(|(id, _)| id.as_str())
        .collect();
    let got: HashSet<&str> = gold.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(got, expected);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(busy.await.unwrap() > 0, "matches were made meanwhile");
}

#[tokio::test]
async fn a_list_s_filters_pages_and_mask_and_its_bad_requests() {
    let (fixture, _folder) = start_fleet(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(7);
    let mut a = variant_game(&mut client, labelled(&[("t", "a")], ["ann", "bob"]))
        .await
        .unwrap();
    let b = variant_game(&mut client, labelled(&[("t", "b")], ["bob", "cat"]))
        .await
        .unwrap();
    // a plays to its end.
    while a.game.phase != pb::Phase::MatchOver as i32 {
        step(&mut client, &mut a, &mut rng).await;
    }
    let ids = |games: &[pb::Game]| games.iter().map(|g| g.game_id.clone()).collect::<Vec<_>>();
    let with = |filter: pb::MatchFilter| pb::ListMatchesRequest {
        filter: Some(filter),
        ..Default::default()
    };
    let finished = list_all(
        &mut client,
        with(pb::MatchFilter {
            states: vec![pb::MatchState::Finished as i32],
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(ids(&finished), [a.id()]);
    assert_eq!(finished[0].state, pb::MatchState::Finished as i32);
    let bobs = list_all(
        &mut client,
        with(pb::MatchFilter {
            player: "bob".into(),
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(ids(&bobs), [a.id(), b.id()]);
    // Whose move: b waits for the seat it shows.
    let to_act = b.game.to_act;
    let waiting = if to_act == pb::Seat::White as i32 {
        "bob"
    } else {
        "cat"
    };
    let yours = list_all(
        &mut client,
        with(pb::MatchFilter {
            to_act_player: waiting.into(),
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(ids(&yours), [b.id()]);
    // By update, newest first: a was changed after b was created.
    let updated = list_all(
        &mut client,
        pb::ListMatchesRequest {
            order_by: pb::MatchOrder::Updated as i32,
            descending: true,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(ids(&updated), [a.id(), b.id()]);
    // The summary by default; a read mask reads the match whole.
    let summary = &bobs[1];
    assert!(summary.board.is_none() && summary.labels.contains_key("t"));
    let whole = list_all(
        &mut client,
        pb::ListMatchesRequest {
            read_mask: Some(prost_types::FieldMask {
                paths: vec!["game_id".into(), "board".into(), "labels".into()],
            }),
            ..with(pb::MatchFilter {
                label_selector: "t in (b)".into(),
                ..Default::default()
            })
        },
    )
    .await;
    assert_eq!(ids(&whole), [b.id()]);
    assert!(
        whole[0].board.is_some() && whole[0].version == 0,
        "only the fields asked for"
    );
    // Bad requests, named by field.
    let page = client
        .list_matches(operator(pb::ListMatchesRequest {
            page_size: 1,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(!page.next_page_token.is_empty());
    for (request, field) in [
        (
            pb::ListMatchesRequest {
                page_size: -1,
                ..Default::default()
            },
            "page_size",
        ),
        (
            with(pb::MatchFilter {
                label_selector: "a in b".into(),
                ..Default::default()
            }),
            "label_selector",
        ),
        (
            pb::ListMatchesRequest {
                page_token: "forged".into(),
                ..Default::default()
            },
            "page_token",
        ),
        // The token of another query.
        (
            pb::ListMatchesRequest {
                page_token: page.next_page_token.clone(),
                descending: true,
                ..Default::default()
            },
            "page_token",
        ),
        (
            pb::ListMatchesRequest {
                read_mask: Some(prost_types::FieldMask {
                    paths: vec!["nope".into()],
                }),
                ..Default::default()
            },
            "read_mask",
        ),
    ] {
        let refused = client.list_matches(operator(request)).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
        assert_eq!(
            error_metadata(&refused, "field").as_deref(),
            Some(field),
            "{refused:?}"
        );
    }
}

#[tokio::test]
async fn listing_and_following_need_the_operator_s_token_never_a_seat_s() {
    let (fixture, _folder) = start_fleet(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let g = variant_game(&mut client, labelled(&[], ["", ""]))
        .await
        .unwrap();
    let seat = &g.tokens[0];
    let refused = [
        client
            .list_matches(Request::new(pb::ListMatchesRequest::default()))
            .await
            .unwrap_err(),
        client
            .list_matches(with_token(pb::ListMatchesRequest::default(), seat))
            .await
            .unwrap_err(),
        client
            .watch_matches(with_token(pb::WatchMatchesRequest::default(), seat))
            .await
            .unwrap_err(),
        client
            .watch_matches(Request::new(pb::WatchMatchesRequest::default()))
            .await
            .unwrap_err(),
    ];
    for status in refused {
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::PermissionDenied, "FLEET_ACCESS_DENIED"),
            "{status:?}"
        );
    }
    assert!(
        client
            .list_matches(operator(pb::ListMatchesRequest::default()))
            .await
            .is_ok()
    );
}

/// The events of a feed until `count` came.
async fn take(stream: &mut tonic::Streaming<pb::MatchEvent>, count: usize) -> Vec<pb::MatchEvent> {
    next_match_events(stream, count, "the feed").await
}

async fn feed(
    client: &mut Client,
    cursor: &str,
    kinds: &[pb::MatchEventKind],
) -> tonic::Streaming<pb::MatchEvent> {
    client
        .watch_matches(operator(pb::WatchMatchesRequest {
            cursor: cursor.into(),
            from_oldest: cursor.is_empty(),
            kinds: kinds.iter().map(|k| *k as i32).collect(),
            filter: None,
        }))
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_feed_resumed_from_any_cursor_gives_every_event_once_in_order_even_after_a_restart() {
    let (mut fixture, _folder) = start_fleet(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(4646);
    let every = [
        pb::MatchEventKind::Created,
        pb::MatchEventKind::GameEnded,
        pb::MatchEventKind::MatchEnded,
        pb::MatchEventKind::Action,
    ];
    // Ten one-point matches played to their end.
    let mut games = Vec::new();
    for i in 0..10 {
        let mut g = variant_game(&mut client, labelled(&[("n", &i.to_string())], ["", ""]))
            .await
            .unwrap();
        while g.game.phase != pb::Phase::MatchOver as i32 {
            step(&mut client, &mut g, &mut rng).await;
        }
        games.push(g);
    }
    // Every version is an event; each match adds its game's and its end.
    let total: u64 = games.iter().map(|g| g.game.version + 2).sum();
    let all = take(&mut feed(&mut client, "", &every).await, total as usize).await;
    let check = |events: &[pb::MatchEvent]| {
        let ids: HashSet<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(ids.len(), events.len(), "no event twice");
        let mut last: HashMap<&str, u64> = HashMap::new();
        for e in events {
            let v = last.entry(e.game_id.as_str()).or_default();
            assert!(e.version >= *v, "each match's versions in order");
            *v = e.version;
        }
    };
    check(&all);
    let ends: Vec<&pb::MatchEvent> = all
        .iter()
        .filter(|e| e.kind == pb::MatchEventKind::MatchEnded as i32)
        .collect();
    assert_eq!(ends.len(), 10);
    for e in &ends {
        let Some(pb::match_event::Detail::MatchEnd(end)) = &e.detail else {
            panic!("{e:?}")
        };
        let g = games.iter().find(|g| g.id() == e.game_id).unwrap();
        assert_eq!(end.winner, g.game.match_winner);
        assert!(e.labels.contains_key("n"));
    }
    // Resumed after any event, it gives exactly the rest, in order.
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    for i in [0, 1, 17, all.len() / 2, all.len() - 2] {
        let rest = take(
            &mut feed(&mut client, &all[i].cursor, &every).await,
            all.len() - i - 1,
        )
        .await;
        let expected: Vec<&str> = all[i + 1..].iter().map(|e| e.event_id.as_str()).collect();
        let got: Vec<&str> = rest.iter().map(|e| e.event_id.as_str()).collect();
        assert_eq!(got, expected, "resumed after event {i}");
    }
    // The default kinds leave the actions out; a new match comes live.
    let mut live = feed(&mut client, &all[all.len() - 1].cursor, &[]).await;
    let g = variant_game(&mut client, labelled(&[], ["ann", ""]))
        .await
        .unwrap();
    let created = take(&mut live, 1).await;
    assert_eq!(created[0].game_id, g.id());
    assert_eq!(created[0].kind, pb::MatchEventKind::Created as i32);
    assert_eq!(created[0].players.as_ref().unwrap().white, "ann");
    // A forged cursor is refused.
    let forged = client
        .watch_matches(operator(pb::WatchMatchesRequest {
            cursor: format!("{}x", &all[0].cursor),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(error_metadata(&forged, "field").as_deref(), Some("cursor"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cursor_older_than_the_feed_s_window_is_refused_with_the_oldest_one_held() {
    let (fixture, _folder) = start_fleet(&["--feed-window-seconds", "1"]);
    let mut client = connect(&fixture.server.addr).await;
    variant_game(&mut client, labelled(&[], ["", ""]))
        .await
        .unwrap();
    let first = take(&mut feed(&mut client, "", &[]).await, 1).await;
    // A match after it: the events after the cursor, trimmed with it.
    variant_game(&mut client, labelled(&[], ["", ""]))
        .await
        .unwrap();
    // Past the window, and a trim (every 250 ms at this window).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    variant_game(&mut client, labelled(&[], ["", ""]))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let expired = client
        .watch_matches(operator(pb::WatchMatchesRequest {
            cursor: first[0].cursor.clone(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(
        (expired.code(), reason(&expired).as_str()),
        (Code::FailedPrecondition, "CURSOR_EXPIRED"),
        "{expired:?}"
    );
    let oldest = error_metadata(&expired, "oldest_cursor").expect("the oldest cursor");
    // From it, the feed goes on.
    let mut resumed = feed(&mut client, &oldest, &[]).await;
    variant_game(&mut client, labelled(&[], ["", ""]))
        .await
        .unwrap();
    assert!(!take(&mut resumed, 1).await.is_empty());
}
