//! Match records and IDs checked by GNU Backgammon itself (issue 17):
//! matches played through the API, their snapshots' Match IDs and XGIDs
//! read by gnubg (`set matchid`, `set xgid`), their .mat export imported
//! by gnubg (`import mat`), and what gnubg read compared with what was
//! played. Skipped, saying so, where gnubg is not installed (required in
//! CI).

mod common;

use bg_api::v1 as pb;
use bg_engine::match_id;
use bg_tests::gnubg::Gnubg;
use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::Code;

/// Plays the next action: `step`'s (random plays, doubles now and then),
/// takes and drops (40%), and now and then a resignation by position.
async fn act(client: &mut Client, g: &mut Game, rng: &mut StdRng) {
    if g.game.phase == pb::Phase::CubeOffered as i32 {
        // Drops often enough that every match list has some: this test's
        // first offer is dropped and its second taken (the dice, and so
        // how many offers come, are the server's: three offers all taken
        // at random came one run in five), then 40% of them.
        thread_local! {
            static OFFERS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
        }
        let offer = OFFERS.with(|n| {
            n.set(n.get() + 1);
            n.get()
        });
        let action = match offer {
            1 => pb::DoubleAction::Drop,
            2 => pb::DoubleAction::Take,
            _ if rng.random_bool(0.4) => pb::DoubleAction::Drop,
            _ => pb::DoubleAction::Take,
        };
        let answer = pb::DoubleRequest {
            read_mask: None,
            game_id: g.id(),
            expected_version: g.game.version,
            request_id: String::new(),
            action: action as i32,
        };
        let token = g.to_act_token().to_string();
        g.game = client
            .double(with_token(answer, &token))
            .await
            .unwrap()
            .into_inner();
        return;
    }
    if g.game.phase == pb::Phase::Roll as i32 && rng.random_bool(0.03) {
        resign(client, g).await;
        return;
    }
    step(client, g, rng).await;
}

fn over(g: &Game) -> bool {
    g.game.phase == pb::Phase::MatchOver as i32
}

/// A match to `length` (0: a money session of `games` games), played to
/// its end or `limit` actions; the snapshots seen on the way.
async fn play(
    client: &mut Client,
    rng: &mut StdRng,
    length: u32,
    games: u32,
    limit: usize,
) -> (Game, Vec<pb::Game>) {
    play_setup(client, rng, "standard", length, games, limit).await
}

/// The same from a setup of the standard variant ("standard" or
/// "nackgammon").
async fn play_setup(
    client: &mut Client,
    rng: &mut StdRng,
    setup: &str,
    length: u32,
    games: u32,
    limit: usize,
) -> (Game, Vec<pb::Game>) {
    let settings = pb::MatchSettings {
        match_length: length,
        money_games: (length == 0).then_some(games),
        auto_roll: Some(false),
        ..Default::default()
    };
    let created = client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            options: [("setup".to_string(), setup.to_string())].into(),
            settings: Some(settings),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut g = Game {
        game: created.game.unwrap(),
        tokens: [created.white_token, created.black_token],
    };
    let mut seen = vec![g.game.clone()];
    for _ in 0..limit {
        if over(&g) {
            break;
        }
        act(client, &mut g, rng).await;
        seen.push(g.game.clone());
    }
    (g, seen)
}

/// A Match ID's fields, the dice higher first (gnubg keeps them so).
fn fields(id: &str) -> match_id::MatchInfo {
    let mut info = match_id::decode(id).unwrap_or_else(|e| panic!("{id}: {e}"));
    info.dice = info.dice.map(|(a, b)| (a.max(b), a.min(b)));
    info
}

