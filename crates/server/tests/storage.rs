//! Storage faults against a real server process: a full disk (a real
//! tmpfs, where this machine lets the test mount one) and a file-size
//! limit (RLIMIT_FSIZE, everywhere). Issue 11, item 1: nothing
//! acknowledged is lost, every failed write is answered with an error,
//! health says NOT_SERVING while writes fail, and the server takes writes
//! again by itself once there is room.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::mpsc;
use tonic::{Code, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_types::StatusExt;

/// What the clients know of each game: the last version they were told
/// of, and whether an action with an unknown outcome followed it.
#[derive(Default)]
struct Ledger {
    /// (the request, its seat token, the version it was answered with).
    acknowledged: Vec<(Sent, String, u64)>,
    /// Game id -> (last version known, an unknown outcome since).
    known: HashMap<String, (u64, bool)>,
    failures: usize,
    unknown: usize,
}

/// Plays `actions` actions over `games`, round-robin, each with a request
/// id, plus a new game every `new_game_every` actions (they grow the
/// database). Failures are noted, and the game read again.
async fn play(
    client: &mut Client,
    games: &mut Vec<Game>,
    ledger: &mut Ledger,
    rng: &mut StdRng,
    actions: usize,
    new_game_every: usize,
) {
    for n in 0..actions {
        if n % new_game_every == 0 {
            let request = pb::NewGameRequest {
                variant: "standard".into(),
                settings: Some(pb::MatchSettings {
                    match_length: 7,
                    ..Default::default()
                }),
                request_id: format!("{:032x}", rng.random::<u128>()),
                ..Default::default()
            };
            match variant_game(client, request).await {
                Ok(game) => {
                    ledger.known.insert(game.id(), (game.game.version, false));
                    games.push(game);
                }
                Err(status) => note_failure(ledger, &status, None),
            }
        }
        let i = n % games.len();
        let g = &mut games[i];
        let Some(sent) = next_action(&g.game, rng, false) else {
            continue;
        };
        let token = g.to_act_token().to_string();
        match send(client, &sent, &token).await {
            Ok(game) => {
                assert_eq!(game.version, g.game.version + 1);
                ledger.acknowledged.push((sent, token, game.version));
                ledger.known.insert(g.id(), (game.version, false));
                g.game = game;
            }
            Err(status) => {
                note_failure(ledger, &status, Some(&g.id()));
                // Reads work while writes fail: carry on from the store's
                // version of the game.
                g.game = get_game(client, g).await;
                ledger.known.insert(g.id(), (g.game.version, false));
            }
        }
    }
}

fn note_failure(ledger: &mut Ledger, status: &Status, game_id: Option<&str>) {
    assert_eq!(
        (status.code(), reason(status).as_str()),
        (Code::Unavailable, "STORAGE_UNAVAILABLE"),
        "{status:?}"
    );
    ledger.failures += 1;
    let stored = status
        .get_details_error_info()
        .and_then(|info| info.metadata.get("stored").cloned())
        .unwrap_or_default();
    assert!(stored == "no" || stored == "unknown", "{status:?}");
    if stored == "unknown" {
        ledger.unknown += 1;
        if let Some(id) = game_id
            && let Some(known) = ledger.known.get_mut(id)
        {
            known.1 = true;
        }
    }
}

/// Every health status the server reports, as it changes.
async fn health_watch(addr: &str) -> mpsc::UnboundedReceiver<i32> {
    let mut health = HealthClient::new(channel(addr).await);
    let mut stream = health
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(HealthCheckResponse { status })) = stream.message().await {
            if tx.send(status).is_err() {
                return;
            }
        }
    });
    rx
}

/// The health the server reports now (Check).
async fn health_now(addr: &str) -> ServingStatus {
    let status = HealthClient::new(channel(addr).await)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .status;
    ServingStatus::try_from(status).unwrap()
}

/// Waits for the health watch to report `status`.
async fn health_becomes(statuses: &mut mpsc::UnboundedReceiver<i32>, status: ServingStatus) {
    let wanted = status as i32;
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(s) = statuses.recv().await {
            if s == wanted {
                return;
            }
        }
        panic!("health watch ended");
    })
    .await;
    assert!(waited.is_ok(), "health became {status:?} within 20 s");
}

/// A storage fault the test can start and end.
trait Fault {
    fn start(&mut self, server_pid: u32);
    fn end(&mut self, server_pid: u32);
}

