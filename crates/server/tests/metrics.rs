//! `--metrics-listen`: Prometheus metrics of a real server process,
//! scraped over HTTP while a game is played, moving as the game does.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use bg_api::v1 as pb;
use common::*;
use tonic::Code;

/// The metrics page, as `name{labels}` → value (histogram buckets left out).
fn scrape(addr: &str) -> BTreeMap<String, f64> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    page.lines()
        .filter(|l| !l.starts_with('#') && !l.contains("_bucket"))
        .filter_map(|l| {
            let (name, value) = l.rsplit_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

fn value(metrics: &BTreeMap<String, f64>, name: &str) -> f64 {
    metrics.get(name).copied().unwrap_or(0.0)
}

#[tokio::test]
async fn the_counters_move_as_a_game_is_played() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics_addr = format!("127.0.0.1:{port}");
    let fixture = start_with_args(&["--metrics-listen", &metrics_addr]);
    let mut client = connect(&fixture.server.addr).await;

    let before = scrape(&metrics_addr);
    assert_eq!(
        value(&before, "backgammon_build_info{version=\"0.1.0\"}"),
        1.0,
        "{before:?}"
    );
    assert_eq!(
        value(
            &before,
            "backgammon_variant_loaded{variant=\"standard\",version=\"0.1.0\"}"
        ),
        1.0
    );

    let mut g = new_game(
        &mut client,
        pb::MatchSettings {
            match_length: 3,
            auto_roll: Some(false),
            ..Default::default()
        },
    )
    .await;
    // A watcher, open while the game is played.
    let watched = watch(&mut client, &g, 0).await;
    // Rolls and the first legal play, twenty actions.
    let mut rolls = 0.0;
    let mut moves = 0.0;
    for _ in 0..20 {
        let token = g.to_act_token().to_string();
        g.game = if g.game.phase == pb::Phase::Roll as i32 {
            rolls += 1.0;
            client.roll(roll(&g, "")).await.unwrap().into_inner()
        } else {
            moves += 1.0;
            let play = g.game.legal_plays[0].notation.clone();
            client
                .r#move(with_token(move_request(&g, &play, ""), &token))
                .await
                .unwrap()
                .into_inner()
        };
    }
    // The seat not to act is refused.
    let wrong = with_token(
        pb::RollRequest {
            read_mask: None,
            game_id: g.id(),
            expected_version: g.game.version,
            request_id: String::new(),
            dice_seed: String::new(),
        },
        g.token_of(other(g.game.to_act)),
    );
    let refused = client.roll(wrong).await.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);

    let during = scrape(&metrics_addr);
    let rpcs = |method: &str, code: &str| {
        value(
            &during,
            &format!("backgammon_rpcs_total{{method=\"{method}\",code=\"{code}\"}}"),
        )
    };
    assert_eq!(rpcs("NewGame", "OK"), 1.0, "{during:?}");
    assert_eq!(rpcs("Roll", "OK"), rolls, "{during:?}");
    assert_eq!(rpcs("Move", "OK"), moves, "{during:?}");
    assert_eq!(rpcs("Roll", "FAILED_PRECONDITION"), 1.0, "{during:?}");
    assert_eq!(
        value(
            &during,
            "backgammon_actions_committed_total{variant=\"standard\"}"
        ),
        g.game.version as f64,
        "every version stored: {during:?}"
    );
    assert!(value(&during, "backgammon_games_in_memory") >= 1.0);
    assert_eq!(value(&during, "backgammon_watchers"), 1.0, "{during:?}");
    assert!(value(&during, "backgammon_commit_group_size_count") >= g.game.version as f64 / 4.0);
    // Every COMMIT is timed (a group, or a write of a refused group
    // applied again alone), and takes time.
    assert!(
        value(&during, "backgammon_sqlite_wal_commit_seconds_count")
            >= value(&during, "backgammon_commit_group_size_count"),
        "{during:?}"
    );
    assert!(value(&during, "backgammon_sqlite_wal_commit_seconds_sum") > 0.0);
    assert_eq!(
        value(
            &during,
            "backgammon_rpc_duration_seconds_count{method=\"Move\"}"
        ),
        moves
    );

    // The watcher leaves: the gauge comes down.
    drop(watched);
    let mut watchers = 1.0;
    for _ in 0..100 {
        watchers = value(&scrape(&metrics_addr), "backgammon_watchers");
        if watchers == 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(watchers, 0.0);
}
