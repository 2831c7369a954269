//! Webhooks (issue 46), end to end: a real server process, a real HTTP
//! receiver (hyper) on a local port, signatures checked by the Standard
//! Webhooks reference library (the `standardwebhooks` crate, not the
//! server's signer), and the fleet feed as the independent list of what
//! should arrive. A receiver down then up, a server killed in the middle
//! of deliveries, an endpoint that never answers well, and a mistyped
//! file. Two replicas sharing one endpoint are in `replicas.rs`.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bg_api::v1 as pb;
use bg_tests::receiver::{Answer, Received, Receiver, free_port};
use common::*;
use tonic::Request;

const OPERATOR: &str = "operator-token-for-the-webhook-tests-0123456789";
/// A secret in the spec's form (32 bytes).
const SECRET: &str = "whsec_dGhlLXdlYmhvb2stdGVzdHMtc2VjcmV0LTMyLWJ5dGVz";

fn operator<T>(message: T) -> Request<T> {
    with_token(message, OPERATOR)
}

/// A folder with the operator's token, the secret, and a webhooks file
/// of one endpoint `hooks` at `url` with these extra lines.
fn configured(url: &str, extra: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let token = folder.path().join("operator.token");
    std::fs::write(&token, format!("{OPERATOR}\n")).unwrap();
    std::fs::write(folder.path().join("hooks.secret"), format!("{SECRET}\n")).unwrap();
    let file = folder.path().join("webhooks.toml");
    std::fs::write(
        &file,
        format!(
            "[[endpoint]]\nname = \"hooks\"\nurl = \"{url}\"\nsecret_file = \"hooks.secret\"\n{extra}\n"
        ),
    )
    .unwrap();
    (folder, token, file)
}

fn args<'a>(token: &'a Path, file: &'a Path) -> Vec<&'a str> {
    vec![
        "--operator-token-file",
        token.to_str().unwrap(),
        "--webhooks-file",
        file.to_str().unwrap(),
        "--new-games-per-second",
        "0",
    ]
}

