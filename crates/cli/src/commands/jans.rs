//! `bgctl jans` (offline): what each corpus line's roll scores, for a
//! variant scoring during play (tric-trac), through its plugin loaded as
//! the server loads it.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Result, bail};
use bg_engine::Seat;

use super::Context;
use crate::corpus;

/// What `bgctl jans` takes.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "trictrac")]
    pub variant: String,
    /// Lines `POSITION_ID DIE1 DIE2 ROLL`, the roller on roll (white); `-` for stdin.
    #[arg(long)]
    pub corpus: PathBuf,
}

/// What each line's roll scores, through the loaded plugin exactly as the
/// server computes it: the position is set up with the roll's number (the
/// variant's `start_rolls` option: rolls already made), the roll is made
/// (`after_roll`), and the variant's scoreboard lists what it scored.
pub fn run(cx: &Context, args: Args) -> Result<()> {
    let Args {
        variant,
        corpus: file,
    } = args;
    let name = variant.as_str();
    let plugin = corpus::variant(&cx.plugin_dir, name)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (at, fields) in corpus::corpus_lines(&file)? {
        let roll: u32 = match fields.get(3).map(|r| r.parse::<u32>()) {
            Some(Ok(roll)) if roll >= 1 => roll,
            _ => bail!("{at}: expected POSITION_ID DIE1 DIE2 ROLL (ROLL from 1)"),
        };
        let options = [("start_rolls".to_string(), format!("{},0", roll - 1))]
            .into_iter()
            .collect();
        let p = corpus::position(&plugin, &at, &fields, &options)?;
        let rolled = plugin.after_roll(&p.state, Seat::White, p.dice)?;
        let Some(board) = plugin.scoreboard(&rolled.state)? else {
            bail!("variant `{name}` does not score during play");
        };
        let points = |seat: Seat| -> u32 {
            board
                .last_roll
                .iter()
                .filter(|e| e.seat == seat)
                .map(|e| e.points)
                .sum()
        };
        write!(
            out,
            "{} {} {} {roll} {} {}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            points(Seat::White),
            points(Seat::Black)
        )?;
        for e in &board.last_roll {
            let who = if e.seat == Seat::White {
                "roller"
            } else {
                "opponent"
            };
            write!(out, " {}:{who}:{}:{}", e.reason, e.ways, e.points)?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