#[tokio::test]
async fn gnubg_reads_each_snapshots_match_id_and_xgid_as_the_same_state() {
    let Some(gnubg) = Gnubg::find("gnubg_reads_each_snapshots_match_id_and_xgid") else {
        return;
    };
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(17);
    let mut cases = Vec::new();
    // The dice are the server's, so how many snapshots a match gives
    // varies: after the two matches and the money session, more one-game
    // sessions until there are enough cases.
    let plan = [(5, 0), (3, 0), (0, 3)]
        .into_iter()
        .chain(std::iter::repeat_n((0, 1), 20));
    for (i, (length, games)) in plan.enumerate() {
        if i >= 3 && cases.len() > 100 {
            break;
        }
        let (_, seen) = play(&mut client, &mut rng, length, games, 400).await;
        for s in seen {
            // gnubg cannot take a double or a resignation waiting for an
            // answer from a Match ID or an XGID (it steps back).
            let waiting = s.phase == pb::Phase::CubeOffered as i32
                || s.phase == pb::Phase::ResignationOffered as i32;
            if waiting || s.match_id.is_empty() {
                continue;
            }
            assert!(!s.xgid.is_empty(), "an XGID beside the Match ID");
            cases.push((length, s.position_id, s.match_id, s.xgid));
        }
    }
    assert!(cases.len() > 100, "{} snapshots", cases.len());
    let file = gnubg.dir().join("cases.txt");
    let lines: Vec<String> = cases
        .iter()
        .map(|(l, p, m, x)| format!("{l} {p} {m} {x}"))
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let script = r#"
import os
def fresh(length):
    gnubg.command('new match %s' % length if length != '0' else 'new session')
for line in open(os.environ['CASES']):
    length, pid, mid, xgid = line.split()
    fresh(length)
    gnubg.command('set matchid ' + mid)
    gnubg.command('set board ' + pid)
    print('MATCHID', gnubg.positionid(), gnubg.matchid())
    fresh(length)
    gnubg.command('set xgid ' + xgid)
    print('XGID', gnubg.positionid(), gnubg.matchid())
"#;
    let output = gnubg.python(script, &[("CASES", file.to_str().unwrap())]);
    let read: Vec<(&str, &str, &str)> = output
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [kind @ ("MATCHID" | "XGID"), p, m] => Some((*kind, *p, *m)),
                _ => None,
            }
        })
        .collect();
    assert_eq!(read.len(), 2 * cases.len(), "gnubg said:\n{output}");
    for (i, (_, position, ours, xgid)) in cases.iter().enumerate() {
        for (kind, p, m) in &read[2 * i..2 * i + 2] {
            let what = format!("{kind} of {ours} {position} {xgid}");
            assert_eq!(p, position, "{what}");
            assert_eq!(fields(m), fields(ours), "{what}");
        }
    }
}

/// One game as gnubg lists it: the score it began at (white's first),
/// each action (`player action dice moves`), the winner and the points.
#[derive(Debug, PartialEq, Eq, Default)]
struct GameRead {
    score: [u32; 2],
    actions: Vec<String>,
    winner: Option<u32>,
    points: u32,
}

/// What gnubg made of a match file: `import mat` of a .mat file, `load
/// match` of an SGF file.
fn import(gnubg: &Gnubg, text: &str, format: pb::RecordFormat) -> (Vec<GameRead>, String) {
    let (name, command) = match format {
        pb::RecordFormat::Sgf => ("match.sgf", "load match"),
        _ => ("match.mat", "import mat"),
    };
    let file = gnubg.dir().join(name);
    std::fs::write(&file, text).unwrap();
    // In gnubg's Python module player 0 is "X" and player 1 "O".
    let script = r#"
import os
# The matches here play money without the Jacoby rule; a .mat file cannot
# say so and gnubg's default is on (docs/records.md tells users the same).
gnubg.command('set jacoby off')
gnubg.command(os.environ['IMPORT'] + ' ' + os.environ['MATFILE'])
m = gnubg.match(0, 0, 0, 0)
player = {'X': 0, 'O': 1}
for g in m['games']:
    info = g['info']
    print('GAME', info['score-X'], info['score-O'], player.get(info.get('winner'), '-'), info.get('points-won'))
    for r in g['game']:
        moves = ' '.join('%s/%s' % tuple(mv) for mv in r.get('move', []))
        print('ACTION', player.get(r.get('player')), r['action'], ''.join(map(str, r.get('dice', ''))), moves)
"#;
    let output = gnubg.python(
        script,
        &[("MATFILE", file.to_str().unwrap()), ("IMPORT", command)],
    );
    let mut games: Vec<GameRead> = Vec::new();
    for line in output.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["GAME", x, o, winner, points] => games.push(GameRead {
                score: [x.parse().unwrap(), o.parse().unwrap()],
                winner: winner.parse().ok(),
                points: points.parse().unwrap_or(0),
                ..Default::default()
            }),
            ["ACTION", player, action, rest @ ..] => {
                let mut rest = rest.to_vec();
                // gnubg lists a play's moves in an order of its own.
                if rest.len() > 1 {
                    rest[1..].sort_unstable();
                }
                let text = [*player, *action]
                    .iter()
                    .chain(&rest)
                    .copied()
                    .collect::<Vec<_>>();
                games
                    .last_mut()
                    .expect("an action inside a game")
                    .actions
                    .push(text.join(" "))
            }
            _ => {}
        }
    }
    (games, output)
}

