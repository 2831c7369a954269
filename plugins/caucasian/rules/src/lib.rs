//! Caucasian short backgammon (docs/rules.md §2): standard backgammon plus
//! one restriction, no "hit and hide" in one's own home board.
//!
//! When a checker H hits an enemy blot on one of the mover's home points
//! (1-6), H must not end the turn hidden: its last landing may not be on
//! a point that already held other checkers of the mover when H arrived.
//! Options (docs/rules.md §2 edge cases 7 and 8):
//! - `caucasian_mode`: `last_landing` (default; H may touch down on its
//!   own point and move on) or `strict` (every landing of H after the hit
//!   must be on a point without the mover's checkers);
//! - `caucasian_hit_bearoff`: `always` (default) or `only_if_forced` (H may
//!   be borne off only when the die has no other legal use).
//!
//! The rule judges sequences, before the most-dice and larger-die rules:
//! a final position is legal when at least one sequence obeying the rule
//! reaches it, and a die whose every use would break it is not played.
//! Checkers are indistinguishable, so when a move starts from a point
//! holding both a hitter and other checkers, both readings are explored.
//!
//! `only_if_forced` is judged on the whole turn in the same spirit
//! (docs/rules.md §2 case 8, T34-T37). At a node, a hitter may go off with
//! a die unless another move of that die (one that is not a hitter going
//! off) is a legal use: after it, every die still left can be played by
//! these same rules to a node where the turn may end (no hitter hidden),
//! or the game is over. A move that could only leave a hitter hidden is
//! no use. The node therefore carries the dice still to play; the
//! look-ahead runs only with this option and only when a hitter could go
//! off, and ends because each level has one die fewer and leaves hitters
//! going off out of the moves it weighs.
//!
//! Everything else is standard backgammon (`bg-standard-rules`). This
//! crate must never do I/O or keep state between calls.

use bg_standard_rules::WinType;
use bg_standard_rules::rules::{Node, StandardSteps, apply_moves};
use bg_standard_rules::{Standard, StandardState, win};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::search::{self, ALL_POINTS, Steps};
use bg_variant_api::{
    Capabilities, OptionSpec, Options, Outcome, Setup, StateCodec, Transition, Variant,
    VariantError, VariantInfo, check_option_names, option_value,
};

/// The variant.
#[derive(Default)]
pub struct Caucasian;

/// How strictly a hitter may touch its own checkers (docs/rules.md §2 case 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    LastLanding,
    Strict,
}

/// When a hitter may be borne off (docs/rules.md §2 case 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitBearoff {
    Always,
    OnlyIfForced,
}

/// A game: the board and the rule's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaucasianState {
    pub board: Board,
    pub mode: Mode,
    pub hit_bearoff: HitBearoff,
}

const MODE: &str = "caucasian_mode";
const HIT_BEAROFF: &str = "caucasian_hit_bearoff";
const SETUP: &str = "setup";
const STATE_VERSION: u8 = 1;

impl CaucasianState {
    fn standard(&self) -> StandardState {
        StandardState { board: self.board }
    }
}

fn read_options(options: &Options) -> Result<(Mode, HitBearoff, Options), VariantError> {
    check_option_names(options, &[MODE, HIT_BEAROFF, SETUP])?;
    let mode = match option_value(options, MODE, &["last_landing", "strict"], "last_landing")? {
        "strict" => Mode::Strict,
        _ => Mode::LastLanding,
    };
    let hit_bearoff = match option_value(
        options,
        HIT_BEAROFF,
        &["always", "only_if_forced"],
        "always",
    )? {
        "only_if_forced" => HitBearoff::OnlyIfForced,
        _ => HitBearoff::Always,
    };
    let standard: Options = options
        .iter()
        .filter(|(k, _)| k.as_str() == SETUP)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok((mode, hit_bearoff, standard))
}

fn with_options(
    setup: Setup<StandardState>,
    mode: Mode,
    hit_bearoff: HitBearoff,
) -> Setup<CaucasianState> {
    Setup {
        state: CaucasianState {
            board: setup.state.board,
            mode,
            hit_bearoff,
        },
        opening: setup.opening,
        cube: setup.cube,
        first_move: setup.first_move,
    }
}

