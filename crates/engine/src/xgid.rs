//! eXtreme Gammon's XGID: a position and the state of play in one line,
//! `XGID=POSITION:CUBE:OWNER:TURN:DICE:SCORE1:SCORE2:FLAGS:LENGTH:MAXCUBE`.
//!
//! Fields (shared/research/architecture.md §2.3, from eXtreme Gammon's
//! documentation of the format and the start position in CubeViz; checked
//! against GNU Backgammon's `set xgid` reader in the server's tests):
//!
//! 1. the position, 26 characters: the top player's bar, then points 1 to
//!    24 in the bottom player's numbering, then the bottom player's bar;
//!    `A`-`O` are 1 to 15 of the bottom player's checkers, `a`-`o` the top
//!    player's, `-` an empty point;
//! 2. log2 of the cube value;
//! 3. the cube's owner: 1 bottom, -1 top, 0 centred;
//! 4. the player on roll: 1 bottom, -1 top;
//! 5. the dice: `00` before the roll, `D` a double offered, `B` beavered,
//!    `R` raccooned, else the two dice (`53`);
//! 6. and 7. the bottom and the top player's score;
//! 8. in a match, 1 in the Crawford game; in money, bit 1 the Jacoby rule
//!    and bit 2 beavers;
//! 9. the match length, 0 for money;
//! 10. log2 of the highest cube.
//!
//! The top player is [`Seat::White`] and the bottom player
//! [`Seat::Black`]: GNU Backgammon reads an XGID's bottom player as its
//! player 1, who is Black in the service's Match IDs and records (see
//! [`match_id`](crate::match_id)).

use crate::board::{BAR, Board, CHECKERS, OFF, Seat};
use crate::match_id::{GameState, MatchInfo};

/// What the dice field says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XgDice {
    /// `00`: the player on roll is to roll (or double).
    ToRoll,
    /// `D`: the player on roll doubled; the other must answer.
    Doubled,
    /// `B`: the double was beavered.
    Beavered,
    /// `R`: raccooned.
    Raccooned,
    Rolled(u8, u8),
}

/// A position and the state of play, as an XGID holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xgid {
    pub board: Board,
    /// The cube's value, a power of two.
    pub cube: u32,
    /// `None`: centred.
    pub cube_owner: Option<Seat>,
    pub on_roll: Seat,
    pub dice: XgDice,
    /// Points won so far, by [`Seat::index`].
    pub score: [u32; 2],
    /// In a match: this is the Crawford game.
    pub crawford: bool,
    /// In money: the Jacoby rule.
    pub jacoby: bool,
    /// In money: beavers allowed.
    pub beavers: bool,
    /// 0 for money.
    pub match_length: u32,
    /// The highest cube value, a power of two.
    pub max_cube: u32,
}

impl Xgid {
    /// The state of play as a gnubg Match ID holds it: a game in play,
    /// the player on roll deciding, or the other one answering a double
    /// (`D`). A Match ID has no beaver: after `B` or `R` the cube has
    /// turned and the player on roll decides.
    pub fn match_info(&self) -> MatchInfo {
        let doubled = self.dice == XgDice::Doubled;
        MatchInfo {
            cube: self.cube,
            cube_owner: self.cube_owner,
            on_roll: self.on_roll,
            to_decide: if doubled {
                self.on_roll.other()
            } else {
                self.on_roll
            },
            crawford: self.crawford,
            state: GameState::Playing,
            double_offered: doubled,
            resignation: 0,
            dice: match self.dice {
                XgDice::Rolled(d1, d2) => Some((d1, d2)),
                _ => None,
            },
            match_length: self.match_length,
            score: self.score,
        }
    }
}

/// Why an XGID could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XgidError {
    #[error("an XGID is XGID= and ten fields separated by ':', got {0:?}")]
    Malformed(String),
    #[error("XGID field {field} ({name}): {what}")]
    Field {
        field: usize,
        name: &'static str,
        what: String,
    },
    #[error("cannot write an XGID: {0}")]
    OutOfRange(String),
}

