//! The fleet in one line each: a listed match, a feed event.

use bg_api::v1 as pb;

use super::seat_name;

/// Labels as `k=v,k2=v2`, sorted (`-` for none).
fn labels(labels: &std::collections::HashMap<String, String>) -> String {
    let mut pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.sort();
    if pairs.is_empty() {
        "-".into()
    } else {
        pairs.join(",")
    }
}

/// The players as `white/black` (`-` for an id not given).
fn players(p: Option<&pb::Players>) -> String {
    let id = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    p.map_or("-/-".into(), |p| {
        format!("{}/{}", id(&p.white), id(&p.black))
    })
}

fn state(state: i32) -> &'static str {
    match pb::MatchState::try_from(state) {
        Ok(pb::MatchState::InProgress) => "in-progress",
        Ok(pb::MatchState::Finished) => "finished",
        Ok(pb::MatchState::Abandoned) => "abandoned",
        _ => "-",
    }
}

/// A time as RFC 3339 seconds (`-` for none).
fn time(t: Option<&prost_types::Timestamp>) -> String {
    t.map_or("-".into(), |t| t.to_string())
}

/// `ID VARIANT STATE v=VERSION to-act=SEAT players=W/B labels=... created=...`.
pub fn summary(g: &pb::Game) -> String {
    format!(
        "{} {} {} v={} to-act={} players={} labels={} created={}",
        g.game_id,
        g.variant,
        state(g.state),
        g.version,
        seat_name(g.to_act),
        players(g.players.as_ref()),
        labels(&g.labels),
        time(g.created_at.as_ref()),
    )
}

/// `TIME KIND GAME_ID v=VERSION DETAIL labels=... cursor=CURSOR`.
pub fn match_event(e: &pb::MatchEvent) -> String {
    let kind = match pb::MatchEventKind::try_from(e.kind) {
        Ok(pb::MatchEventKind::Created) => "created",
        Ok(pb::MatchEventKind::GameEnded) => "game-ended",
        Ok(pb::MatchEventKind::MatchEnded) => "match-ended",
        Ok(pb::MatchEventKind::Removed) => "removed",
        Ok(pb::MatchEventKind::Action) => "action",
        _ => "bookmark",
    };
    let detail = match &e.detail {
        Some(pb::match_event::Detail::GameResult(r)) => {
            format!(
                "{} wins {} ({}, {} points)",
                seat_name(r.winner),
                r.kind,
                r.reason,
                r.points
            )
        }
        Some(pb::match_event::Detail::MatchEnd(end)) => {
            let score = end.score.unwrap_or_default();
            let why = match pb::MatchEndReason::try_from(end.reason) {
                Ok(pb::MatchEndReason::Points) => "points",
                Ok(pb::MatchEndReason::Resignation) => "resignation",
                Ok(pb::MatchEndReason::Time) => "time",
                Ok(pb::MatchEndReason::Abandonment) => "abandonment",
                _ => "-",
            };
            format!(
                "{} wins {}-{} by {why}",
                seat_name(end.winner),
                score.white,
                score.black
            )
        }
        Some(pb::match_event::Detail::Action(a)) => {
            let kinds: Vec<&str> = a.events.iter().map(|e| e.kind.as_str()).collect();
            kinds.join("+")
        }
        None => e.variant.clone(),
    };
    format!(
        "{} {kind} {} v={} {detail} players={} labels={} cursor={}",
        time(e.time.as_ref()),
        e.game_id,
        e.version,
        players(e.players.as_ref()),
        labels(&e.labels),
        e.cursor
    )
}

/// A delivery state's name.
fn delivery_state(state: i32) -> &'static str {
    match pb::DeliveryState::try_from(state) {
        Ok(pb::DeliveryState::Pending) => "pending",
        Ok(pb::DeliveryState::Delivered) => "delivered",
        Ok(pb::DeliveryState::Failed) => "failed",
        _ => "-",
    }
}

/// `NAME URL pending=N delivered=N failed=N oldest-pending=TIME`.
pub fn webhook_endpoint(e: &pb::WebhookEndpoint) -> String {
    format!(
        "{} {} pending={} delivered={} failed={} oldest-pending={}",
        e.name,
        e.url,
        e.pending,
        e.delivered,
        e.failed,
        time(e.oldest_pending.as_ref()),
    )
}

/// `ENDPOINT EVENT_ID KIND STATE attempts=N queued=... next=... settled=... error=...`.
pub fn webhook_delivery(d: &pb::WebhookDelivery) -> String {
    let kind = pb::MatchEventKind::try_from(d.kind)
        .map(|k| {
            k.as_str_name()
                .trim_start_matches("MATCH_EVENT_KIND_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| "-".into());
    let mut line = format!(
        "{} {} {} {} attempts={} queued={}",
        d.endpoint,
        d.event_id,
        kind,
        delivery_state(d.state),
        d.attempts,
        time(d.queued_at.as_ref()),
    );
    if let Some(next) = &d.next_attempt_at {
        line.push_str(&format!(" next={next}"));
    }
    if let Some(settled) = &d.settled_at {
        line.push_str(&format!(" settled={settled}"));
    }
    if !d.last_error.is_empty() {
        line.push_str(&format!(" error={:?}", d.last_error));
    }
    line
}
