//! `bgctl bench`: the benchmarks, one module each. `load` measures Move
//! throughput against the health check, `watch` how soon a watcher hears
//! of an action, `hint` the computer player's rate, `clocks` creates
//! running clocks by the hundred thousand, `svg` times drawing a board,
//! and `movegen` (offline) times
//! legal-play generation through the plugin boundary. What the online
//! ones share is here: a channel to each server, calls sent again while a
//! server is away, quantiles.

mod clocks;
mod hint;
mod load;
mod movegen;
mod svg;
mod view;
mod watch;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use clap::Subcommand;
use tonic::transport::Channel;

use super::Context;
use crate::connection::{Transport, explain};

/// `bgctl bench`'s benchmarks.
#[derive(Subcommand)]
pub enum Command {
    /// Times legal-play generation through the plugin boundary over a
    /// corpus (offline); last line `ns_per_position=<f> positions=<n> plays=<total>`.
    Movegen(movegen::Args),
    /// Plays complete games against a running server and calls
    /// grpc.health.v1/Check the same way, the two taking turns; the first
    /// line counts the moves and the actions the server stored, the last is
    /// `move_rps=<x> health_rps=<y> ratio=<x/y>`. With `--addr A,B,...`
    /// (replicas of one service), the games and checks are spread over
    /// them. A call the server could not answer (it restarts, a connection
    /// is lost, RATE_LIMITED) is sent again with its request id, for up to
    /// a minute (`retries=` counts them). With --tokens, the seat tokens of
    /// the games played are saved there.
    Load(load::Args),
    /// Hint calls on a corpus's positions (`POSITION_ID DIE1 DIE2 ...`,
    /// white to play; standard backgammon): at 0-ply, then 1-ply, then
    /// health checks, `--seconds` each; prints the rates and their ratios
    /// to the health checks'.
    Hint(hint::Args),
    /// Plays a match on the first `--addr` and watches it on the last one
    /// (`--addr A,B`: two replicas); prints the delay from each action's
    /// answer to the watcher's update, `watch_delay_ms p50=.. p99=..`.
    Watch(watch::Args),
    /// Creates matches whose clocks run and are left to run (a day each):
    /// the load `scripts/bench-clocks` measures the server under, idle
    /// clocks by the hundred thousand. Prints `clocks=N seconds=S`.
    Clocks(clocks::Args),
    /// Draws a board of each variant as SVG, again and again (the
    /// renderer of `/games/{id}/board.svg`, in this process); prints
    /// `variant=.. svg_bytes=.. render_us_median=..` a variant.
    Svg(svg::Args),
}

pub fn run(cx: &Context, command: Command) -> Result<()> {
    match command {
        Command::Movegen(args) => movegen::run(cx, args),
        Command::Load(args) => load::run(cx, args),
        Command::Hint(args) => hint::run(cx, args),
        Command::Watch(args) => watch::run(cx, args),
        Command::Clocks(args) => clocks::run(cx, args),
        Command::Svg(args) => svg::run(cx, args),
    }
}

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

/// The `q` quantile (0..=1) of sorted durations, in milliseconds.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return 0.0;
    };
    sorted[((last as f64) * q).round() as usize].as_secs_f64() * 1e3
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
