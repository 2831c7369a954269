//! The payload messages at the C ABI, both ways: the engine's types as the
//! protobuf messages of `proto/variant/v1/variant.proto`, and back. The
//! plugin's side (the export shims) writes with the `*_message`
//! functions, the host (`bg-plugin-host`) reads with the others; each pair
//! stands together here, so the two sides cannot drift apart.

use bg_engine::Seat;
use bg_engine::game::{
    Counter, Decision, FirstMove, Marker, Opening, Outcome, ScoreEvent, Scoreboard, Setup, Tally,
    Transition,
};

use crate::proto;

/// A seat as a number: 0 white, 1 black.
fn seat_number(seat: Seat) -> u32 {
    seat as u32
}

/// A seat number read back; anything but 0 or 1 is the plugin's mistake.
fn seat(number: u32) -> Result<Seat, String> {
    u8::try_from(number)
        .ok()
        .and_then(Seat::from_index)
        .ok_or_else(|| format!("answered seat {number}, which is no seat"))
}

fn opening_message(opening: Opening) -> proto::Opening {
    match opening {
        Opening::PlayOpeningDice => proto::Opening::PlayOpeningDice,
        Opening::ThrowAgain => proto::Opening::ThrowAgain,
    }
}

/// Unset (or unknown) reads as the standard opening.
fn opening(number: i32) -> Opening {
    match proto::Opening::try_from(number) {
        Ok(proto::Opening::ThrowAgain) => Opening::ThrowAgain,
        _ => Opening::PlayOpeningDice,
    }
}

/// `GameSetup.first_move`'s names; none is the empty string.
const FIRST_MOVES: [(FirstMove, &str); 4] = [
    (FirstMove::Loser, "loser"),
    (FirstMove::Winner, "winner"),
    (FirstMove::Alternate, "alternate"),
    (FirstMove::OpeningRoll, "opening_roll"),
];

fn first_move_name(first_move: Option<FirstMove>) -> &'static str {
    FIRST_MOVES
        .iter()
        .find(|(f, _)| Some(*f) == first_move)
        .map_or("", |(_, name)| name)
}

/// Empty, or a word this side does not know, leaves it to the settings.
fn first_move(name: &str) -> Option<FirstMove> {
    FIRST_MOVES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(f, _)| *f)
}

pub fn setup_message(setup: Setup<Vec<u8>>) -> proto::GameSetup {
    proto::GameSetup {
        opening: opening_message(setup.opening) as i32,
        cube: setup.cube,
        first_move: first_move_name(setup.first_move).to_string(),
        state: setup.state,
    }
}

pub fn setup(s: proto::GameSetup) -> Setup<Vec<u8>> {
    Setup {
        opening: opening(s.opening),
        cube: s.cube,
        first_move: first_move(&s.first_move),
        state: s.state,
    }
}

pub fn outcome_message(o: Outcome) -> proto::Outcome {
    proto::Outcome {
        winner: o.winner.map(seat_number),
        level: o.level,
        kind: o.kind,
        by_bearing_off: o.by_bearing_off,
    }
}

pub fn outcome(o: proto::Outcome) -> Result<Outcome, String> {
    Ok(Outcome {
        winner: o.winner.map(seat).transpose()?,
        level: o.level,
        kind: o.kind,
        by_bearing_off: o.by_bearing_off,
    })
}

fn score_event_message(e: ScoreEvent) -> proto::ScoreEvent {
    proto::ScoreEvent {
        seat: seat_number(e.seat),
        points: e.points,
        reason: e.reason,
        ways: e.ways,
    }
}

fn score_event(e: proto::ScoreEvent) -> Result<ScoreEvent, String> {
    Ok(ScoreEvent {
        seat: seat(e.seat)?,
        points: e.points,
        reason: e.reason,
        ways: e.ways,
    })
}

pub fn scoreboard_message(b: Scoreboard) -> proto::Scoreboard {
    proto::Scoreboard {
        tallies: b
            .tallies
            .into_iter()
            .map(|t| proto::Tally {
                name: t.name,
                white: t.seats[0],
                black: t.seats[1],
            })
            .collect(),
        counters: b
            .counters
            .into_iter()
            .map(|c| proto::Counter {
                name: c.name,
                value: c.value,
            })
            .collect(),
        markers: b
            .markers
            .into_iter()
            .map(|m| proto::Marker {
                name: m.name,
                seat: seat_number(m.seat),
                point: u32::from(m.point),
            })
            .collect(),
        last_roll: b.last_roll.into_iter().map(score_event_message).collect(),
        ..Default::default()
    }
}

