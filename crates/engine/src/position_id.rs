//! GNU Backgammon's Position ID: 10 bytes, 14 base64 characters.
//!
//! Layout (GNU Backgammon manual §11.6 and gnubg's `positionid.c`): for
//! each side, walk its 25 slots
//! (its points 1..=24, then its bar) and write one `1` bit per checker and
//! a `0` after each slot; the **opponent of the player on roll comes
//! first**, the player on roll second (the manual's prose says the
//! reverse; the code is right). Bits are packed least significant first
//! into 10 bytes, which are written in standard base64 without padding.

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use crate::board::{BAR, Board, CHECKERS, OFF, Seat};

/// Standard base64 without padding; like gnubg, ignore the bits past the
/// key that the last character carries (the Match ID uses it too).
pub(crate) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// Why a Position ID could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionIdError {
    #[error("a Position ID is 14 base64 characters, got {0:?}")]
    Malformed(String),
    #[error("Position ID {0:?} gives a side more than 15 checkers")]
    TooManyCheckers(String),
}

/// The 10-byte key of `board` with `on_roll` to move.
///
/// The key is all `1` bits except for each slot's closing `0`, which sits
/// at the number of checkers and slots before it (the checkers of this
/// slot included): so only those zeros are placed, one bit each, and the
/// rest is filled in at the end. A possible position needs at most 80
/// bits (30 checkers and 50 slots); bits past the 80th, which only a
/// board with too many checkers has, are cut, as gnubg's fixed-size key
/// cuts them. This runs once for every legal play of every answer.
pub fn key(board: &Board, on_roll: Seat) -> [u8; 10] {
    // The zeros among bits 0..64 and 64..80: two words, not one u128,
    // whose shifts made a key take over twice as long.
    let (mut low_zeros, mut high_zeros) = (0u64, 0u64);
    // The bit where the next slot begins (at most 50 * 256).
    let mut at = 0u32;
    for seat in [on_roll.other(), on_roll] {
        for &count in &board.checkers[seat.index()][1..=BAR as usize] {
            at += u32::from(count);
            if at < 64 {
                low_zeros |= 1 << at;
            } else if at < 80 {
                high_zeros |= 1 << (at - 64);
            }
            at += 1;
        }
    }
    let used = at.min(80);
    let low_used = if used >= 64 {
        u64::MAX
    } else {
        (1 << used) - 1
    };
    let high_used = if used > 64 { (1 << (used - 64)) - 1 } else { 0 };
    let low = (low_used & !low_zeros).to_le_bytes();
    let high = (high_used & !high_zeros).to_le_bytes();
    let mut key = [0u8; 10];
    key[..8].copy_from_slice(&low);
    key[8..].copy_from_slice(&high[..2]);
    key
}

/// The Position ID text of `board` with `on_roll` to move.
pub fn encode(board: &Board, on_roll: Seat) -> String {
    BASE64.encode(key(board, on_roll))
}

/// Decodes a Position ID into a board with the player on roll in
/// `on_roll`'s seat. Checkers not on the board are counted as borne off.
pub fn decode(id: &str, on_roll: Seat) -> Result<Board, PositionIdError> {
    decode_for(id, on_roll, CHECKERS)
}

/// [`decode`] for a variant played with `checkers` a side (gnubg's
/// hypergammon IDs are the same encoding, with fewer checkers).
pub fn decode_for(id: &str, on_roll: Seat, checkers: u8) -> Result<Board, PositionIdError> {
    let malformed = || PositionIdError::Malformed(id.to_string());
    if id.len() != 14 {
        return Err(malformed());
    }
    let bytes = BASE64.decode(id).map_err(|_| malformed())?;
    let key: [u8; 10] = bytes.try_into().map_err(|_| malformed())?;
    from_key(&key, on_roll, checkers)
        .ok_or_else(|| PositionIdError::TooManyCheckers(id.to_string()))
}

