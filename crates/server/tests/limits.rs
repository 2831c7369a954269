//! What an operator's limits do against clients that hold or ask for too
//! much (issue 34): the server at its file-descriptor limit, more
//! connections than allowed, silent connections, streams per connection,
//! watchers per game and games created per caller. Each is refused with a
//! clear answer, and the server goes on serving the others.

mod common;

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bg_api::v1 as pb;
use common::*;
use tonic::Code;
use tonic_types::StatusExt;

/// The CPU time (user and system) a process has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}

/// Whether the server closed this connection within `within` (a read
/// ends, or fails, instead of waiting).
fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut byte = [0u8; 64];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// A client gets through within 10 s (a new connection and a read; tried
/// again while the server has not yet seen the connections that went).
async fn served(fixture: &Fixture) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let call = async {
            let mut client =
                pb::game_service_client::GameServiceClient::connect(fixture.server.addr.clone())
                    .await
                    .ok()?;
            client.list_variants(pb::ListVariantsRequest {}).await.ok()
        };
        if let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(2), call).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// At its file-descriptor limit the server waits before accepting again
/// instead of spinning a core, and serves new clients once descriptors
/// are free again.
#[tokio::test(flavor = "multi_thread")]
async fn at_the_file_descriptor_limit_the_server_backs_off_and_recovers() {
    let fixture = start_with_args(&["--max-connections", "100000"]);
    let pid = fixture.server.pid().unwrap();
    set_limit(pid, libc::RLIMIT_NOFILE, 128, 128);
    // More connections than descriptors: the kernel queues those the
    // server cannot accept (until its queue is full: then a connection
    // times out, and no more are tried).
    let address: std::net::SocketAddr = host_port(&fixture).parse().unwrap();
    let mut held: Vec<TcpStream> = (0..200)
        .map_while(|_| TcpStream::connect_timeout(&address, Duration::from_secs(1)).ok())
        .collect();
    assert!(held.len() > 128, "{} connections", held.len());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = cpu_time(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_time(pid) - before;
    // A spinning accept loop uses the whole 2 s of a core.
    assert!(
        used < Duration::from_millis(600),
        "the server used {used:?} of CPU in 2 s at its descriptor limit"
    );
    held.clear();
    assert!(served(&fixture).await, "served once descriptors are free");
}

/// Connections beyond --max-connections are closed as they come, and a
/// client is served again once others have gone.
#[tokio::test(flavor = "multi_thread")]
async fn connections_beyond_the_limit_are_closed_at_once() {
    let fixture = start_with_args(&["--max-connections", "20"]);
    let mut held: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(host_port(&fixture)).unwrap())
        .collect();
    // The server has taken the first 20 (it reads nothing from them yet).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = TcpStream::connect(host_port(&fixture)).unwrap();
    assert!(
        closed_by_server(&mut extra, Duration::from_secs(5)),
        "the 21st connection is closed"
    );
    assert!(
        !closed_by_server(&mut held[0], Duration::from_millis(200)),
        "the first ones stay open"
    );
    held.clear();
    assert!(served(&fixture).await);
}

/// A connection that sends nothing is closed after the handshake limit; a
/// live client's connection is kept open by the server's pings however
/// long its watch waits for an update.
#[tokio::test(flavor = "multi_thread")]
async fn a_silent_connection_is_closed_and_a_quiet_watcher_is_not() {
    let fixture = start_with_args(&[
        "--handshake-seconds",
        "1",
        "--idle-connection-seconds",
        "1.5",
    ]);
    let mut silent = TcpStream::connect(host_port(&fixture)).unwrap();
    let opened = Instant::now();
    assert!(closed_by_server(&mut silent, Duration::from_secs(10)));
    assert!(opened.elapsed() >= Duration::from_millis(900));

    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut watcher = connect(&fixture.server.addr).await;
    let mut updates = watch(&mut watcher, &g, g.game.version).await;
    // Three idle limits without a word from the watcher's side.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(3);
    step(&mut client, &mut g, &mut rng).await;
    let update = tokio::time::timeout(Duration::from_secs(5), updates.message())
        .await
        .expect("an update")
        .expect("the watch is still open")
        .unwrap();
    assert_eq!(update.version, g.game.version);
}

