//! Moves and plays, and the usual `13/7 8/7` notation.

use std::fmt;
use std::str::FromStr;

use crate::board::{BAR, Board, OFF};

/// The most moves one play can hold (a double on the standard board).
pub const MAX_MOVES: usize = 4;

/// One checker moving from one point to another, in the mover's numbering:
/// `from` [`BAR`] (25) is an entry, `to` [`OFF`] (0) a bear-off.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    pub from: u8,
    pub to: u8,
}

impl Move {
    #[inline]
    pub const fn new(from: u8, to: u8) -> Move {
        Move { from, to }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_move(f, *self)
    }
}

/// `from/to`, as [`Move`]'s `Display` and a play's notation write it.
fn write_move(f: &mut impl fmt::Write, m: Move) -> fmt::Result {
    write_point(f, m.from)?;
    f.write_char('/')?;
    write_point(f, m.to)
}

/// A point's number, `bar` or `off`. Digits are written by hand: every
/// legal play of every answer is written in notation, and the formatting
/// machinery of `write!` was a noticeable part of an action's time.
fn write_point(f: &mut impl fmt::Write, point: u8) -> fmt::Result {
    match point {
        BAR => f.write_str("bar"),
        OFF => f.write_str("off"),
        p => write_number(f, p),
    }
}

fn write_number(f: &mut impl fmt::Write, n: u8) -> fmt::Result {
    if n >= 10 {
        write_number(f, n / 10)?;
    }
    f.write_char(char::from(b'0' + n % 10))
}

/// Everything one player does with one throw: up to four moves, in order.
/// The empty play is a pass.
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Play {
    moves: [Move; MAX_MOVES],
    len: u8,
}

impl Play {
    pub const EMPTY: Play = Play {
        moves: [Move { from: 0, to: 0 }; MAX_MOVES],
        len: 0,
    };

    /// Builds a play; `None` if there are more than [`MAX_MOVES`] moves.
    pub fn from_moves(moves: &[Move]) -> Option<Play> {
        let mut play = Play::EMPTY;
        for &m in moves {
            if !play.try_push(m) {
                return None;
            }
        }
        Some(play)
    }

    /// Appends a move; false (and nothing changed) when the play is full.
    #[inline]
    pub fn try_push(&mut self, m: Move) -> bool {
        if usize::from(self.len) >= MAX_MOVES {
            return false;
        }
        self.moves[usize::from(self.len)] = m;
        self.len += 1;
        true
    }

    /// Removes the last move (used by play searches that backtrack).
    #[inline]
    pub fn pop(&mut self) -> Option<Move> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.moves[usize::from(self.len)])
    }

    #[inline]
    pub fn moves(&self) -> &[Move] {
        &self.moves[..usize::from(self.len.min(MAX_MOVES as u8))]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.moves().len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for Play {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Play({self})")
    }
}

impl Play {
    /// The play in notation, as [`Display`](fmt::Display) writes it, into
    /// a string sized for it at once (every legal play of every answer is
    /// written so).
    pub fn notation(&self) -> String {
        // At most 4 moves of 6 characters ("bar/21") and 3 spaces.
        let mut text = String::with_capacity(4 * 7);
        // Writing into a String cannot fail.
        let _ = self.write_notation(&mut text);
        text
    }

    /// Moves in order, the same move repeated written once with its count
    /// (`24/20(2) 20/16(2)`), as players write doubles.
    fn write_notation(&self, f: &mut impl fmt::Write) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("pass");
        }
        let moves = self.moves();
        let mut i = 0;
        while i < moves.len() {
            let run = moves[i..].iter().take_while(|&&m| m == moves[i]).count();
            if i > 0 {
                f.write_char(' ')?;
            }
            write_move(f, moves[i])?;
            if run > 1 {
                f.write_char('(')?;
                write_number(f, run as u8)?;
                f.write_char(')')?;
            }
            i += run;
        }
        Ok(())
    }
}

impl fmt::Display for Play {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_notation(f)
    }
}

/// Why a play written in notation could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayParseError {
    #[error("`{0}` is not a point (1-24, bar or off)")]
    BadPoint(String),
    #[error("`{0}` is not a move: write it as from/to, e.g. 13/7")]
    BadMove(String),
    #[error("`{0}`: moves are written with a slash, from/to, e.g. 13/8")]
    Dash(String),
    #[error("`{0}`: a move is repeated at most {MAX_MOVES} times, e.g. 13/7(2)")]
    BadRepeat(String),
    #[error("a play has at most {MAX_MOVES} moves")]
    TooManyMoves,
}

impl FromStr for Play {
    type Err = PlayParseError;

