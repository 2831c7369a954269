//! GNU Backgammon's Match ID: 9 bytes, 12 base64 characters, the state of
//! play beside a [Position ID](crate::position_id).
//!
//! Layout (GNU Backgammon manual §11.7, "A technical description of the
//! Match ID", and gnubg's `matchid.c`): 66 bits, packed least significant
//! first into bytes as the Position ID is, each field written least
//! significant bit first:
//!
//! | bits  | field |
//! |-------|-------|
//! | 0-3   | log2 of the cube value |
//! | 4-5   | cube owner: 0 player 0, 1 player 1, 3 centred |
//! | 6     | player on roll (owns the dice) |
//! | 7     | Crawford game |
//! | 8-10  | game state: 0 none, 1 playing, 2 over, 3 resigned, 4 dropped |
//! | 11    | player to decide (differs from 6 after a double or an offer to resign) |
//! | 12    | double offered |
//! | 13-14 | resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon |
//! | 15-17 | die 1 (0: not thrown) |
//! | 18-20 | die 2 |
//! | 21-35 | match length (0: money) |
//! | 36-50 | player 0's score |
//! | 51-65 | player 1's score |
//!
//! Here [`Seat::White`] is gnubg's player 0 and [`Seat::Black`] player 1,
//! as in the records the service exports: player 0 is White (`W`) in
//! gnubg's SGF files and the left-hand column of its .mat files (gnubg's
//! board shows player 0 as O, player 1 as X). Bits 66-71 are left zero
//! when writing and ignored when reading, as gnubg's readers do (newer
//! gnubg versions keep extra flags there).

use base64::Engine as _;

use crate::board::Seat;
// gnubg's base64: standard, unpadded, trailing bits ignored.
use crate::position_id::BASE64;

/// Where a game stands, in the Match ID's terms (bits 8-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameState {
    /// No game started.
    None = 0,
    Playing = 1,
    /// Ended on the board.
    Over = 2,
    /// Ended by a resignation.
    Resigned = 3,
    /// Ended by a dropped double.
    Dropped = 4,
}

/// The state of play a Match ID holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchInfo {
    /// The cube's value: a power of two, 1 to 2^15.
    pub cube: u32,
    /// `None`: the cube is centred.
    pub cube_owner: Option<Seat>,
    /// The player whose turn it is (who owns the dice).
    pub on_roll: Seat,
    /// The player who must act now: the player on roll, or the other one
    /// when a double or an offer to resign waits for an answer.
    pub to_decide: Seat,
    pub crawford: bool,
    pub state: GameState,
    pub double_offered: bool,
    /// 0 none, 1 single, 2 gammon, 3 backgammon.
    pub resignation: u8,
    /// The dice thrown, `None` before the roll.
    pub dice: Option<(u8, u8)>,
    /// Points to win; 0 for money.
    pub match_length: u32,
    /// Points won so far, by [`Seat::index`].
    pub score: [u32; 2],
}

/// Why a Match ID could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchIdError {
    #[error("a Match ID is 12 base64 characters, got {0:?}")]
    Malformed(String),
    #[error("Match ID {id:?}: {what}")]
    Invalid { id: String, what: String },
    #[error("cannot write a Match ID: {0}")]
    OutOfRange(String),
}

/// gnubg's player number of a seat (module doc).
fn player(seat: Seat) -> u64 {
    match seat {
        Seat::White => 0,
        Seat::Black => 1,
    }
}

fn seat(player: u64) -> Seat {
    if player == 0 {
        Seat::White
    } else {
        Seat::Black
    }
}

/// Writes `value` in `width` bits at `at`.
fn put(bits: &mut u128, at: u32, width: u32, value: u64) {
    *bits |= (u128::from(value) & ((1u128 << width) - 1)) << at;
}

fn get(bits: u128, at: u32, width: u32) -> u64 {
    ((bits >> at) & ((1u128 << width) - 1)) as u64
}

