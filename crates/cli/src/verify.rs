//! `bgctl verify`: checks a finished match's verifiable dice from its JSON
//! record (README "Provably fair dice"). The scheme is `bg-fair-dice`'s;
//! this module reads the record and says what it found.

use anyhow::{Context, Result, bail};
use bg_fair_dice::{SeatSeeds, Side};
use serde_json::Value;

/// What a record's check found, when every die is right.
#[derive(Debug)]
pub struct Verified {
    pub game_id: String,
    pub dice: usize,
    pub scheme: String,
}

/// Checks a JSON match record (`bgctl export --format json`): the revealed
/// server seed hashes to the commitment, every die of the actions is the
/// one the seeds give, in order, and every throw the events show is among
/// its action's dice.
pub fn record(text: &str) -> Result<Verified> {
    let record: Value = serde_json::from_str(text).context("not a JSON match record")?;
    let game_id = field(&record, "game_id")?.to_string();
    let proof = match record.get("verifiable_dice") {
        Some(Value::Object(proof)) => proof,
        _ => bail!("match {game_id} has no verifiable dice (it was created with them off)"),
    };
    let text_of = |name: &str| -> Result<&str> {
        proof
            .get(name)
            .and_then(Value::as_str)
            .with_context(|| format!("the record's verifiable_dice has no {name}"))
    };
    let scheme = text_of("scheme")?;
    if scheme != bg_fair_dice::SCHEME {
        bail!(
            "unknown dice scheme {scheme:?} (this bgctl checks {})",
            bg_fair_dice::SCHEME
        );
    }
    let server_seed = text_of("server_seed")?;
    if server_seed.is_empty() {
        bail!(
            "match {game_id} is not over: the server reveals its seed when the match ends ({} dice thrown so far)",
            proof
                .get("dice_thrown")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        );
    }
    let mut seeds = SeatSeeds::default();
    for (side, name) in [(Side::White, "white"), (Side::Black, "black")] {
        let from = proof
            .get(&format!("{name}_seed_from"))
            .map_or(Some(0), Value::as_u64)
            .with_context(|| format!("the record's {name}_seed_from is not a die number"))?;
        seeds.give(side, text_of(&format!("{name}_seed"))?, from)?;
    }
    let actions = record
        .get("actions")
        .and_then(Value::as_array)
        .context("the record has no actions")?;
    let mut dice: Vec<u8> = Vec::new();
    for action in actions {
        let version = action.get("version").and_then(Value::as_u64).unwrap_or(0);
        let thrown = dice_of(action)
            .with_context(|| format!("version {version}: the action's dice are not dice"))?;
        check_shown(&thrown, action)
            .with_context(|| format!("version {version} (dice {thrown:?})"))?;
        dice.extend(thrown);
    }
    let declared = proof.get("dice_thrown").and_then(Value::as_u64);
    if declared != Some(dice.len() as u64) {
        bail!(
            "the record's actions hold {} dice, and it says {declared:?} were thrown",
            dice.len()
        );
    }
    bg_fair_dice::verify(text_of("commitment")?, server_seed, &seeds, &dice)?;
    Ok(Verified {
        game_id,
        dice: dice.len(),
        scheme: scheme.to_string(),
    })
}

fn field<'a>(record: &'a Value, name: &str) -> Result<&'a str> {
    record
        .get(name)
        .and_then(Value::as_str)
        .with_context(|| format!("the record has no {name}"))
}

/// An action's dice, each 1 to 6.
fn dice_of(action: &Value) -> Option<Vec<u8>> {
    match action.get("dice") {
        None => Some(Vec::new()),
        Some(Value::Array(dice)) => dice
            .iter()
            .map(|d| d.as_u64().filter(|d| (1..=6).contains(d)).map(|d| d as u8))
            .collect(),
        Some(_) => None,
    }
}

/// Every throw an event of the action shows (a roll, a pass, an opening
/// throw or tie) is among the action's dice, in the order of the events:
/// the dice the players saw are the dice verified. One throw may be shown
/// by several events in a row (the opening throw is also the starter's
/// roll; a pass shows the roll it passes), and a roll shows its dice
/// larger first, so a throw matches two consecutive dice in either order.
fn check_shown(thrown: &[u8], action: &Value) -> Result<()> {
    let same = |a: [u8; 2], b: &[u8]| b == a || b == [a[1], a[0]];
    let mut rest = thrown;
    let mut last: Option<&[u8]> = None;
    let events = action.get("events").and_then(Value::as_array);
    for event in events.into_iter().flatten() {
        for pair in shown(event) {
            if last.is_some_and(|last| same(pair, last)) {
                continue;
            }
            let at = rest
                .windows(2)
                .position(|w| same(pair, w))
                .with_context(|| {
                    format!(
                        "its {} event shows {}-{}, which its dice do not hold",
                        event.get("event").and_then(Value::as_str).unwrap_or("?"),
                        pair[0],
                        pair[1]
                    )
                })?;
            last = Some(&rest[at..at + 2]);
            rest = &rest[at + 2..];
        }
    }
    Ok(())
}

