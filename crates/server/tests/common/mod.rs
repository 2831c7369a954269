//! Helpers shared by the end-to-end API tests.
#![allow(dead_code)]

use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use bg_tests::plugin_dir;
use bg_tests::server::ServerProcess;
use rand::Rng;
use rand::rngs::StdRng;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

pub type Client = GameServiceClient<Channel>;

pub struct Fixture {
    pub server: ServerProcess,
    pub plugins: tempfile::TempDir,
    /// The data folder, when the fixture made it.
    pub data: Option<tempfile::TempDir>,
}

/// A server with the standard plugin.
pub fn start() -> Fixture {
    start_with_args(&[])
}

/// A server with the standard plugin and extra arguments.
pub fn start_with_args(args: &[&str]) -> Fixture {
    start_with_plugins(&[("bg_standard", "libbg_standard.so")], args)
}

/// A server with the Plakoto and standard plugins.
pub fn start_plakoto_and_standard() -> Fixture {
    start_with_plugins(
        &[
            ("bg_plakoto", "libbg_plakoto.so"),
            ("bg_standard", "libbg_standard.so"),
        ],
        &[],
    )
}

/// A server with these plugins (library, file name) and extra arguments.
/// A server with the four shipped variants.
pub fn start_all_variants() -> Fixture {
    start_with_plugins(
        &[
            ("bg_standard", "libbg_standard.so"),
            ("bg_caucasian", "libbg_caucasian.so"),
            ("bg_plakoto", "libbg_plakoto.so"),
            ("bg_trictrac", "libbg_trictrac.so"),
        ],
        &[],
    )
}

pub fn start_with_plugins(plugins: &[(&str, &str)], args: &[&str]) -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let mut fixture = start_with_plugins_in(plugins, data.path(), args);
    fixture.data = Some(data);
    fixture
}

/// A server with the standard plugin on a data folder of the caller's.
pub fn start_in(data: &std::path::Path, args: &[&str]) -> Fixture {
    start_with_plugins_in(&[("bg_standard", "libbg_standard.so")], data, args)
}

fn start_with_plugins_in(
    plugins: &[(&str, &str)],
    data: &std::path::Path,
    args: &[&str],
) -> Fixture {
    let plugins = plugin_dir(plugins);
    let server = ServerProcess::start_with(
        env!("CARGO_BIN_EXE_backgammond").as_ref(),
        plugins.path(),
        data,
        args,
    );
    Fixture {
        server,
        plugins,
        data: None,
    }
}

/// Resigns the game in progress for the seat on turn (by position).
pub async fn resign(client: &mut Client, g: &mut Game) {
    resign_at(client, g, 0).await;
}

/// Resigns for the seat on turn at `level` (0: by position; 1-3: an
/// offer, in a match that resigns by offers).
pub async fn resign_at(client: &mut Client, g: &mut Game, level: u32) {
    let resign = pb::ResignRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: String::new(),
        action: pb::ResignAction::Resign as i32,
        level,
    };
    g.game = client
        .resign(with_token(resign, g.to_act_token()))
        .await
        .unwrap()
        .into_inner();
}

