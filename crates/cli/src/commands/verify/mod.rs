//! `bgctl verify`: a finished match's verifiable dice checked, its record
//! read from the server or from a file (offline); what was checked is
//! said, a mismatch is an error. `bg_fair_dice::record` checks a record.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use bg_api::v1 as pb;
use bg_plugin_host::PluginHost;

use super::{Context, Online};
use crate::connection::explain;
use crate::tokens::Tokens;
use bg_fair_dice::record::{self, Known};

/// What `bgctl verify` takes.
#[derive(clap::Args)]
pub struct Args {
    /// The game id (or any start or end of it in the tokens file);
    /// its record is read from the server.
    #[arg(required_unless_present = "file")]
    pub game: Option<String>,
    /// Check a JSON record saved with `bgctl export` instead (offline).
    #[arg(long, conflicts_with = "game")]
    pub file: Option<PathBuf>,
    /// The commitment published when the match was created (as
    /// `bgctl show` printed it then); default: the one `bgctl new`
    /// saved in the tokens file, if it made the match.
    #[arg(long, value_name = "HEX")]
    pub commitment: Option<String>,
    /// White's seed as white gave it ("" for none); default: the one
    /// given through bgctl, if any (saved in the tokens file).
    #[arg(long, value_name = "TEXT")]
    pub white_seed: Option<String>,
    /// Black's seed, as `--white-seed`.
    #[arg(long, value_name = "TEXT")]
    pub black_seed: Option<String>,
}

pub fn run(cx: &Context, args: Args) -> Result<()> {
    let given = Known {
        commitment: args.commitment,
        white_seed: args.white_seed,
        black_seed: args.black_seed,
        opening: None,
    };
    match args.file {
        Some(file) => {
            let record = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            // The tokens file only for what `bgctl new` saved: an
            // unreadable one is no reason not to check the file.
            let tokens = Tokens::load(&cx.tokens_path()).unwrap_or_default();
            print_verified(&record, given, &tokens, &cx.plugin_dir)
        }
        None => cx.online(async |o| online(o, args.game, given).await),
    }
}

/// The record of match `game` read from the server, then checked.
async fn online(o: &mut Online, game: Option<String>, given: Known) -> Result<()> {
    let game = game.context("give a game id, or --file")?;
    let record = o
        .client
        .export_match(pb::ExportMatchRequest {
            game_id: o.whole_id(&game)?,
            format: pb::RecordFormat::Json as i32,
            ..Default::default()
        })
        .await
        .map_err(explain)?
        .into_inner();
    print_verified(&record.text, given, &o.tokens, &o.plugin_dir)?;
    Ok(())
}

/// Checks a JSON record's dice against what the user knows (given on the
/// command line, else saved by bgctl in the tokens file, and the
/// variant's plugin in the plugin folder) and says what it checked; a
/// mismatch is an error.
fn print_verified(record: &str, given: Known, tokens: &Tokens, plugin_dir: &Path) -> Result<()> {
    let game_id = serde_json::from_str::<serde_json::Value>(record)
        .ok()
        .and_then(|r| {
            r.get("game_id")
                .and_then(|id| id.as_str())
                .map(String::from)
        })
        .unwrap_or_default();
    let opening = match record::variant_of(record) {
        Some((variant, options)) => opening_rule(plugin_dir, &variant, &options)?,
        None => None,
    };
    let known = Known {
        commitment: given.commitment.or_else(|| tokens.commitment(&game_id)),
        white_seed: given.white_seed.or_else(|| tokens.seed(&game_id, "white")),
        black_seed: given.black_seed.or_else(|| tokens.seed(&game_id, "black")),
        opening: given.opening.or(opening),
    };
    let verified = record::record(record, &known).context("NOT verified")?;
    let seed = |s: &bg_fair_dice::SeatSeed, known: &Option<String>| {
        let told = if known.is_some() { ", as given" } else { "" };
        match (s.seed.as_str(), s.from) {
            ("", _) => format!("none{told}"),
            (seed, from) => format!("{seed:?} from die {from}{told}"),
        }
    };
    println!(
        "verified: all {} dice of match {} are the ones its seeds give ({})",
        verified.dice, verified.game_id, verified.scheme
    );
    println!(
        "  the server seed it revealed hashes to {}",
        if known.commitment.is_some() {
            "the commitment published when the match was created"
        } else {
            "the record's commitment (give --commitment to check it against the one published when the match was created)"
        }
    );
    let unchecked = known.white_seed.is_none() || known.black_seed.is_none();
    println!(
        "  seeds: white {}, black {}{}",
        seed(&verified.seeds.white, &known.white_seed),
        seed(&verified.seeds.black, &known.black_seed),
        if unchecked {
            " (give --white-seed/--black-seed to check a seed you gave)"
        } else {
            ""
        }
    );
    match known.opening {
        Some(_) => println!("  opening rule: the {} plugin's", verified.variant),
        None => println!(
            "  opening rule: as the record states it (no {} plugin in {} to check it against)",
            verified.variant,
            plugin_dir.display()
        ),
    }
    Ok(())
}

/// The opening rule of `variant` with these options, as its plugin in the
/// folder says (for `verify`): None when the folder has no such variant.
fn opening_rule(
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
