//! A `Game` drawn as SVG: the board in white's numbering (13 to 24 along
//! the top, 12 to 1 along the bottom, white's home at the bottom right),
//! the checkers (five drawn a point at most, the count written on the
//! fifth beyond that), checkers pinned under others, the bar and the
//! checkers borne off, the dice, the cube and its owner, whose turn it is
//! or who won, the last play marked, and under the board the score, the
//! clocks and the variant's own tallies, counters and markers, by the
//! names and meanings it declares.
//!
//! It draws every variant from what the game and the variant declare
//! (`Game.geometry`, `Variant.tallies`, `Variant.counters`,
//! `Variant.markers`, `Game.scoreboard`), never by a variant's name.
//!
//! The bytes depend only on the two messages given: no clock is read
//! (clocks are drawn as of the game's `as_of`), maps are walked in key
//! order, and numbers are printed with fixed precision. So the same game
//! is always the same picture, and tests compare bytes.
//!
//! Each point, the bars and the trays carry their counts as data
//! attributes (`data-point`, `data-white`, `data-black`, `data-pinned`),
//! so a test or a page reads the board back from the picture.
//!
//! This crate only draws: it never reads a store, a plugin or the clock.

use std::fmt::Write as _;

use bg_api::v1 as pb;

/// The picture's size.
pub const WIDTH: u32 = 860;
pub const HEIGHT: u32 = 660;

const POINT_W: f64 = 50.0;
const BAR_W: f64 = 40.0;
const BOARD_X: f64 = 60.0;
const BOARD_Y: f64 = 90.0;
const BOARD_H: f64 = 420.0;
const POINT_H: f64 = 175.0;
const CHECKER_R: f64 = 20.0;
const TRAY_X: f64 = BOARD_X + 12.0 * POINT_W + BAR_W + 16.0;
const TRAY_W: f64 = 60.0;
/// Checkers drawn on a point; beyond, the count is written.
const SHOWN: i32 = 5;

const WHITE_FILL: &str = "#f5f0e1";
const BLACK_FILL: &str = "#2a2623";

/// The board and state of play of `game`, drawn with what `variant`
/// declares (its labels for tallies, counters and markers).
pub fn render(game: &pb::Game, variant: &pb::Variant) -> String {
    let mut svg = String::with_capacity(16 * 1024);
    let empty = pb::Board::default();
    let board = game.board.as_ref().unwrap_or(&empty);
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" data-game=\"{}\" data-variant=\"{}\" data-version=\"{}\" data-geometry=\"{}\" data-to-act=\"{}\">",
        escape(&game.game_id),
        escape(&game.variant),
        game.version,
        geometry_name(game.geometry()),
        seat_word(game.to_act),
    );
    let _ = writeln!(
        svg,
        "<title>{} {}, version {}</title>",
        escape(&game.variant),
        escape(&game.game_id),
        game.version
    );
    header(&mut svg, game);
    frame(&mut svg);
    let marked = last_play(game);
    for point in 1..=24u32 {
        draw_point(&mut svg, game, board, point, &marked);
    }
    bar(&mut svg, board, game.geometry());
    trays(&mut svg, board);
    dice(&mut svg, game);
    cube(&mut svg, game);
    footer(&mut svg, game, variant);
    svg.push_str("</svg>\n");
    svg
}

/// Text made safe for XML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn seat_word(seat: i32) -> &'static str {
    match pb::Seat::try_from(seat) {
        Ok(pb::Seat::White) => "white",
        Ok(pb::Seat::Black) => "black",
        _ => "none",
    }
}

fn geometry_name(g: pb::Geometry) -> &'static str {
    match g {
        pb::Geometry::SameWay => "same-way",
        _ => "opposed",
    }
}

/// A number with at most one decimal, as the picture prints positions.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// The top-left x of white's point `p`'s column.
fn column_x(p: u32) -> f64 {
    // Top: 13..=24 left to right; bottom: 12..=1 left to right. The bar
    // sits between the sixth and seventh columns.
    let col = if p >= 13 { p - 13 } else { 12 - p };
    let x = BOARD_X + f64::from(col) * POINT_W;
    if col >= 6 { x + BAR_W } else { x }
}

fn is_top(p: u32) -> bool {
    p >= 13
}

/// The title and what happens now.
fn header(svg: &mut String, game: &pb::Game) {
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"28\" font-size=\"20\" font-weight=\"bold\">{} · game {} · version {}</text>",
        n(BOARD_X),
        escape(&game.variant),
        game.game_number,
        game.version
    );
    let _ = writeln!(
        svg,
        "<text class=\"status\" x=\"{}\" y=\"56\" font-size=\"16\">{}</text>",
        n(BOARD_X),
        escape(&status(game))
    );
}

