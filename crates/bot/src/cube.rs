//! The cube: whether the side to roll doubles and whether the other side
//! takes, from the net's cubeless value of the position.
//!
//! - Money play: Janowski's model ([`cubeful`]): the cubeless equity
//!   and a fully live cube's, weighted by the cube's life, with the
//!   Jacoby rule when the match's settings have it (gammons do not count
//!   while the cube is centred).
//! - Match play: GNU Backgammon's method (J. Thyssen, "Cubeful
//!   evaluation" in the gnubg manual; after Janowski): the cubeless
//!   chances turned into match-winning chances ([`Met`]) with a dead
//!   cube and with a fully live one, and the two weighted by the cube's
//!   life ([`cube_life`], by the kind of position). The live cube's cash
//!   points are found from the highest cube level that still matters
//!   down, each side's take counting the redouble it then owns. The
//!   gammon price at each score and cube level comes from the table
//!   itself. A cube that cannot matter (its owner wins the match with
//!   any win) is dead, as is the cube at 2-away 2-away (gnubg's rule),
//!   and the Crawford game has none (the engine refuses the double);
//!   after it, the table's post-Crawford equities make the trailer
//!   double at once.
//! - Checked against GNU Backgammon's own cube analysis: given gnubg's
//!   chances, the model gives gnubg's equities
//!   (tests/data/gnubg-cube-hints.txt, [`crate::cube_examples`]).
//!
//! Equities are per unit of the cube as it stands, for the side to roll;
//! in a match they are match-winning chances normalised as gnubg does
//! (winning a single game at the cube is +1, losing one -1), so that one
//! rule decides both.

use bg_engine::game::{Crawford, Match};
use bg_engine::{BAR, Board, Seat};

use crate::met::Met;
use crate::net::{LOSE_BACKGAMMON, LOSE_GAMMON, WIN, WIN_BACKGAMMON, WIN_GAMMON};
use crate::search::Evaluation;

/// What to do with the cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubeAction {
    Double,
    NoDouble,
    Take,
    Pass,
}

impl CubeAction {
    pub fn name(self) -> &'static str {
        match self {
            CubeAction::Double => "double",
            CubeAction::NoDouble => "no_double",
            CubeAction::Take => "take",
            CubeAction::Pass => "pass",
        }
    }
}

/// Janowski's cube life index ("cube efficiency" in gnubg): how much of
/// a live cube's value a position keeps (0 a dead cube, 1 a fully live
/// one). R. Janowski, "Take-Points in Money Games", 1993; the values by
/// kind of position are GNU Backgammon's defaults (`show
/// cubeefficiency` in gnubg 1.07): 0.68 while the sides are in contact.
pub const CUBE_LIFE: f32 = 0.68;
/// In a race: 0.55 plus 0.00125 a pip of the side to roll, kept between
/// 0.6 and 0.7 (a long race keeps more of the cube's life).
const RACE_LIFE: (f32, f32) = (0.55, 0.00125);
const RACE_LIFE_RANGE: (f32, f32) = (0.6, 0.7);
/// Both sides bearing off (every checker in its home board): 0.6.
const BEAROFF_LIFE: f32 = 0.6;

/// The cube's life in `board` with `roller` to roll, by the kind of
/// position, as gnubg sets it: contact, a race, both sides bearing off.
pub fn cube_life(board: &Board, roller: Seat) -> f32 {
    // The rearmost checker of each side, in its own numbering (the bar
    // is 25): the sides have met unless the two add up to 25 or less.
    let rearmost = |seat: Seat| {
        (1..=BAR)
            .rev()
            .find(|&p| board.count(seat, p) > 0)
            .map_or(0, u32::from)
    };
    if rearmost(Seat::White) + rearmost(Seat::Black) > u32::from(BAR) {
        CUBE_LIFE
    } else if board.all_home(Seat::White) && board.all_home(Seat::Black) {
        BEAROFF_LIFE
    } else {
        let (base, per_pip) = RACE_LIFE;
        (base + per_pip * board.pip_count(roller) as f32)
            .clamp(RACE_LIFE_RANGE.0, RACE_LIFE_RANGE.1)
    }
}

