//! The engine's types as the API shows them (answers, events, watchers).
//! Boards go out in one fixed orientation: white's numbering.

use bg_api::v1 as pb;
use bg_engine::clock::{Clock, ClockSettings, OnTimeout};
use bg_engine::game::{
    Crawford, CubeLimit, Event, FirstMove, Match, MatchSettings, Phase, ResignMode, Scoreboard,
    ScoringLimit,
};
use bg_engine::match_id::{self, GameState, MatchInfo};
use bg_engine::xgid::{self, XgDice, Xgid};
use bg_engine::{Board, Geometry, LegalPlay, Play, Seat, position_id};

use crate::fields::{Fields, GameField as F, PlayField};

pub fn seat(seat: Seat) -> i32 {
    match seat {
        Seat::White => pb::Seat::White as i32,
        Seat::Black => pb::Seat::Black as i32,
    }
}

pub fn seat_or_none(seat: Option<Seat>) -> i32 {
    seat.map_or(pb::Seat::Unspecified as i32, self::seat)
}

fn clock_settings(c: &ClockSettings) -> pb::ClockSettings {
    pb::ClockSettings {
        reserve_ms: c.reserve_ms,
        reserve_per_point_ms: c.reserve_per_point_ms,
        delay_ms: c.delay_ms,
        increment_ms: c.increment_ms,
        turn_limit_ms: c.turn_limit_ms,
        on_timeout: match c.on_timeout {
            OnTimeout::Match => pb::OnTimeout::Match,
            OnTimeout::Game => pb::OnTimeout::Game,
        } as i32,
    }
}

/// A clock as of `now_ms` (the answer): the reserves and the delay left
/// then, when the running seat's time started and the deadline.
pub fn clock(c: &Clock, now_ms: u64) -> pb::Clock {
    let since = c.running.map(|(_, since)| since);
    // Never as of before the turn began (a replica whose wall clock is
    // behind the one that started it shows the turn as just begun).
    let as_of = since.map_or(now_ms, |since| now_ms.max(since));
    let (reserves, delay_left_ms) = c.remaining(as_of);
    pb::Clock {
        white_ms: reserves[0],
        black_ms: reserves[1],
        running: seat_or_none(c.running.map(|(seat, _)| seat)),
        running_since: since.map(timestamp),
        deadline: c.deadline_ms().map(timestamp),
        settings: Some(clock_settings(&c.settings)),
        delay_left_ms,
        as_of: Some(timestamp(as_of)),
    }
}

/// A protobuf Timestamp of milliseconds since the Unix epoch.
pub fn timestamp(ms: u64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: (ms / 1000).min(i64::MAX as u64) as i64,
        nanos: ((ms % 1000) * 1_000_000) as i32,
    }
}

fn settings(s: &MatchSettings) -> pb::MatchSettings {
    pb::MatchSettings {
        clock: None,
        match_length: s.match_length,
        money_games: Some(s.money_games),
        cube_max: Some(match s.cube {
            CubeLimit::Off => 0,
            CubeLimit::Max(max) => max,
            CubeLimit::Unlimited => 0,
        }),
        cube_unlimited: s.cube == CubeLimit::Unlimited,
        dead_cube_check: Some(s.dead_cube_check),
        crawford: Some(s.crawford),
        jacoby: s.jacoby,
        beavers: s.beavers,
        auto_doubles: s.auto_doubles,
        scoring_limit: match s.scoring_limit {
            ScoringLimit::Oin => pb::ScoringLimit::Oin,
            ScoringLimit::Mars => pb::ScoringLimit::Mars,
            ScoringLimit::Cox => pb::ScoringLimit::Cox,
        } as i32,
        resignation: match s.resignation {
            ResignMode::ByPosition => pb::ResignationMode::ByPosition,
            ResignMode::Offer => pb::ResignationMode::Offer,
        } as i32,
        draw_on_last_roll: s.draw_on_last_roll,
        first_move: match s.first_move {
            None => pb::FirstMove::Unspecified,
            Some(FirstMove::Loser) => pb::FirstMove::Loser,
            Some(FirstMove::Alternate) => pb::FirstMove::Alternate,
            Some(FirstMove::Winner) => pb::FirstMove::Winner,
            Some(FirstMove::OpeningRoll) => pb::FirstMove::OpeningRoll,
        } as i32,
        auto_roll: s.auto_roll,
        // The game's own, not the settings': set by `game`.
        verifiable_dice: None,
        hints: Some(s.hints),
    }
}

