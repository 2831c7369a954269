//! How a game on the standard board is won: rule knowledge of this
//! board, so it lives with its rules, not in the engine.

use bg_variant_api::engine::{Board, Seat};

/// The natural value of a win, judged on the loser's position
/// (docs/rules.md §1.4, after gnubg's `GameStatus`; the seeds call them Oin,
/// Mars and Cox).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WinType {
    /// The loser has borne off at least one checker.
    Single = 1,
    /// The loser has borne off none.
    Gammon = 2,
    /// The loser has borne off none and still has a checker on the bar or
    /// in the winner's home board.
    Backgammon = 3,
}

impl WinType {
    /// The win type `loser` concedes on `board` (whether or not the winner
    /// has finished: resigning by position uses the same table).
    pub fn of_loser(board: &Board, loser: Seat) -> WinType {
        if board.off(loser) > 0 {
            return WinType::Single;
        }
        // The winner's home board is the loser's points 19..=24; the bar is 25.
        let stragglers: u8 = board.checkers[loser.index()][19..=25].iter().sum();
        if stragglers > 0 {
            WinType::Backgammon
        } else {
            WinType::Gammon
        }
    }

    /// Base points: 1, 2 or 3.
    pub fn points(self) -> u32 {
        self as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T25 (docs/rules.md): loser with nothing off and a checker in the winner's home is
    /// backgammoned; with one checker off (even with one on the bar) it is a
    /// single game.
    #[test]
    fn t25_win_type_is_judged_on_the_loser() {
        let winner_done = [];
        let loser = [(20, 1), (10, 14)];
        let board = Board::from_points(&winner_done, &loser);
        assert_eq!(WinType::of_loser(&board, Seat::Black), WinType::Backgammon);
        assert_eq!(WinType::of_loser(&board, Seat::Black).points() * 4, 12);

        let loser_one_off = [(bg_variant_api::engine::BAR, 1), (10, 13)];
        let board = Board::from_points(&winner_done, &loser_one_off);
        assert_eq!(board.off(Seat::Black), 1);
        assert_eq!(WinType::of_loser(&board, Seat::Black), WinType::Single);
        assert_eq!(WinType::of_loser(&board, Seat::Black).points() * 4, 4);

        let gammoned = [(10, 15)];
        let board = Board::from_points(&winner_done, &gammoned);
        assert_eq!(WinType::of_loser(&board, Seat::Black), WinType::Gammon);
    }
}
