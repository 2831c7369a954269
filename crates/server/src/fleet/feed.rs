//! What the feed records of a commit, and the events a client reads back.
//!
//! Each commit writes one feed row: the kinds of event it holds (a bit
//! each, [`bit`]) and, for the kinds with a detail (a game's result, the
//! match's end), that detail as JSON. A row reads back as its events in a
//! fixed order, numbered from 0: the creation (version 1), the action
//! (later versions) or the removal, then each game that ended, then the
//! match's end. An event's id and cursor name its row and number, so they
//! are the same on every replica and every reading.

use std::collections::BTreeMap;

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::game::{EndReason, Event, GameResult};
use bg_store::{Feed, FeedRow};
use serde::{Deserialize, Serialize};

use super::tokens::{Cursor, TokenKey};
use crate::convert;

/// The bit of a kind in a feed row's `kinds`.
pub const fn bit(kind: pb::MatchEventKind) -> u32 {
    1 << (kind as u32)
}

/// Every kind but ACTION: what a feed sends unless asked otherwise.
pub const DEFAULT_KINDS: u32 = bit(pb::MatchEventKind::Created)
    | bit(pb::MatchEventKind::GameEnded)
    | bit(pb::MatchEventKind::MatchEnded)
    | bit(pb::MatchEventKind::Removed);

/// The detail a row keeps for its game results and the match's end.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Detail {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    results: Vec<Ended>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<End>,
}

/// A game's result, with the match's score after it.
#[derive(Debug, Serialize, Deserialize)]
struct Ended {
    result: GameResult,
    score: [u32; 2],
}

/// The match's end.
#[derive(Debug, Serialize, Deserialize)]
struct End {
    winner: Option<Seat>,
    score: [u32; 2],
    /// "points", "resignation", "time" or "abandonment".
    reason: String,
}

/// The feed row of the commit that made `version` with `events`.
pub fn of_commit(version: u64, events: &[Event]) -> Feed {
    let mut kinds = if version <= 1 {
        bit(pb::MatchEventKind::Created)
    } else {
        bit(pb::MatchEventKind::Action)
    };
    let mut detail = Detail::default();
    let mut last_reason = None;
    for e in events {
        match e {
            Event::GameEnded { result, score } => {
                kinds |= bit(pb::MatchEventKind::GameEnded);
                last_reason = Some(result.reason);
                detail.results.push(Ended {
                    result: result.clone(),
                    score: *score,
                });
            }
            Event::MatchEnded { winner, score } => {
                kinds |= bit(pb::MatchEventKind::MatchEnded);
                let why = if events
                    .iter()
                    .any(|e| matches!(e, Event::MatchAbandoned { .. }))
                {
                    "abandonment"
                } else if events
                    .iter()
                    .any(|e| matches!(e, Event::TimeExpired { .. }))
                {
                    "time"
                } else if last_reason == Some(EndReason::Resigned) {
                    "resignation"
                } else {
                    "points"
                };
                detail.end = Some(End {
                    winner: *winner,
                    score: *score,
                    reason: why.to_string(),
                });
            }
            _ => {}
        }
    }
    let detail = if detail.results.is_empty() && detail.end.is_none() {
        Vec::new()
    } else {
        // A struct of plain fields: serialising it cannot fail.
        serde_json::to_vec(&detail).unwrap_or_default()
    };
    Feed { kinds, detail }
}

/// The feed row of a match's removal by retention.
pub fn of_removal() -> Feed {
    Feed {
        kinds: bit(pb::MatchEventKind::Removed),
        detail: Vec::new(),
    }
}

/// The labels of a row (its match's, as stored: a JSON object).
pub fn labels_of(json: &str) -> BTreeMap<String, String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// A row's events of the kinds in `wanted` (bits, [`bit`]), numbered
/// as among all of the row's events, each with its cursor (`log_events`:
/// the action's events, read from its log entry when asked for). Events
/// of other kinds are not built.
pub fn events(
    row: &FeedRow,
    key: &TokenKey,
    wanted: u32,
    log_events: Vec<pb::GameEvent>,
) -> Vec<(u32, pb::MatchEvent)> {
    let has = |kind| row.kinds & bit(kind) != 0;
    // Read whatever is wanted: the results number the row's events.
    let detail: Detail = if row.detail.is_empty() {
        Detail::default()
    } else {
        // A detail this server cannot read is shown as none (the events
        // still come, with their kinds).
        serde_json::from_slice(&row.detail).unwrap_or_else(|e| {
            tracing::warn!(game_id = %row.game_id, version = row.version, error = %e, "a feed row's detail is unreadable");
            Detail::default()
        })
    };
    // The row's events in order, each kind with its detail.
    let mut all = Vec::new();
    if has(pb::MatchEventKind::Removed) {
        all.push((pb::MatchEventKind::Removed, None));
    } else if has(pb::MatchEventKind::Created) {
        all.push((pb::MatchEventKind::Created, None));
    } else if has(pb::MatchEventKind::Action) {
        let action = pb::MatchAction { events: log_events };
        all.push((
            pb::MatchEventKind::Action,
            Some(pb::match_event::Detail::Action(action)),
        ));
    }
    for ended in &detail.results {
        all.push((
            pb::MatchEventKind::GameEnded,
            Some(pb::match_event::Detail::GameResult(
                convert::to_api::result(&ended.result),
            )),
        ));
    }
    if let Some(end) = &detail.end {
        all.push((
            pb::MatchEventKind::MatchEnded,
            Some(pb::match_event::Detail::MatchEnd(match_end(end))),
        ));
    }
    let last = all.len().saturating_sub(1);
    let mut labels = None;
    let mut out = Vec::new();
    for (n, (kind, detail)) in all.into_iter().enumerate() {
        if wanted & bit(kind) == 0 {
            continue;
        }
        let labels = labels.get_or_insert_with(|| {
            labels_of(&row.labels)
                .into_iter()
                .collect::<std::collections::HashMap<_, _>>()
        });
        let n = n as u32;
        // The last event's cursor is "after the whole row": resuming
        // from it needs nothing of the row, which may be trimmed
        // meanwhile.
        let cursor = match n as usize == last {
            true => Cursor::after_row(row.position),
            false => Cursor {
                position: row.position,
                event: n,
            },
        };
        out.push((
            n,
            pb::MatchEvent {
                // A removal's row holds the match's last version, whose
                // action has its own event 0: the removal's id says what
                // it is.
                event_id: match kind {
                    pb::MatchEventKind::Removed => {
                        format!("{}/{}/removed", row.game_id, row.version)
                    }
                    _ => format!("{}/{}/{n}", row.game_id, row.version),
                },
                cursor: cursor.encode(key),
                kind: kind as i32,
                game_id: row.game_id.clone(),
                version: row.version,
                time: Some(convert::to_api::timestamp(row.at_ms)),
                variant: row.variant.clone().unwrap_or_default(),
                labels: labels.clone(),
                players: Some(pb::Players {
                    white: row.players[0].clone(),
                    black: row.players[1].clone(),
                }),
                detail,
            },
        ));
    }
    out
}

