//! Stored snapshots of every format read back.

use bg_engine::Seat;
use bg_fair_dice::{SeatSeeds, ServerSeed};

use super::*;

/// The key and game these tests seal seeds for.
fn seal() -> Seal<'static> {
    static KEY: std::sync::LazyLock<SeedKey> =
        std::sync::LazyLock::new(|| SeedKey::derive(&[3; 32]));
    Seal {
        key: &KEY,
        game_id: "g",
    }
}

/// `super::encode` for the tests' game.
fn encode(
    game: &Match,
    dice: Option<&FairDice>,
    clock: Option<&Clock>,
) -> Result<String, serde_json::Error> {
    super::encode(game, dice, clock, seal())
}

/// `super::decode` for the tests' game.
fn decode(text: &str) -> Result<Stored, SnapshotError> {
    super::decode(text, seal())
}

/// A snapshot written before formats had versions (format 0), as the
/// server stored it: a money game, white to move with 5-4.
const FORMAT_0: &str = r#"{"settings":{"match_length":0,"money_games":1,"cube":{"max":64},"dead_cube_check":true,"crawford":true,"jacoby":false,"beavers":false,"auto_doubles":0,"scoring_limit":"cox","resignation":"by_position","draw_on_last_roll":false,"first_move":"loser"},"score":[0,0],"game_number":1,"crawford":"before","turn":"white","phase":"move","dice":{"d1":5,"d2":4},"cube":{"value":1,"owner":null},"cube_in_play":true,"pending_double":null,"resignation":null,"declined":null,"pending_decision":null,"decision_after_play":false,"first_mover":"white","pending_win":null,"starter":"white","variant_state":[1,0,0,0,0,0,0,5,0,3,0,0,0,0,5,0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,5,0,3,0,0,0,0,5,0,0,0,0,0,0,0,0,0,0,2,0],"results":[],"winner":null}"#;

/// A format-0 snapshot from before `auto_doubles` and
/// `decision_after_play` existed: they take their defaults.
const FORMAT_0_OLDEST: &str = r#"{"settings":{"match_length":3,"money_games":1,"cube":"unlimited","dead_cube_check":true,"crawford":true,"jacoby":false,"beavers":false,"scoring_limit":"mars","resignation":"offer","draw_on_last_roll":false,"first_move":null},"score":[1,0],"game_number":2,"crawford":"this_game","turn":"black","phase":"resignation_offered","dice":null,"cube":{"value":2,"owner":"black"},"cube_in_play":false,"pending_double":null,"resignation":{"by":"black","level":2,"resume":"roll"},"declined":["white",1],"pending_decision":null,"first_mover":"black","pending_win":null,"starter":"black","variant_state":[1,2,3],"results":[{"game_number":1,"winner":"white","reason":"resigned","kind":"single","level":1,"cube":1,"points":1}],"winner":null}"#;

