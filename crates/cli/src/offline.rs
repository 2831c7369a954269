//! Offline tools: nothing here talks to a server.

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bg_engine::{Dice, LegalPlay, Seat, position_id};
use bg_plugin_host::{Plugin, PluginHost};

/// Loads the plugin folder and finds one variant.
fn variant(plugin_dir: &Path, name: &str) -> Result<Arc<Plugin>> {
    let host = PluginHost::new(plugin_dir);
    let report = host
        .scan()
        .with_context(|| format!("reading plugin folder {}", plugin_dir.display()))?;
    host.get(name).with_context(|| {
        let loaded: Vec<_> = report.loaded.iter().map(|p| p.name().to_string()).collect();
        format!(
            "no variant `{name}` in {} (loaded: {})",
            plugin_dir.display(),
            if loaded.is_empty() {
                "none".to_string()
            } else {
                loaded.join(", ")
            }
        )
    })
}

/// The opening rule of `variant` with these options, as its plugin in the
/// folder says (for `verify`): None when the folder has no such variant.
pub fn opening_rule(
    plugin_dir: &Path,
    variant: &str,
    options: &std::collections::BTreeMap<String, String>,
) -> Result<Option<&'static str>> {
    // No folder (the default one outside a checkout): nothing to ask, and
    // nothing to warn about.
    if !plugin_dir.is_dir() {
        return Ok(None);
    }
    let host = PluginHost::new(plugin_dir);
    if host.scan().is_err() {
        return Ok(None);
    }
    let Some(plugin) = host.get(variant) else {
        return Ok(None);
    };
    let setup = plugin
        .new_game(options)
        .with_context(|| format!("the {variant} plugin refuses the record's options"))?;
    Ok(Some(setup.opening.name()))
}

pub fn plugins(plugin_dir: &Path) -> Result<()> {
    let host = PluginHost::new(plugin_dir);
    let report = host.scan()?;
    for plugin in host.plugins() {
        println!(
            "{} {}  {}",
            plugin.name(),
            plugin.version(),
            plugin.info().description
        );
        for option in &plugin.info().options {
            println!(
                "    {}={} ({})  {}",
                option.name,
                option.default_value,
                option.allowed_values.join("|"),
                option.description
            );
        }
    }
    for skipped in report.skipped {
        eprintln!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
    Ok(())
}

/// One corpus position, ready for the plugin.
struct Position {
    id: String,
    dice: Dice,
    state: Vec<u8>,
}

/// The corpus's lines, each split in fields and named `FILE:LINE` for
/// errors; blank lines and `#` comments skipped.
fn corpus_lines(corpus: &Path) -> Result<Vec<(String, Vec<String>)>> {
    let reader: Box<dyn BufRead> = if corpus == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(corpus).with_context(|| format!("opening {}", corpus.display()))?,
        ))
    };
    let mut lines = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        let fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if fields.is_empty() || fields[0].starts_with('#') {
            continue;
        }
        lines.push((format!("{}:{}", corpus.display(), n + 1), fields));
    }
    Ok(lines)
}

/// A corpus line's position (white on roll) and dice, set up in a game of
/// `plugin` with `options`.
fn position(
    plugin: &Plugin,
    at: &str,
    fields: &[String],
    options: &std::collections::BTreeMap<String, String>,
) -> Result<Position> {
    if fields.len() < 3 {
        bail!("{at}: expected POSITION_ID DIE1 DIE2");
    }
    let board = position_id::decode_for(&fields[0], Seat::White, plugin.checkers())
        .with_context(|| at.to_string())?;
    let die = |s: &str| {
        s.parse::<u8>()
            .with_context(|| format!("{at}: bad die {s:?}"))
    };
    let dice = Dice::new(die(&fields[1])?, die(&fields[2])?).with_context(|| at.to_string())?;
    let setup = plugin
        .setup_position(&board, options)
        .with_context(|| format!("{at}: {}", fields[0]))?;
    Ok(Position {
        id: fields[0].clone(),
        dice,
        state: setup.state,
    })
}

fn read_corpus(plugin: &Plugin, corpus: &Path) -> Result<Vec<Position>> {
    corpus_lines(corpus)?
        .iter()
        .map(|(at, fields)| position(plugin, at, fields, &Default::default()))
        .collect()
}