/// The seats the service plays, as the API shows them.
fn bots(s: &MatchSettings) -> Vec<pb::BotSeat> {
    s.bots
        .iter()
        .map(|b| pb::BotSeat {
            seat: seat(b.seat),
            level: b.level.clone(),
        })
        .collect()
}

/// What a snapshot shows of a match's verifiable dice: the server seed
/// only once the match is over.
pub fn verifiable_dice(dice: &bg_fair_dice::FairDice, over: bool) -> pb::VerifiableDice {
    pb::VerifiableDice {
        scheme: bg_fair_dice::SCHEME.to_string(),
        commitment: dice.server.commitment(),
        white_seed: dice.seeds.white.seed.clone(),
        white_seed_from: dice.seeds.white.from,
        black_seed: dice.seeds.black.seed.clone(),
        black_seed_from: dice.seeds.black.from,
        server_seed: if over {
            dice.server.to_hex()
        } else {
            String::new()
        },
        dice_thrown: dice.thrown,
    }
}

/// A geometry as the API says it.
pub fn geometry(g: Geometry) -> i32 {
    (match g {
        Geometry::Opposed => pb::Geometry::Opposed,
        Geometry::SameWay => pb::Geometry::SameWay,
    }) as i32
}

/// The board in white's numbering, black's points placed by the
/// variant's `geometry`.
pub fn board(b: &Board, geometry: Geometry) -> pb::Board {
    let mut points = vec![0i32; 24];
    let mut pins = Vec::new();
    for point in 1..=24u8 {
        let blacks = geometry.for_white(Seat::Black, point);
        let white = i32::from(b.count(Seat::White, point));
        let black = i32::from(b.count(Seat::Black, blacks));
        let white_pinned = b.is_pinned(Seat::White, point);
        let black_pinned = b.is_pinned(Seat::Black, blacks);
        points[usize::from(point - 1)] = match (white_pinned, black_pinned) {
            (true, _) => -black,
            (_, true) => white,
            _ => white - black,
        };
        if white_pinned {
            pins.push(pb::Pin {
                point: u32::from(point),
                pinned: pb::Seat::White as i32,
            });
        }
        if black_pinned {
            pins.push(pb::Pin {
                point: u32::from(point),
                pinned: pb::Seat::Black as i32,
            });
        }
    }
    pb::Board {
        points,
        white_bar: u32::from(b.on_bar(Seat::White)),
        black_bar: u32::from(b.on_bar(Seat::Black)),
        white_off: u32::from(b.off(Seat::White)),
        black_off: u32::from(b.off(Seat::Black)),
        pins,
    }
}

pub fn play(play: &Play, result: Option<(&Board, Seat)>) -> pb::Play {
    play_parts(play, result, &Fields::ALL)
}

/// A play with the parts asked for.
fn play_parts(play: &Play, result: Option<(&Board, Seat)>, fields: &Fields) -> pb::Play {
    pb::Play {
        moves: when(fields.play_has(PlayField::Moves), || {
            play.moves()
                .iter()
                .map(|m| pb::CheckerMove {
                    from: u32::from(m.from),
                    to: u32::from(m.to),
                })
                .collect()
        }),
        notation: when(fields.play_has(PlayField::Notation), || play.notation()),
        result_position_id: when(fields.play_has(PlayField::ResultPositionId), || {
            result
                .map(|(b, mover)| position_id::encode(b, mover))
                .unwrap_or_default()
        }),
    }
}

