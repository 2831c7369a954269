//! `bgctl` against a running server, as two players in two terminals use
//! it: one tokens file, each command a process of its own. The server is
//! the real service (SQLite file, the standard plugin from its file, gRPC
//! over a socket), run in this test's process.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use bg_api::v1 as pb;
use bg_tests::plugin_dir;

/// The operator's token every server here is started with.
const OPERATOR_TOKEN: &str = "the-operator-token-of-the-bgctl-tests-0123456789";

struct Server {
    addr: String,
    /// What it was started with, to start it again.
    config: bg_server::Config,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    plugins: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        Server::start_on(bg_server::Database::Sqlite(None), None)
    }

    /// A server on this database, with this token key file.
    fn start_on(database: bg_server::Database, token_key_file: Option<&Path>) -> Server {
        Server::start_with(database, token_key_file, None)
    }

    /// A server on SQLite speaking TLS.
    fn start_tls(tls: bg_server::TlsFiles) -> Server {
        Server::start_with(bg_server::Database::Sqlite(None), None, Some(tls))
    }

    fn start_with(
        database: bg_server::Database,
        token_key_file: Option<&Path>,
        tls: Option<bg_server::TlsFiles>,
    ) -> Server {
        Server::launch(
            database,
            token_key_file,
            tls,
            &[("bg_standard", "libbg_standard.so")],
        )
    }

    /// A server on SQLite with every shipped variant.
    fn start_every_variant() -> Server {
        Server::launch(
            bg_server::Database::Sqlite(None),
            None,
            None,
            &[
                ("bg_standard", "libbg_standard.so"),
                ("bg_caucasian", "libbg_caucasian.so"),
                ("bg_plakoto", "libbg_plakoto.so"),
                ("bg_trictrac", "libbg_trictrac.so"),
            ],
        )
    }

    fn launch(
        database: bg_server::Database,
        token_key_file: Option<&Path>,
        tls: Option<bg_server::TlsFiles>,
        plugins: &[(&str, &str)],
    ) -> Server {
        Server::launch_configured(database, token_key_file, tls, plugins, |_| {})
    }

    /// A server on SQLite with the standard plugin and webhooks to these
    /// endpoints.
    fn start_with_webhooks(webhooks: Vec<bg_server::fleet::webhooks::Endpoint>) -> Server {
        Server::launch_configured(
            bg_server::Database::Sqlite(None),
            None,
            None,
            &[("bg_standard", "libbg_standard.so")],
            move |config| config.webhooks = webhooks,
        )
    }

    fn launch_configured(
        database: bg_server::Database,
        token_key_file: Option<&Path>,
        tls: Option<bg_server::TlsFiles>,
        plugins: &[(&str, &str)],
        configure: impl FnOnce(&mut bg_server::Config),
    ) -> Server {
        let plugins = plugin_dir(plugins);
        let data = tempfile::tempdir().unwrap();
        // A free port: bound, read, released for the server to take.
        let listen: SocketAddr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let config = bg_server::Config {
            listen,
            plugin_dirs: vec![plugins.path().to_path_buf()],
            data_dir: data.path().to_path_buf(),
            database,
            token_key_file: token_key_file.map(Path::to_path_buf),
            durability: bg_store::Durability::Full,
            plugin_scan_interval: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(5),
            idle_eviction: Duration::from_secs(300),
            request_retention: None,
            watch_resync: Duration::from_secs(5),
            tls,
            limits: bg_server::Limits::default(),
            finished_retention: None,
            archive_dir: None,
            clock_sweep: Duration::from_millis(250),
            clock_restart_grace: Duration::from_secs(30),
            plugin_call_timeout: std::time::Duration::from_secs(2),
            plugin_workers: None,
            operator_token: Some(OPERATOR_TOKEN.to_string()),
            feed_window: Some(Duration::from_secs(3600)),
            cors_origins: Vec::new(),
            webhooks: Vec::new(),
            web_client: true,
        };
        let mut config = config;
        configure(&mut config);
        let mut server = Server {
            addr: format!("http://{listen}"),
            config,
            stop: None,
            thread: None,
            plugins,
            _data: data,
        };
        server.run();
        server
    }

    /// Runs the server on a thread of its own until stopped, and waits
    /// until it listens.
    fn run(&mut self) {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let config = self.config.clone();
        let listen = config.listen;
        self.thread = Some(std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime
                .block_on(bg_server::run(config, async {
                    let _ = stopped.await;
                }))
                .unwrap();
        }));
        self.stop = Some(stop);
        for _ in 0..200 {
            if std::net::TcpStream::connect(listen).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the server did not listen on {listen}");
    }

    /// Stops the server (as SIGTERM does) and waits until it has stopped.
    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Stops the server and starts it again on the same port and data.
    fn restart(&mut self) {
        self.stop();
        self.run();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `bgctl ARGS` against the server with this tokens file.
fn bgctl(server: &Server, tokens: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .arg("--addr")
        .arg(&server.addr)
        .arg("--tokens")
        .arg(tokens)
        .args(args)
        .output()
        .unwrap()
}

/// Its standard output, after checking that it succeeded.
fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The value after `label` on the line that has it, up to the next gap.
fn field<'a>(shown: &'a str, label: &str) -> &'a str {
    let at = shown
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in\n{shown}"));
    let rest = shown[at + label.len()..].lines().next().unwrap_or_default();
    rest.split("   ").next().unwrap().trim()
}

