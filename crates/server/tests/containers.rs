//! The server in its container image, started through the testcontainers
//! module as users start it: a game over gRPC, a plugin dropped into a
//! mounted folder or given at start, the data volume across containers,
//! SIGTERM.
//!
//! The image is built once per run by `scripts/build-image-local` from this
//! build's `backgammond` and plugin files (the Dockerfile's runtime stage),
//! unless `BACKGAMMON_IMAGE` names one to test instead. A container engine
//! is needed (podman or Docker, reached through `DOCKER_HOST` or
//! /var/run/docker.sock). Without one these tests say so and pass, unless
//! `BACKGAMMON_REQUIRE_CONTAINERS=1` (set by .ci/run), which makes a
//! missing engine a failure.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_testcontainers::BackgammonServer;
use bg_tests::{copy_plugin, library_file_name, plugin_file};
use common::{Client, Game, get_game, step, variant_game, variant_match, variant_names, watch};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// The shipped plugins, as the image ships them.
/// The image the tests build, unless `BACKGAMMON_IMAGE` names one.
const TEST_IMAGE: &str = "localhost/backgammond";
const TEST_TAG: &str = "test";

/// Whether an image is there to test: built on first use, or named by
/// `BACKGAMMON_IMAGE`; false when no container engine is available and
/// none is required.
fn image_ready() -> bool {
    static READY: OnceLock<Result<bool, String>> = OnceLock::new();
    match READY.get_or_init(prepare_image) {
        Ok(ready) => *ready,
        Err(e) => panic!("{e}"),
    }
}

