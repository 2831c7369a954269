//! The common board every variant of the family is played on.

use std::fmt;

/// Points on the board.
pub const POINTS: usize = 24;
/// Index of the "borne off" tray in [`Board::checkers`]; as a move target, "off".
pub const OFF: u8 = 0;
/// Index of the bar in [`Board::checkers`]; as a move source, "bar".
pub const BAR: u8 = 25;
/// Checkers each side plays with.
pub const CHECKERS: u8 = 15;

/// One of the two players. White sits first in every two-element array.
#[repr(u8)]
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Seat {
    White = 0,
    Black = 1,
}

impl Seat {
    pub const BOTH: [Seat; 2] = [Seat::White, Seat::Black];

    #[inline]
    pub fn other(self) -> Seat {
        match self {
            Seat::White => Seat::Black,
            Seat::Black => Seat::White,
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub fn from_index(index: u8) -> Option<Seat> {
        match index {
            0 => Some(Seat::White),
            1 => Some(Seat::Black),
            _ => None,
        }
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Seat::White => "white",
            Seat::Black => "black",
        })
    }
}

/// How the two sides' numberings of the points meet on the board: a
/// variant declares it once (`VariantInfo.geometry`), and everything that
/// shows a board in one seat's numbering follows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Geometry {
    /// The sides move in opposite directions from mirrored starts (each
    /// bears off where the other enters): one side's point `p` is the
    /// other's `25 - p`. Backgammon, Plakoto, tric-trac.
    #[default]
    Opposed,
    /// Both sides move the same way round the board from diagonally
    /// opposite starts: one side's point `p` is the other's `p + 12` (up
    /// to 12) or `p - 12`. Long nardy, Fevga.
    SameWay,
}

impl Geometry {
    /// The other side's number of the point one side numbers `point`
    /// (1..=24; the map is its own inverse).
    #[inline]
    pub fn facing(self, point: u8) -> u8 {
        match self {
            Geometry::Opposed => 25 - point,
            Geometry::SameWay if point <= 12 => point + 12,
            Geometry::SameWay => point - 12,
        }
    }

    /// `seat`'s point `point` in white's numbering (the one the API's
    /// board uses), and back: white's point `point` in `seat`'s numbering.
    #[inline]
    pub fn for_white(self, seat: Seat, point: u8) -> u8 {
        match seat {
            Seat::White => point,
            Seat::Black => self.facing(point),
        }
    }
}

/// The checkers of both sides, each side counted in its own numbering.
///
/// Each side numbers the points 1..=24 from its own home board; how the
/// two numberings meet is the variant's [`Geometry`] (one physical point
/// is `p` for one side and `25 - p` for the other in backgammon). Index
/// [`OFF`] (0) counts the checkers borne off and [`BAR`] (25) those on the
/// bar; a board is complete when each side's 26 slots add up to
/// [`CHECKERS`].
///
/// `pinned` is for variants where a checker can be held under an enemy
/// checker instead of being hit (Plakoto): bit `p` of `pinned[seat]` says
/// the single checker of `seat` on its point `p` is pinned there by the
/// other side. Variants without pins leave it zero.
#[repr(C)]
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Board {
    pub checkers: [[u8; 26]; 2],
    pub pinned: [u32; 2],
}

/// Why a board is not a possible position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("{seat} has {count} checkers, not {expected}")]
    CheckerCount {
        seat: Seat,
        count: u32,
        expected: u8,
    },
    #[error("point {point} (in white's numbering) holds checkers of both sides")]
    SharedPoint { point: u8 },
    #[error("{seat} has checkers on the bar, and this board has none")]
    NoBar { seat: Seat },
    #[error(
        "{seat}'s checker on its point {point} is marked pinned but is not a lone checker under an enemy checker"
    )]
    BadPin { seat: Seat, point: u8 },
}

impl Board {
    /// A board with no checkers anywhere (not a valid position by itself).
    pub const EMPTY: Board = Board {
        checkers: [[0; 26]; 2],
        pinned: [0; 2],
    };

