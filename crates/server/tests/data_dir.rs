//! The data folder as an operator handles it: a second server on it, a
//! lost or replaced key, a lost database, a damaged row, a clean stop, a
//! backup restored (issue 11, items 3, 4, 5, 7 and 8).

mod common;

use std::path::Path;

use bg_api::v1 as pb;
use common::*;
use sqlx::Connection;
use tonic::Code;

fn data_of(fixture: &Fixture) -> &Path {
    fixture
        .data
        .as_ref()
        .expect("the fixture's own folder")
        .path()
}

/// A game's stored state, read straight from the database file (the
/// server stopped).
async fn stored_state(fixture: &Fixture, game_id: &str) -> String {
    let mut connection = database(fixture).await;
    let state = sqlx::query_scalar("SELECT state FROM games WHERE game_id = ?")
        .bind(game_id)
        .fetch_one(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    state
}

/// Sets a game's stored state to an SQL expression of `state` (the server
/// stopped), as damage or an older or newer server would leave it.
async fn set_stored_state(fixture: &Fixture, game_id: &str, expression: &str) {
    let mut connection = database(fixture).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE games SET state = {expression} WHERE game_id = ?"
    )))
    .bind(game_id)
    .execute(&mut connection)
    .await
    .unwrap();
    connection.close().await.unwrap();
}

async fn database(fixture: &Fixture) -> sqlx::SqliteConnection {
    let path = data_of(fixture).join("games.db");
    sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap()
}

/// A game with one move played (version 2).
async fn game_with_a_move(client: &mut Client) -> Game {
    let mut g = new_game(client, pb::MatchSettings::default()).await;
    let play = g.game.legal_plays[0].notation.clone();
    g.game = client
        .r#move(with_token(move_request(&g, &play, ""), g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
    g
}

/// The game as stored, and its seat tokens still working: a Roll by the
/// seat on turn is applied.
async fn still_playable(client: &mut Client, g: &Game) {
    assert_eq!(get_game(client, g).await, g.game);
    let rolled = client
        .roll(roll(g, ""))
        .await
        .unwrap_or_else(|s| panic!("the seat's token works: {s:?}"))
        .into_inner();
    assert_eq!(rolled.version, g.game.version + 1);
}

/// Item 3: one server per data folder; the second says who holds it.
#[tokio::test]
async fn a_second_server_on_the_same_data_folder_refuses_to_start() {
    let fixture = start();
    let (code, stderr) = refused_start(data_of(&fixture), fixture.plugins.path());
    assert_ne!(code, 0);
    assert!(
        stderr.contains("another backgammond")
            && stderr.contains(&fixture.server.pid().unwrap().to_string()),
        "{stderr}"
    );
    // The first goes on.
    let mut client = connect(&fixture.server.addr).await;
    new_game(&mut client, pb::MatchSettings::default()).await;
}

/// One server per SQLite file as well, when the file is given outside the
/// data folder (`--database sqlite:PATH`): a second server with another
/// data folder refuses it too.
#[tokio::test]
async fn a_second_server_on_the_same_sqlite_file_refuses_to_start() {
    let shared = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", shared.path().join("games.db").display());
    let fixture = start_with_args(&["--database", &url]);
    let other = tempfile::tempdir().unwrap();
    let (code, stderr) =
        refused_start_with(other.path(), fixture.plugins.path(), &["--database", &url]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("another backgammond")
            && stderr.contains(&fixture.server.pid().unwrap().to_string()),
        "{stderr}"
    );
    let mut client = connect(&fixture.server.addr).await;
    new_game(&mut client, pb::MatchSettings::default()).await;
    assert!(shared.path().join("games.db").exists());
}

/// Item 5: a lost key is not made again while games exist (their tokens
/// derive from it); nor is another key taken.
#[tokio::test]
async fn a_missing_or_replaced_key_stops_a_server_whose_database_holds_games() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = game_with_a_move(&mut client).await;
    fixture.server.kill();
    let data = data_of(&fixture).to_path_buf();
    let key = data.join("server.key");
    let original = std::fs::read(&key).unwrap();

    std::fs::remove_file(&key).unwrap();
    let (code, stderr) = refused_start(&data, fixture.plugins.path());
    assert_ne!(code, 0);
    assert!(
        stderr.contains("server.key is missing") && stderr.contains("restore"),
        "{stderr}"
    );
    assert!(!key.exists(), "no new key was made");

    std::fs::write(&key, [7u8; 32]).unwrap();
    let (code, stderr) = refused_start(&data, fixture.plugins.path());
    assert_ne!(code, 0);
    assert!(stderr.contains("not the key"), "{stderr}");

    std::fs::write(&key, &original).unwrap();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    still_playable(&mut client, &g).await;
}

