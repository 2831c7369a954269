//! Players for duels and training: each picks one of the legal plays of
//! a position, and answers a variant's decisions (tric-trac's stay or
//! go). The net's player is the service's computer player itself
//! ([`SearchPlayer`]: [`act::choose_play`] over the variant played as
//! the engine's `Rules`), so that a duel measures the code the bot seat,
//! `Hint` and `AnalyzeMatch` run; beside it, the players it is measured
//! against.

use bg_engine::game::RulesError;
use bg_engine::{BAR, Board, Dice, Geometry, LegalPlay, OFF, Seat};
use bg_variant_api::in_process::InProcess;
use bg_variant_api::{Decision, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::act;
use crate::level::Level;
use crate::net::Net;
use crate::scored;
use crate::search::{Evaluation, Evaluator};

/// Picks a play, and answers decisions.
pub trait Player<V: Variant> {
    /// The index in `plays` (never empty) of the play `seat` makes with
    /// `dice` in `state`.
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        plays: &[LegalPlay],
    ) -> Result<usize, RulesError>;

    /// The index of `seat`'s answer among `decision`'s choices, its roll
    /// being `dice`. The first choice unless the player knows better.
    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> Result<usize, RulesError> {
        let _ = (variant, state, seat, dice, decision);
        Ok(0)
    }
}

/// The service's computer player: `V` with its default options played
/// through the engine's [`Rules`](bg_engine::game::Rules) in process (the state as the bytes a
/// plugin keeps), each play chosen by [`act::choose_play`] and each
/// decision by [`act::choose_choice`] at the `level`'s search and noise,
/// as the bot seat chooses them.
pub struct SearchPlayer<'a, V: Variant> {
    rules: InProcess<V>,
    pub eval: Evaluator<'a>,
    pub level: Level,
    /// The noise's draws.
    pub rng: StdRng,
}

impl<'a, V: Variant> SearchPlayer<'a, V> {
    /// The net's player at `plies` (0 or 1), without noise.
    pub fn new(net: &'a Net, checkers: u8, plies: u8) -> SearchPlayer<'a, V> {
        SearchPlayer {
            rules: InProcess::new(V::default()),
            eval: Evaluator { net, checkers },
            level: Level {
                name: "",
                plies,
                noise: 0.0,
            },
            rng: StdRng::seed_from_u64(0),
        }
    }

    /// The same with `noise` (in equity) on each value, drawn from `rng`:
    /// GNU Backgammon's way of making weaker levels.
    pub fn with_noise(mut self, noise: f32, rng: StdRng) -> SearchPlayer<'a, V> {
        self.level.noise = noise;
        self.rng = rng;
        self
    }
}

impl<V: Variant> Player<V> for SearchPlayer<'_, V> {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        plays: &[LegalPlay],
    ) -> Result<usize, RulesError> {
        let bytes = variant.encode_state(state);
        act::choose_play(
            &self.rules,
            self.eval,
            self.level,
            (&bytes, seat, dice),
            plays,
            (|v: &Evaluation| v.equity, &mut self.rng),
        )
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> Result<usize, RulesError> {
        let bytes = variant.encode_state(state);
        act::choose_choice(
            &self.rules,
            self.eval,
            self.level,
            (&bytes, seat, Some(dice)),
            decision,
            false,
            &mut self.rng,
        )
    }
}

/// A play at random: the floor every player must beat.
pub struct RandomPlayer(pub StdRng);

