//! `bgctl bench load`: Move throughput of a running server (or of several
//! replicas, the games spread over them), measured side by side with the
//! same servers' health check (the two take turns, window after window),
//! how long each Roll and Move call took, and how many versions the server
//! stored (for stored bytes per action).
//! `--auto-roll` plays cubeless games with auto-roll on: one call a turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use tokio::sync::watch;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use super::view::{GameView, TurnClient};
use super::{Counts, channels, nth, quantile_ms, retry_after, retrying};
use crate::commands::Context;
use crate::connection::{Transport, authorized, explain};
use crate::tokens::Tokens;

/// What `bgctl bench load` takes.
#[derive(clap::Args)]
pub struct Args {
    /// Games played at once (one worker each). Every figure in
    /// docs/benchmarks.md is at the default: with fewer, the server waits for its
    /// callers and the ratio says more of the round trip than of it.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Stop after this many games in all (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub games: u64,
    /// Seconds for each of the two measurements.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Moves and health checks take turns in windows this long, so
    /// that both see the same machine (a shared machine's speed
    /// changes within seconds); equal to --seconds, all the moves are
    /// measured first, then all the health checks.
    #[arg(long, default_value_t = 1.0)]
    pub slice_seconds: f64,
    /// Cubeless games with auto-roll on (one Move call a turn) instead
    /// of money games with the cube (a Roll and a Move call a turn).
    #[arg(long)]
    pub auto_roll: bool,
    /// As --auto-roll, black played by the service's computer player
    /// (its strongest level): each Move call of white's is answered
    /// with black's reply.
    #[arg(long, conflicts_with = "auto_roll")]
    pub bot: bool,
    /// With --bot: the computer player's level (none: the strongest).
    #[arg(long, requires = "bot", default_value = "")]
    pub bot_level: String,
    /// Verifiable dice in the games played (`true`, the server's
    /// default, or `false`: dice from its CSPRNG alone).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub verifiable_dice: bool,
    /// Roll and Move answered with the whole game, instead of only the
    /// fields the players read (version, phase, seat to act, the
    /// plays' notation), which they ask for with a read mask.
    #[arg(long)]
    pub whole_answers: bool,
}

/// Runs the load, then saves the seat tokens of the games it played
/// when `--tokens` asks for them.
pub fn run(cx: &Context, args: Args) -> Result<()> {
    let Args {
        concurrency,
        games,
        seconds,
        slice_seconds,
        auto_roll,
        bot,
        bot_level,
        verifiable_dice,
        whole_answers,
    } = args;
    let transport = cx.transport()?;
    let created = cx.block_on(load(
        &transport,
        &cx.addresses(),
        concurrency,
        games,
        seconds,
        slice_seconds,
        Setup {
            mode: match (auto_roll, bot) {
                (_, true) => Mode::Bot,
                (true, false) => Mode::AutoRoll,
                (false, false) => Mode::Classic,
            },
            bot_level,
            verifiable_dice,
            whole_answers,
        },
    ))?;
    if let Some(path) = &cx.tokens {
        // Asked for: the games stay playable (`bgctl show`, `move`).
        let mut saved = Tokens::load(path)?;
        for (game_id, [white, black]) in &created {
            saved.insert(game_id, white, black);
        }
        saved.save(path)?;
        eprintln!(
            "seat tokens of {} games saved in {}",
            created.len(),
            path.display()
        );
    }
    Ok(())
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
enum Mode {
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
struct Setup {
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
type Created = (String, [String; 2]);

/// Plays games while the move window is open, until the run is over,
/// counting Move calls and stored versions; returns how long each Roll and
/// Move call took. Games are created with the full client, turns played
/// with `turns`, which decodes only what this loop reads (see
/// [`super::view`]).
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

async fn load(
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