    /// Builds a board from `(point, count)` lists, each side in its own
    /// numbering (use [`BAR`] for the bar). Checkers not placed are off.
    pub fn from_points(white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
        Board::from_points_for(CHECKERS, white, black)
    }

    /// [`from_points`](Self::from_points) for a variant played with
    /// `checkers` a side.
    pub fn from_points_for(checkers: u8, white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
        let mut board = Board::EMPTY;
        for (seat, list) in [(Seat::White, white), (Seat::Black, black)] {
            let side = &mut board.checkers[seat.index()];
            for &(point, count) in list {
                side[point as usize] += count;
            }
            let placed: u32 = side[1..].iter().map(|&c| u32::from(c)).sum();
            side[OFF as usize] =
                u8::try_from(u32::from(checkers).saturating_sub(placed)).unwrap_or(0);
        }
        board
    }

    /// The standard starting position: 24×2, 13×5, 8×3, 6×5 for each side.
    pub fn standard_start() -> Board {
        let side = [(24, 2), (13, 5), (8, 3), (6, 5)];
        Board::from_points(&side, &side)
    }

    /// The nackgammon starting position: 24×2, 23×2, 13×4, 8×3, 6×4.
    pub fn nackgammon_start() -> Board {
        let side = [(24, 2), (23, 2), (13, 4), (8, 3), (6, 4)];
        Board::from_points(&side, &side)
    }

    /// The same position with the seats exchanged.
    #[inline]
    pub fn swapped(&self) -> Board {
        Board {
            checkers: [self.checkers[1], self.checkers[0]],
            pinned: [self.pinned[1], self.pinned[0]],
        }
    }

    /// Checkers of `seat` on its point (or slot) `point`.
    #[inline]
    pub fn count(&self, seat: Seat, point: u8) -> u8 {
        self.checkers[seat.index()][point as usize]
    }

    #[inline]
    pub fn off(&self, seat: Seat) -> u8 {
        self.count(seat, OFF)
    }

    #[inline]
    pub fn on_bar(&self, seat: Seat) -> u8 {
        self.count(seat, BAR)
    }

    /// Whether `seat`'s checker on its `point` is pinned (Plakoto).
    #[inline]
    pub fn is_pinned(&self, seat: Seat, point: u8) -> bool {
        self.pinned[seat.index()] & (1 << point) != 0
    }

    /// Total of all 26 slots of one side: 15 on any complete board.
    #[inline]
    pub fn total(&self, seat: Seat) -> u32 {
        self.checkers[seat.index()]
            .iter()
            .map(|&c| u32::from(c))
            .sum()
    }

    /// Pips `seat` still has to travel to bear everything off.
    pub fn pip_count(&self, seat: Seat) -> u32 {
        self.checkers[seat.index()]
            .iter()
            .enumerate()
            .map(|(point, &count)| point as u32 * u32::from(count))
            .sum()
    }

    /// Whether every checker of `seat` still in play is in its home board
    /// (points 1..=6) and none is on the bar.
    #[inline]
    pub fn all_home(&self, seat: Seat) -> bool {
        self.checkers[seat.index()][7..].iter().all(|&c| c == 0)
    }

    /// [`validate_for`](Self::validate_for) on a board of `geometry`.
    pub fn validate_in(&self, geometry: Geometry, checkers: u8) -> Result<(), BoardError> {
        match geometry {
            Geometry::Opposed => self.validate_for(checkers),
            Geometry::SameWay => self.validate_same_way(checkers),
        }
    }