/// Who owns the cube, from the side to roll's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubeOwner {
    Centred,
    Me,
    Them,
}

/// A money position's cubeful equity per unit of the cube for the side
/// to roll (`value`, its evaluation before rolling), as Janowski
/// estimates it: the cubeless equity weighted by 1 - `life` plus the
/// fully live cube's weighted by `life`.
///
/// Live, with W the average value of the roller's wins and L of its
/// losses (gammons and backgammons counted), the other side's take point
/// is (L - 1/2) / (W + L + 1/2) and the roller's cash point
/// (L + 1) / (W + L + 1/2); the equity is linear in the chance of winning
/// between the points that bound it: -L at 0, -1 at the take point where
/// the other side can cash, +1 at the cash point where the roller can,
/// +W at 1. With `jacoby` (the cube centred), no gammon counts: the
/// cubeless equity is the gammonless one, and the live equity stays -1
/// below the take point and +1 above the cash point (the points
/// themselves still count the gammons that doubling would bring in).
pub fn cubeful(value: &Evaluation, owner: CubeOwner, life: f32, jacoby: bool) -> f32 {
    let o = &value.outputs;
    let p = o[WIN];
    // Nearly sure to win or to lose: nothing left for the cube.
    if p <= 1e-7 || p >= 1.0 - 1e-7 {
        return value.equity;
    }
    // Gammons include backgammons: a backgammon counts both.
    let w = 1.0 + (o[WIN_GAMMON] + o[WIN_BACKGAMMON]) / p;
    let l = 1.0 + (o[LOSE_GAMMON] + o[LOSE_BACKGAMMON]) / (1.0 - p);
    let take = (l - 0.5) / (w + l + 0.5);
    let cash = (l + 1.0) / (w + l + 0.5);
    // The line through (x0, y0) and (x1, y1) at p.
    let line = |(x0, y0): (f32, f32), (x1, y1): (f32, f32)| y0 + (y1 - y0) * ratio(p - x0, x1 - x0);
    let low = (0.0, -l);
    let high = (1.0, w);
    let live = match owner {
        CubeOwner::Centred if p < take => match jacoby {
            true => -1.0,
            false => line(low, (take, -1.0)),
        },
        CubeOwner::Centred if p < cash => line((take, -1.0), (cash, 1.0)),
        CubeOwner::Centred => match jacoby {
            true => 1.0,
            false => line((cash, 1.0), high),
        },
        CubeOwner::Me if p < cash => line(low, (cash, 1.0)),
        CubeOwner::Me => line((cash, 1.0), high),
        CubeOwner::Them if p < take => line(low, (take, -1.0)),
        CubeOwner::Them => line((take, -1.0), high),
    };
    let dead = if jacoby {
        gammonless(value).equity
    } else {
        value.equity
    };
    (1.0 - life) * dead + life * live
}

/// The three cube equities of the side to roll, per unit of the cube as
/// it stands: not doubling, doubling and being taken (the cube then the
/// other side's, twice the value), doubling and being passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubeEquities {
    pub no_double: f32,
    pub double_take: f32,
    pub double_pass: f32,
    /// What a difference of these equities is worth in EMG (equity
    /// normalised to a money game at a cube of 1, as GNU Backgammon
    /// reports errors).
    pub emg: f32,
}

impl CubeEquities {
    /// The cube equities of `roller` (the side to roll in `board`, valued
    /// `value`) in `m`: by the match model in a match, by Janowski's in
    /// money play (and in a match longer than the table, or without a
    /// table); the cube's life by the kind of position ([`cube_life`]).
    pub fn of_match(m: &Match, board: &Board, roller: Seat, value: &Evaluation) -> CubeEquities {
        let owner = owner(m, roller);
        let life = cube_life(board, roller);
        match match_score(m, roller) {
            Some((score, met)) => {
                CubeEquities::in_match(value, owner, m.cube.value, score, met, life)
            }
            None => {
                let s = &m.settings;
                let jacoby = s.is_money() && s.jacoby;
                CubeEquities::money(value, owner, m.cube.value, jacoby, life)
            }
        }
    }

