//! The engine's events as stored (one record each, in order) and as the
//! API shows them.

use bg_api::v1 as pb;
use bg_engine::Seat;
use bg_engine::game::Event;
use bg_store::EventRecord;

use crate::convert;

pub(super) fn event_records(version: u64, events: &[Event]) -> Vec<EventRecord> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (kind, seat, detail) = convert::event(e);
            EventRecord {
                version,
                index: i as u32,
                kind,
                seat: seat.map(|s| s as u8),
                detail,
            }
        })
        .collect()
}

/// Stored events as watch updates, one per version up to `current`; the
/// last carries the game as it stands.
pub(super) fn updates_from(
    past: &[EventRecord],
    current: u64,
    game: pb::Game,
) -> Vec<pb::GameUpdate> {
    let mut updates: Vec<pb::GameUpdate> = Vec::new();
    for record in past.iter().filter(|e| e.version <= current) {
        match updates.last_mut() {
            Some(update) if update.version == record.version => update
                .events
                .extend(api_events(std::slice::from_ref(record))),
            _ => updates.push(pb::GameUpdate {
                version: record.version,
                events: api_events(std::slice::from_ref(record)),
                game: None,
            }),
        }
    }
    match updates.last_mut() {
        Some(last) if last.version == current => last.game = Some(game),
        _ => updates.push(pb::GameUpdate {
            version: current,
            events: Vec::new(),
            game: Some(game),
        }),
    }
    updates
}

pub(super) fn api_events(records: &[EventRecord]) -> Vec<pb::GameEvent> {
    records
        .iter()
        .map(|e| pb::GameEvent {
            kind: e.kind.clone(),
            seat: convert::seat_or_none(e.seat.and_then(Seat::from_index)),
            detail_json: e.detail.clone(),
        })
        .collect()
}
