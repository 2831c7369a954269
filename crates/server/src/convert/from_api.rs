//! The API's messages read into the engine's types (requests): each
//! field checked, a bad one refused naming it, nothing changed.

use bg_api::v1 as pb;
use bg_engine::clock::{ClockSettings, OnTimeout};
use bg_engine::game::{BotSeat, CubeLimit, FirstMove, MatchSettings, ResignMode, ScoringLimit};
use bg_engine::{BAR, Board, Geometry, Move, OFF, Play, Seat};

use crate::error::ApiError;

/// The clock a match is created with (None: no clock), checked.
pub fn clock_settings(
    request: Option<&pb::MatchSettings>,
) -> Result<Option<ClockSettings>, ApiError> {
    let Some(c) = request.and_then(|s| s.clock.as_ref()) else {
        return Ok(None);
    };
    let settings = ClockSettings {
        reserve_ms: c.reserve_ms,
        reserve_per_point_ms: c.reserve_per_point_ms,
        delay_ms: c.delay_ms,
        increment_ms: c.increment_ms,
        turn_limit_ms: c.turn_limit_ms,
        on_timeout: match pb::OnTimeout::try_from(c.on_timeout) {
            Ok(pb::OnTimeout::Unspecified | pb::OnTimeout::Match) => OnTimeout::Match,
            Ok(pb::OnTimeout::Game) => OnTimeout::Game,
            Err(_) => {
                return Err(ApiError::invalid(
                    "settings.clock.on_timeout",
                    "unknown on_timeout",
                ));
            }
        },
    };
    settings.check().map_err(|e| {
        let field = match e.field {
            "clock" => "settings.clock",
            "reserve_ms" => "settings.clock.reserve_ms",
            "reserve_per_point_ms" => "settings.clock.reserve_per_point_ms",
            "delay_ms" => "settings.clock.delay_ms",
            "increment_ms" => "settings.clock.increment_ms",
            _ => "settings.clock.turn_limit_ms",
        };
        ApiError::invalid(field, format!("{field}: {}", e.message))
    })?;
    Ok(Some(settings))
}

/// The match settings of a request, with every default filled in.
pub fn settings(request: Option<&pb::MatchSettings>) -> Result<MatchSettings, ApiError> {
    let default = MatchSettings::default();
    let Some(s) = request else { return Ok(default) };
    let cube = match (s.cube_unlimited, s.cube_max) {
        (true, _) => CubeLimit::Unlimited,
        (false, Some(0)) => CubeLimit::Off,
        (false, Some(max)) => CubeLimit::Max(max),
        (false, None) => default.cube,
    };
    let settings = MatchSettings {
        match_length: s.match_length,
        money_games: s.money_games.unwrap_or(default.money_games),
        cube,
        dead_cube_check: s.dead_cube_check.unwrap_or(default.dead_cube_check),
        crawford: s.crawford.unwrap_or(default.crawford),
        jacoby: s.jacoby,
        beavers: s.beavers,
        auto_doubles: s.auto_doubles,
        scoring_limit: match pb::ScoringLimit::try_from(s.scoring_limit) {
            Ok(pb::ScoringLimit::Oin) => ScoringLimit::Oin,
            Ok(pb::ScoringLimit::Mars) => ScoringLimit::Mars,
            Ok(pb::ScoringLimit::Cox | pb::ScoringLimit::Unspecified) => ScoringLimit::Cox,
            Err(_) => {
                return Err(ApiError::invalid(
                    "settings.scoring_limit",
                    "unknown scoring limit",
                ));
            }
        },
        resignation: match pb::ResignationMode::try_from(s.resignation) {
            Ok(pb::ResignationMode::Offer) => ResignMode::Offer,
            Ok(_) => ResignMode::ByPosition,
            Err(_) => {
                return Err(ApiError::invalid(
                    "settings.resignation",
                    "unknown resignation mode",
                ));
            }
        },
        draw_on_last_roll: s.draw_on_last_roll,
        first_move: match pb::FirstMove::try_from(s.first_move) {
            Ok(pb::FirstMove::Unspecified) => None,
            Ok(pb::FirstMove::Loser) => Some(FirstMove::Loser),
            Ok(pb::FirstMove::Alternate) => Some(FirstMove::Alternate),
            Ok(pb::FirstMove::Winner) => Some(FirstMove::Winner),
            Ok(pb::FirstMove::OpeningRoll) => Some(FirstMove::OpeningRoll),
            Err(_) => {
                return Err(ApiError::invalid(
                    "settings.first_move",
                    "unknown first-move rule",
                ));
            }
        },
        auto_roll: s.auto_roll,
        // Set by NewGame from its request.
        bots: Vec::new(),
        hints: s.hints.unwrap_or(false),
    };
    settings
        .validate()
        .map_err(|e| ApiError::invalid("settings", e.to_string()))?;
    Ok(settings)
}