/// Plays `n` one-point matches to their end (a resignation): three
/// events each (created, the game ended, the match ended).
async fn play_matches(client: &mut Client, n: usize, label: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let mut g = variant_game(
            client,
            pb::NewGameRequest {
                variant: "standard".into(),
                settings: Some(pb::MatchSettings {
                    match_length: 1,
                    ..Default::default()
                }),
                labels: [("run".to_string(), label.to_string())].into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        resign(client, &mut g).await;
        ids.push(g.id());
    }
    ids
}

/// The ids of the feed's first `count` events (from its oldest).
async fn feed_ids(client: &mut Client, count: usize) -> BTreeSet<String> {
    let mut feed = client
        .watch_matches(operator(pb::WatchMatchesRequest {
            from_oldest: true,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    next_match_events(&mut feed, count, "the feed")
        .await
        .into_iter()
        .map(|e| e.event_id)
        .collect()
}

/// Waits until the receiver has got every id of `ids` (at least once),
/// within `within`.
async fn received_all(
    receiver: &Receiver,
    ids: &BTreeSet<String>,
    within: Duration,
) -> Vec<Received> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let got = receiver.received();
        let delivered: BTreeSet<String> = got
            .iter()
            .filter(|r| r.answered != Answer::Status(503))
            .map(Received::id)
            .collect();
        if ids.is_subset(&delivered) {
            return got;
        }
        if tokio::time::Instant::now() > deadline {
            let missing: Vec<_> = ids.difference(&delivered).collect();
            panic!(
                "{} of {} events never delivered: {missing:?}",
                missing.len(),
                ids.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Verifies a request as a receiver would, with the spec's library.
fn verified(r: &Received) -> serde_json::Value {
    let webhook = standardwebhooks::Webhook::new(SECRET).unwrap();
    webhook
        .verify(&r.body, &r.headers)
        .unwrap_or_else(|e| panic!("{} does not verify: {e:?}", r.id()));
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn every_event_is_posted_as_the_feeds_json_and_verifies_with_the_reference_library() {
    let receiver = Receiver::start(Answer::Accept).await;
    let (_folder, token, file) = configured(&receiver.url("/hooks?token=abc"), "");
    let fixture = start_with_args(&args(&token, &file));
    let mut client = connect(&fixture.server.addr).await;
    let games = play_matches(&mut client, 12, "a").await;
    let expected = feed_ids(&mut client, games.len() * 3).await;
    let got = received_all(&receiver, &expected, Duration::from_secs(30)).await;
    let mut kinds: HashMap<String, usize> = HashMap::new();
    for r in &got {
        let body = verified(r);
        // The proto's JSON mapping of the feed's own event.
        assert_eq!(body["eventId"], r.id(), "{body}");
        assert!(games.contains(&body["gameId"].as_str().unwrap().to_string()));
        assert_eq!(body["labels"]["run"], "a");
        // A Timestamp as the JSON mapping writes it: RFC 3339, in UTC.
        assert!(body["time"].as_str().unwrap().ends_with('Z'), "{body}");
        assert!(body["version"].is_string(), "a uint64 is a string: {body}");
        *kinds
            .entry(body["kind"].as_str().unwrap().to_string())
            .or_default() += 1;
        if body["kind"] == "MATCH_EVENT_KIND_MATCH_ENDED" {
            assert_eq!(
                body["matchEnd"]["reason"], "MATCH_END_REASON_RESIGNATION",
                "{body}"
            );
        }
        assert_eq!(
            r.headers["content-type"], "application/json",
            "the body's type"
        );
    }
    for kind in [
        "MATCH_EVENT_KIND_CREATED",
        "MATCH_EVENT_KIND_GAME_ENDED",
        "MATCH_EVENT_KIND_MATCH_ENDED",
    ] {
        assert_eq!(kinds.get(kind), Some(&games.len()), "{kinds:?}");
    }
    // The operator sees each delivery delivered, and the endpoint's URL
    // without its query (a receiver's token may sit there).
    let listed = client
        .list_webhook_deliveries(operator(pb::ListWebhookDeliveriesRequest {
            page_size: 1000,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let endpoint = &listed.endpoints[0];
    assert_eq!(endpoint.url, receiver.url("/hooks"));
    assert_eq!(endpoint.delivered, expected.len() as u64, "{endpoint:?}");
    assert_eq!(endpoint.pending, 0);
    assert_eq!(listed.deliveries.len(), expected.len());
    assert!(listed.deliveries.iter().all(|d| {
        d.state == pb::DeliveryState::Delivered as i32 && d.attempts == 1 && d.last_error.is_empty()
    }));
}

#[tokio::test]
async fn a_receiver_down_for_a_while_gets_every_event_once_it_is_up() {
    let port = free_port();
    let (_folder, token, file) = configured(
        &format!("http://127.0.0.1:{port}/hooks?token=secret-in-the-query"),
        "first_retry_seconds = 0.2",
    );
    let fixture = start_with_args(&args(&token, &file));
    let mut client = connect(&fixture.server.addr).await;
    let games = play_matches(&mut client, 6, "down").await;
    let expected = feed_ids(&mut client, games.len() * 3).await;
    // Down: nothing listens. The deliveries wait, retried, with the
    // failure's reason for the operator.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let failing = loop {
        let listed = client
            .list_webhook_deliveries(operator(pb::ListWebhookDeliveriesRequest {
                state: pb::DeliveryState::Pending as i32,
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        if listed.deliveries.len() == expected.len()
            && listed.deliveries.iter().all(|d| d.attempts >= 2)
        {
            break listed;
        }
        assert!(tokio::time::Instant::now() < deadline, "{listed:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        failing.deliveries[0].last_error.contains("onnect"),
        "{:?}",
        failing.deliveries[0]
    );
    assert!(
        failing
            .deliveries
            .iter()
            .all(|d| !d.last_error.contains("secret-in-the-query")),
        "the URL's query shown: {:?}",
        failing.deliveries[0]
    );
    assert!(failing.endpoints[0].oldest_pending.is_some());
    // Up, failing: 503 is retried too.
    let receiver = Receiver::start_on(port, Answer::Status(503)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!receiver.received().is_empty(), "503s are attempts");
    // Up: everything arrives (retries back off, at most 0.2 s x 4^n).
    receiver.answer(Answer::Accept);
    let got = received_all(&receiver, &expected, Duration::from_secs(60)).await;
    for r in got.iter().filter(|r| r.answered == Answer::Accept) {
        verified(r);
    }
}

#[tokio::test]
async fn a_server_killed_in_the_middle_of_deliveries_loses_none() {
    // A slow receiver: every delivery is in flight for three seconds, so
    // the kill comes with deliveries claimed and not answered.
    let receiver = Receiver::start(Answer::After(Duration::from_secs(3))).await;
    let (_folder, token, file) = configured(
        &receiver.url("/hooks"),
        "timeout_seconds = 4\nlease_seconds = 5",
    );
    let mut fixture = start_with_args(&args(&token, &file));
    let mut client = connect(&fixture.server.addr).await;
    let games = play_matches(&mut client, 10, "killed").await;
    let expected = feed_ids(&mut client, games.len() * 3).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    fixture.server.kill();
    let before = receiver.received().len();
    assert!(
        before < expected.len(),
        "the kill came after everything was delivered"
    );
    receiver.answer(Answer::Accept);
    fixture.server.restart();
    // Claimed deliveries come due again when their lease runs out (5 s).
    let got = received_all(&receiver, &expected, Duration::from_secs(60)).await;
    for r in &got {
        verified(r);
    }
    // Those in flight at the kill were sent again: at least once, and a
    // second attempt shows.
    let mut client = connect(&fixture.server.addr).await;
    let listed = client
        .list_webhook_deliveries(operator(pb::ListWebhookDeliveriesRequest {
            page_size: 1000,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(
        listed.deliveries.iter().any(|d| d.attempts >= 2),
        "no delivery was in flight at the kill: {listed:?}"
    );
}

#[tokio::test]
async fn a_delivery_that_never_succeeds_is_given_up_after_its_retry_time() {
    let receiver = Receiver::start(Answer::Status(500)).await;
    let (_folder, token, file) = configured(
        &receiver.url("/hooks"),
        "first_retry_seconds = 0.2\nretry_for_seconds = 2\nkinds = [\"match_ended\"]",
    );
    let fixture = start_with_args(&args(&token, &file));
    let mut client = connect(&fixture.server.addr).await;
    let games = play_matches(&mut client, 1, "failing").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let listed = client
            .list_webhook_deliveries(operator(pb::ListWebhookDeliveriesRequest {
                game_id: games[0].clone(),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        if let [d] = listed.deliveries.as_slice()
            && d.state == pb::DeliveryState::Failed as i32
        {
            assert_eq!(
                d.kind,
                pb::MatchEventKind::MatchEnded as i32,
                "the kinds asked for only"
            );
            assert!(d.last_error.contains("500"), "{d:?}");
            assert!(d.attempts >= 3, "{d:?}");
            assert!(d.settled_at.is_some());
            assert_eq!(listed.endpoints[0].failed, 1);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{listed:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn only_the_operator_sees_deliveries_and_bad_filters_are_refused_by_field() {
    let receiver = Receiver::start(Answer::Accept).await;
    let (_folder, token, file) = configured(&receiver.url("/"), "");
    let fixture = start_with_args(&args(&token, &file));
    let mut client = connect(&fixture.server.addr).await;
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let seat = client
        .list_webhook_deliveries(with_token(
            pb::ListWebhookDeliveriesRequest::default(),
            g.token_of(pb::Seat::White as i32),
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&seat), "FLEET_ACCESS_DENIED");
    let none = client
        .list_webhook_deliveries(Request::new(pb::ListWebhookDeliveriesRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(reason(&none), "FLEET_ACCESS_DENIED");
    for (request, field) in [
        (
            pb::ListWebhookDeliveriesRequest {
                endpoint: "nope".into(),
                ..Default::default()
            },
            "endpoint",
        ),
        (
            pb::ListWebhookDeliveriesRequest {
                state: 9,
                ..Default::default()
            },
            "state",
        ),
        (
            pb::ListWebhookDeliveriesRequest {
                page_size: -1,
                ..Default::default()
            },
            "page_size",
        ),
        (
            pb::ListWebhookDeliveriesRequest {
                game_id: "x\u{7}".into(),
                ..Default::default()
            },
            "game_id",
        ),
    ] {
        let e = client
            .list_webhook_deliveries(operator(request))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{field}: {e:?}");
        assert!(e.message().contains(field), "{field}: {}", e.message());
    }
}

#[test]
fn a_mistyped_webhooks_file_stops_the_server_at_startup() {
    let plugins = bg_tests::plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    for (url, says) in [
        ("htps://site.example/hooks", "url"),
        ("https//site.example/hooks", "url"),
    ] {
        let (folder, _token, file) = configured(url, "");
        let data = folder.path().join("data");
        let (code, stderr) = refused_start_with(
            &data,
            plugins.path(),
            &["--webhooks-file", file.to_str().unwrap()],
        );
        assert_ne!(code, 0);
        assert!(
            stderr.contains(says) && stderr.contains("webhooks"),
            "{stderr}"
        );
    }
}