#[test]
fn two_players_share_a_tokens_file_and_each_acts_only_for_its_seat() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");

    let created = ok(bgctl(
        &server,
        &tokens,
        &["new", "--variant", "standard", "--match", "3"],
    ));
    let game = field(&created, "game id:").to_string();
    assert!(tokens.exists(), "the seat tokens are kept");

    // The opening roll is thrown: the starter must move.
    let shown = ok(bgctl(&server, &tokens, &["show", &game]));
    assert_eq!(field(&shown, "phase:"), "move", "{shown}");
    let mover = field(&shown, "to act:").to_string();
    let waiting = if mover == "white" { "black" } else { "white" };
    let plays = field(&shown, "legal plays (");
    let (_, plays) = plays.split_once("): ").expect("a list of plays");
    let play: Vec<&str> = plays.split(", ").next().unwrap().split(' ').collect();

    // The other seat cannot play the turn; nothing changes.
    let mut refused = vec!["move", &game, "--as", waiting];
    refused.extend(&play);
    let output = bgctl(&server, &tokens, &refused);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("NOT_YOUR_TURN"), "{error}");
    assert_eq!(ok(bgctl(&server, &tokens, &["show", &game])), shown);

    // The mover plays, then the other seat rolls.
    let mut moved = vec!["move", &game, "--as", &mover];
    moved.extend(&play);
    let after_move = ok(bgctl(&server, &tokens, &moved));
    assert_eq!(field(&after_move, "to act:"), waiting, "{after_move}");
    assert_eq!(
        field(&after_move, "last action:"),
        format!("{mover} moves {}", play.join(" ")),
        "{after_move}"
    );
    assert!(after_move.contains("version 2"), "{after_move}");
    let rolled = ok(bgctl(&server, &tokens, &["roll", &game, "--as", waiting]));
    assert!(rolled.contains("version 3"), "{rolled}");
    assert!(
        rolled.contains(&format!("last action: {waiting} rolls ")),
        "{rolled}"
    );
}

/// `bgctl new --position-id` starts the match from a gnubg position (read
/// with white on roll); a malformed id is refused before anything is sent.
#[test]
fn a_match_can_start_from_a_gnubg_position_id() {
    use bg_engine::{Seat, position_id};

    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    // A middle-game position from the gnubg corpus.
    let id = "iU/kATDgc+EBSA";
    let created = ok(bgctl(&server, &tokens, &["new", "--position-id", id]));
    let board = position_id::decode(id, Seat::White).unwrap();
    // The snapshot's id is from the view of whoever won the opening roll.
    let views = [id.to_string(), position_id::encode(&board, Seat::Black)];
    let shown = field(&created, "position id:");
    assert!(views.iter().any(|v| v == shown), "{shown} not in {views:?}");

    let refused = bgctl(&server, &tokens, &["new", "--position-id", "not-an-id"]);
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("not a gnubg Position ID"), "{error}");
}

/// `bench load` and `bench watch` over two replicas on one PostgreSQL (a
/// private cluster; skipped, saying so, where PostgreSQL is missing).
#[test]
fn the_benchmarks_spread_over_replicas_given_as_several_addresses() {
    let Some(cluster) = bg_tests::postgres::PgCluster::start() else {
        return;
    };
    let url = cluster.create_database("bench_replicas");
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("token.key");
    std::fs::write(&key, [3u8; 32]).unwrap();
    let replicas =
        [0, 1].map(|_| Server::start_on(bg_server::Database::Postgres(url.clone()), Some(&key)));
    let addrs = format!("{},{}", replicas[0].addr, replicas[1].addr);
    let bench = |args: &[&str]| {
        ok(Command::new(env!("CARGO_BIN_EXE_bgctl"))
            .args(["--addr", &addrs, "bench"])
            .args(args)
            .output()
            .unwrap())
    };
    // The count a load run's first line gives for `name`.
    let count = |load: &str, name: &str| -> u64 {
        let field = load
            .split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {load}"));
        field.parse().unwrap()
    };
    let load = bench(&["load", "--concurrency", "4", "--seconds", "0.5"]);
    assert!(
        load.starts_with("mode=classic servers=2 concurrency=4"),
        "{load}"
    );
    assert!(
        load.lines().last().unwrap().starts_with("move_rps="),
        "{load}"
    );
    // A Roll and a Move a turn (and a version a game created).
    let (moves, actions) = (count(&load, "moves"), count(&load, "actions"));
    assert!(moves > 0 && actions >= 2 * moves, "{load}");
    // With auto-roll, one call a turn: about as many actions as moves.
    let load = bench(&[
        "load",
        "--concurrency",
        "4",
        "--seconds",
        "0.5",
        "--auto-roll",
    ]);
    assert!(load.starts_with("mode=auto-roll servers=2"), "{load}");
    let (moves, actions) = (count(&load, "moves"), count(&load, "actions"));
    assert!(
        moves > 0 && actions > moves && actions < 2 * moves,
        "{load}"
    );
    let watch = bench(&["watch", "--actions", "30"]);
    assert!(
        watch.starts_with("servers=2 actions=30 watch_delay_ms p50="),
        "{watch}"
    );
}

/// Issue 16: the address as the server prints it (`host:port`) works; a
/// user's mistake is one line on stderr and exit code 1, with no
/// backtrace even when RUST_BACKTRACE asks for one; a repeated option is
/// refused, naming it, rather than the last one silently winning.
#[test]
fn a_user_mistake_is_one_clear_line_and_host_port_is_an_address() {
    let server = Server::start();
    let tokens_dir = tempfile::tempdir().unwrap();
    let tokens = tokens_dir.path().join("tokens.toml");
    let host_port = server
        .addr
        .strip_prefix("http://")
        .unwrap_or(&server.addr)
        .to_string();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bgctl"))
            .args(["--addr", &host_port, "--tokens"])
            .arg(&tokens)
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap()
    };
    assert!(ok(run(&["variants"])).contains("standard"));

    let repeated = run(&[
        "new",
        "--option",
        "setup=standard",
        "--option",
        "setup=nackgammon",
    ]);
    assert_eq!(repeated.status.code(), Some(1));
    let error = String::from_utf8_lossy(&repeated.stderr);
    assert!(error.contains("--option setup is given twice"), "{error}");
    assert_eq!(error.trim_end().lines().count(), 1, "{error}");

    let unknown = run(&["show", "6a1f3c0e-0d0b-4b8e-9c3e-2f1d7a5b9e41"]);
    assert_eq!(unknown.status.code(), Some(1));
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(error.starts_with("bgctl: "), "{error}");
    assert!(!error.contains("stack backtrace"), "{error}");
    assert_eq!(error.trim_end().lines().count(), 1, "{error}");
}