    /// Reads the usual notation: moves separated by spaces or commas,
    /// `bar` and `off`, chains (`24/18/13`), repeats (`13/7(2)`), and hit
    /// or pin marks (`*`, `^`), which are ignored. `pass` or an empty
    /// string is the empty play.
    fn from_str(text: &str) -> Result<Play, PlayParseError> {
        let mut play = Play::EMPTY;
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("pass") {
            return Ok(play);
        }
        for token in text.split([' ', ',']).filter(|t| !t.is_empty()) {
            let (chain, repeat) = match token.split_once('(') {
                Some((chain, rest)) => {
                    let n: usize = rest
                        .strip_suffix(')')
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| PlayParseError::BadMove(token.to_string()))?;
                    if !(1..=MAX_MOVES).contains(&n) {
                        return Err(PlayParseError::BadRepeat(token.to_string()));
                    }
                    (chain, n)
                }
                None => (token, 1),
            };
            let points = chain
                .split('/')
                .map(parse_point)
                .collect::<Result<Vec<u8>, _>>()?;
            if points.len() < 2 {
                return Err(PlayParseError::BadMove(token.to_string()));
            }
            for _ in 0..repeat {
                for pair in points.windows(2) {
                    if !play.try_push(Move::new(pair[0], pair[1])) {
                        return Err(PlayParseError::TooManyMoves);
                    }
                }
            }
        }
        Ok(play)
    }
}

fn parse_point(text: &str) -> Result<u8, PlayParseError> {
    let bare = text.trim_end_matches(['*', '^']);
    if bare.contains('-') {
        return Err(PlayParseError::Dash(text.to_string()));
    }
    match bare.to_ascii_lowercase().as_str() {
        "bar" | "b" => Ok(BAR),
        "off" | "o" => Ok(OFF),
        digits => digits
            .parse::<u8>()
            .ok()
            .filter(|p| (1..=24).contains(p))
            .ok_or_else(|| PlayParseError::BadPoint(text.to_string())),
    }
}

/// A legal play together with the board it leads to. Two plays are the
/// same play when their results are equal, so variants list each result
/// once.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegalPlay {
    pub play: Play,
    pub result: Board,
}

/// Plays are stored and shown in notation (`13/7 8/7`).
impl serde::Serialize for Play {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Play {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Play, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: the usual mistakes in notation are told as such: a dash
    /// for a slash, a repeat count a turn cannot have.
    #[test]
    fn a_dash_or_an_impossible_repeat_is_told_as_such() {
        let dash = "13-8 6/5".parse::<Play>().unwrap_err();
        assert_eq!(dash, PlayParseError::Dash("13-8".into()));
        assert!(dash.to_string().contains("slash"), "{dash}");
        let repeat = "13/8(5)".parse::<Play>().unwrap_err();
        assert_eq!(repeat, PlayParseError::BadRepeat("13/8(5)".into()));
        assert!(repeat.to_string().contains("at most 4 times"), "{repeat}");
        assert!(matches!(
            "13/8(x)".parse::<Play>(),
            Err(PlayParseError::BadMove(_))
        ));
    }

    #[test]
    fn notation_round_trips() {
        let play: Play = "13/7 8/7".parse().unwrap();
        assert_eq!(play.moves(), &[Move::new(13, 7), Move::new(8, 7)]);
        assert_eq!(play.to_string(), "13/7 8/7");
        let play: Play = "bar/22* 6/off".parse().unwrap();
        assert_eq!(play.to_string(), "bar/22 6/off");
    }

    /// The hand-written digits say what `{}` would, for every point, the
    /// bar and off (and numbers past 25, which no board has, all the same).
    #[test]
    fn every_point_is_written_as_its_number() {
        let point = |p: u8| match p {
            BAR => "bar".to_string(),
            OFF => "off".to_string(),
            p => format!("{p}"),
        };
        for from in 0..=u8::MAX {
            for to in [0, 1, 9, 10, 19, 24, 25, 99, 100, 255] {
                let expected = format!("{}/{}", point(from), point(to));
                assert_eq!(Move::new(from, to).to_string(), expected);
                let play = Play::from_moves(&[Move::new(from, to); 3]).unwrap();
                assert_eq!(play.to_string(), format!("{expected}(3)"));
                assert_eq!(play.notation(), play.to_string());
            }
        }
    }

    #[test]
    fn chains_and_repeats_expand_to_single_moves() {
        let play: Play = "24/18/13".parse().unwrap();
        assert_eq!(play.to_string(), "24/18 18/13");
        let play: Play = "13/9(2) 6/2(2)".parse().unwrap();
        assert_eq!(play.len(), 4);
        assert_eq!(play.to_string(), "13/9(2) 6/2(2)");
        let play: Play = "24/20 24/20 24/20 24/20".parse().unwrap();
        assert_eq!(play.to_string(), "24/20(4)");
        assert_eq!("pass".parse::<Play>().unwrap(), Play::EMPTY);
    }

    #[test]
    fn bad_notation_is_refused() {
        assert!(matches!(
            "25/20".parse::<Play>(),
            Err(PlayParseError::BadPoint(_))
        ));
        assert!(matches!(
            "13".parse::<Play>(),
            Err(PlayParseError::BadMove(_))
        ));
        assert!(matches!(
            "13/9(3) 6/2(2)".parse::<Play>(),
            Err(PlayParseError::TooManyMoves)
        ));
    }
}
