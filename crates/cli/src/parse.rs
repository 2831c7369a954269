//! The parsers of what the command line gives: a clock as a tournament
//! director writes it, `name=value` options, a gnubg Position ID as the
//! API's board, and `--addr`'s list of servers.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use bg_api::v1 as pb;
use bg_engine::{Geometry, Seat};

/// A clock setting as a tournament director writes it (`bgctl new
/// --clock`): `+`-joined parts, each a duration (`30s`, `10m`, `2h`,
/// `1d`, or a sum such as `1m30s`) that is a reserve alone, per match
/// point with `/point`, a cap on a turn with `/turn`, and after a `+`, a
/// delay, or with `/move`, an increment (Fischer): `2m/point+12s` is
/// USBGF's clock, `5m+2s/move` a Fischer one, `1d/turn` days per move.
pub fn parse_clock(text: &str) -> Result<pb::ClockSettings, String> {
    let mut clock = pb::ClockSettings::default();
    for (n, part) in text.split('+').enumerate() {
        if n == 0 && part.is_empty() && text.len() > 1 {
            // No reserve: `+12s` is a delay alone (which the server
            // refuses, saying why).
            continue;
        }
        let (amount, unit) = part.split_once('/').unwrap_or((part, ""));
        let ms = duration_ms(amount)
            .ok_or_else(|| format!("{part:?} is not a duration (as 30s, 10m, 2h, 1d, or 1m30s)"))?;
        let slot = match (n, unit) {
            (_, "point") => &mut clock.reserve_per_point_ms,
            (_, "turn") => &mut clock.turn_limit_ms,
            (_, "move") => &mut clock.increment_ms,
            (0, "") => &mut clock.reserve_ms,
            (_, "") => &mut clock.delay_ms,
            (_, other) => return Err(format!("/{other}: write /point, /turn or /move")),
        };
        *slot += ms;
    }
    Ok(clock)
}

/// `1m30s`, `12s`, `2h`, `1d` in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(digits.parse::<u64>().ok()?.checked_mul(unit)?)?;
        digits.clear();
    }
    (digits.is_empty() && !text.is_empty()).then_some(total)
}

/// The board of a gnubg Position ID, read with white on roll, for a
/// variant played with `checkers` a side (0: 15) on a board of
/// `geometry`, in the API's format (white's numbering; black's checkers
/// negative).
pub fn board_of_position_id(id: &str, checkers: u8, geometry: Geometry) -> Result<pb::Board> {
    let checkers = if checkers == 0 {
        bg_engine::CHECKERS
    } else {
        checkers
    };
    let board = bg_engine::position_id::decode_for(id, Seat::White, checkers)
        .with_context(|| format!("{id:?} is not a gnubg Position ID"))?;
    let points = (1..=24u8)
        .map(|p| {
            i32::from(board.count(Seat::White, p))
                - i32::from(board.count(Seat::Black, geometry.for_white(Seat::Black, p)))
        })
        .collect();
    Ok(pb::Board {
        points,
        white_bar: u32::from(board.on_bar(Seat::White)),
        black_bar: u32::from(board.on_bar(Seat::Black)),
        white_off: u32::from(board.off(Seat::White)),
        black_off: u32::from(board.off(Seat::Black)),
        pins: Vec::new(),
    })
}

/// Parses `name=value` options.
pub fn parse_options(options: &[String]) -> Result<BTreeMap<String, String>> {
    parse_pairs("--option", options)
}

/// `name=value` pairs of a repeatable flag, each name once.
pub fn parse_pairs(flag: &str, pairs: &[String]) -> Result<BTreeMap<String, String>> {
    let mut parsed = BTreeMap::new();
    for o in pairs {
        let Some((name, value)) = o.split_once('=') else {
            bail!("{flag} takes name=value, not {o:?}");
        };
        if let Some(first) = parsed.insert(name.to_string(), value.to_string()) {
            bail!("{flag} {name} is given twice ({first:?} and {value:?}): give it once");
        }
    }
    Ok(parsed)
}

/// `--addr A,B,...`: the benchmarks take several servers.
pub fn addresses(addr: &str) -> Vec<String> {
    addr.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn clocks_are_written_as_tournament_directors_write_them() {
        let usbgf = parse_clock("2m/point+12s").unwrap();
        assert_eq!(
            (usbgf.reserve_per_point_ms, usbgf.delay_ms, usbgf.reserve_ms),
            (120_000, 12_000, 0)
        );
        let fischer = parse_clock("5m+2s/move").unwrap();
        assert_eq!((fischer.reserve_ms, fischer.increment_ms), (300_000, 2_000));
        let correspondence = parse_clock("1d/turn").unwrap();
        assert_eq!(correspondence.turn_limit_ms, 86_400_000);
        let sum = parse_clock("1m30s+1m/point").unwrap();
        assert_eq!((sum.reserve_ms, sum.reserve_per_point_ms), (90_000, 60_000));
        assert_eq!(parse_clock("+12s").unwrap().delay_ms, 12_000);
        for bad in ["", "2x", "5m/game", "m", "+", "12"] {
            assert!(parse_clock(bad).is_err(), "{bad:?}");
        }
    }
}
