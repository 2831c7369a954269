//! Issue 47 in a real browser: the web client backgammond serves, driven
//! by `web/tests/browser.mjs` (npm's playwright-core with Debian's
//! chromium). This test starts the server with every shipped variant,
//! prepares matches through the API, runs the script, and checks what
//! the page showed against the server:
//! - a 1-point match against the computer, hints allowed, played to the
//!   end by clicking the board (a hint asked for once), the result shown
//!   being the server's, while a second page watching sees each move
//!   within a second;
//! - a clock running out while a page watches: the loss on time shown;
//! - the finished match's review: the graph, a mistake jumped to;
//! - every shipped variant's board, at the start and in play, read back
//!   from the page's picture, equal to GetGame's;
//! - gRPC-Web from the page's own origin works, and a page of another
//!   origin is refused (no CORS answer).
//!
//! Without chromium, node or `web/node_modules` the test says it is
//! skipped; CI installs them (scripts/web-setup) and sets
//! BACKGAMMON_REQUIRE_BROWSER so that it must run. `BLESS_SCREENSHOT=1`
//! keeps the page's picture for the README (docs/images/web-client.png).

mod common;

use std::path::{Path, PathBuf};

use bg_api::v1 as pb;
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

fn web_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web")
}

/// The browser and the script's packages, or why they are missing.
fn browser_ready() -> Result<PathBuf, String> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.exists() {
        return Err(format!("no browser at {}", chromium.display()));
    }
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        return Err("no node".into());
    }
    if !web_folder().join("node_modules/playwright-core").exists() {
        return Err("web/node_modules lacks playwright-core (cd web && npm ci)".into());
    }
    Ok(chromium)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_web_client_plays_watches_reviews_and_draws_every_variant_in_a_real_browser() {
    let chromium = match browser_ready() {
        Ok(path) => path,
        Err(why) if std::env::var_os("BACKGAMMON_REQUIRE_BROWSER").is_some() => {
            panic!("BACKGAMMON_REQUIRE_BROWSER is set, but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let fixture = start_shipped(&[
        "--clock-sweep-seconds",
        "0.1",
        "--new-games-per-second",
        "0",
    ]);
    let mut client = connect(&fixture.server.addr).await;
    // A match whose clock (8 s) runs out while the page watches it.
    let clock_game = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            settings: Some(pb::MatchSettings {
                match_length: 3,
                clock: Some(pb::ClockSettings {
                    reserve_ms: 8000,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // Each variant at its start and after some random actions.
    let mut rng = StdRng::seed_from_u64(4747);
    let mut boards = Vec::new();
    for variant in variants(&mut client).await {
        let mut g = default_match(&mut client, &variant.name).await;
        let shown = |g: &pb::Game| {
            let b = g.board.clone().unwrap_or_default();
            serde_json::json!({
                "variant": g.variant, "gameId": g.game_id, "version": g.version,
                "board": {"points": b.points, "whiteBar": b.white_bar, "blackBar": b.black_bar,
                          "whiteOff": b.white_off, "blackOff": b.black_off},
            })
        };
        boards.push(shown(&g.game));
        let start = g.id();
        let mut played = default_match(&mut client, &variant.name).await;
        for _ in 0..16 {
            let Some(next) = next_action(&played.game, &mut rng, false) else {
                break;
            };
            let token = played.to_act_token().to_string();
            played.game = send(&mut client, &next, &token).await.unwrap();
        }
        assert_ne!(played.id(), start);
        boards.push(shown(&played.game));
        g.game = played.game;
    }
    let folder = tempfile::tempdir().unwrap();
    let screenshot = if std::env::var_os("BLESS_SCREENSHOT").is_some() {
        web_folder().join("../docs/images/web-client.png")
    } else {
        folder.path().join("web-client.png")
    };
    let plan = folder.path().join("plan.json");
    std::fs::write(
        &plan,
        serde_json::json!({
            "clockGame": clock_game.id(),
            "boards": boards,
            "screenshot": screenshot,
        })
        .to_string(),
    )
    .unwrap();
    let ran = tokio::process::Command::new("node")
        .arg("tests/browser.mjs")
        .current_dir(web_folder())
        .env("BROWSER_SERVER", &fixture.server.addr)
        .env("BROWSER_PLAN", &plan)
        .env("CHROMIUM", &chromium)
        .output()
        .await
        .unwrap();
    let out = String::from_utf8_lossy(&ran.stdout).to_string();
    let err = String::from_utf8_lossy(&ran.stderr).to_string();
    assert!(
        ran.status.success(),
        "the browser script failed:\n{out}\n{err}"
    );
    eprintln!("{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let find = |key: &str| {
        lines
            .iter()
            .find_map(|l| l.get(key).cloned())
            .unwrap_or_else(|| panic!("no {key} line in\n{out}"))
    };
    // The result the page showed is the server's.
    let played = find("played");
    let game_id = played["gameId"].as_str().unwrap().to_string();
    let game = client
        .get_game(pb::GetGameRequest {
            game_id: game_id.clone(),
            read_mask: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(game.phase, pb::Phase::MatchOver as i32);
    let winner = if game.match_winner == pb::Seat::White as i32 {
        "White"
    } else {
        "Black"
    };
    let status = played["status"].as_str().unwrap();
    assert!(
        status.starts_with(&format!("Match over: {winner} wins")),
        "the page says {status:?}; the server's winner is {winner}"
    );
    assert!(played["clicks"].as_u64().unwrap() > 0, "{played}");
    assert!(
        !played["hint"].as_str().unwrap_or_default().is_empty(),
        "a hint shown: {played}"
    );
    let clock = find("clock");
    assert!(
        clock["status"].as_str().unwrap().contains("on time"),
        "{clock}"
    );
    let review = find("review");
    assert!(review["mistakes"].as_u64().unwrap() > 0, "{review}");
    let drawn = lines.iter().filter(|l| l.get("board").is_some()).count();
    assert_eq!(drawn, boards.len(), "every board drawn and checked");
    assert!(find("cors").as_str().unwrap().starts_with("refused"));
    assert!(screenshot.exists(), "the page's picture was taken");
}
