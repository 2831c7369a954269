//! Match records in the formats backgammon programs read, written from a
//! match's events (the engine's [`Event`]s, in the order they happened).
//!
//! - [`mat`]: the Jellyfish match text (`.mat`) as GNU Backgammon's
//!   `export match mat` writes it, the format every backgammon program
//!   imports (shared/research/architecture.md §2.4; the layout checked
//!   against gnubg 1.07's own files and its `import mat`).
//! - [`sgf`]: backgammon SGF (`GM[6]`, red-bean.com/sgf/backgammon.html),
//!   gnubg's own format, as its `save match` writes it (checked with its
//!   `load match`).
//!
//! This crate owns the formats only. It must never read storage or the
//! network, nor know a variant's rules: what happened comes from the
//! events, and a move is written as the events give it.
//!
//! Seats: white is the first player (the left column of a .mat file,
//! gnubg's player 0), black the second, as in the service's Match IDs.

use bg_engine::game::{EndReason, Event};
use bg_engine::{Move, Seat};

/// The players' names and what the match is.
#[derive(Clone, Debug)]
pub struct MatchInfo<'a> {
    /// Points to win; 0 for a money session.
    pub match_length: u32,
    /// Whether the match plays the Crawford rule.
    pub crawford: bool,
    /// Nackgammon's setup (gnubg's `NackGammon` variation) rather than
    /// the standard one.
    pub nackgammon: bool,
    /// A money session played with the Jacoby rule (SGF says so; a .mat
    /// file cannot: its reader applies its own setting).
    pub jacoby: bool,
    /// White's name, then black's (no spaces: .mat files split on them).
    pub names: [&'a str; 2],
    /// `yyyy.mm.dd`, if known.
    pub date: Option<&'a str>,
}

/// Why a match cannot be written in a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError(pub String);

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RecordError {}

/// One player's entry in a game's list: a roll and its play, a cube
/// action, or the end of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cell {
    /// Dice as gnubg writes them (the higher first) and the moves made,
    /// none when the roll could not be played.
    Played {
        dice: (u8, u8),
        moves: Vec<Move>,
    },
    Doubles(u32),
    Beavers(u32),
    Takes,
    Drops,
    Wins(u32),
}

/// A game as a .mat file lists it.
#[derive(Clone, Debug, Default)]
struct GameLines {
    number: u32,
    /// The Crawford game.
    crawford: bool,
    /// The winner, the points and whether the loser resigned.
    result: Option<(Seat, u32, bool)>,
    /// The score when it began, white's first.
    score: [u32; 2],
    cells: Vec<(Seat, Cell)>,
    /// Ended by a result (a game still in play has none).
    ended: bool,
}

/// Reads the events into games: what each player did, in order.
fn games(events: &[Event]) -> Result<Vec<GameLines>, RecordError> {
    let mut games: Vec<GameLines> = Vec::new();
    let mut score = [0u32; 2];
    // The dice of the turn under way, until its play (or pass).
    let mut thrown: Option<(Seat, (u8, u8))> = None;
    for event in events {
        match event {
            Event::GameStarted {
                game_number,
                crawford,
                ..
            } => {
                games.push(GameLines {
                    number: *game_number,
                    crawford: *crawford,
                    score,
                    ..GameLines::default()
                });
                thrown = None;
            }
            Event::Rolled { seat, dice } => thrown = Some((*seat, (dice.d1, dice.d2))),
            Event::Moved { seat, play } => {
                let Some((_, dice)) = thrown.take().filter(|(by, _)| by == seat) else {
                    return Err(RecordError(format!(
                        "{} moved with no dice thrown",
                        name(*seat)
                    )));
                };
                let moves = play.moves().to_vec();
                current(&mut games)?
                    .cells
                    .push((*seat, played(dice, moves)));
            }
            Event::Passed { seat, dice } => {
                thrown = None;
                let cell = played((dice.d1, dice.d2), Vec::new());
                current(&mut games)?.cells.push((*seat, cell));
            }
            Event::DoubleOffered { seat, value } => {
                current(&mut games)?
                    .cells
                    .push((*seat, Cell::Doubles(*value)));
            }
            Event::Beavered { seat, value } => {
                current(&mut games)?
                    .cells
                    .push((*seat, Cell::Beavers(*value)));
            }
            Event::DoubleTaken { seat, .. } => {
                current(&mut games)?.cells.push((*seat, Cell::Takes));
            }
            Event::DoubleDropped { seat } => {
                current(&mut games)?.cells.push((*seat, Cell::Drops));
            }
            Event::GameEnded {
                result,
                score: after,
            } => {
                let Some(winner) = result.winner else {
                    return Err(RecordError(format!(
                        "game {} ended in a draw, which a .mat file cannot hold",
                        result.game_number
                    )));
                };
                let game = current(&mut games)?;
                game.cells.push((winner, Cell::Wins(result.points)));
                game.ended = true;
                // A game lost on time is written as resigned: neither
                // format has a word for it (the JSON record has the event).
                let conceded = matches!(result.reason, EndReason::Resigned | EndReason::Time);
                game.result = Some((winner, result.points, conceded));
                score = *after;
            }
            _ => {}
        }
    }
    Ok(games)
}