/// The 9-byte key of `info`.
pub fn key(info: &MatchInfo) -> Result<[u8; 9], MatchIdError> {
    let out_of_range = |what: String| Err(MatchIdError::OutOfRange(what));
    if !info.cube.is_power_of_two() || info.cube > 1 << 15 {
        return out_of_range(format!(
            "cube {} is not a power of two up to 32768",
            info.cube
        ));
    }
    if info.match_length >= 1 << 15 || info.score.iter().any(|&s| s >= 1 << 15) {
        return out_of_range("match length and scores must be below 32768".into());
    }
    if info.resignation > 3 {
        return out_of_range(format!("resignation level {}", info.resignation));
    }
    let (d1, d2) = info.dice.unwrap_or((0, 0));
    if info.dice.is_some() && (!(1..=6).contains(&d1) || !(1..=6).contains(&d2)) {
        return out_of_range(format!("dice {d1}-{d2}"));
    }
    let mut bits = 0u128;
    put(&mut bits, 0, 4, u64::from(info.cube.trailing_zeros()));
    put(&mut bits, 4, 2, info.cube_owner.map_or(3, player));
    put(&mut bits, 6, 1, player(info.on_roll));
    put(&mut bits, 7, 1, u64::from(info.crawford));
    put(&mut bits, 8, 3, info.state as u64);
    put(&mut bits, 11, 1, player(info.to_decide));
    put(&mut bits, 12, 1, u64::from(info.double_offered));
    put(&mut bits, 13, 2, u64::from(info.resignation));
    put(&mut bits, 15, 3, u64::from(d1));
    put(&mut bits, 18, 3, u64::from(d2));
    put(&mut bits, 21, 15, u64::from(info.match_length));
    put(
        &mut bits,
        36,
        15,
        u64::from(info.score[Seat::White.index()]),
    );
    put(
        &mut bits,
        51,
        15,
        u64::from(info.score[Seat::Black.index()]),
    );
    let mut key = [0u8; 9];
    key.copy_from_slice(&bits.to_le_bytes()[..9]);
    Ok(key)
}

/// The Match ID text of `info`.
pub fn encode(info: &MatchInfo) -> Result<String, MatchIdError> {
    Ok(BASE64.encode(key(info)?))
}

