//! The event log as stored: one entry per action, with its events (what
//! WatchGame streams) and what it takes to apply the action again (who
//! acted, the command, the dice thrown), so that a game can be rebuilt as
//! it stood at any version (see `history`).
//!
//! An entry is JSON: `{"by": SEAT, "do": COMMAND, "then": [{"by", "do"}..],
//! "dice": [..], "dice_seed": TEXT, "events": [..]}`, the seat, command and
//! events in the
//! engine's own serde form (seats "white"/"black", commands tagged
//! `command`, events tagged `event`), the dice as thrown, in order, and the
//! seed a seat gave with a roll for the verifiable dice (left out when
//! none), and the actions of a seat the service plays that the action
//! led to (`then`, left out when none). The game's creation (the
//! first version) has no `by` nor `do`. A move leaves `do` out when the first event is
//! that very move (as the engine logs every move): the command is read
//! from it, which saves a third of a move's entry.
//!
//! Entries written before commands were logged are a JSON array of
//! `{"kind", "seat", "detail"}` events: they are shown as they are, and
//! cannot be applied again.

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::clock::Clock;
use bg_engine::game::{Command, DiceSource, Event};
use bg_store::LogEntry;
use serde::{Deserialize, Serialize};

use super::bots::BotAction;
use super::{corrupt, unserialisable};
use crate::convert;
use crate::error::ApiError;

/// An action as the log keeps it.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Logged {
    /// Who acted (none: the game's creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Seat>,
    /// What they asked for (none: the game's creation).
    #[serde(default, rename = "do", skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
    /// The actions of the seat the service plays that followed, in
    /// order (docs/bot.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<BotAction>,
    /// The dice thrown during the action (and the actions after it), in
    /// the order thrown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dice: Vec<u8>,
    /// The seat's seed for the verifiable dice, given with the action.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dice_seed: String,
    pub events: Vec<Event>,
    /// The match's clock after the action (matches with a clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
    /// When the action was applied (microseconds since the epoch; left
    /// out by servers before the fleet): `updated_at` as of this version,
    /// so that an answer rebuilt for a retry shows it as first sent.
    #[serde(default, rename = "at", skip_serializing_if = "Option::is_none")]
    pub at_us: Option<i64>,
    /// The time the acting seat took for its turn, when the action ended
    /// it (milliseconds, matches with a clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_ms: Option<u64>,
}

/// The clock after an action, and the time the action's seat took, when
/// the action ended its turn.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Timing {
    pub clock: Option<Clock>,
    pub took_ms: Option<u64>,
    /// When the action was applied (microseconds since the epoch): the
    /// match's `updated_at` at its version.
    pub at_us: Option<i64>,
}

/// An event of an entry written before commands were logged.
#[derive(Debug, Deserialize)]
pub(super) struct OldEvent {
    kind: String,
    seat: Option<u8>,
    detail: String,
}

/// A log entry read back.
#[derive(Debug)]
pub(super) enum Entry {
    /// Boxed: an entry of today is ten times the size of an old one.
    Logged(Box<Logged>),
    Old(Vec<OldEvent>),
}

impl Entry {
    pub(super) fn read(entry: &LogEntry) -> Result<Entry, ApiError> {
        let what = |e: serde_json::Error| corrupt(format!("log entry {}: {e}", entry.version));
        if entry.text.trim_start().starts_with('[') {
            serde_json::from_str(&entry.text)
                .map(Entry::Old)
                .map_err(what)
        } else {
            serde_json::from_str(&entry.text)
                .map(|logged| Entry::Logged(Box::new(logged)))
                .map_err(what)
        }
    }

    /// Who acted (none: the game's creation, or an old entry).
    pub(super) fn by(&self) -> Option<Seat> {
        match self {
            Entry::Logged(logged) => logged.by,
            Entry::Old(_) => None,
        }
    }

    /// The dice thrown in the action, in order (an old entry's are not
    /// logged).
    pub(super) fn dice(&self) -> &[u8] {
        match self {
            Entry::Logged(logged) => &logged.dice,
            Entry::Old(_) => &[],
        }
    }

    /// The time the acting seat took for its turn, when the action ended
    /// it (matches with a clock).
    pub(super) fn took_ms(&self) -> Option<u64> {
        match self {
            Entry::Logged(logged) => logged.took_ms,
            Entry::Old(_) => None,
        }
    }