#[test]
fn a_snapshot_of_the_previous_format_is_read() {
    let (game, dice, clock) = decode(FORMAT_0).unwrap();
    // Before verifiable dice: the CSPRNG's; before clocks, none.
    assert_eq!((dice, clock), (None, None));
    assert_eq!(game.phase, bg_engine::game::Phase::Move);
    assert_eq!(game.dice, Some(bg_engine::Dice::new(5, 4).unwrap()));
    assert_eq!(game.settings.cube, bg_engine::game::CubeLimit::Max(64));
    assert_eq!(game.variant_state.len(), 53);
    // Auto-roll did not exist: the game is played without it.
    assert_eq!(game.settings.auto_roll, Some(false));
    // Written again, it is the current format, and reads back the same.
    let again = encode(&game, None, None).unwrap();
    assert!(again.starts_with(r#"{"format":4,"match":{"#), "{again}");
    assert_eq!(decode(&again).unwrap(), (game.clone(), None, None));
    let format_1 = format!(r#"{{"format":1,"match":{FORMAT_0}}}"#);
    assert_eq!(decode(&format_1).unwrap().0, game);
    let format_2 = format!(r#"{{"format":2,"match":{FORMAT_0}}}"#);
    assert_eq!(decode(&format_2).unwrap().0, game);
    let format_3 = format!(r#"{{"format":3,"match":{FORMAT_0}}}"#);
    assert_eq!(decode(&format_3).unwrap(), (game.clone(), None, None));

    let (oldest, _, _) = decode(FORMAT_0_OLDEST).unwrap();
    assert_eq!(oldest.settings.auto_doubles, 0);
    assert!(!oldest.decision_after_play);
    assert_eq!(oldest.declined, Some((bg_engine::Seat::White, 1)));
    assert_eq!(oldest.results[0].kind, "single");
    assert_eq!(oldest.resignation.map(|r| r.level), Some(2));
}

/// Format 4 is pinned: the same match always writes the same text. A
/// change here means a new format (and a migration in `decode`).
/// A match the service plays a seat of is written in format 5, with
/// its computer seats and hints; one without stays format 4.
#[test]
fn format_5_is_format_4_with_the_seats_the_service_plays() {
    let (mut game, _, _) = decode(FORMAT_0).unwrap();
    game.settings.auto_roll = Some(false);
    game.settings.hints = true;
    let without = encode(&game, None, None).unwrap();
    assert!(without.starts_with(r#"{"format":4,"#), "{without}");
    assert!(without.contains(r#""hints":true"#), "{without}");
    game.settings.bots = vec![bg_engine::game::BotSeat {
        seat: Seat::Black,
        level: "expert".into(),
    }];
    let text = encode(&game, None, None).unwrap();
    assert!(text.starts_with(r#"{"format":5,"#), "{text}");
    assert!(
        text.contains(r#""bots":[{"seat":"black","level":"expert"}],"hints":true"#),
        "{text}"
    );
    assert_eq!(decode(&text).unwrap(), (game, None, None));
}

#[test]
fn format_4_is_the_format_0_match_with_auto_roll_its_dice_and_its_clock_in_an_envelope() {
    let (mut game, _, _) = decode(FORMAT_0).unwrap();
    game.settings.auto_roll = Some(true);
    let with_auto_roll = FORMAT_0.replace(
        r#""first_move":"loser"}"#,
        r#""first_move":"loser","auto_roll":true}"#,
    );
    assert_eq!(
        encode(&game, None, None).unwrap(),
        format!(r#"{{"format":4,"match":{with_auto_roll}}}"#)
    );
    let mut dice = FairDice {
        server: ServerSeed([0xab; 32]),
        seeds: SeatSeeds::new("w", "").unwrap(),
        thrown: 12,
    };
    // As servers before sealing stored it (the seed in the clear): read.
    let text = format!(
        r#"{{"format":4,"match":{with_auto_roll},"dice":{{"scheme":"hmac-sha256/v1","server_seed":"{}","white_seed":"w","black_seed":"","thrown":12}}}}"#,
        "ab".repeat(32)
    );
    assert_eq!(
        decode(&text).unwrap(),
        (game.clone(), Some(dice.clone()), None)
    );
    // Written now: format 6, the seed sealed; read back the same.
    let sealed = encode(&game, Some(&dice), None).unwrap();
    assert!(sealed.starts_with(r#"{"format":6,"#) && !sealed.contains(&"ab".repeat(32)));
    assert_eq!(
        decode(&sealed).unwrap(),
        (game.clone(), Some(dice.clone()), None)
    );
    // A clock: its settings, the reserves, who runs since when.
    let mut clock = bg_engine::clock::Clock::new(
        bg_engine::clock::ClockSettings {
            reserve_ms: 0,
            reserve_per_point_ms: 120_000,
            delay_ms: 12_000,
            increment_ms: 0,
            turn_limit_ms: 0,
            on_timeout: bg_engine::clock::OnTimeout::Match,
        },
        7,
    );
    clock.hand_over(Some(bg_engine::Seat::Black), 1_700_000_000_000);
    let text = encode(&game, None, Some(&clock)).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{"format":4,"match":{with_auto_roll},"clock":{{"reserve_ms":0,"reserve_per_point_ms":120000,"delay_ms":12000,"increment_ms":0,"turn_limit_ms":0,"on_timeout":"match","reserves":[840000,840000],"running":["black",1700000000000]}}}}"#
        )
    );
    assert_eq!(decode(&text).unwrap(), (game.clone(), None, Some(clock)));
    // A seed given with a roll keeps the die it applies from.
    dice.give_seed(bg_engine::Seat::Black, "b").unwrap();
    let text = encode(&game, Some(&dice), None).unwrap();
    assert!(
        text.ends_with(r#""black_seed":"b","black_seed_from":12,"thrown":12}}"#),
        "{text}"
    );
    assert_eq!(decode(&text).unwrap(), (game, Some(dice), None));
}

#[test]
fn a_newer_or_damaged_snapshot_is_refused_with_a_reason() {
    let newer = decode(r#"{"format":7,"match":{}}"#).unwrap_err();
    assert!(matches!(newer, SnapshotError::Newer(7)), "{newer}");
    assert!(newer.to_string().contains("upgrade the server"));
    for damaged in [
        r#"{"format":"one"}"#,
        r#"{"format":1}"#,
        "[1,2]",
        "",
        &FORMAT_0.replace(r#""d1":5"#, r#""d1":9"#),
        &FORMAT_0.replace(r#""turn":"white""#, r#""turn":"green""#),
        &format!(
            r#"{{"format":3,"match":{FORMAT_0},"dice":{{"scheme":"md5","server_seed":"00","white_seed":"","black_seed":"","thrown":0}}}}"#
        ),
        &format!(
            r#"{{"format":3,"match":{FORMAT_0},"dice":{{"scheme":"hmac-sha256/v1","server_seed":"00","white_seed":"","black_seed":"","thrown":0}}}}"#
        ),
    ] {
        assert!(decode(damaged).is_err(), "{damaged}");
    }
}

#[test]
fn a_start_position_reads_back_as_written() {
    let board = bg_engine::Board::from_points(&[(6, 5), (8, 3)], &[(6, 5), (24, 2)]);
    let text = encode_board(&board).unwrap();
    assert_eq!(decode_board(&text).unwrap(), board);
    // The shape stored since positions were first stored.
    assert!(text.starts_with(r#"{"checkers":[["#), "{text}");
}

#[test]
fn format_6_seals_the_server_seed_of_a_match_in_progress_and_reveals_it_once_over() {
    let (mut game, _, _) = decode(FORMAT_0).unwrap();
    let server = ServerSeed::from_hex(&"5a".repeat(32)).unwrap();
    let dice = FairDice {
        server,
        seeds: SeatSeeds::default(),
        thrown: 4,
    };
    let text = encode(&game, Some(&dice), None).unwrap();
    assert!(text.contains(r#""format":6"#), "{text}");
    assert!(
        !text.contains(&"5a".repeat(32)),
        "the seed in the clear: {text}"
    );
    assert!(!sealed::holds_plain_seed(&text));
    assert_eq!(decode(&text).unwrap().1.unwrap().server, server);
    // Another game's (or another key's) seal does not open it.
    let other = Seal {
        key: seal().key,
        game_id: "h",
    };
    assert!(super::decode(&text, other).is_err());
    // Over: revealed, in the clear, in the older format.
    game.phase = bg_engine::game::Phase::MatchOver;
    let over = encode(&game, Some(&dice), None).unwrap();
    assert!(
        over.contains(&"5a".repeat(32)) && over.contains(r#""format":4"#),
        "{over}"
    );
    assert!(sealed::holds_plain_seed(&over));
}
