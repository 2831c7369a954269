//! Provably fair dice (docs/fair-dice.md) through a real server
//! process: the commitment published at NewGame, the seats' seeds, every
//! die derived from them, the seed kept secret until the match is over
//! and revealed then, and the refusals of seeds that cannot apply.

mod common;

use bg_api::v1 as pb;
use bg_fair_dice::{SeatSeed, SeatSeeds, ServerSeed};
use bg_tests::plugin_dir;
use bg_tests::server::ServerProcess;
use common::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tonic::{Code, Request};
use tonic_types::StatusExt;

fn is_over(game: &pb::Game) -> bool {
    game.phase == pb::Phase::MatchOver as i32
}

/// Everything a client can see of a game, as text: its Debug form holds
/// every string field verbatim.
fn shown(game: &pb::Game) -> String {
    format!("{game:?}")
}

/// Everything a client can see of a refusal: message, details, metadata.
fn shown_status(status: &tonic::Status) -> String {
    format!(
        "{} {} {:?}",
        status.message(),
        String::from_utf8_lossy(status.details()),
        status.metadata()
    )
}

/// Every update of a live WatchGame stream until it ends (the match is
/// over, or the server went away), as text.
/// (whether the match is over in it, the update as text).
fn collect_updates(
    mut stream: tonic::Streaming<pb::GameUpdate>,
) -> tokio::task::JoinHandle<Vec<(bool, String)>> {
    tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Ok(Some(update)) = stream.message().await {
            let over = update.game.as_ref().is_some_and(is_over);
            seen.push((over, format!("{update:?}")));
            if over {
                break;
            }
        }
        seen
    })
}

