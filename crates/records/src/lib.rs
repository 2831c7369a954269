//! Match records in the formats backgammon programs read, written from a
//! match's events (the engine's [`Event`]s, in the order they happened).
//!
//! - [`mat`]: the Jellyfish match text (`.mat`) as GNU Backgammon's
//!   `export match mat` writes it, the format every backgammon program
//!   imports (shared/research/architecture.md §2.4; the layout checked
//!   against gnubg 1.07's own files and its `import mat`).
//!
//! This crate owns the formats only. It must never read storage or the
//! network, nor know a variant's rules: what happened comes from the
//! events, and a move is written as the events give it.
//!
//! Seats: white is the first player (the left column of a .mat file,
//! gnubg's player 0), black the second, as in the service's Match IDs.

use bg_engine::game::Event;
use bg_engine::{Move, Seat};

/// The players' names and what the match is.
#[derive(Clone, Debug)]
pub struct MatchInfo<'a> {
    /// Points to win; 0 for a money session.
    pub match_length: u32,
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
            Event::GameStarted { game_number, .. } => {
                games.push(GameLines {
                    number: *game_number,
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
/// ` Wins 1 point`.
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
            out.push_str(format!("{number:>3}) {left:<28}{right}").trim_end());
            out.push('\n');
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