/// Item 5: with no game stored, a missing key is simply made anew.
#[tokio::test]
async fn a_database_without_games_takes_a_new_key() {
    let mut fixture = start();
    fixture.server.kill();
    let key = data_of(&fixture).join("server.key");
    std::fs::remove_file(&key).unwrap();
    fixture.server.restart();
    assert!(key.exists());
    let mut client = connect(&fixture.server.addr).await;
    let g = game_with_a_move(&mut client).await;
    still_playable(&mut client, &g).await;
}

/// Item 8: a key beside an empty (or missing) games.db means the database
/// was lost: no silent empty start.
#[tokio::test]
async fn a_key_beside_an_empty_or_missing_database_stops_the_server() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    game_with_a_move(&mut client).await;
    fixture.server.kill();
    let data = data_of(&fixture).to_path_buf();
    for file in ["games.db-wal", "games.db-shm"] {
        let _ = std::fs::remove_file(data.join(file));
    }
    std::fs::write(data.join("games.db"), b"").unwrap();
    let (code, stderr) = refused_start(&data, fixture.plugins.path());
    assert_ne!(code, 0);
    assert!(stderr.contains("database was lost"), "{stderr}");
    std::fs::remove_file(data.join("games.db")).unwrap();
    let (code, stderr) = refused_start(&data, fixture.plugins.path());
    assert_ne!(code, 0);
    assert!(stderr.contains("database was lost"), "{stderr}");
}

/// Item 4: a damaged row makes its game answer DATA_LOSS with a reason,
/// on every call; every other game goes on.
#[tokio::test]
async fn a_corrupt_row_is_data_loss_for_its_game_and_nothing_else() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let damaged = game_with_a_move(&mut client).await;
    let sound = game_with_a_move(&mut client).await;
    fixture.server.kill();
    let original = stored_state(&fixture, &damaged.id()).await;
    // Bytes that are not text; then text that is JSON, but a state its
    // variant refuses.
    for damage in [
        "CAST(x'7b22ff' AS TEXT)",
        "json_set(state, '$.match.phase', 'move', '$.match.dice', json('{\"d1\": 9, \"d2\": 3}'))",
        "json_set(state, '$.match.variant_state', json('[1, 0, 0]'))",
        "json_set(state, '$.match.phase', 'move', '$.match.dice', NULL)",
        "json_set(state, '$.match.phase', 'cube_offered', '$.match.pending_double', NULL)",
        "json_set(state, '$.match.phase', 'resignation_offered', '$.match.resignation', \
         json('{\"by\": \"white\", \"level\": 1, \"resume\": \"cube_offered\"}'))",
    ] {
        set_stored_state(&fixture, &damaged.id(), damage).await;
        fixture.server.restart();
        damaged_game_is_data_loss(&fixture, &damaged, &sound).await;
        fixture.server.kill();
        let quoted = format!("'{}'", original.replace('\'', "''"));
        set_stored_state(&fixture, &damaged.id(), &quoted).await;
    }
}