/// The same, from the service's own JSON record of the match.
fn games_played(record: &serde_json::Value) -> Vec<GameRead> {
    let player = |seat: &serde_json::Value| match seat.as_str() {
        Some("white") => 0,
        _ => 1,
    };
    let mut games: Vec<GameRead> = Vec::new();
    let mut score = [0u32; 2];
    let mut dice = String::new();
    for action in record["actions"].as_array().unwrap() {
        for e in action["events"].as_array().unwrap() {
            let game = games.last_mut();
            match e["event"].as_str().unwrap() {
                "game_started" => games.push(GameRead {
                    score,
                    ..Default::default()
                }),
                "rolled" => {
                    let (a, b) = (
                        e["dice"]["d1"].as_u64().unwrap(),
                        e["dice"]["d2"].as_u64().unwrap(),
                    );
                    dice = format!("{}{}", a.max(b), a.min(b));
                }
                "moved" => {
                    let play: bg_engine::Play = e["play"].as_str().unwrap().parse().unwrap();
                    let mut moves: Vec<String> = play
                        .moves()
                        .iter()
                        .map(|m| format!("{}/{}", m.from, m.to))
                        .collect();
                    moves.sort_unstable();
                    game.unwrap().actions.push(
                        format!("{} move {dice} {}", player(&e["seat"]), moves.join(" "))
                            .trim_end()
                            .to_string(),
                    );
                }
                "passed" => game
                    .unwrap()
                    .actions
                    .push(format!("{} move {dice}", player(&e["seat"]))),
                "double_offered" => game
                    .unwrap()
                    .actions
                    .push(format!("{} double", player(&e["seat"]))),
                "double_taken" => game
                    .unwrap()
                    .actions
                    .push(format!("{} take", player(&e["seat"]))),
                "double_dropped" => game
                    .unwrap()
                    .actions
                    .push(format!("{} drop", player(&e["seat"]))),
                "game_ended" => {
                    let result = &e["result"];
                    let game = game.unwrap();
                    let winner = player(&result["winner"]);
                    if result["reason"] == "resigned" {
                        game.actions.push(format!("{} resign", 1 - winner));
                    }
                    game.winner = Some(winner);
                    game.points = result["points"].as_u64().unwrap() as u32;
                    score = [
                        e["score"][0].as_u64().unwrap() as u32,
                        e["score"][1].as_u64().unwrap() as u32,
                    ];
                }
                _ => {}
            }
        }
    }
    games
}

