//! `bgctl bench load`: Move throughput of a running server (or of several
//! replicas, the games spread over them), measured side by side with the
//! same servers' health check (the two take turns, window after window),
//! how long each Roll and Move call took, and how many versions the server
//! stored (for stored bytes per action).
//! `--auto-roll` plays cubeless games with auto-roll on: one call a turn.
//! `bgctl bench watch`: how soon a watcher hears of an action, on the same
//! server or on another replica.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use tokio::sync::watch;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::client::{Transport, authorized, explain};
use crate::view::{GameView, TurnClient};

/// What a load run counts, over all its workers.
#[derive(Default)]
struct Counts {
    /// Calls sent again: the server was away (a restart, a connection
    /// lost) or asked to wait (RATE_LIMITED).
    retries: AtomicU64,
    /// Move calls answered.
    moves: AtomicU64,
    /// Versions the server stored: one per game created, and one per
    /// action applied (a Roll, a Move).
    actions: AtomicU64,
}

/// What the workers of a load run call now. Moves and health checks take
/// turns in windows (`--slice-seconds`), so that both see the same
/// machine: a shared machine's neighbours change its speed within seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Window {
    Moves,
    HealthChecks,
    Over,
}

/// How often a move window checks whether the players have stopped.
const POLL: Duration = Duration::from_millis(10);

/// Waits for the workers' own window: `true` when it is open, `false`
/// once the run is over.
async fn open(window: &mut watch::Receiver<Window>, mine: Window) -> bool {
    match window.wait_for(|w| *w == mine || *w == Window::Over).await {
        Ok(w) => *w == mine,
        Err(_) => false,
    }
}

/// Opens `kind`'s window for `length`, or until `over` says its workers
/// have stopped; returns how long it was open and the calls `answered`
/// counted meanwhile.
async fn measure(
    switch: &watch::Sender<Window>,
    kind: Window,
    length: Duration,
    answered: &AtomicU64,
    over: impl Fn() -> bool,
) -> (Duration, u64) {
    switch.send_replace(kind);
    let (opened, before) = (Instant::now(), answered.load(Ordering::Relaxed));
    let closes = opened + length;
    loop {
        let left = closes.saturating_duration_since(Instant::now());
        if left.is_zero() || over() {
            break;
        }
        tokio::time::sleep(POLL.min(left)).await;
    }
    (opened.elapsed(), answered.load(Ordering::Relaxed) - before)
}

/// The games a load run plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Money games with the cube (never turned), auto-roll off: a Roll and
    /// a Move call a turn.
    Classic,
    /// Cubeless money games with auto-roll on: one Move call a turn.
    AutoRoll,
    /// As AutoRoll, black played by the service's computer player at its
    /// strongest level: one Move call a turn of white's, answered with
    /// black's reply (docs/bot.md).
    Bot,
}

/// The games a load run plays: their mode, and whether their dice are
/// verifiable (the server's default) or from the CSPRNG alone.
#[derive(Clone, Debug)]
pub struct Setup {
    pub mode: Mode,
    /// The computer player's level in [`Mode::Bot`] (empty: the
    /// strongest).
    pub bot_level: String,
    pub verifiable_dice: bool,
    /// Roll and Move answered with whole games, instead of the fields the
    /// loop reads (a read mask).
    pub whole_answers: bool,
}

impl Setup {
    fn settings(&self) -> pb::MatchSettings {
        let verifiable_dice = Some(self.verifiable_dice);
        match self.mode {
            Mode::Classic => pb::MatchSettings {
                auto_roll: Some(false),
                verifiable_dice,
                ..Default::default()
            },
            Mode::AutoRoll | Mode::Bot => pb::MatchSettings {
                cube_max: Some(0),
                auto_roll: Some(true),
                verifiable_dice,
                ..Default::default()
            },
        }
    }

    /// The seats the service plays.
    fn bots(&self) -> Vec<pb::BotSeat> {
        match self.mode {
            Mode::Bot => vec![pb::BotSeat {
                seat: pb::Seat::Black as i32,
                level: self.bot_level.clone(),
            }],
            _ => Vec::new(),
        }
    }
}

