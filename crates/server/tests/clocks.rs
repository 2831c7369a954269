//! Match clocks, end to end (issue 35): the server owns the time of a
//! match. A seat that never acts loses on time without any call; an
//! action after the deadline is refused and the timeout applied; a move
//! racing the deadline and the timeout never both apply; clocks due
//! while the server was down fall once it is back; bad settings create
//! nothing.

mod common;

use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::Code;
use tonic_types::StatusExt;

fn with_clock(match_length: u32, clock: pb::ClockSettings) -> pb::MatchSettings {
    pb::MatchSettings {
        match_length,
        clock: Some(clock),
        ..Default::default()
    }
}

fn reserve(ms: u64) -> pb::ClockSettings {
    pb::ClockSettings {
        reserve_ms: ms,
        ..Default::default()
    }
}

/// What the running seat's turn had cost when the clock was shown:
/// `as_of` less `running_since`, in milliseconds.
fn took_ms(clock: &pb::Clock) -> u64 {
    let ms = |t: &prost_types::Timestamp| t.seconds as u64 * 1000 + t.nanos as u64 / 1_000_000;
    ms(&clock.as_of.unwrap()) - ms(&clock.running_since.unwrap())
}

/// How many `kind` events the game's stored history holds.
async fn events_of(client: &mut Client, g: &Game, kind: &str) -> usize {
    stored_history(client, &g.id())
        .await
        .iter()
        .flat_map(|u| u.events.iter())
        .filter(|e| e.kind == kind)
        .count()
}

/// Waits (up to 10 s) until the game's match is over; returns it.
async fn over(client: &mut Client, g: &Game) -> pb::Game {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let game = get_game(client, g).await;
        if game.phase == pb::Phase::MatchOver as i32 {
            return game;
        }
        assert!(Instant::now() < deadline, "the match is over within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// USBGF's default: running out of time costs the match. Nobody calls
/// after NewGame; a watcher learns that the seat on turn lost on time.
#[tokio::test(flavor = "multi_thread")]
async fn a_seat_that_never_acts_loses_the_match_on_time_seen_by_a_watcher() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, with_clock(3, reserve(1_000))).await;
    let clock = g.game.clock.unwrap();
    let slow = g.game.to_act;
    assert_eq!(clock.running, slow);
    // As of the answer: the running seat's reserve less what its turn
    // has cost by then.
    let took = took_ms(&clock);
    let mut expected = [1_000, 1_000];
    expected[usize::from(slow == pb::Seat::Black as i32)] -= took;
    assert_eq!([clock.white_ms, clock.black_ms], expected);
    let since = clock.running_since.unwrap();
    let deadline = clock.deadline.unwrap();
    let span_ms = (deadline.seconds - since.seconds) * 1000
        + i64::from((deadline.nanos - since.nanos) / 1_000_000);
    assert_eq!(span_ms, 1_000, "the deadline is the reserve away");

    let mut watcher = connect(&fixture.server.addr).await;
    let mut updates = watch(&mut watcher, &g, g.game.version).await;
    let update = tokio::time::timeout(Duration::from_secs(10), updates.message())
        .await
        .expect("the flag falls within 10 s")
        .unwrap()
        .unwrap();
    let kinds: Vec<&str> = update.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["time_expired", "game_ended", "match_ended"]);
    assert_eq!(update.events[0].seat, slow);
    let game = update.game.unwrap();
    assert_eq!(game.phase, pb::Phase::MatchOver as i32);
    assert_eq!(game.match_winner, other(slow));
    assert_eq!(game.results[0].reason, "time");
    assert_eq!(game.clock.unwrap().running, pb::Seat::Unspecified as i32);
    assert_eq!(events_of(&mut client, &g, "time_expired").await, 1);
}

/// An action that comes after the deadline is refused, TIME_EXPIRED, and
/// the timeout is applied then (the sweep is off here: the action is what
/// finds the time up).
#[tokio::test(flavor = "multi_thread")]
async fn an_action_after_the_deadline_is_refused_and_the_timeout_applied() {
    let fixture = start_with_args(&["--clock-sweep-seconds", "3600"]);
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, with_clock(1, reserve(300))).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let play = g.game.legal_plays[0].notation.clone();
    let refused = client
        .r#move(with_token(
            move_request(&g, &play, "late"),
            g.to_act_token(),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "TIME_EXPIRED"),
        "{refused:?}"
    );
    let game = get_game(&mut client, &g).await;
    assert_eq!(game.version, g.game.version + 1, "the timeout alone");
    assert_eq!(game.phase, pb::Phase::MatchOver as i32);
    assert_eq!(game.match_winner, other(g.game.to_act));
    // The same request again: the match is over, and still one timeout.
    let again = client
        .r#move(with_token(
            move_request(&g, &play, "late"),
            g.to_act_token(),
        ))
        .await
        .unwrap_err();
    assert_ne!(again.code(), Code::Ok);
    assert_eq!(events_of(&mut client, &g, "time_expired").await, 1);
}