    /// The seed for the verifiable dice the seat gave with the action
    /// (empty: none).
    pub(super) fn dice_seed(&self) -> &str {
        match self {
            Entry::Logged(logged) => &logged.dice_seed,
            Entry::Old(_) => "",
        }
    }

    /// The events in the engine's form. An old entry's are read back from
    /// their fields (the engine's serde form without the tag).
    pub(super) fn events(&self) -> Result<Vec<Event>, ApiError> {
        match self {
            Entry::Logged(logged) => Ok(logged.events.clone()),
            Entry::Old(events) => events
                .iter()
                .map(|e| {
                    let mut fields: serde_json::Map<String, serde_json::Value> =
                        serde_json::from_str(&e.detail).map_err(corrupt)?;
                    fields.insert("event".into(), e.kind.clone().into());
                    serde_json::from_value(fields.into()).map_err(corrupt)
                })
                .collect(),
        }
    }

    /// The events as the API shows them.
    pub(super) fn api_events(&self) -> Vec<pb::GameEvent> {
        match self {
            Entry::Logged(logged) => api_events(&logged.events),
            Entry::Old(events) => events
                .iter()
                .map(|e| pb::GameEvent {
                    kind: e.kind.clone(),
                    seat: convert::to_api::seat_or_none(e.seat.and_then(Seat::from_index)),
                    detail_json: e.detail.clone(),
                })
                .collect(),
        }
    }
}

/// The entry of an action (`by` and `command` none for the creation).
pub(super) fn entry(
    version: u64,
    acted: Option<(Seat, &Command)>,
    then: Vec<BotAction>,
    dice: Vec<u8>,
    dice_seed: &str,
    events: Vec<Event>,
    timing: Timing,
) -> Result<(LogEntry, Vec<pb::GameEvent>), ApiError> {
    let api = api_events(&events);
    let by = acted.map(|(by, _)| by);
    // A move whose first event is that very move is read from the event.
    let command = acted
        .filter(|(by, c)| move_of(*by, &events).as_ref() != Some(*c))
        .map(|(_, c)| c.clone());
    let logged = Logged {
        by,
        command,
        then,
        dice,
        dice_seed: dice_seed.to_string(),
        events,
        clock: timing.clock,
        took_ms: timing.took_ms,
        at_us: timing.at_us,
    };
    let text = serde_json::to_string(&logged).map_err(unserialisable)?;
    let feed = crate::fleet::feed::of_commit(version, &logged.events);
    Ok((
        LogEntry {
            version,
            text,
            feed,
        },
        api,
    ))
}

/// The events a stored log entry's text shows (the fleet feed's actions).
pub(super) fn log_api_events(version: u64, text: &str) -> Result<Vec<pb::GameEvent>, ApiError> {
    let entry = LogEntry {
        version,
        text: text.to_string(),
        feed: bg_store::Feed::default(),
    };
    Ok(Entry::read(&entry)?.api_events())
}

/// The move `by` made, if the first event is one.
fn move_of(by: Seat, events: &[Event]) -> Option<Command> {
    match events.first() {
        Some(Event::Moved { seat, play }) if *seat == by => Some(Command::Move { play: *play }),
        _ => None,
    }
}

impl Logged {
    /// The command of the entry: logged, or the move its first event made.
    pub(super) fn command(&self) -> Option<Command> {
        match (&self.command, self.by) {
            (Some(command), _) => Some(command.clone()),
            (None, Some(by)) => move_of(by, &self.events),
            (None, None) => None,
        }
    }
}

pub(super) fn api_events(events: &[Event]) -> Vec<pb::GameEvent> {
    events
        .iter()
        .map(|e| {
            let (kind, seat, detail) = convert::to_api::event(e);
            pb::GameEvent {
                kind,
                seat: convert::to_api::seat_or_none(seat),
                detail_json: detail,
            }
        })
        .collect()
}