impl Variant for Caucasian {
    type State = CaucasianState;

    fn info(&self) -> VariantInfo {
        let mut options = Standard.info().options;
        options.push(OptionSpec {
            name: MODE.into(),
            description: "last_landing: a hitter in the home board may not END the turn on a point that held its own checkers when it arrived; strict: it may not land on one at all after the hit.".into(),
            allowed_values: vec!["last_landing".into(), "strict".into()],
            default_value: "last_landing".into(),
        });
        options.push(OptionSpec {
            name: HIT_BEAROFF.into(),
            description: "always: a hitter may be borne off when bearing off is allowed; only_if_forced: only when the die has no other legal use, judged on the whole turn (a move after which the turn can only end with a hitter hidden is no use).".into(),
            allowed_values: vec!["always".into(), "only_if_forced".into()],
            default_value: "always".into(),
        });
        VariantInfo {
            name: "caucasian".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Caucasian short backgammon: standard backgammon, but a checker that hits in its own home board may not hide on its own point in the same turn.".into(),
            options,
            max_win_level: 3,
            win_kinds: vec!["single".into(), "gammon".into(), "backgammon".into()],
            ..Default::default()
        }
    }

    fn capabilities(&self) -> Capabilities {
        Standard.capabilities()
    }

    fn new_game(&self, options: &Options) -> Result<Setup<CaucasianState>, VariantError> {
        let (mode, hit_bearoff, standard) = read_options(options)?;
        Ok(with_options(
            Standard.new_game(&standard)?,
            mode,
            hit_bearoff,
        ))
    }

    fn setup_position(
        &self,
        board: &Board,
        options: &Options,
    ) -> Result<Setup<CaucasianState>, VariantError> {
        let (mode, hit_bearoff, standard) = read_options(options)?;
        Ok(with_options(
            Standard.setup_position(board, &standard)?,
            mode,
            hit_bearoff,
        ))
    }

    fn board(&self, state: &CaucasianState) -> Board {
        state.board
    }

    fn legal_plays(
        &self,
        state: &CaucasianState,
        seat: Seat,
        dice: Dice,
        out: &mut Vec<LegalPlay>,
    ) {
        let (standard, base) = StandardSteps::new(&state.board, seat);
        let steps = CaucasianSteps {
            standard,
            mode: state.mode,
            hit_bearoff: state.hit_bearoff,
        };
        search::legal_plays(
            &steps,
            CNode {
                base,
                hitters: Hitters::NONE,
                dice: DiceLeft::of(dice),
            },
            dice,
            4,
            out,
        );
    }

    fn play_result(
        &self,
        state: &CaucasianState,
        seat: Seat,
        play: &Play,
    ) -> Result<Board, VariantError> {
        apply_moves(&state.board, seat, play)
    }

    fn after_play(
        &self,
        state: &CaucasianState,
        seat: Seat,
        chosen: &LegalPlay,
    ) -> Transition<CaucasianState> {
        let next = CaucasianState {
            board: chosen.result,
            ..*state
        };
        let mut transition = Transition::to(next);
        if next.board.off(seat) == bg_variant_api::engine::CHECKERS {
            let outcome = win(seat, WinType::of_loser(&next.board, seat.other()));
            transition.outcome = Some(Outcome {
                by_bearing_off: true,
                ..outcome
            });
        }
        transition
    }

    fn concede(&self, state: &CaucasianState, loser: Seat) -> Outcome {
        Standard.concede(&state.standard(), loser)
    }
}

