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

fn read_corpus(plugin: &Plugin, corpus: &Path) -> Result<Vec<Position>> {
    let reader: Box<dyn BufRead> = if corpus == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(corpus).with_context(|| format!("opening {}", corpus.display()))?,
        ))
    };
    let mut positions = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || fields[0].starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", corpus.display(), n + 1);
        if fields.len() < 3 {
            bail!("{}: expected POSITION_ID DIE1 DIE2", at());
        }
        let board = position_id::decode(fields[0], Seat::White).with_context(at)?;
        let die = |s: &str| {
            s.parse::<u8>()
                .with_context(|| format!("{}: bad die {s:?}", at()))
        };
        let dice = Dice::new(die(fields[1])?, die(fields[2])?).with_context(at)?;
        let setup = plugin
            .setup_position(&board, &Default::default())
            .with_context(|| format!("{}: {}", at(), fields[0]))?;
        positions.push(Position {
            id: fields[0].to_string(),
            dice,
            state: setup.state,
        });
    }
    Ok(positions)
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
