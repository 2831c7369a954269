//! Auto-roll through the API (issue 15): the server throws the dice for a
//! player whose turn begins when they cannot double, in the action that
//! began the turn, and shows the throw as its own event.

mod common;

use bg_api::v1 as pb;
use common::*;
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn kinds(events: &[pb::GameEvent]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

/// A cube action of the seat to act.
async fn cube(client: &mut Client, g: &Game, action: pb::DoubleAction) -> pb::Game {
    let request = pb::DoubleRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: action as i32,
    };
    client
        .double(with_token(request, g.to_act_token()))
        .await
        .unwrap()
        .into_inner()
}

/// The action of whoever must act: a random legal play, a random choice
/// of a decision. Auto-roll leaves nothing else to do in a game without a
/// cube.
async fn act(client: &mut Client, g: &Game, rng: &mut StdRng, request_id: &str) -> pb::Game {
    let token = g.to_act_token().to_string();
    match pb::Phase::try_from(g.game.phase).unwrap() {
        pb::Phase::Move => {
            let plays = &g.game.legal_plays;
            let play = plays[rng.random_range(0..plays.len())].notation.clone();
            client
                .r#move(with_token(move_request(g, &play, request_id), &token))
                .await
                .unwrap()
                .into_inner()
        }
        pb::Phase::Decision => {
            let choices = &g.game.decision.as_ref().unwrap().choices;
            let choice = choices[rng.random_range(0..choices.len())].clone();
            let request = pb::DecideRequest {
                read_mask: None,
                game_id: g.id(),
                expected_version: g.game.version,
                request_id: request_id.into(),
                choice,
            };
            client
                .decide(with_token(request, &token))
                .await
                .unwrap()
                .into_inner()
        }
        phase => panic!("auto-roll left the game in {phase:?}: {:?}", g.game),
    }
}

/// Each shipped variant, cubeless, plays a whole match with auto-roll on
/// (their default without a cube): no Roll call is ever needed, and every
/// answer to a play that ends a turn already holds the next player's dice.
#[tokio::test]
async fn a_whole_game_with_auto_roll_for_each_shipped_variant() {
    let fixture = start_all_variants();
    let mut client = connect(&fixture.server.addr).await;
    let listed = variants(&mut client).await;
    let default_of = |name: &str| listed.iter().find(|v| v.name == name).unwrap().auto_roll;
    // On by default where the variant's default game has no cube.
    assert!(!default_of("standard"));
    assert!(default_of("plakoto"), "Plakoto's cube is an option, off");
    assert!(default_of("trictrac"));
    let mut rng = StdRng::seed_from_u64(15);
    for variant in ["standard", "caucasian", "plakoto", "trictrac"] {
        // A cube_max of 0: no cube, so auto-roll is on by default.
        let settings = pb::MatchSettings {
            cube_max: Some(0),
            ..Default::default()
        };
        let mut g = variant_match(&mut client, variant, settings).await;
        assert_eq!(g.game.settings.as_ref().unwrap().auto_roll, Some(true));
        let mut actions = 0;
        let mut rolled_for = 0;
        while g.game.phase != pb::Phase::MatchOver as i32 {
            actions += 1;
            assert!(actions < 20_000, "{variant}: the game does not end");
            let next = act(&mut client, &g, &mut rng, "").await;
            assert_eq!(next.version, g.game.version + 1, "{variant}");
            assert_ne!(next.phase, pb::Phase::Roll as i32, "{variant}: {next:?}");
            if next.phase == pb::Phase::Move as i32 {
                assert!(next.dice.is_some() && !next.legal_plays.is_empty());
            }
            rolled_for += kinds(&next.last_events)
                .iter()
                .filter(|k| **k == "rolled")
                .count();
            g.game = next;
        }
        assert!(rolled_for > 0, "{variant}: nothing was rolled for");
    }
}

