//! The host's side of the C ABI: the protobuf messages a plugin answers
//! with, read back into the engine's own types (the plugin's side,
//! `bg_variant_api::export`, wrote them from the same types). Nothing past
//! this module sees a protobuf message from a plugin.

use bg_engine::Seat;
use bg_engine::game::{Decision, FirstMove, Opening, Outcome, ScoreEvent, Setup, Transition};
use bg_variant_api::proto;

/// A seat number from a plugin: 0 white, 1 black; anything else is the
/// plugin's mistake.
fn seat(index: u32) -> Result<Seat, String> {
    u8::try_from(index)
        .ok()
        .and_then(Seat::from_index)
        .ok_or_else(|| format!("answered seat {index}, which is no seat"))
}

/// `GameSetup.first_move` as the plugin protocol spells it (variant.proto);
/// empty, or a word this host does not know, leaves it to the settings.
fn first_move(name: &str) -> Option<FirstMove> {
    match name {
        "loser" => Some(FirstMove::Loser),
        "winner" => Some(FirstMove::Winner),
        "alternate" => Some(FirstMove::Alternate),
        "opening_roll" => Some(FirstMove::OpeningRoll),
        _ => None,
    }
}

pub(crate) fn setup(s: proto::GameSetup) -> Setup<Vec<u8>> {
    Setup {
        opening: match proto::Opening::try_from(s.opening) {
            Ok(proto::Opening::ThrowAgain) => Opening::ThrowAgain,
            _ => Opening::PlayOpeningDice,
        },
        cube: s.cube,
        first_move: first_move(&s.first_move),
        state: s.state,
    }
}

pub(crate) fn outcome(o: proto::Outcome) -> Result<Outcome, String> {
    Ok(Outcome {
        winner: o.winner.map(seat).transpose()?,
        level: o.level,
        kind: o.kind,
        by_bearing_off: o.by_bearing_off,
    })
}

pub(crate) fn transition(t: proto::Transition) -> Result<Transition<Vec<u8>>, String> {
    Ok(Transition {
        state: t.state,
        outcome: t.outcome.map(outcome).transpose()?,
        events: t
            .events
            .into_iter()
            .map(|e| {
                Ok(ScoreEvent {
                    seat: seat(e.seat)?,
                    points: e.points,
                    reason: e.reason,
                })
            })
            .collect::<Result<_, String>>()?,
        decision: t
            .decision
            .map(|d| {
                Ok::<_, String>(Decision {
                    seat: seat(d.seat)?,
                    choices: d.choices,
                    prompt: d.prompt,
                })
            })
            .transpose()?,
    })
}
