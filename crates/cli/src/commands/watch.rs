//! `bgctl watch`: a game's updates after a version, then live ones, each
//! said in players' words (hits marked) with the board after it.

use anyhow::Result;
use bg_api::v1 as pb;

use super::{Context, Online};
use crate::connection::explain;
use crate::render::{geometry, render, words};

/// What `bgctl watch` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    /// Start after this version (0: from the game's creation on).
    #[arg(long, default_value_t = 0)]
    pub from: u64,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| watch(o, &args.game, args.from).await)
}

async fn watch(o: &mut Online, game: &str, from: u64) -> Result<()> {
    let mut stream = o
        .client
        .watch_game(pb::WatchGameRequest {
            game_id: o.whole_id(game)?,
            from_version: from,
            read_mask: None,
        })
        .await
        .map_err(explain)?
        .into_inner();
    // The board before each update, when the stream has given it,
    // so that a move's hits are marked.
    let mut board: Option<pb::Board> = None;
    while let Some(update) = stream.message().await.map_err(explain)? {
        let after = update.game.as_ref().and_then(|g| g.board.as_ref());
        let boards = board.as_ref().zip(after);
        let geometry = update.game.as_ref().map(geometry).unwrap_or_default();
        println!(
            "v{} {}",
            update.version,
            words::describe_action(&update.events, boards, geometry)
        );
        board = after.cloned();
        if let Some(game) = &update.game {
            print!("{}", render(game));
        }
    }
    Ok(())
}