/// Whose turn it is, or who won, in words.
fn status(game: &pb::Game) -> String {
    let who = |s: i32| match pb::Seat::try_from(s) {
        Ok(pb::Seat::White) => "White",
        Ok(pb::Seat::Black) => "Black",
        _ => "Nobody",
    };
    match game.phase() {
        pb::Phase::MatchOver => match pb::Seat::try_from(game.match_winner) {
            Ok(pb::Seat::White | pb::Seat::Black) => {
                format!("Match over: {} wins", who(game.match_winner))
            }
            _ => "Match over: a tie".to_string(),
        },
        pb::Phase::Roll => format!("{} to roll", who(game.to_act)),
        pb::Phase::Move => match &game.dice {
            Some(d) => format!("{} to move {}-{}", who(game.to_act), d.die1, d.die2),
            None => format!("{} to move", who(game.to_act)),
        },
        pb::Phase::CubeOffered => format!("{} to take or pass the double", who(game.to_act)),
        pb::Phase::ResignationOffered => {
            format!("{} to accept or decline the resignation", who(game.to_act))
        }
        pb::Phase::Decision => format!("{} to decide", who(game.to_act)),
        pb::Phase::Unspecified => String::new(),
    }
}

fn frame(svg: &mut String) {
    let width = 12.0 * POINT_W + BAR_W;
    let _ = writeln!(
        svg,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#c9a86a\" stroke=\"#5b3a1a\" stroke-width=\"8\"/>",
        n(BOARD_X - 4.0),
        n(BOARD_Y - 4.0),
        n(width + 8.0),
        n(BOARD_H + 8.0)
    );
    let _ = writeln!(
        svg,
        "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#5b3a1a\"/>",
        n(BOARD_X + 6.0 * POINT_W),
        n(BOARD_Y),
        n(BAR_W),
        n(BOARD_H)
    );
}

/// A point, its checkers and its number.
fn draw_point(svg: &mut String, game: &pb::Game, board: &pb::Board, p: u32, marked: &Marked) {
    let count = board.points.get(p as usize - 1).copied().unwrap_or(0);
    let pinned = board
        .pins
        .iter()
        .find(|pin| pin.point == p)
        .map(|pin| pin.pinned);
    let (white, black) = if count >= 0 { (count, 0) } else { (0, -count) };
    let x = column_x(p);
    let top = is_top(p);
    let tip = if top {
        BOARD_Y + POINT_H
    } else {
        BOARD_Y + BOARD_H - POINT_H
    };
    let base = if top { BOARD_Y } else { BOARD_Y + BOARD_H };
    let fill = if p.is_multiple_of(2) == top {
        "#8b2e2e"
    } else {
        "#efe3c2"
    };
    let _ = write!(
        svg,
        "<g class=\"point\" data-point=\"{p}\" data-white=\"{white}\" data-black=\"{black}\""
    );
    if let Some(seat) = pinned {
        let _ = write!(svg, " data-pinned=\"{}\"", seat_word(seat));
    }
    svg.push_str(">\n");
    let outline = if marked.to.contains(&p) {
        " stroke=\"#e0a800\" stroke-width=\"4\""
    } else if marked.from.contains(&p) {
        " stroke=\"#e0a800\" stroke-width=\"2\" stroke-dasharray=\"6 4\""
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        "<polygon points=\"{},{} {},{} {},{}\" fill=\"{fill}\"{outline}/>",
        n(x),
        n(base),
        n(x + POINT_W),
        n(base),
        n(x + POINT_W / 2.0),
        n(tip)
    );
    let label_y = if top {
        BOARD_Y - 10.0
    } else {
        BOARD_Y + BOARD_H + 22.0
    };
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#333\">{p}</text>",
        n(x + POINT_W / 2.0),
        n(label_y)
    );
    let cx = x + POINT_W / 2.0;
    let step = 2.0 * CHECKER_R;
    let y_of = |i: i32| {
        let offset = CHECKER_R + 2.0 + f64::from(i) * step;
        if top { base + offset } else { base - offset }
    };
    let mut slot = 0;
    // A pinned checker sits at the bottom of its stack, under the pinner's.
    if let Some(seat) = pinned {
        checker(svg, cx, y_of(0), seat_fill(seat), Some("pinned"));
        slot = 1;
    }
    let (n_here, seat) = if white > 0 {
        (white, pb::Seat::White as i32)
    } else {
        (black, pb::Seat::Black as i32)
    };
    let drawn = n_here.min(SHOWN - slot);
    for i in 0..drawn {
        checker(svg, cx, y_of(slot + i), seat_fill(seat), None);
    }
    if n_here > drawn && drawn > 0 {
        count_on(svg, seat, n_here, cx, y_of(slot + drawn - 1), 18);
    }
    markers(svg, game, p, cx, top, y_of(drawn.max(1) + slot - 1));
    svg.push_str("</g>\n");
}