    /// Money play: for the side to roll, valued `value`, the cube of
    /// value `cube` owned by `owner` and a cube life `life`
    /// ([`cubeful`]); with `jacoby`, the cube centred, not doubling is
    /// worth no gammon.
    pub fn money(
        value: &Evaluation,
        owner: CubeOwner,
        cube: u32,
        jacoby: bool,
        life: f32,
    ) -> CubeEquities {
        let jacoby = jacoby && owner == CubeOwner::Centred;
        CubeEquities {
            no_double: cubeful(value, owner, life, jacoby),
            double_take: 2.0 * cubeful(value, CubeOwner::Them, life, false),
            double_pass: 1.0,
            emg: cube as f32,
        }
    }

    /// Match play: for the side to roll, valued `value`, the cube of
    /// value `cube` owned by `owner`, at `score`, by the table `met`,
    /// with a cube life `life`.
    pub fn in_match(
        value: &Evaluation,
        owner: CubeOwner,
        cube: u32,
        score: MatchScore,
        met: &Met,
        life: f32,
    ) -> CubeEquities {
        let model = MatchCube::new(value, score, met, life);
        let cube = i64::from(cube);
        let (win, lose) = (model.cash_mine(cube), model.cash_theirs(cube));
        let spread = (win - lose).max(f32::EPSILON);
        let normalised = |mwc: f32| (2.0 * mwc - win - lose) / spread;
        CubeEquities {
            no_double: normalised(model.cubeful(cube, owner)),
            double_take: normalised(model.cubeful(2 * cube, CubeOwner::Them)),
            double_pass: normalised(win),
            emg: cube as f32,
        }
    }

    /// What doubling is worth: the other side takes or passes, whichever
    /// is better for it.
    pub fn doubled(&self) -> f32 {
        self.double_take.min(self.double_pass)
    }

    /// Whether the side to roll doubles (not when too good: playing on
    /// for a gammon is worth more than the point).
    pub fn double(&self) -> CubeAction {
        if self.doubled() > self.no_double {
            CubeAction::Double
        } else {
            CubeAction::NoDouble
        }
    }

    /// Whether the side doubled takes.
    pub fn answer(&self) -> CubeAction {
        if self.double_take <= self.double_pass {
            CubeAction::Take
        } else {
            CubeAction::Pass
        }
    }

    /// The roller's equity after `action` (its own, or the answer to its
    /// double).
    pub fn after(&self, action: CubeAction) -> f32 {
        match action {
            CubeAction::NoDouble => self.no_double,
            CubeAction::Double => self.doubled(),
            CubeAction::Take => self.double_take,
            CubeAction::Pass => self.double_pass,
        }
    }
}

/// Who owns `m`'s cube, from `seat`'s view.
pub fn owner(m: &Match, seat: Seat) -> CubeOwner {
    match m.cube.owner {
        None => CubeOwner::Centred,
        Some(owner) if owner == seat => CubeOwner::Me,
        Some(_) => CubeOwner::Them,
    }
}

/// The score of `m` seen by `seat`, and the table the match model reads
/// it with; `None` in money play and in a match longer than the table.
pub fn match_score(m: &Match, seat: Seat) -> Option<(MatchScore, &'static Met)> {
    let s = &m.settings;
    let met = Met::built_in().filter(|_| !s.is_money())?;
    if s.match_length as usize > crate::met::LONGEST {
        return None;
    }
    let away = |seat: Seat| i64::from(s.match_length) - i64::from(m.score[seat.index()]);
    let score = MatchScore {
        away: [away(seat), away(seat.other())],
        crawford_played: m.crawford != Crawford::Before || !s.crawford,
    };
    Some((score, met))
}

/// What the game `value` says (the chances of the side it is valued by)
/// is worth to that side at `score` with the cube at `cube`, the cube
/// dead: its match-winning chances, each win and loss of one, two or
/// three times the cube read from the table `met`, normalised as cube
/// equities are (a single game won at this cube +1, lost -1). How a
/// play is valued in a match, where a gammon is worth what the score
/// makes it (nothing for the side that needs one point; double for the
/// side that needs two), not two single games.
pub fn match_value(value: &Evaluation, score: MatchScore, cube: u32, met: &Met) -> f32 {
    let model = MatchCube::new(value, score, met, 0.0);
    let cube = i64::from(cube);
    let (win, lose) = (model.cash_mine(cube), model.cash_theirs(cube));
    let spread = (win - lose).max(f32::EPSILON);
    (2.0 * model.dead(cube) - win - lose) / spread
}