/// The first legal play the board lists, as `bgctl move` takes it.
fn first_play(shown: &str) -> Vec<String> {
    let plays = field(shown, "legal plays (");
    let (_, plays) = plays.split_once("): ").expect("a list of plays");
    plays
        .split(", ")
        .next()
        .unwrap()
        .split(' ')
        .map(String::from)
        .collect()
}

fn other(seat: &str) -> &'static str {
    if seat == "white" { "black" } else { "white" }
}

/// The README's short game (and docs/bgctl.md's walk-through), whatever the dice: the opening throw decides
/// who starts, `to act:` and the legal plays say what to do, a game is
/// named by the end of its id, the cube and a resignation are told in
/// players' words, and a Roll finding the dice thrown says so.
#[test]
fn the_readme_walk_through_works_whatever_the_dice() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let run = |args: &[&str]| ok(bgctl(&server, &tokens, args));

    let created = run(&["new", "--match", "3"]);
    assert!(created.contains("options: setup=standard"), "{created}");
    assert!(
        created.contains("settings: a match to 3, cube up to 64, auto-roll off"),
        "{created}"
    );
    let whole = field(&created, "game id:").to_string();
    let game = &whole[whole.len() - 8..];
    assert!(created.contains(&format!("e.g. {game}")), "{created}");
    let starter = field(&created, "to act:").to_string();
    assert!(
        field(&created, "last action:").contains(&format!("{starter} wins the opening throw")),
        "{created}"
    );

    // The opening throw is the starter's roll: rolling again says so.
    let again = run(&["roll", game, "--as", &starter]);
    assert!(
        again.contains(&format!("{starter}'s dice are already thrown")),
        "{again}"
    );
    assert!(again.contains("version 1"), "{again}");

    let mut args = vec![
        "move".to_string(),
        game.into(),
        "--as".into(),
        starter.clone(),
    ];
    args.extend(first_play(&created));
    let moved = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let second = other(&starter);
    assert_eq!(field(&moved, "to act:"), second, "{moved}");

    // The second player doubles before rolling; the starter takes.
    let offered = run(&["double", game, "--as", second]);
    assert_eq!(
        field(&offered, "last action:"),
        format!("{second} doubles to 2")
    );
    let taken = run(&["double", game, "--as", &starter, "take"]);
    assert_eq!(field(&taken, "last action:"), format!("{starter} takes"));
    assert_eq!(field(&taken, "cube:"), format!("2 ({starter})"), "{taken}");

    // The match so far, as gnubg's .mat and as the service's JSON record;
    // the board shows the Match ID and the XGID beside the Position ID.
    let mat = run(&["export", game, "--format", "mat", "--white", "Ann"]);
    assert!(
        mat.starts_with("\n 3 point match\n\n Game 1\n Ann : 0 "),
        "{mat}"
    );
    assert!(mat.contains("Doubles => 2"), "{mat}");
    let json = run(&["export", game]);
    assert!(
        json.contains("\"record\": \"backgammon-service match\""),
        "{json}"
    );
    assert!(taken.contains("match id: "), "{taken}");
    assert!(field(&taken, "xgid:").starts_with("XGID="), "{taken}");

    // Resigning by position scores the position as it stands, times the
    // cube: with no checker borne off, at least a gammon.
    let resigned = run(&["resign", game, "--as", &starter]);
    let told = field(&resigned, "last action:");
    assert!(
        told.starts_with(&format!(
            "{starter} resigns a gammon: {second} wins 4 points"
        )) || told.starts_with(&format!(
            "{starter} resigns a backgammon: {second} wins 6 points"
        )),
        "{resigned}"
    );

    // Offer mode: a level is offered and declined; a higher one is taken.
    let created = run(&["new", "--match", "3", "--resign-offers"]);
    assert!(created.contains("resignations offered"), "{created}");
    let game = field(&created, "game id:").to_string();
    let starter = field(&created, "to act:").to_string();
    let offered = run(&["resign", &game, "--as", &starter, "--level", "1"]);
    assert_eq!(
        field(&offered, "last action:"),
        format!("{starter} offers to resign a single game")
    );
    let declined = run(&["resign", &game, "--as", other(&starter), "--decline"]);
    assert_eq!(
        field(&declined, "last action:"),
        format!("{} declines the resignation", other(&starter))
    );
    let again = bgctl(
        &server,
        &tokens,
        &["resign", &game, "--as", &starter, "--level", "1"],
    );
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(error.contains("level 1 was declined"), "{error}");
    run(&["resign", &game, "--as", &starter, "--level", "2"]);
    let accepted = run(&["resign", &game, "--as", other(&starter), "--accept"]);
    assert!(
        field(&accepted, "last action:").starts_with(&format!(
            "{starter} resigns a gammon: {} wins 2 points",
            other(&starter)
        )),
        "{accepted}"
    );
}

/// A game is named by any start or end of its id that is one game's in the
/// tokens file; a part several games share, or none, is refused, saying
/// what to give.
#[test]
fn a_shortened_game_id_names_one_game_of_the_tokens_file() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let first = field(&ok(bgctl(&server, &tokens, &["new"])), "game id:").to_string();
    let second = field(&ok(bgctl(&server, &tokens, &["new"])), "game id:").to_string();
    for part in [&first[first.len() - 6..], &first[..first.len() - 4]] {
        let shown = ok(bgctl(&server, &tokens, &["show", part]));
        assert!(shown.starts_with(&format!("game {first} ")), "{shown}");
    }
    // Both ids begin with their creation time.
    let shared = bgctl(&server, &tokens, &["show", &first[..4]]);
    assert!(!shared.status.success());
    let error = String::from_utf8_lossy(&shared.stderr);
    assert!(error.contains("is part of 2 game ids"), "{error}");
    assert!(error.contains(&second), "{error}");
    let unknown = bgctl(&server, &tokens, &["roll", "zzzz", "--as", "white"]);
    assert!(!unknown.status.success());
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(error.contains("no game zzzz in the tokens file"), "{error}");
}

