//! The board and the state of play, drawn for a terminal: the points in
//! white's numbering, the bar and the checkers off, the score and the
//! cube, who is to act, the last action in players' words, the IDs, the
//! clocks, the verifiable dice and the legal plays.

use bg_api::v1 as pb;

use super::clock::render_clock;
use super::scoreboard::render_scoreboard;
use super::{geometry, phase_name, seat_name, words};

/// The board and the state of play, for a terminal.
pub fn render(game: &pb::Game) -> String {
    render_after(None, game)
}

/// The game after an action, its last action told with the board before
/// it (`before`) when the caller has it, so that hits are marked.
pub fn render_after(before: Option<&pb::Board>, game: &pb::Game) -> String {
    let mut out = String::new();
    let cell = |v: i32| match v {
        0 => "  . ".to_string(),
        v if v > 0 => format!("{v:>2}X "),
        v => format!("{:>2}O ", -v),
    };
    let points = game
        .board
        .as_ref()
        .map(|b| b.points.clone())
        .unwrap_or_default();
    let at = |p: usize| points.get(p - 1).copied().unwrap_or(0);
    out.push_str(&format!(
        "game {}  {} {}  version {}  game #{}\n",
        game.game_id, game.variant, game.variant_version, game.version, game.game_number
    ));
    out.push_str(" 13  14  15  16  17  18 | 19  20  21  22  23  24\n");
    let top: String = (13..=18).map(|p| cell(at(p))).collect::<String>()
        + "|"
        + &(19..=24).map(|p| cell(at(p))).collect::<String>();
    out.push_str(&top);
    out.push('\n');
    let bottom: String = (7..=12).rev().map(|p| cell(at(p))).collect::<String>()
        + "|"
        + &(1..=6).rev().map(|p| cell(at(p))).collect::<String>();
    out.push_str(&bottom);
    out.push('\n');
    out.push_str(" 12  11  10   9   8   7 |  6   5   4   3   2   1\n");
    if let Some(b) = &game.board {
        let same_way = game.geometry() == pb::Geometry::SameWay;
        let black_moves = if same_way {
            // Both the same way round: black from white's 12 down to 1,
            // then from 24 down to 13.
            "O = black (moves 12 -> 1, then 24 -> 13: the same way round)"
        } else {
            "O = black (moves 1 -> 24)"
        };
        out.push_str(&format!("X = white (moves 24 -> 1)   {black_moves}\n"));
        // Nothing is hit the same way round: no bar to show.
        if !same_way {
            out.push_str(&format!("bar: X {} O {}   ", b.white_bar, b.black_bar));
        }
        out.push_str(&format!("off: X {} O {}\n", b.white_off, b.black_off));
        for pin in &b.pins {
            out.push_str(&format!(
                "pinned: a {} checker on white's point {}\n",
                seat_name(pin.pinned),
                pin.point
            ));
        }
    }
    for bot in &game.bots {
        out.push_str(&format!(
            "{} is played by the service's computer player ({})\n",
            seat_name(bot.seat),
            if bot.level.is_empty() {
                "its strongest level"
            } else {
                &bot.level
            }
        ));
    }
    if game.variant == "trictrac" {
        out.push_str(
            "tric-trac: white's talon is its 24, black's its 1 (white's numbering); corners: white's 13, black's 12\n",
        );
    }
    if let Some(board) = &game.scoreboard {
        out.push_str(&render_scoreboard(board));
    }
    let score = game.score.unwrap_or_default();
    let cube = game.cube.unwrap_or_default();
    let cube = match (cube.in_play, seat_name(cube.owner)) {
        (false, _) if cube.value == 1 => "none in this game".to_string(),
        (_, "-") => format!("{} (centred)", cube.value),
        (_, owner) => format!("{} ({owner})", cube.value),
    };
    out.push_str(&format!(
        "score: white {} black {}   cube: {cube}\n",
        score.white, score.black,
    ));
    out.push_str(&format!(
        "turn: {}   phase: {}   to act: {}",
        seat_name(game.turn),
        phase_name(game.phase),
        seat_name(game.to_act)
    ));
    if let Some(d) = game.dice {
        out.push_str(&format!("   dice: {}-{}", d.die1, d.die2));
    }
    out.push('\n');
    if !game.last_events.is_empty() {
        let boards = before.zip(game.board.as_ref());
        out.push_str(&format!(
            "last action: {}\n",
            words::describe_action(&game.last_events, boards, geometry(game))
        ));
    }
    if !game.position_id.is_empty() {
        out.push_str(&format!("position id: {}\n", game.position_id));
    }
    if !game.match_id.is_empty() {
        out.push_str(&format!(
            "match id: {}   gnubg id: {}:{}\n",
            game.match_id, game.position_id, game.match_id
        ));
    }
    if !game.xgid.is_empty() {
        out.push_str(&format!("xgid: {}\n", game.xgid));
    }
    if let Some(clock) = &game.clock {
        out.push_str(&render_clock(clock, std::time::SystemTime::now()));
    }
    if let Some(v) = &game.verifiable_dice {
        out.push_str(&render_verifiable_dice(v, &game.game_id));
    }
    if let Some(d) = &game.decision {
        out.push_str(&format!(
            "decision for {}: {} [{}]\n",
            seat_name(d.seat),
            d.prompt,
            d.choices.join(" | ")
        ));
    }
    if !game.legal_plays.is_empty() {
        let plays: Vec<&str> = game
            .legal_plays
            .iter()
            .map(|p| p.notation.as_str())
            .collect();
        out.push_str(&format!(
            "legal plays ({}): {}\n",
            plays.len(),
            plays.join(", ")
        ));
    }
    if let Some(r) = game.results.last() {
        out.push_str(&format!(
            "last game: {} won {} point(s) ({}, {})\n",
            seat_name(r.winner),
            r.points,
            r.kind,
            r.reason
        ));
    }
    if game.phase == pb::Phase::MatchOver as i32 {
        if game.match_winner == pb::Seat::Unspecified as i32 {
            out.push_str("match over: no winner (the score is tied)\n");
        } else {
            out.push_str(&format!(
                "match over: {} wins\n",
                seat_name(game.match_winner)
            ));
        }
    }
    out
}