pub fn phase(p: Phase) -> i32 {
    (match p {
        Phase::Roll => pb::Phase::Roll,
        Phase::Move => pb::Phase::Move,
        Phase::CubeOffered => pb::Phase::CubeOffered,
        Phase::ResignationOffered => pb::Phase::ResignationOffered,
        Phase::Decision => pb::Phase::Decision,
        Phase::MatchOver => pb::Phase::MatchOver,
    }) as i32
}

/// What the snapshot needs besides the match.
pub struct GameMeta<'a> {
    pub game_id: &'a str,
    pub version: u64,
    pub variant: &'a str,
    pub variant_version: &'a str,
    pub options: &'a std::collections::BTreeMap<String, String>,
    pub standard_board: bool,
    /// How the seats' numberings meet (the board is shown in white's).
    pub geometry: Geometry,
    /// The events of the action that made this version.
    pub last_events: &'a [pb::GameEvent],
    /// The match's verifiable dice (None: dice from the CSPRNG alone).
    pub dice: Option<&'a bg_fair_dice::FairDice>,
    /// The match's clock (None: no clock).
    pub clock: Option<&'a Clock>,
    /// The time of the answer (ms since the epoch): what the clock shows
    /// is as of then.
    pub now_ms: u64,
    /// What lists read: the site's words, the times, where it stands.
    pub index: &'a bg_store::MatchIndex,
}

/// The game as clients see it, with only the fields asked for (the
/// others are left at their defaults, and not worked out at all).
pub fn game(
    meta: &GameMeta<'_>,
    m: &Match,
    board_now: &Board,
    legal: &[LegalPlay],
    fields: &Fields,
) -> pb::Game {
    let mut game = game_parts(meta, m, board_now, legal, fields);
    index(&mut game, meta.index, m.phase == Phase::MatchOver, fields);
    game
}

/// The fields of a match that its index holds (what lists show without
/// reading the match): labels, players, times, state.
pub fn index(game: &mut pb::Game, index: &bg_store::MatchIndex, over: bool, fields: &Fields) {
    let has = |field| fields.has(field);
    if has(F::Labels) {
        game.labels = crate::fleet::feed::labels_of(&index.labels)
            .into_iter()
            .collect();
    }
    if has(F::Players) && index.players.iter().any(|p| !p.is_empty()) {
        game.players = Some(pb::Players {
            white: index.players[0].clone(),
            black: index.players[1].clone(),
        });
    }
    let micros = |us: i64| prost_types::Timestamp {
        seconds: us.div_euclid(1_000_000),
        nanos: (us.rem_euclid(1_000_000) * 1000) as i32,
    };
    if has(F::CreatedAt) && index.created_us > 0 {
        game.created_at = Some(micros(index.created_us));
    }
    if has(F::UpdatedAt) && index.updated_us > 0 {
        game.updated_at = Some(micros(index.updated_us));
    }
    if has(F::State) {
        game.state = match (over, index.abandoned) {
            (false, _) => pb::MatchState::InProgress,
            (true, false) => pb::MatchState::Finished,
            (true, true) => pb::MatchState::Abandoned,
        } as i32;
    }
}