fn current(games: &mut [GameLines]) -> Result<&mut GameLines, RecordError> {
    games
        .last_mut()
        .ok_or_else(|| RecordError("an action before the first game began".into()))
}

fn played(dice: (u8, u8), moves: Vec<Move>) -> Cell {
    Cell::Played {
        dice: (dice.0.max(dice.1), dice.0.min(dice.1)),
        moves,
    }
}

fn name(seat: Seat) -> &'static str {
    match seat {
        Seat::White => "white",
        Seat::Black => "black",
    }
}

/// The column of a seat: white on the left (0), black on the right (1).
fn column(seat: Seat) -> usize {
    seat.index()
}

/// The text of a cell, as gnubg writes it: `31: 8/5 6/5` (25 the bar, 0
/// off, each move written out), ` Doubles => 2`, ` Takes`, ` Drops`,
/// ` Wins 1 point`. Hits are not marked `*` (the events do not say which
/// move hit; gnubg's reader works them out).
fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Played { dice, moves } => {
            let mut text = format!("{}{}:", dice.0, dice.1);
            for m in moves {
                text.push_str(&format!(" {}/{}", m.from, m.to));
            }
            text.push(' ');
            text
        }
        Cell::Doubles(value) => format!(" Doubles => {value}"),
        Cell::Beavers(value) => format!(" Beavers => {value}"),
        Cell::Takes => " Takes".to_string(),
        Cell::Drops => " Drops".to_string(),
        Cell::Wins(points) => format!(
            " Wins {points} point{}",
            if *points == 1 { "" } else { "s" }
        ),
    }
}

/// The match as a .mat file: a header, then each game with its players'
/// scores as it began, its numbered rows (white's entry from column 6,
/// black's from column 34) and its result. A game in play is written up
/// to its last action.
pub fn mat(info: &MatchInfo<'_>, events: &[Event]) -> Result<String, RecordError> {
    for name in info.names {
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(RecordError(format!(
                "player name {name:?}: a .mat name is one word"
            )));
        }
    }
    let mut out = String::new();
    if let Some(date) = info.date {
        out.push_str(&format!("; [EventDate \"{date}\"]\n"));
    }
    if info.nackgammon {
        // As gnubg writes it, and reads it to set its variation.
        out.push_str("; [Variation \"NackGammon\"]\n");
    }
    out.push_str(&format!("\n {} point match\n\n", info.match_length));
    for game in games(events)? {
        out.push_str(&format!(" Game {}\n", game.number));
        let left = format!(" {} : {}", info.names[0], game.score[0]);
        out.push_str(&format!(
            "{left:<32}{} : {}\n",
            info.names[1], game.score[1]
        ));
        let mut row: [Option<String>; 2] = [None, None];
        let mut number = 0;
        let mut flush = |row: &mut [Option<String>; 2], out: &mut String| {
            if row.iter().all(Option::is_none) {
                return;
            }
            number += 1;
            let left = row[0].take().unwrap_or_default();
            let right = row[1].take().unwrap_or_default();
            // Untrimmed, as gnubg writes it: the left cell padded to 28
            // even when the right one is empty (gnubg's reader takes the
            // right column at a fixed offset, and on a shorter line reads
            // what a previous line left there).
            out.push_str(&format!("{number:>3}) {left:<28}{right}\n"));
        };
        for (seat, cell) in &game.cells {
            let col = column(*seat);
            let text = cell_text(cell);
            if let Cell::Wins(_) = cell {
                if col == 1 && row[0].is_some() && row[1].is_none() {
                    // Beside the opponent's last entry (a drop), as gnubg
                    // writes it.
                    row[1] = Some(text);
                    flush(&mut row, &mut out);
                } else {
                    // A line of its own, in the winner's column.
                    flush(&mut row, &mut out);
                    let pad = if col == 0 { "" } else { &" ".repeat(28) };
                    out.push_str(&format!("     {pad}{}\n", text.trim_end()));
                }
                continue;
            }
            if row[col].is_some() || (col == 0 && row[1].is_some()) {
                flush(&mut row, &mut out);
            }
            row[col] = Some(text);
        }
        flush(&mut row, &mut out);
        out.push('\n');
    }
    Ok(out)
}

/// The SGF letter of a point in the mover's numbering: points `a`-`x`
/// are 1-24 counted from white's side (white's 1-point is `a`, black's
/// is `x`), `y` the bar, `z` off.
fn sgf_point(seat: Seat, point: u8) -> char {
    match point {
        25 => 'y',
        0 => 'z',
        p if seat == Seat::White => char::from(b'a' + p - 1),
        p => char::from(b'a' + 24 - p),
    }
}