const NAMES: [&str; 10] = [
    "position",
    "cube",
    "cube owner",
    "turn",
    "dice",
    "bottom score",
    "top score",
    "Crawford/Jacoby",
    "match length",
    "max cube",
];

const BOTTOM: Seat = Seat::Black;
const TOP: Seat = Seat::White;

fn side(seat: Seat) -> i32 {
    if seat == BOTTOM { 1 } else { -1 }
}

fn log2(value: u32, what: &str) -> Result<u32, XgidError> {
    if value.is_power_of_two() {
        Ok(value.trailing_zeros())
    } else {
        Err(XgidError::OutOfRange(format!(
            "{what} {value} is not a power of two"
        )))
    }
}

/// The XGID text.
pub fn encode(x: &Xgid) -> Result<String, XgidError> {
    let mut position = String::with_capacity(26);
    let cell = |bottom: u8, top: u8| -> Result<char, XgidError> {
        match (bottom, top) {
            (0, 0) => Ok('-'),
            (n @ 1..=15, 0) => Ok(char::from(b'A' + n - 1)),
            (0, n @ 1..=15) => Ok(char::from(b'a' + n - 1)),
            _ => Err(XgidError::OutOfRange(
                "a point holds checkers of both sides".into(),
            )),
        }
    };
    // cell(bottom, top): the bottom player is black.
    position.push(cell(0, x.board.on_bar(TOP))?);
    for point in 1..=24u8 {
        position.push(cell(
            x.board.count(BOTTOM, point),
            x.board.count(TOP, 25 - point),
        )?);
    }
    position.push(cell(x.board.on_bar(BOTTOM), 0)?);
    let dice = match x.dice {
        XgDice::ToRoll => "00".to_string(),
        XgDice::Doubled => "D".to_string(),
        XgDice::Beavered => "B".to_string(),
        XgDice::Raccooned => "R".to_string(),
        XgDice::Rolled(d1, d2) if (1..=6).contains(&d1) && (1..=6).contains(&d2) => {
            format!("{d1}{d2}")
        }
        XgDice::Rolled(d1, d2) => return Err(XgidError::OutOfRange(format!("dice {d1}-{d2}"))),
    };
    let flags = if x.match_length > 0 {
        u32::from(x.crawford)
    } else {
        u32::from(x.jacoby) | u32::from(x.beavers) << 1
    };
    Ok(format!(
        "XGID={position}:{}:{}:{}:{dice}:{}:{}:{flags}:{}:{}",
        log2(x.cube, "cube")?,
        x.cube_owner.map_or(0, side),
        side(x.on_roll),
        x.score[BOTTOM.index()],
        x.score[TOP.index()],
        x.match_length,
        log2(x.max_cube, "max cube")?,
    ))
}

