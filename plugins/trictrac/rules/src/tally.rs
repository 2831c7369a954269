//! Points to holes (docs/trictrac.md §4): bredouille, the pavillon, and
//! the stake of a won partie.

use bg_variant_api::engine::Seat;
use bg_variant_api::{Label, Tally};
use serde::{Deserialize, Serialize};

/// One seat's tally (kept in the state as it was stored: these names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatTally {
    /// Points towards the next hole.
    pub points: u32,
    /// Holes won.
    pub holes: u32,
    /// Whether the hole in progress would count double: every point of
    /// it scored with no point of the opponent's in between.
    pub bredouille: bool,
    /// Rolls made by this seat in the current relevé.
    pub rolls: u32,
}

/// The tallies and the counter tric-trac shows, as `VariantInfo`
/// declares them (the names the API's typed scoreboard also reads).
pub fn labels() -> (Vec<Label>, Vec<Label>) {
    let label = |name: &str, description: &str| Label {
        name: name.into(),
        description: description.into(),
    };
    let tallies = vec![
        label("points", "Points towards the next hole (0 to 11)."),
        label("holes", "Holes won; twelve win the partie."),
        label(
            "bredouille",
            "1 when the hole in progress would count double (all its points scored with none of the opponent's in between).",
        ),
        label(
            "rolls",
            "Rolls made in the relevé in progress (the jan de six tables is made on the third).",
        ),
        label(
            "raised_stake",
            "1 while this seat can still win the partie en grande bredouille.",
        ),
        label("flag", "1 for the seat holding the pavillon."),
    ];
    let counters = vec![label(
        "round",
        "The relevé in progress (between two resets of the checkers to the talons), from 1.",
    )];
    (tallies, counters)
}

/// The tallies of both seats, by the names [`labels`] declares.
pub fn tallies(seats: &[SeatTally; 2], pavillon: Pavillon) -> Vec<Tally> {
    let per_seat = |name: &str, value: fn(&SeatTally) -> i64| Tally {
        name: name.into(),
        seats: [value(&seats[0]), value(&seats[1])],
    };
    let mut raised = [0; 2];
    for seat in pavillon.raised_stake() {
        raised[seat.index()] = 1;
    }
    let mut flag = [0; 2];
    if let Pavillon::Flag(seat) = pavillon {
        flag[seat.index()] = 1;
    }
    vec![
        per_seat("points", |t| i64::from(t.points)),
        per_seat("holes", |t| i64::from(t.holes)),
        per_seat("bredouille", |t| i64::from(t.bredouille)),
        per_seat("rolls", |t| i64::from(t.rolls)),
        Tally {
            name: "raised_stake".into(),
            seats: raised,
        },
        Tally {
            name: "flag".into(),
            seats: flag,
        },
    ]
}

/// Points that make a hole.
pub const HOLE: u32 = 12;
/// Holes that win the partie.
pub const PARTIE: u32 = 12;

/// Who can still win the partie *en grande bredouille* (§4, Laws2013 art.
/// XV and XX): the same mechanism as bredouille, counted in holes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pavillon {
    /// Nobody has won a hole: either player can.
    Nobody,
    /// Only this seat has won holes.
    Open(Seat),
    /// This seat won holes second and holds the flag; the first has won
    /// none since.
    Flag(Seat),
    /// The first to win holes won again after the flag was taken: nobody can.
    Closed,
}

impl Pavillon {
    /// After `seat` wins one or more holes.
    pub fn after_holes(self, seat: Seat) -> Pavillon {
        match self {
            Pavillon::Nobody => Pavillon::Open(seat),
            Pavillon::Open(first) if first == seat => self,
            Pavillon::Open(_) => Pavillon::Flag(seat),
            Pavillon::Flag(holder) if holder == seat => self,
            Pavillon::Flag(_) | Pavillon::Closed => Pavillon::Closed,
        }
    }

    /// The seats that can still win en grande bredouille.
    pub fn raised_stake(self) -> Vec<Seat> {
        match self {
            Pavillon::Nobody => Seat::BOTH.to_vec(),
            Pavillon::Open(seat) | Pavillon::Flag(seat) => vec![seat],
            Pavillon::Closed => Vec::new(),
        }
    }
}

/// How a won partie is paid (§4's table of conventions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stake {
    /// Laws2013 art. XX's default: ×2 en grande bredouille, else ×1.
    Simple,
    /// Laws2013 art. XX's other convention: ×4 if the loser won no hole,
    /// ×3 en grande bredouille with the flag, ×2 if the loser has fewer
    /// than 6 holes, else ×1.
    Scale4321,
}

impl Stake {
    /// The multiplier of `winner`'s partie, with the pavillon as it stands
    /// after his last hole and the loser's holes.
    pub fn multiplier(self, winner: Seat, pavillon: Pavillon, loser_holes: u32) -> u32 {
        let grande = pavillon.raised_stake().contains(&winner);
        match self {
            Stake::Simple => {
                if grande {
                    2
                } else {
                    1
                }
            }
            Stake::Scale4321 => {
                if loser_holes == 0 {
                    4
                } else if pavillon == Pavillon::Flag(winner) {
                    3
                } else if loser_holes < 6 {
                    2
                } else {
                    1
                }
            }
        }
    }
}