/// A count written on a checker of `seat`'s (dark ink on white's).
fn count_on(svg: &mut String, seat: i32, count: i32, cx: f64, cy: f64, size: u32) {
    let ink = if seat == pb::Seat::White as i32 {
        "#222"
    } else {
        "#f5f0e1"
    };
    let _ = writeln!(
        svg,
        "<text class=\"count\" x=\"{}\" y=\"{}\" font-size=\"{size}\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{ink}\">{count}</text>",
        n(cx),
        n(cy + 6.0)
    );
}

fn seat_fill(seat: i32) -> &'static str {
    if seat == pb::Seat::White as i32 {
        WHITE_FILL
    } else {
        BLACK_FILL
    }
}

fn checker(svg: &mut String, cx: f64, cy: f64, fill: &str, class: Option<&str>) {
    let class = class.map_or(String::new(), |c| format!(" class=\"{c}\""));
    let dash = if class.is_empty() {
        ""
    } else {
        " stroke-dasharray=\"4 3\""
    };
    let _ = writeln!(
        svg,
        "<circle{class} cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" stroke=\"#7a6a55\" stroke-width=\"2\"{dash}/>",
        n(cx),
        n(cy),
        n(CHECKER_R)
    );
}

/// The variant's marks on a point's checkers (each a ring and its name).
fn markers(svg: &mut String, game: &pb::Game, p: u32, cx: f64, top: bool, y: f64) {
    let Some(board) = &game.scoreboard else {
        return;
    };
    for m in board.markers.iter().filter(|m| m.point == p) {
        let _ = writeln!(
            svg,
            "<circle class=\"marker\" data-marker=\"{}\" data-seat=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"none\" stroke=\"#1f6fd1\" stroke-width=\"3\"/>",
            escape(&m.name),
            seat_word(m.seat),
            n(cx),
            n(y),
            n(CHECKER_R + 3.0)
        );
        let ty = if top {
            y + CHECKER_R + 16.0
        } else {
            y - CHECKER_R - 8.0
        };
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#1f6fd1\">{}</text>",
            n(cx),
            n(ty),
            escape(&m.name)
        );
    }
}

/// The checkers on the bar: white's below the middle, black's above.
fn bar(svg: &mut String, board: &pb::Board, geometry: pb::Geometry) {
    let cx = BOARD_X + 6.0 * POINT_W + BAR_W / 2.0;
    let _ = writeln!(
        svg,
        "<g class=\"bar\" data-white=\"{}\" data-black=\"{}\">",
        board.white_bar, board.black_bar
    );
    // Nothing is hit the same way round: the bar stays empty, unlabelled.
    if geometry != pb::Geometry::SameWay {
        for (count, seat, dir) in [
            (board.white_bar, pb::Seat::White as i32, 1.0),
            (board.black_bar, pb::Seat::Black as i32, -1.0),
        ] {
            if count == 0 {
                continue;
            }
            let cy = BOARD_Y + BOARD_H / 2.0 + dir * (CHECKER_R + 30.0);
            checker(svg, cx, cy, seat_fill(seat), None);
            count_on(svg, seat, count as i32, cx, cy, 16);
        }
    }
    svg.push_str("</g>\n");
}

/// The checkers borne off: black's tray at the top, white's at the
/// bottom, each as a stack of slices and the count.
fn trays(svg: &mut String, board: &pb::Board) {
    for (count, seat, top) in [
        (board.black_off, pb::Seat::Black as i32, true),
        (board.white_off, pb::Seat::White as i32, false),
    ] {
        let y = if top {
            BOARD_Y
        } else {
            BOARD_Y + BOARD_H - POINT_H
        };
        let _ = writeln!(
            svg,
            "<g class=\"off\" data-seat=\"{}\" data-off=\"{count}\">",
            seat_word(seat)
        );
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#e9dcc0\" stroke=\"#5b3a1a\" stroke-width=\"3\"/>",
            n(TRAY_X),
            n(y),
            n(TRAY_W),
            n(POINT_H)
        );
        for i in 0..count.min(15) {
            let sy = if top {
                y + 4.0 + f64::from(i) * 10.0
            } else {
                y + POINT_H - 12.0 - f64::from(i) * 10.0
            };
            let _ = writeln!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"8\" rx=\"2\" fill=\"{}\" stroke=\"#7a6a55\"/>",
                n(TRAY_X + 8.0),
                n(sy),
                n(TRAY_W - 16.0),
                seat_fill(seat)
            );
        }
        let ty = if top { y + POINT_H + 18.0 } else { y - 8.0 };
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">off {count}</text>",
            n(TRAY_X + TRAY_W / 2.0),
            n(ty)
        );
        svg.push_str("</g>\n");
    }
}