/// Match to 2: the first game ends on a dropped double (1-0), so the
/// second is the Crawford game: nobody can double, and auto-roll throws
/// for both players, from the first turn on.
#[tokio::test]
async fn in_the_crawford_game_auto_roll_rolls_for_both() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let settings = pb::MatchSettings {
        match_length: 2,
        auto_roll: Some(true),
        ..Default::default()
    };
    let mut g = new_game(&mut client, settings).await;
    let mut rng = StdRng::seed_from_u64(2);
    // The opening throw is played by the starter; the other player can
    // double (the cube is centred), so rolls by hand: auto-roll waits.
    g.game = act(&mut client, &g, &mut rng, "").await;
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    g.game = cube(&mut client, &g, pb::DoubleAction::Offer).await;
    g.game = cube(&mut client, &g, pb::DoubleAction::Drop).await;
    assert_eq!(g.game.game_number, 2);
    assert_eq!(g.game.crawford, pb::Crawford::ThisGame as i32);
    // The drop's answer already holds the starter's dice of game 2.
    assert_eq!(g.game.phase, pb::Phase::Move as i32, "{:?}", g.game);
    let mut turns = [0, 0];
    for _ in 0..20 {
        if g.game.game_number != 2 || g.game.phase == pb::Phase::MatchOver as i32 {
            break;
        }
        let mover = g.game.to_act;
        g.game = act(&mut client, &g, &mut rng, "").await;
        turns[(mover == pb::Seat::Black as i32) as usize] += 1;
        if g.game.game_number == 2 && g.game.phase != pb::Phase::MatchOver as i32 {
            assert_eq!(g.game.phase, pb::Phase::Move as i32, "{:?}", g.game);
            // The other player's dice, unless they could not move (their
            // turn passed at once, and the mover was rolled for again).
            if g.game.to_act == mover {
                assert!(kinds(&g.game.last_events).contains(&"passed"));
            }
        }
    }
    assert!(turns[0] > 0 && turns[1] > 0, "both players were rolled for");
}

/// In a money game with the cube, the player who owns it (and so can
/// redouble) rolls by hand; the one who gave it away is rolled for, from
/// the take on.
#[tokio::test]
async fn in_a_money_game_the_cube_owner_rolls_by_hand() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let settings = pb::MatchSettings {
        auto_roll: Some(true),
        ..Default::default()
    };
    let mut g = new_game(&mut client, settings).await;
    let mut rng = StdRng::seed_from_u64(3);
    let starter = g.game.to_act;
    g.game = act(&mut client, &g, &mut rng, "").await;
    // The cube is centred: the opponent may double, and is left to.
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    let doubler = g.game.to_act;
    assert_ne!(doubler, starter);
    g.game = cube(&mut client, &g, pb::DoubleAction::Offer).await;
    g.game = cube(&mut client, &g, pb::DoubleAction::Take).await;
    // The doubler cannot redouble: the take threw the doubler's dice.
    assert_eq!(
        kinds(&g.game.last_events)[..2],
        ["double_taken", "rolled"],
        "{:?}",
        g.game.last_events
    );
    assert_eq!(
        (g.game.phase, g.game.to_act),
        (pb::Phase::Move as i32, doubler)
    );
    // Some turns on: the owner (who may redouble) begins each turn by
    // hand; the doubler is always rolled for. (A turn with no legal play
    // passes at once, so either may come twice in a row.)
    let mut owner_turns = 0;
    for _ in 0..12 {
        if g.game.phase == pb::Phase::MatchOver as i32 {
            return;
        }
        if g.game.to_act == doubler {
            assert_eq!(g.game.phase, pb::Phase::Move as i32, "{:?}", g.game);
            g.game = act(&mut client, &g, &mut rng, "").await;
        } else {
            assert_eq!(g.game.to_act, starter);
            assert_eq!(g.game.phase, pb::Phase::Roll as i32, "{:?}", g.game);
            owner_turns += 1;
            g.game = client.roll(roll(&g, "")).await.unwrap().into_inner();
            if g.game.phase == pb::Phase::Move as i32 && g.game.to_act == starter {
                g.game = act(&mut client, &g, &mut rng, "").await;
            }
        }
    }
    assert!(owner_turns > 0);
}