/// The match's JSON record (ExportMatch), as text.
pub async fn json_record(client: &mut Client, g: &Game) -> String {
    client
        .export_match(pb::ExportMatchRequest {
            game_id: g.id(),
            format: pb::RecordFormat::Json as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .text
}

/// `host:port` of a fixture's server.
pub fn host_port(fixture: &Fixture) -> String {
    fixture
        .server
        .addr
        .strip_prefix("http://")
        .unwrap()
        .to_string()
}

/// A plain channel to the server (for the health service, raw calls).
pub async fn channel(addr: &str) -> Channel {
    tonic::transport::Endpoint::from_shared(addr.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap()
}

pub async fn connect(addr: &str) -> Client {
    GameServiceClient::connect(addr.to_string())
        .await
        .expect("connect")
}

pub fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

pub fn reason(status: &Status) -> String {
    status
        .get_details_error_info()
        .map(|i| i.reason)
        .unwrap_or_default()
}

/// A value of the error's ErrorInfo metadata.
pub fn error_metadata(status: &Status, key: &str) -> Option<String> {
    status
        .get_details_error_info()
        .and_then(|i| i.metadata.get(key).cloned())
}

#[derive(Clone, Debug)]
pub struct Game {
    pub game: pb::Game,
    pub tokens: [String; 2],
}

impl Game {
    pub fn id(&self) -> String {
        self.game.game_id.clone()
    }

    pub fn token_of(&self, seat: i32) -> &str {
        if seat == pb::Seat::White as i32 {
            &self.tokens[0]
        } else {
            &self.tokens[1]
        }
    }

    pub fn to_act_token(&self) -> &str {
        self.token_of(self.game.to_act)
    }
}

pub async fn new_game(client: &mut Client, settings: pb::MatchSettings) -> Game {
    variant_match(client, "standard", settings).await
}

/// A match (or money session) of `variant` with these settings.
pub async fn variant_match(
    client: &mut Client,
    variant: &str,
    settings: pb::MatchSettings,
) -> Game {
    variant_game(
        client,
        pb::NewGameRequest {
            variant: variant.into(),
            settings: Some(settings),
            ..Default::default()
        },
    )
    .await
    .expect("NewGame")
}

/// The game as the server has it now (GetGame).
pub async fn get_game(client: &mut Client, game: &Game) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            read_mask: None,
            game_id: game.id(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// The variants the server lists.
pub async fn variants(client: &mut Client) -> Vec<pb::Variant> {
    client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .unwrap()
        .into_inner()
        .variants
}

/// The names of the variants the server lists, sorted.
pub async fn variant_names(client: &mut Client) -> Vec<String> {
    let mut names: Vec<String> = variants(client).await.into_iter().map(|v| v.name).collect();
    names.sort();
    names
}

/// A game's updates after `from_version` (none before the next action when
/// it is the current version), then live ones.
pub async fn watch(
    client: &mut Client,
    game: &Game,
    from_version: u64,
) -> tonic::Streaming<pb::GameUpdate> {
    client
        .watch_game(pb::WatchGameRequest {
            game_id: game.id(),
            from_version,
            read_mask: None,
        })
        .await
        .unwrap()
        .into_inner()
}

/// A game from any NewGame request.
pub async fn variant_game(
    client: &mut Client,
    request: pb::NewGameRequest,
) -> Result<Game, Status> {
    let response = client.new_game(request).await?.into_inner();
    Ok(Game {
        game: response.game.expect("NewGame returns the game"),
        tokens: [response.white_token, response.black_token],
    })
}

/// The other seat (as the API's enum value).
pub fn other(seat: i32) -> i32 {
    if seat == pb::Seat::White as i32 {
        pb::Seat::Black as i32
    } else {
        pb::Seat::White as i32
    }
}

pub fn roll(g: &Game, request_id: &str) -> Request<pb::RollRequest> {
    with_token(
        pb::RollRequest {
            read_mask: None,
            game_id: g.id(),
            expected_version: g.game.version,
            request_id: request_id.into(),
            dice_seed: String::new(),
        },
        g.to_act_token(),
    )
}

pub fn move_request(g: &Game, notation: &str, request_id: &str) -> pb::MoveRequest {
    pb::MoveRequest {
        read_mask: None,
        game_id: g.id(),
        expected_version: g.game.version,
        request_id: request_id.into(),
        notation: notation.into(),
        moves: Vec::new(),
        dice_seed: String::new(),
    }
}

/// Plays the next action of whoever must act, choosing at random among
/// the legal plays; takes doubles; doubles now and then.
pub async fn step(client: &mut Client, g: &mut Game, rng: &mut StdRng) {
    let id = g.id();
    let version = g.game.version;
    let token = g.to_act_token().to_string();
    let next = match pb::Phase::try_from(g.game.phase).unwrap() {
        pb::Phase::Roll if rng.random_bool(0.05) && g.game.cube.is_some_and(|c| c.in_play) => {
            let offer = pb::DoubleRequest {
                read_mask: None,
                game_id: id.clone(),
                expected_version: version,
                request_id: String::new(),
                action: pb::DoubleAction::Offer as i32,
            };
            match client.double(with_token(offer, &token)).await {
                Ok(r) => r.into_inner(),
                // The cube may not be available (owner, dead cube): roll.
                Err(s) if s.code() == Code::FailedPrecondition => {
                    client.roll(roll(g, "")).await.unwrap().into_inner()
                }
                Err(s) => panic!("{s:?}"),
            }
        }
        pb::Phase::Roll => client.roll(roll(g, "")).await.unwrap().into_inner(),
        pb::Phase::Move => {
            let plays = &g.game.legal_plays;
            let play = plays[rng.random_range(0..plays.len())].notation.clone();
            client
                .r#move(with_token(move_request(g, &play, ""), &token))
                .await
                .unwrap()
                .into_inner()
        }
        pb::Phase::CubeOffered => {
            let action = if rng.random_bool(0.8) {
                pb::DoubleAction::Take
            } else {
                pb::DoubleAction::Drop
            };
            let answer = pb::DoubleRequest {
                read_mask: None,
                game_id: id,
                expected_version: version,
                request_id: String::new(),
                action: action as i32,
            };
            client
                .double(with_token(answer, &token))
                .await
                .unwrap()
                .into_inner()
        }
        other => panic!("unexpected phase {other:?}"),
    };
    assert_eq!(
        next.version,
        version + 1,
        "each action raises the version by one"
    );
    g.game = next;
}

/// Starts backgammond on these folders expecting it to refuse: its exit
/// code and what it printed on stderr (it is killed if still running
/// after 20 s, and the test fails).
pub fn refused_start(data: &std::path::Path, plugins: &std::path::Path) -> (i32, String) {
    refused_start_with(data, plugins, &[])
}

/// [`refused_start`] with more arguments.
pub fn refused_start_with(
    data: &std::path::Path,
    plugins: &std::path::Path,
    args: &[&str],
) -> (i32, String) {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_backgammond"))
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--plugin-dir")
        .arg(plugins)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("backgammond started where it should have refused");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code().unwrap_or(-1), stderr)
}

/// An action sent with a request id, kept to be sent again.
#[derive(Clone, Debug)]
pub enum Sent {
    Roll(pb::RollRequest),
    Move(pb::MoveRequest),
    Double(pb::DoubleRequest),
    Decide(pb::DecideRequest),
}

pub async fn send(client: &mut Client, sent: &Sent, token: &str) -> Result<pb::Game, Status> {
    match sent {
        Sent::Roll(r) => client.roll(with_token(r.clone(), token)).await,
        Sent::Move(m) => client.r#move(with_token(m.clone(), token)).await,
        Sent::Double(d) => client.double(with_token(d.clone(), token)).await,
        Sent::Decide(d) => client.decide(with_token(d.clone(), token)).await,
    }
    .map(|r| r.into_inner())
}

/// The next action of a game: a roll, a random legal play, a take of a
/// cube offered; now and then (if `may_double`) a double.
pub fn next_action(game: &pb::Game, rng: &mut StdRng, may_double: bool) -> Option<Sent> {
    let request_id = format!("{:032x}", rng.random::<u128>());
    let double = |action: pb::DoubleAction| {
        Sent::Double(pb::DoubleRequest {
            read_mask: None,
            game_id: game.game_id.clone(),
            expected_version: game.version,
            request_id: request_id.clone(),
            action: action as i32,
        })
    };
    match pb::Phase::try_from(game.phase).ok()? {
        pb::Phase::Roll
            if may_double && game.cube.is_some_and(|c| c.in_play) && rng.random_bool(0.05) =>
        {
            Some(double(pb::DoubleAction::Offer))
        }
        pb::Phase::Roll => Some(Sent::Roll(pb::RollRequest {
            read_mask: None,
            game_id: game.game_id.clone(),
            expected_version: game.version,
            request_id,
            dice_seed: String::new(),
        })),
        pb::Phase::Move => {
            let plays = &game.legal_plays;
            let play = &plays[rng.random_range(0..plays.len())];
            Some(Sent::Move(pb::MoveRequest {
                read_mask: None,
                game_id: game.game_id.clone(),
                expected_version: game.version,
                request_id,
                notation: play.notation.clone(),
                moves: Vec::new(),
                dice_seed: String::new(),
            }))
        }
        pb::Phase::CubeOffered => Some(double(pb::DoubleAction::Take)),
        pb::Phase::Decision => {
            let choices = &game.decision.as_ref()?.choices;
            Some(Sent::Decide(pb::DecideRequest {
                read_mask: None,
                game_id: game.game_id.clone(),
                expected_version: game.version,
                request_id,
                choice: choices
                    .get(rng.random_range(0..choices.len().max(1)))?
                    .clone(),
            }))
        }
        _ => None,
    }
}

/// A money session with no limit of games: it goes on as long as a test
/// plays, whatever the cube does.
pub fn long_match() -> pb::MatchSettings {
    pb::MatchSettings {
        match_length: 0,
        money_games: Some(0),
        ..Default::default()
    }
}

/// Reads a watch into `heard` until it has the update of version `last`,
/// each update within 10 s (`what` names the watch in a failure).
pub async fn hear_until(
    updates: &mut tonic::Streaming<pb::GameUpdate>,
    last: u64,
    heard: &mut Vec<u64>,
    what: &str,
) {
    while heard.last() != Some(&last) {
        let update = tokio::time::timeout(std::time::Duration::from_secs(10), updates.message())
            .await
            .unwrap_or_else(|_| panic!("{what}: no update within 10 s after {heard:?}"))
            .unwrap_or_else(|s| panic!("{what} goes on: {s:?}"))
            .unwrap_or_else(|| panic!("{what} ended after {heard:?}"));
        heard.push(update.version);
    }
}

/// Every update of a game from version 0 on, as stored when the call is
/// made: the watch's catch-up, which ends with the update carrying the
/// game as it stands (live updates after it are not read). A catch-up
/// that stalls for 10 s fails the test, a slow machine never cuts it.
pub async fn stored_history(client: &mut Client, game_id: &str) -> Vec<pb::GameUpdate> {
    let mut stream = client
        .watch_game(pb::WatchGameRequest {
            game_id: game_id.into(),
            from_version: 0,
            read_mask: None,
        })
        .await
        .unwrap()
        .into_inner();
    let mut all = Vec::new();
    loop {
        let update = tokio::time::timeout(std::time::Duration::from_secs(10), stream.message())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the history of {game_id} stalled after {} updates",
                    all.len()
                )
            })
            .unwrap_or_else(|s| panic!("the history of {game_id}: {s:?}"))
            .unwrap_or_else(|| panic!("the history of {game_id} ended before the game"));
        let last = update.game.is_some();
        all.push(update);
        if last {
            return all;
        }
    }
}

