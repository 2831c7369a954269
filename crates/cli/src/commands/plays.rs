//! `bgctl plays` (offline): the legal plays of each corpus line, through
//! the variant's plugin loaded as the server loads it, in the gnubg
//! corpus format.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Result;
use bg_engine::{Seat, position_id};

use super::Context;
use crate::corpus;

/// What `bgctl plays` takes.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "standard")]
    pub variant: String,
    /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
    #[arg(long)]
    pub corpus: PathBuf,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let plugin = corpus::variant(&cx.plugin_dir, &args.variant)?;
    let positions = corpus::read_corpus(&plugin, &args.corpus)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut plays = Vec::new();
    for p in &positions {
        plugin.legal_plays(&p.state, Seat::White, p.dice, &mut plays)?;
        let mut results: Vec<String> = plays
            .iter()
            .map(|lp| position_id::encode(&lp.result, Seat::White))
            .collect();
        results.sort();
        writeln!(
            out,
            "{} {} {} {} {}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            results.len(),
            results.join(" ")
        )?;
    }
    out.flush()?;
    Ok(())
}