fn prepare_image() -> Result<bool, String> {
    if std::env::var(bg_testcontainers::IMAGE_ENV).is_ok() {
        return Ok(true);
    }
    let required = std::env::var("BACKGAMMON_REQUIRE_CONTAINERS").is_ok_and(|v| v == "1");
    let Some(engine) = container_engine() else {
        let message = "no container engine (podman or Docker) reachable: set DOCKER_HOST \
                       (for podman: `podman system service --time=0 unix:///run/podman/podman.sock &` \
                       and DOCKER_HOST=unix:///run/podman/podman.sock)";
        if required {
            return Err(format!("BACKGAMMON_REQUIRE_CONTAINERS=1 but {message}"));
        }
        eprintln!("SKIPPED container tests: {message}");
        return Ok(false);
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-image-local");
    let mut build = Command::new(script);
    build
        .env("CONTAINER_ENGINE", engine)
        .args(["--tag", &format!("{TEST_IMAGE}:{TEST_TAG}")])
        .args(["--binary", env!("CARGO_BIN_EXE_backgammond")]);
    for lib in bg_tests::SHIPPED_PLUGINS {
        build.arg("--plugin").arg(plugin_file(lib));
    }
    let started = Instant::now();
    let output = build
        .output()
        .map_err(|e| format!("running the image script: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the test image failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    eprintln!(
        "built {TEST_IMAGE}:{TEST_TAG} in {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&output.stdout).trim()
    );
    Ok(true)
}

/// The engine's command-line tool, if an engine answers and the Docker API
/// testcontainers uses is reachable.
fn container_engine() -> Option<String> {
    let api = std::env::var("DOCKER_HOST").is_ok() || Path::new("/var/run/docker.sock").exists();
    if !api {
        return None;
    }
    let candidates = match std::env::var("CONTAINER_ENGINE") {
        Ok(engine) => vec![engine],
        Err(_) => vec!["podman".to_string(), "docker".to_string()],
    };
    candidates.into_iter().find(|engine| {
        Command::new(engine)
            .arg("info")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The server image under test, with plugin folders scanned often.
fn server() -> Option<BackgammonServer> {
    if !image_ready() {
        return None;
    }
    let server = if std::env::var(bg_testcontainers::IMAGE_ENV).is_ok() {
        BackgammonServer::default()
    } else {
        BackgammonServer::default().with_image(TEST_IMAGE, TEST_TAG)
    };
    Some(server.with_plugin_scan_interval(Duration::from_millis(200)))
}

/// A host folder the container's user (uid 65532) can use.
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    dir
}

/// Plays random legal actions until the match is over.
async fn play_to_the_end(client: &mut Client, g: &mut Game, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut actions = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        step(client, g, &mut rng).await;
        actions += 1;
        assert!(actions < 5_000, "the match ends");
    }
}

#[tokio::test]
async fn a_complete_game_is_played_through_grpc_in_a_container() {
    let Some(image) = server() else { return };
    let server = image.start().await.expect("container starts");
    let mut client = server.client().await.unwrap();
    assert_eq!(
        variant_names(&mut client).await,
        [
            "caucasian",
            "fevga",
            "hypergammon",
            "long_nardy",
            "plakoto",
            "standard",
            "trictrac"
        ],
        "every shipped plugin is in the image"
    );

    let mut g = variant_match(
        &mut client,
        "standard",
        pb::MatchSettings {
            match_length: 1,
            ..Default::default()
        },
    )
    .await;
    play_to_the_end(&mut client, &mut g, 1).await;
    let stored = get_game(&mut client, &g).await;
    assert_eq!(stored, g.game);
    assert_eq!(stored.results.len(), 1, "one game decides a 1-point match");

    // The image's HEALTHCHECK command works inside the container.
    let check = server
        .container()
        .exec(bg_testcontainers::testcontainers::core::ExecCommand::new([
            "/usr/local/bin/backgammond",
            "healthcheck",
        ]))
        .await
        .unwrap();
    let mut waited = 0;
    while check.exit_code().await.unwrap().is_none() && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert_eq!(
        check.exit_code().await.unwrap(),
        Some(0),
        "healthcheck says SERVING"
    );
}

#[tokio::test]
async fn a_plugin_dropped_into_the_mounted_folder_is_listed_and_playable() {
    let Some(image) = server() else { return };
    let extra = shared_dir();
    let server = image
        .with_extra_plugins(extra.path())
        .start()
        .await
        .expect("container starts");
    let mut client = server.client().await.unwrap();
    assert!(
        !variant_names(&mut client)
            .await
            .contains(&"nackgammon".into())
    );

    copy_plugin(
        "bg_test_nackgammon",
        &extra.path().join(library_file_name("bg_test_nackgammon")),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !variant_names(&mut client)
        .await
        .contains(&"nackgammon".into())
    {
        assert!(Instant::now() < deadline, "the dropped plugin is picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "nackgammon".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(g.game.variant, "nackgammon");
    // The Nackgammon setup: two checkers on each player's 23-point.
    let board = g.game.board.clone().unwrap();
    assert_eq!((board.points[22], board.points[1]), (2, -2), "{board:?}");
    play_to_the_end(&mut client, &mut g, 2).await;
    assert_eq!(g.game.results.len(), 1);
}

#[tokio::test]
async fn a_plugin_given_at_start_is_there_with_the_shipped_ones() {
    let Some(image) = server() else { return };
    let server = image
        .with_plugin(plugin_file("bg_test_nackgammon"))
        .start()
        .await
        .expect("container starts");
    let mut client = server.client().await.unwrap();
    assert_eq!(
        variant_names(&mut client).await,
        [
            "caucasian",
            "fevga",
            "hypergammon",
            "long_nardy",
            "nackgammon",
            "plakoto",
            "standard",
            "trictrac"
        ]
    );
}

#[tokio::test]
async fn a_new_container_on_the_same_data_volume_finds_the_game_at_its_version() {
    let Some(image) = server() else { return };
    let data = shared_dir();
    let first = image
        .clone()
        .with_data_dir(data.path())
        .start()
        .await
        .expect("first container starts");
    let mut client = first.client().await.unwrap();
    let mut g = variant_match(
        &mut client,
        "plakoto",
        pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        },
    )
    .await;
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..12 {
        step(&mut client, &mut g, &mut rng).await;
    }
    let before = g.game.clone();
    assert_eq!(first.stop(Duration::from_secs(15)).await.unwrap(), Some(0));
    drop(first);

    let second = image
        .with_data_dir(data.path())
        .start()
        .await
        .expect("second container starts");
    let mut client = second.client().await.unwrap();
    let after = client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: g.id(),
        })
        .await
        .expect("the game is still there")
        .into_inner();
    assert_eq!(after.version, before.version);
    assert_eq!(after, before);
    // The seat tokens still work: the game goes on from where it was.
    step(&mut client, &mut g, &mut rng).await;
    assert_eq!(g.game.version, before.version + 1);
}

#[tokio::test]
async fn the_container_stops_cleanly_on_sigterm_within_the_grace_period() {
    let Some(image) = server() else { return };
    let grace = Duration::from_secs(5);
    let server = image
        .with_env(
            "BACKGAMMON_SHUTDOWN_GRACE_SECONDS",
            grace.as_secs().to_string(),
        )
        .start()
        .await
        .expect("container starts");
    let mut client = server.client().await.unwrap();
    let g = variant_match(&mut client, "standard", pb::MatchSettings::default()).await;
    // A watcher holds a stream open while the server stops.
    let mut updates = watch(&mut client, &g, 0).await;
    assert!(updates.message().await.unwrap().is_some());
    // Read the stream to its end while the server stops.
    let watcher = tokio::spawn(async move {
        let ended = loop {
            match updates.message().await {
                Ok(Some(_)) => continue,
                end => break end,
            }
        };
        (ended, Instant::now())
    });

    let started = Instant::now();
    // The engine waits three times the grace before it would SIGKILL.
    let code = server.stop(grace * 3).await.unwrap();
    let took = started.elapsed();
    assert_eq!(code, Some(0), "exit code after SIGTERM");
    assert!(took < grace, "stopped in {took:?}, grace {grace:?}");
    // The server closed the open stream itself before it exited, telling
    // the watcher to resume elsewhere: not a hang until the grace ran out,
    // not a reset connection.
    let (ended, at) = watcher.await.unwrap();
    let status = ended.expect_err("a status ends the stream");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert!(status.message().contains("shutting down"), "{status:?}");
    assert!(at - started < took, "the stream ended before the process");
}

/// Two server containers on one PostgreSQL (a private cluster on the
/// host's loopback; the containers share the host's network to reach
/// it), with one token key: a game started on one is played on both, a
/// move to each in turn, and each shows the same game.
#[tokio::test]
async fn one_game_is_played_across_two_server_containers_sharing_one_postgresql() {
    let Some(image) = server() else { return };
    let Some(cluster) = bg_tests::postgres::PgCluster::start() else {
        return;
    };
    let url = cluster.create_database("containers");
    let keys = shared_dir();
    let key = keys.path().join("token.key");
    std::fs::write(&key, rand::random::<[u8; 32]>()).unwrap();
    let replica = || {
        image
            .clone()
            .with_database_url(url.clone())
            .with_token_key_file(&key)
            .with_host_network()
            .start()
    };
    let (a, b) = tokio::join!(replica(), replica());
    let (a, b) = (
        a.expect("first container starts"),
        b.expect("second container starts"),
    );
    let mut clients = [a.client().await.unwrap(), b.client().await.unwrap()];
    let mut g = variant_match(
        &mut clients[0],
        "standard",
        pb::MatchSettings {
            match_length: 1,
            ..Default::default()
        },
    )
    .await;
    let mut rng = StdRng::seed_from_u64(14);
    let mut actions = 0;
    while g.game.phase != pb::Phase::MatchOver as i32 {
        step(&mut clients[actions % 2], &mut g, &mut rng).await;
        actions += 1;
        assert!(actions < 5_000, "the match ends");
    }
    for client in &mut clients {
        assert_eq!(
            get_game(client, &g).await,
            g.game,
            "both show the game as played"
        );
    }
}

#[tokio::test]
async fn a_container_serves_tls_and_refuses_a_caller_without_a_client_certificate() {
    use bg_testcontainers::{Certificate, ClientTlsConfig, Identity};
    use bg_tests::certs::Authority;
    let Some(image) = server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ca = Authority::new(dir.path(), "service");
    let server_pem = ca.server("server");
    let client_pem = ca.client("site");
    let ca_pem = std::fs::read(&ca.cert).unwrap();
    let trust =
        move || ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca_pem.clone()));
    let server = image
        .with_tls(&server_pem.cert, &server_pem.key)
        .with_client_ca(&ca.cert)
        .with_client_tls(trust().identity(Identity::from_pem(
            client_pem.cert_pem(),
            client_pem.key_pem(),
        )))
        .start()
        .await
        .expect("container starts and is SERVING over TLS");
    assert!(server.endpoint().starts_with("https://127.0.0.1:"));
    let mut client = server.client().await.unwrap();
    let mut g = variant_match(
        &mut client,
        "standard",
        pb::MatchSettings {
            match_length: 1,
            ..Default::default()
        },
    )
    .await;
    play_to_the_end(&mut client, &mut g, 7).await;

    // The same port, without a client certificate, or in plain text.
    let endpoint = tonic::transport::Endpoint::from_shared(server.endpoint())
        .unwrap()
        .tls_config(trust().domain_name("localhost"))
        .unwrap();
    let refused = tokio::spawn(async move {
        let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
        common::variant_names(&mut pb::game_service_client::GameServiceClient::new(
            channel,
        ))
        .await;
        Ok::<_, String>(())
    })
    .await;
    assert!(
        !matches!(refused, Ok(Ok(()))),
        "a caller without a client certificate was served"
    );
    let plain = server.endpoint().replace("https://", "http://");
    let plain = tokio::spawn(async move {
        let mut client = common::connect(&plain).await;
        common::variant_names(&mut client).await
    })
    .await;
    assert!(plain.is_err(), "a plain client was served: {plain:?}");
}

/// In the image (distroless, a non-root user, the container engine's own
/// seccomp profile), plugins run in worker processes when asked: a plugin
/// that segfaults fails that move only, and a whole game of hypergammon is
/// played meanwhile.
#[tokio::test]
async fn in_the_image_a_plugin_in_a_worker_process_that_segfaults_fails_one_move() {
    let Some(image) = server() else { return };
    let server = image
        .with_plugin(plugin_file("bg_test_faulty"))
        .with_env("BACKGAMMON_PLUGIN_ISOLATION", "process")
        .start()
        .await
        .expect("container starts");
    let mut client = server.client().await.unwrap();
    let g = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "faulty".into(),
            options: [("fault".to_string(), "segfault".to_string())].into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let request = common::move_request(&g, &g.game.legal_plays[0].notation, "segfault");
    let status = client
        .r#move(common::with_token(request, g.to_act_token()))
        .await
        .unwrap_err();
    assert_eq!(common::reason(&status), "VARIANT_FAULT", "{status:?}");
    assert_eq!(get_game(&mut client, &g).await.version, g.game.version);
    let mut hyper = variant_game(
        &mut client,
        pb::NewGameRequest {
            variant: "hypergammon".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    play_to_the_end(&mut client, &mut hyper, 3).await;
    assert_eq!(hyper.game.results.len(), 1);
}