/// The seats a NewGame request has the service play, checked: a seat at
/// most once, a level the variant's computer player has (`levels`).
pub fn bots(request: &[pb::BotSeat], levels: &[String]) -> Result<Vec<BotSeat>, ApiError> {
    let mut bots: Vec<BotSeat> = Vec::new();
    for b in request {
        let seat = match pb::Seat::try_from(b.seat) {
            Ok(pb::Seat::White) => Seat::White,
            Ok(pb::Seat::Black) => Seat::Black,
            _ => {
                return Err(ApiError::invalid(
                    "bots.seat",
                    "name a seat: white or black",
                ));
            }
        };
        if bots.iter().any(|other| other.seat == seat) {
            return Err(ApiError::invalid("bots", format!("{seat} is named twice")));
        }
        if levels.is_empty() {
            return Err(ApiError::invalid(
                "bots",
                "this variant has no computer player on this server (ListVariants: Variant.bot_levels)",
            ));
        }
        if !b.level.is_empty() && !levels.contains(&b.level) {
            return Err(ApiError::invalid(
                "bots.level",
                format!(
                    "no level {} (levels: {})",
                    crate::error::quote(&b.level),
                    levels.join(", ")
                ),
            ));
        }
        bots.push(BotSeat {
            seat,
            level: b.level.clone(),
        });
    }
    if bots.len() == 2 {
        return Err(ApiError::invalid(
            "bots",
            "the service plays one seat at most: the other is a player's",
        ));
    }
    Ok(bots)
}

/// A start position sent by a client (white's numbering, as [`board`]
/// writes it), checked to be a possible position of a variant played with
/// `checkers` a side on a board of `geometry`, where the game is not over
/// yet.
pub fn start_board(b: &pb::Board, checkers: u8, geometry: Geometry) -> Result<Board, ApiError> {
    let invalid = |message: String| ApiError::invalid("start_board", message);
    if b.points.len() != 24 {
        return Err(invalid(format!(
            "points has {} entries, not 24",
            b.points.len()
        )));
    }
    let count = |n: u32, what: &str| {
        u8::try_from(n)
            .ok()
            .filter(|&n| n <= checkers)
            .ok_or_else(|| {
                invalid(format!(
                    "{what}: {n} checkers, more than the {checkers} a side of this variant"
                ))
            })
    };
    let mut board = Board::EMPTY;
    board.checkers[Seat::White.index()][usize::from(BAR)] = count(b.white_bar, "white_bar")?;
    board.checkers[Seat::Black.index()][usize::from(BAR)] = count(b.black_bar, "black_bar")?;
    board.checkers[Seat::White.index()][usize::from(OFF)] = count(b.white_off, "white_off")?;
    board.checkers[Seat::Black.index()][usize::from(OFF)] = count(b.black_off, "black_off")?;
    for (i, &n) in b.points.iter().enumerate() {
        let point = i as u8 + 1;
        let checkers = count(n.unsigned_abs(), &format!("point {point}"))?;
        if n > 0 {
            board.checkers[Seat::White.index()][usize::from(point)] = checkers;
        } else {
            board.checkers[Seat::Black.index()]
                [usize::from(geometry.for_white(Seat::Black, point))] = checkers;
        }
    }
    // A pinned checker lies under the pinner's: one more of its seat there.
    for pin in &b.pins {
        let point = u8::try_from(pin.point)
            .ok()
            .filter(|p| (1..=24).contains(p))
            .ok_or_else(|| invalid(format!("pin on point {}", pin.point)))?;
        let (seat, own_point) = match pb::Seat::try_from(pin.pinned) {
            Ok(pb::Seat::White) => (Seat::White, point),
            Ok(pb::Seat::Black) => (Seat::Black, geometry.for_white(Seat::Black, point)),
            _ => return Err(invalid(format!("pin on point {point}: no seat"))),
        };
        let slot = &mut board.checkers[seat.index()][usize::from(own_point)];
        *slot = slot.saturating_add(1);
        board.pinned[seat.index()] |= 1 << own_point;
    }
    board
        .validate_in(geometry, checkers)
        .map_err(|e| invalid(format!("not a possible position: {e}")))?;
    if let Some(done) = Seat::BOTH
        .into_iter()
        .find(|&seat| board.off(seat) == checkers)
    {
        return Err(invalid(format!(
            "{done} has borne off every checker: the game would be over"
        )));
    }
    Ok(board)
}

/// A play from a request: explicit moves, or notation.
pub fn play(moves: &[pb::CheckerMove], notation: &str) -> Result<Play, ApiError> {
    if moves.is_empty() {
        return notation
            .parse()
            .map_err(|e| ApiError::invalid("notation", format!("{e}")));
    }
    let mut play = Play::EMPTY;
    for m in moves {
        let (from, to) = (m.from, m.to);
        if from == u32::from(OFF) || from > u32::from(BAR) || to >= u32::from(BAR) {
            return Err(ApiError::invalid(
                "moves",
                format!(
                    "{from}/{to}: points are 1-24, the bar is 25 (from only), off is 0 (to only)"
                ),
            ));
        }
        if !play.try_push(Move::new(from as u8, to as u8)) {
            return Err(ApiError::invalid("moves", "a play has at most 4 moves"));
        }
    }
    Ok(play)
}
