//! Issue 37: plugins that crash, spin, eat memory or answer garbage, in
//! both modes (`--plugin-isolation in-process` and `process`), through a
//! real server process with the faulty test plugin beside the standard
//! one, a standard game being played all the while.
//!
//! Isolated, each fault ends one worker process and fails one call: the
//! game it was for is unchanged and judged afresh next time, the same
//! request sent again fails the same way, and the server, its health
//! checks and the other games go on. In process, an abort, a segfault or
//! memory without end ends the server (that is what the mode cannot
//! contain), and a restart on the same data loses nothing.

mod common;

use std::time::Duration;

use bg_api::v1 as pb;
use bg_tests::plugin_dir;
use bg_tests::server::ServerProcess;
use common::*;
use rand::SeedableRng;
use tonic::Code;

const PLUGINS: [(&str, &str); 2] = [
    ("bg_standard", "libbg_standard.so"),
    ("bg_test_faulty", "libbg_test_faulty.so"),
];

/// The server's arguments for plugins in worker processes.
const ISOLATED: [&str; 6] = [
    "--plugin-isolation",
    "process",
    "--plugin-call-timeout-ms",
    "1500",
    "--plugin-memory-limit-mb",
    "256",
];

/// Plays the standard game `g` step by step until `stop` is set; returns
/// it as last answered.
fn keep_playing(
    addr: String,
    mut g: Game,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Game> {
    tokio::spawn(async move {
        let mut client = connect(&addr).await;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if g.game.phase == pb::Phase::MatchOver as i32 {
                break;
            }
            step(&mut client, &mut g, &mut rng).await;
        }
        g
    })
}

/// A faulty game's first move: the answer, and the move request.
async fn faulty_move(client: &mut Client, g: &Game) -> (tonic::Status, pb::MoveRequest) {
    let request = move_request(g, &g.game.legal_plays[0].notation, "faulty-move");
    let status = tokio::time::timeout(
        Duration::from_secs(30),
        client.r#move(with_token(request.clone(), g.to_act_token())),
    )
    .await
    .expect("answered, not hung")
    .unwrap_err();
    (status, request)
}

async fn serving(addr: &str) -> bool {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut health = HealthClient::new(channel(addr).await);
    let answer = health
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await;
    answer.is_ok_and(|a| {
        a.into_inner().status
            == tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    })
}

/// Each fault, and what the answer to the move says happened.
const CONTAINED: [(&str, &str); 5] = [
    ("spin", "deadline"),
    ("abort", "SIGABRT"),
    ("segfault", "SIGSEGV"),
    // Past the worker's memory limit, its allocator fails and aborts.
    ("allocate", "signal"),
    ("garbage", "unreadable"),
];

/// A server with [`PLUGINS`], its warnings logged to a file.
struct Logged {
    server: ServerProcess,
    log: std::path::PathBuf,
    _folders: [tempfile::TempDir; 2],
}

impl Logged {
    fn start(args: &[&str]) -> Logged {
        let plugins = plugin_dir(&PLUGINS);
        let data = tempfile::tempdir().unwrap();
        let log = data.path().join("server.log");
        let server = ServerProcess::start_logging(
            env!("CARGO_BIN_EXE_backgammond").as_ref(),
            plugins.path(),
            data.path(),
            args,
            "warn",
            &log,
        );
        Logged {
            server,
            log,
            _folders: [plugins, data],
        }
    }