/// A retried request whose action was auto-rolled gets its first answer,
/// the same dice included, byte for byte: right away, and after the game
/// has moved on several versions (the answer rebuilt from the log). So
/// does a retried NewGame.
#[tokio::test]
async fn retries_after_auto_rolled_actions_get_the_first_answer() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let new_game_request = pb::NewGameRequest {
        variant: "standard".into(),
        settings: Some(pb::MatchSettings {
            cube_max: Some(0),
            match_length: 7,
            ..Default::default()
        }),
        request_id: "0b6a2d3c-5e7f-4a1b-9c8d-7e6f5a4b3c2d".into(),
        ..Default::default()
    };
    let created = client
        .new_game(new_game_request.clone())
        .await
        .unwrap()
        .into_inner();
    let mut g = Game {
        game: created.game.clone().unwrap(),
        tokens: [created.white_token.clone(), created.black_token.clone()],
    };
    let mut rng = StdRng::seed_from_u64(4);
    let mut sent = Vec::new();
    for n in 0..6 {
        let request_id = format!("move-{n}");
        let request = g.game.clone();
        let answer = act(&mut client, &g, &mut rng, &request_id).await;
        sent.push((request, request_id, answer.clone()));
        g.game = answer;
    }
    // Every request again, oldest first: each gets its first answer.
    for (before, request_id, first) in &sent {
        let at = Game {
            game: before.clone(),
            tokens: g.tokens.clone(),
        };
        let mut again_rng = StdRng::seed_from_u64(0);
        // The same play as first: the one the first answer's log shows.
        let moved = first
            .last_events
            .iter()
            .find(|e| e.kind == "moved")
            .map(|e| {
                let detail: serde_json::Value = serde_json::from_str(&e.detail_json).unwrap();
                detail["play"].as_str().unwrap().to_string()
            });
        let again = match moved {
            Some(play) => client
                .r#move(with_token(
                    move_request(&at, &play, request_id),
                    at.to_act_token(),
                ))
                .await
                .unwrap()
                .into_inner(),
            None => act(&mut client, &at, &mut again_rng, request_id).await,
        };
        assert_eq!(again.encode_to_vec(), first.encode_to_vec(), "{request_id}");
    }
    let now = get_game(&mut client, &g).await;
    assert_eq!(now.version, g.game.version, "nothing applied twice");
    // NewGame, retried after the game moved on: the same game, as created.
    let again = client
        .new_game(new_game_request)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.encode_to_vec(), created.encode_to_vec());
}

/// WatchGame shows an auto-roll as its own "rolled" event, after the play
/// that began the turn, live and from the log.
#[tokio::test]
async fn watch_game_shows_the_auto_roll_as_its_own_event() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let settings = pb::MatchSettings {
        cube_max: Some(0),
        ..Default::default()
    };
    let mut g = new_game(&mut client, settings).await;
    let mut stream = watch(&mut client, &g, g.game.version).await;
    let mut rng = StdRng::seed_from_u64(5);
    let mover = g.game.to_act;
    g.game = act(&mut client, &g, &mut rng, "").await;
    let live = stream.message().await.unwrap().unwrap();
    assert_eq!(live.version, g.game.version);
    let live_kinds = kinds(&live.events);
    assert_eq!(live_kinds.first(), Some(&"moved"));
    let rolled = live
        .events
        .iter()
        .find(|e| e.kind == "rolled")
        .expect("the auto-roll is an event");
    assert_eq!(rolled.seat, other(mover));
    let detail: serde_json::Value = serde_json::from_str(&rolled.detail_json).unwrap();
    let dice = g.game.dice.unwrap();
    assert_eq!(
        (detail["dice"]["d1"].as_u64(), detail["dice"]["d2"].as_u64()),
        (Some(dice.die1 as u64), Some(dice.die2 as u64))
    );
    // The same from the log.
    let history = stored_history(&mut client, &g.id()).await;
    let logged = history.iter().find(|u| u.version == live.version).unwrap();
    assert_eq!(logged.events, live.events);
}

/// A game with options answers a retry with the same bytes as first, once
/// the game has moved on too: its options encode in key order.
#[tokio::test]
async fn a_retry_of_a_game_with_options_gets_the_same_bytes() {
    let fixture = start_plakoto_and_standard();
    let mut client = connect(&fixture.server.addr).await;
    let options = [
        ("mother_check", "end_of_turn"),
        ("bearoff_with_pinned", "allow"),
        ("mother_exception", "off"),
        ("opening", "use_die_off"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "plakoto".into(),
            options,
            settings: Some(pb::MatchSettings::default()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(g.game.options.len(), 4, "{:?}", g.game.options);
    let mut rng = StdRng::seed_from_u64(6);
    let before = g.game.clone();
    let token = g.to_act_token().to_string();
    let play = g.game.legal_plays[0].notation.clone();
    let request = move_request(&g, &play, "with-options");
    let first = client
        .r#move(with_token(request.clone(), &token))
        .await
        .unwrap()
        .into_inner();
    g.game = first.clone();
    for _ in 0..3 {
        if g.game.phase == pb::Phase::MatchOver as i32 {
            break;
        }
        g.game = act(&mut client, &g, &mut rng, "").await;
    }
    assert!(g.game.version > before.version + 1);
    let again = client
        .r#move(with_token(request, &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.encode_to_vec(), first.encode_to_vec());
}