async fn export_json(client: &mut Client, game_id: &str) -> serde_json::Value {
    let record = client
        .export_match(pb::ExportMatchRequest {
            game_id: game_id.into(),
            format: pb::RecordFormat::Json as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    serde_json::from_str(&record.text).unwrap()
}

/// Every die a JSON record's actions threw, in order.
fn recorded_dice(record: &serde_json::Value) -> Vec<u8> {
    record["actions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["dice"].as_array().cloned().unwrap_or_default())
        .map(|d| d.as_u64().unwrap() as u8)
        .collect()
}

/// Refusals a caller can provoke mid-match: the other seat's token, a
/// stale version, a seed too long, a seed on a game whose seat gave one.
async fn provoke_refusals(client: &mut Client, g: &Game, seen: &mut Vec<String>) {
    let wrong_seat = with_token(
        pb::RollRequest {
            read_mask: None,
            game_id: g.id(),
            expected_version: g.game.version,
            request_id: String::new(),
            dice_seed: "x".into(),
        },
        g.token_of(other(g.game.to_act)),
    );
    let stale = with_token(
        pb::RollRequest {
            read_mask: None,
            game_id: g.id(),
            expected_version: g.game.version - 1,
            request_id: String::new(),
            dice_seed: String::new(),
        },
        g.to_act_token(),
    );
    let too_long = with_token(
        pb::MoveRequest {
            dice_seed: "y".repeat(bg_fair_dice::MAX_SEAT_SEED_BYTES + 1),
            ..move_request(g, "pass", "")
        },
        g.to_act_token(),
    );
    for refused in [
        client.roll(wrong_seat).await,
        client.roll(stale).await,
        client.r#move(too_long).await,
    ] {
        let status = refused.expect_err("refused");
        seen.push(shown_status(&status));
    }
    // None of them changed the game.
    assert_eq!(get_game(client, g).await.version, g.game.version);
}

/// A whole match, with a seed from each seat (white's at NewGame, black's
/// with its first roll), a SIGKILL and restart in the middle: every answer,
/// watched update, refusal, mid-match record and log line before the end
/// hides the server seed; the end reveals it, it hashes to the commitment,
/// and every die of the record is the one the seeds give.
#[tokio::test(flavor = "multi_thread")]
async fn a_whole_match_verifies_and_the_server_seed_shows_nowhere_before_it_ends() {
    let data = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
    let log = data.path().join("server.log");
    let mut server = ServerProcess::start_logging(
        env!("CARGO_BIN_EXE_backgammond").as_ref(),
        plugins.path(),
        data.path(),
        &[],
        "debug",
        &log,
    );
    let mut client = connect(&server.addr).await;
    let mut g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            settings: Some(pb::MatchSettings {
                match_length: 3,
                ..Default::default()
            }),
            white_seed: "white's seed".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let proof = g.game.verifiable_dice.clone().expect("on by default");
    assert_eq!(proof.scheme, bg_fair_dice::SCHEME);
    assert_eq!(proof.commitment.len(), 64, "{proof:?}");
    assert_eq!(proof.server_seed, "");
    assert_eq!(proof.white_seed, "white's seed");
    assert_eq!(proof.white_seed_from, 0);
    // The opening throw is the match's first two dice (or more, on ties).
    assert!(proof.dice_thrown >= 2, "{proof:?}");
    assert_eq!(
        g.game.settings.as_ref().and_then(|s| s.verifiable_dice),
        Some(true)
    );

    let mut seen = vec![shown(&g.game)];
    let mut watched = vec![collect_updates(watch(&mut client, &g, 0).await)];
    let mut rng = StdRng::seed_from_u64(7);
    let mut black_seed_from = None;
    let mut actions = 0;
    while !is_over(&g.game) {
        let Some(mut next) = next_action(&g.game, &mut rng, true) else {
            panic!("no action in phase {}", g.game.phase)
        };
        // Black's first roll by hand carries its seed.
        if let Sent::Roll(roll) = &mut next
            && black_seed_from.is_none()
            && g.game.to_act == pb::Seat::Black as i32
        {
            roll.dice_seed = "black's seed".into();
            black_seed_from = g.game.verifiable_dice.as_ref().map(|v| v.dice_thrown);
        }
        let token = g.to_act_token().to_string();
        g.game = match send(&mut client, &next, &token).await {
            Ok(game) => game,
            // The cube may not be available (its owner, a dead cube): roll.
            Err(s) if s.code() == Code::FailedPrecondition && matches!(next, Sent::Double(_)) => {
                seen.push(shown_status(&s));
                client.roll(roll(&g, "")).await.unwrap().into_inner()
            }
            Err(s) => panic!("{s:?}"),
        };
        actions += 1;
        if !is_over(&g.game) {
            let proof_now = g.game.verifiable_dice.as_ref().unwrap();
            assert_eq!(proof_now.commitment, proof.commitment);
            assert_eq!(proof_now.server_seed, "", "revealed before the end");
            seen.push(shown(&g.game));
            if actions % 17 == 0 {
                provoke_refusals(&mut client, &g, &mut seen).await;
                seen.push(export_json(&mut client, &g.id()).await.to_string());
            }
        }
        if actions == 40 {
            // Killed mid-match: the seed and the dice thrown survive.
            server.restart();
            client = connect(&server.addr).await;
            let again = get_game(&mut client, &g).await;
            assert_eq!(again, g.game);
            watched.push(collect_updates(
                watch(&mut client, &g, g.game.version).await,
            ));
        }
    }
    let black_seed_from = black_seed_from.expect("black rolled by hand");
    eprintln!("{actions} actions, black seed from die {black_seed_from}");

    // The end reveals the seed, and it is the one committed to.
    let revealed = g.game.verifiable_dice.clone().unwrap();
    let seed = ServerSeed::from_hex(&revealed.server_seed).expect("64 hex digits");
    assert_eq!(seed.commitment(), proof.commitment);
    assert_eq!(revealed.black_seed, "black's seed");
    assert_eq!(revealed.black_seed_from, black_seed_from);
    assert!(black_seed_from > 0);

    let hidden = |text: &str, what: &str| {
        assert!(
            !text.contains(&revealed.server_seed),
            "the server seed shows in {what}: {text}"
        );
    };
    for text in &seen {
        hidden(text, "an answer, a refusal or a record before the end");
    }
    let mut updates = 0;
    for watcher in watched {
        for (over, text) in watcher.await.unwrap() {
            if !over {
                hidden(&text, "a watched update before the end");
            }
            updates += 1;
        }
    }
    assert!(
        updates > actions / 2,
        "{updates} updates for {actions} actions"
    );
    server.kill();
    let logged = std::fs::read_to_string(&log).unwrap();
    // Logged at debug level: the test would see a leak.
    assert!(logged.contains("action applied"), "{logged}");
    hidden(&logged, "the server's log");

    // Every die of the record, in order, is the one the seeds give.
    server.restart();
    let mut client = connect(&server.addr).await;
    let record = export_json(&mut client, &g.id()).await;
    let dice = recorded_dice(&record);
    assert_eq!(dice.len() as u64, revealed.dice_thrown);
    assert_eq!(
        record["verifiable_dice"]["server_seed"],
        revealed.server_seed
    );
    let seeds = SeatSeeds {
        white: SeatSeed {
            seed: "white's seed".into(),
            from: 0,
        },
        black: SeatSeed {
            seed: "black's seed".into(),
            from: black_seed_from,
        },
    };
    assert_eq!(
        bg_fair_dice::verify(&proof.commitment, &revealed.server_seed, &seeds, &dice),
        Ok(())
    );
    // Black's seed counted: without it, the dice after it differ.
    let without = SeatSeeds {
        black: SeatSeed::default(),
        ..seeds.clone()
    };
    assert!(
        bg_fair_dice::verify(&proof.commitment, &revealed.server_seed, &without, &dice).is_err()
    );
}

/// A move of the first legal play, carrying `seed`.
fn seeded_move(g: &Game, seed: &str, request_id: &str) -> Request<pb::MoveRequest> {
    let request = pb::MoveRequest {
        dice_seed: seed.into(),
        ..move_request(g, &g.game.legal_plays[0].notation, request_id)
    };
    with_token(request, g.to_act_token())
}

/// Seeds where they cannot apply are refused, naming the field, and
/// change nothing; a seed given with a move (a seat auto-roll throws for)
/// applies from the next die; a retried seeded roll gets its first answer,
/// and the same id with another seed is another request.
#[tokio::test(flavor = "multi_thread")]
async fn a_seed_that_cannot_apply_is_refused_and_changes_nothing() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let invalid = |status: tonic::Status, field: &str| {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        let named = status
            .get_details_error_info()
            .and_then(|i| i.metadata.get("field").cloned());
        assert_eq!(named.as_deref(), Some(field), "{status:?}");
    };

    // Off: no proof, and no seed taken.
    let off = pb::MatchSettings {
        verifiable_dice: Some(false),
        ..Default::default()
    };
    let refused = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            settings: Some(off),
            white_seed: "w".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    invalid(refused, "white_seed");
    let plain = new_game(&mut client, off).await;
    assert_eq!(plain.game.verifiable_dice, None);
    assert_eq!(
        plain.game.settings.as_ref().and_then(|s| s.verifiable_dice),
        Some(false)
    );
    let refused = client
        .r#move(seeded_move(&plain, "s", ""))
        .await
        .unwrap_err();
    invalid(refused, "dice_seed");
    assert_eq!(get_game(&mut client, &plain).await, plain.game);

    // A seed longer than 256 bytes.
    let refused = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            black_seed: "b".repeat(257),
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    invalid(refused, "black_seed");

    // The opening throw is the starter's roll: a Roll with a seed cannot
    // carry it (the dice are thrown), nor can a seat give a second seed.
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "standard".into(),
            white_seed: "w".into(),
            black_seed: "b".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let mut seeded_roll = roll(&g, "");
    seeded_roll.get_mut().dice_seed = "late".into();
    let refused = client.roll(seeded_roll).await.unwrap_err();
    invalid(refused, "dice_seed");
    let refused = client
        .r#move(seeded_move(&g, "again", ""))
        .await
        .unwrap_err();
    // It names the seat that gave a seed already.
    let seat = if g.game.to_act == pb::Seat::White as i32 {
        "white has given a seed already"
    } else {
        "black has given a seed already"
    };
    assert!(refused.message().contains(seat), "{refused:?}");
    invalid(refused, "dice_seed");
    assert_eq!(get_game(&mut client, &g).await, g.game);

    // Cubeless: auto-roll throws for the next seat, so the mover gives its
    // seed with its move; it applies from the next die, the opponent's.
    let cubeless = pb::MatchSettings {
        cube_max: Some(0),
        ..Default::default()
    };
    let g = new_game(&mut client, cubeless).await;
    let before = g.game.verifiable_dice.clone().unwrap();
    let moved = client
        .r#move(seeded_move(&g, "mover's seed", "seeded-move"))
        .await
        .unwrap()
        .into_inner();
    let after = moved.verifiable_dice.clone().unwrap();
    let (seed, from) = if g.game.to_act == pb::Seat::White as i32 {
        (&after.white_seed, after.white_seed_from)
    } else {
        (&after.black_seed, after.black_seed_from)
    };
    assert_eq!(seed, "mover's seed");
    assert_eq!(from, before.dice_thrown);
    // Auto-roll threw the opponent's dice with it.
    assert_eq!(after.dice_thrown, before.dice_thrown + 2, "{after:?}");
    // The retry gets the first answer; another seed under that id is
    // another request.
    let retried = client
        .r#move(seeded_move(&g, "mover's seed", "seeded-move"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(retried, moved);
    let refused = client
        .r#move(seeded_move(&g, "another seed", "seeded-move"))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "REQUEST_ID_REUSED", "{refused:?}");
}

/// A match left part-way reveals its seed too: Abandon (by the seat not
/// on turn) ends it at once, the game in progress conceded by the leaver,
/// the other seat the winner by forfeit, and every die thrown verifies;
/// nothing more can be done in it.
#[tokio::test(flavor = "multi_thread")]
async fn an_abandoned_match_ends_at_once_and_reveals_its_seed() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(
        &mut client,
        pb::MatchSettings {
            match_length: 5,
            ..Default::default()
        },
    )
    .await;
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..6 {
        step(&mut client, &mut g, &mut rng).await;
    }
    let leaver = other(g.game.to_act);
    let abandon = |g: &Game, token: &str| {
        with_token(
            pb::AbandonRequest {
                read_mask: None,
                game_id: g.id(),
                expected_version: g.game.version,
                request_id: String::new(),
            },
            token,
        )
    };
    let over = client
        .abandon(abandon(&g, g.token_of(leaver)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(over.phase, pb::Phase::MatchOver as i32);
    assert_eq!(over.version, g.game.version + 1);
    assert_eq!(over.match_winner, other(leaver), "{over:?}");
    let conceded = over.results.last().expect("the game in progress, conceded");
    assert_eq!(conceded.winner, other(leaver), "{over:?}");
    assert_eq!(conceded.reason, "resigned", "{over:?}");
    let kinds: Vec<&str> = over.last_events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["match_abandoned", "game_ended", "match_ended"]);

    let proof = over.verifiable_dice.clone().unwrap();
    let record = export_json(&mut client, &g.id()).await;
    let dice = recorded_dice(&record);
    assert_eq!(dice.len() as u64, proof.dice_thrown);
    assert_eq!(
        bg_fair_dice::verify(
            &proof.commitment,
            &proof.server_seed,
            &SeatSeeds::default(),
            &dice
        ),
        Ok(())
    );
    g.game = over;
    let refused = client
        .abandon(abandon(&g, g.token_of(other(leaver))))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "MATCH_OVER", "{refused:?}");
}

/// A retry answered once the game has moved on is the game rebuilt at its
/// version from the log: the dice thrown by then, and no seed a seat gave
/// only later, byte for byte the first answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_late_retry_shows_the_seeds_as_they_were() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let cubeless = pb::MatchSettings {
        cube_max: Some(0),
        ..Default::default()
    };
    let mut g = new_game(&mut client, cubeless).await;
    let first_request = move_request(&g, &g.game.legal_plays[0].notation, "first-move");
    let first = client
        .r#move(with_token(first_request.clone(), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    let first_token = g.to_act_token().to_string();
    g.game = first.clone();
    // The other seat gives its seed with its move, and plays on a while.
    g.game = client
        .r#move(seeded_move(&g, "later seed", ""))
        .await
        .unwrap()
        .into_inner();
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..4 {
        if is_over(&g.game) {
            break;
        }
        step(&mut client, &mut g, &mut rng).await;
    }
    let seeded = g.game.verifiable_dice.clone().unwrap();
    assert!(
        seeded.white_seed == "later seed" || seeded.black_seed == "later seed",
        "{seeded:?}"
    );
    let retried = client
        .r#move(with_token(first_request, &first_token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(retried, first);
    let then = retried.verifiable_dice.unwrap();
    assert_eq!(
        (then.white_seed.as_str(), then.black_seed.as_str()),
        ("", "")
    );
    assert!(then.dice_thrown < seeded.dice_thrown);
}

