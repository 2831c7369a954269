//! The options and match settings in effect for a new game, as `bgctl
//! new` prints them under the board.

use std::collections::BTreeMap;

use bg_api::v1 as pb;

/// The variant's options and the match settings in effect for a new game:
/// the options given, the variant's defaults for the others.
pub fn in_effect(game: &pb::Game, variants: &[pb::Variant]) -> String {
    let variant = variants.iter().find(|v| v.name == game.variant);
    let mut options: BTreeMap<String, String> = variant
        .map(|v| {
            v.options
                .iter()
                .map(|o| (o.name.clone(), o.default_value.clone()))
                .collect()
        })
        .unwrap_or_default();
    options.extend(game.options.iter().map(|(k, v)| (k.clone(), v.clone())));
    let options: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let s = game.settings.unwrap_or_default();
    let length = match s.match_length {
        0 => "a money session".to_string(),
        n => format!("a match to {n}"),
    };
    let in_play = game.cube.is_none_or(|c| c.in_play);
    let cube = match (s.cube_max, s.cube_unlimited) {
        _ if !in_play => "no cube".to_string(),
        (_, true) => "cube unlimited".to_string(),
        (Some(0), _) => "no cube".to_string(),
        (Some(max), _) => format!("cube up to {max}"),
        (None, _) => "cube".to_string(),
    };
    let resign = if s.resignation == pb::ResignationMode::Offer as i32 {
        "resignations offered (--level, --accept/--decline)"
    } else {
        "a resignation scored by the position"
    };
    let first_move = match s.first_move() {
        pb::FirstMove::Unspecified => String::new(),
        pb::FirstMove::Loser => ", the loser of a game starts the next".to_string(),
        pb::FirstMove::Winner => ", the winner of a game starts the next".to_string(),
        pb::FirstMove::Alternate => ", the seats start games in turn".to_string(),
        pb::FirstMove::OpeningRoll => ", an opening throw every game".to_string(),
    };
    let clock = match &s.clock {
        Some(clock) => format!(
            ", clock {} (running out costs the {})",
            clock_setting(clock),
            if clock.on_timeout == pb::OnTimeout::Game as i32 {
                "game"
            } else {
                "match"
            }
        ),
        None => ", no clock".to_string(),
    };
    format!(
        "options: {}\nsettings: {length}, {cube}, auto-roll {}, {resign}{first_move}, hints {}{clock}\n",
        if options.is_empty() {
            "none".to_string()
        } else {
            options.join(" ")
        },
        if s.auto_roll == Some(true) {
            "on"
        } else {
            "off"
        },
        if s.hints == Some(true) { "on" } else { "off" },
    )
}

/// A clock setting as a tournament director writes it (as `bgctl new
/// --clock` takes it): `2m/point+12s`, `5m+2s/move`, `1d/turn`.
pub fn clock_setting(c: &pb::ClockSettings) -> String {
    let mut parts = Vec::new();
    if c.reserve_ms > 0 {
        parts.push(duration(c.reserve_ms));
    }
    if c.reserve_per_point_ms > 0 {
        parts.push(format!("{}/point", duration(c.reserve_per_point_ms)));
    }
    if c.turn_limit_ms > 0 {
        parts.push(format!("{}/turn", duration(c.turn_limit_ms)));
    }
    let mut text = parts.join("+");
    if c.delay_ms > 0 {
        text.push_str(&format!("+{}", duration(c.delay_ms)));
    }
    if c.increment_ms > 0 {
        text.push_str(&format!("+{}/move", duration(c.increment_ms)));
    }
    text
}

/// Milliseconds as a clock setting writes them: `1d`, `2h`, `1m30s`,
/// `12s` (and what is left below a second, `250ms`).
fn duration(ms: u64) -> String {
    let mut text = String::new();
    let mut left = ms;
    for (unit, name) in [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ] {
        if left >= unit {
            text.push_str(&format!("{}{name}", left / unit));
            left %= unit;
        }
    }
    if left > 0 || text.is_empty() {
        text.push_str(&format!("{left}ms"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_line_says_hints_the_clock_and_who_starts_later_games() {
        let game = |settings: pb::MatchSettings| pb::Game {
            variant: "standard".into(),
            settings: Some(settings),
            ..Default::default()
        };
        let plain = in_effect(
            &game(pb::MatchSettings {
                match_length: 3,
                cube_max: Some(64),
                auto_roll: Some(false),
                hints: Some(false),
                ..Default::default()
            }),
            &[],
        );
        assert!(
            plain.contains(
                "settings: a match to 3, cube up to 64, auto-roll off, a resignation scored by the position, hints off, no clock\n"
            ),
            "{plain}"
        );
        let usbgf = in_effect(
            &game(pb::MatchSettings {
                match_length: 7,
                cube_max: Some(64),
                hints: Some(true),
                first_move: pb::FirstMove::OpeningRoll as i32,
                clock: Some(pb::ClockSettings {
                    reserve_per_point_ms: 120_000,
                    delay_ms: 12_000,
                    on_timeout: pb::OnTimeout::Match as i32,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            &[],
        );
        assert!(
            usbgf.contains(
                ", an opening throw every game, hints on, clock 2m/point+12s (running out costs the match)\n"
            ),
            "{usbgf}"
        );
        let clock = |reserve_ms, increment_ms, turn_limit_ms| {
            clock_setting(&pb::ClockSettings {
                reserve_ms,
                increment_ms,
                turn_limit_ms,
                ..Default::default()
            })
        };
        assert_eq!(clock(300_000, 2_000, 0), "5m+2s/move");
        assert_eq!(clock(0, 0, 86_400_000), "1d/turn");
        assert_eq!(clock(90_000, 0, 0), "1m30s");
    }
}