/// The scenario: play, start the fault, play on (each failure answered),
/// NOT_SERVING; end the fault, SERVING again by itself, play on; kill the
/// server and start it again; every acknowledged action is stored (its
/// retry is answered as first), and nothing answered "not stored" is.
async fn nothing_acknowledged_is_lost(mut fixture: Fixture, fault: &mut dyn Fault) {
    let mut rng = StdRng::seed_from_u64(2026);
    let mut client = connect(&fixture.server.addr).await;
    let mut statuses = health_watch(&fixture.server.addr).await;
    health_becomes(&mut statuses, ServingStatus::Serving).await;
    let mut games = Vec::new();
    let mut ledger = Ledger::default();
    play(&mut client, &mut games, &mut ledger, &mut rng, 60, 10).await;
    assert_eq!(ledger.failures, 0);
    // Watchers of every game, from the start: what they are told.
    let mut watchers = Vec::new();
    for g in &games {
        watchers.push((g.id(), watch(&mut client, g, 0).await));
    }

    let pid = fixture.server.pid().expect("running");
    fault.start(pid);
    play(&mut client, &mut games, &mut ledger, &mut rng, 200, 2).await;
    assert!(ledger.failures > 0, "the fault made writes fail");
    health_becomes(&mut statuses, ServingStatus::NotServing).await;
    // And it stays so while the fault lasts, whatever small writes fit.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        health_now(&fixture.server.addr).await,
        ServingStatus::NotServing
    );
    while statuses.try_recv().is_ok() {}

    fault.end(pid);
    // No client writes meanwhile: the server finds out by itself.
    health_becomes(&mut statuses, ServingStatus::Serving).await;
    let failures = ledger.failures;
    play(&mut client, &mut games, &mut ledger, &mut rng, 60, 10).await;
    assert_eq!(ledger.failures, failures, "writes work again");

    // Each watcher heard of every version once, in order, and of nothing
    // the store does not hold (checked after the restart).
    let mut heard = Vec::new();
    for (game_id, mut updates) in watchers {
        let mut versions = Vec::new();
        while let Ok(Ok(Some(update))) =
            tokio::time::timeout(Duration::from_millis(300), updates.message()).await
        {
            versions.push((update.version, update.events));
        }
        let numbers: Vec<u64> = versions.iter().map(|(v, _)| *v).collect();
        let expected: Vec<u64> = (1..=numbers.last().copied().unwrap_or(0)).collect();
        assert_eq!(
            numbers, expected,
            "game {game_id}: every version once, in order"
        );
        heard.push((game_id, versions));
    }

    fixture.server.kill();
    fixture.server.restart();
    let mut client = connect(&fixture.server.addr).await;
    for (game_id, versions) in &heard {
        let stored: Vec<(u64, Vec<pb::GameEvent>)> = stored_history(&mut client, game_id)
            .await
            .into_iter()
            .map(|update| (update.version, update.events))
            .collect();
        for (version, events) in versions {
            let kept = stored.iter().find(|(v, _)| v == version);
            assert_eq!(
                kept.map(|(_, e)| e),
                Some(events),
                "game {game_id}: watchers heard version {version} as stored"
            );
        }
    }
    for (sent, token, version) in &ledger.acknowledged {
        let again = send(&mut client, sent, token)
            .await
            .unwrap_or_else(|s| panic!("the retry of an acknowledged action: {s:?}"));
        assert_eq!(again.version, *version, "answered as first: {sent:?}");
    }
    for game in &games {
        let stored = get_game(&mut client, game).await.version;
        let (known, unknown_since) = ledger.known[&game.id()];
        assert!(
            stored == known || (unknown_since && stored == known + 1),
            "game {}: stored at version {stored}, the clients know {known}",
            game.id()
        );
    }
    eprintln!(
        "{} actions acknowledged and found again; {} failures ({} of unknown outcome)",
        ledger.acknowledged.len(),
        ledger.failures,
        ledger.unknown
    );
}

/// A file-size limit on the server process (RLIMIT_FSIZE, set from
/// outside with prlimit): every write of a file past its first page fails
/// (EFBIG), as on a full disk.
struct FileSizeLimit;

impl Fault for FileSizeLimit {
    fn start(&mut self, pid: u32) {
        set_file_size_limit(pid, 4096);
    }
    fn end(&mut self, pid: u32) {
        set_file_size_limit(pid, libc::RLIM_INFINITY);
    }
}

#[tokio::test]
async fn a_file_size_limit_loses_no_acknowledged_action() {
    nothing_acknowledged_is_lost(start(), &mut FileSizeLimit).await;
}

/// A real full disk: the data folder on a small tmpfs, filled up by a
/// ballast file, then freed by deleting it.
struct FullTmpfs {
    mount: std::path::PathBuf,
}

impl FullTmpfs {
    /// Mounts a tmpfs of `megabytes`, or None where this machine does not
    /// let the test mount one (not root, or no permission).
    fn mount(at: &Path, megabytes: u32) -> Option<FullTmpfs> {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={megabytes}m,mode=0700"))
            .arg("tmpfs")
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| FullTmpfs {
            mount: at.to_path_buf(),
        })
    }

    fn ballast(&self) -> std::path::PathBuf {
        self.mount.join("ballast")
    }
}

impl Fault for FullTmpfs {
    fn start(&mut self, _: u32) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.ballast()).unwrap();
        let chunk = vec![0xa5u8; 64 * 1024];
        // Fill to the last byte: big chunks, then single bytes.
        while file.write_all(&chunk).is_ok() {}
        while file.write_all(&[0xa5]).is_ok() {}
    }
    fn end(&mut self, _: u32) {
        std::fs::remove_file(self.ballast()).unwrap();
    }
}

impl Drop for FullTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.mount)
            .status();
    }
}

#[tokio::test]
async fn a_full_disk_loses_no_acknowledged_action() {
    let folder = tempfile::tempdir().unwrap();
    let Some(mut tmpfs) = FullTmpfs::mount(folder.path(), 16) else {
        assert!(
            std::env::var_os("BACKGAMMON_REQUIRE_TMPFS").is_none(),
            "BACKGAMMON_REQUIRE_TMPFS is set, but no tmpfs could be mounted"
        );
        eprintln!("SKIPPED full-disk test: cannot mount a tmpfs here (run as root)");
        return;
    };
    let data = folder.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let fixture = start_in(&data, &[]);
    let started = Instant::now();
    nothing_acknowledged_is_lost(fixture, &mut tmpfs).await;
    eprintln!("full-disk scenario took {:?}", started.elapsed());
}
