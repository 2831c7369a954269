//! `bg-bot`: trains the computer player of a variant by self-play, and
//! measures players against each other.
//!
//!     cargo run --release -p bg-bot -- train --variant standard --games 200000 --seed 1
//!     cargo run --release -p bg-bot -- duel --variant standard --games 5000 --against heuristic

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use bg_bot::duel::{DuelResult, duel};
use bg_bot::net::Net;
use bg_bot::player::{HeuristicPlayer, NetPlayer, Player, RandomPlayer};
use bg_bot::td::Trainer;
use bg_variant_api::Variant;
use clap::{Parser, Subcommand, ValueEnum};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[derive(Parser)]
#[command(name = "bg-bot", about = "Trains and measures the computer player")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum VariantArg {
    Standard,
    Hypergammon,
}

#[derive(Clone, Copy, ValueEnum)]
enum Against {
    Random,
    Heuristic,
}

#[derive(Subcommand)]
enum Command {
    /// Trains a net by self-play (TD(0)), from scratch; logs its strength
    /// against the random and the heuristic player as it goes, and writes
    /// the weights at the end.
    Train {
        #[arg(long, value_enum)]
        variant: VariantArg,
        #[arg(long, default_value_t = 100_000)]
        games: u32,
        #[arg(long, default_value_t = 80)]
        hidden: usize,
        #[arg(long, default_value_t = 0.1)]
        alpha: f32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Games between two measures of strength (each 500 games).
        #[arg(long, default_value_t = 10_000)]
        every: u32,
        /// Where the weights go (default: crates/bot/weights/VARIANT.bgnet).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The net's 0-ply player against another, over `--games` games.
    Duel {
        #[arg(long, value_enum)]
        variant: VariantArg,
        #[arg(long, default_value_t = 5_000)]
        games: u32,
        #[arg(long, value_enum)]
        against: Against,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long)]
        weights: Option<PathBuf>,
    },
}

fn weights_path(variant: VariantArg) -> PathBuf {
    let name = match variant {
        VariantArg::Standard => "standard",
        VariantArg::Hypergammon => "hypergammon",
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("weights/{name}.bgnet"))
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Train {
            variant,
            games,
            hidden,
            alpha,
            seed,
            every,
            out,
        } => {
            let out = out.unwrap_or_else(|| weights_path(variant));
            match variant {
                VariantArg::Standard => train(
                    &bg_standard_rules::Standard,
                    15,
                    games,
                    hidden,
                    alpha,
                    seed,
                    every,
                    &out,
                ),
                VariantArg::Hypergammon => train(
                    &bg_hypergammon::Hypergammon,
                    3,
                    games,
                    hidden,
                    alpha,
                    seed,
                    every,
                    &out,
                ),
            }
        }
        Command::Duel {
            variant,
            games,
            against,
            seed,
            weights,
        } => {
            let path = weights.unwrap_or_else(|| weights_path(variant));
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let net = Net::from_bytes(&bytes).map_err(anyhow::Error::msg)?;
            let result = match variant {
                VariantArg::Standard => {
                    measure(&bg_standard_rules::Standard, &net, 15, against, games, seed)?
                }
                VariantArg::Hypergammon => {
                    measure(&bg_hypergammon::Hypergammon, &net, 3, against, games, seed)?
                }
            };
            println!("net (0-ply) against {}: {result}", name(against));
            Ok(())
        }
    }
}

fn name(against: Against) -> &'static str {
    match against {
        Against::Random => "random",
        Against::Heuristic => "heuristic",
    }
}

fn measure<V: Variant>(
    variant: &V,
    net: &Net,
    checkers: u8,
    against: Against,
    games: u32,
    seed: u64,
) -> Result<DuelResult> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut player = NetPlayer { net, checkers };
    let mut other: Box<dyn Player> = match against {
        Against::Random => Box::new(RandomPlayer(StdRng::seed_from_u64(seed ^ 0x5eed))),
        Against::Heuristic => Box::new(HeuristicPlayer),
    };
    duel(variant, &mut player, other.as_mut(), games, &mut rng)
}

#[allow(clippy::too_many_arguments)]
fn train<V: Variant>(
    variant: &V,
    checkers: u8,
    games: u32,
    hidden: usize,
    alpha: f32,
    seed: u64,
    every: u32,
    out: &std::path::Path,
) -> Result<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let net = Net::new(hidden, &mut rng);
    let mut trainer = Trainer {
        variant,
        checkers,
        net,
        alpha,
        rng,
    };
    let started = Instant::now();
    println!("training: {games} games, {hidden} hidden units, alpha {alpha}, seed {seed}");
    for game in 1..=games {
        trainer.train_game()?;
        if game % every == 0 || game == games {
            let random = measure(variant, &trainer.net, checkers, Against::Random, 500, 7)?;
            let heuristic = measure(variant, &trainer.net, checkers, Against::Heuristic, 500, 7)?;
            println!(
                "games={game} seconds={:.0} vs_random={random} vs_heuristic={heuristic}",
                started.elapsed().as_secs_f64()
            );
            std::io::stdout().flush()?;
            std::fs::write(out, trainer.net.to_bytes())
                .with_context(|| format!("writing {}", out.display()))?;
        }
    }
    println!("weights written to {}", out.display());
    Ok(())
}