fn game_parts(
    meta: &GameMeta<'_>,
    m: &Match,
    board_now: &Board,
    legal: &[LegalPlay],
    fields: &Fields,
) -> pb::Game {
    let standard = meta.standard_board;
    let has = |field| fields.has(field);
    pb::Game {
        game_id: when(has(F::GameId), || meta.game_id.to_string()),
        version: when(has(F::Version), || meta.version),
        last_events: when(has(F::LastEvents), || meta.last_events.to_vec()),
        variant: when(has(F::Variant), || meta.variant.to_string()),
        variant_version: when(has(F::VariantVersion), || meta.variant_version.to_string()),
        options: when(has(F::Options), || {
            meta.options
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }),
        settings: when(has(F::Settings), || {
            Some(pb::MatchSettings {
                verifiable_dice: Some(meta.dice.is_some()),
                clock: meta.clock.map(|c| clock_settings(&c.settings)),
                ..settings(&m.settings)
            })
        }),
        board: when(has(F::Board), || Some(board(board_now, meta.geometry))),
        turn: when(has(F::Turn), || seat(m.turn)),
        phase: when(has(F::Phase), || phase(m.phase)),
        to_act: when(has(F::ToAct), || seat_or_none(m.to_act())),
        dice: when(has(F::Dice), || {
            m.dice.map(|d| pb::Dice {
                die1: u32::from(d.d1),
                die2: u32::from(d.d2),
            })
        }),
        cube: when(has(F::Cube), || {
            Some(pb::Cube {
                value: m.cube.value,
                owner: seat_or_none(m.cube.owner),
                in_play: m.cube_in_play,
                may_double: m.phase == Phase::Roll && m.double_value(m.turn).is_ok(),
            })
        }),
        score: when(has(F::Score), || {
            Some(pb::Score {
                white: m.score[0],
                black: m.score[1],
            })
        }),
        game_number: when(has(F::GameNumber), || m.game_number),
        crawford: when(has(F::Crawford), || crawford(m)),
        results: when(has(F::Results), || m.results.iter().map(result).collect()),
        match_winner: when(has(F::MatchWinner), || seat_or_none(m.winner)),
        position_id: when(
            has(F::PositionId) && standard && m.phase != Phase::MatchOver,
            || position_id::encode(board_now, m.turn),
        ),
        // Backgammon's own IDs: for the standard variant only (its rules
        // are the ones gnubg and XG apply to them), and only for states
        // they can say: not once the match is over, nor while a beaver
        // waits; an XGID cannot say a resignation is offered. A state
        // beyond their fields (a cube over 2^15) has none either.
        match_id: when(
            has(F::MatchId) && backgammon(meta, m) && !beavered(m),
            || match_id::encode(&match_info(m)).unwrap_or_default(),
        ),
        xgid: when(
            has(F::Xgid)
                && backgammon(meta, m)
                && !beavered(m)
                && m.phase != Phase::ResignationOffered,
            || xgid::encode(&xgid_of(m, board_now)).unwrap_or_default(),
        ),
        verifiable_dice: when(has(F::VerifiableDice), || {
            meta.dice
                .map(|dice| verifiable_dice(dice, m.phase == Phase::MatchOver))
        }),
        clock: when(has(F::Clock), || meta.clock.map(|c| clock(c, meta.now_ms))),
        bots: when(has(F::Bots), || bots(&m.settings)),
        geometry: when(has(F::Geometry), || geometry(meta.geometry)),
        legal_plays: when(has(F::LegalPlays), || {
            legal
                .iter()
                .map(|lp| play_parts(&lp.play, standard.then_some((&lp.result, m.turn)), fields))
                .collect()
        }),
        pending_double: when(has(F::PendingDouble), || {
            m.pending_double.map(|d| pb::PendingDouble {
                by: seat(d.by),
                value: d.value,
                beaver: d.beaver,
            })
        }),
        resignation_offer: when(has(F::ResignationOffer), || {
            m.resignation.map(|r| pb::ResignationOffer {
                by: seat(r.by),
                level: r.level,
            })
        }),
        decision: when(has(F::Decision), || {
            m.pending_decision.as_ref().map(|d| pb::Decision {
                seat: seat(d.seat),
                choices: d.choices.clone(),
                prompt: d.prompt.clone(),
            })
        }),
        last_roll: when(has(F::LastRoll), || m.pending_win.is_some()),
        // Filled by the caller, which asks the variant.
        scoreboard: None,
        // Filled by `index`.
        labels: Default::default(),
        players: None,
        created_at: None,
        updated_at: None,
        state: 0,
    }
}