/// Marks `gain` points for `seat` (the algorithm of §4): a run starts at
/// zero in bredouille, any opponent point ends the opponent's, twelve
/// points make a hole (two in bredouille, and every further dozen of the
/// same gain two more), the opponent's points are wiped and the remainder
/// starts a new run. Returns the holes won.
pub fn mark(tallies: &mut [SeatTally; 2], seat: Seat, gain: u32) -> u32 {
    if gain == 0 {
        return 0;
    }
    let (me, them) = (seat.index(), seat.other().index());
    if tallies[me].points == 0 {
        tallies[me].bredouille = true;
    }
    tallies[them].bredouille = false;
    let mut total = tallies[me].points + gain;
    if total < HOLE {
        tallies[me].points = total;
        return 0;
    }
    let mut holes = if tallies[me].bredouille { 2 } else { 1 };
    total -= HOLE;
    while total >= HOLE {
        holes += 2;
        total -= HOLE;
    }
    tallies[me].points = total;
    tallies[me].bredouille = true;
    tallies[me].holes += holes;
    tallies[them].points = 0;
    holes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tallies(white: (u32, bool), black: (u32, bool)) -> [SeatTally; 2] {
        let t = |(points, bredouille)| SeatTally {
            points,
            bredouille,
            ..SeatTally::default()
        };
        [t(white), t(black)]
    }

    /// TT22 (Lelasseux §146): A 4, B 4, A scored first; A gains 16: one
    /// single hole, 8 left.
    #[test]
    fn tt22_a_gain_after_the_opponent_scored_makes_a_single_hole() {
        let mut t = tallies((4, false), (4, true));
        assert_eq!(mark(&mut t, Seat::White, 16), 1);
        assert_eq!((t[0].points, t[1].points), (8, 0));
    }

    /// TT22 (Lelasseux §147): A 8 single, B 8 in bredouille; A gains 18:
    /// a single hole, then a double one, 2 left: 3 holes.
    #[test]
    fn tt22_further_dozens_of_one_gain_count_double() {
        let mut t = tallies((8, false), (8, true));
        assert_eq!(mark(&mut t, Seat::White, 18), 3);
        assert_eq!(t[0].points, 2);
        let mut t = tallies((8, false), (8, true));
        assert_eq!(mark(&mut t, Seat::White, 40), 7);
    }

    /// TT22 (Lelasseux §144): the second scorer can win bredouille: A
    /// scores, B scores 4 then 8: two holes.
    #[test]
    fn tt22_the_second_scorer_wins_bredouille() {
        let mut t = tallies((0, false), (0, false));
        mark(&mut t, Seat::White, 2);
        mark(&mut t, Seat::Black, 4);
        assert!(t[1].bredouille && !t[0].bredouille);
        assert_eq!(mark(&mut t, Seat::Black, 8), 2);
        assert_eq!((t[0].points, t[1].points), (0, 0));
    }

    /// Once both have scored in one run, the hole is single.
    #[test]
    fn bredouille_is_lost_when_the_first_scorer_scores_again() {
        let mut t = tallies((0, false), (0, false));
        mark(&mut t, Seat::White, 2);
        mark(&mut t, Seat::Black, 4);
        mark(&mut t, Seat::White, 2);
        assert!(!t[0].bredouille && !t[1].bredouille);
        assert_eq!(mark(&mut t, Seat::Black, 8), 1);
    }

    /// The pavillon: the first to win holes can win grande bredouille; the
    /// second takes the flag; the first winning again closes it.
    #[test]
    fn the_pavillon_passes_to_the_second_and_closes_when_the_first_wins_again() {
        let p = Pavillon::Nobody.after_holes(Seat::White);
        assert_eq!(p, Pavillon::Open(Seat::White));
        let p = p.after_holes(Seat::Black);
        assert_eq!(p, Pavillon::Flag(Seat::Black));
        assert_eq!(p.after_holes(Seat::Black), Pavillon::Flag(Seat::Black));
        assert_eq!(p.after_holes(Seat::White), Pavillon::Closed);
        assert_eq!(Stake::Simple.multiplier(Seat::Black, p, 3), 2);
        assert_eq!(Stake::Scale4321.multiplier(Seat::Black, p, 3), 3);
        assert_eq!(
            Stake::Scale4321.multiplier(Seat::White, Pavillon::Open(Seat::White), 0),
            4
        );
        assert_eq!(
            Stake::Scale4321.multiplier(Seat::White, Pavillon::Closed, 5),
            2
        );
        assert_eq!(
            Stake::Scale4321.multiplier(Seat::White, Pavillon::Closed, 6),
            1
        );
        assert_eq!(
            Stake::Simple.multiplier(Seat::White, Pavillon::Closed, 0),
            1
        );
    }
}
