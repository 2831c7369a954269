//! Issue 47: a board anyone can look at. `GET /games/{id}/board.svg` on
//! the gRPC port, from a real server process with every shipped variant:
//! the picture's own data attributes give back GetGame's board (each
//! point's checkers, pins, the bar, the checkers off) at the start and in
//! play, an earlier version is drawn as it stood, the same version is
//! the same bytes, and a bad id or version is a short plain answer.
//!
//! It also keeps docs/boards/: each variant's start board as the
//! renderer draws it, compared byte for byte (`BLESS_BOARDS=1` writes
//! them again after a deliberate change to the renderer).

mod common;

use bg_api::v1 as pb;
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

fn get(fixture: &Fixture, path: &str) -> (String, Vec<(String, String)>, Vec<u8>) {
    let addr = host_port(fixture);
    http(
        &addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

/// The value of `name="..."` right after `at` in `text`.
fn attribute(text: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let start = text.find(&key)? + key.len();
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_string())
}

/// The board as the picture says it: its points (white's numbering,
/// white positive), the bars, the checkers off, and the pinned seats.
fn board_of_svg(svg: &str) -> pb::Board {
    let mut board = pb::Board {
        points: vec![0; 24],
        ..Default::default()
    };
    for piece in svg.split("<g class=\"point\"").skip(1) {
        let head = &piece[..piece.find('>').unwrap()];
        let p: usize = attribute(head, "data-point").unwrap().parse().unwrap();
        let white: i32 = attribute(head, "data-white").unwrap().parse().unwrap();
        let black: i32 = attribute(head, "data-black").unwrap().parse().unwrap();
        assert!(white == 0 || black == 0, "point {p} holds both colours");
        board.points[p - 1] = white - black;
        if let Some(seat) = attribute(head, "data-pinned") {
            board.pins.push(pb::Pin {
                point: p as u32,
                pinned: if seat == "white" {
                    pb::Seat::White as i32
                } else {
                    pb::Seat::Black as i32
                },
            });
        }
    }
    let bar = svg.split("<g class=\"bar\"").nth(1).unwrap();
    let bar = &bar[..bar.find('>').unwrap()];
    board.white_bar = attribute(bar, "data-white").unwrap().parse().unwrap();
    board.black_bar = attribute(bar, "data-black").unwrap().parse().unwrap();
    for piece in svg.split("<g class=\"off\"").skip(1) {
        let head = &piece[..piece.find('>').unwrap()];
        let off: u32 = attribute(head, "data-off").unwrap().parse().unwrap();
        match attribute(head, "data-seat").unwrap().as_str() {
            "white" => board.white_off = off,
            _ => board.black_off = off,
        }
    }
    board
}

fn svg_of(fixture: &Fixture, path: &str) -> String {
    let (status, headers, body) = get(fixture, path);
    assert!(status.contains(" 200 "), "{path}: {status}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("image/svg+xml")),
        "{headers:?}"
    );
    String::from_utf8(body).unwrap()
}

fn sorted_pins(mut board: pb::Board) -> pb::Board {
    board.pins.sort_by_key(|p| p.point);
    board
}

#[tokio::test]
async fn every_shipped_variant_is_drawn_with_get_games_checkers_at_the_start_and_in_play() {
    let fixture = start_shipped(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let variants = variants(&mut client).await;
    assert_eq!(variants.len(), bg_tests::SHIPPED_PLUGINS.len());
    let mut rng = StdRng::seed_from_u64(47);
    for variant in &variants {
        let mut g = default_match(&mut client, &variant.name).await;
        let start = get_game(&mut client, &g).await;
        let path = format!("/games/{}/board.svg", g.id());
        let drawn = board_of_svg(&svg_of(&fixture, &path));
        assert_eq!(
            sorted_pins(drawn),
            sorted_pins(start.board.clone().unwrap()),
            "{}: the start",
            variant.name
        );
        // Into play: at least 8 actions, on until the checkers stand
        // elsewhere than at the start (tric-trac puts them back on their
        // talons now and then), at most 80.
        for played in 0..80 {
            if played >= 8 && g.game.board != start.board {
                break;
            }
            let Some(next) = next_action(&g.game, &mut rng, false) else {
                break;
            };
            let token = g.to_act_token().to_string();
            g.game = send(&mut client, &next, &token).await.unwrap();
        }
        let now = get_game(&mut client, &g).await;
        assert!(
            now.version > start.version,
            "{}: nothing played",
            variant.name
        );
        let svg = svg_of(&fixture, &path);
        assert_eq!(
            sorted_pins(board_of_svg(&svg)),
            sorted_pins(now.board.clone().unwrap()),
            "{}: in play, version {}",
            variant.name,
            now.version
        );
        assert_eq!(
            attribute(&svg, "data-version").unwrap(),
            now.version.to_string()
        );
        // An earlier version, as it stood; the same version, the same
        // bytes (and kept for good by caches).
        let first = format!("{path}?version={}", start.version);
        let then = svg_of(&fixture, &first);
        assert_eq!(
            sorted_pins(board_of_svg(&then)),
            sorted_pins(start.board.clone().unwrap()),
            "{}: version {}",
            variant.name,
            start.version
        );
        assert_eq!(then, svg_of(&fixture, &first), "{}", variant.name);
        let (_, headers, _) = get(&fixture, &first);
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "cache-control" && v.contains("immutable"))
        );
    }
}

