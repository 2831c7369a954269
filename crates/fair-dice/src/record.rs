//! The check of a finished match's JSON record (`bgctl export --format
//! json`, docs/fair-dice.md), as `bgctl verify` runs it: this module
//! reads the record, checks its dice by the scheme, and says what it
//! found. A record written
//! to cover dice chosen afterwards, thrown unseen, or derived without a
//! seat's seed does not check out, given the commitment the user saw when
//! the match was created (`--commitment`, or the one `bgctl new` saved).

use crate::{Seat, SeatSeeds};
use anyhow::{Context, Result, bail};
use serde_json::Value;

/// What the user knows of the match without the record (the record is the
/// server's word; these are not): each is checked when given.
#[derive(Debug, Default)]
pub struct Known {
    /// The commitment published when the match was created.
    pub commitment: Option<String>,
    /// Each seat's seed, as it gave it (empty: it gave none).
    pub white_seed: Option<String>,
    pub black_seed: Option<String>,
    /// The variant's opening rule, from its plugin ("play_opening_dice"
    /// or "throw_again").
    pub opening: Option<&'static str>,
}

/// What a record's check found, when every die is right.
#[derive(Debug)]
pub struct Verified {
    pub game_id: String,
    pub variant: String,
    pub dice: usize,
    pub scheme: String,
    pub seeds: SeatSeeds,
}

/// The variant and options a record names (to find the variant's plugin).
pub fn variant_of(text: &str) -> Option<(String, std::collections::BTreeMap<String, String>)> {
    let record: Value = serde_json::from_str(text).ok()?;
    let variant = record.get("variant")?.as_str()?.to_string();
    let options = record
        .get("options")?
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect::<Option<_>>()?;
    Some((variant, options))
}

