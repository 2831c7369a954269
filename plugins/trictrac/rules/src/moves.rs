//! Legal plays (docs/trictrac.md §2): every way to play a roll, then the
//! obligations in their order of precedence.
//!
//! A roll is at most two die-moves, even on a doublet (§2.1). The search
//! makes the die-moves one at a time with the checks that hold on every
//! move (no landing on an opposing checker, bearing off only from home,
//! an overflow only from the farthest checker), and judges what must hold
//! when the play is over on the final position: nobody on the opponent's
//! corner, never one checker alone on one's own corner, nobody in a jan
//! the opponent can still fill. A field that is left again within the
//! roll was only a rest of a tout d'une, so those final checks are
//! exactly the rest rules of §2.3-2.5 (an empty corner may be a rest; an
//! opponent's fillable grand jan may be rested on, never stopped on).
//!
//! Then, in this order (§2.7): the most dice; the larger die; the corner
//! by effect rather than by power; the bearing-off rule that a number
//! playable inside is not spent as an overflow (Laws2013 art. VIII); the
//! exit of the last checker when it can be made (so the exit scored on
//! the roll, §3.7, is the exit played); fill or keep (and the pile de
//! misère when that option is on).

use bg_variant_api::engine::{Board, Dice, LegalPlay, Move, Play, Seat};

use crate::view::{CORNER, Jan, RAIL, THEIR_CORNER, View, point};

/// One die-move: a checker from field `from` by `die`; `to` is
/// `from + die`, or [`RAIL`] when it bears off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    from: usize,
    to: usize,
    die: u8,
    overflow: bool,
}

/// One way to play the roll, before it is merged with the others that
/// reach the same position.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub play: Play,
    pub after: View,
    /// How many of the roll's two numbers it plays.
    pub dice_used: u8,
    /// The larger number of a non-doublet is among them.
    pub uses_larger: bool,
    /// Spends a number as an overflow that could have been played inside.
    pub wasteful_overflow: bool,
}

impl Candidate {
    /// What this play leaves made that a play must make or keep when it
    /// can (§2.7, §3.8), one bit each: the jans full after it, and the
    /// pile when `pile` counts.
    fn made(&self, pile: bool) -> u8 {
        let jans = Jan::ALL
            .into_iter()
            .enumerate()
            .filter(|&(_, j)| self.after.is_full(j))
            .fold(0, |bits, (i, _)| bits | 1 << i);
        jans | u8::from(pile && self.after.is_pile()) << Jan::ALL.len()
    }

    /// Whether the last of the mover's checkers is off after the play.
    pub fn exits_all(&self) -> bool {
        self.after.mine[RAIL] == 15
    }
}

/// The rules of one roll for one mover.
pub struct Roll {
    pub start: View,
    pub dice: Dice,
    /// The opponent can still fill his grand jan (the mover's f13..f18).
    pub forbid_grand: bool,
    /// The opponent can still fill his petit jan (the mover's f19..f24).
    pub forbid_retour: bool,
    /// The pile de misère option.
    pub pile: bool,
    /// Whether each number (by its value) can be played inside the board
    /// from the roll's start.
    inside: [bool; 7],
}

impl Roll {
    pub fn new(start: View, dice: Dice, pile: bool) -> Roll {
        let mut roll = Roll {
            start,
            dice,
            forbid_grand: start.opponent_can_fill(13..=18),
            forbid_retour: start.opponent_can_fill(19..=24),
            pile,
            inside: [false; 7],
        };
        for die in [dice.d1, dice.d2] {
            roll.inside[usize::from(die)] = roll.playable_inside(die);
        }
        roll
    }

    /// The numbers in the order they may be played: both orders of a
    /// single roll, the one order of a doublet.
    fn orders(&self) -> Vec<[u8; 2]> {
        let (a, b) = (self.dice.d1, self.dice.d2);
        if a == b {
            vec![[a, a]]
        } else {
            vec![[a, b], [b, a]]
        }
    }

    fn larger(&self) -> u8 {
        self.dice.d1.max(self.dice.d2)
    }

    /// The die-moves `die` allows on `view`.
    fn steps(&self, view: &View, die: u8) -> Vec<Step> {
        let mut steps = Vec::new();
        let farthest = view.farthest();
        for from in 1..=24 {
            if view.mine[from] == 0 {
                continue;
            }
            let to = from + usize::from(die);
            if to <= 24 {
                if view.theirs[to] == 0 {
                    steps.push(Step {
                        from,
                        to,
                        die,
                        overflow: false,
                    });
                }
            } else if view.all_home() && (to == RAIL || Some(from) == farthest) {
                steps.push(Step {
                    from,
                    to: RAIL,
                    die,
                    overflow: to > RAIL,
                });
            }
        }
        steps
    }

    /// Whether `die` could be played inside the board (not off) from the
    /// roll's start (Laws2013 art. VIII: such a number is not spent as an
    /// overflow).
    fn playable_inside(&self, die: u8) -> bool {
        self.steps(&self.start, die).iter().any(|s| {
            let mut after = self.start;
            after.mine[s.from] -= 1;
            after.mine[s.to] += 1;
            s.to != RAIL && self.final_ok(&after)
        })
    }

