//! `bgctl hint`: the computer player's ranking of the plays for the seat
//! to act in a game, and its cube decision (or the variant's decision),
//! asked with a seat's token from the tokens file (the match must give
//! hints); or, with `--corpus`, its choice for each corpus line
//! (offline), by the variant's trained net beside its plugin.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use bg_api::v1 as pb;
use bg_engine::{Seat, position_id};
use bg_plugin_host::Plugin;

use super::{Context, Online};
use crate::connection::{authorized, explain};
use crate::corpus;
use crate::render::seat_name;

/// What `bgctl hint` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id, or any start or end of it that is one game's in
    /// the tokens file.
    #[arg(required_unless_present = "corpus", conflicts_with = "corpus")]
    pub game: Option<String>,
    /// 0: each play's result valued by the net; 1: the best looked at
    /// over the opponent's 21 rolls. The default is 1 for a game (as the
    /// service's `Hint`), 0 with `--corpus` (fast, for whole corpora).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub plies: Option<u32>,
    /// Plays to show, best first.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    #[arg(long, default_value = "standard")]
    pub variant: String,
    /// Lines whose first three fields are `POSITION_ID DIE1 DIE2`; `-` for stdin.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    match (args.corpus, args.game) {
        (Some(corpus), _) => offline(
            &cx.plugin_dir,
            &args.variant,
            &corpus,
            args.plies.unwrap_or(0),
        ),
        (None, Some(game)) => {
            let plies = args.plies.unwrap_or(1);
            cx.online(async |o| online(o, &game, plies, args.top).await)
        }
        (None, None) => bail!("give a game id, or --corpus"),
    }
}

async fn online(o: &mut Online, game: &str, plies: u32, top: usize) -> Result<()> {
    let game_id = o.game_of_tokens_file(game)?;
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
        format!(" ({})", signed(-equity_loss))
    }
}

/// An equity to three decimals, signed (`+0.125`, `-0.031`), and `0.000`
/// for what rounds to zero (never `-0.000`).
fn signed(equity: f64) -> String {
    let rounded = (equity * 1000.0).round() / 1000.0;
    if rounded == 0.0 {
        "0.000".to_string()
    } else {
        format!("{rounded:+.3}")
    }
}

/// The hint, for a terminal: the plays best first, then the cube.
fn render(hint: &pb::HintResponse, top: usize) -> String {
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
            "{:>3}. {notation:<24} equity {}{loss:<9} win {:.1}%  gammon {:.1}%  lose gammon {:.1}%  ({}-ply)\n",
            n + 1,
            signed(ranked.equity),
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
            "cube: {} (the roller's equity {}, win {:.1}%, gammon {:.1}%)\n",
            cube.action.replace('_', " "),
            signed(cube.equity),
            100.0 * p.win,
            100.0 * p.win_gammon
        ));
    }
    for (n, ranked) in hint.choices.iter().enumerate() {
        let p = ranked.probabilities.unwrap_or_default();
        let loss = loss(n, ranked.equity_loss);
        out.push_str(&format!(
            "{:>3}. {:<24} equity {}{loss:<9} win {:.1}%  (0-ply)\n",
            n + 1,
            ranked.choice,
            signed(ranked.equity),
            100.0 * p.win
        ));
    }
    if hint.plays.is_empty() && hint.cube.is_none() && hint.choices.is_empty() {
        out.push_str("nothing to hint: no dice to play and no cube decision\n");
    }
    out
}

