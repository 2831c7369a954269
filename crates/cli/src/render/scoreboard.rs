//! What a variant shows beside the board: tric-trac's tally in its words,
//! any other variant's tallies, counters and marks by their names, and
//! what the last roll scored.

use bg_api::v1 as pb;

use super::seat_name;

/// What the variant shows beside the board: tric-trac's tally in its
/// words (points, holes, bredouille, the flag), then any other variant's
/// tallies, counters and marks by their names, and what the last roll
/// scored.
pub(super) fn render_scoreboard(b: &pb::Scoreboard) -> String {
    let mut out = if b.white.is_some() || b.black.is_some() {
        render_tric_trac_tally(b)
    } else {
        String::new()
    };
    out.push_str(&render_named(b));
    out.push_str(&render_last_roll(b));
    out
}

/// The names the typed view of the scoreboard shows (tric-trac's).
const TYPED_TALLIES: [&str; 6] = [
    "points",
    "holes",
    "bredouille",
    "rolls",
    "raised_stake",
    "flag",
];

/// Tallies, counters and marks by the variant's names, but those shown
/// typed.
fn render_named(b: &pb::Scoreboard) -> String {
    let mut out = String::new();
    for t in b
        .tallies
        .iter()
        .filter(|t| !TYPED_TALLIES.contains(&t.name.as_str()))
    {
        out.push_str(&format!(
            "{}: white {}, black {}\n",
            t.name, t.white, t.black
        ));
    }
    for c in b.counters.iter().filter(|c| c.name != "round") {
        out.push_str(&format!("{}: {}\n", c.name, c.value));
    }
    if !b.markers.is_empty() {
        let marks: Vec<String> = b
            .markers
            .iter()
            .map(|m| format!("{} {} {}", m.name, seat_name(m.seat), m.point))
            .collect();
        out.push_str(&format!("marked: {}\n", marks.join(", ")));
    }
    out
}

/// Tric-trac's tally: points, holes, bredouille, rolls, the relevé, the
/// pavillon and who can still win en grande bredouille.
fn render_tric_trac_tally(b: &pb::Scoreboard) -> String {
    let tally = |name: &str, t: Option<&pb::SeatTally>| {
        let t = t.cloned().unwrap_or_default();
        format!(
            "{name}: {} points{}, {} holes, {} rolls made in the relevé",
            t.points,
            if t.bredouille { " (bredouille)" } else { "" },
            t.holes,
            t.rolls
        )
    };
    let mut out = format!(
        "{}   {}\n",
        tally("white", b.white.as_ref()),
        tally("black", b.black.as_ref())
    );
    let raised: Vec<&str> = b.raised_stake.iter().map(|&s| seat_name(s)).collect();
    out.push_str(&format!(
        "relevé {}   pavillon: {}   grande bredouille possible for: {}\n",
        b.round,
        match seat_name(b.flag) {
            "-" => "nobody",
            holder => holder,
        },
        if raised.is_empty() {
            "nobody".to_string()
        } else {
            raised.join(", ")
        }
    ));
    out
}

/// What the last roll scored, rule by rule.
fn render_last_roll(b: &pb::Scoreboard) -> String {
    let mut out = String::new();
    if !b.last_roll.is_empty() {
        let jans: Vec<String> = b
            .last_roll
            .iter()
            .map(|j| {
                format!(
                    "{} {} ({} way{}) to {}",
                    j.kind,
                    j.points,
                    j.ways,
                    if j.ways == 1 { "" } else { "s" },
                    seat_name(j.beneficiary)
                )
            })
            .collect();
        out.push_str(&format!("last roll scored: {}\n", jans.join(", ")));
    }
    out
}