/// Stored entries as watch updates, one per version up to `current`; the
/// last carries the game as it stands.
pub(super) fn updates_from(
    past: &[LogEntry],
    current: u64,
    game: pb::Game,
) -> Result<Vec<pb::GameUpdate>, ApiError> {
    let mut updates = Vec::new();
    for entry in past.iter().filter(|e| e.version <= current) {
        updates.push(pb::GameUpdate {
            version: entry.version,
            events: Entry::read(entry)?.api_events(),
            game: None,
        });
    }
    match updates.last_mut() {
        Some(last) if last.version == current => last.game = Some(game),
        _ => updates.push(pb::GameUpdate {
            version: current,
            events: Vec::new(),
            game: Some(game),
        }),
    }
    Ok(updates)
}

/// Dice from another source, written down as they are thrown.
pub(super) struct Recorded<D> {
    pub source: D,
    pub thrown: Vec<u8>,
}

impl<D> Recorded<D> {
    pub(super) fn new(source: D) -> Recorded<D> {
        Recorded {
            source,
            thrown: Vec::new(),
        }
    }
}

impl<D: DiceSource> DiceSource for Recorded<D> {
    fn die(&mut self) -> u8 {
        let die = self.source.die();
        self.thrown.push(die);
        die
    }
}

/// The dice an entry recorded, thrown again in order. Asked for more than
/// it holds, it says so (`short`): the action did not go as logged.
pub(super) struct Rethrown {
    dice: std::vec::IntoIter<u8>,
    pub short: bool,
    misses: u32,
}

impl Rethrown {
    pub(super) fn new(dice: Vec<u8>) -> Rethrown {
        Rethrown {
            dice: dice.into_iter(),
            short: false,
            misses: 0,
        }
    }

    /// Whether every die was thrown again, and no more.
    pub(super) fn all_used(&mut self) -> bool {
        !self.short && self.dice.next().is_none()
    }
}

impl DiceSource for Rethrown {
    fn die(&mut self) -> u8 {
        match self.dice.next().filter(|d| (1..=6).contains(d)) {
            Some(die) => die,
            None => {
                // The replay has failed; it must still end: 1, 2, 1, 2...
                // never ties an opening throw for ever.
                self.short = true;
                self.misses += 1;
                1 + (self.misses % 2) as u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replay that meets a die that is not one, or runs past the dice
    /// logged, is short; what it throws then alternates, so that no
    /// opening throw ties for ever before the replay is found wrong.
    #[test]
    fn dice_thrown_again_past_the_log_are_short_and_never_tie() {
        let mut dice = Rethrown::new(vec![3, 5]);
        assert_eq!((dice.die(), dice.die()), (3, 5));
        assert!(dice.all_used());

        let mut dice = Rethrown::new(vec![7, 2]);
        let thrown: Vec<u8> = (0..6).map(|_| dice.die()).collect();
        assert!(dice.short);
        assert!(!dice.all_used());
        assert!(
            thrown.chunks(2).skip(1).all(|pair| pair[0] != pair[1]),
            "{thrown:?}"
        );
    }

    /// A move whose first event is that very move is logged without its
    /// command, and read back the same; other commands are logged whole.
    #[test]
    fn a_move_is_read_from_its_event_and_other_commands_are_logged() {
        let play: bg_engine::Play = "13/7 8/7".parse().unwrap();
        let moved = Command::Move { play };
        let events = vec![Event::Moved {
            seat: Seat::White,
            play,
        }];
        let (entry, _) = entry(
            5,
            Some((Seat::White, &moved)),
            vec![],
            vec![],
            "",
            events,
            Timing::default(),
        )
        .unwrap();
        assert!(!entry.text.contains("\"do\""), "{}", entry.text);
        let Entry::Logged(logged) = Entry::read(&entry).unwrap() else {
            panic!("a logged entry")
        };
        assert_eq!(logged.command(), Some(moved));

        let (entry, _) = entry_of_roll();
        let Entry::Logged(logged) = Entry::read(&entry).unwrap() else {
            panic!("a logged entry")
        };
        assert_eq!(logged.command(), Some(Command::Roll));
    }

    fn entry_of_roll() -> (LogEntry, Vec<pb::GameEvent>) {
        let dice = bg_engine::Dice::new(6, 1).unwrap();
        let events = vec![Event::Rolled {
            seat: Seat::Black,
            dice,
        }];
        entry(
            6,
            Some((Seat::Black, &Command::Roll)),
            vec![],
            vec![6, 1],
            "",
            events,
            Timing::default(),
        )
        .unwrap()
    }
}