    /// The checks of [`Geometry::SameWay`]: the checker count, no point
    /// held by both sides, and nothing a variant of that geometry has (no
    /// bar, no pins).
    fn validate_same_way(&self, checkers: u8) -> Result<(), BoardError> {
        for seat in Seat::BOTH {
            let count = self.total(seat);
            if count != u32::from(checkers) {
                return Err(BoardError::CheckerCount {
                    seat,
                    count,
                    expected: checkers,
                });
            }
            if self.on_bar(seat) > 0 {
                return Err(BoardError::NoBar { seat });
            }
            if self.pinned[seat.index()] != 0 {
                let point = self.pinned[seat.index()].trailing_zeros() as u8;
                return Err(BoardError::BadPin { seat, point });
            }
        }
        match (1..=POINTS as u8).find(|&point| {
            self.count(Seat::White, point) > 0
                && self.count(Seat::Black, Geometry::SameWay.facing(point)) > 0
        }) {
            Some(point) => Err(BoardError::SharedPoint { point }),
            None => Ok(()),
        }
    }

    /// Checks what every variant's boards share: 15 checkers a side and no
    /// physical point held by both sides, except where one of them is
    /// pinned there under the other ([`Geometry::Opposed`]; see
    /// [`validate_in`](Self::validate_in)).
    pub fn validate(&self) -> Result<(), BoardError> {
        self.validate_for(CHECKERS)
    }

    /// [`validate`](Self::validate) for a variant played with `checkers`
    /// a side (hypergammon's 3; [`CHECKERS`] for the others).
    pub fn validate_for(&self, checkers: u8) -> Result<(), BoardError> {
        if checkers == CHECKERS && self.pinned == [0, 0] && self.fast_check() {
            return Ok(());
        }
        self.explain(checkers)
    }

    /// The common case of [`validate`](Self::validate), eight slots at a
    /// time: every count at most 15, 15 checkers a side, no shared point.
    /// This runs on every board a plugin returns, so it is worth it.
    #[inline]
    fn fast_check(&self) -> bool {
        const LOW_NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;
        const SEVEN_F: u64 = 0x7F7F_7F7F_7F7F_7F7F;
        const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
        #[inline(always)]
        fn word(side: &[u8; 26], at: usize) -> u64 {
            u64::from_le_bytes(side[at..at + 8].try_into().expect("8 bytes"))
        }
        // Sum of the eight bytes of a word whose byte total is below 256.
        #[inline(always)]
        fn byte_sum(x: u64) -> u64 {
            x.wrapping_mul(0x0101_0101_0101_0101) >> 56
        }
        // High bit set in each nonzero byte (bytes <= 15).
        #[inline(always)]
        fn nonzero(x: u64) -> u64 {
            x.wrapping_add(SEVEN_F) & HIGH_BITS
        }
        let (white, black) = (&self.checkers[0], &self.checkers[1]);
        // Slots 0..8, 8..16, 16..24, and 24..26 as the top of 18..26.
        let (w0, w8, w16, w18) = (
            word(white, 0),
            word(white, 8),
            word(white, 16),
            word(white, 18),
        );
        let (b0, b8, b16, b18) = (
            word(black, 0),
            word(black, 8),
            word(black, 16),
            word(black, 18),
        );
        if (w0 | w8 | w16 | w18 | b0 | b8 | b16 | b18) & !LOW_NIBBLES != 0 {
            return false;
        }
        // Two words of bytes <= 15 added bytewise carry nothing between
        // bytes and total at most 240: one multiply sums them.
        let white_total = byte_sum(w0 + w8) + byte_sum(w16 + (w18 >> 48));
        let black_total = byte_sum(b0 + b8) + byte_sum(b16 + (b18 >> 48));
        // White's points 1..=24 against black's 24..=1: points 1..8 of one
        // side face points 17..24 of the other, byte order reversed.
        let (w1, w9, w17) = (word(white, 1), word(white, 9), word(white, 17));
        let (b1, b9, b17) = (word(black, 1), word(black, 9), word(black, 17));
        let shared = (nonzero(w1) & nonzero(b17.swap_bytes()))
            | (nonzero(w9) & nonzero(b9.swap_bytes()))
            | (nonzero(w17) & nonzero(b1.swap_bytes()));
        white_total == u64::from(CHECKERS) && black_total == u64::from(CHECKERS) && shared == 0
    }