/// Clears the fields not asked for from a game built whole: an answer
/// recorded whole (the format before answers were rebuilt from the log), an answer cut from the game built
/// for the watchers, a watcher's update.
pub fn keep_only(game: &mut pb::Game, fields: &Fields) {
    if *fields == Fields::ALL {
        return;
    }
    let whole = std::mem::take(game);
    let keep = |field| fields.has(field);
    *game = pb::Game {
        game_id: when(keep(F::GameId), || whole.game_id),
        version: when(keep(F::Version), || whole.version),
        variant: when(keep(F::Variant), || whole.variant),
        variant_version: when(keep(F::VariantVersion), || whole.variant_version),
        options: when(keep(F::Options), || whole.options),
        settings: when(keep(F::Settings), || whole.settings),
        board: when(keep(F::Board), || whole.board),
        turn: when(keep(F::Turn), || whole.turn),
        phase: when(keep(F::Phase), || whole.phase),
        to_act: when(keep(F::ToAct), || whole.to_act),
        dice: when(keep(F::Dice), || whole.dice),
        cube: when(keep(F::Cube), || whole.cube),
        score: when(keep(F::Score), || whole.score),
        game_number: when(keep(F::GameNumber), || whole.game_number),
        crawford: when(keep(F::Crawford), || whole.crawford),
        results: when(keep(F::Results), || whole.results),
        match_winner: when(keep(F::MatchWinner), || whole.match_winner),
        position_id: when(keep(F::PositionId), || whole.position_id),
        legal_plays: when(keep(F::LegalPlays), || {
            whole
                .legal_plays
                .into_iter()
                .map(|play| pb::Play {
                    moves: when(fields.play_has(PlayField::Moves), || play.moves),
                    notation: when(fields.play_has(PlayField::Notation), || play.notation),
                    result_position_id: when(fields.play_has(PlayField::ResultPositionId), || {
                        play.result_position_id
                    }),
                })
                .collect()
        }),
        pending_double: when(keep(F::PendingDouble), || whole.pending_double),
        resignation_offer: when(keep(F::ResignationOffer), || whole.resignation_offer),
        decision: when(keep(F::Decision), || whole.decision),
        last_roll: when(keep(F::LastRoll), || whole.last_roll),
        last_events: when(keep(F::LastEvents), || whole.last_events),
        scoreboard: when(keep(F::Scoreboard), || whole.scoreboard),
        match_id: when(keep(F::MatchId), || whole.match_id),
        xgid: when(keep(F::Xgid), || whole.xgid),
        verifiable_dice: when(keep(F::VerifiableDice), || whole.verifiable_dice),
        clock: when(keep(F::Clock), || whole.clock),
        bots: when(keep(F::Bots), || whole.bots),
        geometry: when(keep(F::Geometry), || whole.geometry),
        labels: when(keep(F::Labels), || whole.labels),
        players: when(keep(F::Players), || whole.players),
        created_at: when(keep(F::CreatedAt), || whole.created_at),
        updated_at: when(keep(F::UpdatedAt), || whole.updated_at),
        state: when(keep(F::State), || whole.state),
    };
}

/// `make()` if the field is wanted, else the field's default.
fn when<T: Default>(wanted: bool, make: impl FnOnce() -> T) -> T {
    if wanted { make() } else { T::default() }
}

fn crawford(m: &Match) -> i32 {
    let crawford = if m.settings.is_money() || !m.settings.crawford {
        pb::Crawford::Unspecified
    } else {
        match m.crawford {
            Crawford::Before => pb::Crawford::NotYet,
            Crawford::ThisGame => pb::Crawford::ThisGame,
            Crawford::Post => pb::Crawford::Post,
        }
    };
    crawford as i32
}