/// `value` with its gammons and backgammons counted as single games.
fn gammonless(value: &Evaluation) -> Evaluation {
    let p = value.outputs[WIN];
    Evaluation {
        outputs: [p, 0.0, 0.0, 0.0, 0.0],
        equity: 2.0 * p - 1.0,
    }
}

/// A match's score as the cube sees it, from the side to roll's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchScore {
    /// The points the side to roll still needs, then the other side.
    pub away: [i64; 2],
    /// Whether a game after this one with a side at 1-away is a
    /// post-Crawford game: this one is the Crawford game or after it, or
    /// the match has no Crawford rule.
    pub crawford_played: bool,
}

/// The match model of one position: its chances, the score, the table.
/// Chances and match-winning chances (MWC) are the side to roll's ("X";
/// the other side "Y").
struct MatchCube<'a> {
    met: &'a Met,
    score: MatchScore,
    /// The cube's life ([`cube_life`]).
    life: f32,
    /// X's chance of winning the game.
    p: f32,
    /// Of X's wins, the shares that are gammons (not backgammons) and
    /// backgammons; then the same of Y's wins.
    mine: (f32, f32),
    theirs: (f32, f32),
}

impl MatchCube<'_> {
    fn new<'a>(value: &Evaluation, score: MatchScore, met: &'a Met, life: f32) -> MatchCube<'a> {
        let o = &value.outputs;
        let p = o[WIN].clamp(0.0, 1.0);
        let shares = |chance: f32, gammons: f32, backgammons: f32| {
            if chance <= f32::EPSILON {
                return (0.0, 0.0);
            }
            let bg = (backgammons / chance).clamp(0.0, 1.0);
            let g = ((gammons - backgammons) / chance).clamp(0.0, 1.0 - bg);
            (g, bg)
        };
        MatchCube {
            met,
            score,
            life,
            p,
            mine: shares(p, o[WIN_GAMMON], o[WIN_BACKGAMMON]),
            theirs: shares(1.0 - p, o[LOSE_GAMMON], o[LOSE_BACKGAMMON]),
        }
    }

    /// X's MWC when X has won `mine` points and Y `theirs` more.
    fn after(&self, mine: i64, theirs: i64) -> f32 {
        let [x, y] = self.score.away;
        self.met.equity(
            x - mine,
            y - theirs,
            self.score.crawford_played || x == 1 || y == 1,
        )
    }

    /// X's MWC when X wins a single game at cube `v` (Y passed a double).
    fn cash_mine(&self, v: i64) -> f32 {
        self.after(v, 0)
    }

    /// X's MWC when Y wins a single game at cube `v` (X passed).
    fn cash_theirs(&self, v: i64) -> f32 {
        self.after(0, v)
    }

    /// X's MWC when X wins the game at cube `v`, gammons as likely as the
    /// chances say.
    fn win(&self, v: i64) -> f32 {
        let (g, bg) = self.mine;
        (1.0 - g - bg) * self.after(v, 0) + g * self.after(2 * v, 0) + bg * self.after(3 * v, 0)
    }

    /// X's MWC when Y wins the game at cube `v`.
    fn lose(&self, v: i64) -> f32 {
        let (g, bg) = self.theirs;
        (1.0 - g - bg) * self.after(0, v) + g * self.after(0, 2 * v) + bg * self.after(0, 3 * v)
    }

    /// The chance above which X, at cube `v` and free to double, doubles
    /// Y out (Y's take point, seen by X); `None` when X's double cannot
    /// matter (X wins the match with any win at `v`).
    fn doubles_out(&self, v: i64) -> Option<f32> {
        if v >= self.score.away[0] {
            return None;
        }
        // Y takes at 2v and owns the cube; Y passes above the chance
        // where taking is worth less to Y than losing v points.
        let (next, pass) = (2 * v, self.cash_mine(v));
        let point = match self.doubled_out(next) {
            // Y's redouble is live: X's MWC after the take runs from Y's
            // cash point (Y redoubles X out) to a win at 2v.
            Some(low) => {
                let top = self.win(next);
                let bottom = self.cash_theirs(next);
                low + (1.0 - low) * ratio(pass - bottom, top - bottom)
            }
            None => ratio(pass - self.lose(next), self.win(next) - self.lose(next)),
        };
        Some(point.clamp(0.0, 1.0))
    }

    /// The chance below which Y, at cube `v` and free to double, doubles
    /// X out (X's take point); `None` when Y's double cannot matter.
    fn doubled_out(&self, v: i64) -> Option<f32> {
        if v >= self.score.away[1] {
            return None;
        }
        let (next, pass) = (2 * v, self.cash_theirs(v));
        let point = match self.doubles_out(next) {
            // X owns the redouble: X's MWC after the take runs from a
            // loss at 2v to X's own cash point.
            Some(high) => {
                let bottom = self.lose(next);
                high * ratio(pass - bottom, self.cash_mine(next) - bottom)
            }
            None => ratio(pass - self.lose(next), self.win(next) - self.lose(next)),
        };
        Some(point.clamp(0.0, 1.0))
    }

    /// X's MWC at cube `v` owned by `owner` with a fully live cube:
    /// linear in X's chances between the points that bound it: a game
    /// lost at 0, Y's cash point (when Y may double), X's cash point
    /// (when X may), a game won at 1. Past a cash point the side ahead
    /// plays on for its gammons: from a cash to the game won or lost.
    fn live(&self, v: i64, owner: CubeOwner) -> f32 {
        let mut knots = [(0.0, self.lose(v)); 4];
        let mut n = 1;
        let mut add = |knot| {
            knots[n] = knot;
            n += 1;
        };
        if let (CubeOwner::Centred | CubeOwner::Them, Some(point)) = (owner, self.doubled_out(v)) {
            add((point, self.cash_theirs(v)));
        }
        if let (CubeOwner::Centred | CubeOwner::Me, Some(point)) = (owner, self.doubles_out(v)) {
            add((point, self.cash_mine(v)));
        }
        add((1.0, self.win(v)));
        let p = self.p;
        knots[..n]
            .windows(2)
            .find(|pair| p <= pair[1].0)
            .map_or(self.win(v), |pair| {
                let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                y0 + (y1 - y0) * ratio(p - x0, x1 - x0)
            })
    }

    /// X's MWC with the cube dead at `v`: the game's chances alone.
    fn dead(&self, v: i64) -> f32 {
        self.lose(v) + self.p * (self.win(v) - self.lose(v))
    }

    /// X's cubeful MWC at cube `v` owned by `owner`: the live cube's and
    /// the dead cube's, weighted by the cube's life. At 2-away 2-away the
    /// cube is taken as dead, as gnubg takes it (whoever is ahead doubles
    /// at once, and the 2-cube ends the match).
    fn cubeful(&self, v: i64, owner: CubeOwner) -> f32 {
        if self.score.away == [2, 2] {
            return self.dead(v);
        }
        self.life * self.live(v, owner) + (1.0 - self.life) * self.dead(v)
    }
}