    /// What must hold once the play is over (§2.4, §2.5).
    fn final_ok(&self, after: &View) -> bool {
        if after.mine[THEIR_CORNER] > 0 || after.mine[CORNER] == 1 {
            return false;
        }
        if self.forbid_grand && after.mine[13..=18].iter().any(|&c| c > 0) {
            return false;
        }
        if self.forbid_retour && after.mine[19..=24].iter().any(|&c| c > 0) {
            return false;
        }
        true
    }

    /// Every way to play the roll, before the obligations.
    pub fn candidates(&self) -> Vec<Candidate> {
        let mut out = Vec::new();
        let doublet = self.dice.d1 == self.dice.d2;
        out.push(self.candidate(&[], self.start, doublet));
        for [first, second] in self.orders() {
            for s1 in self.steps(&self.start, first) {
                let mid = apply(&self.start, s1);
                let one = [s1];
                if self.final_ok(&mid) {
                    out.push(self.candidate(&one, mid, doublet));
                }
                for s2 in self.steps(&mid, second) {
                    let after = apply(&mid, s2);
                    if self.final_ok(&after) {
                        out.push(self.candidate(&[s1, s2], after, doublet));
                    }
                }
            }
        }
        let effect = out
            .iter()
            .any(|c| c.dice_used == 2 && self.start.mine[CORNER] == 0 && c.after.mine[CORNER] >= 2);
        if !effect && let Some(power) = self.by_power() {
            out.push(power);
        }
        out
    }

    fn candidate(&self, steps: &[Step], after: View, doublet: bool) -> Candidate {
        let mut play = Play::EMPTY;
        for s in steps {
            play.try_push(Move::new(point(s.from), point(s.to)));
        }
        let wasteful_overflow = steps
            .iter()
            .any(|s| s.overflow && self.inside[usize::from(s.die)]);
        Candidate {
            play,
            after,
            dice_used: steps.len() as u8,
            uses_larger: !doublet && steps.iter().any(|s| s.die == self.larger()),
            wasteful_overflow,
        }
    }

    /// Taking the corner by power (§2.4): both corners empty, and one
    /// checker for each number (two from one field on a doublet) would
    /// land on the opponent's corner; they stop on the mover's instead.
    fn by_power(&self) -> Option<Candidate> {
        let s = &self.start;
        if s.mine[CORNER] != 0 || s.theirs[THEIR_CORNER] != 0 {
            return None;
        }
        let (d1, d2) = (usize::from(self.dice.d1), usize::from(self.dice.d2));
        let (a, b) = (THEIR_CORNER - d1, THEIR_CORNER - d2);
        let enough = if a == b {
            s.mine[a] >= 2
        } else {
            s.mine[a] >= 1 && s.mine[b] >= 1
        };
        if !enough {
            return None;
        }
        let mut after = *s;
        after.mine[a] -= 1;
        after.mine[b] -= 1;
        after.mine[CORNER] += 2;
        if !self.final_ok(&after) {
            return None;
        }
        let mut play = Play::EMPTY;
        play.try_push(Move::new(point(a), point(CORNER)));
        play.try_push(Move::new(point(b), point(CORNER)));
        Some(Candidate {
            play,
            after,
            dice_used: 2,
            uses_larger: d1 != d2,
            wasteful_overflow: false,
        })
    }

    /// The plays the obligations leave, in their order of precedence.
    pub fn legal(&self) -> Vec<Candidate> {
        let mut plays = self.candidates();
        let most = plays.iter().map(|c| c.dice_used).max().unwrap_or(0);
        plays.retain(|c| c.dice_used == most);
        if most == 1 && self.dice.d1 != self.dice.d2 && plays.iter().any(|c| c.uses_larger) {
            plays.retain(|c| c.uses_larger);
        }
        if plays.iter().any(|c| !c.wasteful_overflow) {
            plays.retain(|c| !c.wasteful_overflow);
        }
        if plays.iter().any(Candidate::exits_all) {
            plays.retain(Candidate::exits_all);
        }
        // Fill or keep: only the plays whose set of full jans no other
        // play's set strictly contains.
        let made: Vec<u8> = plays.iter().map(|c| c.made(self.pile)).collect();
        let strictly_contained = |mine: u8| {
            made.iter()
                .any(|&other| other != mine && other & mine == mine)
        };
        plays
            .into_iter()
            .zip(&made)
            .filter(|&(_, &mine)| !strictly_contained(mine))
            .map(|(play, _)| play)
            .collect()
    }
}

fn apply(view: &View, step: Step) -> View {
    let mut next = *view;
    next.mine[step.from] -= 1;
    next.mine[step.to] += 1;
    next
}

/// The legal plays of `seat` on `board` with `dice`, each resulting
/// position once, as the engine wants them.
pub fn legal_plays(board: &Board, seat: Seat, dice: Dice, pile: bool, out: &mut Vec<LegalPlay>) {
    out.clear();
    let roll = Roll::new(View::of(board, seat), dice, pile);
    for c in roll.legal() {
        let result = c.after.write(board, seat);
        if !out.iter().any(|lp| lp.result == result) {
            out.push(LegalPlay {
                play: c.play,
                result,
            });
        }
    }
}