pub fn scoreboard(b: proto::Scoreboard) -> Result<Scoreboard, String> {
    let mut tallies: Vec<Tally> = b
        .tallies
        .into_iter()
        .map(|t| Tally {
            name: t.name,
            seats: [t.white, t.black],
        })
        .collect();
    let mut counters: Vec<Counter> = b
        .counters
        .into_iter()
        .map(|c| Counter {
            name: c.name,
            value: c.value,
        })
        .collect();
    // ABI 1.2's typed tally (a plugin of that version writes only it).
    if !b.seats.is_empty() {
        let seats: [&proto::SeatTally; 2] = b
            .seats
            .iter()
            .collect::<Vec<_>>()
            .try_into()
            .map_err(|_| "a scoreboard needs the tallies of both seats".to_string())?;
        let per_seat = |name: &str, value: fn(&proto::SeatTally) -> i64| Tally {
            name: name.into(),
            seats: seats.map(value),
        };
        tallies.push(per_seat("points", |t| i64::from(t.points)));
        tallies.push(per_seat("holes", |t| i64::from(t.holes)));
        tallies.push(per_seat("bredouille", |t| i64::from(t.bredouille)));
        tallies.push(per_seat("rolls", |t| i64::from(t.rolls)));
        let mut raised = [0; 2];
        for s in b.raised_stake {
            raised[seat(s)?.index()] = 1;
        }
        tallies.push(Tally {
            name: "raised_stake".into(),
            seats: raised,
        });
        let mut flag = [0; 2];
        if let Some(s) = b.flag {
            flag[seat(s)?.index()] = 1;
        }
        tallies.push(Tally {
            name: "flag".into(),
            seats: flag,
        });
        counters.push(Counter {
            name: "round".into(),
            value: i64::from(b.round),
        });
    }
    let markers = b
        .markers
        .into_iter()
        .map(|m| {
            let point = u8::try_from(m.point)
                .ok()
                .filter(|p| (1..=24).contains(p))
                .ok_or_else(|| format!("a marker on point {}, which is no point", m.point))?;
            Ok(Marker {
                name: m.name,
                seat: seat(m.seat)?,
                point,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Scoreboard {
        tallies,
        counters,
        markers,
        last_roll: b
            .last_roll
            .into_iter()
            .map(score_event)
            .collect::<Result<_, _>>()?,
    })
}

pub fn transition_message(t: Transition<Vec<u8>>) -> proto::Transition {
    proto::Transition {
        state: t.state,
        next_roller: t.next_roller.map(seat_number),
        events: t.events.into_iter().map(score_event_message).collect(),
        outcome: t.outcome.map(outcome_message),
        decision: t.decision.map(|d| proto::Decision {
            seat: seat_number(d.seat),
            choices: d.choices,
            prompt: d.prompt,
        }),
    }
}

pub fn transition(t: proto::Transition) -> Result<Transition<Vec<u8>>, String> {
    Ok(Transition {
        state: t.state,
        outcome: t.outcome.map(outcome).transpose()?,
        next_roller: t.next_roller.map(seat).transpose()?,
        events: t
            .events
            .into_iter()
            .map(score_event)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What one side writes, the other reads back as it was.
    #[test]
    fn every_message_reads_back_as_written() {
        for first_move in [None, Some(FirstMove::Loser), Some(FirstMove::OpeningRoll)] {
            for opening in [Opening::PlayOpeningDice, Opening::ThrowAgain] {
                let written = Setup {
                    state: vec![1, 2],
                    opening,
                    cube: true,
                    first_move,
                };
                assert_eq!(setup(setup_message(written.clone())), written);
            }
        }
        let written = Transition {
            state: vec![3],
            events: vec![ScoreEvent {
                seat: Seat::Black,
                points: 4,
                reason: "jan".into(),
                ways: 1,
            }],
            outcome: Some(Outcome {
                winner: None,
                level: 0,
                kind: "draw".into(),
                by_bearing_off: false,
            }),
            decision: Some(Decision {
                seat: Seat::White,
                choices: vec!["stay".into(), "go".into()],
                prompt: "?".into(),
            }),
            next_roller: Some(Seat::Black),
        };
        assert_eq!(
            transition(transition_message(written.clone())).unwrap(),
            written
        );
        let mut bad = transition_message(written);
        bad.events[0].seat = 2;
        assert!(transition(bad).is_err(), "a seat that is no seat");
        let board = Scoreboard {
            tallies: vec![Tally {
                name: "points".into(),
                seats: [4, 0],
            }],
            counters: vec![Counter {
                name: "round".into(),
                value: 2,
            }],
            markers: vec![Marker {
                name: "pinned".into(),
                seat: Seat::Black,
                point: 19,
            }],
            last_roll: vec![ScoreEvent {
                seat: Seat::White,
                points: 4,
                reason: "true_hit_petit_table".into(),
                ways: 1,
            }],
        };
        assert_eq!(
            scoreboard(scoreboard_message(board.clone())).unwrap(),
            board
        );
        let mut off_board = scoreboard_message(board);
        off_board.markers[0].point = 25;
        assert!(scoreboard(off_board).is_err(), "a marker on no point");
    }

    /// A plugin of ABI 1.2 writes its tally typed: read as the tallies
    /// and the counter of those names.
    #[test]
    fn an_abi_1_2_typed_tally_reads_as_named_tallies() {
        let typed = proto::Scoreboard {
            seats: vec![
                proto::SeatTally {
                    points: 4,
                    holes: 2,
                    bredouille: true,
                    rolls: 3,
                },
                proto::SeatTally::default(),
            ],
            raised_stake: vec![0],
            flag: Some(1),
            round: 2,
            ..Default::default()
        };
        let read = scoreboard(typed.clone()).unwrap();
        assert_eq!(read.tally("points"), Some([4, 0]));
        assert_eq!(read.tally("holes"), Some([2, 0]));
        assert_eq!(read.tally("bredouille"), Some([1, 0]));
        assert_eq!(read.tally("rolls"), Some([3, 0]));
        assert_eq!(read.tally("raised_stake"), Some([1, 0]));
        assert_eq!(read.tally("flag"), Some([0, 1]));
        assert_eq!(read.counter("round"), Some(2));
        let mut one_seat = typed;
        one_seat.seats.pop();
        assert!(scoreboard(one_seat).is_err(), "a tally missing");
    }
}
