//! `bgctl variants`: the server's variants and their options.

use anyhow::Result;
use bg_api::v1 as pb;

use super::Online;
use crate::client::explain;

pub async fn run(o: &mut Online) -> Result<()> {
    let variants = o
        .client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .map_err(explain)?;
    for v in variants.into_inner().variants {
        println!("{} {}  {}", v.name, v.version, v.description);
        println!(
            "    checkers: {}   cube: {}   auto-roll by default: {}",
            match v.checkers {
                0 => u32::from(bg_engine::CHECKERS),
                n => n,
            },
            if v.cube { "yes" } else { "no" },
            if v.auto_roll { "on" } else { "off" }
        );
        if !v.bot_levels.is_empty() {
            println!("    computer player levels: {}", v.bot_levels.join(", "));
        }
        for o in v.options {
            println!(
                "    {}={} ({})  {}",
                o.name,
                o.default_value,
                o.allowed_values.join("|"),
                o.description
            );
        }
    }
    Ok(())
}
