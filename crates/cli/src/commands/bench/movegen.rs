//! `bgctl bench movegen` (offline): legal-play generation through the
//! plugin boundary, timed over a corpus.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use bg_engine::{LegalPlay, Seat};

use crate::commands::Context;
use crate::corpus;

/// What `bgctl bench movegen` takes.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "standard")]
    pub variant: String,
    #[arg(long)]
    pub corpus: PathBuf,
    /// Timed passes over the corpus (after one untimed warm-up pass); the median pass is reported.
    #[arg(long, default_value_t = 20)]
    pub repeat: u32,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let Args {
        variant,
        corpus: file,
        repeat,
    } = args;
    let plugin = corpus::variant(&cx.plugin_dir, &variant)?;
    let positions = corpus::read_corpus(&plugin, &file)?;
    if positions.is_empty() {
        bail!("{} holds no positions", file.display());
    }
    let mut plays: Vec<LegalPlay> = Vec::with_capacity(1024);
    let mut pass = || -> Result<u64> {
        let mut count = 0;
        for p in &positions {
            plugin.legal_plays(&p.state, Seat::White, p.dice, &mut plays)?;
            count += plays.len() as u64;
        }
        Ok(count)
    };
    let total = pass()?; // warm-up, not timed
    // The machine is shared and noisy: time each pass and report the
    // median pass, which a burst of other work moves least.
    let mut times: Vec<f64> = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        pass()?;
        times.push(start.elapsed().as_nanos() as f64 / positions.len() as f64);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "variant={} plugin={} passes={} fastest_ns={:.1} slowest_ns={:.1}",
        plugin.name(),
        plugin.path().display(),
        times.len(),
        times[0],
        times[times.len() - 1]
    );
    println!(
        "ns_per_position={:.1} positions={} plays={total}",
        times[times.len() / 2],
        positions.len()
    );
    Ok(())
}
