//! The points of one roll (docs/trictrac.md §3): every jan the roll makes,
//! for the roller or for his opponent, judged on the position before the
//! move. Hits and the jans rares are fictitious; filling, keeping, the
//! numbers that cannot be played and the exit follow from the legal plays
//! ([`crate::moves`]), which are compulsory, so they too are known before
//! anything moves.

use bg_variant_api::engine::Dice;
use serde::{Deserialize, Serialize};

use crate::moves::{Candidate, Roll};
use crate::view::{CORNER, Jan, TALON, THEIR_CORNER, View, in_grand_table};

/// What scored, with a stable name (docs/trictrac.md, "Jan names").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JanKind {
    SixTables,
    TwoTables,
    ContreTwoTables,
    Mezeas,
    ContreMezeas,
    TrueHitGrandTable,
    TrueHitPetitTable,
    CornerHit,
    FalseHitGrandTable,
    FalseHitPetitTable,
    FillPetitJan,
    FillGrandJan,
    FillRetourJan,
    KeepPetitJan,
    KeepGrandJan,
    KeepRetourJan,
    PileMade,
    PileKept,
    Unplayable,
    Exit,
}

impl JanKind {
    pub const ALL: [JanKind; 20] = [
        JanKind::SixTables,
        JanKind::TwoTables,
        JanKind::ContreTwoTables,
        JanKind::Mezeas,
        JanKind::ContreMezeas,
        JanKind::TrueHitGrandTable,
        JanKind::TrueHitPetitTable,
        JanKind::CornerHit,
        JanKind::FalseHitGrandTable,
        JanKind::FalseHitPetitTable,
        JanKind::FillPetitJan,
        JanKind::FillGrandJan,
        JanKind::FillRetourJan,
        JanKind::KeepPetitJan,
        JanKind::KeepGrandJan,
        JanKind::KeepRetourJan,
        JanKind::PileMade,
        JanKind::PileKept,
        JanKind::Unplayable,
        JanKind::Exit,
    ];

    /// The stable name used in the API, `bgctl jans` and the docs.
    pub fn name(self) -> &'static str {
        match self {
            JanKind::SixTables => "six_tables",
            JanKind::TwoTables => "two_tables",
            JanKind::ContreTwoTables => "contre_two_tables",
            JanKind::Mezeas => "mezeas",
            JanKind::ContreMezeas => "contre_mezeas",
            JanKind::TrueHitGrandTable => "true_hit_grand_table",
            JanKind::TrueHitPetitTable => "true_hit_petit_table",
            JanKind::CornerHit => "corner_hit",
            JanKind::FalseHitGrandTable => "false_hit_grand_table",
            JanKind::FalseHitPetitTable => "false_hit_petit_table",
            JanKind::FillPetitJan => "fill_petit_jan",
            JanKind::FillGrandJan => "fill_grand_jan",
            JanKind::FillRetourJan => "fill_retour_jan",
            JanKind::KeepPetitJan => "keep_petit_jan",
            JanKind::KeepGrandJan => "keep_grand_jan",
            JanKind::KeepRetourJan => "keep_retour_jan",
            JanKind::PileMade => "pile_de_misere_made",
            JanKind::PileKept => "pile_de_misere_kept",
            JanKind::Unplayable => "unplayable_number",
            JanKind::Exit => "exit",
        }
    }

    /// Who gains it: the roller, or (false hits, contre-jans, numbers
    /// that cannot be played) his opponent.
    pub fn for_opponent(self) -> bool {
        matches!(
            self,
            JanKind::ContreTwoTables
                | JanKind::ContreMezeas
                | JanKind::FalseHitGrandTable
                | JanKind::FalseHitPetitTable
                | JanKind::Unplayable
        )
    }

    /// Points per way on a single roll and on a doublet (§3's table).
    pub fn value(self, doublet: bool) -> u32 {
        match (self, doublet) {
            (JanKind::Unplayable, _) => 2,
            (JanKind::TrueHitGrandTable | JanKind::FalseHitGrandTable, false) => 2,
            (JanKind::TrueHitGrandTable | JanKind::FalseHitGrandTable, true) => 4,
            (_, false) => 4,
            (_, true) => 6,
        }
    }

    fn fill(jan: Jan) -> JanKind {
        match jan {
            Jan::Petit => JanKind::FillPetitJan,
            Jan::Grand => JanKind::FillGrandJan,
            Jan::Retour => JanKind::FillRetourJan,
        }
    }

    fn keep(jan: Jan) -> JanKind {
        match jan {
            Jan::Petit => JanKind::KeepPetitJan,
            Jan::Grand => JanKind::KeepGrandJan,
            Jan::Retour => JanKind::KeepRetourJan,
        }
    }
}

