//! Several server processes (replicas) on one PostgreSQL server, all
//! real: a private cluster started by the test, three `backgammond`
//! processes, gRPC over sockets. Issue 14: any action to any replica,
//! exactly one of conflicting moves applied, retries answered as first
//! whichever replica gets them, watchers hearing every replica, a replica
//! killed and PostgreSQL restarted under load without losing anything
//! acknowledged.
//!
//! Without PostgreSQL on the machine these tests say they are skipped;
//! CI sets BACKGAMMON_REQUIRE_POSTGRES so that they must run.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use bg_tests::plugin_dir;
use bg_tests::postgres::PgCluster;
use bg_tests::server::ServerProcess;
use common::*;
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::{Code, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;

/// A PostgreSQL cluster, one database, one shared token key, and
/// `count` replicas on it, each with a data folder of its own.
struct Replicas {
    cluster: PgCluster,
    url: String,
    key: PathBuf,
    servers: Vec<ServerProcess>,
    _folders: Vec<tempfile::TempDir>,
    plugins: tempfile::TempDir,
    /// More arguments for every replica.
    extra: Vec<String>,
}

impl Replicas {
    fn start(name: &str, count: usize) -> Option<Replicas> {
        Replicas::start_with(name, count, &[])
    }

    fn start_with(name: &str, count: usize, extra: &[&str]) -> Option<Replicas> {
        let cluster = PgCluster::start()?;
        let url = cluster.create_database(name);
        let keys = tempfile::tempdir().unwrap();
        let key = keys.path().join("token.key");
        let made = std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
            .arg("token-key")
            .arg(&key)
            .output()
            .unwrap();
        assert!(made.status.success(), "{made:?}");
        std::fs::write(keys.path().join("operator.token"), OPERATOR).unwrap();
        let plugins = plugin_dir(&[("bg_standard", "libbg_standard.so")]);
        let mut replicas = Replicas {
            cluster,
            url,
            key,
            servers: Vec::new(),
            _folders: vec![keys],
            plugins,
            extra: extra.iter().map(|a| a.to_string()).collect(),
        };
        for _ in 0..count {
            replicas.add();
        }
        Some(replicas)
    }

    /// One more replica.
    fn add(&mut self) -> usize {
        let data = tempfile::tempdir().unwrap();
        let operator_token = self.key.with_file_name("operator.token");
        let mut args = vec![
            "--database",
            &self.url,
            "--token-key-file",
            self.key.to_str().unwrap(),
            // Watchers hear of other replicas' commits by notices
            // alone here: the periodic reading, a safety net for
            // notices lost unnoticed, would hide a notice lost.
            "--watch-resync-seconds",
            "3600",
            "--operator-token-file",
            operator_token.to_str().unwrap(),
        ];
        args.extend(self.extra.iter().map(String::as_str));
        let server = ServerProcess::start_with(
            env!("CARGO_BIN_EXE_backgammond").as_ref(),
            self.plugins.path(),
            data.path(),
            &args,
        );
        self._folders.push(data);
        self.servers.push(server);
        self.servers.len() - 1
    }

    /// A replica started on the database with `key`, run to its end (one
    /// that refuses to start): its output.
    fn start_with_key(&self, key: &std::path::Path) -> std::process::Output {
        let data = tempfile::tempdir().unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
            .args(["--listen", "127.0.0.1:0", "--database", &self.url])
            .arg("--plugin-dir")
            .arg(self.plugins.path())
            .arg("--data-dir")
            .arg(data.path())
            .arg("--token-key-file")
            .arg(key)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    }

    fn addrs(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.addr.clone()).collect()
    }

    async fn clients(&self) -> Vec<Client> {
        let mut clients = Vec::new();
        for addr in self.addrs() {
            clients.push(connect(&addr).await);
        }
        clients
    }
}

/// The operator's token of these replicas (the fleet feed's tests).
const OPERATOR: &str = "operator-token-of-the-replica-tests-0123456789";

/// A failure a replica or the database being away explains: the call
/// goes to another replica, or is sent again later, with its request id.
fn is_outage(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::DeadlineExceeded
    )
}

