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
//! Everything else is standard backgammon (`bg-standard-rules`). This
//! crate must never do I/O or keep state between calls.

use bg_standard_rules::WinType;
use bg_standard_rules::rules::{Node, StandardSteps, apply_moves};
use bg_standard_rules::{Standard, StandardState, win};
use bg_variant_api::engine::{Board, Dice, LegalPlay, Move, OFF, Play, Seat};
use bg_variant_api::search::{self, Steps};
use bg_variant_api::{
    Capabilities, OptionSpec, Options, Outcome, Setup, Transition, Variant, VariantError,
    VariantInfo, check_option_names, option_value,
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
            description: "always: a hitter may be borne off when bearing off is allowed; only_if_forced: only when the die has no other legal use.".into(),
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

    fn encode_state(&self, state: &CaucasianState) -> Vec<u8> {
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

    fn decode_state(&self, bytes: &[u8]) -> Result<CaucasianState, VariantError> {
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

/// A search node: the standard node and the hitters to watch.
#[derive(Clone, Copy, Debug)]
pub struct CNode {
    base: Node,
    hitters: Hitters,
}

struct CaucasianSteps {
    standard: StandardSteps,
    mode: Mode,
    hit_bearoff: HitBearoff,
}

impl Steps for CaucasianSteps {
    type Node = CNode;
    type Key = Node;

    fn for_each_step(&self, node: &CNode, die: u8, froms: u32, mut step: impl FnMut(Move, CNode)) {
        let base = node.base;
        let mut moves = [Move::default(); 16];
        let mut count = 0;
        self.standard.for_each_move(base, die, froms, |mv| {
            moves[count] = mv;
            count += 1;
        });
        let moves = &moves[..count];
        for &mv in moves {
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
                    },
                );
            }
            // A hitter moves on.
            for index in node.hitters.on(mv.from) {
                let rest = node.hitters.remove(index);
                if mv.to == OFF {
                    // docs/rules.md §2 case 8: borne off only when the die has no
                    // other use, with that option.
                    let other_use = moves.len() > 1 || others_on_from > 0;
                    if self.hit_bearoff == HitBearoff::OnlyIfForced && other_use {
                        continue;
                    }
                    step(
                        mv,
                        CNode {
                            base: next,
                            hitters: rest,
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
                        },
                    );
                }
            }
        }
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
}