/// Reads a Match ID, checking every field is one gnubg could write.
pub fn decode(id: &str) -> Result<MatchInfo, MatchIdError> {
    let malformed = || MatchIdError::Malformed(id.to_string());
    if id.len() != 12 {
        return Err(malformed());
    }
    let bytes = BASE64.decode(id).map_err(|_| malformed())?;
    if bytes.len() != 9 {
        return Err(malformed());
    }
    let mut word = [0u8; 16];
    word[..9].copy_from_slice(&bytes);
    // Bits 66-71: flags of newer gnubg versions, not part of the layout.
    let bits = u128::from_le_bytes(word) & ((1u128 << 66) - 1);
    let invalid = |what: String| MatchIdError::Invalid {
        id: id.to_string(),
        what,
    };
    let cube_owner = match get(bits, 4, 2) {
        3 => None,
        2 => return Err(invalid("cube owner 2 (0, 1 or 3 for centred)".into())),
        p => Some(seat(p)),
    };
    let state = match get(bits, 8, 3) {
        0 => GameState::None,
        1 => GameState::Playing,
        2 => GameState::Over,
        3 => GameState::Resigned,
        4 => GameState::Dropped,
        s => return Err(invalid(format!("game state {s} (0 to 4)"))),
    };
    let dice = match (get(bits, 15, 3) as u8, get(bits, 18, 3) as u8) {
        (0, 0) => None,
        (d1 @ 1..=6, d2 @ 1..=6) => Some((d1, d2)),
        (d1, d2) => return Err(invalid(format!("dice {d1}-{d2}"))),
    };
    Ok(MatchInfo {
        cube: 1 << get(bits, 0, 4),
        cube_owner,
        on_roll: seat(get(bits, 6, 1)),
        to_decide: seat(get(bits, 11, 1)),
        crawford: get(bits, 7, 1) == 1,
        state,
        double_offered: get(bits, 12, 1) == 1,
        resignation: get(bits, 13, 2) as u8,
        dice,
        match_length: get(bits, 21, 15) as u32,
        score: {
            let mut score = [0; 2];
            score[Seat::White.index()] = get(bits, 36, 15) as u32;
            score[Seat::Black.index()] = get(bits, 51, 15) as u32;
            score
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manual's example, under "gnubg rolls 3, anthon rolls 1": a money
    /// session at 0-0, cube 1 centred, player 0 on roll with 3-1.
    #[test]
    fn the_manuals_example_money_with_three_one() {
        let info = decode("MIEFAAAAAAAA").unwrap();
        assert_eq!(
            info,
            MatchInfo {
                cube: 1,
                cube_owner: None,
                on_roll: Seat::White,
                to_decide: Seat::White,
                crawford: false,
                state: GameState::Playing,
                double_offered: false,
                resignation: 0,
                dice: Some((3, 1)),
                match_length: 0,
                score: [0, 0],
            }
        );
        assert_eq!(encode(&info).unwrap(), "MIEFAAAAAAAA");
    }

    /// architecture.md §2.1: a 7-point match at 0-0, player 1 on roll with 3-2.
    #[test]
    fn a_seven_point_match_with_player_one_on_roll() {
        let info = decode("cInpAAAAAAAA").unwrap();
        assert_eq!(info.match_length, 7);
        assert_eq!(info.on_roll, Seat::Black);
        assert_eq!(info.dice, Some((3, 2)));
        assert_eq!(info.cube_owner, None);
        assert_eq!(encode(&info).unwrap(), "cInpAAAAAAAA");
    }

    /// Written by gnubg 1.07 (`set score 2 1`, `set cube value 2`, `set cube
    /// owner 0`, `set turn 1`, `set dice 53` in a 5-point match; then
    /// `set score 4 1`, `set crawford on`, `set turn 0`, `set dice 64`).
    #[test]
    fn ids_gnubg_wrote_read_as_the_state_it_was_given() {
        let cube_owned = decode("QYmuACAACAAE").unwrap();
        assert_eq!(cube_owned.cube, 2);
        assert_eq!(cube_owned.cube_owner, Some(Seat::White));
        assert_eq!(cube_owned.on_roll, Seat::Black);
        assert_eq!(cube_owned.dice, Some((5, 3)));
        assert_eq!((cube_owned.match_length, cube_owned.score), (5, [2, 1]));
        let crawford = decode("sAGzAEAACAAE").unwrap();
        assert!(crawford.crawford);
        assert_eq!(crawford.on_roll, Seat::White);
        assert_eq!(crawford.dice, Some((6, 4)));
        assert_eq!(crawford.score, [4, 1]);
        // A double offered: black on roll, white to answer.
        let doubled = decode("cBGgACAACAAE").unwrap();
        assert!(doubled.double_offered);
        assert_eq!(
            (doubled.on_roll, doubled.to_decide),
            (Seat::Black, Seat::White)
        );
    }

    #[test]
    fn every_field_survives_a_round_trip() {
        let info = MatchInfo {
            cube: 8,
            cube_owner: Some(Seat::White),
            on_roll: Seat::Black,
            to_decide: Seat::White,
            crawford: true,
            state: GameState::Playing,
            double_offered: true,
            resignation: 2,
            dice: Some((6, 5)),
            match_length: 25,
            score: [24, 13],
        };
        assert_eq!(decode(&encode(&info).unwrap()).unwrap(), info);
    }

    #[test]
    fn the_bits_newer_gnubg_versions_add_are_ignored() {
        // gnubg 1.07 prints a start position read from an XGID this way.
        let info = decode("cAkAAAAAAAAE").unwrap();
        assert_eq!(encode(&info).unwrap(), "cAkAAAAAAAAA");
    }

    #[test]
    fn a_malformed_or_impossible_match_id_is_refused_saying_why() {
        assert!(matches!(
            decode("cInpAAAA"),
            Err(MatchIdError::Malformed(_))
        ));
        assert!(matches!(
            decode("cInpAAAAAAA!"),
            Err(MatchIdError::Malformed(_))
        ));
        // Cube owner 2 (bits 4-5 = 0b10).
        let mut key = key(&decode("cInpAAAAAAAA").unwrap()).unwrap();
        key[0] = (key[0] & !0x30) | 0x20;
        let err = decode(&BASE64.encode(key)).unwrap_err();
        assert!(err.to_string().contains("cube owner 2"), "{err}");
    }
}
