//! `bgctl variants`: the server's variants and their options.

use anyhow::Result;
use bg_api::v1 as pb;

use super::{Context, Online};
use crate::connection::explain;

pub fn run(cx: &Context) -> Result<()> {
    cx.online(async |o| variants(o).await)
}

async fn variants(o: &mut Online) -> Result<()> {
    let variants = o
        .client
        .list_variants(pb::ListVariantsRequest {})
        .await
        .map_err(explain)?;
    for v in variants.into_inner().variants {
        print!("{}", describe(&v));
    }
    Ok(())
}

/// One variant as `bgctl variants` lists it.
fn describe(v: &pb::Variant) -> String {
    let mut out = format!("{} {}  {}\n", v.name, v.version, v.description);
    out.push_str(&format!(
        "    checkers: {}   cube: {}   auto-roll by default: {}\n",
        match v.checkers {
            0 => u32::from(bg_engine::CHECKERS),
            n => n,
        },
        cube(v),
        if v.auto_roll { "on" } else { "off" }
    ));
    if !v.bot_levels.is_empty() {
        out.push_str(&format!(
            "    computer player levels: {}\n",
            v.bot_levels.join(", ")
        ));
    }
    for o in &v.options {
        out.push_str(&format!(
            "    {}={} ({})  {}\n",
            o.name,
            o.default_value,
            o.allowed_values.join("|"),
            o.description
        ));
    }
    out
}

/// Whether a game of the variant has the cube: `no` when it cannot, and
/// when an option of the variant's, `cube`, turns it on or off, what its
/// default is and how to change it (`off by default (option cube=on)`).
fn cube(v: &pb::Variant) -> String {
    if !v.cube {
        return "no".to_string();
    }
    let Some(option) = v.options.iter().find(|o| o.name == "cube") else {
        return "yes".to_string();
    };
    let others: Vec<String> = option
        .allowed_values
        .iter()
        .filter(|value| **value != option.default_value)
        .map(|value| format!("cube={value}"))
        .collect();
    let default = match option.default_value.as_str() {
        "off" | "no" | "false" | "0" => "off",
        "on" | "yes" | "true" => "on",
        other => other,
    };
    if others.is_empty() {
        default.to_string()
    } else {
        format!("{default} by default (option {})", others.join(" or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(cube: bool, options: &[(&str, &str, &[&str])]) -> pb::Variant {
        pb::Variant {
            name: "v".into(),
            cube,
            options: options
                .iter()
                .map(|(name, default, allowed)| pb::VariantOption {
                    name: name.to_string(),
                    default_value: default.to_string(),
                    allowed_values: allowed.iter().map(|a| a.to_string()).collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_cube_line_says_the_default_the_variants_options_declare() {
        let off = variant(
            true,
            &[
                ("opening", "a", &["a", "b"]),
                ("cube", "off", &["off", "on"]),
            ],
        );
        assert_eq!(cube(&off), "off by default (option cube=on)");
        assert!(
            describe(&off).contains("cube: off by default (option cube=on)"),
            "{}",
            describe(&off)
        );
        let on = variant(true, &[("cube", "on", &["off", "on"])]);
        assert_eq!(cube(&on), "on by default (option cube=off)");
        assert_eq!(
            cube(&variant(true, &[("setup", "standard", &["standard"])])),
            "yes"
        );
        assert_eq!(cube(&variant(false, &[])), "no");
    }
}