/// Sets the server process's file-size limit (RLIMIT_FSIZE, with
/// prlimit from outside): past it every write of a file fails (EFBIG), as
/// on a full disk; `libc::RLIM_INFINITY` lifts it.
pub fn set_file_size_limit(pid: u32, bytes: libc::rlim_t) {
    set_limit(pid, libc::RLIMIT_FSIZE, bytes, libc::RLIM_INFINITY);
}

/// Sets a limit of the server process from outside (prlimit): its soft
/// value `current`, its hard value `max`.
pub fn set_limit(
    pid: u32,
    resource: libc::__rlimit_resource_t,
    current: libc::rlim_t,
    max: libc::rlim_t,
) {
    let limit = libc::rlimit {
        rlim_cur: current,
        rlim_max: max,
    };
    // SAFETY: prlimit reads `limit` and writes nothing (old is null).
    let done = unsafe { libc::prlimit(pid as libc::pid_t, resource, &limit, std::ptr::null_mut()) };
    assert_eq!(done, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// A game of the faulty test variant with `fault` (see tests/plugins/faulty).
pub async fn faulty_game(client: &mut Client, fault: &str) -> Game {
    variant_game(
        client,
        pb::NewGameRequest {
            variant: "faulty".into(),
            options: std::collections::HashMap::from([("fault".to_string(), fault.to_string())]),
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

/// Why ListVariants says `variant` cannot be played ("" when it can).
pub async fn unhealthy(client: &mut Client, variant: &str) -> String {
    variants(client)
        .await
        .into_iter()
        .find(|v| v.name == variant)
        .map(|v| v.unhealthy)
        .unwrap_or_default()
}

/// The next `count` events of a fleet feed (bookmarks skipped), each
/// within 20 s; `what` names the feed in a failure.
pub async fn next_match_events(
    stream: &mut tonic::Streaming<pb::MatchEvent>,
    count: usize,
    what: &str,
) -> Vec<pb::MatchEvent> {
    let mut events = Vec::new();
    while events.len() < count {
        match tokio::time::timeout(std::time::Duration::from_secs(20), stream.message()).await {
            Ok(Ok(Some(e))) if e.kind == pb::MatchEventKind::Unspecified as i32 => {}
            Ok(Ok(Some(e))) => events.push(e),
            other => panic!("{what} stopped at {} of {count}: {other:?}", events.len()),
        }
    }
    events
}

/// The raw HTTP/1.1 answer to `request`: status line and headers
/// (lower-cased names), and the body (chunks joined).
pub fn http(addr: &str, request: &[u8]) -> (String, Vec<(String, String)>, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        // A stream stays open: what came within the timeout is the answer.
        .set_read_timeout(Some(std::time::Duration::from_secs(3)))
        .unwrap();
    std::io::Write::write_all(&mut stream, request).unwrap();
    let mut raw = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stream, &mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
    {
        let mut joined = Vec::new();
        let mut rest = body.as_slice();
        // Chunks, up to the last one, or as far as a stream still open
        // had sent them.
        while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap().trim(), 16)
                .unwrap();
            if size == 0 || rest.len() < end + 2 + size {
                break;
            }
            joined.extend_from_slice(&rest[end + 2..end + 2 + size]);
            rest = &rest[(end + 4 + size).min(rest.len())..];
        }
        body = joined;
    }
    (status, headers, body)
}

/// A server with every shipped plugin and extra arguments.
pub fn start_shipped(args: &[&str]) -> Fixture {
    let plugins: Vec<(String, String)> = bg_tests::SHIPPED_PLUGINS
        .iter()
        .map(|lib| (lib.to_string(), bg_tests::library_file_name(lib)))
        .collect();
    let plugins: Vec<(&str, &str)> = plugins
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    start_with_plugins(&plugins, args)
}

/// A new match of `variant` with the variant's defaults.
pub async fn default_match(client: &mut Client, variant: &str) -> Game {
    variant_game(
        client,
        pb::NewGameRequest {
            variant: variant.to_string(),
            ..Default::default()
        },
    )
    .await
    .unwrap()
}