fn from_key(key: &[u8; 10], on_roll: Seat, checkers: u8) -> Option<Board> {
    let mut board = Board::EMPTY;
    let mut bit = 0usize;
    for seat in [on_roll.other(), on_roll] {
        let side = &mut board.checkers[seat.index()];
        let mut point = 1usize;
        let mut placed = 0u8;
        while point <= BAR as usize {
            if bit >= 80 {
                // Trailing slots of the second side may be cut by the padding.
                break;
            }
            if key[bit / 8] & (1 << (bit % 8)) != 0 {
                side[point] += 1;
                placed += 1;
                if placed > checkers {
                    return None;
                }
            } else {
                point += 1;
            }
            bit += 1;
        }
        side[OFF as usize] = checkers - placed;
    }
    Some(board)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_4hpwatdgc_abma() {
        let start = Board::standard_start();
        assert_eq!(encode(&start, Seat::White), "4HPwATDgc/ABMA");
        assert_eq!(decode("4HPwATDgc/ABMA", Seat::White).unwrap(), start);
    }

    /// In `4OvgATDgc+QBUA` (gnubg's own example) the checker on the bar
    /// belongs to the second half, the side on roll.
    #[test]
    fn opponent_is_encoded_first() {
        let board = decode("4OvgATDgc+QBUA", Seat::White).unwrap();
        assert_eq!(board.on_bar(Seat::White), 1);
        assert_eq!(board.on_bar(Seat::Black), 0);
        assert_eq!(encode(&board, Seat::White), "4OvgATDgc+QBUA");
        // Seen from the other seat, the same board gets the other halves' order.
        assert_eq!(
            decode("4OvgATDgc+QBUA", Seat::Black).unwrap(),
            board.swapped()
        );
    }

    #[test]
    fn malformed_ids_are_refused() {
        assert!(decode("4HPwATDgc/ABM", Seat::White).is_err());
        assert!(decode("4HPwATDgc/AB!A", Seat::White).is_err());
        // All ones: far more than 15 checkers.
        assert!(matches!(
            decode("//////////////", Seat::White),
            Err(PositionIdError::TooManyCheckers(_))
        ));
    }

    #[test]
    fn round_trip_on_every_checker_placement_of_one_side() {
        // One white checker on each slot in turn, the rest spread out.
        for point in 1..=BAR {
            let board = Board::from_points(&[(point, 1), (6, 5)], &[(24, 2), (13, 5)]);
            for seat in Seat::BOTH {
                let id = encode(&board, seat);
                assert_eq!(decode(&id, seat).unwrap(), board, "{id}");
            }
        }
    }

    /// The key as the manual describes it, one bit at a time: one `1` per
    /// checker and a `0` after each slot, cut at 80 bits.
    fn key_bit_by_bit(board: &Board, on_roll: Seat) -> [u8; 10] {
        let mut key = [0u8; 10];
        let mut bit = 0usize;
        for seat in [on_roll.other(), on_roll] {
            for point in 1..=BAR {
                for _ in 0..board.count(seat, point) {
                    if bit < 80 {
                        key[bit / 8] |= 1 << (bit % 8);
                    }
                    bit += 1;
                }
                bit += 1;
            }
        }
        key
    }

    #[test]
    fn key_is_the_manuals_bit_walk_on_many_boards_even_overfull_ones() {
        // A fixed pseudo-random walk over counts a slot: most of these
        // boards are overfull, whose bits past the 80th are cut.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for n in 0..20_000 {
            let mut board = Board::EMPTY;
            for side in &mut board.checkers {
                for count in side.iter_mut() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly small counts, as on real boards; some no
                    // board can hold, up to a byte's 255.
                    *count = match n % 4 {
                        0 | 2 => (x % 3) as u8,
                        1 => (x % 16) as u8,
                        _ => (x % 256) as u8,
                    };
                }
            }
            for seat in Seat::BOTH {
                assert_eq!(key(&board, seat), key_bit_by_bit(&board, seat), "{board:?}");
            }
        }
        let start = Board::standard_start();
        assert_eq!(
            key(&start, Seat::Black),
            key_bit_by_bit(&start, Seat::Black)
        );
    }
}
