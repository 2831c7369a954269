//! Conversions between the engine's types and the stored formats' types:
//! the only place the two meet, so reshaping an engine type changes this
//! file, never a stored game.

use bg_engine::game as e;
use bg_engine::game as s;
use bg_engine::{Board, Dice, Seat};

use bg_engine::clock::Clock;
use bg_fair_dice::{FairDice, SeatSeeds, ServerSeed};

use super::formats_0_to_5 as stored;

impl From<Seat> for stored::Seat {
    fn from(seat: Seat) -> stored::Seat {
        match seat {
            Seat::White => stored::Seat::White,
            Seat::Black => stored::Seat::Black,
        }
    }
}

impl From<stored::Seat> for Seat {
    fn from(seat: stored::Seat) -> Seat {
        match seat {
            stored::Seat::White => Seat::White,
            stored::Seat::Black => Seat::Black,
        }
    }
}

impl From<&Board> for stored::Board {
    fn from(b: &Board) -> stored::Board {
        stored::Board {
            checkers: b.checkers,
            pinned: b.pinned,
        }
    }
}

impl From<stored::Board> for Board {
    fn from(b: stored::Board) -> Board {
        Board {
            checkers: b.checkers,
            pinned: b.pinned,
        }
    }
}

fn phase_out(p: e::Phase) -> stored::Phase {
    match p {
        e::Phase::Roll => stored::Phase::Roll,
        e::Phase::Move => stored::Phase::Move,
        e::Phase::CubeOffered => stored::Phase::CubeOffered,
        e::Phase::ResignationOffered => stored::Phase::ResignationOffered,
        e::Phase::Decision => stored::Phase::Decision,
        e::Phase::MatchOver => stored::Phase::MatchOver,
    }
}

fn phase_in(p: stored::Phase) -> e::Phase {
    match p {
        stored::Phase::Roll => e::Phase::Roll,
        stored::Phase::Move => e::Phase::Move,
        stored::Phase::CubeOffered => e::Phase::CubeOffered,
        stored::Phase::ResignationOffered => e::Phase::ResignationOffered,
        stored::Phase::Decision => e::Phase::Decision,
        stored::Phase::MatchOver => e::Phase::MatchOver,
    }
}

fn result_out(r: &e::GameResult) -> stored::GameResult {
    stored::GameResult {
        game_number: r.game_number,
        winner: r.winner.map(Into::into),
        reason: match r.reason {
            e::EndReason::Played => stored::EndReason::Played,
            e::EndReason::Dropped => stored::EndReason::Dropped,
            e::EndReason::Resigned => stored::EndReason::Resigned,
            e::EndReason::Time => stored::EndReason::Time,
        },
        kind: r.kind.clone(),
        level: r.level,
        cube: r.cube,
        points: r.points,
    }
}

fn result_in(r: stored::GameResult) -> e::GameResult {
    e::GameResult {
        game_number: r.game_number,
        winner: r.winner.map(Into::into),
        reason: match r.reason {
            stored::EndReason::Played => e::EndReason::Played,
            stored::EndReason::Dropped => e::EndReason::Dropped,
            stored::EndReason::Resigned => e::EndReason::Resigned,
            stored::EndReason::Time => e::EndReason::Time,
        },
        kind: r.kind,
        level: r.level,
        cube: r.cube,
        points: r.points,
    }
}

fn settings_out(s: &s::MatchSettings) -> stored::Settings {
    stored::Settings {
        match_length: s.match_length,
        money_games: s.money_games,
        cube: match s.cube {
            s::CubeLimit::Off => stored::CubeLimit::Off,
            s::CubeLimit::Max(max) => stored::CubeLimit::Max(max),
            s::CubeLimit::Unlimited => stored::CubeLimit::Unlimited,
        },
        dead_cube_check: s.dead_cube_check,
        crawford: s.crawford,
        jacoby: s.jacoby,
        beavers: s.beavers,
        auto_doubles: s.auto_doubles,
        scoring_limit: match s.scoring_limit {
            s::ScoringLimit::Oin => stored::ScoringLimit::Oin,
            s::ScoringLimit::Mars => stored::ScoringLimit::Mars,
            s::ScoringLimit::Cox => stored::ScoringLimit::Cox,
        },
        resignation: match s.resignation {
            s::ResignMode::ByPosition => stored::ResignMode::ByPosition,
            s::ResignMode::Offer => stored::ResignMode::Offer,
        },
        draw_on_last_roll: s.draw_on_last_roll,
        first_move: s.first_move.map(|f| match f {
            s::FirstMove::Loser => stored::FirstMove::Loser,
            s::FirstMove::Alternate => stored::FirstMove::Alternate,
            s::FirstMove::Winner => stored::FirstMove::Winner,
            s::FirstMove::OpeningRoll => stored::FirstMove::OpeningRoll,
        }),
        // Settled when the match starts: every stored match has it.
        auto_roll: s.auto_roll == Some(true),
        bots: s
            .bots
            .iter()
            .map(|b| stored::BotSeat {
                seat: b.seat.into(),
                level: b.level.clone(),
            })
            .collect(),
        hints: s.hints,
    }
}