async fn damaged_game_is_data_loss(fixture: &Fixture, damaged: &Game, sound: &Game) {
    let mut client = connect(&fixture.server.addr).await;

    let data_loss = |status: tonic::Status| {
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::DataLoss, "STORAGE_CORRUPT"),
            "{status:?}"
        );
    };
    let id = damaged.id();
    data_loss(
        client
            .get_game(pb::GetGameRequest {
                read_mask: None,
                game_id: id.clone(),
            })
            .await
            .unwrap_err(),
    );
    data_loss(
        client
            .legal_plays(pb::LegalPlaysRequest {
                game_id: id.clone(),
            })
            .await
            .unwrap_err(),
    );
    data_loss(client.roll(roll(damaged, "")).await.unwrap_err());
    data_loss(
        client
            .watch_game(pb::WatchGameRequest {
                game_id: id.clone(),
                from_version: 0,
                read_mask: None,
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(get_game(&mut client, sound).await, sound.game);
    new_game(&mut client, pb::MatchSettings::default()).await;
}

/// Item 7: SIGTERM copies the log into games.db, so games.db alone (with
/// its key) holds every game.
#[tokio::test]
async fn after_a_clean_stop_games_db_alone_holds_every_game() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut games = Vec::new();
    for _ in 0..20 {
        games.push(game_with_a_move(&mut client).await);
    }
    drop(client);
    let (code, _) = fixture.server.terminate();
    assert_eq!(code, Some(0));
    let data = data_of(&fixture);
    let wal = std::fs::metadata(data.join("games.db-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "no log is left beside games.db");

    let copy = tempfile::tempdir().unwrap();
    for file in ["games.db", "server.key"] {
        std::fs::copy(data.join(file), copy.path().join(file)).unwrap();
    }
    let fixture = start_in(copy.path(), &[]);
    let mut client = connect(&fixture.server.addr).await;
    for g in &games {
        still_playable(&mut client, g).await;
    }
}

/// Item 7: `backgammond backup` copies a data folder while the server
/// runs; a server started on the copy has every game, tokens working.
#[tokio::test]
async fn a_backup_taken_while_serving_restores_every_game() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut games = Vec::new();
    for _ in 0..10 {
        games.push(game_with_a_move(&mut client).await);
    }
    let target = tempfile::tempdir().unwrap();
    let backup = target.path().join("backup");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
        .arg("--data-dir")
        .arg(data_of(&fixture))
        .arg("backup")
        .arg(&backup)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The server goes on meanwhile; the backup holds what was there.
    new_game(&mut client, pb::MatchSettings::default()).await;

    let again = std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
        .arg("--data-dir")
        .arg(data_of(&fixture))
        .arg("backup")
        .arg(&backup)
        .output()
        .unwrap();
    assert!(
        !again.status.success(),
        "an existing folder is not overwritten"
    );

    let restored = start_in(&backup, &[]);
    let mut client = connect(&restored.server.addr).await;
    for g in &games {
        still_playable(&mut client, g).await;
    }
}

/// Issue 12: games stored before snapshots had a format version (format
/// 0, the match alone) are read and played on; what is written next is
/// the current format.
#[tokio::test]
async fn a_game_stored_in_the_previous_format_plays_on() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = game_with_a_move(&mut client).await;
    fixture.server.kill();
    set_stored_state(&fixture, &g.id(), "json_extract(state, '$.match')").await;
    let format_0 = stored_state(&fixture, &g.id()).await;
    assert!(format_0.starts_with(r#"{"settings":"#), "{format_0}");

    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    // Made before verifiable dice: played on with dice from the CSPRNG.
    let mut before = g.clone();
    before.game.verifiable_dice = None;
    before.game.settings.as_mut().unwrap().verifiable_dice = Some(false);
    still_playable(&mut client, &before).await;
    drop(client);
    fixture.server.kill();
    let written = stored_state(&fixture, &g.id()).await;
    assert!(written.starts_with(r#"{"format":4,"match":"#), "{written}");
    // No verifiable dice (the match's own "dice" are its turn's).
    assert!(!written.contains(r#""scheme""#), "{written}");
    // Made before auto-roll: played on without it.
    assert!(written.contains(r#""auto_roll":false"#), "{written}");
}

/// A game stored by a newer server (a format this one does not know) is
/// not damage: FAILED_PRECONDITION, STORAGE_FORMAT_NEWER, saying to
/// upgrade.
#[tokio::test]
async fn a_game_stored_in_a_newer_format_asks_for_an_upgrade() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let g = game_with_a_move(&mut client).await;
    fixture.server.kill();
    set_stored_state(&fixture, &g.id(), "json_set(state, '$.format', 99)").await;
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    let status = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: g.id(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "STORAGE_FORMAT_NEWER"),
        "{status:?}"
    );
    assert!(status.message().contains("upgrade"), "{status:?}");
}

/// Issue 15: a retry's first answer is rebuilt from the event log once the
/// game has moved on. A logged action that no longer applies as logged
/// (here: its dice changed in the file) cannot give that answer back: the
/// retry is refused, FAILED_PRECONDITION, ANSWER_UNAVAILABLE, and nothing
/// is applied; a retry at the current version is still answered.
#[tokio::test]
async fn a_retry_whose_logged_action_no_longer_applies_is_refused_and_applies_nothing() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let play = g.game.legal_plays[0].notation.clone();
    let first_request = move_request(&g, &play, "first-move");
    let token = g.to_act_token().to_string();
    let first = client
        .r#move(with_token(first_request.clone(), &token))
        .await
        .unwrap()
        .into_inner();
    g.game = first.clone();
    let rolled_request = roll(&g, "then-roll");
    let rolled = client.roll(rolled_request).await.unwrap().into_inner();
    // Version 2 is the move; its entry logs no dice (a move throws none),
    // so the damage goes into the opening's (version 1): the dice thrown.
    fixture.server.kill();
    let mut connection = database(&fixture).await;
    let changed = sqlx::query(
        "UPDATE game_events SET events = json_set(events, '$.dice[0]', 7) \
         WHERE game_id = ? AND version = 1",
    )
    .bind(g.id())
    .execute(&mut connection)
    .await
    .unwrap()
    .rows_affected();
    connection.close().await.unwrap();
    assert_eq!(changed, 1);
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    let refused = client
        .r#move(with_token(first_request, &token))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "ANSWER_UNAVAILABLE"),
        "{refused:?}"
    );
    assert!(refused.message().contains("GetGame"), "{refused:?}");
    assert_eq!(get_game(&mut client, &g).await, rolled, "nothing applied");
    // The answer of the current version needs no log: still given.
    g.game = first;
    let again = client
        .roll(roll(&g, "then-roll"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, rolled);
}

/// The mode bits of `path` (rights only).
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Issue 34: the database holds every running match's secret dice seed,
/// so a new data folder is its owner's alone (0700) and its files are
/// 0600, whatever the umask; a database file left readable by others is
/// made private at the next start.
#[tokio::test]
async fn a_new_data_folder_and_its_files_are_private_whatever_the_umask() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("new").join("data");
    // The most permissive umask, for the server this test starts (the
    // child takes the umask it is spawned with).
    let before = unsafe { libc::umask(0) };
    let mut fixture = start_in(&data, &[]);
    unsafe { libc::umask(before) };
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(34);
    step(&mut client, &mut g, &mut rng).await;
    assert_eq!(mode_of(&data), 0o700, "the data folder");
    for file in [
        "games.db",
        "games.db-wal",
        "games.db-shm",
        "server.key",
        "lock",
    ] {
        assert_eq!(mode_of(&data.join(file)), 0o600, "{file}");
    }

    // An operator's copy left the file readable by all: private again
    // after a restart.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        data.join("games.db"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(get_game(&mut client, &g).await, g.game);
    assert_eq!(mode_of(&data.join("games.db")), 0o600);
}

/// Waits (up to 20 s) until `game` is gone from the server.
async fn gone(client: &mut Client, game: &Game) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let read = client
            .get_game(pb::GetGameRequest {
                game_id: game.id(),
                read_mask: None,
            })
            .await;
        match read {
            Err(status) if status.code() == Code::NotFound => return true,
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
            Err(status) => panic!("{status:?}"),
        }
    }
    false
}

/// Issue 34: with a retention, a match that ended is removed once it is
/// older than that, its JSON record written first into the archive
/// folder; a match still running stays, however old. An archive that
/// cannot be written keeps the match stored until it can.
#[tokio::test(flavor = "multi_thread")]
async fn finished_matches_are_archived_then_removed_after_their_retention() {
    let folder = tempfile::tempdir().unwrap();
    let archive = folder.path().join("archive");
    let fixture = start_with_args(&[
        "--finished-retention-seconds",
        "1",
        "--archive-dir",
        archive.to_str().unwrap(),
    ]);
    let mut client = connect(&fixture.server.addr).await;
    let one_point = pb::MatchSettings {
        match_length: 1,
        ..Default::default()
    };
    let running = new_game(&mut client, one_point).await;
    let mut ended = new_game(&mut client, one_point).await;
    resign(&mut client, &mut ended).await;
    assert_eq!(ended.game.phase, pb::Phase::MatchOver as i32);
    let exported = json_record(&mut client, &ended).await;

    assert!(
        gone(&mut client, &ended).await,
        "removed after its retention"
    );
    let archived = std::fs::read_to_string(archive.join(format!("{}.json", ended.id()))).unwrap();
    assert_eq!(archived, exported, "the record as ExportMatch gave it");
    assert_eq!(
        get_game(&mut client, &running).await,
        running.game,
        "a running match stays"
    );

    // The archive folder replaced by a file: nothing can be written, so
    // the match stays stored; once the folder is back, it goes.
    let moved = folder.path().join("archive-away");
    std::fs::rename(&archive, &moved).unwrap();
    std::fs::write(&archive, b"not a folder").unwrap();
    let mut blocked = new_game(&mut client, one_point).await;
    resign(&mut client, &mut blocked).await;
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert_eq!(
        get_game(&mut client, &blocked).await,
        blocked.game,
        "kept while its record cannot be written"
    );
    std::fs::remove_file(&archive).unwrap();
    std::fs::rename(&moved, &archive).unwrap();
    assert!(gone(&mut client, &blocked).await);
    assert!(archive.join(format!("{}.json", blocked.id())).exists());
}

/// Every byte of the data folder's files (the database, its log, the
/// rest).
fn folder_bytes(folder: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            bytes.extend(std::fs::read(&path).unwrap_or_default());
        }
    }
    bytes
}

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Resigns the match (a 1-point one ends) and gives its revealed seed.
async fn revealed_seed(client: &mut Client, g: &mut Game) -> String {
    resign(client, g).await;
    assert_eq!(g.game.phase, pb::Phase::MatchOver as i32);
    g.game.verifiable_dice.clone().unwrap().server_seed
}

fn one_point() -> pb::MatchSettings {
    pb::MatchSettings {
        match_length: 1,
        ..Default::default()
    }
}

/// Issue 49: with the server seed of a match in progress anyone predicts
/// every die to come. A copy of the data folder's database taken while
/// the match runs (the server up, and after a clean stop) holds it
/// neither in hex nor as bytes; once the match is over it is revealed.
#[tokio::test]
async fn the_database_holds_no_server_seed_of_a_match_in_progress() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = game_with_a_move(&mut client).await;
    let mut other = new_game(&mut client, one_point()).await;
    let running = folder_bytes(data_of(&fixture));
    fixture.server.terminate();
    let stopped = folder_bytes(data_of(&fixture));
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    for game in [&mut g, &mut other] {
        let seed = revealed_seed(&mut client, game).await;
        assert_eq!(seed.len(), 64, "{seed}");
        let raw = (0..32)
            .map(|i| u8::from_str_radix(&seed[2 * i..2 * i + 2], 16).unwrap())
            .collect::<Vec<u8>>();
        for copy in [&running, &stopped] {
            assert!(
                !holds(copy, seed.as_bytes()),
                "the seed in hex in the database"
            );
            assert!(!holds(copy, &raw), "the seed's bytes in the database");
        }
    }
}