/// A turn in time is charged after the delay, gets the increment, and
/// the clock runs for the other seat from the answer on; the record says
/// how long the turn took.
#[tokio::test(flavor = "multi_thread")]
async fn a_turn_in_time_is_charged_after_the_delay_and_hands_the_clock_over() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let clock = pb::ClockSettings {
        reserve_ms: 60_000,
        delay_ms: 10_000,
        increment_ms: 2_000,
        ..Default::default()
    };
    let g = new_game(&mut client, with_clock(0, clock)).await;
    let mover = g.game.to_act;
    let play = g.game.legal_plays[0].notation.clone();
    let moved = client
        .r#move(with_token(move_request(&g, &play, ""), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    let after = moved.clock.unwrap();
    assert_eq!(after.running, other(mover));
    // Within the delay: nothing charged, the increment added.
    let mover_ms = if mover == pb::Seat::White as i32 {
        after.white_ms
    } else {
        after.black_ms
    };
    assert_eq!(mover_ms, 62_000);
    let since = after.running_since.unwrap();
    let deadline = after.deadline.unwrap();
    assert_eq!(deadline.seconds - since.seconds, 70, "delay and reserve");
    // The JSON record carries the time the turn took.
    let record: serde_json::Value =
        serde_json::from_str(&json_record(&mut client, &g).await).unwrap();
    let took = &record["actions"][1]["took_ms"];
    assert!(took.as_u64().is_some_and(|ms| ms < 10_000), "{record}");
}

/// `Game.clock` is as of the answer: the running seat's reserve less what
/// its turn has cost by `as_of`, and the delay left then; a client draws
/// the ticking clock from that one answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_clock_shows_the_reserves_and_the_delay_left_as_of_the_answer() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let clock = pb::ClockSettings {
        reserve_ms: 60_000,
        delay_ms: 400,
        ..Default::default()
    };
    let g = new_game(&mut client, with_clock(0, clock)).await;
    let running_ms = |c: &pb::Clock| {
        if c.running == pb::Seat::White as i32 {
            c.white_ms
        } else {
            c.black_ms
        }
    };
    for wait_ms in [0, 200, 900] {
        tokio::time::sleep(Duration::from_millis(wait_ms)).await;
        let shown = get_game(&mut client, &g).await.clock.unwrap();
        let took = took_ms(&shown);
        assert_eq!(
            shown.delay_left_ms,
            400u64.saturating_sub(took),
            "{shown:?}"
        );
        assert_eq!(
            running_ms(&shown),
            60_000 - took.saturating_sub(400),
            "{shown:?}"
        );
        let waiting = shown.white_ms + shown.black_ms - running_ms(&shown);
        assert_eq!(waiting, 60_000, "the waiting seat's reserve does not move");
        if wait_ms == 900 {
            assert!(took >= 1_100 && shown.delay_left_ms == 0, "{shown:?}");
        }
    }
}

/// A move racing the deadline: over many rounds, either the move is
/// applied (and answered) or the timeout is (and the move refused,
/// TIME_EXPIRED), never both and never neither.
#[tokio::test(flavor = "multi_thread")]
async fn a_move_racing_the_deadline_or_the_timeout_applies_never_both() {
    let fixture = start_with_args(&["--clock-sweep-seconds", "0.02"]);
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(35);
    let (mut moves, mut timeouts) = (0, 0);
    for _ in 0..30 {
        let g = new_game(&mut client, with_clock(1, reserve(300))).await;
        tokio::time::sleep(Duration::from_millis(rng.random_range(240..360))).await;
        let play = g.game.legal_plays[0].notation.clone();
        let answer = client
            .r#move(with_token(move_request(&g, &play, ""), g.to_act_token()))
            .await;
        let history = stored_history(&mut client, &g.id()).await;
        let second: Vec<&str> = history[1].events.iter().map(|e| e.kind.as_str()).collect();
        match answer {
            Ok(moved) => {
                assert_eq!(moved.into_inner().version, 2);
                assert_eq!(second.first(), Some(&"moved"), "{second:?}");
                moves += 1;
            }
            Err(status) => {
                assert!(
                    matches!(
                        reason(&status).as_str(),
                        "TIME_EXPIRED" | "VERSION_MISMATCH"
                    ),
                    "{status:?}"
                );
                assert_eq!(second.first(), Some(&"time_expired"), "{second:?}");
                timeouts += 1;
            }
        }
        let timeouts_at_2 = history[1]
            .events
            .iter()
            .filter(|e| e.kind == "time_expired")
            .count();
        assert!(timeouts_at_2 <= 1);
    }
    eprintln!("{moves} moves in time, {timeouts} timeouts first");
}