fn settings_in(s: stored::Settings) -> s::MatchSettings {
    s::MatchSettings {
        match_length: s.match_length,
        money_games: s.money_games,
        cube: match s.cube {
            stored::CubeLimit::Off => s::CubeLimit::Off,
            stored::CubeLimit::Max(max) => s::CubeLimit::Max(max),
            stored::CubeLimit::Unlimited => s::CubeLimit::Unlimited,
        },
        dead_cube_check: s.dead_cube_check,
        crawford: s.crawford,
        jacoby: s.jacoby,
        beavers: s.beavers,
        auto_doubles: s.auto_doubles,
        scoring_limit: match s.scoring_limit {
            stored::ScoringLimit::Oin => s::ScoringLimit::Oin,
            stored::ScoringLimit::Mars => s::ScoringLimit::Mars,
            stored::ScoringLimit::Cox => s::ScoringLimit::Cox,
        },
        resignation: match s.resignation {
            stored::ResignMode::ByPosition => s::ResignMode::ByPosition,
            stored::ResignMode::Offer => s::ResignMode::Offer,
        },
        draw_on_last_roll: s.draw_on_last_roll,
        first_move: s.first_move.map(|f| match f {
            stored::FirstMove::Loser => s::FirstMove::Loser,
            stored::FirstMove::Alternate => s::FirstMove::Alternate,
            stored::FirstMove::Winner => s::FirstMove::Winner,
            stored::FirstMove::OpeningRoll => s::FirstMove::OpeningRoll,
        }),
        auto_roll: Some(s.auto_roll),
        bots: s
            .bots
            .into_iter()
            .map(|b| s::BotSeat {
                seat: b.seat.into(),
                level: b.level,
            })
            .collect(),
        hints: s.hints,
    }
}

impl From<&e::Match> for stored::Match {
    fn from(m: &e::Match) -> stored::Match {
        stored::Match {
            settings: settings_out(&m.settings),
            score: m.score,
            game_number: m.game_number,
            crawford: match m.crawford {
                e::Crawford::Before => stored::Crawford::Before,
                e::Crawford::ThisGame => stored::Crawford::ThisGame,
                e::Crawford::Post => stored::Crawford::Post,
            },
            turn: m.turn.into(),
            phase: phase_out(m.phase),
            dice: m.dice.map(|d| stored::Dice { d1: d.d1, d2: d.d2 }),
            cube: stored::Cube {
                value: m.cube.value,
                owner: m.cube.owner.map(Into::into),
            },
            cube_in_play: m.cube_in_play,
            pending_double: m.pending_double.map(|d| stored::PendingDouble {
                by: d.by.into(),
                value: d.value,
                beaver: d.beaver,
            }),
            resignation: m.resignation.map(|r| stored::ResignationOffer {
                by: r.by.into(),
                level: r.level,
                resume: phase_out(r.resume),
            }),
            declined: m.declined.map(|(seat, level)| (seat.into(), level)),
            pending_decision: m
                .pending_decision
                .as_ref()
                .map(|d| stored::PendingDecision {
                    seat: d.seat.into(),
                    choices: d.choices.clone(),
                    prompt: d.prompt.clone(),
                }),
            decision_after_play: m.decision_after_play,
            first_mover: m.first_mover.into(),
            pending_win: m.pending_win.as_ref().map(result_out),
            starter: m.starter.into(),
            variant_state: m.variant_state.clone(),
            results: m.results.iter().map(result_out).collect(),
            winner: m.winner.map(Into::into),
        }
    }
}

impl TryFrom<stored::Match> for e::Match {
    type Error = String;