/// With auto-roll, a move's answer tells the move and the opponent's roll;
/// a checker sent to the bar is marked on the move that hit it (`13/7*`),
/// as players write it. Plays the first legal play until a hit happens.
#[test]
fn a_hit_is_marked_in_the_move_that_made_it() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let run = |args: &[&str]| ok(bgctl(&server, &tokens, args));
    // A long match, not a one-game money session: a game that ends
    // without a hit (first plays can run both sides past each other) is
    // followed by the next.
    let created = run(&["new", "--match", "25", "--cube-max", "0"]);
    assert!(created.contains("no cube, auto-roll on"), "{created}");
    let game = field(&created, "game id:").to_string();
    let bar = |shown: &str, seat: &str| -> u32 {
        let at = field(shown, "bar:");
        let n = if seat == "white" { 1 } else { 3 };
        at.split(' ').nth(n).unwrap().parse().unwrap()
    };
    let mut shown = created;
    for _ in 0..200 {
        let mover = field(&shown, "to act:").to_string();
        let before = bar(&shown, other(&mover));
        let mut args = vec![
            "move".to_string(),
            game.clone(),
            "--as".into(),
            mover.clone(),
        ];
        args.extend(first_play(&shown));
        shown = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let told = field(&shown, "last action:").to_string();
        assert!(told.starts_with(&format!("{mover} moves ")), "{shown}");
        if told.contains(" wins ") {
            // A game ended (no hit in it): the next begins; play on.
            continue;
        }
        assert!(
            told.contains(&format!("{} rolls ", other(&mover))),
            "auto-roll throws for the next player: {shown}"
        );
        if bar(&shown, other(&mover)) > before {
            assert!(told.contains('*'), "a hit is marked: {shown}");
            return;
        }
        assert!(!told.contains('*'), "no hit, no mark: {shown}");
    }
    panic!("no hit in 200 turns of first legal plays");
}

#[test]
fn bgctl_speaks_tls_and_presents_its_client_certificate() {
    use bg_tests::certs::Authority;
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server_pem = ca.server("server");
    let client_pem = ca.client("bgctl");
    let server = Server::start_tls(bg_server::TlsFiles {
        cert: server_pem.cert.clone(),
        key: server_pem.key.clone(),
        client_ca: Some(ca.cert.clone()),
    });
    let host_port = server.addr.strip_prefix("http://").unwrap().to_string();
    let tokens = dir.path().join("tokens.json");
    let run = |extra: &[&str], args: &[&str]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_bgctl"))
            .arg("--addr")
            .arg(&host_port)
            .arg("--tokens")
            .arg(&tokens)
            .args(extra)
            .args(args)
            .output()
            .unwrap()
    };
    let ca_file = ca.cert.to_str().unwrap();
    let identity = [
        "--tls-ca",
        ca_file,
        "--tls-cert",
        client_pem.cert.to_str().unwrap(),
        "--tls-key",
        client_pem.key.to_str().unwrap(),
    ];
    let listed = ok(run(&identity, &["variants"]));
    assert!(listed.starts_with("standard "), "{listed}");
    let created = ok(run(&identity, &["new", "--match", "1"]));
    let game = field(&created, "game id:").to_string();
    let shown = ok(run(&identity, &["show", &game]));
    assert_eq!(field(&shown, "phase:"), "move", "{shown}");

    // Without a client certificate, or speaking plain TCP: one line, exit 1.
    for extra in [&["--tls-ca", ca_file][..], &[][..]] {
        let refused = run(extra, &["variants"]);
        assert_eq!(refused.status.code(), Some(1), "{extra:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.starts_with("bgctl: ") && stderr.trim_end().lines().count() == 1,
            "{extra:?}: {stderr}"
        );
        if !extra.is_empty() {
            assert!(stderr.contains("client certificate"), "{stderr}");
        }
    }
    // TLS options with an http:// address are a contradiction, said so.
    let contradiction = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .args([
            "--addr",
            &format!("http://{host_port}"),
            "--tls-ca",
            ca_file,
            "variants",
        ])
        .output()
        .unwrap();
    assert_eq!(contradiction.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&contradiction.stderr).contains("write https://"),
        "{contradiction:?}"
    );
}

/// `bgctl verify`: a match in progress is not yet verifiable (its seed is
/// secret); a finished one verifies from the server and from its saved
/// record; a record whose dice were changed, even with the events told
/// to match, is caught and the die named.
#[test]
fn bgctl_verify_checks_every_die_of_a_finished_match_and_names_a_tampered_one() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let run = |args: &[&str]| ok(bgctl(&server, &tokens, args));

    let created = run(&["new", "--match", "3", "--black-seed", "black's seed"]);
    let game = field(&created, "game id:").to_string();
    // The opening throw: two dice, or more after ties.
    let opening_dice: u64 = field(&created, "verifiable dice:")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        opening_dice >= 2 && opening_dice.is_multiple_of(2),
        "{created}"
    );
    assert!(created.contains(" thrown, commitment "), "{created}");
    assert!(
        created.contains(r#"seeds: white none, black "black's seed""#),
        "{created}"
    );
    let starter = field(&created, "to act:").to_string();
    let mut args = vec![
        "move".to_string(),
        game.clone(),
        "--as".into(),
        starter.clone(),
    ];
    args.extend(first_play(&created));
    run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let second = other(&starter);
    let rolled = bgctl(
        &server,
        &tokens,
        &[
            "roll",
            &game,
            "--as",
            second,
            "--dice-seed",
            "second's seed",
        ],
    );
    if second == "black" {
        // Black gave its seed at NewGame: one a match.
        let error = String::from_utf8_lossy(&rolled.stderr);
        assert!(error.contains("black has given a seed already"), "{error}");
        run(&["roll", &game, "--as", second]);
    } else {
        let rolled = ok(rolled);
        assert!(
            rolled.contains(&format!(
                r#"seeds: white "second's seed" (from die {opening_dice})"#
            )),
            "{rolled}"
        );
    }

    // Not over: the seed is secret, nothing can be verified yet.
    let early = bgctl(&server, &tokens, &["verify", &game]);
    assert_eq!(early.status.code(), Some(1));
    let error = String::from_utf8_lossy(&early.stderr);
    assert!(error.contains("is not over"), "{error}");

    // Resignations end the match (each worth 2 or 3 points).
    let mut shown = String::new();
    for _ in 0..3 {
        shown = run(&["show", &game]);
        if shown.contains("match over") {
            break;
        }
        let to_act = field(&shown, "to act:").to_string();
        shown = run(&["resign", &game, "--as", &to_act]);
    }
    assert!(shown.contains("match over"), "{shown}");
    assert!(shown.contains("server seed (revealed): "), "{shown}");

    // Against the commitment `new` saved in the tokens file.
    let verified = run(&["verify", &game]);
    assert!(verified.starts_with("verified: all "), "{verified}");
    assert!(verified.contains(&game), "{verified}");
    assert!(
        verified.contains("hashes to the commitment published when the match was created"),
        "{verified}"
    );
    // The seeds given through bgctl, checked: black's at NewGame, and
    // white's with its roll when white rolled second.
    assert!(
        verified.contains(r#"black "black's seed" from die 0, as given"#),
        "{verified}"
    );
    if second == "white" {
        assert!(
            verified.contains(&format!(
                r#"white "second's seed" from die {opening_dice}, as given"#
            )),
            "{verified}"
        );
    }
    let other_commitment = "ab".repeat(32);
    let refused = bgctl(
        &server,
        &tokens,
        &["verify", &game, "--commitment", &other_commitment],
    );
    assert_eq!(refused.status.code(), Some(1));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("is not the one published"), "{error}");

    // Offline, from the saved record; then with one die changed.
    let saved = dir.path().join("match.json");
    std::fs::write(&saved, run(&["export", &game])).unwrap();
    let verified = run(&["verify", "--file", saved.to_str().unwrap()]);
    assert!(verified.starts_with("verified: all "), "{verified}");

    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let (at, die) = tamper_last_roll(&mut record);
    std::fs::write(&saved, record.to_string()).unwrap();
    let refused = bgctl(
        &server,
        &tokens,
        &["verify", "--file", saved.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(1));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.starts_with("bgctl: NOT verified"), "{error}");
    assert!(
        error.contains(&format!("die {at} (counting from 0) was {die}")),
        "{error}"
    );
}