impl StateCodec for CaucasianState {
    fn encode(&self) -> Vec<u8> {
        let state = self;
        let mut bytes = vec![STATE_VERSION];
        bytes.extend_from_slice(&state.board.checkers[0]);
        bytes.extend_from_slice(&state.board.checkers[1]);
        bytes.push(match state.mode {
            Mode::LastLanding => 0,
            Mode::Strict => 1,
        });
        bytes.push(match state.hit_bearoff {
            HitBearoff::Always => 0,
            HitBearoff::OnlyIfForced => 1,
        });
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<CaucasianState, VariantError> {
        let [STATE_VERSION, board @ .., mode, hit_bearoff] = bytes else {
            return Err(VariantError::InvalidInput(
                "not a Caucasian game state".into(),
            ));
        };
        let mut standard = vec![1u8];
        standard.extend_from_slice(board);
        let StandardState { board } = Standard.decode_state(&standard)?;
        Ok(CaucasianState {
            board,
            mode: if *mode == 1 {
                Mode::Strict
            } else {
                Mode::LastLanding
            },
            hit_bearoff: if *hit_bearoff == 1 {
                HitBearoff::OnlyIfForced
            } else {
                HitBearoff::Always
            },
        })
    }
}

/// Up to four hitters (one per move of a turn): each is the point it
/// stands on (1-24) and whether it arrived there onto its own checkers
/// (bit 7). 0 means no hitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hitters([u8; 4]);

const HIDDEN: u8 = 0x80;

impl Hitters {
    const NONE: Hitters = Hitters([0; 4]);

    fn add(mut self, point: u8, hidden: bool) -> Hitters {
        if let Some(slot) = self.0.iter_mut().find(|h| **h == 0) {
            *slot = point | if hidden { HIDDEN } else { 0 };
        }
        self
    }

    fn remove(mut self, index: usize) -> Hitters {
        self.0[index] = 0;
        self
    }

    /// Indexes of the hitters on `point`, one per distinct kind.
    fn on(&self, point: u8) -> impl Iterator<Item = usize> + '_ {
        (0..4).filter(move |&i| {
            let h = self.0[i];
            h != 0 && h & !HIDDEN == point && !self.0[..i].contains(&h)
        })
    }

    fn count_on(&self, point: u8) -> u8 {
        self.0
            .iter()
            .filter(|&&h| h != 0 && h & !HIDDEN == point)
            .count() as u8
    }

    fn any_hidden(&self) -> bool {
        self.0.iter().any(|&h| h & HIDDEN != 0)
    }
}

/// The dice a turn has still to play, as a multiset: largest first, 0 for
/// none. Only `only_if_forced` reads it (to look ahead from a node), so it
/// is kept up to date only with that option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DiceLeft([u8; 4]);

impl DiceLeft {
    /// The dice of a throw: two values, or four for a double.
    fn of(dice: Dice) -> DiceLeft {
        let (values, count) = search::dice_values(dice, 4);
        let mut left = [0; 4];
        left[..count].copy_from_slice(&values[..count]);
        left.sort_unstable_by(|a, b| b.cmp(a));
        DiceLeft(left)
    }

    /// The dice left once one `die` is played (order is kept).
    fn without(self, die: u8) -> DiceLeft {
        let mut left = [0; 4];
        let mut kept = 0;
        let mut removed = false;
        for d in self.0 {
            if d == die && !removed {
                removed = true;
            } else {
                left[kept] = d;
                kept += 1;
            }
        }
        DiceLeft(left)
    }

    fn is_empty(self) -> bool {
        self.0[0] == 0
    }

    /// Each value left, once.
    fn values(self) -> impl Iterator<Item = u8> {
        let d = self.0;
        (0..4)
            .filter(move |&i| d[i] != 0 && (i == 0 || d[i] != d[i - 1]))
            .map(move |i| d[i])
    }
}

/// A search node: the standard node, the hitters to watch and the dice
/// left to play.
#[derive(Clone, Copy, Debug)]
pub struct CNode {
    base: Node,
    hitters: Hitters,
    dice: DiceLeft,
}

struct CaucasianSteps {
    standard: StandardSteps,
    mode: Mode,
    hit_bearoff: HitBearoff,
}