    /// Dice must be dice; everything else the format can hold, the
    /// engine can too (its own checks come after: `Match::check`).
    fn try_from(m: stored::Match) -> Result<e::Match, String> {
        let dice = m
            .dice
            .map(|d| {
                Dice::new(d.d1, d.d2).map_err(|_| format!("dice {}-{} are not dice", d.d1, d.d2))
            })
            .transpose()?;
        Ok(e::Match {
            settings: settings_in(m.settings),
            score: m.score,
            game_number: m.game_number,
            crawford: match m.crawford {
                stored::Crawford::Before => e::Crawford::Before,
                stored::Crawford::ThisGame => e::Crawford::ThisGame,
                stored::Crawford::Post => e::Crawford::Post,
            },
            turn: m.turn.into(),
            phase: phase_in(m.phase),
            dice,
            cube: e::Cube {
                value: m.cube.value,
                owner: m.cube.owner.map(Into::into),
            },
            cube_in_play: m.cube_in_play,
            pending_double: m.pending_double.map(|d| e::PendingDouble {
                by: d.by.into(),
                value: d.value,
                beaver: d.beaver,
            }),
            resignation: m.resignation.map(|r| e::ResignationOffer {
                by: r.by.into(),
                level: r.level,
                resume: phase_in(r.resume),
            }),
            declined: m.declined.map(|(seat, level)| (seat.into(), level)),
            pending_decision: m.pending_decision.map(|d| e::Decision {
                seat: d.seat.into(),
                choices: d.choices,
                prompt: d.prompt,
            }),
            decision_after_play: m.decision_after_play,
            first_mover: m.first_mover.into(),
            pending_win: m.pending_win.map(result_in),
            starter: m.starter.into(),
            variant_state: m.variant_state,
            results: m.results.into_iter().map(result_in).collect(),
            winner: m.winner.map(Into::into),
        })
    }
}

impl From<&Clock> for stored::Clock {
    fn from(c: &Clock) -> stored::Clock {
        let s = c.settings;
        stored::Clock {
            reserve_ms: s.reserve_ms,
            reserve_per_point_ms: s.reserve_per_point_ms,
            delay_ms: s.delay_ms,
            increment_ms: s.increment_ms,
            turn_limit_ms: s.turn_limit_ms,
            on_timeout: match s.on_timeout {
                bg_engine::clock::OnTimeout::Match => stored::OnTimeout::Match,
                bg_engine::clock::OnTimeout::Game => stored::OnTimeout::Game,
            },
            reserves: c.reserve_ms,
            running: c.running.map(|(seat, since)| (seat.into(), since)),
        }
    }
}

impl From<stored::Clock> for Clock {
    fn from(c: stored::Clock) -> Clock {
        Clock {
            settings: bg_engine::clock::ClockSettings {
                reserve_ms: c.reserve_ms,
                reserve_per_point_ms: c.reserve_per_point_ms,
                delay_ms: c.delay_ms,
                increment_ms: c.increment_ms,
                turn_limit_ms: c.turn_limit_ms,
                on_timeout: match c.on_timeout {
                    stored::OnTimeout::Match => bg_engine::clock::OnTimeout::Match,
                    stored::OnTimeout::Game => bg_engine::clock::OnTimeout::Game,
                },
            },
            reserve_ms: c.reserves,
            running: c.running.map(|(seat, since)| (seat.into(), since)),
        }
    }
}

impl From<&FairDice> for stored::FairDice {
    fn from(dice: &FairDice) -> stored::FairDice {
        stored::FairDice {
            scheme: bg_fair_dice::SCHEME.to_string(),
            server_seed: dice.server.to_hex(),
            white_seed: dice.seeds.white.seed.clone(),
            white_seed_from: dice.seeds.white.from,
            black_seed: dice.seeds.black.seed.clone(),
            black_seed_from: dice.seeds.black.from,
            thrown: dice.thrown,
        }
    }
}

impl TryFrom<stored::FairDice> for FairDice {
    type Error = String;

    fn try_from(stored: stored::FairDice) -> Result<FairDice, String> {
        if stored.scheme != bg_fair_dice::SCHEME {
            return Err(format!("unknown dice scheme {:?}", stored.scheme));
        }
        let mut seeds = SeatSeeds::default();
        seeds
            .give(Seat::White, &stored.white_seed, stored.white_seed_from)
            .and_then(|()| seeds.give(Seat::Black, &stored.black_seed, stored.black_seed_from))
            .map_err(|e| e.to_string())?;
        Ok(FairDice {
            server: ServerSeed::from_hex(&stored.server_seed).map_err(|e| e.to_string())?,
            seeds,
            thrown: stored.thrown,
        })
    }
}