/// The throws an event shows, as pairs of dice.
fn shown(event: &Value) -> Vec<[u8; 2]> {
    let die = |v: Option<&Value>| v.and_then(Value::as_u64).map(|d| d as u8);
    let mut pairs = Vec::new();
    // A roll or a pass: {"d1", "d2"}.
    if let Some(dice) = event.get("dice")
        && let (Some(a), Some(b)) = (die(dice.get("d1")), die(dice.get("d2")))
    {
        pairs.push([a, b]);
    }
    // An opening tie's "dice", a game's "opening": [white's, black's].
    for name in ["dice", "opening"] {
        if let Some(Value::Array(throw)) = event.get(name)
            && let [a, b] = throw.as_slice()
            && let (Some(a), Some(b)) = (die(Some(a)), die(Some(b)))
        {
            pairs.push([a, b]);
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use bg_fair_dice::{FairDice, ServerSeed};
    use serde_json::json;

    /// A finished match's record with these events in its first action,
    /// whose dice are the first `n` the seeds give, and a roll after it.
    fn record(n: usize, events: impl Fn(&[u8]) -> Value) -> (Value, Vec<u8>) {
        let mut fair = FairDice {
            server: ServerSeed([3; 32]),
            seeds: SeatSeeds::new("w", "").unwrap(),
            thrown: 0,
        };
        let dice: Vec<u8> = (0..n + 2).map(|_| fair.next_die()).collect();
        let (first, roll) = dice.split_at(n);
        let record = json!({
            "game_id": "g",
            "verifiable_dice": {
                "scheme": bg_fair_dice::SCHEME,
                "commitment": fair.server.commitment(),
                "white_seed": "w", "white_seed_from": 0,
                "black_seed": "", "black_seed_from": 0,
                "server_seed": fair.server.to_hex(),
                "dice_thrown": dice.len(),
            },
            "actions": [
                {"version": 1, "dice": first, "events": events(first)},
                {"version": 2, "dice": roll, "events": [
                    {"event": "rolled", "dice": {"d1": roll[0].max(roll[1]), "d2": roll[0].min(roll[1])}},
                    {"event": "passed", "dice": {"d1": roll[0].max(roll[1]), "d2": roll[0].min(roll[1])}},
                ]},
            ],
        });
        (record, dice)
    }

    /// An opening tie thrown again: the tie's dice, then the opening
    /// throw shown by the game's start and again by the starter's roll.
    fn opening_with_a_tie(d: &[u8]) -> Value {
        json!([
            {"event": "opening_tie", "dice": [d[0], d[1]], "cube": 1},
            {"event": "game_started", "opening": [d[2], d[3]]},
            {"event": "rolled", "dice": {"d1": d[2].max(d[3]), "d2": d[2].min(d[3])}},
        ])
    }

    #[test]
    fn a_record_with_an_opening_tie_and_a_pass_verifies() {
        let (r, dice) = record(4, opening_with_a_tie);
        let verified = super::record(&r.to_string()).unwrap();
        assert_eq!(verified.dice, dice.len());
    }

    #[test]
    fn a_throw_shown_that_the_dice_do_not_hold_is_refused() {
        let (mut r, _) = record(4, opening_with_a_tie);
        let shown = &mut r["actions"][0]["events"][1]["opening"][0];
        *shown = json!(shown.as_u64().unwrap() % 6 + 1);
        let error = format!("{:#}", super::record(&r.to_string()).unwrap_err());
        assert!(error.contains("which its dice do not hold"), "{error}");
    }

    #[test]
    fn a_die_left_out_of_the_record_is_refused() {
        let (mut r, _) = record(4, opening_with_a_tie);
        r["actions"][1]["dice"] = json!([]);
        r["actions"][1]["events"] = json!([]);
        let error = format!("{:#}", super::record(&r.to_string()).unwrap_err());
        assert!(
            error.contains("hold 4 dice, and it says Some(6)"),
            "{error}"
        );
    }

    #[test]
    fn a_match_in_progress_cannot_be_verified() {
        let (mut r, _) = record(4, opening_with_a_tie);
        r["verifiable_dice"]["server_seed"] = json!("");
        let error = format!("{:#}", super::record(&r.to_string()).unwrap_err());
        assert!(error.contains("is not over"), "{error}");
    }
}