impl<V: Variant> Player<V> for RandomPlayer {
    fn choose(
        &mut self,
        _: &V,
        _: &V::State,
        _: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> Result<usize, RulesError> {
        Ok(self.0.random_range(0..plays.len()))
    }

    fn decide(
        &mut self,
        _: &V,
        _: &V::State,
        _: Seat,
        _: Dice,
        decision: &Decision,
    ) -> Result<usize, RulesError> {
        Ok(self.0.random_range(0..decision.choices.len().max(1)))
    }
}

/// A one-ply player that knows the basic strategy: the play whose result
/// scores best on the race (pips), points made (home points counting
/// more), the other side's checkers hit or pinned (a pinned mother checker
/// counting most), checkers borne off, and blots left where the other
/// side's checkers can reach them. In a variant scored during play
/// (tric-trac), the points per roll instead ([`scored::points_per_roll`]).
pub struct HeuristicPlayer;

impl HeuristicPlayer {
    /// The score of `board` for `me`, on a board of `geometry`: where
    /// both sides move the same way round (long nardy, Fevga) nothing is
    /// hit and one checker holds a point, so a point is made by one
    /// checker and a lone checker is no blot.
    pub fn score_in(board: &Board, me: Seat, geometry: Geometry) -> f32 {
        if geometry == Geometry::Opposed {
            return HeuristicPlayer::score(board, me);
        }
        let (mine, theirs) = (
            &board.checkers[me.index()],
            &board.checkers[me.other().index()],
        );
        let pips =
            |side: &[u8; 26]| -> f32 { (1..=24).map(|p| p as f32 * f32::from(side[p])).sum() };
        let mut score = (pips(theirs) - pips(mine)) / 10.0;
        for (p, &n) in mine.iter().enumerate().take(25).skip(1) {
            if n >= 1 {
                score += if p <= 6 { 1.5 } else { 1.0 };
            }
        }
        score + 0.5 * f32::from(mine[usize::from(OFF)])
    }

    /// The score of `board` for `me` (backgammon's geometry).
    pub fn score(board: &Board, me: Seat) -> f32 {
        let (mine, theirs) = (
            &board.checkers[me.index()],
            &board.checkers[me.other().index()],
        );
        let pips = |side: &[u8; 26]| -> f32 {
            (1..=usize::from(BAR))
                .map(|p| p as f32 * f32::from(side[p]))
                .sum()
        };
        let mut score = (pips(theirs) - pips(mine)) / 10.0;
        // The furthest of their checkers, in my numbering: my blots below
        // it can be hit.
        let reach = (1..=usize::from(BAR))
            .filter(|&q| theirs[q] > 0)
            .map(|q| if q == usize::from(BAR) { 25 } else { 25 - q })
            .max()
            .unwrap_or(0);
        for (p, &n) in mine.iter().enumerate().take(25).skip(1) {
            if n >= 2 {
                score += if p <= 6 { 1.5 } else { 1.0 };
            } else if n == 1 && p < reach {
                score -= 1.0;
            }
        }
        score += 1.5 * f32::from(theirs[usize::from(BAR)]);
        // Pins (Plakoto): a pinned checker is as good as hit, and a pinned
        // mother checker (the last on its side's 24-point) loses the game.
        let pins = |seat: Seat| {
            let pinned = board.pinned[seat.index()];
            pinned.count_ones() as f32 + if pinned & (1 << 24) != 0 { 3.0 } else { 0.0 }
        };
        score += 1.5 * (pins(me.other()) - pins(me));
        score += 0.5 * f32::from(mine[usize::from(OFF)]);
        score
    }
}

impl<V: Variant> Player<V> for HeuristicPlayer {
    fn choose(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        _: Dice,
        plays: &[LegalPlay],
    ) -> Result<usize, RulesError> {
        if scored::scores(variant) {
            return Ok(scored::best_by_points(variant, state, seat, plays));
        }
        let geometry = geometry(variant);
        let mut best = (0, f32::NEG_INFINITY);
        for (i, lp) in plays.iter().enumerate() {
            let s = HeuristicPlayer::score_in(&lp.result, seat, geometry);
            if s > best.1 {
                best = (i, s);
            }
        }
        Ok(best.0)
    }

    fn decide(
        &mut self,
        variant: &V,
        state: &V::State,
        seat: Seat,
        dice: Dice,
        decision: &Decision,
    ) -> Result<usize, RulesError> {
        Ok(scored::choice_by_points(
            variant, state, seat, dice, decision,
        ))
    }
}

/// The geometry `variant` declares.
pub fn geometry<V: Variant>(variant: &V) -> Geometry {
    match bg_variant_api::proto::Geometry::try_from(variant.info().geometry) {
        Ok(bg_variant_api::proto::Geometry::SameWay) => Geometry::SameWay,
        _ => Geometry::Opposed,
    }
}
