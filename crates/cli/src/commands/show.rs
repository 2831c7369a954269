//! `bgctl show`: a game, its board drawn in the terminal.

use anyhow::Result;

use super::Online;
use crate::client::{explain, render};

pub async fn run(o: &mut Online, game: &str) -> Result<()> {
    let game = o
        .client
        .get_game(super::get(&o.whole_id(game)?))
        .await
        .map_err(explain)?
        .into_inner();
    print!("{}", render(&game));
    Ok(())
}