    /// The slow path of [`validate`](Self::validate): finds what is wrong.
    #[cold]
    #[inline(never)]
    fn explain(&self, checkers: u8) -> Result<(), BoardError> {
        for seat in Seat::BOTH {
            let count = self.total(seat);
            if count != u32::from(checkers) {
                return Err(BoardError::CheckerCount {
                    seat,
                    count,
                    expected: checkers,
                });
            }
        }
        let mut shared = 0u32;
        for point in 1..=POINTS {
            let both = (self.checkers[0][point] != 0) & (self.checkers[1][25 - point] != 0);
            shared |= u32::from(both) << point;
        }
        if self.pinned == [0, 0] {
            return match shared {
                0 => Ok(()),
                mask => Err(BoardError::SharedPoint {
                    point: mask.trailing_zeros() as u8,
                }),
            };
        }
        self.validate_pins(shared)
    }

    /// The rare case of a board with pinned checkers (Plakoto).
    fn validate_pins(&self, shared: u32) -> Result<(), BoardError> {
        for seat in Seat::BOTH {
            let pins = self.pinned[seat.index()];
            if pins & !0x01FF_FFFE != 0 {
                return Err(BoardError::BadPin { seat, point: 0 });
            }
            for point in 1..=POINTS as u8 {
                let pinned = pins & (1 << point) != 0;
                let enemy = self.count(seat.other(), 25 - point);
                if pinned && (self.count(seat, point) != 1 || enemy == 0) {
                    return Err(BoardError::BadPin { seat, point });
                }
            }
        }
        // A shared point is fine where one side's checker is pinned there,
        // under the other's: not both pinned, each under the other.
        let mut pinned_black_points = 0u32;
        for point in 1..=POINTS as u32 {
            if self.pinned[1] & (1 << point) != 0 {
                pinned_black_points |= 1 << (25 - point);
            }
        }
        let both = self.pinned[0] & pinned_black_points;
        if both != 0 {
            return Err(BoardError::BadPin {
                seat: Seat::White,
                point: both.trailing_zeros() as u8,
            });
        }
        let pinned_white_points = self.pinned[0] | pinned_black_points;
        match shared & !pinned_white_points {
            0 => Ok(()),
            mask => Err(BoardError::SharedPoint {
                point: mask.trailing_zeros() as u8,
            }),
        }
    }
}

impl Default for Board {
    fn default() -> Self {
        Board::standard_start()
    }
}

impl fmt::Debug for Board {
    /// Compact: `white[24:2 13:5 8:3 6:5] black[...]`, then bar, off and pins.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seat in Seat::BOTH {
            write!(f, "{seat}[")?;
            let mut first = true;
            for point in (1..=BAR).rev() {
                let count = self.count(seat, point);
                if count == 0 {
                    continue;
                }
                if !first {
                    f.write_str(" ")?;
                }
                first = false;
                if point == BAR {
                    write!(f, "bar:{count}")?;
                } else {
                    write!(f, "{point}:{count}")?;
                }
                if self.is_pinned(seat, point) {
                    f.write_str("^")?;
                }
            }
            write!(f, " off:{}] ", self.off(seat))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_are_valid() {
        Board::standard_start().validate().unwrap();
        Board::nackgammon_start().validate().unwrap();
        assert_eq!(Board::standard_start().pip_count(Seat::White), 167);
    }

    #[test]
    fn shared_point_is_rejected() {
        // White's 6-point is black's 19-point.
        let board = Board::from_points(&[(6, 15)], &[(19, 15)]);
        assert_eq!(board.validate(), Err(BoardError::SharedPoint { point: 6 }));
    }

    #[test]
    fn wrong_checker_count_is_rejected() {
        let mut board = Board::standard_start();
        board.checkers[1][6] += 1;
        assert!(matches!(
            board.validate(),
            Err(BoardError::CheckerCount {
                seat: Seat::Black,
                count: 16,
                expected: 15
            })
        ));
    }