/// Reads an XGID (with or without its `XGID=` prefix), naming the field
/// that is wrong when it cannot be read.
pub fn decode(text: &str) -> Result<Xgid, XgidError> {
    let body = text.trim();
    let body = body.strip_prefix("XGID=").unwrap_or(body);
    let fields: Vec<&str> = body.split(':').collect();
    if fields.len() != 10 {
        return Err(XgidError::Malformed(text.to_string()));
    }
    let bad = |field: usize, what: String| XgidError::Field {
        field: field + 1,
        name: NAMES[field],
        what,
    };
    let number = |field: usize| -> Result<i64, XgidError> {
        fields[field]
            .parse::<i64>()
            .map_err(|_| bad(field, format!("{:?} is not a number", fields[field])))
    };
    let in_range = |field: usize, low: i64, high: i64| -> Result<i64, XgidError> {
        let n = number(field)?;
        if (low..=high).contains(&n) {
            Ok(n)
        } else {
            Err(bad(field, format!("{n} is not in {low}..={high}")))
        }
    };
    let board = position(fields[0]).map_err(|what| bad(0, what))?;
    let cube = 1u32 << in_range(1, 0, 15)?;
    let cube_owner = match in_range(2, -1, 1)? {
        1 => Some(BOTTOM),
        -1 => Some(TOP),
        _ => None,
    };
    let on_roll = match in_range(3, -1, 1)? {
        1 => BOTTOM,
        -1 => TOP,
        _ => return Err(bad(3, "0 (1 for the bottom player, -1 for the top)".into())),
    };
    let dice = match fields[4] {
        "00" | "0" => XgDice::ToRoll,
        "D" => XgDice::Doubled,
        "B" => XgDice::Beavered,
        "R" => XgDice::Raccooned,
        d if d.len() == 2 && d.bytes().all(|b| (b'1'..=b'6').contains(&b)) => {
            let d = d.as_bytes();
            XgDice::Rolled(d[0] - b'0', d[1] - b'0')
        }
        d => return Err(bad(4, format!("{d:?} (00, D, B, R or two dice)"))),
    };
    let mut score = [0u32; 2];
    score[BOTTOM.index()] = in_range(5, 0, 32767)? as u32;
    score[TOP.index()] = in_range(6, 0, 32767)? as u32;
    let flags = in_range(7, 0, 3)? as u32;
    let match_length = in_range(8, 0, 32767)? as u32;
    if match_length > 0 && score.iter().any(|&s| s >= match_length) {
        return Err(bad(
            8,
            format!("a score reaches the match length {match_length}"),
        ));
    }
    let max_cube = 1u32 << in_range(9, 0, 15)?;
    Ok(Xgid {
        board,
        cube,
        cube_owner,
        on_roll,
        dice,
        score,
        crawford: match_length > 0 && flags & 1 != 0,
        jacoby: match_length == 0 && flags & 1 != 0,
        beavers: match_length == 0 && flags & 2 != 0,
        match_length,
        max_cube,
    })
}

