//! `bgctl show`: a game, its board drawn in the terminal, or as SVG
//! (`--svg`: the picture the server's `GET /games/{id}/board.svg` gives,
//! drawn here from GetGame and ListVariants by the same renderer).

use anyhow::Result;

use super::{Context, Online};
use crate::connection::explain;
use crate::render::render;

/// What `bgctl show` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    /// Writes the board as SVG to stdout instead (e.g. `bgctl show GAME
    /// --svg > board.svg`).
    #[arg(long)]
    pub svg: bool,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| show(o, &args).await)
}

async fn show(o: &mut Online, args: &Args) -> Result<()> {
    let game = o
        .client
        .get_game(super::get(&o.whole_id(&args.game)?))
        .await
        .map_err(explain)?
        .into_inner();
    if !args.svg {
        print!("{}", render(&game));
        return Ok(());
    }
    let variant = o
        .client
        .list_variants(bg_api::v1::ListVariantsRequest {})
        .await
        .map_err(explain)?
        .into_inner()
        .variants
        .into_iter()
        .find(|v| v.name == game.variant)
        .unwrap_or_default();
    print!("{}", bg_board_svg::render(&game, &variant));
    Ok(())
}