/// A database written before seeds were sealed (format 4, the seed in
/// the clear): the server seals it at startup, leaves no copy in the
/// files (compacted), and the match plays on with the same seed.
#[tokio::test]
async fn a_seed_stored_in_the_clear_is_sealed_at_startup_and_the_match_plays_on() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, one_point()).await;
    fixture.server.terminate();
    let state = stored_state(&fixture, &g.id()).await;
    assert!(state.contains("\"server_seed\":\"sealed1:"), "{state}");
    let plain = "5a".repeat(32);
    let start = state.find("\"server_seed\":\"").unwrap() + "\"server_seed\":\"".len();
    let end = start + state[start..].find('"').unwrap();
    let old = format!("{}{plain}{}", &state[..start], &state[end..])
        .replace("\"format\":6", "\"format\":4");
    set_stored_state(&fixture, &g.id(), &format!("'{}'", old.replace('\'', "''"))).await;
    assert!(holds(&folder_bytes(data_of(&fixture)), plain.as_bytes()));
    fixture.server.restart();
    assert!(
        !holds(&folder_bytes(data_of(&fixture)), plain.as_bytes()),
        "a copy of the seed left in the files"
    );
    assert!(stored_state(&fixture, &g.id()).await.contains("sealed1:"));
    let mut client = connect(&fixture.server.addr).await;
    assert_eq!(revealed_seed(&mut client, &mut g).await, plain);
}

