//! `bgctl analyze GAME`: every decision of a match judged by the
//! computer player, the mistakes listed, and each player's error rates.

use anyhow::Result;
use bg_api::v1 as pb;
use tonic::Request;

use super::{Context, Online};
use crate::connection::{authorized, explain};
use crate::render::seat_name;

/// What `bgctl analyze` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    pub game: String,
    /// 0 or 1, as for `hint`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub plies: u32,
    /// List every decision judged, not only the mistakes.
    #[arg(long)]
    pub all: bool,
}

/// Decisions losing at least this much equity are listed.
const LISTED_FROM: f64 = 0.02;

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| analyze(o, &args.game, args.plies, args.all).await)
}

async fn analyze(o: &mut Online, game: &str, plies: u32, all: bool) -> Result<()> {
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
fn render(a: &pb::AnalyzeMatchResponse, all: bool) -> String {
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
