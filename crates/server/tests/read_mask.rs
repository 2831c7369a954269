//! Partial answers through the API: GetGame and the actions take a
//! `read_mask` naming the Game fields to send. A masked answer must be
//! the whole answer with the other fields cleared, whatever the mask, in
//! every phase of every variant; a mask naming no field is refused before
//! anything applies; a retry may ask for other fields than its first
//! sending; each watcher gets the game cut to its own mask; LegalPlays, built from part
//! of the game, says what the whole game says.

mod common;

use bg_api::v1 as pb;
use bg_server::convert::to_api::keep_only;
use bg_server::fields::{Fields, GAME_FIELDS, PLAY_FIELDS};
use common::*;
use prost_types::FieldMask;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::Code;

fn mask(paths: &[&str]) -> FieldMask {
    FieldMask {
        paths: paths.iter().map(|p| p.to_string()).collect(),
    }
}

/// A random mask: some of Game's fields, and now and then only part of
/// the legal plays.
fn random_mask(rng: &mut StdRng) -> FieldMask {
    let mut paths: Vec<String> = GAME_FIELDS
        .iter()
        .filter(|_| rng.random_bool(0.3))
        .map(|(name, _)| name.to_string())
        .collect();
    if rng.random_bool(0.5) {
        paths.retain(|p| p != "legal_plays");
        for (part, _) in PLAY_FIELDS {
            if rng.random_bool(0.5) {
                paths.push(format!("legal_plays.{part}"));
            }
        }
    }
    FieldMask { paths }
}

fn with_mask(sent: Sent, read_mask: FieldMask) -> Sent {
    let read_mask = Some(read_mask);
    match sent {
        Sent::Roll(r) => Sent::Roll(pb::RollRequest { read_mask, ..r }),
        Sent::Move(m) => Sent::Move(pb::MoveRequest { read_mask, ..m }),
        Sent::Double(d) => Sent::Double(pb::DoubleRequest { read_mask, ..d }),
        Sent::Decide(d) => Sent::Decide(pb::DecideRequest { read_mask, ..d }),
    }
}

fn part_of(whole: &pb::Game, read_mask: &FieldMask) -> pb::Game {
    let mut game = whole.clone();
    keep_only(&mut game, &Fields::from_mask(Some(read_mask)).unwrap());
    game
}

/// A tric-trac decision (hold or go), chosen at random, with a mask.
async fn decide(client: &mut Client, g: &Game, rng: &mut StdRng, read_mask: FieldMask) -> pb::Game {
    let choices = &g.game.decision.as_ref().unwrap().choices;
    let request = pb::DecideRequest {
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        choice: choices[rng.random_range(0..choices.len())].clone(),
        read_mask: Some(read_mask),
    };
    client
        .decide(with_token(request, g.to_act_token()))
        .await
        .unwrap()
        .into_inner()
}