/// A match's end as the API shows it.
fn match_end(end: &End) -> pb::MatchEnd {
    pb::MatchEnd {
        winner: convert::to_api::seat_or_none(end.winner),
        score: Some(pb::Score {
            white: end.score[0],
            black: end.score[1],
        }),
        reason: match end.reason.as_str() {
            "points" => pb::MatchEndReason::Points,
            "resignation" => pb::MatchEndReason::Resignation,
            "time" => pb::MatchEndReason::Time,
            "abandonment" => pb::MatchEndReason::Abandonment,
            _ => pb::MatchEndReason::Unspecified,
        } as i32,
    }
}

#[cfg(test)]
mod tests {
    use bg_store::FeedPosition;

    use super::*;

    fn result(reason: EndReason) -> GameResult {
        GameResult {
            game_number: 1,
            winner: Some(Seat::White),
            reason,
            kind: "single".into(),
            level: 1,
            cube: 1,
            points: 1,
        }
    }

    /// White wins the game (by `reason`) and with it the match, 1-0.
    fn game_and_match_won(reason: EndReason) -> [Event; 2] {
        [
            Event::GameEnded {
                result: result(reason),
                score: [1, 0],
            },
            Event::MatchEnded {
                winner: Some(Seat::White),
                score: [1, 0],
            },
        ]
    }

    fn row(version: u64, feed: Feed) -> FeedRow {
        FeedRow {
            position: FeedPosition { tx: 0, seq: 4 },
            game_id: "g".into(),
            version,
            at_ms: 1,
            kinds: feed.kinds,
            detail: feed.detail,
            variant: Some("standard".into()),
            labels: r#"{"t":"x"}"#.into(),
            players: ["a".into(), String::new()],
            owner: String::new(),
            log: None,
            trimmed: FeedPosition::default(),
        }
    }

    #[test]
    fn a_resignation_that_ends_the_match_is_an_action_a_game_and_the_match() {
        let events = game_and_match_won(EndReason::Resigned);
        let feed = of_commit(9, &events);
        let key = TokenKey::derive(&[1; 32]);
        let read = events_of(&row(9, feed), &key);
        let kinds: Vec<i32> = read.iter().map(|(_, e)| e.kind).collect();
        assert_eq!(
            kinds,
            [
                pb::MatchEventKind::Action as i32,
                pb::MatchEventKind::GameEnded as i32,
                pb::MatchEventKind::MatchEnded as i32
            ]
        );
        assert_eq!(read[2].1.event_id, "g/9/2");
        let Some(pb::match_event::Detail::MatchEnd(end)) = &read[2].1.detail else {
            panic!("{read:?}")
        };
        assert_eq!(end.reason, pb::MatchEndReason::Resignation as i32);
        assert_eq!(read[0].1.labels.get("t").map(String::as_str), Some("x"));
    }

    #[test]
    fn a_creation_and_a_removal_are_one_event_each() {
        let key = TokenKey::derive(&[1; 32]);
        let created = events_of(&row(1, of_commit(1, &[])), &key);
        assert_eq!(created.len(), 1);
        assert_eq!(created[0].1.kind, pb::MatchEventKind::Created as i32);
        let removed = events_of(&row(30, of_removal()), &key);
        assert_eq!(removed[0].1.kind, pb::MatchEventKind::Removed as i32);
        assert_eq!(
            removed[0].1.event_id, "g/30/removed",
            "not the last action's id"
        );
    }

    #[test]
    fn events_of_some_kinds_are_those_of_all_kinds_with_the_same_numbers_and_cursors() {
        let events = game_and_match_won(EndReason::Played);
        let key = TokenKey::derive(&[2; 32]);
        let row = row(12, of_commit(12, &events));
        let all = events_of(&row, &key);
        assert_eq!(all.len(), 3);
        for wanted in 0..32u32 {
            let some = super::events(&row, &key, wanted, Vec::new());
            let expected: Vec<_> = all
                .iter()
                .filter(|(_, e)| wanted & (1 << e.kind) != 0)
                .cloned()
                .collect();
            assert_eq!(some, expected, "kinds {wanted:#b}");
        }
    }

    fn events_of(row: &FeedRow, key: &TokenKey) -> Vec<(u32, pb::MatchEvent)> {
        events(row, key, u32::MAX, Vec::new())
    }
}