/// One jan of a roll: its kind, how many ways, and the points (ways times
/// the value per way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scored {
    pub kind: JanKind,
    pub ways: u32,
    pub points: u32,
}

/// Everything a roll scores, for both players.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RollPoints {
    pub jans: Vec<Scored>,
}

impl RollPoints {
    fn add(&mut self, kind: JanKind, ways: u32, doublet: bool) {
        if ways == 0 {
            return;
        }
        let points = ways * kind.value(doublet);
        match self.jans.iter_mut().find(|j| j.kind == kind) {
            Some(j) => {
                j.ways += ways;
                j.points += points;
            }
            None => self.jans.push(Scored { kind, ways, points }),
        }
    }

    /// The roller's points.
    pub fn roller(&self) -> u32 {
        self.jans
            .iter()
            .filter(|j| !j.kind.for_opponent())
            .map(|j| j.points)
            .sum()
    }

    /// The opponent's points.
    pub fn opponent(&self) -> u32 {
        self.jans
            .iter()
            .filter(|j| j.kind.for_opponent())
            .map(|j| j.points)
            .sum()
    }
}

/// What the roll's numbers are, as hits and fills count them: the direct
/// numbers (one for a doublet) and the sum. The sum's rest is one direct
/// number away from its origin: either on a single roll, the one on a
/// doublet.
struct Numbers {
    direct: Vec<usize>,
    sum: usize,
}

impl Numbers {
    fn of(dice: Dice) -> Numbers {
        let (a, b) = (usize::from(dice.d1), usize::from(dice.d2));
        Numbers {
            direct: if a == b { vec![a] } else { vec![a, b] },
            sum: a + b,
        }
    }
}

/// The points of `dice` rolled by the side whose view is `start`, on the
/// roller's `roll_number`-th roll of the relevé (from 1).
pub fn score(start: &View, dice: Dice, roll_number: u32, pile: bool) -> RollPoints {
    let roll = Roll::new(*start, dice, pile);
    let legal = roll.legal();
    score_with(start, dice, roll_number, pile, &legal)
}

/// [`score`] with the roll's legal plays already known.
pub fn score_with(
    start: &View,
    dice: Dice,
    roll_number: u32,
    pile: bool,
    legal: &[Candidate],
) -> RollPoints {
    let doublet = dice.d1 == dice.d2;
    let numbers = Numbers::of(dice);
    let mut points = RollPoints::default();
    rare_jans(start, dice, roll_number, &mut points);
    hits(start, &numbers, doublet, &mut points);
    if corner_hit(start, dice) {
        points.add(JanKind::CornerHit, 1, doublet);
    }
    for jan in Jan::ALL {
        let full_after = legal.iter().any(|c| c.after.is_full(jan));
        if !full_after {
            continue;
        }
        if start.is_full(jan) {
            points.add(JanKind::keep(jan), 1, doublet);
        } else {
            points.add(JanKind::fill(jan), fill_ways(start, jan, &numbers), doublet);
        }
    }
    if pile && legal.iter().any(|c| c.after.is_pile()) {
        let kind = if start.is_pile() {
            JanKind::PileKept
        } else {
            JanKind::PileMade
        };
        points.add(kind, 1, doublet);
    }
    let exits = legal.iter().any(Candidate::exits_all);
    if exits {
        points.add(JanKind::Exit, 1, doublet);
    } else {
        // An unused number on the roll that bears off the last checker is
        // ignored (§3.6).
        let used = legal.iter().map(|c| c.dice_used).max().unwrap_or(0);
        points.add(JanKind::Unplayable, u32::from(2 - used), doublet);
    }
    points
}