/// The 26 position characters as a board; checkers not on it are off.
fn position(text: &str) -> Result<Board, String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() != 26 {
        return Err(format!("{} characters, not 26", chars.len()));
    }
    let mut board = Board::EMPTY;
    for (i, &c) in chars.iter().enumerate() {
        let (seat, count) = match c {
            '-' => continue,
            'A'..='O' => (BOTTOM, c as u8 - b'A' + 1),
            'a'..='o' => (TOP, c as u8 - b'a' + 1),
            _ => return Err(format!("{c:?} at {i} (A-O, a-o or -)")),
        };
        // Slot in the seat's own numbering.
        let slot = match i {
            0 if seat == TOP => BAR,
            25 if seat == BOTTOM => BAR,
            0 | 25 => return Err(format!("the other side's checkers on a bar at {i}")),
            p if seat == BOTTOM => p as u8,
            p => 25 - p as u8,
        };
        board.checkers[seat.index()][usize::from(slot)] += count;
    }
    for seat in Seat::BOTH {
        let on_board: u32 = (1..=BAR).map(|p| u32::from(board.count(seat, p))).sum();
        if on_board > u32::from(CHECKERS) {
            return Err(format!("{on_board} checkers of one side"));
        }
        board.checkers[seat.index()][usize::from(OFF)] = CHECKERS - on_board as u8;
    }
    Ok(board)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position_id;

    const START: &str = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10";

    /// CubeViz's start constant: the bottom player (black) has 2 on its
    /// 24, 5 on 13, 3 on 8, 5 on 6, and so has the top; bottom on roll.
    #[test]
    fn the_start_position_constant_reads_as_the_standard_setup() {
        let x = decode(START).unwrap();
        assert_eq!(position_id::encode(&x.board, Seat::Black), "4HPwATDgc/ABMA");
        assert_eq!(x.on_roll, Seat::Black);
        assert_eq!(x.cube, 1);
        assert_eq!(x.cube_owner, None);
        assert_eq!(x.dice, XgDice::ToRoll);
        assert_eq!(x.match_length, 0);
        assert_eq!(x.max_cube, 1024);
        assert_eq!(encode(&x).unwrap(), START);
    }

    #[test]
    fn every_field_survives_a_round_trip() {
        let mut x = decode(START).unwrap();
        // One of white's (the top player's) back checkers hit: on the bar.
        x.board.checkers[Seat::White.index()][24] = 1;
        x.board.checkers[Seat::White.index()][usize::from(BAR)] = 1;
        x.cube = 4;
        x.cube_owner = Some(Seat::White);
        x.on_roll = Seat::White;
        x.dice = XgDice::Rolled(5, 3);
        x.score = [3, 1];
        x.match_length = 5;
        x.crawford = true;
        x.max_cube = 64;
        let text = encode(&x).unwrap();
        assert!(text.starts_with("XGID=aa----E"), "{text}");
        assert_eq!(decode(&text).unwrap(), x);
    }

    /// XGIDs given to GNU Backgammon 1.07 (`set xgid`, then `show board`)
    /// and the Position ID and Match ID it printed: ours of the same state
    /// are the same (Match IDs compared field by field: gnubg sets flags
    /// of its own in bits 66-71).
    #[test]
    fn gnubg_reads_each_xgid_as_the_same_position_and_match_ids() {
        let vectors = [
            (START, "4HPwATDgc/ABMA", "cAkAAAAAAAAE"),
            (
                "XGID=-b----E-C---eE---c-e----B-:0:0:-1:53:0:0:0:0:10",
                "4HPwATDgc/ABMA",
                "MIEOAAAAAAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:0:0:-1:00:0:0:0:0:10",
                "sGfwATDgc/ABMA",
                "MAEAAAAAAAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:1:1:-1:64:2:1:0:5:10",
                "sGfwATDgc/ABMA",
                "EQGzABAAEAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:1:-1:-1:64:2:1:0:5:10",
                "sGfwATDgc/ABMA",
                "AQGzABAAEAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:0:0:1:D:2:1:0:5:10",
                "4HPwATCwZ/ABMA",
                "cAmgABAAEAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:0:0:-1:31:1:4:1:5:10",
                "sGfwATDgc/ABMA",
                "sIGlAEAACAAE",
            ),
            (
                "XGID=-b---BD-B---eE---c-e----B-:2:0:1:35:0:0:1:0:10",
                "4HPwATCwZ/ABMA",
                "cokOAAAAAAAA",
            ),
        ];
        for (text, position, match_id) in vectors {
            let x = decode(text).unwrap();
            assert_eq!(position_id::encode(&x.board, x.on_roll), position, "{text}");
            let mut ours = x.match_info();
            if x.dice == XgDice::Doubled {
                // gnubg 1.07's reader leaves a `D` position to be rolled:
                // it does not set the double offered.
                assert!(ours.double_offered && ours.to_decide != ours.on_roll);
                ours.double_offered = false;
                ours.to_decide = ours.on_roll;
            }
            // gnubg keeps the higher die first; the order means nothing.
            ours.dice = ours.dice.map(|(a, b)| (a.max(b), a.min(b)));
            assert_eq!(ours, crate::match_id::decode(match_id).unwrap(), "{text}");
        }
    }

    #[test]
    fn a_malformed_xgid_is_refused_naming_the_field() {
        let err = decode("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0").unwrap_err();
        assert!(matches!(err, XgidError::Malformed(_)), "{err}");
        let err = decode("XGID=-b----E-C---eE---c-e----B-:0:0:2:00:0:0:0:0:10").unwrap_err();
        assert!(err.to_string().contains("field 4 (turn)"), "{err}");
        let err = decode("XGID=-b----E-C---eE---c-e----Z-:0:0:1:00:0:0:0:0:10").unwrap_err();
        assert!(err.to_string().contains("field 1 (position)"), "{err}");
        let err = decode("XGID=-b----E-C---eE---c-e----B-:0:0:1:77:0:0:0:0:10").unwrap_err();
        assert!(err.to_string().contains("field 5 (dice)"), "{err}");
        let err = decode("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:3:0:0:3:10").unwrap_err();
        assert!(
            err.to_string().contains("reaches the match length"),
            "{err}"
        );
    }
}