/// The match as SGF: one game tree per game, each with the match's
/// length, the game's number (from 0) and the scores it began at, the
/// players, the Crawford rule, the result (`W+2`, `B+1R` for a
/// resignation) once it has one, and a node per action: `W[31hefe]`
/// (dice then each move's from and to), `B[66]` (no move possible),
/// `W[double]`, `B[take]`, `B[drop]`.
pub fn sgf(info: &MatchInfo<'_>, events: &[Event]) -> Result<String, RecordError> {
    let escape = |s: &str| s.replace('\\', "\\\\").replace(']', "\\]");
    let mut out = String::new();
    for game in games(events)? {
        out.push_str(&format!(
            "(;FF[4]GM[6]CA[UTF-8]AP[backgammon-service]MI[length:{}][game:{}][ws:{}][bs:{}]PW[{}]PB[{}]",
            info.match_length,
            game.number.saturating_sub(1),
            game.score[0],
            game.score[1],
            escape(info.names[0]),
            escape(info.names[1]),
        ));
        if let Some(date) = info.date {
            out.push_str(&format!("DT[{}]", date.replace('.', "-")));
        }
        // Rules, ':'-separated, as gnubg writes them.
        let mut rules = Vec::new();
        if info.match_length > 0 && info.crawford {
            rules.push("Crawford");
            if game.crawford {
                rules.push("CrawfordGame");
            }
        }
        if info.match_length == 0 && info.jacoby {
            rules.push("Jacoby");
        }
        if info.nackgammon {
            rules.push("Nackgammon");
        }
        if !rules.is_empty() {
            out.push_str(&format!("RU[{}]", rules.join(":")));
        }
        if let Some((winner, points, resigned)) = game.result {
            let side = if winner == Seat::White { 'W' } else { 'B' };
            out.push_str(&format!(
                "RE[{side}+{points}{}]",
                if resigned { "R" } else { "" }
            ));
        }
        out.push('\n');
        for (seat, cell) in &game.cells {
            let side = if *seat == Seat::White { 'W' } else { 'B' };
            let value = match cell {
                Cell::Played { dice, moves } => {
                    let mut v = format!("{}{}", dice.0, dice.1);
                    for m in moves {
                        v.push(sgf_point(*seat, m.from));
                        v.push(sgf_point(*seat, m.to));
                    }
                    v
                }
                Cell::Doubles(_) => "double".to_string(),
                Cell::Takes => "take".to_string(),
                Cell::Drops => "drop".to_string(),
                Cell::Beavers(_) => {
                    return Err(RecordError(
                        "a beaver has no SGF form gnubg reads: export the match as JSON".into(),
                    ));
                }
                // The result is the game's RE property.
                Cell::Wins(_) => continue,
            };
            out.push_str(&format!(";{side}[{value}]\n"));
        }
        out.push_str(")\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bg_engine::Dice;
    use bg_engine::game::GameResult;

    /// Black opens 3-1 (8/5 6/5), white plays 6-4 and doubles, black drops:
    /// gnubg's own export of this game (issue 17's research) reads so.
    fn a_dropped_double() -> Vec<Event> {
        let dice = |a, b| Dice::new(a, b).unwrap();
        vec![
            Event::GameStarted {
                game_number: 1,
                starter: Seat::Black,
                opening: Some([1, 3]),
                crawford: false,
            },
            Event::Rolled {
                seat: Seat::Black,
                dice: dice(3, 1),
            },
            Event::Moved {
                seat: Seat::Black,
                play: "8/5 6/5".parse().unwrap(),
            },
            Event::Rolled {
                seat: Seat::White,
                dice: dice(6, 4),
            },
            Event::Moved {
                seat: Seat::White,
                play: "24/18 13/9".parse().unwrap(),
            },
            Event::DoubleOffered {
                seat: Seat::Black,
                value: 2,
            },
            Event::DoubleDropped { seat: Seat::White },
            Event::GameEnded {
                result: GameResult {
                    game_number: 1,
                    winner: Some(Seat::Black),
                    reason: EndReason::Dropped,
                    kind: "single".into(),
                    level: 1,
                    cube: 1,
                    points: 1,
                },
                score: [0, 1],
            },
        ]
    }

    fn info() -> MatchInfo<'static> {
        MatchInfo {
            match_length: 3,
            crawford: true,
            nackgammon: false,
            jacoby: false,
            names: ["Alice", "Bob"],
            date: None,
        }
    }

    #[test]
    fn a_mat_file_has_gnubgs_columns_and_cube_lines() {
        let text = mat(&info(), &a_dropped_double()).unwrap();
        let expected = "\n 3 point match\n\n Game 1\n Alice : 0                      Bob : 0\n  \
            1)                             31: 8/5 6/5 \n  \
            2) 64: 24/18 13/9               Doubles => 2\n  \
            3)  Drops                       Wins 1 point\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn an_sgf_game_has_its_result_and_a_node_per_action() {
        let text = sgf(&info(), &a_dropped_double()).unwrap();
        assert!(
            text.starts_with(
                "(;FF[4]GM[6]CA[UTF-8]AP[backgammon-service]MI[length:3][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RU[Crawford]RE[B+1]\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(";B[31qtst]\n;W[64xrmi]\n;B[double]\n;W[drop]\n)\n"),
            "{text}"
        );
    }

    #[test]
    fn a_name_with_a_space_is_refused_for_a_mat_file() {
        let mut info = info();
        info.names = ["Ann Lee", "Bob"];
        assert!(mat(&info, &a_dropped_double()).is_err());
    }
}
