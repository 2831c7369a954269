//! `bgctl verify`: a finished match's verifiable dice checked, its record
//! read from the server or from a file (offline); what was checked is
//! said, a mismatch is an error.

use std::path::Path;

use anyhow::{Context, Result};
use bg_api::v1 as pb;

use super::Online;
use crate::client::{Tokens, explain};
use crate::{offline, verify};

/// The record of match `game` read from the server, then checked.
pub async fn online(o: &mut Online, game: Option<String>, given: verify::Known) -> Result<()> {
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
pub fn print_verified(
    record: &str,
    given: verify::Known,
    tokens: &Tokens,
    plugin_dir: &Path,
) -> Result<()> {
    let game_id = serde_json::from_str::<serde_json::Value>(record)
        .ok()
        .and_then(|r| {
            r.get("game_id")
                .and_then(|id| id.as_str())
                .map(String::from)
        })
        .unwrap_or_default();
    let opening = match verify::variant_of(record) {
        Some((variant, options)) => offline::opening_rule(plugin_dir, &variant, &options)?,
        None => None,
    };
    let known = verify::Known {
        commitment: given.commitment.or_else(|| tokens.commitment(&game_id)),
        white_seed: given.white_seed.or_else(|| tokens.seed(&game_id, "white")),
        black_seed: given.black_seed.or_else(|| tokens.seed(&game_id, "black")),
        opening: given.opening.or(opening),
    };
    let verified = verify::record(record, &known).context("NOT verified")?;
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