/// Plays a match with a random mask on every action, to its end or for
/// `actions`; each answer must be the game as GetGame then gives it
/// whole, with only the fields asked for. Returns how many answers were
/// compared.
async fn play_masked(client: &mut Client, mut g: Game, rng: &mut StdRng, actions: usize) -> usize {
    let mut compared = 0;
    while compared < actions && g.game.phase != pb::Phase::MatchOver as i32 {
        let read_mask = random_mask(rng);
        let answer = if g.game.phase == pb::Phase::Decision as i32 {
            decide(client, &g, rng, read_mask.clone()).await
        } else {
            // A double now and then, when the cube is the seat's to use
            // (and far below any limit).
            let may_double = g.game.cube.is_some_and(|c| {
                c.value < 16
                    && (c.owner == pb::Seat::Unspecified as i32 || c.owner == g.game.to_act)
            });
            let sent = next_action(&g.game, rng, may_double).expect("an action to take");
            let token = g.to_act_token().to_string();
            send(client, &with_mask(sent, read_mask.clone()), &token)
                .await
                .unwrap()
        };
        let whole = get_game(client, &g).await;
        assert_eq!(answer, part_of(&whole, &read_mask), "mask {read_mask:?}");
        // GetGame with the same mask gives the same part.
        let read = client
            .get_game(pb::GetGameRequest {
                game_id: g.id(),
                read_mask: Some(read_mask.clone()),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(read, answer, "GetGame, mask {read_mask:?}");
        // LegalPlays, which builds only what it sends, says what the whole
        // game says.
        let plays = client
            .legal_plays(pb::LegalPlaysRequest { game_id: g.id() })
            .await
            .unwrap()
            .into_inner();
        let moving = whole.phase == pb::Phase::Move as i32;
        let expected = pb::LegalPlaysResponse {
            version: whole.version,
            seat: if moving { whole.turn } else { 0 },
            dice: whole.dice,
            plays: whole.legal_plays.clone(),
        };
        assert_eq!(plays, expected);
        g.game = whole;
        compared += 1;
    }
    compared
}

#[tokio::test]
async fn a_masked_answer_is_the_whole_answer_with_only_the_fields_asked_for() {
    let fixture = start_all_variants();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(157);
    let mut compared = 0;
    for variant in ["standard", "caucasian", "plakoto", "trictrac"] {
        for auto_roll in [false, true] {
            // A money game (with the cube where the variant has one),
            // played to its end (random plays make long games: a few
            // hundred actions; tric-trac's partie is longer still: its
            // first 300 actions).
            let settings = pb::MatchSettings {
                auto_roll: Some(auto_roll),
                ..Default::default()
            };
            let g = variant_match(&mut client, variant, settings).await;
            let cap = if variant == "trictrac" { 300 } else { 3000 };
            let played = play_masked(&mut client, g.clone(), &mut rng, cap).await;
            let last = get_game(&mut client, &g).await;
            let over = last.phase == pb::Phase::MatchOver as i32;
            assert!(
                over || variant == "trictrac",
                "{variant}: the match did not end in {played} actions: {last:?}"
            );
            compared += played;
        }
    }
    assert!(compared > 400, "only {compared} answers compared");
}

#[tokio::test]
async fn a_mask_naming_no_field_is_refused_and_nothing_is_applied() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut rng = StdRng::seed_from_u64(7);
    let sent = next_action(&g.game, &mut rng, false).unwrap();
    for paths in [
        &["nope"][..],
        &["version", "legal_plays.nope"],
        &["board.points"],
        &[""],
    ] {
        let masked = with_mask(sent.clone(), mask(paths));
        let refused = send(&mut client, &masked, g.to_act_token())
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{paths:?}");
        assert!(
            refused.message().contains(paths[paths.len() - 1]),
            "{refused:?}"
        );
        let read = client
            .get_game(pb::GetGameRequest {
                game_id: g.id(),
                read_mask: Some(mask(paths)),
            })
            .await
            .unwrap_err();
        assert_eq!(read.code(), Code::InvalidArgument, "{paths:?}");
    }
    // Nothing applied: the game is where it was, and the request id is
    // free for the roll, which then applies once.
    assert_eq!(get_game(&mut client, &g).await, g.game);
    let applied = send(&mut client, &sent, g.to_act_token()).await.unwrap();
    assert_eq!(applied.version, g.game.version + 1);
    let again = send(&mut client, &sent, g.to_act_token()).await.unwrap();
    assert_eq!(again, applied);
}

#[tokio::test]
async fn a_retry_with_another_mask_gets_the_first_answer_in_those_fields() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(15);
    let mut g = new_game(
        &mut client,
        pb::MatchSettings {
            auto_roll: Some(true),
            cube_max: Some(0),
            ..Default::default()
        },
    )
    .await;
    let first_mask = mask(&["version", "dice", "legal_plays.notation"]);
    let sent = next_action(&g.game, &mut rng, false).unwrap();
    let token = g.to_act_token().to_string();
    let first = send(
        &mut client,
        &with_mask(sent.clone(), first_mask.clone()),
        &token,
    )
    .await
    .unwrap();
    let whole_then = get_game(&mut client, &g).await;
    assert_eq!(first, part_of(&whole_then, &first_mask));
    // The game moves on several versions.
    g.game = whole_then.clone();
    for _ in 0..4 {
        let next = next_action(&g.game, &mut rng, false).unwrap();
        let token = g.to_act_token().to_string();
        g.game = send(&mut client, &next, &token).await.unwrap();
    }
    assert!(g.game.version >= whole_then.version + 4);
    // Sent again with another mask, and with none: the first answer, in
    // the fields each asks for.
    let other_mask = mask(&["game_id", "board", "last_events", "legal_plays.moves"]);
    let again = send(
        &mut client,
        &with_mask(sent.clone(), other_mask.clone()),
        &token,
    )
    .await
    .unwrap();
    assert_eq!(again, part_of(&whole_then, &other_mask));
    let again_whole = send(&mut client, &sent, &token).await.unwrap();
    assert_eq!(again_whole, whole_then);
    // And it applied once.
    assert_eq!(get_game(&mut client, &g).await.version, g.game.version);
}

#[tokio::test]
async fn watchers_get_the_game_cut_to_their_own_mask_whatever_the_player_asks_for() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(24);
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    // One watcher with no mask from the version now (live updates only),
    // one with its own from the start (its stored updates are cut too).
    let mut updates = watch(&mut client, &g, g.game.version).await;
    let watcher_mask = mask(&["version", "dice", "legal_plays.notation"]);
    let mut cut = client
        .watch_game(pb::WatchGameRequest {
            game_id: g.id(),
            from_version: 0,
            read_mask: Some(watcher_mask.clone()),
        })
        .await
        .unwrap()
        .into_inner();
    // The stored update of the game now, cut.
    let cut_now = cut.message().await.unwrap().unwrap();
    assert_eq!(cut_now.version, g.game.version);
    assert_eq!(cut_now.game, Some(part_of(&g.game, &watcher_mask)));
    for _ in 0..6 {
        let sent = next_action(&g.game, &mut rng, false).unwrap();
        let token = g.to_act_token().to_string();
        let answer = send(&mut client, &with_mask(sent, mask(&["version"])), &token)
            .await
            .unwrap();
        let update = updates.message().await.unwrap().unwrap();
        let cut_update = cut.message().await.unwrap().unwrap();
        let whole = get_game(&mut client, &g).await;
        assert_eq!(
            answer,
            pb::Game {
                version: whole.version,
                ..Default::default()
            }
        );
        assert_eq!(update.version, whole.version);
        assert_eq!(update.game, Some(whole.clone()));
        assert_eq!(cut_update.version, whole.version);
        assert_eq!(cut_update.events, update.events);
        assert_eq!(cut_update.game, Some(part_of(&whole, &watcher_mask)));
        g.game = whole;
    }
    // A mask naming no field is refused.
    let refused = client
        .watch_game(pb::WatchGameRequest {
            game_id: g.id(),
            from_version: 0,
            read_mask: Some(mask(&["version", "no_such_field"])),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
}