/// The server seed in a game's stored state, opened with `key` (the
/// token key it was sealed under), or why not.
async fn open_stored_seed(fixture: &Fixture, game_id: &str, key: &[u8]) -> Result<String, String> {
    let state = stored_state(fixture, game_id).await;
    let start = state.find("\"server_seed\":\"").unwrap() + "\"server_seed\":\"".len();
    let end = start + state[start..].find('"').unwrap();
    let key: [u8; 32] = key.try_into().unwrap();
    bg_server::snapshot::Seal {
        key: &bg_server::snapshot::SeedKey::derive(&key),
        game_id,
    }
    .open(&state[start..end])
}

fn backgammond(data: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

/// Issue 49, rotation: `backgammond rotate-key NEW` (refused while a
/// server holds the folder) seals the dice seed of a match in progress
/// again under the new key, so the old key opens nothing stored; the
/// data folder's key becomes the new one; the match plays on with the
/// seat tokens first given and reveals the same seed at its end; a
/// retried NewGame cannot give its tokens again (they were derived from
/// the old key); run again, or from a key that is not the database's, it
/// is refused and changes nothing.
#[tokio::test]
async fn rotating_the_key_seals_the_seeds_again_and_the_match_plays_on_with_its_tokens() {
    let mut fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let first = pb::NewGameRequest {
        variant: "standard".into(),
        settings: Some(one_point()),
        request_id: "0b6f7c1e-2d4a-4c8e-9f10-7a3b5c9d1e2f".into(),
        ..Default::default()
    };
    let mut g = variant_game(&mut client, first.clone()).await.unwrap();
    let data = data_of(&fixture).to_path_buf();
    let keys = tempfile::tempdir().unwrap();
    let new_file = keys.path().join("new.key");
    let made = backgammond(&data, &["token-key".as_ref(), new_file.as_os_str()]);
    assert!(made.status.success(), "{made:?}");
    let rotate = [std::ffi::OsStr::new("rotate-key"), new_file.as_os_str()];
    let busy = backgammond(&data, &rotate);
    assert!(!busy.status.success(), "rotated under a running server");
    assert!(
        String::from_utf8_lossy(&busy.stderr).contains("another backgammond"),
        "{busy:?}"
    );

    fixture.server.terminate();
    let old_key = std::fs::read(data.join("server.key")).unwrap();
    let new_key = std::fs::read(&new_file).unwrap();
    let seed = open_stored_seed(&fixture, &g.id(), &old_key).await.unwrap();
    let rotated = backgammond(&data, &rotate);
    assert!(rotated.status.success(), "{rotated:?}");
    assert!(
        String::from_utf8_lossy(&rotated.stdout).contains("1 seeds"),
        "{rotated:?}"
    );
    assert_eq!(std::fs::read(data.join("server.key")).unwrap(), new_key);
    assert!(open_stored_seed(&fixture, &g.id(), &old_key).await.is_err());
    assert_eq!(
        open_stored_seed(&fixture, &g.id(), &new_key).await.unwrap(),
        seed
    );

    // Refused, nothing changed: the same key again, or rotating from a
    // key that is not the database's.
    let again = backgammond(&data, &rotate);
    assert!(!again.status.success(), "{again:?}");
    // Interrupted after the database recorded the new key, before the
    // key file was written (the old key put back): run again, it
    // finishes, the seed still sealed under the new key.
    std::fs::write(data.join("server.key"), &old_key).unwrap();
    let finished = backgammond(&data, &rotate);
    assert!(finished.status.success(), "{finished:?}");
    assert!(
        String::from_utf8_lossy(&finished.stdout).contains("0 seeds"),
        "{finished:?}"
    );
    assert_eq!(std::fs::read(data.join("server.key")).unwrap(), new_key);
    assert_eq!(
        open_stored_seed(&fixture, &g.id(), &new_key).await.unwrap(),
        seed
    );
    let stray = keys.path().join("stray.key");
    std::fs::write(&stray, [9u8; 32]).unwrap();
    let third = keys.path().join("third.key");
    std::fs::write(&third, [10u8; 32]).unwrap();
    let wrong = backgammond(
        &data,
        &[
            "--token-key-file".as_ref(),
            stray.as_os_str(),
            "rotate-key".as_ref(),
            third.as_os_str(),
        ],
    );
    assert!(!wrong.status.success(), "{wrong:?}");
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("not the key this database"),
        "{wrong:?}"
    );
    assert_eq!(std::fs::read(data.join("server.key")).unwrap(), new_key);
    assert_eq!(std::fs::read(&stray).unwrap(), [9u8; 32]);

    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    let retried = client.new_game(first).await.unwrap_err();
    assert_eq!(reason(&retried), "ANSWER_UNAVAILABLE", "{retried:?}");
    assert_eq!(revealed_seed(&mut client, &mut g).await, seed);
}