/// Clocks that ran out while the server was down (killed) fall once it
/// is back, each once, without any call (here with no grace).
#[tokio::test(flavor = "multi_thread")]
async fn clocks_due_while_the_server_was_down_fall_once_after_the_restart() {
    let mut fixture = start_with_args(&["--clock-restart-grace-seconds", "0"]);
    let mut client = connect(&fixture.server.addr).await;
    let mut games = Vec::new();
    for _ in 0..3 {
        games.push(new_game(&mut client, with_clock(3, reserve(1_500))).await);
    }
    fixture.server.kill();
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    for g in &games {
        let game = over(&mut client, g).await;
        assert_eq!(game.results[0].reason, "time");
        assert_eq!(game.version, g.game.version + 1);
        assert_eq!(events_of(&mut client, g, "time_expired").await, 1);
    }
}

/// Settings that make no sense are INVALID_ARGUMENT naming the field,
/// and create nothing.
#[tokio::test]
async fn bad_clock_settings_are_refused_naming_the_field() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let cases = [
        (pb::ClockSettings::default(), "settings.clock"),
        (
            pb::ClockSettings {
                delay_ms: 12_000,
                ..Default::default()
            },
            "settings.clock.reserve_ms",
        ),
        (
            pb::ClockSettings {
                reserve_ms: 60_000,
                increment_ms: 31 * 24 * 3_600_000,
                ..Default::default()
            },
            "settings.clock.increment_ms",
        ),
        (
            pb::ClockSettings {
                reserve_ms: 60_000,
                on_timeout: 9,
                ..Default::default()
            },
            "settings.clock.on_timeout",
        ),
    ];
    for (clock, field) in cases {
        let refused = client
            .new_game(pb::NewGameRequest {
                variant: "standard".into(),
                settings: Some(with_clock(3, clock)),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
        let info = refused.get_details_error_info().unwrap();
        assert_eq!(info.metadata.get("field").map(String::as_str), Some(field));
    }
}

/// A turn limit caps a turn whatever the reserve: with a minute in reserve
/// and 400 ms a turn, the flag falls 400 ms after the turn began.
#[tokio::test(flavor = "multi_thread")]
async fn the_turn_limit_makes_the_flag_fall_whatever_the_reserve() {
    let fixture = start_with_args(&["--clock-sweep-seconds", "0.02"]);
    let mut client = connect(&fixture.server.addr).await;
    let clock = pb::ClockSettings {
        reserve_ms: 60_000,
        turn_limit_ms: 400,
        ..Default::default()
    };
    let g = new_game(&mut client, with_clock(3, clock)).await;
    let shown = g.game.clock.unwrap();
    let since = shown.running_since.unwrap();
    let deadline = shown.deadline.unwrap();
    let span_ms = (deadline.seconds - since.seconds) * 1000
        + i64::from((deadline.nanos - since.nanos) / 1_000_000);
    assert_eq!(span_ms, 400);
    let game = over(&mut client, &g).await;
    assert_eq!(game.results[0].reason, "time");
    assert_eq!(game.match_winner, other(g.game.to_act));
}

/// The cube and a resignation offer charge the seat that must answer: its
/// time runs while the game waits for its answer, then the other's again.
#[tokio::test(flavor = "multi_thread")]
async fn a_double_and_a_resignation_offer_run_the_clock_of_the_seat_that_answers() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let settings = pb::MatchSettings {
        resignation: pb::ResignationMode::Offer as i32,
        auto_roll: Some(false),
        ..with_clock(5, reserve(600_000))
    };
    let mut g = new_game(&mut client, settings).await;
    let running = |game: &pb::Game| game.clock.unwrap().running;
    // The opening mover moves; the other seat is to roll (or double).
    let play = g.game.legal_plays[0].notation.clone();
    g.game = client
        .r#move(with_token(move_request(&g, &play, ""), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    let doubler = g.game.to_act;
    assert_eq!(running(&g.game), doubler);
    let double = |action: pb::DoubleAction, g: &Game| pb::DoubleRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: action as i32,
    };
    g.game = client
        .double(with_token(
            double(pb::DoubleAction::Offer, &g),
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(running(&g.game), other(doubler), "the answer's clock runs");
    g.game = client
        .double(with_token(
            double(pb::DoubleAction::Take, &g),
            g.to_act_token(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(running(&g.game), doubler, "back to the doubler, to roll");
    // The doubler offers to resign: the other seat's clock runs.
    resign_at(&mut client, &mut g, 1).await;
    assert_eq!(g.game.phase, pb::Phase::ResignationOffered as i32);
    assert_eq!(running(&g.game), other(doubler));
}

/// With a grace after a restart, a seat whose clock ran out while the
/// server was down may still act within the grace, and a seat that does
/// not loses when the grace ends, not at the restart.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_a_clock_that_ran_out_meanwhile_gets_the_grace() {
    let mut fixture = start_with_args(&["--clock-restart-grace-seconds", "3"]);
    let mut client = connect(&fixture.server.addr).await;
    let acting = new_game(&mut client, with_clock(3, reserve(1_000))).await;
    let idle = new_game(&mut client, with_clock(3, reserve(1_000))).await;
    fixture.server.kill();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    fixture.server.restart();
    let restarted = Instant::now();
    let mut client = connect(&fixture.server.addr).await;
    let play = acting.game.legal_plays[0].notation.clone();
    let moved = client
        .r#move(with_token(
            move_request(&acting, &play, ""),
            acting.to_act_token(),
        ))
        .await
        .expect("within the grace, the move is taken")
        .into_inner();
    assert_eq!(moved.version, acting.game.version + 1);
    assert_eq!(moved.clock.unwrap().running, other(acting.game.to_act));
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_ne!(
        get_game(&mut client, &idle).await.phase,
        pb::Phase::MatchOver as i32,
        "still running within the grace"
    );
    let game = over(&mut client, &idle).await;
    assert!(
        restarted.elapsed() >= Duration::from_secs(3),
        "not before the grace ends"
    );
    assert_eq!(game.results[0].reason, "time");
}

/// With `on_timeout: game`, running out costs the game in progress and
/// play goes on: the next game starts, the seat that lost on time with
/// its reserve anew.
#[tokio::test(flavor = "multi_thread")]
async fn running_out_may_cost_only_the_game_and_play_goes_on() {
    let fixture = start_with_args(&["--clock-sweep-seconds", "0.02"]);
    let mut client = connect(&fixture.server.addr).await;
    let clock = pb::ClockSettings {
        reserve_ms: 400,
        on_timeout: pb::OnTimeout::Game as i32,
        ..Default::default()
    };
    let g = new_game(&mut client, with_clock(7, clock)).await;
    let slow = g.game.to_act;
    let mut watcher = connect(&fixture.server.addr).await;
    let mut updates = watch(&mut watcher, &g, g.game.version).await;
    let update = tokio::time::timeout(Duration::from_secs(10), updates.message())
        .await
        .expect("the flag falls")
        .unwrap()
        .unwrap();
    let kinds: Vec<&str> = update.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds[..2], ["time_expired", "game_ended"]);
    assert!(!kinds.contains(&"match_ended"), "{kinds:?}");
    assert!(kinds.contains(&"game_started"), "{kinds:?}");
    let game = update.game.unwrap();
    assert_ne!(game.phase, pb::Phase::MatchOver as i32);
    assert_eq!(game.game_number, 2);
    assert_eq!(game.results[0].reason, "time");
    assert_eq!(game.results[0].winner, other(slow));
    let clock = game.clock.unwrap();
    assert_ne!(clock.running, pb::Seat::Unspecified as i32);
    // Both reserves anew, the running one as of the answer.
    let took = took_ms(&clock);
    let mut anew = [400, 400];
    anew[usize::from(clock.running == pb::Seat::Black as i32)] -= took.min(400);
    assert_eq!([clock.white_ms, clock.black_ms], anew, "time anew");
}