    /// Hypergammon is played with three checkers a side: its boards are
    /// checked for three, and a standard board is not one of them.
    #[test]
    fn a_variant_with_three_checkers_a_side_checks_for_three() {
        let hyper = Board::from_points_for(
            3,
            &[(24, 1), (23, 1), (22, 1)],
            &[(24, 1), (23, 1), (22, 1)],
        );
        assert_eq!(hyper.validate_for(3), Ok(()));
        assert!(matches!(
            hyper.validate(),
            Err(BoardError::CheckerCount {
                count: 3,
                expected: 15,
                ..
            })
        ));
        assert!(matches!(
            Board::standard_start().validate_for(3),
            Err(BoardError::CheckerCount {
                count: 15,
                expected: 3,
                ..
            })
        ));
    }

    #[test]
    fn pinned_checker_may_share_its_point() {
        // White's lone checker on its 10 is pinned under black's checker on black's 15.
        let mut board = Board::from_points(&[(10, 1), (24, 14)], &[(15, 1), (24, 14)]);
        assert!(board.validate().is_err());
        board.pinned[0] |= 1 << 10;
        board.validate().unwrap();
        // Not both ways at once: each lone checker pinned under the other.
        board.pinned[1] |= 1 << 15;
        assert!(matches!(
            board.validate(),
            Err(BoardError::BadPin { point: 10, .. })
        ));
    }
}

#[cfg(test)]
mod fast_check_tests {
    use super::*;

    /// The word-at-a-time check must agree with the plain one on every
    /// single-checker change of the start position.
    #[test]
    fn fast_check_agrees_with_the_plain_rules() {
        let start = Board::standard_start();
        for seat in 0..2 {
            for from in 0..26 {
                for to in 0..26 {
                    let mut board = start;
                    if board.checkers[seat][from] == 0 {
                        continue;
                    }
                    board.checkers[seat][from] -= 1;
                    board.checkers[seat][to] += 1;
                    let plain = board.explain(CHECKERS).is_ok();
                    assert_eq!(board.validate().is_ok(), plain, "{board:?}");
                    board.checkers[seat][to] += 1;
                    assert!(board.validate().is_err());
                }
            }
        }
        let mut huge = start;
        huge.checkers[0][3] = 255;
        huge.checkers[0][4] = 17;
        assert!(huge.validate().is_err());
    }
}

#[cfg(test)]
mod geometry_tests {
    use super::*;

    #[test]
    fn each_geometry_maps_a_point_to_the_other_sides_and_back() {
        for point in 1..=24u8 {
            for g in [Geometry::Opposed, Geometry::SameWay] {
                assert_eq!(g.facing(g.facing(point)), point);
                assert!((1..=24).contains(&g.facing(point)));
            }
        }
        assert_eq!(Geometry::Opposed.facing(24), 1);
        // The same way round: black's head (its 24) is white's 12.
        assert_eq!(Geometry::SameWay.facing(24), 12);
        assert_eq!(Geometry::SameWay.for_white(Seat::Black, 13), 1);
        assert_eq!(Geometry::SameWay.for_white(Seat::White, 13), 13);
    }

    #[test]
    fn a_board_is_judged_by_its_geometry() {
        // Both heads on their own 24: diagonally opposite corners.
        let heads = Board::from_points(&[(24, 15)], &[(24, 15)]);
        assert_eq!(heads.validate_in(Geometry::SameWay, 15), Ok(()));
        // White's 12 is black's 24 the same way round.
        let shared = Board::from_points(&[(24, 14), (12, 1)], &[(24, 15)]);
        assert_eq!(
            shared.validate_in(Geometry::SameWay, 15),
            Err(BoardError::SharedPoint { point: 12 })
        );
        assert_eq!(shared.validate_in(Geometry::Opposed, 15), Ok(()));
        let mut on_bar = heads;
        on_bar.checkers[0][24] -= 1;
        on_bar.checkers[0][usize::from(BAR)] += 1;
        assert_eq!(
            on_bar.validate_in(Geometry::SameWay, 15),
            Err(BoardError::NoBar { seat: Seat::White })
        );
    }
}