async fn export(
    client: &mut Client,
    game_id: &str,
    format: pb::RecordFormat,
) -> pb::ExportMatchResponse {
    client
        .export_match(pb::ExportMatchRequest {
            game_id: game_id.into(),
            format: format as i32,
            white_name: "Alice".into(),
            black_name: "Bob".into(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// Matches to 5 and 7 with doubles, takes, drops and resignations, the
/// Crawford game among them; a money session; a match left in play; a
/// nackgammon match: exported in `format`, read by gnubg as the games
/// played (from the service's JSON record of each), to the final score.
async fn gnubg_reads_the_export_as_the_games_played(gnubg: &Gnubg, format: pb::RecordFormat) {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(1717);
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    let matches = [
        ("standard", 5, 0, 5000),
        ("standard", 7, 0, 5000),
        ("standard", 0, 4, 5000),
        ("standard", 5, 0, 60),
        ("nackgammon", 3, 0, 5000),
    ];
    for (setup, length, games, limit) in matches {
        let (g, _) = play_setup(&mut client, &mut rng, setup, length, games, limit).await;
        let file = export(&mut client, &g.id(), format).await;
        assert_eq!(file.version, g.game.version);
        let extension = if format == pb::RecordFormat::Mat {
            ".mat"
        } else {
            ".sgf"
        };
        assert!(file.file_name.ends_with(extension), "{}", file.file_name);
        let json = export(&mut client, &g.id(), pb::RecordFormat::Json).await;
        let record: serde_json::Value = serde_json::from_str(&json.text).unwrap();
        assert_eq!(record["version"], g.game.version);
        let played = games_played(&record);
        assert!(!played.is_empty());
        for action in played.iter().flat_map(|g| &g.actions) {
            for kind in ["double", "take", "drop", "resign", "move"] {
                if action.split(' ').nth(1) == Some(kind) {
                    *seen.entry(kind).or_default() += 1;
                }
            }
        }
        let text = &file.text;
        let (read, output) = import(gnubg, text, format);
        assert_eq!(read.len(), played.len(), "{text}\ngnubg:\n{output}");
        if let (true, Some(last)) = (over(&g), read.last().filter(|l| l.winner.is_some())) {
            // The final score: the last game's start and its points.
            let mut score = last.score;
            score[last.winner.unwrap_or_default() as usize] += last.points;
            let ours = g.game.score.unwrap();
            assert_eq!(score, [ours.white, ours.black], "{text}\ngnubg:\n{output}");
        }
        for (i, (read, played)) in read.iter().zip(&played).enumerate() {
            let game = i + 1;
            if played.actions.len() == 1 && played.actions[0].ends_with(" resign") {
                // Resigned before anything was played: a .mat file has
                // only the winner's `Wins` line, and gnubg records no
                // result for a game with no move (the next game's score
                // line carries the points, checked there).
                if format == pb::RecordFormat::Mat && read.actions.is_empty() {
                    continue;
                }
            }
            assert_eq!(
                read.score, played.score,
                "game {game} of\n{text}\ngnubg:\n{output}"
            );
            assert_eq!(
                read.actions, played.actions,
                "game {game} of\n{text}\ngnubg:\n{output}"
            );
            if played.winner.is_some() {
                *seen.entry("game").or_default() += 1;
                assert_eq!(
                    (read.winner, read.points),
                    (played.winner, played.points),
                    "game {game} of\n{text}\ngnubg:\n{output}"
                );
            }
        }
    }
    // The matches held every kind of action.
    for kind in ["double", "take", "drop", "resign", "move", "game"] {
        assert!(
            seen.get(kind).is_some_and(|&n| n > 0),
            "no {kind}: {seen:?}"
        );
    }
}

#[tokio::test]
async fn gnubg_imports_the_mat_export_as_the_games_played() {
    if let Some(gnubg) = Gnubg::find("gnubg_imports_the_mat_export") {
        gnubg_reads_the_export_as_the_games_played(&gnubg, pb::RecordFormat::Mat).await;
    }
}

#[tokio::test]
async fn gnubg_loads_the_sgf_export_as_the_games_played() {
    if let Some(gnubg) = Gnubg::find("gnubg_loads_the_sgf_export") {
        gnubg_reads_the_export_as_the_games_played(&gnubg, pb::RecordFormat::Sgf).await;
    }
}

#[tokio::test]
async fn a_variant_off_the_standard_board_exports_as_json_only() {
    let fixture = start_with_plugins(&[("bg_trictrac", "libbg_trictrac.so")], &[]);
    let mut client = connect(&fixture.server.addr).await;
    let g = variant_match(&mut client, "trictrac", pb::MatchSettings::default()).await;
    let refused = client
        .export_match(pb::ExportMatchRequest {
            game_id: g.id(),
            format: pb::RecordFormat::Mat as i32,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert_eq!(reason(&refused), "UNSUPPORTED_FORMAT");
    assert!(
        g.game.match_id.is_empty() && g.game.xgid.is_empty(),
        "backgammon's IDs only"
    );
    let json = export(&mut client, &g.id(), pb::RecordFormat::Json).await;
    let record: serde_json::Value = serde_json::from_str(&json.text).unwrap();
    assert_eq!(record["variant"], "trictrac");
    assert_eq!(record["actions"][0]["version"], 1);
    let first = record["actions"][0]["events"].as_array().unwrap();
    assert!(
        first.iter().any(|e| e["event"] == "game_started"),
        "{first:?}"
    );
    // A format not given, a name with a space: refused, saying which field.
    let no_format = client
        .export_match(pb::ExportMatchRequest {
            game_id: g.id(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(no_format.code(), Code::InvalidArgument);
    let spaced = client
        .export_match(pb::ExportMatchRequest {
            game_id: g.id(),
            format: pb::RecordFormat::Json as i32,
            white_name: "Ann Lee".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(spaced.code(), Code::InvalidArgument);
    assert!(
        spaced.message().contains("white_name"),
        "{}",
        spaced.message()
    );
}

async fn new_game_at(
    client: &mut Client,
    xgid: &str,
    gnubg_id: &str,
) -> Result<pb::NewGameResponse, tonic::Status> {
    client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            xgid: xgid.into(),
            gnubg_id: gnubg_id.into(),
            settings: Some(pb::MatchSettings {
                auto_roll: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

/// The first nine XGID fields (the tenth, the highest cube, is the
/// match's setting, not the position's).
fn xgid_state(x: &str) -> String {
    x.rsplit_once(':').unwrap().0.to_string()
}

/// NewGame takes up a match where an XGID or a gnubg ID says: the first
/// game from that position, score and cube, that player to roll; the
/// snapshot gives back the same XGID and Match ID, and gnubg reads the
/// given XGID as the snapshot's Position ID and Match ID.
#[tokio::test]
async fn a_match_is_taken_up_where_an_xgid_or_a_gnubg_id_says() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let xgids = [
        // Money, start position, bottom (black) to roll.
        "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10",
        // 5-point match at 2-1 (black 2, white 1), cube 2 owned by black,
        // white to roll.
        "XGID=-b---BD-B---eE---c-e----B-:1:1:-1:00:2:1:0:5:10",
        // The Crawford game: white at 4 of 5.
        "XGID=-b---BD-B---eE---c-e----B-:0:0:-1:00:1:4:1:5:10",
        // Post-Crawford: black at 4 of 5, cube 2 owned by white, black on roll.
        "XGID=-b---BD-B---eE---c-e----B-:1:-1:1:00:4:2:0:5:10",
    ];
    let mut taken = Vec::new();
    for x in xgids {
        let created = new_game_at(&mut client, x, "").await.unwrap();
        let game = created.game.unwrap();
        assert_eq!(xgid_state(&game.xgid), xgid_state(x), "{x}");
        let expected = bg_engine::xgid::decode(x).unwrap().match_info();
        assert_eq!(
            fields(&game.match_id),
            fields(&match_id::encode(&expected).unwrap()),
            "{x}"
        );
        assert_eq!(game.phase, pb::Phase::Roll as i32, "{x}");
        assert_eq!(game.game_number, 1);
        assert!(game.last_events.iter().any(|e| e.kind == "game_started"));
        // The same state again from its gnubg ID.
        let id = format!("{}:{}", game.position_id, game.match_id);
        let again = new_game_at(&mut client, "", &id)
            .await
            .unwrap()
            .game
            .unwrap();
        assert_eq!(
            (&again.position_id, &again.match_id),
            (&game.position_id, &game.match_id)
        );
        taken.push((x, game));
    }
    if let Some(gnubg) = Gnubg::find("a_match_is_taken_up_where_an_xgid_says") {
        let file = gnubg.dir().join("xgids.txt");
        let lines: Vec<String> = taken.iter().map(|(x, _)| x.to_string()).collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        let script = r#"
import os
for line in open(os.environ['XGIDS']):
    gnubg.command('new session')
    gnubg.command('set xgid ' + line.strip())
    print('READ', gnubg.positionid(), gnubg.matchid())
"#;
        let output = gnubg.python(script, &[("XGIDS", file.to_str().unwrap())]);
        let read: Vec<(&str, &str)> = output
            .lines()
            .filter_map(
                |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                    ["READ", p, m] => Some((*p, *m)),
                    _ => None,
                },
            )
            .collect();
        assert_eq!(read.len(), taken.len(), "{output}");
        for ((x, game), (p, m)) in taken.iter().zip(read) {
            assert_eq!(p, game.position_id, "{x}");
            assert_eq!(fields(m), fields(&game.match_id), "{x}");
        }
    }
}

/// A taken-up match plays on to its end, later games from the usual
/// setup; a retry of an action after the game moved on gets its first
/// answer, rebuilt from the log from the taken-up start.
#[tokio::test]
async fn a_taken_up_match_plays_on_and_its_retries_are_rebuilt() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut rng = StdRng::seed_from_u64(99);
    let created = new_game_at(
        &mut client,
        "XGID=-b---BD-B---eE---c-e----B-:1:1:-1:00:2:1:0:5:10",
        "",
    )
    .await
    .unwrap();
    let mut g = Game {
        game: created.game.unwrap(),
        tokens: [created.white_token, created.black_token],
    };
    // The first action, sent with an id, kept to be sent again.
    let first = next_action(&g.game, &mut rng, false).unwrap();
    let token = g.to_act_token().to_string();
    let answer = send(&mut client, &first, &token).await.unwrap();
    g.game = answer.clone();
    let mut second_game_start = None;
    for _ in 0..3000 {
        if over(&g) {
            break;
        }
        act(&mut client, &mut g, &mut rng).await;
        if g.game.game_number == 2 && second_game_start.is_none() {
            second_game_start = Some(g.game.position_id.clone());
        }
    }
    assert!(over(&g), "the match ends");
    assert!(g.game.results.len() >= 2 || g.game.results[0].points >= 3);
    let again = send(&mut client, &first, &token).await.unwrap();
    assert_eq!(again, answer, "the retry gets the first answer");
    // A later game starts from the usual setup (a second game, if the
    // first did not end the match).
    if let Some(start) = second_game_start {
        assert_eq!(
            start, "4HPwATDgc/ABMA",
            "the second game starts from the setup"
        );
    }
}

/// A malformed ID, dice given, a match length the settings contradict, a
/// Crawford game nobody is at match point for: each refused with
/// INVALID_ARGUMENT saying what is wrong.
#[tokio::test]
async fn a_start_the_service_cannot_take_up_is_refused_naming_what_is_wrong() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let position = "-b---BD-B---eE---c-e----B-";
    let cases: [(&str, &str, &str); 7] = [
        (
            &format!("XGID={position}:1:0:1:00:0:0:0:5:10"),
            "",
            "centred cube",
        ),
        ("XGID=nonsense", "", "xgid"),
        (&format!("XGID={position}:0:0:1:53:0:0:0:0:10"), "", "dice"),
        (
            &format!("XGID={position}:0:0:1:00:0:0:1:5:10"),
            "",
            "Crawford",
        ),
        (
            &format!("XGID={position}:0:0:1:00:5:0:0:5:10"),
            "",
            "match length",
        ),
        ("", "4HPwATDgc/ABMA", "POSITION_ID:MATCH_ID"),
        ("", "4HPwATDgc/ABMA:cInpAAAAAAAA", "dice"),
    ];
    for (xgid, gnubg_id, says) in cases {
        let refused = new_game_at(&mut client, xgid, gnubg_id).await.unwrap_err();
        assert_eq!(
            refused.code(),
            Code::InvalidArgument,
            "{xgid}{gnubg_id}: {refused:?}"
        );
        assert!(
            refused.message().contains(says),
            "{xgid}{gnubg_id}: {}",
            refused.message()
        );
    }
    let plakoto = client
        .new_game(pb::NewGameRequest {
            variant: "plakoto".into(),
            xgid: format!("XGID={position}:0:0:1:00:0:0:0:5:10"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        plakoto.message().contains("standard backgammon only")
            || plakoto.message().contains("unknown variant"),
        "{}",
        plakoto.message()
    );
    let conflicting = client
        .new_game(pb::NewGameRequest {
            variant: "standard".into(),
            xgid: format!("XGID={position}:0:0:1:00:0:0:0:5:10"),
            settings: Some(pb::MatchSettings {
                match_length: 7,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        conflicting.message().contains("5-point match"),
        "{}",
        conflicting.message()
    );
}