/// What each line's roll scores, through the loaded plugin exactly as the
/// server computes it: the position is set up with the roll's number (the
/// variant's `start_rolls` option: rolls already made), the roll is made
/// (`after_roll`), and the variant's scoreboard lists what it scored.
pub fn jans(plugin_dir: &Path, name: &str, corpus: &Path) -> Result<()> {
    let plugin = variant(plugin_dir, name)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (at, fields) in corpus_lines(corpus)? {
        let roll: u32 = match fields.get(3).map(|r| r.parse::<u32>()) {
            Some(Ok(roll)) if roll >= 1 => roll,
            _ => bail!("{at}: expected POSITION_ID DIE1 DIE2 ROLL (ROLL from 1)"),
        };
        let options = [("start_rolls".to_string(), format!("{},0", roll - 1))]
            .into_iter()
            .collect();
        let p = position(&plugin, &at, &fields, &options)?;
        let rolled = plugin.after_roll(&p.state, Seat::White, p.dice)?;
        let Some(board) = plugin.scoreboard(&rolled.state)? else {
            bail!("variant `{name}` does not score during play");
        };
        let points = |seat: Seat| -> u32 {
            board
                .last_roll
                .iter()
                .filter(|e| e.seat == seat)
                .map(|e| e.points)
                .sum()
        };
        write!(
            out,
            "{} {} {} {roll} {} {}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            points(Seat::White),
            points(Seat::Black)
        )?;
        for e in &board.last_roll {
            let who = if e.seat == Seat::White {
                "roller"
            } else {
                "opponent"
            };
            write!(out, " {}:{who}:{}:{}", e.reason, e.ways, e.points)?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}

/// The computer player's choice for each corpus line (offline): the line's
/// fields, the chosen play's result (a Position ID, as `plays` prints
/// them) and its equity (cubeless money, for the side on roll), by the
/// variant's trained net at 0-ply over the plugin's own legal plays.
pub fn hint(plugin_dir: &Path, name: &str, corpus: &Path) -> Result<()> {
    let plugin = variant(plugin_dir, name)?;
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
    if net.reads_scores() {
        return hint_scored(&plugin, &net, corpus);
    }
    let player = bg_bot::player::NetPlayer {
        net: &net,
        checkers: plugin.checkers(),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut plays = Vec::new();
    for p in read_corpus(&plugin, corpus)? {
        plugin.legal_plays(&p.state, Seat::White, p.dice, &mut plays)?;
        let (chosen, equity) = player.best(Seat::White, &plays);
        writeln!(
            out,
            "{} {} {} {} {equity:.4}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            position_id::encode(&plays[chosen].result, Seat::White)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// [`hint`] for a variant scored during play (tric-trac), whose net reads
/// the scoreboard: each line as `jans` takes it (`POSITION_ID DIE1 DIE2
/// ROLL`, ROLL from 1), the roll made (`after_roll`: its points marked),
/// then the plays ranked by what each leads to, at 0-ply, as the server's
/// computer player ranks them. The line is echoed (with its ROLL).
fn hint_scored(plugin: &Arc<Plugin>, net: &bg_bot::Net, corpus: &Path) -> Result<()> {
    use bg_engine::game::Rules;
    let eval = bg_bot::search::Evaluator {
        net,
        checkers: plugin.checkers(),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (at, fields) in corpus_lines(corpus)? {
        let roll: u32 = match fields.get(3).map(|r| r.parse::<u32>()) {
            Some(Ok(roll)) if roll >= 1 => roll,
            _ => bail!("{at}: expected POSITION_ID DIE1 DIE2 ROLL (ROLL from 1)"),
        };
        let options: std::collections::BTreeMap<String, String> =
            [("start_rolls".to_string(), format!("{},0", roll - 1))]
                .into_iter()
                .collect();
        let p = position(plugin, &at, &fields, &options)?;
        let rules = bg_plugin_host::VariantRules::new(plugin.clone(), options);
        let rolled = rules.after_roll(&p.state, Seat::White, p.dice)?;
        let legal = rules.legal_plays(&rolled.state, Seat::White, p.dice)?;
        let ranked =
            bg_bot::search::rank(&rules, eval, &rolled.state, Seat::White, p.dice, &legal, 0)?;
        let best = ranked
            .first()
            .context("no legal play, not even the empty one")?;
        writeln!(
            out,
            "{} {} {} {roll} {} {:.4}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            position_id::encode(&legal[best.index].result, Seat::White),
            best.value.equity
        )?;
    }
    out.flush()?;
    Ok(())
}

pub fn plays(plugin_dir: &Path, name: &str, corpus: &Path) -> Result<()> {
    let plugin = variant(plugin_dir, name)?;
    let positions = read_corpus(&plugin, corpus)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut plays = Vec::new();
    for p in &positions {
        plugin.legal_plays(&p.state, Seat::White, p.dice, &mut plays)?;
        let mut results: Vec<String> = plays
            .iter()
            .map(|lp| position_id::encode(&lp.result, Seat::White))
            .collect();
        results.sort();
        writeln!(
            out,
            "{} {} {} {} {}",
            p.id,
            p.dice.d1,
            p.dice.d2,
            results.len(),
            results.join(" ")
        )?;
    }
    out.flush()?;
    Ok(())
}

pub fn bench_movegen(plugin_dir: &Path, name: &str, corpus: &Path, repeat: u32) -> Result<()> {
    let plugin = variant(plugin_dir, name)?;
    let positions = read_corpus(&plugin, corpus)?;
    if positions.is_empty() {
        bail!("{} holds no positions", corpus.display());
    }
    let mut plays: Vec<LegalPlay> = Vec::with_capacity(1024);
    let mut pass = || -> Result<u64> {
        let mut count = 0;
        for p in &positions {
            plugin.legal_plays(&p.state, Seat::White, p.dice, &mut plays)?;
            count += plays.len() as u64;
        }
        Ok(count)
    };
    let total = pass()?; // warm-up, not timed
    // The machine is shared and noisy: time each pass and report the
    // median pass, which a burst of other work moves least.
    let mut times: Vec<f64> = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        pass()?;
        times.push(start.elapsed().as_nanos() as f64 / positions.len() as f64);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "variant={} plugin={} passes={} fastest_ns={:.1} slowest_ns={:.1}",
        plugin.name(),
        plugin.path().display(),
        times.len(),
        times[0],
        times[times.len() - 1]
    );
    println!(
        "ns_per_position={:.1} positions={} plays={total}",
        times[times.len() / 2],
        positions.len()
    );
    Ok(())
}