/// The computer player's choice for each corpus line (offline): the line's
/// fields, the chosen play's result (a Position ID, as `plays` prints
/// them) and its equity (cubeless money, for the side on roll), by the
/// variant's trained net over the plugin's own legal plays, searched at
/// `plies` as the server's `Hint` searches (`bg_bot::search::rank`).
fn offline(plugin_dir: &Path, name: &str, corpus: &Path, plies: u32) -> Result<()> {
    let plugin = corpus::variant(plugin_dir, name)?;
    // The variant's computer player, beside its plugin as the server
    // reads it.
    let path = plugin.path().with_extension("bgnet");
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "variant `{name}` has no computer player here (no {})",
            path.display()
        )
    })?;
    let net =
        bg_bot::Net::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let plies = u8::try_from(plies).context("--plies")?;
    if net.reads_scores() {
        return hint_scored(&plugin, &net, corpus, plies);
    }
    let eval = bg_bot::search::Evaluator {
        net: &net,
        checkers: plugin.checkers(),
    };
    let rules = bg_plugin_host::VariantRules::new(plugin.clone(), Default::default());
    let mut out = BufWriter::new(std::io::stdout().lock());
    for p in corpus::read_corpus(&plugin, corpus)? {
        let (result, equity) = best_play(&rules, eval, &p.state, p.dice, plies)?;
        writeln!(
            out,
            "{} {} {} {} {equity:.4}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            position_id::encode(&result, Seat::White)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// White's best play from `state` with `dice` at `plies`: its result and
/// equity.
fn best_play(
    rules: &bg_plugin_host::VariantRules,
    eval: bg_bot::search::Evaluator,
    state: &[u8],
    dice: bg_engine::Dice,
    plies: u8,
) -> Result<(bg_engine::Board, f64)> {
    use bg_engine::game::Rules;
    let legal = rules.legal_plays(state, Seat::White, dice)?;
    let ranked = bg_bot::search::rank(rules, eval, state, Seat::White, dice, &legal, plies)?;
    let best = ranked
        .first()
        .context("no legal play, not even the empty one")?;
    Ok((legal[best.index].result, f64::from(best.value.equity)))
}

/// [`offline`] for a variant scored during play (tric-trac), whose net reads
/// the scoreboard: each line as `jans` takes it (`POSITION_ID DIE1 DIE2
/// ROLL`, ROLL from 1), the roll made (`after_roll`: its points marked),
/// then the plays ranked by what each leads to, at 0-ply, as the server's
/// computer player ranks them. The line is echoed (with its ROLL).
fn hint_scored(plugin: &Arc<Plugin>, net: &bg_bot::Net, corpus: &Path, plies: u8) -> Result<()> {
    use bg_engine::game::Rules;
    let eval = bg_bot::search::Evaluator {
        net,
        checkers: plugin.checkers(),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (at, fields) in corpus::corpus_lines(corpus)? {
        let roll: u32 = match fields.get(3).map(|r| r.parse::<u32>()) {
            Some(Ok(roll)) if roll >= 1 => roll,
            _ => bail!("{at}: expected POSITION_ID DIE1 DIE2 ROLL (ROLL from 1)"),
        };
        let options: std::collections::BTreeMap<String, String> =
            [("start_rolls".to_string(), format!("{},0", roll - 1))]
                .into_iter()
                .collect();
        let p = corpus::position(plugin, &at, &fields, &options)?;
        let rules = bg_plugin_host::VariantRules::new(plugin.clone(), options);
        let rolled = rules.after_roll(&p.state, Seat::White, p.dice)?;
        let (result, equity) = best_play(&rules, eval, &rolled.state, p.dice, plies)?;
        writeln!(
            out,
            "{} {} {} {roll} {} {equity:.4}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            position_id::encode(&result, Seat::White),
        )?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_equity_that_rounds_to_zero_is_shown_without_a_sign() {
        assert_eq!(signed(-0.0001), "0.000");
        assert_eq!(signed(-0.0), "0.000");
        assert_eq!(signed(0.0004), "0.000");
        assert_eq!(signed(0.1234), "+0.123");
        assert_eq!(signed(-0.1236), "-0.124");
        let play = |notation: &str, equity: f64, equity_loss: f64| pb::RankedPlay {
            play: Some(pb::Play {
                notation: notation.into(),
                ..Default::default()
            }),
            equity,
            equity_loss,
            plies: 1,
            ..Default::default()
        };
        let hint = pb::HintResponse {
            seat: pb::Seat::White as i32,
            dice: Some(pb::Dice { die1: 3, die2: 1 }),
            plays: vec![
                play("8/5 6/5", -0.0002, 0.0),
                play("13/10 6/5", -0.0002, 0.0),
            ],
            ..Default::default()
        };
        let shown = render(&hint, 5);
        assert!(!shown.contains("-0.000"), "{shown}");
        assert!(shown.contains("equity 0.000"), "{shown}");
        assert!(shown.contains("equity 0.000 (0.000)"), "{shown}");
    }
}
