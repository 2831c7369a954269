//! `bgctl`: a client for humans and scripts, and offline tools that load
//! variants through the plugin host exactly as the server does.
//!
//! It owns argument parsing and output formats only; rules come from the
//! plugins and the game flow from the server.

mod offline;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "bgctl",
    version,
    about = "Backgammon service client and offline tools"
)]
struct Cli {
    /// Folder holding the variant plugins (shared libraries).
    #[arg(
        long,
        global = true,
        env = "BACKGAMMON_PLUGIN_DIR",
        default_value = "target/plugins"
    )]
    plugin_dir: PathBuf,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists the variants in the plugin folder, and the files skipped.
    Variants,
    /// Prints the legal plays of each corpus line: `POSITION_ID DIE1 DIE2
    /// COUNT RESULT_ID...`, results sorted (the format of the gnubg corpus).
    Plays {
        #[arg(long, default_value = "standard")]
        variant: String,
        /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
        #[arg(long)]
        corpus: PathBuf,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        bench: Bench,
    },
}

#[derive(Subcommand)]
enum Bench {
    /// Times legal-play generation through the plugin boundary over a
    /// corpus; last line `ns_per_position=<f> positions=<n> plays=<total>`.
    Movegen {
        #[arg(long, default_value = "standard")]
        variant: String,
        #[arg(long)]
        corpus: PathBuf,
        /// Timed passes over the corpus (after one untimed warm-up pass); the median pass is reported.
        #[arg(long, default_value_t = 20)]
        repeat: u32,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Variants => offline::variants(&cli.plugin_dir),
        Command::Plays { variant, corpus } => offline::plays(&cli.plugin_dir, &variant, &corpus),
        Command::Bench {
            bench:
                Bench::Movegen {
                    variant,
                    corpus,
                    repeat,
                },
        } => offline::bench_movegen(&cli.plugin_dir, &variant, &corpus, repeat),
    }
}