/// The dice of the turn, on the right half of the board.
fn dice(svg: &mut String, game: &pb::Game) {
    let Some(d) = &game.dice else {
        return;
    };
    if d.die1 == 0 && d.die2 == 0 {
        return;
    }
    let mover = if game.turn == pb::Seat::Black as i32 {
        BLACK_FILL
    } else {
        WHITE_FILL
    };
    let pip = if mover == BLACK_FILL {
        WHITE_FILL
    } else {
        BLACK_FILL
    };
    let _ = writeln!(
        svg,
        "<g class=\"dice\" data-dice=\"{}-{}\">",
        d.die1, d.die2
    );
    let y = BOARD_Y + BOARD_H / 2.0 - 22.0;
    for (i, die) in [d.die1, d.die2].into_iter().enumerate() {
        let x = BOARD_X + 6.0 * POINT_W + BAR_W + 110.0 + i as f64 * 60.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"44\" height=\"44\" rx=\"7\" fill=\"{mover}\" stroke=\"#333\" stroke-width=\"2\"/>",
            n(x),
            n(y)
        );
        for (px, py) in pips(die) {
            let _ = writeln!(
                svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{pip}\"/>",
                n(x + 22.0 + px * 12.0),
                n(y + 22.0 + py * 12.0)
            );
        }
    }
    svg.push_str("</g>\n");
}

/// Where a die's pips sit, in thirds of its face from its centre.
fn pips(die: u32) -> Vec<(f64, f64)> {
    let c = (0.0, 0.0);
    let (tl, tr, bl, br) = ((-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0));
    let (ml, mr) = ((-1.0, 0.0), (1.0, 0.0));
    match die {
        1 => vec![c],
        2 => vec![tl, br],
        3 => vec![tl, c, br],
        4 => vec![tl, tr, bl, br],
        5 => vec![tl, tr, c, bl, br],
        6 => vec![tl, tr, ml, mr, bl, br],
        _ => Vec::new(),
    }
}

/// The cube, left of the board: at the top when black owns it, at the
/// bottom for white, in the middle when nobody does.
fn cube(svg: &mut String, game: &pb::Game) {
    let Some(c) = &game.cube else {
        return;
    };
    if !c.in_play {
        return;
    }
    let y = match pb::Seat::try_from(c.owner) {
        Ok(pb::Seat::Black) => BOARD_Y + 8.0,
        Ok(pb::Seat::White) => BOARD_Y + BOARD_H - 48.0,
        _ => BOARD_Y + BOARD_H / 2.0 - 20.0,
    };
    let value = if c.value == 0 { 64 } else { c.value };
    let _ = writeln!(
        svg,
        "<g class=\"cube\" data-value=\"{}\" data-owner=\"{}\"><rect x=\"8\" y=\"{}\" width=\"40\" height=\"40\" rx=\"5\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"2\"/>\
         <text x=\"28\" y=\"{}\" font-size=\"18\" font-weight=\"bold\" text-anchor=\"middle\">{value}</text></g>",
        c.value,
        seat_word(c.owner),
        n(y),
        n(y + 27.0)
    );
}

/// The points of the last play (white's numbering): where its checkers
/// came from and went.
#[derive(Default)]
struct Marked {
    from: Vec<u32>,
    to: Vec<u32>,
}