#[tokio::test]
async fn a_bad_game_id_or_version_is_a_short_plain_answer() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let id = g.id();
    for (path, status) in [
        ("/games/no-such-game/board.svg".to_string(), " 404 "),
        (
            "/games/01900000-0000-7000-8000-000000000000/board.svg".to_string(),
            " 404 ",
        ),
        (format!("/games/{id}/board.svg?version=0"), " 400 "),
        (format!("/games/{id}/board.svg?version=999"), " 400 "),
        (format!("/games/{id}/board.svg?version=abc"), " 400 "),
        (format!("/games/{id}/board.svg?version=-1"), " 400 "),
    ] {
        let (line, headers, body) = get(&fixture, &path);
        assert!(line.contains(status), "{path}: {line}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "content-type" && v.starts_with("text/plain")),
            "{path}: {headers:?}"
        );
        let body = String::from_utf8(body).unwrap();
        assert!(
            body.len() < 300 && !body.contains("panicked"),
            "{path}: {body}"
        );
    }
}

/// docs/boards/VARIANT.svg: each shipped variant's start board, white to
/// roll, as the renderer draws it.
#[tokio::test]
async fn the_docs_show_each_variants_start_board_as_the_renderer_draws_it() {
    let fixture = start_shipped(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/boards");
    let bless = std::env::var_os("BLESS_BOARDS").is_some();
    for variant in variants(&mut client).await {
        let g = default_match(&mut client, &variant.name).await;
        let start = get_game(&mut client, &g).await;
        // The start alone: no id, dice, clock or history of this run.
        let shown = pb::Game {
            variant: start.variant.clone(),
            version: 1,
            game_number: 1,
            board: start.board.clone(),
            geometry: start.geometry,
            cube: start.cube,
            settings: start.settings,
            score: Some(pb::Score::default()),
            phase: pb::Phase::Roll as i32,
            turn: pb::Seat::White as i32,
            to_act: pb::Seat::White as i32,
            ..Default::default()
        };
        let svg = bg_board_svg::render(&shown, &variant);
        let file = folder.join(format!("{}.svg", variant.name));
        if bless {
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(&file, &svg).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (BLESS_BOARDS=1 cargo test -p bg-server --test boards writes it)",
                file.display()
            )
        });
        assert_eq!(
            kept,
            svg,
            "{} is not what the renderer draws now (BLESS_BOARDS=1 writes it again)",
            file.display()
        );
    }
}