/// Plays one game to its end or for `actions` actions, sending action `n`
/// to replica `n % replicas` (the next one when that one is away), and
/// retrying with the same request id after an outage. Returns every
/// acknowledged action with the version it was answered with.
async fn drive(
    addrs: Vec<String>,
    mut g: Game,
    seed: u64,
    actions: usize,
) -> (Game, Vec<(Sent, String, u64)>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut clients: Vec<Option<Client>> = vec![None; addrs.len()];
    let mut acknowledged = Vec::new();
    let mut target = seed as usize;
    let mut may_double = true;
    while acknowledged.len() < actions {
        let Some(sent) = next_action(&g.game, &mut rng, may_double) else {
            break;
        };
        let token = g.to_act_token().to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        let answer = loop {
            assert!(Instant::now() < deadline, "no replica answered for 60 s");
            target = (target + 1) % addrs.len();
            let client = match &mut clients[target] {
                Some(client) => client,
                slot => match tokio::time::timeout(
                    Duration::from_secs(2),
                    pb::game_service_client::GameServiceClient::connect(addrs[target].clone()),
                )
                .await
                {
                    Ok(Ok(client)) => slot.insert(client),
                    _ => continue,
                },
            };
            match send(client, &sent, &token).await {
                Ok(game) => break Some(game),
                // The cube is not available now (its owner, Crawford):
                // roll instead.
                Err(status)
                    if status.code() == Code::FailedPrecondition
                        && matches!(sent, Sent::Double(_)) =>
                {
                    break None;
                }
                Err(status) if is_outage(&status) => {
                    clients[target] = None;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(status) => panic!("{sent:?}: {status:?}"),
            }
        };
        let Some(answer) = answer else {
            may_double = false;
            continue;
        };
        may_double = true;
        assert_eq!(answer.version, g.game.version + 1, "{sent:?}");
        acknowledged.push((sent, token, answer.version));
        g.game = answer;
    }
    (g, acknowledged)
}

/// Each acknowledged action sent again to another replica is answered as
/// first; each game is stored at its last acknowledged version, and its
/// history has every version once.
async fn check_nothing_lost(
    client: &mut Client,
    games: &[Game],
    acknowledged: &[(Sent, String, u64)],
) {
    for (sent, token, version) in acknowledged {
        let again = send(client, sent, token)
            .await
            .unwrap_or_else(|s| panic!("the retry of an acknowledged action: {s:?}"));
        assert_eq!(again.version, *version, "answered as first: {sent:?}");
    }
    for g in games {
        let stored = get_game(client, g).await;
        assert_eq!(stored.version, g.game.version, "game {}", g.id());
        let history = stored_history(client, &g.id()).await;
        let versions: Vec<u64> = history.iter().map(|u| u.version).collect();
        assert_eq!(
            versions,
            (1..=stored.version).collect::<Vec<_>>(),
            "the history of game {} has every version once",
            g.id()
        );
    }
}

async fn health_now(addr: &str) -> Option<ServingStatus> {
    let channel = tonic::transport::Endpoint::from_shared(addr.to_string())
        .ok()?
        .connect()
        .await
        .ok()?;
    let status = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .ok()?
        .into_inner()
        .status;
    ServingStatus::try_from(status).ok()
}

/// Waits up to 30 s for every replica to report `status`.
async fn all_report(addrs: &[String], status: ServingStatus) {
    let deadline = Instant::now() + Duration::from_secs(30);
    for addr in addrs {
        while health_now(addr).await != Some(status) {
            assert!(
                Instant::now() < deadline,
                "{addr} reports {status:?} within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn money() -> pb::MatchSettings {
    pb::MatchSettings {
        match_length: 0,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_match_played_across_replicas_is_one_match() {
    let Some(replicas) = Replicas::start("match_across", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let g = new_game(
        &mut clients[0],
        pb::MatchSettings {
            match_length: 3,
            ..Default::default()
        },
    )
    .await;
    let (g, acknowledged) = drive(replicas.addrs(), g, 7, 100_000).await;
    assert_eq!(
        pb::Phase::try_from(g.game.phase),
        Ok(pb::Phase::MatchOver),
        "the match was played to its end"
    );
    for client in &mut clients {
        let seen = get_game(client, &g).await;
        assert_eq!(
            seen.encode_to_vec(),
            g.game.encode_to_vec(),
            "every replica shows the same game"
        );
    }
    check_nothing_lost(&mut clients[2], &[g], &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn of_16_conflicting_moves_sent_to_different_replicas_exactly_one_is_applied() {
    let Some(replicas) = Replicas::start("conflicting_moves", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut g = new_game(&mut clients[0], money()).await;
    while pb::Phase::try_from(g.game.phase) != Ok(pb::Phase::Move) || g.game.legal_plays.len() < 2 {
        let mut rng = StdRng::seed_from_u64(g.game.version);
        step(&mut clients[1], &mut g, &mut rng).await;
    }
    let version = g.game.version;
    let token = g.to_act_token().to_string();
    let mut tasks = Vec::new();
    for n in 0..16 {
        let mut client = clients[n % 3].clone();
        let play = g.game.legal_plays[n % g.game.legal_plays.len()]
            .notation
            .clone();
        let request = move_request(&g, &play, &format!("conflict-{n}"));
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            client.r#move(with_token(request, &token)).await
        }));
    }
    let mut applied = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(game) => applied.push(game.into_inner()),
            Err(status) => {
                assert_eq!(status.code(), Code::Aborted, "{status:?}");
                assert_eq!(reason(&status), "VERSION_MISMATCH");
                let current = status
                    .get_details_error_info()
                    .and_then(|i| i.metadata.get("current_version").cloned());
                assert_eq!(current, Some((version + 1).to_string()));
            }
        }
    }
    assert_eq!(applied.len(), 1, "exactly one of the 16 is applied");
    for client in &mut clients {
        let seen = get_game(client, &g).await;
        assert_eq!(seen.version, version + 1);
        assert_eq!(seen.encode_to_vec(), applied[0].encode_to_vec());
    }
    let history = stored_history(&mut clients[2], &g.id()).await;
    assert_eq!(history.last().map(|u| u.version), Some(version + 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_on_any_replica_shows_every_action_acknowledged_before_it() {
    let Some(replicas) = Replicas::start("fresh_reads", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut g = new_game(&mut clients[0], long_match()).await;
    let mut rng = StdRng::seed_from_u64(9);
    for n in 0..60 {
        // Every replica holds the game in memory from the reads below.
        step(&mut clients[n % 3], &mut g, &mut rng).await;
        for client in &mut clients {
            assert_eq!(get_game(client, &g).await, g.game);
            let legal = client
                .legal_plays(pb::LegalPlaysRequest { game_id: g.id() })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(legal.version, g.game.version);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_to_another_replica_gets_the_first_answer() {
    let Some(replicas) = Replicas::start("retry_elsewhere", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut g = new_game(&mut clients[0], money()).await;
    let mut rng = StdRng::seed_from_u64(3);
    while pb::Phase::try_from(g.game.phase) != Ok(pb::Phase::Move) {
        step(&mut clients[0], &mut g, &mut rng).await;
    }
    let play = g.game.legal_plays[0].notation.clone();
    let request = move_request(&g, &play, "the-one-move");
    let token = g.to_act_token().to_string();
    let first = clients[0]
        .r#move(with_token(request.clone(), &token))
        .await
        .unwrap()
        .into_inner();
    for client in &mut clients[1..] {
        let again = client
            .r#move(with_token(request.clone(), &token))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(again.encode_to_vec(), first.encode_to_vec());
    }
    // Still so after the game has moved on, on another replica.
    g.game = first.clone();
    for _ in 0..4 {
        step(&mut clients[2], &mut g, &mut rng).await;
    }
    let late = clients[1]
        .r#move(with_token(request.clone(), &token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(late.encode_to_vec(), first.encode_to_vec());
    // The same id for another request is refused, on any replica.
    let mut other = request.clone();
    other.notation = "8/7 6/5".into();
    let refused = clients[2]
        .r#move(with_token(other, &token))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "REQUEST_ID_REUSED", "{refused:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watcher_on_one_replica_sees_every_action_of_the_others() {
    let Some(replicas) = Replicas::start("watch_across", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let g = new_game(&mut clients[0], money()).await;
    let mut updates = watch(&mut clients[2], &g, 0).await;
    // Actions go to replicas 0 and 1 only.
    let addrs = replicas.addrs()[..2].to_vec();
    let (g, _) = drive(addrs, g, 11, 120).await;
    let mut versions = Vec::new();
    while versions.last() != Some(&g.game.version) {
        let update = tokio::time::timeout(Duration::from_secs(10), updates.message())
            .await
            .expect("the watcher hears of every version within 10 s")
            .unwrap()
            .expect("the stream goes on");
        if update.version == g.game.version {
            assert_eq!(
                update.game.as_ref().map(|x| x.encode_to_vec()),
                Some(g.game.encode_to_vec())
            );
        }
        versions.push(update.version);
    }
    assert_eq!(
        versions,
        (1..=g.game.version).collect::<Vec<_>>(),
        "every version once, in order"
    );
}

/// A watcher reading as fast as it can is never told it fell behind
/// because its replica caught up in bulk: replica 1 is stopped where it
/// stands while replica 0 plays 100 actions, then goes on, reads the 100
/// versions back in one catch-up, and its watcher gets each once, in
/// order. (Sent one by one into the 32 places of the watchers' channel,
/// they once ended the watch with WATCHER_BEHIND.)
#[tokio::test(flavor = "multi_thread")]
async fn a_watcher_hears_every_version_its_replica_catches_up_on_at_once() {
    let Some(replicas) = Replicas::start("bulk_catch_up", 2) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let g = new_game(&mut clients[0], long_match()).await;
    let mut updates = watch(&mut clients[1], &g, g.game.version).await;
    replicas.servers[1].pause();
    let (g, acks) = drive(replicas.addrs()[..1].to_vec(), g, 21, 100).await;
    assert_eq!(acks.len(), 100);
    replicas.servers[1].resume();
    let mut versions = Vec::new();
    hear_until(&mut updates, g.game.version, &mut versions, "the watch").await;
    let first = g.game.version - 99;
    assert_eq!(
        versions,
        (first..=g.game.version).collect::<Vec<_>>(),
        "every version once, in order"
    );
}

/// Issue 34: a watcher gets every version after its `from_version` once,
/// in order, and nothing else, whatever the timing of the other replicas'
/// notices and its own catch-up read. Each round a game is created on one
/// replica and played on two, while watchers open on all three: from
/// version 1 at once (racing the first actions and their notices), and
/// from whatever version a read on a random replica shows, while the
/// game is played.
#[tokio::test(flavor = "multi_thread")]
async fn every_watcher_on_every_replica_gets_each_version_after_its_own_once_in_order() {
    let Some(replicas) = Replicas::start("watch_exact", 3) else {
        return;
    };
    let addrs = replicas.addrs();
    let mut clients = replicas.clients().await;
    let mut rng = StdRng::seed_from_u64(34);
    for round in 0..24u64 {
        let g = new_game(&mut clients[round as usize % 3], long_match()).await;
        // The game is played on replicas 0 and 1, starting now.
        let play = tokio::spawn(drive(addrs[..2].to_vec(), g.clone(), round, 16));
        let mut watchers = Vec::new();
        for (i, client) in clients.iter_mut().enumerate() {
            watchers.push((i, 1, watch(client, &g, 1).await));
        }
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..15))).await;
            let read_on = rng.random_range(0..3);
            let seen = get_game(&mut clients[read_on], &g).await.version;
            let on = rng.random_range(0..3);
            watchers.push((on, seen, watch(&mut clients[on], &g, seen).await));
        }
        let (played, _) = play.await.unwrap();
        let last = played.game.version;
        for (on, from, mut updates) in watchers {
            let mut versions = Vec::new();
            while versions.last().copied().unwrap_or(from) < last {
                let update = tokio::time::timeout(Duration::from_secs(10), updates.message())
                    .await
                    .unwrap_or_else(|_| {
                        panic!("round {round}: the watcher on replica {on} from {from} hears of version {last} within 10 s (had {versions:?})")
                    })
                    .unwrap()
                    .expect("the stream goes on");
                versions.push(update.version);
            }
            assert_eq!(
                versions,
                (from + 1..=last).collect::<Vec<_>>(),
                "round {round}: the watcher on replica {on} from version {from}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_under_load_loses_nothing_it_acknowledged() {
    let Some(mut replicas) = Replicas::start("replica_killed", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut tasks = Vec::new();
    for seed in 0..6 {
        let g = new_game(&mut clients[seed % 3], long_match()).await;
        tasks.push(tokio::spawn(drive(replicas.addrs(), g, seed as u64, 150)));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    replicas.servers[0].kill();
    let mut games = Vec::new();
    let mut acknowledged = Vec::new();
    for task in tasks {
        let (g, acks) = task.await.unwrap();
        assert_eq!(acks.len(), 150, "every game was played on after the kill");
        games.push(g);
        acknowledged.extend(acks);
    }
    check_nothing_lost(&mut clients[1], &games, &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_restarting_under_load_loses_nothing_and_the_replicas_recover() {
    let Some(mut replicas) = Replicas::start("postgres_restart", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let addrs = replicas.addrs();
    all_report(&addrs, ServingStatus::Serving).await;
    let mut tasks = Vec::new();
    // One game is played on replicas 0 and 1 and watched on replica 2,
    // which hears of it by notices (and a resync once it listens again).
    let watched = new_game(&mut clients[0], long_match()).await;
    let mut updates = watch(&mut clients[2], &watched, 0).await;
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(update)) = updates.message().await {
            if heard_tx.send(update.version).is_err() {
                return;
            }
        }
    });
    tasks.push(tokio::spawn(drive(addrs[..2].to_vec(), watched, 99, 200)));
    for seed in 0..4 {
        let g = new_game(&mut clients[seed % 3], long_match()).await;
        tasks.push(tokio::spawn(drive(
            addrs.clone(),
            g,
            100 + seed as u64,
            200,
        )));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    replicas.cluster.stop_immediate();
    all_report(&addrs, ServingStatus::NotServing).await;
    // Calls are answered with a reason while it is down.
    let refused = clients[1]
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: uuid::Uuid::now_v7().to_string(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert_eq!(reason(&refused), "DATABASE_UNREACHABLE", "{refused:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    replicas.cluster.start_again();
    all_report(&addrs, ServingStatus::Serving).await;
    let mut games = Vec::new();
    let mut acknowledged = Vec::new();
    for task in tasks {
        let (g, acks) = task.await.unwrap();
        assert_eq!(
            acks.len(),
            200,
            "every game was played on after the restart"
        );
        games.push(g);
        acknowledged.extend(acks);
    }
    let last = games[0].game.version;
    let mut versions = Vec::new();
    while versions.last() != Some(&last) {
        let version = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .expect("the watcher hears of every version")
            .expect("the watch goes on");
        versions.push(version);
    }
    assert_eq!(
        versions,
        (1..=last).collect::<Vec<_>>(),
        "the watcher on replica 2 heard every version once, in order, through the restart"
    );
    check_nothing_lost(&mut clients[2], &games, &acknowledged).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_without_the_shared_key_refuses_to_start() {
    let Some(replicas) = Replicas::start("key_refused", 1) else {
        return;
    };
    let start = |key: &std::path::Path| replicas.start_with_key(key);
    let folder = tempfile::tempdir().unwrap();
    let missing = start(&folder.path().join("none.key"));
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(
        said.contains("does not exist") && said.contains("every replica"),
        "{said}"
    );

    let other = folder.path().join("other.key");
    std::fs::write(&other, [9u8; 32]).unwrap();
    let wrong = start(&other);
    assert!(!wrong.status.success());
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(said.contains("not the key"), "{said}");
}

/// Issue 49, rotation on PostgreSQL: every replica stopped,
/// `backgammond rotate-key` with the database's URL and the shared key
/// file seals the dice seeds of the matches in progress again and
/// rewrites the file; the replicas, started again on it, play those
/// matches on with the seat tokens first given, each revealing the seed
/// its commitment named at the start; a replica given the old key
/// refuses to start.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_key_rotation_every_replica_plays_on_and_the_old_key_is_refused() {
    use sha2::Digest;
    let Some(mut replicas) = Replicas::start("key_rotated", 2) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let one_point = pb::MatchSettings {
        match_length: 1,
        ..Default::default()
    };
    let mut games = Vec::new();
    for i in 0..4 {
        games.push(new_game(&mut clients[i % 2], one_point).await);
    }
    let keys = tempfile::tempdir().unwrap();
    let old = keys.path().join("old.key");
    std::fs::copy(&replicas.key, &old).unwrap();
    let new = keys.path().join("new.key");
    for server in &mut replicas.servers {
        server.terminate();
    }
    let backgammond = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
            .args(["--database", &replicas.url])
            .arg("--token-key-file")
            .arg(&replicas.key)
            .args(args)
            .output()
            .unwrap()
    };
    let made = backgammond(&["token-key".as_ref(), new.as_os_str()]);
    assert!(made.status.success(), "{made:?}");
    let rotated = backgammond(&["rotate-key".as_ref(), new.as_os_str()]);
    assert!(rotated.status.success(), "{rotated:?}");
    assert!(
        String::from_utf8_lossy(&rotated.stdout).contains("4 seeds"),
        "{rotated:?}"
    );
    assert_eq!(
        std::fs::read(&replicas.key).unwrap(),
        std::fs::read(&new).unwrap()
    );

    for server in &mut replicas.servers {
        server.restart();
    }
    let mut clients = replicas.clients().await;
    for (i, g) in games.iter_mut().enumerate() {
        let commitment = g.game.verifiable_dice.clone().unwrap().commitment;
        resign(&mut clients[(i + 1) % 2], g).await;
        assert_eq!(g.game.phase, pb::Phase::MatchOver as i32);
        let seed = hex::decode(g.game.verifiable_dice.clone().unwrap().server_seed).unwrap();
        assert_eq!(hex::encode(sha2::Sha256::digest(&seed)), commitment);
    }

    let refused = replicas.start_with_key(&old);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("not the key"), "{said}");
}

/// Each action acknowledged by one replica reaches a watcher of another by
/// its notice (the periodic reading is off here): it fails if notices do
/// not arrive. The delays are printed, as figures only (docs/benchmarks.md's come
/// from `bgctl bench watch`).
#[tokio::test(flavor = "multi_thread")]
async fn updates_reach_a_watcher_of_another_replica_promptly() {
    let Some(replicas) = Replicas::start("watch_delay", 2) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut g = new_game(&mut clients[0], long_match()).await;
    let mut updates = watch(&mut clients[1], &g, g.game.version).await;
    let mut rng = StdRng::seed_from_u64(5);
    let mut delays = HashMap::new();
    for _ in 0..60 {
        step(&mut clients[0], &mut g, &mut rng).await;
        let acknowledged = Instant::now();
        loop {
            let update = tokio::time::timeout(Duration::from_secs(10), updates.message())
                .await
                .expect("an update within 10 s")
                .unwrap()
                .unwrap();
            if update.version == g.game.version {
                delays.insert(update.version, acknowledged.elapsed());
                break;
            }
        }
    }
    let mut sorted: Vec<Duration> = delays.into_values().collect();
    sorted.sort();
    eprintln!(
        "watch delay across replicas: p50 {:?}, max {:?}",
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    );
}

/// Issue 35: clocks on replicas. Idle matches created on three replicas,
/// nobody acting, one replica killed before their clocks run out: every
/// match ends on time, each with exactly one `time_expired`, whichever
/// replica held it (or none).
#[tokio::test(flavor = "multi_thread")]
async fn idle_clocks_on_replicas_each_fall_once_even_with_a_replica_killed() {
    let Some(mut replicas) = Replicas::start("clocks", 3) else {
        return;
    };
    let mut clients = replicas.clients().await;
    let mut games = Vec::new();
    for n in 0..9 {
        let settings = pb::MatchSettings {
            match_length: 3,
            clock: Some(pb::ClockSettings {
                reserve_ms: 1_500 + 100 * n as u64,
                ..Default::default()
            }),
            ..Default::default()
        };
        games.push(new_game(&mut clients[n % 3], settings).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    replicas.servers[0].kill();
    let deadline = Instant::now() + Duration::from_secs(20);
    for g in &games {
        loop {
            let game = get_game(&mut clients[1], g).await;
            if game.phase == pb::Phase::MatchOver as i32 {
                assert_eq!(game.results[0].reason, "time");
                assert_eq!(
                    game.version,
                    g.game.version + 1,
                    "one timeout, nothing else"
                );
                break;
            }
            assert!(Instant::now() < deadline, "every clock falls within 20 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let timeouts = stored_history(&mut clients[2], &g.id())
            .await
            .iter()
            .flat_map(|u| u.events.iter())
            .filter(|e| e.kind == "time_expired")
            .count();
        assert_eq!(timeouts, 1, "game {}", g.id());
    }
}

/// Issue 46's feed on replicas: writers racing on two replicas (a
/// sequence number is taken before commit, so a lower one can commit after
/// a higher one was read), a follower on the third reading live, killed
/// -9 and restarted, resumed from its last cursor on another replica.
/// What it read live is exactly the feed read whole afterwards: every
/// version of every match once, in each match's version order; and
/// resumed from random cursors on any replica, the feed gives exactly
/// the rest.
#[tokio::test(flavor = "multi_thread")]
async fn the_feed_is_every_event_once_in_order_on_any_replica_through_a_kill() {
    let Some(mut replicas) = Replicas::start("fleet_feed", 3) else {
        return;
    };
    let addrs = replicas.addrs();
    let every: Vec<i32> = [
        pb::MatchEventKind::Created,
        pb::MatchEventKind::GameEnded,
        pb::MatchEventKind::MatchEnded,
        pb::MatchEventKind::Action,
    ]
    .iter()
    .map(|k| *k as i32)
    .collect();
    let open = |addr: String, cursor: String| {
        let kinds = every.clone();
        async move {
            let mut client = connect(&addr).await;
            let mut request = tonic::Request::new(pb::WatchMatchesRequest {
                from_oldest: cursor.is_empty(),
                cursor,
                kinds,
                filter: None,
            });
            request.metadata_mut().insert(
                "authorization",
                format!("Bearer {OPERATOR}").parse().unwrap(),
            );
            client.watch_matches(request).await.unwrap().into_inner()
        }
    };
    // The follower, on replica 2 from the start.
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<pb::MatchEvent>();
    let mut stream = open(addrs[2].clone(), String::new()).await;
    let follower = tokio::spawn(async move {
        while let Ok(Some(event)) = stream.message().await {
            if event.kind != pb::MatchEventKind::Unspecified as i32 {
                let _ = seen_tx.send(event);
            }
        }
    });
    // Eight games at once, each action to replica 0 or 1 in turn.
    let writers = addrs[..2].to_vec();
    let mut clients = replicas.clients().await;
    let mut tasks = Vec::new();
    for seed in 0..8 {
        let g = new_game(&mut clients[seed % 2], long_match()).await;
        tasks.push(tokio::spawn(drive(
            writers.clone(),
            g,
            460 + seed as u64,
            120,
        )));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    replicas.servers[2].kill();
    follower.abort();
    let mut live = Vec::new();
    while let Ok(event) = seen_rx.try_recv() {
        live.push(event);
    }
    assert!(!live.is_empty(), "the follower read events before the kill");
    replicas.servers[2].restart();
    // Replica 2 came back on a port of its own.
    let addrs = replicas.addrs();
    // Resumed from its last cursor, on replica 0.
    let mut stream = open(addrs[0].clone(), live.last().unwrap().cursor.clone()).await;
    let mut games = Vec::new();
    for task in tasks {
        games.push(task.await.unwrap().0);
    }
    // Each match: its creation, and an action for every later version.
    let total: usize = games.iter().map(|g| g.game.version as usize).sum();
    let actions = |events: &[pb::MatchEvent]| {
        events
            .iter()
            .filter(|e| {
                e.kind == pb::MatchEventKind::Created as i32
                    || e.kind == pb::MatchEventKind::Action as i32
            })
            .count()
    };
    while actions(&live) < total {
        match tokio::time::timeout(Duration::from_secs(20), stream.message()).await {
            Ok(Ok(Some(e))) if e.kind == pb::MatchEventKind::Unspecified as i32 => {}
            Ok(Ok(Some(e))) => live.push(e),
            other => panic!(
                "the feed stopped at {} of {total}: {other:?}",
                actions(&live)
            ),
        }
    }
    // The whole feed, read afterwards on replica 1.
    let mut stream = open(addrs[1].clone(), String::new()).await;
    let whole = next_match_events(&mut stream, live.len(), "the whole feed").await;
    let ids = |events: &[pb::MatchEvent]| {
        events
            .iter()
            .map(|e| e.event_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&live),
        ids(&whole),
        "read live through a kill, the same feed"
    );
    let unique: std::collections::HashSet<String> = ids(&whole).into_iter().collect();
    assert_eq!(unique.len(), whole.len(), "no event twice");
    for g in &games {
        let versions: Vec<u64> = whole
            .iter()
            .filter(|e| e.game_id == g.id())
            .filter(|e| {
                e.kind == pb::MatchEventKind::Created as i32
                    || e.kind == pb::MatchEventKind::Action as i32
            })
            .map(|e| e.version)
            .collect();
        assert_eq!(
            versions,
            (1..=g.game.version).collect::<Vec<_>>(),
            "game {}",
            g.id()
        );
    }
    // Resumed from random cursors, on each replica in turn.
    let mut rng = StdRng::seed_from_u64(4646);
    for round in 0..6 {
        let i = rng.random_range(0..whole.len() - 1);
        let mut stream = open(addrs[round % 3].clone(), whole[i].cursor.clone()).await;
        let rest = next_match_events(&mut stream, whole.len() - i - 1, "the feed resumed").await;
        assert_eq!(ids(&rest), ids(&whole[i + 1..]), "resumed after event {i}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_deliver_every_event_and_a_deduplicating_receiver_sees_each_once() {
    use bg_tests::receiver::{Answer, Receiver};
    const SECRET: &str = "whsec_dGhlLXJlcGxpY2EtdGVzdHMtd2ViaG9vay1zZWNyZXQ=";
    let receiver = Receiver::start(Answer::Accept).await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("s"), SECRET).unwrap();
    let file = folder.path().join("webhooks.toml");
    std::fs::write(
        &file,
        format!(
            "[[endpoint]]\nname = \"site\"\nurl = \"{}\"\nsecret_file = \"s\"\n",
            receiver.url("/hooks")
        ),
    )
    .unwrap();
    let Some(replicas) =
        Replicas::start_with("webhooks", 2, &["--webhooks-file", file.to_str().unwrap()])
    else {
        return;
    };
    // Ten one-point matches created and resigned on each replica, at once.
    let mut tasks = Vec::new();
    for addr in replicas.addrs() {
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&addr).await;
            for _ in 0..10 {
                let mut g = new_game(
                    &mut client,
                    pb::MatchSettings {
                        match_length: 1,
                        ..Default::default()
                    },
                )
                .await;
                resign(&mut client, &mut g).await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut client = connect(&replicas.addrs()[0]).await;
    let mut feed = client
        .watch_matches(with_token(
            pb::WatchMatchesRequest {
                from_oldest: true,
                ..Default::default()
            },
            OPERATOR,
        ))
        .await
        .unwrap()
        .into_inner();
    let expected: std::collections::BTreeSet<String> = next_match_events(&mut feed, 60, "the feed")
        .await
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(expected.len(), 60);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ids: std::collections::BTreeSet<String> =
            receiver.received().iter().map(|r| r.id()).collect();
        if ids == expected {
            break;
        }
        assert!(
            ids.is_subset(&expected) && Instant::now() < deadline,
            "received {} of {}, or events not in the feed",
            ids.len(),
            expected.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A while longer: a duplicate would come now.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got = receiver.received();
    let verifier = standardwebhooks::Webhook::new(SECRET).unwrap();
    for r in &got {
        verifier.verify(&r.body, &r.headers).unwrap();
    }
    // A receiver that deduplicates by id sees each once; staged once
    // whichever replica read the feed, so none is sent twice here.
    assert_eq!(
        got.len(),
        expected.len(),
        "an event sent twice without a crash"
    );
    // Both replicas count the same deliveries.
    for addr in replicas.addrs() {
        let mut client = connect(&addr).await;
        let listed = client
            .list_webhook_deliveries(with_token(
                pb::ListWebhookDeliveriesRequest::default(),
                OPERATOR,
            ))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(listed.endpoints[0].delivered, 60, "{addr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn list_matches_pages_through_ten_thousand_matches_alike_on_two_replicas_while_both_create() {
    let Some(replicas) = Replicas::start_with("fleet_lists", 2, &["--new-games-per-second", "0"])
    else {
        return;
    };
    let addrs = replicas.addrs();
    // 10,000 matches, by 16 callers at once, half on each replica.
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let addr = addrs[worker % 2].clone();
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&addr).await;
            let mut ids = Vec::new();
            for _ in 0..625 {
                ids.push(new_game(&mut client, long_match()).await.id());
            }
            ids
        }));
    }
    let mut made = std::collections::HashSet::new();
    for task in tasks {
        made.extend(task.await.unwrap());
    }
    assert_eq!(made.len(), 10_000);
    // While the list is paged, both replicas create more.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut busy = Vec::new();
    for addr in addrs.clone() {
        let stop = stop.clone();
        busy.push(tokio::spawn(async move {
            let mut client = connect(&addr).await;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                new_game(&mut client, long_match()).await;
            }
        }));
    }
    // Each page asked of the other replica than the one before, with the
    // token that replica gave.
    let mut clients = replicas.clients().await;
    let mut listed = Vec::new();
    let mut token = String::new();
    for page in 0.. {
        let answer = clients[page % 2]
            .list_matches(with_token(
                pb::ListMatchesRequest {
                    page_size: 337,
                    page_token: token.clone(),
                    ..Default::default()
                },
                OPERATOR,
            ))
            .await
            .unwrap()
            .into_inner();
        listed.extend(answer.matches.into_iter().map(|g| g.game_id));
        if answer.next_page_token.is_empty() {
            break;
        }
        token = answer.next_page_token;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in busy {
        task.await.unwrap();
    }
    let unique: std::collections::HashSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "no match repeated");
    let skipped = made.iter().filter(|id| !unique.contains(id)).count();
    assert_eq!(skipped, 0, "matches made before the list skipped");
}