pub fn result(r: &bg_engine::game::GameResult) -> pb::GameResult {
    pb::GameResult {
        game_number: r.game_number,
        winner: seat_or_none(r.winner),
        kind: r.kind.clone(),
        reason: serde_json::to_value(r.reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        level: r.level,
        cube: r.cube,
        points: r.points,
    }
}

/// Whether a snapshot is of a standard backgammon match in play, which
/// gnubg's Match ID and XG's XGID describe.
fn backgammon(meta: &GameMeta<'_>, m: &Match) -> bool {
    meta.standard_board && meta.variant == "standard" && m.phase != Phase::MatchOver
}

fn beavered(m: &Match) -> bool {
    m.pending_double.is_some_and(|d| d.beaver)
}

/// The state of play as a gnubg Match ID holds it.
pub fn match_info(m: &Match) -> MatchInfo {
    MatchInfo {
        cube: m.cube.value,
        cube_owner: m.cube.owner,
        on_roll: m.turn,
        to_decide: m.to_act().unwrap_or(m.turn),
        crawford: crawford_game(m),
        state: GameState::Playing,
        double_offered: m.phase == Phase::CubeOffered,
        resignation: m
            .resignation
            .map_or(0, |r| u8::try_from(r.level.min(3)).unwrap_or(3)),
        dice: m.dice.map(|d| (d.d1, d.d2)),
        match_length: m.settings.match_length,
        score: m.score,
    }
}

fn crawford_game(m: &Match) -> bool {
    !m.settings.is_money() && m.settings.crawford && m.crawford == Crawford::ThisGame
}

/// The position and the state of play as an XGID holds them.
pub fn xgid_of(m: &Match, board_now: &Board) -> Xgid {
    let money = m.settings.is_money();
    Xgid {
        board: *board_now,
        cube: m.cube.value,
        cube_owner: m.cube.owner,
        on_roll: m.turn,
        dice: match (m.pending_double, m.dice) {
            (Some(_), _) => XgDice::Doubled,
            (None, Some(d)) => XgDice::Rolled(d.d1, d.d2),
            (None, None) => XgDice::ToRoll,
        },
        score: m.score,
        crawford: crawford_game(m),
        jacoby: money && m.settings.jacoby,
        beavers: money && m.settings.beavers,
        match_length: m.settings.match_length,
        max_cube: match m.settings.cube {
            CubeLimit::Max(max) if max.is_power_of_two() => max,
            // No cube: the highest is 1.
            CubeLimit::Off => 1,
            // XG's own files say 10 (1024) for no limit; gnubg ignores it.
            _ => 1 << 10,
        },
    }
}

/// What a variant shows beside the board: every tally, counter and
/// marker by the variant's names (markers' points in white's numbering),
/// and the typed view of the well-known names (tric-trac's) for clients
/// written for it; a variant without them leaves that view empty.
pub fn scoreboard(b: &Scoreboard, geometry: Geometry) -> pb::Scoreboard {
    let value = |name: &str, seat: Seat| b.tally(name).map_or(0, |v| v[seat.index()]);
    let count = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
    let typed_seat = |seat: Seat| pb::SeatTally {
        points: count(value("points", seat)),
        holes: count(value("holes", seat)),
        bredouille: value("bredouille", seat) != 0,
        rolls: count(value("rolls", seat)),
    };
    let typed = ["points", "holes", "bredouille", "rolls"]
        .iter()
        .any(|name| b.tally(name).is_some());
    let seats_with = |name: &str| {
        [Seat::White, Seat::Black]
            .into_iter()
            .filter(|&s| value(name, s) != 0)
            .collect::<Vec<_>>()
    };
    pb::Scoreboard {
        white: typed.then(|| typed_seat(Seat::White)),
        black: typed.then(|| typed_seat(Seat::Black)),
        raised_stake: seats_with("raised_stake").into_iter().map(seat).collect(),
        flag: seat_or_none(seats_with("flag").first().copied()),
        round: b.counter("round").map_or(0, count),
        last_roll: b
            .last_roll
            .iter()
            .map(|e| pb::ScoredPoints {
                kind: e.reason.clone(),
                beneficiary: seat(e.seat),
                ways: e.ways,
                points: e.points,
            })
            .collect(),
        tallies: b
            .tallies
            .iter()
            .map(|t| pb::Tally {
                name: t.name.clone(),
                white: t.seats[0],
                black: t.seats[1],
            })
            .collect(),
        counters: b
            .counters
            .iter()
            .map(|c| pb::Counter {
                name: c.name.clone(),
                value: c.value,
            })
            .collect(),
        markers: b
            .markers
            .iter()
            .map(|m| pb::Marker {
                name: m.name.clone(),
                seat: seat(m.seat),
                point: u32::from(geometry.for_white(m.seat, m.point)),
            })
            .collect(),
    }
}

/// An event for the API and the log: its kind, its seat, its fields.
///
/// The kind is the event's tag and the fields its JSON object without it.
/// An internally tagged enum writes its tag first (`{"event":"moved",`),
/// so the fields are what follows it: one serialisation, no JSON tree.
pub fn event(e: &Event) -> (String, Option<Seat>, String) {
    let json = serde_json::to_string(e).unwrap_or_default();
    let tagged = json.strip_prefix(r#"{"event":""#).and_then(|rest| {
        let (kind, fields) = rest.split_once('"')?;
        let detail = match fields.strip_prefix(',') {
            Some(fields) => format!("{{{fields}"),
            None if fields == "}" => "{}".to_string(),
            None => return None,
        };
        Some((kind.to_string(), detail))
    });
    let (kind, detail) = tagged.unwrap_or_else(|| untagged(&json));
    (kind, e.seat(), detail)
}