/// The server advertises its limit of calls in flight on one connection
/// (MAX_CONCURRENT_STREAMS): a call beyond it waits for one to end.
#[tokio::test(flavor = "multi_thread")]
async fn calls_beyond_the_streams_per_connection_wait_for_one_to_end() {
    let fixture = start_with_args(&["--max-streams-per-connection", "2"]);
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let first = watch(&mut client, &g, 0).await;
    let _second = watch(&mut client, &g, 0).await;
    let mut third = client.clone();
    let read = tokio::spawn(async move {
        third
            .get_game(pb::GetGameRequest {
                game_id: g.id(),
                read_mask: None,
            })
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!read.is_finished(), "the third call waits");
    drop(first);
    let answered = tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("answered once a stream ended")
        .unwrap();
    assert!(answered.is_ok(), "{answered:?}");
}

/// Watchers of one game beyond --max-watchers-per-game are refused with a
/// reason; a place freed is taken again.
#[tokio::test(flavor = "multi_thread")]
async fn watchers_beyond_the_limit_of_a_game_are_refused() {
    let fixture = start_with_args(&["--max-watchers-per-game", "3"]);
    let mut client = connect(&fixture.server.addr).await;
    let g = new_game(&mut client, pb::MatchSettings::default()).await;
    let other = new_game(&mut client, pb::MatchSettings::default()).await;
    let mut watchers = Vec::new();
    for _ in 0..3 {
        watchers.push(watch(&mut client, &g, 0).await);
    }
    let request = |game: &Game| pb::WatchGameRequest {
        game_id: game.id(),
        from_version: 0,
        read_mask: None,
    };
    let refused = client.watch_game(request(&g)).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::ResourceExhausted, "TOO_MANY_WATCHERS"),
        "{refused:?}"
    );
    // Another game has places of its own.
    assert!(client.watch_game(request(&other)).await.is_ok());
    // A watcher leaving frees its place (once the server sees it gone).
    watchers.pop();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match client.watch_game(request(&g)).await {
            Ok(_) => break,
            Err(status) if reason(&status) == "TOO_MANY_WATCHERS" => {
                assert!(Instant::now() < deadline, "the place is freed within 10 s");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(status) => panic!("{status:?}"),
        }
    }
}

/// A caller creating games faster than --new-games-per-second allows (past
/// its burst) is refused with the time to wait, and served after it.
#[tokio::test(flavor = "multi_thread")]
async fn a_caller_creating_games_too_fast_is_told_to_wait() {
    let fixture = start_with_args(&["--new-games-per-second", "2", "--new-games-burst", "5"]);
    let mut client = connect(&fixture.server.addr).await;
    let request = pb::NewGameRequest {
        variant: "standard".into(),
        ..Default::default()
    };
    let mut created = 0;
    let refused = loop {
        match client.new_game(request.clone()).await {
            Ok(_) => created += 1,
            Err(status) => break status,
        }
        assert!(created <= 6, "the burst is 5");
    };
    assert!((5..=6).contains(&created), "{created}");
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::ResourceExhausted, "RATE_LIMITED"),
        "{refused:?}"
    );
    let info = refused.get_details_error_info().unwrap();
    let wait: u64 = info.metadata["retry_after_ms"].parse().unwrap();
    assert!((1..=500).contains(&wait), "{wait}");
    tokio::time::sleep(Duration::from_millis(wait + 50)).await;
    assert!(
        client.new_game(request).await.is_ok(),
        "served after the wait"
    );
}

/// A watcher that stops reading while its game moves on holds a bounded
/// share of the server: once what it has not read fills its places, it
/// is told (RESOURCE_EXHAUSTED, WATCHER_BEHIND) when it reads again, and
/// resumed from the last version it saw it gets the rest, each version
/// once, in order. Its connection takes 1 KiB at a time, so the server
/// cannot hand its updates on to the socket.
#[tokio::test(flavor = "multi_thread")]
async fn a_watcher_that_stops_reading_is_told_it_fell_behind_and_resumes_where_it_was() {
    let fixture = start();
    let mut client = connect(&fixture.server.addr).await;
    let mut g = new_game(&mut client, long_match()).await;
    let from = g.game.version;
    let narrow = tonic::transport::Endpoint::from_shared(fixture.server.addr.clone())
        .unwrap()
        .initial_stream_window_size(Some(1024))
        .initial_connection_window_size(Some(1024))
        .connect()
        .await
        .unwrap();
    let mut slow = pb::game_service_client::GameServiceClient::new(narrow);
    let mut updates = watch(&mut slow, &g, from).await;
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(8);
    for _ in 0..200 {
        step(&mut client, &mut g, &mut rng).await;
    }
    let mut versions = Vec::new();
    let behind = loop {
        match tokio::time::timeout(Duration::from_secs(10), updates.message())
            .await
            .expect("the watch answers")
        {
            Ok(Some(update)) => versions.push(update.version),
            Ok(None) => panic!("the watch ended without a word after {versions:?}"),
            Err(status) => break status,
        }
    };
    assert_eq!(behind.code(), Code::ResourceExhausted, "{behind:?}");
    assert_eq!(reason(&behind), "WATCHER_BEHIND");
    assert!(
        versions.len() < 200,
        "told before it was sent everything: {} of 200",
        versions.len()
    );
    let seen = versions.last().copied().unwrap_or(from);
    let mut rest = watch(&mut client, &g, seen).await;
    hear_until(
        &mut rest,
        g.game.version,
        &mut versions,
        "the resumed watch",
    )
    .await;
    assert_eq!(
        versions,
        (from + 1..=g.game.version).collect::<Vec<_>>(),
        "every version once, in order, across the resume"
    );
}