    /// The log's last line that names a variant failure.
    fn last_failure(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .rev()
            .find(|l| l.contains("variant failure"))
            .unwrap_or_default()
            .to_string()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn in_worker_processes_a_crash_a_spin_memory_without_end_or_garbage_fails_only_that_call() {
    let fixture = Logged::start(&ISOLATED);
    let addr = fixture.server.addr.clone();
    let mut client = connect(&addr).await;
    let sound = new_game(&mut client, pb::MatchSettings::default()).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let played = keep_playing(addr.clone(), sound, stop.clone());

    for (fault, said) in CONTAINED {
        let g = faulty_game(&mut client, fault).await;
        let (status, request) = faulty_move(&mut client, &g).await;
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::Internal, "VARIANT_FAULT"),
            "{fault}: {status:?}"
        );
        let logged = fixture.last_failure();
        assert!(logged.contains(said), "{fault}: {logged}");
        // The game is unchanged, and shown by a fresh worker.
        let unchanged = get_game(&mut client, &g).await;
        assert_eq!(unchanged.version, g.game.version, "{fault}");
        assert_eq!(unchanged.board, g.game.board, "{fault}");
        // The same request again: judged afresh, failing the same way.
        let again = client
            .r#move(with_token(request, g.to_act_token()))
            .await
            .unwrap_err();
        assert_eq!(reason(&again), "VARIANT_FAULT", "{fault}: {again:?}");
        assert!(serving(&addr).await, "{fault}: health");
        assert_eq!(unhealthy(&mut client, "faulty").await, "", "{fault}");
    }