impl CaucasianSteps {
    /// The single moves of `die` from `node` (see
    /// [`Steps::for_each_step`]). With `only_if_forced`, bearing a hitter
    /// off is judged when `judge_hitters_off` is set (docs/rules.md §2
    /// case 8) and left out otherwise.
    #[inline(always)]
    fn steps(
        &self,
        node: &CNode,
        die: u8,
        froms: u32,
        judge_hitters_off: bool,
        mut step: impl FnMut(Move, CNode),
    ) {
        let base = node.base;
        let forced = self.hit_bearoff == HitBearoff::OnlyIfForced;
        let dice = if forced {
            node.dice.without(die)
        } else {
            node.dice
        };
        // Whether the die has a legal use other than bearing a hitter off:
        // worked out once, when a hitter could go off.
        let mut other_use = None;
        self.standard.for_each_move(base, die, froms, |mv| {
            let next = self.standard.moved(base, mv.from, mv.to);
            let on_from = node.hitters.count_on(mv.from);
            let others_on_from = base.count(mv.from) - on_from;
            let lands_on_own = mv.to != OFF && base.count(mv.to) > 0;
            // A checker that is not a hitter moves (it may become one).
            if others_on_from > 0 {
                let hits_at_home = (1..=6).contains(&mv.to) && self.standard.hits(base, mv.to);
                let hitters = if hits_at_home {
                    node.hitters.add(mv.to, false)
                } else {
                    node.hitters
                };
                step(
                    mv,
                    CNode {
                        base: next,
                        hitters,
                        dice,
                    },
                );
            }
            // A hitter moves on.
            for index in node.hitters.on(mv.from) {
                let rest = node.hitters.remove(index);
                if mv.to == OFF {
                    // docs/rules.md §2 case 8: with only_if_forced, borne off
                    // only when the die has no other legal use.
                    if forced
                        && (!judge_hitters_off
                            || *other_use.get_or_insert_with(|| self.has_other_use(node, die)))
                    {
                        continue;
                    }
                    step(
                        mv,
                        CNode {
                            base: next,
                            hitters: rest,
                            dice,
                        },
                    );
                } else {
                    if lands_on_own && self.mode == Mode::Strict {
                        continue;
                    }
                    step(
                        mv,
                        CNode {
                            base: next,
                            hitters: rest.add(mv.to, lands_on_own),
                            dice,
                        },
                    );
                }
            }
        });
    }

    /// Whether `die` has a legal use at `node` other than bearing a hitter
    /// off (docs/rules.md §2 case 8, judged on the whole turn): a move of
    /// it after which the rest of the turn can be played in full, by the
    /// same rules, ending with no hitter hidden.
    #[inline(never)]
    fn has_other_use(&self, node: &CNode, die: u8) -> bool {
        let mut found = false;
        // Hitters going off are left out: they are not another use, and
        // judging them here would ask this same question again.
        self.steps(node, die, ALL_POINTS, false, |_, next| {
            found = found || self.completes(&next);
        });
        found
    }

    /// Whether every die left at `node` can be played, in some order and
    /// by the same rules, ending where the turn may end (or the game is
    /// over and nothing is hidden).
    fn completes(&self, node: &CNode) -> bool {
        if node.dice.is_empty() || self.standard.is_finished(&node.base) {
            return self.accepts(node);
        }
        node.dice.values().any(|die| {
            let mut found = false;
            self.steps(node, die, ALL_POINTS, true, |_, next| {
                found = found || self.completes(&next);
            });
            found
        })
    }
}

impl Steps for CaucasianSteps {
    type Node = CNode;
    type Key = Node;

    #[inline(always)]
    fn for_each_step(&self, node: &CNode, die: u8, froms: u32, step: impl FnMut(Move, CNode)) {
        self.steps(node, die, froms, true, step);
    }

    fn is_finished(&self, node: &CNode) -> bool {
        self.standard.is_finished(&node.base)
    }

    fn key(&self, node: &CNode) -> Node {
        node.base
    }

    fn write_board(&self, _key: &Node, play: &Play, out: &mut Board) {
        self.standard.write_board_after(play, out);
    }

    fn accepts(&self, node: &CNode) -> bool {
        !node.hitters.any_hidden()
    }

    fn judges_sequences(&self) -> bool {
        true
    }

    // Which checker moved first matters here: search every order.
    fn ordered_doubles(&self) -> bool {
        false
    }

    fn commuting_moves(&self) -> bool {
        false
    }
}