/// A game a load run created: its id and its seat tokens (white, black).
pub type Created = (String, [String; 2]);

/// How long a call is sent again while the server is away before the run
/// gives up.
const OUTAGE: Duration = Duration::from_secs(60);

/// Sends a call until it is answered, again while the server is away (it
/// restarts, the connection is lost: the channel connects anew) or asks
/// to wait (RATE_LIMITED), for up to [`OUTAGE`]. Every call carries a
/// request id, so a retry is answered as first, never applied twice.
async fn retrying<T, Fut>(counts: &Counts, mut call: impl FnMut() -> Fut) -> Result<T>
where
    Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    let deadline = Instant::now() + OUTAGE;
    loop {
        let status = match call().await {
            Ok(answer) => return Ok(answer.into_inner()),
            Err(status) => status,
        };
        let Some(wait) = retry_after(&status) else {
            return Err(explain(status));
        };
        if Instant::now() + wait > deadline {
            return Err(explain(status).context(format!(
                "the server did not answer for {} s",
                OUTAGE.as_secs()
            )));
        }
        counts.retries.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(wait).await;
    }
}

/// How long to wait before sending a refused call again, if it may be.
fn retry_after(status: &tonic::Status) -> Option<Duration> {
    use tonic::Code;
    use tonic_types::StatusExt;
    let again = Duration::from_millis(100);
    match status.get_details_error_info() {
        Some(info) if info.reason == "RATE_LIMITED" => {
            let ms = info.metadata.get("retry_after_ms")?.parse().ok()?;
            Some(Duration::from_millis(ms))
        }
        // The server's own answer: stopping, storage away, a write whose
        // outcome is unknown.
        Some(_) => (status.code() == Code::Unavailable).then_some(again),
        // Every answer of the server has a reason: this one came from
        // the connection (lost, or closed by a server going away).
        None => Some(again),
    }
}

/// Plays games while the move window is open, until the run is over,
/// counting Move calls and stored versions; returns how long each Roll and
/// Move call took. Games are created with the full client, turns played
/// with `turns`, which decodes only what this loop reads (see
/// [`crate::view`]).
async fn play_games(
    client: GameServiceClient<Channel>,
    turns: TurnClient,
    mut window: watch::Receiver<Window>,
    games_left: Arc<AtomicU64>,
    counts: Arc<Counts>,
    setup: Setup,
    created_games: Arc<std::sync::Mutex<Vec<Created>>>,
) -> Result<Vec<Duration>> {
    let mut n = 0u64;
    let mut latencies = Vec::new();
    let read_mask = (!setup.whole_answers).then(GameView::read_mask);
    while open(&mut window, Window::Moves).await {
        if games_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| g.checked_sub(1))
            .is_err()
        {
            return Ok(latencies);
        }
        let new_game = pb::NewGameRequest {
            variant: "standard".into(),
            settings: Some(setup.settings()),
            bots: setup.bots(),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        };
        let created = retrying(&counts, || {
            let mut client = client.clone();
            let request = new_game.clone();
            async move { client.new_game(request).await }
        })
        .await?;
        let tokens = [created.white_token, created.black_token];
        let mut game = GameView::from(created.game.context("NewGame returned no game")?);
        created_games
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((game.game_id.clone(), tokens.clone()));
        counts.actions.fetch_add(game.version, Ordering::Relaxed);
        while open(&mut window, Window::Moves).await {
            n += 1;
            let token = match pb::Seat::try_from(game.to_act) {
                Ok(pb::Seat::White) => &tokens[0],
                Ok(pb::Seat::Black) => &tokens[1],
                _ => break,
            };
            let game_id = game.game_id.clone();
            let version = game.version;
            let request_id = format!("bench-{game_id}-{version}");
            let sent = Instant::now();
            // Checked once: the token makes a valid header.
            authorized((), token)?;
            game = match pb::Phase::try_from(game.phase) {
                Ok(pb::Phase::Roll) => {
                    let roll = pb::RollRequest {
                        read_mask: read_mask.clone(),
                        game_id,
                        expected_version: game.version,
                        request_id,
                        dice_seed: String::new(),
                    };
                    retrying(&counts, || {
                        let mut turns = turns.clone();
                        let request = authorized(roll.clone(), token);
                        async move { turns.roll(request.map_err(bad_token)?).await }
                    })
                    .await?
                }
                Ok(pb::Phase::Move) => {
                    // Any legal play: vary it so games differ.
                    let plays = &game.legal_plays;
                    let play = plays[(n as usize) % plays.len()].notation.clone();
                    let request = pb::MoveRequest {
                        read_mask: read_mask.clone(),
                        game_id,
                        expected_version: game.version,
                        request_id,
                        notation: play,
                        moves: Vec::new(),
                        dice_seed: String::new(),
                    };
                    let game = retrying(&counts, || {
                        let mut turns = turns.clone();
                        let request = authorized(request.clone(), token);
                        async move { turns.play(request.map_err(bad_token)?).await }
                    })
                    .await?;
                    counts.moves.fetch_add(1, Ordering::Relaxed);
                    game
                }
                _ => break,
            };
            latencies.push(sent.elapsed());
            counts
                .actions
                .fetch_add(game.version.saturating_sub(version), Ordering::Relaxed);
        }
    }
    Ok(latencies)
}

