//! `bgctl export`: the whole match in a format other programs read.

use anyhow::Result;
use bg_api::v1 as pb;
use clap::ValueEnum;

use super::{Context, Online};
use crate::connection::explain;

/// A record's format.
#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    Mat,
    Sgf,
}

/// What `bgctl export` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    #[arg(long, value_enum, default_value_t = FormatArg::Json)]
    pub format: FormatArg,
    /// White's name in the record (one word).
    #[arg(long, default_value = "")]
    pub white: String,
    /// Black's name in the record (one word).
    #[arg(long, default_value = "")]
    pub black: String,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| export(o, args).await)
}

async fn export(o: &mut Online, args: Args) -> Result<()> {
    let Args {
        game,
        format,
        white,
        black,
    } = args;
    let record = o
        .client
        .export_match(pb::ExportMatchRequest {
            game_id: o.whole_id(&game)?,
            format: match format {
                FormatArg::Json => pb::RecordFormat::Json,
                FormatArg::Mat => pb::RecordFormat::Mat,
                FormatArg::Sgf => pb::RecordFormat::Sgf,
            } as i32,
            white_name: white,
            black_name: black,
        })
        .await
        .map_err(explain)?
        .into_inner();
    print!("{}", record.text);
    Ok(())
}
