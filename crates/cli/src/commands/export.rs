//! `bgctl export`: the whole match in a format other programs read.

use anyhow::Result;
use bg_api::v1 as pb;

use super::Online;
use crate::FormatArg;
use crate::client::explain;

pub async fn run(
    o: &mut Online,
    game: &str,
    format: FormatArg,
    white: String,
    black: String,
) -> Result<()> {
    let record = o
        .client
        .export_match(pb::ExportMatchRequest {
            game_id: o.whole_id(game)?,
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