/// A token that makes no header (never: it was checked before).
fn bad_token(e: anyhow::Error) -> tonic::Status {
    tonic::Status::invalid_argument(e.to_string())
}

/// The `q` quantile (0..=1) of sorted durations, in milliseconds.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return 0.0;
    };
    sorted[((last as f64) * q).round() as usize].as_secs_f64() * 1e3
}

async fn check_health(
    mut client: HealthClient<Channel>,
    mut window: watch::Receiver<Window>,
    calls: Arc<AtomicU64>,
) -> Result<()> {
    while open(&mut window, Window::HealthChecks).await {
        let answer = client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await;
        match answer {
            Ok(_) => {
                calls.fetch_add(1, Ordering::Relaxed);
            }
            // The server away: asked again (not counted), as moves are.
            Err(status) => match retry_after(&status) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return Err(explain(status)),
            },
        }
    }
    Ok(())
}

/// A channel to each address (several: replicas of one service).
async fn channels(transport: &Transport, addrs: &[String]) -> Result<Vec<Channel>> {
    let mut channels = Vec::new();
    for addr in addrs {
        let channel = transport
            .endpoint(addr)?
            .tcp_nodelay(true)
            .connect()
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        channels.push(channel);
    }
    anyhow::ensure!(!channels.is_empty(), "no server address given");
    Ok(channels)
}

/// Worker `i`'s server when there are several: round-robin, so the games
/// (and the health checks) are spread evenly.
fn nth(channels: &[Channel], i: usize) -> Channel {
    channels[i % channels.len()].clone()
}