/// The variant called directly: no plugin file, no host.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// X (white) and O (black), both in X's numbering.
    fn position(x: &[(u8, u8)], o: &[(u8, u8)], mode: Mode) -> CaucasianState {
        let o_own: Vec<(u8, u8)> = o.iter().map(|&(p, n)| (25 - p, n)).collect();
        CaucasianState {
            board: Board::from_points(x, &o_own),
            mode,
            hit_bearoff: HitBearoff::Always,
        }
    }

    /// T10, the restriction itself: 8/5*/4 hides the hitter on its own
    /// point and is refused; 8/5* 6/5 covers it and is played.
    #[test]
    fn t10_a_home_hitter_may_not_hide_but_may_be_covered() {
        let state = position(
            &[(13, 6), (8, 2), (6, 5), (4, 2)],
            &[(5, 1), (12, 4), (17, 3), (19, 5), (24, 2)],
            Mode::LastLanding,
        );
        let dice = Dice::new(3, 1).unwrap();
        let hide = bg_variant_api::apply_play(
            &Caucasian,
            &state,
            Seat::White,
            dice,
            &"8/5*/4".parse().unwrap(),
        );
        assert!(
            matches!(hide, Err(VariantError::IllegalPlay(_))),
            "{hide:?}"
        );
        let cover = bg_variant_api::apply_play(
            &Caucasian,
            &state,
            Seat::White,
            dice,
            &"8/5* 6/5".parse().unwrap(),
        )
        .unwrap();
        assert_eq!(cover.state.board.count(Seat::White, 5), 2);
        assert_eq!(cover.state.board.count(Seat::Black, BAR_OF_BLACK), 1);
    }

    /// The bar, in black's own numbering.
    const BAR_OF_BLACK: u8 = 25;

    /// A position with the default mode and the given hit-and-bear-off
    /// option.
    fn with_hit_bearoff(x: &[(u8, u8)], o: &[(u8, u8)], hit_bearoff: HitBearoff) -> CaucasianState {
        CaucasianState {
            hit_bearoff,
            ..position(x, o, Mode::LastLanding)
        }
    }

    /// The positions the legal plays of white lead to (a play is its result).
    fn results(state: &CaucasianState, d1: u8, d2: u8) -> BTreeSet<Board> {
        let mut plays = Vec::new();
        Caucasian.legal_plays(state, Seat::White, Dice::new(d1, d2).unwrap(), &mut plays);
        plays.iter().map(|lp| lp.result).collect()
    }

    /// The board after white plays `plays` (notation), checked only for
    /// being physically possible.
    fn after(state: &CaucasianState, plays: &[&str]) -> BTreeSet<Board> {
        plays
            .iter()
            .map(|play| apply_moves(&state.board, Seat::White, &play.parse().unwrap()).unwrap())
            .collect()
    }

    /// Both options on one position: `always` must give `always_gives`,
    /// `only_if_forced` must give `forced_gives` (plays by their results).
    fn assert_both(
        x: &[(u8, u8)],
        o: &[(u8, u8)],
        (d1, d2): (u8, u8),
        always_gives: &[&str],
        forced_gives: &[&str],
    ) {
        let always = with_hit_bearoff(x, o, HitBearoff::Always);
        assert_eq!(
            results(&always, d1, d2),
            after(&always, always_gives),
            "always"
        );
        let forced = with_hit_bearoff(x, o, HitBearoff::OnlyIfForced);
        assert_eq!(
            results(&forced, d1, d2),
            after(&forced, forced_gives),
            "only_if_forced"
        );
    }

    /// T34 (docs/rules.md §2). 3/2*/1 leaves the hitter hidden among six
    /// checkers on the 1-point with two 1s left. Bearing it off at once is
    /// refused (another checker can go off first and the turn still ends
    /// well), but with the last 1 every other use would leave it hidden,
    /// so it goes off then: 5 on the 1-point, 10 off.
    #[test]
    fn t34_only_if_forced_a_hitter_whose_every_other_use_would_hide_it_is_borne_off() {
        let plays = ["1/off(4)", "3/2* 1/off(3)", "3/2*/1 1/off(2)"];
        assert_both(
            &[(1, 6), (3, 1)],
            &[(2, 1), (4, 1), (6, 1), (24, 12)],
            (1, 1),
            &plays,
            &plays,
        );
    }

    /// T35. 6/4*/2 hides the hitter among eight checkers on the 2-point
    /// with two 2s left: one checker off, then the hitter.
    #[test]
    fn t35_only_if_forced_a_checker_beside_the_hidden_hitter_goes_off_first_then_the_hitter() {
        let plays = ["2/off(4)", "6/4* 2/off(3)", "6/4*/2 2/off(2)"];
        assert_both(
            &[(1, 6), (2, 8), (6, 1)],
            &[(4, 1), (24, 14)],
            (2, 2),
            &plays,
            &plays,
        );
    }

    /// T36. 8/6/4*/2 hides the hitter with the last 2 left: the only
    /// other use of that 2, another checker off the 2-point, ends the turn
    /// with the hitter hidden, so the hitter goes off.
    #[test]
    fn t36_only_if_forced_a_hitter_hidden_with_one_die_left_is_borne_off_with_it() {
        let plays = ["8/6 2/off(3)", "8/6/4* 2/off(2)", "8/6/4*/2/off"];
        assert_both(
            &[(1, 8), (2, 6), (8, 1)],
            &[(4, 1), (24, 14)],
            (2, 2),
            &plays,
            &plays,
        );
    }

    /// T37. 12/9/6*/3 hides the hitter with one 3 left. Its other uses,
    /// 5/2 or another checker off the 3-point, would each end the turn
    /// with the hitter hidden, so they are no legal use and the hitter
    /// goes off.
    #[test]
    fn t37_only_if_forced_a_move_elsewhere_that_leaves_the_hitter_hidden_is_no_other_use() {
        let plays = ["12/9/6* 3/off(2)", "12/9/6* 5/2 3/off", "12/9/6*/3/off"];
        assert_both(
            &[(1, 7), (3, 6), (5, 1), (12, 1)],
            &[(6, 1), (24, 14)],
            (3, 3),
            &plays,
            &plays,
        );
    }

    /// T11's position (3-1): after 4/3* the 3 has legal other uses that
    /// do not hide the hitter (6/3 covering it, 5/2, 4/1), so
    /// only_if_forced refuses 4/3*/off and nothing else.
    #[test]
    fn only_if_forced_refuses_bearing_the_hitter_off_when_the_die_has_a_legal_other_use() {
        let x = [(6, 2), (5, 3), (4, 3), (2, 4), (1, 3)];
        let o = [(3, 1), (24, 14)];
        let always = results(&with_hit_bearoff(&x, &o, HitBearoff::Always), 3, 1);
        let forced = with_hit_bearoff(&x, &o, HitBearoff::OnlyIfForced);
        assert_eq!(always.len(), 15);
        let refused = after(&forced, &["4/3*/off"]);
        assert!(refused.is_subset(&always));
        assert_eq!(results(&forced, 3, 1), &always - &refused);
    }

    /// The same position with 3-3: every sequence that bears the hitter
    /// off from the 3-point keeps, at each die, another checker able to
    /// move (6/3, 5/2, 4/1) without hiding it, so the four positions only
    /// such sequences reach are lost. Positions where a covering checker
    /// goes off instead (6/3* 6/3 3/off 4/1) stay.
    #[test]
    fn only_if_forced_refuses_it_with_a_double_when_other_uses_last_the_whole_turn() {
        let x = [(6, 2), (5, 3), (4, 3), (2, 4), (1, 3)];
        let o = [(3, 1), (24, 14)];
        let always = results(&with_hit_bearoff(&x, &o, HitBearoff::Always), 3, 3);
        let forced = with_hit_bearoff(&x, &o, HitBearoff::OnlyIfForced);
        assert_eq!(always.len(), 16);
        let refused = after(
            &forced,
            &[
                "6/3*/off 6/3/off",
                "6/3*/off 4/1(2)",
                "6/3*/off 5/2 4/1",
                "6/3*/off 5/2(2)",
            ],
        );
        assert!(refused.is_subset(&always));
        let forced_gives = results(&forced, 3, 3);
        assert!(after(&forced, &["6/3* 6/3 3/off 4/1"]).is_subset(&forced_gives));
        assert_eq!(forced_gives, &always - &refused);
    }

    /// A non-double where the hitter is forced off: after 4/3* nothing but
    /// the hitter can use the 3 (the 1-point is not the rearmost).
    #[test]
    fn only_if_forced_allows_bearing_the_hitter_off_when_the_die_has_no_other_use() {
        let plays = ["4/3*/off", "4/1 1/off"];
        assert_both(
            &[(4, 1), (1, 14)],
            &[(3, 1), (24, 14)],
            (3, 1),
            &plays,
            &plays,
        );
    }
}
