//! `bgctl show`: a game, its board drawn in the terminal.

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
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| show(o, &args.game).await)
}

async fn show(o: &mut Online, game: &str) -> Result<()> {
    let game = o
        .client
        .get_game(super::get(&o.whole_id(game)?))
        .await
        .map_err(explain)?
        .into_inner();
    print!("{}", render(&game));
    Ok(())
}