/// `a / b`, or 0 when `b` is too small to divide by.
fn ratio(a: f32, b: f32) -> f32 {
    if b.abs() <= f32::EPSILON { 0.0 } else { a / b }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn met() -> &'static Met {
        Met::built_in().expect("the committed table reads")
    }

    /// A position valued `p` to win, with these shares of the roller's
    /// wins and of the other side's that are gammons (not backgammons)
    /// and backgammons, as gnubg reports its gammon and bg rates.
    fn valued(p: f32, (g, bg): (f32, f32), (og, obg): (f32, f32)) -> Evaluation {
        let outputs = [
            p,
            p * (g + bg),
            p * bg,
            (1.0 - p) * (og + obg),
            (1.0 - p) * obg,
        ];
        let equity = crate::net::equity(&outputs);
        Evaluation { outputs, equity }
    }

    fn score(away: [i64; 2], crawford_played: bool) -> MatchScore {
        MatchScore {
            away,
            crawford_played,
        }
    }

    /// A play in a match is valued by what its chances are worth at the
    /// score: at double match point (1-away 1-away) a gammon wins the
    /// match as a single game does, so gammons change nothing and the
    /// value is 2p - 1; at 5-away 5-away they count, as in money play;
    /// and a side that needs only the cube's points (2-away at a 2-cube)
    /// gains nothing by its gammons, while the other side's still hurt.
    #[test]
    fn a_play_s_match_value_prices_gammons_as_the_score_does() {
        let plain = valued(0.6, (0.0, 0.0), (0.0, 0.0));
        let gammons = valued(0.6, (0.4, 0.05), (0.3, 0.0));
        let dmp = score([1, 1], true);
        assert!((match_value(&plain, dmp, 1, met()) - 0.2).abs() < 1e-4);
        assert!((match_value(&gammons, dmp, 1, met()) - 0.2).abs() < 1e-4);
        let long = score([5, 5], false);
        let gain = match_value(&gammons, long, 1, met()) - match_value(&plain, long, 1, met());
        assert!(gain > 0.1, "{gain}");
        let mine_only = valued(0.6, (0.4, 0.05), (0.0, 0.0));
        let at_two = score([2, 5], false);
        let same =
            match_value(&mine_only, at_two, 2, met()) - match_value(&plain, at_two, 2, met());
        assert!(same.abs() < 1e-4, "{same}");
        let theirs = valued(0.6, (0.0, 0.0), (0.3, 0.0));
        assert!(
            match_value(&theirs, at_two, 2, met()) < match_value(&plain, at_two, 2, met()) - 0.05
        );
    }

    /// The worked examples: GNU Backgammon 1.07's `show marketwindow`
    /// at 16 match scores (`scripts/bot-grade/marketwindow.py`, run on
    /// 5 December 2026; the gammon rates are those of the opening
    /// position gnubg was at). Each row: the doubler's away, the other's,
    /// post-Crawford, the doubler's gammon and bg rates, the other's,
    /// then gnubg's cash points (the other side's take point, seen by
    /// the doubler) with a dead cube and with a live one.
    /// A share of wins: gammons (not backgammons), backgammons.
    type Rates = (f32, f32);

    #[rustfmt::skip]
    const GNUBG_MARKET_WINDOWS: &[(i64, i64, bool, Rates, Rates, f32, f32)] = &[
            (2, 4, false, (0.2485, 0.0108), (0.2697, 0.0125), 0.7104, 0.8144),
            (4, 2, false, (0.2697, 0.0125), (0.2485, 0.0108), 0.6248, 0.6248),
            (5, 5, false, (0.2532, 0.0113), (0.2714, 0.0130), 0.6955, 0.7434),
            (5, 5, false, (0.2714, 0.0130), (0.2532, 0.0113), 0.6852, 0.7370),
            (9, 5, false, (0.2544, 0.0113), (0.2716, 0.0132), 0.6895, 0.7030),
            (5, 9, false, (0.2716, 0.0132), (0.2544, 0.0113), 0.7047, 0.7922),
            (5, 8, false, (0.2509, 0.0110), (0.2704, 0.0127), 0.7047, 0.7916),
            (8, 5, false, (0.2704, 0.0127), (0.2509, 0.0110), 0.6740, 0.6925),
            (5, 13, false, (0.2252, 0.0084), (0.2627, 0.0065), 0.7385, 0.8289),
            (13, 5, false, (0.2627, 0.0065), (0.2252, 0.0084), 0.6748, 0.6810),
            (3, 2, false, (0.2711, 0.0125), (0.2568, 0.0119), 0.6503, 0.6503),
            (2, 3, false, (0.2568, 0.0119), (0.2711, 0.0125), 0.6758, 0.7508),
            (15, 13, false, (0.2615, 0.0123), (0.2557, 0.0114), 0.6890, 0.7311),
            (13, 15, false, (0.2557, 0.0114), (0.2615, 0.0123), 0.6948, 0.7543),
            (7, 7, false, (0.2528, 0.0112), (0.2713, 0.0130), 0.6939, 0.7425),
            (7, 7, false, (0.2713, 0.0130), (0.2528, 0.0112), 0.6848, 0.7361),
            (2, 2, false, (0.2513, 0.0111), (0.2727, 0.0129), 0.6774, 0.6774),
            (2, 2, false, (0.2727, 0.0129), (0.2513, 0.0111), 0.6774, 0.6774),
            (3, 5, false, (0.2504, 0.0109), (0.2704, 0.0126), 0.6948, 0.7783),
            (5, 3, false, (0.2704, 0.0126), (0.2504, 0.0109), 0.6815, 0.7053),
            (4, 2, false, (0.2530, 0.0108), (0.2661, 0.0134), 0.6339, 0.6339),
            (2, 4, false, (0.2661, 0.0134), (0.2530, 0.0108), 0.7062, 0.8144),
            (13, 3, false, (0.2689, 0.0132), (0.2520, 0.0122), 0.6569, 0.6525),
            (3, 13, false, (0.2520, 0.0122), (0.2689, 0.0132), 0.7882, 0.8797),
            (3, 1, true, (0.2687, 0.0125), (0.2478, 0.0107), 0.7618, 0.7618),
            (4, 1, true, (0.2695, 0.0117), (0.2590, 0.0142), 0.5105, 0.5105),
            (4, 1, true, (0.2733, 0.0116), (0.2504, 0.0133), 0.5090, 0.5090),
            (7, 1, true, (0.2689, 0.0120), (0.2466, 0.0105), 0.7876, 0.7876),
    ];

    #[test]
    fn cash_points_are_gnubg_s_market_window_at_every_score_listed() {
        for &(away, other, post, mine, theirs, dead, live) in GNUBG_MARKET_WINDOWS {
            let value = valued(0.5, mine, theirs);
            let m = MatchCube::new(&value, score([away, other], post), met(), CUBE_LIFE);
            let (pass, next) = (m.cash_mine(1), 2);
            let dead_point = ratio(pass - m.lose(next), m.win(next) - m.lose(next));
            let live_point = m.doubles_out(1).expect("the doubler's cube is live");
            let at = format!("{away}-away {other}-away post-Crawford {post}");
            // gnubg prints two decimals of a percentage.
            assert!(
                (dead_point - dead).abs() < 2e-4,
                "{at}: dead {dead_point} vs {dead}"
            );
            assert!(
                (live_point - live).abs() < 2e-4,
                "{at}: live {live_point} vs {live}"
            );
        }
    }

    /// The worked examples: GNU Backgammon 1.07's 0-ply cube analysis
    /// of 32 positions of the standard corpus (16 in contact, 10 races,
    /// 6 with both sides bearing off) at 14 scores and cubes
    /// (tests/data/gnubg-cube-hints.txt, its README says how it was
    /// made): given gnubg's chances, the model gives gnubg's equities.
    #[test]
    fn cube_equities_are_gnubg_s_at_0_ply_from_gnubg_s_chances() {
        let text = include_str!("../../../tests/data/gnubg-cube-hints.txt");
        let hints = crate::cube_examples::GnubgCubeHint::read(text).expect("the examples read");
        assert_eq!(hints.len(), 32);
        // gnubg prints chances and equities to 3 decimals: 0.01 is
        // room for its rounding (the worst seen is 0.0031).
        let mut wrong = Vec::new();
        for hint in &hints {
            let e = hint.model_s(&hint.value());
            let got = [e.no_double, e.double_take, e.double_pass];
            for (what, (g, x)) in ["no double", "double/take", "double/pass"]
                .iter()
                .zip(got.iter().zip(hint.equities))
            {
                if (g - x).abs() >= 0.01 {
                    wrong.push(format!("{}: {what} {g}, gnubg {x}", hint.line));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn gammonless_2_away_2_away_take_point_is_the_crawford_game_s_equity() {
        // Doubled at 2-away 2-away, the taker plays for the match: a pass
        // leaves it 2-away against 1-away in the Crawford game, worth
        // 1 - 0.67736 by the table; with no gammons and a dead cube the
        // take point is exactly that.
        let value = valued(0.5, (0.0, 0.0), (0.0, 0.0));
        let m = MatchCube::new(&value, score([2, 2], false), met(), CUBE_LIFE);
        let point = m.doubles_out(1).expect("a live cube");
        assert!((point - 0.67736).abs() < 1e-5, "{point}");
    }

    #[test]
    fn a_cube_its_owner_wins_the_match_with_is_dead() {
        // 2-away owning a 2-cube cannot gain by redoubling: no cash point,
        // and its live value is the dead one's line.
        let value = valued(0.6, (0.2, 0.01), (0.2, 0.01));
        let m = MatchCube::new(&value, score([2, 5], false), met(), CUBE_LIFE);
        assert_eq!(m.doubles_out(2), None);
        assert!((m.live(2, CubeOwner::Me) - m.dead(2)).abs() < 1e-6);
        // At 1-away post-Crawford the leader's cube is dead at once.
        let m = MatchCube::new(&value, score([1, 4], true), met(), CUBE_LIFE);
        assert_eq!(m.doubles_out(1), None);
    }

    #[test]
    fn post_crawford_the_trailer_doubles_at_once() {
        // Even at the opening position's chances, the trailer's double
        // costs nothing: the leader's redouble is dead, and every game
        // the trailer wins it must win anyway.
        for away in 2..=9 {
            let value = valued(0.5, (0.27, 0.012), (0.25, 0.011));
            let e = CubeEquities::in_match(
                &value,
                CubeOwner::Centred,
                1,
                score([away, 1], true),
                met(),
                CUBE_LIFE,
            );
            assert_eq!(e.double(), CubeAction::Double, "{away}-away: {e:?}");
            // And the leader takes at those chances (its free drop
            // aside, a pass gives the trailer a point it needs).
            assert_eq!(e.answer(), CubeAction::Take, "{away}-away: {e:?}");
        }
    }

    #[test]
    fn a_double_to_a_taker_with_a_live_recube_is_taken_further_than_with_a_dead_one() {
        // The trap, measured: a dead cube undervalues taking. At
        // 5-away 5-away the live take point is below the dead one.
        let value = valued(0.5, (0.26, 0.012), (0.26, 0.012));
        let m = MatchCube::new(&value, score([5, 5], false), met(), CUBE_LIFE);
        let dead = ratio(m.cash_mine(1) - m.lose(2), m.win(2) - m.lose(2));
        let live = m.doubles_out(1).expect("a live cube");
        assert!(live > dead + 0.03, "live {live} dead {dead}");
    }

    #[test]
    fn equities_are_normalised_as_gnubg_does_a_pass_is_plus_one() {
        // A centred 1-cube at 7-away 7-away, in contact.
        let at_7_away = |value: &Evaluation| {
            let score = score([7, 7], false);
            CubeEquities::in_match(value, CubeOwner::Centred, 1, score, met(), CUBE_LIFE)
        };
        let e = at_7_away(&valued(0.7, (0.2, 0.01), (0.2, 0.01)));
        assert!((e.double_pass - 1.0).abs() < 1e-6);
        assert_eq!(e.emg, 1.0);
        // 70% at 7-away 7-away (cash point about 74%): double, take.
        assert_eq!(e.double(), CubeAction::Double, "{e:?}");
        assert_eq!(e.answer(), CubeAction::Take, "{e:?}");
        // Far ahead: too good to double... or a pass; never a take.
        let e = at_7_away(&valued(0.9, (0.5, 0.02), (0.1, 0.0)));
        assert_eq!(e.answer(), CubeAction::Pass, "{e:?}");
    }

    #[test]
    fn money_play_with_the_jacoby_rule_counts_no_gammon_on_a_centred_cube() {
        // Gammonish and behind the cash point: without Jacoby playing on
        // for the gammon is worth more than with it.
        let value = valued(0.7, (0.4, 0.02), (0.1, 0.0));
        let free = CubeEquities::money(&value, CubeOwner::Centred, 1, false, CUBE_LIFE);
        let jacoby = CubeEquities::money(&value, CubeOwner::Centred, 1, true, CUBE_LIFE);
        assert!(jacoby.no_double < free.no_double, "{jacoby:?} {free:?}");
        assert_eq!(jacoby.double_take, free.double_take);
    }
}