    // The variant itself still plays, and so did the standard game.
    let mut sound_faulty = faulty_game(&mut client, "none").await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..6 {
        step(&mut client, &mut sound_faulty, &mut rng).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sound = played.await.unwrap();
    assert!(sound.game.version > 10, "the standard game went on");
    assert_eq!(
        stored_history(&mut client, &sound.id()).await.len() as u64,
        sound.game.version,
        "every action of the standard game was kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn in_process_garbage_fails_only_that_call() {
    let fixture = Logged::start(&[]);
    let mut client = connect(&fixture.server.addr).await;
    let g = faulty_game(&mut client, "garbage").await;
    let (status, _) = faulty_move(&mut client, &g).await;
    assert_eq!(reason(&status), "VARIANT_FAULT", "{status:?}");
    let logged = fixture.last_failure();
    assert!(logged.contains("unreadable"), "{logged}");
    assert_eq!(get_game(&mut client, &g).await.version, g.game.version);
    assert!(serving(&fixture.server.addr).await);
}

/// What in-process mode cannot contain: the process ends. Nothing
/// answered before is lost: a restart on the same data shows every game
/// as it was.
#[tokio::test(flavor = "multi_thread")]
async fn in_process_an_abort_a_segfault_or_memory_without_end_ends_the_server_and_a_restart_loses_nothing()
 {
    use std::os::unix::process::ExitStatusExt;
    for (fault, signal) in [
        ("abort", libc::SIGABRT),
        ("segfault", libc::SIGSEGV),
        ("allocate", libc::SIGABRT),
    ] {
        let mut fixture = start_with_plugins(&PLUGINS, &[]);
        let mut client = connect(&fixture.server.addr).await;
        let mut sound = new_game(&mut client, pb::MatchSettings::default()).await;
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..8 {
            step(&mut client, &mut sound, &mut rng).await;
        }
        let g = faulty_game(&mut client, fault).await;
        if fault == "allocate" {
            // A limit on the server's address space, so that memory
            // without end ends in a failed allocation, not in the
            // machine's OOM killer.
            let pid = fixture.server.pid().unwrap();
            let size = address_space(pid);
            set_limit(
                pid,
                libc::RLIMIT_AS,
                size + (512 << 20),
                libc::RLIM_INFINITY,
            );
        }
        let request = move_request(&g, &g.game.legal_plays[0].notation, "m");
        let lost = client
            .r#move(with_token(request, g.to_act_token()))
            .await
            .unwrap_err();
        assert_ne!(reason(&lost), "VARIANT_FAULT", "{fault}: {lost:?}");
        let ended = fixture
            .server
            .wait_exit(Duration::from_secs(30))
            .expect("the server ended");
        assert_eq!(ended.signal(), Some(signal), "{fault}: {ended:?}");

        fixture.server.restart();
        let mut client = connect(&fixture.server.addr).await;
        let shown = get_game(&mut client, &sound).await;
        assert_eq!(
            (shown.version, &shown.board),
            (sound.game.version, &sound.game.board),
            "{fault}"
        );
        assert_eq!(get_game(&mut client, &g).await.version, g.game.version);
    }
}

/// The address space a process uses now (VmSize), in bytes.
fn address_space(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// An isolated server whose faulty plugin crashes as it loads while its
/// marker file exists (made now if `marked`): the server, the marker, and
/// the folders to keep.
fn crashing_at_load_if_marked(
    marked: bool,
) -> (ServerProcess, std::path::PathBuf, [tempfile::TempDir; 2]) {
    let plugins = plugin_dir(&PLUGINS);
    let data = tempfile::tempdir().unwrap();
    let marker = data.path().join("crash-at-load");
    if marked {
        std::fs::write(&marker, b"").unwrap();
    }
    let server = ServerProcess::start_with_env(
        env!("CARGO_BIN_EXE_backgammond").as_ref(),
        plugins.path(),
        data.path(),
        &ISOLATED,
        &[("BG_TEST_FAULTY_CRASH_AT_LOAD_IF", marker.to_str().unwrap())],
    );
    (server, marker, [plugins, data])
}

/// A worker that crashes as it starts is not started again at once: the
/// variant is unhealthy, saying why and when it is tried next, and its
/// calls fail at once; once the plugin starts again, the variant plays.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_crashes_as_it_starts_is_started_again_only_after_a_back_off() {
    let (server, marker, _folders) = crashing_at_load_if_marked(false);
    let mut client = connect(&server.addr).await;
    let g = faulty_game(&mut client, "segfault").await;
    let fine = faulty_game(&mut client, "none").await;
    // From now on, a new worker crashes as it loads the plugin.
    std::fs::write(&marker, b"").unwrap();
    let (status, _) = faulty_move(&mut client, &g).await;
    assert_eq!(reason(&status), "VARIANT_FAULT", "{status:?}");
    // The next call needs a new worker, which crashes as it starts. Which
    // of two answers it gets is a race, and both are right: the start
    // that fails may be this call's own (a call that faulted:
    // VARIANT_FAULT), or a replacement's begun before it, whose back-off
    // refuses this call before any start (VARIANT_UNAVAILABLE).
    let failed = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: fine.id(),
        })
        .await
        .unwrap_err();
    assert!(
        [
            (Code::Internal, "VARIANT_FAULT"),
            (Code::Unavailable, "VARIANT_UNAVAILABLE")
        ]
        .contains(&(failed.code(), reason(&failed).as_str())),
        "{failed:?}"
    );
    let why = unhealthy(&mut client, "faulty").await;
    assert!(
        why.contains("failed to start") && why.contains("next try in"),
        "{why}"
    );
    // Calls are refused meanwhile, without starting a worker.
    let refused = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: fine.id(),
        })
        .await
        .unwrap_err();
    assert!(
        refused.message().contains("unavailable"),
        "{refused:?} ({why})"
    );
    // Refused before any call, until the back-off ends: UNAVAILABLE, and
    // when to try again.
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::Unavailable, "VARIANT_UNAVAILABLE"),
        "{refused:?}"
    );
    let retry_after: u64 = error_metadata(&refused, "retry_after_ms")
        .and_then(|ms| ms.parse().ok())
        .expect("retry_after_ms");
    assert!((1..=30_000).contains(&retry_after), "{refused:?}");
    assert!(serving(&server.addr).await);

    // The plugin starts again: after the back-off, the variant plays.
    std::fs::remove_file(&marker).unwrap();
    let start = std::time::Instant::now();
    let shown = loop {
        match client
            .get_game(pb::GetGameRequest {
                read_mask: None,
                game_id: fine.id(),
            })
            .await
        {
            Ok(shown) => break shown.into_inner(),
            Err(status) => assert!(
                start.elapsed() < Duration::from_secs(40),
                "never back: {status:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(shown.version, fine.game.version);
    let mut fine = fine;
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..4 {
        step(&mut client, &mut fine, &mut rng).await;
    }
}

/// A plugin whose worker crashes as it first loads is skipped, saying
/// why, and the server serves the other variants.
#[tokio::test(flavor = "multi_thread")]
async fn in_worker_processes_a_plugin_that_crashes_as_it_loads_is_skipped() {
    let (server, _, _folders) = crashing_at_load_if_marked(true);
    let mut client = connect(&server.addr).await;
    assert_eq!(variant_names(&mut client).await, ["standard"]);
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for _ in 0..4 {
        step(&mut client, &mut g, &mut rng).await;
    }
}

/// Worker processes do not outlive the server, not even one spinning in
/// a call: killed with the server (SIGKILL, no chance to clean up), they
/// are gone within seconds.
#[tokio::test(flavor = "multi_thread")]
async fn worker_processes_end_with_the_server_even_one_spinning_in_a_call() {
    let mut fixture = start_with_plugins(
        &PLUGINS,
        &[
            "--plugin-isolation",
            "process",
            "--plugin-call-timeout-ms",
            "60000",
        ],
    );
    let mut client = connect(&fixture.server.addr).await;
    let g = faulty_game(&mut client, "spin").await;
    let request = with_token(
        move_request(&g, &g.game.legal_plays[0].notation, "spin"),
        g.to_act_token(),
    );
    let spinning = tokio::spawn(async move { client.r#move(request).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let server = fixture.server.pid().unwrap();
    let all_children = children_of(server);
    assert!(
        all_children.len() >= 2,
        "a worker per variant at least: {all_children:?}"
    );
    fixture.server.kill();
    let _ = spinning.await;
    let start = std::time::Instant::now();
    while all_children
        .iter()
        .any(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists() && !zombie(*pid))
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "workers outlived the server: {all_children:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The child processes of `pid` (from every thread of it).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` has exited and waits to be reaped (by init, here).
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

/// The plugin written in C (examples/c-plugin) is served like any other,
/// in process and in worker processes: games through the API to the end.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_written_in_c_plays_whole_games_in_both_modes() {
    for args in [&[][..], &ISOLATED[..]] {
        let plugins = tempfile::tempdir().unwrap();
        bg_tests::compile_c_plugin(plugins.path());
        let data = tempfile::tempdir().unwrap();
        let server = ServerProcess::start_with(
            env!("CARGO_BIN_EXE_backgammond").as_ref(),
            plugins.path(),
            data.path(),
            args,
        );
        let mut client = connect(&server.addr).await;
        assert_eq!(variant_names(&mut client).await, ["c_backgammon"]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let mut g = variant_game(
            &mut client,
            pb::NewGameRequest {
                variant: "c_backgammon".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let mut steps = 0;
        while g.game.phase != pb::Phase::MatchOver as i32 {
            step(&mut client, &mut g, &mut rng).await;
            steps += 1;
            assert!(steps < 2000, "{args:?}: the game never ended");
        }
        assert_eq!(
            stored_history(&mut client, &g.id()).await.len() as u64,
            g.game.version,
            "{args:?}"
        );
    }
}

/// A worker process may not open a socket or run a program (its seccomp
/// filter refuses both): a plugin trying either is refused, and its move
/// is played. In process nothing stops it: the test plugin then panics,
/// saying what it managed to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_in_a_worker_can_open_no_socket_and_run_no_program() {
    for (args, contained) in [(&ISOLATED[..], true), (&[][..], false)] {
        let fixture = Logged::start(args);
        let mut client = connect(&fixture.server.addr).await;
        let g = faulty_game(&mut client, "escape").await;
        let request = move_request(&g, &g.game.legal_plays[0].notation, "escape");
        let answer = client.r#move(with_token(request, g.to_act_token())).await;
        if contained {
            let moved = answer.expect("the move is played, the escape refused");
            assert_eq!(moved.into_inner().version, g.game.version + 1);
        } else {
            let status = answer.unwrap_err();
            assert_eq!(reason(&status), "VARIANT_FAULT", "{status:?}");
            let logged = fixture.last_failure();
            assert!(logged.contains("opened a socket"), "{logged}");
        }
    }
}
