//! `bgctl bench svg`: the time to draw a board as SVG (bg-board-svg, the
//! renderer behind the server's `/games/{id}/board.svg`), for each variant
//! the server loads: a new match of each, read by GetGame, drawn again and
//! again in this process. The median of the timed passes is reported.

use std::time::Instant;

use anyhow::Result;
use bg_api::v1 as pb;

use crate::commands::{Context, Online};
use crate::connection::explain;

/// What `bgctl bench svg` takes.
#[derive(clap::Args)]
pub struct Args {
    /// Boards drawn a pass.
    #[arg(long, default_value_t = 2000)]
    pub boards: u32,
    /// Timed passes (after an untimed one); the median is reported.
    #[arg(long, default_value_t = 7)]
    pub repeat: u32,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    cx.online(async |o| svg(o, &args).await)
}

async fn svg(o: &mut Online, args: &Args) -> Result<()> {
    let variants = o
        .client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .map_err(explain)?
        .into_inner()
        .variants;
    for variant in &variants {
        let made = o
            .client
            .new_game(pb::NewGameRequest {
                variant: variant.name.clone(),
                ..Default::default()
            })
            .await
            .map_err(explain)?
            .into_inner();
        let game = made.game.unwrap_or_default();
        let pass = || {
            let mut bytes = 0;
            for _ in 0..args.boards.max(1) {
                bytes = std::hint::black_box(bg_board_svg::render(&game, variant)).len();
            }
            bytes
        };
        let bytes = pass();
        let mut times: Vec<f64> = (0..args.repeat.max(1))
            .map(|_| {
                let start = Instant::now();
                pass();
                start.elapsed().as_secs_f64() * 1e6 / f64::from(args.boards.max(1))
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "variant={} svg_bytes={bytes} render_us_median={:.1} fastest={:.1} slowest={:.1}",
            variant.name,
            times[times.len() / 2],
            times[0],
            times[times.len() - 1]
        );
    }
    Ok(())
}