/// The last play the game's last events hold ("moved", its notation in
/// the mover's numbering), turned into white's numbering by the game's
/// geometry.
fn last_play(game: &pb::Game) -> Marked {
    let mut marked = Marked::default();
    let Some(moved) = game.last_events.iter().rev().find(|e| e.kind == "moved") else {
        return marked;
    };
    let Ok(detail) = serde_json::from_str::<serde_json::Value>(&moved.detail_json) else {
        return marked;
    };
    let Some(play) = detail.get("play").and_then(|p| p.as_str()) else {
        return marked;
    };
    let black = moved.seat == pb::Seat::Black as i32;
    let to_white = |p: u32| -> u32 {
        match (black, game.geometry()) {
            (false, _) => p,
            (true, pb::Geometry::SameWay) => {
                if p <= 12 {
                    p + 12
                } else {
                    p - 12
                }
            }
            (true, _) => 25 - p,
        }
    };
    for step in play.split_whitespace() {
        // "13/7", "24/18*", "8/4(2)", "bar/20", "6/off", "13/7/1": the
        // first point is where it came from, the last where it went.
        let step = step.split('(').next().unwrap_or(step);
        let ends: Vec<Option<u32>> = step
            .split('/')
            .map(|s| {
                s.trim_end_matches('*')
                    .parse()
                    .ok()
                    .filter(|p| (1..=24).contains(p))
            })
            .collect();
        if let Some(Some(from)) = ends.first() {
            marked.from.push(to_white(*from));
        }
        if ends.len() > 1
            && let Some(Some(to)) = ends.last()
        {
            marked.to.push(to_white(*to));
        }
    }
    marked
}

/// Under the board: the score, the clocks, the last play, and the
/// variant's scoreboard by the names and meanings it declares.
fn footer(svg: &mut String, game: &pb::Game, variant: &pb::Variant) {
    let mut lines: Vec<String> = Vec::new();
    let score = game.score.unwrap_or_default();
    let length = game.settings.as_ref().map_or(0, |s| s.match_length);
    lines.push(if length > 0 {
        format!(
            "Score: white {} – black {} (match to {length})",
            score.white, score.black
        )
    } else {
        format!(
            "Score: white {} – black {} (money)",
            score.white, score.black
        )
    });
    if let Some(clock) = &game.clock {
        lines.push(format!(
            "Clock: white {} – black {}{}",
            clock_time(clock.white_ms),
            clock_time(clock.black_ms),
            match pb::Seat::try_from(clock.running) {
                Ok(pb::Seat::White) => " (white's running)",
                Ok(pb::Seat::Black) => " (black's running)",
                _ => "",
            }
        ));
    }
    if let Some(moved) = game.last_events.iter().rev().find(|e| e.kind == "moved")
        && let Ok(detail) = serde_json::from_str::<serde_json::Value>(&moved.detail_json)
        && let Some(play) = detail.get("play").and_then(|p| p.as_str())
    {
        lines.push(format!("Last play: {} {play}", seat_word(moved.seat)));
    }
    if let Some(board) = &game.scoreboard {
        let meaning = |labels: &[pb::Label], name: &str| {
            labels
                .iter()
                .find(|l| l.name == name)
                .map_or(String::new(), |l| format!(" ({})", l.description))
        };
        if let (Some(w), Some(b)) = (&board.white, &board.black)
            && (w.points + w.holes + b.points + b.holes > 0 || board.round > 0)
        {
            lines.push(format!(
                "Holes: white {}{} – black {}{}; points: white {} – black {}",
                w.holes,
                if w.bredouille { " (bredouille)" } else { "" },
                b.holes,
                if b.bredouille { " (bredouille)" } else { "" },
                w.points,
                b.points
            ));
        }
        let mut tallies: Vec<&pb::Tally> = board.tallies.iter().collect();
        tallies.sort_by(|a, b| a.name.cmp(&b.name));
        for t in tallies {
            lines.push(format!(
                "{}: white {} – black {}{}",
                t.name,
                t.white,
                t.black,
                meaning(&variant.tallies, &t.name)
            ));
        }
        let mut counters: Vec<&pb::Counter> = board.counters.iter().collect();
        counters.sort_by(|a, b| a.name.cmp(&b.name));
        for c in counters {
            lines.push(format!(
                "{}: {}{}",
                c.name,
                c.value,
                meaning(&variant.counters, &c.name)
            ));
        }
        for m in &board.markers {
            lines.push(format!(
                "{}: a {} checker on white's point {}{}",
                m.name,
                seat_word(m.seat),
                m.point,
                meaning(&variant.markers, &m.name)
            ));
        }
    }
    let _ = writeln!(svg, "<g class=\"footer\" font-size=\"14\">");
    for (i, line) in lines.iter().take(7).enumerate() {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            n(BOARD_X),
            n(BOARD_Y + BOARD_H + 48.0 + i as f64 * 18.0),
            escape(line)
        );
    }
    svg.push_str("</g>\n");
}

/// Milliseconds as a clock shows them: `1:05:07`, `13:45`, `0:09.5`
/// (bgctl writes them so too).
pub fn clock_time(ms: u64) -> String {
    let seconds = ms / 1000;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else if seconds < 10 {
        format!("{m}:{s:02}.{}", ms % 1000 / 100)
    } else {
        format!("{m}:{s:02}")
    }
}
