//! `bgctl watch`: a game's updates after a version, then live ones, each
//! said in players' words (hits marked) with the board after it.

use anyhow::Result;
use bg_api::v1 as pb;

use super::Online;
use crate::client::{explain, render};
use crate::words;

pub async fn run(o: &mut Online, game: &str, from: u64) -> Result<()> {
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
        println!(
            "v{} {}",
            update.version,
            words::describe_action(&update.events, boards)
        );
        board = after.cloned();
        if let Some(game) = &update.game {
            print!("{}", render(game));
        }
    }
    Ok(())
}
