//! `bgctl bench clocks`: matches whose clocks run, created by the hundred
//! thousand and left to run (a day each), for `scripts/bench-clocks`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::Result;
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;

use super::{Counts, channels, nth, retrying};
use crate::commands::Context;
use crate::connection::Transport;

/// What `bgctl bench clocks` takes.
#[derive(clap::Args)]
pub struct Args {
    /// Matches to create.
    #[arg(long, default_value_t = 100_000)]
    pub games: u64,
    /// Matches created at once.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let transport = cx.transport()?;
    cx.block_on(clocks(
        &transport,
        &cx.addresses(),
        args.games,
        args.concurrency,
    ))
}

/// `bgctl bench clocks`: creates `games` matches with a day on each
/// clock, `concurrency` at a time, spread over the servers, and leaves
/// them running.
async fn clocks(
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
