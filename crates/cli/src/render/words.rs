//! What happened, in the words players use: "white doubles to 2", "black
//! takes", "black resigns a gammon", hits marked as in `13/7*`.
//!
//! Only wording lives here: the events come from the server, and a hit is
//! read from the boards before and after a play, never from a rule of the
//! client's own.

use bg_api::v1 as pb;
use bg_engine::{BAR, Geometry, Move, OFF, Play, Seat};

use super::seat_name;

/// The events of one action, in order, joined with commas. `boards` are the
/// boards before and after the action, when the caller has both: every
/// move's hits are marked then, when the plays lead from one to the other
/// (see [`replay`]), or the one move's when there is one.
pub fn describe_action(
    events: &[pb::GameEvent],
    boards: Option<(&pb::Board, &pb::Board)>,
    geometry: Geometry,
) -> String {
    let moves = events.iter().filter(|e| e.kind == "moved").count();
    let mut replayed = boards
        .and_then(|(before, after)| replay(events, before, after, geometry))
        .map(Vec::into_iter);
    events
        .iter()
        .map(|e| match replayed.as_mut().filter(|_| e.kind == "moved") {
            Some(plays) => format!(
                "{} moves {}",
                seat_name(e.seat),
                plays.next().unwrap_or_default()
            ),
            None => describe_event(e, boards.filter(|_| moves == 1)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The plays of an action's events, each with its hits marked, when
/// playing them one after the other on `before` (a checker landing on a
/// lone opponent's sends it to the bar) gives `after`: the boards between
/// the plays, which the server does not send (the computer's reply comes
/// within the action it answers), are read so. `None` when the plays do
/// not lead there: a game ended within the action (`after` is the next
/// game's), or a variant captures another way (Plakoto pins); the server's
/// boards are the truth, the replay only tells which moves hit.
fn replay(
    events: &[pb::GameEvent],
    before: &pb::Board,
    after: &pb::Board,
    geometry: Geometry,
) -> Option<Vec<String>> {
    let mut board = before.clone();
    let mut plays = Vec::new();
    for event in events.iter().filter(|e| e.kind == "moved") {
        let detail: serde_json::Value = serde_json::from_str(&event.detail_json).ok()?;
        let notation = detail["play"].as_str()?;
        let play = notation.parse::<Play>().ok()?;
        let seat = match pb::Seat::try_from(event.seat) {
            Ok(pb::Seat::White) => Seat::White,
            Ok(pb::Seat::Black) => Seat::Black,
            _ => return None,
        };
        let hits = play
            .moves()
            .iter()
            .map(|&m| step(&mut board, seat, m, geometry))
            .collect::<Option<Vec<bool>>>()?;
        plays.push(if hits.contains(&true) {
            written(play.moves(), &hits)
        } else {
            notation.to_string()
        });
    }
    (board == *after).then_some(plays)
}

/// One checker of `seat` moved on `board` (white's numbering, black's
/// checkers negative); whether it hit. `None` when the board does not
/// allow the move: no checker to move, or a point the opponent holds.
fn step(board: &mut pb::Board, seat: Seat, m: Move, geometry: Geometry) -> Option<bool> {
    let white = seat == Seat::White;
    let sign = if white { 1 } else { -1 };
    let index = |point: u8| {
        (1..=24)
            .contains(&point)
            .then(|| usize::from(geometry.for_white(seat, point)) - 1)
    };
    if m.from == BAR {
        let bar = if white {
            &mut board.white_bar
        } else {
            &mut board.black_bar
        };
        *bar = bar.checked_sub(1)?;
    } else {
        let from = board.points.get_mut(index(m.from)?)?;
        if *from * sign <= 0 {
            return None;
        }
        *from -= sign;
    }
    if m.to == OFF {
        if white {
            board.white_off += 1;
        } else {
            board.black_off += 1;
        }
        return Some(false);
    }
    let to = board.points.get_mut(index(m.to)?)?;
    match *to * sign {
        -1 => {
            *to = sign;
            if white {
                board.black_bar += 1;
            } else {
                board.white_bar += 1;
            }
            Some(true)
        }
        held if held < -1 => None,
        _ => {
            *to += sign;
            Some(false)
        }
    }
}

/// One event. `boards`: before and after its action, to mark a move's hits.
pub fn describe_event(event: &pb::GameEvent, boards: Option<(&pb::Board, &pb::Board)>) -> String {
    let detail: serde_json::Value = serde_json::from_str(&event.detail_json).unwrap_or_default();
    let seat = seat_name(event.seat);
    let dice = |v: &serde_json::Value| match (v["d1"].as_u64(), v["d2"].as_u64()) {
        (Some(d1), Some(d2)) => format!("{d1}-{d2}"),
        _ => "?".to_string(),
    };
    let value = detail["value"].as_u64().unwrap_or_default();
    match event.kind.as_str() {
        "game_started" => game_started(&detail),
        "opening_tie" => {
            let thrown = match (detail["dice"][0].as_u64(), detail["dice"][1].as_u64()) {
                (Some(w), Some(b)) => format!(" (white {w}, black {b})"),
                _ => String::new(),
            };
            match detail["cube"].as_u64() {
                Some(cube) if cube > 1 => {
                    format!("the opening throw ties{thrown}: the cube turns to {cube}, throw again")
                }
                _ => format!("the opening throw ties{thrown}: throw again"),
            }
        }
        "rolled" => format!("{seat} rolls {}", dice(&detail["dice"])),
        "moved" => {
            let play = detail["play"].as_str().unwrap_or("?");
            let play = match boards {
                Some((before, after)) => mark_hits(play, event.seat, before, after),
                None => play.to_string(),
            };
            format!("{seat} moves {play}")
        }
        "passed" => format!(
            "{seat} cannot move ({}): the turn passes",
            dice(&detail["dice"])
        ),
        "scored" => {
            let ways = match detail["ways"].as_u64() {
                Some(w) if w > 1 => format!(", {w} ways"),
                _ => String::new(),
            };
            format!(
                "{seat} scores {} ({}{ways})",
                detail["points"].as_u64().unwrap_or_default(),
                detail["reason"].as_str().unwrap_or("?")
            )
        }
        "decision_required" => {
            let decision = &detail["decision"];
            let choices: Vec<&str> = decision["choices"]
                .as_array()
                .map(|c| c.iter().filter_map(|c| c.as_str()).collect())
                .unwrap_or_default();
            format!(
                "{} to decide: {} ({})",
                decision["seat"].as_str().unwrap_or(seat),
                decision["prompt"].as_str().unwrap_or("?"),
                choices.join(" or ")
            )
        }
        "decided" => format!(
            "{seat} chooses {}",
            detail["choice"].as_str().unwrap_or("?")
        ),
        "double_offered" => format!("{seat} doubles to {value}"),
        "beavered" => format!("{seat} beavers: the cube at {value}"),
        "double_taken" => format!("{seat} takes"),
        "double_dropped" => format!("{seat} drops"),
        "resignation_offered" => format!(
            "{seat} offers to resign {}",
            level_words(detail["level"].as_u64().unwrap_or_default())
        ),
        "resignation_declined" => format!("{seat} declines the resignation"),
        "match_abandoned" => format!("{seat} abandons the match"),
        "last_roll" => format!("{seat} has one last roll to draw the game"),
        "game_ended" => game_ended(&detail["result"]),
        "match_ended" => {
            let score = match (detail["score"][0].as_u64(), detail["score"][1].as_u64()) {
                (Some(w), Some(b)) => format!(" (white {w}, black {b})"),
                _ => String::new(),
            };
            match detail["winner"].as_str() {
                Some(winner) => format!("{winner} wins the match{score}"),
                None => format!("the match is drawn{score}"),
            }
        }
        other => format!("{seat} {}", other.replace('_', " ")),
    }
}

fn game_started(detail: &serde_json::Value) -> String {
    let number = detail["game_number"].as_u64().unwrap_or_default();
    let starter = detail["starter"].as_str().unwrap_or("?");
    let crawford = if detail["crawford"].as_bool() == Some(true) {
        " (the Crawford game)"
    } else {
        ""
    };
    match (detail["opening"][0].as_u64(), detail["opening"][1].as_u64()) {
        (Some(white), Some(black)) => format!(
            "game {number} begins{crawford}: {starter} wins the opening throw (white {white}, black {black})"
        ),
        _ => format!("game {number} begins{crawford}: {starter} plays first"),
    }
}

fn game_ended(result: &serde_json::Value) -> String {
    let points = result["points"].as_u64().unwrap_or_default();
    let points = format!("{points} point{}", if points == 1 { "" } else { "s" });
    let kind = result["kind"].as_str().unwrap_or("?");
    let Some(winner) = result["winner"].as_str() else {
        return "the game is drawn".to_string();
    };
    let loser = if winner == "white" { "black" } else { "white" };
    match result["reason"].as_str() {
        Some("resigned") => format!("{loser} resigns {}: {winner} wins {points}", a_win(kind)),
        Some("dropped") => format!("{winner} wins {points}"),
        _ => format!("{winner} wins {}: {points}", a_win(kind)),
    }
}

/// A resignation level as players say it.
pub fn level_words(level: u64) -> &'static str {
    match level {
        1 => "a single game",
        2 => "a gammon",
        3 => "a backgammon",
        _ => "(an unknown level)",
    }
}

/// A variant's name of a win, with its article: "a single game", "a gammon".
fn a_win(kind: &str) -> String {
    match kind {
        "single" => "a single game".to_string(),
        kind => format!("a {kind}"),
    }
}

/// `play` (the mover's numbering) with each hit marked `*`, as in `13/7*`.
///
/// The hits are read from the boards: the opponent's bar gained as many
/// checkers as the play has moves landing, first, on a point where the
/// opponent had a single checker. When the two counts differ (a variant
/// that captures another way, or pins as Plakoto does), nothing is marked.
pub fn mark_hits(play: &str, mover: i32, before: &pb::Board, after: &pb::Board) -> String {
    let Ok(parsed) = play.parse::<Play>() else {
        return play.to_string();
    };
    let white = mover == pb::Seat::White as i32;
    let opponent_bar = |b: &pb::Board| {
        if white { b.black_bar } else { b.white_bar }
    };
    let gained = opponent_bar(after).saturating_sub(opponent_bar(before));
    if gained == 0 {
        return play.to_string();
    }
    // The opponent's checkers on a point given in the mover's numbering.
    let opponent_on = |point: u8| {
        let index = if white { point } else { 25 - point };
        let count = before
            .points
            .get(usize::from(index).wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        if white { -count } else { count }
    };
    let mut blots: Vec<u8> = (1..=24).filter(|&p| opponent_on(p) == 1).collect();
    let hits: Vec<bool> = parsed
        .moves()
        .iter()
        .map(|m| match blots.iter().position(|&p| p == m.to) {
            Some(i) => {
                blots.remove(i);
                true
            }
            None => false,
        })
        .collect();
    if hits.iter().filter(|&&h| h).count() != gained as usize {
        return play.to_string();
    }
    written(parsed.moves(), &hits)
}

/// Moves in order, hits marked, the same move repeated written once with
/// its count (`13/9*(2)`, as gnubg writes it).
fn written(moves: &[Move], hits: &[bool]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < moves.len() {
        let mut n = 1;
        while i + n < moves.len() && moves[i + n] == moves[i] {
            n += 1;
        }
        let hit = hits[i..i + n].iter().any(|&h| h);
        let mut part = format!("{}{}", moves[i], if hit { "*" } else { "" });
        if n > 1 {
            part.push_str(&format!("({n})"));
        }
        parts.push(part);
        i += n;
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(points: &[(usize, i32)], white_bar: u32, black_bar: u32) -> pb::Board {
        let mut b = pb::Board {
            points: vec![0; 24],
            white_bar,
            black_bar,
            ..Default::default()
        };
        for &(p, n) in points {
            b.points[p - 1] = n;
        }
        b
    }

    #[test]
    fn a_hit_is_marked_on_the_move_that_lands_first_on_the_blot() {
        // A black blot on white's 7: white plays 13/7 8/7, the first hits.
        let before = board(&[(13, 5), (8, 3), (7, -1)], 0, 0);
        let after = board(&[(13, 4), (8, 2), (7, 2)], 0, 1);
        let white = pb::Seat::White as i32;
        assert_eq!(mark_hits("13/7 8/7", white, &before, &after), "13/7* 8/7");
    }

    #[test]
    fn black_hits_are_read_in_black_numbering() {
        // A white blot on white's 20 is black's 5: black plays 13/5 6/5.
        let before = board(&[(20, 1), (12, -5), (19, -5)], 0, 0);
        let after = board(&[(20, -2), (12, -4), (19, -4)], 1, 0);
        let black = pb::Seat::Black as i32;
        assert_eq!(mark_hits("13/5 6/5", black, &before, &after), "13/5* 6/5");
    }

    #[test]
    fn two_hits_with_one_move_repeated_are_written_once_with_the_mark() {
        let before = board(&[(13, 5), (9, -1), (5, -1)], 0, 0);
        let after = board(&[(13, 3), (9, 1), (5, 1)], 0, 2);
        let white = pb::Seat::White as i32;
        assert_eq!(
            mark_hits("13/9 9/5 13/9 9/5", white, &before, &after),
            "13/9* 9/5* 13/9 9/5"
        );
        let before = board(&[(13, 5), (9, -1)], 0, 0);
        let after = board(&[(13, 3), (9, 2)], 0, 1);
        assert_eq!(mark_hits("13/9(2)", white, &before, &after), "13/9*(2)");
    }

    #[test]
    fn no_checker_sent_to_the_bar_marks_nothing() {
        // Plakoto pins a blot: the opponent's bar stays empty.
        let before = board(&[(13, 5), (7, -1)], 0, 0);
        let after = board(&[(13, 4), (7, 1)], 0, 0);
        let white = pb::Seat::White as i32;
        assert_eq!(mark_hits("13/7", white, &before, &after), "13/7");
    }

    #[test]
    fn a_resignation_and_a_double_are_told_as_players_say_them() {
        let event = |kind: &str, seat: pb::Seat, detail: &str| pb::GameEvent {
            kind: kind.into(),
            seat: seat as i32,
            detail_json: detail.into(),
        };
        assert_eq!(
            describe_event(
                &event(
                    "double_offered",
                    pb::Seat::White,
                    r#"{"seat":"white","value":2}"#
                ),
                None
            ),
            "white doubles to 2"
        );
        assert_eq!(
            describe_event(
                &event(
                    "double_taken",
                    pb::Seat::Black,
                    r#"{"seat":"black","value":2}"#
                ),
                None
            ),
            "black takes"
        );
        let ended = r#"{"result":{"game_number":1,"winner":"white","reason":"resigned","kind":"gammon","level":2,"cube":2,"points":4},"score":[4,0]}"#;
        assert_eq!(
            describe_event(&event("game_ended", pb::Seat::Unspecified, ended), None),
            "black resigns a gammon: white wins 4 points"
        );
    }

    /// White's move and the computer's reply in one answer: both plays'
    /// hits are marked, the board between them read by playing white's
    /// move on the board before, and confirmed by the board after.
    #[test]
    fn a_move_and_the_reply_within_its_answer_both_carry_their_hits() {
        let event = |kind: &str, seat: pb::Seat, detail: &str| pb::GameEvent {
            kind: kind.into(),
            seat: seat as i32,
            detail_json: detail.into(),
        };
        let events = [
            event(
                "moved",
                pb::Seat::White,
                r#"{"seat":"white","play":"13/7 8/7"}"#,
            ),
            event(
                "rolled",
                pb::Seat::Black,
                r#"{"seat":"black","dice":{"d1":4,"d2":3}}"#,
            ),
            // Black enters on its 22 (white's 3), hitting white's blot.
            event(
                "moved",
                pb::Seat::Black,
                r#"{"seat":"black","play":"bar/22 13/9"}"#,
            ),
        ];
        let before = board(&[(13, 5), (8, 3), (3, 1), (7, -1), (12, -5)], 0, 0);
        let after = board(
            &[(13, 4), (8, 2), (7, 2), (3, -1), (12, -4), (16, -1)],
            1,
            0,
        );
        assert_eq!(
            describe_action(&events, Some((&before, &after)), Geometry::Opposed),
            "white moves 13/7* 8/7, black rolls 4-3, black moves bar/22* 13/9"
        );
        // Boards the plays do not lead to (a variant that pins instead of
        // hitting): nothing is marked.
        let pinned = board(
            &[(13, 4), (8, 2), (7, 2), (3, -1), (12, -4), (16, -1)],
            0,
            0,
        );
        assert_eq!(
            describe_action(&events, Some((&before, &pinned)), Geometry::Opposed),
            "white moves 13/7 8/7, black rolls 4-3, black moves bar/22 13/9"
        );
        // Without the boards, as `show` tells it.
        assert_eq!(
            describe_action(&events, None, Geometry::Opposed),
            "white moves 13/7 8/7, black rolls 4-3, black moves bar/22 13/9"
        );
    }
}