/// The jans rares (§3.1): the jan de six tables on the third roll; the
/// jan de deux tables and the jan de mézéas, with their contre-jans when
/// the opponent already holds his corner.
fn rare_jans(s: &View, dice: Dice, roll_number: u32, points: &mut RollPoints) {
    let doublet = dice.d1 == dice.d2;
    let (d1, d2) = (usize::from(dice.d1), usize::from(dice.d2));
    let their_corner_held = s.theirs[THEIR_CORNER] >= 2;
    if roll_number == 3 && !doublet && s.mine[TALON] == 11 {
        let singles = (2..=7).filter(|&f| s.mine[f] == 1).count();
        let empty: Vec<usize> = (2..=7).filter(|&f| s.mine[f] == 0).collect();
        if singles == 4 && empty.len() == 2 {
            let wanted = [empty[0] - TALON, empty[1] - TALON];
            if (wanted == [d1, d2]) || (wanted == [d2, d1]) {
                points.add(JanKind::SixTables, 1, false);
            }
        }
    }
    if s.mine[TALON] != 13 {
        return;
    }
    let out: Vec<usize> = (2..=24)
        .flat_map(|f| std::iter::repeat_n(f, usize::from(s.mine[f])))
        .collect();
    let [a, b] = out[..] else { return };
    if s.mine[CORNER] == 2 {
        if dice.d1 == 1 || dice.d2 == 1 {
            let kind = if their_corner_held {
                JanKind::ContreMezeas
            } else {
                JanKind::Mezeas
            };
            points.add(kind, 1, doublet);
        }
        return;
    }
    if s.mine[CORNER] != 0 || (s.theirs[THEIR_CORNER] != 0 && !their_corner_held) {
        return;
    }
    let lands = |x: usize, y: usize| {
        (x + d1 == CORNER && y + d2 == THEIR_CORNER) || (x + d2 == CORNER && y + d1 == THEIR_CORNER)
    };
    if lands(a, b) || lands(b, a) {
        let kind = if their_corner_held {
            JanKind::ContreTwoTables
        } else {
            JanKind::TwoTables
        };
        points.add(kind, 1, doublet);
    }
}

/// Hits (§3.2): every opposing checker alone on a field, by each number
/// that could reach it from one of the roller's checkers; by the sum only
/// through an admissible rest (empty, own, or one opposing checker),
/// otherwise falsely, and a checker hit truly is never also hit falsely.
fn hits(s: &View, numbers: &Numbers, doublet: bool, points: &mut RollPoints) {
    for target in 1..=24 {
        if s.theirs[target] != 1 {
            continue;
        }
        let from = |n: usize| target.checked_sub(n).filter(|&o| o >= 1 && s.mine[o] > 0);
        let mut true_ways = numbers
            .direct
            .iter()
            .filter(|&&n| from(n).is_some())
            .count() as u32;
        let mut false_way = false;
        if let Some(origin) = from(numbers.sum) {
            let rest_ok = numbers
                .direct
                .iter()
                .any(|&leg| s.theirs[origin + leg] <= 1);
            if rest_ok {
                true_ways += 1;
            } else {
                false_way = true;
            }
        }
        let grand = in_grand_table(target);
        if true_ways > 0 {
            let kind = if grand {
                JanKind::TrueHitGrandTable
            } else {
                JanKind::TrueHitPetitTable
            };
            points.add(kind, true_ways, doublet);
        } else if false_way {
            let kind = if grand {
                JanKind::FalseHitGrandTable
            } else {
                JanKind::FalseHitPetitTable
            };
            points.add(kind, 1, doublet);
        }
    }
}

/// Hitting the corner (§3.3): the roller holds his corner, the opponent's
/// is empty, and two checkers other than the corner's own two could land
/// on it, one with each number (two from one field on a doublet).
fn corner_hit(s: &View, dice: Dice) -> bool {
    if s.mine[CORNER] < 2 || s.theirs[THEIR_CORNER] != 0 {
        return false;
    }
    let spare = |f: usize| {
        let held = if f == CORNER { 2 } else { 0 };
        s.mine[f].saturating_sub(held)
    };
    let (a, b) = (
        THEIR_CORNER - usize::from(dice.d1),
        THEIR_CORNER - usize::from(dice.d2),
    );
    if a == b {
        spare(a) >= 2
    } else {
        spare(a) >= 1 && spare(b) >= 1
    }
}

/// The ways a fill is made (§3.4): several only when exactly one checker
/// is missing, one per number (each direct number, the sum through a
/// rest the checker may stop on) by which a surplus checker reaches the
/// half-field; a checker is surplus if it stands behind the jan, or if
/// its field keeps two without it (the corner's last two never count).
fn fill_ways(s: &View, jan: Jan, numbers: &Numbers) -> u32 {
    if s.missing(jan) != 1 {
        return 1;
    }
    let fields = jan.fields();
    let Some(half) = fields.clone().find(|&f| s.mine[f] == 1) else {
        return 1;
    };
    // The corner's last two never count: like a field of the jan, it
    // must keep two.
    let surplus = |o: usize| {
        if o == CORNER || fields.contains(&o) {
            s.mine[o] >= 3
        } else {
            o < *fields.start() && s.mine[o] >= 1
        }
    };
    let reach = |n: usize| half.checked_sub(n).filter(|&o| o >= 1 && surplus(o));
    let mut ways = numbers
        .direct
        .iter()
        .filter(|&&n| reach(n).is_some())
        .count() as u32;
    if let Some(origin) = reach(numbers.sum)
        && numbers
            .direct
            .iter()
            .any(|&leg| s.theirs[origin + leg] == 0)
    {
        ways += 1;
    }
    ways.max(1)
}
