//! The board as the mover sees it, in tric-trac's field numbering.
//!
//! Fields f1..f24 count from the mover's own talon (docs/trictrac.md §1):
//! f1 the talon, f12 his rest corner, f13 the opponent's corner, f19..f24
//! the jan de retour; f25 is the exit rail. On the engine's [`Board`] the
//! mover's field f is his point `25 - f` (the talon is the 24-point, off
//! is 0), and the opponent's checkers on the mover's field f are the
//! opponent's point f.

use bg_variant_api::engine::{Board, OFF, Seat};

/// The mover's talon.
pub const TALON: usize = 1;
/// The mover's rest corner.
pub const CORNER: usize = 12;
/// The opponent's rest corner, in the mover's numbering.
pub const THEIR_CORNER: usize = 13;
/// The exit rail: `mine[RAIL]` counts the checkers borne off.
pub const RAIL: usize = 25;

/// The three jans a player can fill (docs/trictrac.md §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Jan {
    /// f1..f6 (the talon included).
    Petit,
    /// f7..f12 (the corner included).
    Grand,
    /// f19..f24, the opponent's petit jan.
    Retour,
}

impl Jan {
    pub const ALL: [Jan; 3] = [Jan::Petit, Jan::Grand, Jan::Retour];

    /// The jan's six fields.
    pub fn fields(self) -> std::ops::RangeInclusive<usize> {
        match self {
            Jan::Petit => 1..=6,
            Jan::Grand => 7..=12,
            Jan::Retour => 19..=24,
        }
    }
}

/// One seat's view of the board: its own checkers and the opponent's, both by the
/// mover's field number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct View {
    /// `mine[f]` for f in 1..=24; `mine[RAIL]` the checkers borne off.
    pub mine: [u8; 26],
    /// `theirs[f]` for f in 1..=24: the opponent's checkers on field f.
    pub theirs: [u8; 26],
}

impl View {
    /// `seat`'s view of `board`.
    pub fn of(board: &Board, seat: Seat) -> View {
        let other = seat.other();
        let mut view = View {
            mine: [0; 26],
            theirs: [0; 26],
        };
        for f in 1..=24 {
            view.mine[f] = board.count(seat, (25 - f) as u8);
            view.theirs[f] = board.count(other, f as u8);
        }
        view.mine[RAIL] = board.count(seat, OFF);
        view
    }

    /// The board with `seat`'s checkers as in this view (the opponent's
    /// are never moved by the mover).
    pub fn write(&self, board: &Board, seat: Seat) -> Board {
        let mut next = *board;
        let own = &mut next.checkers[seat.index()];
        own.fill(0);
        for f in 1..=24 {
            own[25 - f] = self.mine[f];
        }
        own[usize::from(OFF)] = self.mine[RAIL];
        next
    }

    /// Whether every field of `jan` holds two or more of the mover's checkers.
    pub fn is_full(&self, jan: Jan) -> bool {
        jan.fields().all(|f| self.mine[f] >= 2)
    }

    /// Checkers still to bring into `jan` to fill it.
    pub fn missing(&self, jan: Jan) -> u8 {
        jan.fields().map(|f| 2u8.saturating_sub(self.mine[f])).sum()
    }

    /// Whether all the mover's checkers left on the board are in the jan
    /// de retour, so that he may bear off.
    pub fn all_home(&self) -> bool {
        self.mine[1..=18].iter().all(|&c| c == 0)
    }

    /// The mover's checker farthest from the rail (the lowest field).
    pub fn farthest(&self) -> Option<usize> {
        (1..=24).find(|&f| self.mine[f] > 0)
    }

    /// Whether the opponent can still materially fill the quarter of the
    /// mover's fields `quarter` (his own jan there): none of the mover's
    /// checkers is in it, and for k = 1..6 he has at least 2k checkers on
    /// the k-th field of that quarter or behind it (checkers never move
    /// back). docs/trictrac.md §2.5; the test mmai uses, which ignores the
    /// two-at-once rule of his corner.
    pub fn opponent_can_fill(&self, quarter: std::ops::RangeInclusive<usize>) -> bool {
        if quarter.clone().any(|f| self.mine[f] > 0) {
            return false;
        }
        // The opponent's k-th field of the quarter is the mover's field
        // `end + 1 - k`; "behind" it, for him, is every higher field.
        let end = *quarter.end();
        (1..=6).all(|k| {
            let field = end + 1 - k;
            let behind: u32 = (field..=24).map(|f| u32::from(self.theirs[f])).sum();
            behind >= 2 * k as u32
        })
    }

    /// All 15 of the mover's checkers stacked on his corner (the pile de
    /// misère, docs/trictrac.md §3.8).
    pub fn is_pile(&self) -> bool {
        self.mine[CORNER] == 15
    }
}

/// A board from (field, count) lists in white's field numbering for both
/// sides, as the worked examples write positions (docs/trictrac.md §6):
/// white's field f is its point `25 - f`; black's checker on white's
/// field f is on black's point f. Checkers not placed are borne off.
pub fn board_from_fields(white: &[(u8, u8)], black: &[(u8, u8)]) -> Board {
    let white: Vec<(u8, u8)> = white.iter().map(|&(f, n)| (25 - f, n)).collect();
    Board::from_points(&white, black)
}

/// The engine point of the mover's field `f` (0 for the rail).
pub fn point(f: usize) -> u8 {
    if f >= RAIL { OFF } else { (25 - f) as u8 }
}

/// Whether field `f` (1..=24) is in the grand-jan table (both grand jans,
/// f7..f18); the others (both petit jans) are the petit-jan table.
pub fn in_grand_table(f: usize) -> bool {
    (7..=18).contains(&f)
}
