//! `bgctl hint GAME`: the computer player's ranking of the plays for the
//! seat to act, and its cube decision, asked with a seat's token from the
//! tokens file (the match must give hints).

use anyhow::{Result, bail};
use bg_api::v1 as pb;

use super::Online;
use crate::client::{authorized, explain, seat_name};

pub async fn run(o: &mut Online, game: &str, plies: u32, top: usize) -> Result<()> {
    let Some(game_id) = o.tokens.resolve(game)? else {
        bail!(
            "no game {game} in the tokens file {}: give the whole game id, or its start or end \
             if `bgctl new` made it here (see --tokens)",
            o.tokens_path.display()
        );
    };
    // Either seat's token will do; a seat the service plays has none.
    let token = ["white", "black"]
        .iter()
        .find_map(|seat| o.tokens.get(&game_id, seat).ok().filter(|t| !t.is_empty()));
    let Some(token) = token else {
        bail!("no seat token for game {game_id} in the tokens file (see --tokens)");
    };
    let hint = o
        .client
        .hint(authorized(
            pb::HintRequest {
                game_id: game_id.clone(),
                plies: Some(plies),
                ..Default::default()
            },
            &token,
        )?)
        .await
        .map_err(explain)?
        .into_inner();
    print!("{}", render(&hint, top));
    Ok(())
}

/// What the `n`th ranked (from 0) loses to the best, as the hint shows it
/// (nothing for the best).
fn loss(n: usize, equity_loss: f64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" ({:+.3})", -equity_loss)
    }
}

/// The hint, for a terminal: the plays best first, then the cube.
pub fn render(hint: &pb::HintResponse, top: usize) -> String {
    let mut out = String::new();
    let seat = seat_name(hint.seat);
    match &hint.dice {
        Some(d) if !hint.plays.is_empty() => out.push_str(&format!(
            "version {}: {seat} to play {}-{}\n",
            hint.version, d.die1, d.die2
        )),
        _ => out.push_str(&format!("version {}: {seat} to act\n", hint.version)),
    }
    for (n, ranked) in hint.plays.iter().take(top).enumerate() {
        let notation = ranked.play.as_ref().map_or("?", |p| p.notation.as_str());
        let p = ranked.probabilities.unwrap_or_default();
        let loss = loss(n, ranked.equity_loss);
        out.push_str(&format!(
            "{:>3}. {notation:<24} equity {:+.3}{loss:<9} win {:.1}%  gammon {:.1}%  lose gammon {:.1}%  ({}-ply)\n",
            n + 1,
            ranked.equity,
            100.0 * p.win,
            100.0 * p.win_gammon,
            100.0 * p.lose_gammon,
            ranked.plies
        ));
    }
    if hint.plays.len() > top {
        out.push_str(&format!("     ... {} more\n", hint.plays.len() - top));
    }
    if let Some(cube) = &hint.cube {
        let p = cube.probabilities.unwrap_or_default();
        out.push_str(&format!(
            "cube: {} (the roller's equity {:+.3}, win {:.1}%, gammon {:.1}%)\n",
            cube.action.replace('_', " "),
            cube.equity,
            100.0 * p.win,
            100.0 * p.win_gammon
        ));
    }
    for (n, ranked) in hint.choices.iter().enumerate() {
        let p = ranked.probabilities.unwrap_or_default();
        let loss = loss(n, ranked.equity_loss);
        out.push_str(&format!(
            "{:>3}. {:<24} equity {:+.3}{loss:<9} win {:.1}%  (0-ply)\n",
            n + 1,
            ranked.choice,
            ranked.equity,
            100.0 * p.win
        ));
    }
    if hint.plays.is_empty() && hint.cube.is_none() && hint.choices.is_empty() {
        out.push_str("nothing to hint: no dice to play and no cube decision\n");
    }
    out
}
