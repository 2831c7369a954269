//! The offline tools' inputs: a variant loaded from the plugin folder
//! exactly as the server loads it, and corpus files (`POSITION_ID DIE1
//! DIE2 ...` a line) set up as positions of it. Nothing here talks to a
//! server.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use bg_engine::{Dice, Seat, position_id};
use bg_plugin_host::{Plugin, PluginHost};

/// Loads the plugin folder and finds one variant.
pub fn variant(plugin_dir: &Path, name: &str) -> Result<Arc<Plugin>> {
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

/// One corpus position, ready for the plugin.
pub struct Position {
    pub id: String,
    pub dice: Dice,
    pub state: Vec<u8>,
}

/// The corpus's lines, each split in fields and named `FILE:LINE` for
/// errors; blank lines and `#` comments skipped.
pub fn corpus_lines(corpus: &Path) -> Result<Vec<(String, Vec<String>)>> {
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
pub fn position(
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

/// Every line of the corpus as a position (white on roll), with the
/// variant's default options.
pub fn read_corpus(plugin: &Plugin, corpus: &Path) -> Result<Vec<Position>> {
    corpus_lines(corpus)?
        .iter()
        .map(|(at, fields)| position(plugin, at, fields, &Default::default()))
        .collect()
}