/// The kind and fields of an event's JSON, read as a tree (should serde
/// ever write the tag elsewhere than first).
fn untagged(json: &str) -> (String, String) {
    let mut value: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let kind = value
        .as_object_mut()
        .and_then(|o| o.remove("event"))
        .and_then(|k| k.as_str().map(str::to_string))
        .unwrap_or_default();
    (kind, value.to_string())
}

#[cfg(test)]
mod tests {
    use bg_engine::Dice;
    use bg_engine::game::{Decision, EndReason, GameResult};

    use super::*;

    /// One event of each kind, with a string that needs escaping.
    fn one_of_each() -> Vec<Event> {
        let dice = Dice::new(6, 1).unwrap();
        let (white, black) = (Seat::White, Seat::Black);
        vec![
            Event::GameStarted {
                game_number: 2,
                starter: black,
                opening: Some([6, 1]),
                crawford: true,
            },
            Event::OpeningTie {
                dice: [3, 3],
                cube: 2,
            },
            Event::Rolled { seat: white, dice },
            Event::Moved {
                seat: black,
                play: "bar/18 13/12".parse().unwrap(),
            },
            Event::Passed { seat: white, dice },
            Event::Scored {
                seat: black,
                points: 4,
                reason: "jan \"de récompense\"".into(),
                ways: 2,
            },
            Event::DecisionRequired {
                decision: Decision {
                    seat: white,
                    choices: vec!["go".into(), "stay".into()],
                    prompt: "Go on?".into(),
                },
            },
            Event::Decided {
                seat: white,
                choice: "go".into(),
            },
            Event::DoubleOffered {
                seat: black,
                value: 2,
            },
            Event::Beavered {
                seat: white,
                value: 4,
            },
            Event::DoubleTaken {
                seat: black,
                value: 4,
            },
            Event::DoubleDropped { seat: white },
            Event::ResignationOffered {
                seat: black,
                level: 2,
            },
            Event::ResignationDeclined { seat: white },
            Event::LastRoll { seat: black },
            Event::GameEnded {
                result: GameResult {
                    game_number: 1,
                    winner: Some(white),
                    reason: EndReason::Dropped,
                    kind: "single".into(),
                    level: 1,
                    cube: 2,
                    points: 2,
                },
                score: [2, 0],
            },
            Event::MatchEnded {
                winner: None,
                score: [3, 3],
            },
            Event::MatchAbandoned { seat: black },
        ]
    }

    /// An event's kind is its JSON's `event` tag, its seat the JSON's
    /// `seat` field, and its detail the JSON's other fields, for every kind.
    #[test]
    fn an_event_is_its_tag_its_seat_and_its_other_fields() {
        for e in one_of_each() {
            let mut whole = serde_json::to_value(&e).unwrap();
            let tag = whole.as_object_mut().unwrap().remove("event").unwrap();
            let seat_field = whole
                .get("seat")
                .map(|s| serde_json::from_value::<Seat>(s.clone()).unwrap());
            let (kind, seat, detail) = event(&e);
            assert_eq!(kind, tag.as_str().unwrap(), "{e:?}");
            assert_eq!(seat, seat_field, "{e:?}");
            let detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
            assert_eq!(detail, whole, "{e:?}");
        }
    }
}