/// A write that fails gives no throw again: a Roll refused by a full disk
/// (a file-size limit on the server process), sent again once there is
/// room, gets the dice the sequence holds for those die numbers, whether
/// the failed write was stored or not (its outcome may be unknown: the
/// retry carries the same request id).
#[tokio::test(flavor = "multi_thread")]
async fn a_roll_refused_by_a_full_disk_throws_the_same_dice_when_sent_again() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    // Enough writes that the database and its log are past one page.
    let mut rng = StdRng::seed_from_u64(11);
    let mut warm = new_game(&mut client, pb::MatchSettings::default()).await;
    for _ in 0..20 {
        step(&mut client, &mut warm, &mut rng).await;
    }
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    g.game = client
        .r#move(with_token(
            move_request(&g, &g.game.legal_plays[0].notation, ""),
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(g.game.phase, pb::Phase::Roll as i32);
    let before = g.game.verifiable_dice.clone().unwrap().dice_thrown;

    let pid = fixture.server.pid().expect("running");
    set_file_size_limit(pid, 4096);
    let refused = client
        .roll(roll(&g, "roll-on-a-full-disk"))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "STORAGE_UNAVAILABLE", "{refused:?}");
    set_file_size_limit(pid, libc::RLIM_INFINITY);
    let mut rolled = None;
    for _ in 0..100 {
        match client.roll(roll(&g, "roll-on-a-full-disk")).await {
            Ok(answer) => {
                rolled = Some(answer.into_inner());
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    let rolled = rolled.expect("the roll goes through once there is room");
    let dice = rolled.dice.expect("dice thrown");
    assert_eq!(
        rolled.verifiable_dice.as_ref().unwrap().dice_thrown,
        before + 2
    );

    // The match abandoned, its seed revealed: the dice are the sequence's.
    g.game = rolled;
    let over = client
        .abandon(with_token(
            pb::AbandonRequest {
                read_mask: None,
                game_id: g.id(),
                expected_version: g.game.version,
                request_id: String::new(),
            },
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    let proof = over.verifiable_dice.unwrap();
    let seed = ServerSeed::from_hex(&proof.server_seed).unwrap();
    let seeds = SeatSeeds::default();
    assert_eq!(
        (dice.die1 as u8, dice.die2 as u8),
        (
            bg_fair_dice::die(&seed, &seeds, before),
            bg_fair_dice::die(&seed, &seeds, before + 1)
        )
    );
    let record = export_json(&mut client, &g.id()).await;
    let all = recorded_dice(&record);
    assert_eq!(
        bg_fair_dice::verify(&proof.commitment, &proof.server_seed, &seeds, &all),
        Ok(())
    );
}
