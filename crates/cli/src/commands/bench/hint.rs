//! `bgctl bench hint`: the rate of Hint calls at 0-ply and at 1-ply on a
//! corpus's positions, each beside the health check's.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bg_api::v1 as pb;
use bg_api::v1::game_service_client::GameServiceClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use super::{channels, nth};
use crate::commands::Context;
use crate::connection::{Transport, explain};
use crate::parse::board_of_position_id;

/// What `bgctl bench hint` takes.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    pub corpus: PathBuf,
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let transport = cx.transport()?;
    cx.block_on(hint(
        &transport,
        &cx.addresses(),
        &args.corpus,
        args.seconds,
        args.concurrency,
    ))
}

/// `bench hint`: Hint calls on the corpus's positions (white to play its
/// dice) at 0-ply, then at 1-ply, then health checks, each for `seconds`
/// with `concurrency` callers; prints each rate and its ratio to the
/// health checks'.
async fn hint(
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
            board: Some(board_of_position_id(
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