/// Changes the first die of the record's last rolled throw, in the
/// action's dice and in its event alike (as a server rewriting history
/// would): the die's number in the match and its new value.
fn tamper_last_roll(record: &mut serde_json::Value) -> (usize, u64) {
    let actions = record["actions"].as_array_mut().unwrap();
    let mut before = 0;
    let mut target = None;
    for (i, action) in actions.iter().enumerate() {
        let thrown = action["dice"].as_array().map_or(0, Vec::len);
        let rolled = action["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "rolled");
        if rolled && thrown == 2 {
            target = Some((i, before));
        }
        before += thrown;
    }
    let (i, at) = target.expect("a roll in the match");
    let action = &mut actions[i];
    let die = action["dice"][0].as_u64().unwrap() % 6 + 1;
    action["dice"][0] = die.into();
    let second = action["dice"][1].clone();
    for event in action["events"].as_array_mut().unwrap() {
        if event["event"] == "rolled" {
            event["dice"]["d1"] = die.into();
            event["dice"]["d2"] = second.clone();
        }
    }
    (at, die)
}

/// Random play for the record tests: a small xorshift, so that each run
/// plays the same choices (the dice still differ).
struct Choices(u64);

impl Choices {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Plays a whole match of `request` at random (doubles, drops and
/// resignations now and then, every variant decision), and returns its
/// JSON record and the commitment published at NewGame.
async fn play_a_match(
    addr: &str,
    request: pb::NewGameRequest,
    choices: &mut Choices,
) -> (String, String) {
    use bg_api::v1::game_service_client::GameServiceClient;
    let mut client = GameServiceClient::connect(addr.to_string()).await.unwrap();
    let created = client.new_game(request).await.unwrap().into_inner();
    let tokens = [created.white_token, created.black_token];
    let mut game = created.game.unwrap();
    let commitment = game.verifiable_dice.clone().unwrap().commitment;
    fn to_act<T>(message: T, game: &pb::Game, tokens: &[String; 2]) -> tonic::Request<T> {
        let token = &tokens[usize::from(game.to_act == pb::Seat::Black as i32)];
        let mut request = tonic::Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        request
    }
    for _ in 0..5_000 {
        let (id, version) = (game.game_id.clone(), game.version);
        let double = |action: pb::DoubleAction| pb::DoubleRequest {
            game_id: id.clone(),
            expected_version: version,
            action: action as i32,
            ..Default::default()
        };
        let roll = pb::RollRequest {
            game_id: id.clone(),
            expected_version: version,
            ..Default::default()
        };
        let answer = match pb::Phase::try_from(game.phase).unwrap() {
            pb::Phase::MatchOver => break,
            pb::Phase::Roll if game.cube.is_some() && choices.below(8) == 0 => {
                let offer = double(pb::DoubleAction::Offer);
                match client.double(to_act(offer, &game, &tokens)).await {
                    // The cube may not be available: roll.
                    Err(s) if s.code() == tonic::Code::FailedPrecondition => {
                        client.roll(to_act(roll, &game, &tokens)).await
                    }
                    answer => answer,
                }
            }
            pb::Phase::Roll if game.variant != "trictrac" && choices.below(60) == 0 => {
                let resign = pb::ResignRequest {
                    game_id: id,
                    expected_version: version,
                    action: pb::ResignAction::Resign as i32,
                    ..Default::default()
                };
                client.resign(to_act(resign, &game, &tokens)).await
            }
            pb::Phase::Roll => client.roll(to_act(roll, &game, &tokens)).await,
            pb::Phase::Move => {
                let plays = &game.legal_plays;
                let play = plays[choices.below(plays.len())].notation.clone();
                let request = pb::MoveRequest {
                    game_id: id,
                    expected_version: version,
                    notation: play,
                    ..Default::default()
                };
                client.r#move(to_act(request, &game, &tokens)).await
            }
            pb::Phase::CubeOffered => {
                let action = if choices.below(3) == 0 {
                    pb::DoubleAction::Drop
                } else {
                    pb::DoubleAction::Take
                };
                client.double(to_act(double(action), &game, &tokens)).await
            }
            pb::Phase::Decision => {
                let choices_now = &game.decision.as_ref().unwrap().choices;
                let choice = choices_now[choices.below(choices_now.len())].clone();
                let request = pb::DecideRequest {
                    game_id: id,
                    expected_version: version,
                    choice,
                    ..Default::default()
                };
                client.decide(to_act(request, &game, &tokens)).await
            }
            phase => panic!("unexpected phase {phase:?}"),
        };
        game = answer.unwrap().into_inner();
    }
    assert_eq!(game.phase, pb::Phase::MatchOver as i32, "the match ended");
    let record = client
        .export_match(pb::ExportMatchRequest {
            game_id: game.game_id,
            format: pb::RecordFormat::Json as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    (record.text, commitment)
}

/// Every genuine record verifies: matches of every shipped variant played
/// at random through the server, with the cube, drops, resignations,
/// auto-roll and its passes, automatic doubles on opening ties, tric-trac's
/// stay or go, each checked by `bgctl verify --file` against the
/// commitment published when it began.
#[test]
fn bgctl_verify_accepts_the_record_of_every_kind_of_match() {
    let server = Server::start_every_variant();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let settings = |s: pb::MatchSettings| Some(s);
    let cases = [
        (
            "standard",
            settings(pb::MatchSettings {
                match_length: 5,
                auto_roll: Some(false),
                ..Default::default()
            }),
        ),
        (
            "standard",
            settings(pb::MatchSettings {
                money_games: Some(4),
                auto_doubles: 2,
                first_move: pb::FirstMove::OpeningRoll as i32,
                auto_roll: Some(true),
                ..Default::default()
            }),
        ),
        (
            "standard",
            settings(pb::MatchSettings {
                match_length: 3,
                cube_max: Some(0),
                ..Default::default()
            }),
        ),
        (
            "caucasian",
            settings(pb::MatchSettings {
                match_length: 3,
                ..Default::default()
            }),
        ),
        (
            "plakoto",
            settings(pb::MatchSettings {
                match_length: 3,
                ..Default::default()
            }),
        ),
        ("trictrac", None),
    ];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut choices = Choices(0x9e37_79b9_7f4a_7c15);
    for (n, (variant, settings)) in cases.into_iter().enumerate() {
        let request = pb::NewGameRequest {
            variant: variant.into(),
            settings,
            white_seed: format!("white {n}"),
            ..Default::default()
        };
        let (record, commitment) =
            runtime.block_on(play_a_match(&server.addr, request, &mut choices));
        // What the record holds, for the log of the run.
        let kinds = [
            "opening_tie",
            "passed",
            "decided",
            "double_dropped",
            "game_ended",
        ];
        let counts: Vec<String> = kinds
            .iter()
            .map(|k| {
                format!(
                    "{k} {}",
                    record.matches(&format!("\"event\": \"{k}\"")).count()
                )
            })
            .collect();
        eprintln!("{variant} #{n}: {}", counts.join(", "));
        let saved = dir.path().join(format!("{variant}-{n}.json"));
        std::fs::write(&saved, &record).unwrap();
        let output = bgctl(
            &server,
            &tokens,
            &[
                "--plugin-dir",
                server.plugins.path().to_str().unwrap(),
                "verify",
                "--file",
                saved.to_str().unwrap(),
                "--commitment",
                &commitment,
                "--white-seed",
                &format!("white {n}"),
                "--black-seed",
                "",
            ],
        );
        let verified = ok(output);
        assert!(
            verified.contains("hashes to the commitment published when the match was created"),
            "{variant}: {verified}"
        );
        assert!(
            verified.contains(&format!("opening rule: the {variant} plugin's")),
            "{variant}: {verified}"
        );
    }
}

/// Issue 34: `bgctl bench load` goes on through a server restart, sending
/// its calls again with their request ids (it used to exit 1 with a
/// transport error), and, given `--tokens`, saves the games it created
/// there, playable afterwards.
#[test]
fn bench_load_goes_on_through_a_restart_and_saves_its_games_with_tokens() {
    let mut server = Server::start();
    let folder = tempfile::tempdir().unwrap();
    let tokens = folder.path().join("bench-tokens.json");
    let bench = Command::new(env!("CARGO_BIN_EXE_bgctl"))
        .arg("--addr")
        .arg(&server.addr)
        .arg("--tokens")
        .arg(&tokens)
        .args(["bench", "load", "--concurrency", "4", "--seconds", "3"])
        .args(["--slice-seconds", "0.5", "--auto-roll"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    server.restart();
    let output = bench.wait_with_output().unwrap();
    let printed = ok(output);
    let retries: u64 = field(&printed, "retries=")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        retries > 0,
        "calls were sent again after the restart:\n{printed}"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tokens).unwrap()).unwrap();
    let games: Vec<String> = saved
        .as_object()
        .unwrap_or_else(|| panic!("{saved}"))
        .keys()
        .cloned()
        .collect();
    assert!(!games.is_empty(), "{saved}");
    // The saved tokens work: a game the bench played is shown.
    let shown = ok(bgctl(&server, &tokens, &["show", &games[0]]));
    assert!(shown.contains(&games[0]), "{shown}");
}

/// `bgctl new --clock` takes a clock as a tournament director writes it
/// and shows both clocks under the board; a clock that makes no sense is
/// refused by the server, naming the field.
#[test]
fn bgctl_new_takes_a_clock_and_shows_it_under_the_board() {
    let server = Server::start();
    let folder = tempfile::tempdir().unwrap();
    let tokens = folder.path().join("tokens.json");
    let shown = ok(bgctl(
        &server,
        &tokens,
        &["new", "--match", "3", "--clock", "2m/point+12s"],
    ));
    let line = shown
        .lines()
        .find(|l| l.starts_with("clock: "))
        .unwrap_or_else(|| panic!("no clock line in\n{shown}"));
    assert!(
        line.starts_with("clock: white 6:00, black 6:00, "),
        "{line}"
    );
    assert!(line.contains("'s time runs (delay 0:1"), "{line}");
    let refused = bgctl(&server, &tokens, &["new", "--clock", "+12s"]);
    assert!(!refused.status.success());
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("settings.clock.reserve_ms"), "{error}");
}

/// docs/bot.md's session: a match against the service's computer player
/// (black, no token), a hint for white, white's move answered with
/// black's reply in the same call, a resignation, and the analysis.
#[test]
fn a_match_against_the_computer_with_a_hint_and_an_analysis() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let created = ok(bgctl(
        &server,
        &tokens,
        &[
            "new",
            "--match",
            "1",
            "--bot",
            "black",
            "--hints",
            "--cube-max",
            "0",
        ],
    ));
    assert!(
        created.contains("black is played by the service's computer player"),
        "{created}"
    );
    let game = field(&created, "game id:").to_string();
    // The computer's seat has no token to act with.
    let refused = bgctl(&server, &tokens, &["roll", &game, "--as", "black"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("played by the service"),
        "{refused:?}"
    );
    // Auto-roll is on without a cube: white has dice to play.
    let hint = ok(bgctl(&server, &tokens, &["hint", &game, "--top", "1"]));
    assert!(hint.contains("white to play"), "{hint}");
    let best = hint
        .lines()
        .find(|l| l.trim_start().starts_with("1. "))
        .unwrap_or_else(|| panic!("no ranked play in {hint}"));
    let play: Vec<&str> = best
        .trim_start()
        .trim_start_matches("1. ")
        .split("  ")
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let mut args = vec!["move", game.as_str(), "--as", "white"];
    args.extend(play);
    let moved = ok(bgctl(&server, &tokens, &args));
    let last = field(&moved, "last action:");
    assert!(
        last.contains("black moves")
            || last.contains("black passes")
            || last.contains("black cannot"),
        "{last}"
    );
    ok(bgctl(&server, &tokens, &["resign", &game, "--as", "white"]));
    let analysis = ok(bgctl(&server, &tokens, &["analyze", &game, "--all"]));
    assert!(analysis.contains("judged at 1-ply"), "{analysis}");
    assert!(analysis.contains("black: error rate 0.0"), "{analysis}");
    assert!(
        analysis.contains("white played") || analysis.contains("white move"),
        "{analysis}"
    );
}

/// A seat that acts out of turn is told which seat the game waits for,
/// so that the README's walk-through can be followed whoever starts.
#[test]
fn acting_out_of_turn_says_which_seat_to_act_as() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let created = ok(bgctl(&server, &tokens, &["new", "--match", "3"]));
    let game = field(&created, "game id:").to_string();
    let mover = field(&created, "to act:").to_string();
    let mut args = vec![
        "move".to_string(),
        game.clone(),
        "--as".into(),
        other(&mover).into(),
    ];
    args.extend(first_play(&created));
    let refused = bgctl(
        &server,
        &tokens,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(refused.status.code(), Some(1));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("NOT_YOUR_TURN"), "{error}");
    assert!(
        error.contains(&format!("the game waits for {mover} to move")),
        "{error}"
    );
    assert!(
        error.trim_end().ends_with(&format!("(try --as {mover})")),
        "{error}"
    );
    assert_eq!(error.trim_end().lines().count(), 1, "{error}");
}

/// `bgctl new --first-move` sets who starts the games after the first;
/// the settings line under the board says it, with hints and the clock.
#[test]
fn bgctl_new_sets_who_starts_later_games_and_the_settings_line_says_it() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let created = ok(bgctl(
        &server,
        &tokens,
        &[
            "new",
            "--match",
            "3",
            "--first-move",
            "opening-roll",
            "--hints",
            "--clock",
            "2m/point+12s",
        ],
    ));
    let settings = created
        .lines()
        .find(|l| l.starts_with("settings: "))
        .unwrap_or_else(|| panic!("no settings line in\n{created}"));
    assert!(
        settings.ends_with(
            ", an opening throw every game, hints on, clock 2m/point+12s (running out costs the match)"
        ),
        "{settings}"
    );
    let created = ok(bgctl(
        &server,
        &tokens,
        &["new", "--match", "3", "--first-move", "winner"],
    ));
    assert!(
        created.contains(", the winner of a game starts the next, hints off, no clock\n"),
        "{created}"
    );
    let refused = bgctl(&server, &tokens, &["new", "--first-move", "sometimes"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}

/// `bgctl variants` says a cube an option turns on is off by default, by
/// the option the variant declares.
#[test]
fn bgctl_variants_says_a_cube_off_by_default_is_off() {
    let server = Server::start_every_variant();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let listed = ok(bgctl(&server, &tokens, &["variants"]));
    let cube_of = |variant: &str| -> String {
        let mut lines = listed.lines();
        lines
            .find(|l| l.starts_with(&format!("{variant} ")))
            .unwrap_or_else(|| panic!("no {variant} in\n{listed}"));
        field(lines.next().unwrap(), "cube:").to_string()
    };
    assert_eq!(cube_of("plakoto"), "off by default (option cube=on)");
    assert_eq!(cube_of("standard"), "yes");
    assert_eq!(cube_of("trictrac"), "no");
}

/// Against the computer, the answer to a move holds its reply: a checker
/// it hits is marked in its play (`bar/20*`) as in the player's own.
/// Plays the first legal play until the computer hits.
#[test]
fn the_computers_reply_carries_its_hit_marks() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    let run = |args: &[&str]| ok(bgctl(&server, &tokens, args));
    let created = run(&[
        "new",
        "--match",
        "25",
        "--cube-max",
        "0",
        "--bot",
        "black:advanced",
    ]);
    let game = field(&created, "game id:").to_string();
    let white_bar = |shown: &str| -> u32 {
        field(shown, "bar:")
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut shown = created;
    for _ in 0..200 {
        assert_eq!(field(&shown, "to act:"), "white", "{shown}");
        let play = first_play(&shown);
        let before = white_bar(&shown);
        let mut args = vec![
            "move".to_string(),
            game.clone(),
            "--as".into(),
            "white".into(),
        ];
        args.extend(play.iter().cloned());
        shown = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let told = field(&shown, "last action:").to_string();
        if told.contains(" wins ") {
            continue;
        }
        let replies: Vec<&str> = told
            .split(", ")
            .filter(|part| part.starts_with("black moves "))
            .collect();
        // White entered nothing and its bar gained: black hit.
        let entered = play.iter().any(|m| m.starts_with("bar"));
        if before == 0 && !entered && white_bar(&shown) > 0 {
            assert!(
                replies.iter().any(|r| r.contains('*')),
                "the computer's hit is marked: {shown}"
            );
            return;
        }
        if white_bar(&shown) == before && !entered {
            assert!(
                replies.iter().all(|r| !r.contains('*')),
                "no hit, no mark: {shown}"
            );
        }
    }
    panic!("the computer did not hit in 200 turns of first legal plays");
}

/// Issue 46 from the terminal: matches created with labels and player
/// ids, listed by a selector and by player, then followed in the feed
/// from the list's cursor and resumed after an event's cursor.
#[test]
fn bgctl_lists_the_matches_it_labelled_and_follows_the_feed() {
    let server = Server::start();
    let folder = tempfile::tempdir().unwrap();
    let tokens = folder.path().join("tokens.json");
    let operator = folder.path().join("operator.token");
    std::fs::write(&operator, OPERATOR_TOKEN).unwrap();
    let operator = operator.to_str().unwrap();
    // A fleet command with the operator's token.
    let fleet = |command: &str, args: &[&str]| {
        let mut all = vec![command, "--operator-token-file", operator];
        all.extend_from_slice(args);
        ok(bgctl(&server, &tokens, &all))
    };
    for table in ["1", "2"] {
        ok(bgctl(
            &server,
            &tokens,
            &[
                "new",
                "--match",
                "1",
                "--label",
                "tournament=spring",
                "--label",
                &format!("table={table}"),
                "--player",
                "white=ann",
                "--player",
                "black=bob",
            ],
        ));
    }
    ok(bgctl(&server, &tokens, &["new", "--player", "white=cat"]));
    let listed = fleet("matches", &["--selector", "tournament=spring", "--all"]);
    let rows: Vec<&str> = listed
        .lines()
        .filter(|l| l.contains(" standard "))
        .collect();
    assert_eq!(rows.len(), 2, "{listed}");
    assert!(
        rows[0].contains("players=ann/bob") && rows[0].contains("table=1"),
        "{listed}"
    );
    assert!(rows[1].contains("table=2"), "{listed}");
    let cursor = listed
        .lines()
        .last()
        .and_then(|l| l.split("--after ").nth(1))
        .map(|c| c.trim_end_matches([')', '`']).to_string())
        .unwrap_or_else(|| panic!("no cursor in\n{listed}"));
    let cats = fleet("matches", &["--player", "cat"]);
    assert_eq!(
        cats.lines().filter(|l| l.contains(" standard ")).count(),
        1,
        "{cats}"
    );
    // Without the operator's token: refused, saying why.
    let refused = bgctl(&server, &tokens, &["matches"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("FLEET_ACCESS_DENIED"));
    // The feed from the oldest: three creations; resumed after the first,
    // the two others.
    let all = fleet("feed", &["--from-oldest", "--count", "3"]);
    let events: Vec<&str> = all.lines().collect();
    assert_eq!(events.len(), 3, "{all}");
    assert!(events.iter().all(|e| e.contains(" created ")), "{all}");
    let first = events[0].rsplit("cursor=").next().unwrap();
    let rest = fleet("feed", &["--after", first, "--count", "2"]);
    assert_eq!(rest.lines().collect::<Vec<_>>(), events[1..], "{rest}");
    // From the list's cursor: what happened after the list, a new match.
    ok(bgctl(&server, &tokens, &["new", "--label", "late=yes"]));
    let since = fleet("feed", &["--after", &cursor, "--count", "1"]);
    assert!(
        since.lines().last().unwrap().contains("late=yes"),
        "{since}"
    );
}

/// Issue 46: the operator sees where webhook deliveries stand. The
/// endpoint here is down (nothing listens on its port): each delivery is
/// pending, retried, with the failure's reason.
#[test]
fn bgctl_webhooks_shows_each_endpoint_and_where_its_deliveries_stand() {
    let folder = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        folder.path().join("s"),
        "whsec_dGhlLWNsaS10ZXN0cy13ZWJob29rLXNlY3JldC0zMg==",
    )
    .unwrap();
    let file = folder.path().join("webhooks.toml");
    std::fs::write(
        &file,
        format!(
            "[[endpoint]]\nname = \"site\"\nurl = \"http://127.0.0.1:{port}/hooks\"\nsecret_file = \"s\"\nfirst_retry_seconds = 0.1\n"
        ),
    )
    .unwrap();
    let server = Server::start_with_webhooks(bg_server::fleet::webhooks::read(&file).unwrap());
    let tokens = folder.path().join("tokens.json");
    let operator = folder.path().join("operator.token");
    std::fs::write(&operator, OPERATOR_TOKEN).unwrap();
    let operator = operator.to_str().unwrap();
    ok(bgctl(&server, &tokens, &["new", "--label", "t=1"]));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let shown = loop {
        let shown = ok(bgctl(
            &server,
            &tokens,
            &[
                "webhooks",
                "--operator-token-file",
                operator,
                "--state",
                "pending",
            ],
        ));
        // Retried: a second attempt (or more) has failed too.
        if shown.contains(" created pending attempts=") && !shown.contains("attempts=1 ") {
            break shown;
        }
        assert!(std::time::Instant::now() < deadline, "{shown}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "site http://127.0.0.1:{port}/hooks pending=1 delivered=0 failed=0"
        )),
        "{shown}"
    );
    assert!(
        lines[1].contains(" next=") && lines[1].contains("error="),
        "{shown}"
    );
    let counts = ok(bgctl(
        &server,
        &tokens,
        &["webhooks", "--operator-token-file", operator, "--counts"],
    ));
    assert_eq!(counts.lines().count(), 1, "{counts}");
    let refused = bgctl(&server, &tokens, &["webhooks"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("FLEET_ACCESS_DENIED"));
}
