//! `bgctl analyze GAME`: every decision of a match judged by the
//! computer player, the mistakes listed, and each player's error rates.

use anyhow::Result;
use bg_api::v1 as pb;
use tonic::Request;

use super::Online;
use crate::client::{authorized, explain, seat_name};

/// Decisions losing at least this much equity are listed.
const LISTED_FROM: f64 = 0.02;

pub async fn run(o: &mut Online, game: &str, plies: u32, all: bool) -> Result<()> {
    let game_id = o.whole_id(game)?;
    let message = pb::AnalyzeMatchRequest {
        game_id: game_id.clone(),
        plies: Some(plies),
    };
    // A match in progress needs a seat's token; a finished one none.
    let token = ["white", "black"]
        .iter()
        .find_map(|seat| o.tokens.get(&game_id, seat).ok());
    let request = match token {
        Some(token) => authorized(message, &token)?,
        None => Request::new(message),
    };
    let analysis = o
        .client
        .analyze_match(request)
        .await
        .map_err(explain)?
        .into_inner();
    print!("{}", render(&analysis, all));
    Ok(())
}

/// The analysis, for a terminal.
pub fn render(a: &pb::AnalyzeMatchResponse, all: bool) -> String {
    let mut out = format!(
        "match at version {}, judged at {}-ply: {} decisions\n",
        a.version,
        a.plies,
        a.decisions.len()
    );
    for d in &a.decisions {
        if !all && d.equity_lost < LISTED_FROM {
            continue;
        }
        let what = match d.kind.as_str() {
            "move" => {
                let notation =
                    |p: &Option<pb::Play>| p.as_ref().map_or(String::new(), |p| p.notation.clone());
                let dice = d
                    .dice
                    .map_or(String::new(), |d| format!("{}-{}", d.die1, d.die2));
                format!(
                    "{dice} played {}, best {}",
                    notation(&d.played),
                    notation(&d.best)
                )
            }
            _ => format!(
                "{}, best {}",
                d.action.replace('_', " "),
                d.best_action.replace('_', " ")
            ),
        };
        out.push_str(&format!(
            "  game {} version {:>4} {:<5} {:<4} {what:<44} lost {:.3}\n",
            d.game_number,
            d.version,
            seat_name(d.seat),
            d.kind,
            d.equity_lost
        ));
    }
    for p in &a.players {
        let variant = if p.variant_decisions > 0 {
            format!(
                ", decisions {:.1} over {}",
                p.variant_error_rate, p.variant_decisions
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:<5}: error rate {:.1} (checker play {:.1} over {} decisions, cube {:.1} over {}{variant})\n",
            seat_name(p.seat),
            p.error_rate,
            p.checker_error_rate,
            p.checker_decisions,
            p.cube_error_rate,
            p.cube_decisions
        ));
    }
    out
}