/// Checks a JSON match record (`bgctl export --format json`) against what
/// the user knows: the revealed server seed hashes to the commitment
/// (`known.commitment` when given); each seat's seed is the one it gave
/// (when known) and applies from the die the action that gave it came
/// to; every die of the actions, in order, is the one the seeds give; and
/// every die thrown is shown by an event of its action, every throw shown
/// is the dice thrown, by the variant's opening rule (the plugin's, when
/// known).
pub fn record(text: &str, known: &Known) -> Result<Verified> {
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
    if scheme != crate::SCHEME {
        bail!(
            "unknown dice scheme {scheme:?} (this bgctl checks {})",
            crate::SCHEME
        );
    }
    let recorded_commitment = text_of("commitment")?;
    if let Some(known) = &known.commitment
        && !known.trim().eq_ignore_ascii_case(recorded_commitment)
    {
        bail!(
            "the record's commitment {recorded_commitment} is not the one published when the match was created ({})",
            known.trim()
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
    let opening = match text_of("opening")? {
        "play_opening_dice" => Opening::Play,
        "throw_again" => Opening::ThrowAgain,
        other => bail!("the record's opening rule {other:?} is none this bgctl knows"),
    };
    if let Some(rule) = known.opening
        && rule != text_of("opening")?
    {
        bail!(
            "the record says the variant's opening is {:?}; its plugin says {rule:?}",
            text_of("opening")?
        );
    }
    let mut seeds = SeatSeeds::default();
    for (seat, name, given) in [
        (Seat::White, "white", &known.white_seed),
        (Seat::Black, "black", &known.black_seed),
    ] {
        let from = proof
            .get(&format!("{name}_seed_from"))
            .map_or(Some(0), Value::as_u64)
            .with_context(|| format!("the record's {name}_seed_from is not a die number"))?;
        let seed = text_of(&format!("{name}_seed"))?;
        if let Some(given) = given
            && given != seed
        {
            bail!("{name} gave the seed {given:?}, and the record says {seed:?}");
        }
        seeds.give(seat, seed, from)?;
    }
    let actions = record
        .get("actions")
        .and_then(Value::as_array)
        .context("the record has no actions")?;
    let mut dice: Vec<u8> = Vec::new();
    let mut last_throw = None;
    let mut given = [false; 2];
    for action in actions {
        let version = action.get("version").and_then(Value::as_u64).unwrap_or(0);
        let thrown = dice_of(action)
            .with_context(|| format!("version {version}: the action's dice are not dice"))?;
        check_seed_given(action, &seeds, dice.len() as u64, &mut given)
            .with_context(|| format!("version {version}"))?;
        let events = action
            .get("events")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        check_shown(&thrown, events, opening, &mut last_throw)
            .with_context(|| format!("version {version} (dice {thrown:?})"))?;
        dice.extend(thrown);
    }
    for (seat, given) in [(Seat::White, given[0]), (Seat::Black, given[1])] {
        let seed = seeds.of(seat);
        if !seed.seed.is_empty() && seed.from > 0 && !given {
            bail!(
                "{seat}'s seed applies from die {}, and no action of the record gave it",
                seed.from
            );
        }
    }
    let declared = proof.get("dice_thrown").and_then(Value::as_u64);
    if declared != Some(dice.len() as u64) {
        bail!(
            "the record's actions hold {} dice, and it says {declared:?} were thrown",
            dice.len()
        );
    }
    crate::verify(recorded_commitment, server_seed, &seeds, &dice)?;
    Ok(Verified {
        game_id,
        variant: record
            .get("variant")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        dice: dice.len(),
        scheme: scheme.to_string(),
        seeds,
    })
}

/// How a variant's games begin: the starter plays the opening throw, or
/// throws afresh.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opening {
    Play,
    ThrowAgain,
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

/// A seed an action gave is its seat's seed, applying from the first die
/// after the `before` dice thrown until then.
fn check_seed_given(
    action: &Value,
    seeds: &SeatSeeds,
    before: u64,
    given: &mut [bool; 2],
) -> Result<()> {
    let Some(seed) = action.get("dice_seed").and_then(Value::as_str) else {
        return Ok(());
    };
    let seat = match action.get("by").and_then(Value::as_str) {
        Some("white") => Seat::White,
        Some("black") => Seat::Black,
        _ => bail!("a seed given by no seat"),
    };
    let stated = seeds.of(seat);
    if stated.seed != seed || stated.from != before {
        bail!(
            "{seat} gave the seed {seed:?} after {before} dice, and the record says its seed is {:?} from die {}",
            stated.seed,
            stated.from
        );
    }
    given[usize::from(seat == Seat::Black)] = true;
    Ok(())
}

/// How an event shows a throw.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// A throw made here: an opening tie, a game's opening throw, a roll.
    Thrown,
    /// The throw shown last, again: a pass shows the roll it passes, and
    /// where the variant plays the opening throw, the starter's roll right
    /// after the game's start shows that throw (larger die first).
    Again,
}

/// Every die an action threw is shown by one of its events, in the order
/// thrown, and every throw an event shows is that throw: the dice the
/// players saw are the dice verified, and no die was thrown unseen.
/// `last` is the throw shown last, in this action or an earlier one (a
/// pass may come with a later action: tric-trac's stay or go).
fn check_shown(
    thrown: &[u8],
    events: &[Value],
    opening: Opening,
    last: &mut Option<[u8; 2]>,
) -> Result<()> {
    let mut rest = thrown;
    for (how, pair, kind) in shown_throws(events, opening) {
        match how {
            Shown::Thrown => match rest {
                [a, b, tail @ ..] if [*a, *b] == pair => {
                    rest = tail;
                    *last = Some(pair);
                }
                _ => bail!(
                    "its {kind} event shows {}-{}, and the next dice it threw are {rest:?}",
                    pair[0],
                    pair[1]
                ),
            },
            Shown::Again => {
                if !last.is_some_and(|l| l == pair || l == [pair[1], pair[0]]) {
                    bail!(
                        "its {kind} event shows {}-{}, which is not the throw before it ({last:?})",
                        pair[0],
                        pair[1]
                    );
                }
            }
        }
    }
    if !rest.is_empty() {
        bail!("it threw {rest:?}, which no event shows");
    }
    Ok(())
}

/// The throws the events show, each with how it shows it and the event's
/// kind.
fn shown_throws(events: &[Value], opening: Opening) -> Vec<(Shown, [u8; 2], &str)> {
    let die = |v: Option<&Value>| v.and_then(Value::as_u64).and_then(|d| u8::try_from(d).ok());
    let pair = |v: Option<&Value>| match v {
        // A roll or a pass: {"d1", "d2"}, in the order thrown.
        Some(Value::Object(d)) => Some([die(d.get("d1"))?, die(d.get("d2"))?]),
        // An opening tie's or a game's opening throw: [white's, black's].
        Some(Value::Array(d)) if d.len() == 2 => Some([die(d.first())?, die(d.get(1))?]),
        _ => None,
    };
    let mut shown = Vec::new();
    let mut after_opening = false;
    for event in events {
        let kind = event.get("event").and_then(Value::as_str).unwrap_or("?");
        let throw = match kind {
            "opening_tie" => pair(event.get("dice")).map(|p| (Shown::Thrown, p)),
            "game_started" => pair(event.get("opening")).map(|p| (Shown::Thrown, p)),
            "rolled" if after_opening && opening == Opening::Play => {
                pair(event.get("dice")).map(|p| (Shown::Again, p))
            }
            "rolled" => pair(event.get("dice")).map(|p| (Shown::Thrown, p)),
            "passed" => pair(event.get("dice")).map(|p| (Shown::Again, p)),
            _ => None,
        };
        after_opening = kind == "game_started" && throw.is_some();
        if let Some((how, p)) = throw {
            shown.push((how, p, kind));
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FairDice, ServerSeed};
    use serde_json::json;

    fn roll(d: &[u8]) -> Value {
        json!({"event": "rolled", "dice": {"d1": d[0], "d2": d[1]}})
    }

    /// A finished match's record of a variant with this opening rule: a
    /// first action whose dice are the first `n` the seeds give, with
    /// these events, then a roll black gives its seed with, which passes.
    fn record_of(opening: &str, n: usize, events: impl Fn(&[u8]) -> Value) -> Value {
        let mut fair = FairDice {
            server: ServerSeed([3; 32]),
            seeds: SeatSeeds::new("w", "").unwrap(),
            thrown: 0,
        };
        let first: Vec<u8> = (0..n).map(|_| fair.next_die()).collect();
        fair.give_seed(Seat::Black, "b").unwrap();
        let second = [fair.next_die(), fair.next_die()];
        json!({
            "game_id": "g",
            "verifiable_dice": {
                "scheme": crate::SCHEME,
                "opening": opening,
                "commitment": fair.server.commitment(),
                "white_seed": "w", "white_seed_from": 0,
                "black_seed": "b", "black_seed_from": n,
                "server_seed": fair.server.to_hex(),
                "dice_thrown": n + 2,
            },
            "actions": [
                {"version": 1, "by": null, "dice": first, "events": events(&first)},
                {"version": 2, "by": "black", "dice": second, "dice_seed": "b", "events": [
                    roll(&second),
                    {"event": "passed", "dice": {"d1": second[0], "d2": second[1]}},
                ]},
            ],
        })
    }

    /// The record of a variant that plays the opening throw.
    fn record(n: usize, events: impl Fn(&[u8]) -> Value) -> Value {
        record_of("play_opening_dice", n, events)
    }

    /// An opening tie thrown again: the tie's dice, then the opening
    /// throw shown by the game's start and again by the starter's roll
    /// (larger die first).
    fn opening_with_a_tie(d: &[u8]) -> Value {
        json!([
            {"event": "opening_tie", "dice": [d[0], d[1]], "cube": 1},
            {"event": "game_started", "opening": [d[2], d[3]]},
            roll(&[d[2].max(d[3]), d[2].min(d[3])]),
        ])
    }

    /// An opening throw the starter throws again for (auto-roll), then a
    /// roll of its own.
    fn opening_thrown_again(d: &[u8]) -> Value {
        json!([
            {"event": "game_started", "opening": [d[0], d[1]]},
            roll(&d[2..4]),
        ])
    }

    fn refused(r: &Value, known: &Known) -> String {
        format!("{:#}", super::record(&r.to_string(), known).unwrap_err())
    }

    #[test]
    fn a_record_with_an_opening_tie_a_seed_given_later_and_a_pass_verifies() {
        let r = record(4, opening_with_a_tie);
        let verified = super::record(&r.to_string(), &Known::default()).unwrap();
        assert_eq!(verified.dice, 6);
        assert_eq!(verified.seeds.black.from, 4);
        let again = record_of("throw_again", 4, opening_thrown_again);
        assert!(super::record(&again.to_string(), &Known::default()).is_ok());
    }

    #[test]
    fn the_commitment_must_be_the_one_published_at_new_game() {
        let r = record(4, opening_with_a_tie);
        let published = r["verifiable_dice"]["commitment"].as_str().unwrap();
        let known = Known {
            commitment: Some(published.to_string()),
            ..Known::default()
        };
        assert!(super::record(&r.to_string(), &known).is_ok());
        let known = Known {
            commitment: Some("0".repeat(64)),
            ..Known::default()
        };
        let error = refused(&r, &known);
        assert!(error.contains("is not the one published"), "{error}");
    }

    #[test]
    fn a_throw_shown_that_the_dice_do_not_hold_is_refused() {
        let mut r = record(4, opening_with_a_tie);
        let shown = &mut r["actions"][0]["events"][1]["opening"][0];
        *shown = json!(shown.as_u64().unwrap() % 6 + 1);
        let error = refused(&r, &Known::default());
        assert!(error.contains("game_started event shows"), "{error}");
    }

    #[test]
    fn a_die_thrown_that_no_event_shows_is_refused() {
        // Two dice more after the last roll, which no event shows.
        let mut r = record(4, opening_with_a_tie);
        r["actions"][1]["dice"]
            .as_array_mut()
            .unwrap()
            .extend([json!(3), json!(4)]);
        r["verifiable_dice"]["dice_thrown"] = json!(8);
        let error = refused(&r, &Known::default());
        assert!(
            error.contains("it threw [3, 4], which no event shows"),
            "{error}"
        );
        // The opening tie's event left out: the next throw shown is not
        // the next dice thrown.
        let mut r = record(4, opening_with_a_tie);
        r["actions"][0]["events"].as_array_mut().unwrap().remove(0);
        let error = refused(&r, &Known::default());
        assert!(error.contains("and the next dice it threw are"), "{error}");
    }

    #[test]
    fn a_pass_that_shows_another_throw_is_refused() {
        let mut r = record(4, opening_with_a_tie);
        let passed = &mut r["actions"][1]["events"][1]["dice"]["d1"];
        *passed = json!(passed.as_u64().unwrap() % 6 + 1);
        let error = refused(&r, &Known::default());
        assert!(error.contains("not the throw before it"), "{error}");
    }

    #[test]
    fn a_seed_said_to_apply_elsewhere_than_where_it_was_given_is_refused() {
        let mut r = record(4, opening_with_a_tie);
        r["verifiable_dice"]["black_seed_from"] = json!(6);
        let error = refused(&r, &Known::default());
        assert!(
            error.contains("black gave the seed \"b\" after 4 dice"),
            "{error}"
        );
        let mut r = record(4, opening_with_a_tie);
        r["actions"][1].as_object_mut().unwrap().remove("dice_seed");
        let error = refused(&r, &Known::default());
        assert!(error.contains("no action of the record gave it"), "{error}");
    }

    #[test]
    fn a_die_left_out_of_the_record_is_refused() {
        let mut r = record(4, opening_with_a_tie);
        r["actions"][1]["dice"] = json!([]);
        r["actions"][1]["events"] = json!([]);
        let error = refused(&r, &Known::default());
        assert!(
            error.contains("hold 4 dice, and it says Some(6)"),
            "{error}"
        );
    }

    #[test]
    fn a_match_in_progress_cannot_be_verified() {
        let mut r = record(4, opening_with_a_tie);
        r["verifiable_dice"]["server_seed"] = json!("");
        let error = refused(&r, &Known::default());
        assert!(error.contains("is not over"), "{error}");
    }

    /// The server cannot choose, game by game, whether the starter's roll
    /// shows the opening throw again or a throw of its own: the variant's
    /// rule says, and its plugin's rule overrides the record's word.
    #[test]
    fn the_opening_rule_decides_what_the_starters_roll_shows() {
        // A throw of its own read as the opening throw again: its dice
        // are thrown unseen.
        let wrong = record_of("play_opening_dice", 4, opening_thrown_again);
        let error = refused(&wrong, &Known::default());
        assert!(error.contains("rolled event shows"), "{error}");
        // The opening throw read as a throw of its own.
        let wrong = record_of("throw_again", 4, opening_with_a_tie);
        let error = refused(&wrong, &Known::default());
        assert!(error.contains("rolled event shows"), "{error}");
        // The record's word against the plugin's.
        let r = record_of("throw_again", 4, opening_thrown_again);
        let known = Known {
            opening: Some("play_opening_dice"),
            ..Known::default()
        };
        let error = refused(&r, &known);
        assert!(error.contains("its plugin says"), "{error}");
    }

    /// A seed a seat gave is checked when the user knows it: a record
    /// that drops it, or says another, is refused.
    #[test]
    fn a_seed_the_user_gave_must_be_the_records() {
        let r = record(4, opening_with_a_tie);
        let known = Known {
            white_seed: Some("w".into()),
            black_seed: Some("b".into()),
            ..Known::default()
        };
        assert!(super::record(&r.to_string(), &known).is_ok());
        let known = Known {
            black_seed: Some("mine".into()),
            ..Known::default()
        };
        let error = refused(&r, &known);
        assert!(
            error.contains(r#"black gave the seed "mine", and the record says "b""#),
            "{error}"
        );
    }

    /// Tric-trac's stay or go: the roll that won a hole waits for the
    /// roller's choice, and the pass of its dice comes with the Decide, an
    /// action that throws nothing; a pass showing any other throw there is
    /// refused.
    #[test]
    fn a_pass_in_a_later_action_shows_the_throw_before_it() {
        let mut r = record(4, opening_with_a_tie);
        let second = r["actions"][1]["dice"].clone();
        let pass = json!({"event": "passed", "dice": {"d1": second[0], "d2": second[1]}});
        r["actions"][1]["events"].as_array_mut().unwrap().pop();
        r["actions"].as_array_mut().unwrap().push(json!({
            "version": 3, "by": "black", "dice": [],
            "events": [{"event": "decided", "choice": "stay"}, pass],
        }));
        assert!(super::record(&r.to_string(), &Known::default()).is_ok());
        let shown = &mut r["actions"][2]["events"][1]["dice"]["d1"];
        *shown = json!(shown.as_u64().unwrap() % 6 + 1);
        let error = refused(&r, &Known::default());
        assert!(error.contains("version 3"), "{error}");
        assert!(error.contains("not the throw before it"), "{error}");
    }
}