pub async fn load(
    transport: &Transport,
    addrs: &[String],
    concurrency: usize,
    games: u64,
    seconds: f64,
    slice_seconds: f64,
    setup: Setup,
) -> Result<Vec<Created>> {
    let seconds_of = |name: &str, value: f64| {
        Duration::try_from_secs_f64(value)
            .ok()
            .filter(|d| !d.is_zero())
            .with_context(|| format!("--{name} takes a number of seconds above 0, not {value}"))
    };
    let duration = seconds_of("seconds", seconds)?;
    let slice = seconds_of("slice-seconds", slice_seconds)?.min(duration);
    let channels = channels(transport, addrs).await?;

    let counts = Arc::new(Counts::default());
    let checks = Arc::new(AtomicU64::new(0));
    let games_left = Arc::new(AtomicU64::new(if games == 0 { u64::MAX } else { games }));
    let (switch, window) = watch::channel(Window::Moves);
    let created_games = Arc::new(std::sync::Mutex::new(Vec::new()));
    let players: Vec<_> = (0..concurrency.max(1))
        .map(|i| {
            tokio::spawn(play_games(
                GameServiceClient::new(nth(&channels, i)),
                TurnClient::new(nth(&channels, i)),
                window.clone(),
                games_left.clone(),
                counts.clone(),
                setup.clone(),
                created_games.clone(),
            ))
        })
        .collect();
    let checkers: Vec<_> = (0..concurrency.max(1))
        .map(|i| {
            tokio::spawn(check_health(
                HealthClient::new(nth(&channels, i)),
                window.clone(),
                checks.clone(),
            ))
        })
        .collect();

    // The windows: moves, then health checks, each `slice` long (the last
    // of each kind what is left of `seconds`), until each kind has had
    // `seconds`. A window counts the calls answered in it; the calls in
    // flight when it closes are answered at the start of the next one,
    // and counted by neither.
    let (mut move_time, mut moves) = (Duration::ZERO, 0u64);
    let (mut check_time, mut checked) = (Duration::ZERO, 0u64);
    // The games may run out (`--games`): the moves are measured then.
    let moves_over = || players.iter().all(|p| p.is_finished());
    while (move_time < duration && !moves_over()) || check_time < duration {
        let length = slice.min(duration.saturating_sub(move_time));
        if !length.is_zero() && !moves_over() {
            let (took, n) =
                measure(&switch, Window::Moves, length, &counts.moves, moves_over).await;
            (move_time, moves) = (move_time + took, moves + n);
        }
        let length = slice.min(duration.saturating_sub(check_time));
        if !length.is_zero() {
            let (took, n) = measure(&switch, Window::HealthChecks, length, &checks, || false).await;
            (check_time, checked) = (check_time + took, checked + n);
        }
    }
    switch.send_replace(Window::Over);
    let mut latencies = Vec::new();
    for p in players {
        latencies.extend(p.await??);
    }
    for c in checkers {
        c.await??;
    }
    let move_rps = moves as f64 / move_time.as_secs_f64();
    let health_rps = checked as f64 / check_time.as_secs_f64();
    latencies.sort_unstable();

    println!(
        "mode={} servers={} concurrency={concurrency} seconds={seconds} slice_seconds={} moves={} actions={} health_checks={} retries={} verifiable_dice={} answers={}",
        match (setup.mode, setup.bot_level.as_str()) {
            (Mode::Classic, _) => "classic".to_string(),
            (Mode::AutoRoll, _) => "auto-roll".to_string(),
            (Mode::Bot, "") => "bot".to_string(),
            (Mode::Bot, level) => format!("bot:{level}"),
        },
        channels.len(),
        slice.as_secs_f64(),
        counts.moves.load(Ordering::Relaxed),
        counts.actions.load(Ordering::Relaxed),
        checks.load(Ordering::Relaxed),
        counts.retries.load(Ordering::Relaxed),
        setup.verifiable_dice,
        if setup.whole_answers {
            "whole"
        } else {
            "masked"
        },
    );
    println!(
        "roll_and_move_latency_ms p50={:.2} p90={:.2} p99={:.2} max={:.2}",
        quantile_ms(&latencies, 0.5),
        quantile_ms(&latencies, 0.9),
        quantile_ms(&latencies, 0.99),
        quantile_ms(&latencies, 1.0),
    );
    println!(
        "move_rps={move_rps:.1} health_rps={health_rps:.1} ratio={:.3}",
        move_rps / health_rps.max(f64::MIN_POSITIVE)
    );
    let created = std::mem::take(&mut *created_games.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(created)
}

/// `bgctl bench watch`: plays a long match on the first server and
/// watches it on the last one; for each action, the time from its answer
/// to the watcher's update of that version.
pub async fn watch(transport: &Transport, addrs: &[String], actions: usize) -> Result<()> {
    let channels = channels(transport, addrs).await?;
    let mut player = GameServiceClient::new(channels[0].clone());
    let mut watcher = GameServiceClient::new(channels[channels.len() - 1].clone());
    let mut delays = Vec::with_capacity(actions);
    let mut updates = None;
    let mut game: Option<(pb::Game, [String; 2])> = None;
    let mut n = 0usize;
    while delays.len() < actions {
        let (current, tokens) = match game.take() {
            Some((current, tokens)) if current.phase != pb::Phase::MatchOver as i32 => {
                (current, tokens)
            }
            _ => {
                let created = player
                    .new_game(pb::NewGameRequest {
                        variant: "standard".into(),
                        settings: Some(pb::MatchSettings {
                            match_length: 25,
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .await
                    .map_err(explain)?
                    .into_inner();
                let current = created.game.context("NewGame returned no game")?;
                let stream = watcher
                    .watch_game(pb::WatchGameRequest {
                        game_id: current.game_id.clone(),
                        from_version: current.version,
                        read_mask: None,
                    })
                    .await
                    .map_err(explain)?
                    .into_inner();
                updates = Some(stream);
                (current, [created.white_token, created.black_token])
            }
        };
        n += 1;
        let next = next_action(&mut player, &current, &tokens, n).await?;
        let answered = Instant::now();
        let stream = updates.as_mut().context("no watch stream")?;
        loop {
            let update = stream
                .message()
                .await
                .map_err(explain)?
                .context("the watch stream ended")?;
            if update.version >= next.version {
                break;
            }
        }
        delays.push(answered.elapsed());
        game = Some((next, tokens));
    }
    delays.sort_unstable();
    println!(
        "servers={} actions={} watch_delay_ms p50={:.3} p90={:.3} p99={:.3} max={:.3}",
        channels.len(),
        delays.len(),
        quantile_ms(&delays, 0.5),
        quantile_ms(&delays, 0.9),
        quantile_ms(&delays, 0.99),
        quantile_ms(&delays, 1.0),
    );
    Ok(())
}

/// The next action of the seat to act (a roll, or a legal play; a cube
/// offered is taken), answered.
async fn next_action(
    client: &mut GameServiceClient<Channel>,
    game: &pb::Game,
    tokens: &[String; 2],
    n: usize,
) -> Result<pb::Game> {
    let token = match pb::Seat::try_from(game.to_act) {
        Ok(pb::Seat::White) => &tokens[0],
        Ok(pb::Seat::Black) => &tokens[1],
        _ => anyhow::bail!("nobody is to act in game {}", game.game_id),
    };
    let game_id = game.game_id.clone();
    let expected_version = game.version;
    let answer = match pb::Phase::try_from(game.phase) {
        Ok(pb::Phase::Roll) => {
            let request = pb::RollRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                dice_seed: String::new(),
            };
            client.roll(authorized(request, token)?).await
        }
        Ok(pb::Phase::Move) => {
            let plays = &game.legal_plays;
            let request = pb::MoveRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                notation: plays[n % plays.len()].notation.clone(),
                moves: Vec::new(),
                dice_seed: String::new(),
            };
            client.r#move(authorized(request, token)?).await
        }
        Ok(pb::Phase::CubeOffered) => {
            let request = pb::DoubleRequest {
                read_mask: None,
                game_id,
                expected_version,
                request_id: String::new(),
                action: pb::DoubleAction::Take as i32,
            };
            client.double(authorized(request, token)?).await
        }
        phase => anyhow::bail!("game {} waits in phase {phase:?}", game.game_id),
    };
    Ok(answer.map_err(explain)?.into_inner())
}

/// `bgctl bench clocks`: creates `games` matches with a day on each
/// clock, `concurrency` at a time, spread over the servers, and leaves
/// them running.
pub async fn clocks(
    transport: &Transport,
    addrs: &[String],
    games: u64,
    concurrency: usize,
) -> Result<()> {
    let channels = channels(transport, addrs).await?;
    let left = Arc::new(AtomicU64::new(games));
    let counts = Arc::new(Counts::default());
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency.max(1))
        .map(|i| {
            let client = GameServiceClient::new(nth(&channels, i));
            let (left, counts) = (left.clone(), counts.clone());
            tokio::spawn(async move {
                while left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| g.checked_sub(1))
                    .is_ok()
                {
                    let request = pb::NewGameRequest {
                        variant: "standard".into(),
                        settings: Some(pb::MatchSettings {
                            match_length: 7,
                            clock: Some(pb::ClockSettings {
                                reserve_ms: 86_400_000,
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        request_id: uuid::Uuid::new_v4().to_string(),
                        ..Default::default()
                    };
                    retrying(&counts, || {
                        let mut client = client.clone();
                        let request = request.clone();
                        async move { client.new_game(request).await }
                    })
                    .await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    println!(
        "clocks={games} seconds={:.1} retries={}",
        started.elapsed().as_secs_f64(),
        counts.retries.load(Ordering::Relaxed)
    );
    Ok(())
}

/// `bench hint`: Hint calls on the corpus's positions (white to play its
/// dice) at 0-ply, then at 1-ply, then health checks, each for `seconds`
/// with `concurrency` callers; prints each rate and its ratio to the
/// health checks'.
pub async fn hint(
    transport: &Transport,
    addrs: &[String],
    corpus: &std::path::Path,
    seconds: f64,
    concurrency: usize,
) -> Result<()> {
    let text =
        std::fs::read_to_string(corpus).with_context(|| format!("reading {}", corpus.display()))?;
    let mut positions = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [id, d1, d2, ..] = fields.as_slice() else {
            anyhow::bail!("a corpus line is `POSITION_ID DIE1 DIE2 ...`: {line}");
        };
        positions.push(pb::HintRequest {
            variant: "standard".into(),
            board: Some(crate::client::board_of_position_id(
                id,
                bg_engine::CHECKERS,
                bg_engine::Geometry::Opposed,
            )?),
            seat: pb::Seat::White as i32,
            dice: Some(pb::Dice {
                die1: d1.parse()?,
                die2: d2.parse()?,
            }),
            ..Default::default()
        });
    }
    if positions.is_empty() {
        anyhow::bail!("no positions in {}", corpus.display());
    }
    let positions = Arc::new(positions);
    let channels = channels(transport, addrs).await?;
    let span = Duration::from_secs_f64(seconds);
    let mut rates = Vec::new();
    for plies in [Some(0), Some(1), None] {
        let calls = Arc::new(AtomicU64::new(0));
        let until = Instant::now() + span;
        let tasks: Vec<_> = (0..concurrency.max(1))
            .map(|i| {
                let (channel, calls, positions) =
                    (nth(&channels, i), calls.clone(), positions.clone());
                tokio::spawn(async move {
                    let mut client = GameServiceClient::new(channel.clone());
                    let mut health = HealthClient::new(channel);
                    let mut n = i;
                    while Instant::now() < until {
                        match plies {
                            Some(plies) => {
                                let request = pb::HintRequest {
                                    plies: Some(plies),
                                    ..positions[n % positions.len()].clone()
                                };
                                client.hint(request).await.map_err(explain)?;
                            }
                            None => {
                                health
                                    .check(HealthCheckRequest {
                                        service: String::new(),
                                    })
                                    .await
                                    .map_err(explain)?;
                            }
                        }
                        calls.fetch_add(1, Ordering::Relaxed);
                        n += concurrency.max(1);
                    }
                    anyhow::Ok(())
                })
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        rates.push(calls.load(Ordering::Relaxed) as f64 / seconds);
    }
    let health = rates[2].max(f64::MIN_POSITIVE);
    println!(
        "positions={} concurrency={concurrency} seconds={seconds} hint_0ply_rps={:.1} hint_1ply_rps={:.1} health_rps={:.1} ratio_0ply={:.4} ratio_1ply={:.5}",
        positions.len(),
        rates[0],
        rates[1],
        rates[2],
        rates[0] / health,
        rates[1] / health
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_one_to_a_hundred_milliseconds() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile_ms(&sorted, 0.0), 1.0);
        assert_eq!(quantile_ms(&sorted, 0.5), 51.0);
        assert_eq!(quantile_ms(&sorted, 0.99), 99.0);
        assert_eq!(quantile_ms(&sorted, 1.0), 100.0);
        assert_eq!(quantile_ms(&[], 0.5), 0.0);
    }
}