/// A match's verifiable dice: the commitment, the seats' seeds, and the
/// server seed once revealed.
fn render_verifiable_dice(v: &pb::VerifiableDice, game_id: &str) -> String {
    let seed = |seed: &str, from: u64| match (seed, from) {
        ("", _) => "none".to_string(),
        (seed, 0) => format!("{seed:?}"),
        (seed, from) => format!("{seed:?} (from die {from})"),
    };
    let mut out = format!(
        "verifiable dice: {} thrown, commitment {}\n  seeds: white {}, black {}\n",
        v.dice_thrown,
        v.commitment,
        seed(&v.white_seed, v.white_seed_from),
        seed(&v.black_seed, v.black_seed_from)
    );
    if !v.server_seed.is_empty() {
        out.push_str(&format!(
            "  server seed (revealed): {}\n  check every die: bgctl verify {game_id}\n",
            v.server_seed
        ));
    }
    out
}

#[cfg(test)]
mod board_tests {
    use super::*;

    /// Long nardy's start: white's head on its 24 (top right), black's on
    /// white's 12 (bottom left), and the direction of each side said.
    #[test]
    fn a_same_way_board_says_each_sides_direction() {
        let mut points = vec![0; 24];
        points[23] = 15;
        points[11] = -15;
        let game = pb::Game {
            variant: "long_nardy".into(),
            board: Some(pb::Board {
                points,
                ..Default::default()
            }),
            geometry: pb::Geometry::SameWay as i32,
            ..Default::default()
        };
        let text = render(&game);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].ends_with("15X "), "{text}");
        assert!(lines[3].starts_with("15O "), "{text}");
        assert!(text.contains("moves 12 -> 1, then 24 -> 13"), "{text}");
        let opposed = render(&pb::Game {
            geometry: pb::Geometry::Opposed as i32,
            ..game
        });
        assert!(opposed.contains("O = black (moves 1 -> 24)"), "{opposed}");
    }
}
